/* The files a command names, checked before any work: each output's
 * suffix is the format grove writes there, no two outputs are one file,
 * and no output is an input. */
#define _XOPEN_SOURCE 700 /* realpath */
#include "cli.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static bool has_suffix(const char *path, const char *suffix)
{
    size_t n = strlen(path), m = strlen(suffix);
    if (n <= m) return false;
    for (size_t i = 0; i < m; i++)
        if (tolower((unsigned char)path[n - m + i]) != suffix[i]) return false;
    return true;
}

/* Drop "." and empty parts of an absolute path and let ".." remove the part
 * before it, in place. */
static void clean_parts(char *path)
{
    char *out = path;
    for (const char *p = path; *p;) {
        while (*p == '/') p++;
        const char *end = strchr(p, '/');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == 0) break;
        if (len == 2 && p[0] == '.' && p[1] == '.') {
            while (out > path && *--out != '/') {}
        } else if (!(len == 1 && p[0] == '.')) {
            *out++ = '/';
            memmove(out, p, len);
            out += len;
        }
        p += len;
    }
    if (out == path) *out++ = '/';
    *out = '\0';
}

/* An absolute spelling of path, the same for every spelling of one file
 * whose folder exists (its folder through realpath), else lexically
 * cleaned; malloc'd, NULL when out of memory. */
static char *normalise(const char *path)
{
    const char *slash = strrchr(path, '/');
    char *dir = slash ? strndup(path, (size_t)(slash - path) + 1) : strdup(".");
    const char *base = slash ? slash + 1 : path;
    char *real = dir ? realpath(dir, NULL) : NULL;
    char cwd[4096] = "";
    if (!real && path[0] != '/' && !getcwd(cwd, sizeof cwd)) cwd[0] = '\0';
    const char *head = real ? real : cwd;
    const char *tail = real ? base : path;
    size_t cap = strlen(head) + strlen(tail) + 3;
    char *out = malloc(cap);
    if (out) {
        snprintf(out, cap, "%s/%s", head, tail);
        clean_parts(out);
    }
    free(dir);
    free(real);
    return out;
}

/* True when a and b name one file: the same inode if both exist, else the
 * same normalised path. */
static bool same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    if (stat(a, &sa) == 0 && stat(b, &sb) == 0) return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    char *na = normalise(a), *nb = normalise(b);
    bool same = na && nb ? strcmp(na, nb) == 0 : strcmp(a, b) == 0;
    free(na);
    free(nb);
    return same;
}

bool cli_ends_with(const char *path, const char *suffix)
{
    size_t n = strlen(path), m = strlen(suffix);
    return n >= m && strcmp(path + n - m, suffix) == 0;
}

cli_file *cli_opt_file(const cli_opt *opt)
{
    return opt->kind >= OPT_POINTS && opt->kind <= OPT_TABLE ? (cli_file *)opt->dest : NULL;
}

static bool is_input(const cli_opt *o) { return o->kind == OPT_POINTS || o->kind == OPT_INPUT; }
static const char *path_of(const cli_opt *o) { return cli_opt_file(o) ? cli_opt_file(o)->path : NULL; }
/* The option's first spelling ("-o" of "-o|--output"), for messages. */
static int flag_len(const cli_opt *o) { return (int)strcspn(o->name, "|"); }

/* The kind of file at path (S_IFREG, S_IFCHR, ...), 0 when none. */
static mode_t file_kind(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? st.st_mode & S_IFMT : 0;
}

/* A character device or FIFO (written through, whatever its name: a table
 * there is .npy unless the name ends in .csv). */
static bool is_device_or_fifo(const char *path) { return S_ISCHR(file_kind(path)) || S_ISFIFO(file_kind(path)); }

static bool suffix_ok(const char *command, const cli_opt *o)
{
    const char *path = path_of(o);
    if (is_input(o) || is_device_or_fifo(path)) return true;
    if (o->kind == OPT_TABLE) {
        if (has_suffix(path, ".npy") || has_suffix(path, ".csv") || has_suffix(path, ".hdf5") || has_suffix(path, ".h5"))
            return true;
        cli_error(command, "%.*s %s: grove writes a table there as .npy, .csv or .hdf5; give a name ending in one of "
                  "them", flag_len(o), o->name, path);
        return false;
    }
    const char *suffix = o->kind == OPT_NPY ? ".npy" : ".svg";
    if (has_suffix(path, suffix)) return true;
    cli_error(command, "%.*s %s: grove writes %s there; give a name ending in %s", flag_len(o), o->name, path,
              o->kind == OPT_NPY ? ".npy arrays" : "an SVG picture", suffix);
    return false;
}

/* Whether folder is one grove can create files in; else a usage error
 * about the output o. */
static bool folder_writable(const char *command, const cli_opt *o, const char *folder)
{
    if (access(folder, W_OK | X_OK) == 0) return true;
    cli_error(command, "%.*s %s: cannot write in the folder %s: %s", flag_len(o), o->name, path_of(o), folder,
              strerror(errno));
    return false;
}

/* An output grove can put into place: a regular file or a new name in a
 * folder it can write, or a character device or FIFO (written through,
 * staged in the temporary folder). */
static bool target_ok(const char *command, const cli_opt *o)
{
    const char *path = path_of(o);
    if (is_device_or_fifo(path)) return folder_writable(command, o, cli_temp_folder());
    struct stat st;
    bool exists = stat(path, &st) == 0;
    if (!exists && errno != ENOENT) {
        cli_error(command, "%.*s %s: %s", flag_len(o), o->name, path, strerror(errno));
        return false;
    }
    if (exists && !S_ISREG(st.st_mode)) {
        cli_error(command, "%.*s %s is %s; grove writes regular files, character devices (/dev/null) and FIFOs",
                  flag_len(o), o->name, path,
                  S_ISDIR(st.st_mode) ? "a folder" : S_ISBLK(st.st_mode) ? "a block device" : "a socket");
        return false;
    }
    const char *slash = strrchr(path, '/');
    char *folder = slash ? strndup(path, (size_t)(slash - path) + 1) : strdup(".");
    bool ok = !folder || folder_writable(command, o, folder);
    free(folder);
    return ok;
}

bool cli_check_paths(const char *command, const cli_opt *opts, size_t nopts)
{
    for (size_t i = 0; i < nopts; i++)
        if (path_of(&opts[i]) && !suffix_ok(command, &opts[i])) return false;
    for (size_t i = 0; i < nopts; i++)
        if (path_of(&opts[i]) && !is_input(&opts[i]) && !target_ok(command, &opts[i])) return false;
    for (size_t i = 0; i < nopts; i++) {
        const cli_opt *a = &opts[i];
        if (!path_of(a) || is_input(a)) continue;
        for (size_t k = 0; k < nopts; k++) {
            const cli_opt *b = &opts[k];
            if (k == i || !path_of(b) || (!is_input(b) && k < i) || !same_file(path_of(a), path_of(b))) continue;
            /* Outputs may share a character device: --a /dev/null --b /dev/null. */
            if (!is_input(b) && S_ISCHR(file_kind(path_of(a)))) continue;
            if (is_input(b))
                cli_error(command, "%.*s %s would overwrite the input %.*s", flag_len(a), a->name, path_of(a),
                          flag_len(b), b->name);
            else
                cli_error(command, "%.*s and %.*s name the same file %s", flag_len(a), a->name, flag_len(b), b->name,
                          path_of(a));
            return false;
        }
    }
    return true;
}
