/* The join's brute-force reference (join_ref.h). */
#include "join_ref.h"

#include "join/join_internal.h"

static double ref_coord(const ref_set *s, size_t i, size_t j)
{
    return s->f32 ? ((const float *)s->data)[i * s->d + j] : ((const double *)s->data)[i * s->d + j];
}

double join_ref_dist2(const ref_set *qs, size_t a, const ref_set *ds, size_t b)
{
    size_t d = ds->d;
    if (ds->f32) {
        float lane[8] = {0}, s = 0;
        for (size_t j = 0; j < d; j++) {
            float t = (float)ref_coord(qs, a, ds->order[j]) - (float)ref_coord(ds, b, ds->order[j]);
            if (d <= GROVE__JOIN_SOA_MAX) s += t * t;
            else lane[j % 8] += t * t;
        }
        if (d > GROVE__JOIN_SOA_MAX) s = ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
        return s;
    }
    double lane[8] = {0}, s = 0;
    for (size_t j = 0; j < d; j++) {
        double t = ref_coord(qs, a, ds->order[j]) - ref_coord(ds, b, ds->order[j]);
        if (d <= GROVE__JOIN_SOA_MAX) s += t * t;
        else lane[j % 8] += t * t;
    }
    if (d > GROVE__JOIN_SOA_MAX) s = ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
    return s;
}

grove_points join_ref_view(const ref_set *s)
{
    return s->f32 ? grove_points_f32(s->data, s->n, s->d) : grove_points_f64(s->data, s->n, s->d);
}

ref_set *join_ref_make(test_kind kind, size_t n, size_t d, bool f32, uint64_t seed)
{
    ref_set *s = calloc(1, sizeof *s);
    double *x = test_points(kind, n, d, seed);
    if (f32) {
        float *f = malloc((n * d + 1) * sizeof *f);
        for (size_t i = 0; i < n * d; i++) f[i] = (float)x[i];
        free(x);
        s->data = f;
    } else {
        s->data = x;
    }
    s->f32 = f32;
    s->n = n;
    s->d = d;
    return s;
}

grove_index *join_ref_index(const ref_set *ds, const grove_index_params *ip, double eps, bool exclude,
                            const char *what, grove_options *opt, grove_join_params *jp)
{
    grove_options_init(opt);
    opt->threads = 2;
    grove_index *ix = NULL;
    grove_status st = grove_index_create(join_ref_view(ds), ip, opt, &ix);
    CHECK_MSG(st == GROVE_OK, "%s: build: %s", what, grove_last_error());
    grove_join_params_init(jp);
    jp->eps = eps;
    jp->exclude_self = exclude;
    return st == GROVE_OK ? ix : NULL;
}

void join_ref_free(ref_set *s)
{
    if (!s) return;
    free((void *)(uintptr_t)s->data);
    free(s);
}

void join_ref_take_order(ref_set *ds, ref_set *qs)
{
    grove_index *ix = NULL;
    if (grove_index_create(join_ref_view(ds), NULL, NULL, &ix) != GROVE_OK) return;
    grove_index_dim_order(ix, ds->order);
    if (qs) memcpy(qs->order, ds->order, sizeof ds->order);
    grove_index_free(ix);
}
