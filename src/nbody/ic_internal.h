/* Internals of the initial conditions (ic.c, ic_hernquist.c,
 * ic_plummer_bh.c): the pieces the samplers share and the closed forms
 * and tables the tests check them against. */
#ifndef GROVE_IC_INTERNAL_H
#define GROVE_IC_INTERNAL_H

#include "internal.h"

#define GROVE__PI 3.14159265358979323846

/* A random vector of length r, isotropic (two uniforms). */
void grove__ic_isotropic(grove_rng *rng, double r, double *out);

/* Mirrored pairs: rows first..first+count-1 of pos and vel, where the
 * even offsets (first, first + 2, ...) are filled, get row k+1 = -row k,
 * and an unpaired last row (count odd) is set to 0: the pairs' momentum
 * and mass moment are exactly zero. */
void grove__ic_mirror(double *pos, double *vel, size_t first, size_t count);

/* Hernquist (1990) with G = 1, model mass 1 / 0.99 (so the inner 99%
 * holds mass 1) and scale a = 1/3: n particles of mass 1/n in mirrored
 * pairs. */
#define GROVE__HERNQUIST_A (1.0 / 3.0)
#define GROVE__HERNQUIST_KEPT 0.99
void grove__ic_hernquist(grove_rng *rng, size_t n, double *pos, double *vel, double *mass);
/* Its isotropic distribution function up to a constant, as a function of
 * q = sqrt(-a E / (G M)) and w = 1 - q^2 (given separately so that it
 * keeps its digits near the centre): Hernquist (1990) eq. 17 without the
 * constant factor M / (8 sqrt(2) pi^3 a^3 v_g^3). */
double grove__hernquist_df(double q, double w);

/* The plummer-bh table: the stars' isotropic distribution function
 * f(E) (E = -energy > 0, G = 1) of a Plummer sphere of mass 1 - mu and
 * scale b in the potential of itself plus a point mass mu, from Eddington's
 * formula, on `count` logarithmically spaced energies up to e_max,
 * interpolated monotonically (Fritsch-Carlson); negative values clipped to
 * 0. */
typedef struct grove__eddington {
    double mu, ms, b;        /* point mass, stars' mass, Plummer scale */
    size_t count;
    double log_lo, step;     /* ln E of node 0, spacing in ln E */
    double *f, *slope, *up;  /* f at the nodes, Hermite slopes in ln E, running max of f */
    size_t clipped;          /* nodes where the integral was negative */
} grove__eddington;

/* The relative potential Psi = -Phi at radius r. */
double grove__plummer_bh_psi(const grove__eddington *t, double r);
grove_status grove__eddington_build(grove__eddington *t, double mu, double ms, double b, double e_max, size_t count);
void grove__eddington_free(grove__eddington *t);
/* f(E) for 0 < E <= e_max (below the table's first node: its E^(7/2) tail). */
double grove__eddington_f(const grove__eddington *t, double e);
/* An upper bound on f over (0, E]. */
double grove__eddington_bound(const grove__eddington *t, double e);

/* A Plummer sphere of mass 1 - mu (scale 3 pi / 16) around a point mass mu
 * (row 0, at rest at the origin), stars in mirrored pairs. */
grove_status grove__ic_plummer_bh(grove_rng *rng, size_t n, double mu, double *pos, double *vel, double *mass);

#endif
