/* The transpose family's configuration (tile, block, vector width): the
 * defaults, the checks, the tuning-database shape classes, and the launch
 * with an explicit configuration (transpose.cu). Internal: used by
 * src/tune/params.c, the tuner's transpose space and the tests. */
#ifndef PTXKIT_OPS_TRANSPOSE_H
#define PTXKIT_OPS_TRANSPOSE_H

#include <stdbool.h>
#include <stddef.h>

#include "ptxkit.h"
#include "ptxkit_ops.h"
#include "runtime/launch.h"

typedef struct transpose_config {
    int tile;             /* tile edge: 16, 32, 64 or 128 (dynamic shared memory) */
    int block_size;       /* threads per block: tile <= block <= tile * tile */
    int vector_bytes;     /* global access width for whole tiles: 4, 8 or 16 */
} transpose_config;

/* The configuration ptxkit_transpose uses for a type when the options and
 * the tuning database leave it open, and the one the precompiled PTX is
 * built for. */
transpose_config transpose_default_config(ptxkit_dtype type, bool jit);
/* Whether c is a configuration transpose.cu can run (no device limits);
 * false with a reason. */
bool transpose_config_check(const transpose_config *c, char *why, size_t why_size);
/* The configuration launch options name (0: open): block_size threads,
 * items_per_thread elements per thread, so the tile is the square of
 * block x items elements; one of the two alone keeps the default tile where
 * it can; an open vector width is the default, narrowed to what the block
 * can map. False with a reason when no configuration fits. Pure: the tuner
 * checks its candidates with it. */
bool transpose_config_from(ptxkit_dtype type, bool jit, int block_size, int items_per_thread, int vector_bytes,
                           transpose_config *out, char *why, size_t why_size);
/* Whether both sides are whole 16-byte vectors of type: the shape class
 * whose tuned entries are the type's own ("float32"); other shapes read
 * "<type>.unaligned". */
bool transpose_shape_aligned(ptxkit_dtype type, size_t rows, size_t cols);
/* The size ptxkit_transpose looks the tuning database up with: the power
 * of two nearest rows x cols (0 for an empty or overflowing matrix). */
size_t transpose_tune_size(size_t rows, size_t cols);
/* What ptxkit_transpose runs for these arguments: the options checked
 * (*used, may be NULL), the tuned entry applied where it applies, and the
 * configuration (*config). */
ptxkit_status transpose_resolve(ptxkit_context *ctx, ptxkit_dtype type, size_t rows, size_t cols,
                                ptxkit_transpose_kind kind, const launch_options *options,
                                launch_options *used, transpose_config *config);
/* ptxkit_transpose with the tile, block and vector width given. The
 * options' block_size and vector_bytes are ignored; path and load_op count. */
ptxkit_status transpose_run(ptxkit_context *ctx, ptxkit_dtype type, ptxkit_dptr dst, ptxkit_dptr src, size_t rows,
                            size_t cols, ptxkit_transpose_kind kind, const transpose_config *config,
                            const launch_options *options, ptxkit_stream *stream);
const char *transpose_kind_name(ptxkit_transpose_kind kind);
/* Whether transpose_run with these arguments runs the kernel that moves the
 * tile rows' hand-over in each output row to a 32-byte sector boundary
 * (transpose.cu's SECTOR_ALIGN). */
bool transpose_sector_aligned(const transpose_config *c, ptxkit_transpose_kind kind, bool jit, ptxkit_dtype type,
                              ptxkit_dptr dst, ptxkit_dptr src, size_t rows, size_t cols);

#endif
