/* Checks ptxkit's JSON documents against the installed JSON Schemas
 * (schemas/NAME.schema.json) with tests/validate_report.py, which needs
 * python3-jsonschema. Shared by test_cli (the commands that need no GPU),
 * test_gpu_reports (all of them) and test_report_compare. */
#ifndef PTXKIT_REPORT_VALIDATE_H
#define PTXKIT_REPORT_VALIDATE_H

#include <stdbool.h>

#include <cjson/cJSON.h>

/* The interpreter, the script and the schema directory (argv of the test). */
void report_validate_setup(const char *python, const char *script, const char *schema_dir);
/* Whether python3-jsonschema is there: the checks below are skipped (the
 * caller says so) without it. */
bool report_validator_available(void);
/* The validator's exit status for the document at path: 0 valid, 1 not
 * (its first errors on standard output). kind NULL: the document's own
 * "kind"; schema_file (may be NULL) a schema named by path instead; csv
 * (may be NULL) the same run's CSV report. */
int report_validate_file(const char *path, const char *kind, const char *schema_file, const char *csv);
/* The same for a document in memory. */
int report_validate_doc(const cJSON *doc, const char *kind);

#endif
