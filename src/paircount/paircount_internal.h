/* Pair counts (internal to src/paircount): the binning in the index's
 * units, one pass over the query groups, and what each thread keeps. */
#ifndef GROVE_PAIRCOUNT_INTERNAL_H
#define GROVE_PAIRCOUNT_INTERNAL_H

#include "../core/exact_sum.h"
#include "../join/groups.h"

/* Cells of the squared-distance lookup (bins.c): a squared distance's
 * bits, shifted, pick a cell, which says how many edges lie at or below
 * its low end; PC_FIX compares finish the count (more where the edges
 * crowd a cell: pc_bins.slow). */
#define PC_CELLS_MAX 4096
#define PC_FIX 2

/* The bins of a pass, in the index's dtype T and units (times 2^-exponent).
 * A pair's slot is K * npi + j: K the number of squared r (or rp) edges at
 * or below its squared distance (0 .. nrp + 1), j its pi bin (0 without
 * pimax); slot (i + 1) * npi + j is bin (i, j). The rows K = 0 and
 * K = nrp + 1, and a last slot for pairs beyond pimax, collect the pairs
 * outside every bin. */
typedef struct pc_bins {
    size_t nrp, npi, nbins; /* nbins = nrp * npi */
    size_t slots;           /* (nrp + 2) * npi + 1: the last one takes pairs beyond pimax */
    void *e2;               /* nrp + 2 squared edges in T, the last +infinity */
    uint32_t *lut;          /* cells + 2 entries: below the first cell, the cells, above */
    int slow;               /* some cell holds more edges than the kernels' compares pass */
    size_t cells;
    unsigned shift;         /* a cell is (bits of the squared distance) >> shift */
    uint64_t base;          /* the first cell's key */
    /* With pimax (npi >= 1 bins along the last input dimension): |dz| <
     * pimax and j = (int)(|dz| * inv_dpi) < npi, both in T (values T holds
     * exactly). */
    int rppi;
    double pimax, inv_dpi;
    size_t dim[GROVE__JOIN_SOA_MAX]; /* the stored position of each input dimension */
} pc_bins;

/* Set up b for the index's dtype, scale and dimension order: edges
 * (validated) squared in double then rounded to T, as Corrfunc does;
 * pimax 0 or >= 1. */
grove_status grove__pc_bins_init(pc_bins *b, const grove_index *index, const double *edges, size_t nedges,
                                 double pimax);
void grove__pc_bins_free(pc_bins *b);

/* One pass: the pairs between the query grouping Q and the data D (Q == D
 * for an autocorrelation, whose unordered pairs of distinct points are
 * each met once), weights in tree order (NULL: unweighted). */
typedef struct pc_pass {
    const grove_index *D, *Q;
    int autocorr;
    const double *wD, *wQ;
    const pc_bins *bins;
    double prune2; /* groups and points beyond it cannot be in a bin */
} pc_pass;

/* Interleaved copies of each slot's counters, and each slot's weighted
 * partial sums: the pair at offset o of a run of data positions adds its
 * weight product to lane o mod PC_LANES (every kernel alike, so the sums
 * have the same bits on every instruction set). */
#define PC_LANES 8

/* One query against runs of data positions (the vector kernels'
 * arguments; bins in r only). */
typedef struct pc_span {
    const void *col[GROVE__JOIN_SOA_MAX]; /* input dimension k's column of D's by-dimension copy (T) */
    const void *q;       /* the query's coordinates by input dimension (T) */
    const void *len;     /* the periodic lengths by input dimension (T), or NULL */
    size_t dr, nrp;      /* dimensions, r bins */
    const void *e2;      /* pc_bins.e2 */
    uint64_t *count;     /* the thread's counters, slot * PC_LANES + lane */
    double *part;        /* the query group's weighted partials likewise, or NULL */
    double wq;           /* the query's weight */
    const double *w;     /* D's weights by position */
} pc_span;

/* The AVX-512 kernels (span_avx512.c): the pairs of sp's query with the
 * data positions of its runs [rb[r], re[r]), counted as the portable steps
 * count them. */
typedef void (*pc_query_fn)(const pc_span *sp, const uint32_t *rb, const uint32_t *re, size_t runs);
void grove__pc_query_avx512_f64(const pc_span *sp, const uint32_t *rb, const uint32_t *re, size_t runs);
void grove__pc_query_avx512_f32(const pc_span *sp, const uint32_t *rb, const uint32_t *re, size_t runs);

/* Run the pass with the options' threads, progress and cancel flag:
 * count[bin] += the pairs in each of bins->nbins bins; with weights
 * sum[bin] += their weight products, exactly. */
grove_status grove__pc_run(const pc_pass *pass, const grove_options *options, int64_t *count, grove__xsum *sum);

#endif
