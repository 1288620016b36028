/* The simulation handle: state in input order, the force engine reused
 * between steps, and the kick-drift-kick leapfrog:
 *   v += a dt/2;  x += v dt;  a = F(x);  v += a dt/2
 * The accelerations at the end of a step are those at the start of the
 * next, so each step costs one force evaluation. */
#include "sim_internal.h"

#include <math.h>
#include <string.h>

void grove_nbody_params_init(grove_nbody_params *p)
{
    if (!p) return;
    grove_gravity_params_init(&p->gravity);
    p->dt = 1.0 / 128;
    p->eta = 0;
    p->conserve_momentum = 1;
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
    return GROVE_OK;
}

grove_status grove__nbody_alloc(size_t n, const grove_nbody_params *p, grove_nbody **out)
{
    *out = NULL;
    size_t bytes;
    if (!grove__mul_size(n, 11 * sizeof(double), &bytes))
        return grove__fail(GROVE_TOO_LARGE, "nbody: %zu particles overflow the address space", n);
    grove_nbody *sim = grove__calloc(1, sizeof *sim, "nbody handle");
    if (!sim) return GROVE_OUT_OF_MEMORY;
    sim->state = grove__malloc(bytes ? bytes : 1, "nbody state");
    if (!sim->state) {
        grove__free(sim);
        return GROVE_OUT_OF_MEMORY;
    }
    sim->n = n;
    sim->params = *p;
    sim->pos = sim->state;
    sim->vel = sim->pos + 3 * n;
    sim->mass = sim->vel + 3 * n;
    sim->acc = sim->mass + n;
    sim->pot = sim->acc + 3 * n;
    *out = sim;
    return GROVE_OK;
}

/* Subtract the mass-weighted mean acceleration, so that sum(m a) = 0 to
 * rounding. The sums run in particle order: the same bits for any thread
 * count. */
static void remove_net_force(grove_nbody *sim)
{
    double f[3] = {0, 0, 0}, mass = 0;
    for (size_t i = 0; i < sim->n; i++) {
        double m = sim->mass[i];
        mass += m;
        for (int a = 0; a < 3; a++) f[a] += m * sim->acc[3 * i + a];
    }
    if (!(mass > 0)) return;
    for (int a = 0; a < 3; a++) f[a] /= mass;
    for (size_t i = 0; i < sim->n; i++)
        for (int a = 0; a < 3; a++) sim->acc[3 * i + a] -= f[a];
}

grove_status grove__nbody_forces(grove_nbody *sim, int threads)
{
    if (sim->n == 0) return GROVE_OK;
    grove_status s = grove__gravity_eval(&sim->engine, sim->pos, sim->mass, sim->n, &sim->params.gravity, sim->acc,
                                         sim->pot, &sim->stats, threads);
    if (s == GROVE_OK && sim->params.conserve_momentum) remove_net_force(sim);
    return s;
}

grove_status grove_nbody_create(size_t n, const double *pos, const double *vel, const double *mass,
                                const grove_nbody_params *params, const grove_options *options, grove_nbody **out)
{
    grove__clear_error();
    if (!out) return grove__fail(GROVE_INVALID_ARGUMENT, "nbody: out is NULL");
    *out = NULL;
    grove_nbody_params p;
    grove_status s = grove__nbody_params(params, &p);
    if (s == GROVE_OK) s = grove__gravity_check_input(pos, mass, n);
    if (s != GROVE_OK) return s;
    if (n && !vel) return grove__fail(GROVE_INVALID_ARGUMENT, "nbody: velocity array is NULL");
    for (size_t i = 0; i < 3 * n; i++)
        if (!isfinite(vel[i])) return grove__fail(GROVE_INVALID_ARGUMENT, "nbody: velocity is not finite");
    grove_nbody *sim;
    s = grove__nbody_alloc(n, &p, &sim);
    if (s != GROVE_OK) return s;
    if (n) {
        memcpy(sim->pos, pos, 3 * n * sizeof *pos);
        memcpy(sim->vel, vel, 3 * n * sizeof *vel);
        memcpy(sim->mass, mass, n * sizeof *mass);
    }
    s = grove__nbody_forces(sim, grove__options(options).threads);
    if (s != GROVE_OK) {
        grove_nbody_free(sim);
        return s;
    }
    *out = sim;
    return GROVE_OK;
}

void grove_nbody_free(grove_nbody *sim)
{
    if (!sim) return;
    grove__gravity_free(&sim->engine);
    grove__free(sim->state);
    grove__free(sim);
}

/* The step length: dt, or with eta > 0 the adaptive global step from the
 * largest acceleration now. */
static double step_length(const grove_nbody *sim)
{
    const grove_nbody_params *p = &sim->params;
    if (p->eta <= 0) return p->dt;
    double amax2 = 0;
    for (size_t i = 0; i < sim->n; i++) {
        const double *a = sim->acc + 3 * i;
        double a2 = a[0] * a[0] + a[1] * a[1] + a[2] * a[2];
        if (a2 > amax2) amax2 = a2;
    }
    double eps = p->gravity.softening > 0 ? p->gravity.softening : 0.01;
    double dt = amax2 > 0 ? p->eta * sqrt(eps / sqrt(amax2)) : p->dt;
    return dt < p->dt ? dt : p->dt;
}

/* y += h x over m values: the kick (v += a h) and the drift (x += v h). */
static void axpy(double *y, const double *x, double h, size_t m, int threads)
{
#pragma omp parallel for num_threads(threads) schedule(static)
    for (size_t i = 0; i < m; i++) y[i] += h * x[i];
}

grove_status grove_nbody_step(grove_nbody *sim, uint64_t steps, const grove_options *options)
{
    grove__clear_error();
    if (!sim) return grove__fail(GROVE_INVALID_ARGUMENT, "nbody: sim is NULL");
    int threads = grove__options(options).threads;
    for (uint64_t k = 0; k < steps; k++) {
        if (grove__cancelled(options)) return grove__fail(GROVE_CANCELLED, "nbody: cancelled after %llu steps",
                                                          (unsigned long long)k);
        double dt = step_length(sim);
        size_t m = 3 * sim->n;
        axpy(sim->vel, sim->acc, 0.5 * dt, m, threads);
        axpy(sim->pos, sim->vel, dt, m, threads);
        grove_status s = grove__nbody_forces(sim, threads);
        if (s != GROVE_OK) return s;
        axpy(sim->vel, sim->acc, 0.5 * dt, m, threads);
        sim->time += dt;
        sim->step++;
        grove__progress(options, "nbody", (double)(k + 1) / (double)steps);
    }
    return GROVE_OK;
}

grove_status grove_nbody_diagnostics(const grove_nbody *sim, grove_nbody_diag *d)
{
    grove__clear_error();
    if (!sim || !d) return grove__fail(GROVE_INVALID_ARGUMENT, "nbody: %s is NULL", sim ? "out" : "sim");
    memset(d, 0, sizeof *d);
    d->time = sim->time;
    d->step = sim->step;
    /* Sequential sums in particle order: the same bits for any thread count. */
    for (size_t i = 0; i < sim->n; i++) {
        const double *x = sim->pos + 3 * i, *v = sim->vel + 3 * i;
        double m = sim->mass[i];
        d->mass += m;
        d->kinetic += 0.5 * m * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
        d->potential += 0.5 * m * sim->pot[i];
        for (int a = 0; a < 3; a++) {
            d->momentum[a] += m * v[a];
            d->com[a] += m * x[a];
        }
        d->angular_momentum[0] += m * (x[1] * v[2] - x[2] * v[1]);
        d->angular_momentum[1] += m * (x[2] * v[0] - x[0] * v[2]);
        d->angular_momentum[2] += m * (x[0] * v[1] - x[1] * v[0]);
    }
    if (d->mass > 0)
        for (int a = 0; a < 3; a++) d->com[a] /= d->mass;
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

size_t grove_nbody_count(const grove_nbody *sim) { return sim ? sim->n : 0; }
const double *grove_nbody_positions(const grove_nbody *sim) { return sim ? sim->pos : NULL; }
const double *grove_nbody_velocities(const grove_nbody *sim) { return sim ? sim->vel : NULL; }
const double *grove_nbody_masses(const grove_nbody *sim) { return sim ? sim->mass : NULL; }
const double *grove_nbody_accelerations(const grove_nbody *sim) { return sim ? sim->acc : NULL; }
const double *grove_nbody_potentials(const grove_nbody *sim) { return sim ? sim->pot : NULL; }
const grove_nbody_params *grove_nbody_get_params(const grove_nbody *sim) { return sim ? &sim->params : NULL; }
