/* The OpenCL backend (backend.h): libOpenCL.so.1 (the ICD loader) opened
 * with dlopen at the first use, so libgrove has no link-time dependency on
 * OpenCL and runs where it is absent; the headers are needed to build
 * this file only (the Makefile leaves it out without them). Where the
 * process already has OpenCL (linked in, or preloaded as oclgrind does),
 * those functions are used. The device: the first GPU of any platform,
 * else the first accelerator, else the first device of any kind. */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include "backend.h"
#include "kernel_names.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The entry points used, as function pointers. */
#define CL_FUNCTIONS(X)                                                                                      \
    X(clGetPlatformIDs) X(clGetPlatformInfo) X(clGetDeviceIDs) X(clGetDeviceInfo) X(clCreateContext)        \
    X(clReleaseContext) X(clCreateCommandQueue) X(clReleaseCommandQueue) X(clCreateProgramWithSource)       \
    X(clBuildProgram) X(clGetProgramBuildInfo) X(clReleaseProgram) X(clCreateKernel) X(clReleaseKernel)     \
    X(clSetKernelArg) X(clEnqueueNDRangeKernel) X(clCreateBuffer) X(clReleaseMemObject)                    \
    X(clEnqueueWriteBuffer) X(clEnqueueReadBuffer) X(clFinish)

typedef struct cl_api {
#define CL_FIELD(f) __typeof__(&f) f;
    CL_FUNCTIONS(CL_FIELD)
#undef CL_FIELD
} cl_api;

struct grove__dev {
    void *lib; /* dlopen handle, or NULL when the process's own functions are used */
    cl_api api;
    cl_device_id device;
    cl_context context;
    cl_command_queue queue;
    cl_program program;
    grove__names kernels;
    char err[512];
};

struct grove__dbuf {
    cl_mem mem;
};

static int fail(grove__dev *dev, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(grove__dev *dev, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(dev->err, sizeof dev->err, fmt, ap);
    va_end(ap);
    return 1;
}

/* The functions from the process itself (dlsym of the default scope), or
 * else from libOpenCL.so.1; why says what is missing. */
static int load_api(grove__dev *dev, char *why, size_t cap)
{
    void *scope = RTLD_DEFAULT;
    if (!dlsym(scope, "clGetPlatformIDs")) {
        dev->lib = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
        if (!dev->lib) {
            snprintf(why, cap, "no driver: %s", dlerror());
            return GROVE__DEV_NO_DRIVER;
        }
        scope = dev->lib;
    }
#define CL_LOAD(f)                                                                                           \
    *(void **)&dev->api.f = dlsym(scope, #f);                                                                \
    if (!dev->api.f) {                                                                                       \
        snprintf(why, cap, "no driver: the OpenCL library has no %s", #f);                                  \
        return GROVE__DEV_NO_DRIVER;                                                                         \
    }
    CL_FUNCTIONS(CL_LOAD)
#undef CL_LOAD
    return 0;
}

/* The first device of `type` over the platforms. */
static int find_device(const cl_api *cl, const cl_platform_id *platforms, cl_uint np, cl_device_type type,
                       cl_device_id *out)
{
    for (cl_uint p = 0; p < np; p++) {
        cl_uint count = 0;
        if (cl->clGetDeviceIDs(platforms[p], type, 1, out, &count) == CL_SUCCESS && count > 0) return 1;
    }
    return 0;
}

static void info_string(const cl_api *cl, cl_device_id d, cl_device_info what, char *buf, size_t cap)
{
    if (cl->clGetDeviceInfo(d, what, cap, buf, NULL) != CL_SUCCESS) snprintf(buf, cap, "unknown");
    buf[cap - 1] = '\0';
}

static void describe(const cl_api *cl, cl_device_id d, grove__dev_info *info)
{
    memset(info, 0, sizeof *info);
    info_string(cl, d, CL_DEVICE_NAME, info->name, sizeof info->name);
    info_string(cl, d, CL_DRIVER_VERSION, info->driver, sizeof info->driver);
    cl_platform_id platform;
    if (cl->clGetDeviceInfo(d, CL_DEVICE_PLATFORM, sizeof platform, &platform, NULL) != CL_SUCCESS ||
        cl->clGetPlatformInfo(platform, CL_PLATFORM_NAME, sizeof info->platform, info->platform, NULL) != CL_SUCCESS)
        snprintf(info->platform, sizeof info->platform, "unknown");
    info->platform[sizeof info->platform - 1] = '\0';
    cl_ulong mem = 0, alloc = 0, local = 0;
    size_t group = 0;
    cl_uint units = 0;
    cl_device_type type = 0;
    cl_device_fp_config single = 0, dbl = 0;
    cl->clGetDeviceInfo(d, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof mem, &mem, NULL);
    cl->clGetDeviceInfo(d, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof alloc, &alloc, NULL);
    cl->clGetDeviceInfo(d, CL_DEVICE_LOCAL_MEM_SIZE, sizeof local, &local, NULL);
    cl->clGetDeviceInfo(d, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof group, &group, NULL);
    cl->clGetDeviceInfo(d, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof units, &units, NULL);
    cl->clGetDeviceInfo(d, CL_DEVICE_TYPE, sizeof type, &type, NULL);
    cl->clGetDeviceInfo(d, CL_DEVICE_SINGLE_FP_CONFIG, sizeof single, &single, NULL);
    cl->clGetDeviceInfo(d, CL_DEVICE_DOUBLE_FP_CONFIG, sizeof dbl, &dbl, NULL);
    info->memory = mem;
    info->max_alloc = alloc;
    info->local_memory = local;
    info->max_group = group > UINT32_MAX ? UINT32_MAX : (uint32_t)group;
    info->units = units;
    info->fp64 = dbl != 0;
    info->fp32_denormals = (single & CL_FP_DENORM) != 0;
    info->is_gpu = (type & CL_DEVICE_TYPE_GPU) != 0;
}

static void cl_close(grove__dev *dev)
{
    if (!dev) return;
    for (size_t k = 0; k < dev->kernels.count; k++) dev->api.clReleaseKernel(dev->kernels.item[k].kernel);
    grove__names_free(&dev->kernels);
    if (dev->program) dev->api.clReleaseProgram(dev->program);
    if (dev->queue) dev->api.clReleaseCommandQueue(dev->queue);
    if (dev->context) dev->api.clReleaseContext(dev->context);
    if (dev->lib) dlclose(dev->lib);
    free(dev);
}

static int cl_open(grove__dev **out, grove__dev_info *info, char *why, size_t cap)
{
    *out = NULL;
    grove__dev *dev = calloc(1, sizeof *dev);
    if (!dev) {
        snprintf(why, cap, "failed: out of memory");
        return GROVE__DEV_FAILED;
    }
    int code = load_api(dev, why, cap);
    cl_platform_id platforms[16];
    cl_uint np = 0;
    if (!code) {
        cl_int e = dev->api.clGetPlatformIDs(16, platforms, &np);
        if (e != CL_SUCCESS || np == 0) {
            snprintf(why, cap, "no device: no OpenCL platform is installed (clGetPlatformIDs: %d)", (int)e);
            code = GROVE__DEV_NO_DEVICE;
        }
    }
    if (!code && !find_device(&dev->api, platforms, np, CL_DEVICE_TYPE_GPU, &dev->device) &&
        !find_device(&dev->api, platforms, np, CL_DEVICE_TYPE_ACCELERATOR, &dev->device) &&
        !find_device(&dev->api, platforms, np, CL_DEVICE_TYPE_ALL, &dev->device)) {
        snprintf(why, cap, "no device: the OpenCL platforms have no device");
        code = GROVE__DEV_NO_DEVICE;
    }
    cl_int e = CL_SUCCESS;
    if (!code) {
        dev->context = dev->api.clCreateContext(NULL, 1, &dev->device, NULL, NULL, &e);
        if (dev->context) dev->queue = dev->api.clCreateCommandQueue(dev->context, dev->device, 0, &e);
        if (!dev->queue) {
            snprintf(why, cap, "failed: the OpenCL context or queue could not be made (%d)", (int)e);
            code = GROVE__DEV_FAILED;
        }
    }
    if (code) {
        cl_close(dev);
        return code;
    }
    describe(&dev->api, dev->device, info);
    *out = dev;
    return 0;
}

static const char *cl_error_text(const grove__dev *dev) { return dev->err; }

static int cl_build(grove__dev *dev, const char *source, const char *options)
{
    cl_int e;
    dev->program = dev->api.clCreateProgramWithSource(dev->context, 1, &source, NULL, &e);
    if (!dev->program) return fail(dev, "opencl: clCreateProgramWithSource failed (%d)", (int)e);
    e = dev->api.clBuildProgram(dev->program, 1, &dev->device, options, NULL, NULL);
    if (e == CL_SUCCESS) return 0;
    char log[400] = "";
    dev->api.clGetProgramBuildInfo(dev->program, dev->device, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL);
    log[sizeof log - 1] = '\0';
    for (char *c = log; *c; c++)
        if (*c == '\n') *c = ' ';
    dev->api.clReleaseProgram(dev->program);
    dev->program = NULL;
    return fail(dev, "opencl: the kernels do not compile on this device (%d): %s", (int)e, log);
}

static int cl_alloc(grove__dev *dev, size_t bytes, grove__dbuf **out)
{
    *out = NULL;
    grove__dbuf *b = malloc(sizeof *b);
    if (!b) return fail(dev, "opencl: out of host memory");
    cl_int e;
    b->mem = dev->api.clCreateBuffer(dev->context, CL_MEM_READ_WRITE, bytes ? bytes : 1, NULL, &e);
    if (!b->mem) {
        free(b);
        return fail(dev, "opencl: a buffer of %zu bytes could not be allocated (%d)", bytes, (int)e);
    }
    *out = b;
    return 0;
}

static void cl_release(grove__dev *dev, grove__dbuf *buf)
{
    if (!buf) return;
    dev->api.clReleaseMemObject(buf->mem);
    free(buf);
}

static int cl_write(grove__dev *dev, grove__dbuf *buf, size_t offset, const void *src, size_t bytes)
{
    if (bytes == 0) return 0;
    cl_int e = dev->api.clEnqueueWriteBuffer(dev->queue, buf->mem, CL_TRUE, offset, bytes, src, 0, NULL, NULL);
    return e == CL_SUCCESS ? 0 : fail(dev, "opencl: writing %zu bytes to the device failed (%d)", bytes, (int)e);
}

static int cl_read(grove__dev *dev, grove__dbuf *buf, size_t offset, void *dst, size_t bytes)
{
    if (bytes == 0) return 0;
    cl_int e = dev->api.clEnqueueReadBuffer(dev->queue, buf->mem, CL_TRUE, offset, bytes, dst, 0, NULL, NULL);
    return e == CL_SUCCESS ? 0 : fail(dev, "opencl: reading %zu bytes from the device failed (%d)", bytes, (int)e);
}

/* The kernel called name, made at its first use. */
static cl_kernel kernel_named(grove__dev *dev, const char *name)
{
    cl_kernel k = grove__names_find(&dev->kernels, name);
    if (k) return k;
    cl_int e;
    k = dev->api.clCreateKernel(dev->program, name, &e);
    if (k && !grove__names_add(&dev->kernels, name, k)) {
        dev->api.clReleaseKernel(k);
        k = NULL;
    }
    return k;
}

static int cl_launch(grove__dev *dev, const char *name, size_t groups, size_t group, size_t local_bytes,
                     const grove__karg *args, size_t nargs)
{
    if (!dev->program) return fail(dev, "opencl: kernel %s launched before the program was built", name);
    cl_kernel k = kernel_named(dev, name);
    if (!k) return fail(dev, "opencl: the program has no kernel %s", name);
    cl_int e = CL_SUCCESS;
    for (size_t i = 0; i < nargs && e == CL_SUCCESS; i++)
        e = args[i].buf ? dev->api.clSetKernelArg(k, (cl_uint)i, sizeof(cl_mem), &args[i].buf->mem)
                        : dev->api.clSetKernelArg(k, (cl_uint)i, args[i].size, args[i].value);
    /* The dynamic local memory, the kernel's last parameter. */
    if (e == CL_SUCCESS) e = dev->api.clSetKernelArg(k, (cl_uint)nargs, local_bytes ? local_bytes : 16, NULL);
    if (e != CL_SUCCESS) return fail(dev, "opencl: %s: an argument was refused (%d)", name, (int)e);
    if (groups == 0) return 0;
    size_t global = groups * group;
    e = dev->api.clEnqueueNDRangeKernel(dev->queue, k, 1, NULL, &global, &group, 0, NULL, NULL);
    return e == CL_SUCCESS ? 0
                           : fail(dev, "opencl: %s on %zu groups of %zu failed to start (%d)", name, groups, group,
                                  (int)e);
}

static int cl_finish(grove__dev *dev)
{
    cl_int e = dev->api.clFinish(dev->queue);
    return e == CL_SUCCESS ? 0 : fail(dev, "opencl: the device failed while running the kernels (%d)", (int)e);
}

const grove__backend grove__opencl_backend = {
    GROVE__BACKEND_ABI, "opencl", cl_open, cl_close, cl_error_text, cl_build, cl_alloc, cl_release,
    cl_write,           cl_read,  cl_launch, cl_finish,
};
