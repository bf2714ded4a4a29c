// The GEMM kernels' shared pieces: the order blocks take their tiles in,
// and the copies into shared memory, on <ptxkit/async.cuh>: from
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
#include <ptxkit/async.cuh>

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

// The tile of C (first row m0, first column n0) that block `pid` computes:
// blocks are numbered in groups of `group_m` tile rows (as Triton does), so
// that blocks running at the same time share their A and B panels in L2.
__device__ __forceinline__ void gemm_block_tile(int pid, int M, int N, int bm, int bn, int group_m, int *m0, int *n0) {
    const int tiles_m = (M + bm - 1) / bm, tiles_n = (N + bn - 1) / bn;
    const int per_group = group_m * tiles_n;
    const int first_m = pid / per_group * group_m;
    const int group_rows = min(tiles_m - first_m, group_m);
    *m0 = (first_m + (pid % per_group) % group_rows) * bm;
    *n0 = ((pid % per_group) / group_rows) * bn;
}
