/* See report_validate.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "report_validate.h"

static const char *py, *script, *dir;

void report_validate_setup(const char *python, const char *validator, const char *schema_dir) {
    py = python;
    script = validator;
    dir = schema_dir;
}

static int shell(const char *cmd) {
    int status = system(cmd);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

bool report_validator_available(void) {
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "'%s' -c 'import jsonschema' 2>/dev/null", py);
    return shell(cmd) == 0;
}

int report_validate_file(const char *path, const char *kind, const char *schema_file, const char *csv) {
    char cmd[4096];
    int n = snprintf(cmd, sizeof cmd, "'%s' '%s' '%s' '%s'", py, script, dir, path);
    if (kind) n += snprintf(cmd + n, sizeof cmd - (size_t)n, " --kind '%s'", kind);
    if (schema_file) n += snprintf(cmd + n, sizeof cmd - (size_t)n, " --schema '%s'", schema_file);
    if (csv) snprintf(cmd + n, sizeof cmd - (size_t)n, " --csv '%s'", csv);
    fflush(stdout);
    return shell(cmd);
}

int report_validate_doc(const cJSON *doc, const char *kind) {
    char path[64];
    snprintf(path, sizeof path, "/tmp/ptxkit-validate.%d.json", (int)getpid());
    char *text = cJSON_Print(doc);
    FILE *f = fopen(path, "w");
    if (!text || !f) {
        free(text);
        if (f) fclose(f);
        return -1;
    }
    fputs(text, f);
    fclose(f);
    free(text);
    int rc = report_validate_file(path, kind, NULL, NULL);
    remove(path);
    return rc;
}
