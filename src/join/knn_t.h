/* Exact k nearest neighbours on a grove_index, instantiated per coordinate
 * type: include with T and FN(name) defined (knn.c). Depth first through
 * the kd-tree, nearer child first, with box lower bounds on the keys; a box
 * is skipped only when it is farther than the current k-th distance by
 * more than any rounding difference (equal distances can still win on the
 * row). */

#include "dist_t.h"
#include "../index/heap_t.h"

/* The k nearest of the query q (keys qk; skip = the row to leave out or
 * UINT32_MAX) left ascending in hd/hr; returns how many were found. */
static size_t FN(knn_query)(const grove_index *D, const grove_index *Q, const T *q, const T *qk, size_t k,
                            uint32_t skip, T *hd, uint32_t *hr, uint32_t *stack_node, T *stack_lb)
{
    size_t d = D->d, m = D->dims, found = 0, top = 0;
    const T *x = D->x, *box = D->box, *kx = D->keys, *per = D->period;
    uint32_t cur = 0;
    T cur_lb = 0;
    double reach = INFINITY; /* boxes farther (in keys) than this are skipped */
    if (D->nodes == 0) return 0;
    for (;;) {
        if ((double)cur_lb <= reach) {
            const grove__node *nd = &D->node[cur];
            if (nd->right) {
                uint32_t l = cur + 1, r = nd->right;
                T dl = FN(box_point2)(box + (size_t)l * 2 * m, qk, m, per);
                T dr = FN(box_point2)(box + (size_t)r * 2 * m, qk, m, per);
                int left_first = dl <= dr;
                stack_node[top] = left_first ? r : l;
                stack_lb[top++] = left_first ? dr : dl;
                cur = left_first ? l : r;
                cur_lb = left_first ? dl : dr;
                continue;
            }
            for (size_t p = nd->begin; p < nd->end; p++) {
                uint32_t row = D->rows[p];
                if (row == skip) continue;
                /* Projected keys rule most points out cheaply. */
                if (D->axes && (double)FN(dist2)(qk, kx + p * m, m) > reach) continue;
                T d2 = FN(dist2_join)(q, x + p * d, d, found == k ? hd[0] : (T)INFINITY, per);
                size_t before = found;
                T worst = found ? hd[0] : 0;
                FN(knn_offer)(hd, hr, &found, k, d2, row);
                if (found == k && (before < k || hd[0] != worst))
                    reach = grove__join_prune2_sq(D, Q, (double)hd[0]);
            }
        }
        if (top == 0) break;
        top--;
        cur = stack_node[top];
        cur_lb = stack_lb[top];
    }
    FN(knn_sort)(hd, hr, found);
    return found;
}

/* The queries of Q's leaf group g, written by query row, with the
 * calling thread's heap scratch: KNN_SCRATCH(k) entries each of hd (as T)
 * and hr. */
static void FN(knn_group)(const grove_index *D, const grove_index *Q, size_t g, size_t k, int exclude_self,
                          int64_t *indices, double *distances, void *scratch_d, uint32_t *hr)
{
    size_t d = D->d;
    T *hd = scratch_d;
    const grove__node *nd = &Q->node[Q->leaves[g]];
    for (size_t a = nd->begin; a < nd->end; a++) {
        uint32_t qrow = Q->rows[a];
        size_t found = FN(knn_query)(D, Q, (const T *)Q->x + a * d, (const T *)Q->keys + a * Q->kstride, k,
                                     exclude_self ? qrow : UINT32_MAX, hd, hr, hr + k, hd + k);
        for (size_t r = 0; r < found; r++) {
            if (indices) indices[(size_t)qrow * k + r] = hr[r];
            if (distances) distances[(size_t)qrow * k + r] = sqrt((double)hd[r]);
        }
    }
}
