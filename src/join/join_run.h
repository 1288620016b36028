/* The join's passes (internal to src/join): one description of a pass over
 * the query groups, run by grove__join_run for count and fill alike. */
#ifndef GROVE_JOIN_RUN_H
#define GROVE_JOIN_RUN_H

#include "join_internal.h"

typedef struct join_pass {
    double eps2, prune2;     /* see grove__join_eps2 / grove__join_prune2 */
    int exclude_self;
    int fill;                /* 0: count into counts; 1: write the CSR slices */
    size_t row0, row1;       /* the query rows this pass handles */
    int64_t *counts;         /* count: counts[row - row0] */
    const int64_t *offsets;  /* fill: query row's slice is [offsets[row - row0],
                                offsets[row - row0 + 1]) minus base */
    int64_t base;
    int64_t *indices;
    double *distances;       /* or NULL */
} join_pass;

/* Run a pass of index D against the query grouping Q (Q == D for a
 * self-join) with the options' threads, progress (stage name) and cancel
 * flag. Fails with GROVE_INVALID_ARGUMENT when fill offsets disagree with
 * the true counts (without writing outside any query's slice). */
grove_status grove__join_run(const grove_index *D, const grove_index *Q, join_pass *pass,
                             const grove_options *options, const char *stage);

#endif
