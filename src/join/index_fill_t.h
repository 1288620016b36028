/* Copy points into the index (tree order, variance-ordered dimensions,
 * times scale, a power of two, in the index dtype), with their projected
 * keys when keys_in (input order, already scaled) is given, and compute
 * the node boxes of the keys; instantiated per coordinate type: include
 * with T and FN(name) defined. */
#include "../index/boxes_t.h"

static void FN(index_fill)(grove_index *ix, grove_points points, double scale, const double *keys_in, int threads)
{
    size_t n = ix->n, d = ix->d, m = ix->dims, ks = ix->kstride, stride = grove__points_stride(points);
    T *x = ix->x, *xs = ix->xs, *box = ix->box, *keys = ix->keys;
#pragma omp parallel for num_threads(threads) schedule(static)
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < d; j++) {
            T v = (T)(grove__coord(points, stride, ix->rows[i], ix->order[j]) * scale);
            x[i * d + j] = v;
            if (xs) xs[j * n + i] = v;
        }
    if (keys_in)
#pragma omp parallel for num_threads(threads) schedule(static)
        for (size_t i = 0; i < n; i++)
            for (size_t k = 0; k < m; k++) keys[i * m + k] = (T)keys_in[(size_t)ix->rows[i] * m + k];
    FN(node_boxes)(ix->node, ix->nodes, keys, ks, m, box, threads);
}

/* The periodic box by stored dimension, scaled, in T: lengths, then their
 * halves (INFINITY where a dimension is unbounded, so the wrap never
 * applies there). */
static void FN(period_fill)(grove_index *ix, double scale)
{
    size_t d = ix->d;
    T *per = ix->period;
    for (size_t j = 0; j < d; j++) {
        double len = ix->boxsize[ix->order[j]];
        per[j] = len > 0 ? (T)(len * scale) : (T)INFINITY;
        per[d + j] = per[j] / 2;
    }
}
