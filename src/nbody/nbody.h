/* The N-body module's public calls on one process: the local column of
 * the dispatch layer (src/dispatch/nbody.c), each with its public call's
 * type (__typeof__) and contract; what every version of a call does first, which
 * the distributed versions (src/mpi) share; and the step, which runs on
 * the ranks its simulation was made on. */
#ifndef GROVE_NBODY_H
#define GROVE_NBODY_H

#include "internal.h"

__typeof__(grove_gravity) grove__gravity_local;

/* grove_gravity's start: the error cleared, stats zeroed, params
 * validated into *p, the positions as n x 3 packed doubles in *pos (*copy
 * an allocation to free, or NULL), a bad value named by its row in the
 * whole input (this part's row 0 is row `first`). */
grove_status grove__gravity_begin(grove_points positions, const double *mass, const grove_gravity_params *params,
                                  size_t first, grove_gravity_params *p, const double **pos, double **copy,
                                  grove_gravity_stats *stats);

__typeof__(grove_nbody_create) grove__nbody_create_local;
__typeof__(grove_nbody_checkpoint_read) grove__nbody_checkpoint_read_local;

/* grove_nbody_create's checks (a bad value named by its row in the whole
 * input, this part's row 0 being row `first`) and a new handle on one
 * process holding this part's particles, without forces (*sim NULL on
 * failure). */
grove_status grove__nbody_begin(grove_points positions, const double *vel, const double *mass,
                                const grove_nbody_params *params, size_t first, grove_nbody **sim);
/* The state a checkpoint file holds, read into a new handle on one
 * process without forces (*sim NULL on failure; the message names path). */
grove_status grove__nbody_checkpoint_load(const char *path, grove_nbody **sim);

/* grove_nbody_step on the ranks the simulation was made on (its ranks
 * interface checks the options). */
grove_status grove__nbody_step(grove_nbody *sim, uint64_t steps, const grove_options *options);
/* Whether sim runs on the ranks of an MPI context. */
bool grove__nbody_distributed(const grove_nbody *sim);

#endif
