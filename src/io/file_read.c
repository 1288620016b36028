/* Reading whole regular files, or exact ranges of them, with errors that say
 * what went wrong (the caller adds the path). */
#include "io_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

grove_status grove__file_open(const char *path, int *fd, size_t *size)
{
    /* O_NONBLOCK: opening a FIFO would otherwise wait for a writer before
     * the check below could refuse it. */
    int f = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (f < 0) return grove__fail(GROVE_IO_ERROR, "cannot open: %s", strerror(errno));
    struct stat st;
    if (fstat(f, &st) != 0) {
        int e = errno;
        close(f);
        return grove__fail(GROVE_IO_ERROR, "cannot stat: %s", strerror(e));
    }
    /* The size must be known before reading, so a header can be checked
     * against it before anything large is allocated. */
    if (!S_ISREG(st.st_mode)) {
        close(f);
        return grove__fail(GROVE_IO_ERROR, "%s", S_ISDIR(st.st_mode) ? "is a directory"
                                                 : S_ISFIFO(st.st_mode) ? "not a regular file (a FIFO)"
                                                                        : "not a regular file");
    }
    int flags = fcntl(f, F_GETFL);
    if (flags < 0 || fcntl(f, F_SETFL, flags & ~O_NONBLOCK) != 0) {
        int e = errno;
        close(f);
        return grove__fail(GROVE_IO_ERROR, "cannot open: %s", strerror(e));
    }
    if ((uintmax_t)st.st_size > SIZE_MAX) {
        close(f);
        return grove__fail(GROVE_TOO_LARGE, "file of %jd bytes does not fit the address space", (intmax_t)st.st_size);
    }
    *fd = f;
    *size = (size_t)st.st_size;
    return GROVE_OK;
}

grove_status grove__file_read_at(int fd, void *dst, size_t n, size_t offset)
{
    unsigned char *p = dst;
    while (n > 0) {
        /* Linux reads at most about 2 GiB per call; ask for 1 GiB at a time. */
        size_t chunk = n < ((size_t)1 << 30) ? n : (size_t)1 << 30;
        ssize_t got = pread(fd, p, chunk, (off_t)offset);
        if (got < 0) {
            if (errno == EINTR) continue;
            return grove__fail(GROVE_IO_ERROR, "read failed: %s", strerror(errno));
        }
        if (got == 0) return grove__fail(GROVE_IO_ERROR, "file shrank while being read");
        p += got;
        n -= (size_t)got;
        offset += (size_t)got;
    }
    return GROVE_OK;
}

grove_status grove__file_slurp(const char *path, void **data, size_t *size)
{
    int fd;
    size_t len;
    *data = NULL;
    *size = 0;
    grove_status s = grove__file_open(path, &fd, &len);
    if (s != GROVE_OK) return s;
    void *buf = grove__malloc(len, "file contents");
    if (!buf)
        s = GROVE_OUT_OF_MEMORY;
    else
        s = grove__file_read_at(fd, buf, len, 0);
    close(fd);
    if (s != GROVE_OK) {
        grove__free(buf);
        return s;
    }
    *data = buf;
    *size = len;
    return GROVE_OK;
}
