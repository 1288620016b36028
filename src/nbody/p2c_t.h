/* The particle-cell sum, generic over the floating type. kernel.c
 * includes this file once per type, with the macros of p2p_t.h (NB_T,
 * NB_RSQRT, NB_) and NB_SIMD_SUM defined: float for the portable list
 * kernel, double for the groups whose lists need double's range
 * (grove__nb_evaluate_wide).
 *
 * One sink at (xi, yi, zi) against n cells in the list layout of
 * grove__nb_lists (columns cap apart: x, y, z relative to the group's
 * centre, mass, P = 3/2 Q, t = 1/2 tr(Q)), r = sink - centre of mass:
 *   phi = -M/r - 3/2 (r.Q.r)/r^5 + 1/2 tr(Q)/r^3
 *   a   = r (-M/r^3 + 3/2 tr(Q)/r^5 - 15/2 (r.Q.r)/r^7) + 3 Q.r / r^5
 * with r^2 softened to r^2 + eps^2 as Bonsai does. Accepted cells are
 * never at r = 0 (the opening criterion keeps them away from the group).
 * With y = 1/r, q = P.r and A = (q.r) y^2 - t:
 *   phi = -y (M + y^2 A)
 *   a   = -y^3 (M + y^2 (5 A + 2 t)) r + 2 y^5 q
 * (fewer operations than the formulas above, same terms). Sums go to
 * s[0..2] (acceleration) and s[3] (potential). */
static inline void NB_(p2c_sum)(const NB_T *restrict c, size_t cap, size_t n, NB_T xi, NB_T yi, NB_T zi, NB_T eps2,
                                NB_T s[4])
{
    const NB_T *restrict cx = c, *restrict cy = c + cap, *restrict cz = c + 2 * cap, *restrict cmass = c + 3 * cap;
    const NB_T *restrict p11 = c + 4 * cap, *restrict p22 = c + 5 * cap, *restrict p33 = c + 6 * cap;
    const NB_T *restrict p12 = c + 7 * cap, *restrict p13 = c + 8 * cap, *restrict p23 = c + 9 * cap;
    const NB_T *restrict t = c + 10 * cap;
    NB_T ax = 0, ay = 0, az = 0, ph = 0;
    NB_SIMD_SUM(ax, ay, az, ph)
    for (size_t j = 0; j < n; j++) {
        NB_T dx = xi - cx[j], dy = yi - cy[j], dz = zi - cz[j];
        NB_T r2 = dx * dx + dy * dy + dz * dz + eps2;
        NB_T y = NB_RSQRT(r2), y2 = y * y, y3 = y * y2;
        NB_T qx = p11[j] * dx + p12[j] * dy + p13[j] * dz;
        NB_T qy = p12[j] * dx + p22[j] * dy + p23[j] * dz;
        NB_T qz = p13[j] * dx + p23[j] * dy + p33[j] * dz;
        NB_T A = (qx * dx + qy * dy + qz * dz) * y2 - t[j];
        NB_T m = cmass[j];
        ph -= y * (m + y2 * A);
        NB_T C = y3 * (m + y2 * ((NB_T)5 * A + (NB_T)2 * t[j])), D = (NB_T)2 * y3 * y2;
        ax += D * qx - C * dx;
        ay += D * qy - C * dy;
        az += D * qz - C * dz;
    }
    s[0] = ax;
    s[1] = ay;
    s[2] = az;
    s[3] = ph;
}
