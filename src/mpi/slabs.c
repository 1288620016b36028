/* The slab decomposition (slabs.h): the scale and the variance order of
 * the whole data (the largest |coordinate| by a reduction, the variance
 * passes continued rank after rank, grove__mpi_chain_sums), cuts at
 * sampled quantiles of the highest-variance dimension (a sample sort), and
 * the exchange of the points to their slabs by MPI_Alltoallv. */
#include "slabs.h"

#include "../index/search_index.h"

#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Samples per rank for the cuts (of the data and queries together). */
#define SAMPLES_PER_RANK 256

/* Shapes and dtypes that agree across ranks, and no periodic box. */
static grove_status check_inputs(const grove__slabs *pl, grove_points data, const grove_points *queries,
                                 const grove_index_params *ip, size_t *d)
{
    const grove_mpi *mpi = pl->mpi;
    unsigned long mine[2] = {data.d, queries && queries->n ? queries->d : 0}, most[2];
    MPI_Allreduce(mine, most, 2, MPI_UNSIGNED_LONG, MPI_MAX, mpi->comm);
    *d = most[0];
    int dt[2] = {(int)data.dtype, -(int)data.dtype}, dtr[2];
    MPI_Allreduce(dt, dtr, 2, MPI_INT, MPI_MAX, mpi->comm);
    if (ip && ip->boxsize_count)
        return grove__fail(GROVE_UNSUPPORTED, "%s: a periodic box runs on one process only (docs/mpi.md)", pl->what);
    if (data.n && data.d != most[0])
        return grove__fail(GROVE_INVALID_ARGUMENT, "%s: data have d = %zu here but %lu on another rank", pl->what,
                           data.d, most[0]);
    if (dtr[0] != -dtr[1]) return grove__fail(GROVE_INVALID_ARGUMENT, "%s: the ranks' data differ in dtype", pl->what);
    if (queries && queries->n && queries->d != most[0])
        return grove__fail(GROVE_INVALID_ARGUMENT, "queries have d = %zu dimensions but the data have %lu",
                           queries->d, most[0]);
    if (queries && queries->n && queries->dtype != data.dtype)
        return grove__fail(GROVE_UNSUPPORTED, "%s: queries of another dtype than the data's run on one process "
                                              "only (convert them first)",
                           pl->what);
    return GROVE_OK;
}

/* Scale, variance order and row offsets, from every rank's points. */
static grove_status agree_scale(grove__slabs *pl, grove_points data, const grove_points *queries)
{
    const grove_mpi *mpi = pl->mpi;
    double mag[2] = {0, 0}, most[2];
    /* The offsets first: a message names the row in the whole input. */
    grove__mpi_offsets(mpi, data.n, pl->doff);
    grove__mpi_offsets(mpi, queries ? queries->n : data.n, pl->qoff);
    grove_status s = grove__points_validate_part(data, (size_t)pl->doff[mpi->rank], pl->threads, &mag[0]);
    if (s == GROVE_OK && queries) {
        s = grove__points_validate_part(*queries, (size_t)pl->qoff[mpi->rank], pl->threads, &mag[1]);
        if (s != GROVE_OK) grove__error_prefix("queries");
    }
    s = grove__mpi_agree(mpi, s, pl->what);
    if (s != GROVE_OK) return s;
    MPI_Allreduce(mag, most, 2, MPI_DOUBLE, MPI_MAX, mpi->comm);
    size_t n = (size_t)pl->doff[mpi->size], terms;
    if (n > (size_t)UINT32_MAX - 1)
        return grove__fail(GROVE_TOO_LARGE, "%s: %zu points; an index holds at most 2^32 - 2", pl->what, n);
    if (!grove__mul_size(n, pl->d, &terms)) terms = SIZE_MAX;
    pl->exponent = grove__range_exponent(most[1] > most[0] ? most[1] : most[0], terms, pl->dtype);
    double scale = ldexp(1, -pl->exponent);
    grove_points p = data;
    p.d = pl->d;
    double *mean = grove__calloc(2 * pl->d, sizeof *mean, "slab variances"), *var = mean ? mean + pl->d : NULL;
    s = grove__mpi_agree(mpi, mean ? GROVE_OK : GROVE_OUT_OF_MEMORY, pl->what);
    if (s != GROVE_OK) return s;
    grove__mpi_chain_sums(mpi, p, scale, NULL, pl->threads, mean);
    for (size_t j = 0; j < pl->d; j++) mean[j] /= (double)(n ? n : 1);
    grove__mpi_chain_sums(mpi, p, scale, mean, pl->threads, var);
    grove__dims_by_variance(var, pl->d, pl->order);
    grove__free(mean);
    /* A pair within eps as the kernels round it is within eps (1 + 2^-22)
     * plus the resolution of the squares along every dimension. */
    double tiny = sqrt(pl->dtype == GROVE_FLOAT32 ? (double)FLT_MIN : DBL_MIN);
    pl->halo = ldexp(tiny, pl->exponent);
    return GROVE_OK;
}

static double key(const grove__slabs *pl, grove_points p, size_t stride, size_t i)
{
    return grove__coord(p, stride, i, pl->order[0]);
}

/* Every rank's samples of the slab axis, taken at global rows that are
 * multiples of a common step, and the cuts between the slabs. */
static grove_status choose_cuts(grove__slabs *pl, grove_points data, const grove_points *queries)
{
    int P = pl->mpi->size;
    int64_t total = pl->doff[P] + (queries ? pl->qoff[P] : 0);
    int64_t step = total / ((int64_t)SAMPLES_PER_RANK * P);
    step = step > 0 ? step : 1;
    grove_points sets[2] = {data, queries ? *queries : data};
    const int64_t *offs[2] = {pl->doff, pl->qoff};
    size_t count = 0, cap = (size_t)(data.n / (size_t)step + 2) + (queries ? queries->n / (size_t)step + 2 : 0);
    double *samples = grove__malloc(cap * sizeof *samples, "slab samples");
    grove_status s = grove__mpi_agree(pl->mpi, samples ? GROVE_OK : GROVE_OUT_OF_MEMORY, pl->what);
    if (s != GROVE_OK) return s;
    for (int k = 0; k < (queries ? 2 : 1); k++) {
        size_t stride = grove__points_stride(sets[k]);
        int64_t first = offs[k][pl->mpi->rank], i0 = (step - first % step) % step;
        for (int64_t i = i0; i < (int64_t)sets[k].n; i += step) samples[count++] = key(pl, sets[k], stride, (size_t)i);
    }
    s = grove__mpi_cuts(pl->mpi, samples, count, pl->cuts);
    grove__free(samples);
    return s;
}

grove_status grove__slabs_plan(grove__slabs *pl, grove_points data, const grove_points *queries,
                               const grove_index_params *ip, double eps, size_t extra)
{
    const grove_mpi *mpi = pl->mpi;
    int P = mpi->size;
    pl->dtype = data.dtype;
    grove_status s = grove__mpi_agree(mpi, check_inputs(pl, data, queries, ip, &pl->d), pl->what);
    if (s != GROVE_OK) return s;
    pl->es = pl->dtype == GROVE_FLOAT32 ? sizeof(float) : sizeof(double);
    pl->extra = extra;
    pl->rec = sizeof(int64_t) + pl->d * pl->es + extra;
    pl->eps = eps;
    pl->order = grove__malloc((pl->d ? pl->d : 1) * sizeof *pl->order, "slab order");
    pl->doff = grove__malloc(2 * ((size_t)P + 1) * sizeof *pl->doff, "slab offsets");
    pl->qoff = pl->doff ? pl->doff + P + 1 : NULL;
    pl->cuts = grove__malloc((size_t)P * sizeof *pl->cuts, "slab cuts");
    s = grove__mpi_agree(mpi, pl->order && pl->doff && pl->cuts ? GROVE_OK : GROVE_OUT_OF_MEMORY, pl->what);
    if (s == GROVE_OK && pl->d == 0) s = grove__fail(GROVE_INVALID_ARGUMENT, "index: points have d = 0 dimensions");
    if (s == GROVE_OK) s = grove__mpi_agree(mpi, agree_scale(pl, data, queries), pl->what);
    if (s == GROVE_OK) s = choose_cuts(pl, data, queries);
    return s;
}

void grove__slabs_free(grove__slabs *pl)
{
    grove__free(pl->order);
    grove__free(pl->doff);
    grove__free(pl->cuts);
    pl->order = NULL;
    pl->doff = pl->qoff = NULL;
    pl->cuts = NULL;
}

void grove__slabs_reach(const grove__slabs *pl, grove_points p, size_t i, int *own, int *lo, int *hi)
{
    int ncuts = pl->mpi->size - 1;
    double x = key(pl, p, grove__points_stride(p), i), h = (pl->halo + pl->eps) * (1 + 0x1p-16);
    *own = grove__mpi_slab(pl->cuts, ncuts, x);
    *lo = grove__mpi_slab(pl->cuts, ncuts, nextafter(x - h, -INFINITY));
    *hi = grove__mpi_slab(pl->cuts, ncuts, nextafter(x + h, INFINITY));
}

/* The records of one point set for every slab: counted (buf NULL) or
 * written at cursor[k] records into buf's part for slab k. A record is the
 * global row << 2 | its roles in that slab, the coordinates in the input
 * dtype, and the set's extra bytes (when it has them). */
static void route(const grove__slabs *pl, grove_points p, const char *extra, int64_t offset, int roles, int *counts,
                  char *buf, size_t *cursor)
{
    size_t stride = grove__points_stride(p), bytes = pl->d * pl->es;
    for (size_t i = 0; i < p.n; i++) {
        int own, lo, hi;
        grove__slabs_reach(pl, p, i, &own, &lo, &hi);
        if (!(roles & GROVE__SLAB_DATA)) lo = hi = own;
        for (int k = lo; k <= hi; k++) {
            if (!buf) {
                counts[k]++;
                continue;
            }
            int64_t tag = (offset + (int64_t)i) << 2 | (roles & GROVE__SLAB_DATA) |
                          (k == own ? roles & GROVE__SLAB_QUERY : 0);
            char *rec = buf + cursor[k]++ * pl->rec;
            memcpy(rec, &tag, sizeof tag);
            memcpy(rec + sizeof tag, (const char *)p.data + i * stride, bytes);
            if (extra && pl->extra) memcpy(rec + sizeof tag + bytes, extra + i * pl->extra, pl->extra);
        }
    }
}

typedef struct tagged {
    int64_t tag;
    size_t at;
} tagged;

static int compare_tag(const void *a, const void *b)
{
    int64_t x = ((const tagged *)a)->tag >> 2, y = ((const tagged *)b)->tag >> 2;
    return (x > y) - (x < y);
}

/* The records with `role`, by global row (their extra bytes when
 * with_extra; the roles of each when keep_roles). */
static grove_status collect(const grove__slabs *pl, const char *recs, size_t nrec, int role, bool with_extra,
                            bool keep_roles, grove__slab_set *out)
{
    memset(out, 0, sizeof *out);
    tagged *t = grove__malloc((nrec ? nrec : 1) * sizeof *t, "slab points");
    if (!t) return GROVE_OUT_OF_MEMORY;
    size_t n = 0, bytes = pl->d * pl->es, extra = with_extra ? pl->extra : 0;
    for (size_t i = 0; i < nrec; i++) {
        int64_t tag;
        memcpy(&tag, recs + i * pl->rec, sizeof tag);
        if (tag & role) t[n++] = (tagged){tag, i};
    }
    qsort(t, n, sizeof *t, compare_tag);
    out->n = n;
    out->rows = grove__malloc((n ? n : 1) * sizeof *out->rows, "slab rows");
    out->coords = grove__malloc((n ? n : 1) * bytes, "slab points");
    out->extra = extra ? grove__malloc((n ? n : 1) * extra, "slab points") : NULL;
    out->roles = keep_roles ? grove__malloc(n ? n : 1, "slab roles") : NULL;
    grove_status s = out->rows && out->coords && (!extra || out->extra) && (!keep_roles || out->roles)
                         ? GROVE_OK
                         : GROVE_OUT_OF_MEMORY;
    for (size_t i = 0; s == GROVE_OK && i < n; i++) {
        const char *rec = recs + t[i].at * pl->rec;
        out->rows[i] = t[i].tag >> 2;
        memcpy((char *)out->coords + i * bytes, rec + sizeof(int64_t), bytes);
        if (extra) memcpy((char *)out->extra + i * extra, rec + sizeof(int64_t) + bytes, extra);
        if (keep_roles) out->roles[i] = (uint8_t)(t[i].tag & 3);
    }
    grove__free(t);
    return s;
}

grove_points grove__slab_points(const grove__slabs *pl, const grove__slab_set *s)
{
    grove_points p = {s->coords, s->n, pl->d, pl->dtype, 0};
    return p;
}

grove_status grove__slab_index(const grove__slabs *pl, const grove__slab_set *s, const grove_index_params *ip,
                               const grove_options *local, grove_index **ix)
{
    grove_points p = grove__slab_points(pl, s);
    grove_index_params shape;
    grove_index_params_init(&shape);
    if (ip) shape = *ip;
    double magnitude;
    grove_status st = grove__points_validate_range(p, pl->threads, &magnitude);
    if (st == GROVE_OK) st = grove__index_build_ordered(p, magnitude, pl->exponent, pl->order, &shape, local, ix);
    return st;
}

void grove__slab_set_free(grove__slab_set *s)
{
    grove__free(s->rows);
    grove__free(s->coords);
    grove__free(s->extra);
    grove__free(s->roles);
    memset(s, 0, sizeof *s);
}

grove_status grove__slabs_exchange(const grove__slabs *pl, grove_points data, const grove_points *queries,
                                   const void *extra, const void *qextra, grove__slab_set *D, grove__slab_set *Q)
{
    int P = pl->mpi->size, rank = pl->mpi->rank;
    int *counts = grove__calloc(2 * (size_t)P, sizeof *counts, "slab routes"), *got = counts ? counts + P : NULL;
    size_t *cursor = grove__calloc((size_t)P, sizeof *cursor, "slab routes");
    grove_status s = grove__mpi_agree(pl->mpi, counts && cursor ? GROVE_OK : GROVE_OUT_OF_MEMORY, pl->what);
    char *buf = NULL;
    void *recs = NULL;
    int self = queries ? GROVE__SLAB_DATA : GROVE__SLAB_DATA | GROVE__SLAB_QUERY;
    if (s == GROVE_OK) {
        route(pl, data, extra, pl->doff[rank], self, counts, NULL, NULL);
        if (queries) route(pl, *queries, qextra, pl->qoff[rank], GROVE__SLAB_QUERY, counts, NULL, NULL);
        size_t total = 0;
        for (int r = 0; r < P; r++) {
            cursor[r] = total;
            total += (size_t)counts[r];
        }
        buf = grove__malloc((total ? total : 1) * pl->rec, "slab send buffer");
        s = grove__mpi_agree(pl->mpi, buf ? GROVE_OK : GROVE_OUT_OF_MEMORY, pl->what);
        if (s == GROVE_OK) {
            route(pl, data, extra, pl->doff[rank], self, NULL, buf, cursor);
            if (queries) route(pl, *queries, qextra, pl->qoff[rank], GROVE__SLAB_QUERY, NULL, buf, cursor);
        }
    }
    MPI_Datatype rec;
    MPI_Type_contiguous((int)pl->rec, MPI_BYTE, &rec);
    MPI_Type_commit(&rec);
    if (s == GROVE_OK) s = grove__mpi_alltoallv(pl->mpi, pl->what, buf, counts, rec, pl->rec, &recs, got, "points");
    MPI_Type_free(&rec);
    grove__free(buf);
    size_t nrec = 0;
    for (int r = 0; s == GROVE_OK && r < P; r++) nrec += (size_t)got[r];
    memset(D, 0, sizeof *D);
    if (Q) memset(Q, 0, sizeof *Q);
    if (s == GROVE_OK) s = collect(pl, recs, nrec, GROVE__SLAB_DATA, true, !Q, D);
    if (s == GROVE_OK && Q) s = collect(pl, recs, nrec, GROVE__SLAB_QUERY, pl->query_extra, false, Q);
    grove__free(recs);
    grove__free(counts);
    grove__free(cursor);
    return grove__mpi_agree(pl->mpi, s, pl->what);
}
