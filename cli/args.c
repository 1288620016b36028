/* Command-line option parsing with strict number checks: a bad value, or
 * one outside the option's range, is a usage error that names the option
 * and the text given. */
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cli_error(const char *command, const char *fmt, ...)
{
    if (grove_mpi_rank(cli_mpi()) != 0) return; /* under mpirun: rank 0's line alone */
    va_list args;
    va_start(args, fmt);
    fprintf(stderr, "grove %s: ", command);
    vfprintf(stderr, fmt, args);
    fputc('\n', stderr);
    va_end(args);
}

bool cli_help(int argc, char **argv, const char *usage)
{
    if (argc == 0 || (strcmp(argv[0], "--help") != 0 && strcmp(argv[0], "-h") != 0)) return false;
    fputs(usage, stdout);
    fputs("Outputs (.npy) appear only when complete, all of them or none; an output may not be an input or\n"
          "another output; a character device or FIFO output (/dev/null) is written through.\n"
          "Exit status: 0 done, 1 failed while running, 2 usage error (flag, value or path), 130/143 after\n"
          "SIGINT/SIGTERM (unfinished outputs removed). Errors are one line naming the file.\n",
          stdout);
    return true;
}

/* True when `name` is one of the '|'-separated spellings in `spec`. */
static bool matches(const char *spec, const char *name)
{
    size_t len = strlen(name);
    for (const char *p = spec;;) {
        const char *bar = strchr(p, '|');
        size_t part = bar ? (size_t)(bar - p) : strlen(p);
        if (part == len && strncmp(p, name, len) == 0) return true;
        if (!bar) return false;
        p = bar + 1;
    }
}

const char *cli_parse_number(const char *text, char **end, double *v)
{
    errno = 0;
    *v = strtod(text, end);
    if (*end == text) return "is not a number";
    if (isnan(*v) || (isinf(*v) && errno != ERANGE)) return "is not finite";
    /* glibc reports ERANGE for subnormal results too: those are values. */
    if (errno == ERANGE && isinf(*v)) return "is beyond the range of a double (1.8e+308)";
    if (errno == ERANGE && *v == 0) return "is too small for a double: it rounds to 0 (the smallest is 4.9e-324)";
    return NULL;
}

/* What store() returns when the text is not of the option's kind at all:
 * the usage error then says what the option expects. */
static const char NOT_OF_KIND[] = "";

/* A whole number >= 0 into *out. */
static const char *parse_u64(const char *text, uint64_t *out)
{
    if (!*text || *text == '-' || *text == '+' || *text == ' ') return NOT_OF_KIND;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    if (*end) return NOT_OF_KIND;
    if (errno == ERANGE) return "is too large (at most 18446744073709551615)";
    *out = v;
    return NULL;
}

static const char *parse_int(const char *text, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (!*text || *end) return NOT_OF_KIND;
    if (errno == ERANGE || v < -2147483647L || v > 2147483647L)
        return "is out of range (whole numbers from -2147483647 to 2147483647)";
    *out = (int)v;
    return NULL;
}

static const char *parse_double(const char *text, double *out)
{
    char *end;
    double v;
    const char *why = cli_parse_number(text, &end, &v);
    if (end == text || *end) return NOT_OF_KIND;
    if (!why) *out = v;
    return why;
}

static const char *parse_bytes(const char *text, size_t *out)
{
    if (!*text || *text == '-') return NOT_OF_KIND;
    char *end;
    double v;
    const char *why = cli_parse_number(text, &end, &v);
    if (end == text) return NOT_OF_KIND;
    double scale = 1;
    if (*end == 'K' || *end == 'k') scale = 1024.0, end++;
    else if (*end == 'M' || *end == 'm') scale = 1024.0 * 1024, end++;
    else if (*end == 'G' || *end == 'g') scale = 1024.0 * 1024 * 1024, end++;
    else if (*end == 'T' || *end == 't') scale = 1024.0 * 1024 * 1024 * 1024, end++;
    if (*end == 'B' || *end == 'b') end++;
    if (*end || v < 0) return NOT_OF_KIND;
    if (why) return why;
    if (v * scale >= 18446744073709551615.0) return "is too large (at most 16 EiB)";
    *out = (size_t)(v * scale);
    return NULL;
}

const char *cli_device_name(grove_device device)
{
    static const char *const names[] = {"cpu", "cuda", "opencl", "auto"};
    return device >= GROVE_DEVICE_CPU && device <= GROVE_DEVICE_AUTO ? names[device] : "unknown";
}

/* Store `value` into an option of the given kind: NULL when it parses,
 * else NOT_OF_KIND or what is wrong with the number. */
static const char *store(const cli_opt *opt, const char *value)
{
    switch (opt->kind) {
    case OPT_FLAG: *(bool *)opt->dest = true; return NULL;
    case OPT_STRING: *(const char **)opt->dest = value; return NULL;
    case OPT_SIZE: {
        uint64_t v;
        const char *why = parse_u64(value, &v);
        if (!why && v > SIZE_MAX) why = "is too large for this machine's sizes";
        if (!why) *(size_t *)opt->dest = (size_t)v;
        return why;
    }
    case OPT_U64: return parse_u64(value, (uint64_t *)opt->dest);
    case OPT_INT: return parse_int(value, (int *)opt->dest);
    case OPT_DOUBLE: return parse_double(value, (double *)opt->dest);
    case OPT_BYTES: return parse_bytes(value, (size_t *)opt->dest);
    case OPT_DEVICE:
        for (grove_device k = GROVE_DEVICE_CPU; k <= GROVE_DEVICE_AUTO; k++)
            if (strcmp(value, cli_device_name(k)) == 0) {
                *(grove_device *)opt->dest = k;
                return NULL;
            }
        return NOT_OF_KIND;
    case OPT_POINTS:
    case OPT_INPUT:
    case OPT_NPY:
    case OPT_SVG:
    case OPT_TABLE: ((cli_file *)opt->dest)->path = value; return NULL;
    case OPT_BOX: ((cli_box *)opt->dest)->text = value; return NULL;
    }
    return NOT_OF_KIND;
}

static const char *kind_text(cli_opt_kind kind)
{
    switch (kind) {
    case OPT_SIZE: return "a whole number >= 0";
    case OPT_U64: return "a whole number >= 0";
    case OPT_INT: return "a whole number";
    case OPT_DOUBLE: return "a finite number";
    case OPT_BYTES: return "a size in bytes, optionally with K, M or G";
    case OPT_DEVICE: return "cpu, cuda, opencl or auto";
    default: return "a value";
    }
}

/* The stored value of a number option, for its range. */
static double stored_value(const cli_opt *opt)
{
    switch (opt->kind) {
    case OPT_SIZE:
    case OPT_BYTES: return (double)*(const size_t *)opt->dest;
    case OPT_U64: return (double)*(const uint64_t *)opt->dest;
    case OPT_INT: return (double)*(const int *)opt->dest;
    case OPT_DOUBLE: return *(const double *)opt->dest;
    default: return 0;
    }
}

static bool in_range(const cli_opt *opt)
{
    const cli_range *r = &opt->range;
    double v = stored_value(opt);
    return !r->set || ((r->above ? v > r->lo : v >= r->lo) && v <= r->hi);
}

/* What the option accepts, in words: "a whole number in 1..64". */
static void expected_text(const cli_opt *opt, char *buf, size_t cap)
{
    const cli_range *r = &opt->range;
    const char *what = opt->kind == OPT_DOUBLE ? "a number" : "a whole number";
    if (!r->set) snprintf(buf, cap, "%s", kind_text(opt->kind));
    else if (isinf(r->hi)) snprintf(buf, cap, "%s %s %g", what, r->above ? ">" : ">=", r->lo);
    else if (opt->kind == OPT_DOUBLE) snprintf(buf, cap, "%s in [%g, %g]", what, r->lo, r->hi);
    else snprintf(buf, cap, "%s in %g..%g", what, r->lo, r->hi);
}

/* Store the value given for opt (spelled `name`), or print the usage error. */
static bool take(const char *command, const cli_opt *opt, const char *name, const char *value)
{
    const char *why = store(opt, value);
    if (why && why != NOT_OF_KIND) {
        cli_error(command, "%s: %s %s", name, value, why);
        return false;
    }
    if (why || !in_range(opt)) {
        char expected[96];
        expected_text(opt, expected, sizeof expected);
        cli_error(command, "%s: expected %s, got '%s'", name, expected, value);
        return false;
    }
    if (opt->seen) *opt->seen = true;
    return true;
}

/* --types: a comma list of particle types 0..GROVE_GADGET_TYPES - 1 as a
 * bit set; false when it is not one. */
static bool parse_types(const char *text, unsigned *types)
{
    *types = 0;
    for (const char *p = text;; p++) {
        if (*p < '0' || *p >= '0' + GROVE_GADGET_TYPES || (p[1] != ',' && p[1] != '\0')) return false;
        *types |= 1u << (*p - '0');
        if (!*++p) return true;
    }
}

bool cli_parse(const char *command, int argc, char **argv, const cli_opt *opts, size_t nopts, cli_common *common)
{
    common->threads = 0;
    common->json = false;
    common->quiet = false;
    common->progress = -1;
    common->dims = 0;
    common->dtype = "float64";
    common->types = 0;
    const char *types = NULL;
    bool progress_on = false, progress_off = false;
    const cli_opt shared[] = {
        {"--threads", OPT_INT, &common->threads, NULL, CLI_AT_LEAST(0)},
        {"--json", OPT_FLAG, &common->json, NULL, CLI_ANY},
        {"--quiet|-q", OPT_FLAG, &common->quiet, NULL, CLI_ANY},
        {"--progress", OPT_FLAG, &progress_on, NULL, CLI_ANY},
        {"--no-progress", OPT_FLAG, &progress_off, NULL, CLI_ANY},
        {"--dims", OPT_SIZE, &common->dims, NULL, CLI_ANY},
        {"--dtype", OPT_STRING, &common->dtype, NULL, CLI_ANY},
        {"--types", OPT_STRING, &types, NULL, CLI_ANY},
    };
    size_t next_positional = 0;
    bool only_positional = false;
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i];
        if (only_positional || arg[0] != '-' || arg[1] == '\0') {
            while (next_positional < nopts && opts[next_positional].name[0] == '-') next_positional++;
            if (next_positional == nopts) {
                cli_error(command, "unexpected argument '%s'", arg);
                return false;
            }
            if (!take(command, &opts[next_positional], opts[next_positional].name, arg)) return false;
            next_positional++;
            continue;
        }
        if (strcmp(arg, "--") == 0) {
            only_positional = true;
            continue;
        }
        /* Accept --name=value as well as --name value. */
        char name[64];
        const char *inline_value = strchr(arg, '=');
        size_t name_len = inline_value ? (size_t)(inline_value - arg) : strlen(arg);
        if (name_len >= sizeof name) name_len = sizeof name - 1;
        memcpy(name, arg, name_len);
        name[name_len] = '\0';
        const cli_opt *opt = NULL;
        for (size_t k = 0; k < nopts && !opt; k++)
            if (matches(opts[k].name, name)) opt = &opts[k];
        for (size_t k = 0; k < sizeof shared / sizeof shared[0] && !opt; k++)
            if (matches(shared[k].name, name)) opt = &shared[k];
        if (!opt) {
            cli_error(command, "unknown option '%s' (see 'grove %s --help')", name, command);
            return false;
        }
        const char *value = NULL;
        if (opt->kind == OPT_FLAG) {
            if (inline_value) {
                cli_error(command, "%s takes no value", name);
                return false;
            }
        } else if (inline_value) {
            value = inline_value + 1;
        } else if (i + 1 < argc) {
            value = argv[++i];
        } else {
            cli_error(command, "%s needs a value", name);
            return false;
        }
        if (!take(command, opt, name, value)) return false;
    }
    if (strcmp(common->dtype, "float64") != 0 && strcmp(common->dtype, "float32") != 0) {
        cli_error(command, "--dtype: expected float32 or float64, got '%s'", common->dtype);
        return false;
    }
    if (types && !parse_types(types, &common->types)) {
        cli_error(command, "--types: expected particle types from 0 to %d, one or a comma list (1, or 0,1,4), "
                  "got '%s'", GROVE_GADGET_TYPES - 1, types);
        return false;
    }
    if (progress_on && progress_off) {
        cli_error(command, "--progress and --no-progress contradict each other");
        return false;
    }
    common->progress = progress_on ? 1 : progress_off ? 0 : -1;
    return true;
}
