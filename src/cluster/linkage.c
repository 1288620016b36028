/* Single-linkage hierarchy from a sorted spanning tree: edges in order
 * join the union-find roots of their ends into a new node (scipy format,
 * as the `hdbscan` library's label()), the side nearer point 0 on the
 * left; and the hierarchy the condensed tree is built from, with
 * equal-distance merges folded together on request. */
#include "hdbscan_internal.h"

void grove__linkage_free(grove__linkage *l)
{
    grove__free(l->left);
    grove__free(l->right);
    grove__free(l->size);
    grove__free(l->delta);
    memset(l, 0, sizeof *l);
}

/* near[e] = the end of edge e (0 or 1) nearer point 0 in the tree, by a
 * breadth-first walk from point 0. The peers (scikit-learn's HDBSCAN, the
 * `hdbscan` library's generic and Prim algorithms) build the tree by
 * Prim's algorithm from point 0, which adds that end first, and their
 * single linkage puts the component of the end added first on the left;
 * the left child is the first to get a cluster id in the condensed tree,
 * so this orientation makes the cluster numbers theirs. Edges the walk
 * does not reach (the edges close a cycle, which linkage_build refuses)
 * keep 0. */
static grove_status near_ends(size_t n, const int64_t *edges, uint8_t *near)
{
    size_t m = n - 1;
    size_t *first = grove__calloc(n + 1, sizeof *first, "single linkage");
    size_t *incident = grove__malloc(2 * m * sizeof *incident, "single linkage");
    size_t *queue = grove__malloc(n * sizeof *queue, "single linkage");
    uint8_t *seen = grove__calloc(n, 1, "single linkage");
    grove_status s = first && incident && queue && seen ? GROVE_OK : GROVE_OUT_OF_MEMORY;
    if (s == GROVE_OK) {
        /* Each point's edges as CSR (a counting sort). */
        for (size_t e = 0; e < 2 * m; e++) first[edges[e]]++;
        for (size_t i = 1; i <= n; i++) first[i] += first[i - 1];
        for (size_t e = 2 * m; e-- > 0;) incident[--first[edges[e]]] = e / 2;
        memset(near, 0, m);
        size_t head = 0, tail = 0;
        queue[tail++] = 0;
        seen[0] = 1;
        while (head < tail) {
            size_t a = queue[head++];
            for (size_t i = first[a]; i < first[a + 1]; i++) {
                size_t e = incident[i], far = (size_t)edges[2 * e] == a, b = (size_t)edges[2 * e + far];
                if (seen[b]) continue;
                seen[b] = 1;
                near[e] = (uint8_t)!far;
                queue[tail++] = b;
            }
        }
    }
    grove__free(first);
    grove__free(incident);
    grove__free(queue);
    grove__free(seen);
    return s;
}

grove_status grove__linkage_build(size_t n, const int64_t *edges, const double *weights, grove__linkage *out)
{
    memset(out, 0, sizeof *out);
    out->n = n;
    size_t m = n - 1, nodes = 2 * n - 1;
    uint8_t *near = grove__malloc(m, "single linkage");
    grove_status s = near ? near_ends(n, edges, near) : GROVE_OUT_OF_MEMORY;
    if (s != GROVE_OK) {
        grove__free(near);
        return s;
    }
    size_t *up = grove__malloc(nodes * sizeof *up, "single linkage");
    size_t *count = grove__malloc(nodes * sizeof *count, "single linkage");
    out->left = grove__malloc(m * sizeof *out->left, "single linkage");
    out->right = grove__malloc(m * sizeof *out->right, "single linkage");
    out->size = grove__malloc(m * sizeof *out->size, "single linkage");
    out->delta = grove__malloc(m * sizeof *out->delta, "single linkage");
    if (!up || !count || !out->left || !out->right || !out->size || !out->delta) s = GROVE_OUT_OF_MEMORY;
    for (size_t i = 0; s == GROVE_OK && i < nodes; i++) up[i] = i, count[i] = 1;
    for (size_t i = 0; s == GROVE_OK && i < m; i++) {
        size_t root[2];
        for (int side = 0; side < 2; side++) {
            /* root[0]: the component of the end nearer point 0. */
            size_t end = (size_t)edges[2 * i + (side ^ near[i])], r = end;
            while (up[r] != r) r = up[r];
            /* Path compression: point the whole path at the root. */
            for (size_t p = end; up[p] != r;) {
                size_t next = up[p];
                up[p] = r;
                p = next;
            }
            root[side] = r;
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
    grove__free(near);
    grove__free(up);
    grove__free(count);
    if (s != GROVE_OK) grove__linkage_free(out);
    return s;
}

void grove__dendrogram_free(grove__dendrogram *h)
{
    grove__free(h->first);
    grove__free(h->kids);
    grove__free(h->left);
    grove__free(h->right);
    grove__free(h->size);
    grove__free(h->delta);
    memset(h, 0, sizeof *h);
}

/* Equal-distance merges folded into their parents. A merge is absorbed
 * when its parent merges at the same distance; each merge that is not
 * becomes a node whose children are the non-absorbed children of its
 * group, found breadth first (left before right) from the group's top. */
static grove_status simultaneous(const grove__linkage *l, grove__dendrogram *h)
{
    size_t n = l->n, m = n - 1;
    size_t *parent = grove__malloc(m * sizeof *parent, "HDBSCAN ties");
    size_t *index = grove__malloc(m * sizeof *index, "HDBSCAN ties");
    size_t *queue = grove__malloc(m * sizeof *queue, "HDBSCAN ties");
    uint8_t *absorbed = grove__malloc(m, "HDBSCAN ties");
    grove_status s = parent && index && queue && absorbed ? GROVE_OK : GROVE_OUT_OF_MEMORY;
    size_t nodes = 0;
    if (s == GROVE_OK) {
        parent[m - 1] = m;
        for (size_t j = 0; j < m; j++) {
            if (l->left[j] >= n) parent[l->left[j] - n] = j;
            if (l->right[j] >= n) parent[l->right[j] - n] = j;
        }
        for (size_t j = 0; j < m; j++) {
            absorbed[j] = parent[j] < m && l->delta[parent[j]] == l->delta[j];
            if (!absorbed[j]) index[j] = nodes++;
        }
        h->n = n;
        h->nodes = nodes;
        h->first = grove__malloc((nodes + 1) * sizeof *h->first, "HDBSCAN hierarchy");
        h->kids = grove__malloc((n + nodes - 1) * sizeof *h->kids, "HDBSCAN hierarchy");
        h->size = grove__malloc(nodes * sizeof *h->size, "HDBSCAN hierarchy");
        h->delta = grove__malloc(nodes * sizeof *h->delta, "HDBSCAN hierarchy");
        if (!h->first || !h->kids || !h->size || !h->delta) s = GROVE_OUT_OF_MEMORY;
    }
    size_t filled = 0;
    for (size_t j = 0; s == GROVE_OK && j < m; j++) {
        if (absorbed[j]) continue;
        size_t node = index[j], head = 0, tail = 0;
        h->first[node] = filled;
        h->size[node] = l->size[j];
        h->delta[node] = l->delta[j];
        queue[tail++] = j;
        while (head < tail) {
            size_t g = queue[head++], side[2] = {l->left[g], l->right[g]};
            for (int e = 0; e < 2; e++) {
                size_t c = side[e];
                if (c >= n && absorbed[c - n]) queue[tail++] = c - n;
                else h->kids[filled++] = c < n ? c : n + index[c - n];
            }
        }
    }
    if (s == GROVE_OK) h->first[nodes] = filled;
    grove__free(parent);
    grove__free(index);
    grove__free(queue);
    grove__free(absorbed);
    return s;
}

grove_status grove__dendrogram_build(grove__linkage *l, grove_hdbscan_ties ties, grove__dendrogram *out)
{
    memset(out, 0, sizeof *out);
    grove_status s = GROVE_OK;
    if (ties == GROVE_HDBSCAN_TIES_SIMULTANEOUS) {
        s = simultaneous(l, out);
        if (s != GROVE_OK) grove__dendrogram_free(out);
        grove__linkage_free(l);
        return s;
    }
    /* Binary: the linkage's arrays as they are. */
    out->n = l->n;
    out->nodes = l->n - 1;
    out->left = l->left;
    out->right = l->right;
    out->size = l->size;
    out->delta = l->delta;
    memset(l, 0, sizeof *l);
    return s;
}
