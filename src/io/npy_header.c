/* The .npy preamble and header: magic, version, header length, and the
 * header itself, a Python dict literal such as
 *     {'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }
 * read with a small tokenizer, so key order, quote style, spacing and
 * trailing commas do not matter (numpy/lib/format.py is the spec). */
#include "io_internal.h"

#include <stdio.h>

enum { MAX_DIMS = 32 };

/* ---- preamble ---------------------------------------------------------- */

grove_status grove__npy_data_offset(const unsigned char *buf, size_t avail, size_t file_size, size_t *data_offset)
{
    static const unsigned char magic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
    if (memcmp(buf, magic, avail < 6 ? avail : 6) != 0)
        return grove__fail(GROVE_PARSE_ERROR, "not an .npy file (it does not start with \\x93NUMPY)");
    if (avail < 8)
        return grove__fail(GROVE_PARSE_ERROR, "truncated .npy file: %zu bytes is too short for the preamble", avail);
    unsigned major = buf[6], minor = buf[7];
    if (major < 1 || major > 3 || minor != 0)
        return grove__fail(GROVE_UNSUPPORTED, ".npy format version %u.%u is not supported (1.0, 2.0 and 3.0 are)",
                           major, minor);
    /* Version 1.0 has a 2-byte header length, 2.0 and 3.0 a 4-byte one. */
    size_t field = major == 1 ? 2 : 4;
    if (avail < 8 + field)
        return grove__fail(GROVE_PARSE_ERROR, "truncated .npy file: %zu bytes is too short for the preamble", avail);
    size_t header_len = 0;
    for (size_t i = field; i-- > 0;) header_len = header_len << 8 | buf[8 + i];
    size_t end = 8 + field + header_len; /* at most 12 + 2^32 - 1: no overflow on 64-bit */
    if (end < header_len || end > file_size)
        return grove__fail(GROVE_PARSE_ERROR, ".npy header length %zu runs past the end of the file (%zu bytes)",
                           header_len, file_size);
    *data_offset = end;
    return GROVE_OK;
}

/* ---- tokenizer --------------------------------------------------------- */

typedef enum { TOK_END, TOK_PUNCT, TOK_STRING, TOK_INT, TOK_NAME } tok_kind;

typedef struct token {
    tok_kind kind;
    const char *text; /* string contents (without quotes), digits or name */
    size_t len;
    size_t offset; /* where the token starts, from the start of the file */
} token;

typedef struct lexer {
    const char *s;
    size_t pos, end; /* pos and end index the whole file buffer */
} lexer;

static bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
static bool is_digit(char c) { return c >= '0' && c <= '9'; }
static bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }

static grove_status next_token(lexer *lx, token *t)
{
    while (lx->pos < lx->end && is_space(lx->s[lx->pos])) lx->pos++;
    t->offset = lx->pos;
    t->text = lx->s + lx->pos;
    t->len = 0;
    if (lx->pos == lx->end) {
        t->kind = TOK_END;
        return GROVE_OK;
    }
    char c = lx->s[lx->pos];
    size_t start = lx->pos;
    if (c != '\0' && strchr("{}():,[]", c)) {
        t->kind = TOK_PUNCT;
        t->len = 1;
        lx->pos++;
    } else if (c == '\'' || c == '"') {
        const char *close = memchr(lx->s + start + 1, c, lx->end - start - 1);
        if (!close) return grove__fail(GROVE_PARSE_ERROR, ".npy header: unterminated string at offset %zu", start);
        t->kind = TOK_STRING;
        t->text = lx->s + start + 1;
        t->len = (size_t)(close - t->text);
        lx->pos = (size_t)(close - lx->s) + 1;
    } else if (is_digit(c) || c == '-') {
        /* Python 2 wrote long integers with an L suffix ("(3L, 4L)"). */
        size_t p = start + 1;
        while (p < lx->end && is_digit(lx->s[p])) p++;
        t->kind = TOK_INT;
        t->len = p - start;
        if (p < lx->end && lx->s[p] == 'L') p++;
        lx->pos = p;
    } else if (is_alpha(c)) {
        size_t p = start + 1;
        while (p < lx->end && (is_alpha(lx->s[p]) || is_digit(lx->s[p]))) p++;
        t->kind = TOK_NAME;
        t->len = p - start;
        lx->pos = p;
    } else {
        return grove__fail(GROVE_PARSE_ERROR, ".npy header: unexpected character '%c' at offset %zu", c, start);
    }
    return GROVE_OK;
}

static bool is_punct(const token *t, char c) { return t->kind == TOK_PUNCT && t->text[0] == c; }
static bool token_is(const token *t, const char *word)
{
    return t->len == strlen(word) && memcmp(t->text, word, t->len) == 0;
}

/* "found ..." part of error messages. */
static const char *describe(const token *t, char *buf, size_t cap)
{
    if (t->kind == TOK_END)
        snprintf(buf, cap, "the end of the header");
    else
        snprintf(buf, cap, "'%.*s'", t->len > 20 ? 20 : (int)t->len, t->text);
    return buf;
}

static grove_status expected(const char *what, const token *t)
{
    char found[32];
    return grove__fail(GROVE_PARSE_ERROR, ".npy header: expected %s at offset %zu, found %s", what, t->offset,
                       describe(t, found, sizeof found));
}

static grove_status expect_punct(lexer *lx, char c)
{
    token t;
    grove_status s = next_token(lx, &t);
    if (s != GROVE_OK) return s;
    if (!is_punct(&t, c)) {
        char what[8];
        snprintf(what, sizeof what, "'%c'", c);
        return expected(what, &t);
    }
    return GROVE_OK;
}

/* ---- values ------------------------------------------------------------ */

typedef struct parsed {
    bool have_descr, have_order, have_shape;
    grove_dtype dtype;
    bool swap, fortran_order;
    char descr[24];
    size_t ndim;
    size_t dims[MAX_DIMS];
} parsed;

static grove_status parse_descr(lexer *lx, parsed *p)
{
    token t;
    grove_status s = next_token(lx, &t);
    if (s != GROVE_OK) return s;
    if (is_punct(&t, '['))
        return grove__fail(GROVE_UNSUPPORTED, ".npy header: structured dtypes (descr is a list) are not supported");
    if (t.kind != TOK_STRING) return expected("a dtype string for 'descr'", &t);
    snprintf(p->descr, sizeof p->descr, "%.*s", t.len > 20 ? 20 : (int)t.len, t.text);
    const char *code = t.text;
    size_t len = t.len;
    char order = '=';
    if (len > 0 && strchr("<>|=", code[0])) {
        order = code[0];
        code++;
        len--;
    }
    static const struct {
        const char *code;
        grove_dtype dtype;
    } known[] = {
        {"f4", GROVE_FLOAT32}, {"f8", GROVE_FLOAT64}, {"i4", GROVE_INT32}, {"i8", GROVE_INT64}, {"b1", GROVE_BOOL}};
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        if (len != 2 || memcmp(code, known[i].code, 2) != 0) continue;
        size_t width = grove_dtype_size(known[i].dtype);
        /* '|' means "byte order not applicable": only right for one byte. */
        if (order == '|' && width > 1) break;
        p->dtype = known[i].dtype;
        bool little = order == '<' || (order == '=' && grove__host_little_endian());
        p->swap = width > 1 && order != '|' && little != grove__host_little_endian();
        return GROVE_OK;
    }
    return grove__fail(GROVE_UNSUPPORTED,
                       ".npy dtype '%s' is not supported (float32, float64, int32, int64 or bool only)", p->descr);
}

static grove_status parse_order(lexer *lx, parsed *p)
{
    token t;
    grove_status s = next_token(lx, &t);
    if (s != GROVE_OK) return s;
    if (t.kind == TOK_NAME && (token_is(&t, "True") || token_is(&t, "False"))) {
        p->fortran_order = token_is(&t, "True");
        return GROVE_OK;
    }
    return expected("True or False for 'fortran_order'", &t);
}

static grove_status parse_dim(const token *t, size_t *dim)
{
    if (t->text[0] == '-')
        return grove__fail(GROVE_PARSE_ERROR, ".npy header: negative dimension %.*s in 'shape'",
                           t->len > 24 ? 24 : (int)t->len, t->text);
    size_t v = 0;
    for (size_t i = 0; i < t->len; i++) {
        size_t digit = (size_t)(t->text[i] - '0');
        if (v > (SIZE_MAX - digit) / 10)
            return grove__fail(GROVE_PARSE_ERROR, ".npy header: dimension %.*s in 'shape' is too large",
                               t->len > 24 ? 24 : (int)t->len, t->text);
        v = v * 10 + digit;
    }
    *dim = v;
    return GROVE_OK;
}

/* A tuple of non-negative integers: (), (5,), (3, 4), (3, 4,). */
static grove_status parse_shape(lexer *lx, parsed *p)
{
    grove_status s = expect_punct(lx, '(');
    if (s != GROVE_OK) return s;
    for (;;) {
        token t;
        if ((s = next_token(lx, &t)) != GROVE_OK) return s;
        if (is_punct(&t, ')')) return GROVE_OK;
        if (t.kind != TOK_INT || (t.len == 1 && t.text[0] == '-')) return expected("an integer in 'shape'", &t);
        if (p->ndim == MAX_DIMS)
            return grove__fail(GROVE_UNSUPPORTED, ".npy header: more than %d dimensions", MAX_DIMS);
        if ((s = parse_dim(&t, &p->dims[p->ndim])) != GROVE_OK) return s;
        p->ndim++;
        if ((s = next_token(lx, &t)) != GROVE_OK) return s;
        if (is_punct(&t, ')')) return GROVE_OK;
        if (!is_punct(&t, ',')) return expected("',' or ')' in 'shape'", &t);
    }
}

/* One "'key': value" entry. */
static grove_status parse_entry(lexer *lx, const token *key, parsed *p)
{
    grove_status s = expect_punct(lx, ':');
    if (s != GROVE_OK) return s;
    bool *seen;
    grove_status (*parse_value)(lexer *, parsed *);
    if (token_is(key, "descr")) {
        seen = &p->have_descr;
        parse_value = parse_descr;
    } else if (token_is(key, "fortran_order")) {
        seen = &p->have_order;
        parse_value = parse_order;
    } else if (token_is(key, "shape")) {
        seen = &p->have_shape;
        parse_value = parse_shape;
    } else {
        char name[32];
        return grove__fail(GROVE_PARSE_ERROR, ".npy header: unexpected key %s", describe(key, name, sizeof name));
    }
    if (*seen) return grove__fail(GROVE_PARSE_ERROR, ".npy header: key '%.*s' appears twice", (int)key->len, key->text);
    *seen = true;
    return parse_value(lx, p);
}

static grove_status parse_dict(lexer *lx, parsed *p)
{
    grove_status s = expect_punct(lx, '{');
    if (s != GROVE_OK) return s;
    token t;
    for (;;) {
        if ((s = next_token(lx, &t)) != GROVE_OK) return s;
        if (is_punct(&t, '}')) break;
        if (t.kind != TOK_STRING) return expected("a quoted key or '}'", &t);
        if ((s = parse_entry(lx, &t, p)) != GROVE_OK) return s;
        if ((s = next_token(lx, &t)) != GROVE_OK) return s;
        if (is_punct(&t, '}')) break;
        if (!is_punct(&t, ',')) return expected("',' or '}'", &t);
    }
    if ((s = next_token(lx, &t)) != GROVE_OK) return s;
    if (t.kind != TOK_END) return expected("only spaces after the dict", &t);
    const char *missing = !p->have_descr ? "descr" : !p->have_order ? "fortran_order" : !p->have_shape ? "shape" : NULL;
    if (missing) return grove__fail(GROVE_PARSE_ERROR, ".npy header: the key '%s' is missing", missing);
    return GROVE_OK;
}

/* ---- the whole header -------------------------------------------------- */

static void format_shape(const parsed *p, char *buf, size_t cap)
{
    size_t used = (size_t)snprintf(buf, cap, "(");
    for (size_t i = 0; i < p->ndim && used < cap; i++)
        used += (size_t)snprintf(buf + used, cap - used, "%s%zu", i ? ", " : "", p->dims[i]);
    if (used < cap) snprintf(buf + used, cap - used, p->ndim == 1 ? ",)" : ")");
}

grove_status grove__npy_parse_header(const unsigned char *buf, size_t data_offset, size_t file_size,
                                     grove__npy_header *header)
{
    /* Dict text starts after the 2- or 4-byte length field. */
    size_t start = buf[6] == 1 ? 10 : 12;
    for (size_t i = start; i < data_offset; i++)
        if ((buf[i] < 0x20 || buf[i] > 0x7e) && !is_space((char)buf[i]))
            return grove__fail(GROVE_PARSE_ERROR, ".npy header byte at offset %zu is 0x%02x, not printable ASCII", i,
                               buf[i]);
    parsed p;
    memset(&p, 0, sizeof p);
    lexer lx = {(const char *)buf, start, data_offset};
    grove_status s = parse_dict(&lx, &p);
    if (s != GROVE_OK) return s;

    char shape[MAX_DIMS * 22 + 4];
    format_shape(&p, shape, sizeof shape);
    if (p.ndim == 0 || p.ndim > 2)
        return grove__fail(GROVE_UNSUPPORTED,
                           ".npy array has %zu dimensions (shape %.200s); only 1-D and 2-D are supported", p.ndim,
                           shape);
    size_t width = grove_dtype_size(p.dtype), count, bytes = 0;
    size_t cols = p.ndim == 2 ? p.dims[1] : 1;
    bool fits = grove__mul_size(p.dims[0], cols, &count) && grove__mul_size(count, width, &bytes);
    size_t have = file_size - data_offset;
    if (!fits || bytes != have) {
        char need[40];
        if (fits)
            snprintf(need, sizeof need, "%zu bytes", bytes);
        else
            snprintf(need, sizeof need, "more bytes than memory can address");
        return grove__fail(GROVE_PARSE_ERROR,
                           ".npy header declares shape %.200s %s = %s but the file holds %zu bytes after the header",
                           shape, grove_dtype_name(p.dtype), need, have);
    }
    header->dtype = p.dtype;
    header->swap = p.swap;
    header->fortran_order = p.fortran_order && p.ndim == 2; /* order is moot for 1-D */
    header->ndim = p.ndim;
    header->shape[0] = p.dims[0];
    header->shape[1] = cols;
    header->data_bytes = bytes;
    return GROVE_OK;
}
