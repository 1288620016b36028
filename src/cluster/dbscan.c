/* DBSCAN on the join's index (grove_dbscan), labelled as scikit-learn
 * labels it, in O(n) working memory whatever the neighbourhood sizes:
 *
 *  1. core points: neighbourhood counts from the join's count pass, or
 *     with sample weights the weight of each neighbourhood summed by the
 *     visitor (every-pair mode: a query's neighbours come in an order the
 *     index fixes, so the sums have the same bits for any thread count);
 *  2. clusters: the connected components of core points under the
 *     eps-pairs, by the join's components pass (a concurrent union-find
 *     inside the search, which skips the pairs already joined). Roots are
 *     each component's smallest row, and scikit-learn numbers clusters in
 *     the order of their lowest-index core point, so cluster k is the k-th
 *     root in row order;
 *  3. border points: scikit-learn expands clusters one after another, so a
 *     non-core point within eps of core points keeps the first cluster
 *     that reaches it, the smallest number among its core neighbours'
 *     clusters, i.e. the smallest root: a third pass visits the non-core
 *     points' neighbourhoods (fewer than min_samples points each), and one
 *     with no core neighbour is noise.
 * Every step is independent of the order in which pairs are found. */
#include "cluster.h"
#include "../join/join.h"
#include "../join/visit.h"

#include "../core/union_find.h"

#include <math.h>
#include <string.h>

void grove_dbscan_params_init(grove_dbscan_params *params)
{
    if (!params) return;
    params->eps = 0.5;
    params->min_samples = 5;
    params->sample_weight = NULL;
}

/* No cluster reaches this non-core point (yet). */
#define DBSCAN_NONE UINT32_MAX

typedef struct dbscan_state {
    const double *weight;
    double *sum, *comp;   /* neighbourhood weights (Neumaier: sum + comp) */
    const uint8_t *core;
    grove__uf uf;         /* core rows: components; non-core rows after
                             the unions: the smallest root reaching them */
} dbscan_state;

/* Add the neighbours' weights to the query's sum, compensated (Neumaier)
 * so the sum is close to exact whatever the order. */
static int weigh_neighbours(void *user, uint32_t row, const uint32_t *nb, size_t count)
{
    dbscan_state *st = user;
    double s = st->sum[row], c = st->comp[row];
    for (size_t t = 0; t < count; t++) {
        double x = st->weight[nb[t]], u = s + x;
        c += fabs(s) >= fabs(x) ? (s - u) + x : (x - u) + s;
        s = u;
    }
    st->sum[row] = s;
    st->comp[row] = c;
    return 0;
}

/* A non-core query: the smallest root among its core neighbours (their
 * parents, flattened; none: noise). Only this thread writes the query's
 * entry; core entries are only read. */
static int reach_border(void *user, uint32_t row, const uint32_t *nb, size_t count)
{
    dbscan_state *st = user;
    uint32_t *parent = st->uf.parent, best = parent[row];
    for (size_t t = 0; t < count; t++) {
        uint32_t v = nb[t];
        if (st->core[v] && parent[v] < best) best = parent[v];
    }
    parent[row] = best;
    return 0;
}

grove_status grove__dbscan_begin(grove_points data, const grove_dbscan_params *params, const int64_t *labels,
                                 grove_dbscan_counts *counts)
{
    grove__clear_error();
    if (counts) memset(counts, 0, sizeof *counts);
    if (!params) return grove__fail(GROVE_INVALID_ARGUMENT, "dbscan: params is NULL");
    if (!(params->eps >= 0) || !isfinite(params->eps))
        return grove__fail(GROVE_INVALID_ARGUMENT, "dbscan: eps = %g; it must be finite and >= 0", params->eps);
    if (params->min_samples < 1) return grove__fail(GROVE_INVALID_ARGUMENT, "dbscan: min_samples = 0; it must be >= 1");
    if (data.n > 0 && !labels) return grove__fail(GROVE_INVALID_ARGUMENT, "dbscan: labels is NULL");
    for (size_t i = 0; params->sample_weight && i < data.n; i++)
        if (!isfinite(params->sample_weight[i]))
            return grove__fail(GROVE_INVALID_ARGUMENT, "dbscan: sample_weight[%zu] = %g; weights must be finite", i,
                               params->sample_weight[i]);
    return GROVE_OK;
}

/* Step 1: core[i] = 1 where the neighbourhood (the point included) holds
 * min_samples points, or that much weight. `counts` is n scratch entries. */
static grove_status find_core(const grove_index *ix, const grove_dbscan_params *params, dbscan_state *st,
                              uint8_t *core, int64_t *counts, const grove_options *options)
{
    size_t n = ix->tree.n;
    if (!params->sample_weight) {
        grove_join_params jp;
        grove_join_params_init(&jp);
        jp.eps = params->eps;
        grove_status s = grove__join_count_local(ix, NULL, &jp, counts, NULL, options);
        for (size_t i = 0; s == GROVE_OK && i < n; i++) core[i] = (uint64_t)counts[i] >= params->min_samples;
        return s;
    }
    st->weight = params->sample_weight;
    st->sum = grove__calloc(n, sizeof *st->sum, "dbscan neighbourhood weights");
    st->comp = grove__calloc(n, sizeof *st->comp, "dbscan neighbourhood weights");
    grove_status s = st->sum && st->comp ? GROVE_OK : GROVE_OUT_OF_MEMORY;
    grove__join_visitor v = {.eps = params->eps, .fn = weigh_neighbours, .user = st};
    if (s == GROVE_OK) s = grove__join_visit(ix, &v, options);
    for (size_t i = 0; s == GROVE_OK && i < n; i++) core[i] = st->sum[i] + st->comp[i] >= (double)params->min_samples;
    grove__free(st->sum);
    grove__free(st->comp);
    st->sum = st->comp = NULL;
    return s;
}

/* Steps 2 and 3, then the labels. `visit` is n scratch bytes. */
static grove_status find_clusters(const grove_index *ix, double eps, dbscan_state *st, uint8_t *visit,
                                  int64_t *labels, grove_dbscan_counts *counts, const grove_options *options)
{
    size_t n = ix->tree.n, ncore = 0;
    const uint8_t *core = st->core;
    for (size_t i = 0; i < n; i++) ncore += core[i];
    grove_status s = grove__uf_init(&st->uf, n, grove__options(options).threads);
    if (s == GROVE_OK && ncore > 0) s = grove__join_connect(ix, eps, core, &st->uf, options);
    if (s != GROVE_OK) return s;
    grove__uf_flatten(&st->uf);
    uint32_t *parent = st->uf.parent;
    for (size_t i = 0; i < n; i++) {
        visit[i] = !core[i];
        if (!core[i]) parent[i] = DBSCAN_NONE;
    }
    grove__join_visitor reach = {.eps = eps, .queries = visit, .fn = reach_border, .user = st};
    if (ncore > 0 && ncore < n) s = grove__join_visit(ix, &reach, options);
    if (s != GROVE_OK) return s;
    /* Roots in row order are the clusters in scikit-learn's order; every
     * parent is at most its row, so it is labelled first. */
    size_t clusters = 0, noise = 0;
    for (size_t i = 0; i < n; i++)
        if (core[i]) labels[i] = parent[i] == i ? (int64_t)clusters++ : labels[parent[i]];
    for (size_t i = 0; i < n; i++)
        if (!core[i]) {
            labels[i] = parent[i] == DBSCAN_NONE ? -1 : labels[parent[i]];
            noise += parent[i] == DBSCAN_NONE;
        }
    if (counts) *counts = (grove_dbscan_counts){clusters, ncore, noise};
    return GROVE_OK;
}

grove_status grove__dbscan_local(grove_points data, const grove_index_params *index_params,
                                 const grove_dbscan_params *params, int64_t *labels, uint8_t *core,
                                 grove_dbscan_counts *counts, const grove_options *options)
{
    grove_status s = grove__dbscan_begin(data, params, labels, counts);
    if (s == GROVE_OK && data.n == 0) return grove__points_check_shape(data);
    /* Working memory beside the index, the same for every eps: the count
     * pass's tallies (8 bytes a point; the counts go into labels) or the
     * weight sums (16), then the union-find and the non-core queries (5), and
     * the core flags unless the caller's (1). */
    size_t budget = options ? options->memory_budget : 0, need = 0;
    size_t per_point = (s == GROVE_OK && params->sample_weight ? 16 : 8) + (core ? 0 : 1);
    if (s == GROVE_OK && (!grove__mul_size(data.n, per_point, &need) || (budget && need > budget)))
        s = grove__fail(GROVE_OVER_BUDGET,
                        "dbscan: %zu points need %zu bytes of working memory beside the index, more than the memory "
                        "budget of %zu bytes",
                        data.n, need, budget);
    grove_index *ix = NULL;
    if (s == GROVE_OK) s = grove__index_create_local(data, index_params, options, &ix);
    if (s != GROVE_OK) return s;
    size_t n = data.n;
    uint8_t *flags = core ? core : grove__malloc(n, "dbscan core flags");
    uint8_t *visit = NULL;
    dbscan_state st;
    memset(&st, 0, sizeof st);
    st.core = flags;
    s = flags ? GROVE_OK : GROVE_OUT_OF_MEMORY;
    /* The labels hold the counts until the labelling overwrites them. */
    if (s == GROVE_OK) s = find_core(ix, params, &st, flags, labels, options);
    if (s == GROVE_OK) s = (visit = grove__malloc(n, "dbscan queries")) ? GROVE_OK : GROVE_OUT_OF_MEMORY;
    if (s == GROVE_OK) s = find_clusters(ix, params->eps, &st, visit, labels, counts, options);
    grove__uf_free(&st.uf);
    grove__free(visit);
    if (flags != core) grove__free(flags);
    grove_index_free(ix);
    if (s != GROVE_OK && counts) memset(counts, 0, sizeof *counts);
    return s;
}
