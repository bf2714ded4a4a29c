// Production reduction: one launch per call. Each block streams its share
// of the input with 16-byte loads (VEC_UNROLL of them in flight per thread),
// reduces it in registers and shared memory, and stores one partial; the
// last block to finish (threadfence + ticket counter) reduces the partials
// and writes the result. Mode 1/2 split the same kernel into two launches.
// Injected: BLOCK_SIZE, LOAD_OP (ptxkit_load.cuh), VEC_BYTES (4, 8 or 16),
// VEC_UNROLL (vector loads in flight per thread), ONLY_OP / ONLY_TYPE
// (reduce_ops.cuh). Entry points: ptxkit_reduce_<op>_<type>
//   (const T *in, u64 n, T *out, unsigned slot, unsigned mode)
#include "reduce_defaults.h"
#include <ptxkit/grid.cuh>
#include "reduce_ops.cuh"

#ifndef BLOCK_SIZE
#define BLOCK_SIZE REDUCE_DEFAULT_BLOCK
#endif
#ifndef VEC_BYTES
#define VEC_BYTES REDUCE_DEFAULT_VECTOR
#endif
#ifndef VEC_UNROLL
#define VEC_UNROLL REDUCE_DEFAULT_UNROLL
#endif

// Scratch lives in the module, so it is created zeroed when the module loads
// and freed when the context unloads it; no allocation per call. A call
// uses one slot (picked by the host per stream), so reductions running
// concurrently on different streams never share a counter. The last block
// sets its slot's ticket back to 0, which keeps the kernel reusable.
// REDUCE_SLOTS and REDUCE_MAX_GRID: reduce_defaults.h.
__device__ unsigned reduce_tickets[REDUCE_SLOTS] = {0};  // explicit: the first launch needs 0
__device__ unsigned long long reduce_partials[REDUCE_SLOTS][REDUCE_MAX_GRID];

#define REDUCE_MODE_SINGLE 0        // one launch, the last block finishes
#define REDUCE_MODE_PARTIALS_OUT 1  // first of two launches: partials only
#define REDUCE_MODE_PARTIALS_IN 2   // second launch, one block: n partials -> out

#if VEC_BYTES == 16
typedef uint4 rvec;
__device__ __forceinline__ void rload_words(const rvec *p, unsigned *w) {
    uint4 v = ptxkit::ld_v4u32(p);
    w[0] = v.x, w[1] = v.y, w[2] = v.z, w[3] = v.w;
}
#elif VEC_BYTES == 8
typedef uint2 rvec;
__device__ __forceinline__ void rload_words(const rvec *p, unsigned *w) {
    uint2 v = ptxkit::ld_v2u32(p);
    w[0] = v.x, w[1] = v.y;
}
#elif VEC_BYTES == 4
typedef unsigned rvec;
__device__ __forceinline__ void rload_words(const rvec *p, unsigned *w) { w[0] = ptxkit::ld_u32(p); }
#else
#error "VEC_BYTES must be 4, 8 or 16"
#endif
#define VEC_WORDS (VEC_BYTES / 4)

// Ask for registers that let a full SM's worth of threads be resident: a
// streaming read wants every warp it can get. The limit differs by
// architecture, and an impossible request is ignored with a warning.
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ == 800 || __CUDA_ARCH__ == 900 || __CUDA_ARCH__ == 1000
#define REDUCE_SM_THREADS 2048
#elif __CUDA_ARCH__ < 800
#define REDUCE_SM_THREADS 1024
#else
#define REDUCE_SM_THREADS 1536
#endif
// Loads in flight need registers too: with more than 16 words of them per
// thread, settle for a half or a quarter of the threads.
#define REDUCE_LOAD_WORDS (VEC_UNROLL * VEC_WORDS)
#define REDUCE_RESIDENT (REDUCE_SM_THREADS / BLOCK_SIZE / (REDUCE_LOAD_WORDS <= 16 ? 1 : REDUCE_LOAD_WORDS <= 40 ? 2 : 4))
#define REDUCE_MIN_BLOCKS (REDUCE_RESIDENT > 32 ? 32 : REDUCE_RESIDENT < 1 ? 1 : REDUCE_RESIDENT)

#define REDUCE_BODY "reduce_body.cuh"
#include "reduce_each.cuh"
