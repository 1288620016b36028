/* The integrator and its tools: conservation laws, energy error over many
 * steps, bit-identical resume from a checkpoint (library and CLI), initial
 * conditions, hostile checkpoints, and the gravity / nbody commands. */
#include "test.h"
#include "internal.h"

#include <math.h>
#include <stdbool.h>
#include <unistd.h>

/* A Plummer sphere simulation of n particles, removing the net force or
 * not. */
static grove_nbody *plummer_sim_with(size_t n, uint64_t seed, double theta, double dt, int conserve_momentum)
{
    double *x = malloc(7 * n * sizeof *x);
    grove_ic_params ic;
    grove_ic_params_init(&ic);
    ic.n = n;
    ic.seed = seed;
    grove_nbody *sim = NULL;
    grove_nbody_params p;
    grove_nbody_params_init(&p);
    p.gravity.theta = theta;
    p.gravity.softening = 0.01;
    p.dt = dt;
    p.conserve_momentum = conserve_momentum;
    if (grove_ic_generate(&ic, x, x + 3 * n, x + 6 * n) != GROVE_OK ||
        grove_nbody_create(grove_points_f64(x, n, 3), x + 3 * n, x + 6 * n, &p, NULL, &sim) != GROVE_OK)
        sim = NULL;
    free(x);
    return sim;
}

static grove_nbody *plummer_sim(size_t n, uint64_t seed, double theta, double dt)
{
    return plummer_sim_with(n, seed, theta, dt, 1);
}

static double norm3(const double *v) { return sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]); }

/* Sum of m |v|: the scale momentum rounding is measured against. */
static double momentum_scale(const grove_nbody *sim)
{
    double s = 0;
    for (size_t i = 0; i < grove_nbody_count(sim); i++)
        s += grove_nbody_masses(sim)[i] * norm3(grove_nbody_velocities(sim) + 3 * i);
    return s;
}

/* Largest |dP| over five steps, relative to sum m |v|. */
static double momentum_change(grove_nbody *sim)
{
    double worst = 0;
    grove_nbody_diag d0, d1;
    for (int k = 0; k < 5; k++) {
        if (grove_nbody_diagnostics(sim, &d0) != GROVE_OK || grove_nbody_step(sim, 1, NULL) != GROVE_OK ||
            grove_nbody_diagnostics(sim, &d1) != GROVE_OK)
            return INFINITY;
        double dp[3] = {d1.momentum[0] - d0.momentum[0], d1.momentum[1] - d0.momentum[1],
                        d1.momentum[2] - d0.momentum[2]};
        double rel = norm3(dp) / momentum_scale(sim);
        worst = rel > worst ? rel : worst;
    }
    return worst;
}

TEST(nbody_momentum_conserved_to_rounding_by_a_step)
{
    size_t n = test_sanitized() ? 300 : 1000;
    /* With theta = 0 the pair forces are antisymmetric up to rounding, so
     * the raw forces already conserve momentum; with theta > 0 the tree's
     * net force must be removed (the default). */
    grove_nbody *direct = plummer_sim_with(n, 2, 0, 1.0 / 64, 0);
    grove_nbody *tree = plummer_sim(n, 2, 0.75, 1.0 / 64);
    grove_nbody *raw = plummer_sim_with(n, 2, 0.75, 1.0 / 64, 0);
    REQUIRE(direct && tree && raw);
    double d = momentum_change(direct), t = momentum_change(tree), r = momentum_change(raw);
    CHECK_MSG(d < 1e-14, "theta 0: |dP| / sum m|v| = %g", d);
    CHECK_MSG(t < 1e-14, "theta 0.75, net force removed: |dP| / sum m|v| = %g", t);
    /* ... which is needed: the raw tree forces drift far above rounding. */
    CHECK_MSG(r > 1e-10, "theta 0.75, raw forces: |dP| / sum m|v| = %g", r);
    grove_nbody_free(direct);
    grove_nbody_free(tree);
    grove_nbody_free(raw);
}

TEST(nbody_net_force_removal_is_a_uniform_shift)
{
    /* The simulation's accelerations are grove_gravity's minus the
     * mass-weighted mean, computed here independently (in long double). */
    size_t n = 2000;
    grove_nbody *sim = plummer_sim(n, 7, 0.75, 1.0 / 64);
    REQUIRE(sim);
    const double *x = grove_nbody_positions(sim), *m = grove_nbody_masses(sim), *a = grove_nbody_accelerations(sim);
    double *raw = malloc(3 * n * sizeof *raw);
    CHECK_OK(grove_gravity(grove_points_f64(x, n, 3), m, &grove_nbody_get_params(sim)->gravity, raw, NULL, NULL, NULL));
    long double f[3] = {0, 0, 0}, mass = 0;
    for (size_t i = 0; i < n; i++) {
        mass += m[i];
        for (int k = 0; k < 3; k++) f[k] += (long double)m[i] * raw[3 * i + k];
    }
    double worst = 0, scale = 0;
    for (size_t i = 0; i < n; i++)
        for (int k = 0; k < 3; k++) {
            double want = (double)((long double)raw[3 * i + k] - f[k] / mass), err = fabs(a[3 * i + k] - want);
            worst = err > worst ? err : worst;
            scale = fabs(raw[3 * i + k]) > scale ? fabs(raw[3 * i + k]) : scale;
        }
    CHECK_MSG(worst <= 1e-13 * scale, "largest difference %g (scale %g)", worst, scale);
    /* the mean removed is small: of the order of the force errors */
    double mean = sqrt((double)(f[0] * f[0] + f[1] * f[1] + f[2] * f[2])) / (double)mass;
    CHECK_MSG(mean > 0 && mean < 1e-3 * scale, "mean acceleration %g", mean);
    free(raw);
    grove_nbody_free(sim);
}

TEST(nbody_energy_error_bounded)
{
    /* The full check (10^4 particles, 1000 steps of 1/128, theta 0.75:
     * |dE/E| < 1e-4, docs/nbody.md) runs in bench/nbody.py --energy; this is
     * the same setup, reduced. */
    size_t n = test_sanitized() ? 1000 : 3000, steps = test_sanitized() ? 20 : 200;
    /* Fewer particles relax faster (close encounters), hence the looser bound. */
    double bound = test_sanitized() ? 1e-3 : 2e-4;
    grove_nbody *sim = plummer_sim(n, 4, 0.75, 1.0 / 128);
    REQUIRE(sim);
    grove_nbody_diag d0, d;
    CHECK_OK(grove_nbody_diagnostics(sim, &d0));
    CHECK(fabs(d0.energy + 0.25) < 0.02); /* Henon units, up to sampling noise */
    double worst = 0, l0 = norm3(d0.angular_momentum);
    for (size_t k = 0; k < steps; k += 10) {
        CHECK_OK(grove_nbody_step(sim, 10, NULL));
        CHECK_OK(grove_nbody_diagnostics(sim, &d));
        double e = fabs((d.energy - d0.energy) / d0.energy);
        if (e > worst) worst = e;
    }
    if (getenv("GROVE_TEST_VERBOSE")) printf("  energy: max |dE/E| %.3g over %zu steps\n", worst, steps);
    CHECK_MSG(worst < bound, "relative energy error %g over %zu steps", worst, steps);
    CHECK(d.step == steps && fabs(d.time - (double)steps / 128) < 1e-12);
    CHECK(fabs(d.mass - 1) < 1e-12);
    CHECK(norm3(d.angular_momentum) < l0 + 1e-3);
    grove_nbody_free(sim);
}

TEST(nbody_resume_from_checkpoint_is_bit_identical)
{
    size_t n = test_sanitized() ? 400 : 2000;
    grove_nbody *a = plummer_sim(n, 6, 0.6, 1.0 / 100), *b = plummer_sim(n, 6, 0.6, 1.0 / 100), *c = NULL;
    REQUIRE(a && b);
    CHECK_OK(grove_nbody_step(a, 8, NULL));
    CHECK_OK(grove_nbody_step(b, 3, NULL));
    const char *path = test_path("run.ckpt");
    CHECK_OK(grove_nbody_checkpoint_write(b, path));
    grove_nbody_free(b);
    grove_options o;
    grove_options_init(&o);
    o.threads = 1; /* a different thread count must not matter either */
    REQUIRE_OK(grove_nbody_checkpoint_read(path, &o, &c));
    CHECK_OK(grove_nbody_step(c, 5, &o));
    grove_nbody_diag da, dc;
    grove_nbody_diagnostics(a, &da);
    grove_nbody_diagnostics(c, &dc);
    CHECK(da.step == 8 && dc.step == 8 && da.time == dc.time);
    CHECK(memcmp(grove_nbody_positions(a), grove_nbody_positions(c), 3 * n * sizeof(double)) == 0);
    CHECK(memcmp(grove_nbody_velocities(a), grove_nbody_velocities(c), 3 * n * sizeof(double)) == 0);
    CHECK(grove_nbody_get_params(c)->gravity.theta == 0.6 && grove_nbody_get_params(c)->dt == 1.0 / 100);
    grove_nbody_free(a);
    grove_nbody_free(c);
}

/* Store the CRC-32C of a version 3 checkpoint of len bytes (its field at
 * byte 104 counted as zero), as a writer of hostile files would. */
static void reseal(unsigned char *file, size_t len)
{
    memset(file + 104, 0, 4);
    uint32_t crc = grove__crc32c(0, file, len);
    memcpy(file + 104, &crc, 4);
}

TEST(nbody_checkpoint_rejects_hostile_files)
{
    grove_nbody *sim = plummer_sim(50, 1, 0.5, 0.01), *back = NULL;
    REQUIRE(sim);
    const char *path = test_path("good.ckpt");
    REQUIRE_OK(grove_nbody_checkpoint_write(sim, path));
    grove_nbody_free(sim);
    FILE *f = fopen(path, "rb");
    /* A version 5 file (header, 50 levels, state) made into version 4 (no
     * levels, zeros from header byte 112 on), from which the older
     * versions below are made. */
    unsigned char v5[128 + 50 + 7 * 50 * 8], buf[128 + 7 * 50 * 8];
    REQUIRE(f && fread(v5, 1, sizeof v5, f) == sizeof v5 && fgetc(f) == EOF);
    fclose(f);
    memcpy(buf, v5, 128);
    memcpy(buf + 128, v5 + 128 + 50, sizeof buf - 128);
    uint32_t four = 4;
    memcpy(buf + 8, &four, 4);
    memset(buf + 112, 0, 16);
    reseal(buf, sizeof buf);
    REQUIRE_OK(grove_nbody_checkpoint_read(test_write_file("v4.ckpt", buf, sizeof buf), NULL, &back));
    CHECK(grove_nbody_levels(back)[0] == 0 && grove_nbody_force_evaluations(back) == 50);
    grove_nbody_free(back);
    back = NULL;
    CHECK_FAILS(grove_nbody_checkpoint_read(test_write_file("short.ckpt", buf, 100), NULL, &back), GROVE_PARSE_ERROR,
                "too short");
    CHECK_FAILS(grove_nbody_checkpoint_read(test_write_file("trunc.ckpt", buf, sizeof buf - 8), NULL, &back),
                GROVE_PARSE_ERROR, "does not match the file size");
    unsigned char bad[sizeof buf];
    memcpy(bad, buf, sizeof buf);
    bad[0] = 'X';
    CHECK_FAILS(grove_nbody_checkpoint_read(test_write_file("magic.ckpt", bad, sizeof bad), NULL, &back),
                GROVE_PARSE_ERROR, "not a grove checkpoint");
    memcpy(bad, buf, sizeof buf);
    memset(bad + 16, 0xff, 8); /* n = 2^64 - 1 */
    CHECK_FAILS(grove_nbody_checkpoint_read(test_write_file("huge.ckpt", bad, sizeof bad), NULL, &back),
                GROVE_PARSE_ERROR, "does not match");
    memcpy(bad, buf, sizeof buf);
    double nan = NAN;
    memcpy(bad + 128 + 8 * 5, &nan, 8);
    reseal(bad, sizeof bad);
    CHECK_FAILS(grove_nbody_checkpoint_read(test_write_file("nan.ckpt", bad, sizeof bad), NULL, &back),
                GROVE_PARSE_ERROR, "not finite");
    CHECK(back == NULL);
    /* version 6 is from the future */
    uint32_t version = 6;
    memcpy(bad, buf, sizeof buf);
    memcpy(bad + 8, &version, 4);
    CHECK_FAILS(grove_nbody_checkpoint_read(test_write_file("v6.ckpt", bad, sizeof bad), NULL, &back),
                GROVE_UNSUPPORTED, "version 6");
    /* a version 5 level beyond the run's (a shared run's are 0) is damage */
    unsigned char bad5[sizeof v5];
    memcpy(bad5, v5, sizeof v5);
    bad5[128 + 3] = 1;
    reseal(bad5, sizeof bad5);
    CHECK_FAILS(grove_nbody_checkpoint_read(test_write_file("level.ckpt", bad5, sizeof bad5), NULL, &back),
                GROVE_PARSE_ERROR, "level of particle 3 is 1");
    /* version 3 (a checksum, no application data: its length field at byte
     * 108 is zero) is read; a length there is damage */
    version = 3;
    memcpy(bad + 8, &version, 4);
    reseal(bad, sizeof bad);
    REQUIRE_OK(grove_nbody_checkpoint_read(test_write_file("v3.ckpt", bad, sizeof bad), NULL, &back));
    CHECK(grove_nbody_count(back) == 50 && grove_nbody_app_data(back, NULL) == NULL);
    grove_nbody_free(back);
    bad[108] = 1;
    reseal(bad, sizeof bad);
    CHECK_FAILS(grove_nbody_checkpoint_read(test_write_file("v3app.ckpt", bad, sizeof bad), NULL, &back),
                GROVE_PARSE_ERROR, "header byte 108");
    memcpy(bad, buf, sizeof buf);
    /* versions 1 and 2 have no checksum (zeros from byte 104 on) and are
     * read; version 1 also has zeros where version 2 keeps
     * conserve_momentum, and resumes without the net-force removal */
    uint64_t flag;
    memcpy(&flag, buf + 96, 8);
    CHECK(flag == 1);
    version = 2;
    memcpy(bad + 8, &version, 4);
    CHECK_FAILS(grove_nbody_checkpoint_read(test_write_file("v2crc.ckpt", bad, sizeof bad), NULL, &back),
                GROVE_PARSE_ERROR, "header byte 104");
    memset(bad + 104, 0, 24);
    REQUIRE_OK(grove_nbody_checkpoint_read(test_write_file("v2.ckpt", bad, sizeof bad), NULL, &back));
    CHECK(grove_nbody_get_params(back)->conserve_momentum == 1 && grove_nbody_count(back) == 50);
    grove_nbody_free(back);
    version = 1;
    memset(bad + 96, 0, 8);
    memcpy(bad + 8, &version, 4);
    REQUIRE_OK(grove_nbody_checkpoint_read(test_write_file("v1.ckpt", bad, sizeof bad), NULL, &back));
    CHECK(grove_nbody_get_params(back)->conserve_momentum == 0 && grove_nbody_count(back) == 50);
    grove_nbody_free(back);
}

/* Application data rides in the checkpoint (format 4, between the header
 * and the state) and comes back byte for byte; a length beyond the file
 * is refused. */
TEST(nbody_checkpoint_keeps_application_data)
{
    grove_nbody *sim = plummer_sim(40, 2, 0.5, 0.01), *back = NULL;
    REQUIRE(sim);
    size_t bytes = 1;
    CHECK(grove_nbody_app_data(sim, &bytes) == NULL && bytes == 0);
    const char note[] = "snapshot-every 20";
    REQUIRE_OK(grove_nbody_set_app_data(sim, note, sizeof note));
    CHECK_FAILS(grove_nbody_set_app_data(sim, note, GROVE_NBODY_APP_DATA_MAX + 1), GROVE_INVALID_ARGUMENT, "at most");
    const char *path = test_path("app.ckpt");
    REQUIRE_OK(grove_nbody_checkpoint_write(sim, path));
    REQUIRE_OK(grove_nbody_checkpoint_read(path, NULL, &back));
    const char *got = grove_nbody_app_data(back, &bytes);
    CHECK(got && bytes == sizeof note && memcmp(got, note, sizeof note) == 0);
    CHECK(memcmp(grove_nbody_positions(sim), grove_nbody_positions(back), 3 * 40 * sizeof(double)) == 0);
    grove_nbody_free(back);
    unsigned char buf[128 + sizeof note + 40 + 7 * 40 * 8]; /* header, data, levels, state */
    FILE *f = fopen(path, "rb");
    REQUIRE(f && fread(buf, 1, sizeof buf, f) == sizeof buf);
    fclose(f);
    uint32_t version, app = 1000;
    memcpy(&version, buf + 8, 4);
    CHECK(version == 5);
    memcpy(buf + 108, &app, 4);
    reseal(buf, sizeof buf);
    CHECK_FAILS(grove_nbody_checkpoint_read(test_write_file("app_long.ckpt", buf, sizeof buf), NULL, &back),
                GROVE_PARSE_ERROR, "does not match the file size");
    REQUIRE_OK(grove_nbody_set_app_data(sim, NULL, 0));
    CHECK(grove_nbody_app_data(sim, &bytes) == NULL && bytes == 0);
    grove_nbody_free(sim);
}

/* A text setting's value as the run keeps it (grove_nbody_run_setting). */
static const char *run_setting(const grove_nbody *sim, const char *format, const char *name, char *buf, size_t cap)
{
    return grove_nbody_run_setting(sim, format, name, buf, cap) == GROVE_OK ? buf : "(failed)";
}

/* Run settings kept through a checkpoint, read back by name with the
 * simulation's parameters beside them, and a resumed run's check against
 * them: numbers agree however spelled, counts digit for digit (a seed
 * beyond 2^53 included), a foreign application data is refused, and the
 * format the CLI wrote before (render-extent as a hexadecimal float) is
 * read as it was. */
TEST(nbody_run_settings_survive_a_checkpoint_and_check_a_resume)
{
    static const char FORMAT[] = "test settings 1";
    grove_nbody *sim = plummer_sim(20, 4, 0.5, 0.01), *back = NULL;
    REQUIRE(sim);
    grove_nbody_setting kept[] = {{"start", "plummer", 0}, {"seed", "18446744073709551615", 0},
                                  {"render-extent", NULL, 0.1}, {"units", "", 0}};
    REQUIRE_OK(grove_nbody_keep_settings(sim, FORMAT, kept, 4));
    const char *path = test_path("settings.ckpt");
    REQUIRE_OK(grove_nbody_checkpoint_write(sim, path));
    REQUIRE_OK(grove_nbody_checkpoint_read(path, NULL, &back));
    char buf[64];
    CHECK(strcmp(run_setting(back, FORMAT, "start", buf, sizeof buf), "plummer") == 0);
    CHECK(strtod(run_setting(back, FORMAT, "render-extent", buf, sizeof buf), NULL) == 0.1);
    CHECK(strcmp(run_setting(back, FORMAT, "units", buf, sizeof buf), "") == 0);
    CHECK(strcmp(run_setting(back, FORMAT, "nothing", buf, sizeof buf), "") == 0);
    /* The parameters by their grove.h names. */
    const grove_nbody_params *p = grove_nbody_get_params(back);
    CHECK(strtod(run_setting(back, FORMAT, "dt", buf, sizeof buf), NULL) == p->dt);
    CHECK(strtod(run_setting(back, FORMAT, "softening", buf, sizeof buf), NULL) == p->gravity.softening);
    CHECK(strcmp(run_setting(back, FORMAT, "timestep", buf, sizeof buf), "shared") == 0);
    CHECK(strcmp(run_setting(back, FORMAT, "n", buf, sizeof buf), "20") == 0);
    CHECK(strtol(run_setting(back, FORMAT, "max_level", buf, sizeof buf), NULL, 10) == p->max_level);
    CHECK(strcmp(run_setting(back, FORMAT, "conserve_momentum", buf, sizeof buf), "1") == 0);
    CHECK_FAILS(grove_nbody_run_setting(back, FORMAT, "start", buf, 3), GROVE_INVALID_ARGUMENT, "start");
    /* Agreement: the same values however spelled. */
    char dt[64];
    snprintf(dt, sizeof dt, "%.20e", p->dt);
    grove_nbody_setting same[] = {{"dt", dt, 0}, {"render-extent", "1e-1", 0}, {"seed", "018446744073709551615", 0},
                                  {"theta", NULL, p->gravity.theta}, {"start", "plummer", 0}};
    size_t which = 99;
    CHECK_OK(grove_nbody_resume_check(back, FORMAT, same, 5, &which));
    CHECK(which == 5);
    grove_nbody_setting other[] = {{"start", "plummer", 0}, {"seed", "18446744073709551614", 0}};
    CHECK_FAILS(grove_nbody_resume_check(back, FORMAT, other, 2, &which), GROVE_INVALID_ARGUMENT,
                "seed 18446744073709551614 disagrees with the run's 18446744073709551615");
    CHECK(which == 1);
    grove_nbody_setting off[] = {{"conserve_momentum", "0", 0}, {"units", "si", 0}};
    CHECK_FAILS(grove_nbody_resume_check(back, FORMAT, off, 2, &which), GROVE_INVALID_ARGUMENT, "conserve_momentum");
    CHECK(which == 0);
    CHECK_FAILS(grove_nbody_resume_check(back, FORMAT, off + 1, 1, &which), GROVE_INVALID_ARGUMENT, "(none)");
    /* What the CLI kept before, and what another program keeps. */
    const char before[] = "test settings 1\nstart plummer\nseed 4\nrender-extent 0x1p+3\n";
    REQUIRE_OK(grove_nbody_set_app_data(back, before, sizeof before - 1));
    grove_nbody_setting extent = {"render-extent", NULL, 8};
    CHECK_OK(grove_nbody_resume_check(back, FORMAT, &extent, 1, NULL));
    CHECK(strcmp(run_setting(back, FORMAT, "seed", buf, sizeof buf), "4") == 0);
    const char *foreign[] = {"hello", "test settings 1\nstart", "test settings 1\n start x\n", "test settings 2\n"};
    for (size_t k = 0; k < 4; k++) {
        REQUIRE_OK(grove_nbody_set_app_data(back, foreign[k], strlen(foreign[k])));
        CHECK_FAILS(grove_nbody_run_setting(back, FORMAT, "start", buf, sizeof buf), GROVE_PARSE_ERROR,
                    "not settings of");
        CHECK_FAILS(grove_nbody_resume_check(back, FORMAT, same, 1, NULL), GROVE_PARSE_ERROR, "not settings of");
    }
    /* A run with no application data keeps no settings. */
    REQUIRE_OK(grove_nbody_set_app_data(back, NULL, 0));
    CHECK(strcmp(run_setting(back, FORMAT, "start", buf, sizeof buf), "") == 0);
    grove_nbody_setting bad_name = {"a b", "x", 0}, bad_value = {"a", "x\ny", 0};
    CHECK_FAILS(grove_nbody_keep_settings(back, FORMAT, &bad_name, 1), GROVE_INVALID_ARGUMENT, "letters, digits");
    CHECK_FAILS(grove_nbody_keep_settings(back, FORMAT, &bad_value, 1), GROVE_INVALID_ARGUMENT, "newline");
    CHECK_FAILS(grove_nbody_keep_settings(back, "two\nlines", kept, 1), GROVE_INVALID_ARGUMENT, "format line");
    grove_nbody_free(back);
    grove_nbody_free(sim);
}

static float big_endian_f32(const unsigned char *p)
{
    uint32_t u = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
    float x;
    memcpy(&x, &u, 4);
    return x;
}

/* grove nbody --tipsy: phi is each particle's potential at the snapshot's
 * time, the one grove_gravity gives for the snapshot's positions, to
 * float32 rounding, and 1/2 sum m phi is the run's potential energy. */
TEST(nbody_cli_tipsy_phi_is_the_potential)
{
    char args[2048];
    const char *dir = test_path("phi");
    snprintf(args, sizeof args, "nbody --ic plummer --n 500 --seed 2 --dt 0.01 --steps 3 --theta 0.6 "
             "--softening 0.02 --tipsy --out %s --quiet", dir);
    REQUIRE(test_grove(args, NULL) == 0);
    char path[1024];
    snprintf(path, sizeof path, "%s/snap_000003.npy", dir);
    grove_array snap = {0};
    REQUIRE_OK(grove_npy_read(path, &snap));
    size_t n = snap.shape[0];
    REQUIRE(n == 500 && snap.shape[1] == 7);
    const double *row = snap.data;
    double *x = malloc(4 * n * sizeof *x), *acc = malloc(3 * n * sizeof *acc), *pot = malloc(n * sizeof *pot);
    double *m = x + 3 * n;
    for (size_t i = 0; i < n; i++) {
        memcpy(x + 3 * i, row + 7 * i, 3 * sizeof *x);
        m[i] = row[7 * i + 6];
    }
    grove_gravity_params p;
    grove_gravity_params_init(&p);
    p.theta = 0.6;
    p.softening = 0.02;
    REQUIRE_OK(grove_gravity(grove_points_f64(x, n, 3), m, &p, acc, pot, NULL, NULL));
    snprintf(path, sizeof path, "%s/snap_000003.tipsy", dir);
    FILE *f = fopen(path, "rb");
    size_t len = 32 + 36 * n;
    unsigned char *file = malloc(len + 1);
    REQUIRE(f && fread(file, 1, len + 1, f) == len);
    fclose(f);
    double w = 0;
    size_t wrong = 0;
    for (size_t i = 0; i < n; i++) {
        const unsigned char *r = file + 32 + 36 * i;
        float phi = big_endian_f32(r + 32);
        wrong += phi != (float)pot[i] || big_endian_f32(r + 28) != 0.02f || big_endian_f32(r) != (float)m[i];
        w += 0.5 * m[i] * phi;
    }
    CHECK_MSG(wrong == 0, "%zu particles' phi, eps or mass differ", wrong);
    grove_nbody *sim = NULL;
    snprintf(path, sizeof path, "%s/checkpoint.grove", dir);
    REQUIRE_OK(grove_nbody_checkpoint_read(path, NULL, &sim));
    grove_nbody_diag d;
    REQUIRE_OK(grove_nbody_diagnostics(sim, &d));
    CHECK_MSG(d.step == 3 && fabs(w - d.potential) < 1e-6 * fabs(d.potential), "W %.9g from phi, %.9g", w,
              d.potential);
    grove_nbody_free(sim);
    free(file);
    free(x);
    free(acc);
    free(pot);
    grove_array_free(&snap);
}

TEST(nbody_cli_tipsy_refuses_what_float32_cannot_hold)
{
    /* 20 particles with one value of row 5 that float32 cannot hold: a
     * position beyond its range, a mass that would become 0. The run
     * stops at its first snapshot with the one line, and no file of that
     * snapshot (nor a checkpoint) is written. */
    const double spoil[2] = {1e60, 5e-63};
    const char *want[2] = {"position x of row 5, 1e+60, is beyond float32's range",
                           "mass of row 5, 5e-63, is nonzero but rounds to 0"};
    for (int k = 0; k < 2; k++) {
        test_particles ic = test_ic(GROVE_IC_PLUMMER, 20, 7, 0);
        grove_array a = {0};
        REQUIRE_OK(grove_array_create(&a, GROVE_FLOAT64, 20, 7));
        double *row = a.data;
        for (size_t i = 0; i < 20; i++, row += 7) {
            memcpy(row, ic.x + 3 * i, 3 * sizeof *row);
            memcpy(row + 3, ic.v + 3 * i, 3 * sizeof *row);
            row[6] = ic.m[i];
        }
        ((double *)a.data)[7 * 5 + (k ? 6 : 0)] = spoil[k];
        char input[512], dir[512], args[2048], *out = NULL;
        snprintf(input, sizeof input, "%s", test_path(k ? "tiny_mass.npy" : "far_particle.npy"));
        snprintf(dir, sizeof dir, "%s", test_path(k ? "tiny_mass_run" : "far_particle_run"));
        REQUIRE_OK(grove_npy_write(input, &a));
        grove_array_free(&a);
        free(ic.x);
        snprintf(args, sizeof args, "nbody --input %s --steps 2 --tipsy --out %s --quiet --threads 1", input, dir);
        CHECK_MSG(test_grove(args, &out) == 1 && strstr(out, "snap_000000.tipsy") && strstr(out, want[k]) &&
                      strstr(out, ".npy"),
                  "%s: %s", args, out);
        free(out);
        const char *files[3] = {"snap_000000.npy", "snap_000000.tipsy", "checkpoint.grove"};
        for (int f = 0; f < 3; f++) {
            char path[700];
            snprintf(path, sizeof path, "%s/%s", dir, files[f]);
            CHECK_MSG(access(path, F_OK) != 0, "%s was written", path);
        }
    }
}

/* The files of two --out folders: the same names, each the same bytes. */
static bool same_folders(const char *a, const char *b)
{
    char command[2048];
    snprintf(command, sizeof command, "diff -r '%s' '%s'", a, b);
    return test_run(command, NULL) == 0;
}

/* A 200-step run checkpointed at step 100 and resumed with --resume alone
 * writes the uninterrupted run's snapshots (npy and tipsy), byte for byte:
 * the checkpoint carries --snapshot-every and --tipsy. A setting given
 * again must agree with the checkpoint's: a different one is a usage
 * error naming both values, the same one is accepted. */
TEST(nbody_cli_resume_restores_the_run_settings)
{
    char args[2048], *out = NULL;
    const char *common = "--ic plummer --n 200 --seed 4 --dt 0.01 --theta 0.6 --snapshot-every 20 --tipsy --quiet";
    const char *full = test_path("set_full"), *half = test_path("set_half");
    snprintf(args, sizeof args, "nbody %s --steps 200 --out %s", common, full);
    REQUIRE(test_grove(args, NULL) == 0);
    snprintf(args, sizeof args, "nbody %s --steps 100 --out %s", common, half);
    REQUIRE(test_grove(args, NULL) == 0);
    snprintf(args, sizeof args, "nbody --steps 200 --out %s --resume --quiet", half);
    REQUIRE(test_grove(args, NULL) == 0);
    char file[1024];
    snprintf(file, sizeof file, "%s/snap_000180.tipsy", half);
    CHECK(access(file, F_OK) == 0);
    CHECK_MSG(same_folders(full, half), "the resumed run's files differ from the uninterrupted run's");
    const char *refused[][2] = {
        {"--snapshot-every 30", "--snapshot-every 30 disagrees with "},
        {"--dt 0.02", "whose run has --dt 0.01"},
        {"--render", "whose run has no --render"},
        {"--ic cold", "whose run has --ic plummer"},
        {"--seed 5", "whose run has --seed 4"},
        {"--raw-forces", "no --raw-forces"},
        {"--bh-mass 0.02", "whose run has --ic plummer"},
    };
    for (size_t k = 0; k < sizeof refused / sizeof refused[0]; k++) {
        snprintf(args, sizeof args, "nbody --steps 220 --out %s --resume %s", half, refused[k][0]);
        CHECK(test_grove(args, &out) == 2);
        const char *nl = strchr(out, '\n');
        CHECK_MSG(strstr(out, refused[k][1]) && strstr(out, "checkpoint.grove") && nl && nl[1] == '\0', "%s: %s",
                  refused[k][0], out);
        free(out);
    }
    snprintf(args, sizeof args, "nbody %s --steps 200 --out %s --resume --json", common, half);
    REQUIRE(test_grove(args, &out) == 0);
    CHECK(strstr(out, "\"resumed\": true") && strstr(out, "\"steps\": 0"));
    free(out);
    CHECK(same_folders(full, half));
    /* --bh-mass again: the mass of the point mass (particle 0) the run has. */
    const char *bh = test_path("set_bh");
    snprintf(args, sizeof args, "nbody --ic plummer-bh --bh-mass 0.02 --n 300 --steps 2 --out %s --quiet", bh);
    REQUIRE(test_grove(args, NULL) == 0);
    snprintf(args, sizeof args, "nbody --resume --bh-mass 0.02 --steps 3 --out %s --quiet", bh);
    CHECK(test_grove(args, NULL) == 0);
    snprintf(args, sizeof args, "nbody --resume --bh-mass 0.05 --steps 4 --out %s --quiet", bh);
    CHECK(test_grove(args, &out) == 2 && strstr(out, "whose run has --bh-mass 0.02"));
    free(out);
}

TEST(nbody_initial_conditions)
{
    size_t n = test_sanitized() ? 2000 : 20000;
    double *x = malloc(7 * n * sizeof *x), *acc = malloc(3 * n * sizeof *acc), *pot = malloc(n * sizeof *pot);
    double *v = x + 3 * n, *m = x + 6 * n;
    grove_ic_params ic;
    grove_ic_params_init(&ic);
    ic.n = n;
    ic.seed = 9;
    REQUIRE_OK(grove_ic_generate(&ic, x, v, m));
    /* Plummer in Henon units: E = -1/4, virial ratio 2T / |W| = 1. */
    grove_gravity_params p;
    grove_gravity_params_init(&p);
    p.theta = 0.5;
    p.softening = 1e-4;
    REQUIRE_OK(grove_gravity(grove_points_f64(x, n, 3), m, &p, acc, pot, NULL, NULL));
    double T = 0, W = 0, M = 0, com[3] = {0, 0, 0};
    for (size_t i = 0; i < n; i++) {
        T += 0.5 * m[i] * (v[3 * i] * v[3 * i] + v[3 * i + 1] * v[3 * i + 1] + v[3 * i + 2] * v[3 * i + 2]);
        W += 0.5 * m[i] * pot[i];
        M += m[i];
        for (int a = 0; a < 3; a++) com[a] += m[i] * x[3 * i + a];
    }
    CHECK_MSG(fabs(T + W + 0.25) < 0.015, "Plummer energy %g", T + W);
    CHECK_MSG(fabs(2 * T / -W - 1) < 0.05, "virial ratio %g", 2 * T / -W);
    CHECK(fabs(M - 1) < 1e-12 && norm3(com) < 1e-12);
    /* The same seed gives the same particles. */
    double *y = malloc(7 * n * sizeof *y);
    REQUIRE_OK(grove_ic_generate(&ic, y, y + 3 * n, y + 6 * n));
    CHECK(memcmp(x, y, 7 * n * sizeof *x) == 0);
    /* Cold sphere: inside the unit sphere (after centring, nearly), at rest. */
    ic.kind = GROVE_IC_COLD;
    REQUIRE_OK(grove_ic_generate(&ic, x, v, m));
    for (size_t i = 0; i < n; i++) CHECK(norm3(x + 3 * i) < 1.05 && norm3(v + 3 * i) == 0);
    /* Merger: two halves of mass 1/2, centres 10 apart, approaching. */
    ic.kind = GROVE_IC_MERGER;
    REQUIRE_OK(grove_ic_generate(&ic, x, v, m));
    double c1 = 0, c2 = 0, v1 = 0, p0 = 0;
    for (size_t i = 0; i < n; i++) {
        if (i < n / 2) c1 += x[3 * i] / (double)(n / 2), v1 += v[3 * i] / (double)(n / 2);
        else c2 += x[3 * i] / (double)(n - n / 2);
        p0 += m[i] * v[3 * i];
    }
    CHECK(fabs(c1 - c2 - 10) < 0.2 && v1 < 0 && fabs(p0) < 1e-12);
    ic.n = 1;
    CHECK_FAILS(grove_ic_generate(&ic, x, v, m), GROVE_INVALID_ARGUMENT, "n must be >= 2");
    free(x), free(y), free(acc), free(pot);
}

TEST(nbody_adaptive_step_and_arguments)
{
    grove_nbody *sim = plummer_sim(500, 3, 0.75, 0.05);
    REQUIRE(sim);
    grove_nbody_free(sim);
    double x[7] = {0, 0, 0, 0, 0, 0, 1};
    grove_nbody_params p;
    grove_nbody_params_init(&p);
    p.dt = 0;
    CHECK_FAILS(grove_nbody_create(grove_points_f64(x, 1, 3), x + 3, x + 6, &p, NULL, &sim), GROVE_INVALID_ARGUMENT,
                "dt");
    /* A close pair: the adaptive step shrinks below dt. */
    double pos[6] = {0, 0, 0, 0.01, 0, 0}, vel[6] = {0}, m[2] = {1, 1};
    grove_nbody_params_init(&p);
    p.dt = 0.1;
    p.eta = 0.1;
    p.gravity.softening = 0.001;
    REQUIRE_OK(grove_nbody_create(grove_points_f64(pos, 2, 3), vel, m, &p, NULL, &sim));
    CHECK_OK(grove_nbody_step(sim, 3, NULL));
    grove_nbody_diag d;
    CHECK_OK(grove_nbody_diagnostics(sim, &d));
    CHECK(d.step == 3 && d.time > 0 && d.time < 3 * 0.1 / 10);
    grove_nbody_free(sim);
}

/* A run of `steps` steps from a Plummer sphere in the units u (tests/util.c):
 * positions and velocities times lambda, masses times mu, G lambda^3 / mu,
 * softening eps lambda, the same dt (and eta). */
typedef struct unit_run {
    double *pos;                  /* n x 3 at the end, malloc'd (NULL on failure) */
    grove_nbody_diag start, end;
} unit_run;

static unit_run run_in_units(size_t n, double theta, double eps, double eta, test_units u, uint64_t steps)
{
    unit_run r;
    memset(&r, 0, sizeof r);
    double *x = malloc(7 * n * sizeof *x);
    grove_ic_params ic;
    grove_ic_params_init(&ic);
    ic.n = n;
    ic.seed = 8;
    grove_nbody *sim = NULL;
    if (grove_ic_generate(&ic, x, x + 3 * n, x + 6 * n) == GROVE_OK) {
        for (size_t i = 0; i < 6 * n; i++) x[i] *= u.lambda;
        for (size_t i = 6 * n; i < 7 * n; i++) x[i] *= u.mu;
        grove_nbody_params p;
        grove_nbody_params_init(&p);
        p.gravity.theta = theta;
        p.gravity.softening = eps * u.lambda;
        p.gravity.G = u.lambda * u.lambda * u.lambda / u.mu;
        p.dt = 1.0 / 128;
        p.eta = eta;
        if (grove_nbody_create(grove_points_f64(x, n, 3), x + 3 * n, x + 6 * n, &p, NULL, &sim) == GROVE_OK &&
            grove_nbody_diagnostics(sim, &r.start) == GROVE_OK && grove_nbody_step(sim, steps, NULL) == GROVE_OK &&
            grove_nbody_diagnostics(sim, &r.end) == GROVE_OK) {
            r.pos = malloc(3 * n * sizeof *r.pos);
            memcpy(r.pos, grove_nbody_positions(sim), 3 * n * sizeof *r.pos);
        } else {
            test_fail(__FILE__, __LINE__, "lengths x %g, masses x %g: %s", u.lambda, u.mu, grove_last_error());
        }
    }
    grove_nbody_free(sim);
    free(x);
    return r;
}

/* The unit of energy after the change u. */
static double mu_lambda2(test_units u) { return u.mu * u.lambda * u.lambda; }

/* Relative energy change over a run. */
static double energy_change(const unit_run *r) { return (r->end.energy - r->start.energy) / fabs(r->start.energy); }

/* An N-body run in any units follows the unscaled one: positions at the
 * end equal after rescaling (bit for bit for powers of two; to rounding,
 * grown over the steps, for powers of ten), energies in units of mu
 * lambda^2 and conserved as well, the same times (also with the adaptive
 * step, whose criterion must scale too). */
TEST(nbody_results_do_not_depend_on_the_units)
{
    size_t n = test_sanitized() ? 64 : 200;
    uint64_t steps = 40;
    /* theta, softening, eta; the last without softening, where the
     * adaptive step needs a length of the system's own */
    const double configs[][3] = {{0, 0.01, 0}, {0.75, 0.01, 0}, {0.75, 0.01, 0.05}, {0.75, 0, 0.05}};
    const test_units one = {1, 1, 1};
    for (size_t c = 0; c < sizeof configs / sizeof configs[0]; c++) {
        double theta = configs[c][0], eps = configs[c][1], eta = configs[c][2];
        unit_run base = run_in_units(n, theta, eps, eta, one, steps);
        REQUIRE(base.pos);
        /* rounding of the initial state (float rounding of the kernels'
         * terms for theta > 0, which the adaptive step's max |a| sees too),
         * grown by 40 steps of a chaotic system */
        double tol = theta == 0 ? 1e-11 : 1e-6;
        for (size_t k = 0; k < test_unit_changes_count; k++) {
            test_units u = test_unit_changes[k];
            unit_run r = run_in_units(n, theta, eps, eta, u, steps);
            if (!r.pos) continue;
            double dx = 0;
            bool same = true;
            for (size_t i = 0; i < 3 * n; i++) {
                double v = r.pos[i] / u.lambda, d = fabs(v - base.pos[i]);
                same = same && v == base.pos[i];
                if (!(d <= dx)) dx = d;
            }
            double e = mu_lambda2(u), de = energy_change(&r), de0 = energy_change(&base);
            double E = r.end.energy / e, dL = fabs(r.end.angular_momentum[2] / e - base.end.angular_momentum[2]);
            if (getenv("GROVE_TEST_VERBOSE"))
                printf("  theta %g eps %g eta %g, x %g m %g: dx %.3g, dE/E %.6g (%.6g), E %.12g (%.12g), t %.12g\n",
                       theta, eps, eta, u.lambda, u.mu, dx, de, de0, E, base.end.energy, r.end.time);
            if (u.exact) {
                CHECK_MSG(same && de == de0 && E == base.end.energy && r.end.time == base.end.time && dL == 0,
                          "theta %g eta %g, lengths x %g, masses x %g: not bit-identical (positions %g, dE/E %g vs %g)",
                          theta, eta, u.lambda, u.mu, dx, de, de0);
            } else {
                CHECK_MSG(dx < tol, "theta %g eta %g, lengths x %g, masses x %g: positions differ by %g", theta, eta,
                          u.lambda, u.mu, dx);
                CHECK_MSG(fabs(de - de0) < 1e-3 * fabs(de0) + tol && fabs(E / base.end.energy - 1) < tol &&
                              fabs(r.end.time / base.end.time - 1) < tol &&
                              dL < tol * fabs(base.end.angular_momentum[2]) + 1e-3 * tol,
                          "theta %g eta %g, lengths x %g, masses x %g: dE/E %g (unscaled %g), E %.12g (%.12g), t %g (%g)",
                          theta, eta, u.lambda, u.mu, de, de0, E, base.end.energy, r.end.time, base.end.time);
            }
            free(r.pos);
        }
        free(base.pos);
    }
}

/* A step too large for the state (dt = 1e300 here; from a checkpoint too)
 * stops at the first state that is not finite, naming the step and the
 * lowest such particle, and the handle refuses to go on or be saved. */
TEST(nbody_step_stops_when_the_state_is_not_finite)
{
    size_t n = 50;
    grove_nbody *sim = plummer_sim(n, 3, 0.75, 1e300), *back = NULL;
    REQUIRE(sim);
    CHECK_OK(grove_nbody_checkpoint_write(sim, test_path("huge_dt.ckpt")));
    CHECK_FAILS(grove_nbody_step(sim, 5, NULL), GROVE_INVALID_ARGUMENT, "nbody: step 1: particle ");
    CHECK(strstr(grove_last_error(), "is not finite (the step dt = 1e+300 is too large?)"));
    /* the particle named is the first whose position (or velocity) is not finite */
    size_t named = n;
    const char *at = strstr(grove_last_error(), "particle ");
    if (at) named = (size_t)strtoul(at + 9, NULL, 10);
    REQUIRE(named < n);
    const double *x = grove_nbody_positions(sim), *v = grove_nbody_velocities(sim);
    bool position = strstr(grove_last_error(), "position") != NULL;
    const double *state = position ? x : v;
    for (size_t i = 0; i < named; i++)
        for (int k = 0; k < 3; k++) CHECK(isfinite(state[3 * i + k]));
    CHECK(!isfinite(state[3 * named]) || !isfinite(state[3 * named + 1]) || !isfinite(state[3 * named + 2]));
    CHECK_FAILS(grove_nbody_step(sim, 1, NULL), GROVE_INVALID_ARGUMENT, "failed");
    CHECK_FAILS(grove_nbody_checkpoint_write(sim, test_path("never.ckpt")), GROVE_INVALID_ARGUMENT, "failed");
    CHECK(access(test_path("never.ckpt"), F_OK) != 0);
    grove_nbody_free(sim);
    /* the same dt read from a checkpoint */
    REQUIRE_OK(grove_nbody_checkpoint_read(test_path("huge_dt.ckpt"), NULL, &back));
    CHECK_FAILS(grove_nbody_step(back, 1, NULL), GROVE_INVALID_ARGUMENT, "step 1: particle ");
    grove_nbody_free(back);
}

/* Any one flipped bit makes a checkpoint unreadable: in the body the
 * checksum says so, naming the file. */
TEST(nbody_checkpoint_refuses_any_flipped_bit)
{
    size_t n = 20;
    grove_nbody *sim = plummer_sim(n, 1, 0.5, 0.01), *back = NULL;
    REQUIRE(sim);
    const char *path = test_path("flip.ckpt");
    REQUIRE_OK(grove_nbody_checkpoint_write(sim, path));
    grove_nbody_free(sim);
    size_t len = 128 + n + 7 * n * 8; /* header, levels, state */
    unsigned char *buf = malloc(len), *bad = malloc(len);
    FILE *f = fopen(path, "rb");
    REQUIRE(f && fread(buf, 1, len, f) == len && fgetc(f) == EOF);
    fclose(f);
    REQUIRE_OK(grove_nbody_checkpoint_read(test_write_file("same.ckpt", buf, len), NULL, &back));
    grove_nbody_free(back);
    for (size_t bit = 0; bit < 8 * len; bit += 7) {
        memcpy(bad, buf, len);
        bad[bit / 8] ^= (unsigned char)(1u << (bit % 8));
        const char *p = test_write_file("flipped.ckpt", bad, len);
        back = NULL;
        grove_status s = grove_nbody_checkpoint_read(p, NULL, &back);
        CHECK_MSG(s != GROVE_OK && back == NULL, "bit %zu flipped: read back", bit);
        if (bit >= 8 * 128)
            CHECK_MSG(strstr(grove_last_error(), "checksum") && strstr(grove_last_error(), "flipped.ckpt"),
                      "bit %zu: %s", bit, grove_last_error());
        grove_nbody_free(back);
    }
    free(buf);
    free(bad);
}


TEST(nbody_cli_resume_reproduces_the_uninterrupted_run)
{
    char args[2048], *out = NULL;
    const char *common = "--ic merger --n 1500 --seed 3 --dt 0.01 --theta 0.6 --softening 0.02 --snapshot-every 4 --quiet";
    snprintf(args, sizeof args, "nbody %s --steps 8 --out %s", common, test_path("full"));
    REQUIRE(test_grove(args, &out) == 0);
    free(out);
    snprintf(args, sizeof args, "nbody %s --steps 4 --out %s --threads 1", common, test_path("half"));
    REQUIRE(test_grove(args, NULL) == 0);
    snprintf(args, sizeof args, "nbody %s --steps 8 --out %s --resume --json", common, test_path("half"));
    REQUIRE(test_grove(args, &out) == 0);
    CHECK(strstr(out, "\"resumed\": true") && strstr(out, "\"steps\": 4") && strstr(out, "\"step\": 8"));
    CHECK(strstr(out, "\"relative_energy_error\": ") && strstr(out, "\"particles_per_second\": ") &&
          strstr(out, "\"interactions_per_particle\": "));
    free(out);
    char a[600], b[600];
    snprintf(a, sizeof a, "%s", test_path("full/snap_000008.npy"));
    snprintf(b, sizeof b, "%s", test_path("half/snap_000008.npy"));
    CHECK(test_same_file(a, b));
    snprintf(a, sizeof a, "%s", test_path("full/checkpoint.grove"));
    snprintf(b, sizeof b, "%s", test_path("half/checkpoint.grove"));
    CHECK(test_same_file(a, b));
}

TEST(nbody_cli_outputs_report_and_render)
{
    char args[2048], *out = NULL;
    snprintf(args, sizeof args, "nbody --ic plummer --n 800 --steps 6 --report-every 3 --tipsy --render --out %s",
             test_path("rend"));
    int rc = test_grove(args, &out);
    bool png = strstr(grove_build_info(), "png: yes") != NULL;
    if (png) {
        CHECK_MSG(rc == 0, "%s", out);
        CHECK(strstr(out, "step      3") && strstr(out, "dE/E") && strstr(out, "relative energy error"));
        FILE *f = fopen(test_path("rend/snap_000006.png"), "rb");
        unsigned char sig[8] = {0};
        CHECK(f && fread(sig, 1, 8, f) == 8 && memcmp(sig, "\x89PNG\r\n\x1a\n", 8) == 0);
        if (f) fclose(f);
        grove_snapshot s;
        CHECK_OK(grove_tipsy_read(test_path("rend/snap_000006.tipsy"), &s));
        CHECK(s.n == 800 && s.time == 6.0 / 128);
        grove_snapshot_free(&s);
        /* Restart from a tipsy snapshot. */
        snprintf(args, sizeof args, "nbody --input %s --steps 2 --out %s --quiet", test_path("rend/snap_000006.tipsy"),
                 test_path("again"));
        CHECK(test_grove(args, NULL) == 0);
    } else {
        CHECK(rc == 1 && strstr(out, "built without libpng"));
    }
    free(out);
    CHECK(test_grove("nbody --ic spiral --n 10 --steps 1 --out /tmp", &out) == 2 && strstr(out, "--ic: expected"));
    free(out);
    CHECK(test_grove("nbody --n 10 --out /tmp", &out) == 2 && strstr(out, "--steps K are required"));
    free(out);
}

TEST(gravity_cli_matches_the_library)
{
    size_t n = 3000;
    grove_array in = {0}, acc = {0}, pot = {0};
    REQUIRE_OK(grove_array_create(&in, GROVE_FLOAT64, n, 4));
    double *x = malloc(7 * n * sizeof *x), *a = malloc(3 * n * sizeof *a), *phi = malloc(n * sizeof *phi);
    grove_ic_params ic;
    grove_ic_params_init(&ic);
    ic.n = n;
    REQUIRE_OK(grove_ic_generate(&ic, x, x + 3 * n, x + 6 * n));
    for (size_t i = 0; i < n; i++) {
        memcpy((double *)in.data + 4 * i, x + 3 * i, 3 * sizeof(double));
        ((double *)in.data)[4 * i + 3] = x[6 * n + i];
    }
    REQUIRE_OK(grove_npy_write(test_path("grav_in.npy"), &in));
    char args[2048], *out = NULL;
    snprintf(args, sizeof args, "gravity %s --theta 0.5 --softening 0.01 --acc %s --pot %s --json",
             test_path("grav_in.npy"), test_path("grav_a.npy"), test_path("grav_p.npy"));
    REQUIRE(test_grove(args, &out) == 0);
    CHECK(strstr(out, "\"command\": \"gravity\"") && strstr(out, "\"interactions_per_particle\": ") &&
          strstr(out, "\"seconds\": "));
    free(out);
    grove_gravity_params p;
    grove_gravity_params_init(&p);
    p.theta = 0.5;
    p.softening = 0.01;
    REQUIRE_OK(grove_gravity(grove_points_f64(x, n, 3), x + 6 * n, &p, a, phi, NULL, NULL));
    REQUIRE_OK(grove_npy_read(test_path("grav_a.npy"), &acc));
    REQUIRE_OK(grove_npy_read(test_path("grav_p.npy"), &pot));
    CHECK(acc.shape[0] == n && acc.shape[1] == 3 && pot.ndim == 1 && pot.shape[0] == n);
    CHECK(memcmp(acc.data, a, 3 * n * sizeof *a) == 0 && memcmp(pot.data, phi, n * sizeof *phi) == 0);
    /* An (n, 7) snapshot (x, y, z, vx, vy, vz, m) gives the same bytes. */
    grove_array snap = {0};
    REQUIRE_OK(grove_array_create(&snap, GROVE_FLOAT64, n, 7));
    for (size_t i = 0; i < n; i++) {
        memcpy((double *)snap.data + 7 * i, x + 3 * i, 3 * sizeof(double));
        memcpy((double *)snap.data + 7 * i + 3, x + 3 * n + 3 * i, 3 * sizeof(double));
        ((double *)snap.data)[7 * i + 6] = x[6 * n + i];
    }
    REQUIRE_OK(grove_npy_write(test_path("grav_snap.npy"), &snap));
    snprintf(args, sizeof args, "gravity %s --theta 0.5 --softening 0.01 --acc %s --quiet", test_path("grav_snap.npy"),
             test_path("grav_snap_a.npy"));
    CHECK(test_grove(args, NULL) == 0);
    CHECK(test_same_file(test_path("grav_a.npy"), test_path("grav_snap_a.npy")));
    grove_array_free(&snap);
    /* A wrong shape is refused and leaves no output behind. */
    snprintf(args, sizeof args, "gravity %s --acc %s", test_path("grav_p.npy"), test_path("never.npy"));
    CHECK(test_grove(args, &out) == 1 && strstr(out, "(n, 4)"));
    CHECK(access(test_path("never.npy"), F_OK) != 0);
    free(out);
    snprintf(args, sizeof args, "gravity %s --theta 2 --acc %s", test_path("grav_in.npy"), test_path("never.npy"));
    CHECK(test_grove(args, &out) == 2 && strstr(out, "theta")); /* a bad flag value: a usage error */
    free(out);
    grove_array_free(&in), grove_array_free(&acc), grove_array_free(&pot);
    free(x), free(a), free(phi);
}

/* The outside test's case through the CLI: 500 Plummer points with lengths
 * in units 1e10 times larger (softening to match) give finite
 * accelerations, 1e-20 times the Henon ones to float rounding. */
TEST(gravity_cli_in_other_units)
{
    size_t n = 500;
    double lambda = 1e10;
    double *x = malloc(7 * n * sizeof *x), *a = malloc(3 * n * sizeof *a);
    grove_ic_params ic;
    grove_ic_params_init(&ic);
    ic.n = n;
    REQUIRE_OK(grove_ic_generate(&ic, x, x + 3 * n, x + 6 * n));
    grove_gravity_params p;
    grove_gravity_params_init(&p);
    p.softening = 0.01;
    REQUIRE_OK(grove_gravity(grove_points_f64(x, n, 3), x + 6 * n, &p, a, NULL, NULL, NULL));
    grove_array in = {0}, acc = {0};
    REQUIRE_OK(grove_array_create(&in, GROVE_FLOAT64, n, 4));
    for (size_t i = 0; i < n; i++) {
        for (int k = 0; k < 3; k++) ((double *)in.data)[4 * i + k] = x[3 * i + k] * lambda;
        ((double *)in.data)[4 * i + 3] = x[6 * n + i];
    }
    REQUIRE_OK(grove_npy_write(test_path("grav_si.npy"), &in));
    char args[2048], *out = NULL;
    snprintf(args, sizeof args, "gravity %s --softening 1e8 --acc %s --quiet", test_path("grav_si.npy"),
             test_path("grav_si_a.npy"));
    CHECK_MSG(test_grove(args, &out) == 0, "%s", out);
    free(out);
    REQUIRE_OK(grove_npy_read(test_path("grav_si_a.npy"), &acc));
    REQUIRE(acc.shape[0] == n);
    const double *b = acc.data;
    size_t finite = 0;
    double worst = 0;
    for (size_t i = 0; i < n; i++) {
        double d2 = 0, r2 = 0;
        for (int k = 0; k < 3; k++) {
            finite += isfinite(b[3 * i + k]);
            double want = a[3 * i + k] / (lambda * lambda);
            d2 += (b[3 * i + k] - want) * (b[3 * i + k] - want);
            r2 += want * want;
        }
        double rel = sqrt(d2 / r2);
        if (!(rel <= worst)) worst = rel;
    }
    CHECK_MSG(finite == 3 * n && worst < 1e-5, "%zu of %zu values finite, largest relative difference %g", finite,
              3 * n, worst);
    grove_array_free(&in), grove_array_free(&acc);
    free(x), free(a);
}

/* Every value of an .npy snapshot (n, 7) is finite. */
static bool snapshot_finite(const char *path)
{
    grove_array s = {0};
    if (grove_npy_read(path, &s) != GROVE_OK) return false;
    bool ok = s.dtype == GROVE_FLOAT64;
    for (size_t i = 0; ok && i < s.shape[0] * s.shape[1]; i++) ok = isfinite(((const double *)s.data)[i]);
    grove_array_free(&s);
    return ok;
}

/* A step far too large: one line naming the step and the particle, exit
 * status 1, and only the finite outputs of step 0 in the folder (the
 * checkpoint reads back); resuming from it stops the same way. */
TEST(nbody_cli_stops_at_a_state_that_is_not_finite)
{
    const char *dir = test_path("huge_dt");
    for (int resume = 0; resume < 2; resume++) {
        char args[2048], *out = NULL;
        snprintf(args, sizeof args, "nbody --ic plummer --n 100 --steps 3 --dt 1e300 --out %s --quiet%s", dir,
                 resume ? " --resume" : "");
        CHECK(test_grove(args, &out) == 1);
        const char *nl = strchr(out, '\n');
        CHECK_MSG(nl && nl[1] == '\0' && strstr(out, "step 1: particle ") && strstr(out, "is not finite"),
                  "output: %s", out);
        free(out);
    }
    char command[1024];
    snprintf(command, sizeof command, "ls %s", dir);
    char *listing = NULL;
    CHECK(test_run(command, &listing) == 0);
    CHECK_MSG(strcmp(listing, "checkpoint.grove\nsnap_000000.npy\n") == 0, "files: %s", listing);
    free(listing);
    char path[1024];
    snprintf(path, sizeof path, "%s/snap_000000.npy", dir);
    CHECK(snapshot_finite(path));
    snprintf(path, sizeof path, "%s/checkpoint.grove", dir);
    grove_nbody *sim = NULL;
    CHECK_OK(grove_nbody_checkpoint_read(path, NULL, &sim));
    CHECK(sim && grove_nbody_get_params(sim)->dt == 1e300);
    grove_nbody_free(sim);
}

/* The merger's orbit from hypot: separations whose square under- or
 * overflows still give finite velocities. */
TEST(nbody_merger_initial_conditions_at_extreme_separations)
{
    size_t n = 100;
    double *x = malloc(7 * n * sizeof *x);
    grove_ic_params ic;
    grove_ic_params_init(&ic);
    ic.kind = GROVE_IC_MERGER;
    ic.n = n;
    ic.impact = 0;
    const double separations[] = {1e-200, 1e200};
    for (int k = 0; k < 2; k++) {
        ic.separation = separations[k];
        REQUIRE_OK(grove_ic_generate(&ic, x, x + 3 * n, x + 6 * n));
        size_t finite = 0;
        for (size_t i = 0; i < 7 * n; i++) finite += isfinite(x[i]);
        CHECK_MSG(finite == 7 * n, "separation %g: %zu of %zu values finite", separations[k], finite, 7 * n);
    }
    free(x);
}

/* A picture is the same in any units: lengths (extent and centre too) by
 * 2^-1018, where width / extent overflows, and masses by 2^1030, where the
 * central pixels' sums would (16 pixels a side: hundreds of particles in
 * each central one). */
TEST(nbody_render_does_not_depend_on_the_units)
{
    if (!strstr(grove_build_info(), "png: yes")) return; /* rendering needs libpng */
    size_t n = 3000;
    double *x = malloc(7 * n * sizeof *x);
    grove_ic_params ic;
    grove_ic_params_init(&ic);
    ic.n = n;
    REQUIRE_OK(grove_ic_generate(&ic, x, x + 3 * n, x + 6 * n));
    for (int kind = 0; kind < 2; kind++) {
        grove_render_params rp;
        grove_render_params_init(&rp);
        rp.width = kind ? 16 : 512;
        rp.center[0] = 0.25;
        CHECK_OK(grove_render_png(grove_points_f64(x, n, 3), x + 6 * n, &rp, test_path("henon.png")));
        double lambda = kind ? 1 : 0x1p-1018;
        double *pos = test_scaled_copy(x, 3 * n, lambda), *mass = test_scaled_copy(x + 6 * n, n, kind ? 0x1p1000 : 1);
        for (size_t i = 0; i < n && kind; i++) mass[i] *= 0x1p30;
        rp.extent *= lambda;
        rp.center[0] *= lambda;
        CHECK_OK(grove_render_png(grove_points_f64(pos, n, 3), mass, &rp, test_path("scaled.png")));
        char a[600], b[600];
        snprintf(a, sizeof a, "%s", test_path("henon.png"));
        snprintf(b, sizeof b, "%s", test_path("scaled.png"));
        CHECK_MSG(test_same_file(a, b), "%s scaled: a different picture", kind ? "masses" : "lengths");
        free(pos), free(mass);
    }
    free(x);
}

/* A centre that is not finite is refused before anything is written (it
 * made a picture of nothing); so are a non-finite extent and decades. */
TEST(nbody_render_refuses_a_centre_that_is_not_finite)
{
    double pos[6] = {0, 0, 0, 1, 1, 1}, mass[2] = {1, 1};
    const char *path = test_path("nan.png");
    for (int k = 0; k < 3; k++) {
        grove_render_params rp;
        grove_render_params_init(&rp);
        rp.center[k] = k == 1 ? INFINITY : NAN;
        remove(path);
        CHECK_FAILS(grove_render_png(grove_points_f64(pos, 2, 3), mass, &rp, path), GROVE_INVALID_ARGUMENT,
                    "center");
        CHECK(access(path, F_OK) != 0);
    }
    grove_render_params rp;
    grove_render_params_init(&rp);
    rp.extent = NAN;
    CHECK_FAILS(grove_render_png(grove_points_f64(pos, 2, 3), mass, &rp, path), GROVE_INVALID_ARGUMENT, "extent");
}

/* --G through the CLI: a run in units 2^40 times longer (G 2^120 to
 * match, softening scaled) ends at 2^40 times the positions of the Henon
 * run, bit for bit. */
TEST(nbody_cli_takes_G_and_any_units)
{
    int png = strstr(grove_build_info(), "png: yes") != NULL; /* also render, where libpng is built in */
    size_t n = 200;
    double lambda = 0x1p40;
    double *x = malloc(7 * n * sizeof *x);
    grove_ic_params ic;
    grove_ic_params_init(&ic);
    ic.n = n;
    REQUIRE_OK(grove_ic_generate(&ic, x, x + 3 * n, x + 6 * n));
    grove_array in = {0}, out0 = {0}, out1 = {0};
    REQUIRE_OK(grove_array_create(&in, GROVE_FLOAT64, n, 7));
    for (int scaled = 0; scaled < 2; scaled++) {
        double f = scaled ? lambda : 1;
        for (size_t i = 0; i < n; i++) {
            double *row = (double *)in.data + 7 * i;
            for (int k = 0; k < 3; k++) row[k] = x[3 * i + k] * f, row[3 + k] = x[3 * n + 3 * i + k] * f;
            row[6] = x[6 * n + i];
        }
        char name[64], args[2048];
        snprintf(name, sizeof name, "units%d.npy", scaled);
        REQUIRE_OK(grove_npy_write(test_path(name), &in));
        snprintf(name, sizeof name, "units%d", scaled);
        char render[64] = "";
        if (png) snprintf(render, sizeof render, " --render --render-extent %.17g", 8 * f);
        snprintf(args, sizeof args, "nbody --input %s --steps 5 --theta 0.75 --softening %.17g --G %.17g --out %s --quiet%s",
                 test_path(scaled ? "units1.npy" : "units0.npy"), 0.01 * f, f * f * f, test_path(name), render);
        REQUIRE(test_grove(args, NULL) == 0);
    }
    REQUIRE_OK(grove_npy_read(test_path("units0/snap_000005.npy"), &out0));
    REQUIRE_OK(grove_npy_read(test_path("units1/snap_000005.npy"), &out1));
    size_t same = 0;
    for (size_t i = 0; i < n; i++)
        for (int k = 0; k < 6; k++)
            same += ((const double *)out1.data)[7 * i + k] / lambda == ((const double *)out0.data)[7 * i + k];
    CHECK_MSG(same == 6 * n, "%zu of %zu positions and velocities equal after rescaling", same, 6 * n);
    if (png) { /* the same picture when the extent is in the run's units */
        size_t len0, len1;
        char *png0 = test_read_file(test_path("units0/snap_000005.png"), &len0);
        char *png1 = test_read_file(test_path("units1/snap_000005.png"), &len1);
        REQUIRE(png0 && png1);
        CHECK(len0 == len1 && memcmp(png0, png1, len0) == 0);
        free(png0), free(png1);
    }
    grove_array_free(&in), grove_array_free(&out0), grove_array_free(&out1);
    free(x);
}
