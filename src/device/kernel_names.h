/* A backend's kernels by name (opencl.c, cuda/backend.c): each made at
 * its first launch and kept, under a copy of its name (callers' names may
 * live in their stack frames). Header-only, as the CUDA library shares no
 * object code with libgrove. */
#ifndef GROVE_DEVICE_KERNEL_NAMES_H
#define GROVE_DEVICE_KERNEL_NAMES_H

#include <stdlib.h>
#include <string.h>

typedef struct grove__named {
    char *name;
    void *kernel; /* cl_kernel, CUfunction */
} grove__named;

typedef struct grove__names {
    grove__named *item;
    size_t count, cap;
} grove__names;

/* The kernel kept as name, or NULL. */
static inline void *grove__names_find(const grove__names *n, const char *name)
{
    for (size_t k = 0; k < n->count; k++)
        if (strcmp(n->item[k].name, name) == 0) return n->item[k].kernel;
    return NULL;
}

/* Keep kernel as name; 0 when out of memory (the caller releases it). */
static inline int grove__names_add(grove__names *n, const char *name, void *kernel)
{
    if (n->count == n->cap) {
        size_t cap = n->cap ? 2 * n->cap : 32;
        grove__named *grown = realloc(n->item, cap * sizeof *grown);
        if (!grown) return 0;
        n->item = grown;
        n->cap = cap;
    }
    char *copy = malloc(strlen(name) + 1);
    if (!copy) return 0;
    strcpy(copy, name);
    n->item[n->count++] = (grove__named){copy, kernel};
    return 1;
}

/* Free the names; the caller released the kernels (item[0 .. count)). */
static inline void grove__names_free(grove__names *n)
{
    for (size_t k = 0; k < n->count; k++) free(n->item[k].name);
    free(n->item);
    memset(n, 0, sizeof *n);
}

#endif
