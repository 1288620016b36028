/* Borůvka's search phase, instantiated per coordinate type: include with T
 * and FN(name) defined. Every point not yet settled this round looks for
 * its nearest point in another component. */

#include "../index/geom_t.h"

/* One point's search. Pruning is strict (a node or point is dropped only
 * when its weight is larger than the bound), so the point holding its
 * component's smallest edge always finds it: the component's bound never
 * drops below that edge. Other points may stop early; that cannot change
 * the component's minimum. */
static inline GROVE__ALWAYS_INLINE void FN(search_one)(grove__boruvka *b, uint32_t p, size_t d, uint32_t *stack_node,
                                                       double *stack_lb)
{
    const grove__tree *t = b->t;
    const T *x = t->x, *box = t->box, *q = x + (size_t)p * d;
    const grove__node *node = t->node;
    const uint32_t *label = b->label, *node_label = b->node_label, *perm = t->perm;
    const double *core2 = b->core2;
    uint32_t c = label[p], row_p = perm[p];
    double cb = grove__bits_d(atomic_load_explicit(&b->bound[c], memory_order_relaxed));
    /* p's nearest outgoing edge weighs at least lower[p]: if that is already
     * above the component's best, p cannot win (strictly; ties must search). */
    if (b->lower[p] > cb) return;
    double core_p = core2 ? core2[p] : 0;
    double best_w = (double)INFINITY, bound = cb;
    uint32_t best_q = GROVE__NONE, best_lo = 0, best_hi = 0;
    size_t top = 0;
    uint32_t cur = 0;
    double cur_lb = core_p;
    for (;;) {
        if (cur_lb <= bound && node_label[cur] != c) {
            const grove__node *nd = &node[cur];
            if (nd->right) {
                uint32_t l = cur + 1, r = nd->right;
                double dl = (double)FN(box_dist2)(box + (size_t)l * 2 * d, q, d);
                double dr = (double)FN(box_dist2)(box + (size_t)r * 2 * d, q, d);
                if (dl < core_p) dl = core_p;
                if (dr < core_p) dr = core_p;
                int left_first = dl <= dr;
                stack_node[top] = left_first ? r : l;
                stack_lb[top++] = left_first ? dr : dl;
                cur = left_first ? l : r;
                cur_lb = left_first ? dl : dr;
                continue;
            }
            for (uint32_t i = nd->begin; i < nd->end; i++) {
                if (label[i] == c) continue;
                double w = (double)FN(dist2)(q, x + (size_t)i * d, d);
                if (core2) {
                    if (w < core_p) w = core_p;
                    if (w < core2[i]) w = core2[i];
                }
                if (w > bound) continue;
                uint32_t row_i = perm[i];
                uint32_t lo = row_p < row_i ? row_p : row_i, hi = row_p ^ row_i ^ lo;
                if (w < best_w || (w == best_w && (lo < best_lo || (lo == best_lo && hi < best_hi)))) {
                    best_w = w;
                    best_q = i;
                    best_lo = lo;
                    best_hi = hi;
                }
            }
            /* Other points of the component may have found better edges. */
            cb = grove__bits_d(atomic_load_explicit(&b->bound[c], memory_order_relaxed));
            bound = best_w < cb ? best_w : cb;
        }
        if (top == 0) break;
        top--;
        cur = stack_node[top];
        cur_lb = stack_lb[top];
    }
    /* Everything not examined weighs more than min(best_w, the last bound
     * read) (bounds only shrink), so that is a lower bound for later rounds;
     * and when best_w is within it, the candidate is exact. */
    double low = best_w < cb ? best_w : cb;
    if (low > b->lower[p]) b->lower[p] = low;
    if (best_q == GROVE__NONE) {
        b->flags[p] = 0;
        return;
    }
    b->cand_w[p] = best_w;
    b->cand_q[p] = best_q;
    b->flags[p] = best_w <= cb ? GROVE__EXACT : 0;
    grove__boruvka_submit(b, p);
}

static inline GROVE__ALWAYS_INLINE void FN(search_range)(grove__boruvka *b, size_t lo, size_t hi, size_t d,
                                                         uint32_t *stack_node, double *stack_lb)
{
    for (size_t p = lo; p < hi; p++)
        if (!(b->flags[p] & GROVE__DONE)) FN(search_one)(b, (uint32_t)p, d, stack_node, stack_lb);
}

bool FN(grove__boruvka_search)(grove__boruvka *b)
{
    enum { CHUNK = 256 };
    size_t n = b->t->n, d = b->t->d;
    bool stopped = false;
#pragma omp parallel num_threads(b->threads) reduction(|| : stopped)
    {
        /* The stack holds one entry per level (grove__boruvka_run refuses
         * depths over 250): small, so no allocation failure to handle inside
         * the team. */
        uint32_t stack_node[256];
        double stack_lb[256];
#pragma omp for schedule(dynamic, 1)
        for (size_t lo = 0; lo < n; lo += CHUNK) {
            /* A round at millions of points takes seconds: the cancel flag
             * is read once per chunk, and a raised one skips the rest. */
            if (stopped || (stopped = grove__cancelled(b->options))) continue;
            size_t hi = n - lo > CHUNK ? lo + CHUNK : n;
#define GROVE__SEARCH_BODY(D) FN(search_range)(b, lo, hi, D, stack_node, stack_lb)
            GROVE__DISPATCH_D(d, GROVE__SEARCH_BODY)
#undef GROVE__SEARCH_BODY
        }
    }
    return !stopped;
}
