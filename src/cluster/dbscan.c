/* DBSCAN on the join's index (grove_dbscan), labelled as scikit-learn
 * labels it, in O(n) working memory whatever the neighbourhood sizes:
 *
 *  1. core points: neighbourhood counts from the join's count pass, or
 *     with sample weights the weight of each neighbourhood, decided
 *     exactly (dbscan_weights.c);
 *  2. clusters: the connected components of core points under the
 *     eps-pairs, by the join's components pass (a concurrent union-find
 *     inside the search, which skips the pairs already joined). Roots are
 *     each component's smallest row, and scikit-learn numbers clusters in
 *     the order of their lowest-index core point, so cluster k is the k-th
 *     root in row order;
 *  3. border points: scikit-learn expands clusters one after another, so a
 *     non-core point within eps of core points keeps the first cluster
 *     that reaches it, the smallest number among its core neighbours'
 *     clusters: a third pass visits the non-core points' neighbourhoods
 *     (fewer than min_samples points each), and one with no core
 *     neighbour is noise.
 * Every step is independent of the order in which pairs are found. The
 * distributed DBSCAN (src/mpi/dbscan.c) runs the same steps on each rank's
 * points and their ghosts, numbering the clusters across ranks between
 * steps 2 and 3. */
#include "cluster.h"
#include "dbscan_internal.h"
#include "../join/join.h"
#include "../join/visit.h"

#include <math.h>
#include <string.h>

void grove_dbscan_params_init(grove_dbscan_params *params)
{
    if (!params) return;
    params->eps = 0.5;
    params->min_samples = 5;
    params->sample_weight = NULL;
}

grove_status grove__dbscan_begin(grove_points data, const grove_dbscan_params *params, const int64_t *labels,
                                 grove_dbscan_counts *counts, size_t first)
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
            return grove__fail(GROVE_INVALID_ARGUMENT, "dbscan: sample_weight[%zu] = %g; weights must be finite",
                               first + i, params->sample_weight[i]);
    return GROVE_OK;
}

grove_status grove__dbscan_budget(size_t n, bool weighted, bool own_core, const grove_options *options)
{
    /* The same for every eps: the count pass's tallies (8 bytes a point)
     * or the weight sums (24), then the union-find and the non-core
     * queries (5), and the core flags unless the caller's (1). */
    size_t budget = options ? options->memory_budget : 0, need = 0;
    size_t per_point = (weighted ? 24 : 8) + (own_core ? 1 : 0);
    if (!grove__mul_size(n, per_point, &need) || (budget && need > budget))
        return grove__fail(GROVE_OVER_BUDGET,
                           "dbscan: %zu points need %zu bytes of working memory beside the index, more than the "
                           "memory budget of %zu bytes",
                           n, need, budget);
    return GROVE_OK;
}

grove_status grove__dbscan_core(const grove_index *ix, double eps, size_t min_samples, const double *weight,
                                uint8_t *core, int64_t *scratch, const grove_options *options)
{
    if (weight) return grove__dbscan_weighed_core(ix, eps, min_samples, weight, core, options);
    grove_join_params jp;
    grove_join_params_init(&jp);
    jp.eps = eps;
    grove_status s = grove__join_count_local(ix, NULL, &jp, scratch, NULL, options);
    for (size_t i = 0; s == GROVE_OK && i < ix->tree.n; i++) core[i] = (uint64_t)scratch[i] >= min_samples;
    return s;
}

grove_status grove__dbscan_components(const grove_index *ix, double eps, const uint8_t *core, grove__uf *uf,
                                      const grove_options *options)
{
    size_t n = ix->tree.n, ncore = 0;
    for (size_t i = 0; i < n; i++) ncore += core[i];
    grove_status s = grove__uf_init(uf, n, grove__options(options).threads);
    if (s == GROVE_OK && ncore > 0) s = grove__join_connect(ix, eps, core, uf, options);
    if (s == GROVE_OK) grove__uf_flatten(uf);
    return s;
}

typedef struct border_state {
    const uint8_t *core;
    int64_t *labels;
} border_state;

/* A non-core query: the smallest cluster among its core neighbours (-1:
 * none yet). Only this thread writes the query's label; core labels are
 * only read. */
static int reach_border(void *user, uint32_t row, const uint32_t *nb, size_t count)
{
    border_state *st = user;
    int64_t best = st->labels[row];
    for (size_t t = 0; t < count; t++) {
        uint32_t v = nb[t];
        if (st->core[v] && (best < 0 || st->labels[v] < best)) best = st->labels[v];
    }
    st->labels[row] = best;
    return 0;
}

grove_status grove__dbscan_borders(const grove_index *ix, double eps, const uint8_t *core, const uint8_t *border,
                                   int64_t *labels, const grove_options *options)
{
    size_t n = ix->tree.n, ncore = 0, asked = 0;
    for (size_t i = 0; i < n; i++) {
        ncore += core[i];
        asked += border[i] != 0;
        if (border[i]) labels[i] = -1;
    }
    border_state st = {core, labels};
    grove__join_visitor reach = {.eps = eps, .queries = border, .fn = reach_border, .user = &st};
    return ncore > 0 && asked > 0 ? grove__join_visit(ix, &reach, options) : GROVE_OK;
}

/* Steps 2 and 3 on one process, then the counts. */
static grove_status label_points(const grove_index *ix, double eps, const uint8_t *core, int64_t *labels,
                                 grove_dbscan_counts *counts, const grove_options *options)
{
    size_t n = ix->tree.n, clusters = 0, ncore = 0, noise = 0;
    grove__uf uf = {0};
    grove_status s = grove__dbscan_components(ix, eps, core, &uf, options);
    /* Roots in row order are the clusters in scikit-learn's order; every
     * parent is at most its row, so it is numbered first. */
    const uint32_t *parent = uf.parent;
    for (size_t i = 0; s == GROVE_OK && i < n; i++)
        if (core[i]) labels[i] = parent[i] == i ? (int64_t)clusters++ : labels[parent[i]];
    grove__uf_free(&uf);
    uint8_t *border = s == GROVE_OK ? grove__malloc(n, "dbscan queries") : NULL;
    if (s == GROVE_OK && !border) s = GROVE_OUT_OF_MEMORY;
    for (size_t i = 0; s == GROVE_OK && i < n; i++) border[i] = !core[i];
    if (s == GROVE_OK) s = grove__dbscan_borders(ix, eps, core, border, labels, options);
    grove__free(border);
    for (size_t i = 0; s == GROVE_OK && i < n; i++) {
        ncore += core[i];
        noise += labels[i] < 0;
    }
    if (s == GROVE_OK && counts) *counts = (grove_dbscan_counts){clusters, ncore, noise};
    return s;
}

grove_status grove__dbscan_local(grove_points data, const grove_index_params *index_params,
                                 const grove_dbscan_params *params, int64_t *labels, uint8_t *core,
                                 grove_dbscan_counts *counts, const grove_options *options)
{
    grove_status s = grove__dbscan_begin(data, params, labels, counts, 0);
    if (s == GROVE_OK && data.n == 0) return grove__points_check_shape(data);
    if (s == GROVE_OK) s = grove__dbscan_budget(data.n, params->sample_weight != NULL, core == NULL, options);
    grove_index *ix = NULL;
    if (s == GROVE_OK) s = grove__index_create_local(data, index_params, options, &ix);
    if (s != GROVE_OK) return s;
    uint8_t *flags = core ? core : grove__malloc(data.n, "dbscan core flags");
    s = flags ? GROVE_OK : GROVE_OUT_OF_MEMORY;
    /* The labels hold the counts until the labelling overwrites them. */
    if (s == GROVE_OK)
        s = grove__dbscan_core(ix, params->eps, params->min_samples, params->sample_weight, flags, labels, options);
    if (s == GROVE_OK) s = label_points(ix, params->eps, flags, labels, counts, options);
    if (flags != core) grove__free(flags);
    grove_index_free(ix);
    if (s != GROVE_OK && counts) memset(counts, 0, sizeof *counts);
    return s;
}
