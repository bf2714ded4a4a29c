/* The ladders: the reduce, scan and matrix-multiply kernels from a naive
 * first step to the production kernel's ideas, one idea per step
 * (lab/kernels/reduce_ladder.cu, scan_ladder.cu, gemm_ladder.cu; the GEMM
 * ladder's last step is ptxkit_gemm itself). Part of the lab library
 * (lab.h): used by `ptxkit ladder reduce|scan|gemm` and the tests, through
 * the public API only. Each ladder has one table: its steps' names, the
 * published 2007 figures beside them, and what sizes the scratch. Failures:
 * a status, the message in ptxkit_last_error(). Any thread; launches are
 * asynchronous on `stream` (NULL: the default stream) and allocate nothing. */
#ifndef PTXKIT_LAB_LADDERS_H
#define PTXKIT_LAB_LADDERS_H

#include <stdbool.h>
#include <stddef.h>

#include "ptxkit.h"
#include "ptxkit_ops.h"

/* How a reduce or scan step is compiled. */
typedef struct lab_ladder_options {
    int block_size;  /* 0: LAB_LADDER_DEFAULT_BLOCK; else a power of two in [32, 1024] */
    ptxkit_load_op load_op;  /* of the input's loads */
} lab_ladder_options;

enum { LAB_LADDER_DEFAULT_BLOCK = 256, LAB_LADDER_MAX_DEFINES = 6 };

/* A step's kernel as the lab compiles it: lab kernel file, entry and
 * defines (for ptxkit_program_compile without a GPU, as the tests do). */
typedef struct lab_ladder_kernel {
    const char *file;
    char entry[32];
    int block;       /* threads per block (reduce and scan steps) */
    int define_count;
    char defines[LAB_LADDER_MAX_DEFINES][40];
    const char *define_list[LAB_LADDER_MAX_DEFINES]; /* points into defines */
} lab_ladder_kernel;

/* ---- reduce: Mark Harris's ladder (NVIDIA, 2007) and three later steps ---- */

enum { LAB_REDUCE_LADDER_STEPS = 10 };

typedef struct lab_reduce_step {
    const char *name;
    int per_thread;   /* input elements per thread of a launch (scratch: a partial per block) */
    bool one_wave;    /* a grid of one wave of blocks over the input, then one block */
    double g80_ms;    /* the lecture's time for 2^22 ints on a G80, 128 threads; 0: the step postdates it */
    double g80_gbs;   /* and its bandwidth */
} lab_reduce_step;

/* Step s at [s - 1]. */
extern const lab_reduce_step lab_reduce_ladder[LAB_REDUCE_LADDER_STEPS];

/* Whether step `step` exists for (op, type) on this context's GPU: SUCCESS,
 * INVALID_ARGUMENT (no such step), UNSUPPORTED (an (op, type) ptxkit_reduce
 * lacks; step 9, redux.sync, needs a 32-bit integer type and sm_80). */
ptxkit_status lab_reduce_ladder_check(ptxkit_context *ctx, int step, ptxkit_reduce_op op, ptxkit_dtype type);
/* The kernel of step `step` for (op, type); INVALID_ARGUMENT or UNSUPPORTED
 * as lab_reduce_ladder_check's, without asking a GPU. */
ptxkit_status lab_reduce_ladder_kernel(int step, ptxkit_reduce_op op, ptxkit_dtype type, const lab_ladder_options *o,
                                       lab_ladder_kernel *out);
/* Compiles (or finds in the cache) and loads the step's kernel. */
ptxkit_status lab_reduce_ladder_prepare(ptxkit_context *ctx, int step, ptxkit_reduce_op op, ptxkit_dtype type,
                                        const lab_ladder_options *o);
/* Device bytes of partials lab_reduce_ladder_run needs for n elements (0
 * when one launch does it all). */
ptxkit_status lab_reduce_ladder_scratch_bytes(ptxkit_context *ctx, int step, ptxkit_reduce_op op, ptxkit_dtype type,
                                              size_t n, const lab_ladder_options *o, size_t *bytes);
/* Reduces in[0, n) into the one element at out: the step is launched on its
 * own partials (in `scratch`, at least lab_reduce_ladder_scratch_bytes,
 * element-aligned) until one value is left. n == 0 writes the identity. */
ptxkit_status lab_reduce_ladder_run(ptxkit_context *ctx, int step, ptxkit_reduce_op op, ptxkit_dtype type,
                                    ptxkit_dptr out, ptxkit_dptr in, size_t n, ptxkit_dptr scratch,
                                    size_t scratch_bytes, const lab_ladder_options *o, ptxkit_stream *stream);

/* ---- scan: the 2007 seeds (Harris, Sengupta & Owens) and warp shuffles ---- */

enum { LAB_SCAN_LADDER_STEPS = 4 };

typedef struct lab_scan_step {
    const char *name;
    int per_thread;   /* elements per thread (scratch: a block sum per block, at every level) */
} lab_scan_step;

extern const lab_scan_step lab_scan_ladder[LAB_SCAN_LADDER_STEPS];

/* The seed's table 2 (Harris, "Parallel Prefix Sum (Scan) with CUDA",
 * April 2007): the work-efficient, conflict-free scan (step 3) on a
 * GeForce 8800 GTX against a sequential scan on one core of a Core 2 Duo
 * Extreme at 2.93 GHz; milliseconds. */
typedef struct lab_scan_seed_row {
    size_t n;
    double cpu_ms, gpu_ms, speedup;
} lab_scan_seed_row;
enum { LAB_SCAN_SEED_ROWS = 11, LAB_SCAN_SEED_STEP = 3 };
extern const lab_scan_seed_row lab_scan_seed[LAB_SCAN_SEED_ROWS];

/* As the reduce ladder's, for (op, type) ptxkit_scan provides. The kernel
 * is the step's; its uniform add (scan_ladder_add) is compiled with the
 * same defines. */
ptxkit_status lab_scan_ladder_check(ptxkit_context *ctx, int step, ptxkit_reduce_op op, ptxkit_dtype type);
ptxkit_status lab_scan_ladder_kernel(int step, ptxkit_reduce_op op, ptxkit_dtype type, const lab_ladder_options *o,
                                     lab_ladder_kernel *out);
ptxkit_status lab_scan_ladder_prepare(ptxkit_context *ctx, int step, ptxkit_reduce_op op, ptxkit_dtype type,
                                      const lab_ladder_options *o);
ptxkit_status lab_scan_ladder_scratch_bytes(ptxkit_context *ctx, int step, ptxkit_reduce_op op, ptxkit_dtype type,
                                            size_t n, const lab_ladder_options *o, size_t *bytes);
/* Scans in[0, n) into out[0, n) (in == out: in place) the seeds' way for
 * arrays longer than a block: scan the blocks, scan their sums (in
 * `scratch`, recursively), add them back. n == 0 does nothing. */
ptxkit_status lab_scan_ladder_run(ptxkit_context *ctx, int step, ptxkit_scan_kind kind, ptxkit_reduce_op op,
                                  ptxkit_dtype type, ptxkit_dptr out, ptxkit_dptr in, size_t n, ptxkit_dptr scratch,
                                  size_t scratch_bytes, const lab_ladder_options *o, ptxkit_stream *stream);

/* ---- matrix multiply: the memory-model lecture's G80 kernels onwards ---- */

enum { LAB_GEMM_LADDER_STEPS = 7 };

typedef struct lab_gemm_step {
    const char *name;
    const char *entry;   /* gemm_ladder.cu's entry; NULL: ptxkit_gemm with two cp.async stages */
    int ladder_entry;    /* LADDER_ENTRY */
    int tile_width;      /* TILE_WIDTH (steps 2, 3); 0: none */
    int block_x, block_y;
    int tile;            /* C elements per block side; 128: m, n, k must be multiples of it */
    double bytes_per_fma;/* global bytes read per multiply-add at float32, the lecture's arithmetic */
} lab_gemm_step;

extern const lab_gemm_step lab_gemm_ladder[LAB_GEMM_LADDER_STEPS];

/* The lecture's G80 (GeForce 8800 GTX): 86.4 GB/s; the naive kernel reads
 * two 4-byte floats per multiply-add, so at most 86.4 / 8 = 10.8 G FMA/s,
 * 21.6 GFLOPS; it measured about 15. */
#define LAB_GEMM_G80_GBPS 86.4
#define LAB_GEMM_G80_NAIVE_GFLOPS 15.0

/* SUCCESS, INVALID_ARGUMENT (no such step) or UNSUPPORTED (step 7,
 * cp.async, needs sm_80). */
ptxkit_status lab_gemm_ladder_check(ptxkit_context *ctx, int step);
/* The kernel of steps 1-6 (NOT_FOUND for step 7: ptxkit_gemm's own). */
ptxkit_status lab_gemm_ladder_kernel(int step, lab_ladder_kernel *out);
/* Compiles and loads the step's kernel for m x n x k, so a timed run
 * compiles nothing. */
ptxkit_status lab_gemm_ladder_prepare(ptxkit_context *ctx, int step, size_t m, size_t n, size_t k);
/* float32 C = A * B with dense row-major A (m x k), B (k x n), C (m x n).
 * Steps 1-3 take any sizes; steps 4-7 need m, n and k multiples of 128 and
 * 16-byte aligned matrices (else UNSUPPORTED). */
ptxkit_status lab_gemm_ladder_run(ptxkit_context *ctx, int step, size_t m, size_t n, size_t k, ptxkit_dptr a,
                                  ptxkit_dptr b, ptxkit_dptr c, ptxkit_stream *stream);

#endif
