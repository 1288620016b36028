/* The interaction kernels: every sink of a group against the group's
 * particle list (in double) and cell list (monopole + quadrupole, in single
 * precision relative to the group centre, see p2c).
 *
 * Loops run over the sources with per-lane accumulators (omp simd
 * reductions), which the compiler turns into packed arithmetic; sources are
 * padded to GROVE__NB_PAD so there is no remainder loop. On x86-64 with GCC
 * the kernels are also compiled for x86-64-v3 (AVX2 + FMA) and picked at
 * load time, since the portable build otherwise stops at SSE2. The choice
 * is per machine, so results stay bit-identical for any thread count. */
#if defined(__GNUC__) && !defined(__clang__)
/* -std=c11 turns off FMA contraction; the kernels are mostly a*b + c, and
 * the x86-64-v3 clone below has FMA, so allow it here (results stay the
 * same for any thread count; they may differ between machines in the last
 * bits, as they would with any other instruction set choice). */
#pragma GCC optimize("fp-contract=fast")
#endif

#include "nbody_internal.h"

#include <string.h>

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define NB_KERNEL __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define NB_KERNEL
#endif
/* GCC needs the simd reduction to vectorise without -ffast-math; clang
 * warns when it cannot honour the pragma (at -O1), so it goes without. */
#if defined(__GNUC__) && !defined(__clang__)
#define NB_SIMD_SUM _Pragma("omp simd reduction(+ : ax, ay, az, ph)")
#else
#define NB_SIMD_SUM
#endif

/* 1 / sqrt(x) for x > 0 from integer and multiply-add operations only:
 * the classic bit-level first guess (relative error < 3.5e-2) and Newton
 * steps, each squaring the error: 1.8e-3, 4.9e-6, 3.6e-11, then rounding
 * (about 2 ulp) after four. Unlike sqrt() it has no errno side effect, so
 * the loops below vectorise in a portable -O3 build, and it is cheaper
 * than a packed square root followed by a divide. */
static inline double rsqrt_steps(double x, int steps)
{
    uint64_t i;
    memcpy(&i, &x, sizeof i);
    i = UINT64_C(0x5fe6eb50c7b537a9) - (i >> 1);
    double y, h = 0.5 * x;
    memcpy(&y, &i, sizeof y);
    for (int k = 0; k < steps; k++) y = y * (1.5 - h * y * y);
    return y;
}

/* Full precision, for particle pairs (theta = 0 must be a direct sum). */
static inline double rsqrt(double x) { return rsqrt_steps(x, 4); }

/* rsqrt(x) for x > 0 and 0 for x == 0 (x >= 0). The mask is built with
 * integer operations on the bits of x, because GCC turns a compare and
 * select here into a branch, which stops the loop from vectorising;
 * rsqrt(0) itself is finite, so it is safe to compute and discard. */
static inline double masked_rsqrt(double x)
{
    uint64_t xb, yb;
    double y = rsqrt(x);
    memcpy(&xb, &x, sizeof xb);
    memcpy(&yb, &y, sizeof yb);
    yb &= UINT64_C(0) - ((UINT64_C(0) - xb) >> 63); /* all ones unless x is +0 */
    memcpy(&y, &yb, sizeof y);
    return y;
}

/* Particle-particle: a += m r / (r^2 + eps^2)^(3/2), phi -= m / (r^2 +
 * eps^2)^(1/2), r = source - sink. A pair at r^2 + eps^2 == 0 (a particle
 * and itself, or duplicates, without softening) contributes nothing. */
NB_KERNEL static void p2p(const double *restrict sx, const double *restrict sy, const double *restrict sz,
                          const double *restrict sm, size_t n, double xi, double yi, double zi, double eps2,
                          double out[4])
{
    double ax = 0, ay = 0, az = 0, ph = 0;
    NB_SIMD_SUM
    for (size_t j = 0; j < n; j++) {
        double dx = sx[j] - xi, dy = sy[j] - yi, dz = sz[j] - zi;
        double r2 = dx * dx + dy * dy + dz * dz + eps2;
        double rinv = masked_rsqrt(r2);
        double mr = sm[j] * rinv, mr3 = mr * rinv * rinv;
        ax += mr3 * dx;
        ay += mr3 * dy;
        az += mr3 * dz;
        ph -= mr;
    }
    out[0] += ax;
    out[1] += ay;
    out[2] += az;
    out[3] += ph;
}

/* 1 / sqrt(x) in single precision: first guess and three Newton steps
 * (3.5e-2, 1.8e-3, 4.9e-6, then float rounding). */
static inline float rsqrtf_steps(float x)
{
    uint32_t i;
    memcpy(&i, &x, sizeof i);
    i = UINT32_C(0x5f375a86) - (i >> 1);
    float y, h = 0.5f * x;
    memcpy(&y, &i, sizeof y);
    for (int k = 0; k < 3; k++) y = y * (1.5f - h * y * y);
    return y;
}

/* Particle-cell with r = sink - centre of mass, Q the second moments:
 *   phi = -M/r - 3/2 (r.Q.r)/r^5 + 1/2 tr(Q)/r^3
 *   a   = r (-M/r^3 + 3/2 tr(Q)/r^5 - 15/2 (r.Q.r)/r^7) + 3 Q.r / r^5
 * with r^2 softened to r^2 + eps^2 as Bonsai does. Accepted cells are
 * never at r = 0 (the opening criterion keeps them away from the group).
 *
 * In single precision, like Bonsai: a multipole term is an approximation
 * good to ~1e-3 at best, so float rounding (1e-7 per term, positions taken
 * relative to the group's centre) costs no accuracy, and a float vector
 * holds twice as many lanes. The sink's sum over its cell list is added to
 * the double accumulators once. */
NB_KERNEL static void p2c(const float *restrict c, size_t cap, size_t n, float xi, float yi, float zi, float eps2,
                          double out[4])
{
    const float *restrict cx = c, *restrict cy = c + cap, *restrict cz = c + 2 * cap, *restrict cmass = c + 3 * cap;
    const float *restrict q11 = c + 4 * cap, *restrict q22 = c + 5 * cap, *restrict q33 = c + 6 * cap;
    const float *restrict q12 = c + 7 * cap, *restrict q13 = c + 8 * cap, *restrict q23 = c + 9 * cap;
    const float *restrict tr = c + 10 * cap;
    float ax = 0, ay = 0, az = 0, ph = 0;
    NB_SIMD_SUM
    for (size_t j = 0; j < n; j++) {
        float dx = xi - cx[j], dy = yi - cy[j], dz = zi - cz[j];
        float r2 = dx * dx + dy * dy + dz * dz + eps2;
        float rinv = rsqrtf_steps(r2), rinv2 = rinv * rinv;
        float rinv3 = rinv * rinv2, rinv5 = rinv3 * rinv2, rinv7 = rinv5 * rinv2;
        float qx = q11[j] * dx + q12[j] * dy + q13[j] * dz;
        float qy = q12[j] * dx + q22[j] * dy + q23[j] * dz;
        float qz = q13[j] * dx + q23[j] * dy + q33[j] * dz;
        float qrr = qx * dx + qy * dy + qz * dz;
        float m = cmass[j];
        ph -= m * rinv + 1.5f * qrr * rinv5 - 0.5f * tr[j] * rinv3;
        float C = -m * rinv3 + 1.5f * tr[j] * rinv5 - 7.5f * qrr * rinv7, D = 3.0f * rinv5;
        ax += C * dx + D * qx;
        ay += C * dy + D * qy;
        az += C * dz + D * qz;
    }
    out[0] += ax;
    out[1] += ay;
    out[2] += az;
    out[3] += ph;
}

void grove__nb_evaluate(const grove__gravity *g, uint32_t b, uint32_t e, const grove__nb_lists *L, double eps2)
{
    size_t cap = g->cap_n, cp = L->cap_p;
    size_t np = (L->np + GROVE__NB_PAD - 1) / GROVE__NB_PAD * GROVE__NB_PAD;
    size_t nc = (L->nc + GROVE__NB_PAD - 1) / GROVE__NB_PAD * GROVE__NB_PAD;
    for (uint32_t i = b; i < e; i++) {
        double xi = g->x[i], yi = g->x[cap + i], zi = g->x[2 * cap + i];
        double out[4] = {0, 0, 0, 0};
        p2p(L->p, L->p + cp, L->p + 2 * cp, L->p + 3 * cp, np, xi, yi, zi, eps2, out);
        if (nc)
            p2c(L->c, L->cap_c, nc, (float)(xi - L->ctr[0]), (float)(yi - L->ctr[1]), (float)(zi - L->ctr[2]),
                (float)eps2, out);
        for (int k = 0; k < 4; k++) g->out[k * cap + i] = out[k];
    }
}
