/* The packed-rank builder, used when a batch's ranks pack into one 64-bit
 * word: d * ceil(log2 m) <= 64 (grove__bt_packed_bits), and for the
 * selecting builder's leaves (grove__bt_packed_leaf).
 *
 * Every dimension is sorted once by (coordinate, id), which gives each
 * point its rank in every dimension; a point's record holds all d ranks,
 * `bits` bits each. As in the presorted design (presorted.c), a node is
 * the same segment of d lists, list j sorted along dimension j, but the
 * lists hold records instead of ids. So
 *
 * - the extent of a node in dimension j is val_j[rank of the first record]
 *   to val_j[rank of the last] (val_j: the coordinates in sorted order);
 * - the (coordinate, id) order in the split dimension s is the order of
 *   the rank in s, so the right child is every record whose rank in s is at
 *   least the rank of the median record; each other list is partitioned
 *   stably by that comparison, reading nothing but the list itself.
 *
 * No flags, no lookups by id: each level streams the lists once, and the
 * partition vectorises (an AVX-512 version is picked at run time). The
 * split list itself is not copied: a bit per list says which buffer holds
 * it. Leaves map the rank in dimension 0 back to the id. In full mode with
 * d = 2..4, where the machine has AVX-512 BITALG, nodes of at most 64
 * points finish as bit masks instead (bb_*, below), and there, where the
 * fields are wide enough, the records hold the id and quantized
 * coordinates instead of ranks (bq_*, below): no ranks to compute. */
#include "builder.h"

#include <math.h>
#include <string.h>

/* Nodes of at most BP_SMALL points are finished from their records (or
 * of at most BB_MAX as bit masks). */
#define BP_SMALL 4

/* Room for a point's coordinates: d <= 64, as every rank takes at least one
 * of a record's 64 bits. */
#define BP_XD 64

/* A record's rank in the dimension whose bits start at `shift`. */
static inline uint64_t bp_rank(uint64_t e, int shift, uint64_t mask) { return grove__bp_rank(e, shift, mask); }

/* One batch's slice of the packed builder's memory. */
typedef struct bp_tree {
    const grove__bt_ctx *c;
    const grove__bt_batch *b;
    size_t count;         /* points */
    size_t n;             /* list stride: list j at + j * n */
    const uint32_t *ids;  /* point -> batch-local id; NULL: the identity */
    int bits;             /* bits per field: a rank, or a quantized coordinate */
    bool spawn;           /* create tasks */
    uint64_t *rec[2];     /* the batch's memory (bp_memory): list j of buffer buf at rec[buf] + j * n */
    double *val;          /* the batch's memory: dimension j's coordinates in its order at + j * n
                           * (quantized: in id order, where x needs a copy) */
    uint32_t *perm;       /* the batch's memory: dimension j's rank -> batch-local id at + j * n */
    uint64_t mask;        /* (1 << bits) - 1 */
    grove__bp_partition_fn *partition;
    /* Quantized records (bq_*): the id in the low `base` bits
     * (id_mask), then d fields of `bits` bits; ranks have base 0 (set by
     * bp_layout). */
    bool quantized;
    int base;
    uint64_t id_mask;
    const double *x;      /* quantized: coordinate j of batch-local id i at x[i * x_id + j * x_dim] */
    size_t x_id, x_dim;
    /* Quantized, in a team of fewer threads than lists: the list that
     * the root's children sort instead of the presort (-1: none; bq_deferrable). */
    int deferred;
} bp_tree;

/* The input row of rank record e (quantized records finish in the
 * bit-mask subtrees, which map their ids themselves). */
static inline size_t bp_row(const bp_tree *t, uint64_t e)
{
    uint32_t p = t->perm[e & t->mask];
    return grove__bt_row(t->c, t->b, t->ids ? t->ids[p] : p);
}

static inline void bp_emit(const bp_tree *t, size_t slot, uint64_t e, uint8_t real)
{
    grove__bt_emit(t->c, slot, bp_row(t, e), real);
}

/* Emit the full-mode leaf (a, b) at out: ordered along its widest
 * dimension, whose spread is |xa - xb| (= max - min, exactly); b is a
 * padding copy of a (`real` 0) in a leaf of one point. */
static inline __attribute__((always_inline)) void bp_pair(const bp_tree *t, uint64_t a, uint64_t b,
                                                          const double *xa, const double *xb, size_t out,
                                                          size_t d, uint8_t real)
{
    size_t s = 0;
    double best_spread = -1.0;
    for (size_t j = 0; j < d; j++) grove__bt_widest(fabs(xa[j] - xb[j]), j, &s, &best_spread);
    int shift = (int)s * t->bits;
    bool swap = bp_rank(b, shift, t->mask) < bp_rank(a, shift, t->mask);
    grove__bt_emit_leaf(t->c, out, bp_row(t, swap ? b : a), bp_row(t, swap ? a : b), real);
}

/* The subtree of a small node (bp_small): its points' coordinates and
 * records, gathered once, as x[i * d + j] and rec[i]; nodes are index
 * lists into them. */
typedef struct bp_local {
    const bp_tree *t;
    const double *x;
    const uint64_t *rec;
} bp_local;

static void bp_small_node(const bp_local *p, const uint8_t *idx, size_t k, int level, size_t out, size_t d)
{
    const bp_tree *t = p->t;
    const grove__bt_ctx *c = t->c;
    if (c->partition && (level == t->b->levels || k <= 1)) {
        for (size_t i = 0; i < k; i++) bp_emit(t, out + i, p->rec[idx[i]], 1);
        return;
    }
    if (!c->partition && level == t->b->levels) { /* a leaf of one or two points */
        bp_pair(t, p->rec[idx[0]], p->rec[idx[k - 1]], p->x + idx[0] * d, p->x + idx[k - 1] * d, out, d, k == 2);
        return;
    }
    size_t s = 0;
    double best_spread = -1.0;
    for (size_t j = 0; j < d; j++) {
        double lo = p->x[idx[0] * d + j], hi = lo;
        for (size_t i = 1; i < k; i++) {
            double v = p->x[idx[i] * d + j];
            lo = v < lo ? v : lo;
            hi = v > hi ? v : hi;
        }
        grove__bt_widest(hi - lo, j, &s, &best_spread);
    }
    int shift = (int)s * t->bits;
    uint64_t r[BP_SMALL];
    for (size_t i = 0; i < k; i++) r[i] = bp_rank(p->rec[idx[i]], shift, t->mask);
    size_t h = k / 2, nl = 0, nr = h;
    uint8_t split[BP_SMALL];
    for (size_t i = 0; i < k; i++) { /* the h lowest ranks go left, stably */
        size_t below = 0;
        for (size_t j = 0; j < k; j++) below += r[j] < r[i];
        size_t left = below < h;
        split[left ? nl : nr] = idx[i];
        nl += left;
        nr += !left;
    }
    size_t right_out = grove__bt_right_out(c, t->b, out, h, level);
    bp_small_node(p, split, h, level + 1, out, d);
    bp_small_node(p, split + h, k - h, level + 1, right_out, d);
}

/* A node of k <= BP_SMALL points and its subtree, from its records (in id
 * order in partition mode, any order otherwise). The coordinates come
 * from the sorted arrays by rank, once per point; the splits rank the
 * records against each other. Cheaper than lists and partitions at this
 * size. */
static inline __attribute__((always_inline)) void bp_small_d(const bp_tree *t, const uint64_t *rec, size_t k,
                                                             int level, size_t out, size_t d)
{
    size_t n = t->n;
    double x[BP_SMALL * BP_XD];
    uint8_t idx[BP_SMALL];
    for (size_t i = 0; i < k; i++) {
        idx[i] = (uint8_t)i;
        for (size_t j = 0; j < d; j++) x[i * d + j] = t->val[j * n + bp_rank(rec[i], (int)j * t->bits, t->mask)];
    }
    bp_local p = {t, x, rec};
    bp_small_node(&p, idx, k, level, out, d);
}

/* The commonest small subtree, straight-line: a full-mode node of four
 * points whose children are leaf pairs. */
static inline __attribute__((always_inline)) void bp_quad(const bp_tree *t, const uint64_t *rec, size_t out,
                                                          size_t d)
{
    size_t n = t->n;
    double x[4][BP_XD];
    uint64_t e[4] = {rec[0], rec[1], rec[2], rec[3]};
    size_t s = 0;
    double best_spread = -1.0;
    for (size_t j = 0; j < d; j++) {
        int shift = (int)j * t->bits;
        const double *v = t->val + j * n;
        for (size_t i = 0; i < 4; i++) x[i][j] = v[bp_rank(e[i], shift, t->mask)];
        double lo = x[0][j], hi = lo;
        for (size_t i = 1; i < 4; i++) {
            lo = x[i][j] < lo ? x[i][j] : lo;
            hi = x[i][j] > hi ? x[i][j] : hi;
        }
        grove__bt_widest(hi - lo, j, &s, &best_spread);
    }
    int shift = (int)s * t->bits;
    uint64_t r[4];
    for (size_t i = 0; i < 4; i++) r[i] = bp_rank(e[i], shift, t->mask);
    size_t left[4]; /* point i goes left when at most one rank is below its own */
    for (size_t i = 0; i < 4; i++) left[i] = (size_t)(r[0] < r[i]) + (r[1] < r[i]) + (r[2] < r[i]) + (r[3] < r[i]) < 2;
    uint8_t order[4];
    size_t nl = 0, nr = 2;
    for (size_t i = 0; i < 4; i++) {
        order[left[i] ? nl : nr] = (uint8_t)i;
        nl += left[i];
        nr += !left[i];
    }
    bp_pair(t, e[order[0]], e[order[1]], x[order[0]], x[order[1]], out, d, 1);
    bp_pair(t, e[order[2]], e[order[3]], x[order[2]], x[order[3]], out + 2, d, 1);
}

static void bp_small(const bp_tree *t, const uint64_t *rec, size_t k, int level, size_t out)
{
    if (k == 4 && !t->c->partition && level == t->b->levels - 1) {
        switch (t->c->d) {
        case 2: bp_quad(t, rec, out, 2); return;
        case 3: bp_quad(t, rec, out, 3); return;
        default: bp_quad(t, rec, out, t->c->d); return;
        }
    }
    switch (t->c->d) { /* a constant d lets the compiler specialise the common cases */
    case 2: bp_small_d(t, rec, k, level, out, 2); break;
    case 3: bp_small_d(t, rec, k, level, out, 3); break;
    default: bp_small_d(t, rec, k, level, out, t->c->d);
    }
}

/* Dimension j's ranks into the records by id (buffer 1, unused until the
 * first split); dimension 0 first, as it starts them. */
static void bp_records(const bp_tree *t, size_t j)
{
    const uint32_t *perm = t->perm + j * t->n;
    uint64_t *rec = t->rec[1];
    int shift = (int)j * t->bits;
    for (size_t r = 0; r < t->count; r++) rec[perm[r]] = (j ? rec[perm[r]] : 0) | (uint64_t)r << shift;
}

/* List j of buffer 0, once the records are complete: the records in
 * dimension j's order, or for j = d (partition mode) in id order. */
static void bp_list(const bp_tree *t, size_t j)
{
    const uint64_t *rec = t->rec[1];
    uint64_t *list = t->rec[0] + j * t->n;
    if (j == t->c->d) {
        memcpy(list, rec, t->count * sizeof *rec);
        return;
    }
    const uint32_t *perm = t->perm + j * t->n;
    for (size_t r = 0; r < t->count; r++) list[r] = rec[perm[r]];
}

/* Quantized records (bq_*; their first pass is bq_quantize).
 *
 * The ranks of the packed records cost most of the presort: after each
 * dimension's sort, its ranks go into the records by id and every list is
 * gathered from the records again. A quantized record instead holds the
 * point's batch-local id and, per dimension, its coordinate mapped
 * linearly onto a field of `bits` bits,
 *
 *     q = min(2^bits - 1, floor((x - lo) * (2^bits - 1) / (hi - lo))),
 *
 * which never decreases as x grows (every step of it rounds
 * monotonically). Each record is complete before any sort, so every list
 * is one radix sort of the records by its own field, and nothing else.
 *
 * Points with the same field value (a run) are not ordered by it, and
 * the code reads their exact coordinates (t->x) only where the order
 * inside a run matters:
 *
 * - a node's extent along j: the smallest coordinate among the first run
 *   of list j's segment, the largest among the last;
 * - the split: when the run holding position h of the split list starts
 *   before h, that run is sorted by (coordinate, id) in place, and its
 *   right part (or, at the largest field value, its left part) moves one
 *   field value up (down) in every list of the node, so the partition by
 *   field value is exact again;
 * - a bit-mask subtree (bb_*) sorts the runs of its lists.
 *
 * Moving a part of a run by one value keeps every list's segment ordered
 * by field value: the values it lands among belong to coordinates on the
 * same side of it. Lists therefore stay sorted by field, with runs in any
 * order, at every node, and the output is the bytes of the rank records.
 *
 * Used in full mode where the bit-mask subtrees are (so no node below
 * them needs ranks) and the AVX-512 presort loops (presort_avx512.c; a
 * machine with the one has the other), and the fields are wide enough
 * (grove__bq_field_bits, plan.c). Data that crowds many points into few
 * values (a far outlier, tight clusters) would make long runs, and
 * sorting them at every level would cost more than ranks: a batch whose
 * longest run exceeds BQ_MAX_RUN goes back to the rank presort. */
_Static_assert(GROVE__BQ_DIGIT <= BT_DIGIT_MAX, "grove__bt_digits holds the counts of digits up to BT_DIGIT_MAX bits");
#define BQ_MAX_RUN 256
/* Lists of at most BQ_INSERTION records are sorted by insertion. */
#define BQ_INSERTION 16

/* The record layout for t->count points: quantized records when
 * `quantize` and their fields are wide enough, ranks of rank_bits bits
 * otherwise. */
static void bp_layout(bp_tree *t, bool quantize, int rank_bits)
{
    int id_bits = grove__bq_id_bits(t->count), bits = quantize ? grove__bq_field_bits(t->count, t->c->d) : 0;
    t->quantized = bits > 0;
    t->base = t->quantized ? id_bits : 0;
    t->bits = t->quantized ? bits : rank_bits;
    t->mask = ((uint64_t)1 << t->bits) - 1;
    t->id_mask = ((uint64_t)1 << id_bits) - 1;
    t->deferred = -1;
}

static inline uint64_t bq_field(const bp_tree *t, uint64_t e, size_t j)
{
    return bp_rank(e, t->base + (int)j * t->bits, t->mask);
}

static inline double bq_coord(const bp_tree *t, uint64_t e, size_t j)
{
    return t->x[(e & t->id_mask) * t->x_id + j * t->x_dim];
}

/* Whether (coordinate j, id) of record a is below that of b. */
static inline bool bq_below(const bp_tree *t, uint64_t a, uint64_t b, size_t j)
{
    double xa = bq_coord(t, a, j), xb = bq_coord(t, b, j);
    return xa < xb || (xa == xb && (a & t->id_mask) < (b & t->id_mask));
}

/* Sort l[0..k) by (coordinate j, id): the records of one run, few. */
static void bq_sort_run(const bp_tree *t, uint64_t *l, size_t k, size_t j)
{
    for (size_t i = 1; i < k; i++) {
        uint64_t e = l[i];
        size_t p = i;
        for (; p > 0 && bq_below(t, e, l[p - 1], j); p--) l[p] = l[p - 1];
        l[p] = e;
    }
}

/* The extent along j of the node whose list j segment is l[0..k). Out of
 * line (BT_TWICE), like bq_pivot: inlined into bp_node they slow the rank
 * records' nodes down. */
GROVE__BODY() double bq_spread_body(const bp_tree *t, const uint64_t *l, size_t k, size_t j)
{
    uint64_t first = bq_field(t, l[0], j), last = bq_field(t, l[k - 1], j);
    double lo = bq_coord(t, l[0], j), hi = bq_coord(t, l[k - 1], j);
    for (size_t i = 1; i < k && bq_field(t, l[i], j) == first; i++) {
        double v = bq_coord(t, l[i], j);
        lo = v < lo ? v : lo;
    }
    for (size_t i = k - 1; i-- > 0 && bq_field(t, l[i], j) == last;) {
        double v = bq_coord(t, l[i], j);
        hi = v > hi ? v : hi;
    }
    return hi - lo;
}
GROVE__TWICE(double, bq_spread, (const bp_tree *t, const uint64_t *l, size_t k, size_t j), (t, l, k, j))

/* In list[0..k), move every record valued q along s to the side of
 * `pivot` it belongs on ((coordinate s, id) at least the pivot's: right)
 * to field value `to`, if that side is `right`. */
static void bq_move(const bp_tree *t, uint64_t *list, size_t k, size_t s, uint64_t q, uint64_t pivot, bool right,
                    uint64_t to)
{
    int shift = t->base + (int)s * t->bits;
    uint64_t clear = ~(t->mask << shift);
    grove__bq_find_fn *find = t->c->presort_kernels->find; /* the few valued q, eight records a step */
    for (size_t i = find(list, 0, k, shift, t->mask, q); i < k; i = find(list, i + 1, k, shift, t->mask, q))
        if (bq_below(t, list[i], pivot, s) != right) list[i] = (list[i] & clear) | to << shift;
}

/* The pivot field value that splits the node [off, off + k) of the lists
 * in buffers `where` along s into its floor(k/2) lowest (coordinate, id)
 * and the rest: a record goes right when its field s is at least the
 * pivot. Where the run at position h of the split list starts before h,
 * sorts it there and moves its right part one value up in every list (its
 * left part one value down when q is the largest value). */
static __attribute__((noinline)) uint64_t bq_pivot(const bp_tree *t, uint64_t where, size_t off, size_t k,
                                                    size_t h, size_t s)
{
    size_t n = t->n;
    uint64_t *split = t->rec[where >> s & 1] + s * n + off;
    uint64_t q = bq_field(t, split[h], s);
    size_t a = h, b = h + 1;
    while (a > 0 && bq_field(t, split[a - 1], s) == q) a--;
    if (a == h) return q; /* every record valued q goes right */
    while (b < k && bq_field(t, split[b], s) == q) b++;
    bq_sort_run(t, split + a, b - a, s);
    uint64_t pivot = split[h];
    bool up = q < t->mask;
    for (size_t j = 0; j < t->c->d; j++)
        bq_move(t, t->rec[where >> j & 1] + j * n + off, k, s, q, pivot, up, up ? q + 1 : q - 1);
    return up ? q + 1 : q;
}

/* The deferred list's check for long runs counts the records in each
 * 1024th of its field's range (the field has at least 14 bits): coarser,
 * and batches whose points crowd in one place (exponential ones at 0)
 * would fail it without a long run. */
#define BQ_CROWD_BITS 10
#define BQ_CROWD (1 << BQ_CROWD_BITS)

/* Rows [a, b) of t->x: each dimension's extent, or (lo and scale known)
 * their records into src, by the AVX-512 loops (presort_avx512.c). */
static bool bq_extent_part(const bp_tree *t, size_t a, size_t b, double *lo, double *hi)
{
    return t->c->presort_kernels->extent((const char *)t->x, t->x_id * sizeof(double), t->x_dim * sizeof(double),
                                         t->c->d, a, b, lo, hi);
}

static void bq_records_part(const bp_tree *t, size_t a, size_t b, const double *lo, const double *scale,
                            uint64_t *src, int j, uint32_t *crowd)
{
    int shift[GROVE__BQ_MAX_DIMS];
    for (size_t i = 0; i < t->c->d; i++) shift[i] = t->base + (int)i * t->bits;
    t->c->presort_kernels->records((const char *)t->x, t->x_id * sizeof(double), t->x_dim * sizeof(double), t->c->d,
                                   a, b, lo, scale, shift, t->mask, src);
    if (!crowd) return; /* else how many records fall in each BQ_CROWD-th of field j's range */
    /* Four sets of counts, a record to each in turn: crowded data
     * increment one count after another, and a single set would wait on
     * each increment before the next (blobs: 23 µs of a build's 390). */
    uint32_t lane[4][BQ_CROWD] = {{0}};
    int top = t->base + (j + 1) * t->bits - BQ_CROWD_BITS; /* the field's top bits */
    size_t i = a;
    for (; i + 4 <= b; i += 4)
        for (size_t l = 0; l < 4; l++) lane[l][src[i + l] >> top & (BQ_CROWD - 1)]++;
    for (; i < b; i++) lane[0][src[i] >> top & (BQ_CROWD - 1)]++;
    for (size_t v = 0; v < BQ_CROWD; v++) crowd[v] = lane[0][v] + lane[1][v] + lane[2][v] + lane[3][v];
}

/* Deferring one list (bp_node): the presort's sorts are tasks, one per
 * list, and a team of fewer threads than lists leaves threads idle while
 * the last ones run (16384 points, d = 3, two threads: the sorts took 59
 * of a build's 184 µs, two of them on one thread). With one list fewer
 * they pair up; the root splits the deferred list unsorted (a stable
 * partition does not need the order) and its two children sort their
 * halves, in parallel. Only where the team builds this batch alone (more
 * than half of all points: else other batches keep its threads busy).
 * The list deferred is the narrowest dimension's (from the root's extent,
 * lo and hi), with ties to the highest: never the root's split list (the
 * widest, ties to the lowest), and the spread the root reads from its
 * unsorted ends (bq_spread) is at most its true one, so the root's choice
 * of dimension stands. Returns it, or -1. */
static int bq_deferrable(const bp_tree *t, const double *lo, const double *hi)
{
    size_t d = t->c->d, narrowest = 0;
    if (!t->spawn || t->count < BT_TASK_MIN || 2 * t->count <= t->c->n) return -1;
    int thread, threads;
    grove__team_member(&thread, &threads);
    if (threads < 2 || (size_t)threads >= d) return -1;
    for (size_t j = 0; j < d; j++) narrowest = hi[j] - lo[j] <= hi[narrowest] - lo[narrowest] ? j : narrowest;
    return (int)narrowest;
}

/* Whether no run of a field can be longer than BQ_MAX_RUN, by the counts
 * of `parts` parts in each BQ_CROWD-th of its range: what the deferred
 * list's sorts, at the root's children, would find too late to go back to
 * ranks. */
static bool bq_sparse(uint32_t (*crowd)[BQ_CROWD], size_t parts)
{
    for (size_t v = 0; v < BQ_CROWD; v++) {
        uint32_t count = 0;
        for (size_t p = 0; p < parts; p++) count += crowd[p][v];
        if (count > BQ_MAX_RUN) return false;
    }
    return true;
}

/* Rows per part of the records pass, at most BQ_PARTS parts (tasks). */
#define BQ_PART 8192
#define BQ_PARTS 8

/* Every point's record, from t->x, in parts that are tasks where the
 * batch is large; returns where they are (buffer 1, unused until the
 * first split: the deferred list's place there, which the root reads
 * unsorted, else list 0's), and sets t->deferred. NULL when a dimension's
 * extent or scale overflows a double (the rank presort takes the batch
 * then), or when a coordinate is not finite (*t->c->nonfinite set). */
static uint64_t *bq_records(bp_tree *t)
{
    size_t m = t->count, d = t->c->d;
    size_t parts = t->spawn ? m / BQ_PART : 1;
    parts = parts < 1 ? 1 : parts > BQ_PARTS ? BQ_PARTS : parts;
    double lo[BQ_PARTS][BP_XD], hi[BQ_PARTS][BP_XD], scale[BP_XD];
    bool finite[BQ_PARTS];
    if (parts > 1) {
        for (size_t p = 0; p < parts; p++) {
#pragma omp task default(shared) firstprivate(p)
            finite[p] = bq_extent_part(t, p * m / parts, (p + 1) * m / parts, lo[p], hi[p]);
        }
#pragma omp taskwait
    } else {
        finite[0] = bq_extent_part(t, 0, m, lo[0], hi[0]);
    }
    for (size_t p = 0; p < parts; p++)
        if (!finite[p]) { /* only where the caller left the check to this pass (grove__bt_ctx.nonfinite) */
            if (t->c->nonfinite) *t->c->nonfinite = true;
            return NULL;
        }
    for (size_t j = 0; j < d; j++) {
        for (size_t p = 1; p < parts; p++) {
            lo[0][j] = lo[p][j] < lo[0][j] ? lo[p][j] : lo[0][j];
            hi[0][j] = hi[p][j] > hi[0][j] ? hi[p][j] : hi[0][j];
        }
        double extent = hi[0][j] - lo[0][j];
        scale[j] = extent > 0 ? (double)t->mask / extent : 0.0;
        /* Every point would land on 0 or the largest value, a run the
         * sorts would reject: say so before sorting. An extent that
         * overflows would also compare as a tie with other such spreads
         * (grove__bt_ctx.overflow). */
        if (!isfinite(extent) && t->c->overflow) *t->c->overflow = true;
        if (!isfinite(extent) || !isfinite(scale[j])) return NULL;
    }
    int defer = bq_deferrable(t, lo[0], hi[0]);
    uint64_t *src = t->rec[1] + (defer >= 0 ? (size_t)defer : 0) * t->n;
    uint32_t crowd[BQ_PARTS][BQ_CROWD];
    if (parts > 1) {
        for (size_t p = 0; p < parts; p++) {
#pragma omp task default(shared) firstprivate(p)
            bq_records_part(t, p * m / parts, (p + 1) * m / parts, lo[0], scale, src, defer,
                            defer >= 0 ? crowd[p] : NULL);
        }
#pragma omp taskwait
    } else {
        bq_records_part(t, 0, m, lo[0], scale, src, defer, defer >= 0 ? crowd[0] : NULL);
    }
    t->deferred = defer >= 0 && bq_sparse(crowd, parts) ? defer : -1;
    return src;
}

/* Whether segment l[0..m) of list j, sorted by field, has a run longer
 * than BQ_MAX_RUN. */
static bool bq_long_run(const bp_tree *t, const uint64_t *l, size_t m, size_t j)
{
    size_t run = 1;
    for (size_t i = 1; i < m; i++) {
        run = bq_field(t, l[i], j) == bq_field(t, l[i - 1], j) ? run + 1 : 1;
        if (run > BQ_MAX_RUN) return true;
    }
    return false;
}

/* The records src[0..m) sorted by field j into dst, an LSD radix sort
 * through the thread's scratch (insertion for a few, a bitonic network up
 * to GROVE__BQ_SMALL: bitonic_avx512.c). False when they have
 * a run longer than BQ_MAX_RUN (checked only where a top digit holds more
 * records than that). */
GROVE__BODY() bool bq_sort_list_body(const bp_tree *t, const uint64_t *src, size_t m, uint64_t *dst, size_t j)
{
    int shift = t->base + (int)j * t->bits;
    if (m <= BQ_INSERTION) { /* a few records: no bins to clear and sum */
        for (size_t i = 0; i < m; i++) {
            uint64_t e = src[i], q = bq_field(t, e, j);
            size_t p = i;
            for (; p > 0 && bq_field(t, dst[p - 1], j) > q; p--) dst[p] = dst[p - 1];
            dst[p] = e;
        }
        return true;
    }
    if (m <= GROVE__BQ_SMALL && t->mask < (UINT64_C(1) << (32 - GROVE__BQ_SMALL_BITS))) {
        t->c->presort_kernels->sort_small(src, m, shift, t->mask, dst);
        return !(m > BQ_MAX_RUN && bq_long_run(t, dst, m, j));
    }
    /* Digits of at most the id's bits (t->base): at most about m bins */
    grove__bt_digits r;
    grove__bt_digits_count(&r, src, m, shift, t->bits, t->base < GROVE__BQ_DIGIT ? t->base : GROVE__BQ_DIGIT);
    uint32_t crowded = 0; /* the most records with one top digit */
    for (uint64_t v = 0; v < (uint64_t)1 << r.digit; v++) {
        uint32_t c = r.hist[r.passes - 1][v];
        crowded = c > crowded ? c : crowded;
    }
    int last = -1; /* the last pass that moves anything */
    for (int p = 0; p < r.passes; p++)
        if (grove__bt_digits_move(&r, p, src[0], m)) last = p;
    uint64_t *scratch = grove__bt_scratch(t->c);
    const uint64_t *from = src;
    int other = 0;
    for (int p = 0; p <= last; p++) {
        if (!grove__bt_digits_move(&r, p, src[0], m)) continue;
        uint64_t *to = p == last ? dst : scratch + (size_t)other * m;
        other ^= 1;
        grove__bt_digits_scatter(&r, p, from, to, m);
        from = to;
    }
    if (last < 0) memcpy(dst, src, m * sizeof *dst);
    return !(crowded > BQ_MAX_RUN && bq_long_run(t, dst, m, j));
}
GROVE__TWICE(bool, bq_sort_list, (const bp_tree *t, const uint64_t *src, size_t m, uint64_t *dst, size_t j),
         (t, src, m, dst, j))

/* List j of buffer 0 from the records, but the deferred one (as
 * bq_sort_list). */
static bool bq_presort_list(const bp_tree *t, const uint64_t *src, size_t j)
{
    return (int)j == t->deferred || BT_CORE(t->c, bq_sort_list)(t, src, t->count, t->rec[0] + j * t->n, j);
}

/* The quantized presort's lists in buffer 0, once bq_quantize has made
 * the records (src), but the deferred one (bq_deferrable): false when a
 * list has a run longer than BQ_MAX_RUN. Each dimension's sort is a task
 * of its own where the batch is large. */
static bool bq_presort(const bp_tree *t, const uint64_t *src)
{
    size_t d = t->c->d;
    bool ok[BP_XD];
    if (t->spawn && t->count >= BT_TASK_MIN) {
        for (size_t j = 0; j < d; j++) {
#pragma omp task default(shared) firstprivate(j)
            ok[j] = bq_presort_list(t, src, j);
        }
#pragma omp taskwait
    } else {
        for (size_t j = 0; j < d; j++) ok[j] = bq_presort_list(t, src, j);
    }
    for (size_t j = 0; j < d; j++)
        if (!ok[j]) return false;
    return true;
}

/* Small full-mode subtrees as bit masks (bb_*), where the machine has
 * AVX-512 BITALG and BMI2 (bp_node hands them nodes of at most BB_MAX
 * points in 2..BB_DIMS dimensions, and the lists and the rank-counting
 * code keep the rest).
 *
 * A node of k <= 64 points gives each point a local id, its position in
 * the node's segment of list 0, and keeps per dimension j
 *
 * - ord_j: the local ids in list j's order, i.e. in (coordinate, id) order
 *   along j, and rnk_j its inverse (local id -> position along j);
 * - s_j: the coordinates in that order (a point's coordinate along j is
 *   s_j[rnk_j[p]]).
 *
 * With rank records (bb_gather_ranks) the lists are in that order already
 * and the coordinates come from the sorted arrays by rank; with quantized
 * records (bb_gather_quantized) they come from the
 * points by id, and the lists' runs of equal fields are sorted first.
 *
 * Any node below it is then a 64-bit mask of local ids. One bit-shuffle
 * instruction (vpshufbitqmb) per dimension turns the mask into its
 * positions along that dimension; the lowest and highest position along j
 * give the extent s_j[first] .. s_j[last] (max - min exactly, as
 * elsewhere), so the split dimension costs a few bit scans and loads. The
 * left child is the lowest floor(k/2) positions along the split dimension
 * (one pdep), turned back into local ids by one more bit-shuffle through
 * rnk (rnk_0 is the identity, so a split along dimension 0 takes the same
 * path). Leaves of two points order along their widest dimension by
 * position. No lists are partitioned below the node, and nothing branches
 * on the data: on fresh points the split dimension and a leaf's order are
 * coin flips, which a branch predictor learns only when the same points
 * are built again and again. Two sibling subtrees are built side by side
 * (bb_tree), roots without shuffles (bb_root_left), leaves eight at a
 * time (bb_leaves8). The output is the bytes of the list code: `make
 * check` runs the ball tree tests both ways (GROVE_CPU=portable
 * turns this off). */

/* Nodes whose bit-mask subtrees are built side by side: segments
 * [off[u], off[u] + k[u]) of every list, in buffers where[u] (as in
 * bp_node), their slots from out[u]. Four side by side (the grandchildren
 * of a node of at most 4 BB_MAX points) measured the same as two. */
#define BB_SUBS 2
typedef struct bb_nodes {
    size_t count;
    uint64_t where[BB_SUBS];
    size_t off[BB_SUBS], k[BB_SUBS], out[BB_SUBS];
} bb_nodes;

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define BB_TARGET __attribute__((target("avx512f,avx512bw,avx512cd,avx512vbmi,avx512bitalg,bmi,bmi2,lzcnt,popcnt")))
/* Points in a mask, and dimensions (dimension 0's order is the local
 * order itself, so ord has one row fewer). */
#define BB_MAX 64
#define BB_DIMS GROVE__BB_DIMS
/* Subtrees built side by side (bb_tree): at most BB_SUBS, in at most
 * BB_SUBS_DIMS dimensions (d = 4, with more values live per node,
 * measured slower two side by side). */
#define BB_SUBS_DIMS 3
/* An index byte for the positions past k: it selects bit 63, which is
 * clear in a mask of fewer than 64 points (with 64, no position is past
 * k). */
#define BB_NONE 63

typedef struct bb_sub {
    const bp_tree *t;
    int levels;                        /* the batch's full-mode levels */
    size_t row[BB_MAX];                /* input rows by local id */
    double s[BB_DIMS][BB_MAX];         /* coordinates along j in j's order */
    uint8_t ord[BB_DIMS - 1][64];      /* local ids in dimension j + 1's order */
    uint8_t rnk[BB_DIMS][64];          /* local id -> position along j */
} bb_sub;

/* The bits of the 64-bit mask `m` picked by the 64 index bytes at idx:
 * result bit i is bit idx[i] of m. */
static inline BB_TARGET uint64_t bb_shuffle(uint64_t m, const uint8_t *idx)
{
    return (uint64_t)_mm512_bitshuffle_epi64_mask(_mm512_set1_epi64((long long)m), _mm512_loadu_si512(idx));
}

static inline BB_TARGET int bb_first(uint64_t m) { return __builtin_ctzll(m); }
static inline BB_TARGET int bb_last(uint64_t m) { return 63 - __builtin_clzll(m); }

/* A leaf of one or two points (the mask's lowest and highest bit),
 * ordered along its widest dimension. */
static inline BB_TARGET __attribute__((always_inline)) void bb_leaf(const bb_sub *b, uint64_t m, int64_t *indices,
                                                                  uint8_t *mask, size_t d)
{
    int p = bb_first(m), q = bb_last(m);
    size_t s = 0;
    double best_spread = -1.0;
    for (size_t j = 0; j < d; j++)
        grove__bt_widest(fabs(b->s[j][b->rnk[j][p]] - b->s[j][b->rnk[j][q]]), j, &s, &best_spread);
    size_t swap = (size_t)0 - (size_t)(b->rnk[s][q] < b->rnk[s][p]); /* arithmetic, not a branch: a coin flip */
    size_t first = ((size_t)q & swap) | ((size_t)p & ~swap), second = (size_t)(p ^ q) ^ first;
    indices[0] = (int64_t)b->row[first];
    indices[1] = (int64_t)b->row[second];
    if (mask) {
        mask[0] = 1;
        mask[1] = p != q;
    }
}

/* Entry idx (0..63, a lane each) of the 64-entry table t (eight vectors):
 * four two-vector permutations pick among sixteen entries each by bits
 * 0..3, and bits 4 and 5 pick among the four. */
static inline BB_TARGET __attribute__((always_inline)) __m512i bb_lookup64(const void *t, __m512i idx,
                                                                         __mmask8 bit4, __mmask8 bit5)
{
    const __m512i *v = (const __m512i *)t;
    __m512i a = _mm512_permutex2var_epi64(_mm512_loadu_si512(v), idx, _mm512_loadu_si512(v + 1));
    __m512i b = _mm512_permutex2var_epi64(_mm512_loadu_si512(v + 2), idx, _mm512_loadu_si512(v + 3));
    __m512i c = _mm512_permutex2var_epi64(_mm512_loadu_si512(v + 4), idx, _mm512_loadu_si512(v + 5));
    __m512i e = _mm512_permutex2var_epi64(_mm512_loadu_si512(v + 6), idx, _mm512_loadu_si512(v + 7));
    return _mm512_mask_blend_epi64(bit5, _mm512_mask_blend_epi64(bit4, a, b), _mm512_mask_blend_epi64(bit4, c, e));
}

/* Eight leaves of one subtree at once, as bb_leaf: their masks at
 * m[0], m[subs], ..., m[7 subs], their slots from indices (and real).
 * Table lookups by permutation, not gathers: an eight-lane gather takes
 * about 13 cycles on AMD Zen 5, longer than the scalar leaf it replaces. */
static inline BB_TARGET __attribute__((always_inline)) void bb_leaves8(const bb_sub *b, const uint64_t *m,
                                                                     size_t subs, int64_t *indices, uint8_t *real,
                                                                     size_t d)
{
    __m512i masks = subs == 1 ? _mm512_loadu_si512(m)
                              : _mm512_permutex2var_epi64(_mm512_loadu_si512(m),
                                                          _mm512_setr_epi64(0, 2, 4, 6, 8, 10, 12, 14),
                                                          _mm512_loadu_si512(m + 8));
    const __m512i top = _mm512_set1_epi64(63), b4 = _mm512_set1_epi64(16), b5 = _mm512_set1_epi64(32);
    /* The lowest and highest member, p and q (equal in a leaf of one) */
    __m512i lowest = _mm512_and_si512(masks, _mm512_sub_epi64(_mm512_setzero_si512(), masks));
    __m512i p = _mm512_sub_epi64(top, _mm512_lzcnt_epi64(lowest));
    __m512i q = _mm512_sub_epi64(top, _mm512_lzcnt_epi64(masks));
    /* The widest dimension of each pair (ties to the lowest), and whether
     * q comes first along it */
    __m512d best = _mm512_set1_pd(-1.0);
    __mmask8 swap = 0;
    for (size_t j = 0; j < d; j++) {
        /* Their positions along j, rnk[j][p] and rnk[j][q]: bytes looked up
         * by vpermb, in each lane's low byte; their coordinates are s[j] there */
        __m512i rnk = _mm512_loadu_si512(b->rnk[j]), byte = _mm512_set1_epi64(0xff);
        __m512i rp = _mm512_and_si512(_mm512_permutexvar_epi8(p, rnk), byte);
        __m512i rq = _mm512_and_si512(_mm512_permutexvar_epi8(q, rnk), byte);
        __mmask8 rp4 = _mm512_test_epi64_mask(rp, b4), rp5 = _mm512_test_epi64_mask(rp, b5);
        __mmask8 rq4 = _mm512_test_epi64_mask(rq, b4), rq5 = _mm512_test_epi64_mask(rq, b5);
        __m512d xp = _mm512_castsi512_pd(bb_lookup64(b->s[j], rp, rp4, rp5));
        __m512d xq = _mm512_castsi512_pd(bb_lookup64(b->s[j], rq, rq4, rq5));
        __m512d spread = _mm512_abs_pd(_mm512_sub_pd(xp, xq));
        __mmask8 wider = _mm512_cmp_pd_mask(spread, best, _CMP_GT_OQ);
        best = _mm512_max_pd(spread, best);
        __mmask8 q_first = _mm512_cmplt_epu64_mask(rq, rp);
        swap = (__mmask8)((wider & q_first) | (~wider & swap));
    }
    __m512i first = _mm512_mask_blend_epi64(swap, p, q), second = _mm512_mask_blend_epi64(swap, q, p);
    __mmask8 f4 = _mm512_test_epi64_mask(first, b4), f5 = _mm512_test_epi64_mask(first, b5);
    __mmask8 s4 = _mm512_test_epi64_mask(second, b4), s5 = _mm512_test_epi64_mask(second, b5);
    __m512i rf = bb_lookup64(b->row, first, f4, f5), rs = bb_lookup64(b->row, second, s4, s5);
    _mm512_storeu_si512(indices, _mm512_permutex2var_epi64(rf, _mm512_setr_epi64(0, 8, 1, 9, 2, 10, 3, 11), rs));
    _mm512_storeu_si512(indices + 8, _mm512_permutex2var_epi64(rf, _mm512_setr_epi64(4, 12, 5, 13, 6, 14, 7, 15), rs));
    if (real) { /* 1, then whether the second slot holds a real point (p != q), four leaves a word */
        uint64_t two = _mm512_cmpneq_epi64_mask(p, q), ones = UINT64_C(0x0001000100010001);
        uint64_t second_bytes = UINT64_C(0x0100010001000100);
        uint64_t lo = ones | _pdep_u64(two & 15, second_bytes), hi = ones | _pdep_u64(two >> 4, second_bytes);
        memcpy(real, &lo, sizeof lo);
        memcpy(real + 8, &hi, sizeof hi);
    }
}

/* The left half of node m: the floor(k/2) lowest positions along its
 * widest dimension, as local ids. */
static inline BB_TARGET __attribute__((always_inline)) uint64_t bb_left(const bb_sub *b, uint64_t m, size_t d)
{
    size_t s = 0;
    double best_spread = -1.0;
    uint64_t pos[BB_DIMS] = {m}; /* the node's positions along each dimension */
    for (size_t j = 1; j < d; j++) pos[j] = bb_shuffle(m, b->ord[j - 1]);
    for (size_t j = 0; j < d; j++)
        grove__bt_widest(b->s[j][bb_last(pos[j])] - b->s[j][bb_first(pos[j])], j, &s, &best_spread);
    unsigned h = (unsigned)__builtin_popcountll(m) / 2;
    uint64_t left_pos = _pdep_u64(((uint64_t)1 << h) - 1, pos[s]);
    return bb_shuffle(left_pos, b->rnk[s]); /* rnk[0] is the identity: no branch on s */
}

/* Local ids in order: dimension 0's order (bb_root_left). */
#define BB_RUN8(a) a, a + 1, a + 2, a + 3, a + 4, a + 5, a + 6, a + 7
static const uint8_t bb_identity[BB_MAX] = {BB_RUN8(0),  BB_RUN8(8),  BB_RUN8(16), BB_RUN8(24),
                                            BB_RUN8(32), BB_RUN8(40), BB_RUN8(48), BB_RUN8(56)};
#undef BB_RUN8

/* bb_left for a subtree's root, its k points all there: their positions
 * along every dimension are 0..k-1, so no shuffles, and the left half is
 * the first k / 2 local ids of the split dimension's order, read a byte
 * at a time. The gather has just written the orders and ranks a byte at
 * a time, and a 64-byte load of a row still in the store buffer waits for
 * it to drain, so the roots take this path (faster, too, than a fence
 * before the trees that drains the stores at once). */
static inline BB_TARGET __attribute__((always_inline)) uint64_t bb_root_left(const bb_sub *b, size_t k, size_t d)
{
    size_t s = 0;
    double best_spread = -1.0;
    for (size_t j = 0; j < d; j++) grove__bt_widest(b->s[j][k - 1] - b->s[j][0], j, &s, &best_spread);
    const uint8_t *order = s ? b->ord[s - 1] : bb_identity;
    uint64_t left = 0;
    for (size_t i = 0; i < k / 2; i++) left |= (uint64_t)1 << order[i];
    return left;
}

/* The subtrees of nodes all[0..subs) at `level`, their slots from
 * out[0..subs), a level at a time: the nodes of a level are independent,
 * so their splits overlap in the pipeline (a recursion waits on each
 * split's chain of dependent loads and bit operations). With two subtrees
 * their nodes alternate (node i of subtree u at i * subs + u), so even a
 * top level's one or two nodes have a sibling's to overlap with. The loop
 * body stays that of one node: the two unrolled into one iteration, with
 * more values live at once, measured slower at d = 2. In full mode
 * node i of a level, counted from the left, has its slots at
 * out + i * 2^(levels - level). d and subs are constants where bb_build
 * calls this, so the loops over them unroll. */
static inline BB_TARGET __attribute__((always_inline)) void bb_tree(const bb_sub *b, size_t subs,
                                                                  const uint64_t *all, int level,
                                                                  const size_t *out, size_t d)
{
    uint64_t mask[2][BB_SUBS * BB_MAX]; /* a node of k points has at most k leaves */
    size_t nodes = subs;                /* in all subtrees */
    for (size_t u = 0; u < subs; u++) mask[0][u] = all[u];
    int cur = 0;
    for (; level < b->levels; level++, nodes *= 2, cur = !cur) {
        if (nodes == subs) { /* the roots */
            for (size_t u = 0; u < subs; u++) {
                uint64_t m = all[u], left = bb_root_left(&b[u], (size_t)__builtin_popcountll(m), d);
                mask[!cur][u] = left;
                mask[!cur][subs + u] = m & ~left;
            }
            continue;
        }
        for (size_t i = 0; i < nodes; i++) {
            size_t u = i % subs, node = i / subs;
            uint64_t m = mask[cur][i], left = bb_left(&b[u], m, d);
            mask[!cur][2 * node * subs + u] = left;
            mask[!cur][(2 * node + 1) * subs + u] = m & ~left;
        }
    }
    /* The output pointers in locals: the mask's byte stores could alias
     * anything read through b. */
    int64_t *indices = b->t->c->indices;
    uint8_t *real = b->t->c->mask;
    for (size_t u = 0; u < subs; u++) {
        size_t leaves = nodes / subs, i = 0;
        /* Eight at a time in 3 or 4 dimensions; with d = 2 the scalar leaf
         * is shorter and measured faster. */
        for (; d > 2 && i + 8 <= leaves; i += 8) {
            size_t slot = out[u] + 2 * i;
            bb_leaves8(&b[u], mask[cur] + i * subs + u, subs, indices + slot, real ? real + slot : NULL, d);
        }
        for (; i < leaves; i++) {
            size_t slot = out[u] + 2 * i;
            bb_leaf(&b[u], mask[cur][i * subs + u], indices + slot, real ? real + slot : NULL, d);
        }
    }
}

/* bb_subtree's points from rank records: the map from a rank along
 * dimension 0 to the local id is the thread's sort scratch, free once the
 * presort is done (nothing here is a task scheduling point, so no other
 * node of this thread interleaves). One map for the whole batch, each
 * node writing only its own ranks' bytes, had two threads writing the
 * same cache lines. */
static inline BB_TARGET __attribute__((always_inline)) void bb_gather_ranks(bb_sub *b, uint64_t where, size_t off,
                                                                          size_t k, size_t d)
{
    const bp_tree *t = b->t;
    size_t n = t->n;
    /* Everything read through t in locals: the byte stores below could
     * alias it. */
    const uint32_t *perm = t->perm, *ids = t->ids;
    const double *val = t->val;
    uint64_t rank_mask = t->mask;
    uint8_t *local = (uint8_t *)grove__bt_scratch(t->c);
    const uint64_t *l0 = t->rec[where & 1] + off;
    for (size_t p = 0; p < k; p++) {
        uint64_t r = bp_rank(l0[p], 0, rank_mask);
        uint32_t id = perm[r];
        local[r] = (uint8_t)p;
        b->row[p] = grove__bt_row(t->c, t->b, ids ? ids[id] : id);
        b->s[0][p] = val[r];
        b->rnk[0][p] = (uint8_t)p;
    }
    for (size_t j = 1; j < d; j++) {
        const uint64_t *l = t->rec[where >> j & 1] + j * n + off;
        const double *v = val + j * n;
        int shift = (int)j * t->bits;
        uint8_t *ord = b->ord[j - 1];
        for (size_t i = 0; i < k; i++) {
            uint64_t e = l[i];
            uint8_t p = local[bp_rank(e, 0, rank_mask)];
            b->s[j][i] = v[bp_rank(e, shift, rank_mask)];
            b->rnk[j][p] = (uint8_t)i;
            ord[i] = p;
        }
    }
}

/* The entries of l[0..k), k <= 64, whose field at `shift` equals their
 * left neighbour's, as bits (bit i: l[i] and l[i - 1]), eight pairs at a
 * time. */
static inline BB_TARGET __attribute__((always_inline)) uint64_t bb_ties(const uint64_t *l, size_t k, int shift,
                                                                      uint64_t mask)
{
    const __m128i count = _mm_cvtsi32_si128(shift);
    const __m512i vmask = _mm512_set1_epi64((long long)mask);
    uint64_t ties = 0;
    for (size_t i = 1; i < k; i += 8) {
        __mmask8 live = (__mmask8)(k - i >= 8 ? 0xff : (1u << (k - i)) - 1);
        __m512i a = _mm512_maskz_loadu_epi64(live, l + i), b = _mm512_maskz_loadu_epi64(live, l + i - 1);
        __m512i f = _mm512_and_si512(_mm512_srl_epi64(_mm512_xor_si512(a, b), count), vmask);
        ties |= (uint64_t)_mm512_mask_cmpeq_epi64_mask(live, f, _mm512_setzero_si512()) << i;
    }
    return ties;
}

/* Sort the entries [a, b) of a dimension's order, a run of one field
 * value, by (coordinate, batch-local id): coordinates v, local ids at
 * `ord`, their records at `rec`, all permuted together. */
static void bb_sort_run(double *v, uint8_t *ord, uint64_t *rec, size_t a, size_t b, uint64_t id_mask)
{
    for (size_t i = a + 1; i < b; i++) {
        double x = v[i];
        uint8_t o = ord[i];
        uint64_t e = rec[i];
        size_t p = i;
        for (; p > a && (x < v[p - 1] || (x == v[p - 1] && (e & id_mask) < (rec[p - 1] & id_mask))); p--) {
            v[p] = v[p - 1];
            ord[p] = ord[p - 1];
            rec[p] = rec[p - 1];
        }
        v[p] = x;
        ord[p] = o;
        rec[p] = e;
    }
}

/* Sort every run of equal fields of a dimension's order (as bb_sort_run),
 * the runs given by bb_ties: only they are visited. */
static void bb_sort_runs(double *v, uint8_t *ord, uint64_t *rec, uint64_t ties, uint64_t id_mask)
{
    while (ties) {
        size_t a = (size_t)__builtin_ctzll(ties) - 1;     /* the run's first entry */
        uint64_t rest = ~(ties >> (a + 1));                /* its later entries are the ones from a + 1 on */
        size_t b = a + 1 + (size_t)__builtin_ctzll(rest);  /* rest != 0: bit 63 of ties >> (a + 1) is clear */
        bb_sort_run(v, ord, rec, a, b, id_mask);
        ties &= b < 64 ? ~(uint64_t)0 << b : 0;
    }
}

/* bb_subtree's points from quantized records (bq_*), the map
 * from a batch-local id to the local id in the thread's sort scratch (as
 * for ranks). A list's runs of equal fields are in any order: they are
 * sorted here, from the coordinates gathered, where there are any. */
static inline BB_TARGET __attribute__((always_inline)) void bb_gather_quantized(bb_sub *b, uint64_t where,
                                                                              size_t off, size_t k, size_t d)
{
    const bp_tree *t = b->t;
    size_t n = t->n;
    const uint32_t *ids = t->ids;
    const double *x = t->x;
    size_t x_id = t->x_id, x_dim = t->x_dim;
    uint64_t id_mask = t->id_mask, mask = t->mask;
    uint8_t *local = (uint8_t *)grove__bt_scratch(t->c);
    uint64_t *l0 = t->rec[where & 1] + off;
    for (size_t i = 0; i < k; i++) b->s[0][i] = x[(l0[i] & id_mask) * x_id];
    uint64_t ties = bb_ties(l0, k, t->base, mask);
    if (ties) { /* dimension 0's order gives the local ids: sort its runs first */
        uint8_t position[BB_MAX]; /* permuted along, not needed after */
        memcpy(position, bb_identity, k);
        bb_sort_runs(b->s[0], position, l0, ties, id_mask);
    }
    const size_t *order = t->c->order; /* grove__bt_row's inputs in locals: the byte stores could alias them */
    size_t start = t->b->start;
    for (size_t p = 0; p < k; p++) {
        size_t id = l0[p] & id_mask, g = start + (ids ? ids[id] : id);
        b->row[p] = order ? order[g] : g;
    }
    /* Dimension 0's order is the local order: its ranks are the identity,
     * copied whole. */
    memcpy(b->rnk[0], bb_identity, k);
    for (size_t p = 0; p < k; p++) local[l0[p] & id_mask] = (uint8_t)p;
    for (size_t j = 1; j < d; j++) {
        uint64_t *l = t->rec[where >> j & 1] + j * n + off;
        uint8_t *ord = b->ord[j - 1];
        for (size_t i = 0; i < k; i++) {
            size_t id = l[i] & id_mask;
            uint8_t p = local[id];
            b->s[j][i] = x[id * x_id + j * x_dim];
            b->rnk[j][p] = (uint8_t)i;
            ord[i] = p;
        }
        int shift = t->base + (int)j * t->bits;
        ties = bb_ties(l, k, shift, mask);
        if (ties) {
            bb_sort_runs(b->s[j], ord, l, ties, id_mask);
            for (size_t i = 0; i < k; i++) b->rnk[j][ord[i]] = (uint8_t)i;
        }
    }
}

/* bb_subtree for a constant d: its subtrees' points, then their trees. */
static inline BB_TARGET __attribute__((always_inline)) void bb_build(const bp_tree *t, const bb_nodes *nodes,
                                                                   int level, size_t d)
{
    bb_sub b[BB_SUBS];
    uint64_t all[BB_SUBS];
    for (size_t u = 0; u < nodes->count; u++) {
        b[u].t = t;
        b[u].levels = t->b->levels;
        memset(b[u].ord, BB_NONE, sizeof b[u].ord);
        memset(b[u].rnk, BB_NONE, sizeof b[u].rnk);
        all[u] = nodes->k[u] == 64 ? UINT64_MAX : ((uint64_t)1 << nodes->k[u]) - 1;
        if (t->quantized)
            bb_gather_quantized(&b[u], nodes->where[u], nodes->off[u], nodes->k[u], d);
        else
            bb_gather_ranks(&b[u], nodes->where[u], nodes->off[u], nodes->k[u], d);
    }
    if (nodes->count == 1) /* a constant count in each call: the loops over it unroll */
        bb_tree(b, 1, all, level, nodes->out, d);
    else
        bb_tree(b, BB_SUBS, all, level, nodes->out, d);
}

/* One function per d, each starting a cache line of its own: the code of
 * one d then sits the same wherever the others change. Inlined into one
 * function, a change to the d = 3 code (bb_ties) moved the d = 4 loops,
 * which it does not use, and slowed d = 4 down. */
#define BB_BUILD_D(dims)                                                                                     \
    static BB_TARGET __attribute__((noinline, aligned(64))) void bb_build_##dims(const bp_tree *t,            \
                                                                                const bb_nodes *nodes, int level) \
    {                                                                                                        \
        bb_build(t, nodes, level, dims);                                                                     \
    }
BB_BUILD_D(2)
BB_BUILD_D(3)
BB_BUILD_D(4)
#undef BB_BUILD_D

/* The full-mode nodes of `nodes`, all at `level` (as in bp_node), of at
 * most BB_MAX points each, in 2 <= d <= BB_DIMS dimensions, and their
 * subtrees. */
static void bb_subtree(const bp_tree *t, const bb_nodes *nodes, int level)
{
    switch (t->c->d) {
    case 2: bb_build_2(t, nodes, level); break;
    case 3: bb_build_3(t, nodes, level); break;
    default: bb_build_4(t, nodes, level);
    }
}

/* How many levels below a node of k points in d dimensions its bit-mask
 * subtrees start, when at most BB_SUBS of them (1 above BB_SUBS_DIMS
 * dimensions) cover it; -1 when there would be more. */
static int bb_depth(size_t k, size_t d)
{
    int depth = 0;
    while (k > ((size_t)BB_MAX << depth)) depth++;
    return ((size_t)1 << depth) <= (d <= BB_SUBS_DIMS ? (size_t)BB_SUBS : 1) ? depth : -1;
}

#else
#define BB_MAX 0
static inline void bb_subtree(const bp_tree *t, const bb_nodes *nodes, int level) { (void)t, (void)nodes, (void)level; }
static int bb_depth(size_t k, size_t d) { return (void)k, (void)d, -1; }
#endif

/* Split the node holding segment [off, off + k) of every list, list j in
 * buffer (*where >> j) & 1: its left child is the first k / 2 entries of
 * every list, its right child the rest, the lists' buffers then in *where
 * (every list but the split one partitioned into the other buffer). */
static void bp_split(const bp_tree *t, uint64_t *where, size_t off, size_t k)
{
    const grove__bt_ctx *c = t->c;
    size_t n = t->n, d = c->d, h = k / 2;
    int bits = t->bits;
#define BP_LIST(j, buf) (t->rec[buf] + (j) * n + off)
    size_t s = 0;
    double best_spread = -1.0;
    for (size_t j = 0; j < d; j++) {
        const uint64_t *l = BP_LIST(j, *where >> j & 1);
        const double *v = t->val + j * n;
        int shift = (int)j * bits;
        double spread = t->quantized ? BT_CORE(t->c, bq_spread)(t, l, k, j)
                                     : v[bp_rank(l[k - 1], shift, t->mask)] - v[bp_rank(l[0], shift, t->mask)];
        grove__bt_widest(spread, j, &s, &best_spread);
    }
    const uint64_t *split = BP_LIST(s, *where >> s & 1);
    int shift = t->base + (int)s * bits;
    uint64_t pivot = t->quantized ? bq_pivot(t, *where, off, k, h, s) : bp_rank(split[h], shift, t->mask);
    /* The root of a batch the team builds alone (more than half of all
     * points) is the only node then: its lists, if more than one, are
     * partitioned as tasks. */
    bool team = t->spawn && k == t->count && k >= BT_TASK_MIN && 2 * k > c->n && c->lists > 2;
    for (size_t j = 0; j < c->lists; j++) {
        unsigned buf = *where >> j & 1;
        if (j == s) continue;
        if (team) {
#pragma omp task default(shared) firstprivate(j, buf)
            t->partition(BP_LIST(j, buf), BP_LIST(j, !buf), k, h, shift, t->mask, pivot);
        } else {
            t->partition(BP_LIST(j, buf), BP_LIST(j, !buf), k, h, shift, t->mask, pivot);
        }
    }
    if (team) {
#pragma omp taskwait
    }
    *where ^= (((uint64_t)1 << c->lists) - 1) & ~((uint64_t)1 << s);
#undef BP_LIST
}

/* The nodes `depth` levels below the node [off, off + k) at `level`,
 * appended to `to` left to right, splitting the nodes between. */
static void bp_descend(const bp_tree *t, uint64_t where, size_t off, size_t k, int level, size_t out, int depth,
                       bb_nodes *to)
{
    if (depth == 0) {
        to->where[to->count] = where;
        to->off[to->count] = off;
        to->k[to->count] = k;
        to->out[to->count++] = out;
        return;
    }
    size_t h = k / 2, right_out = grove__bt_right_out(t->c, t->b, out, h, level);
    bp_split(t, &where, off, k);
    bp_descend(t, where, off, h, level + 1, out, depth - 1, to);
    bp_descend(t, where, off + h, k - h, level + 1, right_out, depth - 1, to);
}

/* The node holding segment [off, off + k) of every list, list j in buffer
 * (where >> j) & 1, at `level`, its slots starting at `out`. */
static void bp_node(const bp_tree *t, uint64_t where, size_t off, size_t k, int level, size_t out)
{
    const grove__bt_ctx *c = t->c;
    if (k >= BT_TASK_MIN && grove__bt_cancelled(c)) return;
    size_t n = t->n, h = k / 2;
#define BP_LIST(j, buf) (t->rec[buf] + (j) * n + off)
    if (t->deferred >= 0 && level == 1) { /* the root split the deferred list unsorted: sort this half */
        size_t j = (size_t)t->deferred;
        unsigned buf = where >> j & 1;
        (void)BT_CORE(t->c, bq_sort_list)(t, BP_LIST(j, buf), k, BP_LIST(j, !buf), j); /* no long run: bq_sparse */
        where ^= (uint64_t)1 << j;
    }
    const uint64_t *last = BP_LIST(c->lists - 1, where >> (c->lists - 1) & 1); /* in id order in partition mode */
#undef BP_LIST
    if (c->partition && level == t->b->levels) { /* a leaf: rows ascending */
        for (size_t i = 0; i < k; i++) bp_emit(t, out + i, last[i], 1);
        return;
    }
    int depth = c->small_bits ? bb_depth(k, c->d) : -1;
    if (depth >= 0) { /* the bit-mask subtrees below, side by side */
        bb_nodes nodes = {0};
        bp_descend(t, where, off, k, level, out, depth, &nodes);
        bb_subtree(t, &nodes, level + depth);
        return;
    }
    if (k <= BP_SMALL) {
        bp_small(t, last, k, level, out);
        return;
    }
    bp_split(t, &where, off, k);
    size_t right_out = grove__bt_right_out(c, t->b, out, h, level);
    if (t->spawn && k >= BT_TASK_MIN) {
#pragma omp task default(shared) firstprivate(t, where, off, h, level, out)
        bp_node(t, where, off, h, level + 1, out);
    } else {
        bp_node(t, where, off, h, level + 1, out);
    }
    bp_node(t, where, off + h, k - h, level + 1, right_out);
}

/* The presort reads the input's coordinates: coordinate j of batch-local
 * id i in v, as double (rows of floats when f32). */
static inline double bp_coord(const grove__bt_view *v, bool f32, uint32_t i, size_t j)
{
    const char *row = v->base + (v->rows ? v->rows[i] : i) * v->stride;
    return f32 ? (double)((const float *)(const void *)row)[j] : ((const double *)(const void *)row)[j];
}

/* The rank presort of dimension j: its batch-local ids by (coordinate,
 * id) into perm, by the presorted builder's sort. */
static void bp_presort_dim(const grove__bt_view *v, const bp_tree *t, bool f32, size_t j)
{
    size_t m = t->count;
    uint32_t *perm = t->perm + j * t->n;
    for (size_t i = 0; i < m; i++) perm[i] = (uint32_t)i;
    uint64_t *a = grove__bt_scratch(t->c);
    grove__bt_sort(t->c, v, f32, j, perm, m, a, a + m);
}

/* Once dimension j is sorted: its coordinates in sorted order into val. */
static void bp_presort_val(const grove__bt_view *v, const bp_tree *t, bool f32, size_t j)
{
    size_t m = t->count, at = j * t->n;
    const uint32_t *perm = t->perm + at;
    double *val = t->val + at;
    const grove__bt_presort_kernels *kern = t->c->presort_kernels;
    if (kern && !v->rows) {
        kern->gather[!f32](v->base + j * (f32 ? sizeof(float) : sizeof(double)), v->stride, perm, m, val);
    } else {
        for (size_t r = 0; r < m; r++) val[r] = bp_coord(v, f32, perm[r], j);
    }
}

/* Sort every dimension, pack each point's ranks into its record, and fill
 * buffer 0's lists: list j the records in dimension j's order, and in
 * partition mode list d the records in id order. The records are built
 * in buffer 1, unused until the first split. With tasks, each dimension's
 * coordinates and its ranks' share of the records follow its sort as
 * soon as it ends, so a thread left without a sort does them while the
 * last sorts run (3 dimensions on 2 threads: 16384 points 0.387 -> 0.351
 * ms). The lists stay on one thread: built in parallel they measured
 * slower, their cache lines moving between the cores. */
static void bp_presort_ranks(const grove__bt_view *v, const bp_tree *t, bool f32)
{
    const grove__bt_ctx *c = t->c;
    size_t d = c->d, n = t->n;
    /* Without tasks, no task constructs at all: they would be scheduling
     * points, where this thread could start another node that uses the
     * same per-thread memory (grove__bt_packed_leaf). */
    if (t->spawn && t->count >= BT_TASK_MIN) {
        /* Dependences name the first entry of each dimension's ids (its
         * sort) and of the records (one dimension's ranks at a time). */
        uint32_t *perm = t->perm;
        uint64_t *rec = t->rec[1];
        for (size_t j = 0; j < d; j++) {
#pragma omp task default(shared) firstprivate(j) depend(out : perm[j * n])
            bp_presort_dim(v, t, f32, j);
#pragma omp task default(shared) firstprivate(j) depend(in : perm[j * n])
            bp_presort_val(v, t, f32, j);
#pragma omp task default(shared) firstprivate(j) depend(in : perm[j * n]) depend(inout : rec[0])
            bp_records(t, j);
        }
        (void)perm, (void)rec; /* GCC 12 counts no use in a depend clause */
#pragma omp taskwait
    } else {
        for (size_t j = 0; j < d; j++) {
            bp_presort_dim(v, t, f32, j);
            bp_presort_val(v, t, f32, j);
            bp_records(t, j);
        }
    }
    for (size_t j = 0; j < c->lists; j++) bp_list(t, j);
}

/* The quantized presort's first pass: t->x, the coordinates as doubles by
 * batch-local id (the view itself where its rows are doubles in id order,
 * else a copy in t->val, dimension j at + j * t->n as the rank presort
 * keeps it), then every point's record (bq_records, which returns where
 * they are, or NULL). */
static uint64_t *bq_quantize(const grove__bt_view *v, bp_tree *t, bool f32)
{
    size_t m = t->count, d = t->c->d;
    if (!f32 && !v->rows && v->stride % sizeof(double) == 0) {
        t->x = (const double *)(const void *)v->base;
        t->x_id = v->stride / sizeof(double);
        t->x_dim = 1;
    } else {
        for (size_t j = 0; j < d; j++)
            for (size_t i = 0; i < m; i++) t->val[j * t->n + i] = bp_coord(v, f32, (uint32_t)i, j);
        t->x = t->val;
        t->x_id = 1;
        t->x_dim = t->n;
    }
    return bq_records(t);
}

/* The packed builder's presort of one batch: quantized records where its
 * layout has them and the data does not crowd them, ranks of rank_bits
 * bits otherwise. False, and nothing sorted, when a coordinate is not
 * finite (only where grove__bt_ctx.nonfinite leaves that check to the
 * records' first pass). */
static bool bp_presort(const grove__bt_view *v, bp_tree *t, bool f32, int rank_bits)
{
    if (t->quantized) {
        uint64_t *src = bq_quantize(v, t, f32);
        if (src && bq_presort(t, src)) return true;
        if ((t->c->nonfinite && *t->c->nonfinite) || (t->c->overflow && *t->c->overflow)) return false;
        bp_layout(t, false, rank_bits);
    }
    bp_presort_ranks(v, t, f32);
    return true;
}

/* The packed builder's memory for batch b: the thread's own part of the
 * blocks (alloc_packed), else the batch's slice of the one part, whose
 * lists are n long. A part holds two buffers of `lists` record lists,
 * then d lists each of sorted coordinates and of ranks, `pack_stride`
 * long. */
static void bp_memory(const grove__bt_ctx *c, const grove__bt_batch *b, bp_tree *t)
{
    size_t part = c->pack_by_thread ? (size_t)grove__bt_thread() : 0, at = c->pack_by_thread ? 0 : b->start;
    size_t stride = c->pack_stride;
    t->n = stride;
    t->rec[0] = c->rec + part * 2 * c->lists * stride + at;
    t->rec[1] = t->rec[0] + c->lists * stride;
    t->val = c->val + part * c->d * stride + at;
    t->perm = c->perm + part * c->d * stride + at;
}

void grove__bt_packed_batch(const grove__bt_ctx *c, const grove__bt_batch *b, const grove__bt_view *ids, bool f32)
{
    bp_tree t = {.c = c, .b = b, .count = b->count, .ids = NULL, .spawn = c->spawn, .partition = c->partition_fn};
    bp_memory(c, b, &t);
    bp_layout(&t, c->quantize, c->bits);
    if (!bp_presort(ids, &t, f32, c->bits)) return;
    /* t lives on this stack frame: wait for every task that uses it. */
#pragma omp taskgroup
    bp_node(&t, t.deferred >= 0 ? (uint64_t)1 << t.deferred : 0, 0, b->count, 0, b->slot);
}

/* The leaf memory holds the coordinates, two buffers of lists, the sorted
 * coordinates and the ranks, for c->leaf_max points (alloc_select). */
void grove__bt_packed_leaf(const grove__bt_ctx *c, const grove__bt_batch *b, const uint32_t *ids, size_t k, int level,
                           size_t out, double *work)
{
    size_t d = c->d, lists = c->lists, leaf = c->leaf_max;
    uint64_t *rec = (uint64_t *)(work + leaf * d);
    double *val = (double *)(rec + 2 * lists * leaf);
    uint32_t *perm = (uint32_t *)(val + leaf * d);
    bp_tree p = {.c = c, .b = b, .count = k, .n = leaf, .ids = ids, .spawn = false,
                 .rec = {rec, rec + lists * leaf}, .val = val, .perm = perm, .partition = c->partition_fn};
    bp_layout(&p, c->quantize, c->leaf_bits);
    grove__bt_view v = {(const char *)work, d * sizeof *work, NULL, NULL, NULL};
    bp_presort(&v, &p, false, c->leaf_bits);
    bp_node(&p, 0, 0, k, level, out);
}
