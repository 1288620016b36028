/* The group search, instantiated per coordinate type and metric (include
 * with T, FN(name) and JOIN_PERIODIC defined, after dist_t.h): the leaf
 * groups of the data's kd-tree whose boxes are within a pruning radius of
 * a query box. The join gathers their points as candidates (join_t.h); the
 * pair counts take them group by group (src/paircount). */

/* The leaf groups of D with node number >= first whose key boxes are
 * within prune2 (squared, in the index's units) of qbox (lo[m] then hi[m]
 * over D's m key dimensions, minimum images in a periodic box), in node
 * order, into out (emptied first). */
static grove_status FN(gather_groups)(const grove_index *D, const T *qbox, double prune2, uint32_t first,
                                      grove__join_groups *out)
{
    size_t m = D->tree.dims, top = 0;
    const T *box = D->tree.box, *per = D->period;
    uint32_t *stack = out->stack;
    out->count = 0;
    if (D->tree.nodes) stack[top++] = 0;
    while (top) {
        uint32_t k = stack[--top];
        if ((double)FN(box_box2)(box + (size_t)k * 2 * m, qbox, m, per) > prune2) continue;
        const grove__node *nd = &D->tree.node[k];
        if (nd->right) {
            /* Every node of the left subtree comes before the right child. */
            stack[top++] = nd->right;
            if (nd->right > first) stack[top++] = k + 1;
            continue;
        }
        if (k < first) continue;
        if (grove__join_groups_push(out, k) != GROVE_OK) return GROVE_OUT_OF_MEMORY;
    }
    return GROVE_OK;
}
