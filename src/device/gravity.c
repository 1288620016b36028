/* grove_gravity's device path, and grove_nbody_step's (Bonsai's group
 * walk; kernels in kernels/gravity.h): the calls' checks, units, tree,
 * moments, groups and integration are the CPU's (src/nbody/gravity.c,
 * sim.c; a step's force evaluations, each one round trip to the device),
 * with the forces computed by this engine: the tree (cells, centres of mass, opening radii, single-precision
 * moments), the particles and the groups are uploaded, gravity_walk runs
 * in launches of as many groups as there is walk scratch for (the cancel
 * flag is read between launches), and the results and interaction counts
 * come back. A group whose level list outgrew its scratch is walked by
 * the host, as the CPU walks every group. theta = 0 is gravity_direct,
 * the double-precision direct sum.
 *
 * Device memory: per cell 92 bytes, per particle 68 (positions and masses
 * in, accelerations and potentials out, the sink list), per group 24, and
 * the walk scratch: 2 x LEVEL_CAP x 4 bytes per work-group in flight (at
 * most options->memory_budget when that is set). */
#include "device.h"
#include "entry.h"
#include "../nbody/nbody_internal.h"

#include <string.h>

/* kernels/gravity.h's most sinks per group; the entries of one level's
 * list in a work-group's scratch. */
enum { GRAV_GROUP_MAX = 256, LEVEL_CAP = 16384 };

typedef struct dev_gravity {
    grove_device kind;
    grove__device *dev; /* NULL until the first evaluation */
} dev_gravity;

/* The groups the device left to the host (flagged in overflow), as the
 * CPU computes them. */
static grove_status host_groups(grove__gravity *g, const uint32_t *overflow, double theta, double eps2, double *pp,
                                double *pc)
{
    grove__nb_kernels kernels;
    grove__nb_kernels_pick(&kernels);
    for (size_t k = 0; k < g->ngroups; k++)
        if (overflow[k] && !grove__gravity_group(g, k, theta, eps2, NULL, 0, &kernels, &g->lists[0], pp, pc))
            return grove__fail(GROVE_OUT_OF_MEMORY, "gravity: out of memory for the interaction lists");
    return GROVE_OK;
}

/* The buffers of one evaluation. */
typedef struct grav_bufs {
    grove__dmem cells, cm, rc2, fmom, x, sink, group, out, tally, overflow, scratch;
} grav_bufs;

static void grav_free(grove__device *d, grav_bufs *b)
{
    grove__dmem *all[] = {&b->cells, &b->cm,  &b->rc2,   &b->fmom,     &b->x,      &b->sink,
                          &b->group, &b->out, &b->tally, &b->overflow, &b->scratch};
    for (size_t k = 0; k < sizeof all / sizeof *all; k++) grove__dfree(d, all[k]);
}

static grove_status grav_upload(grove__device *d, const grove__gravity *g, grav_bufs *b)
{
    _Static_assert(sizeof(grove__ocell) == 5 * sizeof(uint32_t), "the kernels read cells as five 32-bit words");
    size_t cells = g->tree.ncells, cap = g->cap_n;
    grove_status s = grove__dupload(d, g->tree.cell, cells * sizeof *g->tree.cell, "gravity cells", &b->cells);
    if (s == GROVE_OK) s = grove__dupload(d, g->cm, 4 * cells * sizeof *g->cm, "gravity moments", &b->cm);
    if (s == GROVE_OK) s = grove__dupload(d, g->rc2, cells * sizeof *g->rc2, "gravity radii", &b->rc2);
    if (s == GROVE_OK) s = grove__dupload(d, g->fmom, 8 * cells * sizeof *g->fmom, "gravity moments", &b->fmom);
    if (s == GROVE_OK) s = grove__dupload(d, g->x, 4 * cap * sizeof *g->x, "gravity particles", &b->x);
    if (s == GROVE_OK) s = grove__dupload(d, g->sink, g->nsinks * sizeof *g->sink, "gravity sinks", &b->sink);
    if (s == GROVE_OK)
        s = grove__dupload(d, g->group, (g->ngroups + 1) * sizeof *g->group, "gravity groups", &b->group);
    /* The results' rows that are not sinks keep what the host has there. */
    if (s == GROVE_OK) s = grove__dupload(d, g->out, 4 * cap * sizeof *g->out, "gravity results", &b->out);
    return s;
}

/* gravity_direct over every group (theta = 0). */
static grove_status direct(grove__device *d, grove__gravity *g, grav_bufs *b, uint32_t wg, double eps2,
                           const grove_options *options)
{
    uint64_t cap = g->cap_n;
    uint32_t n = (uint32_t)g->tree.n;
    grove_status s = GROVE_OK;
    for (size_t g0 = 0; s == GROVE_OK && g0 < g->ngroups; g0 += 4096) {
        if (grove__cancelled(options)) return grove__fail(GROVE_CANCELLED, "gravity: cancelled");
        uint32_t first = (uint32_t)g0;
        grove__karg args[] = {GROVE__KVAL(first),     grove__kbuf(&b->x),     GROVE__KVAL(cap),
                              GROVE__KVAL(n),         grove__kbuf(&b->sink),  grove__kbuf(&b->group),
                              GROVE__KVAL(eps2),      grove__kbuf(&b->out),   grove__kbuf(&b->overflow)};
        size_t count = g->ngroups - g0 < 4096 ? g->ngroups - g0 : 4096;
        s = grove__dlaunch(d, "gravity_direct", count, wg, 0, args, sizeof args / sizeof *args);
        if (s == GROVE_OK) s = grove__dfinish(d);
    }
    return s;
}

/* gravity_walk over every group, `slots` groups per launch, each with a
 * scratch of 2 level_cap entries. */
static grove_status walk(grove__device *d, grove__gravity *g, grav_bufs *b, uint32_t wg, size_t slots,
                         uint32_t level_cap, double eps2, const grove_options *options)
{
    uint64_t cap = g->cap_n;
    float eps2f = (float)eps2;
    double wide_rc2 = GROVE__NB_WIDE_RC2;
    grove_status s = GROVE_OK;
    for (size_t g0 = 0; s == GROVE_OK && g0 < g->ngroups; g0 += slots) {
        if (grove__cancelled(options)) return grove__fail(GROVE_CANCELLED, "gravity: cancelled");
        uint32_t first = (uint32_t)g0;
        grove__karg args[] = {GROVE__KVAL(first),     grove__kbuf(&b->cells), grove__kbuf(&b->cm),
                              grove__kbuf(&b->rc2),   grove__kbuf(&b->fmom),  grove__kbuf(&b->x),
                              GROVE__KVAL(cap),       grove__kbuf(&b->sink),  grove__kbuf(&b->group),
                              GROVE__KVAL(eps2f),     GROVE__KVAL(eps2),      GROVE__KVAL(wide_rc2),
                              grove__kbuf(&b->scratch),
                              GROVE__KVAL(level_cap), grove__kbuf(&b->out),   grove__kbuf(&b->tally),
                              grove__kbuf(&b->overflow)};
        size_t count = g->ngroups - g0 < slots ? g->ngroups - g0 : slots;
        s = grove__dlaunch(d, "gravity_walk", count, wg, 0, args, sizeof args / sizeof *args);
        if (s == GROVE_OK) s = grove__dfinish(d);
        grove__progress(options, "gravity", (double)(g0 + count) / (double)g->ngroups);
    }
    return s;
}

/* The engine's forces (grove__nb_engine). */
static grove_status device_forces(void *ctx, grove__gravity *g, double theta, double eps2, int threads, double *pp,
                                  double *pc)
{
    (void)threads;
    dev_gravity *dg = ctx;
    if (!dg->dev) {
        grove_status s = grove__device_acquire(dg->kind, "gravity", &dg->dev);
        if (s != GROVE_OK) return s;
        if (!dg->dev->info.fp64)
            return grove__fail(GROVE_UNSUPPORTED, "gravity: device %s (%s) has no double precision, which the walk "
                               "needs", dg->kind == GROVE_DEVICE_CUDA ? "cuda" : "opencl", dg->dev->info.name);
    }
    grove__device *d = dg->dev;
    const grove_options *options = g->options;
    uint32_t largest = 1;
    for (size_t k = 0; k < g->ngroups; k++)
        if (g->group[k + 1] - g->group[k] > largest) largest = g->group[k + 1] - g->group[k];
    uint32_t wg = (largest + 31) / 32 * 32;
    wg = wg > d->info.max_group ? d->info.max_group : wg;
    if (largest > GRAV_GROUP_MAX || largest > wg)
        return grove__fail(GROVE_UNSUPPORTED, "gravity: the device takes groups of at most %u particles",
                           wg < GRAV_GROUP_MAX ? wg : GRAV_GROUP_MAX);
    grav_bufs b;
    memset(&b, 0, sizeof b);
    grove_status s = grav_upload(d, g, &b);
    size_t groups = g->ngroups;
    /* Groups in flight: 16 per compute unit, as many as the scratch takes
     * in a quarter of what is left of the device's budget and in
     * options->memory_budget when that is set (with less, each level list
     * holds fewer cells, and more groups are walked by the host). */
    size_t slots = d->info.units ? 16 * (size_t)d->info.units : 64, room = (d->budget - d->in_use) / 4;
    if (options && options->memory_budget && options->memory_budget < room) room = options->memory_budget;
    slots = slots > groups ? groups : slots;
    size_t fit = room / (2 * sizeof(uint32_t) * slots); /* level entries per slot */
    if (fit < 8) {
        fit = 8;
        slots = room / (16 * sizeof(uint32_t));
        slots = slots < 1 ? 1 : slots > groups ? groups : slots;
    }
    uint32_t level_cap = fit < LEVEL_CAP ? (uint32_t)fit : LEVEL_CAP;
    size_t per_slot = 2 * (size_t)level_cap * sizeof(uint32_t);
    if (s == GROVE_OK) s = grove__dalloc(d, groups * sizeof(uint32_t), "gravity host flags", &b.overflow);
    if (s == GROVE_OK && theta > 0) {
        s = grove__dalloc(d, 2 * groups * sizeof(double), "gravity counts", &b.tally);
        if (s == GROVE_OK) s = grove__dalloc(d, slots * per_slot, "gravity walk scratch", &b.scratch);
        if (s == GROVE_OK) s = walk(d, g, &b, wg, slots, level_cap, eps2, options);
    } else if (s == GROVE_OK) {
        s = direct(d, g, &b, wg, eps2, options);
    }
    if (s == GROVE_OK) s = grove__dread(d, &b.out, 0, g->out, 4 * g->cap_n * sizeof *g->out);
    /* The interaction counts of the groups the device computed, then the
     * host's groups as the CPU computes them. */
    double *tally = theta > 0 ? grove__malloc(2 * groups * sizeof *tally, "gravity counts") : NULL;
    uint32_t *host = grove__malloc(groups * sizeof *host, "gravity host flags");
    if (s == GROVE_OK && (!host || (theta > 0 && !tally))) s = GROVE_OUT_OF_MEMORY;
    if (s == GROVE_OK) s = grove__dread(d, &b.overflow, 0, host, groups * sizeof *host);
    if (s == GROVE_OK && theta > 0) s = grove__dread(d, &b.tally, 0, tally, 2 * groups * sizeof *tally);
    *pp = *pc = 0;
    for (size_t k = 0; s == GROVE_OK && k < groups; k++) {
        if (host[k]) continue;
        *pp += theta > 0 ? tally[2 * k] : (double)(g->group[k + 1] - g->group[k]) * (double)g->tree.n;
        *pc += theta > 0 ? tally[2 * k + 1] : 0;
    }
    if (s == GROVE_OK) s = host_groups(g, host, theta, eps2, pp, pc);
    grove__free(tally);
    grove__free(host);
    grav_free(d, &b);
    return s;
}

grove_status grove__device_nbody_step(grove_nbody *sim, uint64_t steps, const grove_options *options)
{
    grove_options cpu = *options;
    cpu.device = GROVE_DEVICE_CPU;
    dev_gravity dg = {grove__device_choose(options, grove_nbody_count(sim) >= ((size_t)1 << 17)), NULL};
    if (dg.kind == GROVE_DEVICE_CPU) return grove_nbody_step(sim, steps, &cpu);
    grove__nb_engine e = {device_forces, &dg};
    grove_status s = grove__nbody_step_on(&e, sim, steps, options);
    grove__device_release(dg.dev);
    return s;
}

grove_status grove__device_gravity(grove_points positions, const double *mass, const grove_gravity_params *params,
                                   double *acc, double *pot, grove_gravity_stats *stats, const grove_options *options)
{
    grove_options cpu = *options;
    cpu.device = GROVE_DEVICE_CPU;
    dev_gravity dg = {grove__device_choose(options, positions.n >= ((size_t)1 << 17)), NULL};
    if (dg.kind == GROVE_DEVICE_CPU) return grove_gravity(positions, mass, params, acc, pot, stats, &cpu);
    grove__nb_engine e = {device_forces, &dg};
    grove_status s = grove__gravity_on(&e, positions, mass, params, acc, pot, stats, options);
    grove__device_release(dg.dev);
    return s;
}
