/* grove_index: the join/kNN search index. Dimensions are ordered by
 * variance (highest first, RT-HiSS IV-A), a balanced kd-tree over the
 * leading dimensions cuts the points into leaf groups, and the points are
 * copied in leaf order (grove__tree_fill) so every group is contiguous. */
#include "search_index.h"
#include "parallel.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void grove_index_params_init(grove_index_params *params)
{
    if (!params) return;
    params->leaf_size = 0;
    params->index_dims = 0;
    params->boxsize = NULL;
    params->boxsize_count = 0;
}

/* Defaults chosen by measurement (bench/join.py, docs/join.md): groups of
 * 32 points in low dimensions, 64 in high ones, where each candidate costs
 * more and larger tiles amortise the group walk; keys are every dimension
 * up to SOA_MAX, 16 principal axes above (Fashion-MNIST, 20000 rows: 8 axes
 * 3.5 s, 16 axes 3.0 s, 24 axes 3.3 s). */
static size_t auto_leaf(size_t d) { return d <= GROVE__JOIN_SOA_MAX ? 32 : 64; }
static size_t auto_dims(size_t d) { return d <= GROVE__JOIN_SOA_MAX ? d : GROVE__JOIN_SOA_MAX; }

void grove_index_free(grove_index *index)
{
    if (!index) return;
    grove__free(index->order);
    if (index->keys != index->tree.x) grove__free(index->keys);
    grove__free(index->axes);
    grove__free(index->mean);
    grove__free(index->xs);
    grove__free(index->leaves);
    grove__tree_free(&index->tree);
    grove__free(index->boxsize);
    grove__free(index->period);
    grove__free(index);
}

size_t grove_index_n(const grove_index *index) { return index ? index->tree.n : 0; }
size_t grove_index_d(const grove_index *index) { return index ? index->tree.d : 0; }
size_t grove_index_leaf_size(const grove_index *index) { return index ? index->leaf : 0; }
size_t grove_index_dims(const grove_index *index) { return index ? index->tree.dims : 0; }

void grove_index_dim_order(const grove_index *index, size_t *order)
{
    if (index && order) memcpy(order, index->order, index->tree.d * sizeof *order);
}

int grove_index_boxsize(const grove_index *index, double *boxsize)
{
    if (!index) return 0;
    for (size_t j = 0; boxsize && j < index->tree.d; j++) boxsize[j] = index->boxsize ? index->boxsize[j] : 0;
    return index->boxsize != NULL;
}

static int row_cmp(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* Up to this many rows a group is insertion-sorted: the default groups
 * are far below it, where qsort's calls through row_cmp cost more than
 * the sort. */
#define ROWS_INSERTION_MAX 64

/* rows[0 .. m) ascending (rows are distinct). */
static void sort_rows(uint32_t *rows, size_t m)
{
    if (m > ROWS_INSERTION_MAX) {
        qsort(rows, m, sizeof *rows, row_cmp);
        return;
    }
    for (size_t i = 1; i < m; i++) {
        uint32_t v = rows[i];
        size_t k = i;
        for (; k > 0 && rows[k - 1] > v; k--) rows[k] = rows[k - 1];
        rows[k] = v;
    }
}

/* With principal axes: every point's keys (n x m, input order) and the
 * largest distance from the centre, of the points times scale. */
static double *project_all(grove_points points, double scale, const double *axes, const double *mean, size_t m,
                           int threads, double *radius)
{
    size_t n = points.n, bytes;
    if (!grove__mul_size(n, m * sizeof(double), &bytes)) return NULL;
    double *keys = grove__malloc(bytes ? bytes : 1, "index keys");
    double r = 0;
    if (!keys) return NULL;
#pragma omp parallel for num_threads(threads) schedule(static) reduction(max : r)
    for (size_t i = 0; i < n; i++) {
        double norm = grove__project(axes, mean, points.d, m, points, scale, i, keys + i * m);
        r = norm > r ? norm : r;
    }
    *radius = r;
    return keys;
}

/* The periodic box by stored dimension, scaled, in the dtype: lengths,
 * then their halves (INFINITY where a dimension is unbounded, so the wrap
 * never applies there). */
static void period_fill(grove_index *ix, double scale)
{
    size_t d = ix->tree.d;
    for (size_t j = 0; j < d; j++) {
        double len = ix->boxsize[ix->order[j]];
        if (ix->tree.dtype == GROVE_FLOAT32) {
            float *per = ix->period;
            per[j] = len > 0 ? (float)(len * scale) : INFINITY;
            per[d + j] = per[j] / 2;
        } else {
            double *per = ix->period;
            per[j] = len > 0 ? len * scale : INFINITY;
            per[d + j] = per[j] / 2;
        }
    }
}

grove_status grove__index_build(grove_points points, double magnitude, int exponent, grove_dtype dtype,
                                const size_t *order, const double *axes, const double *mean, size_t dims, size_t leaf,
                                const double *boxsize, int threads, grove_index **out)
{
    *out = NULL;
    size_t n = points.n, d = points.d, elem = grove_dtype_size(dtype), bytes = 0, box_bytes = 0;
    grove_status size = grove__index_size(n, d, elem, 0, &bytes);
    if (size != GROVE_OK) return size;
    threads = grove__threads_for(threads, n);
    grove_index *ix = grove__calloc(1, sizeof *ix, "index");
    if (!ix) return GROVE_OUT_OF_MEMORY;
    grove__tree *t = &ix->tree;
    t->n = n;
    t->d = d;
    t->dims = dims;
    t->dtype = dtype;
    t->exponent = exponent;
    ix->leaf = leaf;
    ix->kstride = axes ? dims : d;
    ix->magnitude = magnitude;
    double scale = ldexp(1, -exponent);
    grove_status s = GROVE_OK;
    ix->order = grove__malloc(d * sizeof *ix->order, "index dimension order");
    if (axes) {
        ix->axes = grove__malloc(dims * d * sizeof *ix->axes, "index axes");
        ix->mean = grove__malloc(d * sizeof *ix->mean, "index axes");
    }
    if (boxsize) {
        ix->boxsize = grove__malloc(d * sizeof *ix->boxsize, "index periodic box");
        ix->period = grove__malloc(2 * d * elem, "index periodic box");
    }
    if (!ix->order || (axes && (!ix->axes || !ix->mean)) || (boxsize && (!ix->boxsize || !ix->period)))
        s = GROVE_OUT_OF_MEMORY;
    if (s == GROVE_OK) {
        memcpy(ix->order, order, d * sizeof *order);
        if (boxsize) memcpy(ix->boxsize, boxsize, d * sizeof *boxsize);
        for (size_t j = 0; boxsize && j < d; j++)
            if (boxsize[j] * scale > ix->period_max) ix->period_max = boxsize[j] * scale;
        if (axes) memcpy(ix->axes, axes, dims * d * sizeof *axes);
        if (axes) memcpy(ix->mean, mean, d * sizeof *mean);
    }
    /* The kd-tree splits the keys: projections, or the leading dimensions. */
    double *keys_in = NULL;
    if (s == GROVE_OK && axes && n > 0) {
        keys_in = project_all(points, scale, axes, mean, dims, threads, &ix->radius);
        if (!keys_in) s = GROVE_OUT_OF_MEMORY;
    }
    if (s == GROVE_OK && n > 0) {
        t->perm = grove__malloc(n * sizeof *t->perm, "index permutation");
        grove_points split = keys_in ? grove_points_f64(keys_in, n, dims) : points;
        s = t->perm ? grove__kdtree_topology(split, keys_in ? 1 : scale, leaf, keys_in ? NULL : order, dims, threads, t)
                    : GROVE_OUT_OF_MEMORY;
        if (s == GROVE_OK) s = grove__tree_depth_check(t->depth, "index");
    }
    for (size_t k = 0; k < t->nodes; k++) ix->nleaves += t->node[k].right == 0;
    if (s == GROVE_OK && !grove__mul_size(t->nodes, 2 * dims * elem, &box_bytes))
        s = grove__fail(GROVE_TOO_LARGE, "index: node boxes overflow the address space");
    if (s == GROVE_OK && n > 0) {
        t->x = grove__malloc(bytes, "index coordinates");
        ix->xs = d <= GROVE__JOIN_SOA_MAX ? grove__malloc(bytes, "index coordinates by dimension") : NULL;
        ix->keys = axes ? grove__malloc(n * dims * elem, "index keys") : t->x;
        t->box = grove__malloc(box_bytes, "index boxes");
        ix->leaves = grove__malloc(ix->nleaves * sizeof *ix->leaves, "index leaves");
        if (!t->x || (d <= GROVE__JOIN_SOA_MAX && !ix->xs) || !ix->keys || !t->box || !ix->leaves)
            s = GROVE_OUT_OF_MEMORY;
    }
    if (s != GROVE_OK) {
        grove__free(keys_in);
        grove_index_free(ix);
        return s;
    }
    for (size_t k = 0, l = 0; k < t->nodes; k++)
        if (!t->node[k].right) ix->leaves[l++] = (uint32_t)k;
    /* Rows ascending inside each group: a semi-join batch then finds its
     * queries in a group by bisection, and kernels emit rows in order. */
#pragma omp parallel for num_threads(threads) schedule(static, 64)
    for (size_t l = 0; l < ix->nleaves; l++) {
        const grove__node *nd = &t->node[ix->leaves[l]];
        sort_rows(t->perm + nd->begin, nd->end - nd->begin);
    }
    grove__tree_fill(t, points, scale, order, ix->xs, keys_in, axes ? ix->keys : NULL, threads);
    if (boxsize) period_fill(ix, scale);
    grove__free(keys_in);
    *out = ix;
    return GROVE_OK;
}

void grove__dim_sums(grove_points p, double scale, const double *centre, int threads, double *acc)
{
    size_t n = p.n, d = p.d, stride = grove__points_stride(p);
#pragma omp parallel for num_threads(threads) schedule(static)
    for (size_t j = 0; j < d; j++) {
        double s = acc[j];
        if (centre)
            for (size_t i = 0; i < n; i++) {
                double t = grove__coord(p, stride, i, j) * scale - centre[j];
                s += t * t;
            }
        else
            for (size_t i = 0; i < n; i++) s += grove__coord(p, stride, i, j) * scale;
        acc[j] = s;
    }
}

/* Whether dimension a comes before b: higher variance first, ties to the
 * lower dimension (a total order, so any sort gives the same order). */
static bool ranks_before(const double *var, size_t a, size_t b) { return var[a] > var[b] || (var[a] == var[b] && a < b); }

/* Heap sort: O(d log d) in place (d can be hundreds of thousands for a few
 * points), with no allocation to fail. sift_down restores the heap whose
 * root is order[top] over order[0 .. end), the element ranked last on top. */
static void sift_down(const double *var, size_t *order, size_t top, size_t end)
{
    for (size_t child; (child = 2 * top + 1) < end; top = child) {
        if (child + 1 < end && ranks_before(var, order[child], order[child + 1])) child++;
        if (!ranks_before(var, order[top], order[child])) return;
        size_t t = order[top];
        order[top] = order[child];
        order[child] = t;
    }
}

void grove__dims_by_variance(const double *var, size_t d, size_t *order)
{
    for (size_t j = 0; j < d; j++) order[j] = j;
    for (size_t top = d / 2; top-- > 0;) sift_down(var, order, top, d);
    for (size_t end = d; end > 1; end--) {
        size_t t = order[0];
        order[0] = order[end - 1];
        order[end - 1] = t;
        sift_down(var, order, 0, end - 1);
    }
}

/* Dimensions by decreasing variance (ties to the lower dimension), from a
 * two-pass mean and variance in double over all points times scale. */
static grove_status variance_order(grove_points p, double scale, int threads, size_t *order)
{
    size_t d = p.d;
    double *mean = grove__calloc(2 * d, sizeof *mean, "index dimension variances");
    if (!mean) return GROVE_OUT_OF_MEMORY;
    double *var = mean + d;
    grove__dim_sums(p, scale, NULL, threads, mean);
    for (size_t j = 0; j < d; j++) mean[j] /= (double)(p.n ? p.n : 1);
    grove__dim_sums(p, scale, mean, threads, var);
    grove__dims_by_variance(var, d, order);
    grove__free(mean);
    return GROVE_OK;
}

grove_status grove__box_check(grove_points p, const double *boxsize, const char *what, int threads)
{
    if (!boxsize || p.n == 0) return GROVE_OK;
    size_t stride = grove__points_stride(p), first = SIZE_MAX;
    /* The first row outside, whatever the schedule, for the message. */
#pragma omp parallel for num_threads(grove__threads_for(threads, p.n * p.d)) schedule(static) reduction(min : first)
    for (size_t i = 0; i < p.n; i++)
        for (size_t j = 0; j < p.d; j++) {
            double x = grove__coord(p, stride, i, j);
            if (boxsize[j] > 0 && !(x >= 0 && x < boxsize[j]) && i < first) first = i;
        }
    for (size_t j = 0; first != SIZE_MAX && j < p.d; j++) {
        double x = grove__coord(p, stride, first, j);
        if (boxsize[j] > 0 && !(x >= 0 && x < boxsize[j]))
            return grove__fail(GROVE_INVALID_ARGUMENT,
                               "%s: row %zu, dimension %zu: coordinate %.17g is outside the periodic box [0, %.17g)",
                               what, first, j, x, boxsize[j]);
    }
    return GROVE_OK;
}

/* The periodic box of params for d dimensions: *box = d lengths by input
 * dimension (0 = unbounded), or NULL when no dimension is periodic;
 * *largest = the largest length. */
static grove_status box_lengths(const grove_index_params *pr, size_t d, double **box, double *largest)
{
    *box = NULL;
    *largest = 0;
    size_t count = pr->boxsize ? pr->boxsize_count : 0;
    if (pr->boxsize_count && !pr->boxsize)
        return grove__fail(GROVE_INVALID_ARGUMENT, "index: boxsize is NULL with boxsize_count = %zu",
                           pr->boxsize_count);
    if (count == 0) return GROVE_OK;
    if (count != 1 && count != d)
        return grove__fail(GROVE_INVALID_ARGUMENT,
                           "index: boxsize has %zu lengths; it takes 1 (every dimension) or d = %zu (one each)", count,
                           d);
    for (size_t j = 0; j < count; j++)
        if (!(pr->boxsize[j] >= 0) || !isfinite(pr->boxsize[j]))
            return grove__fail(GROVE_INVALID_ARGUMENT,
                               "index: boxsize[%zu] = %g; box lengths must be finite and >= 0 (0 = not periodic)", j,
                               pr->boxsize[j]);
    double *b = grove__malloc(d * sizeof *b, "index periodic box");
    if (!b) return GROVE_OUT_OF_MEMORY;
    for (size_t j = 0; j < d; j++) {
        b[j] = pr->boxsize[count == 1 ? 0 : j];
        *largest = b[j] > *largest ? b[j] : *largest;
    }
    if (*largest == 0) {
        grove__free(b);
        b = NULL;
    }
    *box = b;
    return GROVE_OK;
}

/* The largest |coordinate| of queries (validated here; NULL: 0). */
static grove_status queries_magnitude(const grove_points *queries, int threads, double *magnitude)
{
    *magnitude = 0;
    if (!queries) return GROVE_OK;
    grove_status s = grove__points_validate_range(*queries, threads, magnitude);
    if (s != GROVE_OK) grove__error_prefix("queries");
    return s;
}

grove_status grove__index_create_local(grove_points data, const grove_index_params *params,
                                       const grove_options *options, grove_index **out)
{
    grove__clear_error();
    return grove__index_build_for(data, NULL, params, options, out);
}

/* The leaf size and key dimensions params ask for d dimensions (0: the
 * defaults). */
static grove_status index_shape(const grove_index_params *pr, size_t d, size_t *leaf, size_t *dims)
{
    if (d == 0) return grove__fail(GROVE_INVALID_ARGUMENT, "index: points have d = 0 dimensions");
    if (pr->leaf_size > GROVE_INDEX_LEAF_SIZE_MAX)
        return grove__fail(GROVE_INVALID_ARGUMENT, "index: leaf_size = %zu; it must be 1..%d (0 = automatic)",
                           pr->leaf_size, GROVE_INDEX_LEAF_SIZE_MAX);
    if (pr->index_dims > d)
        return grove__fail(GROVE_INVALID_ARGUMENT, "index: index_dims = %zu exceeds d = %zu (0 = automatic)",
                           pr->index_dims, d);
    *leaf = pr->leaf_size ? pr->leaf_size : auto_leaf(d);
    *dims = pr->index_dims ? pr->index_dims : auto_dims(d);
    return GROVE_OK;
}

/* The index on data in a given scale and dimension order: principal axes
 * for the keys above SOA_MAX dimensions (project.c), except in a periodic
 * box, where a projection of the minimum image is not the projection of
 * the points: the keys are then the leading coordinates. */
static grove_status build_ordered(grove_points data, double magnitude, int exponent, const size_t *order, size_t leaf,
                                  size_t dims, const double *box, int threads, grove_index **out)
{
    double *axes = NULL, *mean = NULL;
    grove_status s = GROVE_OK;
    if (data.d > GROVE__JOIN_SOA_MAX && !box) {
        axes = grove__malloc(dims * data.d * sizeof *axes, "index axes");
        mean = grove__malloc(data.d * sizeof *mean, "index axes");
        s = axes && mean ? grove__principal_axes(data, ldexp(1, -exponent), order, dims, threads, axes, mean)
                         : GROVE_OUT_OF_MEMORY;
    }
    if (s == GROVE_OK)
        s = grove__index_build(data, magnitude, exponent, data.dtype, order, axes, mean, dims, leaf, box, threads,
                               out);
    grove__free(axes);
    grove__free(mean);
    return s;
}

grove_status grove__index_build_for(grove_points data, const grove_points *queries, const grove_index_params *params,
                                    const grove_options *options, grove_index **out)
{
    if (!out) return grove__fail(GROVE_INVALID_ARGUMENT, "index: out is NULL");
    *out = NULL;
    int threads = grove__threads_for(grove__options(options).threads, data.n);
    double magnitude, reach;
    grove_status s = grove__points_validate_range(data, threads, &magnitude);
    if (s == GROVE_OK) s = queries_magnitude(queries, threads, &reach);
    if (s != GROVE_OK) return s;
    grove_index_params pr;
    grove_index_params_init(&pr);
    if (params) pr = *params;
    size_t leaf = 0, dims = 0;
    s = index_shape(&pr, data.d, &leaf, &dims);
    if (s != GROVE_OK) return s;
    double *box = NULL, longest = 0;
    s = box_lengths(&pr, data.d, &box, &longest);
    if (s == GROVE_OK) s = grove__box_check(data, box, "data", threads);
    if (s == GROVE_OK && queries && queries->n > 0 && queries->d == data.d)
        s = grove__box_check(*queries, box, "queries", threads);
    if (s != GROVE_OK) {
        grove__free(box);
        return s;
    }
    /* The box lengths are scaled with the points. */
    reach = longest > reach ? longest : reach;
    /* The variances sum n squares, and the distances d. */
    size_t terms;
    if (!grove__mul_size(data.n, data.d, &terms)) terms = SIZE_MAX;
    int exponent = grove__range_exponent(reach > magnitude ? reach : magnitude, terms, data.dtype);
    size_t *order = grove__malloc(data.d * sizeof *order, "index dimension order");
    s = order ? variance_order(data, ldexp(1, -exponent), threads, order) : GROVE_OUT_OF_MEMORY;
    if (s == GROVE_OK) s = build_ordered(data, magnitude, exponent, order, leaf, dims, box, threads, out);
    grove__free(box);
    grove__free(order);
    return s;
}

grove_status grove__index_build_ordered(grove_points data, double magnitude, int exponent, const size_t *order,
                                        const grove_index_params *params, const grove_options *options,
                                        grove_index **out)
{
    *out = NULL;
    size_t leaf = 0, dims = 0;
    grove_status s = index_shape(params, data.d, &leaf, &dims);
    if (s != GROVE_OK) return s;
    int threads = grove__threads_for(grove__options(options).threads, data.n);
    return build_ordered(data, magnitude, exponent, order, leaf, dims, NULL, threads, out);
}

grove_status grove__queries_prepare(const grove_index *index, const grove_points *queries, int exclude_self,
                                    int threads, const grove_index **qi)
{
    *qi = NULL;
    if (!queries) {
        *qi = index;
        return GROVE_OK;
    }
    if (exclude_self)
        return grove__fail(GROVE_INVALID_ARGUMENT, "exclude_self applies to self-joins only (queries were given)");
    double magnitude;
    grove_status s = queries_magnitude(queries, threads, &magnitude);
    if (s != GROVE_OK) return s;
    if (queries->n > 0 && queries->d != index->tree.d)
        return grove__fail(GROVE_INVALID_ARGUMENT, "queries have d = %zu dimensions but the data have %zu",
                           queries->d, index->tree.d);
    s = grove__box_check(*queries, index->boxsize, "queries", threads);
    if (s != GROVE_OK) return s;
    /* Their distances sum d squares. */
    if (!grove__range_fits(magnitude, index->tree.exponent, index->tree.d, index->tree.dtype))
        return grove__fail(GROVE_INVALID_ARGUMENT,
                           "queries: coordinates up to %g are beyond the range of this index (data up to %g): their "
                           "squared distances could overflow; grove_join and grove_knn given both point sets scale "
                           "for them together",
                           magnitude, index->magnitude);
    grove_points q = *queries;
    q.d = index->tree.d; /* an empty query set may say any d */
    grove_index *built = NULL;
    s = grove__index_build(q, magnitude, index->tree.exponent, index->tree.dtype, index->order, index->axes,
                           index->mean, index->tree.dims, index->leaf, index->boxsize, threads, &built);
    *qi = built;
    return s;
}

void grove__queries_release(const grove_index *index, const grove_index *qi)
{
    if (qi && qi != index) grove_index_free((grove_index *)(uintptr_t)qi);
}
