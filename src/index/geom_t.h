/* Distance kernels, instantiated per coordinate type: include with T (float
 * or double) and FN(name) defined. Sums run over the axes in order, in T,
 * so every caller (and the tests' brute force) gets the same bits. */

/* Squared distance between two points of d coordinates. */
static inline GROVE__ALWAYS_INLINE T FN(dist2)(const T *a, const T *b, size_t d)
{
    T s = 0;
    for (size_t j = 0; j < d; j++) {
        T t = a[j] - b[j];
        s += t * t;
    }
    return s;
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
