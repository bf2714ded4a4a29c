/* Internal interface of the reduce family (reduce.c) for the scan family
 * and the tests. */
#ifndef PTXKIT_OPS_REDUCE_H
#define PTXKIT_OPS_REDUCE_H

#include <stdbool.h>

#include "reduce_defaults.h" /* defaults, REDUCE_SLOTS, REDUCE_MAX_GRID: shared with reduce.cu */
#include "family.h"
#include "runtime/launch.h"
#include "ptxkit.h"
#include "ptxkit_ops.h"

enum {
    REDUCE_MAX_UNROLL = 16,
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
/* ptxkit_reduce's parameter names (ptxkit_reduce_experiment and the
 * sharded reduce read the same). */
extern const config_name reduce_config_names[];

ptxkit_status reduce_run(ptxkit_context *ctx, ptxkit_reduce_op op, ptxkit_dtype type, ptxkit_dptr in, size_t n,
                         ptxkit_dptr out, const launch_options *options, ptxkit_stream *stream,
                         reduce_passes passes);

/* Loads (compiling if needed) the production kernel of (op, type) for
 * these options without launching it: the tests warm the kernel cache
 * with it from several threads. */
ptxkit_status reduce_prepare(ptxkit_context *ctx, ptxkit_reduce_op op, ptxkit_dtype type,
                             const launch_options *options);

/* Argument checks shared with scan: enums, support, pointer
 * alignment and overflow. Records and returns the failure. */
ptxkit_status reduce_check_args(ptxkit_context *ctx, const char *who, ptxkit_reduce_op op, ptxkit_dtype type,
                                ptxkit_dptr in, size_t n, ptxkit_dptr out);

/* The tuner's variants "<op>.<type>" (scan's too: the same kernels compute
 * them) and the input bytes of n elements: hooks of reduce's descriptor
 * that scan's shares. */
bool reduce_tune_parse(const family_desc *f, const char *name, tune_variant *v, char *why, size_t why_size);
size_t reduce_tune_in_bytes(const tune_variant *v, size_t n);

/* The kernel entry suffix "<op>_<type>" computing (op, type), after the
 * same-bits mappings; NULL if unsupported. */
const char *reduce_kernel_suffix(ptxkit_reduce_op op, ptxkit_dtype type, ptxkit_reduce_op *kernel_op,
                                 ptxkit_dtype *kernel_type);

#endif
