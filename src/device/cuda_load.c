/* The CUDA backend's library, libgrove_cuda.so (cuda/backend.c, built
 * when nvcc is found), loaded at its first use (grove__plugin_open), so
 * libgrove itself never depends on CUDA. */
#include "device.h"

#include <dlfcn.h>
#include <stdio.h>

#define CUDA_LIB "libgrove_cuda.so"

const grove__backend *grove__cuda_backend(char *why, size_t cap)
{
    char near[768];
    void *lib = grove__plugin_open(CUDA_LIB, near, sizeof near);
    if (!lib) {
#ifdef GROVE_HAVE_CUDA
        snprintf(why, cap, "not built: %s", near);
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
