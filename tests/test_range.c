/* Range: the geometric modules (EMST, core distances, HDBSCAN*, join,
 * kNN, ball tree) on coordinates anywhere in the dtype's range. Scale
 * invariance: every output on 2^k x is exactly 2^k times (or the same as)
 * the output on x, for k up to +-1000 (float32: +-100), so data near 1e300
 * and 1e-300 (float32 1e30, 1e-30) give the brute-force answers of x;
 * normal data with one huge outlier against long-double brute force; and
 * the answers that no double can hold, refused by name. */
#include "test.h"
#include "range_ref.h"

#include "emst/emst_internal.h"

#include <float.h>
#include <math.h>
#include <stdbool.h>

typedef enum { LATTICE, UNIFORM, GRID } cloud_kind;

/* Integers in [-8, 8] (exact squared distances, many ties and
 * duplicates), uniform in [-1, 1), or multiples of 2^-10 in [-1, 1) (a
 * grid that stays exact times 2^k down to the smallest subnormals). */
static cloud make(cloud_kind kind, size_t n, size_t d, bool f32, uint64_t seed)
{
    grove_rng rng;
    grove_rng_seed(&rng, seed);
    cloud c = cloud_alloc(n, d, f32);
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < d; j++)
            cloud_set(&c, i, j,
                      kind == LATTICE ? (double)grove_rng_below(&rng, 17) - 8
                      : kind == GRID  ? (double)grove_rng_below(&rng, 2048) / 1024 - 1
                                      : 2 * grove_rng_uniform(&rng) - 1);
    return c;
}

/* c times 2^k, exactly. */
static cloud times(const cloud *c, int k)
{
    cloud y = cloud_alloc(c->n, c->d, c->f32);
    for (size_t i = 0; i < c->n; i++)
        for (size_t j = 0; j < c->d; j++) cloud_set(&y, i, j, ldexp(cloud_at(c, i, j), k));
    return y;
}

static bool near(long double got, long double want, double rel)
{
    return fabsl(got - want) <= rel * fabsl(want);
}

/* ---- every module once ------------------------------------------------------ */

typedef struct results {
    size_t n, m, k, slots, balls;
    int64_t *edges, *mr_edges, *labels, *knn_idx, *bt_idx, *db_labels, *fof_groups, *pred_labels;
    double *weights, *mr_weights, *core, *prob, *score, *knn_dist, *centers, *radii, *pred_prob;
    uint8_t *mask;
    grove_join_result join;
} results;

#define RANGE_EPS 2.5  /* the join radius on the lattice (times 2^k) */
#define RANGE_K 5      /* kNN neighbours; also K of the mutual reachability */
#define RANGE_LEVEL 2  /* ball statistics at this level */

static void results_free(results *r)
{
    free(r->edges);
    free(r->mr_edges);
    free(r->labels);
    free(r->knn_idx);
    free(r->bt_idx);
    free(r->weights);
    free(r->mr_weights);
    free(r->core);
    free(r->prob);
    free(r->score);
    free(r->knn_dist);
    free(r->centers);
    free(r->radii);
    free(r->mask);
    free(r->db_labels);
    free(r->fof_groups);
    free(r->pred_labels);
    free(r->pred_prob);
    grove_join_result_free(&r->join);
}

/* Every module on c (scaled by 2^k from the case's base data: the join
 * radius follows), on two threads. Join, kNN and the ball tree first:
 * they return garbage where unfixed code crashes in the EMST. */
static void run_all(const cloud *c, int k, const char *what, results *r)
{
    grove_points p = cloud_view(c);
    size_t n = c->n, m = n - 1, d = c->d;
    memset(r, 0, sizeof *r);
    r->n = n;
    r->m = m;
    r->k = RANGE_K;
    grove_options o;
    grove_options_init(&o);
    o.threads = 2;

    grove_join_params jp;
    grove_join_params_init(&jp);
    jp.eps = ldexp(RANGE_EPS, k);
    jp.distances = 1;
    CHECK_MSG(grove_join(p, NULL, NULL, &jp, &r->join, &o) == GROVE_OK, "%s: join: %s", what, grove_last_error());

    r->knn_idx = calloc(n * RANGE_K, sizeof *r->knn_idx);
    r->knn_dist = calloc(n * RANGE_K, sizeof *r->knn_dist);
    CHECK_MSG(grove_knn(p, NULL, NULL, &(grove_knn_params){RANGE_K, 0}, r->knn_idx, r->knn_dist, &o) == GROVE_OK,
              "%s: kNN: %s", what, grove_last_error());

    size_t batches;
    REQUIRE(grove_balltree_layout(n, NULL, &r->slots, &batches) == GROVE_OK);
    REQUIRE(grove_balltree_ball_count(n, NULL, RANGE_LEVEL, &r->balls) == GROVE_OK);
    r->bt_idx = calloc(r->slots, sizeof *r->bt_idx);
    r->mask = calloc(r->slots, 1);
    r->centers = calloc(r->balls * d, sizeof *r->centers);
    r->radii = calloc(r->balls, sizeof *r->radii);
    CHECK_MSG(grove_balltree_build(p, NULL, r->bt_idx, r->mask, &o) == GROVE_OK, "%s: ball tree: %s", what,
              grove_last_error());
    CHECK_MSG(grove_balltree_ball_stats(p, NULL, r->bt_idx, r->mask, RANGE_LEVEL, r->centers, r->radii, &o) ==
                  GROVE_OK,
              "%s: ball statistics: %s", what, grove_last_error());

    r->core = calloc(n, sizeof *r->core);
    CHECK_MSG(grove_core_distances(p, &(grove_knn_params){RANGE_K, 0}, r->core, &o) == GROVE_OK,
              "%s: core distances: %s", what, grove_last_error());

    grove_emst_params ep;
    grove_emst_params_init(&ep);
    r->edges = calloc(2 * m, sizeof *r->edges);
    r->weights = calloc(m, sizeof *r->weights);
    CHECK_MSG(grove_emst(p, &ep, r->edges, r->weights, &o) == GROVE_OK, "%s: EMST: %s", what, grove_last_error());
    ep.min_samples = RANGE_K;
    r->mr_edges = calloc(2 * m, sizeof *r->mr_edges);
    r->mr_weights = calloc(m, sizeof *r->mr_weights);
    CHECK_MSG(grove_emst(p, &ep, r->mr_edges, r->mr_weights, &o) == GROVE_OK, "%s: mutual reachability: %s", what,
              grove_last_error());

    grove_hdbscan_params hp;
    grove_hdbscan_params_init(&hp);
    hp.min_cluster_size = 8;
    hp.epsilon = ldexp(0.5, k);
    r->labels = calloc(n, sizeof *r->labels);
    r->prob = calloc(n, sizeof *r->prob);
    r->score = calloc(n, sizeof *r->score);
    CHECK_MSG(grove_hdbscan(p, &hp, r->labels, r->prob, r->score, NULL, &o) == GROVE_OK, "%s: HDBSCAN: %s", what,
              grove_last_error());
}

/* run_all's results plus DBSCAN (the join's radius), FoF and HDBSCAN*
 * prediction (the points themselves as queries), on one thread. */
static void run_all_and_clusters(const cloud *c, int k, const char *what, results *r)
{
    run_all(c, k, what, r);
    grove_points p = cloud_view(c);
    size_t n = c->n;
    grove_options o;
    grove_options_init(&o);
    o.threads = 1;
    grove_dbscan_params dp;
    grove_dbscan_params_init(&dp);
    dp.eps = ldexp(RANGE_EPS, k);
    dp.min_samples = RANGE_K;
    r->db_labels = calloc(n, sizeof *r->db_labels);
    CHECK_MSG(grove_dbscan(p, NULL, &dp, r->db_labels, NULL, NULL, &o) == GROVE_OK, "%s: DBSCAN: %s", what,
              grove_last_error());
    grove_fof_params fp;
    grove_fof_params_init(&fp);
    fp.linking_length = ldexp(1.5, k);
    fp.min_members = 2;
    r->fof_groups = calloc(n, sizeof *r->fof_groups);
    CHECK_MSG(grove_fof(p, NULL, NULL, &fp, r->fof_groups, NULL, NULL, &o) == GROVE_OK, "%s: FoF: %s", what,
              grove_last_error());
    grove_hdbscan_params hp;
    grove_hdbscan_params_init(&hp);
    hp.min_cluster_size = 8;
    hp.prediction_data = 1;
    grove_hdbscan_model *model = NULL;
    CHECK_MSG(grove_hdbscan_model_create(p, &hp, &o, &model) == GROVE_OK, "%s: HDBSCAN model: %s", what,
              grove_last_error());
    r->pred_labels = calloc(n, sizeof *r->pred_labels);
    r->pred_prob = calloc(n, sizeof *r->pred_prob);
    CHECK_MSG(model && grove_hdbscan_approximate_predict(model, p, r->pred_labels, r->pred_prob, &o) == GROVE_OK,
              "%s: approximate_predict: %s", what, grove_last_error());
    grove_hdbscan_model_free(model);
}

/* A distance the modules return against the true one (squared, in long
 * double): within the rounding of d squared terms summed in the dtype. */
static bool same_distance(double got, long double want2, bool f32)
{
    return near(got, sqrtl(want2), f32 ? 2e-6 : 64 * DBL_EPSILON);
}

/* The distance of an exact squared distance below 2^53, rounded once. */
static double root(long double w2) { return sqrt((double)w2); }

/* The base run against brute force: exact edges, neighbours and pairs
 * (the lattice's squared distances are exact in either dtype). */
static void check_brute_force(const cloud *c, const results *r, const char *what)
{
    size_t n = c->n, m = n - 1;
    for (size_t kk = 1; kk <= RANGE_K; kk += RANGE_K - 1) {
        edge *want = prim(c, kk);
        const int64_t *e = kk == 1 ? r->edges : r->mr_edges;
        const double *w = kk == 1 ? r->weights : r->mr_weights;
        size_t bad = 0;
        for (size_t i = 0; i < m; i++)
            bad += e[2 * i] != want[i].u || e[2 * i + 1] != want[i].v || w[i] != root(want[i].w);
        CHECK_MSG(bad == 0, "%s: %zu of %zu EMST edges (K = %zu) differ from Prim", what, bad, m, kk);
        free(want);
    }
    long double *core2 = brute_core2(c, RANGE_K);
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) bad += r->core[i] != root(core2[i]);
    CHECK_MSG(bad == 0, "%s: %zu core distances differ from brute force", what, bad);
    free(core2);
    bad = 0;
    for (size_t q = 0; q < n; q++) {
        size_t *rank = brute_ranks(c, q);
        for (size_t i = 0; i < RANGE_K; i++)
            bad += r->knn_idx[q * RANGE_K + i] != (int64_t)rank[i] ||
                   r->knn_dist[q * RANGE_K + i] != root(dist2(c, q, rank[i]));
        free(rank);
    }
    CHECK_MSG(bad == 0, "%s: %zu kNN entries differ from brute force", what, bad);
    CHECK_MSG(r->join.pairs == brute_pairs(c, RANGE_EPS), "%s: join found %lld pairs, brute force %lld", what,
              (long long)r->join.pairs, (long long)brute_pairs(c, RANGE_EPS));
}

/* Outputs on 2^k x against those on x: distances 2^k times, the rest the
 * same. Counts mismatches per output and reports each kind once. */
static void check_scaled(const results *x, const results *y, int k, size_t d, const char *what)
{
    size_t n = x->n, m = x->m, bad;
#define SAME(count, cond, name)                                                                      \
    do {                                                                                             \
        bad = 0;                                                                                     \
        for (size_t i = 0; i < (count); i++) bad += !(cond);                                         \
        CHECK_MSG(bad == 0, "%s, k = %d: %zu of %zu %s differ", what, k, bad, (size_t)(count), name); \
    } while (0)
    SAME(2 * m, y->edges[i] == x->edges[i], "EMST edge ends");
    SAME(m, y->weights[i] == ldexp(x->weights[i], k), "EMST weights");
    SAME(2 * m, y->mr_edges[i] == x->mr_edges[i], "mutual-reachability edge ends");
    SAME(m, y->mr_weights[i] == ldexp(x->mr_weights[i], k), "mutual-reachability weights");
    SAME(n, y->core[i] == ldexp(x->core[i], k), "core distances");
    SAME(n, y->labels[i] == x->labels[i], "HDBSCAN labels");
    SAME(n, y->prob[i] == x->prob[i], "HDBSCAN probabilities");
    SAME(n, y->score[i] == x->score[i], "HDBSCAN outlier scores");
    if (x->db_labels && y->db_labels) {
        SAME(n, y->db_labels[i] == x->db_labels[i], "DBSCAN labels");
        SAME(n, y->fof_groups[i] == x->fof_groups[i], "FoF groups");
        SAME(n, y->pred_labels[i] == x->pred_labels[i] && y->pred_prob[i] == x->pred_prob[i], "predicted labels");
    }
    CHECK_MSG(y->join.pairs == x->join.pairs, "%s, k = %d: join found %lld pairs, %lld unscaled", what, k,
              (long long)y->join.pairs, (long long)x->join.pairs);
    if (y->join.pairs == x->join.pairs && y->join.offsets && x->join.offsets) {
        SAME(n + 1, y->join.offsets[i] == x->join.offsets[i], "join offsets");
        SAME((size_t)x->join.pairs, y->join.indices[i] == x->join.indices[i], "join indices");
        SAME((size_t)x->join.pairs, y->join.distances[i] == ldexp(x->join.distances[i], k), "join distances");
    }
    SAME(n * x->k, y->knn_idx[i] == x->knn_idx[i], "kNN indices");
    SAME(n * x->k, y->knn_dist[i] == ldexp(x->knn_dist[i], k), "kNN distances");
    SAME(x->slots, y->bt_idx[i] == x->bt_idx[i] && y->mask[i] == x->mask[i], "ball tree slots");
    SAME(x->balls * d, y->centers[i] == ldexp(x->centers[i], k), "ball centres");
    SAME(x->balls, y->radii[i] == ldexp(x->radii[i], k) && isfinite(y->radii[i]), "ball radii");
#undef SAME
}

/* The outputs on x (brute force for the lattice) against those on 2^k x
 * for each of the nk exponents ks: run_all, and DBSCAN, FoF and prediction
 * too with `clusters`. */
static void check_invariance(const cloud *x, cloud_kind kind, const int *ks, size_t nk, bool clusters)
{
    static const char *const kinds[] = {"lattice", "uniform", "grid"};
    void (*run)(const cloud *, int, const char *, results *) = clusters ? run_all_and_clusters : run_all;
    char what[96];
    snprintf(what, sizeof what, "%s %s d = %zu", x->f32 ? "float32" : "float64", kinds[kind], x->d);
    results rx, ry;
    run(x, 0, what, &rx);
    if (kind == LATTICE) check_brute_force(x, &rx, what);
    for (size_t ki = 0; ki < nk; ki++) {
        cloud y = times(x, ks[ki]);
        run(&y, ks[ki], what, &ry);
        check_scaled(&rx, &ry, ks[ki], x->d, what);
        results_free(&ry);
        cloud_free(&y);
    }
    results_free(&rx);
}

TEST(range_every_module_is_scale_invariant)
{
    static const int k64[] = {-1000, -600, -300, 300, 600, 1000}, k32[] = {-100, -60, -30, 30, 60, 100};
    static const size_t dims[] = {1, 3, 20};
    uint64_t seed = 2300;
    for (int f32 = 0; f32 < 2; f32++)
        for (int kind = LATTICE; kind <= UNIFORM; kind++)
            for (size_t di = 0; di < 3; di++) {
                size_t d = dims[di];
                cloud x = make((cloud_kind)kind, 120, d, f32, seed++);
                check_invariance(&x, (cloud_kind)kind, f32 ? k32 : k64, 6, false);
                cloud_free(&x);
            }
}

/* Subnormal coordinates (float64 below 2^-1022, about 2.2e-308, float32
 * below 2^-126, about 1.2e-38), where every squared difference underflows
 * to 0 unscaled: the lattice and the grid stay exact at 2^k for these k
 * (the smallest 2^-1062 and 2^-1072, or 2^-137 and 2^-147 in float32), so
 * every output on 2^k x is the one on x, scaled, and the lattice's is the
 * brute-force answer. Below 2^-1042 (1e-315 is 2^-1046) a float64's high
 * 32 bits are all 0: the range's measure must still see those values. */
TEST(range_subnormal_coordinates_scale_like_the_rest)
{
    static const int k64[] = {-1040, -1050, -1062}, k32[] = {-130, -137};
    uint64_t seed = 2700;
    for (int f32 = 0; f32 < 2; f32++)
        for (int kind = LATTICE; kind <= GRID; kind += GRID - LATTICE)
            for (size_t d = 3; d <= 8; d += 5) {
                cloud x = make((cloud_kind)kind, 120, d, f32, seed++);
                check_invariance(&x, (cloud_kind)kind, f32 ? k32 : k64, f32 ? 2 : 3, true);
                cloud_free(&x);
            }
}

/* |got - want| within rel of want plus `roundings` halves of the smallest
 * subnormal double. */
static bool near_tiny(long double got, long double want, double rel, size_t roundings)
{
    return fabsl(got - want) <= rel * fabsl(want) + (long double)roundings * 0.5L * DBL_TRUE_MIN;
}

/* The case: uniform points times 1e-315 (float64) or 1e-40 and
 * 1e-20 (float32; their squares are subnormal or 0 in float32), rounded to
 * what the dtype holds there, against brute force in long double, whose
 * range holds every square: kNN distances (and the rows' true distances),
 * the EMST's total weight with and without mutual reachability, and the
 * join's pairs (any count between those within eps (1 -+ tolerance)).
 * Float64 outputs near 1e-316 are subnormal themselves: each is the true
 * value to within the arithmetic's tolerance and half the smallest
 * subnormal (its rounding to a double). */
TEST(range_tiny_uniform_points_against_brute_force)
{
    static const struct {
        bool f32;
        double scale;
    } cases[] = {{false, 1e-300}, {false, 1e-315}, {true, 1e-20}, {true, 1e-40}};
    for (size_t ci = 0; ci < 4; ci++) {
        bool f32 = cases[ci].f32;
        double scale = cases[ci].scale, rel = f32 ? 2e-6 : 64 * DBL_EPSILON;
        /* float32 near 1e-40 holds 16 bits: its rounding (one unit in
         * 2^16) is the data's, not the answer's, so the tolerance is the
         * arithmetic's. */
        size_t n = 200, d = 3, m = n - 1;
        grove_rng rng;
        grove_rng_seed(&rng, 2800 + ci);
        cloud c = cloud_alloc(n, d, f32);
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j < d; j++) cloud_set(&c, i, j, grove_rng_uniform(&rng) * scale);
        char what[64];
        snprintf(what, sizeof what, "%s times %g", f32 ? "float32" : "float64", scale);
        results r;
        run_all(&c, 0, what, &r);
        size_t bad = 0;
        for (size_t q = 0; q < n; q++) {
            size_t *rank = brute_ranks(&c, q);
            for (size_t i = 0; i < RANGE_K; i++) {
                int64_t row = r.knn_idx[q * RANGE_K + i];
                double got = r.knn_dist[q * RANGE_K + i];
                bad += !near_tiny(got, sqrtl(dist2(&c, q, rank[i])), rel, 1) ||
                       !(row >= 0 && row < (int64_t)n && near_tiny(got, sqrtl(dist2(&c, q, (size_t)row)), rel, 1));
            }
            free(rank);
        }
        CHECK_MSG(bad == 0, "%s: %zu of %zu kNN entries differ from brute force", what, bad, n * RANGE_K);
        for (size_t kk = 1; kk <= RANGE_K; kk += RANGE_K - 1) {
            edge *want = prim(&c, kk);
            const double *w = kk == 1 ? r.weights : r.mr_weights;
            long double total = 0, got = 0;
            for (size_t i = 0; i < m; i++) total += sqrtl(want[i].w), got += w[i];
            CHECK_MSG(total > 0 && near_tiny(got, total, rel, m), "%s: EMST (K = %zu) weighs %.17Lg, brute force %.17Lg", what,
                      kk, got, total);
            free(want);
        }
        /* run_all's radius is 2.5: every pair; one at a tenth of the data's
         * size splits them. */
        grove_join_params jp;
        grove_join_params_init(&jp);
        jp.eps = 0.1 * scale;
        grove_join_result jr;
        CHECK_OK(grove_join(cloud_view(&c), NULL, NULL, &jp, &jr, NULL));
        int64_t low = brute_pairs(&c, jp.eps * (1 - rel)), high = brute_pairs(&c, jp.eps * (1 + rel));
        CHECK_MSG(jr.pairs >= low && jr.pairs <= high && low > (int64_t)n, "%s: join found %lld pairs, brute force %lld",
                  what, (long long)jr.pairs, (long long)low);
        grove_join_result_free(&jr);
        results_free(&r);
        cloud_free(&c);
    }
}

/* Near the largest doubles, spreads (max - min) overflow: the ball tree
 * must still split along the widest dimension, as on the points scaled
 * down. */
TEST(range_ball_tree_near_the_largest_doubles)
{
    static const size_t dims[] = {2, 3, 5};
    static const size_t sizes[] = {100, 5000, 70000};
    for (size_t di = 0; di < 3; di++)
        for (size_t si = 0; si < 3; si++) {
            size_t n = sizes[si], d = dims[di], slots, batches;
            /* Axis j spans about [-(8 + j), 8 + j]: every spread is wider
             * than the axis before, and all of them overflow at 2^1020. */
            cloud x = cloud_alloc(n, d, false);
            grove_rng rng;
            grove_rng_seed(&rng, 2400 + n + d);
            for (size_t i = 0; i < n; i++)
                for (size_t j = 0; j < d; j++)
                    cloud_set(&x, i, j, (8.0 + (double)j) * (2 * grove_rng_uniform(&rng) - 1));
            cloud y = times(&x, 1020);
            REQUIRE_OK(grove_balltree_layout(n, NULL, &slots, &batches));
            int64_t *ix = calloc(slots, sizeof *ix), *iy = calloc(slots, sizeof *iy);
            uint8_t *mx = calloc(slots, 1), *my = calloc(slots, 1);
            CHECK_OK(grove_balltree_build(cloud_view(&x), NULL, ix, mx, NULL));
            CHECK_OK(grove_balltree_build(cloud_view(&y), NULL, iy, my, NULL));
            CHECK_MSG(memcmp(ix, iy, slots * sizeof *ix) == 0 && memcmp(mx, my, slots) == 0,
                      "n = %zu, d = %zu: the tree of 2^1020 x differs from the tree of x", n, d);
            /* The root splits along the last axis, the widest. */
            double left = -INFINITY, right = INFINITY;
            for (size_t s = 0; s < slots; s++) {
                if (!my[s]) continue;
                double v = cloud_at(&y, (size_t)iy[s], d - 1);
                if (s < slots / 2) left = v > left ? v : left;
                else right = v < right ? v : right;
            }
            CHECK_MSG(left <= right, "n = %zu, d = %zu: the root does not split along the widest axis", n, d);
            CHECK_OK(grove_balltree_check(cloud_view(&y), NULL, iy, my, NULL));
            free(ix);
            free(iy);
            free(mx);
            free(my);
            cloud_free(&x);
            cloud_free(&y);
        }
}

/* A rotated ball tree splits on R x, computed in double: for subnormal
 * float64 points those products would round to the subnormals' absolute
 * grid (1e-320 holds 11 bits), so the tree must be the one of the same
 * points times 2^1000 (exact), whose rotated coordinates are normal; and
 * grove_balltree_check must agree with the build. */
TEST(range_rotated_ball_tree_of_subnormal_points)
{
    static const double scales[] = {1e-320, 1e-315, 1e-300};
    static const size_t dims[] = {3, 8};
    for (size_t si = 0; si < 3; si++)
        for (size_t di = 0; di < 2; di++) {
            size_t n = 3000, d = dims[di], slots, batches;
            double *rotation = malloc(d * d * sizeof *rotation);
            REQUIRE_OK(grove_rotation_random(d, 7, rotation));
            cloud x = cloud_alloc(n, d, false);
            grove_rng rng;
            grove_rng_seed(&rng, 2900 + si * 10 + d);
            for (size_t i = 0; i < n; i++)
                for (size_t j = 0; j < d; j++) cloud_set(&x, i, j, grove_rng_uniform(&rng) * scales[si]);
            cloud y = times(&x, 1000);
            grove_balltree_params bp;
            grove_balltree_params_init(&bp);
            bp.rotation = rotation;
            REQUIRE_OK(grove_balltree_layout(n, &bp, &slots, &batches));
            int64_t *ix = calloc(slots, sizeof *ix), *iy = calloc(slots, sizeof *iy);
            uint8_t *mx = calloc(slots, 1), *my = calloc(slots, 1);
            CHECK_OK(grove_balltree_build(cloud_view(&x), &bp, ix, mx, NULL));
            CHECK_OK(grove_balltree_build(cloud_view(&y), &bp, iy, my, NULL));
            size_t bad = 0;
            for (size_t i = 0; i < slots; i++) bad += ix[i] != iy[i] || mx[i] != my[i];
            CHECK_MSG(bad == 0, "%g, d = %zu: %zu of %zu slots differ from the tree of the points times 2^1000",
                      scales[si], d, bad, slots);
            CHECK_OK(grove_balltree_check(cloud_view(&x), &bp, ix, mx, NULL));
            CHECK_OK(grove_balltree_check(cloud_view(&x), &bp, iy, my, NULL));
            free(ix);
            free(iy);
            free(mx);
            free(my);
            free(rotation);
            cloud_free(&x);
            cloud_free(&y);
        }
}

/* Normal data (multiples of 1/64 in [0, 1): exact squares) and one point
 * at `far`, as row `at`. */
static cloud with_outlier(size_t n, size_t d, bool f32, double far, size_t at, uint64_t seed)
{
    grove_rng rng;
    grove_rng_seed(&rng, seed);
    cloud c = cloud_alloc(n, d, f32);
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < d; j++) cloud_set(&c, i, j, i == at ? far : (double)grove_rng_below(&rng, 64) / 64);
    return c;
}

TEST(range_normal_data_with_one_huge_outlier)
{
    static const size_t dims[] = {1, 3, 20};
    for (int f32 = 0; f32 < 2; f32++)
        for (size_t di = 0; di < 3; di++) {
            size_t n = 500, d = dims[di], m = n - 1, out = 137;
            double far = f32 ? 1e30 : 1e300;
            cloud c = with_outlier(n, d, f32, far, out, 2500 + d);
            char what[64];
            snprintf(what, sizeof what, "%s d = %zu, outlier %g", f32 ? "float32" : "float64", d, far);
            results r;
            run_all(&c, 0, what, &r);
            /* The EMST: Prim's edges; weights the true ones rounded (the
             * outlier's edge to double precision: its squared distance is
             * not exact). */
            edge *want = prim(&c, 1);
            size_t bad = 0;
            for (size_t i = 0; i < m; i++)
                bad += r.edges[2 * i] != want[i].u || r.edges[2 * i + 1] != want[i].v ||
                       !same_distance(r.weights[i], want[i].w, f32);
            CHECK_MSG(bad == 0, "%s: %zu of %zu EMST edges differ from Prim in long double", what, bad, m);
            CHECK_MSG(r.edges[2 * m - 2] == (int64_t)out || r.edges[2 * m - 1] == (int64_t)out,
                      "%s: the longest edge does not reach the outlier", what);
            free(want);
            /* Core distances and kNN: the outlier's neighbours are all
             * far sqrt(d) away, ties even in long double, so the lowest
             * rows. */
            long double *core2 = brute_core2(&c, RANGE_K);
            bad = 0;
            for (size_t i = 0; i < n; i++) bad += !same_distance(r.core[i], core2[i], f32);
            CHECK_MSG(bad == 0, "%s: %zu core distances differ from brute force", what, bad);
            free(core2);
            bad = 0;
            for (size_t q = 0; q < n; q++) {
                size_t *rank = brute_ranks(&c, q);
                for (size_t i = 0; i < RANGE_K; i++)
                    bad += r.knn_idx[q * RANGE_K + i] != (int64_t)rank[i] ||
                           !same_distance(r.knn_dist[q * RANGE_K + i], dist2(&c, q, rank[i]), f32);
                free(rank);
            }
            CHECK_MSG(bad == 0, "%s: %zu kNN entries differ from brute force", what, bad);
            /* Join: the normal points pair as they would alone. */
            CHECK_MSG(r.join.pairs == brute_pairs(&c, RANGE_EPS), "%s: join found %lld pairs, brute force %lld", what,
                      (long long)r.join.pairs, (long long)brute_pairs(&c, RANGE_EPS));
            grove_join_params jp;
            grove_join_params_init(&jp);
            jp.eps = 0.3;
            grove_join_result jr;
            CHECK_OK(grove_join(cloud_view(&c), NULL, NULL, &jp, &jr, NULL));
            CHECK_MSG(jr.pairs == brute_pairs(&c, 0.3), "%s: join (eps 0.3) found %lld pairs, brute force %lld", what,
                      (long long)jr.pairs, (long long)brute_pairs(&c, 0.3));
            grove_join_result_free(&jr);
            jp.eps = far / 10;
            CHECK_OK(grove_join(cloud_view(&c), NULL, NULL, &jp, &jr, NULL));
            CHECK_MSG(jr.pairs == (int64_t)(m * m + 1), "%s: join (eps %g) found %lld pairs, want %zu", what, jp.eps,
                      (long long)jr.pairs, m * m + 1);
            grove_join_result_free(&jr);
            /* Ball radii finite; HDBSCAN as on the data scaled to where
             * nothing overflows (the largest values near 2^500, or 2^55 in
             * float32). */
            for (size_t b = 0; b < r.balls; b++) CHECK(isfinite(r.radii[b]));
            int e;
            (void)frexp(far, &e);
            cloud z = times(&c, (f32 ? 55 : 500) - e);
            results rz;
            run_all(&z, 0, what, &rz);
            bad = 0;
            for (size_t i = 0; i < n; i++)
                bad += r.labels[i] != rz.labels[i] || r.prob[i] != rz.prob[i] || r.score[i] != rz.score[i];
            CHECK_MSG(bad == 0, "%s: HDBSCAN differs from its run on the rescaled data at %zu rows", what, bad);
            bad = 0;
            for (size_t b = 0; b < r.balls; b++) bad += r.radii[b] != ldexp(rz.radii[b], e - (f32 ? 55 : 500));
            CHECK_MSG(bad == 0, "%s: %zu ball radii differ from the rescaled run's", what, bad);
            results_free(&rz);
            cloud_free(&z);
            results_free(&r);
            cloud_free(&c);
        }
}

/* Answers no double holds are refused, naming the problem; the calls
 * whose outputs still fit succeed. */
TEST(range_unrepresentable_answers_are_refused)
{
    double x[] = {-1.5e308, 1.5e308, 1.4e308};
    grove_points p = grove_points_f64(x, 3, 1);
    int64_t edges[4], idx[6], labels[3];
    double w[2], core[3], dist[6];
    CHECK_FAILS(grove_emst(p, NULL, edges, w, NULL), GROVE_INVALID_ARGUMENT, "longer than the largest double");
    CHECK_FAILS(grove_core_distances(p, &(grove_knn_params){3, 0}, core, NULL), GROVE_INVALID_ARGUMENT,
                "exceeds the largest double");
    CHECK_FAILS(grove_knn(p, NULL, NULL, &(grove_knn_params){2, 0}, idx, dist, NULL), GROVE_INVALID_ARGUMENT,
                "exceeds the largest double");
    /* Indices alone, the core distance within reach, and HDBSCAN (no
     * distances out) are fine. */
    CHECK_OK(grove_knn(p, NULL, NULL, &(grove_knn_params){2, 0}, idx, NULL, NULL));
    CHECK(idx[0] == 0 && idx[1] == 2 && idx[2] == 1 && idx[3] == 2 && idx[4] == 2 && idx[5] == 1);
    CHECK_OK(grove_core_distances(grove_points_f64(x + 1, 2, 1), &(grove_knn_params){2, 0}, core, NULL));
    CHECK(core[0] == 1.5e308 - 1.4e308 && core[1] == core[0]);
    grove_hdbscan_params hp;
    grove_hdbscan_params_init(&hp);
    hp.min_cluster_size = 2;
    CHECK_OK(grove_hdbscan(p, &hp, labels, NULL, NULL, NULL, NULL));
    double corners[] = {1.5e308, 1.5e308, -1.5e308, -1.5e308}, centers[2], radius;
    int64_t slots[2] = {0, 1};
    uint8_t mask[2] = {1, 1};
    CHECK_FAILS(grove_balltree_ball_stats(grove_points_f64(corners, 2, 2), NULL, slots, mask, 0, centers, &radius, NULL),
                GROVE_INVALID_ARGUMENT, "radius of ball 0");
}

/* An index scales for its data; queries far beyond them are refused by the
 * index, while grove_join and grove_knn, given both sets, scale for both. */
TEST(range_queries_beyond_the_index)
{
    cloud data = make(LATTICE, 50, 3, false, 2600);
    cloud far = times(&data, 700);
    grove_points q = cloud_view(&far);
    grove_index *ix = NULL;
    REQUIRE_OK(grove_index_create(cloud_view(&data), NULL, NULL, &ix));
    grove_join_params jp;
    grove_join_params_init(&jp);
    jp.eps = ldexp(4.5, 700); /* the queries with |q| <= 4, where 2^700 q is the far one */
    int64_t counts[50], pairs = -1, idx[50 * 3];
    double dist[50 * 3];
    CHECK_FAILS(grove_join_count(ix, &q, &jp, counts, &pairs, NULL), GROVE_INVALID_ARGUMENT, "beyond the range");
    CHECK_FAILS(grove_knn_search(ix, &q, &(grove_knn_params){3, 0}, idx, dist, NULL), GROVE_INVALID_ARGUMENT,
                "beyond the range");
    grove_index_free(ix);
    /* Both sets at once: brute force on the union. */
    cloud both = cloud_alloc(100, 3, false);
    for (size_t i = 0; i < 50; i++)
        for (size_t j = 0; j < 3; j++) {
            cloud_set(&both, i, j, cloud_at(&far, i, j));
            cloud_set(&both, 50 + i, j, cloud_at(&data, i, j));
        }
    grove_join_result jr;
    CHECK_OK(grove_join(cloud_view(&data), &q, NULL, &jp, &jr, NULL));
    int64_t want = 0;
    for (size_t a = 0; a < 50; a++)
        for (size_t b = 50; b < 100; b++) want += dist2(&both, a, b) <= (long double)jp.eps * jp.eps;
    CHECK_MSG(jr.pairs == want, "semi-join found %lld pairs, brute force %lld", (long long)jr.pairs, (long long)want);
    grove_join_result_free(&jr);
    CHECK_OK(grove_knn(cloud_view(&data), &q, NULL, &(grove_knn_params){3, 0}, idx, dist, NULL));
    size_t bad = 0;
    for (size_t a = 0; a < 50; a++) {
        /* Rank rows 50.. of `both` (the data) from query a. */
        size_t *rank = brute_ranks(&both, a), r = 0;
        for (size_t i = 0; i < 100 && r < 3; i++) {
            if (rank[i] < 50) continue;
            bad += idx[a * 3 + r] != (int64_t)(rank[i] - 50) || !same_distance(dist[a * 3 + r], dist2(&both, a, rank[i]), false);
            r++;
        }
        free(rank);
    }
    CHECK_MSG(bad == 0, "semi-join kNN: %zu entries differ from brute force", bad);
    cloud_free(&both);
    cloud_free(&far);
    cloud_free(&data);
}

/* The finiteness scan also measures the range (the largest |coordinate|,
 * its float64 fraction cut to 20 bits), for packed and strided views. */
TEST(range_validation_measures_the_largest_coordinate)
{
    double x[] = {1, -3.75, 0x1p-1070, 2, 0.5, -0x1.fffffffffffffp+1000, 7, 0}, m;
    CHECK_OK(grove__points_validate_range(grove_points_f64(x, 4, 2), 2, &m));
    int e, want;
    (void)frexp(m, &e);
    (void)frexp(x[5], &want);
    CHECK(m <= -x[5] && m > -x[5] * (1 - 0x1p-20) && e == want);
    grove_points strided = {x, 4, 1, GROVE_FLOAT64, 2 * sizeof(double)}; /* column 0: 1, 0x1p-1070, 0.5, 7 */
    CHECK_OK(grove__points_validate_range(strided, 1, &m));
    CHECK(m == 7);
    float f[] = {-1e-30f, 3e30f, 0};
    CHECK_OK(grove__points_validate_range(grove_points_f32(f, 3, 1), 1, &m));
    CHECK(m == (double)3e30f);
    CHECK_OK(grove__points_validate_range(grove_points_f64(x, 0, 2), 1, &m));
    CHECK(m == 0);
    x[6] = NAN;
    CHECK_FAILS(grove__points_validate_range(grove_points_f64(x, 4, 2), 1, &m), GROVE_INVALID_ARGUMENT,
                "row 3, column 0 is NaN");
    f[1] = INFINITY;
    CHECK_FAILS(grove__points_validate_range(grove_points_f32(f, 3, 1), 1, &m), GROVE_INVALID_ARGUMENT,
                "row 1, column 0 is infinite");
}

/* No scaling inside the window; outside, the largest values land where d
 * squares of their differences sum finitely and one unit in their last
 * place still squares to a normal number. */
TEST(range_exponent_keeps_sums_of_squares_in_range)
{
    static const double f64[] = {1, 1e100, 1e-100, 1e150}, f64_out[] = {1e160, 1e300, DBL_MAX, 1e-200, 1e-300, 5e-324};
    static const double f32[] = {1, 1e10, 1e-10}, f32_out[] = {1e20, 3e38, 1e-20, 1e-45};
    static const size_t dims[] = {1, 3, 784};
    for (size_t di = 0; di < 3; di++) {
        size_t d = dims[di];
        for (size_t i = 0; i < 4; i++) CHECK(grove__range_exponent(f64[i], d, GROVE_FLOAT64) == 0);
        for (size_t i = 0; i < 3; i++) CHECK(grove__range_exponent(f32[i], d, GROVE_FLOAT32) == 0);
        for (int t = 0; t < 2; t++) {
            const double *out = t ? f32_out : f64_out;
            size_t count = t ? 4 : 6;
            grove_dtype dtype = t ? GROVE_FLOAT32 : GROVE_FLOAT64;
            double ulp = t ? 0x1p-24 : 0x1p-53, tiny = t ? FLT_MIN : DBL_MIN, big = t ? FLT_MAX : DBL_MAX;
            for (size_t i = 0; i < count; i++) {
                int e = grove__range_exponent(out[i], d, dtype);
                long double top = ldexpl(out[i], -e);
                CHECK_MSG(e != 0 && grove__range_fits(out[i], e, d, dtype), "%g, d = %zu: exponent %d", out[i], d, e);
                CHECK_MSG(4.0L * (long double)d * top * top < big && top * ulp * top * ulp >= tiny,
                          "%g, d = %zu: scaled to %Lg", out[i], d, top);
            }
        }
        CHECK(!grove__range_fits(1e200, 0, d, GROVE_FLOAT64) && !grove__range_fits(1e30, 0, d, GROVE_FLOAT32));
        CHECK(grove__range_fits(1e200, 300, d, GROVE_FLOAT64) && grove__range_fits(0, 0, d, GROVE_FLOAT32));
    }
}

/* A component without an outgoing edge (which a search on finite
 * coordinates cannot leave; forced here with a NaN behind validation's
 * back) is an internal error, never a read out of bounds. */
TEST(range_boruvka_without_an_edge_is_an_internal_error)
{
    double x[] = {0, 1, NAN, 2};
    grove__tree t;
    REQUIRE_OK(grove__tree_build(grove_points_f64(x, 4, 1), 0, 1, &t));
    uint32_t eu[3], ev[3];
    double ew[3];
    CHECK_FAILS(grove__boruvka_run(&t, NULL, eu, ev, ew, NULL), GROVE_INTERNAL, "found no edge");
    grove__tree_free(&t);
}
