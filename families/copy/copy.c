/* copy: vectorized device-to-device copy (copy.cu). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ptxkit_ops.h"
#include "copy_defaults.h"
#include "family.h"
#include "runtime/context.h"
#include "runtime/kernel.h"
#include "runtime/launch.h"
#include "runtime/status.h"
#include "runtime/stream_scratch.h"
#include "tuned/launch_memo.h"
#include "tuned/tuned.h"

extern const family_desc copy_family; /* below: its address names copy's resolutions */

/* Widest vector both addresses allow when advanced together, capped by the
 * caller's request; 0 means only the funnel-shift kernel can do it. */
static int copy_vector_width(ptxkit_dptr dst, ptxkit_dptr src, int requested) {
    uint64_t diff = dst - src;
    for (int w = 16; w >= 4; w /= 2)
        if (w <= requested && (diff & (uint64_t)(w - 1)) == 0) return w;
    return 0;
}

/* The shape of a copy without its kernel: tuned options (into *opt), the
 * vector width the pointers' relative alignment allows (0: the
 * funnel-shift kernel) and the vectors per thread. ptxkit_copy and
 * ptxkit_copy_config_get both resolve through it, so they cannot differ. */
static ptxkit_status copy_configure(ptxkit_context *ctx, const char *who, launch_options *opt, uint64_t alignment,
                                    size_t bytes, int *width, int *unroll) {
    tune_apply(ctx, "copy", "bytes", bytes, opt);
    *width = copy_vector_width(alignment, 0, opt->vector_bytes ? opt->vector_bytes : COPY_DEFAULT_VECTOR);
    *unroll = opt->items_per_thread ? opt->items_per_thread : COPY_DEFAULT_UNROLL;
    if (!options_use_jit(opt) && *unroll != COPY_DEFAULT_UNROLL)
        return record_error(ctx, PTXKIT_ERROR_UNSUPPORTED,
                            "%s: the precompiled PTX copies %d vectors per thread, not %d: use the JIT path", who,
                            COPY_DEFAULT_UNROLL, *unroll);
    return PTXKIT_SUCCESS;
}

/* The kernel and shape of a copy: its configuration, the kernel and its
 * block. */
static ptxkit_status copy_resolve(ptxkit_context *ctx, launch_options opt, uint64_t alignment, size_t bytes,
                                  launch_memo_value *out) {
    int width, unroll;
    ptxkit_status st = copy_configure(ctx, "ptxkit_copy", &opt, alignment, bytes, &width, &unroll);
    if (st != PTXKIT_SUCCESS) return st;
    static const char *const entries[17] = {[0] = "ptxkit_copy_shift", [4] = "ptxkit_copy_vec4",
                                            [8] = "ptxkit_copy_vec8", [16] = "ptxkit_copy_vec16"};
    kernel_spec spec = {.family = "copy", .entry = entries[width]};
    define_scratch scratch = {0};
    spec_define_int(&spec, &scratch, "UNROLL", unroll);
    if ((st = family_kernel_get(ctx, &opt, &spec, COPY_DEFAULT_BLOCK, &out->kernel, &out->block)) != PTXKIT_SUCCESS)
        return st;
    out->extra[0] = (size_t)width;
    out->extra[1] = (size_t)unroll;
    /* with blocks_per_sm set, a persistent grid of that many blocks per SM */
    out->wave = 0;
    if (opt.blocks_per_sm > 0) st = grid_size_for(out->kernel, out->block, 0, opt.blocks_per_sm, 0, &out->wave);
    return st;
}

/* ptxkit_copy's parameters (ptxkit.h); "unroll" is copy.cu's UNROLL. */
static const config_name copy_names[] = {
    CONFIG_NAMES_COMMON, {"unroll", LAUNCH_ITEMS}, {"blocks_per_sm", LAUNCH_BLOCKS_PER_SM}, {NULL, 0}};

/* The pointer checks of a copy of bytes > 0. */
static ptxkit_status copy_check_args(ptxkit_context *ctx, const char *who, ptxkit_dptr dst, ptxkit_dptr src,
                                     size_t bytes) {
    if (!dst || !src) return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "%s: NULL device pointer", who);
    if (dst + bytes < dst || src + bytes < src)
        return record_error(ctx, PTXKIT_ERROR_OVERFLOW, "%s: %zu bytes wrap the address space", who, bytes);
    if (dst < src + bytes && src < dst + bytes)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "%s: source and destination overlap", who);
    return PTXKIT_SUCCESS;
}

static ptxkit_status copy_run(ptxkit_context *ctx, ptxkit_dptr dst, ptxkit_dptr src, size_t bytes,
                              const launch_options *options, ptxkit_stream *stream) {
    launch_options opt;
    ptxkit_status st = check_launch_options(ctx, options, &opt);
    if (st != PTXKIT_SUCCESS) return name_failure(st, "ptxkit_copy");
    if (bytes == 0) return PTXKIT_SUCCESS;
    if ((st = copy_check_args(ctx, "ptxkit_copy", dst, src, bytes)) != PTXKIT_SUCCESS) return st;

    /* the vector width depends on the pointers only through this */
    const long long alignment = (long long)((dst - src) & 15);
    launch_memo_key key = launch_memo_key_for(&copy_family, &opt, &alignment, 1, bytes);
    launch_memo_value L;
    if ((st = context_enter(ctx)) != PTXKIT_SUCCESS) return name_failure(st, "ptxkit_copy");
    if (!launch_memo_find(ctx, &key, &L)) {
        /* a first kernel load and auto-tuning are what a capture must be
         * kept from (runtime/stream_scratch.h); a remembered launch does
         * neither, so only a resolution asks whether the stream is captured */
        capture_guard guard;
        if ((st = capture_guard_enter(ctx, stream, &guard)) != PTXKIT_SUCCESS) goto done;
        st = copy_resolve(ctx, opt, (uint64_t)alignment, bytes, &L);
        /* a capture paused auto-tuning: its resolution is not the bucket's */
        if (st == PTXKIT_SUCCESS && !guard.capturing) launch_memo_store(ctx, &key, &L);
        capture_guard_leave(ctx, &guard);
        if (st != PTXKIT_SUCCESS) goto done;
    }
    const size_t width = L.extra[0], unroll = L.extra[1];
    /* One block per tile of block x unroll vectors (at least one block,
     * whose first threads also copy the edge bytes), or the persistent grid. */
    size_t work = bytes / (width ? width : 4) / (width ? unroll : 1) + 1;
    size_t needed = (work + (size_t)L.block - 1) / (size_t)L.block;
    if (needed > INT32_MAX) needed = INT32_MAX;
    unsigned grid = L.wave && L.wave < needed ? L.wave : (unsigned)needed;
    CUdeviceptr d = dst, s = src;
    unsigned long long n = bytes;
    void *args[] = {&d, &s, &n};
    st = kernel_launch(L.kernel, (ptxkit_dim3){grid, 1, 1}, (ptxkit_dim3){(unsigned)L.block, 1, 1}, 0, stream, args);
done:
    context_leave(ctx);
    return name_failure(st, "ptxkit_copy");
}

/* ---- the family's descriptor (families/family.h) ---------------------------- */

/* copy: n counts bytes; each byte is read and written. */
static bool fam_copy_parse(const tune_family *f, const char *name, tune_variant *v, char *why, size_t why_size) {
    if (strcmp(name, "bytes") != 0) {
        snprintf(why, why_size, "copy has one variant, 'bytes' (not '%s')", name);
        return false;
    }
    v->family = f;
    snprintf(v->name, sizeof v->name, "bytes");
    v->type = PTXKIT_UINT32;
    v->elem_size = 1;
    return true;
}

static size_t fam_copy_bytes(const tune_variant *v, size_t n) { (void)v; return n; }
static double fam_copy_moved(const tune_variant *v, size_t n) { (void)v; return 2.0 * (double)n; }

/* UNROLL vector registers in flight, plus addressing. */
static int fam_copy_registers(const tune_variant *v, const tune_config *c) {
    (void)v;
    int unroll = c->items_per_thread ? c->items_per_thread : COPY_DEFAULT_UNROLL;
    int vec = c->vector_bytes ? c->vector_bytes : COPY_DEFAULT_VECTOR;
    return 20 + unroll * vec / 4;
}

ptxkit_status ptxkit_copy(ptxkit_context *ctx, ptxkit_dptr dst, ptxkit_dptr src, size_t bytes,
                          const ptxkit_config *config, ptxkit_stream *stream) {
    launch_options o;
    ptxkit_status st = launch_options_from_config(ctx, "ptxkit_copy", config, copy_names, &o);
    return st == PTXKIT_SUCCESS ? copy_run(ctx, dst, src, bytes, &o, stream) : st;
}

/* Resolution without a kernel, as ptxkit_reduce_config_get: auto-tuning
 * paused (a question must not start a tuning run); the PTX path's block is
 * the one it is generated with (copy_defaults.h). */
ptxkit_status ptxkit_copy_config_get(ptxkit_context *ctx, ptxkit_dptr dst, ptxkit_dptr src, size_t bytes,
                                     const ptxkit_config *config, ptxkit_config *out) {
    static const char who[] = "ptxkit_copy_config_get";
    if (!ctx || !out) return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "%s: NULL argument", who);
    launch_options o, opt;
    ptxkit_status st = launch_options_from_config(ctx, who, config, copy_names, &o);
    if (st == PTXKIT_SUCCESS) st = check_launch_options(ctx, &o, &opt);
    if (st == PTXKIT_SUCCESS && bytes > 0) st = copy_check_args(ctx, who, dst, src, bytes);
    if (st != PTXKIT_SUCCESS) return name_failure(st, who);
    int width, unroll;
    tune_auto_pause(true);
    st = copy_configure(ctx, who, &opt, (dst - src) & 15, bytes, &width, &unroll);
    tune_auto_pause(false);
    if (st != PTXKIT_SUCCESS) return st;
    const bool jit = options_use_jit(&opt);
    if (!jit && opt.block_size && opt.block_size != COPY_DEFAULT_BLOCK)
        return record_error(ctx, PTXKIT_ERROR_UNSUPPORTED,
                            "%s: the precompiled PTX is built for %d threads per block, not %d: use the JIT path", who,
                            COPY_DEFAULT_BLOCK, opt.block_size);
    memset(out, 0, sizeof *out);
    ptxkit_config_set(out, "path", jit ? PTXKIT_PATH_JIT : PTXKIT_PATH_PTX);
    ptxkit_config_set(out, "load_op", opt.load_op);
    ptxkit_config_set(out, "block_size", opt.block_size ? opt.block_size : COPY_DEFAULT_BLOCK);
    /* the funnel-shift kernel moves whole aligned 4-byte words */
    ptxkit_config_set(out, "vector_bytes", width ? width : 4);
    ptxkit_config_set(out, "unroll", unroll);
    ptxkit_config_set(out, "blocks_per_sm", opt.blocks_per_sm);
    return PTXKIT_SUCCESS;
}

static ptxkit_status fam_copy_run(ptxkit_context *ctx, const tune_variant *v, ptxkit_dptr in, ptxkit_dptr out, size_t n,
                              const launch_options *options, ptxkit_stream *stream) {
    (void)v;
    return copy_run(ctx, out, in, n, options, stream);
}

/* The injected constants that carry tuner parameters. */
static const family_define copy_defines[] = {
    {"BLOCK_SIZE", TUNE_BLOCK},
    {"UNROLL", TUNE_ITEMS},
    {"LOAD_OP", TUNE_LOAD},
    {NULL, 0},
};

static void fam_copy_public_config(const launch_options *o, ptxkit_config *out) {
    launch_options_to_config(o, copy_names, out);
}

const family_desc copy_family = {
    .name = "copy",
    .default_variant = "bytes",
    .unit = "bytes",
    .description = "ptxkit_copy: vectorized device-to-device copy",
    .entries = "ptxkit_copy_vec16, ptxkit_copy_vec8, ptxkit_copy_vec4, ptxkit_copy_shift",
    .defines = copy_defines,
    .bench_log2 = 30,
    /* items_per_thread is copy.cu's UNROLL: vectors in flight per thread;
     * blocks_per_sm 0 is copy.c's grid of one block per tile */
    .items = {1, 2, 4, 8},
    .vectors = {16, 8, 4},
    .bpsm = {0, 1, 2, 4, 8, 16, 32, -1},
    .loads = FAMILY_ALL_LOADS,
    .primary = {[TUNE_BLOCK] = true, [TUNE_ITEMS] = true, [TUNE_VECTOR] = true},
    .start = {COPY_DEFAULT_BLOCK, COPY_DEFAULT_UNROLL, COPY_DEFAULT_VECTOR, 0, PTXKIT_LOAD_DEFAULT},
    .registers = fam_copy_registers,
    .min_blocks = family_one_block,
    .shared_bytes = family_no_shared,
    .parse_variant = fam_copy_parse,
    .in_bytes = fam_copy_bytes,
    .out_bytes = fam_copy_bytes,
    .bytes_moved = fam_copy_moved,
    .public_config = fam_copy_public_config,
    .run = fam_copy_run,
};

/* Copy has no selectors and no GPU without its kernels: the answer is the
 * uniform shape's (ptxkit_ops.h), SUCCESS. */
ptxkit_status ptxkit_copy_supported(ptxkit_context *ctx) {
    (void)ctx;
    return PTXKIT_SUCCESS;
}
