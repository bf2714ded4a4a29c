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

// A compile-time bool as a value, to pass to a generic lambda (a main loop
// written once, instantiated with and without bounds checks).
template <bool B> struct flag {
    static constexpr bool value = B;
};

// ---- operand loader ----------------------------------------------------------
// A ROWS x COLS tile of T with COLS contiguous in memory (source row stride
// ld, shared row stride LDS_), VEC elements per copy, THREADS threads.
// Thread t copies column (t % PER_ROW) * VEC of rows t / PER_ROW + i *
// ROW_STEP; where one pass of the block covers more rows than the tile
// has, the threads past its last row copy nothing. Which of rows and
// columns run along K depends on the operand's layout: the caller passes
// the limits of both for each tile, and advances `src` by one k-tile. The
// thread's source address and the ROW_STEP rows between its copies are
// computed once, so that a tile's copies cost an add each, not a 64-bit
// multiply-add chain that the warp waits on ahead of its FMAs or mma.
template <typename T, int THREADS, int ROWS, int COLS, int VEC, int LDS_> struct tile_loader {
    static constexpr int PER_ROW = COLS / VEC;
    static constexpr int ROW_STEP = THREADS / PER_ROW;
    static constexpr int COPIES = ROW_STEP >= ROWS ? 1 : ROWS / ROW_STEP;
    static_assert(COLS % VEC == 0 && THREADS % PER_ROW == 0 && (ROW_STEP >= ROWS || ROWS % ROW_STEP == 0),
                  "the block's copies must cover the tile evenly");
    const T *src; // this thread's first copy in the current tile
    long long step; // ROW_STEP rows of the source
    int row0, col;

    __device__ __forceinline__ void init(const T *tile, int tid, long long ld) {
        row0 = tid / PER_ROW;
        col = (tid % PER_ROW) * VEC;
        src = tile + row0 * ld + col;
        step = ROW_STEP * ld;
    }
    // rows_left, cols_left: rows and columns of the matrix from the tile's
    // first on (past them copies read nothing and write zeros).
    // FAST: the whole tile lies inside the matrix (the caller knows), so
    // every copy is a full one with no bounds to check.
    template <bool FAST>
    __device__ __forceinline__ void load(T *stage, int rows_left, int cols_left, const T *base) const {
        if (ROW_STEP > ROWS && row0 >= ROWS) return;
        const T *from = src;
        if constexpr (FAST) {
#pragma unroll
            for (int i = 0; i < COPIES; i++, from += step)
                async_copy<VEC * sizeof(T)>(stage + (row0 + i * ROW_STEP) * LDS_ + col, from, VEC * sizeof(T));
        } else {
            int left = cols_left - col;
            unsigned bytes = left <= 0 ? 0u : (unsigned)((left < VEC ? left : VEC) * (int)sizeof(T));
#pragma unroll
            for (int i = 0; i < COPIES; i++, from += step) {
                int row = row0 + i * ROW_STEP;
                unsigned size = row < rows_left ? bytes : 0u;
                async_copy<VEC * sizeof(T)>(stage + row * LDS_ + col, size ? (const void *)from : (const void *)base,
                                            size);
            }
        }
    }
};

#if PTXKIT_HAS_BULK_COPY
// A tensor map (the driver's CUtensorMap, encoded by the host with
// cuTensorMapEncodeTiled), passed by value as a __grid_constant__ kernel
// parameter: the tensor memory accelerator (sm_90) copies a whole box of a
// 2-D tile into shared memory from one instruction, zero-filling what lies
// outside the matrix, so the copies cost the block one thread's few
// instructions a tile instead of every thread's address arithmetic.
struct alignas(64) tma_desc {
    unsigned long long opaque[16];
};
// The box of `map` whose first element is (x, y) (x the contiguous
// coordinate) into shared dst (aligned as the map's swizzle needs),
// completing its bytes on bar. Issued by one thread.
__device__ __forceinline__ void tma_load_2d(void *dst, const tma_desc *map, int x, int y, unsigned long long *bar) {
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], "
                 "[%4];" ::"r"(ptxkit::shared_address(dst)),
                 "l"((unsigned long long)map), "r"(x), "r"(y), "r"(ptxkit::shared_address(bar))
                 : "memory");
}
// The same for a 3-D map: the box whose first element is (x, y, z).
__device__ __forceinline__ void tma_load_3d(void *dst, const tma_desc *map, int x, int y, int z,
                                            unsigned long long *bar) {
    asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, "
                 "%4}], [%5];" ::"r"(ptxkit::shared_address(dst)),
                 "l"((unsigned long long)map), "r"(x), "r"(y), "r"(z), "r"(ptxkit::shared_address(bar))
                 : "memory");
}
#endif

// One k-tile of both operands into their stages (as, bs), then both loaders
// on to the next tile: TRANS_A / TRANS_B say which of each tile's sides
// runs along K; k_left, m_left, n_left are what is left of K, M and N
// from the tile's first row and column.
template <bool FAST, bool TRANS_A_, bool TRANS_B_, typename T, typename LA, typename LB>
__device__ __forceinline__ void load_operands(LA &la, LB &lb, T *as, T *bs, int k_left, int m_left, int n_left,
                                              const T *A, const T *B, long long a_step, long long b_step) {
    if constexpr (TRANS_A_) la.template load<FAST>(as, k_left, m_left, A);
    else la.template load<FAST>(as, m_left, k_left, A);
    if constexpr (TRANS_B_) lb.template load<FAST>(bs, n_left, k_left, B);
    else lb.template load<FAST>(bs, k_left, n_left, B);
    la.src += a_step;
    lb.src += b_step;
}

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
