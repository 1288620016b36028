/* Copy points into tree order, times scale (a power of two: exact), and
 * compute node boxes, instantiated per coordinate type: include with T and
 * FN(name) defined. */
#include "boxes_t.h"

static void FN(tree_fill)(grove__tree *t, grove_points points, double scale, int threads)
{
    size_t n = t->n, d = t->d, stride = grove__points_stride(points);
    T *x = t->x, *box = t->box;
    const char *base = points.data;
    bool scaled = scale != 1;
#pragma omp parallel for num_threads(threads) schedule(static)
    for (size_t i = 0; i < n; i++) {
        const T *row = (const T *)(const void *)(base + (size_t)t->perm[i] * stride);
        for (size_t j = 0; j < d; j++) x[i * d + j] = scaled ? (T)(row[j] * scale) : row[j];
    }
    FN(node_boxes)(t->node, t->nodes, x, d, d, box, threads);
}
