/* Internal interface of the reduce family (src/ops/reduce.c and
 * reduce_ladder.c) for the command-line tool and the tests. */
#ifndef PTXKIT_OPS_REDUCE_H
#define PTXKIT_OPS_REDUCE_H

#include <stdbool.h>

#include "runtime/runtime.h"

/* Must match cu_sources/reduce.cu: scratch slots in each module, and the
 * most blocks (partials per slot) one launch may use. */
#define REDUCE_SLOTS 16
#define REDUCE_MAX_GRID 2048

enum {
    REDUCE_DEFAULT_BLOCK = 1024, /* also the block size of the PTX; best at 2^28 on an H100 */
    REDUCE_DEFAULT_VECTOR = 16, /* bytes per load */
    REDUCE_DEFAULT_UNROLL = 4,  /* vector loads in flight per thread (items_per_thread) */
    REDUCE_MAX_UNROLL = 16,
    LADDER_DEFAULT_BLOCK = 256,
    LADDER_STEPS = 10,
};

/* Whether (op, type) is provided: sum, min, max of int32, uint32, float32,
 * float64; sum of int64 and uint64; and, or, xor of the integer types
 * (uint64 sum and the signed bitwise operators run the kernels of the same
 * bits: int64 sum, unsigned and/or/xor). */
bool reduce_supported(ptxkit_reduce_op op, ptxkit_dtype type);

/* How ptxkit_reduce finishes: one launch whose last block reduces the
 * partials, or a second launch of one block. AUTO is one launch. */
typedef enum reduce_passes { REDUCE_PASSES_AUTO = 0, REDUCE_PASSES_ONE, REDUCE_PASSES_TWO } reduce_passes;

/* ptxkit_reduce with the number of launches chosen by the caller. */
ptxkit_status reduce_run(ptxkit_context *ctx, ptxkit_reduce_op op, ptxkit_dtype type, ptxkit_dptr in, size_t n,
                         ptxkit_dptr out, const ptxkit_launch_options *options, ptxkit_stream *stream,
                         reduce_passes passes);

/* Loads (compiling if needed) the production kernel of (op, type) for
 * these options without launching it: the tests warm the kernel cache
 * with it from several threads. */
ptxkit_status reduce_prepare(ptxkit_context *ctx, ptxkit_reduce_op op, ptxkit_dtype type,
                             const ptxkit_launch_options *options);

/* Whether ladder step 1..LADDER_STEPS exists for (op, type) on this context's GPU
 * (step 9 needs sm_80 and 32-bit integers); false with a recorded
 * PTXKIT_ERROR_UNSUPPORTED or PTXKIT_ERROR_INVALID_ARGUMENT status in *st. */
bool reduce_ladder_supported(ptxkit_context *ctx, int step, ptxkit_reduce_op op, ptxkit_dtype type, ptxkit_status *st);

/* Loads (compiling if needed) ladder step `step` for (op, type). */
ptxkit_status reduce_ladder_prepare(ptxkit_context *ctx, int step, ptxkit_reduce_op op, ptxkit_dtype type,
                                    const ptxkit_launch_options *options);

/* Device bytes of partials a ladder run needs for n elements (0 when one
 * launch does it all). */
ptxkit_status reduce_ladder_scratch_bytes(ptxkit_context *ctx, int step, ptxkit_reduce_op op, ptxkit_dtype type,
                                          size_t n, const ptxkit_launch_options *options, size_t *bytes);

/* One ladder run with caller-owned scratch (at least
 * reduce_ladder_scratch_bytes): fully asynchronous on `stream`, which the
 * benchmark needs; ptxkit_reduce_ladder allocates per call instead. */
ptxkit_status reduce_ladder_run(ptxkit_context *ctx, int step, ptxkit_reduce_op op, ptxkit_dtype type, ptxkit_dptr in,
                                size_t n, ptxkit_dptr out, ptxkit_dptr scratch, size_t scratch_bytes,
                                const ptxkit_launch_options *options, ptxkit_stream *stream);

/* Shared argument checks of both entry points: enums, support, pointer
 * alignment and overflow. Records and returns the failure. */
ptxkit_status reduce_check_args(ptxkit_context *ctx, const char *who, ptxkit_reduce_op op, ptxkit_dtype type,
                                ptxkit_dptr in, size_t n, ptxkit_dptr out);

/* The kernel entry suffix "<op>_<type>" computing (op, type), after the
 * same-bits mappings; NULL if unsupported. */
const char *reduce_kernel_suffix(ptxkit_reduce_op op, ptxkit_dtype type, ptxkit_reduce_op *kernel_op,
                                 ptxkit_dtype *kernel_type);

#endif
