/* Per-context registry of loaded kernels: a JIT kernel's cache key, or a
 * PTX file and entry point, maps to its CUfunction, so a kernel is compiled
 * and loaded once per context. Lookups hold a mutex only around the table;
 * compiles run unlocked so threads may compile different kernels at once. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/ptx_rewrite.h"
#include "runtime/runtime.h"

/* A key maps either to a loaded module (the image of a family compiled with
 * one set of defines, or one PTX file) or to a function in one. */
typedef struct registry_entry {
    cache_key key;
    CUfunction fn;
    CUmodule module;
    void *object;            /* a ptxkit_kernel or ptxkit_module handed to the application */
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
static registry_entry registry_insert(module_registry *r, const cache_key *key, CUfunction fn, CUmodule module,
                                      bool *inserted) {
    *inserted = false;
    registry_entry *e = probe(r->slots, r->capacity, key);
    if (e->used) return *e;
    if ((r->count + 1) * 2 > r->capacity) {
        registry_entry *grown = calloc(r->capacity * 2, sizeof *grown);
        if (!grown) return (registry_entry){*key, fn, module, NULL, false};
        for (size_t i = 0; i < r->capacity; i++)
            if (r->slots[i].used) *probe(grown, r->capacity * 2, &r->slots[i].key) = r->slots[i];
        free(r->slots);
        r->slots = grown;
        r->capacity *= 2;
        e = probe(r->slots, r->capacity, key);
    }
    *e = (registry_entry){*key, fn, module, NULL, true};
    r->count++;
    *inserted = true;
    return *e;
}

/* Registers a freshly loaded module. When another thread registered the same
 * image first, ours is unloaded and theirs returned. */
CUmodule registry_add_module(ptxkit_context *ctx, const cache_key *key, CUmodule module) {
    module_registry *r = ctx->registry;
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
    registry_entry e = tracked ? registry_insert(r, key, NULL, module, &inserted) : (registry_entry){.module = module};
    if (inserted) r->modules[r->module_count++] = module;
    pthread_mutex_unlock(&r->lock);
    if (e.module != module || !inserted) {
        if (e.module != module) ctx->cu->cuModuleUnload(module);
        return e.module; /* untracked (no memory): still usable, leaks at close */
    }
    return module;
}

static void registry_add_function(ptxkit_context *ctx, const cache_key *key, CUfunction fn) {
    bool inserted;
    pthread_mutex_lock(&ctx->registry->lock);
    registry_insert(ctx->registry, key, fn, NULL, &inserted);
    pthread_mutex_unlock(&ctx->registry->lock);
}

bool registry_lookup(ptxkit_context *ctx, const cache_key *key, CUfunction *fn, CUmodule *module, void **object) {
    registry_entry e;
    if (!registry_find(ctx->registry, key, &e)) return false;
    if (fn) *fn = e.fn;
    if (module) *module = e.module;
    if (object) *object = e.object;
    return true;
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
        if (r->object_count < r->object_capacity) registry_insert(r, key, NULL, NULL, &inserted);
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

/* Lowest CUDA version whose driver accepts a PTX ISA version. */
static int cuda_for_ptx_isa(int major, int minor) {
    if (major >= 9) return (major + 4) * 1000 + minor * 10;
    if (major == 8) return minor >= 6 ? 12000 + (minor + 1) * 10 : 12000 + minor * 10;
    if (major == 7) return 11000 + minor * 10;
    return 10000;
}

/* Loads an image; the driver's JIT info and error logs and the load's wall
 * time go into the error message on failure. */
ptxkit_status load_image(ptxkit_context *ctx, const char *what, const void *image, bool is_ptx, CUmodule *module) {
    if (is_ptx) {
        int major = 0, minor = 0;
        const char *v = strstr((const char *)image, ".version ");
        if (v && sscanf(v + 9, "%d.%d", &major, &minor) == 2 && ctx->cu->version < cuda_for_ptx_isa(major, minor)) {
            int need = cuda_for_ptx_isa(major, minor);
            return record_error(ctx, PTXKIT_ERROR_PTX_VERSION,
                                "%s: PTX ISA %d.%d needs a CUDA %d.%d driver, this one is %d.%d: update the NVIDIA driver, or "
                                "install NVRTC so ptxkit compiles CUBIN for this GPU instead",
                                what, major, minor, need / 1000, need % 1000 / 10, ctx->cu->version / 1000,
                                ctx->cu->version % 1000 / 10);
        }
    }
    char info_log[4096] = "", error_log[8192] = "";
    float wall_ms = 0;
    CUjit_option opts[] = {CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, CU_JIT_ERROR_LOG_BUFFER,
                           CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, CU_JIT_WALL_TIME};
    void *values[] = {info_log, (void *)(uintptr_t)sizeof info_log, error_log, (void *)(uintptr_t)sizeof error_log, NULL};
    CUresult r = ctx->cu->cuModuleLoadDataEx(module, image, 5, opts, values);
    memcpy(&wall_ms, &values[4], sizeof wall_ms);
    pthread_mutex_lock(&ctx->error_lock);
    snprintf(ctx->jit_log, sizeof ctx->jit_log, "%s: %s in %.3f ms (driver JIT wall time)%s%s", what,
             r == CUDA_SUCCESS ? "loaded" : "failed", wall_ms, info_log[0] ? "\n" : "", info_log);
    pthread_mutex_unlock(&ctx->error_lock);
    if (r != CUDA_SUCCESS) {
        char text[256];
        driver_error_text(ctx->cu, r, text, sizeof text);
        ptxkit_status st = record_cuda_error(ctx, r, what);
        return record_error(ctx, st == PTXKIT_ERROR_DRIVER ? PTXKIT_ERROR_PTX_LOAD : st,
                            "%s: cuModuleLoadDataEx failed after %.2f ms: %s\nJIT error log:\n%s\nJIT info log:\n%s", what,
                            wall_ms, text, error_log, info_log);
    }
    return PTXKIT_SUCCESS;
}

static ptxkit_status get_function(ptxkit_context *ctx, CUmodule module, const char *what, const char *entry,
                                  CUfunction *fn) {
    CUresult r = ctx->cu->cuModuleGetFunction(fn, module, entry);
    if (r == CUDA_SUCCESS) return PTXKIT_SUCCESS;
    return record_error(ctx, PTXKIT_ERROR_NOT_FOUND, "kernel entry point '%s' not found in %s", entry, what);
}

/* The image of a family compiled with spec's defines: disk cache, else NVRTC
 * (and then stored in the disk cache). */
static ptxkit_status family_image(ptxkit_context *ctx, const kernel_spec *spec, const cache_key *key, void **image,
                                  bool *is_cubin) {
    size_t size = 0;
    disk_cache *disk = disk_cache_open(NULL);
    if (disk_cache_read(disk, key, image, &size, is_cubin)) {
        disk_cache_close(disk);
        return PTXKIT_SUCCESS;
    }
    compile_output compiled;
    ptxkit_status st =
        compile_family(ctx, spec->family, spec->defines, spec->define_count, ctx->arch, false, NULL, 0, &compiled);
    if (st == PTXKIT_SUCCESS) {
        *image = compiled.image;
        *is_cubin = compiled.is_cubin;
        /* A cache that cannot be written costs speed, never correctness. */
        disk_cache_write(disk, key, compiled.image, compiled.size, compiled.is_cubin);
        compiled.image = NULL;
        compile_output_free(&compiled);
    }
    disk_cache_close(disk);
    return st;
}

ptxkit_status kernel_get(ptxkit_context *ctx, const kernel_spec *spec, CUfunction *out) {
    if (!spec || !spec->family || !spec->entry || spec->define_count < 0 || spec->define_count > PTXKIT_MAX_DEFINES)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "kernel_get: malformed kernel spec");
    /* A function's key adds its entry point to its module's key. */
    const char *defines[PTXKIT_MAX_DEFINES + 1];
    memcpy(defines, spec->defines, (size_t)spec->define_count * sizeof *defines);
    char entry_define[160];
    snprintf(entry_define, sizeof entry_define, "\x01entry=%s", spec->entry);
    defines[spec->define_count] = entry_define;
    cache_key fn_key = cache_key_for(spec->family, defines, spec->define_count + 1, ctx->arch, ctx->cu->version);
    registry_entry e;
    if (registry_find(ctx->registry, &fn_key, &e)) {
        *out = e.fn;
        return PTXKIT_SUCCESS;
    }
    cache_key module_key = cache_key_for(spec->family, spec->defines, spec->define_count, ctx->arch, ctx->cu->version);
    char what[160];
    snprintf(what, sizeof what, "kernel family %s", spec->family);
    CUmodule module;
    if (registry_find(ctx->registry, &module_key, &e)) {
        module = e.module;
    } else {
        void *image = NULL;
        bool is_cubin = false;
        ptxkit_status st = family_image(ctx, spec, &module_key, &image, &is_cubin);
        if (st != PTXKIT_SUCCESS) return st;
        st = load_image(ctx, what, image, !is_cubin, &module);
        free(image);
        if (st != PTXKIT_SUCCESS) return st;
        module = registry_add_module(ctx, &module_key, module);
    }
    ptxkit_status st = get_function(ctx, module, what, spec->entry, out);
    if (st == PTXKIT_SUCCESS) registry_add_function(ctx, &fn_key, *out);
    return st;
}

ptxkit_status ptx_kernel_get(ptxkit_context *ctx, const char *ptx_name, ptxkit_load_op op, const char *entry,
                             CUfunction *out) {
    const char *op_name = ptxkit_load_op_name(op);
    if (!op_name) return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "unknown load operator %d", (int)op);
    const char *parts[3] = {ptx_name, op_name, entry};
    cache_key fn_key = cache_key_for("\x02ptx", parts, 3, ctx->arch, ctx->cu->version);
    registry_entry e;
    if (registry_find(ctx->registry, &fn_key, &e)) {
        *out = e.fn;
        return PTXKIT_SUCCESS;
    }
    const embedded_file *file = embedded_find(ptx_name);
    if (!file) return record_error(ctx, PTXKIT_ERROR_NOT_FOUND, "no precompiled PTX file %s in this build", ptx_name);
    cache_key module_key = cache_key_for("\x02ptx", parts, 2, ctx->arch, ctx->cu->version);
    char what[160];
    snprintf(what, sizeof what, "precompiled %s with %s loads", ptx_name, op_name);
    CUmodule module;
    if (registry_find(ctx->registry, &module_key, &e)) {
        module = e.module;
    } else {
        /* The committed text's loads carry no operator: give them op. */
        char *text = NULL, why[160];
        size_t size = 0;
        ptxkit_status st = ptx_rewrite_loads(file->text, file->size, op, &text, &size, NULL, why, sizeof why);
        if (st != PTXKIT_SUCCESS) return record_error(ctx, st, "%s: %s", what, why);
        st = load_image(ctx, what, text, true, &module);
        free(text);
        if (st != PTXKIT_SUCCESS) return st;
        module = registry_add_module(ctx, &module_key, module);
    }
    ptxkit_status st = get_function(ctx, module, what, entry, out);
    if (st == PTXKIT_SUCCESS) registry_add_function(ctx, &fn_key, *out);
    return st;
}
