/* The N-body module's public calls on one process: the local column of
 * the dispatch layer (src/dispatch/nbody.c), each with its public call's
 * signature and contract; and what every version of a call does first,
 * which the distributed versions (src/mpi) share. */
#ifndef GROVE_NBODY_H
#define GROVE_NBODY_H

#include "internal.h"

grove_status grove__gravity_local(grove_points positions, const double *mass, const grove_gravity_params *params,
                                  double *acc, double *pot, grove_gravity_stats *stats, const grove_options *options);

/* grove_gravity's start: the error cleared, stats zeroed, params
 * validated into *p, the positions as n x 3 packed doubles in *pos (*copy
 * an allocation to free, or NULL), a bad value named by its row in the
 * whole input (this part's row 0 is row `first`). */
grove_status grove__gravity_begin(grove_points positions, const double *mass, const grove_gravity_params *params,
                                  size_t first, grove_gravity_params *p, const double **pos, double **copy,
                                  grove_gravity_stats *stats);

#endif
