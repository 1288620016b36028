/* Friends-of-friends (internal to src/cluster): numbering the components the
 * union-find found, and the catalogue of the numbered groups. */
#ifndef GROVE_FOF_INTERNAL_H
#define GROVE_FOF_INTERNAL_H

#include "internal.h"

/* Group ids from components: root[i] is the smallest member of particle
 * i's component (so root[i] <= i). group[i] = the rank of i's component
 * among those of at least min_members particles, by decreasing size then
 * ascending root, or -1; *groups = how many were ranked. Uses group itself
 * as the size counter; scratch: 12 bytes per ranked group. */
grove_status grove__fof_number(const uint32_t *root, size_t n, size_t min_members, int threads, int64_t *group,
                               size_t *groups);

/* The catalogue rows (see grove.h) of `groups` groups given by group ids
 * (from grove__fof_number), from the caller's validated points, masses
 * (or NULL) and velocities (or NULL); box: d periodic lengths, or NULL.
 * Scratch: 4 bytes per grouped particle and 8 per group. */
grove_status grove__fof_catalogue(grove_points points, const double *mass, const double *velocity,
                                  const double *box, const int64_t *group, size_t groups, int threads,
                                  grove_fof_catalogue *out);

/* The arrays of a catalogue of `groups` rows in d dimensions (velocity and
 * dispersion too when velocities), uninitialised; on failure the caller
 * frees what was allocated with grove_fof_catalogue_free. */
grove_status grove__fof_catalogue_alloc(grove_fof_catalogue *c, size_t groups, size_t d, int velocities);

#endif
