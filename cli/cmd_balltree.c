/* grove balltree DATA [--batch B.npy] [--levels K] [--rotate SEED | --rotation R.npy]
 *                --indices I.npy [--mask M.npy] [--centers C.npy --radii R.npy --level J]
 *                [--verify] [--json] */
#include "command.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: grove balltree DATA [--batch B.npy] [--levels K] [--rotate SEED | --rotation R.npy]\n"
    "                      --indices I.npy [--mask M.npy] [--centers C.npy --radii R.npy --level J]\n"
    "                      [--verify] [--threads N] [--json] [--quiet]\n"
    "Perfect binary ball trees (Erwin): one tree per batch id, 2^(L+1) slots each, leaves of\n"
    "one point padded with a copy (mask false). I is (slots,) int64, M is (slots,) bool.\n"
    "  --batch B.npy     (n,) int32/int64 batch ids >= 0, any order (default: one batch)\n"
    "  --levels K        partition mode: stop after K levels, no padding (slots = n)\n"
    "  --rotate SEED     split on points rotated by a seeded random rotation\n"
    "  --rotation R.npy  split on points rotated by the (d, d) matrix R (y = R x)\n"
    "  --centers/--radii ball centres (balls, d) float64 and radii (balls,) at tree level J\n"
    "  --verify          check the result independently (permutation, padding, median splits)\n";

typedef struct balltree_args {
    cli_file data, batch, rotation, indices, mask, centers, radii;
    int levels, level;
    uint64_t rotate_seed;
    bool have_levels, have_rotate, have_level, verify;
    size_t slots, batches, balls;
    int max_levels;
    const char *builder; /* the planner's name for the builder this build runs */
    long page_faults;    /* the build's first touches of fresh memory (--json) */
} balltree_args;

static bool check(void *state)
{
    const balltree_args *a = state;
    const char *problem = NULL;
    if (!a->data.path || !a->indices.path) problem = "DATA and --indices are required (see --help)";
    else if (a->have_rotate && a->rotation.path) problem = "give --rotate or --rotation, not both";
    else if ((a->centers.path || a->radii.path) && !a->have_level) problem = "--centers and --radii need --level J";
    else if (a->have_level && !a->centers.path && !a->radii.path)
        problem = "--level J needs --centers and/or --radii to write";
    if (problem) cli_error("balltree", "%s", problem);
    return !problem;
}

/* Batch ids from a 1-D int32/int64 .npy of n entries, as int64. */
static grove_status load_batch(const char *path, size_t n, grove_array *out)
{
    grove_status s = grove_npy_read(path, out);
    if (s != GROVE_OK) return s;
    if ((out->dtype != GROVE_INT64 && out->dtype != GROVE_INT32) || grove_array_count(out) != n ||
        (out->ndim == 2 && out->shape[1] != 1)) {
        cli_note_error("%s: batch ids must be (%zu,) int32 or int64, got %s with %zu entries", path, n,
                       grove_dtype_name(out->dtype), grove_array_count(out));
        return GROVE_INVALID_ARGUMENT;
    }
    if (out->dtype == GROVE_INT64) return GROVE_OK;
    grove_array wide = {0};
    s = grove_array_create(&wide, GROVE_INT64, n, 0);
    if (s != GROVE_OK) return s;
    for (size_t i = 0; i < n; i++) ((int64_t *)wide.data)[i] = ((const int32_t *)out->data)[i];
    grove_array_free(out);
    *out = wide;
    return GROVE_OK;
}

/* The batch ids and the rotation matrix, when given. */
static grove_status load_inputs(balltree_args *a, size_t d)
{
    grove_status s = GROVE_OK;
    if (a->batch.path) s = load_batch(a->batch.path, a->data.points.n, &a->batch.array);
    if (s != GROVE_OK || !a->rotation.path) return s;
    grove_array *r = &a->rotation.array;
    s = grove_npy_read(a->rotation.path, r);
    if (s == GROVE_OK && (r->dtype != GROVE_FLOAT64 || r->ndim != 2 || r->shape[0] != d || r->shape[1] != d)) {
        cli_note_error("%s: rotation must be a (%zu, %zu) float64 matrix", a->rotation.path, d, d);
        s = GROVE_INVALID_ARGUMENT;
    }
    return s;
}

/* The tree's layout and the arrays it fills. */
static grove_status allocate(balltree_args *a, const grove_balltree_params *params, cli_run *run)
{
    const grove_points *pts = &a->data.points;
    grove_status s = grove_balltree_layout(pts->n, params, &a->slots, &a->batches);
    /* The threads the build itself uses (a small one-off build uses one). */
    if (s == GROVE_OK) s = grove_balltree_threads(pts->n, params, &run->options, &run->threads);
    if (s == GROVE_OK) s = grove_balltree_builder(pts->n, pts->d, params, &a->builder);
    if (s == GROVE_OK) s = grove_array_create(&a->indices.array, GROVE_INT64, a->slots, 0);
    if (s == GROVE_OK) s = grove_array_create(&a->mask.array, GROVE_BOOL, a->slots, 0);
    if (s == GROVE_OK && a->have_level) {
        s = grove_balltree_ball_count(pts->n, params, a->level, &a->balls);
        if (s == GROVE_OK) s = grove_array_create(&a->centers.array, GROVE_FLOAT64, a->balls, pts->d);
        if (s == GROVE_OK) s = grove_array_create(&a->radii.array, GROVE_FLOAT64, a->balls, 0);
    }
    return s;
}

/* The deepest tree of any batch. */
static int max_levels(size_t n, const grove_balltree_params *params, size_t batches)
{
    int levels = 0;
    grove_balltree_batch *info = batches ? malloc(batches * sizeof *info) : NULL;
    if (info && grove_balltree_batches(n, params, info) == GROVE_OK)
        for (size_t b = 0; b < batches; b++)
            if (info[b].levels > levels) levels = info[b].levels;
    free(info);
    return levels;
}

static grove_status run(void *state, cli_run *run)
{
    balltree_args *a = state;
    const grove_points pts = a->data.points;
    /* Reading the batch ids or the rotation: its messages name that file,
     * not the data. */
    const char *data = run->fail_path;
    run->fail_path = NULL;
    double t0 = cli_now();
    grove_status s = load_inputs(a, pts.d);
    run->io_seconds += cli_now() - t0;
    if (s != GROVE_OK) return s;
    run->fail_path = data;

    grove_balltree_params params;
    grove_balltree_params_init(&params);
    params.batch = a->batch.array.data;
    if (a->have_levels) params.levels = a->levels;
    if (a->have_rotate) {
        s = grove_array_create(&a->rotation.array, GROVE_FLOAT64, pts.d, pts.d);
        if (s == GROVE_OK) s = grove_rotation_random(pts.d, a->rotate_seed, a->rotation.array.data);
    }
    params.rotation = a->rotation.array.data;
    if (s == GROVE_OK) s = allocate(a, &params, run);
    if (s == GROVE_OK) {
        double start = cli_now();
        long faults = cli_page_faults();
        s = grove_balltree_build(pts, &params, a->indices.array.data, a->mask.array.data, &run->options);
        if (s == GROVE_OK && a->have_level)
            s = grove_balltree_ball_stats(pts, &params, a->indices.array.data, a->mask.array.data, a->level,
                                          a->centers.array.data, a->radii.array.data, &run->options);
        run->seconds = cli_now() - start;
        a->page_faults = cli_page_faults() - faults;
    }
    if (s == GROVE_OK && a->verify)
        s = grove_balltree_check(pts, &params, a->indices.array.data, a->mask.array.data, &run->options);
    if (s != GROVE_OK) {
        /* The library checks the batch ids and the rotation's values; its
         * message says which, and the line names that file. */
        const char *why = grove_last_error();
        if (a->batch.path && strstr(why, "batch id")) run->fail_path = a->batch.path;
        else if (a->rotation.path && strstr(why, "rotation[")) run->fail_path = a->rotation.path;
        return s;
    }
    a->max_levels = max_levels(pts.n, &params, a->batches);
    return cli_run_stage(run);
}

static void summary(void *state, const cli_run *run)
{
    const balltree_args *a = state;
    const grove_points *pts = &a->data.points;
    printf("balltree: %zu points in %zu dims, %zu batch%s -> %zu slots (%s %d level%s) in %.3f ms on %d thread%s\n",
           pts->n, pts->d, a->batches, a->batches == 1 ? "" : "es", a->slots,
           a->have_levels ? "partition," : "deepest tree", a->max_levels, a->max_levels == 1 ? "" : "s",
           run->seconds * 1e3, run->threads, run->threads == 1 ? "" : "s");
    if (a->verify) printf("balltree: verified: permutation, padding and every median split hold\n");
}

static void json(void *state, const cli_run *run, cli_json *j)
{
    (void)run;
    const balltree_args *a = state;
    cli_json_points(j, &a->data.points);
    cli_json_header_line(j, "header_line", &a->data.info);
    cli_json_int(j, "batches", (long long)a->batches);
    cli_json_int(j, "slots", (long long)a->slots);
    cli_json_str(j, "builder", a->builder);
    cli_json_int(j, "page_faults", a->page_faults);
    cli_json_int(j, a->have_levels ? "partition_levels" : "max_levels", a->max_levels);
    if (a->have_rotate) cli_json_int(j, "rotate_seed", (long long)a->rotate_seed);
    if (a->have_level) {
        cli_json_int(j, "level", a->level);
        cli_json_int(j, "balls", (long long)a->balls);
    }
    if (a->verify) cli_json_bool(j, "verified", true);
}

int cmd_balltree(int argc, char **argv)
{
    static const cli_command command = {"balltree", usage, check, run, summary, NULL, json, NULL};
    balltree_args a = {0};
    const cli_opt opts[] = {
        {"DATA", OPT_POINTS, &a.data, NULL, CLI_ANY},
        {"--batch", OPT_INPUT, &a.batch, NULL, CLI_ANY},
        {"--levels", OPT_INT, &a.levels, &a.have_levels, CLI_AT_LEAST(0)},
        {"--rotate", OPT_U64, &a.rotate_seed, &a.have_rotate, CLI_ANY},
        {"--rotation", OPT_INPUT, &a.rotation, NULL, CLI_ANY},
        {"--indices", OPT_NPY, &a.indices, NULL, CLI_ANY},
        {"--mask", OPT_NPY, &a.mask, NULL, CLI_ANY},
        {"--centers", OPT_NPY, &a.centers, NULL, CLI_ANY},
        {"--radii", OPT_NPY, &a.radii, NULL, CLI_ANY},
        {"--level", OPT_INT, &a.level, &a.have_level, CLI_AT_LEAST(0)},
        {"--verify", OPT_FLAG, &a.verify, NULL, CLI_ANY},
    };
    return cli_command_main(&command, &a, opts, sizeof opts / sizeof opts[0], argc, argv);
}
