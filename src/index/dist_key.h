/* Keys of squared distances, exact where the squared sum underflows.
 *
 * A squared distance below the smallest normal of its type has lost its
 * relative accuracy: two points 1e-200 apart beside points at 1 square to
 * 0 in double (1e-20 apart in float), so a join at eps = 0 took them for
 * duplicates and a kNN put them at distance 0 in any order. The data's
 * range scale (src/core/range.c) cannot help: it serves the largest
 * coordinates. So the kernels compute squared sums as before and, on the
 * rare sum below the smallest normal (one branch), redo that pair with
 * every difference scaled by 2^k (exact; geom_t.h, src/join/dist_t.h):
 * the sum an arithmetic without underflow would give, times 2^2k.
 *
 * Such a value v is no number of the type, so searches order KEYS: a key
 * is the squared sum itself when that is normal; below, a negative number
 * that grows with v; -INFINITY for identical points. Keys compare as the
 * values do, so heaps and eps tests keep their comparisons; box bounds
 * stay squared sums, pruned against a key floored to the largest
 * subnormal (FN(prune_bound): a box whose bound underflowed is searched).
 * Keys are never added; grove__key_scale multiplies one.
 *
 * The encoding, for a type whose normals have exponents [MIN_EXP - 1,
 * MAX_EXP - 1]: v = f 2^E (1 <= f < 2, E < MIN_EXP - 1) becomes
 * -(3 - f) 2^(C - E) with C = MIN_EXP - MAX_EXP. 3 - f in (1, 2] is exact,
 * each E fills the binade next to E - 1's, so the map is increasing, and
 * every v of a pair of the type (E >= 2 MIN_EXP - 2 DIG - 2) lands on a
 * normal number. Keys leave the per-type kernels as doubles (FN(key_wide)):
 * float keys then become their exact values (a float pair's v >= 2^-300
 * is a normal double), double keys stay as they are. */
#ifndef GROVE_DIST_KEY_H
#define GROVE_DIST_KEY_H

#include <float.h>
#include <math.h>

/* The type's parameters, for T = float or double in the kernel templates. */
#define GROVE__KEY_MIN(T) ((T)(sizeof(T) == sizeof(float) ? FLT_MIN : DBL_MIN))
#define GROVE__KEY_BELOW_MIN(T) ((T)(sizeof(T) == sizeof(float) ? FLT_MIN - FLT_TRUE_MIN : DBL_MIN - DBL_TRUE_MIN))
#define GROVE__KEY_MIN_EXP(T) (sizeof(T) == sizeof(float) ? FLT_MIN_EXP : DBL_MIN_EXP)
#define GROVE__KEY_MAX_EXP(T) (sizeof(T) == sizeof(float) ? FLT_MAX_EXP : DBL_MAX_EXP)
#define GROVE__KEY_DIG(T) (sizeof(T) == sizeof(float) ? FLT_MANT_DIG : DBL_MANT_DIG)

/* The key of v = s 2^k2 (s >= 0, a number of the type) in the type of
 * exponent range min_exp, max_exp, computed in double (exact for either
 * type). A v below every pair's (only an eps can be) keys as -INFINITY. */
static inline double grove__key_pack(double s, long k2, int min_exp, int max_exp)
{
    if (!(s > 0)) return -INFINITY;
    int a = ilogb(s);
    double f = scalbn(s, -a);
    long e = a + k2, c = (long)min_exp - max_exp;
    if (e >= min_exp - 1) return ldexp(f, (int)e);
    if (c - e > max_exp - 2) return -INFINITY;
    return -ldexp(3 - f, (int)(c - e));
}

/* A negative key's v as f 2^*e (1 <= f < 2). */
static inline double grove__key_unpack(double key, int min_exp, int max_exp, long *e)
{
    double g = -key;
    int a = ilogb(g);
    double f = scalbn(g, -a);
    long c = (long)min_exp - max_exp;
    if (f == 1) {
        *e = c - a + 1;
        return 1;
    }
    *e = c - a;
    return 3 - f;
}

/* The distance of a double key. */
static inline double grove__key_dist(double key)
{
    if (key >= 0) return sqrt(key);
    if (key == -INFINITY) return 0;
    long e;
    double f = grove__key_unpack(key, DBL_MIN_EXP, DBL_MAX_EXP, &e);
    long odd = e & 1; /* two's complement: the parity of negative e too */
    return ldexp(sqrt(ldexp(f, (int)odd)), (int)((e - odd) / 2));
}

/* The double key of factor times the value of a double key, rounded once
 * as the product of two numbers is (factor > 0, finite). */
static inline double grove__key_scale(double key, double factor)
{
    if (key == -INFINITY) return key;
    long e;
    double f = key < 0 ? grove__key_unpack(key, DBL_MIN_EXP, DBL_MAX_EXP, &e) : key;
    if (key >= 0) {
        if (key * factor >= DBL_MIN || key == 0) return key * factor;
        e = ilogb(key);
        f = scalbn(key, (int)-e);
    }
    return grove__key_pack(f * factor, e, DBL_MIN_EXP, DBL_MAX_EXP);
}

#endif
