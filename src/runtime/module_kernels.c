/* Modules compiled from programs for several names, and the kernels of a
 * module: one NVRTC compile (one disk entry) serves every kernel and
 * variable named, and the kernels share the module's variables. The
 * single-kernel call is the short path: a module of its one entry. */
#include <stdlib.h>
#include <string.h>

#include "runtime/cache_key.h"
#include "runtime/context.h"
#include "runtime/kernel_cache.h"
#include "runtime/module.h"
#include "runtime/objects.h"
#include "runtime/program.h"
#include "runtime/registry.h"
#include "runtime/status.h"

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
    if (st != PTXKIT_SUCCESS) return st;
    kernel_request req = {.kind = KERNEL_FROM_PROGRAM, .program = p, .defines = defines, .define_count = define_count,
                          .names = names, .name_count = name_count};
    cache_key key = kernel_cache_key(&req, KEY_MODULE, ctx->arch, ctx->cu->version);
    void *object = NULL;
    if (registry_lookup(ctx, &key, NULL, &object) && object) {
        *out = object;
        return PTXKIT_SUCCESS;
    }
    if ((st = context_enter(ctx)) != PTXKIT_SUCCESS) return st;
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
    return st;
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
    return st;
}

ptxkit_status ptxkit_module_kernel(ptxkit_module *m, const char *entry, ptxkit_kernel **out) {
    return ptxkit_module_kernel_get(m, entry, out);
}

ptxkit_status ptxkit_program_kernel_get(ptxkit_context *ctx, ptxkit_program *p, const char *entry,
                                        const char *const *defines, int define_count, ptxkit_kernel **out) {
    if (out) *out = NULL;
    if (!ctx) return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_program_kernel_get: context is NULL");
    if (!out || !p)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_program_kernel_get: %s is NULL", out ? "program" : "out");
    *out = NULL;
    ptxkit_status st = program_check_entry(ctx, entry, defines, define_count);
    if (st != PTXKIT_SUCCESS) return st;
    ptxkit_module *m = NULL;
    if ((st = ptxkit_program_module_get(ctx, p, &entry, 1, defines, define_count, &m)) != PTXKIT_SUCCESS) return st;
    return ptxkit_module_kernel_get(m, entry, out);
}

ptxkit_status ptxkit_kernel_get(ptxkit_context *ctx, ptxkit_program *p, const char *entry, const char *const *defines,
                                int define_count, ptxkit_kernel **out) {
    return ptxkit_program_kernel_get(ctx, p, entry, defines, define_count, out);
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
