// CUB DeviceScan timed exactly as `ptxkit bench scan` times ptxkit_scan
// (tools/ptxkit/common.c: time_median_ms), for `ptxkit bench scan
// --compare`. Built with nvcc by bench/meson.build when the cub_compare
// feature is on; the library never depends on it.
//
// usage: ptxkit-cub-scan [--ops sum,max] [--types int32,float32]
//                        [--kinds exclusive,inclusive] [--sizes N,N,...]
//                        [--warmup W] [--reps R] [--device D]
// prints CSV: op,type,kind,n,median_ms (one line per combination and size)
#include <cub/device/device_scan.cuh>
#include <cuda/functional>
#include <cuda/std/functional>
#include <cuda/std/limits>
#include <cuda/std/type_traits>

#define CUB_BENCH_NAME "ptxkit-cub-scan"
#include "cub_common.cuh"

// One scan call with CUB's own entry point for it: ExclusiveSum /
// InclusiveSum for sums, ExclusiveScan (with the operator's identity as the
// initial value) / InclusiveScan otherwise.
template <typename T, typename Op>
static cudaError_t scan_with(void *tmp, size_t &bytes, const T *in, T *out, int n, bool exclusive, Op op, T init,
                             cudaStream_t s) {
    if (exclusive) return cub::DeviceScan::ExclusiveScan(tmp, bytes, in, out, op, init, n, s);
    return cub::DeviceScan::InclusiveScan(tmp, bytes, in, out, op, n, s);
}

// Temporary storage is sized and allocated before timing, as a caller
// reusing it would. num_items is an int, as in CUB's own benchmarks and most
// callers: with a 64-bit count CUB switches to 64-bit offsets, which would
// handicap it.
template <typename T>
static double time_cub(op_kind op, bool exclusive, const void *d_in_raw, void *d_out_raw, int n, cudaStream_t stream,
                       timing t) {
    const T *d_in = static_cast<const T *>(d_in_raw);
    T *d_out = static_cast<T *>(d_out_raw);
    void *temp = nullptr;
    size_t temp_bytes = 0;
    auto run = [&](void *tmp) -> cudaError_t {
        if (op == OP_SUM)
            return exclusive ? cub::DeviceScan::ExclusiveSum(tmp, temp_bytes, d_in, d_out, n, stream)
                             : cub::DeviceScan::InclusiveSum(tmp, temp_bytes, d_in, d_out, n, stream);
        if constexpr (sizeof(T) == 4 || cuda::std::is_floating_point<T>::value) {
            if (op == OP_MIN)
                return scan_with(tmp, temp_bytes, d_in, d_out, n, exclusive, cuda::minimum<>{},
                                 cuda::std::numeric_limits<T>::has_infinity ? cuda::std::numeric_limits<T>::infinity()
                                                                           : cuda::std::numeric_limits<T>::max(),
                                 stream);
            if (op == OP_MAX)
                return scan_with(tmp, temp_bytes, d_in, d_out, n, exclusive, cuda::maximum<>{},
                                 cuda::std::numeric_limits<T>::has_infinity ? -cuda::std::numeric_limits<T>::infinity()
                                                                           : cuda::std::numeric_limits<T>::lowest(),
                                 stream);
        }
        if constexpr (cuda::std::is_integral<T>::value) {
            if (op == OP_AND) return scan_with(tmp, temp_bytes, d_in, d_out, n, exclusive, cuda::std::bit_and<T>{}, (T)~(T)0, stream);
            if (op == OP_OR) return scan_with(tmp, temp_bytes, d_in, d_out, n, exclusive, cuda::std::bit_or<T>{}, (T)0, stream);
            return scan_with(tmp, temp_bytes, d_in, d_out, n, exclusive, cuda::std::bit_xor<T>{}, (T)0, stream);
        }
        return cudaErrorInvalidValue; // not provided (see provided()): never asked for
    };
    CHECK(run(nullptr));
    CHECK(cudaMalloc(&temp, temp_bytes ? temp_bytes : 1));
    double ms = median_ms([&] { return run(temp); }, stream, t);
    CHECK(cudaFree(temp));
    return ms;
}

static const char *const kind_names[] = {"inclusive", "exclusive"};

static double time_one(int op, int type, int kind, const void *in, void *out, int n, cudaStream_t s, timing t) {
    bool exclusive = kind == 1;
    switch (type) {
    case 0: return time_cub<int>((op_kind)op, exclusive, in, out, n, s, t);
    case 1: return time_cub<unsigned>((op_kind)op, exclusive, in, out, n, s, t);
    case 2: return time_cub<long long>((op_kind)op, exclusive, in, out, n, s, t);
    case 3: return time_cub<unsigned long long>((op_kind)op, exclusive, in, out, n, s, t);
    case 4: return time_cub<float>((op_kind)op, exclusive, in, out, n, s, t);
    default: return time_cub<double>((op_kind)op, exclusive, in, out, n, s, t);
    }
}

int main(int argc, char **argv) {
    const char *ops = "sum", *types = "int32,float32", *kinds = "exclusive", *sizes = "1048576";
    timing t = {5, 30};
    int device = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (i + 1 >= argc) {
            std::fprintf(stderr, "usage: %s [--ops L] [--types L] [--kinds L] [--sizes L] [--warmup W] [--reps R] [--device D]\n",
                         argv[0]);
            return 2;
        }
        if (!std::strcmp(a, "--ops")) ops = argv[++i];
        else if (!std::strcmp(a, "--types")) types = argv[++i];
        else if (!std::strcmp(a, "--kinds")) kinds = argv[++i];
        else if (!std::strcmp(a, "--sizes")) sizes = argv[++i];
        else if (!std::strcmp(a, "--warmup")) t.warmup = std::atoi(argv[++i]);
        else if (!std::strcmp(a, "--reps")) t.reps = std::atoi(argv[++i]);
        else if (!std::strcmp(a, "--device")) device = std::atoi(argv[++i]);
        else {
            std::fprintf(stderr, "%s: unknown option %s\n", argv[0], a);
            return 2;
        }
    }
    if (t.reps < 1 || t.warmup < 0) {
        std::fprintf(stderr, "%s: --reps must be >= 1 and --warmup >= 0\n", argv[0]);
        return 2;
    }
    std::vector<int> op_list, type_list, kind_list;
    std::vector<size_t> n_list;
    if (!parse_names(argv[0], "op", ops, op_names, 6, op_list) ||
        !parse_names(argv[0], "type", types, type_names, 6, type_list) ||
        !parse_names(argv[0], "kind", kinds, kind_names, 2, kind_list) ||
        !parse_sizes(argv[0], sizes, n_list))
        return 2;
    size_t max_bytes = 16;
    for (size_t n : n_list)
        for (int ty : type_list) max_bytes = std::max(max_bytes, n * type_sizes[ty]);

    CHECK(cudaSetDevice(device));
    void *d_in, *d_out;
    CHECK(cudaMalloc(&d_in, max_bytes));
    CHECK(cudaMalloc(&d_out, max_bytes));
    fill_random<<<1024, 256>>>(static_cast<unsigned *>(d_in), max_bytes / 4, 11);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    cudaStream_t stream;
    CHECK(cudaStreamCreate(&stream));
    std::printf("op,type,kind,n,median_ms\n");
    for (int op : op_list)
        for (int ty : type_list)
            for (int kind : kind_list) {
                if (!provided(op, ty)) continue;
                for (size_t n : n_list) {
                    double ms = time_one(op, ty, kind, d_in, d_out, (int)n, stream, t);
                    std::printf("%s,%s,%s,%zu,%.6f\n", op_names[op], type_names[ty], kind_names[kind], n, ms);
                    std::fflush(stdout);
                }
            }
    CHECK(cudaStreamDestroy(stream));
    CHECK(cudaFree(d_in));
    CHECK(cudaFree(d_out));
    return 0;
}
