/* The concurrent union-find: path halving and linking by compare-and-swap
 * (see union_find.h for why the result is deterministic). */
#include "union_find.h"

static inline uint32_t uf_load(const uint32_t *p)
{
    return __atomic_load_n(p, __ATOMIC_RELAXED);
}

/* Replace *p by `want` if it still holds `expect`. */
static inline int uf_cas(uint32_t *p, uint32_t expect, uint32_t want)
{
    return __atomic_compare_exchange_n(p, &expect, want, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
}

grove_status grove__uf_init(grove__uf *uf, size_t n, int threads)
{
    uf->n = 0;
    uf->parent = NULL;
    if (n > UINT32_MAX) return grove__fail(GROVE_TOO_LARGE, "union-find: %zu elements; at most 2^32 - 1", n);
    uf->parent = grove__malloc((n ? n : 1) * sizeof *uf->parent, "union-find parents");
    if (!uf->parent) return GROVE_OUT_OF_MEMORY;
    uf->n = n;
    uint32_t *parent = uf->parent;
#pragma omp parallel for num_threads(threads < 1 ? 1 : threads) schedule(static) if (n > 65536)
    for (size_t i = 0; i < n; i++) parent[i] = (uint32_t)i;
    return GROVE_OK;
}

void grove__uf_free(grove__uf *uf)
{
    grove__free(uf->parent);
    uf->parent = NULL;
    uf->n = 0;
}

uint32_t grove__uf_find(grove__uf *uf, uint32_t x)
{
    uint32_t *parent = uf->parent;
    for (;;) {
        uint32_t p = uf_load(&parent[x]);
        if (p == x) return x;
        uint32_t g = uf_load(&parent[p]);
        if (g == p) return p;
        /* Halving: point x at its grandparent, an ancestor whatever other
         * threads did meanwhile (parents only ever move up). A failed swap
         * means another thread moved x up already. */
        uf_cas(&parent[x], p, g);
        x = g;
    }
}

int grove__uf_union(grove__uf *uf, uint32_t a, uint32_t b)
{
    for (;;) {
        a = grove__uf_find(uf, a);
        b = grove__uf_find(uf, b);
        if (a == b) return 0;
        if (a > b) {
            uint32_t t = a;
            a = b;
            b = t;
        }
        /* b is the larger root: link it under a, unless another thread
         * linked it first (then try again from b's new root). */
        if (uf_cas(&uf->parent[b], b, a)) return 1;
    }
}

void grove__uf_flatten(grove__uf *uf)
{
    uint32_t *parent = uf->parent;
    for (size_t i = 0; i < uf->n; i++) parent[i] = parent[parent[i]];
}
