/* ptxkit tune --export / --import: the tuning database as JSON that other
 * tools can read (every entry with its key), and back, through the public
 * ptxkit_tune_db_read / ptxkit_tune_db_merge (the merge takes the
 * database's lock, as a tuning run does). */
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ptxkit_tune.h"
#include "cli.h"
#include "report.h"
#include "tune_exchange.h"

#define EXPORT_SCHEMA "ptxkit-tune-export/1"
#define MAX_IMPORT_BYTES (64u << 20)
#define MAX_ENTRIES 20000                /* what a database holds */
#define MAX_WHEN 253402300799LL         /* 9999-12-31, the database's bound */

/* cJSON prints a number with 15 significant digits whenever they read back
 * within a relative 2^-52 (9007199254740991 went out as
 * 9.00719925474099e+15 and came back one less): an integer of more digits
 * goes as a string, exactly. */
#define EXACT_NUMBER_LIMIT 1000000000000000LL /* 10^15 */

/* A JSON number read into a double is an integer exactly only below 2^53;
 * beyond, the text may have been rounded (or be out of range entirely). */
#define EXACT_DOUBLE_LIMIT 9007199254740992.0 /* 2^53 */

static cJSON *integer_json(long long v) {
    if (v > -EXACT_NUMBER_LIMIT && v < EXACT_NUMBER_LIMIT) return cJSON_CreateNumber((double)v);
    char s[32];
    snprintf(s, sizeof s, "%lld", v);
    return cJSON_CreateString(s);
}

/* The export keeps a launch-option family's five fields as "config" and
 * anything else as "params" (the file format of earlier exports); the
 * entry names them all in its ptxkit_config (ptxkit.h). */
static const char *const fixed_names[5] = {"block", "items", "vec", "bpsm", "load"};

static bool config_is_fixed(const ptxkit_config *c) {
    bool fixed = c->count > 0;
    for (int i = 0; i < c->count && fixed; i++) {
        bool known = false;
        for (int f = 0; f < 5; f++) known = known || strcmp(c->params[i].name, fixed_names[f]) == 0;
        fixed = known;
    }
    return fixed;
}

static long long config_value_or_0(const ptxkit_config *c, const char *name) {
    long long v = 0;
    return ptxkit_config_get(c, name, &v) == PTXKIT_SUCCESS ? v : 0;
}

static cJSON *entry_json(const ptxkit_tune_entry *e) {
    cJSON *o = cJSON_CreateObject();
    cJSON *k = cJSON_AddObjectToObject(o, "key");
    cJSON_AddStringToObject(k, "device", e->device);
    cJSON_AddNumberToObject(k, "cc", e->cc);
    cJSON_AddNumberToObject(k, "sm_count", e->sm_count);
    cJSON_AddNumberToObject(k, "driver", e->driver);
    cJSON_AddNumberToObject(k, "nvrtc_major", e->nvrtc_major);
    cJSON_AddNumberToObject(k, "nvrtc_minor", e->nvrtc_minor);
    cJSON_AddStringToObject(k, "library", e->library);
    cJSON_AddStringToObject(o, "family", e->family);
    cJSON_AddStringToObject(o, "variant", e->variant);
    cJSON_AddNumberToObject(o, "log2n", e->log2n);
    cJSON *c = cJSON_AddObjectToObject(o, "config");
    const bool fixed = config_is_fixed(&e->config);
    static const char *const columns[4] = {"block_size", "items_per_thread", "vector_bytes", "blocks_per_sm"};
    for (int f = 0; f < 4; f++)
        cJSON_AddNumberToObject(c, columns[f], fixed ? (double)config_value_or_0(&e->config, fixed_names[f]) : 0);
    const char *load = fixed ? ptxkit_load_op_name((ptxkit_load_op)config_value_or_0(&e->config, "load")) : NULL;
    cJSON_AddStringToObject(c, "load", load ? load : "default");
    cJSON *p = cJSON_AddObjectToObject(o, "params");
    for (int i = 0; !fixed && i < e->config.count; i++)
        cJSON_AddItemToObject(p, e->config.params[i].name, integer_json(e->config.params[i].value));
    cJSON_AddNumberToObject(o, "gbs", e->gbs);
    cJSON_AddNumberToObject(o, "default_gbs", e->default_gbs);
    cJSON_AddNumberToObject(o, "when", (double)e->when);
    return o;
}

cJSON *tune_export_entries(const ptxkit_tune_entry *entries, size_t count) {
    cJSON *list = cJSON_CreateArray();
    for (size_t i = 0; list && i < count; i++) cJSON_AddItemToArray(list, entry_json(&entries[i]));
    return list;
}

static bool database_path(char *db_path, size_t size) {
    if (ptxkit_tune_db_path_get(db_path, size) == PTXKIT_SUCCESS && db_path[0]) return true;
    fprintf(stderr, "ptxkit tune: no tuning database: no state directory (set PTXKIT_STATE_DIR or HOME) and PTXKIT_TUNE_DB is not set\n");
    return false;
}

int tune_export(const char *path) {
    char db_path[4096];
    if (!database_path(db_path, sizeof db_path)) return 1;
    ptxkit_tune_entry *db = NULL;
    size_t count = 0;
    if (ptxkit_tune_db_read(db_path, &db, &count) != PTXKIT_SUCCESS) { /* a damaged file: say so rather than export nothing */
        fprintf(stderr, "ptxkit tune: %s\n", ptxkit_last_error());
        return 1;
    }
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddStringToObject(doc, "schema", EXPORT_SCHEMA);
    cJSON_AddItemToObject(doc, "metadata", report_metadata());
    cJSON_AddStringToObject(doc, "database", db_path);
    cJSON_AddItemToObject(doc, "entries", tune_export_entries(db, count));
    bool ok = report_write_json("tune", path, doc);
    cJSON_Delete(doc);
    if (ok && strcmp(path, "-") != 0) fprintf(stderr, "ptxkit tune: exported %zu entries of %s to %s\n", count, db_path, path);
    ptxkit_tune_entries_free(db);
    return ok ? 0 : 1;
}

/* ---- import ---- */

typedef struct reader {
    char why[256];
    size_t index;
} reader;

static bool bad(reader *r, const char *field, const char *what) {
    snprintf(r->why, sizeof r->why, "entry %zu: %s %s", r->index, field, what);
    return false;
}

static bool get_string(reader *r, const cJSON *o, const char *name, char *out, size_t size, bool empty_ok) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
    if (!cJSON_IsString(v)) return bad(r, name, "is missing or not a string");
    size_t n = strlen(v->valuestring);
    if (n >= size || (!empty_ok && n == 0)) return bad(r, name, n ? "is too long" : "is empty");
    for (const char *c = v->valuestring; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f) return bad(r, name, "holds a control character");
    memcpy(out, v->valuestring, n + 1);
    return true;
}

static bool to_integer(const cJSON *v, long long lo, long long hi, long long *out) {
    if (cJSON_IsNumber(v)) {
        /* (double)INT64_MAX is 2^63: a bound compared in doubles let
         * 9223372036854775807 through, and the cast made it INT64_MIN */
        double d = v->valuedouble;
        if (!isfinite(d) || d != floor(d) || !(fabs(d) < EXACT_DOUBLE_LIMIT)) return false;
        long long x = (long long)d;
        if (x < lo || x > hi) return false;
        *out = x;
        return true;
    }
    if (cJSON_IsString(v)) {
        char *end;
        errno = 0;
        long long x = strtoll(v->valuestring, &end, 10);
        if (!v->valuestring[0] || *end || errno || x < lo || x > hi) return false;
        *out = x;
        return true;
    }
    return false;
}

static bool get_int(reader *r, const cJSON *o, const char *name, long long lo, long long hi, long long *out) {
    if (!to_integer(cJSON_GetObjectItemCaseSensitive(o, name), lo, hi, out))
        return bad(r, name, "is missing, not a whole number or out of range");
    return true;
}

static bool get_small(reader *r, const cJSON *o, const char *name, int lo, int hi, int *out) {
    long long v;
    if (!get_int(r, o, name, lo, hi, &v)) return false;
    *out = (int)v;
    return true;
}

/* GB/s to the database's two decimals: the value the merge stores, and one
 * that an export prints exactly (at most 11 significant digits). */
static bool get_gbs(reader *r, const cJSON *o, const char *name, double *out) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
    if (!cJSON_IsNumber(v) || !(v->valuedouble >= 0) || v->valuedouble >= 1e9)
        return bad(r, name, "is missing or not a number in [0, 1e9)");
    double two = round(v->valuedouble * 100) / 100;
    if (!(two < 1e9)) return bad(r, name, "is missing or not a number in [0, 1e9)");
    *out = two == 0 ? 0 : two;
    return true;
}

/* One entry of the export; the database's own checks come at the merge. */
static bool read_entry(reader *r, const cJSON *o, ptxkit_tune_entry *e) {
    memset(e, 0, sizeof *e);
    if (!cJSON_IsObject(o)) return bad(r, "the entry", "is not an object");
    const cJSON *k = cJSON_GetObjectItemCaseSensitive(o, "key");
    if (!cJSON_IsObject(k)) return bad(r, "key", "is missing or not an object");
    if (!get_string(r, k, "device", e->device, sizeof e->device, false) || !get_small(r, k, "cc", 0, 10000, &e->cc) ||
        !get_small(r, k, "sm_count", 0, 1000000, &e->sm_count) || !get_small(r, k, "driver", 0, 1000000, &e->driver) ||
        !get_small(r, k, "nvrtc_major", 0, 10000, &e->nvrtc_major) ||
        !get_small(r, k, "nvrtc_minor", 0, 10000, &e->nvrtc_minor) ||
        !get_string(r, k, "library", e->library, sizeof e->library, false))
        return false;
    if (!get_string(r, o, "family", e->family, sizeof e->family, false) ||
        !get_string(r, o, "variant", e->variant, sizeof e->variant, false) ||
        !get_small(r, o, "log2n", 0, 63, &e->log2n))
        return false;
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(o, "config");
    if (!cJSON_IsObject(c)) return bad(r, "config", "is missing or not an object");
    char load[32];
    int fixed[4];
    static const char *const columns[4] = {"block_size", "items_per_thread", "vector_bytes", "blocks_per_sm"};
    for (int f = 0; f < 4; f++)
        if (!get_small(r, c, columns[f], 0, 1 << 20, &fixed[f])) return false;
    if (!get_string(r, c, "load", load, sizeof load, false)) return false;
    ptxkit_load_op load_op = PTXKIT_LOAD_DEFAULT;
    if (strcmp(load, "default") != 0 && ptxkit_load_op_parse(load, &load_op) != PTXKIT_SUCCESS)
        return bad(r, "config.load", "is no load operator");
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(o, "params"), *it;
    if (p && !cJSON_IsObject(p)) return bad(r, "params", "is not an object");
    ptxkit_config_param *q = e->config.params;
    cJSON_ArrayForEach(it, p) {
        if (e->config.count == PTXKIT_TUNE_MAX_PARAMS) return bad(r, "params", "has too many parameters");
        if (strlen(it->string) >= sizeof q[0].name) return bad(r, "a parameter name", "is too long");
        if (!to_integer(it, -0x7fffffffffffffffLL - 1, 0x7fffffffffffffffLL, &q[e->config.count].value))
            return bad(r, it->string, "is not a whole number");
        long long seen;
        if (ptxkit_config_get(&e->config, it->string, &seen) == PTXKIT_SUCCESS) return bad(r, it->string, "is given twice");
        snprintf(q[e->config.count++].name, sizeof q[0].name, "%s", it->string);
    }
    /* parameters that are all launch-option names would export as config */
    if (config_is_fixed(&e->config))
        return bad(r, "params", "names only launch options (block, items, vec, bpsm, load): give them as config");
    if (e->config.count == 0) { /* a launch-option family's entry: its five fields */
        for (int f = 0; f < 4; f++) {
            snprintf(q[f].name, sizeof q[f].name, "%s", fixed_names[f]);
            q[f].value = fixed[f];
        }
        snprintf(q[4].name, sizeof q[4].name, "%s", fixed_names[4]);
        q[4].value = load_op;
        e->config.count = 5;
    } else if (fixed[0] || fixed[1] || fixed[2] || fixed[3] || load_op != PTXKIT_LOAD_DEFAULT) {
        return bad(r, "config", "is set beside params (an entry has one or the other)");
    }
    if (!get_gbs(r, o, "gbs", &e->gbs) || !get_gbs(r, o, "default_gbs", &e->default_gbs) ||
        !get_int(r, o, "when", 0, MAX_WHEN, &e->when))
        return false;
    return true;
}

bool tune_import_entries(const cJSON *list, ptxkit_tune_entry **out, size_t *out_count, char *why, size_t why_size) {
    *out = NULL;
    *out_count = 0;
    int count = cJSON_GetArraySize(list);
    if (!cJSON_IsArray(list) || count > MAX_ENTRIES) {
        snprintf(why, why_size, "%d entries, more than a database holds (%d)", count, MAX_ENTRIES);
        if (!cJSON_IsArray(list)) snprintf(why, why_size, "the entries are not an array");
        return false;
    }
    ptxkit_tune_entry *entries = calloc((size_t)(count ? count : 1), sizeof *entries);
    if (!entries) {
        snprintf(why, why_size, "out of memory");
        return false;
    }
    reader r = {.why = ""};
    const cJSON *it;
    cJSON_ArrayForEach(it, list) {
        if (!read_entry(&r, it, &entries[r.index])) {
            snprintf(why, why_size, "%s", r.why);
            free(entries);
            return false;
        }
        r.index++;
    }
    *out = entries;
    *out_count = (size_t)count;
    return true;
}

cJSON *tune_read_json(const char *path) {
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "ptxkit tune: cannot read %s: %s\n", path, strerror(errno));
        return NULL;
    }
    size_t cap = 1 << 16, len = 0;
    char *text = malloc(cap + 1);
    while (text) {
        if (len == cap) {
            char *grown = cap < MAX_IMPORT_BYTES ? realloc(text, cap * 2 + 1) : NULL;
            if (!grown) break;
            text = grown;
            cap *= 2;
        }
        size_t n = fread(text + len, 1, cap - len, f);
        len += n;
        if (n == 0) break;
    }
    bool read_error = ferror(f) || !text || len == cap;
    if (f != stdin) fclose(f);
    if (read_error) {
        fprintf(stderr, "ptxkit tune: cannot read %s (unreadable, or over %u MiB)\n", path, MAX_IMPORT_BYTES >> 20);
        free(text);
        return NULL;
    }
    text[len] = 0;
    cJSON *doc = cJSON_ParseWithLength(text, len);
    free(text);
    if (!doc) fprintf(stderr, "ptxkit tune: %s is not JSON\n", path);
    return doc;
}

int tune_import(const char *path) {
    cJSON *doc = tune_read_json(path);
    if (!doc) return 1;
    const cJSON *schema = doc ? cJSON_GetObjectItemCaseSensitive(doc, "schema") : NULL;
    const cJSON *list = doc ? cJSON_GetObjectItemCaseSensitive(doc, "entries") : NULL;
    if (!doc || !cJSON_IsString(schema) || strcmp(schema->valuestring, EXPORT_SCHEMA) != 0 || !cJSON_IsArray(list)) {
        fprintf(stderr, "ptxkit tune: %s is not a ptxkit tuning export (JSON with schema \"%s\" and entries)\n", path,
                EXPORT_SCHEMA);
        cJSON_Delete(doc);
        return 1;
    }
    ptxkit_tune_entry *entries;
    size_t count;
    char why[320];
    bool ok = tune_import_entries(list, &entries, &count, why, sizeof why);
    cJSON_Delete(doc);
    if (!ok) {
        /* nothing is stored unless every entry reads */
        fprintf(stderr, "ptxkit tune: %s: %s; nothing imported\n", path, why);
        return 1;
    }
    char db_path[4096];
    if (!database_path(db_path, sizeof db_path)) {
        free(entries);
        return 1;
    }
    size_t total = 0;
    int rewritten = 0;
    ptxkit_status st = ptxkit_tune_db_merge(db_path, entries, count, &total, &rewritten);
    free(entries);
    if (st != PTXKIT_SUCCESS) { /* an entry the database cannot hold, or the file */
        fprintf(stderr, "ptxkit tune: %s: %s; nothing imported\n", path, ptxkit_last_error());
        return 1;
    }
    printf("imported %zu entries into %s (now %zu)%s%s%s\n", count, db_path, total,
           rewritten ? ": the file was damaged, kept as " : "", rewritten ? db_path : "", rewritten ? ".bad and rewritten" : "");
    return 0;
}

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
    for (int i = 0; i < l->config.count; i++)
        cJSON_AddNumberToObject(config, l->config.params[i].name, (double)l->config.params[i].value);
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
    if (ptxkit_tune_record_path_get(record, sizeof record) != PTXKIT_SUCCESS || !record[0]) {
        fprintf(stderr, "ptxkit tune: no tuning record (PTXKIT_TUNE_RECORD=off, or no database path)\n");
        return 1;
    }
    ptxkit_tune_record_line *lines = NULL;
    size_t count = 0, ignored = 0;
    if (ptxkit_tune_record_read(record, &lines, &count, &ignored) != PTXKIT_SUCCESS) {
        fprintf(stderr, "ptxkit tune: %s\n", ptxkit_last_error());
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
        ptxkit_config_param *q = l->config.params;
        if (l->config.count == PTXKIT_TUNE_MAX_PARAMS) return t4_bad(r, "more parameters than a record line holds");
        if (strlen(v->string) >= sizeof q[0].name) return t4_bad(r, "a parameter name too long");
        if (!whole(v, -(1LL << 53), 1LL << 53, &q[l->config.count].value))
            return t4_bad(r, "a parameter value that is no whole number (ptxkit's parameters are integers)");
        snprintf(q[l->config.count++].name, sizeof q[0].name, "%s", v->string);
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
        a->n != b->n || a->config.count != b->config.count || a->outcome != b->outcome || a->when != b->when)
        return false;
    for (int i = 0; i < a->config.count; i++)
        if (strcmp(a->config.params[i].name, b->config.params[i].name) ||
            a->config.params[i].value != b->config.params[i].value)
            return false;
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
    if (ptxkit_tune_record_path_get(record, sizeof record) != PTXKIT_SUCCESS || !record[0] ||
        ptxkit_tune_record_read(record, &have, &have_count, NULL) != PTXKIT_SUCCESS) {
        fprintf(stderr, "ptxkit tune: %s\n", record[0] ? ptxkit_last_error() : "no tuning record (PTXKIT_TUNE_RECORD=off)");
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
        fprintf(stderr, "ptxkit tune: %s: %s\n", path, ptxkit_last_error());
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
        fprintf(stderr, "ptxkit tune: %s\n", ptxkit_last_error());
        return 2;
    }
    (void)why;
    ptxkit_context *ctx = cli_open_context("tune", device);
    if (!ctx) return 1;
    ptxkit_status st = ptxkit_tune_key_get(ctx, &t.key);
    ptxkit_context_destroy(ctx);
    if (st != PTXKIT_SUCCESS) {
        fprintf(stderr, "ptxkit tune: %s\n", ptxkit_last_error());
        return 1;
    }
    snprintf(t.key.family, sizeof t.key.family, "%s", family);
    snprintf(t.key.variant, sizeof t.key.variant, "%s", variant ? variant : "");
    return import_t4(path, &t);
}
