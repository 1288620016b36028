/* Distributed DBSCAN against the single-process one: every rank's labels
 * and core flags, and the counts, equal to those rows of grove_dbscan on
 * the whole input, for clustered data with duplicates and noise in d = 3
 * and 64, min_samples 1 and more, eps from a few points to most of the
 * slabs' width, even, uneven and empty parts, without and with sample
 * weights (zeros and negatives, tenths, large ones that cancel, sums within
 * rounding of min_samples; weights of one give the unweighted labels), and
 * a ghost glued to its cluster only through another slab. */
#include "mpi_test.h"

#include <stdint.h>
#include <string.h>

static uint64_t next(uint64_t *s)
{
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return *s >> 11;
}

/* Integer points in a few clusters plus scattered noise, every seventh a
 * copy of an earlier point; the same on every rank. Dense: most points in
 * the first cluster, so that the slabs' cuts fall inside it, a few units
 * apart, and eps reaches past several slabs. */
static double *make_points(size_t n, size_t d, int dense, uint64_t seed)
{
    double *x = malloc(n * d * sizeof *x);
    uint64_t s = seed * 2862933555777941757ULL + 3037000493ULL;
    for (size_t i = 0; i < n; i++) {
        int noise = i % 9 == 0;
        double centre = dense && i % 5 < 4 ? 0 : (double)(i % 5) * 20;
        for (size_t j = 0; j < d; j++) {
            double u = (double)next(&s) * 0x1p-53;
            x[i * d + j] = noise ? (double)(int)(u * 100) : centre + (double)(int)(u * 5);
        }
        if (i % 7 == 6) memcpy(x + i * d, x + (i / 3) * d, d * sizeof *x);
    }
    return x;
}

/* Weights of one kind (0: none): 1 small integers with zeros and
 * negatives, 2 tenths, 3 large ones (+-2^1000 among them), 4 values that
 * put sums within a few units in the last place of a whole number, 5 ones. */
enum { WEIGHT_KINDS = 6, WEIGHT_ONES = 5 };

static double *make_weights(int kind, size_t n, uint64_t seed)
{
    static const double close[] = {1, 1, 0.5, -0x1p-54, 0x1p-53, -0x1p-110, 0x1p-110, 1 - 0x1p-53, 0.1, 0.2, 0.3};
    if (kind == 0) return NULL;
    double *w = malloc(n * sizeof *w);
    for (size_t i = 0; i < n; i++) {
        double k = (double)(next(&seed) % 11);
        w[i] = kind == 1   ? k / 2 - 1
               : kind == 2 ? (k - 3) / 10
               : kind == 3 ? (k < 2 ? (k == 0 ? 0x1p1000 : -0x1p1000) : (k - 4) * 1e6 + 0.1)
               : kind == 4 ? close[next(&seed) % (sizeof close / sizeof *close)]
                           : 1;
    }
    return w;
}

/* The distributed call on this rank's part against the single-process
 * labels and flags (one, core1, counts k1) of the whole input. */
static void compare(grove_mpi *mpi, const double *x, size_t n, size_t d, int split, const grove_dbscan_params *p,
                    const int64_t *one, const uint8_t *core1, const grove_dbscan_counts *k1)
{
    int rank = grove_mpi_rank(mpi), ranks = grove_mpi_size(mpi);
    size_t f, m;
    mpi_part(n, ranks, rank, split, &f, &m);
    grove_dbscan_params mine_p = *p;
    if (p->sample_weight) mine_p.sample_weight = m ? p->sample_weight + f : NULL;
    int64_t *mine = malloc((m + 1) * sizeof *mine);
    uint8_t *core = malloc(m + 1);
    grove_options o;
    grove_options_init(&o);
    o.mpi = mpi;
    grove_dbscan_counts k;
    MPI_CHECK(grove_dbscan(grove_points_f64(x + f * d, m, d), NULL, &mine_p, mine, core, &k, &o) == GROVE_OK);
    MPI_CHECK(memcmp(mine, one + f, m * sizeof *mine) == 0);
    MPI_CHECK(memcmp(core, core1 + f, m) == 0);
    MPI_CHECK(k.clusters == k1->clusters && k.core == k1->core && k.noise == k1->noise);
    free(mine);
    free(core);
}

/* A ghost whose only link to its cluster is through another slab. On two
 * ranks the cut falls at x = 10 (row 5, the median x; it lies far off in
 * y). Row 2 (x = 10.5) is core in the second slab, through row 1 (11.45)
 * to row 0 (12.1), the cluster's smallest row; in the first slab it is a
 * ghost with no core neighbour (row 1 is beyond that slab's reach), a
 * component of its own, and row 3 (9.6) its border point there. Rows 6-8
 * are a second cluster. */
static void ghost_glued_elsewhere(grove_mpi *mpi)
{
    const double xs[9] = {12.1, 11.45, 10.5, 9.6, 12.6, 10, -101, -100, -99};
    double x[9 * 3] = {0};
    for (int i = 0; i < 9; i++) x[3 * i] = xs[i];
    x[3 * 5 + 1] = 50;
    grove_dbscan_params p;
    grove_dbscan_params_init(&p);
    p.eps = 1;
    p.min_samples = 3;
    int64_t one[9];
    uint8_t core1[9];
    grove_dbscan_counts k1;
    MPI_CHECK(grove_dbscan(grove_points_f64(x, 9, 3), NULL, &p, one, core1, &k1, NULL) == GROVE_OK);
    MPI_CHECK(one[0] == 0 && one[2] == 0 && one[3] == 0 && !core1[3] && one[5] == -1 && k1.clusters == 2);
    for (int split = 0; split < 4; split++) compare(mpi, x, 9, 3, split, &p, one, core1, &k1);
}

void mpi_case_dbscan(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    int rank, ranks;
    grove_mpi *mpi = mpi_world(&rank, &ranks);
    ghost_glued_elsewhere(mpi);
    static const struct {
        size_t n, d, min_samples;
        double eps;
        int split, weights, dense;
    } cases[] = {{3000, 3, 5, 1.5, 0, 4, 0},  {3000, 3, 1, 1.0, 1, 2, 0}, {3000, 3, 12, 2.0, 3, 3, 0},
                 {800, 64, 4, 13.0, 1, 1, 0}, {1500, 3, 8, 2.5, 0, 2, 1}, {2000, 3, 4, 2.5, 1, 4, 1}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        size_t n = cases[c].n, d = cases[c].d;
        double *x = make_points(n, d, cases[c].dense, c + 1);
        int64_t *one = malloc(n * sizeof *one), *plain = malloc(n * sizeof *plain);
        uint8_t *core1 = malloc(n), *plain_core = malloc(n);
        /* Unweighted, weighted, and with weights of one. */
        static const int kinds[] = {0, -1, WEIGHT_ONES};
        for (size_t w = 0; w < 3; w++) {
            int kind = kinds[w] < 0 ? cases[c].weights : kinds[w];
            double *weight = make_weights(kind, n, 100 + c);
            grove_dbscan_params p;
            grove_dbscan_params_init(&p);
            p.eps = cases[c].eps;
            p.min_samples = cases[c].min_samples;
            p.sample_weight = weight;
            grove_dbscan_counts k1;
            MPI_CHECK(grove_dbscan(grove_points_f64(x, n, d), NULL, &p, one, core1, &k1, NULL) == GROVE_OK);
            compare(mpi, x, n, d, cases[c].split, &p, one, core1, &k1);
            if (kind == 0) {
                /* Something to compare: several clusters, and noise unless every point is core. */
                MPI_CHECK(k1.clusters >= 2 && k1.core > 0 && (p.min_samples == 1 || k1.noise > 0));
                memcpy(plain, one, n * sizeof *one);
                memcpy(plain_core, core1, n);
            } else if (kind == WEIGHT_ONES) {
                MPI_CHECK(memcmp(plain, one, n * sizeof *one) == 0 && memcmp(plain_core, core1, n) == 0);
            } else {
                MPI_CHECK(k1.clusters >= 2 && k1.core > 0 && k1.core < n && k1.noise > 0);
            }
            free(weight);
        }
        free(x);
        free(one);
        free(plain);
        free(core1);
        free(plain_core);
    }
    grove_mpi_free(mpi);
}
