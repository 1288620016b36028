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

/* Register a staged output whose temporary file the caller writes. */
static grove_status stage_path(cli_outputs *outs, const char *path, const char **temp_out)
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
    outs->final_path[outs->count] = final;
    outs->temp_path[outs->count] = temp;
    outs->count++;
    *temp_out = temp;
    return GROVE_OK;
}

static grove_status stream_fail(cli_stream *st, const char *what)
{
    fprintf(stderr, "grove: cannot %s %s: %s\n", what, st->final_path, strerror(errno));
    return GROVE_IO_ERROR;
}

grove_status cli_outputs_stream(cli_outputs *outs, const char *path, grove_dtype dtype, size_t cols, cli_stream *st)
{
    memset(st, 0, sizeof *st);
    st->dtype = dtype;
    st->cols = cols;
    st->final_path = path;
    const char *temp = NULL;
    grove_status s = stage_path(outs, path, &temp);
    if (s != GROVE_OK) return s;
    st->f = fopen(temp, "wb");
    if (!st->f) return stream_fail(st, "create a temporary file for");
    /* A placeholder header of the final header's length (the same for any
     * row count), rewritten by cli_stream_close. */
    char header[256];
    st->header_len = grove_npy_header(dtype, 0, cols, header, sizeof header);
    if (fwrite(header, 1, st->header_len, st->f) != st->header_len) return stream_fail(st, "write");
    return GROVE_OK;
}

grove_status cli_stream_write(cli_stream *st, const void *data, size_t rows)
{
    size_t elems = rows * (st->cols ? st->cols : 1), size = grove_dtype_size(st->dtype);
    if (elems && fwrite(data, size, elems, st->f) != elems) return stream_fail(st, "write");
    st->rows += rows;
    return GROVE_OK;
}

grove_status cli_stream_close(cli_stream *st)
{
    if (!st->f) return GROVE_OK;
    char header[256];
    size_t len = grove_npy_header(st->dtype, st->rows, st->cols, header, sizeof header);
    grove_status s = GROVE_OK;
    if (len != st->header_len || fseek(st->f, 0, SEEK_SET) != 0 || fwrite(header, 1, len, st->f) != len ||
        fflush(st->f) != 0)
        s = stream_fail(st, "write");
    if (fclose(st->f) != 0 && s == GROVE_OK) s = stream_fail(st, "close");
    st->f = NULL;
    return s;
}

grove_status cli_outputs_stage(cli_outputs *outs, const char *path, const grove_array *array)
{
    const char *temp = NULL;
    grove_status s = stage_path(outs, path, &temp);
    return s == GROVE_OK ? grove_npy_write(temp, array) : s;
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
