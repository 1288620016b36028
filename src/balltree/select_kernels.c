/* The selecting builder's two passes over a node (build_select.h): the
 * split that moves every array and gathers the children's extents, and
 * the window that collects the candidates for the median. AVX-512 only:
 * portable loops measured slower than the presorted builder (180 against
 * 158 ms at 2^20 points), so without AVX-512 that builder is used instead.
 * A test checks both passes against their definitions. */
#include "balltree_internal.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define AVX512 __attribute__((target("avx512f,avx512vl")))

/* Lanes of `live` whose (key, id) is below (pk, pid). */
static inline AVX512 __mmask8 below8(__m512i key, __m256i id, __m512i pk, __m256i pid, __mmask8 live)
{
    return (__mmask8)(_mm512_mask_cmplt_epu64_mask(live, key, pk) |
                      (_mm512_mask_cmpeq_epu64_mask(live, key, pk) & _mm256_mask_cmplt_epu32_mask(live, id, pid)));
}

/* Eight points at a time: each side compressed into a register and stored
 * through a mask (nothing written past its end), extents as masked
 * min / max. `d` is a constant in the common cases (split_avx512). */
static inline AVX512 __attribute__((always_inline)) void split_avx512_d(
    const uint64_t *src, const uint32_t *sid, uint64_t *dst, uint32_t *did, size_t stride, size_t d, size_t k,
    size_t h, size_t s, grove__bs_pair pivot, grove__bs_extent *left, grove__bs_extent *right)
{
    __m512i llo[GROVE__BS_MAX_DIMS], lhi[GROVE__BS_MAX_DIMS], rlo[GROVE__BS_MAX_DIMS], rhi[GROVE__BS_MAX_DIMS];
    for (size_t j = 0; j < d; j++) {
        llo[j] = rlo[j] = _mm512_set1_epi64(-1);
        lhi[j] = rhi[j] = _mm512_setzero_si512();
    }
    const __m512i pk = _mm512_set1_epi64((long long)pivot.key);
    const __m256i pid = _mm256_set1_epi32((int)pivot.id);
    const uint64_t *ks = src + s * stride;
    size_t l = 0, r = h;
    for (size_t i = 0; i < k; i += 8) {
        __mmask8 live = grove__bt_lanes8(k - i);
        __m512i key = _mm512_maskz_loadu_epi64(live, ks + i);
        __m256i id = _mm256_maskz_loadu_epi32(live, sid + i);
        __mmask8 go_left = below8(key, id, pk, pid, live), go_right = live & (__mmask8)~go_left;
        int nl = __builtin_popcount(go_left), nr = __builtin_popcount(go_right);
        __mmask8 keep_l = (__mmask8)((1u << nl) - 1), keep_r = (__mmask8)((1u << nr) - 1);
        for (size_t j = 0; j < d; j++) {
            __m512i v = j == s ? key : _mm512_maskz_loadu_epi64(live, src + j * stride + i);
            _mm512_mask_storeu_epi64(dst + j * stride + l, keep_l, _mm512_maskz_compress_epi64(go_left, v));
            _mm512_mask_storeu_epi64(dst + j * stride + r, keep_r, _mm512_maskz_compress_epi64(go_right, v));
            llo[j] = _mm512_mask_min_epu64(llo[j], go_left, llo[j], v);
            lhi[j] = _mm512_mask_max_epu64(lhi[j], go_left, lhi[j], v);
            rlo[j] = _mm512_mask_min_epu64(rlo[j], go_right, rlo[j], v);
            rhi[j] = _mm512_mask_max_epu64(rhi[j], go_right, rhi[j], v);
        }
        _mm256_mask_storeu_epi32(did + l, keep_l, _mm256_maskz_compress_epi32(go_left, id));
        _mm256_mask_storeu_epi32(did + r, keep_r, _mm256_maskz_compress_epi32(go_right, id));
        l += (size_t)nl;
        r += (size_t)nr;
    }
    for (size_t j = 0; j < d; j++) {
        left->lo[j] = _mm512_reduce_min_epu64(llo[j]);
        left->hi[j] = _mm512_reduce_max_epu64(lhi[j]);
        right->lo[j] = _mm512_reduce_min_epu64(rlo[j]);
        right->hi[j] = _mm512_reduce_max_epu64(rhi[j]);
    }
}

static AVX512 void split_avx512(const uint64_t *src, const uint32_t *sid, uint64_t *dst, uint32_t *did,
                                size_t stride, size_t d, size_t k, size_t h, size_t s, grove__bs_pair pivot,
                                grove__bs_extent *left, grove__bs_extent *right)
{
    switch (d) {
    case 2: split_avx512_d(src, sid, dst, did, stride, 2, k, h, s, pivot, left, right); break;
    case 3: split_avx512_d(src, sid, dst, did, stride, 3, k, h, s, pivot, left, right); break;
    case 4: split_avx512_d(src, sid, dst, did, stride, 4, k, h, s, pivot, left, right); break;
    default: split_avx512_d(src, sid, dst, did, stride, d, k, h, s, pivot, left, right);
    }
}

static AVX512 size_t window_avx512(const uint64_t *key, const uint32_t *id, size_t k, grove__bs_pair lo,
                                   grove__bs_pair hi, uint64_t *out_key, uint32_t *out_id, size_t *below)
{
    const __m512i lk = _mm512_set1_epi64((long long)lo.key), hk = _mm512_set1_epi64((long long)hi.key);
    const __m256i lid = _mm256_set1_epi32((int)lo.id), hid = _mm256_set1_epi32((int)hi.id);
    size_t c = 0, b = 0;
    for (size_t i = 0; i < k; i += 8) {
        __mmask8 live = grove__bt_lanes8(k - i);
        __m512i v = _mm512_maskz_loadu_epi64(live, key + i);
        __m256i w = _mm256_maskz_loadu_epi32(live, id + i);
        __mmask8 under = below8(v, w, lk, lid, live);
        __mmask8 over = below8(hk, hid, v, w, live); /* hi below the point */
        __mmask8 inside = live & (__mmask8) ~(under | over);
        int n = __builtin_popcount(inside);
        __mmask8 keep = (__mmask8)((1u << n) - 1);
        _mm512_mask_storeu_epi64(out_key + c, keep, _mm512_maskz_compress_epi64(inside, v));
        _mm256_mask_storeu_epi32(out_id + c, keep, _mm256_maskz_compress_epi32(inside, w));
        c += (size_t)n;
        b += (size_t)__builtin_popcount(under);
    }
    *below = b;
    return c;
}

bool grove__bs_kernels_avx512(grove__bs_kernels *k)
{
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx512f") || !__builtin_cpu_supports("avx512vl")) return false;
    k->split = split_avx512;
    k->window = window_avx512;
    return true;
}
#else
bool grove__bs_kernels_avx512(grove__bs_kernels *k)
{
    (void)k;
    return false;
}
#endif
