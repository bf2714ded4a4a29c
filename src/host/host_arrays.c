/* Host arrays (ptxkit.h, "host arrays"): reduce, scan and transform of data
 * in host memory through a chunked pipeline over the streams of a ring the
 * context owns. This layer stands on the runtime (context state, driver
 * entry points, errors) and the public ops (ptxkit_reduce, ptxkit_scan,
 * ptxkit_kernel_launch), as src/multi does for several GPUs.
 *
 * Chunk i uses ring slot i % k (k compute streams). Its H2D copy goes on
 * the ring's one upload stream and its D2H copy on the one download
 * stream, so each direction's copies run back to back in chunk order and
 * chunk i arrives before chunk i + 1 (copies of one direction spread over
 * several streams may share the copy engines and finish together, later
 * than the first of them needed to); its kernel runs on the slot's
 * stream, so kernels of different chunks overlap each other and the
 * copies. Events order each chunk's upload -> kernel -> download, and a
 * slot's next upload after its last use (done). The host waits for a slot
 * only where it must write the slot's pinned staging buffer again or read
 * what the slot copied back.
 *
 * Reduce: chunk i's partial goes to partials[i], and one more
 * ptxkit_reduce over the partials gives the result. Scan: chunk i is
 * scanned alone, then host_carry adds carries[i] (the total of the chunks
 * before it) and writes carries[i + 1]; the carry kernels of consecutive
 * chunks are ordered by events across the streams, while the copies and
 * scans of other chunks overlap them. */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ptxkit_ops.h"
#include "runtime/args.h"
#include "runtime/capture.h"
#include "runtime/context.h"
#include "runtime/objects.h"
#include "runtime/status.h"

/* ---- the carry kernel, compiled through the program API ---- */

static const char carry_source[] =
    "#include \"reduce_typed.cuh\"\n"
    "/* out[j] = carries[i] op out[j] over a scanned chunk of n > 0 elements;\n"
    " * the thread of the last element also writes carries[i + 1], from the\n"
    " * value it read before changing it (for an exclusive scan with the\n"
    " * chunk's last input too). */\n"
    "extern \"C\" __global__ void __launch_bounds__(256) host_carry(T *out, unsigned long long n, T *carries,\n"
    "                                                              unsigned long long i, const T *last_in,\n"
    "                                                              int exclusive) {\n"
    "    const T c = carries[i];\n"
    "    const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;\n"
    "    for (unsigned long long j = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; j < n; j += stride) {\n"
    "        const T v = out[j];\n"
    "        if (j == n - 1) carries[i + 1] = combine(c, exclusive ? combine(v, *last_in) : v);\n"
    "        out[j] = combine(c, v);\n"
    "    }\n"
    "}\n";

/* ---- the ring the context owns ---- */

typedef struct ring_slot {
    ptxkit_stream *stream;
    CUevent loaded;         /* after the chunk's upload */
    CUevent computed;       /* after the chunk's kernels */
    CUevent done;           /* after the chunk's last work: its buffers are free again */
    CUevent carried;        /* after the slot's last carry kernel (scan) */
    void *h_in, *h_out;     /* pinned staging, chunk bytes each, on first need */
    CUdeviceptr d_in, d_out;
} ring_slot;

typedef struct host_ring {
    pthread_mutex_t lock;   /* one host-array call at a time per context */
    CUstream up, down;      /* every chunk's H2D, every chunk's D2H, in order */
    int streams;            /* slots with a stream and events */
    size_t chunk_bytes;     /* size of every buffer below, 0 before the first */
    ring_slot slot[PTXKIT_HOST_MAX_STREAMS];
    CUdeviceptr small;      /* partials, carries and the result */
    size_t small_bytes;
    void *h_small;          /* pinned: the reduce result read back */
    ptxkit_program *program;
    ptxkit_kernel *carry[PTXKIT_DTYPE_COUNT][PTXKIT_REDUCE_OP_COUNT];
} host_ring;

static void *ring_create(ptxkit_context *ctx) {
    (void)ctx;
    host_ring *r = calloc(1, sizeof *r);
    if (r) pthread_mutex_init(&r->lock, NULL);
    return r;
}

/* Raw driver calls only: the context's states are released under its state
 * lock, which ptxkit_stream_destroy would take again. */
static void slot_buffers_free(ptxkit_context *ctx, ring_slot *s) {
    if (s->h_in) ctx->cu->cuMemFreeHost(s->h_in);
    if (s->h_out) ctx->cu->cuMemFreeHost(s->h_out);
    if (s->d_in) ctx->cu->cuMemFree(s->d_in);
    if (s->d_out) ctx->cu->cuMemFree(s->d_out);
    s->h_in = s->h_out = NULL;
    s->d_in = s->d_out = 0;
}

static void ring_destroy(ptxkit_context *ctx, void *value) {
    host_ring *r = value;
    if (!r) return;
    for (int i = 0; i < r->streams; i++) {
        ring_slot *s = &r->slot[i];
        if (s->stream) ctx->cu->cuStreamSynchronize(s->stream->handle);
        slot_buffers_free(ctx, s);
        CUevent *events[] = {&s->loaded, &s->computed, &s->done, &s->carried};
        for (size_t e = 0; e < sizeof events / sizeof events[0]; e++)
            if (*events[e]) ctx->cu->cuEventDestroy(*events[e]);
        if (s->stream) {
            ctx->cu->cuStreamDestroy(s->stream->handle);
            free(s->stream);
        }
    }
    if (r->up) ctx->cu->cuStreamSynchronize(r->up), ctx->cu->cuStreamDestroy(r->up);
    if (r->down) ctx->cu->cuStreamSynchronize(r->down), ctx->cu->cuStreamDestroy(r->down);
    if (r->small) ctx->cu->cuMemFree(r->small);
    if (r->h_small) ctx->cu->cuMemFreeHost(r->h_small);
    ptxkit_program_destroy(r->program);
    pthread_mutex_destroy(&r->lock);
    free(r);
}

static const context_state_ops ring_ops = {ring_create, ring_destroy, NULL};

/* Every slot stream finished (errors ignored: the caller reports its own). */
static void ring_drain(ptxkit_context *ctx, host_ring *r) {
    for (int i = 0; i < r->streams; i++) ctx->cu->cuStreamSynchronize(r->slot[i].stream->handle);
    if (r->up) ctx->cu->cuStreamSynchronize(r->up);
    if (r->down) ctx->cu->cuStreamSynchronize(r->down);
}

/* At least `streams` slots with buffers of chunk_bytes (h_in/h_out only
 * when asked for), and room for `smalls` elements of 8 bytes. */
static ptxkit_status ring_reserve(ptxkit_context *ctx, host_ring *r, int streams, size_t chunk_bytes, bool h_in,
                                  bool h_out, bool d_out, size_t smalls) {
    const cuda_driver *cu = ctx->cu;
    CUresult e;
    if (chunk_bytes > r->chunk_bytes) {
        ring_drain(ctx, r);
        for (int i = 0; i < r->streams; i++) slot_buffers_free(ctx, &r->slot[i]);
        r->chunk_bytes = chunk_bytes;
    }
    if (!r->up && (e = cu->cuStreamCreate(&r->up, CU_STREAM_NON_BLOCKING)) != CUDA_SUCCESS)
        return record_cuda_error(ctx, e, "host arrays: cuStreamCreate");
    if (!r->down && (e = cu->cuStreamCreate(&r->down, CU_STREAM_NON_BLOCKING)) != CUDA_SUCCESS)
        return record_cuda_error(ctx, e, "host arrays: cuStreamCreate");
    while (r->streams < streams) {
        ring_slot *s = &r->slot[r->streams];
        ptxkit_status st = ptxkit_stream_create(ctx, PTXKIT_STREAM_NON_BLOCKING, 0, &s->stream);
        if (st != PTXKIT_SUCCESS) return st;
        CUevent *events[] = {&s->loaded, &s->computed, &s->done, &s->carried};
        e = CUDA_SUCCESS;
        for (size_t i = 0; i < sizeof events / sizeof events[0] && e == CUDA_SUCCESS; i++)
            e = cu->cuEventCreate(events[i], CU_EVENT_DISABLE_TIMING);
        if (e != CUDA_SUCCESS) {
            for (size_t i = 0; i < sizeof events / sizeof events[0]; i++)
                if (*events[i]) cu->cuEventDestroy(*events[i]);
            ptxkit_stream_destroy(s->stream);
            *s = (ring_slot){0};
            return record_cuda_error(ctx, e, "host arrays: cuEventCreate");
        }
        r->streams++;
    }
    for (int i = 0; i < streams; i++) {
        ring_slot *s = &r->slot[i];
        if (!s->d_in && (e = cu->cuMemAlloc(&s->d_in, r->chunk_bytes)) != CUDA_SUCCESS)
            return record_cuda_error(ctx, e, "host arrays: cuMemAlloc (device chunk)");
        if (d_out && !s->d_out && (e = cu->cuMemAlloc(&s->d_out, r->chunk_bytes)) != CUDA_SUCCESS)
            return record_cuda_error(ctx, e, "host arrays: cuMemAlloc (device chunk)");
        if (h_in && !s->h_in && (e = cu->cuMemAllocHost(&s->h_in, r->chunk_bytes)) != CUDA_SUCCESS)
            return record_cuda_error(ctx, e, "host arrays: cuMemAllocHost (staging)");
        if (h_out && !s->h_out && (e = cu->cuMemAllocHost(&s->h_out, r->chunk_bytes)) != CUDA_SUCCESS)
            return record_cuda_error(ctx, e, "host arrays: cuMemAllocHost (staging)");
    }
    size_t need = (smalls + 1) * 8;
    if (need > r->small_bytes) {
        ring_drain(ctx, r);
        if (r->small) cu->cuMemFree(r->small);
        r->small = 0;
        r->small_bytes = 0;
        size_t want = need < 4096 ? 4096 : need + need / 2;
        if ((e = cu->cuMemAlloc(&r->small, want)) != CUDA_SUCCESS)
            return record_cuda_error(ctx, e, "host arrays: cuMemAlloc (partials)");
        r->small_bytes = want;
    }
    if (!r->h_small && (e = cu->cuMemAllocHost(&r->h_small, 64)) != CUDA_SUCCESS)
        return record_cuda_error(ctx, e, "host arrays: cuMemAllocHost (result)");
    return PTXKIT_SUCCESS;
}

static ptxkit_status carry_kernel(ptxkit_context *ctx, host_ring *r, ptxkit_reduce_op op, ptxkit_dtype type,
                                  ptxkit_kernel **out) {
    ptxkit_kernel **slot = &r->carry[type][op];
    if (!*slot) {
        ptxkit_status st;
        if (!r->program &&
            (st = ptxkit_program_create("ptxkit_host_carry.cu", carry_source, NULL, 0, &r->program)) != PTXKIT_SUCCESS)
            return st;
        char type_define[16] = "TYPE_ID=", op_define[16] = "OP=";
        type_define[8] = (char)('0' + (int)type);
        op_define[3] = (char)('0' + (int)op);
        const char *defines[2] = {type_define, op_define};
        if ((st = ptxkit_program_kernel_get(ctx, r->program, "host_carry", defines, 2, slot)) != PTXKIT_SUCCESS) return st;
    }
    *out = *slot;
    return PTXKIT_SUCCESS;
}

/* ---- host threads copying pageable data ----
 *
 * Threads are started per call and joined at its end rather than kept in a
 * pool: starting a few threads costs far less than one chunk's copy, and
 * the library then owns no idle threads (nothing to stop at close, nothing
 * inherited by a fork). Each copy is split among the workers and the
 * calling thread; the caller returns when every part is done. */

typedef struct copy_team {
    pthread_t thread[PTXKIT_HOST_MAX_THREADS];
    int workers;            /* started threads, besides the caller */
    pthread_mutex_t lock;
    pthread_cond_t go, done;
    unsigned long generation;
    int pending;
    bool quit;
    char *dst;
    const char *src;
    size_t bytes;
} copy_team;

typedef struct team_arg {
    copy_team *team;
    int index;              /* 1..workers; the caller is part 0 */
} team_arg;

static void part_of(const copy_team *t, int index, size_t *begin, size_t *end) {
    size_t parts = (size_t)t->workers + 1;
    *begin = (t->bytes / parts * (size_t)index) & ~(size_t)63;
    *end = index == t->workers ? t->bytes : (t->bytes / parts * (size_t)(index + 1)) & ~(size_t)63;
}

static void *team_worker(void *p) {
    team_arg *a = p;
    copy_team *t = a->team;
    unsigned long seen = 0;
    for (;;) {
        pthread_mutex_lock(&t->lock);
        while (!t->quit && t->generation == seen) pthread_cond_wait(&t->go, &t->lock);
        if (t->quit) {
            pthread_mutex_unlock(&t->lock);
            break;
        }
        seen = t->generation;
        size_t begin, end;
        part_of(t, a->index, &begin, &end);
        char *dst = t->dst;
        const char *src = t->src;
        pthread_mutex_unlock(&t->lock);
        if (end > begin) memcpy(dst + begin, src + begin, end - begin);
        pthread_mutex_lock(&t->lock);
        if (--t->pending == 0) pthread_cond_signal(&t->done);
        pthread_mutex_unlock(&t->lock);
    }
    return NULL;
}

/* Starts up to threads - 1 workers (fewer where the system refuses). */
static void team_start(copy_team *t, team_arg *args, int threads) {
    memset(t, 0, sizeof *t);
    pthread_mutex_init(&t->lock, NULL);
    pthread_cond_init(&t->go, NULL);
    pthread_cond_init(&t->done, NULL);
    for (int i = 0; i + 1 < threads; i++) {
        args[i] = (team_arg){t, i + 1};
        if (pthread_create(&t->thread[i], NULL, team_worker, &args[i]) != 0) break;
        t->workers++;
    }
}

static void team_stop(copy_team *t) {
    pthread_mutex_lock(&t->lock);
    t->quit = true;
    pthread_cond_broadcast(&t->go);
    pthread_mutex_unlock(&t->lock);
    for (int i = 0; i < t->workers; i++) pthread_join(t->thread[i], NULL);
    pthread_cond_destroy(&t->go);
    pthread_cond_destroy(&t->done);
    pthread_mutex_destroy(&t->lock);
}

/* Below this a copy is not worth waking the team for. */
enum { TEAM_MIN_BYTES = 1 << 20 };

static void team_copy(copy_team *t, void *dst, const void *src, size_t bytes) {
    if (!t || t->workers == 0 || bytes < TEAM_MIN_BYTES) {
        memcpy(dst, src, bytes);
        return;
    }
    pthread_mutex_lock(&t->lock);
    t->dst = dst;
    t->src = src;
    t->bytes = bytes;
    t->pending = t->workers;
    t->generation++;
    pthread_cond_broadcast(&t->go);
    pthread_mutex_unlock(&t->lock);
    size_t begin, end;
    part_of(t, 0, &begin, &end);
    if (end > begin) memcpy((char *)dst + begin, (const char *)src + begin, end - begin);
    pthread_mutex_lock(&t->lock);
    while (t->pending) pthread_cond_wait(&t->done, &t->lock);
    pthread_mutex_unlock(&t->lock);
}

/* ---- where a host buffer lives ---- */

typedef enum host_kind { HOST_PAGEABLE, HOST_PINNED } host_kind;

/* One address: pinned host, pageable (unknown to CUDA, or managed, which
 * the host reads like pageable memory), or a device address (an error).
 * cuPointerGetAttributes, unlike the singular call, answers memory type 0
 * for an address CUDA does not know instead of failing, so pageable input
 * is not a driver error (which tools such as compute-sanitizer report). */
static ptxkit_status address_kind(ptxkit_context *ctx, const void *p, const char *what, const char *name,
                                  host_kind *out) {
    unsigned type = 0, managed = 0;
    CUpointer_attribute attrs[2] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_IS_MANAGED};
    void *data[2] = {&type, &managed};
    CUresult e = ctx->cu->cuPointerGetAttributes(2, attrs, data, (CUdeviceptr)(uintptr_t)p);
    if (e != CUDA_SUCCESS) return record_cuda_error(ctx, e, "cuPointerGetAttributes");
    if (type == CU_MEMORYTYPE_HOST) {
        *out = HOST_PINNED;
        return PTXKIT_SUCCESS;
    }
    if (type == 0 || managed) {
        *out = HOST_PAGEABLE;
        return PTXKIT_SUCCESS;
    }
    return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT,
                        "%s: %s (%p) is device memory; the host-array calls take host pointers (use the device "
                        "ops for device arrays)",
                        what, name, p);
}

/* A whole range: pinned only when its first and last bytes are. */
static ptxkit_status range_kind(ptxkit_context *ctx, const void *p, size_t bytes, const char *what, const char *name,
                                host_kind *out) {
    host_kind first, last;
    ptxkit_status st = address_kind(ctx, p, what, name, &first);
    if (st == PTXKIT_SUCCESS) st = address_kind(ctx, (const char *)p + bytes - 1, what, name, &last);
    if (st == PTXKIT_SUCCESS) *out = first == HOST_PINNED && last == HOST_PINNED ? HOST_PINNED : HOST_PAGEABLE;
    return st;
}

/* ---- choosing how pageable data travel ----
 *
 * Registering pins every page and unregistering unpins it again, each at a
 * fraction of the bus's rate, before and after a copy at the pinned rate;
 * staging copies each chunk once more on the host, in parallel with the bus.
 * The rates below (bytes per second, a current x86 host with an H100/H200)
 * make the choice; staging wins wherever a few threads can copy, which is
 * why registration is the fallback for hosts with few processors. Below
 * one chunk there is no pipeline: one memcpy by the calling thread. */
#define HOST_PIN_RATE 20e9
#define HOST_UNPIN_RATE 56e9
#define HOST_BUS_RATE 55e9
#define HOST_MEMCPY_RATE_PER_THREAD 8e9

static int default_threads(void) {
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    if (cpus < 1) cpus = 1;
    return cpus < 8 ? (int)cpus : 8;
}

static bool register_cheaper(size_t bytes, size_t chunk_bytes, int threads) {
    if (bytes <= chunk_bytes) return false;
    double b = (double)bytes;
    double staged = b / HOST_BUS_RATE > b / (threads * HOST_MEMCPY_RATE_PER_THREAD)
                        ? b / HOST_BUS_RATE
                        : b / (threads * HOST_MEMCPY_RATE_PER_THREAD);
    double registered = b / HOST_PIN_RATE + b / HOST_UNPIN_RATE + b / HOST_BUS_RATE;
    return registered < staged;
}

/* ---- one call ---- */

typedef enum host_op { OP_REDUCE, OP_SCAN, OP_TRANSFORM } host_op;

typedef struct host_call {
    const char *what;
    host_op kind;
    ptxkit_reduce_op op;
    ptxkit_dtype type;
    ptxkit_scan_kind scan_kind;
    ptxkit_kernel *kernel;
    void *out;              /* scan, transform: host array; reduce: the result */
    const void *in;
    size_t n, size, bytes;
    /* resolved options */
    ptxkit_host_path path;
    size_t chunk_bytes;
    int streams, threads;
    bool default_streams;
} host_call;

static ptxkit_status check_options(ptxkit_context *ctx, host_call *c, const ptxkit_host_options *o) {
    ptxkit_host_options zero = {0};
    if (!o) o = &zero;
    if ((unsigned)o->path >= PTXKIT_HOST_PATH_COUNT)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "%s: options->path %d out of range", c->what,
                            (int)o->path);
    if (!RESERVED_ZERO(o))
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "%s: options->reserved must be zero", c->what);
    if (o->chunk_bytes && (o->chunk_bytes < ((size_t)64 << 10) || o->chunk_bytes > ((size_t)1 << 30)))
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT,
                            "%s: options->chunk_bytes %zu is outside 64 KiB .. 1 GiB", c->what, o->chunk_bytes);
    if (o->streams < 0 || o->streams > PTXKIT_HOST_MAX_STREAMS)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "%s: options->streams %d is outside 0..%d", c->what,
                            o->streams, PTXKIT_HOST_MAX_STREAMS);
    if (o->threads < 0 || o->threads > PTXKIT_HOST_MAX_THREADS)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "%s: options->threads %d is outside 0..%d", c->what,
                            o->threads, PTXKIT_HOST_MAX_THREADS);
    c->path = o->path;
    c->chunk_bytes = o->chunk_bytes ? o->chunk_bytes : PTXKIT_HOST_CHUNK_BYTES;
    c->chunk_bytes -= c->chunk_bytes % 256; /* whole elements, device buffers' alignment */
    c->streams = o->streams ? o->streams : PTXKIT_HOST_STREAMS;
    c->default_streams = o->streams == 0;
    c->threads = o->threads ? o->threads : default_threads();
    return PTXKIT_SUCCESS;
}

/* The arguments every call shares; reduce passes its result as out, with
 * out_bytes the element size (never checked for overlap: it is written
 * only at the end). */
static ptxkit_status check_arrays(ptxkit_context *ctx, host_call *c, bool out_is_array) {
    if ((unsigned)c->type >= PTXKIT_DTYPE_COUNT)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "%s: type %d out of range", c->what, (int)c->type);
    c->size = ptxkit_dtype_size(c->type);
    if (!mul_size(c->n, c->size, &c->bytes))
        return record_error(ctx, PTXKIT_ERROR_OVERFLOW, "%s: %zu elements of %zu bytes overflow size_t", c->what, c->n,
                            c->size);
    if (!c->out && (c->n || !out_is_array))
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "%s: %s is NULL", c->what,
                            out_is_array ? "out" : "result");
    if (!c->in && c->n)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "%s: in is NULL with n = %zu", c->what, c->n);
    if (!c->n) return PTXKIT_SUCCESS;
    uintptr_t in = (uintptr_t)c->in, out = (uintptr_t)c->out, end;
    if (__builtin_add_overflow(in, c->bytes, &end) ||
        (out_is_array && __builtin_add_overflow(out, c->bytes, &end)))
        return record_error(ctx, PTXKIT_ERROR_OVERFLOW, "%s: %zu bytes from %s run past the end of the address space",
                            c->what, c->bytes, out > in ? "out" : "in");
    if (out_is_array && in < out + c->bytes && out < in + c->bytes)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT,
                            "%s: out [%p, +%zu) overlaps in [%p, +%zu) (the input is never written: give another "
                            "output array)",
                            c->what, c->out, c->bytes, c->in, c->bytes);
    return PTXKIT_SUCCESS;
}

/* How each array travels in this call. */
typedef struct plan {
    bool mapped;
    bool in_staged, out_staged;   /* through the ring's pinned buffers */
    bool in_registered, out_registered;
    ptxkit_dptr in_dev, out_dev;  /* mapped: device addresses of the host arrays */
    copy_team *team;
} plan;

static void plan_release(ptxkit_context *ctx, host_call *c, plan *p) {
    if (p->in_registered) ctx->cu->cuMemHostUnregister((void *)c->in);
    if (p->out_registered) ctx->cu->cuMemHostUnregister(c->out);
    p->in_registered = p->out_registered = false;
}

/* Registers a pageable array for this call; false (nothing recorded) where
 * the driver refuses, e.g. a page of it registered already. */
static bool try_register(ptxkit_context *ctx, const void *p, size_t bytes, bool mapped) {
    if (!ctx->cu->cuMemHostRegister) return false;
    CUresult e = ctx->cu->cuMemHostRegister((void *)p, bytes, mapped ? CU_MEMHOSTREGISTER_DEVICEMAP : 0);
    return e == CUDA_SUCCESS;
}

static ptxkit_status mapped_address(ptxkit_context *ctx, host_call *c, const void *p, const char *name,
                                    ptxkit_dptr *out) {
    NEED_DRIVER_ENTRY(ctx, cuMemHostGetDevicePointer, c->what);
    CUdeviceptr d = 0;
    CUresult e = ctx->cu->cuMemHostGetDevicePointer(&d, (void *)p, 0);
    if (e == CUDA_ERROR_INVALID_VALUE)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT,
                            "%s: %s (%p) is pinned but not mapped for the device (PTXKIT_HOST_MAPPED)", c->what, name,
                            p);
    if (e != CUDA_SUCCESS) return record_cuda_error(ctx, e, "cuMemHostGetDevicePointer");
    *out = d;
    return PTXKIT_SUCCESS;
}

static ptxkit_status plan_make(ptxkit_context *ctx, host_call *c, plan *p) {
    memset(p, 0, sizeof *p);
    bool out_is_array = c->kind != OP_REDUCE;
    host_kind in_kind, out_kind = HOST_PINNED;
    ptxkit_status st = range_kind(ctx, c->in, c->bytes, c->what, "in", &in_kind);
    if (st == PTXKIT_SUCCESS && out_is_array) st = range_kind(ctx, c->out, c->bytes, c->what, "out", &out_kind);
    if (st == PTXKIT_SUCCESS && !out_is_array) {
        host_kind k;
        st = address_kind(ctx, c->out, c->what, "result", &k); /* only to refuse a device address */
    }
    if (st != PTXKIT_SUCCESS) return st;
    if (c->path == PTXKIT_HOST_PATH_MAPPED) {
        p->mapped = true;
        if ((uintptr_t)c->in % c->size || (out_is_array && (uintptr_t)c->out % c->size))
            return record_error(ctx, PTXKIT_ERROR_MISALIGNED,
                                "%s: %s (%p) is not %zu-byte aligned, as the mapped path's kernels need", c->what,
                                (uintptr_t)c->in % c->size ? "in" : "out",
                                (uintptr_t)c->in % c->size ? c->in : (const void *)c->out, c->size);
        if (in_kind == HOST_PAGEABLE) {
            if (!try_register(ctx, c->in, c->bytes, true))
                return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT,
                                    "%s: in could not be registered for mapping (part of it is registered already?)",
                                    c->what);
            p->in_registered = true;
        }
        if (out_is_array && out_kind == HOST_PAGEABLE) {
            if (!try_register(ctx, c->out, c->bytes, true)) {
                plan_release(ctx, c, p);
                return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT,
                                    "%s: out could not be registered for mapping (part of it is registered already?)",
                                    c->what);
            }
            p->out_registered = true;
        }
        st = mapped_address(ctx, c, c->in, "in", &p->in_dev);
        if (st == PTXKIT_SUCCESS && out_is_array) st = mapped_address(ctx, c, c->out, "out", &p->out_dev);
        if (st != PTXKIT_SUCCESS) plan_release(ctx, c, p);
        return st;
    }
    bool any_pageable = in_kind == HOST_PAGEABLE || out_kind == HOST_PAGEABLE;
    bool reg = c->path == PTXKIT_HOST_PATH_REGISTERED ||
               (c->path == PTXKIT_HOST_PATH_AUTO && any_pageable &&
                register_cheaper(c->bytes * (out_is_array ? 2 : 1), c->chunk_bytes, c->threads));
    if (in_kind == HOST_PAGEABLE) {
        p->in_registered = reg && try_register(ctx, c->in, c->bytes, false);
        p->in_staged = !p->in_registered;
    }
    if (out_kind == HOST_PAGEABLE) {
        p->out_registered = reg && try_register(ctx, c->out, c->bytes, false);
        p->out_staged = !p->out_registered;
    }
    return PTXKIT_SUCCESS;
}

/* ---- the pipeline ---- */

static size_t chunk_count(const host_call *c) {
    return c->bytes / c->chunk_bytes + (c->bytes % c->chunk_bytes != 0);
}

/* The host's part of chunk j once its slot finished: a staged output is
 * copied to the caller's array. */
static ptxkit_status chunk_finish(ptxkit_context *ctx, host_ring *r, host_call *c, plan *p, size_t j) {
    ring_slot *s = &r->slot[j % (size_t)c->streams];
    CUresult e = ctx->cu->cuEventSynchronize(s->done);
    if (e != CUDA_SUCCESS) return record_cuda_error(ctx, e, "host arrays: cuEventSynchronize");
    if (p->out_staged) {
        size_t off = j * c->chunk_bytes, len = c->bytes - off < c->chunk_bytes ? c->bytes - off : c->chunk_bytes;
        team_copy(p->team, (char *)c->out + off, s->h_out, len);
    }
    return PTXKIT_SUCCESS;
}

static ptxkit_status launch_transform(ptxkit_context *ctx, host_call *c, ptxkit_dptr out, ptxkit_dptr in,
                                      unsigned long long n, ptxkit_stream *stream) {
    unsigned long long blocks = (n + 255) / 256, cap = (unsigned long long)ctx->info.sm_count * 32;
    if (cap == 0) cap = 1024;
    if (blocks > cap) blocks = cap;
    void *args[] = {&out, &in, &n};
    return ptxkit_kernel_launch(c->kernel, (ptxkit_dim3){(unsigned)blocks, 1, 1}, (ptxkit_dim3){256, 1, 1}, 0, stream, args);
}

/* Queues chunk i on its slot: input to the device, the op, output back. */
static ptxkit_status chunk_issue(ptxkit_context *ctx, host_ring *r, host_call *c, plan *p, size_t i,
                                 ptxkit_kernel *carry) {
    const cuda_driver *cu = ctx->cu;
    ring_slot *s = &r->slot[i % (size_t)c->streams];
    CUstream h = s->stream->handle;
    size_t off = i * c->chunk_bytes, len = c->bytes - off < c->chunk_bytes ? c->bytes - off : c->chunk_bytes;
    size_t cnt = len / c->size;
    const char *src = (const char *)c->in + off;
    if (p->in_staged) {
        team_copy(p->team, s->h_in, src, len);
        src = s->h_in;
    }
    /* the upload waits for the slot's previous chunk to be done with its
     * buffers (an event of an earlier call has completed: no wait) */
    CUresult e = cu->cuStreamWaitEvent(r->up, s->done, 0);
    if (e == CUDA_SUCCESS) e = cu->cuMemcpyHtoDAsync(s->d_in, src, len, r->up);
    if (e == CUDA_SUCCESS) e = cu->cuEventRecord(s->loaded, r->up);
    if (e == CUDA_SUCCESS) e = cu->cuStreamWaitEvent(h, s->loaded, 0);
    if (e != CUDA_SUCCESS) return record_cuda_error(ctx, e, "host arrays: upload");
    ptxkit_status st = PTXKIT_SUCCESS;
    ptxkit_dptr result = s->d_in;
    switch (c->kind) {
    case OP_REDUCE:
        st = ptxkit_reduce(ctx, c->op, c->type, r->small + i * c->size, s->d_in, cnt, NULL, s->stream);
        break;
    case OP_SCAN: {
        st = ptxkit_scan(ctx, c->scan_kind, c->op, c->type, s->d_out, s->d_in, cnt, NULL, s->stream);
        if (st != PTXKIT_SUCCESS) break;
        if (i > 0) {
            ring_slot *prev = &r->slot[(i - 1) % (size_t)c->streams];
            if ((e = cu->cuStreamWaitEvent(h, prev->carried, 0)) != CUDA_SUCCESS)
                return record_cuda_error(ctx, e, "host arrays: cuStreamWaitEvent");
        }
        ptxkit_dptr out = s->d_out, carries = r->small, last_in = s->d_in + (cnt - 1) * c->size;
        unsigned long long n = cnt, index = i;
        int exclusive = c->scan_kind == PTXKIT_SCAN_EXCLUSIVE;
        void *args[] = {&out, &n, &carries, &index, &last_in, &exclusive};
        unsigned long long blocks = (n + 1023) / 1024, cap = (unsigned long long)ctx->info.sm_count * 8;
        if (cap == 0) cap = 512;
        if (blocks > cap) blocks = cap;
        st = ptxkit_kernel_launch(carry, (ptxkit_dim3){(unsigned)blocks, 1, 1}, (ptxkit_dim3){256, 1, 1}, 0, s->stream, args);
        if (st == PTXKIT_SUCCESS && (e = cu->cuEventRecord(s->carried, h)) != CUDA_SUCCESS)
            return record_cuda_error(ctx, e, "host arrays: cuEventRecord");
        result = s->d_out;
        break;
    }
    case OP_TRANSFORM:
        if (c->kernel) {
            st = launch_transform(ctx, c, s->d_out, s->d_in, cnt, s->stream);
            result = s->d_out;
        }
        break;
    }
    if (st != PTXKIT_SUCCESS) return st;
    if (c->kind == OP_REDUCE) {
        e = cu->cuEventRecord(s->done, h);
    } else {
        void *dst = p->out_staged ? s->h_out : (char *)c->out + off;
        e = cu->cuEventRecord(s->computed, h);
        if (e == CUDA_SUCCESS) e = cu->cuStreamWaitEvent(r->down, s->computed, 0);
        if (e == CUDA_SUCCESS) e = cu->cuMemcpyDtoHAsync(dst, result, len, r->down);
        if (e == CUDA_SUCCESS) e = cu->cuEventRecord(s->done, r->down);
    }
    return e == CUDA_SUCCESS ? PTXKIT_SUCCESS : record_cuda_error(ctx, e, "host arrays: download");
}

/* Reduce's last step on slot 0's stream, after every slot's work: the
 * partials (or, mapped, the whole array) into one element read back. */
static ptxkit_status reduce_finish(ptxkit_context *ctx, host_ring *r, host_call *c, ptxkit_dptr in, size_t n) {
    const cuda_driver *cu = ctx->cu;
    ring_slot *s0 = &r->slot[0];
    CUresult e;
    for (int i = 1; i < c->streams; i++)
        if ((e = cu->cuStreamWaitEvent(s0->stream->handle, r->slot[i].done, 0)) != CUDA_SUCCESS)
            return record_cuda_error(ctx, e, "host arrays: cuStreamWaitEvent");
    /* the result sits after the partials (at most one per chunk) */
    ptxkit_dptr result = r->small + (r->small_bytes - 8);
    ptxkit_status st = ptxkit_reduce(ctx, c->op, c->type, result, in, n, NULL, s0->stream);
    if (st != PTXKIT_SUCCESS) return st;
    if ((e = cu->cuMemcpyDtoHAsync(r->h_small, result, c->size, s0->stream->handle)) != CUDA_SUCCESS)
        return record_cuda_error(ctx, e, "host arrays: cuMemcpyDtoHAsync");
    if ((e = cu->cuStreamSynchronize(s0->stream->handle)) != CUDA_SUCCESS)
        return record_cuda_error(ctx, e, "host arrays: cuStreamSynchronize");
    memcpy(c->out, r->h_small, c->size);
    return PTXKIT_SUCCESS;
}

static ptxkit_status run_mapped(ptxkit_context *ctx, host_ring *r, host_call *c, plan *p) {
    ptxkit_stream *s = r->slot[0].stream;
    ptxkit_status st = PTXKIT_SUCCESS;
    switch (c->kind) {
    case OP_REDUCE: return reduce_finish(ctx, r, c, p->in_dev, c->n);
    case OP_SCAN: st = ptxkit_scan(ctx, c->scan_kind, c->op, c->type, p->out_dev, p->in_dev, c->n, NULL, s); break;
    case OP_TRANSFORM:
        st = c->kernel ? launch_transform(ctx, c, p->out_dev, p->in_dev, c->n, s)
                       : ptxkit_copy(ctx, p->out_dev, p->in_dev, c->bytes, NULL, s);
        break;
    }
    if (st != PTXKIT_SUCCESS) return st;
    CUresult e = ctx->cu->cuStreamSynchronize(s->handle);
    return e == CUDA_SUCCESS ? PTXKIT_SUCCESS : record_cuda_error(ctx, e, "host arrays: cuStreamSynchronize");
}

static ptxkit_status run_pipeline(ptxkit_context *ctx, host_ring *r, host_call *c, plan *p) {
    size_t chunks = chunk_count(c), k = (size_t)c->streams;
    ptxkit_kernel *carry = NULL;
    ptxkit_status st = PTXKIT_SUCCESS;
    if (c->kind == OP_SCAN) {
        if ((st = carry_kernel(ctx, r, c->op, c->type, &carry)) != PTXKIT_SUCCESS) return st;
        /* carries[0]: the identity, as a reduce of nothing writes it */
        if ((st = ptxkit_reduce(ctx, c->op, c->type, r->small, r->small, 0, NULL, r->slot[0].stream)) != PTXKIT_SUCCESS)
            return st;
    }
    /* The host waits for a slot only where it reuses a pinned staging
     * buffer; otherwise the streams' order covers the device buffers. */
    bool host_waits = p->in_staged || p->out_staged;
    for (size_t i = 0; i < chunks && st == PTXKIT_SUCCESS; i++) {
        if (host_waits && i >= k) st = chunk_finish(ctx, r, c, p, i - k);
        if (st == PTXKIT_SUCCESS) st = chunk_issue(ctx, r, c, p, i, carry);
    }
    for (size_t j = chunks > k ? chunks - k : 0; j < chunks && st == PTXKIT_SUCCESS; j++)
        if (host_waits || c->kind != OP_REDUCE) st = chunk_finish(ctx, r, c, p, j);
    if (st == PTXKIT_SUCCESS && c->kind == OP_REDUCE) st = reduce_finish(ctx, r, c, r->small, chunks);
    return st;
}

static ptxkit_status host_run(ptxkit_context *ctx, host_call *c, const ptxkit_host_options *options) {
    ptxkit_status st = check_options(ctx, c, options);
    if (st == PTXKIT_SUCCESS) st = check_arrays(ctx, c, c->kind != OP_REDUCE);
    if (st != PTXKIT_SUCCESS) return st;
    if (c->kind != OP_TRANSFORM && (c->kind == OP_SCAN ? ptxkit_scan_supported(ctx, c->scan_kind, c->op, c->type)
                                                       : ptxkit_reduce_supported(ctx, c->op, c->type)) != PTXKIT_SUCCESS)
        return record_error(ctx, PTXKIT_ERROR_UNSUPPORTED, "%s: %s of %s is not provided", c->what,
                            ptxkit_reduce_op_name(c->op) ? ptxkit_reduce_op_name(c->op) : "?",
                            ptxkit_dtype_name(c->type));
    if (c->kind != OP_REDUCE && c->n == 0) return PTXKIT_SUCCESS;
    NEED_DRIVER_ENTRY(ctx, cuPointerGetAttributes, c->what);
    if ((st = capture_thread_refuse(ctx, c->what)) != PTXKIT_SUCCESS) return st;
    if ((st = context_enter(ctx)) != PTXKIT_SUCCESS) return st;
    host_ring *r = context_state(ctx, &ring_ops);
    if (!r) {
        context_leave(ctx);
        return record_error(ctx, PTXKIT_ERROR_OUT_OF_MEMORY, "%s: no memory for the staging ring's state", c->what);
    }
    pthread_mutex_lock(&r->lock);
    plan p;
    st = c->n ? plan_make(ctx, c, &p) : (memset(&p, 0, sizeof p), PTXKIT_SUCCESS);
    size_t chunks = p.mapped ? 0 : chunk_count(c);
    if (c->default_streams && c->kind == OP_REDUCE && !p.in_staged) c->streams = PTXKIT_HOST_REDUCE_STREAMS;
    if (st == PTXKIT_SUCCESS) {
        /* buffers no larger than the array: small calls keep the ring small */
        size_t chunk = c->bytes < c->chunk_bytes ? (c->bytes + 255) / 256 * 256 : c->chunk_bytes;
        if (chunk == 0) chunk = 256;
        c->streams = chunks < (size_t)c->streams ? (chunks ? (int)chunks : 1) : c->streams;
        st = ring_reserve(ctx, r, c->streams, chunk, p.in_staged, p.out_staged, c->kind != OP_REDUCE, chunks + 2);
    }
    copy_team team;
    team_arg args[PTXKIT_HOST_MAX_THREADS];
    bool team_on = false;
    if (st == PTXKIT_SUCCESS && (p.in_staged || p.out_staged) && c->threads > 1 && c->bytes > c->chunk_bytes) {
        team_start(&team, args, c->threads);
        team_on = true;
        p.team = &team;
    }
    if (st == PTXKIT_SUCCESS) st = p.mapped ? run_mapped(ctx, r, c, &p) : run_pipeline(ctx, r, c, &p);
    /* nothing may touch the caller's memory after the return, error or not */
    if (st != PTXKIT_SUCCESS) ring_drain(ctx, r);
    if (team_on) team_stop(&team);
    plan_release(ctx, c, &p);
    pthread_mutex_unlock(&r->lock);
    context_leave(ctx);
    return st;
}

/* ---- the public calls ---- */

const char *ptxkit_host_path_name(ptxkit_host_path path) {
    static const char *const names[PTXKIT_HOST_PATH_COUNT] = {"auto", "staged", "registered", "mapped"};
    return (unsigned)path < PTXKIT_HOST_PATH_COUNT ? names[path] : NULL;
}

ptxkit_status ptxkit_host_reduce(ptxkit_context *ctx, ptxkit_reduce_op op, ptxkit_dtype type, void *result,
                                 const void *in, size_t n, const ptxkit_host_options *options) {
    if (!ctx) return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_host_reduce: context is NULL");
    if ((unsigned)op >= PTXKIT_REDUCE_OP_COUNT)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_host_reduce: operator %d out of range", (int)op);
    host_call c = {.what = "ptxkit_host_reduce", .kind = OP_REDUCE, .op = op, .type = type, .out = result, .in = in,
                   .n = n};
    return host_run(ctx, &c, options);
}

ptxkit_status ptxkit_host_scan(ptxkit_context *ctx, ptxkit_scan_kind kind, ptxkit_reduce_op op, ptxkit_dtype type,
                               void *out, const void *in, size_t n, const ptxkit_host_options *options) {
    if (!ctx) return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_host_scan: context is NULL");
    if ((unsigned)kind >= PTXKIT_SCAN_KIND_COUNT)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_host_scan: kind %d out of range", (int)kind);
    if ((unsigned)op >= PTXKIT_REDUCE_OP_COUNT)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_host_scan: operator %d out of range", (int)op);
    host_call c = {.what = "ptxkit_host_scan", .kind = OP_SCAN, .op = op, .type = type, .scan_kind = kind,
                   .out = out, .in = in, .n = n};
    return host_run(ctx, &c, options);
}

ptxkit_status ptxkit_host_transform(ptxkit_context *ctx, ptxkit_kernel *kernel, ptxkit_dtype type, void *out,
                                    const void *in, size_t n, const ptxkit_host_options *options) {
    if (!ctx) return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_host_transform: context is NULL");
    if (kernel && kernel->ctx != ctx)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT,
                            "ptxkit_host_transform: the kernel belongs to another context");
    host_call c = {.what = "ptxkit_host_transform", .kind = OP_TRANSFORM, .type = type, .kernel = kernel, .out = out,
                   .in = in, .n = n};
    return host_run(ctx, &c, options);
}
