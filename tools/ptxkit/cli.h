/* Shared pieces of the ptxkit command: output tables, timing, ceilings. */
#ifndef PTXKIT_CLI_H
#define PTXKIT_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "ptxkit.h"

/* What standard output shows: the aligned text table (with any lines
 * around it), the table alone as CSV or JSON (--csv, --json), or nothing
 * but a report (a report file given as -). */
typedef enum out_format { OUT_TABLE = 0, OUT_CSV, OUT_JSON, OUT_NONE } out_format;

/* Options every GPU command takes: --device N, --csv, --json, --svg FILE,
 * and the report files --json FILE, --csv FILE, --md FILE. */
typedef struct cli_common {
    int device;
    out_format format;
    const char *svg_path;   /* NULL unless --svg */
    /* report files (report.h), NULL unless given; "-" is standard output */
    const char *json_path, *csv_path, *md_path;
} cli_common;

/* Filled by args_parse (args.h): --json and --csv take a FILE when the next
 * argument is - or a path (holds '.' or '/'), or as --json=FILE; alone they
 * print the table to standard output. --md FILE always takes one. Two
 * flags for standard output conflict. */

/* Checked argument parsing, done before any GPU is opened so that a usage
 * error exits 2 on every machine. The whole text must be the value: no
 * sign where none is allowed, no spaces, no trailing characters. */
bool cli_parse_long(const char *text, long lo, long hi, long *out);
/* A size: N (decimal, a leading 0 included, or 0x hex), 2^K, or N with a K, M or G suffix (2^10,
 * 2^20, 2^30); false when malformed or when it does not fit in size_t. */
bool cli_parse_size(const char *text, size_t *out);
/* A -D define for NVRTC: NAME=VALUE, NAME a C identifier, VALUE non-empty
 * printable ASCII, the whole at most CLI_DEFINE_MAX characters. */
#define CLI_DEFINE_MAX 76
bool cli_parse_define(const char *text);
/* The same, printing "ptxkit COMMAND: OPTION takes ..., not 'TEXT'" on
 * failure (the caller then prints its usage and exits 2). */
bool cli_arg_int(const char *command, const char *option, const char *text, long lo, long hi, int *out);
bool cli_arg_size(const char *command, const char *option, const char *text, size_t lo, size_t hi, size_t *out);

/* Opens the context for a GPU command. On failure prints one line naming
 * the reason to stderr and returns NULL; callers exit 1. */
ptxkit_context *cli_open_context(const char *command, int device);
/* The same for a command whose kernels need compute capability `arch`
 * (80: sm_80) or newer, filling *dev: on an older GPU prints that `what`
 * needs it, closes the context and returns NULL. */
ptxkit_context *cli_open_context_at_least(const char *command, int device, int arch, const char *what,
                                          ptxkit_device_info *dev);

/* A table of text cells printed as aligned text, CSV, JSON or Markdown.
 * A column may declare its type (table_types): 'n' a number (JSON number,
 * null where the cell is no finite number), 's' a string, 'c' a
 * configuration "NAME=VALUE ..." (a JSON object of its parameters, numbers
 * where they are; a parameter at "-" left out). Undeclared columns are
 * numbers where the cell is a JSON number, else strings. */
typedef struct cli_table cli_table;
cli_table *table_new(const char *title, int columns, const char *const *headers);
void table_types(cli_table *t, const char *types);  /* 'n', 's', 'c' or '-' (undeclared) per column */
void table_add(cli_table *t, ...);          /* exactly `columns` const char * cells */
void table_addf(cli_table *t, const char *fmt, ...); /* one row; cells separated by '\t' */
/* Prints to out, and keeps a copy for the report files when asked for. */
void table_print(const cli_table *t, out_format format, FILE *out);
void table_emit(const cli_table *t, out_format format, FILE *out);  /* prints only */
void table_print_markdown(const cli_table *t, FILE *out);
cli_table *table_copy(const cli_table *t);
void table_free(cli_table *t);
/* {"id", "title", "note" (where set), "keys": [NAME], "metric": NAME|null,
 * "columns": [{"name", "type"}], "rows": [{NAME: value}]}: names as
 * column_name writes them; keys the columns before the metric, which
 * `ptxkit report compare` matches rows by. columns is ignored. A cJSON *. */
struct cJSON;
struct cJSON *table_to_json(const cli_table *t, bool columns);
/* A stable name for the table in reports (default: the report's kind, as
 * "bench_reduce"), and a note on what its rows rest on (a file's state),
 * kept out of the title so the title is fixed text. */
void table_id(cli_table *t, const char *id);
void table_note(cli_table *t, const char *note);
const char *table_get_id(const cli_table *t);
/* A header as a report's column name: lower case, runs of other characters
 * as one '_' ("GBps" gbps, "us/launch" us_launch). */
void column_name(const char *header, char *out, size_t size);
/* The measured (lower is better) column, -1 when none: see table_to_json. */
int table_metric_column(const cli_table *t);
int table_columns(const cli_table *t);
int table_rows(const cli_table *t);             /* not counting the headers */
const char *table_cell(const cli_table *t, int row, int column); /* row 0: the headers */
/* For report.c: keeps a copy of t for the report files. */
void report_keep_table(const cli_table *t);

/* What a timed row reports beside its median: how many timed runs, and the
 * fastest and the slowest (nvbench's samples and spread). */
typedef struct time_stats {
    int samples;
    double min_ms, median_ms, max_ms;
} time_stats;

/* The spread columns every benchmark table ends with, typed "nnn", and
 * their cells for table_addf ("\t<samples>\t<min_us>\t<max_us>"; "\t-\t-\t-"
 * for a row that is not timed, such as an unsupported step). */
#define STATS_COLUMNS "samples", "min_us", "max_us"
#define STATS_TYPES "nnn"
const char *stats_cells(const time_stats *s, char *buf, size_t size);

/* Times fn with events on one stream: `warmup` untimed calls, then `reps`
 * timed calls each between its own pair of events; *median_ms receives the
 * median (and *stats, when given, the count, fastest and slowest). fn
 * returns a status; a failure stops timing and is returned. */
typedef ptxkit_status (*timed_fn)(ptxkit_context *ctx, ptxkit_stream *stream, void *arg);
ptxkit_status time_median_ms(ptxkit_context *ctx, timed_fn fn, void *arg, int warmup, int reps,
                             float *median_ms);
ptxkit_status time_stats_ms(ptxkit_context *ctx, timed_fn fn, void *arg, int warmup, int reps, time_stats *stats);
/* The same timing, keeping the reps intervals (ms, in call order), and the
 * statistics of `count` intervals (sorts them in place). */
ptxkit_status time_samples_ms(ptxkit_context *ctx, timed_fn fn, void *arg, int warmup, int reps, float *times);
/* n functions timed in turns on one stream, back to back with an event
 * between each two runs, so that all run at the same clocks (a GPU at its
 * power cap slows within a fraction of a second): `warmup` untimed rounds,
 * then `reps` rounds, round i starting at function i % n (with two, each
 * runs after the other as often as after itself). times[f * reps + i]:
 * function f's run of round i. time_samples_ms is the case of one. */
ptxkit_status time_turns_ms(ptxkit_context *ctx, int n, const timed_fn *fns, void *const *args, int warmup, int reps,
                            float *times);
void stats_of_samples(float *times, int count, time_stats *stats);

/* Ceilings measured in the same run, counting bytes moved:
 * cuMemcpyDtoD of `bytes` (read + written), and a streaming int4 read of
 * `bytes` whose result is written out (read only). stats may be NULL. */
ptxkit_status measure_dtod_gbs(ptxkit_context *ctx, size_t bytes, double *gbs);
ptxkit_status measure_dtod_stats(ptxkit_context *ctx, size_t bytes, double *gbs, time_stats *stats);
ptxkit_status measure_read_gbs(ptxkit_context *ctx, size_t bytes, double *gbs);
/* The same read over the first `bytes` (whole 16-byte words) of a buffer
 * the caller has filled, its result written to `out` (16 bytes): nothing
 * is allocated or freed between a benchmark's timed rows. */
ptxkit_status measure_read_gbs_in(ptxkit_context *ctx, ptxkit_dptr in, size_t bytes, ptxkit_dptr out, double *gbs);

/* Ceilings by byte count, each measured once by `measure` (measure_read_gbs
 * or measure_dtod_gbs): a benchmark's rows of one size share theirs. */
typedef struct ceiling_cache {
    ptxkit_status (*measure)(ptxkit_context *ctx, size_t bytes, double *gbs);
    size_t bytes[96];
    double gbs[96];
    int count;
} ceiling_cache;
ptxkit_status ceiling_for(ptxkit_context *ctx, ceiling_cache *c, size_t bytes, double *gbs);

/* Fills device memory with pseudo-random 32-bit words (never zeros). */
ptxkit_status fill_random_words(ptxkit_context *ctx, ptxkit_dptr dst, size_t bytes, uint32_t seed);

/* The context's device properties (ptxkit_device_info_get), in a copy the
 * calling thread keeps until its next call. */
const ptxkit_device_info *cli_device(ptxkit_context *ctx);

/* The launch parameters the bench and ladder commands parse (--path,
 * --block, --items, --vector, --blocks-per-sm, --load): 0 for "tuned or
 * default", as the ops' parameters read. */
typedef struct cli_launch {
    ptxkit_path path;
    ptxkit_load_op load_op;
    int block_size, vector_bytes, items_per_thread, blocks_per_sm;
} cli_launch;
/* Them as the ptxkit_config an op takes, into *out (returned): the nonzero
 * ones, --items under the op's name for it (items_name: "loads_in_flight",
 * "vectors_per_thread", "unroll"; NULL: the op has none). */
const ptxkit_config *cli_launch_config(const cli_launch *o, const char *items_name, ptxkit_config *out);

/* A row's config_source column: "tuned" when the call of family/variant at
 * n with config runs the tuning database's configuration
 * (ptxkit_tune_source_get), else "default". */
#define CONFIG_SOURCE_COLUMN "config_source"
const char *config_source(ptxkit_context *ctx, const char *family, const char *variant, size_t n,
                          const ptxkit_config *config);

/* Milliseconds on the monotonic clock (host-side timings). */
double cli_now_ms(void);

/* The helper program `name` (e.g. "ptxkit-cub-reduce"): $env_var when set
 * (it must be executable), else beside this executable, in ../bench of a
 * build tree, or in the installed libexec/ptxkit. False when none is found. */
bool cli_find_helper(const char *name, const char *env_var, char *path, size_t size);
/* Whether path names a regular file (following links); checked before a
 * path from the environment is handed to dlopen, which would block on a FIFO. */
bool cli_regular_file(const char *path);

/* Writes the names of the set flags, comma-separated, into out. */
void cli_join_names(char *out, size_t size, const bool *flags, int count, const char *(*name_of)(int));

/* Prints "ptxkit NAME: status: " and the thread's last error to stderr (ctx
 * plays no part: the message is the thread's). */
void cli_fail(const char *command, ptxkit_context *ctx, ptxkit_status st);

/* Whether stdout is a terminal (progress lines only then). */
bool cli_is_tty(void);

/* Subcommands of `ptxkit bench`: each registers a line in bench.c. */
typedef int (*bench_fn)(int argc, char **argv);
#endif
