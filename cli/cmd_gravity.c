/* grove gravity IN.npy --theta T --softening E --acc A.npy [--pot P.npy] [--device D] [--json] */
#include "command.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: grove gravity IN.npy [--theta T] [--softening E] [--G G] [--leaf-size L] [--group-size G]\n"
    "                     --acc A.npy [--pot P.npy] [--device D] [--threads N] [--json] [--quiet]\n"
    "Barnes-Hut gravity on a sparse octree (Bonsai): IN is (n, 4) float64 (or float32) rows x, y, z, m,\n"
    "or an (n, 7) snapshot of grove nbody (rows x, y, z, vx, vy, vz, m), or a Gadget snapshot (HDF5 or\n"
    "Gadget-2 binary: the positions and masses of the --types particle types);\n"
    "A is (n, 3) float64 accelerations, P is (n,) float64 potentials (G = 1 unless --G).\n"
    "  --theta T       opening angle in [0, 1] (default 0.75; 0 = direct summation)\n"
    "  --softening E   Plummer softening length (default 0)\n"
    "  --leaf-size L   most particles per leaf (default 16); --group-size G: per group (default 64)\n"
    CLI_DEVICE_HELP;

/* Positions (n x 3) and masses from an (n, 4) array of x, y, z, m or an
 * (n, 7) snapshot (the mass last). */
static grove_status split_input(const grove_array *in, grove_array *pos, grove_array *mass)
{
    size_t n = in->shape[0], cols = in->shape[1];
    grove_status s = grove_array_create(pos, GROVE_FLOAT64, n, 3);
    if (s == GROVE_OK) s = grove_array_create(mass, GROVE_FLOAT64, n, 0);
    if (s != GROVE_OK) return s;
    double *x = pos->data, *m = mass->data;
    for (size_t i = 0; i < n; i++) {
        for (size_t a = 0; a < 4; a++) {
            size_t at = cols * i + (a < 3 ? a : cols - 1);
            double v = in->dtype == GROVE_FLOAT64 ? ((const double *)in->data)[at] : (double)((const float *)in->data)[at];
            if (a < 3) x[3 * i + a] = v;
            else m[i] = v;
        }
    }
    return GROVE_OK;
}

/* IN as positions (n x 3) and masses: a Gadget snapshot's, read in
 * float64 into those arrays, or an (n, 4) or (n, 7) .npy's columns. */
static grove_status read_input(const char *path, unsigned types, grove_array *in, grove_array *pos,
                               grove_array *mass)
{
    grove_gadget_format format = GROVE_GADGET_NONE;
    if (!cli_ends_with(path, ".npy")) grove_gadget_probe(path, &format);
    if (format != GROVE_GADGET_NONE) {
        grove_gadget_params p;
        grove_gadget_params_init(&p);
        p.types = types;
        p.fields = GROVE_GADGET_POS | GROVE_GADGET_MASS;
        p.dtype = GROVE_FLOAT64;
        grove_gadget g;
        grove_status s = grove_gadget_read(path, &p, &g);
        if (s != GROVE_OK) return s;
        *pos = (grove_array){g.pos, GROVE_FLOAT64, 2, {g.n, 3}};
        *mass = (grove_array){g.mass, GROVE_FLOAT64, 1, {g.n, 1}};
        return GROVE_OK;
    }
    grove_status s = grove_npy_read(path, in);
    if (s != GROVE_OK) return s;
    if ((in->dtype != GROVE_FLOAT64 && in->dtype != GROVE_FLOAT32) || in->ndim != 2 ||
        (in->shape[1] != 4 && in->shape[1] != 7)) {
        cli_note_error("%s: expected an (n, 4) float64 or float32 array of x, y, z, m (or an (n, 7) snapshot); "
                       "got %s with shape (%zu, %zu)",
                       path, grove_dtype_name(in->dtype), in->shape[0], in->ndim == 2 ? in->shape[1] : 0);
        return GROVE_INVALID_ARGUMENT;
    }
    return split_input(in, pos, mass);
}

typedef struct gravity_args {
    cli_file in, acc, pot;
    grove_gravity_params params;
    grove_gravity_stats stats;
    grove_device device;
    size_t n;
    double per, rate, gflops; /* interactions per particle, particles/s, Gflop/s */
    /* Per rank, on rank 0 of a run under mpirun: domain particles, bytes
     * sent, and nanoseconds and bytes sent in each phase (phase k of rank
     * r at k ranks + r). */
    int64_t *rank_particles, *rank_bytes, *rank_ns, *rank_phase_bytes;
} gravity_args;

/* The phases' names in --json keys, in grove_mpi_phase order. */
static bool check(void *state)
{
    const gravity_args *a = state;
    if (a->in.path && a->acc.path) return true;
    cli_error("gravity", "IN.npy and --acc are required (see --help)");
    return false;
}

/* Every rank's load and bytes sent, on rank 0. */
static grove_status gather_load(gravity_args *a, const grove_mpi *mpi)
{
    size_t ranks = (size_t)grove_mpi_size(mpi);
    a->rank_particles = calloc((2 + 2 * GROVE_MPI_PHASES) * ranks, sizeof *a->rank_particles);
    if (!a->rank_particles) return GROVE_OUT_OF_MEMORY;
    a->rank_bytes = a->rank_particles + ranks;
    a->rank_ns = a->rank_bytes + ranks;
    a->rank_phase_bytes = a->rank_ns + GROVE_MPI_PHASES * ranks;
    int64_t held, bytes[GROVE_MPI_PHASES];
    double seconds[GROVE_MPI_PHASES];
    grove_mpi_load(mpi, &held, NULL);
    grove_mpi_phases(mpi, seconds, bytes);
    grove_mpi_gather_int64(mpi, held, a->rank_particles);
    grove_mpi_gather_int64(mpi, grove_mpi_bytes_sent(mpi), a->rank_bytes);
    for (size_t k = 0; k < GROVE_MPI_PHASES; k++) {
        grove_mpi_gather_int64(mpi, (int64_t)(seconds[k] * 1e9), a->rank_ns + k * ranks);
        grove_mpi_gather_int64(mpi, bytes[k], a->rank_phase_bytes + k * ranks);
    }
    return GROVE_OK;
}

static double per_particle(const gravity_args *a, double count) { return a->n ? count / (double)a->n : 0; }

static grove_status run(void *state, cli_run *run)
{
    gravity_args *a = state;
    grove_array *in = &a->in.array, pos = {0}, mass = {0};
    /* Reading IN: its messages name the file themselves. */
    const char *path = run->fail_path;
    run->fail_path = NULL;
    double t0 = cli_now();
    grove_status s = read_input(path, run->common.types, in, &pos, &mass);
    run->io_seconds += cli_now() - t0;
    if (s != GROVE_OK) {
        grove_array_free(&pos);
        grove_array_free(&mass);
        return s;
    }
    run->fail_path = path;
    a->n = pos.shape[0];
    s = cli_device_take(&run->options, a->device);
    if (s == GROVE_OK) s = grove_array_create(&a->acc.array, GROVE_FLOAT64, a->n, 3);
    if (s == GROVE_OK && a->pot.path) s = grove_array_create(&a->pot.array, GROVE_FLOAT64, a->n, 0);
    /* Under mpirun each rank computes its block of rows and rank 0
     * gathers the results (docs/mpi.md); alone the block is all. */
    const grove_mpi *mpi = run->options.mpi;
    size_t first, count;
    grove_mpi_block(mpi, a->n, &first, &count);
    double *acc = a->acc.array.data, *pot = a->pot.path ? a->pot.array.data : NULL;
    if (s == GROVE_OK) {
        double start = cli_now();
        s = grove_gravity(grove_points_f64(pos.data ? (double *)pos.data + 3 * first : NULL, count, 3),
                          mass.data ? (double *)mass.data + first : NULL, &a->params, acc ? acc + 3 * first : NULL,
                          pot ? pot + first : NULL, &a->stats, &run->options);
        run->seconds = cli_now() - start;
    }
    if (s == GROVE_OK) s = grove_mpi_gather_blocks(mpi, acc, a->n, 3 * sizeof *acc);
    if (s == GROVE_OK && pot) s = grove_mpi_gather_blocks(mpi, pot, a->n, sizeof *pot);
    if (s == GROVE_OK && mpi) s = gather_load(a, mpi);
    grove_array_free(&pos);
    grove_array_free(&mass);
    if (s != GROVE_OK) return s;
    a->per = per_particle(a, a->stats.particle_interactions + a->stats.cell_interactions);
    a->rate = run->seconds > 0 ? (double)a->n / run->seconds : 0;
    a->gflops = run->seconds > 0 ? a->stats.flops / run->seconds * 1e-9 : 0;
    return grove_mpi_rank(mpi) == 0 ? cli_run_stage(run) : GROVE_OK;
}

static void summary(void *state, const cli_run *run)
{
    const gravity_args *a = state;
    const grove_gravity_stats *st = &a->stats;
    printf("gravity: %zu particles, theta %g, softening %g -> %.0f interactions per particle "
           "(%.0f particle + %.0f cell), %d-level tree, %zu groups, in %.3f s (%.3g particles/s, %.2f "
           "Gflop/s) on %d thread%s\n",
           a->n, a->params.theta, a->params.softening, a->per, per_particle(a, st->particle_interactions),
           per_particle(a, st->cell_interactions), st->depth, st->groups, run->seconds, a->rate, a->gflops,
           run->threads, run->threads == 1 ? "" : "s");
}

static void json(void *state, const cli_run *run, cli_json *j)
{
    const gravity_args *a = state;
    const grove_gravity_stats *st = &a->stats;
    cli_json_int(j, "n", (long long)a->n);
    cli_json_num(j, "theta", a->params.theta);
    cli_json_num(j, "softening", a->params.softening);
    cli_json_str(j, "device", cli_device_name(run->options.device));
    cli_json_num(j, "interactions_per_particle", a->per);
    cli_json_num(j, "particle_interactions", st->particle_interactions);
    cli_json_num(j, "cell_interactions", st->cell_interactions);
    cli_json_int(j, "cells", (long long)st->cells);
    cli_json_int(j, "groups", (long long)st->groups);
    cli_json_int(j, "depth", st->depth);
    cli_json_num(j, "particles_per_second", a->rate);
    cli_json_num(j, "gflops", a->gflops);
    int ranks = grove_mpi_size(run->options.mpi);
    cli_json_int(j, "ranks", ranks);
    long long *v = a->rank_particles ? malloc(3 * (size_t)ranks * sizeof *v) : NULL;
    double *t = v ? malloc((size_t)ranks * sizeof *t) : NULL;
    if (!t) {
        free(v);
        return;
    }
    for (int r = 0; r < 2 * ranks; r++) v[r] = a->rank_particles[r];
    cli_json_ints(j, "rank_particles", v, (size_t)ranks);
    cli_json_ints(j, "rank_bytes_sent", v + ranks, (size_t)ranks);
    double most = 0, sum = 0;
    for (int k = 0; k < GROVE_MPI_PHASES; k++) {
        char name[64];
        for (int r = 0; r < ranks; r++) {
            t[r] = (double)a->rank_ns[k * ranks + r] * 1e-9;
            v[2 * ranks + r] = a->rank_phase_bytes[k * ranks + r];
        }
        snprintf(name, sizeof name, "rank_seconds_%s", cli_mpi_phases[k]);
        cli_json_nums(j, name, t, (size_t)ranks);
        snprintf(name, sizeof name, "rank_bytes_%s", cli_mpi_phases[k]);
        cli_json_ints(j, name, v + 2 * ranks, (size_t)ranks);
    }
    /* The slowest rank's walk and kernel time over the mean. */
    for (int r = 0; r < ranks; r++) {
        double w = (double)a->rank_ns[GROVE_MPI_PHASE_WALK * ranks + r] * 1e-9;
        most = w > most ? w : most;
        sum += w;
    }
    cli_json_num(j, "load_imbalance", sum > 0 ? most / (sum / ranks) : 1);
    free(t);
    free(v);
}

static void release(void *state) { free(((gravity_args *)state)->rank_particles); }

int cmd_gravity(int argc, char **argv)
{
    static const cli_command command = {"gravity", usage, check, run, summary, NULL, json, release};
    gravity_args a;
    memset(&a, 0, sizeof a);
    grove_gravity_params_init(&a.params);
    const cli_opt opts[] = {
        {"IN", OPT_INPUT, &a.in, NULL, CLI_ANY},
        {"--theta", OPT_DOUBLE, &a.params.theta, NULL, CLI_BETWEEN(0, 1)},
        {"--softening|--eps", OPT_DOUBLE, &a.params.softening, NULL, CLI_AT_LEAST(0)},
        {"--G", OPT_DOUBLE, &a.params.G, NULL, CLI_ABOVE(0)},
        {"--leaf-size", OPT_SIZE, &a.params.leaf_size, NULL, CLI_BETWEEN(1, 64)},
        {"--group-size", OPT_SIZE, &a.params.group_size, NULL, CLI_BETWEEN(1, 256)},
        {"--acc", OPT_NPY, &a.acc, NULL, CLI_ANY},
        {"--pot", OPT_NPY, &a.pot, NULL, CLI_ANY},
        CLI_DEVICE_OPT(&a.device),
    };
    return cli_command_main(&command, &a, opts, sizeof opts / sizeof opts[0], argc, argv);
}
