/* The force engine and grove_gravity on one process (src/dispatch/nbody.c
 * chooses it): tree, moments, groups, then one parallel loop over groups
 * (walk + evaluate), results scattered back to input order. Each group's
 * sinks are computed by one thread from read-only shared data, so the
 * output does not depend on the thread count or schedule. */
#include "nbody.h"
#include "nbody_internal.h"

#include <float.h>
#include <math.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

void grove_gravity_params_init(grove_gravity_params *p)
{
    if (!p) return;
    p->theta = 0.75;
    p->softening = 0;
    p->G = 1;
    p->leaf_size = 16;
    p->group_size = 64;
}

grove_status grove__gravity_params(const grove_gravity_params *in, grove_gravity_params *out)
{
    grove_gravity_params_init(out);
    if (in) *out = *in;
    if (!(out->theta >= 0 && out->theta <= 1))
        return grove__fail(GROVE_INVALID_ARGUMENT, "gravity: theta must be in [0, 1], got %g", out->theta);
    if (!(out->softening >= 0) || !isfinite(out->softening))
        return grove__fail(GROVE_INVALID_ARGUMENT, "gravity: softening must be finite and >= 0, got %g",
                           out->softening);
    if (!(out->G > 0) || !isfinite(out->G))
        return grove__fail(GROVE_INVALID_ARGUMENT, "gravity: G must be finite and > 0, got %g", out->G);
    if (out->leaf_size < 1 || out->leaf_size > 64)
        return grove__fail(GROVE_INVALID_ARGUMENT, "gravity: leaf_size must be 1..64, got %zu", out->leaf_size);
    if (out->group_size < 1 || out->group_size > 256)
        return grove__fail(GROVE_INVALID_ARGUMENT, "gravity: group_size must be 1..256, got %zu",
                           out->group_size);
    return GROVE_OK;
}

/* Check positions (finite) and masses (finite, >= 0); particle i is
 * named as row first + i of the whole input. */
static grove_status check_input(const double *pos, const double *mass, size_t n, size_t first)
{
    if (n && (!pos || !mass))
        return grove__fail(GROVE_INVALID_ARGUMENT, "gravity: %s is NULL", pos ? "mass" : "pos");
    for (size_t i = 0; i < n; i++) {
        for (int a = 0; a < 3; a++)
            if (!isfinite(pos[3 * i + a]))
                return grove__fail(GROVE_INVALID_ARGUMENT, "gravity: particle %zu, coordinate %d is not finite",
                                   first + i, a);
        if (!(mass[i] >= 0) || !isfinite(mass[i]))
            return grove__fail(GROVE_INVALID_ARGUMENT, "gravity: particle %zu has mass %g (must be finite, >= 0)",
                               first + i, mass[i]);
    }
    return GROVE_OK;
}

grove_status grove__gravity_input(grove_points pos, const double *mass, size_t first, const double **xyz,
                                  double **copy)
{
    *xyz = pos.data;
    *copy = NULL;
    size_t n = pos.n;
    if (n > GROVE__OCT_MAX_N)
        return grove__fail(GROVE_TOO_LARGE, "gravity: n = %zu particles; at most %zu are supported", n,
                           GROVE__OCT_MAX_N);
    /* No data: check_input names the missing array. */
    grove_status s = n && !pos.data ? GROVE_OK : grove__points_check_shape(pos);
    if (s == GROVE_OK && n && pos.d != 3)
        s = grove__fail(GROVE_INVALID_ARGUMENT, "gravity: positions must have d = 3, got %zu", pos.d);
    size_t stride = grove__points_stride(pos);
    if (s == GROVE_OK && n && pos.data && (pos.dtype != GROVE_FLOAT64 || stride != 3 * sizeof(double))) {
        /* The engine reads packed float64 rows: other views are converted
         * once (exactly, for float32). */
        *copy = grove__malloc(3 * n * sizeof **copy, "gravity positions");
        if (!*copy) return GROVE_OUT_OF_MEMORY;
        for (size_t i = 0; i < n; i++) {
            const char *row = (const char *)pos.data + i * stride;
            for (int a = 0; a < 3; a++)
                (*copy)[3 * i + a] = pos.dtype == GROVE_FLOAT64 ? ((const double *)row)[a] : ((const float *)row)[a];
        }
        *xyz = *copy;
    }
    if (s == GROVE_OK) s = check_input(*xyz, mass, n, first);
    if (s != GROVE_OK) {
        grove__free(*copy);
        *copy = NULL;
    }
    return s;
}

/* Make room for n particles and the tree's cells. */
static grove_status reserve(grove__gravity *g, size_t n, int threads)
{
    if (n > g->cap_n) {
        size_t want = n + n / 8;
        grove__free(g->x);
        grove__free(g->out);
        grove__free(g->mark);
        grove__free(g->sink);
        grove__free(g->first);
        grove__free(g->group);
        g->x = grove__malloc(4 * want * sizeof *g->x, "gravity particles");
        g->out = grove__malloc(4 * want * sizeof *g->out, "gravity results");
        g->mark = grove__malloc(want * sizeof *g->mark, "gravity groups");
        g->sink = grove__malloc(want * sizeof *g->sink, "gravity sinks");
        g->first = grove__malloc((want + 1) * sizeof *g->first, "gravity sinks");
        g->group = grove__malloc((want + 1) * sizeof *g->group, "gravity groups");
        g->cap_n = g->x && g->out && g->mark && g->sink && g->first && g->group ? want : 0;
        if (!g->cap_n) return GROVE_OUT_OF_MEMORY;
    }
    if (g->nlists < threads) {
        grove__nb_lists *l = grove__realloc(g->lists, (size_t)threads * sizeof *l, "gravity lists");
        if (!l) return GROVE_OUT_OF_MEMORY;
        memset(l + g->nlists, 0, (size_t)(threads - g->nlists) * sizeof *l);
        g->lists = l;
        g->nlists = threads;
    }
    return GROVE_OK;
}

static grove_status reserve_cells(grove__gravity *g, size_t cells)
{
    if (cells <= g->cap_cells) return GROVE_OK;
    size_t want = cells + cells / 4;
    grove__free(g->cm);
    grove__free(g->quad);
    grove__free(g->box);
    grove__free(g->rc2);
    grove__free(g->fmom);
    g->cm = grove__malloc(4 * want * sizeof(double), "gravity cell moments");
    g->quad = grove__malloc(6 * want * sizeof(double), "gravity cell moments");
    g->box = grove__malloc(6 * want * sizeof(double), "gravity cell boxes");
    g->rc2 = grove__malloc(want * sizeof(double), "gravity cell radii");
    g->fmom = grove__malloc(8 * want * sizeof(float), "gravity cell moments");
    g->cap_cells = g->cm && g->quad && g->box && g->rc2 && g->fmom ? want : 0;
    return g->cap_cells ? GROVE_OK : GROVE_OUT_OF_MEMORY;
}

/* One group's walk of the local tree and the remote ones, its lists
 * padded; false when out of memory. */
static bool walk(const grove__gravity *g, uint32_t b, uint32_t e, bool wide, const grove__nb_source *local,
                 const grove__nb_source *remote, size_t nremote, grove__nb_lists *L)
{
    bool walked = grove__nb_walk_begin(g, b, e, wide, L) && grove__nb_walk_source(local, L);
    for (size_t r = 0; walked && r < nremote; r++) walked = grove__nb_walk_source(&remote[r], L);
    if (walked) grove__nb_walk_end(L);
    return walked;
}

bool grove__gravity_group(const grove__gravity *g, size_t k, double theta, double eps2,
                          const grove__nb_source *remote, size_t nremote, const grove__nb_kernels *kernels,
                          grove__nb_lists *L, double *pp, double *pc)
{
    uint32_t b = g->group[k], e = g->group[k + 1];
    if (theta == 0) {
        double sources = (double)g->tree.n;
        for (size_t r = 0; r < nremote; r++) sources += (double)remote[r].n;
        grove__nb_direct(g, b, e, eps2, remote, nremote);
        *pp += (double)(e - b) * sources;
        return true;
    }
    /* In single precision, or again in double where the float lists cannot
     * hold the group's interactions (nbody_internal.h, GROVE__NB_WIDE_RC2). */
    const grove__nb_source local = grove__nb_local(g);
    bool walked = walk(g, b, e, false, &local, remote, nremote, L);
    bool wide = walked && (L->min_rc2 < GROVE__NB_WIDE_RC2 || !grove__nb_evaluate(g, b, e, L, kernels, eps2));
    if (wide) walked = walk(g, b, e, true, &local, remote, nremote, L);
    if (!walked) return false;
    if (wide) grove__nb_evaluate_wide(g, b, e, L, eps2);
    *pp += (double)(e - b) * (double)L->np;
    *pc += (double)(e - b) * (double)L->nc;
    return true;
}

/* The parallel group loop: GROVE_OUT_OF_MEMORY if a thread ran out of
 * memory, GROVE_CANCELLED if the cancel flag (read once per group) stopped
 * it. theta = 0 skips the walk (it would open every leaf) for the direct
 * sum in double. */
grove_status grove__gravity_forces(grove__gravity *g, double theta, double eps2, const grove__nb_source *remote,
                                   size_t nremote, int threads, double *pp, double *pc)
{
    bool ok = true, stopped = false;
    double npp = 0, npc = 0;
    grove__nb_kernels kernels;
    grove__nb_kernels_pick(&kernels);
#pragma omp parallel num_threads(threads) reduction(+ : npp, npc) reduction(&& : ok) reduction(|| : stopped)
    {
#ifdef _OPENMP
        grove__nb_lists *L = &g->lists[omp_get_thread_num()];
#else
        grove__nb_lists *L = &g->lists[0];
#endif
#pragma omp for schedule(dynamic, 4)
        for (size_t k = 0; k < g->ngroups; k++) {
            /* One read of the cancel flag per group: a walk can take seconds. */
            if (stopped || (stopped = grove__cancelled(g->options))) continue;
            if (ok) ok = grove__gravity_group(g, k, theta, eps2, remote, nremote, &kernels, L, &npp, &npc);
        }
    }
    *pp = npp;
    *pc = npc;
    if (!ok) return grove__fail(GROVE_OUT_OF_MEMORY, "gravity: out of memory for the interaction lists");
    return stopped ? grove__fail(GROVE_CANCELLED, "gravity: cancelled") : GROVE_OK;
}

/* The largest |component| of a result: 3 for an acceleration, 1 for a
 * potential. */
static double largest(const double *v, int count)
{
    double top = 0;
    for (int k = 0; k < count; k++) top = fabs(v[k]) > top ? fabs(v[k]) : top;
    return top;
}

/* A result in the caller's units that no double holds to its precision:
 * not finite, or a nonzero value of the evaluation's units (its largest
 * component `internal`) that became subnormal or 0, where the units' G
 * 2^e (far below the evaluation's scale of order one) rounds it to the
 * subnormals' absolute grid. */
static bool unheld(const double *v, int count, double internal)
{
    double top = largest(v, count);
    return !isfinite(top) || (internal > 0 && top < DBL_MIN);
}

grove_status grove__gravity_overflow(const grove__gravity *g, uint32_t row, const double *acc, const double *pot,
                                     int64_t name)
{
    size_t i = 0, cap = g->cap_n;
    while (g->tree.order[i] != row) i++;
    double a_int[3] = {g->out[i], g->out[cap + i], g->out[2 * cap + i]}, p_int = g->out[3 * cap + i];
    bool internal = !isfinite(largest(a_int, 3)) || !isfinite(p_int);
    bool is_acc = unheld(acc + 3 * (size_t)row, 3, largest(a_int, 3));
    const char *what = is_acc ? "acceleration" : "potential";
    double value = is_acc ? largest(acc + 3 * (size_t)row, 3) : fabs(pot[row]);
    if (internal)
        return grove__fail(GROVE_INVALID_ARGUMENT,
                           "gravity: particle %lld's %s is beyond the largest double in the evaluation's units "
                           "(the system's half size and its largest mass 1): the system spans more than double's "
                           "range (a pair of heavy particles about 1e-154 of its size apart or closer)",
                           (long long)name, what);
    if (isfinite(value))
        return grove__fail(GROVE_INVALID_ARGUMENT,
                           "gravity: particle %lld's %s, %g in these units, is below the smallest normal double "
                           "(2.2e-308), where it would lose its precision: choose units (G, masses, lengths) in "
                           "which G m / r^2 and G m / r are larger", (long long)name, what, value);
    return grove__fail(GROVE_INVALID_ARGUMENT,
                       "gravity: particle %lld's %s is beyond the largest double (a pair too close for its masses "
                       "and G)", (long long)name, what);
}

grove_status grove__gravity_prepare(grove__gravity *g, const double *pos, const double *mass, size_t n,
                                    const uint8_t *active, const grove_gravity_params *p, const grove__nb_units *u,
                                    int threads)
{
    grove_status s = reserve(g, n, threads);
    if (s != GROVE_OK) return s;
    /* The positions in the evaluation's units, row-major, in g->out until
     * the walk writes the results there. */
    double *scaled = g->out;
#pragma omp parallel for num_threads(threads) schedule(static)
    for (size_t i = 0; i < n; i++)
        for (int a = 0; a < 3; a++) scaled[3 * i + a] = (pos[3 * i + a] - u->origin[a]) * u->to_length;
    s = grove__octree_build(&g->tree, scaled, n, p->leaf_size, threads);
    if (s == GROVE_OK) s = reserve_cells(g, g->tree.ncells);
    if (s != GROVE_OK) return s;
    const uint32_t *order = g->tree.order;
    size_t cap = g->cap_n;
#pragma omp parallel for num_threads(threads) schedule(static)
    for (size_t i = 0; i < n; i++) {
        uint32_t r = order[i];
        g->x[i] = scaled[3 * (size_t)r];
        g->x[cap + i] = scaled[3 * (size_t)r + 1];
        g->x[2 * cap + i] = scaled[3 * (size_t)r + 2];
        g->x[3 * cap + i] = mass[r] * u->to_mass;
    }
    grove__nb_moments(g, p->theta, threads);
    grove__nb_groups(g, p->group_size, active);
    return GROVE_OK;
}

uint32_t grove__gravity_results(const grove__gravity *g, const grove__nb_units *u, double *acc, double *pot,
                                int threads)
{
    const uint32_t *order = g->tree.order;
    size_t cap = g->cap_n;
    uint32_t bad = UINT32_MAX;
#pragma omp parallel for num_threads(threads) schedule(static) reduction(min : bad)
    for (size_t j = 0; j < g->nsinks; j++) {
        size_t i = g->sink[j];
        uint32_t r = order[i];
        double *a = acc + 3 * (size_t)r, a_int[3];
        for (int k = 0; k < 3; k++) a[k] = grove__nb_back_apply(a_int[k] = g->out[k * cap + i], &u->acc);
        bool held = !unheld(a, 3, largest(a_int, 3));
        if (pot) {
            double p_int = g->out[3 * cap + i];
            pot[r] = grove__nb_back_apply(p_int, &u->pot);
            held = held && !unheld(pot + r, 1, fabs(p_int));
        }
        if (!held && r < bad) bad = r;
    }
    return bad;
}

void grove__gravity_stats(const grove__gravity *g, double npp, double npc, grove_gravity_stats *stats)
{
    memset(stats, 0, sizeof *stats);
    stats->particle_interactions = npp;
    stats->cell_interactions = npc;
    stats->cells = g->tree.ncells;
    for (size_t k = 0; k < g->tree.ncells; k++) stats->leaves += g->tree.cell[k].nchild == 0;
    stats->groups = g->ngroups;
    stats->depth = g->tree.levels;
    stats->flops = GROVE__NB_FLOPS_PP * npp + GROVE__NB_FLOPS_PC * npc;
}

static grove_status cpu_forces(void *ctx, grove__gravity *g, double theta, double eps2, int threads, double *pp,
                               double *pc)
{
    (void)ctx;
    return grove__gravity_forces(g, theta, eps2, NULL, 0, threads, pp, pc);
}

const grove__nb_engine grove__nb_cpu = {cpu_forces, NULL};

grove_status grove__gravity_eval(grove__gravity *g, const double *pos, const double *mass, size_t n,
                                 const uint8_t *active, const grove_gravity_params *p, double *acc, double *pot,
                                 grove_gravity_stats *stats, int threads)
{
    return grove__gravity_eval_on(&grove__nb_cpu, g, pos, mass, n, active, p, acc, pot, stats, threads);
}

grove_status grove__gravity_eval_on(const grove__nb_engine *e, grove__gravity *g, const double *pos,
                                    const double *mass, size_t n, const uint8_t *active,
                                    const grove_gravity_params *p, double *acc, double *pot,
                                    grove_gravity_stats *stats, int threads)
{
    grove__nb_units u;
    double npp, npc;
    grove_status s = grove__nb_choose_units(pos, mass, n, p, pot != NULL, threads, &u);
    if (s == GROVE_OK) s = grove__gravity_prepare(g, pos, mass, n, active, p, &u, threads);
    if (s == GROVE_OK) s = e->forces(e->ctx, g, p->theta, u.softening * u.softening, threads, &npp, &npc);
    if (s != GROVE_OK) return s;
    /* The sinks' results back to the caller's units; the lowest row of a
     * result that is not finite is the error. */
    uint32_t bad = grove__gravity_results(g, &u, acc, pot, threads);
    if (bad != UINT32_MAX) return grove__gravity_overflow(g, bad, acc, pot, bad);
    if (stats) grove__gravity_stats(g, npp, npc, stats);
    return GROVE_OK;
}

void grove__gravity_free(grove__gravity *g)
{
    if (!g) return;
    grove__octree_free(&g->tree);
    grove__free(g->x);
    grove__free(g->out);
    grove__free(g->mark);
    grove__free(g->sink);
    grove__free(g->first);
    grove__free(g->group);
    grove__free(g->cm);
    grove__free(g->quad);
    grove__free(g->box);
    grove__free(g->rc2);
    grove__free(g->fmom);
    for (int k = 0; k < g->nlists; k++) grove__nb_lists_free(&g->lists[k]);
    grove__free(g->lists);
    memset(g, 0, sizeof *g);
}

grove_status grove__gravity_begin(grove_points positions, const double *mass, const grove_gravity_params *params,
                                  size_t first, grove_gravity_params *p, const double **pos, double **copy,
                                  grove_gravity_stats *stats)
{
    grove__clear_error();
    if (stats) memset(stats, 0, sizeof *stats);
    grove_status s = grove__gravity_params(params, p);
    if (s == GROVE_OK) s = grove__gravity_input(positions, mass, first, pos, copy);
    return s;
}

grove_status grove__gravity_local(grove_points positions, const double *mass, const grove_gravity_params *params,
                                  double *acc, double *pot, grove_gravity_stats *stats, const grove_options *options)
{
    return grove__gravity_on(&grove__nb_cpu, positions, mass, params, acc, pot, stats, options);
}

grove_status grove__gravity_on(const grove__nb_engine *e, grove_points positions, const double *mass,
                               const grove_gravity_params *params, double *acc, double *pot,
                               grove_gravity_stats *stats, const grove_options *options)
{
    grove_gravity_params p;
    const double *pos = NULL;
    double *copy = NULL;
    size_t n = positions.n;
    grove_status s = grove__gravity_begin(positions, mass, params, 0, &p, &pos, &copy, stats);
    if (s != GROVE_OK) return s;
    if (n > 0 && !acc) s = grove__fail(GROVE_INVALID_ARGUMENT, "gravity: acc is NULL");
    else if (n > 0 && grove__cancelled(options)) s = grove__fail(GROVE_CANCELLED, "gravity: cancelled");
    else if (n > 0) {
        grove__gravity g;
        memset(&g, 0, sizeof g);
        g.options = options;
        s = grove__gravity_eval_on(e, &g, pos, mass, n, NULL, &p, acc, pot, stats, grove__options(options).threads);
        grove__gravity_free(&g);
    }
    grove__free(copy);
    return s;
}
