/* The tuning database as public data (ptxkit_tune_entry): read it whole,
 * merge entries into it. The file format stays the database's own
 * (tuned/db.c); this is the copy in and out of its entries. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptxkit_tune.h"
#include "runtime/status.h"
#include "tuned/db.h"

_Static_assert(PTXKIT_TUNE_MAX_PARAMS == TUNE_DB_MAX_PARAMS, "the public entry holds the database's parameters");
_Static_assert(PTXKIT_CONFIG_NAME_SIZE == TUNE_DB_PARAM_NAME, "parameter names agree");
_Static_assert(PTXKIT_CONFIG_MAX_PARAMS >= TUNE_DB_MAX_PARAMS, "a configuration holds an entry's parameters");

/* The file keeps a launch-option family's five fields as its own columns
 * (block=, items=, ... : format 1 unchanged); the public entry names them,
 * as the tuner and the tuning record do. */
static const char *const fixed_names[5] = {"block", "items", "vec", "bpsm", "load"};

static int fixed_index(const char *name) {
    for (int i = 0; i < 5; i++)
        if (strncmp(name, fixed_names[i], PTXKIT_CONFIG_NAME_SIZE) == 0) return i;
    return -1;
}

ptxkit_status ptxkit_tune_db_path_get(char *buf, size_t size) {
    if (!buf || !size) return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_tune_db_path_get: no buffer");
    char path[4096];
    if (!tune_db_default_path(path, sizeof path)) path[0] = 0;
    if (strlen(path) >= size) {
        buf[0] = 0;
        return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_tune_db_path_get: the path needs %zu bytes",
                            strlen(path) + 1);
    }
    memcpy(buf, path, strlen(path) + 1);
    return PTXKIT_SUCCESS;
}

static void to_public(const tune_db_entry *e, ptxkit_tune_entry *p) {
    memset(p, 0, sizeof *p);
    snprintf(p->device, sizeof p->device, "%s", e->key.device);
    p->cc = e->key.cc;
    p->sm_count = e->key.sm_count;
    p->driver = e->key.driver;
    p->nvrtc_major = e->key.nvrtc_major;
    p->nvrtc_minor = e->key.nvrtc_minor;
    snprintf(p->library, sizeof p->library, "%s", e->key.library);
    snprintf(p->family, sizeof p->family, "%s", e->family);
    snprintf(p->variant, sizeof p->variant, "%s", e->variant);
    p->log2n = e->bucket;
    ptxkit_config_param *c = p->config.params;
    if (e->param_count > 0) {
        for (int i = 0; i < e->param_count && i < TUNE_DB_MAX_PARAMS; i++) {
            snprintf(c[i].name, sizeof c[i].name, "%s", e->param_names[i]);
            c[i].value = e->param_values[i];
        }
        p->config.count = e->param_count < TUNE_DB_MAX_PARAMS ? e->param_count : TUNE_DB_MAX_PARAMS;
    } else {
        const int values[5] = {e->config.block_size, e->config.items_per_thread, e->config.vector_bytes,
                               e->config.blocks_per_sm, (int)e->config.load_op};
        for (int i = 0; i < 5; i++) {
            snprintf(c[i].name, sizeof c[i].name, "%s", fixed_names[i]);
            c[i].value = values[i];
        }
        p->config.count = 5;
    }
    p->gbs = e->gbs;
    p->default_gbs = e->default_gbs;
    p->when = e->when;
}

/* The entry as the database holds it; false (with why) for one it cannot:
 * the database's own writer and parser decide, by a round trip that must
 * give back every field (the writer clamps what it cannot hold, such as a
 * load operator of 99 or a negative time, which would be stored altered). */
static bool from_public(const ptxkit_tune_entry *p, tune_db_entry *e, char *why, size_t why_size) {
    memset(e, 0, sizeof *e);
    for (size_t i = 0; i < sizeof p->reserved / sizeof p->reserved[0]; i++)
        if (p->reserved[i]) return snprintf(why, why_size, "reserved fields are set"), false;
    const ptxkit_config *c = &p->config;
    if (c->count < 0 || c->count > TUNE_DB_MAX_PARAMS)
        return snprintf(why, why_size, "%d parameters (0 to %d)", c->count, TUNE_DB_MAX_PARAMS), false;
    /* only the five names: a launch-option family's fields, else named parameters */
    bool fixed = c->count > 0;
    for (int i = 0; i < c->count; i++) fixed = fixed && fixed_index(c->params[i].name) >= 0;
    const char *texts[] = {p->device, p->library, p->family, p->variant};
    const size_t sizes[] = {sizeof p->device, sizeof p->library, sizeof p->family, sizeof p->variant};
    for (int i = 0; i < 4; i++)
        if (!memchr(texts[i], 0, sizes[i]) || !texts[i][0])
            return snprintf(why, why_size, "a name is empty or not terminated"), false;
    for (int i = 0; i < c->count; i++)
        if (!memchr(c->params[i].name, 0, sizeof c->params[i].name) || !c->params[i].name[0])
            return snprintf(why, why_size, "parameter %d's name is empty or not terminated", i), false;
    for (int i = 0; i < c->count; i++)
        for (int j = 0; j < i; j++)
            if (strcmp(c->params[i].name, c->params[j].name) == 0)
                return snprintf(why, why_size, "parameter %s is given twice", c->params[i].name), false;
    for (int i = 0; i < 4; i++)
        for (const char *c = texts[i]; *c; c++)
            if ((unsigned char)*c < 0x20 || *c == 0x7f) return snprintf(why, why_size, "a name holds a control character"), false;
    tune_db_key_make(&e->key, p->device, p->cc, p->sm_count, p->driver, p->nvrtc_major, p->nvrtc_minor, p->library);
    snprintf(e->family, sizeof e->family, "%s", p->family);
    snprintf(e->variant, sizeof e->variant, "%s", p->variant);
    e->bucket = p->log2n;
    if (fixed) {
        long long v[5] = {0};
        for (int i = 0; i < c->count; i++) {
            long long x = c->params[i].value;
            if (x < -2147483647LL - 1 || x > 2147483647LL)
                return snprintf(why, why_size, "%s = %lld is out of range", c->params[i].name, x), false;
            v[fixed_index(c->params[i].name)] = x;
        }
        e->config = (tune_config){(int)v[0], (int)v[1], (int)v[2], (int)v[3], (ptxkit_load_op)v[4]};
    } else {
        e->param_count = c->count;
        for (int i = 0; i < c->count; i++) {
            snprintf(e->param_names[i], sizeof e->param_names[i], "%s", c->params[i].name);
            e->param_values[i] = c->params[i].value;
        }
    }
    e->gbs = p->gbs;
    e->default_gbs = p->default_gbs;
    e->when = p->when;
    tune_db one, back;
    tune_db_init(&one);
    tune_db_init(&back);
    size_t size = 0;
    char *text = tune_db_put(&one, e) ? tune_db_format(&one, &size) : NULL;
    char msg[256] = "";
    bool ok = text && tune_db_parse(text, size, &back, msg, sizeof msg) == PTXKIT_SUCCESS && back.count == 1;
    if (!ok) snprintf(why, why_size, "the database cannot hold it%s%s", msg[0] ? ": " : "", msg);
    else ok = tune_db_entry_kept(e, &back.entries[0], why, why_size);
    free(text);
    tune_db_clear(&one);
    tune_db_clear(&back);
    return ok;
}

static bool path_or_default(const char *path, char *buf, size_t size) {
    if (path) return (size_t)snprintf(buf, size, "%s", path) < size && path[0];
    return tune_db_default_path(buf, size);
}

ptxkit_status ptxkit_tune_db_read(const char *path, ptxkit_tune_entry **entries, size_t *count) {
    if (!entries || !count) return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_tune_db_read: NULL argument");
    *entries = NULL;
    *count = 0;
    char file[4096], msg[640] = "";
    if (!path_or_default(path, file, sizeof file))
        return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT,
                            "ptxkit_tune_db_read: no tuning database: %s", path ? "the path is empty or too long"
                                                          : "no state directory (set PTXKIT_STATE_DIR or HOME) and PTXKIT_TUNE_DB is not set");
    tune_db db;
    tune_db_init(&db);
    ptxkit_status st = tune_db_load(file, &db, msg, sizeof msg);
    if (st != PTXKIT_SUCCESS) {
        tune_db_clear(&db);
        return record_error(NULL, st, "%s", msg);
    }
    if (db.count && (*entries = calloc(db.count, sizeof **entries)) == NULL) {
        tune_db_clear(&db);
        return record_error(NULL, PTXKIT_ERROR_OUT_OF_MEMORY, "ptxkit_tune_db_read: %zu entries", db.count);
    }
    for (size_t i = 0; i < db.count; i++) to_public(&db.entries[i], &(*entries)[i]);
    *count = db.count;
    tune_db_clear(&db);
    return PTXKIT_SUCCESS;
}

void ptxkit_tune_entries_free(ptxkit_tune_entry *entries) { free(entries); }

ptxkit_status ptxkit_tune_db_merge(const char *path, const ptxkit_tune_entry *entries, size_t count, size_t *total,
                                   int *rewritten) {
    if (rewritten) *rewritten = 0;
    if (count && !entries) return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_tune_db_merge: entries is NULL");
    if (count > TUNE_DB_MAX_ENTRIES)
        return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_tune_db_merge: %zu entries, more than a database holds (%d)",
                            count, TUNE_DB_MAX_ENTRIES);
    char file[4096], msg[640] = "";
    if (!path_or_default(path, file, sizeof file))
        return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT,
                            "ptxkit_tune_db_merge: no tuning database: %s", path ? "the path is empty or too long"
                                                          : "no state directory (set PTXKIT_STATE_DIR or HOME) and PTXKIT_TUNE_DB is not set");
    tune_db_entry *own = calloc(count ? count : 1, sizeof *own);
    if (!own) return record_error(NULL, PTXKIT_ERROR_OUT_OF_MEMORY, "ptxkit_tune_db_merge: %zu entries", count);
    for (size_t i = 0; i < count; i++) {
        char why[320];
        if (!from_public(&entries[i], &own[i], why, sizeof why)) {
            free(own);
            return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_tune_db_merge: tuning entry %zu: %s", i, why);
        }
    }
    tune_db merged;
    tune_db_init(&merged);
    ptxkit_status st = tune_db_store(file, own, count, &merged, msg, sizeof msg);
    free(own);
    if (st == PTXKIT_SUCCESS && total) *total = merged.count;
    /* on success the store says something only when it kept a damaged file aside */
    if (st == PTXKIT_SUCCESS && rewritten) *rewritten = msg[0] != 0;
    tune_db_clear(&merged);
    return st == PTXKIT_SUCCESS ? PTXKIT_SUCCESS : record_error(NULL, st, "ptxkit_tune_db_merge: cannot store into %s: %s", file, msg);
}
