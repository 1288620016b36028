/* What the ball tree's builders share: the build context the driver
 * (build.c) fills, the batch and view types, the helpers their hot loops
 * inline, the radix digits, and each builder's entry point: presorted.c
 * (every dimension sorted once, lists partitioned node by node; its sort
 * is the packed builder's rank presort too), packed.c (packed.h: one
 * record per point) and selecting.c (splits by selection, leaves to the
 * packed builder). */
#ifndef GROVE_BALLTREE_BUILDER_H
#define GROVE_BALLTREE_BUILDER_H

#include "balltree_internal.h"

#include <string.h>

#define BT_GATHER_CHUNK 32768 /* rows per task where a large batch is rotated or keyed */
#define BT_LOCAL 4096         /* the presorted builder relabels nodes of at most this many points */
#define BT_DIGIT_MAX 12       /* the radix sorts' widest digit */

typedef struct grove__bt_ctx grove__bt_ctx;
typedef struct grove__bt_batch grove__bt_batch;
typedef struct grove__bt_view grove__bt_view;

/* Build batch b, whose coordinates (doubles) `ids` gives by batch-local
 * id: each builder's entry point, called on one thread of the team, in
 * parallel with other batches. */
typedef void grove__bt_batch_fn(const grove__bt_ctx *c, const grove__bt_batch *b, const grove__bt_view *ids);
grove__bt_batch_fn grove__bt_presorted_batch, grove__bt_packed_batch, grove__bt_selecting_batch;

struct grove__bt_ctx {
    grove__bt_plan plan;          /* the builder and vector code (plan.c) */
    grove__bt_batch_fn *build;    /* the plan's builder */
    const grove_options *options; /* cancel flag and progress */
    grove_workspace *workspace;   /* NULL, or where the working memory is kept */
    size_t n, d, lists;           /* points, dimensions, lists per buffer (d, + 1 in partition mode) */
    const char *base;             /* rows of doubles `stride` bytes apart in grouped order: the input or a copy */
    size_t stride;
    const size_t *order;          /* grouped position -> input row, NULL = identity */
    int64_t *indices;             /* outputs */
    uint8_t *mask;
    uint64_t *scratch;            /* per thread: 2 max_count sort entries */
    size_t max_count;             /* points of the largest batch */
    bool partition;               /* partition mode (no padding) */
    bool spawn;                   /* running in a team: create tasks */
    /* presorted builder: local coordinates by label, label -> id and
     * id -> label, ping-pong lists (list j of buffer b at list[b] + j n),
     * split flags by id and by label */
    void *x;
    uint32_t *id, *map, *list[2];
    uint8_t *flag[2];
    /* packed builder: a part of the blocks per thread (pack_by_thread) or
     * a slice per batch; lists pack_stride long; ping-pong record lists,
     * d x n sorted coordinates and rank -> id maps */
    bool pack_by_thread;
    size_t pack_stride;
    uint64_t *rec;
    double *val;
    uint32_t *perm;
    grove__packed_partition_fn *partition_fn;
    /* selecting builder: ping-pong keys (dimension j of buffer b at
     * skey[b] + j n) and ids, per thread leaf_bytes of memory for the
     * packed builder on one node */
    grove__bs_kernels bs_kernels;
    uint64_t *skey[2];
    uint32_t *sid[2];
    char *leaf_work;
    size_t leaf_bytes;
    /* Where the first pass checks the coordinates (the plan's
     * first_pass_checks): set there when one is not finite, or when a
     * spread overflows a double (the build then runs on the points scaled
     * down); NULL when they were checked before. */
    bool *nonfinite, *overflow;
    int *stopped; /* set once the cancel flag is seen: every task stops */
};

struct grove__bt_batch {
    size_t start; /* first grouped position */
    size_t count; /* points */
    size_t slot;  /* first output slot */
    int levels;   /* L (full) or K (partition) */
};

/* A label's coordinates (doubles) at base + label * stride, its
 * batch-local id `id ? id[label] : label`, its split flag flag[label]. */
struct grove__bt_view {
    const char *base;
    size_t stride;
    const uint32_t *id;
    uint8_t *flag;
};

/* Sort ids[0..g) (ids[i] == i on entry) by (coordinate j, id); a and b
 * are scratch of g entries each (presorted.c). */
void grove__bt_sort(const grove__bt_ctx *c, const grove__bt_view *v, size_t j, uint32_t *ids, size_t g, uint64_t *a,
                    uint64_t *b);

/* The packed builder on a selecting node of k <= leaf_max points, in the
 * thread's leaf memory `work`, whose start holds the points' coordinates
 * (point i's at work[i * d + j]); ids[i] is its batch-local id. */
void grove__bt_packed_leaf(const grove__bt_ctx *c, const grove__bt_batch *b, const uint32_t *ids, size_t k, int level,
                           size_t out, double *work);

/* Whether the build stops: the cancel flag, read before each batch and at
 * each node of at least BT_TASK_MIN points. What it skips is left
 * unwritten. */
bool grove__bt_cancelled(const grove__bt_ctx *c);

static inline int grove__bt_thread(void)
{
    int t, size;
    grove__team_member(&t, &size);
    return t;
}

/* The calling thread's sort scratch (no task scheduling point while it is
 * in use, so no other task of the thread interleaves). */
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

/* A full-mode leaf, its second row real or a padding copy. Both indices
 * go before the mask bytes, whose stores could alias the rows. */
static inline void grove__bt_emit_leaf(const grove__bt_ctx *c, size_t slot, size_t first, size_t second,
                                       uint8_t real)
{
    c->indices[slot] = (int64_t)first;
    c->indices[slot + 1] = (int64_t)second;
    if (c->mask) c->mask[slot] = 1, c->mask[slot + 1] = real;
}

/* j replaces the split dimension *s when its spread is strictly larger
 * (ties to the lowest); arithmetic, not a branch: a coin flip. */
static inline void grove__bt_widest(double spread, size_t j, size_t *s, double *best)
{
    size_t take = (size_t)0 - (size_t)(spread > *best);
    *s = (j & take) | (*s & ~take);
    *best = spread > *best ? spread : *best;
}

/* The first slot of the right child of a node at `level`, slots from
 * `out`, left child of h points. */
static inline size_t grove__bt_right_out(const grove__bt_ctx *c, const grove__bt_batch *b, size_t out, size_t h,
                                         int level)
{
    return out + (c->partition ? h : (size_t)1 << (b->levels - level));
}

/* Order-preserving unsigned key: key(x) < key(y) iff x < y; -0.0 + 0 is
 * +0.0, so the two share a key. */
static inline uint64_t grove__bt_key(double x)
{
    x = x + 0.0;
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    return bits >> 63 ? ~bits : bits | (uint64_t)1 << 63;
}

/* The LSD radix sorts' digits (presorted.c, packed_quantized.c): a field
 * of `bits` bits at `shift` in `passes` digits of `digit` bits (at most 3
 * of at most BT_DIGIT_MAX), and their counts. */
typedef struct grove__bt_digits {
    int shift, passes, digit;
    uint64_t field;
    uint32_t hist[3][1 << BT_DIGIT_MAX];
} grove__bt_digits;

/* Digits of at most `most` bits, counted over x[0..g) (the passes
 * unrolled: a loop over them measured slower). */
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
    for (size_t i = 0; i < g; i++) {
        uint64_t q = x[i] >> shift & field;
        r->hist[0][q & (bins - 1)]++;
        if (passes > 1) r->hist[1][(q >> digit) & (bins - 1)]++;
        if (passes > 2) r->hist[2][(q >> 2 * digit) & (bins - 1)]++;
    }
}

/* Whether pass p moves anything: its digit takes more than one value
 * among the g records (e is any of them). */
static inline bool grove__bt_digits_move(const grove__bt_digits *r, int p, uint64_t e, size_t g)
{
    uint64_t digit = (e >> (r->shift + p * r->digit)) & (r->field >> p * r->digit) & (((uint64_t)1 << r->digit) - 1);
    return r->hist[p][digit] != g;
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
