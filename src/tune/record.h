/* The tuning record: every configuration a tuning run measured, kept beside
 * the tuning database so that a later run of the same problem resumes
 * instead of re-timing (in the spirit of Kernel Tuner's cache files). The
 * database keeps one winner per size bucket; the record keeps everything
 * that was learnt on the way to it.
 *
 * Format: JSON lines, one configuration per line, appended as it is
 * measured (one write(2) under flock, so concurrent tuners interleave whole
 * lines). Every line is a flat object with a fixed key order; the last
 * field is the XXH3-64 of the bytes before it:
 *
 *   {"format":1,"device":"NVIDIA H100 80GB HBM3","cc":90,"sms":132,
 *    "driver":13000,"nvrtc":"13.0","lib":"0.1.0","family":"reduce",
 *    "variant":"sum.float32","code":"<16 hex>","n":16777216,
 *    "params":{"block":256,"items":4,"vec":16,"bpsm":0,"load":0},
 *    "outcome":"ok","ms":0.0254,"gbs":2642.51,"samples":5,
 *    "when":1763850000,"note":"","xxh3":"<16 hex>"}
 *
 * "code" is a hash of the problem's kernel code (the library's embedded
 * sources for a family; the program's text, options, entry and fixed
 * defines for an application tunable), so an edited kernel is re-timed.
 * A line is reused only where device, compute capability, SM count,
 * driver, NVRTC and library (the database's key), family, variant, code, n
 * and the parameter names all match; other lines stay in the file for other
 * GPUs and builds and `ptxkit tune --show`.
 *
 * The reader ignores, and counts, any line that is torn (no newline at the
 * end of the file), fails its checksum, is too long, or lacks a field; the
 * writer starts a new line when the file ends in a torn one. The library
 * writes and reads this with plain stdio: it links no JSON library. */
#ifndef PTXKIT_TUNE_RECORD_H
#define PTXKIT_TUNE_RECORD_H

#include <stdbool.h>
#include <stddef.h>

#include "tuned/db.h"
#include "tune/problem.h"

#define TUNE_RECORD_FORMAT 1
#define TUNE_RECORD_MAX_LINE 4096
#define TUNE_RECORD_MAX_FILE (256u << 20) /* a larger file is not read (delete it to start over) */

typedef enum tune_record_outcome {
    TUNE_RECORD_OK = 0,  /* timed: ms (and gbs where the problem counts bytes) */
    TUNE_RECORD_WRONG,   /* the output check failed */
    TUNE_RECORD_FAILED   /* did not build or launch, deterministically (note says why) */
} tune_record_outcome;

typedef struct tune_record_line {
    tune_db_key key;
    char family[64];
    char variant[40];
    unsigned long long code;
    size_t n;
    int param_count;
    char names[TUNE_MAX_PARAMS][TUNE_PARAM_NAME];
    long long values[TUNE_MAX_PARAMS];
    tune_record_outcome outcome;
    double ms;           /* median time per call; 0 unless ok */
    double gbs;          /* 0 where the problem counts no bytes */
    int samples;         /* timed batches behind ms */
    long long when;      /* seconds since the epoch */
    char note[160];
} tune_record_line;

typedef struct tune_record {
    tune_record_line *lines;
    size_t count, capacity;
    size_t ignored;      /* damaged lines skipped by the last load */
} tune_record;

void tune_record_init(tune_record *r);
void tune_record_clear(tune_record *r);

const char *tune_record_outcome_name(tune_record_outcome o);

/* The record's path: PTXKIT_TUNE_RECORD (a path; "off" disables the
 * record), else the database's path with ".db" replaced by ".record.jsonl"
 * (<state dir>/tune.record.jsonl). False, with an empty path, when off or
 * when there is no database path either. */
bool tune_record_default_path(char *buf, size_t size);

/* One line, newline included, into buf; its length, or 0 when it does not
 * fit (the caller then skips it). */
size_t tune_record_format(const tune_record_line *line, char *buf, size_t size);

/* Parses one line (without its newline); false when it is damaged or of
 * another format (the reader then skips it). */
bool tune_record_parse(const char *text, size_t len, tune_record_line *out);

/* Parses a whole file's text, appending the lines that match `filter` (all
 * when NULL). A filter matches on key, family, variant and code. */
typedef struct tune_record_filter {
    const tune_db_key *key;
    const char *family, *variant;
    unsigned long long code;
} tune_record_filter;
ptxkit_status tune_record_parse_text(const char *text, size_t size, const tune_record_filter *filter, tune_record *out);

/* Reads the file at path (a missing file is an empty record). msg says how
 * many lines were read and ignored, or why the file was not read. */
ptxkit_status tune_record_load(const char *path, const tune_record_filter *filter, tune_record *out, char *msg,
                               size_t msg_size);

/* Appends one line under the file's lock, creating the file and its
 * directories as needed. */
ptxkit_status tune_record_append(const char *path, const tune_record_line *line, char *msg, size_t msg_size);

/* The last line of r for size n whose parameter names are pr's and whose
 * values are p's; NULL when none. */
const tune_record_line *tune_record_find(const tune_record *r, const tune_problem *pr, size_t n, const tune_point *p);

#endif
