/* The join's public calls: the index and the calls on it run on one
 * process; grove_join and the gather of its result also distributed. */
#include "dispatch.h"

#include "../device/entry.h"
#include "../index/search_index.h"
#include "../join/join.h"
#include "../mpi/distributed.h"

grove_status grove_index_create(grove_points data, const grove_index_params *params, const grove_options *options,
                                grove_index **out)
{
    static __typeof__(grove_index_create) *const run[GROVE__COLUMNS] = {grove__index_create_local};
    GROVE__DISPATCH(run, options, GROVE__SEVERAL_RANKS, "index", data, params, options, out);
}

grove_status grove_join_count(const grove_index *index, const grove_points *queries, const grove_join_params *params,
                              int64_t *counts, int64_t *pairs, const grove_options *options)
{
    static __typeof__(grove_join_count) *const run[GROVE__COLUMNS] = {grove__join_count_local, NULL,
                                                                      grove__device_join_count};
    GROVE__DISPATCH(run, options, GROVE__SEVERAL_RANKS, "join count", index, queries, params, counts, pairs, options);
}

grove_status grove_join_fill(const grove_index *index, const grove_points *queries, const grove_join_params *params,
                             const int64_t *offsets, int64_t *indices, double *distances,
                             const grove_options *options)
{
    static __typeof__(grove_join_fill) *const run[GROVE__COLUMNS] = {grove__join_fill_local, NULL,
                                                                     grove__device_join_fill};
    GROVE__DISPATCH(run, options, GROVE__SEVERAL_RANKS, "join fill",
                    index, queries, params, offsets, indices, distances, options);
}

grove_status grove_join_stream(const grove_index *index, const grove_points *queries,
                               const grove_join_params *params, grove_join_batch_fn fn, void *user,
                               const grove_options *options)
{
    static __typeof__(grove_join_stream) *const run[GROVE__COLUMNS] = {grove__join_stream_local, NULL,
                                                                       grove__device_join_stream};
    GROVE__DISPATCH(run, options, GROVE__SEVERAL_RANKS, "join stream", index, queries, params, fn, user, options);
}

grove_status grove_join_search(const grove_index *index, const grove_points *queries, const grove_join_params *params,
                               grove_join_result *result, const grove_options *options)
{
    static __typeof__(grove_join_search) *const run[GROVE__COLUMNS] = {grove__join_search_local, NULL,
                                                                       grove__device_join_search};
    GROVE__DISPATCH(run, options, GROVE__SEVERAL_RANKS, "join search", index, queries, params, result, options);
}

grove_status grove_join(grove_points data, const grove_points *queries, const grove_index_params *index_params,
                        const grove_join_params *params, grove_join_result *result, const grove_options *options)
{
    static __typeof__(grove_join) *const run[GROVE__COLUMNS] = {grove__join_local, GROVE__MPI_PART(grove__mpi_join),
                                                                grove__device_join};
    GROVE__DISPATCH(run, options, GROVE__SEVERAL_RANKS, "join", data, queries, index_params, params, result, options);
}

grove_status grove_join_result_gather(grove_join_result *result, const grove_options *options)
{
    static __typeof__(grove_join_result_gather) *const run[GROVE__COLUMNS] = {
        grove__join_result_gather_local, GROVE__MPI_PART(grove__mpi_join_result_gather)};
    GROVE__DISPATCH(run, options, GROVE__SEVERAL_RANKS, "join gather", result, options);
}
