/* Locally essential trees (Bonsai's scheme, simplified; docs/mpi.md).
 * Every rank has built its tree, moments and groups on its own particles
 * and describes where its groups are by a cover (cover.c): boxes that
 * together hold every group's box. For every other rank r the owner walks
 * its tree breadth first against r's cover with the walk's own test,
 * grove__nb_box_dist2(B, cm_k) > rc2[k] for every cover box B:
 *  - an accepted cell is sent childless with rc2 = -1, so it is always
 *    accepted: every group box of r lies inside a cover box, so the test
 *    passing for every cover box implies it passes for every group, and
 *    r's walk accepts it, as a walk of the owner's whole tree would;
 *  - a leaf that is not accepted is sent with its particles;
 *  - any other cell is sent with its true rc2 and its children.
 * Children stay consecutive and in the tree's order, so r's breadth-first
 * walk of the cut tree meets the cells and particles of a walk of the
 * whole tree in the same order. Two rounds: every rank gathers every
 * other's cover of COVER runs of groups (what far ranks need); where the
 * tree cut against it holds particles (a near neighbour, where a run's box
 * follows the groups too loosely), the owner asks that rank for its
 * groups' own boxes and cuts again. The cut trees travel by MPI_Alltoallv
 * (cells, then particles). */
#include "let.h"

#include <math.h>
#include <string.h>

/* Most runs in the cover every rank gathers from every other (48 bytes a
 * run): how closely it follows a rank's groups for the ranks far away. */
#define COVER 64

/* A cell on the wire: child and particle ranges index the cut tree's own. */
typedef struct wire_cell {
    double cm[4], rc2;
    float fmom[8];
    uint32_t begin, end, child, nchild;
} wire_cell;

/* One cut tree being built: its cells (and the owner's cell each came
 * from) and particles (x, y, z, m rows). */
typedef struct cut_tree {
    wire_cell *cell;
    uint32_t *from;
    size_t nc, cap_c;
    double *part;
    size_t np, cap_p;
} cut_tree;

static bool grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap) return true;
    size_t want = need * 2 + 64;
    void *q = grove__realloc(*p, want * elem, "gravity essential tree");
    if (!q) return false;
    *p = q;
    *cap = want;
    return true;
}

static bool push(cut_tree *t, uint32_t k)
{
    if (t->nc == t->cap_c) {
        size_t want = 2 * t->cap_c + 64;
        wire_cell *c = grove__realloc(t->cell, want * sizeof *c, "gravity essential tree");
        if (!c) return false;
        t->cell = c;
        uint32_t *f = grove__realloc(t->from, want * sizeof *f, "gravity essential tree");
        if (!f) return false;
        t->from = f;
        t->cap_c = want;
    }
    t->from[t->nc++] = k;
    return true;
}

/* The tree of g cut for the cover c of a rank's groups. */
static bool cut(const grove__gravity *g, const grove__mpi_cover *cover, cut_tree *t)
{
    size_t cap = g->cap_n;
    if (!push(t, 0)) return false;
    for (size_t i = 0; i < t->nc; i++) {
        uint32_t k = t->from[i];
        const grove__ocell *c = &g->tree.cell[k];
        wire_cell w;
        memset(&w, 0, sizeof w);
        memcpy(w.cm, g->cm + 4 * (size_t)k, sizeof w.cm);
        memcpy(w.fmom, g->fmom + 8 * (size_t)k, sizeof w.fmom);
        w.rc2 = g->rc2[k];
        if (grove__mpi_cover_accepts(cover, w.cm, w.rc2)) {
            w.rc2 = -1;
        } else if (c->nchild == 0) {
            size_t count = c->end - c->begin;
            if (!grow((void **)&t->part, &t->cap_p, t->np + count, 4 * sizeof *t->part)) return false;
            w.begin = (uint32_t)t->np;
            for (uint32_t j = c->begin; j < c->end; j++, t->np++)
                for (int a = 0; a < 4; a++) t->part[4 * t->np + a] = g->x[a * cap + j];
            w.end = (uint32_t)t->np;
        } else {
            w.child = (uint32_t)t->nc;
            w.nchild = c->nchild;
            for (uint32_t ch = 0; ch < c->nchild; ch++)
                if (!push(t, c->child + ch)) return false;
        }
        t->cell[i] = w;
    }
    return true;
}

static void cut_free(cut_tree *t)
{
    grove__free(t->cell);
    grove__free(t->from);
    grove__free(t->part);
    memset(t, 0, sizeof *t);
}

/* Boxes of every rank (a cover's runs, or its groups): rank r's count[r]
 * boxes (6 doubles each) from 6 first[r] of *boxes. */
typedef struct rank_boxes {
    double *boxes;
    int *count, *first; /* P entries each */
} rank_boxes;

/* Cut t[r] anew for every rank r flagged in which (NULL: every other rank
 * with groups), against r's boxes. */
static bool cut_for(const grove_mpi *mpi, const grove__gravity *g, const rank_boxes *b, const uint8_t *which,
                    int threads, cut_tree *t)
{
    bool ok = true;
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) reduction(&& : ok)
    for (int r = 0; r < mpi->size; r++) {
        if (r == mpi->rank || b->count[r] == 0 || (which && !which[r])) continue;
        grove__mpi_cover c;
        cut_free(&t[r]);
        ok = grove__mpi_cover_build(b->boxes + 6 * (size_t)b->first[r], (size_t)b->count[r], &c) && cut(g, &c, &t[r]) &&
             ok;
        grove__mpi_cover_free(&c);
    }
    return ok;
}

/* The cut trees concatenated in rank order into *cells and *parts, with
 * their counts per rank. */
static grove_status pack(const grove_mpi *mpi, const cut_tree *t, int *ncell, int *npart, wire_cell **cells,
                         double **parts)
{
    int P = mpi->size;
    size_t nc = 0, np = 0;
    grove_status s = GROVE_OK;
    for (int r = 0; r < P; r++) {
        if (t[r].nc > INT32_MAX || t[r].np > INT32_MAX / 4)
            s = grove__fail(GROVE_TOO_LARGE, "gravity: an essential tree of more than 2^31 - 1 items");
        ncell[r] = (int)t[r].nc;
        npart[r] = (int)t[r].np;
        nc += t[r].nc;
        np += t[r].np;
    }
    *cells = grove__malloc((nc ? nc : 1) * sizeof **cells, "gravity essential trees");
    *parts = grove__malloc((np ? np : 1) * 4 * sizeof **parts, "gravity essential trees");
    if (!*cells || !*parts) s = GROVE_OUT_OF_MEMORY;
    nc = np = 0;
    for (int r = 0; s == GROVE_OK && r < P; r++) {
        if (t[r].nc) memcpy(*cells + nc, t[r].cell, t[r].nc * sizeof **cells);
        if (t[r].np) memcpy(*parts + 4 * np, t[r].part, t[r].np * 4 * sizeof **parts);
        nc += t[r].nc;
        np += t[r].np;
    }
    return s;
}

/* The received trees into the walk's layout. */
static grove_status store(const grove_mpi *mpi, const wire_cell *cells, const double *parts, const int *ncell,
                          const int *npart, grove__mpi_let *let)
{
    int P = mpi->size;
    size_t nc = 0, np = 0;
    for (int r = 0; r < P; r++) {
        nc += (size_t)ncell[r];
        np += (size_t)npart[r];
        let->nsrc += ncell[r] > 0;
    }
    let->src = grove__malloc((let->nsrc ? let->nsrc : 1) * sizeof *let->src, "gravity essential trees");
    let->cell = grove__malloc((nc ? nc : 1) * sizeof *let->cell, "gravity essential trees");
    let->cm = grove__malloc((nc ? nc : 1) * 4 * sizeof *let->cm, "gravity essential trees");
    let->rc2 = grove__malloc((nc ? nc : 1) * sizeof *let->rc2, "gravity essential trees");
    let->fmom = grove__malloc((nc ? nc : 1) * 8 * sizeof *let->fmom, "gravity essential trees");
    let->x = grove__malloc((np ? np : 1) * 4 * sizeof *let->x, "gravity essential trees");
    if (!let->src || !let->cell || !let->cm || !let->rc2 || !let->fmom || !let->x) return GROVE_OUT_OF_MEMORY;
    size_t c0 = 0, p0 = 0, k = 0;
    for (int r = 0; r < P; r++) {
        size_t m = (size_t)npart[r];
        for (size_t i = 0; i < (size_t)ncell[r]; i++) {
            const wire_cell *w = &cells[c0 + i];
            let->cell[c0 + i] = (grove__ocell){w->begin, w->end, w->child, 0, (uint8_t)w->nchild, 0};
            memcpy(let->cm + 4 * (c0 + i), w->cm, sizeof w->cm);
            let->rc2[c0 + i] = w->rc2;
            memcpy(let->fmom + 8 * (c0 + i), w->fmom, sizeof w->fmom);
        }
        double *x = let->x + 4 * p0;
        for (size_t j = 0; j < m; j++)
            for (int a = 0; a < 4; a++) x[a * m + j] = parts[4 * (p0 + j) + a];
        if (ncell[r] > 0)
            let->src[k++] = (grove__nb_source){let->cell + c0, let->cm + 4 * c0, let->rc2 + c0, let->fmom + 8 * c0,
                                               x, m, m, NULL}; /* moments in single precision only */
        c0 += (size_t)ncell[r];
        p0 += m;
    }
    return GROVE_OK;
}

static MPI_Datatype box_type(void)
{
    MPI_Datatype t;
    MPI_Type_contiguous(6, MPI_DOUBLE, &t);
    MPI_Type_commit(&t);
    return t;
}

/* Every rank's cover of COVER runs, on every rank. */
static grove_status gather_runs(const grove_mpi *mpi, const grove__gravity *g, rank_boxes *b)
{
    int P = mpi->size;
    double mine[6 * COVER];
    int count = g ? (int)grove__mpi_group_runs(g, COVER, mine) : 0;
    MPI_Allgather(&count, 1, MPI_INT, b->count, 1, MPI_INT, mpi->comm);
    size_t total = 0;
    for (int r = 0; r < P; r++) {
        b->first[r] = (int)total;
        total += (size_t)b->count[r];
    }
    b->boxes = grove__malloc((total ? total : 1) * 6 * sizeof *b->boxes, "gravity covers");
    grove_status s = grove__mpi_agree(mpi, b->boxes ? GROVE_OK : GROVE_OUT_OF_MEMORY, "gravity");
    if (s == GROVE_OK) {
        MPI_Datatype t = box_type();
        MPI_Allgatherv(mine, count, t, b->boxes, b->count, b->first, t, mpi->comm);
        MPI_Type_free(&t);
    }
    return s;
}

/* The ranks flagged in need (those whose coarse cut holds particles: near
 * neighbours) send this rank their groups' boxes into *b; this rank sends
 * its own to the ranks that ask. */
static grove_status swap_groups(const grove_mpi *mpi, const grove__gravity *g, const uint8_t *need, rank_boxes *b)
{
    int P = mpi->size, *ask = grove__malloc(3 * (size_t)P * sizeof *ask, "gravity covers");
    size_t groups = g ? g->ngroups : 0;
    double *mine = grove__malloc((groups ? groups : 1) * 6 * sizeof *mine, "gravity covers");
    grove_status s = grove__mpi_agree(mpi, ask && mine ? GROVE_OK : GROVE_OUT_OF_MEMORY, "gravity");
    double *send = NULL;
    if (s == GROVE_OK) {
        for (int r = 0; r < P; r++) ask[r] = need[r];
        MPI_Alltoall(ask, 1, MPI_INT, ask + P, 1, MPI_INT, mpi->comm);
        size_t asked = 0;
        for (int r = 0; r < P; r++) asked += ask[P + r] != 0;
        if (groups > INT32_MAX) s = grove__fail(GROVE_TOO_LARGE, "gravity: more than 2^31 - 1 groups on a rank");
        size_t rows = asked * groups;
        send = grove__malloc((rows ? rows : 1) * 6 * sizeof *send, "gravity covers");
        if (s == GROVE_OK && !send) s = GROVE_OUT_OF_MEMORY;
        s = grove__mpi_agree(mpi, s, "gravity");
    }
    if (s == GROVE_OK) {
        if (groups) grove__mpi_group_runs(g, groups, mine);
        size_t k = 0;
        for (int r = 0; r < P; r++) {
            ask[2 * P + r] = ask[P + r] ? (int)groups : 0;
            if (ask[P + r]) memcpy(send + 6 * groups * k++, mine, groups * 6 * sizeof *mine);
        }
        MPI_Datatype t = box_type();
        void *got = NULL;
        s = grove__mpi_alltoallv(mpi, "gravity", send, ask + 2 * P, t, 6 * sizeof(double), &got, b->count,
                                 "group boxes");
        MPI_Type_free(&t);
        b->boxes = got;
        size_t total = 0;
        for (int r = 0; r < P; r++) {
            b->first[r] = (int)total;
            total += s == GROVE_OK ? (size_t)b->count[r] : 0;
        }
    }
    grove__free(ask);
    grove__free(mine);
    grove__free(send);
    return s;
}

/* The trees cut for every other rank: against its cover of runs first;
 * for the ranks where that cut holds particles (the near neighbours,
 * whose groups a run's box follows too loosely), again against their
 * groups' own boxes. */
static grove_status cut_trees(const grove_mpi *mpi, const grove__gravity *g, int threads, cut_tree *t)
{
    int P = mpi->size;
    int *counts = grove__malloc(4 * (size_t)P * sizeof *counts, "gravity covers");
    uint8_t *need = grove__calloc((size_t)P, 1, "gravity covers");
    grove_status s = grove__mpi_agree(mpi, counts && need ? GROVE_OK : GROVE_OUT_OF_MEMORY, "gravity");
    rank_boxes runs = {NULL, counts, counts + P}, groups = {NULL, counts + 2 * P, counts + 3 * P};
    if (s == GROVE_OK) s = gather_runs(mpi, g, &runs);
    if (s == GROVE_OK)
        s = grove__mpi_agree(mpi, !g || cut_for(mpi, g, &runs, NULL, threads, t) ? GROVE_OK : GROVE_OUT_OF_MEMORY,
                             "gravity");
    for (int r = 0; s == GROVE_OK && r < P; r++) need[r] = t[r].np > 0;
    if (s == GROVE_OK) s = swap_groups(mpi, g, need, &groups);
    if (s == GROVE_OK)
        s = grove__mpi_agree(mpi, !g || cut_for(mpi, g, &groups, need, threads, t) ? GROVE_OK : GROVE_OUT_OF_MEMORY,
                             "gravity");
    grove__free(runs.boxes);
    grove__free(groups.boxes);
    grove__free(counts);
    grove__free(need);
    return s;
}

grove_status grove__mpi_let_exchange(const grove_mpi *mpi, const grove__gravity *g, int threads, grove__mpi_let *let)
{
    memset(let, 0, sizeof *let);
    int P = mpi->size;
    int *counts = grove__malloc(4 * (size_t)P * sizeof *counts, "gravity essential trees");
    cut_tree *t = grove__calloc((size_t)P, sizeof *t, "gravity essential trees");
    grove_status s = grove__mpi_agree(mpi, counts && t ? GROVE_OK : GROVE_OUT_OF_MEMORY, "gravity");
    wire_cell *cells = NULL;
    double *parts = NULL;
    void *got_cells = NULL, *got_parts = NULL;
    if (s == GROVE_OK) s = cut_trees(mpi, g, threads, t);
    if (s == GROVE_OK) s = grove__mpi_agree(mpi, pack(mpi, t, counts, counts + P, &cells, &parts), "gravity");
    for (int r = 0; t && r < P; r++) cut_free(&t[r]);
    grove__free(t);
    MPI_Datatype tc, tp;
    MPI_Type_contiguous((int)sizeof(wire_cell), MPI_BYTE, &tc);
    MPI_Type_commit(&tc);
    MPI_Type_contiguous(4, MPI_DOUBLE, &tp);
    MPI_Type_commit(&tp);
    if (s == GROVE_OK)
        s = grove__mpi_alltoallv(mpi, "gravity", cells, counts, tc, sizeof(wire_cell), &got_cells, counts + 2 * P,
                                 "essential tree cells");
    if (s == GROVE_OK)
        s = grove__mpi_alltoallv(mpi, "gravity", parts, counts + P, tp, 4 * sizeof(double), &got_parts,
                                 counts + 3 * P, "essential tree particles");
    MPI_Type_free(&tc);
    MPI_Type_free(&tp);
    grove__free(cells);
    grove__free(parts);
    if (s == GROVE_OK) s = store(mpi, got_cells, got_parts, counts + 2 * P, counts + 3 * P, let);
    grove__free(got_cells);
    grove__free(got_parts);
    grove__free(counts);
    s = grove__mpi_agree(mpi, s, "gravity");
    if (s != GROVE_OK) grove__mpi_let_free(let);
    return s;
}

void grove__mpi_let_free(grove__mpi_let *let)
{
    grove__free(let->src);
    grove__free(let->cell);
    grove__free(let->cm);
    grove__free(let->rc2);
    grove__free(let->x);
    grove__free(let->fmom);
    memset(let, 0, sizeof *let);
}
