/* Distance kernels of the join and kNN, instantiated per coordinate type
 * and metric: include with T, FN(name) and JOIN_PERIODIC (0 or 1) defined.
 * Squared distances are summed in T: over the dimensions in order up to
 * GROVE__JOIN_SOA_MAX dimensions (FN(dist2) of geom_t.h, as the
 * by-dimension join kernel sums them), in eight fixed lanes above (the
 * same bits on every machine either way). A sum below the smallest normal
 * is redone scaled, as a key (FN(join_tiny2); ../index/dist_key.h).
 *
 * Every kernel takes `per`, the index's periodic box by stored dimension
 * (lengths L[0 .. d), then halves H[0 .. d); see grove_index.period). The
 * plain instance ignores it and is the Euclidean code unchanged; the
 * periodic one takes minimum images: per dimension t = |a - b|, then
 * L - t when t > H (cKDTree's arithmetic), and between a box and a point
 * or box the smaller of the direct gap and the gap round the box. Every
 * coordinate lies in [0, L], so one wrap in either direction is enough;
 * an unbounded dimension has L = H = INFINITY and never wraps. */

#include "../index/geom_t.h"

#if JOIN_PERIODIC
/* The minimum image of a difference in stored dimension j of d. */
static inline GROVE__ALWAYS_INLINE T FN(wrap)(T t, const T *per, size_t d, size_t j)
{
    t = t < 0 ? -t : t;
    return t > per[d + j] ? per[j] - t : t;
}

/* The gap between intervals a and b (lo, hi) with b beyond a by `below`
 * (or a beyond b by `above`), or round the box if that is shorter. */
static inline GROVE__ALWAYS_INLINE T FN(wrap_gap)(T below, T above, T alo, T ahi, T blo, T bhi, T len)
{
    T round_up = alo + len - bhi, round_down = blo + len - ahi;
    return below > 0 ? (below < round_up ? below : round_up) : above > 0 ? (above < round_down ? above : round_down)
                                                                         : 0;
}
#endif

/* Squared distance between two points, summed in order, each difference
 * times scale first (1, or the power of two of FN(join_tiny2)). */
static inline GROVE__ALWAYS_INLINE T FN(point2_by)(const T *a, const T *b, size_t d, const T *per, T scale)
{
#if JOIN_PERIODIC
    T s = 0;
    for (size_t j = 0; j < d; j++) {
        T t = FN(wrap)(a[j] - b[j], per, d, j) * scale;
        s += t * t;
    }
    return s;
#else
    (void)per;
    return FN(dist2_by)(a, b, d, scale);
#endif
}

/* Squared distance from x to the box lo[m], hi[m] (0 inside), in the
 * leading m stored dimensions. */
static inline GROVE__ALWAYS_INLINE T FN(box_point2)(const T *box, const T *x, size_t m, const T *per)
{
#if JOIN_PERIODIC
    T s = 0;
    for (size_t j = 0; j < m; j++) {
        T below = box[j] - x[j], above = x[j] - box[m + j];
        T t = FN(wrap_gap)(below, above, x[j], x[j], box[j], box[m + j], per[j]);
        s += t * t;
    }
    return s;
#else
    (void)per;
    return FN(box_dist2)(box, x, m);
#endif
}

/* Squared distance between two boxes (lo[m], hi[m]) in m dimensions. */
static inline T FN(box_box2)(const T *a, const T *b, size_t m, const T *per)
{
    T s = 0;
    for (size_t j = 0; j < m; j++) {
        T below = b[j] - a[m + j], above = a[j] - b[m + j];
#if JOIN_PERIODIC
        T t = FN(wrap_gap)(below, above, a[j], a[m + j], b[j], b[m + j], per[j]);
#else
        T t = below > 0 ? below : above > 0 ? above : 0;
#endif
        s += t * t;
    }
    (void)per;
    return s;
}

/* The largest squared distance from a point of box b to box a: per
 * dimension the farther of b's faces beyond a's (in a periodic dimension
 * at most half the box, the farthest any minimum image can be; stride:
 * the stored dimensions, where per's halves begin). */
static inline T FN(box_far2)(const T *b, const T *a, size_t m, const T *per, size_t stride)
{
    T s = 0;
    for (size_t j = 0; j < m; j++) {
        T below = a[j] - b[j], above = b[m + j] - a[m + j];
        T t = below > above ? below : above;
        t = t > 0 ? t : 0;
#if JOIN_PERIODIC
        t = t < per[stride + j] ? t : per[stride + j];
#endif
        s += t * t;
    }
    (void)per;
    (void)stride;
    return s;
}

/* The largest squared distance between a point of box a and a point of
 * box b (lo[m], hi[m]): per dimension the wider of hi_a - lo_b and
 * hi_b - lo_a, in a periodic dimension at most half the box (stride as in
 * FN(box_far2)). Over every dimension, a pair of those points summed in
 * the same order (the by-dimension join kernel) never comes out larger:
 * each rounded difference, wrap, square and partial sum is monotone in
 * its operands. */
static inline T FN(box_span2)(const T *a, const T *b, size_t m, const T *per, size_t stride)
{
    T s = 0;
    for (size_t j = 0; j < m; j++) {
        T up = a[m + j] - b[j], down = b[m + j] - a[j];
        T t = up > down ? up : down;
#if JOIN_PERIODIC
        t = t < per[stride + j] ? t : per[stride + j];
#endif
        s += t * t;
    }
    (void)per;
    (void)stride;
    return s;
}

/* Squared distance between two rows of d > SOA_MAX coordinates, summed in
 * eight fixed lanes (so it vectorises and rounds the same everywhere); stops
 * after any 32-dimension block once the partial sum exceeds eps2, which
 * cannot change the outcome since later terms only add. Differences times
 * scale as in FN(point2_by). */
static inline GROVE__ALWAYS_INLINE T FN(dist2_lanes_by)(const T *a, const T *b, size_t d, T eps2, const T *per,
                                                        T scale)
{
    T acc[8] = {0, 0, 0, 0, 0, 0, 0, 0}, s = 0;
    size_t j = 0;
#if JOIN_PERIODIC
#define JOIN_DIFF(j) (FN(wrap)(a[j] - b[j], per, d, j) * scale)
#else
#define JOIN_DIFF(j) ((a[j] - b[j]) * scale)
#endif
    (void)per;
    for (; j + 32 <= d; j += 32) {
        for (size_t k = 0; k < 32; k += 8)
            for (size_t l = 0; l < 8; l++) {
                T t = JOIN_DIFF(j + k + l);
                acc[l] += t * t;
            }
        s = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
        if (s > eps2) return s;
    }
    for (; j < d; j++) {
        T t = JOIN_DIFF(j);
        acc[j & 7] += t * t;
    }
#undef JOIN_DIFF
    return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

static inline GROVE__ALWAYS_INLINE T FN(dist2_lanes)(const T *a, const T *b, size_t d, T eps2, const T *per)
{
    return FN(dist2_lanes_by)(a, b, d, eps2, per, 1);
}

/* The squared distance as the join computes it for d dimensions; above
 * SOA_MAX it may stop early with any value > bound. */
static inline GROVE__ALWAYS_INLINE T FN(dist2_join)(const T *a, const T *b, size_t d, T bound, const T *per)
{
    return d <= GROVE__JOIN_SOA_MAX ? FN(point2_by)(a, b, d, per, 1) : FN(dist2_lanes)(a, b, d, bound, per);
}

/* The key (dist_key.h) of a pair whose squared distance as the join sums
 * it (FN(dist2_join), the by-dimension kernels alike) came out below the
 * smallest normal: the same sum of the differences (minimum images)
 * scaled by 2^k. */
static __attribute__((unused, noinline)) T FN(join_tiny2)(const T *a, const T *b, size_t d, const T *per)
{
    T m = 0;
    for (size_t j = 0; j < d; j++) {
#if JOIN_PERIODIC
        T t = FN(wrap)(a[j] - b[j], per, d, j);
#else
        T t = fabs(a[j] - b[j]);
#endif
        m = t > m ? t : m;
    }
    if (m == 0) return -(T)INFINITY;
    int k = FN(tiny_shift)(m);
    T scale = (T)ldexp(1, k);
    T s = d <= GROVE__JOIN_SOA_MAX ? FN(point2_by)(a, b, d, per, scale)
                                   : FN(dist2_lanes_by)(a, b, d, (T)INFINITY, per, scale);
    return FN(key_of)(s, k);
}

/* The key of the squared distance as the join computes it (a value > bound
 * when FN(dist2_join) stops early). */
static inline GROVE__ALWAYS_INLINE T FN(key_join)(const T *a, const T *b, size_t d, T bound, const T *per)
{
    T s = FN(dist2_join)(a, b, d, bound, per);
    return s < GROVE__KEY_MIN(T) ? FN(join_tiny2)(a, b, d, per) : s;
}
