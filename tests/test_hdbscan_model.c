/* The HDBSCAN* model's parts against independent truth: the definition
 * (hdbscan_ref.h) on data without equal weights, where it is also the
 * ordered hierarchy (condensed tree, labels, probabilities, GLOSH,
 * persistence, exemplars); Prim's MST of all pairs; components of the
 * all-pairs threshold graph (dbscan_clustering); the library's formulas
 * re-done naively (relative validity, excess of mass with a size and
 * distance limit); and the parameters' relations to plain runs. */
#include "hdbscan_ref.h"
#include "test.h"

#include <float.h>
#include <math.h>

static double *blob_points(size_t n, size_t d, uint64_t seed)
{
    grove_rng rng;
    grove_rng_seed(&rng, seed);
    double *x = malloc(n * d * sizeof *x);
    for (size_t i = 0; i < n; i++) {
        size_t blob = i % 4;
        for (size_t j = 0; j < d; j++)
            x[i * d + j] = i % 13 == 0 ? 12 * grove_rng_uniform(&rng) - 6
                                       : 3.0 * (double)((blob + j) % 3) + 0.6 * grove_rng_normal(&rng);
    }
    return x;
}

static grove_hdbscan_params params_of(size_t mcs, size_t k, grove_hdbscan_selection sel)
{
    grove_hdbscan_params p;
    grove_hdbscan_params_init(&p);
    p.min_cluster_size = mcs;
    p.min_samples = k;
    p.selection = sel;
    return p;
}

/* The model's condensed tree, owned by the caller. */
typedef struct ctree {
    size_t rows, n, k;
    int64_t *parent, *child, *size;
    double *lambda;
} ctree;

static ctree ctree_of(const grove_hdbscan_model *m)
{
    ctree t = {grove_hdbscan_model_condensed_rows(m), grove_hdbscan_model_n(m), 0, NULL, NULL, NULL, NULL};
    t.parent = malloc((t.rows + 1) * sizeof *t.parent);
    t.child = malloc((t.rows + 1) * sizeof *t.child);
    t.size = malloc((t.rows + 1) * sizeof *t.size);
    t.lambda = malloc((t.rows + 1) * sizeof *t.lambda);
    grove_hdbscan_model_condensed_tree(m, t.parent, t.child, t.lambda, t.size);
    t.k = 1;
    for (size_t r = 0; r < t.rows; r++)
        if (t.child[r] >= (int64_t)t.n && (size_t)t.child[r] - t.n + 1 > t.k) t.k = (size_t)t.child[r] - t.n + 1;
    return t;
}

static void ctree_free(ctree *t)
{
    free(t->parent);
    free(t->child);
    free(t->size);
    free(t->lambda);
}

/* Points below each cluster (n <= 64). */
static void cluster_masks(const ctree *t, uint64_t *mask)
{
    memset(mask, 0, t->k * sizeof *mask);
    for (size_t r = t->rows; r-- > 0;) {
        size_t p = (size_t)t->parent[r] - t->n;
        mask[p] |= t->child[r] < (int64_t)t->n ? 1ull << t->child[r] : mask[t->child[r] - (int64_t)t->n];
    }
}

/* Prim on the all-pairs weights: the MST's weights, ascending. */
static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void prim_weights(const double *w, size_t n, double *out)
{
    double best[REF_MAXN];
    uint8_t in[REF_MAXN] = {1};
    for (size_t i = 0; i < n; i++) best[i] = w[i];
    for (size_t e = 0; e + 1 < n; e++) {
        size_t pick = n;
        for (size_t i = 0; i < n; i++)
            if (!in[i] && (pick == n || best[i] < best[pick])) pick = i;
        out[e] = best[pick];
        in[pick] = 1;
        for (size_t i = 0; i < n; i++)
            if (!in[i] && w[pick * n + i] < best[i]) best[i] = w[pick * n + i];
    }
    qsort(out, n - 1, sizeof *out, cmp_double);
}

/* Components of the all-pairs graph of weights < cut; smaller than mcs is
 * noise; labels in order of first appearance. */
static void threshold_components(const double *w, size_t n, double cut, size_t mcs, int64_t *labels)
{
    size_t comp[REF_MAXN], count[REF_MAXN] = {0}, stack[REF_MAXN];
    for (size_t i = 0; i < n; i++) comp[i] = SIZE_MAX;
    size_t comps = 0;
    for (size_t s = 0; s < n; s++) {
        if (comp[s] != SIZE_MAX) continue;
        size_t depth = 0;
        stack[depth++] = s;
        comp[s] = comps;
        while (depth) {
            size_t a = stack[--depth];
            count[comps]++;
            for (size_t b = 0; b < n; b++)
                if (comp[b] == SIZE_MAX && w[a * n + b] < cut) comp[b] = comps, stack[depth++] = b;
        }
        comps++;
    }
    for (size_t i = 0; i < n; i++) labels[i] = count[comp[i]] < mcs ? -1 : (int64_t)comp[i];
}

/* The library's relative_validity_ formula, done directly. */
static double validity_of(const int64_t *labels, size_t n, const int64_t *edges, const double *weights, size_t k)
{
    double sparse[REF_MAXN * 4] = {0}, sep[REF_MAXN * 4], size[REF_MAXN * 4] = {0};
    double max_w = 0, outlier = INFINITY, score = 0;
    for (size_t c = 0; c < k; c++) sep[c] = INFINITY;
    for (size_t i = 0; i < n; i++)
        if (labels[i] >= 0) size[labels[i]]++;
    for (size_t e = 0; e + 1 < n; e++) {
        int64_t a = labels[edges[2 * e]], b = labels[edges[2 * e + 1]];
        double w = weights[e];
        max_w = fmax(max_w, w);
        if ((a < 0) != (b < 0)) outlier = fmin(outlier, w);
        if (a >= 0 && a == b) sparse[a] = fmax(sparse[a], w);
        if (a >= 0 && b >= 0 && a != b) sep[a] = fmin(sep[a], w), sep[b] = fmin(sep[b], w);
    }
    if (outlier == INFINITY) outlier = max_w;
    for (size_t c = 0; c < k; c++) {
        double s = sep[c] == INFINITY ? 2 * (k > 1 ? max_w : outlier) : sep[c];
        score += size[c] * ((s - sparse[c]) / fmax(s, sparse[c])) / (double)n;
    }
    return score;
}

TEST(hdbscan_model_matches_the_definition)
{
    size_t cases = 0;
    for (uint64_t seed = 1; seed <= 12; seed++) {
        size_t n = 40 + (size_t)(seed * 5 % 25), d = 2;
        double *x = blob_points(n, d, seed);
        for (size_t k = 1; k <= 2; k++)
            for (size_t mcs = 3; mcs <= 6; mcs += 3)
                for (int sel = 0; sel < 2; sel++) {
                    double *w = ref_weights(x, n, d, k);
                    ref_tree t;
                    ref_tree_build(w, n, mcs, &t);
                    uint8_t ref_sel[REF_MAXN];
                    int64_t want[REF_MAXN], got[REF_MAXN];
                    double want_p[REF_MAXN], want_s[REF_MAXN], got_p[REF_MAXN], got_s[REF_MAXN];
                    ref_results(&t, (grove_hdbscan_selection)sel, ref_sel, want, want_p, want_s);
                    grove_hdbscan_params p = params_of(mcs, k, (grove_hdbscan_selection)sel);
                    grove_hdbscan_model *m = NULL;
                    REQUIRE_OK(grove_hdbscan_model_create(grove_points_f64(x, n, d), &p, NULL, &m));
                    REQUIRE_OK(grove_hdbscan_model_labels(m, got, got_p, got_s));
                    size_t clusters = grove_hdbscan_model_clusters(m);
                    cases++;
                    /* The condensed tree: clusters match the reference's by
                     * their points, with the same parent, birth and size;
                     * every point leaves the matching cluster at the same
                     * lambda. */
                    ctree c = ctree_of(m);
                    uint64_t mask[REF_MAXN];
                    size_t to_ref[REF_MAXN];
                    CHECK(c.k == t.clusters && c.rows == n + c.k - 1);
                    cluster_masks(&c, mask);
                    for (size_t i = 0; i < c.k && c.k == t.clusters; i++) {
                        to_ref[i] = SIZE_MAX;
                        for (size_t j = 0; j < t.clusters; j++)
                            if (t.at_birth[j] == mask[i]) to_ref[i] = j;
                        CHECK_MSG(to_ref[i] != SIZE_MAX, "seed %llu: cluster %zu has no match",
                                  (unsigned long long)seed, i);
                        /* Numbered as the peers number it. */
                        CHECK_MSG(to_ref[i] == SIZE_MAX || t.number[to_ref[i]] == i,
                                  "seed %llu k %zu mcs %zu: cluster %zu is the peers' %zu", (unsigned long long)seed,
                                  k, mcs, i, to_ref[i] == SIZE_MAX ? 0 : t.number[to_ref[i]]);
                    }
                    for (size_t r = 0; r < c.rows && c.k == t.clusters; r++) {
                        size_t p_ref = to_ref[c.parent[r] - (int64_t)n];
                        if (c.child[r] < (int64_t)n) {
                            CHECK(t.point_cluster[c.child[r]] == p_ref && t.point_lambda[c.child[r]] == c.lambda[r]);
                        } else {
                            size_t ch = to_ref[c.child[r] - (int64_t)n];
                            CHECK(ch != SIZE_MAX && t.parent[ch] == p_ref && t.birth[ch] == c.lambda[r] &&
                                  t.size[ch] == (size_t)c.size[r]);
                        }
                    }
                    CHECK_MSG(ref_same_partition(got, want, n), "seed %llu k %zu mcs %zu sel %d: partition",
                              (unsigned long long)seed, k, mcs, sel);
                    size_t same_labels = 0;
                    for (size_t i = 0; i < n; i++) same_labels += got[i] == want[i];
                    CHECK_MSG(same_labels == n, "seed %llu k %zu mcs %zu sel %d: %zu of %zu labels are the peers'",
                              (unsigned long long)seed, k, mcs, sel, same_labels, n);
                    for (size_t i = 0; i < n; i++) CHECK(got_p[i] == want_p[i] && got_s[i] == want_s[i]);
                    /* The MST: Prim's weights. */
                    int64_t edges[2 * REF_MAXN];
                    double weights[REF_MAXN], prim[REF_MAXN], linkage[4 * REF_MAXN];
                    REQUIRE_OK(grove_hdbscan_model_mst(m, edges, weights));
                    prim_weights(w, n, prim);
                    for (size_t e = 0; e + 1 < n; e++) CHECK(weights[e] == prim[e]);
                    /* Single linkage: merges in MST order, each node used once. */
                    REQUIRE_OK(grove_hdbscan_model_single_linkage(m, linkage));
                    size_t used[2 * REF_MAXN] = {0}, sizes[2 * REF_MAXN];
                    for (size_t i = 0; i < n; i++) sizes[i] = 1;
                    for (size_t e = 0; e + 1 < n; e++) {
                        size_t a = (size_t)linkage[4 * e], b = (size_t)linkage[4 * e + 1];
                        CHECK(a < n + e && b < n + e && !used[a]++ && !used[b]++);
                        sizes[n + e] = sizes[a] + sizes[b];
                        CHECK(linkage[4 * e + 2] == weights[e] && linkage[4 * e + 3] == (double)sizes[n + e]);
                    }
                    /* cluster_persistence_ and exemplars, per label. */
                    double persistence[REF_MAXN], max_lambda = 0;
                    int64_t offsets[REF_MAXN + 1], rows[REF_MAXN], sel_ids[REF_MAXN], pred_ids[REF_MAXN];
                    REQUIRE_OK(grove_hdbscan_model_persistence(m, persistence));
                    REQUIRE_OK(grove_hdbscan_model_exemplars(m, offsets, rows));
                    REQUIRE_OK(grove_hdbscan_model_selected_clusters(m, sel_ids, pred_ids));
                    for (size_t r = 0; r < c.rows; r++) max_lambda = fmax(max_lambda, c.lambda[r]);
                    for (size_t l = 0; l < clusters; l++) {
                        size_t rc = to_ref[sel_ids[l] - (int64_t)n], members = 0;
                        CHECK(ref_sel[rc]);
                        for (size_t i = 0; i < n; i++) members += got[i] == (int64_t)l;
                        double want_pers = isinf(max_lambda) ? 1 : t.stability[rc] / ((double)members * max_lambda);
                        CHECK(fabs(persistence[l] - want_pers) <= 1e-12 * fabs(want_pers));
                        /* Exemplars: the points leaving each leaf below the
                         * prediction cluster at the leaf's largest lambda. */
                        size_t pc = to_ref[pred_ids[l] - (int64_t)n];
                        uint64_t want_ex = 0, got_ex = 0;
                        for (size_t leaf = 0; leaf < t.clusters; leaf++) {
                            int is_leaf = 1, below = 0;
                            for (size_t ch = 0; ch < t.clusters; ch++) is_leaf &= ch == 0 || t.parent[ch] != leaf;
                            for (size_t a = leaf; !below; a = t.parent[a]) {
                                below = a == pc;
                                if (a == 0) break;
                            }
                            for (size_t i = 0; is_leaf && below && i < n; i++)
                                if (t.point_cluster[i] == leaf && t.point_lambda[i] == t.death[leaf])
                                    want_ex |= 1ull << i;
                        }
                        for (int64_t e = offsets[l]; e < offsets[l + 1]; e++) got_ex |= 1ull << rows[e];
                        CHECK(got_ex == want_ex &&
                              offsets[l + 1] - offsets[l] == (int64_t)__builtin_popcountll(want_ex));
                    }
                    double v;
                    REQUIRE_OK(grove_hdbscan_model_relative_validity(m, &v));
                    CHECK(fabs(v - validity_of(got, n, edges, weights, clusters)) <= 1e-12);
                    for (int cut_i = 0; cut_i < 4; cut_i++) {
                        double cut = prim[(n - 2) * (size_t)cut_i / 4] * (1 + 1e-9);
                        int64_t a[REF_MAXN], b[REF_MAXN];
                        REQUIRE_OK(grove_hdbscan_model_dbscan(m, cut, mcs, a));
                        threshold_components(w, n, cut, mcs, b);
                        CHECK_MSG(ref_same_partition(a, b, n), "seed %llu: dbscan at %g", (unsigned long long)seed,
                                  cut);
                    }
                    ctree_free(&c);
                    grove_hdbscan_model_free(m);
                    free(w);
                }
        free(x);
    }
    CHECK(cases == 96);
}

/* Excess of mass with the library's size and distance limits, done
 * recursively on a condensed tree: a cluster is kept when it may be (at
 * most max_size points at birth, born at a distance of at most eps_max,
 * not the root) and its stability is at least its children's best. */
typedef struct eom_ctx {
    const ctree *t;
    double stability[512], birth[512];
    size_t size[512], parent[512];
    uint8_t keep[512];
    size_t max_size;
    double eps_max;
} eom_ctx;

static double eom_value(eom_ctx *e, size_t c)
{
    double kids = 0;
    for (size_t ch = 1; ch < e->t->k; ch++)
        if (e->parent[ch] == c) kids += eom_value(e, ch);
    int may = c != 0 && e->size[c] <= e->max_size && 1.0 / e->birth[c] <= e->eps_max;
    e->keep[c] = may && e->stability[c] >= kids;
    return e->keep[c] ? e->stability[c] : kids;
}

static size_t naive_eom(const ctree *t, size_t max_size, double eps_max, int64_t *ids)
{
    eom_ctx *e = calloc(1, sizeof *e);
    e->t = t;
    e->max_size = max_size;
    e->eps_max = eps_max;
    for (size_t r = 0; r < t->rows; r++)
        if (t->child[r] >= (int64_t)t->n) {
            size_t c = (size_t)t->child[r] - t->n;
            e->parent[c] = (size_t)t->parent[r] - t->n;
            e->birth[c] = t->lambda[r];
            e->size[c] = (size_t)t->size[r];
        }
    for (size_t r = 0; r < t->rows; r++) {
        size_t p = (size_t)t->parent[r] - t->n;
        e->stability[p] += (t->lambda[r] - e->birth[p]) * (double)t->size[r];
    }
    eom_value(e, 0);
    size_t count = 0;
    for (size_t c = 1; c < t->k; c++) {
        int covered = 0;
        for (size_t a = e->parent[c]; a != 0 && !covered; a = e->parent[a]) covered = e->keep[a];
        if (e->keep[c] && !covered) ids[count++] = (int64_t)(t->n + c);
    }
    free(e);
    return count;
}

TEST(hdbscan_model_max_cluster_size_and_epsilon_max)
{
    const size_t n = 400, d = 2;
    double *x = blob_points(n, d, 77);
    grove_hdbscan_params p = params_of(6, 3, GROVE_HDBSCAN_EOM);
    grove_hdbscan_model *plain = NULL;
    REQUIRE_OK(grove_hdbscan_model_create(grove_points_f64(x, n, d), &p, NULL, &plain));
    ctree t = ctree_of(plain);
    REQUIRE(t.k < 512);
    size_t changed = 0;
    const size_t sizes[] = {0, 20, 45, 90, 1000};
    const double eps[] = {INFINITY, 0.9, 0.5, 0.3};
    for (size_t a = 0; a < 5; a++)
        for (size_t b = 0; b < 4; b++) {
            grove_hdbscan_params q = p;
            q.max_cluster_size = sizes[a];
            q.epsilon_max = eps[b];
            grove_hdbscan_model *m = NULL;
            REQUIRE_OK(grove_hdbscan_model_create(grove_points_f64(x, n, d), &q, NULL, &m));
            int64_t want[512], got[512];
            size_t count = naive_eom(&t, sizes[a] ? sizes[a] : SIZE_MAX, eps[b], want);
            CHECK_MSG(grove_hdbscan_model_clusters(m) == count, "max %zu eps %g: %zu clusters, want %zu", sizes[a],
                      eps[b], grove_hdbscan_model_clusters(m), count);
            REQUIRE_OK(grove_hdbscan_model_selected_clusters(m, got, NULL));
            for (size_t c = 0; c < count && c == grove_hdbscan_model_clusters(m); c++) CHECK(got[c] == want[c]);
            changed += count != grove_hdbscan_model_clusters(plain);
            grove_hdbscan_model_free(m);
        }
    CHECK(changed >= 8);
    ctree_free(&t);
    grove_hdbscan_model_free(plain);
    free(x);
}

TEST(hdbscan_model_alpha_divides_distances)
{
    const size_t n = 60, d = 2, k = 3;
    double *x = blob_points(n, d, 5), core2[REF_MAXN], w[REF_MAXN * REF_MAXN], prim[REF_MAXN];
    ref_core_distances(x, n, d, k, core2);
    for (int i = 0; i < 3; i++) {
        double alpha = (double[]){0.5, 1.7, 3.0}[i];
        for (size_t a = 0; a < n; a++)
            for (size_t b = 0; b < n; b++) {
                double s = 0;
                for (size_t j = 0; j < d; j++) s += (x[a * d + j] - x[b * d + j]) * (x[a * d + j] - x[b * d + j]);
                w[a * n + b] = fmax(fmax(sqrt(core2[a]), sqrt(core2[b])), sqrt(s) / alpha);
            }
        prim_weights(w, n, prim);
        grove_hdbscan_params p = params_of(4, k, GROVE_HDBSCAN_EOM);
        p.alpha = alpha;
        grove_hdbscan_model *m = NULL;
        REQUIRE_OK(grove_hdbscan_model_create(grove_points_f64(x, n, d), &p, NULL, &m));
        int64_t edges[2 * REF_MAXN];
        double weights[REF_MAXN];
        REQUIRE_OK(grove_hdbscan_model_mst(m, edges, weights));
        for (size_t e = 0; e + 1 < n; e++) {
            CHECK_MSG(fabs(weights[e] - prim[e]) <= 4 * DBL_EPSILON * prim[e], "alpha %g edge %zu: %.17g, want %.17g",
                      alpha, e, weights[e], prim[e]);
            CHECK(e == 0 || weights[e] >= weights[e - 1]);
        }
        grove_hdbscan_model_free(m);
    }
    free(x);
}

TEST(hdbscan_model_match_reference_implementation)
{
    const size_t n = 300, d = 2;
    double *x = blob_points(n, d, 31);
    grove_hdbscan_params a = params_of(10, 6, GROVE_HDBSCAN_EOM), b = params_of(11, 5, GROVE_HDBSCAN_EOM);
    a.match_reference_implementation = 1;
    grove_hdbscan_model *ma = NULL, *mb = NULL;
    REQUIRE_OK(grove_hdbscan_model_create(grove_points_f64(x, n, d), &a, NULL, &ma));
    REQUIRE_OK(grove_hdbscan_model_create(grove_points_f64(x, n, d), &b, NULL, &mb));
    ctree ta = ctree_of(ma), tb = ctree_of(mb);
    REQUIRE(ta.rows == tb.rows);
    CHECK(memcmp(ta.parent, tb.parent, ta.rows * sizeof *ta.parent) == 0 &&
          memcmp(ta.child, tb.child, ta.rows * sizeof *ta.child) == 0 &&
          memcmp(ta.lambda, tb.lambda, ta.rows * sizeof *ta.lambda) == 0);
    size_t k = grove_hdbscan_model_clusters(mb), dropped = 0;
    REQUIRE(k == grove_hdbscan_model_clusters(ma) && k > 0);
    int64_t *la = malloc(n * sizeof *la), *lb = malloc(n * sizeof *lb), *ids = malloc(k * sizeof *ids);
    double *pa = malloc(n * sizeof *pa), *pb = malloc(n * sizeof *pb), *birth = malloc(k * sizeof *birth);
    REQUIRE_OK(grove_hdbscan_model_labels(ma, la, pa, NULL));
    REQUIRE_OK(grove_hdbscan_model_labels(mb, lb, pb, NULL));
    REQUIRE_OK(grove_hdbscan_model_selected_clusters(mb, ids, NULL));
    for (size_t r = 0; r < tb.rows; r++)
        for (size_t c = 0; c < k; c++)
            if (tb.child[r] == ids[c]) birth[c] = tb.lambda[r];
    /* A point is labelled only when it leaves above its cluster's birth. */
    for (size_t r = 0; r < tb.rows; r++) {
        int64_t i = tb.child[r];
        if (i >= (int64_t)n) continue;
        int64_t want = lb[i] >= 0 && tb.lambda[r] > birth[lb[i]] ? lb[i] : -1;
        CHECK(la[i] == want && pa[i] == (want >= 0 ? pb[i] : 0));
        dropped += want != lb[i];
    }
    CHECK(dropped > 0);
    ctree_free(&ta);
    ctree_free(&tb);
    grove_hdbscan_model_free(ma);
    grove_hdbscan_model_free(mb);
    free(x);
    free(la);
    free(lb);
    free(ids);
    free(pa);
    free(pb);
    free(birth);
}

TEST(hdbscan_model_persistence_limits)
{
    const size_t n = 300, d = 2;
    double *x = blob_points(n, d, 12);
    grove_hdbscan_params p = params_of(5, 3, GROVE_HDBSCAN_EOM), tiny = p, huge = p;
    tiny.persistence = 1e-300; /* 0 in float: no split is undone */
    huge.persistence = 1e30;   /* every split is undone */
    grove_hdbscan_model *mp = NULL, *mt = NULL, *mh = NULL;
    REQUIRE_OK(grove_hdbscan_model_create(grove_points_f64(x, n, d), &p, NULL, &mp));
    REQUIRE_OK(grove_hdbscan_model_create(grove_points_f64(x, n, d), &tiny, NULL, &mt));
    REQUIRE_OK(grove_hdbscan_model_create(grove_points_f64(x, n, d), &huge, NULL, &mh));
    ctree tp = ctree_of(mp), tt = ctree_of(mt), th = ctree_of(mh);
    REQUIRE(tp.rows == tt.rows && tp.k > 2);
    for (size_t r = 0; r < tp.rows; r++)
        CHECK(tt.parent[r] == tp.parent[r] && tt.child[r] == tp.child[r] && tt.size[r] == tp.size[r] &&
              tt.lambda[r] == (double)(float)tp.lambda[r]);
    /* All undone: the root alone, every point leaving it, no cluster. */
    CHECK(th.k == 1 && th.rows == n && grove_hdbscan_model_clusters(mh) == 0);
    for (size_t r = 0; r < th.rows; r++) CHECK(th.parent[r] == (int64_t)n && th.child[r] < (int64_t)n);
    ctree_free(&tp);
    ctree_free(&tt);
    ctree_free(&th);
    grove_hdbscan_model_free(mp);
    grove_hdbscan_model_free(mt);
    grove_hdbscan_model_free(mh);
    free(x);
}

TEST(hdbscan_model_bad_inputs_and_small_models)
{
    double x[8] = {0, 0, 1, 0, 0, 1, 5, 5};
    grove_hdbscan_params p = params_of(2, 2, GROVE_HDBSCAN_EOM);
    grove_hdbscan_model *m = (grove_hdbscan_model *)&p;
    CHECK_FAILS(grove_hdbscan_model_create(grove_points_f64(x, 4, 2), &p, NULL, NULL), GROVE_INVALID_ARGUMENT,
                "out is NULL");
    grove_hdbscan_params bad = p;
    bad.epsilon = 2;
    bad.epsilon_max = 1;
    CHECK_FAILS(grove_hdbscan_model_create(grove_points_f64(x, 4, 2), &bad, NULL, &m), GROVE_INVALID_ARGUMENT,
                "epsilon_max must be >= epsilon");
    CHECK(m == NULL);
    bad = p;
    bad.alpha = 0;
    CHECK_FAILS(grove_hdbscan_model_create(grove_points_f64(x, 4, 2), &bad, NULL, &m), GROVE_INVALID_ARGUMENT,
                "alpha must be finite and > 0");
    bad = p;
    bad.persistence = -1;
    CHECK_FAILS(grove_hdbscan_model_create(grove_points_f64(x, 4, 2), &bad, NULL, &m), GROVE_INVALID_ARGUMENT,
                "persistence must be");
    bad = p;
    bad.ties = (grove_hdbscan_ties)7;
    CHECK_FAILS(grove_hdbscan_model_create(grove_points_f64(x, 4, 2), &bad, NULL, &m), GROVE_INVALID_ARGUMENT,
                "unknown ties mode 7");
    /* Prediction needs prediction data, points, and the model's d. */
    REQUIRE_OK(grove_hdbscan_model_create(grove_points_f64(x, 4, 2), &p, NULL, &m));
    int64_t label;
    CHECK_FAILS(grove_hdbscan_approximate_predict(m, grove_points_f64(x, 1, 2), &label, NULL, NULL),
                GROVE_INVALID_ARGUMENT, "no prediction data");
    grove_hdbscan_model_free(m);
    p.prediction_data = 1;
    REQUIRE_OK(grove_hdbscan_model_create(grove_points_f64(x, 4, 2), &p, NULL, &m));
    CHECK_FAILS(grove_hdbscan_approximate_predict(m, grove_points_f64(x, 2, 4), &label, NULL, NULL),
                GROVE_INVALID_ARGUMENT, "the queries have 4 dimensions, the model 2");
    double q[2] = {NAN, 0};
    CHECK_FAILS(grove_hdbscan_approximate_predict(m, grove_points_f64(q, 1, 2), &label, NULL, NULL),
                GROVE_INVALID_ARGUMENT, "row 0, column 0 is NaN");
    CHECK_FAILS(grove_hdbscan_model_labels(NULL, NULL, NULL, NULL), GROVE_INVALID_ARGUMENT, "model is NULL");
    grove_hdbscan_model_free(m);
    /* No split at all: predictions are noise (scores 1), no membership
     * column is written. */
    p.min_cluster_size = 3;
    REQUIRE_OK(grove_hdbscan_model_create(grove_points_f64(x, 4, 2), &p, NULL, &m));
    CHECK(grove_hdbscan_model_clusters(m) == 0 && grove_hdbscan_model_condensed_rows(m) == 4);
    double score = 0, untouched = 42;
    CHECK_OK(grove_hdbscan_approximate_predict(m, grove_points_f64(x, 1, 2), &label, NULL, NULL));
    CHECK_OK(grove_hdbscan_approximate_predict_scores(m, grove_points_f64(x, 1, 2), &score, NULL));
    CHECK_OK(grove_hdbscan_membership_vector(m, grove_points_f64(x, 1, 2), &untouched, NULL));
    CHECK_OK(grove_hdbscan_all_points_membership_vectors(m, &untouched, NULL));
    CHECK(label == -1 && score == 1 && untouched == 42);
    grove_hdbscan_model_free(m);
    p.min_cluster_size = 2;
    /* 2 (K - 1) neighbours must exist. */
    p.min_samples = 3;
    REQUIRE_OK(grove_hdbscan_model_create(grove_points_f64(x, 3, 2), &p, NULL, &m));
    CHECK_FAILS(grove_hdbscan_approximate_predict(m, grove_points_f64(x, 1, 2), &label, NULL, NULL),
                GROVE_INVALID_ARGUMENT, "2 (K - 1) = 4 nearest training points, but the model has n = 3");
    grove_hdbscan_model_free(m);
    /* A model from an MST has no points. */
    int64_t e[6] = {0, 1, 1, 2, 2, 3};
    double w[3] = {1, 1, 7};
    REQUIRE_OK(grove_hdbscan_model_create_from_mst(4, e, w, &p, NULL, &m));
    CHECK(grove_hdbscan_model_n(m) == 4 && grove_hdbscan_model_d(m) == 0);
    CHECK_FAILS(grove_hdbscan_approximate_predict(m, grove_points_f64(x, 1, 2), &label, NULL, NULL),
                GROVE_INVALID_ARGUMENT, "no prediction data");
    grove_hdbscan_model_free(m);
    /* n = 0 and 1. */
    p.min_samples = 1;
    for (size_t n = 0; n < 2; n++) {
        REQUIRE_OK(grove_hdbscan_model_create(grove_points_f64(x, n, 2), &p, NULL, &m));
        int64_t l[1] = {7}, ex_off[1] = {9};
        double pr[1] = {7}, v = 7;
        CHECK(grove_hdbscan_model_clusters(m) == 0 && grove_hdbscan_model_condensed_rows(m) == 0 &&
              grove_hdbscan_model_exemplar_count(m) == 0);
        CHECK_OK(grove_hdbscan_model_labels(m, l, pr, NULL));
        CHECK_OK(grove_hdbscan_model_exemplars(m, ex_off, NULL));
        CHECK_OK(grove_hdbscan_model_relative_validity(m, &v));
        CHECK(ex_off[0] == 0 && v == 0 && (n == 0 || (l[0] == -1 && pr[0] == 0)));
        CHECK_OK(grove_hdbscan_model_dbscan(m, 1.0, 1, l));
        CHECK(n == 0 || l[0] == 0);
        grove_hdbscan_model_free(m);
    }
    grove_hdbscan_model_free(NULL);
}

/* Everything a model gives for points times 2^k, where squared distances
 * would overflow or underflow unscaled: labels, probabilities, scores,
 * persistence, validity and approximate predictions the same; distances
 * times 2^k, lambdas times 2^-k; parameters in distance or lambda units
 * scaled alike. */
TEST(hdbscan_model_across_the_range)
{
    const size_t n = 300, d = 2, nq = 40;
    double *x = blob_points(n, d, 41), *y = malloc(n * d * sizeof *y), q[2 * 40], qy[2 * 40];
    for (size_t i = 0; i < nq * d; i++) q[i] = x[(i * 7) % (n * d)] + 0.1 * (double)(i % 5);
    for (int ki = 0; ki < 3; ki++) {
        int k = (int[]){1000, -1000, 600}[ki];
        for (size_t i = 0; i < n * d; i++) y[i] = ldexp(x[i], k);
        for (size_t i = 0; i < nq * d; i++) qy[i] = ldexp(q[i], k);
        grove_hdbscan_params p = params_of(8, 4, GROVE_HDBSCAN_EOM), py;
        p.epsilon = 0.3;
        p.persistence = 0.2;
        p.prediction_data = 1;
        py = p;
        py.epsilon = ldexp(p.epsilon, k);
        py.persistence = ldexp(p.persistence, -k);
        grove_hdbscan_model *mx = NULL, *my = NULL;
        REQUIRE_OK(grove_hdbscan_model_create(grove_points_f64(x, n, d), &p, NULL, &mx));
        REQUIRE_OK(grove_hdbscan_model_create(grove_points_f64(y, n, d), &py, NULL, &my));
        size_t k_x = grove_hdbscan_model_clusters(mx);
        REQUIRE(k_x > 1 && k_x == grove_hdbscan_model_clusters(my));
        int64_t lx[300], ly[300], px_[600], py_[600];
        double a[300], b[300], sa[300], sb[300], wx[300], wy[300], vx, vy;
        REQUIRE_OK(grove_hdbscan_model_labels(mx, lx, a, sa));
        REQUIRE_OK(grove_hdbscan_model_labels(my, ly, b, sb));
        CHECK(memcmp(lx, ly, sizeof lx) == 0 && memcmp(a, b, sizeof a) == 0 && memcmp(sa, sb, sizeof sa) == 0);
        REQUIRE_OK(grove_hdbscan_model_persistence(mx, a));
        REQUIRE_OK(grove_hdbscan_model_persistence(my, b));
        CHECK(memcmp(a, b, k_x * sizeof *a) == 0);
        REQUIRE_OK(grove_hdbscan_model_relative_validity(mx, &vx));
        REQUIRE_OK(grove_hdbscan_model_relative_validity(my, &vy));
        CHECK(vx == vy);
        REQUIRE_OK(grove_hdbscan_model_mst(mx, px_, wx));
        REQUIRE_OK(grove_hdbscan_model_mst(my, py_, wy));
        for (size_t e = 0; e + 1 < n; e++) CHECK(wy[e] == ldexp(wx[e], k));
        CHECK(memcmp(px_, py_, 2 * (n - 1) * sizeof *px_) == 0);
        ctree tx = ctree_of(mx), ty = ctree_of(my);
        REQUIRE(tx.rows == ty.rows);
        for (size_t r = 0; r < tx.rows; r++) CHECK(ty.lambda[r] == ldexp(tx.lambda[r], -k));
        REQUIRE_OK(grove_hdbscan_model_dbscan(mx, wx[n / 2], 5, px_));
        REQUIRE_OK(grove_hdbscan_model_dbscan(my, wy[n / 2], 5, py_));
        CHECK(memcmp(px_, py_, n * sizeof *px_) == 0);
        int64_t qlx[40], qly[40];
        double qpx[40], qpy[40], *mvx = malloc(nq * k_x * sizeof *mvx), *mvy = malloc(nq * k_x * sizeof *mvy);
        REQUIRE_OK(grove_hdbscan_approximate_predict(mx, grove_points_f64(q, nq, d), qlx, qpx, NULL));
        REQUIRE_OK(grove_hdbscan_approximate_predict(my, grove_points_f64(qy, nq, d), qly, qpy, NULL));
        CHECK(memcmp(qlx, qly, sizeof qlx) == 0 && memcmp(qpx, qpy, sizeof qpx) == 0);
        REQUIRE_OK(grove_hdbscan_membership_vector(mx, grove_points_f64(q, nq, d), mvx, NULL));
        REQUIRE_OK(grove_hdbscan_membership_vector(my, grove_points_f64(qy, nq, d), mvy, NULL));
        /* Not scale-invariant in the library (its 1e-8 guards are in the
         * data's units): finite rows of probabilities, summing to at most 1. */
        for (size_t i = 0; i < nq; i++) {
            double sum = 0;
            for (size_t c = 0; c < k_x; c++) {
                CHECK(isfinite(mvy[i * k_x + c]) && mvy[i * k_x + c] >= 0);
                sum += mvy[i * k_x + c];
            }
            CHECK(sum <= 1 + 1e-12);
        }
        free(mvx);
        free(mvy);
        ctree_free(&tx);
        ctree_free(&ty);
        grove_hdbscan_model_free(mx);
        grove_hdbscan_model_free(my);
    }
    /* Distances no double holds are refused where they are asked for. */
    double big[] = {-1.5e308, 1.5e308, 1.4e308};
    grove_hdbscan_params p = params_of(2, 1, GROVE_HDBSCAN_EOM);
    grove_hdbscan_model *m = NULL;
    REQUIRE_OK(grove_hdbscan_model_create(grove_points_f64(big, 3, 1), &p, NULL, &m));
    int64_t e[4];
    double w[2], tree[8];
    CHECK_FAILS(grove_hdbscan_model_mst(m, e, w), GROVE_INVALID_ARGUMENT, "exceeds the largest double");
    CHECK_FAILS(grove_hdbscan_model_single_linkage(m, tree), GROVE_INVALID_ARGUMENT, "exceeds the largest double");
    grove_hdbscan_model_free(m);
    free(x);
    free(y);
}
