/* The CUDA backend (../backend.h) of libgrove_cuda.so: the driver API of
 * libcuda.so.1, opened with dlopen at the first use (so the library loads
 * where there is no driver, and grove_device_info says so), and the
 * kernels as a fatbin made by nvcc from ../kernels/all.h, loaded with
 * cuModuleLoadData (machine code for the GPU where the build has it, else
 * the driver compiles the PTX). The device: CUDA device 0, through its
 * primary context, made current on the calling thread by every call. */
#include <cuda.h>

#include "../backend.h"
#include "../kernel_names.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_fatbin.inc"

/* The entry points used (with the versioned names cuda.h maps them to),
 * as function pointers. */
#define CU_FUNCTIONS(X)                                                                                      \
    X(cuInit, cuInit) X(cuDriverGetVersion, cuDriverGetVersion) X(cuDeviceGetCount, cuDeviceGetCount)       \
    X(cuDeviceGet, cuDeviceGet) X(cuDeviceGetName, cuDeviceGetName)                                         \
    X(cuDeviceTotalMem_v2, cuDeviceTotalMem_v2) X(cuDeviceGetAttribute, cuDeviceGetAttribute)               \
    X(cuDevicePrimaryCtxRetain, cuDevicePrimaryCtxRetain)                                                   \
    X(cuDevicePrimaryCtxRelease_v2, cuDevicePrimaryCtxRelease_v2) X(cuCtxSetCurrent, cuCtxSetCurrent)       \
    X(cuCtxSynchronize, cuCtxSynchronize) X(cuModuleLoadData, cuModuleLoadData)                             \
    X(cuModuleUnload, cuModuleUnload) X(cuModuleGetFunction, cuModuleGetFunction)                           \
    X(cuMemAlloc_v2, cuMemAlloc_v2) X(cuMemFree_v2, cuMemFree_v2) X(cuMemcpyHtoD_v2, cuMemcpyHtoD_v2)      \
    X(cuMemcpyDtoH_v2, cuMemcpyDtoH_v2) X(cuLaunchKernel, cuLaunchKernel)                                   \
    X(cuGetErrorString, cuGetErrorString)

typedef struct cu_api {
#define CU_FIELD(f, sym) __typeof__(&sym) f;
    CU_FUNCTIONS(CU_FIELD)
#undef CU_FIELD
} cu_api;

struct grove__dev {
    void *lib;
    cu_api api;
    CUdevice device;
    CUcontext ctx;
    CUmodule module;
    grove__names kernels; /* functions of the module: nothing to release */
    char err[512];
};

struct grove__dbuf {
    CUdeviceptr ptr;
};

/* The driver's words for r, or the few that matter before it works. */
static const char *cu_text(const grove__dev *dev, CUresult r)
{
    const char *text = NULL;
    if (dev->api.cuGetErrorString && dev->api.cuGetErrorString(r, &text) == CUDA_SUCCESS && text) return text;
    switch (r) {
    case CUDA_ERROR_STUB_LIBRARY: return "libcuda.so.1 is the toolkit's stub, not a driver";
    case CUDA_ERROR_NO_DEVICE: return "no CUDA-capable device is detected";
    case CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER: return "the driver is older than the CUDA grove was built with";
    default: return "an error the driver does not name";
    }
}

static int fail(grove__dev *dev, CUresult r, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(grove__dev *dev, CUresult r, const char *fmt, ...)
{
    char what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    snprintf(dev->err, sizeof dev->err, "cuda: %s: %s (%d)", what, cu_text(dev, r), (int)r);
    return 1;
}

/* The kernel module's version from /proc (the driver's own number), or
 * else the CUDA version the driver supports. */
static void driver_version(const grove__dev *dev, char *buf, size_t cap)
{
    int v = 0;
    dev->api.cuDriverGetVersion(&v);
    char line[256] = "";
    FILE *f = fopen("/proc/driver/nvidia/version", "r");
    if (f) {
        if (!fgets(line, sizeof line, f)) line[0] = '\0';
        fclose(f);
    }
    const char *module = strstr(line, "Kernel Module");
    char number[32] = "";
    if (module && sscanf(module + strlen("Kernel Module"), " %31s", number) == 1)
        snprintf(buf, cap, "%s, CUDA %d.%d", number, v / 1000, v % 1000 / 10);
    else snprintf(buf, cap, "CUDA %d.%d", v / 1000, v % 1000 / 10);
}

static void describe(const grove__dev *dev, grove__dev_info *info)
{
    memset(info, 0, sizeof *info);
    if (dev->api.cuDeviceGetName(info->name, (int)sizeof info->name, dev->device) != CUDA_SUCCESS)
        snprintf(info->name, sizeof info->name, "unknown");
    snprintf(info->platform, sizeof info->platform, "CUDA");
    driver_version(dev, info->driver, sizeof info->driver);
    size_t mem = 0;
    int units = 0, group = 0;
    dev->api.cuDeviceTotalMem_v2(&mem, dev->device);
    dev->api.cuDeviceGetAttribute(&units, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev->device);
    dev->api.cuDeviceGetAttribute(&group, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, dev->device);
    info->memory = mem;
    info->max_alloc = mem;
    /* What a kernel gets without opting in to more. */
    info->local_memory = 48 * 1024;
    info->max_group = (uint32_t)group;
    info->units = (uint32_t)units;
    info->fp64 = 1;
    info->fp32_denormals = 1; /* the kernels are built without -ftz */
    info->is_gpu = 1;
}

static void cu_close(grove__dev *dev)
{
    if (!dev) return;
    if (dev->ctx) {
        dev->api.cuCtxSetCurrent(dev->ctx);
        if (dev->module) dev->api.cuModuleUnload(dev->module);
        dev->api.cuDevicePrimaryCtxRelease_v2(dev->device);
    }
    grove__names_free(&dev->kernels);
    if (dev->lib) dlclose(dev->lib);
    free(dev);
}

static int cu_open(grove__dev **out, grove__dev_info *info, char *why, size_t cap)
{
    *out = NULL;
    grove__dev *dev = calloc(1, sizeof *dev);
    if (!dev) {
        snprintf(why, cap, "failed: out of memory");
        return GROVE__DEV_FAILED;
    }
    dev->lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!dev->lib) {
        snprintf(why, cap, "no driver: %s", dlerror());
        cu_close(dev);
        return GROVE__DEV_NO_DRIVER;
    }
#define CU_LOAD(f, sym)                                                                                      \
    *(void **)&dev->api.f = dlsym(dev->lib, #sym);                                                           \
    if (!dev->api.f) {                                                                                       \
        snprintf(why, cap, "no driver: libcuda.so.1 has no %s (a driver older than CUDA 12?)", #sym);        \
        cu_close(dev);                                                                                       \
        return GROVE__DEV_NO_DRIVER;                                                                         \
    }
    CU_FUNCTIONS(CU_LOAD)
#undef CU_LOAD
    CUresult r = dev->api.cuInit(0);
    int count = 0;
    if (r == CUDA_SUCCESS) r = dev->api.cuDeviceGetCount(&count);
    if (r != CUDA_SUCCESS || count == 0) {
        if (r != CUDA_SUCCESS) snprintf(why, cap, "no device: cuInit: %s (%d)", cu_text(dev, r), (int)r);
        else snprintf(why, cap, "no device: the driver sees no CUDA device");
        cu_close(dev);
        return GROVE__DEV_NO_DEVICE;
    }
    r = dev->api.cuDeviceGet(&dev->device, 0);
    if (r == CUDA_SUCCESS) r = dev->api.cuDevicePrimaryCtxRetain(&dev->ctx, dev->device);
    if (r != CUDA_SUCCESS) {
        snprintf(why, cap, "failed: the device's context could not be made: %s", cu_text(dev, r));
        dev->ctx = NULL;
        cu_close(dev);
        return GROVE__DEV_FAILED;
    }
    describe(dev, info);
    *out = dev;
    return 0;
}

static const char *cu_error(const grove__dev *dev) { return dev->err; }

static int current(grove__dev *dev)
{
    CUresult r = dev->api.cuCtxSetCurrent(dev->ctx);
    return r == CUDA_SUCCESS ? 0 : fail(dev, r, "cuCtxSetCurrent");
}

static int cu_program(grove__dev *dev, const char *source, const char *options)
{
    (void)source, (void)options;
    if (current(dev)) return 1;
    CUresult r = dev->api.cuModuleLoadData(&dev->module, grove_cuda_fatbin);
    return r == CUDA_SUCCESS ? 0 : fail(dev, r, "the kernels do not load on this GPU (cuModuleLoadData)");
}

static int cu_alloc(grove__dev *dev, size_t bytes, grove__dbuf **out)
{
    *out = NULL;
    if (current(dev)) return 1;
    grove__dbuf *b = malloc(sizeof *b);
    if (!b) return fail(dev, CUDA_ERROR_OUT_OF_MEMORY, "out of host memory");
    CUresult r = dev->api.cuMemAlloc_v2(&b->ptr, bytes ? bytes : 1);
    if (r != CUDA_SUCCESS) {
        free(b);
        return fail(dev, r, "a buffer of %zu bytes", bytes);
    }
    *out = b;
    return 0;
}

static void cu_release(grove__dev *dev, grove__dbuf *buf)
{
    if (!buf) return;
    if (!current(dev)) dev->api.cuMemFree_v2(buf->ptr);
    free(buf);
}

static int cu_write(grove__dev *dev, grove__dbuf *buf, size_t offset, const void *src, size_t bytes)
{
    if (bytes == 0) return 0;
    if (current(dev)) return 1;
    CUresult r = dev->api.cuMemcpyHtoD_v2(buf->ptr + offset, src, bytes);
    return r == CUDA_SUCCESS ? 0 : fail(dev, r, "writing %zu bytes to the device", bytes);
}

static int cu_read(grove__dev *dev, grove__dbuf *buf, size_t offset, void *dst, size_t bytes)
{
    if (bytes == 0) return 0;
    if (current(dev)) return 1;
    CUresult r = dev->api.cuMemcpyDtoH_v2(dst, buf->ptr + offset, bytes);
    return r == CUDA_SUCCESS ? 0 : fail(dev, r, "reading %zu bytes from the device", bytes);
}

static CUfunction kernel_named(grove__dev *dev, const char *name)
{
    CUfunction fn = grove__names_find(&dev->kernels, name);
    if (fn) return fn;
    if (dev->api.cuModuleGetFunction(&fn, dev->module, name) != CUDA_SUCCESS) return NULL;
    return grove__names_add(&dev->kernels, name, fn) ? fn : NULL;
}

/* Enough for every kernel's parameters. */
#define MAX_ARGS 32

static int cu_launch(grove__dev *dev, const char *name, size_t groups, size_t group, size_t local_bytes,
                     const grove__karg *args, size_t nargs)
{
    if (current(dev)) return 1;
    if (!dev->module) return fail(dev, CUDA_ERROR_NOT_INITIALIZED, "%s launched before the kernels were loaded", name);
    CUfunction fn = kernel_named(dev, name);
    if (!fn) return fail(dev, CUDA_ERROR_NOT_FOUND, "the kernels have no %s", name);
    if (nargs > MAX_ARGS) return fail(dev, CUDA_ERROR_INVALID_VALUE, "%s: %zu arguments", name, nargs);
    if (groups == 0) return 0;
    void *params[MAX_ARGS];
    for (size_t i = 0; i < nargs; i++) params[i] = args[i].buf ? (void *)&args[i].buf->ptr : (void *)(uintptr_t)args[i].value;
    CUresult r = dev->api.cuLaunchKernel(fn, (unsigned)groups, 1, 1, (unsigned)group, 1, 1, (unsigned)local_bytes,
                                         NULL, params, NULL);
    return r == CUDA_SUCCESS ? 0 : fail(dev, r, "%s on %zu blocks of %zu", name, groups, group);
}

static int cu_finish(grove__dev *dev)
{
    if (current(dev)) return 1;
    CUresult r = dev->api.cuCtxSynchronize();
    return r == CUDA_SUCCESS ? 0 : fail(dev, r, "running the kernels");
}

__attribute__((visibility("default"))) const grove__backend grove_cuda_backend = {
    GROVE__BACKEND_ABI, "cuda", cu_open, cu_close, cu_error, cu_program, cu_alloc, cu_release,
    cu_write,           cu_read, cu_launch, cu_finish,
};
