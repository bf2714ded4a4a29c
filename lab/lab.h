/* The lab: kernels that exist to be measured (access patterns, structure
 * layouts, shared-memory banks, ceilings, async copies, L2 residency,
 * stencils, constant memory, the reduce, scan and GEMM ladders;
 * lab/kernels/) and their launchers (memlab.h, constlab.h, ladders.h). An
 * internal static library of the ptxkit command and the tests, never
 * installed, written against the public header only: its kernels are user
 * programs for the library (ptxkit_program_create, ptxkit_program_kernel_get,
 * ptxkit_kernel_launch), so libptxkit neither embeds nor exports any of it. */
#ifndef PTXKIT_LAB_H
#define PTXKIT_LAB_H

#include <stdarg.h>

#include "ptxkit.h"

/* A new program from the lab's kernel file `name` ("async_lab.cu"); the
 * caller destroys it. NOT_FOUND for a name the lab does not hold. */
ptxkit_status lab_program_create(const char *name, ptxkit_program **out);

/* Kernel `entry` of the lab file `file` compiled with `defines`, through
 * one program per file kept for the process (the kernel belongs to the
 * context, as every ptxkit_program_kernel_get result). */
ptxkit_status lab_kernel_get(ptxkit_context *ctx, const char *file, const char *entry, const char *const *defines,
                             int define_count, ptxkit_kernel **out);

/* The lab's failures, its own argument checks as the library's, go to the
 * one error channel: ptxkit_last_error_set, read with ptxkit_last_error(). */

#endif
