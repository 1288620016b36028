/* The particle-particle sum, generic over the floating type. kernel.c
 * includes this file once per type, with
 *   NB_T         float or double
 *   NB_RSQRT(x)  1 / sqrt(x) for x > 0, in NB_T, vectorisable
 *   NB_WHERE(x, v)  v where x > 0, else 0 (x >= 0), branch-free
 *   NB_(name)    the name with a per-type suffix
 * and NB_SIMD_SUM defined.
 *
 * One sink at (xi, yi, zi) against n sources in columns sx, sy, sz, sm:
 *   a += m r / (r^2 + eps^2)^(3/2),  phi -= m / (r^2 + eps^2)^(1/2),
 * r = source - sink. Pairs at r == 0 (the sink and itself, or duplicates)
 * are left out and their mass is summed into s[4] instead, so the sink's
 * own term never enters the sums (with a small softening it would be the
 * largest by far; see coincident_potential). 1/sqrt of 0 (r == 0 without
 * softening) is finite, so it is safe to compute and discard. Sums go to
 * s[0..2] (acceleration), s[3] (potential), s[4]. */
static inline void NB_(p2p_sum)(const NB_T *restrict sx, const NB_T *restrict sy, const NB_T *restrict sz,
                                const NB_T *restrict sm, size_t n, NB_T xi, NB_T yi, NB_T zi, NB_T eps2,
                                NB_T s[5])
{
    NB_T ax = 0, ay = 0, az = 0, ph = 0, at = 0;
    NB_SIMD_SUM(ax, ay, az, ph, at)
    for (size_t j = 0; j < n; j++) {
        NB_T dx = sx[j] - xi, dy = sy[j] - yi, dz = sz[j] - zi;
        NB_T d2 = dx * dx + dy * dy + dz * dz;
        NB_T rinv = NB_WHERE(d2, NB_RSQRT(d2 + eps2));
        NB_T mr = sm[j] * rinv, mr3 = mr * rinv * rinv;
        ax += mr3 * dx;
        ay += mr3 * dy;
        az += mr3 * dz;
        ph -= mr;
        at += sm[j] - NB_WHERE(d2, sm[j]);
    }
    s[0] = ax;
    s[1] = ay;
    s[2] = az;
    s[3] = ph;
    s[4] = at;
}
