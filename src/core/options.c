/* grove_options defaults, thread count resolution, progress and cancel. */
#include "parallel.h"

#ifdef _OPENMP
#include <omp.h>
#endif

void grove_options_init(grove_options *options)
{
    if (!options) return;
    options->threads = 0;
    options->progress = NULL;
    options->progress_user = NULL;
    options->memory_budget = 0;
    options->cancel = NULL;
    options->mpi = NULL;
    options->device = GROVE_DEVICE_CPU;
}

grove_options grove__options(const grove_options *options)
{
    grove_options o;
    grove_options_init(&o);
    if (options) o = *options;
    if (o.threads <= 0) o.threads = grove__threads_default();
    return o;
}

void grove__team_member(int *thread, int *team_size)
{
#ifdef _OPENMP
    *thread = omp_get_thread_num();
    *team_size = omp_get_num_threads();
#else
    *thread = 0;
    *team_size = 1;
#endif
}

int grove_options_threads(const grove_options *options) { return grove__options(options).threads; }

bool grove__cancelled(const grove_options *options)
{
    return options && options->cancel && *options->cancel != 0;
}

void grove__progress(const grove_options *options, const char *stage, double fraction)
{
    if (options && options->progress) options->progress(options->progress_user, stage, fraction);
}
