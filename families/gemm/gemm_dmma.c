/* Family gemm's kernel on the FP64 tensor cores, the path ptxkit_gemm
 * takes for float64 on sm_80 and newer and for float32 on sm_90
 * (gemm_kind_of): the kernel of the embedded source gemm_dmma.cu for a
 * configuration. Its rules,
 * register estimate and mma depth are gemm_config.c's; argument checks,
 * split-K and the launch are gemm.c's, shared with the CUDA-core kernels. */
#include <stdint.h>

#include "gemm/gemm.h"
#include "runtime/kernel.h"
#include "runtime/launch.h"
#include "runtime/objects.h"
#include "runtime/status.h"

/* gemm_dmma.cu's kernel (both operands copied in 16-byte vectors where
 * aligned). The spec names the embedded source gemm_dmma.cu, not the
 * family: family gemm compiles two sources (its descriptor's sources). */
ptxkit_status gemm_dmma_kernel(ptxkit_context *ctx, const gemm_switches *sw, gemm_kind kind, const gemm_config *c,
                               const gemm_shape *sh, bool trans_a, bool trans_b, bool vec_a, bool vec_b, bool partial,
                               int tma, ptxkit_kernel **fn) {
    const bool f32 = kind == GEMM_F32_TC;
    const int vec = 16 / gemm_elem_bytes(kind); /* elements of a 16-byte copy */
    kernel_spec spec = {.family = "gemm_dmma", .entry = f32 ? "ptxkit_gemm_dmma_f32" : "ptxkit_gemm_dmma_f64"};
    define_scratch scratch = {0};
    if (f32) spec_define_int(&spec, &scratch, "GEMM_F32_IN", 1);
    spec_define_int(&spec, &scratch, "TRANS_A", trans_a);
    spec_define_int(&spec, &scratch, "TRANS_B", trans_b);
    spec_define_int(&spec, &scratch, "VEC_A", vec_a ? vec : 1);
    spec_define_int(&spec, &scratch, "VEC_B", vec_b ? vec : 1);
    spec_define_int(&spec, &scratch, "BM", c->bm);
    spec_define_int(&spec, &scratch, "BN", c->bn);
    spec_define_int(&spec, &scratch, "BK", c->bk);
    spec_define_int(&spec, &scratch, "WM", sh->wm);
    spec_define_int(&spec, &scratch, "WN", sh->wn);
    spec_define_int(&spec, &scratch, "MMA_K", tma ? gemm_tma_mma_k(kind, c, sw, &ctx->info) : gemm_mma_k(c, sw));
    spec_define_int(&spec, &scratch, "STAGES", c->stages);
    spec_define_int(&spec, &scratch, "MIN_BLOCKS", gemm_min_blocks(kind, sw, c, &ctx->info));
    spec_define_int(&spec, &scratch, "GEMM_PARTIAL", partial);
    if (tma) spec_define_int(&spec, &scratch, "GEMM_TMA", tma);
    ptxkit_status st = kernel_get(ctx, &spec, fn);
    if (st != PTXKIT_SUCCESS) return st;
    /* past the static 48 KB, dynamic shared memory is opted into per function */
    return kernel_reserve_dynamic_shared(*fn, gemm_shared_bytes(kind, c, trans_a, trans_b), false);
}

/* Elements in the 128-byte swizzle's line (gemm_dmma.cu's TMA_LINE): 16
 * doubles or 32 floats. A's box is a line of k; B's groups are a line of
 * columns. */
static size_t tma_line(gemm_kind kind) { return 128 / (size_t)gemm_elem_bytes(kind); }

int gemm_dmma_tma_mode(const ptxkit_context *ctx, const gemm_switches *sw, gemm_kind kind, const gemm_config *c,
                       bool trans_a, bool trans_b, bool vec_a, bool vec_b, size_t n, size_t k) {
    if (!gemm_kind_tc(kind)) return 0; /* the CUDA-core kernels copy by cp.async */
    const size_t line = tma_line(kind);
    /* Every tile size: 32 x 64 tiles, which ran slower with the maps than
     * with cp.async at first (notebook section 28), ran as fast at 512^3
     * and faster at 768^3 and 100 x 4096 x 1000 once the path took mma k 8
     * (section 29). */
    /* k-tiles of 16 or 32 (A in one or two boxes), an even number of mma
     * steps in each: the steps (gemm_tma_mma_k's register estimate, the
     * costliest test) last */
    bool able = ctx->arch >= 90 && ctx->cu->cuTensorMapEncodeTiled && sw->tensor_maps != 0 && !trans_a && !trans_b &&
                vec_a && vec_b && k > 0 && (c->bk == 16 || c->bk == 32) && c->bn % (int)line == 0 &&
                2 * gemm_tma_mma_k(kind, c, sw, &ctx->info) <= c->bk;
    return !able ? 0 : n % line == 0 ? 2 : 1;
}

/* A map of a row-major matrix of doubles or floats (ld apart) with `rank`
 * dims (innermost first) and byte strides of the outer ones. */
static CUresult encode(const cuda_driver *cu, CUtensorMap *map, bool f32, CUdeviceptr base, unsigned rank,
                       const cuuint64_t *dims, const cuuint64_t *strides, const cuuint32_t *box) {
    const cuuint32_t element_strides[3] = {1, 1, 1};
    return cu->cuTensorMapEncodeTiled(map, f32 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT32 : CU_TENSOR_MAP_DATA_TYPE_FLOAT64, rank,
                                      (void *)(uintptr_t)base, dims, strides,
                                      box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                      CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                                      CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
}

ptxkit_status gemm_dmma_tma_maps(ptxkit_context *ctx, gemm_kind kind, const gemm_config *c, int tma, CUdeviceptr a,
                                 size_t lda, CUdeviceptr b, size_t ldb, size_t m, size_t n, size_t k,
                                 gemm_tma_maps *maps) {
    const bool f32 = kind == GEMM_F32_TC;
    const size_t elem = (size_t)gemm_elem_bytes(kind), line = tma_line(kind);
    const cuuint64_t a_dims[2] = {k, m}, a_strides[1] = {lda * elem};
    const cuuint32_t a_box[2] = {(cuuint32_t)line, (cuuint32_t)c->bm}; /* float64's k-tile of 32 takes two */
    CUresult r = encode(ctx->cu, &maps->a, f32, a, 2, a_dims, a_strides, a_box);
    if (r == CUDA_SUCCESS && tma == 2) {
        /* (column in a group of a line, k, group): the block's groups side by side */
        const cuuint64_t dims[3] = {line, k, n / line}, strides[2] = {ldb * elem, line * elem};
        const cuuint32_t box[3] = {(cuuint32_t)line, (cuuint32_t)c->bk, (cuuint32_t)(c->bn / (int)line)};
        r = encode(ctx->cu, &maps->b, f32, b, 3, dims, strides, box);
    } else if (r == CUDA_SUCCESS) {
        const cuuint64_t dims[2] = {n, k}, strides[1] = {ldb * elem};
        const cuuint32_t box[2] = {(cuuint32_t)line, (cuuint32_t)c->bk};
        r = encode(ctx->cu, &maps->b, f32, b, 2, dims, strides, box);
    }
    return r == CUDA_SUCCESS ? PTXKIT_SUCCESS : record_cuda_error(ctx, r, "ptxkit_gemm: cuTensorMapEncodeTiled");
}
