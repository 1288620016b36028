/* Borůvka's search phase, instantiated per coordinate type: include with T
 * and FN(name) defined. Every point not yet settled this round looks for
 * its nearest point in another component, through the shared walk
 * (walk_t.h). */

#include "../index/geom_t.h"

/* One point's search: p (coordinates q, component c, key of the squared
 * core distance core_p) against the points of other components, the best
 * edge so far (best_w to best_q, rows best_lo < best_hi), and its prune
 * bound: min(best_w, the component's bound cb as last read), floored for
 * box bounds (FN(prune_bound)). */
typedef struct FN(edge_search) {
    grove__boruvka *b;
    const T *q;
    size_t d;
    uint32_t c, row_p;
    double core_p, cb, bound, best_w;
    uint32_t best_q, best_lo, best_hi;
} FN(edge_search);

/* Pruning is strict (a node or point is dropped only when its weight is
 * larger than the bound), so the point holding its component's smallest
 * edge always finds it: the component's bound never drops below that
 * edge. Other points may stop early; that cannot change the component's
 * minimum. Nodes of p's own component hold nothing for it. */
static inline GROVE__ALWAYS_INLINE int FN(edge_keep)(const FN(edge_search) *s, uint32_t k, double lb)
{
    return lb <= s->bound && s->b->node_label[k] != s->c;
}

/* No weight from p is below its core distance. */
static inline GROVE__ALWAYS_INLINE double FN(edge_lower)(const FN(edge_search) *s, uint32_t k)
{
    double lb = (double)FN(box_dist2)((const T *)s->b->t->box + (size_t)k * 2 * s->d, s->q, s->d);
    return lb < s->core_p ? s->core_p : lb;
}

static inline GROVE__ALWAYS_INLINE void FN(edge_visit)(FN(edge_search) *s, const grove__node *nd)
{
    const grove__boruvka *b = s->b;
    const T *x = b->t->x;
    const uint32_t *label = b->label, *perm = b->t->perm;
    const double *core2 = b->core2;
    size_t d = s->d;
    for (uint32_t i = nd->begin; i < nd->end; i++) {
        if (label[i] == s->c) continue;
        double w = FN(key_wide)(FN(key2)(s->q, x + (size_t)i * d, d));
        if (core2) {
            if (w < s->core_p) w = s->core_p;
            if (w < core2[i]) w = core2[i];
        }
        if (w > s->bound) continue;
        uint32_t row_i = perm[i];
        uint32_t lo = s->row_p < row_i ? s->row_p : row_i, hi = s->row_p ^ row_i ^ lo;
        if (w < s->best_w || (w == s->best_w && (lo < s->best_lo || (lo == s->best_lo && hi < s->best_hi)))) {
            s->best_w = w;
            s->best_q = i;
            s->best_lo = lo;
            s->best_hi = hi;
        }
    }
    /* Other points of the component may have found better edges. */
    s->cb = grove__bits_d(atomic_load_explicit(&b->bound[s->c], memory_order_relaxed));
    s->bound = FN(prune_bound)(s->best_w < s->cb ? s->best_w : s->cb);
}

#define WALK(name) FN(edge_##name)
#define WALK_BOUND double
#include "../index/walk_t.h"

static inline GROVE__ALWAYS_INLINE void FN(search_one)(grove__boruvka *b, uint32_t p, size_t d)
{
    const grove__tree *t = b->t;
    uint32_t c = b->label[p];
    double cb = grove__bits_d(atomic_load_explicit(&b->bound[c], memory_order_relaxed));
    /* p's nearest outgoing edge weighs at least lower[p]: if that is already
     * above the component's best, p cannot win (strictly; ties must search). */
    if (b->lower[p] > cb) return;
    double core_p = b->core2 ? b->core2[p] : -INFINITY;
    FN(edge_search) s = {b, (const T *)t->x + (size_t)p * d, d, c, t->perm[p], core_p, cb, FN(prune_bound)(cb),
                         (double)INFINITY, GROVE__NONE, 0, 0};
    FN(edge_walk)(t->node, &s, core_p);
    /* Everything not examined weighs more than min(best_w, the last bound
     * read) (bounds only shrink), so that is a lower bound for later rounds;
     * and when best_w is within it, the candidate is exact. */
    double low = s.best_w < s.cb ? s.best_w : s.cb;
    if (low > b->lower[p]) b->lower[p] = low;
    if (s.best_q == GROVE__NONE) {
        b->flags[p] = 0;
        return;
    }
    b->cand_w[p] = s.best_w;
    b->cand_q[p] = s.best_q;
    b->flags[p] = s.best_w <= s.cb ? GROVE__EXACT : 0;
    grove__boruvka_submit(b, p);
}

static inline GROVE__ALWAYS_INLINE void FN(search_range)(grove__boruvka *b, size_t lo, size_t hi, size_t d)
{
    for (size_t p = lo; p < hi; p++)
        if (!(b->flags[p] & GROVE__DONE)) FN(search_one)(b, (uint32_t)p, d);
}

bool FN(grove__boruvka_search)(grove__boruvka *b)
{
    enum { CHUNK = 256 };
    size_t n = b->t->n, d = b->t->d;
    bool stopped = false;
#pragma omp parallel for num_threads(b->threads) schedule(dynamic, 1) reduction(|| : stopped)
    for (size_t lo = 0; lo < n; lo += CHUNK) {
        /* A round at millions of points takes seconds: the cancel flag is
         * read once per chunk, and a raised one skips the rest. */
        if (stopped || (stopped = grove__cancelled(b->options))) continue;
        size_t hi = n - lo > CHUNK ? lo + CHUNK : n;
#define GROVE__SEARCH_BODY(D) FN(search_range)(b, lo, hi, D)
        GROVE__DISPATCH_D(d, GROVE__SEARCH_BODY)
#undef GROVE__SEARCH_BODY
    }
    return !stopped;
}
