/* Shared pieces of the grove command line: option parsing, loading points,
 * staged outputs, timing, the --json summary and the progress bar. Commands
 * (cmd_*.c) use only this header and grove.h. */
#ifndef GROVE_CLI_H
#define GROVE_CLI_H

#include "grove.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Exit statuses: 0 success, 1 a failure while running, 2 a usage error. */
enum { CLI_EXIT_OK = 0, CLI_EXIT_FAIL = 1, CLI_EXIT_USAGE = 2 };

typedef enum {
    OPT_FLAG,   /* bool, no value */
    OPT_STRING, /* const char * */
    OPT_SIZE,   /* size_t, a whole number >= 0 */
    OPT_INT,    /* int, a whole number (may be negative) */
    OPT_U64,    /* uint64_t */
    OPT_DOUBLE, /* finite double */
    OPT_BYTES   /* size_t with optional K/M/G suffix (powers of 1024) */
} cli_opt_kind;

typedef struct cli_opt {
    const char *name;  /* "--levels" (a second spelling may follow after '|': "-o|--output") */
    cli_opt_kind kind;
    void *dest;
    bool *seen;        /* optional: set when the option was given */
} cli_opt;

/* Flags every command takes (DESIGN.md): filled by cli_parse. */
typedef struct cli_common {
    int threads;        /* --threads N (0 = all) */
    bool json;          /* --json */
    bool quiet;         /* --quiet */
    int progress;       /* --progress / --no-progress: 1, 0, or -1 = auto (terminal) */
    size_t dims;        /* --dims D for raw input files */
    const char *dtype;  /* --dtype float32|float64 for raw input files */
} cli_common;

/* Parse argv (after the command name) against opts plus the common flags.
 * Positional arguments are stored in positional[0..max_positional). Prints
 * a usage error naming the command and returns false on any problem. */
bool cli_parse(const char *command, int argc, char **argv, const cli_opt *opts, size_t nopts,
               const char **positional, size_t max_positional, size_t *npositional,
               cli_common *common);

/* True (after printing usage to stdout) when the first argument asks for
 * help (--help or -h); the command then exits with CLI_EXIT_OK. */
bool cli_help(int argc, char **argv, const char *usage);

/* Print "grove COMMAND: message" to stderr (printf-style). */
void cli_error(const char *command, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Print the library's last error for a failed call and return CLI_EXIT_FAIL. */
int cli_fail(const char *command, grove_status status);

/* Options for library calls from the common flags (threads, progress bar). */
grove_options cli_options(const cli_common *common);

/* Monotonic wall clock in seconds. */
double cli_now(void);
/* Peak resident set size of this process in bytes. */
size_t cli_peak_rss(void);

/* Load points (npy/csv/raw by extension, see grove_points_load). */
grove_status cli_load_points(const char *path, const cli_common *common, grove_array *out);

/* Outputs are staged: each array is written to a temporary name next to its
 * destination, and only cli_outputs_commit renames them all into place, so
 * a failed run leaves no partial output. cli_outputs_abort removes them. */
typedef struct cli_outputs {
    size_t count;
    char *final_path[16];
    char *temp_path[16];
} cli_outputs;
grove_status cli_outputs_stage(cli_outputs *outs, const char *path, const grove_array *array);
grove_status cli_outputs_commit(cli_outputs *outs);
void cli_outputs_abort(cli_outputs *outs);

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
/* The input's sizes: n, d and dtype. */
void cli_json_points(cli_json *j, const grove_points *points);
/* Adds seconds, io_seconds, threads and peak_rss_bytes, closes the object,
 * prints it as the last line of stdout and frees it. */
void cli_json_finish(cli_json *j, double seconds, double io_seconds, int threads);

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

#endif
