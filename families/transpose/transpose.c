/* transpose: dense row-major out-of-place transpose (transpose.cu). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ptxkit_ops.h"
#include "family.h"
#include "transpose/transpose.h"
#include "runtime/args.h"
#include "runtime/context.h"
#include "runtime/kernel.h"
#include "runtime/launch.h"
#include "runtime/objects.h"
#include "runtime/status.h"
#include "runtime/stream_scratch.h"
#include "transpose_defaults.h"
#include "tuned/launch_memo.h"
#include "tuned/tuned.h"

/* Tags of the two resolutions remembered per context (launch_memo.h): the
 * configuration of (options, type, shape class, size), and the kernel of a
 * configuration. */
static const char resolve_memo, run_memo;

/* What the precompiled PTX is generated with (transpose.cu's defaults). */
static const transpose_config ptx_config = {
    .tile = TRANSPOSE_PTX_TILE, .block_size = TRANSPOSE_PTX_BLOCK, .vector_bytes = TRANSPOSE_PTX_VECTOR};

const char *transpose_kind_name(ptxkit_transpose_kind kind) {
    static const char *const names[] = {"padded", "naive", "tiled"};
    return (unsigned)kind <= PTXKIT_TRANSPOSE_TILED ? names[kind] : NULL;
}

transpose_config transpose_default_config(ptxkit_dtype type, bool jit) {
    if (!jit) return ptx_config;
    /* measured on an H100: see transpose_defaults.h */
    if (type == PTXKIT_FLOAT64)
        return (transpose_config){
            .tile = TRANSPOSE_F64_TILE, .block_size = TRANSPOSE_JIT_BLOCK, .vector_bytes = TRANSPOSE_F64_VECTOR};
    return (transpose_config){
        .tile = TRANSPOSE_F32_TILE, .block_size = TRANSPOSE_JIT_BLOCK, .vector_bytes = TRANSPOSE_F32_VECTOR};
}

bool transpose_config_check(const transpose_config *c, char *why, size_t why_size) {
    if (c->tile != 16 && c->tile != 32 && c->tile != 64 && c->tile != 128) {
        snprintf(why, why_size, "tile %d is not 16, 32, 64 or 128", c->tile);
        return false;
    }
    if (c->vector_bytes != 4 && c->vector_bytes != 8 && c->vector_bytes != 16) {
        snprintf(why, why_size, "vector width %d is not 4, 8 or 16", c->vector_bytes);
        return false;
    }
    int b = c->block_size;
    if (b < 32 || b > 1024 || (b & (b - 1)) != 0) {
        snprintf(why, why_size, "block size %d is not a power of two in [32, 1024]", b);
        return false;
    }
    /* transpose.cu: tile <= block <= tile^2, and the 4-byte kernels' vector
     * mapping needs block * (vector_bytes / 4) <= tile^2 */
    long long square = (long long)c->tile * c->tile;
    if (b < c->tile || b > square || (long long)b * (c->vector_bytes / 4) > square) {
        snprintf(why, why_size,
                 "%d threads cannot cover a %d x %d tile with %d-byte vectors (need a power of two with tile <= "
                 "threads and threads x vector/4 <= tile^2)", b, c->tile, c->tile, c->vector_bytes);
        return false;
    }
    return true;
}

bool transpose_config_from(ptxkit_dtype type, bool jit, int block_size, int items_per_thread, int vector_bytes,
                           transpose_config *out, char *why, size_t why_size) {
    transpose_config d = transpose_default_config(type, jit), c = d;
    if (vector_bytes) c.vector_bytes = vector_bytes;
    int vec_words = c.vector_bytes / 4 > 0 ? c.vector_bytes / 4 : 1;
    if (block_size && items_per_thread) {
        /* each thread moves items_per_thread elements of a square tile */
        long long area = (long long)block_size * items_per_thread;
        c.block_size = block_size;
        c.tile = area == 256 ? 16 : area == 1024 ? 32 : area == 4096 ? 64 : area == 16384 ? 128 : 0;
        if (!c.tile) {
            snprintf(why, why_size,
                     "%d threads x %d items per thread is not a square tile of 16, 32, 64 or 128 (256, 1024, 4096 or "
                     "16384 elements)", block_size, items_per_thread);
            return false;
        }
    } else if (block_size) {
        /* a block size the default tile cannot use picks a tile that can */
        c.block_size = block_size;
        while (c.tile > 16 && c.block_size < c.tile) c.tile /= 2;
        while (c.tile < 64 && ((long long)c.block_size > (long long)c.tile * c.tile ||
                               (long long)c.block_size * vec_words > (long long)c.tile * c.tile))
            c.tile *= 2;
    } else if (items_per_thread) {
        /* the default tile if it gives a legal block, else the largest that does */
        static const int tiles[] = {0, 64, 32, 16};
        bool found = false;
        for (int i = 0; i < 4 && !found; i++) {
            int tile = i == 0 ? d.tile : tiles[i];
            int area = tile * tile;
            if (items_per_thread > area || area % items_per_thread) continue;
            int b = area / items_per_thread;
            if (b < 32 || b > 1024 || (b & (b - 1)) || b < tile) continue;
            c.tile = tile;
            c.block_size = b;
            found = true;
        }
        if (!found) {
            snprintf(why, why_size, "no 16, 32 or 64 square tile gives %d items per thread with 32 to 1024 threads",
                     items_per_thread);
            return false;
        }
    }
    /* a default vector width narrows to what the block can map */
    if (!vector_bytes)
        while (c.vector_bytes > 4 && (long long)c.block_size * (c.vector_bytes / 4) > (long long)c.tile * c.tile)
            c.vector_bytes /= 2;
    *out = c;
    return transpose_config_check(&c, why, why_size);
}

size_t transpose_tune_size(size_t rows, size_t cols) {
    size_t count;
    if (!mul_size(rows, cols, &count) || count == 0) return 0;
    int b = tune_bucket(count);
    /* the nearer power of two: 4097 x 4095 is a 2^24 matrix, not a 2^23 one */
    if (b < 63 && (double)count > ldexp(1.0, b) * M_SQRT2) b++;
    return (size_t)1 << b;
}

/* Shared memory of a kind's tile: transpose.cu's [TILE][TILE + pad], and
 * with SECTOR_ALIGN the 32 / elem - 1 extra input rows. */
static size_t tile_bytes(const transpose_config *c, ptxkit_transpose_kind kind, size_t elem, bool sectored) {
    if (kind == PTXKIT_TRANSPOSE_NAIVE) return 0;
    size_t extra_rows = sectored ? 32 / elem - 1 : 0;
    return ((size_t)c->tile + extra_rows) * (size_t)(c->tile + (kind == PTXKIT_TRANSPOSE_PADDED)) * elem;
}

/* Whether a tile of this shape may take the sector-aligned kernel: not
 * 128 x 128 tiles of 8-byte elements (with the extra rows they take 230
 * registers and run slower than the plain kernel on an H100 at
 * 4097 x 4095; every other tile gained). */
static bool sector_tile_ok(const transpose_config *c, size_t elem) { return !(elem == 8 && c->tile == 128); }

/* Vector flags of a launch: bit 0, whole tiles may load vectors (every
 * source row starts on a vector boundary); bit 1, they may store them. */
static unsigned vector_flags(const transpose_config *c, ptxkit_dptr dst, ptxkit_dptr src, size_t rows, size_t cols,
                             size_t elem) {
    size_t vec = (size_t)c->vector_bytes / elem;
    unsigned flags = 0;
    if (vec > 1 && src % (size_t)c->vector_bytes == 0 && cols % vec == 0) flags |= 1u;
    if (vec > 1 && dst % (size_t)c->vector_bytes == 0 && rows % vec == 0) flags |= 2u;
    return flags;
}

/* Whether a launch runs transpose.cu's sector-aligned kernel: the padded
 * kind on the JIT path, stores of single elements (no vector stores), and
 * some output row that does not start on a 32-byte sector (elsewhere tile
 * rows hand over at sector boundaries already), a tile that allows it. */
static bool sector_aligns(const transpose_config *c, ptxkit_transpose_kind kind, bool jit, unsigned flags,
                          ptxkit_dptr dst, size_t rows, size_t elem) {
    return jit && kind == PTXKIT_TRANSPOSE_PADDED && !(flags & 2u) && (dst % 32 != 0 || (rows * elem) % 32 != 0) &&
           sector_tile_ok(c, elem);
}

bool transpose_sector_aligned(const transpose_config *c, ptxkit_transpose_kind kind, bool jit, ptxkit_dtype type,
                              ptxkit_dptr dst, ptxkit_dptr src, size_t rows, size_t cols) {
    size_t elem = ptxkit_dtype_size(type);
    return sector_aligns(c, kind, jit, vector_flags(c, dst, src, rows, cols, elem), dst, rows, elem);
}

static ptxkit_status check_config(ptxkit_context *ctx, const transpose_config *c, ptxkit_transpose_kind kind, size_t elem,
                                  bool sector) {
    char why[256];
    if (!transpose_config_check(c, why, sizeof why))
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "transpose: %s", why);
    int block;
    ptxkit_status st = check_block_size(ctx, c->block_size, 0, &block); /* the device's limit */
    if (st != PTXKIT_SUCCESS) return st;
    size_t bytes = tile_bytes(c, kind, elem, sector);
    if (c->tile > 64 && ctx->info.shared_per_block_optin > 0 && bytes > (size_t)ctx->info.shared_per_block_optin)
        return record_error(ctx, PTXKIT_ERROR_UNSUPPORTED,
                            "transpose: a %d x %d tile of %zu-byte elements needs %zu bytes of shared memory, more than "
                            "this GPU's %d per block", c->tile, c->tile, elem, bytes, ctx->info.shared_per_block_optin);
    return PTXKIT_SUCCESS;
}

static bool same_config(const transpose_config *a, const transpose_config *b) {
    return a->tile == b->tile && a->block_size == b->block_size && a->vector_bytes == b->vector_bytes;
}

/* The element types transpose provides, as the calls and
 * ptxkit_transpose_supported all answer: float32 and float64 (else
 * UNSUPPORTED); INVALID_ARGUMENT out of range. */
static ptxkit_status check_type(ptxkit_context *ctx, const char *who, ptxkit_dtype type) {
    if ((unsigned)type >= PTXKIT_DTYPE_COUNT)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "%s: type %d is out of range", who, (int)type);
    if (type != PTXKIT_FLOAT32 && type != PTXKIT_FLOAT64)
        return record_error(ctx, PTXKIT_ERROR_UNSUPPORTED, "%s: %s is not provided (float32 and float64 are)", who,
                            ptxkit_dtype_name(type));
    return PTXKIT_SUCCESS;
}

ptxkit_status transpose_run(ptxkit_context *ctx, ptxkit_dtype type, ptxkit_dptr dst, ptxkit_dptr src, size_t rows,
                            size_t cols, ptxkit_transpose_kind kind, const transpose_config *config,
                            const launch_options *options, ptxkit_stream *stream) {
    launch_options opt;
    ptxkit_status st = check_launch_options(ctx, options, &opt);
    if (st != PTXKIT_SUCCESS) return st;
    if ((st = check_type(ctx, "transpose", type)) != PTXKIT_SUCCESS) return st;
    if ((unsigned)kind > PTXKIT_TRANSPOSE_TILED)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "transpose: unknown kind %d", (int)kind);
    if (!config) return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "transpose: NULL configuration");
    size_t elem = type == PTXKIT_FLOAT64 ? 8 : 4, count, bytes;
    bool jit = options_use_jit(&opt);
    unsigned flags = vector_flags(config, dst, src, rows, cols, elem);
    bool sector = sector_aligns(config, kind, jit, flags, dst, rows, elem);
    if ((st = check_config(ctx, config, kind, elem, sector)) != PTXKIT_SUCCESS) return st;
    if (!jit && !same_config(config, &ptx_config))
        return record_error(ctx, PTXKIT_ERROR_UNSUPPORTED,
                            "transpose: the precompiled PTX is built for tile %d, %d threads, %d-byte vectors; other "
                            "configurations need the JIT path", ptx_config.tile, ptx_config.block_size, ptx_config.vector_bytes);

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

    opt.block_size = config->block_size; /* the PTX's own on that path: checked above */
    const long long selectors[4] = {type, kind,
                                    (long long)config->tile << 32 | (long long)config->block_size << 8 | config->vector_bytes,
                                    sector};
    /* the kernel of a configuration does not depend on the size: one entry
     * serves every size, not one per size bucket */
    launch_memo_key key = launch_memo_key_for(&run_memo, &opt, selectors, 4, 0);
    launch_memo_value L;
    if ((st = context_enter(ctx)) != PTXKIT_SUCCESS) return st;
    if (!launch_memo_find(ctx, &key, &L)) {
        char entry[40];
        snprintf(entry, sizeof entry, "transpose_%s_%s", transpose_kind_name(kind), elem == 8 ? "b64" : "b32");
        kernel_spec spec = {.family = "transpose", .entry = entry};
        define_scratch scratch = {0};
        if (jit) {
            spec_define_int(&spec, &scratch, "TILE", config->tile);
            spec_define_int(&spec, &scratch, "VEC_BYTES", config->vector_bytes);
            if (sector) spec_define_int(&spec, &scratch, "SECTOR_ALIGN", 1);
        }
        /* a first kernel load is what a capture must be kept from
         * (runtime/stream_scratch.h): only a resolution asks */
        capture_guard guard;
        if ((st = capture_guard_enter(ctx, stream, &guard)) != PTXKIT_SUCCESS) goto done;
        st = family_kernel_get(ctx, &opt, &spec, config->block_size, &L.kernel, &L.block);
        capture_guard_leave(ctx, &guard);
        /* a tile wider than 64 is dynamic shared memory, past the static 48 KB */
        L.extra[0] = config->tile > 64 ? tile_bytes(config, kind, elem, sector) : 0;
        if (st == PTXKIT_SUCCESS && L.extra[0]) st = kernel_reserve_dynamic_shared(L.kernel, L.extra[0], false);
        if (st != PTXKIT_SUCCESS) goto done;
        launch_memo_store(ctx, &key, &L);
    }
    CUdeviceptr d = dst, s = src;
    unsigned long long r = rows, c = cols;
    unsigned tx = (unsigned)tiles_x;
    void *args[] = {&d, &s, &r, &c, &tx, &flags};
    st = kernel_launch(L.kernel, (ptxkit_dim3){(unsigned)(tiles_x * tiles_y), 1, 1}, (ptxkit_dim3){(unsigned)L.block, 1, 1},
                       L.extra[0], stream, args);
done:
    context_leave(ctx);
    return st;
}

bool transpose_shape_aligned(ptxkit_dtype type, size_t rows, size_t cols) {
    size_t per_vector = 16 / ptxkit_dtype_size(type);
    return rows % per_vector == 0 && cols % per_vector == 0;
}

/* Options to a configuration. block_size, items_per_thread (elements each
 * thread moves: the tile is a square of block x items elements) and
 * vector_bytes, where the caller sets any of them, are the caller's; where
 * the caller leaves all three at 0, the padded kind on the JIT path takes
 * the tuning database's entry for (transpose, variant) at the power of two
 * nearest rows x cols. The variant is the type for matrices whose sides are
 * whole 16-byte vectors ("float32"), else the type with ".unaligned": there
 * every access is one element at an odd offset, and other tiles win. The
 * three parameters only make sense together, so a tuned entry is used
 * whole or not at all, and one that is not a configuration transpose.cu
 * can run (a damaged or foreign file) is ignored: it costs the tuned
 * choice, never the call. */
ptxkit_status transpose_resolve(ptxkit_context *ctx, ptxkit_dtype type, size_t rows, size_t cols,
                                ptxkit_transpose_kind kind, const launch_options *options,
                                launch_options *used, transpose_config *config) {
    launch_options opt;
    ptxkit_status st = check_launch_options(ctx, options, &opt);
    if (st != PTXKIT_SUCCESS) return st;
    if ((st = check_type(ctx, "transpose", type)) != PTXKIT_SUCCESS) return st;
    bool jit = options_use_jit(&opt);
    char why[256];
    if (!jit && ((opt.block_size && opt.block_size != ptx_config.block_size) ||
                 (opt.vector_bytes && opt.vector_bytes != ptx_config.vector_bytes) ||
                 (opt.items_per_thread &&
                  opt.items_per_thread != ptx_config.tile * ptx_config.tile / ptx_config.block_size)))
        return record_error(ctx, PTXKIT_ERROR_UNSUPPORTED,
                            "transpose: the precompiled PTX is built for %d threads, %d items per thread and %d-byte "
                            "accesses: use the JIT path for other configurations", ptx_config.block_size,
                            ptx_config.tile * ptx_config.tile / ptx_config.block_size, ptx_config.vector_bytes);
    size_t n = transpose_tune_size(rows, cols);
    if (jit && kind == PTXKIT_TRANSPOSE_PADDED && n && !opt.block_size && !opt.items_per_thread && !opt.vector_bytes) {
        launch_options tuned = opt;
        char variant[32];
        snprintf(variant, sizeof variant, "%s%s", ptxkit_dtype_name(type),
                 transpose_shape_aligned(type, rows, cols) ? "" : ".unaligned");
        tune_apply(ctx, "transpose", variant, n, &tuned);
        transpose_config c;
        if ((tuned.block_size || tuned.items_per_thread || tuned.vector_bytes) &&
            transpose_config_from(type, jit, tuned.block_size, tuned.items_per_thread, tuned.vector_bytes, &c, why,
                                  sizeof why)) {
            opt.block_size = tuned.block_size;
            opt.items_per_thread = tuned.items_per_thread;
            opt.vector_bytes = tuned.vector_bytes;
        }
    }
    if (!transpose_config_from(type, jit, opt.block_size, opt.items_per_thread, opt.vector_bytes, config, why,
                               sizeof why))
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "transpose: %s", why);
    if (used) *used = opt;
    return PTXKIT_SUCCESS;
}

/* ptxkit_transpose's parameters (ptxkit.h): the common ones, and "tile",
 * the square tile's side, which becomes the elements per thread
 * (tile^2 / block_size) the kernels and the tuner count in. */
static ptxkit_status transpose_options(ptxkit_context *ctx, const char *who, const ptxkit_config *config,
                                       launch_options *out) {
    static const config_name names[] = {CONFIG_NAMES_COMMON, {NULL, 0}};
    ptxkit_config rest = {0};
    long long tile = 0;
    if (config && config->count > 0 && config->count <= PTXKIT_CONFIG_MAX_PARAMS)
        for (int i = 0; i < config->count; i++) {
            if (strncmp(config->params[i].name, "tile", PTXKIT_CONFIG_NAME_SIZE) == 0) tile = config->params[i].value;
            else rest.params[rest.count++] = config->params[i];
        }
    else if (config) rest = *config; /* a bad count: launch_options_from_config says so */
    ptxkit_status st = launch_options_from_config(ctx, who, config ? &rest : NULL, names, out);
    if (st != PTXKIT_SUCCESS || !tile) return st;
    if (tile != 16 && tile != 32 && tile != 64 && tile != 128)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "%s: parameter tile = %lld is not 16, 32, 64 or 128", who,
                            tile);
    const int area = (int)(tile * tile);
    int block = out->block_size;
    if (!block) {
        /* the JIT default where the tile allows it: tile <= threads <= tile^2, at most 64 elements each */
        block = TRANSPOSE_JIT_BLOCK;
        while (block < area / 64 || block < tile) block *= 2;
        while (block > area) block /= 2;
    }
    if (block < tile || block > area || area / block > 64)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT,
                            "%s: parameter tile = %lld does not fit block_size %d (tile <= block_size <= tile^2, at "
                            "most 64 elements per thread)", who, tile, block);
    out->block_size = block;
    out->items_per_thread = area / block;
    return PTXKIT_SUCCESS;
}

/* The resolution is remembered per context; the kernel's is transpose_run's. */
static ptxkit_status transpose_call(ptxkit_context *ctx, ptxkit_dtype type, ptxkit_dptr dst, ptxkit_dptr src, size_t rows,
                                    size_t cols, ptxkit_transpose_kind kind, const launch_options *options,
                                    ptxkit_stream *stream) {
    launch_options opt;
    ptxkit_status st = check_launch_options(ctx, options, &opt);
    if (st != PTXKIT_SUCCESS) return name_failure(st, "ptxkit_transpose");
    if (type != PTXKIT_FLOAT32 && type != PTXKIT_FLOAT64) /* transpose_resolve's check says why */
        return name_failure(transpose_resolve(ctx, type, rows, cols, kind, &opt, NULL, &(transpose_config){0}),
                            "ptxkit_transpose");
    /* what transpose_resolve gives depends on the shape through its class
     * and the tuning bucket only */
    const long long selectors[3] = {type, kind, transpose_shape_aligned(type, rows, cols)};
    launch_memo_key key = launch_memo_key_for(&resolve_memo, &opt, selectors, 3, transpose_tune_size(rows, cols));
    launch_memo_value R;
    transpose_config config;
    if (launch_memo_find(ctx, &key, &R)) {
        config = (transpose_config){(int)R.extra[0], (int)R.extra[1], (int)R.extra[2]};
        opt.block_size = R.block;
        opt.items_per_thread = (int)R.extra[3];
        opt.vector_bytes = (int)R.wave;
    } else {
        /* auto-tuning is what a capture must be kept from: only a resolution asks */
        launch_options used;
        capture_guard guard;
        if ((st = capture_guard_enter(ctx, stream, &guard)) != PTXKIT_SUCCESS) return name_failure(st, "ptxkit_transpose");
        st = transpose_resolve(ctx, type, rows, cols, kind, &opt, &used, &config);
        capture_guard_leave(ctx, &guard);
        if (st != PTXKIT_SUCCESS) return name_failure(st, "ptxkit_transpose");
        opt = used;
        R = (launch_memo_value){.block = opt.block_size, .wave = (unsigned)opt.vector_bytes,
                                .extra = {(size_t)config.tile, (size_t)config.block_size, (size_t)config.vector_bytes,
                                          (size_t)opt.items_per_thread}};
        /* a capture paused auto-tuning: its resolution is not the bucket's */
        if (!guard.capturing) launch_memo_store(ctx, &key, &R);
    }
    return name_failure(transpose_run(ctx, type, dst, src, rows, cols, kind, &config, &opt, stream), "ptxkit_transpose");
}

ptxkit_status ptxkit_transpose(ptxkit_context *ctx, ptxkit_transpose_kind kind, ptxkit_dtype type, ptxkit_dptr dst,
                               ptxkit_dptr src, size_t rows, size_t cols, const ptxkit_config *config,
                               ptxkit_stream *stream) {
    launch_options o;
    ptxkit_status st = transpose_options(ctx, "ptxkit_transpose", config, &o);
    return st == PTXKIT_SUCCESS ? transpose_call(ctx, type, dst, src, rows, cols, kind, &o, stream) : st;
}


/* ---- the family's descriptor (families/family.h) ---------------------------- */

/* float32's default elements per thread: its tile over its block */
#define TRANSPOSE_F32_ITEMS (TRANSPOSE_F32_TILE * TRANSPOSE_F32_TILE / TRANSPOSE_JIT_BLOCK)

/* transpose: the padded kind (the production one), n counts elements. The
 * tuned parameters are transpose.cu's: block size, items_per_thread
 * (elements each thread moves: the tile is the square of block x items
 * elements, 16 x 16 to 128 x 128) and vector width.
 *
 * Variants are a type and a shape class, as ptxkit_transpose looks them up
 * (transpose_shape_aligned): "float32" / "float64" for matrices whose sides
 * are whole 16-byte vectors, timed at sqrt(n) x sqrt(n) rounded down to
 * multiples of 64 (4096 x 4096 for 2^24: whole tiles move vectors);
 * "float32.unaligned" / "float64.unaligned" for the others, timed at odd
 * sides near sqrt(n) (4097 x 4095 for 2^24: no row starts on a vector or a
 * sector, the edge tiles are ragged, every access is one element). The two
 * classes want different tiles, so one entry for both would be wrong for
 * one of them. The matrix starts on a 16-byte boundary inside the buffers
 * where they have the room (the rig's verification view is misaligned on
 * purpose, with a ragged tail), so the vector path is checked too. ptxkit_transpose looks a matrix up by the power of
 * two nearest rows x cols (transpose_tune_size). */
typedef struct transpose_shape {
    size_t rows, cols;
} transpose_shape;

static size_t isqrt(size_t n) {
    size_t r = (size_t)sqrt((double)n);
    while (r > 0 && r * r > n) r--;
    while ((r + 1) * (r + 1) <= n) r++;
    return r;
}

static transpose_shape transpose_shape_for(const tune_variant *v, size_t n) {
    size_t room = n;
    transpose_shape s;
    if (v->op) { /* unaligned: odd sides */
        s.rows = isqrt(room) | 1;
        s.cols = room / s.rows;
        if (s.cols % 2 == 0) s.cols--;
        return s;
    }
    size_t r = isqrt(room), unit = r >= 64 ? 64 : 16 / v->elem_size;
    s.rows = r - r % unit;
    s.cols = s.rows ? room / s.rows : 0;
    s.cols -= s.cols % unit;
    if (!s.rows || !s.cols) s.rows = s.cols = 1; /* too small for a vector: one element */
    return s;
}

static bool fam_transpose_parse(const tune_family *f, const char *name, tune_variant *v, char *why, size_t why_size) {
    static const char *const names[] = {"float32", "float64", "float32.unaligned", "float64.unaligned"};
    int k = -1;
    for (int i = 0; i < 4; i++)
        if (strcmp(name, names[i]) == 0) k = i;
    if (k < 0) {
        snprintf(why, why_size,
                 "transpose variants are float32, float64 (sides of whole 16-byte vectors) and float32.unaligned, "
                 "float64.unaligned (other sides), not '%s'", name);
        return false;
    }
    v->family = f;
    snprintf(v->name, sizeof v->name, "%s", name);
    v->type = k % 2 ? PTXKIT_FLOAT64 : PTXKIT_FLOAT32;
    v->op = k >= 2; /* the shape class */
    v->elem_size = ptxkit_dtype_size(v->type);
    return true;
}

static size_t fam_transpose_bytes(const tune_variant *v, size_t n) { return n * v->elem_size; }

static double fam_transpose_moved(const tune_variant *v, size_t n) {
    transpose_shape s = transpose_shape_for(v, n);
    return 2.0 * (double)s.rows * (double)s.cols * (double)v->elem_size;
}

static bool fam_transpose_check(const tune_variant *v, const tune_config *c, char *why, size_t why_size) {
    transpose_config t;
    return transpose_config_from(v->type, true, c->block_size, c->items_per_thread, c->vector_bytes, &t, why,
                                 why_size);
}

/* The [TILE][TILE + 1] tile (dynamic shared memory past 64 x 64), with
 * the sector-aligned kernel's extra rows. */
static int fam_transpose_shared(const tune_variant *v, const tune_config *c) {
    transpose_config t;
    char why[160];
    if (!transpose_config_from(v->type, true, c->block_size, c->items_per_thread, c->vector_bytes, &t, why, sizeof why))
        return 0; /* refused by the check anyway */
    /* the unaligned class runs the sector-aligned kernel where it applies */
    bool sector = v->op && sector_tile_ok(&t, v->elem_size);
    return (int)tile_bytes(&t, PTXKIT_TRANSPOSE_PADDED, v->elem_size, sector);
}

/* One element or vector per item in flight, plus addressing. */
static int fam_transpose_registers(const tune_variant *v, const tune_config *c) {
    int items = c->items_per_thread ? c->items_per_thread : TRANSPOSE_F32_ITEMS;
    return 24 + items * (int)v->elem_size / 4;
}

static ptxkit_status fam_transpose_run(ptxkit_context *ctx, const tune_variant *v, ptxkit_dptr in, ptxkit_dptr out,
                                       size_t n, const launch_options *options, ptxkit_stream *stream) {
    transpose_shape s = transpose_shape_for(v, n);
    /* on a 16-byte boundary where the buffers have the room (the timed ones
     * are aligned already; the verification view has a ragged tail) */
    ptxkit_dptr aligned = (in + 15) & ~(ptxkit_dptr)15;
    if (s.rows * s.cols + (aligned - in) / v->elem_size <= n) {
        out += aligned - in;
        in = aligned;
    }
    return transpose_call(ctx, v->type, out, in, s.rows, s.cols, PTXKIT_TRANSPOSE_PADDED, options, stream);
}

/* The injected constants that carry tuner parameters. */
static const family_define transpose_defines[] = {
    {"BLOCK_SIZE", TUNE_BLOCK},
    {"VEC_BYTES", TUNE_VECTOR},
    {"LOAD_OP", TUNE_LOAD},
    {NULL, 0},
};

/* As ptxkit_transpose reads them: block_size x items_per_thread elements
 * make the square tile whose side "tile" names. */
static void fam_transpose_public_config(const launch_options *o, ptxkit_config *out) {
    static const config_name names[] = {CONFIG_NAMES_COMMON, {NULL, 0}};
    launch_options_to_config(o, names, out);
    long long area = (long long)o->block_size * o->items_per_thread;
    for (int tile = 16; tile <= 128; tile *= 2)
        if (area == (long long)tile * tile) ptxkit_config_set(out, "tile", tile);
}

const family_desc transpose_family = {
    .name = "transpose",
    .default_variant = "float32",
    .unit = "elements",
    .description = "ptxkit_transpose, padded kind, of a square-ish matrix of n elements",
    .entries = "transpose_<naive|tiled|padded>_<b32|b64>",
    .defines = transpose_defines,
    .bench_log2 = 26,
    .items = {1, 2, 4, 8, 16, 32, 64}, /* elements per thread: block x items is the tile */
    .vectors = {4, 8, 16},
    .bpsm = {0, -1},                     /* one block per tile: not a parameter */
    .loads = {PTXKIT_LOAD_DEFAULT, -1},
    /* a small space (48 legal for float32, 30 for float64): the grid is all of it */
    .primary = {[TUNE_BLOCK] = true, [TUNE_ITEMS] = true, [TUNE_VECTOR] = true},
    .start = {TRANSPOSE_JIT_BLOCK, TRANSPOSE_F32_ITEMS, TRANSPOSE_F32_VECTOR, 0, PTXKIT_LOAD_DEFAULT}, /* float32's defaults */
    .registers = fam_transpose_registers,
    .min_blocks = family_one_block,
    .shared_bytes = fam_transpose_shared,
    .dynamic_shared = true,
    .check = fam_transpose_check,
    .parse_variant = fam_transpose_parse,
    .in_bytes = fam_transpose_bytes,
    .out_bytes = fam_transpose_bytes,
    .bytes_moved = fam_transpose_moved,
    .public_config = fam_transpose_public_config,
    .run = fam_transpose_run,
};
ptxkit_status ptxkit_transpose_config_get(ptxkit_context *ctx, ptxkit_transpose_kind kind, ptxkit_dtype type,
                                          size_t rows, size_t cols, const ptxkit_config *cfg, ptxkit_config *out) {
    if (!out) return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_transpose_config_get: out is NULL");
    if ((unsigned)kind > PTXKIT_TRANSPOSE_TILED)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_transpose_config_get: unknown kind %d", (int)kind);
    launch_options opt;
    ptxkit_status st = transpose_options(ctx, "ptxkit_transpose_config_get", cfg, &opt);
    if (st != PTXKIT_SUCCESS) return st;
    transpose_config config;
    if ((st = transpose_resolve(ctx, type, rows, cols, kind, &opt, NULL, &config)) != PTXKIT_SUCCESS)
        return name_failure(st, "ptxkit_transpose_config_get");
    memset(out, 0, sizeof *out);
    ptxkit_config_set(out, "tile", config.tile);
    ptxkit_config_set(out, "block_size", config.block_size);
    ptxkit_config_set(out, "vector_bytes", config.vector_bytes);
    return PTXKIT_SUCCESS;
}

/* The calls' own type check; the context is not read (ptxkit_ops.h). */
ptxkit_status ptxkit_transpose_supported(ptxkit_context *ctx, ptxkit_transpose_kind kind, ptxkit_dtype type) {
    (void)ctx;
    if ((unsigned)kind > PTXKIT_TRANSPOSE_TILED)
        return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_transpose_supported: kind %d is out of range",
                            (int)kind);
    return check_type(NULL, "ptxkit_transpose_supported", type);
}
