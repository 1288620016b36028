/* Shared pieces of the grove command line: option parsing, file checks,
 * staged outputs, timing, the --json summary and the progress bar, which
 * the command skeleton (command.h) puts together. Commands (cmd_*.c) use
 * command.h, this header and grove.h. */
#ifndef GROVE_CLI_H
#define GROVE_CLI_H

#include "grove.h"

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Exit statuses: 0 success, 1 a failure while running, 2 a usage error
 * (a bad flag, a bad flag value, paths that cannot work), 128 + the
 * signal after SIGINT (130) or SIGTERM (143). */
enum { CLI_EXIT_OK = 0, CLI_EXIT_FAIL = 1, CLI_EXIT_USAGE = 2 };

typedef enum {
    OPT_FLAG,   /* bool, no value */
    OPT_STRING, /* const char * */
    OPT_SIZE,   /* size_t, a whole number >= 0 */
    OPT_INT,    /* int, a whole number (may be negative) */
    OPT_U64,    /* uint64_t */
    OPT_DOUBLE, /* finite double */
    OPT_BYTES,  /* size_t with optional K/M/G suffix (powers of 1024) */
    OPT_DEVICE, /* grove_device: cpu, cuda, opencl or auto (CLI_DEVICE_OPT) */
    /* Files, each a cli_file (below); the command skeleton (command.h)
     * checks them before any work by these kinds: */
    OPT_POINTS, /* input points (.npy, text or raw), loaded by the skeleton */
    OPT_INPUT,  /* another input file, read by the command */
    OPT_NPY,    /* a .npy output */
    OPT_SVG,    /* an .svg output */
    OPT_TABLE,  /* a table written as .npy, as .csv text or as HDF5, by its suffix */
    OPT_BOX     /* --box L or Lx,Ly,...: a cli_box, parsed after the file checks */
} cli_opt_kind;

/* The values a number option accepts besides its kind's: lo..hi
 * inclusive, lo itself excluded when `above`; `set` false: any. */
typedef struct cli_range {
    bool set, above;
    double lo, hi;
} cli_range;
#define CLI_ANY {false, false, 0, 0}
#define CLI_AT_LEAST(x) {true, false, (x), HUGE_VAL}
#define CLI_ABOVE(x) {true, true, (x), HUGE_VAL}
#define CLI_BETWEEN(lo, hi) {true, false, (lo), (hi)}

/* A file a command names: the path given (NULL: none) and the array read
 * from it or to be written to it (freed by the skeleton). */
typedef struct cli_file {
    const char *path;
    grove_array array;
    grove_points points;  /* OPT_POINTS: the loaded points */
    grove_load_info info; /* OPT_POINTS: the header line of a text file */
} cli_file;

/* An option, or a positional argument when its name does not start with
 * '-' ("DATA": its name in messages); positional arguments are taken in
 * the order of the table. */
typedef struct cli_opt {
    const char *name;  /* "--levels" (a second spelling may follow after '|': "-o|--output") */
    cli_opt_kind kind;
    void *dest;
    bool *seen;        /* optional: set when the option was given */
    cli_range range;   /* a value outside it is a usage error */
} cli_opt;

/* --device cpu|cuda|opencl|auto, for the commands with a device path
 * (docs/gpu.md), into a grove_device the command puts in its options. */
#define CLI_DEVICE_OPT(dest) {"--device", OPT_DEVICE, (dest), NULL, CLI_ANY}
/* Its spelling of a grove_device ("cpu", "cuda", "opencl", "auto"). */
const char *cli_device_name(grove_device device);
#define CLI_DEVICE_HELP                                                                                      \
    "  --device D          where to compute: cpu (default), cuda, opencl, or auto (a GPU when one is\n"     \
    "                      present and the problem is large enough); see grove info and docs/gpu.md\n"

/* Flags every command takes (DESIGN.md): filled by cli_parse. */
typedef struct cli_common {
    int threads;        /* --threads N (0 = all) */
    bool json;          /* --json */
    bool quiet;         /* --quiet */
    int progress;       /* --progress / --no-progress: 1, 0, or -1 = auto (terminal) */
    size_t dims;        /* --dims D for raw input files */
    const char *dtype;  /* --dtype float32|float64 for raw input files */
    unsigned types;     /* --types T[,T...]: a snapshot's particle types (bit t), 0 = all */
} cli_common;

/* Parse argv (after the command name) against opts plus the common flags.
 * Prints a usage error naming the command and returns false on any
 * problem. */
bool cli_parse(const char *command, int argc, char **argv, const cli_opt *opts, size_t nopts, cli_common *common);

/* strtod of text into *v, *end just after the number (at text when there
 * is none); returns NULL when it is a finite double (subnormals included),
 * else what is wrong, for "--flag: TEXT <reason>": "is not a number", "is
 * not finite", beyond the range of a double, or rounding to 0. */
const char *cli_parse_number(const char *text, char **end, double *v);

/* True (after printing usage to stdout) when the first argument asks for
 * help (--help or -h); the command then exits with CLI_EXIT_OK. */
bool cli_help(int argc, char **argv, const char *usage);

/* Print "grove COMMAND: message" to stderr (printf-style): the one line
 * of a usage error or a failure. Under mpirun only rank 0 prints: every
 * rank fails alike (the library's agreed failures carry the failing
 * rank's message to every rank), so its line is the run's. */
void cli_error(const char *command, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Keep the message of a failure while running (one line, without the
 * "grove COMMAND: " prefix) for cli_fail to print. Only the first is kept:
 * what fails after it follows from it. */
void cli_note_error(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
/* Print the one line of a failed run and return its exit status: after a
 * signal "interrupted by SIGINT" (128 + the signal); otherwise the noted
 * message, or else the library's last error (CLI_EXIT_FAIL), which is
 * prefixed with the input file it is about unless it names it: the queries
 * file when the message is about the queries ("queries: row 3, ..."), else
 * the data file (either may be NULL: none). */
int cli_fail(const char *command, const char *data, const char *queries, grove_status status);

/* SIGINT and SIGTERM: the first raises the cancel flag that cli_options
 * hands to the library (which stops between batches or steps), so the
 * command removes its temporaries and exits with 128 + the signal; a
 * second signal ends grove at once (the default action). */
void cli_signals_install(void);
/* The signal received so far (SIGINT or SIGTERM), or 0. */
int cli_interrupted(void);
/* main's exit status for a command that returned rc: 128 + the signal
 * after one (printing the interrupted line if the command did not). */
int cli_exit_status(const char *command, int rc);

/* The file options of opts (those given), checked before any work: a
 * usage error (printed; false) for an output whose suffix is not the format
 * grove writes there (.npy, .svg, .npy or .csv; any name for a character
 * device or FIFO), an output grove cannot put into place (a folder, block
 * device or socket, a folder it cannot write in), two outputs at one file
 * (but for a character device: /dev/null may take several), or an output
 * that is an input: the same file (device and inode) when it exists, or
 * the same path once "." and ".." and the folder's links are resolved.
 * Both flags are named. */
bool cli_check_paths(const char *command, const cli_opt *opts, size_t nopts);
/* The cli_file of a file option, NULL for other kinds. */
cli_file *cli_opt_file(const cli_opt *opt);
/* True when path ends in suffix, letter for letter. */
bool cli_ends_with(const char *path, const char *suffix);

/* --box L or --box Lx,Ly,...: periodic box lengths (finite, >= 0; 0 =
 * that dimension unbounded). cli_box_parse (of box->text, NULL: no box)
 * and cli_box_apply (the count against the points' d, into the index
 * params, which then point into box) print a usage error and return false
 * on a bad value or count. */
typedef struct cli_box {
    const char *text; /* as given */
    double *len;
    size_t count;
} cli_box;
bool cli_box_parse(const char *command, cli_box *box);
bool cli_box_apply(const char *command, const cli_box *box, size_t d, grove_index_params *params);
void cli_box_free(cli_box *box);

/* Options for library calls from the common flags (threads, progress bar). */
grove_options cli_options(const cli_common *common);
/* Put --device's choice in options; a device that cannot run here (not
 * built, no driver, no device) is noted in one line saying why and
 * refused (GROVE_UNSUPPORTED) before any work. */
grove_status cli_device_take(grove_options *options, grove_device device);

/* The MPI context of this run (main() sets it from grove_mpi_launch; NULL
 * when no launcher started grove), which cli_options puts in the options.
 * Under mpirun every rank runs the command; only rank 0 prints summaries
 * and --json. */
void cli_mpi_set(grove_mpi *mpi);
const grove_mpi *cli_mpi(void);

/* Monotonic wall clock in seconds. */
double cli_now(void);
/* Peak resident set size of this process in bytes. */
size_t cli_peak_rss(void);
/* The process's minor page faults so far (first touches of fresh memory). */
long cli_page_faults(void);

/* Outputs are staged: each is written under a temporary name next to its
 * destination, and only cli_outputs_commit puts them all into place
 * (commit.c), so a failed run leaves no part of the set: files are renamed
 * over their destinations, the replaced ones kept until all are placed and
 * restored on a failure; a destination that is a character device or FIFO
 * (/dev/null, a pipe) is staged in the temporary folder and written
 * through at the end, never renamed over. cli_outputs_abort removes the
 * temporaries. */
typedef struct cli_output {
    char *path;      /* the destination, as given */
    char *temp;      /* the staged file */
    char *old;       /* while committing: what path held, kept to put back */
    bool old_moved;  /* old is path's file renamed (no second link) */
    bool through;    /* path is a character device or FIFO */
    bool placed;     /* while committing: renamed into place */
} cli_output;
typedef struct cli_outputs {
    size_t count;
    cli_output out[16];
    /* When set, a wait for a FIFO's reader is said on stderr under this
     * command's name (the skeleton sets it when progress is shown). */
    const char *command;
} cli_outputs;
grove_status cli_outputs_stage(cli_outputs *outs, const char *path, const grove_array *array);
/* A staged text output: *f is open for writing on its temporary file;
 * close it with cli_file_close before committing or aborting. */
grove_status cli_outputs_text(cli_outputs *outs, const char *path, FILE **f);
/* A staged output that a writer of its own (a library call) creates at
 * *temp, a new name beside path (or in the temporary folder). */
grove_status cli_outputs_file(cli_outputs *outs, const char *path, const char **temp);
/* Flush and close a file written for the output `path`; an error is noted
 * (cli_note_error) naming path. */
grove_status cli_file_close(FILE *f, const char *path);
/* Put every staged output into place; after a signal, abort instead
 * (GROVE_CANCELLED). Both free the list. */
grove_status cli_outputs_commit(cli_outputs *outs);
void cli_outputs_abort(cli_outputs *outs);
/* Write the staged file `from` into the character device or FIFO at path
 * (commit.c's last step): waits for a FIFO's reader and on a full pipe
 * stop at a signal (GROVE_CANCELLED); a failure is noted naming path. */
grove_status cli_write_through(const char *from, const char *path, const char *command);
/* Note "cannot WHAT PATH: <strerror(errno)>" and return GROVE_IO_ERROR. */
grove_status cli_io_fail(const char *path, const char *what);
/* The temporary folder ($TMPDIR, else /tmp): where outputs bound for
 * character devices and FIFOs are staged. */
const char *cli_temp_folder(void);
/* path with suffix added to its last part, that part cut where the whole
 * name would be longer than its folder allows (so every name the file
 * system takes has temporaries); malloc'd, NULL when out of memory. */
char *cli_temp_beside(const char *path, const char *suffix);
/* Remove the temporaries that runs which have ended left beside path
 * (PATH.grove-partial.PID, PATH.grove-old.PID and the library's
 * PATH.tmp.PID.N, PATH cut as cli_temp_beside cuts it, for process ids
 * that no process holds now). With `prefix`, those of every file in path's
 * folder whose name starts with path's last part. Staging an output does
 * this for its path. */
void cli_remove_stale(const char *path, bool prefix);

/* A staged .npy output written in pieces (rows of cols values, cols 0 for
 * 1-D) when the row count is not known at the start: the header is
 * rewritten with the final count by cli_stream_close, which must be called
 * (even on failure) before committing or aborting the outputs. */
typedef struct cli_stream {
    FILE *f;
    grove_dtype dtype;
    size_t cols, rows, header_len;
    const char *final_path;
} cli_stream;
grove_status cli_outputs_stream(cli_outputs *outs, const char *path, grove_dtype dtype, size_t cols, cli_stream *st);
grove_status cli_stream_write(cli_stream *st, const void *data, size_t rows);
grove_status cli_stream_close(cli_stream *st);
/* Before streams grow to rows[k] rows each: refuse (GROVE_IO_ERROR, noted)
 * when the file systems they are on have less room free than they still
 * need, saying how much is needed and how much is free. Streams without a
 * file are skipped. */
grove_status cli_streams_check_space(cli_stream *const *streams, const size_t *rows, size_t count);

/* The --json summary: one object on one line. Keys are added in order. */
typedef struct cli_json {
    char *text;
    size_t len, cap;
} cli_json;
void cli_json_begin(cli_json *j, const char *command);
void cli_json_str(cli_json *j, const char *key, const char *value);
void cli_json_num(cli_json *j, const char *key, double value);
void cli_json_int(cli_json *j, const char *key, long long value);
void cli_json_bool(cli_json *j, const char *key, bool value);
/* An array of integers, of numbers, of strings. */
void cli_json_ints(cli_json *j, const char *key, const long long *values, size_t n);
void cli_json_nums(cli_json *j, const char *key, const double *values, size_t n);
void cli_json_strs(cli_json *j, const char *key, const char *const *values, size_t n);
/* The input's sizes: n, d and dtype. */
void cli_json_points(cli_json *j, const grove_points *points);
/* For a text input, `key`: the line taken as its header, or null. */
void cli_json_header_line(cli_json *j, const char *key, const grove_load_info *info);
/* Adds seconds, io_seconds, threads and peak_rss_bytes, closes the object,
 * prints it as the last line of stdout and frees it. */
void cli_json_finish(cli_json *j, double seconds, double io_seconds, int threads);

/* Distributed runs (cli/ranks.c): this rank's block of p's rows
 * (grove_mpi_block; all of them alone), its first row in *first. */
grove_points cli_block(grove_points p, const grove_mpi *mpi, size_t *first);
/* The names of the grove_mpi_phase values in --json keys (rank_seconds_NAME). */
extern const char *const cli_mpi_phases[GROVE_MPI_PHASES];
/* Per-rank counts of a distributed run, on rank 0 after cli_ranks_gather
 * (collective: every rank's rows, bytes sent and peak resident memory so
 * far). cli_ranks_json writes `ranks` and, when gathered, `rank_points`,
 * `rank_bytes_sent` and `rank_peak_rss_bytes`. */
typedef struct cli_ranks {
    int ranks;
    int64_t *points, *bytes, *rss; /* one allocation at points */
} cli_ranks;
grove_status cli_ranks_gather(cli_ranks *r, const grove_mpi *mpi, size_t points);
void cli_ranks_json(const cli_ranks *r, const grove_mpi *mpi, cli_json *j);
void cli_ranks_free(cli_ranks *r);

/* An input of one weight per point of data_path (n of them), read as
 * points are (.npy of float or integer values, or a text column; every
 * value finite): w->array becomes (n,) float64. A failure is noted in one
 * line naming w's file and, for a bad value, its row or line. */
grove_status cli_weights_load(cli_file *w, size_t n, const char *data_path);

/* Commands. */
int cmd_gen(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_balltree(int argc, char **argv);
int cmd_emst(int argc, char **argv);
int cmd_hdbscan(int argc, char **argv);
int cmd_gravity(int argc, char **argv);
int cmd_nbody(int argc, char **argv);
int cmd_join(int argc, char **argv);
int cmd_knn(int argc, char **argv);
int cmd_dbscan(int argc, char **argv);
int cmd_fof(int argc, char **argv);
int cmd_paircount(int argc, char **argv);

#endif
