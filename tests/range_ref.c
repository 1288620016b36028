/* Brute force in long double for the range tests (range_ref.h). */
#include "range_ref.h"

#include <stdlib.h>

double cloud_at(const cloud *c, size_t i, size_t j) { return c->x64[i * c->d + j]; }

grove_points cloud_view(const cloud *c)
{
    return c->f32 ? grove_points_f32(c->x32, c->n, c->d) : grove_points_f64(c->x64, c->n, c->d);
}

cloud cloud_alloc(size_t n, size_t d, bool f32)
{
    cloud c = {n, d, f32, calloc(n * d + 1, sizeof(double)), calloc(n * d + 1, sizeof(float))};
    return c;
}

void cloud_set(cloud *c, size_t i, size_t j, double v)
{
    if (c->f32) v = (float)v;
    c->x64[i * c->d + j] = v;
    c->x32[i * c->d + j] = (float)v;
}

void cloud_free(cloud *c)
{
    free(c->x64);
    free(c->x32);
}


/* Squared distance in long double, exact for the lattice kinds here. */
long double dist2(const cloud *c, size_t a, size_t b)
{
    long double s = 0;
    for (size_t j = 0; j < c->d; j++) {
        long double t = (long double)cloud_at(c, a, j) - (long double)cloud_at(c, b, j);
        s += t * t;
    }
    return s;
}

static bool edge_less(edge a, edge b)
{
    return a.w < b.w || (a.w == b.w && (a.u < b.u || (a.u == b.u && a.v < b.v)));
}

static int cmp_edge(const void *a, const void *b)
{
    edge x = *(const edge *)a, y = *(const edge *)b;
    return edge_less(x, y) ? -1 : edge_less(y, x) ? 1 : 0;
}

static int cmp_ld(const void *a, const void *b)
{
    long double x = *(const long double *)a, y = *(const long double *)b;
    return (x > y) - (x < y);
}

/* Squared core distances: the K-th smallest squared distance, itself
 * counted. */
long double *brute_core2(const cloud *c, size_t k)
{
    long double *core2 = calloc(c->n, sizeof *core2), *row = malloc(c->n * sizeof *row);
    for (size_t a = 0; k > 1 && a < c->n; a++) {
        for (size_t b = 0; b < c->n; b++) row[b] = dist2(c, a, b);
        qsort(row, c->n, sizeof *row, cmp_ld);
        core2[a] = row[k - 1];
    }
    free(row);
    return core2;
}

/* Dense Prim under the order (squared weight, smaller row, larger row),
 * mutual reachability with K > 1; n - 1 edges sorted, weights squared. */
edge *prim(const cloud *c, size_t k)
{
    size_t n = c->n;
    long double *core2 = brute_core2(c, k);
    edge *best = malloc(n * sizeof *best), *out = malloc(n * sizeof *out);
    bool *in = calloc(n, sizeof *in);
    size_t last = 0;
    in[0] = true;
    for (size_t i = 0; i < n; i++) best[i].u = -1;
    for (size_t step = 0; step + 1 < n; step++) {
        size_t pick = 0;
        edge pe = {0, -1, -1};
        for (size_t v = 0; v < n; v++) {
            if (in[v]) continue;
            long double w = dist2(c, last, v);
            if (w < core2[last]) w = core2[last];
            if (w < core2[v]) w = core2[v];
            edge e = {w, (int64_t)(last < v ? last : v), (int64_t)(last < v ? v : last)};
            if (best[v].u < 0 || edge_less(e, best[v])) best[v] = e;
            if (pe.u < 0 || edge_less(best[v], pe)) pe = best[v], pick = v;
        }
        in[pick] = true;
        last = pick;
        out[step] = pe;
    }
    qsort(out, n - 1, sizeof *out, cmp_edge);
    free(core2);
    free(best);
    free(in);
    return out;
}

/* Rows by (squared distance to query q, row), all n of them. */
static const cloud *knn_cloud;
static size_t knn_query;
static int cmp_rank(const void *a, const void *b)
{
    size_t r = *(const size_t *)a, s = *(const size_t *)b;
    long double x = dist2(knn_cloud, knn_query, r), y = dist2(knn_cloud, knn_query, s);
    if (x != y) return x < y ? -1 : 1;
    return (r > s) - (r < s);
}

size_t *brute_ranks(const cloud *c, size_t q)
{
    size_t *rank = malloc(c->n * sizeof *rank);
    for (size_t i = 0; i < c->n; i++) rank[i] = i;
    knn_cloud = c;
    knn_query = q;
    qsort(rank, c->n, sizeof *rank, cmp_rank);
    return rank;
}

/* Self-join pairs within eps (itself included). */
int64_t brute_pairs(const cloud *c, long double eps)
{
    int64_t pairs = 0;
    for (size_t a = 0; a < c->n; a++)
        for (size_t b = 0; b < c->n; b++) pairs += dist2(c, a, b) <= eps * eps;
    return pairs;
}
