/* Borůvka's merge phase. Each active component c has chosen its smallest
 * outgoing edge, pointing at component parent[c]. Those pointers form trees
 * whose roots are 2-cycles (two components choosing the same edge); the
 * smaller id of each pair becomes the root, pointer jumping finds every
 * component's root in O(log) parallel rounds, and labels follow. */
#include "emst_internal.h"

#include "parallel.h"

/* Pointer jumping over the active components until every one points at
 * its root (parent and jump are swapped in place). */
static void find_roots(grove__boruvka *b)
{
    const uint32_t *comps = b->comps;
    size_t m = b->ncomps;
    for (;;) {
        /* A shared flag set atomically, not a reduction clause (which some
         * compilers implement with an exported lock symbol). */
        int changed = 0;
#pragma omp parallel for num_threads(b->threads) schedule(static)
        for (size_t i = 0; i < m; i++) {
            uint32_t c = comps[i], up = b->jump[c], upup = b->jump[up];
            b->parent[c] = upup;
            if (upup != up) {
#pragma omp atomic write
                changed = 1;
            }
        }
        uint32_t *t = b->jump;
        b->jump = b->parent;
        b->parent = t;
        if (!changed) break;
    }
}

/* Node labels: a node stays uniform once uniform (components only merge),
 * so uniform nodes are renamed in parallel; the rest are recomputed, leaves
 * from their points, internal nodes from their children in reverse
 * preorder (children come after their parent in preorder). */
static void update_node_labels(grove__boruvka *b)
{
    const grove__tree *t = b->t;
    const grove__node *node = t->node;
    uint32_t *nl = b->node_label;
    size_t nodes = t->nodes;
#pragma omp parallel for num_threads(b->threads) schedule(static, 4096)
    for (size_t k = 0; k < nodes; k++) {
        if (nl[k] != GROVE__NONE) {
            nl[k] = b->jump[nl[k]];
        } else if (!node[k].right) {
            uint32_t first = b->label[node[k].begin], same = 1;
            for (uint32_t i = node[k].begin + 1; i < node[k].end; i++) same &= b->label[i] == first;
            nl[k] = same ? first : GROVE__NONE;
        }
    }
    for (size_t k = nodes; k-- > 0;) {
        if (!node[k].right || nl[k] != GROVE__NONE) continue;
        uint32_t l = nl[k + 1], r = nl[node[k].right];
        if (l == r) nl[k] = l;
    }
}

/* The component of comps that found no outgoing edge, or NONE. The search
 * always finds one (the nearest point of another component), so this is an
 * internal error, but it must not become a read out of bounds. */
static uint32_t orphan(const grove__boruvka *b)
{
    int found = 0;
#pragma omp parallel for num_threads(b->threads) schedule(static)
    for (size_t i = 0; i < b->ncomps; i++)
        if (atomic_load_explicit(&b->best[b->comps[i]], memory_order_relaxed) == GROVE__NONE) {
#pragma omp atomic write
            found = 1;
        }
    for (size_t i = 0; found && i < b->ncomps; i++)
        if (atomic_load_explicit(&b->best[b->comps[i]], memory_order_relaxed) == GROVE__NONE) return b->comps[i];
    return GROVE__NONE;
}

grove_status grove__boruvka_merge(grove__boruvka *b)
{
    const uint32_t *comps = b->comps, *perm = b->t->perm;
    size_t m = b->ncomps;
    uint32_t lone = orphan(b);
    if (lone != GROVE__NONE)
        return grove__fail(GROVE_INTERNAL, "EMST: the component of row %u found no edge to the other %zu components",
                           perm[lone], m - 1);
#pragma omp parallel for num_threads(b->threads) schedule(static)
    for (size_t i = 0; i < m; i++) {
        uint32_t c = comps[i], p = atomic_load_explicit(&b->best[c], memory_order_relaxed);
        b->parent[c] = b->label[b->cand_q[p]];
    }
    /* Break each 2-cycle at its smaller id; every other component's chosen
     * edge is new (a pair shares one edge, added once, by the larger id). */
    size_t base = b->nedges, added = 0;
#pragma omp parallel for num_threads(b->threads) schedule(static)
    for (size_t i = 0; i < m; i++) {
        uint32_t c = comps[i], up = b->parent[c];
        b->jump[c] = (b->parent[up] == c && c < up) ? c : up;
        b->is_root[c] = b->jump[c] == c;
    }
#pragma omp parallel for num_threads(b->threads) schedule(static)
    for (size_t i = 0; i < m; i++) {
        uint32_t c = comps[i];
        if (b->is_root[c]) continue;
        uint32_t p = atomic_load_explicit(&b->best[c], memory_order_relaxed);
        size_t at;
#pragma omp atomic capture
        at = added++;
        uint32_t u = perm[p], v = perm[b->cand_q[p]];
        b->eu[base + at] = u < v ? u : v;
        b->ev[base + at] = u < v ? v : u;
        b->ew[base + at] = b->cand_w[p];
    }
    b->nedges = base + added;
    find_roots(b);
    size_t n = b->t->n;
#pragma omp parallel for num_threads(b->threads) schedule(static)
    for (size_t p = 0; p < n; p++) b->label[p] = b->jump[b->label[p]];
    update_node_labels(b);
    /* The roots are the next round's components, in ascending id (is_root
     * is 0 for every id that is no longer a component). */
    b->ncomps = grove__compact_u32(b->is_root, n, b->comps, b->threads);
    return GROVE_OK;
}
