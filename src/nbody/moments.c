/* Cell moments bottom up, in double: mass, centre of mass and the second
 * moments Q_ij = sum m (x - c)_i (x - c)_j about it, plus the tight box.
 * Leaves sum their particles (two passes, so Q is taken about the exact
 * centre of mass); a parent combines its children with the parallel-axis
 * rule. Each level depends only on the one below, and cells of a level are
 * independent, so every level is one parallel loop. */
#include "nbody_internal.h"

#include <math.h>

/* The centre of mass from the mass M and first moments s (the box centre
 * for a massless cell), into cm[0..3]. */
static void centre_of_mass(double M, const double s[3], const double *box, double *cm)
{
    for (int a = 0; a < 3; a++) cm[a] = M > 0 ? s[a] / M : 0.5 * (box[a] + box[3 + a]);
    cm[3] = M;
}

static void leaf_moments(const grove__gravity *g, const grove__ocell *c, double *cm, double *q, double *box)
{
    size_t cap = g->cap_n;
    const double *x = g->x, *y = g->x + cap, *z = g->x + 2 * cap, *m = g->x + 3 * cap;
    double lo[3] = {x[c->begin], y[c->begin], z[c->begin]}, hi[3] = {lo[0], lo[1], lo[2]};
    double M = 0, s[3] = {0, 0, 0};
    for (uint32_t i = c->begin; i < c->end; i++) {
        double p[3] = {x[i], y[i], z[i]};
        M += m[i];
        for (int k = 0; k < 3; k++) {
            s[k] += m[i] * p[k];
            if (p[k] < lo[k]) lo[k] = p[k];
            if (p[k] > hi[k]) hi[k] = p[k];
        }
    }
    for (int k = 0; k < 3; k++) {
        box[k] = lo[k];
        box[3 + k] = hi[k];
    }
    centre_of_mass(M, s, box, cm);
    double qq[6] = {0, 0, 0, 0, 0, 0};
    for (uint32_t i = c->begin; i < c->end; i++) {
        double dx = x[i] - cm[0], dy = y[i] - cm[1], dz = z[i] - cm[2];
        qq[0] += m[i] * dx * dx;
        qq[1] += m[i] * dy * dy;
        qq[2] += m[i] * dz * dz;
        qq[3] += m[i] * dx * dy;
        qq[4] += m[i] * dx * dz;
        qq[5] += m[i] * dy * dz;
    }
    for (int k = 0; k < 6; k++) q[k] = qq[k];
}

static void node_moments(const grove__gravity *g, const grove__ocell *c, double *cm, double *q, double *box)
{
    double M = 0, s[3] = {0, 0, 0};
    const double *b0 = g->box + 6 * (size_t)c->child;
    for (int k = 0; k < 6; k++) box[k] = b0[k];
    for (uint32_t k = c->child; k < c->child + c->nchild; k++) {
        const double *ck = g->cm + 4 * (size_t)k, *bk = g->box + 6 * (size_t)k;
        M += ck[3];
        for (int a = 0; a < 3; a++) {
            s[a] += ck[3] * ck[a];
            if (bk[a] < box[a]) box[a] = bk[a];
            if (bk[3 + a] > box[3 + a]) box[3 + a] = bk[3 + a];
        }
    }
    centre_of_mass(M, s, box, cm);
    double qq[6] = {0, 0, 0, 0, 0, 0};
    for (uint32_t k = c->child; k < c->child + c->nchild; k++) {
        const double *ck = g->cm + 4 * (size_t)k, *qk = g->quad + 6 * (size_t)k;
        double m = ck[3], dx = ck[0] - cm[0], dy = ck[1] - cm[1], dz = ck[2] - cm[2];
        qq[0] += qk[0] + m * dx * dx;
        qq[1] += qk[1] + m * dy * dy;
        qq[2] += qk[2] + m * dz * dz;
        qq[3] += qk[3] + m * dx * dy;
        qq[4] += qk[4] + m * dx * dz;
        qq[5] += qk[5] + m * dy * dz;
    }
    for (int k = 0; k < 6; k++) q[k] = qq[k];
}

/* Bonsai's opening radius: l = the longest side of the tight box, s = the
 * distance from its centre to the centre of mass; a group accepts the cell
 * beyond l / theta + s. A cell of one particle is always opened. */
static double open_radius2(const grove__ocell *c, const double *cm, const double *box, double theta)
{
    if (theta <= 0 || c->end - c->begin == 1) return INFINITY;
    double l = 0, s2 = 0;
    for (int a = 0; a < 3; a++) {
        double side = box[3 + a] - box[a], off = 0.5 * (box[a] + box[3 + a]) - cm[a];
        if (side > l) l = side;
        s2 += off * off;
    }
    double r = l / theta + sqrt(s2);
    return r * r;
}

/* The single-precision moments that the walk puts on the cell lists,
 * scaled as p2c (kernel.c) takes them, made once here rather than once per
 * group. */
static void float_moments(const double *cm, const double *q, float *f)
{
    f[0] = (float)cm[3];
    for (int a = 0; a < 6; a++) f[1 + a] = (float)(1.5 * q[a]);
    f[7] = (float)(0.5 * (q[0] + q[1] + q[2]));
}

void grove__nb_moments(grove__gravity *g, double theta, int threads)
{
    const grove__octree *t = &g->tree;
    for (int l = t->levels - 1; l >= 0; l--) {
        size_t a = t->level_start[l], b = t->level_start[l + 1];
#pragma omp parallel for num_threads(threads) schedule(dynamic, 64)
        for (size_t k = a; k < b; k++) {
            const grove__ocell *c = &t->cell[k];
            double *cm = g->cm + 4 * k, *q = g->quad + 6 * k, *box = g->box + 6 * k;
            if (c->nchild) node_moments(g, c, cm, q, box);
            else leaf_moments(g, c, cm, q, box);
            g->rc2[k] = open_radius2(c, cm, box, theta);
            float_moments(cm, q, g->fmom + 8 * k);
        }
    }
}
