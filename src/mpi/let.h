/* Locally essential trees of the distributed gravity (let.c). */
#ifndef GROVE_MPI_LET_H
#define GROVE_MPI_LET_H

#include "mpi_internal.h"

#include "../nbody/nbody_internal.h"

/* The remote ranks' trees this rank walks, in rank order (ranks without
 * particles, and this rank, left out), in the walk's layout; the arrays
 * hold every source's cells and particles one after the other. */
typedef struct grove__mpi_let {
    size_t nsrc;
    grove__nb_source *src;
    grove__ocell *cell;
    double *cm, *rc2, *x;
    float *fmom;
} grove__mpi_let;

/* Enlargement of a cover box (in the evaluation's units, where the system
 * is of size about 1) that absorbs the rounding of its centre and halves. */
#define GROVE__MPI_COVER_MARGIN 0x1p-36

/* A cover of a rank's groups (cover.c): boxes (centre[3], half[3] each,
 * enlarged by the margin) of runs of its groups, level 0, and a binary
 * hierarchy above them; nodes of level l from first[l] to first[l + 1]. */
typedef struct grove__mpi_cover {
    double *box;
    size_t *first;
    int levels; /* 0: no boxes */
} grove__mpi_cover;

/* g's groups in tree order as at most `most` runs of about equal numbers
 * of sinks (one run per group when most >= the groups), each run's box
 * (lo[3], hi[3]) the box of its sinks, as the walk takes a group's, into
 * boxes (6 per run, room for min(most, groups)); returns the runs. */
size_t grove__mpi_group_runs(const grove__gravity *g, size_t most, double *boxes);
/* The cover of count boxes (lo[3], hi[3] each); false: out of memory. */
bool grove__mpi_cover_build(const double *boxes, size_t count, grove__mpi_cover *c);
/* Whether the walk's test accepts a cell (centre of mass cm, opening
 * radius rc2) for every box of the cover, so for every group inside it. */
bool grove__mpi_cover_accepts(const grove__mpi_cover *c, const double *cm, double rc2);
void grove__mpi_cover_free(grove__mpi_cover *c);

/* Collective. g: this rank's prepared engine (grove__gravity_prepare),
 * NULL when it holds no particles. Every rank's tight box is gathered;
 * each rank cuts its tree for every other rank's box and sends it; *let
 * receives the trees cut for this rank. */
grove_status grove__mpi_let_exchange(const grove_mpi *mpi, const grove__gravity *g, int threads, grove__mpi_let *let);
void grove__mpi_let_free(grove__mpi_let *let);

#endif
