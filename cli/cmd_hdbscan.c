/* grove hdbscan DATA --min-cluster-size M [--min-samples K] [--selection eom|leaf] [--epsilon X]
 *               --labels L.npy [--probabilities P.npy] [--outlier-scores S.npy] [--plot out.svg] [--json] */
#include "cli.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char usage[] =
    "usage: grove hdbscan DATA --min-cluster-size M [--min-samples K] [--selection eom|leaf]\n"
    "                     [--epsilon X] [--allow-single-cluster] --labels L.npy [--probabilities P.npy]\n"
    "                     [--outlier-scores S.npy] [--plot out.svg] [--threads N] [--json] [--quiet]\n"
    "HDBSCAN* clustering (as the `hdbscan` Python library with its min_samples = K - 1).\n"
    "L is (n,) int64 (-1 = noise), P and S are (n,) float64.\n"
    "  --min-samples K     core distance = distance to the K-th neighbour counting the point (default M)\n"
    "  --selection         eom (excess of mass, default) or leaf\n"
    "  --epsilon X         cluster_selection_epsilon (merge clusters split below distance X)\n"
    "  --plot out.svg      scatter of the first two coordinates coloured by cluster, noise grey\n";

/* A palette of distinguishable colours; clusters cycle through it. */
static const char *const palette[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b",
                                      "#e377c2", "#bcbd22", "#17becf", "#393b79", "#637939", "#8c6d31",
                                      "#843c39", "#7b4173", "#3182bd", "#e6550d", "#31a354", "#756bb1"};

/* Coordinate j of row i of a float view with row stride `stride`. */
static double coord(grove_points pts, size_t stride, size_t i, size_t j)
{
    const char *row = (const char *)pts.data + i * stride;
    return pts.dtype == GROVE_FLOAT64 ? ((const double *)(const void *)row)[j]
                                      : ((const float *)(const void *)row)[j];
}

/* The SVG picture, into f. */
static void write_plot(FILE *f, grove_points pts, const int64_t *labels, size_t clusters)
{
    const double size = 800, margin = 20;
    double lo[2] = {INFINITY, INFINITY}, hi[2] = {-INFINITY, -INFINITY};
    size_t stride = pts.stride ? pts.stride : pts.d * grove_dtype_size(pts.dtype), axes = pts.d > 1 ? 2 : 1;
    for (size_t i = 0; i < pts.n; i++)
        for (size_t j = 0; j < axes; j++) {
            double v = coord(pts, stride, i, j);
            lo[j] = v < lo[j] ? v : lo[j];
            hi[j] = v > hi[j] ? v : hi[j];
        }
    /* Halves, so spans near the largest doubles do not overflow. */
    double span = fmax(hi[0] / 2 - lo[0] / 2, axes > 1 ? hi[1] / 2 - lo[1] / 2 : 0);
    if (!(span > 0)) span = 1;
    double scale = (size - 2 * margin) / span, r = pts.n > 20000 ? 0.8 : pts.n > 2000 ? 1.5 : 3;
    fprintf(f,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\">\n"
            "<title>grove hdbscan: %zu points, %zu clusters</title>\n"
            "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
            size, size, size, size, pts.n, clusters);
    /* Noise first, so clusters are drawn on top. */
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < pts.n; i++) {
            if ((labels[i] < 0) != (pass == 0)) continue;
            double v[2] = {0, 0};
            for (size_t j = 0; j < axes; j++) v[j] = coord(pts, stride, i, j);
            double x = margin + (v[0] / 2 - lo[0] / 2) * scale;
            double y = size - margin - (axes > 1 ? (v[1] / 2 - lo[1] / 2) * scale : 0);
            const char *colour =
                labels[i] < 0 ? "#bbbbbb" : palette[(size_t)labels[i] % (sizeof palette / sizeof palette[0])];
            fprintf(f, "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"%.1f\" fill=\"%s\"/>\n", x, y, r, colour);
        }
    fprintf(f, "</svg>\n");
}

typedef struct hdbscan_args {
    const char *labels, *probabilities, *scores, *plot, *selection;
    size_t min_cluster_size, min_samples;
    double epsilon;
    bool have_mcs, allow_single;
} hdbscan_args;

static bool check_args(const hdbscan_args *a, const char *data, grove_hdbscan_params *params)
{
    if (!data || !a->labels || !a->have_mcs) {
        cli_error("hdbscan", "DATA, --min-cluster-size and --labels are required (see --help)");
        return false;
    }
    if (strcmp(a->selection, "eom") != 0 && strcmp(a->selection, "leaf") != 0) {
        cli_error("hdbscan", "--selection: expected eom or leaf, got '%s'", a->selection);
        return false;
    }
    const cli_path paths[] = {
        {"DATA", data, CLI_INPUT},
        {"--labels", a->labels, CLI_OUTPUT_NPY},
        {"--probabilities", a->probabilities, CLI_OUTPUT_NPY},
        {"--outlier-scores", a->scores, CLI_OUTPUT_NPY},
        {"--plot", a->plot, CLI_OUTPUT_SVG},
    };
    if (!cli_check_paths("hdbscan", paths, sizeof paths / sizeof paths[0])) return false;
    grove_hdbscan_params_init(params);
    params->min_cluster_size = a->min_cluster_size;
    params->min_samples = a->min_samples;
    params->selection = strcmp(a->selection, "leaf") == 0 ? GROVE_HDBSCAN_LEAF : GROVE_HDBSCAN_EOM;
    params->epsilon = a->epsilon;
    params->allow_single_cluster = a->allow_single;
    return true;
}

int cmd_hdbscan(int argc, char **argv)
{
    if (cli_help(argc, argv, usage)) return CLI_EXIT_OK;
    hdbscan_args a = {0};
    a.selection = "eom";
    const cli_opt opts[] = {
        {"--min-cluster-size", OPT_SIZE, &a.min_cluster_size, &a.have_mcs, CLI_AT_LEAST(2)},
        {"--min-samples", OPT_SIZE, &a.min_samples, NULL, CLI_AT_LEAST(1)},
        {"--selection", OPT_STRING, &a.selection, NULL, CLI_ANY},
        {"--epsilon", OPT_DOUBLE, &a.epsilon, NULL, CLI_AT_LEAST(0)},
        {"--allow-single-cluster", OPT_FLAG, &a.allow_single, NULL, CLI_ANY},
        {"--labels", OPT_STRING, &a.labels, NULL, CLI_ANY},
        {"--probabilities", OPT_STRING, &a.probabilities, NULL, CLI_ANY},
        {"--outlier-scores", OPT_STRING, &a.scores, NULL, CLI_ANY},
        {"--plot", OPT_STRING, &a.plot, NULL, CLI_ANY},
    };
    const char *positional[1];
    size_t npositional;
    cli_common common;
    if (!cli_parse("hdbscan", argc, argv, opts, sizeof opts / sizeof opts[0], positional, 1, &npositional, &common))
        return CLI_EXIT_USAGE;
    grove_hdbscan_params params;
    if (!check_args(&a, npositional ? positional[0] : NULL, &params)) return CLI_EXIT_USAGE;

    grove_options options = cli_options(&common);
    int threads = grove_options_threads(&options);
    grove_array points = {0}, labels = {0}, probs = {0}, scores = {0};
    grove_points pts;
    double t0 = cli_now();
    grove_load_info info;
    grove_status s = cli_load_points(positional[0], &common, &points, &info);
    if (s == GROVE_OK) s = grove_array_points(&points, &pts);
    if (s != GROVE_OK) {
        grove_array_free(&points);
        return cli_fail("hdbscan", s);
    }
    double io_seconds = cli_now() - t0, seconds = 0;
    s = grove_array_alloc(&labels, GROVE_INT64, pts.n, 0);
    if (s == GROVE_OK) s = grove_array_alloc(&probs, GROVE_FLOAT64, pts.n, 0);
    if (s == GROVE_OK) s = grove_array_alloc(&scores, GROVE_FLOAT64, pts.n, 0);
    size_t clusters = 0;
    if (s == GROVE_OK) {
        double start = cli_now();
        s = grove_hdbscan(pts, &params, labels.data, probs.data, scores.data, &clusters, &options);
        seconds = cli_now() - start;
    }
    size_t noise = 0;
    for (size_t i = 0; s == GROVE_OK && i < pts.n; i++) noise += ((const int64_t *)labels.data)[i] < 0;
    if (s == GROVE_OK) {
        double t1 = cli_now();
        cli_outputs outs = {0};
        s = cli_outputs_stage(&outs, a.labels, &labels);
        if (s == GROVE_OK && a.probabilities) s = cli_outputs_stage(&outs, a.probabilities, &probs);
        if (s == GROVE_OK && a.scores) s = cli_outputs_stage(&outs, a.scores, &scores);
        FILE *plot = NULL;
        if (s == GROVE_OK && a.plot) s = cli_outputs_text(&outs, a.plot, &plot);
        if (plot) {
            write_plot(plot, pts, labels.data, clusters);
            grove_status c = cli_file_close(plot, a.plot);
            if (s == GROVE_OK) s = c;
        }
        if (s == GROVE_OK) s = cli_outputs_commit(&outs);
        else cli_outputs_abort(&outs);
        io_seconds += cli_now() - t1;
    }
    grove_array *all[] = {&points, &labels, &probs, &scores};
    for (size_t i = 0; i < 4; i++) grove_array_free(all[i]);
    if (s != GROVE_OK) return cli_fail_on("hdbscan", positional[0], s);

    size_t k = params.min_samples ? params.min_samples : params.min_cluster_size;
    if (!common.quiet && !common.json)
        printf("hdbscan: %zu points in %zu dims, min_cluster_size %zu, min_samples %zu (%s) -> %zu clusters, "
               "%zu noise, in %.3f s on %d thread%s\n",
               pts.n, pts.d, params.min_cluster_size, k, a.selection, clusters, noise, seconds, threads,
               threads == 1 ? "" : "s");
    if (common.json) {
        cli_json j;
        cli_json_begin(&j, "hdbscan");
        cli_json_points(&j, &pts);
        cli_json_header_line(&j, "header_line", &info);
        cli_json_int(&j, "min_cluster_size", (long long)params.min_cluster_size);
        cli_json_int(&j, "min_samples", (long long)k);
        cli_json_str(&j, "selection", a.selection);
        cli_json_num(&j, "epsilon", params.epsilon);
        cli_json_int(&j, "clusters", (long long)clusters);
        cli_json_int(&j, "noise", (long long)noise);
        cli_json_finish(&j, seconds, io_seconds, threads);
    }
    return CLI_EXIT_OK;
}
