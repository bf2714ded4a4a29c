/* ptxkit: run hand-written GPU kernels from plain C.
 *
 * The public interface is three headers: this one (the core: errors,
 * versions, the kernel cache, contexts, memory, streams, events, programs,
 * modules, kernels, launches, L2), ptxkit_ops.h (the operations: copy,
 * reduction, scan, transpose, GEMM, several GPUs) and ptxkit_tune.h (the
 * tuner, tunables, the tuning database and record). Each ends with an
 * experimental tier, compiled only where PTXKIT_EXPERIMENTAL is defined
 * before the include: benchmark switches and interfaces still moving, with
 * no stability promised, not even across patch releases (zstd's
 * ZSTD_STATIC_LINKING_ONLY model). The rest is stable within a 0.x minor
 * release (README, "Versions and ABI").
 *
 * Names. One grammar, without exception (tests/check_api.py checks what a
 * script can):
 *  - ptxkit_<object>_<verb>: ptxkit_stream_create, ptxkit_memory_write,
 *    ptxkit_module_variable_read_async. A property of an object is
 *    <object>_<property>_get / _set (ptxkit_kernel_max_dynamic_shared_set).
 *    An operation is named by what it does alone: ptxkit_copy,
 *    ptxkit_reduce, ptxkit_scan, ptxkit_transpose, ptxkit_gemm, ptxkit_tune.
 *  - _get only reads: it returns a value or fills out-parameters, and every
 *    plain getter ends in _get. A kernel is taken out of a program or of a
 *    module alike: ptxkit_program_kernel_get (compiling on the first call,
 *    a cached lookup after) and ptxkit_module_kernel_get.
 *  - _async queues work on the stream it is given and returns before the
 *    work has run; the twin without it waits (ptxkit_memory_write and
 *    ptxkit_memory_write_async).
 *  - _create makes an object, _destroy releases it: every _destroy takes
 *    the object alone (objects carry their context), returns void and
 *    accepts NULL.
 *  - Operations share one shape: selectors (operator, type, kind) first,
 *    then outputs before inputs, sizes after the pointers, then the
 *    configuration and the stream; ptxkit_gemm keeps BLAS's order. Their
 *    companions are named and shaped alike (ptxkit_ops.h, at copy): every
 *    op has <op>_supported (may this GPU run these selectors: the context,
 *    NULL for any GPU, then the op's selectors) and <op>_config_get (what
 *    it would run); the ops that own per-stream scratch or compile per
 *    configuration have <op>_prepare (their kernels and scratch ahead of a
 *    capture or a timed loop).
 *
 * Every function that can fail returns a
 * ptxkit_status; details of the last failure are read with
 * ptxkit_last_error(). The others cannot fail and return their answer
 * directly (an invalid argument gets the neutral value documented at each:
 * NULL, 0, "" or "unknown"): names and sizes (ptxkit_status_string,
 * ptxkit_status_is_error,
 * ptxkit_*_name, ptxkit_dtype_size, ptxkit_load_op_define,
 * ptxkit_tune_family_name_get, ptxkit_config_defines_get), handles
 * (ptxkit_stream_handle_get, ptxkit_kernel_handle_get), messages (ptxkit_last_error,
 * ptxkit_last_error_copy, ptxkit_kernel_jit_log_get), ptxkit_versions_get,
 * ptxkit_jit_available, ptxkit_program_compiled_free and every _destroy.
 * Device memory is addressed
 * with ptxkit_dptr (a CUdeviceptr), so views at any byte offset are plain
 * integer arithmetic. A NULL stream means the context's default stream.
 *
 * Threads. Calls on different contexts may run concurrently from any
 * threads; what the contexts share (the driver and NVRTC, opened once; the
 * kernel cache on disk, written by rename; the tuning database file, merged
 * under a file lock and replaced by rename) is synchronized inside. Each
 * context keeps its own copy of the tuning database under its own lock; one
 * tuning run at a time per process (PTXKIT_TUNE=auto) tunes, since runs
 * sharing a GPU would distort each other's timings. On one context, any calls may
 * run concurrently from different threads, except that:
 *  - ptxkit_context_destroy runs alone: no other call on the context may be in
 *    flight or follow it;
 *  - an object (stream, event, kernel's dynamic shared limit, compiled
 *    program, configuration, device buffer) must not be destroyed or changed
 *    while another thread uses it: ptxkit_stream_destroy, ptxkit_memory_free,
 *    ptxkit_kernel_max_dynamic_shared_set and the like need the caller to
 *    order them after that object's other uses.
 * Kernel lookups and compiles are concurrent (two threads asking for the same
 * kernel get the same one; different kernels compile in parallel); memory,
 * launch and synchronization calls are driver calls, which CUDA allows from
 * any thread. Work queued on one stream from several threads runs in the
 * order the calls reached the driver: give each thread its own stream when
 * the order matters. The last-error message is the calling thread's own
 * (see ptxkit_last_error): other threads' failures, on the same context or
 * not, never change it.
 */
#ifndef PTXKIT_H
#define PTXKIT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The library is built with hidden visibility; this header's functions are
 * its exported interface. */
#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

#define PTXKIT_VERSION_MAJOR 0
#define PTXKIT_VERSION_MINOR 3
#define PTXKIT_VERSION_PATCH 0
#define PTXKIT_VERSION_STRING "0.3.0"

typedef enum ptxkit_status {
    PTXKIT_SUCCESS = 0,
    PTXKIT_ERROR_INVALID_ARGUMENT,  /* NULL, bad enum, bad block size ... */
    PTXKIT_ERROR_OVERFLOW,          /* a byte count does not fit in size_t */
    PTXKIT_ERROR_MISALIGNED,        /* a pointer the operation cannot use */
    PTXKIT_ERROR_NO_DRIVER,         /* libcuda.so.1 missing or unusable */
    PTXKIT_ERROR_STUB_DRIVER,       /* the toolkit's link stub was loaded */
    PTXKIT_ERROR_NO_DEVICE,         /* no such GPU */
    PTXKIT_ERROR_NO_NVRTC,          /* the JIT path is unavailable */
    PTXKIT_ERROR_COMPILE,           /* NVRTC rejected a kernel: log in message */
    PTXKIT_ERROR_PTX_LOAD,          /* the driver refused PTX or CUBIN */
    PTXKIT_ERROR_PTX_VERSION,       /* PTX ISA newer than the driver accepts */
    PTXKIT_ERROR_JIT_NOT_FOUND,     /* the driver's PTX JIT is not installed */
    PTXKIT_ERROR_OUT_OF_MEMORY,
    PTXKIT_ERROR_UNSUPPORTED,       /* not available on this GPU or build */
    PTXKIT_ERROR_LAUNCH,            /* the kernel could not be launched */
    PTXKIT_ERROR_DRIVER,            /* any other driver error: name in message */
    PTXKIT_ERROR_IO,                /* cache or database file system error */
    PTXKIT_ERROR_NOT_FOUND,         /* unknown kernel family or entry point */
    PTXKIT_ERROR_CORRUPT,           /* a file failed its checksum or format */
    PTXKIT_ERROR_CONTEXT_LOST,      /* a kernel fault left the context unusable (sticky) */
    PTXKIT_ERROR_DEVICE_ASSERT,     /* a kernel's assert() failed: sticky too, as CONTEXT_LOST.
                                     * No kernel fault leaves the context usable on current
                                     * drivers: after either, the process must restart to use
                                     * the GPU again. */
    PTXKIT_NOT_READY,               /* not an error: the work asked about has not finished yet
                                     * (ptxkit_stream_query, ptxkit_event_query) */
    PTXKIT_ERROR_CAPTURE,           /* not allowed while a stream is captured into a graph (the
                                     * call did nothing; the capture is intact), or a capture
                                     * the driver invalidated */
    PTXKIT_STATUS_COUNT
} ptxkit_status;

/* Short constant description of a status ("invalid argument"). */
const char *ptxkit_status_string(ptxkit_status status);
/* 0 for PTXKIT_SUCCESS and PTXKIT_NOT_READY (answers, not failures), 1 for
 * every other status, unknown values included. */
int ptxkit_status_is_error(ptxkit_status status);

typedef uint64_t ptxkit_dptr;
typedef struct ptxkit_context ptxkit_context;
typedef struct ptxkit_stream ptxkit_stream;
typedef struct ptxkit_event ptxkit_event;

/* ---- errors ------------------------------------------------------------ */

/* The one error channel. Every call that fails (returns a status for which
 * ptxkit_status_is_error is 1), with a context or without, leaves the
 * calling thread a message naming the function and the reason (driver error
 * name, NVRTC or driver JIT log, which argument was wrong; cut to 16 KiB).
 * The message is thread-local: exact for the calling thread, whatever other
 * threads do on the same context or on others. Successful calls (and
 * PTXKIT_NOT_READY) do not clear it: it describes this thread's last
 * failure, however many calls succeeded since, so read it right after the
 * status says a call failed. Never NULL; "" when this thread has had no
 * failure. The pointer is the thread's own buffer, valid until its next
 * ptxkit call (which may replace the text). */
const char *ptxkit_last_error(void);
/* The same message copied into buf (NUL-terminated, truncated to size;
 * nothing written when buf is NULL or size is 0). Returns the message's full
 * length, as snprintf does, so a return >= size means it was truncated. */
size_t ptxkit_last_error_copy(char *buf, size_t size);
/* Sets the calling thread's message (printf format; the arguments may
 * point into ptxkit_last_error()'s text, to add to it) and returns status,
 * for libraries and programs layered on ptxkit (the lab) whose own failures
 * should read like ptxkit's: `return ptxkit_last_error_set(
 * PTXKIT_ERROR_INVALID_ARGUMENT, "mylib_run: n %zu too large", n);`.
 * fmt NULL clears the message. Never fails; any thread. */
ptxkit_status ptxkit_last_error_set(ptxkit_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* ---- versions and environment ------------------------------------------ */

typedef struct ptxkit_versions {
    int library;          /* major*10000 + minor*100 + patch */
    int driver;           /* cuDriverGetVersion, e.g. 13000; 0 if no driver */
    int nvrtc_major;      /* 0 if NVRTC is unavailable */
    int nvrtc_minor;
    int reserved[4];      /* zero today: later 0.x releases fill new fields here */
} ptxkit_versions;

/* Loads nothing it has not loaded already; never fails: missing pieces read 0. */
void ptxkit_versions_get(ptxkit_versions *out);

/* Whether NVRTC could be opened (the JIT path). When 0, the thread's
 * ptxkit_last_error() says what was looked for and why it failed. */
int ptxkit_jit_available(void);


/* Removes every cached kernel (the kernel cache on disk: its directory and
 * size are read with the experimental tier's ptxkit_cache_dir_get and
 * ptxkit_cache_stats_get). */
ptxkit_status ptxkit_cache_purge(void);

/* ---- context and device ------------------------------------------------ */

typedef struct ptxkit_device_info {
    char name[256];
    int ordinal;
    int cc_major, cc_minor;
    int sm_count;
    int l2_bytes;
    int persisting_l2_max_bytes;
    int shared_per_block;          /* default limit, bytes */
    int shared_per_block_optin;    /* with the dynamic limit raised */
    int shared_per_sm;
    int max_threads_per_block;
    int max_threads_per_sm;
    int max_blocks_per_sm;
    int regs_per_block;
    int regs_per_sm;
    int warp_size;
    int memory_bus_bits;
    int memory_clock_khz;
    double peak_bandwidth_gbs;     /* 2 x clock x bus width (datasheet) */
    size_t total_memory;
    int access_window_max_bytes;   /* largest L2 access policy window (0: none) */
    int sm_clock_khz;              /* peak SM clock: turns clock64() cycles into time */
    int reserved[6];      /* zero today: later 0.x releases fill new fields here */
} ptxkit_device_info;

/* Opens device `ordinal` on its primary context, which an application using
 * the CUDA runtime on the same device shares. While the driver opens it, a
 * short-lived thread of the call reads the kernel cache's NVRTC identity
 * record (a warm process's first kernel needs it); the call joins it before
 * returning. */
ptxkit_status ptxkit_context_create(int ordinal, ptxkit_context **out);
/* Wraps a caller's CUcontext (passed as void*); the caller keeps ownership. */
ptxkit_status ptxkit_context_attach(void *cu_context, ptxkit_context **out);
/* Unloads modules and releases the primary context (an attached one stays
 * the caller's). NULL is a no-op. After PTXKIT_ERROR_CONTEXT_LOST it still
 * frees what it can; the driver then refuses the GPU to the whole process
 * until it restarts (CUDA's rule for sticky faults), and a new
 * ptxkit_context_create says so. Destroy the context's streams, events,
 * graphs and tunables first: they hold it. */
void ptxkit_context_destroy(ptxkit_context *ctx);
ptxkit_status ptxkit_device_info_get(ptxkit_context *ctx, ptxkit_device_info *out);
/* Blocks until all work on the context has finished. */
ptxkit_status ptxkit_context_synchronize(ptxkit_context *ctx);
/* Makes the context's CUDA context current on the calling thread (pushes
 * it) until the matching ptxkit_context_leave (pops it), for code that calls
 * the driver or a CUDA library itself between ptxkit calls: cuBLAS on
 * ptxkit_stream_handle_get, cuLaunchKernel on ptxkit_kernel_handle_get. Pairs nest;
 * ptxkit's own calls need neither. */
ptxkit_status ptxkit_context_enter(ptxkit_context *ctx);
ptxkit_status ptxkit_context_leave(ptxkit_context *ctx);
/* Number of GPUs the driver sees (0 with no driver: status says why). */
ptxkit_status ptxkit_device_count_get(int *count);

/* ---- memory ------------------------------------------------------------ */

ptxkit_status ptxkit_memory_alloc(ptxkit_context *ctx, size_t bytes, ptxkit_dptr *out);
ptxkit_status ptxkit_memory_free(ptxkit_context *ctx, ptxkit_dptr ptr);
/* Page-locked host memory (needed for copies that overlap with kernels):
 * ptxkit_host_alloc, under "pinned, registered and mapped host memory". */
ptxkit_status ptxkit_host_free(ptxkit_context *ctx, void *ptr);
ptxkit_status ptxkit_memory_info_get(ptxkit_context *ctx, size_t *free_bytes, size_t *total_bytes);

ptxkit_status ptxkit_memory_write(ptxkit_context *ctx, ptxkit_dptr dst, const void *src, size_t bytes);
ptxkit_status ptxkit_memory_read(ptxkit_context *ctx, void *dst, ptxkit_dptr src, size_t bytes);
ptxkit_status ptxkit_memory_copy(ptxkit_context *ctx, ptxkit_dptr dst, ptxkit_dptr src, size_t bytes);
ptxkit_status ptxkit_memory_write_async(ptxkit_context *ctx, ptxkit_dptr dst, const void *src, size_t bytes, ptxkit_stream *stream);
ptxkit_status ptxkit_memory_read_async(ptxkit_context *ctx, void *dst, ptxkit_dptr src, size_t bytes, ptxkit_stream *stream);
ptxkit_status ptxkit_memory_copy_async(ptxkit_context *ctx, ptxkit_dptr dst, ptxkit_dptr src, size_t bytes, ptxkit_stream *stream);
/* The _async calls queue work on `stream` and return before it has run
 * (the operations of ptxkit_ops.h take a stream and are asynchronous too,
 * unless their comment says they wait). Outputs come first: (dst, src) as
 * in memcpy. ptxkit_memory_write copies host to device, _read device to
 * host, _copy device to device. */
/* Sets `count` bytes to `value`. */
ptxkit_status ptxkit_memory_set8_async(ptxkit_context *ctx, ptxkit_dptr dst, uint8_t value, size_t count, ptxkit_stream *stream);
/* Sets `count` 32-bit words to `value`; dst must be 4-byte aligned. */
ptxkit_status ptxkit_memory_set32_async(ptxkit_context *ctx, ptxkit_dptr dst, uint32_t value, size_t count, ptxkit_stream *stream);

/* ---- streams and events ------------------------------------------------ */

/* ptxkit_stream_create (below, with its flags) makes a stream. */
/* A ptxkit_stream for an existing CUstream of this context's CUDA context
 * (e.g. one the application's other CUDA code uses), which the caller keeps
 * owning. ptxkit_stream_destroy on it releases only the wrapper; release the
 * wrapper before destroying the CUstream. A CUstream of another CUDA context
 * is INVALID_ARGUMENT. */
ptxkit_status ptxkit_stream_wrap(ptxkit_context *ctx, void *cu_stream, ptxkit_stream **out);
/* Destroys a stream from ptxkit_stream_create; releases the wrapper only of
 * one from ptxkit_stream_wrap. NULL is a no-op. The stream knows its
 * context; a stream of a lost context is freed all the same. */
void ptxkit_stream_destroy(ptxkit_stream *stream);
ptxkit_status ptxkit_stream_synchronize(ptxkit_context *ctx, ptxkit_stream *stream);
/* The CUstream behind a stream (NULL stream: the default stream). */
void *ptxkit_stream_handle_get(ptxkit_stream *stream);

/* CUDA graph capture. The ops (copy, reduce, scan, transpose, gemm) may be
 * called on a stream being captured (ptxkit_graph_capture_begin, or
 * cuStreamBeginCapture on ptxkit_stream_handle_get); they then record their
 * launches and, during
 * capture, allocate nothing, wait for nothing, read nothing back and tune
 * nothing (PTXKIT_TUNE=auto reads the database as cached does). A kernel
 * not loaded yet is loaded during the call, the calling thread's capture
 * mode relaxed meanwhile so that a global-mode capture stays valid.
 * Scratch: reduce (above one block of work), scan and split-K gemm use
 * per-stream scratch. During capture a call uses only the scratch its
 * stream already holds: run the op once on that stream, with the same or a
 * larger problem, before beginning the capture. Where it holds none (a
 * stream that never ran the op, or lost its scratch to other streams), or
 * too little, the call returns PTXKIT_ERROR_CAPTURE, records nothing,
 * and the capture stays usable. Scratch a capture used stays with its
 * stream until ptxkit_stream_destroy: launch the graph on that stream (or
 * ordered with its work), while it exists; replays are then correct in any
 * order with the stream's other calls. When every scratch slot of an op
 * (16 for reduce and scan, 4 for gemm) belongs to such streams, uncaptured
 * calls on other streams return PTXKIT_ERROR_UNSUPPORTED.
 * ptxkit_reduce_to_host allocates and waits: not capturable. */

/* ptxkit_event_create (below, with its flags) makes an event. NULL is a
 * no-op for ptxkit_event_destroy; the event knows its context. */
void ptxkit_event_destroy(ptxkit_event *event);
ptxkit_status ptxkit_event_record(ptxkit_context *ctx, ptxkit_event *event, ptxkit_stream *stream);
ptxkit_status ptxkit_event_synchronize(ptxkit_context *ctx, ptxkit_event *event);
ptxkit_status ptxkit_event_elapsed_ms_get(ptxkit_context *ctx, ptxkit_event *start, ptxkit_event *end, float *ms);

/* Which stream a call uses. A NULL ptxkit_stream is CUDA's legacy default
 * stream (CUstream 0) of the context. Streams from ptxkit_stream_create are
 * non-blocking (CU_STREAM_NON_BLOCKING): their work never waits for the
 * legacy stream's, nor the legacy stream's for theirs; order them with
 * events (ptxkit_stream_wait_event) or synchronizations. The synchronous
 * copies (ptxkit_memory_write/_dtoh/_dtod) and ptxkit_reduce_to_host run on
 * the legacy stream, so they do not wait for work queued on a ptxkit
 * stream: synchronize that stream (or wait for an event) first. The _async
 * copies and memsets, the ops, launches, ptxkit_host_func_launch and
 * ptxkit_graph_launch use the stream they are given. ptxkit_memory_alloc,
 * ptxkit_memory_free and the host memory calls use no stream (cuMemFree and the
 * host frees may wait for the whole device); ptxkit_context_synchronize
 * waits for every stream of the context. */

/* Stream flags for ptxkit_stream_create. */
#define PTXKIT_STREAM_NON_BLOCKING 0u /* ptxkit_stream_create's: no implicit order with the legacy stream */
#define PTXKIT_STREAM_BLOCKING 1u     /* CUDA's default-flag stream: ordered with the legacy stream */

/* A stream with flags (PTXKIT_STREAM_*) and a priority in CUDA's numbers:
 * lower is more urgent, 0 is the default, valid values lie between
 * ptxkit_stream_priority_range_get's greatest and least (inclusive). A
 * priority outside that range, or an unknown flag, is INVALID_ARGUMENT
 * (the driver would clamp it silently). Priorities order the scheduling of
 * blocks waiting to run, never preempt running ones. Destroy with
 * ptxkit_stream_destroy. */
ptxkit_status ptxkit_stream_create(ptxkit_context *ctx, unsigned flags, int priority, ptxkit_stream **out);
/* The device's stream priorities: *least (0, the default) and *greatest
 * (the most urgent, e.g. -5); numerically greatest <= least. Either
 * pointer may be NULL, not both. */
ptxkit_status ptxkit_stream_priority_range_get(ptxkit_context *ctx, int *least, int *greatest);
/* PTXKIT_SUCCESS when all work queued on the stream has finished,
 * PTXKIT_NOT_READY (not an error: ptxkit_status_is_error says 0) while some
 * is queued or running; does not wait. A stream being captured answers
 * PTXKIT_ERROR_CAPTURE without asking the driver (asking would invalidate
 * the capture). Errors of finished work (a kernel fault) are returned as
 * by ptxkit_stream_synchronize. */
ptxkit_status ptxkit_stream_query(ptxkit_context *ctx, ptxkit_stream *stream);
/* Work queued on `stream` after this call waits, on the GPU, until the work
 * `event` recorded has finished (cuStreamWaitEvent; the host does not
 * wait). The state of the event's last ptxkit_event_record counts: a later
 * record does not change what this wait waits for; an event never recorded
 * is already complete. Allowed during capture (it joins the capture when
 * the event was recorded in it). */
ptxkit_status ptxkit_stream_wait_event(ptxkit_context *ctx, ptxkit_stream *stream, ptxkit_event *event);
/* Host function run by ptxkit_host_func_launch, on a driver thread. */
typedef void (*ptxkit_host_func)(void *user);
/* Queues fn(user) on `stream` (cuLaunchHostFunc): it runs on a driver
 * thread after the work queued before it has finished, and work queued
 * after it waits for it to return. fn must not call ptxkit or CUDA (it
 * would deadlock or fail): signal another thread instead. Host functions
 * of one stream run in the order they were queued. During capture the
 * call becomes a host node, run at every replay. */
ptxkit_status ptxkit_host_func_launch(ptxkit_context *ctx, ptxkit_stream *stream, ptxkit_host_func fn, void *user);

/* Event flags for ptxkit_event_create (or-ed). */
#define PTXKIT_EVENT_DEFAULT 0u
#define PTXKIT_EVENT_DISABLE_TIMING 1u /* cheaper record and wait; ptxkit_event_elapsed_ms_get refuses it */
#define PTXKIT_EVENT_BLOCKING_SYNC 2u  /* ptxkit_event_synchronize sleeps instead of spinning */
/* An event with flags (PTXKIT_EVENT_*; PTXKIT_EVENT_DEFAULT times).
 * Destroy with ptxkit_event_destroy. */
ptxkit_status ptxkit_event_create(ptxkit_context *ctx, unsigned flags, ptxkit_event **out);
/* PTXKIT_SUCCESS when the work the event's last record follows has
 * finished (or it was never recorded), PTXKIT_NOT_READY (not an error)
 * while it has not; does not wait. An event recorded in a capture that is
 * still under way is PTXKIT_ERROR_CAPTURE. */
ptxkit_status ptxkit_event_query(ptxkit_context *ctx, ptxkit_event *event);

/* ---- pinned, registered and mapped host memory ---------------------------- */

/* Flags of ptxkit_host_alloc and ptxkit_host_register (or-ed). */
#define PTXKIT_HOST_DEFAULT 0u        /* pinned for this context (cuMemAllocHost) */
#define PTXKIT_HOST_PORTABLE 1u       /* pinned for every CUDA context, not only this one's */
#define PTXKIT_HOST_MAPPED 2u         /* mapped into the device's address space: ptxkit_host_device_pointer_get */
#define PTXKIT_HOST_WRITE_COMBINED 4u /* alloc only: fast host writes and PCIe reads, very slow host reads */
#define PTXKIT_HOST_READ_ONLY 8u      /* register only: the device only reads it */

/* Page-locked host memory with flags (PTXKIT_HOST_DEFAULT: none).
 * Free with ptxkit_host_free. READ_ONLY is INVALID_ARGUMENT here. */
ptxkit_status ptxkit_host_alloc(ptxkit_context *ctx, size_t bytes, unsigned flags, void **out);
/* Page-locks `bytes` of existing host memory at `ptr` (cuMemHostRegister),
 * so that async copies from and to it overlap with kernels, and with
 * PTXKIT_HOST_MAPPED maps it for the device. The range must not overlap
 * another registered one; WRITE_COMBINED is INVALID_ARGUMENT here, and
 * READ_ONLY is UNSUPPORTED where the system cannot register read-only. Undo
 * with ptxkit_host_unregister before freeing the memory. Not allowed during
 * a capture begun on this thread (PTXKIT_ERROR_CAPTURE). */
ptxkit_status ptxkit_host_register(ptxkit_context *ctx, void *ptr, size_t bytes, unsigned flags);
/* Unpins a range registered at `ptr` (its start). Waits for nothing: the
 * caller orders it after the copies using the range. */
ptxkit_status ptxkit_host_unregister(ptxkit_context *ctx, void *ptr);
/* The device address of mapped pinned memory (PTXKIT_HOST_MAPPED, from
 * ptxkit_host_alloc or ptxkit_host_register; `host` may point inside
 * it). Kernels read and write the host memory through it over the bus,
 * without copies. Memory not mapped is INVALID_ARGUMENT. */
ptxkit_status ptxkit_host_device_pointer_get(ptxkit_context *ctx, void *host, ptxkit_dptr *out);

/* ---- graphs ------------------------------------------------------------- */

/* A captured and instantiated CUDA graph: the calls made on a stream
 * between ptxkit_graph_capture_begin and _end, replayed by
 * ptxkit_graph_launch at a fraction of their launch cost. Its kernels keep
 * the arguments they were captured with (the same device pointers and
 * sizes at each replay): write new inputs into the same buffers, or
 * capture again with new arguments and ptxkit_graph_update, which patches
 * the executable graph in place. See "CUDA graph capture" above for the
 * ops' scratch rules (run each op once on the stream before capturing).
 *
 * Capture runs in CUDA's thread-local mode: the capturing thread's calls
 * that cannot be captured -- ptxkit_memory_alloc, ptxkit_memory_free, the host
 * allocations and registrations, the synchronous copies,
 * ptxkit_reduce_to_host, ptxkit_stream_synchronize, ptxkit_stream_query,
 * ptxkit_context_synchronize, and an op on another (uncaptured) stream
 * that would have to grow its scratch -- return PTXKIT_ERROR_CAPTURE
 * before reaching the driver, and the capture stays intact; other threads
 * are not affected. Calls that can be captured record nodes: the ops, launches,
 * _async copies and memsets, host functions, event records and waits.
 * A capture whose stream ends up invalidated (e.g. by a raw CUDA call the
 * driver refuses) gives no graph: _end and _update return
 * PTXKIT_ERROR_CAPTURE and the stream is no longer captured. */
typedef struct ptxkit_graph ptxkit_graph;

typedef enum ptxkit_graph_update_kind {
    PTXKIT_GRAPH_UPDATED_IN_PLACE = 0, /* same topology: the executable graph's arguments were patched */
    PTXKIT_GRAPH_REINSTANTIATED = 1,   /* the topology changed: a new executable graph replaced it */
} ptxkit_graph_update_kind;

/* Starts capturing `stream` (a created or wrapped stream: the legacy
 * stream, NULL, cannot be captured; INVALID_ARGUMENT). A stream already
 * being captured is PTXKIT_ERROR_CAPTURE. End it on the same thread, with
 * ptxkit_graph_capture_end or ptxkit_graph_update. */
ptxkit_status ptxkit_graph_capture_begin(ptxkit_context *ctx, ptxkit_stream *stream);

/* Ends the capture of `stream` and instantiates what it recorded: *out is
 * a new graph (destroy with ptxkit_graph_destroy). On failure *out is NULL
 * and the capture is over either way. */
ptxkit_status ptxkit_graph_capture_end(ptxkit_context *ctx, ptxkit_stream *stream, ptxkit_graph **out);

/* Ends the capture of `stream` (begun by ptxkit_graph_capture_begin) and
 * makes `graph` run what it recorded from now on: cuGraphExecUpdate in
 * place where the node structure is unchanged (the usual case: the same
 * calls with other pointers, sizes that keep the grid shape, or scalars),
 * else a new instantiation. *how (may be NULL) says which happened. The
 * change applies to later launches; to be safe with older drivers, order
 * it after the graph's replays in flight (synchronize their streams). On
 * failure the capture is over; a stream that was not captured
 * (INVALID_ARGUMENT) leaves `graph` as it was, while after a failed update
 * or instantiation the driver does not promise what the old executable
 * graph still holds: destroy it, or update it again. */
ptxkit_status ptxkit_graph_update(ptxkit_context *ctx, ptxkit_graph *graph, ptxkit_stream *stream,
                                  ptxkit_graph_update_kind *how);

/* Replays the graph on `stream` (NULL: the legacy stream); asynchronous.
 * For graphs holding ops with scratch, see the capture rules above. */
ptxkit_status ptxkit_graph_launch(ptxkit_context *ctx, ptxkit_graph *graph, ptxkit_stream *stream);

/* Releases the graph; its replays in flight finish first (the driver's
 * rule). NULL: nothing. The graph knows its context. */
void ptxkit_graph_destroy(ptxkit_graph *graph);

/* ---- configurations ----------------------------------------------------- */

/* Load cache operator of a kernel's global loads (PTX ld.global.<op>). */
typedef enum ptxkit_load_op {
    PTXKIT_LOAD_DEFAULT = 0,   /* plain ld.global: the compiler's choice */
    PTXKIT_LOAD_CA,            /* cache at all levels */
    PTXKIT_LOAD_CG,            /* cache in L2, not L1 */
    PTXKIT_LOAD_CS,            /* streaming, evict first */
    PTXKIT_LOAD_LU,            /* last use */
    PTXKIT_LOAD_CV,            /* volatile: fetch again */
    PTXKIT_LOAD_NC,            /* read-only (texture) path, ld.global.nc */
    PTXKIT_LOAD_OP_COUNT
} ptxkit_load_op;

/* How a kernel reaches the GPU. */
typedef enum ptxkit_path {
    PTXKIT_PATH_AUTO = 0,      /* JIT where NVRTC is present, else PTX */
    PTXKIT_PATH_JIT,           /* NVRTC-compiled CUBIN for this GPU */
    PTXKIT_PATH_PTX            /* the precompiled PTX embedded in the library */
} ptxkit_path;

/* A configuration: named integer parameters, the one type that every op
 * (its `config` argument), every tunable (its callbacks and
 * ptxkit_tunable_config_get) and the tuning database and record
 * (ptxkit_tune_entry, ptxkit_tune_record_line) take. A plain value: copy
 * it, keep it on the stack. Zero-initialized (or NULL where an op takes a
 * pointer) it means "tuned or default" for every parameter; a parameter
 * set overrides that one only. Each op documents the names it reads and
 * answers INVALID_ARGUMENT naming the parameter for a name it does not
 * read or a value out of its range. Names: letters, digits, '_', '.' and
 * '-', shorter than PTXKIT_CONFIG_NAME_SIZE. */
#define PTXKIT_CONFIG_MAX_PARAMS 16
#define PTXKIT_CONFIG_NAME_SIZE 32
typedef struct ptxkit_config_param {
    char name[PTXKIT_CONFIG_NAME_SIZE];
    long long value;
} ptxkit_config_param;
typedef struct ptxkit_config {
    int count;                                        /* params[0..count) are set */
    ptxkit_config_param params[PTXKIT_CONFIG_MAX_PARAMS];
} ptxkit_config;

/* Sets a parameter: replaces its value, or adds it. INVALID_ARGUMENT for a
 * NULL config, a malformed name, or a new name in a full configuration. */
ptxkit_status ptxkit_config_set(ptxkit_config *config, const char *name, long long value);
/* The value of a parameter: NOT_FOUND when the configuration does not set
 * it (a NULL config sets none), INVALID_ARGUMENT for a NULL name or value. */
ptxkit_status ptxkit_config_get(const ptxkit_config *config, const char *name, long long *value);
/* A configuration's parameters as config->count "NAME=VALUE" defines for
 * ptxkit_program_kernel_get (a tunable's kernel takes its parameters so), written
 * into caller-owned `text`: returns text->defines (NULL for a NULL
 * argument), valid while text is. */
typedef struct ptxkit_config_defines_text {
    char text[PTXKIT_CONFIG_MAX_PARAMS][PTXKIT_CONFIG_NAME_SIZE + 24];
    const char *defines[PTXKIT_CONFIG_MAX_PARAMS];
} ptxkit_config_defines_text;
const char *const *ptxkit_config_defines_get(const ptxkit_config *config, ptxkit_config_defines_text *text);

/* The parameters the launch-option families (copy, reduce, scan,
 * transpose) all read from a ptxkit_config, each 0 or absent for "tuned or
 * default":
 *   "path"          a ptxkit_path;
 *   "load_op"       a ptxkit_load_op, the global loads' cache operator;
 *   "block_size"    threads per block, a power of two in [32, 1024];
 *   "vector_bytes"  bytes per global access: 4, 8 or 16.
 * Each family lists its own besides these. */

typedef enum ptxkit_dtype {
    PTXKIT_INT32 = 0,
    PTXKIT_UINT32,
    PTXKIT_INT64,
    PTXKIT_UINT64,
    PTXKIT_FLOAT32,
    PTXKIT_FLOAT64,
    PTXKIT_DTYPE_COUNT
} ptxkit_dtype;

size_t ptxkit_dtype_size(ptxkit_dtype type);

/* ---- the application's own kernels: programs ----------------------------
 *
 * A program is CUDA C++ source text with a name (used in compiler messages
 * and #line directives) and optional named headers. Kernels come from it by
 * entry name and injected defines; ptxkit compiles them with NVRTC for the
 * context's GPU, keeps the loaded function for the context and the CUBIN in
 * the disk cache, exactly as for its built-in families.
 *
 * Contract of the source: defines arrive as -DNAME=VALUE before the text, so
 * a kernel reads them as macros (BLOCK_SIZE, LOAD_OP, ...). ptxkit's device
 * helpers are included as <ptxkit/load.cuh> (load_op-selected global loads of
 * every width: see that header), <ptxkit/load_hint.cuh> (L2 eviction-hint
 * loads), <ptxkit/warp.cuh> (warp and block reductions) and
 * <ptxkit/async.cuh> (cp.async, mbarrier arrive/wait, sm_90 bulk copies),
 * their helpers in namespace ptxkit (ptxkit::ld_f32, ptxkit::warp_reduce);
 * the same headers are installed beside this one, so nvcc and an editor see
 * what NVRTC is given. A kernel that includes load.cuh and takes LOAD_OP
 * switches its cache operator with the define: pass "LOAD_OP=<n>" with
 * ptxkit_load_op_define(). */

typedef struct ptxkit_program ptxkit_program;
typedef struct ptxkit_kernel ptxkit_kernel;

/* A header the program may #include by `name` (e.g. "my/params.h"). */
typedef struct ptxkit_header {
    const char *name;
    const char *text;
} ptxkit_header;

/* Creates a program from source text (copied). name: what compiler messages
 * call the file ("saxpy.cu"); headers: header_count named headers (copied).
 * A program is text, not tied to a context or GPU: creating compiles
 * nothing, and one program serves every context. Errors are recorded as the
 * thread's (ptxkit_last_error()). INVALID_ARGUMENT, naming the header,
 * for two headers of one name or one named like a built-in header
 * ("ptxkit_load.cuh", <ptxkit/load.cuh>, ...), which every program is
 * offered; and for control characters in the program's or a header's name. */
ptxkit_status ptxkit_program_create(const char *name, const char *source, const ptxkit_header *headers,
                                    int header_count, ptxkit_program **out);
/* Reads the file once; its path is the program's name. The file's
 * directory is the program's first include directory, so headers beside it
 * are found (#include "params.h"); nothing else is searched implicitly:
 * not the working directory. */
ptxkit_status ptxkit_program_create_from_file(const char *path, const ptxkit_header *headers, int header_count,
                                              ptxkit_program **out);
/* Adds NVRTC options for every kernel of the program ("-use_fast_math",
 * "-lineinfo", "-maxrregcount=64"; "--gpu-architecture" is ptxkit's and is
 * refused). Options are part of a kernel's cache key. "-IDIR" and
 * "--include-path=DIR" add an include directory, as
 * ptxkit_program_add_include_dirs does. Options that make NVRTC read files
 * no cache key covers are refused: pre-included files (-include,
 * --pre-include) and precompiled-header options (--pch, --use-pch,
 * --pch-dir, --create-pch): where NVRTC has them (12.8 and later), ptxkit
 * itself compiles an application's programs with NVRTC's automatic
 * precompiled headers, so a compile repeating a program's header prelude
 * with the same defines and options in one process (another entry, or the
 * same kernel compiled again) skips parsing it; the precompiled prelude is
 * tied to the contents of every header it read. By default only programs
 * that include header files from disk use it (the toolkit's headers are
 * what costs parsing); PTXKIT_PCH=on: every program, PTXKIT_PCH=off: none. */
ptxkit_status ptxkit_program_add_options(ptxkit_program *program, const char *const *options, int count);
/* Adds directories searched for the program's #include lines, after the
 * ones added before (and after the directory of a program read from a
 * file), in order; each is kept as its absolute path (a relative one is
 * taken from the working directory now). After them, ptxkit searches the
 * CUDA toolkit's include directories, found beside the NVRTC library
 * ptxkit_jit_library_get names (<cuda>/include/cccl and <cuda>/include,
 * without loading NVRTC), so <cuda_fp16.h>, <cooperative_groups.h> and
 * <cub/cub.cuh> need no directory; PTXKIT_TOOLKIT_INCLUDE=off leaves them
 * out. Headers handed to ptxkit_program_create and the built-in ones are
 * found by name before any directory.
 *
 * Every header file a compile may read from these directories is part of
 * the kernel's cache key: the program's #include lines are followed through
 * the directories (conditionals are not evaluated, so the set is a
 * superset; a computed "#include MACRO" is not followed) at the program's
 * first kernel lookup or compile, and the files' contents hashed. A header
 * changed on disk is then a new key (a compile); unchanged headers find the
 * cached CUBIN in a later process without loading NVRTC. The tree is read
 * once per program object: a header edited after its first kernel is seen
 * by a program created after the edit. The list of files read and their
 * hashes is kept beside the cached images; a later process re-hashes the
 * application's files and checks the toolkit's by size and modification
 * time, and scans again only when something changed.
 *
 * Errors: IO for a directory that does not exist (nothing is added by the
 * call then), INVALID_ARGUMENT for an empty name, a control character in
 * one, or a call after the program's first kernel lookup or compile. Not
 * thread-safe with other uses of the same program. */
ptxkit_status ptxkit_program_add_include_dirs(ptxkit_program *program, const char *const *dirs, int count);
/* Kernels obtained from the program stay valid (they belong to the
 * context); destroying the program frees its text. NULL is a no-op. */
void ptxkit_program_destroy(ptxkit_program *program);

/* The kernel `entry` of the program compiled for the context's GPU with
 * `defines` ("NAME=VALUE" or "NAME"; at most PTXKIT_MAX_KERNEL_DEFINES).
 * entry is the name of an extern "C" __global__ function, or any C++ name
 * expression such as "scale<256, float>" or "ns::kernel": NVRTC instantiates
 * it and ptxkit looks up the lowered name. Each (entry, defines) is its own
 * compiled module. The same program text, headers, defines, entry, options,
 * GPU architecture, NVRTC build, driver and library version return the
 * already-loaded kernel in this context (no compile, no disk access) and the
 * cached CUBIN in a new process (NVRTC is not even loaded). The kernel
 * belongs to the context and stays valid until it closes. Errors: COMPILE
 * (NVRTC's log, whose file names and lines are the program's and its
 * headers'; PTXKIT_DUMP_SOURCE=DIR also writes the failing source, headers
 * and options there), NOT_FOUND (no such entry, or a name expression that
 * does not instantiate), NO_NVRTC (not cached and no NVRTC).
 * It pairs with ptxkit_module_kernel_get, which takes a kernel out of a
 * module; the kernel's module (ptxkit_kernel_module_get) is the program's
 * compiled for the one name entry, and ptxkit_program_module_get compiles
 * several kernels and variables into one module (see "modules" below). */
#define PTXKIT_MAX_KERNEL_DEFINES 32
ptxkit_status ptxkit_program_kernel_get(ptxkit_context *ctx, ptxkit_program *program, const char *entry,
                                        const char *const *defines, int define_count, ptxkit_kernel **out);

/* What NVRTC made of one entry, without a GPU (tools, tests, inspection). */
typedef struct ptxkit_compiled {
    char *image;          /* PTX text (NUL-terminated) or CUBIN, malloc'd */
    size_t size;          /* bytes of the image (PTX: without the NUL) */
    int is_cubin;
    char *log;            /* NVRTC's log (with -Xptxas -v: the resource report); may be NULL */
    char *lowered_name;   /* the entry's name in the image */
    double compile_ms;
    int reserved[4];      /* zero today: later 0.x releases fill new fields here */
} ptxkit_compiled;

/* Added to an architecture number, asks for its architecture-specific
 * feature set: 90 | PTXKIT_ARCH_SPECIFIC is sm_90a (wgmma, setmaxnreg...),
 * whose code runs on that architecture only. sm_90 and later. */
#define PTXKIT_ARCH_SPECIFIC 0x10000

/* Compiles entry with defines for sm_<arch> (e.g. 90, or 90 |
 * PTXKIT_ARCH_SPECIFIC for sm_90a): CUBIN, or PTX with want_ptx. entry NULL
 * compiles every extern "C" kernel of the program (lowered_name NULL): the
 * whole module, to read its PTX or its resource report. No cache is
 * consulted. Free with ptxkit_program_compiled_free. */
ptxkit_status ptxkit_program_compile(const ptxkit_program *program, const char *entry, const char *const *defines,
                                     int define_count, int arch, int want_ptx, ptxkit_compiled *out);
void ptxkit_program_compiled_free(ptxkit_compiled *compiled);

/* ---- the application's own kernels: PTX, CUBIN and fatbins ------------- */

typedef struct ptxkit_module ptxkit_module;

/* Options of ptxkit_module_load; zero-initialize for defaults. */
typedef struct ptxkit_module_options {
    /* For PTX: the cache operator every plain global load (ld.global.T,
     * ld.global.vN.T without an operator) is given before the driver
     * JIT-compiles the text. Loads that carry an operator or eviction
     * priority, volatile/relaxed/acquire loads and non-global loads keep
     * theirs. DEFAULT: the text as given. NC (the read-only path) only with
     * read_only set. Ignored for CUBIN and fatbins (they are machine code). */
    ptxkit_load_op load_op;
    /* The caller promises that no global memory the kernels load is written
     * while they run (by them or anything else): NC becomes legal. */
    int read_only;
    int reserved[4];      /* zero: later 0.x releases give these meaning, 0 keeping today's */
} ptxkit_module_options;

/* Loads an image the application gives: PTX text (of `size` bytes, or
 * NUL-terminated with size 0), a CUBIN or a fatbin (detected by their magic
 * numbers, with their size given). The
 * module belongs to the context, is loaded once per distinct rewritten text
 * or image, and is valid until the context closes. Errors: PTX_LOAD with the
 * driver JIT's error log, PTX_VERSION (ISA newer than the driver), INVALID_
 * ARGUMENT (NC without read_only, an operator on a binary image). */
ptxkit_status ptxkit_module_load(ptxkit_context *ctx, const void *image, size_t size,
                                 const ptxkit_module_options *options, ptxkit_module **out);
/* Its kernels: ptxkit_module_kernel_get (the name as it appears in the
 * image: mangled for C++); its variables: ptxkit_module_variable_get by
 * symbol (both under "modules" below). */

/* ---- modules: several kernels of one program, and their variables ------
 *
 * A module compiled from a program for several names holds every kernel
 * and variable of that one compile: its kernels share its __device__ and
 * __constant__ variables, and the disk cache keeps one image (with the
 * names' lowered forms beside it, so a warm start needs no NVRTC). Names
 * pair as <source>_kernel_get: ptxkit_program_kernel_get compiles a kernel
 * out of a program (the short path, a module of its one entry) as
 * ptxkit_module_kernel_get takes one out of a module. */

/* The most names one module is compiled for. */
#define PTXKIT_MAX_MODULE_NAMES 256

/* The program compiled once, with `defines` (as ptxkit_program_kernel_get
 * takes them), into a module for the context's GPU, for name_count names
 * (0 to PTXKIT_MAX_MODULE_NAMES, each at most once): extern "C" kernel
 * names and C++ name expressions of kernels ("scale<float>", "ns::k") and
 * of variables ("&ns::coeffs", "&table<float>", "&var" in an anonymous
 * namespace), which NVRTC instantiates and lowers. Kernels and variables
 * of extern "C" or unmangled global names are found without being named.
 * The module belongs to the context (valid until it closes); the same
 * program, names (in the same order), defines, options, GPU, NVRTC build,
 * driver and library return the loaded module without compiling, and a
 * new process reads it from the disk cache. One name asks for the module
 * ptxkit_program_kernel_get uses for that entry. Errors: as
 * ptxkit_program_kernel_get's (NOT_FOUND: a name that names nothing in the
 * program); INVALID_ARGUMENT for a name given twice. Any thread. */
ptxkit_status ptxkit_program_module_get(ptxkit_context *ctx, ptxkit_program *program, const char *const *names,
                                        int name_count, const char *const *defines, int define_count,
                                        ptxkit_module **out);
/* The kernel `entry` of the module: one of the names it was compiled for,
 * or a name as it appears in the image (an extern "C" name; a loaded
 * image's mangled C++ name). NOT_FOUND for a name the module lacks, and
 * for a C++ name expression it was not compiled for. The kernel belongs to
 * the context; ptxkit_kernel_module_get returns this module. Any thread. */
ptxkit_status ptxkit_module_kernel_get(ptxkit_module *module, const char *entry, ptxkit_kernel **out);
/* The module a kernel was taken from (by ptxkit_program_kernel_get or
 * ptxkit_module_kernel_get), to reach the variables
 * its kernels read. NOT_FOUND for a built-in family's kernel. Reads only. */
ptxkit_status ptxkit_kernel_module_get(ptxkit_kernel *kernel, ptxkit_module **out);
/* The device address and size in bytes of the module's __device__ or
 * __constant__ variable `name`: a name expression the module was compiled
 * for ("&ns::var"), an unmangled name (a variable at global namespace
 * scope or extern "C"), or, in a loaded image, its symbol (mangled for
 * C++). dptr or bytes may be NULL. NOT_FOUND, naming it, for a variable
 * the module lacks or a name expression it was not compiled for. The
 * address is valid while the context is open; kernels of the module read
 * the variable, and any copy or kernel may write it at that address. */
ptxkit_status ptxkit_module_variable_get(ptxkit_module *module, const char *name, ptxkit_dptr *dptr, size_t *bytes);
/* Copies bytes from src into the variable at byte offset `offset`
 * (ptxkit_memory_write: returns once the copy is done), or out of it into
 * dst (ptxkit_memory_read). INVALID_ARGUMENT when offset + bytes
 * overruns the variable or the host buffer is NULL with bytes > 0;
 * NOT_FOUND as ptxkit_module_variable_get. bytes 0 copies nothing. */
ptxkit_status ptxkit_module_variable_write(ptxkit_module *module, const char *name, size_t offset, const void *src,
                                           size_t bytes);
ptxkit_status ptxkit_module_variable_read(ptxkit_module *module, const char *name, size_t offset, void *dst,
                                          size_t bytes);
/* The same, queued on `stream` (NULL: the default stream) and returning
 * before it has run, as ptxkit_memory_write_async/_dtoh_async: ordered with
 * the stream's kernels; src must stay unchanged, and dst is filled, only
 * once the stream reaches the copy (page-locked host memory for copies
 * that overlap kernels). */
ptxkit_status ptxkit_module_variable_write_async(ptxkit_module *module, const char *name, size_t offset,
                                                 const void *src, size_t bytes, ptxkit_stream *stream);
ptxkit_status ptxkit_module_variable_read_async(ptxkit_module *module, const char *name, size_t offset, void *dst,
                                                size_t bytes, ptxkit_stream *stream);

/* ---- launching ---------------------------------------------------------- */

typedef struct ptxkit_dim3 {
    unsigned x, y, z;
} ptxkit_dim3;

/* Launches kernel on stream (NULL: the default stream) with grid and block
 * dimensions (0 in y or z reads as 1), dynamic shared memory bytes and
 * args as for cuLaunchKernel: an array of pointers to each argument's value.
 * This call does not check args against the kernel's parameters: a wrong
 * array is undefined behaviour, as with cuLaunchKernel (ptxkit_kernel_launch_ex
 * with the arguments' sizes checks them, where the driver has
 * cuFuncGetParamInfo). Dimensions beyond
 * the device limits and shared memory beyond the kernel's limit are
 * INVALID_ARGUMENT before anything is launched. A fault inside the kernel
 * shows at the next synchronizing call as LAUNCH; when the driver marks the
 * context as unusable (a sticky error: illegal address, trap) the status is
 * CONTEXT_LOST and only ptxkit_context_destroy remains meaningful. */
ptxkit_status ptxkit_kernel_launch(ptxkit_kernel *kernel, ptxkit_dim3 grid, ptxkit_dim3 block, size_t shared_bytes,
                            ptxkit_stream *stream, void **args);

typedef enum ptxkit_access_property {
    PTXKIT_ACCESS_NORMAL = 0,
    PTXKIT_ACCESS_STREAMING,
    PTXKIT_ACCESS_PERSISTING
} ptxkit_access_property;

/* An L2 access policy window: accesses to [base, base + bytes) hit with
 * hit_property for a hit_ratio fraction of them, miss_property otherwise. */
typedef struct ptxkit_access_window {
    ptxkit_dptr base;
    size_t bytes;
    float hit_ratio;
    ptxkit_access_property hit_property, miss_property;
    int reserved[2];      /* zero: later 0.x releases give these meaning, 0 keeping today's */
} ptxkit_access_window;

/* ---- L2 residency -------------------------------------------------------
 * Since sm_80 a part of L2 (the persisting set-aside, at most
 * ptxkit_device_info.persisting_l2_max_bytes) can keep lines that accesses
 * with the PERSISTING property touched; an access policy window says which
 * accesses those are: [base, base + bytes) on a stream (every later
 * launch on it) or on one launch (ptxkit_launch_attributes.access_window),
 * hit_ratio of them PERSISTING (hit_property), the rest miss_property.
 * Where the feature is absent the calls are UNSUPPORTED and the message
 * says why: a GPU before sm_80 (no set-aside), a MIG instance or an MPS
 * client (the driver refuses the limit: under MPS it is set once, by
 * CUDA_DEVICE_DEFAULT_PERSISTING_L2_CACHE_PERCENTAGE_LIMIT when the server
 * starts), a driver without the entry points. Windows larger than
 * ptxkit_device_info.access_window_max_bytes, a NULL base, a hit ratio
 * outside [0, 1] and persisting misses are INVALID_ARGUMENT. */

/* The current set-aside (CU_LIMIT_PERSISTING_L2_CACHE_SIZE) and the
 * device's maximum, in bytes; either pointer may be NULL. */
ptxkit_status ptxkit_l2_persisting_get(ptxkit_context *ctx, size_t *bytes, size_t *max_bytes);
/* Sets the set-aside of the context's device (a device-wide limit: it
 * stays until changed, for every context on the GPU). More than the
 * maximum is INVALID_ARGUMENT, except PTXKIT_L2_PERSISTING_MAX, which
 * asks for the maximum. applied (may be NULL) receives what the driver
 * reports afterwards (it may round). 0 gives the lines back to normal use. */
#define PTXKIT_L2_PERSISTING_MAX ((size_t)-1)
ptxkit_status ptxkit_l2_persisting_set(ptxkit_context *ctx, size_t bytes, size_t *applied);
/* Demotes every persisting line in L2 to normal (cuCtxResetPersistingL2Cache):
 * what a later kernel's persisting accesses find is then its own. */
ptxkit_status ptxkit_l2_persisting_reset(ptxkit_context *ctx);
/* Sets the access policy window of a created or wrapped stream (not the
 * default stream, which takes no attributes) for the launches that follow;
 * NULL window removes it. The window is checked as for ptxkit_kernel_launch_ex. */
ptxkit_status ptxkit_stream_access_window_set(ptxkit_context *ctx, ptxkit_stream *stream,
                                              const ptxkit_access_window *window);

/* Attributes of ptxkit_kernel_launch_ex; zero-initialize for none. */
typedef struct ptxkit_launch_attributes {
    ptxkit_dim3 cluster;           /* thread-block cluster (sm_90+); 0: none */
    int cooperative;               /* grid-wide synchronization allowed */
    const ptxkit_access_window *access_window; /* NULL: none */
    /* Programmatic dependent launch: the kernel may start before the kernel
     * ahead of it on the stream has finished, and must call
     * ptxkit::grid_dependency_wait() (<ptxkit/grid.cuh>) before it reads
     * what that kernel writes or writes what it reads. Ignored before sm_90
     * (an ordinary, fully ordered launch). */
    int programmatic;
    int reserved[3];      /* zero: later 0.x releases give these meaning, 0 keeping today's */
} ptxkit_launch_attributes;

/* ptxkit_kernel_launch with its arguments checked, attributes, or both.
 * arg_sizes (NULL: unchecked, arg_count 0) gives the size of each *args[i]
 * (sizeof of what args[i] points to): the arguments are checked against the
 * kernel's parameter list (as ptxkit_kernel_params_get reads it), and a count or size
 * that differs is INVALID_ARGUMENT, naming the parameter, before anything
 * runs; checking is UNSUPPORTED before CUDA 12.4. attributes (NULL: none)
 * go through cuLaunchKernelEx: UNSUPPORTED where the driver or GPU lacks
 * one (clusters before sm_90, no cuLaunchKernelEx). */
ptxkit_status ptxkit_kernel_launch_ex(ptxkit_kernel *kernel, ptxkit_dim3 grid, ptxkit_dim3 block, size_t shared_bytes,
                                      ptxkit_stream *stream, void **args, const size_t *arg_sizes, size_t arg_count,
                                      const ptxkit_launch_attributes *attributes);

typedef struct ptxkit_kernel_attributes {
    int registers;                 /* per thread */
    int static_shared_bytes;
    int local_bytes;               /* per thread: spills and stack */
    int const_bytes;
    int max_threads_per_block;     /* for this kernel's resources */
    int max_dynamic_shared_bytes;  /* as currently set */
    int ptx_version;               /* e.g. 90 for the compute_90 PTX it came from */
    int binary_version;            /* e.g. 90 for sm_90 SASS */
    int reserved[4];      /* zero today: later 0.x releases fill new fields here */
} ptxkit_kernel_attributes;

ptxkit_status ptxkit_kernel_attributes_get(ptxkit_kernel *kernel, ptxkit_kernel_attributes *out);
/* Resident blocks per SM for a block size and dynamic shared memory. */
ptxkit_status ptxkit_kernel_occupancy_get(ptxkit_kernel *kernel, int block_threads, size_t shared_bytes,
                                      int *blocks_per_sm);
/* The grid of a grid-stride launch: resident blocks per SM x SMs, at most
 * max_blocks (0: no cap). */
ptxkit_status ptxkit_kernel_grid_size_get(ptxkit_kernel *kernel, int block_threads, size_t shared_bytes,
                                      size_t max_blocks, unsigned *grid);
/* The block size that maximizes the kernel's occupancy with `shared_bytes`
 * of dynamic shared memory per block (cuOccupancyMaxPotentialBlockSize),
 * and the smallest grid (min_grid, may be NULL) that fills the GPU with it. */
ptxkit_status ptxkit_kernel_max_occupancy_block_get(ptxkit_kernel *kernel, size_t shared_bytes, int *block_threads,
                                                   int *min_grid);
/* Raises the kernel's dynamic shared memory limit (up to the device's
 * opt-in maximum; beyond it INVALID_ARGUMENT). */
ptxkit_status ptxkit_kernel_max_dynamic_shared_set(ptxkit_kernel *kernel, size_t bytes);
/* The CUfunction behind a kernel, for code that calls the driver itself. */
void *ptxkit_kernel_handle_get(ptxkit_kernel *kernel);
/* The log of the compile and module load that produced this kernel, in
 * this context: what was loaded, for PTX the driver JIT's wall time and
 * its info log (CU_JIT_INFO_LOG_BUFFER; a CUBIN is not JIT-compiled and its
 * log says so), then NVRTC's log (warnings) where NVRTC
 * compiled it just then (a kernel from the disk cache has none), cut to
 * 4 KiB. Kernels of one module share it; later loads of other kernels,
 * from any thread, leave it. "" for NULL. Valid as long as the context. A
 * compile or load that fails leaves its logs in ptxkit_last_error instead.
 * Any thread. */
const char *ptxkit_kernel_jit_log_get(const ptxkit_kernel *kernel);

/* ==== experimental tier ==================================================
 *
 * Compiled only where PTXKIT_EXPERIMENTAL is defined before this header is
 * included. NOT STABLE: these declarations may change or go away in any
 * release, patch releases included, and are not covered by the soname's
 * promise (README, "Versions and ABI"). They are the ptxkit command's
 * benchmark switches and measuring hooks, and interfaces whose shape is
 * still moving; an application that uses them pins the exact library
 * version, as zstd's ZSTD_STATIC_LINKING_ONLY asks. */
#ifdef PTXKIT_EXPERIMENTAL

/* ---- experimental: kernel parameters shared by the families ------------- */

/* "ca", "cg", ..., "default"; NULL for a value out of range. */
const char *ptxkit_load_op_name(ptxkit_load_op op);

/* Parses a name as printed by ptxkit_load_op_name. */
ptxkit_status ptxkit_load_op_parse(const char *name, ptxkit_load_op *out);

/* ---- experimental: configurations --------------------------------------- */

const char *ptxkit_dtype_name(ptxkit_dtype type);

/* ---- experimental: the application's own kernels: programs -------------- */

/* ptxkit's own kernel text, embedded in the library: the families' CUDA C
 * sources ("copy.cu", "reduce.cu", ...), the device headers every program
 * may include ("ptxkit_load.cuh" is <ptxkit/load.cuh>) and the precompiled
 * PTX ("copy.ptx"). A starting point for a kernel of your own, or a family
 * compiled with other defines (ptxkit_program_create on the text). The name
 * of file `index` (0, 1, ...), NULL past the last. */
const char *ptxkit_program_builtin_source_name_get(int index);

/* The text (NUL-terminated, static) and size of the file `name`; NOT_FOUND
 * for a name the library does not hold. size may be NULL. */
ptxkit_status ptxkit_program_builtin_source_get(const char *name, const char **text, size_t *size);

/* The token the LOAD_OP define takes for an operator ("0".."6"). */
const char *ptxkit_load_op_define(ptxkit_load_op op);

/* A family's compile-time constants that carry a tunable parameter
 * ("BLOCK_SIZE", copy's "UNROLL", ...): the name of the index-th of family's
 * (NULL past the last or for an unknown family), and the values ptxkit builds
 * it with, as text ("32, 64, 128, ...") into buf. NOT_FOUND when the family
 * declares no such constant, INVALID_ARGUMENT for NULL or size 0 (the
 * reason in ptxkit_last_error()); a list longer than buf is cut. Plain
 * CPU code: no context needed. */
const char *ptxkit_program_family_define_name_get(const char *family, int index);

ptxkit_status ptxkit_program_family_define_values_get(const char *family, const char *define, char *buf, size_t size);

/* ---- experimental: the application's own kernels: PTX, CUBIN and fatbins --- */

/* How many plain global loads the operator was given, and how many were
 * left alone (already with an operator, or memory-ordered). */
ptxkit_status ptxkit_module_rewrite_counts_get(const ptxkit_module *module, int *rewritten, int *kept);

/* ---- experimental: `ptxkit bench startup` ------------------------------- */

/* `count` lookups of one built-in kernel (copy's ptxkit_copy_vec16, UNROLL=4
 * BLOCK_SIZE=256 LOAD_OP=2) in the context's kernel registry: the cost a
 * later launch of a family pays before it launches. Compiles it on the
 * first lookup if it is not loaded yet. *jit_log (may be NULL): that
 * kernel's load log (ptxkit_kernel_jit_log_get), "" when it failed. */
ptxkit_status ptxkit_context_registry_probe(ptxkit_context *ctx, int count, const char **jit_log);

/* ---- experimental: `ptxkit bench compile` ------------------------------- */

/* NVRTC's automatic precompiled headers for the compiles after the call:
 * 1 on where NVRTC has them, 0 off, -1 as PTXKIT_PCH says (the default).
 * *available (may be NULL): whether they would be used now (NVRTC 12.8+,
 * loaded by the call). */
ptxkit_status ptxkit_jit_pch_mode_set(int mode, int *available);

/* ---- experimental: read-backs and diagnostics --------------------------------
 *
 * Calls that read back what the application set itself or count what a
 * call made, for tests and the ptxkit command (moved here in 0.3 to keep the
 * stable tier to what an application runs on; docs/MIGRATING-0.3.md). */

/* Directory of the on-disk kernel cache (PTXKIT_CACHE_DIR, else
 * $XDG_CACHE_HOME/ptxkit when that is an absolute path, else
 * ~/.cache/ptxkit, the home directory from $HOME or the password
 * database). Empty if disabled. */
ptxkit_status ptxkit_cache_dir_get(char *buf, size_t size);
/* Number of cached kernels and their total size on disk. */
ptxkit_status ptxkit_cache_stats_get(size_t *files, size_t *bytes);

/* The priority a stream was created with (NULL: the legacy stream's). */
ptxkit_status ptxkit_stream_priority_get(ptxkit_context *ctx, ptxkit_stream *stream, int *priority);

/* The number of nodes of the graph as captured (kernels, copies, memsets,
 * host functions, event nodes); an empty capture has 0. */
ptxkit_status ptxkit_graph_node_count_get(ptxkit_context *ctx, ptxkit_graph *graph, size_t *count);

/* The window the driver holds for the stream (bytes 0: none). */
ptxkit_status ptxkit_stream_access_window_get(ptxkit_context *ctx, ptxkit_stream *stream, ptxkit_access_window *out);

/* The kernel's parameter list as the driver knows it: *count parameters,
 * the first `capacity` of them with their byte offsets and sizes (offsets
 * and sizes may be NULL when capacity is 0). UNSUPPORTED on drivers before
 * CUDA 12.4 (no cuFuncGetParamInfo). */
ptxkit_status ptxkit_kernel_params_get(ptxkit_kernel *kernel, size_t *count, size_t *offsets, size_t *sizes,
                                       size_t capacity);

/* ---- experimental: diagnostics of `ptxkit info` -------------------------------- */

/* The NVRTC file the JIT path uses and how it was found, e.g.
 * "/usr/local/cuda/lib64/libnvrtc.so.13 (found through CUDA_HOME)"; a short
 * buffer truncates. Where it looks, in order: PTXKIT_NVRTC_PATH alone when
 * set; else the loader's search path (libnvrtc.so.13, then .so.12),
 * $CUDA_HOME, $CUDA_PATH, the pip packages (nvidia-cuda-nvrtc) of the Python
 * running the process, of $VIRTUAL_ENV and of $CONDA_PREFIX, and
 * /usr/local/cuda. NO_NVRTC, with the places tried in ptxkit_last_error,
 * when none loads. */
ptxkit_status ptxkit_jit_library_get(char *buf, size_t size);

/* One line per PTXKIT_* environment variable whose value ptxkit cannot use
 * (PTXKIT_TUNE, PTXKIT_TUNE_BUDGET, PTXKIT_CACHE_MAX_MB), naming the default
 * it takes instead; empty when every value is usable. The library never
 * prints: an application shows these where its user will see them.
 * INVALID_ARGUMENT without a buffer; a short buffer truncates. */
ptxkit_status ptxkit_environment_notes_get(char *buf, size_t size);

/* The size the cache is trimmed to (least recently used first):
 * PTXKIT_CACHE_MAX_MB MiB, else (unset or unusable: see
 * ptxkit_environment_notes_get) 512 MiB. */
ptxkit_status ptxkit_cache_limit_get(unsigned long long *bytes);

#endif /* PTXKIT_EXPERIMENTAL */

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif
#endif
