/* The distributed versions of the public calls: the dispatch layer's
 * distributed column (src/dispatch), each with its public call's type
 * (__typeof__) and contract on the ranks of options->mpi (docs/mpi.md).
 * No MPI types here, so the dispatch layer includes this header in every
 * build; the functions exist only in a build with the MPI part, and the
 * dispatch tables name them through GROVE__MPI_PART. */
#ifndef GROVE_MPI_DISTRIBUTED_H
#define GROVE_MPI_DISTRIBUTED_H

#include "internal.h"

/* src/mpi/join.c: each rank's rows of the data (and queries) in rank order. */
__typeof__(grove_join) grove__mpi_join;
/* src/mpi/gather.c: every rank's rows onto rank 0. */
__typeof__(grove_join_result_gather) grove__mpi_join_result_gather;
/* src/mpi/dbscan.c: labels from the distributed join's neighbourhoods. */
__typeof__(grove_dbscan) grove__mpi_dbscan;
/* src/mpi/fof.c: groups from the distributed join's components. */
__typeof__(grove_fof) grove__mpi_fof;
/* src/mpi/paircount.c: each rank's rows of the sets; every rank gets the
 * histograms of the whole sets. */
__typeof__(grove_paircount) grove__mpi_paircount;
/* src/mpi/gravity.c: forces over the ranks' domains (on one rank the
 * single-process bits). */
__typeof__(grove_gravity) grove__mpi_gravity;
/* src/mpi/nbody.c: a simulation whose particles live in the ranks'
 * domains; a checkpoint read on rank 0 and handed out in blocks. */
__typeof__(grove_nbody_create) grove__mpi_nbody_create;
__typeof__(grove_nbody_checkpoint_read) grove__mpi_nbody_checkpoint_read;

#endif
