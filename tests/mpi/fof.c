/* Distributed friends-of-friends against the single-process one: every
 * rank's group ids, the group count and the whole catalogue (every
 * column, byte for byte) equal to grove_fof on the whole input, for
 * uniform and clustered d = 3 data with duplicates, float64 and float32,
 * with and without masses and velocities, and even, uneven and empty
 * parts; a periodic box is refused on several ranks. */
#include "mpi_test.h"

#include <stdint.h>
#include <string.h>

/* kind 0: uniform in [0, 20)^3; 1: integer points in a few clumps plus
 * scattered ones, every seventh a copy of an earlier point. Masses and
 * velocities from the same generator. */
static void make(size_t n, int kind, uint64_t seed, double *x, double *mass, double *vel)
{
    uint64_t s = seed * 2862933555777941757ULL + 3037000493ULL;
    for (size_t i = 0; i < n; i++) {
        double centre = (double)(i % 6) * 15, u[7];
        for (int j = 0; j < 7; j++) {
            s = s * 6364136223846793005ULL + 1442695040888963407ULL;
            u[j] = (double)(s >> 11) * 0x1p-53;
        }
        for (int j = 0; j < 3; j++)
            x[i * 3 + j] = kind == 0     ? 20 * u[j]
                           : i % 9 == 0 ? (double)(int)(u[j] * 90)
                                        : centre + (double)(int)(u[j] * 6);
        mass[i] = 0.5 + u[3];
        for (int j = 0; j < 3; j++) vel[i * 3 + j] = 100 * u[4 + j] - 50;
        if (kind == 1 && i % 7 == 6) memcpy(x + i * 3, x + (i / 3) * 3, 3 * sizeof *x);
    }
}

static int same(const void *a, const void *b, size_t bytes) { return (!a && !b) || (a && b && !memcmp(a, b, bytes)); }

static void check_catalogue(const grove_fof_catalogue *a, const grove_fof_catalogue *b)
{
    size_t g = a->groups, d = a->d;
    MPI_CHECK(b->groups == g && b->d == d);
    MPI_CHECK(same(a->members, b->members, g * 8) && same(a->first, b->first, g * 8));
    MPI_CHECK(same(a->mass, b->mass, g * 8) && same(a->radius, b->radius, g * 8));
    MPI_CHECK(same(a->center, b->center, g * d * 8));
    MPI_CHECK(same(a->velocity, b->velocity, g * d * 8) && same(a->dispersion, b->dispersion, g * 8));
}

void mpi_case_fof(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    int rank, ranks;
    grove_mpi *mpi = mpi_world(&rank, &ranks);
    static const struct {
        size_t n, min_members;
        double link;
        int data, parts, particles, f32; /* particles: 0 none, 1 masses, 2 masses and velocities */
    } cases[] = {{4000, 5, 0.9, 0, 0, 2, 0}, {4000, 3, 1.0, 1, 1, 1, 0}, {3000, 8, 1.5, 1, 3, 0, 0},
                 {4000, 4, 0.8, 0, 1, 2, 1}, {3000, 1, 0.0, 1, 2, 2, 0}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        size_t n = cases[c].n, f, m;
        double *x = malloc(n * 3 * sizeof *x), *mass = malloc(n * sizeof *mass), *vel = malloc(n * 3 * sizeof *vel);
        float *x32 = malloc(n * 3 * sizeof *x32);
        make(n, cases[c].data, c + 1, x, mass, vel);
        for (size_t i = 0; i < 3 * n; i++) x32[i] = (float)x[i];
        const double *ms = cases[c].particles ? mass : NULL, *vs = cases[c].particles == 2 ? vel : NULL;
        grove_fof_params p;
        grove_fof_params_init(&p);
        p.linking_length = cases[c].link;
        p.min_members = cases[c].min_members;
        int64_t *one = malloc(n * sizeof *one), *mine = malloc(n * sizeof *mine);
        size_t g1 = 0, g = 0;
        grove_fof_catalogue c1, cm;
        grove_points all = cases[c].f32 ? grove_points_f32(x32, n, 3) : grove_points_f64(x, n, 3);
        MPI_CHECK(grove_fof(all, ms, vs, &p, one, &g1, &c1, NULL) == GROVE_OK);
        mpi_part(n, ranks, rank, cases[c].parts, &f, &m);
        grove_options o;
        grove_options_init(&o);
        o.mpi = mpi;
        grove_points part_pts = cases[c].f32 ? grove_points_f32(x32 + 3 * f, m, 3) : grove_points_f64(x + 3 * f, m, 3);
        MPI_CHECK(grove_fof(part_pts, ms ? ms + f : NULL, vs ? vs + 3 * f : NULL, &p, mine, &g, &cm, &o) == GROVE_OK);
        MPI_CHECK(g == g1 && memcmp(mine, one + f, m * sizeof *mine) == 0);
        check_catalogue(&c1, &cm);
        /* Something to compare: several groups, and particles left out. */
        MPI_CHECK(g1 >= 2 && (p.min_members == 1 || c1.members[0] < (int64_t)n));
        grove_fof_catalogue_free(&c1);
        grove_fof_catalogue_free(&cm);
        free(x);
        free(x32);
        free(mass);
        free(vel);
        free(one);
        free(mine);
    }
    if (ranks > 1) {
        double pts[6] = {1, 1, 1, 2, 2, 2}, box = 10;
        int64_t grp[2];
        grove_fof_params p;
        grove_fof_params_init(&p);
        p.linking_length = 1;
        p.index.boxsize = &box;
        p.index.boxsize_count = 1;
        grove_options o;
        grove_options_init(&o);
        o.mpi = mpi;
        MPI_CHECK(grove_fof(grove_points_f64(pts, rank == 0 ? 2 : 0, 3), NULL, NULL, &p, grp, NULL, NULL, &o) ==
                  GROVE_UNSUPPORTED);
    }
    grove_mpi_free(mpi);
}
