/* Gravity's and the N-body simulation's public calls: on one process, or
 * on the ranks of any MPI context in the options. */
#include "dispatch.h"

#include "../device/entry.h"
#include "../mpi/distributed.h"
#include "../nbody/nbody.h"

grove_status grove_gravity(grove_points positions, const double *mass, const grove_gravity_params *params,
                           double *acc, double *pot, grove_gravity_stats *stats, const grove_options *options)
{
    static __typeof__(grove_gravity) *const run[GROVE__COLUMNS] = {
        grove__gravity_local, GROVE__MPI_PART(grove__mpi_gravity), grove__device_gravity};
    GROVE__DISPATCH(run, options, GROVE__ANY_CONTEXT, "gravity", positions, mass, params, acc, pot, stats, options);
}

grove_status grove_nbody_create(grove_points positions, const double *vel, const double *mass,
                                const grove_nbody_params *params, const grove_options *options, grove_nbody **out)
{
    static __typeof__(grove_nbody_create) *const run[GROVE__COLUMNS] = {grove__nbody_create_local,
                                                                        GROVE__MPI_PART(grove__mpi_nbody_create)};
    GROVE__DISPATCH(run, options, GROVE__ANY_CONTEXT, "nbody", positions, vel, mass, params, options, out);
}

grove_status grove_nbody_checkpoint_read(const char *path, const grove_options *options, grove_nbody **out)
{
    static __typeof__(grove_nbody_checkpoint_read) *const run[GROVE__COLUMNS] = {
        grove__nbody_checkpoint_read_local, GROVE__MPI_PART(grove__mpi_nbody_checkpoint_read)};
    GROVE__DISPATCH(run, options, GROVE__ANY_CONTEXT, "checkpoint", path, options, out);
}

/* A simulation steps on the ranks it was made on: a distributed one
 * checks that the options carry its context (src/mpi/nbody.c); one made
 * on one process refuses several ranks here, as every one-process call
 * does (rather than run as one copy per rank). */
grove_status grove_nbody_step(grove_nbody *sim, uint64_t steps, const grove_options *options)
{
    grove__column c = grove__column_of(options, GROVE__SEVERAL_RANKS);
    if (sim && c == GROVE__DISTRIBUTED && !grove__nbody_distributed(sim))
        return grove__column_missing(c, options, "nbody");
    /* One process's simulation steps with its forces on a device when the
     * options ask for one. */
    if (sim && c == GROVE__LOCAL && grove__device_asked(options) && !grove__nbody_distributed(sim))
        return grove__device_nbody_step(sim, steps, options);
    return grove__nbody_step(sim, steps, options);
}
