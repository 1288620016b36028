/* The distributed force evaluation on particles already in their domains
 * (src/mpi/gravity.c), shared by the one-shot grove_gravity and the
 * distributed simulation (src/mpi/nbody.c). */
#ifndef GROVE_MPI_FORCES_H
#define GROVE_MPI_FORCES_H

#include "let.h"

/* Wall seconds and bytes sent in each phase (grove_mpi_phases). */
typedef struct grove__mpi_phases {
    double seconds[GROVE_MPI_PHASES];
    int64_t bytes[GROVE_MPI_PHASES];
    double began; /* when the running phase began */
    int64_t sent; /* the rank's bytes sent by then */
} grove__mpi_phases;

void grove__mpi_phase_begin(const grove_mpi *mpi, grove__mpi_phases *ph);
void grove__mpi_phase_end(const grove_mpi *mpi, grove__mpi_phases *ph, grove_mpi_phase k);

/* Collective: the units of every rank's n particles together (total of
 * them, total >= 1), and the global bounding box lo, hi (grove__nb_units_from
 * on the reduced box and largest mass: on one rank the single-process
 * units, bit for bit). */
grove_status grove__mpi_units(const grove_mpi *mpi, const double *pos, const double *mass, size_t n, size_t total,
                              const grove_gravity_params *p, bool potentials, int threads, grove__nb_units *u,
                              double lo[3], double hi[3]);

/* The Morton frame of the decompositions: the cube (clo, chi) of the
 * bounding box lo, hi in u's scaled positions, side its longest edge. */
void grove__mpi_frame(const grove__nb_units *u, const double lo[3], const double hi[3], double clo[3],
                      double chi[3]);

/* Collective: the forces on this rank's m particles (pos m x 3, mass m,
 * global rows row, in any order; m may be 0) from every rank's, in the
 * units u: g's tree, moments and groups of the active ones (flags, NULL =
 * all), the locally essential trees' exchange, the walks. acc (m x 3) and
 * pot (m, or NULL) receive the active particles' results in the caller's
 * units; *st this rank's counts (not yet summed over the ranks); the
 * phases' seconds and bytes are added to ph. A result that is not finite
 * fails every rank, naming the lowest global row. */
grove_status grove__mpi_forces(const grove_mpi *mpi, grove__gravity *g, const double *pos, const double *mass,
                               const int64_t *row, size_t m, const uint8_t *active, const grove_gravity_params *p,
                               const grove__nb_units *u, int threads, double *acc, double *pot,
                               grove_gravity_stats *st, grove__mpi_phases *ph);

/* Collective: every rank's counts summed (the depth: the deepest tree). */
void grove__mpi_reduce_stats(const grove_mpi *mpi, grove_gravity_stats *st);

#endif
