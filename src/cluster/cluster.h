/* DBSCAN's and friends-of-friends' public calls on one process: the local
 * column of the dispatch layer (src/dispatch/cluster.c), each with its
 * public call's type (__typeof__) and contract; and what every version of
 * each call does first, which their distributed versions (src/mpi) share. */
#ifndef GROVE_CLUSTER_H
#define GROVE_CLUSTER_H

#include "internal.h"

__typeof__(grove_dbscan) grove__dbscan_local;
__typeof__(grove_fof) grove__fof_local;

/* grove_dbscan's start: the error cleared, counts zeroed, the arguments
 * checked (params, labels, finite weights), a bad weight named by its row
 * in the whole input (this part's row 0 is row `first`). */
grove_status grove__dbscan_begin(grove_points data, const grove_dbscan_params *params, const int64_t *labels,
                                 grove_dbscan_counts *counts, size_t first);
/* grove_fof's start: the error cleared, groups and catalogue zeroed, the
 * arguments checked, a bad value named by its row in the whole input
 * (this part's row 0 is row `first`). */
grove_status grove__fof_begin(grove_points points, const double *mass, const double *velocity,
                              const grove_fof_params *params, const int64_t *group, size_t *groups,
                              grove_fof_catalogue *catalogue, size_t first, int threads);

#endif
