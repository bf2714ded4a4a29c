/* Kernel variants a GPU suite compiles (or loads) before it runs them, in
 * parallel: NVRTC compiles of one context may run on several threads, and
 * a cold cache otherwise costs the suite minutes. Used by the reduce and
 * scan suites, whose variants are (ladder step, operator, type, options). */
#ifndef PTXKIT_TEST_COMPILE_JOBS_H
#define PTXKIT_TEST_COMPILE_JOBS_H

#include <stdbool.h>
#include <stddef.h>

#include "ptxkit.h"
#include "ptxkit_ops.h"
#include "runtime/launch.h"

typedef struct compile_job {
    int step; /* 0: the family's production kernel; 1..: a ladder step */
    ptxkit_reduce_op op;
    ptxkit_dtype type;
    launch_options options;
} compile_job;

typedef struct compile_jobs {
    compile_job *jobs;
    size_t count, capacity;
} compile_jobs;

/* Prepares (compiles or loads) one variant. */
typedef ptxkit_status (*compile_job_fn)(ptxkit_context *ctx, const compile_job *job);

void compile_jobs_add(compile_jobs *jobs, int step, ptxkit_reduce_op op, ptxkit_dtype type,
                      launch_options options);
/* Runs `prepare` over every job on PTXKIT_TEST_COMPILE_THREADS threads
 * (default: the CPUs, at most 16), prints each failure and the time taken,
 * frees the jobs and returns how many failed. NOT_FOUND on the PTX path is
 * not a failure: a build without the family's PTX, which the PTX test
 * reports. */
int compile_jobs_run(ptxkit_context *ctx, compile_jobs *jobs, compile_job_fn prepare);

/* Whether (op, type) is a kernel of its own, not a public combination that
 * the family maps onto another kernel. */
bool compile_jobs_kernel_combo(int op, int type);
/* Whether a shape's vector width can hold one element of `type`. */
bool compile_jobs_shape_applies(const launch_options *options, ptxkit_dtype type);

#endif
