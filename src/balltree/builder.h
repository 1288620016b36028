/* What the ball tree's builders share: the build context the driver
 * (build.c) fills, the batch and view types, the output and split helpers
 * every builder's hot loops inline, the radix digits and the two-body
 * compilation of the scalar core, and the one entry point each builder
 * gives the driver:
 * - presorted.c (with presorted_t.h, once per coordinate type): every
 *   dimension sorted once, lists partitioned node by node; its sort
 *   (grove__bt_sort) is also the packed builder's presort;
 * - packed.c and the files packed.h names: ranks or quantized coordinates
 *   packed into one record per point, small full-mode subtrees as bit
 *   masks;
 * - selecting.c: splits by selection, leaves to the packed builder
 *   (grove__bt_packed_leaf). */
#ifndef GROVE_BALLTREE_BUILDER_H
#define GROVE_BALLTREE_BUILDER_H

#include "balltree_internal.h"

#include <string.h>

/* Rows per task when a large batch is rotated into its working copy, or
 * its keys made (selecting.c). */
#define BT_GATHER_CHUNK 32768
/* The presorted builder's first node of at most BT_LOCAL points on every
 * path relabels its points (presorted.c), in memory of its own
 * (alloc_presorted, build.c). */
#define BT_LOCAL 4096
/* The radix sorts' widest digit (presorted.c's BT_DIGIT, GROVE__QUANTIZED_DIGIT
 * for quantized fields). */
#define BT_DIGIT_MAX 12

typedef struct grove__bt_ctx grove__bt_ctx;
typedef struct grove__bt_batch grove__bt_batch;
typedef struct grove__bt_view grove__bt_view;

/* Build batch b, whose coordinates `ids` gives by batch-local id (float
 * rows when f32, else double); each builder's entry point, which the
 * driver calls on one thread of its team, in parallel with other batches. */
typedef void grove__bt_batch_fn(const grove__bt_ctx *c, const grove__bt_batch *b, const grove__bt_view *ids,
                                bool f32);
grove__bt_batch_fn grove__bt_presorted_batch, grove__bt_packed_batch, grove__bt_selecting_batch;

struct grove__bt_ctx {
    grove__bt_plan plan; /* the builder and vector code (plan.c), applied by bt_apply_plan (build.c) */
    grove__bt_batch_fn *build; /* the plan's builder */
    const grove_options *options; /* the caller's: cancel flag and progress */
    grove_workspace *workspace;   /* the params': NULL or where the working memory is kept */
    size_t n, d;       /* points, dimensions */
    size_t lists;      /* id lists per buffer: d, plus one in id order in partition mode */
    const char *base;  /* rows of coordinates, `stride` bytes apart: the input, */
    size_t stride;     /*   or its rotation (then in grouped order) */
    const size_t *order; /* grouped position -> input row, NULL = identity */
    void *x;           /* local coordinates (row-major, by label) */
    uint32_t *id;      /* label -> batch-local id */
    uint32_t *map;     /* batch-local id -> label */
    uint32_t *list[2]; /* ping-pong lists: list j of buffer b at list[b] + j * n */
    uint8_t *flag[2];  /* split flags by id (before relabelling) and by label (after) */
    uint64_t *scratch; /* per thread: 2 * max_count sort entries */
    size_t max_count;  /* points of the largest batch */
    int64_t *indices;  /* outputs */
    uint8_t *mask;
    int bits;          /* packed builder (packed.c): bits per rank, 0 = not used */
    bool pack_by_thread; /* each thread builds its batches in its own part of the blocks, or each batch in its own slice */
    size_t pack_stride; /*   a list's length in a part (pack_by_thread), or n */
    uint64_t *rec;     /*   ping-pong record lists of a part (packed.c) */
    double *val;       /*   d x n: each dimension's coordinates in sorted order */
    uint32_t *perm;    /*   d x n: each dimension's rank -> batch-local id */
    grove__packed_partition_fn *partition_fn;
    bool quantize;     /*   quantized records (plan.quantize) */
    bool select;       /* selecting builder (selecting.c) */
    grove__bs_kernels bs_kernels;
    uint64_t *skey[2]; /*   ping-pong keys: dimension j of buffer b at skey[b] + j * n */
    uint32_t *sid[2];  /*   ping-pong batch-local ids */
    char *leaf_work;   /*   per thread, leaf_bytes each: the packed builder's memory for one node */
    size_t leaf_bytes;
    size_t leaf_max;   /*   nodes of at most this many points go to the packed builder */
    int leaf_bits;     /*   bits per rank there */
    grove__packed_partition_fn *partition_default; /* the list partition it leaves */
    bool partition;    /* partition mode (no padding) */
    bool spawn;        /* running in a team: create tasks */
    /* Where the coordinates' finiteness is left to the first pass of the
     * quantized presort or of the selecting builder (grove_balltree_build):
     * set there when one is not; NULL when they were scanned before the
     * build. */
    bool *nonfinite;
    /* With nonfinite: set there when a spread (max - min) of the batch
     * overflows a double; grove_balltree_build then builds again on the
     * points scaled down (bt_build_scaled). */
    bool *overflow;
    int *stopped;      /* set once the cancel flag is seen: every task stops (grove__bt_cancelled) */
};

struct grove__bt_batch {
    size_t start;  /* first grouped position */
    size_t count;  /* points */
    size_t slot;   /* first output slot */
    int levels;    /* L (full) or K (partition) */
};

/* What a label stands for: coordinates at base + r * stride with
 * r = rows ? rows[label] : label, batch-local id `id ? id[label] : label`,
 * split flag flag[label]. */
struct grove__bt_view {
    const char *base;
    size_t stride;
    const size_t *rows;
    const uint32_t *id;
    uint8_t *flag;
};

/* Sort ids[0..g) (ids[i] == i on entry, all the batch's) by (coordinate
 * j, id), the coordinates of v (float when f32); a and b are scratch of g
 * entries each (presorted.c). */
void grove__bt_sort(const grove__bt_ctx *c, const grove__bt_view *v, bool f32, size_t j, uint32_t *ids, size_t g,
                    uint64_t *a, uint64_t *b);

/* The packed builder on a node of k <= c->leaf_max points of the
 * selecting builder, within the node's task, in the thread's leaf memory
 * `work` (c->leaf_bytes), where the caller has put the points'
 * coordinates as doubles, point i's at work[i * d + j]; ids[i] is its
 * batch-local id; the node is at `level`, its slots from `out`. */
void grove__bt_packed_leaf(const grove__bt_ctx *c, const grove__bt_batch *b, const uint32_t *ids, size_t k, int level,
                           size_t out, double *work);

/* Whether the build stops: the options' cancel flag, read before each
 * batch and at each node of at least BT_TASK_MIN points (one batch of
 * millions of points takes seconds), remembered in c->stopped for every
 * task. The nodes and batches it skips are left unwritten (build.c). */
bool grove__bt_cancelled(const grove__bt_ctx *c);

static inline int grove__bt_thread(void)
{
    int t, size;
    grove__team_member(&t, &size);
    return t;
}

/* The calling thread's sort scratch (sorting has no task scheduling point,
 * so no other task of this thread can interleave). */
static inline uint64_t *grove__bt_scratch(const grove__bt_ctx *c)
{
    return c->scratch + (size_t)grove__bt_thread() * 2 * c->max_count;
}

static inline size_t grove__bt_row(const grove__bt_ctx *c, const grove__bt_batch *b, uint32_t id)
{
    size_t g = b->start + id;
    return c->order ? c->order[g] : g;
}

static inline void grove__bt_emit(const grove__bt_ctx *c, size_t slot, size_t row, uint8_t real)
{
    c->indices[slot] = (int64_t)row;
    if (c->mask) c->mask[slot] = real;
}

/* A full-mode leaf: rows first and second, the second real or a padding
 * copy. Both indices are stored before the mask bytes, whose stores could
 * alias anything and would make the compiler reload what the second row
 * needs. */
static inline void grove__bt_emit_leaf(const grove__bt_ctx *c, size_t slot, size_t first, size_t second,
                                       uint8_t real)
{
    c->indices[slot] = (int64_t)first;
    c->indices[slot + 1] = (int64_t)second;
    if (c->mask) {
        c->mask[slot] = 1;
        c->mask[slot + 1] = real;
    }
}

/* The split dimension so far: j replaces *s when its spread is strictly
 * larger, so ties go to the lowest dimension. */
static inline void grove__bt_widest(double spread, size_t j, size_t *s, double *best)
{
    size_t take = (size_t)0 - (size_t)(spread > *best); /* arithmetic, not a branch: a coin flip */
    *s = (j & take) | (*s & ~take);
    *best = spread > *best ? spread : *best;
}

/* The first output slot of the right child of a node at `level` whose
 * slots start at `out` and whose left child holds h points. */
static inline size_t grove__bt_right_out(const grove__bt_ctx *c, const grove__bt_batch *b, size_t out, size_t h,
                                         int level)
{
    return out + (c->partition ? h : (size_t)1 << (b->levels - level));
}

/* Order-preserving unsigned key of a coordinate: key(x) < key(y) iff
 * x < y. Adding +0 first turns -0.0 into +0.0, so the two share a key.
 * grove__bt_key_f32 and grove__bt_key_f64. */
#define BT_KEY(T, K, name)                                                                                   \
    static inline K name(T x)                                                                                \
    {                                                                                                        \
        x = x + (T)0;                                                                                        \
        K bits;                                                                                              \
        memcpy(&bits, &x, sizeof bits);                                                                      \
        K sign = (K)1 << (sizeof(K) * 8 - 1);                                                                \
        return bits & sign ? ~bits : bits | sign;                                                            \
    }
BT_KEY(float, uint32_t, grove__bt_key_f32)
BT_KEY(double, uint64_t, grove__bt_key_f64)
#undef BT_KEY

/* The LSD radix sorts' digits (bt_lsd in presorted.c, quantized_sort_list in
 * packed_quantized.c): a field of `bits` bits at `shift`, in `passes` digits of
 * `digit` bits (at most 3 of at most BT_DIGIT_MAX), and their counts,
 * turned into offsets pass by pass. */
typedef struct grove__bt_digits {
    int shift, passes, digit;
    uint64_t field;
    uint32_t hist[3][1 << BT_DIGIT_MAX];
} grove__bt_digits;

/* Digits of at most `most` bits for the field, counted over x[0..g). */
static inline __attribute__((always_inline)) void grove__bt_digits_count(grove__bt_digits *r, const uint64_t *x,
                                                                        size_t g, int shift, int bits, int most)
{
    r->shift = shift;
    r->passes = (bits + most - 1) / most;
    r->digit = (bits + r->passes - 1) / r->passes;
    r->field = ((uint64_t)1 << bits) - 1;
    uint64_t bins = (uint64_t)1 << r->digit, field = r->field;
    int passes = r->passes, digit = r->digit;
    for (int p = 0; p < passes; p++) memset(r->hist[p], 0, bins * sizeof r->hist[p][0]);
    for (size_t i = 0; i < g; i++) { /* unrolled: a loop over the passes measured slower */
        uint64_t q = x[i] >> shift & field;
        r->hist[0][q & (bins - 1)]++;
        if (passes > 1) r->hist[1][(q >> digit) & (bins - 1)]++;
        if (passes > 2) r->hist[2][(q >> 2 * digit) & (bins - 1)]++;
    }
}

/* Digit p of record e. */
static inline uint64_t grove__bt_digit(const grove__bt_digits *r, int p, uint64_t e)
{
    return (e >> (r->shift + p * r->digit)) & (r->field >> p * r->digit) & (((uint64_t)1 << r->digit) - 1);
}

/* Whether pass p moves anything, before it runs: its digit takes more
 * than one value among the g records (e is any of them). */
static inline bool grove__bt_digits_move(const grove__bt_digits *r, int p, uint64_t e, size_t g)
{
    return r->hist[p][grove__bt_digit(r, p, e)] != g;
}

/* Pass p: from[0..g) into `to`, stably by digit p. */
static inline __attribute__((always_inline)) void grove__bt_digits_scatter(grove__bt_digits *r, int p,
                                                                          const uint64_t *from, uint64_t *to,
                                                                          size_t g)
{
    uint32_t *h = r->hist[p], sum = 0;
    for (uint64_t v = 0; v < (uint64_t)1 << r->digit; v++) {
        uint32_t c = h[v];
        h[v] = sum;
        sum += c;
    }
    int at = r->shift + p * r->digit;
    uint64_t mask = (r->field >> p * r->digit) & (((uint64_t)1 << r->digit) - 1);
    for (size_t i = 0; i < g; i++) {
        uint64_t e = from[i];
        to[h[(e >> at) & mask]++] = e;
    }
}


#endif
