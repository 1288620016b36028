/* A simulation on one process: what it asks of its ranks
 * (grove__nbody_ranks) answered for one rank alone. Sums are this
 * process's own, no particle moves, and a checkpoint is written from the
 * handle itself. */
#include "sim_internal.h"

#include <string.h>

static size_t total(const grove_nbody *sim) { return sim->n; }

/* One rank's sums and maxima are already everyone's. */
static void over_ranks(const grove_nbody *sim, double *v, int count) { (void)sim, (void)v, (void)count; }

static uint32_t any(const grove_nbody *sim, uint32_t bits)
{
    (void)sim;
    return bits;
}

static grove_status agree(const grove_nbody *sim, grove_status s)
{
    (void)sim;
    return s;
}

/* Several ranks are refused before (src/dispatch/nbody.c). */
static grove_status check(const grove_nbody *sim, const grove_options *options)
{
    (void)sim, (void)options;
    return GROVE_OK;
}

/* Balance and migration: the particles stay where they are. */
static grove_status stay(grove_nbody *sim, int threads)
{
    (void)sim, (void)threads;
    return GROVE_OK;
}

static grove_status forces(grove_nbody *sim, const uint8_t *active, const grove_options *options)
{
    sim->engine.options = options; /* its cancel flag stops the walk */
    grove_status s = grove__gravity_eval_on(sim->forces ? sim->forces : &grove__nb_cpu, &sim->engine, sim->pos,
                                            sim->mass, sim->n, active, &sim->params.gravity, sim->acc, sim->pot,
                                            &sim->stats, grove__options(options).threads);
    sim->engine.options = NULL;
    return s;
}

static grove_status write(const grove_nbody *sim, const char *path,
                          grove_status (*write_whole)(const grove_nbody *whole, const char *path))
{
    return write_whole(sim, path);
}

/* Its rows are 0..n-1 in order. */
static grove_status gather(const grove_nbody *sim, double *pos, double *vel, double *mass, double *pot,
                           uint8_t *level)
{
    size_t n = sim->n;
    if (pos) memcpy(pos, sim->pos, 3 * n * sizeof *pos);
    if (vel) memcpy(vel, sim->vel, 3 * n * sizeof *vel);
    if (mass) memcpy(mass, sim->mass, n * sizeof *mass);
    if (pot) memcpy(pot, sim->pot, n * sizeof *pot);
    if (level) memcpy(level, sim->level, n);
    return GROVE_OK;
}

static void load(const grove_nbody *sim, grove_nbody_rank_stats *out) { out->particles = sim->n; }

static void release(grove_nbody *sim) { (void)sim; }

const grove__nbody_ranks grove__nbody_one_process = {
    .distributed = false,
    .total = total,
    .sum = over_ranks,
    .max = over_ranks,
    .any = any,
    .agree = agree,
    .check = check,
    .balance = stay,
    .migrate = stay,
    .forces = forces,
    .write = write,
    .gather = gather,
    .load = load,
    .release = release,
};
