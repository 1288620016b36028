/* grove_balltree_build: validation, working memory, and the parallel driver
 * over batches. Three builders give the same bytes; the plan (plan.c)
 * names the one each call takes and its vector code. */
#include "balltree_internal.h"

#include <stdlib.h>
#include <math.h>
#include <string.h>

/* Nodes of at most BT_SMALL points are finished from their coordinates. */
#define BT_SMALL 4
/* The packed builder finishes nodes of at most BP_SMALL points from their
 * records (or of at most BB_MAX as bit masks, small_bits.h). */
#define BP_SMALL 4
/* Where each thread keeps its own part of the packed builder's memory
 * (alloc_packed), a part's lists are whole multiples of BP_PART_ALIGN
 * entries, with at least BP_PART_GAP spare. */
#define BP_PART_ALIGN 64
#define BP_PART_GAP 16
/* The first node of at most BT_LOCAL points on every path relabels its
 * points (see build_tree.h). */
#define BT_LOCAL 4096
/* Rows per task when a large batch is rotated into its working copy. */
#define BT_GATHER_CHUNK 32768
/* Sorting: radix digits of at most BT_DIGIT bits (GROVE__BQ_DIGIT for quantized
 * fields, build_quantized.h; BT_DIGIT_MAX for both), at least
 * BT_SORT_SLACK key bits more than log2 of the count, insertion sort up
 * to BT_SORT_SMALL. */
#define BT_DIGIT 11
#define BT_DIGIT_MAX 12
#define BT_SORT_SLACK 8
#define BT_SORT_SMALL 16

typedef struct bt_ctx {
    grove__bt_plan plan; /* the builder and vector code (plan.c), applied below by bt_apply_plan */
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
    int bits;          /* packed builder (build_packed.h): bits per rank, 0 = not used */
    bool pack_by_thread; /* each thread builds its batches in its own part of the blocks, or each batch in its own slice */
    size_t pack_stride; /*   a list's length in a part (pack_by_thread), or n */
    uint64_t *rec;     /*   ping-pong record lists of a part (bp_memory) */
    double *val;       /*   d x n: each dimension's coordinates in sorted order */
    uint32_t *perm;    /*   d x n: each dimension's rank -> batch-local id */
    grove__bp_partition_fn *partition_fn;
    bool small_bits;   /*   small full-mode subtrees by bit masks (small_bits.h) */
    bool quantize;     /*   quantized records (build_quantized.h): small_bits and the AVX-512 presort loops */
    bool select;       /* selecting builder (build_select.h) */
    grove__bs_kernels bs_kernels;
    uint64_t *skey[2]; /*   ping-pong keys: dimension j of buffer b at skey[b] + j * n */
    uint32_t *sid[2];  /*   ping-pong batch-local ids */
    char *leaf_work;   /*   per thread, leaf_bytes each: the packed builder's memory for one node */
    size_t leaf_bytes;
    size_t leaf_max;   /*   nodes of at most this many points go to the packed builder */
    int leaf_bits;     /*   bits per rank there */
    grove__bp_partition_fn *partition_default; /* the list partition it leaves */
    grove__bt_presort_kernels presort_avx512;
    const grove__bt_presort_kernels *presort_kernels; /* &presort_avx512, or NULL: the scalar loops */
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
    int *stopped;      /* set once the cancel flag is seen: every task stops (bt_cancelled) */
} bt_ctx;

typedef struct bt_batch {
    size_t start;  /* first grouped position */
    size_t count;  /* points */
    size_t slot;   /* first output slot */
    int levels;    /* L (full) or K (partition) */
} bt_batch;

/* What a label stands for: coordinates at base + r * stride with
 * r = rows ? rows[label] : label, batch-local id `id ? id[label] : label`,
 * split flag flag[label]. */
typedef struct bt_view {
    const char *base;
    size_t stride;
    const size_t *rows;
    const uint32_t *id;
    uint8_t *flag;
} bt_view;

/* One batch's slice of the working memory. Labels start as batch-local ids
 * (view `ids`: the coordinates where the caller has them) and become
 * positions inside the batch where a node relabels (view `local`). */
typedef struct bt_tree {
    const bt_ctx *c;
    const bt_batch *b;
    bt_view ids, local;
    void *x;           /* c->x + start * d */
    uint32_t *id, *map; /* c->id + start, c->map + start */
    uint32_t *list[2]; /* c->list[b] + start */
} bt_tree;

static int thread_num(void)
{
    int t, size;
    grove__team_member(&t, &size);
    return t;
}

/* The calling thread's sort scratch (sorting has no task scheduling point,
 * so no other task of this thread can interleave). */
static uint64_t *bt_scratch(const bt_ctx *c)
{
    return c->scratch + (size_t)thread_num() * 2 * c->max_count;
}

static inline size_t bt_row(const bt_ctx *c, const bt_batch *b, uint32_t id)
{
    size_t g = b->start + id;
    return c->order ? c->order[g] : g;
}

static inline void bt_emit(const bt_ctx *c, size_t slot, size_t row, uint8_t real)
{
    c->indices[slot] = (int64_t)row;
    if (c->mask) c->mask[slot] = real;
}

/* A full-mode leaf: rows first and second, the second real or a padding
 * copy. Both indices are stored before the mask bytes, whose stores could
 * alias anything and would make the compiler reload what the second row
 * needs. */
static inline void bt_emit_leaf(const bt_ctx *c, size_t slot, size_t first, size_t second, uint8_t real)
{
    c->indices[slot] = (int64_t)first;
    c->indices[slot + 1] = (int64_t)second;
    if (c->mask) {
        c->mask[slot] = 1;
        c->mask[slot + 1] = real;
    }
}

static inline uint32_t bt_id(const bt_view *v, uint32_t label)
{
    return v->id ? v->id[label] : label;
}

/* Stable partition of src[0..k) into dst, k >= 2: ids flagged `tag` to
 * dst[h..k), the others to dst[0..h). src[p..k) all fall on the side of
 * src[k - 1] and src[p - 1] on the other; before p both sides have ids
 * still to come, so every id is written at both cursors, the wrong copy to
 * be overwritten by a later id (branch-free, a single address each), and
 * the tail is copied after. */
static void bt_partition(const uint32_t *restrict src, uint32_t *restrict dst, size_t k, size_t h,
                         const uint8_t *restrict flag, uint8_t tag)
{
    size_t p = k - 1;
    bool tail_right = flag[src[p]] == tag;
    while (p > 0 && (flag[src[p - 1]] == tag) == tail_right) p--;
    uint32_t *l = dst, *r = dst + h;
    for (size_t i = 0; i < p; i++) {
        uint32_t id = src[i];
        size_t right = flag[id] == tag;
        *l = id;
        *r = id;
        l += 1 - right;
        r += right;
    }
    memcpy(tail_right ? r : l, src + p, (k - p) * sizeof *src);
}

/* The LSD radix sorts' digits (bt_lsd here, bq_sort_list in
 * build_quantized.h): a field of `bits` bits at `shift`, in `passes`
 * digits of `digit` bits (at most 3 of at most BT_DIGIT_MAX), and their
 * counts, turned into offsets pass by pass. */
typedef struct bt_digits {
    int shift, passes, digit;
    uint64_t field;
    uint32_t hist[3][1 << BT_DIGIT_MAX];
} bt_digits;

/* Digits of at most `most` bits for the field, counted over x[0..g). */
static inline __attribute__((always_inline)) void bt_digits_count(bt_digits *r, const uint64_t *x, size_t g,
                                                                 int shift, int bits, int most)
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
static inline uint64_t bt_digit(const bt_digits *r, int p, uint64_t e)
{
    return (e >> (r->shift + p * r->digit)) & (r->field >> p * r->digit) & (((uint64_t)1 << r->digit) - 1);
}

/* Whether pass p moves anything, before it runs: its digit takes more
 * than one value among the g records (e is any of them). */
static inline bool bt_digits_move(const bt_digits *r, int p, uint64_t e, size_t g)
{
    return r->hist[p][bt_digit(r, p, e)] != g;
}

/* Pass p: from[0..g) into `to`, stably by digit p. */
static inline __attribute__((always_inline)) void bt_digits_scatter(bt_digits *r, int p, const uint64_t *from,
                                                                   uint64_t *to, size_t g)
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

/* The builders' hottest scalar loops (radix passes, record fields: shifts
 * by a variable count, which BMI2's shrx makes one micro-op on Intel cores
 * where the baseline's shift by cl is two or three) are compiled twice
 * from one always_inline body NAME_body: NAME_portable for the baseline
 * x86-64 and NAME_v3 under GROVE__TARGET_V3; BT_CORE(c, NAME) is the one
 * the plan picks (core_v3). Neither may contract into FMA, so both give
 * the same bytes. Both copies stay out of line, so their callers do not
 * grow. */
#if GROVE__HAVE_TARGETS
#define BT_TWICE(ret, name, params, args)                                                                   \
    static __attribute__((noinline)) ret name##_portable params { return name##_body args; }               \
    GROVE__TARGET_V3 static __attribute__((noinline)) ret name##_v3 params { return name##_body args; }
#define BT_CORE(c, name) ((c)->plan.core_v3 ? name##_v3 : name##_portable)
#else
#define BT_TWICE(ret, name, params, args)                                                                   \
    static __attribute__((noinline)) ret name##_portable params { return name##_body args; }
#define BT_CORE(c, name) name##_portable
#endif
#define BT_INLINE static inline __attribute__((always_inline))

/* Stable LSD radix sort of (*a)[0..g) by their high halves, all below
 * 2^bits (bits <= 32), digits of at most BT_DIGIT bits, constant digits
 * skipped; the result ends in *a (the buffers swap as the passes go),
 * which it returns.
 * Not grove__radix_sort_u64: that one opens a parallel region and
 * allocates per call, while this runs inside tasks on many small runs with
 * the thread's preallocated scratch. */
BT_INLINE uint64_t *bt_lsd_body(uint64_t **a, uint64_t **b, size_t g, int bits)
{
    bt_digits r;
    bt_digits_count(&r, *a, g, 32, bits, BT_DIGIT);
    for (int p = 0; p < r.passes; p++) {
        if (!bt_digits_move(&r, p, (*a)[0], g)) continue;
        bt_digits_scatter(&r, p, *a, *b, g);
        uint64_t *t = *b;
        *b = *a;
        *a = t;
    }
    return *a;
}
BT_TWICE(uint64_t *, bt_lsd, (uint64_t * *a, uint64_t * *b, size_t g, int bits), (a, b, g, bits))

/* The split dimension so far: j replaces *s when its spread is strictly
 * larger, so ties go to the lowest dimension. */
static inline void bt_widest(double spread, size_t j, size_t *s, double *best)
{
    size_t take = (size_t)0 - (size_t)(spread > *best); /* arithmetic, not a branch: a coin flip */
    *s = (j & take) | (*s & ~take);
    *best = spread > *best ? spread : *best;
}

/* The first output slot of the right child of a node at `level` whose
 * slots start at `out` and whose left child holds h points. */
static inline size_t bt_right_out(const bt_ctx *c, const bt_batch *b, size_t out, size_t h, int level)
{
    return out + (c->partition ? h : (size_t)1 << (b->levels - level));
}

#if defined(__GNUC__)
#define BT_PREFETCH(p) __builtin_prefetch(p)
#else
#define BT_PREFETCH(p) ((void)(p))
#endif
/* How many points ahead random reads are prefetched. */
#define BT_AHEAD 16

/* Whether the build stops: the options' cancel flag, read before each
 * batch and at each node of at least BT_TASK_MIN points (one batch of
 * millions of points takes seconds), remembered in c->stopped for every
 * task. The nodes and batches it skips are left unwritten. */
static bool bt_cancelled(const bt_ctx *c)
{
    int stopped;
#pragma omp atomic read
    stopped = *c->stopped;
    if (!stopped && grove__cancelled(c->options)) {
#pragma omp atomic write
        *c->stopped = 1;
        stopped = 1;
    }
    return stopped;
}

#include "build_packed.h"

#define BT_T float
#define BT_K uint32_t
#define BT_(name) name##_f32
#include "build_tree.h"
#undef BT_T
#undef BT_K
#undef BT_

#define BT_T double
#define BT_K uint64_t
#define BT_(name) name##_f64
#include "build_tree.h"
#undef BT_T
#undef BT_K
#undef BT_

/* The packed builder's presort of one batch: quantized records where its
 * layout has them and the data does not crowd them (build_quantized.h),
 * ranks of rank_bits bits otherwise. False, and nothing sorted, when a
 * coordinate is not finite (only where bt_ctx.nonfinite leaves that
 * check to the records' first pass). */
static bool bp_presort(const bt_view *v, bp_tree *t, bool f32, int rank_bits)
{
    if (t->quantized) {
        uint64_t *src = f32 ? quantize_f32(v, t) : quantize_f64(v, t);
        if (src && bq_presort(t, src)) return true;
        if ((t->c->nonfinite && *t->c->nonfinite) || (t->c->overflow && *t->c->overflow)) return false;
        bp_layout(t, false, rank_bits);
    }
    if (f32) presort_f32(v, t);
    else presort_f64(v, t);
    return true;
}

#include "build_select.h"

typedef struct bt_input {
    grove_points points;
    size_t stride;
    const double *rotation;
    double *rotated; /* n x d rotated coordinates in grouped order, or NULL */
} bt_input;

/* Rotate positions [lo, hi) of batch b into the rotated copy. */
static void rotate(const bt_ctx *c, const bt_batch *b, const bt_input *in, size_t lo, size_t hi)
{
    for (size_t p = lo; p < hi; p++)
        grove__bt_rotate_row(in->rotation, in->points, in->stride, bt_row(c, b, (uint32_t)p),
                             in->rotated + (b->start + p) * c->d, 1);
}

/* The packed builder's memory for batch b: the thread's own part of the
 * blocks (alloc_packed), else the batch's slice of the one part, whose
 * lists are n long. A part holds two buffers of `lists` record lists,
 * then d lists each of sorted coordinates and of ranks, `pack_stride`
 * long. */
static void bp_memory(const bt_ctx *c, const bt_batch *b, bp_tree *t)
{
    size_t part = c->pack_by_thread ? (size_t)thread_num() : 0, at = c->pack_by_thread ? 0 : b->start;
    size_t stride = c->pack_stride;
    t->n = stride;
    t->rec[0] = c->rec + part * 2 * c->lists * stride + at;
    t->rec[1] = t->rec[0] + c->lists * stride;
    t->val = c->val + part * c->d * stride + at;
    t->perm = c->perm + part * c->d * stride + at;
}

static void build_batch(const bt_ctx *c, const bt_batch *b, const bt_input *in)
{
    size_t m = b->count, start = b->start;
    if (in->rotated && c->spawn && m >= 2 * BT_GATHER_CHUNK) {
#pragma omp taskloop grainsize(1) default(shared)
        for (size_t lo = 0; lo < m; lo += BT_GATHER_CHUNK)
            rotate(c, b, in, lo, m - lo < BT_GATHER_CHUNK ? m : lo + BT_GATHER_CHUNK);
    } else if (in->rotated) {
        rotate(c, b, in, 0, m);
    }
    bool f32 = !in->rotated && in->points.dtype == GROVE_FLOAT32;
    size_t elem = f32 ? sizeof(float) : sizeof(double);
    const size_t *rows = in->rotated || !c->order ? NULL : c->order + start;
    bt_view ids = {c->base + (rows ? 0 : start * c->stride), c->stride, rows, NULL, NULL};
    if (c->select) {
        bs_tree t = {c, b, {c->skey[0] + start, c->skey[1] + start}, {c->sid[0] + start, c->sid[1] + start}, f32,
                     &c->bs_kernels};
        bs_extent root;
        bs_init(&ids, &t, &root);
        if (c->nonfinite && !bs_finite(&root, c->d, f32)) {
            *c->nonfinite = true;
            return;
        }
        if (c->overflow && !bs_spreads_finite(&t, &root, c->d)) {
            *c->overflow = true;
            return;
        }
#pragma omp taskgroup
        bs_node(&t, 0, 0, m, 0, b->slot, &root);
        return;
    }
    if (c->bits) {
        bp_tree t = {.c = c, .b = b, .count = m, .ids = NULL, .spawn = c->spawn, .partition = c->partition_fn};
        bp_memory(c, b, &t);
        bp_layout(&t, c->quantize, c->bits);
        if (!bp_presort(&ids, &t, f32, c->bits)) return;
        /* t lives on this stack frame: wait for every task that uses it. */
#pragma omp taskgroup
        bp_node(&t, t.deferred >= 0 ? (uint64_t)1 << t.deferred : 0, 0, m, 0, b->slot);
        return;
    }
    bt_tree t = {c, b,
                 {c->base + (rows ? 0 : start * c->stride), c->stride, rows, NULL, c->flag[0] + start},
                 {(const char *)c->x + start * c->d * elem, c->d * elem, NULL, c->id + start, c->flag[1] + start},
                 (char *)c->x + start * c->d * elem, c->id + start, c->map + start,
                 {c->list[0] + start, c->list[1] + start}};
    if (f32) tree_f32(&t);
    else tree_f64(&t);
}

/* Threads take the batches in runs of neighbours, each run (but the last)
 * of at least 1/(BT_RUNS_PER_THREAD * threads) of all points; the
 * exclusive end of run r into run_end[r], and the number of runs back.
 * Neighbouring batches share the cache lines where their slices of the
 * output and of the working memory meet, and two threads that take
 * neighbours at the same time pass those lines back and forth (with many
 * small batches a batch at a time measured up to twice as slow). Several
 * runs per thread keep batches of unequal sizes balanced. */
#define BT_RUNS_PER_THREAD 8
static size_t plan_runs(const bt_batch *batches, size_t count, size_t n, int threads, size_t *run_end)
{
    size_t runs = 0, least = n / ((size_t)threads * BT_RUNS_PER_THREAD), points = 0;
    for (size_t i = 0; i < count; i++) {
        points += batches[i].count;
        if (points >= least || i + 1 == count) {
            run_end[runs++] = i + 1;
            points = 0;
        }
    }
    return runs;
}

/* Every batch, in parallel, in runs (plan_runs); false when cancelled. */
static bool build_all(const bt_ctx *c, const bt_batch *batches, size_t count, const bt_input *in,
                      const grove_options *options, int threads, size_t *run_end)
{
    size_t done = 0, runs = plan_runs(batches, count, c->n, threads, run_end);
#pragma omp parallel num_threads(threads) if (threads > 1) default(shared)
#pragma omp for schedule(dynamic, 1)
    for (size_t r = 0; r < runs; r++) {
        for (size_t i = r ? run_end[r - 1] : 0; i < run_end[r]; i++) {
            if (bt_cancelled(c)) break;
            build_batch(c, &batches[i], in);
            if (options && options->progress) {
                size_t now;
#pragma omp atomic capture
                now = done += batches[i].count;
                if (thread_num() == 0) grove__progress(options, "balltree", (double)now / (double)c->n);
            }
        }
    }
    return !*c->stopped;
}

static grove_status check_rotation(const double *r, size_t d)
{
    for (size_t i = 0; i < d; i++)
        for (size_t j = 0; j < d; j++)
            if (!isfinite(r[i * d + j]))
                return grove__fail(GROVE_INVALID_ARGUMENT, "balltree: rotation[%zu][%zu] is not finite", i, j);
    return GROVE_OK;
}

/* Batch table for the builder; NULL after setting the error. */
static bt_batch *plan_batches(const grove__bt_groups *g, int levels)
{
    grove_balltree_batch *info = grove__calloc(g->count, sizeof *info, "batch layout");
    bt_batch *out = info ? grove__calloc(g->count, sizeof *out, "batch table") : NULL;
    if (out) {
        grove__bt_describe(g, levels, info);
        for (size_t b = 0; b < g->count; b++) {
            bt_batch t = {g->start[b], info[b].count, info[b].slot_offset, info[b].levels};
            out[b] = t;
        }
    }
    grove__free(info);
    return out;
}

/* Working memory, block by block, from the caller's workspace when there
 * is one: each builder's blocks in slots 0-2 (and 4), the sort or
 * selection scratch in BT_SLOT_SCRATCH, the rotated copy in
 * BT_SLOT_ROTATED. */
#define BT_SLOT_SCRATCH 3
#define BT_SLOT_ROTATED 5
static void *bt_take(const bt_ctx *c, int slot, size_t bytes, const char *what)
{
    return grove__work_take(c->workspace, slot, bytes, what);
}

/* Working memory of the packed builder, in bytes: 16 N lists records (two
 * buffers), 12 N d for the sorted coordinates and ranks, 16 max_count sort
 * entries per thread, where N is n, or threads parts (bp_memory) where
 * that is less. With many batches each thread then builds its batches one
 * after another in its own part, which stays in its caches, where a slice
 * per batch would start every batch on memory the others had pushed
 * out. */
static bool alloc_packed(bt_ctx *c, size_t sort, int threads)
{
    /* A part's lists in whole cache lines, a line apart, so two threads
     * never write one line (the blocks are only 16-byte aligned). */
    size_t part = (c->max_count + BP_PART_GAP + BP_PART_ALIGN - 1) / BP_PART_ALIGN * BP_PART_ALIGN;
    c->pack_by_thread = part <= c->n / (size_t)threads && part * (size_t)threads < c->n;
    c->pack_stride = c->pack_by_thread ? part : c->n;
    size_t total = c->pack_by_thread ? part * (size_t)threads : c->n, lists, dims;
    if (!grove__mul_size(total, c->lists, &lists) || !grove__mul_size(lists, 2 * sizeof(uint64_t), &lists) ||
        !grove__mul_size(total, c->d, &dims))
        return false;
    c->rec = bt_take(c, 0, lists, "balltree records");
    c->val = c->rec ? bt_take(c, 1, dims * sizeof(double), "balltree sorted coordinates") : NULL;
    c->perm = c->val ? bt_take(c, 2, dims * sizeof(uint32_t), "balltree ranks") : NULL;
    c->scratch = c->perm ? bt_take(c, BT_SLOT_SCRATCH, sort, "balltree sort scratch") : NULL;
    c->partition_fn = c->partition_default;
    return true;
}

/* Working memory of the selecting builder, in bytes: 2 n (8 d + 4) for
 * the keys and ids (two buffers), 16 max_count per thread for selections. */
static bool alloc_select(bt_ctx *c, size_t sort, int threads)
{
    size_t keys;
    if (!grove__mul_size(c->n, c->d, &keys) || !grove__mul_size(keys, 2 * sizeof(uint64_t), &keys)) return false;
    c->skey[0] = bt_take(c, 0, keys, "balltree keys");
    c->sid[0] = c->skey[0] ? bt_take(c, 1, 2 * c->n * sizeof(uint32_t), "balltree ids") : NULL;
    /* coordinates, two buffers of lists, sorted coordinates, ranks */
    c->leaf_bytes = c->leaf_max * (c->d * sizeof(double) + 2 * c->lists * sizeof(uint64_t) + c->d * sizeof(double) +
                               c->d * sizeof(uint32_t));
    c->leaf_work = c->sid[0] ? bt_take(c, 2, c->leaf_bytes * (size_t)threads, "balltree leaf memory") : NULL;
    c->scratch = c->leaf_work ? bt_take(c, BT_SLOT_SCRATCH, sort, "balltree selection scratch") : NULL;
    c->skey[1] = c->skey[0] ? c->skey[0] + c->n * c->d : NULL;
    c->partition_fn = c->partition_default;
    c->sid[1] = c->sid[0] ? c->sid[0] + c->n : NULL;
    return true;
}

/* Working memory of the presorted builder, in bytes: 8 n lists (two
 * buffers of `lists` labels per point), n flags, 16 max_count sort entries
 * per thread; when a batch has more than BT_LOCAL points (relabelling), n
 * d elem local coordinates, 8 n for the two label maps and n more flags. */
static bool alloc_presorted(bt_ctx *c, size_t elem, size_t sort)
{
    bool local = c->max_count > BT_LOCAL;
    size_t coords, lists;
    if (!grove__mul_size(c->n, c->d, &coords) || !grove__mul_size(coords, local ? elem : 0, &coords) ||
        !grove__mul_size(c->n, c->lists, &lists) || !grove__mul_size(lists, 2 * sizeof(uint32_t), &lists))
        return false;
    c->x = bt_take(c, 0, coords, "balltree local coordinates");
    uint32_t *l = c->x ? bt_take(c, 1, lists, "balltree lists") : NULL;
    c->id = l ? bt_take(c, 2, local ? 2 * sizeof(uint32_t) * c->n : 0, "balltree labels") : NULL;
    c->flag[0] = c->id ? bt_take(c, 4, (local ? 2 : 1) * c->n, "balltree flags") : NULL;
    c->scratch = c->flag[0] ? bt_take(c, BT_SLOT_SCRATCH, sort, "balltree sort scratch") : NULL;
    c->list[0] = l;
    c->list[1] = l ? l + c->lists * c->n : NULL;
    c->map = c->id ? c->id + (local ? c->n : 0) : NULL;
    c->flag[1] = c->flag[0] ? c->flag[0] + (local ? c->n : 0) : NULL;
    return true;
}

/* Working memory for the builder the batches allow (c->bits), plus 8 n d
 * bytes for the rotated coordinates with a rotation. */
static grove_status alloc_work(bt_ctx *c, bt_input *in, size_t elem, int threads)
{
    size_t sort, rotated = 0;
    bool sized = grove__mul_size(c->max_count, 2 * (size_t)threads, &sort) &&
                 grove__mul_size(sort, sizeof(uint64_t), &sort) &&
                 (!in->rotation || (grove__mul_size(c->n, c->d, &rotated) &&
                                    grove__mul_size(rotated, sizeof(double), &rotated)));
    bool made = sized && (c->bits     ? alloc_packed(c, sort, threads)
                          : c->select ? alloc_select(c, sort, threads)
                                      : alloc_presorted(c, elem, sort));
    if (!made)
        return grove__fail(GROVE_TOO_LARGE, "balltree: working memory for %zu x %zu points is too large", c->n, c->d);
    in->rotated = c->scratch && rotated ? bt_take(c, BT_SLOT_ROTATED, rotated, "balltree rotated coordinates") : NULL;
    if (!c->scratch || (rotated && !in->rotated)) return GROVE_OUT_OF_MEMORY;
    if (in->rotated) {
        c->base = (const char *)in->rotated;
        c->stride = c->d * sizeof(double);
    }
    return GROVE_OK;
}

static void free_work(bt_ctx *c, bt_input *in)
{
    void *blocks[] = {c->x,   c->list[0], c->id,      c->flag[0],  c->scratch,  c->rec,
                      c->val, c->perm,    c->skey[0], c->sid[0],   c->leaf_work, in->rotated};
    for (size_t i = 0; i < sizeof blocks / sizeof *blocks; i++) grove__work_release(c->workspace, blocks[i]);
}

/* The plan's builder and vector code into c. */
static void bt_apply_plan(bt_ctx *c, grove__bt_plan plan)
{
    c->plan = plan;
    c->bits = plan.builder == GROVE__BT_PACKED ? plan.bits : 0;
    c->select = plan.builder == GROVE__BT_SELECTING;
    c->leaf_bits = plan.leaf_bits;
    c->leaf_max = plan.leaf_max;
    c->small_bits = plan.small_bits;
    c->quantize = plan.quantize;
    grove__bp_partition_fn *fast = plan.partition_isa == GROVE__BT_AVX512 ? grove__bp_partition_avx512()
                                   : plan.partition_isa == GROVE__BT_AVX2 ? grove__bp_partition_avx2()
                                                                          : NULL;
    c->partition_default = fast ? fast : grove__bp_partition_portable;
    if (plan.select_isa == GROVE__BT_AVX512) grove__bs_kernels_avx512(&c->bs_kernels);
    else if (plan.select_isa == GROVE__BT_AVX2) grove__bs_kernels_avx2(&c->bs_kernels);
    c->presort_kernels =
        plan.presort_avx512 && grove__bt_presort_kernels_avx512(&c->presort_avx512) ? &c->presort_avx512 : NULL;
}

/* The build on the points scaled down (grove__bt_scaled), whose spreads
 * all compare; the output is the tree of the points as they are. */
static grove_status bt_build_scaled(grove_points points, double magnitude, const grove_balltree_params *params,
                                    int64_t *indices, uint8_t *mask, const grove_options *options)
{
    double *x = grove__bt_scaled(points, magnitude, params && params->rotation);
    if (!x) return GROVE_OUT_OF_MEMORY;
    grove_status s = grove_balltree_build(grove_points_f64(x, points.n, points.d), params, indices, mask, options);
    grove__free(x);
    return s;
}

grove_status grove_balltree_build(grove_points points, const grove_balltree_params *params, int64_t *indices,
                                  uint8_t *mask, const grove_options *options)
{
    grove__clear_error();
    grove_balltree_params p;
    grove_options o = grove__options(options);
    grove_status s = grove__bt_params(params, &p);
    if (s == GROVE_OK) s = grove__points_check_shape(points);
    if (s == GROVE_OK && p.rotation && points.n) s = check_rotation(p.rotation, points.d);
    if (s != GROVE_OK) return s;
    if (points.n && !indices) return grove__fail(GROVE_INVALID_ARGUMENT, "balltree: indices is NULL");
    grove__bt_groups g;
    s = grove__bt_groups_make(points.n, &p, &g);
    if (s != GROVE_OK) return s;
    for (size_t b = 0; b < g.count; b++)
        if (g.start[b + 1] - g.start[b] > UINT32_MAX) {
            s = grove__fail(GROVE_TOO_LARGE, "balltree: batch %lld has %zu points, more than 2^32 - 1",
                            (long long)g.ids[b], g.start[b + 1] - g.start[b]);
            grove__bt_groups_free(&g);
            return s;
        }

    bt_input in = {points, grove__points_stride(points), p.rotation, NULL};
    bool partition = p.levels != GROVE_BALLTREE_FULL;
    int threads = grove__bt_threads(g.count, points.n, o.threads, !p.workspace), stopped = 0;
    bt_ctx c = {.options = options, .workspace = p.workspace, .n = points.n, .d = points.d,
                .lists = points.d + partition, .base = points.data, .stride = in.stride, .order = g.order,
                .indices = indices, .mask = mask, .partition = partition, .spawn = threads > 1, .stopped = &stopped};
    bt_batch *batches = plan_batches(&g, p.levels);
    size_t *run_end = batches ? grove__calloc(g.count, sizeof *run_end, "batch runs") : NULL;
    for (size_t b = 0; batches && b < g.count; b++)
        c.max_count = batches[b].count > c.max_count ? batches[b].count : c.max_count;
    grove__bt_plan_input plan_in = {g.count, c.max_count, c.d, partition, p.rotation != NULL, grove__cpu()};
    bt_apply_plan(&c, grove__bt_plan_make(&plan_in));
    /* Every coordinate must be finite: checked by the first pass where the
     * plan says so (the batch stops there, before any output), else by a
     * scan before the build. */
    bool nonfinite = false, overflow = false;
    double magnitude = 0;
    if (c.plan.first_pass_checks) {
        c.nonfinite = &nonfinite;
        c.overflow = &overflow;
    } else {
        s = grove__points_validate_range(points, threads, &magnitude);
        overflow = grove__bt_spread_overflows(magnitude, points.d, p.rotation != NULL);
    }
    bool f32 = !p.rotation && points.dtype == GROVE_FLOAT32;
    if (s == GROVE_OK && !overflow)
        s = run_end ? alloc_work(&c, &in, f32 ? sizeof(float) : sizeof(double), threads) : GROVE_OUT_OF_MEMORY;
    if (s == GROVE_OK && !overflow && !build_all(&c, batches, g.count, &in, options, threads, run_end))
        s = grove__fail(GROVE_CANCELLED, "balltree: cancelled");
    if (s == GROVE_OK && nonfinite) { /* the scan names the first one */
        s = grove__points_validate(points, threads);
        if (s == GROVE_OK) s = grove__fail(GROVE_INVALID_ARGUMENT, "points: a coordinate is not finite");
    }
    if (s == GROVE_OK && !overflow) grove__progress(options, "balltree", 1.0);
    free_work(&c, &in);
    grove__free(run_end);
    grove__free(batches);
    grove__bt_groups_free(&g);
    /* Spreads that overflow (found before the build, or by a first pass
     * that checks the coordinates itself) compare once the points are
     * scaled. */
    if (s == GROVE_OK && overflow && c.overflow) s = grove__points_validate_range(points, threads, &magnitude);
    if (s == GROVE_OK && overflow) s = bt_build_scaled(points, magnitude, params, indices, mask, options);
    return s;
}
