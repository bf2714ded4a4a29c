/* Kernels handed to the application: attributes, occupancy (and the grid a
 * grid-stride kernel gets from it) and launches.
 * A launch checks its dimensions against limits read once, on first need
 * (no driver call after that), and pushes the context only when it is not
 * already current, so it costs little more than cuLaunchKernel itself. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/args.h"
#include "runtime/cache_key.h"
#include "runtime/capture.h"
#include "runtime/context.h"
#include "runtime/kernel.h"
#include "runtime/l2.h"
#include "runtime/objects.h"
#include "runtime/registry.h"
#include "runtime/status.h"

ptxkit_kernel *kernel_object(ptxkit_context *ctx, const cache_key *key, CUfunction fn, const char *jit_log) {
    ptxkit_kernel *k = calloc(1, sizeof *k);
    if (!k) {
        record_error(ctx, PTXKIT_ERROR_OUT_OF_MEMORY, "kernel: out of host memory");
        return NULL;
    }
    k->ctx = ctx;
    k->fn = fn;
    k->jit_log = jit_log;
    ptxkit_kernel *registered = registry_add_object(ctx, key, k);
    if (!registered) record_error(ctx, PTXKIT_ERROR_OUT_OF_MEMORY, "kernel: out of host memory");
    return registered;
}

/* The limits are not read when the kernel is made: the driver's first
 * answer about a function is a large part of what a warm process's first
 * kernel costs over a hand-written driver program, and a launch the driver
 * itself refuses (too many threads, too much shared memory) fails
 * synchronously and harms nothing. So a kernel's first launch, on a stream
 * that is not being captured, leaves the check to the driver and reads the
 * limits only to explain a refusal; a process that launches a kernel once
 * never asks. Later launches read them first, once, and check without the
 * driver. Two threads may read at once: both read the same values. The
 * shared limit only grows (kernel_reserve_dynamic_shared) unless an
 * application sets it, which reads the limits first, so it is raised,
 * never lowered, here. */
void kernel_limits_read(ptxkit_kernel *k) {
    if (__atomic_load_n(&k->max_threads, __ATOMIC_ACQUIRE) > 0) return;
    const cuda_driver *cu = k->ctx->cu;
    int threads = 0, shared = 0;
    /* callers need not have the context current (the grid-size and
     * occupancy questions check limits first): the kernel's own is pushed */
    bool pushed = cu->cuCtxPushCurrent(k->ctx->cu_context) == CUDA_SUCCESS;
    if (cu->cuFuncGetAttribute(&threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, k->fn) != CUDA_SUCCESS || threads <= 0)
        threads = k->ctx->info.max_threads_per_block;
    if (cu->cuFuncGetAttribute(&shared, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, k->fn) != CUDA_SUCCESS)
        shared = k->ctx->info.shared_per_block;
    if (pushed) context_leave(k->ctx);
    int seen = __atomic_load_n(&k->max_dynamic_shared, __ATOMIC_RELAXED);
    while (seen < shared &&
           !__atomic_compare_exchange_n(&k->max_dynamic_shared, &seen, shared, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
    __atomic_store_n(&k->max_threads, threads, __ATOMIC_RELEASE);
}

void *ptxkit_kernel_handle_get(ptxkit_kernel *k) { return k ? (void *)k->fn : NULL; }

const char *ptxkit_kernel_jit_log_get(const ptxkit_kernel *k) { return k && k->jit_log ? k->jit_log : ""; }

ptxkit_status ptxkit_kernel_attributes_get(ptxkit_kernel *k, ptxkit_kernel_attributes *out) {
    if (!k || !out) return record_error(k ? k->ctx : NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_kernel_attributes_get: NULL argument");
    memset(out, 0, sizeof *out);
    const struct {
        CUfunction_attribute attribute;
        int *value;
    } wanted[] = {
        {CU_FUNC_ATTRIBUTE_NUM_REGS, &out->registers},
        {CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, &out->static_shared_bytes},
        {CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, &out->local_bytes},
        {CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES, &out->const_bytes},
        {CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, &out->max_threads_per_block},
        {CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, &out->max_dynamic_shared_bytes},
        {CU_FUNC_ATTRIBUTE_PTX_VERSION, &out->ptx_version},
        {CU_FUNC_ATTRIBUTE_BINARY_VERSION, &out->binary_version},
    };
    ptxkit_status st = context_enter(k->ctx);
    if (st != PTXKIT_SUCCESS) return st;
    for (size_t i = 0; i < sizeof wanted / sizeof wanted[0] && st == PTXKIT_SUCCESS; i++) {
        CUresult r = k->ctx->cu->cuFuncGetAttribute(wanted[i].value, wanted[i].attribute, k->fn);
        if (r != CUDA_SUCCESS) st = record_cuda_error(k->ctx, r, "ptxkit_kernel_attributes_get: cuFuncGetAttribute");
    }
    context_leave(k->ctx);
    return st;
}

static ptxkit_status check_block_threads(ptxkit_kernel *k, int threads, size_t shared) {
    kernel_limits_read(k);
    if (threads < 1 || threads > k->max_threads)
        return record_error(k->ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "%d threads per block: this kernel takes 1 to %d",
                            threads, k->max_threads);
    if (shared > (size_t)k->max_dynamic_shared)
        return record_error(k->ctx, PTXKIT_ERROR_INVALID_ARGUMENT,
                            "%zu bytes of dynamic shared memory exceed this kernel's limit of %d (raise it with "
                            "ptxkit_kernel_max_dynamic_shared_set, up to %d on this GPU)",
                            shared, k->max_dynamic_shared, k->ctx->info.shared_per_block_optin);
    return PTXKIT_SUCCESS;
}

/* check_block_threads for a block's total thread count, which may exceed an int. */
static ptxkit_status check_block_total(ptxkit_kernel *k, unsigned long long threads, size_t shared) {
    return check_block_threads(k, threads > (unsigned long long)INT32_MAX ? INT32_MAX : (int)threads, shared);
}

ptxkit_status ptxkit_kernel_occupancy_get(ptxkit_kernel *k, int block_threads, size_t shared, int *blocks_per_sm) {
    if (!k || !blocks_per_sm)
        return record_error(k ? k->ctx : NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_kernel_occupancy_get: NULL argument");
    ptxkit_status st = check_block_threads(k, block_threads, shared);
    if (st != PTXKIT_SUCCESS) return st;
    if ((st = context_enter(k->ctx)) != PTXKIT_SUCCESS) return st;
    CUresult r = k->ctx->cu->cuOccupancyMaxActiveBlocksPerMultiprocessor(blocks_per_sm, k->fn, block_threads, shared);
    context_leave(k->ctx);
    return r == CUDA_SUCCESS ? PTXKIT_SUCCESS
                             : record_cuda_error(k->ctx, r, "ptxkit_kernel_occupancy_get: cuOccupancyMaxActiveBlocksPerMultiprocessor");
}

/* ---- resident blocks per SM ----------------------------------------------
 * They never change while a function's module is loaded (as long as its
 * context), and asking the driver on every launch costs time that small
 * launches notice: each context keeps the answers in a small ring. */
enum { OCCUPANCY_CACHE = 64 };

typedef struct occupancy_cache {
    pthread_mutex_t lock;
    struct {
        CUfunction fn;
        int block, resident;
        size_t shared;
    } e[OCCUPANCY_CACHE];
    unsigned next;
} occupancy_cache;

static void *occupancy_create(ptxkit_context *ctx) {
    (void)ctx;
    occupancy_cache *c = calloc(1, sizeof *c);
    if (c) pthread_mutex_init(&c->lock, NULL);
    return c;
}

static void occupancy_destroy(ptxkit_context *ctx, void *p) {
    (void)ctx;
    occupancy_cache *c = p;
    pthread_mutex_destroy(&c->lock);
    free(c);
}

static const context_state_ops occupancy_ops = {occupancy_create, occupancy_destroy, NULL};

static ptxkit_status resident_blocks(ptxkit_context *ctx, CUfunction fn, int block, size_t shared, int *resident) {
    occupancy_cache *c = context_state(ctx, &occupancy_ops); /* NULL (no memory): ask every time */
    if (c) {
        pthread_mutex_lock(&c->lock);
        for (int i = 0; i < OCCUPANCY_CACHE; i++)
            if (c->e[i].fn == fn && c->e[i].block == block && c->e[i].shared == shared) {
                *resident = c->e[i].resident;
                pthread_mutex_unlock(&c->lock);
                return PTXKIT_SUCCESS;
            }
        pthread_mutex_unlock(&c->lock);
    }
    CUresult r = ctx->cu->cuOccupancyMaxActiveBlocksPerMultiprocessor(resident, fn, block, shared);
    if (r != CUDA_SUCCESS) return record_cuda_error(ctx, r, "cuOccupancyMaxActiveBlocksPerMultiprocessor");
    if (*resident <= 0)
        return record_error(ctx, PTXKIT_ERROR_LAUNCH, "a block of %d threads with %zu bytes of shared memory cannot run on this GPU",
                            block, shared);
    if (c) {
        pthread_mutex_lock(&c->lock);
        unsigned i = c->next++ % OCCUPANCY_CACHE;
        c->e[i].fn = fn;
        c->e[i].block = block;
        c->e[i].shared = shared;
        c->e[i].resident = *resident;
        pthread_mutex_unlock(&c->lock);
    }
    return PTXKIT_SUCCESS;
}

ptxkit_status grid_size_for(ptxkit_kernel *k, int block_size, size_t shared_bytes, int blocks_per_sm, size_t max_useful,
                            unsigned *grid) {
    ptxkit_context *ctx = k->ctx;
    int resident = 0;
    ptxkit_status st = resident_blocks(ctx, k->fn, block_size, shared_bytes, &resident);
    if (st != PTXKIT_SUCCESS) return st;
    if (blocks_per_sm > 0 && blocks_per_sm < resident) resident = blocks_per_sm;
    size_t g = (size_t)resident * (size_t)ctx->info.sm_count;
    if (max_useful && g > max_useful) g = max_useful;
    *grid = (unsigned)(g ? g : 1);
    return PTXKIT_SUCCESS;
}

ptxkit_status ptxkit_kernel_max_occupancy_block_get(ptxkit_kernel *k, size_t shared, int *block_threads,
                                                   int *min_grid) {
    if (!k || !block_threads)
        return record_error(k ? k->ctx : NULL, PTXKIT_ERROR_INVALID_ARGUMENT,
                            "ptxkit_kernel_max_occupancy_block_get: NULL argument");
    kernel_limits_read(k);
    if (shared > (size_t)__atomic_load_n(&k->max_dynamic_shared, __ATOMIC_RELAXED))
        return record_error(k->ctx, PTXKIT_ERROR_INVALID_ARGUMENT,
                            "ptxkit_kernel_max_occupancy_block_get: %zu bytes of dynamic shared memory exceed the "
                            "kernel's limit of %d", shared, k->max_dynamic_shared);
    ptxkit_status st = context_enter(k->ctx);
    if (st != PTXKIT_SUCCESS) return st;
    int grid = 0, block = 0;
    CUresult r = k->ctx->cu->cuOccupancyMaxPotentialBlockSize(&grid, &block, k->fn, NULL, shared, 0);
    context_leave(k->ctx);
    if (r != CUDA_SUCCESS)
        return record_cuda_error(k->ctx, r, "ptxkit_kernel_max_occupancy_block_get: cuOccupancyMaxPotentialBlockSize");
    *block_threads = block;
    if (min_grid) *min_grid = grid;
    return PTXKIT_SUCCESS;
}

/* ---- parameters ----------------------------------------------------------
 * The driver knows each parameter's offset and size (cuFuncGetParamInfo,
 * 12.4 and later), so a launch can refuse arguments that do not match
 * before the kernel reads garbage, or faults and ruins the context. */
ptxkit_status ptxkit_kernel_params_get(ptxkit_kernel *k, size_t *count, size_t *offsets, size_t *sizes, size_t capacity) {
    if (!k || !count || (capacity && (!offsets || !sizes)))
        return record_error(k ? k->ctx : NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_kernel_params_get: NULL argument");
    *count = 0;
    if (!k->ctx->cu->cuFuncGetParamInfo)
        return record_error(k->ctx, PTXKIT_ERROR_UNSUPPORTED,
                            "ptxkit_kernel_params_get: the driver has no cuFuncGetParamInfo (CUDA 12.4 or later)");
    /* a kernel has at most 32764 bytes of parameters, so at most that many */
    for (size_t i = 0; i < 32768; i++) {
        size_t offset = 0, size = 0;
        CUresult r = k->ctx->cu->cuFuncGetParamInfo(k->fn, i, &offset, &size);
        if (r == CUDA_ERROR_INVALID_VALUE) break; /* past the last parameter */
        if (r != CUDA_SUCCESS) return record_cuda_error(k->ctx, r, "ptxkit_kernel_params_get: cuFuncGetParamInfo");
        if (i < capacity) {
            offsets[i] = offset;
            sizes[i] = size;
        }
        *count = i + 1;
    }
    return PTXKIT_SUCCESS;
}

/* ptxkit_kernel_launch_ex's check of the arguments against the kernel's
 * parameter list, before anything runs. */
static ptxkit_status check_args(ptxkit_kernel *k, void **args, const size_t *arg_sizes, size_t arg_count) {
    if (arg_count && !args)
        return record_error(k->ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_kernel_launch_ex: NULL arguments");
    enum { MANY = 64 };
    size_t count = 0, offsets[MANY], sizes[MANY];
    ptxkit_status st = ptxkit_kernel_params_get(k, &count, offsets, sizes, MANY);
    if (st != PTXKIT_SUCCESS) return st;
    if (count != arg_count)
        return record_error(k->ctx, PTXKIT_ERROR_INVALID_ARGUMENT,
                            "ptxkit_kernel_launch_ex: the kernel takes %zu parameters, %zu arguments given", count,
                            arg_count);
    for (size_t i = 0; i < count && i < MANY; i++) {
        if (arg_sizes[i] != sizes[i])
            return record_error(k->ctx, PTXKIT_ERROR_INVALID_ARGUMENT,
                                "ptxkit_kernel_launch_ex: parameter %zu (at byte %zu) is %zu bytes, its argument %zu", i,
                                offsets[i], sizes[i], arg_sizes[i]);
        if (!args[i])
            return record_error(k->ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_kernel_launch_ex: argument %zu is NULL", i);
    }
    return PTXKIT_SUCCESS;
}

ptxkit_status ptxkit_kernel_grid_size_get(ptxkit_kernel *k, int block_threads, size_t shared, size_t max_blocks,
                                      unsigned *grid) {
    if (!k || !grid) return record_error(k ? k->ctx : NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_kernel_grid_size_get: NULL argument");
    ptxkit_status st = check_block_threads(k, block_threads, shared);
    if (st != PTXKIT_SUCCESS) return st;
    if ((st = context_enter(k->ctx)) != PTXKIT_SUCCESS) return st;
    st = grid_size_for(k, block_threads, shared, 0, max_blocks, grid);
    context_leave(k->ctx);
    return st;
}

ptxkit_status ptxkit_kernel_max_dynamic_shared_set(ptxkit_kernel *k, size_t bytes) {
    if (!k) return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_kernel_max_dynamic_shared_set: kernel is NULL");
    kernel_limits_read(k); /* before this call's value, which the first read must not replace */
    ptxkit_kernel_attributes a;
    ptxkit_status st = ptxkit_kernel_attributes_get(k, &a);
    if (st != PTXKIT_SUCCESS) return st;
    size_t limit = (size_t)k->ctx->info.shared_per_block_optin;
    if (bytes + (size_t)a.static_shared_bytes > limit || bytes > (size_t)INT32_MAX)
        return record_error(k->ctx, PTXKIT_ERROR_INVALID_ARGUMENT,
                            "ptxkit_kernel_max_dynamic_shared_set: %zu bytes of dynamic shared memory plus the kernel's %d static bytes exceed this GPU's "
                            "opt-in limit of %zu per block", bytes, a.static_shared_bytes, limit);
    if ((st = context_enter(k->ctx)) != PTXKIT_SUCCESS) return st;
    CUresult r = k->ctx->cu->cuFuncSetAttribute(k->fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)bytes);
    context_leave(k->ctx);
    if (r != CUDA_SUCCESS)
        return record_cuda_error(k->ctx, r, "ptxkit_kernel_max_dynamic_shared_set: cuFuncSetAttribute(max dynamic shared memory)");
    __atomic_store_n(&k->max_dynamic_shared, (int)bytes, __ATOMIC_RELAXED);
    return PTXKIT_SUCCESS;
}

ptxkit_status kernel_reserve_dynamic_shared(ptxkit_kernel *k, size_t bytes, bool prefer_shared) {
    /* a family raises the limit of a kernel other threads may launch: the
     * limit only grows, and is read and written whole */
    kernel_limits_read(k);
    if (bytes <= (size_t)__atomic_load_n(&k->max_dynamic_shared, __ATOMIC_RELAXED)) return PTXKIT_SUCCESS;
    const cuda_driver *cu = k->ctx->cu;
    CUresult r = cu->cuFuncSetAttribute(k->fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)bytes);
    if (r == CUDA_SUCCESS && prefer_shared)
        r = cu->cuFuncSetAttribute(k->fn, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, CU_SHAREDMEM_CARVEOUT_MAX_SHARED);
    if (r != CUDA_SUCCESS) return record_cuda_error(k->ctx, r, "cuFuncSetAttribute (dynamic shared memory)");
    __atomic_store_n(&k->max_dynamic_shared, (int)bytes, __ATOMIC_RELAXED);
    return PTXKIT_SUCCESS;
}

/* Whether a launch on stream may be left to the driver to check against
 * the kernel's limits: not into a capture this thread began through
 * ptxkit, where a refused launch could invalidate the capture (asking its
 * own list, not the driver). A capture begun with raw driver calls is the
 * application's to manage (capture.h). */
static bool driver_may_check(ptxkit_stream *stream) { return !capture_thread_has(stream_handle(stream)); }

/* Dimensions and shared memory against the limits, without the driver once
 * the kernel's limits are read. may_defer: the kernel's first launch, on a
 * stream not being captured, leaves them to the driver (kernel_limits_read
 * says why); any later launch reads them first. Context current. */
static ptxkit_status check_launch(ptxkit_kernel *k, ptxkit_dim3 *grid, ptxkit_dim3 *block, size_t shared,
                                  ptxkit_stream *stream, bool may_defer) {
    ptxkit_context *ctx = k->ctx;
    if (!grid->y) grid->y = 1;
    if (!grid->z) grid->z = 1;
    if (!block->y) block->y = 1;
    if (!block->z) block->z = 1;
    if (!grid->x || !block->x)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "launch: grid.x and block.x must be at least 1");
    unsigned g[3] = {grid->x, grid->y, grid->z}, b[3] = {block->x, block->y, block->z};
    for (int i = 0; i < 3; i++) {
        if (ctx->max_grid[i] && g[i] > ctx->max_grid[i])
            return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "launch: grid.%c = %u exceeds this GPU's %u", "xyz"[i],
                                g[i], ctx->max_grid[i]);
        if (ctx->max_block[i] && b[i] > ctx->max_block[i])
            return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "launch: block.%c = %u exceeds this GPU's %u", "xyz"[i],
                                b[i], ctx->max_block[i]);
    }
    unsigned long long threads = (unsigned long long)b[0] * b[1] * b[2];
    if (may_defer && __atomic_load_n(&k->max_threads, __ATOMIC_ACQUIRE) == 0 &&
        !__atomic_exchange_n(&k->launched, true, __ATOMIC_RELAXED) && driver_may_check(stream))
        return PTXKIT_SUCCESS;
    kernel_limits_read(k);
    if (threads > (unsigned long long)k->max_threads ||
        shared > (size_t)__atomic_load_n(&k->max_dynamic_shared, __ATOMIC_RELAXED))
        return check_block_total(k, threads, shared);
    return PTXKIT_SUCCESS;
}

static ptxkit_status launch_failed(ptxkit_kernel *k, CUresult r, const ptxkit_dim3 *g, const ptxkit_dim3 *b,
                                   size_t shared) {
    ptxkit_context *ctx = k->ctx;
    if (r == CUDA_ERROR_INVALID_VALUE || r == CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES) {
        /* a first launch the driver checked: the kernel's limits say why, as they would have before it */
        ptxkit_status st = check_block_total(k, (unsigned long long)b->x * b->y * b->z, shared);
        if (st != PTXKIT_SUCCESS) return st;
    }
    char what[160];
    snprintf(what, sizeof what, "launch (grid %ux%ux%u, block %ux%ux%u, %zu B dynamic shared)", g->x, g->y, g->z, b->x,
             b->y, b->z, shared);
    ptxkit_status st = record_cuda_error(ctx, r, what);
    return st == PTXKIT_ERROR_DRIVER ? record_error(ctx, PTXKIT_ERROR_LAUNCH, "%s", ptxkit_last_error()) : st;
}

/* The checked launch itself, with k's context current. */
static ptxkit_status launch_checked(ptxkit_kernel *k, ptxkit_dim3 grid, ptxkit_dim3 block, size_t shared,
                                    ptxkit_stream *stream, void **args) {
    CUresult r = k->ctx->cu->cuLaunchKernel(k->fn, grid.x, grid.y, grid.z, block.x, block.y, block.z, (unsigned)shared,
                                            stream_handle(stream), args, NULL);
    return r == CUDA_SUCCESS ? PTXKIT_SUCCESS : launch_failed(k, r, &grid, &block, shared);
}

/* cuLaunchKernelEx with count launch attributes (0: none), k's context current. */
static CUresult launch_with_attributes(ptxkit_kernel *k, ptxkit_dim3 grid, ptxkit_dim3 block, size_t shared,
                                       ptxkit_stream *stream, void **args, CUlaunchAttribute *attrs, unsigned count) {
    CUlaunchConfig config = {
        .gridDimX = grid.x, .gridDimY = grid.y, .gridDimZ = grid.z,
        .blockDimX = block.x, .blockDimY = block.y, .blockDimZ = block.z,
        .sharedMemBytes = (unsigned)shared, .hStream = stream_handle(stream),
        .attrs = count ? attrs : NULL, .numAttrs = count,
    };
    return k->ctx->cu->cuLaunchKernelEx(&config, k->fn, args, NULL);
}

/* The attribute that lets a kernel begin before the one ahead of it on the
 * stream has finished (programmatic dependent launch). */
static CUlaunchAttribute programmatic_attribute(void) {
    CUlaunchAttribute attr = {.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION};
    attr.value.programmaticStreamSerializationAllowed = 1;
    return attr;
}

/* A programmatic launch: the kernel waits for the one ahead in its first
 * statement, so what overlaps is this launch and that kernel's tail. */
static ptxkit_status launch_programmatic(ptxkit_kernel *k, ptxkit_dim3 grid, ptxkit_dim3 block, size_t shared,
                                         ptxkit_stream *stream, void **args) {
    CUlaunchAttribute attr = programmatic_attribute();
    CUresult r = launch_with_attributes(k, grid, block, shared, stream, args, &attr, 1);
    return r == CUDA_SUCCESS ? PTXKIT_SUCCESS : launch_failed(k, r, &grid, &block, shared);
}

/* kernel_launch and kernel_launch_early: programmatic where k may be and,
 * unless early, only into a graph this thread is capturing through ptxkit
 * (a lookup in its own list, no driver call): there the edge between two
 * kernel nodes becomes programmatic and replay overlaps each node's launch
 * with the end of the one ahead. On a plain stream the families launch as
 * usual; with programmatic launches there, a test of many streams handing
 * scratch over by events hung on an H200 (cause not found). */
static ptxkit_status family_launch(ptxkit_kernel *k, ptxkit_dim3 grid, ptxkit_dim3 block, size_t shared,
                                   ptxkit_stream *stream, void **args, bool early) {
    ptxkit_status st = check_launch(k, &grid, &block, shared, stream, true);
    if (st != PTXKIT_SUCCESS) return st;
    if (__atomic_load_n(&k->programmatic, __ATOMIC_RELAXED) > 0 && (early || capture_thread_has(stream_handle(stream))))
        return launch_programmatic(k, grid, block, shared, stream, args);
    return launch_checked(k, grid, block, shared, stream, args);
}

ptxkit_status kernel_launch(ptxkit_kernel *k, ptxkit_dim3 grid, ptxkit_dim3 block, size_t shared, ptxkit_stream *stream,
                            void **args) {
    return family_launch(k, grid, block, shared, stream, args, false);
}

ptxkit_status kernel_launch_early(ptxkit_kernel *k, ptxkit_dim3 grid, ptxkit_dim3 block, size_t shared,
                                 ptxkit_stream *stream, void **args) {
    return family_launch(k, grid, block, shared, stream, args, true);
}

void kernel_allow_programmatic(ptxkit_kernel *k) {
    ptxkit_context *ctx = k->ctx;
    if (__atomic_load_n(&k->programmatic, __ATOMIC_RELAXED)) return; /* decided */
    /* the virtual architecture it was compiled for: the wait is there from compute_90 on */
    int ptx_version = 0;
    bool able = ctx->arch >= 90 && ctx->cu->cuLaunchKernelEx &&
                ctx->cu->cuFuncGetAttribute(&ptx_version, CU_FUNC_ATTRIBUTE_PTX_VERSION, k->fn) == CUDA_SUCCESS &&
                ptx_version >= 90;
    __atomic_store_n(&k->programmatic, able ? 1 : -1, __ATOMIC_RELAXED);
}

ptxkit_status ptxkit_kernel_launch(ptxkit_kernel *k, ptxkit_dim3 grid, ptxkit_dim3 block, size_t shared, ptxkit_stream *stream,
                            void **args) {
    if (!k) return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_kernel_launch: kernel is NULL");
    ptxkit_context *ctx = k->ctx;
    CUcontext current = NULL;
    bool push = ctx->cu->cuCtxGetCurrent(&current) != CUDA_SUCCESS || current != ctx->cu_context;
    ptxkit_status st;
    if (push && (st = context_enter(ctx)) != PTXKIT_SUCCESS) return st;
    st = check_launch(k, &grid, &block, shared, stream, true);
    if (st == PTXKIT_SUCCESS) st = launch_checked(k, grid, block, shared, stream, args);
    if (push) context_leave(ctx);
    return st;
}

ptxkit_status ptxkit_kernel_launch_ex(ptxkit_kernel *k, ptxkit_dim3 grid, ptxkit_dim3 block, size_t shared,
                                      ptxkit_stream *stream, void **args, const size_t *arg_sizes, size_t arg_count,
                                      const ptxkit_launch_attributes *a) {
    if (!k) return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_kernel_launch_ex: kernel is NULL");
    if (arg_count && !arg_sizes)
        return record_error(k->ctx, PTXKIT_ERROR_INVALID_ARGUMENT,
                            "ptxkit_kernel_launch_ex: %zu arguments without their sizes", arg_count);
    ptxkit_status st;
    if (arg_sizes && (st = check_args(k, args, arg_sizes, arg_count)) != PTXKIT_SUCCESS) return st;
    if (!a) return ptxkit_kernel_launch(k, grid, block, shared, stream, args);
    ptxkit_context *ctx = k->ctx;
    st = check_launch(k, &grid, &block, shared, stream, false);
    if (st != PTXKIT_SUCCESS) return st;
    if (!RESERVED_ZERO(a))
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_kernel_launch_ex: reserved attribute fields are set");
    if (!ctx->cu->cuLaunchKernelEx)
        return record_error(ctx, PTXKIT_ERROR_UNSUPPORTED, "ptxkit_kernel_launch_ex: the driver has no cuLaunchKernelEx (CUDA 12+)");
    CUlaunchAttribute attrs[4];
    unsigned count = 0;
    ptxkit_dim3 c = a->cluster;
    if (c.x || c.y || c.z) {
        if (!c.x) c.x = 1;
        if (!c.y) c.y = 1;
        if (!c.z) c.z = 1;
        if (ctx->arch < 90)
            return record_error(ctx, PTXKIT_ERROR_UNSUPPORTED,
                                "ptxkit_kernel_launch_ex: thread-block clusters need sm_90, this GPU is sm_%d", ctx->arch);
        if (grid.x % c.x || grid.y % c.y || grid.z % c.z)
            return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT,
                                "ptxkit_kernel_launch_ex: cluster %ux%ux%u does not divide the grid %ux%ux%u", c.x, c.y, c.z,
                                grid.x, grid.y, grid.z);
        attrs[count].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
        attrs[count].value.clusterDim.x = c.x;
        attrs[count].value.clusterDim.y = c.y;
        attrs[count].value.clusterDim.z = c.z;
        count++;
    }
    if (a->cooperative) {
        attrs[count].id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
        attrs[count].value.cooperative = 1;
        count++;
    }
    if (a->programmatic && ctx->arch >= 90) attrs[count++] = programmatic_attribute();
    if (a->access_window) {
        const ptxkit_access_window *w = a->access_window;
        if ((st = access_window_check(ctx, w)) != PTXKIT_SUCCESS) return st;
        attrs[count].id = CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW;
        access_window_to_cu(w, &attrs[count].value.accessPolicyWindow);
        count++;
    }
    if ((st = context_enter(ctx)) != PTXKIT_SUCCESS) return st;
    CUresult r = launch_with_attributes(k, grid, block, shared, stream, args, attrs, count);
    context_leave(ctx);
    if (r == CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT,
                            "ptxkit_kernel_launch_ex: cooperative launch: %u blocks cannot all be resident at once (see ptxkit_kernel_grid_size_get)",
                            grid.x * grid.y * grid.z);
    if (r == CUDA_ERROR_NOT_SUPPORTED)
        return record_error(ctx, PTXKIT_ERROR_UNSUPPORTED, "ptxkit_kernel_launch_ex: the driver or GPU does not support these attributes");
    return r == CUDA_SUCCESS ? PTXKIT_SUCCESS : launch_failed(k, r, &grid, &block, shared);
}
