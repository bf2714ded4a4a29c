/* Internal interface of the GEMM family for the tuner, the command-line
 * tool and the tests. The family gemm is three files: gemm_config.c (the
 * configuration rules and switches, gemm_config.h), gemm.c (ptxkit_gemm:
 * argument checks, configuration choice, split-K and stream-K, the
 * launches, and the CUDA-core kernels of gemm.cu) and gemm_dmma.c (the
 * kernel of gemm_dmma.cu, float64, and float32 on sm_90, on the FP64
 * tensor cores); gemm.c calls the other two, which call only
 * gemm_config.c. */
#ifndef PTXKIT_OPS_GEMM_H
#define PTXKIT_OPS_GEMM_H

#include <stdbool.h>
#include <stddef.h>

#include <cuda.h>

#include "gemm/gemm_config.h"
#include "ptxkit.h"
#include "ptxkit_ops.h"

/* The configuration ptxkit_gemm runs for a call: the caller's tiles when
 * given, else the tuning database's entry for (type, class, m * n * k),
 * else the built-in one, and the kernel that runs it (*kind): the type's
 * on this GPU, or the CUDA cores' for a float32 configuration of the
 * caller's that only they take. *tuned and kind may be NULL; *tuned says
 * whether the configuration came from the database. Records and returns
 * INVALID_ARGUMENT for tiles that are not a configuration. */
ptxkit_status gemm_resolve(ptxkit_context *ctx, const gemm_switches *sw, ptxkit_dtype type, size_t m, size_t n,
                           size_t k, const gemm_config *tiles, gemm_config *out, bool *tuned, gemm_kind *kind);

/* ptxkit_gemm with the configuration read (tiles NULL or all zero: tuned
 * or built-in). */
ptxkit_status gemm_run(ptxkit_context *ctx, ptxkit_dtype type, ptxkit_gemm_op op_a, ptxkit_gemm_op op_b, size_t m,
                       size_t n, size_t k, double alpha, ptxkit_dptr a, size_t lda, ptxkit_dptr b, size_t ldb,
                       double beta, ptxkit_dptr c, size_t ldc, const gemm_config *tiles, ptxkit_stream *stream);

/* Compiles and loads what ptxkit_gemm would launch for these arguments
 * (the same checks, configuration, split and alignment), without
 * launching: the tuner compiles ahead with it, and the tests warm their
 * kernels from several threads. */
ptxkit_status gemm_prepare_call(ptxkit_context *ctx, ptxkit_dtype type, ptxkit_gemm_op op_a, ptxkit_gemm_op op_b,
                                size_t m, size_t n, size_t k, double alpha, ptxkit_dptr a, size_t lda, ptxkit_dptr b,
                                size_t ldb, double beta, ptxkit_dptr c, size_t ldc, const gemm_config *tiles);

/* The tensor-core kernel (gemm_dmma.c) for a configuration, the operands'
 * layouts and alignment, under the context's switches sw. */
ptxkit_status gemm_dmma_kernel(ptxkit_context *ctx, const gemm_switches *sw, gemm_kind kind, const gemm_config *c,
                               const gemm_shape *sh, bool trans_a, bool trans_b, bool vec_a, bool vec_b, bool partial,
                               int tma, ptxkit_kernel **fn);

/* Which tensor-map path of the tensor-core kernel a call takes
 * (gemm_dmma.cu's GEMM_TMA): 0 none (cp.async copies, and every kind
 * not on the tensor cores), 1 B in boxes of one 128-byte line of columns
 * (16 doubles, 32 floats), 2 B in one 3-D box (the line divides n). Not 0
 * needs sm_90 or newer, a driver with cuTensorMapEncodeTiled, the
 * switches allowing it, A and B as stored, both 16-byte aligned (vec_a,
 * vec_b), k-tiles of 16 or 32 holding an even number of mma steps
 * (gemm_tma_mma_k), bn a multiple of the line and k > 0. */
int gemm_dmma_tma_mode(const ptxkit_context *ctx, const gemm_switches *sw, gemm_kind kind, const gemm_config *c,
                       bool trans_a, bool trans_b, bool vec_a, bool vec_b, size_t n, size_t k);

/* The kernels' flags argument, as gemm.cu and gemm_dmma.cu define them
 * (NVRTC compiles those without this header): beta != 0 (C is read), C
 * and ldc allow 16-byte accesses, the stream-K kernel launched early
 * behind the whole waves (gemm.cu only). */
enum { GEMM_FLAG_BETA = 1u, GEMM_FLAG_VECTOR_C = 2u, GEMM_FLAG_LED = 4u };

/* The path's two kernel arguments for mode tma, L elements a 128-byte
 * line (16 doubles, 32 floats): A (m x k, leading dimension lda) in boxes
 * of L x bm (float64's k-tile of 32 takes two); B (k x n, ldb) in boxes
 * of L x bk (mode 1) or L x bk x bn / L (mode 2); the 128-byte swizzle,
 * zeros past the matrix. */
typedef struct gemm_tma_maps {
    CUtensorMap a, b;
} gemm_tma_maps;
ptxkit_status gemm_dmma_tma_maps(ptxkit_context *ctx, gemm_kind kind, const gemm_config *c, int tma, CUdeviceptr a,
                                 size_t lda, CUdeviceptr b, size_t ldb, size_t m, size_t n, size_t k,
                                 gemm_tma_maps *maps);

#endif
