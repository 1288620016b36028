/* grove emst DATA [--mutual-reachability K] --edges E.npy --weights W.npy [--json] */
#include "command.h"

#include <stdio.h>
#include <string.h>

static const char usage[] =
    "usage: grove emst DATA [--mutual-reachability K] --edges E.npy --weights W.npy\n"
    "                  [--threads N] [--json] [--quiet]\n"
    "Euclidean minimum spanning tree (single-tree Boruvka on a BVH; kd-tree for d > 3).\n"
    "E is (n-1, 2) int64 with u < v, W is (n-1,) float64, sorted by (weight, u, v).\n"
    "  --mutual-reachability K   HDBSCAN* metric max(core(a), core(b), |a-b|), core = distance to\n"
    "                            the K-th nearest neighbour counting the point itself (K = 1: plain)\n";

typedef struct emst_args {
    cli_file data, edges, weights;
    size_t k;
    double total;
} emst_args;

static bool check(void *state)
{
    const emst_args *a = state;
    if (a->data.path && a->edges.path && a->weights.path) return true;
    cli_error("emst", "DATA, --edges and --weights are required (see --help)");
    return false;
}

static size_t edge_count(const grove_points *pts) { return pts->n > 1 ? pts->n - 1 : 0; }

static grove_status run(void *state, cli_run *run)
{
    emst_args *a = state;
    size_t m = edge_count(&a->data.points);
    grove_status s = grove_array_create(&a->edges.array, GROVE_INT64, m, 2);
    if (s == GROVE_OK) s = grove_array_create(&a->weights.array, GROVE_FLOAT64, m, 0);
    if (s == GROVE_OK) {
        grove_emst_params params;
        grove_emst_params_init(&params);
        params.min_samples = a->k;
        double start = cli_now();
        s = grove_emst(a->data.points, &params, a->edges.array.data, a->weights.array.data, &run->options);
        run->seconds = cli_now() - start;
    }
    for (size_t i = 0; s == GROVE_OK && i < m; i++) a->total += ((const double *)a->weights.array.data)[i];
    return s == GROVE_OK ? cli_run_stage(run) : s;
}

static void summary(void *state, const cli_run *run)
{
    const emst_args *a = state;
    const grove_points *pts = &a->data.points;
    printf("emst: %zu points in %zu dims%s -> %zu edges, total weight %.9g, in %.3f s on %d thread%s\n", pts->n,
           pts->d, a->k > 1 ? " (mutual reachability)" : "", edge_count(pts), a->total, run->seconds, run->threads,
           run->threads == 1 ? "" : "s");
}

static void json(void *state, const cli_run *run, cli_json *j)
{
    (void)run;
    const emst_args *a = state;
    cli_json_points(j, &a->data.points);
    cli_json_header_line(j, "header_line", &a->data.info);
    cli_json_int(j, "min_samples", (long long)a->k);
    cli_json_int(j, "edges", (long long)edge_count(&a->data.points));
    cli_json_num(j, "total_weight", a->total);
}

int cmd_emst(int argc, char **argv)
{
    static const cli_command command = {"emst", usage, check, run, summary, NULL, json, NULL};
    emst_args a = {.k = 1};
    const cli_opt opts[] = {
        {"DATA", OPT_POINTS, &a.data, NULL, CLI_ANY},
        {"--mutual-reachability", OPT_SIZE, &a.k, NULL, CLI_AT_LEAST(1)},
        {"--edges", OPT_NPY, &a.edges, NULL, CLI_ANY},
        {"--weights", OPT_NPY, &a.weights, NULL, CLI_ANY},
    };
    return cli_command_main(&command, &a, opts, sizeof opts / sizeof opts[0], argc, argv);
}
