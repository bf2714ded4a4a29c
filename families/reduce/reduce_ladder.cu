// Mark Harris's reduction ladder (NVIDIA, 2007), steps 1-7, then warp
// shuffles (8), redux.sync (9) and cooperative groups' tile reduce (10), for teaching and
// benchmarks; ptxkit_reduce is the production path. Each entry
//   ptxkit_reduce_ladder<k>_<op>_<type>(const T *in, u64 n, T *out)
// reduces its block's share of in[0, n) into out[blockIdx.x]; the host
// launches again on the partials until one value is left. Unlike the lecture
// code, every step is correct for any n and any power-of-two block size from
// 32 to 1024 (blockDim.x must equal BLOCK_SIZE).
// Injected: BLOCK_SIZE, LADDER_TILE (step 10's tile, 4..32, default 32),
// LOAD_OP (every global load goes through the ptxkit_load.cuh helpers),
// ONLY_STEP (0: all steps) and ONLY_OP / ONLY_TYPE (reduce_ops.cuh): the
// runtime compiles one entry per module.
#include "reduce_ladder_defaults.h"
#include "reduce_ops.cuh"

#ifndef BLOCK_SIZE
#define BLOCK_SIZE LADDER_DEFAULT_BLOCK
#endif
#ifndef ONLY_STEP
#define ONLY_STEP 0
#endif
#define LADDER_WANT(step) (ONLY_STEP == 0 || ONLY_STEP == (step))
// Steps 5-7 read sdata[tid + 32] in their last warp; a 32-thread block pads
// its array with identities so that read stays inside it.
#define LADDER_SMEM (BLOCK_SIZE < 64 ? 64 : BLOCK_SIZE)

#define REDUCE_BODY "reduce_ladder_body.cuh"
#include "reduce_each.cuh"
