/* HDBSCAN* prediction against the `hdbscan` library's prediction.py
 * formulas done naively on the model's condensed tree (all-pairs
 * distances sorted for the neighbours, its walks up the tree by scanning
 * rows, its dictionaries as arrays), and against invariants: training
 * points predict their own labels and GLOSH scores, far points are noise,
 * membership rows sum to the probability of being in some cluster, and
 * results do not depend on the thread count or the query dtype. */
#include "test.h"

#include <float.h>
#include <math.h>

typedef struct ref_pred {
    const double *x;
    size_t n, d, m, neighbours, rows, k, clusters;
    int64_t *parent, *child, *labels;
    double *lambda, *core;
    int64_t *pc;            /* prediction clusters, ascending */
    int64_t *map;           /* per cluster index: cluster_map or -1 */
    double *map_max;        /* max_lambdas */
    double *leaf_max;       /* leaf_max_lambdas */
    int64_t *ex_off, *ex_rows;
} ref_pred;

static double dist2(const double *a, const double *b, size_t d)
{
    double s = 0;
    for (size_t j = 0; j < d; j++) s += (a[j] - b[j]) * (a[j] - b[j]);
    return s;
}

static size_t row_of_child(const ref_pred *r, int64_t child)
{
    for (size_t i = 0; i < r->rows; i++)
        if (r->child[i] == child) return i;
    return 0;
}

static int descends(const ref_pred *r, int64_t c, int64_t top)
{
    while (c != top && c != (int64_t)r->n) c = r->parent[row_of_child(r, c)];
    return c == top;
}

/* The neighbours of q: rows sorted by (squared distance, row). */
static const double *rank_d2 = NULL;
static int by_distance(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    if (rank_d2[x] != rank_d2[y]) return rank_d2[x] < rank_d2[y] ? -1 : 1;
    return (x > y) - (x < y);
}

static void neighbours(const ref_pred *r, const double *q, double *d2, size_t *order)
{
    for (size_t i = 0; i < r->n; i++) d2[i] = dist2(q, r->x + i * r->d, r->d), order[i] = i;
    rank_d2 = d2;
    qsort(order, r->n, sizeof *order, by_distance);
}

static void ref_init(ref_pred *r, const grove_hdbscan_model *m, const double *x, size_t d, size_t k_samples)
{
    memset(r, 0, sizeof *r);
    r->x = x;
    r->n = grove_hdbscan_model_n(m);
    r->d = d;
    r->m = k_samples - 1;
    r->neighbours = r->m ? 2 * r->m : 1;
    r->rows = grove_hdbscan_model_condensed_rows(m);
    r->clusters = grove_hdbscan_model_clusters(m);
    r->parent = malloc(r->rows * sizeof *r->parent);
    r->child = malloc(r->rows * sizeof *r->child);
    r->lambda = malloc(r->rows * sizeof *r->lambda);
    r->labels = malloc(r->n * sizeof *r->labels);
    grove_hdbscan_model_condensed_tree(m, r->parent, r->child, r->lambda, NULL);
    grove_hdbscan_model_labels(m, r->labels, NULL, NULL);
    r->k = 1;
    for (size_t i = 0; i < r->rows; i++)
        if (r->child[i] >= (int64_t)r->n && (size_t)r->child[i] - r->n + 1 > r->k)
            r->k = (size_t)r->child[i] - r->n + 1;
    /* Core distances with the library's min_samples neighbours. */
    r->core = calloc(r->n, sizeof *r->core);
    double *d2 = malloc(r->n * sizeof *d2);
    size_t *order = malloc(r->n * sizeof *order);
    for (size_t i = 0; r->m && i < r->n; i++) {
        neighbours(r, x + i * d, d2, order);
        r->core[i] = sqrt(d2[order[r->m - 1]]);
    }
    /* _select_clusters: per label the lowest parent of its points, sorted. */
    r->pc = malloc((r->clusters + 1) * sizeof *r->pc);
    for (size_t c = 0; c < r->clusters; c++) {
        r->pc[c] = INT64_MAX;
        for (size_t i = 0; i < r->rows; i++)
            if (r->child[i] < (int64_t)r->n && r->labels[r->child[i]] == (int64_t)c && r->parent[i] < r->pc[c])
                r->pc[c] = r->parent[i];
    }
    for (size_t a = 0; a < r->clusters; a++)
        for (size_t b = a + 1; b < r->clusters; b++)
            if (r->pc[b] < r->pc[a]) {
                int64_t t = r->pc[a];
                r->pc[a] = r->pc[b];
                r->pc[b] = t;
            }
    r->leaf_max = calloc(r->k, sizeof *r->leaf_max);
    for (size_t i = 0; i < r->rows; i++)
        r->leaf_max[r->parent[i] - (int64_t)r->n] = fmax(r->leaf_max[r->parent[i] - (int64_t)r->n], r->lambda[i]);
    r->map = malloc(r->k * sizeof *r->map);
    r->map_max = calloc(r->k, sizeof *r->map_max);
    for (size_t c = 0; c < r->k; c++) r->map[c] = -1;
    for (size_t j = 0; j < r->clusters; j++) r->map[r->pc[j] - (int64_t)r->n] = (int64_t)j;
    for (size_t j = 0; j < r->clusters; j++) {
        int64_t top = r->pc[j], label = r->map[top - (int64_t)r->n];
        for (size_t c = 0; c < r->k; c++)
            if (descends(r, (int64_t)(r->n + c), top))
                r->map[c] = label, r->map_max[c] = r->leaf_max[top - (int64_t)r->n];
    }
    size_t total = grove_hdbscan_model_exemplar_count(m);
    r->ex_off = malloc((r->clusters + 1) * sizeof *r->ex_off);
    r->ex_rows = malloc((total + 1) * sizeof *r->ex_rows);
    grove_hdbscan_model_exemplars(m, r->ex_off, r->ex_rows);
    free(d2);
    free(order);
}

static void ref_free(ref_pred *r)
{
    free(r->parent);
    free(r->child);
    free(r->lambda);
    free(r->labels);
    free(r->core);
    free(r->pc);
    free(r->leaf_max);
    free(r->map);
    free(r->map_max);
    free(r->ex_off);
    free(r->ex_rows);
}

/* _find_neighbor_and_lambda. */
static void ref_neighbour(const ref_pred *r, const double *q, size_t *nn, double *lambda, double *nearest)
{
    double *d2 = malloc(r->n * sizeof *d2);
    size_t *order = malloc(r->n * sizeof *order);
    neighbours(r, q, d2, order);
    double core = sqrt(d2[order[r->m]]), best = INFINITY;
    for (size_t i = 0; i < r->neighbours; i++) {
        size_t j = order[i];
        double mr = fmax(fmax(r->core[j], core), sqrt(d2[j]));
        if (mr < best) best = mr, *nn = j;
    }
    *lambda = best > 0 ? 1 / best : DBL_MAX;
    *nearest = sqrt(d2[order[0]]);
    free(d2);
    free(order);
}

static void ref_predict(const ref_pred *r, const double *q, int64_t *label, double *prob, double *score)
{
    *label = -1, *prob = 0, *score = 1;
    if (r->k <= 1) return;
    size_t nn;
    double lambda, nearest;
    ref_neighbour(r, q, &nn, &lambda, &nearest);
    size_t row = row_of_child(r, (int64_t)nn);
    int64_t c = r->parent[row];
    if (r->lambda[row] > lambda)
        while (c > (int64_t)r->n) {
            size_t up = row_of_child(r, c);
            if (!(r->lambda[up] >= lambda)) break;
            c = r->parent[up];
        }
    *label = r->map[c - (int64_t)r->n];
    if (*label >= 0) {
        double max_lambda = r->map_max[c - (int64_t)r->n];
        *prob = max_lambda > 0 ? fmin(max_lambda, lambda) / max_lambda : 1;
    }
    /* approximate_predict_scores: the largest lambda below the neighbour's cluster. */
    int64_t pcl = r->parent[row];
    double top = 0;
    for (size_t i = 0; i < r->rows; i++)
        if (descends(r, r->parent[i], pcl)) top = fmax(top, r->lambda[i]);
    if (nearest == 0) lambda = r->lambda[row];
    *score = top > 0 ? (top - lambda) / top : 0;
}

/* merge_height: the library's walk, larger id steps up. */
static double ref_merge_height(const ref_pred *r, int64_t a, int64_t b, double point_lambda)
{
    int left = 0, right = 0;
    int64_t last = a;
    while (a != b) {
        if (a > b) left = 1, last = a, a = r->parent[row_of_child(r, a)];
        else right = 1, last = b, b = r->parent[row_of_child(r, b)];
    }
    return left && right ? r->lambda[row_of_child(r, last)] : point_lambda;
}

static void ref_distance_vector(const ref_pred *r, const double *q, double *v)
{
    double sum = 0;
    for (size_t c = 0; c < r->clusters; c++) {
        double best = INFINITY;
        for (int64_t e = r->ex_off[c]; e < r->ex_off[c + 1]; e++)
            best = fmin(best, sqrt(dist2(q, r->x + (size_t)r->ex_rows[e] * r->d, r->d)));
        v[c] = best != 0 ? 1 / best : DBL_MAX / (double)r->clusters;
        sum += v[c];
    }
    for (size_t c = 0; c < r->clusters; c++) v[c] /= sum;
}

static double row_sum(const double *v, size_t k)
{
    double s = 0;
    for (size_t c = 0; c < k; c++) s += v[c];
    return s;
}

static void ref_membership(const ref_pred *r, const double *q, double *out)
{
    size_t k = r->clusters, nn;
    double lambda, nearest, outlier[64], top = -INFINITY;
    ref_neighbour(r, q, &nn, &lambda, &nearest);
    size_t row = row_of_child(r, (int64_t)nn);
    int64_t pcl = r->parent[row];
    lambda = fmin(lambda, r->lambda[row]);
    double max_lambda = r->leaf_max[pcl - (int64_t)r->n];
    for (size_t c = 0; c < k; c++) {
        double den = max_lambda - ref_merge_height(r, pcl, r->pc[c], (double)(float)lambda);
        outlier[c] = max_lambda / (den <= 0 ? 1e-8 : den);
        top = fmax(top, outlier[c]);
    }
    for (size_t c = 0; c < k; c++) outlier[c] = exp(outlier[c] - top);
    double s = row_sum(outlier, k);
    ref_distance_vector(r, q, out);
    for (size_t c = 0; c < k; c++) out[c] = sqrt(out[c]) * pow(outlier[c] / s, 2);
    s = row_sum(out, k);
    double best = -INFINITY;
    size_t arg = 0;
    for (size_t c = 0; c < k; c++) {
        double h = ref_merge_height(r, pcl, r->pc[c], lambda);
        if (h > best) best = h, arg = c;
    }
    double prob = best / (fmax(lambda, r->leaf_max[r->pc[arg] - (int64_t)r->n]) + 1e-8);
    for (size_t c = 0; c < k; c++) out[c] = out[c] / s * prob;
}

static void ref_all_points(const ref_pred *r, double *out)
{
    size_t k = r->clusters;
    double top = -INFINITY;
    for (size_t i = 0; i < r->rows; i++) {
        if (r->child[i] >= (int64_t)r->n) continue;
        double max_lambda = r->leaf_max[r->parent[i] - (int64_t)r->n] + 1e-8, *v = out + (size_t)r->child[i] * k;
        for (size_t c = 0; c < k; c++) {
            v[c] = exp(-(max_lambda / ref_merge_height(r, r->parent[i], r->pc[c], r->lambda[i])));
            top = fmax(top, v[c]);
        }
    }
    for (size_t i = 0; i < r->rows; i++) {
        if (r->child[i] >= (int64_t)r->n) continue;
        size_t p = (size_t)r->child[i];
        double *v = out + p * k, dist[64], best = -INFINITY;
        size_t arg = 0;
        for (size_t c = 0; c < k; c++) v[c] = exp(v[c] - top);
        double s = row_sum(v, k);
        ref_distance_vector(r, r->x + p * r->d, dist);
        for (size_t c = 0; c < k; c++) v[c] = dist[c] * (v[c] / s);
        s = row_sum(v, k);
        for (size_t c = 0; c < k; c++) {
            double h = ref_merge_height(r, r->parent[i], r->pc[c], r->lambda[i]);
            if (h > best) best = h, arg = c;
        }
        double prob = best / fmax(r->leaf_max[r->pc[arg] - (int64_t)r->n], r->lambda[i]);
        for (size_t c = 0; c < k; c++) v[c] = v[c] / s * prob;
    }
}

/* Equal to rounding (the library sums rows pairwise), NaN where it has NaN. */
static int close_to(double a, double b)
{
    return a == b || (isnan(a) && isnan(b)) || fabs(a - b) <= 1e-12 * fmax(fabs(a), fabs(b)) + 1e-300;
}

/* Blobs and a few far points; with `lattice`, the first 81 points on a
 * 9 x 9 grid, whose leaf then has most of them as exemplars (searched
 * through an index). */
static double *data(size_t n, size_t d, uint64_t seed, int lattice)
{
    grove_rng rng;
    grove_rng_seed(&rng, seed);
    double *x = malloc(n * d * sizeof *x);
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < d; j++)
            x[i * d + j] = lattice && i < 81 ? 20.0 + (j < 2 ? 0.05 * (double)(j ? i / 9 : i % 9) : 0)
                           : i % 17 == 0     ? 14 * grove_rng_uniform(&rng) - 7
                                             : 4.0 * (double)((i + j) % 3) + 0.7 * grove_rng_normal(&rng);
    return x;
}

TEST(hdbscan_predict_equals_the_library_formulas)
{
    struct { size_t n, d, mcs, k; grove_hdbscan_selection sel; int lattice; } cases[] = {
        {240, 2, 8, 4, GROVE_HDBSCAN_EOM, 0}, {240, 2, 5, 3, GROVE_HDBSCAN_LEAF, 0},
        {200, 5, 8, 5, GROVE_HDBSCAN_EOM, 0}, {300, 3, 10, 4, GROVE_HDBSCAN_EOM, 1},
        {200, 2, 6, 1, GROVE_HDBSCAN_LEAF, 0}, {220, 2, 6, 2, GROVE_HDBSCAN_EOM, 1}};
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
        size_t n = cases[ci].n, d = cases[ci].d, nq = 60;
        double *x = data(n, d, ci + 1, cases[ci].lattice), *q = malloc(nq * d * sizeof *q);
        grove_rng rng;
        grove_rng_seed(&rng, 100 + ci);
        for (size_t i = 0; i < nq; i++)
            for (size_t j = 0; j < d; j++)
                q[i * d + j] = i < 20 ? x[(i * 7 % n) * d + j] + 0.3 * grove_rng_normal(&rng)
                               : i < 40 ? 16 * grove_rng_uniform(&rng) - 8 : x[(i * 11 % n) * d + j];
        grove_hdbscan_params p;
        grove_hdbscan_params_init(&p);
        p.min_cluster_size = cases[ci].mcs;
        p.min_samples = cases[ci].k;
        p.selection = cases[ci].sel;
        p.prediction_data = 1;
        grove_hdbscan_model *m = NULL;
        REQUIRE_OK(grove_hdbscan_model_create(grove_points_f64(x, n, d), &p, NULL, &m));
        ref_pred r;
        ref_init(&r, m, x, d, cases[ci].k);
        size_t k = r.clusters, largest = 0;
        REQUIRE(k > 1 && k < 64);
        for (size_t c = 0; c < k; c++)
            if ((size_t)(r.ex_off[c + 1] - r.ex_off[c]) > largest) largest = (size_t)(r.ex_off[c + 1] - r.ex_off[c]);
        CHECK(!cases[ci].lattice || largest >= 64);
        int64_t *labels = malloc(nq * sizeof *labels);
        double *prob = malloc(nq * sizeof *prob), *scores = malloc(nq * sizeof *scores);
        double *member = malloc(nq * k * sizeof *member), *want = malloc((n > nq ? n : nq) * k * sizeof *want);
        REQUIRE_OK(grove_hdbscan_approximate_predict(m, grove_points_f64(q, nq, d), labels, prob, NULL));
        REQUIRE_OK(grove_hdbscan_approximate_predict_scores(m, grove_points_f64(q, nq, d), scores, NULL));
        REQUIRE_OK(grove_hdbscan_membership_vector(m, grove_points_f64(q, nq, d), member, NULL));
        for (size_t i = 0; i < nq; i++) {
            int64_t wl;
            double wp, ws;
            ref_predict(&r, q + i * d, &wl, &wp, &ws);
            CHECK_MSG(labels[i] == wl && prob[i] == wp, "case %zu query %zu: label %lld prob %.17g, want %lld %.17g",
                      ci, i, (long long)labels[i], prob[i], (long long)wl, wp);
            CHECK_MSG(scores[i] == ws || (isnan(scores[i]) && isnan(ws)), "case %zu query %zu: score %.17g, want %.17g",
                      ci, i, scores[i], ws);
            ref_membership(&r, q + i * d, want + i * k);
            for (size_t c = 0; c < k; c++)
                CHECK_MSG(close_to(member[i * k + c], want[i * k + c]),
                          "case %zu query %zu cluster %zu: %.17g, want %.17g", ci, i, c, member[i * k + c],
                          want[i * k + c]);
        }
        double *all = malloc(n * k * sizeof *all);
        REQUIRE_OK(grove_hdbscan_all_points_membership_vectors(m, all, NULL));
        ref_all_points(&r, want);
        for (size_t i = 0; i < n * k; i++)
            CHECK_MSG(close_to(all[i], want[i]), "case %zu point %zu cluster %zu: %.17g, want %.17g", ci, i / k, i % k,
                      all[i], want[i]);
        ref_free(&r);
        grove_hdbscan_model_free(m);
        free(x);
        free(q);
        free(labels);
        free(prob);
        free(scores);
        free(member);
        free(want);
        free(all);
    }
}

TEST(hdbscan_predict_invariants)
{
    const size_t n = 2000, d = 3, far = 50;
    double *x = data(n, d, 9, 0), *q = malloc(far * d * sizeof *q);
    float *xf = malloc(n * d * sizeof *xf);
    for (size_t i = 0; i < n * d; i++) xf[i] = (float)x[i];
    for (size_t i = 0; i < far * d; i++) q[i] = (i % 2 ? 1 : -1) * (1000.0 + (double)i);
    grove_hdbscan_params p;
    grove_hdbscan_params_init(&p);
    p.min_cluster_size = 15;
    p.min_samples = 5;
    p.prediction_data = 1;
    grove_hdbscan_model *m = NULL;
    REQUIRE_OK(grove_hdbscan_model_create(grove_points_f64(x, n, d), &p, NULL, &m));
    size_t k = grove_hdbscan_model_clusters(m);
    REQUIRE(k >= 3);
    int64_t *labels = malloc(n * sizeof *labels), *own = malloc(n * sizeof *own);
    double *scores = malloc(n * sizeof *scores), *glosh = malloc(n * sizeof *glosh), *prob = malloc(n * sizeof *prob);
    double *all = malloc(n * k * sizeof *all), *all2 = malloc(n * k * sizeof *all2);
    double *member = malloc(n * k * sizeof *member), *member2 = malloc(n * k * sizeof *member2);
    REQUIRE_OK(grove_hdbscan_model_labels(m, own, NULL, glosh));
    grove_options one, two;
    grove_options_init(&one);
    grove_options_init(&two);
    one.threads = 1;
    two.threads = 2;
    /* Training points predict their own labels, and their GLOSH scores. */
    REQUIRE_OK(grove_hdbscan_approximate_predict(m, grove_points_f64(x, n, d), labels, prob, &two));
    REQUIRE_OK(grove_hdbscan_approximate_predict_scores(m, grove_points_f64(x, n, d), scores, &two));
    for (size_t i = 0; i < n; i++) {
        CHECK_MSG(labels[i] == own[i], "row %zu: predicted %lld, fitted %lld", i, (long long)labels[i],
                  (long long)own[i]);
        CHECK(scores[i] == glosh[i] && prob[i] >= 0 && prob[i] <= 1 && (labels[i] >= 0 || prob[i] == 0));
    }
    /* Far away: noise. */
    REQUIRE_OK(grove_hdbscan_approximate_predict(m, grove_points_f64(q, far, d), labels, prob, NULL));
    for (size_t i = 0; i < far; i++) CHECK(labels[i] == -1 && prob[i] == 0);
    /* Rows sum to the probability of being in some cluster, at most 1. */
    REQUIRE_OK(grove_hdbscan_all_points_membership_vectors(m, all, &one));
    REQUIRE_OK(grove_hdbscan_all_points_membership_vectors(m, all2, &two));
    CHECK(memcmp(all, all2, n * k * sizeof *all) == 0);
    /* Queries are taken in float64: float32 ones equal their float64 values. */
    double *xd = malloc(n * d * sizeof *xd);
    for (size_t i = 0; i < n * d; i++) xd[i] = (double)xf[i];
    REQUIRE_OK(grove_hdbscan_membership_vector(m, grove_points_f64(xd, n, d), member, &one));
    REQUIRE_OK(grove_hdbscan_membership_vector(m, grove_points_f32(xf, n, d), member2, &two));
    CHECK(memcmp(member, member2, n * k * sizeof *member) == 0);
    free(xd);
    for (size_t i = 0; i < n; i++) {
        double sum = 0, sum2 = 0;
        for (size_t c = 0; c < k; c++) {
            CHECK(all[i * k + c] >= 0 && member[i * k + c] >= 0);
            sum += all[i * k + c];
            sum2 += member[i * k + c];
        }
        CHECK_MSG(sum <= 1 + 1e-12 && sum2 <= 1 + 1e-12, "row %zu sums to %.17g and %.17g", i, sum, sum2);
    }
    grove_hdbscan_model_free(m);
    free(x);
    free(xf);
    free(q);
    free(labels);
    free(own);
    free(scores);
    free(glosh);
    free(prob);
    free(all);
    free(all2);
    free(member);
    free(member2);
}

/* A 1-D lattice with every point repeated: with K = 2 the duplicates' core
 * distances are 0 and their clusters' lambdas infinite, where the
 * library's membership vectors and GLOSH scores divide infinity by
 * infinity (NaN). grove gives the limits (docs/python-compat.md): a query
 * on such a cluster belongs to it fully and scores 0, one beside it
 * (0.25 off) belongs nowhere and scores 1; nothing is NaN. */
TEST(hdbscan_predict_clusters_of_duplicates_give_the_limits)
{
    const double base[] = {0, 1, 2, 3, 4, 5, 20, 21, 22, 23, 24, 25, 40, 41, 42};
    const size_t reps = 3, n = 15 * reps, nq = 2 * n;
    double x[45], q[90];
    for (size_t i = 0; i < n; i++) x[i] = q[i] = base[i / reps], q[n + i] = x[i] + 0.25;
    grove_hdbscan_params p;
    grove_hdbscan_params_init(&p);
    p.min_cluster_size = 2;
    p.min_samples = 2;
    p.prediction_data = 1;
    grove_hdbscan_model *m = NULL;
    REQUIRE_OK(grove_hdbscan_model_create(grove_points_f64(x, n, 1), &p, NULL, &m));
    size_t k = grove_hdbscan_model_clusters(m);
    REQUIRE(k > 1 && k <= 15);
    int64_t own[45], labels[90];
    double glosh[45], prob[90], scores[90], member[90 * 15], all[45 * 15];
    REQUIRE_OK(grove_hdbscan_model_labels(m, own, NULL, glosh));
    REQUIRE_OK(grove_hdbscan_approximate_predict(m, grove_points_f64(q, nq, 1), labels, prob, NULL));
    REQUIRE_OK(grove_hdbscan_approximate_predict_scores(m, grove_points_f64(q, nq, 1), scores, NULL));
    REQUIRE_OK(grove_hdbscan_membership_vector(m, grove_points_f64(q, nq, 1), member, NULL));
    REQUIRE_OK(grove_hdbscan_all_points_membership_vectors(m, all, NULL));
    size_t bad = 0;
    for (size_t i = 0; i < nq; i++) {
        int on = i < n;
        int64_t label = own[i % n];
        bad += label < 0 || (on && labels[i] != label) || !(prob[i] >= 0 && prob[i] <= 1);
        bad += scores[i] != (on ? 0.0 : 1.0);
        for (size_t c = 0; c < k; c++) {
            double limit = on && (int64_t)c == label ? 1 : 0;
            bad += member[i * k + c] != limit;
            if (on) bad += !(fabs(all[i * k + c] - limit) <= 1e-300) || !(glosh[i] >= 0 && glosh[i] <= 1);
        }
    }
    CHECK_MSG(bad == 0, "%zu values differ from the limits", bad);
    grove_hdbscan_model_free(m);
}
