/* Locally essential trees of the distributed gravity (let.c). */
#ifndef GROVE_MPI_LET_H
#define GROVE_MPI_LET_H

#include "mpi_internal.h"

#ifdef GROVE_HAVE_MPI

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

/* Collective. g: this rank's prepared engine (grove__gravity_prepare),
 * NULL when it holds no particles. Every rank's tight box is gathered;
 * each rank cuts its tree for every other rank's box and sends it; *let
 * receives the trees cut for this rank. */
grove_status grove__mpi_let_exchange(const grove_mpi *mpi, const grove__gravity *g, int threads, grove__mpi_let *let);
void grove__mpi_let_free(grove__mpi_let *let);

#endif
#endif
