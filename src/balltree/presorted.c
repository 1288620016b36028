/* The presorted builder, which takes any batch: every dimension sorted
 * once by (coordinate, id) into a list of labels (batch-local ids); a node
 * is the same segment of every list, its extent the ends of each, its left
 * child the first floor(k/2) labels of the split dimension's list. A split
 * flags the right child's labels and stably partitions the other lists by
 * flag into the other buffer. In partition mode one more list, in id
 * order, gives each leaf's rows ascending. Ids index the whole batch, so
 * in a batch of more than BT_LOCAL points the first node of at most
 * BT_LOCAL points on every path relabels its points by position, with its
 * coordinates copied in that order: below it everything stays local. The
 * sort: an LSD radix sort of the keys' top bits, then each run of equal
 * top bits the same way on its narrower range. */
#include "builder.h"

#include <string.h>

/* Nodes of at most BT_SMALL points finish from their coordinates. */
#define BT_SMALL 4
/* Radix digits of at most BT_DIGIT bits, BT_SORT_SLACK key bits more
 * than log2 of the count, insertion sort up to BT_SORT_SMALL. */
#define BT_DIGIT 11
#define BT_SORT_SLACK 8
#define BT_SORT_SMALL 16
_Static_assert(BT_DIGIT <= BT_DIGIT_MAX, "grove__bt_digits holds the counts of digits up to BT_DIGIT_MAX bits");

/* One batch's slice of the working memory; labels resolve through view
 * `ids` (the caller's coordinates) until relabelled (view `local`). */
typedef struct bt_tree {
    const grove__bt_ctx *c;
    const grove__bt_batch *b;
    grove__bt_view ids, local;
    void *x;           /* c->x + start * d */
    uint32_t *id, *map; /* c->id + start, c->map + start */
    uint32_t *list[2]; /* c->list[b] + start */
} bt_tree;

static inline uint32_t bt_id(const grove__bt_view *v, uint32_t label)
{
    return v->id ? v->id[label] : label;
}

/* Stable partition of src[0..k) into dst, k >= 2: ids flagged `tag` to
 * dst[h..k), the others to dst[0..h). Up to the tail that falls on one
 * side, every id is written at both cursors (branch-free), the wrong copy
 * overwritten by a later id; the tail is copied after. */
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
 * 2^bits), constant digits skipped; the result ends in *a. Not
 * grove__radix_sort_u64, which opens a parallel region and allocates:
 * this runs in tasks, on many small runs, in the thread's scratch. */
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

#if defined(__GNUC__)
#define BT_PREFETCH(p) __builtin_prefetch(p)
#else
#define BT_PREFETCH(p) ((void)(p))
#endif
/* How many points ahead random reads are prefetched. */
#define BT_AHEAD 16

#define BT_T float
#define BT_K uint32_t
#define BT_(name) name##_f32
#include "presorted_t.h"
#undef BT_T
#undef BT_K
#undef BT_

#define BT_T double
#define BT_K uint64_t
#define BT_(name) name##_f64
#include "presorted_t.h"
#undef BT_T
#undef BT_K
#undef BT_

void grove__bt_sort(const grove__bt_ctx *c, const grove__bt_view *v, bool f32, size_t j, uint32_t *ids, size_t g,
                    uint64_t *a, uint64_t *b)
{
    if (f32) sort_ids_f32(c, v, j, ids, g, a, b);
    else sort_ids_f64(c, v, j, ids, g, a, b);
}

void grove__bt_presorted_batch(const grove__bt_ctx *c, const grove__bt_batch *b, const grove__bt_view *ids, bool f32)
{
    size_t start = b->start, elem = f32 ? sizeof(float) : sizeof(double);
    char *x = (char *)c->x + start * c->d * elem;
    bt_tree t = {c, b, *ids, {x, c->d * elem, NULL, c->id + start, c->flag[1] + start}, x, c->id + start,
                 c->map + start, {c->list[0] + start, c->list[1] + start}};
    t.ids.flag = c->flag[0] + start;
    if (f32) tree_f32(&t);
    else tree_f64(&t);
}
