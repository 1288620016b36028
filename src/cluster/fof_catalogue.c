/* The friends-of-friends catalogue: members listed group by group in
 * ascending index order (a counting sort on the group ids), then one row
 * per group, groups in parallel. Each row is summed in member order, so it
 * does not depend on the thread count. */
#include "fof_internal.h"

#include <string.h>

void grove_fof_catalogue_free(grove_fof_catalogue *c)
{
    if (!c) return;
    grove__free(c->members);
    grove__free(c->first);
    grove__free(c->mass);
    grove__free(c->center);
    grove__free(c->velocity);
    grove__free(c->dispersion);
    grove__free(c->radius);
    memset(c, 0, sizeof *c);
}

/* x - y by minimum image in [-L/2, L/2) for a box of length L (0: not
 * periodic), x and y in [0, L). */
static inline double image(double x, double y, double L)
{
    double t = x - y;
    if (L > 0) {
        if (t >= 0.5 * L) t -= L;
        else if (t < -0.5 * L) t += L;
    }
    return t;
}

/* c, within half a box of [0, L), brought into [0, L). */
static inline double wrap(double c, double L)
{
    if (!(L > 0)) return c;
    if (c >= L) return c - L;
    if (c < 0) {
        c += L;
        return c < L ? c : 0; /* -tiny + L rounds to L */
    }
    return c;
}

typedef struct fof_rows {
    grove_points points;
    size_t stride;
    const double *mass, *velocity, *box;
    const uint32_t *order;  /* members, group by group */
    const int64_t *start;   /* groups + 1 */
    grove_fof_catalogue *out;
} fof_rows;

/* Row g; sum: d doubles of scratch. */
static void fof_row(const fof_rows *r, size_t g, double *sum)
{
    size_t d = r->points.d;
    const uint32_t *idx = r->order + r->start[g];
    size_t m = (size_t)(r->start[g + 1] - r->start[g]);
    grove_fof_catalogue *c = r->out;
    double *center = c->center + g * d;
    size_t ref = idx[0];
    double total = 0;
    for (size_t j = 0; j < d; j++) sum[j] = 0;
    for (size_t k = 0; k < m; k++) {
        size_t i = idx[k];
        double w = r->mass ? r->mass[i] : 1;
        total += w;
        for (size_t j = 0; j < d; j++) {
            double L = r->box ? r->box[j] : 0;
            sum[j] += w * image(grove__coord(r->points, r->stride, i, j), grove__coord(r->points, r->stride, ref, j), L);
        }
    }
    for (size_t j = 0; j < d; j++)
        center[j] = wrap(grove__coord(r->points, r->stride, ref, j) + sum[j] / total, r->box ? r->box[j] : 0);
    double far2 = 0;
    for (size_t k = 0; k < m; k++) {
        size_t i = idx[k];
        double e2 = 0;
        for (size_t j = 0; j < d; j++) {
            double t = image(grove__coord(r->points, r->stride, i, j), center[j], r->box ? r->box[j] : 0);
            e2 += t * t;
        }
        far2 = e2 > far2 ? e2 : far2;
    }
    c->members[g] = (int64_t)m;
    c->first[g] = (int64_t)ref;
    c->mass[g] = total;
    c->radius[g] = sqrt(far2);
    if (!r->velocity) return;
    /* Mean velocity about the first member's (fewer digits lost when the
     * bulk velocity is large), then the spread about the mean. */
    const double *v0 = r->velocity + ref * d;
    double *mean = c->velocity + g * d;
    for (size_t j = 0; j < d; j++) sum[j] = 0;
    for (size_t k = 0; k < m; k++) {
        const double *v = r->velocity + (size_t)idx[k] * d;
        double w = r->mass ? r->mass[idx[k]] : 1;
        for (size_t j = 0; j < d; j++) sum[j] += w * (v[j] - v0[j]);
    }
    for (size_t j = 0; j < d; j++) mean[j] = v0[j] + sum[j] / total;
    double spread = 0;
    for (size_t k = 0; k < m; k++) {
        const double *v = r->velocity + (size_t)idx[k] * d;
        double w = r->mass ? r->mass[idx[k]] : 1, e2 = 0;
        for (size_t j = 0; j < d; j++) e2 += (v[j] - mean[j]) * (v[j] - mean[j]);
        spread += w * e2;
    }
    c->dispersion[g] = sqrt(spread / total);
}

grove_status grove__fof_catalogue_alloc(grove_fof_catalogue *c, size_t groups, size_t d, int velocities)
{
    size_t rows = groups ? groups : 1, cells;
    if (!grove__mul_size(rows, d * sizeof(double), &cells))
        return grove__fail(GROVE_TOO_LARGE, "fof: a catalogue of %zu groups in %zu dimensions overflows the address "
                           "space", groups, d);
    c->groups = groups;
    c->d = d;
    c->members = grove__malloc(rows * sizeof *c->members, "fof catalogue");
    c->first = grove__malloc(rows * sizeof *c->first, "fof catalogue");
    c->mass = grove__malloc(rows * sizeof *c->mass, "fof catalogue");
    c->center = grove__malloc(cells, "fof catalogue");
    c->radius = grove__malloc(rows * sizeof *c->radius, "fof catalogue");
    if (velocities) {
        c->velocity = grove__malloc(cells, "fof catalogue");
        c->dispersion = grove__malloc(rows * sizeof *c->dispersion, "fof catalogue");
    }
    if (!c->members || !c->first || !c->mass || !c->center || !c->radius ||
        (velocities && (!c->velocity || !c->dispersion)))
        return GROVE_OUT_OF_MEMORY;
    return GROVE_OK;
}

grove_status grove__fof_catalogue(grove_points points, const double *mass, const double *velocity,
                                  const double *box, const int64_t *group, size_t groups, int threads,
                                  grove_fof_catalogue *out)
{
    size_t n = points.n, d = points.d;
    memset(out, 0, sizeof *out);
    grove_status s = grove__fof_catalogue_alloc(out, groups, d, velocity != NULL);
    int64_t *start = s == GROVE_OK ? grove__calloc(groups + 1, sizeof *start, "fof catalogue members") : NULL;
    if (s == GROVE_OK && !start) s = GROVE_OUT_OF_MEMORY;
    size_t grouped = 0;
    for (size_t i = 0; s == GROVE_OK && i < n; i++)
        if (group[i] >= 0) {
            start[group[i] + 1]++;
            grouped++;
        }
    uint32_t *order = s == GROVE_OK ? grove__malloc((grouped ? grouped : 1) * sizeof *order, "fof catalogue members")
                                    : NULL;
    if (s == GROVE_OK && !order) s = GROVE_OUT_OF_MEMORY;
    if (s == GROVE_OK) {
        for (size_t g = 0; g < groups; g++) start[g + 1] += start[g];
        /* Scatter with start[g] as group g's cursor: it ends at the next
         * group's start, so shifting by one restores the starts. */
        for (size_t i = 0; i < n; i++)
            if (group[i] >= 0) order[start[group[i]]++] = (uint32_t)i;
        memmove(start + 1, start, groups * sizeof *start);
        start[0] = 0;
        fof_rows r = {points, grove__points_stride(points), mass, velocity, box, order, start, out};
        int failed = 0;
#pragma omp parallel num_threads(threads) reduction(| : failed)
        {
            double *sum = grove__malloc(d * sizeof *sum, "fof catalogue scratch");
            failed = sum == NULL;
#pragma omp for schedule(dynamic, 64)
            for (size_t g = 0; g < groups; g++)
                if (sum) fof_row(&r, g, sum);
            grove__free(sum);
        }
        if (failed) s = GROVE_OUT_OF_MEMORY;
    }
    grove__free(start);
    grove__free(order);
    if (s != GROVE_OK) grove_fof_catalogue_free(out);
    return s;
}
