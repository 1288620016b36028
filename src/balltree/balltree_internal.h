/* Shared internals of the ball tree module: batch grouping (layout.c), the
 * tree builder (build.c, build_tree.h, build_packed.h, partition.c), ball statistics (stats.c) and
 * rotations (rotation.c). */
#ifndef GROVE_BALLTREE_INTERNAL_H
#define GROVE_BALLTREE_INTERNAL_H

#include "internal.h"

/* The points grouped by batch: batch b holds grouped positions
 * [start[b], start[b + 1]), its rows in ascending order. */
typedef struct grove__bt_groups {
    size_t count;  /* batches */
    int64_t *ids;  /* count ids, ascending */
    size_t *start; /* count + 1 offsets into the grouped order */
    size_t *order; /* n: grouped position -> input row; NULL when the ids
                      are already non-decreasing (position == row) */
} grove__bt_groups;

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

/* y[j * y_stride] = sum_k R[j d + k] x_k for input row `row`, summed in k
 * order in double without FMA contraction, so every platform agrees. */
void grove__bt_rotate_row(const double *rotation, grove_points points, size_t stride, size_t row, double *y,
                          size_t y_stride);

/* A packed record's rank in the dimension whose bits start at `shift`
 * (build_packed.h). */
static inline uint64_t grove__bp_rank(uint64_t e, int shift, uint64_t mask) { return e >> shift & mask; }
/* Stable partition of src[0..k) into dst: records whose rank at `shift` is
 * below `pivot` to dst[0..h), the others (exactly k - h of them) to
 * dst[h..k) (partition.c). */
typedef void grove__bp_partition_fn(const uint64_t *restrict src, uint64_t *restrict dst, size_t k, size_t h,
                                    int shift, uint64_t mask, uint64_t pivot);
grove__bp_partition_fn grove__bp_partition_portable;
/* The AVX-512 version, or NULL where the machine or compiler lacks it. */
grove__bp_partition_fn *grove__bp_partition_avx512(void);
/* The fastest this machine runs (all give the same bytes). */
grove__bp_partition_fn *grove__bp_partition_pick(void);

#endif
