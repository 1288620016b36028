/* The join's pair visitor (internal): every pair the self-join finds,
 * handed to a callback as the search finds it, with no result array at
 * all, so a caller can act inside the search (a union-find over the pairs,
 * per-point sums over neighbourhoods) in O(n) memory plus the index. */
#ifndef GROVE_JOIN_VISIT_H
#define GROVE_JOIN_VISIT_H

#include "join_internal.h"

/* Pairs (row, neighbours[t]) for t < count, count >= 1, rows of the input.
 * Called from the join's worker threads, several at once (on distinct
 * rows in the every-pair mode; in the once mode two threads may hand over
 * pairs sharing a row), so shared state needs atomics. Return 0 to go on;
 * nonzero stops the pass (grove__join_visit then fails with
 * GROVE_CANCELLED). */
typedef int (*grove__join_pair_fn)(void *user, uint32_t row, const uint32_t *neighbours, size_t count);

/* Group shortcuts of the once mode, for two leaf groups of the index
 * (rows a[0 .. na) and b[0 .. nb); b == a for a group with itself).
 * block: every pair of a row of a and a row of b (for b == a, every pair
 * within a) is within eps as the join computes it; those pairs are not
 * handed to fn. Return 0 to go on, nonzero to stop the pass.
 * settled: return 1 when the caller no longer needs the pairs between a
 * and b (their distance tests are then skipped), 0 to have them come
 * through fn; an answer of 1 must stay true for the rest of the pass
 * (as "already one component" does for a union-find). Called from the
 * worker threads like fn. */
typedef int (*grove__join_group_fn)(void *user, const uint32_t *a, size_t na, const uint32_t *b, size_t nb);

typedef struct grove__join_visitor {
    double eps;          /* pairs at distance <= eps, as grove_join finds them */
    /* 1: each unordered pair {i, j}, i != j, exactly once, in one
     * orientation or the other (no pair (i, i)): half the distance work,
     * for order-free uses (unions, symmetric tallies).
     * 0: every ordered pair (i, j) with i a query, j any neighbour, (i, i)
     * included. All of one query's pairs come from one thread, in an order
     * fixed by the index alone (the same for any thread count), so a
     * callback may sum over a query's neighbours without atomics and get
     * the same bits every time. */
    int once;
    /* Every-pair mode: NULL queries every row, else only the rows with
     * queries[row] != 0 (groups of the index without one are skipped). */
    const uint8_t *queries;
    grove__join_pair_fn fn;
    void *user;
    /* Optional (NULL: every pair through fn), once mode only. block fires
     * where the boxes of the two groups lie within eps with room for
     * rounding, which needs boxes over every dimension (up to
     * GROVE__JOIN_SOA_MAX dimensions, no projected keys); elsewhere it is
     * never called. settled is asked of every other candidate group. */
    grove__join_group_fn block, settled;
} grove__join_visitor;

/* Run the visitor over the self-join of `index` with the options' threads,
 * progress (stage "join visit") and cancel flag, checked per group.
 * Memory: per thread the candidates of one group (see grove_join_stream). */
grove_status grove__join_visit(const grove_index *index, const grove__join_visitor *visitor,
                               const grove_options *options);

#endif
