// The scan ladder of the 2007 seeds (Harris, Sengupta & Owens, "Parallel
// Prefix Sum (Scan) with CUDA", GPU Gems 3 ch. 39) plus the warp-shuffle
// step that came after them, for teaching and benchmarks; ptxkit_scan is
// the production path. Each step scans its block's share of in[0, n) in
// shared memory (or registers) and writes it to out; with `sums` it also
// writes the block's total to sums[blockIdx.x], and the host scans those
// and adds them back (ptxkit_scan_ladder_add) to scan arrays of any length:
//   ptxkit_scan_ladder<k>_<op>_<type>(const T *in, u64 n, T *out, T *sums, unsigned exclusive)
//   ptxkit_scan_ladder_add_<op>_<type>(T *out, u64 n, const T *sums, u64 per_block)
// Steps: 1 Hillis-Steele (double-buffered, BLOCK_SIZE elements per block,
// log n steps of n additions: O(n log n) work); 2 Blelloch up-sweep and
// down-sweep (2 x BLOCK_SIZE elements, O(n) work), with the seed's
// interleaved loads and its bank conflicts; 3 the same with
// CONFLICT_FREE_OFFSET padding and loads half a block apart; 4 warp
// shuffles: two elements per thread, __shfl_up_sync within each warp, then
// one warp scans the warps' totals. Every step works in place (in == out),
// for any n, and for any power-of-two block size from 32 to 1024
// (blockDim.x must equal BLOCK_SIZE).
// Injected: BLOCK_SIZE, LOAD_OP, ONLY_STEP (0: all), ONLY_OP / ONLY_TYPE.
#include "reduce_ops.cuh"
#include "scan_ladder_defaults.h"

#ifndef BLOCK_SIZE
#define BLOCK_SIZE SCAN_LADDER_DEFAULT_BLOCK
#endif
#ifndef ONLY_STEP
#define ONLY_STEP 0
#endif
#define SCAN_LADDER_WANT(step) (ONLY_STEP == 0 || ONLY_STEP == (step))
#define LOG_NUM_BANKS 5

#define REDUCE_BODY "scan_ladder_body.cuh"
#include "reduce_each.cuh"
