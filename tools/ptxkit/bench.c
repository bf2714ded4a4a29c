/* `ptxkit bench NAME`: dispatch to the benchmark of a kernel family. */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "ptxkit.h"

typedef struct bench_entry {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} bench_entry;

static const bench_entry benches[] = {
    {"copy", bench_copy, "vectorized copy: each width and cache operator vs cuMemcpyDtoD"},
    {"startup", bench_startup, "first kernel after context open (compile or disk cache), family or --user kernel"},
    {"launch", bench_launch, "ptxkit_launch against raw cuLaunchKernel, back to back and with synchronize"},
    {"access", bench_access, "global access patterns (offset, stride, gather, broadcast, ...) x load cache operators"},
    {"aos", bench_aos, "float3 array of structures vs structure of arrays, staged and 16-byte aligned"},
    {"banks", bench_banks, "shared-memory bank conflicts by stride for 1-, 4- and 8-byte words"},
    {"transpose", bench_transpose, "naive / tiled / padded transpose vs cuMemcpyDtoD"},
    {"reduce", bench_reduce, "ptxkit_reduce by operator, type and size vs a read ceiling (--compare: vs CUB)"},
    {"user-tune", bench_user_tune, "the tuner on an application kernel (public API): budgeted pick vs exhaustive best"},
    {"scan", bench_scan, "ptxkit_scan by operator, type, kind and size vs cuMemcpyDtoD (--compare: vs CUB)"},
    {"async", bench_async, "global -> shared: synchronous vs cp.async one-stage and multi-stage vs bulk copies"},
    {"redux", bench_redux, "warp reductions: shuffle fan-in vs redux.sync (__reduce_*_sync), cycles per reduction"},
    {"l2", bench_l2, "L2 persistence: random updates beside a streaming array, set-aside x hit ratio; producer -> consumer"},
    {"stencil", bench_stencil, "5-point stencil: __syncthreads sandwich vs cp.async pipelines vs warp-specialized mbarriers"},
    {"gemm", bench_gemm, "ptxkit_gemm float32/float64 by shape in TFLOP/s and % of peak (--compare: vs cuBLAS)"},
    {"blocks", bench_blocks, "GB/s against block size, one curve per items per thread (copy, reduce, transpose, scan)"},
    {"constant", bench_constant, "coefficients in __constant__ vs global, ld.global.nc and shared: one address per warp vs many"},
};

static void usage(FILE *out) {
    fprintf(out, "usage: ptxkit bench NAME [--device N] [--csv|--json] [--json FILE] [--csv FILE] [--md FILE] [OPTIONS]\n"
                 "\nbenchmarks:\n");
    for (size_t i = 0; i < sizeof benches / sizeof benches[0]; i++)
        fprintf(out, "  %-10s %s\n", benches[i].name, benches[i].summary);
    fprintf(out, "\nptxkit bench NAME --help describes its options; --svg FILE draws a chart where a benchmark says so.\n");
}

int cmd_bench(int argc, char **argv) {
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        if (argc < 2) fprintf(stderr, "ptxkit bench: needs the NAME of a benchmark\n");
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("ptxkit %s\n", PTXKIT_VERSION_STRING);
        return 0;
    }
    for (size_t i = 0; i < sizeof benches / sizeof benches[0]; i++)
        if (strcmp(argv[1], benches[i].name) == 0) return benches[i].run(argc - 1, argv + 1);
    fprintf(stderr, "ptxkit bench: unknown benchmark '%s'\n", argv[1]);
    usage(stderr);
    return 2;
}
