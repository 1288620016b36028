/* grove_dbscan against a brute-force DBSCAN that follows scikit-learn's
 * own expansion (dbscan_ref.h), so labels must agree exactly. */
#include "test.h"

#include "internal.h"
#include "dbscan_ref.h"
#include "join_ref.h"

#include <math.h>

/* Border points within eps of core points of two clusters or more, over
 * every reference run: the tests must meet the border rule often. */
static size_t contested_borders;

/* Run grove_dbscan and the reference; labels and core flags must be equal. */
static void check_dbscan(const ref_set *s, double eps, size_t min_samples, const double *weight, int threads,
                         const char *what)
{
    size_t n = s->n;
    double eps2 = s->f32 ? (double)(float)(eps * eps) : eps * eps;
    int64_t *want = malloc(n * sizeof *want), *got = malloc(n * sizeof *got);
    uint8_t *want_core = malloc(n), *got_core = malloc(n);
    contested_borders += dbscan_ref(s, eps2, min_samples, weight, want, want_core);
    grove_dbscan_params p;
    grove_dbscan_params_init(&p);
    p.eps = eps;
    p.min_samples = min_samples;
    p.sample_weight = weight;
    grove_options opt;
    grove_options_init(&opt);
    opt.threads = threads;
    grove_dbscan_counts counts;
    grove_status st = grove_dbscan(join_ref_view(s), NULL, &p, got, got_core, &counts, &opt);
    CHECK_MSG(st == GROVE_OK, "%s: %s", what, grove_last_error());
    size_t bad = 0, first = n, clusters = 0, ncore = 0, noise = 0;
    for (size_t i = 0; st == GROVE_OK && i < n; i++) {
        if (got[i] != want[i] || got_core[i] != want_core[i]) {
            bad++;
            first = first < i ? first : i;
        }
        clusters = want[i] + 1 > (int64_t)clusters ? (size_t)want[i] + 1 : clusters;
        ncore += want_core[i];
        noise += want[i] < 0;
    }
    CHECK_MSG(bad == 0, "%s: %zu rows differ, first %zu: label %lld core %d, reference %lld core %d", what, bad,
              first, first < n ? (long long)got[first] : 0LL, first < n ? got_core[first] : 0,
              first < n ? (long long)want[first] : 0LL, first < n ? want_core[first] : 0);
    CHECK_MSG(st != GROVE_OK || (counts.clusters == clusters && counts.core == ncore && counts.noise == noise),
              "%s: counts %zu/%zu/%zu, reference %zu/%zu/%zu", what, counts.clusters, counts.core, counts.noise,
              clusters, ncore, noise);
    free(want);
    free(got);
    free(want_core);
    free(got_core);
}

static int dbl_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The radius whose eps^2 is a pair's exact squared distance, taken at the
 * given fraction of the pairs (all of them, or a fixed sample of 2^18 on
 * large sets), so boundary pairs exist and, on lattice and duplicate data,
 * eps lies exactly on a lattice distance. */
static double pair_radius(const ref_set *s, double fraction)
{
    enum { SAMPLE = 1 << 18 };
    size_t n = s->n, all = n * (n - 1) / 2, m = 0;
    double *d2 = malloc((all < SAMPLE ? all : SAMPLE) * sizeof *d2);
    if (all <= SAMPLE) {
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j < i; j++) d2[m++] = join_ref_dist2(s, i, s, j);
    } else {
        grove_rng rng;
        grove_rng_seed(&rng, n);
        for (; m < SAMPLE; m++) {
            size_t i = grove_rng_below(&rng, n), j = grove_rng_below(&rng, n - 1);
            d2[m] = join_ref_dist2(s, i, s, j + (j >= i));
        }
    }
    qsort(d2, m, sizeof *d2, dbl_cmp);
    size_t k = (size_t)(fraction * (double)m);
    double r = sqrt(d2[k < m ? k : m - 1]);
    free(d2);
    return r;
}

/* Weights by kind: none; small integers (zero and negative among them);
 * quarters; tenths (not exact in binary: neighbourhoods sum to within
 * rounding of min_samples); large ones, +-2^1000 among them, whose
 * cancelling pairs leave the small ones to decide; values that put a sum a
 * few units in the last place from a whole number (half-way cases too);
 * all ones. */
enum { WEIGHT_KINDS = 7, WEIGHT_ONES = 6 };

static double make_weight(int kind, grove_rng *rng)
{
    static const double close[] = {1, 1, 0.5, -0x1p-54, 0x1p-53, -0x1p-110, 0x1p-110, 1 - 0x1p-53, 0.1, 0.2, 0.3};
    double k = (double)grove_rng_below(rng, 11);
    switch (kind) {
    case 1: return (double)grove_rng_below(rng, 5) - 1;
    case 2: return (k - 2) / 4;
    case 3: return (k - 3) / 10;
    case 4: return k < 2 ? (k == 0 ? 0x1p1000 : -0x1p1000) : (k - 4) * 1e6 + 0.1;
    case 5: return close[grove_rng_below(rng, sizeof close / sizeof *close)];
    default: return 1;
    }
}

static double *make_weights(int kind, size_t n, uint64_t seed)
{
    if (kind == 0) return NULL;
    grove_rng rng;
    grove_rng_seed(&rng, seed);
    double *w = malloc(n * sizeof *w);
    for (size_t i = 0; i < n; i++) w[i] = make_weight(kind, &rng);
    return w;
}

TEST(dbscan_against_reference)
{
    static const size_t dims[] = {1, 2, 3, 8, 64, 784};
    static const size_t min_samples[] = {1, 2, 5, 12, 50};
    uint64_t seed = 100;
    for (size_t di = 0; di < sizeof dims / sizeof *dims; di++) {
        size_t d = dims[di], n = d >= 64 ? 140 : 260;
        for (int kind = 0; kind < TEST_KINDS; kind++) {
            bool f32 = (kind + di) % 2 == 1;
            ref_set *s = join_ref_make((test_kind)kind, n, d, f32, seed++);
            join_ref_take_order(s, NULL);
            for (size_t mi = 0; mi < sizeof min_samples / sizeof *min_samples; mi++) {
                size_t m = min_samples[mi];
                /* Neighbourhoods of about m / 2, 2 m and 6 m points. */
                static const double per_m[] = {0.5, 2, 6};
                for (size_t r = 0; r < 3; r++) {
                    double eps = pair_radius(s, per_m[r] * (double)m / (double)n);
                    int wkind = (int)((mi + r + di + (size_t)kind) % WEIGHT_KINDS);
                    double *w = make_weights(wkind, n, seed * 7 + r);
                    char what[200];
                    snprintf(what, sizeof what, "%s d=%zu %s min_samples=%zu eps=%.17g weights=%d",
                             test_kind_name[kind], d, f32 ? "f32" : "f64", m, eps, wkind);
                    check_dbscan(s, eps, m, w, 1 + (int)(r % 2), what);
                    free(w);
                }
            }
            join_ref_free(s);
        }
    }

    CHECK_MSG(contested_borders > 50, "only %zu border points between clusters", contested_borders);
}

/* Sizes where the join runs on two threads (and the union-find races). */
TEST_LONG(dbscan_two_threads_against_reference)
{
    static const struct {
        test_kind kind;
        size_t n, d, m;
        double fraction;
    } cases[] = {
        {TEST_UNIFORM, 9000, 3, 10, 2e-3},   {TEST_CLUSTERED, 9000, 2, 30, 1e-2},
        {TEST_LATTICE, 9000, 3, 20, 1e-3},   {TEST_DUPLICATES, 9000, 3, 5, 1e-3},
        {TEST_CLUSTERED, 2600, 64, 8, 3e-2},  {TEST_UNIFORM, 9000, 2, 12, 1e-3},
    };
    size_t contested = contested_borders;
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        ref_set *s = join_ref_make(cases[c].kind, cases[c].n, cases[c].d, c % 2 == 1, 40 + c);
        join_ref_take_order(s, NULL);
        double eps = pair_radius(s, cases[c].fraction);
        static const int wkinds[] = {0, 1, 5};
        for (size_t k = 0; k < sizeof wkinds / sizeof *wkinds; k++) {
            int wkind = wkinds[k];
            double *w = make_weights(wkind, s->n, c);
            char what[160];
            snprintf(what, sizeof what, "%s n=%zu d=%zu min_samples=%zu weights=%d (2 threads)",
                     test_kind_name[cases[c].kind], s->n, s->d, cases[c].m, wkind);
            check_dbscan(s, eps, cases[c].m, w, 2, what);
            free(w);
        }
        join_ref_free(s);
    }

    CHECK_MSG(contested_borders - contested > 50, "only %zu border points between clusters",
              contested_borders - contested);
}

TEST(dbscan_small_inputs_and_errors)
{
    double x[8] = {0, 0, 0, 1, 5, 5, 0, 0.5};
    int64_t labels[4] = {7, 7, 7, 7};
    uint8_t core[4];
    grove_dbscan_params p;
    grove_dbscan_params_init(&p);
    CHECK(p.eps == 0.5 && p.min_samples == 5 && p.sample_weight == NULL);
    grove_dbscan_counts counts;
    CHECK_OK(grove_dbscan(grove_points_f64(x, 0, 2), NULL, &p, NULL, NULL, &counts, NULL));
    CHECK(counts.clusters == 0 && counts.core == 0 && counts.noise == 0);
    p.min_samples = 1;
    CHECK_OK(grove_dbscan(grove_points_f64(x, 1, 2), NULL, &p, labels, core, &counts, NULL));
    CHECK(labels[0] == 0 && core[0] == 1 && counts.clusters == 1);
    /* Rows 0, 3 and 1 chain at 0.5 apart; row 2 is alone. */
    p.min_samples = 2;
    CHECK_OK(grove_dbscan(grove_points_f64(x, 4, 2), NULL, &p, labels, core, &counts, NULL));
    CHECK(labels[0] == 0 && labels[1] == 0 && labels[2] == -1 && labels[3] == 0);
    CHECK(core[0] && core[1] && !core[2] && core[3] && counts.core == 3 && counts.noise == 1);
    /* min_samples 3: only row 3 has 3 points within 0.5, so 0 and 1 are its border. */
    p.min_samples = 3;
    CHECK_OK(grove_dbscan(grove_points_f64(x, 4, 2), NULL, &p, labels, NULL, &counts, NULL));
    CHECK(labels[0] == 0 && labels[1] == 0 && labels[2] == -1 && labels[3] == 0 && counts.core == 1);
    double w[4] = {1, 1, 5, -1};
    p.sample_weight = w;
    CHECK_OK(grove_dbscan(grove_points_f64(x, 4, 2), NULL, &p, labels, core, &counts, NULL));
    CHECK(labels[0] == -1 && labels[1] == -1 && labels[2] == 0 && labels[3] == -1 && counts.clusters == 1);
    /* Three copies of a point whose weights sum to 1 - 2^-54 - 2^-110:
     * rounded once that is 1 - 2^-53, under min_samples 1, though a sum
     * rounded step by step (or compensated, then rounded) gives 1. */
    double same[6] = {2, 2, 2, 2, 2, 2}, tiny[3] = {-0x1p-54, 1, -0x1p-110};
    p.sample_weight = tiny;
    p.min_samples = 1;
    CHECK_OK(grove_dbscan(grove_points_f64(same, 3, 2), NULL, &p, labels, core, &counts, NULL));
    CHECK(!core[0] && !core[1] && !core[2] && labels[0] == -1 && counts.noise == 3);
    tiny[2] = 0x1p-110;
    CHECK_OK(grove_dbscan(grove_points_f64(same, 3, 2), NULL, &p, labels, core, &counts, NULL));
    CHECK(core[0] && core[1] && core[2] && labels[2] == 0 && counts.clusters == 1);
    p.min_samples = 3;
    p.sample_weight = w;
    w[1] = NAN;
    CHECK_FAILS(grove_dbscan(grove_points_f64(x, 4, 2), NULL, &p, labels, core, NULL, NULL), GROVE_INVALID_ARGUMENT,
                "sample_weight[1]");
    p.sample_weight = NULL;
    p.eps = -1;
    CHECK_FAILS(grove_dbscan(grove_points_f64(x, 4, 2), NULL, &p, labels, core, NULL, NULL), GROVE_INVALID_ARGUMENT,
                "eps = -1");
    p.eps = INFINITY;
    CHECK_FAILS(grove_dbscan(grove_points_f64(x, 4, 2), NULL, &p, labels, core, NULL, NULL), GROVE_INVALID_ARGUMENT,
                "eps = inf");
    p.eps = 1;
    p.min_samples = 0;
    CHECK_FAILS(grove_dbscan(grove_points_f64(x, 4, 2), NULL, &p, labels, core, NULL, NULL), GROVE_INVALID_ARGUMENT,
                "min_samples = 0");
    p.min_samples = 2;
    CHECK_FAILS(grove_dbscan(grove_points_f64(x, 4, 2), NULL, &p, NULL, core, NULL, NULL), GROVE_INVALID_ARGUMENT,
                "labels is NULL");
    CHECK_FAILS(grove_dbscan(grove_points_f64(x, 4, 2), NULL, NULL, labels, core, NULL, NULL), GROVE_INVALID_ARGUMENT,
                "params is NULL");
    x[5] = NAN;
    CHECK_FAILS(grove_dbscan(grove_points_f64(x, 4, 2), NULL, &p, labels, core, NULL, NULL), GROVE_INVALID_ARGUMENT,
                "row 2");
    x[5] = 5;
    grove_options small;
    grove_options_init(&small);
    small.memory_budget = 4 * 8 - 1;
    CHECK_FAILS(grove_dbscan(grove_points_f64(x, 4, 2), NULL, &p, labels, core, NULL, &small), GROVE_OVER_BUDGET,
                "memory budget of 31 bytes");
    small.memory_budget = 4 * 8;
    CHECK_OK(grove_dbscan(grove_points_f64(x, 4, 2), NULL, &p, labels, core, NULL, &small));
    /* eps 0: only exact duplicates are neighbours. */
    double dup[6] = {1, 1, 2, 1, 1, 1};
    p.eps = 0;
    CHECK_OK(grove_dbscan(grove_points_f64(dup, 3, 2), NULL, &p, labels, core, &counts, NULL));
    CHECK(labels[0] == 0 && labels[1] == -1 && labels[2] == 0 && counts.noise == 1);
}

/* Weights of one are the unweighted counts, with the same labels. */
TEST(dbscan_weights_of_one_equal_no_weights)
{
    ref_set *s = join_ref_make(TEST_CLUSTERED, 900, 3, false, 12);
    double *ones = make_weights(WEIGHT_ONES, s->n, 1);
    int64_t *plain = malloc(s->n * sizeof *plain), *weighed = malloc(s->n * sizeof *weighed);
    uint8_t *core_plain = malloc(s->n), *core_weighed = malloc(s->n);
    grove_dbscan_params p;
    grove_dbscan_params_init(&p);
    p.eps = pair_radius(s, 30.0 / 900);
    p.min_samples = 6;
    grove_dbscan_counts k1, k2;
    REQUIRE_OK(grove_dbscan(join_ref_view(s), NULL, &p, plain, core_plain, &k1, NULL));
    p.sample_weight = ones;
    REQUIRE_OK(grove_dbscan(join_ref_view(s), NULL, &p, weighed, core_weighed, &k2, NULL));
    CHECK(memcmp(plain, weighed, s->n * sizeof *plain) == 0 && memcmp(core_plain, core_weighed, s->n) == 0);
    CHECK(k1.clusters == k2.clusters && k1.core == k2.core && k1.noise == k2.noise);
    CHECK_MSG(k1.clusters > 1 && k1.noise > 0, "%zu clusters, %zu noise", k1.clusters, k1.noise);
    free(ones);
    free(plain);
    free(weighed);
    free(core_plain);
    free(core_weighed);
    join_ref_free(s);
}

/* Every allocation failing in turn: out of memory or the right labels. */
TEST(dbscan_allocation_failures)
{
    ref_set *s = join_ref_make(TEST_CLUSTERED, 400, 3, false, 8);
    grove_dbscan_params p;
    grove_dbscan_params_init(&p);
    p.eps = 0.02;
    p.min_samples = 4;
    double *w = make_weights(1, s->n, 3);
    int64_t good[400], got[400];
    grove_options opt;
    grove_options_init(&opt);
    opt.threads = 1;
    for (int weighted = 0; weighted < 2; weighted++) {
        p.sample_weight = weighted ? w : NULL;
        REQUIRE_OK(grove_dbscan(join_ref_view(s), NULL, &p, good, NULL, NULL, &opt));
        for (long k = 1; k < 40; k++) {
            grove__alloc_fail_after(k);
            grove_status st = grove_dbscan(join_ref_view(s), NULL, &p, got, NULL, NULL, &opt);
            grove__alloc_fail_after(0);
            CHECK_MSG(st == GROVE_OK || st == GROVE_OUT_OF_MEMORY, "failure %ld: %s", k, grove_status_str(st));
            if (st == GROVE_OK) CHECK(memcmp(got, good, sizeof good) == 0);
        }
    }
    free(w);
    join_ref_free(s);
}
