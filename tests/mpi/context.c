/* The communicator context: rank and size as MPI's, grove's own duplicate
 * of the communicator, the one-process calls refused on several ranks, and
 * grove_mpi_agree. */
#include "mpi_test.h"

#include "mpi/mpi_internal.h"

#include <string.h>

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
    /* An N-body handle made alone refuses to step on several ranks
     * (rather than run as one copy per rank). */
    double x[6] = {0, 0, 0, 1, 0, 0}, v[6] = {0}, m[2] = {0.5, 0.5};
    grove_nbody *sim = NULL;
    MPI_CHECK(grove_nbody_create(grove_points_f64(x, 2, 3), v, m, NULL, NULL, &sim) == GROVE_OK);
    MPI_CHECK((grove_nbody_step(sim, 1, &o) == GROVE_OK) == (size == 1));
    grove_nbody_free(sim);
    /* grove_mpi_agree: the worst status everywhere, with the message of the
     * lowest rank that has it, on every rank. */
    grove_status agreed = grove_mpi_agree(mpi, rank == size - 1 ? GROVE_IO_ERROR : GROVE_OK);
    MPI_CHECK(agreed == GROVE_IO_ERROR);
    char said[64];
    snprintf(said, sizeof said, "rank %d: ", size - 1);
    MPI_CHECK(strncmp(grove_last_error(), said, strlen(said)) == 0);
    MPI_CHECK(grove_mpi_agree(mpi, GROVE_OK) == GROVE_OK && grove_mpi_agree(NULL, GROVE_CANCELLED) == GROVE_CANCELLED);
    grove_mpi_free(mpi);
    MPI_CHECK(grove_mpi_create(MPI_COMM_WORLD, NULL) == GROVE_INVALID_ARGUMENT);
}
