/* Checkpoints: a 128-byte header (magic, version, byte-order mark, n, step,
 * time, parameters, checksum, application data length), the caller's
 * application data, and the positions, velocities and masses in native
 * doubles, written atomically. Version 2 added conserve_momentum after the
 * version 1 fields; a version 1 header has zeros there, which is what
 * version 1 runs did (no correction). Version 3 added the CRC-32C of the
 * whole file (computed with the checksum field zero), so a damaged file is
 * refused instead of resuming into a different run. Version 4 added the
 * application data (grove_nbody_set_app_data: the CLI's run settings)
 * between the header and the state. Version 5 added the time-step mode,
 * max_level and the force-evaluation count to the header and the n
 * block-step levels (one byte each) between the application data and the
 * state; a version 4 run was shared or adaptive (levels 0, one evaluation
 * of every particle per step and at the start). Versions 1 to 4 are still
 * read (1 and 2 carry no checksum); the header bytes their version does not use must
 * be zero, so a damaged version field is caught too. The accelerations are
 * not stored: they are a deterministic function of the positions and are
 * recomputed on reading, which is what makes a resumed run bit-identical
 * to an uninterrupted one. */
#include "nbody.h"
#include "sim_internal.h"

#include "../io/io_internal.h"

#include <math.h>

enum { HEAD = 128, VERSION = 5 };
static const char MAGIC[8] = {'G', 'R', 'O', 'V', 'E', 'N', 'B', '\0'};
static const uint32_t BOM = 0x01020304u;

typedef struct ckpt_head {
    char magic[8];
    uint32_t version, bom;
    uint64_t n, step;
    double time, dt, eta, theta, softening, G;
    uint64_t leaf_size, group_size;
    uint64_t conserve_momentum; /* 64 bits: no padding bytes in the header */
    uint32_t crc;               /* version 3 */
    uint32_t app_bytes;         /* version 4: application data after the header */
    uint32_t timestep, max_level; /* version 5, with the levels after the application data */
    uint64_t evaluations;
} ckpt_head;

_Static_assert(sizeof(ckpt_head) <= HEAD, "checkpoint header must fit 128 bytes");

/* Where the fields of each version end (the rest of the header is zero). */
static size_t version_end(uint32_t version)
{
    return version == 1 ? offsetof(ckpt_head, conserve_momentum)
           : version == 2 ? offsetof(ckpt_head, crc)
           : version == 3 ? offsetof(ckpt_head, app_bytes)
           : version == 4 ? offsetof(ckpt_head, timestep)
                          : sizeof(ckpt_head);
}

/* The CRC-32C of a file: its header (checksum field taken as zero), then
 * the app_bytes of application data (and levels) and the body that follow
 * it. */
static uint32_t file_crc(const unsigned char *head, size_t app_bytes, const void *body, size_t len)
{
    unsigned char h[HEAD];
    memcpy(h, head, HEAD);
    memset(h + offsetof(ckpt_head, crc), 0, sizeof(uint32_t));
    return grove__crc32c(grove__crc32c(grove__crc32c(0, h, HEAD), head + HEAD, app_bytes), body, len);
}

/* One process's simulation (or a distributed one's gathered whole) into path. */
static grove_status write_file(const grove_nbody *sim, const char *path)
{
    /* The header, the application data and the levels: one block written
     * before the state. */
    size_t extra = sim->app_bytes + sim->n;
    unsigned char *head = grove__calloc(HEAD + extra, 1, "checkpoint header");
    if (!head) return GROVE_OUT_OF_MEMORY;
    if (sim->app_bytes) memcpy(head + HEAD, sim->app, sim->app_bytes);
    if (sim->n) memcpy(head + HEAD + sim->app_bytes, sim->level, sim->n);
    const grove_nbody_params *p = &sim->params;
    ckpt_head h = {{0}, VERSION, BOM, sim->n, sim->step, sim->time, p->dt, p->eta, p->gravity.theta,
                   p->gravity.softening, p->gravity.G, p->gravity.leaf_size, p->gravity.group_size,
                   p->conserve_momentum != 0, 0, (uint32_t)sim->app_bytes, (uint32_t)p->timestep,
                   (uint32_t)p->max_level, sim->evaluations};
    memcpy(h.magic, MAGIC, sizeof MAGIC);
    memcpy(head, &h, sizeof h);
    size_t body = 7 * sim->n * sizeof(double);
    h.crc = file_crc(head, extra, sim->pos, body);
    memcpy(head, &h, sizeof h);
    grove_status s = grove__file_write_atomic(path, head, HEAD + extra, sim->pos, body);
    grove__free(head);
    if (s != GROVE_OK) grove__error_prefix(path);
    return s;
}

grove_status grove_nbody_checkpoint_write(const grove_nbody *sim, const char *path)
{
    grove__clear_error();
    if (!sim || !path) return grove__fail(GROVE_INVALID_ARGUMENT, "checkpoint: %s is NULL", sim ? "path" : "sim");
    if (sim->failed)
        return grove__fail(GROVE_INVALID_ARGUMENT, "checkpoint: step %llu of this simulation failed, so its state "
                           "is not valid to save", (unsigned long long)(sim->step + 1));
    /* Distributed: the whole state on rank 0, written there. */
    return sim->ranks->write(sim, path, write_file);
}

/* The state a checkpoint holds, without the forces. */
static grove_status parse(const unsigned char *buf, size_t len, grove_nbody **out)
{
    if (len < HEAD) return grove__fail(GROVE_PARSE_ERROR, "not a grove checkpoint: %zu bytes is too short", len);
    ckpt_head h;
    memcpy(&h, buf, sizeof h);
    if (memcmp(h.magic, MAGIC, sizeof MAGIC) != 0) return grove__fail(GROVE_PARSE_ERROR, "not a grove checkpoint");
    if (h.version < 1 || h.version > VERSION)
        return grove__fail(GROVE_UNSUPPORTED, "checkpoint version %u (this build reads 1 to %d)", h.version, VERSION);
    if (h.bom != BOM) return grove__fail(GROVE_UNSUPPORTED, "checkpoint written on a machine of the other byte order");
    for (size_t k = version_end(h.version); k < HEAD; k++)
        if (buf[k])
            return grove__fail(GROVE_PARSE_ERROR, "checkpoint version %u has data in header byte %zu, which that "
                               "version leaves zero: the file is damaged", h.version, k);
    size_t app = h.version >= 4 ? h.app_bytes : 0, body;
    /* Version 5's levels: one byte per particle, checked against n below. */
    size_t levels = h.version >= 5 && h.n <= GROVE__OCT_MAX_N ? (size_t)h.n : 0;
    if (app > GROVE_NBODY_APP_DATA_MAX || len - HEAD < app)
        return grove__fail(GROVE_PARSE_ERROR, "checkpoint header says %zu bytes of application data, more than "
                           "%s", app, app > GROVE_NBODY_APP_DATA_MAX ? "a checkpoint holds" : "the file has");
    if (h.n > GROVE__OCT_MAX_N || !grove__mul_size((size_t)h.n, 7 * sizeof(double), &body) ||
        len - HEAD - app < levels || len - HEAD - app - levels != body)
        return grove__fail(GROVE_PARSE_ERROR, "checkpoint header says %llu particles, which does not match the "
                           "file size of %zu bytes", (unsigned long long)h.n, len);
    const unsigned char *level = buf + HEAD + app, *state = level + levels;
    if (h.version >= 3) {
        uint32_t crc = file_crc(buf, app + levels, state, body);
        if (crc != h.crc)
            return grove__fail(GROVE_PARSE_ERROR, "checkpoint checksum mismatch (stored 0x%08x, computed 0x%08x): "
                               "the file is damaged", (unsigned)h.crc, (unsigned)crc);
    }
    if (!isfinite(h.time)) return grove__fail(GROVE_PARSE_ERROR, "checkpoint time is not finite");
    grove_nbody_params p;
    grove_nbody_params_init(&p);
    p.dt = h.dt;
    p.eta = h.eta;
    p.gravity.theta = h.theta;
    p.gravity.softening = h.softening;
    p.gravity.G = h.G;
    p.gravity.leaf_size = (size_t)h.leaf_size;
    p.gravity.group_size = (size_t)h.group_size;
    p.conserve_momentum = h.conserve_momentum != 0;
    if (h.version >= 5) {
        /* Out-of-range values fail the parameter check below. */
        p.timestep = h.timestep <= GROVE_TIMESTEP_BLOCK ? (grove_timestep)h.timestep : (grove_timestep)-1;
        p.max_level = h.max_level <= GROVE_NBODY_MAX_LEVEL ? (int)h.max_level : -1;
    }
    grove_nbody *sim;
    grove_status s = grove__nbody_params(&p, &p);
    if (s == GROVE_OK) s = grove__nbody_alloc((size_t)h.n, &p, &sim);
    if (s != GROVE_OK) return s;
    s = grove_nbody_set_app_data(sim, buf + HEAD, app);
    if (s != GROVE_OK) {
        grove_nbody_free(sim);
        return s;
    }
    /* Copied before validating: buf need not be aligned for doubles. */
    memcpy(sim->pos, state, body);
    sim->time = h.time;
    sim->step = h.step;
    size_t n = sim->n;
    for (size_t i = 0; i < 7 * n; i++)
        if (!isfinite(sim->pos[i]) || (i >= 6 * n && sim->pos[i] < 0)) {
            bool finite = isfinite(sim->pos[i]);
            grove_nbody_free(sim);
            return grove__fail(GROVE_PARSE_ERROR, "checkpoint value %zu is %s", i,
                               finite ? "a negative mass" : "not finite");
        }
    for (size_t i = 0; i < levels; i++)
        if (level[i] > (p.timestep == GROVE_TIMESTEP_BLOCK ? p.max_level : 0)) {
            grove_nbody_free(sim);
            return grove__fail(GROVE_PARSE_ERROR, "checkpoint level of particle %zu is %u, beyond the run's %d", i,
                               (unsigned)level[i], p.timestep == GROVE_TIMESTEP_BLOCK ? p.max_level : 0);
        }
    if (levels) memcpy(sim->level, level, levels);
    /* A version 4 run evaluated every particle at the start and each step. */
    sim->evaluations = h.version >= 5 ? h.evaluations : (uint64_t)n * (h.step + 1);
    *out = sim;
    return GROVE_OK;
}

grove_status grove__nbody_checkpoint_load(const char *path, grove_nbody **sim)
{
    *sim = NULL;
    void *buf;
    size_t len;
    grove_status s = grove__file_slurp(path, &buf, &len);
    if (s == GROVE_OK) {
        s = parse(buf, len, sim);
        grove__free(buf);
    }
    if (s != GROVE_OK) grove__error_prefix(path);
    return s;
}

grove_status grove__nbody_checkpoint_read_local(const char *path, const grove_options *options, grove_nbody **out)
{
    grove__clear_error();
    if (!path || !out) return grove__fail(GROVE_INVALID_ARGUMENT, "checkpoint: %s is NULL", path ? "out" : "path");
    *out = NULL;
    grove_nbody *sim;
    grove_status s = grove__nbody_checkpoint_load(path, &sim);
    /* The accelerations at a step's end are those of all particles at
     * once (block steps end synchronised): recomputing them gives the same
     * bits. */
    return grove__nbody_ready(sim, s, options, false, out);
}
