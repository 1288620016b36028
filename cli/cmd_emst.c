/* grove emst DATA [--mutual-reachability K] --edges E.npy --weights W.npy [--json] */
#include "cli.h"

#include <stdio.h>
#include <string.h>

static const char usage[] =
    "usage: grove emst DATA [--mutual-reachability K] --edges E.npy --weights W.npy\n"
    "                  [--threads N] [--json] [--quiet]\n"
    "Euclidean minimum spanning tree (single-tree Boruvka on a BVH; kd-tree for d > 3).\n"
    "E is (n-1, 2) int64 with u < v, W is (n-1,) float64, sorted by (weight, u, v).\n"
    "  --mutual-reachability K   HDBSCAN* metric max(core(a), core(b), |a-b|), core = distance to\n"
    "                            the K-th nearest neighbour counting the point itself (K = 1: plain)\n";

int cmd_emst(int argc, char **argv)
{
    if (cli_help(argc, argv, usage)) return CLI_EXIT_OK;
    const char *edges_path = NULL, *weights_path = NULL;
    size_t k = 1;
    const cli_opt opts[] = {
        {"--mutual-reachability", OPT_SIZE, &k, NULL, CLI_AT_LEAST(1)},
        {"--edges", OPT_STRING, &edges_path, NULL, CLI_ANY},
        {"--weights", OPT_STRING, &weights_path, NULL, CLI_ANY},
    };
    const char *positional[1];
    size_t npositional;
    cli_common common;
    if (!cli_parse("emst", argc, argv, opts, sizeof opts / sizeof opts[0], positional, 1, &npositional, &common))
        return CLI_EXIT_USAGE;
    if (!npositional || !edges_path || !weights_path) {
        cli_error("emst", "DATA, --edges and --weights are required (see --help)");
        return CLI_EXIT_USAGE;
    }
    const cli_path paths[] = {
        {"DATA", positional[0], CLI_INPUT},
        {"--edges", edges_path, CLI_OUTPUT_NPY},
        {"--weights", weights_path, CLI_OUTPUT_NPY},
    };
    if (!cli_check_paths("emst", paths, sizeof paths / sizeof paths[0])) return CLI_EXIT_USAGE;

    grove_options options = cli_options(&common);
    int threads = grove_options_threads(&options);
    grove_array points = {0}, edges = {0}, weights = {0};
    grove_points pts;
    double t0 = cli_now();
    grove_load_info info;
    grove_status s = cli_load_points(positional[0], &common, &points, &info);
    if (s == GROVE_OK) s = grove_array_points(&points, &pts);
    if (s != GROVE_OK) {
        grove_array_free(&points);
        return cli_fail("emst", s);
    }
    double io_seconds = cli_now() - t0, seconds = 0;
    size_t m = pts.n > 1 ? pts.n - 1 : 0;
    s = grove_array_create(&edges, GROVE_INT64, m, 2);
    if (s == GROVE_OK) s = grove_array_create(&weights, GROVE_FLOAT64, m, 0);
    if (s == GROVE_OK) {
        grove_emst_params params;
        grove_emst_params_init(&params);
        params.min_samples = k;
        double start = cli_now();
        s = grove_emst(pts, &params, edges.data, weights.data, &options);
        seconds = cli_now() - start;
    }
    double total = 0;
    for (size_t i = 0; s == GROVE_OK && i < m; i++) total += ((const double *)weights.data)[i];
    if (s == GROVE_OK) {
        double t1 = cli_now();
        cli_outputs outs = {0};
        s = cli_outputs_stage(&outs, edges_path, &edges);
        if (s == GROVE_OK) s = cli_outputs_stage(&outs, weights_path, &weights);
        if (s == GROVE_OK) s = cli_outputs_commit(&outs);
        else cli_outputs_abort(&outs);
        io_seconds += cli_now() - t1;
    }
    grove_array_free(&edges);
    grove_array_free(&weights);
    grove_array_free(&points);
    if (s != GROVE_OK) return cli_fail_on("emst", positional[0], s);

    if (!common.quiet && !common.json)
        printf("emst: %zu points in %zu dims%s -> %zu edges, total weight %.9g, in %.3f s on %d thread%s\n", pts.n,
               pts.d, k > 1 ? " (mutual reachability)" : "", m, total, seconds, threads, threads == 1 ? "" : "s");
    if (common.json) {
        cli_json j;
        cli_json_begin(&j, "emst");
        cli_json_points(&j, &pts);
        cli_json_header_line(&j, "header_line", &info);
        cli_json_int(&j, "min_samples", (long long)k);
        cli_json_int(&j, "edges", (long long)m);
        cli_json_num(&j, "total_weight", total);
        cli_json_finish(&j, seconds, io_seconds, threads);
    }
    return CLI_EXIT_OK;
}
