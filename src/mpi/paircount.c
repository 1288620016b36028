/* The distributed pair counts (docs/paircount.md, docs/mpi.md). Rank r
 * holds some rows of data1 (and of data2 for a cross-correlation) and
 * their weights; every rank gets the counts and weighted sums of the whole
 * sets: the one-process call's.
 *
 * The points go to the slabs of slabs.h (cuts along the highest-variance
 * dimension): every point of the set searched (data2, or data1 in an
 * autocorrelation) with its weight to each slab within reach of it, each
 * query (data1) to the slab holding it. The reach is the largest edge,
 * or with pimax, pimax when the slabs cut pi's dimension. Each slab counts
 * with the one-process pass (src/paircount):
 *  - cross: its queries against its points and ghosts: each pair once, in
 *    its query's slab;
 *  - auto: each unordered pair in the slab of its lower end (by slab): the
 *    pairs among the slab's own points, and those between its own points
 *    and the ghosts from the slabs above.
 * Each rank doubles its autocorrelation's pairs and adds the self pairs
 * of its rows; the counts are summed as integers and the weighted sums as
 * exact accumulators (their digits), so nothing is rounded before the end.
 * Memory per rank: its slab's points and ghosts (on both sides, within
 * reach) with their weights and the slab's index, plus 584 bytes a bin
 * for the weighted sums' reduction. */
#include "slabs.h"

#include "../paircount/paircount.h"

#include <math.h>
#include <string.h>

/* The call's arguments that every rank must give alike. */
static grove_status agree_shape(const grove_mpi *mpi, const grove_points *data2, const double *weighted)
{
    int mine[2] = {data2 != NULL, weighted != NULL}, most[2], least[2];
    MPI_Allreduce(mine, most, 2, MPI_INT, MPI_MAX, mpi->comm);
    MPI_Allreduce(mine, least, 2, MPI_INT, MPI_MIN, mpi->comm);
    grove_status s = GROVE_OK;
    if (most[0] != least[0])
        s = grove__fail(GROVE_INVALID_ARGUMENT, "paircount: data2 given on some ranks but not on others");
    else if (most[1] != least[1])
        s = grove__fail(GROVE_INVALID_ARGUMENT, "paircount: weighted given on some ranks but not on others");
    return s;
}

/* The weights a rank sends with its n points: w, or ones where the set
 * has none (as the one-process pass weighs them); NULL unweighted. */
static grove_status send_weights(const double *w, size_t n, bool weighted, double **ones, const double **out)
{
    *ones = NULL;
    *out = w;
    if (!weighted || w || n == 0) return GROVE_OK;
    *ones = grove__malloc(n * sizeof **ones, "paircount weights");
    if (!*ones) return GROVE_OUT_OF_MEMORY;
    for (size_t i = 0; i < n; i++) (*ones)[i] = 1.0;
    *out = *ones;
    return GROVE_OK;
}

/* The slabs' reach: along the slab axis a counted pair's separation is
 * at most the largest edge, or pi's bound when the axis is pi's
 * dimension (the last). */
static double reach(const grove__slabs *pl, const grove_paircount_params *p)
{
    double rmax = p->edges[p->nedges - 1];
    return p->pimax > 0 && pl->order[0] == pl->d - 1 ? p->pimax : rmax;
}

/* The pass of the slab's queries (NULL: an autocorrelation of D) against
 * D, both with weights as their extra bytes when weighted. */
static grove_status slab_pass(const grove__slabs *pl, const grove__slab_set *D, const grove__slab_set *Q,
                              const grove_paircount_params *p, int64_t *count, grove__xsum *sum,
                              const grove_options *local)
{
    if (D->n == 0 || (Q && Q->n == 0)) return GROVE_OK;
    grove_index *ix = NULL;
    grove_points q = Q ? grove__slab_points(pl, Q) : (grove_points){0};
    grove_status s = grove__slab_index(pl, D, &p->index, local, &ix);
    if (s == GROVE_OK) s = grove__paircount_pass(ix, D->extra, Q ? &q : NULL, Q ? Q->extra : NULL, p, count, sum, local);
    grove_index_free(ix);
    return s;
}

/* An autocorrelation's slab set S (own points and ghosts, by roles) split
 * into its own points and the ghosts from the slabs above. */
static grove_status split_own(const grove__slabs *pl, const grove__slab_set *S, grove__slab_set *own,
                              grove__slab_set *above)
{
    size_t bytes = pl->d * pl->es, n = S->n ? S->n : 1;
    grove__slab_set *sets[2] = {own, above};
    for (int k = 0; k < 2; k++) {
        memset(sets[k], 0, sizeof *sets[k]);
        sets[k]->rows = grove__malloc(n * sizeof *sets[k]->rows, "paircount slab");
        sets[k]->coords = grove__malloc(n * bytes, "paircount slab");
        sets[k]->extra = pl->extra ? grove__malloc(n * pl->extra, "paircount slab") : NULL;
        if (!sets[k]->rows || !sets[k]->coords || (pl->extra && !sets[k]->extra)) return GROVE_OUT_OF_MEMORY;
    }
    grove_points all = grove__slab_points(pl, S);
    for (size_t i = 0; i < S->n; i++) {
        int slab = pl->mpi->rank, lo, hi;
        if (!(S->roles[i] & GROVE__SLAB_QUERY)) grove__slabs_reach(pl, all, i, &slab, &lo, &hi);
        grove__slab_set *to = slab == pl->mpi->rank ? own : slab > pl->mpi->rank ? above : NULL;
        if (!to) continue;
        to->rows[to->n] = S->rows[i];
        memcpy((char *)to->coords + to->n * bytes, (const char *)S->coords + i * bytes, bytes);
        if (pl->extra) memcpy((char *)to->extra + to->n * pl->extra, (const char *)S->extra + i * pl->extra, pl->extra);
        to->n++;
    }
    return GROVE_OK;
}

/* This slab's pairs into count and sum. */
static grove_status slab_pairs(const grove__slabs *pl, grove_points data1, const grove_points *data2,
                               const void *w1, const void *w2, const grove_paircount_params *p, int64_t *count,
                               grove__xsum *sum, const grove_options *local)
{
    grove__slab_set D = {0}, Q = {0}, own = {0}, above = {0};
    grove_status s = data2 ? grove__slabs_exchange(pl, *data2, &data1, w2, w1, &D, &Q)
                           : grove__slabs_exchange(pl, data1, NULL, w1, NULL, &D, NULL);
    if (s == GROVE_OK && data2) s = grove__mpi_agree(pl->mpi, slab_pass(pl, &D, &Q, p, count, sum, local), "paircount");
    if (s == GROVE_OK && !data2) {
        s = split_own(pl, &D, &own, &above);
        if (s == GROVE_OK) s = slab_pass(pl, &own, NULL, p, count, sum, local);
        if (s == GROVE_OK) s = slab_pass(pl, &above, &own, p, count, sum, local);
        s = grove__mpi_agree(pl->mpi, s, "paircount");
    }
    grove__slab_set_free(&D);
    grove__slab_set_free(&Q);
    grove__slab_set_free(&own);
    grove__slab_set_free(&above);
    return s;
}

/* v[0 .. n) summed over the ranks, on every rank, in pieces that an int counts. */
static void sum_int64(const grove_mpi *mpi, int64_t *v, size_t n)
{
    const size_t piece = (size_t)1 << 24;
    for (size_t at = 0; at < n; at += piece)
        MPI_Allreduce(MPI_IN_PLACE, v + at, (int)(n - at < piece ? n - at : piece), MPI_INT64_T, MPI_SUM, mpi->comm);
}

/* Every rank's counts and exact sums added up on every rank: integers,
 * and the sums' digits (normalised, so that P of them cannot overflow). */
static grove_status reduce(const grove_mpi *mpi, size_t nbins, int64_t *count, grove__xsum *sum)
{
    sum_int64(mpi, count, nbins);
    if (!sum) return GROVE_OK;
    const size_t per = GROVE__XSUM_DIGITS + 1;
    int64_t *digits = grove__malloc(nbins * per * sizeof *digits, "paircount sums");
    grove_status s = grove__mpi_agree(mpi, digits ? GROVE_OK : GROVE_OUT_OF_MEMORY, "paircount");
    if (s != GROVE_OK) return s;
    for (size_t i = 0; i < nbins; i++) {
        grove__xsum_normalize(&sum[i]);
        memcpy(digits + i * per, sum[i].digit, sizeof sum[i].digit);
        digits[i * per + GROVE__XSUM_DIGITS] = sum[i].special;
    }
    sum_int64(mpi, digits, nbins * per);
    for (size_t i = 0; i < nbins; i++) {
        memcpy(sum[i].digit, digits + i * per, sizeof sum[i].digit);
        sum[i].special = digits[i * per + GROVE__XSUM_DIGITS] != 0;
    }
    grove__free(digits);
    return GROVE_OK;
}

grove_status grove__mpi_paircount(grove_points data1, const grove_points *data2, const grove_paircount_params *params,
                                  int64_t *npairs, double *weighted, const grove_options *options)
{
    grove__clear_error();
    const grove_mpi *mpi = options->mpi;
    int P = mpi->size;
    grove_status s = grove__mpi_agree(mpi, agree_shape(mpi, data2, weighted), "paircount");
    if (s != GROVE_OK) return s;
    int64_t *off = grove__malloc(2 * ((size_t)P + 1) * sizeof *off, "paircount offsets");
    s = grove__mpi_agree(mpi, off ? GROVE_OK : GROVE_OUT_OF_MEMORY, "paircount");
    if (s != GROVE_OK) return s;
    grove__mpi_offsets(mpi, data1.n, off);
    grove__mpi_offsets(mpi, data2 ? data2->n : 0, off + P + 1);
    s = grove__paircount_check(data1, data2, params, npairs, (size_t)off[mpi->rank], (size_t)off[P + 1 + mpi->rank]);
    s = grove__mpi_agree(mpi, s, "paircount");
    bool empty = off[P] == 0 || (data2 && off[2 * P + 1] == 0);
    grove__free(off);
    if (s != GROVE_OK) return s;
    size_t nbins = grove_paircount_bins(params);
    memset(npairs, 0, nbins * sizeof *npairs);
    if (weighted) memset(weighted, 0, nbins * sizeof *weighted);
    grove__slabs pl;
    memset(&pl, 0, sizeof pl);
    pl.mpi = mpi;
    pl.what = "paircount";
    pl.threads = grove__options(options).threads;
    pl.query_extra = data2 && weighted;
    double *ones1 = NULL, *ones2 = NULL;
    const double *w1 = NULL, *w2 = NULL;
    grove__xsum *sum = weighted ? grove__calloc(nbins, sizeof *sum, "paircount weighted sums") : NULL;
    s = weighted && !sum ? GROVE_OUT_OF_MEMORY : GROVE_OK;
    if (s == GROVE_OK) s = send_weights(params->weights1, data1.n, weighted, &ones1, &w1);
    if (s == GROVE_OK && data2) s = send_weights(params->weights2, data2->n, weighted, &ones2, &w2);
    s = grove__mpi_agree(mpi, s, "paircount");
    if (s == GROVE_OK)
        s = data2 ? grove__slabs_plan(&pl, *data2, &data1, &params->index, 0, weighted ? sizeof(double) : 0)
                  : grove__slabs_plan(&pl, data1, NULL, &params->index, 0, weighted ? sizeof(double) : 0);
    grove_options local = *options;
    local.mpi = NULL;
    if (s == GROVE_OK && !empty) {
        /* The slab axis is known once planned. */
        pl.eps = reach(&pl, params);
        s = slab_pairs(&pl, data1, data2, w1, w2, params, npairs, sum, &local);
    }
    if (s == GROVE_OK && !data2) grove__paircount_self_pairs(params, data1.n, params->weights1, npairs, sum);
    if (s == GROVE_OK) s = reduce(mpi, nbins, npairs, sum);
    s = grove__paircount_results(s, params, sum, npairs, weighted);
    grove__free(sum);
    grove__free(ones1);
    grove__free(ones2);
    grove__slabs_free(&pl);
    return s;
}
