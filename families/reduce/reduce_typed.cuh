// One element type and operator, chosen by the defines TYPE_ID (a
// ptxkit_dtype value) and OP (a ptxkit_reduce_op value): T and combine(a, b),
// a op b as ptxkit_reduce and ptxkit_scan combine (fminf/fmaxf for floats).
// For the small kernels the layers above the families compile for one
// combination: src/multi's shard kernels and src/host's carry kernel.
#pragma once
#if TYPE_ID == 0
typedef int T;
#elif TYPE_ID == 1
typedef unsigned int T;
#elif TYPE_ID == 2
typedef long long T;
#elif TYPE_ID == 3
typedef unsigned long long T;
#elif TYPE_ID == 4
typedef float T;
#else
typedef double T;
#endif
__device__ __forceinline__ T combine(T a, T b) {
#if OP == 0 && TYPE_ID == 0
    return (T)((unsigned)a + (unsigned)b); // wraps modulo 2^32, as reduce_ops.cuh's sums: no signed overflow
#elif OP == 0 && TYPE_ID == 2
    return (T)((unsigned long long)a + (unsigned long long)b);
#elif OP == 0
    return a + b;
#elif OP == 1 && TYPE_ID == 4
    return fminf(a, b);
#elif OP == 1 && TYPE_ID == 5
    return fmin(a, b);
#elif OP == 1
    return b < a ? b : a;
#elif OP == 2 && TYPE_ID == 4
    return fmaxf(a, b);
#elif OP == 2 && TYPE_ID == 5
    return fmax(a, b);
#elif OP == 2
    return b > a ? b : a;
#elif OP == 3
    return a & b;
#elif OP == 4
    return a | b;
#else
    return a ^ b;
#endif
}
