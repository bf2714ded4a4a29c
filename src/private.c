/* The experimental tier's benchmark switches and measuring hooks (the
 * PTXKIT_EXPERIMENTAL blocks of the public headers): thin forwards to the
 * families' experiment switches and the tuner's measurement, above every
 * layer (they reach ops, tune and runtime alike). No stability promised:
 * see ptxkit.h. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "gemm/gemm.h"
#include "reduce/reduce.h"
#include "scan/scan.h"
#include "ptxkit.h"
#include "ptxkit_ops.h"
#include "ptxkit_tune.h"
#include "runtime/context.h"
#include "runtime/launch.h"
#include "runtime/compile.h"
#include "runtime/objects.h"
#include "runtime/status.h"
#include "tune/params.h"
#include "tune/tuner.h"

ptxkit_status ptxkit_reduce_experiment(ptxkit_context *ctx, ptxkit_reduce_op op, ptxkit_dtype type,
                                           ptxkit_dptr out, ptxkit_dptr in, size_t n,
                                           const ptxkit_config *config, ptxkit_stream *stream, int passes) {
    if (passes < 0 || passes > 2)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_reduce_experiment: passes %d (0, 1 or 2)",
                            passes);
    reduce_passes p = passes == 2 ? REDUCE_PASSES_TWO : passes == 1 ? REDUCE_PASSES_ONE : REDUCE_PASSES_AUTO;
    launch_options o;
    ptxkit_status st = launch_options_from_config(ctx, "ptxkit_reduce_experiment", config, reduce_config_names, &o);
    return st == PTXKIT_SUCCESS ? reduce_run(ctx, op, type, in, n, out, &o, stream, p) : st;
}

ptxkit_status ptxkit_scan_experiment(ptxkit_context *ctx, ptxkit_scan_kind kind, ptxkit_reduce_op op, ptxkit_dtype type,
                                  ptxkit_dptr out, ptxkit_dptr in, size_t n, const ptxkit_config *config,
                                  ptxkit_stream *stream, const ptxkit_scan_switches *experiment) {
    launch_options o;
    ptxkit_status st = launch_options_from_config(ctx, "ptxkit_scan_experiment", config, scan_config_names, &o);
    if (st != PTXKIT_SUCCESS) return st;
    const launch_options *options = &o;
    scan_experiment e = SCAN_EXPERIMENT_NONE;
    if (experiment)
        e = (scan_experiment){experiment->dynamic_tiles, experiment->spin_ns, experiment->lookback,
                              experiment->min_blocks,    experiment->staged,  experiment->chunks};
    return scan_run(ctx, kind, op, type, in, n, out, options, stream, &e);
}

/* One gemm experiment switch (an int field of the context's
 * gemm_switches) set to value, the others kept; gemm_switches_set checks
 * every value, and a failure names the public call. */
static ptxkit_status gemm_switch_set(ptxkit_context *ctx, const char *who, size_t field, int value) {
    if (!ctx) return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "%s: context is NULL", who);
    gemm_switches sw = gemm_switches_get(ctx);
    memcpy((char *)&sw + field, &value, sizeof value);
    return name_failure(gemm_switches_set(ctx, &sw), who);
}

ptxkit_status ptxkit_gemm_cross_prefetch_set(ptxkit_context *ctx, int on) {
    return gemm_switch_set(ctx, "ptxkit_gemm_cross_prefetch_set", offsetof(gemm_switches, cross_prefetch), on);
}

ptxkit_status ptxkit_gemm_mma_k_set(ptxkit_context *ctx, int k) {
    return gemm_switch_set(ctx, "ptxkit_gemm_mma_k_set", offsetof(gemm_switches, mma_k), k);
}

ptxkit_status ptxkit_gemm_tensor_maps_set(ptxkit_context *ctx, int on) {
    return gemm_switch_set(ctx, "ptxkit_gemm_tensor_maps_set", offsetof(gemm_switches, tensor_maps), on);
}

ptxkit_status ptxkit_gemm_stream_k_set(ptxkit_context *ctx, int on) {
    return gemm_switch_set(ctx, "ptxkit_gemm_stream_k_set", offsetof(gemm_switches, stream_k), on);
}

ptxkit_status ptxkit_gemm_f32_tensor_cores_set(ptxkit_context *ctx, int on) {
    return gemm_switch_set(ctx, "ptxkit_gemm_f32_tensor_cores_set", offsetof(gemm_switches, f32_tensor_cores), on);
}

ptxkit_status ptxkit_context_registry_probe(ptxkit_context *ctx, int count, const char **jit_log) {
    if (jit_log) *jit_log = "";
    if (!ctx) return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_context_registry_probe: context is NULL");
    kernel_spec spec = {.family = "copy", .entry = "ptxkit_copy_vec16", .defines = {"UNROLL=4", "BLOCK_SIZE=256", "LOAD_OP=2"},
                        .define_count = 3};
    ptxkit_kernel *fn = NULL;
    ptxkit_status st = context_enter(ctx);
    if (st != PTXKIT_SUCCESS) return st;
    for (int i = 0; i < count && st == PTXKIT_SUCCESS; i++) st = kernel_get(ctx, &spec, &fn);
    context_leave(ctx);
    if (st == PTXKIT_SUCCESS && jit_log) *jit_log = ptxkit_kernel_jit_log_get(fn);
    return st;
}

const char *ptxkit_tune_blocks_family_get(int index) {
    const tune_family *f = tune_family_at(index);
    return f ? f->name : NULL;
}

static ptxkit_status parse(const char *family, const char *variant, tune_variant *v, char *why, size_t why_size) {
    char scratch[256];
    if (!why || why_size == 0) {
        why = scratch;
        why_size = sizeof scratch;
    }
    why[0] = 0;
    const tune_family *f = family ? tune_family_find(family) : NULL;
    if (!f) {
        snprintf(why, why_size, "no tunable family '%s'", family ? family : "(null)");
        return PTXKIT_ERROR_NOT_FOUND;
    }
    return tune_variant_parse(f, variant, v, why, why_size) == PTXKIT_SUCCESS ? PTXKIT_SUCCESS
                                                                             : PTXKIT_ERROR_INVALID_ARGUMENT;
}

ptxkit_status ptxkit_tune_blocks_variant_get(const char *family, const char *variant,
                                                ptxkit_tune_blocks_variant *out) {
    if (!out) return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_tune_blocks_variant_get: out is NULL");
    tune_variant v;
    char reason[256];
    ptxkit_status st = parse(family, variant, &v, reason, sizeof reason);
    if (st != PTXKIT_SUCCESS) return record_error(NULL, st, "%s", reason); /* the bare reason: the CLI prints it */
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "%s", v.name);
    out->unit = v.family->unit;
    out->bench_log2 = v.family->bench_log2;
    out->copies = strcmp(v.family->name, "copy") == 0 || strcmp(v.family->name, "transpose") == 0;
    return PTXKIT_SUCCESS;
}

ptxkit_status ptxkit_tune_blocks_bytes_get(const char *family, const char *variant, size_t n, size_t *bytes) {
    tune_variant v;
    char reason[256];
    if (!bytes) return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_tune_blocks_bytes_get: bytes is NULL");
    ptxkit_status st = parse(family, variant, &v, reason, sizeof reason);
    if (st != PTXKIT_SUCCESS) return record_error(NULL, st, "%s", reason);
    *bytes = v.family->in_bytes(&v, n);
    return st;
}

ptxkit_status ptxkit_tune_blocks_space_get(ptxkit_context *ctx, const char *family, const char *variant, int *blocks,
                                          int *block_count, int *items, int *item_count) {
    if (!ctx || !blocks || !block_count || !items || !item_count)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_tune_blocks_space_get: NULL argument");
    tune_variant v;
    char why[256];
    ptxkit_status st = parse(family, variant, &v, why, sizeof why);
    if (st != PTXKIT_SUCCESS) return record_error(ctx, st, "ptxkit_tune_blocks_space_get: %s", why);
    tune_space space;
    tune_space_for(&v, &ctx->info, &space);
    *block_count = space.count[TUNE_BLOCK];
    memcpy(blocks, space.values[TUNE_BLOCK], sizeof space.values[TUNE_BLOCK]);
    *item_count = space.count[TUNE_ITEMS];
    memcpy(items, space.values[TUNE_ITEMS], sizeof space.values[TUNE_ITEMS]);
    return PTXKIT_SUCCESS;
}

_Static_assert(sizeof(ptxkit_tune_blocks_measured) == sizeof(tune_measured), "ptxkit_tune_blocks_measured is tune_measured");

ptxkit_status ptxkit_tune_blocks_measure(ptxkit_context *ctx, const char *family, const char *variant, size_t n,
                                            const int *blocks, const int *items, int count,
                                            ptxkit_tune_blocks_measured *out, double *default_gbs,
                                            ptxkit_tune_progress_fn progress, void *progress_user) {
    enum { MAX = 256 };
    if (!ctx || !family || !blocks || !items || !out || !default_gbs || count < 0 || count > MAX)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_tune_blocks_measure: bad arguments");
    tune_config configs[MAX] = {{0}};
    tune_measured measured[MAX];
    for (int i = 0; i < count; i++) configs[i] = (tune_config){blocks[i], items[i], 0, 0, PTXKIT_LOAD_DEFAULT};
    ptxkit_status st =
        tune_measure(ctx, family, variant, n, configs, count, measured, default_gbs, progress, progress_user);
    for (int i = 0; st == PTXKIT_SUCCESS && i < count; i++)
        out[i] = (ptxkit_tune_blocks_measured){measured[i].gbs, measured[i].ms, measured[i].min_ms, measured[i].max_ms,
                                           measured[i].samples};
    return st;
}

ptxkit_status ptxkit_jit_pch_mode_set(int mode, int *available) {
    if (mode < -1 || mode > 1) return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_jit_pch_mode_set: mode %d", mode);
    pch_set_mode(mode);
    if (available) *available = pch_available(nvrtc_get(NULL, 0));
    return PTXKIT_SUCCESS;
}
