/* Internal interface of the GEMM family (src/ops/gemm.c, gemm_ladder.c)
 * for the tuner, the command-line tool and the tests. */
#ifndef PTXKIT_OPS_GEMM_H
#define PTXKIT_OPS_GEMM_H

#include <stdbool.h>
#include <stddef.h>

#include "runtime/runtime.h"

/* A tile configuration of cu_sources/gemm.cu and gemm_dmma.cu:
 * ptxkit_gemm_tiles without its reserved fields. The warp tile follows:
 * (bm / tm) x (bn / tn) threads in warps of 32, warps_m of them along M, so
 * WM = bm / warps_m and WN = bn / (warps / warps_m); a warp's 32 lanes then
 * tile WM x WN with tm x tn. On the tensor cores (GEMM_F64_TC) tm x tn is
 * the same count, the part of C a lane holds: WM / 8 rows by WN / 4
 * columns, WM / 16 x WN / 8 mma tiles of 16 x 8 per warp. */
typedef struct gemm_config {
    int bm, bn, bk, tm, tn, warps_m, stages, split_k;
} gemm_config;

enum {
    GEMM_MAX_SPLIT_K = 64,
    GEMM_MAX_THREADS = 1024,
    GEMM_CLASS_COUNT = 4,
    GEMM_LADDER_STEPS = 7,
};

/* Which kernel a configuration is for: the values 4 and 8 are the element
 * sizes of gemm.cu's float32 and float64 (CUDA cores); GEMM_F64_TC is
 * gemm_dmma.cu, float64 on the FP64 tensor cores (sm_80+). */
typedef enum gemm_kind { GEMM_F32 = 4, GEMM_F64 = 8, GEMM_F64_TC = 9 } gemm_kind;

/* The kernel ptxkit_gemm runs for a type on a device (info NULL: one
 * without FP64 mma). */
gemm_kind gemm_kind_of(ptxkit_dtype type, const ptxkit_device_info *info);

/* Test switch: true runs float64 on the CUDA cores (gemm.cu) on every
 * GPU, as before sm_80, so that path stays tested on newer ones; false
 * (the default) the tensor cores where there are FP64 mma. Process-wide. */
void gemm_set_f64_simt(bool on);

/* The shape classes that get tuning buckets of their own: the tuning
 * database keys a GEMM by "<type>.<class>" and floor(log2(m * n * k)). */
typedef enum gemm_class { GEMM_SQUARE = 0, GEMM_SMALL_M, GEMM_SMALL_N, GEMM_SMALL_K } gemm_class;
/* Sides below this are "small". */
#define GEMM_SMALL_SIDE 256

gemm_class gemm_class_of(size_t m, size_t n, size_t k);
const char *gemm_class_name(gemm_class c); /* "square", "small_m", ...; NULL out of range */

/* Derived sizes of a configuration. */
typedef struct gemm_shape {
    int threads, warps, wm, wn, lanes_m, lanes_n;
} gemm_shape;

/* Whether c is a configuration the kind's kernel compiles (kind: a
 * gemm_kind, or 4 / 8 for gemm.cu's element size), whatever the operands'
 * layouts and alignment: every rule of its static_asserts and loaders.
 * False with a reason. split_k is checked against 0..GEMM_MAX_SPLIT_K. */
bool gemm_config_check(int kind, const gemm_config *c, gemm_shape *shape, char *why, size_t why_size);
/* A configuration's threads (bm/tm x bn/tn, whole warps), warps and warp
 * tile wm x wn (warps_m along M); false with why where they do not fit.
 * The checks both kernels' rules start from. */
bool gemm_check_warps(const gemm_config *c, int *threads, int *warps, int *wm, int *wn, char *why, size_t why_size);
/* stages 2..8 and split_k 0..GEMM_MAX_SPLIT_K, for both kernels. */
bool gemm_check_stages(const gemm_config *c, char *why, size_t why_size);
static inline bool gemm_power_of_two(int x) { return x > 0 && (x & (x - 1)) == 0; }

/* Dynamic shared memory of a launch: the STAGES-deep ring of both tiles. */
size_t gemm_shared_bytes(int kind, const gemm_config *c, bool trans_a, bool trans_b);

/* The most shared memory a configuration takes over the operand layouts. */
size_t gemm_shared_bytes_max(int kind, const gemm_config *c);

/* Blocks per SM asked of __launch_bounds__: what the registers a thread's
 * tile needs (an estimate) and the shared memory allow, at least 1. */
int gemm_min_blocks(int kind, const gemm_config *c, const ptxkit_device_info *info);

/* The built-in configuration for a shape class (split_k 0: by shape). */
gemm_config gemm_default_config(gemm_kind kind, gemm_class c);

/* The candidate configurations of `ptxkit bench gemm --tiles sweep` for a
 * kind (the tests run each of them). */
const gemm_config *gemm_sweep_configs(gemm_kind kind, int *count);

/* K slices for a shape when c->split_k is 0: enough blocks for two per SM
 * where the tiles alone leave SMs idle, each slice at least 64 k and four
 * k-tiles long. */
int gemm_split_for(const gemm_config *c, size_t m, size_t n, size_t k, int sm_count);

/* The configuration ptxkit_gemm runs for a call: the caller's tiles when
 * given, else the tuning database's entry for (type, class, m * n * k),
 * else the built-in one. *tuned (may be NULL) says whether it came from
 * the database. Records and returns INVALID_ARGUMENT for tiles that are
 * not a configuration. */
ptxkit_status gemm_resolve(ptxkit_context *ctx, ptxkit_dtype type, size_t m, size_t n, size_t k,
                           const ptxkit_gemm_tiles *tiles, gemm_config *out, bool *tuned);

/* Compiles and loads the kernels a configuration runs for these operand
 * layouts without launching them (the tuner compiles ahead with it). */
ptxkit_status gemm_prepare(ptxkit_context *ctx, ptxkit_dtype type, ptxkit_gemm_op op_a, ptxkit_gemm_op op_b,
                           const ptxkit_gemm_tiles *tiles);

/* Compiles and loads what ptxkit_gemm would launch for these arguments
 * (the same checks, configuration, split and alignment), without
 * launching: the tests warm their kernels from several threads with it. */
ptxkit_status gemm_prepare_call(ptxkit_context *ctx, ptxkit_dtype type, ptxkit_gemm_op op_a, ptxkit_gemm_op op_b,
                                size_t m, size_t n, size_t k, double alpha, ptxkit_dptr a, size_t lda, ptxkit_dptr b,
                                size_t ldb, double beta, ptxkit_dptr c, size_t ldc, const ptxkit_gemm_tiles *tiles);

/* Experiment switch for the benchmark: 0 compiles the main loop that loads
 * a k-tile's first fragments after the barrier starting it, 1 during the
 * previous tile's last k-step (gemm.cu's default), -1 the default again.
 * Process-wide; kernels compiled before keep theirs. */
void gemm_set_cross_prefetch(int on);

/* Experiment switch for the benchmark: the k depth of the tensor-core
 * kernel's mma (4, 8 or 16; capped by the k-tile), 0 its default (4). The
 * deeper ones need more registers, so fewer configurations pass
 * gemm_config_check while it is set. Process-wide; kernels compiled before
 * keep theirs. */
void gemm_set_mma_k(int k);

/* The tensor-core kernel's rules, register estimate and kernel (gemm_dmma.c). */
bool gemm_dmma_config_check(const gemm_config *c, gemm_shape *shape, char *why, size_t why_size);
int gemm_dmma_registers(const gemm_config *c);
ptxkit_status gemm_dmma_kernel(ptxkit_context *ctx, const gemm_config *c, const gemm_shape *sh, bool trans_a,
                               bool trans_b, bool vec_a, bool vec_b, bool partial, ptxkit_kernel **fn);

/* Tiles from a configuration, and back. */
ptxkit_gemm_tiles gemm_tiles_of(const gemm_config *c);
gemm_config gemm_config_of(const ptxkit_gemm_tiles *t);

/* "128x128x8 t8x8 w4 s4 k1" (split 0 prints as "k-"). */
void gemm_config_format(const gemm_config *c, char *buf, size_t size);

/* ---- the ladder -------------------------------------------------------- */

/* Name of ladder step 1..GEMM_LADDER_STEPS ("naive", ...); NULL out of range. */
const char *gemm_ladder_step_name(int step);

/* Global memory bytes a step's kernel reads per multiply-add (the lecture's
 * G80 arithmetic: the naive kernel reads two 4-byte floats per FMA, a
 * TILE_WIDTH tile divides that by TILE_WIDTH, register blocking by the
 * block tile), at float32. */
double gemm_ladder_bytes_per_fma(int step);

/* Loads (compiling if needed) ladder step `step`. */
ptxkit_status gemm_ladder_prepare(ptxkit_context *ctx, int step);

#endif
