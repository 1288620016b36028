/* grove gravity IN.npy --theta T --softening E --acc A.npy [--pot P.npy] [--json] */
#include "cli.h"

#include <stdio.h>
#include <string.h>

static const char usage[] =
    "usage: grove gravity IN.npy [--theta T] [--softening E] [--G G] [--leaf-size L] [--group-size G]\n"
    "                     --acc A.npy [--pot P.npy] [--threads N] [--json] [--quiet]\n"
    "Barnes-Hut gravity on a sparse octree (Bonsai): IN is (n, 4) float64 (or float32) rows x, y, z, m;\n"
    "A is (n, 3) float64 accelerations, P is (n,) float64 potentials (G = 1 unless --G).\n"
    "  --theta T       opening angle in [0, 1] (default 0.75; 0 = direct summation)\n"
    "  --softening E   Plummer softening length (default 0)\n"
    "  --leaf-size L   most particles per leaf (default 16); --group-size G: per group (default 64)\n";

/* Positions (n x 3) and masses from an (n, 4) array of x, y, z, m. */
static grove_status split_input(const grove_array *in, grove_array *pos, grove_array *mass)
{
    size_t n = in->shape[0];
    grove_status s = grove_array_create(pos, GROVE_FLOAT64, n, 3);
    if (s == GROVE_OK) s = grove_array_create(mass, GROVE_FLOAT64, n, 0);
    if (s != GROVE_OK) return s;
    double *x = pos->data, *m = mass->data;
    for (size_t i = 0; i < n; i++) {
        for (int a = 0; a < 4; a++) {
            double v = in->dtype == GROVE_FLOAT64 ? ((const double *)in->data)[4 * i + a]
                                                  : (double)((const float *)in->data)[4 * i + a];
            if (a < 3) x[3 * i + a] = v;
            else m[i] = v;
        }
    }
    return GROVE_OK;
}

int cmd_gravity(int argc, char **argv)
{
    if (cli_help(argc, argv, usage)) return CLI_EXIT_OK;
    grove_gravity_params params;
    grove_gravity_params_init(&params);
    const char *acc_path = NULL, *pot_path = NULL;
    const cli_opt opts[] = {
        {"--theta", OPT_DOUBLE, &params.theta, NULL, CLI_BETWEEN(0, 1)},
        {"--softening|--eps", OPT_DOUBLE, &params.softening, NULL, CLI_AT_LEAST(0)},
        {"--G", OPT_DOUBLE, &params.G, NULL, CLI_ABOVE(0)},
        {"--leaf-size", OPT_SIZE, &params.leaf_size, NULL, CLI_BETWEEN(1, 64)},
        {"--group-size", OPT_SIZE, &params.group_size, NULL, CLI_BETWEEN(1, 256)},
        {"--acc", OPT_STRING, &acc_path, NULL, CLI_ANY},
        {"--pot", OPT_STRING, &pot_path, NULL, CLI_ANY},
    };
    const char *positional[1];
    size_t npositional;
    cli_common common;
    if (!cli_parse("gravity", argc, argv, opts, sizeof opts / sizeof opts[0], positional, 1, &npositional, &common))
        return CLI_EXIT_USAGE;
    if (!npositional || !acc_path) {
        cli_error("gravity", "IN.npy and --acc are required (see --help)");
        return CLI_EXIT_USAGE;
    }
    const cli_path paths[] = {
        {"IN", positional[0], CLI_INPUT},
        {"--acc", acc_path, CLI_OUTPUT_NPY},
        {"--pot", pot_path, CLI_OUTPUT_NPY},
    };
    if (!cli_check_paths("gravity", paths, sizeof paths / sizeof paths[0])) return CLI_EXIT_USAGE;
    grove_options options = cli_options(&common);
    int threads = grove_options_threads(&options);
    grove_array in = {0}, pos = {0}, mass = {0}, acc = {0}, pot = {0};
    double t0 = cli_now();
    grove_status s = grove_npy_read(positional[0], &in);
    double io_seconds = cli_now() - t0, seconds = 0;
    if (s != GROVE_OK) return cli_fail("gravity", s);
    if ((in.dtype != GROVE_FLOAT64 && in.dtype != GROVE_FLOAT32) || in.ndim != 2 || in.shape[1] != 4) {
        cli_note_error("%s: expected an (n, 4) float64 or float32 array of x, y, z, m; got %s with shape (%zu, %zu)",
                       positional[0], grove_dtype_name(in.dtype), in.shape[0], in.ndim == 2 ? in.shape[1] : 0);
        grove_array_free(&in);
        return cli_fail("gravity", GROVE_INVALID_ARGUMENT);
    }
    size_t n = in.shape[0];
    s = split_input(&in, &pos, &mass);
    if (s == GROVE_OK) s = grove_array_create(&acc, GROVE_FLOAT64, n, 3);
    if (s == GROVE_OK && pot_path) s = grove_array_create(&pot, GROVE_FLOAT64, n, 0);
    grove_gravity_stats stats = {0};
    if (s == GROVE_OK) {
        double start = cli_now();
        s = grove_gravity(grove_points_f64(pos.data, n, 3), mass.data, &params, acc.data, pot_path ? pot.data : NULL,
                          &stats, &options);
        seconds = cli_now() - start;
    }
    if (s == GROVE_OK) {
        double t1 = cli_now();
        cli_outputs outs = {0};
        s = cli_outputs_stage(&outs, acc_path, &acc);
        if (s == GROVE_OK && pot_path) s = cli_outputs_stage(&outs, pot_path, &pot);
        if (s == GROVE_OK) s = cli_outputs_commit(&outs);
        else cli_outputs_abort(&outs);
        io_seconds += cli_now() - t1;
    }
    grove_array *all[] = {&in, &pos, &mass, &acc, &pot};
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++) grove_array_free(all[k]);
    if (s != GROVE_OK) return cli_fail_on("gravity", positional[0], s);

    double inter = stats.particle_interactions + stats.cell_interactions;
    double per = n ? inter / (double)n : 0, rate = seconds > 0 ? (double)n / seconds : 0;
    if (!common.quiet && !common.json)
        printf("gravity: %zu particles, theta %g, softening %g -> %.0f interactions per particle "
               "(%.0f particle + %.0f cell), %d-level tree, %zu groups, in %.3f s (%.3g particles/s, %.2f "
               "Gflop/s) on %d thread%s\n",
               n, params.theta, params.softening, per, n ? stats.particle_interactions / (double)n : 0,
               n ? stats.cell_interactions / (double)n : 0, stats.depth, stats.groups, seconds, rate,
               seconds > 0 ? stats.flops / seconds * 1e-9 : 0, threads, threads == 1 ? "" : "s");
    if (common.json) {
        cli_json j;
        cli_json_begin(&j, "gravity");
        cli_json_int(&j, "n", (long long)n);
        cli_json_num(&j, "theta", params.theta);
        cli_json_num(&j, "softening", params.softening);
        cli_json_num(&j, "interactions_per_particle", per);
        cli_json_num(&j, "particle_interactions", stats.particle_interactions);
        cli_json_num(&j, "cell_interactions", stats.cell_interactions);
        cli_json_int(&j, "cells", (long long)stats.cells);
        cli_json_int(&j, "groups", (long long)stats.groups);
        cli_json_int(&j, "depth", stats.depth);
        cli_json_num(&j, "particles_per_second", rate);
        cli_json_num(&j, "gflops", seconds > 0 ? stats.flops / seconds * 1e-9 : 0);
        cli_json_finish(&j, seconds, io_seconds, threads);
    }
    return CLI_EXIT_OK;
}
