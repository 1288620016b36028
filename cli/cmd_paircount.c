/* grove paircount DATA --bins EDGES [--randoms R] [--box L] [--weights W] [--pimax P] [--out C.npy] [--json] */
#include "command.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: grove paircount DATA --bins EDGES [--randoms R] [--box L] [--weights W] [--pimax P] [--out C.npy]\n"
    "                       [--threads N] [--json] [--quiet]\n"
    "Pair counts in bins of separation, Corrfunc's conventions (docs/paircount.md): DD, each pair of\n"
    "DATA twice and each point with itself at r = 0 when the first edge is 0; with --randoms also DR\n"
    "and RR, and the Landy-Szalay correlation function xi; in a periodic box without randoms xi\n"
    "against a uniform set (Corrfunc's theory.xi).\n"
    "  --bins EDGES     ascending bin edges: a comma list (0.1,0.2,0.5,1), a text file of one edge\n"
    "                   a line or of Corrfunc's binfile rows 'low high', or a .npy of edges (or of\n"
    "                   (low, high) rows); bin i holds edges[i] <= r < edges[i + 1]\n"
    "  --randoms R      a random catalogue of the same volume: DR, RR and xi\n"
    "  --box L | Lx,Ly,..  periodic box [0, L) in every dimension, or one length per dimension\n"
    "                   (0 = not periodic): minimum-image separations; points outside are refused\n"
    "  --weights W      a weight per point of DATA (.npy of n values, or a text column): each pair\n"
    "                   weighs the product of its weights (randoms weigh 1)\n"
    "  --pimax P        bins in (rp, pi) instead: rp over every dimension but the last, pi along\n"
    "                   the last in floor(P) bins of P / floor(P) (P >= 1); adds wp(rp)\n"
    "  --out C.npy      one float64 row per bin: lo, hi (of r or rp), [pi_lo, pi_hi], dd,\n"
    "                   [dd_weighted], [dr, rr], [dr_weighted, rr_weighted], [xi], [wp (its rp bin's)];\n"
    "                   --json names them in 'columns'\n";

/* The most table columns: lo, hi, pi_lo, pi_hi, dd, ddw, dr, rr, drw, rrw, xi, wp. */
#define PC_COLUMNS 12

typedef struct paircount_args {
    cli_file data, randoms, weights_file, out;
    const char *bins;
    cli_box box;
    double pimax;
    bool have_pimax;
    grove_paircount_params params;
    double *edges;
    const double *weights; /* weights_file's values */
    size_t nedges, nbins, nrp, npi;
    /* DD, DR, RR: counts and weighted sums (NULL where not counted). */
    int64_t *npairs[3];
    double *weighted[3];
    double *xi, *wp;
    grove_points data_points, random_points;
    grove_array converted; /* a set converted to the other's float64, when their dtypes differ */
    const char *columns[PC_COLUMNS];
    size_t ncolumns;
    cli_ranks ranks; /* on rank 0 of a distributed run */
} paircount_args;

static bool check(void *state)
{
    const paircount_args *a = state;
    if (!a->data.path || !a->bins) {
        cli_error("paircount", "DATA and --bins are required (see --help)");
        return false;
    }
    if (a->have_pimax && !(a->pimax == 0 || a->pimax >= 1)) {
        cli_error("paircount", "--pimax: expected a number >= 1 (floor(P) pi bins), got %g", a->pimax);
        return false;
    }
    return true;
}

/* --bins as a comma list of numbers: *list set when the text is one (a
 * value that is not one is a file's name); NULL, or the usage error. */
static const char *parse_list(const char *text, double **out, size_t *count, bool *list)
{
    *list = false;
    size_t n = 1;
    for (const char *c = text; *c; c++) n += *c == ',';
    double *v = malloc(n * sizeof *v);
    if (!v) return "out of memory";
    const char *p = text;
    for (size_t i = 0; i < n; i++) {
        char *end;
        const char *why = cli_parse_number(p, &end, &v[i]);
        if (end == p || (*end != ',' && *end != '\0')) {
            free(v);
            return NULL; /* not a list: a file */
        }
        if (why) {
            free(v);
            return why;
        }
        p = end + 1;
    }
    *out = v;
    *count = n;
    *list = true;
    return NULL;
}

/* Value i of a numeric array, as a double. */
static double value_at(const grove_array *a, size_t i)
{
    switch (a->dtype) {
    case GROVE_FLOAT32: return ((const float *)a->data)[i];
    case GROVE_INT32: return ((const int32_t *)a->data)[i];
    case GROVE_INT64: return (double)((const int64_t *)a->data)[i];
    default: return ((const double *)a->data)[i];
    }
}

/* Edges from a file's array: a column or a row of edges, or Corrfunc's
 * binfile rows (low, high), which must join up. */
static grove_status edges_of(const char *path, const grove_array *a, double **out, size_t *count)
{
    size_t rows = a->shape[0], cols = a->ndim == 2 ? a->shape[1] : 1;
    bool binfile = cols == 2 && rows > 1;
    if (cols > 2 && rows > 1) {
        cli_note_error("%s: expected one edge a line, or 'low high' rows (Corrfunc's binfile), got %zu columns", path,
                       cols);
        return GROVE_INVALID_ARGUMENT;
    }
    size_t n = binfile ? rows + 1 : rows * cols;
    double *v = malloc((n ? n : 1) * sizeof *v);
    if (!v) return GROVE_OUT_OF_MEMORY;
    for (size_t i = 0; i < n; i++) v[i] = !binfile ? value_at(a, i) : i == 0 ? value_at(a, 0) : value_at(a, 2 * i - 1);
    for (size_t r = 1; binfile && r < rows; r++)
        if (value_at(a, 2 * r) != v[r]) {
            cli_note_error("%s: bin %zu starts at %.17g, not where bin %zu ends (%.17g): bins must join up", path,
                           r + 1, value_at(a, 2 * r), r, v[r]);
            free(v);
            return GROVE_INVALID_ARGUMENT;
        }
    *out = v;
    *count = n;
    return GROVE_OK;
}

/* The edges, from the list or the file --bins names; a bad list is a
 * usage error, a bad file a failure naming it. */
static grove_status read_edges(paircount_args *a, cli_run *run)
{
    bool list;
    const char *why = parse_list(a->bins, &a->edges, &a->nedges, &list);
    if (why) {
        cli_error("paircount", "--bins %s: %s", a->bins, why);
        return cli_run_usage(run);
    }
    const char *source = a->bins;
    if (!list) {
        grove_array file;
        memset(&file, 0, sizeof file);
        grove_status s = cli_ends_with(source, ".npy") ? grove_npy_read(source, &file) : grove_csv_read(source, &file);
        if (s == GROVE_OK && (file.dtype == GROVE_INT32 || file.dtype == GROVE_INT64 || file.dtype == GROVE_FLOAT32 ||
                              file.dtype == GROVE_FLOAT64))
            s = edges_of(source, &file, &a->edges, &a->nedges);
        else if (s == GROVE_OK) {
            cli_note_error("%s: expected numbers, got %s", source, grove_dtype_name(file.dtype));
            s = GROVE_INVALID_ARGUMENT;
        }
        grove_array_free(&file);
        if (s != GROVE_OK) {
            run->fail_path = source;
            return s;
        }
    }
    a->params.edges = a->edges;
    a->params.nedges = a->nedges;
    a->params.pimax = a->pimax;
    a->nbins = grove_paircount_bins(&a->params);
    if (a->nbins) return GROVE_OK;
    /* "paircount: edge 2 is -1; ..." about the list or the file. */
    const char *msg = grove_last_error(), *colon = strstr(msg, ": ");
    if (list) {
        cli_error("paircount", "--bins %s: %s", a->bins, colon ? colon + 2 : msg);
        return cli_run_usage(run);
    }
    cli_note_error("%s: %s", source, colon ? colon + 2 : msg);
    return GROVE_INVALID_ARGUMENT;
}

/* --weights: one finite value per point of DATA. */
static grove_status read_weights(paircount_args *a, cli_run *run)
{
    if (!a->weights_file.path) return GROVE_OK;
    double t0 = cli_now();
    grove_status s = cli_weights_load(&a->weights_file, a->data_points.n, a->data.path);
    run->io_seconds += cli_now() - t0;
    if (s == GROVE_OK) a->params.weights1 = a->weights = a->weights_file.array.data;
    return s;
}

/* DATA and R counted in one dtype: float64 when either is (the other
 * converted, exactly). */
static grove_status same_dtype(paircount_args *a)
{
    a->data_points = a->data.points;
    a->random_points = a->randoms.points;
    if (!a->randoms.path || a->data_points.dtype == a->random_points.dtype) return GROVE_OK;
    grove_points *f = a->data_points.dtype == GROVE_FLOAT32 ? &a->data_points : &a->random_points;
    grove_status s = grove_array_create(&a->converted, GROVE_FLOAT64, f->n, f->d);
    if (s != GROVE_OK) return s;
    double *x = a->converted.data;
    size_t stride = f->stride ? f->stride : f->d * sizeof(float);
    for (size_t i = 0; i < f->n; i++)
        for (size_t j = 0; j < f->d; j++) x[i * f->d + j] = ((const float *)((const char *)f->data + i * stride))[j];
    *f = grove_points_f64(x, f->n, f->d);
    return GROVE_OK;
}

/* One set of pairs: k = 0 DD, 1 DR, 2 RR. Under mpirun each rank counts
 * with its block of the rows of DATA and R, and every rank gets the whole
 * counts (docs/mpi.md); alone the block is all. */
static grove_status count(paircount_args *a, int k, grove_options *options)
{
    grove_paircount_params p = a->params;
    bool weighted = a->weights != NULL;
    a->npairs[k] = calloc(a->nbins, sizeof *a->npairs[k]);
    a->weighted[k] = weighted ? calloc(a->nbins, sizeof *a->weighted[k]) : NULL;
    if (!a->npairs[k] || (weighted && !a->weighted[k])) return GROVE_OUT_OF_MEMORY;
    size_t first, first_r;
    grove_points data = cli_block(a->data_points, options->mpi, &first);
    grove_points randoms = cli_block(a->random_points, options->mpi, &first_r);
    p.weights1 = k == 2 || !a->weights || !data.n ? NULL : a->weights + first; /* randoms weigh 1 */
    return grove_paircount(k == 2 ? randoms : data, k == 1 ? &randoms : NULL, &p, a->npairs[k], a->weighted[k],
                           options);
}

/* The pair sums an estimator takes: weighted, or the counts. */
static double *sums(const paircount_args *a, int k)
{
    if (!a->npairs[k]) return NULL;
    if (a->weighted[k]) return a->weighted[k];
    double *s = malloc(a->nbins * sizeof *s);
    for (size_t i = 0; s && i < a->nbins; i++) s[i] = (double)a->npairs[k][i];
    return s;
}

/* xi (and wp): with randoms, or in a box periodic in every dimension. */
static grove_status estimate(paircount_args *a)
{
    bool box = a->box.count > 0;
    for (size_t j = 0; j < a->box.count; j++) box = box && a->box.len[j] > 0;
    if (!a->randoms.path && !box) return GROVE_OK;
    size_t n = a->data_points.n, nr = a->random_points.n, d = a->data_points.d;
    grove_paircount_totals data = grove_paircount_totals_of(a->weights, n), rand = grove_paircount_totals_of(NULL, nr);
    double *s[3] = {sums(a, 0), sums(a, 1), sums(a, 2)};
    a->xi = malloc(a->nbins * sizeof *a->xi);
    a->wp = a->npi > 0 && a->pimax > 0 ? malloc(a->nrp * sizeof *a->wp) : NULL;
    grove_status st = s[0] && a->xi && (a->randoms.path ? s[1] && s[2] : true) && (a->pimax == 0 || a->wp)
                          ? GROVE_OK
                          : GROVE_OUT_OF_MEMORY;
    if (st == GROVE_OK) st = grove_paircount_xi(&a->params, d, data, rand, s[0], s[1], s[2], a->xi);
    if (st == GROVE_OK && a->wp) st = grove_paircount_wp(&a->params, d, data, rand, s[0], s[1], s[2], a->wp);
    for (int k = 0; k < 3; k++)
        if (s[k] != a->weighted[k]) free(s[k]);
    return st;
}

/* The --out table, its columns named in a->columns. */
static grove_status table(paircount_args *a)
{
    const char **c = a->columns;
    size_t nc = 0;
    c[nc++] = "lo";
    c[nc++] = "hi";
    if (a->pimax > 0) {
        c[nc++] = "pi_lo";
        c[nc++] = "pi_hi";
    }
    c[nc++] = "dd";
    if (a->weights) c[nc++] = "dd_weighted";
    if (a->randoms.path) {
        c[nc++] = "dr";
        c[nc++] = "rr";
        if (a->weights) {
            c[nc++] = "dr_weighted";
            c[nc++] = "rr_weighted";
        }
    }
    if (a->xi) c[nc++] = "xi";
    if (a->wp) c[nc++] = "wp";
    a->ncolumns = nc;
    if (!a->out.path) return GROVE_OK;
    grove_status s = grove_array_create(&a->out.array, GROVE_FLOAT64, a->nbins, nc);
    if (s != GROVE_OK) return s;
    double dpi = a->pimax > 0 ? a->pimax / (double)a->npi : 0;
    for (size_t b = 0; b < a->nbins; b++) {
        size_t i = b / a->npi, j = b % a->npi, k = 0;
        double *row = (double *)a->out.array.data + b * nc;
        row[k++] = a->edges[i];
        row[k++] = a->edges[i + 1];
        if (a->pimax > 0) {
            row[k++] = (double)j * dpi;
            row[k++] = (double)(j + 1) * dpi;
        }
        row[k++] = (double)a->npairs[0][b];
        if (a->weights) row[k++] = a->weighted[0][b];
        if (a->randoms.path) {
            row[k++] = (double)a->npairs[1][b];
            row[k++] = (double)a->npairs[2][b];
            if (a->weights) {
                row[k++] = a->weighted[1][b];
                row[k++] = a->weighted[2][b];
            }
        }
        if (a->xi) row[k++] = a->xi[b];
        if (a->wp) row[k++] = a->wp[i];
    }
    return GROVE_OK;
}

static grove_status run(void *state, cli_run *run)
{
    paircount_args *a = state;
    grove_status s = same_dtype(a);
    if (s != GROVE_OK) return s;
    if (!cli_box_apply("paircount", &a->box, a->data_points.d, &a->params.index)) return cli_run_usage(run);
    s = read_edges(a, run);
    if (s == GROVE_OK) s = read_weights(a, run);
    if (s != GROVE_OK) return s;
    a->npi = a->pimax > 0 ? (size_t)a->pimax : 1;
    a->nrp = a->nedges - 1;
    double start = cli_now();
    for (int k = 0; s == GROVE_OK && k < (a->randoms.path ? 3 : 1); k++) {
        s = count(a, k, &run->options);
        /* A failure of RR is about the randoms; of DR, about both. */
        if (k == 2) run->fail_path = a->randoms.path;
    }
    if (s == GROVE_OK) {
        run->fail_path = a->data.path;
        s = estimate(a);
    }
    run->seconds = cli_now() - start;
    if (s == GROVE_OK) s = table(a);
    /* Every rank has the counts; rank 0 writes them. */
    const grove_mpi *mpi = run->options.mpi;
    size_t first;
    if (s == GROVE_OK && grove_mpi_size(mpi) > 1)
        s = cli_ranks_gather(&a->ranks, mpi, cli_block(a->data_points, mpi, &first).n);
    return s == GROVE_OK && grove_mpi_rank(mpi) == 0 ? cli_run_stage(run) : s;
}

static int64_t total(const int64_t *n, size_t count)
{
    int64_t t = 0;
    for (size_t i = 0; i < count; i++) t += n[i];
    return t;
}

static void summary(void *state, const cli_run *run)
{
    const paircount_args *a = state;
    printf("paircount: %zu points in %zu dims, %zu bins in %s%s -> %lld DD pairs", a->data_points.n,
           a->data_points.d, a->nbins, a->pimax > 0 ? "(rp, pi)" : "r", a->box.count ? " (periodic)" : "",
           (long long)total(a->npairs[0], a->nbins));
    if (a->randoms.path)
        printf(", %lld DR, %lld RR (%zu randoms)", (long long)total(a->npairs[1], a->nbins),
               (long long)total(a->npairs[2], a->nbins), a->random_points.n);
    printf(" in %.3f s on %d thread%s\n", run->seconds, run->threads, run->threads == 1 ? "" : "s");
}

static void json_counts(cli_json *j, const char *key, const int64_t *n, size_t count)
{
    long long *v = malloc((count ? count : 1) * sizeof *v);
    if (!v) return;
    for (size_t i = 0; i < count; i++) v[i] = (long long)n[i];
    cli_json_ints(j, key, v, count);
    free(v);
}

static void json(void *state, const cli_run *run, cli_json *j)
{
    const paircount_args *a = state;
    cli_json_points(j, &a->data_points);
    cli_json_header_line(j, "header_line", &a->data.info);
    cli_json_nums(j, "edges", a->edges, a->nedges);
    cli_json_int(j, "nbins", (long long)a->nbins);
    cli_json_num(j, "pimax", a->pimax);
    if (a->pimax > 0) cli_json_int(j, "pi_bins", (long long)a->npi);
    cli_json_bool(j, "periodic", a->box.count > 0);
    json_counts(j, "npairs", a->npairs[0], a->nbins);
    if (a->weights) cli_json_nums(j, "weighted", a->weighted[0], a->nbins);
    if (a->randoms.path) {
        cli_json_int(j, "n_randoms", (long long)a->random_points.n);
        json_counts(j, "dr_npairs", a->npairs[1], a->nbins);
        json_counts(j, "rr_npairs", a->npairs[2], a->nbins);
        if (a->weights) {
            cli_json_nums(j, "dr_weighted", a->weighted[1], a->nbins);
            cli_json_nums(j, "rr_weighted", a->weighted[2], a->nbins);
        }
    }
    if (a->xi) cli_json_nums(j, "xi", a->xi, a->nbins);
    if (a->wp) cli_json_nums(j, "wp", a->wp, a->nrp);
    cli_json_strs(j, "columns", a->columns, a->ncolumns);
    cli_ranks_json(&a->ranks, run->options.mpi, j);
}

static void release(void *state)
{
    paircount_args *a = state;
    free(a->edges);
    for (int k = 0; k < 3; k++) {
        free(a->npairs[k]);
        free(a->weighted[k]);
    }
    free(a->xi);
    free(a->wp);
    grove_array_free(&a->converted);
    cli_ranks_free(&a->ranks);
}

int cmd_paircount(int argc, char **argv)
{
    static const cli_command command = {"paircount", usage, check, run, summary, NULL, json, release};
    paircount_args a;
    memset(&a, 0, sizeof a);
    grove_paircount_params_init(&a.params);
    const cli_opt opts[] = {
        {"DATA", OPT_POINTS, &a.data, NULL, CLI_ANY},
        {"--bins", OPT_STRING, &a.bins, NULL, CLI_ANY},
        {"--randoms", OPT_POINTS, &a.randoms, NULL, CLI_ANY},
        {"--box", OPT_BOX, &a.box, NULL, CLI_ANY},
        {"--weights", OPT_INPUT, &a.weights_file, NULL, CLI_ANY},
        {"--pimax", OPT_DOUBLE, &a.pimax, &a.have_pimax, CLI_AT_LEAST(0)},
        {"--out", OPT_NPY, &a.out, NULL, CLI_ANY},
    };
    return cli_command_main(&command, &a, opts, sizeof opts / sizeof opts[0], argc, argv);
}
