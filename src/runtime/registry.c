/* Per-context registry: a map from cache keys (kernel_cache.c) to the
 * modules loaded and the kernel and module objects handed out, so each is
 * made once per context, and all are released with it. Lookups hold a
 * mutex only around the table; compiles run unlocked, so threads may
 * compile different kernels at once. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/cache_key.h"
#include "runtime/objects.h"
#include "runtime/registry.h"

/* A key maps to a loaded module or to an object handed out. */
typedef struct registry_entry {
    cache_key key;
    CUmodule module;
    void *object;            /* a ptxkit_kernel or ptxkit_module handed to the application */
    char *log;               /* the module's load log (malloc'd, freed with the context), or NULL */
    bool used;
} registry_entry;

struct module_registry {
    pthread_mutex_t lock;
    registry_entry *slots;
    size_t capacity, count;  /* open addressing, capacity a power of two */
    CUmodule *modules;       /* every module loaded, unloaded with the context */
    size_t module_count, module_capacity;
    void **objects;          /* kernels and modules handed out, freed with the context */
    size_t object_count, object_capacity;
};

module_registry *module_registry_create(void) {
    module_registry *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    r->capacity = 64;
    r->slots = calloc(r->capacity, sizeof *r->slots);
    if (!r->slots) {
        free(r);
        return NULL;
    }
    pthread_mutex_init(&r->lock, NULL);
    return r;
}

void module_registry_destroy(ptxkit_context *ctx, module_registry *r) {
    if (!r) return;
    for (size_t i = 0; i < r->module_count; i++) ctx->cu->cuModuleUnload(r->modules[i]);
    for (size_t i = 0; i < r->object_count; i++) free(r->objects[i]);
    for (size_t i = 0; i < r->capacity; i++) free(r->slots[i].log);
    free(r->objects);
    pthread_mutex_destroy(&r->lock);
    free(r->modules);
    free(r->slots);
    free(r);
}

static size_t slot_of(const cache_key *key, size_t capacity) {
    uint64_t h;
    memcpy(&h, key->bytes, sizeof h);
    return (size_t)h & (capacity - 1);
}

/* The slot holding key, or the empty slot where it would go. Lock held. */
static registry_entry *probe(registry_entry *slots, size_t capacity, const cache_key *key) {
    for (size_t i = slot_of(key, capacity);; i = (i + 1) & (capacity - 1))
        if (!slots[i].used || memcmp(slots[i].key.bytes, key->bytes, 16) == 0) return &slots[i];
}

static bool registry_find(module_registry *r, const cache_key *key, registry_entry *out) {
    pthread_mutex_lock(&r->lock);
    registry_entry *e = probe(r->slots, r->capacity, key);
    bool found = e->used;
    if (found) *out = *e;
    pthread_mutex_unlock(&r->lock);
    return found;
}

/* Inserts key unless present; returns the entry now registered. Lock held. */
static registry_entry registry_insert(module_registry *r, const cache_key *key, CUmodule module,
                                      bool *inserted) {
    *inserted = false;
    registry_entry *e = probe(r->slots, r->capacity, key);
    if (e->used) return *e;
    if ((r->count + 1) * 2 > r->capacity) {
        registry_entry *grown = calloc(r->capacity * 2, sizeof *grown);
        if (!grown) return (registry_entry){*key, module, NULL, NULL, false};
        for (size_t i = 0; i < r->capacity; i++)
            if (r->slots[i].used) *probe(grown, r->capacity * 2, &r->slots[i].key) = r->slots[i];
        free(r->slots);
        r->slots = grown;
        r->capacity *= 2;
        e = probe(r->slots, r->capacity, key);
    }
    *e = (registry_entry){*key, module, NULL, NULL, true};
    r->count++;
    *inserted = true;
    return *e;
}

/* Registers a freshly loaded module with its load log. When another thread
 * registered the same image first, ours is unloaded and theirs returned. */
CUmodule registry_add_module(ptxkit_context *ctx, const cache_key *key, CUmodule module, const char *log) {
    module_registry *r = ctx->registry;
    char *log_copy = log && log[0] ? strdup(log) : NULL; /* no memory: the kernel reads "" */
    pthread_mutex_lock(&r->lock);
    bool tracked = true;
    if (r->module_count == r->module_capacity) {
        size_t cap = r->module_capacity ? r->module_capacity * 2 : 16;
        CUmodule *grown = realloc(r->modules, cap * sizeof *grown);
        if (grown) {
            r->modules = grown;
            r->module_capacity = cap;
        } else {
            tracked = false;
        }
    }
    bool inserted = false;
    registry_entry e = tracked ? registry_insert(r, key, module, &inserted) : (registry_entry){.module = module};
    if (inserted) {
        r->modules[r->module_count++] = module;
        registry_entry *slot = probe(r->slots, r->capacity, key);
        slot->log = log_copy;
        log_copy = NULL;
    }
    pthread_mutex_unlock(&r->lock);
    free(log_copy);
    if (e.module != module || !inserted) {
        if (e.module != module) ctx->cu->cuModuleUnload(module);
        return e.module; /* untracked (no memory): still usable, leaks at close */
    }
    return module;
}

bool registry_lookup(ptxkit_context *ctx, const cache_key *key, CUmodule *module, void **object) {
    registry_entry e;
    if (!registry_find(ctx->registry, key, &e)) return false;
    if (module) *module = e.module;
    if (object) *object = e.object;
    return true;
}

const char *registry_module_log(ptxkit_context *ctx, const cache_key *key) {
    registry_entry e;
    /* the log is set with the module, under the lock, and never changes after */
    return registry_find(ctx->registry, key, &e) && e.log ? e.log : "";
}

void *registry_add_object(ptxkit_context *ctx, const cache_key *key, void *object) {
    module_registry *r = ctx->registry;
    void *result = NULL;
    pthread_mutex_lock(&r->lock);
    registry_entry *e = probe(r->slots, r->capacity, key);
    if (e->used && e->object) {
        result = e->object; /* another thread registered it first */
    } else {
        if (r->object_count == r->object_capacity) {
            size_t cap = r->object_capacity ? r->object_capacity * 2 : 16;
            void **grown = realloc(r->objects, cap * sizeof *grown);
            if (grown) {
                r->objects = grown;
                r->object_capacity = cap;
            }
        }
        bool inserted;
        if (r->object_count < r->object_capacity) registry_insert(r, key, NULL, &inserted);
        e = probe(r->slots, r->capacity, key);
        if (r->object_count < r->object_capacity && e->used) {
            e->object = object;
            r->objects[r->object_count++] = object;
            result = object;
        }
    }
    pthread_mutex_unlock(&r->lock);
    if (result != object) free(object);
    return result;
}

size_t registry_module_count(ptxkit_context *ctx) {
    module_registry *r = ctx->registry;
    pthread_mutex_lock(&r->lock);
    size_t n = r->module_count;
    pthread_mutex_unlock(&r->lock);
    return n;
}
