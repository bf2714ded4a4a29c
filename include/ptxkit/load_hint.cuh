// Load helpers with the sm_80+ L2 eviction priorities, on top of
// <ptxkit/load.cuh>. LOAD_OP 0..6 are exactly <ptxkit/load.cuh> (this header
// just includes it); two more operators are added:
//   7  L2::evict_first   data not worth keeping in L2 (streaming)
//   8  L2::evict_last    data to keep in L2 (reused)
// The PTX ISA accepts ld.global.L2::evict_first/last directly only on
// 256-bit loads; for ordinary widths the priority is a cache policy made
// by createpolicy and passed to ld.global.L2::cache_hint. Every global load
// of a kernel built with LOAD_OP 7 or 8 carries that hint. L1 behaviour is
// that of a plain ld.global.
#pragma once

#ifndef LOAD_OP
#define LOAD_OP 0
#endif

#if LOAD_OP == 7 || LOAD_OP == 8

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
#error "LOAD_OP 7 and 8 (L2 eviction priority hints) need sm_80 or newer"
#endif

#if LOAD_OP == 7
#define PTXKIT_L2_POLICY "createpolicy.fractional.L2::evict_first.b64 %0, 1.0;"
#else
#define PTXKIT_L2_POLICY "createpolicy.fractional.L2::evict_last.b64 %0, 1.0;"
#endif
#define PTXKIT_LDH "ld.global.L2::cache_hint"

namespace ptxkit {

// Not volatile: the compiler may create the policy once per thread and
// share it between loads.
__device__ __forceinline__ unsigned long long l2_policy() {
    unsigned long long policy;
    asm(PTXKIT_L2_POLICY : "=l"(policy));
    return policy;
}

__device__ __forceinline__ unsigned char ld_u8(const unsigned char *p) {
    unsigned short v;
    asm(PTXKIT_LDH ".u8 %0, [%1], %2;" : "=h"(v) : "l"(p), "l"(l2_policy()));
    return (unsigned char)v;
}
__device__ __forceinline__ unsigned ld_u32(const unsigned *p) {
    unsigned v;
    asm(PTXKIT_LDH ".u32 %0, [%1], %2;" : "=r"(v) : "l"(p), "l"(l2_policy()));
    return v;
}
__device__ __forceinline__ int ld_s32(const int *p) {
    int v;
    asm(PTXKIT_LDH ".s32 %0, [%1], %2;" : "=r"(v) : "l"(p), "l"(l2_policy()));
    return v;
}
__device__ __forceinline__ unsigned long long ld_u64(const unsigned long long *p) {
    unsigned long long v;
    asm(PTXKIT_LDH ".u64 %0, [%1], %2;" : "=l"(v) : "l"(p), "l"(l2_policy()));
    return v;
}
__device__ __forceinline__ long long ld_s64(const long long *p) {
    long long v;
    asm(PTXKIT_LDH ".s64 %0, [%1], %2;" : "=l"(v) : "l"(p), "l"(l2_policy()));
    return v;
}
__device__ __forceinline__ float ld_f32(const float *p) {
    float v;
    asm(PTXKIT_LDH ".f32 %0, [%1], %2;" : "=f"(v) : "l"(p), "l"(l2_policy()));
    return v;
}
__device__ __forceinline__ double ld_f64(const double *p) {
    double v;
    asm(PTXKIT_LDH ".f64 %0, [%1], %2;" : "=d"(v) : "l"(p), "l"(l2_policy()));
    return v;
}
__device__ __forceinline__ uint2 ld_v2u32(const uint2 *p) {
    uint2 v;
    asm(PTXKIT_LDH ".v2.u32 {%0, %1}, [%2], %3;" : "=r"(v.x), "=r"(v.y) : "l"(p), "l"(l2_policy()));
    return v;
}
__device__ __forceinline__ uint4 ld_v4u32(const uint4 *p) {
    uint4 v;
    asm(PTXKIT_LDH ".v4.u32 {%0, %1, %2, %3}, [%4], %5;"
        : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p), "l"(l2_policy()));
    return v;
}
__device__ __forceinline__ int4 ld_v4s32(const int4 *p) {
    int4 v;
    asm(PTXKIT_LDH ".v4.s32 {%0, %1, %2, %3}, [%4], %5;"
        : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p), "l"(l2_policy()));
    return v;
}
__device__ __forceinline__ float4 ld_v4f32(const float4 *p) {
    float4 v;
    asm(PTXKIT_LDH ".v4.f32 {%0, %1, %2, %3}, [%4], %5;"
        : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p), "l"(l2_policy()));
    return v;
}
__device__ __forceinline__ double2 ld_v2f64(const double2 *p) {
    double2 v;
    asm(PTXKIT_LDH ".v2.f64 {%0, %1}, [%2], %3;" : "=d"(v.x), "=d"(v.y) : "l"(p), "l"(l2_policy()));
    return v;
}
__device__ __forceinline__ ulonglong2 ld_v2u64(const ulonglong2 *p) {
    ulonglong2 v;
    asm(PTXKIT_LDH ".v2.u64 {%0, %1}, [%2], %3;" : "=l"(v.x), "=l"(v.y) : "l"(p), "l"(l2_policy()));
    return v;
}
__device__ __forceinline__ longlong2 ld_v2s64(const longlong2 *p) {
    longlong2 v;
    asm(PTXKIT_LDH ".v2.s64 {%0, %1}, [%2], %3;" : "=l"(v.x), "=l"(v.y) : "l"(p), "l"(l2_policy()));
    return v;
}

} // namespace ptxkit

#else
#include <ptxkit/load.cuh>
#endif
