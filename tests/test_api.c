/* The public surface: only grove_ symbols exported from the shared library,
 * and the README's C example compiles, links and runs. */
#include "test.h"

TEST(api_shared_library_exports_only_grove_symbols)
{
    const char *so = getenv("GROVE_LIB_SO");
    if (!so) so = "build/libgrove.so";
    char command[1024], *out = NULL;
    snprintf(command, sizeof command, "nm -D --defined-only '%s' | awk '$2 ~ /[TDBR]/ {print $3}'", so);
    REQUIRE(test_run(command, &out) == 0);
    int exported = 0;
    for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
        CHECK_MSG(strncmp(line, "grove_", 6) == 0, "exported symbol without the grove_ prefix: %s", line);
        exported++;
    }
    CHECK(exported > 20);
    free(out);
}

TEST(api_readme_example_compiles_and_runs)
{
    FILE *f = fopen("README.md", "r");
    REQUIRE(f != NULL);
    char line[1024];
    FILE *src = fopen(test_path("example.c"), "w");
    REQUIRE(src != NULL);
    int state = 0; /* 0 before the block, 1 inside, 2 after */
    while (state < 2 && fgets(line, sizeof line, f)) {
        if (state == 0 && strncmp(line, "```c", 4) == 0) state = 1;
        else if (state == 1 && strncmp(line, "```", 3) == 0) state = 2;
        else if (state == 1) fputs(line, src);
    }
    fclose(f);
    fclose(src);
    REQUIRE(state == 2);
    const char *cc = getenv("GROVE_CC"), *lib = getenv("GROVE_LIB_A"), *sanitize = getenv("GROVE_SANITIZE");
    char command[2048], *out = NULL;
    snprintf(command, sizeof command, "%s -std=c11 -Wall -Wextra -Werror %s -Iinclude %s -o %s %s -fopenmp -lm && %s",
             cc && *cc ? cc : "cc", sanitize ? sanitize : "", test_path("example.c"), test_path("example"),
             lib && *lib ? lib : "build/libgrove.a", test_path("example"));
    int rc = test_run(command, &out);
    CHECK_MSG(rc == 0, "README example failed (%d):\n%s", rc, out);
    CHECK(strstr(out, "slots") != NULL);
    free(out);
}
