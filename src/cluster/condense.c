/* The condensed tree (Campello et al.; the `hdbscan` library's
 * condense_tree): walk the hierarchy breadth first from the root; a merge
 * with at least two children of min_cluster_size points or more splits its
 * cluster into those children, new clusters born at lambda = 1 / distance;
 * smaller children fall out of the cluster point by point at that lambda,
 * and a cluster with one large child continues in it. For the binary
 * hierarchy this is the library's procedure row for row. */
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

void grove__condensed_shrink(grove__condensed *c)
{
    size_t rows = c->rows ? c->rows : 1;
    size_t *parent = grove__realloc(c->parent, rows * sizeof *parent, "condensed tree");
    size_t *child = grove__realloc(c->child, rows * sizeof *child, "condensed tree");
    size_t *size = grove__realloc(c->child_size, rows * sizeof *size, "condensed tree");
    double *lambda = grove__realloc(c->lambda, rows * sizeof *lambda, "condensed tree");
    /* A failed shrink keeps the larger block, which is as good: not an
     * error. */
    if (!parent || !child || !size || !lambda) grove__clear_error();
    if (parent) c->parent = parent;
    if (child) c->child = child;
    if (size) c->child_size = size;
    if (lambda) c->lambda = lambda;
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
 * `lambda`, in breadth-first order (the library's bfs_from_hierarchy); the
 * merges below are marked done. */
static void fall_out(const grove__dendrogram *h, grove__condensed *c, size_t top, size_t parent, double lambda,
                     uint8_t *done, size_t *queue)
{
    size_t n = h->n, head = 0, tail = 0;
    queue[tail++] = top;
    while (head < tail) {
        size_t node = queue[head++];
        if (node < n) {
            add_row(c, parent, node, lambda, 1);
            continue;
        }
        done[node - n] = 1;
        for (size_t i = 0, kids = grove__kid_count(h, node - n); i < kids; i++)
            queue[tail++] = grove__kid(h, node - n, i);
    }
}

static size_t points_below(const grove__dendrogram *h, size_t node)
{
    return node >= h->n ? h->size[node - h->n] : 1;
}

grove_status grove__condense(const grove__dendrogram *h, size_t min_cluster_size, grove__condensed *out)
{
    memset(out, 0, sizeof *out);
    /* Rows: every point once, every cluster but the root once; at most
     * n / min_cluster_size leaves, each split has two children or more. */
    size_t n = h->n, m = h->nodes, cap = n + 2 * (n / min_cluster_size) + 1;
    out->n = n;
    out->parent = grove__malloc(cap * sizeof *out->parent, "condensed tree");
    out->child = grove__malloc(cap * sizeof *out->child, "condensed tree");
    out->child_size = grove__malloc(cap * sizeof *out->child_size, "condensed tree");
    out->lambda = grove__malloc(cap * sizeof *out->lambda, "condensed tree");
    size_t *order = grove__malloc(m * sizeof *order, "condensed tree");     /* merges, breadth first */
    size_t *relabel = grove__malloc(m * sizeof *relabel, "condensed tree"); /* merge -> cluster */
    size_t *queue = grove__malloc((n + m) * sizeof *queue, "condensed tree");
    uint8_t *done = grove__calloc(m, 1, "condensed tree");
    if (!out->parent || !out->child || !out->child_size || !out->lambda || !order || !relabel || !queue || !done) {
        grove__free(order);
        grove__free(relabel);
        grove__free(queue);
        grove__free(done);
        grove__condensed_free(out);
        return GROVE_OUT_OF_MEMORY;
    }
    /* Breadth-first order of the merges, children in order (the library's
     * bfs_from_hierarchy), which fixes the cluster numbering. */
    size_t head = 0, tail = 0;
    order[tail++] = m - 1;
    while (head < tail) {
        size_t j = order[head++];
        for (size_t i = 0, kids = grove__kid_count(h, j); i < kids; i++)
            if (grove__kid(h, j, i) >= n) order[tail++] = grove__kid(h, j, i) - n;
    }
    size_t next = n + 1;
    relabel[m - 1] = n;
    for (size_t at = 0; at < m; at++) {
        size_t j = order[at];
        if (done[j]) continue;
        size_t cluster = relabel[j], big = 0, kids = grove__kid_count(h, j);
        double lambda = h->delta[j] > 0 ? 1.0 / h->delta[j] : (double)INFINITY;
        for (size_t i = 0; i < kids; i++) big += points_below(h, grove__kid(h, j, i)) >= min_cluster_size;
        /* Large children are merges (min_cluster_size >= 2): they become
         * clusters when two or more, else the one continues the cluster. */
        for (size_t i = 0; i < kids; i++) {
            size_t kid = grove__kid(h, j, i), size = points_below(h, kid);
            if (size < min_cluster_size) continue;
            if (big >= 2) {
                relabel[kid - n] = next;
                add_row(out, cluster, next++, lambda, size);
            } else {
                relabel[kid - n] = cluster;
            }
        }
        for (size_t i = 0; i < kids; i++)
            if (points_below(h, grove__kid(h, j, i)) < min_cluster_size)
                fall_out(h, out, grove__kid(h, j, i), cluster, lambda, done, queue);
    }
    out->clusters = next - n;
    grove__condensed_shrink(out);
    grove__free(order);
    grove__free(relabel);
    grove__free(queue);
    grove__free(done);
    return GROVE_OK;
}
