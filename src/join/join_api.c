/* The public join calls on one process: count, fill, stream (batches
 * under the memory budget) and the allocating ones, on an index (search)
 * or building it. The dispatch layer (src/dispatch/join.c) chooses them,
 * or the distributed grove_join of src/mpi. */
#include "join.h"
#include "join_run.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void grove_join_params_init(grove_join_params *params)
{
    if (!params) return;
    params->eps = 0;
    params->exclude_self = 0;
    params->distances = 0;
}

grove_status grove__join_params_check(const grove_join_params *params)
{
    if (!params) return grove__fail(GROVE_INVALID_ARGUMENT, "join: params is NULL");
    if (!(params->eps >= 0) || !isfinite(params->eps))
        return grove__fail(GROVE_INVALID_ARGUMENT, "join: eps = %g; it must be finite and >= 0", params->eps);
    return GROVE_OK;
}

static grove_status check_params(const grove_index *index, const grove_join_params *params)
{
    if (!index) return grove__fail(GROVE_INVALID_ARGUMENT, "join: index is NULL");
    return grove__join_params_check(params);
}

static join_pass pass_init(const grove_index *index, const grove_join_params *params, const grove_index *Q)
{
    join_pass p;
    memset(&p, 0, sizeof p);
    p.eps2 = grove__join_eps2_key(index, params->eps);
    p.prune2 = grove__join_prune2(index, Q, params->eps);
    p.exclude_self = params->exclude_self != 0;
    p.row0 = 0;
    p.row1 = Q->tree.n;
    return p;
}

static grove_status count_pass(const join_engine *e, const grove_index *index, const grove_index *Q,
                               const grove_join_params *params, int64_t *counts, join_hits *hits,
                               const grove_options *options)
{
    join_pass p = pass_init(index, params, Q);
    p.counts = counts;
    p.hits = hits;
    return e->run(e->ctx, index, Q, &p, options, "join count");
}

static int64_t sum_counts(const int64_t *counts, size_t nq)
{
    int64_t total = 0;
    for (size_t q = 0; q < nq; q++) total += counts[q];
    return total;
}

grove_status grove__join_count_local(const grove_index *index, const grove_points *queries,
                                     const grove_join_params *params, int64_t *counts, int64_t *pairs,
                                     const grove_options *options)
{
    return grove__join_count_on(&grove__join_cpu, index, queries, params, counts, pairs, options);
}

grove_status grove__join_count_on(const join_engine *e, const grove_index *index, const grove_points *queries,
                                  const grove_join_params *params, int64_t *counts, int64_t *pairs,
                                  const grove_options *options)
{
    grove__clear_error();
    grove_status s = check_params(index, params);
    const grove_index *Q = NULL;
    if (s == GROVE_OK)
        s = grove__queries_prepare(index, queries, params->exclude_self, grove__options(options).threads, &Q);
    if (s == GROVE_OK && Q->tree.n > 0 && !counts)
        s = grove__fail(GROVE_INVALID_ARGUMENT, "join count: counts is NULL");
    if (s == GROVE_OK) s = count_pass(e, index, Q, params, counts, NULL, options);
    if (s == GROVE_OK && pairs) *pairs = sum_counts(counts, Q->tree.n);
    grove__queries_release(index, Q);
    return s;
}

/* offsets[0] = 0 and never decreasing; names the first query that breaks it. */
static grove_status check_offsets(const int64_t *offsets, size_t nq)
{
    if (!offsets) return grove__fail(GROVE_INVALID_ARGUMENT, "join fill: offsets is NULL");
    if (offsets[0] != 0)
        return grove__fail(GROVE_INVALID_ARGUMENT, "join fill: offsets[0] = %lld; it must be 0", (long long)offsets[0]);
    for (size_t q = 0; q < nq; q++)
        if (offsets[q + 1] < offsets[q])
            return grove__fail(GROVE_INVALID_ARGUMENT, "join fill: offsets decrease at query %zu (%lld then %lld)", q,
                               (long long)offsets[q], (long long)offsets[q + 1]);
    return GROVE_OK;
}

/* After a fill found offsets that disagree with the counts: recount and
 * name the first query, whatever the schedule was. */
static grove_status name_bad_query(const join_engine *e, const grove_index *index, const grove_index *Q,
                                   const grove_join_params *params, const int64_t *offsets,
                                   const grove_options *options)
{
    int64_t *counts = grove__malloc(Q->tree.n * sizeof *counts, "join check");
    if (!counts) return GROVE_OUT_OF_MEMORY;
    grove_status s = count_pass(e, index, Q, params, counts, NULL, options);
    for (size_t q = 0; s == GROVE_OK && q < Q->tree.n; q++)
        if (offsets[q + 1] - offsets[q] != counts[q]) {
            s = grove__fail(GROVE_INVALID_ARGUMENT,
                            "join fill: offsets give query %zu %lld neighbours but it has %lld (offsets must come "
                            "from grove_join_count with the same eps and queries)",
                            q, (long long)(offsets[q + 1] - offsets[q]), (long long)counts[q]);
            break;
        }
    grove__free(counts);
    return s;
}

static grove_status fill_pass(const join_engine *e, const grove_index *index, const grove_index *Q,
                              const grove_join_params *params, size_t row0, size_t row1, const int64_t *offsets,
                              int64_t *indices, double *distances, join_hits *hits, const grove_options *options)
{
    join_pass p = pass_init(index, params, Q);
    p.hits = hits;
    p.fill = 1;
    p.row0 = row0;
    p.row1 = row1;
    p.offsets = offsets;
    p.indices = indices;
    p.distances = distances;
    grove_status s = e->run(e->ctx, index, Q, &p, options, "join fill");
    /* Distances come out in the index's scaled units: back to the caller's. */
    int64_t first = offsets[0], count = offsets[row1 - row0] - first;
    if (s == GROVE_OK && distances && index->tree.exponent &&
        grove__range_unscale(distances + first, (size_t)count, index->tree.exponent, grove__options(options).threads))
        s = grove__fail(GROVE_INVALID_ARGUMENT, "join fill: a distance within eps = %g exceeds the largest double",
                        params->eps);
    return s;
}

grove_status grove__join_fill_local(const grove_index *index, const grove_points *queries,
                                    const grove_join_params *params, const int64_t *offsets, int64_t *indices,
                                    double *distances, const grove_options *options)
{
    return grove__join_fill_on(&grove__join_cpu, index, queries, params, offsets, indices, distances, options);
}

grove_status grove__join_fill_on(const join_engine *e, const grove_index *index, const grove_points *queries,
                                 const grove_join_params *params, const int64_t *offsets, int64_t *indices,
                                 double *distances, const grove_options *options)
{
    grove__clear_error();
    grove_status s = check_params(index, params);
    const grove_index *Q = NULL;
    if (s == GROVE_OK)
        s = grove__queries_prepare(index, queries, params->exclude_self, grove__options(options).threads, &Q);
    if (s == GROVE_OK) s = check_offsets(offsets, Q->tree.n);
    if (s == GROVE_OK && offsets[Q->tree.n] > 0 && !indices)
        s = grove__fail(GROVE_INVALID_ARGUMENT, "join fill: indices is NULL");
    if (s == GROVE_OK) {
        s = fill_pass(e, index, Q, params, 0, Q->tree.n, offsets, indices, distances, NULL, options);
        if (s == GROVE_INVALID_ARGUMENT) {
            grove_status named = name_bad_query(e, index, Q, params, offsets, options);
            if (named != GROVE_OK) s = named;
        }
    }
    grove__queries_release(index, Q);
    return s;
}

/* Bytes of a batch's result for query q: its offset and its pairs. */
static size_t query_bytes(int64_t count, int distances)
{
    return sizeof(int64_t) + (size_t)count * (sizeof(int64_t) + (distances ? sizeof(double) : 0));
}

/* The end of the batch starting at query q0: as many queries as fit in
 * budget bytes with the closing offset (0 = no limit); q0 if none does. */
static size_t batch_end(const int64_t *counts, size_t nq, size_t q0, size_t budget, int distances)
{
    size_t bytes = sizeof(int64_t), q1 = q0;
    while (q1 < nq && (!budget || bytes + query_bytes(counts[q1], distances) <= budget))
        bytes += query_bytes(counts[q1++], distances);
    return q1;
}

/* Hits a count may keep for the fill without a budget: 1 GiB of them. */
#define KEEP_DEFAULT (((size_t)1 << 30) / sizeof(join_hit))

grove_status grove__join_stream_local(const grove_index *index, const grove_points *queries,
                                      const grove_join_params *params, grove_join_batch_fn fn, void *user,
                                      const grove_options *options)
{
    return grove__join_stream_on(&grove__join_cpu, index, queries, params, fn, user, options);
}

grove_status grove__join_stream_on(const join_engine *e, const grove_index *index, const grove_points *queries,
                                   const grove_join_params *params, grove_join_batch_fn fn, void *user,
                                   const grove_options *options)
{
    grove__clear_error();
    grove_status s = check_params(index, params);
    if (s == GROVE_OK && !fn) s = grove__fail(GROVE_INVALID_ARGUMENT, "join stream: the batch callback is NULL");
    const grove_index *Q = NULL;
    if (s == GROVE_OK)
        s = grove__queries_prepare(index, queries, params->exclude_self, grove__options(options).threads, &Q);
    if (s != GROVE_OK) return s;
    size_t nq = Q->tree.n, budget = options ? options->memory_budget : 0;
    int want_dist = params->distances != 0;
    /* The counts live through the whole stream: they come out of the budget. */
    size_t counts_bytes = (nq ? nq : 1) * sizeof(int64_t);
    if (budget && budget <= counts_bytes + 2 * sizeof(int64_t))
        s = grove__fail(GROVE_OVER_BUDGET, "join stream: the memory budget of %zu bytes does not hold the %zu "
                        "bytes of per-query counts", budget, counts_bytes);
    else if (budget)
        budget -= counts_bytes;
    int64_t *counts = s == GROVE_OK ? grove__malloc(counts_bytes, "join counts") : NULL;
    if (s == GROVE_OK && !counts) s = GROVE_OUT_OF_MEMORY;
    /* Hits kept by the count (join_hits) take up to half the budget; they
     * are used only when the whole result then fits in one batch. */
    join_hits hits = {budget ? budget / 2 / sizeof(join_hit) : KEEP_DEFAULT, 0, NULL, 0};
    if (s == GROVE_OK) s = count_pass(e, index, Q, params, counts, &hits, options);
    size_t room = budget;
    if (hits.complete && budget) {
        room = budget - hits.count * sizeof(join_hit);
        if (batch_end(counts, nq, 0, room, want_dist) < nq) {
            grove__join_hits_free(&hits);
            room = budget;
        }
    }
    /* The largest batch, to size the buffers once; a query alone over the
     * budget is refused. */
    size_t max_q = 0, max_pairs = 0;
    for (size_t q0 = 0; s == GROVE_OK && q0 < nq;) {
        size_t q1 = batch_end(counts, nq, q0, room, want_dist), pairs = 0;
        if (q1 == q0) {
            s = grove__fail(GROVE_OVER_BUDGET,
                            "join stream: query %zu alone has %lld neighbours (%zu bytes), more than the memory "
                            "budget of %zu bytes",
                            q0, (long long)counts[q0], sizeof(int64_t) + query_bytes(counts[q0], want_dist), room);
            break;
        }
        for (size_t q = q0; q < q1; q++) pairs += (size_t)counts[q];
        max_q = q1 - q0 > max_q ? q1 - q0 : max_q;
        max_pairs = pairs > max_pairs ? pairs : max_pairs;
        q0 = q1;
    }
    int64_t *offsets = NULL, *indices = NULL;
    double *distances = NULL;
    if (s == GROVE_OK) {
        offsets = grove__malloc((max_q + 1) * sizeof *offsets, "join batch offsets");
        indices = grove__malloc((max_pairs ? max_pairs : 1) * sizeof *indices, "join batch indices");
        distances = want_dist ? grove__malloc((max_pairs ? max_pairs : 1) * sizeof *distances, "join batch distances")
                              : NULL;
        if (!offsets || !indices || (want_dist && !distances)) s = GROVE_OUT_OF_MEMORY;
    }
    int64_t before = 0, total = s == GROVE_OK ? sum_counts(counts, nq) : 0;
    /* The announcement: the result's size before any pair is filled. */
    if (s == GROVE_OK && nq > 0) {
        int64_t zero = 0;
        grove_join_batch sizes = {0, 0, &zero, NULL, NULL, 0, total};
        if (fn(user, &sizes) != 0)
            s = grove__fail(GROVE_CANCELLED, "join stream: the batch callback stopped the join before the first batch");
    }
    for (size_t q0 = 0; s == GROVE_OK && (q0 < nq || (nq == 0 && q0 == 0));) {
        size_t q1 = batch_end(counts, nq, q0, room, want_dist);
        offsets[0] = 0;
        for (size_t q = q0; q < q1; q++) offsets[q - q0 + 1] = offsets[q - q0] + counts[q];
        s = fill_pass(e, index, Q, params, q0, q1, offsets, indices, distances, &hits, options);
        if (s != GROVE_OK) break;
        grove_join_batch batch = {q0, q1, offsets, indices, distances, before, total};
        if (fn(user, &batch) != 0) {
            s = grove__fail(GROVE_CANCELLED, "join stream: the batch callback stopped the join after query %zu", q1);
            break;
        }
        before += offsets[q1 - q0];
        if (nq == 0) break;
        q0 = q1;
    }
    grove__free(offsets);
    grove__free(indices);
    grove__free(distances);
    grove__free(counts);
    grove__join_hits_free(&hits);
    grove__queries_release(index, Q);
    return s;
}

void grove_join_result_free(grove_join_result *result)
{
    if (!result) return;
    grove__free(result->offsets);
    grove__free(result->indices);
    grove__free(result->distances);
    memset(result, 0, sizeof *result);
}

grove_status grove__join_result_gather_local(grove_join_result *result, const grove_options *options)
{
    (void)options;
    grove__clear_error();
    return result ? GROVE_OK : grove__fail(GROVE_INVALID_ARGUMENT, "join gather: result is NULL");
}

grove_status grove__join_search_local(const grove_index *index, const grove_points *queries,
                                      const grove_join_params *params, grove_join_result *result,
                                      const grove_options *options)
{
    return grove__join_search_on(&grove__join_cpu, index, queries, params, result, options);
}

grove_status grove__join_search_on(const join_engine *e, const grove_index *index, const grove_points *queries,
                                   const grove_join_params *params, grove_join_result *result,
                                   const grove_options *options)
{
    grove__clear_error();
    if (!result) return grove__fail(GROVE_INVALID_ARGUMENT, "join: result is NULL");
    memset(result, 0, sizeof *result);
    grove_status s = check_params(index, params);
    const grove_index *Q = NULL;
    if (s == GROVE_OK)
        s = grove__queries_prepare(index, queries, params->exclude_self, grove__options(options).threads, &Q);
    size_t nq = Q ? Q->tree.n : 0;
    if (s == GROVE_OK) {
        result->nq = nq;
        result->offsets = grove__malloc((nq + 1) * sizeof *result->offsets, "join offsets");
        if (!result->offsets) s = GROVE_OUT_OF_MEMORY;
    }
    size_t budget = options ? options->memory_budget : 0;
    join_hits hits = {budget ? budget / 4 / sizeof(join_hit) : KEEP_DEFAULT, 0, NULL, 0};
    if (s == GROVE_OK) s = count_pass(e, index, Q, params, result->offsets + 1, &hits, options);
    if (s == GROVE_OK) {
        int64_t *o = result->offsets;
        o[0] = 0;
        for (size_t q = 0; q < nq; q++) o[q + 1] += o[q];
        result->pairs = o[nq];
        size_t per_pair = sizeof(int64_t) + (params->distances ? sizeof(double) : 0);
        size_t need = (nq + 1) * sizeof(int64_t);
        if ((size_t)result->pairs > (SIZE_MAX - need) / per_pair)
            s = grove__fail(GROVE_TOO_LARGE, "join: %lld pairs overflow the address space", (long long)result->pairs);
        else if (need += (size_t)result->pairs * per_pair, budget && need > budget)
            s = grove__fail(GROVE_OVER_BUDGET,
                            "join: the result has %lld pairs (%zu bytes), more than the memory budget of %zu bytes; "
                            "stream it with grove_join_stream",
                            (long long)result->pairs, need, budget);
    }
    if (s == GROVE_OK) {
        size_t m = result->pairs ? (size_t)result->pairs : 1;
        result->indices = grove__malloc(m * sizeof *result->indices, "join indices");
        result->distances = params->distances ? grove__malloc(m * sizeof *result->distances, "join distances") : NULL;
        if (!result->indices || (params->distances && !result->distances)) s = GROVE_OUT_OF_MEMORY;
    }
    if (s == GROVE_OK)
        s = fill_pass(e, index, Q, params, 0, nq, result->offsets, result->indices, result->distances, &hits,
                      options);
    grove__join_hits_free(&hits);
    grove__queries_release(index, Q);
    if (s != GROVE_OK) grove_join_result_free(result);
    return s;
}

grove_status grove__join_local(grove_points data, const grove_points *queries, const grove_index_params *index_params,
                               const grove_join_params *params, grove_join_result *result,
                               const grove_options *options)
{
    return grove__join_on(&grove__join_cpu, data, queries, index_params, params, result, options);
}

grove_status grove__join_on(const join_engine *e, grove_points data, const grove_points *queries,
                            const grove_index_params *index_params, const grove_join_params *params,
                            grove_join_result *result, const grove_options *options)
{
    grove__clear_error();
    if (!result) return grove__fail(GROVE_INVALID_ARGUMENT, "join: result is NULL");
    memset(result, 0, sizeof *result);
    grove_index *index = NULL;
    grove_status s = grove__join_params_check(params);
    if (s == GROVE_OK) s = grove__index_build_for(data, queries, index_params, options, &index);
    if (s == GROVE_OK) s = grove__join_search_on(e, index, queries, params, result, options);
    grove_index_free(index);
    return s;
}
