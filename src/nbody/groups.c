/* Groups of sinks that walk the tree together, built from the active
 * particles only (Bonsai's block steps: an evaluation for a few sinks
 * walks once per group of them, not once per group of all particles).
 *
 * The sinks are the active particles in tree order (g->sink). A group
 * starts as a tree cell holding 1..ncrit active particles whose parent
 * holds more (so it is compact in space); consecutive such cells with the
 * same parent are merged while their active total stays within ncrit, so
 * groups are nearly full without straddling a jump of the Morton curve
 * between distant cells. With every particle active the sinks are 0..n-1
 * and the groups are those of the plain counts. */
#include "nbody_internal.h"

/* The sink list and g->first[i] = active particles before tree position i
 * (n + 1 entries), so a cell [b, e) holds first[e] - first[b] sinks, the
 * first of them sink first[b]. Returns the number of sinks. */
static size_t list_sinks(grove__gravity *g, const uint8_t *active)
{
    const grove__octree *t = &g->tree;
    size_t m = 0;
    for (size_t i = 0; i < t->n; i++) {
        g->first[i] = (uint32_t)m;
        if (!active || active[t->order[i]]) g->sink[m++] = (uint32_t)i;
    }
    g->first[t->n] = (uint32_t)m;
    return m;
}

void grove__nb_groups(grove__gravity *g, size_t ncrit, const uint8_t *active)
{
    const grove__octree *t = &g->tree;
    size_t m = g->nsinks = list_sinks(g, active);
    const uint32_t *first = g->first;
    uint32_t *mark = g->mark; /* per sink: group candidates (parent + 1) */
    for (size_t j = 0; j < m; j++) mark[j] = 0;
    for (size_t k = 0; k < t->ncells; k++) {
        const grove__ocell *c = &t->cell[k];
        size_t count = first[c->end] - first[c->begin];
        bool parent_big = k == 0 || first[t->cell[c->parent].end] - first[t->cell[c->parent].begin] > ncrit;
        if (count > 0 && count <= ncrit && parent_big) mark[first[c->begin]] = c->parent + 1;
    }
    /* A leaf with more than ncrit sinks (only at the deepest level) is cut
     * into pieces of ncrit, each marked as a candidate of its own. */
    for (size_t k = 0; k < t->ncells; k++) {
        const grove__ocell *c = &t->cell[k];
        if (c->nchild == 0 && first[c->end] - first[c->begin] > ncrit)
            for (size_t j = first[c->begin]; j < first[c->end]; j += ncrit) mark[j] = UINT32_MAX;
    }
    size_t groups = 0, start = 0;
    uint32_t parent = m ? mark[0] : 0;
    /* group[] has room for m + 1 offsets (a group holds at least one). */
    for (size_t j = 1; j <= m; j++) {
        if (j < m && !mark[j]) continue;
        /* A candidate starts at j: merge it into the open group if it is a
         * sibling and the sum fits. */
        size_t next_end = j;
        if (j < m) {
            next_end = j + 1;
            while (next_end < m && !mark[next_end]) next_end++;
        }
        bool merge = j < m && mark[j] == parent && parent != UINT32_MAX && next_end - start <= ncrit;
        if (!merge) {
            g->group[groups++] = (uint32_t)start;
            start = j;
            if (j < m) parent = mark[j];
        }
    }
    g->group[groups] = (uint32_t)m;
    g->ngroups = groups;
}
