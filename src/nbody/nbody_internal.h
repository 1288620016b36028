/* Internals of the gravity / N-body module: the reusable force engine
 * (tree, moments, groups, per-thread interaction lists) shared by the
 * one-shot grove_gravity and the simulation handle. */
#ifndef GROVE_NBODY_INTERNAL_H
#define GROVE_NBODY_INTERNAL_H

#include "../index/octree.h"

#include <math.h>

/* Sources are padded to a multiple of this many entries (zero mass) so the
 * kernels' loops need no remainder code. */
#define GROVE__NB_PAD 8

/* One thread's interaction lists: cells to open (breadth first) and the
 * accepted cells and opened particles as structure-of-arrays columns, both
 * in single precision with positions relative to the group's centre (see
 * kernel.c), or, for a wide group, in double (pw, cw; same columns). */
typedef struct grove__nb_lists {
    uint32_t *cur, *next;
    size_t cap_cur, cap_next;
    float *p;        /* 4 columns x cap_p: x, y, z (relative to ctr), m */
    size_t np, cap_p;
    float *c;        /* 11 columns x cap_c: x, y, z (relative to ctr), then the cell's
                        fmom: m, 3/2 (q11, q22, q33, q12, q13, q23), 1/2 tr(Q) */
    size_t nc, cap_c;
    double *pw, *cw; /* the same columns in double, for a wide group */
    size_t cap_pw, cap_cw;
    bool wide;       /* this walk writes pw and cw */
    double min_rc2;  /* the smallest finite rc2 among the cells the walk accepted or opened */
    double ctr[3], half[3]; /* centre and half sides of the group's box */
    double far;      /* the padding's x (beyond the group's box) */
} grove__nb_lists;

/* A group walks in double (its lists in pw and cw, evaluated by
 * grove__nb_evaluate_wide) when a cell it accepted or opened has an
 * opening radius below 2^-20 (rc2 below this), in the evaluation's units,
 * where the system's half size is about 1: its interactions span distances
 * from there to the system's size, which single precision's range (2^-126
 * to 2^128, with r^-5 in the cell kernel) cannot hold together; or when
 * its float sums found a sink on another particle, which may be distinct
 * positions that single precision cannot tell apart, or were not finite
 * (a pair too close for single precision's range; grove__nb_evaluate's
 * false). */
#define GROVE__NB_WIDE_RC2 0x1p-40

enum { GROVE__NB_PCOLS = 4, GROVE__NB_CCOLS = 11 };

/* The force engine; all buffers grow on demand and are kept between calls. */
typedef struct grove__gravity {
    grove__octree tree;
    size_t cap_n, cap_cells;
    double *x;            /* 4 columns x cap_n in tree order: x, y, z, m */
    double *out;          /* 4 columns x cap_n in tree order: ax, ay, az, pot (before
                             the walk: the positions in the evaluation's units, n x 3) */
    uint32_t *mark;       /* cap_n: group candidates (parent + 1), per sink */
    uint32_t *sink;       /* cap_n: the sinks (active particles), tree-order indices */
    uint32_t *first;      /* cap_n + 1: sinks before each tree position (groups.c) */
    size_t nsinks;
    uint32_t *group;      /* ngroups + 1 offsets into sink[] */
    size_t ngroups;
    double *cm;           /* 4 per cell: centre of mass x, y, z and mass */
    double *quad;         /* 6 per cell: q11, q22, q33, q12, q13, q23 about cm */
    double *box;          /* 6 per cell: tight box lo[3], hi[3] */
    double *rc2;          /* per cell: (l / theta + s)^2, +inf = always open */
    float *fmom;          /* 8 per cell: mass, 3/2 (q11, q22, q33, q12, q13, q23),
                             1/2 tr(Q) in single precision, as p2c takes them */
    grove__nb_lists *lists;
    int nlists;
    const grove_options *options; /* the running call's, for its cancel flag (read per group); NULL = none */
} grove__gravity;

/* Squared distance from a point to the box centre +- half: the walk's
 * opening test is grove__nb_box_dist2(group box, cm) > rc2. Written with
 * fabs and a max rather than an if around the sum: the walk tests boxes
 * on both sides of the cut at random, so a branch there mispredicts. */
static inline double grove__nb_box_dist2(const double *ctr, const double *half, const double *p)
{
    double d2 = 0;
    for (int a = 0; a < 3; a++) {
        double d = fabs(p[a] - ctr[a]) - half[a];
        d = d > 0 ? d : 0;
        d2 += d * d;
    }
    return d2;
}

/* A factor G 2^e that brings results back to the caller's units: f where
 * it is a normal double (direct), else g = the mantissa of G and the
 * exponent e + that of G (units.c). */
typedef struct grove__nb_back {
    double f, g;
    int e;
    bool direct;
} grove__nb_back;

static inline double grove__nb_back_apply(double v, const grove__nb_back *b)
{
    return b->direct ? v * b->f : ldexp(b->g * v, b->e);
}

/* The units one evaluation computes in (units.c): positions minus origin
 * times to_length, masses times to_mass (both powers of two), the
 * softening in those units, and the factors back for accelerations and
 * potentials. */
typedef struct grove__nb_units {
    double origin[3], to_length, to_mass, softening;
    grove__nb_back acc, pot;
} grove__nb_units;

/* The units for n >= 1 validated particles and parameters; with
 * `potentials`, fails (before any computing) when they are sure to be
 * beyond the largest double. */
grove_status grove__nb_choose_units(const double *pos, const double *mass, size_t n, const grove_gravity_params *p,
                                    bool potentials, int threads, grove__nb_units *u);
/* The same from the bounding box lo, hi and largest mass mmax of n >= 1
 * particles (a distributed call reduces them over its ranks first). */
grove_status grove__nb_units_from(const double lo[3], const double hi[3], double mmax, size_t n,
                                  const grove_gravity_params *p, bool potentials, grove__nb_units *u);

/* Validated parameters: NULL -> defaults, ranges checked. */
grove_status grove__gravity_params(const grove_gravity_params *in, grove_gravity_params *out);
/* Check positions (a view of n x 3 finite float32 or float64 values) and
 * masses (n finite values >= 0), and give the positions as packed n x 3
 * doubles in *xyz: the caller's memory when the view is that already,
 * else a converted copy, also in *copy (free it with grove__free; NULL
 * when there is none, and on failure). A message names particle i as row
 * first + i: on several ranks the input is a part of the whole. */
grove_status grove__gravity_input(grove_points pos, const double *mass, size_t first, const double **xyz,
                                  double **copy);

/* One force evaluation on validated input (n >= 1): acc n x 3, pot n or
 * NULL, stats or NULL, in input order. active: n flags in input order
 * (NULL = all): the tree and moments are built from every particle, but
 * only the active ones are sinks, and only their rows of acc and pot are
 * written; the stats count the sinks' interactions. Computed in the units of
 * grove__nb_choose_units, so results do not depend on the caller's; fails
 * when a result is beyond the largest double (naming the particle). A
 * raised cancel flag in g->options stops it with GROVE_CANCELLED before
 * acc, pot or stats are written. */
grove_status grove__gravity_eval(grove__gravity *g, const double *pos, const double *mass, size_t n,
                                 const uint8_t *active, const grove_gravity_params *p, double *acc, double *pot,
                                 grove_gravity_stats *stats, int threads);
void grove__gravity_free(grove__gravity *g);

/* What computes the forces of a prepared evaluation (tree, moments and
 * groups built; results into g->out as grove__gravity_forces leaves
 * them, with the interaction counts): the CPU (grove__nb_cpu:
 * grove__gravity_forces on the local tree), or a device
 * (src/device/gravity.c). */
typedef struct grove__nb_engine {
    grove_status (*forces)(void *ctx, grove__gravity *g, double theta, double eps2, int threads, double *pp,
                           double *pc);
    void *ctx;
} grove__nb_engine;
extern const grove__nb_engine grove__nb_cpu;
/* grove__gravity_eval with the forces from engine e. */
grove_status grove__gravity_eval_on(const grove__nb_engine *e, grove__gravity *g, const double *pos,
                                    const double *mass, size_t n, const uint8_t *active,
                                    const grove_gravity_params *p, double *acc, double *pot,
                                    grove_gravity_stats *stats, int threads);
/* grove_nbody_step with the forces of its steps from engine e. */
grove_status grove__nbody_step_on(const grove__nb_engine *e, grove_nbody *sim, uint64_t steps,
                                  const grove_options *options);
/* grove_gravity on one process with the forces from engine e (its
 * checks, units and results). */
grove_status grove__gravity_on(const grove__nb_engine *e, grove_points positions, const double *mass,
                               const grove_gravity_params *params, double *acc, double *pot,
                               grove_gravity_stats *stats, const grove_options *options);

/* The steps of grove__gravity_eval, for the distributed call too
 * (src/mpi/gravity.c), which chooses units over every rank and adds the
 * remote ranks' trees. prepare: positions scaled by u, the tree of n >= 1
 * particles, its moments and the groups. forces: every group's walk of
 * the local tree and then of the nremote remote sources, evaluated into
 * g->out; the interaction counts into *pp, *pc. results: the sinks' rows
 * of acc (and pot) in the caller's units, returning the lowest row whose
 * result no double holds: not finite, or a nonzero result that underflows
 * below the smallest normal double (UINT32_MAX when none). overflow: that
 * row's error (pot NULL when not computed), the particle named `name`.
 * stats: the counts of this evaluation. */
grove_status grove__gravity_prepare(grove__gravity *g, const double *pos, const double *mass, size_t n,
                                    const uint8_t *active, const grove_gravity_params *p, const grove__nb_units *u,
                                    int threads);
typedef struct grove__nb_source grove__nb_source;
grove_status grove__gravity_forces(grove__gravity *g, double theta, double eps2, const grove__nb_source *remote,
                                   size_t nremote, int threads, double *pp, double *pc);
uint32_t grove__gravity_results(const grove__gravity *g, const grove__nb_units *u, double *acc, double *pot,
                                int threads);
grove_status grove__gravity_overflow(const grove__gravity *g, uint32_t row, const double *acc, const double *pot,
                                     int64_t name);
void grove__gravity_stats(const grove__gravity *g, double npp, double npc, grove_gravity_stats *stats);

/* Steps of the evaluation (one file each). */
/* Moments, tight boxes and opening radii of every cell, bottom up. */
void grove__nb_moments(grove__gravity *g, double theta, int threads);
/* The sinks (active particles, input-order flags; NULL = all) and their
 * groups of at most ncrit consecutive sinks (see groups.c). */
void grove__nb_groups(grove__gravity *g, size_t ncrit, const uint8_t *active);
/* A tree the walk reads: cells breadth first (root 0; begin/end, child,
 * nchild), per cell the centre of mass and mass (4), the squared opening
 * radius and the single-precision moments (8), and n particles as 4
 * columns cap apart (x, y, z, m). The local tree is the engine's own
 * arrays (grove__nb_local); a remote rank's locally essential tree has
 * the same layout (src/mpi/let.c). */
struct grove__nb_source {
    const grove__ocell *cell;
    const double *cm, *rc2;
    const float *fmom;
    const double *x;
    size_t cap, n;
    const double *quad; /* 6 per cell (as grove__gravity's quad), or NULL: wide lists widen fmom */
};

grove__nb_source grove__nb_local(const grove__gravity *g);
/* A group's walk: begin with sinks g->sink[b..e) (their box, empty
 * lists, float or `wide`), append the interactions with each source tree,
 * end by padding the lists. false when out of memory. */
bool grove__nb_walk_begin(const grove__gravity *g, uint32_t b, uint32_t e, bool wide, grove__nb_lists *lists);
bool grove__nb_walk_source(const grove__nb_source *src, grove__nb_lists *lists);
void grove__nb_walk_end(grove__nb_lists *lists);
/* One sink (position relative to the group centre) against a list padded
 * to GROVE__NB_PAD rows, column k at list + k * cap; adds a and phi to
 * out[0..3], and p2p the mass at the sink's own position to out[4]. */
typedef void grove__nb_kernel(const float *list, size_t cap, size_t n, const float sink[3], float eps2,
                              double out[5]);
typedef struct grove__nb_kernels {
    grove__nb_kernel *p2p, *p2c;
} grove__nb_kernels;
/* The portable kernels (kernel.c), the fallback everywhere. */
void grove__nb_kernels_portable(grove__nb_kernels *k);
/* The AVX2 + FMA kernels (kernel_avx2.c) into *k when this build has them
 * and the CPU runs them; false otherwise. */
bool grove__nb_kernels_avx2(grove__nb_kernels *k);
/* The set for this machine: AVX2 where it runs, else portable. */
void grove__nb_kernels_pick(grove__nb_kernels *k);

/* Group k's forces as grove__gravity_forces computes them (the walk in
 * single precision, or in double where the float lists cannot hold its
 * interactions; theta = 0: the direct sum), with the thread's lists L;
 * its interaction counts added to *pp, *pc; false when out of memory. */
bool grove__gravity_group(const grove__gravity *g, size_t k, double theta, double eps2,
                          const grove__nb_source *remote, size_t nremote, const grove__nb_kernels *kernels,
                          grove__nb_lists *L, double *pp, double *pc);

/* Evaluate the float lists for sinks g->sink[b..e) with kernel set k into
 * g->out (unscaled by G); false (g->out partly written) when a sink's float
 * position coincides with a listed particle's other than its own, or its
 * sums are not finite: the group must then be evaluated wide. */
bool grove__nb_evaluate(const grove__gravity *g, uint32_t b, uint32_t e, const grove__nb_lists *lists,
                        const grove__nb_kernels *k, double eps2);
/* The same for wide lists, in double. */
void grove__nb_evaluate_wide(const grove__gravity *g, uint32_t b, uint32_t e, const grove__nb_lists *lists,
                             double eps2);
/* theta = 0: sinks g->sink[b..e) against all particles of the local tree
 * and then of the nremote remote sources, a direct sum in double (no
 * lists), into g->out (unscaled by G). */
void grove__nb_direct(const grove__gravity *g, uint32_t b, uint32_t e, double eps2, const grove__nb_source *remote,
                      size_t nremote);

void grove__nb_lists_free(grove__nb_lists *lists);

/* Flop conventions for the stats (counted operations, sqrt and divide as
 * one each). */
#define GROVE__NB_FLOPS_PP 23.0
#define GROVE__NB_FLOPS_PC 65.0

#endif
