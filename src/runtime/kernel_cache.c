/* The kernel cache: one key function and one path for every kernel source
 * (kernel_cache.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "runtime/cache_key.h"
#include "runtime/compile.h"
#include "runtime/context.h"
#include "runtime/disk_cache.h"
#include "runtime/kernel.h"
#include "runtime/kernel_cache.h"
#include "runtime/loader.h"
#include "runtime/objects.h"
#include "runtime/program.h"
#include "runtime/ptx_rewrite.h"
#include "runtime/registry.h"
#include "runtime/status.h"

/* A key's bytes are gathered on the stack and hashed in one call: a registry
 * hit (every family kernel lookup) pays for the key, and one-shot XXH3 over a
 * short buffer costs a fraction of a streaming state's reset, updates and
 * digest. Longer inputs (an image hashed by content) spill into a streaming
 * state; XXH3 gives the same hash for the same bytes either way, so keys do
 * not depend on where the spill happened. */
typedef struct key_writer {
    size_t len;
    bool streaming;
    unsigned char buf[768];
    XXH3_state_t stream;
} key_writer;

static void key_writer_init(key_writer *w) {
    w->len = 0;
    w->streaming = false;
}

static void put(key_writer *w, const void *bytes, size_t len) {
    if (!w->streaming && len <= sizeof w->buf - w->len) {
        memcpy(w->buf + w->len, bytes, len);
        w->len += len;
        return;
    }
    if (!w->streaming) {
        XXH3_128bits_reset(&w->stream);
        XXH3_128bits_update(&w->stream, w->buf, w->len);
        w->streaming = true;
    }
    XXH3_128bits_update(&w->stream, bytes, len);
}

/* Parts of a key are separated by a tag byte and lengths, so that no two
 * different inputs hash the same byte stream. */
static void hash_bytes(key_writer *state, char tag, const void *bytes, size_t len) {
    put(state, &tag, 1);
    put(state, &len, sizeof len);
    put(state, bytes, len);
}

static void hash_string(key_writer *state, char tag, const char *s) { hash_bytes(state, tag, s, strlen(s)); }

static cache_key digest(key_writer *w) {
    XXH128_canonical_t canon;
    XXH128_canonicalFromHash(&canon, w->streaming ? XXH3_128bits_digest(&w->stream) : XXH3_128bits(w->buf, w->len));
    cache_key key;
    memcpy(key.bytes, canon.digest, sizeof key.bytes);
    return key;
}

/* Defines are few: an insertion sort without qsort's indirect calls. */
static void sort_strings(const char **s, int n) {
    for (int i = 1; i < n; i++) {
        const char *v = s[i];
        int j = i;
        for (; j > 0 && strcmp(s[j - 1], v) > 0; j--) s[j] = s[j - 1];
        s[j] = v;
    }
}

/* The name expressions a program request compiles for: its names, or its
 * entry when that is one; their count. */
static int request_names(const kernel_request *req, const char *const **names) {
    if (req->name_count > 0) {
        *names = req->names;
        return req->name_count;
    }
    *names = &req->entry;
    return req->name_expression && req->entry ? 1 : 0;
}

void kernel_cache_names_free(char **names, int count) {
    if (!names) return;
    for (int i = 0; i < count; i++) free(names[i]);
    free(names);
}

/* A malloc'd copy of count names; NULL when out of memory. */
static char **copy_names(const char *const *names, int count) {
    char **copy = calloc((size_t)count, sizeof *copy);
    for (int i = 0; copy && i < count; i++)
        if ((copy[i] = strdup(names[i])) == NULL) {
            kernel_cache_names_free(copy, i);
            copy = NULL;
        }
    return copy;
}

static cache_key module_key(const kernel_request *req, int arch, int driver_version) {
    if (req->kind == KERNEL_FROM_MODULE) return *req->module_key;
    key_writer state;
    key_writer_init(&state);
    hash_string(&state, 'v', PTXKIT_VERSION_STRING);
    int numbers[3] = {(int)req->kind, arch, driver_version};
    hash_bytes(&state, 'n', numbers, sizeof numbers);
    if (req->kind == KERNEL_FROM_PROGRAM) {
        const ptxkit_program *p = req->program;
        hash_bytes(&state, 't', &p->hash, sizeof p->hash);
        /* the header files on disk the compile may read (header_tree.h) */
        if (p->tree) {
            text_hash tree = program_header_digest(p);
            hash_bytes(&state, 'h', &tree, sizeof tree);
        }
        /* every embedded header, which any program may include */
        text_hash builtin = builtin_headers_hash();
        hash_bytes(&state, 'b', &builtin, sizeof builtin);
        /* Defines are order-insensitive (distinct -D of one name are an
         * error anyway); options are not ("-Xptxas" takes the next one). */
        enum { SORT_MAX = 64 };
        const char *sorted[SORT_MAX];
        int n = req->define_count < SORT_MAX ? req->define_count : SORT_MAX;
        if (n > 0) memcpy(sorted, req->defines, (size_t)n * sizeof *sorted);
        sort_strings(sorted, n);
        for (int i = 0; i < n; i++) hash_string(&state, 'D', sorted[i]);
        for (int i = 0; i < p->option_count; i++) hash_string(&state, 'O', p->options[i]);
        for (int i = 0; i < req->option_count; i++) hash_string(&state, 'P', req->options[i]);
        /* one name hashes as the single-entry request did: the short path
         * and a module of that one name share their module */
        const char *const *names;
        int count = request_names(req, &names);
        for (int i = 0; i < count; i++) hash_string(&state, 'E', names[i]);
        /* the compiler's build decides the code */
        text_hash nvrtc = nvrtc_identity_hash();
        hash_bytes(&state, 'r', &nvrtc, sizeof nvrtc);
    } else {
        if (req->image_name) hash_string(&state, 'I', req->image_name);
        else hash_bytes(&state, 'i', req->image, req->image_size);
        int op = req->kind == KERNEL_FROM_PTX ? (int)req->load_op : -1;
        hash_bytes(&state, 'o', &op, sizeof op);
    }
    return digest(&state);
}

cache_key kernel_cache_key(const kernel_request *req, key_part part, int arch, int driver_version) {
    cache_key module = module_key(req, arch, driver_version);
    if (part == KEY_MODULE) return module;
    key_writer state;
    key_writer_init(&state);
    hash_bytes(&state, 'm', module.bytes, sizeof module.bytes);
    hash_string(&state, 'e', req->entry ? req->entry : "");
    return digest(&state);
}

static cache_key key_in(const ptxkit_context *ctx, const kernel_request *req, key_part part) {
    return kernel_cache_key(req, part, ctx->arch, ctx->cu->version);
}

/* Appends text to out[0..*at), cut to size (NUL-terminated): a warm
 * start's first lookup describes its load, and printf's machinery costs
 * more there than the copies. */
static void append(char *out, size_t size, size_t *at, const char *text) {
    size_t n = strlen(text);
    if (*at + 1 >= size) return;
    if (n > size - 1 - *at) n = size - 1 - *at;
    memcpy(out + *at, text, n);
    *at += n;
    out[*at] = 0;
}

/* What the request is, for messages. */
static void describe(const kernel_request *req, char *out, size_t size) {
    switch (req->kind) {
    case KERNEL_FROM_PROGRAM: {
        /* the entry, or the names a module is compiled for */
        const char *const *names;
        int count = request_names(req, &names);
        if (count == 0 && req->entry) {
            names = &req->entry;
            count = 1;
        }
        size_t at = 0;
        out[0] = 0;
        append(out, size, &at, req->program->name);
        for (int i = 0; i < count; i++) {
            append(out, size, &at, i ? ", " : count > 1 ? ", entries " : ", entry ");
            append(out, size, &at, names[i]);
        }
        break;
    }
    case KERNEL_FROM_PTX:
        snprintf(out, size, "%s with %s loads", req->image_name ? req->image_name : "PTX", ptxkit_load_op_name(req->load_op));
        break;
    case KERNEL_FROM_IMAGE: snprintf(out, size, "application image"); break;
    case KERNEL_FROM_MODULE: snprintf(out, size, "module"); break;
    }
}

/* A compiled program's image (and, for name expressions, their lowered
 * names: a malloc'd array, see request_names): from disk, else NVRTC (then
 * stored on disk). The names are a file of the image's entry, checked with
 * it: an entry without its names is a miss, never a wrong name. A fresh
 * compile's NVRTC log (warnings), if any, goes into nvrtc_log (may be NULL;
 * cut to its size), for the kernel's JIT log; a disk hit has none. */
static ptxkit_status compiled_image(ptxkit_context *ctx, const kernel_request *req, const cache_key *key, void **image,
                                    bool *is_cubin, char ***lowered, char *nvrtc_log, size_t nvrtc_log_size) {
    const char *const *names;
    int count = request_names(req, &names);
    *lowered = NULL;
    disk_cache *disk = disk_cache_open(NULL);
    size_t size = 0;
    char *text = NULL;
    const char *stored[PTXKIT_MAX_MODULE_NAMES];
    if (count <= PTXKIT_MAX_MODULE_NAMES &&
        disk_cache_read_entry(disk, key, image, &size, is_cubin, NULL, count > 0 ? &text : NULL)) {
        if (count == 0 || (text && disk_cache_names_split(text, count, stored) && (*lowered = copy_names(stored, count)))) {
            free(text);
            disk_cache_close(disk);
            return PTXKIT_SUCCESS;
        }
        free(*image);
        *image = NULL;
    }
    free(text);
    /* one name: as a single entry, whose messages name it */
    compile_request creq = program_request(req->program, count == 1 ? names[0] : NULL, req->defines, req->define_count);
    /* the program's options, then the request's */
    const char *options[PROGRAM_MAX_OPTIONS + KERNEL_REQUEST_MAX_OPTIONS];
    if (req->option_count > 0) {
        memcpy(options, creq.options, (size_t)creq.option_count * sizeof *options);
        memcpy(options + creq.option_count, req->options, (size_t)req->option_count * sizeof *options);
        creq.options = options;
        creq.option_count += req->option_count;
    }
    if (count > 1) {
        creq.name_expressions = names;
        creq.name_expression_count = count;
    }
    compile_output out;
    ptxkit_status st = compile_source(ctx, &creq, ctx->arch, false, &out);
    if (st == PTXKIT_SUCCESS && nvrtc_log && nvrtc_log_size && out.log && out.log[0])
        snprintf(nvrtc_log, nvrtc_log_size, "%s", out.log);
    if (st == PTXKIT_SUCCESS && count == 1) {
        out.lowered_names = calloc(1, sizeof *out.lowered_names);
        if (!out.lowered_names) {
            compile_output_free(&out);
            st = record_error(ctx, PTXKIT_ERROR_OUT_OF_MEMORY, "kernel cache: out of host memory");
        } else {
            out.lowered_names[0] = out.lowered_name;
            out.lowered_name = NULL;
            out.lowered_count = 1;
        }
    }
    if (st == PTXKIT_SUCCESS) {
        /* a cache that cannot be written costs speed, never correctness */
        char *lines = count > 0 ? disk_cache_names_join((const char *const *)out.lowered_names, count) : NULL;
        if (count == 0 || lines)
            disk_cache_write_entry(disk, key, out.image, out.size, out.is_cubin,
                                   req->program->builtin ? DISK_CACHE_FAMILY : DISK_CACHE_PROGRAM, lines);
        free(lines);
        *image = out.image;
        *is_cubin = out.is_cubin;
        *lowered = out.lowered_names;
        out.image = NULL;
        out.lowered_names = NULL;
        out.lowered_count = 0;
        compile_output_free(&out);
    }
    disk_cache_close(disk);
    return st;
}

/* Loads what the request produces and registers the module (lowered: the
 * lowered names of a program's name expressions, see compiled_image, or
 * NULL). */
static ptxkit_status produce_and_load(ptxkit_context *ctx, const kernel_request *req, const cache_key *key,
                                      CUmodule *module, ptx_rewrite_stats *stats, char ***lowered) {
    char what[1200], log[4096], nvrtc_log[2048] = "";
    describe(req, what, sizeof what);
    void *image = NULL;
    bool is_ptx = false;
    ptxkit_status st = PTXKIT_SUCCESS;
    switch (req->kind) {
    case KERNEL_FROM_PROGRAM: {
        bool is_cubin = false;
        st = compiled_image(ctx, req, key, &image, &is_cubin, lowered, nvrtc_log, sizeof nvrtc_log);
        is_ptx = !is_cubin;
        break;
    }
    case KERNEL_FROM_PTX: {
        char why[256] = "";
        size_t size = 0;
        char *text = NULL;
        st = ptx_rewrite_loads(req->image, req->image_size, req->load_op, &text, &size, stats, why, sizeof why);
        if (st != PTXKIT_SUCCESS) return record_error(ctx, st, "%s: %s", what, why);
        image = text;
        is_ptx = true;
        break;
    }
    case KERNEL_FROM_IMAGE:
        st = load_image(ctx, what, req->image, false, module, log, sizeof log);
        if (st == PTXKIT_SUCCESS) *module = registry_add_module(ctx, key, *module, log);
        return st;
    case KERNEL_FROM_MODULE:
        return record_error(ctx, PTXKIT_ERROR_NOT_FOUND, "kernel cache: the module is not loaded in this context");
    }
    if (st == PTXKIT_SUCCESS) st = load_image(ctx, what, image, is_ptx, module, log, sizeof log);
    free(image);
    if (st == PTXKIT_SUCCESS && nvrtc_log[0]) { /* the compile's warnings after the load's line and log */
        size_t used = strlen(log);
        if (used + 1 < sizeof log) snprintf(log + used, sizeof log - used, "\nNVRTC log:\n%s", nvrtc_log);
    }
    if (st == PTXKIT_SUCCESS) *module = registry_add_module(ctx, key, *module, log);
    return st;
}

ptxkit_status kernel_cache_module(ptxkit_context *ctx, const kernel_request *req, CUmodule *module,
                                  ptx_rewrite_stats *stats) {
    cache_key key = key_in(ctx, req, KEY_MODULE);
    if (stats) memset(stats, 0, sizeof *stats);
    if (registry_lookup(ctx, &key, module, NULL) && *module) {
        if (stats && req->kind == KERNEL_FROM_PTX) {
            /* the counts of a module another caller loaded: rewrite again to count */
            char *text = NULL, why[8];
            size_t size;
            if (ptx_rewrite_loads(req->image, req->image_size, req->load_op, &text, &size, stats, why, sizeof why) ==
                PTXKIT_SUCCESS)
                free(text);
        }
        return PTXKIT_SUCCESS;
    }
    char **lowered = NULL;
    ptxkit_status st = produce_and_load(ctx, req, &key, module, stats, &lowered);
    const char *const *names;
    kernel_cache_names_free(lowered, request_names(req, &names));
    return st;
}

ptxkit_status kernel_cache_program_module(ptxkit_context *ctx, const kernel_request *req, CUmodule *module,
                                          const cache_key *key, char ***lowered) {
    *lowered = NULL;
    if (!registry_lookup(ctx, key, module, NULL) || !*module) return produce_and_load(ctx, req, key, module, NULL, lowered);
    const char *const *names;
    if (request_names(req, &names) == 0) return PTXKIT_SUCCESS;
    /* loaded before, without its names at hand (another thread, or a call
     * that failed after loading): from disk, else NVRTC again */
    void *unused = NULL;
    bool is_cubin;
    ptxkit_status st = compiled_image(ctx, req, key, &unused, &is_cubin, lowered, NULL, 0);
    free(unused);
    return st;
}

ptxkit_status kernel_cache_get(ptxkit_context *ctx, const kernel_request *req, ptxkit_kernel **out) {
    *out = NULL;
    if (!req->entry) return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "kernel cache: no entry point");
    cache_key kernel_key = key_in(ctx, req, KEY_KERNEL);
    void *object = NULL;
    if (registry_lookup(ctx, &kernel_key, NULL, &object) && object) {
        *out = object;
        return PTXKIT_SUCCESS;
    }
    ptxkit_status st = context_enter(ctx);
    if (st != PTXKIT_SUCCESS) return st;
    cache_key key = key_in(ctx, req, KEY_MODULE);
    CUmodule module = NULL;
    char **lowered = NULL;
    if (!registry_lookup(ctx, &key, &module, NULL) || !module) st = produce_and_load(ctx, req, &key, &module, NULL, &lowered);
    if (st == PTXKIT_SUCCESS && req->name_expression && !lowered) {
        /* The module was registered by another thread (or an earlier call
         * that failed after loading). The lowered name is on disk, or, when
         * the cache is off or could not be written, comes from NVRTC again:
         * never an error for a kernel that compiled. */
        void *unused = NULL;
        bool is_cubin;
        st = compiled_image(ctx, req, &key, &unused, &is_cubin, &lowered, NULL, 0);
        free(unused);
    }
    const char *name = lowered ? lowered[0] : req->entry;
    CUfunction fn = NULL;
    if (st == PTXKIT_SUCCESS) {
        CUresult r = ctx->cu->cuModuleGetFunction(&fn, module, name);
        if (r != CUDA_SUCCESS) {
            char what[1200];
            describe(req, what, sizeof what);
            st = record_error(ctx, PTXKIT_ERROR_NOT_FOUND, "%s: no kernel '%s' in the module%s", what, name,
                              req->kind == KERNEL_FROM_IMAGE || req->kind == KERNEL_FROM_MODULE
                                  ? " (C++ kernels have mangled names)" : "");
        }
    }
    const char *const *names;
    kernel_cache_names_free(lowered, request_names(req, &names));
    if (st == PTXKIT_SUCCESS && (*out = kernel_object(ctx, &kernel_key, fn, registry_module_log(ctx, &key))) == NULL) st = PTXKIT_ERROR_OUT_OF_MEMORY;
    context_leave(ctx);
    return st;
}
