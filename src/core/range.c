/* Range: the power of two a module scales its coordinates by, so that sums
 * of squared differences neither overflow nor lose the data's resolution
 * to underflow (DESIGN.md, "Range"; internal.h). */
#include "internal.h"

#include <float.h>

/* ceil(log2(terms)), at least 0. */
static int log2_ceil(size_t terms)
{
    int bits = 0;
    while (bits < 63 && ((size_t)1 << bits) < terms) bits++;
    return bits;
}

/* The largest binary exponent e (magnitude < 2^e) for which `terms`
 * squares of differences of such values sum without overflow: each
 * difference is below 2^(e + 1), each square below 2^(2e + 2), the sum
 * below 2^(2e + 2 + log2 terms), and one more bit is left for rounding. */
static int high_exponent(size_t terms, bool f32)
{
    int max_exp = f32 ? FLT_MAX_EXP : DBL_MAX_EXP;
    int room = max_exp - 3 - log2_ceil(terms);
    return room >= 0 ? room / 2 : -((1 - room) / 2);
}

/* The smallest e for which one unit in the last place of values in
 * [2^(e-1), 2^e), 2^(e - digits), squares to a normal number. */
static int low_exponent(bool f32)
{
    int digits = f32 ? FLT_MANT_DIG : DBL_MANT_DIG, min_exp = f32 ? FLT_MIN_EXP : DBL_MIN_EXP;
    return digits + (min_exp - 1) / 2; /* min_exp - 1 (-126, -1022) is even */
}

bool grove__range_fits(double magnitude, int exponent, size_t terms, grove_dtype arith)
{
    return !(magnitude > 0) || grove__unit_exponent(magnitude) - exponent <= high_exponent(terms, arith == GROVE_FLOAT32);
}

int grove__range_exponent(double magnitude, size_t terms, grove_dtype arith)
{
    if (!(magnitude > 0)) return 0;
    bool f32 = arith == GROVE_FLOAT32;
    int e = grove__unit_exponent(magnitude), high = high_exponent(terms, f32);
    if (e <= high && e >= low_exponent(f32)) return 0;
    /* The largest values go to the top of the window, where values far
     * below them keep the most of their resolution; 2^-e stays a double. */
    e -= high;
    return e < -1021 ? -1021 : e > 1024 ? 1024 : e;
}

size_t grove__range_unscale(double *values, size_t count, int e, int threads)
{
    size_t infinite = 0;
#pragma omp parallel for num_threads(threads) schedule(static) reduction(+ : infinite) if (count > 65536)
    for (size_t i = 0; i < count; i++) {
        values[i] = ldexp(values[i], e);
        infinite += isinf(values[i]) != 0;
    }
    return infinite;
}
