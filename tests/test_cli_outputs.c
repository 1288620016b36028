/* Where the command line's outputs go, for every command that writes
 * some: a character device or FIFO given as an output is written through,
 * never replaced; every output is checked before any work; a set of
 * outputs whose placing fails part way leaves nothing of itself (the files
 * it replaced come back, no temporary stays); names up to the longest the
 * file system takes are accepted. */
#include "test.h"

#include <dirent.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/* A command with outputs: its name, its input (none, points, or x y z m
 * rows), the flags before the outputs, and the output flags. */
typedef enum { NO_INPUT, POINTS, MASSES } input_kind;
typedef struct {
    const char *command;
    input_kind input;
    const char *flags;
    const char *outputs[5];
} output_case;

static const output_case CASES[] = {
    {"gen", NO_INPUT, "uniform --n 300 --dims 3 --seed 4", {"-o"}},
    {"balltree", POINTS, "--level 2", {"--indices", "--mask", "--centers", "--radii"}},
    {"join", POINTS, "--eps 0.15", {"--offsets", "--indices", "--distances"}},
    {"join", POINTS, "--eps 0.15", {"--pairs"}},
    {"knn", POINTS, "-k 4", {"--indices", "--distances"}},
    {"dbscan", POINTS, "--eps 0.1 --min-samples 4", {"--labels", "--core"}},
    {"emst", POINTS, "", {"--edges", "--weights"}},
    {"hdbscan", POINTS, "--min-cluster-size 10", {"--labels", "--probabilities", "--outlier-scores", "--plot"}},
    {"fof", POINTS, "--linking-length 0.08 --min-members 2", {"--groups", "--catalogue"}},
    {"paircount", POINTS, "--bins 0.05,0.1,0.2", {"--out"}},
    {"gravity", MASSES, "", {"--acc", "--pot"}},
};
enum { NCASES = sizeof CASES / sizeof CASES[0] };

static size_t output_count(const output_case *c)
{
    size_t n = 0;
    while (n < 5 && c->outputs[n]) n++;
    return n;
}

/* The input files (written once): 300 uniform points in 3 dimensions, and
 * the same with unit masses. */
static const char *input_path(input_kind kind)
{
    static char points[512], masses[512];
    if (!points[0]) {
        double *p = test_points(TEST_UNIFORM, 300, 3, 11);
        grove_array a = {0}, m = {0};
        CHECK_OK(grove_array_create(&a, GROVE_FLOAT64, 300, 3));
        CHECK_OK(grove_array_create(&m, GROVE_FLOAT64, 300, 4));
        for (size_t i = 0; i < 300; i++)
            for (size_t k = 0; k < 4; k++) {
                if (k < 3) ((double *)a.data)[3 * i + k] = p[3 * i + k];
                ((double *)m.data)[4 * i + k] = k < 3 ? p[3 * i + k] : 1;
            }
        snprintf(points, sizeof points, "%s", test_path("outputs_points.npy"));
        snprintf(masses, sizeof masses, "%s", test_path("outputs_masses.npy"));
        CHECK_OK(grove_npy_write(points, &a));
        CHECK_OK(grove_npy_write(masses, &m));
        grove_array_free(&a);
        grove_array_free(&m);
        free(p);
    }
    return kind == POINTS ? points : kind == MASSES ? masses : "";
}

/* dir/NAME for output k of c: the flag's letters and its suffix. */
static void output_name(const output_case *c, size_t k, const char *dir, char *buf, size_t cap)
{
    const char *flag = c->outputs[k];
    while (*flag == '-') flag++;
    snprintf(buf, cap, "%s/%s%s", dir, flag, strcmp(c->outputs[k], "--plot") == 0 ? ".svg" : ".npy");
}

/* "TMPDIR=stage GROVE COMMAND INPUT FLAGS --out1 PATH1 ..." with the
 * outputs at paths[k]. */
static void command_line(const output_case *c, char paths[][700], const char *stage, char *buf, size_t cap)
{
    int len = snprintf(buf, cap, "TMPDIR='%s' %s %s %s %s --quiet --threads 1", stage, test_cli(), c->command,
                       input_path(c->input), c->flags);
    for (size_t k = 0; k < output_count(c); k++)
        len += snprintf(buf + len, cap - (size_t)len, " %s '%s'", c->outputs[k], paths[k]);
}

/* Entries of dir besides . and .. */
static int entries(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return -1;
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    return n;
}

/* A new folder tmpdir/name, its path in dir (test_path's buffers rotate). */
static const char *fresh_dir(const char *name, char dir[512])
{
    snprintf(dir, 512, "%s", test_path(name));
    CHECK(mkdir(dir, 0777) == 0);
    return dir;
}

/* Every case's outputs as regular files in ref_N (made once): what the
 * other runs must write. */
static char refs[NCASES][5][700];

static void reference_outputs(void)
{
    static bool made;
    if (made) return;
    made = true;
    char stage[512], dir[512];
    fresh_dir("ref_stage", stage);
    for (size_t ci = 0; ci < NCASES; ci++) {
        char name[32], command[8192];
        snprintf(name, sizeof name, "ref_%zu", ci);
        fresh_dir(name, dir);
        for (size_t k = 0; k < output_count(&CASES[ci]); k++) output_name(&CASES[ci], k, dir, refs[ci][k], 700);
        command_line(&CASES[ci], refs[ci], stage, command, sizeof command);
        CHECK_MSG(test_run(command, NULL) == 0, "%s failed", command);
    }
}

static bool is_char_device(const char *path, dev_t rdev)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISCHR(st.st_mode) && st.st_rdev == rdev;
}

static bool is_fifo(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISFIFO(st.st_mode);
}

/* Whether a null device can be made at path (mknod needs root) and opened
 * there (a file system mounted nodev refuses). */
static bool make_null_device(const char *path)
{
    struct stat null_dev;
    char command[1600];
    snprintf(command, sizeof command, "mknod '%.700s' c 1 3 2>/dev/null && : > '%.700s'", path, path);
    return stat("/dev/null", &null_dev) == 0 && test_run(command, NULL) == 0 && is_char_device(path, null_dev.st_rdev);
}

TEST(cli_outputs_go_through_character_devices)
{
    reference_outputs();
    char stage[512], dir[512];
    fresh_dir("device_stage", stage);
    if (!make_null_device(test_path("probe_null"))) {
        test_skip("no null device can be made and opened in the test folder (mknod needs root)");
        return;
    }
    struct stat null_dev;
    REQUIRE(stat("/dev/null", &null_dev) == 0);
    for (size_t ci = 0; ci < NCASES; ci++) {
        const output_case *c = &CASES[ci];
        size_t count = output_count(c);
        char name[32], paths[5][700], *out = NULL, command[8192];
        /* Null devices: every output but the first (the only one of gen),
         * which stays a file and must still be placed. */
        snprintf(name, sizeof name, "dev_%zu", ci);
        fresh_dir(name, dir);
        for (size_t k = 0; k < count; k++) {
            output_name(c, k, dir, paths[k], 700);
            if (k > 0 || count == 1) CHECK(make_null_device(paths[k]));
        }
        command_line(c, paths, stage, command, sizeof command);
        CHECK_MSG(test_run(command, &out) == 0, "%s: %s", command, out);
        free(out);
        for (size_t k = 0; k < count; k++)
            CHECK_MSG(k == 0 && count > 1 ? test_same_file(paths[k], refs[ci][k])
                                          : is_char_device(paths[k], null_dev.st_rdev),
                      "grove %s %s %s", c->command, c->outputs[k], paths[k]);
        CHECK(entries(dir) == (int)count && entries(stage) == 0);
    }
}

TEST(cli_outputs_go_through_fifos)
{
    reference_outputs();
    char stage[512], dir[512];
    fresh_dir("fifo_stage", stage);
    for (size_t ci = 0; ci < NCASES; ci++) {
        const output_case *c = &CASES[ci];
        size_t count = output_count(c);
        char name[32], paths[5][700], captured[5][720], command[8192];
        /* Every output a FIFO, each with a reader copying it to a file (for
         * at most 30 s: a grove that never opens the FIFO leaves it waiting). */
        snprintf(name, sizeof name, "fifo_%zu", ci);
        fresh_dir(name, dir);
        int len = 0;
        for (size_t k = 0; k < count; k++) {
            output_name(c, k, dir, paths[k], 700);
            snprintf(captured[k], sizeof captured[k], "%.700s.read", paths[k]);
            CHECK(mkfifo(paths[k], 0600) == 0);
            len += snprintf(command + len, sizeof command - (size_t)len, "timeout 30 cat '%s' > '%s' & ", paths[k],
                            captured[k]);
        }
        command_line(c, paths, stage, command + len, sizeof command - (size_t)len);
        len = (int)strlen(command);
        snprintf(command + len, sizeof command - (size_t)len, "; rc=$?; wait; exit $rc");
        char *out = NULL;
        CHECK_MSG(test_run(command, &out) == 0, "%s: %s", command, out);
        free(out);
        for (size_t k = 0; k < count; k++)
            CHECK_MSG(is_fifo(paths[k]) && test_same_file(captured[k], refs[ci][k]), "grove %s %s into a FIFO",
                      c->command, c->outputs[k]);
        CHECK(entries(dir) == 2 * (int)count && entries(stage) == 0);
    }
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    CHECK(f && fputs(text, f) >= 0 && fclose(f) == 0);
}

static bool holds(const char *path, const char *text)
{
    size_t len;
    char *got = test_read_file(path, &len);
    bool same = got && len == strlen(text) && memcmp(got, text, len) == 0;
    free(got);
    return same;
}

static bool exists(const char *path) { return access(path, F_OK) == 0; }

/* chattr +i or -i: an immutable file cannot be renamed over, even by root. */
static bool set_immutable(const char *path, bool on)
{
    char command[800];
    snprintf(command, sizeof command, "chattr %ci '%.700s' 2>/dev/null", on ? '+' : '-', path);
    return test_run(command, NULL) == 0;
}

TEST(cli_a_failed_commit_leaves_nothing_of_the_set)
{
    const char *probe = test_write_file("probe_immutable", "x", 1);
    if (!set_immutable(probe, true)) {
        test_skip("the test folder's file system cannot mark a file immutable (chattr +i needs root)");
        return;
    }
    set_immutable(probe, false);
    char stage[512], dir[512], command[8192];
    fresh_dir("commit_stage", stage);
    for (size_t ci = 0; ci < NCASES; ci++) {
        const output_case *c = &CASES[ci];
        size_t count = output_count(c);
        for (size_t k = 0; k < count; k++) {
            char name[32], paths[5][700];
            snprintf(name, sizeof name, "commit_%zu_%zu", ci, k);
            fresh_dir(name, dir);
            for (size_t j = 0; j < count; j++) output_name(c, j, dir, paths[j], 700);
            /* Output k cannot be replaced; the one after it is a file that
             * was there before; the others are new. */
            size_t before = (k + 1) % count;
            write_text(paths[k], "immutable\n");
            if (before != k) write_text(paths[before], "before\n");
            REQUIRE(set_immutable(paths[k], true));
            command_line(c, paths, stage, command, sizeof command);
            char *out = NULL;
            int rc = test_run(command, &out);
            CHECK(set_immutable(paths[k], false));
            CHECK_MSG(rc == 1 && strstr(out, "cannot replace") && strstr(out, paths[k]), "%s -> %d: %s", command, rc,
                      out);
            free(out);
            for (size_t j = 0; j < count; j++)
                CHECK_MSG(j == k ? holds(paths[j], "immutable\n") : j == before ? holds(paths[j], "before\n")
                                                                           : !exists(paths[j]),
                          "grove %s with %s immutable: %s %s", c->command, c->outputs[k], c->outputs[j],
                          j == before ? "was not restored" : "was left");
            CHECK_MSG(entries(dir) == (before != k ? 2 : 1) && entries(stage) == 0, "grove %s left temporaries",
                      c->command);
        }
    }
}

TEST(cli_outputs_are_checked_before_any_work)
{
    char stage[512], dir[512], command[8192];
    fresh_dir("check_stage", stage);
    /* A folder where the last output would go. */
    for (size_t ci = 0; ci < NCASES; ci++) {
        const output_case *c = &CASES[ci];
        size_t count = output_count(c);
        char name[32], paths[5][700], *out = NULL;
        snprintf(name, sizeof name, "check_%zu", ci);
        fresh_dir(name, dir);
        for (size_t j = 0; j < count; j++) output_name(c, j, dir, paths[j], 700);
        CHECK(mkdir(paths[count - 1], 0777) == 0);
        command_line(c, paths, stage, command, sizeof command);
        int rc = test_run(command, &out);
        CHECK_MSG(rc == 2 && strstr(out, c->outputs[count - 1]) && strstr(out, "is a folder"), "%s -> %d: %s",
                  command, rc, out);
        free(out);
        CHECK_MSG(entries(dir) == 1, "grove %s left outputs beside a folder output", c->command);
    }
    /* A missing folder. */
    const output_case *knn = &CASES[4];
    char paths[5][700], *out = NULL;
    fresh_dir("check_knn", dir);
    snprintf(paths[0], 700, "%s/i.npy", dir);
    snprintf(paths[1], 700, "%s/no/such/d.npy", dir);
    command_line(knn, paths, stage, command, sizeof command);
    int rc = test_run(command, &out);
    CHECK_MSG(rc == 2 && strstr(out, "--distances") && strstr(out, "No such file"), "%s -> %d: %s", command, rc, out);
    free(out);
    CHECK(!exists(paths[0]) && entries(stage) == 0);
}

TEST(cli_block_device_outputs_are_refused)
{
    char stage[512], dir[512], paths[5][700], command[8192], *out = NULL;
    fresh_dir("block_stage", stage);
    fresh_dir("block", dir);
    snprintf(paths[0], 700, "%s/i.npy", dir);
    snprintf(paths[1], 700, "%s/block.npy", dir);
    snprintf(command, sizeof command, "mknod '%s' b 7 200 2>/dev/null", paths[1]);
    if (test_run(command, NULL) != 0) {
        test_skip("no block device can be made in the test folder (mknod needs root)");
        return;
    }
    command_line(&CASES[4], paths, stage, command, sizeof command);
    int rc = test_run(command, &out);
    CHECK_MSG(rc == 2 && strstr(out, "--distances") && strstr(out, "a block device"), "%s -> %d: %s", command, rc,
              out);
    free(out);
    struct stat st;
    CHECK(stat(paths[1], &st) == 0 && S_ISBLK(st.st_mode));
    CHECK(!exists(paths[0]) && entries(dir) == 1 && entries(stage) == 0);
}

TEST(cli_a_fifo_reader_that_leaves_fails_the_whole_set)
{
    /* knn's distances of 5000 points, 5 each: 200 kB, more than a pipe
     * holds, so a reader that leaves without reading breaks the write. */
    double *p = test_points(TEST_UNIFORM, 5000, 3, 12);
    grove_array a = {p, GROVE_FLOAT64, 2, {5000, 3}};
    char data[512], stage[512], dir[512], paths[5][700], command[8192];
    snprintf(data, sizeof data, "%s", test_path("leaving_reader.npy"));
    CHECK_OK(grove_npy_write(data, &a));
    free(p);
    fresh_dir("leaving_stage", stage);
    fresh_dir("leaving", dir);
    snprintf(paths[0], 700, "%s/i.npy", dir);
    snprintf(paths[1], 700, "%s/d.npy", dir);
    write_text(paths[0], "before\n");
    REQUIRE(mkfifo(paths[1], 0600) == 0);
    snprintf(command, sizeof command,
             "timeout 30 sh -c \"exec 3< '%.700s'\" & "
             "TMPDIR='%s' %s knn %s -k 5 --threads 1 --indices '%.700s' --distances '%.700s'; rc=$?; wait; exit $rc",
             paths[1], stage, test_cli(), data, paths[0], paths[1]);
    char *out = NULL;
    int rc = test_run(command, &out);
    CHECK_MSG(rc == 1 && strstr(out, "d.npy") && strstr(out, "Broken pipe"), "%s -> %d: %s", command, rc, out);
    free(out);
    CHECK_MSG(holds(paths[0], "before\n"), "--indices was not restored");
    CHECK(is_fifo(paths[1]) && entries(dir) == 2 && entries(stage) == 0);
}

/* A process id that no process holds now (a child that has exited). */
static pid_t dead_pid(void)
{
    pid_t pid = fork();
    if (pid == 0) _exit(0);
    waitpid(pid, NULL, 0);
    return pid;
}

TEST(cli_takes_output_names_as_long_as_the_file_system_does)
{
    reference_outputs();
    const output_case *knn = &CASES[4];
    char stage[512], dir[512], paths[5][700], command[8192];
    fresh_dir("long_stage", stage);
    fresh_dir("long", dir);
    size_t max = (size_t)pathconf(dir, _PC_NAME_MAX);
    REQUIRE(max >= 64 && max < 600);
    pid_t dead = dead_pid();
    for (size_t len = max - 35; len <= max; len += 5) {
        for (size_t k = 0; k < 2; k++) {
            snprintf(paths[k], 700, "%s/", dir);
            memset(paths[k] + strlen(dir) + 1, k ? 'd' : 'i', len - 4);
            snprintf(paths[k] + strlen(dir) + 1 + len - 4, 5, ".npy");
        }
        /* The temporary a killed run left for the first name, the name cut
         * where the whole would not fit. */
        char stale[800], suffix[64];
        size_t slen = (size_t)snprintf(suffix, sizeof suffix, ".grove-partial.%ld", (long)dead);
        size_t keep = len + slen <= max ? len : max - slen;
        snprintf(stale, sizeof stale, "%.*s%s", (int)(strlen(dir) + 1 + keep), paths[0], suffix);
        write_text(stale, "left\n");
        command_line(knn, paths, stage, command, sizeof command);
        char *out = NULL;
        CHECK_MSG(test_run(command, &out) == 0, "names of %zu bytes: %s", len, out);
        free(out);
        CHECK(test_same_file(paths[0], refs[4][0]) && test_same_file(paths[1], refs[4][1]));
        CHECK_MSG(!exists(stale), "the stale temporary of a name of %zu bytes stayed", len);
        CHECK(unlink(paths[0]) == 0 && unlink(paths[1]) == 0);
        CHECK(entries(dir) == 0 && entries(stage) == 0);
    }
    /* One byte more than the folder takes: refused before any work. */
    memset(paths[0] + strlen(dir) + 1, 'i', max + 1 - 4);
    snprintf(paths[0] + strlen(dir) + 1 + max + 1 - 4, 5, ".npy");
    command_line(knn, paths, stage, command, sizeof command);
    char *out = NULL;
    CHECK_MSG(test_run(command, &out) == 2 && strstr(out, "File name too long"), "%s", out);
    free(out);
}

TEST(cli_dev_null_and_fifos_take_outputs_whatever_their_names)
{
    reference_outputs();
    char stage[512], dir[512], paths[5][700], command[8192], *out = NULL;
    fresh_dir("null_stage", stage);
    fresh_dir("null", dir);
    struct stat before, after;
    REQUIRE(stat("/dev/null", &before) == 0 && S_ISCHR(before.st_mode));
    /* knn's indices discarded into the system's /dev/null, its distances
     * kept; then both discarded (outputs may share a character device). */
    const output_case *knn = &CASES[4];
    snprintf(paths[0], 700, "/dev/null");
    snprintf(paths[1], 700, "%s/d.npy", dir);
    command_line(knn, paths, stage, command, sizeof command);
    CHECK_MSG(test_run(command, &out) == 0, "%s: %s", command, out);
    free(out);
    CHECK(test_same_file(paths[1], refs[4][1]) && unlink(paths[1]) == 0);
    snprintf(paths[1], 700, "/dev/null");
    command_line(knn, paths, stage, command, sizeof command);
    CHECK_MSG(test_run(command, &out) == 0, "%s: %s", command, out);
    free(out);
    CHECK(stat("/dev/null", &after) == 0 && S_ISCHR(after.st_mode) && after.st_rdev == before.st_rdev &&
          after.st_ino == before.st_ino);
    /* fof's catalogue into a FIFO with no suffix: a .npy table. */
    const output_case *fof = &CASES[8];
    snprintf(paths[0], 700, "%s/groups.npy", dir);
    snprintf(paths[1], 700, "%s/pipe", dir);
    REQUIRE(mkfifo(paths[1], 0600) == 0);
    int len = snprintf(command, sizeof command, "timeout 30 cat '%s' > '%s/read' & ", paths[1], dir);
    command_line(fof, paths, stage, command + len, sizeof command - (size_t)len);
    len = (int)strlen(command);
    snprintf(command + len, sizeof command - (size_t)len, "; rc=$?; wait; exit $rc");
    CHECK_MSG(test_run(command, &out) == 0, "%s: %s", command, out);
    free(out);
    char read_back[600];
    snprintf(read_back, sizeof read_back, "%s/read", dir);
    CHECK(test_same_file(read_back, refs[8][1]) && test_same_file(paths[0], refs[8][0]));
    CHECK(entries(dir) == 3 && entries(stage) == 0);
}
