/* grove nbody's state (cmd_nbody.c), shared with the agreement between a
 * resumed run's command line and its checkpoint (nbody_resume.c). */
#ifndef GROVE_CLI_NBODY_RUN_H
#define GROVE_CLI_NBODY_RUN_H

#include "command.h"
#include "halos.h"
#include "units.h"

typedef struct nbody_args {
    const char *ic, *out, *timestep, *units_name, *format;
    bool hdf5;            /* --format hdf5 */
    cli_halos halos;      /* --fof-every */
    const cli_units *units; /* --units, or the resumed run's; NULL: none stated */
    cli_file input;
    size_t n, snapshot_every, report_every;
    int max_level;
    uint64_t seed, steps;
    double render_extent, bh_mass;
    bool have_steps, render, resume, tipsy, raw_forces;
    grove_device device;
    bool from_input; /* a resumed run began from a snapshot (whose path is not kept) */
    unsigned types;  /* --types: a Gadget snapshot's particle types */
    grove_nbody_params params;
    /* Which settings the command line gives (a resumed run checks them). */
    struct {
        bool ic, n, seed, bh_mass, input, dt, eta, theta, softening, G, snapshot_every, report_every, render_extent, timestep,
            max_level, units;
    } given;
    /* The run: the simulation, whether it resumed, its first and last
     * diagnostics and energy, the time spent setting up. */
    grove_nbody *sim;
    bool resumed;
    grove_nbody_diag d0, d;
    double e0, setup_seconds;
    char checkpoint[4096];
    /* What it measured: steps done, particles per second, interactions
     * per particle, the relative energy error, force evaluations per unit
     * of simulated time over this invocation's steps (from those at its
     * start: evaluations0). */
    uint64_t done, evaluations0;
    double rate, per, rel, evaluation_rate;
    /* Under mpirun (on rank 0, gathered at the end): each rank's particles,
     * bytes sent, particles sent across domain boundaries and nanoseconds
     * in each phase (phase-major), and the domain decompositions. */
    int64_t *rank_particles, *rank_bytes, *rank_migrated, *rank_phase_ns;
    uint64_t decompositions;
    grove_nbody_rank_stats load0; /* this rank's share before the steps */
    long long level_counts[GROVE_NBODY_MAX_LEVEL + 1]; /* at the end */
    size_t levels;
} nbody_args;

/* The --ic kind called name (the table's own string; NULL when there is
 * none), and which it is (kind may be NULL). */
const char *nbody_ic_kind(const char *name, grove_ic_kind *kind);

/* Keep the run's settings with its checkpoints (grove_nbody_keep_settings). */
grove_status nbody_keep_settings(const nbody_args *a);
/* A resumed run: the settings the command line gives again must agree with
 * the checkpoint's (else a usage error), and those it leaves out become
 * the checkpoint's. Collective under mpirun. */
grove_status nbody_resume_settings(nbody_args *a, cli_run *run);

#endif
