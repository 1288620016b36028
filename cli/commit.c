/* Putting a run's staged outputs into place (cli.h), all or none. Files
 * first: each temporary is renamed over its destination, the file it
 * replaces kept under a second name ("NAME.grove-old.PID") until the whole
 * set is in place. Then the character devices and FIFOs, which cannot be
 * taken back, are written through. A failure at any step puts back what
 * was placed: replaced files return, new ones go, temporaries are removed,
 * so no part of the set appears. */
#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void release(cli_outputs *outs)
{
    for (size_t i = 0; i < outs->count; i++) {
        free(outs->out[i].path);
        free(outs->out[i].temp);
        free(outs->out[i].old);
    }
    outs->count = 0;
}

void cli_outputs_abort(cli_outputs *outs)
{
    for (size_t i = 0; i < outs->count; i++) unlink(outs->out[i].temp);
    release(outs);
}

/* Keep the file at o->path, if there is one, as o->old: a second link, so
 * that path is never missing (or, on a file system without links, the file
 * renamed there: o->old_moved). False with errno set on failure. */
static bool keep_old(cli_output *o)
{
    struct stat st;
    if (lstat(o->path, &st) != 0) return errno == ENOENT;
    if (S_ISDIR(st.st_mode)) {
        errno = EISDIR;
        return false;
    }
    char suffix[64];
    snprintf(suffix, sizeof suffix, ".grove-old.%ld", (long)getpid());
    o->old = cli_temp_beside(o->path, suffix);
    if (!o->old) {
        errno = ENOMEM;
        return false;
    }
    if (link(o->path, o->old) == 0) return true;
    if (rename(o->path, o->old) == 0) {
        o->old_moved = true;
        return true;
    }
    int err = errno;
    free(o->old);
    o->old = NULL;
    errno = err;
    return false;
}

/* Rename o's temporary over its destination, keeping what it replaces. */
static grove_status place(cli_output *o)
{
    if (!keep_old(o)) return cli_io_fail(o->path, "replace");
    if (rename(o->temp, o->path) == 0) {
        o->placed = true;
        return GROVE_OK;
    }
    int err = errno;
    /* Nothing replaced: the kept link goes, or the moved file returns. */
    if (o->old && o->old_moved) rename(o->old, o->path);
    else if (o->old) unlink(o->old);
    free(o->old);
    o->old = NULL;
    errno = err;
    return cli_io_fail(o->path, "move the finished output into place at");
}

/* Undo every placed output: the file it replaced returns, or it goes. */
static void put_back(cli_outputs *outs)
{
    for (size_t i = 0; i < outs->count; i++) {
        cli_output *o = &outs->out[i];
        if (!o->placed) continue;
        if (o->old) rename(o->old, o->path);
        else unlink(o->path);
        free(o->old);
        o->old = NULL;
    }
}

grove_status cli_outputs_commit(cli_outputs *outs)
{
    grove_status s = cli_interrupted() ? GROVE_CANCELLED : GROVE_OK;
    for (size_t i = 0; s == GROVE_OK && i < outs->count; i++)
        if (!outs->out[i].through) s = place(&outs->out[i]);
    for (size_t i = 0; s == GROVE_OK && i < outs->count; i++)
        if (outs->out[i].through) s = cli_write_through(outs->out[i].temp, outs->out[i].path, outs->command);
    if (s != GROVE_OK) put_back(outs);
    for (size_t i = 0; i < outs->count; i++) {
        cli_output *o = &outs->out[i];
        if (o->old) unlink(o->old);
        if (!o->placed) unlink(o->temp);
    }
    release(outs);
    return s;
}
