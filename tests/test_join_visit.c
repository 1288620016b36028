/* The join's pair visitor (src/join/visit.c) against the brute-force join:
 * the once mode gives each unordered pair exactly once (also when whole
 * pairs of groups come through the block shortcut), the every-pair mode
 * every (query, neighbour) pair of the queries asked for, with each
 * query's pairs in the same order for any thread count. */
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
    long blocks;     /* block shortcuts taken */
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

/* The block shortcut, spelt out as the pairs it stands for. */
static int collect_block(void *user, const uint32_t *a, size_t na, const uint32_t *b, size_t nb)
{
    collected *c = user;
#pragma omp atomic update
    c->blocks++;
    for (size_t i = 0; i < na; i++)
        if (b == a) collect_pairs(c, a[i], a + i + 1, na - i - 1);
        else collect_pairs(c, a[i], b, nb);
    return 0;
}

static int u64_cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Run one visit; the pairs come back sorted (unordered pairs as
 * (smaller, larger) when `once`). */
static grove_status run_visit(const grove_index *ix, double eps, int once, const uint8_t *queries, int threads,
                              int blocks, collected *c)
{
    size_t n = grove_index_n(ix);
    memset(c, 0, sizeof *c);
    c->hash = calloc(n + 1, sizeof *c->hash);
    grove_options opt;
    grove_options_init(&opt);
    opt.threads = threads;
    grove__join_visitor v = {eps, once, queries, collect, c, blocks ? collect_block : NULL, NULL};
    grove_status s = grove__join_visit(ix, &v, &opt);
    for (size_t i = 0; once && i < c->count; i++) {
        uint64_t a = c->pair[i] >> 32, b = c->pair[i] & UINT32_MAX;
        c->pair[i] = a < b ? a << 32 | b : b << 32 | a;
    }
    if (c->count) qsort(c->pair, c->count, sizeof *c->pair, u64_cmp);
    return s;
}

static void collected_free(collected *c)
{
    free(c->pair);
    free(c->hash);
}

/* Both modes against brute force for one set and radius, the once mode
 * also with the block shortcut; the every-pair mode on every third row as
 * the queries. Adds the blocks taken to *blocks. */
static void check_visit(const ref_set *s, double eps, const char *what, long *blocks)
{
    grove_index *ix = NULL;
    REQUIRE_OK(grove_index_build(join_ref_view(s), NULL, NULL, &ix));
    double eps2 = s->f32 ? (double)(float)(eps * eps) : eps * eps;
    size_t n = s->n, m_once = 0, m_all = 0;
    uint64_t *want_once = malloc((n * n + 1) * sizeof *want_once), *want_all = malloc((n * n + 1) * sizeof *want_all);
    uint8_t *asked = malloc(n);
    for (size_t i = 0; i < n; i++) asked[i] = i % 3 == 1;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) {
            if (!(join_ref_dist2(s, i, s, j) <= eps2)) continue;
            if (i < j) want_once[m_once++] = (uint64_t)i << 32 | j;
            if (asked[i]) want_all[m_all++] = (uint64_t)i << 32 | j;
        }
    collected c;
    for (int with_blocks = 0; with_blocks < 2; with_blocks++) {
        CHECK_OK(run_visit(ix, eps, 1, NULL, 2, with_blocks, &c));
        CHECK_MSG(c.count == m_once && (m_once == 0 || memcmp(c.pair, want_once, m_once * sizeof *want_once) == 0),
                  "%s%s: once mode gave %zu pairs, brute force %zu (or different ones)", what,
                  with_blocks ? " with blocks" : "", c.count, m_once);
        *blocks += c.blocks;
        collected_free(&c);
    }
    CHECK_OK(run_visit(ix, eps, 0, asked, 2, 0, &c));
    CHECK_MSG(c.count == m_all && (m_all == 0 || memcmp(c.pair, want_all, m_all * sizeof *want_all) == 0),
              "%s: every-pair mode gave %zu pairs, brute force %zu (or different ones)", what, c.count, m_all);
    collected_free(&c);
    free(asked);
    free(want_once);
    free(want_all);
    grove_index_free(ix);
}

TEST(join_visit_against_brute_force)
{
    static const size_t dims[] = {1, 2, 3, 8, 18, 64, 784};
    uint64_t seed = 11;
    long blocks[2] = {0, 0}; /* up to SOA_MAX dimensions, above */
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
                check_visit(s, eps, what, &blocks[d > 16]);
            }
            join_ref_free(s);
        }
    }
    /* The largest radius takes every pair: whole groups must go at once. */
    CHECK_MSG(blocks[0] > 0 && blocks[1] == 0, "block shortcuts taken: %ld up to 16 dimensions, %ld above", blocks[0],
              blocks[1]);
}

/* On enough points for two threads: the pair sets of 1 and 2 threads are
 * the same and equal grove_join's (itself checked against brute force),
 * and each query's neighbour sequence in the every-pair mode is too. */
TEST(join_visit_threads_agree_with_join)
{
    static const size_t dims[] = {3, 24};
    for (size_t di = 0; di < 2; di++) {
        size_t d = dims[di], n = d == 3 ? 20000 : 12000;
        /* About 20 neighbours each: uniform in 3-d, five tight blobs in 24. */
        ref_set *s = join_ref_make(d == 3 ? TEST_UNIFORM : TEST_CLUSTERED, n, d, di == 1, 5 + di);
        double eps = d == 3 ? 0.05 : 0.045;
        grove_index *ix = NULL;
        REQUIRE_OK(grove_index_build(join_ref_view(s), NULL, NULL, &ix));
        grove_join_params jp;
        grove_join_params_init(&jp);
        jp.eps = eps;
        grove_join_result r;
        REQUIRE_OK(grove_join(join_ref_view(s), NULL, NULL, &jp, &r, NULL));
        size_t m_once = 0;
        uint64_t *want_all = malloc(((size_t)r.pairs + 1) * sizeof *want_all);
        uint64_t *want_once = malloc(((size_t)r.pairs + 1) * sizeof *want_once);
        for (size_t q = 0; q < n; q++)
            for (int64_t k = r.offsets[q]; k < r.offsets[q + 1]; k++) {
                want_all[k] = (uint64_t)q << 32 | (uint64_t)r.indices[k];
                if ((size_t)r.indices[k] > q) want_once[m_once++] = (uint64_t)q << 32 | (uint64_t)r.indices[k];
            }
        CHECK(r.pairs > (int64_t)(4 * n));
        collected c[2];
        for (int t = 0; t < 2; t++) {
            CHECK_OK(run_visit(ix, eps, 1, NULL, t + 1, 0, &c[t]));
            CHECK_MSG(c[t].count == m_once && memcmp(c[t].pair, want_once, m_once * sizeof *want_once) == 0,
                      "d=%zu threads=%d: once mode gave %zu pairs, the join %zu", d, t + 1, c[t].count, m_once);
            collected_free(&c[t]);
        }
        for (int t = 0; t < 2; t++) {
            CHECK_OK(run_visit(ix, eps, 0, NULL, t + 1, 0, &c[t]));
            CHECK_MSG(c[t].count == (size_t)r.pairs &&
                          memcmp(c[t].pair, want_all, (size_t)r.pairs * sizeof *want_all) == 0,
                      "d=%zu threads=%d: every-pair mode gave %zu pairs, the join %lld", d, t + 1, c[t].count,
                      (long long)r.pairs);
        }
        CHECK_MSG(memcmp(c[0].hash, c[1].hash, n * sizeof *c[0].hash) == 0,
                  "d=%zu: a query's neighbour order depends on the thread count", d);
        for (int t = 0; t < 2; t++) collected_free(&c[t]);
        free(want_all);
        free(want_once);
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
    REQUIRE_OK(grove_index_build(join_ref_view(s), NULL, NULL, &ix));
    collected c;
    memset(&c, 0, sizeof c);
    c.hash = calloc(s->n, sizeof *c.hash);
    c.stop_after = 5;
    grove__join_visitor v = {0.01, 1, NULL, collect, &c, NULL, NULL};
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
    v.once = 0;
    v.block = collect_block;
    CHECK_FAILS(grove__join_visit(ix, &v, NULL), GROVE_INVALID_ARGUMENT, "group shortcuts need the once mode");
    v.once = 1;
    v.block = NULL;
    uint8_t one = 1;
    v.queries = &one;
    CHECK_FAILS(grove__join_visit(ix, &v, NULL), GROVE_INVALID_ARGUMENT, "every-pair mode");
    v.fn = NULL;
    CHECK_FAILS(grove__join_visit(ix, &v, NULL), GROVE_INVALID_ARGUMENT, "callback is NULL");
    CHECK_FAILS(grove__join_visit(NULL, &v, NULL), GROVE_INVALID_ARGUMENT, "index is NULL");
    free(c.pair);
    free(c.hash);
    grove_index_free(ix);
    join_ref_free(s);
}
