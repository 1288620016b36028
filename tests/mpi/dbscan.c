/* Distributed DBSCAN against the single-process one: every rank's labels
 * and core flags, and the counts, equal to those rows of grove_dbscan on
 * the whole input, for clustered data with duplicates and noise in d = 3
 * and 64, min_samples 1 and more, and even, uneven and empty parts. */
#include "mpi_test.h"

#include <stdint.h>
#include <string.h>

/* Integer points in a few clusters plus scattered noise, every seventh a
 * copy of an earlier point; the same on every rank. */
static double *make_points(size_t n, size_t d, uint64_t seed)
{
    double *x = malloc(n * d * sizeof *x);
    uint64_t s = seed * 2862933555777941757ULL + 3037000493ULL;
    for (size_t i = 0; i < n; i++) {
        int noise = i % 9 == 0;
        double centre = (double)(i % 5) * 20;
        for (size_t j = 0; j < d; j++) {
            s = s * 6364136223846793005ULL + 1442695040888963407ULL;
            double u = (double)(s >> 11) * 0x1p-53;
            x[i * d + j] = noise ? (double)(int)(u * 100) : centre + (double)(int)(u * 5);
        }
        if (i % 7 == 6) memcpy(x + i * d, x + (i / 3) * d, d * sizeof *x);
    }
    return x;
}

void mpi_case_dbscan(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    int rank, ranks;
    grove_mpi *mpi = mpi_world(&rank, &ranks);
    static const struct {
        size_t n, d, min_samples;
        double eps;
        int kind;
    } cases[] = {{3000, 3, 5, 1.5, 0}, {3000, 3, 1, 1.0, 1}, {3000, 3, 12, 2.0, 3}, {800, 64, 4, 13.0, 1}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        size_t n = cases[c].n, d = cases[c].d, f, m;
        double *x = make_points(n, d, c + 1);
        grove_dbscan_params p;
        grove_dbscan_params_init(&p);
        p.eps = cases[c].eps;
        p.min_samples = cases[c].min_samples;
        int64_t *one = malloc(n * sizeof *one), *mine = malloc(n * sizeof *mine);
        uint8_t *core1 = malloc(n), *core = malloc(n);
        grove_dbscan_counts k1, k;
        MPI_CHECK(grove_dbscan(grove_points_f64(x, n, d), NULL, &p, one, core1, &k1, NULL) == GROVE_OK);
        mpi_part(n, ranks, rank, cases[c].kind, &f, &m);
        grove_options o;
        grove_options_init(&o);
        o.mpi = mpi;
        MPI_CHECK(grove_dbscan(grove_points_f64(x + f * d, m, d), NULL, &p, mine, core, &k, &o) == GROVE_OK);
        MPI_CHECK(memcmp(mine, one + f, m * sizeof *mine) == 0);
        MPI_CHECK(memcmp(core, core1 + f, m) == 0);
        MPI_CHECK(k.clusters == k1.clusters && k.core == k1.core && k.noise == k1.noise);
        /* Something to compare: several clusters, and noise unless every point is core. */
        MPI_CHECK(k1.clusters >= 2 && k1.core > 0 && (p.min_samples == 1 || k1.noise > 0));
        free(x);
        free(one);
        free(mine);
        free(core1);
        free(core);
    }
    grove_mpi_free(mpi);
}
