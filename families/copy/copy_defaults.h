/* copy's built-in parameters, written once: copy.cu compiles
 * with them when none is injected (so the precompiled PTX has them), and
 * copy.c launches with them and starts its tuning space there.
 * Plain #defines: this header is C and CUDA C++ alike. */
#ifndef PTXKIT_COPY_DEFAULTS_H
#define PTXKIT_COPY_DEFAULTS_H

/* Measured on an H100 at 1 GiB: one block per tile of 512 x 2 vectors
 * matches cuMemcpyDtoD, while a persistent occupancy-sized grid stays
 * below it. */
#define COPY_DEFAULT_BLOCK 512
#define COPY_DEFAULT_UNROLL 2  /* vectors in flight per thread (items_per_thread) */
#define COPY_DEFAULT_VECTOR 16 /* widest vector tried; the addresses may allow less */

#endif
