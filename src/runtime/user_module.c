/* Images the application gives: PTX (its plain global loads given the cache
 * operator chosen at load), CUBIN and fatbins. Each distinct rewritten text
 * or image is loaded once per context; what the driver JIT makes of a PTX
 * text is kept by the driver's own compute cache, keyed by that text. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/args.h"
#include "runtime/cache_key.h"
#include "runtime/context.h"
#include "runtime/kernel_cache.h"
#include "runtime/module.h"
#include "runtime/objects.h"
#include "runtime/ptx_rewrite.h"
#include "runtime/registry.h"
#include "runtime/status.h"

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
    if (st != PTXKIT_SUCCESS) return st;
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
    return st;
}

ptxkit_status ptxkit_module_rewrite_counts(const ptxkit_module *m, int *rewritten, int *kept) {
    if (!m) return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_module_rewrite_counts: module is NULL");
    if (rewritten) *rewritten = m->rewritten;
    if (kept) *kept = m->kept;
    return PTXKIT_SUCCESS;
}
