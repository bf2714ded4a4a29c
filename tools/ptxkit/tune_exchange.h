/* ptxkit tune's tuning data: --export FILE / --import FILE (- for standard
 * output / input) and --show (the database and the tuning record). */
#ifndef PTXKIT_TUNE_EXCHANGE_H
#define PTXKIT_TUNE_EXCHANGE_H

#include <stdbool.h>
#include <stddef.h>

#include "ptxkit_tune.h"
#include "cli.h"

int tune_export(const char *path);
int tune_import(const char *path);
/* The tuning record as Kernel Tuner's T4 results (below, in tune_exchange.c), and back. */
int tune_export_t4(const char *path);
int tune_import_t4(const char *path);
/* The same for a file without ptxkit's key (Kernel Tuner's): each result
 * as family/variant at size n on the GPU `device` (opened for its key). */
int tune_import_t4_for(const char *path, int device, const char *family, const char *variant, size_t n);
/* A JSON file (- standard input, at most 64 MiB); NULL after a message. */
typedef struct cJSON cJSON;
cJSON *tune_read_json(const char *path);

/* The export's "entries" array for entries[0..count) (NULL when out of
 * memory), and back: every value an import accepts, an export writes
 * exactly (integers of 16 digits or more as strings, GB/s to two decimals),
 * so export -> import -> export is the identity. false (why says which
 * entry and field) for a list that does not read; *entries is then NULL. */
cJSON *tune_export_entries(const ptxkit_tune_entry *entries, size_t count);
bool tune_import_entries(const cJSON *list, ptxkit_tune_entry **entries, size_t *count, char *why, size_t why_size);

/* Prints the tuning database's entries and the tuning record's
 * configurations as two tables (entries of this GPU and build marked *):
 * which 0 both, 1 the database's, 2 the record's. */
int tune_show(int device, out_format format, int which);

/* "2^24" for powers of two, else the number. */
void tune_size_text(size_t n, char *buf, size_t size);
/* A tuning result's configuration as "block_size=512 loads_in_flight=8 ...", or "built-in defaults". */
void tune_options_text(const ptxkit_config *c, char *buf, size_t size);
/* The tuning record at path: its lines (*lines may be NULL: only counted)
 * and one line for a title, "PATH: N configurations, M damaged lines
 * ignored", or why it was not read. */
void record_summary(const char *path, ptxkit_tune_record_line **lines, size_t *count, char *msg, size_t msg_size);

#endif
