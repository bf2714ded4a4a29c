/* Per-context registry of loaded kernels: a JIT kernel's cache key, or a
 * PTX file and entry point, maps to its CUfunction, so a kernel is compiled
 * and loaded once per context. Lookups hold a mutex only around the table;
 * compiles run unlocked so threads may compile different kernels at once. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/runtime.h"

typedef struct registry_entry {
    cache_key key;
    CUfunction fn;
    bool used;
} registry_entry;

struct module_registry {
    pthread_mutex_t lock;
    registry_entry *slots;
    size_t capacity, count;  /* open addressing, capacity a power of two */
    CUmodule *modules;
    size_t module_count, module_capacity;
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

static CUfunction registry_find(module_registry *r, const cache_key *key) {
    CUfunction fn = NULL;
    pthread_mutex_lock(&r->lock);
    for (size_t i = slot_of(key, r->capacity);; i = (i + 1) & (r->capacity - 1)) {
        if (!r->slots[i].used) break;
        if (memcmp(r->slots[i].key.bytes, key->bytes, 16) == 0) {
            fn = r->slots[i].fn;
            break;
        }
    }
    pthread_mutex_unlock(&r->lock);
    return fn;
}

static bool insert_slot(registry_entry *slots, size_t capacity, const cache_key *key, CUfunction fn) {
    for (size_t i = slot_of(key, capacity);; i = (i + 1) & (capacity - 1)) {
        if (!slots[i].used) {
            slots[i] = (registry_entry){*key, fn, true};
            return true;
        }
        if (memcmp(slots[i].key.bytes, key->bytes, 16) == 0) return false;
    }
}

/* Records a loaded module and its function; if another thread registered the
 * same key first, keeps theirs and unloads ours. */
static CUfunction registry_add(ptxkit_context *ctx, const cache_key *key, CUmodule module, CUfunction fn) {
    module_registry *r = ctx->registry;
    pthread_mutex_lock(&r->lock);
    CUfunction existing = NULL;
    for (size_t i = slot_of(key, r->capacity);; i = (i + 1) & (r->capacity - 1)) {
        if (!r->slots[i].used) break;
        if (memcmp(r->slots[i].key.bytes, key->bytes, 16) == 0) {
            existing = r->slots[i].fn;
            break;
        }
    }
    if (!existing && (r->count + 1) * 2 > r->capacity) {
        registry_entry *grown = calloc(r->capacity * 2, sizeof *grown);
        if (grown) {
            for (size_t i = 0; i < r->capacity; i++)
                if (r->slots[i].used) insert_slot(grown, r->capacity * 2, &r->slots[i].key, r->slots[i].fn);
            free(r->slots);
            r->slots = grown;
            r->capacity *= 2;
        }
    }
    bool keep_module = !existing && (r->count + 1) * 2 <= r->capacity;
    if (keep_module && r->module_count == r->module_capacity) {
        size_t cap = r->module_capacity ? r->module_capacity * 2 : 16;
        CUmodule *grown = realloc(r->modules, cap * sizeof *grown);
        if (grown) {
            r->modules = grown;
            r->module_capacity = cap;
        } else {
            keep_module = false;
        }
    }
    if (keep_module) {
        insert_slot(r->slots, r->capacity, key, fn);
        r->count++;
        r->modules[r->module_count++] = module;
    }
    pthread_mutex_unlock(&r->lock);
    if (!keep_module) {
        /* Someone else's copy is registered, or no memory to track ours. */
        if (existing) {
            ctx->cu->cuModuleUnload(module);
            return existing;
        }
    }
    return fn;
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
static ptxkit_status load_image(ptxkit_context *ctx, const char *what, const void *image, bool is_ptx, CUmodule *module) {
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

static ptxkit_status get_function(ptxkit_context *ctx, CUmodule module, const char *entry, CUfunction *fn) {
    CUresult r = ctx->cu->cuModuleGetFunction(fn, module, entry);
    if (r == CUDA_SUCCESS) return PTXKIT_SUCCESS;
    ctx->cu->cuModuleUnload(module);
    return record_error(ctx, PTXKIT_ERROR_NOT_FOUND, "kernel entry point '%s' not found in its module", entry);
}

ptxkit_status kernel_get(ptxkit_context *ctx, const kernel_spec *spec, CUfunction *out) {
    if (!spec || !spec->family || !spec->entry || spec->define_count < 0 || spec->define_count > PTXKIT_MAX_DEFINES)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "kernel_get: malformed kernel spec");
    /* The entry point is part of the identity: one module per entry. */
    const char *defines[PTXKIT_MAX_DEFINES + 1];
    memcpy(defines, spec->defines, (size_t)spec->define_count * sizeof *defines);
    char entry_define[96];
    snprintf(entry_define, sizeof entry_define, "\x01entry=%s", spec->entry);
    defines[spec->define_count] = entry_define;
    cache_key key = cache_key_for(spec->family, defines, spec->define_count + 1, ctx->arch, ctx->cu->version);
    if ((*out = registry_find(ctx->registry, &key)) != NULL) return PTXKIT_SUCCESS;

    void *image = NULL;
    size_t size = 0;
    bool is_cubin = false;
    disk_cache *disk = disk_cache_open(NULL);
    bool from_disk = disk_cache_read(disk, &key, &image, &size, &is_cubin);
    if (!from_disk) {
        compile_output compiled;
        ptxkit_status st = compile_family(ctx, spec->family, spec->defines, spec->define_count, ctx->arch, false, NULL, 0,
                                          &compiled);
        if (st != PTXKIT_SUCCESS) {
            disk_cache_close(disk);
            return st;
        }
        image = compiled.image;
        size = compiled.size;
        is_cubin = compiled.is_cubin;
        compiled.image = NULL;
        compile_output_free(&compiled);
        /* A cache that cannot be written costs speed, never correctness. */
        disk_cache_write(disk, &key, image, size, is_cubin);
    }
    disk_cache_close(disk);
    char what[160];
    snprintf(what, sizeof what, "loading %s kernel %s", spec->family, spec->entry);
    CUmodule module;
    ptxkit_status st = load_image(ctx, what, image, !is_cubin, &module);
    free(image);
    if (st != PTXKIT_SUCCESS) return st;
    CUfunction fn;
    if ((st = get_function(ctx, module, spec->entry, &fn)) != PTXKIT_SUCCESS) return st;
    *out = registry_add(ctx, &key, module, fn);
    return PTXKIT_SUCCESS;
}

ptxkit_status ptx_kernel_get(ptxkit_context *ctx, const char *ptx_name, const char *entry, CUfunction *out) {
    const embedded_file *file = embedded_find(ptx_name);
    if (!file) return record_error(ctx, PTXKIT_ERROR_NOT_FOUND, "no precompiled PTX file %s in this build", ptx_name);
    /* PTX kernels share the table: their key is a hash of file and entry. */
    const char *parts[2] = {ptx_name, entry};
    cache_key key = cache_key_for("\x02ptx", parts, 2, ctx->arch, ctx->cu->version);
    if ((*out = registry_find(ctx->registry, &key)) != NULL) return PTXKIT_SUCCESS;
    char what[160];
    snprintf(what, sizeof what, "loading precompiled %s", ptx_name);
    CUmodule module;
    ptxkit_status st = load_image(ctx, what, file->text, true, &module);
    if (st != PTXKIT_SUCCESS) return st;
    CUfunction fn;
    if ((st = get_function(ctx, module, entry, &fn)) != PTXKIT_SUCCESS) return st;
    *out = registry_add(ctx, &key, module, fn);
    return PTXKIT_SUCCESS;
}
