/* grove's test harness: TEST(name) { ... } registers itself; CHECK(...)
 * records a failure with file:line and continues; REQUIRE(...) also ends
 * the test. The runner (tests/main.c) prints "N passed, N failed". */
#ifndef GROVE_TEST_H
#define GROVE_TEST_H

#include "grove.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void (*test_fn)(void);
/* long_test: the test runs only when GROVE_TESTS_LONG=1 (make check-all),
 * so make check stays a few minutes long. */
void test_register(const char *name, test_fn fn, bool long_test);
void test_fail(const char *file, int line, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
int test_failed_now(void);
/* Marks the running test as skipped (its reason printed, counted in the
 * closing line's "N skipped", never as "ok"); the test then returns. */
void test_skip(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

#define TEST_WITH_LENGTH(name, long_test)                                     \
    static void test_##name(void);                                           \
    __attribute__((constructor)) static void test_register_##name(void)      \
    {                                                                        \
        test_register(#name, test_##name, long_test);                        \
    }                                                                        \
    static void test_##name(void)
#define TEST(name) TEST_WITH_LENGTH(name, false)
/* A test of large sizes or many ranks that make check-all runs and make
 * check leaves out (its smaller cases stay in make check). */
#define TEST_LONG(name) TEST_WITH_LENGTH(name, true)

#define CHECK(cond)                                                          \
    do {                                                                     \
        if (!(cond)) test_fail(__FILE__, __LINE__, "CHECK(%s)", #cond);      \
    } while (0)
#define CHECK_MSG(cond, ...)                                                 \
    do {                                                                     \
        if (!(cond)) test_fail(__FILE__, __LINE__, __VA_ARGS__);             \
    } while (0)
#define REQUIRE(cond)                                                        \
    do {                                                                     \
        if (!(cond)) {                                                       \
            test_fail(__FILE__, __LINE__, "REQUIRE(%s)", #cond);             \
            return;                                                          \
        }                                                                    \
    } while (0)
/* A call that must succeed; prints grove_last_error() otherwise. */
#define CHECK_OK(call)                                                       \
    do {                                                                     \
        grove_status s_ = (call);                                            \
        if (s_ != GROVE_OK)                                                  \
            test_fail(__FILE__, __LINE__, "%s -> %s: %s", #call,             \
                      grove_status_str(s_), grove_last_error());             \
    } while (0)
#define REQUIRE_OK(call)                                                     \
    do {                                                                     \
        grove_status s_ = (call);                                            \
        if (s_ != GROVE_OK) {                                                \
            test_fail(__FILE__, __LINE__, "%s -> %s: %s", #call,             \
                      grove_status_str(s_), grove_last_error());             \
            return;                                                          \
        }                                                                    \
    } while (0)
/* A call that must fail with `status` and an error message containing `text`. */
#define CHECK_FAILS(call, status, text)                                      \
    do {                                                                     \
        grove_status s_ = (call);                                            \
        if (s_ != (status) || !strstr(grove_last_error(), (text)))           \
            test_fail(__FILE__, __LINE__, "%s -> %s \"%s\", wanted %s \"%s\"", \
                      #call, grove_status_str(s_), grove_last_error(),       \
                      grove_status_str(status), (text));                     \
    } while (0)

/* Helpers shared by test files (tests/util.c). */
/* A fresh empty temporary folder for this test run (removed at exit). */
const char *test_tmpdir(void);
/* tmpdir/name in a static rotating buffer. */
const char *test_path(const char *name);
/* Whether the tests run under sanitizers (GROVE_SANITIZE, set by make
 * check-asan): smaller problems there. */
bool test_sanitized(void);
/* Write bytes to tmpdir/name; returns the path. */
const char *test_write_file(const char *name, const void *data, size_t len);
/* The whole file at path (malloc'd, *len bytes (len may be NULL) and a terminating NUL), or
 * NULL when it cannot be read. */
char *test_read_file(const char *path, size_t *len);
/* Run a shell command, capture stdout+stderr (malloc'd, NUL-terminated)
 * into *output when non-NULL; returns the exit status (-1 if it did not exit). */
int test_run(const char *command, char **output);
/* The CLI binary under test (GROVE_CLI, default build/grove). */
const char *test_cli(void);
/* Run "CLI ARGS" as test_run does. */
int test_grove(const char *args, char **output);
/* Whether the MPI tests can run: this build has the MPI part and mpirun
 * is on PATH (when not, it marks the test skipped with the reason and the
 * caller returns). */
bool test_mpi_ready(void);
/* The device the device tests run on: OpenCL, or CUDA with
 * GROVE_TEST_DEVICE=cuda (tests/device/check.sh on a GPU). Whether it
 * can run here (when not, it marks the test skipped with the reason and
 * the caller returns), and options that run on it on 2 threads with this
 * memory budget (0 = none). */
bool test_device_ready(void);
grove_options test_device_options(size_t budget);
/* Its --device spelling: "opencl" or "cuda". */
const char *test_device_name(void);
/* The gravity at particle i of n by direct summation (G = 1, Plummer
 * softening eps, itself and pairs at r = 0 left out), in the plainest
 * form: the independent reference of the gravity tests. */
void test_direct_gravity(const double *pos, const double *mass, size_t n, size_t i, double eps, double a[3],
                         double *phi);
/* Run "mpirun -np ranks PROGRAM ARGS" as test_run does; PROGRAM is the
 * CLI for "grove" and otherwise the MPI test program (GROVE_TEST_MPI,
 * tests/mpi). mpirun runs as root here, with more ranks than cores. */
int test_mpirun(int ranks, const char *program, const char *args, char **output);
/* build/test_mpi ARGS (a case and its arguments) on 1, 2, 3 and 4 ranks,
 * each run passing. */
void test_mpi_on_1_to_4_ranks(const char *args);
/* Whether two files hold the same bytes. */
bool test_same_file(const char *a, const char *b);
/* The doubles of a .npy file written by grove (a 128-byte header), *n of
 * them (NULL when unreadable). */
double *test_npy_doubles(const char *path, size_t *n);

/* The sum of x[0..n) exactly, rounded once to the nearest double (ties to
 * even): Python's math.fsum (Shewchuk's partials), the tests' reference for
 * exact sums. No term or partial sum may overflow. */
double test_fsum(const double *x, size_t n);

/* Seeded test data: n x d points of one kind in double (malloc'd; exactly
 * representable in float for the lattice and duplicate kinds, whose
 * squared distances are then exact in either dtype). */
typedef enum { TEST_UNIFORM, TEST_CLUSTERED, TEST_LATTICE, TEST_DUPLICATES, TEST_KINDS } test_kind;
extern const char *const test_kind_name[TEST_KINDS];
double *test_points(test_kind kind, size_t n, size_t d, uint64_t seed);

/* Changes of units for the gravity and N-body tests: lengths times lambda,
 * masses times mu. With G times lambda^3 / mu (and the softening times
 * lambda) the dynamics are the same in the same time units: accelerations
 * and velocities times lambda, potentials times lambda^2. `exact` when
 * both are powers of two, so every result must keep its bits. */
typedef struct test_units {
    double lambda, mu;
    int exact;
} test_units;
extern const test_units test_unit_changes[];
extern const size_t test_unit_changes_count;
/* n values of src times f into a malloc'd copy. */
double *test_scaled_copy(const double *src, size_t n, double f);

/* Generated initial conditions (grove_ic_generate of kind, n, seed and
 * bh_mass, a CHECK on its status): positions x and velocities v (n x 3)
 * and masses m, one allocation at x (free(x)). */
typedef struct test_particles {
    size_t n;
    double *x, *v, *m;
} test_particles;
test_particles test_ic(grove_ic_kind kind, size_t n, uint64_t seed, double bh_mass);

#endif
