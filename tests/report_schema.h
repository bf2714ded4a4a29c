/* Checks ptxkit's JSON documents against tests/report_schema.json, and a
 * report's CSV and Markdown files against its JSON. Shared by test_cli (the
 * commands that need no GPU) and test_gpu_reports (all of them). */
#ifndef PTXKIT_REPORT_SCHEMA_H
#define PTXKIT_REPORT_SCHEMA_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

/* The schema file, parsed (NULL, with a message, when unreadable). */
cJSON *report_schema_load(const char *path, char *why, size_t why_size);

/* A ptxkit-report/1 document of `command` (a key of the schema's
 * "reports"): its metadata and every table, column by column and row by
 * row. False with the first difference in why. */
bool report_schema_check(const cJSON *schema, const char *command, const cJSON *doc, char *why, size_t why_size);

/* A command's own document (a key of the schema's "documents"). */
bool report_schema_check_document(const cJSON *schema, const char *command, const cJSON *doc, char *why,
                                  size_t why_size);

/* The CSV and Markdown files of the same report: a header row of each
 * table's columns and a line a row (CSV: tables apart by one blank line;
 * Markdown: the metadata list, then each table with its separator row). */
bool report_files_consistent(const cJSON *doc, const char *csv, const char *md, char *why, size_t why_size);

#endif
