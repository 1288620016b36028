/* Exact k-nearest-neighbour search on a grove__tree, instantiated per
 * coordinate type: include with T and FN(name) defined. */

#include "geom_t.h"

/* (d2, row) order: true when a is farther than b, rows breaking ties. */
static inline int FN(knn_after)(T da, uint32_t ra, T db, uint32_t rb)
{
    return da > db || (da == db && ra > rb);
}

/* Restore the max-heap below slot 0 of hd/hr (m entries). */
static inline void FN(knn_sift)(T *hd, uint32_t *hr, size_t m)
{
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= m) break;
        if (c + 1 < m && FN(knn_after)(hd[c + 1], hr[c + 1], hd[c], hr[c])) c++;
        if (!FN(knn_after)(hd[c], hr[c], hd[i], hr[i])) break;
        T td = hd[i]; hd[i] = hd[c]; hd[c] = td;
        uint32_t tr = hr[i]; hr[i] = hr[c]; hr[c] = tr;
        i = c;
    }
}

/* Insert (d2, row) into a max-heap of m < k entries. */
static inline void FN(knn_push)(T *hd, uint32_t *hr, size_t m, T d2, uint32_t row)
{
    size_t i = m;
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!FN(knn_after)(d2, row, hd[parent], hr[parent])) break;
        hd[i] = hd[parent];
        hr[i] = hr[parent];
        i = parent;
    }
    hd[i] = d2;
    hr[i] = row;
}

/* The k nearest to tree position p, left in hd/hr sorted ascending. Depth
 * first, nearer child first; a node is skipped when its box is strictly
 * farther than the current k-th distance (equal distances may still win on
 * the row). The stack holds at most one entry per tree level. */
static inline GROVE__ALWAYS_INLINE void FN(knn_one)(const grove__tree *t, size_t p, size_t k, size_t d, T *hd,
                                                    uint32_t *hr, uint32_t *stack_node, T *stack_lb)
{
    const T *x = t->x, *box = t->box, *q = x + p * d;
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
                uint32_t row = t->perm[i];
                if (m < k) {
                    FN(knn_push)(hd, hr, m++, d2, row);
                } else if (FN(knn_after)(hd[0], hr[0], d2, row)) {
                    hd[0] = d2;
                    hr[0] = row;
                    FN(knn_sift)(hd, hr, m);
                }
            }
        }
        if (top == 0) break;
        top--;
        cur = stack_node[top];
        cur_lb = stack_lb[top];
    }
    /* Heap sort in place: ascending (d2, row). */
    for (size_t end = m; end > 1; end--) {
        T td = hd[0]; hd[0] = hd[end - 1]; hd[end - 1] = td;
        uint32_t tr = hr[0]; hr[0] = hr[end - 1]; hr[end - 1] = tr;
        FN(knn_sift)(hd, hr, end - 1);
    }
}

/* Points [lo, hi) of the tree, with d fixed at compile time when D is a
 * constant (see GROVE__DISPATCH_D). */
static inline GROVE__ALWAYS_INLINE void FN(knn_range)(const grove__tree *t, size_t lo, size_t hi, size_t k,
                                                      size_t d, uint32_t *idx, double *dist2, double *kth2,
                                                      T *hd, uint32_t *hr, uint32_t *stack_node, T *stack_lb)
{
    for (size_t p = lo; p < hi; p++) {
        FN(knn_one)(t, p, k, d, hd, hr, stack_node, stack_lb);
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
        int failed = 0;
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
#pragma omp for schedule(dynamic, 1)
                for (size_t lo = start; lo < stop; lo += CHUNK) {
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
        if (status == GROVE_OK && grove__cancelled(options))
            status = grove__fail(GROVE_CANCELLED, "kNN: cancelled after %zu of %zu points", stop, n);
        grove__progress(options, "knn", (double)stop / (double)n);
    }
    return status;
}
