/* The pair counts' brute-force reference for the tests (test_paircount.c):
 * every ordered pair, its squared distance summed over the input
 * dimensions in input order in the points' dtype, minimum images as
 * grove.h documents them (t = |a - b|, L - t when t > L / 2), bins by
 * Corrfunc's rules (edges squared in double, rounded to the dtype; bin i
 * holds e2[i] <= r2 < e2[i + 1]; pi bin (int)(|dz| / dpi) for |dz| <
 * pimax), and an autocorrelation's self pairs only when edges[0] is 0.
 * Shares no code with the library. */
#ifndef GROVE_TEST_PAIRCOUNT_REF_H
#define GROVE_TEST_PAIRCOUNT_REF_H

#include "test.h"

#include <stdbool.h>

/* A point set in its dtype (n x d row-major), its weights or NULL. */
typedef struct pc_set {
    void *data;
    bool f32;
    size_t n, d;
    double *w;
} pc_set;

/* The binning and box of a count. */
typedef struct pc_ref_bins {
    const double *edges;
    size_t nedges;
    double pimax;      /* 0: bins in r */
    const double *box; /* d lengths (0 = unbounded), or NULL */
} pc_ref_bins;

/* Counts and weight products per bin (nbins each) of a's pairs (b NULL) or
 * of the pairs between a and b; weight sums in long double. */
void pc_ref_count(const pc_set *a, const pc_set *b, const pc_ref_bins *bins, int64_t *count, double *weighted);
size_t pc_ref_nbins(const pc_ref_bins *bins);

/* The kinds of sets the tests count. */
typedef enum { PC_UNIFORM, PC_CLUSTERED, PC_LATTICE, PC_KINDS } pc_kind;
extern const char *const pc_kind_name[PC_KINDS];
/* n points of d dimensions in [0, side) (the box when periodic): uniform;
 * clustered (a few tight blobs, every fourth point an exact duplicate of
 * another); or on a lattice of spacing 1/4 (squared distances exact in
 * either dtype, many exactly on integer and half-integer edges). Weights
 * in [0.5, 2) when weighted. */
pc_set *pc_set_make(pc_kind kind, size_t n, size_t d, bool f32, double side, bool weighted, uint64_t seed);
void pc_set_free(pc_set *s);
grove_points pc_set_view(const pc_set *s);

#endif
