/* Morton (Z-order) codes: 63-bit keys interleaving the quantised
 * coordinates, 63 bits in 1-D, 2 x 31 in 2-D, 3 x 21 in 3-D. */
#include "index.h"

/* Spread the low 21 bits of v so bit i moves to bit 3i. */
static uint64_t spread3(uint64_t v)
{
    v &= 0x1fffff;
    v = (v | v << 32) & 0x1f00000000ffffULL;
    v = (v | v << 16) & 0x1f0000ff0000ffULL;
    v = (v | v << 8) & 0x100f00f00f00f00fULL;
    v = (v | v << 4) & 0x10c30c30c30c30c3ULL;
    v = (v | v << 2) & 0x1249249249249249ULL;
    return v;
}

/* Spread the low 31 bits of v so bit i moves to bit 2i. */
static uint64_t spread2(uint64_t v)
{
    v &= 0x7fffffff;
    v = (v | v << 16) & 0x0000ffff0000ffffULL;
    v = (v | v << 8) & 0x00ff00ff00ff00ffULL;
    v = (v | v << 4) & 0x0f0f0f0f0f0f0f0fULL;
    v = (v | v << 2) & 0x3333333333333333ULL;
    v = (v | v << 1) & 0x5555555555555555ULL;
    return v;
}

/* Coordinate -> integer cell in [0, cells - 1]; a flat axis maps to 0. */
static inline uint64_t quantise(double v, double lo, double scale, double top)
{
    double q = (v - lo) * scale;
    if (!(q > 0)) return 0;
    if (q >= top) return (uint64_t)top;
    return (uint64_t)q;
}

void grove__morton_codes(grove_points points, double scale_in, const double *lo, const double *hi, uint64_t *codes,
                         int threads)
{
    size_t d = points.d, n = points.n, stride = grove__points_stride(points);
    unsigned bits = d == 1 ? 63 : d == 2 ? 31 : 21;
    double top = (double)((UINT64_C(1) << bits) - 1), scale[3] = {0, 0, 0};
    for (size_t j = 0; j < d; j++) scale[j] = hi[j] > lo[j] ? top / (hi[j] - lo[j]) : 0;
    /* 2^63 - 1 rounds up to 2^63 in double, which would overflow the cast. */
    if (bits == 63) top = 9223372036854774784.0;
#pragma omp parallel for num_threads(threads) schedule(static)
    for (size_t i = 0; i < n; i++) {
        uint64_t q[3];
        for (size_t j = 0; j < d; j++)
            q[j] = quantise(grove__coord(points, stride, i, j) * scale_in, lo[j], scale[j], top);
        codes[i] = d == 1 ? q[0] : d == 2 ? spread2(q[0]) << 1 | spread2(q[1])
                                          : spread3(q[0]) << 2 | spread3(q[1]) << 1 | spread3(q[2]);
    }
}
