/* The tuning record as public data (ptxkit_tune_record_line): read it
 * whole. The file and its checks stay tune/record.c's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/status.h"
#include "tune/record.h"
#include "tuned/lookup.h"

_Static_assert(TUNE_MAX_PARAMS == PTXKIT_TUNE_MAX_PARAMS && TUNE_PARAM_NAME == 32, "record parameters fit the public line");
_Static_assert((int)PTXKIT_TUNE_OK == (int)TUNE_RECORD_OK && (int)PTXKIT_TUNE_WRONG == (int)TUNE_RECORD_WRONG &&
                   (int)PTXKIT_TUNE_FAILED == (int)TUNE_RECORD_FAILED,
               "outcomes agree");

static void key_to_public(const tune_db_key *k, ptxkit_tune_entry *p) {
    snprintf(p->device, sizeof p->device, "%s", k->device);
    p->cc = k->cc;
    p->sm_count = k->sm_count;
    p->driver = k->driver;
    p->nvrtc_major = k->nvrtc_major;
    p->nvrtc_minor = k->nvrtc_minor;
    snprintf(p->library, sizeof p->library, "%s", k->library);
}

ptxkit_status ptxkit_tune_key_get(ptxkit_context *ctx, ptxkit_tune_entry *key) {
    if (!ctx || !key) return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_tune_key_get: NULL argument");
    memset(key, 0, sizeof *key);
    tune_db_key k;
    tune_db_key_for(ctx, &k);
    key_to_public(&k, key);
    return PTXKIT_SUCCESS;
}

const char *ptxkit_tune_outcome_name(ptxkit_tune_outcome outcome) {
    return tune_record_outcome_name((tune_record_outcome)outcome);
}

ptxkit_status ptxkit_tune_record_path(char *buf, size_t size) {
    if (!buf || !size) return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_tune_record_path: no buffer");
    char path[4096];
    if (!tune_record_default_path(path, sizeof path)) path[0] = 0;
    if (strlen(path) >= size) {
        buf[0] = 0;
        return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_tune_record_path: the path needs %zu bytes",
                            strlen(path) + 1);
    }
    memcpy(buf, path, strlen(path) + 1);
    return PTXKIT_SUCCESS;
}

ptxkit_status ptxkit_tune_record_read(const char *path, ptxkit_tune_record_line **lines, size_t *count,
                                      size_t *ignored) {
    if (!lines || !count) return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_tune_record_read: NULL argument");
    *lines = NULL;
    *count = 0;
    if (ignored) *ignored = 0;
    char file[4096], msg[640] = "";
    if (path ? (!path[0] || (size_t)snprintf(file, sizeof file, "%s", path) >= sizeof file)
             : !tune_record_default_path(file, sizeof file))
        return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "no tuning record: %s",
                            path ? "the path is empty or too long" : "PTXKIT_TUNE_RECORD=off, or no database path");
    tune_record r;
    tune_record_init(&r);
    ptxkit_status st = tune_record_load(file, NULL, &r, msg, sizeof msg);
    if (st != PTXKIT_SUCCESS) {
        tune_record_clear(&r);
        return record_error(NULL, st, "%s", msg);
    }
    if (r.count && (*lines = calloc(r.count, sizeof **lines)) == NULL) {
        tune_record_clear(&r);
        return record_error(NULL, PTXKIT_ERROR_OUT_OF_MEMORY, "ptxkit_tune_record_read: %zu lines", r.count);
    }
    for (size_t i = 0; i < r.count; i++) {
        const tune_record_line *l = &r.lines[i];
        ptxkit_tune_record_line *p = &(*lines)[i];
        key_to_public(&l->key, &p->key);
        snprintf(p->key.family, sizeof p->key.family, "%s", l->family);
        snprintf(p->key.variant, sizeof p->key.variant, "%s", l->variant);
        p->code = l->code;
        p->n = l->n;
        p->param_count = l->param_count;
        for (int j = 0; j < l->param_count && j < TUNE_MAX_PARAMS; j++) {
            snprintf(p->param_names[j], sizeof p->param_names[j], "%s", l->names[j]);
            p->param_values[j] = l->values[j];
        }
        p->outcome = (ptxkit_tune_outcome)l->outcome;
        p->ms = l->ms;
        p->gbs = l->gbs;
        p->samples = l->samples;
        p->when = l->when;
        snprintf(p->note, sizeof p->note, "%s", l->note);
    }
    *count = r.count;
    if (ignored) *ignored = r.ignored;
    tune_record_clear(&r);
    return PTXKIT_SUCCESS;
}

void ptxkit_tune_record_free(ptxkit_tune_record_line *lines) { free(lines); }
