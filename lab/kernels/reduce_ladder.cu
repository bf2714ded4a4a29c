// Mark Harris's reduction ladder (NVIDIA, 2007), steps 1-7, then warp
// shuffles (8), redux.sync (9) and cooperative groups' tile reduce (10), for
// teaching and benchmarks (the lab's `ptxkit ladder reduce`); ptxkit_reduce
// is the production path. Each entry
//   reduce_ladder<k>(const T *in, u64 n, T *out)
// reduces its block's share of in[0, n) into out[blockIdx.x]; the host
// (lab/ladders.c) launches again on the partials until one value is left.
// Unlike the lecture code, every step is correct for any n and any
// power-of-two block size from 32 to 1024 (blockDim.x must equal
// BLOCK_SIZE). Steps 1-5 loop over blockDim.x as the lecture code does, so
// the compiler cannot unroll them; step 6 is where the compile-time block
// size comes in.
// Injected: BLOCK_SIZE, STEP (0: every step), LADDER_TILE (step 10's tile,
// 4..32, default 32), and LADDER_OP, LADDER_TYPE, LOAD_OP (ladder_ops.cuh).
#include "ladder_ops.cuh"

#ifndef BLOCK_SIZE
#define BLOCK_SIZE 256
#endif
#ifndef STEP
#define STEP 0
#endif
#define LADDER_WANT(step) (STEP == 0 || STEP == (step))
// Steps 5-7 read sdata[tid + 32] in their last warp; a 32-thread block pads
// its array with identities so that read stays inside it.
#define LADDER_SMEM (BLOCK_SIZE < 64 ? 64 : BLOCK_SIZE)

// Last warp of steps 5-7 through shared memory. The lecture relied on the 32
// lanes running in lockstep, which Volta's independent thread scheduling
// ended: each step now reads, waits for the warp (__syncwarp), writes, and
// waits again before the next read. volatile keeps every access a real
// shared-memory access. Called by all lanes of warp 0; lane 0 gets the result.
static __device__ __forceinline__ rT ladder_warp_tail(volatile rT *s, unsigned tid) {
    rT v = s[tid];
#pragma unroll
    for (int off = 32; off > 0; off >>= 1) {
        v = r_combine(v, (rT)s[tid + off]);
        __syncwarp();
        s[tid] = v;
        __syncwarp();
    }
    return v;
}

// Steps 6-7: the tree unrolled for the compile-time block size. sdata holds
// every thread's value (and, for 32 threads, 32 padding identities).
static __device__ __forceinline__ void ladder_unrolled_tree(rT *sdata, rT v, rT *out) {
    const unsigned tid = threadIdx.x;
#pragma unroll
    for (int s = BLOCK_SIZE / 2; s > 32; s >>= 1) {
        if (tid < s) sdata[tid] = v = r_combine(v, sdata[tid + s]);
        __syncthreads();
    }
    if (tid < 32) {
        v = ladder_warp_tail(sdata, tid);
        if (tid == 0) out[blockIdx.x] = v;
    }
}

// Steps 7-9: the grid-stride loop, two loads per trip as in step 4, loads
// of a warp still contiguous.
static __device__ __forceinline__ rT ladder_grid_stride(const rT *in, u64 n) {
    u64 i = (u64)blockIdx.x * (BLOCK_SIZE * 2) + threadIdx.x;
    const u64 grid_size = (u64)BLOCK_SIZE * 2 * gridDim.x;
    rT v = R_IDENTITY;
    while (i < n) {
        v = r_combine(v, rload1(in + i));
        if (i + BLOCK_SIZE < n) v = r_combine(v, rload1(in + i + BLOCK_SIZE));
        i += grid_size;
    }
    return v;
}

// Steps 8-9: warp results, then warp 0 combines them. warp_reduce gives lane
// 0 (at least) its warp's result.
#define LADDER_WARPS_THEN_BLOCK(warp_reduce)                                                      \
    do {                                                                                          \
        __shared__ rT warp_results[BLOCK_SIZE / 32];                                              \
        const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;                          \
        v = warp_reduce(v);                                                                       \
        if (BLOCK_SIZE > 32) {                                                                    \
            if (lane == 0) warp_results[warp] = v;                                                \
            __syncthreads();                                                                      \
            if (warp == 0) v = warp_reduce(lane < BLOCK_SIZE / 32 ? warp_results[lane] : R_IDENTITY); \
        }                                                                                         \
        if (threadIdx.x == 0) out[blockIdx.x] = v;                                                \
    } while (0)

#if LADDER_WANT(1)
// 1: interleaved addressing; tid % (2s) leaves most lanes of each warp idle
// (divergence), and % is slow.
extern "C" __global__ void __launch_bounds__(BLOCK_SIZE) reduce_ladder1(const rT *in, u64 n, rT *out) {
    __shared__ rT sdata[BLOCK_SIZE];
    const unsigned tid = threadIdx.x;
    const u64 i = (u64)blockIdx.x * blockDim.x + tid;
    sdata[tid] = i < n ? rload1(in + i) : R_IDENTITY;
    __syncthreads();
    for (unsigned s = 1; s < blockDim.x; s *= 2) {
        if (tid % (2 * s) == 0) sdata[tid] = r_combine(sdata[tid], sdata[tid + s]);
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = sdata[0];
}
#endif

#if LADDER_WANT(2)
// 2: interleaved addressing with a strided index: contiguous active lanes
// (no divergence) but 2-way, 4-way ... shared-memory bank conflicts.
extern "C" __global__ void __launch_bounds__(BLOCK_SIZE) reduce_ladder2(const rT *in, u64 n, rT *out) {
    __shared__ rT sdata[BLOCK_SIZE];
    const unsigned tid = threadIdx.x;
    const u64 i = (u64)blockIdx.x * blockDim.x + tid;
    sdata[tid] = i < n ? rload1(in + i) : R_IDENTITY;
    __syncthreads();
    for (unsigned s = 1; s < blockDim.x; s *= 2) {
        const unsigned index = 2 * s * tid;
        if (index < blockDim.x) sdata[index] = r_combine(sdata[index], sdata[index + s]);
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = sdata[0];
}
#endif

#if LADDER_WANT(3)
// 3: sequential addressing: conflict-free, but half the threads idle from
// the first step on.
extern "C" __global__ void __launch_bounds__(BLOCK_SIZE) reduce_ladder3(const rT *in, u64 n, rT *out) {
    __shared__ rT sdata[BLOCK_SIZE];
    const unsigned tid = threadIdx.x;
    const u64 i = (u64)blockIdx.x * blockDim.x + tid;
    sdata[tid] = i < n ? rload1(in + i) : R_IDENTITY;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) sdata[tid] = r_combine(sdata[tid], sdata[tid + s]);
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = sdata[0];
}
#endif

#if LADDER_WANT(4)
// 4: first add during the global load: each block takes 2 x blockDim elements.
extern "C" __global__ void __launch_bounds__(BLOCK_SIZE) reduce_ladder4(const rT *in, u64 n, rT *out) {
    __shared__ rT sdata[BLOCK_SIZE];
    const unsigned tid = threadIdx.x;
    const u64 i = (u64)blockIdx.x * (blockDim.x * 2) + tid;
    rT v = i < n ? rload1(in + i) : R_IDENTITY;
    if (i + blockDim.x < n) v = r_combine(v, rload1(in + i + blockDim.x));
    sdata[tid] = v;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) sdata[tid] = r_combine(sdata[tid], sdata[tid + s]);
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = sdata[0];
}
#endif

#if LADDER_WANT(5)
// 5: the last warp unrolled: no __syncthreads once 32 threads are left.
extern "C" __global__ void __launch_bounds__(BLOCK_SIZE) reduce_ladder5(const rT *in, u64 n, rT *out) {
    __shared__ rT sdata[LADDER_SMEM];
    const unsigned tid = threadIdx.x;
    const u64 i = (u64)blockIdx.x * (blockDim.x * 2) + tid;
    rT v = i < n ? rload1(in + i) : R_IDENTITY;
    if (i + blockDim.x < n) v = r_combine(v, rload1(in + i + blockDim.x));
    sdata[tid] = v;
    if (BLOCK_SIZE < 64) sdata[tid + 32] = R_IDENTITY;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 32; s >>= 1) {
        if (tid < s) sdata[tid] = r_combine(sdata[tid], sdata[tid + s]);
        __syncthreads();
    }
    if (tid < 32) {
        v = ladder_warp_tail(sdata, tid);
        if (tid == 0) out[blockIdx.x] = v;
    }
}
#endif

#if LADDER_WANT(6)
// 6: completely unrolled for the compile-time BLOCK_SIZE (the lecture's
// template parameter): no loop counters, no tests on blockDim.
extern "C" __global__ void __launch_bounds__(BLOCK_SIZE) reduce_ladder6(const rT *in, u64 n, rT *out) {
    __shared__ rT sdata[LADDER_SMEM];
    const unsigned tid = threadIdx.x;
    const u64 i = (u64)blockIdx.x * (BLOCK_SIZE * 2) + tid;
    rT v = i < n ? rload1(in + i) : R_IDENTITY;
    if (i + BLOCK_SIZE < n) v = r_combine(v, rload1(in + i + BLOCK_SIZE));
    sdata[tid] = v;
    if (BLOCK_SIZE < 64) sdata[tid + 32] = R_IDENTITY;
    __syncthreads();
    ladder_unrolled_tree(sdata, v, out);
}
#endif

#if LADDER_WANT(7)
// 7: multiple elements per thread: a fixed grid (the host sizes it to fill
// the GPU once) loops over the input, so the tree is paid once per block.
extern "C" __global__ void __launch_bounds__(BLOCK_SIZE) reduce_ladder7(const rT *in, u64 n, rT *out) {
    __shared__ rT sdata[LADDER_SMEM];
    const unsigned tid = threadIdx.x;
    rT v = ladder_grid_stride(in, n);
    sdata[tid] = v;
    if (BLOCK_SIZE < 64) sdata[tid + 32] = R_IDENTITY;
    __syncthreads();
    ladder_unrolled_tree(sdata, v, out);
}
#endif

static __device__ __forceinline__ rT ladder_shfl_down(rT v) {
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) v = r_combine(v, __shfl_down_sync(0xffffffffu, v, off));
    return v;
}

#if LADDER_WANT(8)
// 8: warp shuffles replace shared memory inside each warp; shared memory
// only carries one value per warp.
extern "C" __global__ void __launch_bounds__(BLOCK_SIZE) reduce_ladder8(const rT *in, u64 n, rT *out) {
    rT v = ladder_grid_stride(in, n);
    LADDER_WARPS_THEN_BLOCK(ladder_shfl_down);
}
#endif

#if LADDER_WANT(9) && R_HAS_REDUX
// 9: one redux.sync instruction per warp (sm_80 and newer, 32-bit integers).
// The host never launches it on older GPUs; there the shuffle stands in so
// the module still compiles.
static __device__ __forceinline__ rT ladder_redux(rT v) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    return R_REDUX(0xffffffffu, v);
#else
    return ladder_shfl_down(v);
#endif
}
extern "C" __global__ void __launch_bounds__(BLOCK_SIZE) reduce_ladder9(const rT *in, u64 n, rT *out) {
    rT v = ladder_grid_stride(in, n);
    LADDER_WARPS_THEN_BLOCK(ladder_redux);
}
#endif

#if LADDER_WANT(10)
// 10: cooperative groups' cg::reduce(cg::tiled_partition<LADDER_TILE>(block),
// v, op), written out: NVRTC ships no <cooperative_groups.h> (and its reduce
// needs libcu++ from the toolkit's include directory). Each tile of
// LADDER_TILE lanes (4..32) reduces on its own lanes' mask, so every lane of
// the tile gets the result as cg::reduce gives it: one redux.sync where
// the type and GPU have it (cg::reduce's choice there), else a butterfly of
// shfl.xor within the tile. Tile leaders then meet in shared memory and the
// first tile reduces their results the same way.
#ifndef LADDER_TILE
#define LADDER_TILE 32
#endif
static_assert(LADDER_TILE >= 4 && LADDER_TILE <= 32 && (LADDER_TILE & (LADDER_TILE - 1)) == 0 &&
                  LADDER_TILE <= BLOCK_SIZE,
              "LADDER_TILE is a power of two in 4..32, at most the block");
static __device__ __forceinline__ rT ladder_tile_reduce(rT v) {
    const unsigned lane = threadIdx.x & 31;
    const unsigned mask =
        LADDER_TILE == 32 ? 0xffffffffu : ((1u << LADDER_TILE) - 1u) << (lane & ~(unsigned)(LADDER_TILE - 1));
#if R_HAS_REDUX && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    return R_REDUX(mask, v);
#else
    (void)lane;
#pragma unroll
    for (int off = LADDER_TILE / 2; off > 0; off >>= 1) v = r_combine(v, __shfl_xor_sync(mask, v, off, LADDER_TILE));
    return v;
#endif
}
extern "C" __global__ void __launch_bounds__(BLOCK_SIZE) reduce_ladder10(const rT *in, u64 n, rT *out) {
    rT v = ladder_tile_reduce(ladder_grid_stride(in, n));
    if (BLOCK_SIZE > LADDER_TILE) {
        __shared__ rT tile_results[BLOCK_SIZE / LADDER_TILE];
        if (threadIdx.x % LADDER_TILE == 0) tile_results[threadIdx.x / LADDER_TILE] = v;
        __syncthreads();
        if (threadIdx.x < LADDER_TILE) {
            v = R_IDENTITY;
            for (unsigned t = threadIdx.x; t < BLOCK_SIZE / LADDER_TILE; t += LADDER_TILE)
                v = r_combine(v, tile_results[t]);
            v = ladder_tile_reduce(v);
        }
    }
    if (threadIdx.x == 0) out[blockIdx.x] = v;
}
#endif
