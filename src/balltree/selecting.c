/* The selecting builder, for batches too large for the packed one: every
 * point's d order-preserving keys and id in d + 1 arrays, no presort. A
 * node's extent comes from its parent's split; its split point is a
 * selection along the widest dimension, then one pass moves every array
 * into the other buffer, gathering both children's extents: it streams. */
#include "builder.h"

#include <math.h>
#include <string.h>

/* One batch's slice of the selecting builder's memory. */
typedef struct bs_tree {
    const grove__bt_ctx *c;
    const grove__bt_batch *b;
    uint64_t *key[2]; /* c->skey[buf] + start: dimension j's keys at + j * n */
    uint32_t *id[2];  /* c->sid[buf] + start */
    const grove__bs_kernels *kernels;
} bs_tree;

/* The coordinate behind a key (grove__bt_key), branch-free. */
static inline double bs_value(uint64_t key)
{
    uint64_t bits = key ^ (((key >> 63) - 1) | (uint64_t)1 << 63);
    double x;
    memcpy(&x, &bits, sizeof x);
    return x;
}

static void bs_swap(grove__bs_pair *a, size_t i, size_t j)
{
    grove__bs_pair t = a[i];
    a[i] = a[j];
    a[j] = t;
}

/* The element of rank h of distinct a[0..k): quickselect, median of three. */
static grove__bs_pair bs_nth(grove__bs_pair *a, size_t k, size_t h)
{
    size_t lo = 0, hi = k; /* the answer is in a[lo..hi) */
    while (hi - lo > 2) {
        size_t mid = lo + (hi - lo) / 2;
        if (grove__bs_less(a[mid], a[lo])) bs_swap(a, mid, lo);
        if (grove__bs_less(a[hi - 1], a[mid])) {
            bs_swap(a, hi - 1, mid);
            if (grove__bs_less(a[mid], a[lo])) bs_swap(a, mid, lo);
        }
        grove__bs_pair p = a[mid];
        bs_swap(a, mid, hi - 2); /* the pivot out of the way; a[lo] < p < a[hi - 1] */
        size_t i = lo, j = hi - 2;
        for (;;) {
            while (grove__bs_less(a[++i], p)) {}
            while (grove__bs_less(p, a[--j])) {}
            if (i >= j) break;
            bs_swap(a, i, j);
        }
        bs_swap(a, i, hi - 2); /* p at its rank i */
        if (h == i) return p;
        if (h < i) hi = i;
        else lo = i + 1;
    }
    if (hi - lo == 2 && grove__bs_less(a[lo + 1], a[lo])) bs_swap(a, lo, lo + 1);
    return a[h];
}

/* The window around the median: about 2.5 standard deviations of the
 * sample, so 1 selection in 80 misses it and takes another pass. */
#define BS_SAMPLE 256
#define BS_WINDOW 20
/* Candidates are selected directly once at most this many are left. */
#define BS_NTH_MAX 1024

/* The point of rank h among k candidates: each round keeps those in the
 * window around h's sample rank (a sixth) in out_key[r % 2], out_id[r % 2]. */
static grove__bs_pair bs_nth_of(const bs_tree *t, const uint64_t *key, const uint32_t *id, size_t k, size_t h,
                         uint64_t *out_key[2], uint32_t *out_id[2])
{
    for (int round = 0; k > BS_NTH_MAX; round ^= 1) {
        grove__bs_pair sample[BS_SAMPLE];
        for (size_t q = 0; q < BS_SAMPLE; q++) {
            size_t i = (2 * q + 1) * k / (2 * BS_SAMPLE);
            sample[q] = (grove__bs_pair){key[i], id[i]};
        }
        size_t at = (size_t)((double)h / (double)k * BS_SAMPLE);
        size_t a = at > BS_WINDOW ? at - BS_WINDOW : 0, z = at + BS_WINDOW < BS_SAMPLE ? at + BS_WINDOW : BS_SAMPLE - 1;
        grove__bs_pair lo = a ? bs_nth(sample, BS_SAMPLE, a) : (grove__bs_pair){0, 0};
        grove__bs_pair hi = z < BS_SAMPLE - 1 ? bs_nth(sample, BS_SAMPLE, z) : (grove__bs_pair){UINT64_MAX, UINT32_MAX};
        uint64_t *ok = out_key[round];
        uint32_t *oi = out_id[round];
        size_t below, c = t->kernels->window(key, id, k, lo, hi, ok, oi, &below);
        if (h < below) /* missed low: keep everything up to lo */
            c = t->kernels->window(key, id, k, (grove__bs_pair){0, 0}, lo, ok, oi, &below);
        else if (h >= below + c) /* missed high: keep everything from hi */
            c = t->kernels->window(key, id, k, hi, (grove__bs_pair){UINT64_MAX, UINT32_MAX}, ok, oi, &below);
        h -= below;
        k = c;
        key = ok;
        id = oi;
    }
    grove__bs_pair cand[BS_NTH_MAX];
    for (size_t i = 0; i < k; i++) cand[i] = (grove__bs_pair){key[i], id[i]};
    return bs_nth(cand, k, h);
}

/* The point of rank h along s of node [off, off + k); candidates go to
 * the node's place in the other buffer and the thread's scratch. */
static grove__bs_pair bs_select(const bs_tree *t, int buf, size_t off, size_t k, size_t h, size_t s)
{
    size_t n = t->c->n;
    uint64_t *scratch = grove__bt_scratch(t->c);
    uint64_t *out_key[2] = {t->key[!buf] + off, scratch};
    uint32_t *out_id[2] = {t->id[!buf] + off, (uint32_t *)(scratch + k)};
    return bs_nth_of(t, t->key[buf] + s * n + off, t->id[buf] + off, k, h, out_key, out_id);
}

/* A node of at most leaf_max points, by the packed builder. */
static void bs_leaf(const bs_tree *t, int buf, size_t off, size_t k, int level, size_t out)
{
    const grove__bt_ctx *c = t->c;
    size_t n = c->n, d = c->d;
    double *x = (double *)(c->leaf_work + (size_t)grove__bt_thread() * c->leaf_bytes);
    for (size_t j = 0; j < d; j++)
        for (size_t i = 0; i < k; i++) x[i * d + j] = bs_value(t->key[buf][j * n + off + i]);
    grove__bt_packed_leaf(c, t->b, t->id[buf] + off, k, level, out, x);
}

/* Points [lo, hi): keys, ids, extent (in locals the key stores cannot alias). */
static inline __attribute__((always_inline)) void bs_init_d(const grove__bt_view *v, const bs_tree *t, size_t from,
                                                            size_t to, grove__bs_extent *e, size_t d)
{
    size_t n = t->c->n;
    uint64_t *key = t->key[0], lo[GROVE__BS_MAX_DIMS], hi[GROVE__BS_MAX_DIMS];
    for (size_t j = 0; j < d; j++) lo[j] = UINT64_MAX, hi[j] = 0;
    for (size_t i = from; i < to; i++) {
        const double *row = grove__bt_row_of(v, (uint32_t)i);
        for (size_t j = 0; j < d; j++) {
            uint64_t k = grove__bt_key(row[j]);
            key[j * n + i] = k;
            lo[j] = k < lo[j] ? k : lo[j];
            hi[j] = k > hi[j] ? k : hi[j];
        }
        t->id[0][i] = (uint32_t)i;
    }
    for (size_t j = 0; j < d; j++) e->lo[j] = lo[j], e->hi[j] = hi[j];
}

static void bs_init_rows(const grove__bt_view *v, const bs_tree *t, size_t from, size_t to, grove__bs_extent *e)
{
    switch (t->c->d) {
    case 2: bs_init_d(v, t, from, to, e, 2); break;
    case 3: bs_init_d(v, t, from, to, e, 3); break;
    default: bs_init_d(v, t, from, to, e, t->c->d);
    }
}

/* Parts of a pass over a root the team builds alone (its first pass and
 * its split): one per thread. */
#define BS_PARTS_MAX 16
static size_t bs_root_parts(const bs_tree *t, size_t k)
{
    int thread, threads = 1;
    if (grove__bt_team_root(t->c->spawn, k, t->b->count, t->c->n)) grove__team_member(&thread, &threads);
    return threads < BS_PARTS_MAX ? (size_t)threads : BS_PARTS_MAX;
}

/* e grows to take in the extents part[0 .. parts). */
static void bs_extent_of(grove__bs_extent *e, const grove__bs_extent *part, size_t parts, size_t d)
{
    *e = part[0];
    for (size_t q = 1; q < parts; q++)
        for (size_t j = 0; j < d; j++) {
            e->lo[j] = part[q].lo[j] < e->lo[j] ? part[q].lo[j] : e->lo[j];
            e->hi[j] = part[q].hi[j] > e->hi[j] ? part[q].hi[j] : e->hi[j];
        }
}

/* Every point's keys and id, and the root's extent. */
static void bs_init(const grove__bt_view *v, const bs_tree *t, grove__bs_extent *root)
{
    size_t m = t->b->count, parts = bs_root_parts(t, m);
    grove__bs_extent part[BS_PARTS_MAX];
    GROVE__PARTS(q, parts, bs_init_rows(v, t, q * m / parts, (q + 1) * m / parts, &part[q]));
    bs_extent_of(root, part, parts, t->c->d);
}

/* Whether the extent is finite: NaN and infinity keys have every exponent bit. */
static bool bs_finite(const grove__bs_extent *e, size_t d)
{
    for (size_t j = 0; j < d; j++)
        if (e->hi[j] >> 52 == 0xfff || e->lo[j] >> 52 == 0) return false;
    return true;
}

/* Whether every spread of the extent is a finite double. */
static bool bs_spreads_finite(const grove__bs_extent *e, size_t d)
{
    for (size_t j = 0; j < d; j++)
        if (!isfinite(bs_value(e->hi[j]) - bs_value(e->lo[j]))) return false;
    return true;
}

/* Split node [off, off + k) into the other buffer; at a root the team
 * builds alone in parts, each counting its points below the pivot (which
 * places its sides), then moving them. */
static void bs_split(const bs_tree *t, int buf, size_t off, size_t k, size_t h, size_t s, grove__bs_pair pivot,
                     grove__bs_extent *left, grove__bs_extent *right)
{
    const grove__bt_ctx *c = t->c;
    const uint64_t *key = t->key[buf] + off;
    const uint32_t *id = t->id[buf] + off;
    uint64_t *dst = t->key[!buf] + off;
    uint32_t *did = t->id[!buf] + off;
    size_t parts = bs_root_parts(t, k), below[BS_PARTS_MAX];
    if (parts <= 1) {
        t->kernels->split(key, id, dst, did, c->n, c->d, k, (grove__bs_sides){0, h, h, k}, s, pivot, left, right);
        return;
    }
    grove__bs_extent part_left[BS_PARTS_MAX], part_right[BS_PARTS_MAX];
#pragma omp taskloop grainsize(1) default(shared)
    for (size_t q = 0; q < parts; q++) {
        size_t a = q * k / parts, b = (q + 1) * k / parts;
        t->kernels->window(key + s * c->n + a, id + a, b - a, pivot, pivot, dst + a, did + a, &below[q]);
    }
#pragma omp taskloop grainsize(1) default(shared)
    for (size_t q = 0; q < parts; q++) {
        size_t a = q * k / parts, b = (q + 1) * k / parts, l = 0;
        for (size_t p = 0; p < q; p++) l += below[p];
        size_t r = h + a - l; /* after the points of the parts before q that are not below */
        grove__bs_sides to = {l, l + below[q], r, r + (b - a - below[q])};
        t->kernels->split(key + a, id + a, dst, did, c->n, c->d, b - a, to, s, pivot, &part_left[q], &part_right[q]);
    }
    bs_extent_of(left, part_left, parts, c->d);
    bs_extent_of(right, part_right, parts, c->d);
}

/* The node holding segment [off, off + k) of buffer buf, with extent e. */
static void bs_node(const bs_tree *t, int buf, size_t off, size_t k, int level, size_t out, const grove__bs_extent *e)
{
    const grove__bt_ctx *c = t->c;
    if (k <= c->plan.leaf_max) {
        bs_leaf(t, buf, off, k, level, out);
        return;
    }
    if (k >= BT_TASK_MIN && grove__bt_cancelled(c)) return;
    size_t s = 0, h = k / 2;
    double best_spread = -1.0;
    for (size_t j = 0; j < c->d; j++)
        grove__bt_widest(bs_value(e->hi[j]) - bs_value(e->lo[j]), j, &s, &best_spread);
    grove__bs_pair pivot = bs_select(t, buf, off, k, h, s);
    grove__bs_extent left, right;
    bs_split(t, buf, off, k, h, s, pivot, &left, &right);
    size_t right_out = grove__bt_right_out(c, t->b, out, h, level);
    GROVE__TASK_IF(c->spawn && k >= BT_TASK_MIN, bs_node(t, !buf, off, h, level + 1, out, &left),
                   default(shared) firstprivate(t, buf, off, h, level, out, left));
    bs_node(t, !buf, off + h, k - h, level + 1, right_out, &right);
}

void grove__bt_selecting_batch(const grove__bt_ctx *c, const grove__bt_batch *b, const grove__bt_view *ids)
{
    size_t start = b->start;
    bs_tree t = {c, b, {c->skey[0] + start, c->skey[1] + start}, {c->sid[0] + start, c->sid[1] + start},
                 &c->bs_kernels};
    grove__bs_extent root;
    bs_init(ids, &t, &root);
    if (c->nonfinite && !bs_finite(&root, c->d)) {
        *c->nonfinite = true;
        return;
    }
    if (c->overflow && !bs_spreads_finite(&root, c->d)) {
        *c->overflow = true;
        return;
    }
#pragma omp taskgroup
    bs_node(&t, 0, 0, b->count, 0, b->slot, &root);
}
