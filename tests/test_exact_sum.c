/* The exact sum's threshold test (src/core/exact_sum.c) against Python's
 * math.fsum algorithm (test_fsum): whether the sum, rounded once, reaches
 * a threshold, for terms across the whole exponent range, big
 * cancellations, half-way cases and every order of the terms. */
#include "test.h"
#include "exact_sum.h"

#include <math.h>

/* A term: integers, tenths, powers of two from subnormal to 2^1000, and
 * tiny nudges below and above a unit, each sign. */
static double term(grove_rng *rng)
{
    double sign = grove_rng_below(rng, 2) ? -1 : 1;
    switch (grove_rng_below(rng, 6)) {
    case 0: return (double)grove_rng_below(rng, 7);
    case 1: return sign * (double)grove_rng_below(rng, 30) / 10;
    case 2: return sign * ldexp(1, (int)grove_rng_below(rng, 2075) - 1074);
    case 3: return sign * ldexp(1, -52 - (int)grove_rng_below(rng, 70));
    case 4: return sign * grove_rng_uniform(rng) * ldexp(1, (int)grove_rng_below(rng, 40) - 20);
    default: return sign * 0x1p-1074 * (double)grove_rng_below(rng, 1000);
    }
}

static bool reaches(const double *x, size_t n, double m)
{
    grove__xsum acc;
    grove__xsum_clear(&acc);
    for (size_t i = 0; i < n; i++) grove__xsum_add(&acc, x[i]);
    return grove__xsum_rounds_to_at_least(&acc, m);
}

TEST(exact_sum_rounds_once_as_fsum_does)
{
    grove_rng rng;
    grove_rng_seed(&rng, 11);
    double x[40];
    size_t checked = 0, close = 0;
    for (int trial = 0; trial < 20000; trial++) {
        size_t n = 1 + grove_rng_below(&rng, 40);
        for (size_t i = 0; i < n; i++) x[i] = term(&rng);
        /* A threshold at the rounded sum or its neighbours, or a plain one,
         * and the sum's huge terms cancelled so small ones decide. */
        if (trial % 3 == 0 && n > 2) {
            x[n - 1] = -x[0];
            x[n - 2] = 0x1p1000 * (grove_rng_below(&rng, 2) ? 1 : -1);
            x[0] = -x[n - 2] + x[0];
        }
        double sum = test_fsum(x, n), m = (double)(1 + grove_rng_below(&rng, 5));
        if (trial % 2 == 0 && sum >= 1 && isfinite(sum)) {
            m = sum;
            if (grove_rng_below(&rng, 2)) m = nextafter(m, INFINITY);
            close++;
        }
        bool want = sum >= m, got = reaches(x, n, m);
        CHECK_MSG(got == want, "trial %d: %zu terms, sum %.17g, m %.17g: got %d", trial, n, sum, m, got);
        /* The same in reverse order. */
        for (size_t i = 0; i < n / 2; i++) {
            double t = x[i];
            x[i] = x[n - 1 - i];
            x[n - 1 - i] = t;
        }
        CHECK(reaches(x, n, m) == want);
        checked++;
        if (test_failed_now()) break;
    }
    CHECK(checked == 20000 && close > 3000);
}

TEST(exact_sum_half_way_and_below_the_threshold)
{
    /* 1 - 2^-54 is half-way between 1 - 2^-53 and 1: it rounds to the
     * even 1; anything below rounds down. */
    const double tie[] = {1, -0x1p-54}, under[] = {1, -0x1p-54, -0x1p-110}, over[] = {1, -0x1p-54, 0x1p-110};
    CHECK(reaches(tie, 2, 1) && !reaches(under, 3, 1) && reaches(over, 3, 1));
    /* 3 + 2^-52 sits half-way between 3 and its odd neighbour above: the
     * tie goes to 3, not above it; 3 + 3 2^-52 half-way between that odd
     * neighbour and the even one above goes up. */
    const double odd[] = {3, 0x1p-52, 0x1p-51};
    CHECK(reaches(odd, 2, 3) && !reaches(odd, 2, 3 + 0x1p-51) && reaches(odd, 3, 3 + 0x1p-51));
    CHECK(reaches(odd, 3, 3 + 0x1p-50) && !reaches(odd, 3, 3 + 0x1p-50 + 0x1p-51));
    /* Huge terms that cancel exactly leave the small ones; subnormals add up. */
    const double cancel[] = {0x1p1023, 0.5, -0x1p1023, 0.25, 0.25, -0x1p-1074};
    CHECK(!reaches(cancel, 4, 1) && reaches(cancel, 5, 1) && reaches(cancel, 6, 1) && !reaches(cancel + 3, 3, 1));
    double many[64];
    for (int i = 0; i < 64; i++) many[i] = 0x1p1023;
    CHECK(reaches(many, 64, 1));
    for (int i = 0; i < 64; i++) many[i] = -0x1p1023;
    many[0] = 2;
    CHECK(!reaches(many, 64, 1) && reaches(many, 1, 2));
    CHECK(!reaches(NULL, 0, 1));
    CHECK(test_fsum(under, 3) == 1 - 0x1p-53 && test_fsum(tie, 2) == 1);
}
