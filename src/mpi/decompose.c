/* Domain decomposition by space-filling-curve key ranges (docs/mpi.md,
 * distributed gravity; Bonsai's sample sort, simplified). The caller gives
 * every record (rec bytes, starting with its int64 global row) a key, the
 * 63-bit Morton key of its position in the global bounding cube. Equal
 * keys are ordered by global row, so (key, row) is a total order and the
 * ranges depend only on the input and the number of ranks.
 *
 * Each rank sorts its (key, row) pairs (a stable radix sort: rows ascend
 * within a rank's part) and takes up to SAMPLES_PER_RANK samples at equal
 * steps through them, each weighted by the records it stands for times
 * the rank's weight (the distributed simulation's cost per particle, so
 * that domains balance work, not counts). The samples are gathered and
 * sorted; cut k is the first sample at which the weight before it reaches
 * k W / P, and a record belongs to the rank counting the cuts at or below
 * it. Records travel by MPI_Alltoallv and are handed back sorted by global
 * row; the simulation keeps the cuts (grove__mpi_domain says whose a key
 * is) and moves only the particles that cross them until it rebalances. */
#include "mpi_internal.h"

#include "parallel.h"

#include <stdlib.h>
#include <string.h>

#define SAMPLES_PER_RANK 256

typedef struct sample {
    uint64_t key;
    int64_t row;
    double weight;
} sample;

static int before(uint64_t ka, int64_t ra, uint64_t kb, int64_t rb)
{
    return ka < kb || (ka == kb && ra < rb);
}

static int compare_sample(const void *a, const void *b)
{
    const sample *x = a, *y = b;
    return before(x->key, x->row, y->key, y->row) ? -1 : before(y->key, y->row, x->key, x->row);
}

static int64_t row_of(const char *rec)
{
    int64_t row;
    memcpy(&row, rec, sizeof row);
    return row;
}

/* The P - 1 cuts from every rank's samples of its n sorted keys. */
static grove_status choose_cuts(const grove_mpi *mpi, const uint64_t *key, const uint32_t *order, const char *recs,
                                size_t rec, size_t n, double weight, sample *cuts)
{
    int P = mpi->size, mine = (int)(n < SAMPLES_PER_RANK ? n : SAMPLES_PER_RANK);
    sample local[SAMPLES_PER_RANK];
    for (int j = 0; j < mine; j++) {
        size_t a = (size_t)j * n / (size_t)mine, b = (size_t)(j + 1) * n / (size_t)mine;
        local[j] = (sample){key[a], row_of(recs + order[a] * rec), (double)(b - a) * weight};
    }
    int *counts = grove__malloc(2 * (size_t)P * sizeof *counts, "mpi domain samples");
    sample *all = grove__malloc((size_t)P * SAMPLES_PER_RANK * sizeof *all, "mpi domain samples");
    grove_status s = grove__mpi_agree(mpi, counts && all ? GROVE_OK : GROVE_OUT_OF_MEMORY, "domains");
    if (s == GROVE_OK) {
        int *displs = counts + P, bytes = mine * (int)sizeof(sample);
        MPI_Allgather(&bytes, 1, MPI_INT, counts, 1, MPI_INT, mpi->comm);
        size_t total = 0;
        for (int r = 0; r < P; r++) {
            displs[r] = (int)total;
            total += (size_t)counts[r];
        }
        MPI_Allgatherv(local, bytes, MPI_BYTE, all, counts, displs, MPI_BYTE, mpi->comm);
        total /= sizeof(sample);
        qsort(all, total, sizeof *all, compare_sample);
        double W = 0, w = 0;
        for (size_t j = 0; j < total; j++) W += all[j].weight;
        size_t j = 0;
        for (int k = 1; k < P; k++) {
            while (j < total && w < (double)k * W / P) w += all[j++].weight;
            cuts[k - 1] = j < total ? all[j] : (sample){UINT64_MAX, INT64_MAX, 0};
        }
    }
    grove__free(counts);
    grove__free(all);
    return s;
}

/* The received records ordered by global row, into *out. */
static grove_status by_row(const char *got, size_t rec, size_t n, int threads, char **out)
{
    uint64_t *rows = grove__malloc((n ? n : 1) * sizeof *rows, "mpi domain rows");
    uint32_t *order = grove__malloc((n ? n : 1) * sizeof *order, "mpi domain rows");
    *out = grove__malloc((n ? n : 1) * rec, "mpi domain records");
    grove_status s = rows && order && *out ? GROVE_OK : GROVE_OUT_OF_MEMORY;
    for (size_t i = 0; s == GROVE_OK && i < n; i++) {
        rows[i] = (uint64_t)row_of(got + i * rec);
        order[i] = (uint32_t)i;
    }
    if (s == GROVE_OK) s = grove__radix_sort_u64(rows, order, n, threads);
    for (size_t i = 0; s == GROVE_OK && i < n; i++) memcpy(*out + i * rec, got + (size_t)order[i] * rec, rec);
    grove__free(rows);
    grove__free(order);
    return s;
}

int grove__mpi_domain(const grove__mpi_cut *cuts, int ranks, uint64_t key, int64_t row)
{
    int lo = 0, hi = ranks - 1; /* the answer: the cuts at or below (key, row) */
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (before(key, row, cuts[mid].key, cuts[mid].row)) hi = mid;
        else lo = mid + 1;
    }
    return lo;
}

/* The records sent to the domains of the P - 1 cuts. */
static grove_status redistribute(const grove_mpi *mpi, const uint64_t *keys, const void *records, size_t rec, size_t n,
                                 const grove__mpi_cut *cuts, int threads, void **out, size_t *nout)
{
    int P = mpi->size;
    *out = NULL;
    *nout = 0;
    int *dest = grove__malloc((n ? n : 1) * sizeof *dest, "mpi domain records");
    int *counts = grove__calloc(3 * (size_t)P, sizeof *counts, "mpi domain counts");
    char *send = grove__malloc((n ? n : 1) * rec, "mpi domain records");
    grove_status s = grove__mpi_agree(mpi, dest && counts && send ? GROVE_OK : GROVE_OUT_OF_MEMORY, "domains");
    const char *recs = records;
    for (size_t i = 0; s == GROVE_OK && i < n; i++) {
        dest[i] = grove__mpi_domain(cuts, P, keys[i], row_of(recs + i * rec));
        counts[dest[i]]++;
    }
    /* Each rank's records consecutive, in input order. */
    int *at = counts + 2 * P;
    for (int r = 1; s == GROVE_OK && r < P; r++) at[r] = at[r - 1] + counts[r - 1];
    for (size_t i = 0; s == GROVE_OK && i < n; i++) memcpy(send + (size_t)at[dest[i]]++ * rec, recs + i * rec, rec);
    void *got = NULL;
    size_t m = 0;
    if (s == GROVE_OK)
        s = grove__mpi_alltoallv_records(mpi, "domains", send, counts, rec, &got, counts + P, &m, "particles");
    grove__free(send);
    grove__free(dest);
    if (s == GROVE_OK) s = by_row(got, rec, m, threads, (char **)out);
    grove__free(got);
    grove__free(counts);
    s = grove__mpi_agree(mpi, s, "domains");
    if (s == GROVE_OK) *nout = m;
    else {
        grove__free(*out);
        *out = NULL;
    }
    return s;
}

grove_status grove__mpi_decompose(const grove_mpi *mpi, const uint64_t *keys, const void *records, size_t rec,
                                  size_t n, double weight, int threads, grove__mpi_cut *kept, void **out,
                                  size_t *nout)
{
    int P = mpi->size;
    *out = NULL;
    *nout = 0;
    uint64_t *key = grove__malloc((n ? n : 1) * sizeof *key, "mpi domain keys");
    uint32_t *order = grove__malloc((n ? n : 1) * sizeof *order, "mpi domain keys");
    sample *cuts = grove__malloc((size_t)P * sizeof *cuts, "mpi domain cuts");
    grove__mpi_cut *cut = grove__malloc((size_t)P * sizeof *cut, "mpi domain cuts");
    grove_status s = key && order && cuts && cut ? GROVE_OK : GROVE_OUT_OF_MEMORY;
    for (size_t i = 0; s == GROVE_OK && i < n; i++) {
        key[i] = keys[i];
        order[i] = (uint32_t)i;
    }
    if (s == GROVE_OK) s = grove__radix_sort_u64(key, order, n, threads);
    s = grove__mpi_agree(mpi, s, "domains");
    if (s == GROVE_OK) s = choose_cuts(mpi, key, order, records, rec, n, weight, cuts);
    for (int k = 0; s == GROVE_OK && k < P - 1; k++) cut[k] = (grove__mpi_cut){cuts[k].key, cuts[k].row};
    grove__free(key);
    grove__free(order);
    grove__free(cuts);
    if (s == GROVE_OK) s = redistribute(mpi, keys, records, rec, n, cut, threads, out, nout);
    if (s == GROVE_OK && kept) memcpy(kept, cut, (size_t)(P - 1) * sizeof *cut);
    grove__free(cut);
    return s;
}
