/* Host time per call of the built-in ops on small inputs, where a call is
 * bound by the host: the median over many calls of the wall time one call
 * takes to return (the stream is synchronized between batches, outside the
 * timing, so the launch queue never fills).
 *
 * Each library named on the command line (a libptxkit.so of any build: the
 * public API only) is opened with dlopen in this one process, and the
 * libraries take turns, round after round, so that two builds are compared
 * under the same conditions (clocks, other load): process-to-process
 * spread is larger than the differences measured.
 *   cc -O2 -Iinclude bench/host_cost.c -ldl -o host_cost
 *   ./host_cost base/build/libptxkit.so build/libptxkit.so */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "ptxkit.h"
#include "ptxkit_ops.h"

enum { CALLS = 2000, BATCH = 50, ROUNDS = 5, MAX_LIBS = 4, OPS = 5, SIZES = 4 };

/* The calls timed, resolved by name from each library. 0.3 renamed some and
 * changed a few shapes (stream create and destroy, transpose's selectors
 * first); the old names are looked up where the new ones are missing, so a
 * 0.2 build can be measured against a 0.3 one. */
typedef struct api {
    const char *path;
    int v03; /* the 0.3 names and shapes */
    ptxkit_status (*open)(int, ptxkit_context **);
    void *close;
    /* builds from before the thread-only error channel take the context; later ones take
     * nothing, and ignore the extra argument (caller-cleaned C calls) */
    const char *(*last_error)(ptxkit_context *);
    void *stream_create, *stream_destroy;
    ptxkit_status (*stream_synchronize)(ptxkit_context *, ptxkit_stream *);
    ptxkit_status (*malloc_)(ptxkit_context *, size_t, ptxkit_dptr *);
    void *free_;
    ptxkit_status (*memset32)(ptxkit_context *, ptxkit_dptr, uint32_t, size_t, ptxkit_stream *);
    ptxkit_status (*copy)(ptxkit_context *, ptxkit_dptr, ptxkit_dptr, size_t, const void *, ptxkit_stream *);
    ptxkit_status (*reduce)(ptxkit_context *, ptxkit_reduce_op, ptxkit_dtype, ptxkit_dptr, ptxkit_dptr, size_t,
                            const void *, ptxkit_stream *);
    ptxkit_status (*scan)(ptxkit_context *, ptxkit_scan_kind, ptxkit_reduce_op, ptxkit_dtype, ptxkit_dptr, ptxkit_dptr,
                          size_t, const void *, ptxkit_stream *);
    void *transpose;
    ptxkit_status (*gemm)(ptxkit_context *, ptxkit_dtype, ptxkit_gemm_op, ptxkit_gemm_op, size_t, size_t, size_t, double,
                          ptxkit_dptr, size_t, ptxkit_dptr, size_t, double, ptxkit_dptr, size_t, const void *,
                          ptxkit_stream *); /* NULL in builds without it */
    ptxkit_context *ctx;
    ptxkit_stream *stream;
    ptxkit_dptr in, out;
    double median[ROUNDS][OPS][SIZES];
} api;

typedef ptxkit_status (*transpose_02)(ptxkit_context *, ptxkit_dtype, ptxkit_dptr, ptxkit_dptr, size_t, size_t,
                                      ptxkit_transpose_kind, const void *, ptxkit_stream *);
typedef ptxkit_status (*transpose_03)(ptxkit_context *, ptxkit_transpose_kind, ptxkit_dtype, ptxkit_dptr, ptxkit_dptr,
                                      size_t, size_t, const void *, ptxkit_stream *);

static const char *const op_names[OPS] = {"copy", "reduce", "scan", "transpose", "gemm"};

static double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* gemm: float32 C = A B of sides sqrt(n) (32 to 256), A and B the input */
static size_t side_of(size_t n) {
    size_t s = 1;
    while (s * s < n) s *= 2;
    return s;
}

static ptxkit_status call(api *a, int op, size_t n) {
    const size_t side = side_of(n);
    switch (op) {
    case 4:
        return a->gemm(a->ctx, PTXKIT_FLOAT32, PTXKIT_GEMM_N, PTXKIT_GEMM_N, side, side, side, 1.0, a->in, side, a->in,
                       side, 0.0, a->out, side, NULL, a->stream);
    case 0: return a->copy(a->ctx, a->out, a->in, n * 4, NULL, a->stream);
    case 1: return a->reduce(a->ctx, PTXKIT_REDUCE_SUM, PTXKIT_INT32, a->out, a->in, n, NULL, a->stream);
    case 2: return a->scan(a->ctx, PTXKIT_SCAN_INCLUSIVE, PTXKIT_REDUCE_SUM, PTXKIT_INT32, a->out, a->in, n, NULL, a->stream);
    default:
        return a->v03 ? ((transpose_03)a->transpose)(a->ctx, PTXKIT_TRANSPOSE_PADDED, PTXKIT_FLOAT32, a->out, a->in, 32,
                                                     n / 32, NULL, a->stream)
                      : ((transpose_02)a->transpose)(a->ctx, PTXKIT_FLOAT32, a->out, a->in, 32, n / 32,
                                                     PTXKIT_TRANSPOSE_PADDED, NULL, a->stream);
    }
}

/* the 0.3 name, else the 0.2 one */
#define SYM(field, name, old) \
    ok = ok && ((*(void **)&a->field = dlsym(lib, name)) != NULL || (*(void **)&a->field = dlsym(lib, old)) != NULL)

static int load(api *a, const char *path) {
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        fprintf(stderr, "%s\n", dlerror());
        return 1;
    }
    a->path = path;
    int ok = 1;
    a->v03 = dlsym(lib, "ptxkit_context_create") != NULL;
    SYM(open, "ptxkit_context_create", "ptxkit_context_open");
    SYM(close, "ptxkit_context_destroy", "ptxkit_context_close");
    SYM(last_error, "ptxkit_last_error", "ptxkit_last_error");
    SYM(stream_create, "ptxkit_stream_create", "ptxkit_stream_create");
    SYM(stream_destroy, "ptxkit_stream_destroy", "ptxkit_stream_destroy");
    SYM(stream_synchronize, "ptxkit_stream_synchronize", "ptxkit_stream_synchronize");
    SYM(malloc_, "ptxkit_memory_alloc", "ptxkit_malloc");
    SYM(free_, "ptxkit_memory_free", "ptxkit_free");
    SYM(memset32, "ptxkit_memory_set32_async", "ptxkit_memset32_async");
    SYM(copy, "ptxkit_copy", "ptxkit_copy");
    SYM(reduce, "ptxkit_reduce", "ptxkit_reduce");
    SYM(scan, "ptxkit_scan", "ptxkit_scan");
    SYM(transpose, "ptxkit_transpose", "ptxkit_transpose");
    *(void **)&a->gemm = dlsym(lib, "ptxkit_gemm");
    if (!ok) {
        fprintf(stderr, "%s: missing symbols\n", path);
        return 1;
    }
    size_t max = (size_t)1 << 16;
    if (a->open(0, &a->ctx) != PTXKIT_SUCCESS) {
        fprintf(stderr, "no GPU: %s\n", a->last_error(NULL));
        return 77;
    }
    ptxkit_status made =
        a->v03 ? ((ptxkit_status(*)(ptxkit_context *, unsigned, int, ptxkit_stream **))a->stream_create)(a->ctx, 0, 0, &a->stream)
               : ((ptxkit_status(*)(ptxkit_context *, ptxkit_stream **))a->stream_create)(a->ctx, &a->stream);
    if (made || a->malloc_(a->ctx, max * 4, &a->in) ||
        a->malloc_(a->ctx, max * 4, &a->out) || a->memset32(a->ctx, a->in, 1, max, a->stream) ||
        a->stream_synchronize(a->ctx, a->stream)) {
        fprintf(stderr, "%s: setup: %s\n", path, a->last_error(a->ctx));
        return 1;
    }
    return 0;
}

int main(int argc, char **argv) {
    static api libs[MAX_LIBS];
    int count = argc - 1 < MAX_LIBS ? argc - 1 : MAX_LIBS;
    if (count < 1) {
        fprintf(stderr, "usage: host_cost LIBPTXKIT.so [LIBPTXKIT.so ...]\n");
        return 2;
    }
    for (int l = 0; l < count; l++) {
        int r = load(&libs[l], argv[l + 1]);
        if (r) return r;
    }
    static double t[CALLS];
    for (int round = 0; round < ROUNDS; round++)
        for (int l = 0; l < count; l++)
            for (int op = 0; op < OPS; op++)
                for (int k = 0; k < SIZES; k++) {
                    api *a = &libs[l];
                    if (op == 4 && !a->gemm) continue;
                    size_t n = (size_t)1 << (10 + 2 * k);
                    for (int w = 0; w < 100; w++) /* compile or load, warm the caches */
                        if (call(a, op, n)) {
                            fprintf(stderr, "%s %s: %s\n", a->path, op_names[op], a->last_error(a->ctx));
                            return 1;
                        }
                    a->stream_synchronize(a->ctx, a->stream);
                    for (int i = 0; i < CALLS; i++) {
                        double t0 = now_us();
                        call(a, op, n);
                        t[i] = now_us() - t0;
                        if (i % BATCH == BATCH - 1) a->stream_synchronize(a->ctx, a->stream);
                    }
                    a->stream_synchronize(a->ctx, a->stream);
                    qsort(t, CALLS, sizeof t[0], cmp);
                    a->median[round][op][k] = t[CALLS / 2];
                }
    /* per library, op and size: the median over rounds of each round's median */
    printf("library\top\tn\thost_us\tround_min\tround_max\n");
    for (int l = 0; l < count; l++)
        for (int op = 0; op < OPS; op++)
            for (int k = 0; k < SIZES; k++) {
                if (op == 4 && !libs[l].gemm) continue;
                double r[ROUNDS];
                for (int i = 0; i < ROUNDS; i++) r[i] = libs[l].median[i][op][k];
                qsort(r, ROUNDS, sizeof r[0], cmp);
                printf("%s\t%s\t%zu\t%.3f\t%.3f\t%.3f\n", libs[l].path, op_names[op], (size_t)1 << (10 + 2 * k),
                       r[ROUNDS / 2], r[0], r[ROUNDS - 1]);
            }
    for (int l = 0; l < count; l++) {
        api *a = &libs[l];
        /* 0.2's calls returned a status, 0.3's return nothing: either way it is ignored */
        ((void (*)(ptxkit_context *, ptxkit_dptr))a->free_)(a->ctx, a->in);
        ((void (*)(ptxkit_context *, ptxkit_dptr))a->free_)(a->ctx, a->out);
        if (a->v03) ((void (*)(ptxkit_stream *))a->stream_destroy)(a->stream);
        else ((void (*)(ptxkit_context *, ptxkit_stream *))a->stream_destroy)(a->ctx, a->stream);
        ((void (*)(ptxkit_context *))a->close)(a->ctx);
    }
    return 0;
}
