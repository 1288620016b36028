/* Helpers the cases share: the world context, and how the global rows are
 * split among the ranks. */
#include "mpi_test.h"

#include <stdint.h>
#include <string.h>

void mpi_part(size_t n, int ranks, int rank, int kind, size_t *first, size_t *count)
{
    size_t w[64], total = 0, before = 0;
    for (int r = 0; r < ranks; r++) {
        w[r] = kind == 0   ? 1
               : kind == 2 ? (r == ranks - 1)
               : kind == 3 ? (r == 0)
               : (ranks > 2 && r == 1) ? 0
                                       : (size_t)(r + 1) * (r + 1);
        total += w[r];
    }
    for (int r = 0; r < rank; r++) before += w[r];
    *first = n * before / total;
    *count = n * (before + w[rank]) / total - *first;
}

grove_mpi *mpi_world(int *rank, int *ranks)
{
    grove_mpi *mpi = NULL;
    MPI_CHECK(grove_mpi_create(MPI_COMM_WORLD, &mpi) == GROVE_OK);
    *rank = grove_mpi_rank(mpi);
    *ranks = grove_mpi_size(mpi);
    return mpi;
}

/* Deterministic points, the same on every rank: uniform in [0, 1) or
 * integers in clusters, every fifth point a copy of an earlier one. */
double *mpi_points(size_t n, size_t d, int clustered, uint64_t seed)
{
    double *x = malloc(n * d * sizeof *x);
    uint64_t s = seed * 2862933555777941757ULL + 3037000493ULL;
    for (size_t i = 0; i < n; i++) {
        double centre = (double)(i % 4) * 12;
        for (size_t j = 0; j < d; j++) {
            s = s * 6364136223846793005ULL + 1442695040888963407ULL;
            double u = (double)(s >> 11) * 0x1p-53;
            x[i * d + j] = clustered ? centre + (double)(int)(u * 6) : u;
        }
        if (clustered && i % 5 == 4) memcpy(x + i * d, x + (i / 2) * d, d * sizeof *x);
    }
    return x;
}

grove_points mpi_view(const void *x, size_t first, size_t n, size_t d, grove_dtype t)
{
    size_t es = t == GROVE_FLOAT32 ? sizeof(float) : sizeof(double);
    grove_points p = {x ? (const char *)x + first * d * es : NULL, n, d, t, 0};
    return p;
}

void *mpi_as_dtype(const double *x, size_t m, grove_dtype t)
{
    if (t == GROVE_FLOAT64) {
        double *y = malloc(m * sizeof *y);
        memcpy(y, x, m * sizeof *y);
        return y;
    }
    float *y = malloc(m * sizeof *y);
    for (size_t i = 0; i < m; i++) y[i] = (float)x[i];
    return y;
}
