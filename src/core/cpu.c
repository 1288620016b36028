/* grove__cpu: CPUID once, then GROVE_CPU's cap (cpu.h); grove_cpu_info
 * says which vector code that leaves, and refuses a GROVE_CPU it does not
 * know. */
#include "cpu.h"
#include "internal.h"

#include <pthread.h>
#include <stdio.h>
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

/* What the first call found, kept for the process: the processor's
 * features, GROVE_CPU's cap and the features it leaves (those grove__cpu
 * returns), and GROVE_CPU's value when it is not one grove knows. Set once
 * under pthread_once, so every thread sees one reading of the environment. */
typedef enum { CAP_UNSET, CAP_NATIVE, CAP_AVX2, CAP_PORTABLE, CAP_UNKNOWN } cpu_cap;
static const char *const CAP_NAMES[] = {"", "native", "avx2", "portable"};
static struct {
    grove__cpu_features processor, usable;
    cpu_cap cap;
    char unknown[48]; /* CAP_UNKNOWN: the value, cut short */
} state;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void read_features(void)
{
    read_cpuid(&state.processor);
    state.usable = state.processor;
    const char *value = getenv("GROVE_CPU");
    state.cap = CAP_UNSET;
    if (value && *value) {
        state.cap = CAP_UNKNOWN;
        for (int c = CAP_NATIVE; c <= CAP_PORTABLE; c++)
            if (strcmp(value, CAP_NAMES[c]) == 0) state.cap = (cpu_cap)c;
        if (state.cap == CAP_UNKNOWN) snprintf(state.unknown, sizeof state.unknown, "%s", value);
    }
    /* An unknown value runs the portable code (and grove_cpu_info says so). */
    if (state.cap == CAP_PORTABLE || state.cap == CAP_UNKNOWN) {
        grove__cpu_features none = {0};
        state.usable = none;
    } else if (state.cap == CAP_AVX2) {
        grove__cpu_features *f = &state.usable;
        f->avx512f = f->avx512bw = f->avx512cd = f->avx512dq = f->avx512vl = f->avx512vbmi = f->avx512bitalg = false;
    }
}

grove__cpu_features grove__cpu(void)
{
    pthread_once(&once, read_features);
    return state.usable;
}

/* The widest vector code the usable features run: the names GROVE_CPU
 * caps by, plus avx512. */
static const char *vector_path(grove__cpu_features f)
{
    return f.avx512f ? "avx512" : f.avx2 ? "avx2" : "portable";
}

grove_status grove_cpu_info(char *text, size_t size)
{
    grove__clear_error();
    if (!text && size) return grove__fail(GROVE_INVALID_ARGUMENT, "text is NULL");
    grove__cpu_features usable = grove__cpu();
    char features[160] = "";
    size_t len = 0;
#define NAME(name)                                                                                                   \
    if (state.processor.name && len < sizeof features)                                                               \
        len += (size_t)snprintf(features + len, sizeof features - len, "%s" #name, len ? " " : "");
    GROVE__CPU_LIST(NAME)
#undef NAME
    if (!GROVE__HAVE_TARGETS) snprintf(features, sizeof features, "not read: this build has no vector code");
    else if (!len) snprintf(features, sizeof features, "none grove uses");
    char cap[96];
    if (state.cap == CAP_UNSET) snprintf(cap, sizeof cap, "GROVE_CPU unset");
    else if (state.cap == CAP_UNKNOWN) snprintf(cap, sizeof cap, "GROVE_CPU=%s unknown, so portable", state.unknown);
    else snprintf(cap, sizeof cap, "GROVE_CPU=%s", CAP_NAMES[state.cap]);
    if (size) snprintf(text, size, "%s (%s; features: %s)", vector_path(usable), cap, features);
    if (state.cap == CAP_UNKNOWN)
        return grove__fail(GROVE_INVALID_ARGUMENT, "GROVE_CPU=%s: expected portable, avx2 or native (or unset)",
                           state.unknown);
    return GROVE_OK;
}
