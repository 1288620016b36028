/* AVX2 has no compress: its loops (partition.c, select_avx2.c) pack a
 * vector's chosen 64-bit lanes by a permutation from a 16-entry table.
 * Include after <immintrin.h>, inside an x86 guard. */
#ifndef GROVE_BALLTREE_AVX2_PACK_H
#define GROVE_BALLTREE_AVX2_PACK_H

/* Row `set` (lane i in bit i): the 32-bit indices moving those lanes to the front. */
extern const int32_t grove__bt_pack64[16][8];

/* v's 64-bit lanes in `set` first. */
__attribute__((target("avx2"))) static inline __m256i grove__bt_pack(__m256i v, unsigned set)
{
    return _mm256_permutevar8x32_epi32(v, _mm256_loadu_si256((const __m256i *)(const void *)grove__bt_pack64[set]));
}

/* The first `lanes` of v at p: a plain store while `room` (lanes left to
 * the side's end) allows, the side's later records overwriting the rest;
 * masked otherwise, so nothing lands past the end. */
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
