/* grove join DATA --eps E [--queries Q] [--exclude-self] [--count-only] [--box L[,L...]]
 *   [--memory-budget SIZE] [--offsets O.npy --indices I.npy [--distances D.npy] | --pairs P.npy]
 *   [--leaf-size L] [--index-dims M] [--verify N] [--json] */
#include "cli.h"
#include "verify.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage[] =
    "usage: grove join DATA --eps E [--queries Q] [--exclude-self] [--count-only] [--box L[,L...]]\n"
    "                  [--memory-budget SIZE] [--offsets O.npy --indices I.npy [--distances D.npy] | --pairs P.npy]\n"
    "                  [--leaf-size L] [--index-dims M] [--verify N] [--threads N] [--json] [--quiet]\n"
    "Exact epsilon similarity join: every pair within Euclidean distance E (inclusive).\n"
    "Self-join of DATA (pairs (i, i) included unless --exclude-self), or semi-join of the queries Q.\n"
    "O is (nq+1,) int64 CSR offsets, I (m,) int64 neighbour rows ascending per query, D (m,) float64\n"
    "distances; P is (m, 2) int64 rows (query, point) sorted by query then point.\n"
    "An output (O and I, or P) is required unless --count-only or --verify N says what to do instead.\n"
    "  --count-only        count the pairs (and write O if given) without listing them\n"
    "  --box L | Lx,Ly,..  periodic box [0, L) in every dimension, or one length per dimension (0 =\n"
    "                      not periodic): minimum-image distances, as SciPy's cKDTree boxsize;\n"
    "                      points outside the box are refused\n"
    "  --memory-budget S   memory for the result (K/M/G suffixes; the data and index come on top):\n"
    "                      larger results are produced in batches of queries streamed into the\n"
    "                      files (default: half the RAM)\n"
    "  --leaf-size L       points per leaf group (default 32 for d <= 16, else 64)\n"
    "  --index-dims M      key dimensions in the group boxes (default min(d, 16)): the highest-variance\n"
    "                      dimensions up to d = 16, principal axes above\n"
    "  --verify N          check N sampled queries against brute force (with no output file: a\n"
    "                      check that writes nothing)\n"
    "The count pass knows the result's size: outputs that would not fit the free space of their\n"
    "file system are refused before anything is written.\n";

typedef struct join_args {
    const char *data, *queries, *offsets, *indices, *distances, *pairs, *box_text;
    grove_join_params params;
    grove_index_params index;
    bool count_only, have_budget, exclude_self;
    size_t budget, verify;
} join_args;

/* The streaming callback's state: open outputs and the sampled checks. */
typedef struct join_sink {
    cli_stream offsets, indices, distances, pair_rows;
    int64_t *scratch;
    size_t scratch_cap;
    double io_seconds;
    size_t nq, batches;
    int64_t pairs;
    verify_join *check;
} join_sink;

/* Before the first batch: the files' final sizes are known from the count. */
static grove_status check_space(join_sink *s, const grove_join_batch *b)
{
    size_t total = (size_t)b->pairs_total;
    cli_stream *streams[] = {&s->offsets, &s->indices, &s->distances, &s->pair_rows};
    size_t rows[] = {s->nq + 1, total, total, total};
    return cli_streams_check_space(streams, rows, 4);
}

static grove_status grow_scratch(join_sink *s, size_t need)
{
    if (need <= s->scratch_cap) return GROVE_OK;
    int64_t *p = realloc(s->scratch, need * sizeof *p);
    if (!p) return GROVE_OUT_OF_MEMORY;
    s->scratch = p;
    s->scratch_cap = need;
    return GROVE_OK;
}

/* Global offsets of the batch's queries, the lists, and (query, point)
 * rows, the converted ones in pieces of at most 64K (a fixed scratch). */
static grove_status write_batch(join_sink *s, const grove_join_batch *b)
{
    size_t nb = b->query_end - b->query_begin, m = (size_t)b->offsets[nb];
    grove_status st = GROVE_OK;
    enum { PIECE = 1 << 16 };
    for (size_t q0 = 0; st == GROVE_OK && s->offsets.f && q0 < nb; q0 += PIECE) {
        size_t piece = nb - q0 < PIECE ? nb - q0 : PIECE;
        st = grow_scratch(s, piece);
        for (size_t i = 0; st == GROVE_OK && i < piece; i++) s->scratch[i] = b->pairs_before + b->offsets[q0 + i];
        if (st == GROVE_OK) st = cli_stream_write(&s->offsets, s->scratch, piece);
    }
    if (st == GROVE_OK && s->indices.f) st = cli_stream_write(&s->indices, b->indices, m);
    if (st == GROVE_OK && s->distances.f) st = cli_stream_write(&s->distances, b->distances, m);
    if (st == GROVE_OK && s->pair_rows.f) {
        st = grow_scratch(s, 2 * PIECE);
        size_t q = 0, written = 0;
        while (st == GROVE_OK && written < m) {
            size_t piece = m - written < PIECE ? m - written : PIECE;
            for (size_t i = 0; i < piece; i++) {
                while ((size_t)b->offsets[q + 1] <= written + i) q++;
                s->scratch[2 * i] = (int64_t)(b->query_begin + q);
                s->scratch[2 * i + 1] = b->indices[written + i];
            }
            st = cli_stream_write(&s->pair_rows, s->scratch, piece);
            written += piece;
        }
    }
    return st;
}

static int on_batch(void *user, const grove_join_batch *b)
{
    join_sink *s = user;
    double t0 = cli_now();
    /* The first call announces the result's size before anything is
     * filled: room for the outputs is checked there. */
    if (s->batches == 0 && s->nq > 0 && b->query_end == 0) {
        grove_status st = check_space(s, b);
        s->io_seconds += cli_now() - t0;
        return st != GROVE_OK;
    }
    grove_status st = write_batch(s, b);
    if (st == GROVE_OK && s->check) verify_join_batch(s->check, b);
    s->io_seconds += cli_now() - t0;
    s->batches++;
    s->pairs += b->offsets[b->query_end - b->query_begin];
    return st != GROVE_OK;
}

static bool check_args(const join_args *a, bool have_eps)
{
    const char *problem = NULL;
    if (!have_eps) problem = "--eps is required";
    else if ((a->offsets != NULL) != (a->indices != NULL) && !(a->count_only && a->offsets))
        problem = "--offsets and --indices go together";
    else if (a->distances && !a->indices) problem = "--distances needs --offsets and --indices";
    else if (a->pairs && a->indices) problem = "choose --offsets/--indices or --pairs, not both";
    else if (a->count_only && (a->indices || a->distances || a->pairs))
        problem = "--count-only writes no neighbour lists (only --offsets)";
    else if (a->exclude_self && a->queries) problem = "--exclude-self applies to self-joins (no --queries)";
    else if (!a->count_only && !a->verify && !a->indices && !a->pairs)
        problem = "nothing to write: give --offsets O --indices I or --pairs P, or --count-only to count the "
                  "pairs, or --verify N to check a sample";
    if (problem) cli_error("join", "%s (see --help)", problem);
    if (problem) return false;
    const cli_path paths[] = {
        {"DATA", a->data, CLI_INPUT},
        {"--queries", a->queries, CLI_INPUT},
        {"--offsets", a->offsets, CLI_OUTPUT_NPY},
        {"--indices", a->indices, CLI_OUTPUT_NPY},
        {"--distances", a->distances, CLI_OUTPUT_NPY},
        {"--pairs", a->pairs, CLI_OUTPUT_NPY},
    };
    return cli_check_paths("join", paths, sizeof paths / sizeof paths[0]);
}

/* Half the physical memory: the default budget for results in memory. */
static size_t default_budget(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGE_SIZE);
    return pages > 0 && size > 0 ? (size_t)pages / 2 * (size_t)size : (size_t)1 << 30;
}

static grove_status count_only(const grove_index *ix, const grove_points *qp, const join_args *a, size_t nq,
                               int64_t *pairs, const grove_options *options, double *io_seconds)
{
    grove_array offsets = {0};
    grove_status s = grove_array_create(&offsets, GROVE_INT64, nq + 1, 0);
    int64_t *o = offsets.data;
    if (s == GROVE_OK) s = grove_join_count(ix, qp, &a->params, o ? o + 1 : NULL, pairs, options);
    if (s == GROVE_OK && a->offsets) {
        for (size_t q = 0; q < nq; q++) o[q + 1] += o[q];
        double t0 = cli_now();
        cli_outputs outs = {0};
        s = cli_outputs_stage(&outs, a->offsets, &offsets);
        if (s == GROVE_OK) s = cli_outputs_commit(&outs);
        else cli_outputs_abort(&outs);
        *io_seconds += cli_now() - t0;
    }
    grove_array_free(&offsets);
    return s;
}

static grove_status full_join(const grove_index *ix, const grove_points *qp, const join_args *a, join_sink *sink,
                              const grove_options *options)
{
    cli_outputs outs = {0};
    grove_status s = GROVE_OK;
    if (a->offsets) s = cli_outputs_stream(&outs, a->offsets, GROVE_INT64, 0, &sink->offsets);
    if (s == GROVE_OK && a->indices) s = cli_outputs_stream(&outs, a->indices, GROVE_INT64, 0, &sink->indices);
    if (s == GROVE_OK && a->distances)
        s = cli_outputs_stream(&outs, a->distances, GROVE_FLOAT64, 0, &sink->distances);
    if (s == GROVE_OK && a->pairs) s = cli_outputs_stream(&outs, a->pairs, GROVE_INT64, 2, &sink->pair_rows);
    grove_join_params params = a->params;
    params.distances = a->distances != NULL || sink->check != NULL;
    if (s == GROVE_OK) s = grove_join_stream(ix, qp, &params, on_batch, sink, options);
    if (s == GROVE_OK && sink->offsets.f) {
        /* The closing offset: the total. */
        int64_t total = sink->pairs;
        s = cli_stream_write(&sink->offsets, &total, 1);
    }
    cli_stream *streams[] = {&sink->offsets, &sink->indices, &sink->distances, &sink->pair_rows};
    for (size_t i = 0; i < 4; i++) {
        grove_status c = cli_stream_close(streams[i]);
        if (s == GROVE_OK) s = c;
    }
    if (s == GROVE_OK) s = cli_outputs_commit(&outs);
    else cli_outputs_abort(&outs);
    return s;
}

int cmd_join(int argc, char **argv)
{
    if (cli_help(argc, argv, usage)) return CLI_EXIT_OK;
    join_args a;
    memset(&a, 0, sizeof a);
    grove_join_params_init(&a.params);
    grove_index_params_init(&a.index);
    bool have_eps = false;
    const cli_opt opts[] = {
        {"--eps", OPT_DOUBLE, &a.params.eps, &have_eps, CLI_AT_LEAST(0)},
        {"--queries", OPT_STRING, &a.queries, NULL, CLI_ANY},
        {"--exclude-self", OPT_FLAG, &a.exclude_self, NULL, CLI_ANY},
        {"--count-only", OPT_FLAG, &a.count_only, NULL, CLI_ANY},
        {"--memory-budget", OPT_BYTES, &a.budget, &a.have_budget, CLI_ANY},
        {"--offsets", OPT_STRING, &a.offsets, NULL, CLI_ANY},
        {"--indices", OPT_STRING, &a.indices, NULL, CLI_ANY},
        {"--distances", OPT_STRING, &a.distances, NULL, CLI_ANY},
        {"--pairs", OPT_STRING, &a.pairs, NULL, CLI_ANY},
        {"--leaf-size", OPT_SIZE, &a.index.leaf_size, NULL, CLI_BETWEEN(0, 4096)},
        {"--index-dims", OPT_SIZE, &a.index.index_dims, NULL, CLI_ANY},
        {"--verify", OPT_SIZE, &a.verify, NULL, CLI_ANY},
        {"--box", OPT_STRING, &a.box_text, NULL, CLI_ANY},
    };
    const char *positional[1];
    size_t npositional;
    cli_common common;
    if (!cli_parse("join", argc, argv, opts, sizeof opts / sizeof opts[0], positional, 1, &npositional, &common))
        return CLI_EXIT_USAGE;
    if (!npositional) {
        cli_error("join", "DATA is required (see --help)");
        return CLI_EXIT_USAGE;
    }
    a.data = positional[0];
    cli_box box;
    if (!check_args(&a, have_eps) || !cli_box_parse("join", a.box_text, &box)) return CLI_EXIT_USAGE;
    a.params.exclude_self = a.exclude_self;

    grove_options options = cli_options(&common);
    options.memory_budget = a.have_budget ? a.budget : default_budget();
    int threads = grove_options_threads(&options);
    grove_array data = {0}, queries = {0};
    grove_points pts, qpts;
    double t0 = cli_now();
    grove_load_info data_info, queries_info = {0, 0};
    grove_status s = cli_load_points(a.data, &common, &data, &data_info);
    if (s == GROVE_OK) s = grove_array_points(&data, &pts);
    if (s == GROVE_OK && a.queries) {
        s = cli_load_points(a.queries, &common, &queries, &queries_info);
        if (s == GROVE_OK) s = grove_array_points(&queries, &qpts);
    }
    if (s != GROVE_OK || !cli_box_apply("join", &box, pts.d, &a.index)) {
        grove_array_free(&data);
        grove_array_free(&queries);
        cli_box_free(&box);
        return s != GROVE_OK ? cli_fail("join", s) : CLI_EXIT_USAGE;
    }
    double io_seconds = cli_now() - t0, start = cli_now();
    const grove_points *qp = a.queries ? &qpts : NULL;
    size_t nq = a.queries ? qpts.n : pts.n;
    grove_index *ix = NULL;
    s = grove_index_create(pts, &a.index, &options, &ix);
    double index_seconds = cli_now() - start;
    join_sink sink;
    memset(&sink, 0, sizeof sink);
    sink.nq = nq;
    verify_join check;
    int64_t pairs = 0;
    if (s == GROVE_OK && a.verify && !a.count_only) {
        verify_join_init(&check, pts, qp, a.index.boxsize ? &box : NULL, a.params.eps, a.exclude_self, a.verify);
        sink.check = &check;
    }
    /* Writing the offsets is file I/O, kept out of `seconds` like the
     * streamed outputs (sink.io_seconds). */
    if (s == GROVE_OK && a.count_only) s = count_only(ix, qp, &a, nq, &pairs, &options, &sink.io_seconds);
    else if (s == GROVE_OK) s = full_join(ix, qp, &a, &sink, &options);
    double seconds = cli_now() - start - sink.io_seconds;
    io_seconds += sink.io_seconds;
    if (s == GROVE_OK && !a.count_only) pairs = sink.pairs;
    size_t leaf = grove_index_leaf_size(ix), dims = grove_index_dims(ix);
    grove_index_free(ix);
    free(sink.scratch);
    grove_array_free(&data);
    grove_array_free(&queries);
    bool periodic = a.index.boxsize != NULL;
    cli_box_free(&box);
    if (s != GROVE_OK) return cli_fail_on_inputs("join", a.data, a.queries, s);

    /* Selectivity as RT-HiSS defines it: neighbours per query besides the
     * query itself. */
    double self_pairs = !a.queries && !a.exclude_self ? (double)nq : 0;
    double selectivity = nq ? ((double)pairs - self_pairs) / (double)nq : 0;
    if (!common.quiet && !common.json)
        printf("join: %zu points in %zu dims, %zu %s, eps %.9g -> %lld pairs (selectivity %.1f) in %.3f s "
               "(index %.3f s) on %d thread%s%s\n",
               pts.n, pts.d, nq, a.queries ? "queries" : "self-queries", a.params.eps, (long long)pairs, selectivity,
               seconds, index_seconds, threads, threads == 1 ? "" : "s", a.count_only ? ", counted only" : "");
    if (sink.check && !verify_join_report(&check, "join", common.quiet || common.json)) return CLI_EXIT_FAIL;
    if (common.json) {
        cli_json j;
        cli_json_begin(&j, "join");
        cli_json_points(&j, &pts);
        cli_json_header_line(&j, "header_line", &data_info);
        cli_json_int(&j, "nq", (long long)nq);
        cli_json_header_line(&j, "queries_header_line", &queries_info);
        cli_json_num(&j, "eps", a.params.eps);
        cli_json_bool(&j, "self_join", a.queries == NULL);
        cli_json_bool(&j, "exclude_self", a.exclude_self);
        cli_json_bool(&j, "count_only", a.count_only);
        cli_json_bool(&j, "periodic", periodic);
        cli_json_int(&j, "pairs", (long long)pairs);
        cli_json_num(&j, "selectivity", selectivity);
        cli_json_num(&j, "index_seconds", index_seconds);
        cli_json_int(&j, "batches", (long long)sink.batches);
        cli_json_int(&j, "memory_budget", (long long)options.memory_budget);
        cli_json_int(&j, "leaf_size", (long long)leaf);
        cli_json_int(&j, "index_dims", (long long)dims);
        cli_json_finish(&j, seconds, io_seconds, threads);
    }
    return CLI_EXIT_OK;
}
