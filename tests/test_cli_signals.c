/* The command line under SIGINT and SIGTERM: a streamed join and a long
 * N-body run stop with status 130 / 143 and one line, leaving no
 * temporary or partial file; a later run removes the temporaries a killed
 * run left beside its outputs. */
#include "test.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Start "CLI args" in the background, stdout and stderr into log. */
static pid_t start_grove(const char *args, const char *log)
{
    char command[4096];
    snprintf(command, sizeof command, "exec %s %s > '%s' 2>&1", test_cli(), args, log);
    pid_t pid = fork();
    if (pid == 0) {
        execl("/bin/sh", "sh", "-c", command, (char *)NULL);
        _exit(127);
    }
    return pid;
}

/* How many files of dir have `part` in their name and more than
 * min_size bytes. */
static size_t count_larger(const char *dir, const char *part, off_t min_size)
{
    DIR *d = opendir(dir);
    if (!d) return 0;
    size_t count = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        char path[1024];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        count += strstr(e->d_name, part) && stat(path, &st) == 0 && st.st_size > min_size;
    }
    closedir(d);
    return count;
}

static size_t count_named(const char *dir, const char *part) { return count_larger(dir, part, -1); }

/* Wait until dir holds a file with `part` in its name and more than
 * min_size bytes, or the process ends; true when the file appeared while
 * it still ran. */
static bool wait_for_file(pid_t pid, const char *dir, const char *part, off_t min_size)
{
    const struct timespec pause = {0, 1000000};
    for (;;) {
        if (count_larger(dir, part, min_size)) return true;
        if (waitpid(pid, NULL, WNOHANG) == pid) return false;
        nanosleep(&pause, NULL);
    }
}

/* Lines in text (a last line without '\n' counts). */
static size_t lines(const char *text)
{
    size_t n = 0;
    for (const char *p = text; *p; p++) n += *p == '\n';
    return n + (text[0] && text[strlen(text) - 1] != '\n');
}

/* Send sig once a file named with `part` has grown past min_size bytes in
 * dir, then check the exit status, the one line, and that dir holds no
 * temporary or partial file. */
static void interrupt_and_check(const char *args, const char *dir, const char *part, off_t min_size, int sig,
                                const char *command)
{
    char log[512];
    snprintf(log, sizeof log, "%s.log", dir);
    pid_t pid = start_grove(args, log);
    REQUIRE(pid > 0);
    if (!wait_for_file(pid, dir, part, min_size)) {
        CHECK_MSG(false, "grove %s ended before %s appeared in %s", args, part, dir);
        return;
    }
    REQUIRE(kill(pid, sig) == 0);
    int status = 0;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    size_t len;
    char *out = test_read_file(log, &len);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 128 + sig, "%s after signal %d: %s %d; output: %s",
              command, sig, WIFEXITED(status) ? "exit" : "killed by", WIFEXITED(status) ? WEXITSTATUS(status)
              : WTERMSIG(status), out ? out : "");
    if (out) {
        char want[64];
        snprintf(want, sizeof want, "grove %s: interrupted by %s", command, sig == SIGINT ? "SIGINT" : "SIGTERM");
        CHECK_MSG(strstr(out, want) && lines(out) == 1, "%s: wanted one line \"%s\", got: %s", command, want, out);
    }
    free(out);
    CHECK_MSG(count_named(dir, ".grove-partial.") == 0, "%s left a partial file in %s", command, dir);
    CHECK_MSG(count_named(dir, ".tmp.") == 0, "%s left a temporary file in %s", command, dir);
}

TEST(cli_signal_streamed_join_leaves_no_partial_file)
{
    char args[4096];
    snprintf(args, sizeof args, "gen uniform --n 200000 --dims 3 --seed 5 -o %s --quiet", test_path("sig_x.npy"));
    REQUIRE(test_grove(args, NULL) == 0);
    const int sigs[2] = {SIGINT, SIGTERM};
    for (int k = 0; k < 2; k++) {
        char dir[512];
        snprintf(dir, sizeof dir, "%s/join_%d", test_tmpdir(), k);
        REQUIRE(mkdir(dir, 0777) == 0);
        /* About 50 neighbours per point, streamed in batches of about 2 MiB. */
        snprintf(args, sizeof args,
                 "join %s --eps 0.04 --memory-budget 4M --offsets %s/o.npy --indices %s/i.npy --distances %s/d.npy "
                 "--threads 2 --quiet",
                 test_path("sig_x.npy"), dir, dir, dir);
        /* Once the first batch is being written (the files hold more than
         * their 128-byte headers). */
        interrupt_and_check(args, dir, "i.npy.grove-partial.", 128, sigs[k], "join");
        CHECK(count_named(dir, ".npy") == 0);
    }
}

TEST(cli_signal_nbody_keeps_a_whole_checkpoint)
{
    char dir[512], args[4096];
    snprintf(dir, sizeof dir, "%s/nbody_sig", test_tmpdir());
    REQUIRE(mkdir(dir, 0777) == 0);
    /* A checkpoint and a snapshot after every step, for far more steps
     * than the test waits for. */
    snprintf(args, sizeof args,
             "nbody --ic plummer --n 20000 --seed 3 --steps 1000000 --snapshot-every 1 --out %s --threads 2 --quiet",
             dir);
    interrupt_and_check(args, dir, "snap_000001.npy", 0, SIGINT, "nbody");
    /* What it left is whole: the checkpoint resumes. */
    char path[600];
    snprintf(path, sizeof path, "%s/checkpoint.grove", dir);
    grove_nbody *sim = NULL;
    CHECK_OK(grove_nbody_checkpoint_read(path, NULL, &sim));
    CHECK(sim == NULL || grove_nbody_count(sim) == 20000);
    grove_nbody_free(sim);
}

/* A process id that no process holds now (a child that has exited). */
static pid_t dead_pid(void)
{
    pid_t pid = fork();
    if (pid == 0) _exit(0);
    waitpid(pid, NULL, 0);
    return pid;
}

static bool exists(const char *path) { return access(path, F_OK) == 0; }

TEST(cli_stale_temporaries_of_dead_runs_are_removed)
{
    double pts[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    const char *data = test_write_file("stale.bin", pts, sizeof pts);
    pid_t dead = dead_pid();
    char stale[600], stale_inner[600], live[600], other[600], args[4096];
    const char *indices = test_path("stale_i.npy");
    /* What a killed run leaves: the staged output, and the library's own
     * temporary while it was writing it. */
    snprintf(stale, sizeof stale, "%s.grove-partial.%ld", indices, (long)dead);
    snprintf(stale_inner, sizeof stale_inner, "%s.grove-partial.%ld.tmp.%ld.0", indices, (long)dead, (long)dead);
    /* A live process's temporary and another output's stay. */
    snprintf(live, sizeof live, "%s.grove-partial.%ld", indices, (long)getpid());
    snprintf(other, sizeof other, "%s.grove-partial.%ld", test_path("other_i.npy"), (long)dead);
    const char *made[4] = {stale, stale_inner, live, other};
    for (int k = 0; k < 4; k++) {
        FILE *f = fopen(made[k], "wb");
        REQUIRE(f && fclose(f) == 0);
    }
    snprintf(args, sizeof args, "balltree %s --dims 2 --indices %s --quiet", data, indices);
    CHECK(test_grove(args, NULL) == 0);
    CHECK(exists(indices));
    CHECK_MSG(!exists(stale) && !exists(stale_inner), "stale temporaries of %s are still there", indices);
    CHECK(exists(live) && exists(other));
    unlink(live);
    unlink(other);

    /* N-body: a checkpoint's and a snapshot's temporary in --out. */
    char dir[512], ckpt[700], snap[700];
    snprintf(dir, sizeof dir, "%s/nbody_stale", test_tmpdir());
    REQUIRE(mkdir(dir, 0777) == 0);
    snprintf(ckpt, sizeof ckpt, "%s/checkpoint.grove.tmp.%ld.3", dir, (long)dead);
    snprintf(snap, sizeof snap, "%s/snap_000007.npy.tmp.%ld.0", dir, (long)dead);
    const char *left[2] = {ckpt, snap};
    for (int k = 0; k < 2; k++) {
        FILE *f = fopen(left[k], "wb");
        REQUIRE(f && fclose(f) == 0);
    }
    snprintf(args, sizeof args, "nbody --ic plummer --n 64 --steps 1 --out %s --quiet", dir);
    CHECK(test_grove(args, NULL) == 0);
    CHECK_MSG(!exists(ckpt) && !exists(snap), "stale temporaries in %s are still there", dir);
}

TEST(cli_nbody_checks_its_input_before_creating_out)
{
    char dir[512], args[4096], *out = NULL;
    snprintf(dir, sizeof dir, "%s/never_made", test_tmpdir());
    snprintf(args, sizeof args, "nbody --input %s --steps 1 --out %s", test_path("no_such_snapshot.npy"), dir);
    CHECK(test_grove(args, &out) == 1);
    CHECK_MSG(out && strstr(out, "no_such_snapshot.npy"), "output: %s", out ? out : "");
    free(out);
    CHECK_MSG(!exists(dir), "--out %s was created for a run that could not start", dir);
}

/* Wait (at most 60 s) until the file at path holds text or the process
 * ends; true when the text appeared while it ran. */
static bool wait_for_text(pid_t pid, const char *path, const char *text)
{
    const struct timespec pause = {0, 5000000};
    for (int i = 0; i < 12000; i++) {
        size_t len;
        char *got = test_read_file(path, &len);
        bool found = got && strstr(got, text);
        free(got);
        if (found) return true;
        if (waitpid(pid, NULL, WNOHANG) == pid) return false;
        nanosleep(&pause, NULL);
    }
    return false;
}

/* The exit status of pid within 10 s, else -1 (and pid killed). */
static int status_within(pid_t pid)
{
    const struct timespec pause = {0, 5000000};
    int status = 0;
    for (int i = 0; i < 2000; i++) {
        if (waitpid(pid, &status, WNOHANG) == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        nanosleep(&pause, NULL);
    }
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    return -1;
}

TEST(cli_signal_stops_a_wait_for_a_fifo_reader)
{
    char args[2048], dir[512], stage[512], fifo[600], indices[600], log[600];
    snprintf(args, sizeof args, "gen uniform --n 500 --dims 3 --seed 6 -o %s --quiet", test_path("wait_x.npy"));
    REQUIRE(test_grove(args, NULL) == 0);
    snprintf(dir, sizeof dir, "%s/fifo_wait", test_tmpdir());
    snprintf(stage, sizeof stage, "%s/fifo_wait_stage", test_tmpdir());
    REQUIRE(mkdir(dir, 0777) == 0 && mkdir(stage, 0777) == 0);
    snprintf(fifo, sizeof fifo, "%s/d.npy", dir);
    snprintf(indices, sizeof indices, "%s/i.npy", dir);
    REQUIRE(mkfifo(fifo, 0600) == 0);
    const int sigs[2] = {SIGINT, SIGTERM};
    for (int k = 0; k < 2; k++) {
        snprintf(log, sizeof log, "%s/fifo_wait_%d.log", test_tmpdir(), k);
        /* --progress: grove says that it waits for the FIFO's reader, which
         * never comes. */
        snprintf(args, sizeof args, "knn %s -k 3 --indices %s --distances %s --progress --threads 1",
                 test_path("wait_x.npy"), indices, fifo);
        const char *tmp = getenv("TMPDIR");
        char *saved = tmp ? strdup(tmp) : NULL;
        setenv("TMPDIR", stage, 1);
        pid_t pid = start_grove(args, log);
        if (saved) setenv("TMPDIR", saved, 1);
        else unsetenv("TMPDIR");
        free(saved);
        REQUIRE(pid > 0);
        bool waited = wait_for_text(pid, log, "waiting for a reader");
        CHECK_MSG(waited, "grove knn never waited for the reader of the FIFO %s", fifo);
        if (waited) CHECK(kill(pid, sigs[k]) == 0);
        int rc = status_within(pid);
        size_t len;
        char *out = test_read_file(log, &len), want[64];
        snprintf(want, sizeof want, "grove knn: interrupted by %s", sigs[k] == SIGINT ? "SIGINT" : "SIGTERM");
        CHECK_MSG(!waited || (rc == 128 + sigs[k] && out && strstr(out, want)), "after signal %d: %d, %s", sigs[k], rc,
                  out ? out : "");
        free(out);
        struct stat st;
        CHECK(stat(fifo, &st) == 0 && S_ISFIFO(st.st_mode));
        CHECK_MSG(!exists(indices), "--indices appeared though the set was interrupted");
        CHECK(count_named(stage, "grove-output") == 0 && count_named(dir, ".grove-") == 0);
    }
}
