/* Internal interface of the runtime layer, used by src/ops, src/tune and the
 * command-line tool. Nothing here is public API. */
#ifndef PTXKIT_RUNTIME_H
#define PTXKIT_RUNTIME_H

#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

#include "driver/driver.h"
#include "ptxkit.h"

#define PTXKIT_MAX_DEFINES 16
#define PTXKIT_ERROR_SIZE 16384

typedef struct module_registry module_registry;

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
    pthread_mutex_t error_lock;
    char error[PTXKIT_ERROR_SIZE];
    char jit_log[4096];         /* the last module load: wall time, driver JIT info log */
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
    CUstream handle;
    bool wrapped;               /* the application's CUstream: destroy releases only the wrapper */
};

/* A loaded kernel handed to the application; owned by the context's
 * registry. Limits read once, so a launch checks them without the driver. */
struct ptxkit_kernel {
    ptxkit_context *ctx;
    CUfunction fn;
    int max_threads;          /* per block, for this kernel's resources */
    int max_dynamic_shared;   /* current limit, bytes */
};


struct ptxkit_event {
    CUevent handle;
};

/* ---- per-context state of the ops ---- */

/* The state a kernel family (or the tuning lookup) keeps per context (e.g.
 * events guarding scratch memory, the loaded tuning database): created on
 * first use, told when one of the context's streams is
 * about to be destroyed, released (with the context current) when the
 * context closes. The ops' address identifies the family. */
typedef struct context_state_ops {
    void *(*create)(ptxkit_context *ctx);
    void (*destroy)(ptxkit_context *ctx, void *value);
    void (*stream_closing)(ptxkit_context *ctx, void *value, CUstream stream); /* may be NULL */
} context_state_ops;

/* The family's state, created if needed; NULL when creation fails. */
void *context_state(ptxkit_context *ctx, const context_state_ops *ops);
/* The family's state if it was created, else NULL: for a reader to whom
 * no state means the defaults, so that reading allocates nothing. */
void *context_state_find(ptxkit_context *ctx, const context_state_ops *ops);

/* Destroys every state (context current where the driver allows it); the
 * context's close does this. */
void context_states_release(ptxkit_context *ctx);

/* Calls every state's stream_closing (context current). */
void context_stream_closing(ptxkit_context *ctx, CUstream stream);

/* ---- errors ---- */

/* Records a message for ctx (NULL: the thread's own) and returns status. */
ptxkit_status record_error(ptxkit_context *ctx, ptxkit_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Maps a CUresult to a status and records "what: CUDA_ERROR_X: text". */
ptxkit_status record_cuda_error(ptxkit_context *ctx, CUresult r, const char *what);
/* Clears the context's (or thread's) last error. */
void clear_error(ptxkit_context *ctx);
/* Copies text (ctx->error or ctx->jit_log) into buf under ctx->error_lock,
 * truncated to size; returns its full length. */
size_t context_text_copy(const ptxkit_context *ctx, const char *text, char *buf, size_t size);

/* Open a context as ptxkit_context_open and ptxkit_context_attach do (the
 * same checks and messages) but without the auto-tune runner: those public
 * calls, in src/tune/context_open.c, add it. */
ptxkit_status context_open(int ordinal, ptxkit_context **out);
ptxkit_status context_attach(void *cu_context, ptxkit_context **out);

/* Checks ctx and pushes its CUDA context on the calling thread. Every public
 * entry point pairs it with context_leave. */
ptxkit_status context_enter(ptxkit_context *ctx);
void context_leave(ptxkit_context *ctx);

#define CU_CHECK(ctx, call, what)                                   \
    do {                                                            \
        CUresult cu_check_r_ = (call);                              \
        if (cu_check_r_ != CUDA_SUCCESS)                            \
            return record_cuda_error((ctx), cu_check_r_, (what));   \
    } while (0)

static inline CUstream stream_handle(ptxkit_stream *s) { return s ? s->handle : NULL; }

/* L2 access policy windows (l2.c), shared by ptxkit_launch_ex and streams:
 * the checks every window gets, and its driver form. */
ptxkit_status access_window_check(ptxkit_context *ctx, const ptxkit_access_window *w);
void access_window_to_cu(const ptxkit_access_window *w, CUaccessPolicyWindow *out);

/* Whether a public struct's reserved fields are all zero: a caller built
 * against a later header may have set fields this library cannot honour. */
static inline bool reserved_zero(const int *reserved, int count) {
    for (int i = 0; i < count; i++)
        if (reserved[i]) return false;
    return true;
}
#define RESERVED_ZERO(s) reserved_zero((s)->reserved, (int)(sizeof (s)->reserved / sizeof (s)->reserved[0]))

/* a * b without overflow into *out, else false. */
static inline bool mul_size(size_t a, size_t b, size_t *out) {
    return !__builtin_mul_overflow(a, b, out);
}

/* ---- embedded kernel text (generated by tools/embed at build time) ---- */

typedef struct embedded_file {
    const char *name;     /* "copy.cu", "ptxkit_load.cuh", "copy.ptx" */
    const char *text;
    size_t size;
} embedded_file;

const embedded_file *embedded_find(const char *name);
/* All embedded files; *count receives their number. */
const embedded_file *embedded_all(size_t *count);
/* Whether an embedded file is a header NVRTC is handed: a device header
 * (.cuh) or a family's <family>_defaults.h, which the C side reads too. */
bool embedded_is_header(const char *name);
/* A hash of every embedded .cu and header: the built-in kernels' code, for
 * the tuning record (a rebuilt library with edited kernels re-times them). */
unsigned long long embedded_sources_digest(void);

/* ---- compilation and kernels ---- */

/* A kernel to JIT: the family's source cu_sources/<family>.cu, an entry point
 * and injected defines "NAME=VALUE" (emulating template arguments). */
typedef struct kernel_spec {
    const char *family;
    const char *entry;
    const char *defines[PTXKIT_MAX_DEFINES];
    int define_count;
} kernel_spec;

/* Adds "NAME=VALUE" to spec, formatting the value; storage is in `scratch`,
 * which must outlive the spec. Returns false when full. */
typedef struct define_scratch {
    char text[PTXKIT_MAX_DEFINES][64];
    int used;
} define_scratch;
bool spec_define_int(kernel_spec *spec, define_scratch *scratch, const char *name, long long value);
bool spec_define_str(kernel_spec *spec, define_scratch *scratch, const char *name, const char *value);

typedef struct compile_output {
    char *image;          /* CUBIN or NUL-terminated PTX, malloc'd */
    size_t size;
    bool is_cubin;
    char *log;            /* NVRTC log, malloc'd, may be NULL */
    char *lowered_name;   /* with a name expression: the entry's name in the image */
    double compile_ms;
} compile_output;

/* One NVRTC compilation: a source with its name, headers, defines, extra
 * options and optionally a name expression whose lowered name is wanted.
 * builtin_headers offers every embedded .cuh by its own name and as
 * "ptxkit/<name without the ptxkit_ prefix>" (the user-kernel contract). */
typedef struct compile_request {
    const char *name;
    const char *source;
    const char *const *header_names;
    const char *const *header_texts;
    int header_count;
    bool builtin_headers;
    const char *const *defines;
    int define_count;
    const char *const *options;
    int option_count;
    const char *name_expression;
} compile_request;

ptxkit_status compile_source(ptxkit_context *ctx, const compile_request *req, int arch, bool want_ptx,
                             compile_output *out);

/* Compiles a family for arch (e.g. 90) with NVRTC, producing CUBIN when
 * want_ptx is false and NVRTC supports the arch, PTX otherwise. The family's
 * .cuh headers are passed as embedded headers. extra_options may be NULL. */
ptxkit_status compile_family(ptxkit_context *ctx, const char *family, const char *const *defines,
                             int define_count, int arch, bool want_ptx, const char *const *extra_options,
                             int extra_count, compile_output *out);
void compile_output_free(compile_output *out);

/* A family's kernel compiled by NVRTC with spec's defines, through the
 * kernel cache (the built-in program over cu_sources/<family>.cu). */
ptxkit_status kernel_get(ptxkit_context *ctx, const kernel_spec *spec, ptxkit_kernel **out);
/* The kernel `entry` of the embedded PTX file `ptx_name` ("copy.ptx") with
 * its plain global loads given op (DEFAULT leaves them plain). */
ptxkit_status ptx_kernel_get(ptxkit_context *ctx, const char *ptx_name, ptxkit_load_op op, const char *entry,
                             ptxkit_kernel **out);

/* Whether options->path means the JIT path here (AUTO: where NVRTC is present). */
bool options_use_jit(const ptxkit_launch_options *options);

/* The kernel `spec->entry` of a family by options->path (AUTO: JIT where
 * NVRTC is present, else PTX). The caller's spec carries the family's own
 * defines; this adds BLOCK_SIZE and LOAD_OP. JIT compiles for the block size
 * options->block_size (0: default_block). The PTX path loads
 * "<family>.ptx" with the loads given options->load_op, whose block size is fixed at generation time: an
 * explicit different block size is PTXKIT_ERROR_UNSUPPORTED. *block_used
 * receives the block size to launch with. */
ptxkit_status family_kernel_get(ptxkit_context *ctx, const ptxkit_launch_options *options,
                                const kernel_spec *spec, int default_block, ptxkit_kernel **out,
                                int *block_used);

/* Grid for a grid-stride kernel: resident blocks per SM (from occupancy,
 * asked of the driver once per context and kernel shape; capped by
 * blocks_per_sm when > 0) x SM count, at most max_useful (0: no cap). */
ptxkit_status grid_size_for(ptxkit_kernel *k, int block_size, size_t shared_bytes, int blocks_per_sm,
                            size_t max_useful, unsigned *grid);

/* ptxkit_launch for callers that made k's context current (the ops): the
 * same checks, without asking the driver which context is current. */
ptxkit_status kernel_launch(ptxkit_kernel *k, ptxkit_dim3 grid, ptxkit_dim3 block, size_t shared, ptxkit_stream *stream,
                            void **args);

/* Raises k's dynamic shared memory limit to at least bytes (asking the
 * driver only when it must), with the SM's memory preferring shared when
 * prefer_shared. Context current. */
ptxkit_status kernel_reserve_dynamic_shared(ptxkit_kernel *k, size_t bytes, bool prefer_shared);

/* Validates a caller's block size: a power of two in [32, 1024] and within
 * the device limit. 0 is replaced by `fallback`. */
ptxkit_status check_block_size(ptxkit_context *ctx, int requested, int fallback, int *out);
/* Validates options (NULL means defaults) and copies them to *out. */
ptxkit_status check_launch_options(ptxkit_context *ctx, const ptxkit_launch_options *in,
                                   ptxkit_launch_options *out);

/* The token a kernel source expects in LOAD_OP for an operator. */
const char *load_op_define(ptxkit_load_op op);

/* ---- kernel cache ---- */

typedef struct cache_key {
    unsigned char bytes[16];
} cache_key;

typedef struct text_hash {
    uint64_t lo, hi;
} text_hash;

void cache_key_hex(const cache_key *key, char out[33]);

/* A 128-bit hash of a program's name, source and headers, computed once per
 * program so that a kernel lookup hashes only its defines. */
text_hash text_hash_of(const char *name, const char *source, const char *const *header_names,
                       const char *const *header_texts, int header_count);

/* A hash of a program's name, source, headers and options (the tuning
 * record's code hash of a tunable bound to it). 0 for NULL. */
unsigned long long program_code_digest(const ptxkit_program *p);
/* NVRTC's identity (its build: version, size and time of the shared
 * object) and every embedded header, as hashed into compiled kernels' keys. */
text_hash nvrtc_identity_hash(void);
text_hash builtin_headers_hash(void);

/* NVRTC's version as the cache keys see it: from the identity record in the
 * cache directory when it is current, so that a warm process never loads
 * NVRTC; else from the library. False when NVRTC is unavailable. */
bool nvrtc_identity_version(int *major, int *minor);
/* The first line of the nvrtc-identity record: a hash of the environment
 * that chooses the NVRTC library (PTXKIT_NVRTC_PATH, LD_LIBRARY_PATH). */
#define NVRTC_SIGNATURE_SIZE 64
void nvrtc_environment_signature(char buf[NVRTC_SIGNATURE_SIZE]);

/* Disk cache of compiled images. Directory NULL: the configured one. */
typedef struct disk_cache disk_cache;
/* Returns NULL when the cache is disabled (PTXKIT_CACHE=off) or unusable. */
disk_cache *disk_cache_open(const char *directory);
/* The size cap in bytes: PTXKIT_CACHE_MAX_MB (a whole number of MiB in
 * [1, 2^32]), else 512 MiB. An invalid value is not used; *note (may be
 * NULL) then says why, for the CLI to show (empty when all is well). */
unsigned long long disk_cache_cap_from_env(char *note, size_t note_size);
void disk_cache_close(disk_cache *cache);
/* Reads a valid entry into a malloc'd buffer; false when absent or invalid
 * (an invalid file, one larger than the cap, or anything not a regular file
 * is removed so it is rebuilt). */
bool disk_cache_read(disk_cache *cache, const cache_key *key, void **image, size_t *size, bool *is_cubin);
/* Atomically writes an entry (temporary file + rename), then trims the cache
 * to its size cap by least-recent use. */
ptxkit_status disk_cache_write(disk_cache *cache, const cache_key *key, const void *image, size_t size,
                               bool is_cubin);
const char *disk_cache_path(const disk_cache *cache);
/* The nvrtc-identity record (identity_record.c): its text is the signature
 * line, the shared object's path, and "size mtime major minor", each line
 * ending in a newline, nothing after. True when `text` is exactly that for
 * `signature`; the outputs are then set. */
bool identity_record_parse(const char *text, size_t size, const char *signature, char *path, size_t path_size,
                           long long *lib_size, long long *mtime, int *major, int *minor);
/* Reads and parses the record file; false when it is missing, not a
 * regular file, too large or not a record for `signature`. */
bool identity_record_read(const char *record_path, const char *signature, char *path, size_t path_size,
                          long long *lib_size, long long *mtime, int *major, int *minor);

/* ---- module registry (per context) ---- */
/* The kernel object for fn, registered under key (created on first use);
 * NULL (error recorded) when out of memory or the driver fails. */
ptxkit_kernel *kernel_object(ptxkit_context *ctx, const cache_key *key, CUfunction fn);

module_registry *module_registry_create(void);
void module_registry_destroy(ptxkit_context *ctx, module_registry *registry);
/* What is registered under key: a module, an object handed out (either may
 * be NULL). False when nothing is. */
bool registry_lookup(ptxkit_context *ctx, const cache_key *key, CUmodule *module, void **object);
/* Registers a freshly loaded module under key (the context owns it from
 * now); when another thread registered the same key first, ours is
 * unloaded and theirs returned. */
CUmodule registry_add_module(ptxkit_context *ctx, const cache_key *key, CUmodule module);
/* Registers a malloc'd object (freed with the context) under key; returns
 * the object now registered (another thread's, ours being freed), or NULL
 * when out of memory (ours freed). */
void *registry_add_object(ptxkit_context *ctx, const cache_key *key, void *object);
/* Loads an image (PTX when is_ptx: its ISA version is checked against the
 * driver first); the driver JIT's logs and wall time go into the context's
 * JIT log, and into the error message on failure. Context current. */
ptxkit_status load_image(ptxkit_context *ctx, const char *what, const void *image, bool is_ptx, CUmodule *module);

/* Monotonic clock in milliseconds. */
double now_ms(void);

#endif
