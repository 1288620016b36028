/* One loop compiled twice, for the baseline x86-64 and for x86-64-v3, the
 * one way grove does it (cpu.h says why there is no second compilation of
 * a file):
 *
 *   GROVE__BODY ret NAME_body(params) { ... }
 *   GROVE__TWICE(ret, NAME, (params), (args))  defines NAME_portable and NAME_v3
 *   GROVE__PICK(v3, NAME)(args...)             calls NAME_v3 when v3, else NAME_portable
 *
 * The body is always inlined into both copies, so each is compiled for its
 * own target (GROVE__TARGET_V3: AVX2 loops, BMI2's shifts by a variable
 * count, LZCNT). Neither contracts into FMA, so both give the same bytes.
 * The copies stay out of line, so their callers do not grow. NAME may be a
 * template's FN(name): it is expanded before the suffixes are pasted. */
#ifndef GROVE_TWICE_H
#define GROVE_TWICE_H

#include "cpu.h"

#define GROVE__PASTE_(a, b) a##b
#define GROVE__PASTE(a, b) GROVE__PASTE_(a, b)

#define GROVE__BODY static inline __attribute__((always_inline))
#define GROVE__COPY(target, suffix, ret, name, params, args)                                                 \
    static target __attribute__((noinline)) ret GROVE__PASTE(name, suffix) params                            \
    {                                                                                                        \
        return GROVE__PASTE(name, _body) args;                                                               \
    }

#if GROVE__HAVE_TARGETS
#define GROVE__TWICE(ret, name, params, args)                                                                \
    GROVE__COPY(, _portable, ret, name, params, args)                                                        \
    GROVE__COPY(GROVE__TARGET_V3, _v3, ret, name, params, args)
#define GROVE__PICK(v3, name) ((v3) ? GROVE__PASTE(name, _v3) : GROVE__PASTE(name, _portable))
#else
#define GROVE__TWICE(ret, name, params, args) GROVE__COPY(, _portable, ret, name, params, args)
#define GROVE__PICK(v3, name) GROVE__PASTE(name, _portable)
#endif

#endif
