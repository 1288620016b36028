/* AVX2 has no compress: the ball tree's AVX2 loops (partition_avx2.c,
 * select_avx2.c) pack the chosen 64-bit lanes of a vector first by a
 * permutation from a 16-entry table, and store a side's lanes plainly
 * while the side has room for a whole vector. Include inside an x86
 * GCC / clang guard, after <immintrin.h>. */
#ifndef GROVE_BALLTREE_AVX2_PACK_H
#define GROVE_BALLTREE_AVX2_PACK_H

/* Row `set` (4 bits, lane i in bit i): the 32-bit indices that move the
 * 64-bit lanes in the set, in order, to the front (partition_avx2.c). */
extern const int32_t grove__bt_pack64[16][8];

/* v's 64-bit lanes in `set` first. */
__attribute__((target("avx2"))) static inline __m256i grove__bt_pack(__m256i v, unsigned set)
{
    return _mm256_permutevar8x32_epi32(v, _mm256_loadu_si256((const __m256i *)(const void *)grove__bt_pack64[set]));
}

/* Store the first `lanes` of v at p: all four with a plain store while
 * `room` (the lanes left before this side's end) allows (the lanes past
 * the cursor land where the side's later records overwrite them), masked
 * otherwise, so nothing is written past the side's end. */
__attribute__((target("avx2"))) static inline void grove__bt_put64(uint64_t *p, __m256i v, unsigned lanes, size_t room)
{
    if (room >= 4) {
        _mm256_storeu_si256((__m256i *)(void *)p, v);
    } else if (lanes) {
        __m256i first = _mm256_cmpgt_epi64(_mm256_set1_epi64x(lanes), _mm256_setr_epi64x(0, 1, 2, 3));
        _mm256_maskstore_epi64((long long *)(void *)p, first, v);
    }
}

#endif
