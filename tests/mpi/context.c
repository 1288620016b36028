/* The communicator context: rank and size as MPI's, grove's own duplicate
 * of the communicator, and the one-process calls refused on several ranks
 * (grove_nbody_create among them). */
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
    /* The N-body handle is not distributed: refused on several ranks
     * rather than run as one copy per rank. */
    double x[6] = {0, 0, 0, 1, 0, 0}, v[6] = {0}, m[2] = {0.5, 0.5};
    grove_points pts = grove_points_f64(x, 2, 3);
    grove_nbody *sim = NULL;
    grove_status st = grove_nbody_create(pts, v, m, NULL, &o, &sim);
    MPI_CHECK(size == 1 ? st == GROVE_OK && sim : st == GROVE_UNSUPPORTED && !sim);
    if (sim) MPI_CHECK(grove_nbody_step(sim, 1, &o) == GROVE_OK);
    grove_nbody_free(sim);
    grove_mpi_free(mpi);
    MPI_CHECK(grove_mpi_create(MPI_COMM_WORLD, NULL) == GROVE_INVALID_ARGUMENT);
}
