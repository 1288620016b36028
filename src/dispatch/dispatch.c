/* What a call says when its table has nothing in the chosen column. */
#include "dispatch.h"

grove_status grove__column_missing(grove__column c, const grove_options *options, const char *what)
{
    grove__clear_error();
    if (c != GROVE__DISTRIBUTED) return grove__fail(GROVE_UNSUPPORTED, "%s has no device version", what);
    if (!grove_mpi_built())
        return grove__fail(GROVE_UNSUPPORTED, "%s: this grove was built without MPI (grove info: mpi: no)", what);
    return grove__fail(GROVE_UNSUPPORTED, "%s runs on one process; it was started on %d MPI ranks", what,
                       grove_mpi_size(options->mpi));
}
