/* Contexts: a device's primary context, or a caller's CUcontext. The public
 * ptxkit_context_create and ptxkit_context_attach are src/tune/context_open.c's:
 * they open through context_open and context_attach here, then install the
 * tuner's runner for PTXKIT_TUNE=auto (objects.h, ptxkit_context.auto_tune),
 * which this layer may not name. */
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "runtime/cache_key.h"
#include "runtime/capture.h"
#include "runtime/context.h"
#include "runtime/disk_cache.h"
#include "runtime/objects.h"
#include "runtime/registry.h"
#include "runtime/status.h"

static const cuda_driver *driver_or_error(ptxkit_status *st) {
    char why[512];
    const cuda_driver *cu = driver_get(st, why, sizeof why);
    if (!cu) record_error(NULL, *st, "%s", why);
    return cu;
}

ptxkit_status ptxkit_device_count_get(int *count) {
    if (!count) return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_device_count_get: count is NULL");
    *count = 0;
    ptxkit_status st;
    const cuda_driver *cu = driver_or_error(&st);
    if (!cu) return st == PTXKIT_ERROR_NO_DEVICE ? PTXKIT_SUCCESS : st;
    CUresult r = cu->cuDeviceGetCount(count);
    return r == CUDA_SUCCESS ? PTXKIT_SUCCESS : record_cuda_error(NULL, r, "ptxkit_device_count_get: cuDeviceGetCount");
}

static int attr(ptxkit_context *ctx, CUdevice_attribute a) {
    int v = 0;
    if (ctx->cu->cuDeviceGetAttribute(&v, a, ctx->device) != CUDA_SUCCESS) v = 0;
    return v;
}

static void read_device_info(ptxkit_context *ctx) {
    ptxkit_device_info *d = &ctx->info;
    const cuda_driver *cu = ctx->cu;
    if (cu->cuDeviceGetName(d->name, sizeof d->name, ctx->device) != CUDA_SUCCESS) strcpy(d->name, "unknown");
    d->cc_major = attr(ctx, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
    d->cc_minor = attr(ctx, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
    d->sm_count = attr(ctx, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
    d->l2_bytes = attr(ctx, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
    d->persisting_l2_max_bytes = attr(ctx, CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE);
    d->access_window_max_bytes = attr(ctx, CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE);
    d->shared_per_block = attr(ctx, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK);
    d->shared_per_block_optin = attr(ctx, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
    d->shared_per_sm = attr(ctx, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR);
    d->max_threads_per_block = attr(ctx, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
    d->max_threads_per_sm = attr(ctx, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR);
    d->max_blocks_per_sm = attr(ctx, CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR);
    d->regs_per_block = attr(ctx, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK);
    d->regs_per_sm = attr(ctx, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR);
    d->warp_size = attr(ctx, CU_DEVICE_ATTRIBUTE_WARP_SIZE);
    d->memory_bus_bits = attr(ctx, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
    d->memory_clock_khz = attr(ctx, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE);
    d->sm_clock_khz = attr(ctx, CU_DEVICE_ATTRIBUTE_CLOCK_RATE);
    /* double data rate: two transfers per clock over the bus */
    d->peak_bandwidth_gbs = 2.0 * d->memory_clock_khz * 1e3 * (d->memory_bus_bits / 8.0) / 1e9;
    size_t total = 0;
    if (cu->cuDeviceTotalMem(&total, ctx->device) == CUDA_SUCCESS) d->total_memory = total;
    ctx->arch = d->cc_major * 10 + d->cc_minor;
    const CUdevice_attribute limits[6] = {
        CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z,
        CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X,  CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y,  CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z};
    for (int i = 0; i < 3; i++) {
        ctx->max_block[i] = (unsigned)attr(ctx, limits[i]);
        ctx->max_grid[i] = (unsigned)attr(ctx, limits[3 + i]);
    }
}

static ptxkit_status context_new(const cuda_driver *cu, ptxkit_context **out) {
    ptxkit_context *ctx = calloc(1, sizeof *ctx);
    if (!ctx) return record_error(NULL, PTXKIT_ERROR_OUT_OF_MEMORY, "context: out of host memory");
    ctx->cu = cu;
    pthread_mutex_init(&ctx->state_lock, NULL);
    ctx->registry = module_registry_create();
    if (!ctx->registry) {
        free(ctx);
        return record_error(NULL, PTXKIT_ERROR_OUT_OF_MEMORY, "context: out of host memory");
    }
    *out = ctx;
    return PTXKIT_SUCCESS;
}

static void context_free(ptxkit_context *ctx) {
    pthread_mutex_destroy(&ctx->state_lock);
    free(ctx);
}

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22 /* Linux 5.14 */
#endif

enum { MAX_SEGMENTS = 8 };

typedef struct segments {
    uintptr_t self;                 /* an address inside this library */
    uintptr_t start[MAX_SEGMENTS];  /* its read-only PT_LOAD segments */
    size_t length[MAX_SEGMENTS];
    int count;
} segments;

/* Keeps the read-only loadable segments of the object that holds
 * s->self; copies them out, so that nothing runs under the loader's lock
 * (the driver may be loading beside it). */
static int find_self(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    segments *s = data;
    int found = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && s->self >= lo && s->self - lo < ph->p_memsz) found = 1;
    }
    if (!found) return 0;
    for (int i = 0; i < info->dlpi_phnum && s->count < MAX_SEGMENTS; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || (ph->p_flags & PF_W)) continue;
        s->start[s->count] = info->dlpi_addr + ph->p_vaddr;
        s->length[s->count] = ph->p_memsz;
        s->count++;
    }
    return 1;
}

/* Maps this library's read-only segments (code and constants) into the
 * process's page tables (MADV_POPULATE_READ, else one read per page), so
 * that the first calls of a fresh process do not each stop on a page fault
 * for the code they run. Run on the prefetch thread below while the
 * driver opens a context; the writable segment is left alone (populating
 * it would make its zero pages resident). Errors are ignored: the pages
 * then fault in as before. */
static void code_pages_populate(void) {
    /* once a process: a later context's open finds them mapped */
    static bool done;
    if (__atomic_exchange_n(&done, true, __ATOMIC_RELAXED)) return;
    segments s = {.self = (uintptr_t)&code_pages_populate};
    dl_iterate_phdr(find_self, &s);
    long page = sysconf(_SC_PAGESIZE);
    if (page <= 0) return;
    for (int i = 0; i < s.count; i++) {
        uintptr_t lo = s.start[i] & ~(uintptr_t)(page - 1), hi = s.start[i] + s.length[i];
        if (madvise((void *)lo, hi - lo, MADV_POPULATE_READ) == 0) continue;
        /* Kernels before 5.14 refuse the advice (EINVAL): a read of each
         * page faults it in. Any other failure (a page the file no longer
         * backs, which a read would answer with SIGBUS) leaves it be. */
        if (errno != EINVAL) continue;
        for (uintptr_t p = lo; p < hi; p += (uintptr_t)page) (void)*(volatile const unsigned char *)p;
    }
}

/* Reads what the first kernel's key needs (the NVRTC identity record from
 * disk, the embedded headers' hash) and the cache entries the last
 * processes began with, on a thread of its own while the driver
 * initializes and opens the primary context, which takes far longer: a
 * warm process's first kernel then finds them ready, and its calls find the
 * library's code mapped. Without a record nothing is kept and the first
 * key computes it as before. */
static void *prefetch_first_key(void *unused) {
    (void)unused;
    nvrtc_identity_prefetch();
    disk_cache_read_ahead();      /* the entries the last processes began with */
    (void)builtin_headers_hash(); /* the other part of every key: its first read faults its page in */
    code_pages_populate();        /* and the code the first kernel's calls run */
    return NULL;
}

static ptxkit_status context_open_primary(int ordinal, ptxkit_context **out);

ptxkit_status context_open(int ordinal, ptxkit_context **out) {
    pthread_t prefetch;
    /* joined before returning, so no thread outlives the call; a thread
     * that cannot start only costs the overlap */
    bool prefetching = pthread_create(&prefetch, NULL, prefetch_first_key, NULL) == 0;
    ptxkit_status st = context_open_primary(ordinal, out);
    if (prefetching) pthread_join(prefetch, NULL);
    if (st != PTXKIT_SUCCESS) disk_cache_read_ahead_release(); /* no context: nothing to look up */
    return st;
}

static ptxkit_status context_open_primary(int ordinal, ptxkit_context **out) {
    if (!out) return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_context_create: out is NULL");
    *out = NULL;
    ptxkit_status st;
    const cuda_driver *cu = driver_or_error(&st);
    if (!cu) return st;
    int count = 0;
    CUresult r = cu->cuDeviceGetCount(&count);
    if (r != CUDA_SUCCESS) return record_cuda_error(NULL, r, "cuDeviceGetCount");
    if (ordinal < 0 || ordinal >= count)
        return record_error(NULL, PTXKIT_ERROR_NO_DEVICE, "ptxkit_context_create: device %d does not exist (%d GPU%s found)",
                            ordinal, count, count == 1 ? "" : "s");
    ptxkit_context *ctx = NULL;
    if ((st = context_new(cu, &ctx)) != PTXKIT_SUCCESS) return st;
    if ((r = cu->cuDeviceGet(&ctx->device, ordinal)) != CUDA_SUCCESS ||
        (r = cu->cuDevicePrimaryCtxRetain(&ctx->cu_context, ctx->device)) != CUDA_SUCCESS) {
        module_registry_destroy(ctx, ctx->registry);
        context_free(ctx);
        return record_cuda_error(NULL, r, "opening the device's primary context");
    }
    ctx->owns_primary = true;
    ctx->info.ordinal = ordinal;
    read_device_info(ctx);
    *out = ctx;
    return PTXKIT_SUCCESS;
}

ptxkit_status context_attach(void *cu_context, ptxkit_context **out) {
    if (!out || !cu_context)
        return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_context_attach: %s is NULL", out ? "cu_context" : "out");
    *out = NULL;
    ptxkit_status st;
    const cuda_driver *cu = driver_or_error(&st);
    if (!cu) return st;
    ptxkit_context *ctx = NULL;
    if ((st = context_new(cu, &ctx)) != PTXKIT_SUCCESS) return st;
    ctx->cu_context = (CUcontext)cu_context;
    CUresult r = cu->cuCtxPushCurrent(ctx->cu_context);
    if (r == CUDA_SUCCESS) {
        r = cu->cuCtxGetDevice(&ctx->device);
        CUcontext popped;
        cu->cuCtxPopCurrent(&popped);
    }
    if (r != CUDA_SUCCESS) {
        module_registry_destroy(ctx, ctx->registry);
        context_free(ctx);
        return record_cuda_error(NULL, r, "ptxkit_context_attach: the CUcontext is not usable");
    }
    for (int i = 0, n = 0; cu->cuDeviceGetCount(&n) == CUDA_SUCCESS && i < n; i++) {
        CUdevice d;
        if (cu->cuDeviceGet(&d, i) == CUDA_SUCCESS && d == ctx->device) ctx->info.ordinal = i;
    }
    read_device_info(ctx);
    *out = ctx;
    return PTXKIT_SUCCESS;
}

void ptxkit_context_destroy(ptxkit_context *ctx) {
    if (!ctx) return;
    const cuda_driver *cu = ctx->cu;
    /* Without the context current the driver calls below fail harmlessly,
     * and the host memory is released all the same. */
    bool pushed = cu->cuCtxPushCurrent(ctx->cu_context) == CUDA_SUCCESS;
    context_states_release(ctx);
    module_registry_destroy(ctx, ctx->registry);
    CUcontext popped;
    if (pushed) cu->cuCtxPopCurrent(&popped);
    if (ctx->owns_primary) cu->cuDevicePrimaryCtxRelease(ctx->device);
    context_free(ctx);
    disk_cache_read_ahead_release(); /* what the process did not take by now, it is not waiting for */
}

ptxkit_status context_enter(ptxkit_context *ctx) {
    if (!ctx) return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "context is NULL");
    CUresult r = ctx->cu->cuCtxPushCurrent(ctx->cu_context);
    return r == CUDA_SUCCESS ? PTXKIT_SUCCESS : record_cuda_error(ctx, r, "cuCtxPushCurrent");
}

void context_leave(ptxkit_context *ctx) {
    CUcontext popped;
    ctx->cu->cuCtxPopCurrent(&popped);
}

ptxkit_status ptxkit_context_enter(ptxkit_context *ctx) { return name_failure(context_enter(ctx), "ptxkit_context_enter"); }

ptxkit_status ptxkit_context_leave(ptxkit_context *ctx) {
    if (!ctx) return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_context_leave: context is NULL");
    CUcontext popped = NULL;
    CUresult r = ctx->cu->cuCtxPopCurrent(&popped);
    if (r != CUDA_SUCCESS) return record_cuda_error(ctx, r, "cuCtxPopCurrent");
    if (popped != ctx->cu_context) {
        /* not ours on top: put it back, the caller's pairs are crossed */
        ctx->cu->cuCtxPushCurrent(popped);
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT,
                            "ptxkit_context_leave: the current context is not this one (enter and leave do not pair)");
    }
    return PTXKIT_SUCCESS;
}

ptxkit_status ptxkit_device_info_get(ptxkit_context *ctx, ptxkit_device_info *out) {
    if (!ctx || !out) return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_device_info_get: NULL argument");
    *out = ctx->info;
    return PTXKIT_SUCCESS;
}

ptxkit_status ptxkit_context_synchronize(ptxkit_context *ctx) {
    if (!ctx) return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_context_synchronize: context is NULL");
    ptxkit_status st = capture_thread_refuse(ctx, "ptxkit_context_synchronize");
    if (st != PTXKIT_SUCCESS) return st;
    st = context_enter(ctx);
    if (st != PTXKIT_SUCCESS) return st;
    CUresult r = ctx->cu->cuCtxSynchronize();
    context_leave(ctx);
    return r == CUDA_SUCCESS ? PTXKIT_SUCCESS
                             : record_cuda_error(ctx, r, "ptxkit_context_synchronize: cuCtxSynchronize");
}

/* A state, once made, stays until the context closes (which runs alone):
 * its slot's value is written before its ops are published, so a call
 * that finds the ops finds the value without taking the lock. The ops' own
 * calls are on every small launch's path. */
static void *published_state(ptxkit_context *ctx, const context_state_ops *ops) {
    for (size_t i = 0; i < sizeof ctx->states / sizeof ctx->states[0]; i++) {
        const context_state_ops *seen = __atomic_load_n(&ctx->states[i].ops, __ATOMIC_ACQUIRE);
        if (!seen) return NULL;
        if (seen == ops) return ctx->states[i].value;
    }
    return NULL;
}

void *context_state(ptxkit_context *ctx, const context_state_ops *ops) {
    void *value = published_state(ctx, ops);
    if (value) return value;
    pthread_mutex_lock(&ctx->state_lock);
    size_t i = 0, n = sizeof ctx->states / sizeof ctx->states[0];
    while (i < n && ctx->states[i].ops && ctx->states[i].ops != ops) i++;
    if (i < n && ctx->states[i].ops == ops) {
        value = ctx->states[i].value;
    } else if (i < n && (value = ops->create(ctx)) != NULL) {
        ctx->states[i].value = value;
        __atomic_store_n(&ctx->states[i].ops, ops, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&ctx->state_lock);
    return value;
}

void *context_state_find(ptxkit_context *ctx, const context_state_ops *ops) {
    void *value = NULL;
    pthread_mutex_lock(&ctx->state_lock);
    for (size_t i = 0; i < sizeof ctx->states / sizeof ctx->states[0] && ctx->states[i].ops; i++)
        if (ctx->states[i].ops == ops) value = ctx->states[i].value;
    pthread_mutex_unlock(&ctx->state_lock);
    return value;
}

void context_states_release(ptxkit_context *ctx) {
    pthread_mutex_lock(&ctx->state_lock);
    for (size_t i = 0; i < sizeof ctx->states / sizeof ctx->states[0]; i++) {
        if (ctx->states[i].ops) ctx->states[i].ops->destroy(ctx, ctx->states[i].value);
        ctx->states[i] = (struct context_state){0};
    }
    pthread_mutex_unlock(&ctx->state_lock);
}

void context_stream_closing(ptxkit_context *ctx, CUstream stream) {
    pthread_mutex_lock(&ctx->state_lock);
    for (size_t i = 0; i < sizeof ctx->states / sizeof ctx->states[0]; i++)
        if (ctx->states[i].ops && ctx->states[i].ops->stream_closing)
            ctx->states[i].ops->stream_closing(ctx, ctx->states[i].value, stream);
    pthread_mutex_unlock(&ctx->state_lock);
}
