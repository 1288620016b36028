/* The one allocation path of the library. Failures set an error message and
 * can be injected per thread by tests (grove__alloc_fail_after). */
#define _DEFAULT_SOURCE /* madvise and MADV_HUGEPAGE are Linux extensions beyond POSIX */
#include "internal.h"

#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

static _Thread_local long fail_countdown;

void grove__alloc_fail_after(long k) { fail_countdown = k; }

/* True when this allocation should fail on purpose. */
static bool injected_failure(void)
{
    if (fail_countdown <= 0) return false;
    return --fail_countdown == 0;
}

/* With GROVE_HUGE_PAGES=1 in the environment, grove__malloc_huge rounds
 * blocks of at least one huge page (2 MiB) up to whole huge pages, starts
 * them on a huge-page boundary and asks Linux to back them with
 * transparent huge pages: a fresh block then faults in 2 MiB at a time
 * instead of 4 KiB. It is for working memory that is fresh on every call
 * and touched all over (the ball tree's), whose faults can cost more than
 * the work in it (one fault per 4 KiB page, against one per 2 MiB, each
 * zeroing its page). Opt-in, as in other libraries that offer it: where
 * free memory is fragmented, the kernel compacts it first, which can cost
 * a call more than the faults it saves. At most one partly used huge page
 * per block. */
#define HUGE_PAGE ((size_t)2 << 20)

static bool huge_pages_wanted(void)
{
    static int wanted = -1; /* read once; a race only computes it twice */
    if (wanted < 0) {
        const char *e = getenv("GROVE_HUGE_PAGES");
        wanted = e && strcmp(e, "1") == 0;
    }
    return wanted;
}

static void *allocate(size_t size, bool huge)
{
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (huge && size >= HUGE_PAGE && size <= SIZE_MAX - HUGE_PAGE && huge_pages_wanted()) {
        size_t whole = (size + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
        void *p;
        if (posix_memalign(&p, HUGE_PAGE, whole) != 0) return NULL;
        madvise(p, whole, MADV_HUGEPAGE); /* a hint: failure is harmless */
        return p;
    }
#else
    (void)huge;
#endif
    return malloc(size ? size : 1);
}

static void *allocate_or_fail(size_t size, bool huge, const char *what)
{
    void *p = injected_failure() ? NULL : allocate(size, huge);
    if (!p) grove__fail(GROVE_OUT_OF_MEMORY, "out of memory allocating %zu bytes for %s", size, what);
    return p;
}

void *grove__malloc(size_t size, const char *what) { return allocate_or_fail(size, false, what); }

void *grove__malloc_huge(size_t size, const char *what) { return allocate_or_fail(size, true, what); }

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
