// Production float64 GEMM on the FP64 tensor cores (DMMA, sm_80+):
// C = alpha * op(A) * op(B) + beta * C, row-major with leading dimensions,
// op(X) = X or X^T, storage as in gemm.cu (whose SIMT float64 kernel stays
// for GPUs without FP64 mma).
//
// Structure: a block computes a BM x BN tile of C; its warps each own a
// WM x WN warp tile of MT = WM / 16 by NT = WN / 8 mma tiles of 16 x 8,
// the accumulators in registers. The k loop runs in k-groups of 8: per mma
// tile, on sm_90, one mma.sync.m16n8k8.f64 (MMA_K 8) or two m16n8k4 (MMA_K
// 4), before sm_90 four m8n8k4 (the m16 shapes' fragments are two m8 ones
// stacked, so the registers are the same). Both operand tiles sit in
// shared memory as they are stored (no transposing copies), in a ring of
// STAGES buffers filled by cp.async (gemm_copy.cuh): 16-byte copies where
// the host found the matrix aligned for them (VEC 2), else 8-byte ones,
// zero-filled past M, N and K so that edges need no branch; while the block
// computes on one k-tile the next STAGES - 1 are in flight. A group's
// fragments are read from shared memory during the previous group's mma,
// a tile's first during the previous tile's last group, right after the
// one barrier per tile (gemm.cu's cross prefetch), so the tensor cores
// have queued work across it.
//
// Fragment layout (PTX ISA, mma.m16n8k8 .f64; k4 is its first half): lane
// (g, t) = (lane / 4, lane % 4) holds A[g + 8h][4j + t] (a[2j + h]), B[4j
// + t][g] (b[j]) and C[g + 8h][2t + i] (c[2h + i]). Which row of the block
// tile is an mma tile's row g + 8h is ours to choose (the same for C): row
// 2g + h of its 16, so a lane's two rows are neighbours; likewise mma
// tiles 2s and 2s + 1 of a warp's columns interleave, column g of tile 2s
// + e being 2g + e of their 16. And which k of the group is the mma's k 4j
// + t is ours too, as long as A and B agree: 2t + j, so a lane's two k's
// are neighbours. Then every fragment load is 16 bytes, two doubles a lane
// needs, in any layout: an operand stored K-contiguous (A as stored, B
// transposed) gives one row's two k's, one stored M- or N-contiguous its
// two rows (columns) at one k. A lane's part of C is, per pair of mma
// tiles, 2 rows of 4 neighbouring columns (16-byte stores).
//
// Bank conflicts: padding, not a swizzle, as it keeps cp.async's
// destinations plain row offsets. A 16-byte load is served 8 lanes at a
// time, (g, t) for two g's and four t's, which must hit the 8 distinct
// 16-byte units of a 128-byte row of banks. K-contiguous rows have BK + 4
// doubles: the lanes read unit t of rows 2g (+ 1), and two rows are BK + 4
// = 4 mod 8 units apart. M/N-contiguous rows have BM + 2 (BN + 2) doubles:
// the lanes read unit 8s + g of row 2t (+ 1), and two rows are BM + 2 = 2
// mod 8 units apart, so t moves by 2 units and g by 1.
//
// Sums: each element of C is a fixed sequence of DMMA steps over k (exact
// products, each accumulation rounded as an FMA), in the order the
// hardware adds within one mma: the same every run, not k order.
//
// Blocks run in groups of GROUP_M tile rows (L2 reuse, as gemm.cu), and
// blockIdx.z is the K slice; with GEMM_PARTIAL 1 slice z writes raw sums to
// workspace slice z, which gemm.cu's ptxkit_gemm_splitk_f64 adds in order.
//
// Injected: TRANS_A, TRANS_B, VEC_A, VEC_B (elements per copy: 1 or 2), BM,
// BN, BK (8, 16 or 32), WM, WN, MMA_K (4 or 8), STAGES, MIN_BLOCKS, GROUP_M,
// GEMM_PARTIAL.
// Entry point: ptxkit_gemm_dmma_f64, with the arguments of gemm.cu's
// ptxkit_gemm_f64 (flags: GEMM_FLAG_BETA, GEMM_FLAG_VECTOR_C).
#include "gemm_copy.cuh"

#ifndef TRANS_A
#define TRANS_A 0
#endif
#ifndef TRANS_B
#define TRANS_B 0
#endif
#ifndef VEC_A
#define VEC_A 2
#endif
#ifndef VEC_B
#define VEC_B 2
#endif
#ifndef BM
#define BM 128
#endif
#ifndef BN
#define BN 128
#endif
#ifndef BK
#define BK 16
#endif
#ifndef WM
#define WM 64
#endif
#ifndef WN
#define WN 32
#endif
#ifndef MMA_K
#define MMA_K 8
#endif
#ifndef STAGES
#define STAGES 3
#endif
#ifndef MIN_BLOCKS
#define MIN_BLOCKS 1
#endif
#ifndef GROUP_M
#define GROUP_M 8
#endif
#ifndef GEMM_PARTIAL
#define GEMM_PARTIAL 0
#endif

typedef double T;

#define GEMM_FLAG_BETA 1u
#define GEMM_FLAG_VECTOR_C 2u

#define WARPS_M (BM / WM)
#define WARPS_N (BN / WN)
#define THREADS (WARPS_M * WARPS_N * 32)
#define MT (WM / 16)     // mma tiles along M per warp
#define NT (WN / 8)      // along N (pairs interleave)

// Shared tiles: K-contiguous operands [rows][BK + 4], the others [BK][cols + 2].
#define LDA_S (TRANS_A ? BM + 2 : BK + 4)
#define LDB_S (TRANS_B ? BK + 4 : BN + 2)
#define STAGE_A (TRANS_A ? BK * LDA_S : BM * LDA_S)
#define STAGE_B (TRANS_B ? BN * LDB_S : BK * LDB_S)

static_assert(BM % WM == 0 && BN % WN == 0, "the warp tile must divide the block tile");
static_assert(WM % 16 == 0 && WN % 16 == 0, "warp tiles of whole 16 x 16 pairs of mma tiles");
static_assert(MMA_K == 4 || MMA_K == 8, "mma k of 4 or 8");
static_assert(BK % 8 == 0, "whole k-groups of 8 per k-tile");
static_assert(STAGES >= 2 && STAGES <= 8, "2 to 8 pipeline stages");
static_assert(THREADS <= 1024, "at most 1024 threads");
static_assert(VEC_A == 1 || VEC_A == 2, "VEC_A is 1 or 2 doubles");
static_assert(VEC_B == 1 || VEC_B == 2, "VEC_B is 1 or 2 doubles");

// ---- operand loader ----------------------------------------------------------
// A ROWS x COLS tile with COLS contiguous in memory (source row stride ld,
// shared row stride LDS_), VEC elements per copy. Thread t copies column
// (t % PER_ROW) * VEC of rows t / PER_ROW + i * ROW_STEP. Which of rows and
// columns run along K depends on the operand's layout: the caller passes
// the limits of both for each tile.
template <int ROWS, int COLS, int VEC, int LDS_> struct tile_loader {
    static constexpr int PER_ROW = COLS / VEC;
    static constexpr int ROW_STEP = THREADS / PER_ROW;
    static constexpr int COPIES = ROWS / ROW_STEP;
    static_assert(COLS % VEC == 0 && THREADS % PER_ROW == 0 && ROWS % ROW_STEP == 0,
                  "the block's copies must cover the tile evenly");
    const T *src; // the current tile's first element
    int row0, col;

    __device__ __forceinline__ void init(const T *tile, int tid) {
        src = tile;
        row0 = tid / PER_ROW;
        col = (tid % PER_ROW) * VEC;
    }
    // rows_left, cols_left: rows and columns of the matrix from the tile's
    // first on (past them copies read nothing and write zeros).
    __device__ __forceinline__ void load(T *stage, int rows_left, int cols_left, const T *base, long long ld) const {
        int left = cols_left - col;
        unsigned bytes = left <= 0 ? 0u : (unsigned)((left < VEC ? left : VEC) * (int)sizeof(T));
#pragma unroll
        for (int i = 0; i < COPIES; i++) {
            int row = row0 + i * ROW_STEP;
            unsigned size = row < rows_left ? bytes : 0u;
            async_copy<VEC * sizeof(T)>(stage + row * LDS_ + col,
                                        size ? (const void *)(src + (long long)row * ld + col) : (const void *)base,
                                        size);
        }
    }
};

#if TRANS_A
typedef tile_loader<BK, BM, VEC_A, LDA_S> a_loader; // rows k, columns m
#else
typedef tile_loader<BM, BK, VEC_A, LDA_S> a_loader; // rows m, columns k
#endif
#if TRANS_B
typedef tile_loader<BN, BK, VEC_B, LDB_S> b_loader; // rows n, columns k
#else
typedef tile_loader<BK, BN, VEC_B, LDB_S> b_loader; // rows k, columns n
#endif

// ---- the mma -------------------------------------------------------------------

__device__ __forceinline__ void mma_k4(T (&d)[4], T a0, T a1, T b0) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};"
                 : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
                 : "d"(a0), "d"(a1), "d"(b0));
#else
    // sm_80..sm_89: m8n8k4 only; rows g (a0, d[0..1]) and g + 8 (a1, d[2..3])
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};"
                 : "+d"(d[0]), "+d"(d[1])
                 : "d"(a0), "d"(b0));
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};"
                 : "+d"(d[2]), "+d"(d[3])
                 : "d"(a1), "d"(b0));
#endif
}

// d += A (16 x 8) * B (8 x 8), one k-group, from fragments a[4], b[2]: one
// m16n8k8 (MMA_K 8, sm_90) or two k 4 steps.
__device__ __forceinline__ void mma_group(T (&d)[4], const T (&a)[4], const T (&b)[2]) {
#if MMA_K == 8 && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%0,%1,%2,%3};"
                 : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
                 : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(b[0]), "d"(b[1]));
#else
    mma_k4(d, a[0], a[1], b[0]);
    mma_k4(d, a[2], a[3], b[1]);
#endif
}

// ---- fragments -------------------------------------------------------------------
// A k-group is 8 deep: two k quarters j of 4, read as one mma k 8 or two
// mma k 4. Within a group, lane (g, t)'s k of quarter j is 2t + j (both
// operands alike, so the product is the same sum of k's): a lane's two k's
// are neighbours, and every fragment load is 16 bytes whatever the layout.
//
// a[2j + h] = A[row 16p + 2g + h of the warp tile][k0 + 2t + j].
__device__ __forceinline__ void load_a(const T *as, int m_w, int p, int k0, int g, int t, T (&a)[4]) {
    const int row = m_w + 16 * p + 2 * g, kk = k0 + 2 * t;
#if TRANS_A
    double2 j0 = *(const double2 *)&as[kk * LDA_S + row], j1 = *(const double2 *)&as[(kk + 1) * LDA_S + row];
    a[0] = j0.x, a[1] = j0.y, a[2] = j1.x, a[3] = j1.y;
#else
    double2 h0 = *(const double2 *)&as[row * LDA_S + kk], h1 = *(const double2 *)&as[(row + 1) * LDA_S + kk];
    a[0] = h0.x, a[2] = h0.y, a[1] = h1.x, a[3] = h1.y;
#endif
}

// b[q][j] = B[k0 + 2t + j][column g of mma tile q], mma tiles 2s and 2s + 1
// at columns 16s + 2g and 16s + 2g + 1 of the warp tile.
__device__ __forceinline__ void load_b(const T *bs, int n_w, int k0, int g, int t, T (&b)[NT][2]) {
    const int kk = k0 + 2 * t;
#pragma unroll
    for (int s = 0; s < NT / 2; s++) {
        const int col = n_w + 16 * s + 2 * g;
#if TRANS_B
        double2 e0 = *(const double2 *)&bs[col * LDB_S + kk], e1 = *(const double2 *)&bs[(col + 1) * LDB_S + kk];
        b[2 * s][0] = e0.x, b[2 * s][1] = e0.y, b[2 * s + 1][0] = e1.x, b[2 * s + 1][1] = e1.y;
#else
        double2 j0 = *(const double2 *)&bs[kk * LDB_S + col], j1 = *(const double2 *)&bs[(kk + 1) * LDB_S + col];
        b[2 * s][0] = j0.x, b[2 * s + 1][0] = j0.y, b[2 * s][1] = j1.x, b[2 * s + 1][1] = j1.y;
#endif
    }
}

// ---- epilogue ------------------------------------------------------------------------
// A lane's C: for mma row tile p and column pair s, rows r = row0 + 16p +
// {0, 1} (h), columns c = col0 + 16s + {0, 1, 2, 3}, column 2i + e holding
// acc[p][2s + e][2h + i].

__device__ __forceinline__ void pair_values(const T (&acc)[MT][NT][4], int p, int s, int h, T *out) {
    out[0] = acc[p][2 * s][2 * h];
    out[1] = acc[p][2 * s + 1][2 * h];
    out[2] = acc[p][2 * s][2 * h + 1];
    out[3] = acc[p][2 * s + 1][2 * h + 1];
}

__device__ __forceinline__ void store_tile(const T (&acc)[MT][NT][4], T *C, long long ldc, int M, int N, int row0,
                                           int col0, T alpha, T beta, unsigned flags) {
    const bool read_c = flags & GEMM_FLAG_BETA, vector_c = flags & GEMM_FLAG_VECTOR_C;
#pragma unroll
    for (int p = 0; p < MT; p++)
#pragma unroll
        for (int h = 0; h < 2; h++) {
            int row = row0 + 16 * p + h;
            if (row >= M) continue;
            T *crow = C + (long long)row * ldc;
#pragma unroll
            for (int s = 0; s < NT / 2; s++) {
                int col = col0 + 16 * s;
                T v[4];
                pair_values(acc, p, s, h, v);
                T *c = crow + col;
                if (vector_c && col + 4 <= N) {
                    double2 lo = make_double2(alpha * v[0], alpha * v[1]), hi = make_double2(alpha * v[2], alpha * v[3]);
                    if (read_c) {
                        double2 olo = ((const double2 *)c)[0], ohi = ((const double2 *)c)[1];
                        lo.x += beta * olo.x, lo.y += beta * olo.y, hi.x += beta * ohi.x, hi.y += beta * ohi.y;
                    }
                    ((double2 *)c)[0] = lo;
                    ((double2 *)c)[1] = hi;
                } else {
#pragma unroll
                    for (int j = 0; j < 4; j++)
                        if (col + j < N) c[j] = read_c ? alpha * v[j] + beta * c[j] : alpha * v[j];
                }
            }
        }
}

// Split-K: raw sums of slice z (ldw a multiple of 2: columns past N hold
// zeros, never read back).
__device__ __forceinline__ void store_partial(const T (&acc)[MT][NT][4], T *W, long long ldw, int M, int row0,
                                              int col0) {
#pragma unroll
    for (int p = 0; p < MT; p++)
#pragma unroll
        for (int h = 0; h < 2; h++) {
            int row = row0 + 16 * p + h;
            if (row >= M) continue;
#pragma unroll
            for (int s = 0; s < NT / 2; s++) {
                int col = col0 + 16 * s;
                T v[4];
                pair_values(acc, p, s, h, v);
                T *w = W + (long long)row * ldw + col;
                if (col < ldw) *(double2 *)w = make_double2(v[0], v[1]);
                if (col + 2 < ldw) *(double2 *)(w + 2) = make_double2(v[2], v[3]);
            }
        }
}

// ---- the kernel ----------------------------------------------------------------------

extern "C" __global__ void __launch_bounds__(THREADS, MIN_BLOCKS)
    ptxkit_gemm_dmma_f64(const T *__restrict__ A, const T *__restrict__ B, T *C, int M, int N, int K, long long lda,
                         long long ldb, long long ldc, T alpha, T beta, unsigned flags, int k_per_split, T *workspace,
                         long long ldw) {
    extern __shared__ __align__(16) unsigned char gemm_smem[];
    T *As = (T *)gemm_smem;
    T *Bs = As + STAGES * STAGE_A;

    // The tile of this block, GROUP_M tile rows at a time.
    int m0, n0;
    gemm_block_tile(blockIdx.x, M, N, BM, BN, GROUP_M, &m0, &n0);

    // The K slice.
    const int k_begin = blockIdx.z * k_per_split;
    const int k_end = min(K, k_begin + k_per_split);
    const int k_tiles = k_end > k_begin ? (k_end - k_begin + BK - 1) / BK : 0;

    const int tid = threadIdx.x;
    a_loader la;
    b_loader lb;
#if TRANS_A
    la.init(A + (long long)k_begin * lda + m0, tid);
    const long long a_step = (long long)BK * lda;
#else
    la.init(A + (long long)m0 * lda + k_begin, tid);
    const long long a_step = BK;
#endif
#if TRANS_B
    lb.init(B + (long long)n0 * ldb + k_begin, tid);
    const long long b_step = BK;
#else
    lb.init(B + (long long)k_begin * ldb + n0, tid);
    const long long b_step = (long long)BK * ldb;
#endif

    // k-tile `tile` of the slice into its stage; past the last, nothing
    // (the caller still commits a group, keeping the count uniform).
    auto load_tile = [&](int tile) {
        if (tile >= k_tiles) return;
        int k_left = k_end - k_begin - tile * BK;
        int stage = tile % STAGES;
#if TRANS_A
        la.load(As + stage * STAGE_A, k_left, M - m0, A, lda);
#else
        la.load(As + stage * STAGE_A, M - m0, k_left, A, lda);
#endif
#if TRANS_B
        lb.load(Bs + stage * STAGE_B, N - n0, k_left, B, ldb);
#else
        lb.load(Bs + stage * STAGE_B, k_left, N - n0, B, ldb);
#endif
        la.src += a_step;
        lb.src += b_step;
    };

    // Prologue: tiles 0 .. STAGES - 2 in flight, one group each (empty
    // groups past the last tile keep the count uniform); once tile 0 has
    // landed, tile STAGES - 1 into the last stage.
#pragma unroll
    for (int s = 0; s < STAGES - 1; s++) {
        load_tile(s);
        async_commit();
    }
    async_wait<STAGES - 2>();
    __syncthreads();
    load_tile(STAGES - 1);
    async_commit();

    const int warp = tid / 32, lane = tid % 32;
    const int g = lane / 4, t = lane % 4;
    const int m_w = (warp / WARPS_N) * WM, n_w = (warp % WARPS_N) * WN;

    T acc[MT][NT][4];
#pragma unroll
    for (int p = 0; p < MT; p++)
#pragma unroll
        for (int q = 0; q < NT; q++)
#pragma unroll
            for (int i = 0; i < 4; i++) acc[p][q][i] = 0;

    // Fragments: a group's are all in registers before its first mma. B's
    // in two buffers, the next group's loaded as the group starts; A's one
    // mma row tile at a time, each refilled with the next group's as soon
    // as its mma are issued (half the registers of two buffers). The next
    // tile's first group is read during this tile's last, right after the
    // barrier that hands its stage back (which sits before that group's
    // mma, so the tensor cores have work queued across it).
    T a[MT][4], b[2][NT][2];
    if (k_tiles > 0) {
#pragma unroll
        for (int p = 0; p < MT; p++) load_a(As, m_w, p, 0, g, t, a[p]);
        load_b(Bs, n_w, 0, g, t, b[0]);
    }
    constexpr int GROUPS = BK / 8;
    for (int tile = 0; tile < k_tiles; tile++) {
        const int stage = tile % STAGES, next = stage + 1 == STAGES ? 0 : stage + 1;
#pragma unroll
        for (int grp = 0; grp < GROUPS; grp++) {
            const int cur = grp & 1;
            // where the next group's fragments are (none after the last)
            const T *nas = As + stage * STAGE_A, *nbs = Bs + stage * STAGE_B;
            int nk = (grp + 1) * 8;
            bool more = true;
            if (grp + 1 == GROUPS) {
                more = tile + 1 < k_tiles;
                if (more) {
                    // The next tile has landed (this thread's copies, then
                    // everyone's), and every warp holds its last fragments of
                    // this one, whose stage takes tile + STAGES.
                    async_wait<STAGES - 2>();
                    __syncthreads();
                    nas = As + next * STAGE_A, nbs = Bs + next * STAGE_B, nk = 0;
                    load_tile(tile + STAGES);
                    async_commit();
                }
            }
            if (more) load_b(nbs, n_w, nk, g, t, b[cur ^ 1]);
#pragma unroll
            for (int p = 0; p < MT; p++) {
#pragma unroll
                for (int q = 0; q < NT; q++) mma_group(acc[p][q], a[p], b[cur][q]);
                if (more) load_a(nas, m_w, p, nk, g, t, a[p]);
            }
        }
        // an odd group count leaves the next tile's first B fragments in buffer 1
        if (GROUPS % 2) {
#pragma unroll
            for (int q = 0; q < NT; q++) b[0][q][0] = b[1][q][0], b[0][q][1] = b[1][q][1];
        }
    }
    // no copy may still be writing shared memory when the block exits
    async_wait<0>();

    const int row0 = m0 + m_w + 2 * g, col0 = n0 + n_w + 4 * t;
#if GEMM_PARTIAL
    store_partial(acc, workspace + (long long)blockIdx.z * M * ldw, ldw, M, row0, col0);
#else
    store_tile(acc, C, ldc, M, N, row0, col0, alpha, beta, flags);
#endif
}
