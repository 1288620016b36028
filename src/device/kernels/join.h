/* The epsilon join on a device: RT-HiSS (seed 001) without RT cores, on
 * the index the host builds (src/index/search_index.c: dimensions in
 * variance order, kd-tree leaf groups, their boxes), uploaded as it is.
 * Instantiated per coordinate type and metric: T, FN(name) and
 * JOIN_PERIODIC (0 or 1) defined (all.h).
 *
 *   join_walk    one work-item per query group walks the data kd-tree
 *                with the group's box and counts (pass 1) or lists
 *                (pass 2, at the prefix sums of the counts) the data
 *                groups within the pruning radius: RT-HiSS's
 *                ray-primitive intersections;
 *   join_refine  one work-group per query group, a work-item per query:
 *                the candidate groups' points are tiled into local memory
 *                (by dimension), and every query refines them; count
 *                pass: hits per query; fill pass: each query's hits at its
 *                offset (rows and squared distances), in candidate order.
 *
 * A pair is a hit when its squared distance, computed as the CPU join
 * computes it (join_dist2 below: the same terms, order and rounding), is
 * <= eps2, so the pair sets are the CPU's exactly; the pruning only
 * decides which pairs are computed and keeps every pair the CPU's
 * pruning keeps. */
#ifndef JOIN_SOA_MAX
/* join_dist2's lanes: the term of dimension jj into lane a, eight
 * dimensions from jj into lanes 0 .. 7, and the lanes' pairwise sum. */
#define JOIN_TERM(a, jj)                                                                                     \
    {                                                                                                        \
        T t_ = FN(diff)(q[jj], p[(jj) * stride], per, d, (jj));                                              \
        a = XADD(a, XMUL(t_, t_));                                                                           \
    }
#define JOIN_LANES8(jj)                                                                                      \
    {                                                                                                        \
        JOIN_TERM(a0, jj) JOIN_TERM(a1, (jj) + 1) JOIN_TERM(a2, (jj) + 2) JOIN_TERM(a3, (jj) + 3)            \
        JOIN_TERM(a4, (jj) + 4) JOIN_TERM(a5, (jj) + 5) JOIN_TERM(a6, (jj) + 6) JOIN_TERM(a7, (jj) + 7)      \
    }
#define JOIN_COMBINE() XADD(XADD(XADD(a0, a1), XADD(a2, a3)), XADD(XADD(a4, a5), XADD(a6, a7)))
/* GROVE__JOIN_SOA_MAX (src/index/search_index.h): up to this many
 * dimensions the terms are summed in order, above in eight lanes. */
#define JOIN_SOA_MAX 16
/* The walk's stack: one entry per level of the kd-tree and one more (the
 * host checks the tree's depth against it). */
#define JOIN_STACK 64
#endif

#if JOIN_PERIODIC
/* The minimum image of a difference in stored dimension j of d (per: the
 * lengths L[0 .. d) then the halves; dist_t.h's arithmetic). */
DEVFN T FN(diff)(T a, T b, GLOBAL const T *per, u32 d, u32 j)
{
    T t = a - b;
    t = t < 0 ? -t : t;
    return t > per[d + j] ? per[j] - t : t;
}

DEVFN T FN(wrap_gap)(T below, T above, T alo, T ahi, T blo, T bhi, T len)
{
    T round_up = alo + len - bhi, round_down = blo + len - ahi;
    return below > 0 ? (below < round_up ? below : round_up) : above > 0 ? (above < round_down ? above : round_down)
                                                                         : 0;
}
#else
DEVFN T FN(diff)(T a, T b, GLOBAL const T *per, u32 d, u32 j)
{
    (void)per, (void)d, (void)j;
    return a - b;
}
#endif

/* Squared distance between boxes a and b (lo[m] then hi[m]). */
DEVFN T FN(box_box2)(GLOBAL const T *a, GLOBAL const T *b, u32 m, GLOBAL const T *per)
{
    T s = 0;
    for (u32 j = 0; j < m; j++) {
        T below = b[j] - a[m + j], above = a[j] - b[m + j];
#if JOIN_PERIODIC
        T t = FN(wrap_gap)(below, above, a[j], a[m + j], b[j], b[m + j], per[j]);
#else
        T t = below > 0 ? below : above > 0 ? above : 0;
        (void)per;
#endif
        s = XADD(s, XMUL(t, t));
    }
    return s;
}

/* The squared distance between query q and the point at p (dimension j at
 * p[j * stride]) as the CPU join computes it (src/join/dist_t.h): up to
 * JOIN_SOA_MAX dimensions the terms summed in order; above, in eight
 * lanes (dimension j into lane j mod 8) combined pairwise, stopping after
 * a block of 32 dimensions once the sum exceeds eps2 (later terms only
 * add, so the outcome is the same). */
DEVFN T FN(join_dist2)(GLOBAL const T *q, LOCAL const T *p, u32 stride, u32 d, T eps2, GLOBAL const T *per)
{
    if (d <= JOIN_SOA_MAX) {
        T s = 0;
        for (u32 j = 0; j < d; j++) {
            T t = FN(diff)(q[j], p[j * stride], per, d, j);
            s = XADD(s, XMUL(t, t));
        }
        return s;
    }
    /* Eight scalar lanes, not an array: their indices are then known
     * when compiling and they stay in registers. */
    T a0 = 0, a1 = 0, a2 = 0, a3 = 0, a4 = 0, a5 = 0, a6 = 0, a7 = 0, s;
    u32 j = 0;
    for (; j + 32 <= d; j += 32) {
        for (u32 k = j; k < j + 32; k += 8) JOIN_LANES8(k)
        s = JOIN_COMBINE();
        if (s > eps2) return s;
    }
    for (; j + 8 <= d; j += 8) JOIN_LANES8(j)
    if (j < d) JOIN_TERM(a0, j)
    if (j + 1 < d) JOIN_TERM(a1, j + 1)
    if (j + 2 < d) JOIN_TERM(a2, j + 2)
    if (j + 3 < d) JOIN_TERM(a3, j + 3)
    if (j + 4 < d) JOIN_TERM(a4, j + 4)
    if (j + 5 < d) JOIN_TERM(a5, j + 5)
    if (j + 6 < d) JOIN_TERM(a6, j + 6)
    return JOIN_COMBINE();
}

/* Query groups g0 + [0, groups): qleaves[g] is the group's node in the
 * query tree, whose box is at qbox + node * 2 m. The data tree: nodes
 * (begin, end, right, depth) in preorder, the left child next, right 0 at
 * a leaf; boxes at dbox + node * 2 m. fill 0: ncand[g] = the data leaves
 * within prune2 of the group's box; fill 1: their node numbers into
 * cand[cand_off[g] - cand_base ...]. */
KERNEL void FN(join_walk)(u32 groups, u32 g0, GLOBAL const u32 *qleaves, GLOBAL const T *qbox,
                          GLOBAL const u32 *dnode, GLOBAL const T *dbox, u32 nnodes, u32 m, GLOBAL const T *per,
                          T prune2, u32 fill, GLOBAL u32 *ncand, GLOBAL const u64 *cand_off, u64 cand_base,
                          GLOBAL u32 *cand DYN_LOCAL_PARAM)
{
    u32 g = GROUP_ID() * GROUP_SIZE() + LOCAL_ID();
    if (g >= groups) return;
    g += g0;
    GLOBAL const T *qb = qbox + (u64)qleaves[g] * 2 * m;
    u64 at = fill ? cand_off[g] - cand_base : 0;
    u32 stack[JOIN_STACK], top = 0, count = 0;
    if (nnodes) stack[top++] = 0;
    while (top) {
        u32 k = stack[--top];
        if (FN(box_box2)(dbox + (u64)k * 2 * m, qb, m, per) > prune2) continue;
        u32 right = dnode[4 * (u64)k + 2];
        if (right) {
            stack[top++] = right;
            stack[top++] = k + 1;
            continue;
        }
        if (fill) cand[at + count] = k;
        count++;
    }
    if (!fill) ncand[g] = count;
}

/* The first position in [lo, hi) whose row is >= row (rows ascend within
 * a leaf). */
DEVFN u32 FN(lower_row)(GLOBAL const u32 *rows, u32 lo, u32 hi, u32 row)
{
    while (lo < hi) {
        u32 mid = lo + (hi - lo) / 2;
        if (rows[mid] < row) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* Query group g0 + GROUP_ID() (its queries with rows in [row0, row1))
 * against its candidate groups, tile points at a time through local
 * memory (tile x d values of T, dimension j of point i at j * tile + i).
 * Count (fill 0): counts[query position] = its hits. Fill (fill 1): query
 * row r's hits go to out_rows (data rows) and, with want_d2, out_d2
 * (squared distances) at [off[r - row0], off[r - row0 + 1]), never past
 * its end; a query whose hits do not fill its slice exactly sets *bad. */
KERNEL void FN(join_refine)(u32 g0, GLOBAL const u32 *qleaves, GLOBAL const u32 *qnode, GLOBAL const T *qx,
                            GLOBAL const u32 *qperm, GLOBAL const u32 *dnode, GLOBAL const T *x,
                            GLOBAL const u32 *perm, GLOBAL const u64 *cand_off, u64 cand_base,
                            GLOBAL const u32 *cand, u32 d, T eps2, u32 exclude_self, GLOBAL const T *per, u32 tile,
                            u32 row0, u32 row1, u32 fill, GLOBAL u32 *counts, GLOBAL const u64 *off,
                            GLOBAL u32 *out_rows, GLOBAL T *out_d2, u32 want_d2, GLOBAL u32 *bad DYN_LOCAL_PARAM)
{
    LOCAL T *tx = DYN_LOCAL(T);
    u32 g = g0 + GROUP_ID(), leaf = qleaves[g];
    u32 qa = FN(lower_row)(qperm, qnode[4 * (u64)leaf], qnode[4 * (u64)leaf + 1], row0);
    u32 qz = FN(lower_row)(qperm, qa, qnode[4 * (u64)leaf + 1], row1);
    u64 c0 = cand_off[g] - cand_base, c1 = cand_off[g + 1] - cand_base;
    for (u32 qs = qa; qs < qz; qs += GROUP_SIZE()) {
        u32 q = qs + LOCAL_ID();
        int active = q < qz;
        u32 qrow = active ? qperm[q] : 0, hits = 0;
        GLOBAL const T *qp = qx + (u64)(active ? q : qa) * d;
        u64 base = 0, room = 0;
        if (fill && active) {
            base = off[qrow - row0];
            room = off[qrow - row0 + 1] - base;
        }
        for (u64 c = c0; c < c1; c++) {
            u32 k = cand[c], pa = dnode[4 * (u64)k], pz = dnode[4 * (u64)k + 1];
            for (u32 p0 = pa; p0 < pz; p0 += tile) {
                u32 np = pz - p0 < tile ? pz - p0 : tile;
                BARRIER();
                for (u32 e = LOCAL_ID(); e < np * d; e += GROUP_SIZE()) {
                    u32 i = e / d, j = e - i * d;
                    tx[j * tile + i] = x[(u64)(p0 + i) * d + j];
                }
                BARRIER();
                if (!active) continue;
                for (u32 i = 0; i < np; i++) {
                    T d2 = FN(join_dist2)(qp, tx + i, tile, d, eps2, per);
                    if (!(d2 <= eps2)) continue;
                    u32 row = perm[p0 + i];
                    if (exclude_self && row == qrow) continue;
                    if (fill && hits < room) {
                        out_rows[base + hits] = row;
                        if (want_d2) out_d2[base + hits] = d2;
                    }
                    hits++;
                }
            }
        }
        if (active && fill && hits != room) ATOMIC_OR(bad, 1u);
        if (active && !fill) counts[q] = hits;
    }
}
