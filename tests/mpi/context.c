/* The communicator context: rank and size as MPI's, grove's own duplicate
 * of the communicator, the one-process calls (the index and the calls on
 * it, a simulation made alone) refused on several ranks, and
 * grove_mpi_agree. */
#include "mpi_test.h"

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
    /* An index is one process's: it is made, and searched, on one rank
     * only; several ranks are refused naming the call. */
    double p[6] = {0, 0, 0, 1, 0, 0};
    grove_points pts = grove_points_f64(p, 2, 3);
    grove_index *ix = NULL;
    MPI_CHECK(o.mpi == NULL && grove_index_create(pts, NULL, &o, &ix) == GROVE_OK);
    o.mpi = mpi;
    grove_index *other = NULL;
    grove_status made = grove_index_create(pts, NULL, &o, &other);
    MPI_CHECK((made == GROVE_OK) == (size == 1));
    MPI_CHECK(size == 1 || strstr(grove_last_error(), "index runs on one process") != NULL);
    grove_index_free(other);
    grove_join_params jp;
    grove_join_params_init(&jp);
    jp.eps = 2;
    int64_t counts[2], pairs = 0;
    grove_status counted = grove_join_count(ix, NULL, &jp, counts, &pairs, &o);
    MPI_CHECK(size > 1 ? counted == GROVE_UNSUPPORTED && strstr(grove_last_error(), "join count runs on one process")
                       : counted == GROVE_OK && pairs == 4);
    grove_index_free(ix);
    /* The pair counts run distributed: each rank's two points are rows of
     * one set, size copies of each point, so each bin holds 2 size^2
     * ordered pairs (self pairs in the first). */
    grove_paircount_params pp;
    grove_paircount_params_init(&pp);
    double edges[3] = {0, 0.5, 2};
    pp.edges = edges;
    pp.nedges = 3;
    int64_t npairs[2] = {-1, -1};
    grove_status paired = grove_paircount(pts, NULL, &pp, npairs, NULL, &o);
    MPI_CHECK(paired == GROVE_OK && npairs[0] == 2 * size * size && npairs[1] == 2 * size * size);
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
