/* A reference HDBSCAN* for the tests, from the definition (Campello et
 * al. 2015) without an MST: the mutual-reachability graph of all pairs,
 * its connected components below every distinct weight, top down, the
 * condensed tree from those (a component splits at one lambda into all its
 * parts, a part of at least min_cluster_size points being a cluster),
 * stabilities, excess-of-mass or leaf selection, labels, probabilities and
 * GLOSH scores. At most REF_MAXN points (sets are bit masks). Where the
 * graph has no equal weights this is also the ordered hierarchy, and the
 * clusters are also numbered as the peers number them (ref_tree.number). */
#ifndef GROVE_TEST_HDBSCAN_REF_H
#define GROVE_TEST_HDBSCAN_REF_H

#include "grove.h"

#define REF_MAXN 64

typedef struct ref_tree {
    size_t n, clusters;        /* clusters in order of birth; 0 is the root */
    uint64_t members[REF_MAXN]; /* per cluster while alive */
    uint64_t at_birth[REF_MAXN]; /* per cluster: its points when born */
    size_t parent[REF_MAXN];    /* parent cluster (root: 0) */
    double birth[REF_MAXN];     /* lambda of birth (root: 0) */
    size_t size[REF_MAXN];      /* points at birth */
    double stability[REF_MAXN];
    double death[REF_MAXN];     /* largest lambda of its rows */
    size_t point_cluster[REF_MAXN]; /* the cluster each point leaves */
    double point_lambda[REF_MAXN];  /* and when */
    /* The peers' numbering (scikit-learn, the hdbscan library): the
     * single-linkage tree's merge of two parts puts on the left the part
     * holding the point Prim's algorithm from point 0 adds first, and the
     * condensed tree numbers its clusters breadth first over that binary
     * tree, left before right: in the order of (depth, path), the path's
     * bits the sides (left 0) from the root. Meaningful without equal
     * weights, where each level splits one part in two. */
    size_t depth[REF_MAXN];     /* per cluster: of its node at birth */
    uint64_t path[REF_MAXN];
    size_t number[REF_MAXN];    /* per cluster: its id - n in the peers' condensed tree */
    int near_tie;               /* set by ref_results: an excess-of-mass comparison within rounding */
} ref_tree;

/* Squared core distances: the K-th smallest squared distance, itself
 * included (summed over axes in order, in double). */
void ref_core_distances(const double *x, size_t n, size_t d, size_t k, double *core2);
/* max(core(a), core(b), |a - b|) as grove computes it: sqrt of the
 * largest squared value. */
double ref_mr_weight(const double *x, size_t d, const double *core2, size_t a, size_t b);
/* The n x n matrix of mutual-reachability weights (malloc'd). */
double *ref_weights(const double *x, size_t n, size_t d, size_t k);
void ref_tree_build(const double *w, size_t n, size_t mcs, ref_tree *t);
/* selected (clusters entries, may be NULL), labels (0.. in the peers'
 * order of the selected: ascending number), probabilities, GLOSH scores. */
void ref_results(ref_tree *t, grove_hdbscan_selection sel, uint8_t *selected, int64_t *labels, double *prob,
                 double *score);
/* The same partition up to renaming, and the same noise. */
int ref_same_partition(const int64_t *a, const int64_t *b, size_t n);

#endif
