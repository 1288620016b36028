/* The packed-rank builder, used when a batch's ranks pack into one 64-bit
 * word: d * ceil(log2 m) <= 64 (grove__bt_packed_bits). build.c includes this
 * file once; the type-generic presort is BT_(presort) in build_tree.h.
 *
 * Every dimension is sorted once by (coordinate, id), which gives each
 * point its rank in every dimension; a point's record holds all d ranks,
 * `bits` bits each. As in the presorted design (build_tree.h), a node is
 * the same segment of d lists, list j sorted along dimension j, but the
 * lists hold records instead of ids. So
 *
 * - the extent of a node in dimension j is val_j[rank of the first record]
 *   to val_j[rank of the last] (val_j: the coordinates in sorted order);
 * - the (coordinate, id) order in the split dimension s is the order of
 *   the rank in s, so the right child is every record whose rank in s is at
 *   least the rank of the median record; each other list is partitioned
 *   stably by that comparison, reading nothing but the list itself.
 *
 * No flags, no lookups by id: each level streams the lists once, and the
 * partition vectorises (an AVX-512 version is picked at run time). The
 * split list itself is not copied: a bit per list says which buffer holds
 * it. Leaves map the rank in dimension 0 back to the id. In full mode with
 * d = 2..4, where the machine has AVX-512 BITALG, nodes of at most 64
 * points finish as bit masks instead (small_bits.h), and there, where the
 * fields are wide enough, the records hold the id and quantized
 * coordinates instead of ranks (build_quantized.h): no ranks to compute. */

/* Room for a point's coordinates: d <= 64, as every rank takes at least one
 * of a record's 64 bits. */
#define BP_XD 64

/* A record's rank in the dimension whose bits start at `shift`. */
static inline uint64_t bp_rank(uint64_t e, int shift, uint64_t mask) { return grove__bp_rank(e, shift, mask); }

/* One batch's slice of the packed builder's memory. */
typedef struct bp_tree {
    const bt_ctx *c;
    const bt_batch *b;
    size_t count;         /* points */
    size_t n;             /* list stride: list j at + j * n */
    const uint32_t *ids;  /* point -> batch-local id; NULL: the identity */
    int bits;             /* bits per field: a rank, or a quantized coordinate */
    bool spawn;           /* create tasks */
    uint64_t *rec[2];     /* the batch's memory (bp_memory in build.c): list j of buffer buf at rec[buf] + j * n */
    double *val;          /* the batch's memory: dimension j's coordinates in its order at + j * n
                           * (quantized: in id order, where x needs a copy) */
    uint32_t *perm;       /* the batch's memory: dimension j's rank -> batch-local id at + j * n */
    uint64_t mask;        /* (1 << bits) - 1 */
    grove__bp_partition_fn *partition;
    /* Quantized records (build_quantized.h): the id in the low `base` bits
     * (id_mask), then d fields of `bits` bits; ranks have base 0 (set by
     * bp_layout). */
    bool quantized;
    int base;
    uint64_t id_mask;
    const double *x;      /* quantized: coordinate j of batch-local id i at x[i * x_id + j * x_dim] */
    size_t x_id, x_dim;
    /* Quantized, in a team of fewer threads than lists: the list that
     * the root's children sort instead of the presort (-1: none; bq_deferrable). */
    int deferred;
} bp_tree;

/* The input row of rank record e (quantized records finish in the
 * bit-mask subtrees, which map their ids themselves). */
static inline size_t bp_row(const bp_tree *t, uint64_t e)
{
    uint32_t p = t->perm[e & t->mask];
    return bt_row(t->c, t->b, t->ids ? t->ids[p] : p);
}

static inline void bp_emit(const bp_tree *t, size_t slot, uint64_t e, uint8_t real)
{
    bt_emit(t->c, slot, bp_row(t, e), real);
}

/* Emit the full-mode leaf (a, b) at out: ordered along its widest
 * dimension, whose spread is |xa - xb| (= max - min, exactly); b is a
 * padding copy of a (`real` 0) in a leaf of one point. */
static inline __attribute__((always_inline)) void bp_pair(const bp_tree *t, uint64_t a, uint64_t b,
                                                          const double *xa, const double *xb, size_t out,
                                                          size_t d, uint8_t real)
{
    size_t s = 0;
    double best_spread = -1.0;
    for (size_t j = 0; j < d; j++) bt_widest(fabs(xa[j] - xb[j]), j, &s, &best_spread);
    int shift = (int)s * t->bits;
    bool swap = bp_rank(b, shift, t->mask) < bp_rank(a, shift, t->mask);
    bt_emit_leaf(t->c, out, bp_row(t, swap ? b : a), bp_row(t, swap ? a : b), real);
}

/* The subtree of a small node (bp_small): its points' coordinates and
 * records, gathered once, as x[i * d + j] and rec[i]; nodes are index
 * lists into them. */
typedef struct bp_local {
    const bp_tree *t;
    const double *x;
    const uint64_t *rec;
} bp_local;

static void bp_small_node(const bp_local *p, const uint8_t *idx, size_t k, int level, size_t out, size_t d)
{
    const bp_tree *t = p->t;
    const bt_ctx *c = t->c;
    if (c->partition && (level == t->b->levels || k <= 1)) {
        for (size_t i = 0; i < k; i++) bp_emit(t, out + i, p->rec[idx[i]], 1);
        return;
    }
    if (!c->partition && level == t->b->levels) { /* a leaf of one or two points */
        bp_pair(t, p->rec[idx[0]], p->rec[idx[k - 1]], p->x + idx[0] * d, p->x + idx[k - 1] * d, out, d, k == 2);
        return;
    }
    size_t s = 0;
    double best_spread = -1.0;
    for (size_t j = 0; j < d; j++) {
        double lo = p->x[idx[0] * d + j], hi = lo;
        for (size_t i = 1; i < k; i++) {
            double v = p->x[idx[i] * d + j];
            lo = v < lo ? v : lo;
            hi = v > hi ? v : hi;
        }
        bt_widest(hi - lo, j, &s, &best_spread);
    }
    int shift = (int)s * t->bits;
    uint64_t r[BP_SMALL];
    for (size_t i = 0; i < k; i++) r[i] = bp_rank(p->rec[idx[i]], shift, t->mask);
    size_t h = k / 2, nl = 0, nr = h;
    uint8_t split[BP_SMALL];
    for (size_t i = 0; i < k; i++) { /* the h lowest ranks go left, stably */
        size_t below = 0;
        for (size_t j = 0; j < k; j++) below += r[j] < r[i];
        size_t left = below < h;
        split[left ? nl : nr] = idx[i];
        nl += left;
        nr += !left;
    }
    size_t right_out = bt_right_out(c, t->b, out, h, level);
    bp_small_node(p, split, h, level + 1, out, d);
    bp_small_node(p, split + h, k - h, level + 1, right_out, d);
}

/* A node of k <= BP_SMALL points and its subtree, from its records (in id
 * order in partition mode, any order otherwise). The coordinates come
 * from the sorted arrays by rank, once per point; the splits rank the
 * records against each other. Cheaper than lists and partitions at this
 * size. */
static inline __attribute__((always_inline)) void bp_small_d(const bp_tree *t, const uint64_t *rec, size_t k,
                                                             int level, size_t out, size_t d)
{
    size_t n = t->n;
    double x[BP_SMALL * BP_XD];
    uint8_t idx[BP_SMALL];
    for (size_t i = 0; i < k; i++) {
        idx[i] = (uint8_t)i;
        for (size_t j = 0; j < d; j++) x[i * d + j] = t->val[j * n + bp_rank(rec[i], (int)j * t->bits, t->mask)];
    }
    bp_local p = {t, x, rec};
    bp_small_node(&p, idx, k, level, out, d);
}

/* The commonest small subtree, straight-line: a full-mode node of four
 * points whose children are leaf pairs. */
static inline __attribute__((always_inline)) void bp_quad(const bp_tree *t, const uint64_t *rec, size_t out,
                                                          size_t d)
{
    size_t n = t->n;
    double x[4][BP_XD];
    uint64_t e[4] = {rec[0], rec[1], rec[2], rec[3]};
    size_t s = 0;
    double best_spread = -1.0;
    for (size_t j = 0; j < d; j++) {
        int shift = (int)j * t->bits;
        const double *v = t->val + j * n;
        for (size_t i = 0; i < 4; i++) x[i][j] = v[bp_rank(e[i], shift, t->mask)];
        double lo = x[0][j], hi = lo;
        for (size_t i = 1; i < 4; i++) {
            lo = x[i][j] < lo ? x[i][j] : lo;
            hi = x[i][j] > hi ? x[i][j] : hi;
        }
        bt_widest(hi - lo, j, &s, &best_spread);
    }
    int shift = (int)s * t->bits;
    uint64_t r[4];
    for (size_t i = 0; i < 4; i++) r[i] = bp_rank(e[i], shift, t->mask);
    size_t left[4]; /* point i goes left when at most one rank is below its own */
    for (size_t i = 0; i < 4; i++) left[i] = (size_t)(r[0] < r[i]) + (r[1] < r[i]) + (r[2] < r[i]) + (r[3] < r[i]) < 2;
    uint8_t order[4];
    size_t nl = 0, nr = 2;
    for (size_t i = 0; i < 4; i++) {
        order[left[i] ? nl : nr] = (uint8_t)i;
        nl += left[i];
        nr += !left[i];
    }
    bp_pair(t, e[order[0]], e[order[1]], x[order[0]], x[order[1]], out, d, 1);
    bp_pair(t, e[order[2]], e[order[3]], x[order[2]], x[order[3]], out + 2, d, 1);
}

static void bp_small(const bp_tree *t, const uint64_t *rec, size_t k, int level, size_t out)
{
    if (k == 4 && !t->c->partition && level == t->b->levels - 1) {
        switch (t->c->d) {
        case 2: bp_quad(t, rec, out, 2); return;
        case 3: bp_quad(t, rec, out, 3); return;
        default: bp_quad(t, rec, out, t->c->d); return;
        }
    }
    switch (t->c->d) { /* a constant d lets the compiler specialise the common cases */
    case 2: bp_small_d(t, rec, k, level, out, 2); break;
    case 3: bp_small_d(t, rec, k, level, out, 3); break;
    default: bp_small_d(t, rec, k, level, out, t->c->d);
    }
}

/* Dimension j's ranks into the records by id (buffer 1, unused until the
 * first split); dimension 0 first, as it starts them. */
static void bp_records(const bp_tree *t, size_t j)
{
    const uint32_t *perm = t->perm + j * t->n;
    uint64_t *rec = t->rec[1];
    int shift = (int)j * t->bits;
    for (size_t r = 0; r < t->count; r++) rec[perm[r]] = (j ? rec[perm[r]] : 0) | (uint64_t)r << shift;
}

/* List j of buffer 0, once the records are complete: the records in
 * dimension j's order, or for j = d (partition mode) in id order. */
static void bp_list(const bp_tree *t, size_t j)
{
    const uint64_t *rec = t->rec[1];
    uint64_t *list = t->rec[0] + j * t->n;
    if (j == t->c->d) {
        memcpy(list, rec, t->count * sizeof *rec);
        return;
    }
    const uint32_t *perm = t->perm + j * t->n;
    for (size_t r = 0; r < t->count; r++) list[r] = rec[perm[r]];
}

#include "build_quantized.h"
#include "small_bits.h"

/* Split the node holding segment [off, off + k) of every list, list j in
 * buffer (*where >> j) & 1: its left child is the first k / 2 entries of
 * every list, its right child the rest, the lists' buffers then in *where
 * (every list but the split one partitioned into the other buffer). */
static void bp_split(const bp_tree *t, uint64_t *where, size_t off, size_t k)
{
    const bt_ctx *c = t->c;
    size_t n = t->n, d = c->d, h = k / 2;
    int bits = t->bits;
#define BP_LIST(j, buf) (t->rec[buf] + (j) * n + off)
    size_t s = 0;
    double best_spread = -1.0;
    for (size_t j = 0; j < d; j++) {
        const uint64_t *l = BP_LIST(j, *where >> j & 1);
        const double *v = t->val + j * n;
        int shift = (int)j * bits;
        double spread = t->quantized ? BT_CORE(t->c, bq_spread)(t, l, k, j)
                                     : v[bp_rank(l[k - 1], shift, t->mask)] - v[bp_rank(l[0], shift, t->mask)];
        bt_widest(spread, j, &s, &best_spread);
    }
    const uint64_t *split = BP_LIST(s, *where >> s & 1);
    int shift = t->base + (int)s * bits;
    uint64_t pivot = t->quantized ? bq_pivot(t, *where, off, k, h, s) : bp_rank(split[h], shift, t->mask);
    /* The root of a batch the team builds alone (more than half of all
     * points) is the only node then: its lists, if more than one, are
     * partitioned as tasks. */
    bool team = t->spawn && k == t->count && k >= BT_TASK_MIN && 2 * k > c->n && c->lists > 2;
    for (size_t j = 0; j < c->lists; j++) {
        unsigned buf = *where >> j & 1;
        if (j == s) continue;
        if (team) {
#pragma omp task default(shared) firstprivate(j, buf)
            t->partition(BP_LIST(j, buf), BP_LIST(j, !buf), k, h, shift, t->mask, pivot);
        } else {
            t->partition(BP_LIST(j, buf), BP_LIST(j, !buf), k, h, shift, t->mask, pivot);
        }
    }
    if (team) {
#pragma omp taskwait
    }
    *where ^= (((uint64_t)1 << c->lists) - 1) & ~((uint64_t)1 << s);
#undef BP_LIST
}

/* The nodes `depth` levels below the node [off, off + k) at `level`,
 * appended to `to` left to right, splitting the nodes between. */
static void bp_descend(const bp_tree *t, uint64_t where, size_t off, size_t k, int level, size_t out, int depth,
                       bb_nodes *to)
{
    if (depth == 0) {
        to->where[to->count] = where;
        to->off[to->count] = off;
        to->k[to->count] = k;
        to->out[to->count++] = out;
        return;
    }
    size_t h = k / 2, right_out = bt_right_out(t->c, t->b, out, h, level);
    bp_split(t, &where, off, k);
    bp_descend(t, where, off, h, level + 1, out, depth - 1, to);
    bp_descend(t, where, off + h, k - h, level + 1, right_out, depth - 1, to);
}

/* The node holding segment [off, off + k) of every list, list j in buffer
 * (where >> j) & 1, at `level`, its slots starting at `out`. */
static void bp_node(const bp_tree *t, uint64_t where, size_t off, size_t k, int level, size_t out)
{
    const bt_ctx *c = t->c;
    if (k >= BT_TASK_MIN && bt_cancelled(c)) return;
    size_t n = t->n, h = k / 2;
#define BP_LIST(j, buf) (t->rec[buf] + (j) * n + off)
    if (t->deferred >= 0 && level == 1) { /* the root split the deferred list unsorted: sort this half */
        size_t j = (size_t)t->deferred;
        unsigned buf = where >> j & 1;
        (void)BT_CORE(t->c, bq_sort_list)(t, BP_LIST(j, buf), k, BP_LIST(j, !buf), j); /* no long run: bq_sparse */
        where ^= (uint64_t)1 << j;
    }
    const uint64_t *last = BP_LIST(c->lists - 1, where >> (c->lists - 1) & 1); /* in id order in partition mode */
#undef BP_LIST
    if (c->partition && level == t->b->levels) { /* a leaf: rows ascending */
        for (size_t i = 0; i < k; i++) bp_emit(t, out + i, last[i], 1);
        return;
    }
    int depth = c->small_bits ? bb_depth(k, c->d) : -1;
    if (depth >= 0) { /* the bit-mask subtrees below, side by side */
        bb_nodes nodes = {0};
        bp_descend(t, where, off, k, level, out, depth, &nodes);
        bb_subtree(t, &nodes, level + depth);
        return;
    }
    if (k <= BP_SMALL) {
        bp_small(t, last, k, level, out);
        return;
    }
    bp_split(t, &where, off, k);
    size_t right_out = bt_right_out(c, t->b, out, h, level);
    if (t->spawn && k >= BT_TASK_MIN) {
#pragma omp task default(shared) firstprivate(t, where, off, h, level, out)
        bp_node(t, where, off, h, level + 1, out);
    } else {
        bp_node(t, where, off, h, level + 1, out);
    }
    bp_node(t, where, off + h, k - h, level + 1, right_out);
}
