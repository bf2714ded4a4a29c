/* The module calls (modules.h declares the object): programs compiled once
 * for several names, the kernels and variables of a module, and modules
 * loaded from application images. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/args.h"
#include "runtime/cache_key.h"
#include "runtime/context.h"
#include "runtime/kernel_cache.h"
#include "runtime/modules.h"
#include "runtime/objects.h"
#include "runtime/program.h"
#include "runtime/ptx_rewrite.h"
#include "runtime/registry.h"
#include "runtime/status.h"

/* The names a module was compiled for and their names in the image: the
 * table a module object carries, and the form the disk cache keeps beside
 * the image, so that a warm start finds every kernel and variable without
 * NVRTC. */

/* The name tables sit at the start of text: it must be aligned for them. */
_Static_assert(offsetof(struct ptxkit_module, text) % _Alignof(const char *) == 0, "text holds pointers first");

ptxkit_module *module_object_new(ptxkit_context *ctx, CUmodule module, const cache_key *key,
                                 const char *const *names, const char *const *lowered, int count) {
    size_t text = 0;
    for (int i = 0; i < count; i++) text += strlen(names[i]) + 1 + strlen(lowered[i]) + 1;
    size_t tables = (size_t)count * 2 * sizeof(const char *);
    /* the tables first, so they are aligned for pointers */
    ptxkit_module *m = calloc(1, sizeof *m + tables + text);
    if (!m) return NULL;
    m->ctx = ctx;
    m->module = module;
    m->key = *key;
    m->name_count = count;
    if (count > 0) {
        m->names = (const char **)(void *)m->text;
        m->lowered = m->names + count;
        char *at = m->text + tables;
        for (int i = 0; i < count; i++) {
            size_t n = strlen(names[i]) + 1, l = strlen(lowered[i]) + 1;
            m->names[i] = memcpy(at, names[i], n);
            at += n;
            m->lowered[i] = memcpy(at, lowered[i], l);
            at += l;
        }
    }
    return m;
}

const char *module_symbol_name(const ptxkit_module *m, const char *name) {
    for (int i = 0; i < m->name_count; i++)
        if (strcmp(m->names[i], name) == 0) return m->lowered[i];
    return name;
}

bool module_name_is_expression(const char *name) {
    /* a symbol is letters, digits, '_', and PTX's '$', '%' and '.' */
    for (const char *c = name; *c; c++)
        if (!(*c == '_' || *c == '$' || *c == '%' || *c == '.' || (*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'z') ||
              (*c >= 'A' && *c <= 'Z')))
            return true;
    return false;
}

/* Modules compiled from programs for several names, and the kernels of a
 * module: one NVRTC compile (one disk entry) serves every kernel and
 * variable named, and the kernels share the module's variables. The
 * single-kernel call is the short path: a module of its one entry. */
ptxkit_status ptxkit_program_module_get(ptxkit_context *ctx, ptxkit_program *p, const char *const *names, int name_count,
                                        const char *const *defines, int define_count, ptxkit_module **out) {
    if (out) *out = NULL;
    if (!ctx) return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_program_module_get: context is NULL");
    if (!out || !p)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_program_module_get: %s is NULL", out ? "program" : "out");
    *out = NULL;
    if (name_count < 0 || name_count > PTXKIT_MAX_MODULE_NAMES || (name_count > 0 && !names))
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_program_module_get: %d names (0 to %d, not NULL)",
                            name_count, PTXKIT_MAX_MODULE_NAMES);
    ptxkit_status st = program_check_entry(ctx, "*", defines, define_count);
    for (int i = 0; st == PTXKIT_SUCCESS && i < name_count; i++) {
        if (!names[i] || !*names[i] || strlen(names[i]) > 1024)
            return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT,
                                "ptxkit_program_module_get: name #%d is empty, NULL or longer than 1024 bytes", i);
        /* NVRTC refuses a name expression added twice */
        for (int j = 0; j < i; j++)
            if (strcmp(names[i], names[j]) == 0)
                return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_program_module_get: '%s' is named twice",
                                    names[i]);
    }
    if (st != PTXKIT_SUCCESS) return name_failure(st, "ptxkit_program_module_get");
    kernel_request req = {.kind = KERNEL_FROM_PROGRAM, .program = p, .defines = defines, .define_count = define_count,
                          .names = names, .name_count = name_count};
    cache_key key = kernel_cache_key(&req, KEY_MODULE, ctx->arch, ctx->cu->version);
    void *object = NULL;
    if (registry_lookup(ctx, &key, NULL, &object) && object) {
        *out = object;
        return PTXKIT_SUCCESS;
    }
    if ((st = context_enter(ctx)) != PTXKIT_SUCCESS) return name_failure(st, "ptxkit_program_module_get");
    CUmodule module = NULL;
    char **lowered = NULL;
    st = kernel_cache_program_module(ctx, &req, &module, &key, &lowered);
    if (st == PTXKIT_SUCCESS) {
        ptxkit_module *m = module_object_new(ctx, module, &key, names, (const char *const *)lowered, name_count);
        if (m) *out = registry_add_object(ctx, &key, m);
        if (!*out) st = record_error(ctx, PTXKIT_ERROR_OUT_OF_MEMORY, "ptxkit_program_module_get: out of host memory");
    }
    kernel_cache_names_free(lowered, name_count);
    context_leave(ctx);
    return name_failure(st, "ptxkit_program_module_get");
}

ptxkit_status ptxkit_module_kernel_get(ptxkit_module *m, const char *entry, ptxkit_kernel **out) {
    if (!m || !entry || !*entry || !out)
        return record_error(m ? m->ctx : NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_module_kernel_get: NULL argument");
    *out = NULL;
    const char *symbol = module_symbol_name(m, entry);
    if (symbol == entry && module_name_is_expression(entry))
        return record_error(m->ctx, PTXKIT_ERROR_NOT_FOUND,
                            "ptxkit_module_kernel_get: '%s' is a C++ name expression the module was not compiled for "
                            "(give it to ptxkit_program_module_get; a loaded image's kernels go by their mangled names)",
                            entry);
    kernel_request req = {.kind = KERNEL_FROM_MODULE, .module_key = &m->key, .entry = symbol};
    ptxkit_status st = kernel_cache_get(m->ctx, &req, out);
    if (st == PTXKIT_ERROR_NOT_FOUND && symbol != entry) /* say what the application asked for */
        return record_error(m->ctx, st, "ptxkit_module_kernel_get: '%s' (lowered '%s') is no kernel of the module", entry,
                            symbol);
    /* every caller stores the same module: the kernel's key is the module's and the symbol's */
    if (st == PTXKIT_SUCCESS) __atomic_store_n(&(*out)->module, m, __ATOMIC_RELEASE);
    return name_failure(st, "ptxkit_module_kernel_get");
}

ptxkit_status ptxkit_program_kernel_get(ptxkit_context *ctx, ptxkit_program *p, const char *entry,
                                        const char *const *defines, int define_count, ptxkit_kernel **out) {
    if (out) *out = NULL;
    if (!ctx) return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_program_kernel_get: context is NULL");
    if (!out || !p)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_program_kernel_get: %s is NULL", out ? "program" : "out");
    *out = NULL;
    ptxkit_status st = program_check_entry(ctx, entry, defines, define_count);
    if (st != PTXKIT_SUCCESS) return name_failure(st, "ptxkit_program_kernel_get");
    ptxkit_module *m = NULL;
    if ((st = ptxkit_program_module_get(ctx, p, &entry, 1, defines, define_count, &m)) != PTXKIT_SUCCESS)
        return name_failure(st, "ptxkit_program_kernel_get");
    return name_failure(ptxkit_module_kernel_get(m, entry, out), "ptxkit_program_kernel_get");
}

ptxkit_status ptxkit_kernel_module_get(ptxkit_kernel *k, ptxkit_module **out) {
    if (!k || !out)
        return record_error(k ? k->ctx : NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_kernel_module_get: NULL argument");
    *out = __atomic_load_n(&k->module, __ATOMIC_ACQUIRE);
    if (!*out)
        return record_error(k->ctx, PTXKIT_ERROR_NOT_FOUND,
                            "ptxkit_kernel_module_get: the kernel belongs to a built-in family, not to a module of the "
                            "application's");
    return PTXKIT_SUCCESS;
}

/* A module's __device__ and __constant__ variables: their address and
 * size by name (a C++ name expression the module was compiled for, an
 * unmangled name, or a loaded image's symbol), and copies of their bytes.
 * The copies are the memory calls' own, on the variable's address: a
 * variable is device memory like any other. */

/* The variable's address and size; records and returns a failure. */
static ptxkit_status variable_of(ptxkit_module *m, const char *call, const char *name, CUdeviceptr *dptr, size_t *bytes) {
    if (!m || !name || !*name)
        return record_error(m ? m->ctx : NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "%s: %s", call,
                            m ? "the variable's name is NULL or empty" : "module is NULL");
    const char *symbol = module_symbol_name(m, name);
    if (symbol == name && module_name_is_expression(name))
        return record_error(m->ctx, PTXKIT_ERROR_NOT_FOUND,
                            "%s: '%s' is a C++ name expression the module was not compiled for (give it to "
                            "ptxkit_program_module_get; a loaded image's variables go by their mangled names)",
                            call, name);
    ptxkit_status st = context_enter(m->ctx);
    if (st != PTXKIT_SUCCESS) return st;
    CUresult r = m->ctx->cu->cuModuleGetGlobal(dptr, bytes, m->module, symbol);
    context_leave(m->ctx);
    /* a symbol that is no variable (a kernel's) is answered INVALID_VALUE */
    if (r == CUDA_ERROR_NOT_FOUND || r == CUDA_ERROR_INVALID_VALUE)
        return record_error(m->ctx, PTXKIT_ERROR_NOT_FOUND, "%s: the module has no variable '%s'%s%s%s", call, name,
                            symbol != name ? " (lowered '" : "", symbol != name ? symbol : "", symbol != name ? "')" : "");
    if (r != CUDA_SUCCESS) return record_cuda_error(m->ctx, r, "cuModuleGetGlobal");
    return PTXKIT_SUCCESS;
}

ptxkit_status ptxkit_module_variable_get(ptxkit_module *m, const char *name, ptxkit_dptr *dptr, size_t *bytes) {
    if (dptr) *dptr = 0;
    if (bytes) *bytes = 0;
    CUdeviceptr d = 0;
    size_t size = 0;
    ptxkit_status st = variable_of(m, "ptxkit_module_variable_get", name, &d, &size);
    if (st != PTXKIT_SUCCESS) return st;
    if (dptr) *dptr = (ptxkit_dptr)d;
    if (bytes) *bytes = size;
    return PTXKIT_SUCCESS;
}

/* The address of bytes at offset in the variable, once they are checked
 * to lie inside it. */
static ptxkit_status variable_range(ptxkit_module *m, const char *call, const char *name, size_t offset, const void *host,
                                    size_t bytes, ptxkit_dptr *at) {
    CUdeviceptr d = 0;
    size_t size = 0;
    ptxkit_status st = variable_of(m, call, name, &d, &size);
    if (st != PTXKIT_SUCCESS) return st;
    if (offset > size || bytes > size - offset) /* no sum: it could wrap */
        return record_error(m->ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "%s: %zu bytes at offset %zu overrun '%s' (%zu bytes)",
                            call, bytes, offset, name, size);
    if (bytes && !host) return record_error(m->ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "%s: the host buffer is NULL", call);
    *at = (ptxkit_dptr)d + offset;
    return PTXKIT_SUCCESS;
}

ptxkit_status ptxkit_module_variable_write(ptxkit_module *m, const char *name, size_t offset, const void *src,
                                           size_t bytes) {
    ptxkit_dptr at = 0;
    ptxkit_status st = variable_range(m, "ptxkit_module_variable_write", name, offset, src, bytes, &at);
    if (st != PTXKIT_SUCCESS || !bytes) return st;
    return ptxkit_memory_write(m->ctx, at, src, bytes);
}

ptxkit_status ptxkit_module_variable_read(ptxkit_module *m, const char *name, size_t offset, void *dst, size_t bytes) {
    ptxkit_dptr at = 0;
    ptxkit_status st = variable_range(m, "ptxkit_module_variable_read", name, offset, dst, bytes, &at);
    if (st != PTXKIT_SUCCESS || !bytes) return st;
    return ptxkit_memory_read(m->ctx, dst, at, bytes);
}

ptxkit_status ptxkit_module_variable_write_async(ptxkit_module *m, const char *name, size_t offset, const void *src,
                                                 size_t bytes, ptxkit_stream *stream) {
    ptxkit_dptr at = 0;
    ptxkit_status st = variable_range(m, "ptxkit_module_variable_write_async", name, offset, src, bytes, &at);
    if (st != PTXKIT_SUCCESS || !bytes) return st;
    return ptxkit_memory_write_async(m->ctx, at, src, bytes, stream);
}

ptxkit_status ptxkit_module_variable_read_async(ptxkit_module *m, const char *name, size_t offset, void *dst,
                                                size_t bytes, ptxkit_stream *stream) {
    ptxkit_dptr at = 0;
    ptxkit_status st = variable_range(m, "ptxkit_module_variable_read_async", name, offset, dst, bytes, &at);
    if (st != PTXKIT_SUCCESS || !bytes) return st;
    return ptxkit_memory_read_async(m->ctx, dst, at, bytes, stream);
}

/* Images the application gives: PTX (its plain global loads given the cache
 * operator chosen at load), CUBIN and fatbins. Each distinct rewritten text
 * or image is loaded once per context; what the driver JIT makes of a PTX
 * text is kept by the driver's own compute cache, keyed by that text. */
#define FATBIN_MAGIC 0xBA55ED50u
#define MAX_IMAGE_BYTES ((size_t)1 << 30)

typedef enum image_kind { IMAGE_PTX, IMAGE_CUBIN, IMAGE_FATBIN } image_kind;

static image_kind kind_of(const unsigned char *p, size_t size) {
    if (size >= 4 && p[0] == 0x7f && p[1] == 'E' && p[2] == 'L' && p[3] == 'F') return IMAGE_CUBIN;
    if (size >= 4) {
        unsigned magic = (unsigned)p[0] | (unsigned)p[1] << 8 | (unsigned)p[2] << 16 | (unsigned)p[3] << 24;
        if (magic == FATBIN_MAGIC) return IMAGE_FATBIN;
    }
    return IMAGE_PTX;
}

static const char *kind_name(image_kind k) { return k == IMAGE_CUBIN ? "CUBIN" : k == IMAGE_FATBIN ? "fatbin" : "PTX"; }

ptxkit_status ptxkit_module_load(ptxkit_context *ctx, const void *image, size_t size, const ptxkit_module_options *options,
                                 ptxkit_module **out) {
    if (!ctx) return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_module_load: context is NULL");
    if (!out || !image)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_module_load: %s is NULL", out ? "image" : "out");
    *out = NULL;
    static const ptxkit_module_options defaults;
    const ptxkit_module_options *o = options ? options : &defaults;
    if (!RESERVED_ZERO(o))
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_module_load: reserved option fields are set");
    if ((unsigned)o->load_op >= PTXKIT_LOAD_OP_COUNT)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_module_load: unknown load operator %d", (int)o->load_op);
    if (o->load_op == PTXKIT_LOAD_NC && !o->read_only)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT,
                            "ptxkit_module_load: the read-only path (nc) is only correct for data no one writes while the "
                            "kernel runs: set read_only to promise that");
    const unsigned char *bytes = image;
    if (!size) size = strlen(image); /* size 0: NUL-terminated PTX text */
    image_kind kind = kind_of(bytes, size);
    if (!size || size > MAX_IMAGE_BYTES)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_module_load: image of %zu bytes (1 B to 1 GiB)", size);
    if (kind != IMAGE_PTX && o->load_op != PTXKIT_LOAD_DEFAULT)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT,
                            "ptxkit_module_load: a %s is machine code: its cache operators cannot be changed (give PTX)",
                            kind_name(kind));

    kernel_request req = {.kind = kind == IMAGE_PTX ? KERNEL_FROM_PTX : KERNEL_FROM_IMAGE, .image = image,
                          .image_size = size, .load_op = o->load_op};
    cache_key key = kernel_cache_key(&req, KEY_MODULE, ctx->arch, ctx->cu->version);
    void *object = NULL;
    if (registry_lookup(ctx, &key, NULL, &object) && object) {
        *out = object;
        return PTXKIT_SUCCESS;
    }
    ptxkit_status st = context_enter(ctx);
    if (st != PTXKIT_SUCCESS) return name_failure(st, "ptxkit_module_load");
    CUmodule module;
    ptx_rewrite_stats stats;
    st = kernel_cache_module(ctx, &req, &module, &stats);
    if (st == PTXKIT_SUCCESS) {
        ptxkit_module *m = module_object_new(ctx, module, &key, NULL, NULL, 0);
        if (m) {
            m->rewritten = stats.rewritten;
            m->kept = stats.kept_operator + stats.kept_ordered;
            *out = registry_add_object(ctx, &key, m);
        }
        if (!*out) st = record_error(ctx, PTXKIT_ERROR_OUT_OF_MEMORY, "ptxkit_module_load: out of host memory");
    }
    context_leave(ctx);
    return name_failure(st, "ptxkit_module_load");
}

ptxkit_status ptxkit_module_rewrite_counts_get(const ptxkit_module *m, int *rewritten, int *kept) {
    if (!m) return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_module_rewrite_counts_get: module is NULL");
    if (rewritten) *rewritten = m->rewritten;
    if (kept) *kept = m->kept;
    return PTXKIT_SUCCESS;
}
