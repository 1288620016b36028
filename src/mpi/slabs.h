/* The slab decomposition the distributed join and DBSCAN share (slabs.c,
 * docs/mpi.md). Every rank agrees on the scale and the variance order of
 * the whole data (so each rank's local index sums a pair's squared
 * distance as one process does) and on P - 1 cuts along the
 * highest-variance dimension at sampled quantiles; slab k, rank k's, gets
 * the points inside it and, as data, every point within eps (plus any
 * rounding) of it: its ghosts. */
#ifndef GROVE_MPI_SLABS_H
#define GROVE_MPI_SLABS_H

#include "mpi_internal.h"

/* What every rank agrees on before the exchange. */
typedef struct grove__slabs {
    const grove_mpi *mpi;
    const char *what;      /* the call, in messages */
    size_t d, es, extra;   /* dimensions, bytes per coordinate, bytes a data point carries beside them */
    bool query_extra;      /* the queries carry extra bytes too (set by the caller) */
    size_t rec;            /* bytes per record on the wire */
    grove_dtype dtype;
    int exponent, threads;
    size_t *order;         /* variance order of the whole data */
    int64_t *doff, *qoff;  /* rows before each rank: data, queries (P + 1 each) */
    double *cuts;          /* P - 1 slab cuts along input dimension order[0] */
    double eps, halo;      /* the radius; the rounding a slab's data reach adds to it */
} grove__slabs;

/* A point's roles in a slab: data (inside or within reach of it), query
 * (inside it: its owner). */
enum { GROVE__SLAB_DATA = 1, GROVE__SLAB_QUERY = 2 };

/* The points a slab got in one role, by global row. */
typedef struct grove__slab_set {
    size_t n;
    int64_t *rows;   /* global rows, ascending */
    void *coords;    /* n x d, input dtype */
    void *extra;     /* n x extra bytes (data with extra), else NULL */
    uint8_t *roles;  /* each point's roles, when asked (else NULL) */
} grove__slab_set;

/* Collective: the plan for `data` (and `queries`, or NULL) at radius eps,
 * each data point carrying `extra` bytes; pl->mpi, what and threads set by
 * the caller. Checks that shapes and dtypes agree and refuses a periodic
 * box; validates the points (a bad one named by its global row). */
grove_status grove__slabs_plan(grove__slabs *pl, grove_points data, const grove_points *queries,
                               const grove_index_params *ip, double eps, size_t extra);
void grove__slabs_free(grove__slabs *pl);

/* Collective: every point to its slab (each data point with its extra
 * bytes, from extra: n x pl->extra; each query likewise from qextra with
 * pl->query_extra; NULL on a rank without points) by MPI_Alltoallv, and this rank's slab's sets: D its data,
 * Q its queries (without `queries`, the data points inside it); with Q
 * NULL, D keeps each point's roles instead. */
grove_status grove__slabs_exchange(const grove__slabs *pl, grove_points data, const grove_points *queries,
                                   const void *extra, const void *qextra, grove__slab_set *D, grove__slab_set *Q);
void grove__slab_set_free(grove__slab_set *s);
/* The set's points as a grove_points view. */
grove_points grove__slab_points(const grove__slabs *pl, const grove__slab_set *s);

/* The local index of a slab's set (not empty), in the agreed scale and
 * order; ip: leaf size and key dimensions (NULL: the defaults). */
grove_status grove__slab_index(const grove__slabs *pl, const grove__slab_set *s, const grove_index_params *ip,
                               const grove_options *local, grove_index **ix);

/* The slabs a point i of p reaches as data: [*lo, *hi], its own *own. */
void grove__slabs_reach(const grove__slabs *pl, grove_points p, size_t i, int *own, int *lo, int *hi);

#endif
