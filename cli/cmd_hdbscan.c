/* grove hdbscan DATA --min-cluster-size M [--min-samples K] [selection options] --labels L.npy
 *               [--probabilities P.npy] [--outlier-scores S.npy] [--plot out.svg]
 *               [--predict Q.npy --predicted-labels PL.npy [--predicted-probabilities PP.npy]] [--json] */
#include "cli.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char usage[] =
    "usage: grove hdbscan DATA --min-cluster-size M [--min-samples K] [--selection eom|leaf]\n"
    "                     [--epsilon X] [--epsilon-max X] [--max-cluster-size N] [--persistence X]\n"
    "                     [--alpha X] [--ties ordered|simultaneous] [--match-reference] [--allow-single-cluster]\n"
    "                     --labels L.npy [--probabilities P.npy] [--outlier-scores S.npy] [--plot out.svg]\n"
    "                     [--predict Q.npy --predicted-labels PL.npy [--predicted-probabilities PP.npy]]\n"
    "                     [--threads N] [--json] [--quiet]\n"
    "HDBSCAN* clustering (as the `hdbscan` Python library with its min_samples = K - 1).\n"
    "L is (n,) int64 (-1 = noise), P and S are (n,) float64.\n"
    "  --min-samples K        core distance = distance to the K-th neighbour counting the point (default M)\n"
    "  --selection            eom (excess of mass, default) or leaf\n"
    "  --epsilon X            cluster_selection_epsilon (merge clusters split below distance X)\n"
    "  --epsilon-max X        cluster_selection_epsilon_max: eom selects no cluster born above distance X\n"
    "  --max-cluster-size N   eom selects no cluster of more than N points (default 0: no limit)\n"
    "  --persistence X        cluster_selection_persistence: undo splits whose smaller side lives less\n"
    "                         than X in lambda = 1 / distance (default 0)\n"
    "  --alpha X              mutual reachability max(core(a), core(b), |a - b| / X) (default 1)\n"
    "  --ties MODE            ordered (default): equal weights merge one edge at a time in (weight, u, v)\n"
    "                         order; simultaneous: all at once (Campello et al. 2015), independent of the\n"
    "                         MST and the row order\n"
    "  --match-reference      the library's match_reference_implementation\n"
    "  --plot out.svg         scatter of the first two coordinates coloured by cluster, noise grey\n"
    "  --predict Q.npy        points to assign to the clusters found (approximate_predict), written as\n"
    "                         PL (nq,) int64 and PP (nq,) float64\n";

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
    const char *labels, *probabilities, *scores, *plot, *selection, *ties;
    const char *predict, *predicted_labels, *predicted_probabilities;
    size_t min_cluster_size, min_samples, max_cluster_size;
    double epsilon, epsilon_max, persistence, alpha;
    bool have_mcs, have_epsilon_max, have_alpha, allow_single, match_reference;
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
    if (strcmp(a->ties, "ordered") != 0 && strcmp(a->ties, "simultaneous") != 0) {
        cli_error("hdbscan", "--ties: expected ordered or simultaneous, got '%s'", a->ties);
        return false;
    }
    if (a->have_epsilon_max && a->epsilon_max < a->epsilon) {
        cli_error("hdbscan", "--epsilon-max: expected a number >= --epsilon (%g), got %g", a->epsilon,
                  a->epsilon_max);
        return false;
    }
    if (!a->predict != !a->predicted_labels) {
        cli_error("hdbscan", "--predict and --predicted-labels go together (see --help)");
        return false;
    }
    if (a->predicted_probabilities && !a->predict) {
        cli_error("hdbscan", "--predicted-probabilities needs --predict");
        return false;
    }
    const cli_path paths[] = {
        {"DATA", data, CLI_INPUT},
        {"--predict", a->predict, CLI_INPUT},
        {"--labels", a->labels, CLI_OUTPUT_NPY},
        {"--probabilities", a->probabilities, CLI_OUTPUT_NPY},
        {"--outlier-scores", a->scores, CLI_OUTPUT_NPY},
        {"--plot", a->plot, CLI_OUTPUT_SVG},
        {"--predicted-labels", a->predicted_labels, CLI_OUTPUT_NPY},
        {"--predicted-probabilities", a->predicted_probabilities, CLI_OUTPUT_NPY},
    };
    if (!cli_check_paths("hdbscan", paths, sizeof paths / sizeof paths[0])) return false;
    grove_hdbscan_params_init(params);
    params->min_cluster_size = a->min_cluster_size;
    params->min_samples = a->min_samples;
    params->selection = strcmp(a->selection, "leaf") == 0 ? GROVE_HDBSCAN_LEAF : GROVE_HDBSCAN_EOM;
    params->epsilon = a->epsilon;
    params->allow_single_cluster = a->allow_single;
    params->max_cluster_size = a->max_cluster_size;
    if (a->have_epsilon_max) params->epsilon_max = a->epsilon_max;
    params->persistence = a->persistence;
    if (a->have_alpha) params->alpha = a->alpha;
    params->match_reference_implementation = a->match_reference;
    params->ties = strcmp(a->ties, "simultaneous") == 0 ? GROVE_HDBSCAN_TIES_SIMULTANEOUS : GROVE_HDBSCAN_TIES_ORDERED;
    params->prediction_data = a->predict != NULL;
    return true;
}

/* The arrays the command fills and writes. */
typedef struct hdbscan_outputs {
    grove_array points, labels, probs, scores, queries, predicted, predicted_probs;
} hdbscan_outputs;

static void outputs_free(hdbscan_outputs *o)
{
    grove_array *all[] = {&o->points, &o->labels, &o->probs, &o->scores, &o->queries, &o->predicted,
                          &o->predicted_probs};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) grove_array_free(all[i]);
}

/* Fit, then predict the queries if any; *seconds is the computation. */
static grove_status compute(const grove_hdbscan_params *params, grove_points pts, hdbscan_outputs *o,
                            const grove_options *options, size_t *clusters, double *seconds)
{
    grove_hdbscan_model *model = NULL;
    double start = cli_now();
    grove_status s = grove_hdbscan_model_create(pts, params, options, &model);
    if (s == GROVE_OK) s = grove_hdbscan_model_labels(model, o->labels.data, o->probs.data, o->scores.data);
    if (s == GROVE_OK) *clusters = grove_hdbscan_model_clusters(model);
    if (s == GROVE_OK && o->queries.data) {
        grove_points q;
        s = grove_array_points(&o->queries, &q);
        if (s == GROVE_OK)
            s = grove_hdbscan_approximate_predict(model, q, o->predicted.data, o->predicted_probs.data, options);
    }
    *seconds = cli_now() - start;
    grove_hdbscan_model_free(model);
    return s;
}

static size_t count_noise(const grove_array *labels)
{
    size_t noise = 0;
    for (size_t i = 0; labels->data && i < labels->shape[0]; i++) noise += ((const int64_t *)labels->data)[i] < 0;
    return noise;
}

int cmd_hdbscan(int argc, char **argv)
{
    if (cli_help(argc, argv, usage)) return CLI_EXIT_OK;
    hdbscan_args a = {0};
    a.selection = "eom";
    a.ties = "ordered";
    const cli_opt opts[] = {
        {"--min-cluster-size", OPT_SIZE, &a.min_cluster_size, &a.have_mcs, CLI_AT_LEAST(2)},
        {"--min-samples", OPT_SIZE, &a.min_samples, NULL, CLI_AT_LEAST(1)},
        {"--selection", OPT_STRING, &a.selection, NULL, CLI_ANY},
        {"--epsilon", OPT_DOUBLE, &a.epsilon, NULL, CLI_AT_LEAST(0)},
        {"--epsilon-max", OPT_DOUBLE, &a.epsilon_max, &a.have_epsilon_max, CLI_AT_LEAST(0)},
        {"--max-cluster-size", OPT_SIZE, &a.max_cluster_size, NULL, CLI_ANY},
        {"--persistence", OPT_DOUBLE, &a.persistence, NULL, CLI_AT_LEAST(0)},
        {"--alpha", OPT_DOUBLE, &a.alpha, &a.have_alpha, CLI_ABOVE(0)},
        {"--ties", OPT_STRING, &a.ties, NULL, CLI_ANY},
        {"--match-reference", OPT_FLAG, &a.match_reference, NULL, CLI_ANY},
        {"--allow-single-cluster", OPT_FLAG, &a.allow_single, NULL, CLI_ANY},
        {"--labels", OPT_STRING, &a.labels, NULL, CLI_ANY},
        {"--probabilities", OPT_STRING, &a.probabilities, NULL, CLI_ANY},
        {"--outlier-scores", OPT_STRING, &a.scores, NULL, CLI_ANY},
        {"--plot", OPT_STRING, &a.plot, NULL, CLI_ANY},
        {"--predict", OPT_STRING, &a.predict, NULL, CLI_ANY},
        {"--predicted-labels", OPT_STRING, &a.predicted_labels, NULL, CLI_ANY},
        {"--predicted-probabilities", OPT_STRING, &a.predicted_probabilities, NULL, CLI_ANY},
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
    hdbscan_outputs o = {0};
    grove_points pts;
    double t0 = cli_now();
    grove_load_info info;
    grove_status s = cli_load_points(positional[0], &common, &o.points, &info);
    if (s == GROVE_OK) s = grove_array_points(&o.points, &pts);
    if (s != GROVE_OK) {
        outputs_free(&o);
        return cli_fail("hdbscan", s);
    }
    if (a.predict && (s = cli_load_points(a.predict, &common, &o.queries, NULL)) != GROVE_OK) {
        outputs_free(&o);
        return cli_fail("hdbscan", s);
    }
    double io_seconds = cli_now() - t0, seconds = 0;
    size_t nq = o.queries.data ? o.queries.shape[0] : 0;
    s = grove_array_create(&o.labels, GROVE_INT64, pts.n, 0);
    if (s == GROVE_OK) s = grove_array_create(&o.probs, GROVE_FLOAT64, pts.n, 0);
    if (s == GROVE_OK) s = grove_array_create(&o.scores, GROVE_FLOAT64, pts.n, 0);
    if (s == GROVE_OK && a.predict) s = grove_array_create(&o.predicted, GROVE_INT64, nq, 0);
    if (s == GROVE_OK && a.predict) s = grove_array_create(&o.predicted_probs, GROVE_FLOAT64, nq, 0);
    size_t clusters = 0;
    if (s == GROVE_OK) s = compute(&params, pts, &o, &options, &clusters, &seconds);
    size_t noise = s == GROVE_OK ? count_noise(&o.labels) : 0;
    size_t predicted_noise = s == GROVE_OK ? count_noise(&o.predicted) : 0;
    if (s == GROVE_OK) {
        double t1 = cli_now();
        cli_outputs outs = {0};
        s = cli_outputs_stage(&outs, a.labels, &o.labels);
        if (s == GROVE_OK && a.probabilities) s = cli_outputs_stage(&outs, a.probabilities, &o.probs);
        if (s == GROVE_OK && a.scores) s = cli_outputs_stage(&outs, a.scores, &o.scores);
        if (s == GROVE_OK && a.predict) s = cli_outputs_stage(&outs, a.predicted_labels, &o.predicted);
        if (s == GROVE_OK && a.predicted_probabilities)
            s = cli_outputs_stage(&outs, a.predicted_probabilities, &o.predicted_probs);
        FILE *plot = NULL;
        if (s == GROVE_OK && a.plot) s = cli_outputs_text(&outs, a.plot, &plot);
        if (plot) {
            write_plot(plot, pts, o.labels.data, clusters);
            grove_status c = cli_file_close(plot, a.plot);
            if (s == GROVE_OK) s = c;
        }
        if (s == GROVE_OK) s = cli_outputs_commit(&outs);
        else cli_outputs_abort(&outs);
        io_seconds += cli_now() - t1;
    }
    outputs_free(&o);
    if (s != GROVE_OK) return cli_fail_on("hdbscan", positional[0], s);

    size_t k = params.min_samples ? params.min_samples : params.min_cluster_size;
    if (!common.quiet && !common.json)
        printf("hdbscan: %zu points in %zu dims, min_cluster_size %zu, min_samples %zu (%s) -> %zu clusters, "
               "%zu noise, in %.3f s on %d thread%s\n",
               pts.n, pts.d, params.min_cluster_size, k, a.selection, clusters, noise, seconds, threads,
               threads == 1 ? "" : "s");
    if (!common.quiet && !common.json && a.predict)
        printf("hdbscan: predicted %zu points, %zu noise\n", nq, predicted_noise);
    if (common.json) {
        cli_json j;
        cli_json_begin(&j, "hdbscan");
        cli_json_points(&j, &pts);
        cli_json_header_line(&j, "header_line", &info);
        cli_json_int(&j, "min_cluster_size", (long long)params.min_cluster_size);
        cli_json_int(&j, "min_samples", (long long)k);
        cli_json_str(&j, "selection", a.selection);
        cli_json_num(&j, "epsilon", params.epsilon);
        cli_json_str(&j, "ties", a.ties);
        cli_json_int(&j, "clusters", (long long)clusters);
        cli_json_int(&j, "noise", (long long)noise);
        if (a.predict) {
            cli_json_int(&j, "predicted", (long long)nq);
            cli_json_int(&j, "predicted_noise", (long long)predicted_noise);
        }
        cli_json_finish(&j, seconds, io_seconds, threads);
    }
    return CLI_EXIT_OK;
}
