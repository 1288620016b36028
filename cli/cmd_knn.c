/* grove knn DATA -k K [--queries Q] [--exclude-self] [--box L[,L...]] --indices I.npy [--distances D.npy]
 *   [--leaf-size L] [--index-dims M] [--verify N] [--json] */
#include "command.h"
#include "check_brute.h"

#include <stdio.h>
#include <string.h>

static const char usage[] =
    "usage: grove knn DATA -k K [--queries Q] [--exclude-self] [--box L[,L...]] --indices I.npy\n"
    "                 [--distances D.npy]\n"
    "                 [--leaf-size L] [--index-dims M] [--verify N] [--threads N] [--json] [--quiet]\n"
    "Exact k nearest neighbours of every query (DATA itself unless --queries), nearest first, ties\n"
    "broken by the smaller row. I is (nq, k) int64 rows, D (nq, k) float64 Euclidean distances.\n"
    "  --exclude-self   leave each point out of its own list (self-queries only)\n"
    "  --box L | Lx,Ly,..  periodic box [0, L) in every dimension, or one length per dimension\n"
    "                   (0 = not periodic): minimum-image distances, as SciPy's cKDTree boxsize;\n"
    "                   points outside the box are refused\n"
    "  --verify N       check N sampled queries against brute force\n";

typedef struct knn_args {
    cli_file data, queries, indices, distances;
    cli_box box;
    size_t k, verify;
    bool have_k, exclude_self;
    grove_index_params ip;
    check_brute check;
    double mean_kth;
} knn_args;

/* grove.h: an index holds at most 2^32 - 2 points, so no k beyond. */
static const size_t K_MAX = (size_t)UINT32_MAX - 1;

static bool check(void *state)
{
    const knn_args *a = state;
    if (!a->data.path || !a->have_k || !a->indices.path) {
        cli_error("knn", "DATA, -k and --indices are required (see --help)");
        return false;
    }
    if (a->exclude_self && a->queries.path) {
        cli_error("knn", "--exclude-self applies to self-queries (no --queries)");
        return false;
    }
    if (a->k > K_MAX) {
        cli_error("knn", "-k: expected a whole number in 1..%zu (the most points an index holds), got %zu", K_MAX,
                  a->k);
        return false;
    }
    return true;
}

/* The queries: the data itself unless --queries. */
static const grove_points *query_points(const knn_args *a) { return a->queries.path ? &a->queries.points : NULL; }
static size_t query_count(const knn_args *a) { return (a->queries.path ? &a->queries : &a->data)->points.n; }

static grove_status run(void *state, cli_run *run)
{
    knn_args *a = state;
    const grove_points pts = a->data.points, *qp = query_points(a);
    size_t nq = query_count(a), k = a->k;
    run->fail_queries = a->queries.path;
    if (!cli_box_apply("knn", &a->box, pts.d, &a->ip)) return cli_run_usage(run);
    /* Before the (nq, k) outputs are made: a k beyond the points would
     * otherwise fail as memory. */
    size_t candidates = pts.n - (a->exclude_self && pts.n > 0);
    if (k > candidates) {
        cli_note_error("%s: -k %zu is more than its %zu point%s%s", a->data.path, k, candidates,
                       candidates == 1 ? "" : "s", a->exclude_self ? " besides each query" : "");
        return GROVE_INVALID_ARGUMENT;
    }
    grove_status s = grove_array_create(&a->indices.array, GROVE_INT64, nq, k);
    if (s == GROVE_OK) s = grove_array_create(&a->distances.array, GROVE_FLOAT64, nq, k);
    const int64_t *indices = a->indices.array.data;
    const double *distances = a->distances.array.data;
    if (s == GROVE_OK) {
        double start = cli_now();
        grove_index *ix = NULL;
        s = grove_index_create(pts, &a->ip, &run->options, &ix);
        grove_knn_params kp = {k, a->exclude_self};
        if (s == GROVE_OK)
            s = grove_knn_search(ix, qp, &kp, a->indices.array.data, a->distances.array.data, &run->options);
        grove_index_free(ix);
        run->seconds = cli_now() - start;
    }
    if (s != GROVE_OK) return s;
    for (size_t q = 0; q < nq; q++) a->mean_kth += distances[q * k + k - 1];
    a->mean_kth = nq ? a->mean_kth / (double)nq : 0;
    if (a->verify) {
        check_brute_init(&a->check, pts, qp, a->ip.boxsize ? &a->box : NULL, 0, a->exclude_self, a->verify);
        check_brute_knn(&a->check, k, indices, distances);
        /* A failed check writes nothing (the verdict reports it). */
        if (a->check.failures) return GROVE_OK;
    }
    return cli_run_stage(run);
}

static void summary(void *state, const cli_run *run)
{
    const knn_args *a = state;
    printf("knn: %zu points in %zu dims, %zu %s, k = %zu -> mean distance to the k-th %.6g, in %.3f s on %d "
           "thread%s\n",
           a->data.points.n, a->data.points.d, query_count(a), a->queries.path ? "queries" : "self-queries", a->k,
           a->mean_kth, run->seconds, run->threads, run->threads == 1 ? "" : "s");
}

static bool verdict(void *state, const cli_run *run)
{
    const knn_args *a = state;
    return !a->verify || check_brute_report(&a->check, "knn", run->common.quiet || run->common.json);
}

static void json(void *state, const cli_run *run, cli_json *j)
{
    (void)run;
    const knn_args *a = state;
    cli_json_points(j, &a->data.points);
    cli_json_header_line(j, "header_line", &a->data.info);
    cli_json_int(j, "nq", (long long)query_count(a));
    cli_json_header_line(j, "queries_header_line", &a->queries.info);
    cli_json_int(j, "k", (long long)a->k);
    cli_json_bool(j, "exclude_self", a->exclude_self);
    cli_json_bool(j, "periodic", a->ip.boxsize != NULL);
    cli_json_num(j, "mean_kth_distance", a->mean_kth);
}

int cmd_knn(int argc, char **argv)
{
    static const cli_command command = {"knn", usage, check, run, summary, verdict, json, NULL};
    knn_args a;
    memset(&a, 0, sizeof a);
    grove_index_params_init(&a.ip);
    const cli_opt opts[] = {
        {"DATA", OPT_POINTS, &a.data, NULL, CLI_ANY},
        {"-k|--k", OPT_SIZE, &a.k, &a.have_k, CLI_AT_LEAST(1)},
        {"--queries", OPT_POINTS, &a.queries, NULL, CLI_ANY},
        {"--exclude-self", OPT_FLAG, &a.exclude_self, NULL, CLI_ANY},
        {"--indices", OPT_NPY, &a.indices, NULL, CLI_ANY},
        {"--distances", OPT_NPY, &a.distances, NULL, CLI_ANY},
        {"--leaf-size", OPT_SIZE, &a.ip.leaf_size, NULL, CLI_BETWEEN(0, GROVE_INDEX_LEAF_SIZE_MAX)},
        {"--index-dims", OPT_SIZE, &a.ip.index_dims, NULL, CLI_ANY},
        {"--verify", OPT_SIZE, &a.verify, NULL, CLI_ANY},
        {"--box", OPT_BOX, &a.box, NULL, CLI_ANY},
    };
    return cli_command_main(&command, &a, opts, sizeof opts / sizeof opts[0], argc, argv);
}
