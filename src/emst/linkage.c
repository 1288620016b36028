/* Single-linkage hierarchy from a sorted spanning tree: edges in order
 * join the union-find roots of their ends into a new node (scipy format,
 * as the `hdbscan` library's label()). */
#include "hdbscan_internal.h"

void grove__linkage_free(grove__linkage *l)
{
    grove__free(l->left);
    grove__free(l->right);
    grove__free(l->size);
    grove__free(l->delta);
    memset(l, 0, sizeof *l);
}

grove_status grove__linkage_build(size_t n, const int64_t *edges, const double *weights, grove__linkage *out)
{
    memset(out, 0, sizeof *out);
    out->n = n;
    size_t m = n - 1, nodes = 2 * n - 1;
    size_t *up = grove__malloc(nodes * sizeof *up, "single linkage");
    size_t *count = grove__malloc(nodes * sizeof *count, "single linkage");
    out->left = grove__malloc(m * sizeof *out->left, "single linkage");
    out->right = grove__malloc(m * sizeof *out->right, "single linkage");
    out->size = grove__malloc(m * sizeof *out->size, "single linkage");
    out->delta = grove__malloc(m * sizeof *out->delta, "single linkage");
    grove_status s = GROVE_OK;
    if (!up || !count || !out->left || !out->right || !out->size || !out->delta) s = GROVE_OUT_OF_MEMORY;
    for (size_t i = 0; s == GROVE_OK && i < nodes; i++) up[i] = i, count[i] = 1;
    for (size_t i = 0; s == GROVE_OK && i < m; i++) {
        size_t root[2];
        for (int e = 0; e < 2; e++) {
            size_t r = (size_t)edges[2 * i + e];
            while (up[r] != r) r = up[r];
            /* Path compression: point the whole path at the root. */
            for (size_t p = (size_t)edges[2 * i + e]; up[p] != r;) {
                size_t next = up[p];
                up[p] = r;
                p = next;
            }
            root[e] = r;
        }
        if (root[0] == root[1]) {
            s = grove__fail(GROVE_INVALID_ARGUMENT, "HDBSCAN: edge %zu (%lld, %lld) closes a cycle: not a spanning tree",
                            i, (long long)edges[2 * i], (long long)edges[2 * i + 1]);
            break;
        }
        size_t node = n + i;
        out->left[i] = root[0];
        out->right[i] = root[1];
        out->delta[i] = weights[i];
        out->size[i] = count[node] = count[root[0]] + count[root[1]];
        up[root[0]] = up[root[1]] = node;
    }
    grove__free(up);
    grove__free(count);
    if (s != GROVE_OK) grove__linkage_free(out);
    return s;
}
