/* One kernel body compiled for two instruction sets, the one way grove
 * does it (cpu.h says why there is no second compilation of a file):
 *
 *   GROVE__BODY(target) ret NAME_body(params) { ... }
 *   GROVE__TWICE(ret, NAME, (params), (args))  NAME_portable and NAME_v3
 *   GROVE__PICK(v3, NAME)(args...)             the one to call
 *
 * The body is always inlined into each copy, so each is compiled for its
 * own target: NAME_portable for the baseline x86-64, NAME_v3 under
 * GROVE__TARGET_V3 (BMI2's shifts by a variable count, LZCNT, AVX2 loops).
 * A pair with other targets is two GROVE__COPY lines (the body's target is
 * then what both copies have, e.g. GROVE__TARGET_V3 under GROVE__TARGET_V3
 * and GROVE__TARGET_AVX512), picked by the caller. Neither copy contracts
 * into FMA (GROVE__TARGET_V3 leaves it out), so both give the same bytes.
 * The copies stay out of line, so their callers do not grow, each
 * starting a cache line of its own, so that its loops sit the same
 * whatever the code around it; `flatten`
 * inlines into each copy whatever its body calls that the copy's target
 * allows, so a body may call a `static inline` helper with a wider target
 * in a branch that only the wider copy takes. NAME may itself be a macro
 * call (a template's FN(name)): it is expanded before the suffixes are
 * pasted. Copies return the body's value; a void body is copied by
 * GROVE__COPY_VOID. */
#ifndef GROVE_TWICE_H
#define GROVE_TWICE_H

#include "cpu.h"

#define GROVE__PASTE_(a, b) a##b
#define GROVE__PASTE(a, b) GROVE__PASTE_(a, b)

#define GROVE__BODY(target) static inline target __attribute__((always_inline))
#define GROVE__COPY(target, suffix, ret, name, params, args)                                                 \
    static target __attribute__((noinline, flatten, aligned(64))) ret GROVE__PASTE(name, suffix) params      \
    {                                                                                                        \
        return GROVE__PASTE(name, _body) args;                                                               \
    }
#define GROVE__COPY_VOID(target, suffix, name, params, args)                                                 \
    static target __attribute__((noinline, flatten, aligned(64))) void GROVE__PASTE(name, suffix) params     \
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
