/* The benchmarks' one harness. A benchmark declares its table as columns
 * that say where each cell comes from (a cell of the case's own, the
 * median time, the rate, the ceiling it is a ratio to, the percent of it,
 * the spread) and runs cases: each gives its setup, one timed repetition
 * on a stream, its teardown (checks, cells known only after timing), the
 * work one repetition does and the ceiling or peer measured in the same
 * run. The harness warms up, times with events, takes the statistics,
 * computes the rate and the ratio and writes the row, the same way for
 * every benchmark, so their figures and reports stay comparable. */
#ifndef PTXKIT_BENCH_HARNESS_H
#define PTXKIT_BENCH_HARNESS_H

#include <stdbool.h>
#include <stddef.h>

#include "cli.h"

typedef enum bench_cell {
    BENCH_TEXT,    /* the case's next cell: its key's cells, then those its teardown wrote */
    BENCH_TIME_US, /* the median, in microseconds */
    BENCH_TIME_MS, /* the median, in milliseconds */
    BENCH_RATE,    /* work / median per second, in the bench's rate_unit */
    BENCH_CEILING, /* the rate the row is a ratio to */
    BENCH_PERCENT, /* 100 x rate / ceiling */
    BENCH_STATS,   /* samples, min_us, max_us: three columns (STATS_COLUMNS) */
} bench_cell;

typedef struct bench_column {
    const char *header;  /* NULL: left out (the columns of an option not given) */
    bench_cell cell;
    const char *format;  /* a number's printf format ("%.1f"); BENCH_TEXT: its type, "s" or "n" */
    const char *missing; /* CEILING, PERCENT: the cell of a timed row without a ceiling; NULL: "-" */
} bench_column;

/* Columns in a table's list: a cell of the case's own ("s" or "n"), a
 * measured number in a printf format, the spread. */
#define COL_TEXT(header, type) {(header), BENCH_TEXT, (type), NULL}
#define COL(header, cell, format) {(header), (cell), (format), NULL}
#define COL_STATS {"samples", BENCH_STATS, NULL, NULL}

typedef enum bench_timing {
    /* time_samples_ms: warm-up, then the runs back to back on a fresh stream,
     * an event between each two (launch gaps hidden, as in a pipeline) */
    BENCH_BACK_TO_BACK = 0,
    /* on `stream` (whose attributes, such as an access window, apply): after
     * the warm-up, each run between its own two events, waited for */
    BENCH_EACH_SYNCED,
} bench_timing;

enum { BENCH_MAX_COLUMNS = 24 };

typedef struct bench {
    const char *command; /* "bench copy" */
    ptxkit_context *ctx;
    out_format format;
    const char *svg_path;
    cli_table *table;
    int warmup, reps;
    double rate_unit;    /* what BENCH_RATE counts: 1e9 (GB/s of bytes) unless set (1e12: TFLOP/s) */
    bench_timing timing;
    ptxkit_stream *stream; /* BENCH_EACH_SYNCED's */
    bench_column columns[BENCH_MAX_COLUMNS];
    int column_count;
} bench;

/* What one case measured; the teardown may set the ceiling (one measured
 * after the case, as a cache of ceilings by size does) and write cells. */
typedef struct bench_result {
    bool timed;
    bool complete; /* its teardown ran: a row can be written */
    time_stats ts;
    double rate, ceiling;
    char cells[512]; /* the teardown's cells, tab-separated, in the order of the TEXT columns after the key's */
} bench_result;

typedef struct bench_case bench_case;
struct bench_case {
    const char *key; /* the row's first TEXT cells, tab-separated (what names it) */
    ptxkit_status (*setup)(bench *b, void *arg);     /* NULL, or before the warm-up: fills, a check run */
    timed_fn run;                                    /* one timed repetition on the given stream */
    /* NULL: b->timing; else the case's own way of filling b->reps samples (ms) */
    ptxkit_status (*time)(bench *b, const bench_case *c, float *samples);
    ptxkit_status (*teardown)(bench *b, void *arg, bench_result *r); /* NULL, or after timing */
    void *arg;
    double work;    /* bytes (or flops) one repetition moves; the rate is work / median */
    double ceiling; /* the rate of the ceiling or peer it is a ratio to; 0: none */
    /* a run that fails still makes a row, "-" where the measurements would
     * be (the teardown is called with r->timed false): a configuration the
     * GPU cannot run is a row, not the end of a sweep */
    bool row_on_failure;
};

/* Opens the context on common's device (of compute capability arch or
 * newer, naming `what` where not, when arch > 0), filling *dev where
 * given; false after a message (the command exits 1). */
bool bench_begin(bench *b, const char *command, const cli_common *common, int warmup, int reps, int arch,
                 const char *what, ptxkit_device_info *dev);
/* The table: headers and types from the columns (those with a NULL header
 * left out, BENCH_STATS as its three). */
void bench_table(bench *b, const char *title, const bench_column *columns, int count);
/* Times one case (nothing when st is a failure: st is returned) and adds
 * its row; *r, where given, receives what it measured. */
ptxkit_status bench_run(bench *b, ptxkit_status st, const bench_case *c, bench_result *r);
/* The same without the row (a ceiling whose row comes last). */
ptxkit_status bench_measure(bench *b, ptxkit_status st, const bench_case *c, bench_result *r);
/* The samples of one case the bench's way (b->timing, b->warmup, b->reps). */
ptxkit_status bench_time(bench *b, timed_fn run, void *arg, float *samples);
/* work per second of ts's median, in b->rate_unit */
double bench_rate(const bench *b, double work, const time_stats *ts);
/* A row from measurements taken elsewhere (a ceiling's own timing). */
void bench_row(bench *b, const char *key, const bench_result *r);
/* Prints st's failure, then the table (and keeps it for the reports);
 * returns the exit status, 0 or 1. The context stays open. */
int bench_print(bench *b, ptxkit_status st);

#endif
