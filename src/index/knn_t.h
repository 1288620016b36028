/* Exact k-nearest-neighbour search on a grove__tree, instantiated per
 * coordinate type: include with T and FN(name) defined. The heap orders
 * keys of squared distances (dist_key.h), exact where the sums underflow. */

#include "geom_t.h"

#include "heap_t.h"

/* One query's search: the point q (d coordinates; a tree position's own,
 * or a query's), its heap of m <= k entries and the prune bound of its
 * k-th key (FN(prune_bound); INFINITY until the heap is full). */
typedef struct FN(knn_search) {
    const grove__tree *t;
    const T *q;
    size_t k, d, m;
    T *hd;
    uint32_t *hr;
    T bound;
} FN(knn_search);

/* A node is skipped when its box is strictly farther than the current
 * k-th distance (equal distances may still win on the row). */
static inline GROVE__ALWAYS_INLINE int FN(knn_keep)(const FN(knn_search) *s, uint32_t k, T lb)
{
    (void)k;
    return lb <= s->bound;
}

static inline GROVE__ALWAYS_INLINE T FN(knn_lower)(const FN(knn_search) *s, uint32_t k)
{
    return FN(box_dist2)((const T *)s->t->box + (size_t)k * 2 * s->d, s->q, s->d);
}

static inline GROVE__ALWAYS_INLINE void FN(knn_visit)(FN(knn_search) *s, const grove__node *nd)
{
    const T *x = s->t->x;
    for (size_t i = nd->begin; i < nd->end; i++) {
        T d2 = FN(key2)(s->q, x + i * s->d, s->d);
        FN(knn_offer)(s->hd, s->hr, &s->m, s->k, d2, s->t->perm[i]);
    }
    if (s->m == s->k) s->bound = (T)FN(prune_bound)(s->hd[0]);
}

#define WALK(name) FN(knn_##name)
#define WALK_BOUND T
#include "walk_t.h"

/* The k nearest to the point q, left in hd/hr (k entries each) sorted
 * ascending. */
static inline GROVE__ALWAYS_INLINE void FN(knn_one)(const grove__tree *t, const T *q, size_t k, size_t d, T *hd,
                                                    uint32_t *hr)
{
    FN(knn_search) s = {t, q, k, d, 0, hd, hr, (T)INFINITY};
    FN(knn_walk)(t->node, &s, 0);
    FN(knn_sort)(hd, hr, s.m);
}

/* Points [lo, hi) of the tree, with d fixed at compile time when D is a
 * constant (see GROVE__DISPATCH_D). */
static inline GROVE__ALWAYS_INLINE void FN(knn_range)(const grove__tree *t, size_t lo, size_t hi, size_t k,
                                                      size_t d, uint32_t *idx, double *dist2, double *kth2,
                                                      T *hd, uint32_t *hr)
{
    for (size_t p = lo; p < hi; p++) {
        FN(knn_one)(t, (const T *)t->x + p * d, k, d, hd, hr);
        if (kth2) kth2[p] = FN(key_wide)(hd[k - 1]);
        size_t row = t->perm[p];
        for (size_t r = 0; r < k && (idx || dist2); r++) {
            if (idx) idx[row * k + r] = hr[r];
            if (dist2) dist2[row * k + r] = FN(key_wide)(hd[r]);
        }
    }
}

static grove_status FN(knn_all)(const grove__tree *t, size_t k, uint32_t *idx, double *dist2, double *kth2,
                                const grove_options *options, int threads)
{
    enum { BLOCK = 1 << 16, CHUNK = 64 };
    size_t n = t->n, d = t->d;
    grove_status status = GROVE_OK;
    for (size_t start = 0; start < n && status == GROVE_OK; start += BLOCK) {
        size_t stop = n - start > BLOCK ? start + BLOCK : n;
        /* An allocation failure in any thread stops the whole team (an
         * unnamed atomic: a named critical section would export a symbol). */
        int failed = 0, stopped = 0;
#pragma omp parallel num_threads(threads)
        {
            T *hd = grove__malloc(k * sizeof *hd, "kNN heap");
            uint32_t *hr = grove__malloc(k * sizeof *hr, "kNN heap");
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
#define GROVE__KNN_BODY(D) FN(knn_range)(t, lo, hi, k, D, idx, dist2, kth2, hd, hr)
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
