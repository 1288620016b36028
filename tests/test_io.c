/* Arrays, raw files, grove_points_load, and allocation-failure sweeps over
 * the parsers. */
#include "internal.h"
#include "test.h"

#include <math.h>
#include <stdint.h>

TEST(io_array_alloc_count_points)
{
    grove_array a;
    REQUIRE_OK(grove_array_create(&a, GROVE_FLOAT32, 4, 3));
    CHECK(a.ndim == 2 && a.shape[0] == 4 && a.shape[1] == 3 && grove_array_count(&a) == 12);
    CHECK(((float *)a.data)[11] == 0.0f);
    grove_points p;
    REQUIRE_OK(grove_array_points(&a, &p));
    CHECK(p.data == a.data && p.n == 4 && p.d == 3 && p.dtype == GROVE_FLOAT32 && p.stride == 0);
    grove_array_free(&a);
    CHECK(a.data == NULL && grove_array_count(&a) == 0);
    grove_array_free(&a);
    grove_array_free(NULL);
    REQUIRE_OK(grove_array_create(&a, GROVE_FLOAT64, 5, 0));
    CHECK(a.ndim == 1 && a.shape[1] == 1 && grove_array_count(&a) == 5);
    REQUIRE_OK(grove_array_points(&a, &p));
    CHECK(p.n == 5 && p.d == 1);
    grove_array_free(&a);
    REQUIRE_OK(grove_array_create(&a, GROVE_INT64, 2, 2));
    CHECK_FAILS(grove_array_points(&a, &p), GROVE_INVALID_ARGUMENT, "dtype int64 is not a point type");
    grove_array_free(&a);
    CHECK_FAILS(grove_array_create(&a, GROVE_FLOAT64, SIZE_MAX / 4, 3), GROVE_TOO_LARGE, "overflow");
    CHECK_FAILS(grove_array_create(&a, (grove_dtype)0, 1, 1), GROVE_INVALID_ARGUMENT, "unknown dtype");
    CHECK_FAILS(grove_array_create(NULL, GROVE_FLOAT64, 1, 1), GROVE_INVALID_ARGUMENT, "out is NULL");
    CHECK(grove_array_count(NULL) == 0);
}

TEST(io_raw_read)
{
    double v[6] = {1, 2, 3, 4, 5, 6};
    unsigned char le[48];
    for (int i = 0; i < 6; i++) {
        uint64_t bits;
        memcpy(&bits, &v[i], 8);
        for (int b = 0; b < 8; b++) le[8 * i + b] = (unsigned char)(bits >> (8 * b));
    }
    const char *path = test_write_file("pts.bin", le, sizeof le);
    grove_array a;
    REQUIRE_OK(grove_raw_read(path, GROVE_FLOAT64, 2, &a));
    CHECK(a.ndim == 2 && a.shape[0] == 3 && a.shape[1] == 2 && memcmp(a.data, v, 48) == 0);
    grove_array_free(&a);
    REQUIRE_OK(grove_raw_read(path, GROVE_FLOAT32, 3, &a));
    CHECK(a.dtype == GROVE_FLOAT32 && a.shape[0] == 4 && a.shape[1] == 3);
    grove_array_free(&a);
    CHECK_FAILS(grove_raw_read(path, GROVE_FLOAT64, 4, &a), GROVE_PARSE_ERROR,
                "pts.bin: file size 48 bytes is not a multiple of the row size 32 bytes (4 dims x 8-byte float64)");
    CHECK_FAILS(grove_raw_read(path, GROVE_FLOAT64, 0, &a), GROVE_INVALID_ARGUMENT,
                "pts.bin: raw files need dims >= 1");
    CHECK_FAILS(grove_raw_read(path, GROVE_INT32, 2, &a), GROVE_INVALID_ARGUMENT, "float32 or float64, got int32");
    CHECK_FAILS(grove_raw_read(path, GROVE_FLOAT64, SIZE_MAX / 2, &a), GROVE_INVALID_ARGUMENT, "too large");
    CHECK_FAILS(grove_raw_read(test_path("none.bin"), GROVE_FLOAT64, 2, &a), GROVE_IO_ERROR, "none.bin: cannot open");
    REQUIRE_OK(grove_raw_read(test_write_file("empty.bin", "", 0), GROVE_FLOAT32, 3, &a));
    CHECK(a.shape[0] == 0 && a.shape[1] == 3);
    grove_array_free(&a);
}

/* Write an array as .npy under name; returns the path. */
static const char *npy_file(const char *name, grove_dtype dtype, size_t rows, size_t cols, const double *values)
{
    grove_array a;
    if (grove_array_create(&a, dtype, rows, cols) != GROVE_OK) return NULL;
    for (size_t i = 0; i < grove_array_count(&a); i++) {
        switch (dtype) {
        case GROVE_FLOAT32: ((float *)a.data)[i] = (float)values[i]; break;
        case GROVE_FLOAT64: ((double *)a.data)[i] = values[i]; break;
        case GROVE_INT32: ((int32_t *)a.data)[i] = (int32_t)values[i]; break;
        case GROVE_INT64: ((int64_t *)a.data)[i] = (int64_t)values[i]; break;
        case GROVE_BOOL: ((uint8_t *)a.data)[i] = values[i] != 0; break;
        }
    }
    const char *path = test_path(name);
    grove_status s = grove_npy_write(path, &a);
    grove_array_free(&a);
    return s == GROVE_OK ? path : NULL;
}

TEST(io_points_load_dispatches_by_extension)
{
    const double v[6] = {1, 2, 3, 4, 5, 6};
    grove_array a;
    REQUIRE_OK(grove_points_load(npy_file("f.npy", GROVE_FLOAT32, 3, 2, v), 0, GROVE_FLOAT64, &a));
    CHECK(a.dtype == GROVE_FLOAT32 && a.ndim == 2 && a.shape[0] == 3 && a.shape[1] == 2);
    grove_array_free(&a);
    REQUIRE_OK(grove_points_load(npy_file("i.npy", GROVE_INT64, 2, 3, v), 0, GROVE_FLOAT64, &a));
    CHECK(a.dtype == GROVE_FLOAT64 && a.shape[0] == 2 && ((double *)a.data)[5] == 6);
    grove_array_free(&a);
    REQUIRE_OK(grove_points_load(npy_file("i32.NPY", GROVE_INT32, 6, 0, v), 0, GROVE_FLOAT64, &a));
    CHECK(a.dtype == GROVE_FLOAT64 && a.ndim == 2 && a.shape[0] == 6 && a.shape[1] == 1 && ((double *)a.data)[2] == 3);
    grove_array_free(&a);
    REQUIRE_OK(grove_points_load(npy_file("empty.npy", GROVE_FLOAT64, 0, 3, v), 0, GROVE_FLOAT64, &a));
    CHECK(a.shape[0] == 0 && a.shape[1] == 3);
    grove_array_free(&a);
    CHECK_FAILS(grove_points_load(npy_file("b.npy", GROVE_BOOL, 2, 2, v), 0, GROVE_FLOAT64, &a), GROVE_UNSUPPORTED,
                "b.npy: a bool array is not points");
    CHECK(a.data == NULL);
    const char *csv = "x,y\n1,2\n3,4\n";
    REQUIRE_OK(grove_points_load(test_write_file("p.csv", csv, strlen(csv)), 0, GROVE_FLOAT64, &a));
    CHECK(a.shape[0] == 2 && a.shape[1] == 2 && ((double *)a.data)[3] == 4);
    grove_array_free(&a);
    REQUIRE_OK(grove_points_load(test_write_file("p.TXT", "1 2 3\n", 6), 0, GROVE_FLOAT64, &a));
    CHECK(a.shape[0] == 1 && a.shape[1] == 3);
    grove_array_free(&a);
    REQUIRE_OK(grove_points_load(test_write_file("p.tsv", "1\t2\n", 4), 0, GROVE_FLOAT64, &a));
    grove_array_free(&a);
    CHECK_FAILS(grove_points_load(test_write_file("h.csv", "x,y\n# none\n", 11), 0, GROVE_FLOAT64, &a),
                GROVE_PARSE_ERROR, "h.csv: no data rows");
    float raw[4] = {1, 2, 3, 4};
    const char *bin = test_write_file("p.f32", raw, sizeof raw);
    REQUIRE_OK(grove_points_load(bin, 2, GROVE_FLOAT32, &a));
    CHECK(a.shape[0] == 2 && a.shape[1] == 2);
    grove_array_free(&a);
    CHECK_FAILS(grove_points_load(bin, 0, GROVE_FLOAT32, &a), GROVE_INVALID_ARGUMENT,
                "p.f32: unknown extension; raw files need --dims");
    CHECK_FAILS(grove_points_load(test_path("gone.npy"), 0, GROVE_FLOAT64, &a), GROVE_IO_ERROR,
                "gone.npy: cannot open");
    CHECK_FAILS(grove_points_load(NULL, 0, GROVE_FLOAT64, &a), GROVE_INVALID_ARGUMENT, "path is NULL");
}

TEST(io_points_load_refuses_bad_values_and_shapes)
{
    grove_array a, w;
    REQUIRE_OK(grove_array_create(&w, GROVE_FLOAT64, 3, 2));
    ((double *)w.data)[5] = NAN;
    REQUIRE_OK(grove_npy_write(test_path("nan.npy"), &w));
    CHECK_FAILS(grove_points_load(test_path("nan.npy"), 0, GROVE_FLOAT64, &a), GROVE_INVALID_ARGUMENT,
                "nan.npy: points: row 2, column 1 is NaN");
    CHECK(a.data == NULL);
    ((double *)w.data)[5] = -INFINITY;
    REQUIRE_OK(grove_npy_write(test_path("inf.npy"), &w));
    CHECK_FAILS(grove_points_load(test_path("inf.npy"), 0, GROVE_FLOAT64, &a), GROVE_INVALID_ARGUMENT,
                "inf.npy: points: row 2, column 1 is infinite");
    grove_array_free(&w);
    REQUIRE_OK(grove_array_create(&w, GROVE_FLOAT64, 3, 1));
    w.shape[1] = 0; /* (3, 0): no columns */
    REQUIRE_OK(grove_npy_write(test_path("nocols.npy"), &w));
    grove_array_free(&w);
    CHECK_FAILS(grove_points_load(test_path("nocols.npy"), 0, GROVE_FLOAT64, &a), GROVE_INVALID_ARGUMENT,
                "nocols.npy: points need at least 1 column, shape is (3, 0)");
    const char *csv = "1,2\n3,nan\n";
    CHECK_FAILS(grove_points_load(test_write_file("n.csv", csv, strlen(csv)), 0, GROVE_FLOAT64, &a), GROVE_PARSE_ERROR,
                "n.csv:2:3: 'nan' is not a finite number");
}

/* Fail the k-th allocation for k = 1, 2, ... until the call gets through;
 * every failure must be a clean GROVE_OUT_OF_MEMORY (ASan finds leaks). */
#define ALLOC_SWEEP(call, out)                                                                                         \
    do {                                                                                                               \
        for (long k = 1;; k++) {                                                                                       \
            REQUIRE(k < 100);                                                                                          \
            grove__alloc_fail_after(k);                                                                                \
            grove_status s_ = (call);                                                                                  \
            grove__alloc_fail_after(0);                                                                                \
            if (s_ == GROVE_OK) {                                                                                      \
                CHECK(k > 1);                                                                                          \
                grove_array_free(&(out));                                                                              \
                break;                                                                                                 \
            }                                                                                                          \
            CHECK_MSG(s_ == GROVE_OUT_OF_MEMORY && strstr(grove_last_error(), "out of memory"), "k = %ld: %s: %s", k,  \
                      grove_status_str(s_), grove_last_error());                                                       \
            CHECK((out).data == NULL);                                                                                 \
        }                                                                                                              \
    } while (0)

TEST(io_allocation_failures_are_clean)
{
    grove_array a, w;
    REQUIRE_OK(grove_array_create(&w, GROVE_FLOAT64, 40, 3));
    const char *path = test_path("sweep.npy");
    REQUIRE_OK(grove_npy_write(path, &w));
    grove_array_free(&w);
    static unsigned char file[4096];
    FILE *f = fopen(path, "rb");
    REQUIRE(f);
    size_t len = fread(file, 1, sizeof file, f);
    fclose(f);
    ALLOC_SWEEP(grove_npy_read_mem(file, len, "sweep.npy", &a), a);
    ALLOC_SWEEP(grove_npy_read(path, &a), a);
    /* Fortran order takes a second buffer when read from a file. */
    char *fortran = strstr((char *)file + 10, "False");
    REQUIRE(fortran);
    memcpy(fortran, "True ", 5);
    path = test_write_file("sweep_f.npy", file, len);
    ALLOC_SWEEP(grove_npy_read(path, &a), a);
    /* The writer allocates only the temporary name. */
    REQUIRE_OK(grove_array_create(&w, GROVE_FLOAT64, 2, 2));
    grove__alloc_fail_after(1);
    CHECK_FAILS(grove_npy_write(test_path("sweep_w.npy"), &w), GROVE_OUT_OF_MEMORY, "sweep_w.npy: out of memory");
    grove__alloc_fail_after(0);
    CHECK(fopen(test_path("sweep_w.npy"), "rb") == NULL);
    grove_array_free(&w);
    /* Enough rows to grow the value buffer several times. */
    size_t cap = 64 * 1024, used = 0;
    char *text = malloc(cap);
    used += (size_t)snprintf(text, cap, "a,b\n");
    for (int i = 0; i < 3000; i++) used += (size_t)snprintf(text + used, cap - used, "%d,%d.5\n", i, -i);
    ALLOC_SWEEP(grove_csv_read_mem(text, used, "sweep.csv", &a), a);
    path = test_write_file("sweep.csv", text, used);
    ALLOC_SWEEP(grove_csv_read(path, &a), a);
    ALLOC_SWEEP(grove_points_load(path, 0, GROVE_FLOAT64, &a), a);
    const double ints[10] = {0};
    path = npy_file("sweep_i.npy", GROVE_INT32, 5, 2, ints);
    REQUIRE(path);
    ALLOC_SWEEP(grove_points_load(path, 0, GROVE_FLOAT64, &a), a);
    free(text);
}
