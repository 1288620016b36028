/* The epsilon join on a device (src/device/join.c) against the CPU join
 * and brute force: counts, CSR lists and distances byte for byte, through
 * every public join call, with the device's batches and candidate chunks
 * forced small. Runs on any OpenCL device (PoCL on a CPU-only machine),
 * or on CUDA with GROVE_TEST_DEVICE=cuda; skipped, saying why, where
 * there is none. */
#include "test.h"

#include "join_ref.h"

#include <math.h>
#include <unistd.h>

static bool same_result(const grove_join_result *a, const grove_join_result *b)
{
    return a->nq == b->nq && a->pairs == b->pairs &&
           memcmp(a->offsets, b->offsets, (a->nq + 1) * sizeof *a->offsets) == 0 &&
           (a->pairs == 0 || (memcmp(a->indices, b->indices, (size_t)a->pairs * sizeof *a->indices) == 0 &&
                              memcmp(a->distances, b->distances, (size_t)a->pairs * sizeof *a->distances) == 0));
}

/* Streamed batches appended into one CSR, to compare with the one-shot. */
typedef struct concat {
    int64_t *offsets, *indices;
    double *distances;
    size_t nq, batches;
} concat;

static int on_batch(void *user, const grove_join_batch *b)
{
    concat *c = user;
    size_t nb = b->query_end - b->query_begin;
    if (nb == 0) return 0;
    for (size_t i = 0; i < nb; i++) c->offsets[b->query_begin + i + 1] = b->pairs_before + b->offsets[i + 1];
    memcpy(c->indices + b->pairs_before, b->indices, (size_t)b->offsets[nb] * sizeof *b->indices);
    memcpy(c->distances + b->pairs_before, b->distances, (size_t)b->offsets[nb] * sizeof *b->distances);
    c->batches++;
    return 0;
}

/* The device's join of ds (queries qs, or a self-join when qs == ds)
 * against the CPU's, call by call: search, count, fill under a budget
 * of a few queries' pairs (several device batches and candidate chunks),
 * stream under that budget; and the counts against brute force when
 * there is no box. */
static void check_device_join(const ref_set *ds, const ref_set *qs, double eps, bool exclude,
                              const grove_index_params *ip, const char *what)
{
    grove_points qv = join_ref_view(qs);
    const grove_points *q = qs == ds ? NULL : &qv;
    grove_options cpu;
    grove_join_params jp;
    grove_index *ix = join_ref_index(ds, ip, eps, exclude, what, &cpu, &jp);
    if (!ix) return;
    jp.distances = 1;
    grove_join_result want, got;
    grove_status st = grove_join_search(ix, q, &jp, &want, &cpu);
    CHECK_MSG(st == GROVE_OK, "%s: cpu: %s", what, grove_last_error());
    grove_options dev = test_device_options(0);
    if (st == GROVE_OK) {
        st = grove_join_search(ix, q, &jp, &got, &dev);
        CHECK_MSG(st == GROVE_OK, "%s: device search: %s", what, grove_last_error());
    }
    if (st != GROVE_OK) {
        grove_index_free(ix);
        return;
    }
    CHECK_MSG(same_result(&want, &got), "%s: device search differs from the cpu (%lld vs %lld pairs)", what,
              (long long)got.pairs, (long long)want.pairs);
    size_t nq = want.nq, m = (size_t)want.pairs;
    int64_t *counts = malloc((nq + 1) * sizeof *counts), pairs = -1;
    CHECK_OK(grove_join_count(ix, q, &jp, counts, &pairs, &dev));
    bool counts_ok = pairs == want.pairs;
    for (size_t i = 0; i < nq; i++) counts_ok &= counts[i] == want.offsets[i + 1] - want.offsets[i];
    CHECK_MSG(counts_ok, "%s: device counts differ from the cpu", what);
    for (size_t i = 0; !ip->boxsize && i < nq; i++) {
        int64_t brute = 0;
        for (size_t p = 0; p < ds->n; p++)
            brute += !(exclude && p == i) && join_ref_dist2(qs, i, ds, p) <= (ds->f32 ? (double)(float)(eps * eps)
                                                                                      : eps * eps);
        if (brute != counts[i]) {
            CHECK_MSG(false, "%s: query %zu: device count %lld, brute force %lld", what, i, (long long)counts[i],
                      (long long)brute);
            break;
        }
    }
    /* A budget of a few queries' pairs: several device batches. */
    int64_t largest = 0;
    for (size_t i = 0; i < nq; i++) largest = counts[i] > largest ? counts[i] : largest;
    grove_options small = test_device_options(nq * 8 + 16 + (size_t)(largest * 3 + 3) * 16);
    int64_t *idx = malloc((m + 1) * sizeof *idx);
    double *dist = malloc((m + 1) * sizeof *dist);
    CHECK_OK(grove_join_fill(ix, q, &jp, want.offsets, idx, dist, &small));
    CHECK_MSG(memcmp(idx, want.indices, m * sizeof *idx) == 0 && memcmp(dist, want.distances, m * sizeof *dist) == 0,
              "%s: device fill in small batches differs from the cpu", what);
    concat c = {calloc(nq + 1, sizeof(int64_t)), idx, dist, nq, 0};
    memset(idx, 0, m * sizeof *idx);
    CHECK_OK(grove_join_stream(ix, q, &jp, on_batch, &c, &small));
    CHECK_MSG(memcmp(c.offsets, want.offsets, (nq + 1) * sizeof *c.offsets) == 0 &&
                  memcmp(idx, want.indices, m * sizeof *idx) == 0,
              "%s: device stream differs from the cpu", what);
    free(c.offsets);
    free(idx);
    free(dist);
    free(counts);
    grove_join_result_free(&want);
    grove_join_result_free(&got);
    grove_index_free(ix);
}

/* Radii that give none, some and all of the pairs for data spread over
 * about `scale` per axis; on the lattice and duplicate kinds, exactly on
 * a squared distance (their squared distances are multiples of 1/64). */
static double radius(size_t r, size_t d, double scale, int kind)
{
    static const double frac[] = {0, 0.05, 0.3, 3};
    double eps = frac[r] * scale * sqrt((double)d);
    return kind >= TEST_LATTICE ? sqrt(floor(eps * eps * 64) / 64) : eps;
}

TEST(device_join_self_matches_cpu)
{
    if (!test_device_ready()) return;
    static const size_t dims[] = {1, 3, 16, 20, 784};
    grove_index_params ip;
    grove_index_params_init(&ip);
    uint64_t seed = 11;
    for (size_t di = 0; di < sizeof dims / sizeof *dims; di++)
        for (int kind = 0; kind < TEST_KINDS; kind++) {
            size_t d = dims[di], n = d > 100 ? 90 : 300;
            if (d > 100 && kind >= TEST_LATTICE) continue;
            double scale = kind == TEST_UNIFORM ? 1 : kind == TEST_CLUSTERED ? 5 : kind == TEST_LATTICE ? 4 : 12;
            bool f32 = (kind + di) % 2 == 1;
            ref_set *s = join_ref_make((test_kind)kind, n, d, f32, seed++);
            join_ref_take_order(s, NULL);
            for (size_t r = 0; r < 4; r++) {
                char what[160];
                double eps = radius(r, d, scale, kind);
                snprintf(what, sizeof what, "self %s d=%zu %s eps=%g", test_kind_name[kind], d, f32 ? "f32" : "f64",
                         eps);
                check_device_join(s, s, eps, r % 2 == 1, &ip, what);
            }
            join_ref_free(s);
        }
}

TEST(device_join_semi_matches_cpu)
{
    if (!test_device_ready()) return;
    static const size_t dims[] = {2, 18}, nqs[] = {0, 1, 200};
    grove_index_params ip;
    grove_index_params_init(&ip);
    uint64_t seed = 70;
    for (size_t di = 0; di < 2; di++)
        for (size_t qi = 0; qi < 3; qi++) {
            size_t d = dims[di];
            bool f32 = qi == 1;
            ref_set *ds = join_ref_make(TEST_CLUSTERED, 250, d, f32, seed++);
            ref_set *qs = join_ref_make(TEST_CLUSTERED, nqs[qi], d, f32, seed++);
            join_ref_take_order(ds, qs);
            for (size_t r = 1; r < 4; r++) {
                char what[160];
                snprintf(what, sizeof what, "semi d=%zu nq=%zu", d, nqs[qi]);
                check_device_join(ds, qs, radius(r, d, 5, TEST_CLUSTERED), false, &ip, what);
            }
            join_ref_free(ds);
            join_ref_free(qs);
        }
}

TEST(device_join_periodic_matches_cpu)
{
    if (!test_device_ready()) return;
    /* Uniform points in [0, 1): a box of 1 in every dimension, and one
     * with every other dimension unbounded. */
    static const size_t dims[] = {3, 20};
    uint64_t seed = 90;
    for (size_t di = 0; di < 2; di++)
        for (int partial = 0; partial < 2; partial++) {
            size_t d = dims[di];
            double box[20];
            for (size_t j = 0; j < d; j++) box[j] = partial && j % 2 ? 0 : 1;
            grove_index_params ip;
            grove_index_params_init(&ip);
            ip.boxsize = box;
            ip.boxsize_count = d;
            ref_set *s = join_ref_make(TEST_UNIFORM, 300, d, partial, seed++);
            for (size_t r = 1; r < 4; r++) {
                char what[160];
                snprintf(what, sizeof what, "periodic d=%zu %s", d, partial ? "partial f32" : "full f64");
                check_device_join(s, s, radius(r, d, 1, TEST_UNIFORM) * (r == 3 ? 0.1 : 1), r == 2, &ip, what);
            }
            join_ref_free(s);
        }
}

/* Uniform points in the unit cube beside a clump of 12 points on a
 * lattice of spacing `unit` near the origin (two of them duplicates), so
 * squared distances inside the clump underflow the dtype. */
static ref_set *tiny_clump_set(bool f32, double unit)
{
    enum { N = 60, CLUMP = 12, D = 3 };
    ref_set *s = join_ref_make(TEST_UNIFORM, N + CLUMP, D, false, 41);
    double *x = (double *)(uintptr_t)s->data;
    for (size_t k = 0; k < CLUMP; k++) {
        size_t c = k < CLUMP - 1 ? k : 0;
        x[(N + k) * D] = (double)(c % 4) * unit;
        x[(N + k) * D + 1] = (double)(c / 4) * unit;
        x[(N + k) * D + 2] = 0;
    }
    if (f32) {
        float *f = malloc((N + CLUMP) * D * sizeof *f);
        for (size_t i = 0; i < (N + CLUMP) * D; i++) f[i] = (float)x[i];
        free(x);
        s->data = f;
        s->f32 = true;
    }
    join_ref_take_order(s, NULL);
    return s;
}

/* Pairs far closer than the data's scale (their squared sums underflow):
 * at an ordinary eps their distances are the CPU's exact ones (mended on
 * the host), in self- and semi-joins; at an eps of their own size the
 * pairs are decided by exact keys as on the CPU; both dtypes, every call. */
TEST(device_join_tiny_separations_match_cpu)
{
    if (!test_device_ready()) return;
    grove_index_params ip;
    grove_index_params_init(&ip);
    for (int f32 = 0; f32 < 2; f32++) {
        double unit = f32 ? 1e-21 : 1e-160;
        ref_set *s = tiny_clump_set(f32, unit);
        char what[64];
        snprintf(what, sizeof what, "clump %s at eps 0.3", f32 ? "f32" : "f64");
        check_device_join(s, s, 0.3, false, &ip, what);
        snprintf(what, sizeof what, "clump %s at eps 1.2 units", f32 ? "f32" : "f64");
        check_device_join(s, s, 1.2 * unit, true, &ip, what);
        ref_set *q = tiny_clump_set(f32, unit);
        snprintf(what, sizeof what, "clump %s semi at eps 0.3", f32 ? "f32" : "f64");
        check_device_join(s, q, 0.3, false, &ip, what);
        join_ref_free(q);
        join_ref_free(s);
    }
}

TEST(device_join_long_slices)
{
    if (!test_device_ready()) return;
    /* Every query has more neighbours than the device sorts in local
     * memory: the host sorts those slices. */
    ref_set *s = join_ref_make(TEST_UNIFORM, 1500, 2, false, 5);
    join_ref_take_order(s, NULL);
    grove_index_params ip;
    grove_index_params_init(&ip);
    check_device_join(s, s, 0.7, false, &ip, "long slices");
    join_ref_free(s);
}

TEST(device_join_refusals)
{
    if (!test_device_ready()) return;
    ref_set *s = join_ref_make(TEST_UNIFORM, 200, 3, false, 8);
    grove_index *ix = NULL;
    REQUIRE_OK(grove_index_create(join_ref_view(s), NULL, NULL, &ix));
    grove_join_params jp;
    grove_join_params_init(&jp);
    jp.eps = 0.2;
    grove_options dev = test_device_options(0);
    /* Offsets that disagree with the counts: refused naming the query, as
     * on the CPU. */
    int64_t *offsets = calloc(201, sizeof *offsets), idx[4];
    offsets[200] = 4;
    for (size_t q = 3; q < 200; q++) offsets[q] = 4;
    offsets[1] = 1, offsets[2] = 2;
    CHECK_FAILS(grove_join_fill(ix, NULL, &jp, offsets, idx, NULL, &dev), GROVE_INVALID_ARGUMENT, "join fill: offsets");
    /* Invalid parameters are found before any device is opened. */
    jp.eps = -1;
    CHECK_FAILS(grove_join_search(ix, NULL, &jp, &(grove_join_result){0}, &dev), GROVE_INVALID_ARGUMENT, "eps");
    jp.eps = 0.2;
    dev.device = (grove_device)7;
    int64_t counts[200];
    CHECK_FAILS(grove_join_count(ix, NULL, &jp, counts, NULL, &dev), GROVE_INVALID_ARGUMENT, "device 7");
    char why[512];
    dev.device = GROVE_DEVICE_CUDA;
    if (!grove_device_info(GROVE_DEVICE_CUDA, why, sizeof why))
        CHECK_FAILS(grove_join_count(ix, NULL, &jp, counts, NULL, &dev), GROVE_UNSUPPORTED, why);
    /* Auto on a small problem is the CPU, whatever is present. */
    dev.device = GROVE_DEVICE_AUTO;
    int64_t want[200];
    grove_options cpu;
    grove_options_init(&cpu);
    CHECK_OK(grove_join_count(ix, NULL, &jp, want, NULL, &cpu));
    CHECK_OK(grove_join_count(ix, NULL, &jp, counts, NULL, &dev));
    CHECK(memcmp(want, counts, sizeof want) == 0);
    free(offsets);
    grove_index_free(ix);
    join_ref_free(s);
}

TEST(device_info_says_what_or_why_not)
{
    char text[512];
    CHECK(grove_device_info(GROVE_DEVICE_CPU, text, sizeof text) == 1 && strcmp(text, "the CPU") == 0);
    CHECK(grove_device_info((grove_device)9, text, sizeof text) == 0 && strstr(text, "unknown device 9"));
    static const grove_device kinds[] = {GROVE_DEVICE_CUDA, GROVE_DEVICE_OPENCL};
    for (size_t k = 0; k < 2; k++) {
        int ok = grove_device_info(kinds[k], text, sizeof text);
        /* One line: what the device is, or why it cannot run. */
        CHECK_MSG(text[0] && !strchr(text, '\n'), "device %d: '%s'", (int)kinds[k], text);
        CHECK_MSG(ok || strncmp(text, "not built: ", 11) == 0 || strncmp(text, "no driver: ", 11) == 0 ||
                      strncmp(text, "no device: ", 11) == 0 || strncmp(text, "failed: ", 8) == 0,
                  "device %d: '%s'", (int)kinds[k], text);
    }
    /* A short buffer is cut, never overrun. */
    char tiny[4] = "xyz";
    grove_device_info(GROVE_DEVICE_CUDA, tiny, 3);
    CHECK(strlen(tiny) < 3);
    CHECK(grove_device_info(GROVE_DEVICE_CPU, NULL, 0) == 1);
}

TEST(device_cli_join_and_info)
{
    char *out = NULL;
    CHECK(test_grove("info", &out) == 0 && strstr(out, "\ncuda: ") && strstr(out, "\nopencl: "));
    free(out);
    if (!test_device_ready()) return;
    const char *data = test_path("device_cli.npy");
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "gen blobs --n 3000 --dims 3 --seed 4 -o %s", data);
    REQUIRE(test_grove(cmd, NULL) == 0);
    const char *dev[] = {"cpu", test_device_name()};
    for (int k = 0; k < 2; k++) {
        snprintf(cmd, sizeof cmd, "join %s --eps 0.05 --offsets %s --indices %s --distances %s --device %s --quiet",
                 data, test_path(k ? "o_dev.npy" : "o_cpu.npy"), test_path(k ? "i_dev.npy" : "i_cpu.npy"),
                 test_path(k ? "d_dev.npy" : "d_cpu.npy"), dev[k]);
        CHECK_MSG(test_grove(cmd, &out) == 0, "%s", out);
        free(out);
    }
    CHECK(test_same_file(test_path("o_cpu.npy"), test_path("o_dev.npy")));
    CHECK(test_same_file(test_path("i_cpu.npy"), test_path("i_dev.npy")));
    CHECK(test_same_file(test_path("d_cpu.npy"), test_path("d_dev.npy")));
    /* A device that cannot run: one line saying why, exit 1, no output. */
    char why[512];
    if (!grove_device_info(GROVE_DEVICE_CUDA, why, sizeof why)) {
        snprintf(cmd, sizeof cmd, "join %s --eps 0.05 --offsets %s --indices %s --device cuda", data,
                 test_path("o_cuda.npy"), test_path("i_cuda.npy"));
        int rc = test_grove(cmd, &out);
        CHECK_MSG(rc == 1 && strstr(out, "--device cuda cannot run here: ") && strstr(out, why) &&
                      strchr(out, '\n') == out + strlen(out) - 1,
                  "rc %d: %s", rc, out);
        free(out);
        CHECK(access(test_path("o_cuda.npy"), F_OK) != 0);
    }
    snprintf(cmd, sizeof cmd, "join %s --eps 0.05 --count-only --device gpu", data);
    CHECK(test_grove(cmd, &out) == 2 && strstr(out, "--device: expected cpu, cuda, opencl or auto, got 'gpu'"));
    free(out);
}

/* Every kernel path on tiny inputs, for make check-oclgrind (oclgrind
 * simulates each work-item, looking for data races, out-of-bounds and
 * uninitialised reads): both types, periodic, a semi-join, excluded
 * pairs, small device batches, and more query groups than one scan block
 * (leaf size 1), so the prefix sum scans its block totals too. */
TEST(device_join_tiny)
{
    if (!test_device_ready()) return;
    grove_index_params ip;
    grove_index_params_init(&ip);
    ref_set *s = join_ref_make(TEST_CLUSTERED, 60, 3, false, 21);
    ref_set *q = join_ref_make(TEST_CLUSTERED, 40, 3, false, 22);
    join_ref_take_order(s, q);
    check_device_join(s, s, 0.5, true, &ip, "tiny self f64");
    check_device_join(s, q, 0.5, false, &ip, "tiny semi f64");
    join_ref_free(s);
    join_ref_free(q);
    s = join_ref_make(TEST_UNIFORM, 50, 20, true, 23);
    join_ref_take_order(s, NULL);
    check_device_join(s, s, 1.0, false, &ip, "tiny self f32 d=20");
    join_ref_free(s);
    double box = 1;
    ip.boxsize = &box;
    ip.boxsize_count = 1;
    s = join_ref_make(TEST_UNIFORM, 50, 2, true, 24);
    check_device_join(s, s, 0.3, false, &ip, "tiny periodic f32");
    join_ref_free(s);
    grove_index_params_init(&ip);
    ip.leaf_size = 1;
    s = join_ref_make(TEST_UNIFORM, 1100, 1, false, 25);
    join_ref_take_order(s, NULL);
    check_device_join(s, s, 0.0005, false, &ip, "tiny two scan blocks");
    join_ref_free(s);
}

/* grove_dbscan has no device entry (its neighbour count is the join's on
 * one process): asked for a device, the CPU's core points and labels. */
TEST(device_option_leaves_dbscan_on_the_cpu)
{
    if (!test_device_ready()) return;
    ref_set *s = join_ref_make(TEST_CLUSTERED, 800, 3, false, 31);
    grove_dbscan_params dp;
    grove_dbscan_params_init(&dp);
    dp.eps = 0.02;
    dp.min_samples = 5;
    int64_t labels[2][800];
    uint8_t core[2][800];
    grove_dbscan_counts counts[2];
    grove_options cpu;
    grove_options_init(&cpu);
    grove_options dev = test_device_options(0);
    CHECK_OK(grove_dbscan(join_ref_view(s), NULL, &dp, labels[0], core[0], &counts[0], &cpu));
    CHECK_OK(grove_dbscan(join_ref_view(s), NULL, &dp, labels[1], core[1], &counts[1], &dev));
    CHECK(memcmp(labels[0], labels[1], sizeof labels[0]) == 0 && memcmp(core[0], core[1], sizeof core[0]) == 0);
    CHECK(counts[0].clusters > 1 && counts[0].clusters == counts[1].clusters && counts[0].core == counts[1].core &&
          counts[0].core < 800);
    join_ref_free(s);
}

/* A call without a device entry (the pair counts) runs on the CPU
 * whatever device the options ask for, available here or not: the CPU's
 * counts, no refusal. */
TEST(device_option_leaves_paircount_on_the_cpu)
{
    ref_set *s = join_ref_make(TEST_CLUSTERED, 500, 3, false, 51);
    static const double edges[] = {0, 0.005, 0.01, 0.02, 0.04};
    grove_paircount_params pp;
    grove_paircount_params_init(&pp);
    pp.edges = edges;
    pp.nedges = sizeof edges / sizeof *edges;
    int64_t want[4], got[4];
    REQUIRE_OK(grove_paircount(join_ref_view(s), NULL, &pp, want, NULL, NULL));
    CHECK(want[0] > 0 && want[1] > 0 && want[2] > 0 && want[3] > 0);
    static const grove_device devices[] = {GROVE_DEVICE_CUDA, GROVE_DEVICE_OPENCL, GROVE_DEVICE_AUTO};
    for (size_t k = 0; k < sizeof devices / sizeof *devices; k++) {
        grove_options o;
        grove_options_init(&o);
        o.device = devices[k];
        memset(got, 0xff, sizeof got);
        CHECK_OK(grove_paircount(join_ref_view(s), NULL, &pp, got, NULL, &o));
        CHECK_MSG(memcmp(got, want, sizeof got) == 0, "device %d: counts differ from the cpu's", (int)devices[k]);
    }
    join_ref_free(s);
}
