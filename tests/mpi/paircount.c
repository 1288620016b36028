/* The distributed pair counts against the single-process ones: the counts
 * and weighted sums of every rank bit for bit those of grove_paircount on
 * the whole input, for DD and DR, bins in r (the first edge 0 and not) and
 * in (rp, pi) (pimax whole and not), float32 and float64, clustered
 * integer points with duplicates (pairs exactly on edges) and uniform
 * ones (mpi_points), weights in quarters (every partial sum exact, so the sums must
 * match to the bit), ones, and any doubles (within a few ulps), parts even, uneven and empty on all ranks
 * but one; a periodic box is refused on several ranks in one line. */
#include "mpi_test.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

/* Weights in quarters from -1 to 2 (kind 1), ones (2), any doubles in
 * [0.5, 1.5) (3); none (0). */
static double *make_weights(size_t n, int kind, uint64_t seed)
{
    if (kind == 0) return NULL;
    double *w = malloc(n * sizeof *w);
    for (size_t i = 0; i < n; i++) {
        seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
        w[i] = kind == 2 ? 1 : kind == 3 ? 0.5 + (double)(seed >> 11) * 0x1p-53 : (double)((int)(seed >> 40) % 13 - 4) / 4;
    }
    return w;
}

typedef struct pc_case {
    size_t n, nr, d;
    int clustered, cross, weights, split;
    grove_dtype dtype;
    double pimax;
    const double *edges;
    size_t nedges;
} pc_case;

static void run_case(const pc_case *c, grove_mpi *mpi)
{
    int rank = grove_mpi_rank(mpi), ranks = grove_mpi_size(mpi);
    double *x1 = mpi_points(c->n, c->d, c->clustered, 1), *x2 = c->cross ? mpi_points(c->nr, c->d, c->clustered, 2) : NULL;
    void *d1 = mpi_as_dtype(x1, c->n * c->d, c->dtype), *d2 = x2 ? mpi_as_dtype(x2, c->nr * c->d, c->dtype) : NULL;
    double *w1 = make_weights(c->n, c->weights, 3), *w2 = c->cross ? make_weights(c->nr, c->weights, 4) : NULL;
    grove_paircount_params p;
    grove_paircount_params_init(&p);
    p.edges = c->edges;
    p.nedges = c->nedges;
    p.pimax = c->pimax;
    p.weights1 = w1;
    p.weights2 = w2;
    size_t nbins = grove_paircount_bins(&p);
    MPI_CHECK(nbins > 0);
    int64_t *one = calloc(nbins, sizeof *one), *got = calloc(nbins, sizeof *got);
    double *wone = calloc(nbins, sizeof *wone), *wgot = calloc(nbins, sizeof *wgot);
    grove_points all1 = mpi_view(d1, 0, c->n, c->d, c->dtype), all2 = x2 ? mpi_view(d2, 0, c->nr, c->d, c->dtype) : all1;
    MPI_CHECK(grove_paircount(all1, x2 ? &all2 : NULL, &p, one, c->weights ? wone : NULL, NULL) == GROVE_OK);
    /* Something to compare: pairs in most bins. */
    size_t filled = 0;
    for (size_t b = 0; b < nbins; b++) filled += one[b] > 0;
    MPI_CHECK(filled * 2 > nbins);
    /* This rank's rows: data1 split one way, data2 another. */
    size_t f1, m1, f2 = 0, m2 = 0;
    mpi_part(c->n, ranks, rank, c->split, &f1, &m1);
    if (x2) mpi_part(c->nr, ranks, rank, (c->split + 1) % 4, &f2, &m2);
    grove_paircount_params mine = p;
    mine.weights1 = w1 ? w1 + f1 : NULL;
    mine.weights2 = w2 ? w2 + f2 : NULL;
    grove_points p1 = mpi_view(d1, f1, m1, c->d, c->dtype), p2 = x2 ? mpi_view(d2, f2, m2, c->d, c->dtype) : p1;
    grove_options o;
    grove_options_init(&o);
    o.mpi = mpi;
    o.threads = 1 + rank % 2;
    MPI_CHECK(grove_paircount(p1, x2 ? &p2 : NULL, &mine, got, c->weights ? wgot : NULL, &o) == GROVE_OK);
    MPI_CHECK(memcmp(got, one, nbins * sizeof *got) == 0);
    /* Any weights: each query group's partial sums are rounded before the
     * exact sum, and a slab's groups are not the whole set's, so the sums
     * may move by an ulp or two (docs/paircount.md). */
    for (size_t b = 0; b < nbins; b++)
        MPI_CHECK(c->weights == 3 ? fabs(wgot[b] - wone[b]) <= 4 * fabs(wone[b]) * 0x1p-52 : wgot[b] == wone[b]);
    free(one);
    free(got);
    free(wone);
    free(wgot);
    free(x1);
    free(x2);
    free(d1);
    free(d2);
    free(w1);
    free(w2);
}

/* A periodic box: refused on several ranks, in one line naming the call;
 * one rank is the one-process call. */
static void periodic_refused(grove_mpi *mpi)
{
    int ranks = grove_mpi_size(mpi);
    double *x = mpi_points(200, 3, 0, 5), edges[] = {0, 1, 2}, box = 10;
    grove_paircount_params p;
    grove_paircount_params_init(&p);
    p.edges = edges;
    p.nedges = 3;
    p.index.boxsize = &box;
    p.index.boxsize_count = 1;
    int64_t got[2];
    grove_options o;
    grove_options_init(&o);
    o.mpi = mpi;
    size_t first, count;
    mpi_part(200, ranks, grove_mpi_rank(mpi), 0, &first, &count);
    grove_status s = grove_paircount(grove_points_f64(x + 3 * first, count, 3), NULL, &p, got, NULL, &o);
    if (ranks == 1) MPI_CHECK(s == GROVE_OK && got[0] > 0);
    else
        MPI_CHECK(s == GROVE_UNSUPPORTED &&
                  strstr(grove_last_error(), "paircount: a periodic box runs on one process only") != NULL);
    free(x);
}

void mpi_case_paircount(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    int rank, ranks;
    grove_mpi *mpi = mpi_world(&rank, &ranks);
    (void)rank;
    static const double r0[] = {0, 1, 2, 3, 4.5}, r1[] = {0.5, 1, 1.5, 2, 3}, rp[] = {0, 1, 2, 3}, small[] = {0.2, 0.5, 1};
    static const pc_case cases[] = {
        /* n, nr, d, clustered, cross, weights, split, dtype, pimax, edges */
        {1500, 0, 3, 1, 0, 0, 0, GROVE_FLOAT64, 0, r0, 5},
        {1500, 0, 3, 1, 0, 1, 1, GROVE_FLOAT64, 0, r1, 5},
        {1200, 900, 3, 1, 1, 1, 2, GROVE_FLOAT64, 0, r0, 5},
        {1200, 900, 3, 0, 1, 0, 3, GROVE_FLOAT32, 0, small, 3},
        {1500, 0, 3, 0, 0, 2, 1, GROVE_FLOAT32, 0, small, 3},
        {1500, 0, 3, 1, 0, 1, 0, GROVE_FLOAT32, 4, rp, 4},
        {1200, 900, 3, 1, 1, 1, 1, GROVE_FLOAT64, 5.5, rp, 4},
        {1500, 0, 2, 0, 0, 0, 3, GROVE_FLOAT64, 1, small, 3},
        {1200, 900, 3, 0, 1, 3, 1, GROVE_FLOAT64, 0, r1, 5},
        {1500, 0, 3, 1, 0, 3, 0, GROVE_FLOAT64, 0, r0, 5},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) run_case(&cases[c], mpi);
    periodic_refused(mpi);
    grove_mpi_free(mpi);
}
