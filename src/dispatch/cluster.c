/* DBSCAN's and friends-of-friends' public calls: on one process, or on
 * the ranks of options->mpi (more than one). */
#include "dispatch.h"

#include "../cluster/cluster.h"
#include "../mpi/distributed.h"

grove_status grove_dbscan(grove_points data, const grove_index_params *index_params,
                          const grove_dbscan_params *params, int64_t *labels, uint8_t *core,
                          grove_dbscan_counts *counts, const grove_options *options)
{
    static __typeof__(grove_dbscan) *const run[GROVE__COLUMNS] = {grove__dbscan_local,
                                                                  GROVE__MPI_PART(grove__mpi_dbscan)};
    GROVE__DISPATCH(run, options, GROVE__SEVERAL_RANKS, "dbscan",
                    data, index_params, params, labels, core, counts, options);
}

grove_status grove_fof(grove_points points, const double *mass, const double *velocity,
                       const grove_fof_params *params, int64_t *group, size_t *groups,
                       grove_fof_catalogue *catalogue, const grove_options *options)
{
    static __typeof__(grove_fof) *const run[GROVE__COLUMNS] = {grove__fof_local, GROVE__MPI_PART(grove__mpi_fof)};
    GROVE__DISPATCH(run, options, GROVE__SEVERAL_RANKS, "fof",
                    points, mass, velocity, params, group, groups, catalogue, options);
}
