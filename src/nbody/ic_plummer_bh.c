/* A Plummer sphere around a central point mass: the stars' isotropic
 * distribution function in the combined potential from Eddington's
 * formula, integrated numerically on a table of energies and interpolated
 * monotonically; where the integral is negative (a cored density around a
 * point mass has no non-negative isotropic DF near the centre, An & Evans
 * 2006) it is clipped to 0. */
#include "ic_internal.h"

#include <math.h>

double grove__plummer_bh_psi(const grove__eddington *t, double r)
{
    return (t->mu > 0 ? t->mu / r : 0) + t->ms / sqrt(r * r + t->b * t->b);
}

/* d^2 rho / d Psi^2 at radius r, from the r-derivatives of the stars'
 * density rho = C (1 + y)^(-5/2), y = r^2 / b^2, and of Psi:
 *   rho'  = -5 C r / b^2 (1 + y)^(-7/2)
 *   rho'' = -5 C / b^2 (1 + y)^(-9/2) (1 - 6 y)
 *   Psi'  = -mu / r^2 - M_s r (r^2 + b^2)^(-3/2)
 *   Psi'' = 2 mu / r^3 - M_s (b^2 - 2 r^2) (r^2 + b^2)^(-5/2)
 *   rho_PsiPsi = (rho'' Psi' - rho' Psi'') / Psi'^3 */
static double rho_psipsi(const grove__eddington *t, double r)
{
    double b2 = t->b * t->b, y = r * r / b2, C = 3 * t->ms / (4 * GROVE__PI * b2 * t->b), s2 = r * r + b2;
    double d1 = -5 * C * r / b2 * pow(1 + y, -3.5), d2 = -5 * C / b2 * pow(1 + y, -4.5) * (1 - 6 * y);
    double p1 = -t->ms * r / (s2 * sqrt(s2)), p2 = -t->ms * (b2 - 2 * r * r) / (s2 * s2 * sqrt(s2));
    if (t->mu > 0) {
        p1 -= t->mu / (r * r);
        p2 += 2 * t->mu / (r * r * r);
    }
    return (d2 * p1 - d1 * p2) / (p1 * p1 * p1);
}

/* The radius where Psi(r) = psi (Psi decreases with r): bisection in ln r. */
static double radius_at(const grove__eddington *t, double psi)
{
    double lo = log(t->b) - 45, hi = log(t->b) + 45;
    for (int k = 0; k < 64; k++) {
        double mid = 0.5 * (lo + hi);
        if (grove__plummer_bh_psi(t, exp(mid)) > psi) lo = mid;
        else hi = mid;
    }
    return exp(0.5 * (lo + hi));
}

static double g_at(const grove__eddington *t, double psi) { return rho_psipsi(t, radius_at(t, psi)); }

/* Simpson's rule of `intervals` (even) on [lo, hi] for fn(t, x, e). */
static double simpson(const grove__eddington *t, double e, double lo, double hi, int intervals,
                      double (*fn)(const grove__eddington *, double, double))
{
    double h = (hi - lo) / intervals, sum = fn(t, lo, e) + fn(t, hi, e);
    for (int k = 1; k < intervals; k++) sum += (k % 2 ? 4 : 2) * fn(t, lo + k * h, e);
    return sum * h / 3;
}

/* The Eddington integrand on [E/2, E] with Psi = E - E s^2 / 2 (no 1/sqrt
 * singularity left): sqrt(2 E) g(Psi) ds. */
static double upper_part(const grove__eddington *t, double s, double e)
{
    return sqrt(2 * e) * g_at(t, e - 0.5 * e * s * s);
}

/* ... and on (0, E/2] in x = ln Psi: g(Psi) Psi / sqrt(E - Psi) dx. */
static double lower_part(const grove__eddington *t, double x, double e)
{
    double psi = exp(x);
    return g_at(t, psi) * psi / sqrt(e - psi);
}

/* Eddington: f(E) = 1 / (sqrt(8) pi^2) int_0^E rho_PsiPsi dPsi / sqrt(E - Psi)
 * (the boundary term (d rho / d Psi)(0) / sqrt(E) vanishes: rho ~ Psi^5
 * far out). The lower part starts at E 1e-9, below which g ~ Psi^3 adds
 * less than 1e-30 of it. */
static double eddington(const grove__eddington *t, double e)
{
    double lower = simpson(t, e, log(e * 1e-9), log(0.5 * e), 128, lower_part);
    double upper = simpson(t, e, 0, 1, 128, upper_part);
    return (lower + upper) / (sqrt(8.0) * GROVE__PI * GROVE__PI);
}

grove_status grove__eddington_build(grove__eddington *t, double mu, double ms, double b, double e_max, size_t count)
{
    *t = (grove__eddington){.mu = mu, .ms = ms, .b = b, .count = count};
    t->f = grove__malloc(3 * count * sizeof(double), "plummer-bh distribution table");
    if (!t->f) return GROVE_OUT_OF_MEMORY;
    t->slope = t->f + count;
    t->up = t->slope + count;
    /* Nodes from 1e-6 e_max to e_max; below, the E^(7/2) tail. */
    t->log_lo = log(e_max) - 6 * log(10.0);
    t->step = (log(e_max) - t->log_lo) / (double)(count - 1);
    for (size_t k = 0; k < count; k++) {
        double f = eddington(t, k + 1 < count ? exp(t->log_lo + (double)k * t->step) : e_max);
        if (f < 0) t->clipped++;
        t->f[k] = f > 0 ? f : 0;
        t->up[k] = k > 0 && t->up[k - 1] > t->f[k] ? t->up[k - 1] : t->f[k];
    }
    /* Fritsch-Butland slopes (harmonic mean of the neighbouring secants,
     * 0 at an extremum): the interpolant is monotone between nodes. */
    for (size_t k = 0; k < count; k++) {
        double left = k > 0 ? (t->f[k] - t->f[k - 1]) / t->step : 0;
        double right = k + 1 < count ? (t->f[k + 1] - t->f[k]) / t->step : 0;
        if (k == 0) t->slope[k] = right;
        else if (k + 1 == count) t->slope[k] = left;
        else t->slope[k] = left * right > 0 ? 2 / (1 / left + 1 / right) : 0;
    }
    return GROVE_OK;
}

void grove__eddington_free(grove__eddington *t)
{
    grove__free(t->f);
    t->f = NULL;
}

double grove__eddington_f(const grove__eddington *t, double e)
{
    if (!(e > 0)) return 0;
    double x = (log(e) - t->log_lo) / t->step;
    if (x <= 0) return t->f[0] * pow(e / exp(t->log_lo), 3.5);
    size_t k = (size_t)x;
    if (k + 1 >= t->count) return t->f[t->count - 1];
    double s = x - (double)k, s2 = s * s, s3 = s2 * s;
    return (2 * s3 - 3 * s2 + 1) * t->f[k] + (s3 - 2 * s2 + s) * t->step * t->slope[k] +
           (-2 * s3 + 3 * s2) * t->f[k + 1] + (s3 - s2) * t->step * t->slope[k + 1];
}

double grove__eddington_bound(const grove__eddington *t, double e)
{
    double x = (log(e) - t->log_lo) / t->step;
    if (x <= 0) return t->up[0];
    size_t k = (size_t)x + 1;
    return t->up[k < t->count ? k : t->count - 1];
}

grove_status grove__ic_plummer_bh(grove_rng *rng, size_t n, double mu, double *pos, double *vel, double *mass)
{
    grove__eddington t = {.mu = mu, .ms = 1 - mu, .b = 3 * GROVE__PI / 16};
    /* Radii and directions first (stars are rows 1.., even offsets
     * drawn), the deepest potential among them sets the table's top. */
    double e_max = 0;
    for (size_t i = 1; i + 1 < n; i += 2) {
        double x1;
        do x1 = grove_rng_uniform(rng);
        while (x1 == 0 || x1 > 0.999); /* beyond 99.9% of the mass: redraw, as for plummer */
        double r = t.b / sqrt(pow(x1, -2.0 / 3.0) - 1), psi = grove__plummer_bh_psi(&t, r);
        grove__ic_isotropic(rng, r, pos + 3 * i);
        e_max = psi > e_max ? psi : e_max;
    }
    if (e_max > 0) {
        grove_status s = grove__eddington_build(&t, t.mu, t.ms, t.b, e_max, 384);
        if (s != GROVE_OK) return s;
    }
    /* Speeds: density v^2 f(Psi(r) - v^2 / 2) on [0, sqrt(2 Psi)], by
     * proposals of density v^2 kept with f(E) / bound(Psi(r)). */
    for (size_t i = 1; i + 1 < n; i += 2) {
        const double *x = pos + 3 * i;
        double psi = grove__plummer_bh_psi(&t, sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]));
        double top = grove__eddington_bound(&t, psi), vesc = sqrt(2 * psi), v;
        do v = vesc * cbrt(grove_rng_uniform(rng));
        while (grove_rng_uniform(rng) * top >= grove__eddington_f(&t, psi - 0.5 * v * v));
        grove__ic_isotropic(rng, v, vel + 3 * i);
    }
    grove__eddington_free(&t);
    for (int a = 0; a < 3; a++) pos[a] = vel[a] = 0;
    grove__ic_mirror(pos, vel, 1, n - 1);
    mass[0] = mu;
    for (size_t i = 1; i < n; i++) mass[i] = (1 - mu) / (double)(n - 1);
    return GROVE_OK;
}
