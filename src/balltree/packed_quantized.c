/* Quantized records for the packed builder (packed.h).
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
 * - a bit-mask subtree (packed_bitmask.c) sorts the runs of its lists.
 *
 * Moving a part of a run by one value keeps every list's segment ordered
 * by field value: the values it lands among belong to coordinates on the
 * same side of it. Lists therefore stay sorted by field, with runs in any
 * order, at every node, and the output is the bytes of the rank records.
 *
 * Used in full mode where the bit-mask subtrees are (so no node below
 * them needs ranks), and the fields are wide enough
 * (grove__quantized_field_bits, plan.c). Data that crowds many points into
 * few values (a far outlier, tight clusters) would make long runs, and
 * sorting them at every level would cost more than ranks: a batch whose
 * longest run exceeds MAX_RUN goes back to the rank presort. */
#include "packed.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(GROVE__QUANTIZED_DIGIT <= BT_DIGIT_MAX, "grove__bt_digits holds the counts of up to BT_DIGIT_MAX bits");
#define MAX_RUN 256
/* Lists of at most INSERTION records are sorted by insertion. */
#define INSERTION 16

/* The quantized presort's first pass, as balltree_internal.h defines it,
 * compiled for x86-64-v3, the machines that run it (the bit-mask subtrees
 * need it). Rows of d doubles side by side, the common layout, go four at
 * a time: 4 d doubles in a row, d vectors whose lane l of vector v holds
 * coordinate (4 v + l) % d, so one accumulator per lane, folded into
 * coordinates at the end. */
#if GROVE__HAVE_TARGETS
#include <immintrin.h>
#endif

/* Coordinate j of row i. */
static inline double quantized_at(const char *base, size_t row, size_t dim, size_t i, size_t j)
{
    return *(const double *)(const void *)(base + i * row + j * dim);
}

static inline GROVE__TARGET_V3 __attribute__((always_inline)) bool
quantized_extent_body(const char *base, size_t row, size_t dim, size_t d, size_t a, size_t b, double *lo, double *hi)
{
    double l[4 * GROVE__QUANTIZED_MAX_DIMS], h[4 * GROVE__QUANTIZED_MAX_DIMS];
    double z[4 * GROVE__QUANTIZED_MAX_DIMS] = {0}; /* sums of w - w: NaN once a coordinate is not finite */
    for (size_t e = 0; e < 4 * d; e++) {
        l[e] = INFINITY;
        h[e] = -INFINITY;
    }
    size_t i = a;
#if GROVE__HAVE_TARGETS
    if (dim == sizeof(double) && row == d * sizeof(double)) {
        __m256d vl[GROVE__QUANTIZED_MAX_DIMS], vh[GROVE__QUANTIZED_MAX_DIMS], vz[GROVE__QUANTIZED_MAX_DIMS];
        for (size_t v = 0; v < d; v++) {
            vl[v] = _mm256_set1_pd(INFINITY);
            vh[v] = _mm256_set1_pd(-INFINITY);
            vz[v] = _mm256_setzero_pd();
        }
        for (; i + 4 <= b; i += 4)
            for (size_t v = 0; v < d; v++) {
                __m256d w = _mm256_loadu_pd((const double *)(const void *)(base + i * row) + 4 * v);
                vl[v] = _mm256_min_pd(vl[v], w);
                vh[v] = _mm256_max_pd(vh[v], w);
                vz[v] = _mm256_add_pd(vz[v], _mm256_sub_pd(w, w));
            }
        for (size_t v = 0; v < d; v++) {
            _mm256_storeu_pd(l + 4 * v, vl[v]);
            _mm256_storeu_pd(h + 4 * v, vh[v]);
            _mm256_storeu_pd(z + 4 * v, vz[v]);
        }
    }
#endif
    for (; i < b; i++)
        for (size_t j = 0; j < d; j++) {
            double w = quantized_at(base, row, dim, i, j);
            l[j] = w < l[j] ? w : l[j];
            h[j] = w > h[j] ? w : h[j];
            z[j] += w - w;
        }
    double finite = 0;
    for (size_t j = 0; j < d; j++) {
        lo[j] = l[j];
        hi[j] = h[j];
        for (size_t e = j + d; e < 4 * d; e += d) {
            lo[j] = l[e] < lo[j] ? l[e] : lo[j];
            hi[j] = h[e] > hi[j] ? h[e] : hi[j];
        }
    }
    for (size_t e = 0; e < 4 * d; e++) finite += z[e];
    return finite == 0;
}

/* A field value, min(mask, floor(f)) for f >= 0: (uint64_t)f where f is
 * below mask, as the definition has it (fields have fewer than 31 bits,
 * plan.c, so it converts through int32). */
static inline uint64_t quantized_value(double f, double mask)
{
    f = floor(f);
    return (uint64_t)(uint32_t)(int32_t)(f < mask ? f : mask);
}

static inline GROVE__TARGET_V3 __attribute__((always_inline)) void
quantized_records_body(const char *base, size_t row, size_t dim, size_t d, size_t a, size_t b, const double *lo,
                       const double *scale, const int *shift, uint64_t mask, uint64_t *src)
{
    size_t i = a;
#if GROVE__HAVE_TARGETS
    if (dim == sizeof(double) && row == d * sizeof(double)) {
        double at[4 * GROVE__QUANTIZED_MAX_DIMS], times[4 * GROVE__QUANTIZED_MAX_DIMS];
        for (size_t e = 0; e < 4 * d; e++) {
            at[e] = lo[e % d];
            times[e] = scale[e % d];
        }
        const __m256d top = _mm256_set1_pd((double)mask);
        for (; i + 4 <= b; i += 4) {
            int32_t q[4 * GROVE__QUANTIZED_MAX_DIMS];
            for (size_t v = 0; v < d; v++) {
                __m256d w = _mm256_loadu_pd((const double *)(const void *)(base + i * row) + 4 * v);
                __m256d f =
                    _mm256_mul_pd(_mm256_sub_pd(w, _mm256_loadu_pd(at + 4 * v)), _mm256_loadu_pd(times + 4 * v));
                f = _mm256_min_pd(_mm256_floor_pd(f), top);
                _mm_storeu_si128((__m128i *)(void *)(q + 4 * v), _mm256_cvttpd_epi32(f));
            }
            for (size_t r = 0; r < 4; r++) {
                uint64_t e = i + r;
                for (size_t j = 0; j < d; j++) e |= (uint64_t)(uint32_t)q[r * d + j] << shift[j];
                src[i + r] = e;
            }
        }
    }
#endif
    for (; i < b; i++) {
        uint64_t e = i;
        for (size_t j = 0; j < d; j++)
            e |= quantized_value((quantized_at(base, row, dim, i, j) - lo[j]) * scale[j], (double)mask) << shift[j];
        src[i] = e;
    }
}

/* The two passes for a constant d, so that their loops unroll. */
GROVE__TARGET_V3 bool grove__quantized_extent(const char *base, size_t row, size_t dim, size_t d, size_t a, size_t b,
                                              double *lo, double *hi)
{
    switch (d) {
    case 2: return quantized_extent_body(base, row, dim, 2, a, b, lo, hi);
    case 3: return quantized_extent_body(base, row, dim, 3, a, b, lo, hi);
    default: return quantized_extent_body(base, row, dim, 4, a, b, lo, hi);
    }
}

GROVE__TARGET_V3 void grove__quantized_records(const char *base, size_t row, size_t dim, size_t d, size_t a, size_t b,
                                               const double *lo, const double *scale, const int *shift, uint64_t mask,
                                               uint64_t *src)
{
    switch (d) {
    case 2: quantized_records_body(base, row, dim, 2, a, b, lo, scale, shift, mask, src); break;
    case 3: quantized_records_body(base, row, dim, 3, a, b, lo, scale, shift, mask, src); break;
    default: quantized_records_body(base, row, dim, 4, a, b, lo, scale, shift, mask, src);
    }
}

static inline uint64_t quantized_field(const grove__packed_tree *t, uint64_t e, size_t j)
{
    return grove__record_field(e, t->base + (int)j * t->bits, t->mask);
}

static inline double quantized_coord(const grove__packed_tree *t, uint64_t e, size_t j)
{
    return t->x[(e & t->id_mask) * t->x_id + j * t->x_dim];
}

/* Whether (coordinate j, id) of record a is below that of b. */
static inline bool quantized_below(const grove__packed_tree *t, uint64_t a, uint64_t b, size_t j)
{
    double xa = quantized_coord(t, a, j), xb = quantized_coord(t, b, j);
    return xa < xb || (xa == xb && (a & t->id_mask) < (b & t->id_mask));
}

/* Sort l[0..k) by (coordinate j, id): the records of one run, few. */
static void quantized_sort_run(const grove__packed_tree *t, uint64_t *l, size_t k, size_t j)
{
    for (size_t i = 1; i < k; i++) {
        uint64_t e = l[i];
        size_t p = i;
        for (; p > 0 && quantized_below(t, e, l[p - 1], j); p--) l[p] = l[p - 1];
        l[p] = e;
    }
}

/* Out of line, like grove__quantized_pivot: inlined into packed_split it
 * would slow the rank records' nodes down. */
GROVE__TARGET_V3 __attribute__((noinline)) double grove__quantized_spread(const grove__packed_tree *t,
                                                                          const uint64_t *l, size_t k, size_t j)
{
    uint64_t first = quantized_field(t, l[0], j), last = quantized_field(t, l[k - 1], j);
    double lo = quantized_coord(t, l[0], j), hi = quantized_coord(t, l[k - 1], j);
    for (size_t i = 1; i < k && quantized_field(t, l[i], j) == first; i++) {
        double v = quantized_coord(t, l[i], j);
        lo = v < lo ? v : lo;
    }
    for (size_t i = k - 1; i-- > 0 && quantized_field(t, l[i], j) == last;) {
        double v = quantized_coord(t, l[i], j);
        hi = v > hi ? v : hi;
    }
    return hi - lo;
}
/* In list[0..k), move every record valued q along s to the side of
 * `pivot` it belongs on ((coordinate s, id) at least the pivot's: right)
 * to field value `to`, if that side is `right`. */
static GROVE__TARGET_V3 void quantized_move(const grove__packed_tree *t, uint64_t *list, size_t k, size_t s, uint64_t q,
                                            uint64_t pivot, bool right, uint64_t to)
{
    int shift = t->base + (int)s * t->bits;
    uint64_t clear = ~(t->mask << shift);
    for (size_t i = 0; i < k; i++)
        if ((list[i] >> shift & t->mask) == q && quantized_below(t, list[i], pivot, s) != right)
            list[i] = (list[i] & clear) | to << shift;
}

/* grove__quantized_pivot: a record goes right when its field s is at
 * least the pivot. Where the run at position h of the split list starts
 * before h, sorts it there and moves its right part one value up in every
 * list (its left part one value down when q is the largest value). */
GROVE__TARGET_V3 uint64_t grove__quantized_pivot(const grove__packed_tree *t, uint64_t where, size_t off, size_t k,
                                                 size_t h, size_t s)
{
    size_t n = t->n;
    uint64_t *split = t->rec[where >> s & 1] + s * n + off;
    uint64_t q = quantized_field(t, split[h], s);
    size_t a = h, b = h + 1;
    while (a > 0 && quantized_field(t, split[a - 1], s) == q) a--;
    if (a == h) return q; /* every record valued q goes right */
    while (b < k && quantized_field(t, split[b], s) == q) b++;
    quantized_sort_run(t, split + a, b - a, s);
    uint64_t pivot = split[h];
    bool up = q < t->mask;
    for (size_t j = 0; j < t->c->d; j++)
        quantized_move(t, t->rec[where >> j & 1] + j * n + off, k, s, q, pivot, up, up ? q + 1 : q - 1);
    return up ? q + 1 : q;
}

/* The deferred list's check for long runs counts the records in each
 * 1024th of its field's range (the field has at least 14 bits): coarser,
 * and batches whose points crowd in one place (exponential ones at 0)
 * would fail it without a long run. */
#define CROWD_BITS 10
#define CROWD (1 << CROWD_BITS)

/* Rows [a, b) of t->x: each dimension's extent, or (lo and scale known)
 * their records into src. */
static bool quantized_extent_part(const grove__packed_tree *t, size_t a, size_t b, double *lo, double *hi)
{
    return grove__quantized_extent((const char *)t->x, t->x_id * sizeof(double), t->x_dim * sizeof(double), t->c->d, a,
                                   b, lo, hi);
}

static void quantized_records_part(const grove__packed_tree *t, size_t a, size_t b, const double *lo,
                                   const double *scale, uint64_t *src, int j, uint32_t *crowd)
{
    int shift[GROVE__QUANTIZED_MAX_DIMS];
    for (size_t i = 0; i < t->c->d; i++) shift[i] = t->base + (int)i * t->bits;
    grove__quantized_records((const char *)t->x, t->x_id * sizeof(double), t->x_dim * sizeof(double), t->c->d, a, b, lo,
                             scale, shift, t->mask, src);
    if (!crowd) return; /* else how many records fall in each CROWD-th of field j's range */
    /* Four sets of counts, a record to each in turn: crowded data
     * increment one count after another, and a single set would wait on
     * each increment before the next. */
    uint32_t lane[4][CROWD] = {{0}};
    int top = t->base + (j + 1) * t->bits - CROWD_BITS; /* the field's top bits */
    size_t i = a;
    for (; i + 4 <= b; i += 4)
        for (size_t l = 0; l < 4; l++) lane[l][src[i + l] >> top & (CROWD - 1)]++;
    for (; i < b; i++) lane[0][src[i] >> top & (CROWD - 1)]++;
    for (size_t v = 0; v < CROWD; v++) crowd[v] = lane[0][v] + lane[1][v] + lane[2][v] + lane[3][v];
}

/* Deferring one list (packed_node): the presort's sorts are tasks, one per
 * list, and a team of fewer threads than lists leaves threads idle while
 * the last ones run (d = 3 on two threads: one thread sorts two lists,
 * the other waits). With one list fewer they pair up; the root splits the
 * deferred list unsorted (a stable partition does not need the order) and
 * its two children sort their halves, in parallel. Only where the team
 * builds this batch alone (more than half of all points: else other
 * batches keep its threads busy). The list deferred is the narrowest
 * dimension's (from the root's extent, lo and hi), with ties to the
 * highest: never the root's split list (the widest, ties to the lowest),
 * and the spread the root reads from its unsorted ends (quantized_spread)
 * is at most its true one, so the root's choice of dimension stands.
 * Returns it, or -1. */
static int quantized_deferrable(const grove__packed_tree *t, const double *lo, const double *hi)
{
    size_t d = t->c->d, narrowest = 0;
    if (!t->spawn || t->count < BT_TASK_MIN || 2 * t->count <= t->c->n) return -1;
    int thread, threads;
    grove__team_member(&thread, &threads);
    if (threads < 2 || (size_t)threads >= d) return -1;
    for (size_t j = 0; j < d; j++) narrowest = hi[j] - lo[j] <= hi[narrowest] - lo[narrowest] ? j : narrowest;
    return (int)narrowest;
}

/* Whether no run of a field can be longer than MAX_RUN, by the counts
 * of `parts` parts in each CROWD-th of its range: what the deferred
 * list's sorts, at the root's children, would find too late to go back to
 * ranks. */
static bool quantized_sparse(uint32_t (*crowd)[CROWD], size_t parts)
{
    for (size_t v = 0; v < CROWD; v++) {
        uint32_t count = 0;
        for (size_t p = 0; p < parts; p++) count += crowd[p][v];
        if (count > MAX_RUN) return false;
    }
    return true;
}

/* Rows per part of the records pass, at most PARTS parts (tasks). */
#define PART 8192
#define PARTS 8

/* Every point's record, from t->x, in parts that are tasks where the
 * batch is large; returns where they are (buffer 1, unused until the
 * first split: the deferred list's place there, which the root reads
 * unsorted, else list 0's), and sets t->deferred. NULL when a dimension's
 * extent or scale overflows a double (the rank presort takes the batch
 * then), or when a coordinate is not finite (*t->c->nonfinite set). */
static uint64_t *quantized_records(grove__packed_tree *t)
{
    size_t m = t->count, d = t->c->d;
    size_t parts = t->spawn ? m / PART : 1;
    parts = parts < 1 ? 1 : parts > PARTS ? PARTS : parts;
    double lo[PARTS][PACKED_MAX_DIMS], hi[PARTS][PACKED_MAX_DIMS], scale[PACKED_MAX_DIMS];
    bool finite[PARTS];
    if (parts > 1) {
        for (size_t p = 0; p < parts; p++) {
#pragma omp task default(shared) firstprivate(p)
            finite[p] = quantized_extent_part(t, p * m / parts, (p + 1) * m / parts, lo[p], hi[p]);
        }
#pragma omp taskwait
    } else {
        finite[0] = quantized_extent_part(t, 0, m, lo[0], hi[0]);
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
    int defer = quantized_deferrable(t, lo[0], hi[0]);
    uint64_t *src = t->rec[1] + (defer >= 0 ? (size_t)defer : 0) * t->n;
    uint32_t crowd[PARTS][CROWD];
    if (parts > 1) {
        for (size_t p = 0; p < parts; p++) {
#pragma omp task default(shared) firstprivate(p)
            quantized_records_part(t, p * m / parts, (p + 1) * m / parts, lo[0], scale, src, defer,
                                   defer >= 0 ? crowd[p] : NULL);
        }
#pragma omp taskwait
    } else {
        quantized_records_part(t, 0, m, lo[0], scale, src, defer, defer >= 0 ? crowd[0] : NULL);
    }
    t->deferred = defer >= 0 && quantized_sparse(crowd, parts) ? defer : -1;
    return src;
}

/* Whether segment l[0..m) of list j, sorted by field, has a run longer
 * than MAX_RUN. */
static bool quantized_long_run(const grove__packed_tree *t, const uint64_t *l, size_t m, size_t j)
{
    size_t run = 1;
    for (size_t i = 1; i < m; i++) {
        run = quantized_field(t, l[i], j) == quantized_field(t, l[i - 1], j) ? run + 1 : 1;
        if (run > MAX_RUN) return true;
    }
    return false;
}

/* The records src[0..m) sorted by field j into dst, an LSD radix sort
 * through the thread's scratch (insertion for a few). False when they
 * have a run longer than MAX_RUN (checked only where a top digit holds
 * more records than that). */
static GROVE__TARGET_V3 bool quantized_sort_list(const grove__packed_tree *t, const uint64_t *src, size_t m,
                                                 uint64_t *dst, size_t j)
{
    int shift = t->base + (int)j * t->bits;
    if (m <= INSERTION) { /* a few records: no bins to clear and sum */
        for (size_t i = 0; i < m; i++) {
            uint64_t e = src[i], q = quantized_field(t, e, j);
            size_t p = i;
            for (; p > 0 && quantized_field(t, dst[p - 1], j) > q; p--) dst[p] = dst[p - 1];
            dst[p] = e;
        }
        return true;
    }
    /* Digits of at most the id's bits (t->base): at most about m bins */
    grove__bt_digits r;
    grove__bt_digits_count(&r, src, m, shift, t->bits,
                           t->base < GROVE__QUANTIZED_DIGIT ? t->base : GROVE__QUANTIZED_DIGIT);
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
    return !(crowded > MAX_RUN && quantized_long_run(t, dst, m, j));
}

uint64_t grove__quantized_sort_deferred(const grove__packed_tree *t, uint64_t where, size_t off, size_t k)
{
    size_t j = (size_t)t->deferred;
    uint64_t *list = t->rec[where >> j & 1] + j * t->n + off, *sorted = t->rec[!(where >> j & 1)] + j * t->n + off;
    (void)quantized_sort_list(t, list, k, sorted, j); /* no long run: quantized_sparse */
    return where ^ (uint64_t)1 << j;
}

/* List j of buffer 0 from the records, but the deferred one (as
 * quantized_sort_list). */
static bool quantized_presort_list(const grove__packed_tree *t, const uint64_t *src, size_t j)
{
    return (int)j == t->deferred || quantized_sort_list(t, src, t->count, t->rec[0] + j * t->n, j);
}

/* The quantized presort's lists in buffer 0, once quantized_records has
 * made the records (src), but the deferred one (quantized_deferrable):
 * false when a list has a run longer than MAX_RUN. Each dimension's sort
 * is a task of its own where the batch is large. */
static bool quantized_presort_lists(const grove__packed_tree *t, const uint64_t *src)
{
    size_t d = t->c->d;
    bool ok[PACKED_MAX_DIMS];
    if (t->spawn && t->count >= BT_TASK_MIN) {
        for (size_t j = 0; j < d; j++) {
#pragma omp task default(shared) firstprivate(j)
            ok[j] = quantized_presort_list(t, src, j);
        }
#pragma omp taskwait
    } else {
        for (size_t j = 0; j < d; j++) ok[j] = quantized_presort_list(t, src, j);
    }
    for (size_t j = 0; j < d; j++)
        if (!ok[j]) return false;
    return true;
}

/* The quantized presort: t->x, the coordinates as doubles by batch-local
 * id (the view itself where its rows are doubles in id order, else a copy
 * in t->val, dimension j at + j * t->n as the rank presort keeps it), then
 * every point's record (quantized_records), then the lists. */
bool grove__quantized_presort(const grove__bt_view *v, grove__packed_tree *t, bool f32)
{
    size_t m = t->count, d = t->c->d;
    if (!f32 && !v->rows && v->stride % sizeof(double) == 0) {
        t->x = (const double *)(const void *)v->base;
        t->x_id = v->stride / sizeof(double);
        t->x_dim = 1;
    } else {
        for (size_t j = 0; j < d; j++)
            for (size_t i = 0; i < m; i++) t->val[j * t->n + i] = grove__packed_coord(v, f32, (uint32_t)i, j);
        t->x = t->val;
        t->x_id = 1;
        t->x_dim = t->n;
    }
    const uint64_t *src = quantized_records(t);
    return src && quantized_presort_lists(t, src);
}
