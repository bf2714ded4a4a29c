/* ptxkit: command-line tool over the library. A command is a line of the
 * table below and a function that parses its arguments with args_parse
 * (args.h) before it touches a GPU. */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "ptxkit.h"
#include "ptxkit_ops.h"
#include "report.h"

typedef struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} command;

static const command commands[] = {
    {"info", cmd_info, "driver, NVRTC and device properties, cache directory, measured copy bandwidth"},
    {"compile", cmd_compile, "compile a kernel family or your own .cu file with NVRTC (no GPU needed): PTX or resources"},
    {"bench", cmd_bench, "benchmarks: ptxkit bench --help lists them"},
    {"cache", cmd_cache, "show or purge the on-disk kernel cache"},
    {"ladder", cmd_ladder, "the ladders from a naive kernel to the production one: reduce, scan, gemm"},
    {"tune", cmd_tune, "choose block size and the other injected constants for this GPU; --show lists them"},
    {"report", cmd_report, "compare two --json reports row by row (exit 1 on a regression): report compare A B"},
};

static void usage(FILE *out) {
    fprintf(out, "usage: ptxkit COMMAND [OPTIONS]\n       ptxkit --version\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(out, "  %-11s %s\n", commands[i].name, commands[i].summary);
    fprintf(out, "\n  --help      this text (ptxkit COMMAND --help: a command's)\n"
                 "  --version   the version, as every command's --version prints it\n");
    fprintf(out, "\nptxkit COMMAND --help describes a command; every command takes --help and --version, and a\n"
                 "usage error exits 2 with the command's usage lines before any GPU is opened.\n"
                 "Commands that print tables also write reports like nvbench's, several at once: --json FILE\n"
                 "(metadata and typed columns), --csv FILE, --md FILE; - is standard output, and --csv or --json\n"
                 "alone is the same as with -. Their JSON Schemas are installed in share/ptxkit/schemas.\n");
}

/* The library never prints: it falls back to the default on an unusable
 * environment value and keeps the reason, which the command shows once. */
static void warn_environment(void) {
    char notes[1024];
    if (ptxkit_environment_notes_get(notes, sizeof notes) != PTXKIT_SUCCESS) return;
    for (char *line = notes, *end; *line; line = end + (*end != 0)) {
        end = line + strcspn(line, "\n");
        fprintf(stderr, "ptxkit: warning: %.*s\n", (int)(end - line), line);
    }
}

int main(int argc, char **argv) {
    warn_environment();
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "version") == 0) {
        printf("ptxkit %s\n", PTXKIT_VERSION_STRING);
        return 0;
    }
    report_set_command(argc - 1, argv + 1);
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(argv[1], commands[i].name) == 0) {
            int rc = commands[i].run(argc - 1, argv + 1);
            /* the report files, once the tables are all there */
            if (!report_finish(argv[1], rc) && rc == 0) rc = 1;
            return rc;
        }
    fprintf(stderr, "ptxkit: unknown %s '%s'\n", argv[1][0] == '-' ? "option" : "command", argv[1]);
    usage(stderr);
    return 2;
}

/* `ptxkit bench NAME`: dispatch to the benchmark of a kernel family. */
typedef struct bench_entry {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} bench_entry;

static const bench_entry benches[] = {
    {"copy", bench_copy, "vectorized copy: each width and cache operator vs cuMemcpyDtoD"},
    {"startup", bench_startup, "first kernel after context open (compile or disk cache), family or --user kernel"},
    {"launch", bench_launch, "ptxkit_kernel_launch against raw cuLaunchKernel, back to back and with synchronize"},
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
    {"graph", bench_graph, "100 small reductions one by one vs one CUDA graph replay (ptxkit_graph), us per op"},
    {"multi", bench_multi, "sharded reduce and scan over 1-8 GPUs (NCCL) vs the sum of single-GPU ops; all-reduce busbw"},
    {"compile", bench_compile, "a second compile in one process with NVRTC's precompiled headers off and on (no GPU)"},
    {"streams", bench_streams, "H2D -> kernel -> D2H pipelined over 1-8 streams: chunk size, pinned/pageable/mapped; caveats"},
    {"host", bench_host, "host arrays: reduce and transform of pinned, pageable and mapped memory vs the bus (H2D, D2H)"},
};

static void bench_usage(FILE *out) {
    fprintf(out, "usage: ptxkit bench NAME [--device N] [--csv|--json] [--json FILE] [--csv FILE] [--md FILE] [OPTIONS]\n"
                 "\nbenchmarks:\n");
    for (size_t i = 0; i < sizeof benches / sizeof benches[0]; i++)
        fprintf(out, "  %-10s %s\n", benches[i].name, benches[i].summary);
    fprintf(out, "\nptxkit bench NAME --help describes its options; --svg FILE draws a chart where a benchmark says so.\n");
}

int cmd_bench(int argc, char **argv) {
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        if (argc < 2) fprintf(stderr, "ptxkit bench: needs the NAME of a benchmark\n");
        bench_usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("ptxkit %s\n", PTXKIT_VERSION_STRING);
        return 0;
    }
    for (size_t i = 0; i < sizeof benches / sizeof benches[0]; i++)
        if (strcmp(argv[1], benches[i].name) == 0) return benches[i].run(argc - 1, argv + 1);
    fprintf(stderr, "ptxkit bench: unknown benchmark '%s'\n", argv[1]);
    bench_usage(stderr);
    return 2;
}

/* `ptxkit ladder NAME`: dispatch to the ladder of a kernel family, the
 * steps from a naive kernel to the production one, timed on this GPU. */
typedef struct ladder_entry {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} ladder_entry;

static const ladder_entry ladders[] = {
    {"reduce", ladder_reduce, "the reduction ladder (Harris steps 1-7, then shuffles, redux.sync) next to the G80 table"},
    {"scan", ladder_scan, "the scan ladder (Hillis-Steele, Blelloch, shuffles) next to the 2007 table"},
    {"gemm", ladder_gemm, "the matrix-multiply ladder (naive to cp.async pipelines) with the G80 arithmetic"},
};

static void ladder_usage(FILE *out) {
    fprintf(out, "usage: ptxkit ladder NAME [--device N] [--csv|--json] [--json FILE] [--csv FILE] [--md FILE] [OPTIONS]\n"
                 "\nladders:\n");
    for (size_t i = 0; i < sizeof ladders / sizeof ladders[0]; i++)
        fprintf(out, "  %-10s %s\n", ladders[i].name, ladders[i].summary);
    fprintf(out, "\nptxkit ladder NAME --help describes its options.\n");
}

int cmd_ladder(int argc, char **argv) {
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        if (argc < 2) fprintf(stderr, "ptxkit ladder: needs the NAME of a ladder\n");
        ladder_usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("ptxkit %s\n", PTXKIT_VERSION_STRING);
        return 0;
    }
    for (size_t i = 0; i < sizeof ladders / sizeof ladders[0]; i++)
        if (strcmp(argv[1], ladders[i].name) == 0) return ladders[i].run(argc - 1, argv + 1);
    fprintf(stderr, "ptxkit ladder: unknown ladder '%s'\n", argv[1]);
    ladder_usage(stderr);
    return 2;
}
