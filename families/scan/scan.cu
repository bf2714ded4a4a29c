// Production prefix scan: one launch, one pass over the data (read n, write
// n), with decoupled look-back (Merrill & Garland, "Single-pass Parallel
// Prefix Scan with Decoupled Look-back", NVIDIA 2016).
//
// Each block scans one tile: its data warps (all but the first, in blocks
// of 64 threads or more) hold 32 x VEC_UNROLL vectors of VEC_BYTES each
// (16-byte loads and stores through the caller's LOAD_OP); the first warp
// publishes the tile's aggregate in a status word, finds the sum of
// everything before the tile by reading its predecessors' words a window at
// a time, publishes the tile's inclusive prefix, and the data warps write
// the tile out.
//
// Status words: value and flag in one 64-bit word (32-bit types) or one
// 16-byte word (64-bit types), written and read with single relaxed
// accesses at GPU scope, so a reader sees a value and its flag together
// (the 16-byte case relies on aligned vector accesses being single
// transactions, as CUB's ScanTileState does). The flag's upper 30 bits hold
// the launch's epoch: a word left by an earlier launch on the same scratch
// never reads as valid, so no launch is needed to clear the words between
// calls. The host changes the epoch every launch and clears the words only
// when the epoch wraps (every 2^30 launches).
//
// Tiles are numbered in the order blocks start (a ticket counter per
// scratch slot, SCAN_DYNAMIC_TILES=1): every tile a block waits for belongs
// to a block that has started, so the look-back cannot wait on a block that
// is not resident. SCAN_DYNAMIC_TILES=0 numbers tiles by blockIdx.x, as CUB
// does, relying on the GPU dispatching a grid's blocks in increasing order
// (then every earlier tile's block has started too): the staged kernel's
// default, where the ticket's round trip to L2 would delay the tile's copy
// (scan.c, scan_defaults.h).
//
// Injected: BLOCK_SIZE, LOAD_OP, VEC_BYTES (4, 8 or 16), VEC_UNROLL (vectors
// per thread), ONLY_OP / ONLY_TYPE (reduce_ops.cuh), SCAN_DYNAMIC_TILES,
// SCAN_SPIN_NS (back-off between polls of a not yet published tile),
// SCAN_LOOKBACK (tiles per lane per look-back step), SCAN_MIN_BLOCKS,
// SCAN_STAGED and SCAN_CHUNKS (the staged kernel, below).
// Entry points: ptxkit_scan_<op>_<type>
//   (const T *in, u64 n, T *out, void *status, u64 *tickets, u64 ticket_base,
//    unsigned epoch, unsigned flags)
// flags: SCAN_FLAG_EXCLUSIVE, SCAN_FLAG_VECTOR_STORES (out and in are equally
// misaligned, so the output can be written with whole vectors too).
#include "reduce_ops.cuh"
#include "scan_defaults.h"
#include <ptxkit/grid.cuh>

// The PTX's shape (scan_defaults.h: the JIT path's default is more vectors
// per thread, set by scan.c).
#ifndef BLOCK_SIZE
#define BLOCK_SIZE SCAN_DEFAULT_BLOCK
#endif
#ifndef VEC_BYTES
#define VEC_BYTES SCAN_DEFAULT_VECTOR
#endif
#ifndef VEC_UNROLL
#define VEC_UNROLL SCAN_PTX_UNROLL
#endif
#ifndef SCAN_DYNAMIC_TILES
#define SCAN_DYNAMIC_TILES 1
#endif
#ifndef SCAN_SPIN_NS
#define SCAN_SPIN_NS 64
#endif
// SCAN_STAGED=1 (sm_90 and later): the staged kernel. Each tile goes to
// shared memory with one bulk copy (the Hopper copy engine, issued by one
// thread as soon as the tile is numbered), and every warp holds data: the
// registers carry a tile only while it is summed and while it is written
// out, so a block waiting on its predecessors costs the SM shared memory
// alone and several blocks per SM keep their tiles' loads in flight.
// SCAN_STAGED=0: the tile in registers from its loads to its stores (the
// precompiled PTX, and GPUs before sm_90).
#ifndef SCAN_STAGED
#define SCAN_STAGED 0
#endif
#if BLOCK_SIZE < 32 || BLOCK_SIZE > 1024 || (BLOCK_SIZE & (BLOCK_SIZE - 1))
#error "BLOCK_SIZE must be a power of two in [32, 1024]"
#endif

#define SCAN_FLAG_EXCLUSIVE 1u
#define SCAN_FLAG_VECTOR_STORES 2u

// Status of a tile, in the low 2 bits of its tag; the upper 30 bits are the
// epoch of the launch that wrote it.
#define SCAN_STATUS_AGGREGATE 1u  // the tile's own total is known
#define SCAN_STATUS_PREFIX 2u     // the total of everything up to and including the tile
// Blocks of 64 threads or more give their first warp to numbering the tile
// and looking back, and the rest to the data; a 32-thread block does both
// in its one warp. In the staged kernel every warp holds data, and warp 0
// looks back once the tile's sums are in.
// Tiles each lane reads per look-back step: the warp sees 32 x SCAN_LOOKBACK
// predecessors per round trip to L2. Register kernel: 1, 4 and 8 time
// alike on an H100 (within the noise), and 4 costs registers in its
// look-back warp only. Staged kernel: warp 0 both holds data and looks
// back, and every warp pays for the look-back's registers (32 a thread at
// two 1024-thread blocks per SM), so at 2^28 each value above 1 timed
// slower than 1, and the more the larger.
#ifndef SCAN_LOOKBACK
#define SCAN_LOOKBACK (SCAN_STAGED ? 1 : 4)
#endif
#if SCAN_LOOKBACK < 1 || SCAN_LOOKBACK > 8
#error "SCAN_LOOKBACK must be 1..8"
#endif
#define SCAN_LOOKBACK_WARP (BLOCK_SIZE >= 64 && !SCAN_STAGED)
#define SCAN_DATA_WARPS (BLOCK_SIZE / 32 - SCAN_LOOKBACK_WARP)
#define SCAN_FULL_MASK 0xffffffffu

// Registers: the compiler's choice (a thread holds its tile's words twice
// over at its peak: about 2 x VEC_UNROLL x VEC_BYTES / 4 + 20). Squeezing
// them for more resident blocks spilled 64-bit types; SCAN_MIN_BLOCKS
// (blocks per SM asked of __launch_bounds__) is there to experiment.
// The staged kernel asks for as many blocks per SM as its shared memory
// allows (228 KB per SM on sm_90, 1 KB of it reserved per block), at most
// 2048 threads.
#define SCAN_TILE_BYTES (BLOCK_SIZE * VEC_UNROLL * VEC_BYTES)
#define SCAN_STAGED_FIT ((228 * 1024) / (SCAN_TILE_BYTES + 2048))
#define SCAN_STAGED_BLOCKS                                                                                          \
    (SCAN_STAGED_FIT < 1 ? 1 : SCAN_STAGED_FIT < 2048 / BLOCK_SIZE ? SCAN_STAGED_FIT : 2048 / BLOCK_SIZE)
#ifndef SCAN_MIN_BLOCKS
#if SCAN_STAGED
#define SCAN_MIN_BLOCKS SCAN_STAGED_BLOCKS
#else
#define SCAN_MIN_BLOCKS 1
#endif
#endif
// Virtual coordinates start at this boundary at or before the input: whole
// vectors are aligned, and in the staged kernel so are whole tiles (the bulk
// copy moves 16-byte-aligned multiples of 16 bytes).
#if SCAN_STAGED
// SCAN_CHUNKS: bulk copies per tile, each onto its own barrier, so that the
// warps of the first parts sum while the rest is in flight (it divides the
// warps).
#ifndef SCAN_CHUNKS
#define SCAN_CHUNKS 1
#endif
#if SCAN_CHUNKS < 1 || (BLOCK_SIZE / 32) % SCAN_CHUNKS
#error "SCAN_CHUNKS must divide the block's warps"
#endif
#define SCAN_CHUNK_BYTES (SCAN_TILE_BYTES / SCAN_CHUNKS)
#define SCAN_ORIGIN_BYTES 16
#include <ptxkit/async.cuh>
#if !PTXKIT_HAS_BULK_COPY
#error "SCAN_STAGED needs sm_90 or later (the bulk copy engine)"
#endif
#else
#define SCAN_ORIGIN_BYTES VEC_BYTES
#endif

#if VEC_BYTES == 16
__device__ __forceinline__ void sload_words(const void *p, unsigned *w) {
    uint4 v = ptxkit::ld_v4u32((const uint4 *)p);
    w[0] = v.x, w[1] = v.y, w[2] = v.z, w[3] = v.w;
}
__device__ __forceinline__ void sstore_words(void *p, const unsigned *w) {
    asm volatile("st.global.v4.b32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(w[0]), "r"(w[1]), "r"(w[2]), "r"(w[3])
                 : "memory");
}
#elif VEC_BYTES == 8
__device__ __forceinline__ void sload_words(const void *p, unsigned *w) {
    uint2 v = ptxkit::ld_v2u32((const uint2 *)p);
    w[0] = v.x, w[1] = v.y;
}
__device__ __forceinline__ void sstore_words(void *p, const unsigned *w) {
    asm volatile("st.global.v2.b32 [%0], {%1, %2};" ::"l"(p), "r"(w[0]), "r"(w[1]) : "memory");
}
#elif VEC_BYTES == 4
__device__ __forceinline__ void sload_words(const void *p, unsigned *w) { w[0] = ptxkit::ld_u32((const unsigned *)p); }
__device__ __forceinline__ void sstore_words(void *p, const unsigned *w) { *(unsigned *)p = w[0]; }
#else
#error "VEC_BYTES must be 4, 8 or 16"
#endif
#define SCAN_VEC_WORDS (VEC_BYTES / 4)

// Status words: scratch written and read by different blocks of the same
// launch, so relaxed GPU-scope accesses (never served from a stale L1 line,
// never split). Not the caller's data: LOAD_OP does not apply.
__device__ __forceinline__ void scan_status_store(unsigned long long *p, unsigned long long w) {
    asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(w) : "memory");
}
__device__ __forceinline__ unsigned long long scan_status_load(const unsigned long long *p) {
    unsigned long long w;
    asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(w) : "l"(p) : "memory");
    return w;
}
__device__ __forceinline__ void scan_status_store2(ulonglong2 *p, unsigned long long value, unsigned long long tag) {
    asm volatile("st.relaxed.gpu.global.v2.u64 [%0], {%1, %2};" ::"l"(p), "l"(value), "l"(tag) : "memory");
}
__device__ __forceinline__ ulonglong2 scan_status_load2(const ulonglong2 *p) {
    ulonglong2 w;
    asm volatile("ld.relaxed.gpu.global.v2.u64 {%0, %1}, [%2];" : "=l"(w.x), "=l"(w.y) : "l"(p) : "memory");
    return w;
}

// A block-wide barrier that the look-back warp and the data warps reach
// from different branches: barrier.sync without .aligned.
__device__ __forceinline__ void scan_barrier() { asm volatile("barrier.sync 0;" ::: "memory"); }

__device__ __forceinline__ void scan_backoff() {
#if SCAN_SPIN_NS > 0 && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 700
    __nanosleep(SCAN_SPIN_NS);
#endif
}

#define REDUCE_BODY "scan_body.cuh"
#include "reduce_each.cuh"
