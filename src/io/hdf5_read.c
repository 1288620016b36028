/* HDF5 snapshots in the GADGET-4 / SWIFT layout, read through libhdf5:
 * the Header group's attributes, the units (SWIFT's Units group, else
 * GADGET-4's Parameters group, else the Header), and for each chosen type
 * PartTypeT/Coordinates, Velocities, ParticleIDs and Masses, each
 * dataset's class, rank and shape checked against the header's counts
 * before anything is allocated, then read into place (libhdf5 converts
 * float32 and float64 as it reads). */
#include "hdf5_internal.h"

#include <stdio.h>

/* Identifiers a scan or a read holds, closed together. */
typedef struct handles {
    hid_t file, group, dataset, type, space, attr;
} handles;

static void close_all(handles *h)
{
    grove__hdf5_close(h->attr);
    grove__hdf5_close(h->space);
    grove__hdf5_close(h->type);
    grove__hdf5_close(h->dataset);
    grove__hdf5_close(h->group);
    grove__hdf5_close(h->file);
    h->attr = h->space = h->type = h->dataset = h->group = h->file = -1;
}

static void close_dataset(handles *h)
{
    grove__hdf5_close(h->space);
    grove__hdf5_close(h->type);
    grove__hdf5_close(h->dataset);
    h->space = h->type = h->dataset = -1;
}

static grove_status open_file(const char *path, handles *h)
{
    h->file = h->group = h->dataset = h->type = h->space = h->attr = -1;
    h->file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    return h->file < 0 ? grove__hdf5_fail(GROVE_PARSE_ERROR, "cannot be read as HDF5") : GROVE_OK;
}

/* The stored type in words: "float32", "int64", "uint32", or its class. */
static void type_text(hid_t type, char *buf, size_t cap)
{
    H5T_class_t cls = H5Tget_class(type);
    size_t bits = 8 * H5Tget_size(type);
    if (cls == H5T_FLOAT) snprintf(buf, cap, "float%zu", bits);
    else if (cls == H5T_INTEGER) snprintf(buf, cap, "%sint%zu", H5Tget_sign(type) == H5T_SGN_NONE ? "u" : "", bits);
    else if (cls == H5T_STRING) snprintf(buf, cap, "a string");
    else snprintf(buf, cap, "a compound or other non-numeric type");
}

/* ---- header attributes ---------------------------------------------------- */

/* Attribute `name` of loc as up to `max` doubles or int64s (*count of
 * them; a scalar is 1). *found false when it is absent and not required. */
static grove_status read_attribute(handles *h, hid_t loc, const char *where, const char *name, bool integer,
                                   void *values, size_t max, size_t *count, bool required, bool *found)
{
    *count = 0;
    if (found) *found = false;
    htri_t there = H5Aexists(loc, name);
    if (there < 0) return grove__hdf5_fail(GROVE_PARSE_ERROR, "%s attribute %s cannot be read", where, name);
    if (!there) {
        if (!required) return GROVE_OK;
        return grove__fail(GROVE_PARSE_ERROR, "%s has no attribute %s", where, name);
    }
    grove_status s = GROVE_OK;
    h->attr = H5Aopen(loc, name, H5P_DEFAULT);
    h->type = h->attr >= 0 ? H5Aget_type(h->attr) : -1;
    h->space = h->attr >= 0 ? H5Aget_space(h->attr) : -1;
    if (h->attr < 0 || h->type < 0 || h->space < 0)
        s = grove__hdf5_fail(GROVE_PARSE_ERROR, "%s attribute %s cannot be read", where, name);
    H5T_class_t cls = s == GROVE_OK ? H5Tget_class(h->type) : H5T_NO_CLASS;
    hssize_t n = s == GROVE_OK ? H5Sget_simple_extent_npoints(h->space) : 0;
    if (s == GROVE_OK && ((integer && cls != H5T_INTEGER) || (!integer && cls != H5T_FLOAT && cls != H5T_INTEGER))) {
        char text[64];
        type_text(h->type, text, sizeof text);
        s = grove__fail(GROVE_PARSE_ERROR, "%s attribute %s is %s, where grove reads %s", where, name, text,
                        integer ? "integers" : "numbers");
    }
    if (s == GROVE_OK && (n < 1 || (size_t)n > max))
        s = grove__fail(GROVE_PARSE_ERROR, "%s attribute %s holds %lld values, where grove reads 1 to %zu", where,
                        name, (long long)n, max);
    if (s == GROVE_OK && H5Aread(h->attr, integer ? H5T_NATIVE_INT64 : H5T_NATIVE_DOUBLE, values) < 0)
        s = grove__hdf5_fail(GROVE_PARSE_ERROR, "%s attribute %s cannot be read", where, name);
    if (s == GROVE_OK) {
        *count = (size_t)n;
        if (found) *found = true;
    }
    grove__hdf5_close(h->attr);
    grove__hdf5_close(h->type);
    grove__hdf5_close(h->space);
    h->attr = h->type = h->space = -1;
    return s;
}

/* One finite number (the first value of a scalar or an array); 0 when
 * absent and not required. */
static grove_status read_number(handles *h, hid_t loc, const char *where, const char *name, bool required,
                                double *value)
{
    double v[GROVE_GADGET_TYPES] = {0};
    size_t n;
    grove_status s = read_attribute(h, loc, where, name, false, v, GROVE_GADGET_TYPES, &n, required, NULL);
    if (s == GROVE_OK && !isfinite(v[0]))
        s = grove__fail(GROVE_PARSE_ERROR, "%s attribute %s is %g, not finite", where, name, v[0]);
    *value = s == GROVE_OK ? v[0] : 0;
    return s;
}

/* A per-type count attribute: `types` non-negative integers (types 0:
 * it sets the count). */
static grove_status read_counts(handles *h, hid_t loc, const char *name, bool required, int *types, uint64_t *out,
                                bool *found)
{
    int64_t v[GROVE_GADGET_TYPES] = {0};
    size_t n;
    grove_status s = read_attribute(h, loc, "Header", name, true, v, GROVE_GADGET_TYPES, &n, required, found);
    if (s != GROVE_OK || !*found) return s;
    if (*types && n != (size_t)*types)
        return grove__fail(GROVE_PARSE_ERROR, "Header attribute %s counts %zu types, NumPart_ThisFile %d", name, n,
                           *types);
    *types = (int)n;
    for (size_t t = 0; t < n; t++) {
        if (v[t] < 0)
            return grove__fail(GROVE_PARSE_ERROR, "Header attribute %s[%zu] is %lld, negative", name, t,
                               (long long)v[t]);
        out[t] = (uint64_t)v[t];
    }
    return GROVE_OK;
}

/* Whether the attribute is stored in 4 bytes (NumPart_Total holding only
 * the low word, as GADGET-2's layout and SWIFT write it). */
static bool attribute_is_32_bit(hid_t loc, const char *name)
{
    hid_t attr = H5Aopen(loc, name, H5P_DEFAULT), type = attr >= 0 ? H5Aget_type(attr) : -1;
    bool narrow = type >= 0 && H5Tget_size(type) <= 4;
    grove__hdf5_close(type);
    grove__hdf5_close(attr);
    return narrow;
}

static grove_status read_totals(handles *h, hid_t header, grove__gadget_file *file)
{
    grove_gadget_header *H = &file->header;
    bool found;
    grove_status s = read_counts(h, header, "NumPart_Total", true, &H->types, H->total, &found);
    uint64_t high[GROVE_GADGET_TYPES] = {0};
    if (s == GROVE_OK) s = read_counts(h, header, "NumPart_Total_HighWord", false, &H->types, high, &found);
    /* The high word adds to a total that holds only the low word: one
     * stored in 32 bits, or a 64-bit one below 2^32. */
    bool narrow = s == GROVE_OK && attribute_is_32_bit(header, "NumPart_Total");
    for (int t = 0; s == GROVE_OK && t < H->types; t++) {
        if (high[t] > UINT32_MAX)
            return grove__fail(GROVE_PARSE_ERROR, "Header attribute NumPart_Total_HighWord[%d] is beyond 32 bits", t);
        if (high[t] && (narrow || H->total[t] <= UINT32_MAX)) H->total[t] += high[t] << 32;
    }
    return s;
}

/* An optional group of the file (-1 when absent). */
static grove_status open_optional(handles *h, const char *name, hid_t *group)
{
    *group = -1;
    if (H5Lexists(h->file, name, H5P_DEFAULT) <= 0) return GROVE_OK;
    *group = H5Gopen2(h->file, name, H5P_DEFAULT);
    return *group < 0 ? grove__hdf5_fail(GROVE_PARSE_ERROR, "group %s cannot be opened", name) : GROVE_OK;
}

/* SWIFT's units: its Units group's lengths, masses and times in cgs. */
static grove_status read_swift_units(handles *h, hid_t units, grove_gadget_header *H)
{
    double t = 0;
    grove_status s = read_number(h, units, "Units", "Unit length in cgs (U_L)", true, &H->unit_length_cgs);
    if (s == GROVE_OK) s = read_number(h, units, "Units", "Unit mass in cgs (U_M)", true, &H->unit_mass_cgs);
    if (s == GROVE_OK) s = read_number(h, units, "Units", "Unit time in cgs (U_t)", true, &t);
    if (s == GROVE_OK && t > 0) H->unit_velocity_cgs = H->unit_length_cgs / t;
    return s;
}

/* GADGET's unit attributes, where loc has them. */
static grove_status read_gadget_units(handles *h, hid_t loc, const char *where, grove_gadget_header *H)
{
    grove_status s = read_number(h, loc, where, "UnitLength_in_cm", false, &H->unit_length_cgs);
    if (s == GROVE_OK) s = read_number(h, loc, where, "UnitMass_in_g", false, &H->unit_mass_cgs);
    if (s == GROVE_OK) s = read_number(h, loc, where, "UnitVelocity_in_cm_per_s", false, &H->unit_velocity_cgs);
    return s;
}

/* The code units, from the first place that states them: a Units group
 * (SWIFT's names, or GADGET-3's and EAGLE's), GADGET-4's Parameters group,
 * the Header; 0 where none does. */
static grove_status read_units(handles *h, hid_t header, grove_gadget_header *H)
{
    static const char *const places[] = {"Units", "Parameters"};
    grove_status s = GROVE_OK;
    for (size_t k = 0; s == GROVE_OK && k < 2 && H->unit_length_cgs == 0; k++) {
        hid_t group;
        if ((s = open_optional(h, places[k], &group)) != GROVE_OK || group < 0) continue;
        if (k == 0 && H5Aexists(group, "Unit length in cgs (U_L)") > 0) s = read_swift_units(h, group, H);
        else s = read_gadget_units(h, group, places[k], H);
        grove__hdf5_close(group);
    }
    if (s == GROVE_OK && H->unit_length_cgs == 0) s = read_gadget_units(h, header, "Header", H);
    return s;
}

/* The cosmology: Omega0, OmegaLambda and HubbleParam from the Header
 * (GADGET-2's and -3's place), else the Parameters group (GADGET-4's),
 * else SWIFT's Cosmology group (Omega_m, Omega_lambda, h). */
static grove_status read_cosmology(handles *h, hid_t header, grove_gadget_header *H)
{
    static const char *const gadget[] = {"Omega0", "OmegaLambda", "HubbleParam"};
    static const char *const swift[] = {"Omega_m", "Omega_lambda", "h"};
    static const char *const places[] = {"Header", "Parameters", "Cosmology"};
    double *values[] = {&H->omega0, &H->omega_lambda, &H->hubble};
    grove_status s = GROVE_OK;
    for (size_t k = 0; s == GROVE_OK && k < 3 && H->hubble == 0; k++) {
        hid_t group = header;
        if (k > 0 && ((s = open_optional(h, places[k], &group)) != GROVE_OK || group < 0)) continue;
        for (int q = 0; s == GROVE_OK && q < 3; q++)
            s = read_number(h, group, places[k], k == 2 ? swift[q] : gadget[q], false, values[q]);
        if (k > 0) grove__hdf5_close(group);
    }
    return s;
}

static grove_status read_header(handles *h, grove__gadget_file *file)
{
    grove_gadget_header *H = &file->header;
    H->format = GROVE_GADGET_HDF5;
    if (H5Lexists(h->file, "Header", H5P_DEFAULT) <= 0) return grove__fail(GROVE_PARSE_ERROR, "no Header group");
    hid_t header = H5Gopen2(h->file, "Header", H5P_DEFAULT);
    if (header < 0) return grove__hdf5_fail(GROVE_PARSE_ERROR, "group Header cannot be opened");
    bool found;
    grove_status s = read_counts(h, header, "NumPart_ThisFile", true, &H->types, file->count, &found);
    if (s == GROVE_OK) s = read_totals(h, header, file);
    size_t n = 0;
    if (s == GROVE_OK)
        s = read_attribute(h, header, "Header", "MassTable", false, H->mass_table, GROVE_GADGET_TYPES, &n, true,
                           NULL);
    if (s == GROVE_OK && n != (size_t)H->types)
        s = grove__fail(GROVE_PARSE_ERROR, "Header attribute MassTable has %zu entries, NumPart_ThisFile %d", n,
                        H->types);
    for (int t = 0; s == GROVE_OK && t < H->types; t++)
        if (!(H->mass_table[t] >= 0) || !isfinite(H->mass_table[t]))
            s = grove__fail(GROVE_PARSE_ERROR, "Header attribute MassTable[%d] is %g, not a finite mass >= 0", t,
                            H->mass_table[t]);
    if (s == GROVE_OK) s = read_number(h, header, "Header", "Time", true, &H->time);
    if (s == GROVE_OK) s = read_number(h, header, "Header", "Redshift", false, &H->redshift);
    double box[3] = {0, 0, 0};
    if (s == GROVE_OK) s = read_attribute(h, header, "Header", "BoxSize", false, box, 3, &n, false, NULL);
    for (int k = 0; s == GROVE_OK && k < 3; k++) {
        H->box[k] = n == 3 ? box[k] : box[0]; /* SWIFT stores 3 lengths, GADGET one */
        if (!(H->box[k] >= 0) || !isfinite(H->box[k]))
            s = grove__fail(GROVE_PARSE_ERROR, "Header attribute BoxSize is %g, not a finite length >= 0", H->box[k]);
    }
    double files = 1;
    if (s == GROVE_OK) s = read_number(h, header, "Header", "NumFilesPerSnapshot", false, &files);
    if (s == GROVE_OK && (files != floor(files) || files < 0 || files > 65536))
        s = grove__fail(GROVE_PARSE_ERROR, "Header attribute NumFilesPerSnapshot is %g, not a count of files", files);
    H->files = files >= 1 ? (int)files : 1;
    if (s == GROVE_OK) s = read_cosmology(h, header, H);
    if (s == GROVE_OK) s = read_units(h, header, H);
    grove__hdf5_close(header);
    return s;
}

/* ---- datasets ------------------------------------------------------------- */

/* The datasets grove reads, with their class, the columns of each row (0:
 * a 1-D dataset) and the field that asks for them. */
typedef struct field {
    const char *name;
    H5T_class_t cls;
    int cols;
    unsigned flag;
} field;
static const field FIELDS[] = {{"Coordinates", H5T_FLOAT, 3, GROVE_GADGET_POS},
                               {"Velocities", H5T_FLOAT, 3, GROVE_GADGET_VEL},
                               {"ParticleIDs", H5T_INTEGER, 0, GROVE_GADGET_IDS},
                               {"Masses", H5T_FLOAT, 0, GROVE_GADGET_MASS}};
enum { COORDINATES, VELOCITIES, IDS, MASSES, NFIELDS };

/* Open group/name and check it holds `count` rows of the field's class
 * and columns; *width = its element size. */
static grove_status open_dataset(handles *h, int t, const field *f, uint64_t count, int *width)
{
    h->dataset = H5Dopen2(h->group, f->name, H5P_DEFAULT);
    if (h->dataset < 0) return grove__hdf5_fail(GROVE_PARSE_ERROR, "PartType%d/%s cannot be opened", t, f->name);
    h->type = H5Dget_type(h->dataset);
    h->space = H5Dget_space(h->dataset);
    if (h->type < 0 || h->space < 0)
        return grove__hdf5_fail(GROVE_PARSE_ERROR, "PartType%d/%s cannot be read", t, f->name);
    size_t size = H5Tget_size(h->type);
    if (H5Tget_class(h->type) != f->cls || (size != 4 && size != 8)) {
        char text[64];
        type_text(h->type, text, sizeof text);
        return grove__fail(GROVE_PARSE_ERROR, "PartType%d/%s is %s, where grove reads %s", t, f->name, text,
                           f->cls == H5T_FLOAT ? "float32 or float64" : "32- or 64-bit integers");
    }
    *width = (int)size;
    int rank = H5Sget_simple_extent_ndims(h->space);
    hsize_t dims[2] = {0, 0};
    bool fits = rank == (f->cols ? 2 : 1) && H5Sget_simple_extent_dims(h->space, dims, NULL) == rank;
    if (!fits || dims[0] != count || (f->cols && dims[1] != (hsize_t)f->cols)) {
        char shape[64] = "";
        if (rank >= 1 && rank <= 2 && H5Sget_simple_extent_dims(h->space, dims, NULL) == rank)
            snprintf(shape, sizeof shape, rank == 1 ? "(%llu,)" : "(%llu, %llu)", (unsigned long long)dims[0],
                     (unsigned long long)dims[1]);
        else snprintf(shape, sizeof shape, "of rank %d", rank);
        char want[64];
        snprintf(want, sizeof want, f->cols ? "(%llu, %d)" : "(%llu,)", (unsigned long long)count, f->cols);
        return grove__fail(GROVE_PARSE_ERROR, "PartType%d/%s has shape %s, where the header's NumPart_ThisFile[%d] "
                                              "means %s", t, f->name, shape, t, want);
    }
    return GROVE_OK;
}

static grove_status open_group(handles *h, int t, bool *present)
{
    char name[32];
    snprintf(name, sizeof name, "PartType%d", t);
    htri_t there = H5Lexists(h->file, name, H5P_DEFAULT);
    *present = there > 0;
    if (there <= 0) return GROVE_OK;
    h->group = H5Gopen2(h->file, name, H5P_DEFAULT);
    return h->group < 0 ? grove__hdf5_fail(GROVE_PARSE_ERROR, "group %s cannot be opened", name) : GROVE_OK;
}

/* Whether type t reads its masses from Masses (else from MassTable). */
static bool has_masses(const handles *h) { return H5Lexists(h->group, "Masses", H5P_DEFAULT) > 0; }

/* Type t's datasets grove knows: those of the chosen fields present where
 * the type has particles, and every one present with the class and shape
 * its count means; the widest vector of the chosen fields. */
static grove_status check_type(handles *h, const grove__gadget_file *file, int t, unsigned fields, int *widest)
{
    bool present;
    grove_status s = open_group(h, t, &present);
    uint64_t count = file->count[t];
    if (s != GROVE_OK || (!present && count == 0)) return s;
    if (!present) return grove__fail(GROVE_PARSE_ERROR, "no group PartType%d, where NumPart_ThisFile[%d] is %llu", t,
                                     t, (unsigned long long)count);
    for (int k = 0; s == GROVE_OK && k < NFIELDS; k++) {
        const field *f = &FIELDS[k];
        bool chosen = fields & f->flag;
        if (H5Lexists(h->group, f->name, H5P_DEFAULT) <= 0) {
            if (chosen && k == MASSES && count && file->header.mass_table[t] == 0)
                s = grove__fail(GROVE_PARSE_ERROR, "no PartType%d/Masses, and MassTable[%d] is 0", t, t);
            else if (chosen && k != MASSES && count)
                s = grove__fail(GROVE_PARSE_ERROR, "no PartType%d/%s", t, f->name);
            continue;
        }
        int width = 0;
        s = open_dataset(h, t, f, count, &width);
        if (s == GROVE_OK && chosen && f->cols && width > *widest) *widest = width;
        close_dataset(h);
    }
    grove__hdf5_close(h->group);
    h->group = -1;
    return s;
}

grove_status grove__hdf5_scan(const char *path, const grove_gadget_params *params, grove__gadget_file *file)
{
    grove__hdf5_enter();
    handles h;
    grove_status s = open_file(path, &h);
    if (s == GROVE_OK) s = read_header(&h, file);
    unsigned chosen = s == GROVE_OK ? grove__gadget_types(params, file->header.types) : 0;
    for (int t = 0; s == GROVE_OK && t < file->header.types; t++)
        if (chosen >> t & 1u) s = check_type(&h, file, t, params->fields, &file->width);
    close_all(&h);
    grove__hdf5_leave();
    return s;
}

/* Dataset k of type t, `count` rows, into dst as memtype, a piece of rows
 * at a time, each piece checked (check may be NULL; dtype is memtype's)
 * while it is in the cache. */
static grove_status read_dataset(handles *h, int t, int k, uint64_t count, hid_t memtype, grove_dtype dtype,
                                 void *dst, grove__gadget_check check)
{
    const field *f = &FIELDS[k];
    int width;
    grove_status s = open_dataset(h, t, f, count, &width);
    size_t cols = f->cols ? (size_t)f->cols : 1, row_bytes = cols * H5Tget_size(memtype);
    char what[48];
    snprintf(what, sizeof what, "PartType%d/%s", t, f->name);
    for (size_t r = 0; s == GROVE_OK && r < count; r += GROVE__GADGET_CHUNK) {
        size_t rows = count - r < GROVE__GADGET_CHUNK ? (size_t)count - r : GROVE__GADGET_CHUNK;
        hsize_t start[2] = {r, 0}, size[2] = {rows, cols};
        char *at = (char *)dst + r * row_bytes;
        hid_t mem = H5Screate_simple(f->cols ? 2 : 1, size, NULL);
        bool read = mem >= 0 && H5Sselect_hyperslab(h->space, H5S_SELECT_SET, start, NULL, size, NULL) >= 0 &&
                    H5Dread(h->dataset, memtype, mem, h->space, H5P_DEFAULT, at) >= 0;
        grove__hdf5_close(mem);
        if (!read) s = grove__hdf5_fail(GROVE_PARSE_ERROR, "%s cannot be read", what);
        else if (check) s = check(at, dtype, rows, r, what);
    }
    close_dataset(h);
    return s;
}

/* ParticleIDs: unsigned as they are, signed ones refused when negative. */
static grove_status read_ids(handles *h, int t, uint64_t count, uint64_t *dst)
{
    int width;
    grove_status s = open_dataset(h, t, &FIELDS[IDS], count, &width);
    bool is_signed = s == GROVE_OK && H5Tget_sign(h->type) != H5T_SGN_NONE;
    close_dataset(h);
    hid_t memtype = is_signed ? H5T_NATIVE_INT64 : H5T_NATIVE_UINT64;
    if (s == GROVE_OK) s = read_dataset(h, t, IDS, count, memtype, GROVE_INT64, dst, NULL);
    for (uint64_t i = 0; s == GROVE_OK && is_signed && i < count; i++)
        if (dst[i] >> 63)
            s = grove__fail(GROVE_PARSE_ERROR, "PartType%d/ParticleIDs: row %llu is negative", t,
                            (unsigned long long)i);
    return s;
}

static grove_status read_type(handles *h, const grove__gadget_file *file, int t, grove__gadget_dest *dest)
{
    bool present;
    grove_status s = open_group(h, t, &present);
    grove_gadget *out = dest->out;
    size_t count = (size_t)file->count[t], at = dest->at[t], w = grove_dtype_size(out->dtype);
    hid_t vector = out->dtype == GROVE_FLOAT32 ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE;
    if (s == GROVE_OK && out->pos)
        s = read_dataset(h, t, COORDINATES, count, vector, out->dtype, (char *)out->pos + at * 3 * w,
                         grove__gadget_check_vectors);
    if (s == GROVE_OK && out->vel)
        s = read_dataset(h, t, VELOCITIES, count, vector, out->dtype, (char *)out->vel + at * 3 * w,
                         grove__gadget_check_vectors);
    if (s == GROVE_OK && out->ids) s = read_ids(h, t, count, out->ids + at);
    if (s == GROVE_OK && out->mass && has_masses(h)) {
        s = read_dataset(h, t, MASSES, count, H5T_NATIVE_DOUBLE, GROVE_FLOAT64, out->mass + at,
                         grove__gadget_check_masses);
    } else if (s == GROVE_OK && out->mass) {
        for (size_t i = 0; i < count; i++) out->mass[at + i] = file->header.mass_table[t];
    }
    grove__hdf5_close(h->group);
    h->group = -1;
    dest->at[t] += count;
    return s;
}

grove_status grove__hdf5_read(const char *path, const grove__gadget_file *file, grove__gadget_dest *dest)
{
    grove__hdf5_enter();
    handles h;
    grove_status s = open_file(path, &h);
    for (int t = 0; s == GROVE_OK && t < file->header.types; t++)
        if ((dest->types >> t & 1u) && file->count[t]) s = read_type(&h, file, t, dest);
    close_all(&h);
    grove__hdf5_leave();
    return s;
}
