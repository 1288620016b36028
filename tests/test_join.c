/* The epsilon join and kNN against brute force (join_ref.h: the reference
 * sums squared distances as the library documents, so pair sets must agree
 * exactly, boundary pairs included). */
#include "test.h"

#include "join_ref.h"
#include "join/join_internal.h"

#include <math.h>
#include <stdbool.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

/* What a streamed join must deliver: the one-shot CSR, batch by batch. */
typedef struct stream_check {
    const int64_t *offsets, *want;
    const double *want_d;
    size_t next_q, budget, batches;
    bool ok;
} stream_check;

static int on_batch(void *user, const grove_join_batch *b)
{
    stream_check *sc = user;
    size_t nb = b->query_end - b->query_begin;
    int64_t base = sc->offsets[b->query_begin];
    size_t bytes = (nb + 1) * 8 + (size_t)b->offsets[nb] * 16;
    bool ok = b->query_begin == sc->next_q && b->pairs_before == base && b->offsets[0] == 0 &&
              (nb > 0 || sc->next_q == 0) && bytes <= sc->budget;
    for (size_t i = 0; ok && i < nb; i++) ok = b->offsets[i + 1] == sc->offsets[b->query_begin + i + 1] - base;
    for (int64_t i = 0; ok && i < b->offsets[nb]; i++)
        ok = b->indices[i] == sc->want[base + i] && b->distances[i] == sc->want_d[base + i];
    sc->ok &= ok;
    sc->next_q = b->query_end;
    sc->batches++;
    return 0;
}

/* Check one join (self when qs == ds) against brute force: counts, the
 * CSR lists and distances, then the same streamed under a budget of a few
 * queries' worth, and the allocating call. */
static void check_join(const ref_set *ds, const ref_set *qs, double eps, bool exclude, const grove_index_params *ip,
                       const char *what)
{
    bool self = qs == ds;
    grove_points data = join_ref_view(ds), qv = join_ref_view(qs);
    grove_options opt;
    grove_join_params jp;
    grove_index *ix = join_ref_index(ds, ip, eps, exclude, what, &opt, &jp);
    if (!ix) return;
    double eps2 = ds->f32 ? (double)(float)(eps * eps) : eps * eps;
    size_t nq = qs->n;
    int64_t *counts = malloc((nq + 1) * sizeof *counts), *offsets = malloc((nq + 1) * sizeof *offsets);
    int64_t pairs = -1;
    grove_status st = grove_join_count(ix, self ? NULL : &qv, &jp, counts, &pairs, &opt);
    CHECK_MSG(st == GROVE_OK, "%s: count: %s", what, grove_last_error());
    /* Brute force, in row order: exactly the expected CSR. */
    size_t cap = nq * ds->n + 1, m = 0;
    int64_t *want = malloc(cap * sizeof *want);
    double *want_d = malloc(cap * sizeof *want_d);
    offsets[0] = 0;
    for (size_t q = 0; q < nq; q++) {
        for (size_t p = 0; p < ds->n; p++) {
            if (exclude && p == q) continue;
            double d2 = join_ref_dist2(qs, q, ds, p);
            if (d2 <= eps2) {
                want[m] = (int64_t)p;
                want_d[m++] = sqrt(d2);
            }
        }
        offsets[q + 1] = (int64_t)m;
        if (st == GROVE_OK && counts[q] != offsets[q + 1] - offsets[q]) {
            CHECK_MSG(false, "%s: query %zu: count %lld, brute force %lld", what, q, (long long)counts[q],
                      (long long)(offsets[q + 1] - offsets[q]));
            st = GROVE_INTERNAL;
        }
    }
    CHECK_MSG(st != GROVE_OK || pairs == (int64_t)m, "%s: pairs %lld, brute force %zu", what, (long long)pairs, m);
    int64_t *got = malloc((m + 1) * sizeof *got);
    double *got_d = malloc((m + 1) * sizeof *got_d);
    if (st == GROVE_OK) {
        st = grove_join_fill(ix, self ? NULL : &qv, &jp, offsets, got, got_d, &opt);
        CHECK_MSG(st == GROVE_OK, "%s: fill: %s", what, grove_last_error());
    }
    for (size_t i = 0; st == GROVE_OK && i < m; i++)
        if (got[i] != want[i] || got_d[i] != want_d[i]) {
            CHECK_MSG(false, "%s: pair %zu: got row %lld at %.17g, want row %lld at %.17g", what, i, (long long)got[i],
                      got_d[i], (long long)want[i], want_d[i]);
            st = GROVE_INTERNAL;
        }
    if (st == GROVE_OK) {
        int64_t largest = 0;
        for (size_t q = 0; q < nq; q++) largest = counts[q] > largest ? counts[q] : largest;
        grove_options small = opt;
        small.memory_budget = nq * 8 + 16 + (size_t)(largest * 2 + 3) * 16;
        jp.distances = 1;
        stream_check sc = {offsets, want, want_d, 0, small.memory_budget - nq * 8, 0, true};
        CHECK_OK(grove_join_stream(ix, self ? NULL : &qv, &jp, on_batch, &sc, &small));
        CHECK_MSG(sc.ok && sc.next_q == nq, "%s: streamed batches differ from the one-shot result", what);
        CHECK_MSG(nq < 8 || m < 8 * (size_t)largest || sc.batches > 1, "%s: a tiny budget gave one batch", what);
        grove_join_result r;
        CHECK_OK(grove_join(data, self ? NULL : &qv, NULL, &jp, &r, &opt));
        CHECK(r.nq == nq && r.pairs == (int64_t)m);
        CHECK(r.pairs == 0 || (memcmp(r.indices, want, m * sizeof *want) == 0 &&
                               memcmp(r.distances, want_d, m * sizeof *want_d) == 0));
        CHECK(memcmp(r.offsets, offsets, (nq + 1) * sizeof *offsets) == 0);
        grove_join_result_free(&r);
        /* On the same index in one call: the count and fill's CSR, byte for byte. */
        CHECK_OK(grove_join_search(ix, self ? NULL : &qv, &jp, &r, &opt));
        CHECK_MSG(r.nq == nq && r.pairs == (int64_t)m && memcmp(r.offsets, offsets, (nq + 1) * sizeof *offsets) == 0 &&
                      (m == 0 || (memcmp(r.indices, got, m * sizeof *got) == 0 &&
                                  memcmp(r.distances, got_d, m * sizeof *got_d) == 0)),
                  "%s: grove_join_search differs from count and fill", what);
        grove_join_result_free(&r);
    }
    free(counts);
    free(offsets);
    free(want);
    free(want_d);
    free(got);
    free(got_d);
    grove_index_free(ix);
}

/* Radii that give none, some and all of the pairs for data spread over
 * about `scale` per axis. */
static double radius(size_t r, size_t d, double scale)
{
    static const double frac[] = {0, 0.05, 0.2, 0.5, 3};
    return frac[r] * scale * sqrt((double)d);
}

TEST(join_self_against_brute_force)
{
    static const size_t dims[] = {1, 2, 3, 8, 18, 64, 128, 784};
    uint64_t seed = 1;
    for (size_t di = 0; di < sizeof dims / sizeof *dims; di++) {
        size_t d = dims[di], n = d >= 128 ? 150 : 400;
        for (int kind = 0; kind < TEST_KINDS; kind++) {
            double scale = kind == TEST_UNIFORM ? 1 : kind == TEST_CLUSTERED ? 5 : kind == TEST_LATTICE ? 4 : 12;
            bool f32 = (kind + di) % 2 == 1;
            ref_set *s = join_ref_make((test_kind)kind, n, d, f32, seed++);
            join_ref_take_order(s, NULL);
            for (size_t r = 0; r < 5; r++) {
                double eps = radius(r, d, scale);
                /* Lattice and duplicate data have integer squared distances
                 * (in units of 1/64): put eps exactly on one. */
                if (kind >= TEST_LATTICE) eps = sqrt(floor(eps * eps * 64) / 64);
                char what[160];
                snprintf(what, sizeof what, "self %s d=%zu n=%zu %s eps=%g", test_kind_name[kind], d, n,
                         f32 ? "f32" : "f64", eps);
                check_join(s, s, eps, r % 2 == 1, NULL, what);
            }
            join_ref_free(s);
        }
    }
}

TEST(join_semi_against_brute_force)
{
    static const size_t dims[] = {1, 3, 8, 18, 784};
    static const size_t nqs[] = {0, 1, 257};
    uint64_t seed = 50;
    for (size_t di = 0; di < sizeof dims / sizeof *dims; di++)
        for (size_t qi = 0; qi < 3; qi++)
            for (int kind = 0; kind < TEST_KINDS; kind += 3) {
                size_t d = dims[di], n = d > 100 ? 120 : 500;
                bool f32 = qi == 2;
                ref_set *ds = join_ref_make((test_kind)kind, n, d, f32, seed++);
                ref_set *qs = join_ref_make((test_kind)kind, nqs[qi], d, f32, seed++);
                join_ref_take_order(ds, qs);
                double scale = kind == TEST_UNIFORM ? 1 : 12;
                for (size_t r = 0; r < 5; r += 2) {
                    double eps = radius(r, d, scale);
                    if (kind >= TEST_LATTICE) eps = sqrt(floor(eps * eps * 64) / 64);
                    char what[160];
                    snprintf(what, sizeof what, "semi %s d=%zu n=%zu nq=%zu eps=%g", test_kind_name[kind], d, n,
                             nqs[qi], eps);
                    check_join(ds, qs, eps, false, NULL, what);
                }
                join_ref_free(ds);
                join_ref_free(qs);
            }
}

TEST(join_index_parameters)
{
    /* Leaf sizes from 1 to larger than n, and boxes in 1..d dimensions,
     * must not change the answer. */
    static const size_t leaves[] = {1, 3, 32, 1000}, index_dims[] = {1, 2, 0};
    ref_set *s = join_ref_make(TEST_CLUSTERED, 300, 20, false, 77);
    join_ref_take_order(s, NULL);
    for (size_t l = 0; l < 4; l++)
        for (size_t m = 0; m < 3; m++) {
            grove_index_params ip;
            grove_index_params_init(&ip);
            ip.leaf_size = leaves[l];
            ip.index_dims = index_dims[m];
            char what[96];
            snprintf(what, sizeof what, "leaf %zu dims %zu", leaves[l], index_dims[m]);
            check_join(s, s, 1.5, false, &ip, what);
        }
    join_ref_free(s);
}

/* kNN against brute force: (d2, row) order, ties by the smaller row. */
static void check_knn(const ref_set *ds, const ref_set *qs, size_t k, bool exclude, const char *what)
{
    bool self = qs == ds;
    grove_points qv = join_ref_view(qs);
    size_t nq = qs->n;
    int64_t *idx = malloc((nq * k + 1) * sizeof *idx);
    double *dist = malloc((nq * k + 1) * sizeof *dist), *d2 = malloc(ds->n * sizeof *d2);
    size_t *rank = malloc(ds->n * sizeof *rank);
    grove_options opt;
    grove_options_init(&opt);
    opt.threads = 2;
    grove_status st = grove_knn(join_ref_view(ds), self ? NULL : &qv, NULL, &(grove_knn_params){k, exclude},
                                idx, dist, &opt);
    CHECK_MSG(st == GROVE_OK, "%s: %s", what, grove_last_error());
    for (size_t q = 0; st == GROVE_OK && q < nq; q++) {
        size_t m = 0;
        for (size_t p = 0; p < ds->n; p++) {
            if (exclude && p == q) continue;
            d2[p] = join_ref_dist2(qs, q, ds, p);
            rank[m++] = p;
        }
        /* Selection of the k smallest by (d2, row), in order. */
        for (size_t r = 0; r < k; r++) {
            size_t best = r;
            for (size_t i = r + 1; i < m; i++)
                if (d2[rank[i]] < d2[rank[best]] || (d2[rank[i]] == d2[rank[best]] && rank[i] < rank[best])) best = i;
            size_t t = rank[r];
            rank[r] = rank[best];
            rank[best] = t;
            if (idx[q * k + r] != (int64_t)rank[r] || dist[q * k + r] != sqrt(d2[rank[r]])) {
                CHECK_MSG(false, "%s: query %zu rank %zu: got row %lld at %.17g, want row %zu at %.17g", what, q, r,
                          (long long)idx[q * k + r], dist[q * k + r], rank[r], sqrt(d2[rank[r]]));
                st = GROVE_INTERNAL;
                break;
            }
        }
    }
    free(idx);
    free(dist);
    free(d2);
    free(rank);
}

TEST(knn_against_brute_force)
{
    static const size_t dims[] = {1, 2, 3, 8, 18, 64, 784};
    uint64_t seed = 500;
    for (size_t di = 0; di < sizeof dims / sizeof *dims; di++)
        for (int kind = 0; kind < TEST_KINDS; kind++) {
            size_t d = dims[di], n = d > 100 ? 100 : 300;
            bool f32 = (kind + di) % 2 == 0;
            ref_set *ds = join_ref_make((test_kind)kind, n, d, f32, seed++);
            ref_set *qs = join_ref_make((test_kind)kind, 37, d, f32, seed++);
            join_ref_take_order(ds, qs);
            static const size_t ks[] = {1, 5, 40};
            for (size_t ki = 0; ki < 3; ki++) {
                char what[128];
                snprintf(what, sizeof what, "kNN %s d=%zu k=%zu", test_kind_name[kind], d, ks[ki]);
                check_knn(ds, ds, ks[ki], false, what);
                check_knn(ds, ds, ks[ki], true, what);
                check_knn(ds, qs, ks[ki], false, what);
            }
            check_knn(ds, ds, n, false, "kNN k = n");
            check_knn(ds, ds, n - 1, true, "kNN k = n - 1 excluding self");
            join_ref_free(ds);
            join_ref_free(qs);
        }
}

/* Bytes of address space the process has mapped now (VmSize). */
static size_t mapped_bytes(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    size_t kb = 0;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmSize: %zu kB", &kb) == 1) break;
    if (f) fclose(f);
    return kb * 1024;
}

/* Many more dimensions than points: the principal axes must not need a
 * d x d matrix (3.2 GB at d = 20000). A child process runs the join and
 * kNN with its address space capped 256 MB above what it holds, and
 * checks them against brute force. Sanitizers reserve terabytes of
 * address space, so the cap is left off under them. */
TEST(join_many_dimensions_memory_linear_in_d)
{
    const char *sanitize = getenv("GROVE_SANITIZE");
    bool cap = !(sanitize && *sanitize);
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        ref_set *ds = join_ref_make(TEST_CLUSTERED, 20, 20000, false, 77);
        join_ref_take_order(ds, NULL);
        struct rlimit limit = {mapped_bytes() + ((size_t)256 << 20), RLIM_INFINITY};
        limit.rlim_max = limit.rlim_cur;
        if (cap && setrlimit(RLIMIT_AS, &limit) != 0) _exit(3);
        check_knn(ds, ds, 3, true, "d = 20000 kNN");
        check_join(ds, ds, radius(2, 20000, 1), false, NULL, "d = 20000 join");
        _exit(test_failed_now() ? 1 : 0);
    }
    int status = 0;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the d = 20000 child failed (status %d)", status);
}

/* Seconds of CPU time this process has used (every thread). */
/* A few points in very many dimensions (an image or a spectrum per row):
 * the index's dimension order, checked against variances computed here
 * (columns in groups of four equal ones for the ties), and the kNN against
 * brute force. Its time, linear in d since the order is a heap sort (it
 * was an insertion sort, quadratic), is bench/wide_index.py's. */
TEST(index_on_few_points_in_many_dimensions)
{
    size_t n = 4, d = (size_t)1 << 18, k = 2;
    double *x = test_points(TEST_UNIFORM, n, d / 4, 81), *y = malloc(n * d * sizeof *y), *var = malloc(d * sizeof *var);
    size_t *order = malloc(d * sizeof *order);
    REQUIRE(x && y && var && order);
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < d; j++) y[i * d + j] = x[i * (d / 4) + j / 4];
    grove_options o;
    grove_options_init(&o);
    o.threads = 1;
    grove_index *ix = NULL;
    REQUIRE_OK(grove_index_create(grove_points_f64(y, n, d), NULL, &o, &ix));
    grove_index_dim_order(ix, order);
    for (size_t j = 0; j < d; j++) {
        double mean = 0, v = 0;
        for (size_t i = 0; i < n; i++) mean += y[i * d + j] / (double)n;
        for (size_t i = 0; i < n; i++) v += (y[i * d + j] - mean) * (y[i * d + j] - mean);
        var[j] = v;
    }
    bool ordered = true;
    for (size_t j = 0; j + 1 < d && ordered; j++) {
        size_t a = order[j], b = order[j + 1];
        /* Equal columns tie exactly: the lower dimension first. */
        ordered = a / 4 == b / 4 ? a < b : var[a] >= var[b] * (1 - 1e-12);
        CHECK_MSG(ordered, "dimension order: %zu (variance %.17g) before %zu (%.17g)", a, var[a], b, var[b]);
    }
    int64_t idx[4 * 2];
    double dist[4 * 2];
    CHECK_OK(grove_knn_search(ix, NULL, &(grove_knn_params){k, 1}, idx, dist, &o));
    for (size_t q = 0; q < n; q++) {
        /* The two nearest other points, by brute force (ties are not expected in random data). */
        double d2[4];
        size_t first = q == 0 ? 1 : 0, second = SIZE_MAX;
        for (size_t p = 0; p < n; p++) {
            d2[p] = 0;
            for (size_t j = 0; j < d; j++) d2[p] += (y[q * d + j] - y[p * d + j]) * (y[q * d + j] - y[p * d + j]);
        }
        for (size_t p = 0; p < n; p++)
            if (p != q && d2[p] < d2[first]) first = p;
        for (size_t p = 0; p < n; p++)
            if (p != q && p != first && (second == SIZE_MAX || d2[p] < d2[second])) second = p;
        CHECK_MSG(idx[q * k] == (int64_t)first && idx[q * k + 1] == (int64_t)second,
                  "query %zu: neighbours %lld, %lld; brute force %zu, %zu", q, (long long)idx[q * k],
                  (long long)idx[q * k + 1], first, second);
        CHECK(fabs(dist[q * k] - sqrt(d2[first])) <= 1e-12 * sqrt(d2[first]));
    }
    grove_index_free(ix);
    free(x);
    free(y);
    free(var);
    free(order);
}

TEST(join_threads_give_identical_results)
{
    ref_set *s = join_ref_make(TEST_UNIFORM, 40000, 3, false, 9);
    grove_join_params jp;
    grove_join_params_init(&jp);
    jp.eps = 0.05; /* about 20 neighbours each */
    jp.distances = 1;
    grove_join_result r[2];
    int64_t *kidx[2];
    for (int t = 0; t < 2; t++) {
        grove_options opt;
        grove_options_init(&opt);
        opt.threads = t + 1;
        CHECK_OK(grove_join(join_ref_view(s), NULL, NULL, &jp, &r[t], &opt));
        kidx[t] = malloc(40000 * 4 * sizeof **kidx);
        CHECK_OK(grove_knn(join_ref_view(s), NULL, NULL, &(grove_knn_params){4, 1}, kidx[t], NULL, &opt));
    }
    CHECK(r[0].pairs > 40000 && r[0].pairs == r[1].pairs);
    CHECK(r[0].pairs != r[1].pairs ||
          (memcmp(r[0].indices, r[1].indices, (size_t)r[0].pairs * 8) == 0 &&
           memcmp(r[0].distances, r[1].distances, (size_t)r[0].pairs * 8) == 0));
    CHECK(memcmp(kidx[0], kidx[1], 40000 * 4 * sizeof **kidx) == 0);
    for (int t = 0; t < 2; t++) {
        grove_join_result_free(&r[t]);
        free(kidx[t]);
    }
    join_ref_free(s);
}

TEST(join_errors_name_the_problem)
{
    double x[12] = {0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5}, bad[4] = {0, 0, NAN, 1};
    grove_points p = grove_points_f64(x, 6, 2), q3 = grove_points_f64(x, 4, 3), qbad = grove_points_f64(bad, 2, 2);
    grove_index *ix = NULL;
    REQUIRE_OK(grove_index_create(p, NULL, NULL, &ix));
    grove_join_params jp;
    grove_join_params_init(&jp);
    int64_t counts[6], offsets[7] = {0, 1, 2, 3, 4, 5, 6}, idx[64];
    jp.eps = -1;
    CHECK_FAILS(grove_join_count(ix, NULL, &jp, counts, NULL, NULL), GROVE_INVALID_ARGUMENT, "eps = -1");
    jp.eps = NAN;
    CHECK_FAILS(grove_join_count(ix, NULL, &jp, counts, NULL, NULL), GROVE_INVALID_ARGUMENT, "eps");
    jp.eps = 1.5;
    jp.exclude_self = 1;
    CHECK_FAILS(grove_join_count(ix, &p, &jp, counts, NULL, NULL), GROVE_INVALID_ARGUMENT, "self-joins only");
    jp.exclude_self = 0;
    CHECK_FAILS(grove_join_count(ix, &q3, &jp, counts, NULL, NULL), GROVE_INVALID_ARGUMENT, "d = 3");
    CHECK_FAILS(grove_join_count(ix, &qbad, &jp, counts, NULL, NULL), GROVE_INVALID_ARGUMENT, "queries");
    /* Each point has 3 neighbours within 1.5 (itself and two), except the
     * ends: offsets of one per query are wrong from query 0 on. */
    CHECK_FAILS(grove_join_fill(ix, NULL, &jp, offsets, idx, NULL, NULL), GROVE_INVALID_ARGUMENT, "query 0");
    offsets[3] = 1;
    CHECK_FAILS(grove_join_fill(ix, NULL, &jp, offsets, idx, NULL, NULL), GROVE_INVALID_ARGUMENT, "decrease at query 2");
    grove_options small;
    grove_options_init(&small);
    small.memory_budget = 20;
    grove_join_result r;
    CHECK_FAILS(grove_join(p, NULL, NULL, &jp, &r, &small), GROVE_OVER_BUDGET, "memory budget");
    CHECK(r.offsets == NULL && r.indices == NULL);
    CHECK_FAILS(grove_join_stream(ix, NULL, &jp, on_batch, NULL, &small), GROVE_OVER_BUDGET, "per-query counts");
    small.memory_budget = 6 * 8 + 30; /* the counts, and less than query 0 needs */
    CHECK_FAILS(grove_join_stream(ix, NULL, &jp, on_batch, NULL, &small), GROVE_OVER_BUDGET, "query 0 alone");
    int64_t kn[12];
    CHECK_FAILS(grove_knn_search(ix, NULL, &(grove_knn_params){7, 0}, kn, NULL, NULL), GROVE_INVALID_ARGUMENT, "k = 7");
    CHECK_FAILS(grove_knn_search(ix, NULL, &(grove_knn_params){6, 1}, kn, NULL, NULL), GROVE_INVALID_ARGUMENT, "k = 6");
    CHECK_FAILS(grove_knn_search(ix, NULL, &(grove_knn_params){0, 0}, kn, NULL, NULL), GROVE_INVALID_ARGUMENT, "k = 0");
    /* The same above 16 dimensions, where a self-join fill writes both
     * ends of each pair (the query named is the first whose count is off). */
    double wide[6 * 20] = {0};
    for (size_t i = 0; i < 6; i++) wide[i * 20 + i % 20] = (double)i;
    grove_index *wide_ix = NULL;
    REQUIRE_OK(grove_index_create(grove_points_f64(wide, 6, 20), NULL, NULL, &wide_ix));
    int64_t wide_offsets[7] = {0, 1, 2, 3, 4, 5, 7};
    jp.eps = 1.5; /* rows 0 and 1 are 1 apart, the others farther */
    CHECK_FAILS(grove_join_fill(wide_ix, NULL, &jp, wide_offsets, idx, NULL, NULL), GROVE_INVALID_ARGUMENT,
                "query 0 1 neighbours but it has 2");
    grove_index_free(wide_ix);
    grove_index_params ip;
    grove_index_params_init(&ip);
    ip.index_dims = 3;
    grove_index *bad_ix = NULL;
    CHECK_FAILS(grove_index_create(p, &ip, NULL, &bad_ix), GROVE_INVALID_ARGUMENT, "index_dims = 3");
    CHECK(bad_ix == NULL);
    grove_index_free(ix);
}

/* grove_join_search refuses what count and fill refuse, plus a NULL
 * result or a result over the memory budget, and leaves the result empty. */
TEST(join_search_refusals)
{
    double x[6] = {0, 1, 2, 3, 4, 5};
    grove_points p = grove_points_f64(x, 6, 1);
    grove_index *ix = NULL;
    REQUIRE_OK(grove_index_create(p, NULL, NULL, &ix));
    grove_join_params jp;
    grove_join_params_init(&jp);
    jp.eps = 1.5;
    grove_join_result r;
    CHECK_FAILS(grove_join_search(NULL, NULL, &jp, &r, NULL), GROVE_INVALID_ARGUMENT, "index is NULL");
    CHECK(r.offsets == NULL && r.indices == NULL);
    CHECK_FAILS(grove_join_search(ix, NULL, NULL, &r, NULL), GROVE_INVALID_ARGUMENT, "params is NULL");
    CHECK_FAILS(grove_join_search(ix, NULL, &jp, NULL, NULL), GROVE_INVALID_ARGUMENT, "result is NULL");
    jp.exclude_self = 1;
    CHECK_FAILS(grove_join_search(ix, &p, &jp, &r, NULL), GROVE_INVALID_ARGUMENT, "self-joins only");
    grove_options small;
    grove_options_init(&small);
    small.memory_budget = 20;
    CHECK_FAILS(grove_join_search(ix, NULL, &jp, &r, &small), GROVE_OVER_BUDGET, "memory budget");
    CHECK(r.offsets == NULL && r.indices == NULL && r.pairs == 0);
    /* The first and last point have one neighbour each, the others two. */
    CHECK_OK(grove_join_search(ix, NULL, &jp, &r, NULL));
    CHECK(r.nq == 6 && r.pairs == 10 && r.distances == NULL && r.offsets[1] == 1 && r.indices[0] == 1);
    grove_join_result_free(&r);
    grove_index_free(ix);
}

TEST(join_empty_inputs)
{
    double x[4] = {0, 0, 1, 1};
    grove_join_params jp;
    grove_join_params_init(&jp);
    jp.eps = 2;
    grove_join_result r;
    grove_points none = grove_points_f64(x, 0, 2), two = grove_points_f64(x, 2, 2);
    CHECK_OK(grove_join(none, NULL, NULL, &jp, &r, NULL));
    CHECK(r.nq == 0 && r.pairs == 0 && r.offsets && r.offsets[0] == 0);
    grove_join_result_free(&r);
    CHECK_OK(grove_join(none, &two, NULL, &jp, &r, NULL));
    CHECK(r.nq == 2 && r.pairs == 0 && r.offsets[2] == 0);
    grove_join_result_free(&r);
    CHECK_OK(grove_join(two, &none, NULL, &jp, &r, NULL));
    CHECK(r.nq == 0 && r.pairs == 0);
    grove_join_result_free(&r);
}

/* Every allocation of a join (low and high dimensions: the latter keeps
 * hits between its passes) and a kNN failing in turn. */
static void check_allocation_failures(size_t d)
{
    ref_set *s = join_ref_make(TEST_UNIFORM, 500, d, false, 4);
    grove_join_params jp;
    grove_join_params_init(&jp);
    jp.eps = 0.2 * sqrt((double)d / 3);
    jp.distances = 1;
    grove_options opt;
    grove_options_init(&opt);
    opt.threads = 1;
    grove_join_result good;
    REQUIRE_OK(grove_join(join_ref_view(s), NULL, NULL, &jp, &good, &opt));
    int64_t kn[500 * 3];
    for (long k = 1; k < 60; k++) {
        grove_join_result r;
        grove__alloc_fail_after(k);
        grove_status st = grove_join(join_ref_view(s), NULL, NULL, &jp, &r, &opt);
        grove__alloc_fail_after(0);
        CHECK_MSG(st == GROVE_OK || st == GROVE_OUT_OF_MEMORY, "failure %ld: %s", k, grove_status_str(st));
        if (st == GROVE_OK) CHECK(r.pairs == good.pairs && memcmp(r.indices, good.indices, (size_t)r.pairs * 8) == 0);
        else CHECK(r.offsets == NULL && r.indices == NULL && r.distances == NULL);
        grove_join_result_free(&r);
        grove__alloc_fail_after(k);
        st = grove_knn(join_ref_view(s), NULL, NULL, &(grove_knn_params){3, 0}, kn, NULL, &opt);
        grove__alloc_fail_after(0);
        CHECK(st == GROVE_OK || st == GROVE_OUT_OF_MEMORY);
    }
    grove_join_result_free(&good);
    join_ref_free(s);
}

TEST(join_allocation_failures)
{
    check_allocation_failures(3);
    check_allocation_failures(24);
}
