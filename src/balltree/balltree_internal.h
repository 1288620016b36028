/* The ball tree module's internals (the builders' are in builder.h). */
#ifndef GROVE_BALLTREE_INTERNAL_H
#define GROVE_BALLTREE_INTERNAL_H

#include "internal.h"
#include "cpu.h"
#include "plan.h"

/* Batch b holds grouped positions [start[b], start[b + 1]), rows ascending. */
typedef struct grove__bt_groups {
    size_t count;  /* batches */
    int64_t *ids;  /* count ids, ascending */
    size_t *start; /* count + 1 offsets into the grouped order */
    size_t *order; /* n: grouped position -> input row; NULL when position == row */
} grove__bt_groups;

/* Nodes and batches of at least BT_TASK_MIN points make tasks. */
#define BT_TASK_MIN 4096
/* Whether a node of k points is a batch's root (of `count`) that the
 * team builds alone (a spawning build, the root holding more than half of
 * all n points): its passes then run in parts, one per thread. */
static inline bool grove__bt_team_root(bool spawn, size_t k, size_t count, size_t n)
{
    return spawn && k == count && k >= BT_TASK_MIN && 2 * k > n;
}
/* The threads a build uses (layout.c); one_off: no workspace. */
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

/* Range (rotation.c): whether the points need scaling by a power of two:
 * a spread of coordinates up to `magnitude` (or of the rotated ones) may
 * overflow a double, where two such spreads would compare as a tie, or a
 * rotation of values below 2^-969 would round its products to subnormals.
 * The builder and checker then work on grove__bt_scaled (n x d doubles,
 * NULL when out of memory), exact but for subnormals: the same tree. */
bool grove__bt_needs_scaling(double magnitude, size_t d, bool rotated);
double *grove__bt_scaled(grove_points points, double magnitude, bool rotated);

/* y = R x for input row `row`, in k order, no FMA. */
void grove__bt_rotate_row(const double *rotation, grove_points points, size_t stride, size_t row, double *y);

/* The valid lanes among the next eight when `left` entries remain. */
static inline uint8_t grove__bt_lanes8(size_t left) { return left >= 8 ? 0xff : (uint8_t)((1u << left) - 1); }

/* A packed record's field (rank or quantized coordinate) at `shift`. */
static inline uint64_t grove__record_field(uint64_t e, int shift, uint64_t mask) { return e >> shift & mask; }
/* Stable partition of src[0..k) into dst: records whose field at
 * `shift` is below `pivot` to dst[0..h), the k - h others after. */
typedef void grove__packed_partition_fn(const uint64_t *restrict src, uint64_t *restrict dst, size_t k, size_t h,
                                    int shift, uint64_t mask, uint64_t pivot);
grove__packed_partition_fn grove__packed_partition_portable;
/* The AVX-512 and AVX2 versions, NULL where machine or compiler lack them. */
grove__packed_partition_fn *grove__packed_partition_avx512(void);
grove__packed_partition_fn *grove__packed_partition_avx2(void);

/* The quantized first pass (x86-64-v3) over rows [a, b) of d doubles:
 * extent: each coordinate's smallest and largest (b > a), and whether all
 * are finite; records: src[i] = i | q_j << shift[j] for every j, where
 * q_j = min(floor((x_j - lo[j]) * scale[j]), mask) (under 2^31). */
#define GROVE__QUANTIZED_MAX_DIMS 4
bool grove__quantized_extent(const double *x, size_t d, size_t a, size_t b, double *lo, double *hi);
void grove__quantized_records(const double *x, size_t d, size_t a, size_t b, const double *lo, const double *scale,
                              const int *shift, uint64_t mask, uint64_t *src);

/* The selecting builder: a point as its key along one dimension and id. */
typedef struct grove__bs_pair {
    uint64_t key;
    uint32_t id;
} grove__bs_pair;
static inline bool grove__bs_less(grove__bs_pair a, grove__bs_pair b)
{
    return a.key < b.key || (a.key == b.key && a.id < b.id);
}
/* Dimensions it takes: its leaves need 10-bit ranks, d * 10 <= 64. */
#define GROVE__BS_MAX_DIMS 6
/* A node's extent: the smallest and largest key in each dimension. */
typedef struct grove__bs_extent {
    uint64_t lo[GROVE__BS_MAX_DIMS], hi[GROVE__BS_MAX_DIMS];
} grove__bs_extent;
/* Where a split puts its sides in dst and did: below the pivot at
 * [left, left_end), the others at [right, right_end), nothing outside. */
typedef struct grove__bs_sides {
    size_t left, left_end, right, right_end;
} grove__bs_sides;
/* Move k points (d key arrays `stride` apart, ids) to dst and did, below
 * `pivot` along s to one side, each side in input order, with extents. */
typedef void grove__bs_split_fn(const uint64_t *src, const uint32_t *sid, uint64_t *dst, uint32_t *did,
                                size_t stride, size_t d, size_t k, grove__bs_sides to, size_t s,
                                grove__bs_pair pivot, grove__bs_extent *left, grove__bs_extent *right);
/* Copy the points with lo <= point <= hi (room for k) in input order;
 * return how many, and in *below how many are below lo. */
typedef size_t grove__bs_window_fn(const uint64_t *key, const uint32_t *id, size_t k, grove__bs_pair lo,
                                   grove__bs_pair hi, uint64_t *out_key, uint32_t *out_id, size_t *below);
typedef struct grove__bs_kernels {
    grove__bs_split_fn *split;
    grove__bs_window_fn *window;
} grove__bs_kernels;
/* The AVX-512 and AVX2 passes; false where machine or compiler lack them. */
bool grove__bs_kernels_avx512(grove__bs_kernels *k);
bool grove__bs_kernels_avx2(grove__bs_kernels *k);

#endif
