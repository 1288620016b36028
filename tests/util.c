/* Shared test helpers: a temporary folder, files, running commands. */
#include "test.h"

#include <math.h>
#include <stdint.h>
#include <sys/wait.h>
#include <unistd.h>

static char tmpdir[256];

static void remove_tmpdir(void)
{
    char command[300];
    snprintf(command, sizeof command, "rm -rf '%s'", tmpdir);
    if (system(command) != 0) fprintf(stderr, "could not remove %s\n", tmpdir);
}

const char *test_tmpdir(void)
{
    if (!tmpdir[0]) {
        const char *base = getenv("TMPDIR");
        snprintf(tmpdir, sizeof tmpdir, "%s/grove-test-XXXXXX", base && *base ? base : "/tmp");
        if (!mkdtemp(tmpdir)) {
            perror("mkdtemp");
            exit(2);
        }
        atexit(remove_tmpdir);
    }
    return tmpdir;
}

const char *test_path(const char *name)
{
    static char buffers[8][512];
    static int next;
    char *b = buffers[next++ % 8];
    snprintf(b, 512, "%s/%s", test_tmpdir(), name);
    return b;
}

const char *test_write_file(const char *name, const void *data, size_t len)
{
    const char *path = test_path(name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, len, f) != len || fclose(f) != 0) {
        perror(path);
        exit(2);
    }
    return path;
}

char *test_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 16, got = 0;
    char *buf = malloc(cap);
    for (size_t r; buf && (r = fread(buf + got, 1, cap - 1 - got, f)) > 0;) {
        got += r;
        if (got == cap - 1) {
            char *grown = realloc(buf, cap *= 2);
            if (!grown) free(buf);
            buf = grown;
        }
    }
    fclose(f);
    if (buf) buf[got] = '\0';
    if (len) *len = got;
    return buf;
}

int test_run(const char *command, char **output)
{
    size_t need = strlen(command) + 16;
    char *full = malloc(need);
    snprintf(full, need, "(%s) 2>&1", command);
    FILE *p = popen(full, "r");
    free(full);
    if (!p) return -1;
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    size_t got;
    while ((got = fread(buf + len, 1, cap - len - 1, p)) > 0) {
        len += got;
        if (cap - len < 2) buf = realloc(buf, cap *= 2);
    }
    buf[len] = '\0';
    int status = pclose(p);
    if (output) *output = buf;
    else free(buf);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

const char *test_cli(void)
{
    const char *cli = getenv("GROVE_CLI");
    return cli && *cli ? cli : "build/grove";
}

int test_grove(const char *args, char **output)
{
    char command[4096];
    snprintf(command, sizeof command, "%s %s", test_cli(), args);
    return test_run(command, output);
}

bool test_mpi_ready(void)
{
    if (!grove_mpi_built()) {
        test_skip("this build has no MPI part");
        return false;
    }
    if (test_run("command -v mpirun >/dev/null", NULL) != 0) {
        test_skip("mpirun not found");
        return false;
    }
    return true;
}

bool test_sanitized(void)
{
    const char *s = getenv("GROVE_SANITIZE");
    return s && *s;
}

int test_mpirun(int ranks, const char *program, const char *args, char **output)
{
    const char *mpi_tests = getenv("GROVE_TEST_MPI");
    const char *path = strcmp(program, "grove") == 0 ? test_cli()
                       : mpi_tests && *mpi_tests  ? mpi_tests
                                                  : "build/test_mpi";
    /* Open MPI leaves thousands of allocations behind at MPI_Finalize, most
     * from components it has unloaded by then, whose frames no suppression
     * can name: leak checking is off under mpirun (AddressSanitizer still
     * checks every access); grove's MPI code frees what it allocates in
     * the one-process runs of the same paths. With more ranks than cores,
     * ranks waiting in a collective yield theirs (mpi_yield_when_idle). */
    char command[8192];
    snprintf(command, sizeof command,
             "ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 "
             "mpirun --allow-run-as-root --oversubscribe --mca mpi_yield_when_idle 1 -np %d %s %s",
             ranks, path, args);
    return test_run(command, output);
}

void test_mpi_on_1_to_4_ranks(const char *args)
{
    for (int p = 1; p <= 4; p++) {
        char *out = NULL;
        CHECK_MSG(test_mpirun(p, "test_mpi", args, &out) == 0, "np %d: %s", p, out);
        free(out);
    }
}

bool test_same_file(const char *a, const char *b)
{
    size_t na = 0, nb = 0;
    char *x = test_read_file(a, &na), *y = test_read_file(b, &nb);
    bool same = x && y && na == nb && memcmp(x, y, na) == 0;
    free(x);
    free(y);
    return same;
}

double *test_npy_doubles(const char *path, size_t *n)
{
    size_t len = 0;
    char *bytes = test_read_file(path, &len);
    *n = bytes && len > 128 ? (len - 128) / sizeof(double) : 0;
    double *v = *n ? malloc(*n * sizeof *v) : NULL;
    if (v) memcpy(v, bytes + 128, *n * sizeof *v);
    free(bytes);
    return v;
}

const char *const test_kind_name[TEST_KINDS] = {"uniform", "clustered", "lattice", "duplicates"};

double *test_points(test_kind kind, size_t n, size_t d, uint64_t seed)
{
    grove_rng rng;
    grove_rng_seed(&rng, seed);
    double *x = malloc((n * d + 1) * sizeof *x);
    size_t distinct = n / 8 + 1;
    for (size_t i = 0; i < n; i++) {
        size_t blob = grove_rng_below(&rng, 4), src = grove_rng_below(&rng, distinct);
        for (size_t j = 0; j < d; j++) {
            double v;
            switch (kind) {
            case TEST_UNIFORM: v = grove_rng_uniform(&rng); break;
            case TEST_CLUSTERED: v = (double)((blob * 7 + j * 3) % 5) + 0.01 * grove_rng_normal(&rng); break;
            case TEST_LATTICE: v = (double)grove_rng_below(&rng, 4); break;
            default: v = (double)((src * 2654435761u + j * 40503u) % 97) / 8.0; break;
            }
            x[i * d + j] = v;
        }
    }
    return x;
}

const test_units test_unit_changes[] = {
    {0x1p40, 1, 1},    {0x1p-40, 1, 1},    {0x1p40, 0x1p100, 1}, {0x1p-40, 0x1p-100, 1},
    {1e12, 1, 0},      {1e-12, 1, 0},      {1, 1e30, 0},         {1, 1e-30, 0},
    {1e12, 1e30, 0},   {1e-12, 1e-30, 0},  {1e12, 1e-30, 0},     {1e-12, 1e30, 0},
};
const size_t test_unit_changes_count = sizeof test_unit_changes / sizeof test_unit_changes[0];

double *test_scaled_copy(const double *src, size_t n, double f)
{
    double *dst = malloc((n + 1) * sizeof *dst);
    for (size_t i = 0; i < n; i++) dst[i] = src[i] * f;
    return dst;
}

test_particles test_ic(grove_ic_kind kind, size_t n, uint64_t seed, double bh_mass)
{
    test_particles s = {n, malloc(7 * n * sizeof(double)), NULL, NULL};
    s.v = s.x + 3 * n;
    s.m = s.x + 6 * n;
    grove_ic_params ic;
    grove_ic_params_init(&ic);
    ic.kind = kind;
    ic.n = n;
    ic.seed = seed;
    ic.bh_mass = bh_mass;
    grove_status st = grove_ic_generate(&ic, s.x, s.v, s.m);
    CHECK_MSG(st == GROVE_OK, "%s", grove_last_error());
    return s;
}

double test_fsum(const double *x, size_t n)
{
    /* Shewchuk's nonoverlapping partials, smallest first, whose exact sum
     * is that of the terms (CPython's math_fsum). */
    double *partials = malloc((n + 1) * sizeof *partials);
    size_t count = 0;
    for (size_t k = 0; k < n; k++) {
        double v = x[k];
        size_t i = 0;
        for (size_t j = 0; j < count; j++) {
            double y = partials[j];
            if (fabs(v) < fabs(y)) {
                double t = v;
                v = y;
                y = t;
            }
            double hi = v + y, lo = y - (hi - v);
            if (lo != 0) partials[i++] = lo;
            v = hi;
        }
        partials[i] = v;
        count = i + 1;
    }
    /* Round once: add from the top until a partial is lost, then correct a
     * half-way case by the sign of what lies below. */
    double hi = 0, lo = 0;
    size_t m = count;
    if (m > 0) {
        hi = partials[--m];
        while (m > 0) {
            double v = hi, y = partials[--m];
            hi = v + y;
            lo = y - (hi - v);
            if (lo != 0) break;
        }
        if (m > 0 && ((lo < 0 && partials[m - 1] < 0) || (lo > 0 && partials[m - 1] > 0))) {
            double y = lo * 2, v = hi + y;
            if (y == v - hi) hi = v;
        }
    }
    free(partials);
    return hi;
}

static grove_device test_device(void)
{
    const char *name = getenv("GROVE_TEST_DEVICE");
    return name && strcmp(name, "cuda") == 0 ? GROVE_DEVICE_CUDA : GROVE_DEVICE_OPENCL;
}

bool test_device_ready(void)
{
    char why[512];
    if (grove_device_info(test_device(), why, sizeof why)) return true;
    test_skip("no %s device: %s", test_device() == GROVE_DEVICE_CUDA ? "CUDA" : "OpenCL", why);
    return false;
}

const char *test_device_name(void) { return test_device() == GROVE_DEVICE_CUDA ? "cuda" : "opencl"; }

grove_options test_device_options(size_t budget)
{
    grove_options o;
    grove_options_init(&o);
    o.threads = 2;
    o.device = test_device();
    o.memory_budget = budget;
    return o;
}

void test_direct_gravity(const double *pos, const double *mass, size_t n, size_t i, double eps, double a[3],
                         double *phi)
{
    a[0] = a[1] = a[2] = *phi = 0;
    for (size_t j = 0; j < n; j++) {
        if (j == i) continue;
        double d[3], r2 = eps * eps;
        for (int k = 0; k < 3; k++) {
            d[k] = pos[3 * j + k] - pos[3 * i + k];
            r2 += d[k] * d[k];
        }
        if (r2 == 0) continue;
        double r = sqrt(r2);
        for (int k = 0; k < 3; k++) a[k] += mass[j] * d[k] / (r2 * r);
        *phi -= mass[j] / r;
    }
}
