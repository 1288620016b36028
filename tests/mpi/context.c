/* The communicator context: rank and size as MPI's, grove's own duplicate
 * of the communicator, and the one-process calls refused on several ranks. */
#include "mpi_test.h"

#include "mpi/mpi_internal.h"

void mpi_case_context(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    grove_mpi *mpi = NULL;
    MPI_CHECK(grove_mpi_create(MPI_COMM_WORLD, &mpi) == GROVE_OK);
    MPI_CHECK(grove_mpi_rank(mpi) == rank && grove_mpi_size(mpi) == size);
    int same = MPI_UNEQUAL;
    MPI_Comm_compare(grove_mpi_comm(mpi), MPI_COMM_WORLD, &same);
    MPI_CHECK(same == MPI_CONGRUENT);
    grove_options o;
    grove_options_init(&o);
    MPI_CHECK(o.mpi == NULL && grove__mpi_single(&o, "x") == GROVE_OK);
    o.mpi = mpi;
    MPI_CHECK((grove__mpi_single(&o, "x") == GROVE_OK) == (size == 1));
    grove_mpi_free(mpi);
    MPI_CHECK(grove_mpi_create(MPI_COMM_WORLD, NULL) == GROVE_INVALID_ARGUMENT);
}
