/* Atomic file replacement: write a temporary file beside the target, then
 * rename() it over the target (atomic within one file system). */
#include "io_internal.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <unistd.h>

/* Distinguishes temporary files of concurrent writes in one process. */
static atomic_ulong temp_counter;

/* Write both parts and close; returns 0 or an errno value. *created tells
 * whether the file now exists (and must be removed on failure). */
static int write_parts(const char *temp, const void *head, size_t head_len, const void *body, size_t body_len,
                       bool *created)
{
    /* "x": never reuse a file that is already there. */
    FILE *f = fopen(temp, "wbx");
    *created = f != NULL;
    if (!f) return errno;
    int err = 0;
    if (fwrite(head, 1, head_len, f) != head_len || (body_len && fwrite(body, 1, body_len, f) != body_len))
        err = errno ? errno : EIO;
    if (fclose(f) != 0 && !err) err = errno ? errno : EIO;
    return err;
}

grove_status grove__file_write_atomic(const char *path, const void *head, size_t head_len, const void *body,
                                      size_t body_len)
{
    size_t cap;
    if (!grove__add_size(strlen(path), 64, &cap)) return grove__fail(GROVE_TOO_LARGE, "path is too long");
    char *temp = grove__malloc(cap, "temporary file name");
    if (!temp) return GROVE_OUT_OF_MEMORY;
    snprintf(temp, cap, "%s.tmp.%ld.%lu", path, (long)getpid(), atomic_fetch_add(&temp_counter, 1));
    bool created;
    errno = 0;
    int err = write_parts(temp, head, head_len, body, body_len, &created);
    if (!err && rename(temp, path) != 0) err = errno;
    if (err && created) remove(temp);
    grove__free(temp);
    if (err) return grove__fail(GROVE_IO_ERROR, "cannot write: %s", strerror(err));
    return GROVE_OK;
}
