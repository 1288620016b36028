/* grove__tree_fill, instantiated per coordinate type of the tree: include
 * with T and FN(name) defined. */

/* Node boxes: box[k] holds node k's lo[m] then hi[m] over the first m
 * values of each point's row, rows `stride` values apart in pts. Leaves
 * (right == 0) from their points, in parallel; then internal nodes from
 * their children in reverse preorder, where children come after their
 * parent. */
static void FN(node_boxes)(const grove__node *node, size_t nodes, const T *pts, size_t stride, size_t m, T *box,
                           int threads)
{
#pragma omp parallel for num_threads(threads) schedule(static, 256)
    for (size_t k = 0; k < nodes; k++) {
        const grove__node *nd = &node[k];
        if (nd->right) continue;
        T *lo = box + k * 2 * m, *hi = lo + m;
        for (size_t j = 0; j < m; j++) lo[j] = hi[j] = pts[(size_t)nd->begin * stride + j];
        for (size_t i = (size_t)nd->begin + 1; i < nd->end; i++)
            for (size_t j = 0; j < m; j++) {
                T v = pts[i * stride + j];
                lo[j] = v < lo[j] ? v : lo[j];
                hi[j] = v > hi[j] ? v : hi[j];
            }
    }
    for (size_t k = nodes; k-- > 0;) {
        const grove__node *nd = &node[k];
        if (!nd->right) continue;
        T *lo = box + k * 2 * m, *hi = lo + m;
        const T *a = box + (k + 1) * 2 * m, *b = box + (size_t)nd->right * 2 * m;
        for (size_t j = 0; j < m; j++) {
            lo[j] = a[j] < b[j] ? a[j] : b[j];
            hi[j] = a[m + j] > b[m + j] ? a[m + j] : b[m + j];
        }
    }
}

static void FN(tree_fill)(grove__tree *t, grove_points points, double scale, const size_t *order, T *xs,
                          const double *keys_in, T *keys, int threads)
{
    size_t n = t->n, d = t->d, m = t->dims, stride = grove__points_stride(points);
    T *x = t->x;
#pragma omp parallel for num_threads(threads) schedule(static)
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < d; j++) {
            T v = (T)(grove__coord(points, stride, t->perm[i], order ? order[j] : j) * scale);
            x[i * d + j] = v;
            if (xs) xs[j * n + i] = v;
        }
    if (keys_in)
#pragma omp parallel for num_threads(threads) schedule(static)
        for (size_t i = 0; i < n; i++)
            for (size_t k = 0; k < m; k++) keys[i * m + k] = (T)keys_in[(size_t)t->perm[i] * m + k];
    FN(node_boxes)(t->node, t->nodes, keys_in ? keys : x, keys_in ? m : d, m, t->box, threads);
}
