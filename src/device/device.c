/* The devices of this process: each backend opened once, at its first
 * use, and held by one call at a time; grove_device_info; the choice of
 * a device for a call; the backend's calls with grove's errors. */
#include "device.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

/* The backends this build has: OpenCL when its headers were there
 * (opencl.c), CUDA through its own library (cuda_load.c). */
#ifdef GROVE_HAVE_OPENCL
extern const grove__backend grove__opencl_backend;
extern const char grove__opencl_source[];
#endif

typedef struct device_slot {
    pthread_mutex_t lock; /* held by the call using the device */
    int tried;            /* opened (or failed to) already */
    int code;             /* 0: open; else why it is not (GROVE__DEV_*, or -1: not built) */
    char why[400];
    grove__device device;
    int built;            /* the kernels are ready */
} device_slot;

static device_slot slots[2] = {{PTHREAD_MUTEX_INITIALIZER, 0, 0, "", {0}, 0},
                               {PTHREAD_MUTEX_INITIALIZER, 0, 0, "", {0}, 0}};
static pthread_mutex_t open_lock = PTHREAD_MUTEX_INITIALIZER;

static const char *kind_name(grove_device kind) { return kind == GROVE_DEVICE_CUDA ? "cuda" : "opencl"; }

static const grove__backend *find_backend(grove_device kind, char *why, size_t cap)
{
    if (kind == GROVE_DEVICE_CUDA) return grove__cuda_backend(why, cap);
#ifdef GROVE_HAVE_OPENCL
    (void)why, (void)cap;
    return &grove__opencl_backend;
#else
    snprintf(why, cap, "not built: grove was built without its OpenCL part (no CL/cl.h, Debian's "
                       "ocl-icd-opencl-dev, or make OPENCL=0)");
    return NULL;
#endif
}

/* The slot of kind (CUDA or OpenCL), opened once per process. */
static device_slot *slot_open(grove_device kind)
{
    device_slot *s = &slots[kind == GROVE_DEVICE_CUDA ? 0 : 1];
    pthread_mutex_lock(&open_lock);
    if (!s->tried) {
        s->tried = 1;
        s->device.kind = kind;
        s->device.be = find_backend(kind, s->why, sizeof s->why);
        if (!s->device.be) s->code = -1;
        else s->code = s->device.be->open(&s->device.dev, &s->device.info, s->why, sizeof s->why);
    }
    pthread_mutex_unlock(&open_lock);
    return s;
}

static void describe(const device_slot *s, char *text, size_t cap)
{
    const grove__dev_info *i = &s->device.info;
    double gib = (double)i->memory / (1024.0 * 1024.0 * 1024.0);
    if (s->device.kind == GROVE_DEVICE_CUDA)
        snprintf(text, cap, "%s, %.1f GiB, driver %s", i->name, gib, i->driver);
    else
        snprintf(text, cap, "%s, %s, %.1f GiB, driver %s%s", i->platform, i->name, gib, i->driver,
                 i->is_gpu ? "" : ", not a GPU");
}

grove_device grove__device_choose(const grove_options *options, bool large)
{
    grove_device want = options ? options->device : GROVE_DEVICE_CPU;
    if (want != GROVE_DEVICE_AUTO) return want;
    if (!large) return GROVE_DEVICE_CPU;
    /* A CPU device (PoCL) is never faster than grove's own CPU code. */
    static const grove_device order[] = {GROVE_DEVICE_CUDA, GROVE_DEVICE_OPENCL};
    for (size_t k = 0; k < 2; k++) {
        device_slot *s = slot_open(order[k]);
        if (s->code == 0 && s->device.info.is_gpu) return order[k];
    }
    return GROVE_DEVICE_CPU;
}

int grove_device_info(grove_device device, char *text, size_t cap)
{
    char scratch[1];
    if (!text || cap == 0) {
        text = scratch;
        cap = sizeof scratch;
    }
    if (device == GROVE_DEVICE_AUTO) {
        grove_options o;
        grove_options_init(&o);
        o.device = GROVE_DEVICE_AUTO;
        device = grove__device_choose(&o, true);
        if (device == GROVE_DEVICE_CPU) {
            snprintf(text, cap, "no GPU: the CPU");
            return 0;
        }
    }
    if (device == GROVE_DEVICE_CPU) {
        snprintf(text, cap, "the CPU");
        return 1;
    }
    if (device != GROVE_DEVICE_CUDA && device != GROVE_DEVICE_OPENCL) {
        snprintf(text, cap, "unknown device %d", (int)device);
        return 0;
    }
    device_slot *s = slot_open(device);
    if (s->code) snprintf(text, cap, "%s", s->why);
    else describe(s, text, cap);
    return s->code == 0;
}

/* The kernels, once per device. */
static grove_status build(device_slot *s)
{
    grove__device *d = &s->device;
    const char *source = NULL;
    char options[96] = "";
#ifdef GROVE_HAVE_OPENCL
    if (d->kind == GROVE_DEVICE_OPENCL) {
        source = grove__opencl_source;
        snprintf(options, sizeof options, "-cl-std=CL1.2%s", d->info.fp64 ? " -DGROVE_FP64=1" : "");
    }
#endif
    if (d->be->program(d->dev, source, options))
        return grove__fail(GROVE_UNSUPPORTED, "device %s: %s", kind_name(d->kind), d->be->error(d->dev));
    s->built = 1;
    return GROVE_OK;
}

grove_status grove__device_acquire(grove_device kind, const char *what, grove__device **out)
{
    *out = NULL;
    if (kind != GROVE_DEVICE_CUDA && kind != GROVE_DEVICE_OPENCL)
        return grove__fail(GROVE_INVALID_ARGUMENT, "%s: device %d is not a device grove knows", what, (int)kind);
    device_slot *s = slot_open(kind);
    if (s->code)
        return grove__fail(GROVE_UNSUPPORTED, "%s: device %s cannot run here: %s", what, kind_name(kind), s->why);
    pthread_mutex_lock(&s->lock);
    grove_status st = s->built ? GROVE_OK : build(s);
    if (st != GROVE_OK) {
        pthread_mutex_unlock(&s->lock);
        return st;
    }
    grove__device *d = &s->device;
    d->in_use = 0;
    d->budget = d->info.memory / 4 * 3;
    *out = d;
    return GROVE_OK;
}

void grove__device_release(grove__device *d)
{
    if (!d) return;
    pthread_mutex_unlock(&slots[d->kind == GROVE_DEVICE_CUDA ? 0 : 1].lock);
}

static grove_status backend_failed(grove__device *d)
{
    return grove__fail(GROVE_INTERNAL, "device %s (%s): %s", kind_name(d->kind), d->info.name, d->be->error(d->dev));
}

grove_status grove__dalloc(grove__device *d, size_t bytes, const char *what, grove__dmem *out)
{
    out->buf = NULL;
    out->bytes = 0;
    if (bytes > d->info.max_alloc || bytes > d->budget - d->in_use)
        return grove__fail(GROVE_OVER_BUDGET,
                           "device %s: %s needs %zu bytes of device memory; %llu of the budget of %llu bytes are "
                           "left (largest buffer %llu bytes)",
                           kind_name(d->kind), what, bytes, (unsigned long long)(d->budget - d->in_use),
                           (unsigned long long)d->budget, (unsigned long long)d->info.max_alloc);
    if (d->be->alloc(d->dev, bytes, &out->buf))
        return grove__fail(GROVE_OUT_OF_MEMORY, "device %s: %s: %s", kind_name(d->kind), what, d->be->error(d->dev));
    out->bytes = bytes;
    d->in_use += bytes;
    return GROVE_OK;
}

void grove__dfree(grove__device *d, grove__dmem *m)
{
    if (!m->buf) return;
    d->be->release(d->dev, m->buf);
    d->in_use -= m->bytes;
    m->buf = NULL;
    m->bytes = 0;
}

grove_status grove__dwrite(grove__device *d, const grove__dmem *m, size_t offset, const void *src, size_t bytes)
{
    return d->be->write(d->dev, m->buf, offset, src, bytes) ? backend_failed(d) : GROVE_OK;
}

grove_status grove__dread(grove__device *d, const grove__dmem *m, size_t offset, void *dst, size_t bytes)
{
    return d->be->read(d->dev, m->buf, offset, dst, bytes) ? backend_failed(d) : GROVE_OK;
}

grove_status grove__dlaunch(grove__device *d, const char *name, size_t groups, size_t group, size_t local_bytes,
                            const grove__karg *args, size_t nargs)
{
    return d->be->launch(d->dev, name, groups, group, local_bytes, args, nargs) ? backend_failed(d) : GROVE_OK;
}

grove_status grove__dfinish(grove__device *d) { return d->be->finish(d->dev) ? backend_failed(d) : GROVE_OK; }

grove_status grove__dupload(grove__device *d, const void *src, size_t bytes, const char *what, grove__dmem *out)
{
    grove_status s = grove__dalloc(d, bytes, what, out);
    if (s == GROVE_OK && (s = grove__dwrite(d, out, 0, src, bytes)) != GROVE_OK) grove__dfree(d, out);
    return s;
}
