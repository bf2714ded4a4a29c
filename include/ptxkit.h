/* ptxkit: run hand-written GPU kernels from plain C.
 *
 * The one public header. Every function returns a ptxkit_status; details of
 * the last failure are read with ptxkit_last_error(). Device memory is
 * addressed with ptxkit_dptr (a CUdeviceptr), so views at any byte offset are
 * plain integer arithmetic. A NULL stream means the context's default stream.
 */
#ifndef PTXKIT_H
#define PTXKIT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The library is built with hidden visibility; this header's functions are
 * its exported interface. */
#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

#define PTXKIT_VERSION_MAJOR 0
#define PTXKIT_VERSION_MINOR 1
#define PTXKIT_VERSION_PATCH 0
#define PTXKIT_VERSION_STRING "0.1.0"

typedef enum ptxkit_status {
    PTXKIT_SUCCESS = 0,
    PTXKIT_ERROR_INVALID_ARGUMENT,  /* NULL, bad enum, bad block size ... */
    PTXKIT_ERROR_OVERFLOW,          /* a byte count does not fit in size_t */
    PTXKIT_ERROR_MISALIGNED,        /* a pointer the operation cannot use */
    PTXKIT_ERROR_NO_DRIVER,         /* libcuda.so.1 missing or unusable */
    PTXKIT_ERROR_STUB_DRIVER,       /* the toolkit's link stub was loaded */
    PTXKIT_ERROR_NO_DEVICE,         /* no such GPU */
    PTXKIT_ERROR_NO_NVRTC,          /* the JIT path is unavailable */
    PTXKIT_ERROR_COMPILE,           /* NVRTC rejected a kernel: log in message */
    PTXKIT_ERROR_PTX_LOAD,          /* the driver refused PTX or CUBIN */
    PTXKIT_ERROR_PTX_VERSION,       /* PTX ISA newer than the driver accepts */
    PTXKIT_ERROR_JIT_NOT_FOUND,     /* the driver's PTX JIT is not installed */
    PTXKIT_ERROR_OUT_OF_MEMORY,
    PTXKIT_ERROR_UNSUPPORTED,       /* not available on this GPU or build */
    PTXKIT_ERROR_LAUNCH,            /* the kernel could not be launched */
    PTXKIT_ERROR_DRIVER,            /* any other driver error: name in message */
    PTXKIT_ERROR_IO,                /* cache or database file system error */
    PTXKIT_ERROR_NOT_FOUND,         /* unknown kernel family or entry point */
    PTXKIT_ERROR_CORRUPT,           /* a file failed its checksum or format */
    PTXKIT_STATUS_COUNT
} ptxkit_status;

/* Short constant description of a status ("invalid argument"). */
const char *ptxkit_status_string(ptxkit_status status);

typedef uint64_t ptxkit_dptr;
typedef struct ptxkit_context ptxkit_context;
typedef struct ptxkit_stream ptxkit_stream;
typedef struct ptxkit_event ptxkit_event;

/* The detailed message of the last failure on this context (driver error
 * name, NVRTC log, which argument was wrong). With ctx == NULL: the calling
 * thread's last failure outside any context (e.g. ptxkit_context_open).
 * Never NULL; "" when nothing failed. Valid until the next call. */
const char *ptxkit_last_error(const ptxkit_context *ctx);

/* ---- versions and environment ------------------------------------------ */

typedef struct ptxkit_versions {
    int library;          /* major*10000 + minor*100 + patch */
    int driver;           /* cuDriverGetVersion, e.g. 13000; 0 if no driver */
    int nvrtc_major;      /* 0 if NVRTC is unavailable */
    int nvrtc_minor;
} ptxkit_versions;

/* Loads nothing it has not loaded already; never fails: missing pieces read 0. */
void ptxkit_get_versions(ptxkit_versions *out);

/* Whether NVRTC could be opened (the JIT path). */
int ptxkit_jit_available(void);

/* Directory of the on-disk kernel cache (PTXKIT_CACHE_DIR, else
 * $XDG_CACHE_HOME/ptxkit, else ~/.cache/ptxkit). Empty if disabled. */
ptxkit_status ptxkit_cache_dir(char *buf, size_t size);
/* Number of cached kernels and their total size on disk. */
ptxkit_status ptxkit_cache_stats(size_t *files, size_t *bytes);
/* Removes every cached kernel. */
ptxkit_status ptxkit_cache_purge(void);

/* ---- context and device ------------------------------------------------ */

typedef struct ptxkit_device_info {
    char name[256];
    int ordinal;
    int cc_major, cc_minor;
    int sm_count;
    int l2_bytes;
    int persisting_l2_max_bytes;
    int shared_per_block;          /* default limit, bytes */
    int shared_per_block_optin;    /* with the dynamic limit raised */
    int shared_per_sm;
    int max_threads_per_block;
    int max_threads_per_sm;
    int max_blocks_per_sm;
    int regs_per_block;
    int regs_per_sm;
    int warp_size;
    int memory_bus_bits;
    int memory_clock_khz;
    double peak_bandwidth_gbs;     /* 2 x clock x bus width (datasheet) */
    size_t total_memory;
} ptxkit_device_info;

/* Opens device `ordinal` on its primary context, which an application using
 * the CUDA runtime on the same device shares. */
ptxkit_status ptxkit_context_open(int ordinal, ptxkit_context **out);
/* Wraps a caller's CUcontext (passed as void*); the caller keeps ownership. */
ptxkit_status ptxkit_context_attach(void *cu_context, ptxkit_context **out);
/* Unloads modules and releases the primary context. NULL is a no-op. */
ptxkit_status ptxkit_context_close(ptxkit_context *ctx);
ptxkit_status ptxkit_device_info_get(ptxkit_context *ctx, ptxkit_device_info *out);
/* The last kernel module load on this context: what, the driver JIT's wall
 * time and its info log (CU_JIT_INFO_LOG_BUFFER). "" before any load. */
const char *ptxkit_context_jit_log(const ptxkit_context *ctx);
/* Blocks until all work on the context has finished. */
ptxkit_status ptxkit_synchronize(ptxkit_context *ctx);
/* Number of GPUs the driver sees (0 with no driver: status says why). */
ptxkit_status ptxkit_device_count(int *count);

/* ---- memory ------------------------------------------------------------ */

ptxkit_status ptxkit_malloc(ptxkit_context *ctx, size_t bytes, ptxkit_dptr *out);
ptxkit_status ptxkit_free(ptxkit_context *ctx, ptxkit_dptr ptr);
/* Page-locked host memory: needed for copies that overlap with kernels. */
ptxkit_status ptxkit_host_alloc(ptxkit_context *ctx, size_t bytes, void **out);
ptxkit_status ptxkit_host_free(ptxkit_context *ctx, void *ptr);
ptxkit_status ptxkit_memory_info(ptxkit_context *ctx, size_t *free_bytes, size_t *total_bytes);

ptxkit_status ptxkit_memcpy_htod(ptxkit_context *ctx, ptxkit_dptr dst, const void *src, size_t bytes);
ptxkit_status ptxkit_memcpy_dtoh(ptxkit_context *ctx, void *dst, ptxkit_dptr src, size_t bytes);
ptxkit_status ptxkit_memcpy_dtod(ptxkit_context *ctx, ptxkit_dptr dst, ptxkit_dptr src, size_t bytes);
ptxkit_status ptxkit_memcpy_htod_async(ptxkit_context *ctx, ptxkit_dptr dst, const void *src, size_t bytes, ptxkit_stream *stream);
ptxkit_status ptxkit_memcpy_dtoh_async(ptxkit_context *ctx, void *dst, ptxkit_dptr src, size_t bytes, ptxkit_stream *stream);
ptxkit_status ptxkit_memcpy_dtod_async(ptxkit_context *ctx, ptxkit_dptr dst, ptxkit_dptr src, size_t bytes, ptxkit_stream *stream);
/* Sets `count` bytes to `value`. */
ptxkit_status ptxkit_memset8(ptxkit_context *ctx, ptxkit_dptr dst, uint8_t value, size_t count, ptxkit_stream *stream);
/* Sets `count` 32-bit words to `value`; dst must be 4-byte aligned. */
ptxkit_status ptxkit_memset32(ptxkit_context *ctx, ptxkit_dptr dst, uint32_t value, size_t count, ptxkit_stream *stream);

/* ---- streams and events ------------------------------------------------ */

ptxkit_status ptxkit_stream_create(ptxkit_context *ctx, ptxkit_stream **out);
ptxkit_status ptxkit_stream_destroy(ptxkit_context *ctx, ptxkit_stream *stream);
ptxkit_status ptxkit_stream_synchronize(ptxkit_context *ctx, ptxkit_stream *stream);
/* The CUstream behind a stream (NULL stream: the default stream). */
void *ptxkit_stream_handle(ptxkit_stream *stream);

ptxkit_status ptxkit_event_create(ptxkit_context *ctx, ptxkit_event **out);
ptxkit_status ptxkit_event_destroy(ptxkit_context *ctx, ptxkit_event *event);
ptxkit_status ptxkit_event_record(ptxkit_context *ctx, ptxkit_event *event, ptxkit_stream *stream);
ptxkit_status ptxkit_event_synchronize(ptxkit_context *ctx, ptxkit_event *event);
ptxkit_status ptxkit_event_elapsed_ms(ptxkit_context *ctx, ptxkit_event *start, ptxkit_event *end, float *ms);

/* ---- kernel parameters shared by the families -------------------------- */

/* Load cache operator of a kernel's global loads (PTX ld.global.<op>). */
typedef enum ptxkit_load_op {
    PTXKIT_LOAD_DEFAULT = 0,   /* plain ld.global: the compiler's choice */
    PTXKIT_LOAD_CA,            /* cache at all levels */
    PTXKIT_LOAD_CG,            /* cache in L2, not L1 */
    PTXKIT_LOAD_CS,            /* streaming, evict first */
    PTXKIT_LOAD_LU,            /* last use */
    PTXKIT_LOAD_CV,            /* volatile: fetch again */
    PTXKIT_LOAD_NC,            /* read-only (texture) path, ld.global.nc */
    PTXKIT_LOAD_OP_COUNT
} ptxkit_load_op;

/* "ca", "cg", ..., "default"; NULL for a value out of range. */
const char *ptxkit_load_op_name(ptxkit_load_op op);
/* Parses a name as printed by ptxkit_load_op_name. */
ptxkit_status ptxkit_load_op_parse(const char *name, ptxkit_load_op *out);

/* How a kernel reaches the GPU. */
typedef enum ptxkit_path {
    PTXKIT_PATH_AUTO = 0,      /* JIT where NVRTC is present, else PTX */
    PTXKIT_PATH_JIT,           /* NVRTC-compiled CUBIN for this GPU */
    PTXKIT_PATH_PTX            /* the precompiled PTX in ptx/ */
} ptxkit_path;

/* Options for every kernel launch; zero-initialize for defaults (tuned values
 * where the tuning database has them). */
typedef struct ptxkit_launch_options {
    ptxkit_path path;
    ptxkit_load_op load_op;
    int block_size;        /* 0: tuned or default; else power of two in [32, 1024] */
    int vector_bytes;      /* 0: widest the pointers allow; else 4, 8 or 16 */
    int items_per_thread;  /* 0: tuned or default */
    int blocks_per_sm;     /* 0: from occupancy */
} ptxkit_launch_options;

typedef enum ptxkit_dtype {
    PTXKIT_INT32 = 0,
    PTXKIT_UINT32,
    PTXKIT_INT64,
    PTXKIT_UINT64,
    PTXKIT_FLOAT32,
    PTXKIT_FLOAT64,
    PTXKIT_DTYPE_COUNT
} ptxkit_dtype;

const char *ptxkit_dtype_name(ptxkit_dtype type);
size_t ptxkit_dtype_size(ptxkit_dtype type);

/* ---- copy -------------------------------------------------------------- */

/* Copies `bytes` bytes between any two device addresses (no overlap), with
 * 4-, 8- or 16-byte vector accesses where the addresses allow and a
 * funnel-shift path where they are not mutually aligned. */
ptxkit_status ptxkit_copy(ptxkit_context *ctx, ptxkit_dptr dst, ptxkit_dptr src, size_t bytes,
                          const ptxkit_launch_options *options, ptxkit_stream *stream);

/* ---- reduction --------------------------------------------------------- */

typedef enum ptxkit_reduce_op {
    PTXKIT_REDUCE_SUM = 0,  /* integers wrap modulo 2^w */
    PTXKIT_REDUCE_MIN,
    PTXKIT_REDUCE_MAX,
    PTXKIT_REDUCE_AND,      /* unsigned types only */
    PTXKIT_REDUCE_OR,
    PTXKIT_REDUCE_XOR,
    PTXKIT_REDUCE_OP_COUNT
} ptxkit_reduce_op;

const char *ptxkit_reduce_op_name(ptxkit_reduce_op op);

/* Reduces n elements at `in` (any element-aligned address) into one element
 * written at `out` on `stream`. n == 0 writes the operator's identity.
 * Provided: sum, min, max of int32, uint32, float32, float64; sum of int64
 * and uint64; and, or, xor of the integer types (else UNSUPPORTED). Integer
 * sums wrap modulo 2^w. Float sums add in a tree order: within 1e-5
 * (float32) / 1e-13 (float64) of sum |x_i| from the exact sum. Float min/max
 * ignore NaNs as fminf/fmaxf do. One launch; any number of streams may
 * reduce at the same time. options->items_per_thread counts 16-byte (or
 * vector_bytes) loads in flight per thread. */
ptxkit_status ptxkit_reduce(ptxkit_context *ctx, ptxkit_reduce_op op, ptxkit_dtype type,
                            ptxkit_dptr in, size_t n, ptxkit_dptr out,
                            const ptxkit_launch_options *options, ptxkit_stream *stream);
/* Same, and waits for the result: `result` points to one element of `type`.
 * Runs on the default stream and allocates a small result buffer per call. */
ptxkit_status ptxkit_reduce_to_host(ptxkit_context *ctx, ptxkit_reduce_op op, ptxkit_dtype type,
                                    ptxkit_dptr in, size_t n, void *result,
                                    const ptxkit_launch_options *options);
/* One step of Mark Harris's ladder (1..9), for teaching and benchmarks: the
 * step is launched on its own partials until one value is left. JIT only;
 * step 9 (redux.sync) needs sm_80 and a 32-bit integer type. Allocates its
 * partials per call and waits for `stream` before returning. */
ptxkit_status ptxkit_reduce_ladder(ptxkit_context *ctx, int kernel, ptxkit_reduce_op op, ptxkit_dtype type,
                                   ptxkit_dptr in, size_t n, ptxkit_dptr out,
                                   const ptxkit_launch_options *options, ptxkit_stream *stream);

/* ---- scan (prefix sum) ------------------------------------------------- */

typedef enum ptxkit_scan_kind {
    PTXKIT_SCAN_INCLUSIVE = 0,  /* out[i] = in[0] op in[1] op ... op in[i] */
    PTXKIT_SCAN_EXCLUSIVE,      /* out[0] = identity, out[i] = in[0] op ... op in[i-1] */
    PTXKIT_SCAN_KIND_COUNT
} ptxkit_scan_kind;

/* "inclusive", "exclusive"; NULL for a value out of range. */
const char *ptxkit_scan_kind_name(ptxkit_scan_kind kind);

/* Scans n elements at `in` into n elements at `out` on `stream`; the result
 * stays on the device. Operators and types as ptxkit_reduce: sum, min, max
 * of int32, uint32, float32, float64; sum of int64 and uint64; and, or, xor
 * of the integer types (else UNSUPPORTED). The exclusive identity is 0 for
 * sum, or and xor, all ones for and, the type's largest value (+inf) for
 * min and its smallest (-inf) for max. Integer sums wrap modulo 2^w; float
 * min/max ignore NaNs as fminf/fmaxf do.
 *
 * in and out may be any element-aligned addresses (the fastest case: the
 * same offset from a 16-byte boundary); in == out scans in place; any other
 * overlap is INVALID_ARGUMENT. n == 0 does nothing. One launch, one pass
 * over the data (n read, n written): single-pass scan with decoupled
 * look-back (Merrill & Garland 2016), with per-context scratch, so any
 * number of streams may scan at the same time.
 *
 * Float sums: the array is cut into tiles of T elements (T = (block size -
 * 32, the look-back warp) x items_per_thread x elements per 16-byte vector:
 * 11520 for float32 and 5760 for float64 with the defaults, 512 threads and
 * 6 vectors). Within a tile the sum is a tree of depth under 48; across
 * tiles it is sequential: a tile's prefix is an earlier tile's prefix plus
 * a tree sum of the tiles between. So out[i] differs from the exact prefix
 * sum by at most (ceil((i + 1) / T) + 48) * u *
 * sum_{j <= i} |in[j]|, with u = 2^-24 (float32) or 2^-53 (float64): the
 * bound of a sequential sum over tiles (typical errors are far smaller, and
 * grow like the square root of the tile count). Which earlier prefix a tile
 * builds on depends on timing, so float sums may differ in their last bits
 * from run to run; integer results never do. */
ptxkit_status ptxkit_scan(ptxkit_context *ctx, ptxkit_scan_kind kind, ptxkit_reduce_op op, ptxkit_dtype type,
                          ptxkit_dptr in, size_t n, ptxkit_dptr out, const ptxkit_launch_options *options,
                          ptxkit_stream *stream);

/* One step of the scan ladder, for teaching and benchmarks: 1 Hillis-Steele
 * (double-buffered, one element per thread, O(n log n) work), 2 Blelloch
 * work-efficient up-sweep and down-sweep (two elements per thread), 3 the
 * same with the padding that removes shared-memory bank conflicts, 4 warp
 * shuffles (__shfl_up_sync within warps, then across warps). Arrays longer
 * than one block are scanned as the 2007 seeds do: scan the blocks, scan
 * their sums (recursively), add them back. JIT only. Allocates its block
 * sums per call and waits for `stream` before returning. */
ptxkit_status ptxkit_scan_ladder(ptxkit_context *ctx, int step, ptxkit_scan_kind kind, ptxkit_reduce_op op,
                                 ptxkit_dtype type, ptxkit_dptr in, size_t n, ptxkit_dptr out,
                                 const ptxkit_launch_options *options, ptxkit_stream *stream);

/* ---- transpose --------------------------------------------------------- */

typedef enum ptxkit_transpose_kind {
    PTXKIT_TRANSPOSE_PADDED = 0,  /* shared tile padded against bank conflicts */
    PTXKIT_TRANSPOSE_NAIVE,       /* coalesced reads, strided writes */
    PTXKIT_TRANSPOSE_TILED        /* shared tile, unpadded */
} ptxkit_transpose_kind;

/* dst (cols x rows) = transpose of src (rows x cols), both row-major and
 * dense; float32 or float64. */
ptxkit_status ptxkit_transpose(ptxkit_context *ctx, ptxkit_dtype type, ptxkit_dptr dst, ptxkit_dptr src,
                               size_t rows, size_t cols, ptxkit_transpose_kind kind,
                               const ptxkit_launch_options *options, ptxkit_stream *stream);

/* ---- autotuning -------------------------------------------------------- */

/* The tuner times JIT variants of a kernel family (block size, items per
 * thread, vector width, blocks per SM, load operator) through its public
 * operation, checks each one's output against the built-in defaults', and
 * remembers the fastest per GPU and size bucket (floor(log2 n)) in the tuning
 * database: PTXKIT_TUNE_DB, else <cache dir>/tune.db. The operations use it
 * for options left at 0. PTXKIT_TUNE=off|cached|auto: never read it, use
 * what it holds (the default), or also tune a size bucket on its first use. */

typedef struct ptxkit_tune_progress {
    const char *family;
    const char *variant;
    size_t n;                  /* the size being tuned */
    int size_index, size_count;
    const char *phase;         /* "compile", "search", "exhaustive", "retime" */
    int done, total;           /* steps of this phase */
    double best_gbs;           /* fastest so far at this size; 0 before any */
    double elapsed_s, budget_s;
} ptxkit_tune_progress;

typedef void (*ptxkit_tune_progress_fn)(const ptxkit_tune_progress *progress, void *user);

/* Zero-initialize for defaults. */
typedef struct ptxkit_tune_options {
    double budget_s;           /* wall-clock bound of the call, compiles included; 0: 35 s */
    int max_variants;          /* configurations timed per size; 0: no bound */
    int exhaustive;            /* time every legal configuration, no budget */
    int verify_exhaustive;     /* budgeted search, then exhaustive: both reported */
    int size_step;             /* log2 step between the sizes n_min..n_max; 0: 4 */
    int threads;               /* compile threads; 0: one per CPU, at most 32 */
    int no_save;               /* leave the tuning database alone */
    ptxkit_tune_progress_fn progress;   /* called on the calling thread */
    void *progress_user;
} ptxkit_tune_options;

typedef struct ptxkit_tune_result {
    size_t n;
    ptxkit_launch_options best;        /* the choice saved; 0 fields: built-in default */
    double best_gbs;
    double default_gbs;                /* the built-in defaults, same run */
    ptxkit_launch_options search_best; /* the budgeted search's pick */
    double search_gbs;
    ptxkit_launch_options exhaustive_best; /* with verify_exhaustive */
    double exhaustive_gbs;             /* 0 without verify_exhaustive */
    int legal, timed, failed, wrong;   /* configurations: failed to build or launch, wrong output */
    double seconds;
    char note[192];                    /* the first failure or wrong result, if any */
} ptxkit_tune_result;

#define PTXKIT_TUNE_MAX_SIZES 64

typedef struct ptxkit_tune_report {
    char family[24];
    char variant[40];
    int size_count;
    ptxkit_tune_result sizes[PTXKIT_TUNE_MAX_SIZES];
    double seconds;                    /* the whole call */
    double compile_seconds;            /* of which compiling (in parallel) */
    int kernels_prepared;              /* variants compiled or loaded from the cache */
    int threads;                       /* compile threads used */
    char database[1024];               /* the file written; "" when none */
    char database_note[512];           /* why not, or what was replaced */
} ptxkit_tune_report;

/* Tunes `family` ("copy", "reduce") for `variant` (NULL: the family's
 * default; reduce: "<op>.<type>" as "sum.float32"; copy: "bytes") at the
 * sizes 2^k from n_min to n_max in steps of options->size_step (n counts
 * bytes for copy, elements for reduce), and saves each size's result as it
 * comes. options and report may be NULL. */
ptxkit_status ptxkit_tune(ptxkit_context *ctx, const char *family, const char *variant, size_t n_min, size_t n_max,
                          const ptxkit_tune_options *options, ptxkit_tune_report *report);
/* Name of the index-th tunable family; NULL past the last. */
const char *ptxkit_tune_family(int index);

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif
#endif
