/* The model's prediction data, as the `hdbscan` library's PredictionData
 * builds it: an index of the training points in float64 and their core
 * distances with the library's min_samples (K - 1) neighbours, the
 * cluster tree's lookups (parents, births, largest lambdas, the cluster
 * map from a cluster to the label at or above it), ancestor tables for
 * merge heights, and the exemplars' coordinates. */
#include "predict_internal.h"
#include "parallel.h"

#include <math.h>

/* Exemplar sets larger than this get an index. */
#define GROVE__EXEMPLAR_INDEX_MIN 64

void grove__prediction_free(grove__prediction *pd)
{
    if (!pd) return;
    grove__tree_free(&pd->tree);
    grove__free(pd->core);
    grove__free(pd->up);
    grove__free(pd->birth);
    grove__free(pd->max_lambda);
    grove__free(pd->subtree_max);
    grove__free(pd->label);
    grove__free(pd->label_max);
    grove__free(pd->depth);
    grove__free(pd->lift);
    grove__free(pd->exemplar_x);
    for (size_t c = 0; pd->sets && c < pd->clusters; c++) grove__tree_free(&pd->sets[c].tree);
    grove__free(pd->sets);
    grove__free(pd);
}

/* The training points' index (in float64, in the model's units) and core
 * distances. */
static grove_status index_and_cores(grove__prediction *pd, grove_points points, int exponent, int threads,
                                    const grove_options *options)
{
    size_t n = points.n, d = points.d, stride = grove__points_stride(points);
    double *copy = NULL;
    grove_points view = points;
    if (points.dtype != GROVE_FLOAT64) {
        size_t bytes;
        if (!grove__mul_size(n, d * sizeof *copy, &bytes))
            return grove__fail(GROVE_TOO_LARGE, "HDBSCAN prediction data: %zu x %zu points overflow", n, d);
        copy = grove__malloc(bytes, "HDBSCAN prediction points");
        if (!copy) return GROVE_OUT_OF_MEMORY;
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j < d; j++) copy[i * d + j] = grove__coord(points, stride, i, j);
        view = grove_points_f64(copy, n, d);
    }
    grove_status s = grove__tree_build(view, exponent, grove__threads_for(threads, n), &pd->tree);
    grove__free(copy);
    if (s != GROVE_OK) return s;
    pd->core = grove__calloc(n, sizeof *pd->core, "HDBSCAN prediction core distances");
    if (!pd->core) return GROVE_OUT_OF_MEMORY;
    if (pd->m < 1) return GROVE_OK;
    double *kth = grove__malloc(n * sizeof *kth, "HDBSCAN prediction core distances");
    s = kth ? grove__tree_knn(&pd->tree, pd->m, NULL, NULL, kth, options) : GROVE_OUT_OF_MEMORY;
    for (size_t p = 0; s == GROVE_OK && p < n; p++) pd->core[pd->tree.perm[p]] = grove__key_dist(kth[p]);
    grove__free(kth);
    return s;
}

/* Parents, births, largest lambdas, depths and ancestor tables. */
static grove_status cluster_tables(grove__prediction *pd, const grove__condensed *t)
{
    size_t n = t->n, k = t->clusters;
    pd->k = k;
    pd->up = grove__calloc(k, sizeof *pd->up, "HDBSCAN prediction clusters");
    pd->birth = grove__calloc(k, sizeof *pd->birth, "HDBSCAN prediction clusters");
    pd->max_lambda = grove__calloc(k, sizeof *pd->max_lambda, "HDBSCAN prediction clusters");
    pd->subtree_max = grove__malloc(k * sizeof *pd->subtree_max, "HDBSCAN prediction clusters");
    pd->depth = grove__calloc(k, sizeof *pd->depth, "HDBSCAN prediction clusters");
    if (!pd->up || !pd->birth || !pd->max_lambda || !pd->subtree_max || !pd->depth) return GROVE_OUT_OF_MEMORY;
    for (size_t r = 0; r < t->rows; r++) {
        size_t p = t->parent[r] - n;
        if (t->lambda[r] > pd->max_lambda[p]) pd->max_lambda[p] = t->lambda[r];
        if (t->child[r] >= n) pd->up[t->child[r] - n] = p, pd->birth[t->child[r] - n] = t->lambda[r];
    }
    uint32_t deepest = 0;
    for (size_t c = 0; c < k; c++) {
        pd->subtree_max[c] = pd->max_lambda[c];
        if (c) pd->depth[c] = pd->depth[pd->up[c]] + 1;
        if (pd->depth[c] > deepest) deepest = pd->depth[c];
    }
    for (size_t c = k; c-- > 1;)
        if (pd->subtree_max[c] > pd->subtree_max[pd->up[c]]) pd->subtree_max[pd->up[c]] = pd->subtree_max[c];
    pd->levels = 1;
    while (((uint64_t)1 << pd->levels) <= deepest) pd->levels++;
    size_t cells;
    if (!grove__mul_size(pd->levels, k, &cells))
        return grove__fail(GROVE_TOO_LARGE, "HDBSCAN prediction: ancestor tables overflow");
    pd->lift = grove__malloc(cells * sizeof *pd->lift, "HDBSCAN prediction ancestors");
    if (!pd->lift) return GROVE_OUT_OF_MEMORY;
    for (size_t c = 0; c < k; c++) pd->lift[c] = (uint32_t)pd->up[c];
    for (size_t j = 1; j < pd->levels; j++)
        for (size_t c = 0; c < k; c++) pd->lift[j * k + c] = pd->lift[(j - 1) * k + pd->lift[(j - 1) * k + c]];
    return GROVE_OK;
}

/* The library's cluster_map and max_lambdas: each prediction cluster, in
 * ascending id, hands its current label and its own largest lambda to
 * every cluster below it. */
static grove_status cluster_map(grove__prediction *pd, const grove_hdbscan_model *m)
{
    size_t k = pd->k;
    pd->label = grove__malloc(k * sizeof *pd->label, "HDBSCAN prediction clusters");
    pd->label_max = grove__calloc(k, sizeof *pd->label_max, "HDBSCAN prediction clusters");
    size_t *first = grove__malloc(2 * k * sizeof *first, "HDBSCAN prediction clusters");
    size_t *stack = grove__malloc(k * sizeof *stack, "HDBSCAN prediction clusters");
    grove_status s = pd->label && pd->label_max && first && stack ? GROVE_OK : GROVE_OUT_OF_MEMORY;
    if (s == GROVE_OK) {
        size_t *next = first + k;
        for (size_t c = 0; c < k; c++) pd->label[c] = -1, first[c] = next[c] = k;
        for (size_t c = k; c-- > 1;) next[c] = first[pd->up[c]], first[pd->up[c]] = c;
        for (size_t j = 0; j < m->clusters; j++) pd->label[m->prediction_cluster[j]] = (int64_t)j;
        for (size_t j = 0; j < m->clusters; j++) {
            size_t top = m->prediction_cluster[j], depth = 0;
            int64_t label = pd->label[top];
            double max_lambda = pd->max_lambda[top];
            stack[depth++] = top;
            while (depth) {
                size_t c = stack[--depth];
                pd->label[c] = label;
                pd->label_max[c] = max_lambda;
                for (size_t ch = first[c]; ch < k; ch = next[ch]) stack[depth++] = ch;
            }
        }
    }
    grove__free(first);
    grove__free(stack);
    return s;
}

/* The exemplars' coordinates (float64), and an index over each large set. */
static grove_status exemplar_sets(grove__prediction *pd, const grove_hdbscan_model *m, grove_points points,
                                  int threads)
{
    size_t d = points.d, stride = grove__points_stride(points), total = m->exemplar_offsets[m->clusters];
    size_t bytes;
    if (!grove__mul_size(total ? total : 1, d * sizeof(double), &bytes))
        return grove__fail(GROVE_TOO_LARGE, "HDBSCAN prediction: %zu exemplars overflow", total);
    pd->exemplar_x = grove__malloc(bytes, "HDBSCAN exemplars");
    pd->sets = grove__calloc(m->clusters ? m->clusters : 1, sizeof *pd->sets, "HDBSCAN exemplars");
    if (!pd->exemplar_x || !pd->sets) return GROVE_OUT_OF_MEMORY;
    for (size_t e = 0; e < total; e++)
        for (size_t j = 0; j < d; j++)
            pd->exemplar_x[e * d + j] = ldexp(grove__coord(points, stride, m->exemplar_rows[e], j), -m->exponent);
    for (size_t c = 0; c < m->clusters; c++) {
        grove__exemplar_set *set = &pd->sets[c];
        set->x = pd->exemplar_x + m->exemplar_offsets[c] * d;
        set->count = m->exemplar_offsets[c + 1] - m->exemplar_offsets[c];
        if (set->count < GROVE__EXEMPLAR_INDEX_MIN) continue;
        grove_status s = grove__tree_build(grove_points_f64(set->x, set->count, d), 0,
                                           grove__threads_for(threads, set->count), &set->tree);
        if (s != GROVE_OK) return s;
        set->indexed = 1;
    }
    /* The exemplar searches ask for 1 neighbour, at most pd->neighbours. */
    pd->scratch_bytes = grove__tree_knn_scratch(pd->neighbours);
    return GROVE_OK;
}

grove_status grove__prediction_build(grove_hdbscan_model *m, grove_points points, const grove_options *options)
{
    grove__prediction *pd = grove__calloc(1, sizeof *pd, "HDBSCAN prediction data");
    if (!pd) return GROVE_OUT_OF_MEMORY;
    m->prediction = pd;
    size_t k = m->params.min_samples;
    pd->m = k - 1;
    pd->neighbours = pd->m ? 2 * pd->m : 1;
    pd->clusters = m->clusters;
    pd->prediction_cluster = m->prediction_cluster;
    pd->exponent = m->exponent;
    pd->small_lambda = ldexp(1e-8, m->exponent);
    pd->float_scale = grove__float_scale(&m->tree);
    int threads = grove__options(options).threads;
    grove_status s = index_and_cores(pd, points, m->exponent, threads, options);
    if (s == GROVE_OK) s = cluster_tables(pd, &m->tree);
    if (s == GROVE_OK) s = cluster_map(pd, m);
    if (s == GROVE_OK) s = exemplar_sets(pd, m, points, threads);
    return s;
}
