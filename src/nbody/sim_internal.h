/* The simulation handle's layout, shared by sim.c, block.c and
 * checkpoint.c, and the interface to the ranks it runs on. */
#ifndef GROVE_SIM_INTERNAL_H
#define GROVE_SIM_INTERNAL_H

#include "nbody_internal.h"

struct grove_nbody {
    size_t n;               /* particles held: this rank's in a distributed simulation */
    grove_nbody_params params;
    double time;
    uint64_t step;
    double *state;          /* one block: pos, vel (3n each), mass (n), then acc (3n),
                               pot (n); pos..mass are what a checkpoint holds */
    double *pos, *vel, *acc, *mass, *pot;
    uint8_t *level;         /* n block-step levels (0 for the other modes), then n active flags */
    uint8_t *active;
    int64_t *row;           /* n global rows (each particle's place in the creation's input) */
    uint64_t evaluations;   /* sink force evaluations since the run began */
    grove__gravity engine;  /* reused by every force evaluation */
    const grove__nb_engine *forces; /* what computes them during a step call (NULL: the CPU) */
    grove_gravity_stats stats;
    bool failed;            /* a step stopped half way: the state is not valid to go on */
    unsigned char *app;     /* the caller's bytes kept with the state (grove_nbody_set_app_data) */
    size_t app_bytes;
    const struct grove__nbody_ranks *ranks; /* what it asks of its ranks (below), fixed when it is made */
    struct grove__nbody_dist *dist; /* the distributed implementation's state (src/mpi/nbody.c); NULL alone */
};

/* Validated params (NULL -> defaults). */
grove_status grove__nbody_params(const grove_nbody_params *in, grove_nbody_params *out);
/* A handle with room for n particles (state uninitialised, levels 0,
 * rows 0..n-1). */
grove_status grove__nbody_alloc(size_t n, const grove_nbody_params *p, grove_nbody **out);
/* sim's arrays replaced by fresh ones for n particles (state
 * uninitialised, levels 0); false (and sim unchanged) when out of memory. */
bool grove__nbody_arrays(grove_nbody *sim, size_t n);
/* sim's arrays pointed at state (11 n doubles: pos, vel, mass, acc, pot),
 * level (2 n bytes: levels, active flags) and row (n), which it owns. */
void grove__nbody_place(grove_nbody *sim, double *state, uint8_t *level, int64_t *row, size_t n);
/* acc and pot from pos and mass, with the options' threads, for the
 * particles flagged in active (NULL = all; only their rows are written);
 * the net force is removed (conserve_momentum) only when all are active.
 * A raised cancel flag stops it with GROVE_CANCELLED, acc and pot
 * unchanged. Does not count the evaluations. */
grove_status grove__nbody_forces(grove_nbody *sim, const uint8_t *active, const grove_options *options);

/* Shared by the steppers (sim.c). */
/* The length the adaptive and block criteria scale with: the softening,
 * or 0.01 of the virial radius without one (0 when there is none); reads
 * every potential, so only at a synchronised time. */
double grove__nbody_eps(const grove_nbody *sim);
/* |a| of one particle's acceleration, without overflow of the squares. */
double grove__nbody_magnitude(const double a[3]);
/* y += h x over m values; the lowest index whose new value is not finite,
 * or m when all are. */
size_t grove__nbody_axpy(double *y, const double *x, double h, size_t m, int threads);
/* Fail the handle (a step stopped half way) with the step in the message. */
grove_status grove__nbody_step_failed(grove_nbody *sim, grove_status s);
/* Fail it because value `index` (of 3n) of `what` is not finite after a
 * step of length dt. */
grove_status grove__nbody_not_finite(grove_nbody *sim, size_t index, const char *what, double dt);

/* A step's non-finite value: GROVE_OK when bad == m (every value finite)
 * on every rank, else the step fails on every rank (grove__nbody_not_finite
 * on the rank that has it, the particle named by its row). */
grove_status grove__nbody_finite(grove_nbody *sim, size_t bad, size_t m, const char *what, double dt);

/* What a simulation asks of the ranks it runs on, collective over them:
 * one process's answers (one_process.c, every new handle's) or the MPI
 * implementation's (src/mpi/nbody.c, docs/mpi.md), set when the handle is
 * made: the dispatch layer (src/dispatch/nbody.c) chooses the call that
 * makes it. */
typedef struct grove__nbody_ranks {
    /* Particles move between ranks in a step: a cancel stops a step only
     * at its start, where the ranks agree on it. */
    bool distributed;
    /* The particles on every rank together. */
    size_t (*total)(const grove_nbody *sim);
    /* v[0..count) summed / maximised over the ranks, in place. */
    void (*sum)(const grove_nbody *sim, double *v, int count);
    void (*max)(const grove_nbody *sim, double *v, int count);
    /* The bitwise or of every rank's bits. */
    uint32_t (*any)(const grove_nbody *sim, uint32_t bits);
    /* One status on every rank: the worst, with the message of the lowest
     * rank that has it. */
    grove_status (*agree)(const grove_nbody *sim, grove_status s);
    /* Whether options are the ones to step sim with (a distributed
     * simulation needs the context it was made with). */
    grove_status (*check)(const grove_nbody *sim, const grove_options *options);
    /* At a step's start: new domains when the ranks' work since the last
     * decomposition is out of balance. */
    grove_status (*balance)(grove_nbody *sim, int threads);
    /* After a drift, before the forces: the particles that left their
     * domain go to its rank (sim->n changes). */
    grove_status (*migrate)(grove_nbody *sim, int threads);
    /* acc and pot (grove__nbody_forces' contract, without the net force's
     * removal). */
    grove_status (*forces)(grove_nbody *sim, const uint8_t *active, const grove_options *options);
    /* write(whole, path) on the rank that holds every particle in row
     * order (a checkpoint); its status on every rank. */
    grove_status (*write)(const grove_nbody *sim, const char *path,
                          grove_status (*write_whole)(const grove_nbody *whole, const char *path));
    /* grove_nbody_gather's columns on rank 0, by global row. */
    grove_status (*gather)(const grove_nbody *sim, double *pos, double *vel, double *mass, double *pot,
                           uint8_t *level);
    /* grove_nbody_load's statistics of this rank (out zeroed). */
    void (*load)(const grove_nbody *sim, grove_nbody_rank_stats *out);
    /* Free the implementation's state (sim->dist). */
    void (*release)(grove_nbody *sim);
} grove__nbody_ranks;

/* One process alone (one_process.c). */
extern const grove__nbody_ranks grove__nbody_one_process;

/* A simulation just made or read (s: how that went; NULL or freed on
 * failure) with its forces evaluated: *out = sim, ready to step. A fresh
 * one counts that evaluation of every particle; a resumed one keeps the
 * count it was read with. */
grove_status grove__nbody_ready(grove_nbody *sim, grove_status s, const grove_options *options, bool fresh,
                                grove_nbody **out);

/* One largest step dt of block steps (block.c): GROVE_CANCELLED from a
 * cancelled force evaluation leaves the state part advanced for the
 * caller to put back. */
grove_status grove__nbody_block_step(grove_nbody *sim, const grove_options *options, int threads);

#endif
