/* The runtime's objects: what a context, a stream, a kernel and an event
 * are behind ptxkit.h's opaque types. Plain structs, read by every room of
 * the runtime and by the ops; the calls on them live in their rooms
 * (context.h, kernel.h, ...). */
#ifndef PTXKIT_RUNTIME_OBJECTS_H
#define PTXKIT_RUNTIME_OBJECTS_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "driver/driver.h"
#include "ptxkit.h"

typedef struct module_registry module_registry; /* registry.h */

/* Tunes (family, variant) at size n within budget_s seconds and stores the
 * result; true when something was stored. */
typedef bool (*context_auto_tune_fn)(ptxkit_context *ctx, const char *family, const char *variant, size_t n,
                                     double budget_s, void *user);

struct ptxkit_context {
    const cuda_driver *cu;
    CUcontext cu_context;
    CUdevice device;
    bool owns_primary;          /* retained the primary context: release it */
    bool lost;                  /* a sticky fault: the driver refuses the context from now on */
    int arch;                   /* compute capability as 90 */
    ptxkit_device_info info;
    module_registry *registry;
    unsigned max_block[3], max_grid[3]; /* device launch limits */
    struct context_state {      /* per-context state of kernel families */
        const struct context_state_ops *ops;
        void *value;
    } states[8];
    pthread_mutex_t state_lock;
    /* How a lookup of a tuned configuration (src/tuned) tunes a missing
     * bucket of a built-in family under PTXKIT_TUNE=auto; NULL: it does not.
     * The search sits above the families and the lookup below them, so the
     * layer that opens contexts for the public API (src/tune/context_open.c)
     * sets it, once, before the context is handed out; the runtime only
     * carries it and never calls it. Read without a lock: it never changes
     * after the open. */
    context_auto_tune_fn auto_tune;
};

struct ptxkit_stream {
    ptxkit_context *ctx;        /* the stream's context: ptxkit_stream_destroy needs no other */
    CUstream handle;
    bool wrapped;               /* the application's CUstream: destroy releases only the wrapper */
};

/* A loaded kernel handed to the application; owned by the context's
 * registry. Its limits are read once, on first need (kernel_limits_read),
 * so a launch checks them without the driver. */
struct ptxkit_kernel {
    ptxkit_context *ctx;
    CUfunction fn;
    const char *jit_log;      /* its module's load log, owned by the registry ("" or NULL: none) */
    int max_threads;          /* per block, for this kernel's resources; 0 until read (atomic) */
    int max_dynamic_shared;   /* current limit, bytes; valid once max_threads is (atomic) */
    bool launched;            /* a first launch was made, which may leave the limits to the driver (atomic) */
    /* 1: kernel_launch launches it with programmatic stream serialization
     * into a graph being captured; only a built-in family's kernel compiled
     * for sm_90 or later, whose every entry begins with
     * ptxkit::grid_dependency_begin() or _begin_unless() (a CPU test checks
     * the sources).
     * -1: never; 0: not yet decided. Set atomically. */
    int programmatic;
    /* The module object it was taken from (set once, atomically, by
     * module_kernels.c); NULL for a built-in family's kernels. */
    struct ptxkit_module *module;
};

struct ptxkit_event {
    ptxkit_context *ctx;        /* as the stream's */
    CUevent handle;
};

static inline CUstream stream_handle(ptxkit_stream *s) { return s ? s->handle : NULL; }

#endif
