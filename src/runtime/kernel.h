/* Kernel objects (kernel.c): the ptxkit_kernel a loaded function is handed
 * out as, its occupancy and grid size, and the checked launch. The struct
 * itself is in objects.h. */
#ifndef PTXKIT_RUNTIME_KERNEL_H
#define PTXKIT_RUNTIME_KERNEL_H

#include <stdbool.h>
#include <stddef.h>

#include "driver/driver.h"
#include "ptxkit.h"
#include "runtime/cache_key.h"

/* The kernel object for fn, registered under key (created on first use),
 * with its module's load log (registry-owned); NULL (error recorded) when
 * out of memory or the driver fails. */
ptxkit_kernel *kernel_object(ptxkit_context *ctx, const cache_key *key, CUfunction fn, const char *jit_log);

/* Reads k's thread and dynamic shared memory limits from the driver if
 * they are not read yet (kernel.c says why they wait for a need). */
void kernel_limits_read(ptxkit_kernel *k);

/* Grid for a grid-stride kernel: resident blocks per SM (from occupancy,
 * asked of the driver once per context and kernel shape; capped by
 * blocks_per_sm when > 0) x SM count, at most max_useful (0: no cap). */
ptxkit_status grid_size_for(ptxkit_kernel *k, int block_size, size_t shared_bytes, int blocks_per_sm,
                            size_t max_useful, unsigned *grid);

/* ptxkit_kernel_launch for callers that made k's context current (the ops): the
 * same checks, without asking the driver which context is current. */
ptxkit_status kernel_launch(ptxkit_kernel *k, ptxkit_dim3 grid, ptxkit_dim3 block, size_t shared, ptxkit_stream *stream,
                            void **args);
/* kernel_launch for a kernel that may start while the kernel ahead of it on
 * the stream ends, on a plain stream too: programmatically where k may be
 * (kernel_allow_programmatic), so that its blocks start once every block of
 * that kernel has called ptxkit::grid_dependents_launch() or exited; else
 * as kernel_launch. Only for a kernel that touches no memory of the kernel
 * ahead and waits for it before exiting
 * (ptxkit::grid_dependency_begin_unless). */
ptxkit_status kernel_launch_early(ptxkit_kernel *k, ptxkit_dim3 grid, ptxkit_dim3 block, size_t shared,
                                 ptxkit_stream *stream, void **args);
/* Lets kernel_launch launch k programmatically into a graph this thread
 * captures (sm_90+ GPU, k compiled for compute_90 or later, a driver with
 * cuLaunchKernelEx; otherwise nothing). Decided once per kernel.
 * Only for kernels whose every entry begins with
 * ptxkit::grid_dependency_begin() or _begin_unless(): the built-in
 * families' JIT kernels. */
void kernel_allow_programmatic(ptxkit_kernel *k);

/* Raises k's dynamic shared memory limit to at least bytes (asking the
 * driver only when it must), with the SM's memory preferring shared when
 * prefer_shared. Context current. */
ptxkit_status kernel_reserve_dynamic_shared(ptxkit_kernel *k, size_t bytes, bool prefer_shared);

#endif
