/* ptxkit_private.h: what the ptxkit command needs from the library and no
 * application should: the benchmarks' experiment switches and measuring
 * hooks. NOT part of the ABI or the API: these functions may change or go
 * away in any release, including a patch release. The header is not
 * installed; the functions are exported from libptxkit (under the reserved
 * prefix ptxkit_private_) only so that the command can link the installed
 * shared library instead of the library's internal objects (README,
 * "Versions and ABI"). Each returns a status and records a message as the
 * public functions do; none prints or exits.
 *
 * Before adding here, ask whether an application would want the call too:
 * then it belongs in ptxkit.h, with the checks and tests a public call has. */
#ifndef PTXKIT_PRIVATE_H
#define PTXKIT_PRIVATE_H

#include <stddef.h>

#include "ptxkit.h"

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

/* ---- experiment switches of `ptxkit bench reduce|scan|gemm` ------------ */

/* ptxkit_reduce with the number of launches forced: 1 (the last block
 * reduces the partials; what ptxkit_reduce does), 2 (a second launch of one
 * block), 0 as ptxkit_reduce. */
ptxkit_status ptxkit_private_reduce_passes(ptxkit_context *ctx, ptxkit_reduce_op op, ptxkit_dtype type,
                                           ptxkit_dptr out, ptxkit_dptr in, size_t n,
                                           const ptxkit_config *config, ptxkit_stream *stream, int passes);

/* Switches of ptxkit_scan's kernel, -1 each for the kernel's own default:
 * tiles numbered by a ticket (1) or blockIdx.x (0), the back-off in ns
 * between polls, the look-back window, the blocks per SM asked of
 * __launch_bounds__, the staged kernel (1) or the register kernel (0), and
 * the staged kernel's bulk copies per tile. */
typedef struct ptxkit_private_scan_experiment {
    int dynamic_tiles, spin_ns, lookback, min_blocks, staged, chunks;
} ptxkit_private_scan_experiment;
/* ptxkit_scan with those switches (NULL: none). */
ptxkit_status ptxkit_private_scan(ptxkit_context *ctx, ptxkit_scan_kind kind, ptxkit_reduce_op op, ptxkit_dtype type,
                                  ptxkit_dptr out, ptxkit_dptr in, size_t n, const ptxkit_config *config,
                                  ptxkit_stream *stream, const ptxkit_private_scan_experiment *experiment);

/* GEMM main-loop switches of one context, for the GEMMs it runs after the
 * call (other contexts keep theirs): cross-tile fragment prefetch (0 off, 1
 * on, the default; -1 the default again), and the tensor-core kernel's mma
 * k depth (4, 8, 16; 0 its default). INVALID_ARGUMENT for other values or
 * a NULL context. */
ptxkit_status ptxkit_private_gemm_set_cross_prefetch(ptxkit_context *ctx, int on);
ptxkit_status ptxkit_private_gemm_set_mma_k(ptxkit_context *ctx, int k);

/* ---- `ptxkit bench startup` -------------------------------------------- */

/* `count` lookups of one built-in kernel (copy's ptxkit_copy_vec16, UNROLL=4
 * BLOCK_SIZE=256 LOAD_OP=2) in the context's kernel registry: the cost a
 * later launch of a family pays before it launches. Compiles it on the
 * first lookup if it is not loaded yet. *jit_log (may be NULL): that
 * kernel's load log (ptxkit_kernel_jit_log_get), "" when it failed. */
ptxkit_status ptxkit_private_registry_hits(ptxkit_context *ctx, int count, const char **jit_log);

/* ---- `ptxkit bench blocks`: the tuner's measurement of a grid ---------- */

/* The families tuned through their launch options (ptxkit_tune's families
 * but gemm): the index-th name, NULL past the last. */
const char *ptxkit_private_blocks_family(int index);

typedef struct ptxkit_private_blocks_variant {
    char name[40];          /* the variant, spelled out (the default's name when NULL was given) */
    const char *unit;       /* what n counts: "bytes", "elements" */
    int bench_log2;         /* the default n is 2^bench_log2 */
    int copies;             /* reads and writes its bytes (its ceiling is a copy) */
} ptxkit_private_blocks_variant;
/* Parses variant (NULL: the default) of family; NOT_FOUND for a family not
 * tuned through launch options, INVALID_ARGUMENT; the reason in
 * ptxkit_last_error(). */
ptxkit_status ptxkit_private_blocks_variant_get(const char *family, const char *variant,
                                                ptxkit_private_blocks_variant *out);
/* Bytes the operation must move at n (for GB/s and the ceiling). */
ptxkit_status ptxkit_private_blocks_bytes(const char *family, const char *variant, size_t n, size_t *bytes);
/* The block sizes and items-per-thread values the tuner searches on this
 * context's GPU (up to 16 each). */
ptxkit_status ptxkit_private_blocks_space(ptxkit_context *ctx, const char *family, const char *variant, int *blocks,
                                          int *block_count, int *items, int *item_count);

typedef struct ptxkit_private_measured {
    double gbs, ms, min_ms, max_ms; /* all 0 where the configuration is illegal, fails or is wrong */
    int samples;
} ptxkit_private_measured;
/* Times (blocks[i], items[i]) for i < count at n, the other parameters at
 * their defaults, as the tuner does (compiled ahead, checked against the
 * defaults' output); *default_gbs the built-in defaults. */
ptxkit_status ptxkit_private_blocks_measure(ptxkit_context *ctx, const char *family, const char *variant, size_t n,
                                            const int *blocks, const int *items, int count,
                                            ptxkit_private_measured *out, double *default_gbs,
                                            ptxkit_tune_progress_fn progress, void *progress_user);

/* ---- `ptxkit bench compile` ------------------------------------------- */

/* NVRTC's automatic precompiled headers for the compiles after the call:
 * 1 on where NVRTC has them, 0 off, -1 as PTXKIT_PCH says (the default).
 * *available (may be NULL): whether they would be used now (NVRTC 12.8+,
 * loaded by the call). */
ptxkit_status ptxkit_private_pch_mode(int mode, int *available);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif
