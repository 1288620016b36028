/* Exact k-nearest-neighbour search on a grove__tree, instantiated per
 * coordinate type: include with T and FN(name) defined. */

#include "geom_t.h"

#include "heap_t.h"

/* The k nearest to the point q (d coordinates; a tree position's own, or
 * a query's), left in hd/hr sorted ascending. Depth first, nearer child
 * first; a node is skipped when its box is strictly farther than the
 * current k-th distance (equal distances may still win on the row). The
 * stack holds at most one entry per tree level. */
static inline GROVE__ALWAYS_INLINE void FN(knn_one)(const grove__tree *t, const T *q, size_t k, size_t d, T *hd,
                                                    uint32_t *hr, uint32_t *stack_node, T *stack_lb)
{
    const T *x = t->x, *box = t->box;
    const grove__node *node = t->node;
    size_t m = 0, top = 0;
    uint32_t cur = 0;
    T cur_lb = 0;
    for (;;) {
        T bound = m == k ? hd[0] : (T)INFINITY;
        if (cur_lb <= bound) {
            const grove__node *nd = &node[cur];
            if (nd->right) {
                uint32_t l = cur + 1, r = nd->right;
                T dl = FN(box_dist2)(box + (size_t)l * 2 * d, q, d);
                T dr = FN(box_dist2)(box + (size_t)r * 2 * d, q, d);
                int left_first = dl <= dr;
                stack_node[top] = left_first ? r : l;
                stack_lb[top++] = left_first ? dr : dl;
                cur = left_first ? l : r;
                cur_lb = left_first ? dl : dr;
                continue;
            }
            for (size_t i = nd->begin; i < nd->end; i++) {
                T d2 = FN(dist2)(q, x + i * d, d);
                FN(knn_offer)(hd, hr, &m, k, d2, t->perm[i]);
            }
        }
        if (top == 0) break;
        top--;
        cur = stack_node[top];
        cur_lb = stack_lb[top];
    }
    FN(knn_sort)(hd, hr, m);
}

/* Points [lo, hi) of the tree, with d fixed at compile time when D is a
 * constant (see GROVE__DISPATCH_D). */
static inline GROVE__ALWAYS_INLINE void FN(knn_range)(const grove__tree *t, size_t lo, size_t hi, size_t k,
                                                      size_t d, uint32_t *idx, double *dist2, double *kth2,
                                                      T *hd, uint32_t *hr, uint32_t *stack_node, T *stack_lb)
{
    for (size_t p = lo; p < hi; p++) {
        FN(knn_one)(t, (const T *)t->x + p * d, k, d, hd, hr, stack_node, stack_lb);
        if (kth2) kth2[p] = (double)hd[k - 1];
        size_t row = t->perm[p];
        for (size_t r = 0; r < k && (idx || dist2); r++) {
            if (idx) idx[row * k + r] = hr[r];
            if (dist2) dist2[row * k + r] = (double)hd[r];
        }
    }
}

static grove_status FN(knn_all)(const grove__tree *t, size_t k, uint32_t *idx, double *dist2, double *kth2,
                                const grove_options *options, int threads)
{
    enum { BLOCK = 1 << 16, CHUNK = 64 };
    size_t n = t->n, d = t->d, depth = (size_t)t->depth + 2;
    grove_status status = GROVE_OK;
    for (size_t start = 0; start < n && status == GROVE_OK; start += BLOCK) {
        size_t stop = n - start > BLOCK ? start + BLOCK : n;
        /* An allocation failure in any thread stops the whole team (an
         * unnamed atomic: a named critical section would export a symbol). */
        int failed = 0, stopped = 0;
#pragma omp parallel num_threads(threads)
        {
            T *hd = grove__malloc(k * sizeof *hd + depth * sizeof(T), "kNN heap");
            uint32_t *hr = grove__malloc((k + depth) * sizeof *hr, "kNN heap");
            int mine = !hd || !hr;
#pragma omp atomic update
            failed |= mine;
#pragma omp barrier
            int stop_all;
#pragma omp atomic read
            stop_all = failed;
            if (!stop_all) {
#pragma omp for schedule(dynamic, 1) reduction(| : stopped)
                for (size_t lo = start; lo < stop; lo += CHUNK) {
                    /* One read of the cancel flag per chunk: a block can take seconds. */
                    if (stopped || (stopped = grove__cancelled(options))) continue;
                    size_t hi = stop - lo > CHUNK ? lo + CHUNK : stop;
#define GROVE__KNN_BODY(D) FN(knn_range)(t, lo, hi, k, D, idx, dist2, kth2, hd, hr, hr + k, hd + k)
                    GROVE__DISPATCH_D(d, GROVE__KNN_BODY)
#undef GROVE__KNN_BODY
                }
            }
            grove__free(hd);
            grove__free(hr);
        }
        if (failed) status = grove__fail(GROVE_OUT_OF_MEMORY, "kNN: out of memory for the per-thread heaps (k = %zu)", k);
        if (status == GROVE_OK && stopped)
            status = grove__fail(GROVE_CANCELLED, "kNN: cancelled in points %zu to %zu of %zu", start, stop, n);
        grove__progress(options, "knn", (double)stop / (double)n);
    }
    return status;
}
