/* grove fof SNAP (--linking-length L | --b B) [--box SIZE] [--min-members M] --groups G.npy
 *   [--catalogue H.npy|H.csv|H.hdf5] [--json] */
#include "catalogue.h"
#include "command.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: grove fof SNAP (--linking-length L | --b B) [--box SIZE] [--min-members M] --groups G.npy\n"
    "                 [--catalogue H.npy|H.csv|H.hdf5] [--leaf-size L] [--threads N] [--json] [--quiet]\n"
    "Friends-of-friends groups: particles closer than the linking length (inclusive) are friends, and a\n"
    "group is a chain of friends. SNAP is a .npy of (n, 3) x y z, (n, 4) x y z m or (n, 7)\n"
    "x y z vx vy vz m rows (grove nbody's snapshots), float32 or float64, a Gadget snapshot (HDF5 or\n"
    "Gadget-2 binary, its particle types chosen with --types; docs/snapshots.md), or a tipsy snapshot\n"
    "(grove nbody --tipsy; any other suffix is read as tipsy).\n"
    "  --linking-length L  the linking length, in SNAP's length units\n"
    "  --b B               the linking length in units of the mean interparticle separation\n"
    "                      (V / n)^(1/3), V the box volume with --box, else the volume of the\n"
    "                      particles' bounding box (b = 0.2 is the usual choice)\n"
    "  --box SIZE          a periodic box [0, L)^3 (L) or [0, Lx) x [0, Ly) x [0, Lz) (Lx,Ly,Lz; a\n"
    "                      length of 0 leaves that dimension unbounded): minimum-image distances;\n"
    "                      particles outside are refused\n"
    "  --min-members M     smallest group given an id (default 20)\n"
    "  --groups G.npy      (n,) int64 group of each particle: 0, 1, ... by decreasing size (equal\n"
    "                      sizes by lowest member index), -1 in groups smaller than M\n"
    "  --catalogue H       one row per group, float64 columns group, members, first (lowest member\n"
    "                      index), mass (1 per particle without masses), x, y, z (centre of mass,\n"
    "                      wrapped into the box), then with velocities vx, vy, vz (mean) and sigma_v\n"
    "                      (sqrt of the mass-weighted mean |v - mean|^2, all 3 components), and\n"
    "                      radius (farthest member from the centre); .csv with a header line; .hdf5 a\n"
    "                      GADGET-style halo table (Group/GroupLen, GroupMass, GroupPos, GroupVel,\n"
    "                      GroupOffset, ... and IDs/ID, the members' ids group by group)\n";

/* A loaded snapshot: positions as a view of the file's values, masses and
 * velocities (NULL when the file has none) in float64, the particles' ids
 * (NULL: their rows) and a Gadget snapshot's header. */
typedef struct fof_snap {
    grove_array array;     /* .npy */
    grove_snapshot tipsy;  /* tipsy */
    grove_gadget gadget, gadget_vel; /* a Gadget snapshot: positions, masses, ids; velocities */
    grove_points points;
    double *mass, *velocity;
    const uint64_t *ids;
    bool own;              /* mass and velocity are ours (from a .npy) */
} fof_snap;

static void snap_free(fof_snap *s)
{
    if (s->own) {
        free(s->mass);
        free(s->velocity);
    }
    grove_array_free(&s->array);
    grove_snapshot_free(&s->tipsy);
    grove_gadget_free(&s->gadget);
    grove_gadget_free(&s->gadget_vel);
}

static grove_status load_npy(const char *path, fof_snap *s)
{
    grove_array *a = &s->array;
    grove_status st = grove_npy_read(path, a);
    if (st != GROVE_OK) return st;
    size_t cols = a->ndim == 2 ? a->shape[1] : 0, n = a->shape[0];
    if ((a->dtype != GROVE_FLOAT32 && a->dtype != GROVE_FLOAT64) || (cols != 3 && cols != 4 && cols != 7)) {
        char shape[64];
        if (cols) snprintf(shape, sizeof shape, "(%zu, %zu)", n, cols);
        else snprintf(shape, sizeof shape, "(%zu,)", n);
        cli_note_error("%s: a snapshot is (n, 3) x y z, (n, 4) x y z m or (n, 7) x y z vx vy vz m rows of float32 "
                       "or float64; this file holds %s of shape %s",
                       path, grove_dtype_name(a->dtype), shape);
        return GROVE_INVALID_ARGUMENT;
    }
    size_t elem = grove_dtype_size(a->dtype);
    s->points = (grove_points){a->data, n, 3, a->dtype, cols * elem};
    if (cols == 3) return GROVE_OK;
    s->own = true;
    s->mass = malloc((n ? n : 1) * sizeof *s->mass);
    s->velocity = cols == 7 ? malloc((3 * n + 1) * sizeof *s->velocity) : NULL;
    if (!s->mass || (cols == 7 && !s->velocity)) return GROVE_OUT_OF_MEMORY;
    for (size_t i = 0; i < n; i++) {
        const char *row = (const char *)a->data + i * cols * elem;
#define VALUE(j) (a->dtype == GROVE_FLOAT64 ? ((const double *)row)[j] : (double)((const float *)row)[j])
        s->mass[i] = VALUE(cols - 1);
        for (size_t j = 0; cols == 7 && j < 3; j++) s->velocity[3 * i + j] = VALUE(3 + j);
#undef VALUE
    }
    return GROVE_OK;
}

/* A Gadget snapshot: positions in the file's precision, masses and ids;
 * velocities in float64 (read apart: the catalogue takes float64). */
static grove_status load_gadget(const char *path, unsigned types, fof_snap *s)
{
    grove_gadget_params p;
    grove_gadget_params_init(&p);
    p.types = types;
    p.fields = GROVE_GADGET_POS | GROVE_GADGET_MASS | GROVE_GADGET_IDS;
    grove_status st = grove_gadget_read(path, &p, &s->gadget);
    p.fields = GROVE_GADGET_VEL;
    p.dtype = GROVE_FLOAT64;
    if (st == GROVE_OK) st = grove_gadget_read(path, &p, &s->gadget_vel);
    if (st != GROVE_OK) return st;
    const grove_gadget *g = &s->gadget;
    s->points = (grove_points){g->pos, g->n, 3, g->dtype, 0};
    s->mass = g->mass;
    s->velocity = s->gadget_vel.vel;
    s->ids = g->ids;
    return GROVE_OK;
}

static grove_status load_snap(const char *path, unsigned types, fof_snap *s)
{
    memset(s, 0, sizeof *s);
    if (cli_ends_with(path, ".npy")) return load_npy(path, s);
    grove_gadget_format format = GROVE_GADGET_NONE;
    grove_status st = grove_gadget_probe(path, &format);
    if (st == GROVE_OK && format != GROVE_GADGET_NONE) return load_gadget(path, types, s);
    st = grove_tipsy_read(path, &s->tipsy);
    if (st != GROVE_OK) return st;
    s->points = grove_points_f64(s->tipsy.pos, s->tipsy.n, 3);
    s->mass = s->tipsy.mass;
    s->velocity = s->tipsy.vel;
    return GROVE_OK;
}

typedef struct fof_args {
    cli_file snap, groups, catalogue;
    cli_box box;
    double linking_length, b, separation;
    bool have_link, have_b, masses, velocities;
    grove_fof_params params;
    size_t n, ngroups;
    int64_t grouped, largest;
    cli_ranks ranks; /* on rank 0 of a distributed run */
} fof_args;

static bool hdf5_name(const char *path)
{
    return cli_ends_with(path, ".hdf5") || cli_ends_with(path, ".HDF5") || cli_ends_with(path, ".h5") ||
           cli_ends_with(path, ".H5");
}

static bool check(void *state)
{
    const fof_args *a = state;
    const char *problem = NULL;
    if (!a->snap.path) {
        cli_error("fof", "SNAP is required (see --help)");
        return false;
    }
    if (a->have_link == a->have_b) problem = "give one of --linking-length L and --b B";
    else if (!a->groups.path) problem = "--groups G.npy is required";
    else if (a->catalogue.path && hdf5_name(a->catalogue.path) && !grove_hdf5_version()) {
        cli_error("fof", "--catalogue H.hdf5: %s (grove info)", grove_last_error());
        return false;
    }
    if (problem) cli_error("fof", "%s (see --help)", problem);
    return !problem;
}

/* The groups, then the catalogue as an HDF5 halo table, .csv text or a
 * .npy table. */
static grove_status write_outputs(fof_args *a, const fof_snap *snap, const grove_fof_catalogue *cat, cli_run *run)
{
    double t0 = cli_now();
    grove_array *table = &a->catalogue.array;
    const char *path = a->catalogue.path, *temp = NULL;
    grove_status s = cli_run_stage(run);
    if (s == GROVE_OK && path && hdf5_name(path)) {
        s = cli_outputs_file(&run->outs, path, &temp);
        if (s == GROVE_OK)
            s = cli_catalogue_hdf5(temp, snap->gadget.pos ? &snap->gadget.header : NULL, cat, a->groups.array.data,
                                   snap->ids, a->n);
        run->io_seconds += cli_now() - t0;
        return s;
    }
    if (s == GROVE_OK && path) s = cli_catalogue_table(cat, table);
    if (s == GROVE_OK && path && (cli_ends_with(path, ".csv") || cli_ends_with(path, ".CSV"))) {
        FILE *f = NULL;
        s = cli_outputs_text(&run->outs, path, &f);
        if (s == GROVE_OK) {
            cli_catalogue_csv(f, table);
            s = cli_file_close(f, path);
        }
    } else if (s == GROVE_OK && path) {
        s = cli_outputs_stage(&run->outs, path, table);
    }
    run->io_seconds += cli_now() - t0;
    return s;
}

/* The groups: under mpirun each rank groups its block of rows and rank 0
 * gathers the ids (every rank gets the whole catalogue; docs/mpi.md);
 * alone the block is all. */
static grove_status find_groups(fof_args *a, const fof_snap *snap, grove_fof_catalogue *cat, cli_run *run)
{
    const grove_mpi *mpi = run->options.mpi;
    size_t first;
    grove_points mine = cli_block(snap->points, mpi, &first);
    int64_t *groups = a->groups.array.data;
    grove_status s = grove_fof(mine, snap->mass ? snap->mass + first : NULL,
                               snap->velocity ? snap->velocity + 3 * first : NULL, &a->params,
                               groups ? groups + first : NULL, &a->ngroups, cat, &run->options);
    if (s == GROVE_OK) s = grove_mpi_gather_blocks(mpi, groups, a->n, sizeof *groups);
    if (s == GROVE_OK && grove_mpi_size(mpi) > 1) s = cli_ranks_gather(&a->ranks, mpi, mine.n);
    return s;
}

static grove_status run(void *state, cli_run *run)
{
    fof_args *a = state;
    /* Snapshots are 3-D: the box's count is checked against that. */
    if (!cli_box_apply("fof", &a->box, 3, &a->params.index)) return cli_run_usage(run);
    double t0 = cli_now();
    fof_snap snap;
    grove_status s = load_snap(a->snap.path, run->common.types, &snap);
    run->io_seconds += cli_now() - t0;
    a->n = snap.points.n;
    grove_fof_catalogue cat;
    memset(&cat, 0, sizeof cat);
    if (s == GROVE_OK) s = grove_array_create(&a->groups.array, GROVE_INT64, a->n, 0);
    if (s == GROVE_OK) {
        double start = cli_now();
        a->params.linking_length = a->linking_length;
        if (a->have_b) {
            s = grove_fof_mean_separation(snap.points, a->box.len, a->box.count, &a->separation);
            a->params.linking_length = a->b * a->separation;
        }
        if (s == GROVE_OK) s = find_groups(a, &snap, &cat, run);
        run->seconds = cli_now() - start;
    }
    a->largest = s == GROVE_OK && a->ngroups ? cat.members[0] : 0;
    for (size_t g = 0; s == GROVE_OK && g < a->ngroups; g++) a->grouped += cat.members[g];
    a->masses = snap.mass != NULL;
    a->velocities = snap.velocity != NULL;
    if (s == GROVE_OK && grove_mpi_rank(run->options.mpi) == 0) s = write_outputs(a, &snap, &cat, run);
    grove_fof_catalogue_free(&cat);
    snap_free(&snap);
    return s;
}

static void summary(void *state, const cli_run *run)
{
    const fof_args *a = state;
    printf("fof: %zu particles, linking length %.6g", a->n, a->params.linking_length);
    if (a->have_b) printf(" (b = %g of the mean separation %.6g)", a->b, a->separation);
    printf("%s -> %zu groups of >= %zu members holding %lld particles (largest %lld) in %.3f s on %d thread%s\n",
           a->box.count ? " in a periodic box" : "", a->ngroups, a->params.min_members, (long long)a->grouped,
           (long long)a->largest, run->seconds, run->threads, run->threads == 1 ? "" : "s");
}

static void json(void *state, const cli_run *run, cli_json *j)
{
    const fof_args *a = state;
    cli_json_int(j, "n", (long long)a->n);
    cli_json_int(j, "d", 3);
    cli_json_num(j, "linking_length", a->params.linking_length);
    if (a->have_b) {
        cli_json_num(j, "b", a->b);
        cli_json_num(j, "mean_separation", a->separation);
    }
    cli_json_bool(j, "periodic", a->box.count > 0);
    cli_json_int(j, "min_members", (long long)a->params.min_members);
    cli_json_bool(j, "masses", a->masses);
    cli_json_bool(j, "velocities", a->velocities);
    cli_json_int(j, "groups", (long long)a->ngroups);
    cli_json_int(j, "grouped_particles", (long long)a->grouped);
    cli_json_int(j, "largest", (long long)a->largest);
    cli_ranks_json(&a->ranks, run->options.mpi, j);
}

static void release(void *state) { cli_ranks_free(&((fof_args *)state)->ranks); }

int cmd_fof(int argc, char **argv)
{
    static const cli_command command = {"fof", usage, check, run, summary, NULL, json, release};
    fof_args a;
    memset(&a, 0, sizeof a);
    grove_fof_params_init(&a.params);
    const cli_opt opts[] = {
        {"SNAP", OPT_INPUT, &a.snap, NULL, CLI_ANY},
        {"--linking-length", OPT_DOUBLE, &a.linking_length, &a.have_link, CLI_AT_LEAST(0)},
        {"--b", OPT_DOUBLE, &a.b, &a.have_b, CLI_AT_LEAST(0)},
        {"--box", OPT_BOX, &a.box, NULL, CLI_ANY},
        {"--min-members", OPT_SIZE, &a.params.min_members, NULL, CLI_AT_LEAST(1)},
        {"--groups", OPT_NPY, &a.groups, NULL, CLI_ANY},
        {"--catalogue", OPT_TABLE, &a.catalogue, NULL, CLI_ANY},
        {"--leaf-size", OPT_SIZE, &a.params.index.leaf_size, NULL, CLI_BETWEEN(0, GROVE_INDEX_LEAF_SIZE_MAX)},
    };
    return cli_command_main(&command, &a, opts, sizeof opts / sizeof opts[0], argc, argv);
}
