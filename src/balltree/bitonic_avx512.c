/* The quantized presort's sort of a short list (packed_quantized.c,
 * quantized_sort_list) as a bitonic network in AVX-512 registers.
 *
 * A radix sort pays for its bins whatever the count: at 256 records and
 * 14-bit fields, two passes of 128 bins cleared, counted and summed, and
 * a batch of 256 points sorts three such lists. Here every record becomes a 32-bit key, its field above its
 * position (so equal fields keep their order and the result is the radix
 * sort's, byte for byte), sixteen keys to a register, and a bitonic
 * network sorts them: compare-exchanges between registers where the
 * partners are 16 or more apart, one permutation and a blend inside a
 * register below that. At 1024 records the radix sort was as fast, so the
 * network stops at GROVE__BITONIC_MAX = 512.
 * balltree_internal.h defines the result; a test checks it against the
 * definition. */
#include "balltree_internal.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define AVX512 __attribute__((target("avx512f,avx512dq,avx512vl")))

/* GCC unrolls the network's loops completely where asked; clang cannot
 * unroll the inner ones (their trip counts depend on the outer one) and
 * says so in a warning, so it is not asked. */
#if defined(__clang__)
#define UNROLL(n)
#else
#define UNROLL(n) _Pragma(#n)
#endif

/* Keys in registers: at most GROVE__BITONIC_MAX of them. */
#define LANES 16
#define REGS (GROVE__BITONIC_MAX / LANES)

/* Lanes i of a register with (i & j) == 0, for j = 1, 2, 4, 8. */
static uint16_t low_lanes(size_t j)
{
    return j == 1 ? 0x5555 : j == 2 ? 0x3333 : j == 4 ? 0x0f0f : 0x00ff;
}

/* Lanes of register r that sort ascending in the blocks of k keys: those
 * whose key index r * LANES + i has bit k clear. */
static uint16_t ascending_lanes(size_t r, size_t k)
{
    if (k < LANES) return low_lanes(k);
    return (r * LANES) & k ? 0 : 0xffff;
}

/* The keys of src[0..m) in registers v[0..regs): field << GROVE__BITONIC_BITS
 * | position, and all ones past m (they sort last). */
static inline AVX512 __attribute__((always_inline)) void keys(const uint64_t *src, size_t m, int shift, uint64_t mask,
                                                             __m512i *v, size_t regs)
{
    const __m128i count = _mm_cvtsi32_si128(shift);
    const __m512i field = _mm512_set1_epi64((long long)mask);
    const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    for (size_t r = 0; r < regs; r++) {
        size_t at = r * LANES, left = m > at ? m - at : 0;
        __mmask8 lo = (__mmask8)(left >= 8 ? 0xff : (1u << left) - 1);
        __mmask8 hi = (__mmask8)(left >= 16 ? 0xff : left > 8 ? (1u << (left - 8)) - 1 : 0);
        __m512i a = _mm512_and_si512(_mm512_srl_epi64(_mm512_maskz_loadu_epi64(lo, src + at), count), field);
        __m512i b = _mm512_and_si512(_mm512_srl_epi64(_mm512_maskz_loadu_epi64(hi, src + at + 8), count), field);
        __m512i q = _mm512_inserti64x4(_mm512_castsi256_si512(_mm512_cvtepi64_epi32(a)), _mm512_cvtepi64_epi32(b), 1);
        __m512i position = _mm512_add_epi32(lane, _mm512_set1_epi32((int)at));
        __m512i key = _mm512_or_si512(_mm512_slli_epi32(q, GROVE__BITONIC_BITS), position);
        v[r] = _mm512_mask_mov_epi32(_mm512_set1_epi32(-1), (__mmask16)(lo | (unsigned)hi << 8), key);
    }
}

/* The bitonic network over v[0..regs). With regs a constant the loops
 * unroll and v lives in registers rather than in memory. */
static inline AVX512 __attribute__((always_inline)) void network(__m512i *v, size_t regs)
{
    const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    UNROLL(GCC unroll 16)
    for (size_t k = 2; k <= regs * LANES; k *= 2)
        UNROLL(GCC unroll 16)
        for (size_t j = k / 2; j > 0; j /= 2) {
            if (j >= LANES) { /* partners in registers r and r + j / LANES */
                size_t apart = j / LANES;
                UNROLL(GCC unroll 32)
                for (size_t r = 0; r < regs; r++) {
                    if (r & apart) continue;
                    __m512i a = v[r], b = v[r + apart];
                    __m512i small = _mm512_min_epu32(a, b), large = _mm512_max_epu32(a, b);
                    bool up = ascending_lanes(r, k) != 0;
                    v[r] = up ? small : large;
                    v[r + apart] = up ? large : small;
                }
                continue;
            }
            const __m512i partner = _mm512_xor_si512(lane, _mm512_set1_epi32((int)j));
            UNROLL(GCC unroll 32)
            for (size_t r = 0; r < regs; r++) { /* lane i keeps the smaller where it is first in an ascending pair */
                __m512i other = _mm512_permutexvar_epi32(partner, v[r]);
                __m512i small = _mm512_min_epu32(v[r], other), large = _mm512_max_epu32(v[r], other);
                __mmask16 keep_small = (__mmask16)~(low_lanes(j) ^ ascending_lanes(r, k));
                v[r] = _mm512_mask_mov_epi32(large, keep_small, small);
            }
        }
}

/* The sort for a constant number of registers. */
static inline AVX512 __attribute__((always_inline)) void sort_regs(const uint64_t *src, size_t m, int shift,
                                                                  uint64_t mask, uint64_t *dst, size_t regs)
{
    __m512i v[REGS];
    keys(src, m, shift, mask, v, regs);
    network(v, regs);
    uint32_t key[GROVE__BITONIC_MAX];
    for (size_t r = 0; r < regs; r++) _mm512_storeu_si512(key + r * LANES, v[r]);
    for (size_t i = 0; i < m; i++) dst[i] = src[key[i] & (GROVE__BITONIC_MAX - 1)];
}

AVX512 void grove__bitonic_sort_avx512(const uint64_t *src, size_t m, int shift, uint64_t mask, uint64_t *dst)
{
    if (m <= 2 * LANES) sort_regs(src, m, shift, mask, dst, 2);
    else if (m <= 4 * LANES) sort_regs(src, m, shift, mask, dst, 4);
    else if (m <= 8 * LANES) sort_regs(src, m, shift, mask, dst, 8);
    else if (m <= 16 * LANES) sort_regs(src, m, shift, mask, dst, 16);
    else sort_regs(src, m, shift, mask, dst, 32);
}
#endif
