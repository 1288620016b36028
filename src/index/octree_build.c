/* Octree construction (see octree.h): keys, sort, then cells level by
 * level. Each level is two parallel passes over its cells (count the
 * non-empty octants, then write them) around a sequential prefix sum, so
 * the layout does not depend on the thread count. */
#include "octree.h"

#include "index.h"
#include "parallel.h"

#include <string.h>

/* Grow *p to hold at least `need` elements of `size` bytes (capacity *cap). */
static grove_status reserve(void **p, size_t *cap, size_t need, size_t size, const char *what)
{
    if (need <= *cap) return GROVE_OK;
    size_t want = need + need / 2, bytes;
    if (!grove__mul_size(want, size, &bytes)) return grove__fail(GROVE_TOO_LARGE, "octree: %s overflow", what);
    void *q = grove__realloc(*p, bytes, what);
    if (!q) return GROVE_OUT_OF_MEMORY;
    *p = q;
    *cap = want;
    return GROVE_OK;
}

/* Grow the cells and, in step with them, the per-cell scratch (cap_cells
 * counts only what both hold). */
static grove_status reserve_cells(grove__octree *t, size_t need)
{
    size_t cap = t->cap_cells;
    grove_status s = reserve((void **)&t->cell, &cap, need, sizeof *t->cell, "octree cells");
    if (s != GROVE_OK || cap == t->cap_cells) return s;
    void *q = grove__realloc(t->scratch, cap * sizeof *t->scratch, "octree scratch");
    if (!q) return GROVE_OUT_OF_MEMORY;
    t->scratch = q;
    t->cap_cells = cap;
    return GROVE_OK;
}

void grove__bounds3(const double *pos, size_t n, int threads, double lo[3], double hi[3])
{
    double x0 = pos[0], y0 = pos[1], z0 = pos[2], x1 = x0, y1 = y0, z1 = z0;
#pragma omp parallel for num_threads(threads) schedule(static) reduction(min : x0, y0, z0) \
    reduction(max : x1, y1, z1)
    for (size_t i = 0; i < n; i++) {
        const double *p = pos + 3 * i;
        x0 = p[0] < x0 ? p[0] : x0;
        y0 = p[1] < y0 ? p[1] : y0;
        z0 = p[2] < z0 ? p[2] : z0;
        x1 = p[0] > x1 ? p[0] : x1;
        y1 = p[1] > y1 ? p[1] : y1;
        z1 = p[2] > z1 ? p[2] : z1;
    }
    lo[0] = x0, lo[1] = y0, lo[2] = z0;
    hi[0] = x1, hi[1] = y1, hi[2] = z1;
}

/* The bounding cube of the positions: lower corner and side. */
static void bounding_cube(const double *pos, size_t n, int threads, double lo[3], double *side)
{
    double hi[3];
    grove__bounds3(pos, n, threads, lo, hi);
    double s = hi[0] - lo[0];
    if (hi[1] - lo[1] > s) s = hi[1] - lo[1];
    if (hi[2] - lo[2] > s) s = hi[2] - lo[2];
    *side = s;
}

/* Octant digit of a key below a cell of level l. */
static inline unsigned digit(uint64_t key, unsigned level)
{
    return (unsigned)(key >> (3 * (GROVE__OCT_LEVELS - 1 - level))) & 7u;
}

/* First position in [b, e) whose digit at `level` exceeds d (keys sorted,
 * and all keys in [b, e) share the prefix above `level`). */
static uint32_t run_end(const uint64_t *key, uint32_t b, uint32_t e, unsigned level, unsigned d)
{
    while (b < e) {
        uint32_t mid = b + (e - b) / 2;
        if (digit(key[mid], level) <= d) b = mid + 1;
        else e = mid;
    }
    return b;
}

/* Number of non-empty octants of cell c, 0 if it stays a leaf. */
static uint32_t count_children(const grove__octree *t, const grove__ocell *c, size_t leaf_size)
{
    if ((size_t)(c->end - c->begin) <= leaf_size || c->level >= GROVE__OCT_LEVELS) return 0;
    uint32_t count = 0;
    for (uint32_t b = c->begin; b < c->end; count++)
        b = run_end(t->key, b, c->end, c->level, digit(t->key[b], c->level));
    return count;
}

/* Split one level into the next: cells [a, b) get their children appended
 * after the current last cell. */
static grove_status split_level(grove__octree *t, size_t a, size_t b, size_t leaf_size, int threads)
{
    /* The scratch always has cap_cells entries, more than one level's cells. */
    size_t cells = b - a;
    uint32_t *count = t->scratch;
#pragma omp parallel for num_threads(threads) schedule(dynamic, 256)
    for (size_t k = 0; k < cells; k++) count[k] = count_children(t, &t->cell[a + k], leaf_size);
    size_t total = 0;
    for (size_t k = 0; k < cells; k++) {
        uint32_t c = count[k];
        count[k] = (uint32_t)(t->ncells + total);
        total += c;
    }
    if (t->ncells + total > UINT32_MAX) return grove__fail(GROVE_TOO_LARGE, "octree: more than 2^32 cells");
    grove_status s = reserve_cells(t, t->ncells + total);
    if (s != GROVE_OK) return s;
    count = t->scratch; /* may have moved */
#pragma omp parallel for num_threads(threads) schedule(dynamic, 256)
    for (size_t k = 0; k < cells; k++) {
        grove__ocell *c = &t->cell[a + k];
        /* After the prefix sum count[k] is this cell's first child, and the
         * next cell's first child ends its range. */
        uint32_t first = count[k], next = first;
        uint32_t last = k + 1 < cells ? count[k + 1] : (uint32_t)(t->ncells + total);
        if (first == last) {
            c->child = 0;
            c->nchild = 0;
            continue;
        }
        for (uint32_t lo = c->begin; lo < c->end; next++) {
            uint32_t hi = run_end(t->key, lo, c->end, c->level, digit(t->key[lo], c->level));
            t->cell[next] = (grove__ocell){lo, hi, 0, (uint32_t)(a + k), 0, (uint8_t)(c->level + 1)};
            lo = hi;
        }
        c->child = first;
        c->nchild = (uint8_t)(next - first);
    }
    t->ncells += total;
    return GROVE_OK;
}

grove_status grove__octree_build(grove__octree *t, const double *pos, size_t n, size_t leaf_size, int threads)
{
    if (n == 0 || n > GROVE__OCT_MAX_N)
        return grove__fail(GROVE_TOO_LARGE, "octree: n = %zu particles; 1 to %zu are supported", n,
                           GROVE__OCT_MAX_N);
    grove_status s = reserve((void **)&t->key, &t->cap_n, n, sizeof *t->key, "octree keys");
    if (s != GROVE_OK) return s;
    void *q = grove__realloc(t->order, t->cap_n * sizeof *t->order, "octree order");
    if (!q) return GROVE_OUT_OF_MEMORY;
    t->order = q;
    t->n = n;
    bounding_cube(pos, n, threads, t->lo, &t->side);
    double hi[3] = {t->lo[0] + t->side, t->lo[1] + t->side, t->lo[2] + t->side};
    grove__morton_codes(grove_points_f64(pos, n, 3), 1, t->lo, hi, t->key, threads);
#pragma omp parallel for num_threads(threads) schedule(static)
    for (size_t i = 0; i < n; i++) t->order[i] = (uint32_t)i;
    s = grove__radix_sort_u64(t->key, t->order, n, threads);
    if (s != GROVE_OK) return s;

    s = reserve_cells(t, n / 4 + 64);
    if (s != GROVE_OK) return s;
    t->cell[0] = (grove__ocell){0, (uint32_t)n, 0, 0, 0, 0};
    t->ncells = 1;
    t->level_start[0] = 0;
    t->level_start[1] = 1;
    int l = 0;
    for (; l <= GROVE__OCT_LEVELS && t->level_start[l] < t->level_start[l + 1]; l++) {
        s = split_level(t, t->level_start[l], t->level_start[l + 1], leaf_size, threads);
        if (s != GROVE_OK) return s;
        t->level_start[l + 2] = t->ncells;
    }
    t->levels = l;
    return GROVE_OK;
}

void grove__octree_free(grove__octree *t)
{
    if (!t) return;
    grove__free(t->key);
    grove__free(t->order);
    grove__free(t->cell);
    grove__free(t->scratch);
    memset(t, 0, sizeof *t);
}
