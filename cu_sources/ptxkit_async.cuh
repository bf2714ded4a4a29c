// Asynchronous global -> shared copies (cp.async, sm_80 and later), for
// kernels that fill shared memory while they compute on an earlier buffer:
// the GEMM family's multi-stage pipelines (gemm.cu, gemm_ladder.cu).
//
// Each copy moves 4, 8 or 16 bytes and zero-fills the destination past
// `src_bytes` (0 .. the copy's size), so a tile at a matrix edge is read
// without a branch: the out-of-range part reads nothing and lands as zeros.
// A copy that reads nothing must still name a valid address; callers pass
// the matrix base then.
//
// Copies are grouped: async_commit() closes the group of every copy this
// thread issued since the last commit, async_wait<N>() waits until at most
// N of this thread's groups are still in flight. Other threads' copies are
// visible after the wait and a __syncthreads().
#pragma once

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
#define PTXKIT_HAS_CP_ASYNC 1
#else
#define PTXKIT_HAS_CP_ASYNC 0
#endif

__device__ __forceinline__ unsigned ptxkit_smem_addr(const void *p) {
    return (unsigned)__cvta_generic_to_shared(p);
}

#if PTXKIT_HAS_CP_ASYNC
// 16 bytes bypassing L1 (.cg: tiles are read once per block, from L2).
__device__ __forceinline__ void async_copy16(void *dst, const void *src, unsigned src_bytes) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(ptxkit_smem_addr(dst)), "l"(src),
                 "r"(src_bytes)
                 : "memory");
}
// 4 and 8 bytes exist only as .ca (cached in L1 too).
__device__ __forceinline__ void async_copy8(void *dst, const void *src, unsigned src_bytes) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;" ::"r"(ptxkit_smem_addr(dst)), "l"(src),
                 "r"(src_bytes)
                 : "memory");
}
__device__ __forceinline__ void async_copy4(void *dst, const void *src, unsigned src_bytes) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;" ::"r"(ptxkit_smem_addr(dst)), "l"(src),
                 "r"(src_bytes)
                 : "memory");
}
__device__ __forceinline__ void async_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
template <int N> __device__ __forceinline__ void async_wait() {
    asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
}
#else
// Before sm_80: plain copies (the wait is then trivially satisfied).
__device__ __forceinline__ void async_copy_bytes(void *dst, const void *src, unsigned src_bytes, unsigned size) {
    unsigned char *d = (unsigned char *)dst;
    const unsigned char *s = (const unsigned char *)src;
    for (unsigned i = 0; i < size; i++) d[i] = i < src_bytes ? s[i] : 0;
}
__device__ __forceinline__ void async_copy16(void *dst, const void *src, unsigned src_bytes) {
    async_copy_bytes(dst, src, src_bytes, 16);
}
__device__ __forceinline__ void async_copy8(void *dst, const void *src, unsigned src_bytes) {
    async_copy_bytes(dst, src, src_bytes, 8);
}
__device__ __forceinline__ void async_copy4(void *dst, const void *src, unsigned src_bytes) {
    async_copy_bytes(dst, src, src_bytes, 4);
}
__device__ __forceinline__ void async_commit() {}
template <int N> __device__ __forceinline__ void async_wait() {}
#endif

// One element of 4 or 8 bytes, or one 16-byte vector, by size.
template <int BYTES> __device__ __forceinline__ void async_copy(void *dst, const void *src, unsigned src_bytes);
template <> __device__ __forceinline__ void async_copy<4>(void *dst, const void *src, unsigned src_bytes) {
    async_copy4(dst, src, src_bytes);
}
template <> __device__ __forceinline__ void async_copy<8>(void *dst, const void *src, unsigned src_bytes) {
    async_copy8(dst, src, src_bytes);
}
template <> __device__ __forceinline__ void async_copy<16>(void *dst, const void *src, unsigned src_bytes) {
    async_copy16(dst, src, src_bytes);
}
