/* Seeded pseudo-random numbers that are the same on every platform.
 *
 * Generator: xoshiro256** (Blackman & Vigna), state seeded by four outputs of
 * splitmix64(seed). Uniform doubles take the top 53 bits. Normal variates use
 * the Marsaglia polar method and exponential variates -log(1 - u); both need
 * only grove__log (below) and sqrt, which IEEE 754 rounds correctly, so no
 * platform libm can change a single bit. This file is compiled with
 * -ffp-contract=off (see Makefile) so no FMA changes rounding either. */
#include "internal.h"

#include <math.h>
#include <string.h>

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

void grove_rng_seed(grove_rng *rng, uint64_t seed)
{
    for (int i = 0; i < 4; i++) rng->s[i] = splitmix64(&seed);
}

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t grove_rng_u64(grove_rng *rng)
{
    uint64_t *s = rng->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

double grove_rng_uniform(grove_rng *rng) { return (double)(grove_rng_u64(rng) >> 11) * 0x1.0p-53; }

uint64_t grove_rng_below(grove_rng *rng, uint64_t bound)
{
    if (bound <= 1) return 0;
    /* Reject the top partial copy of [0, bound) so every value is equally likely. */
    uint64_t limit = UINT64_MAX - UINT64_MAX % bound;
    uint64_t x;
    do x = grove_rng_u64(rng);
    while (x >= limit);
    return x % bound;
}

/* log(x) for finite x > 0: x = m * 2^k with m in [sqrt(1/2), sqrt(2)), then
 * log(m) = 2 atanh(s), s = (m - 1) / (m + 1), |s| < 0.1716, by its odd
 * series to s^31 (error below 1e-24), and k * log(2) in two parts. */
double grove__log(double x)
{
    if (!(x > 0)) return x == 0 ? -INFINITY : NAN;
    if (x == INFINITY) return x;
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    int k = 0;
    if ((bits >> 52) == 0) { /* subnormal: scale into the normal range */
        x *= 0x1.0p54;
        k = -54;
        memcpy(&bits, &x, sizeof bits);
    }
    k += (int)(bits >> 52) - 1023;
    bits = (bits & 0x000FFFFFFFFFFFFFull) | 0x3FF0000000000000ull; /* m in [1, 2) */
    double m;
    memcpy(&m, &bits, sizeof m);
    if (m > 1.4142135623730951) {
        m *= 0.5;
        k += 1;
    }
    double s = (m - 1.0) / (m + 1.0), s2 = s * s, term = s, sum = 0.0;
    for (int i = 1; i <= 31; i += 2) {
        sum += term / i;
        term *= s2;
    }
    const double ln2_hi = 6.93147180369123816490e-01, ln2_lo = 1.90821492927058770002e-10;
    return (k * ln2_lo + 2.0 * sum) + k * ln2_hi;
}

double grove_rng_normal(grove_rng *rng)
{
    for (;;) {
        double u = 2.0 * grove_rng_uniform(rng) - 1.0;
        double v = 2.0 * grove_rng_uniform(rng) - 1.0;
        double s = u * u + v * v;
        if (s > 0.0 && s < 1.0) return u * sqrt(-2.0 * grove__log(s) / s);
    }
}

double grove_rng_exponential(grove_rng *rng) { return -grove__log(1.0 - grove_rng_uniform(rng)); }
