/* reduce's built-in parameters and the sizes host and kernel must agree on,
 * written once: reduce.cu compiles with them when none is
 * injected (so the precompiled PTX has them), and reduce.c launches
 * with them and starts its tuning space there. Plain #defines: this header
 * is C and CUDA C++ alike. */
#ifndef PTXKIT_REDUCE_DEFAULTS_H
#define PTXKIT_REDUCE_DEFAULTS_H

#define REDUCE_DEFAULT_BLOCK 1024 /* also the block size of the PTX; best at 2^28 on an H100 */
#define REDUCE_DEFAULT_VECTOR 16  /* bytes per load */
#define REDUCE_DEFAULT_UNROLL 4   /* vector loads in flight per thread (items_per_thread) */

/* Scratch slots in each module, and the most blocks (partials per slot)
 * one launch may use. */
#define REDUCE_SLOTS 16
#define REDUCE_MAX_GRID 2048

#endif
