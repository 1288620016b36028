/* Helpers the cases share: the world context, and how the global rows are
 * split among the ranks. */
#include "mpi_test.h"

void mpi_part(size_t n, int ranks, int rank, int kind, size_t *first, size_t *count)
{
    size_t w[64], total = 0, before = 0;
    for (int r = 0; r < ranks; r++) {
        w[r] = kind == 0   ? 1
               : kind == 2 ? (r == ranks - 1)
               : kind == 3 ? (r == 0)
               : (ranks > 2 && r == 1) ? 0
                                       : (size_t)(r + 1) * (r + 1);
        total += w[r];
    }
    for (int r = 0; r < rank; r++) before += w[r];
    *first = n * before / total;
    *count = n * (before + w[rank]) / total - *first;
}

grove_mpi *mpi_world(int *rank, int *ranks)
{
    grove_mpi *mpi = NULL;
    MPI_CHECK(grove_mpi_create(MPI_COMM_WORLD, &mpi) == GROVE_OK);
    *rank = grove_mpi_rank(mpi);
    *ranks = grove_mpi_size(mpi);
    return mpi;
}
