/* Gravity across the doubles' range (docs/nbody.md, "Any unit system"): a
 * small system inside a large one keeps its accuracy, theta = 0 to double
 * rounding and theta > 0 to the tree's, against a direct sum in long
 * double (whose range holds the square of any difference of doubles); and
 * results that would underflow below the normal doubles are refused as
 * those that overflow are, by grove_gravity and by the simulation. */
#include "test.h"

#include <float.h>
#include <math.h>

/* Particle i's acceleration and potential (G = 1, no softening) summed in
 * long double, and the scale of the acceleration's terms, sum m / r^2,
 * which bounds the rounding of any order of summation. */
static void direct_ld(const double *pos, const double *m, size_t n, size_t i, long double a[3], long double *phi,
                      long double *scale)
{
    a[0] = a[1] = a[2] = *phi = *scale = 0;
    for (size_t j = 0; j < n; j++) {
        long double d[3], r2 = 0;
        for (int k = 0; k < 3; k++) {
            d[k] = (long double)pos[3 * j + k] - (long double)pos[3 * i + k];
            r2 += d[k] * d[k];
        }
        if (r2 == 0) continue;
        long double r = sqrtl(r2);
        for (int k = 0; k < 3; k++) a[k] += m[j] * d[k] / (r2 * r);
        *phi -= m[j] / r;
        *scale += m[j] / r2;
    }
}

static long double norm3(const long double v[3]) { return sqrtl(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]); }

static int by_value(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

static double median(double *v, size_t n)
{
    qsort(v, n, sizeof *v, by_value);
    return v[n / 2];
}

/* Errors of grove's results against direct_ld at particles [0, count):
 * the largest acceleration error over its terms' scale, the medians of the
 * relative acceleration and potential errors, and the largest relative
 * potential error. */
typedef struct range_errors {
    double scaled_max, acc_median, pot_median, pot_max;
} range_errors;

static range_errors errors_of(const double *pos, const double *m, size_t n, size_t count, const double *acc,
                              const double *pot)
{
    double *ea = malloc(count * sizeof *ea), *ep = malloc(count * sizeof *ep);
    range_errors r = {0, 0, 0, 0};
    for (size_t i = 0; i < count; i++) {
        long double a[3], phi, scale, d[3];
        direct_ld(pos, m, n, i, a, &phi, &scale);
        for (int k = 0; k < 3; k++) d[k] = (long double)acc[3 * i + k] - a[k];
        double s = (double)(norm3(d) / scale);
        r.scaled_max = s > r.scaled_max ? s : r.scaled_max;
        ea[i] = (double)(norm3(d) / norm3(a));
        ep[i] = (double)(fabsl((long double)pot[i] - phi) / fabsl(phi));
        r.pot_max = ep[i] > r.pot_max ? ep[i] : r.pot_max;
    }
    r.acc_median = median(ea, count);
    r.pot_median = median(ep, count);
    free(ea);
    free(ep);
    return r;
}

/* A cluster of n - 1 particles, normal with deviation `spread` around the
 * origin, of mass `m` each, then one of mass 1 at (D, 0, 0): the box's
 * centre is D / 2 away from the cluster. */
static double *cluster_and_far_one(size_t n, double spread, double D, double m, double *mass, uint64_t seed)
{
    grove_rng rng;
    grove_rng_seed(&rng, seed);
    double *pos = malloc(3 * n * sizeof *pos);
    for (size_t i = 0; i + 1 < n; i++) {
        for (int k = 0; k < 3; k++) pos[3 * i + k] = spread * grove_rng_normal(&rng);
        mass[i] = m;
    }
    pos[3 * (n - 1)] = D;
    pos[3 * (n - 1) + 1] = pos[3 * (n - 1) + 2] = 0;
    mass[n - 1] = 1;
    return pos;
}

/* The outside test's cases: the cluster's forces and potentials were
 * about 0 (a translation to the box's centre rounded the cluster to a
 * point), or 2e-9 off at D = 1e8 with theta = 0. The last case puts the
 * cluster's pairs 1e-180 of the system's size apart, where their squared
 * distances underflow even in double (light particles, so that their
 * forces stay within the doubles). */
TEST(gravity_small_system_inside_a_large_one)
{
    static const struct {
        double spread, D, m;
    } cases[] = {{1e-12, 1e12, 1}, {1, 1e4, 1}, {1, 1e8, 1}, {1, 1e12, 1}, {1e-90, 1e90, 1e-100}};
    size_t n = 201;
    double *mass = malloc(n * sizeof *mass), *acc = malloc(3 * n * sizeof *acc), *pot = malloc(n * sizeof *pot);
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        double *pos = cluster_and_far_one(n, cases[c].spread, cases[c].D, cases[c].m, mass, 3100 + c);
        for (int t = 0; t < 2; t++) {
            grove_gravity_params p;
            grove_gravity_params_init(&p);
            p.theta = t ? 0.5 : 0;
            grove_status s = grove_gravity(grove_points_f64(pos, n, 3), mass, &p, acc, pot, NULL, NULL);
            CHECK_MSG(s == GROVE_OK, "spread %g, D %g, theta %g: %s", cases[c].spread, cases[c].D, p.theta,
                      grove_last_error());
            if (s != GROVE_OK) continue;
            range_errors cl = errors_of(pos, mass, n, n - 1, acc, pot);
            long double a[3], phi, scale;
            direct_ld(pos, mass, n, n - 1, a, &phi, &scale);
            long double d[3] = {acc[3 * (n - 1)] - a[0], acc[3 * (n - 1) + 1] - a[1], acc[3 * (n - 1) + 2] - a[2]};
            double far = (double)(norm3(d) / norm3(a));
            if (t == 0)
                CHECK_MSG(cl.scaled_max < 1e-13 && cl.pot_max < 1e-13 && far < 1e-13,
                          "spread %g, D %g, theta 0: cluster errors %g (of the terms' scale), potentials %g; the far "
                          "one's %g",
                          cases[c].spread, cases[c].D, cl.scaled_max, cl.pot_max, far);
            else
                CHECK_MSG(cl.acc_median < 3e-3 && cl.pot_median < 1e-3 && far < 1e-3,
                          "spread %g, D %g, theta 0.5: cluster median errors %g (potentials %g); the far one's %g",
                          cases[c].spread, cases[c].D, cl.acc_median, cl.pot_median, far);
        }
        free(pos);
    }
    free(mass), free(acc), free(pot);
}

/* A clump of 8 particles 1e-12 apart inside a Plummer sphere: single
 * precision, relative to a group's centre, holds no such difference
 * (their float positions coincide), so the tree must sum them in double;
 * their mutual forces, about 1e24 times the sphere's, are theirs to
 * tree accuracy. */
TEST(gravity_tree_resolves_a_clump_below_single_precision)
{
    size_t n = 2000, clump = 8;
    test_particles s = test_ic(GROVE_IC_PLUMMER, n, 3200, 0);
    double *pos = s.x, *mass = s.m, *acc = malloc(3 * n * sizeof *acc), *pot = malloc(n * sizeof *pot);
    grove_rng rng;
    grove_rng_seed(&rng, 3201);
    for (size_t i = 0; i < clump; i++)
        for (int k = 0; k < 3; k++) pos[3 * i + k] = (k == 0 ? 0.1 : 0) + 1e-12 * grove_rng_normal(&rng);
    grove_gravity_params p;
    grove_gravity_params_init(&p);
    p.theta = 0.5;
    REQUIRE_OK(grove_gravity(grove_points_f64(pos, n, 3), mass, &p, acc, pot, NULL, NULL));
    range_errors e = errors_of(pos, mass, n, clump, acc, pot);
    CHECK_MSG(e.acc_median < 1e-3 && e.pot_median < 1e-3, "clump: median errors %g (potentials %g)", e.acc_median,
              e.pot_median);
    free(s.x), free(acc), free(pot);
}

/* Lengths times 2^kl and masses times 2^km with G: accelerations are G
 * 2^(km - 2 kl) times the Henon ones, potentials G 2^(km - kl) times. */
typedef struct unit_case {
    int kl, km;
    double G;
} unit_case;

/* grove_gravity on the Plummer sphere (pos, mass) in the units u, acc and
 * (unless NULL) pot out; the call's status. */
static grove_status gravity_in(const double *pos, const double *mass, size_t n, unit_case u, double theta,
                               double *acc, double *pot)
{
    double *x = malloc(3 * n * sizeof *x), *m = malloc(n * sizeof *m);
    for (size_t i = 0; i < 3 * n; i++) x[i] = ldexp(pos[i], u.kl);
    for (size_t i = 0; i < n; i++) m[i] = ldexp(mass[i], u.km);
    grove_gravity_params p;
    grove_gravity_params_init(&p);
    p.theta = theta;
    p.G = u.G;
    grove_status s = grove_gravity(grove_points_f64(x, n, 3), m, &p, acc, pot, NULL, NULL);
    free(x), free(m);
    return s;
}

/* The largest relative difference of got from want times f 2^e. */
static double scaled_from(const double *got, const double *want, size_t count, double f, int e)
{
    double worst = 0;
    for (size_t i = 0; i < count; i++) {
        double w = ldexp(want[i] * f, e), d = fabs(got[i] - w) / fabs(w);
        worst = w != 0 && d > worst ? d : worst;
    }
    return worst;
}

/* The outside test's case, Plummer lengths x 1e140 and masses x 1e-30
 * (here 2^465 and 2^-100) with G = 6.674e-11, put accelerations near
 * 1e-320, subnormal, with 1e-4 of their precision left: refused, naming
 * the particle, as overflow is. Units where they stay normal give the
 * Henon results scaled, to rounding; potentials that underflow where the
 * accelerations do not are refused only when asked for. */
TEST(gravity_refuses_results_that_underflow)
{
    size_t n = 300;
    test_particles s = test_ic(GROVE_IC_PLUMMER, n, 3300, 0);
    double *pos = s.x, *mass = s.m, *acc0 = malloc(3 * n * sizeof *acc0), *pot0 = malloc(n * sizeof *pot0);
    double *acc = malloc(3 * n * sizeof *acc), *pot = malloc(n * sizeof *pot);
    const double G = 6.674e-11;
    for (int t = 0; t < 2; t++) {
        double theta = t ? 0.75 : 0;
        REQUIRE_OK(gravity_in(pos, mass, n, (unit_case){0, 0, 1}, theta, acc0, pot0));
        CHECK_FAILS(gravity_in(pos, mass, n, (unit_case){465, -100, G}, theta, acc, pot), GROVE_INVALID_ARGUMENT,
                    "acceleration, ");
        CHECK(strstr(grove_last_error(), "below the smallest normal double") != NULL);
        /* 2^400: accelerations near 1e-281, normal */
        CHECK_OK(gravity_in(pos, mass, n, (unit_case){400, -100, G}, theta, acc, pot));
        double da = scaled_from(acc, acc0, 3 * n, G, -100 - 800), dp = scaled_from(pot, pot0, n, G, -100 - 400);
        CHECK_MSG(da < 4 * DBL_EPSILON && dp < 4 * DBL_EPSILON, "theta %g, lengths x 2^400: differences %g, %g",
                  theta, da, dp);
        /* Henon potentials lie within [2^-5, 2] and accelerations above
         * 2^-14: times 2^-1026 the potentials are subnormal, times 2^-996
         * the accelerations are not */
        unit_case low_pot = {-30, -956, 0x1p-100};
        CHECK_FAILS(gravity_in(pos, mass, n, low_pot, theta, acc, pot), GROVE_INVALID_ARGUMENT, "potential, ");
        CHECK_OK(gravity_in(pos, mass, n, low_pot, theta, acc, NULL));
        da = scaled_from(acc, acc0, 3 * n, 1, -100 - 956 + 60);
        CHECK_MSG(da < 4 * DBL_EPSILON, "theta %g, potentials underflowing: accelerations differ by %g", theta, da);
    }
    free(s.x), free(acc0), free(pot0), free(acc), free(pot);
}

/* The simulation evaluates forces through the same conversion: its
 * Plummer run at lengths x 1e150, masses x 1e-30 in SI units lost 3e-2 of
 * its energy (accelerations underflowed to 0); it is refused at creation,
 * and lengths x 1e120 (accelerations near 1e-281) conserve energy as the
 * Henon run does. */
TEST(nbody_refuses_units_whose_accelerations_underflow)
{
    size_t n = 200;
    const double G = 6.674e-11, lengths[] = {1, 1e150, 1e120};
    double dE[3] = {0, 0, 0};
    for (size_t c = 0; c < 3; c++) {
        test_particles ic = test_ic(GROVE_IC_PLUMMER, n, 3400, 0);
        double *x = ic.x, *v = ic.v, *m = ic.m;
        /* Henon units to lengths L, masses M, G: velocities sqrt(G M / L), time L / that */
        double L = lengths[c], M = c ? 1e-30 : 1, g = c ? G : 1, vu = sqrt(g) * sqrt(M) / sqrt(L);
        for (size_t i = 0; i < 3 * n; i++) x[i] *= L, v[i] *= vu;
        for (size_t i = 0; i < n; i++) m[i] *= M;
        grove_nbody_params p;
        grove_nbody_params_init(&p);
        p.gravity.theta = 0;
        p.gravity.softening = 0.01 * L;
        p.gravity.G = g;
        p.dt = L / vu / 128;
        grove_nbody *sim = NULL;
        grove_status s = grove_nbody_create(grove_points_f64(x, n, 3), v, m, &p, NULL, &sim);
        if (c == 1) {
            CHECK_MSG(s == GROVE_INVALID_ARGUMENT && strstr(grove_last_error(), "below the smallest normal double"),
                      "lengths x 1e150: %s", s == GROVE_OK ? "created" : grove_last_error());
        } else {
            CHECK_OK(s);
            grove_nbody_diag d0, d1;
            if (s == GROVE_OK && grove_nbody_diagnostics(sim, &d0) == GROVE_OK &&
                grove_nbody_step(sim, 20, NULL) == GROVE_OK && grove_nbody_diagnostics(sim, &d1) == GROVE_OK)
                dE[c] = (d1.energy - d0.energy) / fabs(d0.energy);
            else
                CHECK_MSG(false, "lengths x %g: %s", L, grove_last_error());
        }
        grove_nbody_free(sim);
        free(ic.x);
    }
    CHECK_MSG(dE[0] != 0 && fabs(dE[2] - dE[0]) <= 1e-3 * fabs(dE[0]), "dE/E %g at lengths x 1e120, %g in Henon units",
              dE[2], dE[0]);
}
