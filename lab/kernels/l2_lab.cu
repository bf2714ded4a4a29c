// The L2 residency lab of `ptxkit bench l2` (an application's program to
// the library: compiled with ptxkit_program_create, launched with
// ptxkit_kernel_launch on a stream whose access policy window the command sets).
//
// l2_updates: the lecture's experiment. Even threads add 1 to random words
// of `hot` (meant to persist in L2), odd threads to random words of `cold`
// (far larger than L2), ITERS updates each; atomicAdd, so the host can
// check that every update landed (the array totals grow by exactly the
// number of updates).
//
// l2_produce / l2_consume: a producer writes `p` (hash of the index) and,
// in the same launch, streams a large unrelated copy that would evict `p`
// from L2; the consumer then sums `p`. With `p` in a persisting window of
// the producer's launch the consumer reads it from L2.
// Injected: ITERS (l2_updates).
#ifndef ITERS
#define ITERS 64
#endif

typedef unsigned long long u64;

__device__ __forceinline__ unsigned mix(unsigned x) {
    x *= 0x9e3779b1u;
    x ^= x >> 15;
    x *= 0x85ebca77u;
    x ^= x >> 13;
    return x;
}

// A word index in [0, n) from a hash: the high half of hash * n.
__device__ __forceinline__ unsigned pick(unsigned h, unsigned n) { return (unsigned)(((u64)h * n) >> 32); }

extern "C" __global__ void l2_updates(unsigned *hot, unsigned hot_words, unsigned *cold, unsigned cold_words,
                                      unsigned salt) {
    const unsigned tid = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned *a = tid & 1 ? cold : hot;
    const unsigned n = tid & 1 ? cold_words : hot_words;
    unsigned h = mix(tid ^ salt);
#pragma unroll 4
    for (int i = 0; i < ITERS; i++) {
        h = mix(h + (unsigned)i);
        atomicAdd(a + pick(h, n), 1u);
    }
}

extern "C" __global__ void l2_produce(unsigned *p, unsigned long long p_words, const uint4 *big_in, uint4 *big_out,
                                      unsigned long long big_vecs) {
    const u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < big_vecs; i += stride) big_out[i] = big_in[i];
    for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < p_words; i += stride) p[i] = mix((unsigned)i);
}

extern "C" __global__ void l2_consume(const uint4 *p, unsigned long long p_vecs, unsigned *sum) {
    unsigned acc = 0;
    for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < p_vecs; i += (u64)gridDim.x * blockDim.x) {
        uint4 v = p[i];
        acc += v.x + v.y + v.z + v.w;
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, o);
    if ((threadIdx.x & 31) == 0) atomicAdd(sum, acc);
}
