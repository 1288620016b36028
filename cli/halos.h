/* grove nbody --fof-every M (halos.c): friends-of-friends groups of the
 * simulation's particles found where they are (the state's own arrays;
 * under mpirun every rank its own domain's particles), and a catalogue
 * written beside the snapshots: DIR/fof_STEP.hdf5 (with --format hdf5,
 * the members' ids being the snapshots' ParticleIDs, the rows) or
 * DIR/fof_STEP.npy (grove fof's --catalogue table). */
#ifndef GROVE_CLI_HALOS_H
#define GROVE_CLI_HALOS_H

#include "units.h"

typedef struct cli_halos {
    size_t every;              /* --fof-every M (0: none) */
    double b, linking_length;  /* --b B or --linking-length L */
    bool have_b, have_link, have_min;
    size_t min_members;        /* --min-members M */
    bool hdf5;                 /* catalogues as HDF5 halo tables, else .npy tables */
    /* What the run found: catalogues written, seconds finding and writing
     * them, and the last one's groups, particles in them (known on rank 0)
     * and linking length. */
    size_t catalogues, groups, grouped;
    double seconds, last_linking_length;
} cli_halos;

/* The options' usage rules (printed as grove nbody's usage errors). */
bool cli_halos_check(const cli_halos *h);
/* Whether step `step` (of a run to `last`) writes a catalogue. */
bool cli_halos_due(const cli_halos *h, uint64_t step, uint64_t last);
/* Find the groups of sim's particles now (step `step`, time `time`) and
 * write their catalogue into dir on rank 0 (collective under mpirun). */
grove_status cli_halos_write(cli_halos *h, const grove_nbody *sim, const char *dir, const cli_units *units,
                             uint64_t step, double time, const grove_options *options);

#endif
