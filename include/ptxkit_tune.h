/* ptxkit_tune.h: the autotuner: tuning ptxkit's families and the
 * application's own kernels (tunables), and the tuning database and record
 * as data.
 *
 * Part of ptxkit's public interface with ptxkit.h (core), which it includes,
 * and ptxkit_ops.h (the operations). The grammar, the error and thread rules
 * and the experimental tier are ptxkit.h's. */
#ifndef PTXKIT_TUNE_H
#define PTXKIT_TUNE_H

#include "ptxkit.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

/* ---- autotuning -------------------------------------------------------- */

/* The tuner times JIT variants of a kernel family (block size, items per
 * thread, vector width, blocks per SM, load operator) through its public
 * operation, checks each one's output against the built-in defaults', and
 * remembers the fastest per GPU and size bucket (floor(log2 n)) in the tuning
 * database: PTXKIT_TUNE_DB, else <state dir>/tune.db. The operations use it
 * for the parameters their configuration leaves absent or 0.
 * PTXKIT_TUNE=off|cached|auto: never read it, use
 * what it holds (the default), or also tune a size bucket on its first use.
 * Every configuration a tuning run measures (its parameters, time, GB/s,
 * correctness) is also appended, as it is measured, to the tuning record
 * beside the database (PTXKIT_TUNE_RECORD, else <database without .db>
 * .record.jsonl; JSON lines): a later run of the same problem on the same
 * GPU, driver, NVRTC, library and kernel code reuses those timings instead
 * of re-timing, so an interrupted run resumes. */

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
    int max_variants;          /* configurations per size, timed or from the tuning record; 0: no bound */
    int exhaustive;            /* time every legal configuration, no budget */
    int verify_exhaustive;     /* budgeted search, then exhaustive: both reported */
    int size_step;             /* log2 step between the sizes n_min..n_max; 0: 4 */
    int threads;               /* compile threads; 0: one per CPU, at most 32 */
    int no_save;               /* leave the tuning database and its record alone */
    ptxkit_tune_progress_fn progress;   /* called on the calling thread */
    void *progress_user;
    int no_record;             /* re-time everything: neither reuse nor extend the tuning record */
    int reserved[3];      /* zero: later 0.x releases give these meaning, 0 keeping today's */
} ptxkit_tune_options;

typedef struct ptxkit_tune_result {
    size_t n;
    ptxkit_config best;                /* the choice, by name as the op or tunable takes it; absent: built-in default */
    double best_gbs;
    double default_gbs;                /* the built-in defaults, same run */
    ptxkit_config search_best;         /* the budgeted search's pick */
    double search_gbs;
    ptxkit_config exhaustive_best;     /* with verify_exhaustive */
    double exhaustive_gbs;             /* 0 without verify_exhaustive */
    int legal, timed, failed, wrong;   /* configurations: failed to build or launch, wrong output */
    double seconds;
    char note[192];                    /* the first failure or wrong result, if any */
    /* Any tunable (the fields above in GB/s are 0 where it counts no bytes): */
    double best_ms, default_ms, search_ms, exhaustive_ms; /* time per call */
    char best_text[192];               /* the choice as "NAME=VALUE ..." */
    char exhaustive_text[192];
    int reused;                        /* configurations taken from the tuning record, not timed again (not in timed) */
    int reserved[7];      /* zero today: later 0.x releases fill new fields here */
} ptxkit_tune_result;

#define PTXKIT_TUNE_MAX_SIZES 64

/* What a tuning call found, per size: an opaque object (it grows with the
 * tuner), read through the accessors below. */
typedef struct ptxkit_tune_report ptxkit_tune_report;


/* Tunes `family` ("copy", "reduce") for `variant` (NULL: the family's
 * default; reduce: "<op>.<type>" as "sum.float32"; copy: "bytes") at the
 * sizes 2^k from n_min to n_max in steps of options->size_step (n counts
 * bytes for copy, elements for reduce), and saves each size's result as it
 * comes. options and report may be NULL. "gemm" tunes ptxkit_gemm's tile
 * configuration: variant "<type>.<class>" ("float32.square", "float64.small_m",
 * classes as ptxkit_gemm describes), n = m * n * k; its results are named
 * parameters (best_text) and its "GB/s" are GFLOP/s. */
ptxkit_status ptxkit_tune(ptxkit_context *ctx, const char *family, const char *variant, size_t n_min, size_t n_max,
                          const ptxkit_tune_options *options, ptxkit_tune_report *report);

/* The tuning database, as data: what `ptxkit tune --export/--import` moves
 * between machines, or an application ships with itself. One entry is the
 * configuration measured best for (GPU, driver, NVRTC, ptxkit version;
 * family, variant, size bucket). */
#define PTXKIT_TUNE_MAX_PARAMS 8   /* a tunable's parameters (ptxkit_tunable_add_param) */
typedef struct ptxkit_tune_entry {
    char device[128];     /* the key: the GPU's name, */
    int cc;               /* compute capability (90 for 9.0), */
    int sm_count;
    int driver;           /* driver version (13000), */
    int nvrtc_major, nvrtc_minor;
    char library[16];     /* and the ptxkit version ("0.2.0") it was measured with */
    char family[64];      /* a built-in family ("reduce"), or an application tunable's key */
    char variant[40];     /* "sum.float32"; "-" for a tunable */
    int log2n;            /* the size bucket: floor(log2 n) */
    /* The configuration, in the tuning problem's names (the tuning record's
     * too): a family tuned through launch options (copy, reduce, scan,
     * transpose) has exactly "block", "items", "vec", "bpsm" and "load" (a
     * ptxkit_load_op), 0 for its built-in default; gemm and an
     * application's tunable their parameters (gemm: BM, BN, BK, TM, TN,
     * WARPS_M, STAGES, SPLIT_K), at most PTXKIT_TUNE_MAX_PARAMS. */
    ptxkit_config config;
    double gbs;           /* the choice's throughput when it was tuned */
    double default_gbs;   /* the built-in defaults', same run */
    long long when;       /* seconds since the epoch */
    int reserved[8];      /* zero: later 0.x releases give these meaning */
} ptxkit_tune_entry;


/* The tuning record: every configuration tuning runs measured (the
 * database keeps the winners), one line each, in the order measured; a later
 * run of the same problem reuses its lines instead of re-timing. */
typedef enum ptxkit_tune_outcome {
    PTXKIT_TUNE_OK = 0,   /* timed */
    PTXKIT_TUNE_WRONG,    /* the output check failed */
    PTXKIT_TUNE_FAILED    /* did not build or launch (note says why) */
} ptxkit_tune_outcome;
typedef struct ptxkit_tune_record_line {
    ptxkit_tune_entry key;    /* device to library, family, variant; the rest zero */
    unsigned long long code;  /* hash of the problem's kernel code: an edited kernel is re-timed */
    size_t n;                 /* the exact size measured */
    ptxkit_config config;     /* the configuration, by parameter name (as ptxkit_tune_entry's) */
    ptxkit_tune_outcome outcome;
    double ms;                /* median time per call (PTXKIT_TUNE_OK) */
    double gbs;               /* 0 where the problem counts no bytes */
    int samples;              /* timed batches behind ms */
    long long when;           /* seconds since the epoch */
    char note[160];
    int reserved[8];
} ptxkit_tune_record_line;

/* ---- tuning the application's kernels ----------------------------------
 *
 * A tunable names a problem (its key, e.g. "myapp.saxpy.float32") and
 * declares a parameter space: named parameters, each a list of candidate
 * values whose first is the default, and validity rules. The tuner times a
 * launch callback for configurations of that space at given sizes, checks
 * each one's output with an optional check callback, and persists the
 * fastest per GPU and size bucket (floor(log2 n)) in the tuning database,
 * beside the built-in families' entries (which are tunables too). The
 * application reads the tuned configuration back with one call. */

typedef struct ptxkit_tunable ptxkit_tunable;

#define PTXKIT_TUNE_MAX_VALUES 16

/* The key names the problem in the database: letters, digits, "._-". */
ptxkit_status ptxkit_tunable_create(ptxkit_context *ctx, const char *key, ptxkit_tunable **out);
/* NULL is a no-op. */
void ptxkit_tunable_destroy(ptxkit_tunable *tunable);
/* A parameter: an injected define's name and its candidate values (the
 * first is the default). */
ptxkit_status ptxkit_tunable_add_param(ptxkit_tunable *tunable, const char *name, const long long *values, int count);

typedef enum ptxkit_tune_rule {
    PTXKIT_RULE_POWER_OF_TWO = 0,  /* a is a power of two */
    PTXKIT_RULE_PRODUCT_AT_MOST,   /* a * b <= limit (b NULL: a <= limit) */
    PTXKIT_RULE_PRODUCT_AT_MOST_N, /* a * b <= n, the size being tuned (b NULL: a <= n) */
    PTXKIT_RULE_DIVIDES,           /* a divides b (b NULL: a divides limit) */
    PTXKIT_RULE_MAX_THREADS        /* a (threads per block) within the device and kernel limit */
} ptxkit_tune_rule;

/* A built-in validity rule over parameters a and b. */
ptxkit_status ptxkit_tunable_add_rule(ptxkit_tunable *tunable, ptxkit_tune_rule rule, const char *a, const char *b,
                                      long long limit);
/* A validity callback: nonzero when config is legal for size n. */
typedef int (*ptxkit_tune_valid_fn)(const ptxkit_config *config, size_t n, void *user);
ptxkit_status ptxkit_tunable_valid_set(ptxkit_tunable *tunable, ptxkit_tune_valid_fn valid, void *user);

/* Binds the tunable to a program's kernel: the tuner then compiles each
 * configuration's kernel ahead, in parallel, with the configuration's
 * parameters as defines (plus `defines`, fixed), and hands it to launch.
 * Without a program, launch gets kernel NULL and compiles what it needs. */
ptxkit_status ptxkit_tunable_kernel_set(ptxkit_tunable *tunable, ptxkit_program *program, const char *entry,
                                        const char *const *defines, int define_count);

/* Launches the work for one configuration at size n on stream (no
 * synchronization: the tuner times it with events). */
typedef ptxkit_status (*ptxkit_tune_launch_fn)(ptxkit_kernel *kernel, const ptxkit_config *config, size_t n,
                                               ptxkit_stream *stream, void *user);
/* Checks one configuration: runs it once (kernel as for launch) on inputs of
 * the application's choice, with the output poisoned first so that a
 * configuration that skips part of it is caught, waits for it, and sets
 * *ok nonzero when the output is right. Called before a configuration is
 * timed; a wrong one is never chosen. Without a check every configuration
 * that launches is trusted. */
typedef ptxkit_status (*ptxkit_tune_check_fn)(ptxkit_kernel *kernel, const ptxkit_config *config, size_t n, int *ok,
                                              void *user);
ptxkit_status ptxkit_tunable_launch_set(ptxkit_tunable *tunable, ptxkit_tune_launch_fn launch, void *user);
ptxkit_status ptxkit_tunable_check_set(ptxkit_tunable *tunable, ptxkit_tune_check_fn check, void *user);
/* Bytes one call moves at size n (for GB/s in reports); optional. */
ptxkit_status ptxkit_tunable_bytes_set(ptxkit_tunable *tunable, double (*bytes)(size_t n, void *user), void *user);

/* Searches the space at each of sizes[0..size_count) within
 * options->budget_s (shared, as for ptxkit_tune) and saves each size's
 * winner as it comes. report may be NULL. */
ptxkit_status ptxkit_tunable_tune(ptxkit_tunable *tunable, const size_t *sizes, int size_count,
                                  const ptxkit_tune_options *options, ptxkit_tune_report *report);

/* The configuration to run at size n, into *out: the database's entry for
 * this GPU and n's bucket (or a neighbouring bucket within two), else the
 * defaults; every parameter of the space is set. With PTXKIT_TUNE=auto a
 * missing bucket of 2^16 or more is tuned first (launch must be set).
 * *tuned receives whether it came from the database (may be NULL). Read
 * the values with ptxkit_config_get, pass them to the kernel with
 * ptxkit_config_defines_get. */
ptxkit_status ptxkit_tunable_config_get(ptxkit_tunable *tunable, size_t n, ptxkit_config *out, int *tuned);

/* ==== experimental tier ==================================================
 *
 * Compiled only where PTXKIT_EXPERIMENTAL is defined before this header is
 * included. NOT STABLE: these declarations may change or go away in any
 * release, patch releases included, and are not covered by the soname's
 * promise (README, "Versions and ABI"). They are the ptxkit command's
 * benchmark switches and measuring hooks, and interfaces whose shape is
 * still moving; an application that uses them pins the exact library
 * version, as zstd's ZSTD_STATIC_LINKING_ONLY asks. */
#ifdef PTXKIT_EXPERIMENTAL

/* ---- experimental: autotuning ------------------------------------------- */

ptxkit_status ptxkit_tune_report_create(ptxkit_tune_report **out);

void ptxkit_tune_report_destroy(ptxkit_tune_report *report);

/* The family's name or the tunable's key, and the variant ("-" for tunables). */
const char *ptxkit_tune_report_family_get(const ptxkit_tune_report *report);

const char *ptxkit_tune_report_variant_get(const ptxkit_tune_report *report);

/* The sizes tuned, and the index-th one's result (NULL past the last). */
int ptxkit_tune_report_size_count_get(const ptxkit_tune_report *report);

const ptxkit_tune_result *ptxkit_tune_report_result_get(const ptxkit_tune_report *report, int index);

/* The whole call's wall time, and the part spent compiling (in parallel). */
double ptxkit_tune_report_seconds_get(const ptxkit_tune_report *report);

double ptxkit_tune_report_compile_seconds_get(const ptxkit_tune_report *report);

/* The database file written ("" when none), and why not or what was replaced. */
const char *ptxkit_tune_report_database_get(const ptxkit_tune_report *report);

const char *ptxkit_tune_report_database_note_get(const ptxkit_tune_report *report);

/* The tuning record read or appended to (*path "" when none), and how
 * many of this problem's configurations were found in it and appended. Any
 * output may be NULL. */
ptxkit_status ptxkit_tune_report_record_get(const ptxkit_tune_report *report, const char **path, int *loaded, int *appended);

/* The variants compiled or loaded ahead, and the compile threads used. Any
 * output may be NULL. */
ptxkit_status ptxkit_tune_report_prepared_get(const ptxkit_tune_report *report, int *kernels, int *threads);

/* Name of the index-th tunable family; NULL past the last. */
const char *ptxkit_tune_family_name_get(int index);

/* ptxkit_tune at an explicit list of sizes (1..PTXKIT_TUNE_MAX_SIZES of
 * them, any order; n as ptxkit_tune counts it) instead of a range. */
ptxkit_status ptxkit_tune_sizes_run(ptxkit_context *ctx, const char *family, const char *variant, const size_t *sizes,
                                int size_count, const ptxkit_tune_options *options, ptxkit_tune_report *report);

/* Whether ptxkit_tune takes `variant` (NULL: the default) for `family`,
 * without a context: SUCCESS, NOT_FOUND for an unknown family,
 * INVALID_ARGUMENT for a variant it does not take, the reason in
 * ptxkit_last_error(). */
ptxkit_status ptxkit_tune_variant_check(const char *family, const char *variant);

/* The database's file: PTXKIT_TUNE_DB, else tune.db in the state directory
 * (PTXKIT_STATE_DIR, else $XDG_STATE_HOME/ptxkit, else
 * ~/.local/state/ptxkit): tuning data are state, which purging or disabling
 * the kernel cache keeps. Empty when no home directory can be found and
 * PTXKIT_TUNE_DB is unset. */
ptxkit_status ptxkit_tune_db_path_get(char *buf, size_t size);

/* Every entry of the database at path (NULL: ptxkit_tune_db_path_get) in a
 * malloc'd array (free with ptxkit_tune_entries_free; NULL when empty); a
 * missing file holds none. A damaged file is CORRUPT, its reason in
 * ptxkit_last_error(). */
ptxkit_status ptxkit_tune_db_read(const char *path, ptxkit_tune_entry **entries, size_t *count);

void ptxkit_tune_entries_free(ptxkit_tune_entry *entries);

/* Merges entries into the database at path (NULL: the default) under its
 * lock, as a tuning run stores: an entry replaces the one of the same key,
 * family, variant and bucket. All or nothing: an entry the database cannot
 * hold as given (empty or over-long names, control characters, reserved
 * fields set, a field out of the file's range: every field reads back as
 * given, gbs and default_gbs to two decimals) is INVALID_ARGUMENT naming its
 * index and field, and nothing is stored. *total (may
 * be NULL) receives the database's entry count afterwards; *rewritten (may
 * be NULL) 1 when the file was damaged (ptxkit_tune_db_read would refuse it)
 * and was kept aside as "<file>.bad" (replacing an older one) and rewritten
 * with the entries given alone, else 0. */
ptxkit_status ptxkit_tune_db_merge(const char *path, const ptxkit_tune_entry *entries, size_t count, size_t *total,
                                   int *rewritten);

/* The key fields (device to library) of an entry a tuning run on this
 * context would store, the rest zero: which entries are this GPU's. */
ptxkit_status ptxkit_tune_key_get(ptxkit_context *ctx, ptxkit_tune_entry *key);

/* Whether a call of a built-in family ("copy", "reduce", "scan",
 * "transpose") with `config` (NULL: the defaults; names as the op reads
 * them) at size n runs the tuning database's configuration: *tuned 1 when the call takes the JIT path,
 * leaves a field to the database and the database has an entry for
 * (family, variant) at n's bucket or a neighbouring one (PTXKIT_TUNE not
 * off), else 0 (the built-in defaults). variant and n as ptxkit_tune counts
 * them (reduce, scan: "<op>.<type>", elements; copy: "bytes", bytes;
 * transpose: as ptxkit_transpose names its padded kind's entry, rows x
 * cols rounded to a power of two). Reads only: with PTXKIT_TUNE=auto a
 * bucket not yet tuned reads 0, though the call itself may tune it first.
 * gemm has ptxkit_gemm_config_get. INVALID_ARGUMENT for a NULL argument.
 * Any thread; nothing is launched, no stream is used. */
ptxkit_status ptxkit_tune_source_get(ptxkit_context *ctx, const char *family, const char *variant, size_t n,
                                     const ptxkit_config *config, int *tuned);

/* "ok", "wrong", "failed"; "?" out of range. */
const char *ptxkit_tune_outcome_name(ptxkit_tune_outcome outcome);

/* The record's file: PTXKIT_TUNE_RECORD, else the database's path with
 * ".db" replaced by ".record.jsonl"; empty when PTXKIT_TUNE_RECORD=off or
 * there is no database path either. */
ptxkit_status ptxkit_tune_record_path_get(char *buf, size_t size);

/* Every readable line of the record at path (NULL: ptxkit_tune_record_path_get)
 * in a malloc'd array (free with ptxkit_tune_record_free; NULL when empty);
 * *ignored (may be NULL) counts the damaged lines skipped. A missing file
 * holds none; one too large to read is CORRUPT. */
ptxkit_status ptxkit_tune_record_read(const char *path, ptxkit_tune_record_line **lines, size_t *count,
                                      size_t *ignored);

void ptxkit_tune_record_free(ptxkit_tune_record_line *lines);

/* Appends lines to the record at path (NULL: ptxkit_tune_record_path_get), as
 * a tuning run would have measured them: how `ptxkit tune --import-t4`
 * seeds a record from another machine or from Kernel Tuner's T4 results.
 * Every line is checked first (family and parameter names non-empty, of
 * letters, digits, '_', '.' and '-'; config.count within
 * PTXKIT_TUNE_MAX_PARAMS; n > 0; figures finite and not negative) and
 * none is written when one fails (INVALID_ARGUMENT naming it); IO when the
 * file cannot be written. Each line is appended whole under the file's
 * lock, so tuners running at the same time are safe; a line equal to one
 * already there is appended again (the last one counts). */
ptxkit_status ptxkit_tune_record_append(const char *path, const ptxkit_tune_record_line *lines, size_t count);

/* The code hash (ptxkit_tune_record_line.code) under which a tuning run of
 * a built-in `family` (variant as ptxkit_tune takes it) records and reuses
 * its timings in this build: lines appended with it are taken as measured
 * by such a run. Errors as ptxkit_tune_variant_check; no context needed;
 * any thread. */
ptxkit_status ptxkit_tune_code_get(const char *family, const char *variant, unsigned long long *code);

/* ---- experimental: `ptxkit bench blocks`: the tuner's measurement of a grid --- */

/* The families tuned through their launch options (ptxkit_tune's families
 * but gemm): the index-th name, NULL past the last. */
const char *ptxkit_tune_blocks_family_get(int index);

typedef struct ptxkit_tune_blocks_variant {
    char name[40];          /* the variant, spelled out (the default's name when NULL was given) */
    const char *unit;       /* what n counts: "bytes", "elements" */
    int bench_log2;         /* the default n is 2^bench_log2 */
    int copies;             /* reads and writes its bytes (its ceiling is a copy) */
} ptxkit_tune_blocks_variant;

/* Parses variant (NULL: the default) of family; NOT_FOUND for a family not
 * tuned through launch options, INVALID_ARGUMENT; the reason in
 * ptxkit_last_error(). */
ptxkit_status ptxkit_tune_blocks_variant_get(const char *family, const char *variant,
                                                ptxkit_tune_blocks_variant *out);

/* Bytes the operation must move at n (for GB/s and the ceiling). */
ptxkit_status ptxkit_tune_blocks_bytes_get(const char *family, const char *variant, size_t n, size_t *bytes);

/* The block sizes and items-per-thread values the tuner searches on this
 * context's GPU (up to 16 each). */
ptxkit_status ptxkit_tune_blocks_space_get(ptxkit_context *ctx, const char *family, const char *variant, int *blocks,
                                          int *block_count, int *items, int *item_count);

typedef struct ptxkit_tune_blocks_measured {
    double gbs, ms, min_ms, max_ms; /* all 0 where the configuration is illegal, fails or is wrong */
    int samples;
} ptxkit_tune_blocks_measured;

/* Times (blocks[i], items[i]) for i < count at n, the other parameters at
 * their defaults, as the tuner does (compiled ahead, checked against the
 * defaults' output); *default_gbs the built-in defaults. */
ptxkit_status ptxkit_tune_blocks_measure(ptxkit_context *ctx, const char *family, const char *variant, size_t n,
                                            const int *blocks, const int *items, int count,
                                            ptxkit_tune_blocks_measured *out, double *default_gbs,
                                            ptxkit_tune_progress_fn progress, void *progress_user);

/* ---- experimental: the tuning report ------------------------------------------- */

/* Why the record was not used, or what went wrong with it ("" when nothing
 * to say, and for NULL). */
const char *ptxkit_tune_report_record_note_get(const ptxkit_tune_report *report);

#endif /* PTXKIT_EXPERIMENTAL */

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif

#endif
