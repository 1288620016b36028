/* Copy points into the index (tree order, variance-ordered dimensions, in
 * the index dtype), with their projected keys when keys_in (input order)
 * is given, and compute the node boxes of the keys;
 * instantiated per coordinate type: include with T and FN(name) defined. */

static void FN(index_fill)(grove_index *ix, grove_points points, const double *keys_in, int threads)
{
    size_t n = ix->n, d = ix->d, m = ix->dims, ks = ix->kstride, stride = grove__points_stride(points);
    T *x = ix->x, *xs = ix->xs, *box = ix->box, *keys = ix->keys;
#pragma omp parallel for num_threads(threads) schedule(static)
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < d; j++) {
            T v = (T)grove__coord(points, stride, ix->rows[i], ix->order[j]);
            x[i * d + j] = v;
            if (xs) xs[j * n + i] = v;
        }
    if (keys_in)
#pragma omp parallel for num_threads(threads) schedule(static)
        for (size_t i = 0; i < n; i++)
            for (size_t k = 0; k < m; k++) keys[i * m + k] = (T)keys_in[(size_t)ix->rows[i] * m + k];
    /* Leaves from their points, then internal nodes from their children in
     * reverse preorder (children come after their parent). */
#pragma omp parallel for num_threads(threads) schedule(static, 256)
    for (size_t l = 0; l < ix->nleaves; l++) {
        const grove__node *nd = &ix->node[ix->leaves[l]];
        T *lo = box + (size_t)ix->leaves[l] * 2 * m, *hi = lo + m;
        for (size_t j = 0; j < m; j++) lo[j] = hi[j] = keys[(size_t)nd->begin * ks + j];
        for (size_t i = (size_t)nd->begin + 1; i < nd->end; i++)
            for (size_t j = 0; j < m; j++) {
                T v = keys[i * ks + j];
                lo[j] = v < lo[j] ? v : lo[j];
                hi[j] = v > hi[j] ? v : hi[j];
            }
    }
    for (size_t k = ix->nodes; k-- > 0;) {
        const grove__node *nd = &ix->node[k];
        if (!nd->right) continue;
        T *lo = box + k * 2 * m, *hi = lo + m;
        const T *a = box + (k + 1) * 2 * m, *b = box + (size_t)nd->right * 2 * m;
        for (size_t j = 0; j < m; j++) {
            lo[j] = a[j] < b[j] ? a[j] : b[j];
            hi[j] = a[m + j] > b[m + j] ? a[m + j] : b[m + j];
        }
    }
}
