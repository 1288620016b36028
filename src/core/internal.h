/* Internal helpers shared by every part of the library; never installed.
 * Names start with grove__ (double underscore) and are hidden from the
 * shared library by -fvisibility=hidden. */
#ifndef GROVE_INTERNAL_H
#define GROVE_INTERNAL_H

#include "grove.h"

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__)
#define GROVE__PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define GROVE__PRINTF(a, b)
#endif

#if defined(__GNUC__)
#define GROVE__ALWAYS_INLINE __attribute__((always_inline))
#else
#define GROVE__ALWAYS_INLINE
#endif

/* Calls BODY(D) with D a compile-time constant for d = 1, 2, 3 (so inlined
 * kernels unroll their axis loops) and with the runtime d otherwise. */
#define GROVE__DISPATCH_D(d, BODY)                                           \
    switch (d) {                                                             \
    case 1: BODY(1); break;                                                  \
    case 2: BODY(2); break;                                                  \
    case 3: BODY(3); break;                                                  \
    default: BODY(d); break;                                                 \
    }

/* The longest message grove_last_error() holds, its NUL included. */
#define GROVE__ERROR_CAPACITY 512

/* Record a failure for grove_last_error() and return its status, so call
 * sites read `return grove__fail(GROVE_INVALID_ARGUMENT, "...", ...);`. */
grove_status grove__fail(grove_status status, const char *fmt, ...) GROVE__PRINTF(2, 3);
/* Clear the thread's error message (called at the start of public calls). */
void grove__clear_error(void);
/* Prefix the current error message with "context: " (e.g. a file name). */
void grove__error_prefix(const char *context);

/* Every allocation goes through these, so tests can inject failures. A NULL
 * return has already set GROVE_OUT_OF_MEMORY's message naming `what`. */
void *grove__malloc(size_t size, const char *what);
/* The same for working memory touched all over right away: with
 * GROVE_HUGE_PAGES=1, blocks of 2 MiB or more come in transparent huge
 * pages on Linux (alloc.c says why it is opt-in). */
void *grove__malloc_huge(size_t size, const char *what);
void *grove__calloc(size_t count, size_t size, const char *what);
/* Working memory of `bytes` for one call (grove__malloc_huge's kind):
 * block `slot` (< GROVE__WORK_SLOTS) of workspace w, grown if needed,
 * when there is one (w non-NULL), else a fresh block. Give it back with
 * grove__work_release. */
#define GROVE__WORK_SLOTS 8
void *grove__work_take(grove_workspace *w, int slot, size_t bytes, const char *what);
void grove__work_release(grove_workspace *w, void *block);
void *grove__realloc(void *ptr, size_t size, const char *what);
void grove__free(void *ptr);
/* Test hook: make the k-th allocation from now (1-based) fail; 0 disables.
 * Counted per thread. */
void grove__alloc_fail_after(long k);

/* dlopen (RTLD_NOW, local) of the optional library `name` (plugin.c):
 * beside the object holding libgrove (libgrove.so, or the program linked
 * with libgrove.a), in ../lib from there (an installed grove command),
 * else by the dynamic linker's search; NULL with why (cap bytes): the
 * places looked in and the first one's error. Kept open for the process
 * by the caller. */
void *grove__plugin_open(const char *name, char *why, size_t cap);

/* a * b into *out; false on size_t overflow. */
static inline bool grove__mul_size(size_t a, size_t b, size_t *out)
{
    if (b != 0 && a > SIZE_MAX / b) return false;
    *out = a * b;
    return true;
}
static inline bool grove__add_size(size_t a, size_t b, size_t *out)
{
    if (a > SIZE_MAX - b) return false;
    *out = a + b;
    return true;
}

/* The calling thread's number and its team's size (0 and 1 outside a
 * parallel region or without OpenMP). */
void grove__team_member(int *thread, int *team_size);

/* Options with defaults applied (NULL -> defaults). */
grove_options grove__options(const grove_options *options);
/* grove_points_validate, its scan for non-finite values on up to
 * `threads` threads where the points are many. */
grove_status grove__points_validate(grove_points points, int threads);
/* grove__points_validate that also measures the points' range:
 * *magnitude = the largest |coordinate| with its float64 fraction cut to
 * 20 bits (so at most that value, with the same binary exponent), 0 for
 * n = 0, in the same single pass over the values. */
grove_status grove__points_validate_range(grove_points points, int threads, double *magnitude);
/* The same for a part of a larger set whose row 0 is row `first` of the
 * whole (a rank's part of a distributed call's input): the message names
 * the whole's row. */
grove_status grove__points_validate_part(grove_points points, size_t first, int threads, double *magnitude);
/* grove__points_validate without the scan of the values: dtype, shape,
 * data and stride only (a caller that checks every value's finiteness
 * in a pass of its own, then calls grove__points_validate for the
 * message when one is not). */
grove_status grove__points_check_shape(grove_points points);
/* True when the options' cancel flag is raised. */
bool grove__cancelled(const grove_options *options);
/* Report progress if a callback is set. */
void grove__progress(const grove_options *options, const char *stage, double fraction);

/* Row stride of a points view in bytes (resolves stride 0). */
size_t grove__points_stride(grove_points points);
/* Coordinate (i, j) of a validated view, as double. */
static inline double grove__coord(grove_points p, size_t stride, size_t i, size_t j)
{
    const char *row = (const char *)p.data + i * stride;
    return p.dtype == GROVE_FLOAT64 ? ((const double *)row)[j] : (double)((const float *)row)[j];
}

/* Range: the power-of-two exponent e with ldexp(magnitude, -e) in [0.5, 1)
 * for a finite magnitude > 0 (0 otherwise), clamped to [-1021, 1024] so
 * that 2^-e is a representable double. Data multiplied by 2^-e (and results
 * multiplied back by 2^e, with ldexp where 2^e itself may overflow) keep
 * every bit wherever the values stay normal: the way each module brings
 * coordinates and masses of any unit system to where their squares and
 * products are finite. */
static inline int grove__unit_exponent(double magnitude)
{
    if (!(magnitude > 0) || !isfinite(magnitude)) return 0;
    int e;
    (void)frexp(magnitude, &e);
    return e < -1021 ? -1021 : e;
}

/* CRC-32C (Castagnoli, as in iSCSI and ext4) of len bytes, continuing
 * from crc: grove__crc32c(0, data, len) for a whole buffer, and
 * grove__crc32c(grove__crc32c(0, a, n), b, m) equals the CRC of a then b.
 * The check value of "123456789" is 0xE3069283. */
uint32_t grove__crc32c(uint32_t crc, const void *data, size_t len);
/* Range: the exponent e by which a module scales its coordinates (x 2^-e,
 * computed in double, exact) before it sums `terms` squares of their
 * differences (or `terms` other values of that size) in the dtype `arith`.
 * 0 (no scaling, every bit as without) while the data's largest
 * |coordinate| `magnitude` (grove__points_validate_range) lies in the
 * window where such a sum cannot overflow and the square of one unit in
 * the last place of the largest values is still a normal number; else the
 * power of two that brings the largest values to the top of that window,
 * where values far below them keep the most of their resolution. Values
 * that still fall below it (squared differences that underflow) compare
 * as ties, broken by row, as they would unscaled. (range.c) */
int grove__range_exponent(double magnitude, size_t terms, grove_dtype arith);
/* Whether `terms` squared differences of values up to `magnitude`, scaled
 * by 2^-exponent, can be summed in `arith` without overflow (the window's
 * upper side). */
bool grove__range_fits(double magnitude, int exponent, size_t terms, grove_dtype arith);
/* values[0 .. count) times 2^e in place (the way back from a scaled
 * computation, e != 0); returns how many became infinite. */
size_t grove__range_unscale(double *values, size_t count, int e, int threads);

/* Portable natural logarithm from + - * / only (same bits everywhere). */
double grove__log(double x);

#endif
