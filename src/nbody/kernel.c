/* The interaction kernels: every sink of a group against the group's
 * particle list (monopole, Plummer softened) and cell list (monopole +
 * quadrupole), both in single precision with positions relative to the
 * group's centre, like Bonsai. A tree force is an approximation good to
 * ~1e-4 at best, so float rounding (~1e-7 per term; the relative positions
 * keep the differences accurate) costs no accuracy, and a float vector
 * holds twice the lanes. Each sink's float sums over a list are added into
 * double once. theta = 0 is the exception: there the result must be a
 * direct sum to double rounding, so it has its own double kernel
 * (grove__nb_direct) and no lists.
 *
 * Two versions of the list kernels: the portable loops below (per-lane
 * accumulators through omp simd reductions, which the compiler turns into
 * packed arithmetic; 1/sqrt from a bit-level guess and Newton steps), and
 * AVX2 + FMA intrinsics (kernel_avx2.c) that use the hardware reciprocal
 * square root, which no portable build can reach without -ffast-math.
 * The AVX2 set is chosen at run time when the CPU has it; the choice is
 * per machine, so results stay bit-identical for any thread count. */
#if defined(__GNUC__) && !defined(__clang__)
/* -std=c11 turns off FMA contraction; the kernels are mostly a*b + c, so
 * allow it where the target has FMA (results stay the same for any thread
 * count; they may differ between machines in the last bits, as they would
 * with any other instruction set choice). */
#pragma GCC optimize("fp-contract=fast")
#endif

#include "nbody_internal.h"

#include <math.h>
#include <string.h>

/* GCC needs the simd reduction to vectorise without -ffast-math; clang
 * warns when it cannot honour the pragma (at -O1), so it goes without. */
#if defined(__GNUC__) && !defined(__clang__)
#define NB_PRAGMA(x) _Pragma(#x)
#define NB_SIMD_SUM(...) NB_PRAGMA(omp simd reduction(+ : __VA_ARGS__))
#else
#define NB_SIMD_SUM(...)
#endif

/* 1 / sqrt(x) for x > 0 from integer and multiply-add operations only:
 * the classic bit-level first guess (relative error < 3.5e-2) and Newton
 * steps, each squaring the error: 1.8e-3, 4.9e-6, 3.6e-11, then rounding
 * (about 2 ulp) after four. Unlike sqrt() it has no errno side effect, so
 * the loops below vectorise in a portable -O3 build, and it is cheaper
 * than a packed square root followed by a divide. */
static inline double rsqrt(double x)
{
    uint64_t i;
    memcpy(&i, &x, sizeof i);
    i = UINT64_C(0x5fe6eb50c7b537a9) - (i >> 1);
    double y, h = 0.5 * x;
    memcpy(&y, &i, sizeof y);
    for (int k = 0; k < 4; k++) y = y * (1.5 - h * y * y);
    return y;
}

/* The bits of v where x > 0, else +0 (x >= 0). The mask is built with
 * integer operations on the bits of x, because GCC turns a compare and
 * select here into a branch, which stops the loop from vectorising. */
static inline double where_positive(double x, double v)
{
    uint64_t xb, vb;
    memcpy(&xb, &x, sizeof xb);
    memcpy(&vb, &v, sizeof vb);
    vb &= UINT64_C(0) - ((UINT64_C(0) - xb) >> 63); /* all ones unless x is +0 */
    memcpy(&v, &vb, sizeof v);
    return v;
}

/* The same two in single precision: first guess and three Newton steps
 * (3.5e-2, 1.8e-3, 4.9e-6, then float rounding). */
static inline float rsqrt_float(float x)
{
    uint32_t i;
    memcpy(&i, &x, sizeof i);
    i = UINT32_C(0x5f375a86) - (i >> 1);
    float y, h = 0.5f * x;
    memcpy(&y, &i, sizeof y);
    for (int k = 0; k < 3; k++) y = y * (1.5f - h * y * y);
    return y;
}

static inline float where_positive_float(float x, float v)
{
    uint32_t xb, vb;
    memcpy(&xb, &x, sizeof xb);
    memcpy(&vb, &v, sizeof vb);
    vb &= UINT32_C(0) - ((UINT32_C(0) - xb) >> 31);
    memcpy(&v, &vb, sizeof v);
    return v;
}

#define NB_T float
#define NB_RSQRT rsqrt_float
#define NB_WHERE where_positive_float
#define NB_(name) name##_f32
#include "p2p_t.h"
#include "p2c_t.h"
#undef NB_T
#undef NB_RSQRT
#undef NB_WHERE
#undef NB_

#define NB_T double
#define NB_RSQRT rsqrt
#define NB_WHERE where_positive
#define NB_(name) name##_f64
#include "p2p_t.h"
#include "p2c_t.h"
#undef NB_T
#undef NB_RSQRT
#undef NB_WHERE
#undef NB_

/* Particle-particle against the group's float list (p2p_t.h); the sums
 * are added into out, the mass at zero distance into out[4]. */
static void p2p(const float *restrict p, size_t cap, size_t n, const float s[3], float eps2, double out[5])
{
    float sum[5];
    p2p_sum_f32(p, p + cap, p + 2 * cap, p + 3 * cap, n, s[0], s[1], s[2], eps2, sum);
    for (int k = 0; k < 5; k++) out[k] += sum[k];
}

/* Particle-cell against the group's float cell list (p2c_t.h); the sums
 * are added into out. */
static void p2c(const float *restrict c, size_t cap, size_t n, const float s[3], float eps2, double out[5])
{
    float sum[4];
    p2c_sum_f32(c, cap, n, s[0], s[1], s[2], eps2, sum);
    for (int k = 0; k < 4; k++) out[k] += sum[k];
}

void grove__nb_kernels_portable(grove__nb_kernels *k)
{
    k->p2p = p2p;
    k->p2c = p2c;
}

void grove__nb_kernels_pick(grove__nb_kernels *k)
{
    grove__nb_kernels_portable(k);
    grove__nb_kernels_avx2(k);
}

/* The potential of the sink's coincident partners, left out by p2p: with
 * mass `at` at the sink's position (itself included, mass m), -(at - m) /
 * eps with softening, nothing without (a pair at r = 0 exerts nothing). */
static double coincident_potential(double at, double m, double eps2)
{
    return eps2 > 0 ? -(at - m) / sqrt(eps2) : 0;
}

/* The sink's position relative to the group's centre. */
static double relative(const grove__gravity *g, size_t i, const grove__nb_lists *L, int a)
{
    return g->x[(size_t)a * g->cap_n + i] - L->ctr[a];
}

/* Rounded up to whole padded rows. */
static size_t padded(size_t n) { return (n + GROVE__NB_PAD - 1) / GROVE__NB_PAD * GROVE__NB_PAD; }

bool grove__nb_evaluate(const grove__gravity *g, uint32_t b, uint32_t e, const grove__nb_lists *L,
                        const grove__nb_kernels *k, double eps2)
{
    size_t cap = g->cap_n, np = padded(L->np), nc = padded(L->nc);
    for (uint32_t j = b; j < e; j++) {
        size_t i = g->sink[j];
        float s[3];
        for (int a = 0; a < 3; a++) s[a] = (float)relative(g, i, L, a);
        double out[5] = {0, 0, 0, 0, 0};
        if (np) k->p2p(L->p, L->cap_p, np, s, (float)eps2, out);
        if (nc) k->p2c(L->c, L->cap_c, nc, s, (float)eps2, out);
        /* The list holds the sink's mass as this float: more mass at its
         * float position is another particle there, or one single
         * precision cannot tell from it; a sum that is not finite met a
         * pair too close for single precision's range. */
        float mass = (float)g->x[3 * cap + i];
        if (out[4] > mass || !isfinite(out[0] + out[1] + out[2] + out[3])) return false;
        out[3] += coincident_potential(out[4], mass, eps2);
        for (int a = 0; a < 4; a++) g->out[a * cap + i] = out[a];
    }
    return true;
}

/* The pairs a double sum (p2p_sum_f64) left out as coincident though
 * their positions differ: their squared distance underflowed, at
 * separations below 2^-537 of the system's size. Each such term is
 * computed from the differences scaled by a power of two (exact), so it
 * keeps double's precision (it overflows only where it is beyond the
 * doubles), and leaves the coincident mass s[4], which keeps the particles
 * at the sink's very position. Sources in columns x, y, z, m; sink at p. */
static void add_close_pairs(const double *x, const double *y, const double *z, const double *m, size_t n,
                            const double p[3], double eps2, double s[5])
{
    for (size_t j = 0; j < n; j++) {
        double d[3] = {x[j] - p[0], y[j] - p[1], z[j] - p[2]};
        double big = fmax(fabs(d[0]), fmax(fabs(d[1]), fabs(d[2])));
        if (big == 0 || d[0] * d[0] + d[1] * d[1] + d[2] * d[2] != 0) continue;
        s[4] -= m[j];
        int k;
        (void)frexp(big, &k);
        /* r^2 + eps^2 = 2^2k (u^2 + eps^2 2^-2k), u = d 2^-k */
        double u[3], r2 = ldexp(eps2, -2 * k);
        if (isinf(r2)) { /* a softening that dwarfs r: r^2 + eps^2 = eps^2 */
            double rinv = 1 / sqrt(eps2);
            for (int a = 0; a < 3; a++) s[a] += m[j] * d[a] * rinv * rinv * rinv;
            s[3] -= m[j] * rinv;
            continue;
        }
        for (int a = 0; a < 3; a++) {
            u[a] = ldexp(d[a], -k);
            r2 += u[a] * u[a];
        }
        double r = sqrt(r2);
        for (int a = 0; a < 3; a++) s[a] += ldexp(m[j] * u[a] / (r2 * r), -2 * k);
        s[3] -= ldexp(m[j] / r, -k);
    }
}

void grove__nb_evaluate_wide(const grove__gravity *g, uint32_t b, uint32_t e, const grove__nb_lists *L, double eps2)
{
    size_t cap = g->cap_n, np = padded(L->np), nc = padded(L->nc);
    const double *p = L->pw;
    size_t pc = L->cap_pw;
    for (uint32_t j = b; j < e; j++) {
        size_t i = g->sink[j];
        double s[3], sum[5] = {0, 0, 0, 0, 0}, cells[4] = {0, 0, 0, 0};
        for (int a = 0; a < 3; a++) s[a] = relative(g, i, L, a);
        if (np) p2p_sum_f64(p, p + pc, p + 2 * pc, p + 3 * pc, np, s[0], s[1], s[2], eps2, sum);
        if (sum[4] > g->x[3 * cap + i]) add_close_pairs(p, p + pc, p + 2 * pc, p + 3 * pc, np, s, eps2, sum);
        if (nc) p2c_sum_f64(L->cw, L->cap_cw, nc, s[0], s[1], s[2], eps2, cells);
        for (int a = 0; a < 3; a++) g->out[a * cap + i] = sum[a] + cells[a];
        g->out[3 * cap + i] = sum[3] + cells[3] + coincident_potential(sum[4], g->x[3 * cap + i], eps2);
    }
}

/* theta = 0: the particle-particle sum in double (p2p_t.h) over all n
 * particles in tree order, then each remote source's sum added; pairs
 * whose squared distance underflowed are added term by term. */
void grove__nb_direct(const grove__gravity *g, uint32_t b, uint32_t e, double eps2, const grove__nb_source *remote,
                      size_t nremote)
{
    size_t cap = g->cap_n, n = g->tree.n;
    const double *sx = g->x, *sy = g->x + cap, *sz = g->x + 2 * cap, *sm = g->x + 3 * cap;
    for (uint32_t j = b; j < e; j++) {
        size_t i = g->sink[j];
        double sum[5], p[3] = {sx[i], sy[i], sz[i]};
        p2p_sum_f64(sx, sy, sz, sm, n, p[0], p[1], p[2], eps2, sum);
        for (size_t r = 0; r < nremote; r++) {
            const double *x = remote[r].x;
            size_t rc = remote[r].cap;
            double more[5];
            p2p_sum_f64(x, x + rc, x + 2 * rc, x + 3 * rc, remote[r].n, p[0], p[1], p[2], eps2, more);
            for (int k = 0; k < 5; k++) sum[k] += more[k];
        }
        if (sum[4] > sm[i]) { /* more mass than its own at the sink's position */
            add_close_pairs(sx, sy, sz, sm, n, p, eps2, sum);
            for (size_t r = 0; r < nremote; r++) {
                const double *x = remote[r].x;
                size_t rc = remote[r].cap;
                add_close_pairs(x, x + rc, x + 2 * rc, x + 3 * rc, remote[r].n, p, eps2, sum);
            }
        }
        for (int k = 0; k < 3; k++) g->out[k * cap + i] = sum[k];
        g->out[3 * cap + i] = sum[3] + coincident_potential(sum[4], sm[i], eps2);
    }
}
