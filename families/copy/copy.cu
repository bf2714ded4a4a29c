// Vectorized device-to-device copy of any byte count between any addresses.
// Injected: BLOCK_SIZE, LOAD_OP (see ptxkit_load.cuh), UNROLL (independent
// vector loads in flight per thread before the first store).
#include "copy_defaults.h"
#include <ptxkit/load.cuh>
#include <ptxkit/grid.cuh>

#ifndef BLOCK_SIZE
#define BLOCK_SIZE COPY_DEFAULT_BLOCK
#endif
#ifndef UNROLL
#define UNROLL COPY_DEFAULT_UNROLL
#endif
typedef unsigned long long u64;

// Bytes [0, head) and [n - tail, n) are copied one per thread: they are the
// few bytes the vector body cannot reach without leaving the buffers.
__device__ __forceinline__ void copy_edges(unsigned char *dst, const unsigned char *src, u64 n,
                                           u64 head, u64 tail) {
    u64 gid = (u64)blockIdx.x * BLOCK_SIZE + threadIdx.x;
    if (gid < head) dst[gid] = ptxkit::ld_u8(src + gid);
    if (gid < tail) dst[n - tail + gid] = ptxkit::ld_u8(src + n - tail + gid);
}

// Requires (dst - src) % sizeof(VT) == 0: the vector body is aligned on both
// sides once dst is. UNROLL loads are issued before any store so that each
// thread keeps several 16-byte requests in flight.
#define DEFINE_COPY_VEC(NAME, VT, LOAD)                                                  \
    extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)                            \
    NAME(unsigned char *dst, const unsigned char *src, u64 n) {                          \
        ptxkit::grid_dependency_begin();                                                 \
        const u64 w = sizeof(VT);                                                        \
        u64 head = (w - ((u64)dst & (w - 1))) & (w - 1);                                 \
        if (head > n) head = n;                                                          \
        u64 count = (n - head) / w;                                                      \
        u64 tail = n - head - count * w;                                                 \
        copy_edges(dst, src, n, head, tail);                                             \
        VT *d = (VT *)(dst + head);                                                      \
        const VT *s = (const VT *)(src + head);                                          \
        COPY_BODY(VT, LOAD)                                                              \
    }

// Each block copies whole contiguous tiles of BLOCK_SIZE x UNROLL vectors (its
// UNROLL loads side by side in memory, not a grid apart as in a grid-stride
// loop: faster on an H100), then the last partial tile grid-stride.
#define COPY_BODY(VT, LOAD)                                                              \
    const u64 tile = (u64)BLOCK_SIZE * UNROLL;                                           \
    u64 tiles = count / tile;                                                            \
    for (u64 t = blockIdx.x; t < tiles; t += gridDim.x) {                                \
        u64 base = t * tile + threadIdx.x;                                               \
        VT v[UNROLL];                                                                    \
        _Pragma("unroll") for (int k = 0; k < UNROLL; k++) v[k] = LOAD(s + base + k * BLOCK_SIZE); \
        _Pragma("unroll") for (int k = 0; k < UNROLL; k++) d[base + k * BLOCK_SIZE] = v[k];         \
    }                                                                                    \
    for (u64 i = tiles * tile + (u64)blockIdx.x * BLOCK_SIZE + threadIdx.x; i < count;   \
         i += (u64)gridDim.x * BLOCK_SIZE)                                               \
        d[i] = LOAD(s + i);

DEFINE_COPY_VEC(ptxkit_copy_vec16, uint4, ptxkit::ld_v4u32)
DEFINE_COPY_VEC(ptxkit_copy_vec8, uint2, ptxkit::ld_v2u32)
DEFINE_COPY_VEC(ptxkit_copy_vec4, unsigned, ptxkit::ld_u32)

// For addresses that are not mutually 4-byte aligned: dst words are aligned,
// and each is assembled from the two aligned source words it straddles with a
// funnel shift, so every load and store is a full aligned word. Only words
// whose two source words lie wholly inside the source are done this way.
extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)
ptxkit_copy_shift(unsigned char *dst, const unsigned char *src, u64 n) {
    ptxkit::grid_dependency_begin();
    long long p = (long long)((4 - ((u64)dst & 3)) & 3);     // bytes until dst is aligned
    u64 s = (u64)src + p;
    const unsigned *a = (const unsigned *)(s & ~(u64)3);      // aligned source words
    unsigned r = (unsigned)(s & 3);
    long long w0 = ((u64)a >= (u64)src) ? 0 : 1;
    // last word w needs a[w + 1] inside the source: (a + 4w + 8) <= src + n
    long long lim = (long long)((u64)src + n) - (long long)(u64)a - 8;
    long long w1 = lim >= 0 ? lim / 4 + 1 : 0;                // words [w0, w1)
    if (w1 < w0) w1 = w0;
    u64 head = (u64)(p + 4 * w0);
    if (head > n) head = n;
    u64 body_end = (u64)(p + 4 * w1);
    if (body_end < head) body_end = head;
    if (body_end > n) body_end = n;
    copy_edges(dst, src, n, head, n - body_end);
    unsigned *d = (unsigned *)(dst + p);
    u64 stride = (u64)gridDim.x * BLOCK_SIZE;
    for (u64 w = (u64)w0 + (u64)blockIdx.x * BLOCK_SIZE + threadIdx.x; w < (u64)w1; w += stride) {
        unsigned lo = ptxkit::ld_u32(a + w), hi = ptxkit::ld_u32(a + w + 1);
        d[w] = __funnelshift_r(lo, hi, 8 * r);
    }
}
