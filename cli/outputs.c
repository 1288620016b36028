/* Staged output files: nothing appears at a destination until every output
 * of the run has been written (see cli.h). */
#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char *copy_text(const char *text)
{
    size_t len = strlen(text) + 1;
    char *p = malloc(len);
    if (p) memcpy(p, text, len);
    return p;
}

grove_status cli_outputs_stage(cli_outputs *outs, const char *path, const grove_array *array)
{
    if (outs->count == sizeof outs->final_path / sizeof outs->final_path[0]) return GROVE_INTERNAL;
    size_t len = strlen(path) + 48;
    char *temp = malloc(len);
    char *final = copy_text(path);
    if (!temp || !final) {
        free(temp);
        free(final);
        return GROVE_OUT_OF_MEMORY;
    }
    snprintf(temp, len, "%s.grove-partial.%ld", path, (long)getpid());
    grove_status s = grove_npy_write(temp, array);
    if (s != GROVE_OK) {
        free(temp);
        free(final);
        return s;
    }
    outs->final_path[outs->count] = final;
    outs->temp_path[outs->count] = temp;
    outs->count++;
    return GROVE_OK;
}

static void release(cli_outputs *outs)
{
    for (size_t i = 0; i < outs->count; i++) {
        free(outs->final_path[i]);
        free(outs->temp_path[i]);
    }
    outs->count = 0;
}

void cli_outputs_abort(cli_outputs *outs)
{
    for (size_t i = 0; i < outs->count; i++) unlink(outs->temp_path[i]);
    release(outs);
}

grove_status cli_outputs_commit(cli_outputs *outs)
{
    for (size_t i = 0; i < outs->count; i++) {
        if (rename(outs->temp_path[i], outs->final_path[i]) != 0) {
            fprintf(stderr, "grove: cannot rename %s to %s: %s\n", outs->temp_path[i], outs->final_path[i],
                    strerror(errno));
            /* Outputs renamed so far stay; the rest are removed. */
            for (size_t k = i; k < outs->count; k++) unlink(outs->temp_path[k]);
            release(outs);
            return GROVE_IO_ERROR;
        }
    }
    release(outs);
    return GROVE_OK;
}
