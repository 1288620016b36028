/* Linear BVH topology (d <= 3): Morton codes, a parallel radix sort, and
 * Karras's (2012) binary radix tree built in parallel, one internal node
 * per thread step. The radix tree is then written out in preorder with
 * subtrees of at most GROVE__LEAF_SIZE points collapsed into leaves. */
#include "index.h"

#include "parallel.h"

#include <float.h>

/* Length of the common prefix of sorted keys i and j (j may be outside
 * [0, n): -1). Equal keys are told apart by their positions, so duplicate
 * points still give a proper binary tree (Karras, section 4). */
static inline int prefix(const uint64_t *k, int64_t n, int64_t i, int64_t j)
{
    if (j < 0 || j >= n) return -1;
    uint64_t x = k[i] ^ k[j];
    if (x) return __builtin_clzll(x);
    return 64 + __builtin_clzll((uint64_t)(i ^ j));
}

/* Split position of internal node i: its left child covers [first, split],
 * its right child [split + 1, last]. */
static uint32_t karras_split(const uint64_t *k, int64_t n, int64_t i)
{
    int dir = prefix(k, n, i, i + 1) > prefix(k, n, i, i - 1) ? 1 : -1;
    int floor_prefix = prefix(k, n, i, i - dir);
    int64_t span = 2;
    while (prefix(k, n, i, i + span * dir) > floor_prefix) span *= 2;
    int64_t len = 0;
    for (int64_t t = span / 2; t >= 1; t /= 2)
        if (prefix(k, n, i, i + (len + t) * dir) > floor_prefix) len += t;
    int64_t j = i + len * dir;
    int node_prefix = prefix(k, n, i, j);
    int64_t s = 0, t = len;
    do {
        t = (t + 1) / 2;
        if (prefix(k, n, i, i + (s + t) * dir) > node_prefix) s += t;
    } while (t > 1);
    return (uint32_t)(i + s * dir + (dir < 0 ? -1 : 0));
}

typedef struct emit_ctx {
    const uint32_t *split;
    grove__node *node;
    size_t count;
    uint32_t depth;
} emit_ctx;

/* Internal radix-tree node `id` covering [first, last] becomes node
 * c->count (and its subtree the following ones); with c->node NULL the
 * nodes are only counted. Prefix lengths grow strictly down the radix
 * tree and are at most 64 + 32, so the recursion depth is bounded. */
static void emit(emit_ctx *c, uint32_t first, uint32_t last, uint32_t id, uint32_t depth)
{
    size_t at = c->count++;
    if (depth > c->depth) c->depth = depth;
    if (c->node) {
        grove__node *nd = &c->node[at];
        nd->begin = first;
        nd->end = last + 1;
        nd->right = 0;
        nd->depth = depth;
    }
    if (last - first + 1 <= GROVE__LEAF_SIZE) return;
    uint32_t g = c->split[id];
    emit(c, first, g, g, depth + 1);
    if (c->node) c->node[at].right = (uint32_t)c->count;
    emit(c, g + 1, last, g + 1, depth + 1);
}

enum { MAX_THREADS = 256 };

/* Bounding box of the points times scale (d <= 3), from per-thread partial
 * boxes (not an OpenMP reduction clause, which some compilers implement
 * with an exported lock symbol). */
static void bounding_box(grove_points points, double scale, int threads, double *lo, double *hi)
{
    size_t n = points.n, d = points.d, stride = grove__points_stride(points);
    double part[MAX_THREADS][2][3];
    int team = 1;
    if (threads > MAX_THREADS) threads = MAX_THREADS;
#pragma omp parallel num_threads(threads)
    {
        size_t first, last;
        int nt, t = grove__team_share(n, &first, &last, &nt);
        for (size_t j = 0; j < d; j++) {
            double mn = DBL_MAX, mx = -DBL_MAX;
            for (size_t i = first; i < last; i++) {
                double v = grove__coord(points, stride, i, j) * scale;
                mn = v < mn ? v : mn;
                mx = v > mx ? v : mx;
            }
            part[t][0][j] = mn;
            part[t][1][j] = mx;
        }
#pragma omp single
        team = nt;
    }
    for (size_t j = 0; j < d; j++) {
        lo[j] = DBL_MAX;
        hi[j] = -DBL_MAX;
        for (int t = 0; t < team; t++) {
            lo[j] = part[t][0][j] < lo[j] ? part[t][0][j] : lo[j];
            hi[j] = part[t][1][j] > hi[j] ? part[t][1][j] : hi[j];
        }
    }
}

grove_status grove__bvh_topology(grove_points points, double scale, int threads, grove__tree *tree)
{
    size_t n = points.n;
    double lo[3], hi[3];
    bounding_box(points, scale, threads, lo, hi);
    uint64_t *codes = grove__malloc(n * sizeof *codes, "BVH Morton codes");
    uint32_t *split = n > 1 ? grove__malloc((n - 1) * sizeof *split, "BVH splits") : NULL;
    if (!codes || (n > 1 && !split)) {
        grove__free(codes);
        grove__free(split);
        return GROVE_OUT_OF_MEMORY;
    }
    grove__morton_codes(points, scale, lo, hi, codes, threads);
#pragma omp parallel for num_threads(threads) schedule(static)
    for (size_t i = 0; i < n; i++) tree->perm[i] = (uint32_t)i;
    grove_status s = grove__radix_sort_u64(codes, tree->perm, n, threads);
    if (s == GROVE_OK) {
#pragma omp parallel for num_threads(threads) schedule(static)
        for (size_t i = 0; i < n - 1; i++) split[i] = karras_split(codes, (int64_t)n, (int64_t)i);
        /* Count, allocate exactly, then write. */
        emit_ctx c = {split, NULL, 0, 0};
        emit(&c, 0, (uint32_t)(n - 1), 0, 0);
        tree->node = grove__malloc(c.count * sizeof *tree->node, "BVH nodes");
        if (tree->node) {
            c.node = tree->node;
            c.count = 0;
            emit(&c, 0, (uint32_t)(n - 1), 0, 0);
            tree->nodes = c.count;
            tree->depth = (int)c.depth;
        } else {
            s = GROVE_OUT_OF_MEMORY;
        }
    }
    grove__free(codes);
    grove__free(split);
    return s;
}
