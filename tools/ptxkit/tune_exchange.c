/* ptxkit tune --export / --import: the tuning database as JSON that other
 * tools can read (every entry with its key), and back, through the public
 * ptxkit_tune_db_read / ptxkit_tune_db_merge (the merge takes the
 * database's lock, as a tuning run does). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

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
    cJSON_AddNumberToObject(c, "block_size", e->block_size);
    cJSON_AddNumberToObject(c, "items_per_thread", e->items_per_thread);
    cJSON_AddNumberToObject(c, "vector_bytes", e->vector_bytes);
    cJSON_AddNumberToObject(c, "blocks_per_sm", e->blocks_per_sm);
    const char *load = ptxkit_load_op_name(e->load_op);
    cJSON_AddStringToObject(c, "load", load ? load : "default");
    cJSON *p = cJSON_AddObjectToObject(o, "params");
    for (int i = 0; i < e->param_count; i++) cJSON_AddItemToObject(p, e->param_names[i], integer_json(e->param_values[i]));
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
    if (ptxkit_tune_db_path(db_path, size) == PTXKIT_SUCCESS && db_path[0]) return true;
    fprintf(stderr, "ptxkit tune: no tuning database: no state directory (set PTXKIT_STATE_DIR or HOME) and PTXKIT_TUNE_DB is not set\n");
    return false;
}

int tune_export(const char *path) {
    char db_path[4096];
    if (!database_path(db_path, sizeof db_path)) return 1;
    ptxkit_tune_entry *db = NULL;
    size_t count = 0;
    if (ptxkit_tune_db_read(db_path, &db, &count) != PTXKIT_SUCCESS) { /* a damaged file: say so rather than export nothing */
        fprintf(stderr, "ptxkit tune: %s\n", ptxkit_last_error(NULL));
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
    if (!get_small(r, c, "block_size", 0, 1 << 20, &e->block_size) ||
        !get_small(r, c, "items_per_thread", 0, 1 << 20, &e->items_per_thread) ||
        !get_small(r, c, "vector_bytes", 0, 1 << 20, &e->vector_bytes) ||
        !get_small(r, c, "blocks_per_sm", 0, 1 << 20, &e->blocks_per_sm) ||
        !get_string(r, c, "load", load, sizeof load, false))
        return false;
    if (strcmp(load, "default") == 0) e->load_op = PTXKIT_LOAD_DEFAULT;
    else if (ptxkit_load_op_parse(load, &e->load_op) != PTXKIT_SUCCESS) return bad(r, "config.load", "is no load operator");
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(o, "params"), *it;
    if (p && !cJSON_IsObject(p)) return bad(r, "params", "is not an object");
    cJSON_ArrayForEach(it, p) {
        if (e->param_count == PTXKIT_TUNE_MAX_PARAMS) return bad(r, "params", "has too many parameters");
        if (strlen(it->string) >= sizeof e->param_names[0]) return bad(r, "a parameter name", "is too long");
        if (!to_integer(it, -0x7fffffffffffffffLL - 1, 0x7fffffffffffffffLL, &e->param_values[e->param_count]))
            return bad(r, it->string, "is not a whole number");
        snprintf(e->param_names[e->param_count++], sizeof e->param_names[0], "%s", it->string);
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
    char db_path[4096], note[640] = "";
    if (!database_path(db_path, sizeof db_path)) {
        free(entries);
        return 1;
    }
    size_t total = 0;
    ptxkit_status st = ptxkit_tune_db_merge(db_path, entries, count, &total, note, sizeof note);
    free(entries);
    if (st != PTXKIT_SUCCESS) { /* an entry the database cannot hold, or the file */
        fprintf(stderr, "ptxkit tune: %s: %s; nothing imported\n", path, ptxkit_last_error(NULL));
        return 1;
    }
    printf("imported %zu entries into %s (now %zu)%s%s\n", count, db_path, total, note[0] ? ": " : "", note);
    return 0;
}
