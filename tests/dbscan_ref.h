/* DBSCAN by brute force for the tests, following scikit-learn's own
 * expansion (sklearn/cluster/_dbscan_inner.pyx: clusters grown one after
 * another from the lowest-index unlabelled core point with a stack, a
 * point labelled when first popped), on neighbourhoods from the join's
 * brute-force reference (join_ref.h). Shares no code with the library. */
#ifndef GROVE_TEST_DBSCAN_REF_H
#define GROVE_TEST_DBSCAN_REF_H

#include "join_ref.h"

/* Labels and core flags of s's n points (eps2: the squared radius in the
 * points' dtype; weight NULL: every point weighs 1); returns the border
 * points within eps of core points of another cluster than their own, so
 * tests can check they met the border rule. */
size_t dbscan_ref(const ref_set *s, double eps2, size_t min_samples, const double *weight, int64_t *labels,
                  uint8_t *core);

#endif
