/* The distributed simulation against the single-process one on the whole
 * input (run on every rank here, independently of the others):
 *  - on one rank every step is the single-process step bit for bit
 *    (positions, velocities, accelerations, potentials, levels, counts)
 *    for the shared, adaptive and block steps;
 *  - on every rank count and split (even, uneven with an empty rank, all
 *    on the last), the rows stay a permutation of the input's, the
 *    momentum is conserved to rounding by every step, and the gathered
 *    state stays within the tree's error of the single-process run;
 *  - a checkpoint written by the ranks is the file the single-process
 *    reader reads, with the gathered state bit for bit;
 *  - unequal work (a dense core in a sparse halo, domains of equal
 *    counts) is rebalanced at the next step, and evens out (work
 *    imbalance 1.24 -> 1.01 on 2 ranks, 1.23 -> 1.12 on 3, 1.25 -> 1.07
 *    on 4);
 *  - errors: ranks that differ in parameters, a step with another
 *    context, a state that stops being finite (every rank fails, naming
 *    the particle's row on its rank).
 * Cases nbody_write / nbody_resume (a checkpoint written on some ranks,
 * resumed on others) and nbody_energy (a long run's energy error) take
 * arguments from tests/test_mpi.c. */
#include "mpi_test.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

/* n Plummer particles (Henon units), the same on every rank. */
static double *plummer(size_t n, uint64_t seed)
{
    grove_ic_params ic;
    grove_ic_params_init(&ic);
    ic.n = n;
    ic.seed = seed;
    double *x = malloc(7 * n * sizeof *x);
    MPI_CHECK(x && grove_ic_generate(&ic, x, x + 3 * n, x + 6 * n) == GROVE_OK);
    return x;
}

/* A simulation of rows first..first+count of state (pos 3n, vel 3n, mass n). */
static grove_nbody *part_sim(const double *state, size_t n, size_t first, size_t count, const grove_nbody_params *p,
                             const grove_options *o)
{
    grove_nbody *sim = NULL;
    MPI_CHECK(grove_nbody_create(grove_points_f64(state + 3 * first, count, 3), state + 3 * n + 3 * first,
                                 state + 6 * n + first, p, o, &sim) == GROVE_OK);
    return sim;
}

/* A Plummer sphere of n (seed; softening 0.01, the other parameters the
 * defaults), each rank passing its block of rows; *o gets the context. */
static grove_nbody *blocked_plummer(const grove_mpi *mpi, size_t n, uint64_t seed, grove_options *o)
{
    double *x = plummer(n, seed);
    grove_options_init(o);
    o->mpi = mpi;
    grove_nbody_params p;
    grove_nbody_params_init(&p);
    p.gravity.softening = 0.01;
    size_t first, count;
    grove_mpi_block(mpi, n, &first, &count);
    grove_nbody *sim = part_sim(x, n, first, count, &p, o);
    free(x);
    return sim;
}

typedef struct whole {
    double *pos, *vel, *mass, *pot;
    uint8_t *level;
} whole;

/* The gathered state (on rank 0; NULL columns elsewhere). */
static whole gathered(const grove_nbody *sim, int rank)
{
    size_t n = grove_nbody_total(sim);
    whole w = {NULL, NULL, NULL, NULL, NULL};
    if (rank == 0) {
        w.pos = malloc(9 * n * sizeof(double) + n + 1);
        MPI_CHECK(w.pos);
        w.vel = w.pos + 3 * n;
        w.mass = w.vel + 3 * n;
        w.pot = w.mass + n;
        w.level = (uint8_t *)(w.pot + n);
    }
    MPI_CHECK(grove_nbody_gather(sim, w.pos, w.vel, w.mass, w.pot, w.level) == GROVE_OK);
    return w;
}

/* The rows of every rank: each global row once. */
static void check_rows(const grove_nbody *sim, const grove_mpi *mpi)
{
    size_t n = grove_nbody_total(sim), m = grove_nbody_count(sim);
    const int64_t *row = grove_nbody_rows(sim);
    int64_t count = (int64_t)m, all = 0;
    MPI_Allreduce(&count, &all, 1, MPI_INT64_T, MPI_SUM, grove_mpi_comm(mpi));
    MPI_CHECK((size_t)all == n);
    for (size_t i = 0; i < m; i++) MPI_CHECK(row[i] >= 0 && (size_t)row[i] < n && (i == 0 || row[i] > row[i - 1]));
    uint8_t *seen = calloc(n + 1, 1), *any = calloc(n + 1, 1);
    MPI_CHECK(seen && any);
    for (size_t i = 0; i < m; i++) seen[row[i]] = 1;
    MPI_Allreduce(seen, any, (int)n, MPI_UINT8_T, MPI_SUM, grove_mpi_comm(mpi));
    for (size_t i = 0; i < n; i++) MPI_CHECK(any[i] == 1);
    free(seen);
    free(any);
}

static double norm3(const double *v) { return sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]); }

/* sum m |v| over every rank's particles. */
static double momentum_scale(const grove_nbody *sim, const grove_mpi *mpi)
{
    double s = 0;
    for (size_t i = 0; i < grove_nbody_count(sim); i++)
        s += grove_nbody_masses(sim)[i] * norm3(grove_nbody_velocities(sim) + 3 * i);
    MPI_Allreduce(MPI_IN_PLACE, &s, 1, MPI_DOUBLE, MPI_SUM, grove_mpi_comm(mpi));
    return s;
}

/* `steps` steps of the distributed dist and the single-process one: the
 * momentum after each step within rounding of the one before, and at the
 * end on one rank the same bits, on several the largest position
 * difference below `tol` (relative to the largest |x|) and the energies
 * within the tree's potential error (3e-4, relative) of each other. */
static void run_both(grove_nbody *dist, grove_nbody *one, int steps, const grove_options *o, const grove_mpi *mpi,
                     int rank, int ranks, double tol)
{
    for (int k = 0; k < steps; k++) {
        grove_nbody_diag d0, d1;
        MPI_CHECK(grove_nbody_diagnostics(dist, &d0) == GROVE_OK);
        MPI_CHECK(grove_nbody_step(dist, 1, o) == GROVE_OK);
        MPI_CHECK(grove_nbody_step(one, 1, NULL) == GROVE_OK);
        MPI_CHECK(grove_nbody_diagnostics(dist, &d1) == GROVE_OK);
        /* Block steps remove the net force only where every particle is
         * active: in between, momentum moves by the tree's force error. */
        const grove_nbody_params *p = grove_nbody_get_params(dist);
        if (p->conserve_momentum && p->timestep != GROVE_TIMESTEP_BLOCK) {
            double dp[3] = {d1.momentum[0] - d0.momentum[0], d1.momentum[1] - d0.momentum[1],
                            d1.momentum[2] - d0.momentum[2]};
            MPI_CHECK(norm3(dp) < 1e-14 * momentum_scale(dist, mpi));
        }
        check_rows(dist, mpi);
    }
    /* Block steps' levels follow the accelerations, which differ on several ranks. */
    MPI_CHECK((ranks > 1 && grove_nbody_get_params(dist)->timestep == GROVE_TIMESTEP_BLOCK) ||
              grove_nbody_force_evaluations(dist) == grove_nbody_force_evaluations(one));
    size_t n = grove_nbody_total(dist);
    whole w = gathered(dist, rank);
    grove_nbody_diag dd, d1;
    MPI_CHECK(grove_nbody_diagnostics(dist, &dd) == GROVE_OK && grove_nbody_diagnostics(one, &d1) == GROVE_OK);
    if (rank == 0) {
        if (ranks == 1) {
            MPI_CHECK(memcmp(w.pos, grove_nbody_positions(one), 3 * n * sizeof(double)) == 0);
            MPI_CHECK(memcmp(w.vel, grove_nbody_velocities(one), 3 * n * sizeof(double)) == 0);
            MPI_CHECK(memcmp(w.pot, grove_nbody_potentials(one), n * sizeof(double)) == 0);
            MPI_CHECK(memcmp(w.level, grove_nbody_levels(one), n) == 0);
            MPI_CHECK(memcmp(grove_nbody_accelerations(dist), grove_nbody_accelerations(one), 3 * n * sizeof(double)) ==
                      0);
        }
        double worst = 0, scale = 0;
        for (size_t i = 0; i < 3 * n; i++) {
            double dx = fabs(w.pos[i] - grove_nbody_positions(one)[i]);
            worst = dx > worst ? dx : worst;
            scale = fabs(w.pos[i]) > scale ? fabs(w.pos[i]) : scale;
        }
        if (getenv("GROVE_TEST_VERBOSE"))
            printf("np %d: largest position difference %.3g of %.3g after %d steps, energy %.3g\n", ranks, worst,
                   scale, steps, fabs(dd.energy - d1.energy) / fabs(d1.energy));
        MPI_CHECK(worst <= tol * scale);
        MPI_CHECK(memcmp(w.mass, grove_nbody_masses(one), n * sizeof(double)) == 0);
        MPI_CHECK(ranks > 1 || memcmp(&dd, &d1, sizeof dd) == 0);
        MPI_CHECK(fabs(dd.energy - d1.energy) < 3e-4 * fabs(d1.energy));
    }
    free(w.pos);
}

/* Each time-step mode on every split of the rows. */
static void modes_and_splits(const grove_mpi *mpi, int rank, int ranks)
{
    size_t n = 1500;
    double *x = plummer(n, 5);
    grove_options o;
    grove_options_init(&o);
    o.mpi = mpi;
    for (int mode = 0; mode < 3; mode++)
        for (int kind = 0; kind < 3; kind++) {
            grove_nbody_params p;
            grove_nbody_params_init(&p);
            p.gravity.softening = 0.01;
            p.dt = mode == GROVE_TIMESTEP_BLOCK ? 1.0 / 16 : 1.0 / 64;
            p.timestep = (grove_timestep)mode;
            p.eta = mode ? 0.1 : 0;
            p.max_level = 5;
            p.conserve_momentum = kind != 1;
            size_t first, count;
            mpi_part(n, ranks, rank, kind, &first, &count);
            grove_nbody *dist = part_sim(x, n, first, count, &p, &o), *one = part_sim(x, n, 0, n, &p, NULL);
            MPI_CHECK(grove_nbody_total(dist) == n);
            check_rows(dist, mpi);
            run_both(dist, one, mode == GROVE_TIMESTEP_BLOCK ? 2 : 6, &o, mpi, rank, ranks, 1e-5);
            grove_nbody_rank_stats st;
            grove_nbody_load(dist, &st);
            MPI_CHECK(st.particles == grove_nbody_count(dist) && st.decompositions >= 1);
            grove_nbody_free(dist);
            grove_nbody_free(one);
        }
    free(x);
}

/* A checkpoint of the ranks is the single-process file of the gathered state. */
static void checkpoint_is_one_file(const grove_mpi *mpi, int rank, int ranks, const char *dir)
{
    size_t n = 700, first, count;
    double *x = plummer(n, 9);
    grove_options o;
    grove_options_init(&o);
    o.mpi = mpi;
    grove_nbody_params p;
    grove_nbody_params_init(&p);
    p.gravity.softening = 0.02;
    p.timestep = GROVE_TIMESTEP_BLOCK;
    p.max_level = 4;
    p.dt = 1.0 / 16;
    mpi_part(n, ranks, rank, 1, &first, &count);
    grove_nbody *sim = part_sim(x, n, first, count, &p, &o);
    MPI_CHECK(grove_nbody_set_app_data(sim, "settings", 8) == GROVE_OK);
    MPI_CHECK(grove_nbody_step(sim, 3, &o) == GROVE_OK);
    char path[4096];
    snprintf(path, sizeof path, "%s/mpi_nbody_np%d.ckpt", dir, ranks);
    MPI_CHECK(grove_nbody_checkpoint_write(sim, path) == GROVE_OK);
    whole w = gathered(sim, rank);
    if (rank == 0) {
        grove_nbody *back = NULL;
        MPI_CHECK(grove_nbody_checkpoint_read(path, NULL, &back) == GROVE_OK);
        MPI_CHECK(grove_nbody_total(back) == n && grove_nbody_get_params(back)->timestep == GROVE_TIMESTEP_BLOCK);
        MPI_CHECK(memcmp(w.pos, grove_nbody_positions(back), 3 * n * sizeof(double)) == 0);
        MPI_CHECK(memcmp(w.vel, grove_nbody_velocities(back), 3 * n * sizeof(double)) == 0);
        MPI_CHECK(memcmp(w.level, grove_nbody_levels(back), n) == 0);
        size_t bytes;
        const char *app = grove_nbody_app_data(back, &bytes);
        MPI_CHECK(bytes == 8 && memcmp(app, "settings", 8) == 0);
        grove_nbody_diag b;
        MPI_CHECK(grove_nbody_diagnostics(back, &b) == GROVE_OK);
        MPI_CHECK(b.step == 3 && grove_nbody_force_evaluations(back) == grove_nbody_force_evaluations(sim));
        grove_nbody_free(back);
    }
    free(w.pos);
    /* A missing file fails on every rank; rank 0 names it. */
    grove_nbody *none = NULL;
    snprintf(path, sizeof path, "%s/no_such.ckpt", dir);
    MPI_CHECK(grove_nbody_checkpoint_read(path, &o, &none) != GROVE_OK && !none);
    MPI_CHECK(rank != 0 || strstr(grove_last_error(), "no_such.ckpt"));
    grove_nbody_free(sim);
    free(x);
}

static void errors(const grove_mpi *mpi, int rank, int ranks)
{
    size_t n = 200, first, count;
    double *x = plummer(n, 3);
    grove_options o;
    grove_options_init(&o);
    o.mpi = mpi;
    mpi_part(n, ranks, rank, 0, &first, &count);
    grove_nbody_params p;
    grove_nbody_params_init(&p);
    grove_nbody *sim = NULL;
    /* the parameters differ on the last rank */
    if (ranks > 1) {
        p.gravity.theta = rank == ranks - 1 ? 0.5 : 0.75;
        MPI_CHECK(grove_nbody_create(grove_points_f64(x + 3 * first, count, 3), x + 3 * n + 3 * first,
                                     x + 6 * n + first, &p, &o, &sim) == GROVE_INVALID_ARGUMENT && !sim);
        MPI_CHECK(strstr(grove_last_error(), "differ"));
        p.gravity.theta = 0.75;
    }
    /* a bad velocity on the last rank fails every rank, each naming its global row */
    double keep = x[3 * n + 3 * (n - 1)];
    x[3 * n + 3 * (n - 1)] = NAN;
    MPI_CHECK(grove_nbody_create(grove_points_f64(x + 3 * first, count, 3), x + 3 * n + 3 * first, x + 6 * n + first,
                                 &p, &o, &sim) == GROVE_INVALID_ARGUMENT && !sim);
    MPI_CHECK(strstr(grove_last_error(), "velocity 0 of particle 199 is not finite"));
    x[3 * n + 3 * (n - 1)] = keep;
    /* one particle (the last row) so fast that its drift overflows: every
     * rank stops at step 1, each saying what the one holding it found
     * (its global row), and every rank's handle refuses the next step (none
     * waits for the others) */
    p.dt = 8;
    x[3 * n + 3 * (n - 1)] = 1e308;
    sim = part_sim(x, n, first, count, &p, &o);
    MPI_CHECK(grove_nbody_step(sim, 1, NULL) == GROVE_INVALID_ARGUMENT);
    MPI_CHECK(strstr(grove_last_error(), "MPI context it was made with"));
    int holder = -1;
    for (size_t i = 0; i < grove_nbody_count(sim); i++)
        if (grove_nbody_rows(sim)[i] == (int64_t)(n - 1)) holder = rank;
    MPI_Allreduce(MPI_IN_PLACE, &holder, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_CHECK(grove_nbody_step(sim, 3, &o) == GROVE_INVALID_ARGUMENT);
    char said[64];
    snprintf(said, sizeof said, "rank %d: ", holder);
    MPI_CHECK(strstr(grove_last_error(), "step 1") && (ranks == 1 || strstr(grove_last_error(), said)));
    MPI_CHECK(strstr(grove_last_error(), "particle 199's position is not finite"));
    MPI_CHECK(grove_nbody_step(sim, 1, &o) == GROVE_INVALID_ARGUMENT && strstr(grove_last_error(), "failed"));
    MPI_CHECK(grove_nbody_checkpoint_write(sim, "never.ckpt") == GROVE_INVALID_ARGUMENT);
    grove_nbody_free(sim);
    free(x);
}

/* The flops of every rank since the last decomposition: max / mean. */
static double flop_imbalance(const grove_nbody *sim, const grove_mpi *mpi, int ranks)
{
    grove_nbody_rank_stats st;
    grove_nbody_load(sim, &st);
    double most = st.flops, sum = st.flops;
    MPI_Allreduce(MPI_IN_PLACE, &most, 1, MPI_DOUBLE, MPI_MAX, grove_mpi_comm(mpi));
    MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_DOUBLE, MPI_SUM, grove_mpi_comm(mpi));
    return most / (sum / ranks);
}

/* Rebalancing: a dense Plummer core (half the particles, 1/50 the size)
 * inside a wide sparse one, cut into domains of equal counts at first,
 * gives the ranks unequal work; the next step cuts new domains weighted by
 * it, and the work is then closer to even. */
static void rebalances_by_work(const grove_mpi *mpi, int rank, int ranks)
{
    if (ranks < 2) return;
    size_t n = 4000, first, count;
    double *x = plummer(n, 21);
    for (size_t i = 0; i < n / 2; i++)
        for (int k = 0; k < 3; k++) x[3 * i + k] *= 0.02;
    grove_options o;
    grove_options_init(&o);
    o.mpi = mpi;
    grove_nbody_params p;
    grove_nbody_params_init(&p);
    p.gravity.softening = 0.001;
    p.dt = 1e-4;
    grove_mpi_block(mpi, n, &first, &count);
    grove_nbody *sim = part_sim(x, n, first, count, &p, &o);
    double before = flop_imbalance(sim, mpi, ranks);
    MPI_CHECK(grove_nbody_step(sim, 1, &o) == GROVE_OK);
    grove_nbody_rank_stats st;
    grove_nbody_load(sim, &st);
    double after = flop_imbalance(sim, mpi, ranks);
    if (rank == 0 && getenv("GROVE_TEST_VERBOSE"))
        printf("np %d: work imbalance %.3f at the start, %.3f after %llu decompositions\n", ranks, before, after,
               (unsigned long long)st.decompositions);
    MPI_CHECK(before > 1 + GROVE_NBODY_REBALANCE && st.decompositions == 2 && after < before);
    check_rows(sim, mpi);
    grove_nbody_free(sim);
    free(x);
}

void mpi_case_nbody(int argc, char **argv)
{
    int rank, ranks;
    grove_mpi *mpi = mpi_world(&rank, &ranks);
    modes_and_splits(mpi, rank, ranks);
    checkpoint_is_one_file(mpi, rank, ranks, argc > 0 ? argv[0] : ".");
    rebalances_by_work(mpi, rank, ranks);
    errors(mpi, rank, ranks);
    grove_mpi_free(mpi);
}

/* nbody_write DIR N STEPS: a Plummer run of N on these ranks, checkpointed
 * at STEPS to DIR/resume.ckpt and at 2 STEPS to DIR/resume_end.ckpt. */
void mpi_case_nbody_write(int argc, char **argv)
{
    MPI_CHECK(argc == 3);
    int rank, ranks;
    grove_mpi *mpi = mpi_world(&rank, &ranks);
    uint64_t steps = strtoull(argv[2], NULL, 10);
    grove_options o;
    grove_nbody *sim = blocked_plummer(mpi, strtoul(argv[1], NULL, 10), 11, &o);
    char path[4096];
    MPI_CHECK(grove_nbody_step(sim, steps, &o) == GROVE_OK);
    snprintf(path, sizeof path, "%s/resume.ckpt", argv[0]);
    MPI_CHECK(grove_nbody_checkpoint_write(sim, path) == GROVE_OK);
    MPI_CHECK(grove_nbody_step(sim, steps, &o) == GROVE_OK);
    snprintf(path, sizeof path, "%s/resume_end.ckpt", argv[0]);
    MPI_CHECK(grove_nbody_checkpoint_write(sim, path) == GROVE_OK);
    grove_nbody_free(sim);
    grove_mpi_free(mpi);
}

/* nbody_resume DIR STEPS: DIR/resume.ckpt read on these ranks holds the
 * file's state (read alone) bit for bit; STEPS more steps end within the
 * tree's error of the writer's run (DIR/resume_end.ckpt), with its energy. */
void mpi_case_nbody_resume(int argc, char **argv)
{
    MPI_CHECK(argc == 2);
    int rank, ranks;
    grove_mpi *mpi = mpi_world(&rank, &ranks);
    uint64_t steps = strtoull(argv[1], NULL, 10);
    grove_options o;
    grove_options_init(&o);
    o.mpi = mpi;
    char path[4096], end[4096];
    snprintf(path, sizeof path, "%s/resume.ckpt", argv[0]);
    snprintf(end, sizeof end, "%s/resume_end.ckpt", argv[0]);
    grove_nbody *sim = NULL, *alone = NULL, *last = NULL;
    MPI_CHECK(grove_nbody_checkpoint_read(path, &o, &sim) == GROVE_OK);
    size_t n = grove_nbody_total(sim);
    whole w = gathered(sim, rank);
    if (rank == 0) {
        MPI_CHECK(grove_nbody_checkpoint_read(path, NULL, &alone) == GROVE_OK);
        MPI_CHECK(memcmp(w.pos, grove_nbody_positions(alone), 3 * n * sizeof(double)) == 0);
        MPI_CHECK(memcmp(w.vel, grove_nbody_velocities(alone), 3 * n * sizeof(double)) == 0);
        MPI_CHECK(memcmp(w.mass, grove_nbody_masses(alone), n * sizeof(double)) == 0);
        /* One rank recomputes the forces as the single-process reader does. */
        MPI_CHECK(ranks > 1 || memcmp(w.pot, grove_nbody_potentials(alone), n * sizeof(double)) == 0);
    }
    free(w.pos);
    grove_nbody_diag d0, d1, dl;
    MPI_CHECK(grove_nbody_diagnostics(sim, &d0) == GROVE_OK);
    MPI_CHECK(grove_nbody_step(sim, steps, &o) == GROVE_OK);
    MPI_CHECK(grove_nbody_diagnostics(sim, &d1) == GROVE_OK);
    MPI_CHECK(d1.step == d0.step + steps && d1.time == d0.time + (double)steps * grove_nbody_get_params(sim)->dt);
    w = gathered(sim, rank);
    if (rank == 0) {
        MPI_CHECK(grove_nbody_checkpoint_read(end, NULL, &last) == GROVE_OK);
        MPI_CHECK(grove_nbody_diagnostics(last, &dl) == GROVE_OK && dl.step == d1.step);
        double worst = 0, scale = 0;
        for (size_t i = 0; i < 3 * n; i++) {
            double dx = fabs(w.pos[i] - grove_nbody_positions(last)[i]);
            worst = dx > worst ? dx : worst;
            scale = fabs(w.pos[i]) > scale ? fabs(w.pos[i]) : scale;
        }
        if (getenv("GROVE_TEST_VERBOSE"))
            printf("resumed on %d ranks: largest position difference %.3g of %.3g; E %.12g vs %.12g\n", ranks, worst,
                   scale, d1.energy, dl.energy);
        MPI_CHECK(worst <= 1e-5 * scale);
        MPI_CHECK(fabs(d1.energy - dl.energy) < 3e-4 * fabs(dl.energy));
        MPI_CHECK(grove_nbody_force_evaluations(last) == grove_nbody_force_evaluations(sim));
    }
    free(w.pos);
    grove_nbody_free(sim);
    grove_nbody_free(alone);
    grove_nbody_free(last);
    grove_mpi_free(mpi);
}

/* nbody_energy N STEPS BOUND: a Plummer sphere of N, STEPS shared steps of
 * 1/128 at theta 0.75 and softening 0.01 (the single-process check's run,
 * docs/nbody.md): the largest |dE/E| below BOUND, and the momentum
 * conserved to rounding. */
void mpi_case_nbody_energy(int argc, char **argv)
{
    MPI_CHECK(argc == 3);
    int rank, ranks;
    grove_mpi *mpi = mpi_world(&rank, &ranks);
    size_t n = strtoul(argv[0], NULL, 10);
    uint64_t steps = strtoull(argv[1], NULL, 10);
    double bound = strtod(argv[2], NULL);
    grove_options o;
    grove_nbody *sim = blocked_plummer(mpi, n, 1, &o);
    grove_nbody_diag d0, d;
    MPI_CHECK(grove_nbody_diagnostics(sim, &d0) == GROVE_OK);
    double worst = 0, pworst = 0;
    for (uint64_t k = 0; k < steps; k++) {
        MPI_CHECK(grove_nbody_step(sim, 1, &o) == GROVE_OK);
        MPI_CHECK(grove_nbody_diagnostics(sim, &d) == GROVE_OK);
        double e = fabs((d.energy - d0.energy) / d0.energy);
        double dp[3] = {d.momentum[0] - d0.momentum[0], d.momentum[1] - d0.momentum[1], d.momentum[2] - d0.momentum[2]};
        worst = e > worst ? e : worst;
        pworst = norm3(dp) > pworst ? norm3(dp) : pworst;
    }
    grove_nbody_rank_stats st;
    grove_nbody_load(sim, &st);
    if (rank == 0)
        printf("np %d: %zu particles, %llu steps: max |dE/E| %.3g (bound %g), max |dP| %.3g, %llu decompositions, %llu migrated\n",
               ranks, n, (unsigned long long)steps, worst, bound, pworst, (unsigned long long)st.decompositions, (unsigned long long)st.migrated);
    MPI_CHECK(worst < bound);
    MPI_CHECK(pworst < 1e-12 * momentum_scale(sim, mpi));
    grove_nbody_free(sim);
    grove_mpi_free(mpi);
}
