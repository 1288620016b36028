/* Exact sums of doubles: normalisation, merging and rounding (exact_sum.h). */
#include "exact_sum.h"

#include <math.h>

void grove__xsum_normalize(grove__xsum *s)
{
    for (int i = 0; i + 1 < GROVE__XSUM_DIGITS; i++) {
        /* floor(digit / 2^32), by an arithmetic shift of the two's complement. */
        int64_t carry = (s->digit[i] - (s->digit[i] & 0xffffffff)) / ((int64_t)1 << 32);
        s->digit[i] &= 0xffffffff;
        s->digit[i + 1] += carry;
    }
}

void grove__xsum_merge(grove__xsum *into, grove__xsum *from)
{
    grove__xsum_normalize(into);
    grove__xsum_normalize(from);
    for (int i = 0; i < GROVE__XSUM_DIGITS; i++) into->digit[i] += from->digit[i];
    into->special |= from->special;
}

void grove__xsum_double(grove__xsum *into)
{
    grove__xsum_normalize(into);
    for (int i = 0; i < GROVE__XSUM_DIGITS; i++) into->digit[i] *= 2;
}

double grove__xsum_value(grove__xsum *s)
{
    if (s->special) return NAN;
    grove__xsum_normalize(s);
    /* The magnitude's digits, all in [0, 2^32) after the sign is taken out. */
    grove__xsum mag = *s;
    int negative = mag.digit[GROVE__XSUM_DIGITS - 1] < 0;
    if (negative) {
        for (int i = 0; i < GROVE__XSUM_DIGITS; i++) mag.digit[i] = -mag.digit[i];
        grove__xsum_normalize(&mag);
    }
    int top = GROVE__XSUM_DIGITS - 1;
    while (top >= 0 && mag.digit[top] == 0) top--;
    if (top < 0) return 0.0;
    /* The leading 64 bits exactly, rounded once to a double, plus the next
     * digit: within one unit in the last place of the exact sum. */
    uint64_t head = (uint64_t)mag.digit[top] << 32 | (uint64_t)(top > 0 ? mag.digit[top - 1] : 0);
    double next = top > 1 ? (double)mag.digit[top - 2] : 0;
    double v = ldexp((double)head, 32 * (top - 1) - 1074) + ldexp(next, 32 * (top - 2) - 1074);
    return negative ? -v : v;
}

bool grove__xsum_rounds_to_at_least(const grove__xsum *s, double m)
{
    /* The sum rounds to m or above when it lies above the midpoint between
     * m and the double below it, or on it when m's last bit is even (a tie
     * goes to the even neighbour). Halving m >= 1 is exact. */
    grove__xsum r = *s;
    grove__xsum_add(&r, -m / 2);
    grove__xsum_add(&r, -nextafter(m, 0) / 2);
    grove__xsum_normalize(&r);
    if (r.digit[GROVE__XSUM_DIGITS - 1] < 0) return false;
    for (int i = 0; i < GROVE__XSUM_DIGITS; i++)
        if (r.digit[i]) return true;
    uint64_t bits;
    memcpy(&bits, &m, sizeof bits);
    return (bits & 1) == 0;
}
