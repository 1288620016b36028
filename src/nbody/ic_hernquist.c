/* A Hernquist (1990) sphere sampled exactly: radii from the inverse of
 * M(r) = M r^2 / (r + a)^2 up to 99% of the mass, speeds from the
 * isotropic distribution function (eq. 17) by rejection, isotropic
 * directions, mirrored pairs. */
#include "ic_internal.h"

#include <math.h>

double grove__hernquist_df(double q, double w)
{
    /* 3 asin q + q sqrt(1 - q^2) (1 - 2 q^2) (8 q^4 - 8 q^2 - 3) loses its
     * digits to cancellation for small q (it is 128/5 q^5 + ...): the
     * series there, whose next term is below 1e-19 of the first. */
    double q2 = q * q, bracket;
    if (q < 0.02)
        bracket = q2 * q2 * q * (128.0 / 5 + q2 * (-192.0 / 7 + q2 * (16.0 / 3 + q2 * 8.0 / 11)));
    else
        bracket = 3 * asin(q) + q * sqrt(w) * (1 - 2 * q2) * (8 * q2 * q2 - 8 * q2 - 3);
    return bracket / (w * w * sqrt(w));
}

void grove__ic_hernquist(grove_rng *rng, size_t n, double *pos, double *vel, double *mass)
{
    const double a = GROVE__HERNQUIST_A, M = 1 / GROVE__HERNQUIST_KEPT;
    for (size_t i = 0; i + 1 < n; i += 2) {
        double u;
        do u = grove_rng_uniform(rng);
        while (u == 0);
        double s = sqrt(GROVE__HERNQUIST_KEPT * u); /* M(r) / M = s^2 */
        double r = a * s / (1 - s);
        grove__ic_isotropic(rng, r, pos + 3 * i);
        /* Speed: density v^2 f(Phi(r) + v^2 / 2) on [0, v_esc]. Proposals
         * v = v_esc u^(1/3) (density v^2), kept with f(E) / f(Phi(r)):
         * f grows with the binding energy, so f(Phi(r)) bounds it.
         * 1 - q^2 = r / (r + a) + a v^2 / (2 M) keeps its digits at small r. */
        double w0 = r / (r + a), q0 = sqrt(a / (r + a)), top = grove__hernquist_df(q0, w0);
        double vesc = sqrt(2 * M / (r + a)), v, q, w;
        do {
            v = vesc * cbrt(grove_rng_uniform(rng));
            w = w0 + a * v * v / (2 * M);
            q = w < 1 ? sqrt(1 - w) : 0;
        } while (w >= 1 || grove_rng_uniform(rng) * top >= grove__hernquist_df(q, w));
        grove__ic_isotropic(rng, v, vel + 3 * i);
    }
    grove__ic_mirror(pos, vel, 0, n);
    for (size_t i = 0; i < n; i++) mass[i] = 1.0 / (double)n;
}
