/* How the command line fails: usage errors exit 2, failures while running
 * exit 1, always with one line that names the file; paths that would
 * collide or that grove cannot write are refused before any work; inputs
 * that are not regular files (FIFOs) are refused instead of hanging. */
#include "test.h"

#include <math.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <unistd.h>

static bool exists(const char *path) { return access(path, F_OK) == 0; }

/* One line: text ends in its only '\n'. */
static bool one_line(const char *text)
{
    const char *nl = strchr(text, '\n');
    return nl && nl[1] == '\0';
}

/* Run grove with args; check the exit status, that the output is one line
 * starting "grove COMMAND: " and holding every `want` (NULL-terminated).
 * `timeout` ends a grove that hangs (status 124). */
static void expect_failure(const char *args, int status, const char *const *want)
{
    char command[4096], *out = NULL;
    snprintf(command, sizeof command, "timeout 120 %s %s", test_cli(), args);
    int rc = test_run(command, &out);
    bool ok = rc == status && one_line(out) && strncmp(out, "grove ", 6) == 0;
    for (size_t k = 0; ok && want[k]; k++) ok = strstr(out, want[k]) != NULL;
    CHECK_MSG(ok, "grove %s -> %d (wanted %d): %s", args, rc, status, out);
    free(out);
}

#define EXPECT_FAILURE(args, status, ...)                                    \
    do {                                                                     \
        const char *const want_[] = {__VA_ARGS__, NULL};                     \
        expect_failure((args), (status), want_);                             \
    } while (0)

/* n rows of x, y, z, m (float64) with row `bad` holding a NaN coordinate
 * when bad < n. */
static const char *write_particles(const char *name, size_t n, size_t bad)
{
    grove_array a = {0};
    CHECK_OK(grove_array_create(&a, GROVE_FLOAT64, n, 4));
    double *x = a.data;
    for (size_t i = 0; i < 4 * n; i++) x[i] = (double)(i % 7) + 0.25 * (double)(i % 5);
    for (size_t i = 0; i < n; i++) x[4 * i + 3] = 1;
    if (bad < n) x[4 * bad + 1] = NAN;
    const char *path = test_path(name);
    CHECK_OK(grove_npy_write(path, &a));
    grove_array_free(&a);
    return path;
}

TEST(cli_bad_flag_values_are_usage_errors)
{
    char in[512], args[2048];
    snprintf(in, sizeof in, "%s", write_particles("grav_ok.npy", 50, 50));
    const char *acc = test_path("never_acc.npy");
    const char *values[] = {"--theta 2", "--theta nan", "--theta -0.1", "--softening -1", "--G 0", "--leaf-size 0",
                            "--leaf-size 65", "--group-size 257"};
    for (size_t k = 0; k < sizeof values / sizeof *values; k++) {
        snprintf(args, sizeof args, "gravity %s --acc %s %s", in, acc, values[k]);
        char flag[32];
        snprintf(flag, sizeof flag, "%.*s", (int)strcspn(values[k], " "), values[k]);
        EXPECT_FAILURE(args, 2, flag);
    }
    CHECK(!exists(acc));
    snprintf(args, sizeof args, "nbody --ic plummer --n 10 --steps 1 --dt 0 --out %s", test_path("never_run"));
    EXPECT_FAILURE(args, 2, "--dt");
    snprintf(args, sizeof args, "nbody --ic plummer --n 10 --steps 1 --eta -1 --out %s", test_path("never_run"));
    EXPECT_FAILURE(args, 2, "--eta");
    CHECK(!exists(test_path("never_run")));
    snprintf(args, sizeof args, "join %s --eps -1 --count-only", in);
    EXPECT_FAILURE(args, 2, "--eps");
    snprintf(args, sizeof args, "knn %s -k 0 --indices %s", in, test_path("never_k.npy"));
    EXPECT_FAILURE(args, 2, "-k");
    EXPECT_FAILURE("gen uniform --n 5 --dims 2 --rate 0 -o x.npy", 2, "--rate");
}

/* The index's leaf-size limit is the library's one constant: every
 * command that builds an index takes GROVE_INDEX_LEAF_SIZE_MAX and
 * refuses one more as a usage error, as the library does. */
TEST(cli_leaf_size_limit_is_the_library_s)
{
    const char *in = write_particles("leaf_ok.npy", 40, 40);
    const char *output = test_path("leaf_out.npy");
    /* Each command and its options up to its output file's flag (none for the join's count). */
    const char *commands[][2] = {{"join", "--eps 1 --count-only"}, {"dbscan", "--eps 1 --min-samples 3 --labels"},
                                 {"fof", "--linking-length 1 --groups"}, {"knn", "-k 2 --indices"}};
    for (size_t k = 0; k < sizeof commands / sizeof *commands; k++)
        for (size_t leaf = GROVE_INDEX_LEAF_SIZE_MAX; leaf <= GROVE_INDEX_LEAF_SIZE_MAX + 1; leaf++) {
            char args[2048], *out = NULL;
            snprintf(args, sizeof args, "%s %s %s %s --leaf-size %zu --quiet", commands[k][0], in, commands[k][1],
                     k ? output : "", leaf);
            if (leaf > GROVE_INDEX_LEAF_SIZE_MAX) {
                EXPECT_FAILURE(args, 2, "--leaf-size");
            } else {
                int rc = test_grove(args, &out);
                CHECK_MSG(rc == 0, "grove %s -> %d: %s", args, rc, out);
                free(out);
            }
        }
    grove_index_params ip;
    grove_index_params_init(&ip);
    double x[6] = {0, 0, 0, 1, 1, 1};
    grove_index *ix = NULL;
    ip.leaf_size = GROVE_INDEX_LEAF_SIZE_MAX;
    CHECK_OK(grove_index_create(grove_points_f64(x, 2, 3), &ip, NULL, &ix));
    grove_index_free(ix);
    ip.leaf_size = GROVE_INDEX_LEAF_SIZE_MAX + 1;
    CHECK_FAILS(grove_index_create(grove_points_f64(x, 2, 3), &ip, NULL, &ix), GROVE_INVALID_ARGUMENT, "leaf_size");
}

TEST(cli_failures_while_running_exit_1)
{
    /* A regular file where --out needs a folder: mkdir fails at run time
     * (root may write anywhere, so no read-only folder would do). */
    const char *file = test_write_file("plain_file", "x", 1);
    char args[2048];
    snprintf(args, sizeof args, "nbody --ic plummer --n 10 --steps 1 --out %s/run", file);
    EXPECT_FAILURE(args, 1, "plain_file/run");
    /* A value in the input that the computation refuses: the line names the file. */
    const char *bad = write_particles("grav_nan.npy", 20, 7);
    snprintf(args, sizeof args, "gravity %s --acc %s", bad, test_path("never_acc.npy"));
    EXPECT_FAILURE(args, 1, "grav_nan.npy", "particle 7");
    CHECK(!exists(test_path("never_acc.npy")));
}

/* A failure blames what caused it: the queries' file for queries the
 * model refuses, -k or --n beyond any input as usage errors, a -k beyond
 * the data before outputs of that size are made, a missing checkpoint,
 * and the bytes the initial conditions needed. */
TEST(cli_failures_name_their_cause)
{
    char args[2048], *out = NULL;
    const char *data = write_particles("blame_data.npy", 60, 60);
    grove_array q = {0};
    REQUIRE_OK(grove_array_create(&q, GROVE_FLOAT64, 10, 2));
    const char *queries = test_path("blame_q2.npy");
    REQUIRE_OK(grove_npy_write(queries, &q));
    grove_array_free(&q);
    snprintf(args, sizeof args, "hdbscan %s --min-cluster-size 5 --labels %s --predict %s --predicted-labels %s", data,
             test_path("never_l.npy"), queries, test_path("never_pl.npy"));
    EXPECT_FAILURE(args, 1, "blame_q2.npy: ", "the queries have 2 dimensions, the model 4");
    CHECK(test_grove(args, &out) == 1 && !strstr(out, "blame_data.npy"));
    free(out);
    snprintf(args, sizeof args, "knn %s -k 9223372036854775808 --indices %s", data, test_path("never_k.npy"));
    EXPECT_FAILURE(args, 2, "-k: expected a whole number in 1..4294967294", "got 9223372036854775808");
    snprintf(args, sizeof args, "knn %s -k 1000000000 --indices %s", data, test_path("never_k.npy"));
    EXPECT_FAILURE(args, 1, "blame_data.npy: -k 1000000000 is more than its 60 points");
    snprintf(args, sizeof args, "knn %s -k 60 --exclude-self --indices %s", data, test_path("never_k.npy"));
    EXPECT_FAILURE(args, 1, "-k 60 is more than its 59 points besides each query");
    CHECK(!exists(test_path("never_k.npy")));
    snprintf(args, sizeof args, "nbody --resume --steps 2 --out %s", test_path("never_resumed"));
    EXPECT_FAILURE(args, 1, "never_resumed/checkpoint.grove: no checkpoint to resume");
    snprintf(args, sizeof args, "nbody --n 99999999999999 --steps 1 --out %s", test_path("never_run"));
    EXPECT_FAILURE(args, 2, "--n: expected a whole number in 1..4294967294", "got 99999999999999");
    CHECK(!exists(test_path("never_resumed")) && !exists(test_path("never_run")));
    /* 10^8 particles' 5.6 GB under a 2 GB address space (sanitizers reserve terabytes). */
    if (test_sanitized()) return;
    snprintf(args, sizeof args, "ulimit -v 2000000 && %s nbody --n 100000000 --steps 1 --out %s", test_cli(),
             test_path("never_run"));
    int rc = test_run(args, &out);
    CHECK_MSG(rc == 1 && strstr(out, "--n 100000000: out of memory allocating 5600000008 bytes for the initial "
                                     "conditions"),
              "%d: %s", rc, out);
    free(out);
}

TEST(cli_colliding_or_unwritable_outputs_are_refused)
{
    char data[512], args[4096];
    snprintf(data, sizeof data, "%s", write_particles("coll.npy", 30, 30));
    struct stat before;
    REQUIRE(stat(data, &before) == 0);
    const char *x = test_path("coll_out.npy");
    snprintf(args, sizeof args, "balltree %s --indices %s --mask %s", data, x, x);
    EXPECT_FAILURE(args, 2, "--indices", "--mask");
    CHECK(!exists(x));
    /* An output that is the input, by name, by another spelling, and by a link. */
    snprintf(args, sizeof args, "balltree %s --indices %s", data, data);
    EXPECT_FAILURE(args, 2, "DATA", "--indices");
    snprintf(args, sizeof args, "knn %s -k 2 --indices %s/./../%s/coll.npy", data, test_tmpdir(),
             strrchr(test_tmpdir(), '/') + 1);
    EXPECT_FAILURE(args, 2, "DATA", "--indices");
    const char *link = test_path("coll_link.npy");
    REQUIRE(symlink(data, link) == 0);
    snprintf(args, sizeof args, "emst %s --edges %s --weights %s", data, link, test_path("coll_w.npy"));
    EXPECT_FAILURE(args, 2, "DATA", "--edges");
    snprintf(args, sizeof args, "join %s --queries %s --eps 1 --offsets %s --indices %s", data, x, x,
             test_path("coll_i.npy"));
    EXPECT_FAILURE(args, 2, "--queries", "--offsets");
    /* Two spellings of one new file. */
    snprintf(args, sizeof args, "knn %s -k 2 --indices %s/new.npy --distances %s//./new.npy", data, test_tmpdir(),
             test_tmpdir());
    EXPECT_FAILURE(args, 2, "--indices", "--distances");
    struct stat after;
    REQUIRE(stat(data, &after) == 0);
    CHECK(after.st_size == before.st_size && after.st_mtime == before.st_mtime);
    /* Suffixes grove does not write. */
    const char *labels = test_path("coll_lab.csv");
    snprintf(args, sizeof args, "hdbscan %s --min-cluster-size 5 --labels %s", data, labels);
    EXPECT_FAILURE(args, 2, "--labels", ".npy");
    snprintf(args, sizeof args, "hdbscan %s --min-cluster-size 5 --labels %s --plot %s", data,
             test_path("coll_lab.npy"), test_path("coll_plot.png"));
    EXPECT_FAILURE(args, 2, "--plot", ".svg");
    snprintf(args, sizeof args, "gen uniform --n 5 --dims 2 -o %s", test_path("coll_gen.txt"));
    EXPECT_FAILURE(args, 2, "-o", ".npy");
    CHECK(!exists(labels) && !exists(test_path("coll_lab.npy")) && !exists(test_path("coll_gen.txt")));
}

TEST(cli_fifo_inputs_are_refused_not_waited_on)
{
    const char *names[] = {"fifo.npy", "fifo.csv", "fifo.tipsy", "fifo_in.npy"};
    char paths[4][512];
    for (int k = 0; k < 4; k++) {
        snprintf(paths[k], sizeof paths[k], "%s", test_path(names[k]));
        REQUIRE(mkfifo(paths[k], 0600) == 0);
    }
    char args[4096], dir[512];
    const char *out = test_path("fifo_i.npy");
    snprintf(args, sizeof args, "balltree %s --indices %s", paths[0], out);
    EXPECT_FAILURE(args, 1, "fifo.npy", "not a regular file");
    snprintf(args, sizeof args, "knn %s -k 1 --indices %s", paths[1], out);
    EXPECT_FAILURE(args, 1, "fifo.csv", "not a regular file");
    snprintf(args, sizeof args, "nbody --input %s --steps 1 --out %s", paths[2], test_path("fifo_run"));
    EXPECT_FAILURE(args, 1, "fifo.tipsy", "not a regular file");
    snprintf(args, sizeof args, "gravity %s --acc %s", paths[3], out);
    EXPECT_FAILURE(args, 1, "fifo_in.npy", "not a regular file");
    /* A checkpoint that is a FIFO. */
    snprintf(dir, sizeof dir, "%s", test_path("fifo_ckpt"));
    REQUIRE(mkdir(dir, 0777) == 0);
    char ckpt[600];
    snprintf(ckpt, sizeof ckpt, "%s/checkpoint.grove", dir);
    REQUIRE(mkfifo(ckpt, 0600) == 0);
    snprintf(args, sizeof args, "nbody --steps 1 --out %s --resume", dir);
    EXPECT_FAILURE(args, 1, "checkpoint.grove", "not a regular file");
    CHECK(!exists(out));
}

/* The value of "key": N in a --json line, or -1. */
static long long json_count(const char *out, const char *key)
{
    char want[64];
    snprintf(want, sizeof want, "\"%s\": ", key);
    const char *at = out ? strstr(out, want) : NULL;
    return at ? atoll(at + strlen(want)) : -1;
}

TEST(cli_number_flags_take_subnormals_and_say_what_is_wrong)
{
    /* 60 points on 11 sites (point i on site i^2 mod 11: some sites hold
     * several points, some none), the sites 0.5 apart or more: within a
     * subnormal distance are exactly the points of one site. */
    enum { N = 60, SITES = 11 };
    double pts[3 * N];
    long long pairs = 0, shared = 0, on_site[SITES] = {0};
    for (int i = 0; i < N; i++) {
        int site = i * i % SITES;
        on_site[site]++;
        pts[3 * i] = 0.5 * site;
        pts[3 * i + 1] = 0.25;
        pts[3 * i + 2] = 1;
    }
    for (int s = 0; s < SITES; s++) {
        pairs += on_site[s] * on_site[s];
        shared += on_site[s] >= 2;
    }
    grove_array a = {pts, GROVE_FLOAT64, 2, {N, 3}};
    char data[512], args[2048], *out = NULL;
    snprintf(data, sizeof data, "%s", test_path("sites.npy"));
    REQUIRE_OK(grove_npy_write(data, &a));
    snprintf(args, sizeof args, "join %s --eps 1e-311 --count-only --json", data);
    CHECK_MSG(test_grove(args, &out) == 0 && json_count(out, "pairs") == pairs, "%s: %s", args, out);
    free(out);
    snprintf(args, sizeof args, "fof %s --linking-length 4.9e-324 --min-members 2 --groups %s --json", data,
             test_path("sites_groups.npy"));
    CHECK_MSG(test_grove(args, &out) == 0 && json_count(out, "groups") == shared, "%s: %s", args, out);
    free(out);
    /* Values that are not numbers a flag can hold: each named, with what
     * is wrong with it. */
    /* command, flags, an output flag, the message. */
    const char *const refused[][4] = {
        {"join", "--count-only --eps inf", "--offsets", "--eps: inf is not finite"},
        {"join", "--count-only --eps nan", "--offsets", "--eps: nan is not finite"},
        {"join", "--count-only --eps 1e-400", "--offsets", "--eps: 1e-400 is too small for a double: it rounds to 0"},
        {"join", "--count-only --eps 1e999", "--offsets", "--eps: 1e999 is beyond the range of a double"},
        {"join", "--count-only --eps 1 --memory-budget inf", "--offsets", "--memory-budget: inf is not finite"},
        {"join", "--count-only --eps 1 --box 1,-inf", "--offsets", "--box: length 2 of \"1,-inf\", -inf, is not"},
        {"knn", "-k 99999999999999999999", "--indices", "-k: 99999999999999999999 is too large"},
        {"knn", "-k 2 --threads 99999999999", "--indices", "--threads: 99999999999 is out of range"},
        {"fof", "--linking-length -inf", "--groups", "--linking-length: -inf is not finite"},
    };
    for (size_t k = 0; k < sizeof refused / sizeof refused[0]; k++) {
        snprintf(args, sizeof args, "%s %s %s %s %s", refused[k][0], data, refused[k][1], refused[k][2],
                 test_path("never_n.npy"));
        EXPECT_FAILURE(args, 2, refused[k][3]);
    }
    CHECK(!exists(test_path("never_n.npy")));
}
