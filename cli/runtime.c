/* Run-time services for commands: library options with a progress bar,
 * clocks, peak memory and loading points. */
#include "cli.h"

#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

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

grove_options cli_options(const cli_common *common)
{
    grove_options o;
    grove_options_init(&o);
    o.threads = common->threads;
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

grove_status cli_load_points(const char *path, const cli_common *common, grove_array *out)
{
    grove_dtype raw = strcmp(common->dtype, "float32") == 0 ? GROVE_FLOAT32 : GROVE_FLOAT64;
    return grove_points_load(path, common->dims, raw, out);
}
