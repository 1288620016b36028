/* One loop compiled twice, for two instruction sets, the one way grove
 * does it (cpu.h says why there is no second compilation of a file):
 *
 *   GROVE__BODY(target) ret NAME_body(params) { ... }
 *   GROVE__TWICE(ret, NAME, (params), (args))  NAME_portable and NAME_v3
 *   GROVE__PICK(v3, NAME)(args...)             NAME_v3 when v3, else NAME_portable
 *
 * The body is always inlined into both copies, so each is compiled for its
 * own target: NAME_portable for the baseline x86-64, NAME_v3 under
 * GROVE__TARGET_V3 (AVX2 loops, BMI2's shifts by a variable count, LZCNT).
 * Another pair is two GROVE__COPY (or GROVE__COPY_VOID) lines, the body's
 * target then what both copies have; the body may call a `static inline`
 * helper with a wider target in a branch that only the wider copy takes
 * (a constant argument says which), as `flatten` inlines into each copy
 * whatever its target allows. Neither copy contracts into FMA, so both
 * give the same bytes. The copies stay out of line, so their callers do
 * not grow. NAME may be a template's FN(name): it is expanded before the
 * suffixes are pasted. */
#ifndef GROVE_TWICE_H
#define GROVE_TWICE_H

#include "cpu.h"

#define GROVE__PASTE_(a, b) a##b
#define GROVE__PASTE(a, b) GROVE__PASTE_(a, b)

#define GROVE__BODY(target) static inline target __attribute__((always_inline))
#define GROVE__COPY(target, suffix, ret, name, params, args)                                                 \
    static target __attribute__((noinline, flatten)) ret GROVE__PASTE(name, suffix) params                   \
    {                                                                                                        \
        return GROVE__PASTE(name, _body) args;                                                               \
    }
#define GROVE__COPY_VOID(target, suffix, name, params, args)                                                 \
    static target __attribute__((noinline, flatten)) void GROVE__PASTE(name, suffix) params                  \
    {                                                                                                        \
        GROVE__PASTE(name, _body) args;                                                                      \
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
