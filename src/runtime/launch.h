/* What the families' host code launches with (launch.c): a kernel by its
 * spec and path (JIT or PTX, through the kernel cache), the defines a spec
 * carries, and the checks of launch options and block sizes. */
#ifndef PTXKIT_RUNTIME_LAUNCH_H
#define PTXKIT_RUNTIME_LAUNCH_H

#include <stdbool.h>

#include "ptxkit.h"
#include "runtime/compile.h"

/* What a family's kernels launch with, resolved from a caller's
 * ptxkit_config (launch_options_from_config): all zero means "tuned or
 * default" field by field. items_per_thread means what each family's names
 * say (reduce: 16-byte loads in flight; scan: vectors per thread; copy:
 * unroll; transpose: elements of the tile per thread). */
typedef struct launch_options {
    ptxkit_path path;
    ptxkit_load_op load_op;
    int block_size;
    int vector_bytes;
    int items_per_thread;
    int blocks_per_sm;
} launch_options;

/* Which launch_options field a family's public parameter name sets. */
typedef enum launch_field {
    LAUNCH_PATH = 0,
    LAUNCH_LOAD_OP,
    LAUNCH_BLOCK_SIZE,
    LAUNCH_VECTOR_BYTES,
    LAUNCH_ITEMS,
    LAUNCH_BLOCKS_PER_SM
} launch_field;
typedef struct config_name {
    const char *name;
    launch_field field;
} config_name;

/* The names every launch-option family reads besides its own. */
#define CONFIG_NAMES_COMMON                                                                                     \
    {"path", LAUNCH_PATH}, {"load_op", LAUNCH_LOAD_OP}, {"block_size", LAUNCH_BLOCK_SIZE},                     \
        {"vector_bytes", LAUNCH_VECTOR_BYTES}

/* Reads a caller's configuration (NULL: all defaults) into *out through
 * the family's names (a list ending at {NULL}): INVALID_ARGUMENT naming
 * `who` and the parameter for a name not in the list or a value out of its
 * range (path a ptxkit_path, load_op a ptxkit_load_op, block_size 0 or a
 * power of two in [32, 1024], vector_bytes 0, 4, 8 or 16, the others in
 * [0, 64]). */
ptxkit_status launch_options_from_config(ptxkit_context *ctx, const char *who, const ptxkit_config *config,
                                         const config_name *names, launch_options *out);
/* And back: the nonzero fields that have a name in the list. */
void launch_options_to_config(const launch_options *o, const config_name *names, ptxkit_config *out);

/* A kernel to JIT: the family's embedded source <family>.cu, an entry point,
 * injected defines "NAME=VALUE" (emulating template arguments) and NVRTC
 * options (static strings; NULL, or option_count of them). */
typedef struct kernel_spec {
    const char *family;
    const char *entry;
    const char *defines[PTXKIT_MAX_DEFINES];
    int define_count;
    const char *const *options;
    int option_count;
    bool dropped; /* a define did not fit: kernel_get refuses the spec */
} kernel_spec;

/* Adds "NAME=VALUE" to spec, formatting the value; storage is in `scratch`,
 * which must outlive the spec. Returns false when full (and marks the spec
 * dropped, so that kernel_get fails rather than compile without it). */
typedef struct define_scratch {
    char text[PTXKIT_MAX_DEFINES][64];
    int used;
} define_scratch;
bool spec_define_int(kernel_spec *spec, define_scratch *scratch, const char *name, long long value);
bool spec_define_str(kernel_spec *spec, define_scratch *scratch, const char *name, const char *value);

/* A family's kernel compiled by NVRTC with spec's defines, through the
 * kernel cache (the built-in program over the embedded <family>.cu). */
ptxkit_status kernel_get(ptxkit_context *ctx, const kernel_spec *spec, ptxkit_kernel **out);
/* The kernel `entry` of the embedded PTX file `ptx_name` ("copy.ptx") with
 * its plain global loads given op (DEFAULT leaves them plain). */
ptxkit_status ptx_kernel_get(ptxkit_context *ctx, const char *ptx_name, ptxkit_load_op op, const char *entry,
                             ptxkit_kernel **out);

/* Whether options->path means the JIT path here (AUTO: where NVRTC is present). */
bool options_use_jit(const launch_options *options);

/* The kernel `spec->entry` of a family by options->path (AUTO: JIT where
 * NVRTC is present, else PTX). The caller's spec carries the family's own
 * defines; this adds BLOCK_SIZE and LOAD_OP. JIT compiles for the block size
 * options->block_size (0: default_block). The PTX path loads
 * "<family>.ptx" with the loads given options->load_op, whose block size is fixed at generation time: an
 * explicit different block size is PTXKIT_ERROR_UNSUPPORTED. *block_used
 * receives the block size to launch with. */
ptxkit_status family_kernel_get(ptxkit_context *ctx, const launch_options *options,
                                const kernel_spec *spec, int default_block, ptxkit_kernel **out,
                                int *block_used);

/* Validates a caller's block size: a power of two in [32, 1024] and within
 * the device limit. 0 is replaced by `fallback`. */
ptxkit_status check_block_size(ptxkit_context *ctx, int requested, int fallback, int *out);
/* Validates options (NULL means defaults) and copies them to *out. */
ptxkit_status check_launch_options(ptxkit_context *ctx, const launch_options *in,
                                   launch_options *out);

/* The token a kernel source expects in LOAD_OP for an operator. */
const char *load_op_define(ptxkit_load_op op);

#endif
