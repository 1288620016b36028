/* HDF5 snapshots in the GADGET-4 layout and FoF halo tables in the layout
 * of GADGET's group catalogues, written through libhdf5 into a temporary
 * file beside the destination and renamed over it, so the destination
 * never holds a partial file. Datasets are contiguous (no chunks, no
 * filters): readers read them straight into place. */
#include "hdf5_internal.h"

#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>

/* Rows of the ids written per call when they are generated (the rows). */
enum { ID_BLOCK = 1 << 16 };

/* A file being written: its temporary name and identifiers. */
typedef struct writer {
    char *temp;
    hid_t file;
    grove_status s; /* the first failure; later writes are skipped */
} writer;

static grove_status writer_open(writer *w, const char *path)
{
    w->file = -1;
    w->s = GROVE_OK;
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
        return w->s = grove__fail(GROVE_IO_ERROR, "cannot write: grove writes HDF5 files to regular files (or new "
                                                  "names) only");
    if (!(w->temp = grove__temp_name(path))) return w->s = GROVE_OUT_OF_MEMORY;
    w->file = H5Fcreate(w->temp, H5F_ACC_EXCL, H5P_DEFAULT, H5P_DEFAULT);
    if (w->file < 0) w->s = grove__hdf5_fail(GROVE_IO_ERROR, "cannot create %s", w->temp);
    return w->s;
}

/* Close the file and rename it over path, or remove it after a failure. */
static grove_status writer_close(writer *w, const char *path)
{
    if (w->file >= 0 && H5Fclose(w->file) < 0 && w->s == GROVE_OK)
        w->s = grove__hdf5_fail(GROVE_IO_ERROR, "cannot write");
    if (w->s == GROVE_OK && rename(w->temp, path) != 0)
        w->s = grove__fail(GROVE_IO_ERROR, "cannot write: %s", strerror(errno));
    if (w->s != GROVE_OK && w->temp) remove(w->temp);
    grove__free(w->temp);
    return w->s;
}

static hid_t make_group(writer *w, hid_t loc, const char *name)
{
    if (w->s != GROVE_OK) return -1;
    hid_t g = H5Gcreate2(loc, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (g < 0) w->s = grove__hdf5_fail(GROVE_IO_ERROR, "cannot create group %s", name);
    return g;
}

/* An attribute of n values (n 0: a scalar) stored as `stored`, given in
 * memory as `memtype`. */
static void attribute(writer *w, hid_t loc, const char *name, hid_t stored, hid_t memtype, const void *values,
                      size_t n)
{
    if (w->s != GROVE_OK) return;
    hsize_t dims = n;
    hid_t space = n ? H5Screate_simple(1, &dims, NULL) : H5Screate(H5S_SCALAR);
    hid_t attr = space >= 0 ? H5Acreate2(loc, name, stored, space, H5P_DEFAULT, H5P_DEFAULT) : -1;
    if (attr < 0 || H5Awrite(attr, memtype, values) < 0)
        w->s = grove__hdf5_fail(GROVE_IO_ERROR, "cannot write attribute %s", name);
    grove__hdf5_close(attr);
    grove__hdf5_close(space);
}

static void attr_double(writer *w, hid_t loc, const char *name, double v)
{
    attribute(w, loc, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &v, 0);
}

static void attr_int(writer *w, hid_t loc, const char *name, int v)
{
    attribute(w, loc, name, H5T_STD_I32LE, H5T_NATIVE_INT, &v, 0);
}

/* A dataset of rows x cols (cols 0: 1-D) stored as `stored`; the caller
 * writes it (write_rows). */
static hid_t make_dataset(writer *w, hid_t loc, const char *name, hid_t stored, size_t rows, size_t cols)
{
    if (w->s != GROVE_OK) return -1;
    hsize_t dims[2] = {rows, cols};
    hid_t space = H5Screate_simple(cols ? 2 : 1, dims, NULL);
    hid_t d = space >= 0 ? H5Dcreate2(loc, name, stored, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT) : -1;
    if (d < 0) w->s = grove__hdf5_fail(GROVE_IO_ERROR, "cannot create dataset %s", name);
    grove__hdf5_close(space);
    return d;
}

/* Rows first..first+count of a dataset from memory of memtype. */
static void write_rows(writer *w, hid_t d, const char *name, hid_t memtype, size_t first, size_t count, size_t cols,
                       const void *data)
{
    if (w->s != GROVE_OK || count == 0) return;
    hsize_t start[2] = {first, 0}, size[2] = {count, cols};
    int rank = cols ? 2 : 1;
    hid_t file_space = H5Dget_space(d), mem_space = H5Screate_simple(rank, size, NULL);
    bool ok = file_space >= 0 && mem_space >= 0 &&
              H5Sselect_hyperslab(file_space, H5S_SELECT_SET, start, NULL, size, NULL) >= 0 &&
              H5Dwrite(d, memtype, mem_space, file_space, H5P_DEFAULT, data) >= 0;
    if (!ok) w->s = grove__hdf5_fail(GROVE_IO_ERROR, "cannot write dataset %s", name);
    grove__hdf5_close(mem_space);
    grove__hdf5_close(file_space);
}

/* A whole dataset from memory. */
static void dataset(writer *w, hid_t loc, const char *name, hid_t stored, hid_t memtype, size_t rows, size_t cols,
                    const void *data)
{
    hid_t d = make_dataset(w, loc, name, stored, rows, cols);
    write_rows(w, d, name, memtype, 0, rows, cols, data);
    grove__hdf5_close(d);
}

/* ---- snapshots ------------------------------------------------------------ */

/* The row of type t's first particle in snap's arrays. */
static size_t first_row(const grove_gadget *snap, int t)
{
    size_t r = 0;
    for (int u = 0; u < t; u++) r += snap->count[u];
    return r;
}

/* Whether type t's masses all equal its nonzero MassTable entry (then the
 * table holds them and no Masses dataset is written). */
static bool masses_in_table(const grove_gadget *snap, int t)
{
    double table = snap->header.mass_table[t];
    if (table == 0 || !snap->mass) return table != 0;
    const double *m = snap->mass + first_row(snap, t);
    for (size_t i = 0; i < snap->count[t]; i++)
        if (m[i] != table) return false;
    return true;
}

static void write_header(writer *w, const grove_gadget *snap, int types)
{
    const grove_gadget_header *H = &snap->header;
    uint64_t this_file[GROVE_GADGET_TYPES];
    uint32_t low[GROVE_GADGET_TYPES], high[GROVE_GADGET_TYPES];
    double table[GROVE_GADGET_TYPES];
    for (int t = 0; t < types; t++) {
        this_file[t] = snap->count[t];
        low[t] = (uint32_t)snap->count[t];
        high[t] = (uint32_t)((uint64_t)snap->count[t] >> 32);
        table[t] = masses_in_table(snap, t) ? H->mass_table[t] : 0;
    }
    hid_t g = make_group(w, w->file, "Header");
    size_t n = (size_t)types;
    attribute(w, g, "NumPart_ThisFile", H5T_STD_U64LE, H5T_NATIVE_UINT64, this_file, n);
    attribute(w, g, "NumPart_Total", H5T_STD_U32LE, H5T_NATIVE_UINT32, low, n);
    attribute(w, g, "NumPart_Total_HighWord", H5T_STD_U32LE, H5T_NATIVE_UINT32, high, n);
    attribute(w, g, "MassTable", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, table, n);
    attr_double(w, g, "Time", H->time);
    attr_double(w, g, "Redshift", H->redshift);
    bool cube = H->box[0] == H->box[1] && H->box[1] == H->box[2];
    attribute(w, g, "BoxSize", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, H->box, cube ? 0 : 3);
    attr_int(w, g, "NumFilesPerSnapshot", 1);
    attr_int(w, g, "Flag_DoublePrecision", snap->dtype == GROVE_FLOAT64);
    if (H->hubble != 0) {
        attr_double(w, g, "Omega0", H->omega0);
        attr_double(w, g, "OmegaLambda", H->omega_lambda);
        attr_double(w, g, "HubbleParam", H->hubble);
    }
    grove__hdf5_close(g);
}

/* The code units in the places readers look: GADGET-4's Parameters group
 * (with the cosmology of a comoving run, or else the time in Gyr that
 * pynbody reads), and a Units group with GADGET-3's and EAGLE's names. */
static void write_units(writer *w, const grove_gadget_header *H)
{
    static const char *const places[] = {"Parameters", "Units"};
    double L = H->unit_length_cgs, M = H->unit_mass_cgs, V = H->unit_velocity_cgs;
    for (int k = 0; k < 2; k++) {
        hid_t g = make_group(w, w->file, places[k]);
        attr_double(w, g, "UnitLength_in_cm", L);
        attr_double(w, g, "UnitMass_in_g", M);
        attr_double(w, g, "UnitVelocity_in_cm_per_s", V);
        attr_double(w, g, "UnitTime_in_s", L / V);
        if (k == 0 && H->hubble != 0) {
            attr_int(w, g, "ComovingIntegrationOn", 1);
            attr_double(w, g, "Omega0", H->omega0);
            attr_double(w, g, "OmegaLambda", H->omega_lambda);
            attr_double(w, g, "HubbleParam", H->hubble);
        } else if (k == 0) {
            attr_int(w, g, "ComovingIntegrationOn", 0);
            attr_double(w, g, "Time_GYR", H->time * (L / V) / 3.15576e16); /* Julian gigayears */
        }
        grove__hdf5_close(g);
    }
}

/* ParticleIDs: the caller's, or the rows first.. (generated a block at a
 * time). */
static void write_ids(writer *w, hid_t loc, const grove_gadget *snap, size_t first, size_t count)
{
    hid_t d = make_dataset(w, loc, "ParticleIDs", H5T_STD_U64LE, count, 0);
    if (snap->ids) {
        write_rows(w, d, "ParticleIDs", H5T_NATIVE_UINT64, 0, count, 0, snap->ids + first);
    } else {
        uint64_t *block = w->s == GROVE_OK ? grove__malloc(ID_BLOCK * sizeof *block, "particle ids") : NULL;
        if (w->s == GROVE_OK && !block) w->s = GROVE_OUT_OF_MEMORY;
        for (size_t at = 0; w->s == GROVE_OK && at < count; at += ID_BLOCK) {
            size_t k = count - at < ID_BLOCK ? count - at : ID_BLOCK;
            for (size_t i = 0; i < k; i++) block[i] = first + at + i;
            write_rows(w, d, "ParticleIDs", H5T_NATIVE_UINT64, at, k, 0, block);
        }
        grove__free(block);
    }
    grove__hdf5_close(d);
}

static void write_type(writer *w, const grove_gadget *snap, const double *potential, int t)
{
    char name[32];
    snprintf(name, sizeof name, "PartType%d", t);
    hid_t g = make_group(w, w->file, name);
    size_t first = first_row(snap, t), count = snap->count[t], width = grove_dtype_size(snap->dtype);
    hid_t stored = snap->dtype == GROVE_FLOAT32 ? H5T_IEEE_F32LE : H5T_IEEE_F64LE;
    hid_t mem = snap->dtype == GROVE_FLOAT32 ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE;
    if (snap->pos) dataset(w, g, "Coordinates", stored, mem, count, 3, (const char *)snap->pos + 3 * width * first);
    if (snap->vel) dataset(w, g, "Velocities", stored, mem, count, 3, (const char *)snap->vel + 3 * width * first);
    write_ids(w, g, snap, first, count);
    if (snap->mass && !masses_in_table(snap, t))
        dataset(w, g, "Masses", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, count, 0, snap->mass + first);
    if (potential) dataset(w, g, "Potential", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, count, 0, potential + first);
    grove__hdf5_close(g);
}

/* What a snapshot to write must be: counts adding up to n, arrays for
 * its particles, a known dtype, a consistent header. */
static grove_status check_snapshot(const grove_gadget *snap, int *types)
{
    const grove_gadget_header *H = &snap->header;
    *types = H->types ? H->types : 6;
    if (*types < 1 || *types > GROVE_GADGET_TYPES)
        return grove__fail(GROVE_INVALID_ARGUMENT, "gadget_write_hdf5: header.types is %d, not in 1..%d", H->types,
                           GROVE_GADGET_TYPES);
    size_t sum = 0;
    for (int t = 0; t < GROVE_GADGET_TYPES; t++) {
        if (t >= *types && snap->count[t])
            return grove__fail(GROVE_INVALID_ARGUMENT, "gadget_write_hdf5: %zu particles of type %d, beyond the "
                                                       "header's %d types", snap->count[t], t, *types);
        sum += snap->count[t];
    }
    if (sum != snap->n)
        return grove__fail(GROVE_INVALID_ARGUMENT, "gadget_write_hdf5: the type counts add up to %zu, n is %zu", sum,
                           snap->n);
    if (snap->n && !snap->pos) return grove__fail(GROVE_INVALID_ARGUMENT, "gadget_write_hdf5: pos is NULL");
    if ((snap->pos || snap->vel) && snap->dtype != GROVE_FLOAT32 && snap->dtype != GROVE_FLOAT64)
        return grove__fail(GROVE_INVALID_ARGUMENT, "gadget_write_hdf5: dtype must be float32 or float64, got %s",
                           grove_dtype_name(snap->dtype));
    for (int t = 0; t < *types; t++)
        if (snap->count[t] && !snap->mass && H->mass_table[t] == 0)
            return grove__fail(GROVE_INVALID_ARGUMENT, "gadget_write_hdf5: no masses, and MassTable[%d] is 0", t);
    const double units[] = {H->unit_length_cgs, H->unit_mass_cgs, H->unit_velocity_cgs};
    bool any = units[0] != 0 || units[1] != 0 || units[2] != 0;
    for (int k = 0; any && k < 3; k++)
        if (!(units[k] > 0) || !isfinite(units[k]))
            return grove__fail(GROVE_INVALID_ARGUMENT, "gadget_write_hdf5: the units (cm, g, cm/s) must all be "
                                                       "finite and > 0, or all 0 (none stated)");
    return GROVE_OK;
}

grove_status grove_gadget_write_hdf5(const char *path, const grove_gadget *snap, const double *potential)
{
    grove__clear_error();
    if (!path || !snap) return grove__fail(GROVE_INVALID_ARGUMENT, "gadget_write_hdf5: NULL argument");
    int types;
    grove_status s = check_snapshot(snap, &types);
    if (s != GROVE_OK) return s;
    grove__hdf5_enter();
    writer w = {NULL, -1, GROVE_OK};
    if (writer_open(&w, path) == GROVE_OK) {
        write_header(&w, snap, types);
        if (snap->header.unit_length_cgs != 0) write_units(&w, &snap->header);
        for (int t = 0; t < types; t++)
            if (snap->count[t]) write_type(&w, snap, potential, t);
    }
    s = writer_close(&w, path);
    grove__hdf5_leave();
    if (s != GROVE_OK) grove__error_prefix(path);
    return s;
}

/* ---- FoF catalogues ------------------------------------------------------- */

static void write_catalogue_header(writer *w, const grove_gadget_header *H, size_t groups, size_t nids)
{
    grove_gadget_header none;
    memset(&none, 0, sizeof none);
    if (!H) H = &none;
    hid_t g = make_group(w, w->file, "Header");
    uint64_t ng = groups, ni = nids;
    attribute(w, g, "Ngroups_ThisFile", H5T_STD_U64LE, H5T_NATIVE_UINT64, &ng, 0);
    attribute(w, g, "Ngroups_Total", H5T_STD_U64LE, H5T_NATIVE_UINT64, &ng, 0);
    attribute(w, g, "Nids_ThisFile", H5T_STD_U64LE, H5T_NATIVE_UINT64, &ni, 0);
    attribute(w, g, "Nids_Total", H5T_STD_U64LE, H5T_NATIVE_UINT64, &ni, 0);
    attr_int(w, g, "Nsubgroups_ThisFile", 0);
    attr_int(w, g, "Nsubgroups_Total", 0);
    attr_int(w, g, "NumFiles", 1);
    attr_double(w, g, "Time", H->time);
    attr_double(w, g, "Redshift", H->redshift);
    attr_double(w, g, "BoxSize", H->box[0]);
    attr_double(w, g, "Omega0", H->omega0);
    attr_double(w, g, "OmegaLambda", H->omega_lambda);
    attr_double(w, g, "HubbleParam", H->hubble);
    grove__hdf5_close(g);
}

static void write_groups(writer *w, const grove_fof_catalogue *c)
{
    hid_t g = make_group(w, w->file, "Group");
    size_t n = c->groups;
    int64_t *offset = w->s == GROVE_OK ? grove__malloc((n ? n : 1) * sizeof *offset, "group offsets") : NULL;
    if (w->s == GROVE_OK && !offset) w->s = GROVE_OUT_OF_MEMORY;
    for (size_t k = 0, at = 0; offset && k < n; at += (size_t)c->members[k], k++) offset[k] = (int64_t)at;
    dataset(w, g, "GroupLen", H5T_STD_I64LE, H5T_NATIVE_INT64, n, 0, c->members);
    dataset(w, g, "GroupOffset", H5T_STD_I64LE, H5T_NATIVE_INT64, n, 0, offset);
    dataset(w, g, "GroupMass", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, n, 0, c->mass);
    dataset(w, g, "GroupPos", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, n, c->d, c->center);
    if (c->velocity) {
        dataset(w, g, "GroupVel", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, n, c->d, c->velocity);
        dataset(w, g, "GroupVelDisp", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, n, 0, c->dispersion);
    }
    dataset(w, g, "GroupRadius", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, n, 0, c->radius);
    grove__free(offset);
    grove__hdf5_close(g);
}

grove_status grove_fof_write_hdf5(const char *path, const grove_gadget_header *header,
                                  const grove_fof_catalogue *catalogue, const uint64_t *ids, size_t nids)
{
    grove__clear_error();
    if (!path || !catalogue || (nids && !ids))
        return grove__fail(GROVE_INVALID_ARGUMENT, "fof_write_hdf5: NULL argument");
    uint64_t sum = 0;
    for (size_t k = 0; k < catalogue->groups; k++) sum += (uint64_t)catalogue->members[k];
    if (sum != nids)
        return grove__fail(GROVE_INVALID_ARGUMENT, "fof_write_hdf5: %zu ids, the groups hold %llu members", nids,
                           (unsigned long long)sum);
    grove__hdf5_enter();
    writer w = {NULL, -1, GROVE_OK};
    if (writer_open(&w, path) == GROVE_OK) {
        write_catalogue_header(&w, header, catalogue->groups, nids);
        write_groups(&w, catalogue);
        hid_t g = make_group(&w, w.file, "Subhalo"); /* none: readers of group catalogues look for it */
        grove__hdf5_close(g);
        g = make_group(&w, w.file, "IDs");
        dataset(&w, g, "ID", H5T_STD_U64LE, H5T_NATIVE_UINT64, nids, 0, ids);
        grove__hdf5_close(g);
    }
    grove_status s = writer_close(&w, path);
    grove__hdf5_leave();
    if (s != GROVE_OK) grove__error_prefix(path);
    return s;
}
