/* Cancellation: grove_options.cancel raised from a second thread while a
 * long call runs stops the work in flight with GROVE_CANCELLED, not only
 * between its large units (a Borůvka round, a block of queries, a force
 * evaluation, an N-body step, a prediction's queries, a ball tree check's
 * node, generated rows). Each input makes the unit running when the
 * flag goes up far longer than the delay, so the checks look at what was
 * left undone (queries never answered, a round never reported, a call
 * that returned GROVE_CANCELLED where finishing would return GROVE_OK),
 * never at the clock. */
#include "test.h"

#include "index/index.h"

#include <math.h>
#include <pthread.h>
#include <time.h>

/* A cancel flag raised DELAY_MS after start, and the progress reports made
 * after it was raised: a report of a stage finished after the flag went up
 * means the unit in flight ran to its end. */
enum { DELAY_MS = 20 };
typedef struct canceller {
    volatile int flag;
    volatile int late_reports;
    pthread_t thread;
} canceller;

static void *raise_later(void *arg)
{
    canceller *c = arg;
    struct timespec delay = {0, DELAY_MS * 1000000L};
    nanosleep(&delay, NULL);
    c->flag = 1;
    return NULL;
}

static void note_late(void *user, const char *stage, double fraction)
{
    (void)stage;
    (void)fraction;
    canceller *c = user;
    if (c->flag) c->late_reports++;
}

/* Options with the flag and the progress hook, and the raising thread started. */
static grove_options canceller_start(canceller *c)
{
    c->flag = 0;
    c->late_reports = 0;
    grove_options o;
    grove_options_init(&o);
    o.cancel = &c->flag;
    o.progress = note_late;
    o.progress_user = c;
    if (pthread_create(&c->thread, NULL, raise_later, c) != 0) c->flag = 1; /* still a cancelled call */
    return o;
}

static void canceller_join(canceller *c) { pthread_join(c->thread, NULL); }

/* How many of n values still hold the fill value: work never done. */
static size_t untouched_i64(const int64_t *v, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) k += v[i] == -1;
    return k;
}

TEST(cancel_emst_stops_inside_a_round)
{
    /* 10^6 points: the first Borůvka round takes far longer than the delay. */
    size_t n = 1000000;
    double *x = test_points(TEST_UNIFORM, n, 3, 71);
    int64_t *edges = malloc(2 * (n - 1) * sizeof *edges);
    double *w = malloc((n - 1) * sizeof *w);
    REQUIRE(x && edges && w);
    canceller c;
    grove_options o = canceller_start(&c);
    grove_status s = grove_emst(grove_points_f64(x, n, 3), NULL, edges, w, &o);
    canceller_join(&c);
    CHECK_MSG(s == GROVE_CANCELLED, "grove_emst -> %s, wanted cancelled", grove_status_str(s));
    CHECK_MSG(c.late_reports == 0, "%d Borůvka rounds were finished after the flag went up", c.late_reports);
    free(x);
    free(edges);
    free(w);
}

TEST(cancel_tree_knn_stops_inside_a_block)
{
    /* One block of queries (fewer than 65536 points), 6-D. */
    size_t n = 60000, d = 6, k = 16;
    double *x = test_points(TEST_UNIFORM, n, d, 72);
    double *kth = malloc(n * sizeof *kth);
    REQUIRE(x && kth);
    for (size_t i = 0; i < n; i++) kth[i] = -1;
    grove__tree t;
    REQUIRE_OK(grove__tree_build(grove_points_f64(x, n, d), 0, grove_options_threads(NULL), &t));
    canceller c;
    grove_options o = canceller_start(&c);
    grove_status s = grove__tree_knn(&t, k, NULL, NULL, kth, &o);
    canceller_join(&c);
    CHECK_MSG(s == GROVE_CANCELLED, "grove__tree_knn -> %s, wanted cancelled", grove_status_str(s));
    size_t left = 0;
    for (size_t i = 0; i < n; i++) left += kth[i] == -1;
    CHECK_MSG(left > 0, "every one of %zu points was answered before the call returned", n);
    grove__tree_free(&t);
    free(x);
    free(kth);
}

TEST(cancel_knn_stops_inside_a_block)
{
    /* One block of query groups, 24-D: each query scans most points. */
    size_t n = 12000, d = 24, k = 8;
    double *x = test_points(TEST_UNIFORM, n, d, 73);
    int64_t *idx = malloc(n * k * sizeof *idx);
    REQUIRE(x && idx);
    for (size_t i = 0; i < n * k; i++) idx[i] = -1;
    canceller c;
    grove_options o = canceller_start(&c);
    grove_status s = grove_knn(grove_points_f64(x, n, d), NULL, NULL, &(grove_knn_params){k, 0}, idx, NULL, &o);
    canceller_join(&c);
    CHECK_MSG(s == GROVE_CANCELLED, "grove_knn -> %s, wanted cancelled", grove_status_str(s));
    CHECK_MSG(untouched_i64(idx, n * k) > 0, "every query was answered before the call returned");
    free(x);
    free(idx);
}

TEST(cancel_join_count_stops_inside_a_block)
{
    size_t n = 12000, d = 24;
    double *x = test_points(TEST_UNIFORM, n, d, 74);
    int64_t *counts = malloc(n * sizeof *counts);
    REQUIRE(x && counts);
    for (size_t i = 0; i < n; i++) counts[i] = -1;
    grove_index *ix = NULL;
    REQUIRE_OK(grove_index_create(grove_points_f64(x, n, d), NULL, NULL, &ix));
    grove_join_params p;
    grove_join_params_init(&p);
    p.eps = 1.0;
    /* The points again as queries, so each query's count is written as it is found. */
    grove_points q = grove_points_f64(x, n, d);
    canceller c;
    grove_options o = canceller_start(&c);
    grove_status s = grove_join_count(ix, &q, &p, counts, NULL, &o);
    canceller_join(&c);
    CHECK_MSG(s == GROVE_CANCELLED, "grove_join_count -> %s, wanted cancelled", grove_status_str(s));
    CHECK_MSG(untouched_i64(counts, n) > 0, "every query was counted before the call returned");
    grove_index_free(ix);
    free(x);
    free(counts);
}

/* n particles of a seeded Gaussian cloud, equal masses summing to 1. */
static void cloud(size_t n, double **pos, double **mass)
{
    *pos = test_points(TEST_CLUSTERED, n, 3, 75);
    *mass = malloc(n * sizeof **mass);
    if (*mass)
        for (size_t i = 0; i < n; i++) (*mass)[i] = 1.0 / (double)n;
}

TEST(cancel_gravity_stops_inside_the_walk)
{
    /* Direct summation (theta = 0) and a tree walk with a small angle. */
    const struct { size_t n; double theta; } cases[] = {{30000, 0}, {200000, 0.2}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t n = cases[i].n;
        double *pos, *mass, *acc = malloc(3 * n * sizeof *acc);
        cloud(n, &pos, &mass);
        REQUIRE(pos && mass && acc);
        grove_gravity_params p;
        grove_gravity_params_init(&p);
        p.theta = cases[i].theta;
        canceller c;
        grove_options o = canceller_start(&c);
        grove_status s = grove_gravity(grove_points_f64(pos, n, 3), mass, &p, acc, NULL, NULL, &o);
        canceller_join(&c);
        CHECK_MSG(s == GROVE_CANCELLED, "grove_gravity (n = %zu, theta = %g) -> %s, wanted cancelled", n, p.theta,
                  grove_status_str(s));
        free(pos);
        free(mass);
        free(acc);
    }
}

TEST(cancel_nbody_step_stops_inside_the_step_and_keeps_the_state)
{
    size_t n = 100000;
    double *pos, *mass, *vel = calloc(3 * n, sizeof *vel);
    cloud(n, &pos, &mass);
    REQUIRE(pos && mass && vel);
    grove_nbody_params p;
    grove_nbody_params_init(&p);
    p.gravity.theta = 0.2;
    grove_nbody *sim = NULL;
    REQUIRE_OK(grove_nbody_create(grove_points_f64(pos, n, 3), vel, mass, &p, NULL, &sim));
    double *before = malloc(7 * n * sizeof *before);
    REQUIRE(before);
    memcpy(before, grove_nbody_positions(sim), 3 * n * sizeof *before);
    memcpy(before + 3 * n, grove_nbody_velocities(sim), 3 * n * sizeof *before);
    memcpy(before + 6 * n, grove_nbody_potentials(sim), n * sizeof *before);
    canceller c;
    grove_options o = canceller_start(&c);
    grove_status s = grove_nbody_step(sim, 1, &o);
    canceller_join(&c);
    CHECK_MSG(s == GROVE_CANCELLED, "grove_nbody_step -> %s, wanted cancelled", grove_status_str(s));
    /* A cancelled step leaves the state as it was before the step. */
    grove_nbody_diag diag;
    CHECK_OK(grove_nbody_diagnostics(sim, &diag));
    CHECK(diag.step == 0 && diag.time == 0);
    CHECK(memcmp(before, grove_nbody_positions(sim), 3 * n * sizeof *before) == 0);
    CHECK(memcmp(before + 3 * n, grove_nbody_velocities(sim), 3 * n * sizeof *before) == 0);
    CHECK(memcmp(before + 6 * n, grove_nbody_potentials(sim), n * sizeof *before) == 0);
    grove_nbody_free(sim);
    free(before);
    free(pos);
    free(mass);
    free(vel);
}

TEST(cancel_balltree_build_and_check_stop_inside_one_batch)
{
    /* One batch of 2^22 points: no batch boundary to stop at. */
    size_t n = (size_t)1 << 22, slots = (size_t)1 << 23;
    float *x = malloc(3 * n * sizeof *x);
    int64_t *idx = malloc(slots * sizeof *idx);
    uint8_t *mask = malloc(slots);
    REQUIRE(x && idx && mask);
    grove_rng rng;
    grove_rng_seed(&rng, 76);
    for (size_t i = 0; i < 3 * n; i++) x[i] = (float)grove_rng_uniform(&rng);
    canceller c;
    grove_options o = canceller_start(&c);
    grove_status s = grove_balltree_build(grove_points_f32(x, n, 3), NULL, idx, mask, &o);
    canceller_join(&c);
    CHECK_MSG(s == GROVE_CANCELLED, "grove_balltree_build -> %s, wanted cancelled", grove_status_str(s));
    /* The check of a whole tree of 2^20 of them takes far longer than the delay too. */
    grove_points part = grove_points_f32(x, n / 4, 3);
    REQUIRE_OK(grove_balltree_build(part, NULL, idx, mask, NULL));
    o = canceller_start(&c);
    s = grove_balltree_check(part, NULL, idx, mask, &o);
    canceller_join(&c);
    CHECK_MSG(s == GROVE_CANCELLED, "grove_balltree_check -> %s, wanted cancelled", grove_status_str(s));
    free(x);
    free(idx);
    free(mask);
}

/* How many of n doubles still hold -1, which no output here takes. */
static size_t untouched_f64(const double *v, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) k += v[i] == -1;
    return k;
}

TEST(cancel_hdbscan_prediction_stops_inside_the_queries)
{
    /* A small model, and far more queries than the delay answers. */
    size_t n = 4000, d = 3, nq = 500000;
    double *x = test_points(TEST_CLUSTERED, n, d, 77), *q = test_points(TEST_UNIFORM, nq, d, 78);
    int64_t *labels = malloc(nq * sizeof *labels);
    double *values = malloc(nq * sizeof *values);
    REQUIRE(x && q && labels && values);
    grove_hdbscan_params p;
    grove_hdbscan_params_init(&p);
    p.min_cluster_size = 40;
    p.prediction_data = 1;
    grove_hdbscan_model *m = NULL;
    REQUIRE_OK(grove_hdbscan_model_create(grove_points_f64(x, n, d), &p, NULL, &m));
    REQUIRE(grove_hdbscan_model_clusters(m) > 1);
    /* Few enough membership rows for one value per query: every query's row starts at q k. */
    size_t k = grove_hdbscan_model_clusters(m), nm = nq / k;
    const char *call[] = {"approximate_predict", "approximate_predict_scores", "membership_vector"};
    for (int c = 0; c < 3; c++) {
        for (size_t i = 0; i < nq; i++) labels[i] = -1, values[i] = -1;
        canceller cl;
        grove_options o = canceller_start(&cl);
        grove_status s = c == 0   ? grove_hdbscan_approximate_predict(m, grove_points_f64(q, nq, d), labels, NULL, &o)
                         : c == 1 ? grove_hdbscan_approximate_predict_scores(m, grove_points_f64(q, nq, d), values, &o)
                                  : grove_hdbscan_membership_vector(m, grove_points_f64(q, nm, d), values, &o);
        canceller_join(&cl);
        CHECK_MSG(s == GROVE_CANCELLED, "%s -> %s, wanted cancelled", call[c], grove_status_str(s));
        /* Labels of -1 are noise too: only the scores and rows tell work left undone. */
        if (c > 0) CHECK_MSG(untouched_f64(values, c == 1 ? nq : nm * k) > 0, "%s answered every query", call[c]);
    }
    grove_hdbscan_model_free(m);
    free(x);
    free(q);
    free(labels);
    free(values);
}

TEST(cancel_gen_stops_inside_the_rows)
{
    /* Exponential values (positive, a logarithm each) on one thread: a
     * second's work whatever the machine's cores. */
    size_t n = 2000000, d = 3;
    double *out = malloc(n * d * sizeof *out);
    REQUIRE(out);
    for (size_t i = 0; i < n * d; i++) out[i] = -1;
    grove_gen_params p;
    grove_gen_params_init(&p);
    p.kind = GROVE_GEN_EXPONENTIAL;
    p.n = n;
    p.d = d;
    canceller c;
    grove_options o = canceller_start(&c);
    o.threads = 1;
    grove_status s = grove_gen(&p, out, &o);
    canceller_join(&c);
    CHECK_MSG(s == GROVE_CANCELLED, "grove_gen -> %s, wanted cancelled", grove_status_str(s));
    CHECK_MSG(untouched_f64(out, n * d) > 0, "every row was generated before the call returned");
    free(out);
}

TEST(cancel_paircount_stops_inside_the_pass)
{
    /* 200000 uniform points, each with about 4000 neighbours within the
     * largest edge: seconds of pairs, far more than the delay. */
    size_t n = test_sanitized() ? 50000 : 200000;
    double *x = test_points(TEST_UNIFORM, n, 3, 21), edges[2] = {0, 0.16 * pow(200000.0 / (double)n, 1.0 / 3)};
    grove_paircount_params p;
    grove_paircount_params_init(&p);
    p.edges = edges;
    p.nedges = 2;
    int64_t count = -1;
    canceller c;
    grove_options o = canceller_start(&c);
    o.threads = 2;
    grove_status s = grove_paircount(grove_points_f64(x, n, 3), NULL, &p, &count, NULL, &o);
    canceller_join(&c);
    CHECK_MSG(s == GROVE_CANCELLED && count == 0, "grove_paircount -> %s, %lld pairs, wanted cancelled",
              grove_status_str(s), (long long)count);
    free(x);
}
