/* The join's brute-force reference for the tests (test_join.c, the pair
 * visitor, DBSCAN): squared distances summed in the points' dtype, over the
 * index's variance order, in the pattern the library documents (in order
 * up to GROVE__JOIN_SOA_MAX dimensions, eight fixed lanes above), so pair
 * sets agree exactly, boundary pairs included. Shares no code with the
 * library. */
#ifndef GROVE_TEST_JOIN_REF_H
#define GROVE_TEST_JOIN_REF_H

#include "test.h"

#include <stdbool.h>

typedef struct ref_set {
    const void *data; /* n x d, float or double */
    bool f32;
    size_t n, d;
    size_t order[20000];
} ref_set;

/* Squared distance between row a of qs and row b of ds in the dtype. */
double join_ref_dist2(const ref_set *qs, size_t a, const ref_set *ds, size_t b);
grove_points join_ref_view(const ref_set *s);
/* A data or query set of one kind; f32 copies the doubles to float. */
ref_set *join_ref_make(test_kind kind, size_t n, size_t d, bool f32, uint64_t seed);
void join_ref_free(ref_set *s);
/* A join test's start: opt set up on 2 threads, ds's index under ip
 * built with it, jp for eps and exclude (self pairs); NULL after a
 * failed check naming `what` when the build fails. */
grove_index *join_ref_index(const ref_set *ds, const grove_index_params *ip, double eps, bool exclude,
                            const char *what, grove_options *opt, grove_join_params *jp);
/* The variance order the index uses, for the reference (into qs too when
 * it is not NULL). */
void join_ref_take_order(ref_set *ds, ref_set *qs);

#endif
