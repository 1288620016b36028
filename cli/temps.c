/* The temporary files grove keeps beside an output (cli.h): their names,
 * cut to fit the folder's longest name, and the removal of those that runs
 * which have ended left behind. */
#include "cli.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The longest file name in the folder dir. */
static size_t name_max(const char *dir)
{
    long max = pathconf(dir, _PC_NAME_MAX);
    return max > 0 ? (size_t)max : 255;
}

/* path's folder ("." for a bare name; "/" keeps its slash) into buf, and
 * where its last part starts. */
static const char *split(const char *path, char *buf, size_t cap)
{
    const char *slash = strrchr(path, '/');
    snprintf(buf, cap, "%.*s", slash ? (int)(slash - path) + 1 : 1, slash ? path : ".");
    return slash ? slash + 1 : path;
}

char *cli_temp_beside(const char *path, const char *suffix)
{
    char dir[4096];
    const char *base = split(path, dir, sizeof dir);
    size_t dir_len = (size_t)(base - path), base_len = strlen(base), suffix_len = strlen(suffix);
    size_t max = name_max(dir);
    size_t keep = base_len + suffix_len <= max ? base_len : max > suffix_len ? max - suffix_len : 0;
    size_t cap = dir_len + keep + suffix_len + 1;
    char *temp = malloc(cap);
    if (temp) snprintf(temp, cap, "%.*s%s", (int)(dir_len + keep), path, suffix);
    return temp;
}

/* Strip ".DIGITS" from the end of name[0, *end); its value in *value. */
static bool strip_number(const char *name, size_t *end, long *value)
{
    size_t e = *end, b = e;
    while (b > 0 && isdigit((unsigned char)name[b - 1])) b--;
    if (b == e || e - b > 9 || b < 2 || name[b - 1] != '.') return false;
    long v = 0;
    for (size_t i = b; i < e; i++) v = 10 * v + (name[i] - '0');
    *value = v;
    *end = b - 1;
    return true;
}

static bool strip_word(const char *name, size_t *end, const char *word)
{
    size_t m = strlen(word);
    if (*end < m || memcmp(name + *end - m, word, m) != 0) return false;
    *end -= m;
    return true;
}

/* The temporaries grove writes: "NAME.grove-partial.PID" (staged outputs),
 * "NAME.grove-old.PID" (a replaced output kept while a set is committed),
 * "NAME.tmp.PID.N" (the library's atomic writes, src/io), NAME cut where
 * the whole name would be too long. *owner_len: NAME's length. */
static bool parse_temp(const char *name, size_t *owner_len, long *pid)
{
    size_t end = strlen(name), e = end;
    long n, p = 0;
    bool found = false;
    if (strip_number(name, &e, &n) && strip_number(name, &e, &p) && strip_word(name, &e, ".tmp")) {
        end = e;
        found = true;
    }
    e = end;
    if (strip_number(name, &e, &n) && (strip_word(name, &e, ".grove-partial") || strip_word(name, &e, ".grove-old"))) {
        end = e;
        p = n;
        found = true;
    }
    *owner_len = end;
    *pid = p;
    return found && end > 0;
}

/* No process holds pid now (kill reports ESRCH; EPERM means one does). */
static bool process_ended(long pid)
{
    return pid > 0 && (pid_t)pid != getpid() && kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

void cli_remove_stale(const char *path, bool prefix)
{
    char dir[4096];
    const char *base = split(path, dir, sizeof dir);
    size_t base_len = strlen(base), max = name_max(dir);
    DIR *d = opendir(dir);
    if (!d) return;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        size_t owner;
        long pid;
        if (!parse_temp(e->d_name, &owner, &pid)) continue;
        /* path's own temporaries, also those whose name was cut (which then
         * fill the longest name exactly); with prefix, those of every name
         * that starts with base. */
        bool ours = prefix ? owner >= base_len && strncmp(e->d_name, base, base_len) == 0
                           : owner <= base_len && strncmp(e->d_name, base, owner) == 0 &&
                                 (owner == base_len || strlen(e->d_name) == max);
        if (!ours || !process_ended(pid)) continue;
        char stale[8192];
        snprintf(stale, sizeof stale, "%s%s%s", dir, cli_ends_with(dir, "/") ? "" : "/", e->d_name);
        unlink(stale);
    }
    closedir(d);
}
