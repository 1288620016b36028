/* CSV / whitespace text reading: layouts, headers, and every refusal with
 * its line and column. */
#include "internal.h"
#include "test.h"

/* Parse text (its strlen) and require success. */
static grove_status csv(const char *text, grove_array *out)
{
    return grove_csv_read_mem(text, strlen(text), "in.csv", out);
}

static void expect_values(const char *text, size_t rows, size_t cols, const double *want)
{
    grove_array a;
    grove_status s = csv(text, &a);
    CHECK_MSG(s == GROVE_OK, "%s: %s", text, grove_last_error());
    if (s != GROVE_OK) return;
    CHECK_MSG(a.dtype == GROVE_FLOAT64 && a.ndim == 2 && a.shape[0] == rows && a.shape[1] == cols,
              "%s: shape (%zu, %zu)", text, a.shape[0], a.shape[1]);
    for (size_t i = 0; i < rows * cols && a.shape[0] * a.shape[1] == rows * cols; i++)
        CHECK_MSG(((double *)a.data)[i] == want[i], "%s: value %zu is %g", text, i, ((double *)a.data)[i]);
    grove_array_free(&a);
}

static void expect_error(const char *text, const char *message)
{
    grove_array a;
    grove_status s = csv(text, &a);
    CHECK_MSG(s == GROVE_PARSE_ERROR && strstr(grove_last_error(), message), "%s -> %s \"%s\", wanted \"%s\"", text,
              grove_status_str(s), grove_last_error(), message);
    CHECK(a.data == NULL);
}

TEST(io_csv_layouts)
{
    const double six[6] = {1, 2, 3, 4, 5, 6};
    expect_values("1,2,3\n4,5,6\n", 2, 3, six);
    expect_values("1,2,3\n4,5,6", 2, 3, six);
    expect_values("1 2 3\n4\t5  6\n", 2, 3, six);
    expect_values("1, 2 ,3\n 4 ,5, 6 \n", 2, 3, six);
    expect_values("1,2,3\r\n4,5,6\r\n", 2, 3, six);
    expect_values("# comment\n\n1,2,3 # trailing\n   \n# 9,9,9\n4,5,6\n\n", 2, 3, six);
    expect_values("x,y,z\n1,2,3\n4,5,6\n", 2, 3, six);
    expect_values("# made by hand\n\"x\"\t\"y\"\t\"z\"\r\n1\t2\t3\r\n4\t5\t6\r\n", 2, 3, six);
    expect_values(",x,y\n1,2,3\n4,5,6\n", 2, 3, six);
    const double odd[4] = {-1.5, 1e-3, 0x10, 0};
    expect_values("-1.5 +1e-3\n0x10 1e-999\n", 2, 2, odd);
    expect_values("1\n2\n3\n4\n5\n6\n", 6, 1, six);
}

TEST(io_csv_empty_inputs_have_no_rows)
{
    const char *texts[] = {"", "\n\n", "# only a comment\n", "x,y,z\n", "  # a\n x y\n# b"};
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        grove_array a;
        CHECK_OK(csv(texts[i], &a));
        CHECK(a.ndim == 2 && a.shape[0] == 0 && a.shape[1] == 0 && grove_array_count(&a) == 0);
        grove_array_free(&a);
    }
}

TEST(io_csv_refusals_name_line_and_column)
{
    expect_error("1,2,3\n4,5\n", "in.csv:2:4: expected 3 fields, found 2");
    expect_error("1,2\n3,4,5,6\n", "in.csv:2:5: expected 2 fields, found 4");
    expect_error("a,b\n1 2\n\n# c\n3 4 5\n", "in.csv:5:5: expected 2 fields, found 3");
    expect_error("1,nan\n", "in.csv:1:3: 'nan' is not a finite number");
    expect_error("nan,1\n", "in.csv:1:1: 'nan' is not a finite number");
    expect_error("1,2\n-inf,2\n", "in.csv:2:1: '-inf' is not a finite number");
    expect_error("1,2\n3,Infinity\n", "in.csv:2:3: 'Infinity' is not a finite number");
    expect_error("1,1e999\n", "in.csv:1:3: '1e999' is not a finite number");
    expect_error("1,-1e400\n", "'-1e400' is not a finite number");
    expect_error("1,,2\n", "in.csv:1:3: empty field");
    expect_error("1, ,2\n", "in.csv:1:4: empty field");
    expect_error(",1,2\n", "in.csv:1:1: empty field");
    expect_error("1,2,\n", "in.csv:1:5: empty field");
    expect_error("x,y\n1,2\n3,abc\n", "in.csv:3:3: 'abc' is not a number");
    expect_error("x,y\n1,2\nx,y\n", "in.csv:3:1: 'x' is not a number");
    expect_error("1,2\n3,4x\n", "'4x' is not a number");
    expect_error("1,2\r\n3,4\r\n5\r\n", "in.csv:3:2: expected 2 fields, found 1");
    char longfield[300];
    strcpy(longfield, "1,2\n");
    memset(longfield + 4, '1', 150);
    strcpy(longfield + 154, ",2\n");
    expect_error(longfield, "in.csv:2:1: field of 150 characters is too long");
    /* As the first line it is still data: its second field is a number, so
     * it is no header (a header holds no number at all). */
    expect_error(longfield + 4, "in.csv:1:1: field of 150 characters is too long");
    grove_array a;
    CHECK_FAILS(grove_csv_read_mem("1,2\n3,\0,4\n", 10, "nul.csv", &a), GROVE_PARSE_ERROR, "nul.csv:2:3: NUL byte");
    CHECK_FAILS(grove_csv_read_mem(NULL, 1, "x", &a), GROVE_INVALID_ARGUMENT, "buf is NULL");
    CHECK_FAILS(grove_csv_read_mem("1", 1, "x", NULL), GROVE_INVALID_ARGUMENT, "out is NULL");
}

TEST(io_csv_reads_only_len_bytes)
{
    /* Not NUL-terminated: the number must stop at len. */
    char buf[5] = {'1', '2', ',', '3', '4'};
    grove_array a;
    REQUIRE_OK(grove_csv_read_mem(buf, 4, "cut", &a));
    CHECK(a.shape[0] == 1 && a.shape[1] == 2 && ((double *)a.data)[1] == 3);
    grove_array_free(&a);
    /* Every prefix of a file parses or fails cleanly (ASan checks reads). */
    const char *text = "x y\n1.5e3, 2 # c\r\n-3 4\n";
    for (size_t cut = 0; cut <= strlen(text); cut++) {
        char *copy = malloc(cut ? cut : 1);
        memcpy(copy, text, cut);
        grove_status s = grove_csv_read_mem(copy, cut, "cut", &a);
        CHECK(s == GROVE_OK || s == GROVE_PARSE_ERROR);
        grove_array_free(&a);
        free(copy);
    }
}

TEST(io_csv_large_file_grows_and_reads_from_disk)
{
    size_t rows = 20000, cap = rows * 40;
    char *text = malloc(cap);
    size_t len = 0;
    len += (size_t)snprintf(text, cap, "a\tb\tc\n");
    for (size_t i = 0; i < rows; i++)
        len += (size_t)snprintf(text + len, cap - len, "%zu\t%.17g\t-%zu\n", i, (double)i / 7.0, i);
    const char *path = test_write_file("big.tsv", text, len);
    free(text);
    grove_array a;
    REQUIRE_OK(grove_csv_read(path, &a));
    CHECK(a.shape[0] == rows && a.shape[1] == 3);
    const double *v = a.data;
    for (size_t i = 0; i < rows; i++) {
        CHECK(v[3 * i] == (double)i && v[3 * i + 1] == (double)i / 7.0 && v[3 * i + 2] == -(double)i);
        if (test_failed_now()) break;
    }
    grove_array_free(&a);
    CHECK_FAILS(grove_csv_read(test_path("nope.csv"), &a), GROVE_IO_ERROR, "nope.csv: cannot open");
    path = test_write_file("bad.csv", "1,2\n3\n", 6);
    CHECK_FAILS(grove_csv_read(path, &a), GROVE_PARSE_ERROR, "bad.csv:2:2: expected 2 fields, found 1");
}

/* The header a text read skipped: its 1-based line, or 0. */
static size_t header_line_of(const char *text, size_t rows, size_t cols)
{
    grove_array a;
    grove_load_info info;
    grove_status s = grove_csv_read_mem_info(text, strlen(text), "in.csv", &a, &info);
    CHECK_MSG(s == GROVE_OK, "%s: %s", text, grove_last_error());
    if (s != GROVE_OK) return (size_t)-1;
    CHECK_MSG(info.text == 1, "%s: not marked as text", text);
    CHECK_MSG(a.shape[0] == rows && a.shape[1] == cols, "%s: shape (%zu, %zu), wanted (%zu, %zu)", text, a.shape[0],
              a.shape[1], rows, cols);
    grove_array_free(&a);
    return info.header_line;
}

TEST(io_csv_header_only_when_the_rest_is_numbers)
{
    const double six[6] = {1, 2, 3, 4, 5, 6};
    /* A UTF-8 byte order mark is skipped, on a headerless file and on a header. */
    expect_values("\xEF\xBB\xBF" "1,2,3\n4,5,6\n", 2, 3, six);
    expect_values("\xEF\xBB\xBF" "x,y,z\n1,2,3\n4,5,6\n", 2, 3, six);
    CHECK(header_line_of("\xEF\xBB\xBF" "1,2,3\n4,5,6\n", 2, 3) == 0);
    CHECK(header_line_of("\xEF\xBB\xBF" "x,y,z\n1,2,3\n4,5,6\n", 2, 3) == 1);
    /* A typo in row 1 is an error there, not a header. */
    expect_error("1,2,3x\n4,5,6\n", "in.csv:1:5: '3x' is not a number");
    expect_error("1 2 abc\n4 5 6\n", "in.csv:1:5: 'abc' is not a number");
    /* A header must have the rows' field count. */
    expect_error("x,y\n1,2,3\n4,5,6\n", "in.csv:1:1: a header of 2 fields above rows of 3");
    expect_error("x,y,z,w\n1,2,3\n", "in.csv:1:1: a header of 4 fields above rows of 3");
    /* Header names may hold blanks when commas separate them. */
    expect_values("pos x, pos y, pos z\n1,2,3\n4,5,6\n", 2, 3, six);
    CHECK(header_line_of("# comment\n\npos x, pos y, pos z\n1,2,3\n4,5,6\n", 2, 3) == 3);
    CHECK(header_line_of("1,2,3\n4,5,6\n", 2, 3) == 0);
    CHECK(header_line_of("x,y,z\n", 0, 0) == 1);
    CHECK(header_line_of("", 0, 0) == 0);
}

TEST(io_csv_cr_lf_and_crlf_all_end_lines)
{
    const double nine[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    expect_values("1,2,3\r4,5,6\r7,8,9\r", 3, 3, nine);
    expect_values("1,2,3\r4,5,6\r7,8,9", 3, 3, nine);
    expect_values("1,2,3\r\n4,5,6\n7,8,9\r", 3, 3, nine);
    CHECK(header_line_of("a,b,c\r1,2,3\r4,5,6\r7,8,9\r", 3, 3) == 1);
    /* Line numbers count CR, LF and CRLF once each. */
    expect_error("1,2\r3,4\r\n5\n", "in.csv:3:2: expected 2 fields, found 1");
    expect_error("1,2\r\r3,x\r", "in.csv:3:3: 'x' is not a number");
    expect_error("a,b\r1,2\r\n\r\n3,4,5\r", "in.csv:4:5: expected 2 fields, found 3");
}
