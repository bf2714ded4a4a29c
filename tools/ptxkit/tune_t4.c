/* ptxkit tune --export-t4 / --import-t4: the tuning record as Kernel
 * Tuner's T4 results (schemas/t4/results-schema.json, T4 1.0.0), so that
 * Kernel Tuner's tools read ptxkit's measurements and ptxkit can seed its
 * record from theirs.
 *
 * A record line is one T4 result: its parameters the configuration, the
 * median time per call in ms both the one runtime and the "time"
 * measurement (objective "time"), GB/s a second measurement, the outcome
 * as invalidity (ok "correct", wrong "correctness", failed "compile" when
 * its note names compiling, else "runtime"). What T4 has no field for (the
 * GPU, driver, NVRTC and library of the key, family, variant, code hash,
 * size, samples, note) goes in an extra object "ptxkit" of the result,
 * which T4 allows, so export -> import -> export is the identity.
 *
 * A result without that object (Kernel Tuner's own file) is imported for
 * the FAMILY, --variant and single --sizes N given on the command line,
 * under this GPU's key and this build's code hash: a later `ptxkit tune`
 * of that problem then takes its timings instead of measuring them. Its
 * configuration's values must be whole numbers under ptxkit's parameter
 * names. Nothing is written unless every result reads. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "report.h"
#include "tune_exchange.h"

#define T4_VERSION "1.0.0"
#define MAX_RESULTS 1000000

static void iso_time(long long when, char *buf, size_t size) {
    time_t t = (time_t)when;
    struct tm tmv;
    if (!gmtime_r(&t, &tmv) || !strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tmv)) snprintf(buf, size, "%lld", when);
}

static bool parse_iso_time(const char *s, long long *when) {
    struct tm tmv = {0};
    char tail = 0;
    if (sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%c", &tmv.tm_year, &tmv.tm_mon, &tmv.tm_mday, &tmv.tm_hour, &tmv.tm_min,
               &tmv.tm_sec, &tail) < 6)
        return false;
    tmv.tm_year -= 1900;
    tmv.tm_mon -= 1;
    time_t t = timegm(&tmv);
    if (t == (time_t)-1) return false;
    *when = (long long)t;
    return true;
}

static const char *invalidity(const ptxkit_tune_record_line *l) {
    if (l->outcome == PTXKIT_TUNE_OK) return "correct";
    if (l->outcome == PTXKIT_TUNE_WRONG) return "correctness";
    return strstr(l->note, "compil") ? "compile" : "runtime";
}

static cJSON *measurement(const char *name, double value, const char *unit) {
    cJSON *m = cJSON_CreateObject();
    cJSON_AddStringToObject(m, "name", name);
    cJSON_AddNumberToObject(m, "value", value);
    cJSON_AddStringToObject(m, "unit", unit);
    return m;
}

static cJSON *result_json(const ptxkit_tune_record_line *l) {
    cJSON *r = cJSON_CreateObject();
    char when[40];
    iso_time(l->when, when, sizeof when);
    cJSON_AddStringToObject(r, "timestamp", when);
    cJSON *config = cJSON_AddObjectToObject(r, "configuration");
    for (int i = 0; i < l->param_count; i++) cJSON_AddNumberToObject(config, l->param_names[i], (double)l->param_values[i]);
    cJSON *objectives = cJSON_AddArrayToObject(r, "objectives");
    cJSON_AddItemToArray(objectives, cJSON_CreateString("time"));
    cJSON *times = cJSON_AddObjectToObject(r, "times");
    cJSON *runtimes = cJSON_AddArrayToObject(times, "runtimes");
    bool ok = l->outcome == PTXKIT_TUNE_OK;
    if (ok) cJSON_AddItemToArray(runtimes, cJSON_CreateNumber(l->ms));
    cJSON_AddStringToObject(r, "invalidity", invalidity(l));
    cJSON_AddNumberToObject(r, "correctness", ok ? 1 : 0);
    cJSON *ms = cJSON_AddArrayToObject(r, "measurements");
    if (ok) {
        cJSON_AddItemToArray(ms, measurement("time", l->ms, "ms"));
        if (l->gbs > 0) cJSON_AddItemToArray(ms, measurement("throughput", l->gbs, "GB/s"));
    }
    cJSON *p = cJSON_AddObjectToObject(r, "ptxkit");
    cJSON_AddStringToObject(p, "device", l->key.device);
    cJSON_AddNumberToObject(p, "cc", l->key.cc);
    cJSON_AddNumberToObject(p, "sm_count", l->key.sm_count);
    cJSON_AddNumberToObject(p, "driver", l->key.driver);
    cJSON_AddNumberToObject(p, "nvrtc_major", l->key.nvrtc_major);
    cJSON_AddNumberToObject(p, "nvrtc_minor", l->key.nvrtc_minor);
    cJSON_AddStringToObject(p, "library", l->key.library);
    cJSON_AddStringToObject(p, "family", l->key.family);
    cJSON_AddStringToObject(p, "variant", l->key.variant);
    char code[24];
    snprintf(code, sizeof code, "%016llx", l->code);
    cJSON_AddStringToObject(p, "code", code);
    cJSON_AddNumberToObject(p, "n", (double)l->n);
    cJSON_AddStringToObject(p, "outcome", ptxkit_tune_outcome_name(l->outcome));
    cJSON_AddNumberToObject(p, "gbs", l->gbs);
    cJSON_AddNumberToObject(p, "samples", l->samples);
    cJSON_AddStringToObject(p, "note", l->note);
    return r;
}

int tune_export_t4(const char *path) {
    char record[4096];
    if (ptxkit_tune_record_path(record, sizeof record) != PTXKIT_SUCCESS || !record[0]) {
        fprintf(stderr, "ptxkit tune: no tuning record (PTXKIT_TUNE_RECORD=off, or no database path)\n");
        return 1;
    }
    ptxkit_tune_record_line *lines = NULL;
    size_t count = 0, ignored = 0;
    if (ptxkit_tune_record_read(record, &lines, &count, &ignored) != PTXKIT_SUCCESS) {
        fprintf(stderr, "ptxkit tune: %s\n", ptxkit_last_error(NULL));
        return 1;
    }
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddStringToObject(doc, "schema_version", T4_VERSION);
    cJSON *meta = report_metadata();
    cJSON_AddStringToObject(meta, "record", record);
    cJSON_AddItemToObject(doc, "metadata", meta);
    cJSON *results = cJSON_AddArrayToObject(doc, "results");
    for (size_t i = 0; i < count; i++) cJSON_AddItemToArray(results, result_json(&lines[i]));
    bool ok = report_write_json("tune", path, doc);
    cJSON_Delete(doc);
    ptxkit_tune_record_free(lines);
    if (ok && strcmp(path, "-") != 0)
        fprintf(stderr, "ptxkit tune: exported %zu configurations of %s to %s (T4 %s)%s\n", count, record, path,
                T4_VERSION, ignored ? "; damaged lines left out" : "");
    return ok ? 0 : 1;
}

/* ---- import ---- */

typedef struct t4_reader {
    char why[320];
    size_t index;
} t4_reader;

static bool t4_bad(t4_reader *r, const char *what) {
    snprintf(r->why, sizeof r->why, "result %zu: %s", r->index, what);
    return false;
}

static bool whole(const cJSON *v, long long lo, long long hi, long long *out) {
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble != floor(v->valuedouble) ||
        v->valuedouble < (double)lo || v->valuedouble > (double)hi)
        return false;
    *out = (long long)v->valuedouble;
    return true;
}

static bool text_field(const cJSON *o, const char *name, char *out, size_t size) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
    if (!cJSON_IsString(v) || strlen(v->valuestring) >= size) return false;
    snprintf(out, size, "%s", v->valuestring);
    return true;
}

static bool int_field(const cJSON *o, const char *name, long long lo, long long hi, long long *out) {
    return whole(cJSON_GetObjectItemCaseSensitive(o, name), lo, hi, out);
}

/* The time of a result: its "time" measurement, else its first runtime. */
static double result_ms(const cJSON *res) {
    const cJSON *m;
    cJSON_ArrayForEach(m, cJSON_GetObjectItemCaseSensitive(res, "measurements")) {
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(m, "name"), *value = cJSON_GetObjectItemCaseSensitive(m, "value");
        const cJSON *unit = cJSON_GetObjectItemCaseSensitive(m, "unit");
        if (cJSON_IsString(name) && strcmp(name->valuestring, "time") == 0 && cJSON_IsNumber(value)) {
            double scale = cJSON_IsString(unit) && strcmp(unit->valuestring, "s") == 0    ? 1e3
                           : cJSON_IsString(unit) && strcmp(unit->valuestring, "us") == 0 ? 1e-3
                                                                                         : 1;
            return value->valuedouble * scale;
        }
    }
    const cJSON *rt = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(res, "times"), "runtimes"), 0);
    return cJSON_IsNumber(rt) ? rt->valuedouble : NAN;
}

/* A foreign result's problem: the command line's family, variant and size
 * under this GPU's key. */
typedef struct t4_target {
    bool given;
    ptxkit_tune_entry key; /* device to library, family, variant */
    unsigned long long code;
    size_t n;
} t4_target;

static bool read_result(t4_reader *r, const cJSON *res, const t4_target *target, ptxkit_tune_record_line *l) {
    memset(l, 0, sizeof *l);
    if (!cJSON_IsObject(res)) return t4_bad(r, "not an object");
    const cJSON *config = cJSON_GetObjectItemCaseSensitive(res, "configuration");
    const cJSON *inv = cJSON_GetObjectItemCaseSensitive(res, "invalidity");
    if (!cJSON_IsObject(config)) return t4_bad(r, "no configuration object");
    if (!cJSON_IsString(inv)) return t4_bad(r, "no invalidity");
    const cJSON *v;
    cJSON_ArrayForEach(v, config) {
        if (l->param_count == PTXKIT_TUNE_MAX_PARAMS) return t4_bad(r, "more parameters than a record line holds");
        if (strlen(v->string) >= sizeof l->param_names[0]) return t4_bad(r, "a parameter name too long");
        if (!whole(v, -(1LL << 53), 1LL << 53, &l->param_values[l->param_count]))
            return t4_bad(r, "a parameter value that is no whole number (ptxkit's parameters are integers)");
        snprintf(l->param_names[l->param_count++], sizeof l->param_names[0], "%s", v->string);
    }
    const char *s = inv->valuestring;
    l->outcome = strcmp(s, "correct") == 0       ? PTXKIT_TUNE_OK
                 : strcmp(s, "correctness") == 0 ? PTXKIT_TUNE_WRONG
                                                 : PTXKIT_TUNE_FAILED;
    if (l->outcome == PTXKIT_TUNE_OK) {
        l->ms = result_ms(res);
        if (!(l->ms >= 0) || !isfinite(l->ms)) return t4_bad(r, "a correct result without a time");
    }
    const cJSON *ts = cJSON_GetObjectItemCaseSensitive(res, "timestamp");
    if (cJSON_IsString(ts) && !parse_iso_time(ts->valuestring, &l->when)) return t4_bad(r, "a timestamp not YYYY-MM-DDTHH:MM:SSZ");
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(res, "ptxkit");
    if (!p) {
        if (!target->given)
            return t4_bad(r, "no \"ptxkit\" key (a Kernel Tuner file: give FAMILY, --variant and one --sizes N)");
        l->key = target->key;
        l->code = target->code;
        l->n = target->n;
        l->samples = l->outcome == PTXKIT_TUNE_OK;
        snprintf(l->note, sizeof l->note, "%s", l->outcome == PTXKIT_TUNE_FAILED ? s : "imported from T4");
        return true;
    }
    long long cc, sms, driver, nv_major, nv_minor, n, samples;
    char code[24], outcome[16];
    const cJSON *gbs = cJSON_GetObjectItemCaseSensitive(p, "gbs");
    if (!cJSON_IsObject(p) || !text_field(p, "device", l->key.device, sizeof l->key.device) ||
        !int_field(p, "cc", 0, 1000, &cc) || !int_field(p, "sm_count", 0, 1 << 20, &sms) ||
        !int_field(p, "driver", 0, 1 << 30, &driver) || !int_field(p, "nvrtc_major", 0, 1000, &nv_major) ||
        !int_field(p, "nvrtc_minor", 0, 1000, &nv_minor) || !text_field(p, "library", l->key.library, sizeof l->key.library) ||
        !text_field(p, "family", l->key.family, sizeof l->key.family) ||
        !text_field(p, "variant", l->key.variant, sizeof l->key.variant) || !text_field(p, "code", code, sizeof code) ||
        !int_field(p, "n", 1, 1LL << 53, &n) || !int_field(p, "samples", 0, 1 << 30, &samples) ||
        !text_field(p, "note", l->note, sizeof l->note) || !cJSON_IsNumber(gbs) || !(gbs->valuedouble >= 0))
        return t4_bad(r, "a \"ptxkit\" object without every field of a record line's key");
    char *end = NULL;
    l->code = strtoull(code, &end, 16);
    if (strlen(code) != 16 || *end) return t4_bad(r, "a code that is not 16 hexadecimal digits");
    if (text_field(p, "outcome", outcome, sizeof outcome) && strcmp(outcome, ptxkit_tune_outcome_name(l->outcome)) != 0)
        return t4_bad(r, "an invalidity that disagrees with ptxkit.outcome");
    l->key.cc = (int)cc;
    l->key.sm_count = (int)sms;
    l->key.driver = (int)driver;
    l->key.nvrtc_major = (int)nv_major;
    l->key.nvrtc_minor = (int)nv_minor;
    l->n = (size_t)n;
    l->samples = (int)samples;
    l->gbs = gbs->valuedouble;
    return true;
}

static bool same_line(const ptxkit_tune_record_line *a, const ptxkit_tune_record_line *b) {
    if (strcmp(a->key.device, b->key.device) || a->key.cc != b->key.cc || a->key.sm_count != b->key.sm_count ||
        a->key.driver != b->key.driver || a->key.nvrtc_major != b->key.nvrtc_major ||
        a->key.nvrtc_minor != b->key.nvrtc_minor || strcmp(a->key.library, b->key.library) ||
        strcmp(a->key.family, b->key.family) || strcmp(a->key.variant, b->key.variant) || a->code != b->code ||
        a->n != b->n || a->param_count != b->param_count || a->outcome != b->outcome || a->when != b->when)
        return false;
    for (int i = 0; i < a->param_count; i++)
        if (strcmp(a->param_names[i], b->param_names[i]) || a->param_values[i] != b->param_values[i]) return false;
    return true;
}

static int import_t4(const char *path, const t4_target *target) {
    cJSON *doc = tune_read_json(path);
    if (!doc) return 1;
    const cJSON *version = cJSON_GetObjectItemCaseSensitive(doc, "schema_version");
    const cJSON *results = cJSON_GetObjectItemCaseSensitive(doc, "results");
    if (!cJSON_IsArray(results) || (version && (!cJSON_IsString(version) || strncmp(version->valuestring, "1.", 2) != 0))) {
        fprintf(stderr, "ptxkit tune: %s is no T4 1.x results file (schema_version and results)\n", path);
        cJSON_Delete(doc);
        return 1;
    }
    int total = cJSON_GetArraySize(results);
    if (total > MAX_RESULTS) {
        fprintf(stderr, "ptxkit tune: %s holds %d results, more than %d\n", path, total, MAX_RESULTS);
        cJSON_Delete(doc);
        return 1;
    }
    ptxkit_tune_record_line *lines = calloc((size_t)total + 1, sizeof *lines);
    t4_reader r = {.index = 0};
    bool ok = lines != NULL;
    const cJSON *res;
    cJSON_ArrayForEach(res, results) {
        if (!ok || !(ok = read_result(&r, res, target, &lines[r.index]))) break;
        r.index++;
    }
    cJSON_Delete(doc);
    if (!ok) {
        fprintf(stderr, "ptxkit tune: %s: %s; nothing imported\n", path, lines ? r.why : "out of memory");
        free(lines);
        return 1;
    }
    /* a line the record already holds is left out: importing twice adds nothing */
    char record[4096];
    ptxkit_tune_record_line *have = NULL;
    size_t have_count = 0, fresh = 0;
    if (ptxkit_tune_record_path(record, sizeof record) != PTXKIT_SUCCESS || !record[0] ||
        ptxkit_tune_record_read(record, &have, &have_count, NULL) != PTXKIT_SUCCESS) {
        fprintf(stderr, "ptxkit tune: %s\n", record[0] ? ptxkit_last_error(NULL) : "no tuning record (PTXKIT_TUNE_RECORD=off)");
        free(lines);
        return 1;
    }
    for (int i = 0; i < total; i++) {
        bool known = false;
        for (size_t j = 0; j < have_count && !known; j++) known = same_line(&lines[i], &have[j]);
        for (size_t j = 0; j < fresh && !known; j++) known = same_line(&lines[i], &lines[j]);
        if (!known) lines[fresh++] = lines[i];
    }
    ptxkit_tune_record_free(have);
    ptxkit_status st = ptxkit_tune_record_append(record, lines, fresh);
    free(lines);
    if (st != PTXKIT_SUCCESS) {
        fprintf(stderr, "ptxkit tune: %s: %s\n", path, ptxkit_last_error(NULL));
        return 1;
    }
    printf("imported %zu of %d results into %s (the others were there)\n", fresh, total, record);
    return 0;
}

int tune_import_t4(const char *path) {
    t4_target none = {.given = false};
    return import_t4(path, &none);
}

int tune_import_t4_for(const char *path, int device, const char *family, const char *variant, size_t n) {
    t4_target t = {.given = true, .n = n};
    char why[256] = "";
    if (ptxkit_tune_code_get(family, variant, &t.code) != PTXKIT_SUCCESS) {
        fprintf(stderr, "ptxkit tune: %s\n", ptxkit_last_error(NULL));
        return 2;
    }
    (void)why;
    ptxkit_context *ctx = cli_open_context("tune", device);
    if (!ctx) return 1;
    ptxkit_status st = ptxkit_tune_key_get(ctx, &t.key);
    ptxkit_context_close(ctx);
    if (st != PTXKIT_SUCCESS) {
        fprintf(stderr, "ptxkit tune: %s\n", ptxkit_last_error(NULL));
        return 1;
    }
    snprintf(t.key.family, sizeof t.key.family, "%s", family);
    snprintf(t.key.variant, sizeof t.key.variant, "%s", variant ? variant : "");
    return import_t4(path, &t);
}
