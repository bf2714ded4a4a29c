/* The GEMM family's configuration rules (gemm_config.c), shared by
 * the CUDA-core kernels' host code (gemm.c), the tensor-core kernel's
 * (gemm_dmma.c), the tuner and the tests: which tile configurations each
 * kernel compiles, their shared memory and launch bounds, the built-in and
 * sweep configurations, shape classes, split-K, and the benchmark's
 * experiment switches, which a context carries. Plain rules: no kernels are
 * compiled or launched here. */
#ifndef PTXKIT_OPS_GEMM_CONFIG_H
#define PTXKIT_OPS_GEMM_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include "ptxkit.h"

/* A tile configuration of gemm.cu and gemm_dmma.cu:
 * what ptxkit_gemm's configuration names bm .. split_k (all zero: tuned or
 * built-in). The warp tile follows:
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
};

/* Which kernel a configuration is for: the values 4 and 8 are the element
 * sizes of gemm.cu's float32 and float64 (CUDA cores); GEMM_F64_TC is
 * gemm_dmma.cu, float64 on the FP64 tensor cores (sm_80+), and
 * GEMM_F32_TC the same kernel over float32 operands (GEMM_F32_IN: exact
 * products, double sums), float32's kind on sm_90 (gemm_kind_of; a call
 * whose configuration only gemm.cu takes runs there). Its configurations follow
 * GEMM_F64_TC's rules with k-tiles of 32 and warp tiles of whole
 * 32-column groups. */
typedef enum gemm_kind { GEMM_F32 = 4, GEMM_F64 = 8, GEMM_F64_TC = 9, GEMM_F32_TC = 10 } gemm_kind;

/* Whether a kind runs on the tensor cores (gemm_dmma.cu). */
static inline bool gemm_kind_tc(int kind) { return kind == GEMM_F64_TC || kind == GEMM_F32_TC; }

/* Bytes of a kind's elements of A, B and C as stored, and of its sums
 * (the split-K slices): the tensor cores sum float32 in double. */
static inline int gemm_elem_bytes(int kind) { return kind == GEMM_F32 || kind == GEMM_F32_TC ? 4 : 8; }
static inline int gemm_sum_bytes(int kind) { return kind == GEMM_F32 ? 4 : 8; }

/* Experiment and test switches of the GEMM kernels, per context (set with
 * gemm_switches_set; `ptxkit bench gemm` does through the experimental tier).
 * Kernels compiled before a change keep theirs: each switch is a define of
 * the kernel, so part of its cache key. */
typedef struct gemm_switches {
    /* float64 on the CUDA cores (gemm.cu) on every GPU, as before sm_80, so
     * that path stays tested on newer ones; false: the tensor cores where
     * there are FP64 mma */
    bool f64_simt;
    /* gemm.cu's main loop: 0 loads a k-tile's first fragments after the
     * barrier starting it, 1 during the previous tile's last k-step; -1 the
     * kernel's default */
    int cross_prefetch;
    /* k depth of the tensor-core kernel's mma (4, 8 or 16, capped by the
     * k-tile); 0 its default (gemm_mma_k, gemm_tma_mma_k). The deeper ones
     * need more registers, so fewer configurations pass gemm_config_check
     * under them. */
    int mma_k;
    /* the tensor-core kernel's copies by tensor maps where it can take them
     * (gemm_dmma_tma_mode): 0 never (cp.async as on sm_80), 1 or -1 (the
     * default) where able */
    int tensor_maps;
    /* gemm.cu's tiles past the last whole wave by stream-K
     * (gemm_stream_k_for): 0 never, 1 at every shape it can take (the
     * tests' switch), -1 (the default) where the last wave would leave
     * SMs idle */
    int stream_k;
    /* float32 on the FP64 tensor cores on sm_90 (gemm_kind_of): 0 never
     * (the CUDA cores, as on other GPUs), 1 or -1 (the default) where
     * the GPU has them */
    int f32_tensor_cores;
} gemm_switches;

#define GEMM_SWITCHES_DEFAULT                                                                                 \
    ((gemm_switches){.f64_simt = false, .cross_prefetch = -1, .mma_k = 0, .tensor_maps = -1, .stream_k = -1, \
                     .f32_tensor_cores = -1})

/* The context's switches (the defaults for ctx NULL, or where its state
 * cannot be created). */
gemm_switches gemm_switches_get(ptxkit_context *ctx);
/* Sets them: INVALID_ARGUMENT for values outside the lists above,
 * OUT_OF_MEMORY where the context's state cannot be created. */
ptxkit_status gemm_switches_set(ptxkit_context *ctx, const gemm_switches *sw);

/* In every rule below, sw NULL means the defaults. */

/* The kernel ptxkit_gemm runs for a type on a device (info NULL: one
 * without FP64 mma). */
gemm_kind gemm_kind_of(ptxkit_dtype type, const ptxkit_device_info *info, const gemm_switches *sw);

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
bool gemm_config_check(int kind, const gemm_switches *sw, const gemm_config *c, gemm_shape *shape, char *why,
                       size_t why_size);

/* Dynamic shared memory of a launch: the STAGES-deep ring of both tiles. */
size_t gemm_shared_bytes(int kind, const gemm_config *c, bool trans_a, bool trans_b);

/* The most shared memory a configuration takes over the operand layouts. */
size_t gemm_shared_bytes_max(int kind, const gemm_config *c);

/* Blocks of c an SM holds at once: what the registers a thread's tile
 * needs (an estimate), the shared memory, the threads and the block slots
 * of an SM allow, at least 1 (info NULL: an H100's). */
int gemm_resident_blocks(int kind, const gemm_switches *sw, const gemm_config *c, const ptxkit_device_info *info);

/* Blocks per SM asked of __launch_bounds__: gemm_resident_blocks, at most 8. */
int gemm_min_blocks(int kind, const gemm_switches *sw, const gemm_config *c, const ptxkit_device_info *info);

/* NVRTC options for configuration c's kernel (trans_a, trans_b: the
 * operand's tile is copied as stored, not transposed on the way in;
 * stream_k: the stream-K kernel) beyond the family's: how many, pointed to
 * by *out (static strings). */
int gemm_nvrtc_options(int kind, const gemm_config *c, bool trans_a, bool trans_b, bool stream_k,
                       const ptxkit_device_info *info, const char *const **out);

/* The tensor-core kernel's mma k depth for c (its MMA_K) on the cp.async
 * path, and on the tensor-map path (gemm_dmma_tma_mode; 8 where it costs
 * no block an SM, else 4; the switch's value where set). */
int gemm_mma_k(const gemm_config *c, const gemm_switches *sw);
int gemm_tma_mma_k(int kind, const gemm_config *c, const gemm_switches *sw, const ptxkit_device_info *info);

/* The built-in configuration for a shape class (split_k 0: by shape): the
 * tuner's starting point, and ptxkit_gemm's at shapes that fill the GPU. */
gemm_config gemm_default_config(gemm_kind kind, gemm_class c);

/* The built-in configuration for a shape on a GPU (split_k 0: by shape):
 * the class's, unless its tiles fall short of one wave of resident blocks
 * and its plan (gemm_plan_for) of balanced work by more than a tenth;
 * then the cheapest plan of it and the kind's smaller tiles, each weighed
 * by what its FMAs cost. */
gemm_config gemm_default_for(gemm_kind kind, const gemm_switches *sw, size_t m, size_t n, size_t k,
                             const ptxkit_device_info *info);

/* The candidate configurations of `ptxkit bench gemm --tiles sweep` for a
 * kind (the tests run each of them). */
const gemm_config *gemm_sweep_configs(gemm_kind kind, int *count);

/* How c runs at (m, n, k) on a GPU (info NULL: one SM of an H100's
 * resources), under gemm_config.c's model of split-K: its K slices, the
 * blocks an SM holds at once, the fewest blocks that keep an SM at full
 * rate (fewer cost as much), the blocks of the launch (tiles x split) and
 * on the busiest SM, and the model's cost (in FMAs of one SM at full
 * rate), which ranks plans of like configurations. */
typedef struct gemm_plan {
    int split, resident, saturating;
    double blocks, per_sm, cost;
} gemm_plan;

/* The plan of c->split_k where it is set, else of the cheapest split: 1
 * where the tiles fill every SM's resident slots, else the one of least
 * cost among those whose slices are at least 64 k and four k-tiles long
 * (at most GEMM_MAX_SPLIT_K). */
gemm_plan gemm_plan_for(int kind, const gemm_switches *sw, const gemm_config *c, size_t m, size_t n, size_t k,
                        const ptxkit_device_info *info);

/* K slices for a shape: c->split_k where it is set, else gemm_plan_for's
 * (as ptxkit_gemm runs it: its slices whole k-tiles). */
int gemm_split_for(int kind, const gemm_switches *sw, const gemm_config *c, size_t m, size_t n, size_t k,
                   const ptxkit_device_info *info);

/* Stream-K for gemm.cu's kernel (not the tensor-core one) where K is
 * whole (split 1): a grid of whole waves (gemm_resident_blocks an SM) leaves
 * a last wave that takes as long as a full one with part of the GPU idle,
 * so the first dp_tiles tiles run as before, in whole waves, and the rest
 * as one run of (tile, k-tile) steps shared by `blocks` blocks, `per`
 * steps each (gemm.cu's stream_k_block). False: no stream-K (the switch is
 * off, K is short, the type is not float32 under the default, the tiles
 * fit one wave, or the last wave is nearly full). */
typedef struct gemm_stream_k {
    int dp_tiles, blocks, per;
} gemm_stream_k;
/* gemm.cu's GEMM_STREAMK: a CUDA-core kernel's part in a call. */
typedef enum gemm_sk_role {
    GEMM_SK_NONE = 0,   /* every tile whole */
    GEMM_SK_SHARES = 1, /* the stream-K kernel */
    GEMM_SK_LEAD = 2,   /* the whole waves ahead of it, which launch it early */
} gemm_sk_role;
bool gemm_stream_k_for(int kind, const gemm_switches *sw, const gemm_config *c, size_t m, size_t n, size_t k,
                       const ptxkit_device_info *info, gemm_stream_k *out);

/* A caller's ptxkit_config (NULL: all zero) read by ptxkit_gemm's names
 * "bm", "bn", "bk", "tm", "tn", "warps_m", "stages", "split_k":
 * INVALID_ARGUMENT naming `who` and the parameter for another name or a
 * value out of [0, 1024] (split_k [0, GEMM_MAX_SPLIT_K]). And back: every
 * field, zeros included (split_k 0: chosen by shape). */
ptxkit_status gemm_config_from(ptxkit_context *ctx, const char *who, const ptxkit_config *in, gemm_config *out);
void gemm_config_to(const gemm_config *c, ptxkit_config *out);

/* "128x128x8 t8x8 w4 s4 k1" (split 0 prints as "k-"). */
void gemm_config_format(const gemm_config *c, char *buf, size_t size);

#endif
