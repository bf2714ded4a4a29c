// Is compute-sanitizer's synccheck report on the counting
// cp.async.mbarrier.arrive ptxkit's doing? The same pattern through
// NVIDIA's own libcu++: cuda::memcpy_async onto a cuda::barrier, then
// arrive_and_wait. Build and run on the GPU machine:
//   nvcc -arch=sm_90 -o /tmp/libcu_barrier docs/notebook/scripts/synccheck_libcu.cu
//   compute-sanitizer --tool synccheck /tmp/libcu_barrier
//   cuobjdump -sass /tmp/libcu_barrier | grep -E "LDGSTS|ARRIVE"   (the counting form's SASS)
#include <cuda/barrier>
#include <cstdio>

#pragma nv_diag_suppress static_var_with_dynamic_init // the CUDA samples do the same

__global__ void rounds(const unsigned *in, unsigned *out, int n_rounds) {
    __shared__ unsigned slot[128];
    __shared__ cuda::barrier<cuda::thread_scope_block> bar;
    if (threadIdx.x == 0) init(&bar, blockDim.x);
    __syncthreads();
    unsigned sum = 0;
    for (int r = 0; r < n_rounds; r++) {
        cuda::memcpy_async(&slot[threadIdx.x], &in[r * 128 + threadIdx.x], sizeof(unsigned), bar);
        bar.arrive_and_wait();
        sum += slot[(threadIdx.x + 1) % 128];
        bar.arrive_and_wait(); // everyone has read before the next round overwrites
    }
    out[threadIdx.x] = sum;
}

int main() {
    const int n_rounds = 64;
    unsigned *in, *out, host[128];
    if (cudaMalloc(&in, n_rounds * 128 * 4) != cudaSuccess || cudaMalloc(&out, 128 * 4) != cudaSuccess) return 1;
    unsigned *h = new unsigned[n_rounds * 128];
    for (int i = 0; i < n_rounds * 128; i++) h[i] = i * 2654435761u;
    cudaMemcpy(in, h, n_rounds * 128 * 4, cudaMemcpyHostToDevice);
    rounds<<<1, 128>>>(in, out, n_rounds);
    cudaMemcpy(host, out, sizeof host, cudaMemcpyDeviceToHost);
    int wrong = 0;
    for (int t = 0; t < 128; t++) {
        unsigned want = 0;
        for (int r = 0; r < n_rounds; r++) want += h[r * 128 + (t + 1) % 128];
        wrong += host[t] != want;
    }
    printf("%d of 128 wrong (%s)\n", wrong, cudaGetErrorString(cudaGetLastError()));
    return wrong != 0;
}
