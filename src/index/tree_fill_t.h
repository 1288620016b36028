/* Copy points into tree order and compute node boxes, instantiated per
 * coordinate type: include with T and FN(name) defined. */

static void FN(tree_fill)(grove__tree *t, grove_points points, int threads)
{
    size_t n = t->n, d = t->d, stride = grove__points_stride(points);
    T *x = t->x, *box = t->box;
    const char *base = points.data;
#pragma omp parallel for num_threads(threads) schedule(static)
    for (size_t i = 0; i < n; i++) {
        const T *row = (const T *)(const void *)(base + (size_t)t->perm[i] * stride);
        for (size_t j = 0; j < d; j++) x[i * d + j] = row[j];
    }
    /* Leaves from their points (in parallel), then internal nodes from
     * their children in reverse preorder, where children come first. */
    size_t nodes = t->nodes;
#pragma omp parallel for num_threads(threads) schedule(static, 1024)
    for (size_t k = 0; k < nodes; k++) {
        const grove__node *nd = &t->node[k];
        if (nd->right) continue;
        T *lo = box + k * 2 * d, *hi = lo + d;
        for (size_t j = 0; j < d; j++) lo[j] = hi[j] = x[(size_t)nd->begin * d + j];
        for (size_t i = (size_t)nd->begin + 1; i < nd->end; i++)
            for (size_t j = 0; j < d; j++) {
                T v = x[i * d + j];
                lo[j] = v < lo[j] ? v : lo[j];
                hi[j] = v > hi[j] ? v : hi[j];
            }
    }
    for (size_t k = nodes; k-- > 0;) {
        const grove__node *nd = &t->node[k];
        if (!nd->right) continue;
        T *lo = box + k * 2 * d, *hi = lo + d;
        const T *a = box + (k + 1) * 2 * d, *b = box + (size_t)nd->right * 2 * d;
        for (size_t j = 0; j < d; j++) {
            lo[j] = a[j] < b[j] ? a[j] : b[j];
            hi[j] = a[d + j] > b[d + j] ? a[d + j] : b[d + j];
        }
    }
}
