/* The matrix-multiply ladder (gemm_ladder.cu; step 7 is gemm.cu
 * with two stages): teaching kernels from the G80 lecture's naive and
 * TILE_WIDTH kernels to the production kernel's shape. */
#include <stdio.h>

#include "family.h"
#include "gemm/gemm.h"
#include "runtime/args.h"
#include "runtime/context.h"
#include "runtime/kernel.h"
#include "runtime/launch.h"
#include "runtime/objects.h"
#include "runtime/status.h"

typedef struct ladder_step {
    const char *name;
    const char *entry;
    int ladder_entry; /* LADDER_ENTRY of gemm_ladder.cu; 0: gemm.cu */
    int tile_width;   /* TILE_WIDTH, steps 2 and 3 */
    int block_x, block_y;
    int tile;         /* C elements per block side (grid), and the size multiple steps 4.. need */
    double bytes_per_fma;
} ladder_step;

/* Global bytes per FMA at float32: the naive kernel loads both operands
 * (8 bytes) for every FMA; a TILE_WIDTH tile serves each loaded element to
 * TILE_WIDTH FMAs; a 128 x 128 block tile loads 128 + 128 floats per k for
 * 128 x 128 FMAs. */
static const ladder_step steps[GEMM_LADDER_STEPS] = {
    {"naive", "gemm_ladder_naive", 1, 0, 16, 16, 16, 8.0},
    {"shared tiles, TILE_WIDTH 16", "gemm_ladder_tiled", 2, 16, 16, 16, 16, 8.0 / 16},
    {"shared tiles, TILE_WIDTH 32", "gemm_ladder_tiled", 2, 32, 32, 32, 32, 8.0 / 32},
    {"register blocking 8x8", "gemm_ladder_blocked", 4, 0, 256, 1, 128, 4.0 * 256 / (128 * 128)},
    {"16-byte loads, A transposed", "gemm_ladder_vector", 5, 0, 256, 1, 128, 4.0 * 256 / (128 * 128)},
    {"warp tiling", "gemm_ladder_warptile", 6, 0, 256, 1, 128, 4.0 * 256 / (128 * 128)},
    {"cp.async double buffering", NULL, 0, 0, 256, 1, 128, 4.0 * 256 / (128 * 128)},
};

/* Step 7: gemm.cu's shape of steps 4-6 (128 x 128 x 8, 8 x 8 per thread,
 * warp tiles 32 x 64) with a two-buffer cp.async pipeline. */
static const gemm_config double_buffered = {128, 128, 8, 8, 8, 4, 2, 1};

const char *gemm_ladder_step_name(int step) { return step >= 1 && step <= GEMM_LADDER_STEPS ? steps[step - 1].name : NULL; }

double gemm_ladder_bytes_per_fma(int step) {
    return step >= 1 && step <= GEMM_LADDER_STEPS ? steps[step - 1].bytes_per_fma : 0;
}

static ptxkit_status step_kernel(ptxkit_context *ctx, const ladder_step *s, ptxkit_kernel **kernel) {
    kernel_spec spec = {.family = "gemm_ladder", .entry = s->entry};
    define_scratch scratch = {0};
    spec_define_int(&spec, &scratch, "LADDER_ENTRY", s->ladder_entry);
    if (s->tile_width) spec_define_int(&spec, &scratch, "TILE_WIDTH", s->tile_width);
    return kernel_get(ctx, &spec, kernel);
}

static ptxkit_status check_step(ptxkit_context *ctx, const char *who, int step) {
    if (!ctx) return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "%s: context is NULL", who);
    if (step < 1 || step > GEMM_LADDER_STEPS)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "%s: step %d is not 1..%d", who, step, GEMM_LADDER_STEPS);
    if (step == GEMM_LADDER_STEPS && ctx->info.cc_major < 8)
        return record_error(ctx, PTXKIT_ERROR_UNSUPPORTED, "%s: step %d (cp.async) needs sm_80 or later, this GPU is sm_%d%d",
                            who, step, ctx->info.cc_major, ctx->info.cc_minor);
    return PTXKIT_SUCCESS;
}

ptxkit_status gemm_ladder_prepare(ptxkit_context *ctx, int step) {
    ptxkit_status st = check_step(ctx, "gemm_ladder_prepare", step);
    if (st != PTXKIT_SUCCESS) return st;
    const ladder_step *s = &steps[step - 1];
    if (!s->entry) return gemm_prepare(ctx, PTXKIT_FLOAT32, PTXKIT_GEMM_N, PTXKIT_GEMM_N, &double_buffered);
    if ((st = context_enter(ctx)) != PTXKIT_SUCCESS) return st;
    ptxkit_kernel *kernel;
    st = step_kernel(ctx, s, &kernel);
    context_leave(ctx);
    return st;
}

ptxkit_status ptxkit_gemm_ladder(ptxkit_context *ctx, int step, size_t m, size_t n, size_t k, ptxkit_dptr a,
                                 ptxkit_dptr b, ptxkit_dptr c, ptxkit_stream *stream) {
    ptxkit_status st = check_step(ctx, "ptxkit_gemm_ladder", step);
    if (st != PTXKIT_SUCCESS) return st;
    const ladder_step *s = &steps[step - 1];
    if (m > 65535u * 16 || n > 0x7fffffffu || k > 0x7fffffffu)
        return record_error(ctx, PTXKIT_ERROR_UNSUPPORTED, "ptxkit_gemm_ladder: %zu x %zu x %zu is too large for a "
                            "teaching kernel's grid", m, n, k);
    if (s->tile == 128 && (m % 128 || n % 128 || k % 128 || (a | b | c) % 16))
        return record_error(ctx, PTXKIT_ERROR_UNSUPPORTED,
                            "ptxkit_gemm_ladder: step %d needs m, n and k multiples of 128 (not %zu x %zu x %zu) and "
                            "16-byte aligned matrices", step, m, n, k);
    if (!s->entry)
        return gemm_run(ctx, PTXKIT_FLOAT32, PTXKIT_GEMM_N, PTXKIT_GEMM_N, m, n, k, 1.0, a, k, b, n, 0.0, c, n,
                        &double_buffered, stream);
    if (m == 0 || n == 0) return PTXKIT_SUCCESS;
    size_t bytes_a, bytes_b, bytes_c;
    if (!mul_size(m, k, &bytes_a) || !mul_size(bytes_a, 4, &bytes_a) || !mul_size(k, n, &bytes_b) ||
        !mul_size(bytes_b, 4, &bytes_b) || !mul_size(m, n, &bytes_c) || !mul_size(bytes_c, 4, &bytes_c))
        return record_error(ctx, PTXKIT_ERROR_OVERFLOW, "ptxkit_gemm_ladder: %zu x %zu x %zu overflows", m, n, k);
    if (!c || (k && (!a || !b)))
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_gemm_ladder: NULL matrix");
    if ((a | b | c) % 4) return record_error(ctx, PTXKIT_ERROR_MISALIGNED, "ptxkit_gemm_ladder: matrices are 4-byte aligned");
    if (c < a + bytes_a && a < c + bytes_c && k)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_gemm_ladder: C overlaps A");
    if (c < b + bytes_b && b < c + bytes_c && k)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_gemm_ladder: C overlaps B");
    if ((st = context_enter(ctx)) != PTXKIT_SUCCESS) return st;
    ptxkit_kernel *kernel;
    st = step_kernel(ctx, s, &kernel);
    if (st == PTXKIT_SUCCESS) {
        CUdeviceptr da = a, db = b, dc = c;
        int im = (int)m, in = (int)n, ik = (int)k;
        void *args[] = {&da, &db, &dc, &im, &in, &ik};
        unsigned gx = (unsigned)((n + (size_t)s->tile - 1) / (size_t)s->tile);
        unsigned gy = (unsigned)((m + (size_t)s->tile - 1) / (size_t)s->tile);
        st = kernel_launch(kernel, (ptxkit_dim3){gx, gy, 1}, (ptxkit_dim3){(unsigned)s->block_x, (unsigned)s->block_y, 1}, 0,
                           stream, args);
    }
    context_leave(ctx);
    return st;
}

/* ---- the family's descriptor (families/family.h) ---------------------------- */

const family_desc gemm_ladder_family = {
    .name = "gemm_ladder",
    .description = "ptxkit_gemm_ladder: the matrix-multiply ladder, one idea per step (float32)",
    .entries = "gemm_ladder_<naive|tiled|blocked|vector|warptile> (one per LADDER_ENTRY; step 7 is gemm.cu)",
};

_Static_assert(PTXKIT_GEMM_LADDER_STEPS == GEMM_LADDER_STEPS, "ptxkit.h's PTXKIT_GEMM_LADDER_STEPS is the ladder's length");

const char *ptxkit_gemm_ladder_step_name(int step) { return gemm_ladder_step_name(step); }

double ptxkit_gemm_ladder_bytes_per_fma(int step) { return gemm_ladder_bytes_per_fma(step); }
