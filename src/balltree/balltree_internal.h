/* Shared internals of the ball tree module: batch grouping (layout.c), the
 * plan (plan.h), the tree builders (build.c, builder.h: presorted.c,
 * packed*.c, partition*.c, selecting.c, select_*.c), ball statistics
 * (stats.c) and rotations (rotation.c). */
#ifndef GROVE_BALLTREE_INTERNAL_H
#define GROVE_BALLTREE_INTERNAL_H

#include "internal.h"
#include "cpu.h"
#include "plan.h"

/* The points grouped by batch: batch b holds grouped positions
 * [start[b], start[b + 1]), its rows in ascending order. */
typedef struct grove__bt_groups {
    size_t count;  /* batches */
    int64_t *ids;  /* count ids, ascending */
    size_t *start; /* count + 1 offsets into the grouped order */
    size_t *order; /* n: grouped position -> input row; NULL when the ids
                      are already non-decreasing (position == row) */
} grove__bt_groups;

/* Nodes of at least BT_TASK_MIN points hand their left child to a task;
 * batches of at least that many sort their dimensions as tasks. */
#define BT_TASK_MIN 4096
/* The threads a build of n points in `batches` batches uses out of
 * `threads` (threads.c); one_off: the call has no workspace. */
int grove__bt_threads(size_t batches, size_t n, int threads, bool one_off);

/* Resolve NULL params to the defaults and check `levels`. */
grove_status grove__bt_params(const grove_balltree_params *params, grove_balltree_params *out);
/* Group n points by params->batch (names the first negative id). */
grove_status grove__bt_groups_make(size_t n, const grove_balltree_params *params, grove__bt_groups *groups);
void grove__bt_groups_free(grove__bt_groups *groups);
/* Full-mode levels below the root for m >= 1 points: max(0, ceil(log2 m) - 1). */
int grove__bt_full_levels(size_t m);
/* Per-batch layout into out[groups->count]. */
void grove__bt_describe(const grove__bt_groups *groups, int levels, grove_balltree_batch *out);
/* Check `level` against every batch and count the balls there. */
grove_status grove__bt_balls(const grove_balltree_batch *batches, size_t count, int partition, int level,
                             size_t *balls);

/* Range (scaled.c): grove__bt_needs_scaling: whether a spread (max - min)
 * of coordinates up to `magnitude`, or of the rotated ones (|R x| <=
 * sqrt(d) max |x|), may overflow a double, where two such spreads would
 * compare as a tie (only float64 coordinates near the largest doubles),
 * or a rotation of values so small (below 2^-969, float64 only) that its
 * products would round to subnormals. Then
 * the builder and the checker work on grove__bt_scaled(points, magnitude,
 * rotated), the points times a power of two: the largest that makes every
 * spread finite, or the one that brings the largest |coordinate| to [1/2,
 * 1) (n x d doubles, freed with grove__free; NULL when out of memory).
 * Scaling down is exact but for values so close to 0 that they become
 * subnormal, scaling up always is, and the splits compare coordinates and
 * spreads only, so its tree is the tree of the points as they are, in
 * exact arithmetic (with a rotation: of the rotated points as the points
 * at ordinary size give them). */
bool grove__bt_needs_scaling(double magnitude, size_t d, bool rotated);
double *grove__bt_scaled(grove_points points, double magnitude, bool rotated);

/* y[j * y_stride] = sum_k R[j d + k] x_k for input row `row`, summed in k
 * order in double without FMA contraction, so every platform agrees. */
void grove__bt_rotate_row(const double *rotation, grove_points points, size_t stride, size_t row, double *y,
                          size_t y_stride);

/* The mask of the valid lanes among the next eight when `left` entries
 * remain: every lane below min(left, 8) (the vector loops' tails). */
static inline uint8_t grove__bt_lanes8(size_t left) { return left >= 8 ? 0xff : (uint8_t)((1u << left) - 1); }

/* A packed record's field (a rank or a quantized coordinate) whose bits
 * start at `shift` (packed.h). */
static inline uint64_t grove__record_field(uint64_t e, int shift, uint64_t mask) { return e >> shift & mask; }
/* Stable partition of src[0..k) into dst: records whose rank at `shift` is
 * below `pivot` to dst[0..h), the others (exactly k - h of them) to
 * dst[h..k) (partition.c; partition_avx512.c, partition_avx2.c). */
typedef void grove__packed_partition_fn(const uint64_t *restrict src, uint64_t *restrict dst, size_t k, size_t h,
                                    int shift, uint64_t mask, uint64_t pivot);
grove__packed_partition_fn grove__packed_partition_portable;
/* The AVX-512 and AVX2 versions, or NULL where the machine or compiler
 * lacks them. */
grove__packed_partition_fn *grove__packed_partition_avx512(void);
grove__packed_partition_fn *grove__packed_partition_avx2(void);

/* The quantized presort's first pass (packed_quantized.c, for machines
 * with x86-64-v3), over rows [a, b) of x, d <= GROVE__QUANTIZED_MAX_DIMS
 * doubles each, coordinate j of row i at x[i * d + j]:
 * extent:  lo[j] and hi[j], the smallest and largest coordinate j (b > a),
 *          and whether every coordinate is finite (lo and hi unspecified
 *          when one is not);
 * records: src[i] = i | q_j << shift[j] for every j, where f = (x_j -
 *          lo[j]) * scale[j] and q_j = f < mask ? (uint64)f : mask, mask < 2^31. */
#define GROVE__QUANTIZED_MAX_DIMS 4
bool grove__quantized_extent(const double *x, size_t d, size_t a, size_t b, double *lo, double *hi);
void grove__quantized_records(const double *x, size_t d, size_t a, size_t b, const double *lo, const double *scale,
                              const int *shift, uint64_t mask, uint64_t *src);

/* The selecting builder (selecting.c): a point as its key along one
 * dimension and its id, ordered by key, then id. */
typedef struct grove__bs_pair {
    uint64_t key;
    uint32_t id;
} grove__bs_pair;
static inline bool grove__bs_less(grove__bs_pair a, grove__bs_pair b)
{
    return a.key < b.key || (a.key == b.key && a.id < b.id);
}
/* Dimensions the selecting builder takes: its leaves need 10-bit ranks
 * or more, d * 10 <= 64 (plan.c). */
#define GROVE__BS_MAX_DIMS 6
/* A node's extent: the smallest and largest key in each dimension. */
typedef struct grove__bs_extent {
    uint64_t lo[GROVE__BS_MAX_DIMS], hi[GROVE__BS_MAX_DIMS];
} grove__bs_extent;
/* No points yet: every lo above every key, every hi below. */
static inline void grove__bs_extent_empty(grove__bs_extent *e, size_t d)
{
    for (size_t j = 0; j < d; j++) {
        e->lo[j] = UINT64_MAX;
        e->hi[j] = 0;
    }
}
/* Where a split puts its two sides, as positions in dst and did: the
 * points below the pivot at [left, left_end), the others at
 * [right, right_end), each range exactly as long as its side. Nothing
 * outside them is written. */
typedef struct grove__bs_sides {
    size_t left, left_end, right, right_end;
} grove__bs_sides;
/* Move k points (d key arrays `stride` apart from src, ids from sid) to
 * dst and did: those below `pivot` along dimension s to one side, the
 * others to the other, each side in input order; gather each side's
 * extent. */
typedef void grove__bs_split_fn(const uint64_t *src, const uint32_t *sid, uint64_t *dst, uint32_t *did,
                                size_t stride, size_t d, size_t k, grove__bs_sides to, size_t s,
                                grove__bs_pair pivot, grove__bs_extent *left, grove__bs_extent *right);
/* Copy the points (key[i], id[i]) with lo <= point <= hi to out_key and
 * out_id (room for k points each, which the kernels may use as scratch
 * past the copies) in input order; return how many, and in *below how
 * many are below lo. */
typedef size_t grove__bs_window_fn(const uint64_t *key, const uint32_t *id, size_t k, grove__bs_pair lo,
                                   grove__bs_pair hi, uint64_t *out_key, uint32_t *out_id, size_t *below);
typedef struct grove__bs_kernels {
    grove__bs_split_fn *split;
    grove__bs_window_fn *window;
} grove__bs_kernels;
/* The AVX-512 and AVX2 passes (select_avx512.c, select_avx2.c); false
 * where the machine or compiler lacks them (with neither, the selecting
 * builder is not used). */
bool grove__bs_kernels_avx512(grove__bs_kernels *k);
bool grove__bs_kernels_avx2(grove__bs_kernels *k);

#endif
