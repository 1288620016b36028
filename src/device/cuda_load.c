/* The CUDA backend's library, libgrove_cuda.so (cuda/backend.c, built
 * when nvcc is found): loaded at run time from the folder of the object
 * holding libgrove (libgrove.so, or the program linked with libgrove.a),
 * else by the dynamic linker's search, so libgrove itself never depends
 * on CUDA. */
#define _GNU_SOURCE /* dladdr */
#include "device.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#define CUDA_LIB "libgrove_cuda.so"

/* An address inside this object, for dladdr. */
static const char anchor;

/* dlopen of CUDA_LIB beside this object; the tried path's error in why. */
static void *open_beside(char *why, size_t cap)
{
    Dl_info self;
    if (!dladdr(&anchor, &self) || !self.dli_fname) return NULL;
    const char *slash = strrchr(self.dli_fname, '/');
    char path[4096];
    int len = slash ? (int)(slash - self.dli_fname) : 1;
    snprintf(path, sizeof path, "%.*s/%s", len, slash ? self.dli_fname : ".", CUDA_LIB);
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) snprintf(why, cap, "%s", dlerror());
    return lib;
}

const grove__backend *grove__cuda_backend(char *why, size_t cap)
{
    char beside[512] = "";
    void *lib = open_beside(beside, sizeof beside);
    if (!lib) lib = dlopen(CUDA_LIB, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
#ifdef GROVE_HAVE_CUDA
        snprintf(why, cap, "not built: %s is not beside libgrove nor on the library path (%s)", CUDA_LIB,
                 beside[0] ? beside : dlerror());
#else
        snprintf(why, cap, "not built: grove was built without its CUDA part (nvcc not found, or make CUDA=0)");
#endif
        return NULL;
    }
    const grove__backend *be = (const grove__backend *)dlsym(lib, GROVE__CUDA_SYMBOL);
    if (!be || be->abi != GROVE__BACKEND_ABI) {
        snprintf(why, cap, "not built: %s is from another version of grove (backend table %d, want %d)", CUDA_LIB,
                 be ? be->abi : -1, GROVE__BACKEND_ABI);
        dlclose(lib);
        return NULL;
    }
    /* Kept open for the process: the table lives in it. */
    return be;
}
