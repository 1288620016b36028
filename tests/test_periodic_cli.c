/* grove join --box and grove knn --box on real files: outputs against a
 * brute-force minimum-image reference and the library, bad box values as
 * usage errors (exit 2), points outside the box as failures naming the
 * row (exit 1) that leave no output behind. */
#include "test.h"

#include <math.h>
#include <stdbool.h>
#include <unistd.h>

static const double BOX[3] = {1, 2, 0}; /* the third dimension unbounded */

/* n points inside BOX (the unbounded dimension over [0, 1)), as .npy. */
static double *write_box_cloud(const char *name, size_t n, uint64_t seed)
{
    double *x = test_points(TEST_UNIFORM, n, 3, seed);
    for (size_t i = 0; i < n * 3; i++) {
        double len = BOX[i % 3] > 0 ? BOX[i % 3] : 1, v = fmod(fabs(x[i]), 1) * len;
        x[i] = v < len ? v : 0;
    }
    grove_array a = {x, GROVE_FLOAT64, 2, {n, 3}};
    CHECK_OK(grove_npy_write(test_path(name), &a));
    return x;
}

static double box_dist(const double *a, const double *b)
{
    double s = 0;
    for (size_t j = 0; j < 3; j++) {
        double t = fabs(a[j] - b[j]);
        if (BOX[j] > 0 && t > BOX[j] / 2) t = BOX[j] - t;
        s += t * t;
    }
    return sqrt(s);
}

TEST(cli_periodic_join_and_knn_match_brute_force)
{
    const size_t n = 1500, k = 6;
    const double eps = 0.12;
    double *x = write_box_cloud("pdata.npy", n, 31);
    char args[2048], *out = NULL;
    snprintf(args, sizeof args, "join %s --eps %.17g --box 1,2,0 --offsets %s --indices %s --distances %s --json "
             "--verify 40", test_path("pdata.npy"), eps, test_path("po.npy"), test_path("pi.npy"), test_path("pd.npy"));
    CHECK(test_grove(args, &out) == 0);
    CHECK_MSG(strstr(out, "\"periodic\": true"), "output: %s", out);
    free(out);
    grove_array o = {0}, i = {0}, d = {0};
    CHECK_OK(grove_npy_read(test_path("po.npy"), &o));
    CHECK_OK(grove_npy_read(test_path("pi.npy"), &i));
    CHECK_OK(grove_npy_read(test_path("pd.npy"), &d));
    const int64_t *off = o.data, *idx = i.data;
    const double *dist = d.data;
    size_t wrong = 0, wrapped = 0;
    for (size_t q = 0; off && idx && dist && q < n; q++) {
        int64_t e = off[q];
        for (size_t p = 0; p < n; p++) {
            double r = box_dist(x + 3 * q, x + 3 * p);
            if (r > eps) continue;
            /* The library sums in its own order: equal to rounding. */
            if (e >= off[q + 1] || idx[e] != (int64_t)p || fabs(dist[e] - r) > 1e-12) wrong++;
            wrapped += fabs(x[3 * q] - x[3 * p]) > 0.5 || fabs(x[3 * q + 1] - x[3 * p + 1]) > 1;
            e++;
        }
        wrong += e != off[q + 1];
    }
    CHECK_MSG(wrong == 0 && o.shape[0] == n + 1, "%zu pairs differ from brute force", wrong);
    CHECK_MSG(wrapped > 100, "only %zu pairs cross the box's faces", wrapped);
    grove_array_free(&o);
    grove_array_free(&i);
    grove_array_free(&d);
    /* One length for every dimension is the same as three equal ones. */
    snprintf(args, sizeof args, "join %s --eps %.17g --box 2 --count-only --json", test_path("pdata.npy"), eps);
    char *one = NULL;
    CHECK(test_grove(args, &one) == 0);
    snprintf(args, sizeof args, "join %s --eps %.17g --box 2,2,2 --count-only --json", test_path("pdata.npy"), eps);
    CHECK(test_grove(args, &out) == 0);
    const char *a = one ? strstr(one, "\"pairs\": ") : NULL, *b = out ? strstr(out, "\"pairs\": ") : NULL;
    CHECK(a && b && atoll(a + 9) == atoll(b + 9) && atoll(a + 9) > (long long)n);
    free(one);
    free(out);
    /* kNN: ranks by (distance, row) against brute force. */
    snprintf(args, sizeof args, "knn %s -k %zu --box 1,2,0 --indices %s --distances %s --verify 30",
             test_path("pdata.npy"), k, test_path("pk.npy"), test_path("pkd.npy"));
    CHECK(test_grove(args, &out) == 0);
    CHECK_MSG(out && strstr(out, "verified 30"), "output: %s", out);
    free(out);
    CHECK_OK(grove_npy_read(test_path("pk.npy"), &i));
    CHECK_OK(grove_npy_read(test_path("pkd.npy"), &d));
    idx = i.data;
    dist = d.data;
    wrong = 0;
    for (size_t q = 0; idx && dist && q < n; q++)
        for (size_t r = 0; r < k; r++) {
            double mine = box_dist(x + 3 * q, x + 3 * idx[q * k + r]);
            size_t closer = 0;
            for (size_t p = 0; p < n; p++) closer += box_dist(x + 3 * q, x + 3 * p) < mine - 1e-12;
            wrong += closer > r || fabs(dist[q * k + r] - mine) > 1e-12 ||
                     (r > 0 && dist[q * k + r] < dist[q * k + r - 1]);
        }
    CHECK_MSG(wrong == 0, "%zu kNN entries differ from brute force", wrong);
    grove_array_free(&i);
    grove_array_free(&d);
    free(x);
}

TEST(cli_periodic_box_errors)
{
    double *x = write_box_cloud("pbad.npy", 50, 41);
    static const char *const bad[] = {"-1", "1,-2,3", "x", "1,,2", "1,2,", "inf", "nan", "1,2"};
    static const char *const said[] = {"\"-1\"", "\"-2\"", "\"x\"", "length 2", "length 3", "\"inf\"", "\"nan\"",
                                       "2 lengths but the points have 3 dimensions"};
    char args[2048], *out = NULL;
    for (size_t b = 0; b < sizeof bad / sizeof *bad; b++)
        for (int cmd = 0; cmd < 2; cmd++) {
            if (cmd == 0)
                snprintf(args, sizeof args, "join %s --eps 0.1 --box '%s' --offsets %s --indices %s",
                         test_path("pbad.npy"), bad[b], test_path("bo.npy"), test_path("bi.npy"));
            else
                snprintf(args, sizeof args, "knn %s -k 2 --box '%s' --indices %s", test_path("pbad.npy"), bad[b],
                         test_path("bi.npy"));
            int rc = test_grove(args, &out);
            CHECK_MSG(rc == 2 && out && strstr(out, said[b]) && strstr(out, "--box"), "--box %s: exit %d: %s",
                      bad[b], rc, out);
            free(out);
        }
    /* A point outside the box: exit 1, the row named, nothing written. */
    x[3 * 7 + 1] = 2.5;
    grove_array a = {x, GROVE_FLOAT64, 2, {50, 3}};
    CHECK_OK(grove_npy_write(test_path("pbad.npy"), &a));
    snprintf(args, sizeof args, "join %s --eps 0.1 --box 1,2,0 --offsets %s --indices %s", test_path("pbad.npy"),
             test_path("bo.npy"), test_path("bi.npy"));
    int rc = test_grove(args, &out);
    CHECK_MSG(rc == 1 && out && strstr(out, "row 7, dimension 1: coordinate 2.5 is outside the periodic box [0, 2)"),
              "exit %d: %s", rc, out);
    free(out);
    snprintf(args, sizeof args, "knn %s -k 2 --box 1,2,0 --indices %s", test_path("pbad.npy"), test_path("bi.npy"));
    rc = test_grove(args, &out);
    CHECK_MSG(rc == 1 && out && strstr(out, "row 7, dimension 1"), "exit %d: %s", rc, out);
    free(out);
    /* Queries outside: their file is named. */
    double *ok = write_box_cloud("pdata.npy", 20, 42);
    snprintf(args, sizeof args, "knn %s -k 2 --box 1,2,0 --queries %s --indices %s", test_path("pdata.npy"),
             test_path("pbad.npy"), test_path("bi.npy"));
    rc = test_grove(args, &out);
    CHECK_MSG(rc == 1 && out && strstr(out, "pbad.npy: queries: row 7, dimension 1"), "exit %d: %s", rc, out);
    free(out);
    snprintf(args, sizeof args, "join %s --eps 0.1 --box 1,2,0 --queries %s --offsets %s --indices %s",
             test_path("pdata.npy"), test_path("pbad.npy"), test_path("bo.npy"), test_path("bi.npy"));
    rc = test_grove(args, &out);
    CHECK_MSG(rc == 1 && out && strstr(out, "pbad.npy: queries: row 7, dimension 1"), "exit %d: %s", rc, out);
    free(out);
    CHECK(access(test_path("bo.npy"), F_OK) != 0 && access(test_path("bi.npy"), F_OK) != 0);
    free(ok);
    free(x);
}
