/* FoF catalogues as files (catalogue.c): the table of grove fof
 * --catalogue (.npy or .csv) and the HDF5 halo table with its members'
 * ids, which grove fof and grove nbody --fof-every write. */
#ifndef GROVE_CLI_CATALOGUE_H
#define GROVE_CLI_CATALOGUE_H

#include "cli.h"

/* The catalogue as a (groups, columns) float64 table: group, members,
 * first, mass, x, y, z, then with velocities vx, vy, vz, sigma_v, and
 * radius. */
grove_status cli_catalogue_table(const grove_fof_catalogue *c, grove_array *t);
/* The table as .csv text with its header line. */
void cli_catalogue_csv(FILE *f, const grove_array *t);

/* The HDF5 halo table at path (grove_fof_write_hdf5) with the ids of
 * every grouped particle, group by group and in index order within each:
 * particle i (of n) is in group[i] (-1: none) and has id[i] (NULL: i). */
grove_status cli_catalogue_hdf5(const char *path, const grove_gadget_header *header, const grove_fof_catalogue *c,
                                 const int64_t *group, const uint64_t *id, size_t n);

#endif
