/* The one allocation path of the library. Failures set an error message and
 * can be injected per thread by tests (grove__alloc_fail_after). */
#include "internal.h"

#include <stdlib.h>

static _Thread_local long fail_countdown;

void grove__alloc_fail_after(long k) { fail_countdown = k; }

/* True when this allocation should fail on purpose. */
static bool injected_failure(void)
{
    if (fail_countdown <= 0) return false;
    return --fail_countdown == 0;
}

void *grove__malloc(size_t size, const char *what)
{
    void *p = injected_failure() ? NULL : malloc(size ? size : 1);
    if (!p) grove__fail(GROVE_OUT_OF_MEMORY, "out of memory allocating %zu bytes for %s", size, what);
    return p;
}

void *grove__calloc(size_t count, size_t size, const char *what)
{
    size_t total;
    if (!grove__mul_size(count, size, &total)) {
        grove__fail(GROVE_TOO_LARGE, "%s: %zu x %zu bytes overflows the address space", what, count, size);
        return NULL;
    }
    void *p = injected_failure() ? NULL : calloc(count ? count : 1, size ? size : 1);
    if (!p) grove__fail(GROVE_OUT_OF_MEMORY, "out of memory allocating %zu bytes for %s", total, what);
    return p;
}

void *grove__realloc(void *ptr, size_t size, const char *what)
{
    void *p = injected_failure() ? NULL : realloc(ptr, size ? size : 1);
    if (!p) grove__fail(GROVE_OUT_OF_MEMORY, "out of memory growing %s to %zu bytes", what, size);
    return p;
}

void grove__free(void *ptr) { free(ptr); }
