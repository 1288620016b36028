/* grove nbody --units: each system's G and the files that state its units
 * (DIR/grove.param, SNAP.tipsy.units) against the systems' definitions in
 * docs/nbody.md, written here from the constants themselves; the flags it
 * refuses; a resumed run keeps its units. pynbody reading those files is
 * tests/peer/pynbody_tipsy.py. */
#include "test.h"

#include <math.h>
#include <stdbool.h>
#include <unistd.h>

/* CODATA 2018's G, the kiloparsec (648000/pi au of 149597870700 m, times
 * 1000) and the solar mass of IAU 2015's nominal GM_sun. */
#define G_SI 6.67430e-11
#define KPC_M (1000 * 648000 / 3.14159265358979323846 * 149597870700.0)
#define MSUN_KG (1.3271244e20 / G_SI)

static const struct {
    const char *name;
    double length_m, mass_kg, velocity_m_s;
    const char *units_file; /* SNAP.tipsy.units, in pynbody's spelling */
} SYSTEMS[] = {
    {"kpc,1e10Msun,km/s", KPC_M, 1e10 * MSUN_KG, 1000, "pos: kpc\nvel: km s^-1\nmass: 1e10 Msol\n"},
    {"si", 1, 1, 1, "pos: m\nvel: m s^-1\nmass: kg\n"},
    {"cgs", 0.01, 0.001, 0.01, "pos: cm\nvel: cm s^-1\nmass: g\n"},
};

static bool close_to(double got, double want) { return fabs(got - want) <= 1e-12 * fabs(want); }

/* A 100-particle Plummer snapshot to start from (Henon units). */
static const char *start_snapshot(void)
{
    char args[1024];
    snprintf(args, sizeof args, "nbody --ic plummer --n 100 --seed 3 --steps 0 --out %s --quiet", test_path("units_ic"));
    CHECK(test_grove(args, NULL) == 0);
    return test_path("units_ic/snap_000000.npy");
}

/* The value of "key = value" in a parameter file's text (NaN if absent). */
static double param(const char *text, const char *key)
{
    char pattern[64];
    snprintf(pattern, sizeof pattern, "\n%s = ", key);
    const char *p = strstr(text, pattern);
    return p ? strtod(p + strlen(pattern), NULL) : NAN;
}

/* The number after "key": in a --json line (NaN if absent). */
static double json_number(const char *json, const char *key)
{
    char pattern[64];
    snprintf(pattern, sizeof pattern, "\"%s\": ", key);
    const char *p = json ? strstr(json, pattern) : NULL;
    return p ? strtod(p + strlen(pattern), NULL) : NAN;
}

TEST(nbody_cli_units_write_their_definition)
{
    char input[4096];
    snprintf(input, sizeof input, "%s", start_snapshot());
    for (size_t i = 0; i < sizeof SYSTEMS / sizeof SYSTEMS[0]; i++) {
        char dir[64], args[8192], *out = NULL;
        snprintf(dir, sizeof dir, "units_run%zu", i);
        snprintf(args, sizeof args, "nbody --input %s --units %s --steps 1 --tipsy --out %s --json --quiet", input,
                 SYSTEMS[i].name, test_path(dir));
        CHECK_MSG(test_grove(args, &out) == 0, "%s: %s", args, out);
        double L = SYSTEMS[i].length_m, M = SYSTEMS[i].mass_kg, V = SYSTEMS[i].velocity_m_s;
        double G = json_number(out, "G");
        CHECK_MSG(close_to(G, G_SI * M / (L * V * V)), "--units %s: G = %.17g", SYSTEMS[i].name, G);
        free(out);

        char path[4096];
        snprintf(path, sizeof path, "%s/grove.param", test_path(dir));
        char *text = test_read_file(path, NULL);
        CHECK_MSG(text != NULL, "--units %s wrote no %s", SYSTEMS[i].name, path);
        if (text) {
            double kpc = param(text, "dKpcUnit"), msun = param(text, "dMsolUnit");
            CHECK_MSG(close_to(kpc, L / KPC_M) && close_to(msun, M / MSUN_KG),
                      "--units %s: dKpcUnit %.17g (want %.17g), dMsolUnit %.17g (want %.17g)", SYSTEMS[i].name, kpc,
                      L / KPC_M, msun, M / MSUN_KG);
        }
        free(text);
        for (int step = 0; step <= 1; step++) {
            snprintf(path, sizeof path, "%s/snap_%06d.tipsy.units", test_path(dir), step);
            text = test_read_file(path, NULL);
            CHECK_MSG(text && strcmp(text, SYSTEMS[i].units_file) == 0, "%s: %s", path, text ? text : "(none)");
            free(text);
        }
    }
}

TEST(nbody_cli_units_henon_is_G_1_and_writes_nothing)
{
    char args[8192], *out = NULL;
    snprintf(args, sizeof args, "nbody --units henon --n 50 --seed 1 --steps 1 --tipsy --out %s --json --quiet",
             test_path("units_henon"));
    CHECK_MSG(test_grove(args, &out) == 0, "%s", out);
    CHECK(json_number(out, "G") == 1);
    free(out);
    CHECK(access(test_path("units_henon/grove.param"), F_OK) != 0);
    CHECK(access(test_path("units_henon/snap_000001.tipsy"), F_OK) == 0);
    CHECK(access(test_path("units_henon/snap_000001.tipsy.units"), F_OK) != 0);
}

TEST(nbody_cli_units_refusals)
{
    char input[4096], args[12288], *out = NULL;
    snprintf(input, sizeof input, "%s", start_snapshot());
    const struct { const char *flags, *says; bool from_input; } cases[] = {
        {"--units furlongs", "--units: expected henon, kpc,1e10Msun,km/s, si or cgs, got 'furlongs'", true},
        {"--units si --G 1", "give --units or --G, not both", true},
        {"--units cgs --ic plummer --n 10", "--ic makes Henon units", false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(args, sizeof args, "nbody %s%s%s --steps 1 --out %s", cases[i].flags,
                 cases[i].from_input ? " --input " : "", cases[i].from_input ? input : "", test_path("units_refused"));
        CHECK_MSG(test_grove(args, &out) == 2 && out && strstr(out, cases[i].says), "%s: %s", args, out);
        free(out);
        CHECK(access(test_path("units_refused"), F_OK) != 0);
    }
}

TEST(nbody_cli_units_resume_keeps_them)
{
    char input[4096], args[12288], *out = NULL;
    snprintf(input, sizeof input, "%s", start_snapshot());
    const char *dir = test_path("units_resumed");
    char run[4096];
    snprintf(run, sizeof run, "%s", dir);
    snprintf(args, sizeof args, "nbody --input %s --units si --steps 1 --tipsy --out %s --quiet", input, run);
    REQUIRE(test_grove(args, NULL) == 0);
    snprintf(args, sizeof args, "nbody --steps 2 --out %s --resume --json --quiet", run);
    CHECK_MSG(test_grove(args, &out) == 0, "%s", out);
    CHECK(close_to(json_number(out, "G"), G_SI) && out && strstr(out, "\"units\": \"si\""));
    free(out);
    char path[4608];
    snprintf(path, sizeof path, "%s/snap_000002.tipsy.units", run);
    char *text = test_read_file(path, NULL);
    CHECK_MSG(text && strcmp(text, SYSTEMS[1].units_file) == 0, "%s: %s", path, text ? text : "(none)");
    free(text);
    snprintf(args, sizeof args, "nbody --steps 3 --out %s --resume --units cgs", run);
    CHECK(test_grove(args, &out) == 2 && out && strstr(out, "--units cgs disagrees with") &&
          strstr(out, "whose run has --units si"));
    free(out);
}
