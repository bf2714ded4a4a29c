// The asynchronous-copy lab of `ptxkit bench async` (an application's
// program to the library: the command compiles it with
// ptxkit_program_create and launches it with ptxkit_kernel_launch).
//
// async_copy: each block walks tiles of TILE_BYTES of a large array
// (grid-stride) and brings each one into shared memory by
//   MODE 0  synchronous copy: loads into registers, stores to shared
//   MODE 1  cp.async (4 bytes .ca, 16 bytes .cg) in a ring of STAGES
//           buffers: STAGES 1 is the lecture's one-stage copy (issue,
//           wait, use), more stages keep STAGES - 1 tiles in flight
//   MODE 2  cp.async.bulk (sm_90) of the whole tile by one thread onto an
//           mbarrier transaction count, in the same ring of STAGES
// then consumes it: every thread folds ITEMS elements of ELEM bytes that
// other threads copied into a sum, written to sums[] (the host checks the
// total, so no copy can be optimized away). Thread 0 reads clock64 before
// the first tile and after the last: cycles[blockIdx.x].
// Injected: BLOCK_SIZE, MODE, STAGES, ELEM (4 or 16), TILE_BYTES (a
// multiple of BLOCK_SIZE * ELEM). Dynamic shared memory: STAGES *
// TILE_BYTES, plus 8 bytes per stage for the bulk barriers.
#include <ptxkit/async.cuh>

#ifndef BLOCK_SIZE
#define BLOCK_SIZE 256
#endif
#ifndef MODE
#define MODE 1
#endif
#ifndef STAGES
#define STAGES 1
#endif
#ifndef ELEM
#define ELEM 16
#endif
#ifndef TILE_BYTES
#define TILE_BYTES 8192
#endif
#define ITEMS (TILE_BYTES / (BLOCK_SIZE * ELEM))
#if ITEMS * BLOCK_SIZE * ELEM != TILE_BYTES || ITEMS < 1
#error "TILE_BYTES must be a positive multiple of BLOCK_SIZE * ELEM"
#endif
#if MODE == 0 && STAGES != 1
#error "the synchronous copy has one buffer"
#endif

typedef unsigned long long u64;

#if ELEM == 16
typedef uint4 elem_t;
__device__ __forceinline__ unsigned fold(uint4 v) { return v.x ^ (v.y + v.z) ^ v.w; }
#else
typedef unsigned elem_t;
__device__ __forceinline__ unsigned fold(unsigned v) { return v; }
#endif

// Thread t reads the elements t + 1, t + 1 + BLOCK_SIZE, ... of the tile:
// the neighbour's copies, so each tile must be complete block-wide.
__device__ __forceinline__ unsigned consume(const elem_t *tile, unsigned acc) {
#pragma unroll
    for (int k = 0; k < ITEMS; k++) acc += fold(tile[(threadIdx.x + 1 + k * BLOCK_SIZE) % (ITEMS * BLOCK_SIZE)]);
    return acc;
}

#if MODE == 1
__device__ __forceinline__ void issue(elem_t *buf, const elem_t *src) {
#pragma unroll
    for (int k = 0; k < ITEMS; k++) {
#if ELEM == 16
        ptxkit::cp_async_cg16(buf + k * BLOCK_SIZE + threadIdx.x, src + k * BLOCK_SIZE + threadIdx.x);
#else
        ptxkit::cp_async_ca<4>(buf + k * BLOCK_SIZE + threadIdx.x, src + k * BLOCK_SIZE + threadIdx.x);
#endif
    }
}
#endif

extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)
async_copy(const elem_t *in, u64 tiles, unsigned *sums, u64 *cycles) {
    extern __shared__ __align__(128) unsigned char smem[];
    elem_t *buf = (elem_t *)smem;
    const unsigned per_tile = ITEMS * BLOCK_SIZE;
    unsigned acc = 0;
    __syncthreads();
    const u64 start = clock64();
#if MODE == 0
    for (u64 t = blockIdx.x; t < tiles; t += gridDim.x) {
        const elem_t *src = in + t * per_tile;
        elem_t r[ITEMS];
#pragma unroll
        for (int k = 0; k < ITEMS; k++) r[k] = src[k * BLOCK_SIZE + threadIdx.x];
#pragma unroll
        for (int k = 0; k < ITEMS; k++) buf[k * BLOCK_SIZE + threadIdx.x] = r[k];
        __syncthreads();
        acc = consume(buf, acc);
        __syncthreads();
    }
#elif MODE == 1
    const u64 stride = gridDim.x;
    u64 tile = blockIdx.x;
    for (int s = 0; s < STAGES - 1; s++) {
        if (tile + s * stride < tiles) issue(buf + s * per_tile, in + (tile + s * stride) * per_tile);
        ptxkit::cp_async_commit();
    }
    for (int it = 0; tile < tiles; it++, tile += stride) {
        const u64 ahead = tile + (u64)(STAGES - 1) * stride;
        if (ahead < tiles) issue(buf + ((it + STAGES - 1) % STAGES) * per_tile, in + ahead * per_tile);
        ptxkit::cp_async_commit();
        ptxkit::cp_async_wait<STAGES - 1>();
        __syncthreads();
        acc = consume(buf + (it % STAGES) * per_tile, acc);
        __syncthreads();
    }
#elif MODE == 2 && PTXKIT_HAS_BULK_COPY
    unsigned long long *full = (unsigned long long *)(smem + STAGES * TILE_BYTES);
    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; s++) ptxkit::mbarrier_init(&full[s], 1);
        ptxkit::fence_mbarrier_init();
    }
    __syncthreads();
    const u64 stride = gridDim.x;
    u64 tile = blockIdx.x;
    if (threadIdx.x == 0)
        for (int s = 0; s < STAGES - 1; s++)
            if (tile + s * stride < tiles) {
                ptxkit::mbarrier_arrive_expect_tx(&full[s], TILE_BYTES);
                ptxkit::bulk_copy_g2s(buf + s * per_tile, in + (tile + s * stride) * per_tile, TILE_BYTES, &full[s]);
            }
    for (int it = 0; tile < tiles; it++, tile += stride) {
        const u64 ahead = tile + (u64)(STAGES - 1) * stride;
        const int next = (it + STAGES - 1) % STAGES;
        if (threadIdx.x == 0 && ahead < tiles) {
            ptxkit::mbarrier_arrive_expect_tx(&full[next], TILE_BYTES);
            ptxkit::bulk_copy_g2s(buf + next * per_tile, in + ahead * per_tile, TILE_BYTES, &full[next]);
        }
        ptxkit::mbarrier_wait_parity(&full[it % STAGES], (it / STAGES) & 1);
        acc = consume(buf + (it % STAGES) * per_tile, acc);
        // the buffer is refilled by the next iteration's bulk copy, another
        // proxy: the reads are fenced before the barrier that hands it over
        ptxkit::fence_proxy_async_shared();
        __syncthreads();
    }
    if (threadIdx.x == 0)
        for (int s = 0; s < STAGES; s++) ptxkit::mbarrier_inval(&full[s]);
#else
#error "MODE is 0 (sync), 1 (cp.async) or 2 (bulk, sm_90)"
#endif
    __syncthreads();
    if (threadIdx.x == 0) cycles[blockIdx.x] = clock64() - start;
    sums[blockIdx.x * BLOCK_SIZE + threadIdx.x] = acc;
}

// ---- warp reductions: shuffle fan-in against redux.sync -----------------
// Every warp runs a dependent chain of REPS reductions (each input depends
// on the last result, so the chain measures latency), OP: 0 add, 1 min,
// 2 max, 3 and, 4 or, 5 xor on 32-bit integers; 6 float max through the
// order-preserving integer image of a float; 7 float sum in 16.16 fixed
// point (what an integer-only redux can do for floats). WAY 0: shuffle
// fan-in (5 __shfl_xor_sync steps), 1: redux.sync (__reduce_*_sync), 2 (OP
// 6 and 7 only): the float done in float with shuffles. Thread 0 of each
// warp writes the warp's clock64 cycles; every lane's final value goes to
// out[] (the host checks lane agreement and a CPU replay of the chain).
#ifndef OP
#define OP 0
#endif
#ifndef WAY
#define WAY 0
#endif
#ifndef REPS
#define REPS 1024
#endif

__device__ __forceinline__ unsigned combine(unsigned a, unsigned b) {
#if OP == 0 || OP == 7
    return a + b;
#elif OP == 1
    return (unsigned)min((int)a, (int)b);
#elif OP == 2 || OP == 6
    return (unsigned)max((int)a, (int)b);
#elif OP == 3
    return a & b;
#elif OP == 4
    return a | b;
#else
    return a ^ b;
#endif
}

__device__ __forceinline__ unsigned reduce_int(unsigned v) {
#if WAY == 0
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v = combine(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
#elif OP == 0 || OP == 7
    return __reduce_add_sync(0xffffffffu, v);
#elif OP == 1
    return (unsigned)__reduce_min_sync(0xffffffffu, (int)v);
#elif OP == 2 || OP == 6
    return (unsigned)__reduce_max_sync(0xffffffffu, (int)v);
#elif OP == 3
    return __reduce_and_sync(0xffffffffu, v);
#elif OP == 4
    return __reduce_or_sync(0xffffffffu, v);
#else
    return __reduce_xor_sync(0xffffffffu, v);
#endif
}

// A float's bits as an int that orders like the float (negative floats
// have their magnitude bits flipped), and back.
__device__ __forceinline__ int float_key(float f) {
    int i = __float_as_int(f);
    return i >= 0 ? i : i ^ 0x7fffffff;
}
__device__ __forceinline__ float key_float(int k) { return __int_as_float(k >= 0 ? k : k ^ 0x7fffffff); }

extern "C" __global__ void redux_chain(const unsigned *seed, unsigned *out, u64 *cycles) {
    const unsigned lane = threadIdx.x & 31, warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    unsigned v = seed[blockIdx.x * blockDim.x + threadIdx.x];
    __syncwarp();
    const u64 start = clock64();
#if OP < 6
    for (int r = 0; r < REPS; r++) v = reduce_int(v ^ (lane * 0x9e3779b9u + (unsigned)r)) + lane;
#elif OP == 6
    // inputs in [-1, 1): the low 24 bits of the chain scaled
    float f = 0.0f;
    for (int r = 0; r < REPS; r++) {
        float x = (float)(int)((v ^ (lane * 0x9e3779b9u + (unsigned)r)) & 0xffffffu) * (1.0f / 8388608.0f) - 1.0f;
#if WAY == 2
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, o));
        f = x;
#else
        f = key_float((int)reduce_int((unsigned)float_key(x)));
#endif
        v = __float_as_uint(f) + lane;
    }
#else
    // sum of inputs in [0, 1) with 16 fraction bits: exact in 16.16 fixed
    // point and in float (32 x 2^16 < 2^24), so both ways agree
    float f = 0.0f;
    for (int r = 0; r < REPS; r++) {
        unsigned fixed = (v ^ (lane * 0x9e3779b9u + (unsigned)r)) & 0xffffu;
#if WAY == 2
        float x = (float)fixed * (1.0f / 65536.0f);
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) x += __shfl_xor_sync(0xffffffffu, x, o);
        f = x;
#else
        f = (float)reduce_int(fixed) * (1.0f / 65536.0f);
#endif
        v = __float_as_uint(f) + lane;
    }
#endif
    __syncwarp();
    const u64 stop = clock64();
    if (lane == 0) cycles[warp] = stop - start;
    out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}
