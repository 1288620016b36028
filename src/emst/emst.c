/* grove_emst and grove_core_distances: validation, the index, core
 * distances, Borůvka, and the sorted output. */
#include "emst_internal.h"
#include "hdbscan_internal.h"

#include "parallel.h"

#include <math.h>

void grove_emst_params_init(grove_emst_params *params)
{
    if (params) params->min_samples = 1;
}

/* Validate the points and K; n > GROVE__INDEX_MAX_N is refused. */
static grove_status check_input(grove_points points, size_t k, const char *who)
{
    grove_status s = grove_points_validate(points);
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

grove_status grove_core_distances(grove_points points, size_t min_samples, double *core,
                                  const grove_options *options)
{
    grove__clear_error();
    grove_status s = check_input(points, min_samples, "core distances");
    if (s != GROVE_OK || points.n == 0) return s;
    if (!core) return grove__fail(GROVE_INVALID_ARGUMENT, "core distances: core is NULL");
    int threads = grove__threads_for(grove__options(options).threads, points.n);
    grove__tree t;
    s = grove__tree_build(points, threads, &t);
    if (s != GROVE_OK) return s;
    double *kth = grove__malloc(points.n * sizeof *kth, "core distances");
    if (!kth) s = GROVE_OUT_OF_MEMORY;
    if (s == GROVE_OK) s = grove__tree_knn(&t, min_samples, NULL, NULL, kth, options);
    if (s == GROVE_OK) {
#pragma omp parallel for num_threads(threads) schedule(static)
        for (size_t p = 0; p < points.n; p++) core[t.perm[p]] = sqrt(kth[p]);
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
        for (size_t i = 0; i < m; i++) key[i] = grove__dbits(sqrt(ew2[order[i]]));
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

grove_status grove_emst(grove_points points, const grove_emst_params *params, int64_t *edges, double *weights,
                        const grove_options *options)
{
    grove_emst_params pr;
    grove_emst_params_init(&pr);
    if (params) pr = *params;
    return grove__emst_alpha(points, pr.min_samples, 1.0, edges, weights, options);
}

grove_status grove__emst_alpha(grove_points points, size_t min_samples, double alpha, int64_t *edges,
                               double *weights, const grove_options *options)
{
    grove__clear_error();
    grove_emst_params pr = {min_samples};
    grove_status s = check_input(points, pr.min_samples, "EMST");
    if (s != GROVE_OK || points.n < 2) return s;
    if (!edges || !weights) return grove__fail(GROVE_INVALID_ARGUMENT, "EMST: edges or weights is NULL");
    size_t n = points.n, m = n - 1;
    int threads = grove__threads_for(grove__options(options).threads, points.n);
    grove__tree t;
    s = grove__tree_build(points, threads, &t);
    if (s != GROVE_OK) return s;
    double *core2 = NULL, *ew = NULL;
    uint32_t *eu = NULL, *ev = NULL;
    if (pr.min_samples > 1) {
        core2 = grove__malloc(n * sizeof *core2, "EMST core distances");
        s = core2 ? grove__tree_knn(&t, pr.min_samples, NULL, NULL, core2, options) : GROVE_OUT_OF_MEMORY;
        for (size_t p = 0; s == GROVE_OK && alpha != 1 && p < n; p++) core2[p] *= alpha * alpha;
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
