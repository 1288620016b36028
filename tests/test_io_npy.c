/* .npy reading and writing: round trips, hand-built files of every version,
 * byte order and layout, and hostile headers. */
#include "internal.h"
#include "test.h"

#include <dirent.h>
#include <math.h>
#include <stdint.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum { NPY_CAP = 4096 };

/* An .npy file in buf: preamble of the given major version, the dict text as
 * given (no padding), then the data. Returns the length. */
static size_t make_npy(unsigned char *buf, int major, const char *dict, const void *data, size_t data_len)
{
    size_t hlen = strlen(dict), pos;
    memcpy(buf, "\x93NUMPY", 6);
    buf[6] = (unsigned char)major;
    buf[7] = 0;
    if (major == 1) {
        buf[8] = (unsigned char)(hlen & 0xff);
        buf[9] = (unsigned char)(hlen >> 8);
        pos = 10;
    } else {
        for (int i = 0; i < 4; i++) buf[8 + i] = (unsigned char)(hlen >> (8 * i));
        pos = 12;
    }
    memcpy(buf + pos, dict, hlen);
    pos += hlen;
    if (data_len) memcpy(buf + pos, data, data_len);
    return pos + data_len;
}

/* Big-endian bytes of a value's bit pattern, whatever the host order. */
static void put_be(unsigned char *out, uint64_t bits, size_t width)
{
    for (size_t i = 0; i < width; i++) out[i] = (unsigned char)(bits >> (8 * (width - 1 - i)));
}

static void put_le(unsigned char *out, uint64_t bits, size_t width)
{
    for (size_t i = 0; i < width; i++) out[i] = (unsigned char)(bits >> (8 * i));
}

static uint64_t bits_of_double(double v)
{
    uint64_t b;
    memcpy(&b, &v, 8);
    return b;
}

static uint32_t bits_of_float(float v)
{
    uint32_t b;
    memcpy(&b, &v, 4);
    return b;
}

static void fill_pattern(grove_array *a)
{
    size_t n = grove_array_count(a);
    for (size_t i = 0; i < n; i++) {
        switch (a->dtype) {
        case GROVE_FLOAT32: ((float *)a->data)[i] = (float)i * 0.5f - 3.25f; break;
        case GROVE_FLOAT64: ((double *)a->data)[i] = (double)i / 3.0 - 1e10; break;
        case GROVE_INT32: ((int32_t *)a->data)[i] = (int32_t)i * -7 + 1; break;
        case GROVE_INT64: ((int64_t *)a->data)[i] = (int64_t)i * 123456789012LL - 5; break;
        case GROVE_BOOL: ((uint8_t *)a->data)[i] = (uint8_t)(i % 3 == 0); break;
        }
    }
}

static int slurp(const char *path, unsigned char *buf, size_t cap, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    *len = fread(buf, 1, cap, f);
    fclose(f);
    return 1;
}

TEST(io_npy_round_trip_every_dtype_and_shape)
{
    grove_dtype dtypes[] = {GROVE_FLOAT32, GROVE_FLOAT64, GROVE_INT32, GROVE_INT64, GROVE_BOOL};
    size_t shapes[][2] = {{7, 0}, {0, 0}, {1, 0}, {4, 3}, {0, 3}, {1, 1}, {5, 1}, {3, 17}};
    for (size_t t = 0; t < 5; t++)
        for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
            grove_array a, b, c;
            REQUIRE_OK(grove_array_create(&a, dtypes[t], shapes[k][0], shapes[k][1]));
            fill_pattern(&a);
            const char *path = test_path("round.npy");
            REQUIRE_OK(grove_npy_write(path, &a));
            REQUIRE_OK(grove_npy_read(path, &b));
            CHECK(b.dtype == a.dtype && b.ndim == a.ndim && b.shape[0] == a.shape[0] && b.shape[1] == a.shape[1]);
            size_t bytes = grove_array_count(&a) * grove_dtype_size(a.dtype);
            CHECK(memcmp(a.data, b.data, bytes) == 0);
            /* The same bytes through the memory reader; data starts at 64. */
            static unsigned char file[NPY_CAP];
            size_t len;
            REQUIRE(slurp(path, file, sizeof file, &len));
            CHECK(len == 64 + bytes || len == 128 + bytes);
            CHECK(file[len - bytes - 1] == '\n');
            REQUIRE_OK(grove_npy_read_mem(file, len, "mem", &c));
            CHECK(c.ndim == a.ndim && c.shape[0] == a.shape[0] && memcmp(c.data, a.data, bytes) == 0);
            grove_array_free(&a);
            grove_array_free(&b);
            grove_array_free(&c);
        }
}

TEST(io_npy_write_matches_numpy_header)
{
    grove_array a;
    REQUIRE_OK(grove_array_create(&a, GROVE_FLOAT64, 3, 4));
    REQUIRE_OK(grove_npy_write(test_path("h.npy"), &a));
    unsigned char file[NPY_CAP];
    size_t len;
    REQUIRE(slurp(test_path("h.npy"), file, sizeof file, &len));
    REQUIRE(len == 128 + 96);
    CHECK(memcmp(file, "\x93NUMPY\x01\x00\x76\x00", 10) == 0);
    const char *dict = "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }";
    if (file[11] == '<') CHECK(memcmp(file + 10, dict, strlen(dict)) == 0);
    CHECK(file[10 + strlen(dict)] == ' ' && file[127] == '\n');
    grove_array_free(&a);
    REQUIRE_OK(grove_array_create(&a, GROVE_BOOL, 5, 0));
    REQUIRE_OK(grove_npy_write(test_path("h.npy"), &a));
    REQUIRE(slurp(test_path("h.npy"), file, sizeof file, &len));
    CHECK(len == 128 + 5);
    CHECK(memcmp(file + 10, "{'descr': '|b1', 'fortran_order': False, 'shape': (5,), }", 57) == 0);
    grove_array_free(&a);
}

TEST(io_npy_versions_and_dict_spellings)
{
    unsigned char buf[NPY_CAP];
    unsigned char data[16];
    put_le(data, bits_of_double(1.5), 8);
    put_le(data + 8, bits_of_double(-2.0), 8);
    const char *dicts[] = {
        "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }\n",
        "{'shape': (2,), 'fortran_order': False, 'descr': '<f8'}",
        "{\"fortran_order\":False,\"descr\":\"<f8\",\"shape\":(2,)}",
        "  {  'descr' : '<f8' ,\t'shape' : ( 2 , ) , 'fortran_order' : False , }   \n",
        "{'descr': '<f8', 'fortran_order': False, 'shape': (2L,)}",
        "{'descr': '<f8', 'fortran_order': True, 'shape': (2,)}",
        "{'descr': '<f8', 'fortran_order': False, 'shape': (2)}",
    };
    for (int major = 1; major <= 3; major++)
        for (size_t i = 0; i < sizeof dicts / sizeof dicts[0]; i++) {
            size_t len = make_npy(buf, major, dicts[i], data, 16);
            grove_array a;
            CHECK_OK(grove_npy_read_mem(buf, len, "v", &a));
            CHECK(a.dtype == GROVE_FLOAT64 && a.ndim == 1 && a.shape[0] == 2 && a.shape[1] == 1);
            if (a.data) CHECK(((double *)a.data)[0] == 1.5 && ((double *)a.data)[1] == -2.0);
            grove_array_free(&a);
        }
}

TEST(io_npy_big_endian_and_native_order)
{
    unsigned char buf[NPY_CAP], data[64];
    grove_array a;
    /* >f8 2x2 */
    double vd[4] = {1.0, -2.5, 1e300, 3.0};
    for (int i = 0; i < 4; i++) put_be(data + 8 * i, bits_of_double(vd[i]), 8);
    size_t len = make_npy(buf, 1, "{'descr': '>f8', 'fortran_order': False, 'shape': (2, 2)}", data, 32);
    REQUIRE_OK(grove_npy_read_mem(buf, len, "be", &a));
    CHECK(a.ndim == 2 && a.shape[0] == 2 && a.shape[1] == 2);
    for (int i = 0; i < 4; i++) CHECK(((double *)a.data)[i] == vd[i]);
    grove_array_free(&a);
    /* >f4, >i4, >i8 */
    float vf[3] = {0.25f, -1.0f, 7.0f};
    for (int i = 0; i < 3; i++) put_be(data + 4 * i, bits_of_float(vf[i]), 4);
    len = make_npy(buf, 1, "{'descr': '>f4', 'fortran_order': False, 'shape': (3,)}", data, 12);
    REQUIRE_OK(grove_npy_read_mem(buf, len, "be", &a));
    for (int i = 0; i < 3; i++) CHECK(((float *)a.data)[i] == vf[i]);
    grove_array_free(&a);
    int32_t vi[3] = {-1, 2, 0x01020304};
    for (int i = 0; i < 3; i++) put_be(data + 4 * i, (uint32_t)vi[i], 4);
    len = make_npy(buf, 2, "{'descr': '>i4', 'fortran_order': False, 'shape': (3,)}", data, 12);
    REQUIRE_OK(grove_npy_read_mem(buf, len, "be", &a));
    CHECK(a.dtype == GROVE_INT32);
    for (int i = 0; i < 3; i++) CHECK(((int32_t *)a.data)[i] == vi[i]);
    grove_array_free(&a);
    int64_t vl[2] = {-5, 0x0102030405060708LL};
    for (int i = 0; i < 2; i++) put_be(data + 8 * i, (uint64_t)vl[i], 8);
    len = make_npy(buf, 3, "{'descr': '>i8', 'fortran_order': False, 'shape': (1, 2)}", data, 16);
    REQUIRE_OK(grove_npy_read_mem(buf, len, "be", &a));
    CHECK(a.dtype == GROVE_INT64 && ((int64_t *)a.data)[0] == -5 && ((int64_t *)a.data)[1] == vl[1]);
    grove_array_free(&a);
    /* '=' and no prefix mean native order. */
    memcpy(data, vd, 16);
    len = make_npy(buf, 1, "{'descr': '=f8', 'fortran_order': False, 'shape': (2,)}", data, 16);
    REQUIRE_OK(grove_npy_read_mem(buf, len, "native", &a));
    CHECK(((double *)a.data)[1] == -2.5);
    grove_array_free(&a);
    len = make_npy(buf, 1, "{'descr': 'f8', 'fortran_order': False, 'shape': (2,)}", data, 16);
    REQUIRE_OK(grove_npy_read_mem(buf, len, "native", &a));
    CHECK(((double *)a.data)[0] == 1.0);
    grove_array_free(&a);
}

TEST(io_npy_fortran_order_becomes_c_order)
{
    /* The 2x3 matrix [[0 1 2] [3 4 5]] stored column by column. */
    unsigned char buf[NPY_CAP], data[48];
    int order[6] = {0, 3, 1, 4, 2, 5};
    for (int i = 0; i < 6; i++) put_le(data + 8 * i, bits_of_double(order[i]), 8);
    size_t len = make_npy(buf, 1, "{'descr': '<f8', 'fortran_order': True, 'shape': (2, 3)}", data, 48);
    grove_array a, b;
    REQUIRE_OK(grove_npy_read_mem(buf, len, "f", &a));
    CHECK(a.ndim == 2 && a.shape[0] == 2 && a.shape[1] == 3);
    for (int i = 0; i < 6; i++) CHECK(((double *)a.data)[i] == i);
    /* The file reader takes its own path for Fortran order. */
    REQUIRE_OK(grove_npy_read(test_write_file("f.npy", buf, len), &b));
    CHECK(memcmp(a.data, b.data, 48) == 0);
    grove_array_free(&a);
    grove_array_free(&b);
    /* Big-endian int32 in Fortran order. */
    for (int i = 0; i < 6; i++) put_be(data + 4 * i, (uint32_t)order[i], 4);
    len = make_npy(buf, 1, "{'descr': '>i4', 'fortran_order': True, 'shape': (2, 3)}", data, 24);
    REQUIRE_OK(grove_npy_read(test_write_file("f.npy", buf, len), &a));
    for (int i = 0; i < 6; i++) CHECK(((int32_t *)a.data)[i] == i);
    grove_array_free(&a);
}

TEST(io_npy_bool_values_must_be_0_or_1)
{
    unsigned char buf[NPY_CAP], data[6] = {1, 0, 1, 1, 0, 0};
    grove_array a;
    size_t len = make_npy(buf, 1, "{'descr': '|b1', 'fortran_order': False, 'shape': (2, 3)}", data, 6);
    REQUIRE_OK(grove_npy_read_mem(buf, len, "b", &a));
    CHECK(a.dtype == GROVE_BOOL && memcmp(a.data, data, 6) == 0);
    grove_array_free(&a);
    data[5] = 2;
    len = make_npy(buf, 1, "{'descr': '|b1', 'fortran_order': False, 'shape': (2, 3)}", data, 6);
    CHECK_FAILS(grove_npy_read_mem(buf, len, "b.npy", &a), GROVE_PARSE_ERROR,
                "b.npy: bool element at row 1, column 2 is 2");
    CHECK(a.data == NULL);
    len = make_npy(buf, 1, "{'descr': '|b1', 'fortran_order': False, 'shape': (6,)}", data, 6);
    CHECK_FAILS(grove_npy_read_mem(buf, len, "b.npy", &a), GROVE_PARSE_ERROR, "bool element 5 is 2");
}

TEST(io_npy_truncated_or_padded_files_fail_cleanly)
{
    grove_array a;
    REQUIRE_OK(grove_array_create(&a, GROVE_FLOAT32, 3, 2));
    fill_pattern(&a);
    REQUIRE_OK(grove_npy_write(test_path("t.npy"), &a));
    grove_array_free(&a);
    unsigned char file[NPY_CAP];
    size_t len;
    REQUIRE(slurp(test_path("t.npy"), file, sizeof file, &len));
    for (size_t cut = 0; cut < len; cut++) {
        /* A copy of exactly cut bytes, so ASan sees any read past the end. */
        unsigned char *copy = malloc(cut ? cut : 1);
        memcpy(copy, file, cut);
        grove_status s = grove_npy_read_mem(copy, cut, "cut.npy", &a);
        CHECK_MSG(s == GROVE_PARSE_ERROR && strstr(grove_last_error(), "cut.npy: "), "cut at %zu: %s %s", cut,
                  grove_status_str(s), grove_last_error());
        CHECK(a.data == NULL);
        free(copy);
        if (cut % 7 == 0 || cut > 60) {
            s = grove_npy_read(test_write_file("cut.npy", file, cut), &a);
            CHECK_MSG(s == GROVE_PARSE_ERROR, "file cut at %zu: %s", cut, grove_last_error());
        }
    }
    file[len] = 0;
    CHECK_FAILS(
        grove_npy_read_mem(file, len + 1, "long.npy", &a), GROVE_PARSE_ERROR,
        "long.npy: .npy header declares shape (3, 2) float32 = 24 bytes but the file holds 25 bytes after the header");
}

/* Expect the dict (with enough zero data for small shapes) to be refused. */
static void refused(const char *dict, grove_status status, const char *text)
{
    static unsigned char buf[NPY_CAP], zeros[64];
    size_t len = make_npy(buf, 1, dict, zeros, sizeof zeros);
    grove_array a;
    grove_status s = grove_npy_read_mem(buf, len, "bad.npy", &a);
    CHECK_MSG(s == status && strstr(grove_last_error(), text) && strstr(grove_last_error(), "bad.npy"),
              "%s -> %s \"%s\", wanted %s \"%s\"", dict, grove_status_str(s), grove_last_error(),
              grove_status_str(status), text);
    CHECK(a.data == NULL && a.ndim == 0);
}

TEST(io_npy_hostile_headers)
{
    refused("{'descr': '<f8', 'fortran_order': False, 'shape': (4611686018427387904, 4611686018427387904)}",
            GROVE_PARSE_ERROR, "more bytes than memory can address");
    refused("{'descr': '<f8', 'fortran_order': False, 'shape': (1000, 3)}", GROVE_PARSE_ERROR,
            "shape (1000, 3) float64 = 24000 bytes but the file holds 64 bytes after the header");
    refused("{'descr': '<f8', 'fortran_order': False, 'shape': (99999999999999999999999,)}", GROVE_PARSE_ERROR,
            "too large");
    refused("{'descr': '<f8', 'fortran_order': False, 'shape': (-8,)}", GROVE_PARSE_ERROR, "negative dimension -8");
    refused("{'descr': '<f8', 'fortran_order': False, 'shape': (3, x)}", GROVE_PARSE_ERROR,
            "expected an integer in 'shape'");
    refused("{'descr': '<f8', 'fortran_order': False, 'shape': (3 4)}", GROVE_PARSE_ERROR, "expected ',' or ')'");
    refused("{'descr': '<f8', 'fortran_order': False, 'shape': (,)}", GROVE_PARSE_ERROR, "expected an integer");
    refused("{'descr': '<f8', 'fortran_order': False, 'shape': (-,)}", GROVE_PARSE_ERROR, "expected an integer");
    refused("{'descr': '<f8', 'fortran_order': False, 'shape': 8}", GROVE_PARSE_ERROR, "expected '('");
    refused("{'descr': '<c16', 'fortran_order': False, 'shape': (2,)}", GROVE_UNSUPPORTED,
            "dtype '<c16' is not supported");
    refused("{'descr': '<u1', 'fortran_order': False, 'shape': (2,)}", GROVE_UNSUPPORTED, "dtype '<u1'");
    refused("{'descr': '|f8', 'fortran_order': False, 'shape': (2,)}", GROVE_UNSUPPORTED, "dtype '|f8'");
    refused("{'descr': [('a', '<f8')], 'fortran_order': False, 'shape': (2,)}", GROVE_UNSUPPORTED, "structured");
    refused("{'descr': '<f8', 'fortran_order': False, 'shape': ()}", GROVE_UNSUPPORTED, "0 dimensions (shape ())");
    refused("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2, 2)}", GROVE_UNSUPPORTED,
            "3 dimensions (shape (2, 2, 2)); only 1-D and 2-D");
    refused("{'descr': '<f8', 'fortran_order': Maybe, 'shape': (2,)}", GROVE_PARSE_ERROR, "True or False");
    refused("{'descr': '<f8', 'shape': (2,)}", GROVE_PARSE_ERROR, "'fortran_order' is missing");
    refused("{'descr': '<f8', 'fortran_order': False, 'shape': (2,), 'descr': '<f8'}", GROVE_PARSE_ERROR,
            "appears twice");
    refused("{'descr': '<f8', 'fortran_order': False, 'shape': (2,), 'extra': 1}", GROVE_PARSE_ERROR,
            "unexpected key 'extra'");
    refused("{'descr': '<f8', 'fortran_order': False, 'shape': (2,)", GROVE_PARSE_ERROR, "found the end of the header");
    refused("{'descr': '<f8, 'fortran_order': False, 'shape': (2,)}", GROVE_UNSUPPORTED, "dtype '<f8, ' is not");
    refused("{'descr': '<f8' 'fortran_order': False, 'shape': (2,)}", GROVE_PARSE_ERROR,
            "expected ',' or '}' at offset 26, found 'fortran_order'");
    refused("{'descr': '<f8', 'fortran_order': False, 'shape': (2,)} x", GROVE_PARSE_ERROR,
            "only spaces after the dict");
    refused("{'descr': '<f8', 'fortran_order': False, 'shape': (2,), 'x}", GROVE_PARSE_ERROR, "unterminated string");
    refused("{'descr': '<f8', 'fortran_order': False, 'shape': (2,)}\xc3\xa9", GROVE_PARSE_ERROR,
            "0xc3, not printable ASCII");
    refused("{'descr': '<f8', 'fortran_order': False; 'shape': (2,)}", GROVE_PARSE_ERROR, "unexpected character ';'");
    refused("", GROVE_PARSE_ERROR, "expected '{'");
    refused("{,}", GROVE_PARSE_ERROR, "expected a quoted key");
}

TEST(io_npy_hostile_preambles)
{
    unsigned char buf[NPY_CAP];
    grove_array a;
    const char *dict = "{'descr': '<f8', 'fortran_order': False, 'shape': (0,)}";
    size_t len = make_npy(buf, 1, dict, NULL, 0);
    buf[1] = 'n';
    CHECK_FAILS(grove_npy_read_mem(buf, len, "m.npy", &a), GROVE_PARSE_ERROR, "m.npy: not an .npy file");
    CHECK_FAILS(grove_npy_read_mem("PK\x03\x04", 4, "z.npy", &a), GROVE_PARSE_ERROR, "not an .npy file");
    CHECK_FAILS(grove_npy_read_mem(NULL, 0, "e.npy", &a), GROVE_PARSE_ERROR, "e.npy: truncated");
    len = make_npy(buf, 4, dict, NULL, 0);
    CHECK_FAILS(grove_npy_read_mem(buf, len, "v.npy", &a), GROVE_UNSUPPORTED, "version 4.0 is not supported");
    len = make_npy(buf, 1, dict, NULL, 0);
    buf[7] = 1;
    CHECK_FAILS(grove_npy_read_mem(buf, len, "v.npy", &a), GROVE_UNSUPPORTED, "version 1.1");
    /* Header length beyond the file, in both length widths. */
    len = make_npy(buf, 1, dict, NULL, 0);
    buf[9] = 0xff;
    CHECK_FAILS(grove_npy_read_mem(buf, len, "l.npy", &a), GROVE_PARSE_ERROR,
                "header length 65335 runs past the end of the file (65 bytes)");
    len = make_npy(buf, 2, dict, NULL, 0);
    buf[11] = 0xff;
    CHECK_FAILS(grove_npy_read_mem(buf, len, "l.npy", &a), GROVE_PARSE_ERROR, "runs past the end");
    CHECK_FAILS(grove_npy_read(test_write_file("l.npy", buf, len), &a), GROVE_PARSE_ERROR, "l.npy: .npy header length");
    /* Tiny header lengths leave no dict. */
    len = make_npy(buf, 1, "", NULL, 0);
    CHECK_FAILS(grove_npy_read(test_write_file("tiny.npy", buf, len), &a), GROVE_PARSE_ERROR, "expected '{'");
    len = make_npy(buf, 1, "{", NULL, 0);
    CHECK_FAILS(grove_npy_read(test_write_file("tiny.npy", buf, len), &a), GROVE_PARSE_ERROR, "expected a quoted key");
}

TEST(io_npy_file_errors_name_the_path)
{
    grove_array a;
    const char *missing = test_path("missing.npy");
    CHECK_FAILS(grove_npy_read(missing, &a), GROVE_IO_ERROR, "missing.npy: cannot open: No such file");
    CHECK_FAILS(grove_npy_read(test_tmpdir(), &a), GROVE_IO_ERROR, "is a directory");
    unsigned char buf[NPY_CAP], data[120] = {0};
    size_t len = make_npy(buf, 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1000, 3), }", data, 120);
    const char *path = test_write_file("data.npy", buf, len);
    CHECK_FAILS(grove_npy_read(path, &a), GROVE_PARSE_ERROR,
                "data.npy: .npy header declares shape (1000, 3) float64 = 24000 bytes but the file holds 120 bytes "
                "after the header");
    CHECK_FAILS(grove_npy_read(NULL, &a), GROVE_INVALID_ARGUMENT, "path is NULL");
    CHECK_FAILS(grove_npy_read(path, NULL), GROVE_INVALID_ARGUMENT, "out is NULL");
    CHECK_FAILS(grove_npy_read_mem(NULL, 3, "x", &a), GROVE_INVALID_ARGUMENT, "buf is NULL");
}

static int count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) n++;
    closedir(d);
    return n;
}

TEST(io_npy_write_is_atomic_and_reports_failures)
{
    grove_array a;
    REQUIRE_OK(grove_array_create(&a, GROVE_FLOAT64, 2, 2));
    CHECK_FAILS(grove_npy_write(test_path("no/such/dir/x.npy"), &a), GROVE_IO_ERROR,
                "no/such/dir/x.npy: cannot write: No such file or directory");
    /* Renaming over a folder fails after the temporary file was written:
     * it must be removed again. */
    char dir[512];
    snprintf(dir, sizeof dir, "%s", test_path("atomic"));
    char command[600];
    snprintf(command, sizeof command, "mkdir -p '%s/target.npy'", dir);
    REQUIRE(system(command) == 0);
    char target[600];
    snprintf(target, sizeof target, "%s/target.npy", dir);
    CHECK_FAILS(grove_npy_write(target, &a), GROVE_IO_ERROR, "target.npy: cannot write: ");
    CHECK(count_entries(dir) == 1);
    /* Replacing an existing file leaves exactly the new one. */
    snprintf(target, sizeof target, "%s/x.npy", dir);
    CHECK_OK(grove_npy_write(target, &a));
    ((double *)a.data)[3] = 42;
    CHECK_OK(grove_npy_write(target, &a));
    CHECK(count_entries(dir) == 2);
    grove_array b;
    REQUIRE_OK(grove_npy_read(target, &b));
    CHECK(((double *)b.data)[3] == 42);
    grove_array_free(&b);
    /* Bad arrays are refused before anything is written. */
    a.ndim = 3;
    CHECK_FAILS(grove_npy_write(target, &a), GROVE_INVALID_ARGUMENT, "ndim must be 1 or 2");
    a.ndim = 1;
    CHECK_FAILS(grove_npy_write(target, &a), GROVE_INVALID_ARGUMENT, "shape[1] == 1");
    a.ndim = 2;
    a.dtype = (grove_dtype)42;
    CHECK_FAILS(grove_npy_write(target, &a), GROVE_INVALID_ARGUMENT, "unknown dtype");
    a.dtype = GROVE_FLOAT64;
    CHECK_FAILS(grove_npy_write(NULL, &a), GROVE_INVALID_ARGUMENT, "path is NULL");
    CHECK_FAILS(grove_npy_write(target, NULL), GROVE_INVALID_ARGUMENT, "array is NULL");
    grove_array_free(&a);
    CHECK(count_entries(dir) == 2);
}

TEST(io_npy_keeps_nan)
{
    grove_array a, b;
    REQUIRE_OK(grove_array_create(&a, GROVE_FLOAT64, 2, 0));
    ((double *)a.data)[1] = NAN;
    REQUIRE_OK(grove_npy_write(test_path("nan.npy"), &a));
    REQUIRE_OK(grove_npy_read(test_path("nan.npy"), &b));
    CHECK(isnan(((double *)b.data)[1]));
    grove_array_free(&a);
    grove_array_free(&b);
}

/* A 3 x 2 float64 array of sixths, and a fresh folder tmpdir/name. */
static void through_setup(grove_array *a, const char *name, char dir[512])
{
    REQUIRE_OK(grove_array_create(a, GROVE_FLOAT64, 3, 2));
    for (size_t i = 0; i < 6; i++) ((double *)a->data)[i] = (double)i / 3;
    snprintf(dir, 512, "%s", test_path(name));
    CHECK(mkdir(dir, 0777) == 0);
}

TEST(io_npy_write_goes_through_a_character_device)
{
    grove_array a;
    char dir[512], node[600], command[1400];
    through_setup(&a, "through_device", dir);
    /* A null device (mknod needs root): written to, still the device. */
    snprintf(node, sizeof node, "%s/null.npy", dir);
    snprintf(command, sizeof command, "mknod '%s' c 1 3 2>/dev/null && : > '%s'", node, node);
    struct stat st, null_dev;
    if (stat("/dev/null", &null_dev) != 0 || system(command) != 0) {
        grove_array_free(&a);
        test_skip("no null device can be made and opened in the test folder (mknod needs root)");
        return;
    }
    CHECK_OK(grove_npy_write(node, &a));
    CHECK(stat(node, &st) == 0 && S_ISCHR(st.st_mode) && st.st_rdev == null_dev.st_rdev);
    CHECK_OK(grove_tipsy_write(node, 0, 0, NULL, NULL, NULL, NULL, 0, 1));
    CHECK(stat(node, &st) == 0 && S_ISCHR(st.st_mode) && count_entries(dir) == 1);
    grove_array_free(&a);
}

TEST(io_npy_write_goes_through_a_fifo)
{
    grove_array a;
    char dir[512], fifo[600], copy[600], ref[600], command[1400];
    through_setup(&a, "through_fifo", dir);
    snprintf(ref, sizeof ref, "%s/ref.npy", dir);
    REQUIRE_OK(grove_npy_write(ref, &a));
    /* A reader copying the FIFO to a file. */
    snprintf(fifo, sizeof fifo, "%s/pipe.npy", dir);
    snprintf(copy, sizeof copy, "%s/read.npy", dir);
    REQUIRE(mkfifo(fifo, 0600) == 0);
    snprintf(command, sizeof command, "timeout 30 cat '%s' > '%s' &", fifo, copy);
    REQUIRE(system(command) == 0);
    CHECK_OK(grove_npy_write(fifo, &a));
    struct stat st;
    CHECK(stat(fifo, &st) == 0 && S_ISFIFO(st.st_mode));
    const struct timespec pause = {0, 10000000};
    for (int i = 0; i < 3000 && !test_same_file(copy, ref); i++) nanosleep(&pause, NULL);
    CHECK_MSG(test_same_file(copy, ref), "the FIFO's reader did not get the array");
    /* A folder is refused, and no temporary is left beside it. */
    char folder[600];
    snprintf(folder, sizeof folder, "%s/folder.npy", dir);
    REQUIRE(mkdir(folder, 0777) == 0);
    CHECK_FAILS(grove_npy_write(folder, &a), GROVE_IO_ERROR, "folder.npy: cannot write: it is a folder");
    CHECK(count_entries(dir) == 4);
    grove_array_free(&a);
}

TEST(io_npy_write_takes_the_longest_names)
{
    grove_array a, b;
    REQUIRE_OK(grove_array_create(&a, GROVE_INT64, 4, 0));
    ((int64_t *)a.data)[2] = 7;
    char dir[512], path[1024];
    snprintf(dir, sizeof dir, "%s", test_path("long_names"));
    REQUIRE(mkdir(dir, 0777) == 0);
    long max = pathconf(dir, _PC_NAME_MAX);
    REQUIRE(max >= 16 && max < 600);
    for (long len = max - 40; len <= max; len += 8) {
        int at = snprintf(path, sizeof path, "%s/", dir);
        memset(path + at, 'x', (size_t)len - 4);
        snprintf(path + at + len - 4, 5, ".npy");
        CHECK_OK(grove_npy_write(path, &a));
        CHECK_OK(grove_npy_write(path, &a)); /* replacing it too */
        CHECK_OK(grove_npy_read(path, &b));
        CHECK(b.shape[0] == 4 && ((int64_t *)b.data)[2] == 7);
        grove_array_free(&b);
        CHECK(count_entries(dir) == 1);
        CHECK(unlink(path) == 0);
    }
    grove_array_free(&a);
}
