/* Internals of HDBSCAN* prediction: what the `hdbscan` library's
 * PredictionData holds (predict_data.c), the pieces its soft clustering
 * shares (membership.c), and the query drivers (predict.c, soft.c). */
#ifndef GROVE_PREDICT_INTERNAL_H
#define GROVE_PREDICT_INTERNAL_H

#include "../index/index.h"
#include "hdbscan_internal.h"

/* Exemplars of one label: their coordinates, and an index over them when
 * they are many (the nearest is then found by search, with the same
 * squared distances as the scan). */
typedef struct grove__exemplar_set {
    const double *x; /* count x d, row-major */
    size_t count;
    int indexed;
    grove__tree tree;
} grove__exemplar_set;

typedef struct grove__prediction {
    grove__tree tree;      /* the training points in float64, times 2^-exponent */
    int exponent;          /* the model's (hdbscan_internal.h): queries are scaled alike */
    double small_lambda;   /* the library's 1e-8 added to lambdas, in the model's units */
    int float_scale;       /* grove__float_scale of the tree */
    double *core;          /* per row: distance to its (K - 1)-th nearest point, itself included */
    size_t m;              /* the library's min_samples, K - 1 */
    size_t neighbours;     /* searched per query: 2 m, at least 1 */
    size_t k;              /* condensed-tree clusters; index 0 is the root */
    size_t *up;            /* parent cluster (root: 0) */
    double *birth;         /* the lambda of the cluster's own row (root: 0) */
    double *max_lambda;    /* leaf_max_lambdas: largest lambda of the rows under the cluster */
    double *subtree_max;   /* largest lambda in the cluster's subtree */
    int64_t *label;        /* cluster_map: the label at or above the cluster, else -1 */
    double *label_max;     /* max_lambdas: the labelled cluster's max_lambda */
    uint32_t *depth;       /* 0 at the root */
    uint32_t *lift;        /* lift[j k + c]: the 2^j-th ancestor of c (the root's is the root) */
    size_t levels;
    size_t clusters;       /* labels */
    const size_t *prediction_cluster;
    double *exemplar_x;    /* all exemplars' coordinates, in the model's exemplar order */
    grove__exemplar_set *sets; /* per label */
    size_t scratch_bytes;  /* per thread, for grove__exemplar_distances and the neighbour search */
} grove__prediction;

/* The library's merge_height(a, b, point_lambda): point_lambda when one
 * cluster is at or above the other, else the birth lambda of the smaller
 * of the two children of their lowest common ancestor. */
double grove__merge_height(const grove__prediction *pd, size_t a, size_t b, double point_lambda);

/* a / b for two lambdas, 1 where both are infinite. A cluster of exact
 * duplicates has infinite lambdas (1 / 0), and where the library's soft
 * clustering divides such a lambda by the same one (a point's by its
 * cluster's largest) it gets NaN: the quotient's limit, both lambdas
 * growing together, is 1. */
static inline double grove__lambda_ratio(double a, double b)
{
    return isinf(a) && isinf(b) ? 1 : a / b;
}

/* dist[c] = distance from x (d doubles) to label c's nearest exemplar, then
 * turned in place into the library's dist_membership_vector (1 / distance,
 * DBL_MAX / clusters for 0, divided by their sum in order). scratch:
 * pd->scratch_bytes. */
void grove__distance_vector(const grove__prediction *pd, const double *x, double *dist, void *scratch);

/* The threads for nq queries, and the per-thread driver state. */
int grove__predict_threads(const grove_options *options, size_t nq);

/* The model's prediction data, or an error naming the caller. */
grove_status grove__prediction_of(const grove_hdbscan_model *m, const char *who, const grove__prediction **out);

#endif
