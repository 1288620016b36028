/* grove_emst and grove_core_distances: validation, the index, core
 * distances, Borůvka, and the sorted output. */
#include "emst_internal.h"
#include "emst.h"

#include "parallel.h"

#include <float.h>
#include <math.h>

void grove_emst_params_init(grove_emst_params *params)
{
    if (params) params->min_samples = 1;
}

/* Validate the points and K, and measure their range; n >
 * GROVE__INDEX_MAX_N is refused. */
static grove_status check_input(grove_points points, size_t k, const char *who, int threads, double *magnitude)
{
    grove_status s = grove__points_validate_range(points, threads, magnitude);
    if (s != GROVE_OK) return s;
    if (points.n > GROVE__INDEX_MAX_N)
        return grove__fail(GROVE_TOO_LARGE, "%s: n = %zu points; at most %zu are supported", who, points.n,
                           GROVE__INDEX_MAX_N);
    if (k < 1) return grove__fail(GROVE_INVALID_ARGUMENT, "%s: min_samples must be at least 1, got 0", who);
    if (points.n > 0 && k > points.n)
        return grove__fail(GROVE_INVALID_ARGUMENT, "%s: min_samples = %zu exceeds the number of points n = %zu", who,
                           k, points.n);
    return GROVE_OK;
}

/* The index of validated points, scaled for their range (internal.h). */
static grove_status range_tree(grove_points points, double magnitude, int threads, grove__tree *t)
{
    return grove__tree_build(points, grove__range_exponent(magnitude, points.d, points.dtype), threads, t);
}

grove_status grove_core_distances(grove_points points, const grove_knn_params *params, double *core,
                                  const grove_options *options)
{
    grove__clear_error();
    if (!params) return grove__fail(GROVE_INVALID_ARGUMENT, "core distances: params is NULL");
    if (params->k < 1) return grove__fail(GROVE_INVALID_ARGUMENT, "core distances: k must be at least 1, got 0");
    /* The k-th nearest other row is the (k + 1)-th counting the row itself:
     * the rest of the row's distances are the same with or without it. */
    size_t min_samples = params->k + (params->exclude_self != 0);
    int threads = grove__threads_for(grove__options(options).threads, points.n);
    double magnitude;
    grove_status s = check_input(points, min_samples, "core distances", threads, &magnitude);
    if (s != GROVE_OK || points.n == 0) return s;
    if (!core) return grove__fail(GROVE_INVALID_ARGUMENT, "core distances: core is NULL");
    grove__tree t;
    s = range_tree(points, magnitude, threads, &t);
    if (s != GROVE_OK) return s;
    double *kth = grove__malloc(points.n * sizeof *kth, "core distances");
    if (!kth) s = GROVE_OUT_OF_MEMORY;
    if (s == GROVE_OK) s = grove__tree_knn(&t, min_samples, NULL, NULL, kth, options);
    if (s == GROVE_OK) {
#pragma omp parallel for num_threads(threads) schedule(static)
        for (size_t p = 0; p < points.n; p++) core[t.perm[p]] = grove__key_dist(kth[p]);
    }
    if (s == GROVE_OK && t.exponent && grove__range_unscale(core, points.n, t.exponent, threads)) {
        size_t row = 0;
        while (!isinf(core[row])) row++;
        s = grove__fail(GROVE_INVALID_ARGUMENT, "core distances: the core distance of row %zu exceeds the largest "
                        "double (%.17g)", row, DBL_MAX);
    }
    grove__free(kth);
    grove__tree_free(&t);
    return s;
}

/* Sort the edges by (weight, u, v) into the caller's arrays: a stable
 * radix sort by (u, v), then a stable one by the weight's bits. */
static grove_status sort_edges(const uint32_t *eu, const uint32_t *ev, const double *ew2, size_t m, int threads,
                               int64_t *edges, double *weights)
{
    uint64_t *key = grove__malloc(m * sizeof *key, "EMST sort keys");
    uint32_t *order = grove__malloc(m * sizeof *order, "EMST sort order");
    grove_status s = key && order ? GROVE_OK : GROVE_OUT_OF_MEMORY;
    if (s == GROVE_OK) {
#pragma omp parallel for num_threads(threads) schedule(static)
        for (size_t i = 0; i < m; i++) {
            key[i] = (uint64_t)eu[i] << 32 | ev[i];
            order[i] = (uint32_t)i;
        }
        s = grove__radix_sort_u64(key, order, m, threads);
    }
    if (s == GROVE_OK) {
#pragma omp parallel for num_threads(threads) schedule(static)
        for (size_t i = 0; i < m; i++) key[i] = grove__dbits(grove__key_dist(ew2[order[i]]));
        s = grove__radix_sort_u64(key, order, m, threads);
    }
    if (s == GROVE_OK) {
#pragma omp parallel for num_threads(threads) schedule(static)
        for (size_t i = 0; i < m; i++) {
            uint32_t e = order[i];
            edges[2 * i] = eu[e];
            edges[2 * i + 1] = ev[e];
            weights[i] = grove__bits_d(key[i]);
        }
    }
    grove__free(key);
    grove__free(order);
    return s;
}

grove_status grove__emst_scaled(grove_points points, double magnitude, size_t min_samples, double alpha,
                                int64_t *edges, double *weights, int *exponent, const grove_options *options)
{
    size_t n = points.n, m = n - 1;
    int threads = grove__threads_for(grove__options(options).threads, n);
    grove__tree t;
    grove_status s = range_tree(points, magnitude, threads, &t);
    if (s != GROVE_OK) return s;
    *exponent = t.exponent;
    double *core2 = NULL, *ew = NULL;
    uint32_t *eu = NULL, *ev = NULL;
    if (min_samples > 1) {
        core2 = grove__malloc(n * sizeof *core2, "EMST core distances");
        s = core2 ? grove__tree_knn(&t, min_samples, NULL, NULL, core2, options) : GROVE_OUT_OF_MEMORY;
        for (size_t p = 0; s == GROVE_OK && alpha != 1 && p < n; p++)
            core2[p] = grove__key_scale(core2[p], alpha * alpha);
    }
    if (s == GROVE_OK) {
        eu = grove__malloc(m * sizeof *eu, "EMST edges");
        ev = grove__malloc(m * sizeof *ev, "EMST edges");
        ew = grove__malloc(m * sizeof *ew, "EMST weights");
        s = eu && ev && ew ? GROVE_OK : GROVE_OUT_OF_MEMORY;
    }
    if (s == GROVE_OK) s = grove__boruvka_run(&t, core2, eu, ev, ew, options);
    grove__free(core2);
    grove__tree_free(&t);
    if (s == GROVE_OK) s = sort_edges(eu, ev, ew, m, threads, edges, weights);
    grove__free(eu);
    grove__free(ev);
    grove__free(ew);
    return s;
}

grove_status grove_emst(grove_points points, const grove_emst_params *params, int64_t *edges, double *weights,
                        const grove_options *options)
{
    grove__clear_error();
    grove_emst_params pr;
    grove_emst_params_init(&pr);
    if (params) pr = *params;
    int threads = grove__threads_for(grove__options(options).threads, points.n);
    double magnitude;
    grove_status s = check_input(points, pr.min_samples, "EMST", threads, &magnitude);
    if (s != GROVE_OK || points.n < 2) return s;
    if (!edges || !weights) return grove__fail(GROVE_INVALID_ARGUMENT, "EMST: edges or weights is NULL");
    int e = 0;
    s = grove__emst_scaled(points, magnitude, pr.min_samples, 1.0, edges, weights, &e, options);
    /* Sorted by weight: the last edge is the longest. */
    size_t m = points.n - 1;
    if (s == GROVE_OK && e && grove__range_unscale(weights, m, e, threads))
        s = grove__fail(GROVE_INVALID_ARGUMENT,
                        "EMST: the edge between rows %lld and %lld is longer than the largest double (%.17g)",
                        (long long)edges[2 * (m - 1)], (long long)edges[2 * m - 1], DBL_MAX);
    return s;
}
