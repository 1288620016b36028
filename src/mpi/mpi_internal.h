/* The MPI context's layout and the helpers every distributed call uses.
 * Without the MPI part (no GROVE_HAVE_MPI) only the rank/size queries
 * exist, answering for one process. */
#ifndef GROVE_MPI_INTERNAL_H
#define GROVE_MPI_INTERNAL_H

#include "internal.h"

#ifdef GROVE_HAVE_MPI
#include "grove_mpi.h"

struct grove_mpi {
    MPI_Comm comm;   /* grove's own duplicate */
    int rank, size;
    bool finalize;   /* grove_mpi_launch initialised MPI: free finalises it */
};
#endif

/* The options' communicator size (1 without one). */
static inline int grove__mpi_ranks(const grove_options *options)
{
    return options ? grove_mpi_size(options->mpi) : 1;
}

/* GROVE_UNSUPPORTED for a call that runs on one process only, started on
 * more than one rank; GROVE_OK otherwise. `what` names the call. */
grove_status grove__mpi_single(const grove_options *options, const char *what);

#endif
