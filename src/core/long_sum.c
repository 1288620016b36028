/* grove__long_sum (long_sum.h): a double x = mant 2^(e - 1075) (normal) or
 * mant 2^-1074 (subnormal) is the integer mant shifted left by e - 1 or 0
 * bits in units of 2^-1074, added to or subtracted from the limbs. */
#include "long_sum.h"

#include <string.h>

void grove__long_sum_clear(grove__long_sum *a) { memset(a, 0, sizeof *a); }

/* The 117-bit value hi:lo added at limb w (negate: subtracted), the carry
 * or borrow carried to the top. */
static void add_at(uint64_t *limb, size_t w, uint64_t lo, uint64_t hi, bool negate)
{
    uint64_t part[2] = {lo, hi}, carry = 0;
    for (size_t k = w; k < GROVE__LONG_SUM_LIMBS; k++) {
        if (k - w >= 2 && carry == 0) break;
        uint64_t v = k - w < 2 ? part[k - w] : 0;
        uint64_t old = limb[k];
        if (!negate) {
            uint64_t t = old + v;
            uint64_t c = t < v;
            limb[k] = t + carry;
            carry = c | (limb[k] < t);
        } else {
            uint64_t t = old - v;
            uint64_t b = old < v;
            limb[k] = t - carry;
            carry = b | (t < carry);
        }
    }
}

void grove__long_sum_add(grove__long_sum *a, double x)
{
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    uint64_t mant = bits & ((UINT64_C(1) << 52) - 1);
    unsigned e = (unsigned)(bits >> 52) & 0x7ff, shift = 0;
    if (e) {
        mant |= UINT64_C(1) << 52;
        shift = e - 1;
    }
    if (!mant) return;
    unsigned off = shift % 64;
    add_at(a->limb, shift / 64, mant << off, off ? mant >> (64 - off) : 0, bits >> 63);
}

bool grove__long_sum_rounds_to_at_least(const grove__long_sum *a, double m)
{
    /* The sum rounds to m or above when it lies above the midpoint between
     * m and the double below it, or on it when m's last bit is even (a tie
     * goes to the even neighbour). Halving m >= 1 is exact. */
    double below = nextafter(m, 0);
    grove__long_sum r = *a;
    grove__long_sum_add(&r, -m / 2);
    grove__long_sum_add(&r, -below / 2);
    if (r.limb[GROVE__LONG_SUM_LIMBS - 1] >> 63) return false;
    for (size_t k = 0; k < GROVE__LONG_SUM_LIMBS; k++)
        if (r.limb[k]) return true;
    uint64_t bits;
    memcpy(&bits, &m, sizeof bits);
    return (bits & 1) == 0;
}
