/* The processor's instruction sets, read once per process, and the one way
 * grove picks vector code: kernels carry `target` attributes (so the files
 * build without -march flags) and are chosen at run time from
 * grove__cpu(), by a function pointer or an if. No target_clones, no
 * second compilation of a file. */
#ifndef GROVE_CPU_H
#define GROVE_CPU_H

#include <stdbool.h>

/* The features grove asks about, one X(name) each. */
#define GROVE__CPU_LIST(X)                                                                                   \
    X(avx2) X(fma) X(bmi1) X(bmi2) X(lzcnt) X(popcnt)                                                        \
    X(avx512f) X(avx512bw) X(avx512cd) X(avx512dq) X(avx512vl) X(avx512vbmi) X(avx512bitalg)
#define GROVE__CPU_FIELD(name) bool name;
typedef struct grove__cpu_features {
    GROVE__CPU_LIST(GROVE__CPU_FIELD)
} grove__cpu_features;
#undef GROVE__CPU_FIELD

/* What this process may use: what the processor reports, capped by
 * GROVE_CPU in the environment, both read once, at the first call
 * (thread-safe; grove_cpu_info reports them):
 * "portable" (nothing: the baseline x86-64 code only), "avx2" (what an
 * AVX2 machine without AVX-512 runs: AVX2, FMA, BMI1/2, LZCNT, POPCNT),
 * unset, empty or "native" (everything); any other value runs
 * the portable code and grove_cpu_info fails naming it. Every vector path gives the same
 * results; the cap exists so the tests can run each path on one machine.
 * All false on other architectures and compilers. */
grove__cpu_features grove__cpu(void);

/* Whether this compiler and architecture take grove's target attributes
 * (x86-64 with GCC or clang): without them only the portable code is
 * compiled. */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define GROVE__HAVE_TARGETS 1
#else
#define GROVE__HAVE_TARGETS 0
#endif

/* The x86-64-v3 group grove compiles its scalar hot loops for (BMI2's
 * shifts by a variable count, LZCNT/TZCNT bit scans, AVX2 small loops;
 * no FMA, so nothing rounds differently from the portable code), that
 * group with AVX-512 BITALG's bit shuffles (Intel Ice Lake, AMD Zen 4 and
 * later), and whether this process may run each. Without targets both are
 * empty: code under them is the portable code there. */
#if GROVE__HAVE_TARGETS
#define GROVE__TARGET_V3 __attribute__((target("avx2,bmi,bmi2,lzcnt,popcnt")))
#define GROVE__TARGET_BITALG __attribute__((target("avx2,bmi,bmi2,lzcnt,popcnt,avx512f,avx512bw,avx512bitalg")))
#else
#define GROVE__TARGET_V3
#define GROVE__TARGET_BITALG
#endif
static inline bool grove__cpu_v3(grove__cpu_features c)
{
    return c.avx2 && c.bmi1 && c.bmi2 && c.lzcnt && c.popcnt;
}
static inline bool grove__cpu_bitalg(grove__cpu_features c)
{
    return grove__cpu_v3(c) && c.avx512f && c.avx512bw && c.avx512bitalg;
}

#endif
