/* Writing a finished output into a character device or FIFO (/dev/null, a
 * pipe), copied from its staged file: such a file is never renamed over.
 * Every wait (for a FIFO's reader, on a full pipe) polls the signal flag,
 * so the first Ctrl-C stops it, and a reader that leaves is a write error,
 * not SIGPIPE. */
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* How long each wait lasts before the signal flag is looked at again. */
enum { WAIT_MS = 20 };

static void pause_briefly(void)
{
    const struct timespec t = {0, WAIT_MS * 1000000L};
    nanosleep(&t, NULL);
}

/* path opened for writing, without blocking; a FIFO without a reader is
 * waited for (said once on stderr when `command` is not NULL). -1 with
 * errno set on failure, EINTR after a signal. */
static int open_writer(const char *path, const char *command)
{
    struct stat st;
    bool fifo = stat(path, &st) == 0 && S_ISFIFO(st.st_mode), told = false;
    for (;;) {
        int fd = open(path, O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        /* ENXIO: a FIFO that no process has open for reading. */
        if (fd >= 0 || !fifo || errno != ENXIO) return fd;
        if (cli_interrupted()) {
            errno = EINTR;
            return -1;
        }
        if (command && !told)
            fprintf(stderr, "grove %s: waiting for a reader of the FIFO %s (Ctrl-C stops)\n", command, path);
        told = true;
        pause_briefly();
    }
}

/* len bytes to the non-blocking fd; 0 or an errno value (EINTR after a
 * signal). */
static int write_all(int fd, const char *p, size_t len)
{
    while (len > 0) {
        ssize_t put = write(fd, p, len);
        if (put >= 0) {
            p += put;
            len -= (size_t)put;
            continue;
        }
        if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return errno;
        if (cli_interrupted()) return EINTR;
        struct pollfd wait = {fd, POLLOUT, 0};
        poll(&wait, 1, WAIT_MS);
    }
    return 0;
}

/* The file at from, whole, into the open fd; 0 or an errno value. */
static int copy(const char *from, int fd)
{
    FILE *in = fopen(from, "rb");
    if (!in) return errno;
    char buf[1 << 16];
    int err = 0;
    for (size_t got; !err && (got = fread(buf, 1, sizeof buf, in)) > 0;) err = write_all(fd, buf, got);
    if (!err && ferror(in)) err = EIO;
    fclose(in);
    return err;
}

grove_status cli_write_through(const char *from, const char *path, const char *command)
{
    struct sigaction ignore, pipe_before;
    memset(&ignore, 0, sizeof ignore);
    ignore.sa_handler = SIG_IGN;
    sigemptyset(&ignore.sa_mask);
    sigaction(SIGPIPE, &ignore, &pipe_before);
    int fd = open_writer(path, command), err = fd < 0 ? errno : copy(from, fd);
    if (fd >= 0 && close(fd) != 0 && !err) err = errno;
    sigaction(SIGPIPE, &pipe_before, NULL);
    if (err == EINTR && cli_interrupted()) return GROVE_CANCELLED;
    if (!err) return GROVE_OK;
    errno = err;
    return cli_io_fail(path, fd < 0 ? "open" : "write");
}
