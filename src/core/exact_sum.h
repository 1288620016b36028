/* Exact sums of doubles (internal): an accumulator holds the sum of every
 * double added to it with no rounding at all, so sums taken in any order,
 * or split over threads or ranks and merged, are the same number, which
 * is rounded once at the end. The pair counts' weighted sums use it to be
 * the same for any thread count, and DBSCAN's weighted core test to decide
 * the points it cannot tell otherwise.
 *
 * Representation: signed 64-bit digits of 32 bits each, digit i worth
 * 2^(32 i - 1074) (the smallest subnormal is 2^-1074), so a double's 53-bit
 * significand lands in three neighbouring digits with no shift beyond the
 * word. Digits may run ahead of 32 bits between normalisations: each add
 * moves a digit by less than 2^32, so 2^30 adds are always safe. */
#ifndef GROVE_EXACT_SUM_H
#define GROVE_EXACT_SUM_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* 2^-1074 .. 2^1024 is 2098 bits; 3 more digits for a significand's
 * reach and 2^64 times the largest double of headroom. */
#define GROVE__XSUM_DIGITS 72
/* Adds between two normalisations (each digit moves by < 2^32 per add). */
#define GROVE__XSUM_SAFE_ADDS ((uint64_t)1 << 30)

typedef struct grove__xsum {
    int64_t digit[GROVE__XSUM_DIGITS];
    int special; /* an infinity or NaN was added: the sum is not finite */
} grove__xsum;

static inline void grove__xsum_clear(grove__xsum *s) { memset(s, 0, sizeof *s); }

/* s += x, exactly. */
static inline void grove__xsum_add(grove__xsum *s, double x)
{
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    unsigned exp = (unsigned)(bits >> 52) & 0x7ff;
    uint64_t m = bits & (((uint64_t)1 << 52) - 1);
    if (exp == 0x7ff) {
        s->special = 1;
        return;
    }
    /* x = m 2^(p - 1074): p = 0 for subnormals. */
    unsigned p = exp ? exp - 1 : 0;
    if (exp) m |= (uint64_t)1 << 52;
    unsigned i = p >> 5, sh = p & 31;
    int64_t lo = (int64_t)((m << sh) & 0xffffffffu), rest = (int64_t)(m >> (32 - sh));
    int64_t mid = rest & 0xffffffff, hi = rest >> 32;
    if (bits >> 63) {
        lo = -lo;
        mid = -mid;
        hi = -hi;
    }
    s->digit[i] += lo;
    s->digit[i + 1] += mid;
    s->digit[i + 2] += hi;
}

/* Carry every digit into [0, 2^32) but the top one, which keeps the sign:
 * one representation per value. */
void grove__xsum_normalize(grove__xsum *s);
/* into += from, exactly (both normalised first). */
void grove__xsum_merge(grove__xsum *into, grove__xsum *from);
/* into *= 2, exactly (into normalised first). */
void grove__xsum_double(grove__xsum *into);
/* The sum rounded to a double (within one unit in the last place; the
 * same double for the same sum, however it was added up); +-infinity when
 * beyond the range of a double, NaN after a non-finite add. */
double grove__xsum_value(grove__xsum *s);
/* Whether the sum rounded to the nearest double, ties to even (as one
 * IEEE addition rounds: math.fsum's result), is >= m, for a finite m >= 1:
 * exact, unlike grove__xsum_value. DBSCAN's weighted core test uses it
 * where a compensated sum is too close to min_samples to tell. */
bool grove__xsum_rounds_to_at_least(const grove__xsum *s, double m);

#endif
