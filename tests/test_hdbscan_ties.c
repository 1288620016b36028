/* HDBSCAN* with simultaneous ties against the paper's definition, built
 * without an MST: the mutual-reachability graph of all pairs, its
 * connected components below every distinct weight, the condensed tree
 * from those (a component splits at one lambda into all its parts, a part
 * of at least min_cluster_size points being a cluster), stabilities, and
 * excess-of-mass or leaf selection. Data on a small integer grid, with
 * duplicates, so equal weights are everywhere; every squared distance is
 * an integer, exact in double. */
#include "test.h"

#include <math.h>

enum { MAXN = 64 };

typedef struct ref_tree {
    size_t n, clusters;
    uint64_t members[MAXN];  /* per cluster while alive */
    size_t parent[MAXN];     /* cluster -> parent cluster (root: itself) */
    double birth[MAXN];
    double stability[MAXN];
    double death[MAXN];      /* largest lambda of its rows */
    size_t point_cluster[MAXN];
    double point_lambda[MAXN];
    int near_tie;            /* an excess-of-mass comparison within rounding */
} ref_tree;

static double mr_weight(const double *x, size_t d, const double *core2, size_t a, size_t b)
{
    double s = 0;
    for (size_t j = 0; j < d; j++) {
        double t = x[a * d + j] - x[b * d + j];
        s += t * t;
    }
    s = s > core2[a] ? s : core2[a];
    s = s > core2[b] ? s : core2[b];
    return sqrt(s);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Core distances squared: the K-th smallest squared distance, itself
 * included. */
static void core_distances(const double *x, size_t n, size_t d, size_t k, double *core2)
{
    double all[MAXN];
    for (size_t i = 0; i < n; i++) {
        for (size_t q = 0; q < n; q++) {
            double s = 0;
            for (size_t j = 0; j < d; j++) {
                double t = x[i * d + j] - x[q * d + j];
                s += t * t;
            }
            all[q] = s;
        }
        qsort(all, n, sizeof *all, cmp_double);
        core2[i] = all[k - 1];
    }
}

/* Components of `set` in the graph of weights < w, as masks. */
static size_t components(const double *w, size_t n, uint64_t set, double level, uint64_t *out)
{
    size_t count = 0;
    while (set) {
        uint64_t comp = set & (~set + 1), frontier = comp;
        while (frontier) {
            size_t a = (size_t)__builtin_ctzll(frontier);
            frontier &= frontier - 1;
            for (size_t b = 0; b < n; b++)
                if ((set >> b & 1) && !(comp >> b & 1) && w[a * n + b] < level) comp |= 1ull << b, frontier |= 1ull << b;
        }
        out[count++] = comp;
        set &= ~comp;
    }
    return count;
}

static void leave(ref_tree *t, uint64_t points, size_t cluster, double lambda)
{
    for (size_t p = 0; p < t->n; p++)
        if (points >> p & 1) {
            t->point_cluster[p] = cluster;
            t->point_lambda[p] = lambda;
            t->stability[cluster] += lambda - t->birth[cluster];
            if (lambda > t->death[cluster]) t->death[cluster] = lambda;
        }
}

/* The condensed tree by thresholding at every distinct weight, top down. */
static void reference_tree(const double *w, size_t n, size_t mcs, ref_tree *t)
{
    memset(t, 0, sizeof *t);
    t->n = n;
    double *levels = malloc(n * n * sizeof *levels);
    memcpy(levels, w, n * n * sizeof *levels);
    qsort(levels, n * n, sizeof *levels, cmp_double);
    uint64_t alive = 1;
    t->members[0] = n == 64 ? ~0ull : (1ull << n) - 1;
    t->clusters = 1;
    for (size_t li = n * n; li-- > 0;) {
        double level = levels[li];
        if (li + 1 < n * n && levels[li + 1] == level) continue;
        double lambda = level > 0 ? 1.0 / level : INFINITY;
        uint64_t now = alive;
        while (now) {
            size_t c = (size_t)__builtin_ctzll(now);
            now &= now - 1;
            uint64_t parts[MAXN];
            size_t count = components(w, n, t->members[c], level, parts), big = 0;
            if (count == 1) continue;
            for (size_t i = 0; i < count; i++) big += (size_t)__builtin_popcountll(parts[i]) >= mcs;
            for (size_t i = 0; i < count; i++) {
                size_t size = (size_t)__builtin_popcountll(parts[i]);
                if (size < mcs) {
                    leave(t, parts[i], c, lambda);
                } else if (big >= 2) {
                    size_t child = t->clusters++;
                    t->members[child] = parts[i];
                    t->parent[child] = c;
                    t->birth[child] = lambda;
                    t->stability[c] += (lambda - t->birth[c]) * (double)size;
                    if (lambda > t->death[c]) t->death[c] = lambda;
                    alive |= 1ull << child;
                } else {
                    t->members[c] = parts[i];
                }
            }
            if (big != 1) alive &= ~(1ull << c);
        }
    }
    free(levels);
}

/* Excess of mass (root excluded) or leaves: selected[c]. */
static double select_eom(ref_tree *t, size_t c, uint8_t *selected)
{
    double below = 0;
    int has_children = 0;
    for (size_t ch = c + 1; ch < t->clusters; ch++)
        if (t->parent[ch] == c) below += select_eom(t, ch, selected), has_children = 1;
    if (c == 0) return below;
    double own = t->stability[c];
    if (has_children && fabs(below - own) <= 1e-9 * (fabs(own) + fabs(below))) t->near_tie = 1;
    if (has_children && below > own) return below;
    for (size_t ch = c + 1; ch < t->clusters; ch++) {
        /* Deselect everything below c. */
        size_t a = ch;
        while (a != 0 && a != c) a = t->parent[a];
        if (a == c) selected[ch] = 0;
    }
    selected[c] = 1;
    return own;
}

static void reference_results(ref_tree *t, grove_hdbscan_selection sel, int64_t *labels, double *prob,
                              double *score)
{
    uint8_t selected[MAXN] = {0};
    if (sel == GROVE_HDBSCAN_EOM) {
        select_eom(t, 0, selected);
    } else {
        for (size_t c = 1; c < t->clusters; c++) {
            selected[c] = 1;
            for (size_t ch = 1; ch < t->clusters; ch++)
                if (t->parent[ch] == c) selected[c] = 0;
        }
    }
    double top[MAXN];
    for (size_t c = 0; c < t->clusters; c++) top[c] = t->death[c];
    for (size_t c = t->clusters; c-- > 1;)
        if (top[c] > top[t->parent[c]]) top[t->parent[c]] = top[c];
    int64_t label_of[MAXN];
    size_t owner[MAXN];
    for (size_t c = 0, next = 0; c < t->clusters; c++) {
        label_of[c] = selected[c] ? (int64_t)next++ : -1;
        owner[c] = c;
        for (size_t a = c; a != 0 && label_of[c] < 0; a = t->parent[a])
            if (selected[t->parent[a]]) label_of[c] = label_of[t->parent[a]], owner[c] = t->parent[a];
    }
    for (size_t p = 0; p < t->n; p++) {
        size_t c = t->point_cluster[p];
        double lambda = t->point_lambda[p], death = t->death[owner[c]], high = top[c];
        labels[p] = label_of[c];
        prob[p] = labels[p] < 0 ? 0 : death == 0 || !isfinite(lambda) ? 1 : fmin(lambda, death) / death;
        score[p] = high == 0 || !isfinite(lambda) ? 0 : isfinite(high) ? (high - lambda) / high : 1;
    }
}

/* Same partition up to renaming, same noise. */
static int same_partition(const int64_t *a, const int64_t *b, size_t n)
{
    int64_t map[MAXN], back[MAXN];
    for (size_t i = 0; i < MAXN; i++) map[i] = back[i] = -1;
    for (size_t i = 0; i < n; i++) {
        if ((a[i] < 0) != (b[i] < 0)) return 0;
        if (a[i] < 0) continue;
        if (map[a[i]] < 0 && back[b[i]] < 0) map[a[i]] = b[i], back[b[i]] = a[i];
        if (map[a[i]] != b[i]) return 0;
    }
    return 1;
}

static double *grid_points(size_t n, uint64_t seed, int side, int dup_every)
{
    grove_rng rng;
    grove_rng_seed(&rng, seed);
    double *x = malloc(2 * n * sizeof *x);
    for (size_t i = 0; i < n; i++) {
        if (dup_every && i % (size_t)dup_every == 1) {
            x[2 * i] = x[2 * i - 2], x[2 * i + 1] = x[2 * i - 1];
            continue;
        }
        /* Two lumps on the grid so there is structure to find. */
        int lump = (int)(i % 3 == 0);
        x[2 * i] = (double)grove_rng_below(&rng, (uint64_t)side) + lump * (side + 2);
        x[2 * i + 1] = (double)grove_rng_below(&rng, (uint64_t)side);
    }
    return x;
}

static void fit(const double *x, size_t n, size_t mcs, size_t k, grove_hdbscan_selection sel, grove_hdbscan_ties ties,
                int64_t *labels, double *prob, double *score)
{
    grove_hdbscan_params p;
    grove_hdbscan_params_init(&p);
    p.min_cluster_size = mcs;
    p.min_samples = k;
    p.selection = sel;
    p.ties = ties;
    grove_status s = grove_hdbscan(grove_points_f64(x, n, 2), &p, labels, prob, score, NULL, NULL);
    if (s != GROVE_OK) test_fail(__FILE__, __LINE__, "grove_hdbscan: %s", grove_last_error());
}

TEST(hdbscan_simultaneous_ties_equal_the_definition)
{
    size_t compared = 0, skipped = 0, ordered_differs = 0;
    for (uint64_t seed = 1; seed <= 40; seed++) {
        size_t n = 20 + (size_t)(seed * 7 % 41);
        double *x = grid_points(n, seed, 3 + (int)(seed % 4), seed % 3 == 0 ? 4 : 0);
        for (size_t k = 1; k <= 4; k++) {
            double core2[MAXN], *w = malloc(n * n * sizeof *w);
            core_distances(x, n, 2, k, core2);
            for (size_t a = 0; a < n; a++)
                for (size_t b = 0; b < n; b++) w[a * n + b] = mr_weight(x, 2, core2, a, b);
            for (size_t mcs = 2; mcs <= 5; mcs += 3)
                for (int sel = 0; sel < 2; sel++) {
                    ref_tree t;
                    reference_tree(w, n, mcs, &t);
                    int64_t want[MAXN], got[MAXN], ordered[MAXN];
                    double want_p[MAXN], want_s[MAXN], got_p[MAXN], got_s[MAXN], op[MAXN], os[MAXN];
                    reference_results(&t, (grove_hdbscan_selection)sel, want, want_p, want_s);
                    fit(x, n, mcs, k, (grove_hdbscan_selection)sel, GROVE_HDBSCAN_TIES_SIMULTANEOUS, got, got_p,
                        got_s);
                    fit(x, n, mcs, k, (grove_hdbscan_selection)sel, GROVE_HDBSCAN_TIES_ORDERED, ordered, op, os);
                    /* GLOSH does not depend on the selection. */
                    for (size_t i = 0; i < n; i++)
                        CHECK_MSG(got_s[i] == want_s[i], "seed %llu k %zu mcs %zu: score[%zu] %.17g, want %.17g",
                                  (unsigned long long)seed, k, mcs, i, got_s[i], want_s[i]);
                    if (t.near_tie) {
                        skipped++;
                        continue;
                    }
                    compared++;
                    CHECK_MSG(same_partition(got, want, n), "seed %llu k %zu mcs %zu sel %d: partition differs",
                              (unsigned long long)seed, k, mcs, sel);
                    for (size_t i = 0; i < n; i++)
                        CHECK_MSG(got_p[i] == want_p[i], "seed %llu k %zu mcs %zu sel %d: prob[%zu] %.17g, want %.17g",
                                  (unsigned long long)seed, k, mcs, sel, i, got_p[i], want_p[i]);
                    int differs = !same_partition(ordered, want, n);
                    for (size_t i = 0; i < n; i++) differs |= op[i] != want_p[i] || os[i] != want_s[i];
                    ordered_differs += (size_t)differs;
                }
            free(w);
        }
        free(x);
    }
    CHECK_MSG(compared >= 400, "only %zu cases compared (%zu near ties skipped)", compared, skipped);
    /* The data has ties that matter: the ordered hierarchy disagrees with
     * the definition somewhere. */
    CHECK_MSG(ordered_differs > 0, "ordered ties agreed with the definition in all %zu cases", compared);
}

TEST(hdbscan_simultaneous_ties_ignore_row_order)
{
    size_t compared = 0;
    for (uint64_t seed = 1; seed <= 45; seed++) {
        size_t n = 30 + (size_t)(seed * 11 % 33);
        double *x = grid_points(n, seed + 100, 4, seed % 2 ? 3 : 0), *y = malloc(2 * n * sizeof *y);
        size_t perm[MAXN];
        grove_rng rng;
        grove_rng_seed(&rng, seed);
        for (size_t i = 0; i < n; i++) perm[i] = i;
        for (size_t i = n; i-- > 1;) {
            size_t j = (size_t)grove_rng_below(&rng, i + 1), t = perm[i];
            perm[i] = perm[j];
            perm[j] = t;
        }
        for (size_t i = 0; i < n; i++) y[2 * i] = x[2 * perm[i]], y[2 * i + 1] = x[2 * perm[i] + 1];
        for (size_t k = 1; k <= 4; k += 3) {
            double core2[MAXN], *w = malloc(n * n * sizeof *w);
            core_distances(x, n, 2, k, core2);
            for (size_t a = 0; a < n; a++)
                for (size_t b = 0; b < n; b++) w[a * n + b] = mr_weight(x, 2, core2, a, b);
            for (int sel = 0; sel < 2; sel++) {
                ref_tree t;
                reference_tree(w, n, 4, &t);
                int64_t dummy[MAXN];
                double dp[MAXN], ds[MAXN];
                reference_results(&t, (grove_hdbscan_selection)sel, dummy, dp, ds);
                if (t.near_tie) continue;
                int64_t a[MAXN], b[MAXN], back[MAXN];
                double pa[MAXN], pb[MAXN], sa[MAXN], sb[MAXN];
                fit(x, n, 4, k, (grove_hdbscan_selection)sel, GROVE_HDBSCAN_TIES_SIMULTANEOUS, a, pa, sa);
                fit(y, n, 4, k, (grove_hdbscan_selection)sel, GROVE_HDBSCAN_TIES_SIMULTANEOUS, b, pb, sb);
                for (size_t i = 0; i < n; i++) back[perm[i]] = b[i];
                CHECK_MSG(same_partition(a, back, n), "seed %llu k %zu sel %d: permuted rows cluster differently",
                          (unsigned long long)seed, k, sel);
                for (size_t i = 0; i < n; i++)
                    CHECK(pb[i] == pa[perm[i]] && sb[i] == sa[perm[i]]);
                compared++;
            }
            free(w);
        }
        free(x);
        free(y);
    }
    CHECK_MSG(compared >= 80, "only %zu cases compared", compared);
}
