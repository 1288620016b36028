/* Internals of HDBSCAN*: the single-linkage hierarchy (linkage.c), the
 * condensed tree (condense.c) and cluster selection (select.c), following
 * the `hdbscan` Python library step by step so results agree with it. */
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

/* The condensed tree: rows (parent, child, lambda = 1 / distance, child
 * size); ids < n are points, clusters are n (the root) .. n + clusters - 1,
 * numbered in breadth-first order so a parent's id is below its children's. */
typedef struct grove__condensed {
    size_t n, rows, clusters;
    size_t *parent, *child, *child_size;
    double *lambda;
} grove__condensed;

/* grove_emst of validated points (n >= 2, 1 <= min_samples <= n, range
 * `magnitude` from grove__points_validate_range) with the weights left in
 * the units of the scaled arithmetic: the true weights are weights times
 * 2^*exponent (emst.c). */
grove_status grove__emst_scaled(grove_points points, double magnitude, size_t min_samples, int64_t *edges,
                                double *weights, int *exponent, const grove_options *options);

/* Single linkage from n - 1 edges sorted by weight (union-find in order). */
grove_status grove__linkage_build(size_t n, const int64_t *edges, const double *weights, grove__linkage *out);
void grove__linkage_free(grove__linkage *l);

grove_status grove__condense(const grove__linkage *l, size_t min_cluster_size, grove__condensed *out);
void grove__condensed_free(grove__condensed *c);

/* selected[c - n] = 1 for the selected clusters (clusters entries). */
grove_status grove__select_clusters(const grove__condensed *c, grove_hdbscan_selection selection, double epsilon,
                                    int allow_single_cluster, uint8_t *selected);

#endif
