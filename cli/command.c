/* The command skeleton (command.h): parsing, the checks before any work,
 * loading the points, staged outputs, the failure line, the summary and
 * --json, and freeing, the same for every command. */
#include "command.h"

#include <string.h>

/* Parse, the command's own rules, the files, then the boxes (the order the
 * usage errors are reported in). */
static bool setup(const cli_command *cmd, void *state, cli_run *run, int argc, char **argv)
{
    if (!cli_parse(cmd->name, argc, argv, run->opts, run->nopts, &run->common)) return false;
    if (cmd->check && !cmd->check(state)) return false;
    if (!cli_check_paths(cmd->name, run->opts, run->nopts)) return false;
    for (size_t i = 0; i < run->nopts; i++)
        if (run->opts[i].kind == OPT_BOX && !cli_box_parse(cmd->name, run->opts[i].dest)) return false;
    return true;
}

/* Every given points file, in table order, until one fails. */
static grove_status load_points(cli_run *run)
{
    grove_dtype raw = strcmp(run->common.dtype, "float32") == 0 ? GROVE_FLOAT32 : GROVE_FLOAT64;
    double t0 = cli_now();
    grove_status s = GROVE_OK;
    for (size_t i = 0; s == GROVE_OK && i < run->nopts; i++) {
        cli_file *f = cli_opt_file(&run->opts[i]);
        if (run->opts[i].kind != OPT_POINTS || !f->path) continue;
        s = grove_points_load_types(f->path, run->common.dims, raw, run->common.types, &f->array, &f->info);
        if (s == GROVE_OK) s = grove_array_points(&f->array, &f->points);
    }
    run->io_seconds += cli_now() - t0;
    return s;
}

/* The first positional input: what a failed computation is about. */
static const char *first_input(const cli_run *run)
{
    for (size_t i = 0; i < run->nopts; i++) {
        const cli_opt *o = &run->opts[i];
        if (o->name[0] != '-' && (o->kind == OPT_POINTS || o->kind == OPT_INPUT)) return cli_opt_file(o)->path;
    }
    return NULL;
}

static int execute(const cli_command *cmd, void *state, cli_run *run)
{
    run->options = cli_options(&run->common);
    run->threads = grove_options_threads(&run->options);
    run->outs.command = run->options.progress ? cmd->name : NULL;
    grove_status s = load_points(run);
    if (s != GROVE_OK) return cli_fail(cmd->name, NULL, NULL, s);
    run->fail_path = first_input(run);
    s = cmd->run(state, run);
    double t0 = cli_now();
    if (s == GROVE_OK) s = cli_outputs_commit(&run->outs);
    else cli_outputs_abort(&run->outs);
    run->io_seconds += cli_now() - t0;
    if (s != GROVE_OK)
        return run->usage_error ? CLI_EXIT_USAGE : cli_fail(cmd->name, run->fail_path, run->fail_queries, s);
    bool lead = grove_mpi_rank(run->options.mpi) == 0;
    if (cmd->summary && lead && !run->common.quiet && !run->common.json) cmd->summary(state, run);
    if (cmd->verdict && !cmd->verdict(state, run)) return CLI_EXIT_FAIL;
    if (run->common.json && lead) {
        cli_json j;
        cli_json_begin(&j, cmd->name);
        if (cmd->json) cmd->json(state, run, &j);
        cli_json_finish(&j, run->seconds, run->io_seconds, run->threads);
    }
    return CLI_EXIT_OK;
}

int cli_command_main(const cli_command *cmd, void *state, const cli_opt *opts, size_t nopts, int argc, char **argv)
{
    if (cli_help(argc, argv, cmd->usage)) return CLI_EXIT_OK;
    cli_run run;
    memset(&run, 0, sizeof run);
    run.command = cmd->name;
    run.opts = opts;
    run.nopts = nopts;
    int rc = setup(cmd, state, &run, argc, argv) ? execute(cmd, state, &run) : CLI_EXIT_USAGE;
    for (size_t i = 0; i < nopts; i++) {
        cli_file *f = cli_opt_file(&opts[i]);
        if (f) grove_array_free(&f->array);
        if (opts[i].kind == OPT_BOX) cli_box_free(opts[i].dest);
    }
    if (cmd->release) cmd->release(state);
    return rc;
}

grove_status cli_run_stage(cli_run *run)
{
    double t0 = cli_now();
    grove_status s = GROVE_OK;
    for (size_t i = 0; s == GROVE_OK && i < run->nopts; i++) {
        cli_file *f = cli_opt_file(&run->opts[i]);
        if (run->opts[i].kind == OPT_NPY && f->path) s = cli_outputs_stage(&run->outs, f->path, &f->array);
    }
    run->io_seconds += cli_now() - t0;
    return s;
}

grove_status cli_run_usage(cli_run *run)
{
    run->usage_error = true;
    return GROVE_INVALID_ARGUMENT;
}
