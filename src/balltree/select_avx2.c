/* The selecting builder's two passes (select_avx512.c says what) in AVX2,
 * four points at a time: keys compared with the top bit flipped, lanes
 * packed by a table permutation, extents kept flipped. */
#include "balltree_internal.h"

#if GROVE__HAVE_TARGETS
#include <immintrin.h>
#define AVX2 __attribute__((target("avx2,popcnt")))
#include "avx2_pack.h"

typedef struct quad {
    __m256i key, flipped; /* the split dimension's keys, and with the top bit flipped */
    __m128i id;
    __m256i lanes;        /* all ones in the live lanes */
    unsigned live, n;     /* live lanes as bits, and how many */
} quad;

static inline AVX2 __m256i flip64(__m256i v) { return _mm256_xor_si256(v, _mm256_set1_epi64x(INT64_MIN)); }

/* Points i.. (up to four) of key and id. */
static inline AVX2 quad load_quad(const uint64_t *key, const uint32_t *id, size_t i, size_t k)
{
    quad q;
    q.n = k - i < 4 ? (unsigned)(k - i) : 4;
    q.live = (1u << q.n) - 1;
    q.lanes = _mm256_cmpgt_epi64(_mm256_set1_epi64x(q.n), _mm256_setr_epi64x(0, 1, 2, 3));
    if (q.n == 4) { /* plain loads but at the end */
        q.key = _mm256_loadu_si256((const __m256i *)(const void *)(key + i));
        q.id = _mm_loadu_si128((const __m128i *)(const void *)(id + i));
    } else {
        q.key = _mm256_maskload_epi64((const long long *)(const void *)(key + i), q.lanes);
        q.id = _mm_maskload_epi32((const int *)(const void *)(id + i),
                                  _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(
                                      q.lanes, _mm256_setr_epi32(0, 2, 4, 6, 0, 0, 0, 0))));
    }
    q.flipped = flip64(q.key);
    return q;
}

/* Lanes whose (a, a_id) is below (b, b_id), keys flipped. */
static inline AVX2 unsigned below4(__m256i a, __m128i a_id, __m256i b, __m128i b_id)
{
    const __m128i sign = _mm_set1_epi32(INT32_MIN);
    __m256i id_below = _mm256_cvtepi32_epi64(_mm_cmpgt_epi32(_mm_xor_si128(b_id, sign), _mm_xor_si128(a_id, sign)));
    __m256i below = _mm256_or_si256(_mm256_cmpgt_epi64(b, a), _mm256_and_si256(_mm256_cmpeq_epi64(a, b), id_below));
    return (unsigned)_mm256_movemask_pd(_mm256_castsi256_pd(below));
}

/* The 32-bit version of grove__bt_put64. */
static inline AVX2 void put32(uint32_t *p, __m128i v, unsigned lanes, size_t room)
{
    if (room >= 4) {
        _mm_storeu_si128((__m128i *)(void *)p, v);
    } else if (lanes) {
        __m128i first = _mm_cmpgt_epi32(_mm_set1_epi32((int)lanes), _mm_setr_epi32(0, 1, 2, 3));
        _mm_maskstore_epi32((int *)(void *)p, first, v);
    }
}

/* Ids packed as keys: lanes 0, 2, 4, 6 of the row, halved. */
static inline AVX2 __m128i pack_ids(__m128i v, unsigned set)
{
    __m256i row = _mm256_loadu_si256((const __m256i *)(const void *)grove__bt_pack64[set]);
    __m256i idx = _mm256_srli_epi32(_mm256_permutevar8x32_epi32(row, _mm256_setr_epi32(0, 2, 4, 6, 0, 0, 0, 0)), 1);
    return _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(_mm256_castsi128_si256(v), idx));
}

/* lo / hi (flipped) take the flipped keys v of the lanes in `side`. */
static inline AVX2 void extend(__m256i *lo, __m256i *hi, __m256i v, __m256i side)
{
    const __m256i top = _mm256_set1_epi64x(INT64_MAX), bottom = _mm256_set1_epi64x(INT64_MIN);
    __m256i for_lo = _mm256_blendv_epi8(top, v, side), for_hi = _mm256_blendv_epi8(bottom, v, side);
    *lo = _mm256_blendv_epi8(*lo, for_lo, _mm256_cmpgt_epi64(*lo, for_lo));
    *hi = _mm256_blendv_epi8(*hi, for_hi, _mm256_cmpgt_epi64(for_hi, *hi));
}

static inline AVX2 uint64_t reduce(__m256i v, bool lowest)
{
    uint64_t x[4];
    _mm256_storeu_si256((__m256i *)(void *)x, flip64(v));
    uint64_t r = x[0];
    for (int i = 1; i < 4; i++) r = lowest ? (x[i] < r ? x[i] : r) : (x[i] > r ? x[i] : r);
    return r;
}

static inline AVX2 __attribute__((always_inline)) void split_avx2_d(
    const uint64_t *src, const uint32_t *sid, uint64_t *dst, uint32_t *did, size_t stride, size_t d, size_t k,
    grove__bs_sides to, size_t s, grove__bs_pair pivot, grove__bs_extent *left, grove__bs_extent *right)
{
    __m256i llo[GROVE__BS_MAX_DIMS], lhi[GROVE__BS_MAX_DIMS], rlo[GROVE__BS_MAX_DIMS], rhi[GROVE__BS_MAX_DIMS];
    for (size_t j = 0; j < d; j++) {
        llo[j] = rlo[j] = _mm256_set1_epi64x(INT64_MAX); /* flipped: the largest key, and the smallest */
        lhi[j] = rhi[j] = _mm256_set1_epi64x(INT64_MIN);
    }
    const __m256i pk = flip64(_mm256_set1_epi64x((long long)pivot.key));
    const __m128i pid = _mm_set1_epi32((int)pivot.id);
    size_t l = to.left, r = to.right;
    for (size_t i = 0; i < k; i += 4) {
        quad q = load_quad(src + s * stride, sid, i, k);
        unsigned go_left = below4(q.flipped, q.id, pk, pid) & q.live, go_right = q.live & ~go_left;
        unsigned nl = (unsigned)__builtin_popcount(go_left), nr = q.n - nl;
        __m256i is_left = _mm256_cmpgt_epi64(_mm256_and_si256(_mm256_set1_epi64x(go_left), _mm256_setr_epi64x(1, 2, 4, 8)),
                                             _mm256_setzero_si256());
        __m256i is_right = _mm256_andnot_si256(is_left, q.lanes);
        for (size_t j = 0; j < d; j++) {
            const uint64_t *at = src + j * stride + i;
            __m256i v = j == s     ? q.key
                        : q.n == 4 ? _mm256_loadu_si256((const __m256i *)(const void *)at)
                                   : _mm256_maskload_epi64((const long long *)(const void *)at, q.lanes);
            grove__bt_put64(dst + j * stride + l, grove__bt_pack(v, go_left), nl, to.left_end - l);
            grove__bt_put64(dst + j * stride + r, grove__bt_pack(v, go_right), nr, to.right_end - r);
            __m256i f = j == s ? q.flipped : flip64(v);
            extend(&llo[j], &lhi[j], f, is_left);
            extend(&rlo[j], &rhi[j], f, is_right);
        }
        put32(did + l, pack_ids(q.id, go_left), nl, to.left_end - l);
        put32(did + r, pack_ids(q.id, go_right), nr, to.right_end - r);
        l += nl;
        r += nr;
    }
    for (size_t j = 0; j < d; j++) {
        left->lo[j] = reduce(llo[j], true);
        left->hi[j] = reduce(lhi[j], false);
        right->lo[j] = reduce(rlo[j], true);
        right->hi[j] = reduce(rhi[j], false);
    }
}

static AVX2 void split_avx2(const uint64_t *src, const uint32_t *sid, uint64_t *dst, uint32_t *did, size_t stride,
                            size_t d, size_t k, grove__bs_sides to, size_t s, grove__bs_pair pivot,
                            grove__bs_extent *left, grove__bs_extent *right)
{
    switch (d) {
    case 2: split_avx2_d(src, sid, dst, did, stride, 2, k, to, s, pivot, left, right); break;
    case 3: split_avx2_d(src, sid, dst, did, stride, 3, k, to, s, pivot, left, right); break;
    case 4: split_avx2_d(src, sid, dst, did, stride, 4, k, to, s, pivot, left, right); break;
    default: split_avx2_d(src, sid, dst, did, stride, d, k, to, s, pivot, left, right);
    }
}

static AVX2 size_t window_avx2(const uint64_t *key, const uint32_t *id, size_t k, grove__bs_pair lo,
                               grove__bs_pair hi, uint64_t *out_key, uint32_t *out_id, size_t *below)
{
    const __m256i lk = flip64(_mm256_set1_epi64x((long long)lo.key)), hk = flip64(_mm256_set1_epi64x((long long)hi.key));
    const __m128i lid = _mm_set1_epi32((int)lo.id), hid = _mm_set1_epi32((int)hi.id);
    size_t c = 0, b = 0;
    for (size_t i = 0; i < k; i += 4) {
        quad q = load_quad(key, id, i, k);
        unsigned under = below4(q.flipped, q.id, lk, lid) & q.live;
        unsigned over = below4(hk, hid, q.flipped, q.id) & q.live; /* hi below the point */
        unsigned inside = q.live & ~(under | over), n = (unsigned)__builtin_popcount(inside);
        /* the outputs hold at least k points (window_fn's contract) */
        grove__bt_put64(out_key + c, grove__bt_pack(q.key, inside), n, k - c);
        put32(out_id + c, pack_ids(q.id, inside), n, k - c);
        c += n;
        b += (size_t)__builtin_popcount(under);
    }
    *below = b;
    return c;
}

bool grove__bs_kernels_avx2(grove__bs_kernels *k)
{
    grove__cpu_features cpu = grove__cpu();
    if (!cpu.avx2 || !cpu.popcnt) return false;
    k->split = split_avx2;
    k->window = window_avx2;
    return true;
}
#else
bool grove__bs_kernels_avx2(grove__bs_kernels *k) { return (void)k, false; }
#endif
