/*
 * grove.h — the whole public API of grove: spatial trees on point clouds and
 * the algorithms they make fast.
 *
 * Conventions (see docs/api.md for the long form):
 *  - Every function returns a grove_status; GROVE_OK is 0. On failure,
 *    grove_last_error() gives a sentence naming what was wrong and where
 *    (argument, row/column, file:line). The library never prints, exits or
 *    aborts on user input.
 *  - Input points are a view (grove_points), never copied unless a function
 *    says so. Known-size outputs go into caller memory.
 *  - A NULL grove_options pointer means defaults (all threads, no progress,
 *    no memory budget, no cancellation).
 *  - Results are bit-identical for any thread count; ties are broken by index.
 *  - Thread safety: every function may be called concurrently from several
 *    threads on distinct outputs. grove_last_error() is per thread.
 */
#ifndef GROVE_H
#define GROVE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(GROVE_BUILDING) && defined(__GNUC__)
#define GROVE_API __attribute__((visibility("default")))
#else
#define GROVE_API
#endif

#define GROVE_VERSION_MAJOR 0
#define GROVE_VERSION_MINOR 1
#define GROVE_VERSION_PATCH 0
#define GROVE_VERSION_STRING "0.1.0"

/* ------------------------------------------------------------------------ */
/* Status codes                                                              */
/* ------------------------------------------------------------------------ */

/* One list generates both the enum and grove_status_str(), so they cannot
 * drift. X(NAME, value, description). Values are stable across versions. */
#define GROVE_STATUS_MAP(X)                                                   \
    X(OK, 0, "success")                                                       \
    X(INVALID_ARGUMENT, 1, "invalid argument")                                \
    X(OUT_OF_MEMORY, 2, "out of memory")                                      \
    X(IO_ERROR, 3, "input/output error")                                      \
    X(PARSE_ERROR, 4, "malformed input data")                                 \
    X(UNSUPPORTED, 5, "unsupported format or feature")                        \
    X(TOO_LARGE, 6, "size too large")                                         \
    X(OVER_BUDGET, 7, "result does not fit the memory budget")                \
    X(CANCELLED, 8, "cancelled")                                              \
    X(INTERNAL, 9, "internal error")

typedef enum grove_status {
#define GROVE_STATUS_ENUM_(name, value, text) GROVE_##name = value,
    GROVE_STATUS_MAP(GROVE_STATUS_ENUM_)
#undef GROVE_STATUS_ENUM_
} grove_status;

/* Short fixed description of a status code ("invalid argument"). Never NULL. */
GROVE_API const char *grove_status_str(grove_status status);

/* Sentence describing the last failure on the calling thread, e.g.
 * "points: row 17, column 2 is NaN". Empty string if none. The pointer stays
 * valid until the next grove call on this thread. */
GROVE_API const char *grove_last_error(void);

/* Runtime version ("0.1.0"); compare with GROVE_VERSION_STRING. */
GROVE_API const char *grove_version(void);

/* Build description: compiler, flags, OpenMP, optional parts. Static string. */
GROVE_API const char *grove_build_info(void);

/* The vector code this process runs: the processor's features, read once
 * per process, capped by GROVE_CPU (read at the same time; docs/api.md).
 * Writes one line into text (size bytes, cut short and terminated when it
 * does not fit; size 0 writes nothing): the widest code the calls pick,
 * "avx512", "avx2" or "portable", then why, e.g. "avx2 (GROVE_CPU=avx2;
 * features: avx2 fma bmi1 bmi2 lzcnt popcnt avx512f ...)", the features
 * being the processor's. A GROVE_CPU other than portable, avx2, native or
 * empty: GROVE_INVALID_ARGUMENT, grove_last_error() naming the value and
 * those accepted; every call of the process then runs the portable code,
 * which text says. Thread-safe. */
GROVE_API grove_status grove_cpu_info(char *text, size_t size);

/* ------------------------------------------------------------------------ */
/* Element types and point views                                             */
/* ------------------------------------------------------------------------ */

typedef enum grove_dtype {
    GROVE_FLOAT32 = 1,
    GROVE_FLOAT64 = 2,
    GROVE_INT32 = 3,
    GROVE_INT64 = 4,
    GROVE_BOOL = 5  /* one byte, 0 or 1 */
} grove_dtype;

/* Size in bytes of one element; 0 for an unknown dtype. */
GROVE_API size_t grove_dtype_size(grove_dtype dtype);
/* NumPy-style name ("float64"); "unknown" otherwise. */
GROVE_API const char *grove_dtype_name(grove_dtype dtype);

/* A read-only view of n points in d dimensions, row-major, float32 or
 * float64. Row i starts at (const char *)data + i * stride; stride 0 means
 * packed rows (d * element size). The library never writes through it. */
typedef struct grove_points {
    const void *data;
    size_t n, d;
    grove_dtype dtype;
    size_t stride; /* bytes between consecutive rows; 0 = packed */
} grove_points;

/* Convenience constructors for packed row-major arrays. */
GROVE_API grove_points grove_points_f64(const double *data, size_t n, size_t d);
GROVE_API grove_points grove_points_f32(const float *data, size_t n, size_t d);

/* Check a view: known float dtype, d >= 1 when n > 0, stride large enough,
 * n * stride without overflow, every coordinate finite. On failure the error
 * names the first offending row and column. O(n d) time, no memory. */
GROVE_API grove_status grove_points_validate(grove_points points);

/* ------------------------------------------------------------------------ */
/* Options shared by every computation                                       */
/* ------------------------------------------------------------------------ */

/* Progress callback: stage is a short static name ("balltree"), fraction in
 * [0, 1]. Called from the calling thread only, between units of work. */
typedef void (*grove_progress_fn)(void *user, const char *stage, double fraction);

/* Where a call computes (docs/gpu.md). GROVE_DEVICE_CPU is the default
 * and every call's path. The calls with a device path take the others:
 * the epsilon join's count, fill, stream and search and grove_join on
 * one process, grove_gravity, and grove_nbody_step (each step's force
 * evaluations; the rest of the step stays on the CPU); the rest (DBSCAN,
 * FoF, kNN, ..., and every distributed call) run on the CPU whatever it
 * says. CUDA runs on
 * an NVIDIA GPU through libgrove_cuda.so (built when nvcc is found,
 * loaded at run time); OpenCL runs the same kernels on the first OpenCL
 * GPU, else accelerator, else device of any kind (PoCL on a CPU-only
 * machine); either is refused (GROVE_UNSUPPORTED) in one line naming why
 * where it cannot run (not built, no driver, no device).
 * GROVE_DEVICE_AUTO takes a GPU (CUDA first, then an OpenCL GPU) when one
 * is present and the problem is large enough, else the CPU. Results are
 * the CPU's: the join's pairs, rows and distances byte for byte; gravity's
 * tree and interactions the same, accelerations within single-precision
 * rounding. */
typedef enum grove_device {
    GROVE_DEVICE_CPU = 0,
    GROVE_DEVICE_CUDA = 1,
    GROVE_DEVICE_OPENCL = 2,
    GROVE_DEVICE_AUTO = 3
} grove_device;

/* Whether `device` can run here: 1, with a description of it in text
 * ("NVIDIA H100 80GB HBM3, 79.2 GiB, driver 580.65.06"; for OpenCL the
 * platform and the device), else 0 with why not ("not built: grove was
 * built without its CUDA part ...", "no driver: ...", "no device: ...").
 * GROVE_DEVICE_AUTO describes the GPU it would take (0: none, the CPU).
 * At most cap bytes with the terminating NUL (text may be NULL when cap
 * is 0). The first call per process opens the backend (its driver and
 * device; the kernels are built at the first computation, OpenCL's
 * compiled then, up to seconds). */
GROVE_API int grove_device_info(grove_device device, char *text, size_t cap);

typedef struct grove_options {
    int threads;                 /* 0 = the default: grove_cores() threads, fewer
                                    while other processes keep cores busy */
    grove_progress_fn progress;  /* NULL = none */
    void *progress_user;         /* passed to progress */
    size_t memory_budget;        /* bytes for large results; 0 = unlimited */
    const volatile int *cancel;  /* if non-NULL and *cancel != 0 (set it from
                                    another thread or a signal handler), a
                                    computation stops soon with GROVE_CANCELLED:
                                    the long loops read it once per chunk of
                                    work (index and tree builds do not); the
                                    outputs are then unspecified */
    const struct grove_mpi *mpi; /* NULL = this process alone; else the ranks
                                    of this communicator share the call (the
                                    calls that run distributed say so; see
                                    "Distributed runs" below) */
    grove_device device;         /* where the call computes (default
                                    GROVE_DEVICE_CPU; see grove_device) */
} grove_options;

/* Defaults: threads 0, no progress, no budget, no cancel flag, the CPU. */
GROVE_API void grove_options_init(grove_options *options);

/* The number of threads a computation with these options would use if it
 * started now (threads 0: grove_cores() less the cores that other
 * processes keep busy at this moment, at least 1; a call counts them at
 * its start, an N-body run at each step; results are the same for any
 * count). */
GROVE_API int grove_options_threads(const grove_options *options);

/* The most threads the default uses: OpenMP's default (OMP_NUM_THREADS, or
 * a threadpoolctl limit, else the CPUs of the process's affinity mask at
 * start) capped by its cgroup's CPU quota. */
GROVE_API int grove_cores(void);

/* ------------------------------------------------------------------------ */
/* Distributed runs (MPI)                                                    */
/* ------------------------------------------------------------------------ */

/* A communicator for the calls that run distributed (docs/mpi.md). Made
 * from an MPI communicator with grove_mpi_create (grove_mpi.h, the one
 * header with MPI types), or by grove_mpi_launch for a program started by
 * an MPI launcher. Put in grove_options.mpi, every rank makes the same
 * call; a call that does not run distributed fails with GROVE_UNSUPPORTED
 * on more than one rank and runs as it always does on one. */
typedef struct grove_mpi grove_mpi;

/* 1 when this build has the MPI part (src/mpi), else 0. */
GROVE_API int grove_mpi_built(void);

/* For a program that may or may not be started by mpirun / srun: when the
 * MPI part is built and the environment says a launcher started this
 * process (Open MPI, MPICH / PMI or PMIx variables), initialise MPI
 * (MPI_THREAD_FUNNELED: grove talks MPI from the calling thread only) and
 * give the world communicator in *out; otherwise *out = NULL and the
 * program runs alone as without MPI. grove_mpi_free then finalises MPI. */
GROVE_API grove_status grove_mpi_launch(int *argc, char ***argv, grove_mpi **out);

/* Free a context (NULL is a no-op); finalises MPI when grove_mpi_launch
 * initialised it. Every rank calls it. */
GROVE_API void grove_mpi_free(grove_mpi *mpi);

/* This rank (0 for NULL) and the number of ranks (1 for NULL). */
GROVE_API int grove_mpi_rank(const grove_mpi *mpi);
GROVE_API int grove_mpi_size(const grove_mpi *mpi);
/* Bytes this rank has sent to other ranks in grove's distributed calls on
 * the context (0 for NULL and without the MPI part). */
GROVE_API int64_t grove_mpi_bytes_sent(const grove_mpi *mpi);
/* This rank's load in the last distributed grove_gravity on the context:
 * the particles of its domain and the seconds of its tree walks and force
 * kernels (0 and 0 for NULL, before any, and without the MPI part). */
GROVE_API void grove_mpi_load(const grove_mpi *mpi, int64_t *particles, double *seconds);
/* The phases of a distributed grove_gravity, in the order they run:
 * the global units and the domain decomposition with the particles'
 * migration; the local tree, moments and groups; the locally essential
 * trees' exchange (waiting for the other ranks' trees included); the
 * walks and force kernels (grove_mpi_load's seconds); the results and
 * their journey home. */
typedef enum grove_mpi_phase {
    GROVE_MPI_PHASE_DECOMPOSE,
    GROVE_MPI_PHASE_TREE,
    GROVE_MPI_PHASE_LET,
    GROVE_MPI_PHASE_WALK,
    GROVE_MPI_PHASE_HOME,
    GROVE_MPI_PHASES
} grove_mpi_phase;
/* This rank's wall seconds in each phase of the last distributed
 * grove_gravity on the context, and the bytes it sent to other ranks in
 * each (all 0 for NULL, before any, and without the MPI part); either
 * array may be NULL, else it has GROVE_MPI_PHASES entries. */
GROVE_API void grove_mpi_phases(const grove_mpi *mpi, double *seconds, int64_t *bytes);
/* Collective: all[r] = rank r's value, on rank 0 (size entries; all is
 * not touched elsewhere). Alone (NULL): all[0] = value. */
GROVE_API void grove_mpi_gather_int64(const grove_mpi *mpi, int64_t value, int64_t *all);
/* Collective: every rank's status agreed: the worst of them, and on every
 * rank the error message of the lowest rank with that status (its
 * grove_last_error(), prefixed "rank r: "), so any rank can report it.
 * Alone (NULL): s. */
GROVE_API grove_status grove_mpi_agree(const grove_mpi *mpi, grove_status s);
/* Rank r's block of n rows: first = r n / size, count = (r + 1) n / size
 * - first (alone: 0 and n). */
GROVE_API void grove_mpi_block(const grove_mpi *mpi, size_t n, size_t *first, size_t *count);
/* Collective: array holds n elements of elem bytes on every rank, each
 * rank's block (grove_mpi_block) filled; afterwards rank 0's holds every
 * rank's block. A no-op alone. */
GROVE_API grove_status grove_mpi_gather_blocks(const grove_mpi *mpi, void *array, size_t n, size_t elem);
/* Collective: rank 0's `bytes` bytes at data copied into every rank's
 * data. A no-op alone. */
GROVE_API grove_status grove_mpi_broadcast(const grove_mpi *mpi, void *data, size_t bytes);
/* Collective: each rank's `count` elements of `elem` bytes at mine, in
 * rank order, into all on rank 0, which has room for every rank's (the
 * counts' sum: grove_mpi_gather_int64 of them tells rank 0); all is not
 * touched on the other ranks. Alone (NULL): mine copied to all. */
GROVE_API grove_status grove_mpi_gatherv(const grove_mpi *mpi, const void *mine, size_t count, size_t elem,
                                         void *all);

/* ------------------------------------------------------------------------ */
/* Random numbers                                                            */
/* ------------------------------------------------------------------------ */

/* xoshiro256** seeded through splitmix64. The same seed gives the same
 * numbers on every platform and compiler: integers and uniforms are exact
 * bit operations, and normal/exponential variates use grove's own log and
 * sqrt only (no libm transcendental), evaluated without FMA contraction.
 * A generator is a plain value: copy it to fork, one per thread. */
typedef struct grove_rng {
    uint64_t s[4];
} grove_rng;

GROVE_API void grove_rng_seed(grove_rng *rng, uint64_t seed);
/* Next 64 random bits. */
GROVE_API uint64_t grove_rng_u64(grove_rng *rng);
/* Uniform double in [0, 1) with 53 random bits. */
GROVE_API double grove_rng_uniform(grove_rng *rng);
/* Uniform integer in [0, bound) without modulo bias; bound >= 1. */
GROVE_API uint64_t grove_rng_below(grove_rng *rng, uint64_t bound);
/* Standard normal variate (Marsaglia polar method). */
GROVE_API double grove_rng_normal(grove_rng *rng);
/* Exponential variate with rate 1 (mean 1). */
GROVE_API double grove_rng_exponential(grove_rng *rng);

/* ------------------------------------------------------------------------ */
/* Arrays and file I/O                                                       */
/* ------------------------------------------------------------------------ */

/* Every reader below (and grove_nbody_checkpoint_read) takes regular files
 * only: a directory, FIFO or device is refused at once, never waited on. */

/* An owned, C-ordered, native-endian array of 1 or 2 dimensions. A 1-D array
 * has ndim 1 and shape[1] == 1. Free with grove_array_free. */
typedef struct grove_array {
    void *data;
    grove_dtype dtype;
    size_t ndim;      /* 1 or 2 */
    size_t shape[2];
} grove_array;

/* Allocate a zero-filled array (ndim 1 when cols is 0, else 2). */
GROVE_API grove_status grove_array_create(grove_array *out, grove_dtype dtype,
                                          size_t rows, size_t cols);
/* Free the data and reset *array; accepts NULL and already-freed arrays. */
GROVE_API void grove_array_free(grove_array *array);
/* Number of elements (shape[0] * shape[1] for 2-D). */
GROVE_API size_t grove_array_count(const grove_array *array);
/* A grove_points view of a 2-D (or 1-D as d = 1) float array. */
GROVE_API grove_status grove_array_points(const grove_array *array, grove_points *out);

/* .npy read. Format versions 1.0, 2.0 and 3.0; dtypes float32, float64,
 * int32, int64 and bool, either byte order (converted to native); 0-D is
 * refused, 1-D and 2-D accepted; Fortran order converted to C order. The
 * header is parsed as a Python dict literal in any key order. The file size
 * must match the header exactly before anything is allocated, so a lying
 * header cannot cause a huge allocation. Peak memory: the array. */
GROVE_API grove_status grove_npy_read(const char *path, grove_array *out);
/* The same from memory; name is used in error messages. */
GROVE_API grove_status grove_npy_read_mem(const void *buf, size_t len, const char *name,
                                          grove_array *out);
/* .npy write (version 1.0, or 2.0 when the header needs it), native
 * little-endian data. Atomic: written to a temporary file in the same
 * folder and renamed, so a failure never leaves a partial file at path
 * (any name the folder takes: the temporary's name is cut to fit). A
 * character device or FIFO at path (/dev/null, a pipe) is written through,
 * never replaced (opening a FIFO waits for its reader; a signal that
 * interrupts the wait fails the call); a folder, block device or socket is
 * refused. */
GROVE_API grove_status grove_npy_write(const char *path, const grove_array *array);
/* The header grove_npy_write writes for a C-ordered array of rows x cols
 * (cols 0: 1-D), for writers that stream the data themselves: copied to
 * buf, returns its length (a multiple of 64; 128 for every int64 or float64
 * shape of up to two dimensions), or 0 when cap is too small. */
GROVE_API size_t grove_npy_header(grove_dtype dtype, size_t rows, size_t cols, char *buf, size_t cap);

/* CSV / whitespace-separated text to a float64 (n, d) array. Fields are
 * separated by commas and/or any blanks; lines end with LF, CRLF or CR;
 * a leading UTF-8 byte order mark is skipped; '#' starts a comment to the
 * end of the line; blank lines are skipped. The first non-comment line is
 * a header, and skipped, only when none of its fields reads as a number
 * (NaN and Inf count as numbers) and it names as many columns as the rows
 * below have (names are counted between commas, or between blanks when
 * the line has no comma); otherwise it is data, so a typo there ("1,2,3x")
 * is refused, not dropped. Every row must have the same number of fields.
 * NaN, Inf and values that overflow double are refused. Errors name
 * file:line:column. */
GROVE_API grove_status grove_csv_read(const char *path, grove_array *out);
GROVE_API grove_status grove_csv_read_mem(const char *buf, size_t len, const char *name,
                                          grove_array *out);

/* What a reader found besides the values. */
typedef struct grove_load_info {
    int text;           /* 1 when the values were read as CSV / whitespace text */
    size_t header_line; /* text: the 1-based line number of the header line that
                           was skipped, 0 when every line was data */
} grove_load_info;

/* grove_csv_read_mem, also filling *info (may be NULL; zeroed on failure). */
GROVE_API grove_status grove_csv_read_mem_info(const char *buf, size_t len, const char *name,
                                               grove_array *out, grove_load_info *info);

/* Raw little-endian float32 or float64 values, row-major, dims per row; the
 * file size must be a multiple of dims * element size. */
GROVE_API grove_status grove_raw_read(const char *path, grove_dtype dtype, size_t dims,
                                      grove_array *out);

/* Points from a file chosen by extension: .npy (float32/float64 kept, int
 * converted to float64), .csv/.txt/.tsv (float64), a snapshot's positions
 * (grove_points_load_types), anything else raw with raw_dtype and raw_dims
 * (raw_dims 0: refused with a message asking for --dims). The result is
 * 2-D, d >= 1, and every value is finite. */
GROVE_API grove_status grove_points_load(const char *path, size_t raw_dims,
                                         grove_dtype raw_dtype, grove_array *out);
/* grove_points_load, also filling *info (may be NULL; zeroed on failure):
 * info->text is 0 for .npy and raw files. */
GROVE_API grove_status grove_points_load_info(const char *path, size_t raw_dims, grove_dtype raw_dtype,
                                              grove_array *out, grove_load_info *info);
/* grove_points_load_info that reads snapshots too: .hdf5, .h5 or .hdf
 * files, and files of another suffix whose first bytes are an HDF5 or
 * Gadget-2 snapshot's (when raw_dims is 0), give the (n, 3) positions of
 * the particle types `types` chooses (bit t: type t; 0: every type), as
 * grove_gadget_read reads them, in the file's precision (no copy: the
 * array is the positions read). The others load every particle type. */
GROVE_API grove_status grove_points_load_types(const char *path, size_t raw_dims, grove_dtype raw_dtype,
                                               unsigned types, grove_array *out, grove_load_info *info);

/* ------------------------------------------------------------------------ */
/* Synthetic data                                                            */
/* ------------------------------------------------------------------------ */

typedef enum grove_gen_kind {
    GROVE_GEN_UNIFORM = 1,     /* uniform in [0, 1)^d */
    GROVE_GEN_NORMAL = 2,      /* standard normal in every coordinate */
    GROVE_GEN_EXPONENTIAL = 3, /* exponential with the given rate per coordinate */
    GROVE_GEN_BLOBS = 4        /* isotropic Gaussian blobs (sd 1) around centres
                                  uniform in [-10, 10)^d */
} grove_gen_kind;

typedef struct grove_gen_params {
    grove_gen_kind kind;
    size_t n, d;
    double rate;      /* exponential rate, > 0 (default 1) */
    size_t centers;   /* blobs: number of centres >= 1 (default 3) */
    uint64_t seed;    /* default 0 */
} grove_gen_params;

GROVE_API void grove_gen_params_init(grove_gen_params *params);
/* Fill out (n * d float64, row-major). The same params give the same values
 * on every platform and for any thread count. options: threads and the
 * cancel flag (read per block of rows; NULL = defaults). */
GROVE_API grove_status grove_gen(const grove_gen_params *params, double *out,
                                 const grove_options *options);

/* ------------------------------------------------------------------------ */
/* Ball tree (Erwin): perfect binary ball trees over batched point clouds    */
/* ------------------------------------------------------------------------ */

/*
 * Each batch with m points gets its own tree with L = max(0, ceil(log2 m) - 1)
 * levels below the root and 2^(L+1) output slots; trees are concatenated in
 * ascending batch id. A node's points are split along the dimension of
 * largest spread (max - min; ties to the lowest dimension): the left child
 * gets the floor(k/2) points with the smallest coordinate there (ties by
 * smaller row index), the right child the rest, down to single points. Leaf
 * pairs are written in order; a leaf holding one point is padded with a copy
 * of it in its second slot, where the mask is 0. Output indices are global
 * row indices into the input.
 *
 * Partition mode (levels >= 0): the same splits stop after `levels` levels
 * (or at single points); each batch contributes its m rows, no padding, in
 * leaf order, with rows inside a leaf in ascending row index.
 *
 * Rotation: the splits are decided on y = R x (R given, d x d row-major, in
 * double); indices still refer to the input rows and ball statistics are of
 * the unrotated points.
 *
 * Range: where a spread would overflow (float64 coordinates near the
 * largest doubles), the splits are decided on the points times the largest
 * power of two that keeps every spread finite (exact), so spreads compare
 * as in exact arithmetic; that costs a copy of n d doubles.
 *
 * Cost: O(m log m (d + c)) time per batch; extra memory O(n d) for working
 * copies of the coordinates and indices (56-84 bytes a point for float64 in
 * 3 dimensions, plus O(largest batch) per thread; docs/balltree.md has the
 * exact terms). Parallel across batches and inside a tree (top levels as
 * tasks); deterministic for any thread count.
 */

/* The ball tree's working memory kept between builds. A build given one
 * in its params takes its working memory from it, growing it when it is
 * too small, and leaves it there for the next build, so repeated builds
 * do not fault in fresh pages every time. One build at a time per
 * workspace: concurrent builds need their own. */
typedef struct grove_workspace grove_workspace;

/* An empty workspace, or NULL when out of memory. */
GROVE_API grove_workspace *grove_workspace_create(void);

/* Free a workspace and the memory it holds; NULL is ignored. */
GROVE_API void grove_workspace_free(grove_workspace *workspace);

/* Bytes the workspace holds now (0 for NULL). */
GROVE_API size_t grove_workspace_bytes(const grove_workspace *workspace);

#define GROVE_BALLTREE_FULL (-1)

typedef struct grove_balltree_params {
    const int64_t *batch;       /* NULL (one batch) or n ids >= 0, any order */
    int levels;                 /* GROVE_BALLTREE_FULL or partition levels >= 0 */
    const double *rotation;     /* NULL or d x d row-major matrix */
    grove_workspace *workspace; /* NULL = working memory allocated per build */
} grove_balltree_params;

GROVE_API void grove_balltree_params_init(grove_balltree_params *params);

typedef struct grove_balltree_batch {
    int64_t id;          /* batch id */
    size_t count;        /* points in the batch */
    size_t slot_offset;  /* first output slot of this batch's tree */
    size_t slots;        /* 2^(levels+1) in full mode, count in partition mode */
    int levels;          /* levels below the root (full) or levels split (partition) */
} grove_balltree_batch;

/* Output size: total slots and number of batches for n points. Validates the
 * batch ids (names the first negative one). */
GROVE_API grove_status grove_balltree_layout(size_t n, const grove_balltree_params *params,
                                             size_t *slots, size_t *batches);
/* Per-batch layout, ascending id, into caller memory of `batches` entries. */
GROVE_API grove_status grove_balltree_batches(size_t n, const grove_balltree_params *params,
                                              grove_balltree_batch *out);

/* Build: indices (slots int64) and mask (slots bytes, 1 = real point; may be
 * NULL) as laid out by grove_balltree_layout. */
GROVE_API grove_status grove_balltree_build(grove_points points,
                                            const grove_balltree_params *params,
                                            int64_t *indices, uint8_t *mask,
                                            const grove_options *options);

/* The number of threads grove_balltree_build would use for n points with
 * these params and options: the useful ones (a batch or a few thousand
 * points each) out of options->threads; and a one-off call (no workspace
 * in its params) on fewer than 2^17 points uses one, since starting a
 * thread team would cost about as much as the build. */
GROVE_API grove_status grove_balltree_threads(size_t n, const grove_balltree_params *params,
                                              const grove_options *options, int *threads);

/* Which of its builders grove_balltree_build runs for n points in d
 * dimensions with these params on this machine (the processor's vector
 * instructions, capped by GROVE_CPU, docs/api.md), as a static string:
 * "presorted", "packed", "packed+bits", "packed+quantized+bits",
 * "selecting", "selecting+bits" or "selecting+quantized+bits"
 * (docs/balltree.md says what each is). Every builder gives the same
 * output; this is for benchmarks and debugging. */
GROVE_API grove_status grove_balltree_builder(size_t n, size_t d, const grove_balltree_params *params,
                                              const char **builder);

/* Number of balls at tree level `level` (0 = root): sum over batches of
 * 2^level. Every batch must have at least `level` levels (full mode: level
 * <= L, the leaf-pair level; partition mode: level <= levels). */
GROVE_API grove_status grove_balltree_ball_count(size_t n, const grove_balltree_params *params,
                                                 int level, size_t *balls);

/* Centroid (balls x d, double) and radius (max distance from the centroid,
 * balls) of every node at `level`, batches in ascending id, nodes left to
 * right, padding excluded, computed in double on the unrotated points from
 * the output of grove_balltree_build with the same params. Range: summed
 * on the points times a power of two where squares would overflow or
 * underflow, and scaled back (exact); a radius beyond the largest double
 * is refused (GROVE_INVALID_ARGUMENT naming the ball). */
GROVE_API grove_status grove_balltree_ball_stats(grove_points points,
                                                 const grove_balltree_params *params,
                                                 const int64_t *indices, const uint8_t *mask,
                                                 int level, double *centers, double *radii,
                                                 const grove_options *options);

/* Verify a ball tree output independently of how it was built: every
 * batch's real slots hold each of its rows exactly once; padding is a copy
 * of the first slot of its leaf, in the second slot, with mask 0; and at
 * every node the left child holds floor(k/2) of its k real points, all
 * before the right child's in (coordinate, row) order along the node's
 * widest dimension. In partition mode the leaves' rows must be ascending.
 * GROVE_OK, or GROVE_INVALID_ARGUMENT naming the first violation (batch,
 * slot or node). Time O(n d log n); extra memory n bytes plus, with a
 * rotation, n d doubles. mask may be NULL only in partition mode. Runs on
 * the calling thread; options: its cancel flag, read as the scans go (GROVE_CANCELLED;
 * NULL = none). */
GROVE_API grove_status grove_balltree_check(grove_points points, const grove_balltree_params *params,
                                            const int64_t *indices, const uint8_t *mask,
                                            const grove_options *options);

/* A uniformly random (Haar) d x d rotation, determinant +1, row-major, from
 * a seed: the same on every platform. */
GROVE_API grove_status grove_rotation_random(size_t d, uint64_t seed, double *rotation);

/* ------------------------------------------------------------------------ */
/* Range join (exact epsilon similarity join) and k nearest neighbours       */
/* ------------------------------------------------------------------------ */

/*
 * A search index over n data points (RT-HiSS on the CPU): dimensions are
 * reordered by variance (highest first), a balanced kd-tree splits the
 * points into leaf groups of at most leaf_size points stored contiguously,
 * and each group keeps a tight bounding box in the leading index_dims
 * dimensions. A join expands those boxes by eps and walks the kd-tree
 * group against group to find candidate groups, then refines candidate
 * blocks with vectorised kernels that stop summing a pair's squared
 * distance as soon as the partial sum exceeds eps^2 (dimensions in variance
 * order make this happen early).
 *
 * Exactness: a pair (q, p) is reported when the squared Euclidean distance,
 * summed in the input dtype over the dimensions in the index's variance
 * order, is <= eps^2 computed in double and rounded to the dtype. That is
 * the exact answer for integer-valued data; otherwise a pair within one
 * rounding of the boundary may go either way, as in any floating-point
 * tool. Queries of the other dtype are converted to the index's dtype.
 *
 * Range: where squared distances (or the variances over n points) would
 * overflow or underflow, the index holds the points times one power of two
 * chosen from the data's largest |coordinate| (grove_join and grove_knn:
 * the data's and the queries'), eps is scaled alike and distances scaled
 * back, all exactly: results on 2^k x with 2^k eps are those on x and eps,
 * distances 2^k times. Distances below the resolution of the scaled
 * arithmetic compare as ties (0 against eps^2; kNN by row). Queries whose
 * squared distances to the data could overflow in the index's scale, and
 * kNN distances beyond the largest double, are refused
 * (GROVE_INVALID_ARGUMENT).
 *
 * A handle is immutable after build: queries on one handle may run from
 * several threads at once. Memory: a copy of the points (n d elements of
 * the input dtype) plus about 24 bytes per point for the tree.
 */
typedef struct grove_index grove_index;

/*
 * Periodic boxes (boxsize, as SciPy's cKDTree takes it): the space wraps
 * around in each periodic dimension j, and every distance is the minimum
 * image: per dimension t = |a_j - b_j|, replaced by L_j - t when
 * t > L_j / 2, summed as above (the same arithmetic as cKDTree's). A pair
 * is reported once, at its minimum-image distance, even when eps >= L / 2
 * lets several images of a point lie within eps; kNN ranks each point once
 * by that distance (k may exceed the points in half a box). Every
 * coordinate of a periodic dimension, data and queries alike, must lie in
 * [0, L_j): points outside are refused (GROVE_INVALID_ARGUMENT, naming the
 * row and dimension); L_j is rounded to the index's dtype for the
 * arithmetic. boxsize_count: 0 (boxsize NULL) = no box; 1 = the same length
 * in every dimension; d = one per dimension. A length of 0 leaves that
 * dimension unbounded; lengths must be finite and >= 0. The lengths are
 * copied at build. Above 16 dimensions a periodic index keys its groups on
 * the leading variance-order coordinates instead of principal axes
 * (projections do not commute with the wrap-around), so results stay
 * exact. Memory: 3 d values more than without a box.
 */
/* The most points a leaf group of an index holds (grove_index_params). */
#define GROVE_INDEX_LEAF_SIZE_MAX 4096

typedef struct grove_index_params {
    size_t leaf_size;     /* points per leaf group, 1..GROVE_INDEX_LEAF_SIZE_MAX; 0 = automatic (by d) */
    size_t index_dims;    /* leading dimensions in the group boxes, 1..d; 0 = automatic */
    const double *boxsize; /* periodic box lengths (boxsize_count of them), or NULL */
    size_t boxsize_count; /* 0 = not periodic; 1 = one length for every dimension; d = per dimension */
} grove_index_params;

GROVE_API void grove_index_params_init(grove_index_params *params);

/* Build an index over validated points (n >= 1, n <= 2^32 - 2). The points
 * are copied: the caller may free them afterwards. */
GROVE_API grove_status grove_index_create(grove_points data, const grove_index_params *params,
                                          const grove_options *options, grove_index **out);
GROVE_API void grove_index_free(grove_index *index);
/* Sizes of the indexed data, and the leaf size and index dimensions used. */
GROVE_API size_t grove_index_n(const grove_index *index);
GROVE_API size_t grove_index_d(const grove_index *index);
GROVE_API size_t grove_index_leaf_size(const grove_index *index);
GROVE_API size_t grove_index_dims(const grove_index *index);
/* The variance order: order[j] is the input dimension stored j-th
 * (d entries). */
GROVE_API void grove_index_dim_order(const grove_index *index, size_t *order);
/* The periodic box: boxsize[j] = the length of input dimension j, 0 where
 * it is not periodic (d entries; all 0 without a box). Returns whether the
 * index has a box. */
GROVE_API int grove_index_boxsize(const grove_index *index, double *boxsize);

typedef struct grove_join_params {
    double eps;       /* search radius >= 0, inclusive; 0 finds exact duplicates */
    int exclude_self; /* self-join only: leave out the pair (i, i) */
    int distances;    /* grove_join / grove_join_stream: also produce distances */
} grove_join_params;

GROVE_API void grove_join_params_init(grove_join_params *params);

/* Queries: NULL means a self-join (the queries are the indexed points, in
 * row order); otherwise a semi-join with the given points (same d).
 * exclude_self is refused for a semi-join. */

/* Count pass: counts[q] = number of indexed rows within eps of query q
 * (nq entries). Returns the total in *pairs when pairs is non-NULL. */
GROVE_API grove_status grove_join_count(const grove_index *index, const grove_points *queries,
                                        const grove_join_params *params, int64_t *counts, int64_t *pairs,
                                        const grove_options *options);

/* Fill pass: offsets[0] = 0 and offsets[q + 1] = offsets[q] + counts[q]
 * (nq + 1 entries, e.g. from grove_join_count). Writes query q's neighbour
 * rows, ascending, to indices[offsets[q] .. offsets[q + 1]) and their
 * Euclidean distances (square roots of the squared distances) to distances
 * when non-NULL. Offsets that disagree with the true counts are refused
 * (GROVE_INVALID_ARGUMENT, naming the query) without writing past
 * offsets[nq]. */
GROVE_API grove_status grove_join_fill(const grove_index *index, const grove_points *queries,
                                       const grove_join_params *params, const int64_t *offsets,
                                       int64_t *indices, double *distances, const grove_options *options);

/* A batch of consecutive queries [query_begin, query_end) and their result
 * in CSR form: offsets has query_end - query_begin + 1 entries starting at
 * 0; indices and distances (NULL unless params->distances) hold
 * offsets[query_end - query_begin] entries. pairs_before is the number of
 * pairs in earlier batches. The arrays are valid during the callback only. */
typedef struct grove_join_batch {
    size_t query_begin, query_end;
    const int64_t *offsets;
    const int64_t *indices;
    const double *distances;
    int64_t pairs_before;
    int64_t pairs_total; /* pairs of the whole result (from the count pass), the
                            same in every batch */
} grove_join_batch;

/* Return 0 to continue; nonzero stops the join with GROVE_CANCELLED. */
typedef int (*grove_join_batch_fn)(void *user, const grove_join_batch *batch);

/* The whole result, streamed: one count pass, then batches of queries in
 * order. Between the two, fn is called once with an empty batch
 * (query_begin = query_end = 0, offsets = {0}, no pairs) carrying
 * pairs_total, so a caller can refuse a result it has no room for before
 * any pair is filled (with no queries, that empty batch is the only one).
 * Each batch is sized from the counts so the counts (8 bytes per query) and a
 * batch's offsets, indices and distances fit in options->memory_budget
 * bytes together (0 = one batch). A single query whose result alone
 * exceeds what is left is refused (GROVE_OVER_BUDGET), naming it. Peak
 * memory: the index, the queries' grouping for a semi-join, the budget,
 * and per thread the candidates of one group (about 16 + 8 d bytes each). */
GROVE_API grove_status grove_join_stream(const grove_index *index, const grove_points *queries,
                                         const grove_join_params *params, grove_join_batch_fn fn, void *user,
                                         const grove_options *options);

/* A whole result in memory allocated by grove; free with
 * grove_join_result_free. */
typedef struct grove_join_result {
    size_t nq;          /* queries */
    int64_t pairs;      /* offsets[nq] */
    int64_t *offsets;   /* nq + 1 */
    int64_t *indices;   /* pairs */
    double *distances;  /* pairs, or NULL unless params->distances */
} grove_join_result;

/* The whole result on an index in one call: the same CSR, byte for byte,
 * as grove_join_count followed by grove_join_fill, in memory allocated by
 * grove (result is zeroed first and on failure). Above 16 dimensions a
 * self-join's count keeps its hits (up to 1 GiB of them, 16 bytes each,
 * or a quarter of options->memory_budget) so the fill does not search
 * again. Refused with GROVE_OVER_BUDGET (stating the size) when
 * options->memory_budget is set and the result would exceed it: use
 * grove_join_stream then. */
GROVE_API grove_status grove_join_search(const grove_index *index, const grove_points *queries,
                                         const grove_join_params *params, grove_join_result *result,
                                         const grove_options *options);

/* Build an index on data (index_params, e.g. a periodic box; NULL =
 * defaults) and grove_join_search it. The index is built for the data and
 * the queries together, so queries beyond the range of an index built on
 * the data alone are answered too.
 *
 * Distributed (options->mpi with more than one rank; docs/mpi.md): every
 * rank calls it with its part of the global data, rows offset_r ..
 * offset_r + n_r - 1 for rank r in rank order (and likewise its part of
 * the global queries for a semi-join; NULL on every rank for a
 * self-join); any part may be empty. Each rank gets the CSR rows of its
 * own queries (nq = its part's rows) with GLOBAL data rows, the same bytes
 * as the rows of the single-process call on the whole input. Not with a
 * periodic box or queries of another dtype than the data's
 * (GROVE_UNSUPPORTED); memory_budget applies to each rank's results.
 * The index-based calls above run on one process (grove_index_create
 * refuses several ranks). */
GROVE_API grove_status grove_join(grove_points data, const grove_points *queries,
                                  const grove_index_params *index_params, const grove_join_params *params,
                                  grove_join_result *result, const grove_options *options);
GROVE_API void grove_join_result_free(grove_join_result *result);
/* Collective, after a distributed grove_join: rank 0's result becomes the
 * whole CSR (every rank's rows in rank order, the single-process result);
 * the others' results are freed (zeroed). A no-op alone. Memory on rank 0:
 * the whole result. */
GROVE_API grove_status grove_join_result_gather(grove_join_result *result, const grove_options *options);

/* What a kNN query asks for (grove_knn_search, grove_knn,
 * grove_core_distances). */
typedef struct grove_knn_params {
    size_t k;         /* neighbours per query, >= 1 (default 1) */
    int exclude_self; /* self-queries only: the query point itself is not
                         one of its neighbours (default 0) */
} grove_knn_params;

GROVE_API void grove_knn_params_init(grove_knn_params *params);

/* Exact k nearest neighbours of each query among the indexed points, k =
 * params->k: indices[q k + r] (input rows) and distances[q k + r]
 * (Euclidean, may be NULL), r-th nearest first, ties broken by the smaller
 * row. Self-queries (queries NULL) include the point itself unless
 * params->exclude_self (refused for other queries); k must be between 1
 * and the number of candidates (n, or n - 1 when excluding). The
 * grove_knn_params struct is defined with grove_core_distances above. */
GROVE_API grove_status grove_knn_search(const grove_index *index, const grove_points *queries,
                                        const grove_knn_params *params, int64_t *indices, double *distances,
                                        const grove_options *options);
/* The same, building (and freeing) an index with index_params (NULL =
 * defaults). */
GROVE_API grove_status grove_knn(grove_points data, const grove_points *queries,
                                 const grove_index_params *index_params, const grove_knn_params *params,
                                 int64_t *indices, double *distances, const grove_options *options);

/* ------------------------------------------------------------------------ */
/* EMST: Euclidean minimum spanning tree (mutual reachability)               */
/* ------------------------------------------------------------------------ */

/*
 * Euclidean minimum spanning tree by single-tree Borůvka (ArborX): every
 * point searches an index (a linear BVH over Morton codes for d <= 3, a
 * balanced kd-tree above) for its nearest point in another component;
 * subtrees whose points all share the searcher's component are skipped, and
 * per-component upper bounds shrink the search radius.
 *
 * Mutual reachability: with min_samples K > 1 the edge weight is
 * max(core(a), core(b), |a - b|), core(x) being the distance from x to its
 * K-th nearest neighbour counting x itself (scikit-learn's and the HDBSCAN*
 * paper's min_samples; the `hdbscan` Python library's min_samples is K - 1).
 * K = 1 gives the plain EMST.
 *
 * Edges are ordered by (weight, smaller row, larger row), a strict total
 * order, so the tree is unique even with equal distances and duplicate
 * points, and the result is bit-identical for any thread count. Distances
 * are computed in the input dtype (squared, summed over axes in order) and
 * the weights are their square roots in double.
 *
 * Range: where squared distances would overflow or underflow (float64
 * coordinates beyond about 1e153 or below about 7e-139, float32 beyond
 * about 2e18 or below about 9e-13), the points are scaled by one power of
 * two chosen from the largest |coordinate| and the weights scaled back,
 * both exactly: the output on 2^k x is 2^k times the output on x, and
 * ordinary data are not scaled. Distances below the resolution of the
 * scaled arithmetic (points far smaller than the largest) compare as
 * ties, broken by row. A weight or core distance beyond the largest double
 * is refused (GROVE_INVALID_ARGUMENT, naming it); HDBSCAN* works in the
 * scaled units and needs no such refusal.
 *
 * Cost: O(n log n) expected for low-dimensional data; about 100 bytes per
 * point of working memory plus the index (see docs/emst.md).
 */
typedef struct grove_emst_params {
    size_t min_samples; /* K >= 1 (default 1 = Euclidean); K <= n */
} grove_emst_params;

GROVE_API void grove_emst_params_init(grove_emst_params *params);

/* The n - 1 edges of the (mutual-reachability) MST: edges[2i] < edges[2i+1]
 * are input rows, weights[i] the edge weight, sorted by (weight, u, v). For
 * n = 0 or 1 there are no edges and nothing is written (the buffers may be
 * NULL). Non-finite coordinates are refused naming the row and column; so is
 * K > n. n is limited to 2^32 - 2. */
GROVE_API grove_status grove_emst(grove_points points, const grove_emst_params *params, int64_t *edges,
                                  double *weights, const grove_options *options);

/* Core distances: core[row] = distance to the k-th nearest neighbour of
 * row counting itself (k = 1 gives 0), 1 <= k <= n, or with exclude_self
 * to the k-th nearest other row (the (k + 1)-th counting itself),
 * 1 <= k <= n - 1. K = k (+ 1 with exclude_self) is the EMST's and
 * HDBSCAN*'s min_samples. */
GROVE_API grove_status grove_core_distances(grove_points points, const grove_knn_params *params, double *core,
                                            const grove_options *options);

/* ------------------------------------------------------------------------ */
/* Clustering: DBSCAN                                                        */
/* ------------------------------------------------------------------------ */

/*
 * DBSCAN (Ester et al. 1996) labelled exactly as scikit-learn's
 * sklearn.cluster.DBSCAN labels it, on the join's index (grove_index_params:
 * leaf size, index dimensions, a periodic box) and its exactness rule (a pair is within
 * eps when its squared distance, summed in the input dtype, is <= eps^2:
 * see the join above; the boundary is inclusive, as scikit-learn's).
 *
 * A point is core when its eps-neighbourhood, the point itself included,
 * holds at least min_samples points, or with sample_weight at least
 * min_samples of weight (any finite weights, zero and negative too, as
 * scikit-learn allows: the neighbourhood's weights are summed with
 * compensation in an order the index fixes, so only a sum within rounding
 * of min_samples could be classified otherwise than by scikit-learn's
 * NumPy sum). Clusters are the connected components of core points under
 * the eps-pairs, numbered 0, 1, ... in the order of their lowest-index
 * core point; a non-core point within eps of a core point is a border
 * point and takes the smallest cluster number among its core neighbours'
 * (scikit-learn expands clusters in that order and a border point keeps
 * the first cluster that reaches it); the rest are noise (-1). Labels are
 * the same for any thread count.
 *
 * Memory: never the neighbourhoods. Three passes of the join (counts,
 * unions of core pairs by a concurrent union-find inside the search, the
 * non-core points' neighbourhoods) over the index (a copy of the points
 * plus about 24 bytes a point) and a working memory of 8 bytes a point
 * (16 with sample_weight), plus 1 when core is NULL, plus per thread the
 * candidates of one index group (as grove_join_stream). When
 * options->memory_budget is set and that working memory exceeds it, the
 * call is refused (GROVE_OVER_BUDGET) before the index is built. Time: the
 * join's, about three join passes.
 *
 * Distributed (options->mpi with more than one rank; docs/mpi.md): every
 * rank passes its part of the rows in rank order (as grove_join) and gets
 * its rows' labels and core flags, those of the single-process call, and
 * the global counts. The neighbourhoods come from the distributed join and
 * are held (8 bytes a pair per rank); every rank holds n core flags and n
 * labels (9 bytes a point); sample_weight and memory_budget's refusal are
 * for one process only (GROVE_UNSUPPORTED with weights).
 */
typedef struct grove_dbscan_params {
    double eps;                  /* neighbourhood radius >= 0, inclusive (default 0.5) */
    size_t min_samples;          /* >= 1: points (or weight) for a core point,
                                    itself included (default 5) */
    const double *sample_weight; /* n finite weights, or NULL (each point weighs 1) */
} grove_dbscan_params;

GROVE_API void grove_dbscan_params_init(grove_dbscan_params *params);

typedef struct grove_dbscan_counts {
    size_t clusters, core, noise;
} grove_dbscan_counts;

/* Cluster data (validated: finite, n <= 2^32 - 2; n = 0 gives nothing):
 * labels[i] (n entries, required) the cluster of row i or -1 for noise;
 * core[i] (n entries, or NULL) 1 for core points, else 0; counts (or
 * NULL) the number of clusters, core points and noise points.
 * index_params NULL = defaults. */
GROVE_API grove_status grove_dbscan(grove_points data, const grove_index_params *index_params,
                                    const grove_dbscan_params *params, int64_t *labels, uint8_t *core,
                                    grove_dbscan_counts *counts, const grove_options *options);

/* ------------------------------------------------------------------------ */
/* Clustering: friends-of-friends groups (halo finding on the join's index)  */
/* ------------------------------------------------------------------------ */

/*
 * Friends-of-friends: two particles are friends when their distance is at
 * most the linking length (the join's inclusive rule and arithmetic: see
 * "Exactness" above), and a group is a connected component of the friend
 * graph. The search is the self-join on a grove_index with a union-find
 * fed from inside it, pair by pair, so no pair list is ever held.
 *
 * Numbering: groups of at least min_members particles get ids 0, 1, ... by
 * decreasing size, equal sizes by their lowest member index; particles of
 * smaller groups get -1. The same input gives the same ids whatever the
 * thread count.
 *
 * Catalogue (optional), one row per numbered group, computed in double
 * from the caller's coordinates, over the members in ascending index order:
 *   members     number of particles
 *   first       lowest member index
 *   mass        sum of the members' masses (1 each without masses)
 *   center      centre of mass: ref + sum m_i (x_i - ref) / mass, where ref
 *               is the first member; in a periodic box each x_i - ref is
 *               its minimum image in [-L/2, L/2) and the centre is wrapped
 *               into [0, L)
 *   velocity    (with velocities) mass-weighted mean velocity
 *   dispersion  (with velocities) sqrt(sum m_i |v_i - velocity|^2 / mass),
 *               |.| over all d components: the d-dimensional rms velocity
 *               about the mean (divide by sqrt(d) for a 1-D dispersion)
 *   radius      largest distance from the centre to a member (minimum
 *               image in a periodic box)
 * A periodic group wider than half the box in some dimension has no
 * unique centre; the one above is then the reference member's image.
 *
 * Memory: the index (a copy of the points plus about 24 bytes per point),
 * 4 bytes per point of union-find, the caller's group ids; with a
 * catalogue also 4 bytes per grouped particle and the rows. O(n) in all:
 * no pairs are stored, whatever the linking length. Time: the self-join's
 * search (without its output) plus O(n alpha(n)) for the union-find.
 *
 * Distributed (options->mpi with more than one rank; docs/mpi.md): every
 * rank passes its part of the rows in rank order (as grove_join), with
 * those rows' masses and velocities (given on every rank with rows, or on
 * none), and gets its rows' group ids, the global group count and, when
 * catalogue is non-NULL (on every rank), the whole catalogue with global
 * `first` rows: the single-process results, bit for bit. Unlike the
 * single-process call, the friend pairs are held (the distributed join's
 * rows, 8 bytes a pair per rank), and every rank holds 4 bytes a point of
 * union-find; rank 0 holds 12 more. n < 2^31; no periodic box
 * (GROVE_UNSUPPORTED).
 */
typedef struct grove_fof_params {
    double linking_length;    /* >= 0, in the points' units */
    size_t min_members;       /* smallest group given an id, >= 1 (default 20) */
    grove_index_params index; /* the index's leaf size and index dimensions */
} grove_fof_params;

GROVE_API void grove_fof_params_init(grove_fof_params *params);

/* The catalogue of a grove_fof call, arrays allocated by grove (free with
 * grove_fof_catalogue_free); row g describes group g. */
typedef struct grove_fof_catalogue {
    size_t groups, d;
    int64_t *members;   /* groups */
    int64_t *first;     /* groups */
    double *mass;       /* groups */
    double *center;     /* groups x d */
    double *velocity;   /* groups x d, or NULL without velocities */
    double *dispersion; /* groups, or NULL without velocities */
    double *radius;     /* groups */
} grove_fof_catalogue;

/* Groups of validated points (n <= 2^32 - 2): group[i] for each particle
 * (n entries, caller memory), the number of numbered groups in *groups
 * (may be NULL), and the catalogue when catalogue is non-NULL. mass: n
 * finite values > 0, or NULL (unit masses); velocity: n x d float64
 * row-major, finite, or NULL. Both are used by the catalogue only. */
GROVE_API grove_status grove_fof(grove_points points, const double *mass, const double *velocity,
                                 const grove_fof_params *params, int64_t *group, size_t *groups,
                                 grove_fof_catalogue *catalogue, const grove_options *options);
GROVE_API void grove_fof_catalogue_free(grove_fof_catalogue *catalogue);

/* The mean interparticle separation, the unit of the linking length b in
 * FoF practice (b = 0.2 is the customary choice): (V / n)^(1/d), V the
 * product over the dimensions of the periodic length, or where there is
 * none (boxsize NULL, or a length of 0) of the extent of the points
 * (largest minus smallest coordinate). boxsize and boxsize_count as in
 * grove_index_params. Refused when V is 0 (the points lie in a
 * lower-dimensional set) or n is 0. */
GROVE_API grove_status grove_fof_mean_separation(grove_points points, const double *boxsize, size_t boxsize_count,
                                                 double *separation);

/* ------------------------------------------------------------------------ */
/* Clustering: HDBSCAN*                                                      */
/* ------------------------------------------------------------------------ */

typedef enum grove_hdbscan_selection {
    GROVE_HDBSCAN_EOM = 0, /* excess of mass (the default) */
    GROVE_HDBSCAN_LEAF = 1 /* the leaves of the condensed tree */
} grove_hdbscan_selection;

/* How merges at equal weights build the hierarchy (docs/emst.md, "Ties"). */
typedef enum grove_hdbscan_ties {
    /* One edge at a time in (weight, u, v) order, as the `hdbscan` library
     * and scikit-learn do in their own (unstable) order (the default). */
    GROVE_HDBSCAN_TIES_ORDERED = 0,
    /* Campello et al. (2015): all edges of one weight are removed at once,
     * so a component may split into more than two children at one lambda;
     * the result depends on no MST choice and no row order. */
    GROVE_HDBSCAN_TIES_SIMULTANEOUS = 1
} grove_hdbscan_ties;

/* HDBSCAN* parameters, with the `hdbscan` library's names in brackets.
 * Every default reproduces grove's earlier results bit for bit. */
typedef struct grove_hdbscan_params {
    size_t min_cluster_size;          /* >= 2 (default 5) */
    size_t min_samples;               /* K counting the point itself, 1 <= K <= n;
                                         0 (default) = min_cluster_size */
    grove_hdbscan_selection selection;/* default GROVE_HDBSCAN_EOM */
    double epsilon;                   /* cluster_selection_epsilon >= 0 (default 0) */
    int allow_single_cluster;         /* nonzero: the root may be selected (default 0) */
    size_t max_cluster_size;          /* EOM: clusters of more points are not selected
                                         (their children are); 0 (default) = no limit */
    double epsilon_max;               /* cluster_selection_epsilon_max >= epsilon: EOM
                                         selects no cluster born at a distance above it
                                         (default INFINITY) */
    double persistence;               /* cluster_selection_persistence >= 0 (default 0):
                                         splits whose smaller side lives less than this
                                         (in lambda) are merged back first */
    double alpha;                     /* > 0 (default 1): mutual reachability is
                                         max(core(a), core(b), |a - b| / alpha) */
    int match_reference_implementation; /* nonzero: as the library's flag of that name:
                                         K - 1 for the core distances (at least 2),
                                         min_cluster_size + 1, and a point is labelled
                                         only if it leaves its cluster above the
                                         cluster's birth lambda (default 0) */
    grove_hdbscan_ties ties;          /* default GROVE_HDBSCAN_TIES_ORDERED */
    int prediction_data;              /* nonzero: a model keeps what prediction needs
                                         (grove_hdbscan_model_create; default 0) */
} grove_hdbscan_params;

GROVE_API void grove_hdbscan_params_init(grove_hdbscan_params *params);

/* HDBSCAN* clustering, matching the `hdbscan` Python library with
 * min_samples = K - 1: the mutual-reachability MST, its single-linkage
 * hierarchy, the condensed tree (clusters of at least min_cluster_size
 * points), cluster selection, then per row: labels (0..clusters-1 in the
 * order of the condensed tree, -1 = noise), membership probabilities in
 * [0, 1] (0 for noise) and GLOSH outlier scores in [0, 1]. probabilities,
 * outlier_scores and clusters may be NULL. n = 0 writes nothing; n = 1 is
 * one noise point. The same as grove_hdbscan_model_create followed by
 * grove_hdbscan_model_labels (params->prediction_data is ignored). Peak
 * memory: grove_emst's (its output, the MST, is kept: 24 bytes per point),
 * then about 130 + 64 / min_cluster_size bytes per point while the
 * hierarchy is built (docs/emst.md). */
GROVE_API grove_status grove_hdbscan(grove_points points, const grove_hdbscan_params *params, int64_t *labels,
                                     double *probabilities, double *outlier_scores, size_t *clusters,
                                     const grove_options *options);

/* The same from a given spanning tree of n points (n - 1 edges of rows in
 * [0, n), any order, finite weights >= 0), e.g. grove_emst's output;
 * params->min_samples and params->alpha are not used. */
GROVE_API grove_status grove_hdbscan_from_mst(size_t n, const int64_t *edges, const double *weights,
                                              const grove_hdbscan_params *params, int64_t *labels,
                                              double *probabilities, double *outlier_scores, size_t *clusters);

/*
 * A fitted HDBSCAN* model: everything the `hdbscan` library's HDBSCAN
 * object exposes for a Euclidean metric, and prediction for new points.
 *
 * Ownership: create with grove_hdbscan_model_create (or _create_from_mst),
 * free with grove_hdbscan_model_free (NULL is ignored). The model copies
 * what it needs; the caller's points and edges may be freed afterwards.
 * Accessors copy into caller memory of the stated size.
 * Thread safety: the handle is immutable after creation; any number of
 * threads may call accessors and predictions on one model at once.
 * Range: as grove_emst, the model works on points scaled by a power of two
 * where needed; what it returns is in the caller's units (docs/emst.md).
 * Memory: about 90 bytes per point (MST 24, condensed tree 32 per row,
 * labels, probabilities and scores 24, each point's row 8) plus small
 * per-cluster and per-exemplar tables; with prediction_data add the
 * training points as float64 (8 d), the index over them (about
 * 4 + 0.36 (16 + 16 d) at d <= 3, 0.26 (16 + 16 d) above), their core
 * distances (8) and the exemplars' coordinates (8 d each).
 */
typedef struct grove_hdbscan_model grove_hdbscan_model;

/* Fit on points (finite, float32 or float64; n <= 2^32 - 2) with params
 * (NULL = defaults); *out is NULL on failure. Time: grove_emst's plus
 * O(n log n); with prediction_data an index build and a kNN pass with
 * K - 1 neighbours. Peak memory: as grove_hdbscan's, then the model. */
GROVE_API grove_status grove_hdbscan_model_create(grove_points points, const grove_hdbscan_params *params,
                                                  const grove_options *options, grove_hdbscan_model **out);

/* Fit on a given spanning tree (as grove_hdbscan_from_mst). Such a model
 * has no points: prediction and exemplar coordinates are unavailable. */
GROVE_API grove_status grove_hdbscan_model_create_from_mst(size_t n, const int64_t *edges, const double *weights,
                                                           const grove_hdbscan_params *params,
                                                           const grove_options *options,
                                                           grove_hdbscan_model **out);

GROVE_API void grove_hdbscan_model_free(grove_hdbscan_model *model);

/* Sizes: points, dimensions (0 for a model from an MST), selected clusters
 * (the labels are 0 .. clusters - 1), condensed-tree rows, and exemplars in
 * all (grove_hdbscan_model_exemplars). 0 for a NULL model. */
GROVE_API size_t grove_hdbscan_model_n(const grove_hdbscan_model *model);
GROVE_API size_t grove_hdbscan_model_d(const grove_hdbscan_model *model);
GROVE_API size_t grove_hdbscan_model_clusters(const grove_hdbscan_model *model);
GROVE_API size_t grove_hdbscan_model_condensed_rows(const grove_hdbscan_model *model);
GROVE_API size_t grove_hdbscan_model_exemplar_count(const grove_hdbscan_model *model);

/* The parameters the model was fitted with (min_samples resolved to K). */
GROVE_API grove_status grove_hdbscan_model_params(const grove_hdbscan_model *model, grove_hdbscan_params *params);

/* Per point (n each; any may be NULL): labels_, probabilities_ and
 * outlier_scores_ (GLOSH), as grove_hdbscan returns them. */
GROVE_API grove_status grove_hdbscan_model_labels(const grove_hdbscan_model *model, int64_t *labels,
                                                  double *probabilities, double *outlier_scores);

/* The MST in the order the hierarchy merged it, (weight, u, v), u < v:
 * edges 2 (n - 1) int64, weights n - 1 (the library's minimum_spanning_tree_
 * holds the same edges; with alpha != 1 the weights are
 * max(core, core, distance / alpha)). Either may be NULL. */
GROVE_API grove_status grove_hdbscan_model_mst(const grove_hdbscan_model *model, int64_t *edges, double *weights);

/* single_linkage_tree_ in scipy's format: (n - 1) x 4 doubles, row i =
 * (left, right, distance, size), merge i making node n + i. Rebuilt from
 * the MST in O(n) with 32 bytes per point of scratch. */
GROVE_API grove_status grove_hdbscan_model_single_linkage(const grove_hdbscan_model *model, double *tree);

/* condensed_tree_ (its to_numpy()): rows of (parent, child, lambda_val,
 * child_size) in the library's order and numbering (points 0 .. n - 1,
 * clusters n (the root) upwards, a parent's id below its children's);
 * grove_hdbscan_model_condensed_rows entries each; any may be NULL. */
GROVE_API grove_status grove_hdbscan_model_condensed_tree(const grove_hdbscan_model *model, int64_t *parent,
                                                          int64_t *child, double *lambda_val,
                                                          int64_t *child_size);

/* Per label (clusters entries): the condensed-tree id of the selected
 * cluster; and the id the library's prediction code uses for it
 * (condensed_tree_._select_clusters(): the lowest parent id among the
 * label's points, which is the selected cluster unless none of its points
 * leaves it directly). Either may be NULL. */
GROVE_API grove_status grove_hdbscan_model_selected_clusters(const grove_hdbscan_model *model, int64_t *selected,
                                                             int64_t *prediction_clusters);

/* cluster_persistence_: per label, stability / (points labelled x the
 * tree's largest lambda), 1 where that is infinite or zero. */
GROVE_API grove_status grove_hdbscan_model_persistence(const grove_hdbscan_model *model, double *persistence);

/* exemplars_ as CSR: label c's exemplars are the rows
 * rows[offsets[c] .. offsets[c + 1]) (offsets: clusters + 1 entries,
 * rows: grove_hdbscan_model_exemplar_count entries): the points leaving
 * each leaf below the label's prediction cluster at the leaf's largest
 * lambda, leaves depth first, rows in condensed-tree order. */
GROVE_API grove_status grove_hdbscan_model_exemplars(const grove_hdbscan_model *model, int64_t *offsets,
                                                     int64_t *rows);

/* relative_validity_: the library's DBCV approximation from the MST and
 * the labels (0 when there is no cluster). O(n). */
GROVE_API grove_status grove_hdbscan_model_relative_validity(const grove_hdbscan_model *model, double *score);

/* dbscan_clustering(cut_distance, min_cluster_size) (the library's
 * SingleLinkageTree.get_clusters): components of the MST edges with weight
 * < cut_distance; components of fewer than min_cluster_size points (>= 1)
 * are noise (-1), the others labelled 0, 1, ... in the library's order.
 * labels: n entries. O(n) time and about 80 bytes per point of scratch. */
GROVE_API grove_status grove_hdbscan_model_dbscan(const grove_hdbscan_model *model, double cut_distance,
                                                  size_t min_cluster_size, int64_t *labels);

/*
 * Prediction, following the `hdbscan` library's prediction.py step by step
 * (docs/emst.md, "Prediction"). They need a model created from points with
 * params.prediction_data set, queries (finite, float32 or float64, the
 * model's d) are taken in float64, and the library's min_samples is K - 1:
 * the training points' core distances count K - 1 neighbours (themselves
 * included), a query's core distance is its K-th nearest training point,
 * and its nearest mutual-reachability neighbour is sought among its
 * 2 (K - 1) nearest (at least 1), which must not exceed n. Ties between
 * equally near training points go to the smaller row (the library: its
 * KDTree's order). Queries run in parallel (OpenMP, options->threads), in
 * an order that keeps nearby queries together (12 bytes per query);
 * results are bit-identical for any thread count.
 */

/* approximate_predict: labels (nq, -1 = noise) and probabilities (nq, may
 * be NULL) of new points. With no cluster in the condensed tree every
 * query is noise with probability 0. Time O(nq K log n); memory 12 bytes
 * per query and O(K) per thread. */
GROVE_API grove_status grove_hdbscan_approximate_predict(const grove_hdbscan_model *model, grove_points queries,
                                                         int64_t *labels, double *probabilities,
                                                         const grove_options *options);

/* approximate_predict_scores: GLOSH outlier scores of new points (nq);
 * 1 for every query when the condensed tree has no cluster. */
GROVE_API grove_status grove_hdbscan_approximate_predict_scores(const grove_hdbscan_model *model,
                                                                grove_points queries, double *scores,
                                                                const grove_options *options);

/* membership_vector: soft clustering of new points, nq x clusters float64
 * row-major (nothing is written when clusters is 0; the library raises).
 * Each row is the distance part (inverse distance to each cluster's
 * nearest exemplar, sqrt) times the outlier part (softmax of lambda ratios
 * at the merge heights, squared), normalised, times the probability of
 * being in some cluster: a row sums to that probability, at most 1. Time
 * O(nq (K log n + clusters (log depth + log E))) for E exemplars a
 * cluster; memory 12 bytes per query and O(K + clusters) per thread. */
GROVE_API grove_status grove_hdbscan_membership_vector(const grove_hdbscan_model *model, grove_points queries,
                                                       double *membership, const grove_options *options);

/* all_points_membership_vectors: the same for the training points from
 * their place in the condensed tree, n x clusters float64 row-major
 * (nothing when clusters is 0; the library returns zeros of shape (n,)).
 * Streams over the points with the output as its only large buffer: peak
 * memory is the output plus O(clusters + E) per thread (no n x clusters
 * intermediate). Time O(n clusters (log depth + log E)). */
GROVE_API grove_status grove_hdbscan_all_points_membership_vectors(const grove_hdbscan_model *model,
                                                                   double *membership,
                                                                   const grove_options *options);

/* ------------------------------------------------------------------------ */
/* Gravity and N-body                                                        */
/* ------------------------------------------------------------------------ */

/*
 * Barnes-Hut gravity on a sparse octree (Bonsai): particles sorted along a
 * 63-bit Morton curve, cells built level by level with at most leaf_size
 * particles per leaf, monopole + quadrupole moments about each cell's centre
 * of mass (in double). Groups of at most group_size particles, consecutive
 * in key order, walk the tree together; a cell with tight box size l and
 * offset s between its box centre and centre of mass is accepted for a group
 * when the distance from the group's box to the centre of mass exceeds
 * l / theta + s; cells of one particle are always opened. theta = 0 is
 * plain direct summation, in double.
 *
 * Units: G is a parameter (default 1), and any unit system gives the same
 * relative accuracy: every evaluation computes with positions and the
 * softening scaled by a power of two near the system's size and masses by
 * one near the largest mass, and multiplies G and those powers back at the
 * end, so lengths x lambda, masses x mu (softening x lambda) give
 * accelerations mu / lambda^2 times the unscaled ones to rounding, bit for
 * bit for powers of two. Results no double can hold are refused
 * (GROVE_INVALID_ARGUMENT): before computing when the potentials are
 * asked for and bound to overflow (G m / (4 L) >= 2^1024, m the largest
 * mass, L half the system's size), else after it, naming the particle
 * whose acceleration or potential overflowed. Plummer softening: a pair at distance
 * r interacts as -G m / sqrt(r^2 + eps^2); a particle does not act on
 * itself, and with eps = 0 exactly coincident particles do not act on each
 * other. Tree and moments are in double; for theta > 0 the particle-particle
 * and particle-cell terms are evaluated in single precision relative to the
 * group's centre, as in Bonsai (float rounding is far below the tree's
 * error), and each particle's sums are added in double. Results are
 * bit-identical for any thread count (the kernels may round differently
 * between CPUs: AVX2 or portable code). Accuracy (median
 * relative acceleration error on a Plummer sphere with softening 0.01:
 * 5e-4 at theta 0.75, 1.1e-4 at 0.5; theta 0 equals the direct sum to
 * rounding): see docs/nbody.md.
 */
typedef struct grove_gravity_params {
    double theta;      /* opening angle, 0 <= theta <= 1 (default 0.75) */
    double softening;  /* Plummer softening length eps >= 0 (default 0) */
    double G;          /* gravitational constant > 0 (default 1) */
    size_t leaf_size;  /* NLEAF: most particles per leaf, 1..64 (default 16) */
    size_t group_size; /* NCRIT: most particles per group, 1..256 (default 64) */
} grove_gravity_params;

GROVE_API void grove_gravity_params_init(grove_gravity_params *params);

/* Counts from one force evaluation. */
typedef struct grove_gravity_stats {
    double particle_interactions; /* particle-particle pairs evaluated */
    double cell_interactions;     /* particle-cell (quadrupole) pairs evaluated */
    size_t cells, leaves, groups; /* tree shape */
    int depth;                    /* levels of the tree */
    double flops;                 /* floating-point operations of the pairs
                                     (23 per particle pair, 65 per cell pair) */
} grove_gravity_stats;

/* Accelerations (and optionally potentials) of n = positions.n particles
 * on each other: positions a view of n points in d = 3 (float32 or
 * float64, any stride; anything but packed float64 rows is converted to
 * them once, 24 bytes per particle), mass n float64 values >= 0 (all
 * finite); acc receives n x 3, pot n values or NULL; stats may be NULL.
 * n <= 2^32 - 2. Masses are a plain array, as grove_fof's are: a
 * grove_points view is a set of coordinates. Peak memory: about 150
 * bytes per particle plus per-thread lists.
 * Distributed (options->mpi; docs/mpi.md): every rank passes its part of
 * the rows in rank order (any part may be empty) and gets its rows'
 * results; stats are summed over the ranks. One rank gives the
 * single-process bits; several give results within the tree's error of
 * them. */
GROVE_API grove_status grove_gravity(grove_points positions, const double *mass, const grove_gravity_params *params,
                                     double *acc, double *pot, grove_gravity_stats *stats,
                                     const grove_options *options);

/* Simulation: kick-drift-kick leapfrog on the tree forces.
 *
 * Shared step (GROVE_TIMESTEP_SHARED): every step is dt (symplectic, time
 * reversible). Adaptive global step (GROVE_TIMESTEP_ADAPTIVE): every step
 * is dt_i = min(dt, eta * sqrt(eps / max_i |a_i|)) (eps = the softening,
 * or if it is 0, 0.01 of the virial radius G M^2 / (-2 W), which is 0.01
 * in Henon units), chosen from the accelerations at the start of the
 * step; the steps stay shared by all particles, but the integrator is then
 * no longer exactly symplectic. Block steps (GROVE_TIMESTEP_BLOCK): each
 * particle i has its own step dt / 2^k_i on a level k_i in 0..max_level,
 * the coarsest level whose step is at most eta * sqrt(eps / |a_i|) (eps as
 * above; max_level when none is); a particle is kicked on its own step and forces are evaluated
 * only for the particles whose step ends (see docs/nbody.md). One
 * grove_nbody_step is then one largest step dt, at whose end every
 * particle is synchronised. For the callers from before the timestep
 * field: eta > 0 with GROVE_TIMESTEP_SHARED means the adaptive step (the
 * validated params say GROVE_TIMESTEP_ADAPTIVE); eta = 0 with the adaptive
 * or block step means GROVE_NBODY_ETA_DEFAULT. */
typedef enum grove_timestep {
    GROVE_TIMESTEP_SHARED = 0,
    GROVE_TIMESTEP_ADAPTIVE = 1,
    GROVE_TIMESTEP_BLOCK = 2
} grove_timestep;

#define GROVE_NBODY_ETA_DEFAULT 0.025
#define GROVE_NBODY_MAX_LEVEL 30

typedef struct grove_nbody_params {
    grove_gravity_params gravity;
    double dt;  /* step, or the largest step (adaptive, block), > 0 (default 1/128) */
    double eta; /* step accuracy of the adaptive and block steps, >= 0 (default 0) */
    /* Nonzero (default): after every force evaluation subtract the
     * mass-weighted mean acceleration sum(m a) / sum(m) from every
     * particle, so the total momentum is conserved to rounding. Tree forces
     * are not exactly pairwise antisymmetric; their net force is of the
     * order of the force errors and drifts the momentum. 0: the tree forces
     * as they are (what grove_gravity returns). With block steps this is
     * done only at evaluations where every particle is active (the start
     * and end of each largest step); in between, momentum is conserved to
     * the tree's force error. */
    int conserve_momentum;
    grove_timestep timestep; /* default GROVE_TIMESTEP_SHARED */
    int max_level;           /* block steps: finest level K, 0..GROVE_NBODY_MAX_LEVEL (default 20) */
} grove_nbody_params;

GROVE_API void grove_nbody_params_init(grove_nbody_params *params);

typedef struct grove_nbody grove_nbody;

/* Diagnostics at the current (synchronised) time. */
typedef struct grove_nbody_diag {
    double time;
    uint64_t step;
    double kinetic, potential, energy; /* potential = 1/2 sum m_i phi_i */
    double momentum[3], angular_momentum[3];
    double com[3];                     /* centre of mass */
    double mass;                       /* total mass */
} grove_nbody_diag;

/* A simulation of n = positions.n particles (positions as grove_gravity
 * takes them; velocities n x 3 and masses n, float64), copied in; the
 * first force evaluation happens here. Free with grove_nbody_free. One
 * thread at a time per handle.
 * Distributed (options->mpi; docs/mpi.md): every rank passes its part of
 * the rows in rank order (any part may be empty; rank r's rows are global
 * rows offset_r ..), and the handle then holds the particles of this
 * rank's domain, which change from step to step: grove_nbody_count and
 * the state views are this rank's particles, grove_nbody_rows their
 * global rows, grove_nbody_total all of them. Every call on a distributed
 * handle is collective (steps take the same options.mpi; diagnostics,
 * stats and counts are over every rank). A cancel flag is seen at a
 * step's start, where the ranks agree on it (a step in progress
 * finishes: its particles may have moved between ranks). On one rank it
 * is the single-process simulation bit for bit. */
GROVE_API grove_status grove_nbody_create(grove_points positions, const double *vel, const double *mass,
                                          const grove_nbody_params *params, const grove_options *options,
                                          grove_nbody **out);
GROVE_API void grove_nbody_free(grove_nbody *sim);
/* Advance `steps` steps (options: threads, progress per step, cancel);
 * with block steps a step is one largest step dt. A cancel inside a step
 * undoes that step: the state is the one after the last whole step (with
 * a cancel flag, a step keeps a copy of the 6n positions and velocities
 * it started from; with block steps of the whole 11n state and the n
 * levels). A step whose new positions
 * or velocities are not finite (dt far too large) stops with
 * GROVE_INVALID_ARGUMENT naming the step and the particle; after a step
 * failed half way like that (or in its force evaluation) the state is part
 * advanced, and further steps and checkpoints are refused: read or free
 * the handle. */
GROVE_API grove_status grove_nbody_step(grove_nbody *sim, uint64_t steps, const grove_options *options);
/* Fails (GROVE_INVALID_ARGUMENT) when a sum is beyond the largest double. */
GROVE_API grove_status grove_nbody_diagnostics(const grove_nbody *sim, grove_nbody_diag *out);
/* Counts from the latest force evaluation. */
GROVE_API grove_status grove_nbody_stats(const grove_nbody *sim, grove_gravity_stats *out);
/* Number of particles, and read-only views of the state (n x 3, n x 3, n,
 * n x 3 accelerations, n potentials), valid until the next call on sim. */
GROVE_API size_t grove_nbody_count(const grove_nbody *sim);
GROVE_API const double *grove_nbody_positions(const grove_nbody *sim);
GROVE_API const double *grove_nbody_velocities(const grove_nbody *sim);
GROVE_API const double *grove_nbody_masses(const grove_nbody *sim);
GROVE_API const double *grove_nbody_accelerations(const grove_nbody *sim);
GROVE_API const double *grove_nbody_potentials(const grove_nbody *sim);
GROVE_API const grove_nbody_params *grove_nbody_get_params(const grove_nbody *sim);
/* Each particle's block-step level k (its step is dt / 2^k) in input
 * order, as chosen at the start of its latest step; all 0 with the shared
 * and adaptive steps. Valid until the next call on sim. */
GROVE_API const uint8_t *grove_nbody_levels(const grove_nbody *sim);
/* Sink force evaluations since the run began (one per particle whose
 * acceleration was computed, summed over evaluations, the creation's n
 * included; a checkpoint carries the count): the cost measure that
 * compares the time-step modes. */
GROVE_API uint64_t grove_nbody_force_evaluations(const grove_nbody *sim);

/* Particles per block-step level over every rank (collective when
 * distributed): counts (GROVE_NBODY_MAX_LEVEL + 1 entries) receives the
 * count of level k in counts[k] (counts[0] = the total for the shared and
 * adaptive steps, whose levels are all 0). */
GROVE_API void grove_nbody_level_counts(const grove_nbody *sim, uint64_t *counts);
/* Every particle's global row (its place in the creation's input, or in
 * the checkpoint's), in the order of the state views: 0..n-1 on one
 * process; a distributed simulation's rank holds its domain's rows in
 * ascending order. Valid until the next call on sim. */
GROVE_API const int64_t *grove_nbody_rows(const grove_nbody *sim);
/* The particles on every rank (grove_nbody_count on one process). */
GROVE_API size_t grove_nbody_total(const grove_nbody *sim);
/* The state of every particle by global row, on rank 0 of a distributed
 * simulation (collective; rank 0's non-NULL arrays of total rows receive
 * it, the other ranks' arrays are not read and may be NULL), or a copy on
 * one process: positions and velocities total x 3, masses and potentials
 * total, levels total bytes. Memory on rank 0: 12 bytes a particle plus
 * one column at a time (24 bytes a particle). */
GROVE_API grove_status grove_nbody_gather(const grove_nbody *sim, double *pos, double *vel, double *mass,
                                          double *pot, uint8_t *level);
/* A distributed simulation rebalances its domains at a step's start when
 * the most interaction flops any rank computed since the last
 * decomposition exceed the mean by more than this fraction. */
#define GROVE_NBODY_REBALANCE 0.1
/* This rank's share of a distributed simulation since it was made or
 * read (docs/mpi.md); on one process the particles alone, the rest 0. */
typedef struct grove_nbody_rank_stats {
    size_t particles;         /* this rank's particles now */
    uint64_t decompositions;  /* domain decompositions: the first and every rebalance */
    uint64_t migrated;        /* particles this rank sent across a kept domain boundary */
    double flops;             /* interaction flops since the last decomposition */
    /* one entry per grove_mpi_phase (GROVE_MPI_PHASES of them): */
    double seconds[5];        /* wall seconds in each phase, summed over the steps
                                 (DECOMPOSE: the units and the domain work) */
    int64_t bytes[5];         /* bytes this rank sent to others in each */
} grove_nbody_rank_stats;
GROVE_API void grove_nbody_load(const grove_nbody *sim, grove_nbody_rank_stats *out);

/* Application data: up to GROVE_NBODY_APP_DATA_MAX bytes the caller keeps
 * with the state, copied in (bytes = 0 clears them). Every checkpoint
 * written afterwards carries them and grove_nbody_checkpoint_read restores
 * them, so a program resuming a run finds its own settings there (the CLI
 * keeps its output settings, e.g. --snapshot-every). The library never
 * reads them. grove_nbody_app_data returns them (NULL and *bytes = 0 when
 * there are none), valid until the next call on sim. */
#define GROVE_NBODY_APP_DATA_MAX 65536
GROVE_API grove_status grove_nbody_set_app_data(grove_nbody *sim, const void *data, size_t bytes);
GROVE_API const void *grove_nbody_app_data(const grove_nbody *sim, size_t *bytes);

/* Checkpoints: the whole state (time, step count, params, positions,
 * velocities, masses, application data) in double, written atomically
 * (temporary file + rename), so a killed run leaves the previous
 * checkpoint intact. Resuming from one reproduces the uninterrupted run
 * bit for bit (the forces are a deterministic function of the positions).
 * Format version 5 (written now) adds the time-step mode, max_level, the
 * force-evaluation count and each particle's level; version 4 added the
 * application data; versions 3 to 5 carry a CRC-32C of the file, checked
 * on reading (a damaged file is refused with GROVE_PARSE_ERROR naming it);
 * versions 1 to 4 are still read (as shared or adaptive runs, levels 0;
 * 1 and 2 without a checksum; 1 to 3 without application data).
 * Distributed (collective): a simulation's particles are gathered on rank
 * 0 in row order and written there in this one format (memory on rank 0:
 * about 120 bytes a particle); reading with options->mpi reads the file on
 * rank 0 and gives each rank a block of rows, so a run resumes on any
 * number of ranks, and the single-process reader reads what several
 * ranks wrote. */
GROVE_API grove_status grove_nbody_checkpoint_write(const grove_nbody *sim, const char *path);
GROVE_API grove_status grove_nbody_checkpoint_read(const char *path, const grove_options *options,
                                                   grove_nbody **out);

/* Resuming a run: a program's own settings (how the run started, its
 * outputs) kept with the simulation in its checkpoints, so that a resumed
 * run restores them and refuses the ones its caller gives again that
 * disagree with the run's (the CLI's nbody --resume). A setting is a name
 * and a value as text; they are kept as the application data, in text: a
 * first line `format` naming the program and its version, then a line
 * "name value" each. */
typedef struct grove_nbody_setting {
    const char *name;  /* letters, digits, '-' and '_' */
    const char *text;  /* the value as text (one line), or NULL: the value is `number` */
    double number;
} grove_nbody_setting;

/* The text a setting's value is kept as, into buf (cap bytes): text, or
 * the shortest decimal that reads back as number. */
GROVE_API void grove_nbody_setting_text(const grove_nbody_setting *setting, char *buf, size_t cap);

/* Keep settings[0..count) under `format` in place of sim's application
 * data (what the checkpoints written afterwards carry). */
GROVE_API grove_status grove_nbody_keep_settings(grove_nbody *sim, const char *format,
                                                 const grove_nbody_setting *settings, size_t count);

/* The run's value of the setting `name` as text into buf (cap bytes; ""
 * when the run has none): the one kept under `format`, else the
 * simulation's parameter of that name: n (the particles on every rank),
 * dt, eta, theta, softening, G, timestep (shared, adaptive or block),
 * max_level, conserve_momentum (0 or 1). GROVE_PARSE_ERROR when the
 * application data are not settings under `format` (the run was not made
 * by that program; a run without application data keeps none). */
GROVE_API grove_status grove_nbody_run_setting(const grove_nbody *sim, const char *format, const char *name,
                                               char *buf, size_t cap);

/* A resumed run's check of the settings its caller gives again,
 * asked[0..count), against the run's own (grove_nbody_run_setting): GROVE_OK
 * when each agrees (equal numbers where both texts read whole as numbers,
 * so 0.01 and 1e-2 agree, else equal texts); else GROVE_INVALID_ARGUMENT,
 * *which (may be NULL) the first that does not, and the message names it
 * and both values. */
GROVE_API grove_status grove_nbody_resume_check(const grove_nbody *sim, const char *format,
                                                const grove_nbody_setting *asked, size_t count, size_t *which);

/* Initial conditions, total mass 1, G = 1, centre of mass at rest at the
 * origin (docs/nbody.md, Initial conditions). The same params give the
 * same particles on the same build for any thread count.
 *  PLUMMER: Aarseth, Henon & Wielen (1974) sampling in Henon units (E = -1/4,
 *           scale a = 3 pi / 16), radii beyond 99.9% of the mass redrawn.
 *  COLD:    uniform sphere of radius 1, at rest (collapses in t ~ 1.1).
 *  MERGER:  two Plummer spheres of mass 1/2 each, `separation` apart (default
 *           10 Henon lengths) with impact parameter `impact` (default 1), on a
 *           parabolic orbit towards each other.
 *  HERNQUIST: Hernquist (1990) sphere, scale a = 1/3, the inner 99% of a
 *           model of mass 1/0.99 (radii < 66.2), isotropic, speeds from its
 *           exact distribution function; mirrored pairs (particle 2i+1 is
 *           -particle 2i in position and velocity; an unpaired last one is at
 *           rest at the origin), so the momentum is exactly zero.
 *  PLUMMER_BH: particle 0 a point mass `bh_mass` at rest at the origin, the
 *           others a Plummer sphere of mass 1 - bh_mass (scale 3 pi / 16,
 *           radii beyond 99.9% of its mass redrawn) with speeds from its
 *           isotropic distribution function in the combined potential
 *           (Eddington's formula, tabulated; its negative part clipped to 0);
 *           stars in mirrored pairs as HERNQUIST. n >= 2. */
typedef enum grove_ic_kind {
    GROVE_IC_PLUMMER = 1,
    GROVE_IC_COLD = 2,
    GROVE_IC_MERGER = 3,
    GROVE_IC_HERNQUIST = 4,
    GROVE_IC_PLUMMER_BH = 5
} grove_ic_kind;

typedef struct grove_ic_params {
    grove_ic_kind kind; /* default PLUMMER */
    size_t n;           /* particles >= 1 (MERGER, PLUMMER_BH: >= 2) */
    uint64_t seed;      /* default 0 */
    double separation;  /* MERGER: initial distance of the centres (default 10) */
    double impact;      /* MERGER: impact parameter (default 1) */
    double bh_mass;     /* PLUMMER_BH: the point mass's fraction of the total, in [0, 1) (default 0.01) */
} grove_ic_params;

GROVE_API void grove_ic_params_init(grove_ic_params *params);
/* Fill pos (n x 3), vel (n x 3) and mass (n). */
GROVE_API grove_status grove_ic_generate(const grove_ic_params *params, double *pos, double *vel, double *mass);

/* Snapshots: n particles with positions, velocities and masses in double. */
typedef struct grove_snapshot {
    size_t n;
    double time;
    double *pos, *vel, *mass; /* n x 3, n x 3, n: one block starting at pos,
                                 owned (grove_snapshot_free) */
} grove_snapshot;

GROVE_API void grove_snapshot_free(grove_snapshot *snap);

/* Tipsy (the format Bonsai reads and writes): a 32-byte header (double
 * time; int32 nbodies, ndim, nsph, ndark, nstar, pad; a 28-byte header
 * without the pad is accepted too) followed by nsph gas, ndark dark and
 * nstar star particles as float32 records. The byte order is detected from
 * the header (ndim must be 3 and the counts must add up to nbodies and to
 * the file size), so big-endian "standard" and native little-endian files
 * both read. All particle kinds become particles, in file order (gas, dark,
 * star); values must be finite and masses >= 0. The size is checked before
 * anything is allocated. */
GROVE_API grove_status grove_tipsy_read(const char *path, grove_snapshot *out);
GROVE_API grove_status grove_tipsy_read_mem(const void *buf, size_t len, const char *name,
                                            grove_snapshot *out);
/* Write dark-matter particles as float32 (eps = softening; phi = the n
 * potentials, per unit mass, or 0 for every particle when phi is NULL;
 * grove_nbody_potentials gives a simulation's), big-endian when big_endian
 * is nonzero (standard tipsy), else little endian; atomic like
 * grove_npy_write. Refused before anything is written
 * (GROVE_INVALID_ARGUMENT, naming the quantity and the row): a time that
 * is not finite, and a value float32 cannot hold: not finite, beyond
 * float32's range, or nonzero but rounding to 0 in float32. */
GROVE_API grove_status grove_tipsy_write(const char *path, size_t n, double time, const double *pos,
                                         const double *vel, const double *mass, const double *phi,
                                         double softening, int big_endian);

/* Cosmological snapshots in the Gadget layout (docs/snapshots.md): HDF5
 * files as GADGET-4 and SWIFT write them (a Header group's attributes,
 * PartTypeT/Coordinates, Velocities, ParticleIDs, Masses; units from the
 * Units or Parameters group), read and written through libhdf5 when grove
 * was built with it (grove_hdf5_version), and Gadget-2 binary files
 * (format 1, and format 2 with block names), read by grove's own parser,
 * which checks every record against the file size before it allocates.
 * A snapshot may span several files, BASE.0, BASE.1, ... (BASE.0.hdf5,
 * ...): naming any of them, or BASE (BASE.hdf5) when it does not exist,
 * reads them all. Particles are ordered by type, and within a type by file
 * and then as stored; each array is read into place from the files,
 * type by type and file by file, so memory is the output alone. */
#define GROVE_GADGET_TYPES 8 /* particle types a header may count (Gadget 6, SWIFT 7) */

typedef enum grove_gadget_format {
    GROVE_GADGET_NONE = 0,    /* not a snapshot these readers know */
    GROVE_GADGET_BINARY1 = 1, /* Gadget-2 binary, SnapFormat 1 */
    GROVE_GADGET_BINARY2 = 2, /* Gadget-2 binary with block names, SnapFormat 2 */
    GROVE_GADGET_HDF5 = 3     /* HDF5, GADGET-4 / SWIFT layout, SnapFormat 3 */
} grove_gadget_format;

/* What a snapshot's header says (0 for a quantity the file leaves out). */
typedef struct grove_gadget_header {
    grove_gadget_format format;
    int types;                /* particle types the header counts, 1..GROVE_GADGET_TYPES */
    int files;                /* files the snapshot spans */
    double time;              /* Time (the scale factor in comoving runs) */
    double redshift;          /* Redshift */
    double box[3];            /* BoxSize along x, y, z (0: none stated) */
    double omega0, omega_lambda, hubble; /* Omega0, OmegaLambda, HubbleParam */
    double mass_table[GROVE_GADGET_TYPES]; /* MassTable: each type's particle mass (0: per particle) */
    uint64_t total[GROVE_GADGET_TYPES];    /* particles of each type in the whole snapshot */
    double unit_length_cgs, unit_mass_cgs, unit_velocity_cgs; /* the code units in cm, g, cm/s */
} grove_gadget_header;

/* What to read: GROVE_GADGET_POS | VEL | MASS | IDS. */
#define GROVE_GADGET_POS 1u
#define GROVE_GADGET_VEL 2u
#define GROVE_GADGET_MASS 4u
#define GROVE_GADGET_IDS 8u

typedef struct grove_gadget_params {
    unsigned types;    /* bit t reads particle type t; 0 (default): every type */
    unsigned fields;   /* default all four */
    grove_dtype dtype; /* positions and velocities: 0 (default) as stored (float64 when
                          the chosen types store both), or GROVE_FLOAT32 / GROVE_FLOAT64 */
} grove_gadget_params;

/* A snapshot's chosen particles; arrays owned (grove_gadget_free). */
typedef struct grove_gadget {
    grove_gadget_header header;
    size_t n;                           /* particles read */
    size_t count[GROVE_GADGET_TYPES];   /* of each type, in type order */
    grove_dtype dtype;                  /* of pos and vel */
    void *pos, *vel;                    /* n x 3 each, or NULL when not asked */
    double *mass;                       /* n (from MassTable where it is not 0), or NULL */
    uint64_t *ids;                      /* n, or NULL */
} grove_gadget;

GROVE_API void grove_gadget_params_init(grove_gadget_params *params);
/* The format of the snapshot at path (GROVE_GADGET_NONE for another kind
 * of file): HDF5 by its signature, Gadget-2 by its first record. A
 * missing path whose first piece (BASE.0, BASE.0.hdf5) exists is that
 * piece's format. Fails only when neither can be read. */
GROVE_API grove_status grove_gadget_probe(const char *path, grove_gadget_format *format);
/* Read the chosen types and fields (params NULL: defaults). Refused with
 * a message naming the file and the dataset or block (GROVE_PARSE_ERROR,
 * nothing returned): a missing or unreadable header attribute, a dataset
 * whose shape, dtype or length disagrees with the header's counts, counts
 * that disagree between the files, a truncated file, non-finite positions
 * or velocities, masses not finite or < 0. Chosen types the snapshot
 * does not hold read as no particles. HDF5 files need libhdf5
 * (GROVE_UNSUPPORTED without). */
GROVE_API grove_status grove_gadget_read(const char *path, const grove_gadget_params *params, grove_gadget *out);
/* One Gadget-2 binary file from memory (name for messages); a piece of a
 * snapshot of several files reads as its own particles. */
GROVE_API grove_status grove_gadget_read_mem(const void *buf, size_t len, const char *name,
                                             const grove_gadget_params *params, grove_gadget *out);
GROVE_API void grove_gadget_free(grove_gadget *snap);

/* libhdf5's version ("1.10.8") when grove can read and write HDF5, else
 * NULL with grove_last_error() saying why: built without libhdf5, or its
 * HDF5 part, libgrove_hdf5.so, not found (it is looked for beside
 * libgrove, in ../lib from there, then on the library path, and loaded at
 * the first HDF5 call: libhdf5 is not loaded before). */
GROVE_API const char *grove_hdf5_version(void);
/* Write snap as one HDF5 file in the GADGET-4 layout (docs/snapshots.md):
 * the Header (NumPart counts from snap->count, NumFilesPerSnapshot 1, the
 * rest from snap->header), Parameters and Units groups with the units
 * when header.unit_length_cgs is not 0, and for each type with particles
 * PartTypeT/Coordinates and Velocities (in snap->dtype), ParticleIDs
 * (uint64; snap->ids, or the particles' rows 0.. when NULL) and Masses
 * (float64; left out where every mass of the type equals a nonzero
 * MassTable entry), and Potential when potential (n values) is not NULL.
 * snap->vel and snap->mass may be NULL (zeros, then unit masses are not
 * assumed: MassTable must give them). Atomic like grove_npy_write (a
 * regular file or a new name only). */
GROVE_API grove_status grove_gadget_write_hdf5(const char *path, const grove_gadget *snap, const double *potential);
/* Write a FoF catalogue as an HDF5 halo table in the layout of GADGET's
 * group catalogues (fof_tab): Header (Ngroups, Nids, NumFiles 1, Time,
 * Redshift, BoxSize and cosmology from header, which may be NULL),
 * Group/GroupLen, GroupMass, GroupPos, GroupVel, GroupVelDisp (with
 * velocities), GroupRadius and GroupOffset (the group's first entry in
 * IDs/ID), and IDs/ID: the nids ids of the groups' members, group by group
 * (the caller orders them; nids = the sum of the members). Atomic like
 * grove_gadget_write_hdf5. */
GROVE_API grove_status grove_fof_write_hdf5(const char *path, const grove_gadget_header *header,
                                            const grove_fof_catalogue *catalogue, const uint64_t *ids, size_t nids);

/* Density projection onto the x-y plane as an 8-bit PNG (libpng): mass per
 * pixel over a square of side `extent` centred on `center`, log-scaled over
 * `decades` decades below the brightest pixel. GROVE_UNSUPPORTED when grove
 * was built without libpng. Atomic like grove_npy_write. */
typedef struct grove_render_params {
    size_t width;      /* pixels per side, 16..8192 (default 512) */
    double extent;     /* side of the square in length units, finite > 0 (default 8) */
    double center[3];  /* finite (default origin) */
    double decades;    /* dynamic range (default 4) */
} grove_render_params;

GROVE_API void grove_render_params_init(grove_render_params *params);
/* positions and mass as grove_gravity takes them. */
GROVE_API grove_status grove_render_png(grove_points positions, const double *mass,
                                        const grove_render_params *params, const char *path);

/* ------------------------------------------------------------------------ */
/* Pair counts: two-point correlation functions (docs/paircount.md)          */
/* ------------------------------------------------------------------------ */

/*
 * Pair counts in bins of separation, counted inside the join's search
 * (the grove_index, its group search and minimum images) into per-thread
 * histograms: no pair is stored. The conventions are Corrfunc's
 * (theory.DD, theory.DDrppi), so counts agree with it pair for pair:
 *
 * Bins: edges[0] < edges[1] < ... (nedges >= 2, finite, >= 0); bin i holds
 * the pairs with edges[i] <= r < edges[i + 1]: a pair's squared distance,
 * summed over the dimensions in input order in the input dtype
 * (((dx^2 + dy^2) + dz^2), no fused multiply-add), is compared with the
 * edge squared in double and rounded to the dtype. With pimax > 0 the
 * bins are (rp, pi): rp over every dimension but the last (d >= 2), pi =
 * |dz| along the last; floor(pimax) pi bins of width dpi = pimax /
 * floor(pimax) (rounded to the dtype, its inverse computed in double and
 * rounded), pi bin j = (int)(pi * (1 / dpi)), and only pairs with
 * pi < pimax and j < floor(pimax) count. Bin (i, j) is entry
 * i * floor(pimax) + j.
 *
 * Autocorrelation (data2 NULL): every ordered pair (a, b) of distinct
 * points counts, so each pair twice, and each point's pair with itself
 * counts once at r = 0 (in the first bin when edges[0] is 0, else
 * nowhere): Corrfunc's DD with autocorr = 1. Cross-correlation (data2
 * given, same d and dtype): each pair (a in data1, b in data2) once.
 *
 * Periodic box (index.boxsize, as grove_index_params): minimum images,
 * each pair counted once at its nearest image (Corrfunc counts the same
 * pairs while the largest edge and pimax are below half the box).
 *
 * Weights (weights1 for data1, weights2 for data2, n finite values each,
 * or NULL for 1 each): weighted[bin] is the sum over the bin's pairs of
 * the product of their weights (Corrfunc's weight_type "pair_product"
 * times npairs), the products in double and summed exactly, rounded once:
 * the same bits for any thread count. Corrfunc multiplies and averages in
 * the points' dtype, so its sums agree within that rounding.
 *
 * Memory: the index (a copy of the points plus about 24 bytes a point; a
 * cross-correlation indexes data2 and groups data1 alike) and per thread
 * 8 bytes a bin, plus 8 + 580 bytes a bin with weights. Exactly the same
 * counts for any thread count. Time: the join's search within the
 * largest edge (or the (rp, pi) cylinder's enclosing ball).
 */
typedef struct grove_paircount_params {
    const double *edges;      /* nedges bin edges, ascending */
    size_t nedges;            /* >= 2 */
    double pimax;             /* 0: bins in r; >= 1: bins in (rp, pi), pi along the last dimension */
    const double *weights1;   /* data1's weights, or NULL (1 each) */
    const double *weights2;   /* data2's weights, or NULL (1 each) */
    grove_index_params index; /* leaf size, index dimensions, periodic box */
} grove_paircount_params;

GROVE_API void grove_paircount_params_init(grove_paircount_params *params);

/* The number of bins: nedges - 1 in r, (nedges - 1) * floor(pimax) in
 * (rp, pi); 0 when the edges or pimax are not valid. */
GROVE_API size_t grove_paircount_bins(const grove_paircount_params *params);

/* Count the pairs of data1 (data2 NULL) or between data1 and *data2 (up
 * to 16 dimensions, n <= 2^32 - 2 each) into npairs (grove_paircount_bins
 * entries, caller memory) and, when weighted is non-NULL, their weight
 * products into weighted (as many entries; with no weights given, each
 * weight is 1). */
GROVE_API grove_status grove_paircount(grove_points data1, const grove_points *data2,
                                       const grove_paircount_params *params, int64_t *npairs, double *weighted,
                                       const grove_options *options);

/* What the estimators need of each point set: the sum of its weights and
 * of their squares (n and n without weights). */
typedef struct grove_paircount_totals {
    double sum, sum2;
} grove_paircount_totals;

/* The totals of n weights (NULL: n ones), each sum exact and rounded once,
 * so every caller gets the same bits. */
GROVE_API grove_paircount_totals grove_paircount_totals_of(const double *weights, size_t n);

/* The correlation function per bin (grove_paircount_bins entries) from
 * the pair sums (weighted, or the counts as doubles) of one binning of
 * points in d dimensions:
 * - with randoms (dr and rr non-NULL): Landy-Szalay,
 *   xi = (DD / nDD - 2 DR / nDR + RR / nRR) / (RR / nRR), where nDD =
 *   data.sum^2 - data.sum2 (ordered pairs of distinct points), nDR =
 *   data.sum * randoms.sum, nRR = randoms.sum^2 - randoms.sum2, and the
 *   self pairs (data.sum2, randoms.sum2) taken out of DD and RR's first
 *   bin when it starts at 0; NaN where RR is 0 (undefined);
 * - without (dr, rr NULL; params->index a periodic box in every
 *   dimension, volume V): xi = DD / RR - 1 against the pairs a uniform
 *   set would have, RR = nDD * (bin volume) / V, plus data.sum2 in a bin
 *   that holds r = 0: Corrfunc's theory.xi. Bin volumes are shells of the
 *   d-ball, or in (rp, pi) rings of the (d - 1)-ball times 2 dpi. */
GROVE_API grove_status grove_paircount_xi(const grove_paircount_params *params, size_t d, grove_paircount_totals data,
                                          grove_paircount_totals randoms, const double *dd, const double *dr,
                                          const double *rr, double *xi);

/* The projected correlation function wp(rp) (nedges - 1 entries) from
 * (rp, pi) sums (params->pimax >= 1): with randoms 2 dpi sum_j xi(rp,
 * pi_j) with Landy-Szalay's xi (Corrfunc's convert_rp_pi_counts_to_wp);
 * without, in a periodic box, 2 pimax (DD(rp) / RR(rp) - 1) with DD(rp)
 * summed over pi and RR(rp) as above over the whole cylinder (Corrfunc's
 * theory.wp). */
GROVE_API grove_status grove_paircount_wp(const grove_paircount_params *params, size_t d, grove_paircount_totals data,
                                          grove_paircount_totals randoms, const double *dd, const double *dr,
                                          const double *rr, double *wp);

#ifdef __cplusplus
}
#endif

#endif /* GROVE_H */
