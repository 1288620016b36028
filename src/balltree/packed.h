/* What the packed builder's files share: a node is the same segment of d
 * lists sorted along each dimension, as in the presorted builder, each
 * entry a 64-bit record with d fields to split by: packed.c (recursion),
 * packed_ranks.c, packed_quantized.c, packed_bitmask.c. */
#ifndef GROVE_BALLTREE_PACKED_H
#define GROVE_BALLTREE_PACKED_H

#include "builder.h"

/* Nodes of at most PACKED_SMALL points finish from their records. */
#define PACKED_SMALL 4

/* d <= 64: every field takes at least one of a record's bits. */
#define PACKED_MAX_DIMS 64

/* One batch's slice of the packed builder's memory. */
typedef struct grove__packed_tree {
    const grove__bt_ctx *c;
    const grove__bt_batch *b;
    size_t count;         /* points */
    size_t n;             /* list stride: list j at + j * n */
    const uint32_t *ids;  /* point -> batch-local id; NULL: the identity */
    int bits;             /* bits per field: a rank, or a quantized coordinate */
    bool spawn;           /* create tasks */
    uint64_t *rec[2];     /* list j of buffer buf at rec[buf] + j * n */
    double *val;          /* dimension j's coordinates in its order at + j * n (quantized: a copy of the points) */
    uint32_t *perm;       /* dimension j's rank -> batch-local id at + j * n */
    uint64_t mask;        /* (1 << bits) - 1 */
    grove__packed_partition_fn *partition;
    /* quantized: the id in the low `base` bits, then the fields (ranks: base 0) */
    bool quantized;
    int base;
    uint64_t id_mask;
    const double *x;      /* quantized: coordinate j of batch-local id i at x[i * d + j] */
    /* the list the root's children sort instead of the presort, or -1 */
    int deferred;
} grove__packed_tree;

/* The input row of rank record e. */
static inline size_t grove__packed_row(const grove__packed_tree *t, uint64_t e)
{
    uint32_t p = t->perm[e & t->mask];
    return grove__bt_row(t->c, t->b, t->ids ? t->ids[p] : p);
}



/* Rank records: the presort, and the finish of a node of at most
 * PACKED_SMALL points (in id order in partition mode). */
void grove__ranks_presort(const grove__bt_view *v, const grove__packed_tree *t);
void grove__ranks_small(const grove__packed_tree *t, const uint64_t *rec, size_t k, int level, size_t out);

/* Quantized records: the presort (false: runs too long, or not finite);
 * the extent along j of a node's list segment; the field value splitting
 * a node (it may move records one value); the deferred list's sort. */
bool grove__quantized_presort(const grove__bt_view *v, grove__packed_tree *t);
double grove__quantized_spread(const grove__packed_tree *t, const uint64_t *l, size_t k, size_t j);
uint64_t grove__quantized_pivot(const grove__packed_tree *t, uint64_t where, size_t off, size_t k, size_t h, size_t s);
uint64_t grove__quantized_sort_deferred(const grove__packed_tree *t, uint64_t where, size_t off, size_t k);

/* Nodes whose bit-mask subtrees are built side by side. */
#define BITMASK_SUBS 2
typedef struct grove__bitmask_nodes {
    size_t count;
    uint64_t where[BITMASK_SUBS];
    size_t off[BITMASK_SUBS], k[BITMASK_SUBS], out[BITMASK_SUBS];
} grove__bitmask_nodes;
/* Levels below a node of k points where its bit-mask subtrees start, or -1. */
int grove__bitmask_depth(size_t k, size_t d);
/* The full-mode nodes of `nodes`, all at `level`, and their subtrees. */
void grove__bitmask_subtrees(const grove__packed_tree *t, const grove__bitmask_nodes *nodes, int level);

#endif
