/* Run settings kept with a checkpoint (the application data as text: the
 * line `format`, then "name value" lines) and a resumed run's check of the
 * settings given again against the run's own: the kept ones, or the
 * simulation's parameters by their grove.h names. */
#include "sim_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Room for a number's text or a parameter's. */
enum { VALUE_TEXT = 32 };

void grove_nbody_setting_text(const grove_nbody_setting *setting, char *buf, size_t cap)
{
    if (!buf || cap == 0) return;
    if (!setting) {
        buf[0] = '\0';
        return;
    }
    if (setting->text) {
        snprintf(buf, cap, "%s", setting->text);
        return;
    }
    for (int digits = 1; digits <= 17; digits++) {
        snprintf(buf, cap, "%.*g", digits, setting->number);
        if (strtod(buf, NULL) == setting->number) return;
    }
}

static bool name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
}

/* The name characters at s, up to end. */
static size_t name_chars(const char *s, const char *end)
{
    size_t k = 0;
    while (s + k < end && name_char(s[k])) k++;
    return k;
}

/* The length of a kept line's name (up to end, followed by a space), 0
 * when it has none. */
static size_t name_length(const char *s, const char *end)
{
    size_t k = name_chars(s, end);
    return s + k < end && s[k] == ' ' ? k : 0;
}

static grove_status check_format(const char *format)
{
    if (!format || !format[0] || strchr(format, '\n'))
        return grove__fail(GROVE_INVALID_ARGUMENT, "nbody settings: the format line is %s",
                           format ? "empty or has a newline" : "NULL");
    return GROVE_OK;
}

grove_status grove_nbody_keep_settings(grove_nbody *sim, const char *format, const grove_nbody_setting *settings,
                                       size_t count)
{
    grove__clear_error();
    if (!sim || (count && !settings))
        return grove__fail(GROVE_INVALID_ARGUMENT, "nbody settings: %s is NULL", sim ? "settings" : "sim");
    grove_status s = check_format(format);
    if (s != GROVE_OK) return s;
    size_t bytes = strlen(format) + 1;
    char number[VALUE_TEXT];
    for (size_t i = 0; i < count; i++) {
        const char *name = settings[i].name, *text = settings[i].text;
        size_t len = name ? strlen(name) : 0;
        if (!len || name_chars(name, name + len) != len || (text && strchr(text, '\n')))
            return grove__fail(GROVE_INVALID_ARGUMENT, "nbody settings: setting %zu: %s", i,
                               !len ? "no name" : text && strchr(text, '\n') ? "its value has a newline"
                                                                            : "a name is letters, digits, - and _");
        grove_nbody_setting_text(settings + i, number, sizeof number);
        bytes += len + 2 + (text ? strlen(text) : strlen(number));
    }
    char *all = grove__malloc(bytes + 1, "nbody settings"), *at = all;
    if (!all) return GROVE_OUT_OF_MEMORY;
    at += sprintf(at, "%s\n", format);
    for (size_t i = 0; i < count; i++) {
        grove_nbody_setting_text(settings + i, number, sizeof number);
        at += sprintf(at, "%s %s\n", settings[i].name, settings[i].text ? settings[i].text : number);
    }
    s = grove_nbody_set_app_data(sim, all, bytes);
    grove__free(all);
    return s;
}

/* The value kept for `name` under format (*value, *len; *value NULL when
 * not kept, or when sim keeps no application data); false when its
 * application data are not such settings: a first line `format`, then
 * "name value" lines, each ending in a newline. */
static bool kept(const grove_nbody *sim, const char *format, const char *name, const char **value, size_t *len)
{
    size_t bytes;
    const char *data = grove_nbody_app_data(sim, &bytes);
    *value = NULL;
    *len = 0;
    if (!data) return true;
    const char *end = data + bytes;
    size_t head = strlen(format);
    if (bytes <= head || memcmp(data, format, head) != 0 || data[head] != '\n') return false;
    for (const char *line = data + head + 1; line < end;) {
        const char *nl = memchr(line, '\n', (size_t)(end - line));
        size_t k = nl ? name_length(line, nl) : 0;
        if (!k) return false;
        if (!*value && strlen(name) == k && memcmp(line, name, k) == 0) {
            *value = line + k + 1;
            *len = (size_t)(nl - *value);
        }
        line = nl + 1;
    }
    return true;
}

/* The simulation's parameter `name` as text (buf, VALUE_TEXT bytes); false
 * when it has none of that name. */
static bool parameter(const grove_nbody *sim, const char *name, char *buf)
{
    static const char *const modes[] = {"shared", "adaptive", "block"};
    const grove_nbody_params *p = &sim->params;
    const struct {
        const char *name;
        double value;
    } numbers[] = {{"dt", p->dt}, {"eta", p->eta}, {"theta", p->gravity.theta},
                   {"softening", p->gravity.softening}, {"G", p->gravity.G}};
    for (size_t k = 0; k < sizeof numbers / sizeof numbers[0]; k++)
        if (strcmp(name, numbers[k].name) == 0) {
            grove_nbody_setting number = {name, NULL, numbers[k].value};
            grove_nbody_setting_text(&number, buf, VALUE_TEXT);
            return true;
        }
    if (strcmp(name, "n") == 0) snprintf(buf, VALUE_TEXT, "%zu", sim->ranks->total(sim));
    else if (strcmp(name, "timestep") == 0) snprintf(buf, VALUE_TEXT, "%s", modes[p->timestep]);
    else if (strcmp(name, "max_level") == 0) snprintf(buf, VALUE_TEXT, "%d", p->max_level);
    else if (strcmp(name, "conserve_momentum") == 0) snprintf(buf, VALUE_TEXT, "%d", p->conserve_momentum != 0);
    else return false;
    return true;
}

/* The run's value of `name`: kept, else the parameter (written into own,
 * VALUE_TEXT bytes), else none (*value ""); *len its length. */
static grove_status run_value(const grove_nbody *sim, const char *format, const char *name, char *own,
                              const char **value, size_t *len)
{
    grove_status s = check_format(format);
    if (s != GROVE_OK) return s;
    if (!kept(sim, format, name, value, len))
        return grove__fail(GROVE_PARSE_ERROR, "nbody settings: the run's application data are not settings of "
                           "\"%s\" (another program's run?)", format);
    if (*value) return GROVE_OK;
    *value = own;
    if (!parameter(sim, name, own)) own[0] = '\0';
    *len = strlen(own);
    return GROVE_OK;
}

grove_status grove_nbody_run_setting(const grove_nbody *sim, const char *format, const char *name, char *buf,
                                     size_t cap)
{
    grove__clear_error();
    if (!sim || !name || !buf || cap == 0)
        return grove__fail(GROVE_INVALID_ARGUMENT, "nbody settings: %s", !sim ? "sim is NULL" : !name ? "name is NULL"
                                                                           : "buf is NULL or has no room");
    buf[0] = '\0';
    char own[VALUE_TEXT];
    const char *value;
    size_t len;
    grove_status s = run_value(sim, format, name, own, &value, &len);
    if (s == GROVE_OK && len >= cap)
        s = grove__fail(GROVE_INVALID_ARGUMENT, "nbody settings: %s's value has %zu bytes; buf holds %zu", name, len,
                        cap - 1);
    if (s != GROVE_OK) return s;
    memcpy(buf, value, len);
    buf[len] = '\0';
    return GROVE_OK;
}

/* Whether text (len bytes) reads whole as a number (*x). */
static bool whole_number(const char *text, size_t len, double *x)
{
    char copy[VALUE_TEXT], *end;
    if (len == 0 || len >= sizeof copy) return false;
    memcpy(copy, text, len);
    copy[len] = '\0';
    *x = strtod(copy, &end);
    return *end == '\0';
}

/* The digits of a whole decimal count (*n of them, leading zeros
 * skipped), or NULL when text is not one. */
static const char *count_digits(const char *text, size_t len, size_t *n)
{
    for (size_t k = 0; k < len; k++)
        if (text[k] < '0' || text[k] > '9') return NULL;
    while (len > 1 && text[0] == '0') text++, len--;
    *n = len;
    return len ? text : NULL;
}

/* Equal counts digit for digit (seeds beyond 2^53 stay apart), equal
 * numbers where both read whole as numbers, else equal texts. */
static bool same_value(const char *a, size_t na, const char *b, size_t nb)
{
    size_t ca, cb;
    const char *da = count_digits(a, na, &ca), *db = count_digits(b, nb, &cb);
    if (da && db) return ca == cb && memcmp(da, db, ca) == 0;
    double x, y;
    if (whole_number(a, na, &x) && whole_number(b, nb, &y)) return x == y;
    return na == nb && memcmp(a, b, na) == 0;
}

grove_status grove_nbody_resume_check(const grove_nbody *sim, const char *format, const grove_nbody_setting *asked,
                                      size_t count, size_t *which)
{
    grove__clear_error();
    if (which) *which = count;
    if (!sim || (count && !asked))
        return grove__fail(GROVE_INVALID_ARGUMENT, "nbody resume: %s is NULL", sim ? "asked" : "sim");
    for (size_t i = 0; i < count; i++) {
        if (!asked[i].name) return grove__fail(GROVE_INVALID_ARGUMENT, "nbody resume: setting %zu has no name", i);
        char own[VALUE_TEXT], number[VALUE_TEXT];
        const char *theirs, *mine = asked[i].text;
        size_t len;
        grove_status s = run_value(sim, format, asked[i].name, own, &theirs, &len);
        if (s != GROVE_OK) return s;
        if (!mine) {
            grove_nbody_setting_text(asked + i, number, sizeof number);
            mine = number;
        }
        if (same_value(mine, strlen(mine), theirs, len)) continue;
        if (which) *which = i;
        return grove__fail(GROVE_INVALID_ARGUMENT, "nbody resume: %s %s disagrees with the run's %s%.*s",
                           asked[i].name, mine, len ? "" : "(none)", (int)len, theirs);
    }
    return GROVE_OK;
}
