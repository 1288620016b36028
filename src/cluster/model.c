/* The fitted HDBSCAN* model: fitting from an MST (hierarchy, condensed
 * tree, persistence, selection, per-point results, exemplars, prediction
 * data) and the accessors that copy its parts out. */
#include "hdbscan_internal.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>

void grove_hdbscan_model_free(grove_hdbscan_model *m)
{
    if (!m) return;
    grove__free(m->edges);
    grove__free(m->weights);
    grove__condensed_free(&m->tree);
    grove__free(m->selected);
    grove__free(m->labels);
    grove__free(m->probabilities);
    grove__free(m->outlier_scores);
    grove__free(m->persistence);
    grove__free(m->point_row);
    grove__free(m->prediction_cluster);
    grove__free(m->exemplar_offsets);
    grove__free(m->exemplar_rows);
    grove__prediction_free(m->prediction);
    grove__free(m);
}

/* The condensed tree the parameters ask for, simplified by persistence. */
static grove_status condensed_tree(size_t n, const int64_t *edges, const double *weights,
                                   const grove_hdbscan_params *p, grove__condensed *out)
{
    grove__linkage l;
    grove__dendrogram h;
    grove_status s = grove__linkage_build(n, edges, weights, &l);
    if (s != GROVE_OK) return s;
    s = grove__dendrogram_build(&l, p->ties, &h);
    if (s != GROVE_OK) return s;
    size_t mcs = p->min_cluster_size + (p->match_reference_implementation ? 1 : 0);
    s = grove__condense(&h, mcs, out);
    grove__dendrogram_free(&h);
    if (s == GROVE_OK && p->persistence > 0) s = grove__simplify(out, p->persistence);
    if (s != GROVE_OK) grove__condensed_free(out);
    return s;
}

static int size_cmp(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return (x > y) - (x < y);
}

/* The clusters the library's prediction code uses: sorted(condensed_tree_
 * ._select_clusters()), per label the lowest parent among its points (the
 * selected cluster unless none of its points leaves it directly), in
 * ascending id. */
static void prediction_clusters(grove_hdbscan_model *m)
{
    size_t n = m->n;
    for (size_t c = 0; c < m->clusters; c++) m->prediction_cluster[c] = SIZE_MAX;
    for (size_t i = 0; i < n; i++) {
        int64_t label = m->labels[i];
        size_t parent = m->tree.parent[m->point_row[i]] - n;
        if (label >= 0 && parent < m->prediction_cluster[label]) m->prediction_cluster[label] = parent;
    }
    for (size_t c = 0; c < m->clusters; c++)
        if (m->prediction_cluster[c] == SIZE_MAX) m->prediction_cluster[c] = m->selected[c];
    qsort(m->prediction_cluster, m->clusters, sizeof *m->prediction_cluster, size_cmp);
}

/* exemplars_: per prediction cluster, depth first over the leaves below it
 * (children in row order), each leaf's points leaving at its largest
 * lambda, in row order. Counted, then filled. */
static grove_status exemplars(grove_hdbscan_model *m)
{
    const grove__condensed *t = &m->tree;
    size_t n = t->n, k = t->clusters;
    double *max_lambda = grove__calloc(k, sizeof *max_lambda, "HDBSCAN exemplars");
    size_t *first = grove__malloc(3 * k * sizeof *first, "HDBSCAN exemplars");
    size_t *stack = grove__malloc(k * sizeof *stack, "HDBSCAN exemplars");
    size_t *start = grove__calloc(k + 1, sizeof *start, "HDBSCAN exemplars");
    size_t *grouped = grove__malloc(n * sizeof *grouped, "HDBSCAN exemplars");
    m->exemplar_offsets = grove__malloc((m->clusters + 1) * sizeof *m->exemplar_offsets, "HDBSCAN exemplars");
    grove_status s =
        max_lambda && first && stack && start && grouped && m->exemplar_offsets ? GROVE_OK : GROVE_OUT_OF_MEMORY;
    if (s == GROVE_OK) {
        size_t *next = first + k, *last = next + k;
        for (size_t i = 0; i < k; i++) first[i] = last[i] = next[i] = k;
        for (size_t r = 0; r < t->rows; r++) {
            size_t p = t->parent[r] - n;
            if (t->lambda[r] > max_lambda[p]) max_lambda[p] = t->lambda[r];
            if (t->child[r] < n) continue;
            size_t c = t->child[r] - n;
            if (first[p] == k) first[p] = c;
            else next[last[p]] = c;
            last[p] = c;
        }
        /* Each cluster's points at its largest lambda, grouped by cluster
         * in row order (a counting sort; `last` becomes the cursor). */
        for (size_t r = 0; r < t->rows; r++)
            if (t->child[r] < n && t->lambda[r] == max_lambda[t->parent[r] - n]) start[t->parent[r] - n + 1]++;
        for (size_t i = 0; i < k; i++) start[i + 1] += start[i];
        for (size_t i = 0; i < k; i++) last[i] = start[i];
        for (size_t r = 0; r < t->rows; r++)
            if (t->child[r] < n && t->lambda[r] == max_lambda[t->parent[r] - n])
                grouped[last[t->parent[r] - n]++] = t->child[r];
    }
    /* Two passes over the labels: count, then copy. */
    for (int pass = 0; s == GROVE_OK && pass < 2; pass++) {
        size_t at = 0, *next = first + k;
        for (size_t c = 0; c < m->clusters; c++) {
            m->exemplar_offsets[c] = at;
            size_t depth = 0;
            stack[depth++] = m->prediction_cluster[c];
            while (depth) {
                size_t j = stack[--depth];
                if (first[j] == k) {
                    size_t count = start[j + 1] - start[j];
                    if (pass) memcpy(m->exemplar_rows + at, grouped + start[j], count * sizeof *grouped);
                    at += count;
                    continue;
                }
                /* Push the children reversed, so the first comes out first. */
                size_t base = depth;
                for (size_t ch = first[j]; ch < k; ch = next[ch]) stack[depth++] = ch;
                for (size_t a = base, b = depth - 1; a < b; a++, b--) {
                    size_t tmp = stack[a];
                    stack[a] = stack[b];
                    stack[b] = tmp;
                }
            }
        }
        m->exemplar_offsets[m->clusters] = at;
        if (!pass) {
            m->exemplar_rows = grove__malloc((at ? at : 1) * sizeof *m->exemplar_rows, "HDBSCAN exemplars");
            if (!m->exemplar_rows) s = GROVE_OUT_OF_MEMORY;
        }
    }
    grove__free(max_lambda);
    grove__free(first);
    grove__free(stack);
    grove__free(start);
    grove__free(grouped);
    return s;
}

double grove__scale_distance(double x, int exponent)
{
    if (!exponent || !(x > 0) || isinf(x)) return x;
    double y = ldexp(x, -exponent);
    return y > 0 ? y : DBL_TRUE_MIN;
}

/* The parameters in the model's units: distances times 2^-exponent,
 * lambdas times 2^exponent. */
static grove_hdbscan_params scaled_params(const grove_hdbscan_params *p, int exponent)
{
    grove_hdbscan_params q = *p;
    q.epsilon = grove__scale_distance(p->epsilon, exponent);
    q.epsilon_max = grove__scale_distance(p->epsilon_max, exponent);
    if (p->persistence > 0) q.persistence = fmax(ldexp(p->persistence, exponent), DBL_TRUE_MIN);
    return q;
}

grove_status grove__model_fit(grove_hdbscan_model *m, int64_t *edges, double *weights, const grove_points *points,
                              const grove_options *options)
{
    grove_hdbscan_params fit = scaled_params(&m->params, m->exponent);
    const grove_hdbscan_params *p = &fit;
    size_t n = m->n;
    m->edges = edges;
    m->weights = weights;
    /* The tree first: its scratch is the peak, so the per-point arrays
     * come after it. */
    grove_status s = condensed_tree(n, edges, weights, p, &m->tree);
    if (s != GROVE_OK) return s;
    m->labels = grove__malloc(n * sizeof *m->labels, "HDBSCAN labels");
    m->probabilities = grove__malloc(n * sizeof *m->probabilities, "HDBSCAN probabilities");
    m->outlier_scores = grove__malloc(n * sizeof *m->outlier_scores, "HDBSCAN outlier scores");
    m->point_row = grove__malloc(n * sizeof *m->point_row, "HDBSCAN condensed rows");
    if (!m->labels || !m->probabilities || !m->outlier_scores || !m->point_row) return GROVE_OUT_OF_MEMORY;
    size_t k = m->tree.clusters;
    uint8_t *selected = grove__malloc(k, "HDBSCAN selection");
    double *stability = grove__malloc(k * sizeof *stability, "HDBSCAN selection");
    s = selected && stability ? grove__select_clusters(&m->tree, p, selected, stability) : GROVE_OUT_OF_MEMORY;
    if (s == GROVE_OK)
        s = grove__point_results(&m->tree, selected, p, m->labels, m->probabilities, m->outlier_scores, &m->clusters);
    if (s == GROVE_OK) {
        size_t c = m->clusters;
        m->selected = grove__malloc((c ? c : 1) * sizeof *m->selected, "HDBSCAN clusters");
        m->persistence = grove__malloc((c ? c : 1) * sizeof *m->persistence, "HDBSCAN clusters");
        m->prediction_cluster = grove__malloc((c ? c : 1) * sizeof *m->prediction_cluster, "HDBSCAN clusters");
        if (!m->selected || !m->persistence || !m->prediction_cluster) s = GROVE_OUT_OF_MEMORY;
    }
    if (s == GROVE_OK) {
        for (size_t i = 0, j = 0; i < k; i++)
            if (selected[i]) m->selected[j++] = i;
        grove__persistence_scores(&m->tree, selected, stability, m->labels, m->clusters, m->persistence);
        for (size_t r = 0; r < m->tree.rows; r++)
            if (m->tree.child[r] < n) m->point_row[m->tree.child[r]] = r;
        prediction_clusters(m);
        s = exemplars(m);
    }
    grove__free(selected);
    grove__free(stability);
    if (s == GROVE_OK && points && p->prediction_data) s = grove__prediction_build(m, *points, options);
    return s;
}

/* A model of n <= 1 points: no tree; the one point, if any, is noise. */
static grove_status trivial_model(grove_hdbscan_model *m)
{
    m->labels = grove__malloc(sizeof *m->labels, "HDBSCAN labels");
    m->probabilities = grove__malloc(sizeof *m->probabilities, "HDBSCAN labels");
    m->outlier_scores = grove__malloc(sizeof *m->outlier_scores, "HDBSCAN labels");
    m->exemplar_offsets = grove__calloc(1, sizeof *m->exemplar_offsets, "HDBSCAN labels");
    if (!m->labels || !m->probabilities || !m->outlier_scores || !m->exemplar_offsets) return GROVE_OUT_OF_MEMORY;
    m->labels[0] = -1;
    m->probabilities[0] = m->outlier_scores[0] = 0;
    return GROVE_OK;
}

grove_status grove__model_new(size_t n, size_t d, const grove_hdbscan_params *p, grove_hdbscan_model **out)
{
    grove_hdbscan_model *m = grove__calloc(1, sizeof *m, "HDBSCAN model");
    if (!m) return GROVE_OUT_OF_MEMORY;
    m->params = *p;
    m->n = n;
    m->d = d;
    *out = m;
    return n < 2 ? trivial_model(m) : GROVE_OK;
}

typedef struct edge_ref {
    double w;
    int64_t u, v;
} edge_ref;

static int edge_cmp(const void *a, const void *b)
{
    const edge_ref *x = a, *y = b;
    if (x->w != y->w) return x->w < y->w ? -1 : 1;
    if (x->u != y->u) return x->u < y->u ? -1 : 1;
    return (x->v > y->v) - (x->v < y->v);
}

grove_status grove__mst_sort(size_t n, const int64_t *edges, const double *weights, int64_t *sorted_edges,
                             double *sorted_weights)
{
    size_t m = n - 1;
    edge_ref *sorted = grove__malloc(m * sizeof *sorted, "HDBSCAN edges");
    if (!sorted) return GROVE_OUT_OF_MEMORY;
    for (size_t i = 0; i < m; i++) {
        int64_t u = edges[2 * i], v = edges[2 * i + 1];
        if (u < 0 || v < 0 || (uint64_t)u >= n || (uint64_t)v >= n || u == v || !(weights[i] >= 0) ||
            !isfinite(weights[i])) {
            grove__free(sorted);
            return grove__fail(GROVE_INVALID_ARGUMENT,
                               "HDBSCAN: edge %zu (%lld, %lld, weight %g) needs two distinct rows below n = %zu "
                               "and a finite weight >= 0",
                               i, (long long)u, (long long)v, weights[i], n);
        }
        sorted[i] = (edge_ref){weights[i], u < v ? u : v, u < v ? v : u};
    }
    qsort(sorted, m, sizeof *sorted, edge_cmp);
    for (size_t i = 0; i < m; i++) {
        sorted_edges[2 * i] = sorted[i].u;
        sorted_edges[2 * i + 1] = sorted[i].v;
        sorted_weights[i] = sorted[i].w;
    }
    grove__free(sorted);
    return GROVE_OK;
}

size_t grove_hdbscan_model_n(const grove_hdbscan_model *m)
{
    return m ? m->n : 0;
}

size_t grove_hdbscan_model_d(const grove_hdbscan_model *m)
{
    return m ? m->d : 0;
}

size_t grove_hdbscan_model_clusters(const grove_hdbscan_model *m)
{
    return m ? m->clusters : 0;
}

size_t grove_hdbscan_model_condensed_rows(const grove_hdbscan_model *m)
{
    return m ? m->tree.rows : 0;
}

size_t grove_hdbscan_model_exemplar_count(const grove_hdbscan_model *m)
{
    return m ? m->exemplar_offsets[m->clusters] : 0;
}

static grove_status need_model(const grove_hdbscan_model *m, const char *who)
{
    return m ? GROVE_OK : grove__fail(GROVE_INVALID_ARGUMENT, "%s: model is NULL", who);
}

grove_status grove_hdbscan_model_params(const grove_hdbscan_model *m, grove_hdbscan_params *params)
{
    grove__clear_error();
    grove_status s = need_model(m, "HDBSCAN model params");
    if (s != GROVE_OK) return s;
    if (!params) return grove__fail(GROVE_INVALID_ARGUMENT, "HDBSCAN model params: params is NULL");
    *params = m->params;
    return GROVE_OK;
}

grove_status grove_hdbscan_model_labels(const grove_hdbscan_model *m, int64_t *labels, double *probabilities,
                                        double *outlier_scores)
{
    grove__clear_error();
    grove_status s = need_model(m, "HDBSCAN model labels");
    if (s != GROVE_OK) return s;
    if (labels) memcpy(labels, m->labels, m->n * sizeof *labels);
    if (probabilities) memcpy(probabilities, m->probabilities, m->n * sizeof *probabilities);
    if (outlier_scores) memcpy(outlier_scores, m->outlier_scores, m->n * sizeof *outlier_scores);
    return GROVE_OK;
}

/* Distances back to the caller's units: times 2^exponent, refused (naming
 * the first) when one exceeds the largest double. */
static grove_status unscale(const grove_hdbscan_model *m, double *values, size_t count, size_t stride,
                            const char *who)
{
    if (!m->exponent) return GROVE_OK;
    for (size_t i = 0; i < count; i++) {
        values[i * stride] = ldexp(values[i * stride], m->exponent);
        if (isinf(values[i * stride]))
            return grove__fail(GROVE_INVALID_ARGUMENT, "%s: distance %zu exceeds the largest double (%.17g)", who, i,
                               DBL_MAX);
    }
    return GROVE_OK;
}

grove_status grove_hdbscan_model_mst(const grove_hdbscan_model *m, int64_t *edges, double *weights)
{
    grove__clear_error();
    grove_status s = need_model(m, "HDBSCAN model MST");
    if (s != GROVE_OK || m->n < 2) return s;
    if (edges) memcpy(edges, m->edges, 2 * (m->n - 1) * sizeof *edges);
    if (weights) memcpy(weights, m->weights, (m->n - 1) * sizeof *weights);
    return weights ? unscale(m, weights, m->n - 1, 1, "HDBSCAN model MST") : GROVE_OK;
}

grove_status grove_hdbscan_model_single_linkage(const grove_hdbscan_model *m, double *tree)
{
    grove__clear_error();
    grove_status s = need_model(m, "HDBSCAN single linkage");
    if (s != GROVE_OK || m->n < 2) return s;
    if (!tree) return grove__fail(GROVE_INVALID_ARGUMENT, "HDBSCAN single linkage: tree is NULL");
    grove__linkage l;
    s = grove__linkage_build(m->n, m->edges, m->weights, &l);
    if (s != GROVE_OK) return s;
    for (size_t i = 0; i + 1 < m->n; i++) {
        tree[4 * i] = (double)l.left[i];
        tree[4 * i + 1] = (double)l.right[i];
        tree[4 * i + 2] = l.delta[i];
        tree[4 * i + 3] = (double)l.size[i];
    }
    grove__linkage_free(&l);
    return unscale(m, tree + 2, m->n - 1, 4, "HDBSCAN single linkage");
}

grove_status grove_hdbscan_model_condensed_tree(const grove_hdbscan_model *m, int64_t *parent, int64_t *child,
                                                double *lambda_val, int64_t *child_size)
{
    grove__clear_error();
    grove_status s = need_model(m, "HDBSCAN condensed tree");
    if (s != GROVE_OK) return s;
    const grove__condensed *t = &m->tree;
    for (size_t r = 0; r < t->rows; r++) {
        if (parent) parent[r] = (int64_t)t->parent[r];
        if (child) child[r] = (int64_t)t->child[r];
        if (lambda_val) lambda_val[r] = m->exponent ? ldexp(t->lambda[r], -m->exponent) : t->lambda[r];
        if (child_size) child_size[r] = (int64_t)t->child_size[r];
    }
    return GROVE_OK;
}

grove_status grove_hdbscan_model_selected_clusters(const grove_hdbscan_model *m, int64_t *selected,
                                                   int64_t *prediction_clusters)
{
    grove__clear_error();
    grove_status s = need_model(m, "HDBSCAN selected clusters");
    if (s != GROVE_OK) return s;
    for (size_t c = 0; c < m->clusters; c++) {
        if (selected) selected[c] = (int64_t)(m->n + m->selected[c]);
        if (prediction_clusters) prediction_clusters[c] = (int64_t)(m->n + m->prediction_cluster[c]);
    }
    return GROVE_OK;
}

grove_status grove_hdbscan_model_persistence(const grove_hdbscan_model *m, double *persistence)
{
    grove__clear_error();
    grove_status s = need_model(m, "HDBSCAN persistence");
    if (s != GROVE_OK) return s;
    if (m->clusters && !persistence)
        return grove__fail(GROVE_INVALID_ARGUMENT, "HDBSCAN persistence: persistence is NULL");
    if (m->clusters) memcpy(persistence, m->persistence, m->clusters * sizeof *persistence);
    return GROVE_OK;
}

grove_status grove_hdbscan_model_exemplars(const grove_hdbscan_model *m, int64_t *offsets, int64_t *rows)
{
    grove__clear_error();
    grove_status s = need_model(m, "HDBSCAN exemplars");
    if (s != GROVE_OK) return s;
    for (size_t c = 0; offsets && c <= m->clusters; c++) offsets[c] = (int64_t)m->exemplar_offsets[c];
    for (size_t i = 0; rows && i < m->exemplar_offsets[m->clusters]; i++) rows[i] = (int64_t)m->exemplar_rows[i];
    return GROVE_OK;
}
