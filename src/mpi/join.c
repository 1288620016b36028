/* The distributed epsilon join (docs/mpi.md). Rank r holds rows
 * offset_r .. offset_r + n_r - 1 of the global data (and, for a semi-join,
 * of the global queries); it gets back the CSR rows of its own queries
 * with global data rows, the bytes the single-process grove_join gives.
 *
 * The points go to the slabs of slabs.h (the scale and variance order of
 * the whole data, cuts at sampled quantiles): each query to the slab
 * holding it, each data point to every slab within eps (plus any rounding)
 * of it; each slab joins its queries on its data sorted by global row, and
 * the rows go back to their queries' ranks. */
#include "slabs.h"

#include "../join/join.h"

#include <limits.h>
#include <string.h>

/* The slab's join: its queries on its data, in the agreed scale and
 * order, rows mapped to global data rows (the pair (i, i) left out for
 * exclude_self). */
static grove_status slab_join(const grove__slabs *pl, const grove__slab_set *D, const grove__slab_set *Q,
                              const grove_index_params *ip, const grove_join_params *params,
                              const grove_options *local, grove_join_result *res)
{
    memset(res, 0, sizeof *res);
    grove_join_params jp = *params;
    jp.exclude_self = 0;
    grove_status s = GROVE_OK;
    if (D->n > 0 && Q->n > 0) {
        grove_points qp = grove__slab_points(pl, Q);
        grove_index *ix = NULL;
        s = grove__slab_index(pl, D, ip, local, &ix);
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
static grove_status send_home(const grove__slabs *pl, const grove__slab_set *Q, const grove_join_result *res, size_t nq,
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
    if (queries && params->exclude_self)
        s = grove__fail(GROVE_INVALID_ARGUMENT, "exclude_self applies to self-joins only (queries were given)");
    s = grove__mpi_agree(mpi, s, "join");
    if (s != GROVE_OK) return s;
    grove__slabs pl;
    memset(&pl, 0, sizeof pl);
    pl.mpi = mpi;
    pl.what = "join";
    pl.threads = grove__options(options).threads;
    s = grove__slabs_plan(&pl, data, queries, index_params, params->eps, 0);
    grove__slab_set D = {0}, Q = {0};
    grove_join_result res = {0};
    if (s == GROVE_OK) s = grove__slabs_exchange(&pl, data, queries, NULL, NULL, &D, &Q);
    grove_options local = *options;
    local.mpi = NULL;
    if (s == GROVE_OK) s = grove__mpi_agree(mpi, slab_join(&pl, &D, &Q, index_params, params, &local, &res), "join");
    size_t nq = queries ? queries->n : data.n;
    if (s == GROVE_OK) s = send_home(&pl, &Q, &res, nq, params->distances != 0, result);
    grove_join_result_free(&res);
    grove__slab_set_free(&D);
    grove__slab_set_free(&Q);
    grove__slabs_free(&pl);
    if (s != GROVE_OK) grove_join_result_free(result);
    return s;
}

int64_t grove_mpi_bytes_sent(const grove_mpi *mpi) { return mpi ? mpi->bytes_sent : 0; }
