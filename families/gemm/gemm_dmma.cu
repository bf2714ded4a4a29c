// Production float64 GEMM on the FP64 tensor cores (DMMA, sm_80+), and
// float32 GEMM on them on sm_90 (GEMM_F32_IN, below):
// C = alpha * op(A) * op(B) + beta * C, row-major with leading dimensions,
// op(X) = X or X^T, storage as in gemm.cu (whose SIMT float64 kernel stays
// for GPUs without FP64 mma).
//
// Structure: a block computes a BM x BN tile of C; its warps each own a
// WM x WN warp tile of MT = WM / 16 by NT = WN / 8 mma tiles of 16 x 8,
// the accumulators in registers. One k-step is MMA_K deep: on sm_90 one
// mma.sync.m16n8k{4,8,16}.f64 per mma tile, before sm_90 the same product
// as 2 * MMA_K / 4 mma.sync.m8n8k4 (the m16 shapes' fragments are two m8
// ones stacked, so the registers are the same). Both operand tiles sit in
// shared memory as they are stored (no transposing copies), in a ring of
// STAGES buffers filled by cp.async (gemm_copy.cuh): 16-byte copies where
// the host found the matrix aligned for them (VEC 2), else 8-byte ones,
// zero-filled past M, N and K so that edges need no branch; while the block
// computes on one k-tile the next STAGES - 1 are in flight. On sm_90, for A
// and B as stored (GEMM_TMA), the tensor memory accelerator fills the
// stages instead, onto mbarriers (see the kernel). Fragments are
// double-buffered in registers: each k-step's are read from shared memory
// during the previous step's mma, a tile's first during the previous
// tile's last step, right after the one barrier per tile (gemm.cu's cross
// prefetch), so the tensor cores have queued work across it. MMA_K is 4 by
// default on the cp.async path: 8 and 16 hold two and four times the
// fragments, which beside 64 accumulators a lane spill there (ptxas -v,
// sm_90); the tensor-map path, with no loader state, holds k 8's (the
// host's gemm_tma_mma_k).
//
// Fragment layout (PTX ISA, mma.m16n8k16 .f64; the k4 and k8 shapes are its
// prefixes): lane (g, t) = (lane / 4, lane % 4) holds A[g + 8h][4j + t]
// (a[2j + h]), B[4j + t][g] (b[j]) and C[g + 8h][2t + i] (c[2h + i]).
// Which row of the block tile is an mma tile's row g + 8h is ours to choose
// (the same for C): row 2g + h of its 16, so a lane's two rows are
// neighbours; likewise mma tiles 2s and 2s + 1 of a warp's columns
// interleave, column g of tile 2s + e being 2g + e of their 16. Then an
// operand stored M- or N-contiguous (A transposed, B not) gives a lane
// both of its values for one k as one 16-byte load, and a lane's part of C
// is, per pair of mma tiles, 2 rows of 4 neighbouring columns (stored in
// 16-byte pieces traded with the neighbouring lane, see the epilogue).
// An operand stored K-contiguous (A not transposed, B transposed) is read
// one double per fragment register.
//
// Bank conflicts: padding, not a swizzle, as it keeps cp.async's
// destinations plain row offsets. M/N-contiguous rows have BM + 4 (BN + 4)
// doubles: the 8 lanes of a 16-byte load phase, (g, t) for two g's and
// four t's, read row t at unit 8s + g, and a row of (BM + 4) / 2 = 2 mod
// 8 units puts them on 8 distinct units. K-contiguous rows have BK + 2
// doubles: the 16 lanes of an 8-byte load phase read rows 2g + h (g 0..3)
// at column t, and a row of BK + 2 = 2 mod 16 doubles puts rows 0, 2, 4, 6
// 4 doubles apart, so the 16 addresses cover the 16 double-wide banks.
//
// Sums: each element of C is a fixed sequence of DMMA steps over k (exact
// products, each accumulation rounded as an FMA), in the order the
// hardware adds within one mma: the same every run, not k order.
//
// Blocks run in groups of GROUP_M tile rows (L2 reuse, as gemm.cu), and
// blockIdx.z is the K slice; with GEMM_PARTIAL 1 slice z writes raw sums to
// workspace slice z, which gemm.cu's ptxkit_gemm_splitk_f64 adds in order.
//
// Injected: GEMM_F32_IN, TRANS_A, TRANS_B, VEC_A, VEC_B (elements per
// copy: 1 or 16 bytes' worth), BM, BN, BK, WM, WN, MMA_K (4, 8 or 16),
// STAGES, MIN_BLOCKS, GROUP_M, GEMM_PARTIAL, GEMM_TMA.
// Entry point: ptxkit_gemm_dmma_f64, with the arguments of gemm.cu's
// ptxkit_gemm_f64 (flags: GEMM_FLAG_BETA, GEMM_FLAG_VECTOR_C).
#include "gemm_copy.cuh"
#include <ptxkit/grid.cuh>

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
#define MMA_K 4
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

// GEMM_F32_IN 1: float32 A, B and C on the same tensor cores, either
// path (sm_90's only): fragments are converted to double as they are
// loaded from shared memory, so every product of two floats is exact and
// the sums are double's; C is rounded to float once, after alpha and beta
// (applied in double). Entry ptxkit_gemm_dmma_f32; alpha, beta, workspace
// double.
#ifndef GEMM_F32_IN
#define GEMM_F32_IN 0
#endif

typedef double T; // the mma's operands and sums
#if GEMM_F32_IN
typedef float TS; // A, B and C as stored
typedef float2 TS2;
#define GEMM_DMMA_ENTRY ptxkit_gemm_dmma_f32
#else
typedef double TS;
typedef double2 TS2;
#define GEMM_DMMA_ENTRY ptxkit_gemm_dmma_f64
#endif

#define GEMM_FLAG_BETA 1u
#define GEMM_FLAG_VECTOR_C 2u

#define WARPS_M (BM / WM)
#define WARPS_N (BN / WN)
#define THREADS (WARPS_M * WARPS_N * 32)
#define MT (WM / 16)     // mma tiles along M per warp
#define NT (WN / 8)      // along N (pairs interleave)
#define KQ (MMA_K / 4)   // k quarters of 4 per mma
// float64 from tensor maps: where a warp has one row of mma tiles, B's
// mma tiles 2s and 2s + 1 take columns in both halves of each chunk
// (8-byte loads without bank conflicts), else neighbouring columns of one
// chunk (one 16-byte load at mma k 4). Larger warp tiles, whose more mma
// a step hide the conflicts, ran slower split (notebook section 35).
#define B_HALVES (GEMM_TMA && !GEMM_F32_IN && MT == 1)

// Shared tiles: K-contiguous operands [rows][BK + 2], the others [BK][cols + 4].
// Padding of 16 bytes on K-contiguous rows and 32 on the others (2 and 4
// doubles, 4 and 8 floats), keeping rows whole 16-byte copies.
#define PAD_K (16 / (int)sizeof(TS))
#define PAD_MN (32 / (int)sizeof(TS))
#define LDA_S (TRANS_A ? BM + PAD_MN : BK + PAD_K)
#define LDB_S (TRANS_B ? BK + PAD_K : BN + PAD_MN)
#define STAGE_A (TRANS_A ? BK * LDA_S : BM * LDA_S)
#define STAGE_B (TRANS_B ? BN * LDB_S : BK * LDB_S)

static_assert(BM % WM == 0 && BN % WN == 0, "the warp tile must divide the block tile");
static_assert(WM % 16 == 0 && WN % 16 == 0, "warp tiles of whole 16 x 16 pairs of mma tiles");
static_assert(MMA_K == 4 || MMA_K == 8 || MMA_K == 16, "mma k of 4, 8 or 16");
static_assert(BK % MMA_K == 0, "whole mma steps per k-tile");
static_assert(STAGES >= 2 && STAGES <= 8, "2 to 8 pipeline stages");
static_assert(THREADS <= 1024, "at most 1024 threads");
static_assert(VEC_A == 1 || VEC_A * sizeof(TS) == 16, "VEC_A is 1 element or 16 bytes");
static_assert(VEC_B == 1 || VEC_B * sizeof(TS) == 16, "VEC_B is 1 element or 16 bytes");

// GEMM_TMA 1 or 2 (sm_90, A and B as stored, both 16-byte aligned, k-tiles
// of 16 or 32, an even number of mma steps a tile; the host passes the two
// tensor maps): the tensor memory accelerator fills the stages (see the
// kernel), tiles sit unpadded in shared memory with the 128-byte swizzle.
// A's map has boxes of 16 k (one swizzle line a row), one or two a stage.
// B's map is 2-D (n, k; the contiguous coordinate first) with boxes of 16
// columns, one copy each (1), or 3-D (n % 16, k, n / 16) with the block's
// BN / 16 groups in one box (2, where 16 divides N).
#ifndef GEMM_TMA
#define GEMM_TMA 0
#endif
#if GEMM_TMA
static_assert(!TRANS_A && !TRANS_B && (BK == 16 || BK == 32) && BK / MMA_K % 2 == 0 && BN % 16 == 0,
              "the tensor-map path takes A and B as stored, k-tiles of 16 or 32 and an even number of mma steps");
static_assert(PTXKIT_HAS_BULK_COPY, "the tensor-map path needs sm_90");
#define TMA_LINE (128 / (int)sizeof(TS)) // elements in the swizzle's 128-byte line
#define TMA_STAGE_A (BM * BK) // BK / TMA_LINE boxes of BM rows of one line
#define TMA_STAGE_B (BN * BK) // BN / TMA_LINE boxes of BK rows of TMA_LINE columns
#endif
// float32 operands: one line of 32 k a row of A's tile (one box a k-tile),
// B's columns in groups of 32, a warp's columns whole groups (see the
// kernel's fragment offsets)
static_assert(!GEMM_F32_IN || (BK == 32 && WN % 32 == 0),
              "float32 operands take k-tiles of 32 and warp tiles of whole 32-column groups");

#if TRANS_A
typedef tile_loader<TS, THREADS, BK, BM, VEC_A, LDA_S> a_loader; // rows k, columns m
#else
typedef tile_loader<TS, THREADS, BM, BK, VEC_A, LDA_S> a_loader; // rows m, columns k
#endif
#if TRANS_B
typedef tile_loader<TS, THREADS, BN, BK, VEC_B, LDB_S> b_loader; // rows n, columns k
#else
typedef tile_loader<TS, THREADS, BK, BN, VEC_B, LDB_S> b_loader; // rows k, columns n
#endif

// ---- the mma -------------------------------------------------------------------

// d += A (16 x MMA_K) * B (MMA_K x 8) from fragments a[2 * KQ], b[KQ].
__device__ __forceinline__ void mma_step(T (&d)[4], const T *a, const T *b) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#if MMA_K == 16
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7,%8,%9,%10,%11}, "
                 "{%12,%13,%14,%15}, {%0,%1,%2,%3};"
                 : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
                 : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(a[4]), "d"(a[5]), "d"(a[6]), "d"(a[7]), "d"(b[0]),
                   "d"(b[1]), "d"(b[2]), "d"(b[3]));
#elif MMA_K == 8
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%0,%1,%2,%3};"
                 : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
                 : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(b[0]), "d"(b[1]));
#else
    asm volatile("mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};"
                 : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
                 : "d"(a[0]), "d"(a[1]), "d"(b[0]));
#endif
#else
    // sm_80..sm_89: m8n8k4 only; rows g (a[2j], d[0..1]) and g + 8 (a[2j + 1], d[2..3])
#pragma unroll
    for (int j = 0; j < KQ; j++) {
        asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};"
                     : "+d"(d[0]), "+d"(d[1])
                     : "d"(a[2 * j]), "d"(b[j]));
        asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};"
                     : "+d"(d[2]), "+d"(d[3])
                     : "d"(a[2 * j + 1]), "d"(b[j]));
    }
#endif
}

// ---- fragments -------------------------------------------------------------------
#if GEMM_F32_IN
// float32 on the cp.async path: a lane's rows of an mma tile are g and g + 8
// (a[p][2j + h] = A[row 16p + g + 8h][k + 4j + t]) and its columns of mma
// tiles 2s and 2s + 1 are 16s + g and 16s + g + 8 (b[2s + e][j]), each
// value one 4-byte load: with rows of BK + 4 floats (16-byte copies need
// whole vectors a row, so not BK + 2) the 32 lanes of a K-contiguous load
// fall on banks 4g + t, and those of an M/N-contiguous one (rows of BM +
// 8) on 8t + g: no conflicts either way.
__device__ __forceinline__ void load_a(const TS *as, int m_w, int k, int g, int t, T (&a)[MT][2 * KQ]) {
#pragma unroll
    for (int p = 0; p < MT; p++)
#pragma unroll
        for (int j = 0; j < KQ; j++)
#pragma unroll
            for (int h = 0; h < 2; h++) {
                const int row = m_w + 16 * p + g + 8 * h, kk = k + 4 * j + t;
                a[p][2 * j + h] = TRANS_A ? as[kk * LDA_S + row] : as[row * LDA_S + kk];
            }
}

__device__ __forceinline__ void load_b(const TS *bs, int n_w, int k, int g, int t, T (&b)[NT][KQ]) {
#pragma unroll
    for (int s = 0; s < NT / 2; s++)
#pragma unroll
        for (int j = 0; j < KQ; j++)
#pragma unroll
            for (int e = 0; e < 2; e++) {
                const int col = n_w + 16 * s + g + 8 * e, kk = k + 4 * j + t;
                b[2 * s + e][j] = TRANS_B ? bs[col * LDB_S + kk] : bs[kk * LDB_S + col];
            }
}
#else
// as: the stage's A tile; m_w: the warp's first row in the block tile; k:
// the step's first k in the tile. a[p][2j + h] = A[row 16p + 2g + h][k + 4j + t].
__device__ __forceinline__ void load_a(const TS *as, int m_w, int k, int g, int t, T (&a)[MT][2 * KQ]) {
#pragma unroll
    for (int p = 0; p < MT; p++)
#pragma unroll
        for (int j = 0; j < KQ; j++) {
            int row = m_w + 16 * p + 2 * g, kk = k + 4 * j + t;
#if TRANS_A
            const TS2 v = *(const TS2 *)&as[kk * LDA_S + row];
            a[p][2 * j] = v.x, a[p][2 * j + 1] = v.y;
#else
            a[p][2 * j] = as[row * LDA_S + kk];
            a[p][2 * j + 1] = as[(row + 1) * LDA_S + kk];
#endif
        }
}

// b[q][j] = B[k + 4j + t][column g of mma tile q], mma tiles 2s and 2s + 1
// at columns 16s + 2g and 16s + 2g + 1 of the warp tile.
__device__ __forceinline__ void load_b(const TS *bs, int n_w, int k, int g, int t, T (&b)[NT][KQ]) {
#pragma unroll
    for (int s = 0; s < NT / 2; s++)
#pragma unroll
        for (int j = 0; j < KQ; j++) {
            int col = n_w + 16 * s + 2 * g, kk = k + 4 * j + t;
#if TRANS_B
            b[2 * s][j] = bs[col * LDB_S + kk];
            b[2 * s + 1][j] = bs[(col + 1) * LDB_S + kk];
#else
            const TS2 v = *(const TS2 *)&bs[kk * LDB_S + col];
            b[2 * s][j] = v.x, b[2 * s + 1][j] = v.y;
#endif
        }
}
#endif

// ---- epilogue ------------------------------------------------------------------------
// A lane's C: for mma row tile p and column pair s, rows r = row0 + 16p +
// {0, 1} (h), columns c = col0 + 16s + {0, 1, 2, 3}, column 2i + e holding
// acc[p][2s + e][2h + i].
//
// Stored as they lie, a lane's 32 bytes of a row would take two 16-byte
// stores, each filling half of every 32-byte sector it touches, and L2
// would take twice the sectors C holds (ncu at 4096 x 4096 x 64, where
// storing C is most of the work). So lanes t and t ^ 1 (same g, their
// columns neighbours) trade halves first: for sector e of the pair (the
// 4 columns of lane 2u + e), the even lane writes its first 2 columns and
// the odd lane its last 2, and each store fills whole sectors.
//
// C's stores are marked evict-first (st.global.cs): nothing in this kernel
// reads C back, and where C outgrows L2 (8192 x 8192 x 64: 512 MB against
// 50) its lines would otherwise push out the operand tiles the other
// blocks still read. The split-K partials are stored plainly: the second
// pass reads them back (evict-first there lost at 64 x 4096 x 4096).

#if GEMM_F32_IN
// float32's C, whose rows and columns follow the fragment loads: for mma
// row tile p and row h a lane's row is row0 (the warp's row g) + 16p + 8h.
// On the tensor-map path (the kernel's fragment offsets), for column pair
// s it holds acc[p][2s][2h], acc[p][2s + 1][2h], acc[p][2s][2h + 1] and
// acc[p][2s + 1][2h + 1] at 4 neighbouring columns 32 (s / 2) + 8 (s % 2)
// on from col0 (the warp's first column + 16 (t % 2) + 4 (t / 2)): one
// 16-byte store, the four lanes of a row filling two whole 32-byte
// sectors. On the cp.async path it holds acc[p][2s + e][2h] and [2h + 1]
// at 2 neighbouring columns 16s + 8e on from col0 (the warp's first + 2t):
// one 8-byte store, the four lanes filling one sector.
#define RUN (GEMM_TMA ? 4 : 2) // neighbouring columns of a lane's row
template <typename Store>
__device__ __forceinline__ void for_each_run(const T (&acc)[MT][NT][4], int M, int row0, Store store) {
#pragma unroll
    for (int p = 0; p < MT; p++)
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const int row = row0 + 16 * p + 8 * h;
            if (row >= M) continue;
#pragma unroll
            for (int s = 0; s < NT / 2; s++) {
#if GEMM_TMA
                const T v[RUN] = {acc[p][2 * s][2 * h], acc[p][2 * s + 1][2 * h], acc[p][2 * s][2 * h + 1],
                                  acc[p][2 * s + 1][2 * h + 1]};
                store(row, 32 * (s / 2) + 8 * (s % 2), v);
#else
#pragma unroll
                for (int e = 0; e < 2; e++) {
                    const T v[RUN] = {acc[p][2 * s + e][2 * h], acc[p][2 * s + e][2 * h + 1]};
                    store(row, 16 * s + 8 * e, v);
                }
#endif
            }
        }
}

__device__ __forceinline__ void store_tile(const T (&acc)[MT][NT][4], TS *C, long long ldc, int M, int N, int row0,
                                           int col0, T alpha, T beta, unsigned flags) {
    const bool read_c = flags & GEMM_FLAG_BETA, vector_c = flags & GEMM_FLAG_VECTOR_C;
    for_each_run(acc, M, row0, [&](int row, int offset, const T(&v)[RUN]) {
        const int col = col0 + offset;
        TS *c = C + (long long)row * ldc + col;
        if (vector_c && col + RUN <= N) {
            float out[RUN];
#pragma unroll
            for (int j = 0; j < RUN; j++) out[j] = (float)(read_c ? alpha * v[j] + beta * (T)c[j] : alpha * v[j]);
#if GEMM_TMA
            __stcs((float4 *)c, make_float4(out[0], out[1], out[2], out[3]));
#else
            __stcs((float2 *)c, make_float2(out[0], out[1]));
#endif
        } else {
#pragma unroll
            for (int j = 0; j < RUN; j++)
                if (col + j < N) c[j] = (float)(read_c ? alpha * v[j] + beta * (T)c[j] : alpha * v[j]);
        }
    });
}

// Split-K: raw double sums of slice z (ldw a multiple of 4: columns past N
// hold zeros, never read back).
__device__ __forceinline__ void store_partial(const T (&acc)[MT][NT][4], T *W, long long ldw, int M, int row0,
                                              int col0) {
    for_each_run(acc, M, row0, [&](int row, int offset, const T(&v)[RUN]) {
        const int col = col0 + offset;
        if (col < ldw) {
            double2 *w = (double2 *)(W + (long long)row * ldw + col);
#pragma unroll
            for (int j = 0; j < RUN / 2; j++) w[j] = make_double2(v[2 * j], v[2 * j + 1]);
        }
    });
}
#elif GEMM_TMA
// The tensor-map path's C, whose columns follow B's loads there: for mma
// row tile p, row h and tile pair s, with B_HALVES a lane holds acc[p][2s
// + e][2h] and [2h + 1] at columns col0 + 16s + 4e + {0, 1} (col0: the
// warp's first column + 8 (t % 2) + 2 (t / 2)); without, acc[p][2s][2h +
// i] and acc[p][2s + 1][2h + i] at col0 + 16s + 8i + {0, 1} (col0: the
// warp's first + 2t). Either way the lanes t = 0..3 of a row fill whole
// 32-byte sectors with each store, with no trade.
template <typename Store>
__device__ __forceinline__ void for_each_piece(const T (&acc)[MT][NT][4], int M, int row0, Store store) {
#pragma unroll
    for (int p = 0; p < MT; p++)
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const int row = row0 + 16 * p + h;
            if (row >= M) continue;
#pragma unroll
            for (int s = 0; s < NT / 2; s++)
#pragma unroll
                for (int e = 0; e < 2; e++)
#if B_HALVES
                    store(row, 16 * s + 4 * e, make_double2(acc[p][2 * s + e][2 * h], acc[p][2 * s + e][2 * h + 1]));
#else
                    store(row, 16 * s + 8 * e, make_double2(acc[p][2 * s][2 * h + e], acc[p][2 * s + 1][2 * h + e]));
#endif
        }
}

__device__ __forceinline__ void store_tile(const T (&acc)[MT][NT][4], T *C, long long ldc, int M, int N, int row0,
                                           int col0, T alpha, T beta, unsigned flags) {
    const bool read_c = flags & GEMM_FLAG_BETA, vector_c = flags & GEMM_FLAG_VECTOR_C;
    for_each_piece(acc, M, row0, [&](int row, int offset, double2 v) {
        const int col = col0 + offset;
        T *c = C + (long long)row * ldc + col;
        if (vector_c && col + 2 <= N) {
            double2 out = make_double2(alpha * v.x, alpha * v.y);
            if (read_c) {
                double2 old = *(const double2 *)c;
                out.x += beta * old.x, out.y += beta * old.y;
            }
            __stcs((double2 *)c, out);
        } else {
            if (col < N) c[0] = read_c ? alpha * v.x + beta * c[0] : alpha * v.x;
            if (col + 1 < N) c[1] = read_c ? alpha * v.y + beta * c[1] : alpha * v.y;
        }
    });
}

// Split-K: raw sums of slice z (ldw a multiple of 2: columns past N hold
// zeros, never read back).
__device__ __forceinline__ void store_partial(const T (&acc)[MT][NT][4], T *W, long long ldw, int M, int row0,
                                              int col0) {
    for_each_piece(acc, M, row0, [&](int row, int offset, double2 v) {
        const int col = col0 + offset;
        if (col < ldw) *(double2 *)(W + (long long)row * ldw + col) = v;
    });
}
#else
__device__ __forceinline__ void pair_values(const T (&acc)[MT][NT][4], int p, int s, int h, T *out) {
    out[0] = acc[p][2 * s][2 * h];
    out[1] = acc[p][2 * s + 1][2 * h];
    out[2] = acc[p][2 * s][2 * h + 1];
    out[3] = acc[p][2 * s + 1][2 * h + 1];
}

// The two 16-byte pieces this lane stores for (p, s, h): piece e at column
// col0 + 16s + 4e - 2 * odd (odd: t & 1), for sector e of the lane pair.
// Every lane of the warp must call it (a shuffle).
__device__ __forceinline__ void traded_pieces(const T (&v)[4], int odd, double2 &piece0, double2 &piece1) {
    double2 first = make_double2(v[0], v[1]), last = make_double2(v[2], v[3]);
    double2 give = odd ? first : last, got;
    got.x = __shfl_xor_sync(0xffffffffu, give.x, 1);
    got.y = __shfl_xor_sync(0xffffffffu, give.y, 1);
    piece0 = odd ? got : first;
    piece1 = odd ? last : got;
}

// The walk both stores share: for each row and column pair of the lane's C
// whose row is below M, store(row, s, v, piece) with the pair's values v
// (as pair_values) and the two pieces traded_pieces gives. The trade is a
// shuffle, so every lane takes it, rows past M included.
template <typename Store>
__device__ __forceinline__ void for_each_traded_pair(const T (&acc)[MT][NT][4], int M, int row0, Store store) {
    const int odd = threadIdx.x & 1;
#pragma unroll
    for (int p = 0; p < MT; p++)
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const int row = row0 + 16 * p + h;
#pragma unroll
            for (int s = 0; s < NT / 2; s++) {
                T v[4];
                pair_values(acc, p, s, h, v);
                double2 piece[2];
                traded_pieces(v, odd, piece[0], piece[1]);
                if (row < M) store(row, s, v, piece);
            }
        }
}

__device__ __forceinline__ void store_tile(const T (&acc)[MT][NT][4], T *C, long long ldc, int M, int N, int row0,
                                           int col0, T alpha, T beta, unsigned flags) {
    const bool read_c = flags & GEMM_FLAG_BETA, vector_c = flags & GEMM_FLAG_VECTOR_C;
    const int odd = (threadIdx.x & 1), pair0 = col0 - 4 * odd; // the pair's first column
    for_each_traded_pair(acc, M, row0, [&](int row, int s, const T (&v)[4], const double2 (&piece)[2]) {
        T *crow = C + (long long)row * ldc;
        const int pcol = pair0 + 16 * s;
        if (vector_c && pcol + 8 <= N) {
#pragma unroll
            for (int e = 0; e < 2; e++) {
                double2 *c = (double2 *)(crow + pcol + 4 * e + 2 * odd);
                double2 out = make_double2(alpha * piece[e].x, alpha * piece[e].y);
                if (read_c) {
                    double2 old = *c;
                    out.x += beta * old.x, out.y += beta * old.y;
                }
                __stcs(c, out);
            }
        } else {
            const int col = col0 + 16 * s;
            T *c = crow + col;
#pragma unroll
            for (int j = 0; j < 4; j++)
                if (col + j < N) c[j] = read_c ? alpha * v[j] + beta * c[j] : alpha * v[j];
        }
    });
}

// Split-K: raw sums of slice z (ldw a multiple of 2: columns past N hold
// zeros, never read back), stored in traded pieces as store_tile does.
__device__ __forceinline__ void store_partial(const T (&acc)[MT][NT][4], T *W, long long ldw, int M, int row0,
                                              int col0) {
    const int odd = (threadIdx.x & 1), pair0 = col0 - 4 * odd;
    for_each_traded_pair(acc, M, row0, [&](int row, int s, const T (&v)[4], const double2 (&piece)[2]) {
        (void)v;
#pragma unroll
        for (int e = 0; e < 2; e++) {
            const int col = pair0 + 16 * s + 4 * e + 2 * odd;
            if (col < ldw) *(double2 *)(W + (long long)row * ldw + col) = piece[e];
        }
    });
}
#endif

// ---- the kernel ----------------------------------------------------------------------

extern "C" __global__ void __launch_bounds__(THREADS, MIN_BLOCKS)
    GEMM_DMMA_ENTRY(const TS *__restrict__ A, const TS *__restrict__ B, TS *C, int M, int N, int K, long long lda,
                         long long ldb, long long ldc, T alpha, T beta, unsigned flags, int k_per_split, T *workspace,
                         long long ldw
#if GEMM_TMA
                         ,
                         const __grid_constant__ tma_desc tma_a, const __grid_constant__ tma_desc tma_b
#endif
    ) {
    ptxkit::grid_dependency_begin();
    extern __shared__ __align__(16) unsigned char gemm_smem[];
#if !GEMM_TMA
    TS *As = (TS *)gemm_smem;
    TS *Bs = As + STAGES * STAGE_A;
#endif

    // The tile of this block, GROUP_M tile rows at a time.
    int m0, n0;
    gemm_block_tile(blockIdx.x, M, N, BM, BN, GROUP_M, &m0, &n0);

    // The K slice.
    const int k_begin = blockIdx.z * k_per_split;
    const int k_end = min(K, k_begin + k_per_split);
    const int k_tiles = k_end > k_begin ? (k_end - k_begin + BK - 1) / BK : 0;

    const int tid = threadIdx.x;
#if !GEMM_TMA
    a_loader la;
    b_loader lb;
#if TRANS_A
    la.init(A + (long long)k_begin * lda + m0, tid, lda);
    const long long a_step = (long long)BK * lda;
#else
    la.init(A + (long long)m0 * lda + k_begin, tid, lda);
    const long long a_step = BK;
#endif
#if TRANS_B
    lb.init(B + (long long)n0 * ldb + k_begin, tid, ldb);
    const long long b_step = BK;
#else
    lb.init(B + (long long)k_begin * ldb + n0, tid, ldb);
    const long long b_step = (long long)BK * ldb;
#endif

#endif
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

#if GEMM_TMA
    // The tensor memory accelerator fills the stages: one thread issues a
    // k-tile's boxes (A's one, B's one or BN / 16) onto the stage's "full"
    // mbarrier, which counts their bytes; every warp, once it has loaded
    // its last fragments of a stage, arrives on the stage's "empty"
    // mbarrier, which the refilling thread waits on. No block-wide
    // barrier per k-tile and no copy arithmetic in the warps that compute;
    // boxes reaching past M, N or K come back zero-filled, so edge blocks
    // take the same path.
    //
    // Shared layout: the 128-byte swizzle stores 16-byte chunk c of line l
    // (128 bytes: a row of A's tile, a k-row of one of B's 16-column boxes)
    // at chunk c ^ (l % 8), stages 1024-byte aligned. A's 8-byte fragment
    // loads (rows 2g + h, k t) then fall on 16 distinct bank pairs in each
    // half-warp. So do B's (below); C's columns follow (the epilogue's
    // for_each_piece).
    __shared__ __align__(8) unsigned long long full_bar[STAGES], empty_bar[STAGES];
    // the host's size leaves room to align the stages
    TS *tA = (TS *)(gemm_smem + ((1024u - (ptxkit::shared_address(gemm_smem) & 1023u)) & 1023u));
    TS *tB = tA + STAGES * TMA_STAGE_A;
    if (tid == 0) {
#pragma unroll
        for (int s = 0; s < STAGES; s++) {
            ptxkit::mbarrier_init(&full_bar[s], 1);
            ptxkit::mbarrier_init(&empty_bar[s], WARPS_M * WARPS_N);
        }
        ptxkit::fence_mbarrier_init();
    }
    __syncthreads();
    // one thread: k-tile `tile` of the slice into `stage`
    auto fill = [&](int tile, int stage) {
        ptxkit::mbarrier_arrive_expect_tx(&full_bar[stage], (TMA_STAGE_A + TMA_STAGE_B) * sizeof(TS));
        const int k = k_begin + tile * BK;
#pragma unroll
        for (int j = 0; j < BK / TMA_LINE; j++)
            tma_load_2d(tA + stage * TMA_STAGE_A + j * BM * TMA_LINE, &tma_a, k + TMA_LINE * j, m0, &full_bar[stage]);
#if GEMM_TMA == 2
        tma_load_3d(tB + stage * TMA_STAGE_B, &tma_b, 0, k, n0 / TMA_LINE, &full_bar[stage]);
#else
#pragma unroll
        for (int j = 0; j < BN / TMA_LINE; j++)
            tma_load_2d(tB + stage * TMA_STAGE_B + j * TMA_LINE * BK, &tma_b, n0 + TMA_LINE * j, k, &full_bar[stage]);
#endif
    };
    if (tid == 0)
        for (int s = 0; s < STAGES && s < k_tiles; s++) fill(s, s);
    __syncwarp();

#if GEMM_F32_IN
    // float32: each lane's fragment offsets within a stage (in floats, the
    // same in every stage). A's row g + 8h of each mma tile (16p rows on)
    // at k-quarter q (k 4q + t) lies in chunk q ^ g of the row's line, so
    // the 32 lanes of a load read 32 distinct banks. B's mma columns g of
    // tiles 2s and 2s + 1 (s < 2 in a 32-column group) are neighbours in
    // chunk ch(g) + 2s, ch(g) = 4 ((g / 2) % 2) + g / 4, offset 2 (g % 2)
    // of k-row 4q + t, one 8-byte load for both: a half-warp (g < 4 or g
    // >= 4, t < 4) then reads chunks {0, 4} + 2s + g / 4, swizzled by t +
    // 4 (q % 2), 16 lanes on 32 distinct banks. C's columns follow (the
    // epilogue's for_each_run).
    int a_off[8], b_off[2];
#pragma unroll
    for (int q = 0; q < 8; q++) a_off[q] = (m_w + g) * TMA_LINE + 4 * (q ^ g) + t;
    {
        const int ch = 4 * ((g >> 1) & 1) + (g >> 2);
#pragma unroll
        for (int e = 0; e < 2; e++)
            b_off[e] = (n_w / TMA_LINE) * BK * TMA_LINE + TMA_LINE * t + 4 * (ch ^ (t + 4 * e)) + 2 * (g & 1);
    }
    // A's row g + 8h of the first mma tile at k-quarter q
    auto a_at = [&](int q, int h) { return a_off[q] + 8 * h * TMA_LINE; };
    auto load_b = [&](const TS *bs, int step, T(&bb)[NT][KQ]) {
#pragma unroll
        for (int j = 0; j < KQ; j++) {
            const int q = KQ * step + j;
#pragma unroll
            for (int s = 0; s < NT / 2; s++) {
                const float2 v = *(const float2 *)(bs + (b_off[q & 1] ^ (8 * (s % 2))) + 4 * TMA_LINE * q +
                                                   (s / 2) * BK * TMA_LINE);
                bb[2 * s][j] = (T)v.x, bb[2 * s + 1][j] = (T)v.y;
            }
        }
    };
#else
    // Each lane's fragment offsets within a stage (in doubles; the same in
    // every stage, so computed once): A's of row 2g + h and k-quarter q
    // (row tile p is 16p rows on); B's of k-quarters of parity r (quarter
    // q is 4q k-rows on, column pair s 16s columns) for mma tile 2s + e,
    // the swizzle resolved (b_at).
    int a_off[2][4];
#pragma unroll
    for (int h = 0; h < 2; h++)
#pragma unroll
        for (int q = 0; q < 4; q++)
            a_off[h][q] = (m_w + 2 * g + h) * TMA_LINE + 2 * ((2 * q + (t >> 1)) ^ ((2 * g + h) & 7)) + (t & 1);
#if B_HALVES
    // mma column g of tile 2s + e is column 8 ((g / 2) % 2) + 2 (g / 4) + 4e
    // + g % 2 of the pair's 16: half g % 2 of chunk ch(g) + 2e, ch(g) = 4
    // ((g / 2) % 2) + g / 4. A half-warp (g < 4 or g >= 4, t < 4) reads
    // both halves of chunks {0, 4} + g / 4 + 2e, swizzled by t + 4 (q % 2):
    // 16 lanes on 32 distinct banks. Parity r and tile e toggle chunk bits
    // 2 and 1 (the offset's bits 3 and 2).
    const int b_off = n_w * BK + 16 * t + 2 * ((4 * ((g >> 1) & 1) + (g >> 2)) ^ t) + (g & 1);
    auto b_at = [&](int r, int e) { return b_off ^ (8 * r + 4 * e); };
#else
    // mma column g of tiles 2s and 2s + 1: columns 2 pi(g) and 2 pi(g) + 1,
    // chunk pi(g) = 4 (g % 2) + g / 2 of k-row t: the 8 lanes of a 16-byte
    // load's phase read 8 distinct chunks; an 8-byte load's 16 lanes fall
    // on one half of 8 chunks, two to a bank pair
    const int pi_g = 4 * (g & 1) + (g >> 1);
    int b_off[2];
#pragma unroll
    for (int r = 0; r < 2; r++) b_off[r] = n_w * BK + 16 * t + 2 * (pi_g ^ (4 * r + t));
    auto b_at = [&](int r, int e) { return b_off[r] + e; };
#endif

    // A's row 2g + h of the first mma tile at k-quarter q: quarter q % 4
    // of A's box q / 4
    auto a_at = [&](int q, int h) { return a_off[h][q % 4] + (q / 4) * BM * TMA_LINE; };
    // k-step `step` (MMA_K deep: quarters KQ step + j): b[2s + e][j] = B[k
    // 4 (KQ step + j) + t][the pair's column of mma column g of tile 2s + e]
    auto load_b = [&](const T *bs, int step, T(&bb)[NT][KQ]) {
#pragma unroll
        for (int j = 0; j < KQ; j++) {
            const int q = KQ * step + j;
#pragma unroll
            for (int s = 0; s < NT / 2; s++) {
#if !B_HALVES && MMA_K < 8
                // at mma k 4 a pair's two tiles in one 16-byte load; m16n8k8
                // and k16 take a tile's two k-quarters in neighbouring
                // registers, where the 16-byte load's pair would need moves
                const double2 v = *(const double2 *)(bs + b_at(q & 1, 0) + 64 * q + 16 * s * BK);
                bb[2 * s][j] = v.x, bb[2 * s + 1][j] = v.y;
#else
#pragma unroll
                for (int e = 0; e < 2; e++) bb[2 * s + e][j] = bs[b_at(q & 1, e) + 64 * q + 16 * s * BK];
#endif
            }
        }
    };
#endif
    // k-step `step` (MMA_K deep: quarters KQ step + j) of A, both layouts:
    // a[p][2j + h] from a_at, mma row tile p 16 lines on
    auto load_a = [&](const TS *as, int step, T(&aa)[MT][2 * KQ]) {
#pragma unroll
        for (int p = 0; p < MT; p++)
#pragma unroll
            for (int j = 0; j < KQ; j++)
#pragma unroll
                for (int h = 0; h < 2; h++) aa[p][2 * j + h] = (T)as[a_at(KQ * step + j, h) + 16 * p * TMA_LINE];
    };

    // Fragments in two buffers, each k-step's loaded during the previous
    // step's mma, a tile's first during the previous tile's last step once
    // its stage is full. After the last tile that load reads a stage no
    // copy is writing, and its values go unused: one path, no branch.
    constexpr int STEPS = BK / MMA_K; // even: a tile's first fragments go to buffer 0
    static_assert(STEPS % 2 == 0, "an even number of k-steps a tile");
    T a[2][MT][2 * KQ], b[2][NT][KQ];
    if (k_tiles > 0) {
        ptxkit::mbarrier_wait_parity(&full_bar[0], 0);
        __syncwarp();
        load_b(tB, 0, b[0]);
        load_a(tA, 0, a[0]);
    }
    for (int tile = 0; tile < k_tiles; tile++) {
        const int stage = tile % STAGES, next = stage + 1 == STAGES ? 0 : stage + 1;
        const TS *as = tA + stage * TMA_STAGE_A, *bs = tB + stage * TMA_STAGE_B;
#pragma unroll
        for (int step = 0; step < STEPS; step++) {
            const int buf = step & 1, nbuf = buf ^ 1;
            // where the next k-step's fragments lie
            const TS *na = as, *nb = bs;
            int nstep = step + 1;
            if (step + 1 == STEPS) {
                // This warp has loaded its last fragments of the stage and
                // hands it back. The proxy fence first: the refill (the
                // tensor memory accelerator, another proxy) could otherwise
                // land before loads issued just ahead of the arrival had
                // read their values (async.cuh's rules; rare wrong sums
                // without it, notebook section 34). Here it waits for this
                // step's fragments; placed past the step's mma, where ptxas
                // hoists it above the mma, it waited for the next tile's
                // first loads instead and ran slower.
                ptxkit::fence_proxy_async_shared();
                __syncwarp();
                if (lane == 0) ptxkit::mbarrier_arrive(&empty_bar[stage]);
                if (tile + 1 < k_tiles) {
                    ptxkit::mbarrier_wait_parity(&full_bar[next], ((tile + 1) / STAGES) & 1);
                    __syncwarp();
                }
                na = tA + next * TMA_STAGE_A, nb = tB + next * TMA_STAGE_B, nstep = 0;
            }
            load_b(nb, nstep, b[nbuf]);
            load_a(na, nstep, a[nbuf]);
#pragma unroll
            for (int p = 0; p < MT; p++)
#pragma unroll
                for (int q = 0; q < NT; q++) mma_step(acc[p][q], a[buf][p], b[buf][q]);
        }
        // This tile's stage takes tile + STAGES, issued by lane 0 of warp
        // tile % WARPS once every warp has loaded its last fragments of it:
        // the refills rotate, so that no warp (all of them compute) carries
        // them all. At once, not a tile later: at mma k 8 that lost only at
        // 8192^3 and won elsewhere, most at 64 x 64 tiles (notebook
        // section 29), and two stages need it (the next tile's wait comes
        // before a later refill).
        if (tile + STAGES < k_tiles && warp == tile % (WARPS_M * WARPS_N)) {
            if (lane == 0) {
                ptxkit::mbarrier_wait_parity(&empty_bar[stage], (tile / STAGES) & 1);
                fill(tile + STAGES, stage);
            }
            __syncwarp();
        }
    }
#else
    // The main loop twice over: for blocks whose tiles all lie inside the
    // matrices (every k-tile whole), copies without bounds; for the others,
    // with them. One test per block, not per copy.
    const bool inside = m0 + BM <= M && n0 + BN <= N && (k_end - k_begin) % BK == 0;
    auto main_loop = [&](auto fast) {
        constexpr bool FAST = decltype(fast)::value;
        // k-tile `tile` of the slice into its stage; past the last, nothing
        // (the caller still commits a group, keeping the count uniform).
        auto load_tile = [&](int tile) {
            if (tile >= k_tiles) return;
            int k_left = k_end - k_begin - tile * BK;
            int stage = tile % STAGES;
            load_operands<FAST, TRANS_A, TRANS_B>(la, lb, As + stage * STAGE_A, Bs + stage * STAGE_B, k_left, M - m0,
                                                  N - n0, A, B, a_step, b_step);
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

        // Fragments in two buffers: each k-step's are loaded during the
        // previous step's mma, and a tile's first during the previous tile's
        // last step, after the barrier that hands its stage back (which then
        // sits before that step's mma, so the tensor cores have work while
        // the next tile's first loads are in flight).
        T a[2][MT][2 * KQ], b[2][NT][KQ];
        if (k_tiles > 0) {
            load_a(As, m_w, 0, g, t, a[0]);
            load_b(Bs, n_w, 0, g, t, b[0]);
        }
        constexpr int STEPS = BK / MMA_K;
        for (int tile = 0; tile < k_tiles; tile++) {
            const int stage = tile % STAGES, next = stage + 1 == STAGES ? 0 : stage + 1;
            const TS *as = As + stage * STAGE_A, *bs = Bs + stage * STAGE_B;
#pragma unroll
            for (int step = 0; step < STEPS; step++) {
                const int buf = step & 1, nbuf = buf ^ 1;
                if (step + 1 < STEPS) {
                    load_a(as, m_w, (step + 1) * MMA_K, g, t, a[nbuf]);
                    load_b(bs, n_w, (step + 1) * MMA_K, g, t, b[nbuf]);
                } else if (tile + 1 < k_tiles) {
                    // The next tile has landed (this thread's copies, then
                    // everyone's), and every warp has loaded its last
                    // fragments of this one, whose stage takes tile + STAGES.
                    async_wait<STAGES - 2>();
                    __syncthreads();
                    load_a(As + next * STAGE_A, m_w, 0, g, t, a[nbuf]);
                    load_b(Bs + next * STAGE_B, n_w, 0, g, t, b[nbuf]);
                    load_tile(tile + STAGES);
                    async_commit();
                }
#pragma unroll
                for (int p = 0; p < MT; p++)
#pragma unroll
                    for (int q = 0; q < NT; q++) mma_step(acc[p][q], a[buf][p], b[buf][q]);
            }
            // an odd step count leaves the next tile's first fragments in buffer 1
            if (STEPS % 2) {
#pragma unroll
                for (int p = 0; p < MT; p++)
#pragma unroll
                    for (int i = 0; i < 2 * KQ; i++) a[0][p][i] = a[1][p][i];
#pragma unroll
                for (int q = 0; q < NT; q++)
#pragma unroll
                    for (int i = 0; i < KQ; i++) b[0][q][i] = b[1][q][i];
            }
        }
    };
    if (inside) main_loop(flag<true>());
    else main_loop(flag<false>());
    // no copy may still be writing shared memory when the block exits
    async_wait<0>();
#endif

#if GEMM_F32_IN
    const int row0 = m0 + m_w + g, col0 = n0 + n_w + (GEMM_TMA ? 16 * (t & 1) + 4 * (t >> 1) : 2 * t);
#else
    const int row0 = m0 + m_w + 2 * g, col0 = n0 + n_w + (B_HALVES ? 8 * (t & 1) + 2 * (t >> 1) : GEMM_TMA ? 2 * t : 4 * t);
#endif
#if GEMM_PARTIAL
    store_partial(acc, workspace + (long long)blockIdx.z * M * ldw, ldw, M, row0, col0);
#else
    store_tile(acc, C, ldc, M, N, row0, col0, alpha, beta, flags);
#endif
}
