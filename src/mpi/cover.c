/* Covers of a rank's groups, against which the other ranks cut their
 * essential trees for it (let.c): boxes that together hold every group's
 * box, with a binary hierarchy over them so that one test settles a cell
 * far from all of them. The boxes are those of runs of consecutive groups
 * in tree order (compact in space, as the Morton curve is), from one run
 * for all groups down to one run per group. */
#include "let.h"

#include <string.h>

size_t grove__mpi_group_runs(const grove__gravity *g, size_t most, double *boxes)
{
    size_t cap = g->cap_n, m = g->nsinks, run = 0, count = 0;
    for (size_t k = 0; k < g->ngroups; k++) {
        /* A run ends with the group that reaches its share of the sinks. */
        uint32_t end = g->group[k + 1];
        if (k + 1 < g->ngroups && most < g->ngroups && (size_t)end * most < (count + 1) * m) continue;
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

/* The nodes on level l (0: the boxes themselves). */
static size_t level_size(const grove__mpi_cover *c, int l) { return c->first[l + 1] - c->first[l]; }

bool grove__mpi_cover_build(const double *boxes, size_t count, grove__mpi_cover *c)
{
    memset(c, 0, sizeof *c);
    if (count == 0) return true;
    int levels = 1;
    for (size_t k = count; k > 1; k = (k + 1) / 2) levels++;
    c->levels = levels;
    c->first = grove__malloc(((size_t)levels + 1) * sizeof *c->first, "gravity cover");
    /* Level l holds ceil(count / 2^l) nodes: fewer than 2 count + levels in all. */
    c->box = grove__malloc((2 * count + (size_t)levels) * 6 * sizeof *c->box, "gravity cover");
    if (!c->first || !c->box) return false;
    memcpy(c->box, boxes, count * 6 * sizeof *boxes);
    c->first[0] = 0;
    c->first[1] = count;
    /* Each node above the boxes: the box around its two (or one) children. */
    for (int l = 1; l < levels; l++) {
        size_t below = level_size(c, l - 1), n = (below + 1) / 2;
        c->first[l + 1] = c->first[l] + n;
        for (size_t i = 0; i < n; i++) {
            const double *x = c->box + 6 * (c->first[l - 1] + 2 * i);
            const double *y = 2 * i + 1 < below ? x + 6 : x;
            double *b = c->box + 6 * (c->first[l] + i);
            for (int a = 0; a < 3; a++) {
                b[a] = x[a] < y[a] ? x[a] : y[a];
                b[3 + a] = x[3 + a] > y[3 + a] ? x[3 + a] : y[3 + a];
            }
        }
    }
    /* As centres and half sides, enlarged by the margin, as the test takes them. */
    for (size_t k = 0; k < c->first[levels]; k++) {
        double *b = c->box + 6 * k, lo[3];
        memcpy(lo, b, sizeof lo);
        for (int a = 0; a < 3; a++) {
            b[a] = 0.5 * (lo[a] + b[3 + a]);
            b[3 + a] = 0.5 * (b[3 + a] - lo[a]) + GROVE__MPI_COVER_MARGIN;
        }
    }
    return true;
}

bool grove__mpi_cover_accepts(const grove__mpi_cover *c, const double *cm, double rc2)
{
    if (c->levels == 0) return true;
    /* Depth first from the top: a node the test passes for holds only
     * boxes it passes for; a box it fails for fails the cell. At most one
     * pending node per level, plus the one being looked at. */
    int level[72];
    size_t index[72];
    int top = 0;
    level[top] = c->levels - 1;
    index[top++] = 0;
    while (top) {
        int l = level[--top];
        size_t i = index[top];
        const double *b = c->box + 6 * (c->first[l] + i);
        if (grove__nb_box_dist2(b, b + 3, cm) > rc2) continue;
        if (l == 0) return false;
        for (size_t ch = 2 * i; ch <= 2 * i + 1 && ch < level_size(c, l - 1); ch++) {
            level[top] = l - 1;
            index[top++] = ch;
        }
    }
    return true;
}

void grove__mpi_cover_free(grove__mpi_cover *c)
{
    grove__free(c->first);
    grove__free(c->box);
    memset(c, 0, sizeof *c);
}
