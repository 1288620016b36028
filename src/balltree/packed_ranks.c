/* Rank records (packed.h): every dimension sorted once by (coordinate, id)
 * (grove__bt_sort) gives each point its rank along it, a record the d
 * ranks; a node's extent along j is val_j (the sorted coordinates) at its
 * first and last record's ranks, perm maps a rank back to the id. */
#include "packed.h"

#include <math.h>
#include <string.h>

/* The leaf (a, b) along its widest dimension; b copies a in a leaf of one. */
static inline __attribute__((always_inline)) void ranks_pair(const grove__packed_tree *t, uint64_t a, uint64_t b,
                                                             const double *xa, const double *xb, size_t out, size_t d,
                                                             uint8_t real)
{
    size_t s = 0;
    double best_spread = -1.0;
    for (size_t j = 0; j < d; j++) grove__bt_widest(fabs(xa[j] - xb[j]), j, &s, &best_spread);
    int shift = (int)s * t->bits;
    bool swap = grove__record_field(b, shift, t->mask) < grove__record_field(a, shift, t->mask);
    grove__bt_emit_leaf(t->c, out, grove__packed_row(t, swap ? b : a), grove__packed_row(t, swap ? a : b), real);
}

/* A small node's points' coordinates and records, gathered once. */
typedef struct ranks_local {
    const grove__packed_tree *t;
    const double *x;
    const uint64_t *rec;
} ranks_local;

static void ranks_small_node(const ranks_local *p, const uint8_t *idx, size_t k, int level, size_t out, size_t d)
{
    const grove__packed_tree *t = p->t;
    const grove__bt_ctx *c = t->c;
    if (c->partition && (level == t->b->levels || k <= 1)) {
        for (size_t i = 0; i < k; i++) grove__bt_emit(c, out + i, grove__packed_row(t, p->rec[idx[i]]), 1);
        return;
    }
    if (!c->partition && level == t->b->levels) { /* a leaf of one or two points */
        ranks_pair(t, p->rec[idx[0]], p->rec[idx[k - 1]], p->x + idx[0] * d, p->x + idx[k - 1] * d, out, d, k == 2);
        return;
    }
    size_t s = 0;
    double best_spread = -1.0;
    for (size_t j = 0; j < d; j++) {
        double lo = p->x[idx[0] * d + j], hi = lo;
        for (size_t i = 1; i < k; i++) {
            double v = p->x[idx[i] * d + j];
            lo = v < lo ? v : lo;
            hi = v > hi ? v : hi;
        }
        grove__bt_widest(hi - lo, j, &s, &best_spread);
    }
    int shift = (int)s * t->bits;
    uint64_t r[PACKED_SMALL];
    for (size_t i = 0; i < k; i++) r[i] = grove__record_field(p->rec[idx[i]], shift, t->mask);
    size_t h = k / 2, nl = 0, nr = h;
    uint8_t split[PACKED_SMALL];
    for (size_t i = 0; i < k; i++) { /* the h lowest ranks go left, stably */
        size_t below = 0;
        for (size_t j = 0; j < k; j++) below += r[j] < r[i];
        size_t left = below < h;
        split[left ? nl : nr] = idx[i];
        nl += left;
        nr += !left;
    }
    size_t right_out = grove__bt_right_out(c, t->b, out, h, level);
    ranks_small_node(p, split, h, level + 1, out, d);
    ranks_small_node(p, split + h, k - h, level + 1, right_out, d);
}

/* A node of k <= PACKED_SMALL points: coordinates by rank, splits by rank. */
static inline __attribute__((always_inline)) void ranks_small_d(const grove__packed_tree *t, const uint64_t *rec,
                                                                size_t k, int level, size_t out, size_t d)
{
    size_t n = t->n;
    double x[PACKED_SMALL * PACKED_MAX_DIMS];
    uint8_t idx[PACKED_SMALL];
    for (size_t i = 0; i < k; i++) {
        idx[i] = (uint8_t)i;
        for (size_t j = 0; j < d; j++)
            x[i * d + j] = t->val[j * n + grove__record_field(rec[i], (int)j * t->bits, t->mask)];
    }
    ranks_local p = {t, x, rec};
    ranks_small_node(&p, idx, k, level, out, d);
}

void grove__ranks_small(const grove__packed_tree *t, const uint64_t *rec, size_t k, int level, size_t out)
{
    switch (t->c->d) { /* a constant d lets the compiler specialise the common cases */
    case 2: ranks_small_d(t, rec, k, level, out, 2); break;
    case 3: ranks_small_d(t, rec, k, level, out, 3); break;
    default: ranks_small_d(t, rec, k, level, out, t->c->d);
    }
}

/* Dimension j's ranks into the records (buffer 1) by id. */
static void ranks_records(const grove__packed_tree *t, size_t j)
{
    const uint32_t *perm = t->perm + j * t->n;
    uint64_t *rec = t->rec[1];
    int shift = (int)j * t->bits;
    for (size_t r = 0; r < t->count; r++) rec[perm[r]] = (j ? rec[perm[r]] : 0) | (uint64_t)r << shift;
}

/* List j of buffer 0: records in j's order (j = d: in id order). */
static void ranks_list(const grove__packed_tree *t, size_t j)
{
    const uint64_t *rec = t->rec[1];
    uint64_t *list = t->rec[0] + j * t->n;
    if (j == t->c->d) {
        memcpy(list, rec, t->count * sizeof *rec);
        return;
    }
    const uint32_t *perm = t->perm + j * t->n;
    for (size_t r = 0; r < t->count; r++) list[r] = rec[perm[r]];
}

/* Dimension j's batch-local ids by (coordinate, id) into perm, and its
 * coordinates in that order into val. */
static void ranks_sort_dim(const grove__bt_view *v, const grove__packed_tree *t, size_t j)
{
    size_t m = t->count;
    uint32_t *perm = t->perm + j * t->n;
    double *val = t->val + j * t->n;
    for (size_t i = 0; i < m; i++) perm[i] = (uint32_t)i;
    uint64_t *a = grove__bt_scratch(t->c);
    grove__bt_sort(v, j, perm, m, a, a + m);
    for (size_t r = 0; r < m; r++) val[r] = grove__bt_at(v, perm[r], j);
}

/* Sort every dimension (in tasks where the batch makes them), pack the
 * ranks into records, fill the lists. */
void grove__ranks_presort(const grove__bt_view *v, const grove__packed_tree *t)
{
    size_t d = t->c->d;
    bool tasks = t->spawn && t->count >= BT_TASK_MIN;
    for (size_t j = 0; j < d; j++) GROVE__TASK_IF(tasks, ranks_sort_dim(v, t, j), default(shared) firstprivate(j));
    GROVE__TASKWAIT_IF(tasks);
    for (size_t j = 0; j < d; j++) ranks_records(t, j);
    for (size_t j = 0; j < t->c->lists; j++) ranks_list(t, j);
}
