/* Internals of HDBSCAN*: the single-linkage hierarchy and its tie-merged
 * form (linkage.c), the condensed tree (condense.c), persistence
 * simplification (simplify.c), cluster selection (select.c), per-point
 * results (labels.c) and the fitted model (model.c), following the
 * `hdbscan` Python library step by step so results agree with it. */
#ifndef GROVE_HDBSCAN_INTERNAL_H
#define GROVE_HDBSCAN_INTERNAL_H

#include "internal.h"

#include <string.h>

/* scipy-style hierarchy of n points: merge i joins nodes left[i] and
 * right[i] (ids < n are points, n + j is merge j) at distance delta[i],
 * giving size[i] points. */
typedef struct grove__linkage {
    size_t n;
    size_t *left, *right, *size;
    double *delta;
} grove__linkage;

/* A hierarchy whose merges may join more than two nodes: merge j joins
 * kids[first[j] .. first[j + 1]) (ids < n are points, n + j' merge j') at
 * distance delta[j] into size[j] points; children come before their parent
 * and the root is the last merge. A binary one keeps the linkage's arrays:
 * first and kids are NULL, the children are left[j] and right[j]. */
typedef struct grove__dendrogram {
    size_t n, nodes;
    size_t *first, *kids, *left, *right, *size;
    double *delta;
} grove__dendrogram;

static inline size_t grove__kid_count(const grove__dendrogram *h, size_t j)
{
    return h->first ? h->first[j + 1] - h->first[j] : 2;
}

/* Child i of merge j. */
static inline size_t grove__kid(const grove__dendrogram *h, size_t j, size_t i)
{
    return h->first ? h->kids[h->first[j] + i] : i ? h->right[j] : h->left[j];
}

/* The condensed tree: rows (parent, child, lambda = 1 / distance, child
 * size); ids < n are points, clusters are n (the root) .. n + clusters - 1,
 * numbered in breadth-first order so a parent's id is below its children's. */
typedef struct grove__condensed {
    size_t n, rows, clusters;
    size_t *parent, *child, *child_size;
    double *lambda;
} grove__condensed;

/* Single linkage from n - 1 edges sorted by weight (union-find in order). */
grove_status grove__linkage_build(size_t n, const int64_t *edges, const double *weights, grove__linkage *out);
void grove__linkage_free(grove__linkage *l);

/* The hierarchy the condensed tree is built from: the linkage as it is
 * (GROVE_HDBSCAN_TIES_ORDERED), or with every merge whose parent merges at
 * the same distance folded into that parent (..._SIMULTANEOUS), so each
 * node is a component of the graph of edges <= its distance and its
 * children are the components of the edges below it. Consumes the
 * linkage (its arrays move into the result or are freed). */
grove_status grove__dendrogram_build(grove__linkage *l, grove_hdbscan_ties ties, grove__dendrogram *out);
void grove__dendrogram_free(grove__dendrogram *h);

grove_status grove__condense(const grove__dendrogram *h, size_t min_cluster_size, grove__condensed *out);
void grove__condensed_free(grove__condensed *c);
/* Give back the capacity beyond c->rows. */
void grove__condensed_shrink(grove__condensed *c);

/* Where the library rounds lambdas to float, grove rounds them times
 * 2^grove__float_scale(c): 0 (as the library) unless some lambda of c lies
 * outside float's normal range (distances beyond about 1e38 or below
 * 1e-38, or data scaled for their range), else the power of two that
 * brings the largest to [0.5, 1), so lambdas keep float's precision
 * instead of turning 0 or infinite. */
int grove__float_scale(const grove__condensed *c);

/* cluster_selection_persistence: the library's simplify_hierarchy, in
 * place (rows removed, clusters renumbered). */
grove_status grove__simplify(grove__condensed *c, double persistence);

/* selected[i] = 1 for the selected clusters (index i = id - n, clusters
 * entries); stability[i] is cluster i's stability as the library leaves it
 * after excess of mass (a cluster not kept takes its children's sum). */
grove_status grove__select_clusters(const grove__condensed *c, const grove_hdbscan_params *p, uint8_t *selected,
                                    double *stability);

/* Labels, probabilities and GLOSH scores per point (either of the last two
 * may be NULL) and the number of clusters. */
grove_status grove__point_results(const grove__condensed *c, const uint8_t *selected, const grove_hdbscan_params *p,
                                  int64_t *labels, double *probabilities, double *outlier_scores, size_t *clusters);

/* The library's cluster_persistence_ (get_stability_scores): per label. */
void grove__persistence_scores(const grove__condensed *c, const uint8_t *selected, const double *stability,
                               const int64_t *labels, size_t clusters, double *out);

/* Sum of n doubles in NumPy's pairwise order (np.sum of a contiguous
 * array), so row normalisations round as the library's do. */
double grove__pairwise_sum(const double *x, size_t n);

struct grove__prediction;

/* The fitted model (grove.h). Everything is computed in
 * grove__model_fit; the handle is immutable afterwards. */
struct grove_hdbscan_model {
    grove_hdbscan_params params; /* as given, min_samples resolved to K */
    size_t n, d;                 /* d = 0 for a model made from an MST */
    /* Range: weights, distances and core distances are kept in the units
     * the MST was computed in, the true ones times 2^-exponent, lambdas in
     * their inverse; the accessors convert (0 but for data whose squared
     * distances would overflow or underflow, internal.h). */
    int exponent;
    int64_t *edges;              /* the MST, sorted by (weight, u, v): n - 1 rows (u, v) */
    double *weights;
    grove__condensed tree;       /* after persistence simplification */
    size_t clusters;
    size_t *selected;            /* per label: cluster index (id - n) */
    int64_t *labels;
    double *probabilities, *outlier_scores, *persistence;
    size_t *point_row;           /* per point: its row in the condensed tree */
    /* What the library's prediction data holds without the points: the
     * clusters its prediction code uses (sorted(condensed_tree_
     * ._select_clusters()), ascending ids) and their exemplars as CSR. */
    size_t *prediction_cluster;
    size_t *exemplar_offsets, *exemplar_rows;
    struct grove__prediction *prediction; /* NULL unless params.prediction_data */
};

/* n - 1 edges of n >= 2 points checked (distinct rows below n, finite
 * weights >= 0) and sorted by (weight, u, v) with u < v into the outputs
 * (which may be the inputs). */
grove_status grove__mst_sort(size_t n, const int64_t *edges, const double *weights, int64_t *sorted_edges,
                             double *sorted_weights);

/* A distance x > 0 in the units of a model with this exponent (times
 * 2^-exponent, kept above 0 so that it does not turn its option off). */
double grove__scale_distance(double x, int exponent);

/* A new model of n points in d dimensions with resolved parameters; for
 * n <= 1 it is complete (the one point is noise). */
grove_status grove__model_new(size_t n, size_t d, const grove_hdbscan_params *p, grove_hdbscan_model **out);

/* Fit a model from an MST of n >= 2 points sorted by (weight, u, v), in
 * the units of m->exponent; the model takes ownership of edges and weights
 * (grove__malloc'd) whatever happens. With points (prediction data),
 * d > 0. */
grove_status grove__model_fit(grove_hdbscan_model *m, int64_t *edges, double *weights, const grove_points *points,
                              const grove_options *options);

/* Prediction data (predict_data.c) and its release. */
grove_status grove__prediction_build(grove_hdbscan_model *m, grove_points points, const grove_options *options);
void grove__prediction_free(struct grove__prediction *pd);

#endif
