/* How many threads a ball tree build uses. */
#include "balltree_internal.h"
#include "parallel.h"

/* A one-off call (no workspace) below this builds on one thread: starting
 * a team costs about as much as such a build. */
#define BT_ONE_OFF_SERIAL ((size_t)1 << 17)

int grove__bt_threads(size_t batches, size_t n, int threads, bool one_off)
{
    if (one_off && n < BT_ONE_OFF_SERIAL) return 1;
    /* A batch each, or one per smallest task (half of BT_TASK_MIN). */
    size_t tasks = n / (BT_TASK_MIN / 2);
    return grove__threads_cap(threads, batches > tasks ? batches : tasks);
}

grove_status grove_balltree_threads(size_t n, const grove_balltree_params *params, const grove_options *options,
                                    int *threads)
{
    grove__clear_error();
    if (!threads) return grove__fail(GROVE_INVALID_ARGUMENT, "balltree_threads: threads is NULL");
    size_t slots, batches;
    grove_status s = grove_balltree_layout(n, params, &slots, &batches);
    if (s != GROVE_OK) return s;
    grove_options o = grove__options(options);
    *threads = grove__bt_threads(batches, n, o.threads, !(params && params->workspace));
    return GROVE_OK;
}
