/* The join's public calls on one process (join_api.c): the local column
 * of the dispatch layer (src/dispatch/join.c), each with its public
 * call's type (__typeof__) and contract; and the check of the parameters that
 * every version of grove_join makes first. */
#ifndef GROVE_JOIN_H
#define GROVE_JOIN_H

#include "internal.h"

__typeof__(grove_join_count) grove__join_count_local;
__typeof__(grove_join_fill) grove__join_fill_local;
__typeof__(grove_join_stream) grove__join_stream_local;
__typeof__(grove_join_search) grove__join_search_local;
__typeof__(grove_join) grove__join_local;
/* One process's result is whole already: result checked, nothing gathered. */
__typeof__(grove_join_result_gather) grove__join_result_gather_local;

/* eps finite and >= 0 (the checks that need no index: grove_join makes
 * them before it builds one, and the calls on an index again). */
grove_status grove__join_params_check(const grove_join_params *params);

#endif
