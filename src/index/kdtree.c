/* Balanced kd-tree topology (used for d > 3, where Morton codes would keep
 * too few bits per axis to order points well, and for the join's leaf
 * groups): each node splits its points at the median of its widest split
 * axis (ties to the earlier one in the list), the lower half (by
 * coordinate, then row) going left. Nodes are written in preorder;
 * a subtree's node count depends only on its size, so the right child's
 * index is known before the left subtree is built and both halves can be
 * built as parallel tasks. */
#include "index.h"

#include <float.h>

/* Subtrees of at least this many points are handed to a task. */
#define KD_TASK_MIN 16384
/* Up to this many split axes the builder works on a packed copy of their
 * coordinates, moved along with the permutation, so the median selections
 * and spreads read contiguous doubles instead of gathering through perm. */
#define KD_PACK_MAX 16

typedef struct kd_ctx {
    grove_points p;
    double scale;         /* the coordinates are split times scale */
    size_t stride;
    size_t leaf;          /* most points per leaf */
    const size_t *axes;   /* split candidates, or NULL for 0..d-1 */
    size_t naxes;
    uint32_t *perm;
    double *xa;           /* n x naxes packed split coordinates, or NULL */
    grove__node *node;
} kd_ctx;

/* Nodes in a subtree of m points. */
static size_t kd_count(size_t m, size_t leaf)
{
    if (m <= leaf) return 1;
    return 1 + kd_count(m / 2, leaf) + kd_count(m - m / 2, leaf);
}

/* Coordinate on split axis a of the point at position i. */
static inline double kd_at(const kd_ctx *c, size_t i, size_t a)
{
    if (c->xa) return c->xa[i * c->naxes + a];
    return grove__coord(c->p, c->stride, c->perm[i], c->axes ? c->axes[a] : a) * c->scale;
}

/* (coordinate, row) order on axis a between positions i and k. */
static inline int kd_less(const kd_ctx *c, size_t a, size_t i, size_t k)
{
    double x = kd_at(c, i, a), y = kd_at(c, k, a);
    return x < y || (x == y && c->perm[i] < c->perm[k]);
}

static inline void kd_swap(const kd_ctx *c, size_t i, size_t k)
{
    uint32_t t = c->perm[i];
    c->perm[i] = c->perm[k];
    c->perm[k] = t;
    if (!c->xa) return;
    double *x = c->xa + i * c->naxes, *y = c->xa + k * c->naxes;
    for (size_t a = 0; a < c->naxes; a++) {
        double v = x[a];
        x[a] = y[a];
        y[a] = v;
    }
}

/* On long ranges the pivot is taken from a sample spread over the range:
 * the sample element whose rank in the sample matches the rank wanted in
 * the range, so one partition lands near the wanted rank (and the next,
 * on the side that holds it, nearer still, where the sample's median
 * would only halve that side). The sample grows with the range (about
 * sqrt(range) / 4 elements, 31 to 1023), insertion-sorted in place. */
#define KD_SAMPLE_FROM 4096
#define KD_SAMPLE_MIN 31
#define KD_SAMPLE_MAX 1023

/* Sample [lo, hi) for rank k and park the pivot at mid and an element
 * above it at hi - 1 (which stops the partition's upward scan). */
static void kd_sample_pivot(const kd_ctx *c, size_t a, size_t lo, size_t hi, size_t k)
{
    size_t m = hi - lo, size = KD_SAMPLE_MIN;
    while (size < KD_SAMPLE_MAX && (size + 1) * (size + 1) * 16 < m) size = 2 * size + 1;
    size_t step = m / size;
    /* Gather the sample to the front of the range, then sort it there. */
    for (size_t s = 0; s < size; s++) kd_swap(c, lo + s, lo + s * step);
    for (size_t i = lo + 1; i < lo + size; i++)
        for (size_t j = i; j > lo && kd_less(c, a, j, j - 1); j--) kd_swap(c, j, j - 1);
    size_t pick = (k - lo) * size / m;
    pick = pick > size - 2 ? size - 2 : pick;
    kd_swap(c, lo + pick, lo + m / 2);
    kd_swap(c, lo + size - 1, hi - 1);
}

/* Rearrange positions [lo, hi) so position k holds the element of rank
 * k - lo on axis a and lower ranks come before it (quickselect, a sampled
 * pivot on long ranges, else median-of-three). */
static void kd_select(const kd_ctx *c, size_t a, size_t lo, size_t hi, size_t k)
{
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2, last = hi - 1;
        if (hi - lo >= KD_SAMPLE_FROM) {
            kd_sample_pivot(c, a, lo, hi, k);
        } else {
            /* Order lo, mid, last; the median becomes the pivot. */
            if (kd_less(c, a, mid, lo)) kd_swap(c, mid, lo);
            if (kd_less(c, a, last, lo)) kd_swap(c, last, lo);
            if (kd_less(c, a, last, mid)) kd_swap(c, last, mid);
            if (hi - lo <= 3) return;
        }
        /* Hoare partition around the pivot, parked at lo: the order is
         * strict and total (rows break ties), so the pivot's final
         * position is its exact rank, and last (above the pivot) stops
         * the upward scan. */
        kd_swap(c, mid, lo);
        size_t i = lo, j = hi;
        for (;;) {
            do i++; while (kd_less(c, a, i, lo));
            do j--; while (kd_less(c, a, lo, j));
            if (i >= j) break;
            kd_swap(c, i, j);
        }
        kd_swap(c, lo, j);
        size_t store = j;
        if (k == store) return;
        if (k < store) hi = store;
        else lo = store + 1;
    }
}

static size_t kd_widest(const kd_ctx *c, size_t begin, size_t end)
{
    size_t best = 0;
    double best_spread = -1;
    for (size_t a = 0; a < c->naxes; a++) {
        double mn = DBL_MAX, mx = -DBL_MAX;
        for (size_t i = begin; i < end; i++) {
            double v = kd_at(c, i, a);
            mn = v < mn ? v : mn;
            mx = v > mx ? v : mx;
        }
        if (mx - mn > best_spread) {
            best_spread = mx - mn;
            best = a;
        }
    }
    return best;
}

static void kd_build(const kd_ctx *c, size_t at, size_t begin, size_t end, uint32_t depth)
{
    grove__node *nd = &c->node[at];
    nd->begin = (uint32_t)begin;
    nd->end = (uint32_t)end;
    nd->right = 0;
    nd->depth = depth;
    size_t m = end - begin;
    if (m <= c->leaf) return;
    size_t half = m / 2;
    kd_select(c, kd_widest(c, begin, end), begin, end, begin + half);
    nd->right = (uint32_t)(at + 1 + kd_count(half, c->leaf));
    size_t right = nd->right;
#pragma omp task if (m >= KD_TASK_MIN) default(none) firstprivate(c, at, begin, half, depth)
    kd_build(c, at + 1, begin, begin + half, depth + 1);
    kd_build(c, right, begin + half, end, depth + 1);
#pragma omp taskwait
}

grove_status grove__kdtree_topology(grove_points points, double scale, size_t leaf, const size_t *axes, size_t naxes,
                                    int threads, grove__tree *tree)
{
    size_t n = points.n;
    size_t count = kd_count(n, leaf);
    tree->node = grove__malloc(count * sizeof *tree->node, "kd-tree nodes");
    if (!tree->node) return GROVE_OUT_OF_MEMORY;
    kd_ctx c = {points, scale, grove__points_stride(points), leaf, axes, axes ? naxes : points.d, tree->perm, NULL,
                tree->node};
    /* Without the packed copy the build is slower, not wrong. */
    if (c.naxes <= KD_PACK_MAX) {
        c.xa = grove__malloc(n * c.naxes * sizeof *c.xa, "kd-tree split coordinates");
        grove__clear_error();
    }
#pragma omp parallel for num_threads(threads) schedule(static)
    for (size_t i = 0; i < n; i++) {
        tree->perm[i] = (uint32_t)i;
        for (size_t a = 0; c.xa && a < c.naxes; a++)
            c.xa[i * c.naxes + a] = grove__coord(points, c.stride, i, axes ? axes[a] : a) * scale;
    }
#pragma omp parallel num_threads(threads)
#pragma omp single
    kd_build(&c, 0, 0, n, 0);
    grove__free(c.xa);
    tree->nodes = count;
    int depth = 0;
    for (size_t m = n; m > leaf; m -= m / 2) depth++;
    tree->depth = depth;
    return GROVE_OK;
}
