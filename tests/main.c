/* Test runner: runs every registered test (or those whose names contain one
 * of the command-line arguments) and prints "N passed, N failed, N skipped",
 * after the line in GROVE_TESTS_SKIPPED when that is set (make check: tests
 * it did not run, such as the Python ones). Long tests (TEST_LONG) run only
 * with GROVE_TESTS_LONG=1 (make check-all); otherwise a line says how many
 * were left to it. */
#include "test.h"

#include <stdarg.h>
#include <time.h>

enum { MAX_TESTS = 4096 };
static struct {
    const char *name;
    test_fn fn;
    bool long_test;
} tests[MAX_TESTS];
static int test_count;
static int current_failures;
static char current_skip[512];

void test_register(const char *name, test_fn fn, bool long_test)
{
    if (test_count == MAX_TESTS) {
        fprintf(stderr, "too many tests\n");
        exit(2);
    }
    tests[test_count].name = name;
    tests[test_count].fn = fn;
    tests[test_count].long_test = long_test;
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

void test_skip(const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    vsnprintf(current_skip, sizeof current_skip, fmt, args);
    va_end(args);
    if (!current_skip[0]) snprintf(current_skip, sizeof current_skip, "no reason given");
    for (char *c = current_skip; *c; c++)
        if (*c == '\n' || *c == '\r') *c = ' ';
}

static double seconds_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

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
    const char *run_long = getenv("GROVE_TESTS_LONG");
    bool with_long = run_long && strcmp(run_long, "1") == 0;
    int passed = 0, failed = 0, skipped = 0, long_left = 0;
    for (int i = 0; i < test_count; i++) {
        if (!selected(tests[i].name, argc, argv)) continue;
        if (tests[i].long_test && !with_long) {
            long_left++;
            continue;
        }
        current_failures = 0;
        current_skip[0] = '\0';
        double start = seconds_now();
        tests[i].fn();
        /* A test's seconds where they are many enough to matter for
         * make check's length (TEST_LONG moves it to make check-all). */
        double took = seconds_now() - start;
        char took_text[32] = "";
        if (took >= 1) snprintf(took_text, sizeof took_text, " (%.1f s)", took);
        if (current_failures) {
            failed++;
            fprintf(stderr, "FAIL %s (%d failed checks)%s\n", tests[i].name, current_failures, took_text);
        } else if (current_skip[0]) {
            skipped++;
            printf("skip %s (%s)%s\n", tests[i].name, current_skip, took_text);
        } else {
            passed++;
            printf("ok   %s%s\n", tests[i].name, took_text);
        }
        fflush(stdout);
    }
    const char *not_run = getenv("GROVE_TESTS_SKIPPED");
    if (not_run && *not_run) printf("%s\n", not_run);
    if (long_left) printf("%d long tests left to make check-all (GROVE_TESTS_LONG=1)\n", long_left);
    printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
    return failed ? 1 : 0;
}
