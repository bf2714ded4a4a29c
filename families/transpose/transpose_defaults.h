/* transpose's built-in parameters, written once: transpose.cu
 * compiles with the PTX's when none is injected (so the precompiled PTX has
 * them), and transpose.c launches with them and starts its tuning
 * space there. Plain #defines: this header is C and CUDA C++ alike. */
#ifndef PTXKIT_TRANSPOSE_DEFAULTS_H
#define PTXKIT_TRANSPOSE_DEFAULTS_H

/* The precompiled PTX: the classic 32 x 8 block on a 32 x 32 tile. */
#define TRANSPOSE_PTX_BLOCK 256
#define TRANSPOSE_PTX_TILE 32
#define TRANSPOSE_PTX_VECTOR 16

/* The JIT path, measured on an H100 at 8192 x 8192: 64 x 64 tiles of float32 with 4-byte accesses (16 per
 * thread) come closest to cuMemcpyDtoD, 16-byte accesses fall behind (bank
 * conflicts on the padded tile); for float64, 32 x 32 tiles with 8-byte
 * accesses. At odd shapes (4097 x 4095), with the sector-aligned kernel,
 * the same defaults do best too: the tuner keeps them. */
#define TRANSPOSE_JIT_BLOCK 256
#define TRANSPOSE_F32_TILE 64
#define TRANSPOSE_F32_VECTOR 4
#define TRANSPOSE_F64_TILE 32
#define TRANSPOSE_F64_VECTOR 8

#endif
