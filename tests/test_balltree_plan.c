/* The ball tree's planner (src/balltree/plan.c): which builder and vector
 * paths a build takes, for machines named by their features rather than
 * this one's, and grove_balltree_builder as the CLI reports it. */
#include "test.h"
#include "internal.h"
#include "balltree/balltree_internal.h"

#include <string.h>

/* The machines the planner tells apart. */
static grove__cpu_features cpu_portable(void)
{
    grove__cpu_features f = {0};
    return f;
}
static grove__cpu_features cpu_avx2(void)
{
    grove__cpu_features f = {0};
    f.avx2 = f.fma = f.bmi1 = f.bmi2 = f.lzcnt = f.popcnt = true;
    return f;
}
/* AVX-512 without BITALG or VBMI (Intel Skylake-SP). */
static grove__cpu_features cpu_avx512_no_bitalg(void)
{
    grove__cpu_features f = cpu_avx2();
    f.avx512f = f.avx512bw = f.avx512cd = f.avx512dq = f.avx512vl = true;
    return f;
}
/* AVX-512 with everything (Ice Lake and later, AMD Zen 4 and 5). */
static grove__cpu_features cpu_avx512(void)
{
    grove__cpu_features f = cpu_avx512_no_bitalg();
    f.avx512vbmi = f.avx512bitalg = true;
    return f;
}

typedef struct plan_case {
    size_t batches, largest, d;
    bool partition, rotation;
    grove__cpu_features (*cpu)(void);
    const char *name;
    bool first_pass_checks;
} plan_case;

TEST(balltree_plan_names_the_builder)
{
    const plan_case cases[] = {
        /* Up to 2^16 points whose ranks fit a word: packed, quantized with
         * the bit-mask subtrees where the machine has x86-64-v3. */
        {1, 16384, 3, false, false, cpu_avx512, "packed+quantized+bits", true},
        {64, 16384, 3, false, false, cpu_avx512, "packed+quantized+bits", false},
        {1, 16384, 3, false, true, cpu_avx512, "packed+quantized+bits", false},
        {1, 16384, 3, false, false, cpu_avx512_no_bitalg, "packed+quantized+bits", true},
        {1, 16384, 3, false, false, cpu_avx2, "packed+quantized+bits", true},
        {1, 16384, 3, false, false, cpu_portable, "packed", false},
        {1, 1024, 2, false, false, cpu_avx512, "packed+quantized+bits", true},
        /* d = 5 and 6: bit-mask subtrees stop at 4 dimensions. */
        {1, 1024, 5, false, false, cpu_avx512, "packed", false},
        /* Quantized fields too narrow for 65536 points in 4 dimensions:
         * the selecting builder, whose 16384-point leaves quantize. */
        {1, 65536, 4, false, false, cpu_avx512, "selecting+quantized+bits", true},
        {1, 65536, 4, false, false, cpu_avx2, "selecting+quantized+bits", true},
        {1, 65536, 4, false, false, cpu_portable, "packed", false},
        /* Beyond 2^16 points: selecting where its passes have vector code
         * (AVX2 up to 5 dimensions, AVX-512 up to 6), else presorted. */
        {1, 1u << 20, 3, false, false, cpu_avx512, "selecting+quantized+bits", true},
        {1, 1u << 20, 3, false, false, cpu_avx512_no_bitalg, "selecting+quantized+bits", true},
        {1, 1u << 20, 3, false, false, cpu_avx2, "selecting+quantized+bits", true},
        {2, 1u << 20, 3, false, false, cpu_avx2, "selecting+quantized+bits", false},
        {1, 1u << 20, 3, false, false, cpu_portable, "presorted", false},
        {1, 1u << 20, 5, false, false, cpu_avx2, "selecting", true},
        {1, 1u << 20, 6, false, false, cpu_avx2, "presorted", false},
        {1, 1u << 20, 6, false, false, cpu_avx512, "selecting", true},
        {1, 1u << 20, 7, false, false, cpu_avx512, "presorted", false},
        /* d = 6 at 16384 points: 14-bit ranks do not fit a word six
         * times, and the selecting builder's 10-bit leaves do. */
        {1, 16384, 6, false, false, cpu_avx512, "selecting", true},
        {1, 16384, 6, false, false, cpu_avx2, "presorted", false},
        /* The selecting builder needs a batch of twice its leaves (and
         * 11-bit ranks do not fit six times either). */
        {1, 2047, 6, false, false, cpu_avx512, "presorted", false},
        /* Partition mode: packed where ranks and the id list fit, never
         * selecting or bit masks. */
        {1, 16384, 3, true, false, cpu_avx512, "packed", false},
        {1, 1u << 20, 3, true, false, cpu_avx512, "presorted", false},
        {1, 1000, 8, false, false, cpu_avx512, "presorted", false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const plan_case *k = &cases[i];
        grove__bt_plan_input in = {k->batches, k->largest, k->d, k->partition, k->rotation, k->cpu()};
        grove__bt_plan p = grove__bt_plan_make(&in);
        CHECK_MSG(strcmp(p.name, k->name) == 0, "case %zu: %s, expected %s", i, p.name, k->name);
        CHECK_MSG(p.first_pass_checks == k->first_pass_checks, "case %zu: first_pass_checks %d", i,
                  p.first_pass_checks);
    }
}

TEST(balltree_plan_vector_paths_follow_the_machine)
{
    grove__bt_plan_input in = {1, 16384, 3, false, false, cpu_portable()};
    grove__bt_plan p = grove__bt_plan_make(&in);
    CHECK(p.partition_isa == GROVE__BT_PORTABLE && p.select_isa == GROVE__BT_PORTABLE);
    CHECK(!p.bitmask && !p.bitmask_bitalg && !p.quantize);
    in.cpu = cpu_avx2();
    p = grove__bt_plan_make(&in);
    CHECK(p.partition_isa == GROVE__BT_AVX2 && p.select_isa == GROVE__BT_AVX2);
    CHECK(p.bitmask && !p.bitmask_bitalg && p.quantize);
    in.cpu = cpu_avx512_no_bitalg();
    p = grove__bt_plan_make(&in);
    CHECK(p.partition_isa == GROVE__BT_AVX512 && p.select_isa == GROVE__BT_AVX512);
    CHECK(p.bitmask && !p.bitmask_bitalg && p.quantize);
    in.cpu = cpu_avx512();
    p = grove__bt_plan_make(&in);
    CHECK(p.bitmask && p.bitmask_bitalg && p.quantize && p.bits == 14);
    /* The selecting builder's leaves: 14-bit ranks, 10 bits at d = 6. */
    CHECK(p.leaf_bits == 14 && p.leaf_max == 16384);
    in.d = 6;
    p = grove__bt_plan_make(&in);
    CHECK(p.leaf_bits == 10 && p.leaf_max == 1024 && p.bits == 0);
}

TEST(balltree_plan_field_and_rank_bits)
{
    CHECK(grove__bt_packed_bits(16384, 3, 3) == 14);
    CHECK(grove__bt_packed_bits(65536, 4, 4) == 16);
    CHECK(grove__bt_packed_bits(65537, 1, 1) == 0);
    CHECK(grove__bt_packed_bits(16384, 5, 5) == 0);
    CHECK(grove__bt_packed_bits(16384, 3, 64) == 0);
    CHECK(grove__quantized_field_bits(16384, 3) == 16);
    CHECK(grove__quantized_field_bits(65536, 2) == 22);
    CHECK(grove__quantized_field_bits(16384, 4) == 12);
    CHECK(grove__quantized_field_bits(65536, 4) == 0);
}

TEST(balltree_plan_builder_query)
{
    const grove__cpu_features cpu = grove__cpu();
    grove_balltree_params p;
    grove_balltree_params_init(&p);
    const char *name = NULL;
    REQUIRE_OK(grove_balltree_builder(16384, 3, &p, &name));
    grove__bt_plan_input in = {1, 16384, 3, false, false, cpu};
    CHECK(name && strcmp(name, grove__bt_plan_make(&in).name) == 0);
    /* Batches: the largest decides. */
    int64_t batch[300];
    for (size_t i = 0; i < 300; i++) batch[i] = i < 200 ? 1 : 0;
    p.batch = batch;
    REQUIRE_OK(grove_balltree_builder(300, 3, &p, &name));
    grove__bt_plan_input small = {2, 200, 3, false, false, cpu};
    CHECK(strcmp(name, grove__bt_plan_make(&small).name) == 0);
    p.levels = 2;
    p.batch = NULL;
    REQUIRE_OK(grove_balltree_builder((size_t)1 << 20, 3, &p, &name));
    CHECK(strcmp(name, "presorted") == 0);
    CHECK(grove_balltree_builder(10, 3, &p, NULL) == GROVE_INVALID_ARGUMENT);
    p.levels = -5;
    CHECK(grove_balltree_builder(10, 3, &p, &name) == GROVE_INVALID_ARGUMENT);
}
