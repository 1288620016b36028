/* Block time steps (Bonsai's and Gadget-2's individual power-of-two
 * steps): particle i is on level k_i in 0..K (K = max_level) with step
 * dt / 2^k_i. Time inside one largest step dt is an integer count of
 * ticks dt / 2^K, so every comparison of times is exact; level k steps
 * 2^(K-k) ticks and a particle on it is active at the ticks that step
 * divides. Kick-drift-kick, per particle on its own step:
 *   at a tick t: each active particle picks its level from |a| (finer
 *     always; coarser only to a level whose step divides t, so that it
 *     stays synchronised) and gets its opening half kick;
 *   every particle drifts to t' = the next tick any occupied level ends
 *     (inactive ones are predicted to t' that way);
 *   forces for the particles active at t' (the tree from all positions,
 *     groups from the active ones only) and their closing half kick.
 * The kicks and the drift are the shared step's operations in its order,
 * so with every particle on one level a largest step is bit for bit a
 * shared step of dt. */
#include "sim_internal.h"

#include <math.h>

/* Ticks in a step of level k. */
static uint64_t level_ticks(int k, int K) { return UINT64_C(1) << (K - k); }

/* The level the criterion asks for: the coarsest k whose step dt / 2^k is
 * at most eta sqrt(eps / |a|) (K when none is; 0 when |a| or eps is 0). */
static int wanted_level(const double a[3], double dt, double eta, double eps, int K)
{
    double mag = grove__nbody_magnitude(a);
    if (!(mag > 0) || !(eps > 0)) return 0;
    double want = eta * sqrt(eps / mag);
    int k = 0;
    while (k < K && ldexp(dt, -k) > want) k++;
    return k;
}

/* The new level of particle i, active at tick t: the wanted one if it is
 * finer than its level now (t is a multiple of its step now, so of any
 * finer one); else the coarsest between the two whose step divides t. */
static int next_level(int now, int want, uint64_t t, int K)
{
    while (want < now && t % level_ticks(want, K) != 0) want++;
    return want;
}

/* Levels for the particles active at t, chosen from their accelerations
 * now; returns the bit set of occupied levels (all particles, on every
 * rank). */
static uint32_t choose_levels(grove_nbody *sim, uint64_t t, double eps)
{
    const grove_nbody_params *p = &sim->params;
    int K = p->max_level;
    uint32_t occupied = 0;
    for (size_t i = 0; i < sim->n; i++) {
        if (sim->active[i]) {
            int want = wanted_level(sim->acc + 3 * i, p->dt, p->eta, eps, K);
            sim->level[i] = (uint8_t)next_level(sim->level[i], want, t, K);
        }
        occupied |= UINT32_C(1) << sim->level[i];
    }
    return sim->ranks->any(sim, occupied);
}

/* Flag the particles active at tick t; returns how many are (on every
 * rank). */
static size_t mark_active(grove_nbody *sim, uint64_t t)
{
    int K = sim->params.max_level;
    double count = 0; /* exact: at most 2^32 particles */
    for (size_t i = 0; i < sim->n; i++) {
        sim->active[i] = t % level_ticks(sim->level[i], K) == 0;
        count += sim->active[i];
    }
    sim->ranks->sum(sim, &count, 1);
    return (size_t)count;
}

/* v += a dt_i / 2 for the active particles (dt_i = dt / 2^k_i, the same
 * bits as the shared step's 0.5 dt on level 0); the lowest index of a
 * velocity that is not finite, or 3n. */
static size_t half_kick(grove_nbody *sim, int threads)
{
    size_t m = 3 * sim->n, bad = m;
    double dt = sim->params.dt;
#pragma omp parallel for num_threads(threads) schedule(static) reduction(min : bad)
    for (size_t i = 0; i < sim->n; i++) {
        if (!sim->active[i]) continue;
        double h = 0.5 * ldexp(dt, -(int)sim->level[i]);
        for (size_t c = 3 * i; c < 3 * i + 3; c++) {
            sim->vel[c] += h * sim->acc[c];
            if (!isfinite(sim->vel[c]) && c < bad) bad = c;
        }
    }
    return bad;
}

/* Forces for the particles active at a tick (count of them): all at once
 * through the plain evaluation when every one is, so that the one-level
 * case is the shared step's evaluation, net-force removal included. */
static grove_status active_forces(grove_nbody *sim, size_t count, const grove_options *options)
{
    grove_status s = grove__nbody_forces(sim, count == sim->ranks->total(sim) ? NULL : sim->active, options);
    if (s == GROVE_OK) sim->evaluations += count;
    return s;
}

grove_status grove__nbody_block_step(grove_nbody *sim, const grove_options *options, int threads)
{
    const grove_nbody_params *p = &sim->params;
    int K = p->max_level;
    uint64_t end = level_ticks(0, K);
    size_t m = 3 * sim->n;
    if (sim->ranks->total(sim) == 0) return GROVE_OK;
    /* The criterion's length from the potentials at the synchronised start
     * (mid-step only the active ones are current). */
    double eps = grove__nbody_eps(sim);
    mark_active(sim, 0); /* all: the step starts synchronised */
    for (uint64_t t = 0; t < end;) {
        uint32_t occupied = choose_levels(sim, t, eps);
        grove_status st = grove__nbody_finite(sim, half_kick(sim, threads), m, "velocity", p->dt);
        if (st != GROVE_OK) return st;
        /* The next tick is the next multiple of the finest occupied step
         * (every coarser step is a multiple of it). */
        int finest = K;
        while (!(occupied >> finest & 1)) finest--;
        uint64_t s = level_ticks(finest, K), next = (t / s + 1) * s;
        double h = ldexp((double)(next - t), -K) * p->dt;
        st = grove__nbody_finite(sim, grove__nbody_axpy(sim->pos, sim->vel, h, m, threads), m, "position", p->dt);
        if (st != GROVE_OK) return st;
        if ((st = sim->ranks->migrate(sim, threads)) != GROVE_OK) return grove__nbody_step_failed(sim, st);
        m = 3 * sim->n;
        st = active_forces(sim, mark_active(sim, next), options);
        if (st == GROVE_CANCELLED) return st;
        if (st != GROVE_OK) return grove__nbody_step_failed(sim, st);
        st = grove__nbody_finite(sim, half_kick(sim, threads), m, "velocity", p->dt);
        if (st != GROVE_OK) return st;
        t = next;
    }
    return GROVE_OK;
}
