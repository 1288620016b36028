/* grove paircount on real files: its counts, weighted sums and xi against
 * the library's (tested against brute force in test_paircount.c), every
 * form --bins takes, the --out table's columns, the same weighted bits
 * from every instruction set's kernels, and refusals: one line, exit 1
 * for bad input and 2 for a bad flag, no output left. */
#include "test.h"

#include <math.h>
#include <stdbool.h>
#include <unistd.h>

/* n uniform points in [0, side)^cols as .npy, or with cols 0 n weights,
 * 10^-6 to 10^6 (side 0) or 0.5 to 2. */
static const char *write_npy(const char *name, size_t n, size_t cols, double side, uint64_t seed)
{
    grove_rng rng;
    grove_rng_seed(&rng, seed);
    grove_array a = {0};
    CHECK_OK(grove_array_create(&a, GROVE_FLOAT64, n, cols));
    for (size_t i = 0; i < n * (cols ? cols : 1); i++) {
        double u = grove_rng_uniform(&rng);
        ((double *)a.data)[i] = cols ? side * u : side == 0 ? pow(10, 12 * u - 6) : 0.5 + 1.5 * u;
    }
    const char *path = test_path(name);
    CHECK_OK(grove_npy_write(path, &a));
    grove_array_free(&a);
    return path;
}

/* The numbers of "key": [...] in a --json line into v (at most cap);
 * returns how many (null reads as NaN). */
static size_t json_array(const char *out, const char *key, double *v, size_t cap)
{
    char want[64];
    snprintf(want, sizeof want, "\"%s\": [", key);
    const char *at = out ? strstr(out, want) : NULL;
    if (!at) return 0;
    at += strlen(want);
    size_t n = 0;
    while (*at && *at != ']' && n < cap) {
        if (strncmp(at, "null", 4) == 0) {
            v[n++] = NAN;
            at += 4;
        } else {
            char *end;
            v[n++] = strtod(at, &end);
            at += end - at;
        }
        while (*at == ',' || *at == ' ') at++;
    }
    return n;
}

/* The text of "key": [...] (malloc'd), to compare bits as printed. */
static char *json_text(const char *out, const char *key)
{
    char want[64];
    snprintf(want, sizeof want, "\"%s\": [", key);
    const char *at = out ? strstr(out, want) : NULL;
    const char *end = at ? strchr(at, ']') : NULL;
    return end ? strndup(at, (size_t)(end - at)) : NULL;
}

/* `grove ARGS` with exit status 0; its output into *out (malloc'd). */
static void run_ok(const char *args, char **out)
{
    int rc = test_grove(args, out);
    CHECK_MSG(rc == 0, "grove %s -> %d: %s", args, rc, *out);
}

TEST(paircount_cli_counts_what_the_library_counts)
{
    const char *data = write_npy("pc_data.npy", 1500, 3, 4, 1), *rand = write_npy("pc_rand.npy", 2500, 3, 4, 2);
    const char *w = write_npy("pc_w.npy", 1500, 0, 1, 3);
    static const double edges[] = {0.05, 0.1, 0.2, 0.4};
    char args[2048];
    snprintf(args, sizeof args, "paircount %s --bins 0.05,0.1,0.2,0.4 --randoms %s --box 4 --weights %s --json "
             "--out %s", data, rand, w, test_path("pc_out.npy"));
    char *out = NULL;
    run_ok(args, &out);
    grove_array d = {0}, r = {0}, wa = {0}, table = {0};
    REQUIRE_OK(grove_npy_read(data, &d));
    REQUIRE_OK(grove_npy_read(rand, &r));
    REQUIRE_OK(grove_npy_read(w, &wa));
    grove_points pd, pr;
    REQUIRE_OK(grove_array_points(&d, &pd));
    REQUIRE_OK(grove_array_points(&r, &pr));
    grove_paircount_params p;
    grove_paircount_params_init(&p);
    double box = 4;
    p.edges = edges;
    p.nedges = 4;
    p.index.boxsize = &box;
    p.index.boxsize_count = 1;
    p.weights1 = wa.data;
    int64_t n[3][3];
    double sums[3][3], got[16];
    REQUIRE_OK(grove_paircount(pd, NULL, &p, n[0], sums[0], NULL));
    REQUIRE_OK(grove_paircount(pd, &pr, &p, n[1], sums[1], NULL));
    p.weights1 = NULL;
    REQUIRE_OK(grove_paircount(pr, NULL, &p, n[2], sums[2], NULL));
    static const char *const keys[3][2] = {{"npairs", "weighted"}, {"dr_npairs", "dr_weighted"},
                                           {"rr_npairs", "rr_weighted"}};
    for (int k = 0; k < 3; k++) {
        CHECK_MSG(json_array(out, keys[k][0], got, 16) == 3 && got[0] == (double)n[k][0] &&
                      got[1] == (double)n[k][1] && got[2] == (double)n[k][2],
                  "%s: %s", keys[k][0], out);
        CHECK_MSG(json_array(out, keys[k][1], got, 16) == 3 && got[0] == sums[k][0] && got[1] == sums[k][1] &&
                      got[2] == sums[k][2],
                  "%s: %s", keys[k][1], out);
    }
    /* xi: Landy-Szalay from those sums (grove_paircount_xi, tested on its
     * formula in test_paircount.c). */
    double xi[3];
    grove_paircount_totals td = grove_paircount_totals_of(wa.data, 1500), tr = {2500, 2500};
    REQUIRE_OK(grove_paircount_xi(&p, 3, td, tr, sums[0], sums[1], sums[2], xi));
    CHECK_MSG(json_array(out, "xi", got, 16) == 3 && got[0] == xi[0] && got[1] == xi[1] && got[2] == xi[2], "xi: %s",
              out);
    CHECK(strstr(out, "\"columns\": [\"lo\", \"hi\", \"dd\", \"dd_weighted\", \"dr\", \"rr\", \"dr_weighted\", "
                      "\"rr_weighted\", \"xi\"]") != NULL);
    /* The table: one row per bin, the same values. */
    REQUIRE_OK(grove_npy_read(test_path("pc_out.npy"), &table));
    CHECK(table.ndim == 2 && table.shape[0] == 3 && table.shape[1] == 9);
    const double *t = table.data;
    for (size_t b = 0; table.shape[1] == 9 && b < 3; b++) {
        const double *row = t + 9 * b;
        CHECK(row[0] == edges[b] && row[1] == edges[b + 1] && row[2] == (double)n[0][b] && row[3] == sums[0][b]);
        CHECK(row[4] == (double)n[1][b] && row[5] == (double)n[2][b] && row[6] == sums[1][b] &&
              row[7] == sums[2][b] && row[8] == xi[b]);
    }
    free(out);
    grove_array_free(&d);
    grove_array_free(&r);
    grove_array_free(&wa);
    grove_array_free(&table);
}

TEST(paircount_cli_bins_in_every_form_count_alike)
{
    /* The same four edges as a list, one a line, Corrfunc's binfile rows,
     * a row, a .npy of edges and a .npy of (low, high) rows. */
    const char *data = write_npy("pcb_data.npy", 800, 3, 2, 5);
    const char *files[][2] = {{"pcb_col.txt", "0.1\n0.2\n0.4\n0.8\n"},
                              {"pcb_binfile.txt", "# rmin rmax\n0.1 0.2\n0.2 0.4\n0.4 0.8\n"},
                              {"pcb_row.csv", "0.1,0.2,0.4,0.8\n"}};
    double edges[4] = {0.1, 0.2, 0.4, 0.8}, rows[6] = {0.1, 0.2, 0.2, 0.4, 0.4, 0.8};
    grove_array e = {edges, GROVE_FLOAT64, 1, {4, 1}}, b = {rows, GROVE_FLOAT64, 2, {3, 2}};
    REQUIRE_OK(grove_npy_write(test_path("pcb_edges.npy"), &e));
    REQUIRE_OK(grove_npy_write(test_path("pcb_rows.npy"), &b));
    char args[2048];
    snprintf(args, sizeof args, "paircount %s --bins 0.1,0.2,0.4,0.8 --pimax 1.5 --json", data);
    char *listed = NULL;
    run_ok(args, &listed);
    char *want = json_text(listed, "npairs");
    free(listed);
    const char *sources[5] = {test_path("pcb_edges.npy"), test_path("pcb_rows.npy"), NULL, NULL, NULL};
    for (int f = 0; f < 3; f++) sources[2 + f] = test_write_file(files[f][0], files[f][1], strlen(files[f][1]));
    for (int s = 0; s < 5; s++) {
        snprintf(args, sizeof args, "paircount %s --bins %s --pimax 1.5 --json", data, sources[s]);
        char *out = NULL;
        run_ok(args, &out);
        char *got = json_text(out, "npairs");
        CHECK_MSG(want && got && strcmp(want, got) == 0, "--bins %s: %s, the list gives %s", sources[s], got, want);
        free(got);
        free(out);
    }
    free(want);
}

TEST(paircount_cli_same_weighted_bits_on_every_instruction_set)
{
    /* The weighted sums add each pair's product in one order whatever the
     * kernel (docs/paircount.md): the portable, AVX2 and native runs print
     * the same digits, and the same counts. Weights over twelve decades, so
     * that another order would round otherwise. */
    const char *data = write_npy("pci_data.npy", 3000, 3, 3, 8), *w = write_npy("pci_w.npy", 3000, 0, 0, 9);
    char args[2048], *base[2] = {NULL, NULL};
    static const char *const cpus[] = {"native", "avx2", "portable"};
    for (int c = 0; c < 3; c++) {
        snprintf(args, sizeof args, "env GROVE_CPU=%s %s paircount %s --bins 0.05,0.1,0.2,0.3 --box 3 --weights %s "
                 "--threads 2 --json", cpus[c], test_cli(), data, w);
        char *out = NULL;
        CHECK(test_run(args, &out) == 0);
        char *now[2] = {json_text(out, "weighted"), json_text(out, "npairs")};
        for (int k = 0; k < 2; k++) {
            if (c == 0) base[k] = now[k];
            else {
                CHECK_MSG(base[k] && now[k] && strcmp(base[k], now[k]) == 0, "GROVE_CPU=%s: %s, native %s", cpus[c],
                          now[k], base[k]);
                free(now[k]);
            }
        }
        free(out);
    }
    free(base[0]);
    free(base[1]);
}

/* `grove ARGS` fails with status, one line holding `text`, and leaves no
 * file at out. */
static void expect_refusal(const char *args, int status, const char *text, const char *out)
{
    char *got = NULL;
    int rc = test_grove(args, &got);
    bool one_line = got && strchr(got, '\n') == got + strlen(got) - 1;
    CHECK_MSG(rc == status && one_line && strstr(got, text), "grove %s -> %d (wanted %d, \"%s\"): %s", args, rc,
              status, text, got);
    CHECK_MSG(access(out, F_OK) != 0, "grove %s left %s", args, out);
    free(got);
}

TEST(paircount_cli_refuses_bad_input_in_one_line)
{
    const char *data = write_npy("pce_data.npy", 200, 3, 2, 11), *rand = write_npy("pce_rand.npy", 300, 3, 2, 12);
    const char *w = write_npy("pce_w.npy", 300, 0, 1, 13), *out = test_path("pce_out.npy");
    const char *gap = test_write_file("pce_gap.txt", "0.1 0.2\n0.3 0.5\n", 16);
    const char *down = test_write_file("pce_down.txt", "0.5\n0.2\n", 8);
    const char *nan_w = test_write_file("pce_nan.txt", "1\nnan\n", 6);
    struct {
        const char *flags;
        int status;
        const char *text;
    } cases[] = {
        {"--bins 0.2,0.1", 2, "--bins 0.2,0.1: edges must ascend"},
        {"--bins 0.1,-0.2", 2, "edge 1 is -0.2"},
        {"--bins 0.1,nan", 2, "--bins 0.1,nan: is not finite"},
        {"--bins 0.1", 2, "at least 2"},
        {"--bins 0.1,0.2 --pimax 0.5", 2, "--pimax: expected a number >= 1"},
        {"--bins 0.1,0.2 --pimax -1", 2, "--pimax"},
        {"--bins 0.1,0.2 --box 1", 1, "outside the periodic box"},
        {"--bins 0.1,0.2 --box 1,2", 2, "--box"},
    };
    char args[2048];
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        snprintf(args, sizeof args, "paircount %s %s --out %s", data, cases[k].flags, out);
        expect_refusal(args, cases[k].status, cases[k].text, out);
    }
    /* Files: named, with what is wrong. */
    snprintf(args, sizeof args, "paircount %s --bins %s --out %s", data, gap, out);
    expect_refusal(args, 1, "bins must join up", out);
    snprintf(args, sizeof args, "paircount %s --bins %s --out %s", data, down, out);
    expect_refusal(args, 1, "pce_down.txt: edges must ascend", out);
    snprintf(args, sizeof args, "paircount %s --bins %s --out %s", data, test_path("pce_none.txt"), out);
    expect_refusal(args, 1, "pce_none.txt", out);
    snprintf(args, sizeof args, "paircount %s --bins 0.1,0.2 --weights %s --out %s", data, w, out);
    expect_refusal(args, 1, "pce_w.npy: expected one weight per point of", out);
    snprintf(args, sizeof args, "paircount %s --bins 0.1,0.2 --weights %s --out %s", data, nan_w, out);
    expect_refusal(args, 1, "pce_nan.txt", out);
    snprintf(args, sizeof args, "paircount %s --bins 0.1,0.2 --randoms %s --weights %s --out %s", data, rand, w, out);
    expect_refusal(args, 1, "expected one weight per point", out);
    snprintf(args, sizeof args, "paircount --bins 0.1,0.2 --out %s", out);
    expect_refusal(args, 2, "DATA and --bins are required", out);
}
