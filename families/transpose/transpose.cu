// Out-of-place transpose of a dense row-major rows x cols matrix into a
// cols x rows one. The kernels move bits, so one kernel serves every element
// type of its width: _b32 (float32, int32, ...) and _b64 (float64, ...).
//
//   transpose_naive_*   reads rows coalesced and writes each element
//                       straight to its place: consecutive lanes write
//                       addresses `rows` elements apart
//   transpose_tiled_*   stages a TILE x TILE tile in shared memory so that
//                       both the reads and the writes are coalesced; reading
//                       a column of the [TILE][TILE] tile is a TILE-way bank
//                       conflict
//   transpose_padded_*  the same with a [TILE][TILE + 1] tile: a column of
//                       it falls in distinct banks
//
// One block per tile; the grid is one-dimensional (tiles_x tiles across),
// so no matrix shape runs into the 65535 limit of gridDim.y. Elements past
// the matrix edge are neither read nor written.
//
// Global access widths: a block whose tile lies wholly inside the matrix
// reads and writes VEC_BYTES-wide vectors where the host says the matrix
// allows it (flags bit 0: loads, bit 1: stores); otherwise, and in the
// naive kernel, each thread moves single elements with TILE consecutive
// threads on a tile row (BLOCK_SIZE / TILE rows per pass: with the defaults
// TILE 32, BLOCK_SIZE 256 that is the classic 32 x 8 block, 4 elements per
// thread). Every load of a thread is issued before the first shared-memory
// store so that all of them are in flight together.
//
// SECTOR_ALIGN (injected as 1 by the host for the padded kind on the JIT
// path when output rows do not start on 32-byte sectors and single elements
// are stored): see DEFINE_SECTORED below.
//
// Injected: BLOCK_SIZE, TILE (16, 32, 64 or 128), VEC_BYTES (4, 8 or 16), LOAD_OP,
// SECTOR_ALIGN (0 or 1).
#include <ptxkit/load.cuh>
#include <ptxkit/grid.cuh>
#include "transpose_defaults.h"

#ifndef BLOCK_SIZE
#define BLOCK_SIZE TRANSPOSE_PTX_BLOCK
#endif
#ifndef TILE
#define TILE TRANSPOSE_PTX_TILE
#endif
#ifndef VEC_BYTES
#define VEC_BYTES TRANSPOSE_PTX_VECTOR
#endif
#ifndef SECTOR_ALIGN
#define SECTOR_ALIGN 0
#endif

typedef unsigned long long u64;

#if VEC_BYTES == 16
typedef uint4 vec32;
typedef ulonglong2 vec64;
#define VEC32 4
#define VEC64 2
#define LD_VEC32 ptxkit::ld_v4u32
#define LD_VEC64 ptxkit::ld_v2u64
#elif VEC_BYTES == 8
typedef uint2 vec32;
typedef u64 vec64;
#define VEC32 2
#define VEC64 1
#define LD_VEC32 ptxkit::ld_v2u32
#define LD_VEC64 ptxkit::ld_u64
#elif VEC_BYTES == 4
typedef unsigned vec32;
typedef u64 vec64;
#define VEC32 1
#define VEC64 1
#define LD_VEC32 ptxkit::ld_u32
#define LD_VEC64 ptxkit::ld_u64
#else
#error "VEC_BYTES must be 4, 8 or 16"
#endif

// Tiles of up to 64 x 64 are static shared memory; a wider one needs more
// than the 48 KB a block may have statically, so it lives in dynamic shared
// memory, which the host sizes and opts in to at launch.
#if TILE > 64
extern __shared__ __align__(16) unsigned char transpose_dynamic_tile[];
#define TILE_STORAGE(T, PAD) T(*tile)[TILE + (PAD)] = reinterpret_cast<T(*)[TILE + (PAD)]>(transpose_dynamic_tile);
#else
#define TILE_STORAGE(T, PAD) __shared__ T tile[TILE][TILE + (PAD)];
#endif

// Element mapping: TILE threads across a row, SCALAR_ROWS rows per pass.
#define SCALAR_ROWS (BLOCK_SIZE / TILE)
#if BLOCK_SIZE % TILE != 0 || SCALAR_ROWS == 0 || TILE % SCALAR_ROWS != 0
#error "need TILE <= BLOCK_SIZE <= TILE * TILE (powers of two)"
#endif
// Vector mapping: TILE / VEC threads across a row (checked per type below).
#define VEC_COLS(VEC) (TILE / (VEC))
#define VEC_ROWS(VEC) (BLOCK_SIZE / VEC_COLS(VEC))
#if VEC_ROWS(VEC32) > TILE || VEC_ROWS(VEC64) > TILE
#error "vector mapping needs BLOCK_SIZE * (VEC_BYTES / element size) <= TILE * TILE"
#endif

// Component i of a vector (constant after unrolling).
__device__ __forceinline__ unsigned vget(unsigned v, int) { return v; }
__device__ __forceinline__ unsigned vget(uint2 v, int i) { return i == 0 ? v.x : v.y; }
__device__ __forceinline__ unsigned vget(uint4 v, int i) { return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w; }
__device__ __forceinline__ u64 vget(u64 v, int) { return v; }
__device__ __forceinline__ u64 vget(ulonglong2 v, int i) { return i == 0 ? v.x : v.y; }
__device__ __forceinline__ void vset(unsigned &v, int, unsigned x) { v = x; }
__device__ __forceinline__ void vset(uint2 &v, int i, unsigned x) { if (i == 0) v.x = x; else v.y = x; }
__device__ __forceinline__ void vset(uint4 &v, int i, unsigned x) {
    if (i == 0) v.x = x; else if (i == 1) v.y = x; else if (i == 2) v.z = x; else v.w = x;
}
__device__ __forceinline__ void vset(u64 &v, int, u64 x) { v = x; }
__device__ __forceinline__ void vset(ulonglong2 &v, int i, u64 x) { if (i == 0) v.x = x; else v.y = x; }

// The tile this block owns.
#define TILE_ORIGIN                                                    \
    unsigned tile_y = blockIdx.x / tiles_x;                            \
    unsigned tile_x = blockIdx.x - tile_y * tiles_x;                   \
    u64 row0 = (u64)tile_y * TILE, col0 = (u64)tile_x * TILE;          \
    int sx = threadIdx.x % TILE, sy = threadIdx.x / TILE;

#define DEFINE_NAIVE(NAME, T, LD)                                                       \
    extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)                            \
    NAME(T *dst, const T *src, u64 rows, u64 cols, unsigned tiles_x, unsigned flags) {   \
        ptxkit::grid_dependency_begin();                                                 \
        (void)flags;                                                                    \
        TILE_ORIGIN                                                                     \
        T v[TILE / SCALAR_ROWS];                                                        \
        bool col_in = col0 + sx < cols;                                                 \
        _Pragma("unroll") for (int p = 0; p < TILE / SCALAR_ROWS; p++) {                \
            u64 r = row0 + sy + p * SCALAR_ROWS;                                        \
            if (col_in && r < rows) v[p] = LD(src + r * cols + col0 + sx);              \
        }                                                                               \
        _Pragma("unroll") for (int p = 0; p < TILE / SCALAR_ROWS; p++) {                \
            u64 r = row0 + sy + p * SCALAR_ROWS;                                        \
            if (col_in && r < rows) dst[(col0 + sx) * rows + r] = v[p];                 \
        }                                                                               \
    }

#define DEFINE_TILED(NAME, T, LD, V, VEC, LDV, PAD)                                              \
    extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)                                     \
    NAME(T *dst, const T *src, u64 rows, u64 cols, unsigned tiles_x, unsigned flags) {            \
        ptxkit::grid_dependency_begin();                                                          \
        TILE_STORAGE(T, PAD)                                                                     \
        TILE_ORIGIN                                                                              \
        bool full = row0 + TILE <= rows && col0 + TILE <= cols;                                  \
        int vx = threadIdx.x % VEC_COLS(VEC), vy = threadIdx.x / VEC_COLS(VEC);                 \
        if ((VEC) > 1 && (flags & 1u) && full) {                                                 \
            V v[TILE / VEC_ROWS(VEC)];                                                           \
            _Pragma("unroll") for (int p = 0; p < TILE / VEC_ROWS(VEC); p++)                     \
                v[p] = LDV((const V *)(src + (row0 + vy + p * VEC_ROWS(VEC)) * cols + col0 + vx * (VEC))); \
            _Pragma("unroll") for (int p = 0; p < TILE / VEC_ROWS(VEC); p++)                     \
                _Pragma("unroll") for (int i = 0; i < (VEC); i++)                                \
                    tile[vy + p * VEC_ROWS(VEC)][vx * (VEC) + i] = vget(v[p], i);                \
        } else {                                                                                 \
            T v[TILE / SCALAR_ROWS];                                                             \
            bool col_in = col0 + sx < cols;                                                      \
            _Pragma("unroll") for (int p = 0; p < TILE / SCALAR_ROWS; p++) {                     \
                u64 r = row0 + sy + p * SCALAR_ROWS;                                             \
                if (col_in && r < rows) v[p] = LD(src + r * cols + col0 + sx);                   \
            }                                                                                    \
            _Pragma("unroll") for (int p = 0; p < TILE / SCALAR_ROWS; p++)                       \
                tile[sy + p * SCALAR_ROWS][sx] = v[p];                                           \
        }                                                                                        \
        __syncthreads();                                                                         \
        /* Output row j of the tile is source column col0 + j. */                               \
        if ((VEC) > 1 && (flags & 2u) && full) {                                                 \
            _Pragma("unroll") for (int p = 0; p < TILE / VEC_ROWS(VEC); p++) {                   \
                int j = vy + p * VEC_ROWS(VEC);                                                  \
                V w;                                                                             \
                _Pragma("unroll") for (int i = 0; i < (VEC); i++) vset(w, i, tile[vx * (VEC) + i][j]); \
                *(V *)(dst + (col0 + j) * rows + row0 + vx * (VEC)) = w;                         \
            }                                                                                    \
        } else {                                                                                 \
            bool row_in = row0 + sx < rows;                                                      \
            _Pragma("unroll") for (int p = 0; p < TILE / SCALAR_ROWS; p++) {                     \
                u64 c = col0 + sy + p * SCALAR_ROWS;                                             \
                if (row_in && c < cols) dst[c * rows + row0 + sx] = tile[sx][sy + p * SCALAR_ROWS]; \
            }                                                                                    \
        }                                                                                        \
    }

// ---- Sector-aligned output partition (SECTOR_ALIGN) ---------------------
//
// Where output rows do not start on a 32-byte sector, a tile row's run of
// each output row starts and ends inside a sector that the neighbouring
// tile row's block writes the rest of (on an H100 at 4097 x 4095 float32:
// more L2 write requests than sectors and more time, with DRAM bytes at
// the ideal all the same: the L2 merges the halves). Here the boundary between tile rows
// in output row c moves d_c < S elements later (S elements per sector), to
// where that row's sectors begin, so every sector in the body of the matrix
// is written whole by one block. The tile holds S - 1 more input rows for
// that (those below it, which the next tile row reads too), and the first
// tile row also writes each output row's first d_c elements.
#define DEFINE_SECTORED(NAME, T, LD)                                                            \
    extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)                                    \
    NAME(T *dst, const T *src, u64 rows, u64 cols, unsigned tiles_x, unsigned flags) {           \
        ptxkit::grid_dependency_begin();                                                         \
        (void)flags;                                                                            \
        enum { S = 32 / sizeof(T), TROWS = TILE + S - 1,                                        \
               LOAD_PASSES = (TROWS + SCALAR_ROWS - 1) / SCALAR_ROWS };                         \
        SECTOR_STORAGE(T)                                                                       \
        TILE_ORIGIN                                                                             \
        T v[LOAD_PASSES];                                                                       \
        bool col_in = col0 + sx < cols;                                                         \
        _Pragma("unroll") for (int p = 0; p < LOAD_PASSES; p++) {                               \
            int q = sy + p * SCALAR_ROWS;                                                       \
            u64 r = row0 + q;                                                                   \
            if (q < TROWS && col_in && r < rows) v[p] = LD(src + r * cols + col0 + sx);         \
        }                                                                                       \
        _Pragma("unroll") for (int p = 0; p < LOAD_PASSES; p++) {                               \
            int q = sy + p * SCALAR_ROWS;                                                       \
            if (q < TROWS) tile[q][sx] = v[p];                                                  \
        }                                                                                       \
        __syncthreads();                                                                        \
        const u64 dst_e = (u64)dst / sizeof(T);                                                 \
        _Pragma("unroll") for (int p = 0; p < TILE / SCALAR_ROWS; p++) {                        \
            int j = sy + p * SCALAR_ROWS;                                                       \
            u64 c = col0 + j;                                                                   \
            int d = (int)((S - (dst_e + c * rows + row0) % S) % S);                             \
            u64 r = row0 + d + sx;                                                              \
            if (c < cols && r < rows) dst[c * rows + r] = tile[d + sx][j];                      \
        }                                                                                       \
        if (row0 == 0) {                                                                        \
            for (int i = threadIdx.x; i < TILE * (S - 1); i += BLOCK_SIZE) {                    \
                int j = i / (S - 1), k = i - j * (S - 1);                                       \
                u64 c = col0 + j;                                                               \
                int d = (int)((S - (dst_e + c * rows) % S) % S);                                \
                if (c < cols && k < d && (u64)k < rows) dst[c * rows + k] = tile[k][j];         \
            }                                                                                   \
        }                                                                                       \
    }

#if TILE > 64
#define SECTOR_STORAGE(T) T(*tile)[TILE + 1] = reinterpret_cast<T(*)[TILE + 1]>(transpose_dynamic_tile);
#else
#define SECTOR_STORAGE(T) __shared__ T tile[TILE + 32 / sizeof(T) - 1][TILE + 1];
#endif

DEFINE_NAIVE(transpose_naive_b32, unsigned, ptxkit::ld_u32)
DEFINE_NAIVE(transpose_naive_b64, u64, ptxkit::ld_u64)
DEFINE_TILED(transpose_tiled_b32, unsigned, ptxkit::ld_u32, vec32, VEC32, LD_VEC32, 0)
DEFINE_TILED(transpose_tiled_b64, u64, ptxkit::ld_u64, vec64, VEC64, LD_VEC64, 0)
#if SECTOR_ALIGN
DEFINE_SECTORED(transpose_padded_b32, unsigned, ptxkit::ld_u32)
DEFINE_SECTORED(transpose_padded_b64, u64, ptxkit::ld_u64)
#else
DEFINE_TILED(transpose_padded_b32, unsigned, ptxkit::ld_u32, vec32, VEC32, LD_VEC32, 1)
DEFINE_TILED(transpose_padded_b64, u64, ptxkit::ld_u64, vec64, VEC64, LD_VEC64, 1)
#endif
