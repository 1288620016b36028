/* Seeded synthetic point sets (grove gen). Rows are produced in fixed chunks,
 * each with its own generator derived from (seed, chunk), so the values do
 * not depend on the thread count. */
#include "internal.h"

enum { GEN_CHUNK_ROWS = 4096 };

void grove_gen_params_init(grove_gen_params *params)
{
    params->kind = GROVE_GEN_UNIFORM;
    params->n = 0;
    params->d = 0;
    params->rate = 1.0;
    params->centers = 3;
    params->seed = 0;
}

/* Generator for stream `stream` of a seed: splitmix-mixed so that nearby
 * seeds and streams give unrelated sequences. */
static grove_rng stream_rng(uint64_t seed, uint64_t stream)
{
    grove_rng rng;
    grove_rng_seed(&rng, seed ^ (0xD1B54A32D192ED03ull * (stream + 1)));
    return rng;
}

static double one_value(const grove_gen_params *p, grove_rng *rng)
{
    switch (p->kind) {
    case GROVE_GEN_UNIFORM: return grove_rng_uniform(rng);
    case GROVE_GEN_NORMAL:
    case GROVE_GEN_BLOBS: return grove_rng_normal(rng);
    case GROVE_GEN_EXPONENTIAL: return grove_rng_exponential(rng) / p->rate;
    }
    return 0.0;
}

grove_status grove_gen(const grove_gen_params *p, double *out, const grove_options *options)
{
    grove__clear_error();
    if (!p) return grove__fail(GROVE_INVALID_ARGUMENT, "gen: params is NULL");
    if (p->kind < GROVE_GEN_UNIFORM || p->kind > GROVE_GEN_BLOBS)
        return grove__fail(GROVE_INVALID_ARGUMENT, "gen: unknown distribution %d", (int)p->kind);
    if (p->n > 0 && p->d == 0) return grove__fail(GROVE_INVALID_ARGUMENT, "gen: dims must be at least 1");
    if (p->kind == GROVE_GEN_EXPONENTIAL && !(p->rate > 0 && p->rate < 1e300))
        return grove__fail(GROVE_INVALID_ARGUMENT, "gen: rate must be a positive finite number, got %g", p->rate);
    if (p->kind == GROVE_GEN_BLOBS && p->centers == 0)
        return grove__fail(GROVE_INVALID_ARGUMENT, "gen: centers must be at least 1");
    size_t total, centre_values = 0;
    if (!grove__mul_size(p->n, p->d, &total) || total > SIZE_MAX / sizeof(double))
        return grove__fail(GROVE_TOO_LARGE, "gen: n = %zu by d = %zu is too large", p->n, p->d);
    if (p->n == 0) return GROVE_OK;
    if (!out) return grove__fail(GROVE_INVALID_ARGUMENT, "gen: out is NULL");

    double *centres = NULL;
    if (p->kind == GROVE_GEN_BLOBS) {
        if (!grove__mul_size(p->centers, p->d, &centre_values))
            return grove__fail(GROVE_TOO_LARGE, "gen: %zu centres in %zu dims is too large", p->centers, p->d);
        centres = grove__malloc(centre_values * sizeof *centres, "blob centres");
        if (!centres) return GROVE_OUT_OF_MEMORY;
        grove_rng rng = stream_rng(p->seed, UINT64_MAX - 1);
        for (size_t i = 0; i < centre_values; i++) centres[i] = 20.0 * grove_rng_uniform(&rng) - 10.0;
    }
    grove_options o = grove__options(options);
    size_t chunks = (p->n + GEN_CHUNK_ROWS - 1) / GEN_CHUNK_ROWS;
    int stopped = 0;
#pragma omp parallel for schedule(static) num_threads(o.threads) reduction(| : stopped)
    for (size_t c = 0; c < chunks; c++) {
        /* One read of the cancel flag per chunk: 10^8 rows take seconds. */
        if (stopped || (stopped = grove__cancelled(options))) continue;
        grove_rng rng = stream_rng(p->seed, c);
        size_t end = (c + 1) * GEN_CHUNK_ROWS < p->n ? (c + 1) * GEN_CHUNK_ROWS : p->n;
        for (size_t i = c * GEN_CHUNK_ROWS; i < end; i++) {
            const double *centre = centres ? centres + grove_rng_below(&rng, p->centers) * p->d : NULL;
            for (size_t j = 0; j < p->d; j++) out[i * p->d + j] = one_value(p, &rng) + (centre ? centre[j] : 0.0);
        }
    }
    grove__free(centres);
    return stopped ? grove__fail(GROVE_CANCELLED, "gen: cancelled") : GROVE_OK;
}
