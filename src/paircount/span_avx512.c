/* The pair counts' inner loop in AVX-512 for bins in r (pair_t.h has the
 * portable steps and the conventions): one query against its runs of data
 * positions, the squared distances computed and binned in registers, with
 * the portable steps' compares (r2 >= e2[i] in T), so the same counts.
 *
 * Up to 15 bins without weights, a vector's bins come from a branch-free
 * binary search in the squared edges held in registers, and each lane
 * counts its pairs in byte counters (eight to a 64-bit lane), added to the
 * thread's counters every 255 vectors and at the query's end.
 * Otherwise a vector's pairs are binned from the last bin down, Corrfunc's
 * way: the lanes at or above each edge are that bin's, counted by a
 * popcount, until no lane is left, and weight products go to lane
 * (offset within the run) mod 8 of each bin's eight partial sums, the
 * order the portable steps add them in, so the sums have the same bits. */
#include "paircount_internal.h"
#include "../core/cpu.h"

#if GROVE__HAVE_TARGETS
#include <immintrin.h>

#define PC_V4 __attribute__((target("avx512f,avx512vl,avx512bw,avx512dq,avx2,bmi,bmi2,lzcnt,popcnt")))
/* The most bins the binary search takes (16 squared edges in registers). */
#define PC_FAST_BINS 15
/* Vectors between two flushes of the byte counters. */
#define PC_FLUSH 255

/* The first `left` of `width` lanes. */
static inline PC_V4 uint32_t lanes(size_t left, unsigned width)
{
    return left >= width ? (1u << width) - 1 : (1u << left) - 1;
}

/* What a query's loops keep in registers. */
typedef struct q_f64 {
    const double *col[GROVE__JOIN_SOA_MAX];
    __m512d q[GROVE__JOIN_SOA_MAX], len[GROVE__JOIN_SOA_MAX];
} q_f64;

static inline PC_V4 GROVE__ALWAYS_INLINE void q_f64_init(q_f64 *v, const pc_span *sp, size_t dr, int periodic)
{
    for (size_t k = 0; k < dr; k++) {
        v->col[k] = (const double *)sp->col[k];
        v->q[k] = _mm512_set1_pd(((const double *)sp->q)[k]);
        if (periodic) v->len[k] = _mm512_set1_pd(((const double *)sp->len)[k]);
    }
}

/* Squared distances of the query to 8 positions at p, over dr input
 * dimensions in order (minimum images when periodic). */
static inline PC_V4 GROVE__ALWAYS_INLINE __m512d dist_f64(const q_f64 *v, size_t dr, size_t p, __mmask8 live,
                                                          int periodic)
{
    __m512d r2 = _mm512_setzero_pd();
    for (size_t k = 0; k < dr; k++) {
        __m512d t = _mm512_sub_pd(v->q[k], _mm512_maskz_loadu_pd(live, v->col[k] + p));
        if (periodic) {
            t = _mm512_abs_pd(t);
            t = _mm512_min_pd(_mm512_sub_pd(v->len[k], t), t);
        }
        r2 = k == 0 ? _mm512_mul_pd(t, t) : _mm512_add_pd(r2, _mm512_mul_pd(t, t));
    }
    return r2;
}

/* Add the byte counters to the thread's and clear them: acc[0] holds
 * fields 0-7, acc[1] fields 8-15 of each lane, field k counting the pairs
 * with k squared edges at or below them, in bin k - 1 (fields 0 and
 * nrp + 1 are the pairs outside every bin). */
static inline PC_V4 void flush_bytes(__m512i *acc, uint64_t *count, size_t nrp)
{
    uint8_t bytes[2][64];
    _mm512_storeu_si512(bytes[0], acc[0]);
    _mm512_storeu_si512(bytes[1], acc[1]);
    for (size_t k = 1; k <= nrp; k++) {
        uint64_t sum = 0;
        for (int lane = 0; lane < 8; lane++) sum += bytes[k / 8][lane * 8 + k % 8];
        count[(k - 1) * PC_LANES] += sum;
    }
    acc[0] = acc[1] = _mm512_setzero_si512();
}

/* Count the lanes `live` in field k (0 .. 15) of the byte counters. */
static inline PC_V4 GROVE__ALWAYS_INLINE void count_bytes(__m512i *acc, __m512i k, __mmask8 live)
{
    /* 1 << 8 (k mod 8): a permute reads the low three bits of k. */
    const __m512i fields = _mm512_set_epi64((long long)1 << 56, (long long)1 << 48, (long long)1 << 40,
                                            (long long)1 << 32, (long long)1 << 24, 1 << 16, 1 << 8, 1);
    __m512i one = _mm512_permutexvar_epi64(k, fields);
    __mmask8 high = _mm512_mask_test_epi64_mask(live, k, _mm512_set1_epi64(8));
    acc[0] = _mm512_mask_add_epi64(acc[0], live & (__mmask8)~high, acc[0], one);
    acc[1] = _mm512_mask_add_epi64(acc[1], high, acc[1], one);
}

/* The fast path: a query's runs, up to 15 bins, no weights. */
static inline PC_V4 GROVE__ALWAYS_INLINE void fast_f64(const pc_span *sp, const uint32_t *rb, const uint32_t *re,
                                                       size_t runs, int periodic, size_t dr)
{
    q_f64 v;
    q_f64_init(&v, sp, dr, periodic);
    const double *e2 = sp->e2;
    size_t nrp = sp->nrp;
    double tab[16];
    for (size_t i = 0; i < 16; i++) tab[i] = i <= nrp ? e2[i] : e2[sp->nrp + 1]; /* then +infinity */
    __m512d t0 = _mm512_loadu_pd(tab), t1 = _mm512_loadu_pd(tab + 8);
    __m512d hi = _mm512_set1_pd(e2[nrp]);
    __m512i acc[2] = {_mm512_setzero_si512(), _mm512_setzero_si512()};
    uint64_t *count = sp->count + PC_LANES;
    unsigned vectors = 0;
    for (size_t r = 0; r < runs; r++)
        for (size_t p = rb[r]; p < re[r]; p += 8) {
            __mmask8 live = (__mmask8)lanes(re[r] - p, 8);
            __m512d r2 = dist_f64(&v, dr, p, live, periodic);
            /* Below the last edge, k = the edges at or below r2, 0 .. nrp. */
            __mmask8 rem = _mm512_mask_cmp_pd_mask(live, r2, hi, _CMP_LT_OQ);
            __m512i k = _mm512_setzero_si512();
            for (int step = 8; step >= 1; step /= 2) {
                __m512i at = _mm512_add_epi64(k, _mm512_set1_epi64(step - 1));
                __mmask8 up = _mm512_cmp_pd_mask(r2, _mm512_permutex2var_pd(t0, at, t1), _CMP_GE_OQ);
                k = _mm512_mask_add_epi64(k, up, k, _mm512_set1_epi64(step));
            }
            count_bytes(acc, k, rem);
            if (++vectors == PC_FLUSH) {
                flush_bytes(acc, count, nrp);
                vectors = 0;
            }
        }
    flush_bytes(acc, count, nrp);
}

/* Count (and weigh) the lanes `live` of one vector from the last bin down;
 * wp: their weight products, lanes in offset order. */
static inline PC_V4 GROVE__ALWAYS_INLINE void descend_f64(__m512d r2, __mmask8 live, const pc_span *sp,
                                                          uint64_t *count, __m512d wp)
{
    const double *e2 = sp->e2;
    size_t nrp = sp->nrp;
    __mmask8 rem = _mm512_mask_cmp_pd_mask(live, r2, _mm512_set1_pd(e2[nrp]), _CMP_LT_OQ);
    rem = _mm512_mask_cmp_pd_mask(rem, r2, _mm512_set1_pd(e2[0]), _CMP_GE_OQ);
    for (size_t i = nrp; rem && i-- > 0;) {
        __mmask8 m = _mm512_mask_cmp_pd_mask(rem, r2, _mm512_set1_pd(e2[i]), _CMP_GE_OQ);
        if (!m) continue;
        count[i * PC_LANES] += (uint64_t)__builtin_popcount(m);
        if (sp->part) {
            double *p = sp->part + (i + 1) * PC_LANES;
            _mm512_storeu_pd(p, _mm512_mask_add_pd(_mm512_loadu_pd(p), m, _mm512_loadu_pd(p), wp));
        }
        rem &= (__mmask8)~m;
    }
}

static inline PC_V4 GROVE__ALWAYS_INLINE void slow_f64(const pc_span *sp, const uint32_t *rb, const uint32_t *re,
                                                       size_t runs, int periodic, size_t dr)
{
    q_f64 v;
    q_f64_init(&v, sp, dr, periodic);
    uint64_t *count = sp->count + PC_LANES;
    __m512d wq = _mm512_set1_pd(sp->wq);
    for (size_t r = 0; r < runs; r++)
        for (size_t p = rb[r], i = 0; p < re[r]; p += 8, i++) {
            __mmask8 live = (__mmask8)lanes(re[r] - p, 8);
            __m512d r2 = dist_f64(&v, dr, p, live, periodic);
            __m512d wp = sp->part ? _mm512_mul_pd(wq, _mm512_maskz_loadu_pd(live, sp->w + p)) : _mm512_setzero_pd();
            /* Alternate counters, so one bin's counts do not wait on each other. */
            descend_f64(r2, live, sp, count + (i & (PC_LANES - 1)), wp);
        }
}

PC_V4 void grove__pc_query_avx512_f64(const pc_span *sp, const uint32_t *rb, const uint32_t *re, size_t runs)
{
    int fast = !sp->part && sp->nrp <= PC_FAST_BINS, periodic = sp->len != NULL;
#define PC_Q(F, P, DR) F(sp, rb, re, runs, P, DR)
    if (fast && periodic) sp->dr == 3 ? PC_Q(fast_f64, 1, 3) : PC_Q(fast_f64, 1, sp->dr);
    else if (fast) sp->dr == 3 ? PC_Q(fast_f64, 0, 3) : PC_Q(fast_f64, 0, sp->dr);
    else if (periodic) sp->dr == 3 ? PC_Q(slow_f64, 1, 3) : PC_Q(slow_f64, 1, sp->dr);
    else sp->dr == 3 ? PC_Q(slow_f64, 0, 3) : PC_Q(slow_f64, 0, sp->dr);
#undef PC_Q
}

/* The same for float: 16 lanes of squared distances; the binary search in
 * 16 lanes, the byte counters and weight products in two halves of 8
 * (the lower half first: the order of offsets). */
typedef struct q_f32 {
    const float *col[GROVE__JOIN_SOA_MAX];
    __m512 q[GROVE__JOIN_SOA_MAX], len[GROVE__JOIN_SOA_MAX];
} q_f32;

static inline PC_V4 GROVE__ALWAYS_INLINE void q_f32_init(q_f32 *v, const pc_span *sp, size_t dr, int periodic)
{
    for (size_t k = 0; k < dr; k++) {
        v->col[k] = (const float *)sp->col[k];
        v->q[k] = _mm512_set1_ps(((const float *)sp->q)[k]);
        if (periodic) v->len[k] = _mm512_set1_ps(((const float *)sp->len)[k]);
    }
}

static inline PC_V4 GROVE__ALWAYS_INLINE __m512 dist_f32(const q_f32 *v, size_t dr, size_t p, __mmask16 live,
                                                         int periodic)
{
    __m512 r2 = _mm512_setzero_ps();
    for (size_t k = 0; k < dr; k++) {
        __m512 t = _mm512_sub_ps(v->q[k], _mm512_maskz_loadu_ps(live, v->col[k] + p));
        if (periodic) {
            t = _mm512_abs_ps(t);
            t = _mm512_min_ps(_mm512_sub_ps(v->len[k], t), t);
        }
        r2 = k == 0 ? _mm512_mul_ps(t, t) : _mm512_add_ps(r2, _mm512_mul_ps(t, t));
    }
    return r2;
}

static inline PC_V4 GROVE__ALWAYS_INLINE void fast_f32(const pc_span *sp, const uint32_t *rb, const uint32_t *re,
                                                       size_t runs, int periodic, size_t dr)
{
    q_f32 v;
    q_f32_init(&v, sp, dr, periodic);
    const float *e2 = sp->e2;
    size_t nrp = sp->nrp;
    float tab[16];
    for (size_t i = 0; i < 16; i++) tab[i] = i <= nrp ? e2[i] : e2[sp->nrp + 1];
    __m512 t = _mm512_loadu_ps(tab);
    __m512 hi = _mm512_set1_ps(e2[nrp]);
    __m512i acc[2] = {_mm512_setzero_si512(), _mm512_setzero_si512()};
    uint64_t *count = sp->count + PC_LANES;
    unsigned vectors = 0;
    for (size_t r = 0; r < runs; r++)
        for (size_t p = rb[r]; p < re[r]; p += 16) {
            __mmask16 live = (__mmask16)lanes(re[r] - p, 16);
            __m512 r2 = dist_f32(&v, dr, p, live, periodic);
            __mmask16 rem = _mm512_mask_cmp_ps_mask(live, r2, hi, _CMP_LT_OQ);
            __m512i k = _mm512_setzero_si512();
            for (int step = 8; step >= 1; step /= 2) {
                __m512i at = _mm512_add_epi32(k, _mm512_set1_epi32(step - 1));
                __mmask16 up = _mm512_cmp_ps_mask(r2, _mm512_permutexvar_ps(at, t), _CMP_GE_OQ);
                k = _mm512_mask_add_epi32(k, up, k, _mm512_set1_epi32(step));
            }
            count_bytes(acc, _mm512_cvtepu32_epi64(_mm512_castsi512_si256(k)), (__mmask8)rem);
            count_bytes(acc, _mm512_cvtepu32_epi64(_mm512_extracti64x4_epi64(k, 1)), (__mmask8)(rem >> 8));
            /* Two counts a vector: flush at half the byte counters' range. */
            if (++vectors == PC_FLUSH / 2) {
                flush_bytes(acc, count, nrp);
                vectors = 0;
            }
        }
    flush_bytes(acc, count, nrp);
}

static inline PC_V4 GROVE__ALWAYS_INLINE void descend_f32(__m512 r2, __mmask16 live, const pc_span *sp,
                                                          uint64_t *count, __m512d wlo, __m512d whi)
{
    const float *e2 = sp->e2;
    size_t nrp = sp->nrp;
    __mmask16 rem = _mm512_mask_cmp_ps_mask(live, r2, _mm512_set1_ps(e2[nrp]), _CMP_LT_OQ);
    rem = _mm512_mask_cmp_ps_mask(rem, r2, _mm512_set1_ps(e2[0]), _CMP_GE_OQ);
    for (size_t i = nrp; rem && i-- > 0;) {
        __mmask16 m = _mm512_mask_cmp_ps_mask(rem, r2, _mm512_set1_ps(e2[i]), _CMP_GE_OQ);
        if (!m) continue;
        count[i * PC_LANES] += (uint64_t)__builtin_popcount(m);
        if (sp->part) {
            double *p = sp->part + (i + 1) * PC_LANES;
            __m512d acc = _mm512_loadu_pd(p);
            acc = _mm512_mask_add_pd(acc, (__mmask8)m, acc, wlo);
            acc = _mm512_mask_add_pd(acc, (__mmask8)(m >> 8), acc, whi);
            _mm512_storeu_pd(p, acc);
        }
        rem &= (__mmask16)~m;
    }
}

static inline PC_V4 GROVE__ALWAYS_INLINE void slow_f32(const pc_span *sp, const uint32_t *rb, const uint32_t *re,
                                                       size_t runs, int periodic, size_t dr)
{
    q_f32 v;
    q_f32_init(&v, sp, dr, periodic);
    uint64_t *count = sp->count + PC_LANES;
    __m512d wq = _mm512_set1_pd(sp->wq);
    for (size_t r = 0; r < runs; r++)
        for (size_t p = rb[r], i = 0; p < re[r]; p += 16, i++) {
            __mmask16 live = (__mmask16)lanes(re[r] - p, 16);
            __m512 r2 = dist_f32(&v, dr, p, live, periodic);
            __m512d wlo = _mm512_setzero_pd(), whi = _mm512_setzero_pd();
            if (sp->part) {
                wlo = _mm512_mul_pd(wq, _mm512_maskz_loadu_pd((__mmask8)live, sp->w + p));
                whi = _mm512_mul_pd(wq, _mm512_maskz_loadu_pd((__mmask8)(live >> 8), sp->w + p + 8));
            }
            descend_f32(r2, live, sp, count + (i & (PC_LANES - 1)), wlo, whi);
        }
}

PC_V4 void grove__pc_query_avx512_f32(const pc_span *sp, const uint32_t *rb, const uint32_t *re, size_t runs)
{
    int fast = !sp->part && sp->nrp <= PC_FAST_BINS, periodic = sp->len != NULL;
#define PC_Q(F, P, DR) F(sp, rb, re, runs, P, DR)
    if (fast && periodic) sp->dr == 3 ? PC_Q(fast_f32, 1, 3) : PC_Q(fast_f32, 1, sp->dr);
    else if (fast) sp->dr == 3 ? PC_Q(fast_f32, 0, 3) : PC_Q(fast_f32, 0, sp->dr);
    else if (periodic) sp->dr == 3 ? PC_Q(slow_f32, 1, 3) : PC_Q(slow_f32, 1, sp->dr);
    else sp->dr == 3 ? PC_Q(slow_f32, 0, 3) : PC_Q(slow_f32, 0, sp->dr);
#undef PC_Q
}
#endif
