/* grove__pc_run: the parallel pass over the query groups, each thread's
 * histogram and exact sums, and their merge (the kernels are in pair_t.h). */
#include "paircount_internal.h"
#include "../join/join_internal.h"
#include "../core/parallel.h"
#include "../core/cpu.h"

#include <omp.h>
#include <string.h>

/* Pairs taken at a time by the portable steps (pair_t.h). */
#define PC_CHUNK 64
/* Query groups a thread takes at a time. */
#define PC_CLAIM 4
/* AVX-512 with x86-64-v3 (no FMA contraction: -std=c11 keeps it off). */
#define PC_TARGET_V4 __attribute__((target("avx512f,avx512vl,avx512bw,avx512dq,avx2,bmi,bmi2,lzcnt,popcnt")))

/* What a thread keeps: counts by slot (see pc_bins), PC_LANES each, the
 * current query group's weighted sums likewise, and every group's so far,
 * exactly; the scratch of one query group (the listed groups' boxes by
 * dimension, their squared gaps to a query, which are near it, and the
 * runs of positions they make). */
typedef struct pc_thread {
    uint64_t *count;
    double *part;
    grove__xsum *sum;
    uint64_t adds; /* into sum since its last normalisation */
    grove__join_groups groups;
    void *lo, *hi, *gap2;
    uint32_t *pass, *rb, *re;
    size_t cap_g;
} pc_thread;

/* Free the query group's scratch (pc_reserve_groups makes it). */
static void groups_scratch_free(pc_thread *th)
{
    grove__free(th->lo);
    grove__free(th->hi);
    grove__free(th->gap2);
    grove__free(th->pass);
    grove__free(th->rb);
    grove__free(th->re);
    th->cap_g = 0;
}

static void thread_free(pc_thread *th)
{
    grove__free(th->count);
    grove__free(th->part);
    grove__free(th->sum);
    grove__join_groups_free(&th->groups);
    groups_scratch_free(th);
}

static grove_status thread_init(pc_thread *th, const pc_bins *b, int weighted)
{
    memset(th, 0, sizeof *th);
    th->count = grove__calloc(b->slots * PC_LANES, sizeof *th->count, "pair count histogram");
    if (weighted) {
        th->part = grove__calloc(b->slots * PC_LANES, sizeof *th->part, "pair count weighted sums");
        th->sum = grove__calloc(b->nbins, sizeof *th->sum, "pair count weighted sums");
    }
    if (th->count && (!weighted || (th->part && th->sum))) return GROVE_OK;
    thread_free(th);
    return GROVE_OUT_OF_MEMORY;
}

/* Room for `count` listed groups of m box dimensions of elem bytes. */
static grove_status pc_reserve_groups(pc_thread *th, size_t count, size_t m, size_t elem)
{
    if (count <= th->cap_g) return GROVE_OK;
    size_t cap = count > 2 * th->cap_g ? count : 2 * th->cap_g;
    groups_scratch_free(th);
    th->lo = grove__malloc(cap * m * elem, "pair count group boxes");
    th->hi = grove__malloc(cap * m * elem, "pair count group boxes");
    th->gap2 = grove__malloc(cap * elem, "pair count group boxes");
    th->pass = grove__malloc(cap * sizeof *th->pass, "pair count group boxes");
    th->rb = grove__malloc(cap * sizeof *th->rb, "pair count group boxes");
    th->re = grove__malloc(cap * sizeof *th->re, "pair count group boxes");
    if (!th->lo || !th->hi || !th->gap2 || !th->pass || !th->rb || !th->re) return GROVE_OUT_OF_MEMORY;
    th->cap_g = cap;
    return GROVE_OK;
}

/* Move the query group's weighted sums into the exact ones (and clear
 * them for the next group): each slot's lanes summed in a fixed order. */
static void thread_settle(pc_thread *th, const pc_bins *b)
{
    if (th->adds + b->nbins >= GROVE__XSUM_SAFE_ADDS) {
        for (size_t i = 0; i < b->nbins; i++) grove__xsum_normalize(&th->sum[i]);
        th->adds = 0;
    }
    for (size_t i = 0; i < b->nbins; i++) {
        double *p = &th->part[(b->npi + i) * PC_LANES];
        double v = ((p[0] + p[1]) + (p[2] + p[3])) + ((p[4] + p[5]) + (p[6] + p[7]));
        if (v != 0) grove__xsum_add(&th->sum[i], v);
        memset(p, 0, PC_LANES * sizeof *p);
    }
    th->adds += b->nbins;
}

#define JOIN_TEMPLATE "../paircount/pair_t.h"
#include "../join/instances.h"

typedef grove_status (*pc_group_fn)(const pc_pass *, size_t, pc_thread *);
/* By instruction set (portable, v3, v4), dtype (float64, float32), metric. */
#if GROVE__HAVE_TARGETS
static const pc_group_fn PC_GROUP[3][2][2] = {
    {{pc_group_portable_f64, pc_group_portable_f64p}, {pc_group_portable_f32, pc_group_portable_f32p}},
    {{pc_group_v3_f64, pc_group_v3_f64p}, {pc_group_v3_f32, pc_group_v3_f32p}},
    {{pc_group_v4_f64, pc_group_v4_f64p}, {pc_group_v4_f32, pc_group_v4_f32p}},
};
#else
static const pc_group_fn PC_GROUP[1][2][2] = {
    {{pc_group_portable_f64, pc_group_portable_f64p}, {pc_group_portable_f32, pc_group_portable_f32p}},
};
#endif

/* The instruction set this process runs the kernels with. */
static int pc_level(void)
{
#if GROVE__HAVE_TARGETS
    grove__cpu_features c = grove__cpu();
    if (!grove__cpu_v3(c)) return 0;
    return c.avx512f && c.avx512vl && c.avx512bw && c.avx512dq ? 2 : 1;
#else
    return 0;
#endif
}

grove_status grove__pc_run(const pc_pass *ps, const grove_options *options, int64_t *count, grove__xsum *sum)
{
    const grove_index *D = ps->D, *Q = ps->Q;
    const pc_bins *b = ps->bins;
    size_t groups = Q->nleaves;
    if (groups == 0 || D->tree.n == 0) return GROVE_OK;
    int threads = grove__threads_for(grove__options(options).threads, grove__join_work(D, Q));
    pc_group_fn group = PC_GROUP[pc_level()][D->tree.dtype == GROVE_FLOAT32][D->period != NULL];
    int weighted = sum != NULL;
    /* Threads claim PC_CLAIM groups at a time from a shared counter, so the
     * pass has no barrier but its end (on cores other work keeps busy, a
     * barrier waits for a thread that is not running), and check the
     * cancel flag at every claim; the calling thread reports progress. */
    size_t next = 0;
    int failed = 0, halt = 0;
#pragma omp parallel num_threads(threads)
    {
        pc_thread th;
        if (thread_init(&th, b, weighted) != GROVE_OK) {
#pragma omp atomic write
            failed = 1;
        }
        for (;;) {
            size_t g0;
            int stop, lost;
#pragma omp atomic capture
            {
                g0 = next;
                next += PC_CLAIM;
            }
#pragma omp atomic read
            stop = halt;
#pragma omp atomic read
            lost = failed;
            if (stop || lost || g0 >= groups) break;
            if (grove__cancelled(options)) {
#pragma omp atomic write
                halt = 1;
                break;
            }
            size_t g1 = groups - g0 > PC_CLAIM ? g0 + PC_CLAIM : groups;
            for (size_t g = g0; g < g1; g++) {
                if (group(ps, g, &th) != GROVE_OK) {
#pragma omp atomic write
                    failed = 1;
                    break;
                }
                if (weighted) thread_settle(&th, b);
            }
            if (omp_get_thread_num() == 0) grove__progress(options, "pair counts", (double)g1 / (double)groups);
        }
#pragma omp barrier
        if (!failed && !halt) {
#pragma omp critical
            for (size_t i = 0; i < b->nbins; i++) {
                for (size_t l = 0; l < PC_LANES; l++) count[i] += (int64_t)th.count[(b->npi + i) * PC_LANES + l];
                if (weighted) grove__xsum_merge(&sum[i], &th.sum[i]);
            }
        }
        thread_free(&th);
    }
    if (failed) return grove__fail(GROVE_OUT_OF_MEMORY, "pair counts: out of memory for a thread's histogram");
    if (grove__cancelled(options)) return grove__fail(GROVE_CANCELLED, "pair counts: cancelled");
    return GROVE_OK;
}
