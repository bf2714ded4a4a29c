/* ptxkit bench user-tune: the tuner on an application's own kernel, through
 * the public tunable API only. A memory-bound z = a*x + y with BLOCK_SIZE,
 * ITEMS_PER_THREAD and LOAD_OP injected is tuned within a budget and then
 * searched exhaustively; the report compares the budgeted pick with the
 * exhaustive best (re-timed together) and with cuMemcpyDtoD of the same
 * bytes, measured in the same run. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptxkit_tune.h"
#include "args.h"
#include "cli.h"
#include "commands.h"

static const char *const axpy_source =
    "#include <ptxkit/load.cuh>\n"
    "// z = a * x + y: ITEMS_PER_THREAD elements per thread, BLOCK_SIZE apart,\n"
    "// all loads issued before the stores.\n"
    "extern \"C\" __global__ void __launch_bounds__(BLOCK_SIZE)\n"
    "axpy(const float *x, const float *y, float *z, float a, unsigned long long n) {\n"
    "    unsigned long long base = (unsigned long long)blockIdx.x * BLOCK_SIZE * ITEMS_PER_THREAD + threadIdx.x;\n"
    "    float xv[ITEMS_PER_THREAD], yv[ITEMS_PER_THREAD];\n"
    "#pragma unroll\n"
    "    for (int k = 0; k < ITEMS_PER_THREAD; k++) {\n"
    "        unsigned long long i = base + (unsigned long long)k * BLOCK_SIZE;\n"
    "        if (i < n) { xv[k] = ptxkit::ld_f32(x + i); yv[k] = ptxkit::ld_f32(y + i); }\n"
    "    }\n"
    "#pragma unroll\n"
    "    for (int k = 0; k < ITEMS_PER_THREAD; k++) {\n"
    "        unsigned long long i = base + (unsigned long long)k * BLOCK_SIZE;\n"
    "        if (i < n) z[i] = a * xv[k] + yv[k];\n"
    "    }\n"
    "}\n";

typedef struct axpy_run {
    ptxkit_context *ctx;
    ptxkit_dptr x, y, z;
    size_t n;
    float a;
    float *host_x, *host_y, *host_z;
} axpy_run;

static ptxkit_status axpy_launch(ptxkit_kernel *k, const ptxkit_config *c, size_t n, ptxkit_stream *stream, void *user) {
    axpy_run *r = user;
    long long block = 0, items = 0;
    ptxkit_config_get(c, "BLOCK_SIZE", &block);
    ptxkit_config_get(c, "ITEMS_PER_THREAD", &items);
    unsigned long long count = n;
    size_t per_block = (size_t)(block * items);
    unsigned grid = (unsigned)((n + per_block - 1) / per_block);
    void *args[] = {&r->x, &r->y, &r->z, &r->a, &count};
    return ptxkit_kernel_launch(k, (ptxkit_dim3){grid, 1, 1}, (ptxkit_dim3){(unsigned)block, 1, 1}, 0, stream, args);
}

/* Poison, one run, then every element against the host's fmaf (NVRTC
 * contracts a*x+y to one FMA). */
static ptxkit_status axpy_check(ptxkit_kernel *k, const ptxkit_config *c, size_t n, int *ok, void *user) {
    axpy_run *r = user;
    ptxkit_status st = ptxkit_memory_set32_async(r->ctx, r->z, 0x7fc00001u, n, NULL);
    if (st == PTXKIT_SUCCESS) st = axpy_launch(k, c, n, NULL, r);
    if (st == PTXKIT_SUCCESS) st = ptxkit_context_synchronize(r->ctx);
    if (st == PTXKIT_SUCCESS) st = ptxkit_memory_read(r->ctx, r->host_z, r->z, n * sizeof(float));
    if (st != PTXKIT_SUCCESS) return st;
    *ok = 1;
    for (size_t i = 0; i < n && *ok; i++)
        if (r->host_z[i] != fmaf(r->a, r->host_x[i], r->host_y[i])) *ok = 0;
    return PTXKIT_SUCCESS;
}

static double axpy_bytes(size_t n, void *user) {
    (void)user;
    return 12.0 * (double)n;
}

static ptxkit_status build(axpy_run *r, ptxkit_program **program, ptxkit_tunable **t) {
    ptxkit_status st = ptxkit_program_create("axpy.cu", axpy_source, NULL, 0, program);
    if (st != PTXKIT_SUCCESS) return st;
    if ((st = ptxkit_tunable_create(r->ctx, "bench.user-tune.axpy", t)) != PTXKIT_SUCCESS) return st;
    static const long long blocks[] = {256, 32, 64, 128, 512, 1024}, items[] = {1, 2, 4, 8, 16};
    long long loads[PTXKIT_LOAD_OP_COUNT];
    for (int i = 0; i < PTXKIT_LOAD_OP_COUNT; i++) loads[i] = i;
    if ((st = ptxkit_tunable_add_param(*t, "BLOCK_SIZE", blocks, 6)) == PTXKIT_SUCCESS &&
        (st = ptxkit_tunable_add_param(*t, "ITEMS_PER_THREAD", items, 5)) == PTXKIT_SUCCESS &&
        (st = ptxkit_tunable_add_param(*t, "LOAD_OP", loads, PTXKIT_LOAD_OP_COUNT)) == PTXKIT_SUCCESS &&
        (st = ptxkit_tunable_add_rule(*t, PTXKIT_RULE_POWER_OF_TWO, "BLOCK_SIZE", NULL, 0)) == PTXKIT_SUCCESS &&
        (st = ptxkit_tunable_add_rule(*t, PTXKIT_RULE_MAX_THREADS, "BLOCK_SIZE", NULL, 0)) == PTXKIT_SUCCESS &&
        (st = ptxkit_tunable_add_rule(*t, PTXKIT_RULE_PRODUCT_AT_MOST_N, "BLOCK_SIZE", "ITEMS_PER_THREAD", 0)) ==
            PTXKIT_SUCCESS &&
        (st = ptxkit_tunable_kernel_set(*t, *program, "axpy", NULL, 0)) == PTXKIT_SUCCESS &&
        (st = ptxkit_tunable_launch_set(*t, axpy_launch, r)) == PTXKIT_SUCCESS &&
        (st = ptxkit_tunable_check_set(*t, axpy_check, r)) == PTXKIT_SUCCESS)
        st = ptxkit_tunable_bytes_set(*t, axpy_bytes, r);
    return st;
}

int bench_user_tune(int argc, char **argv) {
    int log2n = 24;
    double budget = 15;
    const arg_option options[] = {{.name = "log2", .kind = ARG_INT, .value = &log2n, .lo = 10, .hi = 28},
                                  {.name = "budget", .kind = ARG_SECONDS, .value = &budget, .lo = 0, .hi = 3600},
                                  {0}};
    const arg_spec spec = {
        .command = "bench user-tune",
        .usage = "usage: ptxkit bench user-tune [--log2 K] [--budget S] [--device N]\n",
        .help = "Tunes an application kernel (z = a*x + y, BLOCK_SIZE x ITEMS_PER_THREAD x LOAD_OP, 210 points) at\n"
                "n = 2^K floats (default 24) through the public tunable API within S seconds (default 15), then\n"
                "searches every point, and prints the budgeted pick against the exhaustive best, re-timed together.\n"
                "Saves nothing to the tuning database or its record.\n",
        .common = ARGS_DEVICE,
        .options = options,
    };
    cli_common common;
    int rc = args_parse(&spec, argc, argv, &common, NULL, NULL);
    if (rc >= 0) return rc;
    ptxkit_context *ctx = cli_open_context("bench user-tune", common.device);
    if (!ctx) return 1;
    axpy_run r = {.ctx = ctx, .n = (size_t)1 << log2n, .a = 1.5f};
    size_t bytes = r.n * sizeof(float);
    r.host_x = malloc(bytes);
    r.host_y = malloc(bytes);
    r.host_z = malloc(bytes);
    ptxkit_program *program = NULL;
    ptxkit_tunable *t = NULL;
    ptxkit_status st = r.host_x && r.host_y && r.host_z ? PTXKIT_SUCCESS : PTXKIT_ERROR_OUT_OF_MEMORY;
    uint32_t seed = 12345;
    for (size_t i = 0; st == PTXKIT_SUCCESS && i < r.n; i++) {
        seed = seed * 1664525u + 1013904223u;
        r.host_x[i] = (float)(seed >> 8) / 16777216.0f - 0.5f;
        r.host_y[i] = (float)(seed & 0xffff) / 65536.0f;
    }
    if (st == PTXKIT_SUCCESS) st = ptxkit_memory_alloc(ctx, bytes, &r.x);
    if (st == PTXKIT_SUCCESS) st = ptxkit_memory_alloc(ctx, bytes, &r.y);
    if (st == PTXKIT_SUCCESS) st = ptxkit_memory_alloc(ctx, bytes, &r.z);
    if (st == PTXKIT_SUCCESS) st = ptxkit_memory_write(ctx, r.x, r.host_x, bytes);
    if (st == PTXKIT_SUCCESS) st = ptxkit_memory_write(ctx, r.y, r.host_y, bytes);
    if (st == PTXKIT_SUCCESS) st = build(&r, &program, &t);
    ptxkit_tune_report *report = NULL;
    double ceiling = 0;
    if (st == PTXKIT_SUCCESS) st = ptxkit_tune_report_create(&report);
    if (st == PTXKIT_SUCCESS) st = measure_dtod_gbs(ctx, 3 * bytes / 2, &ceiling); /* 12 bytes moved per element */
    if (st == PTXKIT_SUCCESS) {
        ptxkit_tune_options o = {.budget_s = budget, .verify_exhaustive = 1, .no_save = 1};
        st = ptxkit_tunable_tune(t, &r.n, 1, &o, report);
    }
    if (st != PTXKIT_SUCCESS) {
        cli_fail("bench user-tune", ctx, st);
    } else {
        const ptxkit_tune_result *res = ptxkit_tune_report_result_get(report, 0);
        printf("user kernel z = a*x + y, n = 2^%d floats (%.0f MB moved per call), %d legal points; budget %.0f s\n",
               log2n, 12.0 * (double)r.n / 1e6, res->legal, budget);
        printf("cuMemcpyDtoD of the same bytes: %.0f GB/s\n", ceiling);
        printf("defaults (BLOCK_SIZE=256 ITEMS_PER_THREAD=1 LOAD_OP=0): %.3f ms  %.0f GB/s\n", res->default_ms,
               res->default_gbs);
        printf("budgeted search pick: %8.3f ms  %.0f GB/s  %.1f%% of DtoD  (%d timed)\n", res->search_ms, res->search_gbs,
               100 * res->search_gbs / ceiling, res->timed);
        printf("exhaustive best (%s): %.3f ms  %.0f GB/s\n", res->exhaustive_text, res->exhaustive_ms, res->exhaustive_gbs);
        printf("choice (%s): pick / exhaustive best time = %.3f (within 3%%: %s)\n", res->best_text,
               res->search_ms / res->exhaustive_ms, res->search_ms <= 1.03 * res->exhaustive_ms ? "yes" : "no");
        printf("wrong results: %d, failed: %d; tuning took %.1f s (%.1f s compiling)\n", res->wrong, res->failed,
               ptxkit_tune_report_seconds_get(report), ptxkit_tune_report_compile_seconds_get(report));
    }
    ptxkit_tune_report_destroy(report);
    ptxkit_tunable_destroy(t);
    ptxkit_program_destroy(program);
    if (r.x) ptxkit_memory_free(ctx, r.x);
    if (r.y) ptxkit_memory_free(ctx, r.y);
    if (r.z) ptxkit_memory_free(ctx, r.z);
    free(r.host_x);
    free(r.host_y);
    free(r.host_z);
    ptxkit_context_destroy(ctx);
    return st == PTXKIT_SUCCESS ? 0 : 1;
}
