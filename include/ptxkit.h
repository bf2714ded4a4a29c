/* ptxkit: run hand-written GPU kernels from plain C.
 *
 * The one public header. Every function that can fail returns a
 * ptxkit_status; details of the last failure are read with
 * ptxkit_last_error(). The others cannot fail and return their answer
 * directly (an invalid argument gets the neutral value documented at each:
 * NULL, 0, "" or "unknown"): names and sizes (ptxkit_status_string,
 * ptxkit_status_is_error,
 * ptxkit_*_name, ptxkit_dtype_size, ptxkit_load_op_define,
 * ptxkit_tune_family_name, ptxkit_config_defines), handles
 * (ptxkit_stream_handle, ptxkit_kernel_handle), messages (ptxkit_last_error,
 * ptxkit_last_error_copy, ptxkit_kernel_jit_log_get), ptxkit_versions_get,
 * ptxkit_jit_available and ptxkit_compiled_free. Device memory is addressed
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
 *  - ptxkit_context_close runs alone: no other call on the context may be in
 *    flight or follow it;
 *  - an object (stream, event, kernel's dynamic shared limit, compiled
 *    program, configuration, device buffer) must not be destroyed or changed
 *    while another thread uses it: ptxkit_stream_destroy, ptxkit_free,
 *    ptxkit_kernel_set_max_dynamic_shared and the like need the caller to
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
#define PTXKIT_VERSION_MINOR 2
#define PTXKIT_VERSION_PATCH 1
#define PTXKIT_VERSION_STRING "0.2.1"

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
ptxkit_status ptxkit_environment_notes(char *buf, size_t size);

/* Directory of the on-disk kernel cache (PTXKIT_CACHE_DIR, else
 * $XDG_CACHE_HOME/ptxkit when that is an absolute path, else
 * ~/.cache/ptxkit, the home directory from $HOME or the password
 * database). Empty if disabled. */
ptxkit_status ptxkit_cache_dir(char *buf, size_t size);
/* Number of cached kernels and their total size on disk. */
ptxkit_status ptxkit_cache_stats(size_t *files, size_t *bytes);
/* The size the cache is trimmed to (least recently used first):
 * PTXKIT_CACHE_MAX_MB MiB, else (unset or unusable: see
 * ptxkit_environment_notes) 512 MiB. */
ptxkit_status ptxkit_cache_limit(unsigned long long *bytes);
/* Removes every cached kernel. */
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
 * the CUDA runtime on the same device shares. */
ptxkit_status ptxkit_context_open(int ordinal, ptxkit_context **out);
/* Wraps a caller's CUcontext (passed as void*); the caller keeps ownership. */
ptxkit_status ptxkit_context_attach(void *cu_context, ptxkit_context **out);
/* Unloads modules and releases the primary context. NULL is a no-op. After
 * PTXKIT_ERROR_CONTEXT_LOST it still frees what it can; the driver then
 * refuses the GPU to the whole process until it restarts (CUDA's rule for
 * sticky faults), and a new ptxkit_context_open says so. */
ptxkit_status ptxkit_context_close(ptxkit_context *ctx);
ptxkit_status ptxkit_device_info_get(ptxkit_context *ctx, ptxkit_device_info *out);
/* Blocks until all work on the context has finished. */
ptxkit_status ptxkit_context_synchronize(ptxkit_context *ctx);
/* Makes the context's CUDA context current on the calling thread (pushes
 * it) until the matching ptxkit_context_leave (pops it), for code that calls
 * the driver or a CUDA library itself between ptxkit calls: cuBLAS on
 * ptxkit_stream_handle, cuLaunchKernel on ptxkit_kernel_handle. Pairs nest;
 * ptxkit's own calls need neither. */
ptxkit_status ptxkit_context_enter(ptxkit_context *ctx);
ptxkit_status ptxkit_context_leave(ptxkit_context *ctx);
/* Number of GPUs the driver sees (0 with no driver: status says why). */
ptxkit_status ptxkit_device_count(int *count);

/* ---- memory ------------------------------------------------------------ */

ptxkit_status ptxkit_malloc(ptxkit_context *ctx, size_t bytes, ptxkit_dptr *out);
ptxkit_status ptxkit_free(ptxkit_context *ctx, ptxkit_dptr ptr);
/* Page-locked host memory: needed for copies that overlap with kernels. */
ptxkit_status ptxkit_host_alloc(ptxkit_context *ctx, size_t bytes, void **out);
ptxkit_status ptxkit_host_free(ptxkit_context *ctx, void *ptr);
ptxkit_status ptxkit_memory_info_get(ptxkit_context *ctx, size_t *free_bytes, size_t *total_bytes);

ptxkit_status ptxkit_memcpy_htod(ptxkit_context *ctx, ptxkit_dptr dst, const void *src, size_t bytes);
ptxkit_status ptxkit_memcpy_dtoh(ptxkit_context *ctx, void *dst, ptxkit_dptr src, size_t bytes);
ptxkit_status ptxkit_memcpy_dtod(ptxkit_context *ctx, ptxkit_dptr dst, ptxkit_dptr src, size_t bytes);
ptxkit_status ptxkit_memcpy_htod_async(ptxkit_context *ctx, ptxkit_dptr dst, const void *src, size_t bytes, ptxkit_stream *stream);
ptxkit_status ptxkit_memcpy_dtoh_async(ptxkit_context *ctx, void *dst, ptxkit_dptr src, size_t bytes, ptxkit_stream *stream);
ptxkit_status ptxkit_memcpy_dtod_async(ptxkit_context *ctx, ptxkit_dptr dst, ptxkit_dptr src, size_t bytes, ptxkit_stream *stream);
/* Naming: functions are ptxkit_<object>_<verb>; those ending in _async
 * queue work on `stream` and return before it has run (the kernel families
 * -- copy, reduce, scan, transpose -- take a stream and are asynchronous
 * too, unless their comment says they wait). Device-side outputs come
 * first: (dst, src) as in memcpy, (out, in, n) for reduce and scan;
 * ptxkit_gemm keeps BLAS's order (C last), since it reads C too. */
/* Sets `count` bytes to `value`. */
ptxkit_status ptxkit_memset8_async(ptxkit_context *ctx, ptxkit_dptr dst, uint8_t value, size_t count, ptxkit_stream *stream);
/* Sets `count` 32-bit words to `value`; dst must be 4-byte aligned. */
ptxkit_status ptxkit_memset32_async(ptxkit_context *ctx, ptxkit_dptr dst, uint32_t value, size_t count, ptxkit_stream *stream);

/* ---- streams and events ------------------------------------------------ */

ptxkit_status ptxkit_stream_create(ptxkit_context *ctx, ptxkit_stream **out);
/* A ptxkit_stream for an existing CUstream of this context's CUDA context
 * (e.g. one the application's other CUDA code uses), which the caller keeps
 * owning. ptxkit_stream_destroy on it releases only the wrapper; release the
 * wrapper before destroying the CUstream. A CUstream of another CUDA context
 * is INVALID_ARGUMENT. */
ptxkit_status ptxkit_stream_wrap(ptxkit_context *ctx, void *cu_stream, ptxkit_stream **out);
/* Destroys a stream from ptxkit_stream_create; releases the wrapper only of
 * one from ptxkit_stream_wrap. NULL is a no-op. */
ptxkit_status ptxkit_stream_destroy(ptxkit_context *ctx, ptxkit_stream *stream);
ptxkit_status ptxkit_stream_synchronize(ptxkit_context *ctx, ptxkit_stream *stream);
/* The CUstream behind a stream (NULL stream: the default stream). */
void *ptxkit_stream_handle(ptxkit_stream *stream);

/* CUDA graph capture. The ops (copy, reduce, scan, transpose, gemm) may be
 * called on a stream being captured (ptxkit_graph_capture_begin, or
 * cuStreamBeginCapture on ptxkit_stream_handle); they then record their
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

ptxkit_status ptxkit_event_create(ptxkit_context *ctx, ptxkit_event **out);
ptxkit_status ptxkit_event_destroy(ptxkit_context *ctx, ptxkit_event *event);
ptxkit_status ptxkit_event_record(ptxkit_context *ctx, ptxkit_event *event, ptxkit_stream *stream);
ptxkit_status ptxkit_event_synchronize(ptxkit_context *ctx, ptxkit_event *event);
ptxkit_status ptxkit_event_elapsed_ms(ptxkit_context *ctx, ptxkit_event *start, ptxkit_event *end, float *ms);

/* Which stream a call uses. A NULL ptxkit_stream is CUDA's legacy default
 * stream (CUstream 0) of the context. Streams from ptxkit_stream_create are
 * non-blocking (CU_STREAM_NON_BLOCKING): their work never waits for the
 * legacy stream's, nor the legacy stream's for theirs; order them with
 * events (ptxkit_stream_wait_event) or synchronizations. The synchronous
 * copies (ptxkit_memcpy_htod/_dtoh/_dtod) and ptxkit_reduce_to_host run on
 * the legacy stream, so they do not wait for work queued on a ptxkit
 * stream: synchronize that stream (or wait for an event) first. The _async
 * copies and memsets, the ops, launches, ptxkit_host_func_launch and
 * ptxkit_graph_launch use the stream they are given. ptxkit_malloc,
 * ptxkit_free and the host memory calls use no stream (cuMemFree and the
 * host frees may wait for the whole device); ptxkit_context_synchronize
 * waits for every stream of the context. */

/* Stream flags for ptxkit_stream_create_ex. */
#define PTXKIT_STREAM_NON_BLOCKING 0u /* ptxkit_stream_create's: no implicit order with the legacy stream */
#define PTXKIT_STREAM_BLOCKING 1u     /* CUDA's default-flag stream: ordered with the legacy stream */

/* A stream with flags (PTXKIT_STREAM_*) and a priority in CUDA's numbers:
 * lower is more urgent, 0 is the default, valid values lie between
 * ptxkit_stream_priority_range_get's greatest and least (inclusive). A
 * priority outside that range, or an unknown flag, is INVALID_ARGUMENT
 * (the driver would clamp it silently). Priorities order the scheduling of
 * blocks waiting to run, never preempt running ones. Destroy with
 * ptxkit_stream_destroy. */
ptxkit_status ptxkit_stream_create_ex(ptxkit_context *ctx, unsigned flags, int priority, ptxkit_stream **out);
/* The device's stream priorities: *least (0, the default) and *greatest
 * (the most urgent, e.g. -5); numerically greatest <= least. Either
 * pointer may be NULL, not both. */
ptxkit_status ptxkit_stream_priority_range_get(ptxkit_context *ctx, int *least, int *greatest);
/* The priority a stream was created with (NULL: the legacy stream's). */
ptxkit_status ptxkit_stream_priority_get(ptxkit_context *ctx, ptxkit_stream *stream, int *priority);
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

/* Event flags for ptxkit_event_create_ex (or-ed). */
#define PTXKIT_EVENT_DEFAULT 0u
#define PTXKIT_EVENT_DISABLE_TIMING 1u /* cheaper record and wait; ptxkit_event_elapsed_ms refuses it */
#define PTXKIT_EVENT_BLOCKING_SYNC 2u  /* ptxkit_event_synchronize sleeps instead of spinning */
ptxkit_status ptxkit_event_create_ex(ptxkit_context *ctx, unsigned flags, ptxkit_event **out);
/* PTXKIT_SUCCESS when the work the event's last record follows has
 * finished (or it was never recorded), PTXKIT_NOT_READY (not an error)
 * while it has not; does not wait. An event recorded in a capture that is
 * still under way is PTXKIT_ERROR_CAPTURE. */
ptxkit_status ptxkit_event_query(ptxkit_context *ctx, ptxkit_event *event);

/* ---- pinned, registered and mapped host memory ---------------------------- */

/* Flags of ptxkit_host_alloc_ex and ptxkit_host_register (or-ed). */
#define PTXKIT_HOST_PORTABLE 1u       /* pinned for every CUDA context, not only this one's */
#define PTXKIT_HOST_MAPPED 2u         /* mapped into the device's address space: ptxkit_host_device_pointer_get */
#define PTXKIT_HOST_WRITE_COMBINED 4u /* alloc only: fast host writes and PCIe reads, very slow host reads */
#define PTXKIT_HOST_READ_ONLY 8u      /* register only: the device only reads it */

/* Page-locked host memory with flags (ptxkit_host_alloc is flags 0).
 * Free with ptxkit_host_free. READ_ONLY is INVALID_ARGUMENT here. */
ptxkit_status ptxkit_host_alloc_ex(ptxkit_context *ctx, size_t bytes, unsigned flags, void **out);
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
 * ptxkit_host_alloc_ex or ptxkit_host_register; `host` may point inside
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
 * that cannot be captured -- ptxkit_malloc, ptxkit_free, the host
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

/* Starts capturing `stream` (a created or wrapped stream: the legacy
 * stream, NULL, cannot be captured; INVALID_ARGUMENT). A stream already
 * being captured is PTXKIT_ERROR_CAPTURE. End it on the same thread, with
 * ptxkit_graph_capture_end or ptxkit_graph_update. */
ptxkit_status ptxkit_graph_capture_begin(ptxkit_context *ctx, ptxkit_stream *stream);
/* Ends the capture of `stream` and instantiates what it recorded: *out is
 * a new graph (destroy with ptxkit_graph_destroy). On failure *out is NULL
 * and the capture is over either way. */
ptxkit_status ptxkit_graph_capture_end(ptxkit_context *ctx, ptxkit_stream *stream, ptxkit_graph **out);

typedef enum ptxkit_graph_update_kind {
    PTXKIT_GRAPH_UPDATED_IN_PLACE = 0, /* same topology: the executable graph's arguments were patched */
    PTXKIT_GRAPH_REINSTANTIATED = 1,   /* the topology changed: a new executable graph replaced it */
} ptxkit_graph_update_kind;
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
/* The number of nodes of the graph as captured (kernels, copies, memsets,
 * host functions, event nodes); an empty capture has 0. */
ptxkit_status ptxkit_graph_node_count_get(ptxkit_context *ctx, ptxkit_graph *graph, size_t *count);
/* Releases the graph; its replays in flight finish first (the driver's
 * rule). NULL graph or context: nothing. */
void ptxkit_graph_destroy(ptxkit_context *ctx, ptxkit_graph *graph);

/* ---- kernel parameters shared by the families -------------------------- */

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

/* "ca", "cg", ..., "default"; NULL for a value out of range. */
const char *ptxkit_load_op_name(ptxkit_load_op op);
/* Parses a name as printed by ptxkit_load_op_name. */
ptxkit_status ptxkit_load_op_parse(const char *name, ptxkit_load_op *out);

/* How a kernel reaches the GPU. */
typedef enum ptxkit_path {
    PTXKIT_PATH_AUTO = 0,      /* JIT where NVRTC is present, else PTX */
    PTXKIT_PATH_JIT,           /* NVRTC-compiled CUBIN for this GPU */
    PTXKIT_PATH_PTX            /* the precompiled PTX embedded in the library */
} ptxkit_path;

/* ---- configurations ----------------------------------------------------- */

/* A configuration: named integer parameters, the one type that every op
 * (its `config` argument), every tunable (its callbacks and
 * ptxkit_tunable_config) and the tuning database and record
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
 * ptxkit_kernel_get (a tunable's kernel takes its parameters so), written
 * into caller-owned `text`: returns text->defines (NULL for a NULL
 * argument), valid while text is. */
typedef struct ptxkit_config_defines_text {
    char text[PTXKIT_CONFIG_MAX_PARAMS][PTXKIT_CONFIG_NAME_SIZE + 24];
    const char *defines[PTXKIT_CONFIG_MAX_PARAMS];
} ptxkit_config_defines_text;
const char *const *ptxkit_config_defines(const ptxkit_config *config, ptxkit_config_defines_text *text);

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

const char *ptxkit_dtype_name(ptxkit_dtype type);
size_t ptxkit_dtype_size(ptxkit_dtype type);

/* ---- copy -------------------------------------------------------------- */

/* Copies `bytes` bytes between any two device addresses (no overlap), with
 * 4-, 8- or 16-byte vector accesses where the addresses allow and a
 * funnel-shift path where they are not mutually aligned. config (NULL:
 * tuned or default): the common parameters, "unroll" (vectors in flight per
 * thread, 1 to 64) and "blocks_per_sm" (a persistent grid of that many
 * blocks per SM, 1 to 64; 0: one block per tile). */
ptxkit_status ptxkit_copy(ptxkit_context *ctx, ptxkit_dptr dst, ptxkit_dptr src, size_t bytes,
                          const ptxkit_config *config, ptxkit_stream *stream);

/* ---- reduction --------------------------------------------------------- */

typedef enum ptxkit_reduce_op {
    PTXKIT_REDUCE_SUM = 0,  /* integers wrap modulo 2^w */
    PTXKIT_REDUCE_MIN,
    PTXKIT_REDUCE_MAX,
    PTXKIT_REDUCE_AND,      /* unsigned types only */
    PTXKIT_REDUCE_OR,
    PTXKIT_REDUCE_XOR,
    PTXKIT_REDUCE_OP_COUNT
} ptxkit_reduce_op;

const char *ptxkit_reduce_op_name(ptxkit_reduce_op op);
/* Whether ptxkit_reduce provides (op, type) (see below): SUCCESS, or
 * UNSUPPORTED with the reason in ptxkit_last_error(); INVALID_ARGUMENT
 * for values out of range. Plain CPU code: no context or GPU needed; any
 * thread. */
ptxkit_status ptxkit_reduce_supported(ptxkit_reduce_op op, ptxkit_dtype type);

/* Reduces n elements at `in` (any element-aligned address) into one element
 * written at `out` on `stream`. n == 0 writes the operator's identity.
 * Provided: sum, min, max of int32, uint32, float32, float64; sum of int64
 * and uint64; and, or, xor of the integer types (else UNSUPPORTED). Integer
 * sums wrap modulo 2^w. Float sums add in a tree order: within 1e-5
 * (float32) / 1e-13 (float64) of sum |x_i| from the exact sum. Float min/max
 * ignore NaNs as fminf/fmaxf do. One launch; any number of streams may
 * reduce at the same time. config (NULL: tuned or default): the common
 * parameters, "loads_in_flight" (vector loads of vector_bytes, 16 by
 * default, in flight per thread, 1 to 16) and "blocks_per_sm" (grid blocks
 * per SM, 1 to 64; 0: from occupancy). During capture (see the stream
 * functions): UNSUPPORTED where the stream holds no scratch yet. */
ptxkit_status ptxkit_reduce(ptxkit_context *ctx, ptxkit_reduce_op op, ptxkit_dtype type, ptxkit_dptr out,
                            ptxkit_dptr in, size_t n, const ptxkit_config *config, ptxkit_stream *stream);
/* Same, and waits for the result: `result` points to one element of `type`.
 * Runs on the default stream and allocates a small result buffer per call. */
ptxkit_status ptxkit_reduce_to_host(ptxkit_context *ctx, ptxkit_reduce_op op, ptxkit_dtype type, void *result,
                                    ptxkit_dptr in, size_t n, const ptxkit_config *config);
/* The configuration ptxkit_reduce runs for (op, type) at n elements with
 * config (NULL: the defaults or the tuned entry), into *out, resolved:
 * "path" (JIT or PTX, as AUTO resolves where NVRTC is present),
 * "load_op", "block_size", "vector_bytes", "loads_in_flight" and
 * "blocks_per_sm" (0: from occupancy). Nothing is compiled, launched or
 * tuned (PTXKIT_TUNE=auto does not tune a missing bucket for it). Errors:
 * the call's configuration and operator errors; INVALID_ARGUMENT for a
 * NULL context or out. Any thread. */
ptxkit_status ptxkit_reduce_config_get(ptxkit_context *ctx, ptxkit_reduce_op op, ptxkit_dtype type, size_t n,
                                       const ptxkit_config *config, ptxkit_config *out);

/* ---- scan (prefix sum) ------------------------------------------------- */

typedef enum ptxkit_scan_kind {
    PTXKIT_SCAN_INCLUSIVE = 0,  /* out[i] = in[0] op in[1] op ... op in[i] */
    PTXKIT_SCAN_EXCLUSIVE,      /* out[0] = identity, out[i] = in[0] op ... op in[i-1] */
    PTXKIT_SCAN_KIND_COUNT
} ptxkit_scan_kind;

/* "inclusive", "exclusive"; NULL for a value out of range. */
const char *ptxkit_scan_kind_name(ptxkit_scan_kind kind);
/* Whether ptxkit_scan provides (op, type): as ptxkit_reduce_supported. */
ptxkit_status ptxkit_scan_supported(ptxkit_reduce_op op, ptxkit_dtype type);

/* Scans n elements at `in` into n elements at `out` on `stream`; the result
 * stays on the device. Operators and types as ptxkit_reduce: sum, min, max
 * of int32, uint32, float32, float64; sum of int64 and uint64; and, or, xor
 * of the integer types (else UNSUPPORTED). The exclusive identity is 0 for
 * sum, or and xor, all ones for and, the type's largest value (+inf) for
 * min and its smallest (-inf) for max. Integer sums wrap modulo 2^w; float
 * min/max ignore NaNs as fminf/fmaxf do.
 *
 * in and out may be any element-aligned addresses (the fastest case: the
 * same offset from a 16-byte boundary); in == out scans in place; any other
 * overlap is INVALID_ARGUMENT. n == 0 does nothing. One launch, one pass
 * over the data (n read, n written): single-pass scan with decoupled
 * look-back (Merrill & Garland 2016), with per-context scratch, so any
 * number of streams may scan at the same time.
 *
 * Float sums: the array is cut into tiles of T elements. On sm_90 and later
 * (JIT path, tiles staged in shared memory) T = block size x
 * vectors_per_thread x elements per 16-byte vector: with the defaults 256 x 16
 * below 64 MB of data and 1024 x 7 from 64 MB, 16384 or 28672 for float32
 * and 8192 or 14336 for float64. Elsewhere T = (block size - 32, the
 * look-back warp) x vectors_per_thread x elements per vector: 11520 for
 * float32 and 5760 for float64 with the defaults there, 512 threads and 6
 * vectors. Within a tile the sum is a tree of depth under 48; across
 * tiles it is sequential: a tile's prefix is an earlier tile's prefix plus
 * a tree sum of the tiles between. So out[i] differs from the exact prefix
 * sum by at most (ceil((i + 1) / T) + 48) * u *
 * sum_{j <= i} |in[j]|, with u = 2^-24 (float32) or 2^-53 (float64): the
 * bound of a sequential sum over tiles (typical errors are far smaller, and
 * grow like the square root of the tile count). Which earlier prefix a tile
 * builds on depends on timing, so float sums may differ in their last bits
 * from run to run; integer results never do. During capture (see the stream
 * functions): UNSUPPORTED where the stream holds no scratch, or too little
 * for n; a captured scan clears its tile status words in the graph.
 * config (NULL: tuned or default): the common parameters and
 * "vectors_per_thread" (vectors of vector_bytes per thread in a tile, 1 to
 * 16); one block per tile, so no blocks_per_sm. */
ptxkit_status ptxkit_scan(ptxkit_context *ctx, ptxkit_scan_kind kind, ptxkit_reduce_op op, ptxkit_dtype type,
                          ptxkit_dptr out, ptxkit_dptr in, size_t n, const ptxkit_config *config,
                          ptxkit_stream *stream);
/* The configuration ptxkit_scan runs for (op, type) at n elements, as
 * ptxkit_reduce_config_get: "path", "load_op", "block_size",
 * "vector_bytes" and "vectors_per_thread". */
ptxkit_status ptxkit_scan_config_get(ptxkit_context *ctx, ptxkit_reduce_op op, ptxkit_dtype type, size_t n,
                                     const ptxkit_config *config, ptxkit_config *out);


/* ---- host arrays ---------------------------------------------------------
 *
 * Reduce, scan and transform of arrays that sit in host memory, at the
 * speed of the bus: the array is cut into chunks that flow through a
 * pipeline over several streams (H2D copy -> kernel -> D2H copy, ordered
 * by events), so the copies of one chunk overlap the kernels of others.
 * Partial results are combined on the device (reduce: one partial per
 * chunk, reduced on the GPU, one small read-back; scan: the carry is
 * chained on the device from chunk to chunk), so nothing but the data and
 * one result crosses the bus. Named ptxkit_host_<verb> as the other calls
 * on host memory (ptxkit_host_alloc, ptxkit_host_register): the object is
 * the host array.
 *
 * Where the data come from (ptxkit_host_options.path; the same for out):
 *  - pinned memory (ptxkit_host_alloc*, or a range ptxkit_host_register
 *    page-locked): the copy engines read and write the caller's buffer
 *    directly (detected per call with cuPointerGetAttributes);
 *  - pageable memory: either staged, host threads copying each chunk into
 *    a ring of pinned buffers while the previous chunk is on the bus, or
 *    registered (cuMemHostRegister) for the call and unregistered at its
 *    end; AUTO picks by size (below one chunk a single copy by the calling
 *    thread is cheapest; above, staging with several threads costs less
 *    than pinning every page and unpinning it again unless too few copy
 *    threads are available, and then registration is used);
 *  - mapped (PTXKIT_HOST_PATH_MAPPED): no copies; the kernels read and
 *    write host memory through its device address (zero-copy), for
 *    comparison. Arrays must be element-aligned (MISALIGNED otherwise).
 *    Pageable arrays are registered mapped for the call (INVALID_ARGUMENT
 *    where the driver refuses, e.g. a page of them already registered:
 *    in and out sharing a page, or a range the application registered);
 *    pinned ones must be mapped (PTXKIT_HOST_MAPPED, or any pinned memory
 *    on a system with unified addressing).
 * A pageable array the driver refuses to register (REGISTERED, or AUTO
 * choosing it) is staged instead.
 * Other paths accept host pointers at any byte address.
 *
 * The pinned staging ring, its device buffers and its streams belong to the
 * context: allocated at the first call that needs them (grown when a call
 * asks for larger chunks or more streams), freed when the context closes.
 * Calls on one context take the ring in turn (one runs at a time; others
 * wait); calls on different contexts run in parallel. The calls are
 * synchronous: they return when the result is in host memory, and they run
 * on the ring's own non-blocking streams, so they do not wait for work the
 * caller queued on other streams: synchronize those first when the input
 * is written by the GPU. Not capturable: PTXKIT_ERROR_CAPTURE on a thread
 * that is capturing a stream (nothing is done).
 *
 * Errors: INVALID_ARGUMENT for NULL pointers (with n > 0), an enum out of
 * range, options out of range, out overlapping in (scan, transform), or a
 * device address given as a host pointer; OVERFLOW when n elements do not
 * fit in size_t bytes or in the address space; UNSUPPORTED for an (op,
 * type) the device op lacks. The input is never written. On any error
 * every copy has finished before the call returns (nothing touches the
 * caller's memory afterwards); a reduce writes *result only on success,
 * while scan and transform write `out` chunk by chunk, so after an error
 * its contents are undefined (the status is always an error then). */

/* Chunk size and stream count of the pipeline when the options leave them
 * 0: chunks large enough that a copy runs at the bus's full rate and small
 * enough that the pipeline fills and drains quickly. The streams are the
 * kernels' (chunk i's on stream i mod k, each with its buffers: k chunks
 * in flight); every upload runs on one more stream and every download on
 * another, in chunk order, so each direction of the bus stays busy with
 * one copy at a time. */
#define PTXKIT_HOST_CHUNK_BYTES ((size_t)16 << 20)
#define PTXKIT_HOST_STREAMS 4
/* A reduce whose input is not staged (pinned or registered) keeps two
 * chunks in flight: its kernels are short, and with more streams its
 * uploads ran measurably slower on an H200. */
#define PTXKIT_HOST_REDUCE_STREAMS 2
#define PTXKIT_HOST_MAX_STREAMS 8
/* The most host threads copying pageable data (0 in the options: up to
 * this many, never more than the processors online). */
#define PTXKIT_HOST_MAX_THREADS 16

typedef enum ptxkit_host_path {
    PTXKIT_HOST_PATH_AUTO = 0,   /* pinned: directly; pageable: staged or registered, by size */
    PTXKIT_HOST_PATH_STAGED,     /* pageable data go through the pinned ring (pinned: directly) */
    PTXKIT_HOST_PATH_REGISTERED, /* pageable data are registered for the call (pinned: directly) */
    PTXKIT_HOST_PATH_MAPPED,     /* zero-copy: kernels read and write host memory over the bus */
    PTXKIT_HOST_PATH_COUNT
} ptxkit_host_path;

/* "auto", "staged", "registered", "mapped"; NULL for a value out of range. */
const char *ptxkit_host_path_name(ptxkit_host_path path);

/* Options of the host-array calls; zero-initialize (or pass NULL) for the
 * defaults. */
typedef struct ptxkit_host_options {
    ptxkit_host_path path;
    size_t chunk_bytes;  /* 0: PTXKIT_HOST_CHUNK_BYTES; else 64 KiB to 1 GiB */
    int streams;         /* kernel streams (chunks in flight): 0: PTXKIT_HOST_STREAMS (a reduce of
                          * data not staged: PTXKIT_HOST_REDUCE_STREAMS); else 1..PTXKIT_HOST_MAX_STREAMS */
    int threads;         /* host threads staging pageable data, the caller's included: 0 default,
                          * else 1..PTXKIT_HOST_MAX_THREADS */
    int reserved[4];     /* zero: later 0.x releases give these meaning, 0 keeping today's */
} ptxkit_host_options;

/* Reduces n elements of `type` at host address `in` into *result (one
 * element of `type`, host memory). Operators and types as ptxkit_reduce;
 * n == 0 writes the operator's identity. Float sums: each chunk is reduced
 * by ptxkit_reduce and the chunks' partials by another, so the bound is
 * ptxkit_reduce's: within 1e-5 (float32) / 1e-13 (float64) of sum |x_i|
 * from the exact sum. */
ptxkit_status ptxkit_host_reduce(ptxkit_context *ctx, ptxkit_reduce_op op, ptxkit_dtype type, void *result,
                                 const void *in, size_t n, const ptxkit_host_options *options);
/* Scans n elements at host address `in` into n elements at host address
 * `out` (no overlap, not even in place: INVALID_ARGUMENT). Kinds,
 * operators, types and identities as ptxkit_scan; n == 0 does nothing.
 * Each chunk is scanned by ptxkit_scan and the running total of the chunks
 * before it is added on the device, so a float sum's out[i] is within
 * ptxkit_scan's bound plus ceil((i + 1) / C) * u * sum_{j <= i} |in[j]|, C
 * the elements per chunk: the chunks are one more level of sequential
 * tiles. */
ptxkit_status ptxkit_host_scan(ptxkit_context *ctx, ptxkit_scan_kind kind, ptxkit_reduce_op op, ptxkit_dtype type,
                               void *out, const void *in, size_t n, const ptxkit_host_options *options);
/* Host -> device -> host: each chunk of n elements of `type` at `in` is
 * copied to the device, `kernel` (an application kernel of this context)
 * runs on it, and its output is copied back to the same place of `out`
 * (no overlap with in: INVALID_ARGUMENT). The kernel's signature is
 * (T *out, const T *in, unsigned long long n), T the element type; it
 * writes out[i] for every i < n from in (any function of in), covering
 * [0, n) with a grid-stride loop: it is launched with 256-thread blocks
 * and at most 32 blocks per SM, no dynamic shared memory, on the chunk (n
 * is the chunk's count; out and in are 256-byte aligned device addresses,
 * or, mapped, the host arrays' device addresses). kernel NULL copies in to
 * out through the device (a round trip, no kernel). n == 0 does nothing. */
struct ptxkit_kernel; /* ptxkit_kernel, declared with the programs below */
ptxkit_status ptxkit_host_transform(ptxkit_context *ctx, struct ptxkit_kernel *kernel, ptxkit_dtype type, void *out,
                                    const void *in, size_t n, const ptxkit_host_options *options);

/* ---- transpose --------------------------------------------------------- */

typedef enum ptxkit_transpose_kind {
    PTXKIT_TRANSPOSE_PADDED = 0,  /* shared tile padded against bank conflicts */
    PTXKIT_TRANSPOSE_NAIVE,       /* coalesced reads, strided writes */
    PTXKIT_TRANSPOSE_TILED        /* shared tile, unpadded */
} ptxkit_transpose_kind;

/* dst (cols x rows) = transpose of src (rows x cols), both row-major and
 * dense; float32 or float64. config (NULL: tuned or default): the common
 * parameters and "tile", the side of the square tile a block moves (16, 32,
 * 64 or 128); block_size threads move it (tile <= block_size <= tile^2, at
 * most 64 elements each; without block_size the default narrowed to fit);
 * vector_bytes is the access width where whole tiles allow it. Where
 * tile, block_size and vector_bytes are all absent, the padded kind takes the tuned configuration
 * (`ptxkit tune transpose`) of its type and shape class (sides of whole
 * 16-byte vectors or not) for the power of two nearest rows x cols, else the
 * built-in defaults. */
ptxkit_status ptxkit_transpose(ptxkit_context *ctx, ptxkit_dtype type, ptxkit_dptr dst, ptxkit_dptr src,
                               size_t rows, size_t cols, ptxkit_transpose_kind kind,
                               const ptxkit_config *config, ptxkit_stream *stream);
/* The configuration ptxkit_transpose runs for these arguments (config as
 * the call takes it: NULL for the defaults or the tuned entry), into *out:
 * "tile", "block_size" and "vector_bytes", resolved. Nothing is compiled or
 * launched; the errors are the call's argument errors, and INVALID_ARGUMENT
 * for a NULL out. */
ptxkit_status ptxkit_transpose_config_get(ptxkit_context *ctx, ptxkit_dtype type, size_t rows, size_t cols,
                                          ptxkit_transpose_kind kind, const ptxkit_config *config, ptxkit_config *out);

/* ---- matrix multiply (GEMM) --------------------------------------------- */

/* op(X): the matrix as stored, or its transpose. */
typedef enum ptxkit_gemm_op {
    PTXKIT_GEMM_N = 0,  /* op(X) = X */
    PTXKIT_GEMM_T,      /* op(X) = X^T */
    PTXKIT_GEMM_OP_COUNT
} ptxkit_gemm_op;

/* "n", "t"; NULL for a value out of range. */
const char *ptxkit_gemm_op_name(ptxkit_gemm_op op);

/* The GEMM kernels' configuration, the parameters ptxkit_gemm reads from
 * a ptxkit_config (families/gemm/gemm.cu, and gemm_dmma.cu for float64
 * from sm_80 on): a block of (bm / tm) x (bn / tn) threads computes a
 * "bm" x "bn" tile of C, k in steps of "bk" through a ring of "stages"
 * shared-memory buffers fed by cp.async; each thread holds "tm" x "tn"
 * elements of C in registers; the block's warps are "warps_m" along M.
 * "split_k" cuts K into that many slices (at most 64), computed by
 * separate blocks and summed by a second kernel (absent or 0: chosen by
 * shape, 1: none). On the FP64 tensor cores a warp's tile is (8 tm) x
 * (4 tn), mma tiles of 16 x 8, so warps_m = bm / (8 tm); tm even, tn a
 * multiple of 4, tm x tn <= 64. No other names. */

/* C = alpha * op(A) * op(B) + beta * C on `stream`, float32 or float64
 * (else UNSUPPORTED), all matrices row-major: op(A) is m x k, op(B) k x n,
 * C m x n. A is stored m x k (op_a N, lda >= k) or k x m (op_a T, lda >=
 * m); B k x n (op_b N, ldb >= n) or n x k (op_b T, ldb >= k); ldc >= n;
 * every leading dimension at least 1. Pointers are element-aligned (the
 * fastest case: 16-byte aligned with leading dimensions of whole 16-byte
 * vectors). Any m, n, k up to 2^31 - 1; m or n == 0 does nothing; k == 0
 * or alpha == 0 reads neither A nor B (C = beta * C). beta == 0 never reads
 * C, so C may hold NaNs. C must not overlap A or B (INVALID_ARGUMENT).
 *
 * float32 (and float64 before sm_80): FMA on the CUDA cores, no tensor
 * cores, so results compare with cuBLAS in its pedantic FP32 mode; each
 * element of C is one sequential chain of fused multiply-adds over k (in k
 * order). float64 from sm_80 on: the FP64 tensor cores (mma.sync f64,
 * round to nearest, which cublasDgemm uses even in pedantic mode), summing
 * over k in a fixed order that is not k order. With split-K the slices'
 * sums are added in slice order. So |C - exact| <= (k + 2) * u * (|alpha| *
 * sum_k |a_ik b_kj| + |beta c_ij|) with u = 2^-24 (float32) or 2^-53
 * (float64). Results do not change from run to run.
 *
 * config: NULL or without bm .. stages for the tuned configuration
 * (`ptxkit tune gemm`) of the call's type and shape class (small m, small
 * n, small k or none, a side being small below 256) at the size bucket
 * floor(log2(m n k)), else the built-in one; else a whole configuration
 * (bm .. stages all set; split_k optional), INVALID_ARGUMENT when the
 * kernel cannot run it or for a name above not listed. JIT only:
 * NO_NVRTC where NVRTC is missing and the kernel is not in the disk cache.
 * Split-K uses per-stream scratch: calls on different streams stay
 * correct, ordered through it. During capture (see the stream functions):
 * UNSUPPORTED where split-K needs more scratch than the stream holds. */
ptxkit_status ptxkit_gemm(ptxkit_context *ctx, ptxkit_dtype type, ptxkit_gemm_op op_a, ptxkit_gemm_op op_b, size_t m,
                          size_t n, size_t k, double alpha, ptxkit_dptr a, size_t lda, ptxkit_dptr b, size_t ldb,
                          double beta, ptxkit_dptr c, size_t ldc, const ptxkit_config *config,
                          ptxkit_stream *stream);

/* The configuration ptxkit_gemm runs for (type, m, n, k) with config NULL,
 * into *out: all eight names (split_k as the call would choose it); *tuned
 * (may be NULL) receives whether it came from the tuning database. */
ptxkit_status ptxkit_gemm_config_get(ptxkit_context *ctx, ptxkit_dtype type, size_t m, size_t n, size_t k,
                                     ptxkit_config *out, int *tuned);
/* The candidate configurations `ptxkit bench gemm --tiles sweep` and the
 * tests time for a type on this context's GPU (float64 differs between GPUs
 * with and without FP64 tensor cores), split_k 0 (by shape). Copies up to
 * capacity of them to out (may be NULL with capacity 0); *count receives
 * how many there are. */
ptxkit_status ptxkit_gemm_sweep_tiles(ptxkit_context *ctx, ptxkit_dtype type, ptxkit_config *out, int capacity,
                                      int *count);
/* Compiles and loads the kernels a configuration (config NULL: the
 * built-in or tuned one) runs for these operand layouts, without
 * launching: an application warms its kernels ahead. INVALID_ARGUMENT for
 * a config that is not a configuration, UNSUPPORTED for a type other than
 * float32/float64. */
ptxkit_status ptxkit_gemm_prepare(ptxkit_context *ctx, ptxkit_dtype type, ptxkit_gemm_op op_a, ptxkit_gemm_op op_b,
                                  const ptxkit_config *config);
/* The K slices ptxkit_gemm uses for this configuration at (m, n, k) on
 * this context's GPU: its split_k, or when that is absent or 0 the one
 * chosen by shape (1: no split). INVALID_ARGUMENT for NULL, or a config
 * without positive bm, bn and bk. */
ptxkit_status ptxkit_gemm_split_k(ptxkit_context *ctx, const ptxkit_config *config, size_t m, size_t n, size_t k,
                                  int *split_k);


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
ptxkit_status ptxkit_program_destroy(ptxkit_program *program);

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
 * ptxkit_program_kernel_get is the same call under the name that pairs it
 * with ptxkit_module_kernel_get; ptxkit_program_module_get compiles several
 * kernels and variables into one module (see "modules" below). */
#define PTXKIT_MAX_KERNEL_DEFINES 32
ptxkit_status ptxkit_kernel_get(ptxkit_context *ctx, ptxkit_program *program, const char *entry,
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
 * consulted. Free with ptxkit_compiled_free. */
ptxkit_status ptxkit_program_compile(const ptxkit_program *program, const char *entry, const char *const *defines,
                                     int define_count, int arch, int want_ptx, ptxkit_compiled *out);
void ptxkit_compiled_free(ptxkit_compiled *compiled);

/* ptxkit's own kernel text, embedded in the library: the families' CUDA C
 * sources ("copy.cu", "reduce.cu", ...), the device headers every program
 * may include ("ptxkit_load.cuh" is <ptxkit/load.cuh>) and the precompiled
 * PTX ("copy.ptx"). A starting point for a kernel of your own, or a family
 * compiled with other defines (ptxkit_program_create on the text). The name
 * of file `index` (0, 1, ...), NULL past the last. */
const char *ptxkit_builtin_source_name(int index);
/* The text (NUL-terminated, static) and size of the file `name`; NOT_FOUND
 * for a name the library does not hold. size may be NULL. */
ptxkit_status ptxkit_builtin_source(const char *name, const char **text, size_t *size);

/* The token the LOAD_OP define takes for an operator ("0".."6"). */
const char *ptxkit_load_op_define(ptxkit_load_op op);

/* A family's compile-time constants that carry a tunable parameter
 * ("BLOCK_SIZE", copy's "UNROLL", ...): the name of the index-th of family's
 * (NULL past the last or for an unknown family), and the values ptxkit builds
 * it with, as text ("32, 64, 128, ...") into buf. NOT_FOUND when the family
 * declares no such constant, INVALID_ARGUMENT for NULL or size 0 (the
 * reason in ptxkit_last_error()); a list longer than buf is cut. Plain
 * CPU code: no context needed. */
const char *ptxkit_family_define_name(const char *family, int index);
ptxkit_status ptxkit_family_define_values(const char *family, const char *define, char *buf, size_t size);

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
/* The kernel `entry` (the name as it appears in the image: mangled for C++);
 * the same as ptxkit_module_kernel_get, its name from now on. Variables:
 * ptxkit_module_variable_get by symbol. */
ptxkit_status ptxkit_module_kernel(ptxkit_module *module, const char *entry, ptxkit_kernel **out);
/* How many plain global loads the operator was given, and how many were
 * left alone (already with an operator, or memory-ordered). */
ptxkit_status ptxkit_module_rewrite_counts(const ptxkit_module *module, int *rewritten, int *kept);

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
 * the context; ptxkit_kernel_module_get returns this module. Any thread.
 * (ptxkit_module_kernel is the same call under its former name.) */
ptxkit_status ptxkit_module_kernel_get(ptxkit_module *module, const char *entry, ptxkit_kernel **out);
/* The kernel `entry` of the program, compiled with defines (ptxkit_kernel_get
 * under the name that pairs it with ptxkit_module_kernel_get; same contract).
 * Its module (ptxkit_kernel_module_get) is the program's compiled for the
 * one name entry. */
ptxkit_status ptxkit_program_kernel_get(ptxkit_context *ctx, ptxkit_program *program, const char *entry,
                                        const char *const *defines, int define_count, ptxkit_kernel **out);
/* The module a kernel was taken from (by ptxkit_program_kernel_get,
 * ptxkit_kernel_get or ptxkit_module_kernel_get), to reach the variables
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
 * (ptxkit_memcpy_htod: returns once the copy is done), or out of it into
 * dst (ptxkit_memcpy_dtoh). INVALID_ARGUMENT when offset + bytes
 * overruns the variable or the host buffer is NULL with bytes > 0;
 * NOT_FOUND as ptxkit_module_variable_get. bytes 0 copies nothing. */
ptxkit_status ptxkit_module_variable_write(ptxkit_module *module, const char *name, size_t offset, const void *src,
                                           size_t bytes);
ptxkit_status ptxkit_module_variable_read(ptxkit_module *module, const char *name, size_t offset, void *dst,
                                          size_t bytes);
/* The same, queued on `stream` (NULL: the default stream) and returning
 * before it has run, as ptxkit_memcpy_htod_async/_dtoh_async: ordered with
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
 * ptxkit cannot check the number or types of args against the kernel's
 * parameters (the driver API does not expose them for every image): a wrong
 * array is undefined behaviour, as with cuLaunchKernel. Dimensions beyond
 * the device limits and shared memory beyond the kernel's limit are
 * INVALID_ARGUMENT before anything is launched. A fault inside the kernel
 * shows at the next synchronizing call as LAUNCH; when the driver marks the
 * context as unusable (a sticky error: illegal address, trap) the status is
 * CONTEXT_LOST and only ptxkit_context_close remains meaningful. */
ptxkit_status ptxkit_launch(ptxkit_kernel *kernel, ptxkit_dim3 grid, ptxkit_dim3 block, size_t shared_bytes,
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
 * NULL window removes it. The window is checked as for ptxkit_launch_ex. */
ptxkit_status ptxkit_stream_access_window_set(ptxkit_context *ctx, ptxkit_stream *stream,
                                              const ptxkit_access_window *window);
/* The window the driver holds for the stream (bytes 0: none). */
ptxkit_status ptxkit_stream_access_window_get(ptxkit_context *ctx, ptxkit_stream *stream, ptxkit_access_window *out);

/* Attributes of ptxkit_launch_ex; zero-initialize for none. */
typedef struct ptxkit_launch_attributes {
    ptxkit_dim3 cluster;           /* thread-block cluster (sm_90+); 0: none */
    int cooperative;               /* grid-wide synchronization allowed */
    const ptxkit_access_window *access_window; /* NULL: none */
    int reserved[4];      /* zero: later 0.x releases give these meaning, 0 keeping today's */
} ptxkit_launch_attributes;

/* ptxkit_launch with attributes, through cuLaunchKernelEx. UNSUPPORTED where
 * the driver or GPU lacks one (clusters before sm_90, no cuLaunchKernelEx). */
ptxkit_status ptxkit_launch_ex(ptxkit_kernel *kernel, ptxkit_dim3 grid, ptxkit_dim3 block, size_t shared_bytes,
                               ptxkit_stream *stream, void **args, const ptxkit_launch_attributes *attributes);

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
ptxkit_status ptxkit_kernel_occupancy(ptxkit_kernel *kernel, int block_threads, size_t shared_bytes,
                                      int *blocks_per_sm);
/* The grid of a grid-stride launch: resident blocks per SM x SMs, at most
 * max_blocks (0: no cap). */
ptxkit_status ptxkit_kernel_grid_size(ptxkit_kernel *kernel, int block_threads, size_t shared_bytes,
                                      size_t max_blocks, unsigned *grid);
/* The block size that maximizes the kernel's occupancy with `shared_bytes`
 * of dynamic shared memory per block (cuOccupancyMaxPotentialBlockSize),
 * and the smallest grid (min_grid, may be NULL) that fills the GPU with it. */
ptxkit_status ptxkit_kernel_max_occupancy_block_get(ptxkit_kernel *kernel, size_t shared_bytes, int *block_threads,
                                                   int *min_grid);
/* The kernel's parameter list as the driver knows it: *count parameters,
 * the first `capacity` of them with their byte offsets and sizes (offsets
 * and sizes may be NULL when capacity is 0). UNSUPPORTED on drivers before
 * CUDA 12.4 (no cuFuncGetParamInfo). */
ptxkit_status ptxkit_kernel_params_get(ptxkit_kernel *kernel, size_t *count, size_t *offsets, size_t *sizes,
                                       size_t capacity);
/* ptxkit_launch after checking the arguments against the parameter list:
 * arg_sizes[i] is the size of *args[i] (sizeof of what args[i] points to).
 * A count or size that differs from the kernel's is INVALID_ARGUMENT,
 * naming the parameter, before anything runs; UNSUPPORTED before CUDA 12.4. */
ptxkit_status ptxkit_launch_checked(ptxkit_kernel *kernel, ptxkit_dim3 grid, ptxkit_dim3 block, size_t shared_bytes,
                                    ptxkit_stream *stream, void **args, const size_t *arg_sizes, size_t arg_count);
/* Raises the kernel's dynamic shared memory limit (up to the device's
 * opt-in maximum; beyond it INVALID_ARGUMENT). */
ptxkit_status ptxkit_kernel_set_max_dynamic_shared(ptxkit_kernel *kernel, size_t bytes);
/* The CUfunction behind a kernel, for code that calls the driver itself. */
void *ptxkit_kernel_handle(ptxkit_kernel *kernel);
/* The log of the compile and module load that produced this kernel, in
 * this context: what was loaded, the driver JIT's wall time and its info
 * log (CU_JIT_INFO_LOG_BUFFER), then NVRTC's log (warnings) where NVRTC
 * compiled it just then (a kernel from the disk cache has none), cut to
 * 4 KiB. Kernels of one module share it; later loads of other kernels,
 * from any thread, leave it. "" for NULL. Valid as long as the context. A
 * compile or load that fails leaves its logs in ptxkit_last_error instead.
 * Any thread. */
const char *ptxkit_kernel_jit_log_get(const ptxkit_kernel *kernel);

/* ---- autotuning -------------------------------------------------------- */

/* The tuner times JIT variants of a kernel family (block size, items per
 * thread, vector width, blocks per SM, load operator) through its public
 * operation, checks each one's output against the built-in defaults', and
 * remembers the fastest per GPU and size bucket (floor(log2 n)) in the tuning
 * database: PTXKIT_TUNE_DB, else <state dir>/tune.db. The operations use it
 * for the parameters their configuration leaves absent or 0.
 * PTXKIT_TUNE=off|cached|auto: never read it, use
 * what it holds (the default), or also tune a size bucket on its first use.
 * Every configuration a tuning run measures (its parameters, time, GB/s,
 * correctness) is also appended, as it is measured, to the tuning record
 * beside the database (PTXKIT_TUNE_RECORD, else <database without .db>
 * .record.jsonl; JSON lines): a later run of the same problem on the same
 * GPU, driver, NVRTC, library and kernel code reuses those timings instead
 * of re-timing, so an interrupted run resumes. */

typedef struct ptxkit_tune_progress {
    const char *family;
    const char *variant;
    size_t n;                  /* the size being tuned */
    int size_index, size_count;
    const char *phase;         /* "compile", "search", "exhaustive", "retime" */
    int done, total;           /* steps of this phase */
    double best_gbs;           /* fastest so far at this size; 0 before any */
    double elapsed_s, budget_s;
} ptxkit_tune_progress;

typedef void (*ptxkit_tune_progress_fn)(const ptxkit_tune_progress *progress, void *user);

/* Zero-initialize for defaults. */
typedef struct ptxkit_tune_options {
    double budget_s;           /* wall-clock bound of the call, compiles included; 0: 35 s */
    int max_variants;          /* configurations per size, timed or from the tuning record; 0: no bound */
    int exhaustive;            /* time every legal configuration, no budget */
    int verify_exhaustive;     /* budgeted search, then exhaustive: both reported */
    int size_step;             /* log2 step between the sizes n_min..n_max; 0: 4 */
    int threads;               /* compile threads; 0: one per CPU, at most 32 */
    int no_save;               /* leave the tuning database and its record alone */
    ptxkit_tune_progress_fn progress;   /* called on the calling thread */
    void *progress_user;
    int no_record;             /* re-time everything: neither reuse nor extend the tuning record */
    int reserved[3];      /* zero: later 0.x releases give these meaning, 0 keeping today's */
} ptxkit_tune_options;

typedef struct ptxkit_tune_result {
    size_t n;
    ptxkit_config best;                /* the choice, by name as the op or tunable takes it; absent: built-in default */
    double best_gbs;
    double default_gbs;                /* the built-in defaults, same run */
    ptxkit_config search_best;         /* the budgeted search's pick */
    double search_gbs;
    ptxkit_config exhaustive_best;     /* with verify_exhaustive */
    double exhaustive_gbs;             /* 0 without verify_exhaustive */
    int legal, timed, failed, wrong;   /* configurations: failed to build or launch, wrong output */
    double seconds;
    char note[192];                    /* the first failure or wrong result, if any */
    /* Any tunable (the fields above in GB/s are 0 where it counts no bytes): */
    double best_ms, default_ms, search_ms, exhaustive_ms; /* time per call */
    char best_text[192];               /* the choice as "NAME=VALUE ..." */
    char exhaustive_text[192];
    int reused;                        /* configurations taken from the tuning record, not timed again (not in timed) */
    int reserved[7];      /* zero today: later 0.x releases fill new fields here */
} ptxkit_tune_result;

#define PTXKIT_TUNE_MAX_SIZES 64

/* What a tuning call found, per size: an opaque object (it grows with the
 * tuner), read through the accessors below. */
typedef struct ptxkit_tune_report ptxkit_tune_report;

ptxkit_status ptxkit_tune_report_create(ptxkit_tune_report **out);
void ptxkit_tune_report_destroy(ptxkit_tune_report *report);
/* The family's name or the tunable's key, and the variant ("-" for tunables). */
const char *ptxkit_tune_report_family(const ptxkit_tune_report *report);
const char *ptxkit_tune_report_variant(const ptxkit_tune_report *report);
/* The sizes tuned, and the index-th one's result (NULL past the last). */
int ptxkit_tune_report_size_count(const ptxkit_tune_report *report);
const ptxkit_tune_result *ptxkit_tune_report_result(const ptxkit_tune_report *report, int index);
/* The whole call's wall time, and the part spent compiling (in parallel). */
double ptxkit_tune_report_seconds(const ptxkit_tune_report *report);
double ptxkit_tune_report_compile_seconds(const ptxkit_tune_report *report);
/* The database file written ("" when none), and why not or what was replaced. */
const char *ptxkit_tune_report_database(const ptxkit_tune_report *report);
const char *ptxkit_tune_report_database_note(const ptxkit_tune_report *report);
/* The tuning record read or appended to (*path "" when none), and how
 * many of this problem's configurations were found in it and appended. Any
 * output may be NULL. */
ptxkit_status ptxkit_tune_report_record(const ptxkit_tune_report *report, const char **path, int *loaded, int *appended);
/* Why the record was not used, or what went wrong with it ("" when nothing
 * to say, and for NULL). */
const char *ptxkit_tune_report_record_note(const ptxkit_tune_report *report);
/* The variants compiled or loaded ahead, and the compile threads used. Any
 * output may be NULL. */
ptxkit_status ptxkit_tune_report_prepared(const ptxkit_tune_report *report, int *kernels, int *threads);

/* Tunes `family` ("copy", "reduce") for `variant` (NULL: the family's
 * default; reduce: "<op>.<type>" as "sum.float32"; copy: "bytes") at the
 * sizes 2^k from n_min to n_max in steps of options->size_step (n counts
 * bytes for copy, elements for reduce), and saves each size's result as it
 * comes. options and report may be NULL. "gemm" tunes ptxkit_gemm's tile
 * configuration: variant "<type>.<class>" ("float32.square", "float64.small_m",
 * classes as ptxkit_gemm describes), n = m * n * k; its results are named
 * parameters (best_text) and its "GB/s" are GFLOP/s. */
ptxkit_status ptxkit_tune(ptxkit_context *ctx, const char *family, const char *variant, size_t n_min, size_t n_max,
                          const ptxkit_tune_options *options, ptxkit_tune_report *report);
/* Name of the index-th tunable family; NULL past the last. */
const char *ptxkit_tune_family_name(int index);
/* ptxkit_tune at an explicit list of sizes (1..PTXKIT_TUNE_MAX_SIZES of
 * them, any order; n as ptxkit_tune counts it) instead of a range. */
ptxkit_status ptxkit_tune_sizes(ptxkit_context *ctx, const char *family, const char *variant, const size_t *sizes,
                                int size_count, const ptxkit_tune_options *options, ptxkit_tune_report *report);
/* Whether ptxkit_tune takes `variant` (NULL: the default) for `family`,
 * without a context: SUCCESS, NOT_FOUND for an unknown family,
 * INVALID_ARGUMENT for a variant it does not take, the reason in
 * ptxkit_last_error(). */
ptxkit_status ptxkit_tune_variant_check(const char *family, const char *variant);

/* The tuning database, as data: what `ptxkit tune --export/--import` moves
 * between machines, or an application ships with itself. One entry is the
 * configuration measured best for (GPU, driver, NVRTC, ptxkit version;
 * family, variant, size bucket). */
#define PTXKIT_TUNE_MAX_PARAMS 8   /* a tunable's parameters (ptxkit_tunable_add_param) */
typedef struct ptxkit_tune_entry {
    char device[128];     /* the key: the GPU's name, */
    int cc;               /* compute capability (90 for 9.0), */
    int sm_count;
    int driver;           /* driver version (13000), */
    int nvrtc_major, nvrtc_minor;
    char library[16];     /* and the ptxkit version ("0.2.0") it was measured with */
    char family[64];      /* a built-in family ("reduce"), or an application tunable's key */
    char variant[40];     /* "sum.float32"; "-" for a tunable */
    int log2n;            /* the size bucket: floor(log2 n) */
    /* The configuration, in the tuning problem's names (the tuning record's
     * too): a family tuned through launch options (copy, reduce, scan,
     * transpose) has exactly "block", "items", "vec", "bpsm" and "load" (a
     * ptxkit_load_op), 0 for its built-in default; gemm and an
     * application's tunable their parameters (gemm: BM, BN, BK, TM, TN,
     * WARPS_M, STAGES, SPLIT_K), at most PTXKIT_TUNE_MAX_PARAMS. */
    ptxkit_config config;
    double gbs;           /* the choice's throughput when it was tuned */
    double default_gbs;   /* the built-in defaults', same run */
    long long when;       /* seconds since the epoch */
    int reserved[8];      /* zero: later 0.x releases give these meaning */
} ptxkit_tune_entry;

/* The database's file: PTXKIT_TUNE_DB, else tune.db in the state directory
 * (PTXKIT_STATE_DIR, else $XDG_STATE_HOME/ptxkit, else
 * ~/.local/state/ptxkit): tuning data are state, which purging or disabling
 * the kernel cache keeps. Empty when no home directory can be found and
 * PTXKIT_TUNE_DB is unset. */
ptxkit_status ptxkit_tune_db_path(char *buf, size_t size);
/* Every entry of the database at path (NULL: ptxkit_tune_db_path) in a
 * malloc'd array (free with ptxkit_tune_entries_free; NULL when empty); a
 * missing file holds none. A damaged file is CORRUPT, its reason in
 * ptxkit_last_error(). */
ptxkit_status ptxkit_tune_db_read(const char *path, ptxkit_tune_entry **entries, size_t *count);
void ptxkit_tune_entries_free(ptxkit_tune_entry *entries);
/* Merges entries into the database at path (NULL: the default) under its
 * lock, as a tuning run stores: an entry replaces the one of the same key,
 * family, variant and bucket. All or nothing: an entry the database cannot
 * hold as given (empty or over-long names, control characters, reserved
 * fields set, a field out of the file's range: every field reads back as
 * given, gbs and default_gbs to two decimals) is INVALID_ARGUMENT naming its
 * index and field, and nothing is stored. *total (may
 * be NULL) receives the database's entry count afterwards; *rewritten (may
 * be NULL) 1 when the file was damaged (ptxkit_tune_db_read would refuse it)
 * and was kept aside as "<file>.bad" (replacing an older one) and rewritten
 * with the entries given alone, else 0. */
ptxkit_status ptxkit_tune_db_merge(const char *path, const ptxkit_tune_entry *entries, size_t count, size_t *total,
                                   int *rewritten);
/* The key fields (device to library) of an entry a tuning run on this
 * context would store, the rest zero: which entries are this GPU's. */
ptxkit_status ptxkit_tune_key_get(ptxkit_context *ctx, ptxkit_tune_entry *key);
/* Whether a call of a built-in family ("copy", "reduce", "scan",
 * "transpose") with `config` (NULL: the defaults; names as the op reads
 * them) at size n runs the tuning database's configuration: *tuned 1 when the call takes the JIT path,
 * leaves a field to the database and the database has an entry for
 * (family, variant) at n's bucket or a neighbouring one (PTXKIT_TUNE not
 * off), else 0 (the built-in defaults). variant and n as ptxkit_tune counts
 * them (reduce, scan: "<op>.<type>", elements; copy: "bytes", bytes;
 * transpose: as ptxkit_transpose names its padded kind's entry, rows x
 * cols rounded to a power of two). Reads only: with PTXKIT_TUNE=auto a
 * bucket not yet tuned reads 0, though the call itself may tune it first.
 * gemm has ptxkit_gemm_config_get. INVALID_ARGUMENT for a NULL argument.
 * Any thread; nothing is launched, no stream is used. */
ptxkit_status ptxkit_tune_source_get(ptxkit_context *ctx, const char *family, const char *variant, size_t n,
                                     const ptxkit_config *config, int *tuned);

/* The tuning record: every configuration tuning runs measured (the
 * database keeps the winners), one line each, in the order measured; a later
 * run of the same problem reuses its lines instead of re-timing. */
typedef enum ptxkit_tune_outcome {
    PTXKIT_TUNE_OK = 0,   /* timed */
    PTXKIT_TUNE_WRONG,    /* the output check failed */
    PTXKIT_TUNE_FAILED    /* did not build or launch (note says why) */
} ptxkit_tune_outcome;
typedef struct ptxkit_tune_record_line {
    ptxkit_tune_entry key;    /* device to library, family, variant; the rest zero */
    unsigned long long code;  /* hash of the problem's kernel code: an edited kernel is re-timed */
    size_t n;                 /* the exact size measured */
    ptxkit_config config;     /* the configuration, by parameter name (as ptxkit_tune_entry's) */
    ptxkit_tune_outcome outcome;
    double ms;                /* median time per call (PTXKIT_TUNE_OK) */
    double gbs;               /* 0 where the problem counts no bytes */
    int samples;              /* timed batches behind ms */
    long long when;           /* seconds since the epoch */
    char note[160];
    int reserved[8];
} ptxkit_tune_record_line;

/* "ok", "wrong", "failed"; "?" out of range. */
const char *ptxkit_tune_outcome_name(ptxkit_tune_outcome outcome);
/* The record's file: PTXKIT_TUNE_RECORD, else the database's path with
 * ".db" replaced by ".record.jsonl"; empty when PTXKIT_TUNE_RECORD=off or
 * there is no database path either. */
ptxkit_status ptxkit_tune_record_path(char *buf, size_t size);
/* Every readable line of the record at path (NULL: ptxkit_tune_record_path)
 * in a malloc'd array (free with ptxkit_tune_record_free; NULL when empty);
 * *ignored (may be NULL) counts the damaged lines skipped. A missing file
 * holds none; one too large to read is CORRUPT. */
ptxkit_status ptxkit_tune_record_read(const char *path, ptxkit_tune_record_line **lines, size_t *count,
                                      size_t *ignored);
void ptxkit_tune_record_free(ptxkit_tune_record_line *lines);
/* Appends lines to the record at path (NULL: ptxkit_tune_record_path), as
 * a tuning run would have measured them: how `ptxkit tune --import-t4`
 * seeds a record from another machine or from Kernel Tuner's T4 results.
 * Every line is checked first (family and parameter names non-empty, of
 * letters, digits, '_', '.' and '-'; config.count within
 * PTXKIT_TUNE_MAX_PARAMS; n > 0; figures finite and not negative) and
 * none is written when one fails (INVALID_ARGUMENT naming it); IO when the
 * file cannot be written. Each line is appended whole under the file's
 * lock, so tuners running at the same time are safe; a line equal to one
 * already there is appended again (the last one counts). */
ptxkit_status ptxkit_tune_record_append(const char *path, const ptxkit_tune_record_line *lines, size_t count);
/* The code hash (ptxkit_tune_record_line.code) under which a tuning run of
 * a built-in `family` (variant as ptxkit_tune takes it) records and reuses
 * its timings in this build: lines appended with it are taken as measured
 * by such a run. Errors as ptxkit_tune_variant_check; no context needed;
 * any thread. */
ptxkit_status ptxkit_tune_code_get(const char *family, const char *variant, unsigned long long *code);

/* ---- tuning the application's kernels ----------------------------------
 *
 * A tunable names a problem (its key, e.g. "myapp.saxpy.float32") and
 * declares a parameter space: named parameters, each a list of candidate
 * values whose first is the default, and validity rules. The tuner times a
 * launch callback for configurations of that space at given sizes, checks
 * each one's output with an optional check callback, and persists the
 * fastest per GPU and size bucket (floor(log2 n)) in the tuning database,
 * beside the built-in families' entries (which are tunables too). The
 * application reads the tuned configuration back with one call. */

typedef struct ptxkit_tunable ptxkit_tunable;

#define PTXKIT_TUNE_MAX_VALUES 16

/* The key names the problem in the database: letters, digits, "._-". */
ptxkit_status ptxkit_tunable_create(ptxkit_context *ctx, const char *key, ptxkit_tunable **out);
ptxkit_status ptxkit_tunable_destroy(ptxkit_tunable *tunable);
/* A parameter: an injected define's name and its candidate values (the
 * first is the default). */
ptxkit_status ptxkit_tunable_add_param(ptxkit_tunable *tunable, const char *name, const long long *values, int count);

typedef enum ptxkit_tune_rule {
    PTXKIT_RULE_POWER_OF_TWO = 0,  /* a is a power of two */
    PTXKIT_RULE_PRODUCT_AT_MOST,   /* a * b <= limit (b NULL: a <= limit) */
    PTXKIT_RULE_PRODUCT_AT_MOST_N, /* a * b <= n, the size being tuned (b NULL: a <= n) */
    PTXKIT_RULE_DIVIDES,           /* a divides b (b NULL: a divides limit) */
    PTXKIT_RULE_MAX_THREADS        /* a (threads per block) within the device and kernel limit */
} ptxkit_tune_rule;

/* A built-in validity rule over parameters a and b. */
ptxkit_status ptxkit_tunable_add_rule(ptxkit_tunable *tunable, ptxkit_tune_rule rule, const char *a, const char *b,
                                      long long limit);
/* A validity callback: nonzero when config is legal for size n. */
typedef int (*ptxkit_tune_valid_fn)(const ptxkit_config *config, size_t n, void *user);
ptxkit_status ptxkit_tunable_set_valid(ptxkit_tunable *tunable, ptxkit_tune_valid_fn valid, void *user);

/* Binds the tunable to a program's kernel: the tuner then compiles each
 * configuration's kernel ahead, in parallel, with the configuration's
 * parameters as defines (plus `defines`, fixed), and hands it to launch.
 * Without a program, launch gets kernel NULL and compiles what it needs. */
ptxkit_status ptxkit_tunable_set_kernel(ptxkit_tunable *tunable, ptxkit_program *program, const char *entry,
                                        const char *const *defines, int define_count);

/* Launches the work for one configuration at size n on stream (no
 * synchronization: the tuner times it with events). */
typedef ptxkit_status (*ptxkit_tune_launch_fn)(ptxkit_kernel *kernel, const ptxkit_config *config, size_t n,
                                               ptxkit_stream *stream, void *user);
/* Checks one configuration: runs it once (kernel as for launch) on inputs of
 * the application's choice, with the output poisoned first so that a
 * configuration that skips part of it is caught, waits for it, and sets
 * *ok nonzero when the output is right. Called before a configuration is
 * timed; a wrong one is never chosen. Without a check every configuration
 * that launches is trusted. */
typedef ptxkit_status (*ptxkit_tune_check_fn)(ptxkit_kernel *kernel, const ptxkit_config *config, size_t n, int *ok,
                                              void *user);
ptxkit_status ptxkit_tunable_set_launch(ptxkit_tunable *tunable, ptxkit_tune_launch_fn launch, void *user);
ptxkit_status ptxkit_tunable_set_check(ptxkit_tunable *tunable, ptxkit_tune_check_fn check, void *user);
/* Bytes one call moves at size n (for GB/s in reports); optional. */
ptxkit_status ptxkit_tunable_set_bytes(ptxkit_tunable *tunable, double (*bytes)(size_t n, void *user), void *user);

/* Searches the space at each of sizes[0..size_count) within
 * options->budget_s (shared, as for ptxkit_tune) and saves each size's
 * winner as it comes. report may be NULL. */
ptxkit_status ptxkit_tunable_tune(ptxkit_tunable *tunable, const size_t *sizes, int size_count,
                                  const ptxkit_tune_options *options, ptxkit_tune_report *report);

/* The configuration to run at size n, into *out: the database's entry for
 * this GPU and n's bucket (or a neighbouring bucket within two), else the
 * defaults; every parameter of the space is set. With PTXKIT_TUNE=auto a
 * missing bucket of 2^16 or more is tuned first (launch must be set).
 * *tuned receives whether it came from the database (may be NULL). Read
 * the values with ptxkit_config_get, pass them to the kernel with
 * ptxkit_config_defines. */
ptxkit_status ptxkit_tunable_config(ptxkit_tunable *tunable, size_t n, ptxkit_config *out, int *tuned);

/* ---- several GPUs ------------------------------------------------------ */
/*
 * Arrays split across GPUs ("shards", one per rank, each on its rank's GPU)
 * and the collectives between them, through NCCL (libnccl.so.2, 2.12 or
 * newer), which ptxkit opens with dlopen as it opens the driver: where it
 * looks, in order: PTXKIT_NCCL_PATH alone when set; else the loader's search
 * path, $CUDA_HOME/lib64, the nvidia-nccl pip wheel under $VIRTUAL_ENV or
 * $CONDA_PREFIX, /usr/local/cuda/lib64. Without it every call below answers
 * UNSUPPORTED, the reason in ptxkit_last_error().
 *
 * A communicator holds the ranks this process drives: several (one per
 * context, ptxkit_comm_create_all) or one (ptxkit_comm_create_rank, one
 * process per GPU, on one host or many). The sharded calls take arrays
 * with one entry per local rank, in the order of the contexts given at
 * creation: out[i], in[i], n[i] and streams[i] belong to local rank i (a
 * NULL streams, or a NULL entry, is that context's default stream). With
 * one process per rank, every rank makes the same calls in the same order
 * (NCCL's rule). Reduce and scan move only one value per rank through NCCL:
 * each rank reduces or scans its shard with ptxkit_reduce / ptxkit_scan on
 * its GPU, the per-rank totals are all-gathered, and a scan adds the total
 * of the ranks before it to its shard. Everything is queued on the given
 * streams and returns before it has run; ptxkit_stream_synchronize each
 * stream to wait. The contexts must be ptxkit_context_open ones (primary
 * contexts, which NCCL uses) and outlive the communicator. Calls on one
 * communicator are not concurrent: they share its small per-rank buffer of
 * totals, so the next call's work must follow the previous call's on each
 * rank (the same stream, or ordered by events). Capture (cuStreamBeginCapture):
 * the calls record into the graph once their kernels for (op, type) are
 * loaded (one call outside capture), as NCCL allows for its collectives.
 * The few small kernels reduce and scan add (a shard's total, the totals'
 * combination, the offset added to a scanned shard) are a ptxkit program:
 * compiled by NVRTC on first use for each (operator, type), then taken from
 * the kernel caches; with no NVRTC and a cold cache those calls answer
 * NO_NVRTC. All-reduce, gather and scatter are NCCL's alone.
 * NCCL failures are DRIVER (INVALID_ARGUMENT for NCCL's invalid argument)
 * with NCCL's name and message, recorded on the failing rank's context.
 * NVLink SHARP (NVLS) needs multicast objects: set NCCL_NVLS_ENABLE=0 in
 * the environment before the first communicator where they must not be used.
 */

typedef struct ptxkit_comm ptxkit_comm;

/* Bytes of the unique id of ptxkit_comm_unique_id_get (NCCL's ncclUniqueId). */
#define PTXKIT_COMM_ID_BYTES 128

/* The NCCL file the calls below use and how it was found, e.g.
 * "/usr/lib/x86_64-linux-gnu/libnccl.so.2 (found through the loader's search
 * path)", and its version as "2.28.9" (either buffer may be NULL; short
 * buffers truncate). UNSUPPORTED, with every place tried and why each failed
 * (missing, older than 2.12, not NCCL) in ptxkit_last_error(), when none
 * loads. Any thread. */
ptxkit_status ptxkit_comm_library_get(char *path, size_t path_size, char *version, size_t version_size);

/* A new unique id (ncclGetUniqueId) as PTXKIT_COMM_ID_BYTES bytes into id:
 * one process creates it and hands it to every rank's
 * ptxkit_comm_create_rank however it likes (a file, MPI_Bcast, a socket).
 * It names a rendezvous this process opens: create it once per communicator. */
ptxkit_status ptxkit_comm_unique_id_get(unsigned char id[PTXKIT_COMM_ID_BYTES]);

/* One communicator over count contexts of this process, rank i on
 * contexts[i] (ncclCommInitAll): count in [1, 1024], each context a
 * distinct GPU. Blocks until NCCL has set up every rank. */
ptxkit_status ptxkit_comm_create_all(ptxkit_context *const *contexts, int count, ptxkit_comm **out);
/* This process's rank `rank` of `ranks` (ncclCommInitRank) on ctx, with the
 * id one process made with ptxkit_comm_unique_id_get. Blocks until all
 * ranks have joined. */
ptxkit_status ptxkit_comm_create_rank(ptxkit_context *ctx, const unsigned char id[PTXKIT_COMM_ID_BYTES], int ranks,
                                      int rank, ptxkit_comm **out);
/* Waits for the communicator's work, then frees it (ncclCommDestroy) and
 * its buffers; the contexts stay open. NULL is a no-op. */
void ptxkit_comm_destroy(ptxkit_comm *comm);

typedef struct ptxkit_comm_info {
    int ranks;            /* ranks in the communicator, over all processes */
    int local_ranks;      /* ranks this process drives (the arrays' length) */
    int first_rank;       /* rank of local rank 0; local rank i is first_rank + i */
    int nccl_version;     /* ncclGetVersion's code, e.g. 22809 */
    int reserved[4];      /* zero today */
} ptxkit_comm_info;
ptxkit_status ptxkit_comm_info_get(const ptxkit_comm *comm, ptxkit_comm_info *out);
/* The context of local rank i (NULL out of range or for a NULL comm). */
ptxkit_context *ptxkit_comm_context(const ptxkit_comm *comm, int local_rank);
/* An error NCCL met while running queued work (ncclCommGetAsyncError), on
 * any local rank: SUCCESS, or DRIVER with NCCL's message on that rank's
 * context. */
ptxkit_status ptxkit_comm_check(ptxkit_comm *comm);

/* Reduces the sharded array (local rank i's shard: n[i] elements at in[i])
 * into one element written at out[i] on every local rank, as ptxkit_reduce
 * does on one GPU: the same operators and types, empty shards allowed (the
 * identity where every shard is empty). Integers: exact (sums wrap modulo
 * 2^w). Float sums: each shard within ptxkit_reduce's bound, the ranks'
 * totals then added in rank order: within (1e-5 + ranks * 2^-24) (float32)
 * or (1e-13 + ranks * 2^-53) (float64) of sum |x_i| from the exact sum; every
 * rank gets the same value. config goes to each rank's ptxkit_reduce. */
ptxkit_status ptxkit_comm_reduce(ptxkit_comm *comm, ptxkit_reduce_op op, ptxkit_dtype type, const ptxkit_dptr *out,
                                 const ptxkit_dptr *in, const size_t *n, const ptxkit_config *config,
                                 ptxkit_stream *const *streams);
/* Scans the sharded array as ptxkit_scan scans one (kinds, operators and
 * types as there; in[i] == out[i] scans in place; empty shards allowed):
 * out[i] gets the prefixes of the whole array at local rank i's positions.
 * Integers: exact. Float sums: ptxkit_scan's bound within each shard, plus
 * (ranks * 2^-24 or 2^-53) * sum |x_j| over the ranks before. Float min/max
 * ignore NaNs as fminf/fmaxf do. config goes to each rank's ptxkit_scan. */
ptxkit_status ptxkit_comm_scan(ptxkit_comm *comm, ptxkit_scan_kind kind, ptxkit_reduce_op op, ptxkit_dtype type,
                               const ptxkit_dptr *out, const ptxkit_dptr *in, const size_t *n,
                               const ptxkit_config *config, ptxkit_stream *const *streams);
/* Element-wise all-reduce of a vector of n elements held by every rank
 * (ncclAllReduce): out[i][k] = in[0][k] op in[1][k] op ... over all ranks.
 * SUM, MIN and MAX of every type (NCCL has no bitwise operators:
 * UNSUPPORTED); in[i] == out[i] works in place. Float sums in NCCL's order. */
ptxkit_status ptxkit_comm_allreduce(ptxkit_comm *comm, ptxkit_reduce_op op, ptxkit_dtype type, const ptxkit_dptr *out,
                                    const ptxkit_dptr *in, size_t n, ptxkit_stream *const *streams);
/* Gathers the shards into one array on rank `root`: counts[r] elements of
 * every rank r (all ranks' counts, the same on every rank; zeros allowed)
 * land at out + offset of r (ptxkit_shard_offsets) on root. in[i]: local
 * rank i's shard; out: root's array (read only where this process holds
 * root, may be 0 elsewhere). Through NCCL send/receive. */
ptxkit_status ptxkit_comm_gather(ptxkit_comm *comm, ptxkit_dtype type, int root, ptxkit_dptr out,
                                 const ptxkit_dptr *in, const size_t *counts, ptxkit_stream *const *streams);
/* The inverse: root's array `in` is cut into counts[r] elements per rank,
 * rank r's part written at out[local index of r]. */
ptxkit_status ptxkit_comm_scatter(ptxkit_comm *comm, ptxkit_dtype type, int root, const ptxkit_dptr *out,
                                  ptxkit_dptr in, const size_t *counts, ptxkit_stream *const *streams);

/* Shard bookkeeping (plain CPU code). ptxkit_shard_split: the even split of
 * total elements over ranks, rank's first element and count (the first
 * total % ranks ranks hold one more). ptxkit_shard_offsets: offsets[r] =
 * counts[0] + ... + counts[r - 1] for ranks counts, and their sum in *total
 * (may be NULL); OVERFLOW when it does not fit in size_t. */
ptxkit_status ptxkit_shard_split(size_t total, int ranks, int rank, size_t *offset, size_t *count);
ptxkit_status ptxkit_shard_offsets(const size_t *counts, int ranks, size_t *offsets, size_t *total);

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif
#endif
