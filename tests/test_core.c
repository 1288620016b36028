/* Core: status strings, errors, options, point validation, RNG, gen. */
#include "test.h"
#include "internal.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

TEST(status_strings_come_from_one_list)
{
    CHECK(strcmp(grove_status_str(GROVE_OK), "success") == 0);
    CHECK(strcmp(grove_status_str(GROVE_OUT_OF_MEMORY), "out of memory") == 0);
    CHECK(strcmp(grove_status_str((grove_status)999), "unknown status") == 0);
    CHECK(GROVE_OK == 0);
}

TEST(last_error_is_per_call_and_prefixable)
{
    grove__clear_error();
    CHECK(grove_last_error()[0] == '\0');
    CHECK(grove__fail(GROVE_PARSE_ERROR, "line %d bad", 7) == GROVE_PARSE_ERROR);
    grove__error_prefix("data.csv");
    CHECK(strcmp(grove_last_error(), "data.csv: line 7 bad") == 0);
}

TEST(version_matches_header)
{
    CHECK(strcmp(grove_version(), GROVE_VERSION_STRING) == 0);
    CHECK(strstr(grove_build_info(), "openmp: yes") != NULL);
}

TEST(options_defaults_and_threads)
{
    grove_options o;
    grove_options_init(&o);
    CHECK(o.threads == 0 && o.progress == NULL && o.memory_budget == 0 && o.cancel == NULL && o.mpi == NULL);
    CHECK(grove_options_threads(NULL) >= 1);
    o.threads = 3;
    CHECK(grove_options_threads(&o) == 3);
    volatile int flag = 0;
    o.cancel = &flag;
    CHECK(!grove__cancelled(&o));
    flag = 1;
    CHECK(grove__cancelled(&o));
}

/* The finiteness check reads exponent bits in bulk: every position of a
 * longer run, both widths, extreme finite values, and strided rows whose
 * padding (not a coordinate) may hold anything. */
TEST(points_validate_checks_every_coordinate_in_bulk)
{
    enum { N = 37 };
    double x[N], ext[4] = {DBL_MAX, -DBL_MAX, 4.9e-324, -0.0};
    float f[N];
    for (size_t bad = 0; bad < N; bad++) {
        for (size_t i = 0; i < N; i++) x[i] = (double)i - 3.5, f[i] = (float)i;
        CHECK_OK(grove_points_validate(grove_points_f64(x, N, 1)));
        x[bad] = bad % 2 ? -INFINITY : NAN;
        f[bad] = bad % 2 ? NAN : INFINITY;
        CHECK(grove_points_validate(grove_points_f64(x, N, 1)) == GROVE_INVALID_ARGUMENT);
        CHECK(grove_points_validate(grove_points_f32(f, N, 1)) == GROVE_INVALID_ARGUMENT);
    }
    CHECK_OK(grove_points_validate(grove_points_f64(ext, 4, 1)));
    double rows[3][3] = {{1, 2, NAN}, {3, 4, INFINITY}, {5, 6, NAN}}; /* column 2 is padding */
    grove_points p = grove_points_f64(&rows[0][0], 3, 2);
    p.stride = 3 * sizeof(double);
    CHECK_OK(grove_points_validate(p));
    rows[2][1] = -INFINITY;
    CHECK_FAILS(grove_points_validate(p), GROVE_INVALID_ARGUMENT, "row 2, column 1 is infinite");
}

/* Working memory in huge pages (opt-in: `make check` runs the ball tree
 * tests and this one again with GROVE_HUGE_PAGES=1): usable, freed by
 * grove__free, 2 MiB-aligned when on (Linux), and failures still inject. */
TEST(alloc_huge_working_memory)
{
    size_t size = ((size_t)3 << 20) + 123;
    unsigned char *p = grove__malloc_huge(size, "test block");
    REQUIRE(p != NULL);
    memset(p, 0xab, size);
    CHECK(p[0] == 0xab && p[size - 1] == 0xab);
#if defined(__linux__)
    const char *e = getenv("GROVE_HUGE_PAGES");
    if (e && strcmp(e, "1") == 0) CHECK((uintptr_t)p % ((uintptr_t)2 << 20) == 0);
#endif
    grove__free(p);
    grove__alloc_fail_after(1);
    CHECK(grove__malloc_huge(size, "test block") == NULL);
    CHECK(strstr(grove_last_error(), "test block") != NULL);
    grove__alloc_fail_after(0);
}

TEST(points_validate_names_the_bad_coordinate)
{
    double good[6] = {0, 1, 2, 3, 4, 5};
    CHECK_OK(grove_points_validate(grove_points_f64(good, 3, 2)));
    CHECK_OK(grove_points_validate(grove_points_f64(NULL, 0, 0)));
    double bad[6] = {0, 1, 2, NAN, 4, 5};
    CHECK_FAILS(grove_points_validate(grove_points_f64(bad, 3, 2)), GROVE_INVALID_ARGUMENT, "row 1, column 1 is NaN");
    float badf[4] = {0, INFINITY, 2, 3};
    CHECK_FAILS(grove_points_validate(grove_points_f32(badf, 2, 2)), GROVE_INVALID_ARGUMENT, "row 0, column 1 is infinite");
    CHECK_FAILS(grove_points_validate(grove_points_f64(good, 3, 0)), GROVE_INVALID_ARGUMENT, "d must be at least 1");
    grove_points p = grove_points_f64(good, 3, 2);
    p.stride = 8;
    CHECK_FAILS(grove_points_validate(p), GROVE_INVALID_ARGUMENT, "stride");
    p.stride = 0;
    p.dtype = GROVE_INT64;
    CHECK_FAILS(grove_points_validate(p), GROVE_INVALID_ARGUMENT, "float32 or float64");
    /* A strided view skips the padding column. */
    double padded[6] = {0, 1, NAN, 2, 3, NAN};
    grove_points s = grove_points_f64(padded, 2, 2);
    s.stride = 3 * sizeof(double);
    CHECK_OK(grove_points_validate(s));
}

TEST(rng_known_sequence)
{
    /* Values from an independent Python transcription of the published
     * splitmix64 and xoshiro256** reference code: the stream is pinned, so
     * any platform or compiler that changed a bit would fail here. */
    grove_rng r;
    grove_rng_seed(&r, 0);
    CHECK(r.s[0] == 0xe220a8397b1dcdafull);
    CHECK(grove_rng_u64(&r) == 0x99ec5f36cb75f2b4ull);
    CHECK(grove_rng_u64(&r) == 0xbf6e1f784956452aull);
    CHECK(grove_rng_uniform(&r) == (double)(0x1a5f849d4933e6e0ull >> 11) * 0x1.0p-53);
    grove_rng_seed(&r, 42);
    CHECK(grove_rng_u64(&r) == 0x15780b2e0c2ec716ull);
}

TEST(rng_uniform_below_and_moments)
{
    grove_rng r;
    grove_rng_seed(&r, 42);
    double sum = 0, sum2 = 0, esum = 0, nsum = 0, nsum2 = 0;
    long counts[7] = {0};
    const int n = 200000;
    for (int i = 0; i < n; i++) {
        double u = grove_rng_uniform(&r);
        CHECK(u >= 0.0 && u < 1.0);
        sum += u;
        sum2 += u * u;
        uint64_t k = grove_rng_below(&r, 7);
        REQUIRE(k < 7);
        counts[k]++;
        esum += grove_rng_exponential(&r);
        double z = grove_rng_normal(&r);
        nsum += z;
        nsum2 += z * z;
    }
    CHECK(fabs(sum / n - 0.5) < 0.005);
    CHECK(fabs(sum2 / n - 1.0 / 3.0) < 0.005);
    for (int k = 0; k < 7; k++) CHECK(fabs(counts[k] / (double)n - 1.0 / 7.0) < 0.005);
    CHECK(fabs(esum / n - 1.0) < 0.01);
    CHECK(fabs(nsum / n) < 0.01);
    CHECK(fabs(nsum2 / n - 1.0) < 0.01);
}

TEST(portable_log_matches_libm)
{
    grove_rng r;
    grove_rng_seed(&r, 7);
    for (int i = 0; i < 100000; i++) {
        double x = exp(80.0 * grove_rng_uniform(&r) - 40.0);
        double want = log(x), got = grove__log(x);
        CHECK_MSG(fabs(got - want) <= 4 * 2.220446049250313e-16 * fabs(want), "log(%.17g): %.17g vs %.17g", x, got, want);
    }
    CHECK(grove__log(1.0) == 0.0);
    CHECK(fabs(grove__log(4.9406564584124654e-324) - log(4.9406564584124654e-324)) < 1e-12);
    CHECK(isinf(grove__log(0.0)) && grove__log(0.0) < 0);
}

TEST(gen_is_deterministic_and_thread_independent)
{
    grove_gen_params p;
    grove_gen_params_init(&p);
    p.n = 10000;
    p.d = 3;
    p.seed = 5;
    grove_gen_kind kinds[] = {GROVE_GEN_UNIFORM, GROVE_GEN_NORMAL, GROVE_GEN_EXPONENTIAL, GROVE_GEN_BLOBS};
    double *a = malloc(sizeof(double) * 30000), *b = malloc(sizeof(double) * 30000);
    for (int k = 0; k < 4; k++) {
        p.kind = kinds[k];
        grove_options o1, o2;
        grove_options_init(&o1);
        grove_options_init(&o2);
        o1.threads = 1;
        o2.threads = 2;
        CHECK_OK(grove_gen(&p, a, &o1));
        CHECK_OK(grove_gen(&p, b, &o2));
        CHECK(memcmp(a, b, sizeof(double) * 30000) == 0);
        if (p.kind == GROVE_GEN_UNIFORM)
            for (int i = 0; i < 30000; i++) CHECK(a[i] >= 0 && a[i] < 1);
        if (p.kind == GROVE_GEN_EXPONENTIAL)
            for (int i = 0; i < 30000; i++) CHECK(a[i] >= 0);
    }
    p.kind = GROVE_GEN_EXPONENTIAL;
    p.rate = -1;
    CHECK_FAILS(grove_gen(&p, a, NULL), GROVE_INVALID_ARGUMENT, "rate");
    p.kind = GROVE_GEN_BLOBS;
    p.centers = 0;
    CHECK_FAILS(grove_gen(&p, a, NULL), GROVE_INVALID_ARGUMENT, "centers");
    p.centers = 3;
    p.n = SIZE_MAX / 2;
    CHECK_FAILS(grove_gen(&p, a, NULL), GROVE_TOO_LARGE, "too large");
    free(a);
    free(b);
}

TEST(alloc_failure_injection)
{
    grove__alloc_fail_after(2);
    void *a = grove__malloc(16, "first");
    void *b = grove__malloc(16, "second thing");
    CHECK(a != NULL);
    CHECK(b == NULL);
    CHECK(strstr(grove_last_error(), "second thing") != NULL);
    void *c = grove__malloc(16, "third");
    CHECK(c != NULL);
    grove__free(a);
    grove__free(c);
}

/* CRC-32C by its definition, one bit at a time. */
static uint32_t crc32c_bitwise(const unsigned char *p, size_t len)
{
    uint32_t crc = 0xFFFFFFFFu;
    for (size_t i = 0; i < len; i++) {
        crc ^= p[i];
        for (int k = 0; k < 8; k++) crc = crc & 1 ? (crc >> 1) ^ 0x82F63B78u : crc >> 1;
    }
    return ~crc;
}

/* The published check value, and the bitwise definition on random bytes
 * at every length and alignment around the eight-byte steps, also when
 * the buffer is hashed in two pieces. */
TEST(crc32c_check_value_and_definition)
{
    CHECK(grove__crc32c(0, "123456789", 9) == 0xE3069283u);
    CHECK(grove__crc32c(0, "", 0) == 0);
    unsigned char zeros[32] = {0};
    CHECK(grove__crc32c(0, zeros, 32) == 0x8A9136AAu); /* RFC 3720, B.4: 32 bytes of zeros */
    enum { N = 300 };
    unsigned char buf[N + 8];
    grove_rng rng;
    grove_rng_seed(&rng, 11);
    for (size_t i = 0; i < sizeof buf; i++) buf[i] = (unsigned char)grove_rng_below(&rng, 256);
    for (size_t off = 0; off < 8; off++)
        for (size_t len = 0; len <= N; len += len < 40 ? 1 : 37) {
            uint32_t want = crc32c_bitwise(buf + off, len);
            CHECK_MSG(grove__crc32c(0, buf + off, len) == want, "offset %zu, length %zu", off, len);
            size_t cut = len / 3;
            CHECK(grove__crc32c(grove__crc32c(0, buf + off, cut), buf + off + cut, len - cut) == want);
        }
}
