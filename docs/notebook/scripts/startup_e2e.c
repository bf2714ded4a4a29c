/* The steps bench startup --user times, through libptxkit.so with a fake driver (startup_fakecuda.c) on a machine without a GPU: microseconds and minor page faults per step. Run it twice with one PTXKIT_CACHE_DIR: the second run is warm. */
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "ptxkit.h"
#include <dlfcn.h>
static const char user_source[] =
    "extern \"C\" __global__ void startup_fill(unsigned *out, unsigned v) { out[threadIdx.x] = v + threadIdx.x; }\n";
static long minflt(void) { struct rusage u; getrusage(RUSAGE_SELF, &u); return u.ru_minflt; }
#include <time.h>
static double T[8]; static int TN; static double nowus(void){struct timespec t; clock_gettime(CLOCK_MONOTONIC,&t); return t.tv_sec*1e6+t.tv_nsec/1e3;}
#define MARK(s) (T[TN++]=nowus())
int main(void) {
    ptxkit_context *ctx = NULL;
    if (ptxkit_context_create(0, &ctx) != PTXKIT_SUCCESS) { fprintf(stderr, "%s\n", ptxkit_last_error()); return 2; }
    long f[6]; f[0] = minflt();
    MARK("ALLOC");
    ptxkit_dptr out = 0; ptxkit_program *program = NULL; ptxkit_kernel *kernel = NULL; unsigned value = 1000;
    ptxkit_status st = ptxkit_memory_alloc(ctx, 32 * sizeof(unsigned), &out);
    f[1] = minflt(); MARK("CREATE");
    if (st == PTXKIT_SUCCESS) st = ptxkit_program_create("startup.cu", user_source, NULL, 0, &program);
    f[2] = minflt(); MARK("GET");
    if (st == PTXKIT_SUCCESS) st = ptxkit_program_kernel_get(ctx, program, "startup_fill", NULL, 0, &kernel);
    f[3] = minflt(); MARK("LAUNCH");
    void *args[] = {&out, &value};
    if (st == PTXKIT_SUCCESS) st = ptxkit_kernel_launch(kernel, (ptxkit_dim3){1, 1, 1}, (ptxkit_dim3){32, 1, 1}, 0, NULL, args);
    if (st == PTXKIT_SUCCESS) st = ptxkit_context_synchronize(ctx);
    f[4] = minflt(); MARK("END");
    if (st != PTXKIT_SUCCESS) { fprintf(stderr, "failed: %s\n", ptxkit_last_error()); return 1; }
    fprintf(stderr, "us: alloc %.1f create %.1f get %.1f launch+sync %.1f\n", T[1]-T[0], T[2]-T[1], T[3]-T[2], T[4]-T[3]); fprintf(stderr, "minor faults: alloc %ld create %ld get %ld launch+sync %ld; log: %.80s\n", f[1] - f[0], f[2] - f[1], f[3] - f[2], f[4] - f[3],
            ptxkit_kernel_jit_log_get(kernel));
    void (*dump)(void) = (void (*)(void))dlsym(RTLD_DEFAULT, "ptxkit_diag_dump"); if (dump) dump();
    _exit(0);
}
