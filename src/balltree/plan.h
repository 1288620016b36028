/* Which builder and vector paths a build takes (plan.c): a pure function
 * of the batches and the processor's features, so tests can ask it. */
#ifndef GROVE_BALLTREE_PLAN_H
#define GROVE_BALLTREE_PLAN_H

#include "cpu.h"

#include <stdbool.h>
#include <stddef.h>

/* The builders, same bytes each: presorted (any batch), packed (records
 * fit 64 bits), selecting (large full-mode batches, leaves to packed). */
typedef enum grove__bt_builder { GROVE__BT_PRESORTED, GROVE__BT_PACKED, GROVE__BT_SELECTING } grove__bt_builder;

/* The instruction set of a kernel the plan picks. */
typedef enum grove__bt_isa { GROVE__BT_PORTABLE, GROVE__BT_AVX2, GROVE__BT_AVX512 } grove__bt_isa;

typedef struct grove__bt_plan_input {
    size_t batches;       /* >= 1 */
    size_t largest;       /* points of the largest batch */
    size_t d;
    bool partition;       /* partition mode (else full) */
    bool rotation;        /* the points are rotated first */
    grove__cpu_features cpu;
} grove__bt_plan_input;

typedef struct grove__bt_plan {
    grove__bt_builder builder;
    /* "presorted", "packed[+quantized]+bits", "selecting[...]": grove_balltree_builder */
    const char *name;
    int bits;               /* packed: bits per rank of the largest batch */
    int leaf_bits;          /* selecting: bits per rank of its leaves, */
    size_t leaf_max;        /*   which have at most leaf_max points */
    bool bitmask;           /* small full-mode subtrees as bit masks (packed_bitmask.c), */
    bool bitmask_bitalg;    /*   in their AVX-512 BITALG copy */
    bool quantize;          /* packed records quantized where their fields fit (packed_quantized.c) */
    grove__bt_isa partition_isa; /* the packed builder's list partition (partition.c) */
    grove__bt_isa select_isa;    /* the selecting builder's passes (select_*.c); portable: none */
    /* the lone batch's first pass checks the coordinates */
    bool first_pass_checks;
} grove__bt_plan;

grove__bt_plan grove__bt_plan_make(const grove__bt_plan_input *in);

/* Beyond this many points the lookups by rank miss the cache. */
#define GROVE__BP_MAX_COUNT 65536
/* Bits per rank for m points in d dimensions, 0 where packed is not used. */
int grove__bt_packed_bits(size_t m, size_t d, size_t lists);
/* Bits of an id of m points, and of quantized fields (0 where too narrow). */
int grove__quantized_id_bits(size_t m);
int grove__quantized_field_bits(size_t m, size_t d);
/* The widest digit of the quantized records' radix sort. */
#define GROVE__QUANTIZED_DIGIT 12
/* Dimensions the bit-mask subtrees take (2..GROVE__BITMASK_DIMS). */
#define GROVE__BITMASK_DIMS 4

#endif
