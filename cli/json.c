/* The --json summary line (DESIGN.md: the last line of stdout). */
#include "cli.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void append(cli_json *j, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static void append(cli_json *j, const char *fmt, ...)
{
    for (;;) {
        va_list args;
        va_start(args, fmt);
        int need = vsnprintf(j->text ? j->text + j->len : NULL, j->text ? j->cap - j->len : 0, fmt, args);
        va_end(args);
        if (need < 0) return;
        if (j->text && j->len + (size_t)need < j->cap) {
            j->len += (size_t)need;
            return;
        }
        size_t cap = (j->cap ? j->cap * 2 : 256) + (size_t)need;
        char *grown = realloc(j->text, cap);
        if (!grown) return;
        j->text = grown;
        j->cap = cap;
    }
}

static void key(cli_json *j, const char *name) { append(j, "%s\"%s\": ", j->len > 1 ? ", " : "", name); }

void cli_json_begin(cli_json *j, const char *command)
{
    j->text = NULL;
    j->len = j->cap = 0;
    append(j, "{");
    cli_json_str(j, "command", command);
}

/* A JSON string, escaped. */
static void string(cli_json *j, const char *value)
{
    append(j, "\"");
    for (const unsigned char *p = (const unsigned char *)value; *p; p++) {
        if (*p == '"' || *p == '\\') append(j, "\\%c", *p);
        else if (*p < 0x20) append(j, "\\u%04x", *p);
        else append(j, "%c", *p);
    }
    append(j, "\"");
}

void cli_json_str(cli_json *j, const char *name, const char *value)
{
    key(j, name);
    string(j, value);
}

void cli_json_strs(cli_json *j, const char *name, const char *const *values, size_t n)
{
    key(j, name);
    append(j, "[");
    for (size_t i = 0; i < n; i++) {
        if (i) append(j, ", ");
        string(j, values[i]);
    }
    append(j, "]");
}

void cli_json_num(cli_json *j, const char *name, double value)
{
    key(j, name);
    if (isfinite(value)) append(j, "%.17g", value);
    else append(j, "null");
}

void cli_json_int(cli_json *j, const char *name, long long value)
{
    key(j, name);
    append(j, "%lld", value);
}

void cli_json_ints(cli_json *j, const char *name, const long long *values, size_t n)
{
    key(j, name);
    append(j, "[");
    for (size_t i = 0; i < n; i++) append(j, "%s%lld", i ? ", " : "", values[i]);
    append(j, "]");
}

void cli_json_nums(cli_json *j, const char *name, const double *values, size_t n)
{
    key(j, name);
    append(j, "[");
    for (size_t i = 0; i < n; i++) append(j, isfinite(values[i]) ? "%s%.17g" : "%snull", i ? ", " : "", values[i]);
    append(j, "]");
}

void cli_json_bool(cli_json *j, const char *name, bool value)
{
    key(j, name);
    append(j, "%s", value ? "true" : "false");
}

void cli_json_points(cli_json *j, const grove_points *points)
{
    cli_json_int(j, "n", (long long)points->n);
    cli_json_int(j, "d", (long long)points->d);
    cli_json_str(j, "dtype", grove_dtype_name(points->dtype));
}

void cli_json_header_line(cli_json *j, const char *name, const grove_load_info *info)
{
    if (!info->text) return;
    key(j, name);
    if (info->header_line) append(j, "%zu", info->header_line);
    else append(j, "null");
}

void cli_json_finish(cli_json *j, double seconds, double io_seconds, int threads)
{
    cli_json_num(j, "seconds", seconds);
    cli_json_num(j, "io_seconds", io_seconds);
    cli_json_int(j, "threads", threads);
    cli_json_int(j, "peak_rss_bytes", (long long)cli_peak_rss());
    append(j, "}");
    if (j->text) printf("%s\n", j->text);
    fflush(stdout);
    free(j->text);
    j->text = NULL;
}
