/* Report files like nvbench's: --json FILE, --csv FILE, --md FILE (- for
 * standard output), several at once. Every table a command prints is kept
 * and written at exit under a metadata header (device, driver, NVRTC,
 * library, build type, date, the ceilings measured in the run). Only the
 * command links the JSON library (cJSON), never libptxkit. */
#ifndef PTXKIT_REPORT_H
#define PTXKIT_REPORT_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "ptxkit.h"

/* The build's Meson buildtype ("release", "debug", ...). */
const char *report_build_type(void);

/* What the report holds: "bench reduce", "tune --show" (report_set_command
 * sets it from the command line; a command with several kinds of report
 * sets its own). It names the report's schema, schemas/<kind>.schema.json
 * with spaces and "--" as '-'. */
void report_set_kind(const char *kind);
const char *report_kind(void);
/* The kind as a table id ("bench_reduce"): the id of a table that sets none. */
const char *report_default_table_id(void);
/* Whether a report can be written at path (- always): checked by
 * args_parse before any work; false after a message naming it. */
bool report_path_writable(const char *command, const char *path);

/* The command line, for the report's metadata. */
void report_set_command(int argc, char **argv);
/* Destinations (NULL: none, "-": standard output); set by args_parse. */
void report_set_paths(const char *json, const char *csv, const char *md);
bool report_wanted(void);
/* The GPU a command runs on (cli_open_context calls it). */
void report_note_device(ptxkit_context *ctx);
/* The same for a command whose measurements ran in other processes: opens
 * the GPU briefly (nothing noted when it cannot). */
void report_note_device_of(int ordinal);
/* A ceiling measured in this run: name ("dtod", "read"), bytes, GB/s. */
void report_note_ceiling(const char *name, size_t bytes, double gbs);

/* The metadata object (caller owns it). */
cJSON *report_metadata(void);

/* Writes the kept tables to every destination; false (after a message
 * naming the file) when one could not be written. Nothing when no table
 * was kept and the command failed. */
bool report_finish(const char *command, int rc);

/* Writes `doc` as JSON to path ("-": standard output). */
bool report_write_json(const char *command, const char *path, const cJSON *doc);

#endif
