/* Staged output files: nothing appears at a destination until every output
 * of the run has been written (see cli.h); the temporaries of runs that
 * were killed are removed by later runs; streamed outputs check the room
 * they need before they grow. */
#include "cli.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

static char *copy_text(const char *text)
{
    size_t len = strlen(text) + 1;
    char *p = malloc(len);
    if (p) memcpy(p, text, len);
    return p;
}

/* ---- temporaries of ended runs ------------------------------------------ */

/* Strip ".DIGITS" from the end of name[0, *end); its value in *value. */
static bool strip_number(const char *name, size_t *end, long *value)
{
    size_t e = *end, b = e;
    while (b > 0 && isdigit((unsigned char)name[b - 1])) b--;
    if (b == e || e - b > 9 || b < 2 || name[b - 1] != '.') return false;
    long v = 0;
    for (size_t i = b; i < e; i++) v = 10 * v + (name[i] - '0');
    *value = v;
    *end = b - 1;
    return true;
}

static bool strip_word(const char *name, size_t *end, const char *word)
{
    size_t m = strlen(word);
    if (*end < m || memcmp(name + *end - m, word, m) != 0) return false;
    *end -= m;
    return true;
}

/* The temporaries grove writes: "NAME.grove-partial.PID" (staged outputs,
 * below), "NAME.tmp.PID.N" (the library's atomic writes, src/io) and the
 * library's temporary of a staged output. *owner_len: NAME's length. */
static bool parse_temp(const char *name, size_t *owner_len, long *pid)
{
    size_t end = strlen(name), e = end;
    long n, p = 0;
    bool found = false;
    if (strip_number(name, &e, &n) && strip_number(name, &e, &p) && strip_word(name, &e, ".tmp")) {
        end = e;
        found = true;
    }
    e = end;
    if (strip_number(name, &e, &n) && strip_word(name, &e, ".grove-partial")) {
        end = e;
        p = n;
        found = true;
    }
    *owner_len = end;
    *pid = p;
    return found && end > 0;
}

/* No process holds pid now (kill reports ESRCH; EPERM means one does). */
static bool process_ended(long pid)
{
    return pid > 0 && (pid_t)pid != getpid() && kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

void cli_remove_stale(const char *path, bool prefix)
{
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    char dir[4096];
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) + 1 : 1, slash ? path : ".");
    size_t base_len = strlen(base);
    DIR *d = opendir(dir);
    if (!d) return;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        size_t owner;
        long pid;
        if (!parse_temp(e->d_name, &owner, &pid) || strncmp(e->d_name, base, base_len) != 0) continue;
        if ((prefix ? owner < base_len : owner != base_len) || !process_ended(pid)) continue;
        char stale[8192];
        snprintf(stale, sizeof stale, "%s%s%s", dir, slash ? "" : "/", e->d_name);
        unlink(stale);
    }
    closedir(d);
}

/* ---- staging ------------------------------------------------------------ */

/* Register a staged output whose temporary file the caller writes. */
static grove_status stage_path(cli_outputs *outs, const char *path, const char **temp_out)
{
    if (cli_interrupted()) return GROVE_CANCELLED;
    if (outs->count == sizeof outs->final_path / sizeof outs->final_path[0]) return GROVE_INTERNAL;
    size_t len = strlen(path) + 48;
    char *temp = malloc(len);
    char *final = copy_text(path);
    if (!temp || !final) {
        free(temp);
        free(final);
        return GROVE_OUT_OF_MEMORY;
    }
    cli_remove_stale(path, false);
    snprintf(temp, len, "%s.grove-partial.%ld", path, (long)getpid());
    outs->final_path[outs->count] = final;
    outs->temp_path[outs->count] = temp;
    outs->count++;
    *temp_out = temp;
    return GROVE_OK;
}

/* An I/O failure on the output `path`, noted for the run's one line. */
static grove_status io_fail(const char *path, const char *what)
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
    return *f ? GROVE_OK : io_fail(path, "create a temporary file for");
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
    return failed ? io_fail(path, "write") : GROVE_OK;
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
    if (!st->f) return io_fail(path, "create a temporary file for");
    /* A placeholder header of the final header's length (the same for any
     * row count), rewritten by cli_stream_close. */
    char header[256];
    st->header_len = grove_npy_header(dtype, 0, cols, header, sizeof header);
    if (fwrite(header, 1, st->header_len, st->f) != st->header_len) return io_fail(path, "write");
    return GROVE_OK;
}

grove_status cli_stream_write(cli_stream *st, const void *data, size_t rows)
{
    size_t elems = rows * (st->cols ? st->cols : 1), size = grove_dtype_size(st->dtype);
    if (elems && fwrite(data, size, elems, st->f) != elems) return io_fail(st->final_path, "write");
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
        s = io_fail(st->final_path, "write");
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

/* ---- whole arrays, commit and abort ------------------------------------- */

grove_status cli_outputs_stage(cli_outputs *outs, const char *path, const grove_array *array)
{
    const char *temp = NULL;
    grove_status s = stage_path(outs, path, &temp);
    if (s != GROVE_OK) return s;
    s = grove_npy_write(temp, array);
    if (s != GROVE_OK) {
        /* The library names the temporary; the user knows the output. */
        const char *detail = grove_last_error();
        size_t len = strlen(temp);
        if (strncmp(detail, temp, len) == 0 && detail[len] == ':') detail += len + 1;
        cli_note_error("%s:%s", path, detail);
    }
    return s;
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
    if (cli_interrupted()) {
        cli_outputs_abort(outs);
        return GROVE_CANCELLED;
    }
    for (size_t i = 0; i < outs->count; i++) {
        if (rename(outs->temp_path[i], outs->final_path[i]) != 0) {
            io_fail(outs->final_path[i], "move the finished output into place at");
            /* Outputs renamed so far stay; the rest are removed. */
            for (size_t k = i; k < outs->count; k++) unlink(outs->temp_path[k]);
            release(outs);
            return GROVE_IO_ERROR;
        }
    }
    release(outs);
    return GROVE_OK;
}
