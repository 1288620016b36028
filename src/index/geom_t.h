/* Distance kernels, instantiated per coordinate type: include with T (float
 * or double) and FN(name) defined. Sums run over the axes in order, in T,
 * so every caller (and the tests' brute force) gets the same bits.
 * Searches order keys (dist_key.h): FN(key2) is FN(dist2) made exact
 * where the sum underflows. */

#include "dist_key.h"

/* Squared distance between two points of d coordinates, each difference
 * times scale first (1, or the power of two of FN(tiny_key2)). */
static inline GROVE__ALWAYS_INLINE T FN(dist2_by)(const T *a, const T *b, size_t d, T scale)
{
    T s = 0;
    for (size_t j = 0; j < d; j++) {
        T t = (a[j] - b[j]) * scale;
        s += t * t;
    }
    return s;
}

static inline GROVE__ALWAYS_INLINE T FN(dist2)(const T *a, const T *b, size_t d)
{
    return FN(dist2_by)(a, b, d, 1);
}

/* Squared distance from x to the box lo[d], hi[d] (0 inside). */
static inline GROVE__ALWAYS_INLINE T FN(box_dist2)(const T *box, const T *x, size_t d)
{
    T s = 0;
    for (size_t j = 0; j < d; j++) {
        T below = box[j] - x[j], above = x[j] - box[d + j];
        T t = below > 0 ? below : above > 0 ? above : 0;
        s += t * t;
    }
    return s;
}

/* The key (dist_key.h) of s 2^-2k, s a squared sum of differences scaled
 * by 2^k. */
static inline T FN(key_of)(T s, int k)
{
    return (T)grove__key_pack(s, -2L * k, GROVE__KEY_MIN_EXP(T), GROVE__KEY_MAX_EXP(T));
}

/* The power of two 2^k that brings the largest difference m (> 0) of a
 * pair to [2^-DIG, 2^(1 - DIG)): the scaled squares and their sum are
 * normal unless they are too small to change the sum, no scaled
 * difference overflows, and 2^k is a number of the type. */
static inline int FN(tiny_shift)(T m)
{
    return -GROVE__KEY_DIG(T) - ilogb(m);
}

/* A key as a double (dist_key.h: float keys become their exact values). */
static inline GROVE__ALWAYS_INLINE double FN(key_wide)(T key)
{
    if (sizeof(T) == sizeof(double) || key >= 0 || key == -(T)INFINITY) return (double)key;
    long e;
    double f = grove__key_unpack(key, GROVE__KEY_MIN_EXP(T), GROVE__KEY_MAX_EXP(T), &e);
    return ldexp(f, (int)e);
}

/* The distance of a key. */
static inline double FN(key_dist)(T key)
{
    return grove__key_dist(FN(key_wide)(key));
}

/* The prune bound for box lower bounds (FN(box_dist2) as computed, sums
 * that underflowed included) when the search wants keys up to `key`: the
 * key itself, or below the smallest normal the largest subnormal, so
 * every box whose bound underflowed is searched and no other is. */
static inline GROVE__ALWAYS_INLINE double FN(prune_bound)(double key)
{
    return key < (double)GROVE__KEY_MIN(T) ? (double)GROVE__KEY_BELOW_MIN(T) : key;
}

/* The key of a pair whose squared sum came out below the smallest normal:
 * the same sum of the differences scaled by 2^k. */
static __attribute__((unused, noinline)) T FN(tiny_key2)(const T *a, const T *b, size_t d)
{
    T m = 0;
    for (size_t j = 0; j < d; j++) {
        T t = fabs(a[j] - b[j]);
        m = t > m ? t : m;
    }
    if (m == 0) return -(T)INFINITY;
    int k = FN(tiny_shift)(m);
    return FN(key_of)(FN(dist2_by)(a, b, d, (T)ldexp(1, k)), k);
}

/* The key of the squared distance between two points (dist_key.h). */
static inline GROVE__ALWAYS_INLINE T FN(key2)(const T *a, const T *b, size_t d)
{
    T s = FN(dist2)(a, b, d);
    return s < GROVE__KEY_MIN(T) ? FN(tiny_key2)(a, b, d) : s;
}
