/* The simulation handle's layout, shared by sim.c, block.c and checkpoint.c. */
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
    grove_gravity_stats stats;
    bool failed;            /* a step stopped half way: the state is not valid to go on */
    unsigned char *app;     /* the caller's bytes kept with the state (grove_nbody_set_app_data) */
    size_t app_bytes;
    struct grove__nbody_dist *dist; /* the ranks of a distributed simulation (src/mpi/nbody.c); NULL alone */
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

/* Distributed simulations (src/mpi/nbody.c, docs/mpi.md). Each of these is
 * the single-process answer when sim->dist is NULL, and collective over the
 * simulation's ranks otherwise. */
/* The particles on every rank together. */
size_t grove__nbody_total(const grove_nbody *sim);
/* v[0..count) summed / maximised over the ranks, in place. */
void grove__nbody_sum(const grove_nbody *sim, double *v, int count);
void grove__nbody_max(const grove_nbody *sim, double *v, int count);
/* The bitwise or of every rank's bits. */
uint32_t grove__nbody_or(const grove_nbody *sim, uint32_t bits);
/* One status on every rank (the worst, with the message of the lowest
 * rank that has it: grove__mpi_agree). */
grove_status grove__nbody_agree(grove_nbody *sim, grove_status s);
/* Collective over options->mpi: *sim (this rank's part of the rows in
 * rank order, rows 0.. of its own; NULL when `checked` failed) becomes a
 * distributed simulation: the ranks agree on checked and the parameters,
 * rows become global, and the particles go to their domains. On failure
 * *sim is freed and NULL. The caller then evaluates the forces. */
grove_status grove__nbody_distribute(grove_nbody **sim, grove_status checked, const grove_options *options);
/* Whether options are the ones to step sim with: a distributed simulation
 * needs its own context, a single-process one none of several ranks. */
grove_status grove__nbody_same_ranks(const grove_nbody *sim, const grove_options *options);
/* At a step's start: new domains weighted by the ranks' work since the
 * last decomposition when it was out of balance. */
grove_status grove__nbody_balance(grove_nbody *sim, int threads);
/* After a drift, before the forces: the particles that left their
 * domain go to the domain's rank (sim->n changes). */
grove_status grove__nbody_migrate(grove_nbody *sim, int threads);
/* The forces of a distributed simulation (grove__nbody_forces' contract). */
grove_status grove__nbody_dist_forces(grove_nbody *sim, const uint8_t *active, const grove_options *options);
void grove__nbody_dist_free(grove_nbody *sim);
/* Collective: a handle on the root rank (NULL elsewhere) holding every
 * rank's particles in row order with sim's time, step, parameters,
 * counts and application data, for a checkpoint (acc and pot are not
 * filled). */
grove_status grove__nbody_gather_whole(const grove_nbody *sim, grove_nbody **whole);
/* Collective over options->mpi: whole (on rank 0; the other ranks pass
 * NULL and `checked` says whether rank 0 read it) is split into row
 * blocks and made a distributed simulation with the forces evaluated. */
grove_status grove__nbody_scatter(grove_nbody *whole, grove_status checked, const grove_options *options,
                                  grove_nbody **out);

/* One largest step dt of block steps (block.c): GROVE_CANCELLED from a
 * cancelled force evaluation leaves the state part advanced for the
 * caller to put back. */
grove_status grove__nbody_block_step(grove_nbody *sim, const grove_options *options, int threads);

#endif
