/* reduce: the production reduction (reduce.cu) and the names of
 * the reduce operators (element type names are in families.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptxkit_ops.h"
#include "reduce/reduce.h"
#include "runtime/args.h"
#include "runtime/capture.h"
#include "runtime/context.h"
#include "runtime/kernel.h"
#include "runtime/launch.h"
#include "runtime/objects.h"
#include "runtime/status.h"
#include "runtime/stream_scratch.h"
#include "tuned/launch_memo.h"
#include "tuned/tuned.h"

const char *ptxkit_reduce_op_name(ptxkit_reduce_op op) {
    static const char *const names[PTXKIT_REDUCE_OP_COUNT] = {"sum", "min", "max", "and", "or", "xor"};
    return (unsigned)op < PTXKIT_REDUCE_OP_COUNT ? names[op] : NULL;
}

/* The kernel computing each (op, type); NULL where none is provided.
 * Integer sums wrap, so uint64 sum is int64 sum bit for bit; the bitwise
 * operators do not care about signedness. */
typedef struct kernel_combo {
    const char *suffix;
    ptxkit_reduce_op op;
    ptxkit_dtype type;
} kernel_combo;

#define K(type, o, kt, s) [PTXKIT_##type] = {s, PTXKIT_REDUCE_##o, PTXKIT_##kt}
static const kernel_combo combos[PTXKIT_REDUCE_OP_COUNT][PTXKIT_DTYPE_COUNT] = {
    [PTXKIT_REDUCE_SUM] = {K(INT32, SUM, INT32, "sum_int32"), K(UINT32, SUM, UINT32, "sum_uint32"),
                           K(INT64, SUM, INT64, "sum_int64"), K(UINT64, SUM, INT64, "sum_int64"),
                           K(FLOAT32, SUM, FLOAT32, "sum_float32"), K(FLOAT64, SUM, FLOAT64, "sum_float64")},
    [PTXKIT_REDUCE_MIN] = {K(INT32, MIN, INT32, "min_int32"), K(UINT32, MIN, UINT32, "min_uint32"),
                           K(FLOAT32, MIN, FLOAT32, "min_float32"), K(FLOAT64, MIN, FLOAT64, "min_float64")},
    [PTXKIT_REDUCE_MAX] = {K(INT32, MAX, INT32, "max_int32"), K(UINT32, MAX, UINT32, "max_uint32"),
                           K(FLOAT32, MAX, FLOAT32, "max_float32"), K(FLOAT64, MAX, FLOAT64, "max_float64")},
    [PTXKIT_REDUCE_AND] = {K(INT32, AND, UINT32, "and_uint32"), K(UINT32, AND, UINT32, "and_uint32"),
                           K(INT64, AND, UINT64, "and_uint64"), K(UINT64, AND, UINT64, "and_uint64")},
    [PTXKIT_REDUCE_OR] = {K(INT32, OR, UINT32, "or_uint32"), K(UINT32, OR, UINT32, "or_uint32"),
                          K(INT64, OR, UINT64, "or_uint64"), K(UINT64, OR, UINT64, "or_uint64")},
    [PTXKIT_REDUCE_XOR] = {K(INT32, XOR, UINT32, "xor_uint32"), K(UINT32, XOR, UINT32, "xor_uint32"),
                           K(INT64, XOR, UINT64, "xor_uint64"), K(UINT64, XOR, UINT64, "xor_uint64")},
};
#undef K

const char *reduce_kernel_suffix(ptxkit_reduce_op op, ptxkit_dtype type, ptxkit_reduce_op *kernel_op,
                                 ptxkit_dtype *kernel_type) {
    if ((unsigned)op >= PTXKIT_REDUCE_OP_COUNT || (unsigned)type >= PTXKIT_DTYPE_COUNT) return NULL;
    const kernel_combo *c = &combos[op][type];
    if (!c->suffix) return NULL;
    if (kernel_op) *kernel_op = c->op;
    if (kernel_type) *kernel_type = c->type;
    return c->suffix;
}

bool reduce_supported(ptxkit_reduce_op op, ptxkit_dtype type) {
    return reduce_kernel_suffix(op, type, NULL, NULL) != NULL;
}

ptxkit_status reduce_check_args(ptxkit_context *ctx, const char *who, ptxkit_reduce_op op, ptxkit_dtype type,
                                ptxkit_dptr in, size_t n, ptxkit_dptr out) {
    if (!ctx) return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "%s: context is NULL", who);
    if ((unsigned)op >= PTXKIT_REDUCE_OP_COUNT)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "%s: unknown reduce operator %d", who, (int)op);
    if ((unsigned)type >= PTXKIT_DTYPE_COUNT)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "%s: unknown element type %d", who, (int)type);
    if (!reduce_supported(op, type))
        return record_error(ctx, PTXKIT_ERROR_UNSUPPORTED,
                            "%s: %s of %s is not provided (min and max exist for int32, "
                            "uint32, float32 and float64; the bitwise operators for integers)",
                            who, ptxkit_reduce_op_name(op), ptxkit_dtype_name(type));
    size_t elem = ptxkit_dtype_size(type), bytes;
    if (!out) return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "%s: output pointer is NULL", who);
    if (out % elem)
        return record_error(ctx, PTXKIT_ERROR_MISALIGNED, "%s: output 0x%llx is not %zu-byte aligned for %s", who,
                            (unsigned long long)out, elem, ptxkit_dtype_name(type));
    if (n == 0) return PTXKIT_SUCCESS;
    if (!in) return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "%s: input pointer is NULL", who);
    if (in % elem)
        return record_error(ctx, PTXKIT_ERROR_MISALIGNED, "%s: input 0x%llx is not %zu-byte aligned for %s", who,
                            (unsigned long long)in, elem, ptxkit_dtype_name(type));
    if (!mul_size(n, elem, &bytes) || in + bytes < in)
        return record_error(ctx, PTXKIT_ERROR_OVERFLOW, "%s: %zu elements of %s overflow the address space", who, n,
                            ptxkit_dtype_name(type));
    return PTXKIT_SUCCESS;
}

/* ---- per-context state --------------------------------------------------
 * Scratch slots: the kernel's partials and ticket counter live in its
 * module, in REDUCE_SLOTS copies, one per slot of the stream scratch pool
 * (runtime/stream_scratch.h: a stream keeps its slot while among the
 * REDUCE_SLOTS most recently used, hand-over by event, capture rules). Any
 * number of streams may reduce at once, never sharing a counter while it is
 * in use. A launch of one block touches no scratch (the kernel writes its
 * result directly), so it takes no slot. */

/* The slots are indices only: the module globals are the scratch. */
static const stream_scratch_client reduce_scratch = {"reduce", REDUCE_SLOTS, 0};

/* ---- configuration ------------------------------------------------------ */

typedef struct reduce_config {
    launch_options opt; /* validated, tuned values filled in */
    const char *suffix;
    ptxkit_reduce_op kernel_op;
    ptxkit_dtype kernel_type;
    int vector_bytes;
    int unroll; /* vector loads in flight per thread */
} reduce_config;

/* Options left at 0 take the tuned value for (kernel, size) when the tuning
 * database has one, else the built-in default. items_per_thread counts
 * vector loads in flight per thread (VEC_UNROLL), as for copy. The
 * precompiled PTX is fixed at the defaults. */
static ptxkit_status reduce_configure(ptxkit_context *ctx, ptxkit_reduce_op op, ptxkit_dtype type, size_t n,
                                      const launch_options *options, reduce_config *c) {
    ptxkit_status st = check_launch_options(ctx, options, &c->opt);
    if (st != PTXKIT_SUCCESS) return st;
    c->suffix = reduce_kernel_suffix(op, type, &c->kernel_op, &c->kernel_type);
    if (!c->suffix)
        return record_error(ctx, PTXKIT_ERROR_UNSUPPORTED, "reduce: %s of %s is not provided",
                            ptxkit_reduce_op_name(op), ptxkit_dtype_name(type));
    char variant[48];
    snprintf(variant, sizeof variant, "%s.%s", ptxkit_reduce_op_name(c->kernel_op), ptxkit_dtype_name(c->kernel_type));
    tune_apply(ctx, "reduce", variant, n, &c->opt);
    /* A database entry is data from disk: validate what it gave. */
    launch_options checked;
    if ((st = check_launch_options(ctx, &c->opt, &checked)) != PTXKIT_SUCCESS) return st;
    int elem = (int)ptxkit_dtype_size(c->kernel_type);
    c->vector_bytes = c->opt.vector_bytes ? c->opt.vector_bytes : REDUCE_DEFAULT_VECTOR;
    if (c->vector_bytes < elem)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "reduce: %d-byte loads are narrower than a %s element",
                            c->vector_bytes, ptxkit_dtype_name(type));
    c->unroll = c->opt.items_per_thread ? c->opt.items_per_thread : REDUCE_DEFAULT_UNROLL;
    if (c->unroll > REDUCE_MAX_UNROLL)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT,
                            "reduce: %d vector loads in flight per thread (loads_in_flight) is more than %d",
                            c->unroll, REDUCE_MAX_UNROLL);
    /* An input one block covers in a single trip, with neither the caller
     * nor the tuning database naming a block: the narrowest block that still
     * covers it (32 threads at least). Most of a 1024-thread block would only
     * join the block-wide combine, which is the whole of such a call's GPU
     * time (a graph replaying small reductions pays it on every node). The
     * PTX is built for one block size only. n 0 is a question about no
     * particular size (reduce_prepare): the default block. */
    if (n > 0 && !c->opt.block_size && options_use_jit(&c->opt)) {
        /* Small enough that a quarter of the default block, each thread with
         * its loads in flight one element wide, covers it: element-wide
         * loads over four times the threads, unless a vector width was
         * named. The same bytes in flight come back sooner spread over more
         * warps (measured over graphs of such calls, where this is a node's
         * whole time). */
        if (!c->opt.vector_bytes && n <= (size_t)(REDUCE_DEFAULT_BLOCK / 4) * (size_t)c->unroll)
            c->vector_bytes = elem < 4 ? 4 : elem;
        size_t per_thread = (size_t)(c->vector_bytes / elem) * (size_t)c->unroll, block = 32;
        while (block < REDUCE_DEFAULT_BLOCK && block * per_thread < n) block *= 2;
        if (block < REDUCE_DEFAULT_BLOCK) c->opt.block_size = (int)block;
    }
    /* tune_apply leaves the PTX path alone: a shape other than the PTX's is the caller's */
    if (!options_use_jit(&c->opt) &&
        (c->vector_bytes != REDUCE_DEFAULT_VECTOR || c->unroll != REDUCE_DEFAULT_UNROLL))
        return record_error(ctx, PTXKIT_ERROR_UNSUPPORTED,
                            "reduce: the precompiled PTX is built for %d-byte loads, %d in flight per thread; other "
                            "vector widths and loads in flight need the JIT path",
                            REDUCE_DEFAULT_VECTOR, REDUCE_DEFAULT_UNROLL);
    return PTXKIT_SUCCESS;
}

static ptxkit_status reduce_kernel(ptxkit_context *ctx, reduce_config *c, ptxkit_kernel **kernel, int *block) {
    char entry[64];
    snprintf(entry, sizeof entry, "ptxkit_reduce_%s", c->suffix);
    kernel_spec spec = {.family = "reduce", .entry = entry};
    define_scratch scratch = {0};
    spec_define_int(&spec, &scratch, "ONLY_OP", (long long)c->kernel_op);
    spec_define_int(&spec, &scratch, "ONLY_TYPE", (long long)c->kernel_type);
    spec_define_int(&spec, &scratch, "VEC_BYTES", c->vector_bytes);
    spec_define_int(&spec, &scratch, "VEC_UNROLL", c->unroll);
    return family_kernel_get(ctx, &c->opt, &spec, REDUCE_DEFAULT_BLOCK, kernel, block);
}

/* The slow path of a call (context current): tuned options, the kernel
 * (compiled or loaded if needed) and the wave of resident blocks. */
static ptxkit_status reduce_resolve(ptxkit_context *ctx, ptxkit_reduce_op op, ptxkit_dtype type, size_t n,
                                    const launch_options *options, launch_memo_value *out) {
    reduce_config c;
    ptxkit_status st = reduce_configure(ctx, op, type, n, options, &c);
    if (st == PTXKIT_SUCCESS) st = reduce_kernel(ctx, &c, &out->kernel, &out->block);
    if (st != PTXKIT_SUCCESS) return st;
    /* elements one thread covers in one unrolled trip */
    out->extra[0] = (size_t)c.vector_bytes / ptxkit_dtype_size(c.kernel_type) * (size_t)c.unroll;
    /* most useful blocks: one wave of resident blocks, within REDUCE_MAX_GRID */
    return grid_size_for(out->kernel, out->block, 0, c.opt.blocks_per_sm, REDUCE_MAX_GRID, &out->wave);
}

ptxkit_status reduce_prepare(ptxkit_context *ctx, ptxkit_reduce_op op, ptxkit_dtype type,
                             const launch_options *options) {
    /* Arguments as a call would have them: any aligned output, no input. */
    ptxkit_status st = reduce_check_args(ctx, "reduce_prepare", op, type, 0, 0, 64);
    if (st != PTXKIT_SUCCESS) return st;
    reduce_config c;
    if ((st = reduce_configure(ctx, op, type, 0, options, &c)) != PTXKIT_SUCCESS) return st;
    if ((st = context_enter(ctx)) != PTXKIT_SUCCESS) return st;
    ptxkit_kernel *kernel;
    int block;
    st = reduce_kernel(ctx, &c, &kernel, &block);
    context_leave(ctx);
    return st;
}

/* ptxkit_reduce, or with launch false everything but the launches (the
 * resolution remembered, the stream's scratch slot taken where the launch
 * would need one): ptxkit_reduce_prepare, which therefore cannot prepare
 * anything other than what the call then runs. */
static ptxkit_status reduce_dispatch(ptxkit_context *ctx, const char *who, ptxkit_reduce_op op, ptxkit_dtype type,
                                     ptxkit_dptr in, size_t n, ptxkit_dptr out, const launch_options *options,
                                     ptxkit_stream *stream, reduce_passes passes, bool launch) {
    ptxkit_status st = reduce_check_args(ctx, who, op, type, in, n, out);
    if (st != PTXKIT_SUCCESS) return st;
    if ((unsigned)passes > REDUCE_PASSES_TWO)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "reduce: unknown pass count %d", (int)passes);
    launch_options opt;
    if ((st = check_launch_options(ctx, options, &opt)) != PTXKIT_SUCCESS) return st;
    const long long selectors[2] = {op, type};
    launch_memo_key key = launch_memo_key_for(&reduce_scratch, &opt, selectors, 2, n);
    /* Whether the stream is being captured matters to a resolution (a first
     * kernel load, auto-tuning) and to the scratch (runtime/stream_scratch.h);
     * a remembered one-block launch touches neither, so only those ask. */
    capture_guard guard = {0};
    bool guarded = false;
    if ((st = context_enter(ctx)) != PTXKIT_SUCCESS) return st;
    launch_memo_value L;
    if (!launch_memo_find(ctx, &key, &L)) {
        if ((st = capture_guard_enter(ctx, stream, &guard)) != PTXKIT_SUCCESS) goto done;
        guarded = true;
        /* resolving may compile: other threads' reductions go on meanwhile */
        if ((st = reduce_resolve(ctx, op, type, n, &opt, &L)) != PTXKIT_SUCCESS) goto done;
        /* a capture paused auto-tuning: its resolution is not the bucket's */
        if (!guard.capturing) launch_memo_store(ctx, &key, &L);
    }
    /* One unrolled trip per thread at most where the input is small (fewer,
     * fuller blocks: less to combine at the end), one full wave of resident
     * blocks where it is large. */
    const size_t per_trip = L.extra[0];
    size_t needed = ((n + per_trip - 1) / per_trip + (size_t)L.block - 1) / (size_t)L.block;
    unsigned grid = needed <= 1 ? 1u : needed < L.wave ? (unsigned)needed : L.wave;
    CUdeviceptr d_in = in, d_out = out;
    unsigned long long count = n;
    unsigned slot = 0;
    unsigned mode = passes == REDUCE_PASSES_TWO && grid > 1 ? 1u : 0u;
    void *args[] = {&d_in, &count, &d_out, &slot, &mode};
    const ptxkit_dim3 one = {1, 1, 1}, block = {(unsigned)L.block, 1, 1};
    if (grid == 1) {
        /* no scratch: nothing to order against other streams */
        if (launch) st = kernel_launch(L.kernel, one, block, 0, stream, args);
        goto done;
    }
    if (!guarded) {
        if ((st = capture_guard_enter(ctx, stream, &guard)) != PTXKIT_SUCCESS) goto done;
        guarded = true;
    }
    /* The slot's owner must not change between its choice and the launches
     * that use it: the pool's lock is held across them. */
    stream_scratch scratch;
    st = stream_scratch_acquire(ctx, &reduce_scratch, stream, guard.capturing, &scratch);
    if (st != PTXKIT_SUCCESS) goto done;
    slot = (unsigned)scratch.slot;
    if (launch) st = kernel_launch(L.kernel, (ptxkit_dim3){grid, 1, 1}, block, 0, stream, args);
    if (launch && st == PTXKIT_SUCCESS && mode == 1) {
        /* Second launch: one block reduces the `grid` partials of the slot. */
        count = grid;
        mode = 2;
        st = kernel_launch(L.kernel, one, block, 0, stream, args);
    }
    stream_scratch_release(&scratch);
done:
    if (guarded) capture_guard_leave(ctx, &guard);
    context_leave(ctx);
    return st;
}

ptxkit_status reduce_run(ptxkit_context *ctx, ptxkit_reduce_op op, ptxkit_dtype type, ptxkit_dptr in, size_t n,
                         ptxkit_dptr out, const launch_options *options, ptxkit_stream *stream,
                         reduce_passes passes) {
    return reduce_dispatch(ctx, "ptxkit_reduce", op, type, in, n, out, options, stream, passes, true);
}

/* ptxkit_reduce's parameters (ptxkit.h): "loads_in_flight" is reduce.cu's
 * VEC_UNROLL, vector loads in flight per thread. */
const config_name reduce_config_names[] = {
    CONFIG_NAMES_COMMON, {"loads_in_flight", LAUNCH_ITEMS}, {"blocks_per_sm", LAUNCH_BLOCKS_PER_SM}, {NULL, 0}};

ptxkit_status ptxkit_reduce(ptxkit_context *ctx, ptxkit_reduce_op op, ptxkit_dtype type, ptxkit_dptr out,
                            ptxkit_dptr in, size_t n, const ptxkit_config *config, ptxkit_stream *stream) {
    launch_options o;
    ptxkit_status st = launch_options_from_config(ctx, "ptxkit_reduce", config, reduce_config_names, &o);
    return st == PTXKIT_SUCCESS ? name_failure(reduce_run(ctx, op, type, in, n, out, &o, stream, REDUCE_PASSES_AUTO), "ptxkit_reduce")
                                : st;
}

/* The call without its launches, on pointers of no consequence: any
 * aligned addresses resolve and take scratch alike. */
ptxkit_status ptxkit_reduce_prepare(ptxkit_context *ctx, ptxkit_reduce_op op, ptxkit_dtype type, size_t n,
                                    const ptxkit_config *config, ptxkit_stream *stream) {
    static const char who[] = "ptxkit_reduce_prepare";
    launch_options o;
    ptxkit_status st = launch_options_from_config(ctx, who, config, reduce_config_names, &o);
    if (st != PTXKIT_SUCCESS) return st;
    const ptxkit_dptr anywhere = 256;
    return name_failure(reduce_dispatch(ctx, who, op, type, anywhere, n, anywhere, &o, stream, REDUCE_PASSES_AUTO, false),
                        who);
}

/* Resolution without a kernel: auto-tuning is paused (a question must not
 * start a tuning run); the PTX path's block is the default it is
 * generated with (reduce_defaults.h). */
ptxkit_status ptxkit_reduce_config_get(ptxkit_context *ctx, ptxkit_reduce_op op, ptxkit_dtype type, size_t n,
                                       const ptxkit_config *config, ptxkit_config *out) {
    static const char who[] = "ptxkit_reduce_config_get";
    if (!ctx || !out) return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "%s: NULL argument", who);
    launch_options o;
    ptxkit_status st = launch_options_from_config(ctx, who, config, reduce_config_names, &o);
    if (st == PTXKIT_SUCCESS) st = reduce_check_args(ctx, who, op, type, 0, 0, 64);
    if (st != PTXKIT_SUCCESS) return st;
    reduce_config c;
    tune_auto_pause(true);
    st = reduce_configure(ctx, op, type, n, &o, &c);
    tune_auto_pause(false);
    if (st != PTXKIT_SUCCESS) return name_failure(st, who);
    const bool jit = options_use_jit(&c.opt);
    if (!jit && c.opt.block_size && c.opt.block_size != REDUCE_DEFAULT_BLOCK)
        return record_error(ctx, PTXKIT_ERROR_UNSUPPORTED,
                            "%s: the precompiled PTX is built for %d threads per block, not %d: use the JIT path", who,
                            REDUCE_DEFAULT_BLOCK, c.opt.block_size);
    memset(out, 0, sizeof *out);
    ptxkit_config_set(out, "path", jit ? PTXKIT_PATH_JIT : PTXKIT_PATH_PTX);
    ptxkit_config_set(out, "load_op", c.opt.load_op);
    ptxkit_config_set(out, "block_size", c.opt.block_size ? c.opt.block_size : REDUCE_DEFAULT_BLOCK);
    ptxkit_config_set(out, "vector_bytes", c.vector_bytes);
    ptxkit_config_set(out, "loads_in_flight", c.unroll);
    ptxkit_config_set(out, "blocks_per_sm", c.opt.blocks_per_sm);
    return PTXKIT_SUCCESS;
}

/* Synchronous convenience: a small device buffer per call takes the result
 * (a call that waits for its result can afford the allocation). */
ptxkit_status ptxkit_reduce_to_host(ptxkit_context *ctx, ptxkit_reduce_op op, ptxkit_dtype type, void *result,
                                    ptxkit_dptr in, size_t n, const ptxkit_config *config) {
    if (!ctx) return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_reduce_to_host: context is NULL");
    if (!result) return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_reduce_to_host: result is NULL");
    launch_options o;
    ptxkit_status st = launch_options_from_config(ctx, "ptxkit_reduce_to_host", config, reduce_config_names, &o);
    if (st != PTXKIT_SUCCESS) return st;
    const launch_options *options = &o;
    /* Check the arguments before allocating (a dummy aligned output). */
    st = reduce_check_args(ctx, "ptxkit_reduce_to_host", op, type, in, n, 64);
    if (st == PTXKIT_SUCCESS) st = capture_thread_refuse(ctx, "ptxkit_reduce_to_host");
    if (st != PTXKIT_SUCCESS) return st;
    if ((st = context_enter(ctx)) != PTXKIT_SUCCESS) return name_failure(st, "ptxkit_reduce_to_host");
    CUdeviceptr d = 0;
    CUresult r = ctx->cu->cuMemAlloc(&d, 8);
    if (r != CUDA_SUCCESS) {
        st = record_cuda_error(ctx, r, "ptxkit_reduce_to_host: cuMemAlloc of the result");
    } else {
        st = reduce_run(ctx, op, type, in, n, d, options, NULL, REDUCE_PASSES_AUTO);
        /* cuMemcpyDtoH waits for the launch on the default stream. */
        if (st == PTXKIT_SUCCESS && (r = ctx->cu->cuMemcpyDtoH(result, d, ptxkit_dtype_size(type))) != CUDA_SUCCESS)
            st = record_cuda_error(ctx, r, "ptxkit_reduce_to_host: reading the result");
        ctx->cu->cuMemFree(d);
    }
    context_leave(ctx);
    return name_failure(st, "ptxkit_reduce_to_host");
}

/* ---- the family's descriptor (families/family.h) ---------------------------- */

/* reduce: n counts elements; variant "<op>.<type>". items_per_thread is
 * reduce.cu's VEC_UNROLL (vector loads in flight), vector_bytes VEC_BYTES. */
bool reduce_tune_parse(const tune_family *f, const char *name, tune_variant *v, char *why, size_t why_size) {
    const char *dot = strchr(name, '.');
    if (!dot) {
        snprintf(why, why_size, "%s variants are '<op>.<type>', e.g. 'sum.float32' (not '%s')", f->name, name);
        return false;
    }
    int op = -1, type = -1;
    for (int i = 0; i < PTXKIT_REDUCE_OP_COUNT; i++) {
        const char *s = ptxkit_reduce_op_name((ptxkit_reduce_op)i);
        if (s && strlen(s) == (size_t)(dot - name) && strncmp(name, s, (size_t)(dot - name)) == 0) op = i;
    }
    for (int i = 0; i < PTXKIT_DTYPE_COUNT; i++) {
        const char *s = ptxkit_dtype_name((ptxkit_dtype)i);
        if (s && strcmp(dot + 1, s) == 0) type = i;
    }
    if (op < 0 || type < 0) {
        snprintf(why, why_size, "unknown %s %s in variant '%s'", f->name, op < 0 ? "operator" : "type", name);
        return false;
    }
    bool bitwise = op == PTXKIT_REDUCE_AND || op == PTXKIT_REDUCE_OR || op == PTXKIT_REDUCE_XOR;
    if (bitwise && (type == PTXKIT_FLOAT32 || type == PTXKIT_FLOAT64)) {
        snprintf(why, why_size, "%s variant '%s': bitwise operators take integer types", f->name, name);
        return false;
    }
    /* Tuned as the kernel that computes it, under the name reduce.c looks
     * up: uint64 sum is int64 sum, signed bitwise operators are unsigned. */
    ptxkit_reduce_op kernel_op;
    ptxkit_dtype kernel_type;
    if (!reduce_kernel_suffix((ptxkit_reduce_op)op, (ptxkit_dtype)type, &kernel_op, &kernel_type)) {
        snprintf(why, why_size, "%s variant '%s' is not provided by ptxkit_%s", f->name, name, f->name);
        return false;
    }
    v->family = f;
    snprintf(v->name, sizeof v->name, "%s.%s", ptxkit_reduce_op_name(kernel_op), ptxkit_dtype_name(kernel_type));
    v->op = kernel_op;
    v->type = kernel_type;
    v->elem_size = ptxkit_dtype_size(kernel_type);
    if (v->elem_size == 0) {
        snprintf(why, why_size, "%s variant '%s': unknown element size", f->name, name);
        return false;
    }
    return true;
}

size_t reduce_tune_in_bytes(const tune_variant *v, size_t n) { return n * v->elem_size; }
static size_t fam_reduce_out_bytes(const tune_variant *v, size_t n) { (void)n; return v->elem_size; }
static double fam_reduce_moved(const tune_variant *v, size_t n) { return (double)n * (double)v->elem_size; }

/* Each thread holds items_per_thread loads of vector_bytes before folding
 * them, plus accumulators and addressing. */
static int fam_reduce_registers(const tune_variant *v, const tune_config *c) {
    int items = c->items_per_thread ? c->items_per_thread : REDUCE_DEFAULT_UNROLL;
    int vec = c->vector_bytes ? c->vector_bytes : REDUCE_DEFAULT_VECTOR;
    if ((size_t)vec < v->elem_size) vec = (int)v->elem_size;
    return 24 + items * vec / 4;
}

/* reduce.cu: __launch_bounds__(BLOCK_SIZE, min(32, 2048 / BLOCK_SIZE)), a
 * full SM of threads. */
static int fam_reduce_min_blocks(const tune_config *c) {
    int block = c->block_size ? c->block_size : REDUCE_DEFAULT_BLOCK;
    int m = 2048 / block;
    return m > 32 ? 32 : m < 1 ? 1 : m;
}

/* One partial per warp. */
static int fam_reduce_shared(const tune_variant *v, const tune_config *c) {
    int block = c->block_size ? c->block_size : REDUCE_DEFAULT_BLOCK;
    return block / 32 * (int)v->elem_size;
}

static ptxkit_status fam_reduce_prepare_kernel(ptxkit_context *ctx, const tune_variant *v,
                                           const launch_options *options) {
    return reduce_prepare(ctx, (ptxkit_reduce_op)v->op, v->type, options);
}

static ptxkit_status fam_reduce_run(ptxkit_context *ctx, const tune_variant *v, ptxkit_dptr in, ptxkit_dptr out, size_t n,
                                const launch_options *options, ptxkit_stream *stream) {
    return reduce_run(ctx, (ptxkit_reduce_op)v->op, v->type, in, n, out, options, stream, REDUCE_PASSES_AUTO);
}

/* The injected constants that carry tuner parameters. */
static const family_define reduce_defines[] = {
    {"BLOCK_SIZE", TUNE_BLOCK},
    {"VEC_UNROLL", TUNE_ITEMS},
    {"VEC_BYTES", TUNE_VECTOR},
    {"LOAD_OP", TUNE_LOAD},
    {NULL, 0},
};

static void fam_reduce_public_config(const launch_options *o, ptxkit_config *out) {
    launch_options_to_config(o, reduce_config_names, out);
}

const family_desc reduce_family = {
    .name = "reduce",
    .default_variant = "sum.float32",
    .unit = "elements",
    .description = "ptxkit_reduce: one value from n elements",
    .entries = "ptxkit_reduce_<op>_<type>",
    .defines = reduce_defines,
    .bench_log2 = 28,
    .items = {1, 2, 4, 8, 16},
    .vectors = {4, 8, 16},
    .bpsm = {0, 1, 2, 4, 8, 16, 32, -1},
    .loads = FAMILY_ALL_LOADS,
    /* blocks per SM is primary: at small sizes fewer, fuller blocks
     * shorten the last-block finish (seen at 2^20 on an H100) */
    .primary = {[TUNE_BLOCK] = true, [TUNE_ITEMS] = true, [TUNE_BPSM] = true},
    .start = {REDUCE_DEFAULT_BLOCK, REDUCE_DEFAULT_UNROLL, REDUCE_DEFAULT_VECTOR, 0, PTXKIT_LOAD_DEFAULT},
    .registers = fam_reduce_registers,
    .min_blocks = fam_reduce_min_blocks,
    .max_grid = REDUCE_MAX_GRID, /* partial slots of reduce.cu */
    .shared_bytes = fam_reduce_shared,
    .parse_variant = reduce_tune_parse,
    .in_bytes = reduce_tune_in_bytes,
    .out_bytes = fam_reduce_out_bytes,
    .bytes_moved = fam_reduce_moved,
    .prepare = fam_reduce_prepare_kernel,
    .public_config = fam_reduce_public_config,
    .run = fam_reduce_run,
};

/* The context is not read: no combination depends on the GPU (ptxkit_ops.h). */
ptxkit_status ptxkit_reduce_supported(ptxkit_context *ctx, ptxkit_reduce_op op, ptxkit_dtype type) {
    (void)ctx;
    if (!ptxkit_reduce_op_name(op) || !ptxkit_dtype_name(type))
        return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_reduce_supported: operator %d or type %d is out of range",
                            (int)op, (int)type);
    if (!reduce_supported(op, type))
        return record_error(NULL, PTXKIT_ERROR_UNSUPPORTED, "ptxkit_reduce: %s of %s is not provided", ptxkit_reduce_op_name(op),
                            ptxkit_dtype_name(type));
    return PTXKIT_SUCCESS;
}
