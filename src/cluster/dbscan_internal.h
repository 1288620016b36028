/* DBSCAN's steps on one index (internal to src/cluster and the
 * distributed DBSCAN of src/mpi, which runs them on a rank's points and
 * the ghosts around them): core points, their components, border points.
 * Rows are the index's input rows; none of the steps holds a
 * neighbourhood. */
#ifndef GROVE_DBSCAN_INTERNAL_H
#define GROVE_DBSCAN_INTERNAL_H

#include "internal.h"
#include "union_find.h"

/* Working memory a DBSCAN of n points needs beside its index and its
 * caller's arrays (core flags included when own_core: the caller gives
 * none): refused with GROVE_OVER_BUDGET past options->memory_budget. */
grove_status grove__dbscan_budget(size_t n, bool weighted, bool own_core, const grove_options *options);

/* Step 1: core[i] = 1 where row i's neighbourhood (within eps, itself
 * included) holds min_samples points, or with weight (weight[i] per row,
 * or NULL) a weight that, summed exactly and rounded once to a double, is
 * at least min_samples: the same decision for any order of the sum, hence
 * for any index, thread or rank count. `scratch`: n entries. */
grove_status grove__dbscan_core(const grove_index *ix, double eps, size_t min_samples, const double *weight,
                                uint8_t *core, int64_t *scratch, const grove_options *options);

/* The weighted core test of step 1 (dbscan_weights.c). */
grove_status grove__dbscan_weighed_core(const grove_index *ix, double eps, size_t min_samples, const double *weight,
                                        uint8_t *core, const grove_options *options);

/* Step 2: uf (initialised here, n elements) joins the core rows within eps
 * of each other and is flattened: parent[i] is the smallest row of core
 * row i's component. */
grove_status grove__dbscan_components(const grove_index *ix, double eps, const uint8_t *core, grove__uf *uf,
                                      const grove_options *options);

/* Step 3, with the core rows' cluster numbers in labels: every row q with
 * border[q] != 0 (non-core rows) gets the smallest number among its core
 * neighbours, or -1 (noise) with none. */
grove_status grove__dbscan_borders(const grove_index *ix, double eps, const uint8_t *core, const uint8_t *border,
                                   int64_t *labels, const grove_options *options);

#endif
