/* Gadget-2 binary snapshots (format 1 and 2): files built here byte by
 * byte from the format's definition read back exactly in both byte
 * orders, float32 and float64, 32- and 64-bit ids, masses from MassTable
 * and from the MASS block, chosen types, a snapshot in two files; hostile
 * files are refused with a message naming the block. */
#include "test.h"

#include <math.h>
#include <stdint.h>

/* A Gadget-2 file's description; particle i of the file (types in order)
 * has position i + k/8 + 1/2, velocity -(i + k/4), id first_id + i and,
 * where MassTable is 0, mass 1/2 + i. */
typedef struct g2_spec {
    int format;        /* 1 or 2 */
    int big;           /* big-endian */
    int dbl;           /* float64 vectors and masses */
    int long_ids;      /* 64-bit ids */
    int npart[6];      /* this file's counts */
    double mass[6];    /* MassTable */
    uint32_t total[6]; /* npartTotal (0: npart) */
    int num_files;
    uint64_t first_id;
    int short_vel;     /* the VEL block one particle short */
} g2_spec;

typedef struct g2_buf {
    unsigned char *p;
    size_t len;
    int big;
} g2_buf;

static void put(g2_buf *b, const void *v, size_t width)
{
    const unsigned char *src = v;
    for (size_t k = 0; k < width; k++) b->p[b->len + k] = src[b->big ? width - 1 - k : k];
    b->len += width;
}
static void put_u32(g2_buf *b, uint32_t v) { put(b, &v, 4); }
static void put_f64(g2_buf *b, double v) { put(b, &v, 8); }
static void put_real(g2_buf *b, double v, int dbl)
{
    float f = (float)v;
    if (dbl) put(b, &v, 8);
    else put(b, &f, 4);
}

/* A record: (format 2: the name record first), the start marker; the
 * caller writes the data, then g2_end puts the end marker. */
static size_t g2_begin(g2_buf *b, const g2_spec *g, const char *name, uint32_t len)
{
    if (g->format == 2) {
        put_u32(b, 8);
        memcpy(b->p + b->len, name, 4);
        b->len += 4;
        put_u32(b, len + 8);
        put_u32(b, 8);
    }
    put_u32(b, len);
    return b->len;
}
static void g2_end(g2_buf *b, size_t start) { put_u32(b, (uint32_t)(b->len - start)); }

static size_t g2_build(unsigned char *out, const g2_spec *g)
{
    g2_buf b = {out, 0, g->big};
    int n = 0, nm = 0;
    for (int t = 0; t < 6; t++) {
        n += g->npart[t];
        if (g->mass[t] == 0) nm += g->npart[t];
    }
    size_t at = g2_begin(&b, g, "HEAD", 256);
    for (int t = 0; t < 6; t++) put_u32(&b, (uint32_t)g->npart[t]);
    for (int t = 0; t < 6; t++) put_f64(&b, g->mass[t]);
    put_f64(&b, 0.25); /* time */
    put_f64(&b, 3.0);  /* redshift */
    put_u32(&b, 0), put_u32(&b, 0);
    for (int t = 0; t < 6; t++) put_u32(&b, g->total[t] ? g->total[t] : (uint32_t)g->npart[t]);
    put_u32(&b, 0);
    put_u32(&b, (uint32_t)g->num_files);
    put_f64(&b, 100.0), put_f64(&b, 0.3), put_f64(&b, 0.7), put_f64(&b, 0.7);
    while (b.len - at < 256) b.p[b.len++] = 0;
    g2_end(&b, at);
    int w = g->dbl ? 8 : 4;
    at = g2_begin(&b, g, "POS ", (uint32_t)(3 * n * w));
    for (int i = 0; i < n; i++)
        for (int k = 0; k < 3; k++) put_real(&b, i + k / 8.0 + 0.5, g->dbl);
    g2_end(&b, at);
    at = g2_begin(&b, g, "VEL ", (uint32_t)(3 * (n - g->short_vel) * w));
    for (int i = 0; i < n - g->short_vel; i++)
        for (int k = 0; k < 3; k++) put_real(&b, -(i + k / 4.0), g->dbl);
    g2_end(&b, at);
    at = g2_begin(&b, g, "ID  ", (uint32_t)(n * (g->long_ids ? 8 : 4)));
    for (int i = 0; i < n; i++) {
        uint64_t id = g->first_id + (uint64_t)i;
        if (g->long_ids) put(&b, &id, 8);
        else put_u32(&b, (uint32_t)id);
    }
    g2_end(&b, at);
    if (nm) {
        at = g2_begin(&b, g, "MASS", (uint32_t)(nm * w));
        int i = 0;
        for (int t = 0; t < 6; t++)
            for (int r = 0; r < g->npart[t]; r++, i++)
                if (g->mass[t] == 0) put_real(&b, 0.5 + i, g->dbl);
        g2_end(&b, at);
    }
    return b.len;
}

static g2_spec g2_default(void)
{
    g2_spec g;
    memset(&g, 0, sizeof g);
    g.format = 1;
    g.npart[0] = 2, g.npart[1] = 3, g.npart[4] = 2;
    g.mass[1] = 0.125; /* type 1 from MassTable, types 0 and 4 from MASS */
    g.num_files = 1;
    g.first_id = 1000;
    return g;
}

/* The snapshot's particle r of type t is file particle `row` (its spec's
 * numbering): check every field. */
static void check_particle(const grove_gadget *s, size_t r, int row, const g2_spec *g, int t)
{
    for (int k = 0; k < 3; k++) {
        double p = s->dtype == GROVE_FLOAT64 ? ((double *)s->pos)[3 * r + k] : ((float *)s->pos)[3 * r + k];
        double v = s->dtype == GROVE_FLOAT64 ? ((double *)s->vel)[3 * r + k] : ((float *)s->vel)[3 * r + k];
        CHECK_MSG(p == row + k / 8.0 + 0.5 && v == -(row + k / 4.0), "particle %zu axis %d: %g %g", r, k, p, v);
    }
    CHECK(s->ids[r] == g->first_id + (uint64_t)row);
    int mrow = 0; /* its row in the MASS block */
    for (int u = 0, i = 0; u < 6; u++)
        for (int q = 0; q < g->npart[u]; q++, i++)
            if (i < row && g->mass[u] == 0) mrow++;
    double want = g->mass[t] != 0 ? g->mass[t] : g->dbl ? 0.5 + row : (double)(float)(0.5 + row);
    CHECK_MSG(s->mass[r] == want, "particle %zu mass %g, want %g (mass row %d)", r, s->mass[r], want, mrow);
}

static void check_all(const grove_gadget *s, const g2_spec *g)
{
    int n = 0, row = 0;
    for (int t = 0; t < 6; t++) n += g->npart[t];
    REQUIRE(s->n == (size_t)n);
    CHECK(s->dtype == (g->dbl ? GROVE_FLOAT64 : GROVE_FLOAT32));
    CHECK(s->header.time == 0.25 && s->header.redshift == 3.0 && s->header.box[2] == 100.0);
    CHECK(s->header.omega0 == 0.3 && s->header.omega_lambda == 0.7 && s->header.hubble == 0.7);
    CHECK(s->header.format == (g->format == 1 ? GROVE_GADGET_BINARY1 : GROVE_GADGET_BINARY2));
    for (int t = 0; t < 6; t++)
        for (int q = 0; q < g->npart[t]; q++, row++) check_particle(s, (size_t)row, row, g, t);
}

TEST(gadget2_reads_both_formats_orders_and_widths)
{
    static unsigned char buf[8192];
    for (int format = 1; format <= 2; format++)
        for (int big = 0; big < 2; big++)
            for (int dbl = 0; dbl < 2; dbl++)
                for (int long_ids = 0; long_ids < 2; long_ids++) {
                    g2_spec g = g2_default();
                    g.format = format, g.big = big, g.dbl = dbl, g.long_ids = long_ids;
                    size_t len = g2_build(buf, &g);
                    grove_gadget s;
                    REQUIRE_OK(grove_gadget_read_mem(buf, len, "mem", NULL, &s));
                    check_all(&s, &g);
                    grove_gadget_free(&s);
                }
}

TEST(gadget2_reads_chosen_types_fields_and_dtype)
{
    static unsigned char buf[8192];
    g2_spec g = g2_default();
    size_t len = g2_build(buf, &g);
    grove_gadget_params p;
    grove_gadget_params_init(&p);
    p.types = 1u << 4 | 1u << 1; /* types 1 and 4: rows 2..4 and 5..6 of the file */
    p.fields = GROVE_GADGET_POS | GROVE_GADGET_MASS;
    p.dtype = GROVE_FLOAT64;
    grove_gadget s;
    REQUIRE_OK(grove_gadget_read_mem(buf, len, "mem", &p, &s));
    REQUIRE(s.n == 5 && s.count[0] == 0 && s.count[1] == 3 && s.count[4] == 2);
    CHECK(s.vel == NULL && s.ids == NULL && s.dtype == GROVE_FLOAT64);
    for (size_t r = 0; r < 5; r++) {
        int row = (int)r + 2;
        for (int k = 0; k < 3; k++) CHECK(((double *)s.pos)[3 * r + k] == row + k / 8.0 + 0.5);
        CHECK(s.mass[r] == (r < 3 ? 0.125 : (double)(float)(0.5 + row)));
    }
    grove_gadget_free(&s);
    /* float64 stored, float32 asked: rounded once. */
    g.dbl = 1;
    len = g2_build(buf, &g);
    p.types = 0;
    p.dtype = GROVE_FLOAT32;
    REQUIRE_OK(grove_gadget_read_mem(buf, len, "mem", &p, &s));
    REQUIRE(s.n == 7 && s.dtype == GROVE_FLOAT32);
    for (size_t i = 0; i < 21; i++) CHECK(((float *)s.pos)[i] == (float)(i / 3 + (i % 3) / 8.0 + 0.5));
    grove_gadget_free(&s);
}

TEST(gadget2_reads_a_snapshot_in_several_files)
{
    static unsigned char buf[8192];
    g2_spec a = g2_default(), b = g2_default();
    a.num_files = b.num_files = 2;
    b.npart[0] = 1, b.npart[1] = 4, b.npart[4] = 0;
    b.first_id = 2000;
    for (int t = 0; t < 6; t++) a.total[t] = b.total[t] = (uint32_t)(a.npart[t] + b.npart[t]);
    test_write_file("snapshot_005.0", buf, g2_build(buf, &a));
    test_write_file("snapshot_005.1", buf, g2_build(buf, &b));
    grove_gadget_params p;
    grove_gadget_params_init(&p);
    p.fields = GROVE_GADGET_IDS;
    /* By either piece's name, or by the snapshot's base name. */
    const char *names[] = {"snapshot_005.1", "snapshot_005.0", "snapshot_005"};
    for (int k = 0; k < 3; k++) {
        grove_gadget s;
        REQUIRE_OK(grove_gadget_read(test_path(names[k]), &p, &s));
        /* Type by type, file by file: type 0 of both files, then type 1, ... */
        uint64_t want[] = {1000, 1001, 2000, 1002, 1003, 1004, 2001, 2002, 2003, 2004, 1005, 1006};
        REQUIRE(s.n == 12 && s.header.files == 2 && s.count[1] == 7);
        for (size_t i = 0; i < 12; i++) CHECK_MSG(s.ids[i] == want[i], "%s: id %zu is %llu", names[k], i, (unsigned long long)s.ids[i]);
        grove_gadget_free(&s);
    }
    /* The files' counts must add up to the header's totals. */
    b.npart[1] = 3;
    test_write_file("snapshot_005.1", buf, g2_build(buf, &b));
    grove_gadget s;
    CHECK_FAILS(grove_gadget_read(test_path("snapshot_005.0"), &p, &s), GROVE_PARSE_ERROR, "type 1");
    /* A missing piece is named. */
    remove(test_path("snapshot_005.1"));
    CHECK_FAILS(grove_gadget_read(test_path("snapshot_005.0"), &p, &s), GROVE_IO_ERROR, "snapshot_005.1");
}

TEST(gadget2_probe_tells_the_formats)
{
    static unsigned char buf[8192];
    g2_spec g = g2_default();
    grove_gadget_format f;
    for (int format = 1; format <= 2; format++)
        for (int big = 0; big < 2; big++) {
            g.format = format, g.big = big;
            const char *path = test_write_file("probe_snap", buf, g2_build(buf, &g));
            REQUIRE_OK(grove_gadget_probe(path, &f));
            CHECK(f == (format == 1 ? GROVE_GADGET_BINARY1 : GROVE_GADGET_BINARY2));
        }
    const char *other = test_write_file("probe_other.bin", "\1\2\3\4\5\6\7\10", 8);
    REQUIRE_OK(grove_gadget_probe(other, &f));
    CHECK(f == GROVE_GADGET_NONE);
    /* Another file that starts with the number 256 (a tipsy time, raw
     * data) is not taken for one: the header record's end marker must
     * follow 256 bytes later. */
    unsigned char like[300];
    for (size_t i = 0; i < sizeof like; i++) like[i] = (unsigned char)(i * 7 + 3);
    uint32_t mark = 256;
    memcpy(like, &mark, 4);
    REQUIRE_OK(grove_gadget_probe(test_write_file("probe_like", like, sizeof like), &f));
    CHECK(f == GROVE_GADGET_NONE);
}

/* A hostile variant of the default file is refused naming what is wrong. */
static void refuse(const unsigned char *buf, size_t len, const char *text)
{
    grove_gadget s;
    grove_status st = grove_gadget_read_mem(buf, len, "bad.g2", NULL, &s);
    CHECK_MSG(st == GROVE_PARSE_ERROR && strstr(grove_last_error(), text) && strstr(grove_last_error(), "bad.g2"),
              "wanted a parse error with '%s', got %s: %s", text, grove_status_str(st), grove_last_error());
    CHECK(s.pos == NULL && s.n == 0);
}

TEST(gadget2_refuses_hostile_files)
{
    static unsigned char buf[8192], bad[8192];
    for (int format = 1; format <= 2; format++) {
        g2_spec g = g2_default();
        g.format = format;
        size_t len = g2_build(buf, &g), head = format == 2 ? 16 : 0;
        /* Truncated anywhere after the header: a record runs past the end,
         * or (cut between records) a block is missing. */
        for (size_t cut = head + 265; cut < len; cut += 7) {
            grove_gadget s;
            grove_status st = grove_gadget_read_mem(buf, cut, "bad.g2", NULL, &s);
            CHECK_MSG(st == GROVE_PARSE_ERROR && (strstr(grove_last_error(), "past the end") ||
                                                  strstr(grove_last_error(), "no ")),
                      "cut at %zu: %s", cut, grove_last_error());
        }
        /* An end marker that disagrees with its start. */
        memcpy(bad, buf, len);
        bad[head + 4 + 256] ^= 1;
        refuse(bad, len, "end marker");
        /* A negative count, a count beyond the blocks, totals that disagree. */
        memcpy(bad, buf, len);
        int32_t minus = -1;
        memcpy(bad + head + 4 + 8, &minus, 4); /* npart[2] */
        if (!g.big) refuse(bad, len, "npart[2] is -1, negative");
        g2_spec h = g;
        h.total[1] = 9;
        refuse(buf, g2_build(buf, &h), "type 1");
        size_t ok = g2_build(buf, &g);
        memcpy(bad, buf, ok);
        uint32_t more = 9; /* npart[0] 2 -> 9: POS no longer holds 3 n floats */
        memcpy(bad + head + 4, &more, 4);
        memcpy(bad + head + 4 + 96, &more, 4);
        refuse(bad, ok, "block POS holds");
        /* No MASS block for types that need it. */
        h = g;
        h.mass[0] = h.mass[4] = 0.5; /* the file has no MASS block */
        size_t nomass = g2_build(buf, &h);
        memcpy(bad, buf, nomass);
        double zero = 0;
        memcpy(bad + head + 4 + 24, &zero, 8); /* mass[0] back to 0 */
        refuse(bad, nomass, "MASS");
    }
    /* A block grove knows but was not asked for must agree too. */
    g2_spec sv = g2_default();
    sv.short_vel = 1;
    size_t svlen = g2_build(buf, &sv);
    grove_gadget_params only_pos;
    grove_gadget_params_init(&only_pos);
    only_pos.fields = GROVE_GADGET_POS;
    grove_gadget out;
    CHECK_FAILS(grove_gadget_read_mem(buf, svlen, "bad.g2", &only_pos, &out), GROVE_PARSE_ERROR, "block VEL holds");
    /* A non-finite coordinate is named with its block and row. */
    g2_spec g = g2_default();
    size_t len = g2_build(buf, &g);
    float nan = NAN;
    memcpy(buf + 4 + 256 + 4 + 4 + 3 * 4 * 3 + 4, &nan, 4); /* particle 3 (type 1, its row 1), y */
    refuse(buf, len, "block POS (type 1): row 1, column 1");
    unsigned char tiny[3] = {1, 2, 3};
    refuse(tiny, 3, "not a Gadget-2 file");
}

/* The readers read a field a piece at a time (GROVE__GADGET_CHUNK rows):
 * a file longer than a piece reads whole, and a bad value in a later
 * piece is named by its row in the block. */
TEST(gadget2_reads_across_pieces)
{
    g2_spec g = g2_default();
    g.npart[0] = 0, g.npart[4] = 0, g.npart[1] = 300000;
    g.mass[1] = 0; /* masses from the MASS block, every row */
    size_t cap = 64 * 300000 + 4096;
    unsigned char *buf = malloc(cap);
    REQUIRE(buf);
    size_t len = g2_build(buf, &g);
    grove_gadget s;
    REQUIRE_OK(grove_gadget_read_mem(buf, len, "mem", NULL, &s));
    REQUIRE(s.n == 300000);
    for (size_t r = 0; r < 300000; r += 4999) check_particle(&s, r, (int)r, &g, 1);
    check_particle(&s, 299999, 299999, &g, 1);
    grove_gadget_free(&s);
    size_t row = 270001, pos = 4 + 256 + 4 + 4 + (3 * row + 2) * 4;
    float inf = INFINITY;
    memcpy(buf + pos, &inf, 4);
    CHECK_FAILS(grove_gadget_read_mem(buf, len, "mem", NULL, &s), GROVE_PARSE_ERROR,
                "block POS (type 1): row 270001, column 2 is inf");
    free(buf);
}
