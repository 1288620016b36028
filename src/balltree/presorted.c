/* The presorted builder, which takes any batch: every dimension sorted
 * once by (coordinate, id) into a list of labels (batch-local ids); a node
 * is the same segment of every list, its left child the first floor(k/2)
 * labels of the split dimension's list; a split flags the right child's
 * labels and stably partitions the other lists into the other buffer (in
 * partition mode one more list keeps id order). The first node of at most
 * BT_LOCAL points on a path relabels its points by position, coordinates
 * copied along, so below it everything stays local. See
 * docs/balltree-internals.md. */
#include "builder.h"

#include <string.h>

/* Nodes of at most BT_SMALL points finish from their coordinates. */
#define BT_SMALL 4
/* Radix digits of at most BT_DIGIT bits; BT_SORT_SLACK key bits above
 * log2 of the count; insertion sort up to BT_SORT_SMALL. */
#define BT_DIGIT 11
#define BT_SORT_SLACK 8
#define BT_SORT_SMALL 16
_Static_assert(BT_DIGIT <= BT_DIGIT_MAX, "grove__bt_digits holds the counts of digits up to BT_DIGIT_MAX bits");

/* A batch's slice; labels resolve through `ids`, after relabelling `local`. */
typedef struct bt_tree {
    const grove__bt_ctx *c;
    const grove__bt_batch *b;
    grove__bt_view ids, local;
    void *x;            /* c->x + start * d */
    uint32_t *id, *map; /* c->id + start, c->map + start */
    uint32_t *list[2];  /* c->list[b] + start */
} bt_tree;

static inline uint32_t bt_id(const grove__bt_view *v, uint32_t label) { return v->id ? v->id[label] : label; }

/* Stable partition of src[0..k) by flag `tag` (right) into dst: up to a
 * tail on one side, each id is written at both cursors, the wrong copy
 * overwritten later (branch-free); the tail is copied after. */
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

/* Stable LSD radix sort of (*a)[0..g) by their high halves (below
 * 2^bits); ends in *a. In the thread's scratch, unlike grove__radix_sort_u64. */
static void bt_lsd(uint64_t **a, uint64_t **b, size_t g, int bits)
{
    grove__bt_digits r;
    grove__bt_digits_count(&r, *a, g, 32, bits, BT_DIGIT);
    for (int p = 0; p < r.passes; p++) {
        if (!grove__bt_digits_move(&r, p, (*a)[0], g)) continue;
        grove__bt_digits_scatter(&r, p, *a, *b, g);
        uint64_t *t = *b;
        *b = *a;
        *a = t;
    }
}

/* How many points ahead random reads are prefetched. */
#define BT_AHEAD 16

/* Stable insertion sort of ids[0..g), g <= BT_SORT_SMALL, by key j. */
static void bt_sort_small(const grove__bt_view *v, size_t j, uint32_t *ids, size_t g)
{
    uint64_t key[BT_SORT_SMALL];
    for (size_t i = 0; i < g; i++) key[i] = grove__bt_key(grove__bt_at(v, ids[i], j));
    for (size_t i = 1; i < g; i++) {
        uint64_t kv = key[i];
        uint32_t id = ids[i];
        size_t p = i;
        for (; p > 0 && kv < key[p - 1]; p--) {
            key[p] = key[p - 1];
            ids[p] = ids[p - 1];
        }
        key[p] = kv;
        ids[p] = id;
    }
}

/* a[i] = ((key a[i] - lo) >> shift) << 32 | ids[i]. */
static void bt_pack(const uint32_t *ids, size_t g, uint64_t lo, int shift, uint64_t *a)
{
    for (size_t i = 0; i < g; i++) a[i] = (uint64_t)(uint32_t)(((uint64_t)a[i] - lo) >> shift) << 32 | ids[i];
}

/* grove__bt_sort once a[i] holds ids[i]'s key and [lo, hi] their extent. */
static void bt_sort_keyed(const grove__bt_view *v, size_t j, uint32_t *ids, size_t g, uint64_t *a, uint64_t *b,
                          uint64_t lo, uint64_t hi)
{
    if (lo == hi) return;
    int width = 0, bits = BT_SORT_SLACK;
    while (width < (int)sizeof(uint64_t) * 8 && (hi - lo) >> width) width++;
    while (bits < 32 && ((size_t)1 << (bits - BT_SORT_SLACK)) < g) bits++;
    bits = bits < width ? bits : width;
    int shift = width - bits;
    bt_pack(ids, g, lo, shift, a);
    bt_lsd(&a, &b, g, bits);
    /* The ids back, and the first position of every run of equal top bits. */
    size_t runs = 0;
    bool same = false;
    ids[0] = (uint32_t)a[0];
    for (size_t i = 1; i < g; i++) { /* branch-free: runs are rare */
        ids[i] = (uint32_t)a[i];
        bool next = shift && !((a[i] ^ a[i - 1]) >> 32);
        b[runs] = i - 1;
        runs += next && !same;
        same = next;
    }
    /* Each run on its own, the last first (its a and b are free). */
    for (size_t end = g; runs--;) {
        size_t r0 = b[runs], i = r0 + 1;
        while (i < end && !((a[i] ^ a[r0]) >> 32)) i++;
        grove__bt_sort(v, j, ids + r0, i - r0, a + r0, b + r0);
        end = r0;
    }
}

/* Sort ids[0..g) by (key j, id): radix on the top bits of the key, then
 * each run of equal top bits the same way on its narrower range. */
void grove__bt_sort(const grove__bt_view *v, size_t j, uint32_t *ids, size_t g, uint64_t *a, uint64_t *b)
{
    if (g <= BT_SORT_SMALL) {
        bt_sort_small(v, j, ids, g);
        return;
    }
    uint64_t lo = grove__bt_key(grove__bt_at(v, ids[0], j)), hi = lo;
    for (size_t i = 0; i < g; i++) { /* the keys, read once, into a */
        uint64_t k = grove__bt_key(grove__bt_at(v, ids[i], j));
        a[i] = k;
        lo = k < lo ? k : lo;
        hi = k > hi ? k : hi;
    }
    bt_sort_keyed(v, j, ids, g, a, b, lo, hi);
}

/* A node of k <= BT_SMALL points (labels in id order in partition mode). */
static void bt_small(const bt_tree *t, const grove__bt_view *w, const uint32_t *labels, size_t k, int level, size_t out)
{
    const grove__bt_ctx *c = t->c;
    const grove__bt_batch *b = t->b;
    size_t d = c->d;
    if (c->partition && (level == b->levels || k <= 1)) {
        for (size_t i = 0; i < k; i++) grove__bt_emit(c, out + i, grove__bt_row(c, b, bt_id(w, labels[i])), 1);
        return;
    }
    bool leaf = !c->partition && level == b->levels;
    if (leaf && k == 1) { /* a leaf of one point: pad with a copy */
        size_t row = grove__bt_row(c, b, bt_id(w, labels[0]));
        grove__bt_emit_leaf(c, out, row, row, 0);
        return;
    }
    size_t s = 0;
    double best_spread = -1.0;
    for (size_t j = 0; j < d; j++) {
        double lo = grove__bt_at(w, labels[0], j), hi = lo;
        for (size_t i = 1; i < k; i++) {
            double v = grove__bt_at(w, labels[i], j);
            lo = v < lo ? v : lo;
            hi = v > hi ? v : hi;
        }
        double spread = (double)hi - (double)lo;
        grove__bt_widest(spread, j, &s, &best_spread);
    }
    double v[BT_SMALL];
    uint32_t id[BT_SMALL];
    for (size_t i = 0; i < k; i++) {
        v[i] = grove__bt_at(w, labels[i], s);
        id[i] = bt_id(w, labels[i]);
    }
    if (leaf) { /* a leaf pair: the smaller (coordinate, id) first */
        size_t first = (v[1] < v[0]) | ((v[1] == v[0]) & (id[1] < id[0]));
        grove__bt_emit_leaf(c, out, grove__bt_row(c, b, id[first]), grove__bt_row(c, b, id[!first]), 1);
        return;
    }
    /* rank of i in (coordinate, id) order; the h lowest go left, stably */
    size_t h = k / 2, nl = 0, nr = h;
    uint32_t split[BT_SMALL];
    for (size_t i = 0; i < k; i++) { /* branch-free: these outcomes are coin flips */
        size_t rank = 0;
        for (size_t j = 0; j < k; j++) rank += (size_t)(v[j] < v[i]) | ((size_t)(v[j] == v[i]) & (id[j] < id[i]));
        size_t left = rank < h;
        split[left ? nl : nr] = labels[i];
        nl += left;
        nr += !left;
    }
    size_t right_out = grove__bt_right_out(c, b, out, h, level);
    bt_small(t, w, split, h, level + 1, out);
    bt_small(t, w, split + h, k - h, level + 1, right_out);
}

/* Relabel segment [off, off + k): label off + i for position i of list
 * 0, its coordinates copied there. */
static void bt_relabel(const bt_tree *t, int buf, size_t off, size_t k)
{
    size_t n = t->c->n, d = t->c->d;
    uint32_t *first = t->list[buf] + off;
    double *x = t->x;
    for (size_t i = 0; i < k; i++) {
        uint32_t id = first[i];
        size_t p = off + i;
        if (i + BT_AHEAD < k) {
            uint32_t next = first[i + BT_AHEAD];
            __builtin_prefetch(&t->map[next]);
            __builtin_prefetch(grove__bt_row_of(&t->ids, next));
        }
        t->map[id] = (uint32_t)p;
        t->id[p] = id;
        for (size_t j = 0; j < d; j++) x[p * d + j] = grove__bt_at(&t->ids, id, j);
        first[i] = (uint32_t)p;
    }
    for (size_t j = 1; j < t->c->lists; j++) {
        uint32_t *l = t->list[buf] + j * n + off;
        for (size_t i = 0; i < k; i++) l[i] = t->map[l[i]];
    }
}

/* The node holding segment [off, off + k) of buffer buf. */
static void bt_node(const bt_tree *t, const grove__bt_view *w, int buf, size_t off, size_t k, int level, size_t out)
{
    const grove__bt_ctx *c = t->c;
    size_t n = c->n, d = c->d, lists = c->lists, h = k / 2;
    const uint32_t *src = t->list[buf] + off, *last = src + (lists - 1) * n;
    if (k <= BT_SMALL || (c->partition && level == t->b->levels)) {
        bt_small(t, w, last, k, level, out);
        return;
    }
    if (k >= BT_TASK_MIN && grove__bt_cancelled(c)) return;
    if (w == &t->ids && k <= BT_LOCAL && t->b->count > BT_LOCAL) {
        bt_relabel(t, buf, off, k);
        w = &t->local;
    }
    size_t s = 0;
    double best_spread = -1.0;
    for (size_t j = 0; j < d; j++) {
        const uint32_t *l = src + j * n;
        double spread = (double)grove__bt_at(w, l[k - 1], j) - (double)grove__bt_at(w, l[0], j);
        grove__bt_widest(spread, j, &s, &best_spread);
    }
    /* Ancestors' flags are at most `level`: tag marks the right child alone. */
    uint8_t tag = (uint8_t)(level + 1);
    const uint32_t *split = src + s * n;
    for (size_t i = h; i < k; i++) w->flag[split[i]] = tag;
    uint32_t *dst = t->list[!buf] + off;
    for (size_t j = 0; j < lists; j++) {
        if (j == s)
            memcpy(dst + j * n, split, k * sizeof *split);
        else
            bt_partition(src + j * n, dst + j * n, k, h, w->flag, tag);
    }
    size_t right_out = grove__bt_right_out(c, t->b, out, h, level);
    GROVE__TASK_IF(c->spawn && k >= BT_TASK_MIN, bt_node(t, w, !buf, off, h, level + 1, out),
                   default(shared) firstprivate(t, w, buf, off, h, level, out));
    bt_node(t, w, !buf, off + h, k - h, level + 1, right_out);
}

/* Dimension j into list j of buffer 0 (the identity on entry). */
static void bt_sort_dim(const bt_tree *t, size_t j)
{
    uint64_t *a = grove__bt_scratch(t->c);
    size_t m = t->b->count;
    grove__bt_sort(&t->ids, j, t->list[0] + j * t->c->n, m, a, a + m);
}

/* The tree of one batch. */
static void bt_build(const bt_tree *t)
{
    const grove__bt_ctx *c = t->c;
    size_t m = t->b->count, n = c->n;
    for (size_t j = 0; j < c->lists; j++)
        for (size_t i = 0; i < m; i++) t->list[0][j * n + i] = (uint32_t)i;
    if (m > BT_SMALL) {
        memset(t->ids.flag, 0, m);
        if (m > BT_LOCAL) memset(t->local.flag, 0, m);
        bool tasks = c->spawn && m >= BT_TASK_MIN;
        for (size_t j = 0; j < c->d; j++) GROVE__TASK_IF(tasks, bt_sort_dim(t, j), default(shared) firstprivate(j));
        GROVE__TASKWAIT_IF(tasks);
    }
    /* t lives on the caller's stack: wait for every task that uses it. */
#pragma omp taskgroup
    bt_node(t, &t->ids, 0, 0, m, 0, t->b->slot);
}

void grove__bt_presorted_batch(const grove__bt_ctx *c, const grove__bt_batch *b, const grove__bt_view *ids)
{
    size_t start = b->start;
    double *x = (double *)c->x + start * c->d;
    bt_tree t = {c, b, *ids, {(const char *)x, c->d * sizeof *x, c->id + start, c->flag[1] + start}, x, c->id + start,
                 c->map + start, {c->list[0] + start, c->list[1] + start}};
    t.ids.flag = c->flag[0] + start;
    bt_build(&t);
}
