/* How the cases split the global rows among the ranks. */
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
