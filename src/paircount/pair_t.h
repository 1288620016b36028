/* The pair count kernels, instantiated per coordinate type and metric:
 * include with T, FN(name) and JOIN_PERIODIC defined (../join/instances.h,
 * from run.c).
 *
 * One query group at a time: the group search (gather_t.h) lists the data
 * groups within reach of the query group's box; then each query takes the
 * listed groups whose box is within reach of the query itself (one vector
 * loop over their boxes by dimension), and runs its pairs with each such
 * group's points PC_CHUNK at a time:
 *   1. squared distances, in a vector loop;
 *   2. each distance's slot (pc_bins), by the lookup;
 *   3. the slots counted in the thread's histogram, PC_LANES interleaved
 *      copies so that consecutive pairs in one bin do not wait on each
 *      other, and the weight products added to the query group's partial
 *      sums, lane (offset in the run) mod PC_LANES.
 * No pair is kept. With bins in r, an AVX-512 machine runs the three steps
 * in registers instead (span_avx512.c), with the same compares and the
 * same order of additions. Distances are summed over the input dimensions
 * in input order in T, as Corrfunc sums dx*dx + dy*dy + dz*dz (the index
 * stores the dimensions in another order; pc_bins.dim maps them back).
 * The body is compiled for the baseline, x86-64-v3 and AVX-512, none with
 * fused multiply-adds: the same bits everywhere. */

#include "../join/dist_t.h"
#include "../join/gather_t.h"

/* |qj - c| in one dimension, in a periodic dimension of length len the
 * nearer image, min(t, len - t): the index's minimum image (dist_t.h) in a
 * form that vectorises (len - t is exact when t > len / 2, and at least
 * len / 2 otherwise). Outside a box the signed difference (its square is
 * all that is used). */
static inline GROVE__ALWAYS_INLINE T FN(pc_diff)(T qj, T c, T len)
{
    T t = qj - c;
#if JOIN_PERIODIC
    t = t < 0 ? -t : t;
    T round = len - t;
    return round < t ? round : t;
#else
    (void)len;
    return t;
#endif
}

/* Into th->pass, the indices g of the listed groups (boxes lo, hi by
 * dimension, cap apart) whose box is within prune (in T, rounded up) of
 * q; returns how many. */
static inline GROVE__ALWAYS_INLINE size_t FN(pc_near_groups)(const pc_thread *th, size_t count, size_t m,
                                                             const T *q, const T *per, T prune)
{
    const T *lo = (const T *)th->lo, *hi = (const T *)th->hi;
    T *s = (T *)th->gap2;
    size_t cap = th->cap_g, np = 0;
    for (size_t g = 0; g < count; g++) s[g] = 0;
    for (size_t j = 0; j < m; j++) {
        const T *l = lo + j * cap, *h = hi + j * cap;
        T x = q[j];
#if JOIN_PERIODIC
        T len = per[j];
#else
        (void)per;
#endif
        for (size_t g = 0; g < count; g++) {
            T below = l[g] - x, above = x - h[g];
#if JOIN_PERIODIC
            /* FN(wrap_gap) of dist_t.h without branches: at most one of
             * below and above is > 0, and the gap round the box is > 0. */
            T round_up = x + len - h[g], round_down = l[g] + len - x;
            T up = below < round_up ? below : round_up, down = above < round_down ? above : round_down;
            T t = up > down ? up : down;
            t = t > 0 ? t : 0;
#else
            T t = below > above ? below : above;
            t = t > 0 ? t : 0;
#endif
            s[g] += t * t;
        }
    }
    uint32_t *pass = th->pass;
    for (size_t g = 0; g < count; g++) {
        pass[np] = (uint32_t)g;
        np += s[g] <= prune;
    }
    return np;
}

/* Step 1 for positions [p0, p1) of D (at most PC_CHUNK) into r2 (and dz). */
static inline GROVE__ALWAYS_INLINE void FN(pc_distances)(const grove_index *D, const pc_bins *b, const T *q,
                                                         size_t dr, size_t p0, size_t p1, T *restrict r2,
                                                         T *restrict dz)
{
    const T *xs = (const T *)D->xs, *per = (const T *)D->period;
    size_t n = D->tree.n, len = p1 - p0;
    for (size_t k = 0; k < dr; k++) {
        size_t j = b->dim[k];
        const T *col = xs + j * n + p0;
        T qj = q[j], len_j = per ? per[j] : 0;
        if (k == 0)
            for (size_t c = 0; c < len; c++) {
                T t = FN(pc_diff)(qj, col[c], len_j);
                r2[c] = t * t;
            }
        else
            for (size_t c = 0; c < len; c++) {
                T t = FN(pc_diff)(qj, col[c], len_j);
                r2[c] += t * t;
            }
    }
    if (!b->rppi) return;
    size_t j = b->dim[dr];
    const T *col = xs + j * n + p0;
    T qj = q[j], len_j = per ? per[j] : 0;
    for (size_t c = 0; c < len; c++) {
        T t = FN(pc_diff)(qj, col[c], len_j);
        dz[c] = t < 0 ? -t : t;
    }
}

/* The number of squared edges at or below r2 (0 .. nrp + 1): the lookup's
 * lower bound raised by PC_FIX compares, which bins.c makes enough unless
 * it sets b->slow (then `slow` goes on while r2 reaches the next edge; the
 * last edge is +infinity). */
static inline GROVE__ALWAYS_INLINE uint32_t FN(pc_edges_below)(const pc_bins *b, T r2, int slow)
{
    uint64_t key;
    if (sizeof(T) == sizeof(uint32_t)) {
        uint32_t u;
        memcpy(&u, &r2, sizeof u);
        key = u;
    } else {
        memcpy(&key, &r2, sizeof key);
    }
    key >>= b->shift;
    uint64_t cell = key < b->base ? 0 : key - b->base + 1;
    cell = cell <= b->cells ? cell : b->cells + 1;
    uint32_t k = b->lut[cell];
    const T *e2 = (const T *)b->e2;
    for (int f = 0; f < PC_FIX; f++) k += r2 >= e2[k];
    while (slow && r2 >= e2[k]) k++;
    return k;
}

/* Step 2 for one kind of lookup (slow: see FN(pc_edges_below)). */
static inline GROVE__ALWAYS_INLINE void FN(pc_slots_by)(const pc_bins *b, const T *restrict r2,
                                                        const T *restrict dz, size_t count, uint32_t *restrict slot,
                                                        int slow)
{
    if (!b->rppi) {
        for (size_t i = 0; i < count; i++) slot[i] = FN(pc_edges_below)(b, r2[i], slow);
        return;
    }
    uint32_t npi = (uint32_t)b->npi, beyond = (uint32_t)b->slots - 1;
    T pimax = (T)b->pimax, inv_dpi = (T)b->inv_dpi;
    for (size_t i = 0; i < count; i++) {
        uint32_t k = FN(pc_edges_below)(b, r2[i], slow);
        /* Corrfunc's pi bin, (int)(|dz| / dpi), for |dz| < pimax only. */
        int32_t j = dz[i] < pimax ? (int32_t)(dz[i] * inv_dpi) : (int32_t)npi;
        slot[i] = (uint32_t)j < npi ? k * npi + (uint32_t)j : beyond;
    }
}

/* Step 2: slot[i] for count pairs (r2[i], dz[i]). */
static inline GROVE__ALWAYS_INLINE void FN(pc_slots)(const pc_bins *b, const T *restrict r2, const T *restrict dz,
                                                     size_t count, uint32_t *restrict slot)
{
    if (b->slow) FN(pc_slots_by)(b, r2, dz, count, slot, 1);
    else FN(pc_slots_by)(b, r2, dz, count, slot, 0);
}

/* prune2 in T, rounded up: a box within prune2 is within it in T. */
static inline T FN(pc_prune)(double prune2)
{
    T t = (T)prune2;
    if ((double)t < prune2) t = sizeof(T) == sizeof(float) ? (T)nextafterf((float)t, INFINITY) : (T)nextafter((double)t, INFINITY);
    return t;
}

/* Step 3: count the slots (and sum wq times the candidates' weights wc,
 * the first at offset `offset` of its run). */
static inline GROVE__ALWAYS_INLINE void FN(pc_tally)(pc_thread *th, const uint32_t *restrict slot, size_t count,
                                                     size_t offset, double wq, const double *restrict wc)
{
    uint64_t *restrict hist = th->count;
    for (size_t i = 0; i < count; i++) hist[(size_t)slot[i] * PC_LANES + ((offset + i) & (PC_LANES - 1))]++;
    if (!wc) return;
    double *restrict part = th->part;
    for (size_t i = 0; i < count; i++)
        part[(size_t)slot[i] * PC_LANES + ((offset + i) & (PC_LANES - 1))] += wq * wc[i];
}

/* The pairs of a query q with D's positions [p0, p1), PC_CHUNK at a time. */
static inline GROVE__ALWAYS_INLINE void FN(pc_run)(const pc_pass *ps, pc_thread *th, const T *q, size_t dr,
                                                   size_t p0, size_t p1, double wq)
{
    T r2[PC_CHUNK], dz[PC_CHUNK];
    uint32_t slot[PC_CHUNK];
    for (size_t c0 = p0; c0 < p1; c0 += PC_CHUNK) {
        size_t c1 = p1 - c0 < PC_CHUNK ? p1 : c0 + PC_CHUNK;
#define PC_DIST_BODY(DR) FN(pc_distances)(ps->D, ps->bins, q, DR, c0, c1, r2, dz)
        GROVE__DISPATCH_D(dr, PC_DIST_BODY)
#undef PC_DIST_BODY
        FN(pc_slots)(ps->bins, r2, dz, c1 - c0, slot);
        FN(pc_tally)(th, slot, c1 - c0, c0 - p0, wq, ps->wD ? ps->wD + c0 : NULL);
    }
}

/* The vector kernel's view of query a (its coordinates by input
 * dimension into qin, periodic lengths into len). */
static inline GROVE__ALWAYS_INLINE void FN(pc_span_init)(const pc_pass *ps, pc_thread *th, pc_span *sp, size_t dr,
                                                         T *qin, T *len)
{
    const grove_index *D = ps->D;
    const T *xs = (const T *)D->xs, *per = (const T *)D->period;
    for (size_t k = 0; k < dr; k++) {
        sp->col[k] = xs + ps->bins->dim[k] * D->tree.n;
        if (per) len[k] = per[ps->bins->dim[k]];
    }
    sp->q = qin;
    sp->len = per ? len : NULL;
    sp->dr = dr;
    sp->nrp = ps->bins->nrp;
    sp->e2 = ps->bins->e2;
    sp->count = th->count;
    sp->part = ps->wD ? th->part : NULL;
    sp->w = ps->wD;
}

/* The pairs of query group `leaf` of Q: with every listed data group, in
 * an autocorrelation only those after it and the later points of its own
 * (each unordered pair once). query: the vector kernel for bins in r, or
 * NULL. */
static inline GROVE__ALWAYS_INLINE grove_status FN(pc_group_body)(const pc_pass *ps, size_t leaf, pc_thread *th,
                                                                  pc_query_fn query)
{
    const grove_index *D = ps->D, *Q = ps->Q;
    const pc_bins *b = ps->bins;
    size_t d = D->tree.d, m = D->tree.dims, dr = b->rppi ? d - 1 : d;
    uint32_t self = Q->leaves[leaf];
    const grove__node *qn = &Q->tree.node[self], *node = D->tree.node;
    const T *qbox = (const T *)Q->tree.box + (size_t)self * 2 * m, *box = (const T *)D->tree.box;
    const T *qx = (const T *)Q->tree.x, *per = (const T *)D->period;
    if (FN(gather_groups)(D, qbox, ps->prune2, ps->autocorr ? self : 0, &th->groups) != GROVE_OK)
        return GROVE_OUT_OF_MEMORY;
    size_t count = th->groups.count;
    if (count == 0) return GROVE_OK; /* no data within reach (a cross-correlation's far group) */
    if (pc_reserve_groups(th, count, m, sizeof(T)) != GROVE_OK) return GROVE_OUT_OF_MEMORY;
    /* The listed groups' boxes by dimension. */
    T *lo = (T *)th->lo, *hi = (T *)th->hi;
    for (size_t g = 0; g < count; g++) {
        const T *kb = box + (size_t)th->groups.node[g] * 2 * m;
        for (size_t j = 0; j < m; j++) {
            lo[j * th->cap_g + g] = kb[j];
            hi[j * th->cap_g + g] = kb[m + j];
        }
    }
    if (b->rppi) query = NULL;
    pc_span sp;
    T qin[GROVE__JOIN_SOA_MAX], len[GROVE__JOIN_SOA_MAX];
    if (query) FN(pc_span_init)(ps, th, &sp, dr, qin, len);
    T prune = FN(pc_prune)(ps->prune2);
    for (size_t a = qn->begin; a < qn->end; a++) {
        const T *q = qx + a * d;
        double wq = ps->wQ ? ps->wQ[a] : 0;
        size_t near = FN(pc_near_groups)(th, count, m, q, per, prune), runs = 0;
        /* The near groups' positions as runs: groups next to each other in
         * the tree are one run. */
        for (size_t t = 0; t < near;) {
            uint32_t k = th->groups.node[th->pass[t]];
            uint32_t p0 = ps->autocorr && k == self ? (uint32_t)a + 1 : node[k].begin, p1 = node[k].end;
            for (t++; t < near && node[th->groups.node[th->pass[t]]].begin == p1; t++)
                p1 = node[th->groups.node[th->pass[t]]].end;
            th->rb[runs] = p0;
            th->re[runs] = p1;
            runs += p0 < p1;
        }
        if (query) {
            for (size_t k = 0; k < dr; k++) qin[k] = q[b->dim[k]];
            sp.wq = wq;
            query(&sp, th->rb, th->re, runs);
            continue;
        }
        for (size_t r = 0; r < runs; r++) FN(pc_run)(ps, th, q, dr, th->rb[r], th->re[r], wq);
    }
    return GROVE_OK;
}

/* The body for the baseline, x86-64-v3 and AVX-512 (with its vector
 * kernel), the best that grove__cpu allows (pc_group_fn). */
static grove_status FN(pc_group_portable)(const pc_pass *ps, size_t leaf, pc_thread *th)
{
    return FN(pc_group_body)(ps, leaf, th, NULL);
}
#if GROVE__HAVE_TARGETS
GROVE__TARGET_V3 static grove_status FN(pc_group_v3)(const pc_pass *ps, size_t leaf, pc_thread *th)
{
    return FN(pc_group_body)(ps, leaf, th, NULL);
}
PC_TARGET_V4 static grove_status FN(pc_group_v4)(const pc_pass *ps, size_t leaf, pc_thread *th)
{
    return FN(pc_group_body)(ps, leaf, th,
                             sizeof(T) == sizeof(float) ? grove__pc_query_avx512_f32 : grove__pc_query_avx512_f64);
}
#endif
