/* Staging output files: each is written under a temporary name (see cli.h;
 * commit.c puts the set into place); the temporaries of runs that were
 * killed are removed by later runs; streamed outputs check the room they
 * need before they grow. */
#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

/* Where the outputs bound for character devices and FIFOs are staged:
 * $TMPDIR, else /tmp. */
const char *cli_temp_folder(void)
{
    const char *dir = getenv("TMPDIR");
    return dir && dir[0] ? dir : "/tmp";
}

/* Register a staged output whose temporary file the caller writes: beside
 * path, or in the temporary folder when path is a character device or
 * FIFO (which the commit writes through). The temporaries that ended runs
 * left there go first. */
static grove_status stage_path(cli_outputs *outs, const char *path, const char **temp_out)
{
    if (cli_interrupted()) return GROVE_CANCELLED;
    if (outs->count == sizeof outs->out / sizeof outs->out[0]) return GROVE_INTERNAL;
    cli_output *o = &outs->out[outs->count];
    memset(o, 0, sizeof *o);
    struct stat st;
    o->through = stat(path, &st) == 0 && (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode));
    char prefix[4096], owner[4200], suffix[64];
    snprintf(prefix, sizeof prefix, "%s/grove-output-", cli_temp_folder());
    if (o->through) snprintf(owner, sizeof owner, "%s%zu", prefix, outs->count);
    else snprintf(owner, sizeof owner, "%s", path);
    cli_remove_stale(o->through ? prefix : path, o->through);
    snprintf(suffix, sizeof suffix, ".grove-partial.%ld", (long)getpid());
    o->path = strdup(path);
    o->temp = cli_temp_beside(owner, suffix);
    if (!o->path || !o->temp) {
        free(o->path);
        free(o->temp);
        return GROVE_OUT_OF_MEMORY;
    }
    outs->count++;
    *temp_out = o->temp;
    return GROVE_OK;
}

grove_status cli_outputs_file(cli_outputs *outs, const char *path, const char **temp)
{
    *temp = NULL;
    return stage_path(outs, path, temp);
}

grove_status cli_io_fail(const char *path, const char *what)
{
    cli_note_error("cannot %s %s: %s", what, path, strerror(errno));
    return GROVE_IO_ERROR;
}

grove_status cli_outputs_text(cli_outputs *outs, const char *path, FILE **f)
{
    const char *temp = NULL;
    *f = NULL;
    grove_status s = stage_path(outs, path, &temp);
    if (s != GROVE_OK) return s;
    *f = fopen(temp, "w");
    return *f ? GROVE_OK : cli_io_fail(path, "create a temporary file for");
}

grove_status cli_file_close(FILE *f, const char *path)
{
    bool failed = fflush(f) != 0 || ferror(f);
    int err = errno;
    if (fclose(f) != 0 && !failed) {
        failed = true;
        err = errno;
    }
    errno = err;
    return failed ? cli_io_fail(path, "write") : GROVE_OK;
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
    if (!st->f) return cli_io_fail(path, "create a temporary file for");
    /* A placeholder header of the final header's length (the same for any
     * row count), rewritten by cli_stream_close. */
    char header[256];
    st->header_len = grove_npy_header(dtype, 0, cols, header, sizeof header);
    if (fwrite(header, 1, st->header_len, st->f) != st->header_len) return cli_io_fail(path, "write");
    return GROVE_OK;
}

grove_status cli_stream_write(cli_stream *st, const void *data, size_t rows)
{
    size_t elems = rows * (st->cols ? st->cols : 1), size = grove_dtype_size(st->dtype);
    if (elems && fwrite(data, size, elems, st->f) != elems) return cli_io_fail(st->final_path, "write");
    st->rows += rows;
    return GROVE_OK;
}

grove_status cli_stream_close(cli_stream *st)
{
    if (!st->f) return GROVE_OK;
    char header[256];
    size_t len = grove_npy_header(st->dtype, st->rows, st->cols, header, sizeof header);
    grove_status s = GROVE_OK;
    if (len != st->header_len || fseek(st->f, 0, SEEK_SET) != 0 || fwrite(header, 1, len, st->f) != len)
        s = cli_io_fail(st->final_path, "write");
    grove_status c = cli_file_close(st->f, st->final_path);
    st->f = NULL;
    return s != GROVE_OK ? s : c;
}

/* Bytes of a stream's file at `rows` rows. */
static uint64_t stream_bytes(const cli_stream *st, size_t rows)
{
    return st->header_len + (uint64_t)rows * (st->cols ? st->cols : 1) * grove_dtype_size(st->dtype);
}

static void human(uint64_t bytes, char *buf, size_t cap)
{
    const char *unit[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
    double v = (double)bytes;
    int u = 0;
    while (v >= 1024 && u < 4) v /= 1024, u++;
    snprintf(buf, cap, u ? "%.1f %s" : "%.0f %s", v, unit[u]);
}

grove_status cli_streams_check_space(cli_stream *const *streams, const size_t *rows, size_t count)
{
    dev_t dev[16];
    for (size_t i = 0; i < count && i < 16; i++) {
        struct stat st;
        dev[i] = streams[i]->f && fstat(fileno(streams[i]->f), &st) == 0 ? st.st_dev : (dev_t)-1;
    }
    for (size_t i = 0; i < count && i < 16; i++) {
        bool first = streams[i]->f && dev[i] != (dev_t)-1;
        for (size_t k = 0; first && k < i; k++) first = dev[k] != dev[i];
        if (!first) continue;
        /* Everything bound for this file system: what the files will hold,
         * and what they still lack. */
        uint64_t total = 0, missing = 0;
        for (size_t k = i; k < count && k < 16; k++)
            if (dev[k] == dev[i]) {
                uint64_t want = stream_bytes(streams[k], rows[k]), have = stream_bytes(streams[k], streams[k]->rows);
                total += want;
                missing += want > have ? want - have : 0;
            }
        struct statvfs fs;
        if (fstatvfs(fileno(streams[i]->f), &fs) != 0) continue;
        uint64_t free_bytes = (uint64_t)fs.f_bavail * fs.f_frsize;
        if (missing <= free_bytes) continue;
        char need_h[32], free_h[32];
        human(total, need_h, sizeof need_h);
        human(free_bytes, free_h, sizeof free_h);
        cli_note_error("%s: not enough room: the outputs on its file system need %llu bytes (%s), %llu bytes (%s) "
                       "are free",
                       streams[i]->final_path, (unsigned long long)total, need_h, (unsigned long long)free_bytes,
                       free_h);
        return GROVE_IO_ERROR;
    }
    return GROVE_OK;
}

/* ---- whole arrays -------------------------------------------------------- */

grove_status cli_outputs_stage(cli_outputs *outs, const char *path, const grove_array *array)
{
    cli_stream st;
    size_t cols = array->ndim == 2 ? array->shape[1] : 0;
    grove_status s = cli_outputs_stream(outs, path, array->dtype, cols, &st);
    if (s == GROVE_OK) s = cli_stream_write(&st, array->data, array->shape[0]);
    grove_status c = cli_stream_close(&st);
    return s != GROVE_OK ? s : c;
}
