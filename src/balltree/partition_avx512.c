/* The packed builder's list partition in AVX-512 (partition.c has the
 * portable loop and the definition). */
#include "balltree_internal.h"

#if GROVE__HAVE_TARGETS
#include <immintrin.h>
/* Eight records at a time: compare, then compress each side into a
 * register and store it at that side's cursor. While a whole vector fits
 * below each side's end the stores are plain ones (faster than masked
 * stores): the lanes past a cursor land where that side's later records
 * will overwrite them, never past its end. Near the
 * ends the stores are masked to the valid lanes, so nothing is written
 * outside dst[0..k) and the sides never overlap. */
__attribute__((target("avx512f"))) static void partition_avx512(const uint64_t *restrict src,
                                                                uint64_t *restrict dst, size_t k, size_t h,
                                                                int shift, uint64_t mask, uint64_t pivot)
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

grove__packed_partition_fn *grove__packed_partition_avx512(void)
{
    return grove__cpu().avx512f ? partition_avx512 : NULL;
}
#else
grove__packed_partition_fn *grove__packed_partition_avx512(void) { return NULL; }
#endif
