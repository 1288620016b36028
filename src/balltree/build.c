/* grove_balltree_build: validation, working memory, and the parallel driver
 * over batches. The per-node work lives in build_tree.h. */
#include "balltree_internal.h"

#include <math.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

/* Nodes of at most BT_SMALL points are finished in place (build_tree.h). */
#define BT_SMALL 8
/* Nodes of at least BT_TASK_MIN points hand their left child to a task. */
#define BT_TASK_MIN 4096
/* Rows per task when a large batch is copied into the working columns. */
#define BT_GATHER_CHUNK 32768

typedef struct bt_ctx {
    size_t n, d;       /* points in the working columns, dimensions */
    void *col[2];      /* ping-pong columns: d columns of n coordinates each */
    uint32_t *pos[2];  /* batch-local position (= rank of the row) per record */
    int64_t *indices;  /* outputs */
    uint8_t *mask;
    const size_t *order; /* grouped position -> input row, NULL = identity */
    bool partition;    /* partition mode (no padding) */
    bool spawn;        /* running in a team: create tasks */
} bt_ctx;

typedef struct bt_batch {
    size_t start;  /* first grouped position */
    size_t count;  /* points */
    size_t slot;   /* first output slot */
    int levels;    /* L (full) or K (partition) */
} bt_batch;

static inline size_t bt_row(const bt_ctx *c, const bt_batch *b, uint32_t p)
{
    size_t g = b->start + p;
    return c->order ? c->order[g] : g;
}

static inline void bt_emit(const bt_ctx *c, size_t slot, size_t row, uint8_t real)
{
    c->indices[slot] = (int64_t)row;
    if (c->mask) c->mask[slot] = real;
}

#if defined(__GNUC__)
#define BT_INLINE inline __attribute__((always_inline))
#else
#define BT_INLINE inline
#endif

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

/* What the working columns hold. */
typedef enum bt_kind { BT_COPY_F32, BT_COPY_F64, BT_ROTATED } bt_kind;

typedef struct bt_input {
    grove_points points;
    size_t stride;
    const double *rotation;
    bt_kind kind;
} bt_input;

/* Positions [lo, hi) of batch b into the working columns of buffer 0. */
static void gather(const bt_ctx *c, const bt_batch *b, const bt_input *in, size_t lo, size_t hi)
{
    if (in->kind == BT_COPY_F32) {
        gather_f32(c, b, in->points, in->stride, lo, hi);
    } else if (in->kind == BT_COPY_F64) {
        gather_f64(c, b, in->points, in->stride, lo, hi);
    } else {
        double *col = c->col[0];
        for (size_t p = lo; p < hi; p++) {
            size_t g = b->start + p;
            grove__bt_rotate_row(in->rotation, in->points, in->stride, bt_row(c, b, (uint32_t)p), col + g, c->n);
            c->pos[0][g] = (uint32_t)p;
        }
    }
}

static void build_batch(const bt_ctx *c, const bt_batch *b, const bt_input *in)
{
    size_t m = b->count;
    if (c->spawn && m >= 2 * BT_GATHER_CHUNK) {
#pragma omp taskloop grainsize(1) default(shared)
        for (size_t lo = 0; lo < m; lo += BT_GATHER_CHUNK)
            gather(c, b, in, lo, m - lo < BT_GATHER_CHUNK ? m : lo + BT_GATHER_CHUNK);
    } else {
        gather(c, b, in, 0, m);
    }
    if (in->kind == BT_COPY_F32) node_f32(c, b, 0, b->start, m, 0, b->slot);
    else node_f64(c, b, 0, b->start, m, 0, b->slot);
}

static int thread_num(void)
{
#ifdef _OPENMP
    return omp_get_thread_num();
#else
    return 0;
#endif
}

/* Every batch, in parallel; false when cancelled. */
static bool build_all(const bt_ctx *c, const bt_batch *batches, size_t count, const bt_input *in,
                      const grove_options *options, int threads)
{
    int stop = 0;
    size_t done = 0;
#pragma omp parallel num_threads(threads) if (threads > 1) default(shared)
#pragma omp for schedule(dynamic, 1)
    for (size_t i = 0; i < count; i++) {
        int stopped;
#pragma omp atomic read
        stopped = stop;
        if (stopped) continue;
        if (grove__cancelled(options)) {
#pragma omp atomic write
            stop = 1;
            continue;
        }
        build_batch(c, &batches[i], in);
        if (options && options->progress) {
            size_t now;
#pragma omp atomic capture
            now = done += batches[i].count;
            if (thread_num() == 0) grove__progress(options, "balltree", (double)now / (double)c->n);
        }
    }
    return !stop;
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

/* Working memory: 2 n d coordinates + 2 n uint32. */
static grove_status alloc_work(bt_ctx *c, size_t elem)
{
    size_t coords;
    if (!grove__mul_size(c->n, c->d, &coords) || !grove__mul_size(coords, elem, &coords))
        return grove__fail(GROVE_TOO_LARGE, "balltree: working copy of %zu x %zu points is too large", c->n, c->d);
    for (int b = 0; b < 2; b++) {
        c->col[b] = grove__malloc(coords, "balltree working coordinates");
        c->pos[b] = grove__calloc(c->n, sizeof(uint32_t), "balltree positions");
        if (!c->col[b] || !c->pos[b]) return GROVE_OUT_OF_MEMORY;
    }
    return GROVE_OK;
}

static void free_work(bt_ctx *c)
{
    for (int b = 0; b < 2; b++) {
        grove__free(c->col[b]);
        grove__free(c->pos[b]);
    }
}

grove_status grove_balltree_build(grove_points points, const grove_balltree_params *params, int64_t *indices,
                                  uint8_t *mask, const grove_options *options)
{
    grove__clear_error();
    grove_balltree_params p;
    grove_status s = grove__bt_params(params, &p);
    if (s == GROVE_OK) s = grove_points_validate(points);
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

    grove_options o = grove__options(options);
    bt_input in = {points, grove__points_stride(points), p.rotation,
                   p.rotation ? BT_ROTATED : points.dtype == GROVE_FLOAT32 ? BT_COPY_F32 : BT_COPY_F64};
    bt_ctx c = {points.n, points.d, {NULL, NULL}, {NULL, NULL}, indices, mask, g.order,
                p.levels != GROVE_BALLTREE_FULL, o.threads > 1};
    bt_batch *batches = plan_batches(&g, p.levels);
    s = batches ? alloc_work(&c, in.kind == BT_COPY_F32 ? sizeof(float) : sizeof(double)) : GROVE_OUT_OF_MEMORY;
    if (s == GROVE_OK && !build_all(&c, batches, g.count, &in, options, o.threads))
        s = grove__fail(GROVE_CANCELLED, "balltree: cancelled");
    if (s == GROVE_OK) grove__progress(options, "balltree", 1.0);
    free_work(&c);
    grove__free(batches);
    grove__bt_groups_free(&g);
    return s;
}
