// The matrix-multiply ladder: float32 C = A * B, dense row-major A (M x K),
// B (K x N), C (M x N), from the memory-model lecture's G80 kernels to the
// shape of the production kernel (gemm.cu), one idea per step. Each step is
// one entry point, selected by LADDER_ENTRY so a JIT compile holds one.
//
//   1 gemm_ladder_naive      one thread per element of C, both operands from
//                            global memory: two 4-byte loads per FMA (the
//                            lecture's MatrixMulKernel)
//   2, 3 gemm_ladder_tiled   TILE_WIDTH x TILE_WIDTH tiles of A and B staged
//                            in shared memory (TILE_WIDTH 16, 32): each
//                            loaded element serves TILE_WIDTH FMAs
//   4 gemm_ladder_blocked    register blocking: a 128 x 128 block tile, k in
//                            steps of 8, each thread an 8 x 8 tile of C in
//                            registers from 8 + 8 shared-memory loads per k
//   5 gemm_ladder_vector     the same with 16-byte global loads, and A
//                            stored transposed (k-major) in shared memory
//                            so that fragments are 16-byte loads too
//   6 gemm_ladder_warptile   lanes arranged in warp tiles of 32 x 64 (4 x 8
//                            lanes, each 8 x 8 as 2 x 2 blocks of 4 x 4):
//                            a warp's fragment loads are broadcasts of
//                            neighbouring vectors
// Step 7 (cp.async double buffering) is gemm.cu itself with STAGES 2.
//
// Steps 1-3 take any sizes (tiles past the edge load zeros); steps 4-6 need
// M, N and K multiples of 128 (the host checks), as a lecture's kernels do.
//
// Injected: LADDER_ENTRY (1 naive, 2 tiled, 4 blocked, 5 vector, 6
// warptile), TILE_WIDTH (steps 2, 3).
#ifndef LADDER_ENTRY
#define LADDER_ENTRY 1
#endif
#ifndef TILE_WIDTH
#define TILE_WIDTH 16
#endif

typedef unsigned long long u64;

#if LADDER_ENTRY == 1
// Block 16 x 16; thread (x, y) computes C[row][col].
extern "C" __global__ void gemm_ladder_naive(const float *A, const float *B, float *C, int M, int N, int K) {
    int row = blockIdx.y * blockDim.y + threadIdx.y, col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= M || col >= N) return;
    float sum = 0;
    for (int k = 0; k < K; k++) sum += A[(u64)row * K + k] * B[(u64)k * N + col];
    C[(u64)row * N + col] = sum;
}
#endif

#if LADDER_ENTRY == 2
// Block TILE_WIDTH x TILE_WIDTH; the lecture's tiled kernel, with edges.
extern "C" __global__ void __launch_bounds__(TILE_WIDTH *TILE_WIDTH)
    gemm_ladder_tiled(const float *A, const float *B, float *C, int M, int N, int K) {
    __shared__ float Ms[TILE_WIDTH][TILE_WIDTH];
    __shared__ float Ns[TILE_WIDTH][TILE_WIDTH];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE_WIDTH + ty, col = blockIdx.x * TILE_WIDTH + tx;
    float sum = 0;
    for (int t = 0; t < K; t += TILE_WIDTH) {
        Ms[ty][tx] = row < M && t + tx < K ? A[(u64)row * K + t + tx] : 0.0f;
        Ns[ty][tx] = t + ty < K && col < N ? B[(u64)(t + ty) * N + col] : 0.0f;
        __syncthreads();
#pragma unroll
        for (int k = 0; k < TILE_WIDTH; k++) sum += Ms[ty][k] * Ns[k][tx];
        __syncthreads();
    }
    if (row < M && col < N) C[(u64)row * N + col] = sum;
}
#endif

// Steps 4-6: block tile 128 x 128, k-tile 8, 256 threads, 8 x 8 per thread.
#define LBM 128
#define LBN 128
#define LBK 8
#define LTM 8
#define LTN 8
#define LTHREADS 256

#if LADDER_ENTRY == 4
extern "C" __global__ void __launch_bounds__(LTHREADS)
    gemm_ladder_blocked(const float *A, const float *B, float *C, int M, int N, int K) {
    __shared__ float As[LBM][LBK]; // as A is stored: m-major
    __shared__ float Bs[LBK][LBN];
    const int tid = threadIdx.x;
    const int m0 = blockIdx.y * LBM, n0 = blockIdx.x * LBN;
    // thread (tr, tc) of a 16 x 16 grid owns rows tr * 8.., columns tc * 8..
    const int tr = tid / (LBN / LTN), tc = tid % (LBN / LTN);
    float acc[LTM][LTN] = {};
    for (int k0 = 0; k0 < K; k0 += LBK) {
        // 1024 elements of each tile, 4 per thread, one float at a time
#pragma unroll
        for (int i = 0; i < LBM * LBK / LTHREADS; i++) {
            int e = tid + i * LTHREADS;
            As[e / LBK][e % LBK] = A[(u64)(m0 + e / LBK) * K + k0 + e % LBK];
            Bs[e / LBN][e % LBN] = B[(u64)(k0 + e / LBN) * N + n0 + e % LBN];
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < LBK; k++) {
            float a[LTM], b[LTN];
#pragma unroll
            for (int i = 0; i < LTM; i++) a[i] = As[tr * LTM + i][k];
#pragma unroll
            for (int j = 0; j < LTN; j++) b[j] = Bs[k][tc * LTN + j];
#pragma unroll
            for (int i = 0; i < LTM; i++)
#pragma unroll
                for (int j = 0; j < LTN; j++) acc[i][j] += a[i] * b[j];
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < LTM; i++)
#pragma unroll
        for (int j = 0; j < LTN; j++) C[(u64)(m0 + tr * LTM + i) * N + n0 + tc * LTN + j] = acc[i][j];
}
#endif

#if LADDER_ENTRY == 5 || LADDER_ENTRY == 6
// Four floats from a 16-byte aligned shared-memory address into registers.
__device__ __forceinline__ void ld4(float *r, const float *p) {
    float4 v = *(const float4 *)p;
    r[0] = v.x, r[1] = v.y, r[2] = v.z, r[3] = v.w;
}

// One k-tile into shared memory with 16-byte loads: A (128 x 8) is read as
// 256 float4 along k and written transposed, As[k][m]; B (8 x 128) as 256
// float4 rows. All loads are issued before the first store.
__device__ __forceinline__ void ladder_load_tile(const float *A, const float *B, int N, int K, int m0, int n0,
                                                 int k0, float (*As)[LBM], float (*Bs)[LBN]) {
    const int tid = threadIdx.x;
    const int am = tid / (LBK / 4), ak = (tid % (LBK / 4)) * 4;
    const int bk = tid / (LBN / 4), bn = (tid % (LBN / 4)) * 4;
    float4 a = *(const float4 *)&A[(u64)(m0 + am) * K + k0 + ak];
    float4 b = *(const float4 *)&B[(u64)(k0 + bk) * N + n0 + bn];
    As[ak + 0][am] = a.x;
    As[ak + 1][am] = a.y;
    As[ak + 2][am] = a.z;
    As[ak + 3][am] = a.w;
    *(float4 *)&Bs[bk][bn] = b;
}

__device__ __forceinline__ void ladder_store(const float (&acc)[LTM][LTN], float *C, int N, int row, int col,
                                             int row_step, int col_step) {
    // rows row + i (i < 4) and row + row_step + i, likewise columns
#pragma unroll
    for (int i = 0; i < LTM; i++)
#pragma unroll
        for (int j = 0; j < LTN; j += 4) {
            int r = row + (i / 4) * row_step + i % 4, c = col + (j / 4) * col_step;
            *(float4 *)&C[(u64)r * N + c] = make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]);
        }
}

// Steps 5 and 6 differ only in which rows and columns a thread owns: rows
// ar + {0..3} and ar + a_step + {0..3} of the block tile, columns likewise
// from bc with b_step. The loop is the same.
__device__ __forceinline__ void ladder_vector_body(const float *A, const float *B, float *C, int N, int K, int ar,
                                                   int a_step, int bc, int b_step) {
    __shared__ __align__(16) float As[LBK][LBM];
    __shared__ __align__(16) float Bs[LBK][LBN];
    const int m0 = blockIdx.y * LBM, n0 = blockIdx.x * LBN;
    float acc[LTM][LTN] = {};
    for (int k0 = 0; k0 < K; k0 += LBK) {
        ladder_load_tile(A, B, N, K, m0, n0, k0, As, Bs);
        __syncthreads();
#pragma unroll
        for (int k = 0; k < LBK; k++) {
            float a[LTM], b[LTN];
            ld4(&a[0], &As[k][ar]);
            ld4(&a[4], &As[k][ar + a_step]);
            ld4(&b[0], &Bs[k][bc]);
            ld4(&b[4], &Bs[k][bc + b_step]);
#pragma unroll
            for (int i = 0; i < LTM; i++)
#pragma unroll
                for (int j = 0; j < LTN; j++) acc[i][j] += a[i] * b[j];
        }
        __syncthreads();
    }
    ladder_store(acc, C, N, m0 + ar, n0 + bc, a_step, b_step);
}
#endif

#if LADDER_ENTRY == 5
// Thread (tr, tc) of a 16 x 16 grid: rows tr * 4 + {0..3, 64..67}, columns
// tc * 4 + {0..3, 64..67}. A warp's 32 threads read 2 rows x 16 columns of
// vectors: 16-byte loads, but spread over the whole tile.
extern "C" __global__ void __launch_bounds__(LTHREADS)
    gemm_ladder_vector(const float *A, const float *B, float *C, int M, int N, int K) {
    const int tid = threadIdx.x, tr = tid / 16, tc = tid % 16;
    ladder_vector_body(A, B, C, N, K, tr * 4, 64, tc * 4, 64);
}
#endif

#if LADDER_ENTRY == 6
// 8 warps as 4 (M) x 2 (N) warp tiles of 32 x 64; a warp's lanes as 4 x 8,
// lane (lr, lc) owning rows lr * 4 + {0..3, 16..19} and columns lc * 4 +
// {0..3, 32..35} of the warp tile: a warp's fragment loads are 4 and 8
// neighbouring vectors.
extern "C" __global__ void __launch_bounds__(LTHREADS)
    gemm_ladder_warptile(const float *A, const float *B, float *C, int M, int N, int K) {
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const int wr = (warp / 2) * 32, wc = (warp % 2) * 64;
    const int lr = lane / 8, lc = lane % 8;
    ladder_vector_body(A, B, C, N, K, wr + lr * 4, 16, wc + lc * 4, 32);
}
#endif
