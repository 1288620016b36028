/* The simulation handle's layout, shared by sim.c, block.c and checkpoint.c. */
#ifndef GROVE_SIM_INTERNAL_H
#define GROVE_SIM_INTERNAL_H

#include "nbody_internal.h"

struct grove_nbody {
    size_t n;
    grove_nbody_params params;
    double time;
    uint64_t step;
    double *state;          /* one block: pos, vel (3n each), mass (n), then acc (3n),
                               pot (n); pos..mass are what a checkpoint holds */
    double *pos, *vel, *acc, *mass, *pot;
    uint8_t *level;         /* n block-step levels (0 for the other modes), then n active flags */
    uint8_t *active;
    uint64_t evaluations;   /* sink force evaluations since the run began */
    grove__gravity engine;  /* reused by every force evaluation */
    grove_gravity_stats stats;
    bool failed;            /* a step stopped half way: the state is not valid to go on */
    unsigned char *app;     /* the caller's bytes kept with the state (grove_nbody_set_app_data) */
    size_t app_bytes;
};

/* Validated params (NULL -> defaults). */
grove_status grove__nbody_params(const grove_nbody_params *in, grove_nbody_params *out);
/* A handle with room for n particles (state uninitialised, levels 0). */
grove_status grove__nbody_alloc(size_t n, const grove_nbody_params *p, grove_nbody **out);
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

/* One largest step dt of block steps (block.c): GROVE_CANCELLED from a
 * cancelled force evaluation leaves the state part advanced for the
 * caller to put back. */
grove_status grove__nbody_block_step(grove_nbody *sim, const grove_options *options, int threads);

#endif
