/* grove balltree DATA [--batch B.npy] [--levels K] [--rotate SEED | --rotation R.npy]
 *                --indices I.npy [--mask M.npy] [--centers C.npy --radii R.npy --level J]
 *                [--verify] [--json] */
#include "cli.h"

#include <math.h>
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
    const char *data, *batch, *rotation, *indices, *mask, *centers, *radii;
    int levels, level;
    uint64_t rotate_seed;
    bool have_levels, have_rotate, have_level, verify;
} balltree_args;

/* Batch ids from a 1-D int32/int64 .npy of n entries, as int64. */
static int load_batch(const char *path, size_t n, grove_array *out)
{
    grove_status s = grove_npy_read(path, out);
    if (s != GROVE_OK) return cli_fail("balltree", s);
    if ((out->dtype != GROVE_INT64 && out->dtype != GROVE_INT32) || grove_array_count(out) != n ||
        (out->ndim == 2 && out->shape[1] != 1)) {
        cli_note_error("%s: batch ids must be (%zu,) int32 or int64, got %s with %zu entries", path, n,
                       grove_dtype_name(out->dtype), grove_array_count(out));
        return cli_fail("balltree", GROVE_INVALID_ARGUMENT);
    }
    if (out->dtype == GROVE_INT32) {
        grove_array wide = {0};
        s = grove_array_alloc(&wide, GROVE_INT64, n, 0);
        if (s != GROVE_OK) return cli_fail("balltree", s);
        for (size_t i = 0; i < n; i++) ((int64_t *)wide.data)[i] = ((const int32_t *)out->data)[i];
        grove_array_free(out);
        *out = wide;
    }
    /* Checked here too, so the message names this file. */
    const int64_t *id = out->data;
    for (size_t i = 0; i < n; i++)
        if (id[i] < 0) {
            cli_note_error("%s: batch id %lld at index %zu is negative", path, (long long)id[i], i);
            return cli_fail("balltree", GROVE_INVALID_ARGUMENT);
        }
    return CLI_EXIT_OK;
}

static bool check_args(const balltree_args *a)
{
    if (!a->data || !a->indices) {
        cli_error("balltree", "DATA and --indices are required (see --help)");
        return false;
    }
    if (a->have_rotate && a->rotation) {
        cli_error("balltree", "give --rotate or --rotation, not both");
        return false;
    }
    if ((a->centers || a->radii) && !a->have_level) {
        cli_error("balltree", "--centers and --radii need --level J");
        return false;
    }
    if (a->have_level && !a->centers && !a->radii) {
        cli_error("balltree", "--level J needs --centers and/or --radii to write");
        return false;
    }
    const cli_path paths[] = {
        {"DATA", a->data, CLI_INPUT},          {"--batch", a->batch, CLI_INPUT},
        {"--rotation", a->rotation, CLI_INPUT}, {"--indices", a->indices, CLI_OUTPUT_NPY},
        {"--mask", a->mask, CLI_OUTPUT_NPY},   {"--centers", a->centers, CLI_OUTPUT_NPY},
        {"--radii", a->radii, CLI_OUTPUT_NPY},
    };
    return cli_check_paths("balltree", paths, sizeof paths / sizeof paths[0]);
}

/* Everything the run holds, freed in one place. */
typedef struct balltree_run {
    grove_array points, batch, rotation, indices, mask, centers, radii;
} balltree_run;

static void run_free(balltree_run *r)
{
    grove_array *all[] = {&r->points, &r->batch, &r->rotation, &r->indices, &r->mask, &r->centers, &r->radii};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) grove_array_free(all[i]);
}

/* Loads the inputs named by the arguments (points, batch ids, rotation). */
static int load_inputs(const balltree_args *a, const cli_common *common, balltree_run *r, grove_points *pts,
                       grove_load_info *info)
{
    grove_status s = cli_load_points(a->data, common, &r->points, info);
    if (s == GROVE_OK) s = grove_array_points(&r->points, pts);
    if (s != GROVE_OK) return cli_fail("balltree", s);
    if (a->batch) {
        int rc = load_batch(a->batch, pts->n, &r->batch);
        if (rc != CLI_EXIT_OK) return rc;
    }
    if (a->rotation) {
        s = grove_npy_read(a->rotation, &r->rotation);
        if (s != GROVE_OK) return cli_fail("balltree", s);
        if (r->rotation.dtype != GROVE_FLOAT64 || r->rotation.ndim != 2 || r->rotation.shape[0] != pts->d ||
            r->rotation.shape[1] != pts->d) {
            cli_note_error("%s: rotation must be a (%zu, %zu) float64 matrix", a->rotation, pts->d, pts->d);
            return cli_fail("balltree", GROVE_INVALID_ARGUMENT);
        }
        const double *m = r->rotation.data;
        for (size_t k = 0; k < pts->d * pts->d; k++)
            if (!isfinite(m[k])) {
                cli_note_error("%s: rotation[%zu][%zu] is not finite", a->rotation, k / pts->d, k % pts->d);
                return cli_fail("balltree", GROVE_INVALID_ARGUMENT);
            }
    }
    return CLI_EXIT_OK;
}

static void print_summary(const balltree_args *a, const grove_points *pts, size_t slots, size_t batches,
                          int max_levels, double seconds, int threads)
{
    printf("balltree: %zu points in %zu dims, %zu batch%s -> %zu slots (%s %d level%s) in %.3f ms on %d thread%s\n",
           pts->n, pts->d, batches, batches == 1 ? "" : "es", slots, a->have_levels ? "partition," : "deepest tree",
           max_levels, max_levels == 1 ? "" : "s", seconds * 1e3, threads, threads == 1 ? "" : "s");
}

int cmd_balltree(int argc, char **argv)
{
    if (cli_help(argc, argv, usage)) return CLI_EXIT_OK;
    balltree_args a = {0};
    const cli_opt opts[] = {
        {"--batch", OPT_STRING, &a.batch, NULL, CLI_ANY},
        {"--levels", OPT_INT, &a.levels, &a.have_levels, CLI_AT_LEAST(0)},
        {"--rotate", OPT_U64, &a.rotate_seed, &a.have_rotate, CLI_ANY},
        {"--rotation", OPT_STRING, &a.rotation, NULL, CLI_ANY},
        {"--indices", OPT_STRING, &a.indices, NULL, CLI_ANY},
        {"--mask", OPT_STRING, &a.mask, NULL, CLI_ANY},
        {"--centers", OPT_STRING, &a.centers, NULL, CLI_ANY},
        {"--radii", OPT_STRING, &a.radii, NULL, CLI_ANY},
        {"--level", OPT_INT, &a.level, &a.have_level, CLI_AT_LEAST(0)},
        {"--verify", OPT_FLAG, &a.verify, NULL, CLI_ANY},
    };
    const char *positional[1];
    size_t npositional;
    cli_common common;
    if (!cli_parse("balltree", argc, argv, opts, sizeof opts / sizeof opts[0], positional, 1, &npositional, &common))
        return CLI_EXIT_USAGE;
    a.data = npositional ? positional[0] : NULL;
    if (!check_args(&a)) return CLI_EXIT_USAGE;

    grove_options options = cli_options(&common);
    int threads = grove_options_threads(&options);
    balltree_run r = {0};
    grove_points pts;
    double t0 = cli_now();
    grove_load_info load;
    int rc = load_inputs(&a, &common, &r, &pts, &load);
    double io_seconds = cli_now() - t0;
    if (rc != CLI_EXIT_OK) {
        run_free(&r);
        return rc;
    }

    grove_balltree_params params;
    grove_balltree_params_init(&params);
    params.batch = r.batch.data;
    if (a.have_levels) params.levels = a.levels;
    grove_status s = GROVE_OK;
    size_t slots = 0, batches = 0, balls = 0;
    double seconds = 0;
    if (a.have_rotate) {
        s = grove_array_alloc(&r.rotation, GROVE_FLOAT64, pts.d, pts.d);
        if (s == GROVE_OK) s = grove_rotation_random(pts.d, a.rotate_seed, r.rotation.data);
    }
    params.rotation = r.rotation.data;
    if (s == GROVE_OK) s = grove_balltree_layout(pts.n, &params, &slots, &batches);
    /* The threads the build itself uses (a small one-off build uses one). */
    if (s == GROVE_OK) s = grove_balltree_threads(pts.n, &params, &options, &threads);
    const char *builder = NULL;
    if (s == GROVE_OK) s = grove_balltree_builder(pts.n, pts.d, &params, &builder);
    if (s == GROVE_OK) s = grove_array_alloc(&r.indices, GROVE_INT64, slots, 0);
    if (s == GROVE_OK) s = grove_array_alloc(&r.mask, GROVE_BOOL, slots, 0);
    if (s == GROVE_OK && a.have_level) {
        s = grove_balltree_ball_count(pts.n, &params, a.level, &balls);
        if (s == GROVE_OK) s = grove_array_alloc(&r.centers, GROVE_FLOAT64, balls, pts.d);
        if (s == GROVE_OK) s = grove_array_alloc(&r.radii, GROVE_FLOAT64, balls, 0);
    }
    if (s == GROVE_OK) {
        double start = cli_now();
        s = grove_balltree_build(pts, &params, r.indices.data, r.mask.data, &options);
        if (s == GROVE_OK && a.have_level)
            s = grove_balltree_ball_stats(pts, &params, r.indices.data, r.mask.data, a.level, r.centers.data,
                                          r.radii.data, &options);
        seconds = cli_now() - start;
    }
    if (s == GROVE_OK && a.verify) s = grove_balltree_check(pts, &params, r.indices.data, r.mask.data, &options);
    if (s != GROVE_OK) {
        run_free(&r);
        return cli_fail_on("balltree", a.data, s);
    }

    int max_levels = 0;
    if (batches) {
        grove_balltree_batch *info = malloc(batches * sizeof *info);
        if (info && grove_balltree_batches(pts.n, &params, info) == GROVE_OK)
            for (size_t b = 0; b < batches; b++)
                if (info[b].levels > max_levels) max_levels = info[b].levels;
        free(info);
    }

    double t1 = cli_now();
    cli_outputs outs = {0};
    s = cli_outputs_stage(&outs, a.indices, &r.indices);
    if (s == GROVE_OK && a.mask) s = cli_outputs_stage(&outs, a.mask, &r.mask);
    if (s == GROVE_OK && a.centers) s = cli_outputs_stage(&outs, a.centers, &r.centers);
    if (s == GROVE_OK && a.radii) s = cli_outputs_stage(&outs, a.radii, &r.radii);
    if (s == GROVE_OK) s = cli_outputs_commit(&outs);
    else cli_outputs_abort(&outs);
    io_seconds += cli_now() - t1;
    if (s != GROVE_OK) {
        run_free(&r);
        return cli_fail("balltree", s);
    }

    if (!common.quiet && !common.json) {
        print_summary(&a, &pts, slots, batches, max_levels, seconds, threads);
        if (a.verify) printf("balltree: verified: permutation, padding and every median split hold\n");
    }
    if (common.json) {
        cli_json j;
        cli_json_begin(&j, "balltree");
        cli_json_points(&j, &pts);
        cli_json_header_line(&j, "header_line", &load);
        cli_json_int(&j, "batches", (long long)batches);
        cli_json_int(&j, "slots", (long long)slots);
        cli_json_str(&j, "builder", builder);
        cli_json_int(&j, a.have_levels ? "partition_levels" : "max_levels", max_levels);
        if (a.have_rotate) cli_json_int(&j, "rotate_seed", (long long)a.rotate_seed);
        if (a.have_level) {
            cli_json_int(&j, "level", a.level);
            cli_json_int(&j, "balls", (long long)balls);
        }
        if (a.verify) cli_json_bool(&j, "verified", true);
        cli_json_finish(&j, seconds, io_seconds, threads);
    }
    run_free(&r);
    return CLI_EXIT_OK;
}
