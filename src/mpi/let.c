/* Locally essential trees (Bonsai's scheme, simplified; docs/mpi.md).
 * Every rank has built its tree, moments and groups on its own particles
 * and describes where its groups are by a cover: up to COVER boxes, each
 * the box of the sinks of a run of consecutive groups (tree order, so a
 * run is compact in space even where the rank's key range, and so its
 * whole box, is not). The covers are gathered; for every other rank r the
 * owner walks its tree breadth first against r's cover boxes B_i
 * (enlarged by MARGIN) with the walk's own test,
 * grove__nb_box_dist2(B_i, cm_k) > rc2[k] for every i:
 *  - an accepted cell is sent childless with rc2 = -1, so it is always
 *    accepted: every group box of r lies inside one B_i, so the test
 *    passing for every B_i implies it passes for every group, and r's walk
 *    accepts it, as a walk of the owner's whole tree would;
 *  - a leaf that is not accepted is sent with its particles;
 *  - any other cell is sent with its true rc2 and its children.
 * Children stay consecutive and in the tree's order, so r's breadth-first
 * walk of the cut tree meets the cells and particles of a walk of the
 * whole tree in the same order. The cut trees travel by MPI_Alltoallv
 * (cells, then particles). */
#include "let.h"

#ifdef GROVE_HAVE_MPI

#include <math.h>
#include <string.h>

/* Enlargement of a cover box (in the evaluation's units, where the system
 * is of size about 1) that absorbs the rounding of its centre and halves. */
#define MARGIN 0x1p-36
/* Most boxes in a rank's cover: what every rank gathers (48 bytes a box
 * from every rank) against how tightly the cover follows the groups. */
#define COVER 64

/* A rank's cover for the cut: the centres and half sides of its boxes,
 * the first one the box around all of them. */
typedef struct cover_boxes {
    double ctr[COVER + 1][3], half[COVER + 1][3];
    int count; /* boxes after the first; 0 = the rank has no groups */
} cover_boxes;

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

/* Whether a cell at cm with opening radius rc2 is accepted for every box
 * of the cover (at once when it is for the box around them all). */
static bool accepted(const cover_boxes *c, const double *cm, double rc2)
{
    if (grove__nb_box_dist2(c->ctr[0], c->half[0], cm) > rc2) return true;
    for (int i = 1; i <= c->count; i++)
        if (!(grove__nb_box_dist2(c->ctr[i], c->half[i], cm) > rc2)) return false;
    return true;
}

/* The tree of g cut for the cover c. */
static bool cut(const grove__gravity *g, const cover_boxes *cover, cut_tree *t)
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
        if (accepted(cover, w.cm, w.rc2)) {
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
}

/* This rank's cover into boxes (lo[3], hi[3] each): runs of consecutive
 * groups of about m / COVER sinks each (m sinks in all), each run's box
 * the box of its sinks, as the walk takes a group's; returns how many. */
static int own_cover(const grove__gravity *g, double *boxes)
{
    size_t cap = g->cap_n, m = g->nsinks, run = 0;
    int count = 0;
    for (size_t k = 0; k < g->ngroups; k++) {
        /* A run ends with the group that reaches its share of the sinks. */
        uint32_t end = g->group[k + 1];
        if (k + 1 < g->ngroups && (size_t)end * COVER < (size_t)(count + 1) * m) continue;
        double *b = boxes + 6 * count++;
        for (int a = 0; a < 3; a++) b[a] = b[3 + a] = g->x[a * cap + g->sink[g->group[run]]];
        for (uint32_t j = g->group[run]; j < end; j++)
            for (int a = 0; a < 3; a++) {
                double v = g->x[a * cap + g->sink[j]];
                b[a] = v < b[a] ? v : b[a];
                b[3 + a] = v > b[3 + a] ? v : b[3 + a];
            }
        run = k + 1;
    }
    return count;
}

/* The cover of count boxes (lo, hi) for the cut, the box around them first. */
static void cover_of(const double *boxes, int count, cover_boxes *c)
{
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    c->count = count;
    for (int i = 0; i < count; i++) {
        const double *b = boxes + 6 * i;
        for (int a = 0; a < 3; a++) {
            c->ctr[i + 1][a] = 0.5 * (b[a] + b[3 + a]);
            c->half[i + 1][a] = 0.5 * (b[3 + a] - b[a]) + MARGIN;
            lo[a] = b[a] < lo[a] ? b[a] : lo[a];
            hi[a] = b[3 + a] > hi[a] ? b[3 + a] : hi[a];
        }
    }
    for (int a = 0; a < 3; a++) {
        c->ctr[0][a] = 0.5 * (lo[a] + hi[a]);
        c->half[0][a] = 0.5 * (hi[a] - lo[a]) + MARGIN;
    }
}

/* The cut trees for every other rank with groups, concatenated in rank
 * order into *cells and *parts, with their counts per rank; the covers:
 * rank r's ncover[r] boxes from boxes + 6 first[r]. */
static grove_status cut_all(const grove_mpi *mpi, const grove__gravity *g, const double *boxes, const int *ncover,
                            const int *first, int threads, int *ncell, int *npart, wire_cell **cells, double **parts)
{
    int P = mpi->size;
    cut_tree *t = grove__calloc((size_t)P, sizeof *t, "gravity essential trees");
    if (!t) return GROVE_OUT_OF_MEMORY;
    bool ok = true;
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) reduction(&& : ok)
    for (int r = 0; r < P; r++) {
        if (!g || r == mpi->rank || ncover[r] == 0) continue;
        cover_boxes *c = grove__malloc(sizeof *c, "gravity essential trees");
        if (c) cover_of(boxes + 6 * (size_t)first[r], ncover[r], c);
        ok = c && cut(g, c, &t[r]) && ok;
        grove__free(c);
    }
    size_t nc = 0, np = 0;
    grove_status s = ok ? GROVE_OK : GROVE_OUT_OF_MEMORY;
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
    for (int r = 0; r < P; r++) cut_free(&t[r]);
    grove__free(t);
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
                                               x, m, m};
        c0 += (size_t)ncell[r];
        p0 += m;
    }
    return GROVE_OK;
}

/* Every rank's cover on every rank: *boxes (allocated) holds rank r's
 * ncover[r] boxes from 6 first[r] (ncover, first: P entries each). */
static grove_status gather_covers(const grove_mpi *mpi, const grove__gravity *g, double **boxes, int *ncover,
                                  int *first)
{
    int P = mpi->size;
    double mine[6 * COVER];
    int count = g ? own_cover(g, mine) : 0, doubles = 6 * count;
    MPI_Allgather(&count, 1, MPI_INT, ncover, 1, MPI_INT, mpi->comm);
    int *sizes = grove__malloc(2 * (size_t)P * sizeof *sizes, "gravity covers");
    size_t total = 0;
    for (int r = 0; r < P; r++) {
        first[r] = (int)total;
        total += (size_t)ncover[r];
    }
    *boxes = grove__malloc((total ? total : 1) * 6 * sizeof **boxes, "gravity covers");
    grove_status s = grove__mpi_agree(mpi, sizes && *boxes ? GROVE_OK : GROVE_OUT_OF_MEMORY, "gravity");
    if (s == GROVE_OK) {
        for (int r = 0; r < P; r++) {
            sizes[r] = 6 * ncover[r];
            sizes[P + r] = 6 * first[r];
        }
        MPI_Allgatherv(mine, doubles, MPI_DOUBLE, *boxes, sizes, sizes + P, MPI_DOUBLE, mpi->comm);
    }
    grove__free(sizes);
    return s;
}

grove_status grove__mpi_let_exchange(const grove_mpi *mpi, const grove__gravity *g, int threads, grove__mpi_let *let)
{
    memset(let, 0, sizeof *let);
    int P = mpi->size;
    double *boxes = NULL;
    int *counts = grove__malloc(6 * (size_t)P * sizeof *counts, "gravity essential trees");
    grove_status s = grove__mpi_agree(mpi, counts ? GROVE_OK : GROVE_OUT_OF_MEMORY, "gravity");
    wire_cell *cells = NULL;
    double *parts = NULL;
    void *got_cells = NULL, *got_parts = NULL;
    if (s == GROVE_OK) s = gather_covers(mpi, g, &boxes, counts + 4 * P, counts + 5 * P);
    if (s == GROVE_OK)
        s = grove__mpi_agree(
            mpi, cut_all(mpi, g, boxes, counts + 4 * P, counts + 5 * P, threads, counts, counts + P, &cells, &parts),
            "gravity");
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
    grove__free(boxes);
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

#endif
