/* grove nbody --fof-every M (halos.h). The groups are grove_fof's of the
 * state's own arrays; under mpirun each rank passes its domain's
 * particles, rank 0 gathers each grouped particle's row and group, and
 * numbers the groups by the single-process rule over the rows (decreasing
 * size, equal sizes by lowest row), so the catalogue's order, `first` and
 * ids do not depend on the ranks (its sums may differ in the last bits:
 * they run over the ranks' order). */
#include "halos.h"

#include "catalogue.h"
#include "nbody_hdf5.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool cli_halos_check(const cli_halos *h)
{
    const char *problem = NULL;
    if (h->every && h->have_b == h->have_link) problem = "--fof-every needs one of --b B and --linking-length L";
    else if (!h->every && (h->have_b || h->have_link || h->have_min))
        problem = "--b, --linking-length and --min-members need --fof-every M";
    if (problem) cli_error("nbody", "%s (see --help)", problem);
    return !problem;
}

bool cli_halos_due(const cli_halos *h, uint64_t step, uint64_t last)
{
    return h->every && (step % h->every == 0 || step == last);
}

/* The extent of the points along each axis: lo and hi (n = 0: +inf and
 * -inf). */
static void extents(grove_points p, double *lo, double *hi)
{
    const double *x = p.data;
    for (int k = 0; k < 3; k++) lo[k] = HUGE_VAL, hi[k] = -HUGE_VAL;
    for (size_t i = 0; i < 3 * p.n; i++) {
        int k = (int)(i % 3);
        lo[k] = x[i] < lo[k] ? x[i] : lo[k];
        hi[k] = x[i] > hi[k] ? x[i] : hi[k];
    }
}

/* b times the mean separation of every rank's particles: (V / n)^(1/3), V
 * the volume of their bounding box, as grove_fof_mean_separation's product
 * of cube roots (which it is alone); collective under mpirun. */
static grove_status mean_separation(grove_points p, const grove_mpi *mpi, double *sep)
{
    if (grove_mpi_size(mpi) == 1) return grove_fof_mean_separation(p, NULL, 0, sep);
    int ranks = grove_mpi_size(mpi);
    bool lead = grove_mpi_rank(mpi) == 0;
    int64_t *all = lead ? malloc(7 * (size_t)ranks * sizeof *all) : NULL;
    grove_status s = grove_mpi_agree(mpi, !lead || all ? GROVE_OK : GROVE_OUT_OF_MEMORY);
    double lo[3], hi[3], value[6];
    extents(p, lo, hi);
    memcpy(value, lo, sizeof lo);
    memcpy(value + 3, hi, sizeof hi);
    for (int k = 0; s == GROVE_OK && k < 7; k++) {
        int64_t bits = (int64_t)p.n;
        if (k < 6) memcpy(&bits, &value[k], sizeof bits);
        grove_mpi_gather_int64(mpi, bits, all ? all + k * ranks : NULL);
    }
    *sep = 1; /* on rank 0: the product; then every rank's */
    for (int k = 0; s == GROVE_OK && lead && k < 3; k++) {
        double a = HUGE_VAL, b = -HUGE_VAL, v;
        for (int r = 0; r < ranks; r++) {
            memcpy(&v, &all[k * ranks + r], sizeof v);
            a = v < a ? v : a;
            memcpy(&v, &all[(k + 3) * ranks + r], sizeof v);
            b = v > b ? v : b;
        }
        if (!(b - a > 0)) s = GROVE_INVALID_ARGUMENT;
        else *sep *= pow(b - a, 1 / 3.0);
    }
    int64_t n = 0;
    for (int r = 0; lead && r < ranks; r++) n += all[6 * ranks + r];
    if (s == GROVE_OK && lead) *sep *= pow(1 / (double)n, 1 / 3.0);
    free(all);
    if (s == GROVE_INVALID_ARGUMENT) cli_note_error("--b: the particles' bounding box has zero volume");
    s = grove_mpi_agree(mpi, s);
    return s == GROVE_OK ? grove_mpi_broadcast(mpi, sep, sizeof *sep) : s;
}

/* A grouped particle: its global row and group. */
typedef struct member {
    uint64_t row;
    int64_t group;
} member;

static int by_row(const void *a, const void *b)
{
    uint64_t x = ((const member *)a)->row, y = ((const member *)b)->row;
    return (x > y) - (x < y);
}

/* A group as numbered: its size, lowest row and number from grove_fof. */
typedef struct rank_key {
    int64_t members;
    uint64_t first;
    size_t old;
} rank_key;

static int by_size_then_row(const void *a, const void *b)
{
    const rank_key *x = a, *y = b;
    if (x->members != y->members) return x->members > y->members ? -1 : 1;
    return (x->first > y->first) - (x->first < y->first);
}

/* Every rank's grouped particles on rank 0 (*all, *total; NULL elsewhere),
 * in row order. */
static grove_status gather_members(const int64_t *group, const int64_t *rows, size_t n, const grove_mpi *mpi,
                                   member **all, size_t *total)
{
    size_t k = 0, ranks = (size_t)grove_mpi_size(mpi);
    for (size_t i = 0; i < n; i++) k += group[i] >= 0;
    member *mine = malloc((k + 1) * sizeof *mine);
    bool lead = grove_mpi_rank(mpi) == 0;
    int64_t *counts = lead ? malloc(ranks * sizeof *counts) : NULL;
    grove_status s = grove_mpi_agree(mpi, mine && (!lead || counts) ? GROVE_OK : GROVE_OUT_OF_MEMORY);
    for (size_t i = 0, j = 0; mine && i < n; i++)
        if (group[i] >= 0) mine[j++] = (member){(uint64_t)rows[i], group[i]};
    *all = NULL;
    *total = 0;
    if (s == GROVE_OK) grove_mpi_gather_int64(mpi, (int64_t)k, counts);
    for (size_t r = 0; lead && s == GROVE_OK && r < ranks; r++) *total += (size_t)counts[r];
    if (lead && s == GROVE_OK) *all = malloc((*total + 1) * sizeof **all);
    s = grove_mpi_agree(mpi, s == GROVE_OK && lead && !*all ? GROVE_OUT_OF_MEMORY : s);
    if (s == GROVE_OK) s = grove_mpi_gatherv(mpi, mine, k, sizeof *mine, *all);
    if (s == GROVE_OK && lead && ranks > 1) qsort(*all, *total, sizeof **all, by_row);
    free(mine);
    free(counts);
    return s;
}

/* The catalogue renumbered by the rows (old_of_new[g] is the group that
 * becomes g, first_row its lowest row), in one block (*block). */
static grove_status renumber(const grove_fof_catalogue *c, const size_t *old_of_new, const uint64_t *first_row,
                             grove_fof_catalogue *out, void **block)
{
    size_t g = c->groups, d = c->d, vel = c->velocity ? 1 : 0;
    double *b = malloc(((4 + vel) * g + (1 + vel) * d * g + 1) * sizeof *b);
    *block = b;
    if (!b) return GROVE_OUT_OF_MEMORY;
    *out = *c;
    out->members = (int64_t *)b;
    out->first = (int64_t *)(b + g);
    out->mass = b + 2 * g;
    out->radius = out->mass + g;
    out->center = out->radius + g;
    out->dispersion = vel ? out->center + d * g : NULL;
    out->velocity = vel ? out->dispersion + g : NULL;
    for (size_t k = 0; k < g; k++) {
        size_t o = old_of_new[k];
        out->members[k] = c->members[o];
        out->first[k] = (int64_t)first_row[o];
        out->mass[k] = c->mass[o];
        out->radius[k] = c->radius[o];
        memcpy(out->center + d * k, c->center + d * o, d * sizeof *c->center);
        if (vel) {
            out->dispersion[k] = c->dispersion[o];
            memcpy(out->velocity + d * k, c->velocity + d * o, d * sizeof *c->velocity);
        }
    }
    return GROVE_OK;
}

/* On rank 0: number the groups by size and lowest row, order the members'
 * rows group by group, and write the catalogue file. */
static grove_status write_catalogue(const cli_halos *h, const grove_fof_catalogue *c, const member *all,
                                    size_t total, const char *path, const grove_gadget_header *header)
{
    size_t g = c->groups;
    uint64_t *first = malloc((g + 1) * sizeof *first), *ids = malloc((total + 1) * sizeof *ids);
    size_t *old_of_new = malloc((g + 1) * sizeof *old_of_new), *next = malloc((g + 1) * sizeof *next);
    rank_key *keys = malloc((g + 1) * sizeof *keys);
    grove_fof_catalogue ordered;
    void *block = NULL;
    grove_status s = first && ids && old_of_new && next && keys ? GROVE_OK : GROVE_OUT_OF_MEMORY;
    for (size_t k = 0; s == GROVE_OK && k < g; k++) first[k] = UINT64_MAX;
    for (size_t i = 0; s == GROVE_OK && i < total; i++)
        if (first[all[i].group] == UINT64_MAX) first[all[i].group] = all[i].row;
    for (size_t k = 0; s == GROVE_OK && k < g; k++) keys[k] = (rank_key){c->members[k], first[k], k};
    if (s == GROVE_OK) qsort(keys, g, sizeof *keys, by_size_then_row);
    size_t at = 0;
    for (size_t k = 0; s == GROVE_OK && k < g; k++) {
        old_of_new[k] = keys[k].old;
        next[keys[k].old] = at;
        at += (size_t)keys[k].members;
    }
    for (size_t i = 0; s == GROVE_OK && i < total; i++) ids[next[all[i].group]++] = all[i].row;
    if (s == GROVE_OK) s = renumber(c, old_of_new, first, &ordered, &block);
    if (s == GROVE_OK && h->hdf5) {
        s = grove_fof_write_hdf5(path, header, &ordered, ids, total);
    } else if (s == GROVE_OK) {
        grove_array table = {0};
        s = cli_catalogue_table(&ordered, &table);
        if (s == GROVE_OK) s = grove_npy_write(path, &table);
        grove_array_free(&table);
    }
    if (s == GROVE_OUT_OF_MEMORY) cli_note_error("out of memory writing the catalogue %s", path);
    free(block);
    free(keys);
    free(next);
    free(old_of_new);
    free(ids);
    free(first);
    return s;
}

grove_status cli_halos_write(cli_halos *h, const grove_nbody *sim, const char *dir, const cli_units *units,
                             uint64_t step, double time, const grove_options *options)
{
    double t0 = cli_now();
    grove_options o = *options;
    o.progress = NULL;
    const grove_mpi *mpi = o.mpi;
    size_t n = grove_nbody_count(sim);
    grove_points p = grove_points_f64(grove_nbody_positions(sim), n, 3);
    grove_fof_params params;
    grove_fof_params_init(&params);
    if (h->have_min) params.min_members = h->min_members;
    params.linking_length = h->linking_length;
    grove_status s = GROVE_OK;
    if (h->have_b) {
        double sep = 0;
        s = mean_separation(p, mpi, &sep);
        params.linking_length = h->b * sep;
    }
    int64_t *group = malloc((n + 1) * sizeof *group);
    if (s == GROVE_OK) s = grove_mpi_agree(mpi, group ? GROVE_OK : GROVE_OUT_OF_MEMORY);
    grove_fof_catalogue cat;
    memset(&cat, 0, sizeof cat);
    size_t groups = 0;
    if (s == GROVE_OK)
        s = grove_fof(p, grove_nbody_masses(sim), grove_nbody_velocities(sim), &params, group, &groups, &cat, &o);
    member *all = NULL;
    size_t total = 0;
    if (s == GROVE_OK) s = gather_members(group, grove_nbody_rows(sim), n, mpi, &all, &total);
    free(group);
    char path[4096];
    snprintf(path, sizeof path, "%s/fof_%06llu.%s", dir, (unsigned long long)step, h->hdf5 ? "hdf5" : "npy");
    if (s == GROVE_OK && grove_mpi_rank(mpi) == 0) {
        grove_gadget_header header;
        cli_nbody_header(time, units, &header);
        char stale[4096];
        snprintf(stale, sizeof stale, "%s/fof_", dir);
        if (h->catalogues == 0) cli_remove_stale(stale, true);
        s = write_catalogue(h, &cat, all, total, path, &header);
    }
    s = grove_mpi_agree(mpi, s);
    free(all);
    grove_fof_catalogue_free(&cat);
    h->seconds += cli_now() - t0;
    if (s == GROVE_OK) {
        h->catalogues++;
        h->groups = groups;
        h->grouped = total;
        h->last_linking_length = params.linking_length;
    }
    return s;
}
