/* grove dbscan DATA --eps E --min-samples K --labels L.npy [--core C.npy] [--sample-weight W.npy]
 *              [--box L[,L...]] [--memory-budget SIZE] [--leaf-size L] [--index-dims M] [--json] */
#include "command.h"

#include <stdio.h>
#include <string.h>

static const char usage[] =
    "usage: grove dbscan DATA --eps E --min-samples K --labels L.npy [--core C.npy] [--sample-weight W.npy]\n"
    "                    [--box L[,L...]] [--memory-budget SIZE] [--leaf-size L] [--index-dims M]\n"
    "                    [--threads N] [--json] [--quiet]\n"
    "Exact DBSCAN, labelled as scikit-learn's sklearn.cluster.DBSCAN labels it (border points included).\n"
    "A point is core when at least K points (itself included) lie within Euclidean distance E\n"
    "(inclusive). L is (n,) int64: the cluster of each point, clusters numbered in the order of their\n"
    "lowest-index core point, -1 for noise. C is (c,) int64: the core points' rows, ascending.\n"
    "  --sample-weight W   one weight per row of DATA (.npy of n numbers, or a text column), as\n"
    "                      scikit-learn's fit(X, sample_weight=W) takes it: a point is core when its\n"
    "                      neighbourhood's weights sum to at least K (summed exactly, rounded once);\n"
    "                      finite, zero and negative allowed, not all zero\n"
    "  --box L | Lx,Ly,..  periodic box [0, L) in every dimension, or one length per dimension (0 =\n"
    "                      not periodic): minimum-image distances, as SciPy's cKDTree boxsize;\n"
    "                      points outside the box are refused\n"
    "  --memory-budget S   refuse to run when DBSCAN's working memory (8-9 bytes a point, 24-25 with\n"
    "                      weights, the same for every E: neighbourhoods are never held) exceeds S\n"
    "                      (K/M/G suffixes; the data and index come on top); default no limit\n"
    "  --leaf-size L       points per leaf group of the index (default 32 for d <= 16, else 64)\n"
    "  --index-dims M      key dimensions in the index's group boxes (default min(d, 16))\n";

typedef struct dbscan_args {
    cli_file data, labels, core, weights;
    cli_box box;
    grove_dbscan_params params;
    grove_index_params index;
    bool have_eps, have_min_samples, have_budget;
    size_t budget;
    grove_dbscan_counts counts;
    cli_ranks ranks; /* on rank 0 of a distributed run */
} dbscan_args;

static bool check(void *state)
{
    const dbscan_args *a = state;
    if (a->data.path && a->have_eps && a->have_min_samples && a->labels.path) return true;
    cli_error("dbscan", "DATA, --eps, --min-samples and --labels are required (see --help)");
    return false;
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

/* One finite weight per row of DATA in w->array, not all zero, as
 * scikit-learn requires. */
static grove_status load_weights(cli_file *w, const cli_file *data)
{
    size_t n = data->points.n;
    grove_status s = cli_weights_load(w, n, data->path);
    const double *weight = w->array.data;
    bool nonzero = false;
    for (size_t i = 0; s == GROVE_OK && i < n && !nonzero; i++) nonzero = weight[i] != 0;
    if (s == GROVE_OK && n && !nonzero) {
        cli_note_error("%s: sample weights must contain at least one non-zero number (as scikit-learn requires)",
                       w->path);
        s = GROVE_INVALID_ARGUMENT;
    }
    return s;
}

static grove_status run(void *state, cli_run *run)
{
    dbscan_args *a = state;
    const grove_points pts = a->data.points;
    run->options.memory_budget = a->have_budget ? a->budget : 0;
    if (a->weights.path) {
        double t0 = cli_now();
        grove_status s = load_weights(&a->weights, &a->data);
        run->io_seconds += cli_now() - t0;
        if (s != GROVE_OK) return s;
    }
    if (!cli_box_apply("dbscan", &a->box, pts.d, &a->index)) return cli_run_usage(run);
    grove_array flags = {0};
    grove_status s = grove_array_create(&a->labels.array, GROVE_INT64, pts.n, 0);
    if (s == GROVE_OK) s = grove_array_create(&flags, GROVE_BOOL, pts.n, 0);
    /* Under mpirun each rank clusters its block of rows and rank 0
     * gathers the labels and flags (docs/mpi.md); alone the block is all. */
    const grove_mpi *mpi = run->options.mpi;
    size_t first;
    grove_points mine = cli_block(pts, mpi, &first);
    int64_t *labels = a->labels.array.data;
    uint8_t *core = flags.data;
    const double *weights = a->weights.array.data;
    a->params.sample_weight = weights && mine.n ? weights + first : NULL;
    if (s == GROVE_OK) {
        double start = cli_now();
        s = grove_dbscan(mine, &a->index, &a->params, labels ? labels + first : NULL, core ? core + first : NULL,
                         &a->counts, &run->options);
        run->seconds = cli_now() - start;
    }
    if (s == GROVE_OK) s = grove_mpi_gather_blocks(mpi, labels, pts.n, sizeof *labels);
    if (s == GROVE_OK) s = grove_mpi_gather_blocks(mpi, core, pts.n, 1);
    if (s == GROVE_OK && grove_mpi_size(mpi) > 1) s = cli_ranks_gather(&a->ranks, mpi, mine.n);
    bool lead = grove_mpi_rank(mpi) == 0;
    if (s == GROVE_OK && a->core.path && lead) s = core_rows(flags.data, pts.n, a->counts.core, &a->core.array);
    grove_array_free(&flags);
    return s == GROVE_OK && lead ? cli_run_stage(run) : s;
}

static void summary(void *state, const cli_run *run)
{
    const dbscan_args *a = state;
    printf("dbscan: %zu points in %zu dims%s, eps %.9g, min_samples %zu -> %zu clusters, %zu core, %zu noise, "
           "in %.3f s on %d thread%s\n",
           a->data.points.n, a->data.points.d, a->box.count ? " in a periodic box" : "", a->params.eps,
           a->params.min_samples, a->counts.clusters, a->counts.core, a->counts.noise, run->seconds, run->threads,
           run->threads == 1 ? "" : "s");
}

static void json(void *state, const cli_run *run, cli_json *j)
{
    const dbscan_args *a = state;
    cli_json_points(j, &a->data.points);
    cli_json_header_line(j, "header_line", &a->data.info);
    cli_json_num(j, "eps", a->params.eps);
    cli_json_int(j, "min_samples", (long long)a->params.min_samples);
    cli_json_bool(j, "weighted", a->weights.path != NULL);
    cli_json_bool(j, "periodic", a->box.count > 0);
    cli_json_int(j, "clusters", (long long)a->counts.clusters);
    cli_json_int(j, "core", (long long)a->counts.core);
    cli_json_int(j, "noise", (long long)a->counts.noise);
    cli_json_int(j, "memory_budget", (long long)run->options.memory_budget);
    cli_ranks_json(&a->ranks, run->options.mpi, j);
}

static void release(void *state) { cli_ranks_free(&((dbscan_args *)state)->ranks); }

int cmd_dbscan(int argc, char **argv)
{
    static const cli_command command = {"dbscan", usage, check, run, summary, NULL, json, release};
    dbscan_args a;
    memset(&a, 0, sizeof a);
    grove_dbscan_params_init(&a.params);
    grove_index_params_init(&a.index);
    const cli_opt opts[] = {
        {"DATA", OPT_POINTS, &a.data, NULL, CLI_ANY},
        {"--eps", OPT_DOUBLE, &a.params.eps, &a.have_eps, CLI_AT_LEAST(0)},
        {"--min-samples", OPT_SIZE, &a.params.min_samples, &a.have_min_samples, CLI_AT_LEAST(1)},
        {"--labels", OPT_NPY, &a.labels, NULL, CLI_ANY},
        {"--core", OPT_NPY, &a.core, NULL, CLI_ANY},
        {"--sample-weight", OPT_INPUT, &a.weights, NULL, CLI_ANY},
        {"--box", OPT_BOX, &a.box, NULL, CLI_ANY},
        {"--memory-budget", OPT_BYTES, &a.budget, &a.have_budget, CLI_AT_LEAST(1)},
        {"--leaf-size", OPT_SIZE, &a.index.leaf_size, NULL, CLI_BETWEEN(0, GROVE_INDEX_LEAF_SIZE_MAX)},
        {"--index-dims", OPT_SIZE, &a.index.index_dims, NULL, CLI_ANY},
    };
    return cli_command_main(&command, &a, opts, sizeof opts / sizeof opts[0], argc, argv);
}
