#include "ptxkit_ops.h"
#include "compile_jobs.h"

#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "reduce/reduce.h"

void compile_jobs_add(compile_jobs *jobs, int step, ptxkit_reduce_op op, ptxkit_dtype type,
                      launch_options options) {
    if (jobs->count == jobs->capacity) {
        jobs->capacity = jobs->capacity ? 2 * jobs->capacity : 256;
        jobs->jobs = realloc(jobs->jobs, jobs->capacity * sizeof *jobs->jobs);
        assert_non_null(jobs->jobs);
    }
    jobs->jobs[jobs->count++] = (compile_job){step, op, type, options};
}

typedef struct run_state {
    ptxkit_context *ctx;
    const compile_jobs *jobs;
    compile_job_fn prepare;
    atomic_size_t next;
    atomic_int failures;
} run_state;

static void *worker(void *arg) {
    run_state *s = arg;
    for (;;) {
        size_t i = atomic_fetch_add(&s->next, 1);
        if (i >= s->jobs->count) return NULL;
        const compile_job *j = &s->jobs->jobs[i];
        ptxkit_status st = s->prepare(s->ctx, j);
        if (st == PTXKIT_ERROR_NOT_FOUND && j->options.path == PTXKIT_PATH_PTX) continue;
        if (st != PTXKIT_SUCCESS) {
            atomic_fetch_add(&s->failures, 1);
            printf("compile failed: step %d %s.%s block %d: %s\n", j->step, ptxkit_reduce_op_name(j->op),
                   ptxkit_dtype_name(j->type), j->options.block_size, ptxkit_last_error());
        }
    }
}

static double seconds_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int compile_jobs_run(ptxkit_context *ctx, compile_jobs *jobs, compile_job_fn prepare) {
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    const char *env = getenv("PTXKIT_TEST_COMPILE_THREADS");
    int threads = env ? atoi(env) : (int)(cpus > 16 ? 16 : cpus < 1 ? 1 : cpus);
    if (threads < 1) threads = 1;
    if (threads > 64) threads = 64;
    run_state s = {.ctx = ctx, .jobs = jobs, .prepare = prepare};
    atomic_init(&s.next, 0);
    atomic_init(&s.failures, 0);
    double t0 = seconds_now();
    pthread_t tid[64];
    for (int i = 0; i < threads; i++) assert_int_equal(pthread_create(&tid[i], NULL, worker, &s), 0);
    for (int i = 0; i < threads; i++) pthread_join(tid[i], NULL);
    printf("compiled or loaded %zu kernel variants with %d threads in %.1f s\n", jobs->count, threads,
           seconds_now() - t0);
    free(jobs->jobs);
    *jobs = (compile_jobs){0};
    return atomic_load(&s.failures);
}

bool compile_jobs_kernel_combo(int op, int type) {
    ptxkit_reduce_op kop;
    ptxkit_dtype ktype;
    return reduce_kernel_suffix((ptxkit_reduce_op)op, (ptxkit_dtype)type, &kop, &ktype) && (int)kop == op &&
           (int)ktype == type;
}

bool compile_jobs_shape_applies(const launch_options *options, ptxkit_dtype type) {
    return !options->vector_bytes || (size_t)options->vector_bytes >= ptxkit_dtype_size(type);
}
