/* The join's public calls on one process (join_api.c): the local column
 * of the dispatch layer (src/dispatch/join.c), each with its public
 * call's signature and contract; and the check of the parameters that
 * every version of grove_join makes first. */
#ifndef GROVE_JOIN_H
#define GROVE_JOIN_H

#include "internal.h"

grove_status grove__join_count_local(const grove_index *index, const grove_points *queries,
                                     const grove_join_params *params, int64_t *counts, int64_t *pairs,
                                     const grove_options *options);
grove_status grove__join_fill_local(const grove_index *index, const grove_points *queries,
                                    const grove_join_params *params, const int64_t *offsets, int64_t *indices,
                                    double *distances, const grove_options *options);
grove_status grove__join_stream_local(const grove_index *index, const grove_points *queries,
                                      const grove_join_params *params, grove_join_batch_fn fn, void *user,
                                      const grove_options *options);
grove_status grove__join_search_local(const grove_index *index, const grove_points *queries,
                                      const grove_join_params *params, grove_join_result *result,
                                      const grove_options *options);
grove_status grove__join_local(grove_points data, const grove_points *queries, const grove_index_params *index_params,
                               const grove_join_params *params, grove_join_result *result,
                               const grove_options *options);
/* One process's result is whole already: result checked, nothing gathered. */
grove_status grove__join_result_gather_local(grove_join_result *result, const grove_options *options);

/* eps finite and >= 0 (the checks that need no index: grove_join makes
 * them before it builds one, and the calls on an index again). */
grove_status grove__join_params_check(const grove_join_params *params);

#endif
