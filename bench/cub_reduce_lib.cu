// CUB DeviceReduce as a shared library that `ptxkit bench reduce --compare`
// opens with dlopen and times in its own process, round by round between
// ptxkit's rounds, on ptxkit's input buffer. The runtime API works on the
// device's primary context, which ptxkit's context retains, so both
// libraries share one context, one input and the GPU's state. Built with
// nvcc by bench/meson.build (cub_compare) and `bench/devdeps.sh cub`; the
// library never depends on it. Entry points return 0 or a cudaError_t
// value (ptxkit_cub_reduce_error() gives the text); nothing here prints or
// exits.
#define CUB_BENCH_NAME "libptxkit-cub-reduce"
#include "cub_common.cuh"
#include "cub_reduce_call.cuh"

#define CUB_LIB_API extern "C" __attribute__((visibility("default")))

struct cub_reduce_handle {
    int op, type, n;
    const void *in;
    void *out, *temp;
    size_t temp_bytes;
    cudaStream_t stream;
};

static thread_local char last_error[256];

static int fail(cudaError_t e, const char *what) {
    std::snprintf(last_error, sizeof last_error, "%s: %s", what, cudaGetErrorString(e));
    return (int)e;
}

// Bumped when an entry point changes; the bench checks it.
CUB_LIB_API int ptxkit_cub_reduce_abi(void) { return 1; }

CUB_LIB_API const char *ptxkit_cub_reduce_error(void) { return last_error; }

CUB_LIB_API void ptxkit_cub_reduce_close(void *handle) {
    cub_reduce_handle *h = static_cast<cub_reduce_handle *>(handle);
    if (!h) return;
    if (h->stream) cudaStreamDestroy(h->stream);
    cudaFree(h->temp);
    cudaFree(h->out);
    delete h;
}

// A reduction of n elements at device address `in` (op and type by ptxkit's
// names), its output and temporary storage allocated here, as a caller
// reusing them would, and its own stream.
CUB_LIB_API int ptxkit_cub_reduce_open(int device, const char *op, const char *type, unsigned long long in,
                                       long long n, void **handle) {
    *handle = nullptr;
    int o = op ? index_of(op_names, 6, op) : -1, t = type ? index_of(type_names, 6, type) : -1;
    if (o < 0 || t < 0 || !provided(o, t) || n < 1 || n > 0x7fffffff)
        return fail(cudaErrorInvalidValue, "ptxkit_cub_reduce_open: operator, type or size not provided");
    cudaError_t e = cudaSetDevice(device);
    if (e != cudaSuccess) return fail(e, "cudaSetDevice");
    cub_reduce_handle *h = new cub_reduce_handle{o, t, (int)n, reinterpret_cast<const void *>(in), nullptr, nullptr, 0,
                                                 nullptr};
    const char *what = "cudaMalloc";
    if ((e = cudaMalloc(&h->out, 8)) == cudaSuccess &&
        (what = "sizing", e = cub_reduce_any(o, t, nullptr, h->temp_bytes, h->in, h->out, h->n, 0)) == cudaSuccess &&
        (what = "cudaMalloc", e = cudaMalloc(&h->temp, h->temp_bytes ? h->temp_bytes : 1)) == cudaSuccess &&
        (what = "cudaStreamCreate", e = cudaStreamCreate(&h->stream)) == cudaSuccess) {
        *handle = h;
        return 0;
    }
    ptxkit_cub_reduce_close(h);
    return fail(e, what);
}

// warmup untimed calls, then reps calls back to back, each between its own
// pair of events (as tools/ptxkit/common.c's time_stats_ms): intervals_ms
// gets the reps intervals in call order.
CUB_LIB_API int ptxkit_cub_reduce_time(void *handle, int warmup, int reps, float *intervals_ms) {
    cub_reduce_handle *h = static_cast<cub_reduce_handle *>(handle);
    if (!h || reps < 1 || warmup < 0 || !intervals_ms) return fail(cudaErrorInvalidValue, "ptxkit_cub_reduce_time");
    std::vector<cudaEvent_t> ev(reps + 1, nullptr);
    cudaError_t e = cudaSuccess;
    const char *what = "cudaEventCreate";
    for (auto &x : ev)
        if (e == cudaSuccess) e = cudaEventCreate(&x);
    auto call = [&] { return cub_reduce_any(h->op, h->type, h->temp, h->temp_bytes, h->in, h->out, h->n, h->stream); };
    if (e == cudaSuccess) what = "DeviceReduce";
    for (int i = 0; i < warmup && e == cudaSuccess; i++) e = call();
    if (e == cudaSuccess) e = cudaEventRecord(ev[0], h->stream);
    for (int i = 0; i < reps && e == cudaSuccess; i++) {
        e = call();
        if (e == cudaSuccess) e = cudaEventRecord(ev[i + 1], h->stream);
    }
    if (e == cudaSuccess) what = "cudaStreamSynchronize", e = cudaStreamSynchronize(h->stream);
    for (int i = 0; i < reps && e == cudaSuccess; i++) what = "cudaEventElapsedTime", e = cudaEventElapsedTime(&intervals_ms[i], ev[i], ev[i + 1]);
    for (auto &x : ev)
        if (x) cudaEventDestroy(x);
    return e == cudaSuccess ? 0 : fail(e, what);
}
