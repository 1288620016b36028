/* grove_paircount on one process (grove__paircount_local, paircount.h):
 * the arguments, the index (and a cross-correlation's query grouping),
 * weights in tree order, the pass, and the autocorrelation's doubling and
 * self pairs (conventions in grove.h). */
#include "paircount.h"
#include "paircount_internal.h"
#include "../core/parallel.h"
#include "../join/join_internal.h"

#include <math.h>
#include <string.h>

/* The lookup's cells hold edge counts in 16 bits. */
#define PC_EDGES_MAX 65535
/* pi bins: floor(pimax) of them. */
#define PC_PI_BINS_MAX 1000000
/* The most slots (bins and the out-of-range ones around them). */
#define PC_SLOTS_MAX (1 << 30)

void grove_paircount_params_init(grove_paircount_params *params)
{
    if (!params) return;
    memset(params, 0, sizeof *params);
    grove_index_params_init(&params->index);
}

/* The edges and pimax: one line naming what is wrong. */
static grove_status check_bins(const grove_paircount_params *p)
{
    if (!p) return grove__fail(GROVE_INVALID_ARGUMENT, "paircount: params is NULL");
    if (p->nedges < 2 || !p->edges)
        return grove__fail(GROVE_INVALID_ARGUMENT, "paircount: %zu bin edges; at least 2 are needed (one bin)",
                           p->edges ? p->nedges : 0);
    if (p->nedges > PC_EDGES_MAX)
        return grove__fail(GROVE_INVALID_ARGUMENT, "paircount: %zu bin edges; at most %d", p->nedges, PC_EDGES_MAX);
    for (size_t k = 0; k < p->nedges; k++) {
        double e = p->edges[k];
        if (!isfinite(e) || e < 0)
            return grove__fail(GROVE_INVALID_ARGUMENT, "paircount: edge %zu is %g; edges must be finite and >= 0", k,
                               e);
        if (k > 0 && !(e > p->edges[k - 1]))
            return grove__fail(GROVE_INVALID_ARGUMENT,
                               "paircount: edges must ascend, but edge %zu (%.17g) is not above edge %zu (%.17g)", k,
                               e, k - 1, p->edges[k - 1]);
    }
    if (!isfinite(p->pimax) || p->pimax < 0 || (p->pimax > 0 && p->pimax < 1) || p->pimax >= PC_PI_BINS_MAX + 1.0)
        return grove__fail(GROVE_INVALID_ARGUMENT,
                           "paircount: pimax = %g; it must be 0 (bins in r) or from 1 to %d (floor(pimax) pi bins)",
                           p->pimax, PC_PI_BINS_MAX);
    /* The kernels number a pair's slot (bins and the slots around them)
     * in 32 bits. */
    size_t npi = p->pimax > 0 ? (size_t)p->pimax : 1;
    if ((p->nedges + 1) * npi + 1 > PC_SLOTS_MAX)
        return grove__fail(GROVE_INVALID_ARGUMENT,
                           "paircount: %zu r bins times %zu pi bins are too many; at most %d bins in all",
                           p->nedges - 1, npi, PC_SLOTS_MAX / 2);
    return GROVE_OK;
}

/* The bins of checked params. */
static size_t bins_of(const grove_paircount_params *p)
{
    return (p->nedges - 1) * (p->pimax > 0 ? (size_t)p->pimax : 1);
}

size_t grove_paircount_bins(const grove_paircount_params *params)
{
    grove__clear_error();
    return check_bins(params) == GROVE_OK ? bins_of(params) : 0;
}

/* n finite weights (NULL: none), named for the message by row first + i. */
static grove_status check_weights(const double *w, size_t n, size_t first, const char *name)
{
    for (size_t i = 0; w && i < n; i++)
        if (!isfinite(w[i]))
            return grove__fail(GROVE_INVALID_ARGUMENT, "paircount: %s[%zu] is %g; weights must be finite", name,
                               first + i, w[i]);
    return GROVE_OK;
}

/* Weights by tree position of index (NULL when w is NULL and the pass is
 * weighted only through the other set: then 1 each). */
static grove_status tree_weights(const grove_index *index, const double *w, int weighted, double **out)
{
    *out = NULL;
    if (!weighted) return GROVE_OK;
    size_t n = index->tree.n;
    double *t = grove__malloc((n ? n : 1) * sizeof *t, "paircount weights");
    if (!t) return GROVE_OUT_OF_MEMORY;
    for (size_t p = 0; p < n; p++) t[p] = w ? w[index->tree.perm[p]] : 1.0;
    *out = t;
    return GROVE_OK;
}

/* The shapes the pass takes: d up to 16, (rp, pi) bins from 2 dimensions,
 * a second set like the first. */
static grove_status check_sets(grove_points data1, const grove_points *data2, const grove_paircount_params *p)
{
    if (data1.d > GROVE__JOIN_SOA_MAX)
        return grove__fail(GROVE_INVALID_ARGUMENT, "paircount: data1 have d = %zu dimensions; at most %d", data1.d,
                           GROVE__JOIN_SOA_MAX);
    if (p->pimax > 0 && data1.d < 2)
        return grove__fail(GROVE_INVALID_ARGUMENT,
                           "paircount: (rp, pi) bins need d >= 2 (pi along the last dimension); data1 have d = %zu",
                           data1.d);
    if (!data2) {
        if (p->weights2)
            return grove__fail(GROVE_INVALID_ARGUMENT, "paircount: weights2 given without data2 (an autocorrelation "
                                                       "takes weights1)");
        return GROVE_OK;
    }
    if (data2->n && data1.n && data2->d != data1.d)
        return grove__fail(GROVE_INVALID_ARGUMENT, "paircount: data2 have d = %zu dimensions but data1 have %zu",
                           data2->d, data1.d);
    if (data2->n && data1.n && data2->dtype != data1.dtype)
        return grove__fail(GROVE_INVALID_ARGUMENT,
                           "paircount: data2 are %s but data1 are %s; the pairs are counted in one dtype (convert "
                           "one set first)",
                           grove_dtype_name(data2->dtype), grove_dtype_name(data1.dtype));
    return GROVE_OK;
}

void grove__paircount_self_pairs(const grove_paircount_params *p, size_t n, const double *weights1,
                                 int64_t *count, grove__xsum *sum)
{
    for (size_t i = 0; i < bins_of(p); i++) {
        count[i] *= 2;
        if (sum) grove__xsum_double(&sum[i]);
    }
    if (p->edges[0] != 0) return; /* r = 0 is in no bin */
    count[0] += (int64_t)n;
    for (size_t i = 0; sum && i < n; i++) {
        double w = weights1 ? weights1[i] : 1.0;
        grove__xsum_add(&sum[0], w * w);
    }
}

/* Every point of both sets inside a periodic box, each set named in the
 * message (the index's own check names its data and queries). Lengths
 * that are not valid are left to the index's message. */
static grove_status check_box(grove_points data1, const grove_points *data2, const grove_index_params *ip,
                              int threads)
{
    size_t d = data1.d, count = ip->boxsize ? ip->boxsize_count : 0;
    if (count != 1 && count != d) return GROVE_OK;
    double box[GROVE__JOIN_SOA_MAX];
    for (size_t j = 0; j < d; j++) {
        box[j] = ip->boxsize[count == 1 ? 0 : j];
        if (!(box[j] >= 0) || !isfinite(box[j])) return GROVE_OK;
    }
    grove_status s = grove__box_check(data1, box, "data1", grove__threads_for(threads, data1.n));
    if (s == GROVE_OK && data2) s = grove__box_check(*data2, box, "data2", grove__threads_for(threads, data2->n));
    return s;
}

grove_status grove__paircount_pass(const grove_index *D, const double *wD, const grove_points *queries,
                                   const double *wQ, const grove_paircount_params *p, int64_t *count,
                                   grove__xsum *sum, const grove_options *options)
{
    const grove_index *Q = NULL;
    pc_bins bins;
    memset(&bins, 0, sizeof bins);
    double *tD = NULL, *tQ = NULL;
    grove_status s = grove__queries_prepare(D, queries, 0, grove__options(options).threads, &Q);
    if (s == GROVE_OK) s = grove__pc_bins_init(&bins, D, p->edges, p->nedges, p->pimax);
    if (s == GROVE_OK) s = tree_weights(D, wD, sum != NULL, &tD);
    if (s == GROVE_OK && queries) s = tree_weights(Q, wQ, sum != NULL, &tQ);
    if (s == GROVE_OK) {
        /* Reach: the largest squared edge, and with pimax the cylinder's
         * enclosing ball, widened by any rounding. */
        double e = ldexp(p->edges[p->nedges - 1], -D->tree.exponent), pi = ldexp(p->pimax, -D->tree.exponent);
        pc_pass pass = {D, Q, queries == NULL, tD, queries ? tQ : tD, &bins, grove__join_prune2_sq(D, Q, e * e + pi * pi)};
        s = grove__pc_run(&pass, options, count, sum);
    }
    grove__free(tD);
    grove__free(tQ);
    grove__pc_bins_free(&bins);
    if (Q) grove__queries_release(D, Q);
    return s;
}

/* The pairs of data1 (with data2) into count and sum, on this process. */
static grove_status count_pairs(grove_points data1, const grove_points *data2, const grove_paircount_params *p,
                                int64_t *count, grove__xsum *sum, const grove_options *options)
{
    grove_index *D = NULL;
    grove_status s = data2 ? grove__index_build_for(*data2, &data1, &p->index, options, &D)
                           : grove__index_build_for(data1, NULL, &p->index, options, &D);
    if (s == GROVE_OK)
        s = data2 ? grove__paircount_pass(D, p->weights2, &data1, p->weights1, p, count, sum, options)
                  : grove__paircount_pass(D, p->weights1, NULL, NULL, p, count, sum, options);
    grove_index_free(D);
    return s;
}

grove_status grove__paircount_check(grove_points data1, const grove_points *data2,
                                    const grove_paircount_params *params, const int64_t *npairs, size_t first1,
                                    size_t first2)
{
    double magnitude;
    grove_status s = check_bins(params);
    if (s == GROVE_OK && !npairs) s = grove__fail(GROVE_INVALID_ARGUMENT, "paircount: npairs is NULL");
    if (s == GROVE_OK) s = grove__points_validate_part(data1, first1, 1, &magnitude);
    if (s == GROVE_OK && data2) {
        s = grove__points_validate_part(*data2, first2, 1, &magnitude);
        if (s != GROVE_OK) grove__error_prefix("data2");
    }
    if (s == GROVE_OK) s = check_sets(data1, data2, params);
    if (s == GROVE_OK) s = check_weights(params->weights1, data1.n, first1, "weights1");
    if (s == GROVE_OK && data2) s = check_weights(params->weights2, data2->n, first2, "weights2");
    return s;
}

grove_status grove__paircount_results(grove_status s, const grove_paircount_params *params, grove__xsum *sum,
                                      int64_t *npairs, double *weighted)
{
    size_t nbins = bins_of(params);
    for (size_t i = 0; s == GROVE_OK && sum && i < nbins; i++) {
        weighted[i] = grove__xsum_value(&sum[i]);
        if (!isfinite(weighted[i]))
            s = grove__fail(GROVE_INVALID_ARGUMENT,
                            "paircount: the weighted sum of bin %zu is beyond the range of a double (weights too "
                            "large)",
                            i);
    }
    if (s != GROVE_OK) {
        memset(npairs, 0, nbins * sizeof *npairs);
        if (weighted) memset(weighted, 0, nbins * sizeof *weighted);
    }
    return s;
}

grove_status grove__paircount_local(grove_points data1, const grove_points *data2,
                                    const grove_paircount_params *params, int64_t *npairs, double *weighted,
                                    const grove_options *options)
{
    grove__clear_error();
    grove_status s = grove__paircount_check(data1, data2, params, npairs, 0, 0);
    if (s == GROVE_OK) s = check_box(data1, data2, &params->index, grove__options(options).threads);
    if (s != GROVE_OK) return s;
    size_t nbins = bins_of(params);
    memset(npairs, 0, nbins * sizeof *npairs);
    if (weighted) memset(weighted, 0, nbins * sizeof *weighted);
    if (data1.n == 0 || (data2 && data2->n == 0)) return GROVE_OK;
    grove__xsum *sum = NULL;
    if (weighted) {
        sum = grove__calloc(nbins, sizeof *sum, "paircount weighted sums");
        if (!sum) return GROVE_OUT_OF_MEMORY;
    }
    s = count_pairs(data1, data2, params, npairs, sum, options);
    if (s == GROVE_OK && !data2) grove__paircount_self_pairs(params, data1.n, params->weights1, npairs, sum);
    s = grove__paircount_results(s, params, sum, npairs, weighted);
    grove__free(sum);
    return s;
}
