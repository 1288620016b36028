/* Sparse octree over 3-D particles (internal), as in Bonsai (Bédorf,
 * Gaburov & Portegies Zwart 2012): 63-bit Morton keys of the positions
 * scaled into the bounding cube (21 levels), a stable radix sort, particles
 * stored in key order so every cell is a contiguous range, and cells built
 * level by level: a cell of at most leaf_size particles (or at the deepest
 * level) is a leaf, any other cell is split into its non-empty octants.
 *
 * Layout: cells are numbered breadth first, so the cells of level l are
 * [level_start[l], level_start[l + 1]) and the children of a cell are the
 * contiguous range [child, child + nchild) one level down (index ranges,
 * no pointers). Within a level cells are in key order. */
#ifndef GROVE_OCTREE_H
#define GROVE_OCTREE_H

#include "internal.h"

/* Deepest level: 3 x 21 = 63 key bits. */
#define GROVE__OCT_LEVELS 21
/* Largest particle count: positions and rows are 32-bit. */
#define GROVE__OCT_MAX_N ((size_t)UINT32_MAX - 1)

typedef struct grove__ocell {
    uint32_t begin, end; /* particles [begin, end) in tree order */
    uint32_t child;      /* first child cell (0 for a leaf) */
    uint32_t parent;     /* parent cell (0 for the root) */
    uint8_t nchild;      /* 0 for a leaf, else 1..8 */
    uint8_t level;       /* 0 at the root */
} grove__ocell;

/* The bounding box of n >= 1 positions (n x 3): per axis the lowest and
 * the highest coordinate. */
void grove__bounds3(const double *pos, size_t n, int threads, double lo[3], double hi[3]);

/* A tree that can be rebuilt many times: buffers grow, never shrink. */
typedef struct grove__octree {
    size_t n;
    double lo[3], side;     /* bounding cube */
    uint64_t *key;          /* n sorted keys */
    uint32_t *order;        /* tree position -> input row */
    grove__ocell *cell;     /* ncells, breadth first; cell[0] is the root */
    size_t ncells;
    size_t level_start[GROVE__OCT_LEVELS + 3];
    int levels;             /* number of non-empty levels */
    size_t cap_n, cap_cells;
    uint32_t *scratch;      /* per-cell child counts during the build */
} grove__octree;

/* (Re)build the tree of n >= 1 finite positions (n x 3 row-major doubles)
 * with leaves of at most leaf_size >= 1 particles. Peak extra memory about
 * 40 bytes per particle (keys, order and the sort's scratch). */
grove_status grove__octree_build(grove__octree *tree, const double *pos, size_t n, size_t leaf_size, int threads);
void grove__octree_free(grove__octree *tree);

#endif
