// The operator and element type of one ladder compile (reduce_ladder.cu,
// scan_ladder.cu), from the defines the lab's host code (lab/ladders.c)
// passes:
//   LADDER_OP    0 sum, 1 min, 2 max, 3 and, 4 or, 5 xor (ptxkit_reduce_op)
//   LADDER_TYPE  0 int32, 1 uint32, 2 int64, 3 uint64, 4 float32, 5 float64
//                (ptxkit_dtype); the host gives sums and bitwise operators
//                of signed integers the unsigned type: the same bits, and
//                no signed overflow for the compiler to exploit
//   LOAD_OP      the cache operator of every load of the input
// One (operator, type) per compile, so the entries keep plain names. Sets
// rT, R_ELEM_BYTES, r_combine, R_IDENTITY, rload1 and, for 32-bit
// integers, R_HAS_REDUX and R_REDUX (the sm_80 redux.sync intrinsic).
#pragma once
#include <ptxkit/load.cuh>

#ifndef LADDER_OP
#define LADDER_OP 0
#endif
#ifndef LADDER_TYPE
#define LADDER_TYPE 0
#endif

typedef unsigned long long u64;

#if LADDER_TYPE == 0
typedef int rT;
#define R_ELEM_BYTES 4
#elif LADDER_TYPE == 1
typedef unsigned rT;
#define R_ELEM_BYTES 4
#elif LADDER_TYPE == 2
typedef long long rT;
#define R_ELEM_BYTES 8
#elif LADDER_TYPE == 3
typedef unsigned long long rT;
#define R_ELEM_BYTES 8
#elif LADDER_TYPE == 4
typedef float rT;
#define R_ELEM_BYTES 4
#elif LADDER_TYPE == 5
typedef double rT;
#define R_ELEM_BYTES 8
#else
#error "LADDER_TYPE is 0..5"
#endif

// Float min/max ignore NaNs (fminf/fmaxf): an all-NaN input gives the identity.
#if LADDER_OP == 0
#define R_IDENTITY ((rT)0)
#define R_REDUX __reduce_add_sync
static __device__ __forceinline__ rT r_combine(rT a, rT b) { return a + b; }
#elif LADDER_OP == 1
#define R_REDUX __reduce_min_sync
#if LADDER_TYPE == 4
#define R_IDENTITY __int_as_float(0x7f800000)
#elif LADDER_TYPE == 5
#define R_IDENTITY __longlong_as_double(0x7ff0000000000000ll)
#elif LADDER_TYPE == 0
#define R_IDENTITY ((rT)0x7fffffff)
#elif LADDER_TYPE == 2
#define R_IDENTITY ((rT)0x7fffffffffffffffll)
#else
#define R_IDENTITY ((rT) ~(rT)0)
#endif
#if LADDER_TYPE == 4
static __device__ __forceinline__ rT r_combine(rT a, rT b) { return fminf(a, b); }
#elif LADDER_TYPE == 5
static __device__ __forceinline__ rT r_combine(rT a, rT b) { return fmin(a, b); }
#else
static __device__ __forceinline__ rT r_combine(rT a, rT b) { return b < a ? b : a; }
#endif
#elif LADDER_OP == 2
#define R_REDUX __reduce_max_sync
#if LADDER_TYPE == 4
#define R_IDENTITY __int_as_float((int)0xff800000u)
#elif LADDER_TYPE == 5
#define R_IDENTITY __longlong_as_double((long long)0xfff0000000000000ull)
#elif LADDER_TYPE == 0
#define R_IDENTITY ((rT)(-0x7fffffff - 1))
#elif LADDER_TYPE == 2
#define R_IDENTITY ((rT)(-0x7fffffffffffffffll - 1))
#else
#define R_IDENTITY ((rT)0)
#endif
#if LADDER_TYPE == 4
static __device__ __forceinline__ rT r_combine(rT a, rT b) { return fmaxf(a, b); }
#elif LADDER_TYPE == 5
static __device__ __forceinline__ rT r_combine(rT a, rT b) { return fmax(a, b); }
#else
static __device__ __forceinline__ rT r_combine(rT a, rT b) { return b > a ? b : a; }
#endif
#elif LADDER_OP == 3
#define R_IDENTITY ((rT) ~(rT)0)
#define R_REDUX __reduce_and_sync
static __device__ __forceinline__ rT r_combine(rT a, rT b) { return a & b; }
#elif LADDER_OP == 4
#define R_IDENTITY ((rT)0)
#define R_REDUX __reduce_or_sync
static __device__ __forceinline__ rT r_combine(rT a, rT b) { return a | b; }
#elif LADDER_OP == 5
#define R_IDENTITY ((rT)0)
#define R_REDUX __reduce_xor_sync
static __device__ __forceinline__ rT r_combine(rT a, rT b) { return a ^ b; }
#else
#error "LADDER_OP is 0..5"
#endif

// redux.sync exists for 32-bit integers only, on sm_80 and newer.
#define R_HAS_REDUX (LADDER_TYPE == 0 || LADDER_TYPE == 1)

// One element through the LOAD_OP helpers, on its raw bits.
static __device__ __forceinline__ rT rload1(const rT *p) {
#if LADDER_TYPE == 4
    return __uint_as_float(ptxkit::ld_u32((const unsigned *)p));
#elif LADDER_TYPE == 5
    return __longlong_as_double((long long)ptxkit::ld_u64((const unsigned long long *)p));
#elif R_ELEM_BYTES == 4
    return (rT)ptxkit::ld_u32((const unsigned *)p);
#else
    return (rT)ptxkit::ld_u64((const unsigned long long *)p);
#endif
}
