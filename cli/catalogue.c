/* FoF catalogues as files (catalogue.h). */
#include "catalogue.h"

#include <stdlib.h>

grove_status cli_catalogue_table(const grove_fof_catalogue *c, grove_array *t)
{
    bool vel = c->velocity != NULL;
    size_t cols = vel ? 12 : 8;
    grove_status s = grove_array_create(t, GROVE_FLOAT64, c->groups, cols);
    if (s != GROVE_OK) return s;
    double *row = t->data;
    for (size_t g = 0; g < c->groups; g++, row += cols) {
        size_t k = 0;
        row[k++] = (double)g;
        row[k++] = (double)c->members[g];
        row[k++] = (double)c->first[g];
        row[k++] = c->mass[g];
        for (size_t j = 0; j < 3; j++) row[k++] = c->center[3 * g + j];
        for (size_t j = 0; vel && j < 3; j++) row[k++] = c->velocity[3 * g + j];
        if (vel) row[k++] = c->dispersion[g];
        row[k++] = c->radius[g];
    }
    return GROVE_OK;
}

void cli_catalogue_csv(FILE *f, const grove_array *t)
{
    size_t cols = t->shape[1];
    fprintf(f, cols == 12 ? "group,members,first,mass,x,y,z,vx,vy,vz,sigma_v,radius\n"
                          : "group,members,first,mass,x,y,z,radius\n");
    const double *row = t->data;
    for (size_t g = 0; g < t->shape[0]; g++, row += cols)
        for (size_t k = 0; k < cols; k++) fprintf(f, k < 3 ? "%.0f%c" : "%.17g%c", row[k], k + 1 < cols ? ',' : '\n');
}

grove_status cli_catalogue_hdf5(const char *path, const grove_gadget_header *header, const grove_fof_catalogue *c,
                                 const int64_t *group, const uint64_t *id, size_t n)
{
    /* Each group's first entry, then the members in index order. */
    size_t groups = c->groups, nids = 0;
    size_t *next = malloc((groups + 1) * sizeof *next);
    for (size_t g = 0; next && g < groups; g++) {
        next[g] = nids;
        nids += (size_t)c->members[g];
    }
    uint64_t *ids = next ? malloc((nids + 1) * sizeof *ids) : NULL;
    if (!ids) {
        free(next);
        cli_note_error("out of memory ordering the ids of %zu grouped particles", nids);
        return GROVE_OUT_OF_MEMORY;
    }
    for (size_t i = 0; i < n; i++)
        if (group[i] >= 0) ids[next[group[i]]++] = id ? id[i] : i;
    grove_status s = grove_fof_write_hdf5(path, header, c, ids, nids);
    free(ids);
    free(next);
    return s;
}
