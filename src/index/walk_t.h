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
 * Instantiated per search: include with
 *   WALK_NAME          the function to define: void WALK_NAME(const
 *                      grove__node *node, WALK_CTX *c, WALK_BOUND root),
 *                      root the lower bound of node 0
 *   WALK_CTX           the search's state
 *   WALK_BOUND         the type of lower bounds (compared with <=)
 *   WALK_KEEP(c, k, b) whether node k, of lower bound b, can still hold
 *                      anything (the prune test)
 *   WALK_LOWER(c, k)   a lower bound for node k (a child, from its box)
 *   WALK_VISIT(c, nd)  search the points of the leaf nd
 * defined; they are undefined at the end, and no include guard. */

static inline GROVE__ALWAYS_INLINE void WALK_NAME(const grove__node *node, WALK_CTX *c, WALK_BOUND root)
{
    uint32_t stack_node[GROVE__TREE_MAX_DEPTH];
    WALK_BOUND stack_lb[GROVE__TREE_MAX_DEPTH];
    size_t top = 0;
    uint32_t cur = 0;
    WALK_BOUND lb = root;
    for (;;) {
        if (WALK_KEEP(c, cur, lb)) {
            const grove__node *nd = &node[cur];
            if (nd->right) {
                uint32_t l = cur + 1, r = nd->right;
                WALK_BOUND dl = WALK_LOWER(c, l), dr = WALK_LOWER(c, r);
                int left_first = dl <= dr;
                stack_node[top] = left_first ? r : l;
                stack_lb[top++] = left_first ? dr : dl;
                cur = left_first ? l : r;
                lb = left_first ? dl : dr;
                continue;
            }
            WALK_VISIT(c, nd);
        }
        if (top == 0) break;
        top--;
        cur = stack_node[top];
        lb = stack_lb[top];
    }
}

#undef WALK_NAME
#undef WALK_CTX
#undef WALK_BOUND
#undef WALK_KEEP
#undef WALK_LOWER
#undef WALK_VISIT
