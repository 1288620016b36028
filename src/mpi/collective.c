/* Collective helpers of the distributed calls: one status for every rank,
 * row offsets of the ranks' parts, sums continued rank after rank, the
 * sample-sort cuts of a coordinate, and an all-to-all exchange. */
#include "mpi_internal.h"

#include "../index/search_index.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { TAG_CHAIN = 7101 };

/* Whether a message already names the rank it came from ("rank 3: ..."):
 * a status agreed again keeps it as it is. */
static bool names_its_rank(const char *message)
{
    int rank, end = 0;
    return sscanf(message, "rank %d: %n", &rank, &end) == 1 && end > 0;
}

grove_status grove__mpi_agree(const grove_mpi *mpi, grove_status s, const char *what)
{
    int mine = (int)s, worst = 0;
    MPI_Allreduce(&mine, &worst, 1, MPI_INT, MPI_MAX, mpi->comm);
    if (worst == 0) return GROVE_OK;
    /* The lowest rank with the worst status speaks for every rank, so each
     * says what went wrong (and one line of the CLI, rank 0's, is enough). */
    int speaker = mine == worst ? mpi->rank : INT_MAX, first = INT_MAX;
    MPI_Allreduce(&speaker, &first, 1, MPI_INT, MPI_MIN, mpi->comm);
    char message[GROVE__ERROR_CAPACITY];
    if (mpi->rank == first) {
        const char *own = grove_last_error();
        if (names_its_rank(own)) snprintf(message, sizeof message, "%s", own);
        else if (own[0]) snprintf(message, sizeof message, "rank %d: %s", first, own);
        else snprintf(message, sizeof message, "rank %d: %s: %s", first, what, grove_status_str((grove_status)worst));
    }
    MPI_Bcast(message, (int)sizeof message, MPI_CHAR, first, mpi->comm);
    return grove__fail((grove_status)worst, "%s", message);
}

void grove__mpi_offsets(const grove_mpi *mpi, size_t n, int64_t *offsets)
{
    int64_t mine = (int64_t)n;
    MPI_Allgather(&mine, 1, MPI_INT64_T, offsets + 1, 1, MPI_INT64_T, mpi->comm);
    offsets[0] = 0;
    for (int r = 0; r < mpi->size; r++) offsets[r + 1] += offsets[r];
}

void grove__mpi_chain_sums(const grove_mpi *mpi, grove_points p, double scale, const double *centre, int threads,
                           double *acc)
{
    size_t d = p.d;
    if (mpi->rank > 0) MPI_Recv(acc, (int)d, MPI_DOUBLE, mpi->rank - 1, TAG_CHAIN, mpi->comm, MPI_STATUS_IGNORE);
    else memset(acc, 0, d * sizeof *acc);
    if (p.n > 0) grove__dim_sums(p, scale, centre, threads, acc);
    if (mpi->rank + 1 < mpi->size) MPI_Send(acc, (int)d, MPI_DOUBLE, mpi->rank + 1, TAG_CHAIN, mpi->comm);
    MPI_Bcast(acc, (int)d, MPI_DOUBLE, mpi->size - 1, mpi->comm);
}

static int compare_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

grove_status grove__mpi_cuts(const grove_mpi *mpi, const double *samples, size_t count, double *cuts)
{
    int P = mpi->size, mine = (int)count;
    int *counts = grove__malloc(2 * (size_t)P * sizeof *counts, "mpi sample counts");
    int *displs = counts ? counts + P : NULL;
    grove_status s = counts ? GROVE_OK : GROVE_OUT_OF_MEMORY;
    s = grove__mpi_agree(mpi, s, "mpi cuts");
    if (s != GROVE_OK) {
        grove__free(counts);
        return s;
    }
    MPI_Allgather(&mine, 1, MPI_INT, counts, 1, MPI_INT, mpi->comm);
    size_t total = 0;
    for (int r = 0; r < P; r++) {
        displs[r] = (int)total;
        total += (size_t)counts[r];
    }
    double *all = grove__malloc((total ? total : 1) * sizeof *all, "mpi samples");
    s = grove__mpi_agree(mpi, all ? GROVE_OK : GROVE_OUT_OF_MEMORY, "mpi cuts");
    if (s == GROVE_OK) {
        MPI_Allgatherv(samples, mine, MPI_DOUBLE, all, counts, displs, MPI_DOUBLE, mpi->comm);
        qsort(all, total, sizeof *all, compare_double);
        for (int k = 1; k < P; k++) cuts[k - 1] = total ? all[(size_t)k * total / (size_t)P] : 0;
    }
    grove__free(all);
    grove__free(counts);
    return s;
}

/* Displacements of counts (P entries) into displs; the total, or -1 past
 * INT_MAX. */
static long long displace(const int *counts, int P, int *displs)
{
    long long total = 0;
    for (int r = 0; r < P; r++) {
        displs[r] = total > INT_MAX ? 0 : (int)total;
        total += counts[r];
    }
    return total > INT_MAX ? -1 : total;
}

grove_status grove__mpi_alltoallv(const grove_mpi *mpi, const char *call, const void *send, const int *counts,
                                  MPI_Datatype t, size_t size, void **got, int *got_counts, const char *what)
{
    int P = mpi->size, me = mpi->rank;
    int *sd = grove__malloc(4 * (size_t)P * sizeof *sd, what), *rd = sd ? sd + P : NULL;
    int *sc = sd ? sd + 2 * P : NULL, *rc = sd ? sd + 3 * P : NULL;
    MPI_Alltoall(counts, 1, MPI_INT, got_counts, 1, MPI_INT, mpi->comm);
    long long sent = sd ? displace(counts, P, sd) : 0, recv = sd ? displace(got_counts, P, rd) : 0;
    grove_status s = sd ? GROVE_OK : GROVE_OUT_OF_MEMORY;
    if (s == GROVE_OK && (sent < 0 || recv < 0))
        s = grove__fail(GROVE_TOO_LARGE, "%s: more than 2^31 - 1 %s in one exchange", call, what);
    *got = s == GROVE_OK ? grove__malloc(((size_t)recv ? (size_t)recv : 1) * size, what) : NULL;
    if (s == GROVE_OK && !*got) s = GROVE_OUT_OF_MEMORY;
    s = grove__mpi_agree(mpi, s, call);
    if (s == GROVE_OK) {
        /* What stays here is copied, not sent through MPI (much slower
         * for a large part on Open MPI's self transport). */
        memcpy(sc, counts, (size_t)P * sizeof *sc);
        memcpy(rc, got_counts, (size_t)P * sizeof *rc);
        sc[me] = rc[me] = 0;
        if (counts[me]) memcpy((char *)*got + (size_t)rd[me] * size, (const char *)send + (size_t)sd[me] * size,
                               (size_t)counts[me] * size);
        MPI_Alltoallv(send, sc, sd, t, *got, rc, rd, t, mpi->comm);
        grove__mpi_sent(mpi, (size_t)(sent - counts[me]) * size);
    } else {
        grove__free(*got);
        *got = NULL;
    }
    grove__free(sd);
    return s;
}

grove_status grove__mpi_alltoallv_records(const grove_mpi *mpi, const char *call, const void *send, const int *counts,
                                          size_t size, void **got, int *got_counts, size_t *total, const char *what)
{
    MPI_Datatype t;
    MPI_Type_contiguous((int)size, MPI_BYTE, &t);
    MPI_Type_commit(&t);
    grove_status s = grove__mpi_alltoallv(mpi, call, send, counts, t, size, got, got_counts, what);
    MPI_Type_free(&t);
    *total = 0;
    for (int r = 0; s == GROVE_OK && r < mpi->size; r++) *total += (size_t)got_counts[r];
    return s;
}

int grove__mpi_slab(const double *cuts, int ncuts, double x)
{
    int lo = 0, hi = ncuts;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (cuts[mid] <= x) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

int grove__mpi_home(const int64_t *offsets, int ranks, int64_t row)
{
    int lo = 0, hi = ranks - 1;
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (offsets[mid] <= row) lo = mid;
        else hi = mid - 1;
    }
    return lo;
}
