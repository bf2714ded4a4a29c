/* The families' kernels by path (through the kernel cache), the defines
 * their specs carry, and the checks of their launch options. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/args.h"
#include "runtime/cache_key.h"
#include "runtime/compile.h"
#include "runtime/embedded.h"
#include "runtime/kernel.h"
#include "runtime/kernel_cache.h"
#include "runtime/launch.h"
#include "runtime/objects.h"
#include "runtime/program.h"
#include "runtime/status.h"

ptxkit_status check_block_size(ptxkit_context *ctx, int requested, int fallback, int *out) {
    int b = requested ? requested : fallback;
    if (b < 32 || b > 1024 || (b & (b - 1)) != 0)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "block size %d is not a power of two in [32, 1024]", b);
    if (ctx && ctx->info.max_threads_per_block && b > ctx->info.max_threads_per_block)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "block size %d exceeds this GPU's limit of %d threads", b,
                            ctx->info.max_threads_per_block);
    *out = b;
    return PTXKIT_SUCCESS;
}

ptxkit_status check_launch_options(ptxkit_context *ctx, const launch_options *in, launch_options *out) {
    if (!ctx) return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "context is NULL");
    static const launch_options defaults;
    *out = in ? *in : defaults;
    if ((unsigned)out->path > PTXKIT_PATH_PTX)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "unknown kernel path %d", (int)out->path);
    if ((unsigned)out->load_op >= PTXKIT_LOAD_OP_COUNT)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "unknown load cache operator %d", (int)out->load_op);
    if (out->block_size) {
        int b;
        ptxkit_status st = check_block_size(ctx, out->block_size, 0, &b);
        if (st != PTXKIT_SUCCESS) return st;
    }
    if (out->vector_bytes && out->vector_bytes != 4 && out->vector_bytes != 8 && out->vector_bytes != 16)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "vector width %d bytes is not 4, 8 or 16", out->vector_bytes);
    if (out->items_per_thread < 0 || out->items_per_thread > 64)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "items per thread %d is not in [0, 64]", out->items_per_thread);
    if (out->blocks_per_sm < 0 || out->blocks_per_sm > 64)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "blocks per SM %d is not in [0, 64]", out->blocks_per_sm);
    return PTXKIT_SUCCESS;
}

bool spec_define_str(kernel_spec *spec, define_scratch *scratch, const char *name, const char *value) {
    /* a define left out would compile another kernel: kernel_get refuses the spec */
    if (spec->define_count >= PTXKIT_MAX_DEFINES || scratch->used >= PTXKIT_MAX_DEFINES) return !(spec->dropped = true);
    char *slot = scratch->text[scratch->used];
    int len = snprintf(slot, sizeof scratch->text[0], "%s=%s", name, value);
    if (len < 0 || (size_t)len >= sizeof scratch->text[0]) return !(spec->dropped = true);
    scratch->used++;
    spec->defines[spec->define_count++] = slot;
    return true;
}

bool spec_define_int(kernel_spec *spec, define_scratch *scratch, const char *name, long long value) {
    char text[32];
    snprintf(text, sizeof text, "%lld", value);
    return spec_define_str(spec, scratch, name, text);
}

const char *load_op_define(ptxkit_load_op op) {
    static const char *const values[PTXKIT_LOAD_OP_COUNT] = {"0", "1", "2", "3", "4", "5", "6"};
    return (unsigned)op < PTXKIT_LOAD_OP_COUNT ? values[op] : NULL;
}

const char *ptxkit_load_op_define(ptxkit_load_op op) { return load_op_define(op); }

/* Availability through the NVRTC identity record, which a warm process
 * reads from the cache directory instead of loading NVRTC (~6 ms). */
bool options_use_jit(const launch_options *o) {
    return o->path == PTXKIT_PATH_JIT || (o->path == PTXKIT_PATH_AUTO && nvrtc_identity_version(NULL, NULL));
}

ptxkit_status kernel_get(ptxkit_context *ctx, const kernel_spec *spec, ptxkit_kernel **out) {
    if (!spec || !spec->family || !spec->entry || spec->define_count < 0 || spec->define_count > PTXKIT_MAX_DEFINES ||
        spec->option_count < 0 || spec->option_count > KERNEL_REQUEST_MAX_OPTIONS ||
        (spec->option_count && !spec->options))
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "kernel_get: malformed kernel spec");
    if (spec->dropped)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "kernel_get: %s: a define did not fit the spec (at most %d)",
                            spec->entry, PTXKIT_MAX_DEFINES);
    const ptxkit_program *program = builtin_program(spec->family);
    if (!program) return record_error(ctx, PTXKIT_ERROR_NOT_FOUND, "no kernel source %s.cu in this build", spec->family);
    kernel_request req = {.kind = KERNEL_FROM_PROGRAM, .program = program, .defines = spec->defines,
                          .define_count = spec->define_count, .options = spec->options,
                          .option_count = spec->option_count, .entry = spec->entry};
    ptxkit_status st = kernel_cache_get(ctx, &req, out);
    /* a family's kernels wait for the kernel ahead in their first statement */
    if (st == PTXKIT_SUCCESS) kernel_allow_programmatic(*out);
    return st;
}

ptxkit_status ptx_kernel_get(ptxkit_context *ctx, const char *ptx_name, ptxkit_load_op op, const char *entry,
                             ptxkit_kernel **out) {
    if (!ptxkit_load_op_name(op))
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "unknown load operator %d", (int)op);
    const embedded_file *file = embedded_find(ptx_name);
    if (!file) return record_error(ctx, PTXKIT_ERROR_NOT_FOUND, "no precompiled PTX file %s in this build", ptx_name);
    kernel_request req = {.kind = KERNEL_FROM_PTX, .image = file->text, .image_size = file->size, .image_name = file->name,
                          .load_op = op, .entry = entry};
    return kernel_cache_get(ctx, &req, out);
}

static ptxkit_status jit_kernel(ptxkit_context *ctx, const launch_options *o, const kernel_spec *spec,
                                int block, ptxkit_kernel **out) {
    kernel_spec full = *spec;
    define_scratch scratch = {0};
    if (!spec_define_int(&full, &scratch, "BLOCK_SIZE", block) ||
        !spec_define_str(&full, &scratch, "LOAD_OP", load_op_define(o->load_op)))
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "kernel %s: too many defines", spec->entry);
    return kernel_get(ctx, &full, out);
}

ptxkit_status family_kernel_get(ptxkit_context *ctx, const launch_options *o, const kernel_spec *spec,
                                int default_block, ptxkit_kernel **out, int *block_used) {
    int block = 0;
    ptxkit_status st = check_block_size(ctx, o->block_size, default_block, &block);
    if (st != PTXKIT_SUCCESS) return st;
    if (options_use_jit(o)) {
        *block_used = block;
        return jit_kernel(ctx, o, spec, block, out);
    }
    /* "default" leaves the loads plain, as LOAD_OP=0 does on the JIT path
     * (for ptxas a plain global load is .ca). */
    char name[96];
    snprintf(name, sizeof name, "%s.ptx", spec->family);
    st = ptx_kernel_get(ctx, name, o->load_op, spec->entry, out);
    if (st == PTXKIT_ERROR_PTX_VERSION && o->path == PTXKIT_PATH_AUTO && nvrtc_get(NULL, 0)) {
        *block_used = block;
        return jit_kernel(ctx, o, spec, block, out);
    }
    if (st != PTXKIT_SUCCESS) return st;
    /* the PTX's kernels carry __launch_bounds__ of the block they were generated for */
    kernel_limits_read(*out);
    int fixed = (*out)->max_threads;
    if (o->block_size && o->block_size != fixed)
        return record_error(ctx, PTXKIT_ERROR_UNSUPPORTED,
                            "the precompiled PTX of %s is built for %d threads per block, not %d: use the JIT path for other "
                            "block sizes", spec->family, fixed, o->block_size);
    *block_used = fixed;
    return PTXKIT_SUCCESS;
}

/* ---- configurations: the public value type of named parameters ---- */

static int *launch_field_at(launch_options *o, launch_field f) {
    switch (f) {
    case LAUNCH_BLOCK_SIZE: return &o->block_size;
    case LAUNCH_VECTOR_BYTES: return &o->vector_bytes;
    case LAUNCH_ITEMS: return &o->items_per_thread;
    case LAUNCH_BLOCKS_PER_SM: return &o->blocks_per_sm;
    default: return NULL;
    }
}

static bool launch_value_ok(launch_field f, long long v) {
    switch (f) {
    case LAUNCH_PATH: return v >= 0 && v <= PTXKIT_PATH_PTX;
    case LAUNCH_LOAD_OP: return v >= 0 && v < PTXKIT_LOAD_OP_COUNT;
    case LAUNCH_BLOCK_SIZE: return v == 0 || (v >= 32 && v <= 1024 && (v & (v - 1)) == 0);
    case LAUNCH_VECTOR_BYTES: return v == 0 || v == 4 || v == 8 || v == 16;
    default: return v >= 0 && v <= 64;
    }
}

static const char *launch_range_text(launch_field f) {
    switch (f) {
    case LAUNCH_PATH: return "a ptxkit_path (0 auto, 1 JIT, 2 PTX)";
    case LAUNCH_LOAD_OP: return "a ptxkit_load_op (0 to 6)";
    case LAUNCH_BLOCK_SIZE: return "0 or a power of two in [32, 1024]";
    case LAUNCH_VECTOR_BYTES: return "0, 4, 8 or 16";
    default: return "in [0, 64]";
    }
}

ptxkit_status launch_options_from_config(ptxkit_context *ctx, const char *who, const ptxkit_config *c,
                                         const config_name *names, launch_options *out) {
    memset(out, 0, sizeof *out);
    if (!c) return PTXKIT_SUCCESS;
    if (c->count < 0 || c->count > PTXKIT_CONFIG_MAX_PARAMS)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "%s: configuration count %d is out of range", who,
                            c->count);
    for (int i = 0; i < c->count; i++) {
        const char *name = c->params[i].name;
        long long v = c->params[i].value;
        const config_name *n = names;
        while (n->name && strncmp(n->name, name, PTXKIT_CONFIG_NAME_SIZE) != 0) n++;
        if (!n->name) {
            char known[256] = "";
            for (const config_name *k = names; k->name; k++)
                snprintf(known + strlen(known), sizeof known - strlen(known), "%s%s", k == names ? "" : ", ", k->name);
            return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "%s: unknown parameter \"%.*s\" (it reads %s)", who,
                                PTXKIT_CONFIG_NAME_SIZE - 1, name, known);
        }
        if (!launch_value_ok(n->field, v))
            return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "%s: parameter %s = %lld is not %s", who, n->name, v,
                                launch_range_text(n->field));
        int *field = launch_field_at(out, n->field);
        if (field) *field = (int)v;
        else if (n->field == LAUNCH_PATH) out->path = (ptxkit_path)v;
        else out->load_op = (ptxkit_load_op)v;
    }
    return PTXKIT_SUCCESS;
}

void launch_options_to_config(const launch_options *o, const config_name *names, ptxkit_config *out) {
    memset(out, 0, sizeof *out);
    launch_options copy = *o;
    for (const config_name *n = names; n->name; n++) {
        int *field = launch_field_at(&copy, n->field);
        long long v = field ? *field : n->field == LAUNCH_PATH ? (long long)o->path : (long long)o->load_op;
        if (v) ptxkit_config_set(out, n->name, v);
    }
}

/* The tuning record's names: what a configuration read from it holds. */
static bool config_name_ok(const char *name) {
    if (!name || !*name || strlen(name) >= PTXKIT_CONFIG_NAME_SIZE) return false;
    for (const char *p = name; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_' ||
              *p == '.' || *p == '-'))
            return false;
    return true;
}

ptxkit_status ptxkit_config_set(ptxkit_config *c, const char *name, long long value) {
    if (!c) return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_config_set: NULL configuration");
    if (!config_name_ok(name))
        return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT,
                            "ptxkit_config_set: parameter name \"%.40s\" is not 1 to %d letters, digits, '_', '.' "
                            "and '-'", name ? name : "(null)", PTXKIT_CONFIG_NAME_SIZE - 1);
    if (c->count < 0 || c->count > PTXKIT_CONFIG_MAX_PARAMS)
        return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_config_set: count %d is out of range", c->count);
    for (int i = 0; i < c->count; i++)
        if (strcmp(c->params[i].name, name) == 0) {
            c->params[i].value = value;
            return PTXKIT_SUCCESS;
        }
    if (c->count == PTXKIT_CONFIG_MAX_PARAMS)
        return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_config_set: %s: the configuration is full (%d)",
                            name, PTXKIT_CONFIG_MAX_PARAMS);
    ptxkit_config_param *p = &c->params[c->count++];
    memset(p->name, 0, sizeof p->name);
    memcpy(p->name, name, strlen(name));
    p->value = value;
    return PTXKIT_SUCCESS;
}

ptxkit_status ptxkit_config_get(const ptxkit_config *c, const char *name, long long *value) {
    if (!name || !value) return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_config_get: NULL argument");
    int count = c && c->count > 0 ? c->count : 0;
    if (count > PTXKIT_CONFIG_MAX_PARAMS) count = PTXKIT_CONFIG_MAX_PARAMS;
    for (int i = 0; i < count; i++)
        if (strncmp(c->params[i].name, name, PTXKIT_CONFIG_NAME_SIZE) == 0) {
            *value = c->params[i].value;
            return PTXKIT_SUCCESS;
        }
    return record_error(NULL, PTXKIT_ERROR_NOT_FOUND, "ptxkit_config_get: no parameter %s", name);
}

const char *const *ptxkit_config_defines_get(const ptxkit_config *c, ptxkit_config_defines_text *t) {
    if (!c || !t || c->count < 0 || c->count > PTXKIT_CONFIG_MAX_PARAMS) return NULL;
    for (int i = 0; i < c->count; i++) {
        snprintf(t->text[i], sizeof t->text[i], "%.*s=%lld", PTXKIT_CONFIG_NAME_SIZE - 1, c->params[i].name,
                 c->params[i].value);
        t->defines[i] = t->text[i];
    }
    return t->defines;
}
