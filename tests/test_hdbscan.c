/* HDBSCAN*: the condensed tree, selection, labels, probabilities and GLOSH
 * on small spanning trees checked by hand, then end to end and the CLI. */
#include "test.h"

#include <math.h>
#include <stdbool.h>
#include <unistd.h>

/* A chain MST over 1-D points: edge i joins rows i and i + 1 with the gap
 * between consecutive values. */
static void chain(const double *x, size_t n, int64_t *edges, double *w)
{
    for (size_t i = 0; i + 1 < n; i++) {
        edges[2 * i] = (int64_t)i;
        edges[2 * i + 1] = (int64_t)i + 1;
        w[i] = x[i + 1] - x[i];
    }
}

static grove_hdbscan_params params_of(size_t mcs, grove_hdbscan_selection sel, double eps)
{
    grove_hdbscan_params p;
    grove_hdbscan_params_init(&p);
    p.min_cluster_size = mcs;
    p.selection = sel;
    p.epsilon = eps;
    return p;
}

TEST(hdbscan_two_groups_and_a_noise_point)
{
    /* {0,1,2} and {10,11,12} (gaps 1, 8 between) and 32 far away (gap 20).
     * Root (7 points) sheds 32 at lambda 1/20, splits at 1/8 into two
     * clusters of 3 whose points all leave at lambda 1. */
    const double x[] = {0, 1, 2, 10, 11, 12, 32};
    int64_t e[12], labels[7];
    double w[6], prob[7], score[7];
    size_t clusters = 99;
    chain(x, 7, e, w);
    grove_hdbscan_params p = params_of(3, GROVE_HDBSCAN_EOM, 0);
    REQUIRE_OK(grove_hdbscan_from_mst(7, e, w, &p, labels, prob, score, &clusters));
    CHECK(clusters == 2);
    const int64_t want[] = {0, 0, 0, 1, 1, 1, -1};
    for (int i = 0; i < 7; i++) CHECK_MSG(labels[i] == want[i], "row %d: label %lld", i, (long long)labels[i]);
    for (int i = 0; i < 6; i++) CHECK(prob[i] == 1 && score[i] == 0);
    CHECK(prob[6] == 0);
    /* GLOSH: (1 - 1/20) / 1, the root's deepest lambda being 1. */
    CHECK(fabs(score[6] - 0.95) < 1e-15);
    /* Edge order does not matter: the same tree reversed. */
    int64_t er[12];
    double wr[6];
    for (int i = 0; i < 6; i++) er[2 * i] = e[2 * (5 - i) + 1], er[2 * i + 1] = e[2 * (5 - i)], wr[i] = w[5 - i];
    int64_t again[7];
    REQUIRE_OK(grove_hdbscan_from_mst(7, er, wr, &p, again, NULL, NULL, NULL));
    CHECK(memcmp(again, labels, sizeof labels) == 0);
}

TEST(hdbscan_eom_leaf_and_epsilon)
{
    /* A = {0..3}, B = {4.5..7.5} (gap 1.5 from A), C = {57.5..60.5} (gap 50).
     * Stabilities: A = B = 4 (1 - 2/3) = 4/3, AB = 8 (2/3 - 1/50) = 5.17 >
     * 8/3, so excess of mass keeps AB and C; leaf keeps A, B, C; leaf with
     * epsilon 2 climbs from A and B (born at distance 1.5) to AB. */
    const double x[] = {0, 1, 2, 3, 4.5, 5.5, 6.5, 7.5, 57.5, 58.5, 59.5, 60.5};
    int64_t e[22], labels[12];
    double w[11], prob[12];
    size_t clusters;
    chain(x, 12, e, w);
    grove_hdbscan_params p = params_of(3, GROVE_HDBSCAN_EOM, 0);
    REQUIRE_OK(grove_hdbscan_from_mst(12, e, w, &p, labels, prob, NULL, &clusters));
    CHECK(clusters == 2);
    for (int i = 0; i < 12; i++) CHECK(labels[i] == (i < 8 ? 0 : 1) && prob[i] == 1);
    p = params_of(3, GROVE_HDBSCAN_LEAF, 0);
    REQUIRE_OK(grove_hdbscan_from_mst(12, e, w, &p, labels, NULL, NULL, &clusters));
    CHECK(clusters == 3);
    /* Cluster ids are breadth first: C (id 14) before A (15) and B (16). */
    for (int i = 0; i < 12; i++) CHECK(labels[i] == (i < 4 ? 1 : i < 8 ? 2 : 0));
    p = params_of(3, GROVE_HDBSCAN_LEAF, 2.0);
    REQUIRE_OK(grove_hdbscan_from_mst(12, e, w, &p, labels, NULL, NULL, &clusters));
    CHECK(clusters == 2);
    for (int i = 0; i < 12; i++) CHECK(labels[i] == (i < 8 ? 0 : 1));
    /* A minimum cluster size above every group: all noise. */
    p = params_of(9, GROVE_HDBSCAN_EOM, 0);
    REQUIRE_OK(grove_hdbscan_from_mst(12, e, w, &p, labels, prob, NULL, &clusters));
    CHECK(clusters == 0);
    for (int i = 0; i < 12; i++) CHECK(labels[i] == -1 && prob[i] == 0);
    /* allow_single_cluster: the root may win; here it does for size 9. */
    p.allow_single_cluster = 1;
    REQUIRE_OK(grove_hdbscan_from_mst(12, e, w, &p, labels, NULL, NULL, &clusters));
    CHECK(clusters == 1);
}

TEST(hdbscan_probabilities_inside_a_cluster)
{
    /* Group {0, 1, 2, 3.5}: with min_cluster_size 3, 3.5 leaves the cluster
     * at lambda 1/1.5 while the rest leave at 1: probability 2/3. */
    const double x[] = {0, 1, 2, 3.5, 100, 101, 102};
    int64_t e[12], labels[7];
    double w[6], prob[7], score[7];
    chain(x, 7, e, w);
    grove_hdbscan_params p = params_of(3, GROVE_HDBSCAN_EOM, 0);
    REQUIRE_OK(grove_hdbscan_from_mst(7, e, w, &p, labels, prob, score, NULL));
    CHECK(labels[3] == labels[0] && labels[0] >= 0);
    CHECK(fabs(prob[3] - 2.0 / 3) < 1e-15 && prob[0] == 1);
    CHECK(fabs(score[3] - 1.0 / 3) < 1e-15 && score[0] == 0);
}

TEST(hdbscan_bad_and_trivial_inputs)
{
    int64_t e[4] = {0, 1, 1, 2}, labels[3] = {5, 5, 5};
    double w[2] = {1, 1}, prob[1] = {7}, score[1] = {7};
    size_t clusters = 9;
    grove_hdbscan_params p = params_of(1, GROVE_HDBSCAN_EOM, 0);
    CHECK_FAILS(grove_hdbscan_from_mst(3, e, w, &p, labels, NULL, NULL, NULL), GROVE_INVALID_ARGUMENT,
                "min_cluster_size must be at least 2");
    p = params_of(2, GROVE_HDBSCAN_EOM, -1);
    CHECK_FAILS(grove_hdbscan_from_mst(3, e, w, &p, labels, NULL, NULL, NULL), GROVE_INVALID_ARGUMENT, "epsilon");
    p = params_of(2, GROVE_HDBSCAN_EOM, 0);
    int64_t cycle[4] = {0, 1, 1, 0};
    CHECK_FAILS(grove_hdbscan_from_mst(3, cycle, w, &p, labels, NULL, NULL, NULL), GROVE_INVALID_ARGUMENT,
                "closes a cycle");
    int64_t out_of_range[4] = {0, 1, 1, 3};
    CHECK_FAILS(grove_hdbscan_from_mst(3, out_of_range, w, &p, labels, NULL, NULL, NULL), GROVE_INVALID_ARGUMENT,
                "edge 1");
    CHECK_OK(grove_hdbscan_from_mst(1, NULL, NULL, &p, labels, prob, score, &clusters));
    CHECK(labels[0] == -1 && prob[0] == 0 && score[0] == 0 && clusters == 0);
    CHECK_OK(grove_hdbscan_from_mst(0, NULL, NULL, &p, NULL, NULL, NULL, &clusters));
    double x[6] = {0, 0, 1, 1, 2, 2};
    p.min_cluster_size = 5;
    CHECK_FAILS(grove_hdbscan(grove_points_f64(x, 3, 2), &p, labels, NULL, NULL, NULL, NULL), GROVE_INVALID_ARGUMENT,
                "min_samples = 5 exceeds the number of points n = 3");
    p.min_samples = 2;
    CHECK_OK(grove_hdbscan(grove_points_f64(x, 3, 2), &p, labels, NULL, NULL, &clusters, NULL));
    x[5] = INFINITY;
    CHECK_FAILS(grove_hdbscan(grove_points_f64(x, 3, 2), &p, labels, NULL, NULL, NULL, NULL), GROVE_INVALID_ARGUMENT,
                "row 2, column 1 is infinite");
}

/* Three tight, well-separated blobs plus a few far points. */
static double *blobs(size_t n, uint64_t seed)
{
    grove_rng rng;
    grove_rng_seed(&rng, seed);
    double *x = malloc(2 * n * sizeof *x);
    for (size_t i = 0; i < n; i++) {
        size_t b = i % 3;
        for (size_t j = 0; j < 2; j++) x[2 * i + j] = 10.0 * (double)(b + j * (b == 1)) + 0.3 * grove_rng_normal(&rng);
    }
    return x;
}

TEST(hdbscan_end_to_end_blobs)
{
    const size_t n = 3000;
    double *x = blobs(n, 4);
    int64_t *l1 = malloc(n * sizeof *l1), *l2 = malloc(n * sizeof *l2);
    double *s1 = malloc(n * sizeof *s1), *s2 = malloc(n * sizeof *s2);
    grove_hdbscan_params p = params_of(30, GROVE_HDBSCAN_EOM, 0);
    grove_options o;
    grove_options_init(&o);
    size_t c1, c2;
    o.threads = 1;
    REQUIRE_OK(grove_hdbscan(grove_points_f64(x, n, 2), &p, l1, NULL, s1, &c1, &o));
    o.threads = 2;
    REQUIRE_OK(grove_hdbscan(grove_points_f64(x, n, 2), &p, l2, NULL, s2, &c2, &o));
    CHECK(c1 == 3 && c2 == 3);
    CHECK(memcmp(l1, l2, n * sizeof *l1) == 0 && memcmp(s1, s2, n * sizeof *s1) == 0);
    /* Each blob is one cluster (points i, i + 3, ... share a blob). */
    size_t agree = 0;
    for (size_t i = 3; i < n; i++) agree += l1[i] == l1[i % 3];
    CHECK_MSG(agree > (n - 3) * 98 / 100, "%zu of %zu points share their blob's label", agree, n - 3);
    for (size_t i = 0; i < n; i++) CHECK(s1[i] >= 0 && s1[i] <= 1);
    free(x);
    free(l1);
    free(l2);
    free(s1);
    free(s2);
}


TEST(hdbscan_cli_emst_and_hdbscan)
{
    const size_t n = 1500;
    double *x = blobs(n, 8);
    grove_array a = {0};
    REQUIRE_OK(grove_array_create(&a, GROVE_FLOAT64, n, 2));
    memcpy(a.data, x, 2 * n * sizeof *x);
    char data[512]; /* test_path's buffers rotate */
    snprintf(data, sizeof data, "%s", test_path("blobs.npy"));
    REQUIRE_OK(grove_npy_write(data, &a));
    grove_array_free(&a);
    char args[2048], *out = NULL;
    snprintf(args, sizeof args, "emst %s --mutual-reachability 5 --edges %s --weights %s --json", data,
             test_path("e.npy"), test_path("w.npy"));
    int rc = test_grove(args, &out);
    CHECK_MSG(rc == 0, "%s -> %d: %s", args, rc, out);
    CHECK(strstr(out, "\"command\": \"emst\"") && strstr(out, "\"n\": 1500") && strstr(out, "\"edges\": 1499") &&
          strstr(out, "\"total_weight\": ") && strstr(out, "\"seconds\": "));
    free(out);
    grove_array e = {0}, w = {0};
    REQUIRE_OK(grove_npy_read(test_path("e.npy"), &e));
    REQUIRE_OK(grove_npy_read(test_path("w.npy"), &w));
    CHECK(e.dtype == GROVE_INT64 && e.ndim == 2 && e.shape[0] == n - 1 && e.shape[1] == 2);
    CHECK(w.dtype == GROVE_FLOAT64 && w.ndim == 1 && w.shape[0] == n - 1);
    int64_t *edges = malloc(2 * (n - 1) * sizeof *edges);
    double *weights = malloc((n - 1) * sizeof *weights);
    grove_emst_params ep;
    grove_emst_params_init(&ep);
    ep.min_samples = 5;
    CHECK_OK(grove_emst(grove_points_f64(x, n, 2), &ep, edges, weights, NULL));
    CHECK(memcmp(edges, e.data, 2 * (n - 1) * sizeof *edges) == 0);
    CHECK(memcmp(weights, w.data, (n - 1) * sizeof *weights) == 0);
    grove_array_free(&e);
    grove_array_free(&w);

    snprintf(args, sizeof args,
             "hdbscan %s --min-cluster-size 30 --labels %s --probabilities %s --outlier-scores %s --plot %s --json",
             data, test_path("l.npy"), test_path("p.npy"), test_path("s.npy"), test_path("plot.svg"));
    REQUIRE(test_grove(args, &out) == 0);
    CHECK(strstr(out, "\"command\": \"hdbscan\"") && strstr(out, "\"clusters\": 3") &&
          strstr(out, "\"min_samples\": 30"));
    free(out);
    grove_array l = {0};
    REQUIRE_OK(grove_npy_read(test_path("l.npy"), &l));
    CHECK(l.dtype == GROVE_INT64 && l.shape[0] == n);
    int64_t *labels = malloc(n * sizeof *labels);
    grove_hdbscan_params hp = params_of(30, GROVE_HDBSCAN_EOM, 0);
    CHECK_OK(grove_hdbscan(grove_points_f64(x, n, 2), &hp, labels, NULL, NULL, NULL, NULL));
    CHECK(memcmp(labels, l.data, n * sizeof *labels) == 0);
    grove_array_free(&l);
    FILE *f = fopen(test_path("plot.svg"), "r");
    REQUIRE(f != NULL);
    char head[64] = {0};
    CHECK(fread(head, 1, 4, f) == 4 && strncmp(head, "<svg", 4) == 0);
    fclose(f);

    /* Usage errors and failures leave no outputs behind. */
    snprintf(args, sizeof args, "hdbscan %s --min-cluster-size 30 --selection best --labels %s", data,
             test_path("l2.npy"));
    CHECK(test_grove(args, &out) == 2 && strstr(out, "--selection: expected eom or leaf"));
    free(out);
    snprintf(args, sizeof args, "hdbscan %s --min-cluster-size 30 --min-samples 5000 --labels %s --plot %s", data,
             test_path("l3.npy"), test_path("p3.svg"));
    CHECK(test_grove(args, &out) == 1 && strstr(out, "min_samples = 5000 exceeds"));
    free(out);
    CHECK(access(test_path("l3.npy"), F_OK) != 0 && access(test_path("p3.svg"), F_OK) != 0);
    snprintf(args, sizeof args, "emst %s --edges %s", data, test_path("e2.npy"));
    CHECK(test_grove(args, &out) == 2 && strstr(out, "--edges and --weights are required"));
    free(out);
    free(x);
    free(edges);
    free(weights);
    free(labels);
}

static void write_npy_f64(const char *path, const double *x, size_t n, size_t d)
{
    grove_array a = {0};
    if (grove_array_create(&a, GROVE_FLOAT64, n, d) != GROVE_OK) return;
    memcpy(a.data, x, n * d * sizeof *x);
    grove_npy_write(path, &a);
    grove_array_free(&a);
}

TEST(hdbscan_cli_predict_and_new_parameters)
{
    const size_t n = 1200, nq = 40;
    double *x = blobs(n, 21), *q = blobs(nq, 22);
    for (size_t j = 0; j < 4; j++) q[2 * j] += 500; /* far away: noise */
    char data[512], queries[512], wide[512], args[4096], *out = NULL;
    snprintf(data, sizeof data, "%s", test_path("pblobs.npy"));
    snprintf(queries, sizeof queries, "%s", test_path("pq.npy"));
    snprintf(wide, sizeof wide, "%s", test_path("pq3.npy"));
    write_npy_f64(data, x, n, 2);
    write_npy_f64(queries, q, nq, 2);
    write_npy_f64(wide, x, 10, 3);
    snprintf(args, sizeof args,
             "hdbscan %s --min-cluster-size 25 --min-samples 6 --labels %s --predict %s --predicted-labels %s "
             "--predicted-probabilities %s --json",
             data, test_path("pl.npy"), queries, test_path("ppl.npy"), test_path("ppp.npy"));
    int rc = test_grove(args, &out);
    CHECK_MSG(rc == 0, "%s -> %d: %s", args, rc, out);
    grove_hdbscan_params p = params_of(25, GROVE_HDBSCAN_EOM, 0);
    p.min_samples = 6;
    p.prediction_data = 1;
    grove_hdbscan_model *m = NULL;
    REQUIRE_OK(grove_hdbscan_model_create(grove_points_f64(x, n, 2), &p, NULL, &m));
    int64_t want[40];
    double want_p[40];
    REQUIRE_OK(grove_hdbscan_approximate_predict(m, grove_points_f64(q, nq, 2), want, want_p, NULL));
    size_t noise = 0;
    for (size_t i = 0; i < nq; i++) noise += want[i] < 0;
    CHECK(noise >= 4 && noise < nq);
    char expect[128];
    snprintf(expect, sizeof expect, "\"predicted\": %zu, \"predicted_noise\": %zu", nq, noise);
    CHECK_MSG(out && strstr(out, expect), "wanted %s in %s", expect, out);
    free(out);
    grove_array pl = {0}, pp = {0};
    REQUIRE_OK(grove_npy_read(test_path("ppl.npy"), &pl));
    REQUIRE_OK(grove_npy_read(test_path("ppp.npy"), &pp));
    CHECK(pl.dtype == GROVE_INT64 && pl.ndim == 1 && pl.shape[0] == nq && pp.dtype == GROVE_FLOAT64);
    CHECK(memcmp(pl.data, want, sizeof want) == 0 && memcmp(pp.data, want_p, sizeof want_p) == 0);
    grove_array_free(&pl);
    grove_array_free(&pp);
    grove_hdbscan_model_free(m);

    /* The new parameters reach the library. */
    snprintf(args, sizeof args,
             "hdbscan %s --min-cluster-size 10 --min-samples 4 --ties simultaneous --max-cluster-size 300 "
             "--epsilon-max 5 --persistence 0.01 --alpha 1.5 --match-reference --labels %s --quiet",
             data, test_path("pl2.npy"));
    rc = test_grove(args, &out);
    CHECK_MSG(rc == 0, "%s -> %d: %s", args, rc, out);
    free(out);
    p = params_of(10, GROVE_HDBSCAN_EOM, 0);
    p.min_samples = 4;
    p.ties = GROVE_HDBSCAN_TIES_SIMULTANEOUS;
    p.max_cluster_size = 300;
    p.epsilon_max = 5;
    p.persistence = 0.01;
    p.alpha = 1.5;
    p.match_reference_implementation = 1;
    int64_t *labels = malloc(n * sizeof *labels);
    REQUIRE_OK(grove_hdbscan(grove_points_f64(x, n, 2), &p, labels, NULL, NULL, NULL, NULL));
    grove_array l = {0};
    REQUIRE_OK(grove_npy_read(test_path("pl2.npy"), &l));
    CHECK(l.shape[0] == n && memcmp(l.data, labels, n * sizeof *labels) == 0);
    grove_array_free(&l);

    /* Usage errors (2), and a failure (1) that leaves no output behind. */
    const char *usage_cases[][3] = {
        {"--predict", queries, "--predict and --predicted-labels go together"},
        {"--predicted-probabilities", queries, "--predicted-probabilities needs --predict"},
        {"--ties", "best", "--ties: expected ordered or simultaneous, got 'best'"},
        {"--alpha", "0", "--alpha: expected a number > 0, got '0'"},
        {"--epsilon 2 --epsilon-max", "1", "--epsilon-max: expected a number >= --epsilon (2), got 1"},
        {"--persistence", "-1", "--persistence: expected a number >= 0, got '-1'"},
        {"--predicted-labels x.txt --predict", queries, "--predicted-labels"},
    };
    for (size_t i = 0; i < sizeof usage_cases / sizeof usage_cases[0]; i++) {
        snprintf(args, sizeof args, "hdbscan %s --min-cluster-size 10 --labels %s %s %s", data, test_path("pl3.npy"),
                 usage_cases[i][0], usage_cases[i][1]);
        rc = test_grove(args, &out);
        CHECK_MSG(rc == 2 && out && strstr(out, usage_cases[i][2]), "%s -> %d: %s", args, rc, out);
        free(out);
    }
    snprintf(args, sizeof args, "hdbscan %s --min-cluster-size 10 --labels %s --predict %s --predicted-labels %s",
             data, test_path("pl4.npy"), wide, test_path("ppl4.npy"));
    rc = test_grove(args, &out);
    CHECK_MSG(rc == 1 && out && strstr(out, "the queries have 3 dimensions, the model 2"), "%s -> %d: %s", args, rc,
              out);
    free(out);
    CHECK(access(test_path("pl4.npy"), F_OK) != 0 && access(test_path("ppl4.npy"), F_OK) != 0);
    free(x);
    free(q);
    free(labels);
}
