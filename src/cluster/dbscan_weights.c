/* DBSCAN's weighted core test (grove__dbscan_weighed_core): a point is
 * core when the weights of its neighbourhood, summed exactly and rounded
 * once to a double (what math.fsum gives), reach min_samples. The
 * decision does not depend on the order of the sum, so every index, thread
 * count and rank count makes the same one.
 *
 *  1. One visitor pass sums each neighbourhood with compensation
 *     (Neumaier), with the sum of the weights' magnitudes beside it. That
 *     is Ogita, Rump and Oishi's Sum2, whose result t is within
 *     u |S| + (2 m u)^2 sum |w| of the exact sum S (m terms, u = 2^-53),
 *     so a t further than twice that from min_samples decides the point.
 *  2. The rest (a neighbourhood whose weight is within rounding of
 *     min_samples, or whose partial sums overflowed) are summed again
 *     exactly (src/core/exact_sum.h), in batches of at most n / 32
 *     points, so the working memory stays under step 1's. */
#include "dbscan_internal.h"
#include "../join/visit.h"
#include "exact_sum.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* core[] while step 2 has yet to decide a point. */
#define UNDECIDED 2

typedef struct sums {
    const double *weight;
    double *sum, *comp, *mag; /* per row: Neumaier's sum and compensation, sum |w| */
} sums;

static int sum_neighbours(void *user, uint32_t row, const uint32_t *nb, size_t count)
{
    sums *st = user;
    double s = st->sum[row], c = st->comp[row], a = st->mag[row];
    for (size_t t = 0; t < count; t++) {
        double x = st->weight[nb[t]], u = s + x;
        c += fabs(s) >= fabs(x) ? (s - u) + x : (x - u) + s;
        s = u;
        a += fabs(x);
    }
    st->sum[row] = s;
    st->comp[row] = c;
    st->mag[row] = a;
    return 0;
}

/* 1, 0, or UNDECIDED when t = s + c is too close to m to tell; n bounds the
 * terms. The bound is the error of Sum2 doubled (which also covers the
 * rounding of these few operations); a point rounds to m or above when
 * the exact sum is at least m, and below when it is under m's neighbour
 * below. */
static uint8_t decide(double s, double c, double mag, double m, size_t n)
{
    double t = s + c, bound = 0x1p-52 * fabs(t) + (double)n * (double)n * 0x1p-102 * mag;
    if (!isfinite(t) || !isfinite(bound)) return UNDECIDED;
    double above = t - m;
    if (above >= 2 * bound) return 1;
    if (-above > 2 * (bound + (m - nextafter(m, 0)))) return 0;
    return UNDECIDED;
}

typedef struct exact {
    const double *weight;
    const uint32_t *rows; /* this batch's undecided rows, ascending */
    size_t count;
    grove__xsum *acc; /* one per row of the batch */
} exact;

static int add_exactly(void *user, uint32_t row, const uint32_t *nb, size_t count)
{
    exact *st = user;
    size_t lo = 0, hi = st->count;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (st->rows[mid] <= row) lo = mid;
        else hi = mid;
    }
    grove__xsum *acc = &st->acc[lo];
    for (size_t t = 0; t < count; t++) {
        grove__xsum_add(acc, st->weight[nb[t]]);
        if ((t + 1) % GROVE__XSUM_SAFE_ADDS == 0) grove__xsum_normalize(acc);
    }
    /* Normalised after every call, so the adds between two stay safe. */
    grove__xsum_normalize(acc);
    return 0;
}

/* Step 2: the undecided rows, a batch at a time. */
static grove_status decide_exactly(const grove_index *ix, double eps, double m, const double *weight, uint8_t *core,
                                   size_t undecided, const grove_options *options)
{
    size_t n = ix->tree.n, batch = n / 32 > 256 ? n / 32 : 256;
    batch = batch < undecided ? batch : undecided;
    exact st = {weight, NULL, 0, NULL};
    uint32_t *rows = grove__malloc(batch * sizeof *rows, "dbscan exact weights");
    st.acc = grove__malloc(batch * sizeof *st.acc, "dbscan exact weights");
    uint8_t *asked = grove__calloc(n, 1, "dbscan exact weights");
    grove_status s = rows && st.acc && asked ? GROVE_OK : GROVE_OUT_OF_MEMORY;
    st.rows = rows;
    grove__join_visitor v = {.eps = eps, .queries = asked, .fn = add_exactly, .user = &st};
    for (size_t next = 0; s == GROVE_OK && next < n;) {
        st.count = 0;
        for (; next < n && st.count < batch; next++)
            if (core[next] == UNDECIDED) {
                asked[next] = 1;
                grove__xsum_clear(&st.acc[st.count]);
                rows[st.count++] = (uint32_t)next;
            }
        if (st.count) s = grove__join_visit(ix, &v, options);
        for (size_t k = 0; s == GROVE_OK && k < st.count; k++) {
            core[rows[k]] = grove__xsum_rounds_to_at_least(&st.acc[k], m);
            asked[rows[k]] = 0;
        }
    }
    grove__free(rows);
    grove__free(st.acc);
    grove__free(asked);
    return s;
}

grove_status grove__dbscan_weighed_core(const grove_index *ix, double eps, size_t min_samples, const double *weight,
                                        uint8_t *core, const grove_options *options)
{
    size_t n = ix->tree.n, undecided = 0;
    double m = (double)min_samples;
    sums st = {weight, NULL, NULL, NULL};
    st.sum = grove__calloc(3 * n, sizeof *st.sum, "dbscan neighbourhood weights");
    grove_status s = st.sum ? GROVE_OK : GROVE_OUT_OF_MEMORY;
    if (s == GROVE_OK) {
        st.comp = st.sum + n;
        st.mag = st.comp + n;
        grove__join_visitor v = {.eps = eps, .fn = sum_neighbours, .user = &st};
        s = grove__join_visit(ix, &v, options);
    }
    for (size_t i = 0; s == GROVE_OK && i < n; i++) {
        core[i] = decide(st.sum[i], st.comp[i], st.mag[i], m, n);
        undecided += core[i] == UNDECIDED;
    }
    grove__free(st.sum);
    if (s == GROVE_OK && undecided) s = decide_exactly(ix, eps, m, weight, core, undecided, options);
    return s;
}
