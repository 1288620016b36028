/* Exact k nearest neighbours on a grove_index, instantiated per coordinate
 * type: include with T and FN(name) defined (knn.c). The shared walk
 * (walk_t.h) through the kd-tree with box lower bounds on the keys; a box
 * is skipped only when it is farther than the current k-th distance by
 * more than any rounding difference (equal distances can still win on the
 * row). The heap orders keys of squared distances (dist_key.h), exact
 * where the sums underflow. */

#include "dist_t.h"
#include "../index/heap_t.h"

/* One query's search: the query q (keys qk; skip = the row to leave out
 * or UINT32_MAX) and its heap of `found` <= k entries; boxes farther (in
 * keys) than reach are skipped. */
typedef struct FN(knn_search) {
    const grove_index *D, *Q;
    const T *q, *qk;
    size_t k, found;
    uint32_t skip;
    T *hd;
    uint32_t *hr;
    double reach;
} FN(knn_search);

static inline GROVE__ALWAYS_INLINE int FN(knn_keep)(const FN(knn_search) *s, uint32_t k, T lb)
{
    (void)k;
    return (double)lb <= s->reach;
}

static inline GROVE__ALWAYS_INLINE T FN(knn_lower)(const FN(knn_search) *s, uint32_t k)
{
    const grove_index *D = s->D;
    return FN(box_point2)((const T *)D->tree.box + (size_t)k * 2 * D->tree.dims, s->qk, D->tree.dims, D->period);
}

static inline GROVE__ALWAYS_INLINE void FN(knn_visit)(FN(knn_search) *s, const grove__node *nd)
{
    const grove_index *D = s->D;
    size_t d = D->tree.d, m = D->tree.dims, k = s->k;
    const T *x = D->tree.x, *kx = D->keys, *per = D->period;
    T *hd = s->hd;
    for (size_t p = nd->begin; p < nd->end; p++) {
        uint32_t row = D->tree.perm[p];
        if (row == s->skip) continue;
        /* Projected keys rule most points out cheaply. */
        if (D->axes && (double)FN(dist2)(s->qk, kx + p * m, m) > s->reach) continue;
        T d2 = FN(key_join)(s->q, x + p * d, d, s->found == k ? hd[0] : (T)INFINITY, per);
        size_t before = s->found;
        T worst = s->found ? hd[0] : 0;
        FN(knn_offer)(hd, s->hr, &s->found, k, d2, row);
        /* A k-th key below the smallest normal (dist_key.h) reaches as far
         * as 0 does: every box holding such a point bounds below that. */
        if (s->found == k && (before < k || hd[0] != worst))
            s->reach = grove__join_prune2_sq(D, s->Q, hd[0] > 0 ? (double)hd[0] : 0);
    }
}

#define WALK(name) FN(knn_##name)
#define WALK_BOUND T
#include "../index/walk_t.h"

/* The k nearest of the query q (keys qk; skip = the row to leave out or
 * UINT32_MAX) left ascending in hd/hr; returns how many were found. */
static size_t FN(knn_query)(const grove_index *D, const grove_index *Q, const T *q, const T *qk, size_t k,
                            uint32_t skip, T *hd, uint32_t *hr)
{
    FN(knn_search) s = {D, Q, q, qk, k, 0, skip, hd, hr, INFINITY};
    if (D->tree.nodes == 0) return 0;
    FN(knn_walk)(D->tree.node, &s, 0);
    FN(knn_sort)(hd, hr, s.found);
    return s.found;
}

/* The queries of Q's leaf group g, written by query row, with the
 * calling thread's heaps: k entries each of hd (as T) and hr. */
static void FN(knn_group)(const grove_index *D, const grove_index *Q, size_t g, size_t k, int exclude_self,
                          int64_t *indices, double *distances, void *scratch_d, uint32_t *hr)
{
    size_t d = D->tree.d;
    T *hd = scratch_d;
    const grove__node *nd = &Q->tree.node[Q->leaves[g]];
    for (size_t a = nd->begin; a < nd->end; a++) {
        uint32_t qrow = Q->tree.perm[a];
        size_t found = FN(knn_query)(D, Q, (const T *)Q->tree.x + a * d, (const T *)Q->keys + a * Q->kstride, k,
                                     exclude_self ? qrow : UINT32_MAX, hd, hr);
        for (size_t r = 0; r < found; r++) {
            if (indices) indices[(size_t)qrow * k + r] = hr[r];
            if (distances) distances[(size_t)qrow * k + r] = FN(key_dist)(hd[r]);
        }
    }
}
