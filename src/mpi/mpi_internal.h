/* The MPI context's layout and the helpers every distributed call uses
 * (src/mpi is built only with MPI: the Makefile leaves it out otherwise). */
#ifndef GROVE_MPI_INTERNAL_H
#define GROVE_MPI_INTERNAL_H

#include "distributed.h"
#include "grove_mpi.h"

struct grove_mpi {
    MPI_Comm comm;   /* grove's own duplicate */
    int rank, size;
    bool finalize;   /* grove_mpi_launch initialised MPI: free finalises it */
    int64_t bytes_sent; /* by this rank to others in grove's distributed calls */
    int64_t held;       /* particles this rank computed in the last distributed gravity */
    double phase_seconds[GROVE_MPI_PHASES]; /* and its wall seconds in each phase */
    int64_t phase_bytes[GROVE_MPI_PHASES];  /* and the bytes it sent in each */
};

/* One status on every rank (collective): the worst of them, with the
 * message of the lowest rank that has it, prefixed "rank r: " (once: an
 * agreed message agreed again stays as it is; `what` names the call
 * where that rank has no message), on every rank. */
grove_status grove__mpi_agree(const grove_mpi *mpi, grove_status s, const char *what);
/* offsets[r] = the rows of ranks before r, for every rank's n (P + 1 entries). */
void grove__mpi_offsets(const grove_mpi *mpi, size_t n, int64_t *offsets);
/* acc (p.d entries) = grove__dim_sums over every rank's rows in rank order:
 * each rank continues the sums of the ranks before it, so the additions
 * are those one process makes over all rows, bit for bit; the last rank's
 * totals are broadcast. p.d must be the same on every rank. */
void grove__mpi_chain_sums(const grove_mpi *mpi, grove_points p, double scale, const double *centre, int threads,
                           double *acc);
/* A domain boundary: the (key, row) at which a domain begins. */
typedef struct grove__mpi_cut {
    uint64_t key;
    int64_t row;
} grove__mpi_cut;
/* The domains of the distributed gravity and simulation (decompose.c):
 * this rank's n records (rec bytes each, starting with the int64 global
 * row) with their space-filling-curve keys go to the ranks of P
 * contiguous (key, row) ranges of about equal weight (each record of this
 * rank weighs `weight`); *out (allocated) receives this rank's range, *nout
 * records sorted by global row; kept (P - 1 entries, or NULL) the cuts. */
grove_status grove__mpi_decompose(const grove_mpi *mpi, const uint64_t *keys, const void *records, size_t rec,
                                  size_t n, double weight, int threads, grove__mpi_cut *kept, void **out,
                                  size_t *nout);
/* The domain of (key, row) among P ranks: the number of cuts at or below it. */
int grove__mpi_domain(const grove__mpi_cut *cuts, int ranks, uint64_t key, int64_t row);
/* The size - 1 cuts of a sample sort: every rank's samples gathered and
 * sorted, cut k the sample at rank k / size of them (0 without samples). */
grove_status grove__mpi_cuts(const grove_mpi *mpi, const double *samples, size_t count, double *cuts);
/* Collective: an all-to-all exchange of counts[r] items of type t (size
 * bytes each) to each rank r: *got receives them (allocated, free with
 * grove__free), *got_counts (P entries) their numbers by source; the
 * bytes sent to other ranks are counted. `call` names the call in messages, `what` the
 * items. GROVE_TOO_LARGE past 2^31 - 1 items a side. */
grove_status grove__mpi_alltoallv(const grove_mpi *mpi, const char *call, const void *send, const int *counts,
                                  MPI_Datatype t, size_t size, void **got, int *got_counts, const char *what);
/* The same for records of `size` bytes (a plain struct), *total of them
 * received in all. */
grove_status grove__mpi_alltoallv_records(const grove_mpi *mpi, const char *call, const void *send, const int *counts,
                                          size_t size, void **got, int *got_counts, size_t *total, const char *what);
/* The slab of x among ncuts ascending cuts: the number of cuts <= x. */
int grove__mpi_slab(const double *cuts, int ncuts, double x);
/* The rank whose rows (offsets from grove__mpi_offsets) hold row. */
int grove__mpi_home(const int64_t *offsets, int ranks, int64_t row);
/* Count bytes this rank sent (grove_mpi_bytes_sent). */
static inline void grove__mpi_sent(const grove_mpi *mpi, size_t bytes)
{
    ((grove_mpi *)(uintptr_t)mpi)->bytes_sent += (int64_t)bytes;
}
/* Collective (src/mpi/components.c), after a distributed self-join: the
 * connected components of the pairs in every rank's rows (res, this
 * rank's rows from global row `first`; n rows in all, n < 2^31) whose two
 * ends are marked in keep (n flags; NULL = every pair). On rank 0 *root
 * (n entries, free with grove__free) is each row's component's smallest
 * row, a row in no pair its own; NULL elsewhere. Memory: 4 bytes a row on
 * every rank, and rank 0 holds every rank's links (16 bytes each, at most
 * one per row and rank). `what` names the call in messages. */
grove_status grove__mpi_components(const grove_mpi *mpi, const grove_join_result *res, int64_t first, size_t n,
                                   const uint8_t *keep, uint32_t **root, const char *what);
/* Collective (src/mpi/components.c): `count` links (a, b), two global rows
 * each, from every rank are the edges of a graph over the rows they name;
 * roots[k] = the smallest row of link k's component. Rank 0 holds every
 * rank's links (16 bytes each) and 32 bytes per link more while it merges
 * them; every other rank only its own links and roots. */
grove_status grove__mpi_link_roots(const grove_mpi *mpi, const int64_t *links, size_t count, int64_t *roots,
                                   const char *what);
/* Collective (src/mpi/fof_catalogue.c): the whole catalogue of a
 * distributed grove_fof on every rank, from each rank's validated points,
 * masses and velocities (has_mass / has_velocity agreed across ranks: a
 * rank without rows may pass NULL) and its rows' group ids, `groups`
 * groups in all. The rows are those of grove__fof_catalogue on the whole
 * input, bit for bit. */
grove_status grove__mpi_fof_catalogue(const grove_mpi *mpi, grove_points points, const double *mass,
                                      const double *velocity, int has_mass, int has_velocity, const int64_t *group,
                                      size_t groups, int threads, grove_fof_catalogue *out);
/* The global row of this rank's first row in a distributed call (the
 * rows of the ranks before it), for messages that name a row; 0 alone.
 * Collective over the options' ranks: every rank calls it at the same
 * point (before any return that depends on its own arguments). */
size_t grove__mpi_first_row(const grove_options *options, size_t n);

#endif
