/* grove_hdbscan and grove_hdbscan_from_mst: the mutual-reachability MST,
 * then single linkage, the condensed tree and cluster selection
 * (hdbscan_internal.h), then labels, membership probabilities and GLOSH
 * outlier scores as the `hdbscan` library computes them. */
#include "hdbscan_internal.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>

void grove_hdbscan_params_init(grove_hdbscan_params *params)
{
    if (!params) return;
    params->min_cluster_size = 5;
    params->min_samples = 0;
    params->selection = GROVE_HDBSCAN_EOM;
    params->epsilon = 0;
    params->allow_single_cluster = 0;
}

static grove_status check_params(const grove_hdbscan_params *p)
{
    if (p->min_cluster_size < 2)
        return grove__fail(GROVE_INVALID_ARGUMENT, "HDBSCAN: min_cluster_size must be at least 2, got %zu",
                           p->min_cluster_size);
    if (p->selection != GROVE_HDBSCAN_EOM && p->selection != GROVE_HDBSCAN_LEAF)
        return grove__fail(GROVE_INVALID_ARGUMENT, "HDBSCAN: unknown selection method %d", (int)p->selection);
    if (!(p->epsilon >= 0) || !isfinite(p->epsilon))
        return grove__fail(GROVE_INVALID_ARGUMENT, "HDBSCAN: epsilon must be finite and >= 0, got %g", p->epsilon);
    return GROVE_OK;
}

/* Per point: labels, probabilities, outlier scores from the condensed tree
 * and the selected clusters. */
static grove_status point_results(const grove__condensed *c, const uint8_t *selected,
                                  const grove_hdbscan_params *p, int64_t *labels, double *probabilities,
                                  double *outlier_scores, size_t *clusters)
{
    size_t n = c->n, k = c->clusters;
    size_t *up = grove__malloc(2 * k * sizeof *up, "HDBSCAN labels");
    int64_t *label_of = grove__malloc(k * sizeof *label_of, "HDBSCAN labels");
    double *death = grove__calloc(2 * k, sizeof *death, "HDBSCAN labels");
    if (!up || !label_of || !death) {
        grove__free(up);
        grove__free(label_of);
        grove__free(death);
        return GROVE_OUT_OF_MEMORY;
    }
    double *subtree_death = death + k;
    size_t *owner = up + k; /* the selected cluster at or above each cluster */
    up[0] = 0;
    for (size_t r = 0; r < c->rows; r++) {
        size_t parent = c->parent[r] - n;
        if (c->child[r] >= n) up[c->child[r] - n] = parent;
        if (c->lambda[r] > death[parent]) death[parent] = c->lambda[r];
    }
    /* Each cluster's label: its own if selected, else its nearest selected
     * ancestor's (parents have smaller ids), else noise; owner follows the
     * same rule (meaningful where the label is >= 0). */
    int64_t next = 0;
    for (size_t i = 0; i < k; i++) {
        label_of[i] = selected[i] ? next++ : i ? label_of[up[i]] : -1;
        owner[i] = selected[i] || !i ? i : owner[up[i]];
        subtree_death[i] = death[i];
    }
    for (size_t i = k; i-- > 1;)
        if (subtree_death[i] > subtree_death[up[i]]) subtree_death[up[i]] = subtree_death[i];
    if (clusters) *clusters = (size_t)next;
    /* The root as the single cluster keeps only its points that stay to
     * the end (or, with epsilon, that leave below it). */
    int root_only = selected[0];
    for (size_t r = 0; r < c->rows; r++) {
        size_t pt = c->child[r];
        if (pt >= n) continue;
        size_t parent = c->parent[r] - n;
        double lambda = c->lambda[r];
        int64_t label = label_of[parent];
        if (root_only && label >= 0) {
            int stays = p->epsilon != 0 ? lambda >= 1.0 / p->epsilon : lambda >= death[0];
            if (!stays) label = -1;
        }
        labels[pt] = label;
        if (probabilities) {
            double prob = 0;
            if (label >= 0) {
                double max_lambda = death[owner[parent]];
                if (max_lambda == 0 || !isfinite(lambda)) prob = 1;
                else prob = (lambda < max_lambda ? lambda : max_lambda) / max_lambda;
            }
            probabilities[pt] = prob;
        }
        if (outlier_scores) {
            double top = subtree_death[parent], score = 0;
            /* An infinite top (duplicate points) makes the library's
             * (top - lambda) / top NaN; its limit is 1. */
            if (top != 0 && isfinite(lambda)) score = isfinite(top) ? (top - lambda) / top : 1;
            outlier_scores[pt] = score;
        }
    }
    grove__free(up);
    grove__free(label_of);
    grove__free(death);
    return GROVE_OK;
}

/* Clustering from n - 1 edges already sorted by weight. */
static grove_status from_sorted_mst(size_t n, const int64_t *edges, const double *weights,
                                    const grove_hdbscan_params *p, int64_t *labels, double *probabilities,
                                    double *outlier_scores, size_t *clusters)
{
    grove__linkage l;
    grove__condensed c;
    grove_status s = grove__linkage_build(n, edges, weights, &l);
    if (s != GROVE_OK) return s;
    s = grove__condense(&l, p->min_cluster_size, &c);
    grove__linkage_free(&l);
    if (s != GROVE_OK) return s;
    uint8_t *selected = grove__malloc(c.clusters, "HDBSCAN selection");
    s = selected ? grove__select_clusters(&c, p->selection, p->epsilon, p->allow_single_cluster, selected)
                 : GROVE_OUT_OF_MEMORY;
    if (s == GROVE_OK) s = point_results(&c, selected, p, labels, probabilities, outlier_scores, clusters);
    grove__free(selected);
    grove__condensed_free(&c);
    return s;
}

/* Results for n <= 1: no clusters, the one point (if any) is noise. */
static void trivial(size_t n, int64_t *labels, double *probabilities, double *outlier_scores, size_t *clusters)
{
    if (clusters) *clusters = 0;
    if (n == 1) {
        labels[0] = -1;
        if (probabilities) probabilities[0] = 0;
        if (outlier_scores) outlier_scores[0] = 0;
    }
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

grove_status grove_hdbscan_from_mst(size_t n, const int64_t *edges, const double *weights,
                                    const grove_hdbscan_params *params, int64_t *labels, double *probabilities,
                                    double *outlier_scores, size_t *clusters)
{
    grove__clear_error();
    grove_hdbscan_params p;
    grove_hdbscan_params_init(&p);
    if (params) p = *params;
    grove_status s = check_params(&p);
    if (s != GROVE_OK) return s;
    if (n > 0 && !labels) return grove__fail(GROVE_INVALID_ARGUMENT, "HDBSCAN: labels is NULL");
    if (n < 2) {
        trivial(n, labels, probabilities, outlier_scores, clusters);
        return GROVE_OK;
    }
    if (!edges || !weights) return grove__fail(GROVE_INVALID_ARGUMENT, "HDBSCAN: edges or weights is NULL");
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
    int64_t *e = grove__malloc(2 * m * sizeof *e, "HDBSCAN edges");
    double *w = grove__malloc(m * sizeof *w, "HDBSCAN edges");
    if (e && w) {
        for (size_t i = 0; i < m; i++) e[2 * i] = sorted[i].u, e[2 * i + 1] = sorted[i].v, w[i] = sorted[i].w;
        s = from_sorted_mst(n, e, w, &p, labels, probabilities, outlier_scores, clusters);
    } else {
        s = GROVE_OUT_OF_MEMORY;
    }
    grove__free(sorted);
    grove__free(e);
    grove__free(w);
    return s;
}

grove_status grove_hdbscan(grove_points points, const grove_hdbscan_params *params, int64_t *labels,
                           double *probabilities, double *outlier_scores, size_t *clusters,
                           const grove_options *options)
{
    grove__clear_error();
    grove_hdbscan_params p;
    grove_hdbscan_params_init(&p);
    if (params) p = *params;
    grove_status s = check_params(&p);
    double magnitude = 0;
    if (s == GROVE_OK) s = grove__points_validate_range(points, grove__options(options).threads, &magnitude);
    if (s != GROVE_OK) return s;
    size_t n = points.n;
    if (n > 0 && !labels) return grove__fail(GROVE_INVALID_ARGUMENT, "HDBSCAN: labels is NULL");
    grove_emst_params ep;
    grove_emst_params_init(&ep);
    ep.min_samples = p.min_samples ? p.min_samples : p.min_cluster_size;
    if (n > 0 && ep.min_samples > n)
        return grove__fail(GROVE_INVALID_ARGUMENT, "HDBSCAN: min_samples = %zu exceeds the number of points n = %zu%s",
                           ep.min_samples, n, p.min_samples ? "" : " (it defaults to min_cluster_size)");
    if (n < 2) {
        trivial(n, labels, probabilities, outlier_scores, clusters);
        return GROVE_OK;
    }
    size_t m = n - 1, bytes;
    if (!grove__mul_size(m, 2 * sizeof(int64_t), &bytes))
        return grove__fail(GROVE_TOO_LARGE, "HDBSCAN: n = %zu overflows the address space", n);
    int64_t *e = grove__malloc(bytes, "HDBSCAN MST edges");
    double *w = grove__malloc(m * sizeof *w, "HDBSCAN MST weights");
    int exponent = 0;
    s = e && w ? grove__emst_scaled(points, magnitude, ep.min_samples, e, w, &exponent, options) : GROVE_OUT_OF_MEMORY;
    if (s == GROVE_OK) {
        grove__progress(options, "hdbscan", 1.0);
        /* The clustering is the same in the scaled units, with epsilon
         * scaled alike (kept positive: 0 would turn it off). */
        if (exponent && p.epsilon > 0) {
            p.epsilon = ldexp(p.epsilon, -exponent);
            if (p.epsilon == 0) p.epsilon = DBL_TRUE_MIN;
        }
        s = from_sorted_mst(n, e, w, &p, labels, probabilities, outlier_scores, clusters);
    }
    grove__free(e);
    grove__free(w);
    return s;
}
