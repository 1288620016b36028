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

/* Candidates of the query box qbox: (row << 32 | position) of every data
 * point in a group (with node number >= first) whose box is within the
 * pruning radius and which is itself within it of qbox. Returns the count
 * (grows w->keys). */
static grove_status FN(gather_keys)(const grove_index *D, const T *qbox, double prune2, join_work *w, size_t *count,
                                    uint32_t first)
{
    size_t m = D->dims, d = D->d, top = 0, c = 0;
    const T *box = D->box, *x = D->x;
    uint32_t *stack = w->stack;
    if (D->nodes) stack[top++] = 0;
    while (top) {
        uint32_t k = stack[--top];
        if ((double)FN(box_box2)(box + (size_t)k * 2 * m, qbox, m) > prune2) continue;
        const grove__node *nd = &D->node[k];
        if (nd->right) {
            /* Every node of the left subtree comes before the right child. */
            stack[top++] = nd->right;
            if (nd->right > first) stack[top++] = k + 1;
            continue;
        }
        if (k < first) continue;
        if (join_reserve(w, c + (nd->end - nd->begin)) != GROVE_OK) return GROVE_OUT_OF_MEMORY;
        for (uint32_t p = nd->begin; p < nd->end; p++) {
            if ((double)FN(point_box2)(qbox, x + (size_t)p * d, m) <= prune2)
                w->keys[c++] = (uint64_t)D->rows[p] << 32 | p;
        }
    }
    *count = c;
    return GROVE_OK;
}

/* The candidates' rows, and up to SOA_MAX dimensions their coordinates by
 * dimension: cx[j * cap + c]. */
static void FN(gather_candidates)(const grove_index *D, join_work *w, size_t count)
{
    size_t n = D->n, d = D->d, cap = w->cap;
    const T *xs = D->xs;
    T *cx = w->cx;
    for (size_t c = 0; c < count; c++) w->crow[c] = (uint32_t)(w->keys[c] >> 32);
    for (size_t j = 0; xs && j < d; j++) {
        const T *col = xs + j * n;
        T *dst = cx + j * cap;
        for (size_t c = 0; c < count; c++) dst[c] = col[(uint32_t)w->keys[c]];
    }
}

/* Squared distances from q to candidates [c0, c0 + CHUNK) of the
 * by-dimension block (dimensions summed in order). */
static inline GROVE__ALWAYS_INLINE void FN(chunk_soa)(const T *cx, size_t cap, size_t c0, const T *q, size_t d,
                                                      T *acc)
{
    for (size_t c = 0; c < JOIN_CHUNK; c++) acc[c] = 0;
    for (size_t j = 0; j < d; j++) {
        T qj = q[j];
        const T *col = cx + j * cap + c0;
        for (size_t c = 0; c < JOIN_CHUNK; c++) {
            T t = qj - col[c];
            acc[c] += t * t;
        }
    }
}

/* Squared distances from q to candidates [c0, c0 + JOIN_CHUNK) into acc
 * (above SOA_MAX, values beyond eps2 may be partial sums). */
static inline GROVE__ALWAYS_INLINE void FN(chunk_d2)(const grove_index *D, const join_work *w, size_t c0,
                                                     size_t count, const T *q, T eps2, T *acc)
{
    size_t d = D->d;
    if (D->xs) {
#define GROVE__JOIN_CHUNK_BODY(DD) FN(chunk_soa)(w->cx, w->cap, c0, q, DD, acc)
        GROVE__DISPATCH_D(d, GROVE__JOIN_CHUNK_BODY)
#undef GROVE__JOIN_CHUNK_BODY
        return;
    }
    const T *x = D->x;
    size_t len = count - c0 < JOIN_CHUNK ? count - c0 : JOIN_CHUNK;
    for (size_t c = 0; c < len; c++) acc[c] = FN(dist2_lanes)(q, x + (size_t)(uint32_t)w->keys[c0 + c] * d, d, eps2);
}

/* Refine queries [qa, qz) of Q against the candidates in w, by pass mode:
 * count into pass->counts (by row), count symmetrically (colcnt non-NULL:
 * also tally each candidate's hits, see FN(count_self_group)), or append
 * each query's neighbours, in candidate order, to its CSR slice. */
JOIN_KERNEL static grove_status FN(refine)(const grove_index *D, const grove_index *Q, size_t qa, size_t qz,
                                           join_work *w, size_t count, const join_pass *pass, int32_t *colcnt,
                                           int64_t *rowcnt)
{
    size_t d = D->d;
    T eps2 = (T)pass->eps2, acc[JOIN_CHUNK];
    for (size_t a = qa; a < qz; a++) {
        const T *q = (const T *)Q->x + a * d;
        uint32_t qrow = Q->rows[a], skip = pass->exclude_self ? qrow : UINT32_MAX;
        if (!pass->fill) {
            int64_t hits = 0;
            for (size_t c0 = 0; c0 < count; c0 += JOIN_CHUNK) {
                FN(chunk_d2)(D, w, c0, count, q, eps2, acc);
                size_t len = count - c0 < JOIN_CHUNK ? count - c0 : JOIN_CHUNK;
                const uint32_t *rows = w->crow + c0;
                int32_t *col = colcnt ? colcnt + c0 : NULL;
                int chunk_hits = 0;
                if (col)
                    for (size_t c = 0; c < len; c++) {
                        int hit = acc[c] <= eps2;
                        col[c] += hit;
                        chunk_hits += hit;
                    }
                else
                    for (size_t c = 0; c < len; c++) chunk_hits += (acc[c] <= eps2) & (rows[c] != skip);
                hits += chunk_hits;
            }
            if (rowcnt) {
#pragma omp atomic update
                rowcnt[a] += hits;
            } else {
                pass->counts[qrow - pass->row0] = hits;
            }
            continue;
        }
        join_sink sink;
        join_sink_open(pass, qrow, &sink);
        for (size_t c0 = 0; c0 < count; c0 += JOIN_CHUNK) {
            FN(chunk_d2)(D, w, c0, count, q, eps2, acc);
            size_t len = count - c0 < JOIN_CHUNK ? count - c0 : JOIN_CHUNK, k = 0;
            const uint32_t *rows = w->crow + c0;
            if (sink.dist)
                for (size_t c = 0; c < len; c++) {
                    w->hit_row[k] = rows[c];
                    w->hit_d2[k] = (double)acc[c];
                    k += (acc[c] <= eps2) & (rows[c] != skip);
                }
            else
                for (size_t c = 0; c < len; c++) {
                    w->hit_row[k] = rows[c];
                    k += (acc[c] <= eps2) & (rows[c] != skip);
                }
            if (join_sink_put(&sink, w->hit_row, w->hit_d2, k) != GROVE_OK) return GROVE_INVALID_ARGUMENT;
        }
        if (sink.count != sink.room) return GROVE_INVALID_ARGUMENT;
    }
    return GROVE_OK;
}

/* One query group: its queries with rows in [pass->row0, pass->row1). */
static grove_status FN(join_group)(const grove_index *D, const grove_index *Q, size_t leaf, join_work *w,
                                   const join_pass *pass)
{
    const grove__node *nd = &Q->node[Q->leaves[leaf]];
    size_t qa = join_lower_row(Q->rows, nd->begin, nd->end, pass->row0);
    size_t qz = join_lower_row(Q->rows, qa, nd->end, pass->row1);
    if (qa == qz) return GROVE_OK;
    const T *qbox = (const T *)Q->box + (size_t)Q->leaves[leaf] * 2 * Q->dims;
    size_t count = 0;
    grove_status s = FN(gather_keys)(D, qbox, pass->prune2, w, &count, 0);
    if (s != GROVE_OK) return s;
    if (pass->fill) join_sort_keys(w, count, D->n);
    FN(gather_candidates)(D, w, count);
    return FN(refine)(D, Q, qa, qz, w, count, pass, NULL, NULL);
}

/* Self-join count pass for group `leaf`, visiting each unordered pair of
 * groups once: candidates come only from this group and later ones (leaf
 * order is node order), and every hit counts for both ends, in counts by
 * tree position (cpos, shared: atomic adds). Halves the distance work. */
static grove_status FN(count_self_group)(const grove_index *D, size_t leaf, join_work *w, const join_pass *pass,
                                         int64_t *cpos)
{
    uint32_t self = D->leaves[leaf];
    const grove__node *nd = &D->node[self];
    const T *qbox = (const T *)D->box + (size_t)self * 2 * D->dims;
    size_t count = 0;
    grove_status s = FN(gather_keys)(D, qbox, pass->prune2, w, &count, self);
    if (s != GROVE_OK) return s;
    FN(gather_candidates)(D, w, count);
    memset(w->colcnt, 0, count * sizeof *w->colcnt);
    s = FN(refine)(D, D, nd->begin, nd->end, w, count, pass, w->colcnt, cpos);
    /* Pairs inside the group were counted from both ends already. */
    for (size_t c = 0; s == GROVE_OK && c < count; c++) {
        uint32_t p = (uint32_t)w->keys[c];
        if (p >= nd->begin && p < nd->end) continue;
#pragma omp atomic update
        cpos[p] += w->colcnt[c];
    }
    return s;
}
