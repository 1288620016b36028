/* Internals of the EMST module: the Borůvka state shared by the search
 * (boruvka_t.h), the merge step (merge.c), the driver (boruvka.c) and the
 * public entry points (emst.c). */
#ifndef GROVE_EMST_INTERNAL_H
#define GROVE_EMST_INTERNAL_H

#include "../index/index.h"

#include <stdatomic.h>
#include <string.h>

#define GROVE__NONE UINT32_MAX

/* Per-point flags. */
enum {
    /* cand is the exact nearest point outside the component the point had
     * when it was found (so it stays exact while that point is outside). */
    GROVE__EXACT = 1,
    /* The point's edge was already submitted this round. */
    GROVE__DONE = 2
};

/* Everything indexed by a tree position p, a component id c (the tree
 * position of one of its points) or a node k. Weights are the double keys
 * (../index/dist_key.h) of squared (mutual-reachability) distances; edge
 * order is (weight, smaller row, larger row). */
typedef struct grove__boruvka {
    const grove__tree *t;
    const double *core2;      /* per p: key of the squared core distance, NULL = Euclidean */
    uint32_t *label;          /* per p: component */
    uint32_t *node_label;     /* per k: the component of all its points, or NONE */
    double *cand_w;           /* per p: weight of its last candidate edge */
    uint32_t *cand_q;         /* per p: the candidate's other end */
    double *lower;            /* per p: lower bound on its nearest outgoing weight */
    uint8_t *flags;           /* per p: GROVE__EXACT | GROVE__DONE */
    _Atomic uint64_t *bound;  /* per c: bits of the best weight found this round */
    _Atomic uint32_t *best;   /* per c: the point holding the best candidate */
    uint32_t *parent, *jump;  /* per c: merge target, then root (pointer jumping) */
    uint8_t *is_root;         /* per c */
    uint32_t *comps;          /* the active component ids */
    size_t ncomps;
    uint32_t *eu, *ev;        /* found edges (input rows, eu < ev) */
    double *ew;               /* and their weights */
    size_t nedges;
    void *bound_mem, *best_mem; /* the allocations behind bound and best */
    int threads;
    const grove_options *options; /* its cancel flag is read per chunk of the search */
} grove__boruvka;

/* Compute the n - 1 edges into b->eu/ev/ew (allocated by the caller, n - 1
 * each) for a tree with n >= 2 points. */
grove_status grove__boruvka_run(const grove__tree *t, const double *core2, uint32_t *eu, uint32_t *ev, double *ew,
                                const grove_options *options);

/* Search phase for one round (boruvka_t.h, per dtype); false when the
 * cancel flag stopped it before every point had searched. */
bool grove__boruvka_search_f32(grove__boruvka *b);
bool grove__boruvka_search_f64(grove__boruvka *b);

/* Merge phase: the chosen edges join components (pointer jumping), edges
 * are appended, labels and node labels updated, the active list rebuilt.
 * GROVE_INTERNAL, before any change, when a component has no edge. */
grove_status grove__boruvka_merge(grove__boruvka *b);

/* Edge order (weight, min row, max row) of two points' candidates. */
static inline int grove__cand_less(const grove__boruvka *b, uint32_t p1, uint32_t p2)
{
    double w1 = b->cand_w[p1], w2 = b->cand_w[p2];
    if (w1 != w2) return w1 < w2;
    uint32_t a1 = b->t->perm[p1], c1 = b->t->perm[b->cand_q[p1]];
    uint32_t a2 = b->t->perm[p2], c2 = b->t->perm[b->cand_q[p2]];
    uint32_t lo1 = a1 < c1 ? a1 : c1, hi1 = a1 ^ c1 ^ lo1, lo2 = a2 < c2 ? a2 : c2, hi2 = a2 ^ c2 ^ lo2;
    return lo1 < lo2 || (lo1 == lo2 && hi1 < hi2);
}

/* A double as bits that order as the doubles do, negative keys included
 * (the sign bit set for the non-negative, every bit flipped for the
 * negative), and back. */
static inline uint64_t grove__dbits(double w)
{
    uint64_t u;
    memcpy(&u, &w, sizeof u);
    return u ^ ((0 - (u >> 63)) | (uint64_t)1 << 63);
}

static inline double grove__bits_d(uint64_t u)
{
    u ^= (0 - (~u >> 63)) | (uint64_t)1 << 63;
    double w;
    memcpy(&w, &u, sizeof w);
    return w;
}

/* Offer point p's candidate as its component's outgoing edge: lower the
 * component's bound, and make p the component's best if its edge is
 * smaller. The minimum over a strict order is unique, so the winner does
 * not depend on timing. */
static inline void grove__boruvka_submit(grove__boruvka *b, uint32_t p)
{
    uint32_t c = b->label[p];
    uint64_t bits = grove__dbits(b->cand_w[p]);
    uint64_t cur = atomic_load_explicit(&b->bound[c], memory_order_relaxed);
    while (bits < cur &&
           !atomic_compare_exchange_weak_explicit(&b->bound[c], &cur, bits, memory_order_relaxed,
                                                  memory_order_relaxed)) {
    }
    uint32_t holder = atomic_load_explicit(&b->best[c], memory_order_acquire);
    while (holder == GROVE__NONE || grove__cand_less(b, p, holder))
        if (atomic_compare_exchange_weak_explicit(&b->best[c], &holder, p, memory_order_acq_rel,
                                                  memory_order_acquire))
            break;
}

#endif
