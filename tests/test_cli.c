/* The command line on real files: round trips, --json, errors, no partial
 * outputs. Runs the built binary (GROVE_CLI) and checks its files with the
 * library's own reader and grove_balltree_check. */
#include "test.h"

#include <math.h>
#include <stdbool.h>
#include <unistd.h>


static bool exists(const char *path) { return access(path, F_OK) == 0; }

/* The last line of a command's output. */
static const char *last_line(const char *text)
{
    const char *end = text + strlen(text);
    while (end > text && end[-1] == '\n') end--;
    const char *p = end;
    while (p > text && p[-1] != '\n') p--;
    return p;
}

TEST(cli_gen_is_seeded_and_typed)
{
    char args[1024], *out = NULL;
    snprintf(args, sizeof args, "gen uniform --n 1000 --dims 3 --seed 9 -o %s", test_path("g1.npy"));
    REQUIRE(test_grove(args, &out) == 0);
    free(out);
    snprintf(args, sizeof args, "gen uniform --n 1000 --dims 3 --seed 9 -o %s --json", test_path("g2.npy"));
    REQUIRE(test_grove(args, &out) == 0);
    CHECK(strstr(last_line(out), "\"command\": \"gen\"") != NULL);
    CHECK(strstr(last_line(out), "\"seconds\": ") != NULL);
    free(out);
    grove_array a = {0}, b = {0};
    REQUIRE_OK(grove_npy_read(test_path("g1.npy"), &a));
    REQUIRE_OK(grove_npy_read(test_path("g2.npy"), &b));
    CHECK(a.dtype == GROVE_FLOAT64 && a.ndim == 2 && a.shape[0] == 1000 && a.shape[1] == 3);
    CHECK(memcmp(a.data, b.data, 3000 * sizeof(double)) == 0);
    for (size_t i = 0; i < 3000; i++) CHECK(((double *)a.data)[i] >= 0 && ((double *)a.data)[i] < 1);
    grove_array_free(&a);
    grove_array_free(&b);
    const char *kinds[] = {"normal", "exponential --rate 2", "blobs --centers 4"};
    for (int k = 0; k < 3; k++) {
        snprintf(args, sizeof args, "gen %s --n 50 --dims 2 --float32 -o %s", kinds[k], test_path("g3.npy"));
        CHECK(test_grove(args, NULL) == 0);
        REQUIRE_OK(grove_npy_read(test_path("g3.npy"), &a));
        CHECK(a.dtype == GROVE_FLOAT32 && a.shape[0] == 50 && a.shape[1] == 2);
        grove_array_free(&a);
    }
}

TEST(cli_usage_errors_name_the_flag)
{
    char *out = NULL;
    CHECK(test_grove("gen uniform --n abc --dims 3 -o x.npy", &out) == 2);
    CHECK(strstr(out, "--n: expected a whole number >= 0, got 'abc'") != NULL);
    free(out);
    CHECK(test_grove("gen uniform --dims 3 -o x.npy", &out) == 2);
    CHECK(strstr(out, "--n, --dims and -o are required") != NULL);
    free(out);
    CHECK(test_grove("balltree --bogus", &out) == 2);
    CHECK(strstr(out, "unknown option '--bogus'") != NULL);
    free(out);
    CHECK(test_grove("frobnicate", &out) == 2);
    CHECK(strstr(out, "unknown command 'frobnicate'") != NULL);
    free(out);
    CHECK(test_grove("balltree x.npy --indices i.npy --threads -3", &out) == 2);
    free(out);
    CHECK(test_grove("--help", &out) == 0 && strstr(out, "balltree") != NULL);
    free(out);
}

TEST(cli_info_reports_build)
{
    char *out = NULL;
    REQUIRE(test_grove("info --json", &out) == 0);
    CHECK(strstr(out, GROVE_VERSION_STRING) != NULL);
    CHECK(strstr(out, "openmp: yes") != NULL);
    CHECK(strstr(last_line(out), "\"command\": \"info\"") != NULL);
    CHECK(strstr(last_line(out), "\"threads\": ") != NULL);
    free(out);
}

/* --json's page_faults counts the build's first touches of fresh memory:
 * a one-off build writes its indices output (fresh pages) inside it. */
TEST(cli_balltree_json_counts_the_builds_fresh_pages)
{
    char args[2048], *out = NULL;
    snprintf(args, sizeof args, "gen uniform --n 65536 --dims 3 --seed 4 -o %s --quiet", test_path("pf.npy"));
    REQUIRE(test_grove(args, NULL) == 0);
    snprintf(args, sizeof args, "balltree %s --indices %s --mask %s --threads 1 --json", test_path("pf.npy"),
             test_path("pf_i.npy"), test_path("pf_m.npy"));
    REQUIRE(test_grove(args, &out) == 0);
    const char *key = strstr(last_line(out), "\"page_faults\": ");
    long faults = key ? strtol(key + strlen("\"page_faults\": "), NULL, 10) : -1;
    CHECK_MSG(faults >= 131072 * 8 / 4096, "page_faults %ld: %s", faults, out);
    free(out);
}

/* Build a tree from `data` with extra flags; check it with the library. */
static void balltree_round_trip(const char *data, const char *extra, size_t n, size_t slots)
{
    char args[2048], *out = NULL;
    snprintf(args, sizeof args, "balltree %s %s --indices %s --mask %s --verify --json", data, extra,
             test_path("bt_i.npy"), test_path("bt_m.npy"));
    int rc = test_grove(args, &out);
    CHECK_MSG(rc == 0, "grove %s -> %d: %s", args, rc, out);
    if (rc == 0) {
        CHECK(strstr(last_line(out), "\"command\": \"balltree\"") != NULL);
        CHECK(strstr(last_line(out), "\"verified\": true") != NULL);
        CHECK(strstr(last_line(out), "\"builder\": \"") != NULL);
        CHECK(strstr(last_line(out), "\"page_faults\": ") != NULL);
        CHECK(strstr(last_line(out), "\"io_seconds\": ") != NULL);
        CHECK(strstr(last_line(out), "\"peak_rss_bytes\": ") != NULL);
    }
    free(out);
    grove_array idx = {0}, mask = {0};
    REQUIRE_OK(grove_npy_read(test_path("bt_i.npy"), &idx));
    REQUIRE_OK(grove_npy_read(test_path("bt_m.npy"), &mask));
    CHECK(idx.dtype == GROVE_INT64 && idx.ndim == 1 && idx.shape[0] == slots);
    CHECK(mask.dtype == GROVE_BOOL && mask.ndim == 1 && mask.shape[0] == slots);
    size_t real = 0;
    for (size_t i = 0; i < mask.shape[0]; i++) real += ((uint8_t *)mask.data)[i];
    CHECK(real == n);
    grove_array_free(&idx);
    grove_array_free(&mask);
}

TEST(cli_balltree_npy_csv_and_raw_agree)
{
    /* 5 points: L = 2, 8 slots. The CSV has a header and a comment. */
    const char csv[] = "x,y,z\n# five points\n0 0 0\n1, 0, 0\n0.5,2,0\n3 1 1\n2,2,2\n";
    const char *csv_path = test_write_file("five.csv", csv, sizeof csv - 1);
    balltree_round_trip(csv_path, "", 5, 8);
    grove_array from_csv = {0};
    REQUIRE_OK(grove_npy_read(test_path("bt_i.npy"), &from_csv));
    double raw[15] = {0, 0, 0, 1, 0, 0, 0.5, 2, 0, 3, 1, 1, 2, 2, 2};
    const char *raw_path = test_write_file("five.bin", raw, sizeof raw);
    balltree_round_trip(raw_path, "--dims 3", 5, 8);
    grove_array from_raw = {0};
    REQUIRE_OK(grove_npy_read(test_path("bt_i.npy"), &from_raw));
    CHECK(memcmp(from_csv.data, from_raw.data, 8 * sizeof(int64_t)) == 0);
    grove_array_free(&from_csv);
    grove_array_free(&from_raw);
}

TEST(cli_balltree_batches_threads_and_stats)
{
    char args[2048];
    snprintf(args, sizeof args, "gen normal --n 3000 --dims 3 --seed 4 -o %s", test_path("pts.npy"));
    REQUIRE(test_grove(args, NULL) == 0);
    /* Three batches of unequal size given out of order, as int32. */
    grove_array batch = {0};
    REQUIRE_OK(grove_array_create(&batch, GROVE_INT32, 3000, 0));
    for (int i = 0; i < 3000; i++) ((int32_t *)batch.data)[i] = (i * 7) % 3 == 0 ? 5 : (i % 5 == 0 ? 0 : 2);
    REQUIRE_OK(grove_npy_write(test_path("batch.npy"), &batch));
    grove_array_free(&batch);
    char extra[1024];
    snprintf(extra, sizeof extra, "--batch %s --threads 1", test_path("batch.npy"));
    size_t counts[3] = {0, 0, 0}; /* ids 0, 2, 5 */
    for (int i = 0; i < 3000; i++) counts[(i * 7) % 3 == 0 ? 2 : (i % 5 == 0 ? 0 : 1)]++;
    size_t slots = 0;
    for (int b = 0; b < 3; b++) {
        size_t s = 2;
        while (s < counts[b]) s *= 2;
        slots += s;
    }
    balltree_round_trip(test_path("pts.npy"), extra, 3000, slots);
    grove_array one = {0}, two = {0};
    REQUIRE_OK(grove_npy_read(test_path("bt_i.npy"), &one));
    snprintf(extra, sizeof extra, "--batch %s --threads 2", test_path("batch.npy"));
    balltree_round_trip(test_path("pts.npy"), extra, 3000, slots);
    REQUIRE_OK(grove_npy_read(test_path("bt_i.npy"), &two));
    CHECK(memcmp(one.data, two.data, slots * sizeof(int64_t)) == 0);
    grove_array_free(&one);
    grove_array_free(&two);

    char *out = NULL;
    snprintf(args, sizeof args, "balltree %s --indices %s --centers %s --radii %s --level 3 --rotate 11 --json",
             test_path("pts.npy"), test_path("r_i.npy"), test_path("c.npy"), test_path("r.npy"));
    REQUIRE(test_grove(args, &out) == 0);
    CHECK(strstr(last_line(out), "\"balls\": 8") != NULL);
    free(out);
    grove_array centers = {0}, radii = {0};
    REQUIRE_OK(grove_npy_read(test_path("c.npy"), &centers));
    REQUIRE_OK(grove_npy_read(test_path("r.npy"), &radii));
    CHECK(centers.shape[0] == 8 && centers.shape[1] == 3 && radii.shape[0] == 8);
    for (int b = 0; b < 8; b++) CHECK(((double *)radii.data)[b] > 0);
    grove_array_free(&centers);
    grove_array_free(&radii);

    snprintf(args, sizeof args, "balltree %s --levels 2 --indices %s --verify", test_path("pts.npy"),
             test_path("p_i.npy"));
    CHECK(test_grove(args, NULL) == 0);
    grove_array part = {0};
    REQUIRE_OK(grove_npy_read(test_path("p_i.npy"), &part));
    CHECK(part.shape[0] == 3000);
    grove_array_free(&part);
}

TEST(cli_bad_input_leaves_no_output)
{
    const char csv[] = "1,2\n3,nan\n";
    const char *path = test_write_file("nan.csv", csv, sizeof csv - 1);
    char args[2048], *out = NULL;
    const char *indices = test_path("never_i.npy"), *mask = test_path("never_m.npy");
    snprintf(args, sizeof args, "balltree %s --indices %s --mask %s", path, indices, mask);
    CHECK(test_grove(args, &out) == 1);
    CHECK_MSG(strstr(out, "nan.csv:2:") != NULL, "message was: %s", out);
    free(out);
    CHECK(!exists(indices) && !exists(mask));
    /* A missing file, an unknown extension without --dims. */
    snprintf(args, sizeof args, "balltree %s --indices %s", test_path("missing.npy"), indices);
    CHECK(test_grove(args, &out) == 1);
    CHECK(strstr(out, "missing.npy") != NULL);
    free(out);
    const char *raw = test_write_file("pts.dat", "12345678", 8);
    snprintf(args, sizeof args, "balltree %s --indices %s", raw, indices);
    CHECK(test_grove(args, &out) == 1);
    CHECK(strstr(out, "--dims") != NULL);
    free(out);
    double pts[4] = {0, 1, 2, 3};
    const char *good = test_write_file("ok.bin", pts, sizeof pts);
    /* An output whose folder is missing: refused before any work. */
    snprintf(args, sizeof args, "balltree %s --dims 2 --indices %s/no/such/dir/i.npy --mask %s", good,
             test_tmpdir(), mask);
    CHECK(test_grove(args, &out) == 2);
    CHECK_MSG(strstr(out, "no/such/dir") != NULL, "message was: %s", out);
    free(out);
    CHECK(!exists(mask));
    /* A batch file of the wrong length. */
    grove_array batch = {0};
    REQUIRE_OK(grove_array_create(&batch, GROVE_INT64, 3, 0));
    REQUIRE_OK(grove_npy_write(test_path("short_batch.npy"), &batch));
    grove_array_free(&batch);
    snprintf(args, sizeof args, "balltree %s --dims 2 --batch %s --indices %s", good, test_path("short_batch.npy"),
             indices);
    CHECK(test_grove(args, &out) == 1);
    CHECK(strstr(out, "batch ids must be (2,)") != NULL);
    free(out);
    CHECK(!exists(indices));
    /* Values the library refuses (a negative batch id, a rotation that is
     * not finite): the line names the file they came from. (Copies:
     * test_path's buffers are reused.) */
    char in[512], out_path[512], neg[512], nan_rot[512];
    snprintf(in, sizeof in, "%s", good);
    snprintf(out_path, sizeof out_path, "%s", indices);
    snprintf(neg, sizeof neg, "%s", test_path("negative_batch.npy"));
    snprintf(nan_rot, sizeof nan_rot, "%s", test_path("nan_rotation.npy"));
    REQUIRE_OK(grove_array_create(&batch, GROVE_INT64, 2, 0));
    ((int64_t *)batch.data)[0] = 0;
    ((int64_t *)batch.data)[1] = -1;
    REQUIRE_OK(grove_npy_write(neg, &batch));
    grove_array_free(&batch);
    snprintf(args, sizeof args, "balltree %s --dims 2 --batch %s --indices %s", in, neg, out_path);
    CHECK(test_grove(args, &out) == 1);
    CHECK_MSG(strstr(out, "negative_batch.npy: ") && strstr(out, "batch id -1 at index 1 is negative"),
              "message was: %s", out);
    free(out);
    grove_array rotation = {0};
    REQUIRE_OK(grove_array_create(&rotation, GROVE_FLOAT64, 2, 2));
    double *r = rotation.data;
    r[0] = r[3] = 1;
    r[1] = 0;
    r[2] = NAN;
    REQUIRE_OK(grove_npy_write(nan_rot, &rotation));
    grove_array_free(&rotation);
    snprintf(args, sizeof args, "balltree %s --dims 2 --rotation %s --indices %s", in, nan_rot, out_path);
    CHECK(test_grove(args, &out) == 1);
    CHECK_MSG(strstr(out, "nan_rotation.npy: ") && strstr(out, "rotation[1][0] is not finite"), "message was: %s",
              out);
    free(out);
    CHECK(!exists(out_path));
}

TEST(cli_progress_bar_can_be_forced)
{
    char args[2048], *out = NULL;
    snprintf(args, sizeof args, "gen uniform --n 5000 --dims 2 -o %s", test_path("prog.npy"));
    REQUIRE(test_grove(args, NULL) == 0);
    snprintf(args, sizeof args, "balltree %s --indices %s --progress --quiet", test_path("prog.npy"),
             test_path("prog_i.npy"));
    REQUIRE(test_grove(args, &out) == 0);
    CHECK_MSG(strstr(out, "balltree") && strstr(out, "100%"), "no progress bar in: %s", out);
    free(out);
    snprintf(args, sizeof args, "balltree %s --indices %s --no-progress --quiet", test_path("prog.npy"),
             test_path("prog_i.npy"));
    REQUIRE(test_grove(args, &out) == 0);
    CHECK_MSG(out[0] == '\0', "--quiet --no-progress printed: %s", out);
    free(out);
}

/* `"header_line": X` from a --json line, as text up to the next comma. */
static void check_header_line(const char *file, const char *text, const char *want, size_t rows)
{
    const char *path = test_write_file(file, text, strlen(text));
    char args[2048], *out = NULL;
    snprintf(args, sizeof args, "knn %s -k 1 --indices %s --json", path, test_path("hl_i.npy"));
    int rc = test_grove(args, &out);
    char key[64], n[64];
    snprintf(key, sizeof key, "\"header_line\": %s,", want);
    snprintf(n, sizeof n, "\"n\": %zu,", rows);
    CHECK_MSG(rc == 0 && strstr(last_line(out), key) && strstr(last_line(out), n), "%s: wanted %s and %s in: %s",
              file, key, n, out);
    free(out);
}

TEST(cli_json_says_which_line_was_the_header)
{
    check_header_line("hl_plain.csv", "1,2\n3,4\n5,6\n", "null", 3);
    check_header_line("hl_bom.csv", "\xEF\xBB\xBF" "1,2\n3,4\n5,6\n", "null", 3);
    check_header_line("hl_named.csv", "# made by hand\nx,y\n1,2\n3,4\n", "2", 2);
    check_header_line("hl_cr.csv", "x,y\r1,2\r3,4\r5,6\r", "1", 3);
    /* Not text: no key. */
    char args[2048], *out = NULL;
    snprintf(args, sizeof args, "gen uniform --n 10 --dims 2 -o %s", test_path("hl.npy"));
    REQUIRE(test_grove(args, NULL) == 0);
    snprintf(args, sizeof args, "knn %s -k 1 --indices %s --json", test_path("hl.npy"), test_path("hl_i.npy"));
    CHECK(test_grove(args, &out) == 0 && !strstr(out, "header_line"));
    free(out);
}

/* A one-off build (the CLI's) of a few thousand points stays on one thread
 * however many are asked for, and says so; a large one takes them. */
TEST(cli_balltree_one_off_small_build_uses_one_thread)
{
    const size_t sizes[] = {16384, (size_t)1 << 18};
    const char *want[] = {"\"threads\": 1,", "\"threads\": 2,"};
    for (int i = 0; i < 2; i++) {
        char args[1024], *out = NULL;
        snprintf(args, sizeof args, "gen uniform --n %zu --dims 3 --seed 3 -o %s", sizes[i], test_path("t.npy"));
        REQUIRE(test_grove(args, NULL) == 0);
        snprintf(args, sizeof args, "balltree %s --indices %s --mask %s --threads 2 --json", test_path("t.npy"),
                 test_path("ti.npy"), test_path("tm.npy"));
        REQUIRE(test_grove(args, &out) == 0);
        CHECK_MSG(strstr(last_line(out), want[i]) != NULL, "n = %zu: wanted %s in %s", sizes[i], want[i],
                  last_line(out));
        free(out);
    }
}
