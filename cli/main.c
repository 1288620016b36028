/* grove <command> [options]: dispatch to one command per app. */
#include "cli.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static const struct {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
    bool distributed; /* runs under mpirun on several ranks (docs/mpi.md) */
} commands[] = {
    {"balltree", cmd_balltree, "perfect binary ball trees over batched point clouds (Erwin)", false},
    {"dbscan", cmd_dbscan, "exact DBSCAN clustering, labelled as scikit-learn labels it", true},
    {"emst", cmd_emst, "Euclidean / mutual-reachability minimum spanning tree (Boruvka)", false},
    {"fof", cmd_fof, "friends-of-friends groups (halos) of a snapshot, with a catalogue", true},
    {"gen", cmd_gen, "seeded synthetic point sets (.npy)", false},
    {"gravity", cmd_gravity, "Barnes-Hut tree gravity: accelerations and potentials (Bonsai)", true},
    {"hdbscan", cmd_hdbscan, "HDBSCAN* clustering: labels, probabilities, outlier scores", false},
    {"info", cmd_info, "version, build flags, threads and optional parts", true},
    {"join", cmd_join, "exact epsilon similarity join: all pairs within a distance (RT-HiSS)", true},
    {"knn", cmd_knn, "exact k nearest neighbours", false},
    {"nbody", cmd_nbody, "N-body simulation: leapfrog on tree gravity, snapshots, checkpoints", true},
    {"paircount", cmd_paircount, "pair counts and two-point correlation functions (Corrfunc's conventions)", true},
};

static void usage(FILE *out)
{
    fprintf(out, "usage: grove <command> [options]\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(out, "\ncommon options: --threads N  --json  --quiet  --progress | --no-progress\n"
                 "input points: .npy (float32/float64), .csv, or raw little-endian with --dims D [--dtype float32]\n"
                 "outputs: .npy arrays, written under temporary names and renamed together when complete\n"
                 "  (a character device or FIFO output, such as /dev/null, is written through)\n"
                 "exit status: 0 done, 1 failed while running, 2 usage error (bad flag, value or path),\n"
                 "  130 / 143 after SIGINT / SIGTERM (unfinished outputs removed; a second signal ends at once)\n"
                 "'grove <command> --help' shows a command's options.\n");
}

/* Command i under the MPI context a launcher gives (grove runs alone when
 * none started it); a command that does not run distributed is refused
 * on more than one rank, before any work. */
static int run_command(size_t i, int argc, char **argv)
{
    grove_mpi *mpi = NULL;
    if (grove_mpi_launch(&argc, &argv, &mpi) != GROVE_OK) {
        fprintf(stderr, "grove %s: %s\n", commands[i].name, grove_last_error());
        return CLI_EXIT_FAIL;
    }
    int rc = CLI_EXIT_USAGE, ranks = grove_mpi_size(mpi);
    char cpu[512];
    if (grove_cpu_info(cpu, sizeof cpu) != GROVE_OK) {
        /* GROVE_CPU names vector code grove does not know: a usage error
         * of every command rather than a run on code nobody chose. */
        if (grove_mpi_rank(mpi) == 0) fprintf(stderr, "grove %s: %s\n", commands[i].name, grove_last_error());
    } else if (ranks > 1 && !commands[i].distributed) {
        if (grove_mpi_rank(mpi) == 0)
            fprintf(stderr, "grove %s: runs on one process, but was started on %d MPI ranks\n", commands[i].name,
                    ranks);
    } else {
        cli_mpi_set(mpi);
        cli_signals_install();
        rc = cli_exit_status(commands[i].name, commands[i].run(argc - 2, argv + 2));
        cli_mpi_set(NULL);
    }
    grove_mpi_free(mpi);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return CLI_EXIT_USAGE;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return CLI_EXIT_OK;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("grove %s\n", grove_version());
        return CLI_EXIT_OK;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(argv[1], commands[i].name) == 0) return run_command(i, argc, argv);
    fprintf(stderr, "grove: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return CLI_EXIT_USAGE;
}
