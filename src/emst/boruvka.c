/* Borůvka's driver: allocate the state, then rounds of (reuse cached
 * edges, search, merge) until one component is left. */
#include "emst_internal.h"
#include "parallel.h"

#include <math.h>

#define T float
#define FN(name) name##_f32
#include "boruvka_t.h"
#undef T
#undef FN
#define T double
#define FN(name) name##_f64
#include "boruvka_t.h"
#undef T
#undef FN

static void state_free(grove__boruvka *b)
{
    grove__free(b->label);
    grove__free(b->node_label);
    grove__free(b->cand_w);
    grove__free(b->cand_q);
    grove__free(b->lower);
    grove__free(b->flags);
    grove__free(b->bound_mem);
    grove__free(b->best_mem);
    grove__free(b->parent);
    grove__free(b->jump);
    grove__free(b->is_root);
    grove__free(b->comps);
}

static grove_status state_alloc(grove__boruvka *b, size_t n, size_t nodes)
{
    b->label = grove__malloc(n * sizeof *b->label, "EMST labels");
    b->node_label = grove__malloc(nodes * sizeof *b->node_label, "EMST node labels");
    b->cand_w = grove__malloc(n * sizeof *b->cand_w, "EMST candidates");
    b->cand_q = grove__malloc(n * sizeof *b->cand_q, "EMST candidates");
    b->lower = grove__malloc(n * sizeof *b->lower, "EMST lower bounds");
    b->flags = grove__malloc(n, "EMST flags");
    b->bound = b->bound_mem = grove__malloc(n * sizeof *b->bound, "EMST component bounds");
    b->best = b->best_mem = grove__malloc(n * sizeof *b->best, "EMST component edges");
    b->parent = grove__malloc(n * sizeof *b->parent, "EMST merge");
    b->jump = grove__malloc(n * sizeof *b->jump, "EMST merge");
    b->is_root = grove__malloc(n, "EMST merge");
    b->comps = grove__malloc(n * sizeof *b->comps, "EMST components");
    if (!b->label || !b->node_label || !b->cand_w || !b->cand_q || !b->lower || !b->flags || !b->bound ||
        !b->best || !b->parent || !b->jump || !b->is_root || !b->comps)
        return GROVE_OUT_OF_MEMORY;
    return GROVE_OK;
}

static void state_init(grove__boruvka *b)
{
    size_t n = b->t->n, nodes = b->t->nodes;
#pragma omp parallel for num_threads(b->threads) schedule(static)
    for (size_t p = 0; p < n; p++) {
        b->label[p] = (uint32_t)p;
        b->lower[p] = b->core2 ? b->core2[p] : -INFINITY;
        b->flags[p] = 0;
        b->is_root[p] = 1;
        b->comps[p] = (uint32_t)p;
        atomic_init(&b->bound[p], 0);
        atomic_init(&b->best[p], GROVE__NONE);
    }
    /* Only leaves of one point start uniform. */
#pragma omp parallel for num_threads(b->threads) schedule(static)
    for (size_t k = 0; k < nodes; k++) {
        const grove__node *nd = &b->t->node[k];
        b->node_label[k] = nd->end - nd->begin == 1 ? nd->begin : GROVE__NONE;
    }
    b->ncomps = n;
}

/* Start of a round: clear the components' bounds, then every point whose
 * exact candidate still leaves its (grown) component submits it without a
 * search: the nearest point outside a larger set can only be farther, and
 * this one is still outside. Those edges also give the components early
 * bounds that prune the searches. */
static void round_start(grove__boruvka *b)
{
    size_t m = b->ncomps, n = b->t->n;
    uint64_t inf = grove__dbits((double)INFINITY);
#pragma omp parallel for num_threads(b->threads) schedule(static)
    for (size_t i = 0; i < m; i++) {
        atomic_store_explicit(&b->bound[b->comps[i]], inf, memory_order_relaxed);
        atomic_store_explicit(&b->best[b->comps[i]], GROVE__NONE, memory_order_relaxed);
    }
#pragma omp parallel for num_threads(b->threads) schedule(static, 4096)
    for (size_t p = 0; p < n; p++) {
        uint8_t f = b->flags[p] & GROVE__EXACT;
        if (f && b->label[b->cand_q[p]] != b->label[p]) {
            b->flags[p] = GROVE__EXACT | GROVE__DONE;
            grove__boruvka_submit(b, (uint32_t)p);
        } else {
            b->flags[p] = 0;
        }
    }
}

grove_status grove__boruvka_run(const grove__tree *t, const double *core2, uint32_t *eu, uint32_t *ev, double *ew,
                                const grove_options *options)
{
    grove__boruvka b;
    memset(&b, 0, sizeof b);
    b.t = t;
    b.core2 = core2;
    b.eu = eu;
    b.ev = ev;
    b.ew = ew;
    b.threads = grove__threads_for(grove__options(options).threads, t->n);
    b.options = options;
    grove_status s = state_alloc(&b, t->n, t->nodes);
    if (s == GROVE_OK) {
        state_init(&b);
        double total = log2((double)t->n) + 1;
        for (int round = 1; b.ncomps > 1; round++) {
            round_start(&b);
            bool searched = t->dtype == GROVE_FLOAT32 ? grove__boruvka_search_f32(&b) : grove__boruvka_search_f64(&b);
            if (!searched) {
                s = grove__fail(GROVE_CANCELLED, "EMST: cancelled in round %d (%zu components left)", round, b.ncomps);
                break;
            }
            s = grove__boruvka_merge(&b);
            if (s != GROVE_OK) break;
            grove__progress(options, "emst", round >= total ? 0.99 : round / total);
        }
    }
    if (s == GROVE_OK && b.nedges != t->n - 1)
        s = grove__fail(GROVE_INTERNAL, "EMST: found %zu edges for %zu points", b.nedges, t->n);
    state_free(&b);
    return s;
}
