/* grove nbody --resume: the settings a command line gives again agree with
 * the run's checkpoint, where the library keeps them (nbody_run.h). */
#include "nbody_run.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The run settings a checkpoint keeps besides the library's parameters
 * (dt, eta, the time-step mode, max-level, theta, softening, G and
 * --raw-forces are in its header): how the run started and its outputs,
 * kept with grove_nbody_keep_settings so that --resume restores them. A
 * run with --units keeps a last one, units (checkpoints without it read as
 * runs without units). */
#define SETTINGS_FORMAT "grove nbody settings 1"

/* How the run started: an IC kind, or "input" for a snapshot. */
static const char *start_kind(const nbody_args *a) { return a->input.path || a->from_input ? "input" : a->ic; }

grove_status nbody_keep_settings(const nbody_args *a)
{
    char seed[24], every[24], report[24];
    snprintf(seed, sizeof seed, "%llu", (unsigned long long)a->seed);
    snprintf(every, sizeof every, "%zu", a->snapshot_every);
    snprintf(report, sizeof report, "%zu", a->report_every);
    grove_nbody_setting kept[] = {
        {"start", start_kind(a), 0},       {"seed", seed, 0},
        {"snapshot-every", every, 0},      {"report-every", report, 0},
        {"tipsy", a->tipsy ? "1" : "0", 0}, {"render", a->render ? "1" : "0", 0},
        {"render-extent", NULL, a->render_extent}, {"units", a->units ? a->units->name : "", 0}};
    size_t count = sizeof kept / sizeof kept[0] - (a->units ? 0 : 1);
    return grove_nbody_keep_settings(a->sim, SETTINGS_FORMAT, kept, count);
}

/* What a resumed run's settings are, read back from its checkpoint. */
typedef struct kept_settings {
    char start[16];
    unsigned long long seed, every, report, tipsy, render;
    double extent;
    const cli_units *units; /* NULL: the run stated none */
} kept_settings;

/* The kept setting `name` as a whole number in 0..most. */
static bool kept_count(const grove_nbody *sim, const char *name, unsigned long long most, unsigned long long *value)
{
    char text[32], *end;
    if (grove_nbody_run_setting(sim, SETTINGS_FORMAT, name, text, sizeof text) != GROVE_OK) return false;
    errno = 0;
    *value = strtoull(text, &end, 10);
    return text[0] >= '0' && text[0] <= '9' && *end == '\0' && errno == 0 && *value <= most;
}

/* Every setting the run keeps, valid; false when they cannot be read (the
 * file was not written by grove nbody). */
static bool read_settings(const grove_nbody *sim, kept_settings *k)
{
    char extent[40], units[32], *end;
    bool ok = grove_nbody_run_setting(sim, SETTINGS_FORMAT, "start", k->start, sizeof k->start) == GROVE_OK &&
              kept_count(sim, "seed", ULLONG_MAX, &k->seed) && kept_count(sim, "snapshot-every", SIZE_MAX, &k->every) &&
              kept_count(sim, "report-every", SIZE_MAX, &k->report) && kept_count(sim, "tipsy", 1, &k->tipsy) &&
              kept_count(sim, "render", 1, &k->render) &&
              grove_nbody_run_setting(sim, SETTINGS_FORMAT, "render-extent", extent, sizeof extent) == GROVE_OK &&
              grove_nbody_run_setting(sim, SETTINGS_FORMAT, "units", units, sizeof units) == GROVE_OK;
    k->extent = ok ? strtod(extent, &end) : 0;
    k->units = ok && units[0] ? cli_units_find(units) : NULL;
    return ok && extent[0] && *end == '\0' && k->extent > 0 && isfinite(k->extent) && (!units[0] || k->units) &&
           (nbody_ic_kind(k->start, NULL) || strcmp(k->start, "input") == 0);
}

/* The usage error of a setting given again that disagrees with the
 * checkpoint's: "FLAG[ MINE] disagrees with CHECKPOINT, whose run has
 * THEIRS". mine is NULL for a flag without a value. */
static void disagree(const nbody_args *a, const char *flag, const char *mine, const char *theirs)
{
    cli_error("nbody", "%s%s%s disagrees with %s, whose run has %s: leave %s out to resume with the run's own, "
              "or use another --out for a new run", flag, mine ? " " : "", mine ? mine : "", a->checkpoint, theirs,
              flag);
}

/* How a run began, as its flags say it: "--ic KIND" or "--input (a snapshot)". */
static void began_phrase(const char *start, char *buf, size_t cap)
{
    if (strcmp(start, "input") == 0) snprintf(buf, cap, "--input (a snapshot)");
    else snprintf(buf, cap, "--ic %s", start);
}

/* A setting a resumed run's command line may give again: its flag, whether
 * it is given, the run's name for it and its value on the command line
 * (grove_nbody_setting), the text the message shows for that value (NULL:
 * the value's own) and whether it is a flag without a value. */
typedef struct again {
    const char *flag;
    bool given;
    grove_nbody_setting mine;
    const char *shown;
    bool toggle;
} again;

/* The library's check of the given ones (grove_nbody_resume_check); the
 * first that disagrees is printed as a usage error: false. */
static bool agree_all(const nbody_args *a, const again *list, size_t count)
{
    grove_nbody_setting asked[16];
    size_t at[16], m = 0, which;
    for (size_t i = 0; i < count && m < 16; i++)
        if (list[i].given) {
            at[m] = i;
            asked[m++] = list[i].mine;
        }
    if (grove_nbody_resume_check(a->sim, SETTINGS_FORMAT, asked, m, &which) == GROVE_OK) return true;
    const again *g = list + at[which];
    char mine[64], theirs[64], phrase[96];
    grove_nbody_setting_text(&g->mine, mine, sizeof mine);
    grove_nbody_run_setting(a->sim, SETTINGS_FORMAT, g->mine.name, theirs, sizeof theirs);
    if (strcmp(g->mine.name, "start") == 0) began_phrase(theirs, phrase, sizeof phrase);
    else if (g->toggle || !theirs[0]) snprintf(phrase, sizeof phrase, "no %s", g->flag);
    else snprintf(phrase, sizeof phrase, "%s %s", g->flag, theirs);
    disagree(a, g->flag, g->toggle ? NULL : g->shown ? g->shown : mine, phrase);
    return false;
}

/* The library's parameters given again agree with the checkpoint's header. */
static bool agree_parameters(const nbody_args *a)
{
    const grove_nbody_params *p = &a->params;
    const again list[] = {
        {"--dt", a->given.dt, {"dt", NULL, p->dt}, NULL, false},
        {"--timestep", a->given.timestep, {"timestep", a->timestep, 0}, NULL, false},
        {"--eta", a->given.eta, {"eta", NULL, p->eta}, NULL, false},
        {"--max-level", a->given.max_level, {"max_level", NULL, a->max_level}, NULL, false},
        {"--theta", a->given.theta, {"theta", NULL, p->gravity.theta}, NULL, false},
        {"--softening", a->given.softening, {"softening", NULL, p->gravity.softening}, NULL, false},
        {"--G", a->given.G, {"G", NULL, p->gravity.G}, NULL, false},
        {"--raw-forces", a->raw_forces, {"conserve_momentum", "0", 0}, NULL, true}};
    return agree_all(a, list, sizeof list / sizeof list[0]);
}

/* The kept settings given again agree with the checkpoint's; --n and
 * --seed only for a run generated from --ic, and --bh-mass with the point
 * mass the run holds (a plummer-bh run's particle 0). */
static bool agree_settings(const nbody_args *a, const kept_settings *k, double point_mass)
{
    bool from_ic = strcmp(k->start, "input") != 0;
    char n[24], seed[24], every[24], report[24];
    snprintf(n, sizeof n, "%zu", a->n);
    snprintf(seed, sizeof seed, "%llu", (unsigned long long)a->seed);
    snprintf(every, sizeof every, "%zu", a->snapshot_every);
    snprintf(report, sizeof report, "%zu", a->report_every);
    const again list[] = {
        {"--ic", a->given.ic, {"start", a->ic, 0}, NULL, false},
        {"--input", a->given.input, {"start", "input", 0}, a->input.path, false},
        {"--n", a->given.n && from_ic, {"n", n, 0}, NULL, false},
        {"--seed", a->given.seed && from_ic, {"seed", seed, 0}, NULL, false},
        {"--snapshot-every", a->given.snapshot_every, {"snapshot-every", every, 0}, NULL, false},
        {"--report-every", a->given.report_every, {"report-every", report, 0}, NULL, false},
        {"--tipsy", a->tipsy, {"tipsy", "1", 0}, NULL, true},
        {"--render", a->render, {"render", "1", 0}, NULL, true},
        {"--render-extent", a->given.render_extent, {"render-extent", NULL, a->render_extent}, NULL, false},
        {"--units", a->given.units, {"units", a->units ? a->units->name : "", 0}, a->units_name, false}};
    size_t count = sizeof list / sizeof list[0];
    if (!agree_all(a, list, 4)) return false; /* how the run began first, as the flags come */
    /* The point mass is particle 0, whose mass the run keeps. */
    bool bh = strcmp(k->start, "plummer-bh") == 0;
    if (a->given.bh_mass && (!bh || a->bh_mass != point_mass)) {
        grove_nbody_setting flag = {"bh-mass", NULL, a->bh_mass}, held = {"bh-mass", NULL, point_mass};
        char mine[32], value[32], theirs[64];
        grove_nbody_setting_text(&flag, mine, sizeof mine);
        grove_nbody_setting_text(&held, value, sizeof value);
        if (bh) snprintf(theirs, sizeof theirs, "--bh-mass %s", value);
        else began_phrase(k->start, theirs, sizeof theirs);
        disagree(a, "--bh-mass", mine, theirs);
        return false;
    }
    return agree_all(a, list + 4, count - 4);
}

/* *mass = the mass of plummer-bh's point mass, row 0 (first where it is
 * held: rows ascend). Under mpirun rank 0, which alone prints a refusal,
 * gets it from the rank holding it; the others take the flag's value
 * (agreeing), and the ranks then agree on rank 0's verdict. Collective. */
static grove_status held_point_mass(const nbody_args *a, const grove_mpi *mpi, double *mass)
{
    bool holds = grove_nbody_count(a->sim) && grove_nbody_rows(a->sim)[0] == 0;
    *mass = holds ? grove_nbody_masses(a->sim)[0] : a->bh_mass;
    int ranks = grove_mpi_size(mpi);
    if (ranks == 1) return GROVE_OK;
    int64_t *all = grove_mpi_rank(mpi) == 0 ? malloc((size_t)ranks * sizeof *all) : NULL;
    grove_status s = grove_mpi_agree(mpi, grove_mpi_rank(mpi) == 0 && !all ? GROVE_OUT_OF_MEMORY : GROVE_OK);
    /* Each rank's value as its bits; -1 (a NaN's, never a mass) where not held. */
    int64_t bits = -1;
    if (holds) memcpy(&bits, mass, sizeof bits);
    if (s == GROVE_OK) grove_mpi_gather_int64(mpi, bits, all);
    for (int r = 0; s == GROVE_OK && all && r < ranks; r++)
        if (all[r] != -1) memcpy(mass, &all[r], sizeof *mass);
    free(all);
    return s;
}

/* A checkpoint from before version 4 keeps only the library's parameters:
 * the output settings are then the command line's. */
grove_status nbody_resume_settings(nbody_args *a, cli_run *run)
{
    if (!agree_parameters(a)) return cli_run_usage(run);
    if (!grove_nbody_app_data(a->sim, NULL)) return GROVE_OK;
    kept_settings k;
    if (!read_settings(a->sim, &k)) {
        cli_note_error("%s: the run settings it keeps cannot be read: the file was not written by grove nbody",
                       a->checkpoint);
        return GROVE_PARSE_ERROR;
    }
    double point_mass;
    grove_status held = held_point_mass(a, run->options.mpi, &point_mass);
    if (held != GROVE_OK) return held;
    bool ok = agree_settings(a, &k, point_mass);
    if (grove_mpi_agree(run->options.mpi, ok ? GROVE_OK : GROVE_INVALID_ARGUMENT) != GROVE_OK)
        return cli_run_usage(run);
    /* The start too, so that the next checkpoint keeps it. */
    bool from_ic = nbody_ic_kind(k.start, NULL);
    if (from_ic) a->ic = nbody_ic_kind(k.start, NULL);
    a->from_input = !from_ic;
    a->snapshot_every = (size_t)k.every;
    a->report_every = (size_t)k.report;
    a->tipsy = k.tipsy;
    a->render = k.render;
    a->render_extent = k.extent;
    a->seed = k.seed;
    a->units = k.units;
    return GROVE_OK;
}

