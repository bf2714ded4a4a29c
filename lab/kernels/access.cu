// Global-memory access patterns for the memory lab: how a warp's addresses
// turn into memory transactions. Every kernel reads through the ld_* helpers
// with the injected load cache operator (LOAD_OP 0..8, see
// ptxkit_load_hint.cuh) and writes something a CPU reference can check.
//
// Work layout shared by all patterns: the grid has T = gridDim.x *
// BLOCK_SIZE threads; thread t handles the pattern's elements e = t + j*T for
// j < ITEMS and e < n. Consecutive threads of a warp therefore take
// consecutive elements (the layout the seeds' coalescing rules talk about),
// and each thread has ITEMS independent loads in flight.
//
// Each thread folds the words it read into acc = acc * FOLD_MUL + word (in
// its own order), and the block writes either one word per warp (the sum of
// its lanes' acc; FOLD_WARP=1, so that stores are a negligible share of the
// traffic) or one word per thread (FOLD_WARP=0, the strictest check).
//
// Injected: BLOCK_SIZE, LOAD_OP, ITEMS, FOLD_WARP, WINDOW.
#include <ptxkit/load_hint.cuh>

#ifndef BLOCK_SIZE
#define BLOCK_SIZE 256
#endif
#ifndef ITEMS
#define ITEMS 4
#endif
#ifndef FOLD_WARP
#define FOLD_WARP 1
#endif
#ifndef WINDOW
#define WINDOW 9
#endif
#define FOLD_MUL 0x9E3779B1u

#if BLOCK_SIZE % 32 != 0
#error "BLOCK_SIZE must be a multiple of the warp size"
#endif

typedef unsigned long long u64;

__device__ __forceinline__ unsigned fold(unsigned acc, unsigned word) { return acc * FOLD_MUL + word; }

__device__ __forceinline__ void write_result(unsigned *out, unsigned acc) {
    u64 t = (u64)blockIdx.x * BLOCK_SIZE + threadIdx.x;
#if FOLD_WARP
    #pragma unroll
    for (int d = 16; d > 0; d /= 2) acc += __shfl_xor_sync(0xffffffffu, acc, d);
    if ((threadIdx.x & 31) == 0) out[t / 32] = acc;
#else
    out[t] = acc;
#endif
}

// Loads are issued for all j before any is folded, so that ITEMS requests
// are in flight; ADDR(e) is the pattern's word index of element e.
#define ACCESS_BODY(LOAD)                                                \
    u64 T = (u64)gridDim.x * BLOCK_SIZE;                                 \
    u64 t = (u64)blockIdx.x * BLOCK_SIZE + threadIdx.x;                  \
    unsigned v[ITEMS];                                                   \
    _Pragma("unroll") for (int j = 0; j < ITEMS; j++) {                  \
        u64 e = t + (u64)j * T;                                          \
        v[j] = e < n ? LOAD : 0u;                                        \
    }                                                                    \
    unsigned acc = 0;                                                    \
    _Pragma("unroll") for (int j = 0; j < ITEMS; j++)                    \
        if (t + (u64)j * T < n) acc = fold(acc, v[j]);                   \
    write_result(out, acc);

// Misaligned start: element e reads word e + offset (offset 0: coalesced).
extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)
access_offset(unsigned *out, const unsigned *in, u64 n, u64 offset) {
    ACCESS_BODY(ptxkit::ld_u32(in + e + offset))
}

// Strided: element e reads word e * stride.
extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)
access_stride(unsigned *out, const unsigned *in, u64 n, u64 stride) {
    ACCESS_BODY(ptxkit::ld_u32(in + e * stride))
}

// Random gather through an index (a permutation from access_make_index):
// the index is read coalesced, the data scattered.
extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)
access_gather(unsigned *out, const unsigned *in, const unsigned *index, u64 n) {
    ACCESS_BODY(ptxkit::ld_u32(in + ptxkit::ld_u32(index + e)))
}

// Broadcast: the 32 lanes of a warp read the same word (e / 32).
extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)
access_broadcast(unsigned *out, const unsigned *in, u64 n) {
    ACCESS_BODY(ptxkit::ld_u32(in + (e >> 5)))
}

// Coalesced vectors: element e is the 8-byte (uint2) or 16-byte (uint4)
// vector e; its words are folded in order x, y, z, w.
extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)
access_vec8(unsigned *out, const uint2 *in, u64 n) {
    u64 T = (u64)gridDim.x * BLOCK_SIZE;
    u64 t = (u64)blockIdx.x * BLOCK_SIZE + threadIdx.x;
    uint2 v[ITEMS];
    #pragma unroll
    for (int j = 0; j < ITEMS; j++) {
        u64 e = t + (u64)j * T;
        v[j] = e < n ? ptxkit::ld_v2u32(in + e) : make_uint2(0, 0);
    }
    unsigned acc = 0;
    #pragma unroll
    for (int j = 0; j < ITEMS; j++)
        if (t + (u64)j * T < n) acc = fold(fold(acc, v[j].x), v[j].y);
    write_result(out, acc);
}

extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)
access_vec16(unsigned *out, const uint4 *in, u64 n) {
    u64 T = (u64)gridDim.x * BLOCK_SIZE;
    u64 t = (u64)blockIdx.x * BLOCK_SIZE + threadIdx.x;
    uint4 v[ITEMS];
    #pragma unroll
    for (int j = 0; j < ITEMS; j++) {
        u64 e = t + (u64)j * T;
        v[j] = e < n ? ptxkit::ld_v4u32(in + e) : make_uint4(0, 0, 0, 0);
    }
    unsigned acc = 0;
    #pragma unroll
    for (int j = 0; j < ITEMS; j++)
        if (t + (u64)j * T < n) acc = fold(fold(fold(fold(acc, v[j].x), v[j].y), v[j].z), v[j].w);
    write_result(out, acc);
}

// Gather with locality: element e reads the WINDOW words e .. e+WINDOW-1,
// so neighbouring lanes and neighbouring loads re-read the same sectors.
// Whether those re-reads hit L1 is what the load operator decides.
extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)
access_window(unsigned *out, const unsigned *in, u64 n) {
    u64 T = (u64)gridDim.x * BLOCK_SIZE;
    u64 t = (u64)blockIdx.x * BLOCK_SIZE + threadIdx.x;
    unsigned acc = 0;
    #pragma unroll
    for (int j = 0; j < ITEMS; j++) {
        u64 e = t + (u64)j * T;
        if (e < n) {
            unsigned w[WINDOW];
            #pragma unroll
            for (int k = 0; k < WINDOW; k++) w[k] = ptxkit::ld_u32(in + e + k);
            #pragma unroll
            for (int k = 0; k < WINDOW; k++) acc = fold(acc, w[k]);
        }
    }
    write_result(out, acc);
}

// A pseudo-random permutation of [0, 2^bits) evaluated at e: odd multiplies
// and right xor-shifts are each bijections on bits-wide integers. The CPU
// side (lab/memlab.c) has the same function to check results.
__device__ __forceinline__ unsigned permute(unsigned e, unsigned bits, unsigned seed) {
    unsigned mask = bits >= 32 ? 0xffffffffu : (1u << bits) - 1u;
    unsigned s1 = bits / 2 > 0 ? bits / 2 : 1, s2 = bits / 3 > 0 ? bits / 3 : 1;
    unsigned x = (e * 0x9E3779B1u + seed) & mask;
    x ^= x >> s1;
    x = (x * 0x85EBCA6Bu) & mask;
    x ^= x >> s2;
    x = (x * 0xC2B2AE35u + 0x27D4EB2Fu) & mask;
    x ^= x >> s1;
    return x;
}

// Writes index[e] = permute(e) for e < n (no global loads).
extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)
access_make_index(unsigned *index, u64 n, unsigned bits, unsigned seed) {
    for (u64 e = (u64)blockIdx.x * BLOCK_SIZE + threadIdx.x; e < n; e += (u64)gridDim.x * BLOCK_SIZE)
        index[e] = permute((unsigned)e, bits, seed);
}
