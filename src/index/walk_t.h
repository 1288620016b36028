/* The tree walk every search of the library shares (kNN on a grove__tree,
 * kNN on the join's index, Borůvka's nearest other component): depth
 * first through a grove__node tree in preorder, at each internal node the
 * child with the smaller lower bound first (the left one on a tie), the
 * other kept on a stack with its bound. A node is tested when it is
 * reached, not when it is pushed, so it meets the latest bound of the
 * search. The stack holds one entry per level: GROVE__TREE_MAX_DEPTH
 * entries, on the thread's own stack, for any tree that was built (builds
 * refuse deeper trees).
 *
 * Instantiated per search: include with WALK(name) defined to give the
 * search's names (e.g. FN(knn_##name)) and WALK_BOUND the type of its lower
 * bounds (compared with <=); the search provides
 *   WALK(search)                 its state, a type
 *   int WALK(keep)(const WALK(search) *s, uint32_t k, WALK_BOUND lb)
 *                                whether node k, of lower bound lb, can
 *                                still hold anything (the prune test)
 *   WALK_BOUND WALK(lower)(const WALK(search) *s, uint32_t k)
 *                                a lower bound for node k (a child, from
 *                                its box)
 *   void WALK(visit)(WALK(search) *s, const grove__node *nd)
 *                                search the points of the leaf nd
 * and gets void WALK(walk)(const grove__node *node, WALK(search) *s,
 * WALK_BOUND root), root the lower bound of node 0. Both macros are
 * undefined at the end; no include guard. */

static inline GROVE__ALWAYS_INLINE void WALK(walk)(const grove__node *node, WALK(search) *s, WALK_BOUND root)
{
    uint32_t stack_node[GROVE__TREE_MAX_DEPTH];
    WALK_BOUND stack_lb[GROVE__TREE_MAX_DEPTH];
    size_t top = 0;
    uint32_t cur = 0;
    WALK_BOUND lb = root;
    for (;;) {
        if (WALK(keep)(s, cur, lb)) {
            const grove__node *nd = &node[cur];
            if (nd->right) {
                uint32_t l = cur + 1, r = nd->right;
                WALK_BOUND dl = WALK(lower)(s, l), dr = WALK(lower)(s, r);
                int left_first = dl <= dr;
                stack_node[top] = left_first ? r : l;
                stack_lb[top++] = left_first ? dr : dl;
                cur = left_first ? l : r;
                lb = left_first ? dl : dr;
                continue;
            }
            WALK(visit)(s, nd);
        }
        if (top == 0) break;
        top--;
        cur = stack_node[top];
        lb = stack_lb[top];
    }
}

#undef WALK
#undef WALK_BOUND
