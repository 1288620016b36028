/* The device layer (internal): an open device for one call, the backend's
 * calls with grove's errors, and the choice of a device for a call. The
 * host orchestration of each device path (join.c, gravity.c) is written
 * once against this, for CUDA and OpenCL alike.
 *
 * Each backend is opened at most once per process, at its first use, and
 * its kernels built (OpenCL) or loaded (CUDA) then; a call holds the
 * device from grove__device_acquire to grove__device_release, so calls
 * from several threads take turns. */
#ifndef GROVE_DEVICE_H
#define GROVE_DEVICE_H

#include "internal.h"
#include "backend.h"

typedef struct grove__device {
    const grove__backend *be;
    grove__dev *dev;
    grove__dev_info info;
    grove_device kind;   /* GROVE_DEVICE_CUDA or GROVE_DEVICE_OPENCL */
    uint64_t in_use;     /* bytes allocated by this call */
    uint64_t budget;     /* bytes this call may allocate */
} grove__device;

/* Open (once per process) and take the device of `kind` (CUDA or OpenCL)
 * for one call of `what`; refused with GROVE_UNSUPPORTED and the reason
 * where it cannot run. The call's device memory budget: 3/4 of the
 * device's memory (a call's own budget for its batches may be smaller:
 * the join's pairs take at most options->memory_budget). */
grove_status grove__device_acquire(grove_device kind, const char *what, grove__device **out);
void grove__device_release(grove__device *d);

/* The device a call with these options runs on: options->device, with
 * GROVE_DEVICE_AUTO resolved to a GPU (CUDA first, then an OpenCL GPU)
 * when `large` (the call's problem is worth a GPU) and one is present,
 * else GROVE_DEVICE_CPU. */
grove_device grove__device_choose(const grove_options *options, bool large);

/* A buffer of this call and its size. */
typedef struct grove__dmem {
    grove__dbuf *buf;
    size_t bytes;
} grove__dmem;

/* The backend's calls, failing with grove's error (naming `what` for
 * allocations). grove__dalloc counts against the call's budget
 * (GROVE_OVER_BUDGET beyond it or beyond the device's largest buffer)
 * and grove__dfree gives back (an empty grove__dmem is a no-op).
 * Offsets and sizes are in bytes. */
grove_status grove__dalloc(grove__device *d, size_t bytes, const char *what, grove__dmem *out);
void grove__dfree(grove__device *d, grove__dmem *m);
grove_status grove__dwrite(grove__device *d, const grove__dmem *m, size_t offset, const void *src, size_t bytes);
grove_status grove__dread(grove__device *d, const grove__dmem *m, size_t offset, void *dst, size_t bytes);
grove_status grove__dlaunch(grove__device *d, const char *name, size_t groups, size_t group, size_t local_bytes,
                            const grove__karg *args, size_t nargs);
grove_status grove__dfinish(grove__device *d);
/* A buffer holding bytes from host memory: grove__dalloc then grove__dwrite. */
grove_status grove__dupload(grove__device *d, const void *src, size_t bytes, const char *what, grove__dmem *out);

/* Kernel arguments. */
static inline grove__karg grove__kbuf(const grove__dmem *m) { return (grove__karg){m->buf, NULL, 0}; }
#define GROVE__KVAL(v) ((grove__karg){NULL, &(v), sizeof(v)})

/* The CUDA backend from libgrove_cuda.so (cuda_load.c), or NULL with
 * why it is not there. */
const grove__backend *grove__cuda_backend(char *why, size_t cap);

/* The exclusive prefix sum of n 32-bit counts on the device (scan.c):
 * out[i] = in[0] + ... + in[i - 1] as 64-bit values, out[n] the total,
 * also in *total. out holds n + 1 values. */
grove_status grove__dscan(grove__device *d, const grove__dmem *in, const grove__dmem *out, size_t n, uint64_t *total);

#endif
