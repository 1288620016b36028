/* grove__tree_knn: exact k nearest neighbours of every indexed point; and
 * of one query point (grove__tree_knn_point). */
#include "index.h"
#include "parallel.h"

#include <math.h>

#define T float
#define FN(name) name##_f32
#include "knn_t.h"
#undef T
#undef FN
#define T double
#define FN(name) name##_f64
#include "knn_t.h"
#undef T
#undef FN

grove_status grove__tree_knn(const grove__tree *tree, size_t k, uint32_t *idx, double *dist2, double *kth2,
                             const grove_options *options)
{
    if (k < 1 || k > tree->n)
        return grove__fail(GROVE_INVALID_ARGUMENT, "kNN: k = %zu must be between 1 and n = %zu", k, tree->n);
    int threads = grove__threads_for(grove__options(options).threads, tree->n);
    return tree->dtype == GROVE_FLOAT32 ? knn_all_f32(tree, k, idx, dist2, kth2, options, threads)
                                        : knn_all_f64(tree, k, idx, dist2, kth2, options, threads);
}

size_t grove__tree_knn_scratch(size_t k)
{
    return k * (sizeof(double) + sizeof(uint32_t));
}

void grove__tree_knn_point(const grove__tree *tree, const double *q, size_t k, void *scratch, uint32_t *rows,
                           double *dist)
{
    double *hd = scratch;
    uint32_t *hr = (uint32_t *)(void *)(hd + k);
#define GROVE__KNN_POINT(D) knn_one_f64(tree, q, k, D, hd, hr)
    GROVE__DISPATCH_D(tree->d, GROVE__KNN_POINT)
#undef GROVE__KNN_POINT
    for (size_t r = 0; r < k; r++) {
        rows[r] = hr[r];
        dist[r] = key_dist_f64(hd[r]);
    }
}
