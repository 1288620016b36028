/* dbscan_clustering: the `hdbscan` library's labelling_at_cut over the
 * single-linkage tree, with its union-find (union by rank, ties to the
 * first argument), whose roots decide the label order. */
#include "hdbscan_internal.h"

typedef struct union_find {
    size_t *up, *rank;
} union_find;

static size_t find(const union_find *u, size_t x)
{
    size_t root = x;
    while (u->up[root] != root) root = u->up[root];
    while (u->up[x] != root) {
        size_t next = u->up[x];
        u->up[x] = root;
        x = next;
    }
    return root;
}

static void unite(union_find *u, size_t x, size_t y)
{
    size_t a = find(u, x), b = find(u, y);
    if (u->rank[a] < u->rank[b]) {
        u->up[a] = b;
    } else if (u->rank[a] > u->rank[b]) {
        u->up[b] = a;
    } else {
        u->up[b] = a;
        u->rank[a]++;
    }
}

grove_status grove_hdbscan_model_dbscan(const grove_hdbscan_model *m, double cut_distance, size_t min_cluster_size,
                                        int64_t *labels)
{
    grove__clear_error();
    if (!m) return grove__fail(GROVE_INVALID_ARGUMENT, "HDBSCAN dbscan clustering: model is NULL");
    size_t n = m->n;
    if (n > 0 && !labels) return grove__fail(GROVE_INVALID_ARGUMENT, "HDBSCAN dbscan clustering: labels is NULL");
    if (cut_distance != cut_distance)
        return grove__fail(GROVE_INVALID_ARGUMENT, "HDBSCAN dbscan clustering: cut_distance is NaN");
    if (n < 2) {
        if (n == 1) labels[0] = min_cluster_size <= 1 ? 0 : -1;
        return GROVE_OK;
    }
    grove__linkage l;
    grove_status s = grove__linkage_build(n, m->edges, m->weights, &l);
    if (s != GROVE_OK) return s;
    size_t nodes = 2 * n - 1;
    union_find u = {grove__malloc(nodes * sizeof *u.up, "dbscan clustering"),
                    grove__calloc(nodes, sizeof *u.rank, "dbscan clustering")};
    size_t *size = grove__calloc(nodes, sizeof *size, "dbscan clustering");
    if (!u.up || !u.rank || !size) s = GROVE_OUT_OF_MEMORY;
    if (s == GROVE_OK) {
        for (size_t i = 0; i < nodes; i++) u.up[i] = i;
        double cut = grove__scale_distance(cut_distance, m->exponent);
        for (size_t i = 0; i + 1 < n; i++)
            if (l.delta[i] < cut) {
                unite(&u, l.left[i], n + i);
                unite(&u, l.right[i], n + i);
            }
        for (size_t i = 0; i < n; i++) size[find(&u, i)]++;
        /* Labels in ascending root id (the library's np.unique), reusing
         * `rank` as the root -> label map. */
        int64_t next = 0;
        for (size_t r = 0; r < nodes; r++)
            if (size[r]) u.rank[r] = size[r] < min_cluster_size ? SIZE_MAX : (size_t)next++;
        for (size_t i = 0; i < n; i++) {
            size_t label = u.rank[find(&u, i)];
            labels[i] = label == SIZE_MAX ? -1 : (int64_t)label;
        }
    }
    grove__free(u.up);
    grove__free(u.rank);
    grove__free(size);
    grove__linkage_free(&l);
    return s;
}
