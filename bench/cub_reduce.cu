// CUB DeviceReduce timed exactly as `ptxkit bench reduce` times ptxkit_reduce
// (tools/ptxkit/common.c: time_median_ms), for `ptxkit bench reduce
// --compare`. Built with nvcc by bench/meson.build when the cub_compare
// feature is on; the library never depends on it.
//
// usage: ptxkit-cub-reduce [--ops sum,max] [--types int32,float32]
//                          [--sizes N,N,...] [--warmup W] [--reps R] [--device D]
// prints CSV: op,type,n,median_ms (one line per combination and size)
#include <cub/device/device_reduce.cuh>
#include <cuda/std/functional>
#include <cuda/std/type_traits>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#define CHECK(call)                                                                        \
    do {                                                                                   \
        cudaError_t e_ = (call);                                                           \
        if (e_ != cudaSuccess) {                                                           \
            std::fprintf(stderr, "ptxkit-cub-reduce: %s: %s\n", #call, cudaGetErrorString(e_)); \
            std::exit(1);                                                                  \
        }                                                                                  \
    } while (0)

// The same words as ptxkit's fill_random_words (cu_sources/ceiling.cu), so
// both sides reduce identical bits.
__global__ void fill_random(unsigned *out, unsigned long long count, unsigned seed) {
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < count; i += stride) {
        unsigned long long z = i * 0x9E3779B97F4A7C15ull + seed;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        out[i] = (unsigned)(z ^ (z >> 31)) | 1u;
    }
}

struct timing {
    int warmup, reps;
};

// warmup untimed calls, then reps calls back to back on one stream, each
// between its own pair of events; the median of the intervals.
template <typename Call>
static double median_ms(Call call, cudaStream_t stream, timing t) {
    std::vector<cudaEvent_t> ev(t.reps + 1);
    for (auto &e : ev) CHECK(cudaEventCreate(&e));
    for (int i = 0; i < t.warmup; i++) CHECK(call());
    CHECK(cudaEventRecord(ev[0], stream));
    for (int i = 0; i < t.reps; i++) {
        CHECK(call());
        CHECK(cudaEventRecord(ev[i + 1], stream));
    }
    CHECK(cudaStreamSynchronize(stream));
    std::vector<float> ms(t.reps);
    for (int i = 0; i < t.reps; i++) CHECK(cudaEventElapsedTime(&ms[i], ev[i], ev[i + 1]));
    for (auto &e : ev) CHECK(cudaEventDestroy(e));
    std::sort(ms.begin(), ms.end());
    return t.reps % 2 ? ms[t.reps / 2] : 0.5 * (ms[t.reps / 2 - 1] + ms[t.reps / 2]);
}

enum op_kind { OP_SUM, OP_MIN, OP_MAX, OP_AND, OP_OR, OP_XOR };

// Temporary storage is sized and allocated before timing, as a caller
// reusing it would.
// num_items is an int, as in CUB's own benchmarks and most callers: with a
// 64-bit count CUB switches to 64-bit offsets, which would handicap it.
template <typename T>
static double time_cub(op_kind op, const void *d_in_raw, int n, cudaStream_t stream, timing t) {
    const T *d_in = static_cast<const T *>(d_in_raw);
    T *d_out;
    CHECK(cudaMalloc(&d_out, sizeof(T)));
    void *temp = nullptr;
    size_t temp_bytes = 0;
    auto run = [&](void *tmp) -> cudaError_t {
        if (op == OP_SUM) return cub::DeviceReduce::Sum(tmp, temp_bytes, d_in, d_out, n, stream);
        // min and max exist for the 32-bit integers and the floats only
        if constexpr (sizeof(T) == 4 || cuda::std::is_floating_point<T>::value) {
            if (op == OP_MIN) return cub::DeviceReduce::Min(tmp, temp_bytes, d_in, d_out, n, stream);
            if (op == OP_MAX) return cub::DeviceReduce::Max(tmp, temp_bytes, d_in, d_out, n, stream);
        }
        if constexpr (cuda::std::is_integral<T>::value) {
            if (op == OP_AND)
                return cub::DeviceReduce::Reduce(tmp, temp_bytes, d_in, d_out, n, cuda::std::bit_and<T>{}, (T)~(T)0, stream);
            if (op == OP_OR)
                return cub::DeviceReduce::Reduce(tmp, temp_bytes, d_in, d_out, n, cuda::std::bit_or<T>{}, (T)0, stream);
            return cub::DeviceReduce::Reduce(tmp, temp_bytes, d_in, d_out, n, cuda::std::bit_xor<T>{}, (T)0, stream);
        }
        return cudaErrorInvalidValue;  // not provided (see provided()): never asked for
    };
    CHECK(run(nullptr));
    CHECK(cudaMalloc(&temp, temp_bytes ? temp_bytes : 1));
    double ms = median_ms([&] { return run(temp); }, stream, t);
    CHECK(cudaFree(temp));
    CHECK(cudaFree(d_out));
    return ms;
}

static const char *const op_names[] = {"sum", "min", "max", "and", "or", "xor"};
static const char *const type_names[] = {"int32", "uint32", "int64", "uint64", "float32", "float64"};
static const size_t type_sizes[] = {4, 4, 8, 8, 4, 8};

// The combinations ptxkit provides (src/ops/reduce.c).
static bool provided(int op, int type) {
    bool is_float = type >= 4;
    if (op == OP_SUM) return true;
    if (op == OP_MIN || op == OP_MAX) return type == 0 || type == 1 || is_float;
    return !is_float;
}

static double time_one(int op, int type, const void *in, int n, cudaStream_t s, timing t) {
    switch (type) {
    case 0: return time_cub<int>((op_kind)op, in, n, s, t);
    case 1: return time_cub<unsigned>((op_kind)op, in, n, s, t);
    case 2: return time_cub<long long>((op_kind)op, in, n, s, t);
    case 3: return time_cub<unsigned long long>((op_kind)op, in, n, s, t);
    case 4: return time_cub<float>((op_kind)op, in, n, s, t);
    default: return time_cub<double>((op_kind)op, in, n, s, t);
    }
}

static std::vector<std::string> split(const char *list) {
    std::vector<std::string> out;
    std::string cur;
    for (const char *p = list;; p++) {
        if (*p == ',' || !*p) {
            if (!cur.empty()) out.push_back(cur);
            cur.clear();
            if (!*p) break;
        } else {
            cur += *p;
        }
    }
    return out;
}

static int index_of(const char *const *names, int count, const std::string &s) {
    for (int i = 0; i < count; i++)
        if (s == names[i]) return i;
    return -1;
}

int main(int argc, char **argv) {
    const char *ops = "sum", *types = "int32,float32", *sizes = "1048576";
    timing t = {5, 30};
    int device = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (i + 1 >= argc) {
            std::fprintf(stderr, "usage: %s [--ops L] [--types L] [--sizes L] [--warmup W] [--reps R] [--device D]\n", argv[0]);
            return 2;
        }
        if (!std::strcmp(a, "--ops")) ops = argv[++i];
        else if (!std::strcmp(a, "--types")) types = argv[++i];
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
    std::vector<int> op_list, type_list;
    std::vector<size_t> n_list;
    for (auto &s : split(ops)) {
        int k = index_of(op_names, 6, s);
        if (k < 0) return std::fprintf(stderr, "%s: unknown op %s\n", argv[0], s.c_str()), 2;
        op_list.push_back(k);
    }
    for (auto &s : split(types)) {
        int k = index_of(type_names, 6, s);
        if (k < 0) return std::fprintf(stderr, "%s: unknown type %s\n", argv[0], s.c_str()), 2;
        type_list.push_back(k);
    }
    for (auto &s : split(sizes)) {
        size_t n = std::strtoull(s.c_str(), nullptr, 0);
        if (n > 0x7fffffff) return std::fprintf(stderr, "%s: n = %zu is more than an int holds\n", argv[0], n), 2;
        n_list.push_back(n);
    }
    size_t max_bytes = 16;
    for (size_t n : n_list)
        for (int ty : type_list) max_bytes = std::max(max_bytes, n * type_sizes[ty]);

    CHECK(cudaSetDevice(device));
    void *d_in;
    CHECK(cudaMalloc(&d_in, max_bytes));
    fill_random<<<1024, 256>>>(static_cast<unsigned *>(d_in), max_bytes / 4, 11);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    cudaStream_t stream;
    CHECK(cudaStreamCreate(&stream));
    std::printf("op,type,n,median_ms\n");
    for (int op : op_list)
        for (int ty : type_list) {
            if (!provided(op, ty)) continue;
            for (size_t n : n_list) {
                double ms = time_one(op, ty, d_in, (int)n, stream, t);
                std::printf("%s,%s,%zu,%.6f\n", op_names[op], type_names[ty], n, ms);
                std::fflush(stdout);
            }
        }
    CHECK(cudaStreamDestroy(stream));
    CHECK(cudaFree(d_in));
    return 0;
}
