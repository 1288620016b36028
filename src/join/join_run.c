/* grove__join_run: per-thread scratch, candidate sorting, the CSR sink and
 * the parallel loop over query groups (the kernels are in join_t.h). */
#include "join_run.h"
#include "groups.h"
#include "../core/parallel.h"
#include "../core/cpu.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Candidates refined at a time per query: the unit of the vector kernels
 * and of the output compaction. */
#define JOIN_CHUNK 64

/* Where one query's neighbours go. */
typedef struct join_sink {
    int64_t *idx;
    double *dist;
    int64_t room, count;
} join_sink;

typedef struct join_work {
    size_t cap;          /* candidate capacity */
    size_t d, elem;
    uint64_t *keys;      /* (row << 32 | position) per candidate */
    uint64_t *tmp;       /* sort scratch */
    uint32_t *crow;      /* rows of the candidates */
    int32_t *colcnt;     /* symmetric count: hits per candidate */
    void *cx;            /* cap x d coordinates by dimension, or NULL */
    int soa;
    join_hit *kept;      /* hits kept by this thread (see join_hits) */
    size_t nkept, capkept;
    int keep;            /* keep hits in this pass */
    size_t *taken;       /* hits kept by all threads, against limit */
    size_t limit;
    join_sink *sinks;    /* per query of a group (fill) */
    int64_t *hits;       /* per query of a group (count) */
    uint32_t *forest;    /* per query of a group (components: see
                            join_forest_find) */
    uint32_t hit_row[JOIN_CHUNK];
    double hit_d2[JOIN_CHUNK];
    grove__join_groups groups; /* the group search's (gather_t.h) */
} join_work;

/* A components pass's query group for the group shortcuts: its rows and
 * the pass's link2. */
typedef struct join_shortcut {
    const join_connect *connect;
    const uint32_t *rows;
    size_t count;
    double link2;
} join_shortcut;

/* No root: a group whose members are not one component (yet). */
#define JOIN_NO_ROOT UINT32_MAX

/* Whether row takes part in the components pass. */
static inline int join_member(const join_connect *cn, uint32_t row)
{
    return !cn->members || cn->members[row];
}

/* Whether the members among rows[0 .. count) are one component with
 * those seen before, whose root is *root (JOIN_NO_ROOT: none yet; set to
 * the first member's). Stays true once true, as components only merge; a
 * stale root of another thread's union is still an ancestor, so the
 * answer is sound. */
static int join_members_one(const join_connect *cn, const uint32_t *rows, size_t count, uint32_t *root)
{
    for (size_t t = 0; t < count; t++) {
        if (!join_member(cn, rows[t])) continue;
        uint32_t r = grove__uf_find(cn->uf, rows[t]);
        if (*root == JOIN_NO_ROOT) *root = r;
        else if (r != *root) return 0;
    }
    return 1;
}

/* Join the members among the query group's rows and rows[0 .. count):
 * every pair between the two groups is within eps. */
static void join_connect_all(const join_shortcut *cut, const uint32_t *rows, size_t count)
{
    const join_connect *cn = cut->connect;
    uint32_t first = JOIN_NO_ROOT;
    for (int side = 0; side < 2; side++)
        for (size_t t = 0; t < (side ? count : cut->count); t++) {
            uint32_t row = (side ? rows : cut->rows)[t];
            if (!join_member(cn, row)) continue;
            if (first == JOIN_NO_ROOT) first = row;
            else grove__uf_union(cn->uf, first, row);
        }
}

/* A forest over one group's positions (parent up[i] <= i): the root of i,
 * halving the path. */
static uint32_t join_forest_find(uint32_t *up, uint32_t i)
{
    while (up[i] != i) {
        up[i] = up[up[i]];
        i = up[i];
    }
    return i;
}

/* Join the trees of i and j, the larger root under the smaller. */
static void join_forest_union(uint32_t *up, uint32_t i, uint32_t j)
{
    i = join_forest_find(up, i);
    j = join_forest_find(up, j);
    if (i < j) up[j] = i;
    else up[i] = j;
}

static void join_work_free(join_work *w)
{
    grove__free(w->keys);
    grove__free(w->tmp);
    grove__free(w->crow);
    grove__free(w->colcnt);
    grove__free(w->cx);
    grove__free(w->sinks);
    grove__free(w->hits);
    grove__free(w->forest);
    grove__free(w->kept);
    grove__join_groups_free(&w->groups);
}

void grove__join_hits_free(join_hits *hits)
{
    grove__free(hits->hit);
    hits->hit = NULL;
    hits->count = 0;
    hits->complete = 0;
}

/* Keep one hit; past the limit (or out of memory) this thread stops
 * keeping, and the run sees the hits are incomplete. */
static void join_keep(join_work *w, uint32_t pos, uint32_t row, double d2)
{
    size_t taken;
#pragma omp atomic capture
    taken = (*w->taken)++;
    if (taken >= w->limit) {
        w->keep = 0;
        return;
    }
    if (w->nkept == w->capkept) {
        size_t cap = w->capkept ? 2 * w->capkept : 4096;
        join_hit *grown = grove__realloc(w->kept, cap * sizeof *grown, "join kept hits");
        if (!grown) {
            w->keep = 0;
#pragma omp atomic write
            *w->taken = SIZE_MAX / 2; /* marks the set incomplete */
            return;
        }
        w->kept = grown;
        w->capkept = cap;
    }
    w->kept[w->nkept++] = (join_hit){pos, row, d2};
}

/* Scratch for one thread: empty candidate arrays, per-query state for
 * groups of Q. */
static grove_status join_work_init(join_work *w, const grove_index *D, const grove_index *Q)
{
    memset(w, 0, sizeof *w);
    w->d = D->tree.d;
    w->elem = grove_dtype_size(D->tree.dtype);
    w->soa = D->xs != NULL;
    w->sinks = grove__malloc(Q->leaf * sizeof *w->sinks, "join query state");
    w->hits = grove__malloc(Q->leaf * sizeof *w->hits, "join query state");
    w->forest = grove__malloc(Q->leaf * sizeof *w->forest, "join query state");
    if (w->sinks && w->hits && w->forest) return GROVE_OK;
    join_work_free(w);
    memset(w, 0, sizeof *w);
    return GROVE_OUT_OF_MEMORY;
}

/* Room for `need` candidates (rounded up to whole chunks, so the vector
 * kernels may read a chunk past the last candidate). */
static grove_status join_reserve(join_work *w, size_t need)
{
    if (need <= w->cap) return GROVE_OK;
    size_t cap = need > 2 * w->cap ? need : 2 * w->cap;
    cap = (cap + JOIN_CHUNK - 1) / JOIN_CHUNK * JOIN_CHUNK;
    uint64_t *keys = grove__realloc(w->keys, cap * sizeof *keys, "join candidates");
    if (keys) w->keys = keys;
    uint64_t *tmp = grove__realloc(w->tmp, cap * sizeof *tmp, "join candidates");
    if (tmp) w->tmp = tmp;
    if (!keys || !tmp) return GROVE_OUT_OF_MEMORY;
    /* The per-candidate arrays are rebuilt per group: no need to keep them.
     * Until they all exist the capacity is 0, so a later group (the loop
     * goes on after a failure) asks again instead of using them. */
    grove__free(w->crow);
    grove__free(w->colcnt);
    grove__free(w->cx);
    w->cap = 0;
    w->crow = grove__malloc(cap * sizeof *w->crow, "join candidates");
    w->colcnt = grove__malloc(cap * sizeof *w->colcnt, "join candidates");
    w->cx = w->soa ? grove__calloc(cap * w->d, w->elem, "join candidates") : NULL;
    if (!w->crow || !w->colcnt || (w->soa && !w->cx)) return GROVE_OUT_OF_MEMORY;
    w->cap = cap;
    return GROVE_OK;
}

/* Sort keys by row (the high word), LSD radix over the bits rows of n
 * points use; short lists by insertion. Rows are distinct. */
static void join_sort_keys(join_work *w, size_t count, size_t n)
{
    uint64_t *a = w->keys, *b = w->tmp;
    if (count < 48) {
        for (size_t i = 1; i < count; i++) {
            uint64_t v = a[i];
            size_t k = i;
            while (k > 0 && a[k - 1] > v) {
                a[k] = a[k - 1];
                k--;
            }
            a[k] = v;
        }
        return;
    }
    unsigned bits = 1;
    while (bits < 32 && ((uint64_t)1 << bits) < n) bits++;
    unsigned passes = (bits + 10) / 11, digit = (bits + passes - 1) / passes;
    size_t hist[1 << 11];
    for (unsigned p = 0, shift = 32; p < passes; p++, shift += digit) {
        size_t buckets = (size_t)1 << digit;
        memset(hist, 0, buckets * sizeof *hist);
        for (size_t i = 0; i < count; i++) hist[(a[i] >> shift) & (buckets - 1)]++;
        for (size_t k = 0, sum = 0; k < buckets; k++) {
            size_t c = hist[k];
            hist[k] = sum;
            sum += c;
        }
        for (size_t i = 0; i < count; i++) b[hist[(a[i] >> shift) & (buckets - 1)]++] = a[i];
        uint64_t *t = a;
        a = b;
        b = t;
    }
    if (a != w->keys) memcpy(w->keys, a, count * sizeof *a);
}

/* First position p in [lo, hi) with rows[p] >= row (rows ascending). */
static size_t join_lower_row(const uint32_t *rows, size_t lo, size_t hi, size_t row)
{
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (rows[mid] < row) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* Open query row's CSR slice for appending. */
static void join_sink_open(const join_pass *pass, uint32_t row, join_sink *s)
{
    const int64_t *o = pass->offsets + (row - pass->row0);
    s->count = 0;
    s->room = o[1] - o[0];
    s->idx = pass->indices + o[0];
    s->dist = pass->distances ? pass->distances + o[0] : NULL;
}

/* Append k neighbours; refuses to pass the end of the query's slice. The
 * distances of sums that underflowed are mended after the query
 * (FN(exact_distances)). */
static grove_status join_sink_put(join_sink *s, const uint32_t *rows, const double *d2, size_t k)
{
    if ((int64_t)k > s->room - s->count) return GROVE_INVALID_ARGUMENT;
    /* Locals, or every store would make the compiler reload s's fields. */
    int64_t *restrict idx = s->idx + s->count;
    double *restrict dist = s->dist ? s->dist + s->count : NULL;
    for (size_t i = 0; i < k; i++) idx[i] = rows[i];
    if (dist)
        for (size_t i = 0; i < k; i++) dist[i] = sqrt(d2[i]);
    s->count += (int64_t)k;
    return GROVE_OK;
}

#define JOIN_TEMPLATE "join_t.h"
#include "instances.h"
#define JOIN_TEMPLATE "connect_t.h"
#include "instances.h"

/* One instance of the group kernels (dtype x metric). */
typedef struct join_kernels {
    grove_status (*count_self)(const grove_index *, size_t, join_work *, const join_pass *, int64_t *);
    grove_status (*mirror_self)(const grove_index *, size_t, join_work *, const join_pass *, int64_t *);
    grove_status (*group)(const grove_index *, const grove_index *, size_t, join_work *, const join_pass *);
    grove_status (*connect_self)(const grove_index *, size_t, join_work *, const join_pass *);
} join_kernels;

static const join_kernels JOIN_KERNELS[2][2] = {
    {{count_self_group_f64, mirror_self_group_f64, join_group_f64, connect_self_group_f64},
     {count_self_group_f64p, mirror_self_group_f64p, join_group_f64p, connect_self_group_f64p}},
    {{count_self_group_f32, mirror_self_group_f32, join_group_f32, connect_self_group_f32},
     {count_self_group_f32p, mirror_self_group_f32p, join_group_f32p, connect_self_group_f32p}},
};

static int row_dist_cmp(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

void grove__join_sort_slice(int64_t *idx, double *dist, size_t m, int64_t *pairs)
{
    for (size_t i = 0; i < m; i++) {
        pairs[2 * i] = idx[i];
        if (dist) memcpy(&pairs[2 * i + 1], &dist[i], sizeof *dist);
    }
    qsort(pairs, m, 2 * sizeof *pairs, row_dist_cmp);
    for (size_t i = 0; i < m; i++) {
        idx[i] = pairs[2 * i];
        if (dist) memcpy(&dist[i], &pairs[2 * i + 1], sizeof *dist);
    }
}

/* After a mirrored fill: every slice must be exactly full; then sort each
 * by row, distances alongside. */
static grove_status join_sort_slices(const grove_index *D, const join_pass *pass, const int64_t *filled, int threads)
{
    int bad = 0;
#pragma omp parallel num_threads(threads) reduction(| : bad)
    {
        /* (row, distance bits) pairs for one slice at a time. */
        int64_t *pairs = NULL;
        size_t cap = 0;
#pragma omp for schedule(dynamic, 256)
        for (size_t p = 0; p < D->tree.n; p++) {
            const int64_t *o = pass->offsets + D->tree.perm[p];
            size_t m = (size_t)(o[1] - o[0]);
            if (filled[p] != o[1] - o[0]) bad = 1;
            if (bad || m < 2) continue;
            int64_t *idx = pass->indices + o[0];
            double *dist = pass->distances ? pass->distances + o[0] : NULL;
            if (m > cap) {
                int64_t *grown = grove__realloc(pairs, 2 * m * sizeof *pairs, "join slice sort");
                if (!grown) {
                    bad = 2;
                    continue;
                }
                pairs = grown;
                cap = m;
            }
            grove__join_sort_slice(idx, dist, m, pairs);
        }
        grove__free(pairs);
    }
    return bad & 2 ? GROVE_OUT_OF_MEMORY : bad ? GROVE_INVALID_ARGUMENT : GROVE_OK;
}

/* Write the kept hits into their slices (a fill after a count that kept
 * them all). */
static grove_status join_replay(const grove_index *D, const join_pass *pass, const join_hits *hits, int64_t *cursor)
{
    for (size_t h = 0; h < hits->count; h++) {
        const join_hit *e = &hits->hit[h];
        const int64_t *o = pass->offsets + D->tree.perm[e->pos];
        int64_t slot = cursor[e->pos]++;
        if (slot >= o[1] - o[0]) return GROVE_INVALID_ARGUMENT;
        pass->indices[o[0] + slot] = e->row;
        if (pass->distances) pass->distances[o[0] + slot] = grove__key_dist(e->d2);
    }
    return GROVE_OK;
}

/* The message for a failed run. */
static grove_status join_failed(grove_status status)
{
    if (status == GROVE_CANCELLED) return grove__fail(GROVE_CANCELLED, "join: cancelled");
    if (status == GROVE_OUT_OF_MEMORY)
        return grove__fail(GROVE_OUT_OF_MEMORY, "join: out of memory for the candidate scratch");
    return grove__fail(GROVE_INVALID_ARGUMENT, "join fill: offsets disagree with the counts");
}

grove_status grove__join_run(const grove_index *D, const grove_index *Q, join_pass *pass,
                             const grove_options *options, const char *stage)
{
    size_t groups = Q->nleaves;
    if (groups == 0) return GROVE_OK;
    int threads = grove__threads_for(grove__options(options).threads, grove__join_work(D, Q));
    /* Blocks of groups between progress reports and cancel checks: large
     * enough that the barrier after each costs nothing. */
    size_t block = groups / 64 > 1024 ? groups / 64 : 1024;
    /* A whole self-join count visits each pair of groups once (symmetric:
     * tallies per candidate); above SOA_MAX dimensions a whole self-join
     * count or fill does too, putting each hit at both ends (mirrored, then
     * sorted). cpos holds counts, or fill cursors, by tree position. */
    int whole_self = !pass->visit && !pass->connect && Q == D && pass->row0 == 0 && pass->row1 == D->tree.n;
    int connect = pass->connect != NULL;
    int mirrored = whole_self && !D->xs, symmetric = whole_self && !pass->fill && !mirrored;
    int64_t *cpos = symmetric || mirrored ? grove__calloc(D->tree.n, sizeof *cpos, "join counts by position") : NULL;
    if ((symmetric || mirrored) && !cpos) return GROVE_OUT_OF_MEMORY;
    join_hits *hits = mirrored ? pass->hits : NULL;
    if (hits && pass->fill && hits->complete) {
        /* The count kept every hit: write them out. */
        grove_status s = join_replay(D, pass, hits, cpos);
        if (s == GROVE_OK) s = join_sort_slices(D, pass, cpos, threads);
        grove__free(cpos);
        return s == GROVE_OK ? GROVE_OK : join_failed(s);
    }
    const join_kernels *kernels = &JOIN_KERNELS[D->tree.dtype == GROVE_FLOAT32][D->period != NULL];
    int keep = hits && !pass->fill && hits->limit > 0;
    size_t taken = 0;
    grove_status status = GROVE_OK;
    int stop = 0;
#pragma omp parallel num_threads(threads)
    {
        join_work w;
        if (join_work_init(&w, D, Q) != GROVE_OK) {
#pragma omp critical
            status = GROVE_OUT_OF_MEMORY;
        }
        w.keep = keep;
        w.taken = &taken;
        w.limit = keep ? hits->limit : 0;
        for (size_t b0 = 0; b0 < groups; b0 += block) {
            size_t b1 = groups - b0 > block ? b0 + block : groups;
#pragma omp for schedule(dynamic, 1)
            for (size_t g = b0; g < b1; g++) {
                if (!w.hits) continue;
                /* One read of the cancel flag per group: a block can take seconds. */
                if (grove__cancelled(options)) {
#pragma omp critical
                    if (status == GROVE_OK) status = GROVE_CANCELLED;
                    continue;
                }
                grove_status s = connect      ? kernels->connect_self(D, g, &w, pass)
                                 : symmetric  ? kernels->count_self(D, g, &w, pass, cpos)
                                 : mirrored   ? kernels->mirror_self(D, g, &w, pass, cpos)
                                              : kernels->group(D, Q, g, &w, pass);
                if (s != GROVE_OK) {
#pragma omp critical
                    if (status == GROVE_OK || s == GROVE_OUT_OF_MEMORY) status = s;
                }
            }
            /* Only the master writes `stop`, between two barriers, so every
             * thread leaves the loop after the same block. */
#pragma omp master
            {
                grove__progress(options, stage, (double)b1 / (double)groups);
                stop = status != GROVE_OK || grove__cancelled(options);
            }
#pragma omp barrier
            if (stop) break;
        }
        if (keep && w.nkept) {
#pragma omp critical
            {
                join_hit *all = grove__realloc(hits->hit, (hits->count + w.nkept) * sizeof *all, "join kept hits");
                if (all) {
                    memcpy(all + hits->count, w.kept, w.nkept * sizeof *all);
                    hits->hit = all;
                    hits->count += w.nkept;
                } else {
                    taken = SIZE_MAX / 2;
                }
            }
        }
        join_work_free(&w);
    }
    if (keep) {
        hits->complete = status == GROVE_OK && taken <= hits->limit;
        if (!hits->complete) grove__join_hits_free(hits);
    }
    if ((symmetric || (mirrored && !pass->fill)) && status == GROVE_OK) {
        int64_t self = symmetric ? pass->exclude_self : 0;
        for (size_t p = 0; p < D->tree.n; p++) pass->counts[D->tree.perm[p]] = cpos[p] - self;
    }
    if (mirrored && pass->fill && status == GROVE_OK) status = join_sort_slices(D, pass, cpos, threads);
    grove__free(cpos);
    if (status != GROVE_OK) return join_failed(status);
    if (grove__cancelled(options)) return grove__fail(GROVE_CANCELLED, "join: cancelled");
    return GROVE_OK;
}

double grove__join_exact_dist(const grove_index *D, const grove_index *Q, size_t qpos, size_t p)
{
    const void *q = (const char *)Q->tree.x + qpos * Q->tree.d * grove_dtype_size(D->tree.dtype);
    if (D->tree.dtype == GROVE_FLOAT32) return D->period ? exact_dist_f32p(D, q, p) : exact_dist_f32(D, q, p);
    return D->period ? exact_dist_f64p(D, q, p) : exact_dist_f64(D, q, p);
}

static grove_status cpu_run(void *ctx, const grove_index *D, const grove_index *Q, join_pass *pass,
                            const grove_options *options, const char *stage)
{
    (void)ctx;
    return grove__join_run(D, Q, pass, options, stage);
}

const join_engine grove__join_cpu = {cpu_run, NULL};
