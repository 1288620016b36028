/* Test runner: runs every registered test (or those whose names contain one
 * of the command-line arguments) and prints "N passed, N failed", after the
 * line in GROVE_TESTS_SKIPPED when that is set (make check: tests it did
 * not run, such as the Python ones). */
#include "test.h"

#include <stdarg.h>

enum { MAX_TESTS = 4096 };
static struct {
    const char *name;
    test_fn fn;
} tests[MAX_TESTS];
static int test_count;
static int current_failures;

void test_register(const char *name, test_fn fn)
{
    if (test_count == MAX_TESTS) {
        fprintf(stderr, "too many tests\n");
        exit(2);
    }
    tests[test_count].name = name;
    tests[test_count].fn = fn;
    test_count++;
}

void test_fail(const char *file, int line, const char *fmt, ...)
{
    if (current_failures < 10) {
        va_list args;
        va_start(args, fmt);
        fprintf(stderr, "  %s:%d: ", file, line);
        vfprintf(stderr, fmt, args);
        fputc('\n', stderr);
        va_end(args);
    }
    current_failures++;
}

int test_failed_now(void) { return current_failures; }

static int by_name(const void *a, const void *b)
{
    const char *x = *(const char *const *)a, *y = *(const char *const *)b;
    return strcmp(x, y);
}

static int selected(const char *name, int argc, char **argv)
{
    if (argc <= 1) return 1;
    for (int i = 1; i < argc; i++)
        if (strstr(name, argv[i])) return 1;
    return 0;
}

int main(int argc, char **argv)
{
    /* Run in name order so the output is stable. */
    qsort(tests, (size_t)test_count, sizeof tests[0], by_name);
    int passed = 0, failed = 0;
    for (int i = 0; i < test_count; i++) {
        if (!selected(tests[i].name, argc, argv)) continue;
        current_failures = 0;
        tests[i].fn();
        if (current_failures) {
            failed++;
            fprintf(stderr, "FAIL %s (%d failed checks)\n", tests[i].name, current_failures);
        } else {
            passed++;
            printf("ok   %s\n", tests[i].name);
        }
        fflush(stdout);
    }
    const char *skipped = getenv("GROVE_TESTS_SKIPPED");
    if (skipped && *skipped) printf("%s\n", skipped);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
