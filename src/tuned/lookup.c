/* Dispatch side of tuning: the ops ask tune_lookup for the configuration of
 * a size bucket. The database is loaded on the first lookup of a context and
 * kept in the context's state (context_state, as the families keep theirs),
 * under the state's own lock; PTXKIT_TUNE=auto tunes a missing bucket there,
 * through the runner the context's opener installed (ctx->auto_tune). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptxkit_tune.h"
#include "runtime/cache_key.h"
#include "runtime/context.h"
#include "runtime/launch.h"
#include "runtime/objects.h"
#include "runtime/status.h"
#include "tuned/lookup.h"

#define AUTO_ATTEMPTS_KEPT 64

typedef struct auto_attempt {
    char family[24];
    char variant[40];
    int bucket;
} auto_attempt;

typedef struct tune_state {
    pthread_mutex_t lock;    /* guards everything below */
    bool stale;              /* tune_state_reset: read the file again on next use */
    tune_db db;
    tune_db mine;            /* the entries of this context's key: what lookups scan */
    tune_db_key key;
    char path[4096];         /* "" when there is no database file */
    char message[640];       /* how loading went */
    auto_attempt attempts[AUTO_ATTEMPTS_KEPT]; /* buckets auto-tuned in this process */
    int attempt_count;
} tune_state;

/* One tuning at a time in the process, whatever the context: runs that
 * share a GPU would distort each other's timings, and a lookup that finds a
 * run in progress takes the nearest bucket instead of waiting. */
static atomic_bool auto_tuning;
static _Thread_local int guard_depth;
/* Bumped after every change of a context's in-memory database, so the ops
 * may keep what tune_apply gave them without asking again (tune.h). */
static atomic_uint generation;

unsigned tune_generation(void) { return atomic_load_explicit(&generation, memory_order_acquire); }

/* Under the state's lock, after the change: a reader that sees the new
 * number then takes the lock and sees the new database. */
static void generation_bump(void) { atomic_fetch_add_explicit(&generation, 1u, memory_order_release); }

void tune_guard_enter(void) { guard_depth++; }
void tune_guard_leave(void) {
    if (guard_depth > 0) guard_depth--;
}
bool tune_guard_active(void) { return guard_depth > 0; }

/* Auto-tuning allocates, times and synchronizes: none of that may happen
 * inside a call that a stream capture is recording (stream_scratch.h). */
static _Thread_local int auto_pause_depth;

void tune_auto_pause(bool on) {
    if (on) auto_pause_depth++;
    else if (auto_pause_depth > 0) auto_pause_depth--;
}

tune_mode tune_mode_from_env_note(char *note, size_t note_size) {
    if (note && note_size) note[0] = 0;
    const char *v = getenv("PTXKIT_TUNE");
    if (!v || !*v || strcmp(v, "cached") == 0) return TUNE_MODE_CACHED;
    if (strcmp(v, "off") == 0 || strcmp(v, "0") == 0) return TUNE_MODE_OFF;
    if (strcmp(v, "auto") == 0) return TUNE_MODE_AUTO;
    if (note && note_size)
        snprintf(note, note_size, "PTXKIT_TUNE='%.40s%s' ignored (not off, cached or auto): the mode is cached", v,
                 strlen(v) > 40 ? "..." : "");
    return TUNE_MODE_CACHED;
}

tune_mode tune_mode_from_env(void) { return tune_mode_from_env_note(NULL, 0); }

double tune_budget_from_env(char *note, size_t note_size) {
    if (note && note_size) note[0] = 0;
    const char *v = getenv("PTXKIT_TUNE_BUDGET");
    if (!v || !*v) return TUNE_AUTO_BUDGET_S;
    /* the whole text a number: strtod alone takes "5abc" as 5 */
    char *end = NULL;
    double b = strtod(v, &end);
    if (end != v && !*end && b > 0 && b < 86400) return b;
    if (note && note_size)
        snprintf(note, note_size, "PTXKIT_TUNE_BUDGET='%.40s%s' ignored (not a number of seconds in (0, 86400)): the budget is the default %.0f s",
                 v, strlen(v) > 40 ? "..." : "", TUNE_AUTO_BUDGET_S);
    return TUNE_AUTO_BUDGET_S;
}

int tune_bucket(size_t n) {
    int b = 0;
    while (n > 1) {
        n >>= 1;
        b++;
    }
    return b;
}

void tune_db_key_for(ptxkit_context *ctx, tune_db_key *key) {
    int major = 0, minor = 0;
    nvrtc_identity_version(&major, &minor); /* not ptxkit_versions_get: that loads NVRTC */
    tune_db_key_make(key, ctx->info.name, ctx->info.cc_major * 10 + ctx->info.cc_minor, ctx->info.sm_count,
                     ctx->cu ? ctx->cu->version : 0, major, minor, PTXKIT_VERSION_STRING);
}

/* A file may hold other GPUs' and builds' entries; an op's lookup should
 * not pay for them. */
static void select_mine(tune_state *s) {
    tune_db_clear(&s->mine);
    for (size_t i = 0; i < s->db.count; i++)
        if (tune_db_key_equal(&s->db.entries[i].key, &s->key) && !tune_db_put(&s->mine, &s->db.entries[i])) break;
}

/* (Re)reads the database file into s. A damaged or foreign file costs the
 * tuned choices, never the call: the message is kept for `ptxkit tune --show`. */
static void state_load(tune_state *s) {
    tune_db_clear(&s->db);
    tune_db_clear(&s->mine);
    s->attempt_count = 0;
    if (!tune_db_default_path(s->path, sizeof s->path)) {
        snprintf(s->message, sizeof s->message,
                 "no tuning database: no state directory (set PTXKIT_STATE_DIR or HOME) and PTXKIT_TUNE_DB is not set");
        return;
    }
    tune_db_load(s->path, &s->db, s->message, sizeof s->message);
    select_mine(s);
}

static void *state_create(ptxkit_context *ctx) {
    tune_state *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    if (pthread_mutex_init(&s->lock, NULL) != 0) {
        free(s);
        return NULL;
    }
    tune_db_init(&s->db);
    tune_db_init(&s->mine);
    tune_db_key_for(ctx, &s->key);
    state_load(s);
    return s;
}

static void state_destroy(ptxkit_context *ctx, void *value) {
    (void)ctx;
    tune_state *s = value;
    tune_db_clear(&s->db);
    tune_db_clear(&s->mine);
    pthread_mutex_destroy(&s->lock);
    free(s);
}

static const context_state_ops tune_state_ops = {state_create, state_destroy, NULL};

/* The context's state, locked and loaded; NULL (unlocked) only when out of
 * memory. */
static tune_state *state_lock(ptxkit_context *ctx) {
    tune_state *s = context_state(ctx, &tune_state_ops);
    if (!s) return NULL;
    pthread_mutex_lock(&s->lock);
    if (s->stale) {
        state_load(s);
        s->stale = false;
    }
    return s;
}

static void state_unlock(tune_state *s) {
    if (s) pthread_mutex_unlock(&s->lock);
}

void tune_state_update(ptxkit_context *ctx, tune_db *db) {
    tune_state *s = state_lock(ctx);
    if (s) {
        tune_db_clear(&s->db);
        s->db = *db;
        tune_db_init(db);
        select_mine(s);
        generation_bump();
    } else {
        tune_db_clear(db);
    }
    state_unlock(s);
}

void tune_state_reset(ptxkit_context *ctx) {
    if (!ctx) return;
    tune_state *s = state_lock(ctx);
    if (s) s->stale = true; /* read at the next use, so a file written in between counts */
    generation_bump();
    state_unlock(s);
}

void tune_state_describe(ptxkit_context *ctx, char *path, size_t path_size, char *msg, size_t msg_size) {
    tune_state *s = state_lock(ctx);
    snprintf(path, path_size, "%s", s ? s->path : "");
    snprintf(msg, msg_size, "%s", s ? s->message : "out of host memory");
    state_unlock(s);
}

static bool attempted_before(const tune_state *s, const char *family, const char *variant, int bucket) {
    for (int i = 0; i < s->attempt_count; i++)
        if (s->attempts[i].bucket == bucket && strcmp(s->attempts[i].family, family) == 0 &&
            strcmp(s->attempts[i].variant, variant) == 0)
            return true;
    return false;
}

static void remember_attempt(tune_state *s, const char *family, const char *variant, int bucket) {
    auto_attempt *f = &s->attempts[s->attempt_count < AUTO_ATTEMPTS_KEPT ? s->attempt_count++ : AUTO_ATTEMPTS_KEPT - 1];
    snprintf(f->family, sizeof f->family, "%s", family);
    snprintf(f->variant, sizeof f->variant, "%s", variant);
    f->bucket = bucket;
}

static double auto_budget(void) { return tune_budget_from_env(NULL, 0); }

/* Tunes one bucket that a lookup missed: failures here only mean the
 * defaults stay. The bucket is tuned once per process whatever happens: a
 * result that could not be saved must not cost the next call a tuning too. */
static void auto_tune(ptxkit_context *ctx, const char *family, const char *variant, int bucket, tune_auto_fn fn,
                      void *user) {
    fn(ctx, family, variant, (size_t)1 << bucket, auto_budget(), user);
    tune_state *s = state_lock(ctx);
    if (s) remember_attempt(s, family, variant, bucket);
    state_unlock(s);
    atomic_store(&auto_tuning, false);
}

bool tune_lookup_entry(ptxkit_context *ctx, const char *family, const char *variant, size_t n, tune_auto_fn auto_fn,
                       void *auto_user, tune_db_entry *out) {
    if (!ctx || !family || !variant || !out || tune_guard_active()) return false;
    tune_mode mode = tune_mode_from_env();
    if (mode == TUNE_MODE_OFF) return false;
    int bucket = tune_bucket(n);
    bool found = false;
    for (int attempt = 0; attempt < 2 && !found; attempt++) {
        tune_state *s = state_lock(ctx);
        const tune_db_entry *e = s ? tune_db_find(&s->mine, &s->key, family, variant, bucket, 0) : NULL;
        bool idle = false;
        bool tune_now = !e && s && auto_fn && attempt == 0 && mode == TUNE_MODE_AUTO && bucket >= TUNE_AUTO_MIN_LOG2 &&
                        s->path[0] && !attempted_before(s, family, variant, bucket) &&
                        auto_pause_depth == 0 && atomic_compare_exchange_strong(&auto_tuning, &idle, true);
        if (!e && !tune_now && s) e = tune_db_find(&s->mine, &s->key, family, variant, bucket, TUNE_NEAREST_BUCKETS);
        if (e) {
            *out = *e;
            found = true;
        }
        state_unlock(s);
        if (!tune_now) break;
        auto_tune(ctx, family, variant, bucket, auto_fn, auto_user);
    }
    return found;
}

bool tune_lookup(ptxkit_context *ctx, const char *family, const char *variant, size_t n, tune_config *out) {
    tune_db_entry e;
    /* ctx->auto_tune: how the context's opener tunes a built-in family's
     * missing bucket (objects.h); lookups sit below the families and the
     * search above them, so this layer calls up only through it. */
    if (!out || !ctx || !tune_lookup_entry(ctx, family, variant, n, ctx->auto_tune, NULL, &e)) return false;
    *out = e.config;
    return true;
}

bool tune_lookup_params(ptxkit_context *ctx, const char *family, const char *variant, size_t n, tune_db_entry *out) {
    return ctx && tune_lookup_entry(ctx, family, variant, n, ctx->auto_tune, NULL, out);
}

void tune_apply(ptxkit_context *ctx, const char *family, const char *variant, size_t n, launch_options *opt) {
    if (!opt) return;
    bool jit = options_use_jit(opt);
    if (!jit) return;
    if (opt->block_size && opt->items_per_thread && opt->vector_bytes && opt->blocks_per_sm && opt->load_op) return;
    tune_config c;
    if (!tune_lookup(ctx, family, variant, n, &c)) return;
    if (!opt->block_size) opt->block_size = c.block_size;
    if (!opt->items_per_thread) opt->items_per_thread = c.items_per_thread;
    if (!opt->vector_bytes) opt->vector_bytes = c.vector_bytes;
    if (!opt->blocks_per_sm) opt->blocks_per_sm = c.blocks_per_sm;
    if (!opt->load_op) opt->load_op = c.load_op;
}

ptxkit_status ptxkit_tune_source_get(ptxkit_context *ctx, const char *family, const char *variant, size_t n,
                                     const ptxkit_config *config, int *tuned) {
    if (!ctx || !family || !variant || !tuned)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_tune_source_get: NULL argument");
    *tuned = 0;
    /* as tune_apply decides: the precompiled PTX is fixed at the defaults,
     * and a configuration that sets every field leaves nothing to the
     * database (the families' names: their items field under its own name) */
    launch_options o = {0};
    long long v = 0;
    if (ptxkit_config_get(config, "path", &v) == PTXKIT_SUCCESS) o.path = (ptxkit_path)v;
    static const char *const items[] = {"unroll", "loads_in_flight", "vectors_per_thread", "tile"};
    bool all = true;
    static const char *const common[] = {"block_size", "vector_bytes", "blocks_per_sm", "load_op"};
    for (int i = 0; i < 4; i++) all = all && ptxkit_config_get(config, common[i], &v) == PTXKIT_SUCCESS && v;
    bool any_items = false;
    for (int i = 0; i < 4; i++) any_items = any_items || (ptxkit_config_get(config, items[i], &v) == PTXKIT_SUCCESS && v);
    if (!options_use_jit(&o) || (all && any_items)) return PTXKIT_SUCCESS;
    tune_db_entry e;
    /* no auto_fn: asking never tunes */
    *tuned = tune_lookup_entry(ctx, family, variant, n, NULL, NULL, &e) ? 1 : 0;
    return PTXKIT_SUCCESS;
}
