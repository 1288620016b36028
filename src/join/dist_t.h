/* Distance kernels of the join and kNN, instantiated per coordinate type:
 * include with T and FN(name) defined. Squared distances are summed in T:
 * over the dimensions in order up to GROVE__JOIN_SOA_MAX dimensions
 * (FN(dist2) of geom_t.h, as the by-dimension join kernel sums them), in
 * eight fixed lanes above (the same bits on every machine either way). */

#include "../index/geom_t.h"

/* Squared distance between two boxes (lo[m], hi[m]) in m dimensions. */
static inline T FN(box_box2)(const T *a, const T *b, size_t m)
{
    T s = 0;
    for (size_t j = 0; j < m; j++) {
        T below = b[j] - a[m + j], above = a[j] - b[m + j];
        T t = below > 0 ? below : above > 0 ? above : 0;
        s += t * t;
    }
    return s;
}

/* The largest squared distance from a point of box b to box a: per
 * dimension the farther of b's faces beyond a's. */
static inline T FN(box_far2)(const T *b, const T *a, size_t m)
{
    T s = 0;
    for (size_t j = 0; j < m; j++) {
        T below = a[j] - b[j], above = b[m + j] - a[m + j];
        T t = below > above ? below : above;
        t = t > 0 ? t : 0;
        s += t * t;
    }
    return s;
}

/* Squared distance between two rows of d > SOA_MAX coordinates, summed in
 * eight fixed lanes (so it vectorises and rounds the same everywhere); stops
 * after any 32-dimension block once the partial sum exceeds eps2, which
 * cannot change the outcome since later terms only add. */
static inline GROVE__ALWAYS_INLINE T FN(dist2_lanes)(const T *a, const T *b, size_t d, T eps2)
{
    T acc[8] = {0, 0, 0, 0, 0, 0, 0, 0}, s = 0;
    size_t j = 0;
    for (; j + 32 <= d; j += 32) {
        for (size_t k = 0; k < 32; k += 8)
            for (size_t l = 0; l < 8; l++) {
                T t = a[j + k + l] - b[j + k + l];
                acc[l] += t * t;
            }
        s = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
        if (s > eps2) return s;
    }
    for (; j < d; j++) {
        T t = a[j] - b[j];
        acc[j & 7] += t * t;
    }
    return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

/* The squared distance as the join computes it for d dimensions; above
 * SOA_MAX it may stop early with any value > bound. */
static inline GROVE__ALWAYS_INLINE T FN(dist2_join)(const T *a, const T *b, size_t d, T bound)
{
    return d <= GROVE__JOIN_SOA_MAX ? FN(dist2)(a, b, d) : FN(dist2_lanes)(a, b, d, bound);
}
