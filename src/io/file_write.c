/* Writing a whole file. A regular file (or a new name) is replaced
 * atomically: a temporary file beside it, then rename() over it (atomic
 * within one file system). A character device or FIFO (/dev/null, a pipe)
 * is written through instead, never replaced; other kinds (folders, block
 * devices, sockets) are refused. */
#include "io_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

/* Distinguishes temporary files of concurrent writes in one process. */
static atomic_ulong temp_counter;

/* The longest file name in path's folder (dir_len bytes of path, "." when
 * 0). */
static size_t name_max(const char *path, size_t dir_len)
{
    char dir[PATH_MAX];
    if (dir_len == 0) snprintf(dir, sizeof dir, ".");
    else snprintf(dir, sizeof dir, "%.*s", (int)(dir_len < sizeof dir ? dir_len : sizeof dir - 1), path);
    long max = pathconf(dir, _PC_NAME_MAX);
    return max > 0 ? (size_t)max : 255;
}

char *grove__temp_name(const char *path)
{
    char suffix[64];
    size_t suffix_len = (size_t)snprintf(suffix, sizeof suffix, ".tmp.%ld.%lu", (long)getpid(),
                                         atomic_fetch_add(&temp_counter, 1));
    const char *slash = strrchr(path, '/');
    size_t dir_len = slash ? (size_t)(slash - path) + 1 : 0, base_len = strlen(path) - dir_len;
    size_t max = name_max(path, dir_len);
    size_t keep = base_len + suffix_len <= max ? base_len : max > suffix_len ? max - suffix_len : 0;
    char *temp = grove__malloc(dir_len + keep + suffix_len + 1, "temporary file name");
    if (temp) snprintf(temp, dir_len + keep + suffix_len + 1, "%.*s%s", (int)(dir_len + keep), path, suffix);
    return temp;
}

/* Write len bytes to fd; 0 or an errno value. A signal that interrupts the
 * write (EINTR: a FIFO's reader is slow, and the caller's handler asked
 * system calls to stop) ends it. */
static int write_all(int fd, const void *data, size_t len)
{
    const unsigned char *p = data;
    while (len > 0) {
        size_t chunk = len < ((size_t)1 << 30) ? len : (size_t)1 << 30;
        ssize_t put = write(fd, p, chunk);
        if (put < 0) return errno;
        p += put;
        len -= (size_t)put;
    }
    return 0;
}

static grove_status write_fail(int err) { return grove__fail(GROVE_IO_ERROR, "cannot write: %s", strerror(err)); }

/* Both parts into the character device or FIFO at path. Opening a FIFO
 * waits for a reader (a signal that interrupts the wait ends it), as any
 * writer does. */
static grove_status write_through(const char *path, const void *head, size_t head_len, const void *body,
                                  size_t body_len)
{
    int fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) return write_fail(errno);
    struct stat st;
    int err = fstat(fd, &st) != 0 ? errno : 0;
    /* Replaced by a regular file since it was looked at: writing into it
     * would leave old bytes after ours. */
    if (!err && !S_ISCHR(st.st_mode) && !S_ISFIFO(st.st_mode)) {
        close(fd);
        return grove__fail(GROVE_IO_ERROR, "cannot write: it was replaced while being opened");
    }
    if (!err) err = write_all(fd, head, head_len);
    if (!err && body_len) err = write_all(fd, body, body_len);
    if (close(fd) != 0 && !err) err = errno;
    return err ? write_fail(err) : GROVE_OK;
}

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

static grove_status replace(const char *path, const void *head, size_t head_len, const void *body, size_t body_len)
{
    char *temp = grove__temp_name(path);
    if (!temp) return GROVE_OUT_OF_MEMORY;
    bool created;
    errno = 0;
    int err = write_parts(temp, head, head_len, body, body_len, &created);
    if (!err && rename(temp, path) != 0) err = errno;
    if (err && created) remove(temp);
    grove__free(temp);
    return err ? write_fail(err) : GROVE_OK;
}

grove_status grove__file_write_atomic(const char *path, const void *head, size_t head_len, const void *body,
                                      size_t body_len)
{
    struct stat st;
    if (stat(path, &st) != 0 || S_ISREG(st.st_mode)) return replace(path, head, head_len, body, body_len);
    if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) return write_through(path, head, head_len, body, body_len);
    return grove__fail(GROVE_IO_ERROR, "cannot write: %s; grove writes regular files, character devices and FIFOs",
                       S_ISDIR(st.st_mode)   ? "it is a folder"
                       : S_ISBLK(st.st_mode) ? "it is a block device"
                                             : "it is not a regular file");
}
