/* The covers the essential trees are cut against (src/mpi/cover.c):
 * grove__mpi_cover_accepts against the plain test of every box, on
 * random boxes of every count from 1 to 70 (levels of one, two and odd
 * numbers of nodes) and random cells near and far. */
#include "mpi_test.h"

#include "mpi/let.h"

#include <string.h>

/* A number in [0, 1) from a 64-bit LCG. */
static double uniform(uint64_t *s)
{
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(*s >> 11) * 0x1p-53;
}

/* Whether the walk's test passes for every box (lo, hi; enlarged as the cover enlarges them). */
static bool every_box_accepts(const double *boxes, size_t count, const double *cm, double rc2)
{
    for (size_t i = 0; i < count; i++) {
        const double *b = boxes + 6 * i;
        double ctr[3], half[3];
        for (int a = 0; a < 3; a++) {
            ctr[a] = 0.5 * (b[a] + b[3 + a]);
            half[a] = 0.5 * (b[3 + a] - b[a]) + GROVE__MPI_COVER_MARGIN;
        }
        if (!(grove__nb_box_dist2(ctr, half, cm) > rc2)) return false;
    }
    return true;
}

void mpi_case_cover(int argc, char **argv)
{
    (void)argc, (void)argv;
    uint64_t seed = 7;
    double boxes[6 * 70];
    size_t accepted = 0, refused = 0;
    for (size_t count = 1; count <= 70; count++) {
        for (size_t i = 0; i < count; i++) {
            double *b = boxes + 6 * i, side = 0.2 * uniform(&seed);
            for (int a = 0; a < 3; a++) {
                b[a] = uniform(&seed);
                b[3 + a] = b[a] + side * uniform(&seed);
            }
        }
        grove__mpi_cover c;
        MPI_CHECK(grove__mpi_cover_build(boxes, count, &c));
        for (int k = 0; k < 200; k++) {
            double cm[3], r = 0.6 * uniform(&seed);
            for (int a = 0; a < 3; a++) cm[a] = 3 * uniform(&seed) - 1;
            bool want = every_box_accepts(boxes, count, cm, r * r);
            MPI_CHECK(grove__mpi_cover_accepts(&c, cm, r * r) == want);
            accepted += want;
            refused += !want;
        }
        grove__mpi_cover_free(&c);
    }
    /* Both answers were asked for many times (the test could fail either way). */
    MPI_CHECK(accepted > 1000 && refused > 1000);
    /* No boxes: every cell is accepted (a rank without groups needs nothing). */
    grove__mpi_cover none;
    double cm[3] = {0, 0, 0};
    MPI_CHECK(grove__mpi_cover_build(boxes, 0, &none) && grove__mpi_cover_accepts(&none, cm, 1));
    grove__mpi_cover_free(&none);
}
