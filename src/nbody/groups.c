/* Groups of sinks that walk the tree together. A group starts as a tree
 * cell of at most ncrit particles whose parent has more (so it is compact
 * in space); consecutive such cells with the same parent are merged while
 * the total stays within ncrit, so groups are nearly full without
 * straddling a jump of the Morton curve between distant cells. */
#include "nbody_internal.h"

void grove__nb_groups(grove__gravity *g, size_t ncrit)
{
    const grove__octree *t = &g->tree;
    size_t n = t->n;
    uint32_t *mark = g->mark;
    for (size_t i = 0; i < n; i++) mark[i] = 0;
    for (size_t k = 0; k < t->ncells; k++) {
        const grove__ocell *c = &t->cell[k];
        size_t count = c->end - c->begin;
        bool parent_big = k == 0 || t->cell[c->parent].end - t->cell[c->parent].begin > ncrit;
        if (count <= ncrit && parent_big) mark[c->begin] = c->parent + 1;
    }
    /* A leaf larger than ncrit (only at the deepest level) is cut into
     * pieces of ncrit, each marked as a candidate of its own. */
    for (size_t k = 0; k < t->ncells; k++) {
        const grove__ocell *c = &t->cell[k];
        if (c->nchild == 0 && c->end - c->begin > ncrit)
            for (size_t i = c->begin; i < c->end; i += ncrit) mark[i] = UINT32_MAX;
    }
    size_t groups = 0, start = 0;
    uint32_t parent = mark[0];
    /* group[] has room for n + 1 offsets (a group holds at least one). */
    for (size_t i = 1; i <= n; i++) {
        if (i < n && !mark[i]) continue;
        /* A candidate starts at i: merge it into the open group if it is a
         * sibling and the sum fits. */
        size_t next_end = i;
        if (i < n) {
            next_end = i + 1;
            while (next_end < n && !mark[next_end]) next_end++;
        }
        bool merge = i < n && mark[i] == parent && parent != UINT32_MAX && next_end - start <= ncrit;
        if (!merge) {
            g->group[groups++] = (uint32_t)start;
            start = i;
            if (i < n) parent = mark[i];
        }
    }
    g->group[groups] = (uint32_t)n;
    g->ngroups = groups;
}
