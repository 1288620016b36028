/* CSV and whitespace-separated text to a float64 (rows, cols) array.
 * The buffer is not NUL-terminated: everything is bounded by its length,
 * and each field is copied into a small terminated buffer for strtod. */
#include "io_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* Longer fields are not numbers anyone writes; refusing them keeps the
 * strtod copy on the stack. */
enum { MAX_FIELD = 100 };

typedef struct csv {
    const char *name;
    size_t line;       /* 1-based number of the current line */
    const char *start; /* first byte of the current line */
    double *values;
    size_t count, cap;
    size_t max_values; /* no text of len bytes holds more numbers */
    size_t rows, cols;
    size_t header_line;   /* 1-based line of the header, 0 = none */
    size_t header_fields; /* its number of names */
} csv;

static grove_status located(const csv *c, const char *at, const char *fmt, ...) GROVE__PRINTF(3, 4);
static grove_status located(const csv *c, const char *at, const char *fmt, ...)
{
    char what[200];
    va_list args;
    va_start(args, fmt);
    vsnprintf(what, sizeof what, fmt, args);
    va_end(args);
    return grove__fail(GROVE_PARSE_ERROR, "%.200s:%zu:%zu: %s", c->name, c->line, (size_t)(at - c->start) + 1, what);
}

/* ---- fields ------------------------------------------------------------ */

static bool is_blank(char ch) { return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\v' || ch == '\f'; }

typedef enum { FIELD_NONE, FIELD_TEXT, FIELD_EMPTY } field_kind;

/* Walks the fields of one line: separators are a comma, blanks, or a comma
 * with blanks around it; two commas in a row leave an empty field. */
typedef struct fields {
    const char *p, *end;
    bool after_field; /* a comma is a separator only right after a field */
    bool after_comma; /* so the line may not end here */
} fields;

static field_kind next_field(fields *it, const char **text, size_t *len)
{
    for (;;) {
        while (it->p < it->end && is_blank(*it->p)) it->p++;
        *text = it->p;
        *len = 0;
        if (it->p == it->end) {
            bool dangling = it->after_comma;
            it->after_comma = false;
            return dangling ? FIELD_EMPTY : FIELD_NONE;
        }
        if (*it->p != ',') break;
        it->p++;
        it->after_comma = true;
        /* A comma with no field before it ends an empty field. */
        if (!it->after_field) return FIELD_EMPTY;
        it->after_field = false;
    }
    while (it->p < it->end && *it->p != ',' && !is_blank(*it->p)) it->p++;
    *len = (size_t)(it->p - *text);
    it->after_field = true;
    it->after_comma = false;
    return FIELD_TEXT;
}

typedef enum { NUM_OK, NUM_TOO_LONG, NUM_NOT_NUMBER, NUM_NOT_FINITE } num_kind;

static num_kind parse_number(const char *text, size_t len, double *value)
{
    if (len > MAX_FIELD) return NUM_TOO_LONG;
    char copy[MAX_FIELD + 1];
    memcpy(copy, text, len);
    copy[len] = '\0';
    char *end;
    /* strtod follows LC_NUMERIC; grove assumes the "C" decimal point, which
     * holds unless the host program calls setlocale. */
    *value = strtod(copy, &end);
    if (end != copy + len) return NUM_NOT_NUMBER;
    /* strtod reads "nan" and "inf", and overflow gives HUGE_VAL. Underflow
     * to zero or a subnormal is a fine value. */
    return isfinite(*value) ? NUM_OK : NUM_NOT_FINITE;
}

/* ---- rows -------------------------------------------------------------- */

/* A header line holds no field that reads as a number (nan and inf count
 * as numbers, so a first row with NaN or a typo such as "1,2,3x" is data
 * and refused, not skipped) and at least one that does not. Its names are
 * counted between commas when it has any, so they may hold blanks
 * ("pos x, pos y"), else between blanks. */
static bool is_header(const char *line, const char *end, size_t *names)
{
    fields it = {line, end, false, false};
    const char *text;
    size_t len, words = 0;
    field_kind k;
    bool named = false;
    while ((k = next_field(&it, &text, &len)) != FIELD_NONE) {
        if (k == FIELD_EMPTY) continue;
        double v;
        num_kind n = parse_number(text, len, &v);
        if (n == NUM_OK || n == NUM_NOT_FINITE) return false;
        named = true;
        words++;
    }
    size_t commas = 0;
    for (const char *p = line; p < end; p++) commas += *p == ',';
    *names = commas ? commas + 1 : words;
    return named;
}

static grove_status push(csv *c, double v)
{
    if (c->count == c->cap) {
        /* Doubling keeps growth amortized; the cap keeps it within what the
         * text can hold. */
        size_t want = c->cap ? c->cap * 2 : 256;
        if (want > c->max_values) want = c->max_values;
        if (want <= c->count) want = c->count + 1; /* cannot happen; guards the bound's proof */
        size_t bytes;
        if (!grove__mul_size(want, sizeof(double), &bytes))
            return grove__fail(GROVE_TOO_LARGE, "too many values for the address space");
        double *grown = grove__realloc(c->values, bytes, "csv values");
        if (!grown) return GROVE_OUT_OF_MEMORY;
        c->values = grown;
        c->cap = want;
    }
    c->values[c->count++] = v;
    return GROVE_OK;
}

static grove_status parse_row(csv *c, const char *line, const char *end)
{
    fields it = {line, end, false, false};
    /* A short row is reported just after its last field, a long one at its
     * first extra field. */
    const char *text, *extra = NULL, *last_end = line;
    size_t len, found = 0;
    field_kind k;
    while ((k = next_field(&it, &text, &len)) != FIELD_NONE) {
        if (k == FIELD_EMPTY) return located(c, text, "empty field");
        found++;
        last_end = text + len;
        if (c->rows > 0 && found > c->cols) {
            /* Keep counting for the message, but store nothing more. */
            if (!extra) extra = text;
            continue;
        }
        double v;
        switch (parse_number(text, len, &v)) {
        case NUM_OK: break;
        case NUM_TOO_LONG: return located(c, text, "field of %zu characters is too long for a number", len);
        case NUM_NOT_NUMBER: return located(c, text, "'%.*s' is not a number", len > 40 ? 40 : (int)len, text);
        case NUM_NOT_FINITE: return located(c, text, "'%.*s' is not a finite number", len > 40 ? 40 : (int)len, text);
        }
        grove_status s = push(c, v);
        if (s != GROVE_OK) return s;
    }
    if (c->rows == 0 && c->header_line && c->header_fields != found)
        return grove__fail(GROVE_PARSE_ERROR, "%.200s:%zu:1: a header of %zu fields above rows of %zu", c->name,
                           c->header_line, c->header_fields, found);
    if (c->rows == 0)
        c->cols = found;
    else if (found != c->cols)
        return located(c, extra ? extra : last_end, "expected %zu fields, found %zu", c->cols, found);
    c->rows++;
    return GROVE_OK;
}

/* The end of the line starting at p (a LF, a CR or the end of the text),
 * and in *next the start of the next line (past a CRLF as one ending).
 * *lf (NULL at first) keeps the next LF, or stop, between calls, so a file
 * of CR-only lines is not searched to its end for a LF once per line. */
static const char *line_end(const char *p, const char *stop, const char **lf, const char **next)
{
    if (!*lf || *lf < p) {
        *lf = memchr(p, '\n', (size_t)(stop - p));
        if (!*lf) *lf = stop;
    }
    const char *end = *lf, *cr = memchr(p, '\r', (size_t)(end - p));
    if (cr) end = cr;
    *next = end == stop ? stop : end + (*end == '\r' && end + 1 < stop && end[1] == '\n' ? 2 : 1);
    return end;
}

static grove_status parse(csv *c, const char *buf, size_t len)
{
    bool first = true;
    const char *p = buf, *stop = buf + len, *lf = NULL;
    /* A UTF-8 byte order mark, as some editors write, is no part of a field. */
    if (len >= 3 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0) p += 3;
    for (c->line = 1; p < stop; c->line++) {
        const char *next, *end = line_end(p, stop, &lf, &next);
        c->start = p;
        const char *nul = memchr(p, '\0', (size_t)(end - p));
        if (nul) return located(c, nul, "NUL byte in text (is this a binary file?)");
        const char *hash = memchr(p, '#', (size_t)(end - p));
        const char *content = hash ? hash : end;
        const char *q = p;
        while (q < content && is_blank(*q)) q++;
        if (q < content) {
            if (first && is_header(p, content, &c->header_fields)) {
                c->header_line = c->line;
            } else {
                grove_status s = parse_row(c, p, content);
                if (s != GROVE_OK) return s;
            }
            first = false;
        }
        p = next;
    }
    return GROVE_OK;
}

grove_status grove_csv_read_mem_info(const char *buf, size_t len, const char *name, grove_array *out,
                                     grove_load_info *info)
{
    grove__clear_error();
    if (info) memset(info, 0, sizeof *info);
    if (!out) return grove__fail(GROVE_INVALID_ARGUMENT, "csv_read_mem: out is NULL");
    memset(out, 0, sizeof *out);
    if (!buf && len > 0) return grove__fail(GROVE_INVALID_ARGUMENT, "csv_read_mem: buf is NULL with len %zu", len);
    csv c;
    memset(&c, 0, sizeof c);
    c.name = name ? name : "csv buffer";
    /* n numbers need at least n characters and n - 1 separators. */
    c.max_values = len / 2 + 1;
    grove_status s = parse(&c, buf, len);
    if (s != GROVE_OK) {
        if (s != GROVE_PARSE_ERROR) grove__error_prefix(c.name);
        grove__free(c.values);
        return s;
    }
    out->data = c.values;
    out->dtype = GROVE_FLOAT64;
    out->ndim = 2;
    out->shape[0] = c.rows;
    out->shape[1] = c.cols;
    if (info) {
        info->text = 1;
        info->header_line = c.header_line;
    }
    return GROVE_OK;
}

grove_status grove_csv_read_mem(const char *buf, size_t len, const char *name, grove_array *out)
{
    return grove_csv_read_mem_info(buf, len, name, out, NULL);
}

grove_status grove__csv_read_file(const char *path, grove_array *out, grove_load_info *info)
{
    void *text;
    size_t len;
    grove_status s = grove__file_slurp(path, &text, &len);
    if (s != GROVE_OK) {
        grove__error_prefix(path);
        return s;
    }
    s = grove_csv_read_mem_info(text, len, path, out, info);
    grove__free(text);
    return s;
}

grove_status grove_csv_read(const char *path, grove_array *out)
{
    grove__clear_error();
    if (!out) return grove__fail(GROVE_INVALID_ARGUMENT, "csv_read: out is NULL");
    memset(out, 0, sizeof *out);
    if (!path) return grove__fail(GROVE_INVALID_ARGUMENT, "csv_read: path is NULL");
    return grove__csv_read_file(path, out, NULL);
}
