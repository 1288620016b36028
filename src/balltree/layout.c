/* Ball tree layout: batch grouping, slots per batch, ball counts, threads. */
#include "balltree_internal.h"
#include "parallel.h"

#include <stdlib.h>

void grove_balltree_params_init(grove_balltree_params *params)
{
    if (!params) return;
    params->batch = NULL;
    params->levels = GROVE_BALLTREE_FULL;
    params->rotation = NULL;
    params->workspace = NULL;
}

grove_status grove__bt_params(const grove_balltree_params *params, grove_balltree_params *out)
{
    grove_balltree_params_init(out);
    if (params) *out = *params;
    if (out->levels < GROVE_BALLTREE_FULL)
        return grove__fail(GROVE_INVALID_ARGUMENT,
                           "balltree: levels must be GROVE_BALLTREE_FULL (-1) or >= 0, got %d", out->levels);
    return GROVE_OK;
}

int grove__bt_full_levels(size_t m)
{
    int L = 0;
    while (((size_t)2 << L) < m) L++; /* m <= SIZE_MAX / 4 keeps this finite */
    return L;
}

void grove__bt_groups_free(grove__bt_groups *groups)
{
    grove__free(groups->ids);
    grove__free(groups->start);
    grove__free(groups->order);
    *groups = (grove__bt_groups){0, NULL, NULL, NULL};
}

static grove_status alloc_groups(grove__bt_groups *g, size_t count)
{
    g->count = count;
    g->ids = grove__calloc(count, sizeof *g->ids, "batch ids");
    g->start = grove__calloc(count + 1, sizeof *g->start, "batch offsets");
    return g->ids && g->start ? GROVE_OK : GROVE_OUT_OF_MEMORY;
}

static inline int64_t id_at(const int64_t *ids, const size_t *order, size_t i) { return ids[order ? order[i] : i]; }

/* The end of the run of equal ids from a, by doubling steps and halving:
 * a batch costs the log of its size. */
static size_t run_end(const int64_t *ids, const size_t *order, size_t a, size_t n)
{
    size_t lo = a, step = 1; /* the id at lo is a's */
    while (step < n - lo && id_at(ids, order, lo + step) == id_at(ids, order, a)) {
        lo += step;
        step *= 2;
    }
    size_t hi = step < n - lo ? lo + step : n; /* the id at hi differs, or hi == n */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (id_at(ids, order, mid) == id_at(ids, order, a)) lo = mid;
        else hi = mid;
    }
    return hi;
}

/* The batches of ids read in `order` (grouped position -> row, NULL: the
 * identity), where equal ids sit side by side, ascending: every run is a
 * batch. g takes order. */
static grove_status group_runs(size_t n, const int64_t *ids, size_t *order, grove__bt_groups *g)
{
    size_t count = 0, b = 0;
    g->order = order;
    for (size_t a = 0; a < n; a = run_end(ids, order, a, n)) count++;
    if (alloc_groups(g, count) != GROVE_OK) return GROVE_OUT_OF_MEMORY;
    for (size_t a = 0; a < n; a = run_end(ids, order, a, n)) {
        g->ids[b] = id_at(ids, order, a);
        g->start[b++] = a;
    }
    g->start[count] = n;
    return GROVE_OK;
}

typedef struct id_row {
    int64_t id;
    size_t row;
} id_row;

static int by_id_row(const void *a, const void *b)
{
    const id_row *x = a, *y = b;
    if (x->id != y->id) return x->id < y->id ? -1 : 1;
    return (x->row > y->row) - (x->row < y->row);
}

/* Ids out of order: sorted by (id, row) by counting where they are small
 * (max < 2n + 2), else by sorting (id, row) pairs. */
static grove_status group_unsorted(size_t n, const int64_t *ids, size_t max_id, grove__bt_groups *g)
{
    size_t *order = grove__calloc(n, sizeof *order, "batch order"), *next = NULL;
    id_row *pairs = NULL;
    bool counting = max_id / 2 <= n;
    if (order && counting && (next = grove__calloc(max_id + 1, sizeof *next, "batch id counts"))) {
        for (size_t i = 0; i < n; i++) next[ids[i]]++;
        for (size_t v = 0, at = 0; v <= max_id; v++) { /* the next free position of id v */
            size_t m = next[v];
            next[v] = at;
            at += m;
        }
        for (size_t i = 0; i < n; i++) order[next[ids[i]]++] = i;
    } else if (order && !counting && (pairs = grove__calloc(n, sizeof *pairs, "batch sort"))) {
        for (size_t i = 0; i < n; i++) pairs[i] = (id_row){ids[i], i};
        qsort(pairs, n, sizeof *pairs, by_id_row);
        for (size_t i = 0; i < n; i++) order[i] = pairs[i].row;
    }
    bool made = next || pairs;
    grove__free(next);
    grove__free(pairs);
    if (!made) grove__free(order);
    return made ? group_runs(n, ids, order, g) : GROVE_OUT_OF_MEMORY;
}

grove_status grove__bt_groups_make(size_t n, const grove_balltree_params *params, grove__bt_groups *groups)
{
    grove__bt_groups g = {0, NULL, NULL, NULL};
    *groups = g;
    const int64_t *ids = params->batch;
    grove_status s;
    if (n == 0) {
        s = alloc_groups(&g, 0);
    } else if (!ids) {
        s = alloc_groups(&g, 1);
        if (s == GROVE_OK) g.start[1] = n;
    } else {
        /* Ors and subtractions, which vectorise: the sign bit of signs says an
         * id is negative, that of falls an id is below the one before. */
        uint64_t signs = (uint64_t)ids[0], falls = 0;
        for (size_t i = 1; i < n; i++) {
            signs |= (uint64_t)ids[i];
            falls |= (uint64_t)ids[i] - (uint64_t)ids[i - 1];
        }
        int64_t max_id = ids[0];
        if (signs >> 63)
            for (size_t i = 0; i < n; i++)
                if (ids[i] < 0)
                    return grove__fail(GROVE_INVALID_ARGUMENT, "balltree: batch id %lld at index %zu is negative",
                                       (long long)ids[i], i);
        for (size_t i = 1; falls >> 63 && i < n; i++) max_id = ids[i] > max_id ? ids[i] : max_id;
        s = falls >> 63 ? group_unsorted(n, ids, (size_t)max_id, &g) : group_runs(n, ids, NULL, &g);
    }
    if (s != GROVE_OK) {
        grove__bt_groups_free(&g);
        return s;
    }
    *groups = g;
    return GROVE_OK;
}

void grove__bt_describe(const grove__bt_groups *groups, int levels, grove_balltree_batch *out)
{
    size_t slot = 0;
    for (size_t b = 0; b < groups->count; b++) {
        size_t m = groups->start[b + 1] - groups->start[b];
        grove_balltree_batch *o = &out[b];
        o->id = groups->ids[b];
        o->count = m;
        o->slot_offset = slot;
        if (levels == GROVE_BALLTREE_FULL) {
            o->levels = grove__bt_full_levels(m);
            o->slots = (size_t)2 << o->levels;
        } else {
            o->levels = levels;
            o->slots = m;
        }
        slot += o->slots;
    }
}

/* Shared by layout and batches: validated params and groups. */
static grove_status describe_all(size_t n, const grove_balltree_params *params, grove__bt_groups *groups,
                                 int *levels)
{
    *levels = GROVE_BALLTREE_FULL;
    grove_balltree_params p;
    grove_status s = grove__bt_params(params, &p);
    if (s != GROVE_OK) return s;
    /* Slots never exceed 2n, so the totals below cannot overflow. */
    if (n > SIZE_MAX / 4) return grove__fail(GROVE_TOO_LARGE, "balltree: n = %zu points is too large", n);
    *levels = p.levels;
    return grove__bt_groups_make(n, &p, groups);
}

grove_status grove_balltree_layout(size_t n, const grove_balltree_params *params, size_t *slots, size_t *batches)
{
    grove__clear_error();
    if (!slots || !batches) return grove__fail(GROVE_INVALID_ARGUMENT, "balltree_layout: slots or batches is NULL");
    grove__bt_groups g;
    int levels;
    grove_status s = describe_all(n, params, &g, &levels);
    if (s != GROVE_OK) return s;
    size_t total = 0;
    for (size_t b = 0; b < g.count; b++) {
        size_t m = g.start[b + 1] - g.start[b];
        total += levels == GROVE_BALLTREE_FULL ? (size_t)2 << grove__bt_full_levels(m) : m;
    }
    *slots = total;
    *batches = g.count;
    grove__bt_groups_free(&g);
    return GROVE_OK;
}

grove_status grove_balltree_batches(size_t n, const grove_balltree_params *params, grove_balltree_batch *out)
{
    grove__clear_error();
    grove__bt_groups g;
    int levels;
    grove_status s = describe_all(n, params, &g, &levels);
    if (s != GROVE_OK) return s;
    if (g.count && !out) s = grove__fail(GROVE_INVALID_ARGUMENT, "balltree_batches: out is NULL");
    else grove__bt_describe(&g, levels, out);
    grove__bt_groups_free(&g);
    return s;
}

grove_status grove__bt_balls(const grove_balltree_batch *batches, size_t count, int partition, int level,
                             size_t *balls)
{
    if (level < 0) return grove__fail(GROVE_INVALID_ARGUMENT, "balltree: level must be >= 0, got %d", level);
    for (size_t b = 0; b < count; b++)
        if (level > batches[b].levels) {
            if (partition)
                return grove__fail(GROVE_INVALID_ARGUMENT, "balltree: level %d is deeper than the %d partition levels",
                                   level, batches[b].levels);
            return grove__fail(GROVE_INVALID_ARGUMENT,
                               "balltree: level %d is deeper than the tree of batch %lld (L = %d)", level,
                               (long long)batches[b].id, batches[b].levels);
        }
    if (count && (level >= (int)(sizeof(size_t) * 8 - 1) || !grove__mul_size(count, (size_t)1 << level, balls)))
        return grove__fail(GROVE_TOO_LARGE, "balltree: 2^%d balls for each of %zu batches is too many", level, count);
    if (!count) *balls = 0;
    return GROVE_OK;
}

grove_status grove_balltree_ball_count(size_t n, const grove_balltree_params *params, int level, size_t *balls)
{
    grove__clear_error();
    if (!balls) return grove__fail(GROVE_INVALID_ARGUMENT, "balltree_ball_count: balls is NULL");
    grove__bt_groups g;
    int levels;
    grove_status s = describe_all(n, params, &g, &levels);
    if (s != GROVE_OK) return s;
    grove_balltree_batch *info = grove__calloc(g.count, sizeof *info, "batch layout");
    if (!info) s = GROVE_OUT_OF_MEMORY;
    else {
        grove__bt_describe(&g, levels, info);
        s = grove__bt_balls(info, g.count, levels != GROVE_BALLTREE_FULL, level, balls);
    }
    grove__free(info);
    grove__bt_groups_free(&g);
    return s;
}

/* A one-off call (no workspace) below this builds on one thread: starting
 * a team costs about as much as such a build. */
#define BT_ONE_OFF_SERIAL ((size_t)1 << 17)

int grove__bt_threads(size_t batches, size_t n, int threads, bool one_off)
{
    if (one_off && n < BT_ONE_OFF_SERIAL) return 1;
    /* A batch each, or one per smallest task (half of BT_TASK_MIN). */
    size_t tasks = n / (BT_TASK_MIN / 2);
    return grove__threads_cap(threads, batches > tasks ? batches : tasks);
}

grove_status grove_balltree_threads(size_t n, const grove_balltree_params *params, const grove_options *options,
                                    int *threads)
{
    grove__clear_error();
    if (!threads) return grove__fail(GROVE_INVALID_ARGUMENT, "balltree_threads: threads is NULL");
    size_t slots, batches;
    grove_status s = grove_balltree_layout(n, params, &slots, &batches);
    if (s != GROVE_OK) return s;
    grove_options o = grove__options(options);
    *threads = grove__bt_threads(batches, n, o.threads, !(params && params->workspace));
    return GROVE_OK;
}
