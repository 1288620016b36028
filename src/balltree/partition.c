/* The packed builder's list partition (balltree_internal.h): the portable
 * definition and the AVX2 and AVX-512 versions (tested against it). Plain
 * vector stores while a side has room, the overhang overwritten later;
 * masked ones near the end. */
#include "balltree_internal.h"

/* Records [i, k) to dst at l (left) and r (right); branch-free: the
 * outcome is a coin flip. */
static inline void partition_scalar(const uint64_t *restrict src, uint64_t *restrict dst, size_t i, size_t k,
                                    size_t l, size_t r, int shift, uint64_t mask, uint64_t pivot)
{
    for (; i < k; i++) {
        uint64_t e = src[i];
        size_t right = grove__record_field(e, shift, mask) >= pivot;
        dst[right ? r : l] = e;
        l += 1 - right;
        r += right;
    }
}

void grove__packed_partition_portable(const uint64_t *restrict src, uint64_t *restrict dst, size_t k, size_t h,
                                      int shift, uint64_t mask, uint64_t pivot)
{
    partition_scalar(src, dst, 0, k, 0, h, shift, mask, pivot);
}

#if GROVE__HAVE_TARGETS
#include <immintrin.h>
#include "avx2_pack.h"

#define PACK4(a, b, c, d)                                                                                              \
    {                                                                                                                  \
        2 * (a), 2 * (a) + 1, 2 * (b), 2 * (b) + 1, 2 * (c), 2 * (c) + 1, 2 * (d), 2 * (d) + 1                         \
    }
const int32_t grove__bt_pack64[16][8] = {
    PACK4(0, 0, 0, 0), PACK4(0, 0, 0, 0), PACK4(1, 0, 0, 0), PACK4(0, 1, 0, 0), PACK4(2, 0, 0, 0), PACK4(0, 2, 0, 0),
    PACK4(1, 2, 0, 0), PACK4(0, 1, 2, 0), PACK4(3, 0, 0, 0), PACK4(0, 3, 0, 0), PACK4(1, 3, 0, 0), PACK4(0, 1, 3, 0),
    PACK4(2, 3, 0, 0), PACK4(0, 2, 3, 0), PACK4(1, 2, 3, 0), PACK4(0, 1, 2, 3),
};
#undef PACK4

/* Four records a step by a table permutation; ranks < 2^32: the signed compare is exact. */
__attribute__((target("avx2,popcnt"))) static void partition_avx2(const uint64_t *restrict src, uint64_t *restrict dst,
                                                                  size_t k, size_t h, int shift, uint64_t mask,
                                                                  uint64_t pivot)
{
    const __m128i count = _mm_cvtsi32_si128(shift);
    const __m256i vmask = _mm256_set1_epi64x((long long)mask), vpivot = _mm256_set1_epi64x((long long)pivot);
    size_t l = 0, r = h, i = 0;
    for (; i + 4 <= k && l + 4 <= h && r + 4 <= k; i += 4) { /* plain stores, no branch */
        __m256i v = _mm256_loadu_si256((const __m256i *)(const void *)(src + i));
        __m256i rank = _mm256_and_si256(_mm256_srl_epi64(v, count), vmask);
        unsigned left = (unsigned)_mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpgt_epi64(vpivot, rank)));
        unsigned nl = (unsigned)__builtin_popcount(left);
        _mm256_storeu_si256((__m256i *)(void *)(dst + l), grove__bt_pack(v, left));
        _mm256_storeu_si256((__m256i *)(void *)(dst + r), grove__bt_pack(v, left ^ 15));
        l += nl;
        r += 4 - nl;
    }
    /* Near a side's end: masked stores, scalar for the last few. */
    for (; i + 16 <= k; i += 4) {
        __m256i v = _mm256_loadu_si256((const __m256i *)(const void *)(src + i));
        __m256i rank = _mm256_and_si256(_mm256_srl_epi64(v, count), vmask);
        unsigned left = (unsigned)_mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpgt_epi64(vpivot, rank)));
        unsigned nl = (unsigned)__builtin_popcount(left), nr = 4 - nl;
        grove__bt_put64(dst + l, grove__bt_pack(v, left), nl, h - l);
        grove__bt_put64(dst + r, grove__bt_pack(v, left ^ 15), nr, k - r);
        l += nl;
        r += nr;
    }
    partition_scalar(src, dst, i, k, l, r, shift, mask, pivot);
}

/* Eight records at a time, each side compressed into a register. */
__attribute__((target("avx512f"))) static void partition_avx512(const uint64_t *restrict src, uint64_t *restrict dst,
                                                                size_t k, size_t h, int shift, uint64_t mask,
                                                                uint64_t pivot)
{
    const __m128i count = _mm_cvtsi32_si128(shift);
    const __m512i vmask = _mm512_set1_epi64((long long)mask), vpivot = _mm512_set1_epi64((long long)pivot);
    size_t l = 0, r = h, i = 0;
    for (; i + 8 <= k && l + 8 <= h && r + 8 <= k; i += 8) {
        __m512i v = _mm512_loadu_si512(src + i);
        __m512i rank = _mm512_and_si512(_mm512_srl_epi64(v, count), vmask);
        __mmask8 right = _mm512_cmpge_epu64_mask(rank, vpivot);
        size_t nr = (size_t)__builtin_popcount(right);
        _mm512_storeu_si512(dst + l, _mm512_maskz_compress_epi64((__mmask8)~right, v));
        _mm512_storeu_si512(dst + r, _mm512_maskz_compress_epi64(right, v));
        l += 8 - nr;
        r += nr;
    }
    for (; i < k; i += 8) {
        __mmask8 live = grove__bt_lanes8(k - i);
        __m512i v = _mm512_maskz_loadu_epi64(live, src + i);
        __m512i rank = _mm512_and_si512(_mm512_srl_epi64(v, count), vmask);
        __mmask8 right = _mm512_mask_cmpge_epu64_mask(live, rank, vpivot), left = live & (__mmask8)~right;
        int nl = __builtin_popcount(left), nr = __builtin_popcount(right);
        _mm512_mask_storeu_epi64(dst + l, (__mmask8)((1u << nl) - 1), _mm512_maskz_compress_epi64(left, v));
        _mm512_mask_storeu_epi64(dst + r, (__mmask8)((1u << nr) - 1), _mm512_maskz_compress_epi64(right, v));
        l += (size_t)nl;
        r += (size_t)nr;
    }
}

grove__packed_partition_fn *grove__packed_partition_avx2(void)
{
    grove__cpu_features cpu = grove__cpu();
    return cpu.avx2 && cpu.popcnt ? partition_avx2 : NULL;
}

grove__packed_partition_fn *grove__packed_partition_avx512(void)
{
    return grove__cpu().avx512f ? partition_avx512 : NULL;
}
#else
grove__packed_partition_fn *grove__packed_partition_avx2(void) { return NULL; }
grove__packed_partition_fn *grove__packed_partition_avx512(void) { return NULL; }
#endif
