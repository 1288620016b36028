/* grove info: version, build, the vector code the CPU runs, threads,
 * which optional parts were built, and whether each device backend can
 * run here (or exactly why not). */
#include "command.h"

#include <stdio.h>
#include <string.h>

/* "yes (what it is)" or "no (why not)" for a device backend. */
static void device_line(grove_device device, char *line, size_t cap)
{
    char text[448];
    int ok = grove_device_info(device, text, sizeof text);
    snprintf(line, cap, "%s (%s)", ok ? "yes" : "no", text);
}

/* The build info's line at p into line, and the next line's start: the
 * hdf5 line as it is here (a build with libhdf5 loads its HDF5 part,
 * libgrove_hdf5.so, at the first use, and says why where it cannot). */
static const char *build_line(const char *p, char *line, size_t cap)
{
    const char *end = strchr(p, '\n');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    if (strncmp(p, "hdf5: yes", 9) == 0 && !grove_hdf5_version())
        snprintf(line, cap, "hdf5: no (%s)", grove_last_error());
    else
        snprintf(line, cap, "%.*s", (int)len, p);
    return p + len + (end ? 1 : 0);
}

static grove_status run(void *state, cli_run *run)
{
    (void)state;
    int ranks = grove_mpi_size(run->options.mpi);
    if (run->common.quiet || grove_mpi_rank(run->options.mpi) != 0) return GROVE_OK;
    char cpu[512], cuda[512], opencl[512];
    grove_cpu_info(cpu, sizeof cpu); /* an unknown GROVE_CPU was refused before any command (main.c) */
    device_line(GROVE_DEVICE_CUDA, cuda, sizeof cuda);
    device_line(GROVE_DEVICE_OPENCL, opencl, sizeof opencl);
    char line[768];
    printf("grove %s\n", grove_version());
    for (const char *p = grove_build_info(); *p;) {
        p = build_line(p, line, sizeof line);
        printf("%s\n", line);
    }
    printf("cpu: %s\ncuda: %s\nopencl: %s\nthreads: %d\n", cpu, cuda, opencl, run->threads);
    if (ranks > 1) printf("ranks: %d\n", ranks);
    return GROVE_OK;
}

static void json(void *state, const cli_run *run, cli_json *j)
{
    (void)state;
    cli_json_str(j, "version", grove_version());
    cli_json_int(j, "ranks", grove_mpi_size(run->options.mpi));
    char cpu[512];
    grove_cpu_info(cpu, sizeof cpu);
    cli_json_str(j, "cpu", cpu);
    /* Each "key: value" line of the build info becomes a JSON string. */
    char line[768];
    for (const char *p = grove_build_info(); *p;) {
        p = build_line(p, line, sizeof line);
        char *colon = strstr(line, ": ");
        if (colon) {
            *colon = '\0';
            cli_json_str(j, line, colon + 2);
        }
    }
    device_line(GROVE_DEVICE_CUDA, line, sizeof line);
    cli_json_str(j, "cuda", line);
    device_line(GROVE_DEVICE_OPENCL, line, sizeof line);
    cli_json_str(j, "opencl", line);
}

int cmd_info(int argc, char **argv)
{
    static const cli_command command = {
        "info", "usage: grove info [--threads N] [--json] [--quiet]\n", NULL, run, NULL, NULL, json, NULL};
    return cli_command_main(&command, NULL, NULL, 0, argc, argv);
}
