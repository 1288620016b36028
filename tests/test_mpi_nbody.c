/* The distributed simulation through mpirun (tests/mpi/nbody.c holds the
 * library cases): steps against one process on 1 to 4 ranks, a checkpoint
 * resumed on other rank counts, the energy check, and `grove nbody` under
 * mpirun against a plain run. */
#include "test.h"

#include <math.h>

TEST(mpi_nbody_steps_match_one_process_on_1_to_4_ranks)
{
    if (!test_mpi_ready()) return;
    char args[600];
    snprintf(args, sizeof args, "nbody %s", test_path(""));
    test_mpi_on_1_to_4_ranks(args);
}

/* A checkpoint written on 2 ranks resumes on 3 (and on 1): the state read
 * is the file's, and the run goes on within the tree's error of the
 * writer's own continuation. */
TEST(mpi_nbody_checkpoint_from_2_ranks_resumes_on_3_and_1)
{
    if (!test_mpi_ready()) return;
    char args[600], *out = NULL;
    size_t n = test_sanitized() ? 1000 : 3000;
    snprintf(args, sizeof args, "nbody_write %s %zu 10", test_path(""), n);
    int rc = test_mpirun(2, "test_mpi", args, &out);
    CHECK_MSG(rc == 0, "np 2: %s", out);
    free(out);
    if (rc != 0) return;
    snprintf(args, sizeof args, "nbody_resume %s 10", test_path(""));
    for (int p = 3; p >= 1; p -= 2) {
        CHECK_MSG(test_mpirun(p, "test_mpi", args, &out) == 0, "np %d: %s", p, out);
        free(out);
    }
}

/* The energy check of docs/nbody.md (10^4 Plummer, 1000 steps of 1/128,
 * theta 0.75, softening 0.01: |dE/E| < 1e-4) on 2 ranks, and a shorter
 * run on 3; smaller under sanitizers. */
TEST_LONG(mpi_nbody_energy_error_within_the_single_process_bound)
{
    if (!test_mpi_ready()) return;
    bool small = test_sanitized();
    const char *runs[2] = {small ? "nbody_energy 2000 100 2e-4" : "nbody_energy 10000 1000 1e-4",
                           small ? "nbody_energy 1000 20 2e-4" : "nbody_energy 10000 100 1e-4"};
    for (int k = 0; k < 2; k++) {
        char *out = NULL;
        CHECK_MSG(test_mpirun(2 + k, "test_mpi", runs[k], &out) == 0, "%s", out);
        if (getenv("GROVE_TEST_VERBOSE")) printf("  %s", out);
        free(out);
    }
}


/* The largest |a_i - b_i| over n doubles, relative to the largest |b_i|. */
static double largest_difference(const double *a, const double *b, size_t n)
{
    double worst = 0, scale = 0;
    for (size_t i = 0; i < n; i++) {
        worst = fabs(a[i] - b[i]) > worst ? fabs(a[i] - b[i]) : worst;
        scale = fabs(b[i]) > scale ? fabs(b[i]) : scale;
    }
    return scale > 0 ? worst / scale : worst;
}

/* `grove nbody` under mpirun: one rank writes the plain run's snapshots
 * and checkpoint byte for byte; on 2 and 3 ranks the snapshot's rows (in
 * the input's order) are within the tree's error of the plain run's (2e-4
 * of the largest value after 10 steps; 3e-5 seen), --json says how
 * the run was spread, and a run written on 2 ranks resumes on 3 and then
 * alone, ending at the step asked for. */
TEST_LONG(mpi_cli_nbody_outputs_agree_with_a_plain_run)
{
    if (!test_mpi_ready()) return;
    const char *common = "--ic plummer --n 2000 --seed 4 --dt 0.01 --snapshot-every 5 --tipsy --quiet";
    char cmd[4096], dir[512], plain[512], a[600], b[600], name[32], *out = NULL;
    snprintf(plain, sizeof plain, "%s", test_path("mn_plain"));
    snprintf(cmd, sizeof cmd, "nbody %s --steps 10 --out %s", common, plain);
    REQUIRE(test_grove(cmd, NULL) == 0);
    for (int p = 1; p <= 3; p++) {
        snprintf(name, sizeof name, "mn_np%d", p);
        snprintf(dir, sizeof dir, "%s", test_path(name));
        snprintf(cmd, sizeof cmd, "nbody %s --steps 10 --out %s --json", common, dir);
        int rc = test_mpirun(p, "grove", cmd, &out);
        CHECK_MSG(rc == 0, "np %d: %s", p, out);
        char want[64];
        snprintf(want, sizeof want, "\"ranks\": %d", p);
        CHECK_MSG(rc != 0 || (strstr(out, want) && strstr(out, "\"rank_particles\": [") &&
                              strstr(out, "\"rank_bytes_per_step\": [") && strstr(out, "\"load_imbalance\": ") &&
                              strstr(out, "\"n\": 2000,")),
                  "np %d: %s", p, out);
        free(out);
        if (rc != 0) continue;
        for (int k = 0; k < 3; k++) {
            const char *file = k == 0 ? "snap_000010.npy" : k == 1 ? "snap_000010.tipsy" : "checkpoint.grove";
            snprintf(a, sizeof a, "%s/%s", plain, file);
            snprintf(b, sizeof b, "%s/%s", dir, file);
            if (p == 1) {
                CHECK_MSG(test_same_file(a, b), "np 1: %s differs from the plain run's", file);
                continue;
            }
            if (k != 0) continue;
            size_t n0, n1;
            double *x0 = test_npy_doubles(a, &n0), *x1 = test_npy_doubles(b, &n1);
            REQUIRE(x0 && x1 && n0 == 7 * 2000 && n1 == n0);
            double diff = largest_difference(x1, x0, n0);
            CHECK_MSG(diff < 2e-4, "np %d: snapshot differs from the plain run's by %g", p, diff);
            free(x0);
            free(x1);
        }
    }
    /* 2 ranks to step 6, then 3 ranks resume to 12, then one process to 14. */
    snprintf(dir, sizeof dir, "%s", test_path("mn_resume"));
    snprintf(cmd, sizeof cmd, "nbody %s --steps 6 --out %s", common, dir);
    CHECK_MSG(test_mpirun(2, "grove", cmd, &out) == 0, "%s", out);
    free(out);
    snprintf(cmd, sizeof cmd, "nbody --resume --steps 12 --out %s --quiet --json", dir);
    CHECK_MSG(test_mpirun(3, "grove", cmd, &out) == 0 && strstr(out, "\"resumed\": true") &&
                  strstr(out, "\"step\": 12,"),
              "%s", out);
    free(out);
    snprintf(cmd, sizeof cmd, "nbody --resume --steps 14 --out %s --quiet --json", dir);
    CHECK_MSG(test_grove(cmd, &out) == 0 && strstr(out, "\"step\": 14,"), "%s", out);
    free(out);
    snprintf(a, sizeof a, "%s/snap_000010.npy", plain);
    snprintf(b, sizeof b, "%s/snap_000010.npy", dir);
    size_t n0, n1;
    double *x0 = test_npy_doubles(a, &n0), *x1 = test_npy_doubles(b, &n1);
    REQUIRE(x0 && x1 && n1 == n0);
    CHECK_MSG(largest_difference(x1, x0, n0) < 2e-4, "resumed: %g", largest_difference(x1, x0, n0));
    free(x0);
    free(x1);
    /* A resumed run's settings are checked on every rank: status 2. */
    snprintf(cmd, sizeof cmd, "nbody --resume --steps 16 --dt 0.02 --out %s --quiet", dir);
    CHECK(test_mpirun(2, "grove", cmd, &out) != 0 && strstr(out, "--dt 0.02 disagrees"));
    free(out);
    /* --bh-mass is the mass of row 0, checked by whichever rank holds it:
     * the run's own value resumes, another is refused on every rank. */
    snprintf(dir, sizeof dir, "%s", test_path("mn_bh"));
    snprintf(cmd, sizeof cmd, "nbody --ic plummer-bh --bh-mass 0.02 --n 600 --steps 2 --out %s --quiet", dir);
    CHECK_MSG(test_mpirun(2, "grove", cmd, &out) == 0, "%s", out);
    free(out);
    for (int k = 0; k < 2; k++) {
        snprintf(cmd, sizeof cmd, "nbody --resume --bh-mass %s --steps 3 --out %s --quiet", k ? "0.05" : "0.02", dir);
        int rc = test_mpirun(3, "grove", cmd, &out);
        CHECK_MSG(k ? rc != 0 && strstr(out, "--bh-mass 0.05 disagrees") : rc == 0, "--bh-mass %s: %s",
                  k ? "0.05" : "0.02", out);
        free(out);
    }
}
