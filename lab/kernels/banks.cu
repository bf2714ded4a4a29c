// Shared-memory bank conflicts: lane l of every warp reads element
// l * stride of a shared array of 1-, 4- or 8-byte words, UNROLL * iters
// times, and the block measures the cycles that took with clock64().
// stride 0 is the broadcast case (every lane reads the same word); strides
// 32 and 33 are a column of a [32][32] tile and of the padded [32][33] one.
//
// One block of BLOCK_SIZE threads (default 1024: 32 warps) keeps the SM's
// shared-memory pipe busy, so cycles / (warps * accesses) is the pipe's
// time per warp-wide access: 1 cycle per 128-byte wavefront when there is
// no conflict, degree times that with a degree-way conflict.
//
// The loads are volatile so that none is merged or hoisted out of the loop,
// and their sum is written to sink (checked by the tests) so that none is
// dead. The closing __syncthreads_or needs every thread's sum, so the second
// clock read waits for every load to have returned.
// Injected: BLOCK_SIZE, UNROLL, SMEM_BYTES.
#ifndef BLOCK_SIZE
#define BLOCK_SIZE 1024
#endif
#ifndef UNROLL
#define UNROLL 8
#endif
#ifndef SMEM_BYTES
#define SMEM_BYTES 16384   // lane 31 at stride 64 of 8-byte words: 15880 bytes
#endif
#define BANKS_MAGIC 0x5A5A5A5Au

typedef unsigned long long u64;

// The initial content of shared word i (4-byte words); the CPU reference in
// lab/memlab.c computes the same.
__device__ __forceinline__ unsigned banks_word(unsigned i) { return (i + 1u) * 2654435761u ^ (i >> 3); }

#define DEFINE_BANKS(NAME, T, ACC)                                                     \
    extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)                           \
    NAME(u64 *cycles, u64 *sink, int stride, int iters) {                              \
        __shared__ unsigned words[SMEM_BYTES / 4];                                     \
        for (int i = threadIdx.x; i < SMEM_BYTES / 4; i += BLOCK_SIZE) words[i] = banks_word(i); \
        const volatile T *p = (const volatile T *)words + (threadIdx.x & 31) * stride; \
        ACC acc = 0;                                                                   \
        __syncthreads();                                                               \
        long long t0 = clock64();                                                      \
        for (int it = 0; it < iters; it++) {                                           \
            _Pragma("unroll") for (int u = 0; u < UNROLL; u++) acc += p[0];            \
        }                                                                              \
        int any = __syncthreads_or(acc == (ACC)BANKS_MAGIC);                           \
        long long t1 = clock64();                                                      \
        if (threadIdx.x == 0) cycles[blockIdx.x] = (u64)(t1 - t0);                     \
        sink[(u64)blockIdx.x * BLOCK_SIZE + threadIdx.x] = (u64)acc + (u64)any;        \
    }

DEFINE_BANKS(banks_u8, unsigned char, unsigned)
DEFINE_BANKS(banks_u32, unsigned, unsigned)
DEFINE_BANKS(banks_u64, unsigned long long, unsigned long long)
