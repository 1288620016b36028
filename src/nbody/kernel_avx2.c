/* The list kernels of kernel.c (same formulas, same list layout, one sink
 * against eight sources per step) written with AVX2 + FMA intrinsics, for
 * the one thing the portable loops cannot get without -ffast-math: the
 * hardware reciprocal square root (vrsqrtps, ~12 bits) refined by one
 * Newton step to ~23 bits, in place of a bit-level guess and three steps.
 * The functions carry target attributes, so the file builds without
 * -march flags; kernel.c calls them only when the CPU reports AVX2 and
 * FMA. Elsewhere (other compilers or architectures) the file only says
 * that it has nothing. */
#include "nbody_internal.h"
#include "cpu.h"

#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)

#include <immintrin.h>

#define NB_AVX2 __attribute__((target("avx2,fma")))

/* 1 / sqrt(x) for x > 0: y (1.5 - x y^2 / 2) from the hardware estimate. */
NB_AVX2 static inline __m256 rsqrt8(__m256 x)
{
    __m256 y = _mm256_rsqrt_ps(x);
    __m256 t = _mm256_fnmadd_ps(_mm256_mul_ps(x, y), y, _mm256_set1_ps(3.0f));
    return _mm256_mul_ps(_mm256_mul_ps(_mm256_set1_ps(0.5f), y), t);
}

/* The eight lanes' sum, added in double. */
NB_AVX2 static inline double sum8(__m256 v)
{
    __m256d d = _mm256_add_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(v)), _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)));
    __m128d h = _mm_add_pd(_mm256_castpd256_pd128(d), _mm256_extractf128_pd(d, 1));
    return _mm_cvtsd_f64(_mm_add_sd(h, _mm_unpackhi_pd(h, h)));
}

NB_AVX2 static void add_sums(__m256 ax, __m256 ay, __m256 az, __m256 ph, double out[5])
{
    out[0] += sum8(ax);
    out[1] += sum8(ay);
    out[2] += sum8(az);
    out[3] += sum8(ph);
}

/* kernel.c's p2p: pairs at r == 0 are masked out, their mass goes to out[4]. */
NB_AVX2 static void p2p(const float *p, size_t cap, size_t n, const float s[3], float eps2, double out[5])
{
    const __m256 xi = _mm256_set1_ps(s[0]), yi = _mm256_set1_ps(s[1]), zi = _mm256_set1_ps(s[2]);
    const __m256 e2 = _mm256_set1_ps(eps2), zero = _mm256_setzero_ps();
    __m256 ax = zero, ay = zero, az = zero, ph = zero, at = zero;
    for (size_t j = 0; j < n; j += 8) {
        __m256 dx = _mm256_sub_ps(_mm256_loadu_ps(p + j), xi);
        __m256 dy = _mm256_sub_ps(_mm256_loadu_ps(p + cap + j), yi);
        __m256 dz = _mm256_sub_ps(_mm256_loadu_ps(p + 2 * cap + j), zi);
        __m256 m = _mm256_loadu_ps(p + 3 * cap + j);
        __m256 d2 = _mm256_fmadd_ps(dx, dx, _mm256_fmadd_ps(dy, dy, _mm256_mul_ps(dz, dz)));
        __m256 apart = _mm256_cmp_ps(d2, zero, _CMP_GT_OQ);
        __m256 rinv = _mm256_and_ps(rsqrt8(_mm256_add_ps(d2, e2)), apart);
        __m256 mr = _mm256_mul_ps(m, rinv);
        __m256 mr3 = _mm256_mul_ps(mr, _mm256_mul_ps(rinv, rinv));
        ax = _mm256_fmadd_ps(mr3, dx, ax);
        ay = _mm256_fmadd_ps(mr3, dy, ay);
        az = _mm256_fmadd_ps(mr3, dz, az);
        ph = _mm256_sub_ps(ph, mr);
        at = _mm256_add_ps(at, _mm256_andnot_ps(apart, m));
    }
    add_sums(ax, ay, az, ph, out);
    out[4] += sum8(at);
}

/* kernel.c's p2c, in its reduced form. */
NB_AVX2 static void p2c(const float *c, size_t cap, size_t n, const float s[3], float eps2, double out[5])
{
    const __m256 xi = _mm256_set1_ps(s[0]), yi = _mm256_set1_ps(s[1]), zi = _mm256_set1_ps(s[2]);
    const __m256 e2 = _mm256_set1_ps(eps2), five = _mm256_set1_ps(5.0f), zero = _mm256_setzero_ps();
    __m256 ax = zero, ay = zero, az = zero, ph = zero;
    for (size_t j = 0; j < n; j += 8) {
        const float *col = c + j;
        __m256 dx = _mm256_sub_ps(xi, _mm256_loadu_ps(col));
        __m256 dy = _mm256_sub_ps(yi, _mm256_loadu_ps(col + cap));
        __m256 dz = _mm256_sub_ps(zi, _mm256_loadu_ps(col + 2 * cap));
        __m256 m = _mm256_loadu_ps(col + 3 * cap);
        __m256 p11 = _mm256_loadu_ps(col + 4 * cap), p22 = _mm256_loadu_ps(col + 5 * cap);
        __m256 p33 = _mm256_loadu_ps(col + 6 * cap), p12 = _mm256_loadu_ps(col + 7 * cap);
        __m256 p13 = _mm256_loadu_ps(col + 8 * cap), p23 = _mm256_loadu_ps(col + 9 * cap);
        __m256 t = _mm256_loadu_ps(col + 10 * cap);
        __m256 r2 = _mm256_fmadd_ps(dx, dx, _mm256_fmadd_ps(dy, dy, _mm256_fmadd_ps(dz, dz, e2)));
        __m256 y = rsqrt8(r2), y2 = _mm256_mul_ps(y, y), y3 = _mm256_mul_ps(y, y2);
        __m256 qx = _mm256_fmadd_ps(p11, dx, _mm256_fmadd_ps(p12, dy, _mm256_mul_ps(p13, dz)));
        __m256 qy = _mm256_fmadd_ps(p12, dx, _mm256_fmadd_ps(p22, dy, _mm256_mul_ps(p23, dz)));
        __m256 qz = _mm256_fmadd_ps(p13, dx, _mm256_fmadd_ps(p23, dy, _mm256_mul_ps(p33, dz)));
        __m256 qrr = _mm256_fmadd_ps(qx, dx, _mm256_fmadd_ps(qy, dy, _mm256_mul_ps(qz, dz)));
        __m256 A = _mm256_fmsub_ps(qrr, y2, t);
        ph = _mm256_fnmadd_ps(y, _mm256_fmadd_ps(y2, A, m), ph);
        __m256 B = _mm256_fmadd_ps(five, A, _mm256_add_ps(t, t));
        __m256 C = _mm256_mul_ps(y3, _mm256_fmadd_ps(y2, B, m));
        __m256 D = _mm256_mul_ps(y3, _mm256_add_ps(y2, y2));
        ax = _mm256_fnmadd_ps(C, dx, _mm256_fmadd_ps(D, qx, ax));
        ay = _mm256_fnmadd_ps(C, dy, _mm256_fmadd_ps(D, qy, ay));
        az = _mm256_fnmadd_ps(C, dz, _mm256_fmadd_ps(D, qz, az));
    }
    add_sums(ax, ay, az, ph, out);
}

bool grove__nb_kernels_avx2(grove__nb_kernels *k)
{
    grove__cpu_features cpu = grove__cpu();
    if (!cpu.avx2 || !cpu.fma) return false;
    k->p2p = p2p;
    k->p2c = p2c;
    return true;
}

#else

bool grove__nb_kernels_avx2(grove__nb_kernels *k)
{
    (void)k;
    return false;
}

#endif
