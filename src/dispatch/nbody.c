/* Gravity's and the N-body simulation's public calls: on one process, or
 * on the ranks of any MPI context in the options. */
#include "dispatch.h"

#include "../mpi/distributed.h"
#include "../nbody/nbody.h"

grove_status grove_gravity(grove_points positions, const double *mass, const grove_gravity_params *params,
                           double *acc, double *pot, grove_gravity_stats *stats, const grove_options *options)
{
    static __typeof__(grove_gravity) *const run[GROVE__COLUMNS] = {grove__gravity_local,
                                                                   GROVE__MPI_PART(grove__mpi_gravity)};
    grove__column c = grove__column_of(options, GROVE__ANY_CONTEXT);
    if (!run[c]) return grove__column_missing(c, options, "gravity");
    return run[c](positions, mass, params, acc, pot, stats, options);
}
