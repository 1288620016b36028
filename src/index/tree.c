/* Index construction shared by the BVH and the kd-tree: pick the builder,
 * then copy the points into tree order and compute the boxes (the one
 * fill, which the join's index uses too). */
#include "index.h"

#include <math.h>
#include <string.h>

#define T float
#define FN(name) name##_f32
#include "tree_fill_t.h"
#undef T
#undef FN
#define T double
#define FN(name) name##_f64
#include "tree_fill_t.h"
#undef T
#undef FN

void grove__tree_fill(grove__tree *tree, grove_points points, double scale, const size_t *order, void *xs,
                      const double *keys_in, void *keys, int threads)
{
    if (tree->dtype == GROVE_FLOAT32) tree_fill_f32(tree, points, scale, order, xs, keys_in, keys, threads);
    else tree_fill_f64(tree, points, scale, order, xs, keys_in, keys, threads);
}

void grove__tree_free(grove__tree *tree)
{
    if (!tree) return;
    grove__free(tree->x);
    grove__free(tree->perm);
    grove__free(tree->node);
    grove__free(tree->box);
    memset(tree, 0, sizeof *tree);
}

grove_status grove__index_size(size_t n, size_t d, size_t elem, size_t min_n, size_t *bytes)
{
    if (n < min_n || n > GROVE__INDEX_MAX_N)
        return grove__fail(GROVE_TOO_LARGE, "index: n = %zu points; %zu to %zu are supported", n, min_n,
                           GROVE__INDEX_MAX_N);
    if (!grove__mul_size(n, d, bytes) || !grove__mul_size(*bytes, elem, bytes))
        return grove__fail(GROVE_TOO_LARGE, "index: %zu x %zu coordinates overflow the address space", n, d);
    return GROVE_OK;
}

grove_status grove__tree_depth_check(int depth, const char *what)
{
    if (depth > GROVE__TREE_MAX_DEPTH)
        return grove__fail(GROVE_INTERNAL, "%s: tree depth %d exceeds %d", what, depth, GROVE__TREE_MAX_DEPTH);
    return GROVE_OK;
}

grove_status grove__tree_build(grove_points points, int exponent, int threads, grove__tree *tree)
{
    memset(tree, 0, sizeof *tree);
    size_t n = points.n, d = points.d, elem = grove_dtype_size(points.dtype), bytes = 0;
    grove_status size = grove__index_size(n, d, elem, 1, &bytes);
    if (size != GROVE_OK) return size;
    tree->n = n;
    tree->d = d;
    tree->dtype = points.dtype;
    tree->dims = d;
    tree->exponent = exponent;
    tree->x = grove__malloc(bytes, "index coordinates");
    tree->perm = grove__malloc(n * sizeof *tree->perm, "index permutation");
    if (!tree->x || !tree->perm) {
        grove__tree_free(tree);
        return GROVE_OUT_OF_MEMORY;
    }
    double scale = ldexp(1, -exponent);
    grove_status s = d <= 3 ? grove__bvh_topology(points, scale, threads, tree)
                            : grove__kdtree_topology(points, scale, GROVE__LEAF_SIZE, NULL, 0, threads, tree);
    if (s == GROVE_OK) s = grove__tree_depth_check(tree->depth, "index");
    size_t box_bytes = 0;
    if (s == GROVE_OK && (!grove__mul_size(tree->nodes, 2 * d * elem, &box_bytes)))
        s = grove__fail(GROVE_TOO_LARGE, "index: node boxes overflow the address space");
    if (s == GROVE_OK) {
        tree->box = grove__malloc(box_bytes, "index boxes");
        if (!tree->box) s = GROVE_OUT_OF_MEMORY;
    }
    if (s != GROVE_OK) {
        grove__tree_free(tree);
        return s;
    }
    grove__tree_fill(tree, points, scale, NULL, NULL, NULL, NULL, threads);
    return GROVE_OK;
}
