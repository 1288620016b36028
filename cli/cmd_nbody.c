/* grove nbody [--ic plummer|cold|merger|hernquist|plummer-bh --n N --seed S [--bh-mass F] | --input SNAP]
 *             [--dt DT] --steps K
 *             [--timestep shared|adaptive|block] [--eta ETA] [--max-level K]
 *             [--theta T] [--softening E] [--snapshot-every M] --out DIR [--format npy|hdf5] [--tipsy] [--render]
 *             [--fof-every M (--b B | --linking-length L) [--min-members M]] [--resume] */
#include "nbody_run.h"
#include "nbody_hdf5.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char usage[] =
    "usage: grove nbody [--ic plummer|cold|merger|hernquist|plummer-bh --n N --seed S [--bh-mass F]\n"
    "                   | --input SNAP] [--dt DT] --steps K\n"
    "                   [--timestep shared|adaptive|block] [--eta ETA] [--max-level K]\n"
    "                   [--theta T] [--softening E] [--G G] [--snapshot-every M] [--report-every R]\n"
    "                   [--raw-forces] --out DIR [--format npy|hdf5] [--tipsy] [--render] [--render-extent L]\n"
    "                   [--fof-every M (--b B | --linking-length L) [--min-members M]] [--resume] [--threads N]\n"
    "                   [--units henon|kpc,1e10Msun,km/s|si|cgs] [--json] [--quiet]\n"
    "Kick-drift-kick leapfrog N-body run on Barnes-Hut tree forces (G = 1 unless --G, Henon units for\n"
    "the ICs; any units give the same relative accuracy).\n"
    "  --ic KIND         plummer (default), cold (uniform sphere at rest), merger (two Plummers),\n"
    "                    hernquist (isotropic Hernquist sphere, scale 1/3) or plummer-bh (a Plummer\n"
    "                    sphere around a point mass, particle 0, of fraction --bh-mass, default 0.01)\n"
    "  --input SNAP      start from a snapshot: .npy (n, 7) float64 x y z vx vy vz m, a Gadget\n"
    "                    snapshot (HDF5 or Gadget-2 binary; --types chooses the particle types), or tipsy\n"
    "  --dt DT           time step (default 1/128), the largest step for adaptive and block\n"
    "  --timestep MODE   shared (default; --eta alone means adaptive), adaptive (a global step\n"
    "                    <= DT from the largest |a|) or block (each particle on its own step\n"
    "                    DT / 2^k, k <= --max-level, default 20; a step is then one DT)\n"
    "  --eta ETA         step accuracy: steps <= ETA sqrt(eps / |a|) (default 0.025)\n"
    "  --steps K         run until step K (counted from the start, also when resuming)\n"
    "  --theta T         opening angle (default 0.75); --softening E (default 0.01)\n"
    "  --raw-forces      keep the tree forces' small net force (by default it is removed, so the\n"
    "                    total momentum is conserved to rounding)\n"
    "  --snapshot-every M  write DIR/snap_STEP.npy (and .tipsy, .png) and a checkpoint every M steps\n"
    "  --format F        the snapshots' format: npy (default) or hdf5 (DIR/snap_STEP.hdf5 in the\n"
    "                    GADGET-4 layout, dark matter, ids = rows, units from --units; docs/snapshots.md)\n"
    "  --fof-every M     friends-of-friends groups of the particles where they are, every M steps\n"
    "                    (and at the first and last), their catalogue in DIR/fof_STEP.hdf5 (--format\n"
    "                    hdf5: a GADGET-style halo table) or DIR/fof_STEP.npy (grove fof's table);\n"
    "                    --b B (of the mean separation) or --linking-length L, --min-members M (20)\n"
    "  --tipsy           also write each snapshot as big-endian tipsy (phi = each particle's potential)\n"
    "  --units U         the run's units, which set G (not with --G) and, but for henon, are written\n"
    "                    for readers of the tipsy files: DIR/grove.param and SNAP.tipsy.units\n"
    "                    (pynbody); --ic needs henon (docs/nbody.md defines each)\n"
    "  --render          also write a PNG density projection with every snapshot, a square of\n"
    "                    side L (--render-extent, default 8 length units) about the centre of mass\n"
    "  --resume          continue from DIR/checkpoint.grove up to step K with the run's own settings;\n"
    "                    a setting given again must agree with the checkpoint's (else status 2)\n"
    CLI_DEVICE_HELP
    "                    (the steps' force evaluations; the start's is the CPU's)\n"
    "DIR is made once the start works. Ctrl-C or SIGTERM stops before the next step; the last\n"
    "checkpoint stays whole, so --resume continues from it; --format and --fof-every are not kept by\n"
    "the checkpoint: give them again with --resume.\n";


/* The --ic kinds, by name; the one table every check and lookup reads. */
static const struct { const char *name; grove_ic_kind kind; } IC_KINDS[] = {
    {"plummer", GROVE_IC_PLUMMER}, {"cold", GROVE_IC_COLD}, {"merger", GROVE_IC_MERGER},
    {"hernquist", GROVE_IC_HERNQUIST}, {"plummer-bh", GROVE_IC_PLUMMER_BH}};

const char *nbody_ic_kind(const char *name, grove_ic_kind *kind)
{
    for (size_t i = 0; i < sizeof IC_KINDS / sizeof IC_KINDS[0]; i++)
        if (strcmp(name, IC_KINDS[i].name) == 0) {
            if (kind) *kind = IC_KINDS[i].kind;
            return IC_KINDS[i].name;
        }
    return NULL;
}

/* Generated ICs are in Henon units: a physical --units is refused with them
 * (by check(), and by start() for a --resume that finds no checkpoint). */
#define IC_UNITS_MESSAGE \
    "--ic makes Henon units (G = 1, total mass 1, virial radius 1): --units %s needs --input SNAP in those units"

/* The --timestep modes, by name (the library's enum order). */
static const char *const TIMESTEPS[] = {"shared", "adaptive", "block"};

/* DIR/name into buf. */
static const char *out_path(const nbody_args *a, char *buf, size_t cap, const char *name)
{
    snprintf(buf, cap, "%s/%s", a->out, name);
    return buf;
}

/* A snapshot file: (n, 7) float64 .npy, or tipsy otherwise. */
static grove_status load_snapshot(const char *path, grove_snapshot *snap)
{
    if (!cli_ends_with(path, ".npy")) return grove_tipsy_read(path, snap);
    grove_array a = {0};
    grove_status s = grove_npy_read(path, &a);
    if (s != GROVE_OK) return s;
    if (a.dtype != GROVE_FLOAT64 || a.ndim != 2 || a.shape[1] != 7) {
        cli_note_error("%s: expected (n, 7) float64 rows x y z vx vy vz m", path);
        grove_array_free(&a);
        return GROVE_INVALID_ARGUMENT;
    }
    size_t n = a.shape[0];
    snap->n = n;
    snap->time = 0;
    snap->pos = malloc((7 * n + 1) * sizeof(double));
    if (!snap->pos) {
        grove_array_free(&a);
        return GROVE_OUT_OF_MEMORY;
    }
    snap->vel = snap->pos + 3 * n;
    snap->mass = snap->vel + 3 * n;
    const double *x = a.data;
    for (size_t i = 0; i < n; i++) {
        memcpy(snap->pos + 3 * i, x + 7 * i, 3 * sizeof *x);
        memcpy(snap->vel + 3 * i, x + 7 * i + 3, 3 * sizeof *x);
        snap->mass[i] = x[7 * i + 6];
    }
    grove_array_free(&a);
    return GROVE_OK;
}

/* rows first..first+count of n particles (pos n x 3, vel n x 3, mass n)
 * as this rank's part of a simulation: all of them alone, a block of rows
 * under mpirun (docs/mpi.md). */
static grove_status create_part(const nbody_args *a, const grove_options *o, size_t n, const double *pos,
                                const double *vel, const double *mass, grove_nbody **sim)
{
    size_t first, count;
    grove_mpi_block(o->mpi, n, &first, &count);
    return grove_nbody_create(grove_points_f64(pos ? pos + 3 * first : NULL, count, 3), vel ? vel + 3 * first : NULL,
                              mass ? mass + first : NULL, &a->params, o, sim);
}

/* A Gadget snapshot's chosen particle types as the start, in float64. */
static grove_status start_gadget(const nbody_args *a, const grove_options *o, grove_nbody **sim)
{
    grove_gadget_params p;
    grove_gadget_params_init(&p);
    p.types = a->types;
    p.fields = GROVE_GADGET_POS | GROVE_GADGET_VEL | GROVE_GADGET_MASS;
    p.dtype = GROVE_FLOAT64;
    grove_gadget g;
    grove_status s = grove_mpi_agree(o->mpi, grove_gadget_read(a->input.path, &p, &g));
    if (s == GROVE_OK) s = create_part(a, o, g.n, g.pos, g.vel, g.mass, sim);
    grove_gadget_free(&g);
    return s;
}

/* Room for n generated particles (positions, velocities, masses: 7
 * doubles each), or NULL with the failure noted, saying how much. */
static double *ic_buffer(size_t n)
{
    bool fits = n <= (SIZE_MAX / sizeof(double) - 1) / 7;
    double *buf = fits ? malloc((7 * n + 1) * sizeof *buf) : NULL;
    if (!buf && fits)
        cli_note_error("--n %zu: out of memory allocating %zu bytes for the initial conditions (7 doubles a "
                       "particle)", n, (7 * n + 1) * sizeof *buf);
    else if (!buf)
        cli_note_error("--n %zu: the initial conditions (7 doubles a particle) overflow the address space", n);
    return buf;
}

/* The starting simulation: checkpoint, snapshot or generated ICs. Under
 * mpirun every rank reads or generates them all and takes its block. */
static grove_status start(const nbody_args *a, const grove_options *o, grove_nbody **sim, bool *resumed)
{
    char path[4096];
    *resumed = false;
    if (a->resume) {
        struct stat st;
        if (stat(out_path(a, path, sizeof path, "checkpoint.grove"), &st) == 0) {
            *resumed = true;
            return grove_nbody_checkpoint_read(path, o, sim);
        }
        /* No checkpoint: the command line's start, if it gives one (check() let --n go). */
        if (!a->input.path && a->n == 0) {
            cli_note_error("%s: no checkpoint to resume (and no --ic with --n N, or --input, to start a new run)",
                           path);
            return GROVE_IO_ERROR;
        }
    }
    grove_gadget_format format = GROVE_GADGET_NONE;
    if (a->input.path && !cli_ends_with(a->input.path, ".npy")) grove_gadget_probe(a->input.path, &format);
    if (format != GROVE_GADGET_NONE) return start_gadget(a, o, sim);
    if (a->input.path) {
        grove_snapshot snap = {0};
        grove_status s = grove_mpi_agree(o->mpi, load_snapshot(a->input.path, &snap));
        if (s == GROVE_OK) s = create_part(a, o, snap.n, snap.pos, snap.vel, snap.mass, sim);
        /* .npy snapshots are malloc'd here, tipsy ones by the library. */
        if (cli_ends_with(a->input.path, ".npy")) free(snap.pos);
        else grove_snapshot_free(&snap);
        return s;
    }
    if (a->units && cli_units_physical(a->units)) {
        cli_note_error(IC_UNITS_MESSAGE, a->units->name);
        return GROVE_INVALID_ARGUMENT;
    }
    grove_ic_params ic;
    grove_ic_params_init(&ic);
    nbody_ic_kind(a->ic, &ic.kind); /* check() accepted it */
    ic.n = a->n;
    ic.seed = a->seed;
    if (a->given.bh_mass) ic.bh_mass = a->bh_mass;
    double *buf = ic_buffer(a->n);
    grove_status s = grove_mpi_agree(o->mpi, buf ? grove_ic_generate(&ic, buf, buf + 3 * a->n, buf + 6 * a->n)
                                                 : GROVE_OUT_OF_MEMORY);
    if (s == GROVE_OK) s = create_part(a, o, a->n, buf, buf + 3 * a->n, buf + 6 * a->n, sim);
    free(buf);
    return s;
}

/* The state a snapshot writes: the simulation's own arrays alone; under
 * mpirun every rank's, gathered by row on rank 0 (buf, freed by the
 * caller; the pointers are NULL on the other ranks). */
typedef struct snapshot_state {
    const double *x, *v, *m, *pot;
    double *buf;
} snapshot_state;

static grove_status state_on_lead(const grove_nbody *sim, const grove_mpi *mpi, snapshot_state *st)
{
    memset(st, 0, sizeof *st);
    if (!mpi) {
        *st = (snapshot_state){grove_nbody_positions(sim), grove_nbody_velocities(sim), grove_nbody_masses(sim),
                               grove_nbody_potentials(sim), NULL};
        return GROVE_OK;
    }
    size_t n = grove_nbody_total(sim);
    bool lead = grove_mpi_rank(mpi) == 0;
    double *buf = lead ? malloc((8 * n + 1) * sizeof *buf) : NULL;
    grove_status s = grove_mpi_agree(mpi, !lead || buf ? GROVE_OK : GROVE_OUT_OF_MEMORY);
    if (s == GROVE_OK)
        s = grove_nbody_gather(sim, buf, buf ? buf + 3 * n : NULL, buf ? buf + 6 * n : NULL, buf ? buf + 7 * n : NULL,
                               NULL);
    if (s != GROVE_OK || !buf) {
        free(buf);
        return s;
    }
    *st = (snapshot_state){buf, buf + 3 * n, buf + 6 * n, buf + 7 * n, buf};
    return GROVE_OK;
}

/* The snapshot files of the state st of step d.step: the tipsy file first,
 * since it refuses values float32 cannot hold, and then no file of the
 * snapshot is written. */
static grove_status write_snapshot(const nbody_args *a, const grove_nbody *sim, const grove_nbody_diag *d,
                                   const snapshot_state *st)
{
    size_t n = grove_nbody_total(sim);
    char name[64], path[4096];
    const double *x = st->x, *v = st->v, *m = st->m;
    grove_status s = GROVE_OK;
    if (a->tipsy) {
        snprintf(name, sizeof name, "snap_%06llu.tipsy", (unsigned long long)d->step);
        s = grove_tipsy_write(out_path(a, path, sizeof path, name), n, d->time, x, v, m, st->pot,
                              grove_nbody_get_params(sim)->gravity.softening, 1);
        if (s == GROVE_OK && a->units) s = cli_units_write_tipsy_units(a->units, path);
    }
    /* After a signal no more files are begun: the run stops at its next step. */
    bool npy = s == GROVE_OK && !(a->tipsy && cli_interrupted());
    if (npy && a->hdf5) {
        snprintf(name, sizeof name, "snap_%06llu.hdf5", (unsigned long long)d->step);
        s = cli_nbody_write_hdf5(out_path(a, path, sizeof path, name), n, d->time, x, v, m, st->pot, a->units);
        npy = false;
    }
    grove_array snap = {0};
    if (npy) s = grove_array_create(&snap, GROVE_FLOAT64, n, 7);
    if (npy && s == GROVE_OK) {
        double *row = snap.data;
        for (size_t i = 0; i < n; i++, row += 7) {
            memcpy(row, x + 3 * i, 3 * sizeof *x);
            memcpy(row + 3, v + 3 * i, 3 * sizeof *v);
            row[6] = m[i];
        }
        snprintf(name, sizeof name, "snap_%06llu.npy", (unsigned long long)d->step);
        s = grove_npy_write(out_path(a, path, sizeof path, name), &snap);
    }
    grove_array_free(&snap);
    if (s == GROVE_OK && a->render && !cli_interrupted()) {
        grove_render_params rp;
        grove_render_params_init(&rp);
        rp.extent = a->render_extent;
        for (int k = 0; k < 3; k++) rp.center[k] = d->com[k];
        snprintf(name, sizeof name, "snap_%06llu.png", (unsigned long long)d->step);
        s = grove_render_png(grove_points_f64(x, n, 3), m, &rp, out_path(a, path, sizeof path, name));
    }
    return s;
}

/* Whether a signal stopped the run, on any rank (collective under mpirun). */
static bool interrupted_anywhere(const grove_mpi *mpi)
{
    return grove_mpi_agree(mpi, cli_interrupted() ? GROVE_CANCELLED : GROVE_OK) != GROVE_OK;
}

/* Snapshot files for the current step (rank 0 writes them under mpirun),
 * then the checkpoint. */
static grove_status write_outputs(const nbody_args *a, const grove_nbody *sim, const grove_mpi *mpi)
{
    grove_nbody_diag d;
    snapshot_state st;
    grove_status s = grove_nbody_diagnostics(sim, &d);
    if (s == GROVE_OK) s = state_on_lead(sim, mpi, &st);
    if (s != GROVE_OK) return s;
    if (grove_mpi_rank(mpi) == 0) s = write_snapshot(a, sim, &d, &st);
    free(st.buf);
    s = grove_mpi_agree(mpi, s);
    char path[4096];
    if (s == GROVE_OK && !interrupted_anywhere(mpi))
        s = grove_nbody_checkpoint_write(sim, out_path(a, path, sizeof path, "checkpoint.grove"));
    return s;
}
static double norm3(const double *v) { return sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]); }

/* Particles per level, counts[0..K] (K = max_level; [n] unless block),
 * over every rank (collective under mpirun). */
static size_t level_counts(const grove_nbody *sim, long long counts[GROVE_NBODY_MAX_LEVEL + 1])
{
    const grove_nbody_params *p = grove_nbody_get_params(sim);
    size_t levels = p->timestep == GROVE_TIMESTEP_BLOCK ? (size_t)p->max_level + 1 : 1;
    uint64_t c[GROVE_NBODY_MAX_LEVEL + 1];
    grove_nbody_level_counts(sim, c);
    for (size_t k = 0; k < levels; k++) counts[k] = (long long)c[k];
    return levels;
}

/* Force evaluations per unit time since the invocation began (d0). */
static double evaluation_rate(const nbody_args *a, const grove_nbody_diag *d)
{
    double t = d->time - a->d0.time;
    return t > 0 ? (double)(grove_nbody_force_evaluations(a->sim) - a->evaluations0) / t : 0;
}

/* The live report line; block steps add the occupied levels as
 * level:count pairs. Collective under mpirun; rank 0 prints. */
static void report(const nbody_args *a, const grove_nbody_diag *d, bool lead)
{
    long long counts[GROVE_NBODY_MAX_LEVEL + 1];
    size_t levels = level_counts(a->sim, counts);
    if (!lead) return;
    double e0 = a->e0;
    printf("step %6llu  t %9.4f  E %.10f  dE/E %+.3e  |P| %.3e  |L| %.6e  evals/t %.3e", (unsigned long long)d->step,
           d->time, d->energy, e0 != 0 ? (d->energy - e0) / fabs(e0) : 0.0, norm3(d->momentum),
           norm3(d->angular_momentum), evaluation_rate(a, d));
    if (grove_nbody_get_params(a->sim)->timestep == GROVE_TIMESTEP_BLOCK) {
        printf("  levels");
        for (size_t k = 0; k < levels; k++)
            if (counts[k]) printf(" %zu:%lld", k, counts[k]);
    }
    putchar('\n');
    fflush(stdout);
}

/* --units: a known system, which sets G; generated ICs are in Henon units. */
static bool check_units(nbody_args *a)
{
    a->units = cli_units_find(a->units_name);
    if (!a->units) {
        cli_error("nbody", "--units: expected %s, got '%s'", cli_units_names(), a->units_name);
        return false;
    }
    if (a->given.G) {
        cli_error("nbody", "give --units or --G, not both (--units %s means G = %.10g)", a->units->name,
                  cli_units_G(a->units));
        return false;
    }
    if (!a->input.path && !a->resume && cli_units_physical(a->units)) {
        cli_error("nbody", IC_UNITS_MESSAGE, a->units->name);
        return false;
    }
    a->params.gravity.G = cli_units_G(a->units);
    return true;
}

/* --format npy|hdf5, hdf5 where grove has libhdf5. */
static bool check_format(nbody_args *a)
{
    a->hdf5 = a->format && strcmp(a->format, "hdf5") == 0;
    if (a->format && !a->hdf5 && strcmp(a->format, "npy") != 0) {
        cli_error("nbody", "--format: expected npy or hdf5, got '%s'", a->format);
        return false;
    }
    if (a->hdf5 && !grove_hdf5_version()) {
        cli_error("nbody", "--format hdf5: %s (grove info)", grove_last_error());
        return false;
    }
    a->halos.hdf5 = a->hdf5;
    return true;
}

/* The library takes at most 2^32 - 2 particles (its octree's limit). */
static const size_t N_MAX = (size_t)UINT32_MAX - 1;

static bool check(void *state)
{
    nbody_args *a = state;
    if (!a->out || !a->have_steps) {
        cli_error("nbody", "--out DIR and --steps K are required (see --help)");
        return false;
    }
    if (a->input.path && a->ic) {
        cli_error("nbody", "give --ic or --input, not both");
        return false;
    }
    if (!a->ic) a->ic = "plummer";
    if (!nbody_ic_kind(a->ic, NULL)) {
        cli_error("nbody", "--ic: expected plummer, cold, merger, hernquist or plummer-bh, got '%s'", a->ic);
        return false;
    }
    if (a->given.bh_mass && !(a->bh_mass >= 0 && a->bh_mass < 1)) {
        cli_error("nbody", "--bh-mass: expected a fraction in [0, 1), got %g", a->bh_mass);
        return false;
    }
    if (a->given.bh_mass && !a->resume && strcmp(a->ic, "plummer-bh") != 0) {
        cli_error("nbody", "--bh-mass needs --ic plummer-bh");
        return false;
    }
    if (a->timestep) {
        size_t k = 0;
        while (k < 3 && strcmp(a->timestep, TIMESTEPS[k]) != 0) k++;
        if (k == 3) {
            cli_error("nbody", "--timestep: expected shared, adaptive or block, got '%s'", a->timestep);
            return false;
        }
        a->params.timestep = (grove_timestep)k;
        if (k == GROVE_TIMESTEP_SHARED && a->params.eta > 0) {
            cli_error("nbody", "--eta %g needs --timestep adaptive or block (the shared step is --dt)", a->params.eta);
            return false;
        }
    }
    if (a->given.max_level && !a->resume && a->params.timestep != GROVE_TIMESTEP_BLOCK) {
        cli_error("nbody", "--max-level needs --timestep block");
        return false;
    }
    a->params.max_level = a->max_level;
    if (a->units_name && !check_units(a)) return false;
    if (!check_format(a) || !cli_halos_check(&a->halos)) return false;
    if (!a->input.path && a->n == 0 && !a->resume) {
        cli_error("nbody", "--n N (>= 1) is required with --ic");
        return false;
    }
    if (a->n > N_MAX) {
        cli_error("nbody", "--n: expected a whole number in 1..%zu (the most particles a run holds), got %zu", N_MAX,
                  a->n);
        return false;
    }
    return true;
}

/* --out, made once the start is known to work; the temporaries of ended
 * runs in it go (cli_remove_stale). */
static bool make_out(const nbody_args *a)
{
    if (mkdir(a->out, 0777) != 0 && errno != EEXIST) {
        cli_note_error("cannot create %s: %s", a->out, strerror(errno));
        return false;
    }
    char path[4096];
    cli_remove_stale(out_path(a, path, sizeof path, "snap_"), true);
    cli_remove_stale(out_path(a, path, sizeof path, "checkpoint.grove"), false);
    return true;
}

/* make_out on rank 0 alone under mpirun, the ranks agreeing. */
static grove_status make_out_once(const nbody_args *a, const grove_mpi *mpi)
{
    bool made = grove_mpi_rank(mpi) != 0 || make_out(a);
    return grove_mpi_agree(mpi, made ? GROVE_OK : GROVE_IO_ERROR);
}

/* Run to the target step, writing snapshots and reports on the way. */
static grove_status simulate(nbody_args *a, cli_run *run)
{
    const grove_options *o = &run->options;
    grove_options quiet = *o;
    quiet.progress = NULL;
    grove_nbody_diag d;
    grove_status s = grove_nbody_diagnostics(a->sim, &d);
    if (s != GROVE_OK) return s;
    a->e0 = d.energy;
    uint64_t first = d.step, report_every = a->report_every ? a->report_every : (a->steps - first + 9) / 10;
    bool talk = !run->common.quiet && !run->common.json, lead = grove_mpi_rank(o->mpi) == 0;
    if (talk) report(a, &d, lead);
    if (!a->resumed) {
        double t = cli_now();
        s = write_outputs(a, a->sim, o->mpi);
        run->io_seconds += cli_now() - t;
        if (s == GROVE_OK && cli_halos_due(&a->halos, d.step, a->steps))
            s = cli_halos_write(&a->halos, a->sim, a->out, a->units, d.step, d.time, o);
    }
    while (s == GROVE_OK && d.step < a->steps) {
        double t = cli_now();
        s = grove_nbody_step(a->sim, 1, &quiet);
        run->seconds += cli_now() - t;
        if (s == GROVE_OK) s = grove_nbody_diagnostics(a->sim, &d);
        if (s != GROVE_OK) break;
        if (o->progress && lead)
            o->progress(o->progress_user, "nbody", (double)(d.step - first) / (double)(a->steps - first));
        if (talk && (report_every == 0 || d.step % report_every == 0 || d.step == a->steps)) {
            if (o->progress && lead) fputc('\n', stderr);
            report(a, &d, lead);
        }
        if ((a->snapshot_every && d.step % a->snapshot_every == 0) || d.step == a->steps) {
            t = cli_now();
            s = write_outputs(a, a->sim, o->mpi);
            run->io_seconds += cli_now() - t;
        }
        if (s == GROVE_OK && cli_halos_due(&a->halos, d.step, a->steps))
            s = cli_halos_write(&a->halos, a->sim, a->out, a->units, d.step, d.time, o);
    }
    return s;
}

/* Each rank's share of the run, on rank 0 (collective). */
static grove_status gather_load(nbody_args *a, const grove_mpi *mpi)
{
    size_t ranks = (size_t)grove_mpi_size(mpi);
    a->rank_particles = calloc((3 + GROVE_MPI_PHASES) * ranks, sizeof *a->rank_particles);
    if (!a->rank_particles) return GROVE_OUT_OF_MEMORY;
    a->rank_bytes = a->rank_particles + ranks;
    a->rank_migrated = a->rank_bytes + ranks;
    a->rank_phase_ns = a->rank_migrated + ranks;
    grove_nbody_rank_stats st;
    grove_nbody_load(a->sim, &st);
    a->decompositions = st.decompositions;
    grove_mpi_gather_int64(mpi, (int64_t)st.particles, a->rank_particles);
    grove_mpi_gather_int64(mpi, grove_mpi_bytes_sent(mpi), a->rank_bytes);
    grove_mpi_gather_int64(mpi, (int64_t)(st.migrated - a->load0.migrated), a->rank_migrated);
    for (size_t k = 0; k < GROVE_MPI_PHASES; k++)
        grove_mpi_gather_int64(mpi, (int64_t)((st.seconds[k] - a->load0.seconds[k]) * 1e9),
                               a->rank_phase_ns + k * ranks);
    return GROVE_OK;
}

static grove_status run(void *state, cli_run *run)
{
    nbody_args *a = state;
    a->params.conserve_momentum = !a->raw_forces;
    a->types = run->common.types;
    double t0 = cli_now();
    grove_status s = cli_device_take(&run->options, a->device);
    if (s != GROVE_OK) return s;
    s = start(a, &run->options, &a->sim, &a->resumed);
    a->setup_seconds = cli_now() - t0;
    if (s == GROVE_OK) s = make_out_once(a, run->options.mpi);
    /* Failures name the file the run started from. */
    run->fail_path = a->resumed ? out_path(a, a->checkpoint, sizeof a->checkpoint, "checkpoint.grove") : a->input.path;
    if (s == GROVE_OK && a->resumed) s = nbody_resume_settings(a, run);
    if (s == GROVE_OK) s = nbody_keep_settings(a);
    if (s == GROVE_OK && a->units)
        s = grove_mpi_agree(run->options.mpi, grove_mpi_rank(run->options.mpi) == 0
                                                  ? cli_units_write_param(a->units, a->out) : GROVE_OK);
    if (s == GROVE_OK) s = grove_nbody_diagnostics(a->sim, &a->d0);
    if (s == GROVE_OK) a->evaluations0 = grove_nbody_force_evaluations(a->sim);
    if (s == GROVE_OK) grove_nbody_load(a->sim, &a->load0);
    if (s == GROVE_OK) s = simulate(a, run);
    if (s != GROVE_OK) return s;
    grove_nbody_diagnostics(a->sim, &a->d);
    grove_gravity_stats st;
    grove_nbody_stats(a->sim, &st);
    size_t n = grove_nbody_total(a->sim);
    a->done = a->d.step - a->d0.step;
    a->rate = run->seconds > 0 ? (double)n * (double)a->done / run->seconds : 0;
    a->per = n ? (st.particle_interactions + st.cell_interactions) / (double)n : 0;
    a->rel = a->e0 != 0 ? (a->d.energy - a->e0) / fabs(a->e0) : 0;
    a->evaluation_rate = evaluation_rate(a, &a->d);
    a->levels = level_counts(a->sim, a->level_counts);
    return run->options.mpi ? gather_load(a, run->options.mpi) : GROVE_OK;
}

static void summary(void *state, const cli_run *run)
{
    const nbody_args *a = state;
    printf("nbody: %zu particles, %llu step%s%s to t = %.6g, relative energy error %.3e, %.3g particles/s "
           "(%.0f interactions per particle) on %d thread%s\n",
           grove_nbody_total(a->sim), (unsigned long long)a->done, a->done == 1 ? "" : "s",
           a->resumed ? " (resumed)" : "", a->d.time, a->rel, a->rate, a->per, run->threads,
           run->threads == 1 ? "" : "s");
}

/* Under mpirun: the ranks, each one's particles at the end, bytes sent
 * (in all and per step), and over this invocation's steps the particles
 * sent across domain boundaries and the seconds in each phase
 * (rank_seconds_NAME); the decompositions since the run began and the
 * load imbalance (the slowest rank's seconds in tree walks over the
 * mean). */
static void ranks_json(const nbody_args *a, const cli_run *run, cli_json *j)
{
    int ranks = grove_mpi_size(run->options.mpi);
    long long *v = malloc(4 * (size_t)ranks * sizeof *v);
    double *per = malloc((size_t)ranks * sizeof *per);
    if (v && per) {
        double most = 0, sum = 0;
        for (int r = 0; r < ranks; r++) {
            v[r] = a->rank_particles[r];
            v[ranks + r] = a->rank_bytes[r];
            v[2 * ranks + r] = a->rank_migrated[r];
            per[r] = a->done ? (double)a->rank_bytes[r] / (double)a->done : 0;
            double w = (double)a->rank_phase_ns[GROVE_MPI_PHASE_WALK * ranks + r] * 1e-9;
            most = w > most ? w : most;
            sum += w;
        }
        cli_json_int(j, "ranks", ranks);
        cli_json_ints(j, "rank_particles", v, (size_t)ranks);
        cli_json_ints(j, "rank_bytes_sent", v + ranks, (size_t)ranks);
        cli_json_nums(j, "rank_bytes_per_step", per, (size_t)ranks);
        cli_json_ints(j, "rank_migrated", v + 2 * ranks, (size_t)ranks);
        cli_json_int(j, "decompositions", (long long)a->decompositions);
        cli_json_num(j, "load_imbalance", sum > 0 ? most / (sum / ranks) : 1);
        for (int k = 0; k < GROVE_MPI_PHASES; k++) {
            char name[64];
            for (int r = 0; r < ranks; r++) per[r] = (double)a->rank_phase_ns[k * ranks + r] * 1e-9;
            snprintf(name, sizeof name, "rank_seconds_%s", cli_mpi_phases[k]);
            cli_json_nums(j, name, per, (size_t)ranks);
        }
    }
    free(v);
    free(per);
}

static void json(void *state, const cli_run *run, cli_json *j)
{
    const nbody_args *a = state;
    const grove_nbody_params *p = grove_nbody_get_params(a->sim);
    cli_json_int(j, "n", (long long)grove_nbody_total(a->sim));
    cli_json_int(j, "steps", (long long)a->done);
    cli_json_int(j, "step", (long long)a->d.step);
    cli_json_num(j, "time", a->d.time);
    cli_json_bool(j, "resumed", a->resumed);
    cli_json_num(j, "theta", p->gravity.theta);
    cli_json_num(j, "softening", p->gravity.softening);
    cli_json_num(j, "G", p->gravity.G);
    if (a->units) cli_json_str(j, "units", a->units->name);
    cli_json_num(j, "dt", p->dt);
    cli_json_str(j, "timestep", TIMESTEPS[p->timestep]);
    cli_json_num(j, "eta", p->eta);
    cli_json_int(j, "max_level", p->max_level);
    cli_json_bool(j, "conserve_momentum", p->conserve_momentum != 0);
    cli_json_num(j, "energy_initial", a->e0);
    cli_json_num(j, "energy", a->d.energy);
    cli_json_num(j, "relative_energy_error", a->rel);
    cli_json_num(j, "momentum", norm3(a->d.momentum));
    cli_json_num(j, "angular_momentum", norm3(a->d.angular_momentum));
    cli_json_num(j, "particles_per_second", a->rate);
    cli_json_num(j, "interactions_per_particle", a->per);
    cli_json_int(j, "force_evaluations", (long long)grove_nbody_force_evaluations(a->sim));
    cli_json_num(j, "force_evaluations_per_time", a->evaluation_rate);
    cli_json_ints(j, "level_counts", a->level_counts, a->levels);
    cli_json_num(j, "setup_seconds", a->setup_seconds);
    if (a->halos.every) {
        cli_json_int(j, "fof_catalogues", (long long)a->halos.catalogues);
        cli_json_int(j, "fof_groups", (long long)a->halos.groups);
        cli_json_int(j, "fof_grouped_particles", (long long)a->halos.grouped);
        cli_json_num(j, "fof_linking_length", a->halos.last_linking_length);
        cli_json_num(j, "fof_seconds", a->halos.seconds);
    }
    if (a->rank_particles) ranks_json(a, run, j);
}

static void release(void *state)
{
    nbody_args *a = state;
    grove_nbody_free(a->sim);
    free(a->rank_particles);
}

int cmd_nbody(int argc, char **argv)
{
    static const cli_command command = {"nbody", usage, check, run, summary, NULL, json, release};
    nbody_args a;
    memset(&a, 0, sizeof a);
    grove_nbody_params_init(&a.params);
    a.params.gravity.softening = 0.01;
    a.render_extent = 8;
    a.max_level = a.params.max_level;
    const cli_opt opts[] = {
        {"--ic", OPT_STRING, &a.ic, &a.given.ic, CLI_ANY},
        {"--n", OPT_SIZE, &a.n, &a.given.n, CLI_ANY},
        {"--seed", OPT_U64, &a.seed, &a.given.seed, CLI_ANY},
        {"--bh-mass", OPT_DOUBLE, &a.bh_mass, &a.given.bh_mass, CLI_ANY},
        {"--input", OPT_INPUT, &a.input, &a.given.input, CLI_ANY},
        {"--dt", OPT_DOUBLE, &a.params.dt, &a.given.dt, CLI_ABOVE(0)},
        {"--eta", OPT_DOUBLE, &a.params.eta, &a.given.eta, CLI_AT_LEAST(0)},
        {"--timestep", OPT_STRING, &a.timestep, &a.given.timestep, CLI_ANY},
        {"--max-level", OPT_INT, &a.max_level, &a.given.max_level, CLI_BETWEEN(0, GROVE_NBODY_MAX_LEVEL)},
        {"--steps", OPT_U64, &a.steps, &a.have_steps, CLI_ANY},
        {"--theta", OPT_DOUBLE, &a.params.gravity.theta, &a.given.theta, CLI_BETWEEN(0, 1)},
        {"--softening|--eps", OPT_DOUBLE, &a.params.gravity.softening, &a.given.softening, CLI_AT_LEAST(0)},
        {"--G", OPT_DOUBLE, &a.params.gravity.G, &a.given.G, CLI_ABOVE(0)},
        {"--snapshot-every", OPT_SIZE, &a.snapshot_every, &a.given.snapshot_every, CLI_ANY},
        {"--report-every", OPT_SIZE, &a.report_every, &a.given.report_every, CLI_ANY},
        {"--out", OPT_STRING, &a.out, NULL, CLI_ANY},
        {"--tipsy", OPT_FLAG, &a.tipsy, NULL, CLI_ANY},
        {"--render", OPT_FLAG, &a.render, NULL, CLI_ANY},
        {"--render-extent", OPT_DOUBLE, &a.render_extent, &a.given.render_extent, CLI_ABOVE(0)},
        {"--resume", OPT_FLAG, &a.resume, NULL, CLI_ANY},
        {"--units", OPT_STRING, &a.units_name, &a.given.units, CLI_ANY},
        {"--raw-forces", OPT_FLAG, &a.raw_forces, NULL, CLI_ANY},
        {"--format", OPT_STRING, &a.format, NULL, CLI_ANY},
        {"--fof-every", OPT_SIZE, &a.halos.every, NULL, CLI_AT_LEAST(1)},
        {"--b", OPT_DOUBLE, &a.halos.b, &a.halos.have_b, CLI_ABOVE(0)},
        {"--linking-length", OPT_DOUBLE, &a.halos.linking_length, &a.halos.have_link, CLI_AT_LEAST(0)},
        {"--min-members", OPT_SIZE, &a.halos.min_members, &a.halos.have_min, CLI_AT_LEAST(1)},
        CLI_DEVICE_OPT(&a.device),
    };
    return cli_command_main(&command, &a, opts, sizeof opts / sizeof opts[0], argc, argv);
}
