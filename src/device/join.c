/* The epsilon join's device path (RT-HiSS without RT cores; kernels in
 * kernels/join.h): the public join calls' checks, batches and results are
 * the CPU's (src/join/join_api.c), with their count and fill passes run
 * by this engine. On the first pass the index and the query grouping
 * are uploaded as the host built them; then per pass:
 *
 *   candidates  join_walk counts each query group's candidate data groups,
 *               a prefix sum places them, join_walk lists them (once per
 *               call, in chunks of query groups when the lists would not
 *               fit beside the results);
 *   count       join_refine counts every query's hits; the counts come
 *               back (4 bytes per query);
 *   fill        the pass's rows in sub-batches whose pairs fit the
 *               device budget: join_refine writes each query's hits at
 *               its offset, join_sort puts each slice in row order (the
 *               host sorts slices longer than the kernel's tile), and the
 *               rows and squared distances come back into the caller's
 *               arrays, widened in place (distances are the square roots,
 *               taken on the host in double as the CPU takes them).
 *
 * Device memory per call: the points (n d values of the dtype, the
 * queries' too for a semi-join), 4 bytes per point and 16 + 2 m values
 * per tree node (m key dimensions), 12 bytes per query group, 4 per
 * candidate group, 4 per query for the counts, and the fill's sub-batch:
 * 8 bytes per query and 4 plus one value per pair, all within the
 * device's budget (grove__device_acquire); when options->memory_budget is
 * set, the candidate lists and the pairs take at most that each. */
#include "device.h"
#include "entry.h"
#include "../join/join_run.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* kernels/join.h's walk stack and kernels/join_sort.h's tile. */
enum { JOIN_STACK = 64, JOIN_SORT_MAX = 1024, WALK_GROUP = 64, SORT_GROUP = 128 };
/* Work-groups per launch: between launches the cancel flag is read. */
#define LAUNCH_GROUPS 8192

typedef struct dev_join {
    grove_device kind;
    grove__device *dev;          /* NULL until the first pass */
    const grove_index *D, *Q;    /* what is uploaded */
    const char *type, *ptype;    /* kernel suffixes: "f32", and "f32" or "f32p" for the metric */
    size_t elem;
    /* Data: coordinates, rows, nodes (4 x u32 each), node boxes, periodic
     * lengths (or a dummy); queries: the same for Q (aliases for a
     * self-join) and Q's leaf nodes. */
    grove__dmem x, perm, dnode, dbox, per;
    grove__dmem qx, qperm, qnode, qbox, qleaves;
    /* Per query group: candidate counts and their prefix sums (also on
     * the host); the candidate lists of groups [cg0, cg1). */
    grove__dmem ncand, cand_off, cand;
    uint64_t *cand_off_host;
    size_t cg0, cg1;
    uint32_t tile, group;        /* refine: points per tile, work-items per group */
    uint64_t limit;              /* options->memory_budget: the most bytes of candidate
                                    lists, and of pairs, on the device (0 = none) */
    uint32_t *dpos, *qpos;       /* tree position by row of D and Q (host; made on the
                                    first distance that needs mending, mend_small) */
} dev_join;

static grove_status unsupported(const dev_join *j, const char *why)
{
    return grove__fail(GROVE_UNSUPPORTED, "join: device %s (%s) %s", j->kind == GROVE_DEVICE_CUDA ? "cuda" : "opencl",
                       j->dev->info.name, why);
}

/* What this device cannot do for this index, refused in one line. */
static grove_status check_device(const dev_join *j, const grove_index *D)
{
    const grove__dev_info *i = &j->dev->info;
    if (D->tree.dtype == GROVE_FLOAT64 && !i->fp64) return unsupported(j, "has no double precision for float64 data");
    if (D->tree.dtype == GROVE_FLOAT32 && !i->fp32_denormals)
        return unsupported(j, "flushes float subnormals to zero, so float32 distances would differ from the CPU's");
    if (D->tree.depth + 2 > JOIN_STACK) return unsupported(j, "walks kd-trees of at most 62 levels");
    if (j->tile * D->tree.d * j->elem > i->local_memory)
        return unsupported(j, "has too little local memory for one point of this many dimensions");
    return GROVE_OK;
}

static void release_all(dev_join *j)
{
    grove__device *d = j->dev;
    if (!d) return;
    grove__dmem *own[] = {&j->x, &j->perm, &j->dnode, &j->dbox, &j->per, &j->qleaves, &j->ncand, &j->cand_off, &j->cand};
    grove__dmem *query[] = {&j->qx, &j->qperm, &j->qnode, &j->qbox};
    for (size_t k = 0; k < sizeof query / sizeof *query; k++)
        if (j->Q != j->D) grove__dfree(d, query[k]);
    for (size_t k = 0; k < sizeof own / sizeof *own; k++) grove__dfree(d, own[k]);
    grove__free(j->cand_off_host);
    j->cand_off_host = NULL;
    if (j->qpos != j->dpos) grove__free(j->qpos);
    grove__free(j->dpos);
    j->dpos = j->qpos = NULL;
    grove__device_release(d);
    j->dev = NULL;
}

/* An index's coordinates, rows, nodes and boxes. */
static grove_status upload_tree(dev_join *j, const grove_index *ix, grove__dmem *x, grove__dmem *perm,
                                grove__dmem *node, grove__dmem *box)
{
    const grove__tree *t = &ix->tree;
    grove__device *d = j->dev;
    grove_status s = grove__dupload(d, t->x, t->n * t->d * j->elem, "join points", x);
    if (s == GROVE_OK) s = grove__dupload(d, t->perm, t->n * sizeof *t->perm, "join rows", perm);
    if (s == GROVE_OK) s = grove__dupload(d, t->node, t->nodes * sizeof *t->node, "join tree", node);
    if (s == GROVE_OK) s = grove__dupload(d, t->box, t->nodes * 2 * t->dims * j->elem, "join boxes", box);
    return s;
}

/* Take the device and upload D and Q (the first pass of a call). */
static grove_status open_join(dev_join *j, const grove_index *D, const grove_index *Q)
{
    _Static_assert(sizeof(grove__node) == 4 * sizeof(uint32_t), "the kernels read nodes as four 32-bit words");
    grove_status s = grove__device_acquire(j->kind, "join", &j->dev);
    if (s != GROVE_OK) return s;
    j->D = D;
    j->Q = Q;
    int f32 = D->tree.dtype == GROVE_FLOAT32;
    j->elem = f32 ? sizeof(float) : sizeof(double);
    j->type = f32 ? "f32" : "f64";
    j->ptype = D->period ? (f32 ? "f32p" : "f64p") : j->type;
    /* Tiles of up to a leaf's points in half the local memory; work-groups
     * of a query group's queries, in whole warps. */
    size_t row_bytes = D->tree.d > 0 ? D->tree.d * j->elem : 1, tile = j->dev->info.local_memory / 2 / row_bytes;
    tile = tile < 1 ? 1 : tile > D->leaf ? D->leaf : tile;
    j->tile = (uint32_t)tile;
    size_t group = (Q->leaf + 31) / 32 * 32;
    group = group > 64 ? 64 : group;
    j->group = (uint32_t)(group > j->dev->info.max_group ? j->dev->info.max_group : group);
    s = check_device(j, D);
    if (s == GROVE_OK) s = upload_tree(j, D, &j->x, &j->perm, &j->dnode, &j->dbox);
    if (s == GROVE_OK && Q != D) s = upload_tree(j, Q, &j->qx, &j->qperm, &j->qnode, &j->qbox);
    if (s == GROVE_OK && Q == D) {
        j->qx = j->x;
        j->qperm = j->perm;
        j->qnode = j->dnode;
        j->qbox = j->dbox;
    }
    double dummy = 0;
    if (s == GROVE_OK)
        s = D->period ? grove__dupload(j->dev, D->period, 2 * D->tree.d * j->elem, "join box", &j->per)
                      : grove__dupload(j->dev, &dummy, sizeof dummy, "join box", &j->per);
    if (s == GROVE_OK) s = grove__dupload(j->dev, Q->leaves, Q->nleaves * sizeof *Q->leaves, "join groups", &j->qleaves);
    return s;
}

/* join_walk over query groups [g0, g1): their candidate counts into
 * j->ncand (fill 0), or their lists into j->cand from entry `base` of the
 * prefix sums on (fill 1). */
static grove_status walk(dev_join *j, size_t g0, size_t g1, uint32_t fill, uint64_t base, double prune2)
{
    char name[32];
    snprintf(name, sizeof name, "join_walk_%s", j->ptype);
    uint32_t count = (uint32_t)(g1 - g0), first = (uint32_t)g0, nnodes = (uint32_t)j->D->tree.nodes;
    uint32_t m = (uint32_t)j->D->tree.dims;
    /* The pruning radius in the dtype, rounded up so that no pair the
     * CPU keeps is pruned. */
    float p32 = (float)prune2;
    if ((double)p32 < prune2) p32 = nextafterf(p32, INFINITY);
    const grove__dmem *cand = fill ? &j->cand : &j->ncand;
    grove__karg args[] = {GROVE__KVAL(count), GROVE__KVAL(first), grove__kbuf(&j->qleaves), grove__kbuf(&j->qbox),
                          grove__kbuf(&j->dnode), grove__kbuf(&j->dbox), GROVE__KVAL(nnodes), GROVE__KVAL(m),
                          grove__kbuf(&j->per), GROVE__KVAL(p32), GROVE__KVAL(fill), grove__kbuf(&j->ncand),
                          grove__kbuf(&j->cand_off), GROVE__KVAL(base), grove__kbuf(cand)};
    if (j->elem == sizeof(double)) args[9] = GROVE__KVAL(prune2);
    return grove__dlaunch(j->dev, name, (count + WALK_GROUP - 1) / WALK_GROUP, WALK_GROUP, 0, args,
                          sizeof args / sizeof *args);
}

/* The candidate counts of every query group and their prefix sums, on
 * the device and the host, once per call. */
static grove_status count_candidates(dev_join *j, double prune2)
{
    grove__device *d = j->dev;
    size_t groups = j->Q->nleaves;
    grove_status s = grove__dalloc(d, groups * sizeof(uint32_t), "join candidate counts", &j->ncand);
    if (s == GROVE_OK) s = grove__dalloc(d, (groups + 1) * sizeof(uint64_t), "join candidate offsets", &j->cand_off);
    if (s == GROVE_OK) s = walk(j, 0, groups, 0, 0, prune2);
    uint64_t total = 0;
    if (s == GROVE_OK) s = grove__dscan(d, &j->ncand, &j->cand_off, groups, &total);
    if (s == GROVE_OK) {
        j->cand_off_host = grove__malloc((groups + 1) * sizeof *j->cand_off_host, "join candidate offsets");
        if (!j->cand_off_host) s = GROVE_OUT_OF_MEMORY;
    }
    if (s == GROVE_OK) s = grove__dread(d, &j->cand_off, 0, j->cand_off_host, (groups + 1) * sizeof(uint64_t));
    return s;
}

/* The candidate lists of query groups [g0, g1) into j->cand. */
static grove_status list_candidates(dev_join *j, size_t g0, size_t g1, double prune2)
{
    if (j->cg0 == g0 && j->cg1 == g1 && j->cand.buf) return GROVE_OK;
    grove__dfree(j->dev, &j->cand);
    uint64_t base = j->cand_off_host[g0], entries = j->cand_off_host[g1] - base;
    grove_status s = grove__dalloc(j->dev, (entries ? entries : 1) * sizeof(uint32_t), "join candidates", &j->cand);
    if (s == GROVE_OK) s = walk(j, g0, g1, 1, base, prune2);
    j->cg0 = g0;
    j->cg1 = s == GROVE_OK ? g1 : g0;
    return s;
}

/* The end of the chunk of query groups from g0 whose candidate lists fit
 * in `share` of what is left of the budget with the current lists given
 * back (at least one group). */
static size_t chunk_end(const dev_join *j, size_t g0, double share)
{
    const grove__device *d = j->dev;
    double room = (double)(d->budget - d->in_use + j->cand.bytes) * share;
    if (j->limit && (double)j->limit < room) room = (double)j->limit;
    room /= sizeof(uint32_t);
    size_t g1 = g0 + 1, groups = j->Q->nleaves;
    while (g1 < groups && (double)(j->cand_off_host[g1 + 1] - j->cand_off_host[g0]) <= room) g1++;
    return g1;
}

/* What one refine launch needs besides its groups. */
typedef struct refine_job {
    uint32_t row0, row1, fill, want_d2;
    double eps2;
    int exclude_self;
    const grove__dmem *counts, *off, *rows, *d2, *bad;
} refine_job;

/* join_refine over every query group, chunk by chunk of candidates, in
 * launches of at most LAUNCH_GROUPS groups with the cancel flag read
 * between them. */
static grove_status refine_all(dev_join *j, const refine_job *r, double prune2, const grove_options *options)
{
    grove__device *d = j->dev;
    char name[32];
    snprintf(name, sizeof name, "join_refine_%s", j->ptype);
    size_t groups = j->Q->nleaves;
    grove_status s = GROVE_OK;
    for (size_t c0 = 0; s == GROVE_OK && c0 < groups;) {
        size_t c1 = chunk_end(j, c0, 1.0);
        s = list_candidates(j, c0, c1, prune2);
        for (size_t g0 = c0; s == GROVE_OK && g0 < c1; g0 += LAUNCH_GROUPS) {
            if (grove__cancelled(options)) return grove__fail(GROVE_CANCELLED, "join: cancelled");
            size_t count = c1 - g0 < LAUNCH_GROUPS ? c1 - g0 : LAUNCH_GROUPS;
            uint32_t first = (uint32_t)g0, d32 = (uint32_t)j->D->tree.d, ex = (uint32_t)r->exclude_self;
            uint64_t base = j->cand_off_host[c0];
            float e32 = (float)r->eps2;
            grove__karg args[] = {
                GROVE__KVAL(first),     grove__kbuf(&j->qleaves), grove__kbuf(&j->qnode),  grove__kbuf(&j->qx),
                grove__kbuf(&j->qperm), grove__kbuf(&j->dnode),   grove__kbuf(&j->x),      grove__kbuf(&j->perm),
                grove__kbuf(&j->cand_off), GROVE__KVAL(base),     grove__kbuf(&j->cand),   GROVE__KVAL(d32),
                GROVE__KVAL(e32),       GROVE__KVAL(ex),          grove__kbuf(&j->per),    GROVE__KVAL(j->tile),
                GROVE__KVAL(r->row0),   GROVE__KVAL(r->row1),     GROVE__KVAL(r->fill),    grove__kbuf(r->counts),
                grove__kbuf(r->off),    grove__kbuf(r->rows),     grove__kbuf(r->d2),      GROVE__KVAL(r->want_d2),
                grove__kbuf(r->bad)};
            if (j->elem == sizeof(double)) args[12] = GROVE__KVAL(r->eps2);
            s = grove__dlaunch(d, name, count, j->group, (size_t)j->tile * j->D->tree.d * j->elem, args,
                               sizeof args / sizeof *args);
            if (s == GROVE_OK) s = grove__dfinish(d);
        }
        c0 = c1;
    }
    return s;
}

/* A one-value buffer, for the arguments a pass does not use. */
static grove_status dummy(grove__device *d, grove__dmem *m)
{
    uint64_t zero = 0;
    return grove__dupload(d, &zero, sizeof zero, "join", m);
}

static grove_status count_pass(dev_join *j, join_pass *pass, const grove_options *options)
{
    grove__device *d = j->dev;
    size_t nq = j->Q->tree.n;
    grove__dmem counts = {0}, unused = {0};
    uint32_t *host = grove__malloc((nq ? nq : 1) * sizeof *host, "join counts");
    grove_status s = host ? GROVE_OK : GROVE_OUT_OF_MEMORY;
    if (s == GROVE_OK) s = grove__dalloc(d, (nq ? nq : 1) * sizeof(uint32_t), "join counts", &counts);
    if (s == GROVE_OK) s = dummy(d, &unused);
    refine_job r = {(uint32_t)pass->row0, (uint32_t)pass->row1, 0, 0, pass->eps2, pass->exclude_self,
                    &counts,             &unused,              &unused, &unused, &unused};
    if (s == GROVE_OK) s = refine_all(j, &r, pass->prune2, options);
    if (s == GROVE_OK) s = grove__dread(d, &counts, 0, host, nq * sizeof *host);
    const uint32_t *perm = j->Q->tree.perm;
    for (size_t p = 0; s == GROVE_OK && p < nq; p++)
        if (perm[p] >= pass->row0 && perm[p] < pass->row1) pass->counts[perm[p] - pass->row0] = host[p];
    grove__dfree(d, &counts);
    grove__dfree(d, &unused);
    grove__free(host);
    return s;
}

/* Sort a slice of m > JOIN_SORT_MAX (row, distance) entries by row, as
 * the CPU sorts its mirrored slices. */
static grove_status sort_long_slice(int64_t *idx, double *dist, size_t m)
{
    int64_t *pairs = grove__malloc(2 * m * sizeof *pairs, "join slice sort");
    if (!pairs) return GROVE_OUT_OF_MEMORY;
    grove__join_sort_slice(idx, dist, m, pairs);
    grove__free(pairs);
    return GROVE_OK;
}

/* The sub-batch's rows and squared distances, read into the caller's
 * arrays at [0, m) and widened in place (backwards: each wider value
 * lands at or after the narrower one it replaces). */
static grove_status fetch_pairs(dev_join *j, const grove__dmem *rows, const grove__dmem *d2, size_t m, int64_t *idx,
                                double *dist)
{
    grove__device *d = j->dev;
    grove_status s = grove__dread(d, rows, 0, idx, m * sizeof(uint32_t));
    const uint32_t *r32 = (const uint32_t *)idx;
    for (size_t i = m; s == GROVE_OK && i-- > 0;) idx[i] = r32[i];
    if (s != GROVE_OK || !dist) return s;
    s = grove__dread(d, d2, 0, dist, m * j->elem);
    if (j->elem == sizeof(float)) {
        const float *f = (const float *)dist;
        for (size_t i = m; s == GROVE_OK && i-- > 0;) dist[i] = sqrt((double)f[i]);
    } else {
        for (size_t i = 0; s == GROVE_OK && i < m; i++) dist[i] = sqrt(dist[i]);
    }
    return s;
}

/* Row -> tree position of an index, on the host. */
static uint32_t *positions_of(const grove_index *ix)
{
    uint32_t *pos = grove__malloc((ix->tree.n ? ix->tree.n : 1) * sizeof *pos, "join tree positions");
    for (size_t p = 0; pos && p < ix->tree.n; p++) pos[ix->tree.perm[p]] = (uint32_t)p;
    return pos;
}

/* A distance at or below the root of the smallest normal came from a sum
 * that may have underflowed: each such one of rows [r0, r0 + nr) (slices
 * rel) becomes its pair's exact distance, as the CPU's fill mends it
 * (grove__join_exact_dist; ../index/dist_key.h). Rare beyond self pairs
 * and duplicates; one pass over the pairs otherwise. */
static grove_status mend_small(dev_join *j, size_t r0, size_t nr, const uint64_t *rel, const int64_t *idx,
                               double *dist)
{
    double root_min = sqrt(j->elem == sizeof(float) ? (double)FLT_MIN : DBL_MIN);
    for (size_t i = 0; i < nr; i++)
        for (uint64_t h = rel[i]; h < rel[i + 1]; h++) {
            if (dist[h] > root_min) continue;
            if (!j->dpos) {
                j->dpos = positions_of(j->D);
                j->qpos = j->Q == j->D ? j->dpos : positions_of(j->Q);
                if (!j->dpos || !j->qpos) return GROVE_OUT_OF_MEMORY;
            }
            dist[h] = grove__join_exact_dist(j->D, j->Q, j->qpos[r0 + i], j->dpos[idx[h]]);
        }
    return GROVE_OK;
}

/* Rows [r0, r1) of a fill pass, whose pairs fit the device buffers. */
static grove_status fill_rows(dev_join *j, join_pass *pass, size_t r0, size_t r1, const grove__dmem *off,
                              const grove__dmem *rows, const grove__dmem *d2, const grove__dmem *bad,
                              const grove__dmem *unused, const grove_options *options)
{
    grove__device *d = j->dev;
    const int64_t *o = pass->offsets + (r0 - pass->row0);
    size_t nr = r1 - r0, m = (size_t)(o[nr] - o[0]);
    uint64_t *rel = grove__malloc((nr + 1) * sizeof *rel, "join batch offsets");
    if (!rel) return GROVE_OUT_OF_MEMORY;
    for (size_t i = 0; i <= nr; i++) rel[i] = (uint64_t)(o[i] - o[0]);
    uint32_t zero = 0, flag = 0, want = pass->distances != NULL;
    grove_status s = grove__dwrite(d, off, 0, rel, (nr + 1) * sizeof *rel);
    if (s == GROVE_OK) s = grove__dwrite(d, bad, 0, &zero, sizeof zero);
    refine_job r = {(uint32_t)r0, (uint32_t)r1, 1, want, pass->eps2, pass->exclude_self, unused, off, rows, d2, bad};
    if (s == GROVE_OK) s = refine_all(j, &r, pass->prune2, options);
    if (s == GROVE_OK) s = grove__dread(d, bad, 0, &flag, sizeof flag);
    if (s == GROVE_OK && flag) s = grove__fail(GROVE_INVALID_ARGUMENT, "join fill: offsets disagree with the counts");
    char name[32];
    snprintf(name, sizeof name, "join_sort_%s", j->type);
    grove__karg args[] = {grove__kbuf(off), grove__kbuf(rows), grove__kbuf(d2), GROVE__KVAL(want)};
    if (s == GROVE_OK && nr) s = grove__dlaunch(d, name, nr, SORT_GROUP, 0, args, 4);
    int64_t *idx = pass->indices + o[0];
    double *dist = pass->distances ? pass->distances + o[0] : NULL;
    if (s == GROVE_OK) s = fetch_pairs(j, rows, d2, m, idx, dist);
    for (size_t i = 0; s == GROVE_OK && i < nr; i++)
        if (rel[i + 1] - rel[i] > JOIN_SORT_MAX)
            s = sort_long_slice(idx + rel[i], dist ? dist + rel[i] : NULL, (size_t)(rel[i + 1] - rel[i]));
    if (s == GROVE_OK && dist) s = mend_small(j, r0, nr, rel, idx, dist);
    grove__free(rel);
    return s;
}

/* Pairs of rows [r0, r1) of the pass. */
static uint64_t pairs_of(const join_pass *pass, size_t r0, size_t r1)
{
    return (uint64_t)(pass->offsets[r1 - pass->row0] - pass->offsets[r0 - pass->row0]);
}

static grove_status fill_pass(dev_join *j, join_pass *pass, const grove_options *options)
{
    grove__device *d = j->dev;
    size_t r0 = pass->row0, r1 = pass->row1, nr = r1 - r0;
    size_t per_pair = sizeof(uint32_t) + (pass->distances ? j->elem : 0);
    uint64_t total = pairs_of(pass, r0, r1);
    grove__dmem off = {0}, rows = {0}, d2 = {0}, bad = {0}, unused = {0};
    grove_status s = grove__dalloc(d, (nr + 1) * sizeof(uint64_t), "join batch offsets", &off);
    if (s == GROVE_OK) s = dummy(d, &bad);
    if (s == GROVE_OK) s = dummy(d, &unused);
    /* The candidates take what they need first; the pairs get half of the
     * rest (and never more than the pass has). */
    if (s == GROVE_OK && j->Q->nleaves) s = list_candidates(j, 0, chunk_end(j, 0, 0.5), pass->prune2);
    uint64_t cap = s == GROVE_OK ? (d->budget - d->in_use) / 2 / per_pair : 0;
    if (j->limit && j->limit / per_pair < cap) cap = j->limit / per_pair;
    cap = cap > total ? total : cap;
    if (s == GROVE_OK) s = grove__dalloc(d, (cap ? cap : 1) * sizeof(uint32_t), "join batch rows", &rows);
    if (s == GROVE_OK)
        s = pass->distances ? grove__dalloc(d, (cap ? cap : 1) * j->elem, "join batch distances", &d2) : dummy(d, &d2);
    for (size_t a = r0; s == GROVE_OK && a < r1;) {
        size_t b = a;
        while (b < r1 && pairs_of(pass, a, b + 1) <= cap) b++;
        if (b == a)
            s = grove__fail(GROVE_OVER_BUDGET,
                            "join: query %zu alone has %llu neighbours, more than the %llu pairs the device's "
                            "memory budget holds",
                            a, (unsigned long long)pairs_of(pass, a, a + 1), (unsigned long long)cap);
        else s = fill_rows(j, pass, a, b, &off, &rows, &d2, &bad, &unused, options);
        a = b;
    }
    grove__dfree(d, &off);
    grove__dfree(d, &rows);
    grove__dfree(d, &d2);
    grove__dfree(d, &bad);
    grove__dfree(d, &unused);
    return s;
}

/* The engine's pass (join_run.h). */
static grove_status device_run(void *ctx, const grove_index *D, const grove_index *Q, join_pass *pass,
                               const grove_options *options, const char *stage)
{
    dev_join *j = ctx;
    if (j->dev && (j->D != D || j->Q != Q)) release_all(j);
    grove_status s = j->dev ? GROVE_OK : open_join(j, D, Q);
    /* At an eps whose square is below the smallest normal (eps 0 too) the
     * pairs are decided by exact keys (../index/dist_key.h, eps2 one of
     * them): the pass runs on the host, as on the CPU. */
    double key_min = D->tree.dtype == GROVE_FLOAT32 ? (double)FLT_MIN : DBL_MIN;
    if (s == GROVE_OK && pass->eps2 < key_min) return grove__join_run(D, Q, pass, options, stage);
    if (s == GROVE_OK && !j->cand_off_host && Q->nleaves) s = count_candidates(j, pass->prune2);
    if (s == GROVE_OK && Q->nleaves) s = pass->fill ? fill_pass(j, pass, options) : count_pass(j, pass, options);
    if (s == GROVE_OK) grove__progress(options, stage, 1.0);
    return s;
}

/* Whether a join of nq queries in d dimensions is worth a GPU (auto). */
static bool large_join(size_t nq, size_t d) { return (double)nq * (double)d >= (double)(1 << 20); }

/* The device engine for a call on `options` with nq queries in d
 * dimensions; false when auto chose the CPU (*cpu then holds the options
 * to call the public function with). */
static bool device_engine(size_t nq, size_t d, const grove_options *options, dev_join *j, join_engine *e,
                          grove_options *cpu)
{
    memset(j, 0, sizeof *j);
    j->kind = grove__device_choose(options, large_join(nq, d));
    j->limit = options->memory_budget;
    *cpu = *options;
    cpu->device = GROVE_DEVICE_CPU;
    e->run = device_run;
    e->ctx = j;
    return j->kind != GROVE_DEVICE_CPU;
}

/* A device column entry (src/dispatch/join.c): the public call with the
 * CPU when auto chose it, else its engine-taking twin (join_run.h) with
 * the device's engine. nq, d: the problem's size; then the call's
 * arguments, less the options. */
#define DEVICE_JOIN(nq, d, public_call, on_call, ...)                                                        \
    dev_join j;                                                                                              \
    join_engine e;                                                                                           \
    grove_options cpu;                                                                                       \
    if (!device_engine((nq), (d), options, &j, &e, &cpu)) return public_call(__VA_ARGS__, &cpu);             \
    grove_status s = on_call(&e, __VA_ARGS__, options);                                                      \
    release_all(&j);                                                                                         \
    return s

/* The queries of a call on an index (all of its points for a self-join). */
#define INDEX_NQ (index ? queries ? queries->n : index->tree.n : 0)
#define INDEX_D (index ? index->tree.d : 0)

grove_status grove__device_join_count(const grove_index *index, const grove_points *queries,
                                      const grove_join_params *params, int64_t *counts, int64_t *pairs,
                                      const grove_options *options)
{
    DEVICE_JOIN(INDEX_NQ, INDEX_D, grove_join_count, grove__join_count_on, index, queries, params, counts, pairs);
}

grove_status grove__device_join_fill(const grove_index *index, const grove_points *queries,
                                     const grove_join_params *params, const int64_t *offsets, int64_t *indices,
                                     double *distances, const grove_options *options)
{
    DEVICE_JOIN(INDEX_NQ, INDEX_D, grove_join_fill, grove__join_fill_on, index, queries, params, offsets, indices,
                distances);
}

grove_status grove__device_join_stream(const grove_index *index, const grove_points *queries,
                                       const grove_join_params *params, grove_join_batch_fn fn, void *user,
                                       const grove_options *options)
{
    DEVICE_JOIN(INDEX_NQ, INDEX_D, grove_join_stream, grove__join_stream_on, index, queries, params, fn, user);
}

grove_status grove__device_join_search(const grove_index *index, const grove_points *queries,
                                       const grove_join_params *params, grove_join_result *result,
                                       const grove_options *options)
{
    DEVICE_JOIN(INDEX_NQ, INDEX_D, grove_join_search, grove__join_search_on, index, queries, params, result);
}

grove_status grove__device_join(grove_points data, const grove_points *queries, const grove_index_params *index_params,
                                const grove_join_params *params, grove_join_result *result,
                                const grove_options *options)
{
    DEVICE_JOIN(queries ? queries->n : data.n, data.d, grove_join, grove__join_on, data, queries, index_params, params,
                result);
}
