/* The packed builder (packed.h): batches whose records fit a 64-bit word,
 * and the selecting builder's leaves. Along the split dimension s the
 * right child is every record whose field s is at least the median's, so
 * each other list is partitioned stably by that comparison alone
 * (partition.c); a bit per list (`where`) says which buffer holds it. */
#include "packed.h"

/* Quantized records where asked and their fields fit, else ranks. */
static void packed_layout(grove__packed_tree *t, bool quantize, int rank_bits)
{
    int id_bits = grove__quantized_id_bits(t->count);
    int bits = quantize ? grove__quantized_field_bits(t->count, t->c->d) : 0;
    t->quantized = bits > 0;
    t->base = t->quantized ? id_bits : 0;
    t->bits = t->quantized ? bits : rank_bits;
    t->mask = ((uint64_t)1 << t->bits) - 1;
    t->id_mask = ((uint64_t)1 << id_bits) - 1;
    t->deferred = -1;
}

/* Split node [off, off + k): every list but the split one partitioned
 * into the other buffer, its left child first (*where updated). */
static void packed_split(const grove__packed_tree *t, uint64_t *where, size_t off, size_t k)
{
    const grove__bt_ctx *c = t->c;
    size_t n = t->n, d = c->d, h = k / 2;
    int bits = t->bits;
#define LIST(j, buf) (t->rec[buf] + (j)*n + off)
    size_t s = 0;
    double best_spread = -1.0;
    for (size_t j = 0; j < d; j++) {
        const uint64_t *l = LIST(j, *where >> j & 1);
        const double *v = t->val + j * n;
        int shift = (int)j * bits;
        double spread = t->quantized ? grove__quantized_spread(t, l, k, j)
                                     : v[grove__record_field(l[k - 1], shift, t->mask)] -
                                           v[grove__record_field(l[0], shift, t->mask)];
        grove__bt_widest(spread, j, &s, &best_spread);
    }
    const uint64_t *split = LIST(s, *where >> s & 1);
    int shift = t->base + (int)s * bits;
    uint64_t pivot =
        t->quantized ? grove__quantized_pivot(t, *where, off, k, h, s) : grove__record_field(split[h], shift, t->mask);
    /* At a root the team builds alone, the lists are partitioned as tasks. */
    bool team = grove__bt_team_root(t->spawn, k, t->count, c->n) && c->lists > 2;
    for (size_t j = 0; j < c->lists; j++) {
        unsigned buf = *where >> j & 1;
        if (j != s)
            GROVE__TASK_IF(team, t->partition(LIST(j, buf), LIST(j, !buf), k, h, shift, t->mask, pivot),
                           default(shared) firstprivate(j, buf));
    }
    GROVE__TASKWAIT_IF(team);
    *where ^= (((uint64_t)1 << c->lists) - 1) & ~((uint64_t)1 << s);
#undef LIST
}

/* The nodes `depth` levels below node [off, off + k), left to right. */
static void packed_descend(const grove__packed_tree *t, uint64_t where, size_t off, size_t k, int level, size_t out,
                           int depth, grove__bitmask_nodes *to)
{
    if (depth == 0) {
        to->where[to->count] = where;
        to->off[to->count] = off;
        to->k[to->count] = k;
        to->out[to->count++] = out;
        return;
    }
    size_t h = k / 2, right_out = grove__bt_right_out(t->c, t->b, out, h, level);
    packed_split(t, &where, off, k);
    packed_descend(t, where, off, h, level + 1, out, depth - 1, to);
    packed_descend(t, where, off + h, k - h, level + 1, right_out, depth - 1, to);
}

/* The node holding segment [off, off + k) of the lists in buffers `where`. */
static void packed_node(const grove__packed_tree *t, uint64_t where, size_t off, size_t k, int level, size_t out)
{
    const grove__bt_ctx *c = t->c;
    if (k >= BT_TASK_MIN && grove__bt_cancelled(c)) return;
    size_t h = k / 2;
    if (t->deferred >= 0 && level == 1) where = grove__quantized_sort_deferred(t, where, off, k);
    /* in id order in partition mode */
    const uint64_t *last = t->rec[where >> (c->lists - 1) & 1] + (c->lists - 1) * t->n + off;
    if (c->partition && level == t->b->levels) { /* a leaf: rows ascending */
        for (size_t i = 0; i < k; i++) grove__bt_emit(t->c, out + i, grove__packed_row(t, last[i]), 1);
        return;
    }
    int depth = c->plan.bitmask ? grove__bitmask_depth(k, c->d) : -1;
    if (depth >= 0) { /* the bit-mask subtrees below, side by side */
        grove__bitmask_nodes nodes = {0};
        packed_descend(t, where, off, k, level, out, depth, &nodes);
        grove__bitmask_subtrees(t, &nodes, level + depth);
        return;
    }
    if (k <= PACKED_SMALL) {
        grove__ranks_small(t, last, k, level, out);
        return;
    }
    packed_split(t, &where, off, k);
    size_t right_out = grove__bt_right_out(c, t->b, out, h, level);
    GROVE__TASK_IF(t->spawn && k >= BT_TASK_MIN, packed_node(t, where, off, h, level + 1, out),
                   default(shared) firstprivate(t, where, off, h, level, out));
    packed_node(t, where, off + h, k - h, level + 1, right_out);
}

/* Quantized records where they fit and the data allow, else ranks;
 * false where a coordinate is not finite (the first pass checks). */
static bool packed_presort(const grove__bt_view *v, grove__packed_tree *t, int rank_bits)
{
    if (t->quantized) {
        if (grove__quantized_presort(v, t)) return true;
        if ((t->c->nonfinite && *t->c->nonfinite) || (t->c->overflow && *t->c->overflow)) return false;
        packed_layout(t, false, rank_bits);
    }
    grove__ranks_presort(v, t);
    return true;
}

/* Batch b's memory: the thread's part, else the batch's slice. */
static void packed_memory(const grove__bt_ctx *c, const grove__bt_batch *b, grove__packed_tree *t)
{
    size_t part = c->pack_by_thread ? (size_t)grove__bt_thread() : 0, at = c->pack_by_thread ? 0 : b->start;
    size_t stride = c->pack_stride;
    t->n = stride;
    t->rec[0] = c->rec + part * 2 * c->lists * stride + at;
    t->rec[1] = t->rec[0] + c->lists * stride;
    t->val = c->val + part * c->d * stride + at;
    t->perm = c->perm + part * c->d * stride + at;
}

void grove__bt_packed_batch(const grove__bt_ctx *c, const grove__bt_batch *b, const grove__bt_view *ids)
{
    grove__packed_tree t = {
        .c = c, .b = b, .count = b->count, .ids = NULL, .spawn = c->spawn, .partition = c->partition_fn};
    packed_memory(c, b, &t);
    packed_layout(&t, c->plan.quantize, c->plan.bits);
    if (!packed_presort(ids, &t, c->plan.bits)) return;
        /* t lives on this stack frame: wait for every task that uses it. */
#pragma omp taskgroup
    packed_node(&t, t.deferred >= 0 ? (uint64_t)1 << t.deferred : 0, 0, b->count, 0, b->slot);
}

/* Leaf memory: coordinates, record lists, values, ranks (alloc_select). */
void grove__bt_packed_leaf(const grove__bt_ctx *c, const grove__bt_batch *b, const uint32_t *ids, size_t k, int level,
                           size_t out, double *work)
{
    size_t d = c->d, lists = c->lists, leaf = c->plan.leaf_max;
    uint64_t *rec = (uint64_t *)(work + leaf * d);
    double *val = (double *)(rec + 2 * lists * leaf);
    uint32_t *perm = (uint32_t *)(val + leaf * d);
    grove__packed_tree p = {.c = c, .b = b, .count = k, .n = leaf, .ids = ids, .spawn = false,
                            .rec = {rec, rec + lists * leaf}, .val = val, .perm = perm, .partition = c->partition_fn};
    packed_layout(&p, c->plan.quantize, c->plan.leaf_bits);
    grove__bt_view v = {(const char *)work, d * sizeof *work, NULL, NULL};
    packed_presort(&v, &p, c->plan.leaf_bits);
    packed_node(&p, 0, 0, k, level, out);
}
