/* The simulation handle: state in input order, the force engine reused
 * between steps, and the kick-drift-kick leapfrog:
 *   v += a dt/2;  x += v dt;  a = F(x);  v += a dt/2
 * The accelerations at the end of a step are those at the start of the
 * next, so each step costs one force evaluation. Block steps (block.c)
 * run the same three operations per particle on its own step. */
#include "nbody.h"
#include "sim_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void grove_nbody_params_init(grove_nbody_params *p)
{
    if (!p) return;
    grove_gravity_params_init(&p->gravity);
    p->dt = 1.0 / 128;
    p->eta = 0;
    p->conserve_momentum = 1;
    p->timestep = GROVE_TIMESTEP_SHARED;
    p->max_level = 20;
}

grove_status grove__nbody_params(const grove_nbody_params *in, grove_nbody_params *out)
{
    grove_nbody_params p;
    grove_nbody_params_init(&p);
    if (in) p = *in; /* in may alias out */
    *out = p;
    grove_gravity_params g;
    grove_status s = grove__gravity_params(&out->gravity, &g);
    if (s != GROVE_OK) return s;
    out->gravity = g;
    if (!(out->dt > 0) || !isfinite(out->dt))
        return grove__fail(GROVE_INVALID_ARGUMENT, "nbody: dt must be finite and > 0, got %g", out->dt);
    if (!(out->eta >= 0) || !isfinite(out->eta))
        return grove__fail(GROVE_INVALID_ARGUMENT, "nbody: eta must be finite and >= 0, got %g", out->eta);
    if ((unsigned)out->timestep > GROVE_TIMESTEP_BLOCK)
        return grove__fail(GROVE_INVALID_ARGUMENT, "nbody: timestep must be shared, adaptive or block (0..2), got %d",
                           (int)out->timestep);
    if (out->max_level < 0 || out->max_level > GROVE_NBODY_MAX_LEVEL)
        return grove__fail(GROVE_INVALID_ARGUMENT, "nbody: max_level must be 0..%d, got %d", GROVE_NBODY_MAX_LEVEL,
                           out->max_level);
    /* Callers from before the timestep field asked for the adaptive step
     * with eta > 0 alone; the validated params say so explicitly. */
    if (out->timestep == GROVE_TIMESTEP_SHARED && out->eta > 0) out->timestep = GROVE_TIMESTEP_ADAPTIVE;
    if (out->timestep != GROVE_TIMESTEP_SHARED && out->eta == 0) out->eta = GROVE_NBODY_ETA_DEFAULT;
    return GROVE_OK;
}

bool grove__nbody_arrays(grove_nbody *sim, size_t n)
{
    size_t bytes;
    if (!grove__mul_size(n, 11 * sizeof(double) + sizeof(int64_t), &bytes)) return false;
    double *state = grove__malloc(n ? 11 * n * sizeof *state : 1, "nbody state");
    uint8_t *level = grove__calloc(2 * n + 1, 1, "nbody levels");
    int64_t *row = grove__malloc((n ? n : 1) * sizeof *row, "nbody rows");
    if (!state || !level || !row) {
        grove__free(state);
        grove__free(level);
        grove__free(row);
        return false;
    }
    grove__free(sim->state);
    grove__free(sim->level);
    grove__free(sim->row);
    grove__nbody_place(sim, state, level, row, n);
    return true;
}

void grove__nbody_place(grove_nbody *sim, double *state, uint8_t *level, int64_t *row, size_t n)
{
    sim->state = state;
    sim->level = level;
    sim->row = row;
    sim->active = level + n;
    sim->n = n;
    sim->pos = state;
    sim->vel = sim->pos + 3 * n;
    sim->mass = sim->vel + 3 * n;
    sim->acc = sim->mass + n;
    sim->pot = sim->acc + 3 * n;
}

grove_status grove__nbody_alloc(size_t n, const grove_nbody_params *p, grove_nbody **out)
{
    *out = NULL;
    size_t bytes;
    if (!grove__mul_size(n, 11 * sizeof(double) + sizeof(int64_t), &bytes))
        return grove__fail(GROVE_TOO_LARGE, "nbody: %zu particles overflow the address space", n);
    grove_nbody *sim = grove__calloc(1, sizeof *sim, "nbody handle");
    if (!sim) return GROVE_OUT_OF_MEMORY;
    if (!grove__nbody_arrays(sim, n)) {
        grove__free(sim);
        return GROVE_OUT_OF_MEMORY;
    }
    for (size_t i = 0; i < n; i++) sim->row[i] = (int64_t)i;
    sim->params = *p;
    sim->ranks = &grove__nbody_one_process;
    *out = sim;
    return GROVE_OK;
}

/* The largest |v_i| of m values (0 for none). */
static double largest_magnitude(const double *v, size_t m)
{
    double top = 0;
    for (size_t i = 0; i < m; i++) top = fabs(v[i]) > top ? fabs(v[i]) : top;
    return top;
}

/* 2^-e with 2^e near the largest |v_i| (on every rank): values times it
 * are at most 1, so products of a few of them neither overflow nor (for
 * the values that matter) underflow; scaling by a power of two keeps their
 * bits. */
static double unit_of(const grove_nbody *sim, const double *v, size_t m, int *e)
{
    double top = largest_magnitude(v, m);
    sim->ranks->max(sim, &top, 1);
    *e = grove__unit_exponent(top);
    return ldexp(1.0, -*e);
}

/* unit_of for the masses, positions, velocities and potentials at once
 * (one reduction): units u[4], exponents e[4]. */
static void state_units(const grove_nbody *sim, double u[4], int e[4])
{
    size_t n = sim->n;
    double top[4] = {largest_magnitude(sim->mass, n), largest_magnitude(sim->pos, 3 * n),
                     largest_magnitude(sim->vel, 3 * n), largest_magnitude(sim->pot, n)};
    sim->ranks->max(sim, top, 4);
    for (int k = 0; k < 4; k++) {
        e[k] = grove__unit_exponent(top[k]);
        u[k] = ldexp(1.0, -e[k]);
    }
}

/* Subtract the mass-weighted mean acceleration, so that sum(m a) = 0 to
 * rounding. The masses are scaled by a power of two (the same bits of the
 * mean, without overflow of m a). The sums run in particle order: the
 * same bits for any thread count. */
static void remove_net_force(grove_nbody *sim)
{
    int em;
    double unit = unit_of(sim, sim->mass, sim->n, &em), f[4] = {0, 0, 0, 0};
    for (size_t i = 0; i < sim->n; i++) {
        double m = sim->mass[i] * unit;
        f[3] += m;
        for (int a = 0; a < 3; a++) f[a] += m * sim->acc[3 * i + a];
    }
    sim->ranks->sum(sim, f, 4);
    double mass = f[3];
    if (!(mass > 0)) return;
    for (int a = 0; a < 3; a++) f[a] /= mass;
    for (size_t i = 0; i < sim->n; i++)
        for (int a = 0; a < 3; a++) sim->acc[3 * i + a] -= f[a];
}

grove_status grove__nbody_forces(grove_nbody *sim, const uint8_t *active, const grove_options *options)
{
    if (sim->ranks->total(sim) == 0) return GROVE_OK;
    grove_status s = sim->ranks->forces(sim, active, options);
    /* The net force is that of all particles on each other: with a part of
     * them active it is not defined, so it is removed only when all are. */
    if (s == GROVE_OK && !active && sim->params.conserve_momentum) remove_net_force(sim);
    return s;
}

grove_status grove__nbody_begin(grove_points positions, const double *vel, const double *mass,
                                const grove_nbody_params *params, size_t first, grove_nbody **sim)
{
    *sim = NULL;
    grove_nbody_params p;
    const double *pos = NULL;
    double *copy = NULL;
    size_t n = positions.n;
    grove_status s = grove__nbody_params(params, &p);
    if (s == GROVE_OK) s = grove__gravity_input(positions, mass, first, &pos, &copy);
    if (s == GROVE_OK && n && !vel) s = grove__fail(GROVE_INVALID_ARGUMENT, "nbody: velocity array is NULL");
    for (size_t i = 0; s == GROVE_OK && i < 3 * n; i++)
        if (!isfinite(vel[i]))
            s = grove__fail(GROVE_INVALID_ARGUMENT, "nbody: velocity %zu of particle %zu is not finite", i % 3,
                            first + i / 3);
    if (s == GROVE_OK) s = grove__nbody_alloc(n, &p, sim);
    if (s == GROVE_OK && n) {
        memcpy((*sim)->pos, pos, 3 * n * sizeof *pos);
        memcpy((*sim)->vel, vel, 3 * n * sizeof *vel);
        memcpy((*sim)->mass, mass, n * sizeof *mass);
    }
    grove__free(copy);
    return s;
}

grove_status grove__nbody_ready(grove_nbody *sim, grove_status s, const grove_options *options, bool fresh,
                                grove_nbody **out)
{
    if (s == GROVE_OK) s = grove__nbody_forces(sim, NULL, options);
    if (s != GROVE_OK) {
        grove_nbody_free(sim);
        return s;
    }
    if (fresh) sim->evaluations = sim->ranks->total(sim);
    *out = sim;
    return GROVE_OK;
}

grove_status grove__nbody_create_local(grove_points positions, const double *vel, const double *mass,
                                       const grove_nbody_params *params, const grove_options *options,
                                       grove_nbody **out)
{
    grove__clear_error();
    if (!out) return grove__fail(GROVE_INVALID_ARGUMENT, "nbody: out is NULL");
    *out = NULL;
    grove_nbody *sim;
    grove_status s = grove__nbody_begin(positions, vel, mass, params, 0, &sim);
    return grove__nbody_ready(sim, s, options, true, out);
}

void grove_nbody_free(grove_nbody *sim)
{
    if (!sim) return;
    grove__gravity_free(&sim->engine);
    sim->ranks->release(sim);
    grove__free(sim->app);
    grove__free(sim->state);
    grove__free(sim->level);
    grove__free(sim->row);
    grove__free(sim);
}

/* The largest |a_i|, from components scaled by a power of two so that
 * their squares neither overflow nor underflow (the same bits as the
 * plain formula wherever that one is finite). */
static double largest_acceleration(const grove_nbody *sim)
{
    int e;
    double unit = unit_of(sim, sim->acc, 3 * sim->n, &e), amax2 = 0;
    for (size_t i = 0; i < sim->n; i++) {
        const double *a = sim->acc + 3 * i;
        double x = a[0] * unit, y = a[1] * unit, z = a[2] * unit, a2 = x * x + y * y + z * z;
        if (a2 > amax2) amax2 = a2;
    }
    sim->ranks->max(sim, &amax2, 1);
    return ldexp(sqrt(amax2), e);
}

/* Without softening, the adaptive step takes 0.01 of the virial radius
 * r_V = G M^2 / (-2 W) = G M^2 / (-sum m_i phi_i) as its length: a length
 * of the system's own (r_V = 1 in Henon units, so this is the 0.01 of
 * Henon units in any units). Masses and potentials are scaled by powers of
 * two so that no product overflows. 0 when there is no potential energy. */
static double virial_radius(const grove_nbody *sim)
{
    int em, ep;
    double mu = unit_of(sim, sim->mass, sim->n, &em), pu = unit_of(sim, sim->pot, sim->n, &ep), sums[2] = {0, 0};
    for (size_t i = 0; i < sim->n; i++) {
        double m = sim->mass[i] * mu;
        sums[0] += m;
        sums[1] -= m * (sim->pot[i] * pu);
    }
    sim->ranks->sum(sim, sums, 2);
    double M = sums[0], w = sums[1];
    if (!(w > 0)) return 0;
    double G = sim->params.gravity.G;
    int eg = grove__unit_exponent(G);
    return ldexp(ldexp(G, -eg) * (M * M / w), eg + em - ep);
}

double grove__nbody_eps(const grove_nbody *sim)
{
    double soft = sim->params.gravity.softening;
    return soft > 0 ? soft : 0.01 * virial_radius(sim);
}

double grove__nbody_magnitude(const double a[3])
{
    double top = largest_magnitude(a, 3);
    if (!(top > 0)) return 0;
    double x = a[0] / top, y = a[1] / top, z = a[2] / top;
    return top * sqrt(x * x + y * y + z * z);
}

/* The step length: dt, or for the adaptive step the global step from the
 * largest acceleration now. */
static double step_length(const grove_nbody *sim)
{
    const grove_nbody_params *p = &sim->params;
    if (p->timestep != GROVE_TIMESTEP_ADAPTIVE) return p->dt;
    double amax = largest_acceleration(sim);
    double eps = grove__nbody_eps(sim);
    double dt = amax > 0 && eps > 0 ? p->eta * sqrt(eps / amax) : p->dt;
    return dt < p->dt ? dt : p->dt;
}

/* y += h x over m values: the kick (v += a h) and the drift (x += v h).
 * Returns the lowest index whose new value is not finite (a step too large
 * for the state), or m when all are. */
size_t grove__nbody_axpy(double *y, const double *x, double h, size_t m, int threads)
{
    size_t bad = m;
#pragma omp parallel for num_threads(threads) schedule(static) reduction(min : bad)
    for (size_t i = 0; i < m; i++) {
        y[i] += h * x[i];
        if (!isfinite(y[i]) && i < bad) bad = i;
    }
    return bad;
}

/* A step that went wrong leaves the state part advanced: the handle can
 * only be read or freed from then on. */
grove_status grove__nbody_step_failed(grove_nbody *sim, grove_status s)
{
    sim->failed = true;
    char where[64];
    snprintf(where, sizeof where, "nbody: step %llu", (unsigned long long)(sim->step + 1));
    grove__error_prefix(where);
    return s;
}

grove_status grove__nbody_not_finite(grove_nbody *sim, size_t index, const char *what, double dt)
{
    grove__fail(GROVE_INVALID_ARGUMENT, "particle %lld's %s is not finite (the step dt = %g is too large?)",
                (long long)sim->row[index / 3], what, dt);
    return grove__nbody_step_failed(sim, GROVE_INVALID_ARGUMENT);
}

grove_status grove__nbody_finite(grove_nbody *sim, size_t bad, size_t m, const char *what, double dt)
{
    grove_status own = bad < m ? grove__nbody_not_finite(sim, bad, what, dt) : GROVE_OK;
    grove_status all = sim->ranks->agree(sim, own);
    /* The other ranks' handles fail too: every rank refuses the next step. */
    return own == GROVE_OK && all != GROVE_OK ? grove__nbody_step_failed(sim, all) : all;
}

/* One kick-drift-kick step of length dt for all particles. A state that
 * stops being finite fails the handle; GROVE_CANCELLED from the force
 * evaluation leaves positions and velocities advanced, for the caller to
 * put back. */
static grove_status kick_drift_kick(grove_nbody *sim, double dt, const grove_options *options, int threads)
{
    size_t m = 3 * sim->n;
    grove_status s = grove__nbody_finite(sim, grove__nbody_axpy(sim->vel, sim->acc, 0.5 * dt, m, threads), m,
                                         "velocity", dt);
    if (s == GROVE_OK)
        s = grove__nbody_finite(sim, grove__nbody_axpy(sim->pos, sim->vel, dt, m, threads), m, "position", dt);
    if (s != GROVE_OK) return s;
    if ((s = sim->ranks->migrate(sim, threads)) != GROVE_OK) return grove__nbody_step_failed(sim, s);
    m = 3 * sim->n;
    s = grove__nbody_forces(sim, NULL, options);
    if (s == GROVE_CANCELLED) return s;
    if (s != GROVE_OK) return grove__nbody_step_failed(sim, s);
    sim->evaluations += sim->ranks->total(sim);
    return grove__nbody_finite(sim, grove__nbody_axpy(sim->vel, sim->acc, 0.5 * dt, m, threads), m, "velocity", dt);
}

/* What a step that may be cancelled keeps to put back: the positions and
 * velocities (6n doubles) for the shared and adaptive steps, which leave
 * acc and pot unchanged when cancelled; the whole state (11n), the levels
 * and the count for block steps, whose sub-steps write acc and pot. */
typedef struct step_start {
    double *state;
    uint8_t *level;
    size_t words;
    uint64_t evaluations;
} step_start;

static bool keep_start(const grove_nbody *sim, step_start *st)
{
    bool block = sim->params.timestep == GROVE_TIMESTEP_BLOCK;
    st->words = (block ? 11 : 6) * sim->n;
    st->state = grove__malloc(st->words * sizeof *st->state + (block ? sim->n : 0), "nbody step start");
    st->level = block && st->state ? (uint8_t *)(st->state + st->words) : NULL;
    return st->state != NULL;
}

static void save_start(const grove_nbody *sim, step_start *st)
{
    memcpy(st->state, sim->state, st->words * sizeof *st->state);
    if (st->level) memcpy(st->level, sim->level, sim->n);
    st->evaluations = sim->evaluations;
}

static grove_status put_back(grove_nbody *sim, const step_start *st)
{
    memcpy(sim->state, st->state, st->words * sizeof *st->state);
    if (st->level) memcpy(sim->level, st->level, sim->n);
    sim->evaluations = st->evaluations;
    return grove__fail(GROVE_CANCELLED, "nbody: cancelled in step %llu (the state is that before it)",
                       (unsigned long long)(sim->step + 1));
}

static grove_status nbody_steps(grove_nbody *sim, uint64_t steps, const grove_options *options);

grove_status grove__nbody_step(grove_nbody *sim, uint64_t steps, const grove_options *options)
{
    return grove__nbody_step_on(&grove__nb_cpu, sim, steps, options);
}

grove_status grove__nbody_step_on(const grove__nb_engine *e, grove_nbody *sim, uint64_t steps,
                                  const grove_options *options)
{
    grove__clear_error();
    if (sim) sim->forces = e;
    grove_status s = nbody_steps(sim, steps, options);
    if (sim) sim->forces = NULL;
    return s;
}

/* grove_nbody_step's steps, their forces from sim->forces. */
static grove_status nbody_steps(grove_nbody *sim, uint64_t steps, const grove_options *options)
{
    if (!sim) return grove__fail(GROVE_INVALID_ARGUMENT, "nbody: sim is NULL");
    if (sim->failed)
        return grove__fail(GROVE_INVALID_ARGUMENT, "nbody: step %llu failed, so the state is not valid to go on from",
                           (unsigned long long)(sim->step + 1));
    grove_status s = sim->ranks->check(sim, options);
    if (s != GROVE_OK) return s;
    /* With a cancel flag the force evaluation can stop inside a step: what
     * the step started from is kept to be put back, so a cancelled step
     * leaves the state as it was (a distributed step stops only at its
     * start: its particles may have moved between ranks since). */
    step_start start = {NULL, NULL, 0, 0};
    if (options && options->cancel && sim->n && !sim->ranks->distributed && !keep_start(sim, &start))
        return GROVE_OUT_OF_MEMORY;
    for (uint64_t k = 0; k < steps; k++) {
        /* Every rank stops at the same step (a signal reaches them apart). */
        if (sim->ranks->any(sim, grove__cancelled(options))) {
            s = grove__fail(GROVE_CANCELLED, "nbody: cancelled after %llu steps", (unsigned long long)k);
            break;
        }
        /* The default thread count follows the cores free at each step. */
        int threads = grove__options(options).threads;
        s = sim->ranks->balance(sim, threads);
        if (s != GROVE_OK) {
            s = grove__nbody_step_failed(sim, s);
            break;
        }
        if (start.state) save_start(sim, &start);
        double dt = step_length(sim);
        if (!(dt > 0)) {
            grove__fail(GROVE_INVALID_ARGUMENT, "the adaptive step eta sqrt(eps / max |a|) underflows to 0");
            s = grove__nbody_step_failed(sim, GROVE_INVALID_ARGUMENT);
            break;
        }
        s = sim->params.timestep == GROVE_TIMESTEP_BLOCK ? grove__nbody_block_step(sim, options, threads)
                                                          : kick_drift_kick(sim, dt, options, threads);
        /* A cancel flag always comes with a start (n > 0: n = 0 never evaluates). */
        if (s == GROVE_CANCELLED) s = put_back(sim, &start);
        if (s != GROVE_OK) break;
        sim->time += dt;
        sim->step++;
        grove__progress(options, "nbody", (double)(k + 1) / (double)steps);
    }
    grove__free(start.state);
    return s;
}

/* A scaled sum back in the caller's units; false when it is beyond the
 * largest double. */
static bool unscale(double sum, int e, double *out)
{
    *out = ldexp(sum, e);
    return isfinite(*out);
}

grove_status grove_nbody_diagnostics(const grove_nbody *sim, grove_nbody_diag *d)
{
    grove__clear_error();
    if (!sim || !d) return grove__fail(GROVE_INVALID_ARGUMENT, "nbody: %s is NULL", sim ? "out" : "sim");
    memset(d, 0, sizeof *d);
    d->time = sim->time;
    d->step = sim->step;
    /* Masses, positions, velocities and potentials scaled by powers of two
     * near their largest values, so that no product over- or underflows
     * in any units; each sum is scaled back (exactly) at the end. */
    size_t n = sim->n;
    double u[4];
    int e[4];
    state_units(sim, u, e);
    double mu = u[0], xu = u[1], vu = u[2], pu = u[3];
    int em = e[0], ex = e[1], ev = e[2], ep = e[3];
    /* M, K, W, P[3], C[3], L[3]: sequential sums in particle order (the
     * same bits for any thread count), then over the ranks. */
    double sum[12] = {0};
    double *P = sum + 3, *C = sum + 6, *L = sum + 9;
    for (size_t i = 0; i < n; i++) {
        double x[3], v[3], m = sim->mass[i] * mu;
        for (int a = 0; a < 3; a++) {
            x[a] = sim->pos[3 * i + a] * xu;
            v[a] = sim->vel[3 * i + a] * vu;
        }
        sum[0] += m;
        sum[1] += 0.5 * m * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
        sum[2] += 0.5 * m * (sim->pot[i] * pu);
        for (int a = 0; a < 3; a++) {
            P[a] += m * v[a];
            C[a] += m * x[a];
        }
        L[0] += m * (x[1] * v[2] - x[2] * v[1]);
        L[1] += m * (x[2] * v[0] - x[0] * v[2]);
        L[2] += m * (x[0] * v[1] - x[1] * v[0]);
    }
    sim->ranks->sum(sim, sum, 12);
    double M = sum[0], K = sum[1], W = sum[2];
    const char *beyond = NULL;
    if (!unscale(M, em, &d->mass)) beyond = "total mass";
    else if (!unscale(K, em + 2 * ev, &d->kinetic)) beyond = "kinetic energy";
    else if (!unscale(W, em + ep, &d->potential)) beyond = "potential energy";
    for (int a = 0; a < 3 && !beyond; a++) {
        if (!unscale(P[a], em + ev, &d->momentum[a])) beyond = "momentum";
        else if (!unscale(L[a], em + ex + ev, &d->angular_momentum[a])) beyond = "angular momentum";
        else if (M > 0) d->com[a] = ldexp(C[a] / M, ex);
    }
    if (beyond)
        return grove__fail(GROVE_INVALID_ARGUMENT, "nbody: the %s is beyond the largest double in these units", beyond);
    /* K >= 0 >= W, both finite: the sum is finite. */
    d->energy = d->kinetic + d->potential;
    return GROVE_OK;
}

grove_status grove_nbody_stats(const grove_nbody *sim, grove_gravity_stats *out)
{
    grove__clear_error();
    if (!sim || !out) return grove__fail(GROVE_INVALID_ARGUMENT, "nbody: %s is NULL", sim ? "out" : "sim");
    *out = sim->stats;
    return GROVE_OK;
}

bool grove__nbody_distributed(const grove_nbody *sim) { return sim->ranks->distributed; }

size_t grove_nbody_count(const grove_nbody *sim) { return sim ? sim->n : 0; }
size_t grove_nbody_total(const grove_nbody *sim) { return sim ? sim->ranks->total(sim) : 0; }
const int64_t *grove_nbody_rows(const grove_nbody *sim) { return sim ? sim->row : NULL; }
const double *grove_nbody_positions(const grove_nbody *sim) { return sim ? sim->pos : NULL; }
const double *grove_nbody_velocities(const grove_nbody *sim) { return sim ? sim->vel : NULL; }
const double *grove_nbody_masses(const grove_nbody *sim) { return sim ? sim->mass : NULL; }
const double *grove_nbody_accelerations(const grove_nbody *sim) { return sim ? sim->acc : NULL; }
const double *grove_nbody_potentials(const grove_nbody *sim) { return sim ? sim->pot : NULL; }
const grove_nbody_params *grove_nbody_get_params(const grove_nbody *sim) { return sim ? &sim->params : NULL; }
const uint8_t *grove_nbody_levels(const grove_nbody *sim) { return sim ? sim->level : NULL; }
uint64_t grove_nbody_force_evaluations(const grove_nbody *sim) { return sim ? sim->evaluations : 0; }

grove_status grove_nbody_gather(const grove_nbody *sim, double *pos, double *vel, double *mass, double *pot,
                                uint8_t *level)
{
    grove__clear_error();
    if (!sim) return grove__fail(GROVE_INVALID_ARGUMENT, "nbody gather: sim is NULL");
    return sim->ranks->gather(sim, pos, vel, mass, pot, level);
}

void grove_nbody_load(const grove_nbody *sim, grove_nbody_rank_stats *out)
{
    if (!out) return;
    memset(out, 0, sizeof *out);
    if (sim) sim->ranks->load(sim, out);
}

void grove_nbody_level_counts(const grove_nbody *sim, uint64_t *counts)
{
    double c[GROVE_NBODY_MAX_LEVEL + 1] = {0}; /* exact: at most 2^32 particles */
    for (size_t i = 0; sim && i < sim->n; i++) c[sim->level[i]]++;
    if (sim) sim->ranks->sum(sim, c, GROVE_NBODY_MAX_LEVEL + 1);
    for (int k = 0; k <= GROVE_NBODY_MAX_LEVEL; k++) counts[k] = (uint64_t)c[k];
}

grove_status grove_nbody_set_app_data(grove_nbody *sim, const void *data, size_t bytes)
{
    grove__clear_error();
    if (!sim || (!data && bytes))
        return grove__fail(GROVE_INVALID_ARGUMENT, "nbody: %s is NULL", sim ? "data" : "sim");
    if (bytes > GROVE_NBODY_APP_DATA_MAX)
        return grove__fail(GROVE_INVALID_ARGUMENT, "nbody: %zu bytes of application data; at most %d are kept",
                           bytes, GROVE_NBODY_APP_DATA_MAX);
    unsigned char *copy = NULL;
    if (bytes) {
        copy = grove__malloc(bytes, "nbody application data");
        if (!copy) return GROVE_OUT_OF_MEMORY;
        memcpy(copy, data, bytes);
    }
    grove__free(sim->app);
    sim->app = copy;
    sim->app_bytes = bytes;
    return GROVE_OK;
}

const void *grove_nbody_app_data(const grove_nbody *sim, size_t *bytes)
{
    if (bytes) *bytes = sim ? sim->app_bytes : 0;
    return sim ? sim->app : NULL;
}
