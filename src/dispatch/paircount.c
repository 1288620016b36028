/* The pair counts' public call: on one process, or distributed over
 * several ranks (docs/paircount.md). */
#include "dispatch.h"

#include "../mpi/distributed.h"
#include "../paircount/paircount.h"

grove_status grove_paircount(grove_points data1, const grove_points *data2, const grove_paircount_params *params,
                             int64_t *npairs, double *weighted, const grove_options *options)
{
    static __typeof__(grove_paircount) *const run[GROVE__COLUMNS] = {
        grove__paircount_local, GROVE__MPI_PART(grove__mpi_paircount)};
    GROVE__DISPATCH(run, options, GROVE__SEVERAL_RANKS, "paircount", data1, data2, params, npairs, weighted, options);
}
