/* Gravity on a device (src/device/gravity.c) against the CPU path and an
 * independent direct sum: the same tree and lists (interaction counts
 * equal), accelerations and potentials within single-precision rounding
 * of the CPU's, the documented accuracy, theta = 0 to double rounding,
 * the host's walk for groups whose level lists outgrow the device's
 * scratch, degenerate inputs, the CLI. Runs on any OpenCL device with
 * double precision (PoCL on a CPU-only machine), or on CUDA with
 * GROVE_TEST_DEVICE=cuda; skipped, saying why, where there is none. */
#include "test.h"

#include <math.h>

static int by_value(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

/* The device's and the CPU's results for c with p: interaction counts
 * and tree equal, every acceleration within rel of the CPU's (relative to
 * it, plus rel of the median acceleration for those near zero), every
 * potential within rel. Returns how many particles have exactly the
 * CPU's bits. */
static size_t compare_with_cpu(const test_particles *c, const grove_gravity_params *p, size_t budget, double rel,
                               const char *what)
{
    size_t n = c->n, same = 0;
    double *a0 = malloc(3 * n * sizeof *a0), *a1 = malloc(3 * n * sizeof *a1);
    double *p0 = malloc(n * sizeof *p0), *p1 = malloc(n * sizeof *p1), *mag = malloc(n * sizeof *mag);
    grove_gravity_stats s0, s1;
    grove_options dev = test_device_options(budget);
    CHECK_OK(grove_gravity(grove_points_f64(c->x, n, 3), c->m, p, a0, p0, &s0, NULL));
    grove_status st = grove_gravity(grove_points_f64(c->x, n, 3), c->m, p, a1, p1, &s1, &dev);
    CHECK_MSG(st == GROVE_OK, "%s: device: %s", what, grove_last_error());
    if (st == GROVE_OK) {
        CHECK_MSG(s0.particle_interactions == s1.particle_interactions && s0.cell_interactions == s1.cell_interactions &&
                      s0.cells == s1.cells && s0.leaves == s1.leaves && s0.groups == s1.groups && s0.depth == s1.depth,
                  "%s: interactions %g + %g on the device, %g + %g on the cpu", what, s1.particle_interactions,
                  s1.cell_interactions, s0.particle_interactions, s0.cell_interactions);
        for (size_t i = 0; i < n; i++) mag[i] = sqrt(a0[3 * i] * a0[3 * i] + a0[3 * i + 1] * a0[3 * i + 1] +
                                                     a0[3 * i + 2] * a0[3 * i + 2]);
        double *sorted = malloc(n * sizeof *sorted);
        memcpy(sorted, mag, n * sizeof *sorted);
        qsort(sorted, n, sizeof *sorted, by_value);
        double median = sorted[n / 2], worst = 0, worst_pot = 0;
        free(sorted);
        for (size_t i = 0; i < n; i++) {
            double d2 = 0;
            for (int k = 0; k < 3; k++) d2 += (a1[3 * i + k] - a0[3 * i + k]) * (a1[3 * i + k] - a0[3 * i + k]);
            double e = sqrt(d2) / (mag[i] + median), ep = fabs(p1[i] - p0[i]) / (fabs(p0[i]) + 1e-300);
            worst = e > worst ? e : worst;
            worst_pot = ep > worst_pot ? ep : worst_pot;
            same += memcmp(a0 + 3 * i, a1 + 3 * i, 3 * sizeof *a0) == 0 && p0[i] == p1[i];
        }
        CHECK_MSG(worst <= rel && worst_pot <= rel, "%s: device differs from the cpu by %.3g (acceleration), %.3g "
                  "(potential), allowed %.3g", what, worst, worst_pot, rel);
    }
    free(a0), free(a1), free(p0), free(p1), free(mag);
    return same;
}

/* The default parameters with this softening. */
static grove_gravity_params softened(double softening)
{
    grove_gravity_params p;
    grove_gravity_params_init(&p);
    p.softening = softening;
    return p;
}

TEST(device_gravity_matches_cpu)
{
    if (!test_device_ready()) return;
    test_particles plummer = test_ic(GROVE_IC_PLUMMER, 3000, 3, 0), cold = test_ic(GROVE_IC_COLD, 2000, 4, 0);
    /* Parameters across the kernel's cases: tiles that fill (theta 0.5,
     * group 256), groups of one, leaves of one, no softening. */
    static const struct {
        double theta, eps;
        size_t leaf, group;
    } cases[] = {{0.75, 0.01, 16, 64}, {0.5, 0.01, 16, 256}, {1, 0, 16, 64}, {0.75, 0.01, 1, 1}, {0.6, 0.02, 64, 32}};
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        grove_gravity_params p;
        grove_gravity_params_init(&p);
        p.theta = cases[k].theta;
        p.softening = cases[k].eps;
        p.leaf_size = cases[k].leaf;
        p.group_size = cases[k].group;
        char what[96];
        snprintf(what, sizeof what, "plummer theta %g eps %g leaf %zu group %zu", p.theta, p.softening, p.leaf_size,
                 p.group_size);
        /* Single precision terms summed in another order: a few 1e-6. */
        compare_with_cpu(&plummer, &p, 0, 2e-5, what);
        snprintf(what, sizeof what, "cold theta %g group %zu", p.theta, p.group_size);
        compare_with_cpu(&cold, &p, 0, 2e-5, what);
    }
    free(plummer.x);
    free(cold.x);
}

TEST(device_gravity_host_walks_groups_that_outgrow_the_scratch)
{
    if (!test_device_ready()) return;
    /* A budget of 32 KiB leaves each group's level lists about a hundred
     * cells: most groups outgrow them, and the host walks those as the
     * CPU does (the same bits); the others stay on the device. */
    test_particles c = test_ic(GROVE_IC_PLUMMER, 3000, 9, 0);
    grove_gravity_params p = softened(0.01);
    size_t same = compare_with_cpu(&c, &p, 32768, 2e-5, "small scratch");
    CHECK_MSG(same > c.n / 2 && same < c.n, "%zu of %zu particles have the cpu's bits", same, c.n);
    /* With the whole budget no group spills: none has to be bitwise. */
    same = compare_with_cpu(&c, &p, 0, 2e-5, "whole scratch");
    CHECK_MSG(same < c.n / 2, "%zu of %zu particles have the cpu's bits without spills", same, c.n);
    free(c.x);
}

TEST(device_gravity_against_direct_sum)
{
    if (!test_device_ready()) return;
    size_t n = 4000;
    test_particles c = test_ic(GROVE_IC_PLUMMER, n, 5, 0);
    double *acc = malloc(3 * n * sizeof *acc), *pot = malloc(n * sizeof *pot), *err = malloc(n * sizeof *err);
    grove_options dev = test_device_options(0);
    /* theta 0: the direct sum in double; 0.75 and 0.5: the documented
     * bounds (docs/nbody.md, test_gravity.c's check_bounds). */
    static const double thetas[] = {0, 0.75, 0.5}, median_bound[] = {1e-12, 1.1e-3, 2.5e-4},
                        p99_bound[] = {1e-12, 5.3e-3, 1.0e-3};
    for (int t = 0; t < 3; t++) {
        grove_gravity_params p = softened(0.01);
        p.theta = thetas[t];
        REQUIRE_OK(grove_gravity(grove_points_f64(c.x, n, 3), c.m, &p, acc, pot, NULL, &dev));
        double worst_pot = 0;
        for (size_t i = 0; i < n; i++) {
            double a[3], phi, d2 = 0, a2 = 0;
            test_direct_gravity(c.x, c.m, n, i, 0.01, a, &phi);
            for (int k = 0; k < 3; k++) {
                d2 += (acc[3 * i + k] - a[k]) * (acc[3 * i + k] - a[k]);
                a2 += a[k] * a[k];
            }
            err[i] = sqrt(d2 / a2);
            double pe = fabs(pot[i] - phi) / fabs(phi);
            worst_pot = pe > worst_pot ? pe : worst_pot;
        }
        qsort(err, n, sizeof *err, by_value);
        CHECK_MSG(err[n / 2] < median_bound[t] && err[(size_t)(0.99 * (n - 1))] < p99_bound[t],
                  "theta %g: median %.3g, p99 %.3g", thetas[t], err[n / 2], err[(size_t)(0.99 * (n - 1))]);
        CHECK_MSG(thetas[t] > 0 || worst_pot < 1e-12, "theta 0: potential error %.3g", worst_pot);
    }
    free(acc), free(pot), free(err), free(c.x);
}

TEST(device_gravity_degenerate_inputs)
{
    if (!test_device_ready()) return;
    grove_options dev = test_device_options(0);
    grove_gravity_params p;
    grove_gravity_params_init(&p);
    /* One particle: nothing; two: Newton (G = 2) to double rounding at
     * theta 0 and float rounding above. */
    double x[3] = {1, 2, 3}, m[2] = {2, 0}, a[6], phi[2];
    CHECK_OK(grove_gravity(grove_points_f64(x, 1, 3), m, &p, a, phi, NULL, &dev));
    CHECK(a[0] == 0 && a[1] == 0 && a[2] == 0 && phi[0] == 0);
    double y[6] = {0, 0, 0, 2, 0, 0}, mm[2] = {1, 3};
    p.G = 2;
    for (int k = 0; k < 2; k++) {
        p.theta = k == 0 ? 0 : 0.75;
        double tol = k == 0 ? 1e-15 : 1e-6;
        CHECK_OK(grove_gravity(grove_points_f64(y, 2, 3), mm, &p, a, phi, NULL, &dev));
        CHECK(fabs(a[0] - 2 * 3 / 4.0) < tol * 1.5 && fabs(a[3] + 2 * 1 / 4.0) < tol * 0.5);
        CHECK(fabs(phi[0] + 2 * 3 / 2.0) < tol * 3 && fabs(phi[1] + 2 * 1 / 2.0) < tol);
    }
    /* Coincident particles: nothing on each other without softening, the
     * potentials -(n - 1) m / eps with it. */
    size_t n = 200;
    double *z = calloc(3 * n, sizeof *z), *w = malloc(n * sizeof *w), *acc = malloc(3 * n * sizeof *acc),
           *pot = malloc(n * sizeof *pot);
    for (size_t i = 0; i < n; i++) w[i] = 1;
    p.G = 1;
    p.theta = 0.75;
    CHECK_OK(grove_gravity(grove_points_f64(z, n, 3), w, &p, acc, pot, NULL, &dev));
    for (size_t i = 0; i < 3 * n; i++) CHECK(acc[i] == 0);
    p.softening = 0.5;
    CHECK_OK(grove_gravity(grove_points_f64(z, n, 3), w, &p, acc, pot, NULL, &dev));
    CHECK_MSG(fabs(pot[7] + (double)(n - 1) / 0.5) < 1e-9, "pot %.17g", pot[7]);
    CHECK_OK(grove_gravity(grove_points_f64(NULL, 0, 3), NULL, NULL, NULL, NULL, NULL, &dev));
    /* A device that cannot run is refused, after the arguments' checks. */
    char why[512];
    dev.device = GROVE_DEVICE_CUDA;
    if (!grove_device_info(GROVE_DEVICE_CUDA, why, sizeof why))
        CHECK_FAILS(grove_gravity(grove_points_f64(z, n, 3), w, &p, acc, pot, NULL, &dev), GROVE_UNSUPPORTED, why);
    p.theta = 2;
    CHECK_FAILS(grove_gravity(grove_points_f64(z, n, 3), w, &p, acc, pot, NULL, &dev), GROVE_INVALID_ARGUMENT,
                "theta");
    free(z), free(w), free(acc), free(pot);
}

TEST(device_gravity_cli)
{
    if (!test_device_ready()) return;
    test_particles c = test_ic(GROVE_IC_PLUMMER, 2000, 6, 0);
    /* IN: (n, 4) rows x, y, z, m. */
    size_t n = c.n;
    double *rows = malloc(4 * n * sizeof *rows);
    for (size_t i = 0; i < n; i++) {
        for (int k = 0; k < 3; k++) rows[4 * i + k] = c.x[3 * i + k];
        rows[4 * i + 3] = c.m[i];
    }
    char header[128];
    size_t hl = grove_npy_header(GROVE_FLOAT64, n, 4, header, sizeof header);
    char *file = malloc(hl + 4 * n * sizeof *rows);
    memcpy(file, header, hl);
    memcpy(file + hl, rows, 4 * n * sizeof *rows);
    const char *in = test_write_file("device_gravity.npy", file, hl + 4 * n * sizeof *rows);
    char cmd[2048];
    const char *dev[] = {"cpu", test_device_name()};
    for (int k = 0; k < 2; k++) {
        snprintf(cmd, sizeof cmd, "gravity %s --softening 0.01 --acc %s --device %s --quiet", in,
                 test_path(k ? "acc_dev.npy" : "acc_cpu.npy"), dev[k]);
        char *out = NULL;
        CHECK_MSG(test_grove(cmd, &out) == 0, "%s", out);
        free(out);
    }
    size_t m0 = 0, m1 = 0;
    double *a0 = test_npy_doubles(test_path("acc_cpu.npy"), &m0), *a1 = test_npy_doubles(test_path("acc_dev.npy"), &m1);
    REQUIRE(a0 && a1 && m0 == 3 * n && m1 == 3 * n);
    double worst = 0;
    for (size_t i = 0; i < n; i++) {
        double d2 = 0, s2 = 0;
        for (int k = 0; k < 3; k++) {
            d2 += (a1[3 * i + k] - a0[3 * i + k]) * (a1[3 * i + k] - a0[3 * i + k]);
            s2 += a0[3 * i + k] * a0[3 * i + k];
        }
        worst = sqrt(d2 / s2) > worst ? sqrt(d2 / s2) : worst;
    }
    CHECK_MSG(worst < 1e-4, "grove gravity --device %s differs from the cpu by %.3g", test_device_name(), worst);
    free(a0), free(a1), free(rows), free(file), free(c.x);
}

/* The gravity kernels on tiny inputs, for make check-oclgrind: the walk
 * (groups of one and of many, a scratch small enough that groups spill)
 * and the direct sum. */
TEST(device_gravity_tiny)
{
    if (!test_device_ready()) return;
    test_particles c = test_ic(GROVE_IC_PLUMMER, 150, 12, 0);
    grove_gravity_params p = softened(0.01);
    compare_with_cpu(&c, &p, 0, 2e-5, "tiny walk");
    compare_with_cpu(&c, &p, 1024, 2e-5, "tiny walk, small scratch");
    p.group_size = 1;
    p.leaf_size = 4;
    compare_with_cpu(&c, &p, 0, 2e-5, "tiny walk, groups of one");
    p.theta = 0;
    compare_with_cpu(&c, &p, 0, 1e-12, "tiny direct sum");
    free(c.x);
}

/* grove_nbody_step on the device: each step's forces there, the rest the
 * CPU's. Shared steps stay within single-precision rounding of the CPU's
 * run; block steps too, with the same force evaluations. */
TEST(device_nbody_steps_match_cpu)
{
    if (!test_device_ready()) return;
    test_particles c = test_ic(GROVE_IC_PLUMMER, 2000, 13, 0);
    for (int block = 0; block < 2; block++) {
        grove_nbody_params p;
        grove_nbody_params_init(&p);
        p.gravity.softening = 0.01;
        p.timestep = block ? GROVE_TIMESTEP_BLOCK : GROVE_TIMESTEP_SHARED;
        p.max_level = 3;
        grove_nbody *sim[2] = {NULL, NULL};
        grove_options cpu, dev = test_device_options(0);
        grove_options_init(&cpu);
        for (int k = 0; k < 2; k++)
            REQUIRE_OK(grove_nbody_create(grove_points_f64(c.x, c.n, 3), c.v, c.m, &p, &cpu, &sim[k]));
        CHECK_OK(grove_nbody_step(sim[0], 4, &cpu));
        CHECK_OK(grove_nbody_step(sim[1], 4, &dev));
        const double *x0 = grove_nbody_positions(sim[0]), *x1 = grove_nbody_positions(sim[1]);
        double worst = 0;
        for (size_t i = 0; i < 3 * c.n; i++) worst = fabs(x1[i] - x0[i]) > worst ? fabs(x1[i] - x0[i]) : worst;
        grove_nbody_diag d0, d1;
        CHECK_OK(grove_nbody_diagnostics(sim[0], &d0));
        CHECK_OK(grove_nbody_diagnostics(sim[1], &d1));
        CHECK_MSG(worst < 1e-7 && fabs(d1.energy - d0.energy) < 1e-7 * fabs(d0.energy),
                  "%s steps: positions %.3g apart, energies %.17g and %.17g", block ? "block" : "shared", worst,
                  d1.energy, d0.energy);
        CHECK_MSG(grove_nbody_force_evaluations(sim[0]) == grove_nbody_force_evaluations(sim[1]),
                  "%s steps: %llu force evaluations on the device, %llu on the cpu", block ? "block" : "shared",
                  (unsigned long long)grove_nbody_force_evaluations(sim[1]),
                  (unsigned long long)grove_nbody_force_evaluations(sim[0]));
        grove_nbody_free(sim[0]);
        grove_nbody_free(sim[1]);
    }
    free(c.x);
}

/* Where the CPU walks a group again in double (a clump below single
 * precision's resolution: its float positions coincide) or sums pairs
 * from scaled differences (theta 0, squared distances that underflow),
 * the device leaves the group to the host: those particles get the CPU's
 * bits. */
TEST(device_gravity_leaves_the_cpus_double_groups_to_the_host)
{
    if (!test_device_ready()) return;
    grove_options dev = test_device_options(0);
    /* A clump of 8 particles 1e-12 apart inside a Plummer sphere. */
    size_t n = 2000, clump = 8;
    test_particles s = test_ic(GROVE_IC_PLUMMER, n, 3200, 0);
    grove_rng rng;
    grove_rng_seed(&rng, 3201);
    for (size_t i = 0; i < clump; i++)
        for (int k = 0; k < 3; k++) s.x[3 * i + k] = (k == 0 ? 0.1 : 0) + 1e-12 * grove_rng_normal(&rng);
    double *a0 = malloc(3 * n * sizeof *a0), *a1 = malloc(3 * n * sizeof *a1);
    grove_gravity_params p;
    grove_gravity_params_init(&p);
    p.theta = 0.5;
    CHECK_OK(grove_gravity(grove_points_f64(s.x, n, 3), s.m, &p, a0, NULL, NULL, NULL));
    CHECK_OK(grove_gravity(grove_points_f64(s.x, n, 3), s.m, &p, a1, NULL, NULL, &dev));
    CHECK_MSG(memcmp(a0, a1, 3 * clump * sizeof *a0) == 0, "the clump's accelerations differ from the cpu's: %.17g "
              "vs %.17g", a1[0], a0[0]);
    /* Light particles 1e-180 of the system's size apart beside a far one,
     * theta 0. */
    size_t m = 201;
    double *pos = malloc(3 * m * sizeof *pos), *mass = malloc(m * sizeof *mass);
    for (size_t i = 0; i + 1 < m; i++) {
        for (int k = 0; k < 3; k++) pos[3 * i + k] = 1e-90 * grove_rng_normal(&rng);
        mass[i] = 1e-100;
    }
    pos[3 * (m - 1)] = 1e90;
    pos[3 * (m - 1) + 1] = pos[3 * (m - 1) + 2] = 0;
    mass[m - 1] = 1;
    p.theta = 0;
    CHECK_OK(grove_gravity(grove_points_f64(pos, m, 3), mass, &p, a0, NULL, NULL, NULL));
    CHECK_OK(grove_gravity(grove_points_f64(pos, m, 3), mass, &p, a1, NULL, NULL, &dev));
    CHECK_MSG(memcmp(a0, a1, 3 * (m - 1) * sizeof *a0) == 0, "the cluster's direct sums differ from the cpu's: "
              "%.17g vs %.17g", a1[0], a0[0]);
    free(a0), free(a1), free(pos), free(mass), free(s.x);
}
