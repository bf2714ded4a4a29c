/* Family gemm's float64 kernel on the FP64 tensor cores, the path
 * ptxkit_gemm takes for float64 on sm_80 and newer: the kernel of the
 * embedded source gemm_dmma.cu for a configuration. Its rules,
 * register estimate and mma depth are gemm_config.c's; argument checks,
 * split-K and the launch are gemm.c's, shared with the CUDA-core kernels. */
#include "gemm/gemm.h"
#include "runtime/kernel.h"
#include "runtime/launch.h"
#include "runtime/objects.h"

/* gemm_dmma.cu's kernel (both operands copied in 16-byte vectors where
 * aligned). The spec names the embedded source gemm_dmma.cu, not the
 * family: family gemm compiles two sources (its descriptor's sources). */
ptxkit_status gemm_dmma_kernel(ptxkit_context *ctx, const gemm_switches *sw, const gemm_config *c,
                               const gemm_shape *sh, bool trans_a, bool trans_b, bool vec_a, bool vec_b, bool partial,
                               ptxkit_kernel **fn) {
    kernel_spec spec = {.family = "gemm_dmma", .entry = "ptxkit_gemm_dmma_f64"};
    define_scratch scratch = {0};
    spec_define_int(&spec, &scratch, "TRANS_A", trans_a);
    spec_define_int(&spec, &scratch, "TRANS_B", trans_b);
    spec_define_int(&spec, &scratch, "VEC_A", vec_a ? 2 : 1);
    spec_define_int(&spec, &scratch, "VEC_B", vec_b ? 2 : 1);
    spec_define_int(&spec, &scratch, "BM", c->bm);
    spec_define_int(&spec, &scratch, "BN", c->bn);
    spec_define_int(&spec, &scratch, "BK", c->bk);
    spec_define_int(&spec, &scratch, "WM", sh->wm);
    spec_define_int(&spec, &scratch, "WN", sh->wn);
    spec_define_int(&spec, &scratch, "MMA_K", gemm_mma_k(c, sw));
    spec_define_int(&spec, &scratch, "STAGES", c->stages);
    spec_define_int(&spec, &scratch, "MIN_BLOCKS", gemm_min_blocks(GEMM_F64_TC, sw, c, &ctx->info));
    spec_define_int(&spec, &scratch, "GEMM_PARTIAL", partial);
    ptxkit_status st = kernel_get(ctx, &spec, fn);
    if (st != PTXKIT_SUCCESS) return st;
    /* past the static 48 KB, dynamic shared memory is opted into per function */
    return kernel_reserve_dynamic_shared(*fn, gemm_shared_bytes(GEMM_F64_TC, c, trans_a, trans_b), false);
}
