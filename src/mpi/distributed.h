/* The distributed versions of the public calls: the dispatch layer's
 * distributed column (src/dispatch), each with its public call's
 * signature and contract on the ranks of options->mpi (docs/mpi.md).
 * No MPI types here, so the dispatch layer includes this header in every
 * build; the functions exist only in a build with the MPI part, and the
 * dispatch tables name them through GROVE__MPI_PART. */
#ifndef GROVE_MPI_DISTRIBUTED_H
#define GROVE_MPI_DISTRIBUTED_H

#include "internal.h"

/* src/mpi/join.c: each rank's rows of the data (and queries) in rank order. */
grove_status grove__mpi_join(grove_points data, const grove_points *queries, const grove_index_params *index_params,
                             const grove_join_params *params, grove_join_result *result,
                             const grove_options *options);
/* src/mpi/gather.c: every rank's rows onto rank 0. */
grove_status grove__mpi_join_result_gather(grove_join_result *result, const grove_options *options);
/* src/mpi/dbscan.c: labels from the distributed join's neighbourhoods. */
grove_status grove__mpi_dbscan(grove_points data, const grove_index_params *index_params,
                               const grove_dbscan_params *params, int64_t *labels, uint8_t *core,
                               grove_dbscan_counts *counts, const grove_options *options);
/* src/mpi/fof.c: groups from the distributed join's components. */
grove_status grove__mpi_fof(grove_points points, const double *mass, const double *velocity,
                            const grove_fof_params *params, int64_t *group, size_t *groups,
                            grove_fof_catalogue *catalogue, const grove_options *options);
/* src/mpi/gravity.c: forces over the ranks' domains (on one rank the
 * single-process bits). */
grove_status grove__mpi_gravity(grove_points positions, const double *mass, const grove_gravity_params *params,
                                double *acc, double *pot, grove_gravity_stats *stats, const grove_options *options);
/* src/mpi/nbody.c: a simulation whose particles live in the ranks'
 * domains; a checkpoint read on rank 0 and handed out in blocks. */
grove_status grove__mpi_nbody_create(grove_points positions, const double *vel, const double *mass,
                                     const grove_nbody_params *params, const grove_options *options,
                                     grove_nbody **out);
grove_status grove__mpi_nbody_checkpoint_read(const char *path, const grove_options *options, grove_nbody **out);

#endif
