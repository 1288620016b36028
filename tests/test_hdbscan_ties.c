/* HDBSCAN* with simultaneous ties against the paper's definition built
 * without an MST (hdbscan_ref.h), on data on a small integer grid with
 * duplicates, so equal weights are everywhere (every squared distance is
 * an integer, exact in double); and independence of the row order. */
#include "test.h"

#include <math.h>

#include "hdbscan_ref.h"

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
            double *w = ref_weights(x, n, 2, k);
            for (size_t mcs = 2; mcs <= 5; mcs += 3)
                for (int sel = 0; sel < 2; sel++) {
                    ref_tree t;
                    ref_tree_build(w, n, mcs, &t);
                    int64_t want[REF_MAXN], got[REF_MAXN], ordered[REF_MAXN];
                    double want_p[REF_MAXN], want_s[REF_MAXN], got_p[REF_MAXN], got_s[REF_MAXN];
                    double op[REF_MAXN], os[REF_MAXN];
                    ref_results(&t, (grove_hdbscan_selection)sel, NULL, want, want_p, want_s);
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
                    CHECK_MSG(ref_same_partition(got, want, n), "seed %llu k %zu mcs %zu sel %d: partition differs",
                              (unsigned long long)seed, k, mcs, sel);
                    for (size_t i = 0; i < n; i++)
                        CHECK_MSG(got_p[i] == want_p[i], "seed %llu k %zu mcs %zu sel %d: prob[%zu] %.17g, want %.17g",
                                  (unsigned long long)seed, k, mcs, sel, i, got_p[i], want_p[i]);
                    int differs = !ref_same_partition(ordered, want, n);
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
        size_t perm[REF_MAXN];
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
            double *w = ref_weights(x, n, 2, k);
            for (int sel = 0; sel < 2; sel++) {
                ref_tree t;
                ref_tree_build(w, n, 4, &t);
                int64_t dummy[REF_MAXN];
                double dp[REF_MAXN], ds[REF_MAXN];
                ref_results(&t, (grove_hdbscan_selection)sel, NULL, dummy, dp, ds);
                if (t.near_tie) continue;
                int64_t a[REF_MAXN], b[REF_MAXN], back[REF_MAXN];
                double pa[REF_MAXN], pb[REF_MAXN], sa[REF_MAXN], sb[REF_MAXN];
                fit(x, n, 4, k, (grove_hdbscan_selection)sel, GROVE_HDBSCAN_TIES_SIMULTANEOUS, a, pa, sa);
                fit(y, n, 4, k, (grove_hdbscan_selection)sel, GROVE_HDBSCAN_TIES_SIMULTANEOUS, b, pb, sb);
                for (size_t i = 0; i < n; i++) back[perm[i]] = b[i];
                CHECK_MSG(ref_same_partition(a, back, n), "seed %llu k %zu sel %d: permuted rows cluster differently",
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
