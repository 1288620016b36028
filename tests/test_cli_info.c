/* grove info's account of the machine: the vector code the CPU dispatch
 * picked (checked against the kernel's own list of the processor's
 * features, /proc/cpuinfo), why CUDA is off, and GROVE_CPU values grove
 * does not know refused by every command. */
#include "test.h"

#include <stdbool.h>
#include <unistd.h>

#if defined(__x86_64__)
#define X86_64 true
#else
#define X86_64 false
#endif

/* Whether /proc/cpuinfo's flags line lists flag (false when unreadable). */
static bool cpuinfo_has(const char *flag)
{
    char *text = test_read_file("/proc/cpuinfo", NULL);
    bool found = false;
    const char *line = text ? strstr(text, "\nflags") : NULL;
    if (line) {
        const char *end = strchr(line + 1, '\n');
        size_t len = strlen(flag);
        for (const char *p = strstr(line, flag); p && (!end || p < end); p = strstr(p + 1, flag))
            if (p[-1] == ' ' && (p[len] == ' ' || p[len] == '\n')) found = true;
    }
    free(text);
    return found;
}

/* `GROVE_CPU=cap grove info` (cap NULL: unset): its cpu line's first word
 * into path (32 bytes). */
static void info_cpu_path(const char *cap, char path[32])
{
    char command[4096], *out = NULL;
    if (cap) snprintf(command, sizeof command, "GROVE_CPU=%s %s info", cap, test_cli());
    else snprintf(command, sizeof command, "env -u GROVE_CPU %s info", test_cli());
    path[0] = '\0';
    CHECK_MSG(test_run(command, &out) == 0, "%s: %s", command, out);
    const char *line = out ? strstr(out, "\ncpu: ") : NULL;
    CHECK_MSG(line != NULL, "%s printed no cpu line: %s", command, out);
    if (line) sscanf(line, "\ncpu: %31s", path);
    free(out);
}

TEST(cli_info_names_the_vector_code_the_cpu_runs)
{
    char *cpuinfo = test_read_file("/proc/cpuinfo", NULL);
    if (!cpuinfo) return; /* not Linux: nothing independent to compare with */
    free(cpuinfo);
    bool x86 = X86_64;
    const char *widest = !x86 ? "portable" : cpuinfo_has("avx512f") ? "avx512" : cpuinfo_has("avx2") ? "avx2" : "portable";
    const char *capped = !x86 || !cpuinfo_has("avx2") ? "portable" : "avx2";
    char path[32];
    info_cpu_path(NULL, path);
    CHECK_MSG(strcmp(path, widest) == 0, "GROVE_CPU unset: grove info says %s, the processor has %s", path, widest);
    info_cpu_path("native", path);
    CHECK_MSG(strcmp(path, widest) == 0, "GROVE_CPU=native: grove info says %s, the processor has %s", path, widest);
    info_cpu_path("avx2", path);
    CHECK_MSG(strcmp(path, capped) == 0, "GROVE_CPU=avx2: grove info says %s, want %s", path, capped);
    info_cpu_path("portable", path);
    CHECK_MSG(strcmp(path, "portable") == 0, "GROVE_CPU=portable: grove info says %s", path);
}

TEST(cli_info_says_whether_each_device_runs_and_why_not)
{
    char *out = NULL;
    REQUIRE(test_grove("info", &out) == 0);
    static const struct {
        const char *name;
        grove_device device;
    } devices[] = {{"cuda", GROVE_DEVICE_CUDA}, {"opencl", GROVE_DEVICE_OPENCL}};
    for (size_t k = 0; k < 2; k++) {
        /* "NAME: yes (the device)" or "NAME: no (why)", as the library says. */
        char text[512], want[600];
        int ok = grove_device_info(devices[k].device, text, sizeof text);
        snprintf(want, sizeof want, "\n%s: %s (%s)\n", devices[k].name, ok ? "yes" : "no", text);
        CHECK_MSG(strstr(out, want) != NULL, "no line '%s' in: %s", want + 1, out);
        CHECK_MSG(ok || strncmp(text, "not built: ", 11) == 0 || strncmp(text, "no driver: ", 11) == 0 ||
                      strncmp(text, "no device: ", 11) == 0 || strncmp(text, "failed: ", 8) == 0,
                  "%s: '%s'", devices[k].name, text);
    }
    free(out);
}

TEST(cli_refuses_an_unknown_grove_cpu)
{
    /* Every command, info included, before any work: status 2 and one line
     * naming GROVE_CPU, the value and the accepted ones; no output file. */
    char gen[1024];
    snprintf(gen, sizeof gen, "gen uniform --n 10 --dims 2 -o %s", test_path("cpu_gen.npy"));
    const char *commands[] = {"info", gen};
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        char command[4096], *out = NULL;
        snprintf(command, sizeof command, "GROVE_CPU=avx-512 %s %s", test_cli(), commands[i]);
        CHECK_MSG(test_run(command, &out) == 2, "%s: %s", command, out);
        CHECK_MSG(out && strstr(out, ": GROVE_CPU=avx-512: expected portable, avx2 or native (or unset)\n") &&
                      strchr(out, '\n') == out + strlen(out) - 1,
                  "%s said: %s", command, out);
        free(out);
    }
    CHECK(access(test_path("cpu_gen.npy"), F_OK) != 0);
}
