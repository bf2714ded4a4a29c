// One CUB DeviceReduce call for the operator and element type ptxkit names,
// shared by the comparison program (cub_reduce.cu) and the comparison library
// (cub_reduce_lib.cu), so both time exactly the same CUB entry points.
// Include cub_common.cuh first (op_kind, the type order).
#pragma once

#include <cub/device/device_reduce.cuh>
#include <cuda/std/functional>
#include <cuda/std/type_traits>

// num_items is an int, as in CUB's own benchmarks and most callers: with a
// 64-bit count CUB switches to 64-bit offsets, which would handicap it.
// tmp == nullptr sizes temp_bytes, as CUB does.
template <typename T>
static cudaError_t cub_reduce_call(op_kind op, void *tmp, size_t &temp_bytes, const T *d_in, T *d_out, int n,
                                   cudaStream_t stream) {
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
}

// The same call for a type index of type_names (cub_common.cuh's order).
static cudaError_t cub_reduce_any(int op, int type, void *tmp, size_t &temp_bytes, const void *in, void *out, int n,
                                  cudaStream_t s) {
    op_kind k = (op_kind)op;
    switch (type) {
    case 0: return cub_reduce_call(k, tmp, temp_bytes, (const int *)in, (int *)out, n, s);
    case 1: return cub_reduce_call(k, tmp, temp_bytes, (const unsigned *)in, (unsigned *)out, n, s);
    case 2: return cub_reduce_call(k, tmp, temp_bytes, (const long long *)in, (long long *)out, n, s);
    case 3: return cub_reduce_call(k, tmp, temp_bytes, (const unsigned long long *)in, (unsigned long long *)out, n, s);
    case 4: return cub_reduce_call(k, tmp, temp_bytes, (const float *)in, (float *)out, n, s);
    default: return cub_reduce_call(k, tmp, temp_bytes, (const double *)in, (double *)out, n, s);
    }
}
