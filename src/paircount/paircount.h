/* The pair counts' public call on one process (paircount.c): the local
 * column of the dispatch layer (src/dispatch/paircount.c), with its public
 * call's type (__typeof__) and contract; and the steps it takes, which
 * the distributed call (src/mpi/paircount.c) takes on each rank's slab. */
#ifndef GROVE_PAIRCOUNT_H
#define GROVE_PAIRCOUNT_H

#include "internal.h"
#include "../core/exact_sum.h"

__typeof__(grove_paircount) grove__paircount_local;

/* grove_paircount's checks of its arguments but the periodic box, on a
 * process's rows of the sets: the bins, npairs, the points (a bad one
 * named by its row in the whole set: first1 + i of data1, first2 + i of
 * data2), their shapes, the weights likewise. */
grove_status grove__paircount_check(grove_points data1, const grove_points *data2,
                                    const grove_paircount_params *params, const int64_t *npairs, size_t first1,
                                    size_t first2);

/* The pairs between the queries and D's points (each once), or with
 * queries NULL among D's points (each unordered pair of distinct points
 * once: not doubled, no self pairs), added to count[bin] and, with sum,
 * their weight products to sum[bin] exactly. wD and wQ: the weights of
 * D's points and of the queries by input row (NULL: 1 each); the queries
 * in D's dtype and dimensions. */
grove_status grove__paircount_pass(const grove_index *D, const double *wD, const grove_points *queries,
                                   const double *wQ, const grove_paircount_params *params, int64_t *count,
                                   grove__xsum *sum, const grove_options *options);

/* An autocorrelation's result from its unordered pairs: each twice, and
 * the self pairs of n points weighing weights1 (NULL: 1 each) at r = 0
 * (Corrfunc's convention; grove.h). */
void grove__paircount_self_pairs(const grove_paircount_params *params, size_t n, const double *weights1,
                                 int64_t *count, grove__xsum *sum);

/* The call's results from status s and the exact sums (NULL when
 * unweighted): weighted[bin] rounded once, a sum beyond a double's range
 * refused; every bin 0 on failure. */
grove_status grove__paircount_results(grove_status s, const grove_paircount_params *params, grove__xsum *sum,
                                      int64_t *npairs, double *weighted);

#endif
