/* reduce_ladder: Mark Harris's reduction ladder, steps 1-10
 * (reduce_ladder.cu). Each launch leaves one partial per block;
 * the step is launched again on the partials until one value is left, the
 * last launch writing the caller's output. JIT only: the ladder exists to
 * compare compiled variants, and has no precompiled PTX. */
#include <stdio.h>

#include "reduce/reduce.h"
#include "runtime/context.h"
#include "runtime/kernel.h"
#include "runtime/launch.h"
#include "runtime/objects.h"
#include "runtime/status.h"

enum { LADDER_MAX_PASSES = 48 };

typedef struct ladder_plan {
    ptxkit_kernel *kernel;
    int block;
    int passes;
    unsigned grids[LADDER_MAX_PASSES];
    size_t scratch_elems; /* partials of every launch but the last */
} ladder_plan;

bool reduce_ladder_supported(ptxkit_context *ctx, int step, ptxkit_reduce_op op, ptxkit_dtype type, ptxkit_status *st) {
    ptxkit_dtype ktype;
    if (step < 1 || step > LADDER_STEPS) {
        *st = record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "reduce ladder: no step %d (steps are 1 to %d)", step,
                           LADDER_STEPS);
        return false;
    }
    if (!reduce_kernel_suffix(op, type, NULL, &ktype)) {
        *st = record_error(ctx, PTXKIT_ERROR_UNSUPPORTED, "reduce ladder: %s of %s is not provided",
                           ptxkit_reduce_op_name(op) ? ptxkit_reduce_op_name(op) : "?",
                           ptxkit_dtype_name(type) ? ptxkit_dtype_name(type) : "?");
        return false;
    }
    if (step == 9 && ktype != PTXKIT_INT32 && ktype != PTXKIT_UINT32) {
        *st = record_error(ctx, PTXKIT_ERROR_UNSUPPORTED,
                           "reduce ladder step 9 (redux.sync) exists for 32-bit integers only, not %s",
                           ptxkit_dtype_name(type));
        return false;
    }
    if (step == 9 && ctx->arch < 80) {
        *st = record_error(ctx, PTXKIT_ERROR_UNSUPPORTED,
                           "reduce ladder step 9 needs redux.sync, which sm_%d lacks (sm_80 and newer)", ctx->arch);
        return false;
    }
    *st = PTXKIT_SUCCESS;
    return true;
}

static ptxkit_status ladder_options(ptxkit_context *ctx, const ptxkit_config *options,
                                    launch_options *o) {
    return ladder_jit_options(ctx, "reduce ladder", options, false, o);
}

static ptxkit_status ladder_kernel(ptxkit_context *ctx, int step, ptxkit_reduce_op op, ptxkit_dtype type,
                                   const launch_options *o, ptxkit_kernel **kernel, int *block) {
    ptxkit_reduce_op kop;
    ptxkit_dtype ktype;
    const char *suffix = reduce_kernel_suffix(op, type, &kop, &ktype);
    char entry[64];
    snprintf(entry, sizeof entry, "ptxkit_reduce_ladder%d_%s", step, suffix);
    kernel_spec spec = {.family = "reduce_ladder", .entry = entry};
    define_scratch scratch = {0};
    spec_define_int(&spec, &scratch, "ONLY_STEP", step);
    spec_define_int(&spec, &scratch, "ONLY_OP", (long long)kop);
    spec_define_int(&spec, &scratch, "ONLY_TYPE", (long long)ktype);
    return family_kernel_get(ctx, o, &spec, LADDER_DEFAULT_BLOCK, kernel, block);
}

/* The launches for n elements. Steps 1-3 take one element per thread and
 * 4-6 two, so each launch divides the count by the block (or twice it);
 * 7-10 run one full wave of blocks over the input, then one block. */
static ptxkit_status ladder_plan_for(ptxkit_context *ctx, int step, ptxkit_reduce_op op, ptxkit_dtype type, size_t n,
                                     const launch_options *o, ladder_plan *p) {
    ptxkit_status st = ladder_kernel(ctx, step, op, type, o, &p->kernel, &p->block);
    if (st != PTXKIT_SUCCESS) return st;
    size_t per_block = (size_t)p->block * (step <= 3 ? 1 : 2);
    unsigned wave = 0;
    if (step >= 7) {
        size_t needed = (n + per_block - 1) / per_block;
        if ((st = grid_size_for(p->kernel, p->block, 0, o->blocks_per_sm, needed ? needed : 1, &wave)) !=
            PTXKIT_SUCCESS)
            return st;
    }
    p->passes = 0;
    p->scratch_elems = 0;
    size_t m = n;
    do {
        size_t g = step >= 7 ? (p->passes == 0 ? wave : 1) : (m + per_block - 1) / per_block;
        if (g == 0) g = 1;
        if (g > 0x7fffffff || p->passes == LADDER_MAX_PASSES)
            return record_error(ctx, PTXKIT_ERROR_UNSUPPORTED,
                                "reduce ladder: %zu elements need a grid of %zu blocks, "
                                "more than a launch allows",
                                n, g);
        p->grids[p->passes++] = (unsigned)g;
        if (g > 1) p->scratch_elems += g;
        m = g;
    } while (m > 1);
    return PTXKIT_SUCCESS;
}

static ptxkit_status ladder_launch(const ladder_plan *p, size_t elem, ptxkit_dptr in, size_t n,
                                   ptxkit_dptr out, ptxkit_dptr scratch, ptxkit_stream *stream) {
    CUdeviceptr src = in, region = scratch;
    unsigned long long count = n;
    for (int i = 0; i < p->passes; i++) {
        CUdeviceptr dst = i == p->passes - 1 ? out : region;
        void *args[] = {&src, &count, &dst};
        ptxkit_status st = kernel_launch(p->kernel, (ptxkit_dim3){p->grids[i], 1, 1}, (ptxkit_dim3){(unsigned)p->block, 1, 1}, 0,
                                         stream, args);
        if (st != PTXKIT_SUCCESS) return st;
        src = dst;
        count = p->grids[i];
        region += (CUdeviceptr)p->grids[i] * elem;
    }
    return PTXKIT_SUCCESS;
}

ptxkit_status reduce_ladder_prepare(ptxkit_context *ctx, int step, ptxkit_reduce_op op, ptxkit_dtype type,
                                    const ptxkit_config *options) {
    ptxkit_status st = reduce_check_args(ctx, "reduce_ladder_prepare", op, type, 0, 0, 64);
    launch_options o;
    if (st != PTXKIT_SUCCESS || (st = ladder_options(ctx, options, &o)) != PTXKIT_SUCCESS) return st;
    if (!reduce_ladder_supported(ctx, step, op, type, &st)) return st;
    if ((st = context_enter(ctx)) != PTXKIT_SUCCESS) return st;
    ptxkit_kernel *kernel;
    int block;
    st = ladder_kernel(ctx, step, op, type, &o, &kernel, &block);
    context_leave(ctx);
    return st;
}

ptxkit_status reduce_ladder_scratch_bytes(ptxkit_context *ctx, int step, ptxkit_reduce_op op, ptxkit_dtype type,
                                          size_t n, const ptxkit_config *options, size_t *bytes) {
    if (!bytes) return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "reduce_ladder_scratch_bytes: bytes is NULL");
    ptxkit_status st = reduce_check_args(ctx, "reduce_ladder_scratch_bytes", op, type, 0, 0, 64);
    launch_options o;
    if (st != PTXKIT_SUCCESS || (st = ladder_options(ctx, options, &o)) != PTXKIT_SUCCESS) return st;
    if (!reduce_ladder_supported(ctx, step, op, type, &st)) return st;
    if ((st = context_enter(ctx)) != PTXKIT_SUCCESS) return st;
    ladder_plan p;
    st = ladder_plan_for(ctx, step, op, type, n, &o, &p);
    if (st == PTXKIT_SUCCESS) *bytes = p.scratch_elems * ptxkit_dtype_size(type);
    context_leave(ctx);
    return st;
}

ptxkit_status reduce_ladder_run(ptxkit_context *ctx, int step, ptxkit_reduce_op op, ptxkit_dtype type, ptxkit_dptr in,
                                size_t n, ptxkit_dptr out, ptxkit_dptr scratch, size_t scratch_bytes,
                                const ptxkit_config *options, ptxkit_stream *stream) {
    ptxkit_status st = reduce_check_args(ctx, "ptxkit_reduce_ladder", op, type, in, n, out);
    launch_options o;
    if (st != PTXKIT_SUCCESS || (st = ladder_options(ctx, options, &o)) != PTXKIT_SUCCESS) return st;
    if (!reduce_ladder_supported(ctx, step, op, type, &st)) return st;
    if ((st = context_enter(ctx)) != PTXKIT_SUCCESS) return st;
    size_t elem = ptxkit_dtype_size(type);
    ladder_plan p;
    if ((st = ladder_plan_for(ctx, step, op, type, n, &o, &p)) != PTXKIT_SUCCESS) goto done;
    if (p.scratch_elems && (!scratch || scratch % elem || scratch_bytes < p.scratch_elems * elem)) {
        st = record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT,
                          "reduce ladder: step %d needs %zu bytes of %zu-byte aligned scratch, got %zu at 0x%llx", step,
                          p.scratch_elems * elem, elem, scratch_bytes, (unsigned long long)scratch);
        goto done;
    }
    st = ladder_launch(&p, elem, in, n, out, scratch, stream);
done:
    context_leave(ctx);
    return st;
}

/* Allocates the partials per call and frees them once the launches have
 * finished, so it waits for the stream: a teaching and testing entry point.
 * The benchmark keeps its scratch and calls reduce_ladder_run. */
ptxkit_status ptxkit_reduce_ladder(ptxkit_context *ctx, int kernel, ptxkit_reduce_op op, ptxkit_dtype type,
                                   ptxkit_dptr out, ptxkit_dptr in, size_t n, const ptxkit_config *options,
                                   ptxkit_stream *stream) {
    ptxkit_status st = reduce_check_args(ctx, "ptxkit_reduce_ladder", op, type, in, n, out);
    launch_options o;
    if (st != PTXKIT_SUCCESS || (st = ladder_options(ctx, options, &o)) != PTXKIT_SUCCESS) return st;
    if (!reduce_ladder_supported(ctx, kernel, op, type, &st)) return st;
    if ((st = context_enter(ctx)) != PTXKIT_SUCCESS) return st;
    size_t elem = ptxkit_dtype_size(type);
    ladder_plan p;
    CUdeviceptr scratch = 0;
    if ((st = ladder_plan_for(ctx, kernel, op, type, n, &o, &p)) != PTXKIT_SUCCESS) goto done;
    if (p.scratch_elems) {
        CUresult r = ctx->cu->cuMemAlloc(&scratch, p.scratch_elems * elem);
        if (r != CUDA_SUCCESS) {
            st = record_cuda_error(ctx, r, "ptxkit_reduce_ladder: cuMemAlloc of the partials");
            goto done;
        }
    }
    st = ladder_launch(&p, elem, in, n, out, scratch, stream);
    if (scratch) {
        CUresult r = ctx->cu->cuStreamSynchronize(stream_handle(stream));
        if (r != CUDA_SUCCESS && st == PTXKIT_SUCCESS)
            st = record_cuda_error(ctx, r, "ptxkit_reduce_ladder: cuStreamSynchronize");
        ctx->cu->cuMemFree(scratch);
    }
done:
    context_leave(ctx);
    return st;
}

/* ---- the family's descriptor (families/family.h) ---------------------------- */

const family_desc reduce_ladder_family = {
    .name = "reduce_ladder",
    .description = "ptxkit_reduce_ladder: Harris's reduction ladder, steps 1-9",
    .entries = "ptxkit_reduce_ladder<step>_<op>_<type>",
};

/* ---- public: the ladder with caller-owned partials ---------------------- */

ptxkit_status ptxkit_reduce_ladder_check(ptxkit_context *ctx, int kernel, ptxkit_reduce_op op, ptxkit_dtype type) {
    if (!ctx) return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_reduce_ladder_check: context is NULL");
    ptxkit_status st = reduce_check_args(ctx, "ptxkit_reduce_ladder_check", op, type, 0, 0, 64);
    if (st == PTXKIT_SUCCESS && !reduce_ladder_supported(ctx, kernel, op, type, &st)) return st;
    return st;
}

ptxkit_status ptxkit_reduce_ladder_scratch_bytes(ptxkit_context *ctx, int kernel, ptxkit_reduce_op op, ptxkit_dtype type,
                                                 size_t n, const ptxkit_config *options, size_t *bytes) {
    if (!ctx)
        return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_reduce_ladder_scratch_bytes: context is NULL");
    return reduce_ladder_scratch_bytes(ctx, kernel, op, type, n, options, bytes);
}

ptxkit_status ptxkit_reduce_ladder_async(ptxkit_context *ctx, int kernel, ptxkit_reduce_op op, ptxkit_dtype type,
                                         ptxkit_dptr out, ptxkit_dptr in, size_t n, ptxkit_dptr scratch,
                                         size_t scratch_bytes, const ptxkit_config *options,
                                         ptxkit_stream *stream) {
    if (!ctx) return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_reduce_ladder_async: context is NULL");
    return reduce_ladder_run(ctx, kernel, op, type, in, n, out, scratch, scratch_bytes, options, stream);
}

_Static_assert(PTXKIT_REDUCE_LADDER_STEPS == LADDER_STEPS, "ptxkit.h's PTXKIT_REDUCE_LADDER_STEPS is the ladder's length");
