/* scan: the production prefix scan (scan.cu), single pass with
 * decoupled look-back. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptxkit_ops.h"
#include "reduce/reduce.h"
#include "scan/scan.h"
#include "runtime/args.h"
#include "runtime/context.h"
#include "runtime/kernel.h"
#include "runtime/launch.h"
#include "runtime/objects.h"
#include "runtime/status.h"
#include "runtime/stream_scratch.h"
#include "tuned/launch_memo.h"
#include "tuned/tuned.h"

const char *ptxkit_scan_kind_name(ptxkit_scan_kind kind) {
    static const char *const names[PTXKIT_SCAN_KIND_COUNT] = {"inclusive", "exclusive"};
    return (unsigned)kind < PTXKIT_SCAN_KIND_COUNT ? names[kind] : NULL;
}

/* The scan kernels are the reduce combinations (reduce_each.cuh), mapped the
 * same way: uint64 sum runs int64 sum, the bitwise operators the unsigned. */
bool scan_supported(ptxkit_reduce_op op, ptxkit_dtype type) { return reduce_supported(op, type); }

ptxkit_status scan_check_args(ptxkit_context *ctx, const char *who, ptxkit_scan_kind kind, ptxkit_reduce_op op,
                              ptxkit_dtype type, ptxkit_dptr in, size_t n, ptxkit_dptr out) {
    if (!ctx) return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "%s: context is NULL", who);
    if ((unsigned)kind >= PTXKIT_SCAN_KIND_COUNT)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "%s: unknown scan kind %d", who, (int)kind);
    if ((unsigned)op >= PTXKIT_REDUCE_OP_COUNT)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "%s: unknown operator %d", who, (int)op);
    if ((unsigned)type >= PTXKIT_DTYPE_COUNT)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "%s: unknown element type %d", who, (int)type);
    if (!scan_supported(op, type))
        return record_error(ctx, PTXKIT_ERROR_UNSUPPORTED,
                            "%s: %s of %s is not provided (min and max exist for int32, uint32, float32 and "
                            "float64; the bitwise operators for integers)",
                            who, ptxkit_reduce_op_name(op), ptxkit_dtype_name(type));
    if (n == 0) return PTXKIT_SUCCESS;
    size_t elem = ptxkit_dtype_size(type), bytes;
    if (!in || !out)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "%s: %s pointer is NULL", who, in ? "output" : "input");
    if (in % elem || out % elem)
        return record_error(ctx, PTXKIT_ERROR_MISALIGNED, "%s: %s 0x%llx is not %zu-byte aligned for %s", who,
                            in % elem ? "input" : "output", (unsigned long long)(in % elem ? in : out), elem,
                            ptxkit_dtype_name(type));
    if (!mul_size(n, elem, &bytes) || in + bytes < in || out + bytes < out)
        return record_error(ctx, PTXKIT_ERROR_OVERFLOW, "%s: %zu elements of %s overflow the address space", who, n,
                            ptxkit_dtype_name(type));
    /* In place is one block reading its tile before writing it; a shifted
     * overlap would have blocks overwrite input other blocks still read. */
    if (in != out && in < out + bytes && out < in + bytes)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT,
                            "%s: input [0x%llx, +%zu) and output [0x%llx, +%zu) overlap without being the same (in "
                            "place means in == out)",
                            who, (unsigned long long)in, bytes, (unsigned long long)out, bytes);
    return PTXKIT_SUCCESS;
}

/* ---- scratch slots ------------------------------------------------------
 * A slot (runtime/stream_scratch.h: one per stream among the SCAN_SLOTS most
 * recently used, hand-over by event, capture rules) is what one scan in
 * flight needs besides its data, in one device buffer: two ticket counters
 * (number tiles in the order blocks start) and the tiles' status words, one
 * array per word size (8 bytes for 32-bit types, 16 for 64-bit: a word is
 * only ever read as the format that wrote it).
 *
 * Uncaptured launches never clear the words: each carries a new epoch (2 and
 * up), and a word of an older epoch reads as not yet published. The host
 * knows every ticket a launch takes (one per block), so their counter is
 * never reset either.
 *
 * A captured launch replays later with the arguments it was recorded with,
 * so it cannot take the host's next epoch or ticket base: it clears its
 * own counter (the second one) and the words it will use, in the graph,
 * and runs with ticket base 0 and epoch 1, which uncaptured launches never
 * use. Its words then never read as published to an uncaptured launch, and
 * the uncaptured counter never moves under a replay, in whatever order
 * replays and calls on the stream come. */
typedef struct scan_slot {
    bool ready;                      /* counters zeroed, words cleared */
    unsigned long long tickets_used; /* the uncaptured counter's value after the slot's launches so far */
    unsigned epoch;                  /* of the next uncaptured launch */
    size_t capacity[2];              /* tiles: [0] 8-byte words, [1] 16-byte */
} scan_slot;

enum {
    COUNTER_STRIDE = 128,   /* counters a cache line apart */
    WORDS_OFFSET = 2 * COUNTER_STRIDE,
    MIN_STATUS_TILES = 1024,
    CAPTURED_EPOCH = 1,
    FIRST_EPOCH = 2,
};

static const stream_scratch_client scan_scratch = {"scan", SCAN_SLOTS, sizeof(scan_slot)};

/* Where a slot's words of format w start. */
static CUdeviceptr words_of(CUdeviceptr buffer, const scan_slot *p, int w) {
    return buffer + WORDS_OFFSET + (w ? (CUdeviceptr)(p->capacity[0] * 8) : 0);
}

static size_t slot_bytes(const size_t capacity[2]) { return WORDS_OFFSET + capacity[0] * 8 + capacity[1] * 16; }

/* Readies the held slot for a launch of `tiles` tiles with status words of
 * format w: grows the buffer (a new one is cleared: epoch 0, which no launch
 * uses), clears the words when the uncaptured epoch wraps. */
static ptxkit_status slot_ready(ptxkit_context *ctx, stream_scratch *h, int w, size_t tiles, CUstream stream) {
    const cuda_driver *cu = ctx->cu;
    scan_slot *p = h->payload;
    CUresult r;
    if (!p->ready || p->capacity[w] < tiles) {
        size_t capacity[2] = {p->capacity[0], p->capacity[1]};
        if (capacity[w] < tiles) {
            capacity[w] = MIN_STATUS_TILES;
            while (capacity[w] < tiles) capacity[w] *= 2;
        }
        size_t bytes = slot_bytes(capacity);
        if (!p->ready && h->capturing)
            return record_error(ctx, PTXKIT_ERROR_UNSUPPORTED,
                                "scan: during stream capture the stream's scratch must be ready: run the call once on "
                                "this stream before beginning the capture");
        ptxkit_status st = stream_scratch_grow(ctx, h, bytes, bytes);
        if (st != PTXKIT_SUCCESS) return st;
        if (!p->ready || p->capacity[0] != capacity[0] || p->capacity[1] != capacity[1]) {
            /* a new buffer (the payload was zeroed): clear all of it */
            if ((r = cu->cuMemsetD32Async(h->buffer, 0, h->bytes / 4, stream)) != CUDA_SUCCESS)
                return record_cuda_error(ctx, r, "scan: clearing the scratch");
            p->capacity[0] = capacity[0];
            p->capacity[1] = capacity[1];
            p->tickets_used = 0;
            p->epoch = FIRST_EPOCH;
            p->ready = true;
        }
    }
    if (!h->capturing && p->epoch >= SCAN_EPOCH_LIMIT) {
        /* a wrapped epoch would meet words of its earlier use */
        if ((r = cu->cuMemsetD32Async(h->buffer + WORDS_OFFSET, 0, (h->bytes - WORDS_OFFSET) / 4, stream)) !=
            CUDA_SUCCESS)
            return record_cuda_error(ctx, r, "scan: clearing the tile status words");
        p->epoch = FIRST_EPOCH;
    }
    return PTXKIT_SUCCESS;
}

static void set_epoch(void *payload, void *arg) {
    scan_slot *p = payload;
    if (p->ready) p->epoch = *(const unsigned *)arg;
}

ptxkit_status scan_debug_set_epoch(ptxkit_context *ctx, unsigned epoch) {
    if (!ctx || epoch < FIRST_EPOCH || epoch >= SCAN_EPOCH_LIMIT)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "scan_debug_set_epoch: epoch %u out of range", epoch);
    stream_scratch_for_each_payload(ctx, &scan_scratch, set_epoch, &epoch);
    return PTXKIT_SUCCESS;
}

/* ---- configuration ------------------------------------------------------ */

typedef struct scan_config {
    launch_options opt; /* validated, tuned values filled in */
    const char *suffix;
    ptxkit_reduce_op kernel_op;
    ptxkit_dtype kernel_type;
    int vector_bytes;
    int unroll;  /* vectors per thread */
    int block;   /* threads per block as the JIT path resolves it (the PTX's own on that path) */
    bool staged; /* the staged kernel (SCAN_STAGED): tile in shared memory by bulk copy */
    bool tickets; /* tiles numbered by a ticket (SCAN_DYNAMIC_TILES), else by blockIdx.x */
    int chunks;   /* staged: bulk copies per tile (SCAN_CHUNKS) */
} scan_config;

/* Bytes of a tile of the staged kernel (every thread holds data). */
static size_t staged_tile_bytes(int block, const scan_config *c) {
    return (size_t)block * (size_t)c->unroll * (size_t)c->vector_bytes;
}

/* The staged kernel needs the JIT path on sm_90 or later (the bulk copy
 * engine); it is wanted by SCAN_DEFAULT_STAGED unless the experiment
 * switch says otherwise. */
static bool staged_hardware(const ptxkit_context *ctx, const launch_options *opt) {
    return options_use_jit(opt) && ctx->info.cc_major >= 9;
}
static bool staged_wanted(const scan_experiment *x) {
    return x && x->staged >= 0 ? x->staged != 0 : SCAN_DEFAULT_STAGED;
}

/* Whether the staged kernel runs: wanted, the hardware and path for it, and
 * a tile that leaves room for two blocks per SM (one block per SM would
 * wait with nothing else loading). */
static ptxkit_status scan_choose_kernel(ptxkit_context *ctx, scan_config *c, const scan_experiment *x) {
    const bool possible =
        staged_hardware(ctx, &c->opt) && staged_tile_bytes(c->block, c) <= SCAN_STAGED_MAX_TILE_BYTES;
    const bool want = staged_wanted(x);
    if (want && !possible && x && x->staged == 1)
        return record_error(ctx, PTXKIT_ERROR_UNSUPPORTED,
                            "scan: the staged kernel needs the JIT path, sm_90 or later and a tile of at most %d bytes "
                            "(%zu asked)",
                            SCAN_STAGED_MAX_TILE_BYTES, staged_tile_bytes(c->block, c));
    c->staged = want && possible;
    c->tickets = x && x->dynamic_tiles >= 0 ? x->dynamic_tiles != 0 : c->staged ? SCAN_STAGED_TICKETS != 0 : true;
    const bool wide = ptxkit_dtype_size(c->kernel_type) == 8;
    c->chunks = !c->staged ? 1 : x && x->chunks > 0 ? x->chunks : wide ? 1 : SCAN_DEFAULT_CHUNKS;
    if (c->staged && (c->block / 32) % c->chunks != 0) {
        if (x && x->chunks > 0)
            return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT,
                                "scan: %d bulk copies per tile do not divide a block's %d warps", c->chunks, c->block / 32);
        c->chunks = 1; /* the default, on a block with fewer warps */
    }
    return PTXKIT_SUCCESS;
}

/* Options left at 0 take the tuned value for (kernel, size) when the tuning
 * database has one, else the built-in default. items_per_thread counts
 * vectors per thread (VEC_UNROLL), as for reduce. The built-in default is
 * the staged kernel's shape for the size on sm_90 and later (JIT path),
 * else 512 x 6. The precompiled PTX is fixed at 512 threads x 4 vectors of
 * 16 bytes. */
static ptxkit_status scan_configure(ptxkit_context *ctx, ptxkit_reduce_op op, ptxkit_dtype type, size_t n,
                                    const launch_options *options, const scan_experiment *x, scan_config *c) {
    ptxkit_status st = check_launch_options(ctx, options, &c->opt);
    if (st != PTXKIT_SUCCESS) return st;
    c->suffix = reduce_kernel_suffix(op, type, &c->kernel_op, &c->kernel_type);
    if (!c->suffix)
        return record_error(ctx, PTXKIT_ERROR_UNSUPPORTED, "scan: %s of %s is not provided",
                            ptxkit_reduce_op_name(op), ptxkit_dtype_name(type));
    char variant[48];
    snprintf(variant, sizeof variant, "%s.%s", ptxkit_reduce_op_name(c->kernel_op), ptxkit_dtype_name(c->kernel_type));
    tune_apply(ctx, "scan", variant, n, &c->opt);
    /* A database entry is data from disk: validate what it gave. */
    launch_options checked;
    if ((st = check_launch_options(ctx, &c->opt, &checked)) != PTXKIT_SUCCESS) return st;
    int elem = (int)ptxkit_dtype_size(c->kernel_type);
    c->vector_bytes = c->opt.vector_bytes ? c->opt.vector_bytes : SCAN_DEFAULT_VECTOR;
    if (c->vector_bytes < elem)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "scan: %d-byte vectors are narrower than a %s element",
                            c->vector_bytes, ptxkit_dtype_name(type));
    const bool jit = options_use_jit(&c->opt);
    /* where the staged kernel is wanted and can run, its default shape */
    const bool staged_defaults = staged_hardware(ctx, &c->opt) && staged_wanted(x);
    const bool large = (unsigned long long)n * (unsigned long long)elem >= SCAN_STAGED_LARGE_BYTES;
    const int staged_block = large ? SCAN_STAGED_LARGE_BLOCK : SCAN_STAGED_DEFAULT_BLOCK;
    const int staged_unroll = large ? SCAN_STAGED_LARGE_UNROLL : SCAN_STAGED_DEFAULT_UNROLL;
    c->block = c->opt.block_size ? c->opt.block_size : staged_defaults ? staged_block : SCAN_DEFAULT_BLOCK;
    if (c->opt.items_per_thread) {
        c->unroll = c->opt.items_per_thread;
    } else if (staged_defaults) {
        const long long fit = SCAN_STAGED_MAX_TILE_BYTES / ((long long)c->block * c->vector_bytes);
        c->unroll = fit < 1 ? 1 : fit < staged_unroll ? (int)fit : staged_unroll;
    } else {
        c->unroll = jit ? SCAN_DEFAULT_UNROLL : SCAN_PTX_UNROLL;
    }
    if (c->unroll > SCAN_MAX_UNROLL)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT,
                            "scan: %d vectors per thread (vectors_per_thread) is more than %d", c->unroll,
                            SCAN_MAX_UNROLL);
    if (c->opt.blocks_per_sm)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT,
                            "scan: blocks_per_sm does not apply (one block per tile, as many tiles as the data has)");
    c->staged = false;
    if (!jit && (c->vector_bytes != SCAN_DEFAULT_VECTOR || c->unroll != SCAN_PTX_UNROLL))
        return record_error(ctx, PTXKIT_ERROR_UNSUPPORTED,
                            "scan: the precompiled PTX is built for %d-byte vectors, %d per thread; other vector "
                            "widths and vectors per thread need the JIT path",
                            SCAN_DEFAULT_VECTOR, SCAN_PTX_UNROLL);
    return PTXKIT_SUCCESS;
}

static ptxkit_status scan_kernel(ptxkit_context *ctx, scan_config *c, const scan_experiment *x, ptxkit_kernel **kernel,
                                 int *block) {
    char entry[64];
    snprintf(entry, sizeof entry, "ptxkit_scan_%s", c->suffix);
    kernel_spec spec = {.family = "scan", .entry = entry};
    define_scratch scratch = {0};
    spec_define_int(&spec, &scratch, "ONLY_OP", (long long)c->kernel_op);
    spec_define_int(&spec, &scratch, "ONLY_TYPE", (long long)c->kernel_type);
    spec_define_int(&spec, &scratch, "VEC_BYTES", c->vector_bytes);
    spec_define_int(&spec, &scratch, "VEC_UNROLL", c->unroll);
    if (x && x->spin_ns >= 0) spec_define_int(&spec, &scratch, "SCAN_SPIN_NS", x->spin_ns);
    if (x && x->lookback >= 0) spec_define_int(&spec, &scratch, "SCAN_LOOKBACK", x->lookback);
    if (x && x->min_blocks >= 0) spec_define_int(&spec, &scratch, "SCAN_MIN_BLOCKS", x->min_blocks);
    if (x && (x->dynamic_tiles >= 0 || x->spin_ns >= 0 || x->lookback >= 0 || x->min_blocks >= 0 || x->staged >= 0 ||
              x->chunks >= 0) &&
        !options_use_jit(&c->opt))
        return record_error(ctx, PTXKIT_ERROR_UNSUPPORTED, "scan: experiment switches need the JIT path");
    ptxkit_status st = scan_choose_kernel(ctx, c, x);
    if (st != PTXKIT_SUCCESS) return st;
    if (!c->tickets) spec_define_int(&spec, &scratch, "SCAN_DYNAMIC_TILES", 0);
    if (c->staged) {
        spec_define_int(&spec, &scratch, "SCAN_STAGED", 1);
        if (c->chunks > 1) spec_define_int(&spec, &scratch, "SCAN_CHUNKS", c->chunks);
    }
    if ((st = family_kernel_get(ctx, &c->opt, &spec, c->block, kernel, block)) != PTXKIT_SUCCESS) return st;
    /* the staged tile is dynamic shared memory, past the default 48 KB
     * limit; and as much of the SM's memory as possible goes to shared, for
     * several tiles per SM (a preference the driver may round). Raised once
     * per kernel: no driver call on later calls, none during a capture. */
    return c->staged ? kernel_reserve_dynamic_shared(*kernel, staged_tile_bytes(*block, c), true) : PTXKIT_SUCCESS;
}

/* Elements per tile, as scan.cu counts them: in the register
 * kernel blocks of 64 threads or more give one warp to the look-back; in
 * the staged kernel every thread holds data. */
static size_t tile_elements(int block, const scan_config *c) {
    size_t data_threads = (size_t)(block >= 64 && !c->staged ? block - 32 : block);
    return data_threads * (size_t)c->unroll * ((size_t)c->vector_bytes / ptxkit_dtype_size(c->kernel_type));
}

ptxkit_status scan_prepare(ptxkit_context *ctx, ptxkit_reduce_op op, ptxkit_dtype type,
                           const launch_options *options) {
    ptxkit_status st = scan_check_args(ctx, "scan_prepare", PTXKIT_SCAN_INCLUSIVE, op, type, 0, 0, 0);
    if (st != PTXKIT_SUCCESS) return st;
    scan_config c;
    if ((st = scan_configure(ctx, op, type, 0, options, NULL, &c)) != PTXKIT_SUCCESS) return st;
    if ((st = context_enter(ctx)) != PTXKIT_SUCCESS) return st;
    ptxkit_kernel *kernel;
    int block;
    st = scan_kernel(ctx, &c, NULL, &kernel, &block);
    context_leave(ctx);
    return st;
}

ptxkit_status scan_tile_elements(ptxkit_context *ctx, ptxkit_reduce_op op, ptxkit_dtype type, size_t n,
                                 const launch_options *options, size_t *elements) {
    ptxkit_status st = scan_check_args(ctx, "scan_tile_elements", PTXKIT_SCAN_INCLUSIVE, op, type, 0, 0, 0);
    if (st != PTXKIT_SUCCESS) return st;
    if (!elements) return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "scan_tile_elements: elements is NULL");
    scan_config c;
    if ((st = scan_configure(ctx, op, type, n, options, NULL, &c)) != PTXKIT_SUCCESS) return st;
    if ((st = context_enter(ctx)) != PTXKIT_SUCCESS) return st;
    ptxkit_kernel *kernel;
    int block;
    st = scan_kernel(ctx, &c, NULL, &kernel, &block);
    context_leave(ctx);
    if (st == PTXKIT_SUCCESS)
        *elements = tile_elements(block, &c);
    return st;
}

/* Asks once per call whether the stream is being captured (a driver call):
 * only a resolution (a first kernel load, auto-tuning) and a launch of
 * several tiles (scratch words and the ticket counter) depend on it. */
static ptxkit_status guard_once(ptxkit_context *ctx, ptxkit_stream *stream, capture_guard *guard, bool *guarded) {
    if (*guarded) return PTXKIT_SUCCESS;
    ptxkit_status st = capture_guard_enter(ctx, stream, guard);
    *guarded = st == PTXKIT_SUCCESS;
    return st;
}

/* scan_run with the capture guard entered on demand (guard_once); with
 * launch false everything but the launches and the captured clears (the
 * resolution remembered, the stream's slot taken and grown for n elements
 * at any alignment of `in`): ptxkit_scan_prepare, which therefore cannot
 * prepare anything other than what the call then runs. */
static ptxkit_status scan_run_guarded(ptxkit_context *ctx, const char *who, ptxkit_scan_kind kind,
                                      ptxkit_reduce_op op, ptxkit_dtype type, ptxkit_dptr in, size_t n,
                                      ptxkit_dptr out, const launch_options *options, ptxkit_stream *stream,
                                      const scan_experiment *experiment, capture_guard *g, bool *guarded,
                                      bool launch) {
    ptxkit_status st = scan_check_args(ctx, who, kind, op, type, in, n, out);
    if (st != PTXKIT_SUCCESS) return st;
    launch_options opt;
    if ((st = check_launch_options(ctx, options, &opt)) != PTXKIT_SUCCESS) return st;
    /* switches all left at -1 are the production kernel (its launch is remembered) */
    if (experiment && experiment->dynamic_tiles < 0 && experiment->spin_ns < 0 && experiment->lookback < 0 &&
        experiment->min_blocks < 0 && experiment->staged < 0 && experiment->chunks < 0)
        experiment = NULL;
    if (n == 0) { /* nothing to launch: the options are still checked */
        scan_config c;
        if ((st = guard_once(ctx, stream, g, guarded)) != PTXKIT_SUCCESS) return st;
        return scan_configure(ctx, op, type, n, &opt, experiment, &c);
    }
    const size_t elem = ptxkit_dtype_size(type);
    /* the built-in shape changes at a size that need not be a bucket's edge */
    const long long selectors[3] = {op, type, (unsigned long long)n * elem >= SCAN_STAGED_LARGE_BYTES};
    launch_memo_key key = launch_memo_key_for(&scan_scratch, &opt, selectors, 3, n);
    launch_memo_value L;
    if ((st = context_enter(ctx)) != PTXKIT_SUCCESS) return st;
    /* experiments are resolved on every call */
    if (experiment || !launch_memo_find(ctx, &key, &L)) {
        scan_config c;
        if ((st = guard_once(ctx, stream, g, guarded)) != PTXKIT_SUCCESS ||
            (st = scan_configure(ctx, op, type, n, &opt, experiment, &c)) != PTXKIT_SUCCESS ||
            (st = scan_kernel(ctx, &c, experiment, &L.kernel, &L.block)) != PTXKIT_SUCCESS)
            goto done;
        L.extra[0] = tile_elements(L.block, &c);
        L.extra[1] = c.staged ? staged_tile_bytes(L.block, &c) : 0;
        L.extra[2] = (size_t)c.vector_bytes;
        L.extra[3] = (c.staged ? 1u : 0u) | (c.tickets ? 2u : 0u);
        /* a capture paused auto-tuning: its resolution is not the bucket's */
        if (!experiment && !g->capturing) launch_memo_store(ctx, &key, &L);
    }
    const size_t tile = L.extra[0], vector_bytes = L.extra[2];
    const unsigned shared = (unsigned)L.extra[1];
    const bool tickets = L.extra[3] & 2;
    /* as the kernel counts: from the vector boundary (16 bytes in the staged
     * kernel) at or before `in` */
    const ptxkit_dptr origin = L.extra[3] & 1 ? 16 : (ptxkit_dptr)vector_bytes;
    /* preparing: the most elements ahead of a boundary any `in` can have */
    const size_t head = launch ? (size_t)(in % origin) / elem : (size_t)origin / elem - 1;
    const size_t tiles = (n - 1 + head) / tile + 1;
    if (tiles > 0x7fffffffu) {
        st = record_error(ctx, PTXKIT_ERROR_UNSUPPORTED, "scan: %zu elements need %zu tiles, more blocks than a launch has",
                          n, tiles);
        goto done;
    }
    const int w = elem == 8 ? 1 : 0;
    CUstream cs = stream_handle(stream);
    unsigned flags = (kind == PTXKIT_SCAN_EXCLUSIVE ? 1u : 0u) |
                     (in % (ptxkit_dptr)vector_bytes == out % (ptxkit_dptr)vector_bytes ? 2u : 0u);
    if (tiles == 1) {
        /* one block reads no status word and takes no ticket (scan_body.cuh):
         * no scratch, nothing to order, the same launch captured or not */
        CUdeviceptr d_in = in, d_out = out, none = 0;
        unsigned long long count = n, base = 0;
        unsigned epoch = 0;
        void *args[] = {&d_in, &count, &d_out, &none, &none, &base, &epoch, &flags};
        if (launch)
            st = kernel_launch(L.kernel, (ptxkit_dim3){1, 1, 1}, (ptxkit_dim3){(unsigned)L.block, 1, 1}, shared, stream, args);
        goto done;
    }
    if ((st = guard_once(ctx, stream, g, guarded)) != PTXKIT_SUCCESS) goto done;
    stream_scratch h;
    if ((st = stream_scratch_acquire(ctx, &scan_scratch, stream, g->capturing, &h)) != PTXKIT_SUCCESS) goto done;
    scan_slot *p = h.payload;
    st = slot_ready(ctx, &h, w, tiles, cs);
    CUdeviceptr d_in = in, d_out = out, words = words_of(h.buffer, p, w);
    CUdeviceptr counter = h.buffer + (g->capturing ? COUNTER_STRIDE : 0);
    unsigned long long count = n, base = g->capturing ? 0 : p->tickets_used;
    unsigned epoch = g->capturing ? CAPTURED_EPOCH : p->epoch;
    if (!launch) goto release;
    if (st == PTXKIT_SUCCESS && g->capturing) {
        /* recorded in the graph: every replay starts from a zero counter and
         * words of no epoch */
        CUresult r = ctx->cu->cuMemsetD32Async(counter, 0, 2, cs);
        if (r == CUDA_SUCCESS) r = ctx->cu->cuMemsetD32Async(words, 0, tiles * (w ? 16 : 8) / 4, cs);
        if (r != CUDA_SUCCESS) st = record_cuda_error(ctx, r, "scan: clearing the captured launch's scratch");
    }
    if (st == PTXKIT_SUCCESS) {
        void *args[] = {&d_in, &count, &d_out, &words, &counter, &base, &epoch, &flags};
        st = kernel_launch(L.kernel, (ptxkit_dim3){(unsigned)tiles, 1, 1}, (ptxkit_dim3){(unsigned)L.block, 1, 1}, shared,
                           stream, args);
        if (st == PTXKIT_SUCCESS && !g->capturing) {
            /* one ticket per block, taken only when there is more than one
             * and the kernel numbers tiles by ticket */
            if (tiles > 1 && tickets) p->tickets_used += tiles;
            p->epoch++;
        }
    }
release:
    stream_scratch_release(&h);
done:
    context_leave(ctx);
    return st;
}

ptxkit_status scan_run(ptxkit_context *ctx, ptxkit_scan_kind kind, ptxkit_reduce_op op, ptxkit_dtype type,
                       ptxkit_dptr in, size_t n, ptxkit_dptr out, const launch_options *options,
                       ptxkit_stream *stream, const scan_experiment *experiment) {
    capture_guard guard = {0};
    bool guarded = false;
    ptxkit_status st =
        scan_run_guarded(ctx, "ptxkit_scan", kind, op, type, in, n, out, options, stream, experiment, &guard, &guarded, true);
    if (guarded) capture_guard_leave(ctx, &guard);
    return st;
}

/* ptxkit_scan's parameters (ptxkit.h): "vectors_per_thread" is scan.cu's
 * VEC_UNROLL. One block per tile: no blocks_per_sm. */
const config_name scan_config_names[] = {CONFIG_NAMES_COMMON, {"vectors_per_thread", LAUNCH_ITEMS}, {NULL, 0}};

ptxkit_status ptxkit_scan(ptxkit_context *ctx, ptxkit_scan_kind kind, ptxkit_reduce_op op, ptxkit_dtype type,
                          ptxkit_dptr out, ptxkit_dptr in, size_t n, const ptxkit_config *config,
                          ptxkit_stream *stream) {
    launch_options o;
    ptxkit_status st = launch_options_from_config(ctx, "ptxkit_scan", config, scan_config_names, &o);
    return st == PTXKIT_SUCCESS ? name_failure(scan_run(ctx, kind, op, type, in, n, out, &o, stream, NULL), "ptxkit_scan") : st;
}

/* The call without its launches, on pointers of no consequence (in place:
 * no overlap to refuse); the slot is sized for any alignment of `in`. */
ptxkit_status ptxkit_scan_prepare(ptxkit_context *ctx, ptxkit_scan_kind kind, ptxkit_reduce_op op, ptxkit_dtype type,
                                  size_t n, const ptxkit_config *config, ptxkit_stream *stream) {
    static const char who[] = "ptxkit_scan_prepare";
    launch_options o;
    ptxkit_status st = launch_options_from_config(ctx, who, config, scan_config_names, &o);
    if (st != PTXKIT_SUCCESS) return st;
    capture_guard guard = {0};
    bool guarded = false;
    const ptxkit_dptr anywhere = 256;
    st = scan_run_guarded(ctx, who, kind, op, type, anywhere, n, anywhere, &o, stream, NULL, &guard, &guarded, false);
    if (guarded) capture_guard_leave(ctx, &guard);
    return name_failure(st, who);
}

/* Resolution without a kernel, as ptxkit_reduce_config_get. */
ptxkit_status ptxkit_scan_config_get(ptxkit_context *ctx, ptxkit_reduce_op op, ptxkit_dtype type, size_t n,
                                     const ptxkit_config *config, ptxkit_config *out) {
    static const char who[] = "ptxkit_scan_config_get";
    if (!ctx || !out) return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "%s: NULL argument", who);
    launch_options o;
    ptxkit_status st = launch_options_from_config(ctx, who, config, scan_config_names, &o);
    if (st == PTXKIT_SUCCESS) st = scan_check_args(ctx, who, PTXKIT_SCAN_INCLUSIVE, op, type, 0, 0, 0);
    if (st != PTXKIT_SUCCESS) return st;
    scan_config c;
    tune_auto_pause(true);
    st = scan_configure(ctx, op, type, n, &o, NULL, &c);
    tune_auto_pause(false);
    if (st != PTXKIT_SUCCESS) return name_failure(st, who);
    const bool jit = options_use_jit(&c.opt);
    if (!jit && c.block != SCAN_DEFAULT_BLOCK)
        return record_error(ctx, PTXKIT_ERROR_UNSUPPORTED,
                            "%s: the precompiled PTX is built for %d threads per block, not %d: use the JIT path", who,
                            SCAN_DEFAULT_BLOCK, c.block);
    memset(out, 0, sizeof *out);
    ptxkit_config_set(out, "path", jit ? PTXKIT_PATH_JIT : PTXKIT_PATH_PTX);
    ptxkit_config_set(out, "load_op", c.opt.load_op);
    ptxkit_config_set(out, "block_size", c.block);
    ptxkit_config_set(out, "vector_bytes", c.vector_bytes);
    ptxkit_config_set(out, "vectors_per_thread", c.unroll);
    return PTXKIT_SUCCESS;
}

/* ---- the family's descriptor (families/family.h) ---------------------------- */

/* scan: n counts elements; variants "<op>.<type>" as for reduce (and the
 * same kernels computing them). items_per_thread is scan.cu's VEC_UNROLL
 * (vectors per thread), vector_bytes VEC_BYTES; a launch has one block per
 * tile, so blocks per SM is not a parameter. */
static size_t fam_scan_out_bytes(const tune_variant *v, size_t n) { return n * v->elem_size; }
static double fam_scan_moved(const tune_variant *v, size_t n) { return 2.0 * (double)n * (double)v->elem_size; }

/* A thread holds its tile's words about twice over at its peak (the loaded
 * vectors and the partial sums the compiler keeps for the output), plus
 * offsets, addresses and the look-back. */
static int fam_scan_registers(const tune_variant *v, const tune_config *c) {
    int items = c->items_per_thread ? c->items_per_thread : SCAN_DEFAULT_UNROLL;
    int vec = c->vector_bytes ? c->vector_bytes : SCAN_DEFAULT_VECTOR;
    if ((size_t)vec < v->elem_size) vec = (int)v->elem_size;
    return 20 + 2 * items * vec / 4;
}

/* scan.cu: __launch_bounds__(BLOCK_SIZE, 1), registers left to the compiler. */
static int fam_scan_min_blocks(const tune_config *c) {
    (void)c;
    return 1;
}

/* One offset per warp, the tile's prefix and its ticket; and the tile
 * itself where the staged kernel runs it (sm_90: this estimate cannot see
 * the GPU, and takes every tile that fits as staged). */
static int fam_scan_shared(const tune_variant *v, const tune_config *c) {
    int block = c->block_size ? c->block_size : SCAN_DEFAULT_BLOCK;
    int items = c->items_per_thread ? c->items_per_thread : SCAN_DEFAULT_UNROLL;
    int vec = c->vector_bytes ? c->vector_bytes : SCAN_DEFAULT_VECTOR;
    int small = (block / 32 + 1) * (int)v->elem_size + 8 + 8 * SCAN_DEFAULT_CHUNKS; /* offsets, prefix, ticket, barriers */
    long long tile = (long long)block * items * vec;
    return SCAN_DEFAULT_STAGED && tile <= SCAN_STAGED_MAX_TILE_BYTES ? (int)tile + small : small;
}

static ptxkit_status fam_scan_prepare_kernel(ptxkit_context *ctx, const tune_variant *v,
                                             const launch_options *options) {
    return scan_prepare(ctx, (ptxkit_reduce_op)v->op, v->type, options);
}

static ptxkit_status fam_scan_run(ptxkit_context *ctx, const tune_variant *v, ptxkit_dptr in, ptxkit_dptr out, size_t n,
                                  const launch_options *options, ptxkit_stream *stream) {
    return scan_run(ctx, PTXKIT_SCAN_EXCLUSIVE, (ptxkit_reduce_op)v->op, v->type, in, n, out, options, stream, NULL);
}

/* The injected constants that carry tuner parameters. */
static const family_define scan_defines[] = {
    {"BLOCK_SIZE", TUNE_BLOCK},
    {"VEC_UNROLL", TUNE_ITEMS},
    {"VEC_BYTES", TUNE_VECTOR},
    {"LOAD_OP", TUNE_LOAD},
    {NULL, 0},
};

static void fam_scan_public_config(const launch_options *o, ptxkit_config *out) {
    launch_options_to_config(o, scan_config_names, out);
}

const family_desc scan_family = {
    .name = "scan",
    .default_variant = "sum.int32",
    .unit = "elements",
    .description = "ptxkit_scan: prefix scan of n elements (exclusive; inclusive runs the same kernel)",
    .entries = "ptxkit_scan_<op>_<type>",
    .defines = scan_defines,
    .bench_log2 = 28,
    .items = {1, 2, 3, 4, 6, 8, 12, 16},
    .vectors = {4, 8, 16},
    .bpsm = {0, -1},
    .loads = FAMILY_ALL_LOADS,
    .primary = {[TUNE_BLOCK] = true, [TUNE_ITEMS] = true},
    .start = {SCAN_DEFAULT_BLOCK, SCAN_DEFAULT_UNROLL, SCAN_DEFAULT_VECTOR, 0, PTXKIT_LOAD_DEFAULT},
    .registers = fam_scan_registers,
    .min_blocks = fam_scan_min_blocks,
    .shared_bytes = fam_scan_shared,
    .dynamic_shared = true,
    .parse_variant = reduce_tune_parse,
    .in_bytes = reduce_tune_in_bytes,
    .out_bytes = fam_scan_out_bytes,
    .bytes_moved = fam_scan_moved,
    .prepare = fam_scan_prepare_kernel,
    .public_config = fam_scan_public_config,
    .run = fam_scan_run,
};

/* Both kinds run the same kernels; the context is not read (ptxkit_ops.h). */
ptxkit_status ptxkit_scan_supported(ptxkit_context *ctx, ptxkit_scan_kind kind, ptxkit_reduce_op op,
                                    ptxkit_dtype type) {
    (void)ctx;
    if (!ptxkit_scan_kind_name(kind) || !ptxkit_reduce_op_name(op) || !ptxkit_dtype_name(type))
        return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT,
                            "ptxkit_scan_supported: kind %d, operator %d or type %d is out of range", (int)kind, (int)op,
                            (int)type);
    if (!scan_supported(op, type))
        return record_error(NULL, PTXKIT_ERROR_UNSUPPORTED, "ptxkit_scan: %s of %s is not provided", ptxkit_reduce_op_name(op),
                            ptxkit_dtype_name(type));
    return PTXKIT_SUCCESS;
}
