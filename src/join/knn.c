/* grove_knn_search / grove_knn: exact k nearest neighbours on the join's
 * index, query groups in parallel. */
#include "join_internal.h"
#include "parallel.h"

#include <math.h>

#define JOIN_TEMPLATE "knn_t.h"
#include "instances.h"

typedef void (*knn_group_fn)(const grove_index *, const grove_index *, size_t, size_t, int, int64_t *, double *,
                             void *, uint32_t *);
/* By dtype (float32 first) and metric (periodic second). */
static const knn_group_fn KNN_GROUP[2][2] = {{knn_group_f64, knn_group_f64p}, {knn_group_f32, knn_group_f32p}};

void grove_knn_params_init(grove_knn_params *params)
{
    if (!params) return;
    params->k = 1;
    params->exclude_self = 0;
}

/* k against the n indexed points (one fewer when a self-join excludes
 * the query itself). */
static grove_status check_k(size_t n, const grove_knn_params *params, const grove_points *queries)
{
    if (!params) return grove__fail(GROVE_INVALID_ARGUMENT, "kNN: params is NULL");
    size_t k = params->k;
    int exclude_self = params->exclude_self;
    size_t candidates = n - (exclude_self && !queries && n > 0 ? 1 : 0);
    if (k < 1 || k > candidates)
        return grove__fail(GROVE_INVALID_ARGUMENT, "kNN: k = %zu must be between 1 and %zu (the points%s)", k,
                           candidates, exclude_self ? " other than the query" : "");
    return GROVE_OK;
}

grove_status grove_knn_search(const grove_index *index, const grove_points *queries, const grove_knn_params *params,
                              int64_t *indices, double *distances, const grove_options *options)
{
    grove__clear_error();
    if (!index) return grove__fail(GROVE_INVALID_ARGUMENT, "kNN: index is NULL");
    grove_status checked = check_k(index->tree.n, params, queries);
    if (checked != GROVE_OK) return checked;
    size_t k = params->k;
    int exclude_self = params->exclude_self;
    int threads = grove__options(options).threads;
    const grove_index *Q = NULL;
    grove_status s = grove__queries_prepare(index, queries, exclude_self, threads, &Q);
    if (s != GROVE_OK) return s;
    if (Q->tree.n > 0 && !indices && !distances)
        s = grove__fail(GROVE_INVALID_ARGUMENT, "kNN: both indices and distances are NULL");
    size_t groups = Q->nleaves, block = groups / 64 > 1024 ? groups / 64 : 1024;
    threads = grove__threads_for(threads, grove__join_work(index, Q));
    knn_group_fn group = KNN_GROUP[index->tree.dtype == GROVE_FLOAT32][index->period != NULL];
    for (size_t b0 = 0; s == GROVE_OK && b0 < groups; b0 += block) {
        size_t b1 = groups - b0 > block ? b0 + block : groups;
        int failed = 0, stopped = 0;
#pragma omp parallel num_threads(threads) reduction(| : failed, stopped)
        {
            void *hd = grove__malloc(k * sizeof(double), "kNN heap");
            uint32_t *hr = grove__malloc(k * sizeof *hr, "kNN heap");
            failed = !hd || !hr;
#pragma omp for schedule(dynamic, 1)
            for (size_t g = b0; g < b1; g++) {
                /* One read of the cancel flag per group: a block can take seconds. */
                if (failed || stopped || (stopped = grove__cancelled(options))) continue;
                group(index, Q, g, k, exclude_self, indices, distances, hd, hr);
            }
            grove__free(hd);
            grove__free(hr);
        }
        if (failed) s = grove__fail(GROVE_OUT_OF_MEMORY, "kNN: out of memory for the heaps (k = %zu)", k);
        else if (stopped) s = grove__fail(GROVE_CANCELLED, "kNN: cancelled");
        grove__progress(options, "knn", (double)b1 / (double)groups);
    }
    /* Distances come out in the index's scaled units: back to the caller's. */
    size_t count = Q->tree.n * k;
    if (s == GROVE_OK && distances && index->tree.exponent &&
        grove__range_unscale(distances, count, index->tree.exponent, threads)) {
        size_t i = 0;
        while (!isinf(distances[i])) i++;
        s = grove__fail(GROVE_INVALID_ARGUMENT,
                        "kNN: the distance from query %zu to its neighbour %zu (row %lld) exceeds the largest double",
                        i / k, i % k + 1, indices ? (long long)indices[i] : -1LL);
    }
    grove__queries_release(index, Q);
    return s;
}

grove_status grove_knn(grove_points data, const grove_points *queries, const grove_index_params *index_params,
                       const grove_knn_params *params, int64_t *indices, double *distances,
                       const grove_options *options)
{
    grove__clear_error();
    grove_index *index = NULL;
    grove_status s = check_k(data.n, params, queries);
    if (s == GROVE_OK) s = grove__index_build_for(data, queries, index_params, options, &index);
    if (s == GROVE_OK) s = grove_knn_search(index, queries, params, indices, distances, options);
    grove_index_free(index);
    return s;
}
