/* A concurrent union-find (internal) over elements 0 .. n-1, n < 2^32.
 *
 * Union always links the larger of two roots under the smaller, so a
 * parent is never larger than its child and every component's root is its
 * smallest element: the final forest's roots do not depend on the order of
 * the unions, hence not on the thread count. Unions and finds may run
 * concurrently from any number of threads (lock-free: a union retries its
 * compare-and-swap when another thread linked its root first; a find
 * halves its path with compare-and-swaps that only ever move a parent to
 * an ancestor, so a concurrent union or find never sees a broken path).
 * Memory: 4 bytes per element. */
#ifndef GROVE_UNION_FIND_H
#define GROVE_UNION_FIND_H

#include "internal.h"

typedef struct grove__uf {
    uint32_t *parent; /* accessed through atomics while unions may run */
    size_t n;
} grove__uf;

/* n singletons (parent[i] = i), written on up to `threads` threads. */
grove_status grove__uf_init(grove__uf *uf, size_t n, int threads);
void grove__uf_free(grove__uf *uf);

/* The root (smallest element) of x's component as of now; safe during
 * concurrent unions. */
uint32_t grove__uf_find(grove__uf *uf, uint32_t x);

/* Join the components of a and b; returns 1 when they were apart, 0 when
 * already one. Safe concurrently with other unions and finds. */
int grove__uf_union(grove__uf *uf, uint32_t a, uint32_t b);

/* After every union (no concurrent calls): parent[i] = the root of i for
 * every i, in one serial pass (parents are never larger than their
 * children, so each parent is already final when its child is reached). */
void grove__uf_flatten(grove__uf *uf);

#endif
