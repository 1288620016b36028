/* grove hdbscan DATA --min-cluster-size M [--min-samples K] [selection options] --labels L.npy
 *               [--probabilities P.npy] [--outlier-scores S.npy] [--plot out.svg]
 *               [--predict Q.npy --predicted-labels PL.npy [--predicted-probabilities PP.npy]] [--json] */
#include "command.h"
#include "svg_plot.h"

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

typedef struct hdbscan_args {
    cli_file data, predict, labels, probabilities, scores, plot, predicted_labels, predicted_probabilities;
    const char *selection, *ties;
    size_t min_cluster_size, min_samples, max_cluster_size;
    double epsilon, epsilon_max, persistence, alpha;
    bool have_mcs, have_epsilon_max, have_alpha, allow_single, match_reference;
    grove_hdbscan_params params;
    size_t clusters, noise, predicted_noise;
} hdbscan_args;

static bool check(void *state)
{
    const hdbscan_args *a = state;
    if (!a->data.path || !a->labels.path || !a->have_mcs) {
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
    if (!a->predict.path != !a->predicted_labels.path) {
        cli_error("hdbscan", "--predict and --predicted-labels go together (see --help)");
        return false;
    }
    if (a->predicted_probabilities.path && !a->predict.path) {
        cli_error("hdbscan", "--predicted-probabilities needs --predict");
        return false;
    }
    return true;
}

static void set_params(const hdbscan_args *a, grove_hdbscan_params *params)
{
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
    params->prediction_data = a->predict.path != NULL;
}

/* Fit, then predict the queries if any; run->seconds is the computation. */
static grove_status compute(hdbscan_args *a, cli_run *run)
{
    grove_hdbscan_model *model = NULL;
    double start = cli_now();
    grove_status s = grove_hdbscan_model_create(a->data.points, &a->params, &run->options, &model);
    if (s == GROVE_OK)
        s = grove_hdbscan_model_labels(model, a->labels.array.data, a->probabilities.array.data,
                                       a->scores.array.data);
    if (s == GROVE_OK) a->clusters = grove_hdbscan_model_clusters(model);
    if (s == GROVE_OK && a->predict.array.data) {
        s = grove_hdbscan_approximate_predict(model, a->predict.points, a->predicted_labels.array.data,
                                              a->predicted_probabilities.array.data, &run->options);
        /* What the prediction refuses is in the queries' file. */
        if (s != GROVE_OK) run->fail_path = a->predict.path;
    }
    run->seconds = cli_now() - start;
    grove_hdbscan_model_free(model);
    return s;
}

static size_t count_noise(const grove_array *labels)
{
    size_t noise = 0;
    for (size_t i = 0; labels->data && i < labels->shape[0]; i++) noise += ((const int64_t *)labels->data)[i] < 0;
    return noise;
}

/* The picture, the last output staged. */
static grove_status write_plot(const hdbscan_args *a, cli_run *run)
{
    double t0 = cli_now();
    FILE *f = NULL;
    grove_status s = cli_outputs_text(&run->outs, a->plot.path, &f);
    if (s == GROVE_OK) {
        char title[96];
        snprintf(title, sizeof title, "grove hdbscan: %zu points, %zu clusters", a->data.points.n, a->clusters);
        svg_plot_clusters(f, a->data.points, a->labels.array.data, title);
        s = cli_file_close(f, a->plot.path);
    }
    run->io_seconds += cli_now() - t0;
    return s;
}

static grove_status run(void *state, cli_run *run)
{
    hdbscan_args *a = state;
    size_t n = a->data.points.n, nq = a->predict.points.n;
    set_params(a, &a->params);
    grove_status s = grove_array_create(&a->labels.array, GROVE_INT64, n, 0);
    if (s == GROVE_OK) s = grove_array_create(&a->probabilities.array, GROVE_FLOAT64, n, 0);
    if (s == GROVE_OK) s = grove_array_create(&a->scores.array, GROVE_FLOAT64, n, 0);
    if (s == GROVE_OK && a->predict.path) s = grove_array_create(&a->predicted_labels.array, GROVE_INT64, nq, 0);
    if (s == GROVE_OK && a->predict.path)
        s = grove_array_create(&a->predicted_probabilities.array, GROVE_FLOAT64, nq, 0);
    if (s == GROVE_OK) s = compute(a, run);
    if (s != GROVE_OK) return s;
    a->noise = count_noise(&a->labels.array);
    a->predicted_noise = count_noise(&a->predicted_labels.array);
    s = cli_run_stage(run);
    if (s == GROVE_OK && a->plot.path) s = write_plot(a, run);
    return s;
}

/* min_samples as run: --min-samples, else the minimum cluster size. */
static size_t min_samples(const hdbscan_args *a)
{
    return a->params.min_samples ? a->params.min_samples : a->params.min_cluster_size;
}

static void summary(void *state, const cli_run *run)
{
    const hdbscan_args *a = state;
    printf("hdbscan: %zu points in %zu dims, min_cluster_size %zu, min_samples %zu (%s) -> %zu clusters, "
           "%zu noise, in %.3f s on %d thread%s\n",
           a->data.points.n, a->data.points.d, a->params.min_cluster_size, min_samples(a), a->selection,
           a->clusters, a->noise, run->seconds, run->threads, run->threads == 1 ? "" : "s");
    if (a->predict.path) printf("hdbscan: predicted %zu points, %zu noise\n", a->predict.points.n, a->predicted_noise);
}

static void json(void *state, const cli_run *run, cli_json *j)
{
    (void)run;
    const hdbscan_args *a = state;
    cli_json_points(j, &a->data.points);
    cli_json_header_line(j, "header_line", &a->data.info);
    cli_json_int(j, "min_cluster_size", (long long)a->params.min_cluster_size);
    cli_json_int(j, "min_samples", (long long)min_samples(a));
    cli_json_str(j, "selection", a->selection);
    cli_json_num(j, "epsilon", a->params.epsilon);
    cli_json_str(j, "ties", a->ties);
    cli_json_int(j, "clusters", (long long)a->clusters);
    cli_json_int(j, "noise", (long long)a->noise);
    if (a->predict.path) {
        cli_json_int(j, "predicted", (long long)a->predict.points.n);
        cli_json_int(j, "predicted_noise", (long long)a->predicted_noise);
    }
}

int cmd_hdbscan(int argc, char **argv)
{
    static const cli_command command = {"hdbscan", usage, check, run, summary, NULL, json, NULL};
    hdbscan_args a;
    memset(&a, 0, sizeof a);
    a.selection = "eom";
    a.ties = "ordered";
    /* --predict before the outputs: a collision with an input is reported
     * first (the order of the file checks is the table's). */
    const cli_opt opts[] = {
        {"DATA", OPT_POINTS, &a.data, NULL, CLI_ANY},
        {"--predict", OPT_POINTS, &a.predict, NULL, CLI_ANY},
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
        {"--labels", OPT_NPY, &a.labels, NULL, CLI_ANY},
        {"--probabilities", OPT_NPY, &a.probabilities, NULL, CLI_ANY},
        {"--outlier-scores", OPT_NPY, &a.scores, NULL, CLI_ANY},
        {"--plot", OPT_SVG, &a.plot, NULL, CLI_ANY},
        {"--predicted-labels", OPT_NPY, &a.predicted_labels, NULL, CLI_ANY},
        {"--predicted-probabilities", OPT_NPY, &a.predicted_probabilities, NULL, CLI_ANY},
    };
    return cli_command_main(&command, &a, opts, sizeof opts / sizeof opts[0], argc, argv);
}
