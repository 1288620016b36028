/* The join's passes (internal to src/join): one description of a pass over
 * the query groups, run by grove__join_run for count and fill alike. */
#ifndef GROVE_JOIN_RUN_H
#define GROVE_JOIN_RUN_H

#include "visit.h"

/* Hits kept by a whole self-join count above SOA_MAX dimensions, where a
 * hit costs hundreds of operations to find and 16 bytes to keep: the fill
 * that follows in the same call (grove_join_search, grove_join_stream) then only
 * writes them out. Each hit is one entry of a slice: the query's tree
 * position, the neighbour's row, the double key of their squared distance
 * (../index/dist_key.h). */
typedef struct join_hit {
    uint32_t pos, row;
    double d2;
} join_hit;

typedef struct join_hits {
    size_t limit;    /* most hits to keep; the count gives up beyond it */
    size_t count;
    join_hit *hit;   /* all of them, in no particular order */
    int complete;    /* every hit of the count pass is here */
} join_hits;

void grove__join_hits_free(join_hits *hits);

/* A components pass (grove__join_connect): the union-find to join member
 * pairs in, and which rows are members (NULL: every row). */
typedef struct join_connect {
    grove__uf *uf;
    const uint8_t *members;
} join_connect;

typedef struct join_pass {
    double eps2, prune2;     /* see grove__join_eps2_key / grove__join_prune2 */
    int exclude_self;
    int fill;                /* 0: count into counts; 1: write the CSR slices */
    size_t row0, row1;       /* the query rows this pass handles */
    int64_t *counts;         /* count: counts[row - row0] */
    const int64_t *offsets;  /* fill: query row's slice is [offsets[row - row0],
                                offsets[row - row0 + 1]) of indices and distances */
    int64_t *indices;
    double *distances;       /* or NULL */
    join_hits *hits;         /* or NULL: kept by the count, used by the fill */
    const grove__join_visitor *visit; /* or NULL; set: hits go to visit->fn
                                         instead of counts or slices */
    const join_connect *connect; /* or NULL; set: a components pass */
    double link2;            /* a components pass joins two whole groups
                                whose boxes are within this
                                (grove__join_link2; < 0: never) */
} join_pass;

/* Run a pass of index D against the query grouping Q (Q == D for a
 * self-join) with the options' threads, progress (stage name) and cancel
 * flag. Fails with GROVE_INVALID_ARGUMENT when fill offsets disagree with
 * the true counts (without writing outside any query's slice). */
grove_status grove__join_run(const grove_index *D, const grove_index *Q, join_pass *pass,
                             const grove_options *options, const char *stage);

/* Sort a filled slice of m neighbours by row, their distances alongside
 * (dist may be NULL); pairs is scratch of 2 m values. */
void grove__join_sort_slice(int64_t *idx, double *dist, size_t m, int64_t *pairs);

/* The distance a fill gives the pair of Q's query at tree position qpos
 * and D's point at tree position p when their squared sum came out at or
 * below the smallest normal (it may have underflowed): the exact one
 * (../index/dist_key.h), as the CPU's fill mends it. */
double grove__join_exact_dist(const grove_index *D, const grove_index *Q, size_t qpos, size_t p);

/* What runs the count and fill passes of the public join calls: the CPU
 * (grove__join_run), or a device (src/device/join.c), which takes the
 * passes without visit or connect and may ignore the kept hits. */
typedef struct join_engine {
    grove_status (*run)(void *ctx, const grove_index *D, const grove_index *Q, join_pass *pass,
                        const grove_options *options, const char *stage);
    void *ctx;
} join_engine;
extern const join_engine grove__join_cpu;

/* The public calls with the engine that runs their passes: the same
 * checks, batches and results (join_api.c). */
grove_status grove__join_count_on(const join_engine *e, const grove_index *index, const grove_points *queries,
                                  const grove_join_params *params, int64_t *counts, int64_t *pairs,
                                  const grove_options *options);
grove_status grove__join_fill_on(const join_engine *e, const grove_index *index, const grove_points *queries,
                                 const grove_join_params *params, const int64_t *offsets, int64_t *indices,
                                 double *distances, const grove_options *options);
grove_status grove__join_stream_on(const join_engine *e, const grove_index *index, const grove_points *queries,
                                   const grove_join_params *params, grove_join_batch_fn fn, void *user,
                                   const grove_options *options);
grove_status grove__join_search_on(const join_engine *e, const grove_index *index, const grove_points *queries,
                                   const grove_join_params *params, grove_join_result *result,
                                   const grove_options *options);
grove_status grove__join_on(const join_engine *e, grove_points data, const grove_points *queries,
                            const grove_index_params *index_params, const grove_join_params *params,
                            grove_join_result *result, const grove_options *options);

#endif
