// Global loads with the load cache operator chosen at compile time, in
// namespace ptxkit as the other device headers' helpers are.
// LOAD_OP is injected as a number: 0 plain C loads (the compiler's choice),
// 1 ca, 2 cg, 3 cs, 4 lu, 5 cv, 6 nc (ld.global.nc, the read-only path).
// Every operator other than 0 is written as inline PTX so that each global
// load of a kernel carries exactly that operator.
#pragma once

#ifndef LOAD_OP
#define LOAD_OP 0
#endif

#if LOAD_OP == 1
#define PTXKIT_LD "ld.global.ca"
#elif LOAD_OP == 2
#define PTXKIT_LD "ld.global.cg"
#elif LOAD_OP == 3
#define PTXKIT_LD "ld.global.cs"
#elif LOAD_OP == 4
#define PTXKIT_LD "ld.global.lu"
#elif LOAD_OP == 5
#define PTXKIT_LD "ld.global.cv"
#elif LOAD_OP == 6
#define PTXKIT_LD "ld.global.nc"
#elif LOAD_OP != 0
#error "LOAD_OP must be 0..6"
#endif

namespace ptxkit {

#if LOAD_OP == 0
__device__ __forceinline__ unsigned char ld_u8(const unsigned char *p) { return *p; }
__device__ __forceinline__ unsigned ld_u32(const unsigned *p) { return *p; }
__device__ __forceinline__ int ld_s32(const int *p) { return *p; }
__device__ __forceinline__ unsigned long long ld_u64(const unsigned long long *p) { return *p; }
__device__ __forceinline__ long long ld_s64(const long long *p) { return *p; }
__device__ __forceinline__ float ld_f32(const float *p) { return *p; }
__device__ __forceinline__ double ld_f64(const double *p) { return *p; }
__device__ __forceinline__ uint2 ld_v2u32(const uint2 *p) { return *p; }
__device__ __forceinline__ uint4 ld_v4u32(const uint4 *p) { return *p; }
__device__ __forceinline__ int4 ld_v4s32(const int4 *p) { return *p; }
__device__ __forceinline__ float4 ld_v4f32(const float4 *p) { return *p; }
__device__ __forceinline__ double2 ld_v2f64(const double2 *p) { return *p; }
__device__ __forceinline__ ulonglong2 ld_v2u64(const ulonglong2 *p) { return *p; }
__device__ __forceinline__ longlong2 ld_v2s64(const longlong2 *p) { return *p; }
#else
__device__ __forceinline__ unsigned char ld_u8(const unsigned char *p) {
    unsigned short v;
    asm(PTXKIT_LD ".u8 %0, [%1];" : "=h"(v) : "l"(p));
    return (unsigned char)v;
}
__device__ __forceinline__ unsigned ld_u32(const unsigned *p) {
    unsigned v;
    asm(PTXKIT_LD ".u32 %0, [%1];" : "=r"(v) : "l"(p));
    return v;
}
__device__ __forceinline__ int ld_s32(const int *p) {
    int v;
    asm(PTXKIT_LD ".s32 %0, [%1];" : "=r"(v) : "l"(p));
    return v;
}
__device__ __forceinline__ unsigned long long ld_u64(const unsigned long long *p) {
    unsigned long long v;
    asm(PTXKIT_LD ".u64 %0, [%1];" : "=l"(v) : "l"(p));
    return v;
}
__device__ __forceinline__ long long ld_s64(const long long *p) {
    long long v;
    asm(PTXKIT_LD ".s64 %0, [%1];" : "=l"(v) : "l"(p));
    return v;
}
__device__ __forceinline__ float ld_f32(const float *p) {
    float v;
    asm(PTXKIT_LD ".f32 %0, [%1];" : "=f"(v) : "l"(p));
    return v;
}
__device__ __forceinline__ double ld_f64(const double *p) {
    double v;
    asm(PTXKIT_LD ".f64 %0, [%1];" : "=d"(v) : "l"(p));
    return v;
}
__device__ __forceinline__ uint2 ld_v2u32(const uint2 *p) {
    uint2 v;
    asm(PTXKIT_LD ".v2.u32 {%0, %1}, [%2];" : "=r"(v.x), "=r"(v.y) : "l"(p));
    return v;
}
__device__ __forceinline__ uint4 ld_v4u32(const uint4 *p) {
    uint4 v;
    asm(PTXKIT_LD ".v4.u32 {%0, %1, %2, %3}, [%4];"
        : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
    return v;
}
__device__ __forceinline__ int4 ld_v4s32(const int4 *p) {
    int4 v;
    asm(PTXKIT_LD ".v4.s32 {%0, %1, %2, %3}, [%4];"
        : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
    return v;
}
__device__ __forceinline__ float4 ld_v4f32(const float4 *p) {
    float4 v;
    asm(PTXKIT_LD ".v4.f32 {%0, %1, %2, %3}, [%4];"
        : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p));
    return v;
}
__device__ __forceinline__ double2 ld_v2f64(const double2 *p) {
    double2 v;
    asm(PTXKIT_LD ".v2.f64 {%0, %1}, [%2];" : "=d"(v.x), "=d"(v.y) : "l"(p));
    return v;
}
__device__ __forceinline__ ulonglong2 ld_v2u64(const ulonglong2 *p) {
    ulonglong2 v;
    asm(PTXKIT_LD ".v2.u64 {%0, %1}, [%2];" : "=l"(v.x), "=l"(v.y) : "l"(p));
    return v;
}
__device__ __forceinline__ longlong2 ld_v2s64(const longlong2 *p) {
    longlong2 v;
    asm(PTXKIT_LD ".v2.s64 {%0, %1}, [%2];" : "=l"(v.x), "=l"(v.y) : "l"(p));
    return v;
}
#endif

} // namespace ptxkit
