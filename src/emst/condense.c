/* The condensed tree (Campello et al.; the `hdbscan` library's
 * condense_tree): walk the hierarchy breadth first from the root; a merge
 * whose two sides both hold at least min_cluster_size points splits its
 * cluster into two new ones; a side smaller than that falls out of the
 * cluster point by point at the merge's lambda = 1 / distance, and the
 * cluster continues in the larger side. */
#include "hdbscan_internal.h"

#include <math.h>

void grove__condensed_free(grove__condensed *c)
{
    grove__free(c->parent);
    grove__free(c->child);
    grove__free(c->child_size);
    grove__free(c->lambda);
    memset(c, 0, sizeof *c);
}

static void add_row(grove__condensed *c, size_t parent, size_t child, double lambda, size_t size)
{
    c->parent[c->rows] = parent;
    c->child[c->rows] = child;
    c->lambda[c->rows] = lambda;
    c->child_size[c->rows] = size;
    c->rows++;
}

/* Every point below hierarchy node `top` leaves cluster `parent` at
 * `lambda`; the merges below are marked done. */
static void fall_out(const grove__linkage *l, grove__condensed *c, size_t top, size_t parent, double lambda,
                     uint8_t *done, size_t *stack)
{
    size_t n = l->n, depth = 0;
    stack[depth++] = top;
    while (depth) {
        size_t node = stack[--depth];
        if (node < n) {
            add_row(c, parent, node, lambda, 1);
            continue;
        }
        done[node - n] = 1;
        stack[depth++] = l->right[node - n];
        stack[depth++] = l->left[node - n];
    }
}

grove_status grove__condense(const grove__linkage *l, size_t min_cluster_size, grove__condensed *out)
{
    memset(out, 0, sizeof *out);
    size_t n = l->n, m = n - 1, cap = 2 * n;
    out->n = n;
    out->parent = grove__malloc(cap * sizeof *out->parent, "condensed tree");
    out->child = grove__malloc(cap * sizeof *out->child, "condensed tree");
    out->child_size = grove__malloc(cap * sizeof *out->child_size, "condensed tree");
    out->lambda = grove__malloc(cap * sizeof *out->lambda, "condensed tree");
    size_t *order = grove__malloc(m * sizeof *order, "condensed tree");     /* merges, breadth first */
    size_t *relabel = grove__malloc(m * sizeof *relabel, "condensed tree"); /* merge -> cluster */
    size_t *stack = grove__malloc(n * sizeof *stack, "condensed tree");
    uint8_t *done = grove__calloc(m, 1, "condensed tree");
    if (!out->parent || !out->child || !out->child_size || !out->lambda || !order || !relabel || !stack || !done) {
        grove__free(order);
        grove__free(relabel);
        grove__free(stack);
        grove__free(done);
        grove__condensed_free(out);
        return GROVE_OUT_OF_MEMORY;
    }
    /* Breadth-first order of the merges, left before right (the library's
     * bfs_from_hierarchy), which fixes the cluster numbering. */
    size_t head = 0, tail = 0;
    order[tail++] = m - 1;
    while (head < tail) {
        size_t j = order[head++];
        if (l->left[j] >= n) order[tail++] = l->left[j] - n;
        if (l->right[j] >= n) order[tail++] = l->right[j] - n;
    }
    size_t next = n + 1;
    relabel[m - 1] = n;
    for (size_t i = 0; i < m; i++) {
        size_t j = order[i];
        if (done[j]) continue;
        size_t left = l->left[j], right = l->right[j], cluster = relabel[j];
        double lambda = l->delta[j] > 0 ? 1.0 / l->delta[j] : (double)INFINITY;
        size_t lc = left >= n ? l->size[left - n] : 1, rc = right >= n ? l->size[right - n] : 1;
        bool lbig = lc >= min_cluster_size, rbig = rc >= min_cluster_size;
        if (lbig && rbig) {
            /* Both sides are clusters; points never reach here with
             * min_cluster_size >= 2, so both sides are merges. */
            relabel[left - n] = next;
            add_row(out, cluster, next++, lambda, lc);
            relabel[right - n] = next;
            add_row(out, cluster, next++, lambda, rc);
            continue;
        }
        if (!lbig) fall_out(l, out, left, cluster, lambda, done, stack);
        if (!rbig) fall_out(l, out, right, cluster, lambda, done, stack);
        if (lbig) relabel[left - n] = cluster;
        if (rbig) relabel[right - n] = cluster;
    }
    out->clusters = next - n;
    grove__free(order);
    grove__free(relabel);
    grove__free(stack);
    grove__free(done);
    return GROVE_OK;
}
