/* How many threads a call with the default thread count starts: the
 * OpenMP default (OMP_NUM_THREADS, a threadpoolctl limit, else the CPUs
 * libgomp saw at start) capped by the process's cgroup CPU quota, and by
 * the CPUs of its affinity mask that other processes do not keep busy at
 * the start of the call.
 *
 * Why: OpenMP threads meet at a barrier at the end of every parallel
 * region. When another job keeps a core busy, the thread on that core runs
 * only when the scheduler gives it a slice, and every region waits for it;
 * with the many short regions of a tree build or an N-body step a call
 * then runs many times slower than on one thread. Starting only as many
 * threads as there are idle cores avoids the wait (results do not depend
 * on the thread count). The busy count is the kernel's number of runnable
 * tasks (/proc/loadavg) less this process's own: an instantaneous reading,
 * refreshed at most every REFRESH_NS so short calls in a loop do not pay
 * for it. */
#ifdef __linux__
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#endif
#include "parallel.h"

#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#ifdef __linux__
#include <dirent.h>
#include <sched.h>
#include <unistd.h>
#endif

#define REFRESH_NS 10000000 /* 10 ms */

#ifdef __linux__
/* The first line of a small file into buf (NUL-terminated); false if it
 * cannot be read. */
static bool read_small(const char *path, char *buf, size_t size)
{
    FILE *f = fopen(path, "re");
    if (!f) return false;
    bool ok = fgets(buf, (int)size, f) != NULL;
    fclose(f);
    return ok;
}

/* CPUs the cgroup v2 quota allows ("max" or "QUOTA PERIOD" in cpu.max of
 * the process's cgroup), rounded up; 0 when there is no quota. */
static int cgroup_cpus(void)
{
    char line[512], path[700], quota[32];
    if (!read_small("/proc/self/cgroup", line, sizeof line) || strncmp(line, "0::", 3) != 0) return 0;
    line[strcspn(line, "\n")] = '\0';
    snprintf(path, sizeof path, "/sys/fs/cgroup%s/cpu.max", line + 3);
    long long q, period;
    if (!read_small(path, line, sizeof line) && !read_small("/sys/fs/cgroup/cpu.max", line, sizeof line)) return 0;
    if (sscanf(line, "%31s %lld", quota, &period) != 2 || strcmp(quota, "max") == 0 || period <= 0) return 0;
    q = atoll(quota);
    return q > 0 ? (int)((q + period - 1) / period) : 0;
}

/* The CPUs this process may run on now (its affinity mask). */
static int affinity_cpus(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0) return 0;
    return CPU_COUNT(&set);
}

/* This process's runnable threads (state R in /proc/self/task/N/stat),
 * its idle OpenMP threads still spinning among them. */
static int own_running(void)
{
    DIR *dir = opendir("/proc/self/task");
    if (!dir) return 1;
    int running = 0;
    struct dirent *e;
    char path[300], stat[512];
    while ((e = readdir(dir)) != NULL) {
        if (e->d_name[0] == '.') continue;
        snprintf(path, sizeof path, "/proc/self/task/%.200s/stat", e->d_name);
        if (!read_small(path, stat, sizeof stat)) continue;
        /* "pid (comm) S ...": the state follows the last ')'. */
        const char *close = strrchr(stat, ')');
        if (close && close[1] == ' ' && close[2] == 'R') running++;
    }
    closedir(dir);
    return running > 0 ? running : 1;
}

/* The system's runnable tasks now (the fourth field of /proc/loadavg); 0
 * if unknown. */
static long system_running(void)
{
    char line[128];
    long running = 0;
    if (!read_small("/proc/loadavg", line, sizeof line) || sscanf(line, "%*s %*s %*s %ld/", &running) != 1) return 0;
    return running;
}

/* Of the `allowed` CPUs, those that other processes keep busy now: the
 * system's runnable tasks less this process's, counted in proportion when
 * the machine has more CPUs online than the process may use. This
 * process's are counted before and after the system's, and the larger
 * count taken: a thread of it that blocks between two readings (the
 * caller handing over to the binding's thread, an OpenMP thread going to
 * sleep) is not taken for another job. */
static int busy_cpus(int allowed)
{
    int own = own_running();
    long running_all = system_running();
    /* The caller is one of them; this process's other threads are counted
     * only when there is someone else to tell them from. */
    if (running_all <= 1) return 0;
    int own_after = own_running();
    long others = running_all - (own_after > own ? own_after : own);
    if (others <= 0) return 0;
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    if (online > allowed) others = others * allowed / online;
    return others > allowed ? allowed : (int)others;
}

static int64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* The CPUs the cgroup's quota allows (0: no quota), read once. */
static int quota_cpus(void)
{
    static atomic_int quota = -1;
    int q = atomic_load_explicit(&quota, memory_order_relaxed);
    if (q < 0) {
        q = cgroup_cpus();
        atomic_store_explicit(&quota, q, memory_order_relaxed);
    }
    return q;
}

/* The CPUs the process may use that other processes do not keep busy now
 * (-1 when unknown), remembered for REFRESH_NS. */
static int cpus_free_now(void)
{
    static _Atomic int64_t checked_at;
    static atomic_int last_free = INT_MIN; /* until the first reading */
    int64_t t = now_ns();
    int free_cpus = atomic_load_explicit(&last_free, memory_order_relaxed);
    if (free_cpus == INT_MIN || t - atomic_load_explicit(&checked_at, memory_order_relaxed) >= REFRESH_NS) {
        int allowed = affinity_cpus();
        free_cpus = allowed > 0 ? allowed - busy_cpus(allowed) : -1;
        atomic_store_explicit(&last_free, free_cpus, memory_order_relaxed);
        atomic_store_explicit(&checked_at, t, memory_order_relaxed);
    }
    return free_cpus;
}
#else
static int quota_cpus(void) { return 0; }
static int cpus_free_now(void) { return -1; }
#endif

int grove_cores(void)
{
#ifdef _OPENMP
    int threads = omp_get_max_threads();
#else
    int threads = 1;
#endif
    int quota = quota_cpus();
    if (quota > 0 && quota < threads) threads = quota;
    return threads > 1 ? threads : 1;
}

int grove__threads_default(void)
{
    int cores = grove_cores();
    if (cores == 1) return 1;
    int free_cpus = cpus_free_now();
    if (free_cpus < 0) return cores; /* nothing known */
    return free_cpus < 1 ? 1 : free_cpus < cores ? free_cpus : cores;
}
