/* Gathers to rank 0 for callers without MPI types (the CLI): one value
 * per rank, and a distributed join's rows in rank order; rows' blocks
 * and a rank's first global row. */
#include "mpi_internal.h"

#include <limits.h>
#include <string.h>

void grove_mpi_gather_int64(const grove_mpi *mpi, int64_t value, int64_t *all)
{
    if (!mpi) {
        if (all) all[0] = value;
        return;
    }
    MPI_Gather(&value, 1, MPI_INT64_T, all, 1, MPI_INT64_T, 0, mpi->comm);
}

grove_status grove_mpi_agree(const grove_mpi *mpi, grove_status s)
{
    return mpi ? grove__mpi_agree(mpi, s, "mpi") : s;
}

size_t grove__mpi_first_row(const grove_options *options, size_t n)
{
    if (grove_mpi_size(options->mpi) < 2) return 0;
    unsigned long long mine = n, before = 0;
    MPI_Exscan(&mine, &before, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, options->mpi->comm);
    return options->mpi->rank ? (size_t)before : 0; /* rank 0's is undefined */
}

void grove_mpi_block(const grove_mpi *mpi, size_t n, size_t *first, size_t *count)
{
    size_t r = (size_t)grove_mpi_rank(mpi), P = (size_t)grove_mpi_size(mpi);
    *first = n * r / P;
    *count = n * (r + 1) / P - *first;
}

grove_status grove_mpi_gather_blocks(const grove_mpi *mpi, void *array, size_t n, size_t elem)
{
    grove__clear_error();
    if (!mpi || mpi->size == 1) return GROVE_OK;
    int P = mpi->size;
    int *counts = grove__malloc(2 * (size_t)P * sizeof *counts, "mpi gather"), *displs = counts ? counts + P : NULL;
    grove_status s = counts ? GROVE_OK : GROVE_OUT_OF_MEMORY;
    if (s == GROVE_OK && n * elem > INT_MAX) s = grove__fail(GROVE_TOO_LARGE, "mpi gather: more than 2^31 - 1 bytes");
    s = grove__mpi_agree(mpi, s, "mpi gather");
    if (s == GROVE_OK) {
        for (int r = 0; r < P; r++) {
            size_t a = n * (size_t)r / (size_t)P, b = n * (size_t)(r + 1) / (size_t)P;
            displs[r] = (int)(a * elem);
            counts[r] = (int)((b - a) * elem);
        }
        char *mine = (char *)array + displs[mpi->rank];
        MPI_Gatherv(mpi->rank == 0 ? MPI_IN_PLACE : mine, counts[mpi->rank], MPI_BYTE, array, counts, displs, MPI_BYTE,
                    0, mpi->comm);
    }
    grove__free(counts);
    return s;
}

/* counts (P) and displacements of every rank's n, on rank 0; false past INT_MAX. */
static bool layout(const grove_mpi *mpi, int64_t n, int64_t *all, int *counts, int *displs, int64_t *total)
{
    MPI_Gather(&n, 1, MPI_INT64_T, all, 1, MPI_INT64_T, 0, mpi->comm);
    bool fits = true;
    *total = 0;
    for (int r = 0; mpi->rank == 0 && r < mpi->size; r++) {
        counts[r] = (int)all[r];
        displs[r] = (int)*total;
        *total += all[r];
        fits = fits && all[r] <= INT_MAX && *total <= INT_MAX;
    }
    return fits;
}

static grove_status gather(const grove_mpi *mpi, grove_join_result *result, grove_join_result *whole)
{
    int P = mpi->size, lead = mpi->rank == 0;
    int *c = grove__malloc(4 * (size_t)P * sizeof *c, "join gather");
    int64_t *all = grove__malloc((size_t)P * sizeof *all, "join gather");
    grove_status s = grove__mpi_agree(mpi, c && all ? GROVE_OK : GROVE_OUT_OF_MEMORY, "join gather");
    if (s != GROVE_OK) {
        grove__free(c);
        grove__free(all);
        return s;
    }
    int *dq = c + P, *cp = c + 2 * P, *dp = c + 3 * P;
    int64_t nq, pairs;
    bool fits = layout(mpi, (int64_t)result->nq, all, c, dq, &nq);
    fits = layout(mpi, result->pairs, all, cp, dp, &pairs) && fits;
    s = lead && !fits ? grove__fail(GROVE_TOO_LARGE, "join: more than 2^31 - 1 rows or pairs to gather")
                                   : GROVE_OK;
    int has = result->distances != NULL;
    if (lead && s == GROVE_OK) {
        whole->nq = (size_t)nq;
        whole->pairs = pairs;
        whole->offsets = grove__malloc(((size_t)nq + 1) * sizeof *whole->offsets, "join offsets");
        whole->indices = grove__malloc((pairs ? (size_t)pairs : 1) * sizeof *whole->indices, "join indices");
        whole->distances = has ? grove__malloc((pairs ? (size_t)pairs : 1) * sizeof(double), "join distances") : NULL;
        if (!whole->offsets || !whole->indices || (has && !whole->distances)) s = GROVE_OUT_OF_MEMORY;
    }
    s = grove__mpi_agree(mpi, s, "join gather");
    if (s == GROVE_OK) {
        /* Each rank's row lengths, then the running sum on rank 0. */
        for (size_t q = 0; q < result->nq; q++) result->offsets[q] = result->offsets[q + 1] - result->offsets[q];
        MPI_Gatherv(result->offsets, (int)result->nq, MPI_INT64_T, lead ? whole->offsets + 1 : NULL, c, dq,
                    MPI_INT64_T, 0, mpi->comm);
        MPI_Gatherv(result->indices, (int)result->pairs, MPI_INT64_T, whole->indices, cp, dp, MPI_INT64_T, 0,
                    mpi->comm);
        if (has)
            MPI_Gatherv(result->distances, (int)result->pairs, MPI_DOUBLE, whole->distances, cp, dp, MPI_DOUBLE, 0,
                        mpi->comm);
        for (size_t q = 0; lead && q < (size_t)nq; q++) whole->offsets[q + 1] += q ? whole->offsets[q] : 0;
        if (lead) whole->offsets[0] = 0;
    }
    grove__free(c);
    grove__free(all);
    return s;
}

grove_status grove__mpi_join_result_gather(grove_join_result *result, const grove_options *options)
{
    grove__clear_error();
    if (!result) return grove__fail(GROVE_INVALID_ARGUMENT, "join gather: result is NULL");
    const grove_mpi *mpi = options->mpi;
    grove_join_result whole;
    memset(&whole, 0, sizeof whole);
    grove_status s = gather(mpi, result, &whole);
    grove_join_result_free(result);
    if (s == GROVE_OK) *result = whole;
    else grove_join_result_free(&whole);
    return s;
}
