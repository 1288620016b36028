/* Pieces of the `hdbscan` library's soft clustering shared by
 * membership_vector and all_points_membership_vectors: merge heights in
 * the cluster tree (merge_height, by binary lifting instead of the
 * library's walk, with the same answer) and the distance part
 * (dist_membership_vector). */
#include "predict_internal.h"

#include <float.h>
#include <math.h>

#define T double
#define FN(name) name##_f64
#include "../index/geom_t.h"
#undef T
#undef FN

static size_t lift(const grove__prediction *pd, size_t c, uint32_t steps)
{
    for (size_t j = 0; steps; j++, steps >>= 1)
        if (steps & 1) c = pd->lift[j * pd->k + c];
    return c;
}

double grove__merge_height(const grove__prediction *pd, size_t a, size_t b, double point_lambda)
{
    if (a == b) return point_lambda;
    uint32_t da = pd->depth[a], db = pd->depth[b];
    size_t x = da > db ? lift(pd, a, da - db) : a, y = db > da ? lift(pd, b, db - da) : b;
    /* One is at or above the other: the library's walk moves one side only. */
    if (x == y) return point_lambda;
    for (size_t j = pd->levels; j-- > 0;) {
        size_t ux = pd->lift[j * pd->k + x], uy = pd->lift[j * pd->k + y];
        if (ux != uy) x = ux, y = uy;
    }
    /* x and y are the common ancestor's children on each side; the walk's
     * last step leaves from the smaller id (ids grow downwards). */
    return pd->birth[x < y ? x : y];
}

/* Distance from x to the nearest point of one exemplar set: the smallest
 * key of the squared distance, by search or by scan (the same sums either
 * way). */
static double nearest_exemplar(const grove__exemplar_set *set, const double *x, size_t d, void *scratch)
{
    double best = (double)INFINITY;
    if (set->indexed) {
        uint32_t row;
        grove__tree_knn_point(&set->tree, x, 1, scratch, &row, &best);
        return best;
    }
    for (size_t e = 0; e < set->count; e++) {
        double s = key2_f64(x, set->x + e * d, d);
        if (s < best) best = s;
    }
    return grove__key_dist(best);
}

void grove__distance_vector(const grove__prediction *pd, const double *x, double *dist, void *scratch)
{
    size_t k = pd->clusters, d = pd->tree.d;
    double sum = 0;
    for (size_t c = 0; c < k; c++) {
        double r = nearest_exemplar(&pd->sets[c], x, d, scratch);
        dist[c] = r != 0 ? 1.0 / r : DBL_MAX / (double)k;
        sum += dist[c];
    }
    for (size_t c = 0; c < k; c++) dist[c] /= sum;
}

int grove__predict_threads(const grove_options *options, size_t nq)
{
    int threads = grove__options(options).threads;
    size_t cap = nq / 64 + 1;
    return (size_t)threads > cap ? (int)cap : threads;
}

grove_status grove__prediction_of(const grove_hdbscan_model *m, const char *who, const grove__prediction **out)
{
    if (!m) return grove__fail(GROVE_INVALID_ARGUMENT, "%s: model is NULL", who);
    if (!m->prediction && m->params.prediction_data && m->n < 2)
        return grove__fail(GROVE_INVALID_ARGUMENT, "%s: the model has %zu point%s: nothing to predict from", who,
                           m->n, m->n == 1 ? "" : "s");
    if (!m->prediction)
        return grove__fail(GROVE_INVALID_ARGUMENT,
                           "%s: the model has no prediction data (create it from points with prediction_data set)",
                           who);
    if (m->prediction->neighbours > m->n)
        return grove__fail(GROVE_INVALID_ARGUMENT,
                           "%s: prediction searches 2 (K - 1) = %zu nearest training points, but the model has n = %zu",
                           who, m->prediction->neighbours, m->n);
    *out = m->prediction;
    return GROVE_OK;
}
