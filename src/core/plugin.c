/* grove__plugin_open: libgrove's optional parts that link heavy libraries
 * (libgrove_cuda.so with the CUDA driver, libgrove_hdf5.so with libhdf5)
 * are loaded at their first use, so a process that never uses them never
 * maps those libraries. */
#define _GNU_SOURCE /* dladdr */
#include "internal.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

/* An address inside the object holding libgrove, for dladdr. */
static const char anchor;

/* dlopen of name in `folder`/`below` of the object holding libgrove. */
static void *open_near(const char *name, const char *below, char *why, size_t cap)
{
    Dl_info self;
    if (!dladdr(&anchor, &self) || !self.dli_fname) return NULL;
    const char *slash = strrchr(self.dli_fname, '/');
    char path[4096];
    int len = slash ? (int)(slash - self.dli_fname) : 1;
    snprintf(path, sizeof path, "%.*s/%s%s", len, slash ? self.dli_fname : ".", below, name);
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib && why[0] == '\0') snprintf(why, cap, "%s", dlerror());
    return lib;
}

void *grove__plugin_open(const char *name, char *why, size_t cap)
{
    why[0] = '\0';
    void *lib = open_near(name, "", why, cap);      /* libgrove.so's folder, or the program's */
    if (!lib) lib = open_near(name, "../lib/", why, cap); /* PREFIX/lib for PREFIX/bin/grove */
    if (!lib) lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);  /* the dynamic linker's search */
    if (!lib && why[0] == '\0') snprintf(why, cap, "%s", dlerror());
    return lib;
}
