/* What the clustering module (HDBSCAN*, src/cluster) takes from the EMST
 * module: the tree in the scaled arithmetic. */
#ifndef GROVE_EMST_H
#define GROVE_EMST_H

#include "internal.h"

/* grove_emst of validated points (n >= 2, 1 <= min_samples <= n, range
 * `magnitude` from grove__points_validate_range) with the weights left in
 * the units of the scaled arithmetic: the true weights are weights times
 * 2^*exponent (emst.c). With alpha != 1 (> 0) the mutual reachability is
 * max(alpha core(a), alpha core(b), |a - b|), HDBSCAN*'s alpha times
 * alpha. */
grove_status grove__emst_scaled(grove_points points, double magnitude, size_t min_samples, double alpha,
                                int64_t *edges, double *weights, int *exponent, const grove_options *options);

#endif
