/* The simulation handle's layout, shared by sim.c and checkpoint.c. */
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
    grove__gravity engine;  /* reused by every force evaluation */
    grove_gravity_stats stats;
    bool failed;            /* a step stopped half way: the state is not valid to go on */
    unsigned char *app;     /* the caller's bytes kept with the state (grove_nbody_set_app_data) */
    size_t app_bytes;
};

/* Validated params (NULL -> defaults). */
grove_status grove__nbody_params(const grove_nbody_params *in, grove_nbody_params *out);
/* A handle with room for n particles (state uninitialised). */
grove_status grove__nbody_alloc(size_t n, const grove_nbody_params *p, grove_nbody **out);
/* acc and pot from pos and mass, with the options' threads; a raised
 * cancel flag stops it with GROVE_CANCELLED, acc and pot unchanged. */
grove_status grove__nbody_forces(grove_nbody *sim, const grove_options *options);

#endif
