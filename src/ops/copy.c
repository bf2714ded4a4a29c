/* copy: vectorized device-to-device copy (cu_sources/copy.cu). */
#include "runtime/runtime.h"
#include "tuned/tuned.h"

/* Measured on an H100 at 1 GiB: one block per tile of 512 x 2 vectors
 * matches cuMemcpyDtoD, while a persistent occupancy-sized grid stays near
 * 95% of it (see BENCHMARKS.md). */
enum { COPY_DEFAULT_BLOCK = 512, COPY_UNROLL = 2 };

/* Widest vector both addresses allow when advanced together, capped by the
 * caller's request; 0 means only the funnel-shift kernel can do it. */
static int copy_vector_width(ptxkit_dptr dst, ptxkit_dptr src, int requested) {
    uint64_t diff = dst - src;
    for (int w = 16; w >= 4; w /= 2)
        if (w <= requested && (diff & (uint64_t)(w - 1)) == 0) return w;
    return 0;
}

ptxkit_status ptxkit_copy(ptxkit_context *ctx, ptxkit_dptr dst, ptxkit_dptr src, size_t bytes,
                          const ptxkit_launch_options *options, ptxkit_stream *stream) {
    ptxkit_launch_options opt;
    ptxkit_status st = check_launch_options(ctx, options, &opt);
    if (st != PTXKIT_SUCCESS) return st;
    if (bytes == 0) return PTXKIT_SUCCESS;
    if (!dst || !src) return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_copy: NULL device pointer");
    if (dst + bytes < dst || src + bytes < src)
        return record_error(ctx, PTXKIT_ERROR_OVERFLOW, "ptxkit_copy: %zu bytes wrap the address space", bytes);
    if (dst < src + bytes && src < dst + bytes)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_copy: source and destination overlap");
    tune_apply(ctx, "copy", "bytes", bytes, &opt);

    int width = copy_vector_width(dst, src, opt.vector_bytes ? opt.vector_bytes : 16);
    static const char *const entries[17] = {[0] = "ptxkit_copy_shift", [4] = "ptxkit_copy_vec4",
                                            [8] = "ptxkit_copy_vec8", [16] = "ptxkit_copy_vec16"};
    kernel_spec spec = {.family = "copy", .entry = entries[width]};
    define_scratch scratch = {0};
    int unroll = opt.items_per_thread ? opt.items_per_thread : COPY_UNROLL;
    if (!options_use_jit(&opt) && unroll != COPY_UNROLL)
        return record_error(ctx, PTXKIT_ERROR_UNSUPPORTED,
                            "ptxkit_copy: the precompiled PTX copies %d vectors per thread, not %d: use the JIT path",
                            COPY_UNROLL, unroll);
    spec_define_int(&spec, &scratch, "UNROLL", unroll);

    st = context_enter(ctx);
    if (st != PTXKIT_SUCCESS) return st;
    CUfunction fn;
    int block;
    st = family_kernel_get(ctx, &opt, &spec, COPY_DEFAULT_BLOCK, &fn, &block);
    if (st == PTXKIT_SUCCESS) {
        size_t unit = width ? (size_t)width : 4;
        /* One block per tile of block x unroll vectors (at least one block,
         * whose first threads also copy the edge bytes); with blocks_per_sm
         * set, a persistent grid of that many blocks per SM instead. */
        size_t work = bytes / unit / (width ? (size_t)unroll : 1) + 1;
        size_t needed = (work + (size_t)block - 1) / (size_t)block;
        if (needed > INT32_MAX) needed = INT32_MAX;
        unsigned grid = (unsigned)needed;
        if (opt.blocks_per_sm > 0) st = grid_size_for(ctx, fn, block, 0, opt.blocks_per_sm, needed, &grid);
        if (st == PTXKIT_SUCCESS) {
            CUdeviceptr d = dst, s = src;
            unsigned long long n = bytes;
            void *args[] = {&d, &s, &n};
            st = launch_kernel(ctx, fn, grid, 1, 1, (unsigned)block, 1, 1, 0, stream, args);
        }
    }
    context_leave(ctx);
    return st;
}
