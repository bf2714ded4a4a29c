// Graph replay: the per-node cost of 100 kernel nodes, an empty kernel and a
// one-block sum of 1024 uint32 at several block sizes, each ordered as usual
// and with programmatic dependent launch (PDL: 1 waits in its first
// instruction, 2 also lets the next node launch at once). The CUDA runtime,
// not ptxkit: the floor ptxkit's graph replay is measured against (BENCHMARKS
// "Graph replay"). Build and run on the GPU machine:
//   nvcc -O3 -arch=sm_90 -o graph_node_cost bench/graph_node_cost.cu && ./graph_node_cost
#include <cstdio>
#include <cstdint>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s line %d\n", #x, cudaGetErrorString(e), __LINE__); exit(1);} } while (0)

template <int PDL>
__global__ void empty_k(uint32_t *out) {
    if (PDL) asm volatile("griddepcontrol.wait;" ::: "memory");
    if (PDL == 2) asm volatile("griddepcontrol.launch_dependents;");
}
template <int PDL>
__global__ void sum_k(const uint32_t *in, uint32_t n, uint32_t *out) {
    if (PDL) asm volatile("griddepcontrol.wait;" ::: "memory");
    if (PDL == 2) asm volatile("griddepcontrol.launch_dependents;");
    __shared__ uint32_t w[32];
    uint32_t s = 0;
    for (uint32_t i = threadIdx.x; i < n; i += blockDim.x) s += in[i];
    for (int o = 16; o; o >>= 1) s += __shfl_xor_sync(~0u, s, o);
    int nw = blockDim.x / 32;
    if (nw > 1) {
        if ((threadIdx.x & 31) == 0) w[threadIdx.x / 32] = s;
        __syncthreads();
        if (threadIdx.x < 32) {
            s = threadIdx.x < nw ? w[threadIdx.x] : 0;
            for (int o = 16; o; o >>= 1) s += __shfl_xor_sync(~0u, s, o);
        }
    }
    if (threadIdx.x == 0) *out = s;
}

// indexed by the PDL mode
static void (*const empty_kernels[3])(uint32_t *) = {empty_k<0>, empty_k<1>, empty_k<2>};
static void (*const sum_kernels[3])(const uint32_t *, uint32_t, uint32_t *) = {sum_k<0>, sum_k<1>, sum_k<2>};

static float run(const char *name, int ops, int block, int pdl, int kind, uint32_t *in, uint32_t *out, cudaStream_t st) {
    cudaGraph_t g; cudaGraphExec_t ge;
    CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeGlobal));
    for (int i = 0; i < ops; i++) {
        cudaLaunchConfig_t c = {}; c.gridDim = 1; c.blockDim = block; c.stream = st;
        cudaLaunchAttribute a[1]; a[0].id = cudaLaunchAttributeProgrammaticStreamSerialization; a[0].val.programmaticStreamSerializationAllowed = 1;
        c.attrs = a; c.numAttrs = pdl ? 1 : 0;
        if (kind == 0) CK(cudaLaunchKernelEx(&c, empty_kernels[pdl], out + i));
        else CK(cudaLaunchKernelEx(&c, sum_kernels[pdl], (const uint32_t *)in + i, 1024u, out + i));
    }
    CK(cudaStreamEndCapture(st, &g));
    CK(cudaGraphInstantiate(&ge, g, 0));
    CK(cudaGraphUpload(ge, st));
    cudaEvent_t e0, e1; CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
    std::vector<float> t;
    for (int r = 0; r < 25; r++) {
        CK(cudaMemsetAsync(out, 0, ops * 4, st));
        CK(cudaEventRecord(e0, st)); CK(cudaGraphLaunch(ge, st)); CK(cudaEventRecord(e1, st));
        CK(cudaStreamSynchronize(st));
        float ms; CK(cudaEventElapsedTime(&ms, e0, e1)); if (r >= 4) t.push_back(ms * 1000 / ops);
    }
    std::vector<uint32_t> h(ops); CK(cudaMemcpy(h.data(), out, ops * 4, cudaMemcpyDeviceToHost));
    bool ok = true;
    if (kind) for (int i = 0; i < ops; i++) { uint64_t s = 0; for (int j = 0; j < 1024; j++) s += (uint32_t)(i + j) * 3u; ok &= h[i] == (uint32_t)s; }
    std::sort(t.begin(), t.end());
    printf("%-6s block %4d pdl %d: %.3f us/node (min %.3f) %s\n", name, block, pdl, t[t.size() / 2], t[0], ok ? "ok" : "WRONG");
    CK(cudaEventDestroy(e0)); CK(cudaEventDestroy(e1));
    CK(cudaGraphExecDestroy(ge)); CK(cudaGraphDestroy(g));
    return t[t.size() / 2];
}
int main() {
    int ops = 100;
    uint32_t *in, *out; CK(cudaMalloc(&in, (1024 + ops) * 4)); CK(cudaMalloc(&out, ops * 4));
    std::vector<uint32_t> h(1024 + ops); for (size_t i = 0; i < h.size(); i++) h[i] = (uint32_t)i * 3u;
    CK(cudaMemcpy(in, h.data(), h.size() * 4, cudaMemcpyHostToDevice));
    cudaStream_t st; CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    for (int rep = 0; rep < 2; rep++) {
        for (int pdl = 0; pdl <= 2; pdl++) run("empty", ops, 32, pdl, 0, in, out, st);
        for (int b : {32, 64, 128, 256, 1024}) for (int pdl = 0; pdl <= 2; pdl++) run("sum", ops, b, pdl, 1, in, out, st);
    }
    return 0;
}
