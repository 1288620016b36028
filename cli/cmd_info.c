/* grove info: version, build, threads and which optional parts were built. */
#include "cli.h"

#include <stdio.h>
#include <string.h>

int cmd_info(int argc, char **argv)
{
    const char *positional[1];
    size_t npositional;
    cli_common common;
    if (cli_help(argc, argv, "usage: grove info [--threads N] [--json] [--quiet]\n")) return CLI_EXIT_OK;
    if (!cli_parse("info", argc, argv, NULL, 0, positional, 0, &npositional, &common)) return CLI_EXIT_USAGE;
    grove_options options = cli_options(&common);
    int threads = grove_options_threads(&options);
    if (!common.quiet) {
        printf("grove %s\n%sthreads: %d\n", grove_version(), grove_build_info(), threads);
    }
    if (common.json) {
        cli_json j;
        cli_json_begin(&j, "info");
        cli_json_str(&j, "version", grove_version());
        /* Each "key: value" line of the build info becomes a JSON string. */
        char line[512];
        for (const char *p = grove_build_info(); *p;) {
            const char *end = strchr(p, '\n');
            size_t len = end ? (size_t)(end - p) : strlen(p);
            if (len >= sizeof line) len = sizeof line - 1;
            memcpy(line, p, len);
            line[len] = '\0';
            char *colon = strstr(line, ": ");
            if (colon) {
                *colon = '\0';
                cli_json_str(&j, line, colon + 2);
            }
            p += len + (end ? 1 : 0);
        }
        cli_json_finish(&j, 0.0, 0.0, threads);
    }
    return CLI_EXIT_OK;
}
