/* The units of one force evaluation. Positions, relative to an origin
 * (below: so that a system far from the origin, or all at one point
 * there, stays finite too, and no bit of a coordinate is lost), and the
 * softening are multiplied by
 * 2^-ex with 2^ex near half the system's size (the larger of its bounding
 * box's half side and half the softening), masses by 2^-em
 * with 2^em near the largest mass (grove__unit_exponent), so the tree, the
 * moments, the opening test and the single-precision kernels see the same
 * numbers, of order one, in any unit system; the results come back
 * multiplied by G 2^(em - 2 ex) (accelerations) and G 2^(em - ex)
 * (potentials). Multiplying by a power of two is exact, so a change of
 * units by powers of two gives the same bits, and any change the same
 * relative accuracy. */
#include "nbody_internal.h"

#include <math.h>

/* v times G 2^e: one multiply by f = G 2^e where f is a normal double
 * (every result is then the one rounding of G 2^e v), else, for units so
 * extreme that f itself over- or underflows, the mantissa of G times v and
 * then ldexp. */
static grove__nb_back back_factor(double G, int e)
{
    int eg = grove__unit_exponent(G);
    grove__nb_back b = {ldexp(G, e), ldexp(G, -eg), eg + e, false};
    b.direct = isnormal(b.f);
    return b;
}

/* Refuse before computing when the potentials cannot be represented: with
 * L the larger of half the bounding box's longest side and half the
 * softening, every particle is within sqrt(12 L^2 + 4 L^2) = 4 L (softened)
 * of the heaviest, of mass m, and all terms of a potential have one sign,
 * so every other particle's |phi| >= G m / (4 L) (for L > 0 there is one:
 * with softening any other, without it one at another point). log2 keeps
 * the test itself finite. (Accelerations have no such bound, terms cancel:
 * those are checked as they are computed.) */
static grove_status check_potentials(double G, double m, double L, size_t n)
{
    if (n < 2 || !(m > 0) || !(L > 0)) return GROVE_OK;
    double log2_bound = log2(G) + log2(m) - log2(L) - 2;
    if (log2_bound < 1024) return GROVE_OK;
    return grove__fail(GROVE_INVALID_ARGUMENT,
                       "gravity: the potentials are at least G m / (4 L) = 2^%.0f (G = %g, largest mass m = %g, "
                       "L = %g), beyond the largest double (2^1024)", log2_bound, G, m, L);
}

/* The origin along one axis, given the centre c of the particles' extent
 * along it and the system's half size `half` (at least that extent's
 * half): c where |c| > 4 half, else 0. A translation by c would round
 * away every bit of a coordinate below the last place of c: a cluster
 * of size 1e-12 at 0 beside one particle at 1e12 (c = 5e11) would
 * become a point. Beyond 4 half every coordinate x of the axis lies
 * within [c/2, 2c], where x - c is exact (Sterbenz); within it none
 * exceeds 5 half, which the scale brings to order one untranslated. */
static double exact_origin(double c, double half)
{
    return fabs(c) > 4 * half ? c : 0;
}

grove_status grove__nb_units_from(const double lo[3], const double hi[3], double mmax, size_t n,
                                  const grove_gravity_params *p, bool potentials, grove__nb_units *u)
{
    /* Halves first, so that the difference of coordinates near +-DBL_MAX
     * stays finite. */
    double half = 0.5 * p->softening, centre[3];
    for (int a = 0; a < 3; a++) {
        double side = 0.5 * hi[a] - 0.5 * lo[a];
        half = side > half ? side : half;
        centre[a] = 0.5 * lo[a] + 0.5 * hi[a];
    }
    for (int a = 0; a < 3; a++) u->origin[a] = exact_origin(centre[a], half);
    if (potentials) {
        grove_status s = check_potentials(p->G, mmax, half, n);
        if (s != GROVE_OK) return s;
    }
    int ex = grove__unit_exponent(half), em = grove__unit_exponent(mmax);
    u->to_length = ldexp(1.0, -ex);
    u->to_mass = ldexp(1.0, -em);
    u->softening = p->softening * u->to_length;
    u->acc = back_factor(p->G, em - 2 * ex);
    u->pot = back_factor(p->G, em - ex);
    return GROVE_OK;
}

grove_status grove__nb_choose_units(const double *pos, const double *mass, size_t n, const grove_gravity_params *p,
                                    bool potentials, int threads, grove__nb_units *u)
{
    double lo[3], hi[3], mmax = 0;
    grove__bounds3(pos, n, threads, lo, hi);
#pragma omp parallel for num_threads(threads) schedule(static) reduction(max : mmax)
    for (size_t i = 0; i < n; i++) mmax = mass[i] > mmax ? mass[i] : mmax;
    return grove__nb_units_from(lo, hi, mmax, n, p, potentials, u);
}
