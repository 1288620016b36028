/* Brute-force spot checks for `grove join --verify` and `grove knn
 * --verify`. Distances are recomputed in double over the input dimensions
 * in their own order, so a pair within a relative 1e-6 of the radius (or
 * of a kNN tie) may legitimately differ from the library's arithmetic in
 * the input dtype and is not counted against it. */
#include "check_brute.h"

#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SLACK 1e-6

static double coord(grove_points p, size_t i, size_t j)
{
    size_t stride = p.stride ? p.stride : p.d * grove_dtype_size(p.dtype);
    const char *row = (const char *)p.data + i * stride;
    return p.dtype == GROVE_FLOAT64 ? ((const double *)row)[j] : (double)((const float *)row)[j];
}

/* |q_j - p_j|, or its minimum image in a periodic box. */
static double diff(const check_brute *v, size_t q, size_t p, size_t j)
{
    double t = fabs(coord(v->queries, q, j) - coord(v->data, p, j));
    if (!v->box) return t;
    double len = v->box->len[v->box->count == 1 ? 0 : j];
    return len > 0 && t > len / 2 ? len - t : t;
}

/* |q - p|, with the differences divided by the largest first (as hypot
 * does), so their squares neither overflow nor underflow whatever the
 * coordinates' range. */
static double dist(const check_brute *v, size_t q, size_t p)
{
    double big = 0;
    for (size_t j = 0; j < v->data.d; j++) big = fmax(big, diff(v, q, p, j));
    if (!(big > 0) || !isfinite(big)) return big;
    double s = 0;
    for (size_t j = 0; j < v->data.d; j++) {
        double t = diff(v, q, p, j) / big;
        s += t * t;
    }
    return big * sqrt(s);
}

/* Within SLACK, or the rounding of two subnormal results. */
static bool near(double a, double b) { return a == b || fabs(a - b) <= SLACK * (fabs(a) + fabs(b)) + 2 * DBL_TRUE_MIN; }

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void fail(check_brute *v, const char *fmt, ...)
{
    if (v->failures++ > 0) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(v->first, sizeof v->first, fmt, ap);
    va_end(ap);
}

void check_brute_init(check_brute *v, grove_points data, const grove_points *queries, const cli_box *box, double eps,
                      bool exclude_self, size_t samples)
{
    memset(v, 0, sizeof *v);
    v->box = box;
    v->data = data;
    v->queries = queries ? *queries : data;
    v->eps = eps;
    v->exclude_self = exclude_self;
    v->nq = v->queries.n;
    v->samples = samples < v->nq ? samples : v->nq;
}

/* The i-th sampled query. */
static size_t sample(const check_brute *v, size_t i) { return i * v->nq / v->samples; }

/* One query's list (rows ascending, with distances) against brute force. */
static void check_list(check_brute *v, size_t q, const int64_t *rows, const double *dists, size_t m)
{
    size_t k = 0;
    for (size_t p = 0; p < v->data.n; p++) {
        if (v->exclude_self && p == q) continue;
        double d = dist(v, q, p);
        bool listed = k < m && rows[k] == (long long)p;
        bool borderline = near(d, v->eps);
        if (listed && dists && !near(dists[k], d)) fail(v, "query %zu: row %lld at distance %.17g differs", q, (long long)p, dists[k]);
        if (listed) {
            if (d > v->eps && !borderline) fail(v, "query %zu: row %lld at %.17g is beyond eps", q, (long long)p, d);
            k++;
        } else if (d <= v->eps && !borderline) {
            fail(v, "query %zu: row %lld at distance %.17g is missing", q, (long long)p, d);
        }
    }
    if (k != m) fail(v, "query %zu: %zu listed rows are not ascending rows of the data", q, m - k);
    v->checked++;
}

void check_brute_join_batch(check_brute *v, const grove_join_batch *b)
{
    for (size_t i = 0; i < v->samples; i++) {
        size_t q = sample(v, i);
        if (q < b->query_begin || q >= b->query_end) continue;
        size_t r = q - b->query_begin;
        check_list(v, q, b->indices + b->offsets[r], b->distances ? b->distances + b->offsets[r] : NULL,
                   (size_t)(b->offsets[r + 1] - b->offsets[r]));
    }
}

void check_brute_join_counts(check_brute *v, const int64_t *offsets)
{
    for (size_t i = 0; i < v->samples; i++) {
        size_t q = sample(v, i), sure = 0, borderline = 0;
        for (size_t p = 0; p < v->data.n; p++) {
            if (v->exclude_self && p == q) continue;
            double d = dist(v, q, p);
            if (near(d, v->eps)) borderline++;
            else sure += d <= v->eps;
        }
        int64_t count = offsets[q + 1] - offsets[q];
        if (count < (int64_t)sure || count > (int64_t)(sure + borderline))
            fail(v, "query %zu: counted %lld pairs, brute force %zu (and %zu within the slack of eps)", q,
                 (long long)count, sure, borderline);
        v->checked++;
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void check_brute_knn(check_brute *v, size_t k, const int64_t *indices, const double *distances)
{
    double *all = malloc((v->data.n + 1) * sizeof *all);
    if (!all) {
        fail(v, "out of memory for the check");
        return;
    }
    for (size_t i = 0; i < v->samples; i++) {
        size_t q = sample(v, i), m = 0;
        for (size_t p = 0; p < v->data.n; p++)
            if (!(v->exclude_self && p == q)) all[m++] = dist(v, q, p);
        qsort(all, m, sizeof *all, cmp_double);
        for (size_t r = 0; r < k && r < m; r++) {
            long long row = indices[q * k + r];
            double d = row >= 0 && (size_t)row < v->data.n ? dist(v, q, (size_t)row) : INFINITY;
            if (!near(d, all[r])) fail(v, "query %zu: neighbour %lld at %.17g is not the next nearest", q, row, d);
            else if (distances && !near(distances[q * k + r], d))
                fail(v, "query %zu: row %lld's distance %.17g differs", q, row, distances[q * k + r]);
            else if (r > 0 && indices[q * k + r - 1] == row)
                fail(v, "query %zu: row %lld is listed twice", q, row);
        }
        v->checked++;
    }
    free(all);
}

bool check_brute_report(const check_brute *v, const char *command, bool quiet)
{
    if (v->failures) {
        fprintf(stderr, "grove %s: --verify: %zu problems in %zu sampled queries; first: %s\n", command, v->failures,
                v->checked, v->first);
        return false;
    }
    if (!quiet)
        printf("%s: verified %zu sampled queries against brute force (every data point)\n", command, v->checked);
    return true;
}
