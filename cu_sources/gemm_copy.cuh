// The GEMM family's copies into shared memory, on <ptxkit/async.cuh>: from
// sm_80 on cp.async (16 bytes .cg, since tiles are read once per block from
// L2; 4 and 8 bytes exist only as .ca), before it plain copies, whose
// commit and wait are then trivially satisfied.
//
// Each copy moves 4, 8 or 16 bytes and zero-fills the destination past
// `src_bytes` (0 .. the copy's size), so a tile at a matrix edge is read
// without a branch: the out-of-range part reads nothing and lands as zeros.
// A copy that reads nothing must still name a valid address; callers pass
// the matrix base then. async_commit() closes the group of this thread's
// copies since the last commit; async_wait<N>() waits until at most N of its
// groups are in flight. Other threads' copies are visible after the wait and
// a __syncthreads().
#pragma once
#include "ptxkit_async.cuh"

#if PTXKIT_HAS_CP_ASYNC
template <int BYTES> __device__ __forceinline__ void async_copy(void *dst, const void *src, unsigned src_bytes) {
    if constexpr (BYTES == 16) ptxkit::cp_async_cg16_zfill(dst, src, src_bytes);
    else ptxkit::cp_async_ca_zfill<BYTES>(dst, src, src_bytes);
}
__device__ __forceinline__ void async_commit() { ptxkit::cp_async_commit(); }
template <int N> __device__ __forceinline__ void async_wait() { ptxkit::cp_async_wait<N>(); }
#else
template <int BYTES> __device__ __forceinline__ void async_copy(void *dst, const void *src, unsigned src_bytes) {
    unsigned char *d = (unsigned char *)dst;
    const unsigned char *s = (const unsigned char *)src;
    for (unsigned i = 0; i < BYTES; i++) d[i] = i < src_bytes ? s[i] : 0;
}
__device__ __forceinline__ void async_commit() {}
template <int N> __device__ __forceinline__ void async_wait() {}
#endif
