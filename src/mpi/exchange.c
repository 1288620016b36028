/* Exchanges for callers without MPI types (the CLI) beside gather.c's:
 * rank 0's bytes to every rank, and each rank's variable count of
 * elements to rank 0 in rank order. */
#include "mpi_internal.h"

#include <limits.h>
#include <string.h>

grove_status grove_mpi_broadcast(const grove_mpi *mpi, void *data, size_t bytes)
{
    grove__clear_error();
    if (!mpi || mpi->size == 1) return GROVE_OK;
    grove_status s = bytes > INT_MAX ? grove__fail(GROVE_TOO_LARGE, "mpi broadcast: more than 2^31 - 1 bytes")
                                     : GROVE_OK;
    s = grove__mpi_agree(mpi, s, "mpi broadcast");
    if (s == GROVE_OK) {
        MPI_Bcast(data, (int)bytes, MPI_BYTE, 0, mpi->comm);
        if (mpi->rank == 0) grove__mpi_sent(mpi, bytes * (size_t)(mpi->size - 1));
    }
    return s;
}

grove_status grove_mpi_gatherv(const grove_mpi *mpi, const void *mine, size_t count, size_t elem, void *all)
{
    grove__clear_error();
    if (!mpi || mpi->size == 1) {
        if (count) memmove(all, mine, count * elem);
        return GROVE_OK;
    }
    int P = mpi->size;
    int *counts = grove__malloc(2 * (size_t)P * sizeof *counts, "mpi gather"), *displs = counts ? counts + P : NULL;
    grove_status s = counts ? GROVE_OK : GROVE_OUT_OF_MEMORY;
    if (s == GROVE_OK && (count > INT_MAX || elem > INT_MAX))
        s = grove__fail(GROVE_TOO_LARGE, "mpi gather: more than 2^31 - 1 elements on a rank");
    s = grove__mpi_agree(mpi, s, "mpi gather");
    int mine_count = (int)count;
    if (s == GROVE_OK) MPI_Gather(&mine_count, 1, MPI_INT, counts, 1, MPI_INT, 0, mpi->comm);
    long long total = 0;
    for (int r = 0; s == GROVE_OK && mpi->rank == 0 && r < P; r++) {
        displs[r] = (int)total;
        total += counts[r];
    }
    if (s == GROVE_OK && mpi->rank == 0 && total > INT_MAX)
        s = grove__fail(GROVE_TOO_LARGE, "mpi gather: more than 2^31 - 1 elements in all");
    s = grove__mpi_agree(mpi, s, "mpi gather");
    if (s == GROVE_OK) {
        MPI_Datatype type;
        MPI_Type_contiguous((int)elem, MPI_BYTE, &type);
        MPI_Type_commit(&type);
        MPI_Gatherv(mine, mine_count, type, all, counts, displs, type, 0, mpi->comm);
        MPI_Type_free(&type);
        if (mpi->rank != 0) grove__mpi_sent(mpi, count * elem);
    }
    grove__free(counts);
    return s;
}
