/* Initial conditions: Plummer spheres (Aarseth, Henon & Wielen 1974), a
 * uniform cold sphere and a two-Plummer collision, from grove_rng so a seed
 * always gives the same particles on one build; the kinds' parameters are
 * checked here (Hernquist and Plummer with a point mass have files of
 * their own). */
#include "ic_internal.h"
#include "nbody_internal.h"

#include <math.h>

static const double PI = GROVE__PI;

void grove_ic_params_init(grove_ic_params *p)
{
    if (!p) return;
    p->kind = GROVE_IC_PLUMMER;
    p->n = 0;
    p->seed = 0;
    p->separation = 10;
    p->impact = 1;
    p->bh_mass = 0.01;
}

void grove__ic_isotropic(grove_rng *rng, double r, double *out)
{
    double z = (1 - 2 * grove_rng_uniform(rng)) * r, phi = 2 * PI * grove_rng_uniform(rng);
    double rho = sqrt(r * r - z * z > 0 ? r * r - z * z : 0);
    out[0] = rho * cos(phi);
    out[1] = rho * sin(phi);
    out[2] = z;
}

void grove__ic_mirror(double *pos, double *vel, size_t first, size_t count)
{
    for (size_t k = 0; k < count; k += 2) {
        double *x = pos + 3 * (first + k), *v = vel + 3 * (first + k);
        for (int a = 0; a < 3; a++) {
            if (k + 1 < count) {
                x[3 + a] = -x[a];
                v[3 + a] = -v[a];
            } else {
                x[a] = v[a] = 0;
            }
        }
    }
}

/* Subtract the mean of n rows of 3 (equal masses: the centre of mass). */
static void centre(double *x, size_t n)
{
    double s[3] = {0, 0, 0};
    for (size_t i = 0; i < n; i++)
        for (int a = 0; a < 3; a++) s[a] += x[3 * i + a];
    for (int a = 0; a < 3; a++) s[a] /= (double)n;
    for (size_t i = 0; i < n; i++)
        for (int a = 0; a < 3; a++) x[3 * i + a] -= s[a];
}

/* n particles of a Plummer sphere of total mass `mtot` in Henon units
 * (for mtot = 1: E = -1/4, scale length 3 pi / 16), centred at rest. */
static void plummer(grove_rng *rng, size_t n, double mtot, double *pos, double *vel, double *mass)
{
    /* Sampled with G = M = a = 1, then scaled: lengths by 3 pi / 16 and
     * velocities by sqrt(M 16 / (3 pi)). */
    double rs = 3 * PI / 16, vs = sqrt(mtot / rs);
    for (size_t i = 0; i < n; i++) {
        double x1;
        do x1 = grove_rng_uniform(rng);
        while (x1 == 0 || x1 > 0.999); /* radii beyond 99.9% of the mass: redraw */
        double r = 1 / sqrt(pow(x1, -2.0 / 3.0) - 1);
        grove__ic_isotropic(rng, r * rs, pos + 3 * i);
        /* Speed: q = v / v_escape from g(q) = q^2 (1 - q^2)^3.5 by rejection
         * (its maximum is below 0.1). */
        double q, y;
        do {
            q = grove_rng_uniform(rng);
            y = 0.1 * grove_rng_uniform(rng);
        } while (y > q * q * pow(1 - q * q, 3.5));
        double v = q * sqrt(2.0) * pow(1 + r * r, -0.25);
        grove__ic_isotropic(rng, v * vs, vel + 3 * i);
        mass[i] = mtot / (double)n;
    }
    centre(pos, n);
    centre(vel, n);
}

static void cold_sphere(grove_rng *rng, size_t n, double *pos, double *vel, double *mass)
{
    for (size_t i = 0; i < n; i++) {
        double p[3], r2;
        do {
            for (int a = 0; a < 3; a++) p[a] = 2 * grove_rng_uniform(rng) - 1;
            r2 = p[0] * p[0] + p[1] * p[1] + p[2] * p[2];
        } while (r2 > 1);
        for (int a = 0; a < 3; a++) {
            pos[3 * i + a] = p[a];
            vel[3 * i + a] = 0;
        }
        mass[i] = 1.0 / (double)n;
    }
    centre(pos, n);
}

/* Two Plummer spheres of mass 1/2 on a parabolic orbit: centres at
 * +-(D/2, b/2, 0), velocities -+(v/2, 0, 0) with v^2 = 2 G M / sqrt(D^2 + b^2)
 * (hypot: D^2 could overflow or underflow). */
static void merger(grove_rng *rng, const grove_ic_params *p, double *pos, double *vel, double *mass)
{
    size_t n1 = p->n / 2, n2 = p->n - n1;
    plummer(rng, n1, 0.5, pos, vel, mass);
    plummer(rng, n2, 0.5, pos + 3 * n1, vel + 3 * n1, mass + n1);
    double d = p->separation, b = p->impact, v = sqrt(2 / hypot(d, b));
    for (size_t i = 0; i < p->n; i++) {
        double sign = i < n1 ? 1 : -1;
        /* Both halves have mass 1/2, so the centre of mass stays at rest. */
        pos[3 * i] += sign * d / 2;
        pos[3 * i + 1] += sign * b / 2;
        vel[3 * i] -= sign * v / 2;
        mass[i] = 0.5 / (double)(i < n1 ? n1 : n2);
    }
}

grove_status grove_ic_generate(const grove_ic_params *params, double *pos, double *vel, double *mass)
{
    grove__clear_error();
    if (!params) return grove__fail(GROVE_INVALID_ARGUMENT, "initial conditions: params is NULL");
    const grove_ic_params *p = params;
    if (p->kind < GROVE_IC_PLUMMER || p->kind > GROVE_IC_PLUMMER_BH)
        return grove__fail(GROVE_INVALID_ARGUMENT, "initial conditions: unknown kind %d", (int)p->kind);
    size_t least = p->kind == GROVE_IC_MERGER || p->kind == GROVE_IC_PLUMMER_BH ? 2 : 1;
    if (p->n < least)
        return grove__fail(GROVE_INVALID_ARGUMENT, "initial conditions: n must be >= %zu, got %zu", least, p->n);
    if (p->n > GROVE__OCT_MAX_N)
        return grove__fail(GROVE_TOO_LARGE, "initial conditions: n = %zu is above %zu", p->n, GROVE__OCT_MAX_N);
    if (!pos || !vel || !mass) return grove__fail(GROVE_INVALID_ARGUMENT, "initial conditions: an output is NULL");
    if (p->kind == GROVE_IC_MERGER &&
        (!isfinite(p->separation) || !(p->separation > 0) || !isfinite(p->impact) || p->impact < 0))
        return grove__fail(GROVE_INVALID_ARGUMENT, "initial conditions: separation must be > 0 and impact >= 0");
    if (p->kind == GROVE_IC_PLUMMER_BH && !(p->bh_mass >= 0 && p->bh_mass < 1))
        return grove__fail(GROVE_INVALID_ARGUMENT, "initial conditions: bh_mass must be in [0, 1), got %g", p->bh_mass);
    grove_rng rng;
    grove_rng_seed(&rng, p->seed);
    switch (p->kind) {
    case GROVE_IC_PLUMMER: plummer(&rng, p->n, 1.0, pos, vel, mass); break;
    case GROVE_IC_COLD: cold_sphere(&rng, p->n, pos, vel, mass); break;
    case GROVE_IC_MERGER: merger(&rng, p, pos, vel, mass); break;
    case GROVE_IC_HERNQUIST: grove__ic_hernquist(&rng, p->n, pos, vel, mass); break;
    case GROVE_IC_PLUMMER_BH: return grove__ic_plummer_bh(&rng, p->n, p->bh_mass, pos, vel, mass);
    }
    return GROVE_OK;
}
