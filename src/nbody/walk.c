/* The group walk: one group of sinks descends a tree breadth first. Each
 * cell of the current level list is either accepted (its moments go to the
 * cell list), or, when it is a leaf, opened into the particle list, or its
 * children go to the next level list. Lists are copied into contiguous
 * columns so the kernels stream them. A group walks the local tree and
 * then, in a distributed run, every remote rank's locally essential tree
 * (src/mpi/let.c), appending to the same lists, padded once at the end. */
#include "nbody_internal.h"

#include <math.h>
#include <string.h>

/* Grow a column block of `cols` columns of `elem`-byte values to hold
 * `need` rows, keeping the first `used` rows of every column. */
static bool grow_columns(void **p, size_t *cap, size_t cols, size_t elem, size_t used, size_t need)
{
    if (need <= *cap) return true;
    size_t want = need * 2 + 64;
    char *q = grove__malloc(want * cols * elem, "gravity interaction list");
    if (!q) return false;
    for (size_t k = 0; k < cols && *p; k++) memcpy(q + k * want * elem, (char *)*p + k * *cap * elem, used * elem);
    grove__free(*p);
    *p = q;
    *cap = want;
    return true;
}

static bool grow_ids(uint32_t **p, size_t *cap, size_t need)
{
    if (need <= *cap) return true;
    size_t want = need * 2 + 64;
    uint32_t *q = grove__realloc(*p, want * sizeof *q, "gravity walk list");
    if (!q) return false;
    *p = q;
    *cap = want;
    return true;
}

/* A leaf's particles go to the list in single precision relative to the
 * group's centre, like the cells (see kernel.c), or in double for a wide
 * group. */
static bool add_particles(const grove__nb_source *src, const grove__ocell *c, grove__nb_lists *L)
{
    size_t count = c->end - c->begin, need = L->np + count + GROVE__NB_PAD;
    bool room = L->wide ? grow_columns((void **)&L->pw, &L->cap_pw, GROVE__NB_PCOLS, sizeof *L->pw, L->np, need)
                        : grow_columns((void **)&L->p, &L->cap_p, GROVE__NB_PCOLS, sizeof *L->p, L->np, need);
    if (!room) return false;
    for (size_t k = 0; k < GROVE__NB_PCOLS; k++) {
        const double *from = src->x + k * src->cap + c->begin;
        double off = k < 3 ? L->ctr[k] : 0;
        if (L->wide) {
            double *dst = L->pw + k * L->cap_pw + L->np;
            for (size_t i = 0; i < count; i++) dst[i] = from[i] - off;
        } else {
            float *dst = L->p + k * L->cap_p + L->np;
            for (size_t i = 0; i < count; i++) dst[i] = (float)(from[i] - off);
        }
    }
    L->np += count;
    return true;
}

/* Cell k goes to row `row` of the cell list (columns `cap` apart) in
 * single precision, with its position relative to the group's centre so
 * the float differences keep their accuracy. */
static void add_cell(const grove__nb_source *src, size_t k, const double ctr[3], float *row, size_t cap)
{
    const double *cm = src->cm + 4 * k;
    const float *f = src->fmom + 8 * k;
    for (int a = 0; a < 3; a++) row[a * cap] = (float)(cm[a] - ctr[a]);
    for (int a = 0; a < 8; a++) row[(3 + a) * cap] = f[a];
}

/* The same row of a wide list, in double: the moments from the source's
 * quad where it has them (a remote tree's only in single precision). */
static void add_cell_wide(const grove__nb_source *src, size_t k, const double ctr[3], double *row, size_t cap)
{
    const double *cm = src->cm + 4 * k;
    for (int a = 0; a < 3; a++) row[a * cap] = cm[a] - ctr[a];
    if (src->quad) {
        const double *q = src->quad + 6 * k;
        row[3 * cap] = cm[3];
        for (int a = 0; a < 6; a++) row[(4 + a) * cap] = 1.5 * q[a];
        row[10 * cap] = 0.5 * (q[0] + q[1] + q[2]);
    } else {
        for (int a = 0; a < 8; a++) row[(3 + a) * cap] = src->fmom[8 * k + (size_t)a];
    }
}

grove__nb_source grove__nb_local(const grove__gravity *g)
{
    grove__nb_source s = {g->tree.cell, g->cm, g->rc2, g->fmom, g->x, g->cap_n, g->tree.n, g->quad};
    return s;
}

bool grove__nb_walk_begin(const grove__gravity *g, uint32_t b, uint32_t e, bool wide, grove__nb_lists *L)
{
    size_t cap = g->cap_n;
    double lo[3], hi[3];
    /* The box of the group's sinks only: inactive particles among them in
     * the tree need no forces, so they do not widen it. */
    for (int a = 0; a < 3; a++) lo[a] = hi[a] = g->x[a * cap + g->sink[b]];
    for (uint32_t j = b + 1; j < e; j++)
        for (int a = 0; a < 3; a++) {
            double v = g->x[a * cap + g->sink[j]];
            if (v < lo[a]) lo[a] = v;
            if (v > hi[a]) hi[a] = v;
        }
    for (int a = 0; a < 3; a++) {
        L->ctr[a] = 0.5 * (lo[a] + hi[a]);
        L->half[a] = 0.5 * (hi[a] - lo[a]);
    }
    /* Padding sits at distance >= 1 beyond the group's box. */
    L->far = hi[0] + 1 + (hi[0] < 0 ? -hi[0] : hi[0]);
    L->np = L->nc = 0;
    L->wide = wide;
    L->min_rc2 = INFINITY;
    bool room = wide ? grow_columns((void **)&L->pw, &L->cap_pw, GROVE__NB_PCOLS, sizeof *L->pw, 0, GROVE__NB_PAD)
                     : grow_columns((void **)&L->p, &L->cap_p, GROVE__NB_PCOLS, sizeof *L->p, 0, GROVE__NB_PAD);
    return room && grow_ids(&L->cur, &L->cap_cur, 1);
}

bool grove__nb_walk_source(const grove__nb_source *src, grove__nb_lists *L)
{
    const double *ctr = L->ctr, *half = L->half;
    size_t ncur = 1;
    L->cur[0] = 0;
    while (ncur) {
        /* Room for the whole level: each cell adds at most one cell or
         * eight children (leaves grow the particle list themselves). */
        size_t need = L->nc + ncur + GROVE__NB_PAD;
        bool room = L->wide ? grow_columns((void **)&L->cw, &L->cap_cw, GROVE__NB_CCOLS, sizeof *L->cw, L->nc, need)
                            : grow_columns((void **)&L->c, &L->cap_c, GROVE__NB_CCOLS, sizeof *L->c, L->nc, need);
        if (!room || !grow_ids(&L->next, &L->cap_next, 8 * ncur)) return false;
        size_t nnext = 0, nc = L->nc;
        double min_rc2 = L->min_rc2;
        for (size_t i = 0; i < ncur; i++) {
            uint32_t k = L->cur[i];
            const grove__ocell *c = &src->cell[k];
            double rc2 = src->rc2[k];
            if (grove__nb_box_dist2(ctr, half, src->cm + 4 * (size_t)k) > rc2) {
                if (L->wide) add_cell_wide(src, k, ctr, L->cw + nc++, L->cap_cw);
                else add_cell(src, k, ctr, L->c + nc++, L->cap_c);
                min_rc2 = rc2 < min_rc2 ? rc2 : min_rc2;
            } else if (c->nchild == 0) {
                if (!add_particles(src, c, L)) return false;
                min_rc2 = rc2 < min_rc2 ? rc2 : min_rc2; /* +inf for one particle */
            } else {
                for (uint32_t ch = 0; ch < c->nchild; ch++) L->next[nnext++] = c->child + ch;
            }
        }
        L->nc = nc;
        L->min_rc2 = min_rc2;
        uint32_t *tmp = L->cur;
        L->cur = L->next;
        L->next = tmp;
        size_t tc = L->cap_cur;
        L->cap_cur = L->cap_next;
        L->cap_next = tc;
        ncur = nnext;
    }
    return true;
}

/* Pad both lists to a multiple of GROVE__NB_PAD with massless entries at
 * x = far (see grove__nb_walk_begin), so every padded term is a finite
 * zero; every walk left room for them. */
void grove__nb_walk_end(grove__nb_lists *L)
{
    double x = L->far - L->ctr[0];
    for (size_t i = L->np; i % GROVE__NB_PAD; i++)
        for (size_t k = 0; k < GROVE__NB_PCOLS; k++) {
            if (L->wide) L->pw[k * L->cap_pw + i] = k == 0 ? x : 0;
            else L->p[k * L->cap_p + i] = k == 0 ? (float)x : 0;
        }
    for (size_t i = L->nc; i % GROVE__NB_PAD; i++)
        for (size_t k = 0; k < GROVE__NB_CCOLS; k++) {
            if (L->wide) L->cw[k * L->cap_cw + i] = k == 0 ? x : 0;
            else L->c[k * L->cap_c + i] = k == 0 ? (float)x : 0;
        }
}

void grove__nb_lists_free(grove__nb_lists *L)
{
    if (!L) return;
    grove__free(L->cur);
    grove__free(L->next);
    grove__free(L->p);
    grove__free(L->c);
    grove__free(L->pw);
    grove__free(L->cw);
    memset(L, 0, sizeof *L);
}
