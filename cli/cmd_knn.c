/* grove knn DATA -k K [--queries Q] [--exclude-self] [--box L[,L...]] --indices I.npy [--distances D.npy]
 *   [--leaf-size L] [--index-dims M] [--verify N] [--json] */
#include "cli.h"
#include "verify.h"

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

int cmd_knn(int argc, char **argv)
{
    if (cli_help(argc, argv, usage)) return CLI_EXIT_OK;
    const char *queries_path = NULL, *indices_path = NULL, *distances_path = NULL, *box_text = NULL;
    size_t k = 0, verify = 0;
    bool have_k = false, exclude_self = false;
    grove_index_params ip;
    grove_index_params_init(&ip);
    const cli_opt opts[] = {
        {"-k|--k", OPT_SIZE, &k, &have_k, CLI_AT_LEAST(1)},
        {"--queries", OPT_STRING, &queries_path, NULL, CLI_ANY},
        {"--exclude-self", OPT_FLAG, &exclude_self, NULL, CLI_ANY},
        {"--indices", OPT_STRING, &indices_path, NULL, CLI_ANY},
        {"--distances", OPT_STRING, &distances_path, NULL, CLI_ANY},
        {"--leaf-size", OPT_SIZE, &ip.leaf_size, NULL, CLI_BETWEEN(0, 4096)},
        {"--index-dims", OPT_SIZE, &ip.index_dims, NULL, CLI_ANY},
        {"--verify", OPT_SIZE, &verify, NULL, CLI_ANY},
        {"--box", OPT_STRING, &box_text, NULL, CLI_ANY},
    };
    const char *positional[1];
    size_t npositional;
    cli_common common;
    if (!cli_parse("knn", argc, argv, opts, sizeof opts / sizeof opts[0], positional, 1, &npositional, &common))
        return CLI_EXIT_USAGE;
    if (!npositional || !have_k || !indices_path) {
        cli_error("knn", "DATA, -k and --indices are required (see --help)");
        return CLI_EXIT_USAGE;
    }
    if (exclude_self && queries_path) {
        cli_error("knn", "--exclude-self applies to self-queries (no --queries)");
        return CLI_EXIT_USAGE;
    }
    const cli_path paths[] = {
        {"DATA", positional[0], CLI_INPUT},
        {"--queries", queries_path, CLI_INPUT},
        {"--indices", indices_path, CLI_OUTPUT_NPY},
        {"--distances", distances_path, CLI_OUTPUT_NPY},
    };
    cli_box box;
    if (!cli_check_paths("knn", paths, sizeof paths / sizeof paths[0]) || !cli_box_parse("knn", box_text, &box))
        return CLI_EXIT_USAGE;

    grove_options options = cli_options(&common);
    int threads = grove_options_threads(&options);
    grove_array data = {0}, queries = {0}, indices = {0}, distances = {0};
    grove_points pts, qpts;
    double t0 = cli_now();
    grove_load_info data_info, queries_info = {0, 0};
    grove_status s = cli_load_points(positional[0], &common, &data, &data_info);
    if (s == GROVE_OK) s = grove_array_points(&data, &pts);
    if (s == GROVE_OK && queries_path) {
        s = cli_load_points(queries_path, &common, &queries, &queries_info);
        if (s == GROVE_OK) s = grove_array_points(&queries, &qpts);
    }
    if (s != GROVE_OK || !cli_box_apply("knn", &box, pts.d, &ip)) {
        grove_array_free(&data);
        grove_array_free(&queries);
        cli_box_free(&box);
        return s != GROVE_OK ? cli_fail("knn", s) : CLI_EXIT_USAGE;
    }
    double io_seconds = cli_now() - t0, seconds = 0;
    const grove_points *qp = queries_path ? &qpts : NULL;
    size_t nq = queries_path ? qpts.n : pts.n;
    if (s == GROVE_OK) s = grove_array_create(&indices, GROVE_INT64, nq, k);
    if (s == GROVE_OK) s = grove_array_create(&distances, GROVE_FLOAT64, nq, k);
    if (s == GROVE_OK) {
        double start = cli_now();
        grove_index *ix = NULL;
        grove_knn_params kp = {k, exclude_self};
        s = grove_index_create(pts, &ip, &options, &ix);
        if (s == GROVE_OK) s = grove_knn_search(ix, qp, &kp, indices.data, distances.data, &options);
        grove_index_free(ix);
        seconds = cli_now() - start;
    }
    verify_join check;
    bool verified = true;
    if (s == GROVE_OK && verify) {
        verify_join_init(&check, pts, qp, ip.boxsize ? &box : NULL, 0, exclude_self, verify);
        verify_knn(&check, k, indices.data, distances.data);
        verified = check.failures == 0;
    }
    if (s == GROVE_OK && verified) {
        double t1 = cli_now();
        cli_outputs outs = {0};
        s = cli_outputs_stage(&outs, indices_path, &indices);
        if (s == GROVE_OK && distances_path) s = cli_outputs_stage(&outs, distances_path, &distances);
        if (s == GROVE_OK) s = cli_outputs_commit(&outs);
        else cli_outputs_abort(&outs);
        io_seconds += cli_now() - t1;
    }
    double mean_kth = 0;
    for (size_t q = 0; s == GROVE_OK && q < nq; q++) mean_kth += ((const double *)distances.data)[q * k + k - 1];
    grove_array_free(&indices);
    grove_array_free(&distances);
    grove_array_free(&data);
    grove_array_free(&queries);
    bool periodic = ip.boxsize != NULL;
    cli_box_free(&box);
    if (s != GROVE_OK) return cli_fail_on_inputs("knn", positional[0], queries_path, s);
    mean_kth = nq ? mean_kth / (double)nq : 0;
    if (!common.quiet && !common.json)
        printf("knn: %zu points in %zu dims, %zu %s, k = %zu -> mean distance to the k-th %.6g, in %.3f s on %d "
               "thread%s\n",
               pts.n, pts.d, nq, queries_path ? "queries" : "self-queries", k, mean_kth, seconds, threads,
               threads == 1 ? "" : "s");
    if (verify && !verify_join_report(&check, "knn", common.quiet || common.json)) return CLI_EXIT_FAIL;
    if (common.json) {
        cli_json j;
        cli_json_begin(&j, "knn");
        cli_json_points(&j, &pts);
        cli_json_header_line(&j, "header_line", &data_info);
        cli_json_int(&j, "nq", (long long)nq);
        cli_json_header_line(&j, "queries_header_line", &queries_info);
        cli_json_int(&j, "k", (long long)k);
        cli_json_bool(&j, "exclude_self", exclude_self);
        cli_json_bool(&j, "periodic", periodic);
        cli_json_num(&j, "mean_kth_distance", mean_kth);
        cli_json_finish(&j, seconds, io_seconds, threads);
    }
    return CLI_EXIT_OK;
}
