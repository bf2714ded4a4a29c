/* gemm_dmma: float64 GEMM on the FP64 tensor cores (cu_sources/gemm_dmma.cu),
 * the path ptxkit_gemm takes for float64 on sm_80 and newer: its
 * configuration rules, register estimate, mma depth and kernel. Argument
 * checks, split-K and the launch are gemm.c's, shared with the CUDA-core
 * kernels. */
#include <stdatomic.h>
#include <stdio.h>

#include "ops/family.h"
#include "ops/gemm.h"

/* gemm_dmma.cu's tile_loader: a rows x cols tile, cols contiguous, vec
 * elements per copy, every thread the same number of copies. */
static bool tile_copies_fit(int threads, int rows, int cols, int vec) {
    if (cols % vec) return false;
    int per_row = cols / vec;
    return threads % per_row == 0 && rows % (threads / per_row) == 0;
}

/* mma k depth of the tensor-core kernel (experiment switch, gemm.h): 0 the
 * default, 4 (m16n8k4 on sm_90): deeper ones hold more fragments, which
 * with 64 accumulators a lane and fragments double-buffered spill. */
static atomic_int mma_k_switch = 0;

void gemm_set_mma_k(int k) { atomic_store(&mma_k_switch, k == 4 || k == 8 || k == 16 ? k : 0); }

static int mma_k_for(const gemm_config *c) {
    int k = atomic_load(&mma_k_switch);
    if (!k) k = 4;
    return k < c->bk ? k : c->bk;
}

/* Registers a thread of the tensor-core kernel needs: its tm x tn doubles
 * of C, two k-steps of fragments (tm of A and tn / 2 of B per k quarter
 * of 4) and about 64 for addresses, loaders and loop state (ptxas -v on
 * sm_90: 228-254 for 8 x 8 at mma k 4, spills at k 8; 150-166 for 4 x 8). */
int gemm_dmma_registers(const gemm_config *c) {
    int quarters = mma_k_for(c) / 4;
    return 2 * (c->tm * c->tn + 2 * (c->tm + c->tn / 2) * quarters) + 64;
}

bool gemm_dmma_config_check(const gemm_config *c, gemm_shape *shape, char *why, size_t why_size) {
    if (!gemm_power_of_two(c->bm) || !gemm_power_of_two(c->bn) || c->bm < 16 || c->bn < 16 || c->bm > 256 || c->bn > 256)
        return snprintf(why, why_size, "block tile %d x %d: sides are powers of two in [16, 256]", c->bm, c->bn), false;
    if (c->bk != 4 && c->bk != 8 && c->bk != 16 && c->bk != 32)
        return snprintf(why, why_size, "bk %d is not 4, 8, 16 or 32", c->bk), false;
    if (c->tm < 2 || c->tm % 2 || c->tn < 4 || c->tn % 4 || c->tm * c->tn > 64)
        return snprintf(why, why_size,
                        "lane tile %d x %d: the tensor cores take tm even, tn a multiple of 4, tm x tn at most 64",
                        c->tm, c->tn),
               false;
    if (c->bm % c->tm || c->bn % c->tn)
        return snprintf(why, why_size, "lane tile %d x %d does not divide the block tile %d x %d", c->tm, c->tn, c->bm,
                        c->bn),
               false;
    int threads, warps, wm, wn;
    if (!gemm_check_warps(c, &threads, &warps, &wm, &wn, why, why_size)) return false;
    if (wm != 8 * c->tm || wn != 4 * c->tn)
        return snprintf(why, why_size,
                        "warp tile %d x %d is not 8 x 4 lanes of %d x %d (the mma tiles' lanes: warps_m = bm / (8 tm))",
                        wm, wn, c->tm, c->tn),
               false;
    if (gemm_dmma_registers(c) > 256 || threads * gemm_dmma_registers(c) > 65536)
        return snprintf(why, why_size, "%d threads of about %d registers exceed a thread's 255 or an SM's 65536",
                        threads, gemm_dmma_registers(c)),
               false;
    if (!gemm_check_stages(c, why, why_size)) return false;
    /* each operand stored K- or M/N-contiguous, in 16- or 8-byte copies */
    for (int side = 0; side < 2; side++) {
        int cols = side ? c->bn : c->bm;
        for (int vec = 1; vec <= 2; vec++)
            if (!tile_copies_fit(threads, cols, c->bk, vec) || !tile_copies_fit(threads, c->bk, cols, vec))
                return snprintf(why, why_size,
                                "%d threads cannot copy a %d x %d tile of %s evenly in either layout (threads a "
                                "multiple of bk and of %d, every thread the same number of copies)",
                                threads, c->bk, cols, side ? "B" : "A", cols),
                       false;
    }
    if (shape) *shape = (gemm_shape){threads, warps, wm, wn, 8, 4};
    return true;
}

/* gemm_dmma.cu's kernel (both operands copied in 16-byte vectors where aligned). */
ptxkit_status gemm_dmma_kernel(ptxkit_context *ctx, const gemm_config *c, const gemm_shape *sh, bool trans_a,
                                 bool trans_b, bool vec_a, bool vec_b, bool partial, ptxkit_kernel **fn) {
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
    spec_define_int(&spec, &scratch, "MMA_K", mma_k_for(c));
    spec_define_int(&spec, &scratch, "STAGES", c->stages);
    spec_define_int(&spec, &scratch, "MIN_BLOCKS", gemm_min_blocks(GEMM_F64_TC, c, &ctx->info));
    spec_define_int(&spec, &scratch, "GEMM_PARTIAL", partial);
    ptxkit_status st = kernel_get(ctx, &spec, fn);
    if (st != PTXKIT_SUCCESS) return st;
    return kernel_reserve_dynamic_shared(*fn, gemm_shared_bytes(GEMM_F64_TC, c, trans_a, trans_b), false);
}

const family_desc gemm_dmma_family = {
    .name = "gemm_dmma",
    .description = "ptxkit_gemm's float64 path on the FP64 tensor cores (mma.sync f64, sm_80+)",
    .entries = "ptxkit_gemm_dmma_f64",
};
