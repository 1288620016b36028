/* The presort's streaming loops in AVX-512 (presorted_t.h, BT_(sort_all),
 * and packed_ranks.c, ranks_values): the order-preserving keys of
 * one coordinate of every row with their smallest and largest, the ids
 * back out of the sorted entries with the runs of equal top bits, and the
 * coordinates gathered in sorted order. The scalar loops there are the
 * definitions; a test checks these against them, and `make check` runs
 * the ball tree tests without them too (GROVE_CPU=portable).
 *
 * Also the quantized presort's extent, records and find
 * (packed_quantized.c), and the selecting builder's keys of every row
 * (selecting.c, bs_init_rows): balltree_internal.h defines them, and
 * tests check them against those definitions written out. */
#include "balltree_internal.h"

#include <math.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#include "avx512_stream.h"
#define AVX512 __attribute__((target("avx512f,avx512dq,avx512vl")))

/* Byte offsets of rows i..i+7, `stride` bytes apart. */
static inline AVX512 __m512i row_offsets(size_t i, size_t stride)
{
    __m512i rows = _mm512_add_epi64(_mm512_set1_epi64((long long)i), _mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7));
    return _mm512_mullo_epi64(rows, _mm512_set1_epi64((long long)stride));
}

/* The key of grove__bt_key_f64 (builder.h): x + 0 (-0 becomes +0), then the sign bit set for
 * x >= 0 and every bit flipped for x < 0. */
static inline AVX512 __m512i key_f64(__m512d x)
{
    __m512i b = _mm512_castpd_si512(_mm512_add_pd(x, _mm512_setzero_pd()));
    return _mm512_xor_si512(b, _mm512_or_si512(_mm512_srai_epi64(b, 63), _mm512_set1_epi64(INT64_MIN)));
}

static inline AVX512 __m512i key_f32(__m256 x)
{
    __m256i b = _mm256_castps_si256(_mm256_add_ps(x, _mm256_setzero_ps()));
    __m256i k = _mm256_xor_si256(b, _mm256_or_si256(_mm256_srai_epi32(b, 31), _mm256_set1_epi32(INT32_MIN)));
    return _mm512_cvtepu32_epi64(k);
}

/* The keys of rows i..i+7 (those of `live`): float64 coordinates when
 * `wide`, float32 otherwise. */
static inline AVX512 __attribute__((always_inline)) __m512i keys8(const char *base, __m512i offsets, __mmask8 live,
                                                                bool wide)
{
    if (wide) return key_f64(_mm512_mask_i64gather_pd(_mm512_setzero_pd(), live, offsets, base, 1));
    return key_f32(_mm512_mask_i64gather_ps(_mm256_setzero_ps(), live, offsets, base, 1));
}

/* a[i] = key of the coordinate at base + i * stride, i < g >= 1, and the
 * smallest and largest key. */
static inline AVX512 __attribute__((always_inline)) void keys(const char *base, size_t stride, size_t g, uint64_t *a,
                                                             uint64_t *lo, uint64_t *hi, bool wide)
{
    __m512i vlo = _mm512_set1_epi64(-1), vhi = _mm512_setzero_si512();
    for (size_t i = 0; i < g; i += 8) {
        __mmask8 live = grove__bt_lanes8(g - i);
        __m512i k = keys8(base, row_offsets(i, stride), live, wide);
        _mm512_mask_storeu_epi64(a + i, live, k);
        vlo = _mm512_mask_min_epu64(vlo, live, vlo, k);
        vhi = _mm512_mask_max_epu64(vhi, live, vhi, k);
    }
    *lo = _mm512_reduce_min_epu64(vlo);
    *hi = _mm512_reduce_max_epu64(vhi);
}

static AVX512 void keys_f64(const char *base, size_t stride, size_t g, uint64_t *a, uint64_t *lo, uint64_t *hi)
{
    keys(base, stride, g, a, lo, hi, true);
}

static AVX512 void keys_f32(const char *base, size_t stride, size_t g, uint64_t *a, uint64_t *lo, uint64_t *hi)
{
    keys(base, stride, g, a, lo, hi, false);
}

/* ids[i] = the low half of a[i], i < g >= 1; with `runs`, starts[] gets
 * the first position of every run of two or more equal high halves, in
 * order, and the count is returned. */
static AVX512 size_t ids_runs(const uint64_t *a, size_t g, bool runs, uint32_t *ids, uint64_t *starts)
{
    size_t count = 0;
    unsigned carry = 0; /* whether entry i - 1 continues a run from i - 2 */
    uint64_t prev_last = a[0];
    for (size_t i = 0; i < g; i += 8) {
        __mmask8 live = grove__bt_lanes8(g - i);
        __m512i v = _mm512_maskz_loadu_epi64(live, a + i);
        _mm256_mask_storeu_epi32(ids + i, live, _mm512_cvtepi64_epi32(v));
        if (!runs) continue;
        /* the previous entry of each lane: lane 0 takes the last of the
         * previous vector (entry 0 compares with itself: not a run) */
        __m512i prev = _mm512_mask_permutexvar_epi64(_mm512_set1_epi64((long long)prev_last), 0xfe,
                                                     _mm512_setr_epi64(0, 0, 1, 2, 3, 4, 5, 6), v);
        __mmask8 same = _mm512_mask_cmpeq_epi64_mask(live, _mm512_srli_epi64(v, 32), _mm512_srli_epi64(prev, 32));
        if (i == 0) same &= (__mmask8)0xfe;
        unsigned s = same, begins = s & ~((s << 1) | carry);
        carry = (s >> 7) & 1;
        prev_last = a[i + 7 < g ? i + 7 : g - 1];
        while (begins) {
            starts[count++] = i + (size_t)__builtin_ctz(begins) - 1;
            begins &= begins - 1;
        }
    }
    return count;
}

/* out[r] = the coordinate at base + ids[r] * stride, r < g, as double
 * (float64 coordinates when `wide`, float32 otherwise). */
static inline AVX512 __attribute__((always_inline)) void gather(const char *base, size_t stride, const uint32_t *ids,
                                                              size_t g, double *out, bool wide)
{
    const __m512i st = _mm512_set1_epi64((long long)stride);
    for (size_t r = 0; r < g; r += 8) {
        __mmask8 live = grove__bt_lanes8(g - r);
        __m512i off = _mm512_mullo_epi64(_mm512_cvtepu32_epi64(_mm256_maskz_loadu_epi32(live, ids + r)), st);
        __m512d x = wide ? _mm512_mask_i64gather_pd(_mm512_setzero_pd(), live, off, base, 1)
                         : _mm512_cvtps_pd(_mm512_mask_i64gather_ps(_mm256_setzero_ps(), live, off, base, 1));
        _mm512_mask_storeu_pd(out + r, live, x);
    }
}

static AVX512 void gather_f64(const char *base, size_t stride, const uint32_t *ids, size_t g, double *out)
{
    gather(base, stride, ids, g, out, true);
}

static AVX512 void gather_f32(const char *base, size_t stride, const uint32_t *ids, size_t g, double *out)
{
    gather(base, stride, ids, g, out, false);
}

/* How column8 picks coordinate j out of eight rows of 2 or 3 doubles side
 * by side: two permutations, set up once per loop. Built inside the loop
 * they cost more than the loads and the arithmetic (16384 points, d = 3:
 * the quantized extent and records passes took 7 and 13 µs). */
typedef struct column8_plan {
    __m512i first, second;
} column8_plan;

static inline AVX512 column8_plan column8_setup(size_t row, size_t j)
{
    column8_plan p;
    long long jj = (long long)j;
    if (row == 2 * sizeof(double)) {
        p.first = _mm512_add_epi64(_mm512_setr_epi64(0, 2, 4, 6, 8, 10, 12, 14), _mm512_set1_epi64(jj));
        p.second = p.first;
    } else { /* lane k wants double 3k + j of the 24: lanes 0..4 (and lane 5 for j = 0: double 15) come from
              * the first 16, the rest from doubles 16..23, picked as 8 + their index there */
        p.first = _mm512_setr_epi64(jj, 3 + jj, 6 + jj, 9 + jj, 12 + jj, 15, 0, 0);
        p.second = _mm512_setr_epi64(0, 1, 2, 3, 4, j ? 8 + jj - 1 : 5, 8 + 2 + jj, 8 + 5 + jj);
    }
    return p;
}

/* Coordinate j of rows i..i+7 (lanes `live`; the others 0), `plan` from
 * column8_setup(row, j). A dimension whose rows are side by side is one
 * load; rows of d = 2 or 3 doubles side by side are loaded whole and
 * deinterleaved; any other layout is gathered. */
static inline AVX512 __attribute__((always_inline)) __m512d column8(const char *base, size_t row, size_t dim,
                                                                  size_t i, size_t j, __mmask8 live,
                                                                  const column8_plan *plan)
{
    const double *x = (const double *)(const void *)(base + i * row);
    if (row == sizeof(double)) return _mm512_maskz_loadu_pd(live, x + j * (dim / sizeof(double)));
    if (dim == sizeof(double) && row == 2 * sizeof(double) && live == 0xff)
        return _mm512_permutex2var_pd(_mm512_loadu_pd(x), plan->first, _mm512_loadu_pd(x + 8));
    if (dim == sizeof(double) && row == 3 * sizeof(double) && live == 0xff) {
        __m512d v0 = _mm512_loadu_pd(x), v1 = _mm512_loadu_pd(x + 8), v2 = _mm512_loadu_pd(x + 16);
        return _mm512_permutex2var_pd(_mm512_permutex2var_pd(v0, plan->first, v1), plan->second, v2);
    }
    __m512i offsets = _mm512_add_epi64(row_offsets(i, row), _mm512_set1_epi64((long long)(j * dim)));
    return _mm512_mask_i64gather_pd(_mm512_setzero_pd(), live, offsets, base, 1);
}

/* NaN, +infinity or -infinity: the categories of vfpclasspd. */
#define NOT_FINITE (0x01 | 0x08 | 0x10 | 0x80)

/* extent over rows of d doubles side by side, in one pass: eight rows are
 * d whole vectors, whose lane l of vector v holds coordinate (8 v + l) mod
 * d, so the minima and maxima run lane by lane and fold into columns at
 * the end. A column at a time would read the rows d times. */
static inline AVX512 __attribute__((always_inline)) bool extent_rows(const double *x, size_t d, size_t a, size_t b,
                                                                   double *lo, double *hi)
{
    __m512d vlo[GROVE__QUANTIZED_MAX_DIMS], vhi[GROVE__QUANTIZED_MAX_DIMS];
    __mmask8 bad = 0;
    for (size_t v = 0; v < d; v++) {
        vlo[v] = _mm512_set1_pd(INFINITY);
        vhi[v] = _mm512_set1_pd(-INFINITY);
    }
    size_t i = a;
    for (; i + 8 <= b; i += 8)
        for (size_t v = 0; v < d; v++) {
            __m512d w = _mm512_loadu_pd(x + i * d + 8 * v);
            vlo[v] = _mm512_min_pd(vlo[v], w);
            vhi[v] = _mm512_max_pd(vhi[v], w);
            bad |= _mm512_fpclass_pd_mask(w, NOT_FINITE);
        }
    double l[8 * GROVE__QUANTIZED_MAX_DIMS], h[8 * GROVE__QUANTIZED_MAX_DIMS];
    for (size_t v = 0; v < d; v++) {
        _mm512_storeu_pd(l + 8 * v, vlo[v]);
        _mm512_storeu_pd(h + 8 * v, vhi[v]);
    }
    for (size_t j = 0; j < d; j++) {
        lo[j] = INFINITY;
        hi[j] = -INFINITY;
    }
    for (size_t e = 0; e < 8 * d; e++) {
        lo[e % d] = l[e] < lo[e % d] ? l[e] : lo[e % d];
        hi[e % d] = h[e] > hi[e % d] ? h[e] : hi[e % d];
    }
    for (; i < b; i++)
        for (size_t j = 0; j < d; j++) {
            double w = x[i * d + j];
            bad |= !isfinite(w);
            lo[j] = w < lo[j] ? w : lo[j];
            hi[j] = w > hi[j] ? w : hi[j];
        }
    return !bad;
}

static AVX512 bool extent(const char *base, size_t row, size_t dim, size_t d, size_t a, size_t b, double *lo,
                          double *hi)
{
    const double *x = (const double *)(const void *)base;
    if (dim == sizeof(double) && row == d * sizeof(double)) switch (d) { /* constant d: registers */
        case 2: return extent_rows(x, 2, a, b, lo, hi);
        case 3: return extent_rows(x, 3, a, b, lo, hi);
        case 4: return extent_rows(x, 4, a, b, lo, hi);
        }
    __mmask8 bad = 0;
    for (size_t j = 0; j < d; j++) {
        column8_plan plan = column8_setup(row, j);
        __m512d first = _mm512_set1_pd(*(const double *)(const void *)(base + a * row + j * dim));
        __m512d vlo = first, vhi = first;
        for (size_t i = a; i < b; i += 8) {
            __mmask8 live = grove__bt_lanes8(b - i);
            __m512d v = column8(base, row, dim, i, j, live, &plan);
            vlo = _mm512_mask_min_pd(vlo, live, vlo, v);
            vhi = _mm512_mask_max_pd(vhi, live, vhi, v);
            bad |= _mm512_mask_fpclass_pd_mask(live, v, NOT_FINITE);
        }
        lo[j] = _mm512_reduce_min_pd(vlo);
        hi[j] = _mm512_reduce_max_pd(vhi);
    }
    return !bad;
}

static AVX512 void records(const char *base, size_t row, size_t dim, size_t d, size_t a, size_t b, const double *lo,
                           const double *scale, const int *shift, uint64_t mask, uint64_t *src)
{
    __m512d top = _mm512_set1_pd((double)mask);
    __m512i vmask = _mm512_set1_epi64((long long)mask);
    column8_plan plan[GROVE__QUANTIZED_MAX_DIMS];
    __m512d vlo[GROVE__QUANTIZED_MAX_DIMS], vscale[GROVE__QUANTIZED_MAX_DIMS];
    __m512i vshift[GROVE__QUANTIZED_MAX_DIMS];
    for (size_t j = 0; j < d; j++) {
        plan[j] = column8_setup(row, j);
        vlo[j] = _mm512_set1_pd(lo[j]);
        vscale[j] = _mm512_set1_pd(scale[j]);
        vshift[j] = _mm512_set1_epi64(shift[j]);
    }
    for (size_t i = a; i < b; i += 8) {
        __mmask8 live = grove__bt_lanes8(b - i);
        __m512i e = _mm512_add_epi64(_mm512_set1_epi64((long long)i), _mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7));
        for (size_t j = 0; j < d; j++) {
            __m512d f = _mm512_mul_pd(_mm512_sub_pd(column8(base, row, dim, i, j, live, &plan[j]), vlo[j]), vscale[j]);
            __mmask8 below = _mm512_cmp_pd_mask(f, top, _CMP_LT_OQ);
            __m512i q = _mm512_mask_cvttpd_epu64(vmask, below, f);
            e = _mm512_or_si512(e, _mm512_sllv_epi64(q, vshift[j]));
        }
        _mm512_mask_storeu_epi64(src + i, live, e);
    }
}

/* keys_rows for rows i..i+7 (the lanes of `live`). */
static inline AVX512 __attribute__((always_inline)) void keys_rows8(const char *base, size_t row, size_t d, size_t i,
                                                                   __mmask8 live, bool wide, uint64_t *key,
                                                                   size_t n, __m512i *vlo, __m512i *vhi,
                                                                   const column8_plan *plan)
{
    for (size_t j = 0; j < d; j++) {
        __m512i k = wide ? key_f64(column8(base, row, sizeof(double), i, j, live, &plan[j]))
                         : keys8(base + i * row + j * sizeof(float), row_offsets(0, row), live, false);
        grove__store8_64(key + j * n + i, live, k);
        vlo[j] = _mm512_mask_min_epu64(vlo[j], live, vlo[j], k);
        vhi[j] = _mm512_mask_max_epu64(vhi[j], live, vhi[j], k);
    }
}

/* Plain stores but in the last, partial group (avx512_stream.h): the
 * keys of a large batch go to memory. */
static AVX512 void keys_rows(const char *base, size_t row, size_t d, size_t a, size_t b, bool wide, uint64_t *key,
                             size_t n, uint64_t *lo, uint64_t *hi)
{
    __m512i vlo[GROVE__BS_MAX_DIMS], vhi[GROVE__BS_MAX_DIMS];
    column8_plan plan[GROVE__BS_MAX_DIMS];
    for (size_t j = 0; j < d; j++) {
        vlo[j] = _mm512_set1_epi64(-1);
        vhi[j] = _mm512_setzero_si512();
        plan[j] = column8_setup(row, j);
    }
    size_t i = a;
    for (; i + 8 <= b; i += 8) keys_rows8(base, row, d, i, 0xff, wide, key, n, vlo, vhi, plan);
    if (i < b) keys_rows8(base, row, d, i, grove__bt_lanes8(b - i), wide, key, n, vlo, vhi, plan);
    for (size_t j = 0; j < d; j++) {
        lo[j] = _mm512_reduce_min_epu64(vlo[j]);
        hi[j] = _mm512_reduce_max_epu64(vhi[j]);
    }
}

static AVX512 size_t find(const uint64_t *l, size_t from, size_t k, int shift, uint64_t mask, uint64_t q)
{
    const __m128i count = _mm_cvtsi32_si128(shift);
    const __m512i vmask = _mm512_set1_epi64((long long)mask), vq = _mm512_set1_epi64((long long)q);
    for (size_t i = from; i < k; i += 8) {
        __mmask8 live = grove__bt_lanes8(k - i);
        __m512i f = _mm512_and_si512(_mm512_srl_epi64(_mm512_maskz_loadu_epi64(live, l + i), count), vmask);
        __mmask8 hit = _mm512_mask_cmpeq_epi64_mask(live, f, vq);
        if (hit) return i + (size_t)__builtin_ctz(hit);
    }
    return k;
}

bool grove__bt_presort_kernels_avx512(grove__bt_presort_kernels *k)
{
    grove__cpu_features cpu = grove__cpu();
    if (!cpu.avx512f || !cpu.avx512dq || !cpu.avx512vl) return false;
    k->keys[0] = keys_f32;
    k->keys[1] = keys_f64;
    k->ids_runs = ids_runs;
    k->gather[0] = gather_f32;
    k->gather[1] = gather_f64;
    k->extent = extent;
    k->records = records;
    k->keys_rows = keys_rows;
    k->find = find;
    k->sort_small = grove__bitonic_sort_avx512;
    return true;
}
#else
bool grove__bt_presort_kernels_avx512(grove__bt_presort_kernels *k)
{
    (void)k;
    return false;
}
#endif
