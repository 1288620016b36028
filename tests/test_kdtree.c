/* The kd-tree topology against its definition, recomputed per node by
 * brute force: every internal node splits its points at the median of its
 * widest axis (ties to the earlier axis), the lower half by (coordinate,
 * row) going left; the left child is the next node and a subtree's size
 * fixes its node count. Sizes reach the selection's sampled pivots (ranges
 * of 4096 and more, samples growing with the range). */
#include "test.h"

#include "index/index.h"

#include <float.h>

/* (coordinate, row) order of rows r and s on axis a. */
static int row_less(const double *x, size_t d, size_t a, uint32_t r, uint32_t s)
{
    double u = x[(size_t)r * d + a], v = x[(size_t)s * d + a];
    return u < v || (u == v && r < s);
}

static size_t expected_nodes(size_t m, size_t leaf)
{
    return m <= leaf ? 1 : 1 + expected_nodes(m / 2, leaf) + expected_nodes(m - m / 2, leaf);
}

/* Checks node k and its subtree; returns the node after the subtree. */
static size_t check_node(const grove__tree *t, const double *x, size_t d, size_t leaf, size_t k, size_t begin,
                         size_t end, uint32_t depth, int *bad)
{
    const grove__node *nd = &t->node[k];
    size_t m = end - begin;
    if (nd->begin != begin || nd->end != end || nd->depth != depth) {
        *bad = 1;
        return k + expected_nodes(m, leaf);
    }
    if (m <= leaf) {
        if (nd->right != 0) *bad = 1;
        return k + 1;
    }
    size_t widest = 0;
    double spread = -1;
    for (size_t a = 0; a < d; a++) {
        double lo = DBL_MAX, hi = -DBL_MAX;
        for (size_t p = begin; p < end; p++) {
            double v = x[(size_t)t->perm[p] * d + a];
            lo = v < lo ? v : lo;
            hi = v > hi ? v : hi;
        }
        if (hi - lo > spread) {
            spread = hi - lo;
            widest = a;
        }
    }
    size_t half = begin + m / 2;
    /* The largest left point is below the smallest right one. */
    uint32_t left_max = t->perm[begin], right_min = t->perm[half];
    for (size_t p = begin; p < half; p++)
        if (row_less(x, d, widest, left_max, t->perm[p])) left_max = t->perm[p];
    for (size_t p = half; p < end; p++)
        if (row_less(x, d, widest, t->perm[p], right_min)) right_min = t->perm[p];
    if (!row_less(x, d, widest, left_max, right_min)) *bad = 1;
    size_t right = check_node(t, x, d, leaf, k + 1, begin, half, depth + 1, bad);
    if (nd->right != right) *bad = 1;
    return check_node(t, x, d, leaf, right, half, end, depth + 1, bad);
}

TEST(kdtree_topology_splits_at_the_median_of_the_widest_axis)
{
    const size_t sizes[] = {5000, 70000, 300000}, d = 3;
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
        for (int kind = 0; kind < TEST_KINDS; kind++)
            for (int threads = 1; threads <= 2; threads++) {
                size_t n = sizes[si], leaf = 32;
                double *x = test_points((test_kind)kind, n, d, 11 + si);
                REQUIRE(x);
                if (kind == TEST_LATTICE && si == 1) /* sorted input: the pivots' worst layout */
                    for (size_t i = 0; i < n; i++) x[i * d] = (double)i;
                grove__tree t = {0};
                t.perm = malloc(n * sizeof *t.perm);
                REQUIRE(t.perm);
                REQUIRE_OK(grove__kdtree_topology(grove_points_f64(x, n, d), 1, leaf, NULL, 0, threads, &t));
                int bad = t.nodes != expected_nodes(n, leaf);
                uint8_t *seen = calloc(n, 1);
                for (size_t p = 0; seen && p < n; p++) {
                    if (t.perm[p] >= n || seen[t.perm[p]]) bad = 1;
                    else seen[t.perm[p]] = 1;
                }
                if (!bad) check_node(&t, x, d, leaf, 0, 0, n, 0, &bad);
                CHECK_MSG(!bad && seen, "%s n = %zu, %d thread(s): the tree breaks the median split",
                          test_kind_name[kind], n, threads);
                free(seen);
                free(t.perm);
                free(t.node);
                free(x);
            }
}
