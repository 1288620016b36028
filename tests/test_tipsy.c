/* Tipsy snapshots: round trips in both byte orders, gas/dark/star records,
 * the 28-byte header variant, and hostile files refused cleanly. */
#include "test.h"

#include <float.h>
#include <math.h>
#include <stdint.h>

static void put32(unsigned char *p, uint32_t v, int big)
{
    for (int k = 0; k < 4; k++) p[big ? 3 - k : k] = (unsigned char)(v >> (8 * k));
}

static void putf(unsigned char *p, float f, int big)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    put32(p, u, big);
}

/* A tipsy file built by hand: header (32 or 28 bytes), then nsph gas,
 * ndark dark and nstar star records whose float k of particle i is
 * i + k / 16 (mass k = 0 is i + 1). Returns the length. */
static size_t build(unsigned char *buf, int big, int pad, int nsph, int ndark, int nstar)
{
    double t = 1.5;
    uint64_t tb;
    memcpy(&tb, &t, 8);
    for (int k = 0; k < 8; k++) buf[big ? 7 - k : k] = (unsigned char)(tb >> (8 * k));
    uint32_t head[5] = {(uint32_t)(nsph + ndark + nstar), 3, (uint32_t)nsph, (uint32_t)ndark, (uint32_t)nstar};
    for (int k = 0; k < 5; k++) put32(buf + 8 + 4 * k, head[k], big);
    size_t at = 28;
    if (pad) put32(buf + 28, 0, big), at = 32;
    int counts[3] = {nsph, ndark, nstar}, floats[3] = {12, 9, 11}, i = 0;
    for (int kind = 0; kind < 3; kind++)
        for (int r = 0; r < counts[kind]; r++, i++)
            for (int k = 0; k < floats[kind]; k++, at += 4) putf(buf + at, k == 0 ? (float)(i + 1) : (float)i + (float)k / 16, big);
    return at;
}

TEST(tipsy_reads_both_byte_orders_and_all_kinds)
{
    unsigned char buf[2048];
    for (int big = 0; big < 2; big++)
        for (int pad = 0; pad < 2; pad++) {
            size_t len = build(buf, big, pad, 2, 3, 4);
            grove_snapshot s;
            REQUIRE_OK(grove_tipsy_read_mem(buf, len, "mem", &s));
            CHECK(s.n == 9 && s.time == 1.5);
            for (size_t i = 0; i < 9; i++) {
                CHECK(s.mass[i] == (double)(i + 1));
                for (int a = 0; a < 3; a++) {
                    CHECK(s.pos[3 * i + a] == (double)((float)i + (float)(1 + a) / 16));
                    CHECK(s.vel[3 * i + a] == (double)((float)i + (float)(4 + a) / 16));
                }
            }
            grove_snapshot_free(&s);
        }
}

TEST(tipsy_round_trip)
{
    size_t n = 1000;
    double *x = malloc(7 * n * sizeof *x);
    grove_ic_params ic;
    grove_ic_params_init(&ic);
    ic.n = n;
    REQUIRE_OK(grove_ic_generate(&ic, x, x + 3 * n, x + 6 * n));
    for (int big = 0; big < 2; big++) {
        const char *path = test_path(big ? "be.tipsy" : "le.tipsy");
        REQUIRE_OK(grove_tipsy_write(path, n, 2.25, x, x + 3 * n, x + 6 * n, NULL, 0.01, big));
        grove_snapshot s;
        REQUIRE_OK(grove_tipsy_read(path, &s));
        CHECK(s.n == n && s.time == 2.25);
        for (size_t i = 0; i < 3 * n; i++)
            CHECK(s.pos[i] == (double)(float)x[i] && s.vel[i] == (double)(float)x[3 * n + i]);
        for (size_t i = 0; i < n; i++) CHECK(s.mass[i] == (double)(float)x[6 * n + i]);
        grove_snapshot_free(&s);
    }
    /* Big-endian output really is big-endian: ndim = 3 at byte 15. */
    FILE *f = fopen(test_path("be.tipsy"), "rb");
    unsigned char head[32];
    REQUIRE(f && fread(head, 1, 32, f) == 32);
    fclose(f);
    CHECK(head[12] == 0 && head[15] == 3);
    /* n = 0 round trips too. */
    REQUIRE_OK(grove_tipsy_write(test_path("empty.tipsy"), 0, 0, NULL, NULL, NULL, NULL, 0, 0));
    grove_snapshot s;
    CHECK_OK(grove_tipsy_read(test_path("empty.tipsy"), &s));
    CHECK(s.n == 0);
    grove_snapshot_free(&s);
    free(x);
}

TEST(tipsy_rejects_hostile_files)
{
    unsigned char buf[2048], bad[2048];
    size_t len = build(buf, 1, 1, 1, 2, 1);
    grove_snapshot s;
    CHECK_FAILS(grove_tipsy_read_mem(buf, 20, "short", &s), GROVE_PARSE_ERROR, "short: not a tipsy file");
    /* (len - 4 would be a valid file with a 28-byte header.) */
    CHECK_FAILS(grove_tipsy_read_mem(buf, len - 8, "trunc", &s), GROVE_PARSE_ERROR, "file size");
    CHECK_FAILS(grove_tipsy_read_mem(buf, len + 4, "long", &s), GROVE_PARSE_ERROR, "file size");
    /* Counts that overflow 32-bit sums or do not add up. */
    memcpy(bad, buf, len);
    put32(bad + 8, 0x7fffffff, 1);
    put32(bad + 20, 0x7fffffff - 2, 1);
    CHECK_FAILS(grove_tipsy_read_mem(bad, len, "huge", &s), GROVE_PARSE_ERROR, "not a tipsy file");
    memcpy(bad, buf, len);
    put32(bad + 16, 0xffffffff, 1); /* nsph = -1 */
    CHECK_FAILS(grove_tipsy_read_mem(bad, len, "neg", &s), GROVE_PARSE_ERROR, "not a tipsy file");
    memcpy(bad, buf, len);
    put32(bad + 12, 2, 1); /* ndim 2 */
    CHECK_FAILS(grove_tipsy_read_mem(bad, len, "ndim", &s), GROVE_PARSE_ERROR, "ndim 3");
    memcpy(bad, buf, len);
    putf(bad + 32 + 48 + 4, NAN, 1); /* first dark particle's x */
    CHECK_FAILS(grove_tipsy_read_mem(bad, len, "nan", &s), GROVE_PARSE_ERROR, "dark particle 0: field 1");
    memcpy(bad, buf, len);
    putf(bad + 32, -1, 1); /* gas mass */
    CHECK_FAILS(grove_tipsy_read_mem(bad, len, "mass", &s), GROVE_PARSE_ERROR, "negative mass");
    memcpy(bad, buf, len);
    memset(bad, 0xff, 8); /* time NaN */
    CHECK_FAILS(grove_tipsy_read_mem(bad, len, "time", &s), GROVE_PARSE_ERROR, "time is not finite");
    CHECK_FAILS(grove_tipsy_read(test_tmpdir(), &s), GROVE_IO_ERROR, "directory");
    CHECK(s.pos == NULL && s.n == 0);
}

TEST(tipsy_write_refuses_values_float32_cannot_hold)
{
    /* Three particles of ordinary values; each case spoils one value of
     * row 1 (or the softening, or the time) and must be refused naming it,
     * with no file written. */
    double pos[9] = {0, 1, 2, 3, 4, 5, 6, 7, 8}, vel[9] = {0}, mass[3] = {1, 1, 1}, phi[3] = {-1, -2, -3};
    const char *path = test_path("refused.tipsy");
    struct {
        double *at, value;
        const char *want;
    } cases[] = {
        {&pos[3], 1e60, "position x of row 1, 1e+60, is beyond float32's range"},
        {&pos[5], -4e38, "position z of row 1, -4e+38, is beyond float32's range"},
        {&pos[4], NAN, "position y of row 1, nan, is NaN"},
        {&vel[4], INFINITY, "velocity y of row 1, inf, is infinite"},
        {&vel[3], 1e300, "velocity x of row 1, 1e+300, is beyond"},
        {&mass[1], 5e-63, "mass of row 1, 5e-63, is nonzero but rounds to 0 in float32"},
        {&mass[1], 7e-46, "mass of row 1, 7e-46, is nonzero but rounds to 0"},
        {&phi[1], -1e39, "potential of row 1, -1e+39, is beyond"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        double keep = *cases[k].at;
        *cases[k].at = cases[k].value;
        CHECK_FAILS(grove_tipsy_write(path, 3, 1, pos, vel, mass, phi, 0.01, 1), GROVE_INVALID_ARGUMENT,
                    cases[k].want);
        CHECK(strstr(grove_last_error(), "refused.tipsy") && strstr(grove_last_error(), ".npy"));
        *cases[k].at = keep;
    }
    CHECK_FAILS(grove_tipsy_write(path, 3, NAN, pos, vel, mass, phi, 0.01, 1), GROVE_INVALID_ARGUMENT,
                "the time, nan, is not finite");
    CHECK_FAILS(grove_tipsy_write(path, 3, 1, pos, vel, mass, phi, 1e39, 1), GROVE_INVALID_ARGUMENT,
                "the softening, 1e+39, is beyond");
    FILE *f = fopen(path, "rb");
    CHECK(f == NULL);
    if (f) fclose(f);
    /* What float32 holds is written: its largest value, a subnormal (kept
     * as float32 rounds it), a time float32 could not hold (the header
     * keeps a double), and -0. */
    pos[3] = FLT_MAX;
    pos[4] = 1e-40;
    vel[4] = -0.0;
    REQUIRE_OK(grove_tipsy_write(path, 3, 1e300, pos, vel, mass, phi, 0.01, 1));
    grove_snapshot s;
    REQUIRE_OK(grove_tipsy_read(path, &s));
    CHECK(s.time == 1e300 && s.pos[3] == FLT_MAX && s.pos[4] == (double)(float)1e-40 && s.pos[4] > 0);
    grove_snapshot_free(&s);
}
