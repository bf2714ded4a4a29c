// What the CUB comparison programs (cub_reduce.cu, cub_scan.cu) share: the
// error check, the input words, the timing loop (the same as `ptxkit bench`'s
// time_median_ms in tools/ptxkit/common.c), the operator and type tables and
// the parsing of comma-separated lists. Define CUB_BENCH_NAME (the program's
// name, for messages) before including it.
#pragma once

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
            std::fprintf(stderr, "%s: %s: %s\n", CUB_BENCH_NAME, #call, cudaGetErrorString(e_)); \
            std::exit(1);                                                                  \
        }                                                                                  \
    } while (0)

// The same words as ptxkit's fill_random_words (lab/kernels/ceiling.cu), so
// both sides work on identical bits.
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

static const char *const op_names[] = {"sum", "min", "max", "and", "or", "xor"};
static const char *const type_names[] = {"int32", "uint32", "int64", "uint64", "float32", "float64"};
static const size_t type_sizes[] = {4, 4, 8, 8, 4, 8};

// The combinations ptxkit provides (families/reduce/reduce.c; scan takes the same).
static bool provided(int op, int type) {
    bool is_float = type >= 4;
    if (op == OP_SUM) return true;
    if (op == OP_MIN || op == OP_MAX) return type == 0 || type == 1 || is_float;
    return !is_float;
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

// The indices of a comma-separated list of names; false (with a message
// naming `what`) at the first unknown one.
static bool parse_names(const char *program, const char *what, const char *list, const char *const *names, int count,
                        std::vector<int> &out) {
    for (auto &s : split(list)) {
        int k = index_of(names, count, s);
        if (k < 0) return std::fprintf(stderr, "%s: unknown %s %s\n", program, what, s.c_str()), false;
        out.push_back(k);
    }
    return true;
}

// A comma-separated list of element counts, each one an int holds (as CUB's
// num_items does); false with a message otherwise.
static bool parse_sizes(const char *program, const char *list, std::vector<size_t> &out) {
    for (auto &s : split(list)) {
        size_t n = std::strtoull(s.c_str(), nullptr, 0);
        if (n > 0x7fffffff) return std::fprintf(stderr, "%s: n = %zu is more than an int holds\n", program, n), false;
        out.push_back(n);
    }
    return true;
}
