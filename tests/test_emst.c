/* EMST and kNN against brute force: a dense O(n^2) Prim with the same edge
 * order (weight, smaller row, larger row) and the same distance arithmetic,
 * so the trees must be identical edge for edge, ties included. */
#include "test.h"

#include "index/index.h"
#include "parallel.h"

#include <math.h>
#include <stdbool.h>

/* Squared distance as the library computes it: in the points' dtype, axes
 * summed in order. */
static double dist2(const void *data, bool f32, size_t d, size_t a, size_t b)
{
    if (f32) {
        const float *x = data;
        float s = 0;
        for (size_t j = 0; j < d; j++) {
            float t = x[a * d + j] - x[b * d + j];
            s += t * t;
        }
        return s;
    }
    const double *x = data;
    double s = 0;
    for (size_t j = 0; j < d; j++) {
        double t = x[a * d + j] - x[b * d + j];
        s += t * t;
    }
    return s;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Squared core distances by brute force (k-th smallest counting itself). */
static double *brute_core2(const void *data, bool f32, size_t n, size_t d, size_t k)
{
    double *core2 = calloc(n, sizeof *core2), *row = malloc(n * sizeof *row);
    for (size_t a = 0; k > 1 && a < n; a++) {
        for (size_t b = 0; b < n; b++) row[b] = dist2(data, f32, d, a, b);
        qsort(row, n, sizeof *row, cmp_double);
        core2[a] = row[k - 1];
    }
    free(row);
    return core2;
}

typedef struct edge {
    double w;
    int64_t u, v;
} edge;

static bool edge_less(edge a, edge b)
{
    return a.w < b.w || (a.w == b.w && (a.u < b.u || (a.u == b.u && a.v < b.v)));
}

static int cmp_edge(const void *a, const void *b)
{
    edge x = *(const edge *)a, y = *(const edge *)b;
    return edge_less(x, y) ? -1 : edge_less(y, x) ? 1 : 0;
}

/* Dense Prim under the strict order (squared weight, min row, max row);
 * returns n - 1 edges sorted as grove_emst sorts them (by sqrt weight). */
static edge *prim(const void *data, bool f32, size_t n, size_t d, size_t k)
{
    double *core2 = brute_core2(data, f32, n, d, k);
    edge *best = malloc(n * sizeof *best), *out = malloc(n * sizeof *out);
    bool *in = calloc(n, sizeof *in);
    size_t last = 0;
    in[0] = true;
    for (size_t i = 0; i < n; i++) best[i].w = INFINITY, best[i].u = best[i].v = -1;
    for (size_t step = 0; step + 1 < n; step++) {
        size_t pick = 0;
        edge pe = {INFINITY, -1, -1};
        for (size_t v = 0; v < n; v++) {
            if (in[v]) continue;
            double w = dist2(data, f32, d, last, v);
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
    for (size_t i = 0; i + 1 < n; i++) out[i].w = sqrt(out[i].w);
    qsort(out, n ? n - 1 : 0, sizeof *out, cmp_edge);
    free(core2);
    free(best);
    free(in);
    return out;
}

/* grove_emst on double data x (converted to float when f32), compared edge
 * for edge with Prim. Returns false (after reporting) on a mismatch. */
static bool check_case(const double *x, size_t n, size_t d, bool f32, size_t k, int threads, const char *what)
{
    const void *data = x;
    float *xf = NULL;
    if (f32) {
        xf = malloc((n * d + 1) * sizeof *xf);
        for (size_t i = 0; i < n * d; i++) xf[i] = (float)x[i];
        data = xf;
    }
    grove_points pts = f32 ? grove_points_f32(xf, n, d) : grove_points_f64(x, n, d);
    size_t m = n > 1 ? n - 1 : 0;
    int64_t *edges = malloc((2 * m + 1) * sizeof *edges);
    double *w = malloc((m + 1) * sizeof *w);
    grove_options o;
    grove_options_init(&o);
    o.threads = threads;
    grove_emst_params params;
    grove_emst_params_init(&params);
    params.min_samples = k;
    bool ok = true;
    grove_status s = grove_emst(pts, &params, edges, w, &o);
    if (s != GROVE_OK) {
        test_fail(__FILE__, __LINE__, "%s: grove_emst -> %s: %s", what, grove_status_str(s), grove_last_error());
        ok = false;
    }
    edge *ref = ok ? prim(data, f32, n, d, k) : NULL;
    for (size_t i = 0; ok && i < m; i++) {
        if (edges[2 * i] != ref[i].u || edges[2 * i + 1] != ref[i].v || w[i] != ref[i].w) {
            test_fail(__FILE__, __LINE__, "%s: edge %zu is (%lld, %lld, %.17g), Prim has (%lld, %lld, %.17g)", what,
                      i, (long long)edges[2 * i], (long long)edges[2 * i + 1], w[i], (long long)ref[i].u,
                      (long long)ref[i].v, ref[i].w);
            ok = false;
        }
    }
    free(ref);
    free(edges);
    free(w);
    free(xf);
    return ok;
}

TEST(emst_matches_prim_on_random_cases)
{
    const size_t dims[] = {1, 2, 3, 5, 8}, sizes[] = {2, 3, 7, 9, 64, 300, 1000}, ks[] = {1, 2, 5, 10};
    uint64_t seed = 1;
    int cases = 0, failures = 0;
    for (size_t di = 0; di < 5; di++)
        for (int kind = 0; kind < TEST_KINDS; kind++)
            for (size_t si = 0; si < 7; si++)
                for (int f32 = 0; f32 < 2; f32++) {
                    size_t n = sizes[si], d = dims[di], k = ks[(seed * 7) % 4];
                    if (k > n) k = 1;
                    double *x = test_points((test_kind)kind, n, d, seed++);
                    char what[160];
                    snprintf(what, sizeof what, "%s n=%zu d=%zu %s K=%zu", test_kind_name[kind], n, d,
                             f32 ? "float32" : "float64", k);
                    if (!check_case(x, n, d, f32, k, 2, what)) failures++;
                    cases++;
                    free(x);
                    if (failures > 5) return;
                }
    CHECK(cases == 280);
}

TEST(emst_matches_prim_larger)
{
    /* A few thousand points in 2-D and 3-D, Euclidean and K = 5. */
    const size_t dims[] = {2, 3};
    for (size_t di = 0; di < 2; di++)
        for (int kind = 0; kind < TEST_KINDS; kind++) {
            double *x = test_points((test_kind)kind, 3000, dims[di], 100 + (uint64_t)kind);
            char what[128];
            snprintf(what, sizeof what, "%s n=3000 d=%zu", test_kind_name[kind], dims[di]);
            check_case(x, 3000, dims[di], false, kind == TEST_LATTICE ? 5 : 1, 0, what);
            free(x);
        }
}

TEST(emst_mutual_reachability_k_values)
{
    const size_t ks[] = {2, 5, 10};
    for (int kind = 0; kind < TEST_KINDS; kind++)
        for (size_t ki = 0; ki < 3; ki++) {
            double *x = test_points((test_kind)kind, 500, 3, 300 + (uint64_t)kind * 3 + ki);
            char what[128];
            snprintf(what, sizeof what, "%s MR K=%zu", test_kind_name[kind], ks[ki]);
            check_case(x, 500, 3, kind % 2 == 1, ks[ki], 2, what);
            check_case(x, 300, 5, false, ks[ki], 2, what); /* kd-tree path: the same values as 300 x 5 */
            free(x);
        }
}

/* Run grove_emst with `threads` threads; caller frees. */
static void emst_run(grove_points pts, size_t k, int threads, int64_t **edges, double **w)
{
    size_t m = pts.n - 1;
    *edges = malloc(2 * m * sizeof **edges);
    *w = malloc(m * sizeof **w);
    grove_options o;
    grove_options_init(&o);
    o.threads = threads;
    grove_emst_params params;
    grove_emst_params_init(&params);
    params.min_samples = k;
    CHECK_OK(grove_emst(pts, &params, *edges, *w, &o));
}

TEST(emst_same_result_for_any_thread_count)
{
    const size_t n = 20000;
    for (int kind = 0; kind < TEST_KINDS; kind++) {
        double *x = test_points((test_kind)kind, n, 3, 77 + (uint64_t)kind);
        for (size_t k = 1; k <= 5; k += 4) {
            int64_t *e1, *e2;
            double *w1, *w2;
            grove_points pts = grove_points_f64(x, n, kind == TEST_UNIFORM ? 6 : 3);
            pts.n = kind == TEST_UNIFORM ? n / 2 : n;
            emst_run(pts, k, 1, &e1, &w1);
            emst_run(pts, k, 2, &e2, &w2);
            CHECK(memcmp(e1, e2, 2 * (pts.n - 1) * sizeof *e1) == 0);
            CHECK(memcmp(w1, w2, (pts.n - 1) * sizeof *w1) == 0);
            free(e1);
            free(e2);
            free(w1);
            free(w2);
        }
        free(x);
    }
}

TEST(emst_is_a_sorted_spanning_tree)
{
    /* Independent of Prim: n - 1 edges u < v, sorted, and union-find joins
     * everything (no cycle). */
    const size_t n = 5000;
    double *x = test_points(TEST_DUPLICATES, n, 2, 5);
    int64_t *e;
    double *w;
    emst_run(grove_points_f64(x, n, 2), 1, 0, &e, &w);
    size_t *parent = malloc(n * sizeof *parent);
    for (size_t i = 0; i < n; i++) parent[i] = i;
    size_t joins = 0;
    for (size_t i = 0; i + 1 < n; i++) {
        CHECK(e[2 * i] < e[2 * i + 1] && e[2 * i] >= 0 && e[2 * i + 1] < (int64_t)n);
        if (i) {
            edge a = {w[i - 1], e[2 * i - 2], e[2 * i - 1]}, b = {w[i], e[2 * i], e[2 * i + 1]};
            CHECK(edge_less(a, b));
        }
        size_t a = (size_t)e[2 * i], b = (size_t)e[2 * i + 1];
        while (parent[a] != a) a = parent[a] = parent[parent[a]];
        while (parent[b] != b) b = parent[b] = parent[parent[b]];
        if (a != b) parent[a] = b, joins++;
    }
    CHECK(joins == n - 1);
    free(parent);
    free(e);
    free(w);
    free(x);
}

TEST(emst_small_and_bad_inputs)
{
    double x[6] = {0, 0, 1, 0, 5, 5};
    int64_t e[4] = {-7, -7, -7, -7};
    double w[2] = {-1, -1};
    CHECK_OK(grove_emst(grove_points_f64(x, 0, 2), NULL, NULL, NULL, NULL));
    CHECK_OK(grove_emst(grove_points_f64(x, 1, 2), NULL, e, w, NULL));
    CHECK(e[0] == -7 && w[0] == -1);
    CHECK_OK(grove_emst(grove_points_f64(x, 2, 2), NULL, e, w, NULL));
    CHECK(e[0] == 0 && e[1] == 1 && w[0] == 1);
    grove_emst_params p;
    grove_emst_params_init(&p);
    CHECK(p.min_samples == 1);
    p.min_samples = 4;
    CHECK_FAILS(grove_emst(grove_points_f64(x, 3, 2), &p, e, w, NULL), GROVE_INVALID_ARGUMENT,
                "min_samples = 4 exceeds the number of points n = 3");
    p.min_samples = 0;
    CHECK_FAILS(grove_emst(grove_points_f64(x, 3, 2), &p, e, w, NULL), GROVE_INVALID_ARGUMENT, "at least 1");
    p.min_samples = 3;
    CHECK_OK(grove_emst(grove_points_f64(x, 3, 2), &p, e, w, NULL));
    x[3] = NAN;
    CHECK_FAILS(grove_emst(grove_points_f64(x, 3, 2), NULL, e, w, NULL), GROVE_INVALID_ARGUMENT,
                "row 1, column 1 is NaN");
    x[3] = 0;
    CHECK_FAILS(grove_emst(grove_points_f64(x, 3, 2), NULL, NULL, w, NULL), GROVE_INVALID_ARGUMENT, "NULL");
}

TEST(emst_out_of_memory_is_reported)
{
    double *x = test_points(TEST_UNIFORM, 200, 3, 9);
    int64_t e[398];
    double w[199];
    int failures = 0;
    for (long k = 1; k < 40; k++) {
        grove__alloc_fail_after(k);
        grove_status s = grove_emst(grove_points_f64(x, 200, 3), NULL, e, w, NULL);
        grove__alloc_fail_after(0);
        if (s == GROVE_OUT_OF_MEMORY) failures++;
        else CHECK(s == GROVE_OK);
    }
    CHECK(failures > 5);
    free(x);
}

/* ArborX's golden EMST of 1000 3-D points (computed in float). */
TEST(emst_arborx_golden)
{
    const char *dir = "../shared/data/arborx-mst-golden/";
    char path[256];
    grove_array pts = {0}, ref = {0};
    snprintf(path, sizeof path, "%smst_golden_test_points.csv", dir);
    FILE *f = fopen(path, "r");
    if (!f) {
        test_skip("%s not found", path);
        return;
    }
    fclose(f);
    REQUIRE_OK(grove_csv_read(path, &pts));
    snprintf(path, sizeof path, "%smst_golden_test_edges.csv", dir);
    REQUIRE_OK(grove_csv_read(path, &ref));
    size_t n = pts.shape[0], m = ref.shape[0];
    REQUIRE(n == 1000 && m == 999 && pts.shape[1] == 3 && ref.shape[1] == 3);
    int64_t *e = malloc(2 * m * sizeof *e);
    double *w = malloc(m * sizeof *w);
    grove_points view;
    REQUIRE_OK(grove_array_points(&pts, &view));
    CHECK_OK(grove_emst(view, NULL, e, w, NULL));
    /* Same unordered pairs; weights within float rounding. */
    const double *r = ref.data;
    edge *mine = malloc(m * sizeof *mine), *theirs = malloc(m * sizeof *theirs);
    double total_mine = 0, total_ref = 0;
    for (size_t i = 0; i < m; i++) {
        mine[i] = (edge){0, e[2 * i], e[2 * i + 1]};
        int64_t u = (int64_t)r[3 * i], v = (int64_t)r[3 * i + 1];
        theirs[i] = (edge){0, u < v ? u : v, u < v ? v : u};
        total_mine += w[i];
        total_ref += r[3 * i + 2];
    }
    qsort(mine, m, sizeof *mine, cmp_edge);
    qsort(theirs, m, sizeof *theirs, cmp_edge);
    size_t same = 0;
    for (size_t i = 0; i < m; i++) same += mine[i].u == theirs[i].u && mine[i].v == theirs[i].v;
    CHECK_MSG(same == m, "%zu of %zu edges agree with ArborX", same, m);
    CHECK_MSG(fabs(total_mine - total_ref) <= 1e-5 * total_ref, "total %.9g vs ArborX %.9g", total_mine, total_ref);
    free(mine);
    free(theirs);
    free(e);
    free(w);
    grove_array_free(&pts);
    grove_array_free(&ref);
}

/* How many of the first rows' k neighbours (idx, and d2 the keys of their
 * squared distances, by input row) differ from brute force, ties by row
 * (stops counting at 3). */
static int knn_brute_differences(const double *x, size_t n, size_t d, size_t k, const uint32_t *idx,
                                 const double *d2)
{
    edge *all = malloc(n * sizeof *all);
    int bad = !all;
    for (size_t a = 0; all && a < n && bad < 3; a++) {
        for (size_t b = 0; b < n; b++) all[b] = (edge){dist2(x, false, d, a, b), (int64_t)b, 0};
        qsort(all, n, sizeof *all, cmp_edge);
        for (size_t r = 0; r < k; r++)
            if (idx[a * k + r] != (uint32_t)all[r].u || grove__key_dist(d2[a * k + r]) != sqrt(all[r].w)) bad++;
    }
    free(all);
    return bad;
}

/* kNN on the index against brute force, ties by row. */
TEST(emst_knn_matches_brute_force)
{
    const size_t dims[] = {1, 2, 3, 5};
    for (size_t di = 0; di < 4; di++)
        for (int kind = 0; kind < TEST_KINDS; kind++) {
            size_t n = 700, d = dims[di], k = 1 + (size_t)kind * 4;
            double *x = test_points((test_kind)kind, n, d, 900 + di * 10 + (uint64_t)kind);
            grove__tree t;
            REQUIRE_OK(grove__tree_build(grove_points_f64(x, n, d), 0, 2, &t));
            uint32_t *idx = malloc(n * k * sizeof *idx);
            double *d2 = malloc(n * k * sizeof *d2), *kth = malloc(n * sizeof *kth);
            CHECK_OK(grove__tree_knn(&t, k, idx, d2, kth, NULL));
            int bad = knn_brute_differences(x, n, d, k, idx, d2);
            for (size_t p = 0; p < n; p++) CHECK(kth[p] == d2[(size_t)t.perm[p] * k + k - 1]);
            CHECK_MSG(bad == 0, "kNN d=%zu %s k=%zu differs from brute force", d, test_kind_name[kind], k);
            free(idx);
            free(d2);
            free(kth);
            grove__tree_free(&t);
            free(x);
        }
}

/* The walk's stack has one entry per level, GROVE__TREE_MAX_DEPTH in all:
 * a geometric sequence (each point half the last, so the BVH is a chain of
 * one Morton bit per level) ending in duplicates (split by position) gives
 * about the deepest BVH there is, well within it, and its kNN is exact. */
TEST(emst_deep_bvh_stays_within_the_walk_stack)
{
    size_t n = 700, k = 3;
    double *x = malloc(n * sizeof *x);
    REQUIRE(x);
    for (size_t i = 0; i < n; i++) x[i] = i < 90 ? ldexp(1, -(int)i) : 0;
    grove__tree t;
    REQUIRE_OK(grove__tree_build(grove_points_f64(x, n, 1), 0, 2, &t));
    CHECK_MSG(t.depth > 60 && t.depth <= GROVE__TREE_MAX_DEPTH, "BVH depth %d", t.depth);
    uint32_t *idx = malloc(n * k * sizeof *idx);
    double *d2 = malloc(n * k * sizeof *d2);
    REQUIRE(idx && d2);
    CHECK_OK(grove__tree_knn(&t, k, idx, d2, NULL, NULL));
    CHECK_MSG(knn_brute_differences(x, n, 1, k, idx, d2) == 0, "kNN on the deep BVH differs from brute force");
    CHECK(grove__tree_depth_check(GROVE__TREE_MAX_DEPTH, "test") == GROVE_OK);
    CHECK_FAILS(grove__tree_depth_check(GROVE__TREE_MAX_DEPTH + 1, "test"), GROVE_INTERNAL, "exceeds");
    free(idx);
    free(d2);
    grove__tree_free(&t);
    free(x);
}

TEST(emst_radix_sort_is_stable)
{
    const size_t n = 100000;
    uint64_t *key = malloc(n * sizeof *key);
    uint32_t *val = malloc(n * sizeof *val);
    grove_rng rng;
    grove_rng_seed(&rng, 3);
    for (size_t i = 0; i < n; i++) key[i] = grove_rng_u64(&rng) >> (i % 3 ? 40 : 0), val[i] = (uint32_t)i;
    uint64_t *orig = malloc(n * sizeof *orig);
    memcpy(orig, key, n * sizeof *orig);
    REQUIRE_OK(grove__radix_sort_u64(key, val, n, 2));
    for (size_t i = 1; i < n; i++) CHECK(key[i - 1] < key[i] || (key[i - 1] == key[i] && val[i - 1] < val[i]));
    /* Every key still travels with its value. */
    size_t moved = 0;
    for (size_t i = 0; i < n; i++) moved += val[i] < n && key[i] == orig[val[i]];
    CHECK_MSG(moved == n, "%zu of %zu keys kept their values", moved, n);
    free(orig);
    free(key);
    free(val);
}

TEST(emst_core_distances)
{
    double x[] = {0, 1, 3, 7, 7};
    double core[5];
    CHECK_OK(grove_core_distances(grove_points_f64(x, 5, 1), &(grove_knn_params){2, 0}, core, NULL));
    CHECK(core[0] == 1 && core[1] == 1 && core[2] == 2 && core[3] == 0 && core[4] == 0);
    CHECK_OK(grove_core_distances(grove_points_f64(x, 5, 1), &(grove_knn_params){1, 0}, core, NULL));
    CHECK(core[2] == 0);
    CHECK_FAILS(grove_core_distances(grove_points_f64(x, 5, 1), &(grove_knn_params){6, 0}, core, NULL),
                GROVE_INVALID_ARGUMENT, "exceeds");
}

/* exclude_self: the k-th nearest other row, the (k + 1)-th counting the
 * row itself, duplicates included. */
TEST(emst_core_distances_exclude_self)
{
    double x[] = {0, 1, 3, 7, 7};
    double core[5], want[5];
    for (size_t k = 1; k <= 4; k++) {
        CHECK_OK(grove_core_distances(grove_points_f64(x, 5, 1), &(grove_knn_params){k, 1}, core, NULL));
        CHECK_OK(grove_core_distances(grove_points_f64(x, 5, 1), &(grove_knn_params){k + 1, 0}, want, NULL));
        CHECK_MSG(!memcmp(core, want, sizeof core), "k = %zu", k);
    }
    CHECK_FAILS(grove_core_distances(grove_points_f64(x, 5, 1), &(grove_knn_params){5, 1}, core, NULL),
                GROVE_INVALID_ARGUMENT, "exceeds");
    CHECK_FAILS(grove_core_distances(grove_points_f64(x, 5, 1), &(grove_knn_params){0, 1}, core, NULL),
                GROVE_INVALID_ARGUMENT, "at least 1");
    CHECK_FAILS(grove_core_distances(grove_points_f64(x, 5, 1), NULL, core, NULL), GROVE_INVALID_ARGUMENT,
                "params is NULL");
}
