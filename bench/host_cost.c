/* Host time per call of the built-in ops on small inputs, where a call is
 * bound by the host: the median over many calls of the wall time one call
 * takes to return (the stream is synchronized between batches, outside the
 * timing, so the launch queue never fills). Public API only, so the same
 * file measures any ptxkit build:
 *   cc -O2 -Iinclude bench/host_cost.c -Lbuild -lptxkit -o host_cost && ./host_cost */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "ptxkit.h"

enum { CALLS = 4000, BATCH = 50 };

static double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

typedef enum op { OP_COPY, OP_REDUCE, OP_SCAN, OP_TRANSPOSE } op;
static const char *const names[] = {"copy", "reduce", "scan", "transpose"};

static ptxkit_status call(ptxkit_context *ctx, op o, ptxkit_dptr out, ptxkit_dptr in, size_t n, ptxkit_stream *s) {
    switch (o) {
    case OP_COPY: return ptxkit_copy(ctx, out, in, n * 4, NULL, s);
    case OP_REDUCE: return ptxkit_reduce(ctx, PTXKIT_REDUCE_SUM, PTXKIT_INT32, out, in, n, NULL, s);
    case OP_SCAN: return ptxkit_scan(ctx, PTXKIT_SCAN_INCLUSIVE, PTXKIT_REDUCE_SUM, PTXKIT_INT32, out, in, n, NULL, s);
    case OP_TRANSPOSE: return ptxkit_transpose(ctx, PTXKIT_FLOAT32, out, in, 32, n / 32, PTXKIT_TRANSPOSE_PADDED, NULL, s);
    }
    return PTXKIT_ERROR_INVALID_ARGUMENT;
}

int main(void) {
    ptxkit_context *ctx;
    if (ptxkit_context_open(0, &ctx) != PTXKIT_SUCCESS) {
        fprintf(stderr, "no GPU: %s\n", ptxkit_last_error(NULL));
        return 77;
    }
    ptxkit_stream *s;
    ptxkit_dptr in, out;
    size_t max = (size_t)1 << 16;
    if (ptxkit_stream_create(ctx, &s) || ptxkit_malloc(ctx, max * 4, &in) || ptxkit_malloc(ctx, max * 4, &out) ||
        ptxkit_memset32_async(ctx, in, 1, max, s) || ptxkit_stream_synchronize(ctx, s)) {
        fprintf(stderr, "setup: %s\n", ptxkit_last_error(ctx));
        return 1;
    }
    static double t[CALLS];
    printf("op\tn\thost_us_median\thost_us_p10\thost_us_p90\n");
    for (int o = 0; o < 4; o++)
        for (int lg = 10; lg <= 16; lg += 2) {
            size_t n = (size_t)1 << lg;
            for (int w = 0; w < 200; w++) /* compile or load, warm the caches */
                if (call(ctx, (op)o, out, in, n, s)) {
                    fprintf(stderr, "%s: %s\n", names[o], ptxkit_last_error(ctx));
                    return 1;
                }
            ptxkit_stream_synchronize(ctx, s);
            for (int i = 0; i < CALLS; i++) {
                double t0 = now_us();
                call(ctx, (op)o, out, in, n, s);
                t[i] = now_us() - t0;
                if (i % BATCH == BATCH - 1) ptxkit_stream_synchronize(ctx, s);
            }
            ptxkit_stream_synchronize(ctx, s);
            qsort(t, CALLS, sizeof t[0], cmp);
            printf("%s\t%zu\t%.3f\t%.3f\t%.3f\n", names[o], n, t[CALLS / 2], t[CALLS / 10], t[CALLS * 9 / 10]);
        }
    ptxkit_free(ctx, in);
    ptxkit_free(ctx, out);
    ptxkit_stream_destroy(ctx, s);
    ptxkit_context_close(ctx);
    return 0;
}
