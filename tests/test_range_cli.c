/* The command line on coordinates near 1e300, 1e-300 and 1e-316: grove emst,
 * hdbscan, join and knn (with --verify) succeed with the answers of the
 * same points scaled back to ordinary size, and a distance no double holds
 * is refused in one line. */
#include "test.h"

#include <math.h>
#include <stdbool.h>
#include <unistd.h>

/* Integers in [-8, 8] (exact squared distances), n x 3. */
static double *lattice(size_t n, uint64_t seed)
{
    grove_rng rng;
    grove_rng_seed(&rng, seed);
    double *x = malloc(n * 3 * sizeof *x);
    for (size_t i = 0; i < n * 3; i++) x[i] = (double)grove_rng_below(&rng, 17) - 8;
    return x;
}

/* Writes tmpdir/name; its path into path (test_path's buffers rotate). */
static void write_points(const char *name, const double *x, size_t n, char *path, size_t cap)
{
    grove_array a = {(void *)(uintptr_t)x, GROVE_FLOAT64, 2, {n, 3}};
    snprintf(path, cap, "%s", test_path(name));
    CHECK_OK(grove_npy_write(path, &a));
}

TEST(cli_range_emst_hdbscan_join_knn_near_1e300_and_1e_300)
{
    const size_t n = 400, m = n - 1;
    double *x = lattice(n, 77), *y = malloc(n * 3 * sizeof *y);
    /* The answers on x (brute force: the pairs; the library: the rest,
     * tested against brute force on ordinary data elsewhere). */
    int64_t pairs = 0, *edges = malloc(2 * m * sizeof *edges), *labels = malloc(n * sizeof *labels);
    double *weights = malloc(m * sizeof *weights);
    for (size_t a = 0; a < n; a++)
        for (size_t b = 0; b < n; b++) {
            double s = 0;
            for (size_t j = 0; j < 3; j++) s += (x[a * 3 + j] - x[b * 3 + j]) * (x[a * 3 + j] - x[b * 3 + j]);
            pairs += s <= 2.5 * 2.5;
        }
    REQUIRE_OK(grove_emst(grove_points_f64(x, n, 3), NULL, edges, weights, NULL));
    grove_hdbscan_params hp;
    grove_hdbscan_params_init(&hp);
    hp.min_cluster_size = 10;
    REQUIRE_OK(grove_hdbscan(grove_points_f64(x, n, 3), &hp, labels, NULL, NULL, NULL, NULL));
    static const int scales[] = {997, -1000, -1062}; /* 2^-1062 x: subnormals, below 2^-1042 (about 2e-314) */
    for (int si = 0; si < 3; si++) {
        int k = scales[si];
        for (size_t i = 0; i < n * 3; i++) y[i] = ldexp(x[i], k);
        char data[512], args[4096], *out = NULL;
        write_points("range.npy", y, n, data, sizeof data);
        snprintf(args, sizeof args, "emst %s --edges %s --weights %s", data, test_path("re.npy"), test_path("rw.npy"));
        CHECK_MSG(test_grove(args, &out) == 0, "2^%d: %s", k, out);
        free(out);
        grove_array e = {0}, w = {0}, l = {0};
        if (grove_npy_read(test_path("re.npy"), &e) == GROVE_OK && grove_npy_read(test_path("rw.npy"), &w) == GROVE_OK) {
            size_t bad = 0;
            for (size_t i = 0; i < m; i++)
                bad += ((int64_t *)e.data)[2 * i] != edges[2 * i] || ((int64_t *)e.data)[2 * i + 1] != edges[2 * i + 1] ||
                       ((double *)w.data)[i] != ldexp(weights[i], k);
            CHECK_MSG(bad == 0, "2^%d: %zu of %zu EMST edges differ", k, bad, m);
        } else {
            CHECK_MSG(false, "2^%d: no EMST output", k);
        }
        grove_array_free(&e);
        grove_array_free(&w);
        snprintf(args, sizeof args, "hdbscan %s --min-cluster-size 10 --labels %s", data, test_path("rl.npy"));
        CHECK_MSG(test_grove(args, &out) == 0, "2^%d: %s", k, out);
        free(out);
        if (grove_npy_read(test_path("rl.npy"), &l) == GROVE_OK)
            CHECK_MSG(memcmp(l.data, labels, n * sizeof *labels) == 0, "2^%d: HDBSCAN labels differ", k);
        else
            CHECK_MSG(false, "2^%d: no HDBSCAN labels", k);
        grove_array_free(&l);
        snprintf(args, sizeof args, "join %s --eps %.17g --count-only --offsets %s --json --verify 20", data,
                 ldexp(2.5, k), test_path("ro.npy"));
        CHECK_MSG(test_grove(args, &out) == 0, "2^%d: %s", k, out);
        char want[64];
        snprintf(want, sizeof want, "\"pairs\": %lld", (long long)pairs);
        CHECK_MSG(strstr(out, want) != NULL, "2^%d: join: want %s, got %s", k, want, out);
        free(out);
        snprintf(args, sizeof args, "join %s --eps %.17g --offsets %s --indices %s --distances %s --verify 20", data,
                 ldexp(2.5, k), test_path("ro.npy"), test_path("ri.npy"), test_path("rd.npy"));
        CHECK_MSG(test_grove(args, &out) == 0, "2^%d: %s", k, out);
        free(out);
        snprintf(args, sizeof args, "knn %s -k 4 --indices %s --distances %s --verify 20", data, test_path("rk.npy"),
                 test_path("rkd.npy"));
        CHECK_MSG(test_grove(args, &out) == 0, "2^%d: %s", k, out);
        free(out);
    }
    /* Two points 3e308 apart: the EMST's one edge is no double. */
    double wide[] = {-1.5e308, 0, 0, 1.5e308, 0, 0};
    char data[512], args[4096], *out = NULL;
    write_points("wide.npy", wide, 2, data, sizeof data);
    snprintf(args, sizeof args, "emst %s --edges %s --weights %s", data, test_path("we.npy"), test_path("ww.npy"));
    CHECK(test_grove(args, &out) == 1);
    CHECK_MSG(strstr(out, "longer than the largest double") && strchr(out, '\n') == out + strlen(out) - 1,
              "output: %s", out);
    free(out);
    CHECK(access(test_path("we.npy"), F_OK) != 0 && access(test_path("ww.npy"), F_OK) != 0);
    free(x);
    free(y);
    free(edges);
    free(labels);
    free(weights);
}
