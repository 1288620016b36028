/* HDF5 snapshots: files written here with libhdf5 from the layouts'
 * definitions (SWIFT's, GADGET-4's) read back exactly; grove's own files
 * round-trip bit for bit; FoF catalogues hold what was given; bad files
 * (a missing header attribute, a wrong dtype, counts that disagree with a
 * dataset, a truncated file) are refused naming the file and the dataset;
 * libhdf5 is loaded (through libgrove_hdf5.so) only for an HDF5 file.
 * Skipped where grove was built without libhdf5. */
#include "test.h"

#include <math.h>
#include <stdlib.h>
#include <unistd.h>
#include <stdint.h>

#ifdef GROVE_HAVE_HDF5
#include <hdf5.h>

/* ---- writing test files with libhdf5 -------------------------------------- */

static void h5_attr(hid_t loc, const char *name, hid_t type, const void *v, size_t n)
{
    hsize_t dims = n;
    hid_t space = n ? H5Screate_simple(1, &dims, NULL) : H5Screate(H5S_SCALAR);
    hid_t a = H5Acreate2(loc, name, type, space, H5P_DEFAULT, H5P_DEFAULT);
    H5Awrite(a, type, v);
    H5Aclose(a);
    H5Sclose(space);
}

static void h5_data(hid_t loc, const char *name, hid_t type, const void *v, size_t rows, size_t cols)
{
    hsize_t dims[2] = {rows, cols};
    hid_t space = H5Screate_simple(cols ? 2 : 1, dims, NULL);
    hid_t d = H5Dcreate2(loc, name, type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5Dwrite(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, v);
    H5Dclose(d);
    H5Sclose(space);
}

/* A group of three one-number attributes. */
static void h5_numbers(hid_t f, const char *group, const char *const *names, const double *values)
{
    hid_t g = H5Gcreate2(f, group, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    for (int k = 0; k < 3; k++) h5_attr(g, names[k], H5T_NATIVE_DOUBLE, &values[k], 1);
    H5Gclose(g);
}

/* What a SWIFT-layout test file holds: 7 types, 3 gas (type 0) and 4 dark
 * matter (type 1) particles; doubles for coordinates, float32 velocities
 * and masses, signed 64-bit ids; BoxSize of 3 lengths, the Units and
 * Cosmology groups. Each "break" leaves something out or makes it wrong. */
enum { BREAK_NONE, BREAK_TIME, BREAK_DTYPE, BREAK_SHAPE, BREAK_GROUP };
static const double SWIFT_POS[7][3] = {{0.5, 1, 2}, {3, 4, 5}, {6, 7, 8.25},
                                       {1e-3, 2e-3, 3e-3}, {9, 9.5, 9.75}, {0, 0, 0}, {99, 98, 97}};

static void write_swift(const char *path, int brk)
{
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    hid_t h = H5Gcreate2(f, "Header", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    long long this_file[7] = {3, 4, 0, 0, 0, 0, 0};
    unsigned total[7] = {3, 4, 0, 0, 0, 0, 0}, high[7] = {0};
    double table[7] = {0}, box[3] = {100, 100, 50}, time = 0.5, z = 1, files = 1;
    h5_attr(h, "NumPart_ThisFile", H5T_NATIVE_LLONG, this_file, 7);
    h5_attr(h, "NumPart_Total", H5T_NATIVE_UINT, total, 7);
    h5_attr(h, "NumPart_Total_HighWord", H5T_NATIVE_UINT, high, 7);
    h5_attr(h, "MassTable", H5T_NATIVE_DOUBLE, table, 7);
    h5_attr(h, "BoxSize", H5T_NATIVE_DOUBLE, box, 3);
    if (brk != BREAK_TIME) h5_attr(h, "Time", H5T_NATIVE_DOUBLE, &time, 1);
    h5_attr(h, "Redshift", H5T_NATIVE_DOUBLE, &z, 1);
    h5_attr(h, "NumFilesPerSnapshot", H5T_NATIVE_DOUBLE, &files, 1);
    const char code[] = "SWIFT";
    hid_t str = H5Tcopy(H5T_C_S1);
    H5Tset_size(str, sizeof code);
    h5_attr(h, "Code", str, code, 0);
    H5Tclose(str);
    H5Gclose(h);
    static const char *const units[] = {"Unit length in cgs (U_L)", "Unit mass in cgs (U_M)",
                                        "Unit time in cgs (U_t)"};
    static const char *const cosmology[] = {"Omega_m", "Omega_lambda", "h"};
    h5_numbers(f, "Units", units, (const double[]){3.08567758e24, 1.98841e43, 3.08567758e19});
    h5_numbers(f, "Cosmology", cosmology, (const double[]){0.3, 0.7, 0.68});
    for (int t = 0, first = 0; t < 2; first += (int)this_file[t], t++) {
        if (t == 1 && brk == BREAK_GROUP) break;
        char name[16];
        snprintf(name, sizeof name, "PartType%d", t);
        hid_t g = H5Gcreate2(f, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        size_t n = (size_t)this_file[t];
        float vel[4][3], mass[4];
        long long ids[4];
        int coords[4][3];
        for (size_t i = 0; i < n; i++) {
            for (int k = 0; k < 3; k++) {
                vel[i][k] = (float)(first + (int)i) * -0.25f + (float)k;
                coords[i][k] = (int)i;
            }
            mass[i] = 1.5f + (float)(first + (int)i);
            ids[i] = 7000000000LL + first + (long long)i;
        }
        if (t == 1 && brk == BREAK_DTYPE) h5_data(g, "Coordinates", H5T_NATIVE_INT, coords, n, 3);
        else h5_data(g, "Coordinates", H5T_NATIVE_DOUBLE, SWIFT_POS[first], n - (t == 1 && brk == BREAK_SHAPE), 3);
        h5_data(g, "Velocities", H5T_NATIVE_FLOAT, vel, n, 3);
        h5_data(g, "Masses", H5T_NATIVE_FLOAT, mass, n, 0);
        h5_data(g, "ParticleIDs", H5T_NATIVE_LLONG, ids, n, 0);
        H5Gclose(g);
    }
    H5Fclose(f);
}

TEST(hdf5_reads_swift_layout_exactly)
{
    const char *path = test_path("swift_0007.hdf5");
    write_swift(path, BREAK_NONE);
    grove_gadget s;
    REQUIRE_OK(grove_gadget_read(path, NULL, &s));
    const grove_gadget_header *H = &s.header;
    CHECK(H->format == GROVE_GADGET_HDF5 && H->types == 7 && H->files == 1);
    CHECK(H->time == 0.5 && H->redshift == 1 && H->box[0] == 100 && H->box[2] == 50);
    CHECK(H->omega0 == 0.3 && H->omega_lambda == 0.7 && H->hubble == 0.68);
    CHECK(H->unit_length_cgs == 3.08567758e24 && H->unit_mass_cgs == 1.98841e43);
    CHECK(H->unit_velocity_cgs == 3.08567758e24 / 3.08567758e19);
    REQUIRE(s.n == 7 && s.count[0] == 3 && s.count[1] == 4 && s.dtype == GROVE_FLOAT64);
    for (size_t i = 0; i < 7; i++) {
        for (int k = 0; k < 3; k++) {
            CHECK(((double *)s.pos)[3 * i + k] == SWIFT_POS[i][k]);
            CHECK(((double *)s.vel)[3 * i + k] == (double)((float)i * -0.25f + (float)k));
        }
        CHECK(s.mass[i] == 1.5 + (double)i && s.ids[i] == 7000000000ULL + i);
    }
    grove_gadget_free(&s);
    /* Dark matter alone, positions alone, in float32. */
    grove_gadget_params p;
    grove_gadget_params_init(&p);
    p.types = 1u << 1;
    p.fields = GROVE_GADGET_POS;
    p.dtype = GROVE_FLOAT32;
    REQUIRE_OK(grove_gadget_read(path, &p, &s));
    REQUIRE(s.n == 4 && s.vel == NULL && s.mass == NULL && s.dtype == GROVE_FLOAT32);
    for (size_t i = 0; i < 12; i++) CHECK(((float *)s.pos)[i] == (float)SWIFT_POS[3 + i / 3][i % 3]);
    grove_gadget_free(&s);
    grove_gadget_format format;
    REQUIRE_OK(grove_gadget_probe(path, &format));
    CHECK(format == GROVE_GADGET_HDF5);
}

/* A bad file is refused, the message naming the file and `what`. */
static void check_refused(const char *path, const char *what)
{
    grove_gadget s;
    grove_status st = grove_gadget_read(path, NULL, &s);
    CHECK_MSG(st == GROVE_PARSE_ERROR && strstr(grove_last_error(), path) && strstr(grove_last_error(), what),
              "wanted a parse error naming %s and '%s', got %s: %s", path, what, grove_status_str(st),
              grove_last_error());
    CHECK(s.pos == NULL && s.n == 0);
}

TEST(hdf5_refuses_bad_files_naming_the_dataset)
{
    const char *path = test_path("bad.hdf5");
    write_swift(path, BREAK_TIME);
    check_refused(path, "Header has no attribute Time");
    write_swift(path, BREAK_DTYPE);
    check_refused(path, "PartType1/Coordinates is int32");
    write_swift(path, BREAK_SHAPE);
    check_refused(path, "PartType1/Coordinates has shape (3, 3), where the header's NumPart_ThisFile[1] means (4, 3)");
    write_swift(path, BREAK_GROUP);
    check_refused(path, "no group PartType1");
    /* Truncated: libhdf5 finds the file shorter than its superblock says. */
    write_swift(path, BREAK_NONE);
    size_t len;
    char *bytes = test_read_file(path, &len);
    REQUIRE(bytes);
    test_write_file("bad.hdf5", bytes, len - 100);
    free(bytes);
    check_refused(path, "truncated");
    test_write_file("bad.hdf5", "not hdf5 at all", 15);
    check_refused(path, "cannot be read as HDF5");
}

/* A snapshot of 3 types (0, 1, 4) with every kind of value, in dtype. */
static void make_snapshot(grove_gadget *s, grove_dtype dtype, size_t n0, size_t n1, size_t n4)
{
    memset(s, 0, sizeof *s);
    s->header.types = 6;
    s->header.time = 0.0625;
    s->header.redshift = 15;
    s->header.box[0] = s->header.box[1] = s->header.box[2] = 25;
    s->header.omega0 = 0.31, s->header.omega_lambda = 0.69, s->header.hubble = 0.677;
    s->header.mass_table[1] = 0.375; /* type 1's masses come from the table */
    s->header.unit_length_cgs = 3.085678e24, s->header.unit_mass_cgs = 1.989e43, s->header.unit_velocity_cgs = 1e5;
    s->count[0] = n0, s->count[1] = n1, s->count[4] = n4;
    s->n = n0 + n1 + n4;
    s->dtype = dtype;
    size_t w = grove_dtype_size(dtype);
    s->pos = malloc(3 * w * s->n + 1);
    s->vel = malloc(3 * w * s->n + 1);
    s->mass = malloc(sizeof(double) * s->n + 1);
    s->ids = malloc(sizeof(uint64_t) * s->n + 1);
    grove_rng rng;
    grove_rng_seed(&rng, 42);
    for (size_t i = 0; i < s->n; i++) {
        for (size_t k = 0; k < 3; k++) {
            double x = 25 * grove_rng_uniform(&rng), v = grove_rng_normal(&rng) * 300;
            if (dtype == GROVE_FLOAT32) ((float *)s->pos)[3 * i + k] = (float)x, ((float *)s->vel)[3 * i + k] = (float)v;
            else ((double *)s->pos)[3 * i + k] = x, ((double *)s->vel)[3 * i + k] = v;
        }
        bool table = i >= n0 && i < n0 + n1;
        s->mass[i] = table ? 0.375 : 0.1 + grove_rng_uniform(&rng);
        s->ids[i] = ((uint64_t)1 << 40) + 3 * i;
    }
}

static void free_snapshot(grove_gadget *s)
{
    free(s->pos), free(s->vel), free(s->mass), free(s->ids);
    memset(s, 0, sizeof *s);
}

TEST(hdf5_round_trips_bit_for_bit)
{
    for (int k = 0; k < 2; k++) {
        grove_dtype dtype = k ? GROVE_FLOAT64 : GROVE_FLOAT32;
        grove_gadget a, b;
        make_snapshot(&a, dtype, 5, 40, 7);
        const char *path = test_path("roundtrip.hdf5");
        REQUIRE_OK(grove_gadget_write_hdf5(path, &a, NULL));
        REQUIRE_OK(grove_gadget_read(path, NULL, &b));
        size_t w = grove_dtype_size(dtype);
        REQUIRE(b.n == a.n && b.dtype == dtype);
        CHECK(memcmp(a.pos, b.pos, 3 * w * a.n) == 0 && memcmp(a.vel, b.vel, 3 * w * a.n) == 0);
        CHECK(memcmp(a.mass, b.mass, sizeof(double) * a.n) == 0 && memcmp(a.ids, b.ids, 8 * a.n) == 0);
        for (int t = 0; t < GROVE_GADGET_TYPES; t++) CHECK(b.count[t] == a.count[t] && b.header.total[t] == a.count[t]);
        const grove_gadget_header *A = &a.header, *B = &b.header;
        CHECK(B->time == A->time && B->redshift == A->redshift && memcmp(B->box, A->box, sizeof A->box) == 0);
        CHECK(B->omega0 == A->omega0 && B->omega_lambda == A->omega_lambda && B->hubble == A->hubble);
        CHECK(memcmp(B->mass_table, A->mass_table, sizeof A->mass_table) == 0 && B->types == 6 && B->files == 1);
        CHECK(B->unit_length_cgs == A->unit_length_cgs && B->unit_mass_cgs == A->unit_mass_cgs &&
              B->unit_velocity_cgs == A->unit_velocity_cgs);
        grove_gadget_free(&b);
        free_snapshot(&a);
    }
}

/* The reader reads a dataset a piece at a time: a snapshot longer than a
 * piece reads whole, a bad value in a later piece is named by its row. */
TEST(hdf5_reads_across_pieces)
{
    grove_gadget a, b;
    make_snapshot(&a, GROVE_FLOAT32, 0, 0, 300000);
    const char *path = test_path("pieces.hdf5");
    REQUIRE_OK(grove_gadget_write_hdf5(path, &a, NULL));
    REQUIRE_OK(grove_gadget_read(path, NULL, &b));
    REQUIRE(b.n == 300000);
    CHECK(memcmp(a.pos, b.pos, 12 * a.n) == 0 && memcmp(a.vel, b.vel, 12 * a.n) == 0);
    CHECK(memcmp(a.mass, b.mass, 8 * a.n) == 0 && memcmp(a.ids, b.ids, 8 * a.n) == 0);
    grove_gadget_free(&b);
    a.mass[280000] = -1;
    REQUIRE_OK(grove_gadget_write_hdf5(path, &a, NULL));
    CHECK_FAILS(grove_gadget_read(path, NULL, &b), GROVE_PARSE_ERROR, "PartType4/Masses: row 280000 is -1");
    free_snapshot(&a);
}

TEST(hdf5_reads_a_snapshot_in_several_files)
{
    /* Two files written by grove, their headers then made one snapshot's:
     * the snapshot's type 0 is rows 0 and 1, type 1 rows 2..4; file 0
     * holds rows 0, 2, 3 and file 1 rows 1, 4. */
    grove_gadget a;
    make_snapshot(&a, GROVE_FLOAT64, 2, 3, 0);
    static const size_t rows[2][3] = {{0, 2, 3}, {1, 4, 0}};
    static const size_t counts[2][2] = {{1, 2}, {1, 1}};
    for (int i = 0; i < 2; i++) {
        double pos[9], vel[9], mass[3];
        uint64_t ids[3];
        grove_gadget part = a;
        part.count[0] = counts[i][0], part.count[1] = counts[i][1];
        part.n = part.count[0] + part.count[1];
        for (size_t r = 0; r < part.n; r++) {
            memcpy(pos + 3 * r, (double *)a.pos + 3 * rows[i][r], 24);
            memcpy(vel + 3 * r, (double *)a.vel + 3 * rows[i][r], 24);
            mass[r] = a.mass[rows[i][r]], ids[r] = a.ids[rows[i][r]];
        }
        part.pos = pos, part.vel = vel, part.mass = mass, part.ids = ids;
        char name[32];
        snprintf(name, sizeof name, "multi_003.%d.hdf5", i);
        REQUIRE_OK(grove_gadget_write_hdf5(test_path(name), &part, NULL));
    }
    for (int i = 0; i < 2; i++) {
        char name[32];
        snprintf(name, sizeof name, "multi_003.%d.hdf5", i);
        hid_t f = H5Fopen(test_path(name), H5F_ACC_RDWR, H5P_DEFAULT);
        hid_t h = H5Gopen2(f, "Header", H5P_DEFAULT);
        unsigned total[6] = {2, 3, 0, 0, 0, 0};
        int files = 2;
        H5Adelete(h, "NumPart_Total");
        H5Adelete(h, "NumFilesPerSnapshot");
        h5_attr(h, "NumPart_Total", H5T_NATIVE_UINT, total, 6);
        h5_attr(h, "NumFilesPerSnapshot", H5T_NATIVE_INT, &files, 0);
        H5Gclose(h);
        H5Fclose(f);
    }
    grove_gadget s;
    /* By the first file, the second, or the snapshot's base name. */
    const char *names[] = {"multi_003.0.hdf5", "multi_003.1.hdf5", "multi_003.hdf5"};
    for (int k = 0; k < 3; k++) {
        REQUIRE_OK(grove_gadget_read(test_path(names[k]), NULL, &s));
        REQUIRE(s.n == 5 && s.header.files == 2);
        CHECK(memcmp(s.pos, a.pos, 5 * 24) == 0 && memcmp(s.ids, a.ids, 5 * 8) == 0);
        CHECK(memcmp(s.mass, a.mass, 5 * 8) == 0);
        grove_gadget_free(&s);
    }
    free_snapshot(&a);
}

/* A 1-D or 2-D dataset of the file as doubles or int64s (malloc'd; *n
 * values), NULL when absent. */
static void *read_dataset(const char *path, const char *name, hid_t memtype, size_t *n)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t d = f >= 0 ? H5Dopen2(f, name, H5P_DEFAULT) : -1;
    hid_t space = d >= 0 ? H5Dget_space(d) : -1;
    hssize_t count = space >= 0 ? H5Sget_simple_extent_npoints(space) : -1;
    void *v = count >= 0 ? malloc(8 * (size_t)count + 8) : NULL;
    if (v && H5Dread(d, memtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) < 0) {
        free(v);
        v = NULL;
    }
    *n = v ? (size_t)count : 0;
    if (space >= 0) H5Sclose(space);
    if (d >= 0) H5Dclose(d);
    if (f >= 0) H5Fclose(f);
    return v;
}

TEST(hdf5_fof_catalogue_holds_what_was_given)
{
    grove_fof_catalogue c;
    memset(&c, 0, sizeof c);
    int64_t members[2] = {3, 2}, first[2] = {0, 1};
    double mass[2] = {3, 2.5}, center[6] = {1, 2, 3, 4, 5, 6}, vel[6] = {-1, 0, 1, 2, 2, 2}, disp[2] = {7, 8},
           radius[2] = {0.5, 0.25};
    c.groups = 2, c.d = 3, c.members = members, c.first = first, c.mass = mass, c.center = center;
    c.velocity = vel, c.dispersion = disp, c.radius = radius;
    uint64_t ids[5] = {10, 12, 14, 11, 13};
    grove_gadget_header h;
    memset(&h, 0, sizeof h);
    h.time = 0.75, h.box[0] = 50;
    const char *path = test_path("fof_tab_001.hdf5");
    REQUIRE_OK(grove_fof_write_hdf5(path, &h, &c, ids, 5));
    /* Each dataset as given, in doubles (exact for these integers too). */
    const struct {
        const char *name;
        const double *want;
        size_t n;
    } sets[] = {{"Group/GroupPos", center, 6}, {"Group/GroupVel", vel, 6}, {"Group/GroupMass", mass, 2},
                {"Group/GroupVelDisp", disp, 2}, {"Group/GroupRadius", radius, 2},
                {"Group/GroupLen", (const double[]){3, 2}, 2}, {"Group/GroupOffset", (const double[]){0, 3}, 2},
                {"IDs/ID", (const double[]){10, 12, 14, 11, 13}, 5}};
    for (size_t k = 0; k < sizeof sets / sizeof sets[0]; k++) {
        size_t n;
        double *got = read_dataset(path, sets[k].name, H5T_NATIVE_DOUBLE, &n);
        CHECK_MSG(got && n == sets[k].n && memcmp(got, sets[k].want, n * sizeof *got) == 0, "%s", sets[k].name);
        free(got);
    }
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t a = H5Aopen_by_name(f, "Header", "Ngroups_Total", H5P_DEFAULT, H5P_DEFAULT);
    uint64_t ngroups = 0;
    CHECK(H5Aread(a, H5T_NATIVE_UINT64, &ngroups) >= 0 && ngroups == 2);
    H5Aclose(a);
    H5Fclose(f);
    /* The ids must be the groups' members. */
    CHECK_FAILS(grove_fof_write_hdf5(path, &h, &c, ids, 4), GROVE_INVALID_ARGUMENT, "4 ids");
}

/* ---- the command line ----------------------------------------------------- */

/* Friends-of-friends by brute force: every pair of x (n x 3) within link
 * joined (the lower row the root), groups of at least `least` ranked by
 * size, then lowest row; group[i] is the rank or -1. Returns the count. */
static size_t brute_fof(const double *x, size_t n, double link, size_t least, int64_t *group)
{
    size_t *root = malloc(n * sizeof *root), *size = calloc(n, sizeof *size), groups = 0;
    for (size_t i = 0; i < n; i++) root[i] = i;
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++) {
            double d2 = 0;
            for (int k = 0; k < 3; k++) d2 += (x[3 * i + k] - x[3 * j + k]) * (x[3 * i + k] - x[3 * j + k]);
            if (d2 > link * link) continue;
            size_t a = i, b = j;
            while (root[a] != a) a = root[a];
            while (root[b] != b) b = root[b];
            if (a != b) root[a > b ? a : b] = a < b ? a : b;
        }
    for (size_t i = 0; i < n; i++) {
        while (root[root[i]] != root[i]) root[i] = root[root[i]];
        size[root[i]]++;
    }
    /* Ranks: repeatedly the largest unranked root, the lowest on ties. */
    for (size_t i = 0; i < n; i++) group[i] = -1;
    for (;;) {
        size_t best = n;
        for (size_t r = 0; r < n; r++)
            if (root[r] == r && size[r] >= least && group[r] < 0 && (best == n || size[r] > size[best])) best = r;
        if (best == n) break;
        group[best] = (int64_t)groups++;
    }
    for (size_t i = 0; i < n; i++) group[i] = group[root[i]];
    free(size);
    free(root);
    return groups;
}

/* The catalogue file at path holds the groups `group` of n rows: their
 * lengths in rank order, the ids (the rows) group by group in row order. */
static void check_catalogue(const char *path, const int64_t *group, size_t n, size_t groups)
{
    size_t nlen, nids;
    int64_t *len = read_dataset(path, "Group/GroupLen", H5T_NATIVE_INT64, &nlen);
    int64_t *ids = read_dataset(path, "IDs/ID", H5T_NATIVE_INT64, &nids);
    CHECK_MSG(len && ids && nlen == groups, "%s: %zu groups, brute force %zu", path, nlen, groups);
    size_t at = 0;
    for (size_t g = 0; len && ids && g < nlen && g < groups; g++)
        for (size_t i = 0; i < n; i++)
            if (group[i] == (int64_t)g) {
                CHECK_MSG(at < nids && ids[at] == (int64_t)i, "%s: group %zu: id %zu is %lld, brute force %zu", path,
                          g, at, at < nids ? (long long)ids[at] : -1LL, i);
                at++;
            }
    CHECK(at == nids);
    free(len);
    free(ids);
}

TEST(hdf5_nbody_writes_what_its_npy_holds_and_finds_halos_as_brute_force)
{
    const char *common = "--ic plummer --n 400 --seed 3 --steps 2 --dt 0.03125 --snapshot-every 1 --quiet";
    char cmd[1024], *out = NULL, npy[512], h5[512];
    snprintf(cmd, sizeof cmd, "nbody %s --out %s", common, test_path("run_npy"));
    REQUIRE(test_grove(cmd, NULL) == 0);
    snprintf(cmd, sizeof cmd, "nbody %s --out %s --format hdf5 --fof-every 2 --linking-length 0.12 --min-members 3",
             common, test_path("run_h5"));
    int rc = test_grove(cmd, &out);
    CHECK_MSG(rc == 0, "%s", out);
    free(out);
    for (int step = 0; step <= 2; step++) {
        snprintf(npy, sizeof npy, "%s/snap_%06d.npy", test_path("run_npy"), step);
        snprintf(h5, sizeof h5, "%s/snap_%06d.hdf5", test_path("run_h5"), step);
        size_t n;
        double *rows = test_npy_doubles(npy, &n);
        grove_gadget s;
        REQUIRE(rows && n == 7 * 400);
        REQUIRE_OK(grove_gadget_read(h5, NULL, &s));
        REQUIRE(s.n == 400 && s.count[1] == 400 && s.dtype == GROVE_FLOAT64);
        CHECK(s.header.time == step * 0.03125);
        bool same = true;
        for (size_t i = 0; i < 400; i++) {
            for (int k = 0; k < 3; k++)
                same &= ((double *)s.pos)[3 * i + k] == rows[7 * i + k] && ((double *)s.vel)[3 * i + k] == rows[7 * i + 3 + k];
            same &= s.mass[i] == rows[7 * i + 6] && s.ids[i] == i;
        }
        CHECK_MSG(same, "step %d: %s differs from %s", step, h5, npy);
        if (step % 2 == 0) {
            int64_t group[400];
            size_t groups = brute_fof(s.pos, 400, 0.12, 3, group);
            CHECK(groups > 1);
            snprintf(h5, sizeof h5, "%s/fof_%06d.hdf5", test_path("run_h5"), step);
            check_catalogue(h5, group, 400, groups);
        }
        grove_gadget_free(&s);
        free(rows);
    }
}

TEST(hdf5_nbody_halos_under_mpirun_number_as_one_process)
{
    if (!test_mpi_ready()) return;
    /* Many groups of 3 and 4 members: their order is the tie rule's. */
    const char *args = "--ic plummer --n 400 --seed 3 --steps 0 --quiet --format hdf5 --fof-every 1 "
                       "--linking-length 0.12 --min-members 3";
    char cmd[1024], *out = NULL, one[512], two[512];
    snprintf(cmd, sizeof cmd, "nbody %s --out %s", args, test_path("halos_one"));
    REQUIRE(test_grove(cmd, NULL) == 0);
    snprintf(cmd, sizeof cmd, "nbody %s --out %s", args, test_path("halos_two"));
    int rc = test_mpirun(3, "grove", cmd, &out);
    CHECK_MSG(rc == 0, "%s", out);
    free(out);
    snprintf(one, sizeof one, "%s/fof_000000.hdf5", test_path("halos_one"));
    snprintf(two, sizeof two, "%s/fof_000000.hdf5", test_path("halos_two"));
    const char *exact[] = {"Group/GroupLen", "Group/GroupOffset", "IDs/ID"};
    for (int k = 0; k < 3; k++) {
        size_t na, nb;
        int64_t *a = read_dataset(one, exact[k], H5T_NATIVE_INT64, &na), *b = read_dataset(two, exact[k], H5T_NATIVE_INT64, &nb);
        CHECK_MSG(a && b && na == nb && na > 0 && memcmp(a, b, 8 * na) == 0, "%s differs on 3 ranks", exact[k]);
        free(a);
        free(b);
    }
    size_t na, nb;
    double *a = read_dataset(one, "Group/GroupPos", H5T_NATIVE_DOUBLE, &na), *b = read_dataset(two, "Group/GroupPos", H5T_NATIVE_DOUBLE, &nb);
    REQUIRE(a && b && na == nb);
    for (size_t i = 0; i < na; i++) CHECK(fabs(a[i] - b[i]) <= 1e-12 * (1 + fabs(a[i])));
    free(a);
    free(b);
}

/* A command that failed (status 1) in one line naming `path` and `what`,
 * having written nothing to `output`; frees out. */
static void check_one_line_failure(int rc, char *out, const char *path, const char *what, const char *output)
{
    CHECK_MSG(rc == 1 && strstr(out, path) && strstr(out, what) && strchr(out, '\n') == strrchr(out, '\n'),
              "exit %d: %s", rc, out);
    free(out);
    FILE *f = fopen(output, "rb");
    CHECK_MSG(f == NULL, "%s was written", output);
    if (f) fclose(f);
}

TEST(hdf5_bad_file_fails_the_command_naming_file_and_dataset)
{
    const char *path = test_path("cli_bad.hdf5");
    write_swift(path, BREAK_SHAPE);
    char cmd[1024], *out = NULL;
    snprintf(cmd, sizeof cmd, "knn %s -k 2 --indices %s", path, test_path("cli_bad_i.npy"));
    int rc = test_grove(cmd, &out);
    check_one_line_failure(rc, out, path, "PartType1/Coordinates", test_path("cli_bad_i.npy"));
    /* A good one is read by every command that takes points: knn here. */
    write_swift(path, BREAK_NONE);
    rc = test_grove(cmd, &out);
    CHECK_MSG(rc == 0, "%s", out);
    free(out);
}

/* The dynamic loader's log of a grove command (LD_DEBUG=libs): which
 * libraries the process loaded. */
static char *loader_log(const char *args)
{
    char cmd[2048], *out = NULL;
    snprintf(cmd, sizeof cmd, "LD_DEBUG=libs %s %s", test_cli(), args);
    int rc = test_run(cmd, &out);
    CHECK_MSG(rc == 0, "%s: exit %d", cmd, rc);
    return out;
}

TEST(hdf5_libhdf5_is_loaded_only_for_an_hdf5_file)
{
    char *out = loader_log("--version");
    CHECK_MSG(out && !strstr(out, "libhdf5") && !strstr(out, "libgrove_hdf5"), "%.400s", out ? out : "");
    free(out);
    char args[1024];
    const char *path = test_path("loaded.hdf5");
    write_swift(path, BREAK_NONE);
    snprintf(args, sizeof args, "knn %s -k 2 --indices %s", path, test_path("loaded_i.npy"));
    out = loader_log(args);
    CHECK_MSG(out && strstr(out, "libgrove_hdf5.so") && strstr(out, "libhdf5"), "%.400s", out ? out : "");
    free(out);
}

TEST(hdf5_command_run_through_path_finds_its_library)
{
    /* Run as "grove" through PATH from another folder: its argv[0] names
     * no folder, the library is still found beside the program. */
    char cwd[4096], dir[8192], cmd[16384], *out = NULL;
    const char *cli = test_cli(), *slash = strrchr(cli, '/');
    REQUIRE(getcwd(cwd, sizeof cwd) != NULL && slash != NULL);
    snprintf(dir, sizeof dir, "%s%s%.*s", cli[0] == '/' ? "" : cwd, cli[0] == '/' ? "" : "/", (int)(slash - cli), cli);
    const char *path = test_path("through_path.hdf5");
    write_swift(path, BREAK_NONE);
    snprintf(cmd, sizeof cmd, "cd %s && env -u LD_LIBRARY_PATH PATH=\"%s:$PATH\" grove knn %s -k 2 --indices %s",
             test_tmpdir(), dir, path, test_path("through_path_i.npy"));
    int rc = test_run(cmd, &out);
    CHECK_MSG(rc == 0, "exit %d: %s", rc, out);
    free(out);
}

TEST(hdf5_command_without_its_library_refuses_naming_it)
{
    /* The command alone in a folder: its HDF5 library is neither beside
     * it nor in ../lib, and not on the library path. */
    char cmd[2048], *out = NULL;
    const char *path = test_path("alone.hdf5");
    write_swift(path, BREAK_NONE);
    snprintf(cmd, sizeof cmd, "mkdir -p %s && cp %s %s/grove && env -u LD_LIBRARY_PATH %s/grove knn %s -k 2 --indices %s",
             test_path("alone"), test_cli(), test_path("alone"), test_path("alone"), path, test_path("alone_i.npy"));
    int rc = test_run(cmd, &out);
    check_one_line_failure(rc, out, path, "libgrove_hdf5.so", test_path("alone_i.npy"));
    /* An HDF5 output is refused before any work (status 2), saying why. */
    snprintf(cmd, sizeof cmd, "env -u LD_LIBRARY_PATH %s/grove nbody --n 10 --steps 1 --format hdf5 --out %s",
             test_path("alone"), test_path("alone_out"));
    rc = test_run(cmd, &out);
    CHECK_MSG(rc == 2 && strstr(out, "--format hdf5") && strstr(out, "libgrove_hdf5.so"), "exit %d: %s", rc, out);
    free(out);
    /* grove info says so. */
    snprintf(cmd, sizeof cmd, "env -u LD_LIBRARY_PATH %s/grove info", test_path("alone"));
    rc = test_run(cmd, &out);
    CHECK_MSG(rc == 0 && strstr(out, "\nhdf5: no (") && strstr(out, "libgrove_hdf5.so"), "exit %d: %s", rc, out);
    free(out);
}

#else

TEST(hdf5_reads_swift_layout_exactly) { test_skip("grove was built without libhdf5"); }

TEST(hdf5_needs_libhdf5)
{
    grove_gadget s;
    CHECK(grove_hdf5_version() == NULL);
    test_write_file("x.hdf5", "\211HDF\r\n\032\n", 8);
    CHECK_FAILS(grove_gadget_read(test_path("x.hdf5"), NULL, &s), GROVE_UNSUPPORTED, "without libhdf5");
    /* The commands refuse HDF5 outputs before any work (status 2). */
    char cmd[1024], *out = NULL;
    snprintf(cmd, sizeof cmd, "nbody --n 10 --steps 1 --format hdf5 --out %s", test_path("no_hdf5"));
    int rc = test_grove(cmd, &out);
    CHECK_MSG(rc == 2 && strstr(out, "without libhdf5"), "exit %d: %s", rc, out);
    free(out);
    double x[12] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1};
    grove_array a = {x, GROVE_FLOAT64, 2, {4, 3}};
    REQUIRE_OK(grove_npy_write(test_path("four.npy"), &a));
    snprintf(cmd, sizeof cmd, "fof %s --b 0.2 --groups %s --catalogue %s", test_path("four.npy"), test_path("g.npy"),
             test_path("c.hdf5"));
    rc = test_grove(cmd, &out);
    CHECK_MSG(rc == 2 && strstr(out, "without libhdf5"), "exit %d: %s", rc, out);
    free(out);
}

#endif
