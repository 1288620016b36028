/* Node boxes of a tree whose points are stored in tree order, instantiated
 * per coordinate type: include with T and FN(name) defined (tree_fill_t.h,
 * and the join's index_fill_t.h, whose boxes bound the keys).
 *
 * box[k] holds node k's lo[m] then hi[m] over the first m values of each
 * point's row, rows `stride` values apart in pts. Leaves (right == 0) from
 * their points, in parallel; then internal nodes from their children in
 * reverse preorder, where children come after their parent. */
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
