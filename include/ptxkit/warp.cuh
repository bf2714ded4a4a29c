// Warp and block reductions and a warp scan for user kernels, included as
// <ptxkit/warp.cuh>. Operators are small function objects so that one
// template serves sum, min and max of any arithmetic type.
#pragma once

namespace ptxkit {

struct Sum {
    template <typename T> __device__ __forceinline__ T operator()(T a, T b) const { return a + b; }
};
struct Min {
    template <typename T> __device__ __forceinline__ T operator()(T a, T b) const { return b < a ? b : a; }
};
struct Max {
    template <typename T> __device__ __forceinline__ T operator()(T a, T b) const { return a < b ? b : a; }
};

// The reduction of v over the 32 lanes of a full warp, in every lane
// (butterfly: log2(32) shuffles, no shared memory).
template <typename T, typename Op = Sum> __device__ __forceinline__ T warp_reduce(T v, Op op = Op()) {
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) v = op(v, __shfl_xor_sync(0xffffffffu, v, offset));
    return v;
}

// Inclusive scan of v over a full warp (Hillis-Steele with __shfl_up_sync).
template <typename T, typename Op = Sum> __device__ __forceinline__ T warp_inclusive_scan(T v, Op op = Op()) {
    const int lane = threadIdx.x & 31;
#pragma unroll
    for (int offset = 1; offset < 32; offset <<= 1) {
        T up = __shfl_up_sync(0xffffffffu, v, offset);
        if (lane >= offset) v = op(v, up);
    }
    return v;
}

// The reduction of v over a 1-D block of BLOCK threads (a multiple of 32),
// valid in thread 0. Uses BLOCK / 32 elements of shared memory and two
// __syncthreads; every thread of the block must call it, and it may be
// called again right away (the second barrier protects the partials).
template <int BLOCK, typename T, typename Op = Sum> __device__ __forceinline__ T block_reduce(T v, Op op = Op()) {
    static_assert(BLOCK % 32 == 0 && BLOCK <= 1024, "BLOCK must be a multiple of 32, at most 1024");
    __shared__ T partial[BLOCK / 32];
    v = warp_reduce(v, op);
    if ((threadIdx.x & 31) == 0) partial[threadIdx.x >> 5] = v;
    __syncthreads();
    if (threadIdx.x == 0)  // at most 32 partials: a short loop beats a second shuffle tree
        for (int w = 1; w < BLOCK / 32; w++) v = op(v, partial[w]);
    __syncthreads();
    return v;
}

} // namespace ptxkit
