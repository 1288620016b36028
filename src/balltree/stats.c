/* grove_balltree_ball_stats: centre and radius of every node at a level. */
#include "balltree_internal.h"

#include <math.h>

typedef struct stats_job {
    grove_points points;
    double scale;       /* coordinates are read times scale = 2^-exponent (a power of two: exact) */
    int exponent;
    size_t stride;
    const int64_t *indices;
    const uint8_t *mask;
    bool partition;
} stats_job;

/* Slots [lo, hi) of node j at `level` of batch b (partition mode: the
 * builder's floor(k/2) halving, by the bits of j). */
static void node_slots(const grove_balltree_batch *b, bool partition, int level, size_t j, size_t *lo, size_t *hi)
{
    if (!partition) {
        size_t width = b->slots >> level;
        *lo = b->slot_offset + j * width;
        *hi = *lo + width;
        return;
    }
    size_t start = 0, k = b->count;
    for (int t = level - 1; t >= 0; t--) {
        size_t h = k / 2;
        if ((j >> t) & 1) {
            start += h;
            k -= h;
        } else {
            k = h;
        }
    }
    *lo = b->slot_offset + start;
    *hi = *lo + k;
}

/* A real point: mask 1, or without a mask not a leaf's padding copy. */
static bool real_slot(const stats_job *job, const grove_balltree_batch *b, size_t s)
{
    if (job->mask) return job->mask[s] != 0;
    if (job->partition) return true;
    return (s - b->slot_offset) % 2 == 0 || job->indices[s] != job->indices[s - 1];
}

/* Centre (mean) and radius of slots [lo, hi) (NaN when empty), summed
 * in scaled units: infinite only where the true radius is. */
static void ball(const stats_job *job, const grove_balltree_batch *b, size_t lo, size_t hi, double *centre,
                 double *radius)
{
    size_t d = job->points.d, count = 0;
    for (size_t j = 0; j < d; j++) centre[j] = 0.0;
    for (size_t s = lo; s < hi; s++) {
        if (!real_slot(job, b, s)) continue;
        for (size_t j = 0; j < d; j++)
            centre[j] += grove__coord(job->points, job->stride, (size_t)job->indices[s], j) * job->scale;
        count++;
    }
    if (!count) {
        for (size_t j = 0; j < d; j++) centre[j] = NAN;
        *radius = NAN;
        return;
    }
    for (size_t j = 0; j < d; j++) centre[j] /= (double)count;
    double far = 0.0;
    for (size_t s = lo; s < hi; s++) {
        if (!real_slot(job, b, s)) continue;
        double dist = 0.0;
        for (size_t j = 0; j < d; j++) {
            double t = grove__coord(job->points, job->stride, (size_t)job->indices[s], j) * job->scale - centre[j];
            dist += t * t;
        }
        if (dist > far) far = dist;
    }
    *radius = sqrt(far);
    if (!job->exponent) return;
    for (size_t j = 0; j < d; j++) centre[j] = ldexp(centre[j], job->exponent);
    *radius = ldexp(*radius, job->exponent);
}

grove_status grove_balltree_ball_stats(grove_points points, const grove_balltree_params *params,
                                       const int64_t *indices, const uint8_t *mask, int level, double *centers,
                                       double *radii, const grove_options *options)
{
    grove__clear_error();
    grove_balltree_params p;
    grove_status s = grove__bt_params(params, &p);
    int threads = grove__options(options).threads;
    double magnitude = 0;
    if (s == GROVE_OK) s = grove__points_validate_range(points, threads, &magnitude);
    if (s != GROVE_OK) return s;
    grove__bt_groups g;
    s = grove__bt_groups_make(points.n, &p, &g);
    if (s != GROVE_OK) return s;
    grove_balltree_batch *info = grove__calloc(g.count, sizeof *info, "batch layout");
    size_t balls = 0;
    if (!info) s = GROVE_OUT_OF_MEMORY;
    else grove__bt_describe(&g, p.levels, info);
    if (s == GROVE_OK) s = grove__bt_balls(info, g.count, p.levels != GROVE_BALLTREE_FULL, level, &balls);
    if (s == GROVE_OK && balls && (!indices || !centers || !radii))
        s = grove__fail(GROVE_INVALID_ARGUMENT, "balltree_ball_stats: indices, centers or radii is NULL");
    size_t slots = g.count ? info[g.count - 1].slot_offset + info[g.count - 1].slots : 0;
    for (size_t t = 0; s == GROVE_OK && balls && t < slots; t++)
        if (indices[t] < 0 || (uint64_t)indices[t] >= points.n)
            s = grove__fail(GROVE_INVALID_ARGUMENT, "balltree_ball_stats: slot %zu holds row %lld, outside 0..%zu", t,
                            (long long)indices[t], points.n - 1);
    if (s == GROVE_OK && balls) {
        int e = grove__range_exponent(magnitude, points.d, GROVE_FLOAT64); /* the sums are in double */
        stats_job job = {points, ldexp(1, -e), e, grove__points_stride(points), indices, mask,
                         p.levels != GROVE_BALLTREE_FULL};
        size_t per_batch = (size_t)1 << level;
#pragma omp parallel for num_threads(threads) if (threads > 1 && balls > 64) schedule(static)
        for (size_t i = 0; i < balls; i++) {
            const grove_balltree_batch *b = &info[i / per_batch];
            size_t lo, hi;
            node_slots(b, job.partition, level, i % per_batch, &lo, &hi);
            ball(&job, b, lo, hi, centers + i * points.d, &radii[i]);
        }
        for (size_t i = 0; i < balls; i++)
            if (isinf(radii[i])) {
                s = grove__fail(GROVE_INVALID_ARGUMENT,
                                "balltree_ball_stats: the radius of ball %zu at level %d exceeds the largest double",
                                i, level);
                break;
            }
    }
    grove__free(info);
    grove__bt_groups_free(&g);
    return s;
}
