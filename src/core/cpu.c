/* grove__cpu: CPUID once, then GROVE_CPU's cap (cpu.h). */
#include "cpu.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if GROVE__HAVE_TARGETS
#include <cpuid.h>

/* XCR0 bits that say the OS saves the AVX (YMM) and AVX-512 (opmask, ZMM)
 * state: without them the instructions fault whatever CPUID says. */
static unsigned long long xgetbv0(void)
{
    unsigned lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return (unsigned long long)hi << 32 | lo;
}

static void read_cpuid(grove__cpu_features *f)
{
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return;
    bool osxsave = c >> 27 & 1, fma = c >> 12 & 1;
    f->popcnt = c >> 23 & 1;
    unsigned long long xcr0 = osxsave ? xgetbv0() : 0;
    bool ymm = (xcr0 & 0x6) == 0x6, zmm = ymm && (xcr0 & 0xe0) == 0xe0;
    f->fma = ymm && fma;
    if (__get_cpuid_count(7, 0, &a, &b, &c, &d)) {
        f->bmi1 = b >> 3 & 1;
        f->bmi2 = b >> 8 & 1;
        f->avx2 = ymm && (b >> 5 & 1);
        f->avx512f = zmm && (b >> 16 & 1);
        f->avx512dq = f->avx512f && (b >> 17 & 1);
        f->avx512cd = f->avx512f && (b >> 28 & 1);
        f->avx512bw = f->avx512f && (b >> 30 & 1);
        f->avx512vl = f->avx512f && (b >> 31 & 1);
        f->avx512vbmi = f->avx512f && (c >> 1 & 1);
        f->avx512bitalg = f->avx512f && (c >> 12 & 1);
    }
    if (__get_cpuid(0x80000001, &a, &b, &c, &d)) f->lzcnt = c >> 5 & 1;
}
#else
static void read_cpuid(grove__cpu_features *f) { (void)f; }
#endif

/* The features as bits (the struct's fields in order) plus KNOWN, so one
 * atomic word holds the answer (read with a relaxed load: the bits are
 * the whole answer): two threads that both ask first compute
 * the same bits. */
#define KNOWN (UINT32_C(1) << 31)
static atomic_uint_least32_t known;

static uint32_t read_features(void)
{
    grove__cpu_features f = {0};
    read_cpuid(&f);
    const char *cap = getenv("GROVE_CPU");
    if (cap && strcmp(cap, "portable") == 0) {
        grove__cpu_features none = {0};
        f = none;
    } else if (cap && strcmp(cap, "avx2") == 0) {
        f.avx512f = f.avx512bw = f.avx512cd = f.avx512dq = f.avx512vl = f.avx512vbmi = f.avx512bitalg = false;
    }
    uint32_t bits = KNOWN;
    int i = 0;
#define PACK(name) bits |= (uint32_t)f.name << i++;
    GROVE__CPU_LIST(PACK)
#undef PACK
    return bits;
}

grove__cpu_features grove__cpu(void)
{
    uint32_t bits = atomic_load_explicit(&known, memory_order_relaxed);
    if (!bits) {
        bits = read_features();
        atomic_store_explicit(&known, bits, memory_order_relaxed);
    }
    grove__cpu_features f;
    int i = 0;
#define UNPACK(name) f.name = bits >> i++ & 1;
    GROVE__CPU_LIST(UNPACK)
#undef UNPACK
    return f;
}
