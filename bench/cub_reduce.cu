// CUB DeviceReduce timed exactly as `ptxkit bench reduce` times ptxkit_reduce
// (tools/ptxkit/common.c: time_median_ms), for `ptxkit bench reduce
// --compare`. Built with nvcc by bench/meson.build when the cub_compare
// feature is on; the library never depends on it.
//
// usage: ptxkit-cub-reduce [--ops sum,max] [--types int32,float32]
//                          [--sizes N,N,...] [--warmup W] [--reps R] [--device D]
// prints CSV: op,type,n,median_ms (one line per combination and size)
#define CUB_BENCH_NAME "ptxkit-cub-reduce"
#include "cub_common.cuh"
#include "cub_reduce_call.cuh"

// Temporary storage is sized and allocated before timing, as a caller
// reusing it would.
static double time_one(int op, int type, const void *in, int n, cudaStream_t stream, timing t) {
    void *out, *temp = nullptr;
    size_t temp_bytes = 0;
    CHECK(cudaMalloc(&out, 8));
    CHECK(cub_reduce_any(op, type, nullptr, temp_bytes, in, out, n, stream));
    CHECK(cudaMalloc(&temp, temp_bytes ? temp_bytes : 1));
    double ms = median_ms([&] { return cub_reduce_any(op, type, temp, temp_bytes, in, out, n, stream); }, stream, t);
    CHECK(cudaFree(temp));
    CHECK(cudaFree(out));
    return ms;
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
    if (!parse_names(argv[0], "op", ops, op_names, 6, op_list) ||
        !parse_names(argv[0], "type", types, type_names, 6, type_list) ||
        !parse_sizes(argv[0], sizes, n_list))
        return 2;
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
