/* grove_balltree_build: validation, working memory, and the parallel
 * driver over batches; the plan (plan.c) names the builder. */
#include "builder.h"

#include <stdlib.h>
#include <math.h>
#include <string.h>

/* A thread's part of the packed builder's memory: whole multiples of
 * BP_PART_ALIGN entries, at least BP_PART_GAP spare. */
#define BP_PART_ALIGN 64
#define BP_PART_GAP 16

bool grove__bt_cancelled(const grove__bt_ctx *c)
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

/* The builders read dense rows of doubles in grouped order: the input,
 * else a copy (rotated, widened from float32, strided, or of batches out
 * of row order). */
typedef struct bt_input {
    grove_points points;
    size_t stride;
    const double *rotation;
    double *copy; /* n x d, or NULL */
} bt_input;

/* Positions [lo, hi) of batch b into the copy. */
static void copy_rows(const grove__bt_ctx *c, const grove__bt_batch *b, const bt_input *in, size_t lo, size_t hi)
{
    for (size_t p = lo; p < hi; p++) {
        size_t row = grove__bt_row(c, b, (uint32_t)p);
        double *y = in->copy + (b->start + p) * c->d;
        if (in->rotation) grove__bt_rotate_row(in->rotation, in->points, in->stride, row, y);
        else
            for (size_t j = 0; j < c->d; j++) y[j] = grove__coord(in->points, in->stride, row, j);
    }
}

static void build_batch(const grove__bt_ctx *c, const grove__bt_batch *b, const bt_input *in)
{
    size_t m = b->count;
    if (in->copy && c->spawn && m >= 2 * BT_GATHER_CHUNK) {
#pragma omp taskloop grainsize(1) default(shared)
        for (size_t lo = 0; lo < m; lo += BT_GATHER_CHUNK)
            copy_rows(c, b, in, lo, m - lo < BT_GATHER_CHUNK ? m : lo + BT_GATHER_CHUNK);
    } else if (in->copy) {
        copy_rows(c, b, in, 0, m);
    }
    size_t row = c->d * sizeof(double);
    grove__bt_view ids = {c->base + b->start * row, row, NULL, NULL};
    c->build(c, b, &ids);
}

/* Threads take the batches in runs of neighbours (run r ends at
 * run_end[r]), each of at least 1/(BT_RUNS_PER_THREAD threads) of the
 * points: neighbours share cache lines of output and working memory. */
#define BT_RUNS_PER_THREAD 8
static size_t plan_runs(const grove__bt_batch *batches, size_t count, size_t n, int threads, size_t *run_end)
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
static bool build_all(const grove__bt_ctx *c, const grove__bt_batch *batches, size_t count, const bt_input *in,
                      const grove_options *options, int threads, size_t *run_end)
{
    size_t done = 0, runs = plan_runs(batches, count, c->n, threads, run_end);
#pragma omp parallel num_threads(threads) if (threads > 1) default(shared)
#pragma omp for schedule(dynamic, 1)
    for (size_t r = 0; r < runs; r++) {
        for (size_t i = r ? run_end[r - 1] : 0; i < run_end[r]; i++) {
            if (grove__bt_cancelled(c)) break;
            build_batch(c, &batches[i], in);
            if (options && options->progress) {
                size_t now;
#pragma omp atomic capture
                now = done += batches[i].count;
                if (grove__bt_thread() == 0) grove__progress(options, "balltree", (double)now / (double)c->n);
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
static grove__bt_batch *plan_batches(const grove__bt_groups *g, int levels)
{
    grove_balltree_batch *info = grove__calloc(g->count, sizeof *info, "batch layout");
    grove__bt_batch *out = info ? grove__calloc(g->count, sizeof *out, "batch table") : NULL;
    if (out) {
        grove__bt_describe(g, levels, info);
        for (size_t b = 0; b < g->count; b++) {
            grove__bt_batch t = {g->start[b], info[b].count, info[b].slot_offset, info[b].levels};
            out[b] = t;
        }
    }
    grove__free(info);
    return out;
}

/* Working memory from the workspace when there is one, in slots. */
#define BT_SLOT_SCRATCH 3
#define BT_SLOT_COPY 5
#define BT_TAKE(c, slot, bytes, what) grove__work_take((c)->workspace, slot, bytes, what)

/* The packed builder's memory: two buffers of record lists, d lists of
 * sorted coordinates and of ranks, n long, or in a part per thread where
 * that is less (each thread's batches then stay in its caches). */
static bool alloc_packed(grove__bt_ctx *c, size_t sort, int threads)
{
    /* Parts in whole cache lines, a line apart: no two threads write one. */
    size_t part = (c->max_count + BP_PART_GAP + BP_PART_ALIGN - 1) / BP_PART_ALIGN * BP_PART_ALIGN;
    c->pack_by_thread = part <= c->n / (size_t)threads && part * (size_t)threads < c->n;
    c->pack_stride = c->pack_by_thread ? part : c->n;
    size_t total = c->pack_by_thread ? part * (size_t)threads : c->n, lists, dims;
    if (!grove__mul_size(total, c->lists, &lists) || !grove__mul_size(lists, 2 * sizeof(uint64_t), &lists) ||
        !grove__mul_size(total, c->d, &dims))
        return false;
    c->rec = BT_TAKE(c, 0, lists, "balltree records");
    c->val = c->rec ? BT_TAKE(c, 1, dims * sizeof(double), "balltree sorted coordinates") : NULL;
    c->perm = c->val ? BT_TAKE(c, 2, dims * sizeof(uint32_t), "balltree ranks") : NULL;
    c->scratch = c->perm ? BT_TAKE(c, BT_SLOT_SCRATCH, sort, "balltree sort scratch") : NULL;
    return true;
}

/* The selecting builder's memory: keys and ids, and leaf memory per thread. */
static bool alloc_select(grove__bt_ctx *c, size_t sort, int threads)
{
    size_t keys;
    if (!grove__mul_size(c->n, c->d, &keys) || !grove__mul_size(keys, 2 * sizeof(uint64_t), &keys)) return false;
    c->skey[0] = BT_TAKE(c, 0, keys, "balltree keys");
    c->sid[0] = c->skey[0] ? BT_TAKE(c, 1, 2 * c->n * sizeof(uint32_t), "balltree ids") : NULL;
    /* coordinates, two buffers of lists, sorted coordinates, ranks */
    c->leaf_bytes = c->plan.leaf_max * (c->d * sizeof(double) + 2 * c->lists * sizeof(uint64_t) +
                                        c->d * sizeof(double) + c->d * sizeof(uint32_t));
    c->leaf_work = c->sid[0] ? BT_TAKE(c, 2, c->leaf_bytes * (size_t)threads, "balltree leaf memory") : NULL;
    c->scratch = c->leaf_work ? BT_TAKE(c, BT_SLOT_SCRATCH, sort, "balltree selection scratch") : NULL;
    c->skey[1] = c->skey[0] ? c->skey[0] + c->n * c->d : NULL;
    c->sid[1] = c->sid[0] ? c->sid[0] + c->n : NULL;
    return true;
}

/* The presorted builder's memory: lists, flags, and where it relabels
 * (batches above BT_LOCAL points) local coordinates, label maps, flags. */
static bool alloc_presorted(grove__bt_ctx *c, size_t sort)
{
    bool local = c->max_count > BT_LOCAL;
    size_t coords, lists;
    if (!grove__mul_size(c->n, c->d, &coords) || !grove__mul_size(coords, local ? sizeof(double) : 0, &coords) ||
        !grove__mul_size(c->n, c->lists, &lists) || !grove__mul_size(lists, 2 * sizeof(uint32_t), &lists))
        return false;
    c->x = BT_TAKE(c, 0, coords, "balltree local coordinates");
    uint32_t *l = c->x ? BT_TAKE(c, 1, lists, "balltree lists") : NULL;
    c->id = l ? BT_TAKE(c, 2, local ? 2 * sizeof(uint32_t) * c->n : 0, "balltree labels") : NULL;
    c->flag[0] = c->id ? BT_TAKE(c, 4, (local ? 2 : 1) * c->n, "balltree flags") : NULL;
    c->scratch = c->flag[0] ? BT_TAKE(c, BT_SLOT_SCRATCH, sort, "balltree sort scratch") : NULL;
    c->list[0] = l;
    c->list[1] = l ? l + c->lists * c->n : NULL;
    c->map = c->id ? c->id + (local ? c->n : 0) : NULL;
    c->flag[1] = c->flag[0] ? c->flag[0] + (local ? c->n : 0) : NULL;
    return true;
}

/* Working memory for the plan's builder, and the copy of the points. */
static grove_status alloc_work(grove__bt_ctx *c, bt_input *in, int threads)
{
    size_t sort, copy = 0;
    bool copied = in->rotation || in->points.dtype != GROVE_FLOAT64 || c->order || in->stride != c->d * sizeof(double);
    bool sized = grove__mul_size(c->max_count, 2 * (size_t)threads, &sort) &&
                 grove__mul_size(sort, sizeof(uint64_t), &sort) &&
                 (!copied || (grove__mul_size(c->n, c->d, &copy) && grove__mul_size(copy, sizeof(double), &copy)));
    bool made = sized && (c->plan.builder == GROVE__BT_PACKED      ? alloc_packed(c, sort, threads)
                          : c->plan.builder == GROVE__BT_SELECTING ? alloc_select(c, sort, threads)
                                                                   : alloc_presorted(c, sort));
    if (!made)
        return grove__fail(GROVE_TOO_LARGE, "balltree: working memory for %zu x %zu points is too large", c->n, c->d);
    in->copy = c->scratch && copy ? BT_TAKE(c, BT_SLOT_COPY, copy, "balltree coordinates") : NULL;
    if (!c->scratch || (copy && !in->copy)) return GROVE_OUT_OF_MEMORY;
    if (in->copy) c->base = (const char *)in->copy;
    return GROVE_OK;
}

static void free_work(grove__bt_ctx *c, bt_input *in)
{
    void *blocks[] = {c->x,   c->list[0], c->id,      c->flag[0],  c->scratch,  c->rec,
                      c->val, c->perm,    c->skey[0], c->sid[0],   c->leaf_work, in->copy};
    for (size_t i = 0; i < sizeof blocks / sizeof *blocks; i++) grove__work_release(c->workspace, blocks[i]);
}

/* The plan's builder and vector code into c. */
static void bt_apply_plan(grove__bt_ctx *c, grove__bt_plan plan)
{
    c->plan = plan;
    c->build = plan.builder == GROVE__BT_PACKED      ? grove__bt_packed_batch
               : plan.builder == GROVE__BT_SELECTING ? grove__bt_selecting_batch
                                                     : grove__bt_presorted_batch;
    grove__packed_partition_fn *fast = plan.partition_isa == GROVE__BT_AVX512 ? grove__packed_partition_avx512()
                                       : plan.partition_isa == GROVE__BT_AVX2 ? grove__packed_partition_avx2()
                                                                              : NULL;
    c->partition_fn = fast ? fast : grove__packed_partition_portable;
    if (plan.select_isa == GROVE__BT_AVX512) grove__bs_kernels_avx512(&c->bs_kernels);
    else if (plan.select_isa == GROVE__BT_AVX2) grove__bs_kernels_avx2(&c->bs_kernels);
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
    grove__bt_ctx c = {.options = options, .workspace = p.workspace, .n = points.n, .d = points.d,
                .lists = points.d + partition, .base = points.data, .order = g.order,
                .indices = indices, .mask = mask, .partition = partition, .spawn = threads > 1, .stopped = &stopped};
    grove__bt_batch *batches = plan_batches(&g, p.levels);
    size_t *run_end = batches ? grove__calloc(g.count, sizeof *run_end, "batch runs") : NULL;
    for (size_t b = 0; batches && b < g.count; b++)
        c.max_count = batches[b].count > c.max_count ? batches[b].count : c.max_count;
    grove__bt_plan_input plan_in = {g.count, c.max_count, c.d, partition, p.rotation != NULL, grove__cpu()};
    bt_apply_plan(&c, grove__bt_plan_make(&plan_in));
    /* Coordinates are checked by the first pass where the plan says so
     * (before any output), else by a scan first. */
    bool nonfinite = false, rescale = false;
    double magnitude = 0;
    if (c.plan.first_pass_checks) {
        c.nonfinite = &nonfinite;
        c.overflow = &rescale;
    } else {
        s = grove__points_validate_range(points, threads, &magnitude);
        rescale = grove__bt_needs_scaling(magnitude, points.d, p.rotation != NULL);
    }
    if (s == GROVE_OK && !rescale) s = run_end ? alloc_work(&c, &in, threads) : GROVE_OUT_OF_MEMORY;
    if (s == GROVE_OK && !rescale && !build_all(&c, batches, g.count, &in, options, threads, run_end))
        s = grove__fail(GROVE_CANCELLED, "balltree: cancelled");
    if (s == GROVE_OK && nonfinite) { /* the scan names the first one */
        s = grove__points_validate(points, threads);
        if (s == GROVE_OK) s = grove__fail(GROVE_INVALID_ARGUMENT, "points: a coordinate is not finite");
    }
    if (s == GROVE_OK && !rescale) grove__progress(options, "balltree", 1.0);
    free_work(&c, &in);
    grove__free(run_end);
    grove__free(batches);
    grove__bt_groups_free(&g);
    /* Overflowing spreads (and rotations that would underflow) compare
     * once the points are scaled: the same tree. */
    if (s == GROVE_OK && rescale && c.overflow) s = grove__points_validate_range(points, threads, &magnitude);
    double *x = s == GROVE_OK && rescale ? grove__bt_scaled(points, magnitude, p.rotation != NULL) : NULL;
    if (x) s = grove_balltree_build(grove_points_f64(x, points.n, points.d), params, indices, mask, options);
    else if (s == GROVE_OK && rescale) s = GROVE_OUT_OF_MEMORY;
    grove__free(x);
    return s;
}
