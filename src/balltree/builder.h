/* What the ball tree's builders share: the build context (build.c), the
 * batch and view types, hot-loop helpers, radix digits, and the entry
 * points of presorted.c, packed.c (packed.h) and selecting.c. */
#ifndef GROVE_BALLTREE_BUILDER_H
#define GROVE_BALLTREE_BUILDER_H

#include "balltree_internal.h"
#include "parallel.h"

#include <string.h>

#define BT_GATHER_CHUNK 32768 /* rows per task where a large batch is copied */
#define BT_LOCAL 4096         /* the presorted builder relabels nodes of at most this many points */
#define BT_DIGIT_MAX 12       /* the radix sorts' widest digit */

typedef struct grove__bt_ctx grove__bt_ctx;
typedef struct grove__bt_batch grove__bt_batch;
typedef struct grove__bt_view grove__bt_view;

/* Build batch b from its coordinates `ids` by batch-local id, on one
 * thread of the team, in parallel with other batches. */
typedef void grove__bt_batch_fn(const grove__bt_ctx *c, const grove__bt_batch *b, const grove__bt_view *ids);
grove__bt_batch_fn grove__bt_presorted_batch, grove__bt_packed_batch, grove__bt_selecting_batch;

struct grove__bt_ctx {
    grove__bt_plan plan;          /* the builder and vector code (plan.c) */
    grove__bt_batch_fn *build;    /* the plan's builder */
    const grove_options *options; /* cancel flag and progress */
    grove_workspace *workspace;   /* NULL, or where the working memory is kept */
    size_t n, d, lists;           /* points, dimensions, lists per buffer (d, + 1 in partition mode) */
    const char *base;             /* dense rows of d doubles in grouped order: the input or a copy */
    const size_t *order;          /* grouped position -> input row, NULL = identity */
    int64_t *indices;             /* outputs */
    uint8_t *mask;
    uint64_t *scratch;            /* per thread: 2 max_count sort entries */
    size_t max_count;             /* points of the largest batch */
    bool partition;               /* partition mode (no padding) */
    bool spawn;                   /* running in a team: create tasks */
    /* presorted: local coordinates, label <-> id maps, lists, flags */
    void *x;
    uint32_t *id, *map, *list[2];
    uint8_t *flag[2];
    /* packed: parts per thread or slices per batch; records, values, ranks */
    bool pack_by_thread;
    size_t pack_stride;
    uint64_t *rec;
    double *val;
    uint32_t *perm;
    grove__packed_partition_fn *partition_fn;
    /* selecting: keys and ids (two buffers), per-thread leaf memory */
    grove__bs_kernels bs_kernels;
    uint64_t *skey[2];
    uint32_t *sid[2];
    char *leaf_work;
    size_t leaf_bytes;
    /* Where the first pass checks the coordinates: set when one is not
     * finite or a spread overflows; NULL when checked before. */
    bool *nonfinite, *overflow;
    int *stopped; /* set once the cancel flag is seen: every task stops */
};

struct grove__bt_batch {
    size_t start; /* first grouped position */
    size_t count; /* points */
    size_t slot;  /* first output slot */
    int levels;   /* L (full) or K (partition) */
};

/* A label's coordinates at base + label * stride, its id, its flag. */
struct grove__bt_view {
    const char *base;
    size_t stride;
    const uint32_t *id;
    uint8_t *flag;
};

/* The row of label (or batch-local id) l, and its coordinate j. */
static inline const double *grove__bt_row_of(const grove__bt_view *v, uint32_t l)
{
    return (const double *)(const void *)(v->base + l * v->stride);
}
static inline double grove__bt_at(const grove__bt_view *v, uint32_t l, size_t j) { return grove__bt_row_of(v, l)[j]; }

/* Sort ids[0..g) (ids[i] == i) by (coordinate j, id); a, b scratch of g. */
void grove__bt_sort(const grove__bt_view *v, size_t j, uint32_t *ids, size_t g, uint64_t *a, uint64_t *b);

/* The packed builder on a selecting node of k <= leaf_max points, in
 * leaf memory `work` holding their coordinates; ids[i]: batch-local ids. */
void grove__bt_packed_leaf(const grove__bt_ctx *c, const grove__bt_batch *b, const uint32_t *ids, size_t k, int level,
                           size_t out, double *work);

/* Whether the build stops (the cancel flag); what it skips is unwritten. */
bool grove__bt_cancelled(const grove__bt_ctx *c);

static inline int grove__bt_thread(void)
{
    int t, size;
    grove__team_member(&t, &size);
    return t;
}

/* The thread's sort scratch (used between task scheduling points). */
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

/* A full-mode leaf; both indices before the mask bytes, which could alias. */
static inline void grove__bt_emit_leaf(const grove__bt_ctx *c, size_t slot, size_t first, size_t second,
                                       uint8_t real)
{
    c->indices[slot] = (int64_t)first;
    c->indices[slot + 1] = (int64_t)second;
    if (c->mask) c->mask[slot] = 1, c->mask[slot + 1] = real;
}

/* j replaces the split dimension when strictly wider (arithmetic: a coin flip). */
static inline void grove__bt_widest(double spread, size_t j, size_t *s, double *best)
{
    size_t take = (size_t)0 - (size_t)(spread > *best);
    *s = (j & take) | (*s & ~take);
    *best = spread > *best ? spread : *best;
}

/* The first slot of the right child (left child of h points). */
static inline size_t grove__bt_right_out(const grove__bt_ctx *c, const grove__bt_batch *b, size_t out, size_t h,
                                         int level)
{
    return out + (c->partition ? h : (size_t)1 << (b->levels - level));
}

/* Order-preserving key; -0.0 + 0 is +0.0, so the two share one. */
static inline uint64_t grove__bt_key(double x)
{
    x = x + 0.0;
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    return bits >> 63 ? ~bits : bits | (uint64_t)1 << 63;
}

/* LSD radix digits of a field of `bits` bits at `shift` (at most 3
 * passes of at most BT_DIGIT_MAX bits), and their counts. */
typedef struct grove__bt_digits {
    int shift, passes, digit;
    uint64_t field;
    uint32_t hist[3][1 << BT_DIGIT_MAX];
} grove__bt_digits;

/* The counts over x[0..g), the passes unrolled (a loop measured slower). */
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

/* Whether pass p moves anything (e is any of the g records). */
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
