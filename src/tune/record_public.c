/* The tuning record as public data (ptxkit_tune_record_line): read it
 * whole. The file and its checks stay tune/record.c's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptxkit_tune.h"
#include "runtime/embedded.h"
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

ptxkit_status ptxkit_tune_record_path_get(char *buf, size_t size) {
    if (!buf || !size) return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_tune_record_path_get: no buffer");
    char path[4096];
    if (!tune_record_default_path(path, sizeof path)) path[0] = 0;
    if (strlen(path) >= size) {
        buf[0] = 0;
        return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_tune_record_path_get: the path needs %zu bytes",
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
        return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_tune_record_read: no tuning record: %s",
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
        p->config.count = l->param_count < TUNE_MAX_PARAMS ? l->param_count : TUNE_MAX_PARAMS;
        for (int j = 0; j < p->config.count; j++) {
            snprintf(p->config.params[j].name, sizeof p->config.params[j].name, "%s", l->names[j]);
            p->config.params[j].value = l->values[j];
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

static bool record_name_ok(const char *s, size_t size) {
    size_t len = strnlen(s, size);
    if (len == 0 || len == size) return false;
    for (const char *p = s; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_' ||
              *p == '.' || *p == '-'))
            return false;
    return true;
}

ptxkit_status ptxkit_tune_record_append(const char *path, const ptxkit_tune_record_line *lines, size_t count) {
    if (!lines && count) return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_tune_record_append: NULL lines");
    char file[4096];
    if (path ? (!path[0] || (size_t)snprintf(file, sizeof file, "%s", path) >= sizeof file)
             : !tune_record_default_path(file, sizeof file))
        return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_tune_record_append: no tuning record: %s",
                            path ? "the path is empty or too long" : "PTXKIT_TUNE_RECORD=off, or no database path");
    /* every line checked (and read back from its text) before any is written */
    tune_record_line *out = calloc(count ? count : 1, sizeof *out);
    if (!out) return record_error(NULL, PTXKIT_ERROR_OUT_OF_MEMORY, "ptxkit_tune_record_append: %zu lines", count);
    for (size_t i = 0; i < count; i++) {
        const ptxkit_tune_record_line *p = &lines[i];
        tune_record_line *l = &out[i];
        bool ok = record_name_ok(p->key.family, sizeof p->key.family) && strnlen(p->key.device, sizeof p->key.device) &&
                  strnlen(p->key.device, sizeof p->key.device) < sizeof p->key.device &&
                  strnlen(p->key.library, sizeof p->key.library) < sizeof p->key.library &&
                  strnlen(p->key.variant, sizeof p->key.variant) < sizeof p->key.variant &&
                  strnlen(p->note, sizeof p->note) < sizeof p->note && p->config.count >= 0 &&
                  p->config.count <= PTXKIT_TUNE_MAX_PARAMS && (unsigned)p->outcome <= PTXKIT_TUNE_FAILED && p->n > 0 &&
                  p->ms >= 0 && p->ms < 1e12 && p->gbs >= 0 && p->gbs < 1e12 && p->samples >= 0 && p->when >= 0 &&
                  strnlen(p->key.family, sizeof p->key.family) < sizeof l->family &&
                  strnlen(p->key.variant, sizeof p->key.variant) < sizeof l->variant;
        for (int j = 0; ok && j < p->config.count; j++)
            ok = record_name_ok(p->config.params[j].name, sizeof p->config.params[j].name);
        if (ok) {
            tune_db_key_make(&l->key, p->key.device, p->key.cc, p->key.sm_count, p->key.driver, p->key.nvrtc_major,
                             p->key.nvrtc_minor, p->key.library);
            snprintf(l->family, sizeof l->family, "%s", p->key.family);
            snprintf(l->variant, sizeof l->variant, "%s", p->key.variant);
            l->code = p->code;
            l->n = p->n;
            l->param_count = p->config.count;
            for (int j = 0; j < p->config.count; j++) {
                snprintf(l->names[j], sizeof l->names[j], "%s", p->config.params[j].name);
                l->values[j] = p->config.params[j].value;
            }
            l->outcome = (tune_record_outcome)p->outcome;
            l->ms = p->ms;
            l->gbs = p->gbs;
            l->samples = p->samples;
            l->when = p->when;
            snprintf(l->note, sizeof l->note, "%s", p->note);
            char text[TUNE_RECORD_MAX_LINE + 1];
            tune_record_line back;
            size_t len = tune_record_format(l, text, sizeof text);
            ok = len > 1 && tune_record_parse(text, len - 1, &back); /* without its newline */
        }
        if (!ok) {
            free(out);
            return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT,
                                "ptxkit_tune_record_append: line %zu (%.63s) is no record line: a name empty or not of "
                                "letters, digits, '_', '.', '-', a count, size or figure out of range",
                                i, p->key.family);
        }
    }
    for (size_t i = 0; i < count; i++) {
        char msg[640] = "";
        ptxkit_status st = tune_record_append(file, &out[i], msg, sizeof msg);
        if (st != PTXKIT_SUCCESS) {
            free(out);
            return record_error(NULL, st, "ptxkit_tune_record_append: %s (%zu of %zu lines written)", msg, i, count);
        }
    }
    free(out);
    return PTXKIT_SUCCESS;
}

ptxkit_status ptxkit_tune_code_get(const char *family, const char *variant, unsigned long long *code) {
    if (!code) return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_tune_code_get: NULL code");
    *code = 0;
    ptxkit_status st = ptxkit_tune_variant_check(family, variant); /* sets the last error */
    if (st != PTXKIT_SUCCESS) return name_failure(st, "ptxkit_tune_code_get");
    *code = embedded_sources_digest(); /* the built-in families' problems are keyed by the embedded sources */
    return PTXKIT_SUCCESS;
}
