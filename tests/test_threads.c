/* The default thread count: at most grove_cores(), and only the cores that
 * other processes leave free at the start of a call (src/core/cpu_share.c).
 * Explicit counts are kept as asked. */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include "test.h"

#include <omp.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void sleep_ms(long ms)
{
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000};
    nanosleep(&t, NULL);
}

TEST(threads_default_is_at_most_the_openmp_default)
{
    int cores = grove_cores();
    CHECK(cores >= 1 && cores <= omp_get_max_threads());
    int t = grove_options_threads(NULL);
    CHECK_MSG(t >= 1 && t <= cores, "default %d of %d cores", t, cores);
    /* omp_set_num_threads (what threadpoolctl calls) caps the default. */
    int keep = omp_get_max_threads();
    omp_set_num_threads(1);
    CHECK(grove_cores() == 1 && grove_options_threads(NULL) == 1);
    omp_set_num_threads(keep);
    /* Explicit counts are what was asked, busy machine or not. */
    grove_options o;
    grove_options_init(&o);
    o.threads = 5;
    CHECK(grove_options_threads(&o) == 5);
}

/* A process spinning on every CPU of ours: the default drops to one
 * thread. */
TEST(threads_default_leaves_out_cores_other_processes_keep_busy)
{
    cpu_set_t set;
    REQUIRE(sched_getaffinity(0, sizeof set, &set) == 0);
    int cpus = CPU_COUNT(&set);
    if (grove_cores() < 2) {
        test_skip("one core: the default is one thread anyway");
        return;
    }
    enum { MAX_SPIN = 256 };
    pid_t spinners[MAX_SPIN];
    int started = 0;
    for (; started < cpus && started < MAX_SPIN; started++) {
        pid_t pid = fork();
        if (pid == 0) {
            volatile unsigned long x = 0;
            for (;;) x++;
        }
        if (pid < 0) break;
        spinners[started] = pid;
    }
    sleep_ms(100); /* they run, and the last reading (10 ms) is stale */
    int busy = grove_options_threads(NULL);
    for (int i = 0; i < started; i++) kill(spinners[i], SIGKILL);
    for (int i = 0; i < started; i++) waitpid(spinners[i], NULL, 0);
    REQUIRE(started == cpus);
    CHECK_MSG(busy == 1, "%d threads by default beside %d spinning processes on %d CPUs", busy, started, cpus);
}
