/* Status codes and the per-thread error sentence behind grove_last_error(). */
#include "internal.h"

#include <stdio.h>
#include <string.h>

static _Thread_local char last_error[GROVE__ERROR_CAPACITY];

const char *grove_status_str(grove_status status)
{
    switch (status) {
#define GROVE_STATUS_CASE_(name, value, text) \
    case GROVE_##name:                        \
        return text;
        GROVE_STATUS_MAP(GROVE_STATUS_CASE_)
#undef GROVE_STATUS_CASE_
    }
    return "unknown status";
}

const char *grove_last_error(void) { return last_error; }

void grove__clear_error(void) { last_error[0] = '\0'; }

grove_status grove__fail(grove_status status, const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, args);
    va_end(args);
    return status;
}

void grove__error_prefix(const char *context)
{
    char copy[GROVE__ERROR_CAPACITY];
    memcpy(copy, last_error, sizeof copy);
    snprintf(last_error, sizeof last_error, "%.200s: %.300s", context, copy);
}
