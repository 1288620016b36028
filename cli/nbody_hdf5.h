/* grove nbody's HDF5 files (nbody_hdf5.c): a snapshot of the run's state
 * in the GADGET-4 layout, and the header its halo catalogues share. */
#ifndef GROVE_CLI_NBODY_HDF5_H
#define GROVE_CLI_NBODY_HDF5_H

#include "units.h"

/* A run's Gadget header at `time`: no box, no cosmology, the units of
 * --units in cgs (none for Henon units or without --units). */
void cli_nbody_header(double time, const cli_units *units, grove_gadget_header *h);

/* The state of n particles (positions, velocities n x 3, masses,
 * potentials n) as PartType1 (dark matter) of an HDF5 snapshot at path,
 * the rows as ParticleIDs; written from the arrays as they are. */
grove_status cli_nbody_write_hdf5(const char *path, size_t n, double time, const double *x, const double *v,
                                  const double *m, const double *pot, const cli_units *units);

#endif
