/* The join's pair visitor (internal): every pair the self-join finds,
 * handed to a callback as the search finds it, with no result array at
 * all, so a caller can act inside the search (a union-find over the pairs,
 * per-point sums over neighbourhoods) in O(n) memory plus the index. */
#ifndef GROVE_JOIN_VISIT_H
#define GROVE_JOIN_VISIT_H

#include "join_internal.h"
#include "union_find.h"

/* Pairs (row, neighbours[t]) for t < count, count >= 1, rows of the input.
 * Called from the join's worker threads, several at once on distinct
 * rows, so state shared between rows needs atomics. Return 0 to go on;
 * nonzero stops the pass (grove__join_visit then fails with
 * GROVE_CANCELLED). */
typedef int (*grove__join_pair_fn)(void *user, uint32_t row, const uint32_t *neighbours, size_t count);

typedef struct grove__join_visitor {
    double eps;          /* pairs at distance <= eps, as grove_join finds them */
    /* NULL: every row is a query; else only the rows with queries[row] != 0
     * (groups of the index without one are skipped). Each query gets every
     * ordered pair (query, neighbour), (i, i) included, all from one
     * thread, in an order fixed by the index alone (the same for any thread
     * count), so a callback may sum over a query's neighbours without
     * atomics and get the same bits every time. */
    const uint8_t *queries;
    grove__join_pair_fn fn;
    void *user;
} grove__join_visitor;

/* Run the visitor over the self-join of `index` with the options' threads,
 * progress (stage "join visit") and cancel flag, checked per group.
 * Memory: per thread the candidates of one group (see grove_join_stream). */
grove_status grove__join_visit(const grove_index *index, const grove__join_visitor *visitor,
                               const grove_options *options);

/* The components pass: join in `uf` (n = index->tree.n elements, by row) every
 * pair of members (rows with members[row] != 0; NULL: every row) within
 * eps as grove_join finds them. Only components matter, so a pair whose
 * ends are one component already costs no distance: most pairs inside a
 * cluster are never computed. Concurrent unions (see union_find.h), so the
 * roots do not depend on the threads. Memory: per thread the candidates of
 * one group. */
grove_status grove__join_connect(const grove_index *index, double eps, const uint8_t *members, grove__uf *uf,
                                 const grove_options *options);

#endif
