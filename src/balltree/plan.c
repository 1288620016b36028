/* grove__bt_plan_make: the builder and vector paths for a build (plan.h). */
#include "balltree_internal.h"

/* The selecting builder's leaves: BS_LEAF points (fewer where d * 14 >
 * 64), at least BS_LEAF_MIN, in a batch of twice as many. */
#define BS_LEAF 16384
#define BS_LEAF_MIN 1024
/* Its AVX2 passes pay off up to this many dimensions. */
#define BS_AVX2_DIMS 5

/* Quantized fields: BQ_SLACK bits more than the ids, or down to BQ_NARROW
 * fewer where one radix pass sorts them, at most BQ_WIDE more. */
#define BQ_SLACK 2
#define BQ_NARROW 2
#define BQ_WIDE 6

static int log2_ceil(size_t m)
{
    int bits = 1;
    while (((size_t)1 << bits) < m) bits++;
    return bits;
}

int grove__bt_packed_bits(size_t m, size_t d, size_t lists)
{
    int bits = log2_ceil(m);
    return m <= GROVE__BP_MAX_COUNT && lists < 64 && d * (size_t)bits <= 64 ? bits : 0;
}

int grove__quantized_id_bits(size_t m) { return log2_ceil(m); }

int grove__quantized_field_bits(size_t m, size_t d)
{
    int id_bits = grove__quantized_id_bits(m), bits = (int)((size_t)(64 - id_bits) / d);
    bits = bits > id_bits + BQ_WIDE ? id_bits + BQ_WIDE : bits;
    if (bits >= id_bits + BQ_SLACK) return bits;
    int one_pass = id_bits < GROVE__QUANTIZED_DIGIT ? id_bits : GROVE__QUANTIZED_DIGIT;
    return bits <= one_pass && bits >= id_bits - BQ_NARROW ? bits : 0;
}

/* The plan's name (plan.h). */
static const char *plan_name(const grove__bt_plan *p, size_t m, size_t d)
{
    bool select = p->builder == GROVE__BT_SELECTING;
    if (p->builder == GROVE__BT_PRESORTED) return "presorted";
    if (!p->bitmask) return select ? "selecting" : "packed";
    if (!p->quantize || !grove__quantized_field_bits(select ? p->leaf_max : m, d))
        return select ? "selecting+bits" : "packed+bits";
    return select ? "selecting+quantized+bits" : "packed+quantized+bits";
}

grove__bt_plan grove__bt_plan_make(const grove__bt_plan_input *in)
{
    grove__cpu_features cpu = in->cpu;
    size_t d = in->d, m = in->largest;
    bool full = !in->partition;
    grove__bt_plan p = {0};
    p.bits = grove__bt_packed_bits(m, d, d + in->partition);
    p.leaf_bits = grove__bt_packed_bits(BS_LEAF, 1, 1);
    if (d * (size_t)p.leaf_bits > 64) p.leaf_bits = (int)(64 / d);
    p.leaf_max = (size_t)1 << p.leaf_bits;
    p.partition_isa = cpu.avx512f ? GROVE__BT_AVX512 : cpu.avx2 && cpu.popcnt ? GROVE__BT_AVX2 : GROVE__BT_PORTABLE;
    p.select_isa = cpu.avx512f && cpu.avx512vl ? GROVE__BT_AVX512
                   : cpu.avx2 && cpu.popcnt    ? GROVE__BT_AVX2
                                               : GROVE__BT_PORTABLE;
    p.bitmask = full && d >= 2 && d <= GROVE__BITMASK_DIMS && grove__cpu_v3(cpu);
    p.bitmask_bitalg = p.bitmask && grove__cpu_bitalg(cpu);
    /* Quantized records only where the bit-mask subtrees finish them. */
    p.quantize = p.bitmask && d <= GROVE__QUANTIZED_MAX_DIMS;
    size_t select_dims = p.select_isa == GROVE__BT_AVX512 ? GROVE__BS_MAX_DIMS
                         : p.select_isa == GROVE__BT_AVX2 ? BS_AVX2_DIMS
                                                          : 0;
    bool select_fits = full && d <= select_dims && p.leaf_max >= BS_LEAF_MIN && m >= 2 * p.leaf_max;
    /* Packed would rank the batch but selecting's leaves quantize: selecting. */
    bool leaves_quantize =
        p.quantize && !grove__quantized_field_bits(m, d) && grove__quantized_field_bits(p.leaf_max, d);
    if (select_fits && (!p.bits || leaves_quantize)) {
        p.builder = GROVE__BT_SELECTING;
        p.bits = 0;
    } else {
        p.builder = p.bits ? GROVE__BT_PACKED : GROVE__BT_PRESORTED;
    }
    /* A lone batch's quantized or selecting first pass checks the coordinates. */
    p.first_pass_checks = in->batches == 1 && !in->rotation &&
                          (p.builder == GROVE__BT_SELECTING ||
                           (p.builder == GROVE__BT_PACKED && p.quantize && grove__quantized_field_bits(m, d)));
    p.name = plan_name(&p, m, d);
    return p;
}

grove_status grove_balltree_builder(size_t n, size_t d, const grove_balltree_params *params, const char **builder)
{
    grove__clear_error();
    if (!builder) return grove__fail(GROVE_INVALID_ARGUMENT, "balltree_builder: builder is NULL");
    grove_balltree_params p;
    grove__bt_groups g;
    grove_status s = grove__bt_params(params, &p);
    if (s == GROVE_OK) s = grove__bt_groups_make(n, &p, &g);
    if (s != GROVE_OK) return s;
    grove__bt_plan_input in = {g.count, 0, d, p.levels != GROVE_BALLTREE_FULL, p.rotation != NULL, grove__cpu()};
    for (size_t b = 0; b < g.count; b++)
        if (g.start[b + 1] - g.start[b] > in.largest) in.largest = g.start[b + 1] - g.start[b];
    grove__bt_groups_free(&g);
    *builder = grove__bt_plan_make(&in).name;
    return GROVE_OK;
}
