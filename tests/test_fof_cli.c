/* grove fof on real files: .npy snapshots of (n, 3), (n, 4) and (n, 7)
 * rows and tipsy snapshots, groups and catalogues (.npy and .csv) against
 * the library's result (itself tested against brute force in
 * test_fof.c), --b, --json keys, and errors that leave no output. */
#include "test.h"

#include <math.h>
#include <stdbool.h>
#include <unistd.h>

/* Clumps in [0, 1)^3 with velocities and masses. */
static void snapshot(size_t n, uint64_t seed, double *pos, double *vel, double *mass)
{
    grove_rng rng;
    grove_rng_seed(&rng, seed);
    double centre[8][3];
    for (int k = 0; k < 8; k++)
        for (int j = 0; j < 3; j++) centre[k][j] = 0.1 + 0.8 * grove_rng_uniform(&rng);
    for (size_t i = 0; i < n; i++) {
        int k = (int)grove_rng_below(&rng, 8);
        bool field = grove_rng_below(&rng, 4) == 0;
        for (int j = 0; j < 3; j++) {
            double v = field ? grove_rng_uniform(&rng) : centre[k][j] + 0.02 * grove_rng_normal(&rng);
            pos[3 * i + j] = fmin(fmax(v, 0), 0.999);
            vel[3 * i + j] = grove_rng_normal(&rng);
        }
        mass[i] = 0.5 + grove_rng_uniform(&rng);
    }
}

static grove_array load(const char *path)
{
    grove_array a = {0};
    CHECK_OK(grove_npy_read(path, &a));
    return a;
}

/* The table's rows against the library's catalogue (columns as in
 * docs/cli.md), exactly: both come from the same values. */
static bool same_table(const grove_array *t, const grove_fof_catalogue *c)
{
    bool vel = c->velocity != NULL;
    size_t cols = vel ? 12 : 8;
    if (t->ndim != 2 || t->shape[0] != c->groups || t->shape[1] != cols) return false;
    const double *row = t->data;
    for (size_t g = 0; g < c->groups; g++, row += cols) {
        bool ok = row[0] == (double)g && row[1] == (double)c->members[g] && row[2] == (double)c->first[g] &&
                  row[3] == c->mass[g] && row[cols - 1] == c->radius[g];
        for (size_t j = 0; j < 3; j++) ok &= row[4 + j] == c->center[3 * g + j];
        for (size_t j = 0; vel && j < 3; j++) ok &= row[7 + j] == c->velocity[3 * g + j];
        if (vel) ok &= row[10] == c->dispersion[g];
        if (!ok) return false;
    }
    return true;
}

static bool same_groups(const char *path, const int64_t *want, size_t n)
{
    grove_array g = load(path);
    bool ok = g.dtype == GROVE_INT64 && g.ndim == 1 && g.shape[0] == n && memcmp(g.data, want, n * 8) == 0;
    grove_array_free(&g);
    return ok;
}

TEST(cli_fof_npy_snapshots)
{
    enum { N = 4000 };
    double *pos = malloc(N * 3 * sizeof *pos), *vel = malloc(N * 3 * sizeof *vel), *mass = malloc(N * sizeof *mass);
    double *rows4 = malloc(N * 4 * sizeof *rows4), *rows7 = malloc(N * 7 * sizeof *rows7);
    int64_t *want = malloc(N * sizeof *want);
    snapshot(N, 5, pos, vel, mass);
    for (size_t i = 0; i < N; i++) {
        memcpy(rows4 + 4 * i, pos + 3 * i, 24);
        rows4[4 * i + 3] = mass[i];
        memcpy(rows7 + 7 * i, pos + 3 * i, 24);
        memcpy(rows7 + 7 * i + 3, vel + 3 * i, 24);
        rows7[7 * i + 6] = mass[i];
    }
    grove_array a3 = {pos, GROVE_FLOAT64, 2, {N, 3}}, a4 = {rows4, GROVE_FLOAT64, 2, {N, 4}},
                a7 = {rows7, GROVE_FLOAT64, 2, {N, 7}};
    CHECK_OK(grove_npy_write(test_path("fof3.npy"), &a3));
    CHECK_OK(grove_npy_write(test_path("fof4.npy"), &a4));
    CHECK_OK(grove_npy_write(test_path("fof7.npy"), &a7));
    grove_fof_params p;
    grove_fof_params_init(&p);
    p.linking_length = 0.012;
    p.min_members = 10;
    const char *files[] = {"fof3.npy", "fof4.npy", "fof7.npy"};
    for (int k = 0; k < 3; k++) {
        grove_fof_catalogue cat;
        size_t groups = 0;
        REQUIRE_OK(grove_fof(grove_points_f64(pos, N, 3), k ? mass : NULL, k == 2 ? vel : NULL, &p, want, &groups,
                             &cat, NULL));
        CHECK(groups > 3);
        char args[2048], *out = NULL, expect[256];
        snprintf(args, sizeof args, "fof %s --linking-length 0.012 --min-members 10 --groups %s --catalogue %s --json",
                 test_path(files[k]), test_path("g.npy"), test_path("h.npy"));
        CHECK(test_grove(args, &out) == 0);
        snprintf(expect, sizeof expect, "\"groups\": %zu, \"grouped_particles\": ", groups);
        CHECK_MSG(out && strstr(out, "\"command\": \"fof\", \"n\": 4000") && strstr(out, expect) &&
                      strstr(out, k == 2 ? "\"velocities\": true" : "\"velocities\": false") &&
                      strstr(out, k ? "\"masses\": true" : "\"masses\": false") && strstr(out, "\"seconds\": "),
                  "output: %s", out);
        snprintf(expect, sizeof expect, "\"largest\": %lld,", (long long)cat.members[0]);
        CHECK_MSG(out && strstr(out, expect), "output: %s (want %s)", out, expect);
        free(out);
        CHECK_MSG(same_groups(test_path("g.npy"), want, N), "%s: groups differ from the library's", files[k]);
        grove_array t = load(test_path("h.npy"));
        CHECK_MSG(same_table(&t, &cat), "%s: the catalogue differs from the library's", files[k]);
        grove_array_free(&t);
        grove_fof_catalogue_free(&cat);
    }
    /* --b: b times the bounding box's mean separation. */
    double sep = 0;
    CHECK_OK(grove_fof_mean_separation(grove_points_f64(pos, N, 3), NULL, 0, &sep));
    p.linking_length = 0.2 * sep;
    p.min_members = 20;
    REQUIRE_OK(grove_fof(grove_points_f64(pos, N, 3), NULL, NULL, &p, want, NULL, NULL, NULL));
    char args[2048], *out = NULL;
    snprintf(args, sizeof args, "fof %s --b 0.2 --groups %s --quiet", test_path("fof3.npy"), test_path("gb.npy"));
    CHECK(test_grove(args, &out) == 0);
    free(out);
    CHECK(same_groups(test_path("gb.npy"), want, N));
    /* float32 rows with masses. */
    float *f4 = malloc(N * 4 * sizeof *f4);
    for (size_t i = 0; i < 4 * N; i++) f4[i] = (float)rows4[i];
    grove_array af = {f4, GROVE_FLOAT32, 2, {N, 4}};
    CHECK_OK(grove_npy_write(test_path("fof4f.npy"), &af));
    p.linking_length = 0.012;
    REQUIRE_OK(grove_fof((grove_points){f4, N, 3, GROVE_FLOAT32, 16}, NULL, NULL, &p, want, NULL, NULL, NULL));
    snprintf(args, sizeof args, "fof %s --linking-length 0.012 --groups %s --quiet", test_path("fof4f.npy"),
             test_path("gf.npy"));
    CHECK(test_grove(args, &out) == 0);
    free(out);
    CHECK(same_groups(test_path("gf.npy"), want, N));
    free(f4);
    free(pos);
    free(vel);
    free(mass);
    free(rows4);
    free(rows7);
    free(want);
}

TEST(cli_fof_tipsy_and_csv)
{
    enum { N = 3000 };
    double *pos = malloc(N * 3 * sizeof *pos), *vel = malloc(N * 3 * sizeof *vel), *mass = malloc(N * sizeof *mass);
    snapshot(N, 9, pos, vel, mass);
    CHECK_OK(grove_tipsy_write(test_path("fof.tipsy"), N, 0.5, pos, vel, mass, NULL, 0.01, 1));
    /* What the file holds (float32 values), as the CLI reads it. */
    grove_snapshot snap = {0};
    REQUIRE_OK(grove_tipsy_read(test_path("fof.tipsy"), &snap));
    grove_fof_params p;
    grove_fof_params_init(&p);
    p.linking_length = 0.01;
    p.min_members = 15;
    int64_t *want = malloc(N * sizeof *want);
    grove_fof_catalogue cat;
    REQUIRE_OK(grove_fof(grove_points_f64(snap.pos, N, 3), snap.mass, snap.vel, &p, want, NULL, &cat, NULL));
    char args[2048], *out = NULL;
    snprintf(args, sizeof args, "fof %s --linking-length 0.01 --min-members 15 --groups %s --catalogue %s --quiet",
             test_path("fof.tipsy"), test_path("gt.npy"), test_path("ht.csv"));
    CHECK(test_grove(args, &out) == 0);
    free(out);
    CHECK(same_groups(test_path("gt.npy"), want, N));
    /* The csv: its header line, then the rows in %.17g (exact). */
    FILE *f = fopen(test_path("ht.csv"), "r");
    char header[256] = "";
    REQUIRE(f && fgets(header, sizeof header, f));
    fclose(f);
    CHECK_MSG(strcmp(header, "group,members,first,mass,x,y,z,vx,vy,vz,sigma_v,radius\n") == 0, "header %s", header);
    grove_array t = {0};
    CHECK_OK(grove_csv_read(test_path("ht.csv"), &t));
    CHECK(cat.groups > 2 && same_table(&t, &cat));
    grove_array_free(&t);
    grove_fof_catalogue_free(&cat);
    grove_snapshot_free(&snap);
    free(pos);
    free(vel);
    free(mass);
    free(want);
}

/* A command that must fail with `status` and a message containing
 * `text`, leaving no groups file. */
static void refused(const char *args, const char *never, int status, const char *text)
{
    char *out = NULL;
    unlink(never);
    int rc = test_grove(args, &out);
    CHECK_MSG(rc == status && out && strstr(out, text), "grove %s -> %d: %s (wanted %d, \"%s\")", args, rc, out,
              status, text);
    CHECK_MSG(access(never, F_OK) != 0, "grove %s left its output", args);
    free(out);
}

TEST(cli_fof_errors)
{
    double good[] = {0.1, 0.1, 0.1, 0.2, 0.2, 0.2}, bad_mass[] = {0.1, 0.1, 0.1, 1, 0.2, 0.2, 0.2, 0},
           nan_pos[] = {0.1, 0.1, 0.1, 0.2, NAN, 0.2};
    grove_array a = {good, GROVE_FLOAT64, 2, {2, 3}}, m = {bad_mass, GROVE_FLOAT64, 2, {2, 4}},
                nan = {nan_pos, GROVE_FLOAT64, 2, {2, 3}}, wide = {good, GROVE_FLOAT64, 2, {1, 6}};
    CHECK_OK(grove_npy_write(test_path("e3.npy"), &a));
    CHECK_OK(grove_npy_write(test_path("em.npy"), &m));
    CHECK_OK(grove_npy_write(test_path("enan.npy"), &nan));
    CHECK_OK(grove_npy_write(test_path("e6.npy"), &wide));
    test_write_file("bad.tipsy", "not a tipsy file at all, just words", 36);
    /* test_path's buffers rotate: keep copies. */
    char e3[1024], em[1024], enan[1024], e6[1024], tipsy[1024], missing[1024], never[1024], args[4096];
    snprintf(e3, sizeof e3, "%s", test_path("e3.npy"));
    snprintf(em, sizeof em, "%s", test_path("em.npy"));
    snprintf(enan, sizeof enan, "%s", test_path("enan.npy"));
    snprintf(e6, sizeof e6, "%s", test_path("e6.npy"));
    snprintf(tipsy, sizeof tipsy, "%s", test_path("bad.tipsy"));
    snprintf(missing, sizeof missing, "%s", test_path("missing.npy"));
    snprintf(never, sizeof never, "%s", test_path("never.npy"));
    struct {
        const char *file, *flags;
        int status;
        const char *text;
    } cases[] = {
        {e3, "", 2, "give one of --linking-length L and --b B"},
        {e3, "--b 0.2 --linking-length 0.1", 2, "give one of"},
        {e3, "--b 0.2 --box 1,2", 2, "--box has 2 lengths"},
        {e3, "--b 0.2 --box -1", 2, "--box: length 1"},
        {e3, "--b 0.2 --box 0.15", 1, "row 1"},
        {e3, "--b 0.2 --min-members 0", 2, "--min-members"},
        {e3, "--b 0.2 --catalogue h.txt", 2, "--catalogue h.txt"},
        {e3, "--linking-length -1", 2, "--linking-length"},
        {em, "--b 0.2", 1, "mass[1] = 0"},
        {enan, "--b 0.2", 1, "row 1"},
        {e6, "--b 0.2", 1, "of shape (1, 6)"},
        {e6, "--b 0.2", 1, "e6.npy"},
        {tipsy, "--b 0.2", 1, "bad.tipsy"},
        {missing, "--b 0.2", 1, "missing.npy"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        snprintf(args, sizeof args, "fof %s %s --groups %s", cases[k].file, cases[k].flags, never);
        refused(args, never, cases[k].status, cases[k].text);
    }
    /* The groups file may not be an input. */
    snprintf(args, sizeof args, "fof %s --b 0.2 --groups %s", e3, e3);
    char *out = NULL;
    CHECK(test_grove(args, &out) == 2 && out && strstr(out, "would overwrite the input"));
    free(out);
}
