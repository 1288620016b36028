/* The device backend table (internal): what the host orchestration
 * (src/device/join.c, gravity.c, scan.c) needs from a device, implemented
 * once for OpenCL (opencl.c, in libgrove) and once for CUDA's driver API
 * (cuda/backend.c, in libgrove_cuda.so, which libgrove loads at run
 * time). The CUDA library is built apart and may come from another build
 * of grove, so this header is its whole interface: C types only, no
 * grove internals, and a version number the loader checks.
 *
 * Every call returns 0 on success; on failure, nonzero with a sentence
 * in the device's error buffer (grove__dev_error), which the caller turns
 * into grove's error. A device is used by one thread at a time (device.c
 * holds a lock around every call that uses one). */
#ifndef GROVE_DEVICE_BACKEND_H
#define GROVE_DEVICE_BACKEND_H

#include <stddef.h>
#include <stdint.h>

/* Bumped whenever this table or its meaning changes. */
#define GROVE__BACKEND_ABI 1

typedef struct grove__dev grove__dev;   /* an open device (backend's own) */
typedef struct grove__dbuf grove__dbuf; /* a buffer in its memory */

/* What an open device is. */
typedef struct grove__dev_info {
    char name[128];      /* the device, as its driver names it */
    char platform[128];  /* OpenCL: the platform; CUDA: "CUDA" */
    char driver[64];     /* driver version */
    uint64_t memory;     /* global memory, bytes */
    uint64_t max_alloc;  /* largest single buffer, bytes */
    uint64_t local_memory; /* per work-group, bytes usable by one kernel */
    uint32_t max_group;  /* most work-items per work-group */
    uint32_t units;      /* compute units (SMs) */
    int fp64;            /* double precision arithmetic */
    int fp32_denormals;  /* float subnormals kept (not flushed to zero) */
    int is_gpu;          /* a GPU (not a CPU device such as PoCL's) */
} grove__dev_info;

/* A kernel argument: a buffer, or a scalar of `size` bytes at `value`. */
typedef struct grove__karg {
    grove__dbuf *buf;
    const void *value;
    size_t size;
} grove__karg;

/* Why open failed: what grove_device_info says after "no ...". */
enum { GROVE__DEV_NO_DRIVER = 1, GROVE__DEV_NO_DEVICE = 2, GROVE__DEV_FAILED = 3 };

typedef struct grove__backend {
    int abi;          /* GROVE__BACKEND_ABI of the code that made it */
    const char *name; /* "cuda", "opencl" */
    /* Find the driver and the first suitable device and open it; on
     * failure a GROVE__DEV_* code and the reason in why. */
    int (*open)(grove__dev **out, grove__dev_info *info, char *why, size_t cap);
    void (*close)(grove__dev *dev);
    const char *(*error)(const grove__dev *dev);
    /* Compile (OpenCL) or load (CUDA) the kernels: source is the OpenCL C
     * program (NULL for CUDA, whose library holds its own), options the
     * compiler's flags. Once per device; the first launch needs it. */
    int (*program)(grove__dev *dev, const char *source, const char *options);
    int (*alloc)(grove__dev *dev, size_t bytes, grove__dbuf **out);
    void (*release)(grove__dev *dev, grove__dbuf *buf);
    int (*write)(grove__dev *dev, grove__dbuf *buf, size_t offset, const void *src, size_t bytes);
    int (*read)(grove__dev *dev, grove__dbuf *buf, size_t offset, void *dst, size_t bytes);
    /* Run kernel `name` on groups x group work-items with local_bytes of
     * dynamic local memory (its last parameter, DYN_LOCAL_PARAM in
     * kernels/device.h), after the previous launches. */
    int (*launch)(grove__dev *dev, const char *name, size_t groups, size_t group, size_t local_bytes,
                  const grove__karg *args, size_t nargs);
    /* Wait for everything launched. */
    int (*finish)(grove__dev *dev);
} grove__backend;

/* The CUDA library's one export (cuda/backend.c). */
#define GROVE__CUDA_SYMBOL "grove_cuda_backend"

#endif
