/* Pieces the GEMM commands share (bench gemm, ladder gemm): the GPU's
 * arithmetic peak from its clock, random matrices, parallel compiles, and
 * cuBLAS opened with dlopen for the comparison (never a link dependency). */
#ifndef PTXKIT_CLI_GEMM_COMMON_H
#define PTXKIT_CLI_GEMM_COMMON_H

#include <stdbool.h>
#include <stddef.h>

#include "ptxkit.h"
#include "ptxkit_ops.h"

/* FMA lanes per SM for a type on this compute capability (the CUDA
 * programming guide's arithmetic-throughput table), the SM clock
 * (CU_DEVICE_ATTRIBUTE_CLOCK_RATE, kHz) and the peak in TFLOP/s: clock x
 * SMs x lanes x 2. 0 where unknown. */
typedef struct gemm_peak {
    int clock_khz, sm_count, lanes;
    double tflops;
} gemm_peak;
gemm_peak gemm_peak_of(ptxkit_context *ctx, ptxkit_dtype type);

/* count elements of type at dst, uniform in [-1, 1): one chunk made on the
 * host, repeated on the device. */
ptxkit_status gemm_fill_uniform(ptxkit_context *ctx, ptxkit_dtype type, ptxkit_dptr dst, size_t count, unsigned seed);

/* A GEMM configuration as the command parses and prints it: ptxkit_gemm's
 * parameters bm .. split_k (ptxkit.h), all zero for the tuned or built-in
 * one; and to and from the ptxkit_config the calls take. */
typedef struct gemm_tiles {
    int bm, bn, bk, tm, tn, warps_m, stages, split_k;
} gemm_tiles;
const ptxkit_config *gemm_tiles_config(const gemm_tiles *t, ptxkit_config *out);
gemm_tiles gemm_tiles_from(const ptxkit_config *c);

/* "128x128x8 t8x8 w4 s4 k1" (split_k 0 prints as "k-"). */
void gemm_tiles_format(const gemm_tiles *t, char *buf, size_t size);

/* Compiles the kernels of each (type, tiles, op_a, op_b) ahead, from up to
 * `threads` threads (0: one per CPU); a NULL tiles entry means nothing.
 * Returns the first failure (the others still compile). */
typedef struct gemm_job {
    ptxkit_dtype type;
    ptxkit_gemm_op op_a, op_b;
    gemm_tiles tiles;
    size_t m, n, k;
} gemm_job;
ptxkit_status gemm_prepare_all(ptxkit_context *ctx, const gemm_job *jobs, int count, int threads);

/* cuBLAS through dlopen: $PTXKIT_CUBLAS, else libcublas.so.13, .so.12,
 * libcublas.so. FP32 in CUBLAS_PEDANTIC_MATH (no tensor cores, no TF32),
 * FP64 in the default math mode (which may use FP64 tensor cores) unless
 * cublas_pedantic_f64 is set. */
typedef struct cublas_lib cublas_lib;
void cublas_pedantic_f64(cublas_lib *lib, bool pedantic);
/* NULL with *why set when the library or a symbol is missing. */
cublas_lib *cublas_open(ptxkit_context *ctx, char *why, size_t why_size);
void cublas_close(cublas_lib *lib);
const char *cublas_path(const cublas_lib *lib);
/* The row-major call of ptxkit_gemm, as cuBLAS's column-major one
 * (C^T = op(B)^T op(A)^T: operands and m, n swapped), on `stream`. */
ptxkit_status cublas_gemm(cublas_lib *lib, ptxkit_dtype type, ptxkit_gemm_op op_a, ptxkit_gemm_op op_b, size_t m,
                          size_t n, size_t k, double alpha, ptxkit_dptr a, size_t lda, ptxkit_dptr b, size_t ldb,
                          double beta, ptxkit_dptr c, size_t ldc, ptxkit_stream *stream);

#endif
