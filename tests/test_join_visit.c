/* The join's pair visitor and components pass (src/join/visit.c) against
 * the brute-force join: the visitor hands over every (query, neighbour)
 * pair of the queries asked for, with each query's pairs in the same order
 * for any thread count; the components pass leaves the members joined
 * exactly as a serial union-find over every member pair within eps (also
 * where whole pairs of groups are joined at once, at the largest radii). */
#include "test.h"

#include "join_ref.h"
#include "join/visit.h"

#include <math.h>

/* Pairs handed over, as (row << 32 | neighbour), from any thread; plus
 * per row an order-sensitive hash of its neighbour sequence and the number
 * of callbacks that met a row from two threads at once. */
typedef struct collected {
    uint64_t *pair;
    size_t count, cap;
    uint64_t *hash;
    long stop_after; /* > 0: stop the pass at this callback */
    long calls;
} collected;

static void collect_pairs(collected *c, uint32_t row, const uint32_t *nb, size_t k)
{
#pragma omp critical(visit_test)
    {
        if (c->count + k > c->cap) {
            c->cap = 2 * (c->count + k);
            c->pair = realloc(c->pair, c->cap * sizeof *c->pair);
        }
        for (size_t t = 0; t < k; t++) c->pair[c->count++] = (uint64_t)row << 32 | nb[t];
    }
}

static int collect(void *user, uint32_t row, const uint32_t *nb, size_t k)
{
    collected *c = user;
    long call;
#pragma omp atomic capture
    call = ++c->calls;
    if (c->stop_after > 0 && call >= c->stop_after) return 1;
    uint64_t h = c->hash[row];
    for (size_t t = 0; t < k; t++) h = h * 1000003u + nb[t] + 1;
    c->hash[row] = h;
    collect_pairs(c, row, nb, k);
    return 0;
}

static int u64_cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Run one visit; the pairs come back sorted. */
static grove_status run_visit(const grove_index *ix, double eps, const uint8_t *queries, int threads, collected *c)
{
    size_t n = grove_index_n(ix);
    memset(c, 0, sizeof *c);
    c->hash = calloc(n + 1, sizeof *c->hash);
    grove_options opt;
    grove_options_init(&opt);
    opt.threads = threads;
    grove__join_visitor v = {eps, queries, collect, c};
    grove_status s = grove__join_visit(ix, &v, &opt);
    if (c->count) qsort(c->pair, c->count, sizeof *c->pair, u64_cmp);
    return s;
}

static void collected_free(collected *c)
{
    free(c->pair);
    free(c->hash);
}

/* A serial union-find with the same rule (the smaller root wins), so
 * every component's root is its smallest member. */
static size_t ref_find(size_t *up, size_t i)
{
    while (up[i] != i) i = up[i] = up[up[i]];
    return i;
}

static void ref_union(size_t *up, size_t i, size_t j)
{
    i = ref_find(up, i);
    j = ref_find(up, j);
    if (i < j) up[j] = i;
    else up[i] = j;
}

/* grove__join_connect on `threads` threads against the roots want[i] (a
 * member's component's smallest member; a non-member's own row). */
static void check_connect(const grove_index *ix, double eps, const uint8_t *members, int threads, const size_t *want,
                          const char *what)
{
    size_t n = grove_index_n(ix);
    grove__uf uf;
    REQUIRE_OK(grove__uf_init(&uf, n, 1));
    grove_options opt;
    grove_options_init(&opt);
    opt.threads = threads;
    CHECK_OK(grove__join_connect(ix, eps, members, &uf, &opt));
    grove__uf_flatten(&uf);
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < n; i++)
        if (uf.parent[i] != want[i] && !bad++) first = i;
    CHECK_MSG(bad == 0, "%s, %d threads: %zu rows in the wrong component, first row %zu (root %u, brute force %zu)",
              what, threads, bad, first, bad ? uf.parent[first] : 0, bad ? want[first] : 0);
    grove__uf_free(&uf);
}

/* For one set and radius: the visitor on every third row as the queries,
 * and the components pass over every row and over every other row as the
 * members, against brute force. */
static void check_visit(const ref_set *s, double eps, const char *what)
{
    grove_index *ix = NULL;
    REQUIRE_OK(grove_index_create(join_ref_view(s), NULL, NULL, &ix));
    double eps2 = s->f32 ? (double)(float)(eps * eps) : eps * eps;
    size_t n = s->n, m_all = 0;
    uint64_t *want_all = malloc((n * n + 1) * sizeof *want_all);
    size_t *every = malloc(n * sizeof *every), *half = malloc(n * sizeof *half);
    uint8_t *asked = malloc(n), *even = malloc(n);
    for (size_t i = 0; i < n; i++) {
        asked[i] = i % 3 == 1;
        even[i] = i % 2 == 0;
        every[i] = half[i] = i;
    }
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) {
            if (!(join_ref_dist2(s, i, s, j) <= eps2)) continue;
            if (asked[i]) want_all[m_all++] = (uint64_t)i << 32 | j;
            ref_union(every, i, j);
            if (even[i] && even[j]) ref_union(half, i, j);
        }
    for (size_t i = 0; i < n; i++) {
        every[i] = ref_find(every, i);
        half[i] = ref_find(half, i);
    }
    collected c;
    CHECK_OK(run_visit(ix, eps, asked, 2, &c));
    CHECK_MSG(c.count == m_all && (m_all == 0 || memcmp(c.pair, want_all, m_all * sizeof *want_all) == 0),
              "%s: the visitor gave %zu pairs, brute force %zu (or different ones)", what, c.count, m_all);
    collected_free(&c);
    check_connect(ix, eps, NULL, 2, every, what);
    check_connect(ix, eps, even, 2, half, what);
    free(asked);
    free(even);
    free(every);
    free(half);
    free(want_all);
    grove_index_free(ix);
}

TEST(join_visit_against_brute_force)
{
    static const size_t dims[] = {1, 2, 3, 8, 18, 64, 784};
    uint64_t seed = 11;
    for (size_t di = 0; di < sizeof dims / sizeof *dims; di++) {
        size_t d = dims[di], n = d >= 64 ? 120 : 300;
        for (int kind = 0; kind < TEST_KINDS; kind++) {
            double scale = kind == TEST_UNIFORM ? 1 : kind == TEST_CLUSTERED ? 5 : kind == TEST_LATTICE ? 4 : 12;
            bool f32 = (kind + di) % 2 == 0;
            ref_set *s = join_ref_make((test_kind)kind, n, d, f32, seed++);
            join_ref_take_order(s, NULL);
            static const double frac[] = {0, 0.05, 0.2, 3};
            for (size_t r = 0; r < 4; r++) {
                double eps = frac[r] * scale * sqrt((double)d);
                /* Lattice and duplicate data: eps exactly on a squared
                 * distance (units of 1/64). */
                if (kind >= TEST_LATTICE) eps = sqrt(floor(eps * eps * 64) / 64);
                char what[160];
                snprintf(what, sizeof what, "%s d=%zu %s eps=%g", test_kind_name[kind], d, f32 ? "f32" : "f64", eps);
                check_visit(s, eps, what);
            }
            join_ref_free(s);
        }
    }
}

/* On enough points for two threads: the visitor's pairs on 1 and 2
 * threads equal grove_join's (itself checked against brute force), each
 * query's neighbour sequence is the same for both, and the components
 * pass gives the components of grove_join's pairs on either. */
TEST(join_visit_threads_agree_with_join)
{
    static const size_t dims[] = {3, 24};
    for (size_t di = 0; di < 2; di++) {
        size_t d = dims[di], n = d == 3 ? 20000 : 12000;
        /* About 20 neighbours each: uniform in 3-d, five tight blobs in 24. */
        ref_set *s = join_ref_make(d == 3 ? TEST_UNIFORM : TEST_CLUSTERED, n, d, di == 1, 5 + di);
        double eps = d == 3 ? 0.05 : 0.045;
        grove_index *ix = NULL;
        REQUIRE_OK(grove_index_create(join_ref_view(s), NULL, NULL, &ix));
        grove_join_params jp;
        grove_join_params_init(&jp);
        jp.eps = eps;
        grove_join_result r;
        REQUIRE_OK(grove_join(join_ref_view(s), NULL, NULL, &jp, &r, NULL));
        uint64_t *want_all = malloc(((size_t)r.pairs + 1) * sizeof *want_all);
        size_t *roots = malloc(n * sizeof *roots);
        for (size_t q = 0; q < n; q++) roots[q] = q;
        for (size_t q = 0; q < n; q++)
            for (int64_t k = r.offsets[q]; k < r.offsets[q + 1]; k++) {
                want_all[k] = (uint64_t)q << 32 | (uint64_t)r.indices[k];
                ref_union(roots, q, (size_t)r.indices[k]);
            }
        for (size_t q = 0; q < n; q++) roots[q] = ref_find(roots, q);
        CHECK(r.pairs > (int64_t)(4 * n));
        char what[64];
        snprintf(what, sizeof what, "d=%zu", d);
        for (int t = 0; t < 2; t++) check_connect(ix, eps, NULL, t + 1, roots, what);
        collected c[2];
        for (int t = 0; t < 2; t++) {
            CHECK_OK(run_visit(ix, eps, NULL, t + 1, &c[t]));
            CHECK_MSG(c[t].count == (size_t)r.pairs &&
                          memcmp(c[t].pair, want_all, (size_t)r.pairs * sizeof *want_all) == 0,
                      "d=%zu threads=%d: the visitor gave %zu pairs, the join %lld", d, t + 1, c[t].count,
                      (long long)r.pairs);
        }
        CHECK_MSG(memcmp(c[0].hash, c[1].hash, n * sizeof *c[0].hash) == 0,
                  "d=%zu: a query's neighbour order depends on the thread count", d);
        for (int t = 0; t < 2; t++) collected_free(&c[t]);
        free(want_all);
        free(roots);
        grove_join_result_free(&r);
        grove_index_free(ix);
        join_ref_free(s);
    }
}

static void raise_flag(void *user, const char *stage, double fraction)
{
    (void)stage;
    (void)fraction;
    *(int *)user = 1;
}

TEST(join_visit_stops_and_refuses)
{
    ref_set *s = join_ref_make(TEST_UNIFORM, 200000, 2, false, 3);
    grove_index *ix = NULL;
    REQUIRE_OK(grove_index_create(join_ref_view(s), NULL, NULL, &ix));
    collected c;
    memset(&c, 0, sizeof c);
    c.hash = calloc(s->n, sizeof *c.hash);
    c.stop_after = 5;
    grove__join_visitor v = {0.01, NULL, collect, &c};
    CHECK_FAILS(grove__join_visit(ix, &v, NULL), GROVE_CANCELLED, "pair callback stopped");
    /* The cancel flag, raised by the first progress report. */
    int flag = 0;
    grove_options opt;
    grove_options_init(&opt);
    opt.cancel = &flag;
    opt.progress = raise_flag;
    opt.progress_user = &flag;
    c.stop_after = 0;
    c.calls = 0;
    CHECK_FAILS(grove__join_visit(ix, &v, &opt), GROVE_CANCELLED, "join: cancelled");
    CHECK(flag == 1);
    v.eps = -1;
    CHECK_FAILS(grove__join_visit(ix, &v, NULL), GROVE_INVALID_ARGUMENT, "eps = -1");
    v.eps = 1;
    v.fn = NULL;
    CHECK_FAILS(grove__join_visit(ix, &v, NULL), GROVE_INVALID_ARGUMENT, "callback is NULL");
    CHECK_FAILS(grove__join_visit(NULL, &v, NULL), GROVE_INVALID_ARGUMENT, "index is NULL");
    /* The components pass: the cancel flag, and what it refuses. */
    grove__uf uf;
    REQUIRE_OK(grove__uf_init(&uf, s->n, 1));
    flag = 0;
    CHECK_FAILS(grove__join_connect(ix, 0.01, NULL, &uf, &opt), GROVE_CANCELLED, "join: cancelled");
    CHECK_FAILS(grove__join_connect(ix, -1, NULL, &uf, NULL), GROVE_INVALID_ARGUMENT, "eps = -1");
    CHECK_FAILS(grove__join_connect(NULL, 0.01, NULL, &uf, NULL), GROVE_INVALID_ARGUMENT, "index or union-find");
    grove__uf_free(&uf);
    REQUIRE_OK(grove__uf_init(&uf, s->n - 1, 1));
    CHECK_FAILS(grove__join_connect(ix, 0.01, NULL, &uf, NULL), GROVE_INVALID_ARGUMENT, "union-find has 199999");
    grove__uf_free(&uf);
    free(c.pair);
    free(c.hash);
    grove_index_free(ix);
    join_ref_free(s);
}
