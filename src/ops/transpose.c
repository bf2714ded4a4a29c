/* transpose: dense row-major out-of-place transpose (cu_sources/transpose.cu). */
#include <stdio.h>

#include "ops/memlab.h"
#include "runtime/runtime.h"

/* What the precompiled PTX is generated with (transpose.cu's defaults). */
static const transpose_config ptx_config = {.tile = 32, .block_size = 256, .vector_bytes = 16};

const char *transpose_kind_name(ptxkit_transpose_kind kind) {
    static const char *const names[] = {"padded", "naive", "tiled"};
    return (unsigned)kind <= PTXKIT_TRANSPOSE_TILED ? names[kind] : NULL;
}

transpose_config transpose_default_config(ptxkit_dtype type, bool jit) {
    if (!jit) return ptx_config;
    /* Measured on an H100 at 8192 x 8192 (BENCHMARKS.md): 64 x 64 tiles of
     * float32 with 4-byte accesses (16 per thread) reach 95% of
     * cuMemcpyDtoD, 16-byte accesses only 88% (bank conflicts on the padded
     * tile); 32 x 32 tiles of float64 with 8-byte accesses reach 97%. */
    if (type == PTXKIT_FLOAT64) return (transpose_config){.tile = 32, .block_size = 256, .vector_bytes = 8};
    return (transpose_config){.tile = 64, .block_size = 256, .vector_bytes = 4};
}

static ptxkit_status check_config(ptxkit_context *ctx, const transpose_config *c) {
    if (c->tile != 16 && c->tile != 32 && c->tile != 64)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "transpose: tile %d is not 16, 32 or 64", c->tile);
    if (c->vector_bytes != 4 && c->vector_bytes != 8 && c->vector_bytes != 16)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "transpose: vector width %d is not 4, 8 or 16",
                            c->vector_bytes);
    int block;
    ptxkit_status st = check_block_size(ctx, c->block_size, 0, &block);
    if (st != PTXKIT_SUCCESS) return st;
    /* transpose.cu: tile <= block <= tile^2, and the 4-byte kernels' vector
     * mapping needs block * (vector_bytes / 4) <= tile^2 */
    long long square = (long long)c->tile * c->tile;
    if (c->block_size < c->tile || c->block_size > square || (long long)c->block_size * (c->vector_bytes / 4) > square)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT,
                            "transpose: %d threads cannot cover a %d x %d tile with %d-byte vectors (need a power of "
                            "two with tile <= threads and threads x vector/4 <= tile^2)",
                            c->block_size, c->tile, c->tile, c->vector_bytes);
    return PTXKIT_SUCCESS;
}

static bool same_config(const transpose_config *a, const transpose_config *b) {
    return a->tile == b->tile && a->block_size == b->block_size && a->vector_bytes == b->vector_bytes;
}

ptxkit_status transpose_run(ptxkit_context *ctx, ptxkit_dtype type, ptxkit_dptr dst, ptxkit_dptr src, size_t rows,
                            size_t cols, ptxkit_transpose_kind kind, const transpose_config *config,
                            const ptxkit_launch_options *options, ptxkit_stream *stream) {
    ptxkit_launch_options opt;
    ptxkit_status st = check_launch_options(ctx, options, &opt);
    if (st != PTXKIT_SUCCESS) return st;
    if (type != PTXKIT_FLOAT32 && type != PTXKIT_FLOAT64)
        return record_error(ctx, (unsigned)type < PTXKIT_DTYPE_COUNT ? PTXKIT_ERROR_UNSUPPORTED : PTXKIT_ERROR_INVALID_ARGUMENT,
                            "transpose: type %d is not float32 or float64", (int)type);
    if ((unsigned)kind > PTXKIT_TRANSPOSE_TILED)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "transpose: unknown kind %d", (int)kind);
    if (!config) return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "transpose: NULL configuration");
    if ((st = check_config(ctx, config)) != PTXKIT_SUCCESS) return st;
    bool jit = options_use_jit(&opt);
    if (!jit && !same_config(config, &ptx_config))
        return record_error(ctx, PTXKIT_ERROR_UNSUPPORTED,
                            "transpose: the precompiled PTX is built for tile %d, %d threads, %d-byte vectors; other "
                            "configurations need the JIT path", ptx_config.tile, ptx_config.block_size, ptx_config.vector_bytes);

    size_t elem = type == PTXKIT_FLOAT64 ? 8 : 4, count, bytes;
    if (!mul_size(rows, cols, &count) || !mul_size(count, elem, &bytes))
        return record_error(ctx, PTXKIT_ERROR_OVERFLOW, "transpose: %zu x %zu elements overflow", rows, cols);
    if (count == 0) return PTXKIT_SUCCESS;
    if (!dst || !src) return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "transpose: NULL device pointer");
    if (dst + bytes < dst || src + bytes < src)
        return record_error(ctx, PTXKIT_ERROR_OVERFLOW, "transpose: %zu bytes wrap the address space", bytes);
    if ((dst | src) & (elem - 1))
        return record_error(ctx, PTXKIT_ERROR_MISALIGNED, "transpose: pointers must be %zu-byte aligned", elem);
    if (dst < src + bytes && src < dst + bytes)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "transpose: source and destination overlap");
    size_t tile = (size_t)config->tile;
    size_t tiles_x = cols / tile + (cols % tile != 0), tiles_y = rows / tile + (rows % tile != 0);
    if (tiles_x > 0x7fffffffu || tiles_y > 0x7fffffffu || tiles_x * tiles_y > 0x7fffffffu)
        return record_error(ctx, PTXKIT_ERROR_UNSUPPORTED, "transpose: %zu x %zu needs more than 2^31 tiles", rows, cols);

    /* Whole tiles move vectors where every row start is aligned. */
    size_t vec = (size_t)config->vector_bytes / elem;
    unsigned flags = 0;
    if (vec > 1 && src % (size_t)config->vector_bytes == 0 && cols % vec == 0) flags |= 1u;
    if (vec > 1 && dst % (size_t)config->vector_bytes == 0 && rows % vec == 0) flags |= 2u;

    char entry[40];
    snprintf(entry, sizeof entry, "transpose_%s_%s", transpose_kind_name(kind), elem == 8 ? "b64" : "b32");
    kernel_spec spec = {.family = "transpose", .entry = entry};
    define_scratch scratch = {0};
    if (jit) {
        spec_define_int(&spec, &scratch, "TILE", config->tile);
        spec_define_int(&spec, &scratch, "VEC_BYTES", config->vector_bytes);
    }
    opt.block_size = config->block_size; /* the PTX's own on that path: checked above */
    if ((st = context_enter(ctx)) != PTXKIT_SUCCESS) return st;
    CUfunction fn;
    int block = 0;
    st = family_kernel_get(ctx, &opt, &spec, config->block_size, &fn, &block);
    if (st == PTXKIT_SUCCESS) {
        CUdeviceptr d = dst, s = src;
        unsigned long long r = rows, c = cols;
        unsigned tx = (unsigned)tiles_x;
        void *args[] = {&d, &s, &r, &c, &tx, &flags};
        st = launch_kernel(ctx, fn, (unsigned)(tiles_x * tiles_y), 1, 1, (unsigned)block, 1, 1, 0, stream, args);
    }
    context_leave(ctx);
    return st;
}

ptxkit_status ptxkit_transpose(ptxkit_context *ctx, ptxkit_dtype type, ptxkit_dptr dst, ptxkit_dptr src, size_t rows,
                               size_t cols, ptxkit_transpose_kind kind, const ptxkit_launch_options *options,
                               ptxkit_stream *stream) {
    ptxkit_launch_options opt;
    ptxkit_status st = check_launch_options(ctx, options, &opt);
    if (st != PTXKIT_SUCCESS) return st;
    bool jit = options_use_jit(&opt);
    transpose_config config = transpose_default_config(type, jit);
    if (!jit && ((opt.block_size && opt.block_size != config.block_size) ||
                 (opt.vector_bytes && opt.vector_bytes != config.vector_bytes)))
        return record_error(ctx, PTXKIT_ERROR_UNSUPPORTED,
                            "transpose: the precompiled PTX is built for %d threads and %d-byte accesses: use the JIT path "
                            "for other configurations", config.block_size, config.vector_bytes);
    if (opt.block_size) config.block_size = opt.block_size;
    if (opt.vector_bytes) config.vector_bytes = opt.vector_bytes;
    /* A block size the default tile cannot use picks a tile that can. */
    if (opt.block_size && jit) {
        while (config.tile > 16 && config.block_size < config.tile) config.tile /= 2;
        while (config.tile < 64 && (config.block_size > config.tile * config.tile ||
                                    (long long)config.block_size * (config.vector_bytes / 4) > config.tile * config.tile))
            config.tile *= 2;
    }
    return transpose_run(ctx, type, dst, src, rows, cols, kind, &config, &opt, stream);
}
