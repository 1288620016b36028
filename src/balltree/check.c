/* grove_balltree_check: an independent verifier of ball tree outputs,
 * sharing nothing with the builders but the layout (grove.h). */
#include "balltree_internal.h"

#include <string.h>

typedef struct checker {
    grove_points points;
    size_t stride;
    const double *rotated; /* n x d rotated coordinates, or NULL */
    const int64_t *indices;
    const uint8_t *mask;
    const grove_balltree_batch *batch;
    const grove_options *options; /* its cancel flag (stopping) */
    bool stopped;                 /* the flag was seen: every scan ends */
} checker;

/* Slots between reads of the cancel flag: a scan of a large node reads
 * rows all over the points, a second for millions of slots. */
#define POLL_SLOTS 65536

/* Whether the scan at slot s stops: the flag is read every POLL_SLOTS
 * slots (of the batch layout, so small nodes share reads). */
static bool stopping(checker *c, size_t s)
{
    if (s % POLL_SLOTS == 0 && !c->stopped) c->stopped = grove__cancelled(c->options);
    return c->stopped;
}

static double coord(const checker *c, int64_t row, size_t j)
{
    return c->rotated ? c->rotated[(size_t)row * c->points.d + j] : grove__coord(c->points, c->stride, (size_t)row, j);
}

static bool real_slot(const checker *c, size_t slot) { return !c->mask || c->mask[slot]; }

/* (coordinate, row) order along dimension j. */
static bool before(const checker *c, size_t j, int64_t a, int64_t b)
{
    double x = coord(c, a, j), y = coord(c, b, j);
    return x < y || (x == y && a < b);
}

/* The widest dimension of the real points in slots [lo, hi). */
static size_t widest_dim(checker *c, size_t lo, size_t hi)
{
    size_t best = 0;
    double best_spread = -1.0;
    for (size_t j = 0; j < c->points.d; j++) {
        double mn = 0, mx = 0;
        bool any = false;
        for (size_t s = lo; s < hi && !stopping(c, s); s++) {
            if (!real_slot(c, s)) continue;
            double v = coord(c, c->indices[s], j);
            if (!any || v < mn) mn = v;
            if (!any || v > mx) mx = v;
            any = true;
        }
        if (mx - mn > best_spread) best_spread = mx - mn, best = j;
    }
    return best;
}

/* Node [lo, hi) split at mid: counts and order across the split. */
static grove_status check_split(checker *c, size_t lo, size_t mid, size_t hi, int level, bool leaf_pair)
{
    size_t left = 0, right = 0;
    for (size_t s = lo; s < mid; s++) left += real_slot(c, s);
    for (size_t s = mid; s < hi; s++) right += real_slot(c, s);
    size_t k = left + right;
    size_t base = c->batch->slot_offset;
    if (!(leaf_pair && k == 1) && left != k / 2)
        return grove__fail(GROVE_INVALID_ARGUMENT,
                           "balltree check: batch %lld, level %d node at slots %zu..%zu: left child holds %zu of "
                           "%zu points, expected %zu",
                           (long long)c->batch->id, level, lo - base, hi - base - 1, left, k, k / 2);
    if (left == 0 || right == 0) return GROVE_OK;
    size_t j = widest_dim(c, lo, hi);
    int64_t last_left = -1, first_right = -1;
    for (size_t s = lo; s < mid && !stopping(c, s); s++)
        if (real_slot(c, s) && (last_left < 0 || before(c, j, last_left, c->indices[s]))) last_left = c->indices[s];
    for (size_t s = mid; s < hi && !stopping(c, s); s++)
        if (real_slot(c, s) && (first_right < 0 || before(c, j, c->indices[s], first_right)))
            first_right = c->indices[s];
    if (c->stopped) return grove__fail(GROVE_CANCELLED, "balltree check: cancelled");
    if (!before(c, j, last_left, first_right))
        return grove__fail(GROVE_INVALID_ARGUMENT,
                           "balltree check: batch %lld, level %d node at slots %zu..%zu: row %lld (left) is not "
                           "before row %lld (right) along its widest dimension %zu",
                           (long long)c->batch->id, level, lo - base, hi - base - 1, (long long)last_left,
                           (long long)first_right, j);
    return GROVE_OK;
}

/* Every real slot holds a row of the batch once; copies pad leaf pairs. */
static grove_status check_membership(checker *c, const int64_t *batch_ids, bool full, uint8_t *seen)
{
    const grove_balltree_batch *b = c->batch;
    size_t real = 0;
    for (size_t s = b->slot_offset; s < b->slot_offset + b->slots; s++) {
        if (stopping(c, s)) return grove__fail(GROVE_CANCELLED, "balltree check: cancelled");
        int64_t row = c->indices[s];
        if (row < 0 || (uint64_t)row >= c->points.n)
            return grove__fail(GROVE_INVALID_ARGUMENT, "balltree check: slot %zu holds row %lld, outside 0..%zu", s,
                               (long long)row, c->points.n - 1);
        if (!real_slot(c, s)) {
            bool second = full && (s - b->slot_offset) % 2 == 1;
            if (!second || row != c->indices[s - 1] || !real_slot(c, s - 1))
                return grove__fail(GROVE_INVALID_ARGUMENT,
                                   "balltree check: slot %zu is padding but not the copy of its leaf's first slot", s);
            continue;
        }
        if (batch_ids && batch_ids[row] != b->id)
            return grove__fail(GROVE_INVALID_ARGUMENT, "balltree check: slot %zu holds row %lld of batch %lld in batch %lld's tree",
                               s, (long long)row, (long long)batch_ids[row], (long long)b->id);
        if (seen[row])
            return grove__fail(GROVE_INVALID_ARGUMENT, "balltree check: row %lld appears twice (again at slot %zu)",
                               (long long)row, s);
        seen[row] = 1;
        real++;
    }
    if (real != b->count)
        return grove__fail(GROVE_INVALID_ARGUMENT, "balltree check: batch %lld has %zu points but %zu real slots",
                           (long long)b->id, b->count, real);
    return GROVE_OK;
}

/* Full mode: nodes are aligned power-of-two slot ranges. */
static grove_status check_full_tree(checker *c)
{
    size_t base = c->batch->slot_offset, slots = c->batch->slots;
    for (int level = 0; level <= c->batch->levels; level++) {
        size_t width = slots >> level;
        for (size_t lo = base; lo < base + slots; lo += width) {
            grove_status s = check_split(c, lo, lo + width / 2, lo + width, level, level == c->batch->levels);
            if (s != GROVE_OK) return s;
        }
    }
    return GROVE_OK;
}

/* Partition mode: nodes follow floor(k/2) halving for `levels` levels. */
static grove_status check_partition(checker *c, size_t lo, size_t count, int level)
{
    if (level == c->batch->levels || count <= 1) {
        for (size_t s = lo + 1; s < lo + count; s++)
            if (c->indices[s - 1] >= c->indices[s])
                return grove__fail(GROVE_INVALID_ARGUMENT, "balltree check: leaf rows not ascending at slot %zu", s);
        return GROVE_OK;
    }
    size_t half = count / 2;
    grove_status s = check_split(c, lo, lo + half, lo + count, level, false);
    if (s == GROVE_OK) s = check_partition(c, lo, half, level + 1);
    if (s == GROVE_OK) s = check_partition(c, lo + half, count - half, level + 1);
    return s;
}

/* y = R x for every row, with the builder's own arithmetic. */
static double *rotate_points(grove_points p, const double *R)
{
    size_t count;
    if (!grove__mul_size(p.n, p.d, &count)) {
        grove__fail(GROVE_TOO_LARGE, "balltree check: rotated copy of %zu x %zu points is too large", p.n, p.d);
        return NULL;
    }
    double *y = grove__calloc(count, sizeof *y, "rotated points");
    if (!y) return NULL;
    size_t stride = grove__points_stride(p);
    for (size_t i = 0; i < p.n; i++) grove__bt_rotate_row(R, p, stride, i, y + i * p.d);
    return y;
}

grove_status grove_balltree_check(grove_points points, const grove_balltree_params *params, const int64_t *indices,
                                  const uint8_t *mask, const grove_options *options)
{
    grove__clear_error();
    grove_balltree_params defaults;
    grove_balltree_params_init(&defaults);
    if (!params) params = &defaults;
    bool full = params->levels < 0;
    double magnitude;
    grove_status s = grove__points_validate_range(points, 1, &magnitude);
    if (s != GROVE_OK) return s;
    if (grove__bt_needs_scaling(magnitude, points.d, params->rotation != NULL)) {
        /* Spreads that overflow, or rotations that underflow, compare on
         * the points scaled (as the builder does). */
        double *x = grove__bt_scaled(points, magnitude, params->rotation != NULL);
        if (!x) return GROVE_OUT_OF_MEMORY;
        s = grove_balltree_check(grove_points_f64(x, points.n, points.d), params, indices, mask, options);
        grove__free(x);
        return s;
    }
    size_t slots, nbatches;
    s = grove_balltree_layout(points.n, params, &slots, &nbatches);
    if (s != GROVE_OK) return s;
    if (slots && !indices) return grove__fail(GROVE_INVALID_ARGUMENT, "balltree check: indices is NULL");
    if (slots && full && !mask) return grove__fail(GROVE_INVALID_ARGUMENT, "balltree check: mask is NULL");
    grove_balltree_batch *batches = grove__calloc(nbatches, sizeof *batches, "batch layout");
    uint8_t *seen = grove__calloc(points.n, 1, "row marks");
    double *rotated = params->rotation && batches && seen ? rotate_points(points, params->rotation) : NULL;
    if (!batches || !seen || (params->rotation && !rotated)) {
        s = GROVE_OUT_OF_MEMORY;
        goto done;
    }
    s = grove_balltree_batches(points.n, params, batches);
    checker c = {points, grove__points_stride(points), rotated, indices, mask, NULL, options, false};
    for (size_t b = 0; s == GROVE_OK && b < nbatches; b++) {
        c.batch = &batches[b];
        s = check_membership(&c, params->batch, full, seen);
        if (s == GROVE_OK)
            s = full ? check_full_tree(&c) : check_partition(&c, batches[b].slot_offset, batches[b].count, 0);
    }
    /* A node whose scans were cut short may have looked fine. */
    if (s == GROVE_OK && c.stopped) s = grove__fail(GROVE_CANCELLED, "balltree check: cancelled");
done:
    grove__free(rotated);
    grove__free(seen);
    grove__free(batches);
    return s;
}
