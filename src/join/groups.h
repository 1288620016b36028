/* The group search's output (internal): the leaf groups of an index within
 * reach of a query box, found by FN(gather_groups) (gather_t.h), which the
 * join's passes and the pair counts (src/paircount) share. */
#ifndef GROVE_JOIN_GROUPS_H
#define GROVE_JOIN_GROUPS_H

#include "../index/search_index.h"

/* The group search's stack: it pushes both children of a node, so one
 * entry per level and one more. */
#define GROVE__GROUP_STACK (GROVE__TREE_MAX_DEPTH + 1)

/* Leaf node numbers, in the order the walk meets them (node order), and
 * the scratch the walk needs; grown as needed, freed with
 * grove__join_groups_free. */
typedef struct grove__join_groups {
    uint32_t *node;
    size_t count, cap;
    uint32_t stack[GROVE__GROUP_STACK];
} grove__join_groups;

/* Append leaf k (grows the list; GROVE_OUT_OF_MEMORY when it cannot). */
static inline grove_status grove__join_groups_push(grove__join_groups *g, uint32_t k)
{
    if (g->count == g->cap) {
        size_t cap = g->cap ? 2 * g->cap : 256;
        uint32_t *grown = grove__realloc(g->node, cap * sizeof *grown, "join group list");
        if (!grown) return GROVE_OUT_OF_MEMORY;
        g->node = grown;
        g->cap = cap;
    }
    g->node[g->count++] = k;
    return GROVE_OK;
}

static inline void grove__join_groups_free(grove__join_groups *g)
{
    grove__free(g->node);
    g->node = NULL;
    g->count = g->cap = 0;
}

#endif
