/* grove join and grove knn on real files: the CSR and pairs outputs
 * against the library's one-shot result, streaming under a small budget,
 * --json keys, --verify, and errors that leave no partial output. */
#include "test.h"

#include <stdbool.h>
#include <sys/stat.h>
#include <unistd.h>

static grove_array load(const char *path)
{
    grove_array a = {0};
    CHECK_OK(grove_npy_read(path, &a));
    return a;
}

/* Data with about 20 neighbours per point within 0.1, written as .npy. */
static double *write_cloud(const char *name, size_t n, uint64_t seed)
{
    double *x = test_points(TEST_UNIFORM, n, 3, seed);
    grove_array a = {x, GROVE_FLOAT64, 2, {n, 3}};
    CHECK_OK(grove_npy_write(test_path(name), &a));
    return x;
}

TEST(cli_join_outputs_match_the_library)
{
    const size_t n = 3000;
    double *x = write_cloud("jdata.npy", n, 11);
    grove_join_params jp;
    grove_join_params_init(&jp);
    jp.eps = 0.1;
    jp.distances = 1;
    grove_join_result r;
    REQUIRE_OK(grove_join(grove_points_f64(x, n, 3), NULL, NULL, &jp, &r, NULL));
    /* One batch, then batches of about 4 KiB (after the 24000 bytes of
     * counts): the files must be the same. */
    const char *budgets[] = {"", "--memory-budget 28K"};
    for (int b = 0; b < 2; b++) {
        char args[2048], *out = NULL;
        snprintf(args, sizeof args,
                 "join %s --eps 0.1 %s --offsets %s --indices %s --distances %s --threads 2 --json --verify 5",
                 test_path("jdata.npy"), budgets[b], test_path("o.npy"), test_path("i.npy"), test_path("d.npy"));
        CHECK(test_grove(args, &out) == 0);
        char want[64];
        snprintf(want, sizeof want, "\"pairs\": %lld", (long long)r.pairs);
        CHECK_MSG(strstr(out, want) && strstr(out, "\"selectivity\": ") && strstr(out, "\"seconds\": ") &&
                      strstr(out, "\"peak_rss_bytes\": ") && strstr(out, "\"nq\": 3000"),
                  "output: %s", out);
        CHECK_MSG(b == 0 || !strstr(out, "\"batches\": 1,"), "a 4 KiB budget gave one batch: %s", out);
        free(out);
        grove_array o = load(test_path("o.npy")), i = load(test_path("i.npy")), d = load(test_path("d.npy"));
        CHECK(o.shape[0] == n + 1 && memcmp(o.data, r.offsets, (n + 1) * 8) == 0);
        CHECK(i.shape[0] == (size_t)r.pairs && memcmp(i.data, r.indices, (size_t)r.pairs * 8) == 0);
        CHECK(d.shape[0] == (size_t)r.pairs && memcmp(d.data, r.distances, (size_t)r.pairs * 8) == 0);
        grove_array_free(&o);
        grove_array_free(&i);
        grove_array_free(&d);
    }
    /* Pairs: (query, point) rows in the same order. */
    char args[2048], *out = NULL;
    snprintf(args, sizeof args, "join %s --eps 0.1 --pairs %s --memory-budget 32K --quiet", test_path("jdata.npy"),
             test_path("p.npy"));
    CHECK(test_grove(args, &out) == 0);
    free(out);
    grove_array p = load(test_path("p.npy"));
    CHECK(p.ndim == 2 && p.shape[0] == (size_t)r.pairs && p.shape[1] == 2);
    const int64_t *pr = p.data;
    for (size_t q = 0, k = 0; p.data && q < n; q++)
        for (int64_t e = r.offsets[q]; e < r.offsets[q + 1]; e++, k++)
            if (pr[2 * k] != (int64_t)q || pr[2 * k + 1] != r.indices[e]) {
                CHECK_MSG(false, "pair %zu is (%lld, %lld)", k, (long long)pr[2 * k], (long long)pr[2 * k + 1]);
                q = n;
                break;
            }
    grove_array_free(&p);
    /* Count only, with exclude-self: pairs drop by n, selectivity stays. */
    snprintf(args, sizeof args, "join %s --eps 0.1 --count-only --exclude-self --offsets %s --json",
             test_path("jdata.npy"), test_path("oc.npy"));
    CHECK(test_grove(args, &out) == 0);
    char want[64];
    snprintf(want, sizeof want, "\"pairs\": %lld", (long long)r.pairs - (long long)n);
    CHECK_MSG(strstr(out, want) != NULL, "output: %s", out);
    free(out);
    grove_array oc = load(test_path("oc.npy"));
    for (size_t q = 0; oc.data && q <= n; q++)
        if (((int64_t *)oc.data)[q] != r.offsets[q] - (int64_t)q) {
            CHECK_MSG(false, "count-only offset %zu", q);
            break;
        }
    grove_array_free(&oc);
    grove_join_result_free(&r);
    free(x);
}

/* --verify with --count-only checks the sampled queries' counts (it used
 * to skip the check without a word), self-join and semi-join, under
 * mpirun too where the build has MPI. */
TEST(cli_join_count_only_verifies_the_counts)
{
    double *x = write_cloud("cdata.npy", 1500, 31), *q = write_cloud("cq.npy", 200, 32);
    const char *runs[] = {"--exclude-self", "--queries", "--offsets"};
    for (int r = 0; r < 3; r++) {
        char args[2048], extra[1024], *out = NULL;
        snprintf(extra, sizeof extra, "%s %s", runs[r], r == 0 ? "" : test_path(r == 1 ? "cq.npy" : "co.npy"));
        snprintf(args, sizeof args, "join %s --eps 0.1 --count-only %s --verify 40", test_path("cdata.npy"), extra);
        CHECK(test_grove(args, &out) == 0);
        CHECK_MSG(strstr(out, "counted only") && strstr(out, "verified 40 sampled queries"), "%s: %s", args, out);
        free(out);
    }
    if (test_mpi_ready()) {
        char args[2048], *out = NULL;
        snprintf(args, sizeof args, "join %s --eps 0.1 --count-only --verify 40", test_path("cdata.npy"));
        CHECK(test_mpirun(2, "grove", args, &out) == 0);
        CHECK_MSG(strstr(out, "verified 40 sampled queries"), "mpirun: %s", out);
        free(out);
    }
    free(x);
    free(q);
}

TEST(cli_join_semi_join_and_knn)
{
    const size_t n = 2000, nq = 300, k = 7;
    double *x = write_cloud("kdata.npy", n, 21), *q = write_cloud("kq.npy", nq, 22);
    char args[2048], *out = NULL;
    snprintf(args, sizeof args, "join %s --queries %s --eps 0.08 --offsets %s --indices %s --verify 300 --json",
             test_path("kdata.npy"), test_path("kq.npy"), test_path("so.npy"), test_path("si.npy"));
    CHECK(test_grove(args, &out) == 0);
    CHECK(strstr(out, "\"nq\": 300") && strstr(out, "\"self_join\": false"));
    free(out);
    grove_array so = load(test_path("so.npy"));
    CHECK(so.shape[0] == nq + 1);
    grove_array_free(&so);
    snprintf(args, sizeof args, "knn %s -k %zu --queries %s --indices %s --distances %s --verify 50",
             test_path("kdata.npy"), k, test_path("kq.npy"), test_path("ki.npy"), test_path("kd.npy"));
    CHECK(test_grove(args, &out) == 0);
    CHECK_MSG(strstr(out, "verified 50 sampled queries"), "output: %s", out);
    free(out);
    int64_t *want = malloc(nq * k * sizeof *want);
    double *want_d = malloc(nq * k * sizeof *want_d);
    grove_points qp = grove_points_f64(q, nq, 3);
    CHECK_OK(grove_knn(grove_points_f64(x, n, 3), &qp, NULL, &(grove_knn_params){k, 0}, want, want_d, NULL));
    grove_array ki = load(test_path("ki.npy")), kd = load(test_path("kd.npy"));
    CHECK(ki.ndim == 2 && ki.shape[0] == nq && ki.shape[1] == k && memcmp(ki.data, want, nq * k * 8) == 0);
    CHECK(kd.ndim == 2 && memcmp(kd.data, want_d, nq * k * 8) == 0);
    grove_array_free(&ki);
    grove_array_free(&kd);
    free(want);
    free(want_d);
    free(x);
    free(q);
}

TEST(cli_join_errors_leave_no_output)
{
    double *x = write_cloud("edata.npy", 500, 31);
    free(x);
    /* Own copies: test_path's buffers rotate. */
    char o[512], i[512];
    snprintf(o, sizeof o, "%s", test_path("never_o.npy"));
    snprintf(i, sizeof i, "%s", test_path("never_i.npy"));
    /* Flags, then whether --offsets O --indices I follow (1: both, 2: O only). */
    struct {
        const char *flags;
        int outputs;
        const char *message;
        int status;
    } cases[] = {
        {"", 1, "--eps is required", 2},
        {"--eps -1", 1, "--eps: expected a number >= 0, got '-1'", 2},
        {"--eps 0.1", 2, "go together", 2},
        {"--eps 0.1 --count-only", 1, "--count-only", 2},
        {"--eps 0.1 --exclude-self --queries x.npy", 1, "self-joins", 2},
        {"--eps 2 --memory-budget 1K", 1, "memory budget", 1},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        char args[4096], *out = NULL;
        snprintf(args, sizeof args, "join %s %s --offsets %s%s%s", test_path("edata.npy"), cases[c].flags, o,
                 cases[c].outputs == 1 ? " --indices " : "", cases[c].outputs == 1 ? i : "");
        int st = test_grove(args, &out);
        CHECK_MSG(st == cases[c].status && strstr(out, cases[c].message), "%s -> %d: %s", args, st, out);
        free(out);
        CHECK(access(o, F_OK) != 0 && access(i, F_OK) != 0);
    }
    char args[2048], *out = NULL;
    snprintf(args, sizeof args, "knn %s -k 501 --indices %s", test_path("edata.npy"), i);
    CHECK(test_grove(args, &out) == 1 && strstr(out, "-k 501 is more than its 500 points"));
    free(out);
    snprintf(args, sizeof args, "knn %s -k 3", test_path("edata.npy"));
    CHECK(test_grove(args, &out) == 2 && strstr(out, "--indices"));
    free(out);
    CHECK(access(i, F_OK) != 0);
}

TEST(cli_join_without_outputs_must_say_what_it_wants)
{
    double *x = write_cloud("nodata.npy", 400, 41);
    free(x);
    char args[2048], *out = NULL;
    const char *refused[] = {"", "--json", "--quiet"};
    for (size_t k = 0; k < sizeof refused / sizeof *refused; k++) {
        snprintf(args, sizeof args, "join %s --eps 0.1 %s", test_path("nodata.npy"), refused[k]);
        int rc = test_grove(args, &out);
        CHECK_MSG(rc == 2 && strstr(out, "--count-only") && strstr(out, "--offsets"), "%s -> %d: %s", args, rc, out);
        free(out);
    }
    /* Counting, or checking a sample, needs no output file. */
    snprintf(args, sizeof args, "join %s --eps 0.1 --count-only --json", test_path("nodata.npy"));
    CHECK(test_grove(args, &out) == 0 && strstr(out, "\"pairs\": "));
    free(out);
    snprintf(args, sizeof args, "join %s --eps 0.1 --verify 5", test_path("nodata.npy"));
    CHECK(test_grove(args, &out) == 0 && strstr(out, "verified 5 sampled queries"));
    free(out);
}

/* Lines in text. */
static size_t count_lines(const char *text)
{
    size_t n = 0;
    for (const char *p = text; *p; p++) n += *p == '\n';
    return n;
}

TEST(cli_join_write_error_is_one_line_and_leaves_nothing)
{
    double *x = write_cloud("werr.npy", 3000, 51);
    free(x);
    char dir[512], args[4096], *out = NULL;
    snprintf(dir, sizeof dir, "%s", test_path("werr_out"));
    REQUIRE(mkdir(dir, 0777) == 0);
    /* Files may grow to 64 KiB only (SIGXFSZ ignored: writes fail with
     * EFBIG): the indices file fails after a few batches. */
    snprintf(args, sizeof args,
             "ulimit -f 64 && trap '' XFSZ && exec %s join %s --eps 0.1 --memory-budget 40K --offsets %s/o.npy "
             "--indices %s/i.npy --quiet",
             test_cli(), test_path("werr.npy"), dir, dir);
    char command[4200];
    snprintf(command, sizeof command, "sh -c \"%s\"", args);
    int rc = test_run(command, &out);
    CHECK_MSG(rc == 1 && count_lines(out) == 1 && strstr(out, "grove join: ") && strstr(out, "/i.npy"),
              "-> %d: %s", rc, out);
    free(out);
    snprintf(command, sizeof command, "ls -A %s", dir);
    CHECK(test_run(command, &out) == 0);
    CHECK_MSG(out[0] == '\0', "left in %s: %s", dir, out);
    free(out);
}

TEST(cli_join_refuses_a_result_the_disk_cannot_hold)
{
    double *x = write_cloud("space.npy", 3000, 61);
    free(x);
    grove_join_params jp;
    grove_join_params_init(&jp);
    jp.eps = 0.1;
    grove_array data = load(test_path("space.npy"));
    int64_t pairs = 0;
    grove_index *ix = NULL;
    int64_t *counts = malloc(3000 * sizeof *counts);
    REQUIRE_OK(grove_index_create(grove_points_f64(data.data, 3000, 3), NULL, NULL, &ix));
    REQUIRE_OK(grove_join_count(ix, NULL, &jp, counts, &pairs, NULL));
    grove_index_free(ix);
    free(counts);
    grove_array_free(&data);
    /* A 256 KiB file system (a tmpfs in a private mount namespace) for
     * indices and distances of 16 bytes a pair. */
    REQUIRE(pairs * 16 > 256 * 1024);
    char dir[512], inner[4096], command[4400], *out = NULL;
    snprintf(dir, sizeof dir, "%s", test_path("small_fs"));
    REQUIRE(mkdir(dir, 0777) == 0);
    snprintf(inner, sizeof inner,
             "mount -t tmpfs -o size=256k tmpfs %s || exit 77; %s join %s --eps 0.1 --offsets %s/o.npy --indices "
             "%s/i.npy --distances %s/d.npy --quiet; echo \"status $?\"; ls -A %s",
             dir, test_cli(), test_path("space.npy"), dir, dir, dir, dir);
    snprintf(command, sizeof command, "unshare -rm sh -c '%s'", inner);
    int rc = test_run(command, &out);
    if (rc != 0) {
        test_skip("no private tmpfs here: %s", out);
        free(out);
        return;
    }
    char need[64];
    snprintf(need, sizeof need, "need %lld bytes", (long long)(pairs * 16 + (3000 + 1) * 8 + 3 * 128));
    CHECK_MSG(strstr(out, "grove join: ") && strstr(out, need) && strstr(out, "free") && strstr(out, "status 1\n"),
              "wanted \"%s\" and status 1: %s", need, out);
    /* One line from grove, then the status line, then an empty listing. */
    CHECK_MSG(count_lines(out) == 2, "output: %s", out);
    free(out);
}
