// Operators and element types of the reduce and scan families. Numbering
// matches ptxkit_reduce_op and ptxkit_dtype.
//
// A kernel is written once, in a body header, in terms of a "current
// combination": rT (element type), r_combine (operator), R_IDENTITY, rload1
// (one element through the LOAD_OP helpers) and R_ENTRY(prefix), the entry
// point name prefix_<op>_<type>. reduce_each.cuh sets ROP and RTYPE and
// includes reduce_combo.cuh and the body once per supported combination: C++
// templates without templates, so every entry stays a plain extern "C" name.
#pragma once
#include <ptxkit/load.cuh>

#define RO_SUM 0
#define RO_MIN 1
#define RO_MAX 2
#define RO_AND 3
#define RO_OR 4
#define RO_XOR 5

#define RT_INT32 0
#define RT_UINT32 1
#define RT_INT64 2
#define RT_UINT64 3
#define RT_FLOAT32 4
#define RT_FLOAT64 5

// ONLY_OP / ONLY_TYPE (-1: all) restrict a compile to one combination: the
// runtime loads one module per entry point, so a JIT compile holds only the
// entry it needs. The PTX is generated with the defaults (all).
#ifndef ONLY_OP
#define ONLY_OP -1
#endif
#ifndef ONLY_TYPE
#define ONLY_TYPE -1
#endif
#define REDUCE_SELECTED(op, type) ((ONLY_OP < 0 || ONLY_OP == (op)) && (ONLY_TYPE < 0 || ONLY_TYPE == (type)))

typedef unsigned long long u64;

#define R_CAT3_(a, b, c) a##b##c
#define R_CAT3(a, b, c) R_CAT3_(a, b, c)

// ---- operators, overloaded on the element type -------------------------
// Integer sums wrap modulo 2^w: they are done in the unsigned type, because
// signed overflow is undefined in C++ and the compiler may exploit that.
__device__ __forceinline__ int rop_sum(int a, int b) { return (int)((unsigned)a + (unsigned)b); }
__device__ __forceinline__ unsigned rop_sum(unsigned a, unsigned b) { return a + b; }
__device__ __forceinline__ long long rop_sum(long long a, long long b) {
    return (long long)((unsigned long long)a + (unsigned long long)b);
}
__device__ __forceinline__ unsigned long long rop_sum(unsigned long long a, unsigned long long b) { return a + b; }
__device__ __forceinline__ float rop_sum(float a, float b) { return a + b; }
__device__ __forceinline__ double rop_sum(double a, double b) { return a + b; }

// Float min/max ignore NaNs (fminf/fmaxf): an all-NaN input gives the identity.
__device__ __forceinline__ int rop_min(int a, int b) { return b < a ? b : a; }
__device__ __forceinline__ unsigned rop_min(unsigned a, unsigned b) { return b < a ? b : a; }
__device__ __forceinline__ float rop_min(float a, float b) { return fminf(a, b); }
__device__ __forceinline__ double rop_min(double a, double b) { return fmin(a, b); }
__device__ __forceinline__ int rop_max(int a, int b) { return b > a ? b : a; }
__device__ __forceinline__ unsigned rop_max(unsigned a, unsigned b) { return b > a ? b : a; }
__device__ __forceinline__ float rop_max(float a, float b) { return fmaxf(a, b); }
__device__ __forceinline__ double rop_max(double a, double b) { return fmax(a, b); }

__device__ __forceinline__ unsigned rop_and(unsigned a, unsigned b) { return a & b; }
__device__ __forceinline__ unsigned long long rop_and(unsigned long long a, unsigned long long b) { return a & b; }
__device__ __forceinline__ unsigned rop_or(unsigned a, unsigned b) { return a | b; }
__device__ __forceinline__ unsigned long long rop_or(unsigned long long a, unsigned long long b) { return a | b; }
__device__ __forceinline__ unsigned rop_xor(unsigned a, unsigned b) { return a ^ b; }
__device__ __forceinline__ unsigned long long rop_xor(unsigned long long a, unsigned long long b) { return a ^ b; }

// ---- raw bits <-> element ----------------------------------------------
// Loads are done on raw words (ptxkit::ld_u32, ptxkit::ld_v4u32, ...) so one set of LOAD_OP
// helpers serves every element type; these reinterpret the bits.
__device__ __forceinline__ unsigned long long rbits64(int v) { return (unsigned)v; }
__device__ __forceinline__ unsigned long long rbits64(unsigned v) { return v; }
__device__ __forceinline__ unsigned long long rbits64(long long v) { return (unsigned long long)v; }
__device__ __forceinline__ unsigned long long rbits64(unsigned long long v) { return v; }
__device__ __forceinline__ unsigned long long rbits64(float v) { return __float_as_uint(v); }
__device__ __forceinline__ unsigned long long rbits64(double v) { return (unsigned long long)__double_as_longlong(v); }

__device__ __forceinline__ void rfrom(unsigned long long w, int *v) { *v = (int)(unsigned)w; }
__device__ __forceinline__ void rfrom(unsigned long long w, unsigned *v) { *v = (unsigned)w; }
__device__ __forceinline__ void rfrom(unsigned long long w, long long *v) { *v = (long long)w; }
__device__ __forceinline__ void rfrom(unsigned long long w, unsigned long long *v) { *v = w; }
__device__ __forceinline__ void rfrom(unsigned long long w, float *v) { *v = __uint_as_float((unsigned)w); }
__device__ __forceinline__ void rfrom(unsigned long long w, double *v) { *v = __longlong_as_double((long long)w); }

// One element through the load helpers (4- or 8-byte types).
#define RLOAD1_DEFINE(T)                                                                     \
    __device__ __forceinline__ T rload1(const T *p) {                                        \
        T v;                                                                                 \
        if (sizeof(T) == 4) rfrom(ptxkit::ld_u32((const unsigned *)p), &v);                          \
        else rfrom(ptxkit::ld_u64((const unsigned long long *)p), &v);                               \
        return v;                                                                            \
    }
RLOAD1_DEFINE(int)
RLOAD1_DEFINE(unsigned)
RLOAD1_DEFINE(long long)
RLOAD1_DEFINE(unsigned long long)
RLOAD1_DEFINE(float)
RLOAD1_DEFINE(double)
#undef RLOAD1_DEFINE

// A word written by one block and read by another in the same launch goes
// through volatile accesses (ld/st.volatile: never served from a stale L1
// line). They are scratch, not the caller's input, so LOAD_OP does not apply.
__device__ __forceinline__ unsigned long long rload_shared_word(const unsigned long long *p) {
    return *(const volatile unsigned long long *)p;
}
__device__ __forceinline__ void rstore_shared_word(unsigned long long *p, unsigned long long w) {
    *(volatile unsigned long long *)p = w;
}
