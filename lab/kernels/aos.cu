// Structures of non-native size: the seeds' float3 case. Every kernel does
// the same work, p' = p + (2, 2, 2) on n points, with the data laid out four
// ways:
//   aos_naive    float3 array of structures (12-byte elements): each of the
//                three loads of a warp spans 384 bytes, 3x the sectors used
//   aos_soa      structure of arrays: three coalesced streams
//   aos_staged   the float3 array read and written as plain coalesced words
//                through shared memory (stride-3 shared accesses, which are
//                conflict-free because 3 is odd)
//   aos_aligned  a 16-byte aligned struct {x, y, z, pad}: one 16-byte load
//                and store per point, a third more bytes moved
// Injected: BLOCK_SIZE, LOAD_OP (ptxkit_load_hint.cuh, 0..8).
#include <ptxkit/load_hint.cuh>

#ifndef BLOCK_SIZE
#define BLOCK_SIZE 256
#endif

typedef unsigned long long u64;

struct point3 {
    float x, y, z;
};
struct __align__(16) point4 {
    float x, y, z, pad;
};

#define GRID_STRIDE_LOOP(i, n) \
    for (u64 i = (u64)blockIdx.x * BLOCK_SIZE + threadIdx.x; i < (n); i += (u64)gridDim.x * BLOCK_SIZE)

extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)
aos_naive(point3 *out, const point3 *in, u64 n) {
    GRID_STRIDE_LOOP(i, n) {
        point3 p;
        p.x = ptxkit::ld_f32(&in[i].x) + 2.0f;
        p.y = ptxkit::ld_f32(&in[i].y) + 2.0f;
        p.z = ptxkit::ld_f32(&in[i].z) + 2.0f;
        out[i] = p;
    }
}

extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)
aos_soa(float *out_x, float *out_y, float *out_z, const float *in_x, const float *in_y, const float *in_z,
        u64 n) {
    GRID_STRIDE_LOOP(i, n) {
        float x = ptxkit::ld_f32(in_x + i), y = ptxkit::ld_f32(in_y + i), z = ptxkit::ld_f32(in_z + i);
        out_x[i] = x + 2.0f;
        out_y[i] = y + 2.0f;
        out_z[i] = z + 2.0f;
    }
}

// The points are taken BLOCK_SIZE at a time: the block moves their
// 3 * BLOCK_SIZE floats between global and shared memory with consecutive
// threads on consecutive words, and each thread works on its point in
// shared memory. in and out are the point arrays viewed as floats.
extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)
aos_staged(float *out, const float *in, u64 n) {
    __shared__ float stage[3 * BLOCK_SIZE];
    u64 words = 3 * n;
    u64 chunks = (n + BLOCK_SIZE - 1) / BLOCK_SIZE;
    for (u64 c = blockIdx.x; c < chunks; c += gridDim.x) {
        u64 base = c * 3 * BLOCK_SIZE;
        #pragma unroll
        for (int k = 0; k < 3; k++) {
            u64 g = base + k * BLOCK_SIZE + threadIdx.x;
            if (g < words) stage[k * BLOCK_SIZE + threadIdx.x] = ptxkit::ld_f32(in + g);
        }
        __syncthreads();
        if (c * BLOCK_SIZE + threadIdx.x < n) {
            float *p = stage + 3 * threadIdx.x;
            p[0] += 2.0f;
            p[1] += 2.0f;
            p[2] += 2.0f;
        }
        __syncthreads();
        #pragma unroll
        for (int k = 0; k < 3; k++) {
            u64 g = base + k * BLOCK_SIZE + threadIdx.x;
            if (g < words) out[g] = stage[k * BLOCK_SIZE + threadIdx.x];
        }
        __syncthreads();   // the next chunk overwrites the stage
    }
}

extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)
aos_aligned(point4 *out, const point4 *in, u64 n) {
    GRID_STRIDE_LOOP(i, n) {
        float4 v = ptxkit::ld_v4f32((const float4 *)(in + i));
        point4 p;
        p.x = v.x + 2.0f;
        p.y = v.y + 2.0f;
        p.z = v.z + 2.0f;
        p.pad = v.w;
        out[i] = p;
    }
}
