// Production GEMM (float32 and float64, FMA on the CUDA cores, no tensor
// cores): C = alpha * op(A) * op(B) + beta * C, row-major with leading
// dimensions, op(X) = X or X^T. op(A) is M x K, op(B) K x N, C M x N.
//
// Storage, row-major:
//   TRANS_A 0: A is M x K, element (m, k) at A[m * lda + k]
//   TRANS_A 1: A is K x M, element (m, k) of op(A) at A[k * lda + m]
//   TRANS_B 0: B is K x N, element (k, n) at B[k * ldb + n]
//   TRANS_B 1: B is N x K, element (k, n) of op(B) at B[n * ldb + k]
//
// Structure (the CUTLASS SIMT shape): a block computes a BM x BN tile of C;
// its warps each own a WM x WN warp tile, and each lane a TM x TN micro-tile
// held in registers, made of (TM / V) x (TN / V) sub-blocks of V x V, V the
// elements of one 16-byte vector (4 floats, 2 doubles), spread so that the
// lanes of a warp read neighbouring vectors of shared memory.
//
// Both operand tiles sit in shared memory k-major (As[k][m], Bs[k][n]), so
// a lane reads its fragment of A and of B for one k as TM / V + TN / V
// 16-byte loads and then does TM x TN FMAs: 8 x 8 floats is 64 FMAs per 4
// shared loads.
//
// Shared memory is a ring of STAGES buffers filled by cp.async
// (gemm_copy.cuh): while the block computes on one k-tile, the next
// STAGES - 1 are in flight. An operand stored k-major (A transposed, B not)
// is copied in 16-byte vectors (VEC_A / VEC_B elements each, where the
// host found the matrix aligned for it) straight into its rows; one stored
// with k contiguous (A not transposed, B transposed) is transposed on the
// way in, one element per copy, into a row padded by one vector so that the
// 32 copies of a warp land in distinct banks. (Kept as stored instead, with
// 16-byte copies along k and fragments read two k-steps a load, A's tile
// took fewer instructions but more time: 86% of cuBLAS at 2048^3 to 8192^3
// against 92%, notebook section 27.) Edges need no branch: a copy reading
// past M, N or K reads fewer bytes (none) and zero-fills, and the epilogue
// checks rows and columns; blocks whose tiles all lie inside the matrices
// (most of them) copy without those checks. Fragments are double-buffered
// in registers across the k-steps, from one tile into the next.
//
// Blocks are numbered in groups of GROUP_M tile rows (as Triton does), so
// that blocks running at the same time share their A and B panels in L2.
// blockIdx.z is the K slice: slice z covers K from z * k_per_split. With
// split-K (GEMM_PARTIAL 1) slice z writes its raw sums to workspace slice z
// (M x ldw), and ptxkit_gemm_splitk_* then adds the slices in order and
// applies alpha and beta. With stream-K (GEMM_STREAMK 1) the kernel takes
// the tiles that whole waves of this one leave over, shared out in k
// (stream_k_block), and may start while the kernel of those waves
// (GEMM_STREAMK 2) ends (GEMM_FLAG_LED).
//
// Injected: GEMM_DOUBLE (0 float, 1 double), TRANS_A, TRANS_B, VEC_A, VEC_B
// (elements per global copy of a k-major operand: 1, or 16 bytes' worth),
// BM, BN, BK, WM, WN, TM, TN, STAGES, MIN_BLOCKS (__launch_bounds__),
// GROUP_M, GEMM_PARTIAL, GEMM_STREAMK, GEMM_ENTRY, GEMM_CROSS_PREFETCH.
// Entry points: ptxkit_gemm_<f32|f64> (const T *A, const T *B, T *C,
//   int M, int N, int K, long long lda, long long ldb, long long ldc,
//   T alpha, T beta, unsigned flags, int k_per_split, T *workspace,
//   long long ldw)
// and ptxkit_gemm_splitk_<f32|f64> (const T *workspace, int splits,
//   long long ldw, T *C, int M, int N, long long ldc, T alpha, T beta,
//   unsigned flags).
// flags: GEMM_FLAG_BETA (beta != 0: C is read), GEMM_FLAG_VECTOR_C (C and
// ldc allow 16-byte accesses), GEMM_FLAG_LED (the stream-K kernel's).
#include "gemm_copy.cuh"
#include <ptxkit/grid.cuh>

#ifndef GEMM_DOUBLE
#define GEMM_DOUBLE 0
#endif
#ifndef TRANS_A
#define TRANS_A 0
#endif
#ifndef TRANS_B
#define TRANS_B 0
#endif
#ifndef BM
#define BM 128
#endif
#ifndef BN
#define BN 128
#endif
#ifndef BK
#define BK 8
#endif
#ifndef WM
#define WM 32
#endif
#ifndef WN
#define WN 64
#endif
#ifndef TM
#define TM 8
#endif
#ifndef TN
#define TN 8
#endif
#ifndef STAGES
#define STAGES 4
#endif
#ifndef MIN_BLOCKS
#define MIN_BLOCKS 1
#endif
#ifndef GROUP_M
#define GROUP_M 8
#endif
// Which entry points a compile holds: -1 both (`ptxkit compile gemm`), 0 the
// GEMM kernel, 1 the split-K sum (the runtime compiles one at a time).
#ifndef GEMM_ENTRY
#define GEMM_ENTRY -1
#endif
// 1 (the default): each tile's first fragments are loaded during the
// previous tile's last k-step; 0: after the barrier that starts the tile
// (the experiment switch that measures what the overlap buys).
#ifndef GEMM_CROSS_PREFETCH
#define GEMM_CROSS_PREFETCH 1
#endif
// 1: the split-K kernel, writing raw sums to the workspace (a kernel of
// its own: a run-time choice between the two epilogues costs registers).
#ifndef GEMM_PARTIAL
#define GEMM_PARTIAL 0
#endif
// 1: the stream-K kernel (stream_k_block), for the tiles that whole waves
// leave over, shared out in k among one wave of blocks; 2: the kernel of
// those whole waves, which lets the stream-K kernel launch once all its
// blocks have started (programmatic launch), so that the stream-K blocks
// take SMs as its last blocks leave instead of after the slowest of them.
#ifndef GEMM_STREAMK
#define GEMM_STREAMK 0
#endif

// V: elements per 16-byte vector.
#if GEMM_DOUBLE
typedef double T;
typedef double2 TV;
#define V 2
#define GEMM_SUFFIX f64
#else
typedef float T;
typedef float4 TV;
#define V 4
#define GEMM_SUFFIX f32
#endif

#ifndef VEC_A
#define VEC_A V
#endif
#ifndef VEC_B
#define VEC_B V
#endif

#define GEMM_FLAG_BETA 1u
#define GEMM_FLAG_VECTOR_C 2u
// the stream-K kernel was launched early behind a GEMM_STREAMK 2 kernel:
// its tiles are not that kernel's and its flags were cleared before it
#define GEMM_FLAG_LED 4u

#define WARPS_M (BM / WM)
#define WARPS_N (BN / WN)
#define THREADS (WARPS_M * WARPS_N * 32)
#define LANES_M (WM / TM)
#define LANES_N (WN / TN)

// Rows of the k-major tiles: an operand transposed on the way in gets one
// vector of padding (its copies write down a column of the tile, and the
// padding puts the 32 copies of a warp in distinct banks).
#define LDA_S (BM + (TRANS_A ? 0 : V))
#define LDB_S (BN + (TRANS_B ? V : 0))
#define STAGE_A (BK * LDA_S)
#define STAGE_B (BK * LDB_S)

static_assert(BM % WM == 0 && BN % WN == 0, "the warp tile must divide the block tile");
static_assert(WM % TM == 0 && WN % TN == 0, "the thread tile must divide the warp tile");
static_assert(LANES_M * LANES_N == 32, "a warp tile holds 32 thread tiles");
static_assert(TM % V == 0 && TN % V == 0, "thread tiles are whole 16-byte vectors");
static_assert(STAGES >= 2 && STAGES <= 8, "2 to 8 pipeline stages");
static_assert(BK % 2 == 0, "an even k-tile: the next tile's first fragments go to buffer 0");
static_assert(THREADS <= 1024, "at most 1024 threads");
static_assert(VEC_A == 1 || VEC_A == V, "VEC_A is 1 or a 16-byte vector");
static_assert(VEC_B == 1 || VEC_B == V, "VEC_B is 1 or a 16-byte vector");
static_assert(!(GEMM_PARTIAL && GEMM_STREAMK), "split-K and stream-K are kernels of their own");

#define CAT3_(a, b, c) a##b##c
#define CAT3(a, b, c) CAT3_(a, b, c)

// ---- operand loaders ------------------------------------------------------
// A k-major operand (A transposed, B not) is copied by tile_loader
// (gemm_copy.cuh) in rows of k; one with k contiguous by this one, which
// transposes it on the way in: the tile's LINES lines (rows of A, columns
// of op(B)) each hold BK contiguous k, and copies are single elements
// written down the columns of the k-major tile. Thread t copies k = t % BK
// of lines t / BK + i * LINE_STEP. The same interface as tile_loader, its
// rows being the lines.
template <int LINES, int LDS_> struct transposing_loader {
    static constexpr int LINE_STEP = THREADS / BK;
    static constexpr int COPIES = LINES / LINE_STEP;
    static_assert(THREADS % BK == 0 && LINES % LINE_STEP == 0, "the block's copies must cover the tile evenly");
    const T *src;   // this thread's first copy in the current tile
    long long step; // LINE_STEP lines of the source
    int kk, line;

    __device__ __forceinline__ void init(const T *tile, int tid, long long ld) {
        kk = tid % BK;
        line = tid / BK;
        src = tile + line * ld + kk;
        step = LINE_STEP * ld;
    }
    template <bool FAST>
    __device__ __forceinline__ void load(T *stage, int lines_left, int k_left, const T *base) const {
        const T *from = src;
        T *to = stage + kk * LDS_ + line;
        const bool k_in = FAST || kk < k_left;
#pragma unroll
        for (int i = 0; i < COPIES; i++, from += step) {
            bool in = FAST || (k_in && line + i * LINE_STEP < lines_left);
            async_copy<sizeof(T)>(to + i * LINE_STEP, in ? (const void *)from : (const void *)base,
                                  in ? (unsigned)sizeof(T) : 0u);
        }
    }
};

#if TRANS_A
typedef tile_loader<T, THREADS, BK, BM, VEC_A, LDA_S> a_loader; // rows k, columns m
#else
typedef transposing_loader<BM, LDA_S> a_loader; // lines m, k contiguous
#endif
#if TRANS_B
typedef transposing_loader<BN, LDB_S> b_loader; // lines n, k contiguous
#else
typedef tile_loader<T, THREADS, BK, BN, VEC_B, LDB_S> b_loader; // rows k, columns n
#endif

// ---- fragments -------------------------------------------------------------

// Sub-block g of a lane's fragment starts g * LANES * V elements after its
// first: the lanes of a warp read LANES neighbouring vectors.
__device__ __forceinline__ void vector_to(T *r, TV v) {
#if GEMM_DOUBLE
    r[0] = v.x, r[1] = v.y;
#else
    r[0] = v.x, r[1] = v.y, r[2] = v.z, r[3] = v.w;
#endif
}

__device__ __forceinline__ TV vector_of(const T *r) {
#if GEMM_DOUBLE
    return make_double2(r[0], r[1]);
#else
    return make_float4(r[0], r[1], r[2], r[3]);
#endif
}

// as, bs: the stage's tiles at this lane's first row and column.
__device__ __forceinline__ void load_fragments(const T *as, const T *bs, int k, T *a, T *b) {
#pragma unroll
    for (int g = 0; g < TM / V; g++) vector_to(&a[g * V], *(const TV *)&as[k * LDA_S + g * LANES_M * V]);
#pragma unroll
    for (int g = 0; g < TN / V; g++) vector_to(&b[g * V], *(const TV *)&bs[k * LDB_S + g * LANES_N * V]);
}

// The outer product of one k-step's fragments into the accumulators.
__device__ __forceinline__ void fma_step(T (&acc)[TM][TN], const T *a, const T *b) {
#pragma unroll
    for (int i = 0; i < TM; i++)
#pragma unroll
        for (int j = 0; j < TN; j++) acc[i][j] = fma(a[i], b[j], acc[i][j]);
}

// ---- epilogue ----------------------------------------------------------------

__device__ __forceinline__ T gemm_out(T acc, T alpha, T beta, const T *c, bool read_c) {
    return read_c ? alpha * acc + beta * *c : alpha * acc;
}

__device__ __forceinline__ void store_tile(T (&acc)[TM][TN], T *C, long long ldc, int M, int N, int row0, int col0,
                                           T alpha, T beta, unsigned flags) {
    const bool read_c = flags & GEMM_FLAG_BETA, vector_c = flags & GEMM_FLAG_VECTOR_C;
#pragma unroll
    for (int gi = 0; gi < TM / V; gi++)
#pragma unroll
        for (int i = 0; i < V; i++) {
            int row = row0 + gi * LANES_M * V + i;
            if (row >= M) continue;
            T *crow = C + (long long)row * ldc;
#pragma unroll
            for (int gj = 0; gj < TN / V; gj++) {
                int col = col0 + gj * LANES_N * V;
                T *c = crow + col;
                T *r = &acc[gi * V + i][gj * V];
                if (vector_c && col + V <= N) {
                    T old[V];
                    if (read_c) vector_to(old, *(const TV *)c);
                    T out[V];
#pragma unroll
                    for (int j = 0; j < V; j++) out[j] = read_c ? alpha * r[j] + beta * old[j] : alpha * r[j];
                    *(TV *)c = vector_of(out);
                } else {
#pragma unroll
                    for (int j = 0; j < V; j++)
                        if (col + j < N) c[j] = gemm_out(r[j], alpha, beta, c + j, read_c);
                }
            }
        }
}

// Split-K: the raw sums of slice z, whole vectors (ldw is a multiple of V;
// columns past N hold zeros and are never read back).
__device__ __forceinline__ void store_partial(T (&acc)[TM][TN], T *W, long long ldw, int M, int row0, int col0,
                                              int ldw_cols) {
#pragma unroll
    for (int gi = 0; gi < TM / V; gi++)
#pragma unroll
        for (int i = 0; i < V; i++) {
            int row = row0 + gi * LANES_M * V + i;
            if (row >= M) continue;
#pragma unroll
            for (int gj = 0; gj < TN / V; gj++) {
                int col = col0 + gj * LANES_N * V;
                if (col < ldw_cols) *(TV *)&W[(long long)row * ldw + col] = vector_of(&acc[gi * V + i][gj * V]);
            }
        }
}

#if GEMM_ENTRY != 1
// ---- a tile's sums -------------------------------------------------------------

// The sums of the tile of C at (m0, n0) over k_begin .. k_end into acc
// (zeroed here), and where this lane's part of the tile lies in C (row0,
// col0): the pipeline of the header comment. Every copy has landed when it
// returns; other warps may still be reading the last stage.
__device__ __forceinline__ void tile_sums(const T *__restrict__ A, const T *__restrict__ B, int M, int N,
                                          long long lda, long long ldb, int m0, int n0, int k_begin, int k_end,
                                          T *As, T *Bs, T (&acc)[TM][TN], int *row0, int *col0) {
    const int k_tiles = k_end > k_begin ? (k_end - k_begin + BK - 1) / BK : 0;

    const int tid = threadIdx.x;
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

    const int warp = tid / 32, lane = tid % 32;
    const int warp_m = warp / WARPS_N, warp_n = warp % WARPS_N;
    const int lane_m = lane / LANES_N, lane_n = lane % LANES_N;
    const int a_off = warp_m * WM + lane_m * V, b_off = warp_n * WN + lane_n * V;
    *row0 = m0 + a_off, *col0 = n0 + b_off;
    // the lane's fragments in a stage
    const T *a_lane = As + a_off, *b_lane = Bs + b_off;

#pragma unroll
    for (int i = 0; i < TM; i++)
#pragma unroll
        for (int j = 0; j < TN; j++) acc[i][j] = 0;

    // The main loop twice over: for blocks whose tiles all lie inside the
    // matrices (every k-tile whole), copies without bounds; for the others,
    // with them. One test per block, not per copy.
    const bool inside = m0 + BM <= M && n0 + BN <= N && (k_end - k_begin) % BK == 0;
    auto main_loop = [&](auto fast) {
        constexpr bool FAST = decltype(fast)::value;
        // k-tile `tile` of the slice into its stage; past the last,
        // nothing (the caller still commits a group, keeping the count
        // uniform). (Passing the stage, which every caller knows, instead
        // of taking tile % STAGES here issues the same instructions but
        // ran slower at 4 stages, 92 against 95% of cuBLAS at 2048^3 on an
        // H200, and faster at 3: notebook section 27.)
        auto load_tile = [&](int tile) {
            if (tile >= k_tiles) return;
            int k_left = k_end - k_begin - tile * BK;
            int stage = tile % STAGES;
            load_operands<FAST, TRANS_A, TRANS_B>(la, lb, As + stage * STAGE_A, Bs + stage * STAGE_B, k_left, M - m0,
                                                  N - n0, A, B, a_step, b_step);
        };

        // Prologue: tiles 0 .. STAGES - 2 in flight, one group each (empty
        // groups past the last tile keep the count uniform).
#pragma unroll
        for (int s = 0; s < STAGES - 1; s++) {
            load_tile(s);
            async_commit();
        }

        // Fragments in two buffers, each k-step's loaded during the
        // previous step's FMAs.
        T a[2][TM], b[2][TN];
        auto first_fragments = [&](int stage) {
            load_fragments(a_lane + stage * STAGE_A, b_lane + stage * STAGE_B, 0, a[0], b[0]);
        };
#if GEMM_CROSS_PREFETCH
        // Once tile 0 has landed, tile STAGES - 1 into the last stage. A
        // tile's first fragments are loaded during the previous tile's last
        // k-step, after the barrier that hands its stage back, which then
        // sits before that step's FMAs: they cover the shared-memory latency
        // of the next tile's first loads (CUTLASS's pipelined main loop).
        async_wait<STAGES - 2>();
        __syncthreads();
        load_tile(STAGES - 1);
        async_commit();
        if (k_tiles > 0) first_fragments(0);
#endif
        for (int tile = 0; tile < k_tiles; tile++) {
            const int stage = tile % STAGES, next = stage + 1 == STAGES ? 0 : stage + 1;
#if !GEMM_CROSS_PREFETCH
            // The experiment switch's loop: this tile has landed, and every
            // warp is done with the one before, whose stage is refilled now;
            // then this tile's first fragments.
            async_wait<STAGES - 2>();
            __syncthreads();
            load_tile(tile + STAGES - 1);
            async_commit();
            first_fragments(stage);
#endif
            const bool more = GEMM_CROSS_PREFETCH && tile + 1 < k_tiles;
            const T *as = a_lane + stage * STAGE_A, *bs = b_lane + stage * STAGE_B;
#pragma unroll
            for (int k = 0; k < BK; k++) {
                const int buf = k & 1, nbuf = buf ^ 1;
                if (k + 1 < BK) {
                    load_fragments(as, bs, k + 1, a[nbuf], b[nbuf]);
                } else if (more) {
                    // The next tile has landed (this thread's copies, then
                    // everyone's), and every warp has loaded its last
                    // fragments of this one, whose stage takes tile + STAGES.
                    async_wait<STAGES - 2>();
                    __syncthreads();
                    load_tile(tile + STAGES);
                    async_commit();
                    load_fragments(a_lane + next * STAGE_A, b_lane + next * STAGE_B, 0, a[nbuf], b[nbuf]);
                }
                fma_step(acc, a[buf], b[buf]);
            }
        }
    };
    if (inside) main_loop(flag<true>());
    else main_loop(flag<false>());
    // no copy may still be writing shared memory when the block exits
    async_wait<0>();
}

#if GEMM_STREAMK == 1
// ---- stream-K -------------------------------------------------------------------
// The tiles from `first` on (what whole waves of the other kernel leave),
// as one run of (tile, k-tile) steps dealt to the blocks in equal shares of
// `per` steps: block b takes steps b * per .. (b + 1) * per, which may end
// inside a tile that block b + 1 continues. A block works through its
// share from the end: first the part of the tile that the next block goes
// on with (handed over through its slot of the workspace and a flag), last
// the part of the tile that earlier blocks began, which it finishes by
// adding their parts, in block order, once their flags are up. A block
// waits only for blocks numbered before it, which the GPU started no later
// than it (the launch is one wave, all resident at once), and they hand
// their parts over first thing, so the wait is short and cannot deadlock.
#define SLOT (THREADS * TM * TN) // elements of a block's handed-over part

__device__ __forceinline__ void flag_raise(unsigned *f) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 700
    asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(f), "r"(1u) : "memory");
#else
    __threadfence();
    *(volatile unsigned *)f = 1u;
#endif
}

__device__ __forceinline__ void flag_wait(const unsigned *f) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 700
    unsigned up;
    for (;;) {
        asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(up) : "l"(f) : "memory");
        if (up) break;
        __nanosleep(64);
    }
#else
    while (!*(const volatile unsigned *)f) {
    }
    __threadfence();
#endif
}

// A thread's sums as whole vectors, the block's threads side by side.
__device__ __forceinline__ void slot_store(T (&acc)[TM][TN], T *slot) {
#pragma unroll
    for (int i = 0; i < TM; i++)
#pragma unroll
        for (int j = 0; j < TN / V; j++)
            ((TV *)slot)[(i * (TN / V) + j) * THREADS + threadIdx.x] = vector_of(&acc[i][j * V]);
}

__device__ __forceinline__ void slot_add(T (&acc)[TM][TN], const T *slot) {
#pragma unroll
    for (int i = 0; i < TM; i++)
#pragma unroll
        for (int j = 0; j < TN / V; j++) {
            // written by another block: from L2, never a stale L1 line
            T w[V];
            vector_to(w, __ldcg(&((const TV *)slot)[(i * (TN / V) + j) * THREADS + threadIdx.x]));
#pragma unroll
            for (int e = 0; e < V; e++) acc[i][j * V + e] += w[e];
        }
}

// blockIdx.x, read anew each time: values derived from it are recomputed
// where they are needed rather than held in registers across the main loop
// (whose registers are all its own).
__device__ __forceinline__ int block_index() {
    int b;
    asm volatile("mov.u32 %0, %%ctaid.x;" : "=r"(b));
    return b;
}

__device__ __forceinline__ void stream_k_block(const T *__restrict__ A, const T *__restrict__ B, T *C, int M, int N,
                                               int K, long long lda, long long ldb, long long ldc, T alpha, T beta,
                                               unsigned flags, int per, int first, T *slots, T *As, T *Bs) {
    const int tiles = ((M + BM - 1) / BM) * ((N + BN - 1) / BN), kt = (K + BK - 1) / BK;
    // steps of the share left to do: the only state held across a part
    int left = min((tiles - first) * kt - block_index() * per, per);
    while (left > 0) {
        const int b = block_index(), lo = b * per, end = lo + left;
        const int t = (end - 1) / kt, t_lo = t * kt, begin = max(lo, t_lo);
        int m0, n0;
        gemm_block_tile(first + t, M, N, BM, BN, GROUP_M, &m0, &n0);
        T acc[TM][TN];
        int row0, col0;
        tile_sums(A, B, M, N, lda, ldb, m0, n0, (begin - t_lo) * BK, min(K, (end - t_lo) * BK), As, Bs, acc, &row0,
                  &col0);
        {
            const int b = block_index(), lo = b * per, end = lo + left;
            const int t = (end - 1) / kt, t_lo = t * kt, begin = max(lo, t_lo);
            unsigned *raised = (unsigned *)(slots + (long long)gridDim.x * SLOT);
            if (end < t_lo + kt) {
                // the tile goes on in block b + 1, which finishes it
                slot_store(acc, slots + (long long)b * SLOT);
                __syncthreads();
                if (threadIdx.x == 0) flag_raise(&raised[b]);
            } else {
                // begun in earlier blocks: their parts, in block order
                if (begin > t_lo)
                    for (int j = t_lo / per; j < b; j++) {
                        if (threadIdx.x == 0) flag_wait(&raised[j]);
                        __syncthreads();
                        slot_add(acc, slots + (long long)j * SLOT);
                    }
                store_tile(acc, C, ldc, M, N, row0, col0, alpha, beta, flags);
            }
            left = begin - lo;
        }
        // every warp done with the stages before the next part refills them
        if (left > 0) __syncthreads();
    }
}
#endif

// ---- the kernel --------------------------------------------------------------

extern "C" __global__ void __launch_bounds__(THREADS, MIN_BLOCKS)
    CAT3(ptxkit_gemm_, GEMM_SUFFIX, )(const T *__restrict__ A, const T *__restrict__ B, T *C, int M, int N, int K,
                                      long long lda, long long ldb, long long ldc, T alpha, T beta, unsigned flags,
                                      int k_per_split, T *workspace, long long ldw) {
    ptxkit::grid_dependency_begin_unless(GEMM_STREAMK == 1 && (flags & GEMM_FLAG_LED));
#if GEMM_STREAMK == 2
    ptxkit::grid_dependents_launch();
#endif
    extern __shared__ __align__(16) unsigned char gemm_smem[];
    T *As = (T *)gemm_smem;
    T *Bs = As + STAGES * STAGE_A;
#if GEMM_STREAMK == 1
    // k_per_split: steps a block; ldw: the first tile; workspace: the
    // blocks' slots, then their flags (cleared before the launch)
    stream_k_block(A, B, C, M, N, K, lda, ldb, ldc, alpha, beta, flags, k_per_split, (int)ldw, workspace, As, Bs);
    // done only once the kernel ahead is (grid_dependency_begin_unless)
    ptxkit::grid_dependency_wait();
#else
    // The tile of this block, GROUP_M tile rows at a time, and its K slice.
    int m0, n0;
    gemm_block_tile(blockIdx.x, M, N, BM, BN, GROUP_M, &m0, &n0);
    const int k_begin = blockIdx.z * k_per_split;
    const int k_end = min(K, k_begin + k_per_split);
    T acc[TM][TN];
    int row0, col0;
    tile_sums(A, B, M, N, lda, ldb, m0, n0, k_begin, k_end, As, Bs, acc, &row0, &col0);
#if GEMM_PARTIAL
    store_partial(acc, workspace + (long long)blockIdx.z * M * ldw, ldw, M, row0, col0, (int)ldw);
#else
    store_tile(acc, C, ldc, M, N, row0, col0, alpha, beta, flags);
#endif
#endif
}

#endif

#if GEMM_ENTRY != 0
// Split-K's second pass: C = alpha * (sum of the slices, in slice order) +
// beta * C, one element per thread, grid-stride; the sums, alpha and beta
// in S, the slices' type (the float32 kernel on the tensor cores,
// gemm_dmma.cu's GEMM_F32_IN, hands double slices to a float C, rounded
// once at the end).
template <typename S, typename TC>
__device__ __forceinline__ void splitk_pass(const S *__restrict__ W, int splits, long long ldw, TC *C, int M, int N,
                                            long long ldc, S alpha, S beta, unsigned flags) {
    const bool read_c = flags & GEMM_FLAG_BETA;
    const long long total = (long long)M * N;
    const long long slice = (long long)M * ldw;
    for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < total;
         e += (long long)gridDim.x * blockDim.x) {
        long long row = e / N, col = e % N;
        const S *w = W + row * ldw + col;
        S sum = 0;
        for (int z = 0; z < splits; z++) sum += w[z * slice];
        TC *c = C + row * ldc + col;
        *c = (TC)(read_c ? alpha * sum + beta * (S)*c : alpha * sum);
    }
}

extern "C" __global__ void __launch_bounds__(256)
    CAT3(ptxkit_gemm_splitk_, GEMM_SUFFIX, )(const T *__restrict__ W, int splits, long long ldw, T *C, int M, int N,
                                             long long ldc, T alpha, T beta, unsigned flags) {
    ptxkit::grid_dependency_begin();
    splitk_pass(W, splits, ldw, C, M, N, ldc, alpha, beta, flags);
}

#if !GEMM_DOUBLE
extern "C" __global__ void __launch_bounds__(256)
    ptxkit_gemm_splitk_f64_f32(const double *__restrict__ W, int splits, long long ldw, float *C, int M, int N,
                               long long ldc, double alpha, double beta, unsigned flags) {
    ptxkit::grid_dependency_begin();
    splitk_pass(W, splits, ldw, C, M, N, ldc, alpha, beta, flags);
}
#endif
#endif
