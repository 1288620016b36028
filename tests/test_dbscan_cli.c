/* grove dbscan on real files: the labels and core files against the
 * library, the --json keys, and errors that leave no output. */
#include "test.h"

#include "dbscan_ref.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <unistd.h>

static grove_array load(const char *path)
{
    grove_array a = {0};
    CHECK_OK(grove_npy_read(path, &a));
    return a;
}

TEST(cli_dbscan_outputs_match_the_library)
{
    const size_t n = 4000;
    double *x = test_points(TEST_CLUSTERED, n, 2, 21);
    grove_array a = {x, GROVE_FLOAT64, 2, {n, 2}};
    REQUIRE_OK(grove_npy_write(test_path("dbdata.npy"), &a));
    grove_dbscan_params p;
    grove_dbscan_params_init(&p);
    p.eps = 0.004;
    p.min_samples = 12;
    int64_t *want = malloc(n * sizeof *want);
    uint8_t *core = malloc(n);
    grove_dbscan_counts counts;
    REQUIRE_OK(grove_dbscan(grove_points_f64(x, n, 2), NULL, &p, want, core, &counts, NULL));
    CHECK(counts.clusters > 1 && counts.noise > 0 && counts.core > 0 && counts.core < n);
    char labels[512], cores[512], args[2048], *out = NULL;
    snprintf(labels, sizeof labels, "%s", test_path("dbl.npy"));
    snprintf(cores, sizeof cores, "%s", test_path("dbc.npy"));
    snprintf(args, sizeof args, "dbscan %s --eps 0.004 --min-samples 12 --labels %s --core %s --threads 2 --json",
             test_path("dbdata.npy"), labels, cores);
    CHECK(test_grove(args, &out) == 0);
    char want_json[160];
    snprintf(want_json, sizeof want_json, "\"clusters\": %zu, \"core\": %zu, \"noise\": %zu", counts.clusters,
             counts.core, counts.noise);
    CHECK_MSG(strstr(out, "\"command\": \"dbscan\"") && strstr(out, want_json) && strstr(out, "\"n\": 4000") &&
                  strstr(out, "\"seconds\": ") && strstr(out, "\"io_seconds\": ") && strstr(out, "\"threads\": 2") &&
                  strstr(out, "\"peak_rss_bytes\": ") && strstr(out, "\"min_samples\": 12"),
              "output: %s (want %s)", out, want_json);
    free(out);
    grove_array l = load(labels), c = load(cores);
    CHECK(l.dtype == GROVE_INT64 && l.ndim == 1 && l.shape[0] == n && memcmp(l.data, want, n * 8) == 0);
    CHECK(c.dtype == GROVE_INT64 && c.ndim == 1 && c.shape[0] == counts.core);
    const int64_t *rows = c.data;
    for (size_t i = 0, k = 0; c.data && i < n; i++)
        if (core[i]) {
            CHECK_MSG(k < counts.core && rows[k] == (int64_t)i, "core row %zu is %lld, want %zu", k,
                      (long long)rows[k], i);
            k++;
        }
    grove_array_free(&l);
    grove_array_free(&c);
    /* The plain summary line, and a budget that holds the working memory. */
    snprintf(args, sizeof args, "dbscan %s --eps 0.004 --min-samples 12 --labels %s --memory-budget 64K",
             test_path("dbdata.npy"), labels);
    CHECK(test_grove(args, &out) == 0);
    CHECK_MSG(strstr(out, "dbscan: 4000 points in 2 dims") && strstr(out, "clusters"), "output: %s", out);
    free(out);
    /* A periodic box: the library's labels with the same box. */
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < 2 * n; i++) lo = fmin(lo, x[i]), hi = fmax(hi, x[i]);
    for (size_t i = 0; i < 2 * n; i++) x[i] -= lo;
    REQUIRE_OK(grove_npy_write(test_path("dbbox.npy"), &a));
    double len = hi - lo + 0.001;
    grove_index_params ip;
    grove_index_params_init(&ip);
    ip.boxsize = &len;
    ip.boxsize_count = 1;
    REQUIRE_OK(grove_dbscan(grove_points_f64(x, n, 2), &ip, &p, want, core, &counts, NULL));
    snprintf(args, sizeof args, "dbscan %s --eps 0.004 --min-samples 12 --labels %s --box %.17g --json",
             test_path("dbbox.npy"), labels, len);
    CHECK(test_grove(args, &out) == 0);
    CHECK_MSG(strstr(out, "\"periodic\": true"), "output: %s", out);
    free(out);
    l = load(labels);
    CHECK(l.shape[0] == n && memcmp(l.data, want, n * 8) == 0);
    grove_array_free(&l);
    snprintf(args, sizeof args, "dbscan %s --eps 0.004 --min-samples 12 --labels %s --box 1,2,3",
             test_path("dbbox.npy"), labels);
    CHECK(test_grove(args, &out) == 2 && strstr(out, "--box has 3 lengths"));
    free(out);
    free(want);
    free(core);
    free(x);
}

TEST(cli_dbscan_errors_leave_no_output)
{
    const size_t n = 3000;
    double *x = test_points(TEST_UNIFORM, n, 3, 5);
    grove_array a = {x, GROVE_FLOAT64, 2, {n, 3}};
    REQUIRE_OK(grove_npy_write(test_path("dberr.npy"), &a));
    x[3 * 17 + 1] = NAN;
    REQUIRE_OK(grove_npy_write(test_path("dbnan.npy"), &a));
    free(x);
    char data[512], nan_data[512], l[512], c[512];
    snprintf(data, sizeof data, "%s", test_path("dberr.npy"));
    snprintf(nan_data, sizeof nan_data, "%s", test_path("dbnan.npy"));
    snprintf(l, sizeof l, "%s", test_path("never_l.npy"));
    snprintf(c, sizeof c, "%s", test_path("never_c.npy"));
    char c_txt[520];
    snprintf(c_txt, sizeof c_txt, "%s.txt", c);
    /* Outputs: 0 --labels L --core C, 1 --core C only, 2 --labels L --core L, 3 --core C.txt. */
    struct {
        const char *data, *flags;
        int outputs;
        const char *message;
        int status;
    } cases[] = {
        {data, "--min-samples 5", 0, "--eps, --min-samples and --labels are required", 2},
        {data, "--eps 0.1", 0, "required", 2},
        {data, "--eps 0.1 --min-samples 5", 1, "required", 2},
        {data, "--eps -1 --min-samples 5", 0, "--eps: expected a number >= 0, got '-1'", 2},
        {data, "--eps 0.1 --min-samples 0", 0, "--min-samples: expected a whole number >= 1", 2},
        {data, "--eps 0.1 --min-samples 5", 2, "--labels", 2},
        {data, "--eps 0.1 --min-samples 5", 3, "--core", 2},
        {data, "--eps 0.1 --min-samples 5 --memory-budget 10K", 0, "memory budget", 1},
        {nan_data, "--eps 0.1 --min-samples 5", 0, "row 17", 1},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        int outs = cases[k].outputs;
        char flags[2048];
        snprintf(flags, sizeof flags, "%s%s%s --core %s", cases[k].flags, outs == 1 ? "" : " --labels ",
                 outs == 1 ? "" : l, outs == 2 ? l : outs == 3 ? c_txt : c);
        char args[4096], *out = NULL;
        snprintf(args, sizeof args, "dbscan %s %s", cases[k].data, flags);
        int st = test_grove(args, &out);
        CHECK_MSG(st == cases[k].status && strstr(out, cases[k].message) && strstr(out, "grove dbscan: "),
                  "%s -> %d: %s", args, st, out);
        CHECK_MSG(cases[k].status != 1 || strstr(out, cases[k].data), "%s: the message does not name the file: %s",
                  args, out);
        free(out);
        CHECK(access(l, F_OK) != 0 && access(c, F_OK) != 0);
    }
}

/* Writes weight (n values) as dtype t: a .npy, or with t 0 a text
 * column of "%.17g" (read back exactly). */
static void write_weights(const char *name, const double *weight, size_t n, grove_dtype t)
{
    if (!t) {
        FILE *f = fopen(test_path(name), "w");
        REQUIRE(f != NULL);
        for (size_t i = 0; i < n; i++) fprintf(f, "%.17g\n", weight[i]);
        fclose(f);
        return;
    }
    grove_array a = {0};
    REQUIRE_OK(grove_array_create(&a, t, n, 0));
    for (size_t i = 0; i < n; i++) {
        if (t == GROVE_FLOAT32) ((float *)a.data)[i] = (float)weight[i];
        else if (t == GROVE_INT32) ((int32_t *)a.data)[i] = (int32_t)weight[i];
        else ((double *)a.data)[i] = weight[i];
    }
    REQUIRE_OK(grove_npy_write(test_path(name), &a));
    grove_array_free(&a);
}

/* --sample-weight: the labels and core rows of scikit-learn's DBSCAN by
 * brute force (dbscan_ref.h: a point is core when its neighbourhood's
 * weights sum to min_samples, the sum rounded once) with weights that are
 * zero, negative, fractional (tenths, whose sums round), in float64,
 * float32 and int32 files and a text column; and a weights file that is
 * not one finite weight per row, or all zero, refused in one line naming
 * it (and the row or line of a bad value), with no output. */
TEST(cli_dbscan_sample_weight_matches_brute_force)
{
    const size_t n = 3000;
    ref_set *s = join_ref_make(TEST_CLUSTERED, n, 2, false, 23);
    join_ref_take_order(s, NULL);
    grove_array a = {(void *)(uintptr_t)s->data, GROVE_FLOAT64, 2, {n, 2}};
    REQUIRE_OK(grove_npy_write(test_path("dbw_data.npy"), &a));
    double *weight = malloc(n * sizeof *weight);
    int64_t *want = malloc(n * sizeof *want);
    uint8_t *core = malloc(n);
    const struct {
        const char *file;
        grove_dtype t;
    } kinds[] = {{"dbw_w.npy", GROVE_FLOAT64}, {"dbw_w32.npy", GROVE_FLOAT32},
                 {"dbw_wi.npy", GROVE_INT32},  {"dbw_w.txt", 0}};
    for (size_t f = 0; f < sizeof kinds / sizeof *kinds; f++) {
        for (size_t i = 0; i < n; i++)
            weight[i] = kinds[f].t == GROVE_INT32   ? (double)((i * 5) % 4) - 1
                        : kinds[f].t == GROVE_FLOAT32 ? (double)((i * 7) % 9) / 4 - 0.5
                                                      : (double)((int)((i * 7) % 13) - 3) / 10;
        write_weights(kinds[f].file, weight, n, kinds[f].t);
        size_t contested = dbscan_ref(s, 0.004 * 0.004, 8, weight, want, core);
        size_t ncore = 0, noise = 0, clusters = 0;
        for (size_t i = 0; i < n; i++) {
            ncore += core[i];
            noise += want[i] < 0;
            clusters = want[i] + 1 > (int64_t)clusters ? (size_t)want[i] + 1 : clusters;
        }
        CHECK_MSG(clusters > 1 && noise > 0 && ncore > 0 && contested > 0, "%s: %zu clusters, %zu core, %zu noise",
                  kinds[f].file, clusters, ncore, noise);
        char args[2048], *out = NULL, labels[512], cores[512];
        snprintf(labels, sizeof labels, "%s", test_path("dbw_l.npy"));
        snprintf(cores, sizeof cores, "%s", test_path("dbw_c.npy"));
        snprintf(args, sizeof args, "dbscan %s --eps 0.004 --min-samples 8 --sample-weight %s --labels %s --core %s "
                 "--json", test_path("dbw_data.npy"), test_path(kinds[f].file), labels, cores);
        CHECK(test_grove(args, &out) == 0);
        CHECK_MSG(out && strstr(out, "\"weighted\": true"), "%s", out);
        free(out);
        grove_array l = load(labels), c = load(cores);
        CHECK_MSG(l.shape[0] == n && memcmp(l.data, want, n * 8) == 0, "%s: labels differ", kinds[f].file);
        bool same = c.shape[0] == ncore;
        for (size_t i = 0, k = 0; same && i < n; i++)
            if (core[i]) same = ((const int64_t *)c.data)[k++] == (int64_t)i;
        CHECK_MSG(same, "%s: core rows differ", kinds[f].file);
        grove_array_free(&l);
        grove_array_free(&c);
    }
    /* Bad weights: a NaN and an infinity (named by row or line), wrong
     * length, two columns, all zero. */
    weight[1234] = NAN;
    write_weights("dbw_nan.npy", weight, n, GROVE_FLOAT64);
    write_weights("dbw_nan.txt", weight, n, 0);
    weight[1234] = INFINITY;
    write_weights("dbw_inf.npy", weight, n, GROVE_FLOAT64);
    weight[1234] = 1;
    write_weights("dbw_short.npy", weight, n - 1, GROVE_FLOAT64);
    grove_array two = {weight, GROVE_FLOAT64, 2, {n / 2, 2}};
    REQUIRE_OK(grove_npy_write(test_path("dbw_2d.npy"), &two));
    memset(weight, 0, n * sizeof *weight);
    write_weights("dbw_zero.npy", weight, n, GROVE_FLOAT64);
    const struct {
        const char *file, *words;
    } bad[] = {{"dbw_nan.npy", "row 1234, column 0 is NaN"},
               {"dbw_nan.txt", "dbw_nan.txt:1235:1: 'nan' is not a finite number"},
               {"dbw_inf.npy", "row 1234, column 0 is infinite"},
               {"dbw_short.npy", "expected one weight per point of"},
               {"dbw_2d.npy", "got 1500 x 2 values"},
               {"dbw_zero.npy", "must contain at least one non-zero number"}};
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        char args[2048], *out = NULL, never[512];
        snprintf(never, sizeof never, "%s", test_path("dbw_never.npy"));
        snprintf(args, sizeof args, "dbscan %s --eps 0.004 --min-samples 8 --sample-weight %s --labels %s",
                 test_path("dbw_data.npy"), test_path(bad[k].file), never);
        CHECK(test_grove(args, &out) == 1);
        CHECK_MSG(out && strstr(out, bad[k].words) && strstr(out, bad[k].file) && strstr(out, "grove dbscan: ") &&
                      strchr(out, '\n') == strrchr(out, '\n'),
                  "%s: %s", bad[k].file, out);
        free(out);
        CHECK(access(never, F_OK) != 0);
    }
    free(want);
    free(core);
    free(weight);
    join_ref_free(s);
}
