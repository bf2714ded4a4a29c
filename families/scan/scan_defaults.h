/* scan's built-in parameters, written once: scan.cu compiles
 * with the PTX's shape when none is injected (so the precompiled PTX has
 * it), and scan.c launches with them and starts its tuning space
 * there. Plain #defines: this header is C and CUDA C++ alike. */
#ifndef PTXKIT_SCAN_DEFAULTS_H
#define PTXKIT_SCAN_DEFAULTS_H

#define SCAN_DEFAULT_BLOCK 512  /* also the block size of the PTX: fastest on an H100, 2^20 .. 2^28 */
#define SCAN_DEFAULT_VECTOR 16  /* bytes per load and store */
#define SCAN_DEFAULT_UNROLL 6   /* vectors per thread (items_per_thread), JIT path */
/* Vectors per thread of the PTX file: 4 keeps its text, and the time to
 * assemble it, smaller than the JIT path's 6. */
#define SCAN_PTX_UNROLL 4
/* 1: on sm_90 and later the JIT path runs the staged kernel (each tile
 * bulk-copied into shared memory) wherever the tile is at most
 * SCAN_STAGED_MAX_TILE_BYTES; 0: the register kernel everywhere. */
#define SCAN_DEFAULT_STAGED 1
/* The staged kernel's default shapes, by the bytes scanned (an H100):
 * from SCAN_STAGED_LARGE_BYTES on, 112 KB tiles, two per SM (the fastest
 * staged shape at 2^24 .. 2^28 elements of int32); below, 64 KB tiles,
 * three per SM (at 2^14 .. 2^22 the large tiles are too few to fill 132
 * SMs, and slower there). Items left at 0 with a block size given
 * take the shape's unroll, fewer where the tile would pass
 * SCAN_STAGED_MAX_TILE_BYTES. */
#define SCAN_STAGED_DEFAULT_BLOCK 256
#define SCAN_STAGED_DEFAULT_UNROLL 16
#define SCAN_STAGED_LARGE_BYTES (64ull << 20)
#define SCAN_STAGED_LARGE_BLOCK 1024
#define SCAN_STAGED_LARGE_UNROLL 7
/* Two tiles per SM of sm_90's 228 KB: past that a block would wait on its
 * look-back with no other block loading beside it. */
#define SCAN_STAGED_MAX_TILE_BYTES (112 * 1024)
/* How the staged kernel numbers its tiles: 0, by blockIdx.x (as CUB
 * does; the copy starts at once), 1, by a ticket taken from a counter in
 * L2 (every block the look-back waits on has started, whatever the order
 * of dispatch; the copy starts after the ticket's round trip). 0 was
 * faster on an H100 at every size measured, most at 2^22 .. 2^25. The
 * register kernel always takes tickets. */
#define SCAN_STAGED_TICKETS 0
/* Bulk copies per staged tile of 4-byte elements (each onto its own
 * barrier: the warps of the first parts start summing while the rest is
 * in flight); it must divide the block's warps, else the kernel makes one.
 * At 2^28 int32 on an H100, 8 was the fastest of 1, 2, 4 and 8.
 * 8-byte elements make one: at 32 registers the barrier index spills
 * 48-132 bytes there (ptxkit compile scan ... --resources). */
#define SCAN_DEFAULT_CHUNKS 8

#endif
