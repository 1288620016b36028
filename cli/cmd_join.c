/* grove join DATA --eps E [--queries Q] [--exclude-self] [--count-only] [--box L[,L...]]
 *   [--memory-budget SIZE] [--offsets O.npy --indices I.npy [--distances D.npy] | --pairs P.npy]
 *   [--leaf-size L] [--index-dims M] [--device D] [--verify N] [--json] */
#include "command.h"
#include "check_brute.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage[] =
    "usage: grove join DATA --eps E [--queries Q] [--exclude-self] [--count-only] [--box L[,L...]]\n"
    "                  [--memory-budget SIZE] [--offsets O.npy --indices I.npy [--distances D.npy] | --pairs P.npy]\n"
    "                  [--leaf-size L] [--index-dims M] [--device D] [--verify N] [--threads N] [--json]\n"
    "                  [--quiet]\n"
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
    CLI_DEVICE_HELP
    "  --verify N          check N sampled queries against brute force (with no output file: a\n"
    "                      check that writes nothing; with --count-only: their counts)\n"
    "The count pass knows the result's size: outputs that would not fit the free space of their\n"
    "file system are refused before anything is written.\n";

/* The streaming callback's state: open outputs and the sampled checks. */
typedef struct join_sink {
    cli_stream offsets, indices, distances, pair_rows;
    int64_t *scratch;
    size_t scratch_cap;
    double io_seconds;
    size_t nq, batches;
    int64_t pairs;
    check_brute *check;
} join_sink;

typedef struct join_args {
    cli_file data, queries, offsets, indices, distances, pairs;
    cli_box box;
    grove_join_params params;
    grove_index_params index;
    bool have_eps, count_only, have_budget, exclude_self;
    grove_device device;
    size_t budget, verify, leaf, dims;
    double index_seconds, selectivity;
    int64_t pairs_found;
    cli_ranks ranks; /* on rank 0 of a distributed run */
    join_sink sink;
    check_brute check;
} join_args;

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
    if (st == GROVE_OK && s->check) check_brute_join_batch(s->check, b);
    s->io_seconds += cli_now() - t0;
    s->batches++;
    s->pairs += b->offsets[b->query_end - b->query_begin];
    return st != GROVE_OK;
}

static bool check(void *state)
{
    const join_args *a = state;
    const char *problem = NULL;
    bool offsets = a->offsets.path, indices = a->indices.path;
    if (!a->data.path) {
        cli_error("join", "DATA is required (see --help)");
        return false;
    }
    if (!a->have_eps) problem = "--eps is required";
    else if (offsets != indices && !(a->count_only && offsets)) problem = "--offsets and --indices go together";
    else if (a->distances.path && !indices) problem = "--distances needs --offsets and --indices";
    else if (a->pairs.path && indices) problem = "choose --offsets/--indices or --pairs, not both";
    else if (a->count_only && (indices || a->distances.path || a->pairs.path))
        problem = "--count-only writes no neighbour lists (only --offsets)";
    else if (a->exclude_self && a->queries.path) problem = "--exclude-self applies to self-joins (no --queries)";
    else if (!a->count_only && !a->verify && !indices && !a->pairs.path)
        problem = "nothing to write: give --offsets O --indices I or --pairs P, or --count-only to count the "
                  "pairs, or --verify N to check a sample";
    if (problem) cli_error("join", "%s (see --help)", problem);
    return !problem;
}

/* Half the physical memory: the default budget for results in memory. */
static size_t default_budget(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGE_SIZE);
    return pages > 0 && size > 0 ? (size_t)pages / 2 * (size_t)size : (size_t)1 << 30;
}

/* --verify on a count-only join: the sampled queries' counts against brute
 * force (its time, like the lists' checks in on_batch, kept out of the
 * computation's). */
static void verify_counts(join_args *a, const int64_t *offsets)
{
    if (!a->sink.check) return;
    double t0 = cli_now();
    check_brute_join_counts(a->sink.check, offsets);
    a->sink.io_seconds += cli_now() - t0;
}

/* Count the pairs; the offsets (the counts' running sum) are the one
 * output. */
static grove_status count_only(const grove_index *ix, const grove_points *qp, join_args *a, size_t nq, cli_run *run)
{
    grove_array *offsets = &a->offsets.array;
    grove_status s = grove_array_create(offsets, GROVE_INT64, nq + 1, 0);
    int64_t *o = offsets->data;
    if (s == GROVE_OK) s = grove_join_count(ix, qp, &a->params, o ? o + 1 : NULL, &a->pairs_found, &run->options);
    if (s != GROVE_OK) return s;
    for (size_t q = 0; q < nq; q++) o[q + 1] += o[q];
    verify_counts(a, o);
    return cli_run_stage(run);
}

/* The outputs the flags ask for, opened for streaming. */
static grove_status open_outputs(join_args *a, cli_run *run)
{
    join_sink *sink = &a->sink;
    cli_outputs *outs = &run->outs;
    grove_status s = GROVE_OK;
    if (a->offsets.path) s = cli_outputs_stream(outs, a->offsets.path, GROVE_INT64, 0, &sink->offsets);
    if (s == GROVE_OK && a->indices.path) s = cli_outputs_stream(outs, a->indices.path, GROVE_INT64, 0, &sink->indices);
    if (s == GROVE_OK && a->distances.path)
        s = cli_outputs_stream(outs, a->distances.path, GROVE_FLOAT64, 0, &sink->distances);
    if (s == GROVE_OK && a->pairs.path) s = cli_outputs_stream(outs, a->pairs.path, GROVE_INT64, 2, &sink->pair_rows);
    return s;
}

/* The closing offset (the total) and the streams closed, after s. */
static grove_status close_outputs(join_args *a, grove_status s)
{
    join_sink *sink = &a->sink;
    if (s == GROVE_OK && sink->offsets.f) {
        int64_t total = sink->pairs;
        s = cli_stream_write(&sink->offsets, &total, 1);
    }
    cli_stream *streams[] = {&sink->offsets, &sink->indices, &sink->distances, &sink->pair_rows};
    for (size_t i = 0; i < 4; i++) {
        grove_status c = cli_stream_close(streams[i]);
        if (s == GROVE_OK) s = c;
    }
    a->pairs_found = sink->pairs;
    return s;
}

static grove_join_params list_params(const join_args *a)
{
    grove_join_params params = a->params;
    params.distances = a->distances.path != NULL || a->sink.check != NULL;
    return params;
}

/* The full join, its lists streamed into the outputs batch by batch. */
static grove_status full_join(const grove_index *ix, const grove_points *qp, join_args *a, cli_run *run)
{
    grove_status s = open_outputs(a, run);
    grove_join_params params = list_params(a);
    if (s == GROVE_OK) s = grove_join_stream(ix, qp, &params, on_batch, &a->sink, &run->options);
    return close_outputs(a, s);
}

/* Under mpirun on several ranks: every rank reads the whole input, joins
 * its block of rows distributed (grove_join), and rank 0 gathers the rows
 * and writes the outputs as one batch (docs/mpi.md). */
static grove_status distributed_join(const grove_points *qp, join_args *a, cli_run *run)
{
    const grove_mpi *mpi = run->options.mpi;
    int rank = grove_mpi_rank(mpi);
    size_t first;
    grove_points mine = cli_block(a->data.points, mpi, &first), mine_q = qp ? cli_block(*qp, mpi, &first) : mine;
    grove_join_params params = list_params(a);
    params.distances = params.distances && !a->count_only;
    grove_join_result res;
    grove_status s = grove_join(mine, qp ? &mine_q : NULL, &a->index, &params, &res, &run->options);
    if (s == GROVE_OK) s = grove_join_result_gather(&res, &run->options);
    if (s == GROVE_OK) s = cli_ranks_gather(&a->ranks, mpi, mine.n);
    if (s == GROVE_OK && rank == 0 && a->count_only) {
        a->pairs_found = res.pairs;
        verify_counts(a, res.offsets);
        if (a->offsets.path) {
            s = grove_array_create(&a->offsets.array, GROVE_INT64, res.nq + 1, 0);
            if (s == GROVE_OK) memcpy(a->offsets.array.data, res.offsets, (res.nq + 1) * sizeof *res.offsets);
            if (s == GROVE_OK) s = cli_run_stage(run);
        }
    } else if (s == GROVE_OK && rank == 0) {
        s = open_outputs(a, run);
        grove_join_batch sizes = {0, 0, res.offsets, NULL, NULL, 0, res.pairs};
        grove_join_batch all = {0, res.nq, res.offsets, res.indices, res.distances, 0, res.pairs};
        if (s == GROVE_OK && res.nq > 0 && on_batch(&a->sink, &sizes)) s = GROVE_IO_ERROR;
        if (s == GROVE_OK && on_batch(&a->sink, &all)) s = GROVE_IO_ERROR;
        s = close_outputs(a, s);
    }
    grove_join_result_free(&res);
    return s;
}

static size_t query_count(const join_args *a) { return (a->queries.path ? &a->queries : &a->data)->points.n; }

static grove_status run(void *state, cli_run *run)
{
    join_args *a = state;
    const grove_points pts = a->data.points, *qp = a->queries.path ? &a->queries.points : NULL;
    size_t nq = query_count(a);
    run->fail_queries = a->queries.path;
    a->params.exclude_self = a->exclude_self;
    run->options.memory_budget = a->have_budget ? a->budget : default_budget();
    if (!cli_box_apply("join", &a->box, pts.d, &a->index)) return cli_run_usage(run);
    grove_status s = cli_device_take(&run->options, a->device);
    if (s != GROVE_OK) return s;
    double start = cli_now();
    grove_index *ix = NULL;
    bool distributed = grove_mpi_size(run->options.mpi) > 1;
    s = distributed ? GROVE_OK : grove_index_create(pts, &a->index, &run->options, &ix);
    a->index_seconds = cli_now() - start;
    a->sink.nq = nq;
    bool lead = grove_mpi_rank(run->options.mpi) == 0;
    if (s == GROVE_OK && a->verify && lead) {
        check_brute_init(&a->check, pts, qp, a->index.boxsize ? &a->box : NULL, a->params.eps, a->exclude_self,
                         a->verify);
        a->sink.check = &a->check;
    }
    /* Writing the offsets is file I/O, kept out of `seconds` like the
     * streamed outputs (sink.io_seconds). */
    double io_before = run->io_seconds;
    if (s == GROVE_OK && distributed) s = distributed_join(qp, a, run);
    else if (s == GROVE_OK && a->count_only) s = count_only(ix, qp, a, nq, run);
    else if (s == GROVE_OK) s = full_join(ix, qp, a, run);
    double io = a->sink.io_seconds + run->io_seconds - io_before;
    run->seconds = cli_now() - start - io;
    run->io_seconds = io_before + io;
    a->leaf = ix ? grove_index_leaf_size(ix) : a->index.leaf_size;
    a->dims = ix ? grove_index_dims(ix) : a->index.index_dims;
    grove_index_free(ix);
    /* Selectivity as RT-HiSS defines it: neighbours per query besides the
     * query itself. */
    double self_pairs = !a->queries.path && !a->exclude_self ? (double)nq : 0;
    a->selectivity = nq ? ((double)a->pairs_found - self_pairs) / (double)nq : 0;
    return s;
}

static void summary(void *state, const cli_run *run)
{
    const join_args *a = state;
    printf("join: %zu points in %zu dims, %zu %s, eps %.9g -> %lld pairs (selectivity %.1f) in %.3f s "
           "(index %.3f s) on %d thread%s%s\n",
           a->data.points.n, a->data.points.d, query_count(a), a->queries.path ? "queries" : "self-queries",
           a->params.eps, (long long)a->pairs_found, a->selectivity, run->seconds, a->index_seconds, run->threads,
           run->threads == 1 ? "" : "s", a->count_only ? ", counted only" : "");
}

static bool verdict(void *state, const cli_run *run)
{
    const join_args *a = state;
    return !a->sink.check || check_brute_report(&a->check, "join", run->common.quiet || run->common.json);
}

static void json(void *state, const cli_run *run, cli_json *j)
{
    const join_args *a = state;
    cli_json_points(j, &a->data.points);
    cli_json_header_line(j, "header_line", &a->data.info);
    cli_json_int(j, "nq", (long long)query_count(a));
    cli_json_header_line(j, "queries_header_line", &a->queries.info);
    cli_json_num(j, "eps", a->params.eps);
    cli_json_bool(j, "self_join", a->queries.path == NULL);
    cli_json_bool(j, "exclude_self", a->exclude_self);
    cli_json_bool(j, "count_only", a->count_only);
    cli_json_bool(j, "periodic", a->index.boxsize != NULL);
    cli_json_str(j, "device", cli_device_name(run->options.device));
    cli_json_int(j, "pairs", (long long)a->pairs_found);
    cli_json_num(j, "selectivity", a->selectivity);
    cli_json_num(j, "index_seconds", a->index_seconds);
    cli_json_int(j, "batches", (long long)a->sink.batches);
    cli_json_int(j, "memory_budget", (long long)run->options.memory_budget);
    cli_json_int(j, "leaf_size", (long long)a->leaf);
    cli_json_int(j, "index_dims", (long long)a->dims);
    cli_ranks_json(&a->ranks, run->options.mpi, j);
}

static void release(void *state)
{
    join_args *a = state;
    free(a->sink.scratch);
    cli_ranks_free(&a->ranks);
}

int cmd_join(int argc, char **argv)
{
    static const cli_command command = {"join", usage, check, run, summary, verdict, json, release};
    join_args a;
    memset(&a, 0, sizeof a);
    grove_join_params_init(&a.params);
    grove_index_params_init(&a.index);
    const cli_opt opts[] = {
        {"DATA", OPT_POINTS, &a.data, NULL, CLI_ANY},
        {"--eps", OPT_DOUBLE, &a.params.eps, &a.have_eps, CLI_AT_LEAST(0)},
        {"--queries", OPT_POINTS, &a.queries, NULL, CLI_ANY},
        {"--exclude-self", OPT_FLAG, &a.exclude_self, NULL, CLI_ANY},
        {"--count-only", OPT_FLAG, &a.count_only, NULL, CLI_ANY},
        {"--memory-budget", OPT_BYTES, &a.budget, &a.have_budget, CLI_ANY},
        {"--offsets", OPT_NPY, &a.offsets, NULL, CLI_ANY},
        {"--indices", OPT_NPY, &a.indices, NULL, CLI_ANY},
        {"--distances", OPT_NPY, &a.distances, NULL, CLI_ANY},
        {"--pairs", OPT_NPY, &a.pairs, NULL, CLI_ANY},
        {"--leaf-size", OPT_SIZE, &a.index.leaf_size, NULL, CLI_BETWEEN(0, GROVE_INDEX_LEAF_SIZE_MAX)},
        {"--index-dims", OPT_SIZE, &a.index.index_dims, NULL, CLI_ANY},
        {"--verify", OPT_SIZE, &a.verify, NULL, CLI_ANY},
        {"--box", OPT_BOX, &a.box, NULL, CLI_ANY},
        CLI_DEVICE_OPT(&a.device),
    };
    return cli_command_main(&command, &a, opts, sizeof opts / sizeof opts[0], argc, argv);
}
