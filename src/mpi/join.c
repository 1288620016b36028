/* The distributed epsilon join (docs/mpi.md). Rank r holds rows
 * offset_r .. offset_r + n_r - 1 of the global data (and, for a semi-join,
 * of the global queries); it gets back the CSR rows of its own queries
 * with global data rows, the bytes the single-process grove_join gives.
 *
 * The scale and the variance order are those of the whole data: the
 * largest |coordinate| by a reduction, the variance passes continued rank
 * after rank (grove__mpi_chain_sums), so every rank's local index sums a
 * pair's squared distance in the same order and units. Space is cut into
 * slabs along the highest-variance dimension at sampled quantiles (a
 * sample sort); each query goes to the slab holding it, each data point to
 * every slab within eps (plus any rounding) of it, by MPI_Alltoallv; each
 * slab joins its queries on its data sorted by global row, and the rows go
 * back to their queries' ranks. */
#include "mpi_internal.h"

#include "../index/search_index.h"
#include "../join/join.h"

#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Samples per rank for the cuts (of the data and queries together). */
#define SAMPLES_PER_RANK 256

/* What every rank agrees on before the exchange. */
typedef struct plan {
    const grove_mpi *mpi;
    size_t d, es, rec;     /* dimensions, bytes per coordinate, bytes per record */
    grove_dtype dtype;
    int exponent, threads;
    size_t *order;         /* variance order of the whole data */
    int64_t *doff, *qoff;  /* rows before each rank: data, queries (P + 1 each) */
    double *cuts;          /* P - 1 slab cuts along input dimension order[0] */
    double eps, halo;      /* the radius; the rounding a slab's data reach adds to it */
} plan;

/* A record on the wire: global row << 2 | 1 (a data point) | 2 (a query),
 * then the coordinates in the input dtype. */
enum { ROLE_DATA = 1, ROLE_QUERY = 2 };

/* Shapes and dtypes that agree across ranks, and no periodic box. */
static grove_status check_inputs(const grove_mpi *mpi, grove_points data, const grove_points *queries,
                                 const grove_index_params *ip, const grove_join_params *params, size_t *d)
{
    unsigned long mine[2] = {data.d, queries && queries->n ? queries->d : 0}, most[2];
    MPI_Allreduce(mine, most, 2, MPI_UNSIGNED_LONG, MPI_MAX, mpi->comm);
    *d = most[0];
    int dt[2] = {(int)data.dtype, -(int)data.dtype}, dtr[2];
    MPI_Allreduce(dt, dtr, 2, MPI_INT, MPI_MAX, mpi->comm);
    if (ip && ip->boxsize_count)
        return grove__fail(GROVE_UNSUPPORTED, "join: a periodic box runs on one process only (docs/mpi.md)");
    if (queries && params->exclude_self)
        return grove__fail(GROVE_INVALID_ARGUMENT, "exclude_self applies to self-joins only (queries were given)");
    if (data.n && data.d != most[0])
        return grove__fail(GROVE_INVALID_ARGUMENT, "join: data have d = %zu here but %lu on another rank", data.d,
                           most[0]);
    if (dtr[0] != -dtr[1]) return grove__fail(GROVE_INVALID_ARGUMENT, "join: the ranks' data differ in dtype");
    if (queries && queries->n && queries->d != most[0])
        return grove__fail(GROVE_INVALID_ARGUMENT, "queries have d = %zu dimensions but the data have %lu",
                           queries->d, most[0]);
    if (queries && queries->n && queries->dtype != data.dtype)
        return grove__fail(GROVE_UNSUPPORTED, "join: queries of another dtype than the data's run on one process "
                                              "only (convert them first)");
    return GROVE_OK;
}

/* Scale, variance order and row offsets, from every rank's points. */
static grove_status agree_scale(plan *pl, grove_points data, const grove_points *queries)
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
    s = grove__mpi_agree(mpi, s, "join");
    if (s != GROVE_OK) return s;
    MPI_Allreduce(mag, most, 2, MPI_DOUBLE, MPI_MAX, mpi->comm);
    size_t n = (size_t)pl->doff[mpi->size], terms;
    if (n > (size_t)UINT32_MAX - 1)
        return grove__fail(GROVE_TOO_LARGE, "join: %zu points; an index holds at most 2^32 - 2", n);
    if (!grove__mul_size(n, pl->d, &terms)) terms = SIZE_MAX;
    pl->exponent = grove__range_exponent(most[1] > most[0] ? most[1] : most[0], terms, pl->dtype);
    double scale = ldexp(1, -pl->exponent);
    grove_points p = data;
    p.d = pl->d;
    double *mean = grove__calloc(2 * pl->d, sizeof *mean, "join variances"), *var = mean ? mean + pl->d : NULL;
    s = grove__mpi_agree(mpi, mean ? GROVE_OK : GROVE_OUT_OF_MEMORY, "join");
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

static double key(const plan *pl, grove_points p, size_t stride, size_t i)
{
    return grove__coord(p, stride, i, pl->order[0]);
}

/* Every rank's samples of the slab axis, taken at global rows that are
 * multiples of a common step, and the cuts between the slabs. */
static grove_status choose_cuts(plan *pl, grove_points data, const grove_points *queries)
{
    int P = pl->mpi->size;
    int64_t total = pl->doff[P] + (queries ? pl->qoff[P] : 0);
    int64_t step = total / ((int64_t)SAMPLES_PER_RANK * P);
    step = step > 0 ? step : 1;
    grove_points sets[2] = {data, queries ? *queries : data};
    const int64_t *offs[2] = {pl->doff, pl->qoff};
    size_t count = 0, cap = (size_t)(data.n / (size_t)step + 2) + (queries ? queries->n / (size_t)step + 2 : 0);
    double *samples = grove__malloc(cap * sizeof *samples, "join samples");
    grove_status s = grove__mpi_agree(pl->mpi, samples ? GROVE_OK : GROVE_OUT_OF_MEMORY, "join");
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

/* The records of one point set for every slab: counted (buf NULL) or
 * written at cursor[k] records into buf's part for slab k. */
static void route(const plan *pl, grove_points p, int64_t offset, int roles, int *counts, char *buf, size_t *cursor)
{
    int ncuts = pl->mpi->size - 1;
    size_t stride = grove__points_stride(p), bytes = pl->d * pl->es;
    double h = (pl->halo + pl->eps) * (1 + 0x1p-16);
    for (size_t i = 0; i < p.n; i++) {
        double x = key(pl, p, stride, i);
        int own = grove__mpi_slab(pl->cuts, ncuts, x), lo = own, hi = own;
        if (roles & ROLE_DATA) {
            lo = grove__mpi_slab(pl->cuts, ncuts, nextafter(x - h, -INFINITY));
            hi = grove__mpi_slab(pl->cuts, ncuts, nextafter(x + h, INFINITY));
        }
        for (int k = lo; k <= hi; k++) {
            if (!buf) {
                counts[k]++;
                continue;
            }
            int64_t tag = (offset + (int64_t)i) << 2 | (roles & ROLE_DATA) | (k == own ? roles & ROLE_QUERY : 0);
            char *rec = buf + cursor[k]++ * pl->rec;
            memcpy(rec, &tag, sizeof tag);
            memcpy(rec + sizeof tag, (const char *)p.data + i * stride, bytes);
        }
    }
}

/* The points one slab got: records of one role by global row. */
typedef struct slab_set {
    size_t n;
    int64_t *rows;  /* global rows, ascending */
    void *coords;   /* n x d, input dtype */
} slab_set;

typedef struct tagged {
    int64_t tag;
    size_t at;
} tagged;

static int compare_tag(const void *a, const void *b)
{
    int64_t x = ((const tagged *)a)->tag >> 2, y = ((const tagged *)b)->tag >> 2;
    return (x > y) - (x < y);
}

static grove_status collect(const plan *pl, const char *recs, size_t nrec, int role, slab_set *out)
{
    memset(out, 0, sizeof *out);
    tagged *t = grove__malloc((nrec ? nrec : 1) * sizeof *t, "join slab");
    if (!t) return GROVE_OUT_OF_MEMORY;
    size_t n = 0, bytes = pl->d * pl->es;
    for (size_t i = 0; i < nrec; i++) {
        int64_t tag;
        memcpy(&tag, recs + i * pl->rec, sizeof tag);
        if (tag & role) t[n++] = (tagged){tag, i};
    }
    qsort(t, n, sizeof *t, compare_tag);
    out->n = n;
    out->rows = grove__malloc((n ? n : 1) * sizeof *out->rows, "join slab rows");
    out->coords = grove__malloc((n ? n : 1) * bytes, "join slab points");
    grove_status s = out->rows && out->coords ? GROVE_OK : GROVE_OUT_OF_MEMORY;
    for (size_t i = 0; s == GROVE_OK && i < n; i++) {
        out->rows[i] = t[i].tag >> 2;
        memcpy((char *)out->coords + i * bytes, recs + t[i].at * pl->rec + sizeof(int64_t), bytes);
    }
    grove__free(t);
    return s;
}

static grove_points slab_points(const plan *pl, const slab_set *s)
{
    grove_points p = {s->coords, s->n, pl->d, pl->dtype, 0};
    return p;
}

static void slab_free(slab_set *s)
{
    grove__free(s->rows);
    grove__free(s->coords);
}

/* The slab's join: its queries on its data, in the agreed scale and
 * order, rows mapped to global data rows (the pair (i, i) left out for
 * exclude_self). */
static grove_status slab_join(const plan *pl, const slab_set *D, const slab_set *Q, const grove_index_params *ip,
                              const grove_join_params *params, const grove_options *local, grove_join_result *res)
{
    memset(res, 0, sizeof *res);
    grove_join_params jp = *params;
    jp.exclude_self = 0;
    grove_status s = GROVE_OK;
    if (D->n > 0 && Q->n > 0) {
        grove_points dp = slab_points(pl, D), qp = slab_points(pl, Q);
        double magnitude;
        grove_index *ix = NULL;
        grove_index_params shape;
        grove_index_params_init(&shape);
        if (ip) shape = *ip;
        s = grove__points_validate_range(dp, pl->threads, &magnitude);
        if (s == GROVE_OK) s = grove__index_build_ordered(dp, magnitude, pl->exponent, pl->order, &shape, local, &ix);
        if (s == GROVE_OK) s = grove__join_search_local(ix, &qp, &jp, res, local);
        grove_index_free(ix);
    } else {
        res->nq = Q->n;
        res->offsets = grove__calloc(Q->n + 1, sizeof *res->offsets, "join offsets");
        res->indices = grove__malloc(sizeof *res->indices, "join indices");
        s = res->offsets && res->indices ? GROVE_OK : GROVE_OUT_OF_MEMORY;
    }
    if (s != GROVE_OK) return s;
    int64_t w = 0;
    for (size_t q = 0; q < res->nq; q++) {
        int64_t b = res->offsets[q], e = res->offsets[q + 1];
        res->offsets[q] = w;
        for (int64_t k = b; k < e; k++) {
            int64_t row = D->rows[res->indices[k]];
            if (params->exclude_self && row == Q->rows[q]) continue;
            res->indices[w] = row;
            if (res->distances) res->distances[w] = res->distances[k];
            w++;
        }
    }
    res->offsets[res->nq] = w;
    res->pairs = w;
    return GROVE_OK;
}

/* The slab's rows back to their queries' ranks, into result. */
static grove_status send_home(const plan *pl, const slab_set *Q, const grove_join_result *res, size_t nq,
                              int distances, grove_join_result *result)
{
    int P = pl->mpi->size;
    int *qc = grove__calloc(4 * (size_t)P, sizeof *qc, "join rows"), *pc = qc ? qc + P : NULL;
    int *gqc = qc ? qc + 2 * P : NULL, *gpc = qc ? qc + 3 * P : NULL;
    int64_t *hdr = grove__malloc(2 * (Q->n ? Q->n : 1) * sizeof *hdr, "join rows");
    grove_status s = qc && hdr ? GROVE_OK : GROVE_OUT_OF_MEMORY;
    for (size_t q = 0; s == GROVE_OK && q < Q->n; q++) {
        int home = grove__mpi_home(pl->qoff, P, Q->rows[q]);
        int64_t count = res->offsets[q + 1] - res->offsets[q];
        hdr[2 * q] = Q->rows[q];
        hdr[2 * q + 1] = count;
        qc[home]++;
        if (count > INT_MAX - pc[home]) s = grove__fail(GROVE_TOO_LARGE, "join: more than 2^31 - 1 pairs to one rank");
        else pc[home] += (int)count;
    }
    s = grove__mpi_agree(pl->mpi, s, "join");
    MPI_Datatype pair;
    MPI_Type_contiguous(2, MPI_INT64_T, &pair);
    MPI_Type_commit(&pair);
    void *ghdr = NULL, *gind = NULL, *gdist = NULL;
    const grove_mpi *mpi = pl->mpi;
    if (s == GROVE_OK)
        s = grove__mpi_alltoallv(mpi, "join", hdr, qc, pair, 2 * sizeof(int64_t), &ghdr, gqc, "row headers");
    if (s == GROVE_OK)
        s = grove__mpi_alltoallv(mpi, "join", res->indices, pc, MPI_INT64_T, sizeof(int64_t), &gind, gpc, "pairs");
    if (s == GROVE_OK && distances)
        s = grove__mpi_alltoallv(mpi, "join", res->distances, pc, MPI_DOUBLE, sizeof(double), &gdist, gpc,
                                 "distances");
    MPI_Type_free(&pair);
    size_t nh = 0;
    for (int r = 0; s == GROVE_OK && r < P; r++) nh += (size_t)gqc[r];
    if (s == GROVE_OK && nh != nq)
        s = grove__fail(GROVE_INTERNAL, "join: %zu rows came back for %zu queries", nh, nq);
    if (s == GROVE_OK) {
        result->nq = nq;
        result->offsets = grove__calloc(nq + 1, sizeof *result->offsets, "join offsets");
        s = result->offsets ? GROVE_OK : GROVE_OUT_OF_MEMORY;
    }
    const int64_t *h = ghdr, first = pl->qoff[pl->mpi->rank];
    for (size_t i = 0; s == GROVE_OK && i < nh; i++) result->offsets[h[2 * i] - first + 1] = h[2 * i + 1];
    for (size_t q = 0; s == GROVE_OK && q < nq; q++) result->offsets[q + 1] += result->offsets[q];
    if (s == GROVE_OK) {
        result->pairs = result->offsets[nq];
        size_t m = result->pairs ? (size_t)result->pairs : 1;
        result->indices = grove__malloc(m * sizeof *result->indices, "join indices");
        result->distances = distances ? grove__malloc(m * sizeof *result->distances, "join distances") : NULL;
        if (!result->indices || (distances && !result->distances)) s = GROVE_OUT_OF_MEMORY;
    }
    /* Headers and pairs come in the same order, source by source. */
    size_t at = 0;
    for (size_t i = 0; s == GROVE_OK && i < nh; i++) {
        size_t count = (size_t)h[2 * i + 1], to = (size_t)result->offsets[h[2 * i] - first];
        memcpy(result->indices + to, (const int64_t *)gind + at, count * sizeof(int64_t));
        if (distances) memcpy(result->distances + to, (const double *)gdist + at, count * sizeof(double));
        at += count;
    }
    grove__free(ghdr);
    grove__free(gind);
    grove__free(gdist);
    grove__free(hdr);
    grove__free(qc);
    return grove__mpi_agree(pl->mpi, s, "join");
}

/* The exchange of the points to their slabs and the slab's two sets. */
static grove_status exchange(const plan *pl, grove_points data, const grove_points *queries, slab_set *D,
                             slab_set *Q)
{
    int P = pl->mpi->size, rank = pl->mpi->rank;
    int *counts = grove__calloc(2 * (size_t)P, sizeof *counts, "join routes"), *got = counts ? counts + P : NULL;
    size_t *cursor = grove__calloc((size_t)P, sizeof *cursor, "join routes");
    grove_status s = grove__mpi_agree(pl->mpi, counts && cursor ? GROVE_OK : GROVE_OUT_OF_MEMORY, "join");
    char *buf = NULL;
    void *recs = NULL;
    if (s == GROVE_OK) {
        int self = queries ? ROLE_DATA : ROLE_DATA | ROLE_QUERY;
        route(pl, data, pl->doff[rank], self, counts, NULL, NULL);
        if (queries) route(pl, *queries, pl->qoff[rank], ROLE_QUERY, counts, NULL, NULL);
        size_t total = 0;
        for (int r = 0; r < P; r++) {
            cursor[r] = total;
            total += (size_t)counts[r];
        }
        buf = grove__malloc((total ? total : 1) * pl->rec, "join send buffer");
        s = grove__mpi_agree(pl->mpi, buf ? GROVE_OK : GROVE_OUT_OF_MEMORY, "join");
        if (s == GROVE_OK) {
            route(pl, data, pl->doff[rank], self, NULL, buf, cursor);
            if (queries) route(pl, *queries, pl->qoff[rank], ROLE_QUERY, NULL, buf, cursor);
        }
    }
    MPI_Datatype rec;
    MPI_Type_contiguous((int)pl->rec, MPI_BYTE, &rec);
    MPI_Type_commit(&rec);
    if (s == GROVE_OK) s = grove__mpi_alltoallv(pl->mpi, "join", buf, counts, rec, pl->rec, &recs, got, "points");
    MPI_Type_free(&rec);
    grove__free(buf);
    size_t nrec = 0;
    for (int r = 0; s == GROVE_OK && r < P; r++) nrec += (size_t)got[r];
    memset(D, 0, sizeof *D);
    memset(Q, 0, sizeof *Q);
    if (s == GROVE_OK) s = collect(pl, recs, nrec, ROLE_DATA, D);
    if (s == GROVE_OK) s = collect(pl, recs, nrec, ROLE_QUERY, Q);
    grove__free(recs);
    grove__free(counts);
    grove__free(cursor);
    return grove__mpi_agree(pl->mpi, s, "join");
}

grove_status grove__mpi_join(grove_points data, const grove_points *queries, const grove_index_params *index_params,
                             const grove_join_params *params, grove_join_result *result,
                             const grove_options *options)
{
    grove__clear_error();
    if (!result) return grove__fail(GROVE_INVALID_ARGUMENT, "join: result is NULL");
    memset(result, 0, sizeof *result);
    grove_status s = grove__join_params_check(params);
    if (s != GROVE_OK) return s;
    const grove_mpi *mpi = options->mpi;
    int P = mpi->size;
    plan pl;
    memset(&pl, 0, sizeof pl);
    pl.mpi = mpi;
    pl.dtype = data.dtype;
    pl.threads = grove__options(options).threads;
    s = grove__mpi_agree(mpi, check_inputs(mpi, data, queries, index_params, params, &pl.d), "join");
    if (s != GROVE_OK) return s;
    pl.es = pl.dtype == GROVE_FLOAT32 ? sizeof(float) : sizeof(double);
    pl.rec = sizeof(int64_t) + pl.d * pl.es;
    pl.eps = params->eps;
    pl.order = grove__malloc((pl.d ? pl.d : 1) * sizeof *pl.order, "join order");
    pl.doff = grove__malloc(2 * ((size_t)P + 1) * sizeof *pl.doff, "join offsets");
    pl.qoff = pl.doff ? pl.doff + P + 1 : NULL;
    pl.cuts = grove__malloc((size_t)P * sizeof *pl.cuts, "join cuts");
    s = grove__mpi_agree(mpi, pl.order && pl.doff && pl.cuts ? GROVE_OK : GROVE_OUT_OF_MEMORY, "join");
    if (s == GROVE_OK && pl.d == 0) s = grove__fail(GROVE_INVALID_ARGUMENT, "index: points have d = 0 dimensions");
    if (s == GROVE_OK) s = grove__mpi_agree(mpi, agree_scale(&pl, data, queries), "join");
    if (s == GROVE_OK) s = choose_cuts(&pl, data, queries);
    slab_set D = {0}, Q = {0};
    grove_join_result res = {0};
    if (s == GROVE_OK) s = exchange(&pl, data, queries, &D, &Q);
    grove_options local = *options;
    local.mpi = NULL;
    if (s == GROVE_OK) s = grove__mpi_agree(mpi, slab_join(&pl, &D, &Q, index_params, params, &local, &res), "join");
    size_t nq = queries ? queries->n : data.n;
    if (s == GROVE_OK) s = send_home(&pl, &Q, &res, nq, params->distances != 0, result);
    grove_join_result_free(&res);
    slab_free(&D);
    slab_free(&Q);
    grove__free(pl.order);
    grove__free(pl.doff);
    grove__free(pl.cuts);
    if (s != GROVE_OK) grove_join_result_free(result);
    return s;
}

int64_t grove_mpi_bytes_sent(const grove_mpi *mpi) { return mpi ? mpi->bytes_sent : 0; }
