/* Run-time services for commands: library options with a progress bar
 * and the cancel flag signals raise, the one line of a failed run, clocks,
 * peak memory. */
#include "cli.h"

#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

/* The library polls a `const volatile int *`; a handler may only store to
 * a volatile sig_atomic_t, which must then be that int. */
_Static_assert(_Generic((sig_atomic_t)0, int: 1, default: 0), "sig_atomic_t is not int");
static volatile sig_atomic_t cancel_flag;
static volatile sig_atomic_t signal_received;
static bool interrupt_reported;

static void on_signal(int sig)
{
    signal_received = sig;
    cancel_flag = 1;
}

void cli_signals_install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    /* SA_RESTART: reads and writes carry on, and the command stops at the
     * next cancel check. SA_RESETHAND: a second signal ends grove at once
     * (a later run removes what it leaves, cli_remove_stale). */
    sa.sa_flags = SA_RESTART | SA_RESETHAND;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

int cli_interrupted(void) { return signal_received; }

static int report_interrupt(const char *command)
{
    int sig = signal_received;
    if (!interrupt_reported)
        cli_error(command, "interrupted by %s; unfinished outputs removed", sig == SIGINT ? "SIGINT" : "SIGTERM");
    interrupt_reported = true;
    return 128 + sig;
}

int cli_exit_status(const char *command, int rc) { return signal_received ? report_interrupt(command) : rc; }

static char noted[1024];

void cli_note_error(const char *fmt, ...)
{
    if (noted[0]) return;
    va_list args;
    va_start(args, fmt);
    vsnprintf(noted, sizeof noted, fmt, args);
    va_end(args);
}

int cli_fail(const char *command, const char *data, const char *queries, grove_status status)
{
    if (signal_received) return report_interrupt(command);
    const char *path = queries && strncmp(grove_last_error(), "queries", 7) == 0 ? queries : data;
    /* A noted message names its own file. */
    const char *detail = noted[0] ? noted : grove_last_error()[0] ? grove_last_error() : grove_status_str(status);
    if (path && !noted[0] && !strstr(detail, path)) cli_error(command, "%s: %s", path, detail);
    else cli_error(command, "%s", detail);
    return CLI_EXIT_FAIL;
}

/* Draws "stage [#####.....]  42%" on stderr, redrawn in place. */
static void progress_bar(void *user, const char *stage, double fraction)
{
    (void)user;
    enum { WIDTH = 30 };
    int filled = (int)(fraction * WIDTH + 0.5);
    if (filled < 0) filled = 0;
    if (filled > WIDTH) filled = WIDTH;
    char bar[WIDTH + 1];
    memset(bar, '#', (size_t)filled);
    memset(bar + filled, '.', (size_t)(WIDTH - filled));
    bar[WIDTH] = '\0';
    fprintf(stderr, "\r%-10s [%s] %3d%%%s", stage, bar, (int)(fraction * 100 + 0.5), fraction >= 1.0 ? "\n" : "");
    fflush(stderr);
}

/* The MPI context main() made (NULL when not started by a launcher). */
static grove_mpi *mpi_context;

void cli_mpi_set(grove_mpi *mpi) { mpi_context = mpi; }

const grove_mpi *cli_mpi(void) { return mpi_context; }

grove_options cli_options(const cli_common *common)
{
    grove_options o;
    grove_options_init(&o);
    o.threads = common->threads;
    o.mpi = mpi_context;
    o.cancel = &cancel_flag;
    bool show = common->progress == 1 || (common->progress == -1 && !common->quiet && isatty(STDERR_FILENO));
    if (show) o.progress = progress_bar;
    return o;
}

double cli_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

size_t cli_peak_rss(void)
{
    /* VmHWM first: on Linux ru_maxrss carries the peak of the process that
     * exec'ed grove (a large Python benchmark, say) over into grove's. */
    FILE *f = fopen("/proc/self/status", "r");
    if (f) {
        char line[256];
        unsigned long long kb = 0;
        int found = 0;
        while (!found && fgets(line, sizeof line, f)) found = sscanf(line, "VmHWM: %llu kB", &kb) == 1;
        fclose(f);
        if (found) return (size_t)kb * 1024;
    }
    struct rusage usage;
    if (getrusage(RUSAGE_SELF, &usage) != 0) return 0;
    return (size_t)usage.ru_maxrss * 1024; /* Linux reports kilobytes */
}

long cli_page_faults(void)
{
    struct rusage usage;
    return getrusage(RUSAGE_SELF, &usage) == 0 ? usage.ru_minflt : 0;
}

grove_status cli_device_take(grove_options *options, grove_device device)
{
    options->device = device;
    if (device != GROVE_DEVICE_CUDA && device != GROVE_DEVICE_OPENCL) return GROVE_OK;
    char why[512];
    if (grove_device_info(device, why, sizeof why)) return GROVE_OK;
    cli_note_error("--device %s cannot run here: %s", cli_device_name(device), why);
    return GROVE_UNSUPPORTED;
}
