/* The units of one force evaluation. Positions and the softening are
 * multiplied by 2^-ex with 2^ex near half the system's size (the larger of
 * its bounding box's half side and half the softening), masses by 2^-em
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

/* Refuse when the scale G m / L^power of the results (for the largest mass
 * m and half the system's size L) is at least 2^1024: results of that
 * order are beyond the largest double. log2 keeps the test itself finite. */
static grove_status check_scale(const char *what, const char *formula, double G, double m, double L, int power)
{
    if (!(m > 0) || !(L > 0)) return GROVE_OK;
    double log2_scale = log2(G) + log2(m) - power * log2(L);
    if (log2_scale < 1024) return GROVE_OK;
    return grove__fail(GROVE_INVALID_ARGUMENT,
                       "gravity: the %s are of order %s = 2^%.0f (G = %g, largest mass m = %g, half size L = %g), "
                       "beyond the largest double (2^1024)",
                       what, formula, log2_scale, G, m, L);
}

grove_status grove__nb_choose_units(const double *pos, const double *mass, size_t n, const grove_gravity_params *p,
                                    bool potentials, int threads, grove__nb_units *u)
{
    double x0 = pos[0], y0 = pos[1], z0 = pos[2], x1 = x0, y1 = y0, z1 = z0, mmax = 0;
#pragma omp parallel for num_threads(threads) schedule(static) reduction(min : x0, y0, z0) \
    reduction(max : x1, y1, z1, mmax)
    for (size_t i = 0; i < n; i++) {
        const double *q = pos + 3 * i;
        x0 = q[0] < x0 ? q[0] : x0;
        y0 = q[1] < y0 ? q[1] : y0;
        z0 = q[2] < z0 ? q[2] : z0;
        x1 = q[0] > x1 ? q[0] : x1;
        y1 = q[1] > y1 ? q[1] : y1;
        z1 = q[2] > z1 ? q[2] : z1;
        mmax = mass[i] > mmax ? mass[i] : mmax;
    }
    /* Halves first, so that the difference of coordinates near +-DBL_MAX
     * stays finite. */
    double half = 0.5 * p->softening, side[3] = {0.5 * x1 - 0.5 * x0, 0.5 * y1 - 0.5 * y0, 0.5 * z1 - 0.5 * z0};
    for (int a = 0; a < 3; a++) half = side[a] > half ? side[a] : half;
    grove_status s = check_scale("accelerations", "G m / L^2", p->G, mmax, half, 2);
    if (s == GROVE_OK && potentials) s = check_scale("potentials", "G m / L", p->G, mmax, half, 1);
    if (s != GROVE_OK) return s;
    int ex = grove__unit_exponent(half), em = grove__unit_exponent(mmax);
    u->to_length = ldexp(1.0, -ex);
    u->to_mass = ldexp(1.0, -em);
    u->softening = p->softening * u->to_length;
    u->acc = back_factor(p->G, em - 2 * ex);
    u->pot = back_factor(p->G, em - ex);
    return GROVE_OK;
}
