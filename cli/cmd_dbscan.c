/* grove dbscan DATA --eps E --min-samples K --labels L.npy [--core C.npy] [--box L[,L...]]
 *              [--memory-budget SIZE] [--leaf-size L] [--index-dims M] [--json] */
#include "cli.h"

#include <stdio.h>
#include <string.h>

static const char usage[] =
    "usage: grove dbscan DATA --eps E --min-samples K --labels L.npy [--core C.npy] [--box L[,L...]]\n"
    "                    [--memory-budget SIZE] [--leaf-size L] [--index-dims M]\n"
    "                    [--threads N] [--json] [--quiet]\n"
    "Exact DBSCAN, labelled as scikit-learn's sklearn.cluster.DBSCAN labels it (border points included).\n"
    "A point is core when at least K points (itself included) lie within Euclidean distance E\n"
    "(inclusive). L is (n,) int64: the cluster of each point, clusters numbered in the order of their\n"
    "lowest-index core point, -1 for noise. C is (c,) int64: the core points' rows, ascending.\n"
    "  --box L | Lx,Ly,..  periodic box [0, L) in every dimension, or one length per dimension (0 =\n"
    "                      not periodic): minimum-image distances, as SciPy's cKDTree boxsize;\n"
    "                      points outside the box are refused\n"
    "  --memory-budget S   refuse to run when DBSCAN's working memory (8-9 bytes a point, the same for\n"
    "                      every E: neighbourhoods are never held) exceeds S (K/M/G suffixes; the\n"
    "                      data and index come on top); default no limit\n"
    "  --leaf-size L       points per leaf group of the index (default 32 for d <= 16, else 64)\n"
    "  --index-dims M      key dimensions in the index's group boxes (default min(d, 16))\n";

typedef struct dbscan_args {
    const char *labels, *core, *box_text;
    grove_dbscan_params params;
    grove_index_params index;
    bool have_eps, have_min_samples, have_budget;
    size_t budget;
} dbscan_args;

static bool check_args(const dbscan_args *a, const char *data)
{
    if (!data || !a->have_eps || !a->have_min_samples || !a->labels) {
        cli_error("dbscan", "DATA, --eps, --min-samples and --labels are required (see --help)");
        return false;
    }
    const cli_path paths[] = {
        {"DATA", data, CLI_INPUT},
        {"--labels", a->labels, CLI_OUTPUT_NPY},
        {"--core", a->core, CLI_OUTPUT_NPY},
    };
    return cli_check_paths("dbscan", paths, sizeof paths / sizeof paths[0]);
}

/* The core points' rows, ascending, from the flags. */
static grove_status core_rows(const uint8_t *flags, size_t n, size_t count, grove_array *out)
{
    grove_status s = grove_array_create(out, GROVE_INT64, count, 0);
    int64_t *rows = out->data;
    for (size_t i = 0, k = 0; s == GROVE_OK && i < n; i++)
        if (flags[i]) rows[k++] = (int64_t)i;
    return s;
}

int cmd_dbscan(int argc, char **argv)
{
    if (cli_help(argc, argv, usage)) return CLI_EXIT_OK;
    dbscan_args a;
    memset(&a, 0, sizeof a);
    grove_dbscan_params_init(&a.params);
    grove_index_params_init(&a.index);
    const cli_opt opts[] = {
        {"--eps", OPT_DOUBLE, &a.params.eps, &a.have_eps, CLI_AT_LEAST(0)},
        {"--min-samples", OPT_SIZE, &a.params.min_samples, &a.have_min_samples, CLI_AT_LEAST(1)},
        {"--labels", OPT_STRING, &a.labels, NULL, CLI_ANY},
        {"--core", OPT_STRING, &a.core, NULL, CLI_ANY},
        {"--box", OPT_STRING, &a.box_text, NULL, CLI_ANY},
        {"--memory-budget", OPT_BYTES, &a.budget, &a.have_budget, CLI_AT_LEAST(1)},
        {"--leaf-size", OPT_SIZE, &a.index.leaf_size, NULL, CLI_BETWEEN(0, 4096)},
        {"--index-dims", OPT_SIZE, &a.index.index_dims, NULL, CLI_ANY},
    };
    const char *positional[1];
    size_t npositional;
    cli_common common;
    if (!cli_parse("dbscan", argc, argv, opts, sizeof opts / sizeof opts[0], positional, 1, &npositional, &common))
        return CLI_EXIT_USAGE;
    cli_box box;
    if (!check_args(&a, npositional ? positional[0] : NULL) || !cli_box_parse("dbscan", a.box_text, &box))
        return CLI_EXIT_USAGE;

    grove_options options = cli_options(&common);
    options.memory_budget = a.have_budget ? a.budget : 0;
    int threads = grove_options_threads(&options);
    grove_array data = {0}, labels = {0}, flags = {0}, core = {0};
    grove_points pts;
    double t0 = cli_now();
    grove_load_info info;
    grove_status s = cli_load_points(positional[0], &common, &data, &info);
    if (s == GROVE_OK) s = grove_array_points(&data, &pts);
    if (s != GROVE_OK || !cli_box_apply("dbscan", &box, pts.d, &a.index)) {
        grove_array_free(&data);
        cli_box_free(&box);
        return s != GROVE_OK ? cli_fail("dbscan", s) : CLI_EXIT_USAGE;
    }
    double io_seconds = cli_now() - t0, seconds = 0;
    s = grove_array_create(&labels, GROVE_INT64, pts.n, 0);
    if (s == GROVE_OK) s = grove_array_create(&flags, GROVE_BOOL, pts.n, 0);
    grove_dbscan_counts counts = {0, 0, 0};
    if (s == GROVE_OK) {
        double start = cli_now();
        s = grove_dbscan(pts, &a.index, &a.params, labels.data, flags.data, &counts, &options);
        seconds = cli_now() - start;
    }
    if (s == GROVE_OK && a.core) s = core_rows(flags.data, pts.n, counts.core, &core);
    if (s == GROVE_OK) {
        double t1 = cli_now();
        cli_outputs outs = {0};
        s = cli_outputs_stage(&outs, a.labels, &labels);
        if (s == GROVE_OK && a.core) s = cli_outputs_stage(&outs, a.core, &core);
        if (s == GROVE_OK) s = cli_outputs_commit(&outs);
        else cli_outputs_abort(&outs);
        io_seconds += cli_now() - t1;
    }
    grove_array_free(&data);
    grove_array_free(&labels);
    grove_array_free(&flags);
    grove_array_free(&core);
    bool periodic = box.count > 0;
    cli_box_free(&box);
    if (s != GROVE_OK) return cli_fail_on("dbscan", positional[0], s);

    if (!common.quiet && !common.json)
        printf("dbscan: %zu points in %zu dims%s, eps %.9g, min_samples %zu -> %zu clusters, %zu core, %zu noise, "
               "in %.3f s on %d thread%s\n",
               pts.n, pts.d, periodic ? " in a periodic box" : "", a.params.eps, a.params.min_samples,
               counts.clusters, counts.core, counts.noise, seconds, threads, threads == 1 ? "" : "s");
    if (common.json) {
        cli_json j;
        cli_json_begin(&j, "dbscan");
        cli_json_points(&j, &pts);
        cli_json_header_line(&j, "header_line", &info);
        cli_json_num(&j, "eps", a.params.eps);
        cli_json_int(&j, "min_samples", (long long)a.params.min_samples);
        cli_json_bool(&j, "periodic", periodic);
        cli_json_int(&j, "clusters", (long long)counts.clusters);
        cli_json_int(&j, "core", (long long)counts.core);
        cli_json_int(&j, "noise", (long long)counts.noise);
        cli_json_int(&j, "memory_budget", (long long)options.memory_budget);
        cli_json_finish(&j, seconds, io_seconds, threads);
    }
    return CLI_EXIT_OK;
}
