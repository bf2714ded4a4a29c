/* The memory lab: launchers for the access-pattern, structure-layout and
 * shared-memory bank kernels (lab/kernels/access.cu, aos.cu, banks.cu)
 * and the byte and conflict accounting the benchmarks report. Part of the
 * lab library (lab.h): used by `ptxkit bench access|aos|banks` and the
 * tests, through the public API only. Failures: a status, the message in
 * ptxkit_last_error(). */
#ifndef PTXKIT_MEMLAB_H
#define PTXKIT_MEMLAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ptxkit.h"

/* Load operators of the lab: the library's 0..6 (ptxkit_load_op) and the
 * sm_80+ L2 eviction priorities of include/ptxkit/load_hint.cuh. */
enum {
    MEMLAB_LOAD_L2_EVICT_FIRST = PTXKIT_LOAD_OP_COUNT, /* 7 */
    MEMLAB_LOAD_L2_EVICT_LAST,                         /* 8 */
    MEMLAB_LOAD_OP_COUNT
};
/* "default", "ca", ..., "nc", "L2:evict_first", "L2:evict_last"; NULL out of range. */
const char *memlab_load_op_name(int op);
/* Whether the device can run operator `op` (7 and 8 need sm_80). */
bool memlab_load_op_supported(ptxkit_context *ctx, int op);

/* ---- global access patterns (access.cu) ---- */

typedef enum memlab_pattern {
    MEMLAB_OFFSET = 0,   /* element e reads word e + param (param 0: coalesced) */
    MEMLAB_STRIDE,       /* element e reads word e * param */
    MEMLAB_VEC8,         /* element e is the 8-byte vector e (coalesced) */
    MEMLAB_VEC16,        /* element e is the 16-byte vector e (coalesced) */
    MEMLAB_GATHER,       /* element e reads word index[e] */
    MEMLAB_BROADCAST,    /* element e reads word e / 32: one word per warp */
    MEMLAB_WINDOW,       /* element e reads the MEMLAB_WINDOW words e .. e+8 */
    MEMLAB_PATTERN_COUNT
} memlab_pattern;

enum { MEMLAB_WINDOW_WORDS = 9, MEMLAB_DEFAULT_ITEMS = 4, MEMLAB_ACCESS_BLOCK = 256 };

const char *memlab_pattern_name(memlab_pattern p);

typedef struct memlab_access {
    memlab_pattern pattern;
    int load_op;          /* 0 .. MEMLAB_LOAD_OP_COUNT - 1 */
    int block_size;       /* 0: MEMLAB_ACCESS_BLOCK */
    int items;            /* elements per thread; 0: MEMLAB_DEFAULT_ITEMS */
    bool per_thread;      /* one output word per thread instead of per warp */
    size_t n;             /* elements */
    uint64_t param;       /* offset (words) or stride (words) */
    ptxkit_dptr out, in, index;
} memlab_access;

/* Words the input must hold for the pattern (for GATHER: at least n, and
 * every word the index addresses: 2^bits for memlab_make_index's index). */
size_t memlab_access_input_words(const memlab_access *a);
/* Number of 32-bit output words the kernel writes. */
size_t memlab_access_output_words(const memlab_access *a);
/* Launches the pattern. n == 0 launches nothing. */
ptxkit_status memlab_access_run(ptxkit_context *ctx, const memlab_access *a, ptxkit_stream *stream);
/* The expected output words, computed on the CPU from a copy of the input
 * (in_words words) and, for GATHER, the index. */
void memlab_access_reference(const memlab_access *a, const uint32_t *in, const uint32_t *index, uint32_t *out);

/* Bytes the application asked for (every thread's loads at their width,
 * and the output words) and the bytes the warp requests imply at 32-byte
 * sector granularity (each warp-wide load costs 32 bytes per distinct
 * sector it touches, as if nothing were cached between requests). */
void memlab_access_traffic(const memlab_access *a, double *app_bytes, double *sector_bytes);

/* index[e] = a pseudo-random permutation of [0, 2^bits) evaluated at e,
 * for e < n (n <= 2^bits, bits <= 32). */
ptxkit_status memlab_make_index(ptxkit_context *ctx, ptxkit_dptr index, size_t n, unsigned bits, uint32_t seed,
                                ptxkit_stream *stream);
uint32_t memlab_permute(uint32_t e, unsigned bits, uint32_t seed);

/* ---- structures of non-native size (aos.cu) ---- */

typedef enum memlab_layout {
    MEMLAB_AOS_NAIVE = 0,  /* float3 array, 12-byte elements */
    MEMLAB_SOA,            /* three float arrays */
    MEMLAB_AOS_STAGED,     /* float3 array through shared memory */
    MEMLAB_AOS_ALIGNED,    /* {x, y, z, pad} aligned to 16 bytes */
    MEMLAB_LAYOUT_COUNT
} memlab_layout;

const char *memlab_layout_name(memlab_layout l);

/* p' = p + (2, 2, 2) for n points. in/out: the point array (12 or 16 bytes
 * a point), or for SOA three arrays of n floats each at in, in + 4n,
 * in + 8n (likewise out). */
typedef struct memlab_aos {
    memlab_layout layout;
    int load_op;
    int block_size;       /* 0: 256 */
    size_t n;
    ptxkit_dptr out, in;
} memlab_aos;

/* Bytes one point occupies in the layout (12 or 16). */
size_t memlab_layout_point_bytes(memlab_layout l);
ptxkit_status memlab_aos_run(ptxkit_context *ctx, const memlab_aos *a, ptxkit_stream *stream);
/* Application bytes: 12 read + 12 written per point, whatever the layout.
 * Sector bytes: what the warp requests of the layout imply. */
void memlab_aos_traffic(const memlab_aos *a, double *app_bytes, double *sector_bytes);

/* ---- shared-memory banks (banks.cu) ---- */

enum { MEMLAB_BANKS_BLOCK = 1024, MEMLAB_BANKS_UNROLL = 8, MEMLAB_BANKS_MAX_STRIDE = 64,
       MEMLAB_BANKS_SMEM_BYTES = 16384 };

typedef struct memlab_banks {
    int word_bytes;       /* 1, 4 or 8 */
    int stride;           /* elements between lanes, 0 (broadcast) .. 64 */
    int iters;            /* loop trips; each does MEMLAB_BANKS_UNROLL loads */
    int blocks;           /* independent single-block measurements (>= 1) */
    ptxkit_dptr cycles;   /* blocks x uint64: cycles each block measured */
    ptxkit_dptr sink;     /* blocks x MEMLAB_BANKS_BLOCK x uint64 */
} memlab_banks;

ptxkit_status memlab_banks_run(ptxkit_context *ctx, const memlab_banks *b, ptxkit_stream *stream);
/* The sink values one block must write (MEMLAB_BANKS_BLOCK of them). */
void memlab_banks_reference(const memlab_banks *b, uint64_t *sink);
/* Shared-memory wavefronts one warp-wide access needs under the model of
 * 32 four-byte banks: lanes are served in groups moving at most 128 bytes
 * (32 lanes of 1 or 4 bytes, 16 lanes of 8 bytes); within a group each bank
 * serves one distinct 4-byte word per wavefront, and lanes reading the same
 * word share it. *ideal receives the count with no conflict. */
int memlab_banks_wavefronts(int word_bytes, int stride, int *ideal);

#endif
