/* scan_ladder: the 2007 seeds' scans and the warp-shuffle step
 * (scan_ladder.cu), with the seeds' scheme for arrays longer than
 * one block: scan each block and keep its total, scan the totals (the same
 * way, recursively, exclusive), add total b to every element of block b.
 * JIT only: the ladder exists to compare compiled variants, and has no
 * precompiled PTX. */
#include <stdio.h>

#include "reduce/reduce.h"
#include "scan/scan.h"
#include "runtime/context.h"
#include "runtime/kernel.h"
#include "runtime/launch.h"
#include "runtime/objects.h"
#include "runtime/status.h"

enum { LADDER_MAX_LEVELS = 48 };

static const char *const step_names[SCAN_LADDER_STEPS + 1] = {
    "",
    "Hillis-Steele, double-buffered",
    "Blelloch up/down-sweep, bank conflicts",
    "Blelloch, conflict-free padding",
    "warp shuffles (__shfl_up_sync)",
};

const char *scan_ladder_step_name(int step) {
    return step >= 1 && step <= SCAN_LADDER_STEPS ? step_names[step] : NULL;
}

typedef struct ladder_plan {
    ptxkit_kernel *scan, *add;
    int block;
    size_t per_block; /* elements one block scans */
    int levels;
    size_t counts[LADDER_MAX_LEVELS]; /* elements scanned at each level; level k+1 scans level k's block sums */
    size_t scratch_elems;             /* block sums of every level but the last */
} ladder_plan;

bool scan_ladder_supported(ptxkit_context *ctx, int step, ptxkit_reduce_op op, ptxkit_dtype type, ptxkit_status *st) {
    if (step < 1 || step > SCAN_LADDER_STEPS) {
        *st = record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "scan ladder: no step %d (steps are 1 to %d)", step,
                           SCAN_LADDER_STEPS);
        return false;
    }
    if (!scan_supported(op, type)) {
        *st = record_error(ctx, PTXKIT_ERROR_UNSUPPORTED, "scan ladder: %s of %s is not provided",
                           ptxkit_reduce_op_name(op) ? ptxkit_reduce_op_name(op) : "?",
                           ptxkit_dtype_name(type) ? ptxkit_dtype_name(type) : "?");
        return false;
    }
    *st = PTXKIT_SUCCESS;
    return true;
}

static ptxkit_status ladder_options(ptxkit_context *ctx, const ptxkit_config *options,
                                    launch_options *o) {
    return ladder_jit_options(ctx, "scan ladder", options, true, o);
}

static ptxkit_status ladder_kernels(ptxkit_context *ctx, int step, ptxkit_reduce_op op, ptxkit_dtype type,
                                    const launch_options *o, ladder_plan *p) {
    ptxkit_reduce_op kop;
    ptxkit_dtype ktype;
    const char *suffix = reduce_kernel_suffix(op, type, &kop, &ktype);
    char entry[64];
    snprintf(entry, sizeof entry, "ptxkit_scan_ladder%d_%s", step, suffix);
    kernel_spec spec = {.family = "scan_ladder", .entry = entry};
    define_scratch scratch = {0};
    spec_define_int(&spec, &scratch, "ONLY_STEP", step);
    spec_define_int(&spec, &scratch, "ONLY_OP", (long long)kop);
    spec_define_int(&spec, &scratch, "ONLY_TYPE", (long long)ktype);
    ptxkit_status st = family_kernel_get(ctx, o, &spec, SCAN_LADDER_DEFAULT_BLOCK, &p->scan, &p->block);
    if (st != PTXKIT_SUCCESS) return st;
    /* the uniform add lives in the same module */
    char add_entry[64];
    snprintf(add_entry, sizeof add_entry, "ptxkit_scan_ladder_add_%s", suffix);
    spec.entry = add_entry;
    int block;
    return family_kernel_get(ctx, o, &spec, SCAN_LADDER_DEFAULT_BLOCK, &p->add, &block);
}

static ptxkit_status ladder_plan_for(ptxkit_context *ctx, int step, ptxkit_reduce_op op, ptxkit_dtype type, size_t n,
                                     const launch_options *o, ladder_plan *p) {
    ptxkit_status st = ladder_kernels(ctx, step, op, type, o, p);
    if (st != PTXKIT_SUCCESS) return st;
    p->per_block = (size_t)p->block * (step == 1 ? 1 : 2);
    p->levels = 0;
    p->scratch_elems = 0;
    size_t m = n;
    for (;;) {
        size_t blocks = (m + p->per_block - 1) / p->per_block;
        if (blocks > 0x7fffffff || p->levels == LADDER_MAX_LEVELS)
            return record_error(ctx, PTXKIT_ERROR_UNSUPPORTED,
                                "scan ladder: %zu elements need a grid of %zu blocks, more than a launch allows", n,
                                blocks);
        p->counts[p->levels++] = m;
        if (blocks <= 1) break;
        p->scratch_elems += blocks;
        m = blocks;
    }
    return PTXKIT_SUCCESS;
}

/* Level k scans counts[k] elements from src into dst; with more than one
 * block its block sums go to the next region of scratch, are scanned by
 * level k+1 in place (exclusive), and are added back. */
static ptxkit_status ladder_launch(const ladder_plan *p, size_t elem, int level, ptxkit_dptr src,
                                   ptxkit_dptr dst, ptxkit_dptr region, unsigned exclusive, ptxkit_stream *stream) {
    const size_t m = p->counts[level];
    const size_t blocks = (m + p->per_block - 1) / p->per_block;
    CUdeviceptr in = src, out = dst, sums = level + 1 < p->levels ? region : 0;
    unsigned long long count = m;
    void *args[] = {&in, &count, &out, &sums, &exclusive};
    const ptxkit_dim3 grid = {(unsigned)blocks, 1, 1}, block = {(unsigned)p->block, 1, 1};
    ptxkit_status st = kernel_launch(p->scan, grid, block, 0, stream, args);
    if (st != PTXKIT_SUCCESS || !sums) return st;
    st = ladder_launch(p, elem, level + 1, sums, sums, region + (CUdeviceptr)(blocks * elem), 1, stream);
    if (st != PTXKIT_SUCCESS) return st;
    unsigned long long per_block = p->per_block;
    void *add_args[] = {&out, &count, &sums, &per_block};
    return kernel_launch(p->add, grid, block, 0, stream, add_args);
}

ptxkit_status scan_ladder_prepare(ptxkit_context *ctx, int step, ptxkit_reduce_op op, ptxkit_dtype type,
                                  const ptxkit_config *options) {
    ptxkit_status st = scan_check_args(ctx, "scan_ladder_prepare", PTXKIT_SCAN_INCLUSIVE, op, type, 0, 0, 0);
    launch_options o;
    if (st != PTXKIT_SUCCESS || (st = ladder_options(ctx, options, &o)) != PTXKIT_SUCCESS) return st;
    if (!scan_ladder_supported(ctx, step, op, type, &st)) return st;
    if ((st = context_enter(ctx)) != PTXKIT_SUCCESS) return st;
    ladder_plan p;
    st = ladder_kernels(ctx, step, op, type, &o, &p);
    context_leave(ctx);
    return st;
}

ptxkit_status scan_ladder_scratch_bytes(ptxkit_context *ctx, int step, ptxkit_reduce_op op, ptxkit_dtype type,
                                        size_t n, const ptxkit_config *options, size_t *bytes) {
    if (!bytes) return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "scan_ladder_scratch_bytes: bytes is NULL");
    ptxkit_status st = scan_check_args(ctx, "scan_ladder_scratch_bytes", PTXKIT_SCAN_INCLUSIVE, op, type, 0, 0, 0);
    launch_options o;
    if (st != PTXKIT_SUCCESS || (st = ladder_options(ctx, options, &o)) != PTXKIT_SUCCESS) return st;
    if (!scan_ladder_supported(ctx, step, op, type, &st)) return st;
    if ((st = context_enter(ctx)) != PTXKIT_SUCCESS) return st;
    ladder_plan p;
    st = ladder_plan_for(ctx, step, op, type, n, &o, &p);
    if (st == PTXKIT_SUCCESS) *bytes = p.scratch_elems * ptxkit_dtype_size(type);
    context_leave(ctx);
    return st;
}

ptxkit_status scan_ladder_run(ptxkit_context *ctx, int step, ptxkit_scan_kind kind, ptxkit_reduce_op op,
                              ptxkit_dtype type, ptxkit_dptr in, size_t n, ptxkit_dptr out, ptxkit_dptr scratch,
                              size_t scratch_bytes, const ptxkit_config *options, ptxkit_stream *stream) {
    ptxkit_status st = scan_check_args(ctx, "ptxkit_scan_ladder", kind, op, type, in, n, out);
    launch_options o;
    if (st != PTXKIT_SUCCESS || (st = ladder_options(ctx, options, &o)) != PTXKIT_SUCCESS) return st;
    if (!scan_ladder_supported(ctx, step, op, type, &st)) return st;
    if (n == 0) return PTXKIT_SUCCESS;
    if ((st = context_enter(ctx)) != PTXKIT_SUCCESS) return st;
    size_t elem = ptxkit_dtype_size(type);
    ladder_plan p;
    if ((st = ladder_plan_for(ctx, step, op, type, n, &o, &p)) != PTXKIT_SUCCESS) goto done;
    if (p.scratch_elems && (!scratch || scratch % elem || scratch_bytes < p.scratch_elems * elem)) {
        st = record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT,
                          "scan ladder: step %d needs %zu bytes of %zu-byte aligned scratch, got %zu at 0x%llx", step,
                          p.scratch_elems * elem, elem, scratch_bytes, (unsigned long long)scratch);
        goto done;
    }
    st = ladder_launch(&p, elem, 0, in, out, scratch, kind == PTXKIT_SCAN_EXCLUSIVE, stream);
done:
    context_leave(ctx);
    return st;
}

/* Allocates the block sums per call and frees them once the launches have
 * finished, so it waits for the stream: a teaching and testing entry point.
 * The benchmark keeps its scratch and calls scan_ladder_run. */
ptxkit_status ptxkit_scan_ladder(ptxkit_context *ctx, int step, ptxkit_scan_kind kind, ptxkit_reduce_op op,
                                 ptxkit_dtype type, ptxkit_dptr out, ptxkit_dptr in, size_t n,
                                 const ptxkit_config *options, ptxkit_stream *stream) {
    ptxkit_status st = scan_check_args(ctx, "ptxkit_scan_ladder", kind, op, type, in, n, out);
    launch_options o;
    if (st != PTXKIT_SUCCESS || (st = ladder_options(ctx, options, &o)) != PTXKIT_SUCCESS) return st;
    if (!scan_ladder_supported(ctx, step, op, type, &st)) return st;
    if (n == 0) return PTXKIT_SUCCESS;
    if ((st = context_enter(ctx)) != PTXKIT_SUCCESS) return st;
    size_t elem = ptxkit_dtype_size(type);
    ladder_plan p;
    CUdeviceptr scratch = 0;
    if ((st = ladder_plan_for(ctx, step, op, type, n, &o, &p)) != PTXKIT_SUCCESS) goto done;
    if (p.scratch_elems) {
        CUresult r = ctx->cu->cuMemAlloc(&scratch, p.scratch_elems * elem);
        if (r != CUDA_SUCCESS) {
            st = record_cuda_error(ctx, r, "ptxkit_scan_ladder: cuMemAlloc of the block sums");
            goto done;
        }
    }
    st = ladder_launch(&p, elem, 0, in, out, scratch, kind == PTXKIT_SCAN_EXCLUSIVE, stream);
    if (scratch) {
        CUresult r = ctx->cu->cuStreamSynchronize(stream_handle(stream));
        if (r != CUDA_SUCCESS && st == PTXKIT_SUCCESS)
            st = record_cuda_error(ctx, r, "ptxkit_scan_ladder: cuStreamSynchronize");
        ctx->cu->cuMemFree(scratch);
    }
done:
    context_leave(ctx);
    return st;
}

/* ---- the family's descriptor (families/family.h) ---------------------------- */

const family_desc scan_ladder_family = {
    .name = "scan_ladder",
    .description = "ptxkit_scan_ladder: the scan ladder of the 2007 seeds plus warp shuffles",
    .entries = "ptxkit_scan_ladder<step>_<op>_<type>, ptxkit_scan_ladder_add_<op>_<type>",
};

/* ---- public: the ladder with caller-owned block sums -------------------- */

_Static_assert(PTXKIT_SCAN_LADDER_STEPS == SCAN_LADDER_STEPS, "ptxkit.h's PTXKIT_SCAN_LADDER_STEPS is the ladder's length");

const char *ptxkit_scan_ladder_step_name(int step) { return scan_ladder_step_name(step); }

ptxkit_status ptxkit_scan_ladder_scratch_bytes(ptxkit_context *ctx, int step, ptxkit_reduce_op op, ptxkit_dtype type,
                                               size_t n, const ptxkit_config *options, size_t *bytes) {
    if (!ctx)
        return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_scan_ladder_scratch_bytes: context is NULL");
    return scan_ladder_scratch_bytes(ctx, step, op, type, n, options, bytes);
}

ptxkit_status ptxkit_scan_ladder_async(ptxkit_context *ctx, int step, ptxkit_scan_kind kind, ptxkit_reduce_op op,
                                       ptxkit_dtype type, ptxkit_dptr out, ptxkit_dptr in, size_t n,
                                       ptxkit_dptr scratch, size_t scratch_bytes,
                                       const ptxkit_config *options, ptxkit_stream *stream) {
    if (!ctx) return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_scan_ladder_async: context is NULL");
    return scan_ladder_run(ctx, step, kind, op, type, in, n, out, scratch, scratch_bytes, options, stream);
}
