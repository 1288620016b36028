/* The join's group-against-group search and refinement, instantiated per
 * coordinate type: include with T and FN(name) defined (join.c).
 *
 * Work is one query group at a time (a leaf of the query grouping): walk
 * the data kd-tree with the group's box, keeping every data group whose box
 * is within eps of it; collect those groups' points that are within eps of
 * the query box (a cheap filter in the leading dimensions); in the fill
 * pass sort them by input row, so each query's neighbours come out in
 * ascending order without a per-query sort; then refine every query of the
 * group against the candidate block. */

#include "dist_t.h"
#include "../core/twice.h"
#include "gather_t.h"

/* The components pass's group shortcut for data group k (box kbox) and
 * the query group of box qbox (see join_shortcut): 1 when every pair
 * between them is within eps (their members are joined at once), 0 when
 * they go to the distances. */
static int FN(shortcut)(const grove_index *D, uint32_t k, const T *kbox, const T *qbox, const join_shortcut *cut)
{
    const grove__node *nd = &D->tree.node[k];
    const uint32_t *rows = D->tree.perm + nd->begin;
    size_t count = nd->end - nd->begin;
    if ((double)FN(box_span2)(qbox, kbox, D->tree.dims, D->period, D->tree.d) > cut->link2) return 0;
    join_connect_all(cut, rows, count);
    return 1;
}

/* Candidates of the query box qbox: (row << 32 | position) of every data
 * point in a group (with node number >= first) whose box is within the
 * pruning radius and which is itself within it of qbox, less the groups
 * that the shortcuts take (cut, or NULL for none). Returns the count
 * (grows w->keys). */
static grove_status FN(gather_keys)(const grove_index *D, const T *qbox, double prune2, join_work *w, size_t *count,
                                    uint32_t first, const join_shortcut *cut)
{
    size_t m = D->tree.dims, ks = D->kstride, c = 0;
    const T *box = D->tree.box, *kx = D->keys, *per = D->period;
    if (FN(gather_groups)(D, qbox, prune2, first, &w->groups) != GROVE_OK) return GROVE_OUT_OF_MEMORY;
    for (size_t g = 0; g < w->groups.count; g++) {
        uint32_t k = w->groups.node[g];
        const grove__node *nd = &D->tree.node[k];
        if (cut && FN(shortcut)(D, k, box + (size_t)k * 2 * m, qbox, cut)) continue;
        if (join_reserve(w, c + (nd->end - nd->begin)) != GROVE_OK) return GROVE_OUT_OF_MEMORY;
        uint64_t *restrict keys = w->keys;
        const uint32_t *rows = D->tree.perm;
        if ((double)FN(box_far2)(box + (size_t)k * 2 * m, qbox, m, per, D->tree.d) <= prune2) {
            /* Every point of the group is within reach of the query box. */
            for (uint32_t p = nd->begin; p < nd->end; p++) keys[c++] = (uint64_t)rows[p] << 32 | p;
            continue;
        }
        for (uint32_t p = nd->begin; p < nd->end; p++) {
            keys[c] = (uint64_t)rows[p] << 32 | p;
            c += (double)FN(box_point2)(qbox, kx + (size_t)p * ks, m, per) <= prune2;
        }
    }
    *count = c;
    return GROVE_OK;
}

/* The candidates' rows, and up to SOA_MAX dimensions their coordinates by
 * dimension: cx[j * cap + c]. */
static void FN(gather_candidates)(const grove_index *D, join_work *w, size_t count)
{
    size_t n = D->tree.n, d = D->tree.d, cap = w->cap;
    const T *xs = D->xs;
    T *cx = w->cx;
    if (count == 0) return; /* the scratch may not exist yet */
    for (size_t c = 0; c < count; c++) w->crow[c] = (uint32_t)(w->keys[c] >> 32);
    for (size_t j = 0; xs && j < d; j++) {
        const T *col = xs + j * n;
        T *dst = cx + j * cap;
        for (size_t c = 0; c < count; c++) dst[c] = col[(uint32_t)w->keys[c]];
    }
}

/* Squared distances from q to entries [c0, c0 + len) of a by-dimension
 * block (dimension j at cx + j * cap; dimensions summed in order; minimum
 * images in the periodic instance, see dist_t.h). */
static inline GROVE__ALWAYS_INLINE void FN(span_soa)(const T *cx, size_t cap, size_t c0, size_t len, const T *q,
                                                     size_t d, const T *per, T *acc)
{
    for (size_t c = 0; c < len; c++) acc[c] = 0;
    for (size_t j = 0; j < d; j++) {
        T qj = q[j];
        const T *col = cx + j * cap + c0;
#if JOIN_PERIODIC
        T len_j = per[j], half = per[d + j];
        for (size_t c = 0; c < len; c++) {
            T t = qj - col[c];
            t = t < 0 ? -t : t;
            t = t > half ? len_j - t : t;
            acc[c] += t * t;
        }
#else
        (void)per;
        for (size_t c = 0; c < len; c++) {
            T t = qj - col[c];
            acc[c] += t * t;
        }
#endif
    }
}

/* The same for candidates [c0, c0 + JOIN_CHUNK) of the by-dimension
 * candidate block (a fixed trip count the compiler unrolls). */
static inline GROVE__ALWAYS_INLINE void FN(chunk_soa)(const T *cx, size_t cap, size_t c0, const T *q, size_t d,
                                                      const T *per, T *acc)
{
    FN(span_soa)(cx, cap, c0, JOIN_CHUNK, q, d, per, acc);
}

/* Squared distances from q (keys qk) to candidates [c0, c0 + JOIN_CHUNK)
 * into acc. Above SOA_MAX, values beyond eps2 may be partial sums, and a
 * candidate whose keys alone put it beyond reach (prune2) is not refined:
 * the projected key dimensions rule out most pairs for a fraction of the
 * cost. */
static inline GROVE__ALWAYS_INLINE void FN(chunk_d2)(const grove_index *D, const join_work *w, size_t c0,
                                                     size_t count, const T *q, const T *qk, T eps2, double prune2,
                                                     T *acc)
{
    size_t d = D->tree.d;
    if (D->xs) {
#define GROVE__JOIN_CHUNK_BODY(DD) FN(chunk_soa)(w->cx, w->cap, c0, q, DD, D->period, acc)
        GROVE__DISPATCH_D(d, GROVE__JOIN_CHUNK_BODY)
#undef GROVE__JOIN_CHUNK_BODY
        return;
    }
    const T *x = D->tree.x, *kx = D->keys;
    size_t len = count - c0 < JOIN_CHUNK ? count - c0 : JOIN_CHUNK, m = D->tree.dims;
#if JOIN_PERIODIC
    /* No projected keys in a box (the keys are leading coordinates, which
     * the first lanes of the sum cover): refine every candidate. */
    (void)kx, (void)m, (void)qk, (void)prune2;
    for (size_t c = 0; c < len; c++)
        acc[c] = FN(dist2_lanes)(q, x + (size_t)(uint32_t)w->keys[c0 + c] * d, d, eps2, D->period);
#else
    for (size_t c = 0; c < len; c++) {
        size_t p = (uint32_t)w->keys[c0 + c];
        acc[c] = (double)FN(dist2)(qk, kx + p * m, m) > prune2 ? (T)INFINITY
                                                                   : FN(dist2_lanes)(q, x + p * d, d, eps2, NULL);
    }
#endif
}

/* Squared sums below the smallest normal have lost their accuracy to
 * underflow (../index/dist_key.h). The key of sum s from q to the point at
 * tree position p: s, or where it underflowed (and is no key yet: keys
 * below the smallest normal are negative) the pair's exact key. */
static inline GROVE__ALWAYS_INLINE T FN(exact_key)(const grove_index *D, T s, const T *q, size_t p)
{
    if (!(s >= 0 && s < GROVE__KEY_MIN(T))) return s;
    return FN(join_tiny2)(q, (const T *)D->tree.x + p * D->tree.d, D->tree.d, D->period);
}

/* Where eps^2 itself is below the smallest normal, a sum that underflowed
 * does not tell whether its pair is within eps: the candidates [c0, c0 +
 * len) (at tree positions keys[c] or, keys NULL, c) whose sum from q came
 * out that small get their exact keys instead. One test per chunk when
 * there are none. */
static __attribute__((noinline)) void FN(settle_low)(const grove_index *D, const uint64_t *keys, size_t c0,
                                                     size_t len, const T *q, T *acc)
{
    for (size_t c = 0; c < len; c++) acc[c] = FN(exact_key)(D, acc[c], q, keys ? (uint32_t)keys[c0 + c] : c0 + c);
}

static inline GROVE__ALWAYS_INLINE void FN(settle)(const grove_index *D, const uint64_t *keys, size_t c0, size_t len,
                                                   const T *q, T *acc)
{
    int low = 0;
    for (size_t c = 0; c < len; c++) low |= acc[c] < GROVE__KEY_MIN(T);
    if (low) FN(settle_low)(D, keys, c0, len, q, acc);
}

/* Hits among len squared distances; adds each to col[c] when col is set. */
static inline GROVE__ALWAYS_INLINE int FN(tally)(const T *acc, size_t len, T eps2, int32_t *col)
{
    int hits = 0;
    if (col)
        for (size_t c = 0; c < len; c++) {
            int hit = acc[c] <= eps2;
            col[c] += hit;
            hits += hit;
        }
    else
        for (size_t c = 0; c < len; c++) hits += acc[c] <= eps2;
    return hits;
}

/* The rows (and squared distances, if d2 is set) of the hits among len
 * candidates, in order, without row `skip`; returns how many. The mask is
 * computed apart so both loops stay simple for the compiler. */
static inline GROVE__ALWAYS_INLINE size_t FN(collect)(const T *acc, const uint32_t *rows, size_t len, T eps2,
                                                      uint32_t skip, uint32_t *out, double *d2)
{
    uint8_t mask[JOIN_CHUNK];
    for (size_t c = 0; c < len; c++) mask[c] = acc[c] <= eps2;
    size_t k = 0;
    if (d2)
        for (size_t c = 0; c < len; c++) {
            out[k] = rows[c];
            d2[k] = (double)acc[c];
            k += mask[c];
        }
    else
        for (size_t c = 0; c < len; c++) {
            out[k] = rows[c];
            k += mask[c];
        }
    for (size_t h = 0; skip != UINT32_MAX && h < k; h++)
        if (out[h] == skip) {
            for (size_t t = h + 1; t < k; t++) {
                out[t - 1] = out[t];
                if (d2) d2[t - 1] = d2[t];
            }
            k--;
            break;
        }
    return k;
}

/* The exact distance from query point q to the point at tree position p
 * of D, for a pair whose squared sum may have underflowed. */
static inline double FN(exact_dist)(const grove_index *D, const T *q, size_t p)
{
    return FN(key_dist)(FN(join_tiny2)(q, (const T *)D->tree.x + p * D->tree.d, D->tree.d, D->period));
}

/* After a fill with distances: a distance at or below the root of the
 * smallest normal (or NaN: the root of a negative key, FN(settle)) came
 * from a sum that may have underflowed, so each such one of the slice of
 * query q becomes the exact distance of its pair, whose candidate is
 * found by row (a fill sorts the count candidates by row). Rare beyond
 * the self pair (`self`: 1 when the slice holds it at a 0 that FN(settle)
 * left alone, which is exact): duplicates, very close pairs; one pass over
 * the slice otherwise. */
static __attribute__((noinline)) void FN(exact_slice)(const grove_index *D, const join_work *w, size_t count,
                                                      const T *q, const join_sink *s)
{
    double root_min = sqrt((double)GROVE__KEY_MIN(T));
    for (int64_t h = 0; h < s->count; h++) {
        if (s->dist[h] > root_min) continue;
        size_t lo = 0, hi = count;
        while (hi - lo > 1) {
            size_t mid = lo + (hi - lo) / 2;
            if ((w->keys[mid] >> 32) <= (uint64_t)s->idx[h]) lo = mid;
            else hi = mid;
        }
        s->dist[h] = FN(exact_dist)(D, q, (uint32_t)w->keys[lo]);
    }
}

static inline GROVE__ALWAYS_INLINE void FN(exact_distances)(const grove_index *D, const join_work *w, size_t count,
                                                            const T *q, const join_sink *s, int self)
{
    double root_min = sqrt((double)GROVE__KEY_MIN(T));
    int64_t low = 0;
    for (int64_t h = 0; h < s->count; h++) low += !(s->dist[h] > root_min);
    if (low > self) FN(exact_slice)(D, w, count, q, s);
}

/* Refine queries [qa, qz) of Q against the candidates in w, by pass mode:
 * count into pass->counts (by row), count symmetrically (colcnt non-NULL:
 * also tally each candidate's hits, see FN(count_self_group)), append
 * each query's neighbours, in candidate order, to its CSR slice, or hand
 * them, chunk by chunk, to the visitor (the queries it asks for). Rows of
 * many dimensions go in chunks, each met by every query of the group while
 * it is in cache (they would otherwise stream from memory once per query);
 * chunks in order keep every list ascending. */
GROVE__BODY() grove_status GROVE__PASTE(FN(refine), _body)(const grove_index *D, const grove_index *Q, size_t qa,
                                                           size_t qz, join_work *w, size_t count,
                                                           const join_pass *pass, int32_t *colcnt, int64_t *rowcnt)
{
    size_t d = D->tree.d, nqa = qz - qa;
    T eps2 = (T)pass->eps2, acc[JOIN_CHUNK];
    int exact = eps2 < GROVE__KEY_MIN(T);
    join_sink *sinks = w->sinks;
    int64_t *hits = w->hits;
    for (size_t i = 0; i < nqa; i++) {
        hits[i] = 0;
        if (pass->fill) join_sink_open(pass, Q->tree.perm[qa + i], &sinks[i]);
    }
    /* By-dimension candidates are small: every query takes them all. */
    size_t block = D->xs ? count : JOIN_CHUNK;
    const grove__join_visitor *visit = pass->visit;
    for (size_t b0 = 0; b0 < count; b0 += block)
        for (size_t i = 0; i < nqa; i++) {
            const T *q = (const T *)Q->tree.x + (qa + i) * d, *qk = (const T *)Q->keys + (qa + i) * Q->kstride;
            uint32_t qrow = Q->tree.perm[qa + i], skip = pass->exclude_self ? qrow : UINT32_MAX;
            if (visit && visit->queries && !visit->queries[qrow]) continue;
            for (size_t c0 = b0; c0 < count && c0 < b0 + block; c0 += JOIN_CHUNK) {
                size_t len = count - c0 < JOIN_CHUNK ? count - c0 : JOIN_CHUNK;
                FN(chunk_d2)(D, w, c0, count, q, qk, eps2, pass->prune2, acc);
                if (exact) FN(settle)(D, w->keys, c0, len, q, acc);
                if (visit) {
                    size_t k = FN(collect)(acc, w->crow + c0, len, eps2, skip, w->hit_row, NULL);
                    if (k && visit->fn(visit->user, qrow, w->hit_row, k)) return GROVE_CANCELLED;
                    continue;
                }
                if (!pass->fill) {
                    hits[i] += FN(tally)(acc, len, eps2, colcnt ? colcnt + c0 : NULL);
                    continue;
                }
                size_t k = FN(collect)(acc, w->crow + c0, len, eps2, skip, w->hit_row,
                                       sinks[i].dist ? w->hit_d2 : NULL);
                if (join_sink_put(&sinks[i], w->hit_row, w->hit_d2, k) != GROVE_OK) return GROVE_INVALID_ARGUMENT;
            }
        }
    for (size_t i = 0; i < nqa && !visit; i++) {
        if (pass->fill) {
            if (sinks[i].count != sinks[i].room) return GROVE_INVALID_ARGUMENT;
            if (sinks[i].dist)
                FN(exact_distances)(D, w, count, (const T *)Q->tree.x + (qa + i) * d, &sinks[i],
                                    Q == D && !pass->exclude_self && !exact);
        } else if (rowcnt) {
#pragma omp atomic update
            rowcnt[qa + i] += hits[i];
        } else {
            /* A self-join query always finds itself. */
            pass->counts[Q->tree.perm[qa + i] - pass->row0] = hits[i] - pass->exclude_self;
        }
    }
    return GROVE_OK;
}

/* The refinement for the baseline and for x86-64-v3 (its distance loops
 * vectorise with AVX2; no FMA, so both round alike), the best one
 * grove__cpu allows. */
GROVE__TWICE(grove_status, FN(refine),
             (const grove_index *D, const grove_index *Q, size_t qa, size_t qz, join_work *w, size_t count,
              const join_pass *pass, int32_t *colcnt, int64_t *rowcnt),
             (D, Q, qa, qz, w, count, pass, colcnt, rowcnt))

/* One query group: its queries with rows in [pass->row0, pass->row1). */
static grove_status FN(join_group)(const grove_index *D, const grove_index *Q, size_t leaf, join_work *w,
                                   const join_pass *pass)
{
    const grove__node *nd = &Q->tree.node[Q->leaves[leaf]];
    size_t qa = join_lower_row(Q->tree.perm, nd->begin, nd->end, pass->row0);
    size_t qz = join_lower_row(Q->tree.perm, qa, nd->end, pass->row1);
    if (qa == qz) return GROVE_OK;
    const uint8_t *asked = pass->visit ? pass->visit->queries : NULL;
    if (asked) {
        /* A visit that asks for none of this group's queries skips it. */
        size_t a = qa;
        while (a < qz && !asked[Q->tree.perm[a]]) a++;
        if (a == qz) return GROVE_OK;
    }
    const T *qbox = (const T *)Q->tree.box + (size_t)Q->leaves[leaf] * 2 * Q->tree.dims;
    size_t count = 0;
    grove_status s = FN(gather_keys)(D, qbox, pass->prune2, w, &count, 0, NULL);
    if (s != GROVE_OK) return s;
    if (pass->fill) join_sort_keys(w, count, D->tree.n);
    FN(gather_candidates)(D, w, count);
    return GROVE__PICK(grove__cpu_v3(grove__cpu()), FN(refine))(D, Q, qa, qz, w, count, pass, NULL, NULL);
}

/* Self-join count pass for group `leaf`, visiting each unordered pair of
 * groups once: candidates come only from this group and later ones (leaf
 * order is node order), and every hit counts for both ends, in counts by
 * tree position (cpos, shared: atomic adds). Halves the distance work. */
static grove_status FN(count_self_group)(const grove_index *D, size_t leaf, join_work *w, const join_pass *pass,
                                         int64_t *cpos)
{
    uint32_t self = D->leaves[leaf];
    const grove__node *nd = &D->tree.node[self];
    const T *qbox = (const T *)D->tree.box + (size_t)self * 2 * D->tree.dims;
    size_t count = 0;
    grove_status s = FN(gather_keys)(D, qbox, pass->prune2, w, &count, self, NULL);
    if (s != GROVE_OK) return s;
    FN(gather_candidates)(D, w, count);
    memset(w->colcnt, 0, count * sizeof *w->colcnt);
    s = GROVE__PICK(grove__cpu_v3(grove__cpu()), FN(refine))(D, D, nd->begin, nd->end, w, count, pass, w->colcnt, cpos);
    /* Pairs inside the group were counted from both ends already. */
    for (size_t c = 0; s == GROVE_OK && c < count; c++) {
        uint32_t p = (uint32_t)w->keys[c];
        if (p >= nd->begin && p < nd->end) continue;
#pragma omp atomic update
        cpos[p] += w->colcnt[c];
    }
    return s;
}

/* Put row `row` at squared distance key d2 into the slice of the query at
 * tree position p (a claimed slot of its cursor); 0 when the slice is
 * full, which means the offsets disagree with the counts. A count pass
 * only advances the cursor (the count) and keeps the hit if asked. */
static inline int FN(mirror_put)(const join_pass *pass, const grove_index *D, join_work *w, int64_t *cursor,
                                 size_t p, uint32_t row, T d2)
{
    int64_t slot;
#pragma omp atomic capture
    slot = cursor[p]++;
    if (!pass->fill) {
        if (w->keep) join_keep(w, (uint32_t)p, row, FN(key_wide)(d2));
        return 1;
    }
    const int64_t *o = pass->offsets + D->tree.perm[p];
    if (slot >= o[1] - o[0]) return 0;
    pass->indices[o[0] + slot] = row;
    if (pass->distances) pass->distances[o[0] + slot] = FN(key_dist)(d2);
    return 1;
}

/* Whole self-join count or fill for group `leaf` above SOA_MAX dimensions,
 * where distances cost far more than sorting: each pair of groups is
 * visited once (like FN(count_self_group)) and every hit goes to both
 * ends, by slots claimed from per-position cursors (cursor: counts, or
 * fill positions); the filled slices are sorted afterwards
 * (join_sort_slices), so the result does not depend on the schedule. */
static grove_status FN(mirror_self_group)(const grove_index *D, size_t leaf, join_work *w, const join_pass *pass,
                                          int64_t *cursor)
{
    uint32_t self = D->leaves[leaf];
    const grove__node *nd = &D->tree.node[self];
    const T *qbox = (const T *)D->tree.box + (size_t)self * 2 * D->tree.dims;
    size_t count = 0, d = D->tree.d;
    grove_status s = FN(gather_keys)(D, qbox, pass->prune2, w, &count, self, NULL);
    if (s != GROVE_OK) return s;
    FN(gather_candidates)(D, w, count);
    T eps2 = (T)pass->eps2, acc[JOIN_CHUNK];
    int ok = 1, exact = eps2 < GROVE__KEY_MIN(T);
    for (size_t c0 = 0; c0 < count; c0 += JOIN_CHUNK)
        for (size_t a = nd->begin; a < nd->end; a++) {
            const T *q = (const T *)D->tree.x + a * d, *qk = (const T *)D->keys + a * D->kstride;
            uint32_t qrow = D->tree.perm[a];
            FN(chunk_d2)(D, w, c0, count, q, qk, eps2, pass->prune2, acc);
            size_t len = count - c0 < JOIN_CHUNK ? count - c0 : JOIN_CHUNK;
            if (exact) FN(settle)(D, w->keys, c0, len, q, acc);
            for (size_t c = 0; c < len; c++) {
                if (!(acc[c] <= eps2)) continue;
                uint32_t p = (uint32_t)w->keys[c0 + c], row = w->crow[c0 + c];
                if (pass->exclude_self && row == qrow) continue;
                T key = FN(exact_key)(D, acc[c], q, p);
                ok &= FN(mirror_put)(pass, D, w, cursor, a, row, key);
                /* Pairs inside the group are met from both ends already. */
                if (p < nd->begin || p >= nd->end) ok &= FN(mirror_put)(pass, D, w, cursor, p, qrow, key);
            }
        }
    return ok ? GROVE_OK : GROVE_INVALID_ARGUMENT;
}
