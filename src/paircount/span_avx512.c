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

/* float64: 8 lanes; the table of 16 squared edges in two registers. */
#define T double
#define FN(name) name##_f64
#define WIDTH 8
#define V __m512d
#define M __mmask8
#define K __m512i
#define V_SET1 _mm512_set1_pd
#define V_ZERO _mm512_setzero_pd
#define V_LOADZ _mm512_maskz_loadu_pd
#define V_SUB _mm512_sub_pd
#define V_ABS _mm512_abs_pd
#define V_MIN _mm512_min_pd
#define V_MUL _mm512_mul_pd
#define V_ADD _mm512_add_pd
#define V_CMP _mm512_mask_cmp_pd_mask
#define K_ZERO _mm512_setzero_si512
#define K_ADD _mm512_add_epi64
#define K_MASK_ADD _mm512_mask_add_epi64
#define K_SET1 _mm512_set1_epi64
typedef struct table_f64 {
    __m512d lo, hi;
} table_f64;
static inline PC_V4 table_f64 table_load_f64(const double *tab)
{
    return (table_f64){_mm512_loadu_pd(tab), _mm512_loadu_pd(tab + 8)};
}
static inline PC_V4 GROVE__ALWAYS_INLINE __m512d v_lookup_f64(table_f64 t, __m512i at)
{
    return _mm512_permutex2var_pd(t.lo, at, t.hi);
}
static inline PC_V4 GROVE__ALWAYS_INLINE void v_count_f64(__m512i *acc, __m512i k, __mmask8 live)
{
    count_bytes(acc, k, live);
}
static inline PC_V4 GROVE__ALWAYS_INLINE void v_weigh_load_f64(__m512d *w, __m512d wq, const double *wd, __mmask8 live)
{
    w[0] = _mm512_mul_pd(wq, _mm512_maskz_loadu_pd(live, wd));
}
static inline PC_V4 GROVE__ALWAYS_INLINE void v_weigh_add_f64(double *part, __mmask8 m, const __m512d *w)
{
    __m512d acc = _mm512_loadu_pd(part);
    _mm512_storeu_pd(part, _mm512_mask_add_pd(acc, m, acc, w[0]));
}
#include "span_avx512_t.h"
#undef T
#undef FN
#undef WIDTH
#undef V
#undef M
#undef V_SET1
#undef V_ZERO
#undef V_LOADZ
#undef V_SUB
#undef V_ABS
#undef V_MIN
#undef V_MUL
#undef V_ADD
#undef V_CMP
#undef K_ADD
#undef K_MASK_ADD
#undef K_SET1

/* float32: 16 lanes, the 16 squared edges in one register; the byte
 * counters and weight products in two halves of 8 (the lower first: the
 * order of offsets). */
#define T float
#define FN(name) name##_f32
#define WIDTH 16
#define V __m512
#define M __mmask16
#define V_SET1 _mm512_set1_ps
#define V_ZERO _mm512_setzero_ps
#define V_LOADZ _mm512_maskz_loadu_ps
#define V_SUB _mm512_sub_ps
#define V_ABS _mm512_abs_ps
#define V_MIN _mm512_min_ps
#define V_MUL _mm512_mul_ps
#define V_ADD _mm512_add_ps
#define V_CMP _mm512_mask_cmp_ps_mask
#define K_ADD _mm512_add_epi32
#define K_MASK_ADD _mm512_mask_add_epi32
#define K_SET1 _mm512_set1_epi32
typedef __m512 table_f32;
static inline PC_V4 table_f32 table_load_f32(const float *tab) { return _mm512_loadu_ps(tab); }
static inline PC_V4 GROVE__ALWAYS_INLINE __m512 v_lookup_f32(table_f32 t, __m512i at)
{
    return _mm512_permutexvar_ps(at, t);
}
static inline PC_V4 GROVE__ALWAYS_INLINE void v_count_f32(__m512i *acc, __m512i k, __mmask16 live)
{
    count_bytes(acc, _mm512_cvtepu32_epi64(_mm512_castsi512_si256(k)), (__mmask8)live);
    count_bytes(acc, _mm512_cvtepu32_epi64(_mm512_extracti64x4_epi64(k, 1)), (__mmask8)(live >> 8));
}
static inline PC_V4 GROVE__ALWAYS_INLINE void v_weigh_load_f32(__m512d *w, __m512d wq, const double *wd, __mmask16 live)
{
    w[0] = _mm512_mul_pd(wq, _mm512_maskz_loadu_pd((__mmask8)live, wd));
    w[1] = _mm512_mul_pd(wq, _mm512_maskz_loadu_pd((__mmask8)(live >> 8), wd + 8));
}
static inline PC_V4 GROVE__ALWAYS_INLINE void v_weigh_add_f32(double *part, __mmask16 m, const __m512d *w)
{
    __m512d acc = _mm512_loadu_pd(part);
    acc = _mm512_mask_add_pd(acc, (__mmask8)m, acc, w[0]);
    _mm512_storeu_pd(part, _mm512_mask_add_pd(acc, (__mmask8)(m >> 8), acc, w[1]));
}
#include "span_avx512_t.h"
#endif
