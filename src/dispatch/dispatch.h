/* The dispatch layer: every public call that may run on several MPI ranks
 * (or, with a device backend, on a device) chooses its implementation
 * here, from one table per call indexed by column: the module's version
 * on one process (LOCAL), src/mpi's distributed one (DISTRIBUTED), a
 * device backend's (DEVICE). Each entry has the public call's signature
 * and contract (declared with the call's own type, __typeof__, so the
 * signatures cannot drift apart), and choosing costs one branch. The
 * modules below never include this folder or src/mpi
 * (docs/architecture.md). */
#ifndef GROVE_DISPATCH_H
#define GROVE_DISPATCH_H

#include "internal.h"

typedef enum grove__column { GROVE__LOCAL, GROVE__DISTRIBUTED, GROVE__DEVICE, GROVE__COLUMNS } grove__column;

/* When a call runs distributed: with any MPI context in the options
 * (gravity and the N-body simulation, whose distributed code on one rank
 * gives the one-process bits and keeps its per-rank statistics), or only
 * with more than one rank (the join and what runs on it, whose one-rank
 * run is the local call). */
typedef enum grove__reach { GROVE__ANY_CONTEXT, GROVE__SEVERAL_RANKS } grove__reach;

/* Whether the options ask for a device (the device column's entries
 * take the call then). */
static inline bool grove__device_asked(const grove_options *options)
{
    return options && options->device != GROVE_DEVICE_CPU;
}

/* The column that runs a call with these options. */
static inline grove__column grove__column_of(const grove_options *options, grove__reach reach)
{
    if (!options || !options->mpi) return GROVE__LOCAL;
    return reach == GROVE__ANY_CONTEXT || grove_mpi_size(options->mpi) > 1 ? GROVE__DISTRIBUTED : GROVE__LOCAL;
}

/* The failure of a call whose table has no entry in column c: in the
 * distributed column, a call that runs on one process only (an index is
 * one process's) or a build without the MPI part. `what` names the call. */
grove_status grove__column_missing(grove__column c, const grove_options *options, const char *what);

/* The body of a public call: the entry of its table (GROVE__COLUMNS
 * functions with the call's type, NULL where a column has none) in the
 * column its options choose, called with the call's arguments, or the
 * refusal of a column without one. A call on one process asked to run on
 * a device (options->device, docs/gpu.md) takes its device entry where it
 * has one (which resolves GROVE_DEVICE_AUTO and refuses a device that
 * cannot run); a call without one, or a distributed one, runs as it would
 * on the CPU (a distributed join's local searches too). */
#define GROVE__DISPATCH(table, options, reach, what, ...)                                \
    do {                                                                                 \
        grove__column column_ = grove__column_of((options), (reach));                    \
        if (column_ == GROVE__LOCAL && grove__device_asked(options) && (table)[GROVE__DEVICE]) \
            column_ = GROVE__DEVICE;                                                     \
        if (!(table)[column_]) return grove__column_missing(column_, (options), (what)); \
        return (table)[column_](__VA_ARGS__);                                            \
    } while (0)

/* A distributed entry of a table: the function in a build with the MPI
 * part, NULL (refused by grove__column_missing) in one without; the one
 * place that knows whether src/mpi was built. */
#ifdef GROVE_HAVE_MPI
#define GROVE__MPI_PART(fn) fn
#else
#define GROVE__MPI_PART(fn) NULL
#endif

#endif
