/* Quantized records (packed.h): a point's id and each coordinate mapped
 * linearly, never decreasing, onto a field; each list is one radix sort of
 * the records, and points sharing a field value (a run) are ordered by
 * coordinate only where an extent or split needs it. The output is the
 * rank records' bytes; a run longer than MAX_RUN goes back to ranks. */
#include "packed.h"

#include <math.h>
#include <string.h>

#if GROVE__HAVE_TARGETS
#include <immintrin.h>
#endif

_Static_assert(GROVE__QUANTIZED_DIGIT <= BT_DIGIT_MAX, "grove__bt_digits holds the counts of up to BT_DIGIT_MAX bits");
#define MAX_RUN 256
#define INSERTION 16 /* lists of at most this many records are sorted by insertion */

/* Rows of d doubles four at a time: lane l of vector v holds coordinate
 * (4 v + l) % d, folded at the end. */
static inline GROVE__TARGET_V3 __attribute__((always_inline)) bool extent_body(const double *x, size_t d, size_t a,
                                                                               size_t b, double *lo, double *hi)
{
    double l[4 * GROVE__QUANTIZED_MAX_DIMS], h[4 * GROVE__QUANTIZED_MAX_DIMS];
    double z[4 * GROVE__QUANTIZED_MAX_DIMS] = {0}; /* sums of w - w: NaN once a coordinate is not finite */
    for (size_t e = 0; e < 4 * d; e++) l[e] = INFINITY, h[e] = -INFINITY;
    size_t i = a;
#if GROVE__HAVE_TARGETS
    __m256d vl[GROVE__QUANTIZED_MAX_DIMS], vh[GROVE__QUANTIZED_MAX_DIMS], vz[GROVE__QUANTIZED_MAX_DIMS];
    for (size_t v = 0; v < d; v++) vl[v] = _mm256_loadu_pd(l), vh[v] = _mm256_loadu_pd(h), vz[v] = _mm256_setzero_pd();
    for (; i + 4 <= b; i += 4)
        for (size_t v = 0; v < d; v++) {
            __m256d w = _mm256_loadu_pd(x + i * d + 4 * v);
            vl[v] = _mm256_min_pd(vl[v], w);
            vh[v] = _mm256_max_pd(vh[v], w);
            vz[v] = _mm256_add_pd(vz[v], _mm256_sub_pd(w, w));
        }
    for (size_t v = 0; v < d; v++) {
        _mm256_storeu_pd(l + 4 * v, vl[v]);
        _mm256_storeu_pd(h + 4 * v, vh[v]);
        _mm256_storeu_pd(z + 4 * v, vz[v]);
    }
#endif
    for (; i < b; i++)
        for (size_t j = 0; j < d; j++) {
            double w = x[i * d + j];
            l[j] = w < l[j] ? w : l[j];
            h[j] = w > h[j] ? w : h[j];
            z[j] += w - w;
        }
    double finite = 0;
    for (size_t e = 0; e < 4 * d; e++) {
        lo[e % d] = e < d || l[e] < lo[e % d] ? l[e] : lo[e % d];
        hi[e % d] = e < d || h[e] > hi[e % d] ? h[e] : hi[e % d];
        finite += z[e];
    }
    return finite == 0;
}

/* (uint64_t)f where f < mask, else mask; fields have under 31 bits. */
static inline uint64_t field_value(double f, double mask)
{
    f = floor(f);
    return (uint64_t)(uint32_t)(int32_t)(f < mask ? f : mask);
}

static inline GROVE__TARGET_V3 __attribute__((always_inline)) void
records_body(const double *x, size_t d, size_t a, size_t b, const double *lo, const double *scale, const int *shift,
             uint64_t mask, uint64_t *src)
{
    size_t i = a;
#if GROVE__HAVE_TARGETS
    double at[4 * GROVE__QUANTIZED_MAX_DIMS], times[4 * GROVE__QUANTIZED_MAX_DIMS];
    for (size_t e = 0; e < 4 * d; e++) at[e] = lo[e % d], times[e] = scale[e % d];
    for (; i + 4 <= b; i += 4) {
        int32_t q[4 * GROVE__QUANTIZED_MAX_DIMS];
        for (size_t v = 0; v < d; v++) {
            __m256d w = _mm256_sub_pd(_mm256_loadu_pd(x + i * d + 4 * v), _mm256_loadu_pd(at + 4 * v));
            __m256d f = _mm256_floor_pd(_mm256_mul_pd(w, _mm256_loadu_pd(times + 4 * v)));
            _mm_storeu_si128((__m128i *)(void *)(q + 4 * v),
                             _mm256_cvttpd_epi32(_mm256_min_pd(f, _mm256_set1_pd((double)mask))));
        }
        for (size_t r = 0; r < 4; r++) {
            uint64_t e = i + r;
            for (size_t j = 0; j < d; j++) e |= (uint64_t)(uint32_t)q[r * d + j] << shift[j];
            src[i + r] = e;
        }
    }
#endif
    for (; i < b; i++) {
        uint64_t e = i;
        for (size_t j = 0; j < d; j++) e |= field_value((x[i * d + j] - lo[j]) * scale[j], (double)mask) << shift[j];
        src[i] = e;
    }
}

/* For a constant d, so that the loops unroll. */
GROVE__TARGET_V3 bool grove__quantized_extent(const double *x, size_t d, size_t a, size_t b, double *lo, double *hi)
{
    return d == 2 ? extent_body(x, 2, a, b, lo, hi)
           : d == 3 ? extent_body(x, 3, a, b, lo, hi)
                    : extent_body(x, 4, a, b, lo, hi);
}

GROVE__TARGET_V3 void grove__quantized_records(const double *x, size_t d, size_t a, size_t b, const double *lo,
                                               const double *scale, const int *shift, uint64_t mask, uint64_t *src)
{
    if (d == 2) records_body(x, 2, a, b, lo, scale, shift, mask, src);
    else if (d == 3) records_body(x, 3, a, b, lo, scale, shift, mask, src);
    else records_body(x, 4, a, b, lo, scale, shift, mask, src);
}

static inline uint64_t field(const grove__packed_tree *t, uint64_t e, size_t j)
{
    return grove__record_field(e, t->base + (int)j * t->bits, t->mask);
}

static inline double coord(const grove__packed_tree *t, uint64_t e, size_t j)
{
    return t->x[(e & t->id_mask) * t->c->d + j];
}

/* Whether (coordinate j, id) of record a is below that of b. */
static inline bool below(const grove__packed_tree *t, uint64_t a, uint64_t b, size_t j)
{
    double xa = coord(t, a, j), xb = coord(t, b, j);
    return xa < xb || (xa == xb && (a & t->id_mask) < (b & t->id_mask));
}

/* Out of line: inlined into packed_split it slows the rank records down. */
GROVE__TARGET_V3 __attribute__((noinline)) double grove__quantized_spread(const grove__packed_tree *t,
                                                                          const uint64_t *l, size_t k, size_t j)
{
    uint64_t first = field(t, l[0], j), last = field(t, l[k - 1], j);
    double lo = coord(t, l[0], j), hi = coord(t, l[k - 1], j);
    for (size_t i = 1; i < k && field(t, l[i], j) == first; i++) lo = coord(t, l[i], j) < lo ? coord(t, l[i], j) : lo;
    for (size_t i = k - 1; i-- > 0 && field(t, l[i], j) == last;) hi = coord(t, l[i], j) > hi ? coord(t, l[i], j) : hi;
    return hi - lo;
}

GROVE__TARGET_V3 uint64_t grove__quantized_pivot(const grove__packed_tree *t, uint64_t where, size_t off, size_t k,
                                                 size_t h, size_t s)
{
    uint64_t *split = t->rec[where >> s & 1] + s * t->n + off, q = field(t, split[h], s);
    size_t a = h, b = h + 1;
    while (a > 0 && field(t, split[a - 1], s) == q) a--;
    if (a == h) return q; /* every record valued q goes right */
    while (b < k && field(t, split[b], s) == q) b++;
    for (size_t i = a + 1; i < b; i++) { /* the run, by (coordinate, id) */
        uint64_t e = split[i];
        size_t p = i;
        for (; p > a && below(t, e, split[p - 1], s); p--) split[p] = split[p - 1];
        split[p] = e;
    }
    uint64_t pivot = split[h], to = q < t->mask ? q + 1 : q - 1;
    int shift = t->base + (int)s * t->bits;
    for (size_t j = 0; j < t->c->d; j++) { /* the run's part on the moving side, to the value `to` */
        uint64_t *l = t->rec[where >> j & 1] + j * t->n + off;
        for (size_t i = 0; i < k; i++)
            if (field(t, l[i], s) == q && below(t, l[i], pivot, s) == (to < q))
                l[i] = (l[i] & ~(t->mask << shift)) | to << shift;
    }
    return q < t->mask ? q + 1 : q;
}

/* The deferred list's long-run check counts each 1024th of the range. */
#define CROWD_BITS 10
#define CROWD (1 << CROWD_BITS)

/* Rows [a, b)'s records, and the counts of field j's CROWD-ths. */
static void records_part(const grove__packed_tree *t, size_t a, size_t b, const double *lo, const double *scale,
                         uint64_t *src, int j, uint32_t *crowd)
{
    int shift[GROVE__QUANTIZED_MAX_DIMS];
    for (size_t i = 0; i < t->c->d; i++) shift[i] = t->base + (int)i * t->bits;
    grove__quantized_records(t->x, t->c->d, a, b, lo, scale, shift, t->mask, src);
    if (!crowd) return;
    /* Four sets of counts in turn, so crowded data need not wait on each. */
    uint32_t lane[4][CROWD] = {{0}};
    int top = t->base + (j + 1) * t->bits - CROWD_BITS;
    size_t i = a;
    for (; i + 4 <= b; i += 4)
        for (size_t l = 0; l < 4; l++) lane[l][src[i + l] >> top & (CROWD - 1)]++;
    for (; i < b; i++) lane[0][src[i] >> top & (CROWD - 1)]++;
    for (size_t v = 0; v < CROWD; v++) crowd[v] = lane[0][v] + lane[1][v] + lane[2][v] + lane[3][v];
}

/* The list the root's children sort instead of the presort, or -1: a
 * team of fewer threads than lists (d = 3 on two) would leave one idle;
 * the root splits the narrowest dimension's list unsorted and its
 * children sort their halves in parallel. It is never the root's split,
 * whose choice its unsorted ends cannot change. */
static int deferrable(const grove__packed_tree *t, const double *lo, const double *hi)
{
    size_t d = t->c->d, narrowest = 0;
    if (!grove__bt_team_root(t->spawn, t->count, t->count, t->c->n)) return -1;
    int thread, threads;
    grove__team_member(&thread, &threads);
    if (threads < 2 || (size_t)threads >= d) return -1;
    for (size_t j = 0; j < d; j++) narrowest = hi[j] - lo[j] <= hi[narrowest] - lo[narrowest] ? j : narrowest;
    return (int)narrowest;
}

#define PART 8192 /* rows per part of the first pass, at most PARTS parts (tasks) */
#define PARTS 8

/* Every record, in buffer 1 at the deferred list's place or list 0's;
 * NULL where an extent overflows or a coordinate is not finite. */
static uint64_t *records(grove__packed_tree *t)
{
    size_t m = t->count, d = t->c->d, parts = t->spawn ? m / PART : 1;
    parts = parts < 1 ? 1 : parts > PARTS ? PARTS : parts;
    double lo[PARTS][GROVE__QUANTIZED_MAX_DIMS], hi[PARTS][GROVE__QUANTIZED_MAX_DIMS], scale[GROVE__QUANTIZED_MAX_DIMS];
    bool finite[PARTS], sparse = true;
    GROVE__PARTS(p, parts,
                 finite[p] = grove__quantized_extent(t->x, d, p * m / parts, (p + 1) * m / parts, lo[p], hi[p]));
    for (size_t p = 0; p < parts; p++)
        if (!finite[p]) { /* only where the ctx leaves that check to this pass */
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
        /* An overflowing extent compares as a tie (the ctx's overflow). */
        if (!isfinite(extent) && t->c->overflow) *t->c->overflow = true;
        if (!isfinite(extent) || !isfinite(scale[j])) return NULL;
    }
    int defer = deferrable(t, lo[0], hi[0]);
    uint64_t *src = t->rec[1] + (defer >= 0 ? (size_t)defer : 0) * t->n;
    uint32_t crowd[PARTS][CROWD];
    GROVE__PARTS(p, parts, records_part(t, p * m / parts, (p + 1) * m / parts, lo[0], scale, src, defer,
                                        defer >= 0 ? crowd[p] : NULL));
    for (size_t v = 0; defer >= 0 && v < CROWD; v++) { /* no run longer than MAX_RUN, found too late by the children */
        uint32_t count = 0;
        for (size_t p = 0; p < parts; p++) count += crowd[p][v];
        sparse = sparse && count <= MAX_RUN;
    }
    t->deferred = sparse ? defer : -1;
    return src;
}

/* src[0..m) by field j into dst; false on a run longer than MAX_RUN. */
static GROVE__TARGET_V3 bool sort_list(const grove__packed_tree *t, const uint64_t *src, size_t m, uint64_t *dst,
                                       size_t j)
{
    if (m <= INSERTION) {
        for (size_t i = 0; i < m; i++) {
            size_t p = i;
            for (; p > 0 && field(t, dst[p - 1], j) > field(t, src[i], j); p--) dst[p] = dst[p - 1];
            dst[p] = src[i];
        }
        return true;
    }
    grove__bt_digits r; /* digits of at most the id's bits: at most about m bins */
    int shift = t->base + (int)j * t->bits, last = -1, other = 0;
    grove__bt_digits_count(&r, src, m, shift, t->bits, t->base < GROVE__QUANTIZED_DIGIT ? t->base : GROVE__QUANTIZED_DIGIT);
    uint32_t crowded = 0; /* the most records with one top digit */
    for (uint64_t v = 0; v < (uint64_t)1 << r.digit; v++) crowded = r.hist[r.passes - 1][v] > crowded ? r.hist[r.passes - 1][v] : crowded;
    for (int p = 0; p < r.passes; p++)
        if (grove__bt_digits_move(&r, p, src[0], m)) last = p;
    uint64_t *scratch = grove__bt_scratch(t->c);
    const uint64_t *from = src;
    for (int p = 0; p <= last; p++) {
        if (!grove__bt_digits_move(&r, p, src[0], m)) continue;
        uint64_t *to = p == last ? dst : scratch + (size_t)other * m;
        other ^= 1;
        grove__bt_digits_scatter(&r, p, from, to, m);
        from = to;
    }
    if (last < 0) memcpy(dst, src, m * sizeof *dst);
    size_t run = 1;
    for (size_t i = 1; crowded > MAX_RUN && i < m; i++) {
        run = field(t, dst[i], j) == field(t, dst[i - 1], j) ? run + 1 : 1;
        if (run > MAX_RUN) return false;
    }
    return true;
}

uint64_t grove__quantized_sort_deferred(const grove__packed_tree *t, uint64_t where, size_t off, size_t k)
{
    size_t j = (size_t)t->deferred;
    uint64_t *list = t->rec[where >> j & 1] + j * t->n + off, *sorted = t->rec[!(where >> j & 1)] + j * t->n + off;
    (void)sort_list(t, list, k, sorted, j); /* no long run: records() checked */
    return where ^ (uint64_t)1 << j;
}

bool grove__quantized_presort(const grove__bt_view *v, grove__packed_tree *t)
{
    size_t m = t->count, d = t->c->d;
    t->x = (const double *)(const void *)v->base; /* dense rows (the driver's and selecting's leaves) */
    const uint64_t *src = records(t);
    if (!src) return false;
    bool ok[PACKED_MAX_DIMS];
    bool tasks = t->spawn && m >= BT_TASK_MIN;
    for (size_t j = 0; j < d; j++)
        GROVE__TASK_IF(tasks, ok[j] = (int)j == t->deferred || sort_list(t, src, m, t->rec[0] + j * t->n, j),
                       default(shared) firstprivate(j));
    GROVE__TASKWAIT_IF(tasks);
    for (size_t j = 0; j < d; j++)
        if (!ok[j]) return false;
    return true;
}
