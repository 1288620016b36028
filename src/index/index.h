/* Spatial indexes (internal): a linear BVH over Morton codes for d <= 3 and
 * a balanced kd-tree for d > 3, both producing the same tree layout, which
 * the join's grove_index (search_index.h) shares too, so the searches (kNN
 * here, Borůvka in src/emst, the join's kNN) are one walk (walk_t.h).
 *
 * Layout: points are permuted into tree order and copied there (in the
 * input dtype), so every node covers a contiguous range of positions.
 * Nodes are in preorder: a node's left child is the next node, its right
 * child is `right`; leaves hold at most GROVE__LEAF_SIZE points. Boxes are
 * stored per node as lo[d] then hi[d], in the input dtype.
 *
 * Range: coordinates are stored times 2^-exponent (grove__range_exponent;
 * exponent 0, no scaling, for all but data whose squared distances would
 * overflow or underflow), and the topologies are built on the same scaled
 * values, so every squared distance a query returns is in those units. */
#ifndef GROVE_INDEX_H
#define GROVE_INDEX_H

#include "internal.h"
#include "dist_key.h"

/* Points per leaf: small enough that leaf boxes prune well, large enough
 * that a leaf's points fill a few cache lines and the tree stays shallow. */
#define GROVE__LEAF_SIZE 8
/* Deepest tree any builder may produce, so a walk's stack (walk_t.h, one
 * entry per level) is a fixed array: a balanced kd-tree of 2^32 points is
 * 32 levels deep, a BVH at most 95 (the prefix lengths of its radix tree
 * grow strictly down a path and take 63 values for distinct 63-bit codes,
 * 32 for the positions of duplicates); builds refuse anything deeper. */
#define GROVE__TREE_MAX_DEPTH 128
/* GROVE_INTERNAL, naming `what`, for a tree deeper than that. */
grove_status grove__tree_depth_check(int depth, const char *what);
/* Largest n an index holds: positions and rows are 32-bit. */
#define GROVE__INDEX_MAX_N ((size_t)UINT32_MAX - 1)

typedef struct grove__node {
    uint32_t begin, end; /* tree positions [begin, end) */
    uint32_t right;      /* right child; the left child is this node + 1; 0 = leaf */
    uint32_t depth;      /* 0 at the root */
} grove__node;

typedef struct grove__tree {
    size_t n, d;
    grove_dtype dtype;   /* GROVE_FLOAT32 or GROVE_FLOAT64 */
    void *x;             /* n * d coordinates in tree order */
    uint32_t *perm;      /* tree position -> input row */
    grove__node *node;   /* `nodes` nodes in preorder, node[0] is the root */
    size_t nodes;
    size_t dims;         /* box dimensions: d here; the join's keys (search_index.h) */
    void *box;           /* nodes * 2 dims: lo then hi */
    int depth;           /* largest node depth */
    int exponent;        /* coordinates are stored times 2^-exponent */
} grove__tree;

/* Build the index for validated points with n >= 1, scaled by 2^-exponent:
 * BVH for d <= 3, kd-tree otherwise. Peak extra memory: see docs/emst.md. */
grove_status grove__tree_build(grove_points points, int exponent, int threads, grove__tree *tree);
/* Bytes of n x d coordinates of elem bytes each into *bytes, after checking
 * min_n <= n <= GROVE__INDEX_MAX_N and that the size fits (named errors). */
grove_status grove__index_size(size_t n, size_t d, size_t elem, size_t min_n, size_t *bytes);
void grove__tree_free(grove__tree *tree);

/* The one fill of a tree whose perm and nodes are built (n, d, dtype,
 * dims and the x and box memory set): the points copied into tree order
 * times scale (a power of two: exact) in the tree's dtype, stored
 * dimension j from input dimension order[j] (order NULL: j), also by
 * dimension into xs (d x n; NULL: not kept); keys_in (n x dims doubles in
 * input order, or NULL) copied into keys in tree order; then the node
 * boxes over the keys, or without keys_in over the first dims stored
 * coordinates. */
void grove__tree_fill(grove__tree *tree, grove_points points, double scale, const size_t *order, void *xs,
                      const double *keys_in, void *keys, int threads);

/* Builders: fill tree->perm and the node topology (begin, end, right,
 * depth) of the points times `scale` (a power of two; 1 = as they are);
 * grove__tree_build then copies the points and computes boxes. */
grove_status grove__bvh_topology(grove_points points, double scale, int threads, grove__tree *tree);
/* The kd-tree takes the most points per leaf and the split axes (axes[0 ..
 * naxes), or NULL for all d axes). */
grove_status grove__kdtree_topology(grove_points points, double scale, size_t leaf, const size_t *axes, size_t naxes,
                                    int threads, grove__tree *tree);

/* 63-bit Morton codes of n points with d <= 3, times `scale`, inside the
 * box [lo, hi] of the scaled points (per axis 63 / d bits: 63, 31, 21);
 * codes[i] for input row i. */
void grove__morton_codes(grove_points points, double scale, const double *lo, const double *hi, uint64_t *codes,
                         int threads);

/* Exact k nearest neighbours (k >= 1, k <= n) of every indexed point among
 * the indexed points, itself included (it comes first at distance 0 unless
 * a duplicate with a smaller row ties it). Ties are broken by the smaller
 * input row. Outputs are per input row: idx[row * k + r] (input rows) and
 * dist2[row * k + r], the double keys (dist_key.h) of the squared
 * distances computed in the input dtype; and kth2[pos], the k-th key per
 * tree position (what core distances need, without n * k storage;
 * grove__key_dist gives the distance). Any output may be NULL. */
grove_status grove__tree_knn(const grove__tree *tree, size_t k, uint32_t *idx, double *dist2, double *kth2,
                             const grove_options *options);

/* The k nearest indexed points (1 <= k <= n) to one point q of a float64
 * tree (d coordinates), in the order and arithmetic of grove__tree_knn:
 * rows[r] (input rows) and dist[r], their distances, nearest first.
 * scratch holds grove__tree_knn_scratch(k) bytes (8-byte aligned), one per
 * thread. */
size_t grove__tree_knn_scratch(size_t k);
void grove__tree_knn_point(const grove__tree *tree, const double *q, size_t k, void *scratch, uint32_t *rows,
                           double *dist);

#endif
