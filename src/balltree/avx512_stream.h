/* Loads and stores of eight lanes for the ball tree's AVX-512 loops
 * (select_avx512.c). Masked loads and stores stream
 * from memory at about half the speed of plain ones (in cache they differ
 * little), so these take the plain instruction whenever all eight
 * lanes are live, and the loops mask only their last, partial group.
 * Include inside an x86 GCC / clang guard, after <immintrin.h>. */
#ifndef GROVE_BALLTREE_AVX512_STREAM_H
#define GROVE_BALLTREE_AVX512_STREAM_H

#define GROVE__AVX512_STREAM __attribute__((target("avx512f,avx512vl"), always_inline))

static inline GROVE__AVX512_STREAM __m512i grove__load8_64(const void *p, __mmask8 live)
{
    return live == 0xff ? _mm512_loadu_si512(p) : _mm512_maskz_loadu_epi64(live, p);
}

static inline GROVE__AVX512_STREAM __m256i grove__load8_32(const void *p, __mmask8 live)
{
    return live == 0xff ? _mm256_loadu_si256((const __m256i *)p) : _mm256_maskz_loadu_epi32(live, p);
}

static inline GROVE__AVX512_STREAM void grove__store8_64(void *p, __mmask8 live, __m512i v)
{
    if (live == 0xff) _mm512_storeu_si512(p, v);
    else _mm512_mask_storeu_epi64(p, live, v);
}

static inline GROVE__AVX512_STREAM void grove__store8_32(void *p, __mmask8 live, __m256i v)
{
    if (live == 0xff) _mm256_storeu_si256((__m256i *)p, v);
    else _mm256_mask_storeu_epi32(p, live, v);
}

/* The first n lanes of v (compressed to the bottom) at dst, in a range
 * that ends at `end` (dst + n <= end): the whole register where all
 * eight fit, its lanes past n to be overwritten by the range's next
 * store; else only the n. */
static inline GROVE__AVX512_STREAM void grove__store_first_64(uint64_t *dst, const uint64_t *end, __m512i v, int n)
{
    grove__store8_64(dst, end - dst >= 8 ? 0xff : (__mmask8)((1u << n) - 1), v);
}

static inline GROVE__AVX512_STREAM void grove__store_first_32(uint32_t *dst, const uint32_t *end, __m256i v, int n)
{
    grove__store8_32(dst, end - dst >= 8 ? 0xff : (__mmask8)((1u << n) - 1), v);
}

#endif
