/* grove__plugin_open: libgrove's optional parts that link heavy libraries
 * (libgrove_cuda.so with the CUDA driver, libgrove_hdf5.so with libhdf5)
 * are loaded at their first use, so a process that never uses them never
 * maps those libraries. */
#define _GNU_SOURCE /* dladdr, dladdr1 */
#include "internal.h"

#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* An address inside the object holding libgrove, for dladdr. */
static const char anchor;

/* The path of the object holding libgrove: libgrove.so's, or the
 * program's, whose dladdr name is only its argv[0] (a bare "grove" when
 * run through PATH): /proc/self/exe then. */
static bool own_path(char *path, size_t cap)
{
    Dl_info self;
#if defined(__GLIBC__)
    struct link_map *map = NULL;
    if (!dladdr1(&anchor, &self, (void **)&map, RTLD_DL_LINKMAP) || !self.dli_fname) return false;
    if (map && map->l_name[0] == '\0') {
        ssize_t len = readlink("/proc/self/exe", path, cap - 1);
        if (len <= 0) return false;
        path[len] = '\0';
        return true;
    }
#else
    if (!dladdr(&anchor, &self) || !self.dli_fname) return false;
#endif
    snprintf(path, cap, "%s", self.dli_fname);
    return true;
}

/* dlopen of folder/name (RTLD_NOW, local); the first failure's error in why. */
static void *open_at(const char *folder, const char *name, char *why, size_t cap)
{
    char path[4096 + 256];
    snprintf(path, sizeof path, "%s%s", folder, name);
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib && why[0] == '\0') snprintf(why, cap, "%s", dlerror());
    return lib;
}

void *grove__plugin_open(const char *name, char *why, size_t cap)
{
    char own[4096], folder[4096 + 16], first[512] = "";
    const char *slash = own_path(own, sizeof own) ? strrchr(own, '/') : NULL;
    int len = slash ? (int)(slash - own) + 1 : 0;
    void *lib = NULL;
    if (slash) { /* the folder of libgrove.so or of the program, then ../lib from it (PREFIX/bin/grove) */
        snprintf(folder, sizeof folder, "%.*s", len, own);
        lib = open_at(folder, name, first, sizeof first);
        snprintf(folder, sizeof folder, "%.*s../lib/", len, own);
        if (!lib) lib = open_at(folder, name, first, sizeof first);
    }
    if (!lib) lib = open_at("", name, first, sizeof first); /* the dynamic linker's search */
    if (!lib) snprintf(why, cap, "%s is not beside libgrove, in ../lib from there nor on the library path (%s)", name,
                       first);
    return lib;
}
