/* Ball tree layout: batch grouping, slots per batch, ball counts. */
#include "balltree_internal.h"

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
    groups->ids = NULL;
    groups->start = NULL;
    groups->order = NULL;
    groups->count = 0;
}

static grove_status alloc_groups(grove__bt_groups *g, size_t count)
{
    g->count = count;
    g->ids = grove__calloc(count, sizeof *g->ids, "batch ids");
    g->start = grove__calloc(count + 1, sizeof *g->start, "batch offsets");
    return g->ids && g->start ? GROVE_OK : GROVE_OUT_OF_MEMORY;
}

/* The end of the run of ids[a] in non-decreasing ids, by doubling steps
 * and halving: a batch costs the log of its size. */
static size_t run_end(const int64_t *ids, size_t a, size_t n)
{
    size_t lo = a, step = 1; /* ids[lo] == ids[a] */
    while (step < n - lo && ids[lo + step] == ids[a]) {
        lo += step;
        step *= 2;
    }
    size_t hi = step < n - lo ? lo + step : n; /* ids[hi] != ids[a], or hi == n */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (ids[mid] == ids[a]) lo = mid;
        else hi = mid;
    }
    return hi;
}

/* Non-decreasing ids: every run of equal ids is a batch, in place. */
static grove_status group_runs(size_t n, const int64_t *ids, grove__bt_groups *g)
{
    size_t count = 0, b = 0;
    for (size_t a = 0; a < n; a = run_end(ids, a, n)) count++;
    if (alloc_groups(g, count) != GROVE_OK) return GROVE_OUT_OF_MEMORY;
    for (size_t a = 0; a < n; a = run_end(ids, a, n)) {
        g->ids[b] = ids[a];
        g->start[b++] = a;
    }
    g->start[count] = n;
    return GROVE_OK;
}

/* Small ids (max < 2n + 2): a counting sort indexed by id. */
static grove_status group_by_counting(size_t n, const int64_t *ids, size_t max_id, grove__bt_groups *g)
{
    size_t *next = grove__calloc(max_id + 1, sizeof *next, "batch id counts");
    if (!next) return GROVE_OUT_OF_MEMORY;
    for (size_t i = 0; i < n; i++) next[ids[i]]++;
    size_t count = 0;
    for (size_t v = 0; v <= max_id; v++) count += next[v] != 0;
    grove_status s = alloc_groups(g, count);
    g->order = s == GROVE_OK ? grove__calloc(n, sizeof *g->order, "batch order") : NULL;
    if (!g->order) {
        grove__free(next);
        return GROVE_OUT_OF_MEMORY;
    }
    size_t b = 0, at = 0;
    for (size_t v = 0; v <= max_id; v++) {
        if (!next[v]) continue;
        g->ids[b] = (int64_t)v;
        g->start[b++] = at;
        size_t m = next[v];
        next[v] = at; /* becomes the next free grouped position of id v */
        at += m;
    }
    g->start[count] = n;
    for (size_t i = 0; i < n; i++) g->order[next[ids[i]]++] = i;
    grove__free(next);
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

/* Large sparse ids: sort (id, row) pairs. */
static grove_status group_by_sorting(size_t n, const int64_t *ids, grove__bt_groups *g)
{
    id_row *pairs = grove__calloc(n, sizeof *pairs, "batch sort");
    if (!pairs) return GROVE_OUT_OF_MEMORY;
    for (size_t i = 0; i < n; i++) {
        pairs[i].id = ids[i];
        pairs[i].row = i;
    }
    qsort(pairs, n, sizeof *pairs, by_id_row);
    size_t count = 1;
    for (size_t i = 1; i < n; i++) count += pairs[i].id != pairs[i - 1].id;
    grove_status s = alloc_groups(g, count);
    g->order = s == GROVE_OK ? grove__calloc(n, sizeof *g->order, "batch order") : NULL;
    if (!g->order) {
        grove__free(pairs);
        return GROVE_OUT_OF_MEMORY;
    }
    size_t b = 0;
    for (size_t i = 0; i < n; i++) {
        if (i == 0 || pairs[i].id != pairs[i - 1].id) {
            g->ids[b] = pairs[i].id;
            g->start[b++] = i;
        }
        g->order[i] = pairs[i].row;
    }
    g->start[count] = n;
    grove__free(pairs);
    return GROVE_OK;
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
        if (!(falls >> 63)) s = group_runs(n, ids, &g);
        else if ((uint64_t)max_id / 2 <= n) s = group_by_counting(n, ids, (size_t)max_id, &g);
        else s = group_by_sorting(n, ids, &g);
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
