/* The one skeleton every command runs through (command.c). A command is
 * its option table (file options declare their kind: points to load, a
 * .npy output, ...) and a few steps over its own state:
 *
 *   --help -> parse (status 2 on a bad flag) -> check (the command's usage
 *   rules) -> the files' suffixes and collisions -> --box -> load the
 *   points -> run (compute; stage outputs) -> commit the outputs, or remove
 *   them on a failure or a signal -> summary line -> verdict -> --json
 *
 * and the skeleton frees the files' arrays and boxes. */
#ifndef GROVE_CLI_COMMAND_H
#define GROVE_CLI_COMMAND_H

#include "cli.h"

/* What the steps share with the skeleton. */
typedef struct cli_run {
    const char *command;
    const cli_opt *opts;
    size_t nopts;
    cli_common common;
    grove_options options;
    int threads;               /* reported in --json; a command may narrow it */
    double seconds;            /* the computation, set by the command */
    double io_seconds;         /* reading and writing files (the skeleton adds its own) */
    cli_outputs outs;          /* staged outputs, committed after a successful run */
    /* Which inputs a failure of the run step names (cli_fail):
     * the first positional input unless the command says otherwise. */
    const char *fail_path, *fail_queries;
    bool usage_error;          /* the run step printed a usage error (status 2) */
} cli_run;

typedef struct cli_command {
    const char *name, *usage;
    /* Usage rules beyond each option's own range: print and return false. */
    bool (*check)(void *state);
    /* Everything after loading: compute, and stage the outputs (for
     * instance with cli_run_stage). */
    grove_status (*run)(void *state, cli_run *run);
    /* Optional steps after a successful run: the lines printed without
     * --quiet and --json; a verdict that fails the run (status 1, no
     * --json) when false; the --json keys after "command"; and freeing
     * what the state holds besides the files. */
    void (*summary)(void *state, const cli_run *run);
    bool (*verdict)(void *state, const cli_run *run);
    void (*json)(void *state, const cli_run *run, cli_json *j);
    void (*release)(void *state);
} cli_command;

/* Run the command on argv (after its name); returns the exit status. */
int cli_command_main(const cli_command *cmd, void *state, const cli_opt *opts, size_t nopts, int argc, char **argv);

/* Stage every given .npy output of the table from its array, in table
 * order (outputs the command writes itself it stages itself). */
grove_status cli_run_stage(cli_run *run);
/* A usage error found while running (printed already): the run stops
 * with status 2. Returns the status for the run step to pass on. */
grove_status cli_run_usage(cli_run *run);

#endif
