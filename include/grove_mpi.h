/* grove's MPI entry points: the one header that needs <mpi.h>. Only in
 * builds with the MPI part (grove_mpi_built() == 1, `grove info` says
 * "mpi: yes"). Include after or instead of grove.h. */
#ifndef GROVE_MPI_H
#define GROVE_MPI_H

#include <mpi.h>

#include "grove.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A context on a duplicate of comm (grove's messages never mix with the
 * caller's); MPI must be initialised with at least MPI_THREAD_FUNNELED.
 * Collective over comm. Free with grove_mpi_free before MPI_Finalize. */
GROVE_API grove_status grove_mpi_create(MPI_Comm comm, grove_mpi **out);

/* The context's communicator (the duplicate). */
GROVE_API MPI_Comm grove_mpi_comm(const grove_mpi *mpi);

#ifdef __cplusplus
}
#endif

#endif
