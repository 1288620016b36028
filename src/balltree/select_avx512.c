/* The selecting builder's two passes over a node in AVX-512 (AVX2 in
 * select_avx2.c): the split that moves every array and gathers extents,
 * and the window of the median's candidates. Portable loops measured
 * slower than the presorted builder, which takes over without them. */
#include "balltree_internal.h"

#if GROVE__HAVE_TARGETS
#include <immintrin.h>
/* Masked loads and stores stream at half speed: plain where all eight lanes live. */
#define STREAM __attribute__((target("avx512f,avx512vl"), always_inline))

static inline STREAM __m512i load8_64(const void *p, __mmask8 live)
{
    return live == 0xff ? _mm512_loadu_si512(p) : _mm512_maskz_loadu_epi64(live, p);
}

static inline STREAM __m256i load8_32(const void *p, __mmask8 live)
{
    return live == 0xff ? _mm256_loadu_si256((const __m256i *)p) : _mm256_maskz_loadu_epi32(live, p);
}

/* The first n lanes of v at dst: the whole register where eight fit before `end`. */
static inline STREAM void store_first_64(uint64_t *dst, const uint64_t *end, __m512i v, int n)
{
    if (end - dst >= 8) _mm512_storeu_si512(dst, v);
    else _mm512_mask_storeu_epi64(dst, (__mmask8)((1u << n) - 1), v);
}

static inline STREAM void store_first_32(uint32_t *dst, const uint32_t *end, __m256i v, int n)
{
    if (end - dst >= 8) _mm256_storeu_si256((__m256i *)(void *)dst, v);
    else _mm256_mask_storeu_epi32(dst, (__mmask8)((1u << n) - 1), v);
}

#define AVX512 __attribute__((target("avx512f,avx512vl")))

/* Lanes of `live` whose (key, id) is below (pk, pid). */
static inline AVX512 __mmask8 below8(__m512i key, __m256i id, __m512i pk, __m256i pid, __mmask8 live)
{
    return (__mmask8)(_mm512_mask_cmplt_epu64_mask(live, key, pk) |
                      (_mm512_mask_cmpeq_epu64_mask(live, key, pk) & _mm256_mask_cmplt_epu32_mask(live, id, pid)));
}

/* The split's running state: both sides' next positions and extents. */
typedef struct split8 {
    size_t l, r;
    __m512i llo[GROVE__BS_MAX_DIMS], lhi[GROVE__BS_MAX_DIMS], rlo[GROVE__BS_MAX_DIMS], rhi[GROVE__BS_MAX_DIMS];
} split8;

/* Points i..i+7 (the lanes of `live`) to their sides. */
static inline AVX512 __attribute__((always_inline)) void split_step(
    split8 *st, const uint64_t *src, const uint32_t *sid, uint64_t *dst, uint32_t *did, size_t stride, size_t d,
    grove__bs_sides to, size_t s, __m512i pk, __m256i pid, size_t i, __mmask8 live)
{
    __m512i key = load8_64(src + s * stride + i, live);
    __m256i id = load8_32(sid + i, live);
    __mmask8 go_left = below8(key, id, pk, pid, live), go_right = live & (__mmask8)~go_left;
    int nl = __builtin_popcount(go_left), nr = __builtin_popcount(go_right);
    size_t l = st->l, r = st->r;
    for (size_t j = 0; j < d; j++) {
        __m512i v = j == s ? key : load8_64(src + j * stride + i, live);
        uint64_t *out = dst + j * stride;
        store_first_64(out + l, out + to.left_end, _mm512_maskz_compress_epi64(go_left, v), nl);
        store_first_64(out + r, out + to.right_end, _mm512_maskz_compress_epi64(go_right, v), nr);
        st->llo[j] = _mm512_mask_min_epu64(st->llo[j], go_left, st->llo[j], v);
        st->lhi[j] = _mm512_mask_max_epu64(st->lhi[j], go_left, st->lhi[j], v);
        st->rlo[j] = _mm512_mask_min_epu64(st->rlo[j], go_right, st->rlo[j], v);
        st->rhi[j] = _mm512_mask_max_epu64(st->rhi[j], go_right, st->rhi[j], v);
    }
    store_first_32(did + l, did + to.left_end, _mm256_maskz_compress_epi32(go_left, id), nl);
    store_first_32(did + r, did + to.right_end, _mm256_maskz_compress_epi32(go_right, id), nr);
    st->l = l + (size_t)nl;
    st->r = r + (size_t)nr;
}

/* Eight points a step, sides compressed, extents by masked min / max. */
static inline AVX512 __attribute__((always_inline)) void split_avx512_d(
    const uint64_t *src, const uint32_t *sid, uint64_t *dst, uint32_t *did, size_t stride, size_t d, size_t k,
    grove__bs_sides to, size_t s, grove__bs_pair pivot, grove__bs_extent *left, grove__bs_extent *right)
{
    split8 st = {.l = to.left, .r = to.right};
    for (size_t j = 0; j < d; j++) {
        st.llo[j] = st.rlo[j] = _mm512_set1_epi64(-1);
        st.lhi[j] = st.rhi[j] = _mm512_setzero_si512();
    }
    const __m512i pk = _mm512_set1_epi64((long long)pivot.key);
    const __m256i pid = _mm256_set1_epi32((int)pivot.id);
    size_t i = 0;
    for (; i + 8 <= k; i += 8) split_step(&st, src, sid, dst, did, stride, d, to, s, pk, pid, i, 0xff);
    if (i < k) split_step(&st, src, sid, dst, did, stride, d, to, s, pk, pid, i, grove__bt_lanes8(k - i));
    for (size_t j = 0; j < d; j++) {
        left->lo[j] = _mm512_reduce_min_epu64(st.llo[j]);
        left->hi[j] = _mm512_reduce_max_epu64(st.lhi[j]);
        right->lo[j] = _mm512_reduce_min_epu64(st.rlo[j]);
        right->hi[j] = _mm512_reduce_max_epu64(st.rhi[j]);
    }
}

static AVX512 void split_avx512(const uint64_t *src, const uint32_t *sid, uint64_t *dst, uint32_t *did,
                                size_t stride, size_t d, size_t k, grove__bs_sides to, size_t s, grove__bs_pair pivot,
                                grove__bs_extent *left, grove__bs_extent *right)
{
    switch (d) {
    case 2: split_avx512_d(src, sid, dst, did, stride, 2, k, to, s, pivot, left, right); break;
    case 3: split_avx512_d(src, sid, dst, did, stride, 3, k, to, s, pivot, left, right); break;
    case 4: split_avx512_d(src, sid, dst, did, stride, 4, k, to, s, pivot, left, right); break;
    default: split_avx512_d(src, sid, dst, did, stride, d, k, to, s, pivot, left, right);
    }
}

/* Points i..i+7: those in the window to out_key / out_id, and the count below. */
static inline AVX512 __attribute__((always_inline)) void window_step(
    const uint64_t *key, const uint32_t *id, size_t k, __m512i lk, __m256i lid, __m512i hk, __m256i hid,
    uint64_t *out_key, uint32_t *out_id, size_t *c, size_t *b, size_t i, __mmask8 live)
{
    __m512i v = load8_64(key + i, live);
    __m256i w = load8_32(id + i, live);
    __mmask8 under = below8(v, w, lk, lid, live);
    __mmask8 over = below8(hk, hid, v, w, live); /* hi below the point */
    __mmask8 inside = live & (__mmask8) ~(under | over);
    int n = __builtin_popcount(inside);
    store_first_64(out_key + *c, out_key + k, _mm512_maskz_compress_epi64(inside, v), n);
    store_first_32(out_id + *c, out_id + k, _mm256_maskz_compress_epi32(inside, w), n);
    *c += (size_t)n;
    *b += (size_t)__builtin_popcount(under);
}

static AVX512 size_t window_avx512(const uint64_t *key, const uint32_t *id, size_t k, grove__bs_pair lo,
                                   grove__bs_pair hi, uint64_t *out_key, uint32_t *out_id, size_t *below)
{
    const __m512i lk = _mm512_set1_epi64((long long)lo.key), hk = _mm512_set1_epi64((long long)hi.key);
    const __m256i lid = _mm256_set1_epi32((int)lo.id), hid = _mm256_set1_epi32((int)hi.id);
    size_t c = 0, b = 0, i = 0;
    for (; i + 8 <= k; i += 8) window_step(key, id, k, lk, lid, hk, hid, out_key, out_id, &c, &b, i, 0xff);
    if (i < k) window_step(key, id, k, lk, lid, hk, hid, out_key, out_id, &c, &b, i, grove__bt_lanes8(k - i));
    *below = b;
    return c;
}

bool grove__bs_kernels_avx512(grove__bs_kernels *k)
{
    grove__cpu_features cpu = grove__cpu();
    if (!cpu.avx512f || !cpu.avx512vl) return false;
    k->split = split_avx512;
    k->window = window_avx512;
    return true;
}
#else
bool grove__bs_kernels_avx512(grove__bs_kernels *k) { return (void)k, false; }
#endif
