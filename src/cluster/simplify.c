/* cluster_selection_persistence: the `hdbscan` library's
 * simplify_hierarchy. Splits are visited from the last to the first (so
 * children before parents); a split whose least persistent child (the
 * largest lambda in its subtree minus the split's lambda) falls below the
 * threshold is undone: its children are merged into the parent, which
 * becomes a leaf when its most persistent child was one, and the points of
 * the other children then leave at the split's lambda. The survivors are
 * renumbered in order. The library keeps lambdas in single precision here
 * (a float array and C float loop variables), and so does this file: every
 * lambda of the simplified tree is rounded to float, and the persistence
 * test is done in float as NumPy 2 evaluates it (in the units of
 * grove__float_scale). A split with more than two
 * children (simultaneous ties) is undone the same way; its most persistent
 * child is the last with the largest lambda, as the library's comparison
 * picks for two. */
#include "hdbscan_internal.h"

#include <float.h>
#include <math.h>

int grove__float_scale(const grove__condensed *c)
{
    double largest = 0, smallest = INFINITY;
    for (size_t r = 0; r < c->rows; r++)
        if (c->lambda[r] > 0 && isfinite(c->lambda[r]))
            largest = fmax(largest, c->lambda[r]), smallest = fmin(smallest, c->lambda[r]);
    return largest > FLT_MAX || smallest < FLT_MIN ? -grove__unit_exponent(largest) : 0;
}

typedef struct simplify_ctx {
    size_t k;
    int scale;           /* lambdas are rounded to float times 2^scale */
    float *max_birth;    /* per cluster: largest lambda below it (float) */
    uint8_t *leaf;       /* per cluster: no child clusters (after merges) */
    size_t *map;         /* per cluster: the cluster it is merged into, then its new index */
    float *moved_lambda; /* per cluster: lambda its points leave at, when merged away */
    uint8_t *moved;
    uint8_t *gone;       /* per cluster: merged into an ancestor */
    size_t *skipped;     /* per cluster: merged clusters at or below its index */
} simplify_ctx;

static void ctx_free(simplify_ctx *x)
{
    grove__free(x->max_birth);
    grove__free(x->leaf);
    grove__free(x->map);
    grove__free(x->moved_lambda);
    grove__free(x->moved);
    grove__free(x->gone);
    grove__free(x->skipped);
}

/* One split: cluster rows [lo, hi) of parent p born at the same lambda. */
static void undo_split(simplify_ctx *x, const grove__condensed *c, size_t lo, size_t hi, float threshold)
{
    size_t n = c->n, p = c->parent[lo] - n;
    float death = (float)ldexp(c->lambda[hi - 1], x->scale), lowest = 0, highest = 0;
    size_t sibling = lo;
    for (size_t r = lo; r < hi; r++) {
        float b = x->max_birth[c->child[r] - n];
        if (r == lo || b < lowest) lowest = b;
        if (r == lo || b >= highest) highest = b, sibling = r;
    }
    if (highest > x->max_birth[p]) x->max_birth[p] = highest;
    if ((float)(lowest - death) >= threshold) return;
    if (x->leaf[c->child[sibling] - n]) {
        x->leaf[p] = 1;
    } else {
        for (size_t r = lo; r < hi; r++)
            if (r != sibling) x->moved[c->child[r] - n] = 1, x->moved_lambda[c->child[r] - n] = death;
    }
    for (size_t r = lo; r < hi; r++) x->map[c->child[r] - n] = p;
}

grove_status grove__simplify(grove__condensed *c, double persistence)
{
    size_t n = c->n, k = c->clusters;
    if (k < 2) return GROVE_OK;
    simplify_ctx x = {k, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
    x.max_birth = grove__malloc(k * sizeof *x.max_birth, "persistence");
    x.leaf = grove__malloc(k, "persistence");
    x.map = grove__malloc(k * sizeof *x.map, "persistence");
    x.moved_lambda = grove__malloc(k * sizeof *x.moved_lambda, "persistence");
    x.moved = grove__calloc(k, 1, "persistence");
    x.gone = grove__malloc(k, "persistence");
    x.skipped = grove__malloc(k * sizeof *x.skipped, "persistence");
    if (!x.max_birth || !x.leaf || !x.map || !x.moved_lambda || !x.moved || !x.gone || !x.skipped) {
        ctx_free(&x);
        return GROVE_OUT_OF_MEMORY;
    }
    memset(x.leaf, 1, k);
    x.scale = grove__float_scale(c);
    for (size_t r = 0; r < c->rows; r++) {
        /* The library's max_births starts as the lambda of each cluster's
         * last row. */
        x.max_birth[c->parent[r] - n] = (float)ldexp(c->lambda[r], x.scale);
        if (c->child[r] >= n) x.leaf[c->parent[r] - n] = 0;
    }
    for (size_t i = 0; i < k; i++) x.map[i] = i;
    float threshold = (float)ldexp(persistence, x.scale);
    for (size_t hi = c->rows; hi > 0;) {
        if (c->child[hi - 1] < n) {
            hi--;
            continue;
        }
        size_t lo = hi - 1;
        while (lo > 0 && c->child[lo - 1] >= n && c->parent[lo - 1] == c->parent[hi - 1]) lo--;
        undo_split(&x, c, lo, hi, threshold);
        hi = lo;
    }
    /* Merged clusters point at their final survivor (parents have smaller
     * indices, so one ascending pass suffices), then survivors are
     * numbered in order. */
    size_t count = 0;
    for (size_t i = 0; i < k; i++) {
        x.map[i] = x.map[x.map[i]];
        x.gone[i] = x.map[i] != i;
        count += x.gone[i];
        x.skipped[i] = count;
    }
    for (size_t i = 0; i < k; i++) x.map[i] -= x.map[i] > 0 ? x.skipped[x.map[i] - 1] : 0;
    size_t rows = 0;
    for (size_t r = 0; r < c->rows; r++) {
        size_t p = c->parent[r] - n, child = c->child[r];
        if (child >= n && x.gone[child - n]) continue;
        c->parent[rows] = n + x.map[p];
        c->child[rows] = child >= n ? n + x.map[child - n] : child;
        float rounded = x.moved[p] ? x.moved_lambda[p] : (float)ldexp(c->lambda[r], x.scale);
        c->lambda[rows] = ldexp((double)rounded, -x.scale);
        c->child_size[rows] = c->child_size[r];
        rows++;
    }
    c->rows = rows;
    c->clusters = k - count;
    grove__condensed_shrink(c);
    ctx_free(&x);
    return GROVE_OK;
}
