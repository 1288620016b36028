/* What the join's searches share (internal): their thread sizing and
 * pruning radii on a grove_index (src/index/search_index.h). */
#ifndef GROVE_JOIN_INTERNAL_H
#define GROVE_JOIN_INTERNAL_H

#include "../index/search_index.h"

/* A size for grove__threads_for (parallel.h): queries weighted by the
 * cost of scanning the data once, so small joins stay on one thread (a
 * parallel region costs more than they do) and large or high-dimensional
 * ones spread. */
static inline size_t grove__join_work(const grove_index *D, const grove_index *Q)
{
    return Q->tree.n * (1 + D->tree.n * D->tree.d / 65536);
}

/* Squared radius in the index's dtype, and the looser one used to prune
 * by keys: key distances are summed in a different order from the pair
 * kernels (and projected keys carry rounding of their own), so a box or
 * point is dropped only when it is beyond eps by more than any rounding. */
double grove__join_eps2(const grove_index *index, double eps);
/* eps^2 as the refinement compares it: the key (../index/dist_key.h) of
 * grove__join_eps2's value in an arithmetic without underflow, a number of
 * the index's dtype (the same value wherever that is normal). */
double grove__join_eps2_key(const grove_index *index, double eps);
double grove__join_prune2(const grove_index *D, const grove_index *Q, double eps);
/* The same for a squared radius r2 in the dtype (kNN bounds). */
double grove__join_prune2_sq(const grove_index *D, const grove_index *Q, double r2);
/* The other way round: a squared radius such that two groups whose boxes
 * are within it (FN(box_span2)) have every pair within eps as the pair
 * kernels compute it; -1 where the boxes do not cover every dimension
 * (above SOA_MAX dimensions or with projected keys). */
double grove__join_link2(const grove_index *index, double eps);

#endif
