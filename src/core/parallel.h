/* Parallel primitives shared by the indexes and apps (internal). Each one
 * is deterministic: the output does not depend on the thread count. */
#ifndef GROVE_PARALLEL_H
#define GROVE_PARALLEL_H

#include "internal.h"

/* The threads of a call that asks for the default (threads 0): the OpenMP
 * default capped by the CPUs the process may use and by the cores other
 * processes keep busy at the moment (cpu_share.c says why). */
int grove__threads_default(void);

/* Thread policy, one rule for the whole library: start no more threads
 * than there are useful units of parallel work (at least one), never more
 * than asked for. Each module says what a unit is; results never depend on
 * the count. */
static inline int grove__threads_cap(int threads, size_t useful)
{
    return (size_t)threads > useful ? (useful ? (int)useful : 1) : threads;
}

/* Threads worth using on n points (one per 8192, and one more): on small
 * inputs the parallel regions (several per Borůvka round) cost more than
 * they save, and on oversubscribed cores an idle OpenMP thread spinning at
 * a barrier can stall the working one. */
static inline int grove__threads_for(int threads, size_t n) { return grove__threads_cap(threads, n / 8192 + 1); }

/* The calling thread's contiguous share [*lo, *hi) of n items, split evenly
 * over its team (thread t gets [n t / nt, n (t + 1) / nt)); returns t and
 * sets *team_size = nt. */
static inline int grove__team_share(size_t n, size_t *lo, size_t *hi, int *team_size)
{
    int t, nt;
    grove__team_member(&t, &nt);
    *lo = n * (size_t)t / (size_t)nt;
    *hi = n * (size_t)(t + 1) / (size_t)nt;
    *team_size = nt;
    return t;
}

/* `call` as an OpenMP task where `wanted` (a team shares the work; the
 * clauses `...` as for `omp task`), else a plain call: no task construct,
 * which even undeferred costs a runtime call per node of a recursion and
 * is a scheduling point where this thread could start another task on
 * its own scratch. GROVE__TASKWAIT_IF waits for them where they were made. */
#define GROVE__PRAGMA(x) _Pragma(#x)
#define GROVE__TASK_IF(wanted, call, ...)                                                                     \
    do {                                                                                                     \
        if (wanted) {                                                                                        \
            GROVE__PRAGMA(omp task __VA_ARGS__)                                                              \
            call;                                                                                            \
        } else {                                                                                             \
            call;                                                                                            \
        }                                                                                                    \
    } while (0)
/* for (size_t var = 0; var < parts; var++) body: a task per part where
 * parts > 1 (a team shares them), else a plain loop, no task construct
 * (GROVE__TASK_IF says why). Variables are shared: body writes each
 * part's own results. */
#define GROVE__PARTS(var, parts, body)                                                                        \
    do {                                                                                                     \
        if ((parts) > 1) {                                                                                   \
            GROVE__PRAGMA(omp taskloop grainsize(1) default(shared))                                         \
            for (size_t var = 0; var < (parts); var++) { body; }                                             \
        } else {                                                                                             \
            for (size_t var = 0; var < (parts); var++) { body; }                                             \
        }                                                                                                    \
    } while (0)
#define GROVE__TASKWAIT_IF(wanted)                                                                           \
    do {                                                                                                     \
        if (wanted) {                                                                                        \
            GROVE__PRAGMA(omp taskwait)                                                                      \
        }                                                                                                    \
    } while (0)

/* Stable LSD radix sort of n (key, value) pairs by key, 8 bits per pass,
 * OpenMP over contiguous chunks. Passes whose byte is the same in every key
 * are skipped, so keys using few bits cost few passes. Scratch: n keys and
 * n values (allocated here). Time O(n * passes / threads). */
grove_status grove__radix_sort_u64(uint64_t *keys, uint32_t *values, size_t n, int threads);

/* Writes the i in [0, n) with keep[i] != 0 to out in ascending order and
 * returns their count (threads > 1: a per-thread count and prefix sum). */
size_t grove__compact_u32(const uint8_t *keep, size_t n, uint32_t *out, int threads);

#endif
