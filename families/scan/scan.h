/* Internal interface of the scan family (scan.c) for the command-line
 * tool, the tuner and the tests. */
#ifndef PTXKIT_OPS_SCAN_H
#define PTXKIT_OPS_SCAN_H

#include <stdbool.h>

#include "ptxkit.h"
#include "ptxkit_ops.h"
#include "runtime/launch.h"
#include "scan_defaults.h" /* shared with scan.cu */

/* Scratch slots per context: a stream keeps one while it is among the
 * SCAN_SLOTS most recently used streams (as reduce's slots). */
#define SCAN_SLOTS 16

enum {
    SCAN_MAX_UNROLL = 16,
    SCAN_EPOCH_LIMIT = 1 << 30, /* epochs are 30 bits (scan.cu) */
};

/* Whether (op, type) is provided: the same combinations as ptxkit_reduce. */
/* ptxkit_scan's parameter names (ptxkit_scan_experiment and the sharded scan
 * read the same). */
extern const config_name scan_config_names[];

bool scan_supported(ptxkit_reduce_op op, ptxkit_dtype type);

/* Argument checks of ptxkit_scan: enums, support,
 * NULL and misaligned pointers, overflow, and overlap (in == out is fine,
 * a partial overlap is not). Records and returns the failure. */
ptxkit_status scan_check_args(ptxkit_context *ctx, const char *who, ptxkit_scan_kind kind, ptxkit_reduce_op op,
                              ptxkit_dtype type, ptxkit_dptr in, size_t n, ptxkit_dptr out);

/* Experiment switches of the production kernel for the benchmark (-1: the
 * kernel's own default, which is what ptxkit_scan uses): tiles numbered by
 * a ticket (1) or by blockIdx.x (0), the back-off in nanoseconds between
 * polls of a tile that has not published yet, the look-back window, the
 * register bound, the kernel, and the staged kernel's copies per tile. */
typedef struct scan_experiment {
    int dynamic_tiles;
    int spin_ns;
    int lookback;   /* tiles per lane per look-back step (SCAN_LOOKBACK) */
    int min_blocks; /* blocks per SM asked of __launch_bounds__ (SCAN_MIN_BLOCKS) */
    int staged;     /* 1: the staged kernel (an error where it cannot run), 0: the register kernel */
    int chunks;     /* staged kernel: bulk copies per tile (SCAN_CHUNKS; divides the block's warps) */
} scan_experiment;
#define SCAN_EXPERIMENT_NONE ((scan_experiment){-1, -1, -1, -1, -1, -1})

/* ptxkit_scan with experiment switches (NULL: none). */
ptxkit_status scan_run(ptxkit_context *ctx, ptxkit_scan_kind kind, ptxkit_reduce_op op, ptxkit_dtype type,
                       ptxkit_dptr in, size_t n, ptxkit_dptr out, const launch_options *options,
                       ptxkit_stream *stream, const scan_experiment *experiment);

/* Loads (compiling if needed) the production kernel of (op, type) for
 * these options without launching it. */
ptxkit_status scan_prepare(ptxkit_context *ctx, ptxkit_reduce_op op, ptxkit_dtype type,
                           const launch_options *options);

/* Elements per tile (one block's share) of the production kernel for these
 * options and element type, after tuning and defaults: what the float error
 * bound of ptxkit.h counts in. */
ptxkit_status scan_tile_elements(ptxkit_context *ctx, ptxkit_reduce_op op, ptxkit_dtype type, size_t n,
                                 const launch_options *options, size_t *elements);

/* Tests: sets the epoch every scratch slot of ctx uses next (2 ..
 * SCAN_EPOCH_LIMIT - 1; 1 is the captured launches'), so a test reaches the
 * wrap-around in a few calls. */
ptxkit_status scan_debug_set_epoch(ptxkit_context *ctx, unsigned epoch);

#endif
