/* ptxkit ladder gemm: the matrix-multiply ladder of the memory-model
 * lecture on this GPU (naive, TILE_WIDTH tiles, register blocking, 16-byte
 * loads with A transposed, warp tiling, cp.async double buffering: the
 * lab's lab/ladders.c) and ptxkit_gemm, each with its time, TFLOP/s and
 * speedup over the naive kernel, beside the lecture's G80 arithmetic: the
 * global bytes a step reads per FMA, and so the bandwidth it would need at
 * the rate it runs. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptxkit_ops.h"
#include "args.h"
#include "cli.h"
#include "commands.h"
#include "gemm_common.h"
#include "lab.h"
#include "ladders.h"

enum { PRODUCTION_STEP = LAB_GEMM_LADDER_STEPS + 1 };

/* The lecture's G80 figures (ladders.h). */
#define G80_GBPS LAB_GEMM_G80_GBPS
#define G80_NAIVE_MEASURED_GFLOPS LAB_GEMM_G80_NAIVE_GFLOPS

typedef struct ladder_run {
    int step;
    size_t n;
    ptxkit_dptr a, b, c;
} ladder_run;

static ptxkit_status run_step(ptxkit_context *ctx, ptxkit_stream *s, void *arg) {
    ladder_run *r = arg;
    if (r->step == PRODUCTION_STEP)
        return ptxkit_gemm(ctx, PTXKIT_FLOAT32, PTXKIT_GEMM_N, PTXKIT_GEMM_N, r->n, r->n, r->n, 1.0, r->a, r->n, r->b,
                           r->n, 0.0, r->c, r->n, NULL, s);
    return lab_gemm_ladder_run(ctx, r->step, r->n, r->n, r->n, r->a, r->b, r->c, s);
}

static const char ladder_usage[] =
    "usage: ptxkit ladder gemm [--size N] [--steps LIST] [--reps N] [--warmup N] [--csv|--json] [--json FILE]\n"
    "                          [--csv FILE] [--md FILE] [--device N]\n";

static const char ladder_help[] =
    "The matrix-multiply ladder on this GPU, float32 C = A B of N x N matrices (default 4096; steps 4-8\n"
    "need a multiple of 128): 1 naive (one thread per element of C), 2 and 3 shared-memory tiles of\n"
    "TILE_WIDTH 16 and 32, 4 register blocking (8 x 8 per thread of a 128 x 128 block tile), 5 the same\n"
    "with 16-byte loads and A transposed in shared memory, 6 warp tiling, 7 cp.async double buffering,\n"
    "8 ptxkit_gemm (tuned or built-in configuration). Each step: time (median of --reps, default 5 for\n"
    "steps 1-3 and 20 after), TFLOP/s, speedup over step 1 and over the step before, the global bytes it\n"
    "reads per FMA (the lecture's G80 arithmetic: the naive kernel 8, a TILE_WIDTH tile 8 / TILE_WIDTH,\n"
    "a 128 x 128 block tile 1/16) and the bandwidth that takes at its FMA rate, next to this GPU's\n"
    "memory bandwidth; its largest difference from ptxkit_gemm's C (relative to max |C|); the count of\n"
    "timed runs and the fastest and slowest; and the GPU's FP32 peak (SM clock x SMs x 128 FP32 lanes x 2).\n";

static double max_difference(const float *x, const float *y, size_t count) {
    double diff = 0, scale = 0;
    for (size_t i = 0; i < count; i++) {
        double d = fabs((double)x[i] - (double)y[i]);
        if (!(d <= diff)) diff = d;
        if (fabs((double)y[i]) > scale) scale = fabs((double)y[i]);
    }
    return scale > 0 ? diff / scale : diff;
}

int ladder_gemm(int argc, char **argv) {
    size_t n = 4096;
    int reps = 0, warmup = 2, step_list[PRODUCTION_STEP], step_count = 0;
    const arg_option options[] = {
        {.name = "size", .kind = ARG_SIZE, .value = &n, .lo = 1, .hi = 1 << 16},
        {.name = "steps", .kind = ARG_INTS, .value = step_list, .count = &step_count, .max = PRODUCTION_STEP, .lo = 1,
         .hi = PRODUCTION_STEP},
        {.name = "reps", .kind = ARG_INT, .value = &reps, .lo = 1, .hi = 10000},
        {.name = "warmup", .kind = ARG_INT, .value = &warmup, .lo = 0, .hi = 1000},
        {0}};
    const arg_spec spec = {.command = "ladder gemm", .usage = ladder_usage, .help = ladder_help,
                           .common = ARGS_DEVICE | ARGS_TABLES, .options = options};
    cli_common common;
    int rc = args_parse(&spec, argc, argv, &common, NULL, NULL);
    if (rc >= 0) return rc;
    bool steps[PRODUCTION_STEP + 1];
    for (int s = 0; s <= PRODUCTION_STEP; s++) steps[s] = s > 0 && step_count == 0;
    for (int i = 0; i < step_count; i++) steps[step_list[i]] = true;
    ptxkit_context *ctx = cli_open_context("ladder gemm", common.device);
    if (!ctx) return 1;
    size_t count = n * n, bytes = count * 4;
    ladder_run r = {.n = n};
    ptxkit_dptr reference = 0;
    ptxkit_status st = ptxkit_memory_alloc(ctx, bytes, &r.a);
    if (st == PTXKIT_SUCCESS) st = ptxkit_memory_alloc(ctx, bytes, &r.b);
    if (st == PTXKIT_SUCCESS) st = ptxkit_memory_alloc(ctx, bytes, &r.c);
    if (st == PTXKIT_SUCCESS) st = ptxkit_memory_alloc(ctx, bytes, &reference);
    if (st == PTXKIT_SUCCESS) st = gemm_fill_uniform(ctx, PTXKIT_FLOAT32, r.a, count, 1);
    if (st == PTXKIT_SUCCESS) st = gemm_fill_uniform(ctx, PTXKIT_FLOAT32, r.b, count, 2);
    /* the reference every step is checked against: ptxkit_gemm */
    if (st == PTXKIT_SUCCESS)
        st = ptxkit_gemm(ctx, PTXKIT_FLOAT32, PTXKIT_GEMM_N, PTXKIT_GEMM_N, n, n, n, 1.0, r.a, n, r.b, n, 0.0, reference, n,
                         NULL, NULL);
    float *host_ref = malloc(bytes), *host_c = malloc(bytes);
    if (st == PTXKIT_SUCCESS && (!host_ref || !host_c)) st = PTXKIT_ERROR_OUT_OF_MEMORY;
    if (st == PTXKIT_SUCCESS) st = ptxkit_memory_read(ctx, host_ref, reference, bytes);
    for (int s = 1; st == PTXKIT_SUCCESS && s <= LAB_GEMM_LADDER_STEPS; s++)
        if (steps[s] && (s < 4 || n % 128 == 0)) st = lab_gemm_ladder_prepare(ctx, s, n, n, n);

    gemm_peak peak = gemm_peak_of(ctx, PTXKIT_FLOAT32);
    double dram = cli_device(ctx)->peak_bandwidth_gbs;
    char title[1024];
    snprintf(title, sizeof title,
             "GEMM ladder on %s, float32, %zu x %zu x %zu (FP32 peak %.0f MHz x %d SMs x 128 lanes x 2 = %.1f TFLOP/s; "
             "memory %.0f GB/s; G80: %.1f GB/s / 8 bytes per FMA = %.1f GFLOPS for the naive kernel, measured ~%.0f)",
             cli_device(ctx)->name, n, n, n, peak.clock_khz / 1e3, peak.sm_count, peak.tflops, dram, G80_GBPS,
             2 * G80_GBPS / 8, G80_NAIVE_MEASURED_GFLOPS);
    const char *headers[] = {"step",          "kernel",     "time_ms",        "TFLOPs",   "pct_peak",
                             "speedup_vs_1",  "speedup_vs_prev", "bytes_per_fma", "needs_GBps", "needs_pct_dram",
                             "max_diff",      STATS_COLUMNS};
    cli_table *t = table_new(title, 14, headers);
    table_types(t, "nsnnnnnnnnn" STATS_TYPES);
    double first_ms = 0, prev_ms = 0;
    for (int s = 1; st == PTXKIT_SUCCESS && s <= PRODUCTION_STEP; s++) {
        if (!steps[s]) continue;
        const char *name = s == PRODUCTION_STEP ? "ptxkit_gemm" : lab_gemm_ladder[s - 1].name;
        if (s >= 4 && n % 128) {
            fprintf(stderr, "ptxkit ladder gemm: step %d needs N a multiple of 128 (N is %zu)\n", s, n);
            char none[32];
            table_addf(t, "%d\t%s\t-\t-\t-\t-\t-\t-\t-\t-\t-%s", s, name, stats_cells(NULL, none, sizeof none));
            continue;
        }
        r.step = s;
        time_stats ts = {0};
        st = ptxkit_memory_set32_async(ctx, r.c, 0x7fc00000u, count, NULL); /* NaN: a skipped element shows */
        if (st == PTXKIT_SUCCESS) st = time_stats_ms(ctx, run_step, &r, warmup, reps ? reps : s <= 3 ? 5 : 20, &ts);
        double ms = ts.median_ms;
        if (st == PTXKIT_SUCCESS) st = ptxkit_memory_read(ctx, host_c, r.c, bytes);
        if (st != PTXKIT_SUCCESS) break;
        double tf = 2.0 * (double)n * n * n / (ms * 1e-3) / 1e12;
        if (!first_ms) first_ms = ms;
        double per_fma = s == PRODUCTION_STEP ? 0 : lab_gemm_ladder[s - 1].bytes_per_fma;
        double needs = tf * 1e12 / 2 * per_fma / 1e9;
        char per[32] = "-", need[32] = "-", need_pct[32] = "-", vs_prev[32] = "-";
        if (prev_ms > 0) snprintf(vs_prev, sizeof vs_prev, "%.2f", prev_ms / ms);
        if (per_fma > 0) {
            snprintf(per, sizeof per, "%.4g", per_fma);
            snprintf(need, sizeof need, "%.0f", needs);
            if (dram > 0) snprintf(need_pct, sizeof need_pct, "%.0f", 100.0 * needs / dram);
        }
        char spread[96];
        table_addf(t, "%d\t%s\t%.3f\t%.2f\t%.1f\t%.1f\t%s\t%s\t%s\t%s\t%.2e%s", s, name, ms, tf,
                   peak.tflops > 0 ? 100.0 * tf / peak.tflops : 0, first_ms / ms,
                   vs_prev, per, need, need_pct, max_difference(host_c, host_ref, count),
                   stats_cells(&ts, spread, sizeof spread));
        prev_ms = ms;
    }
    if (st != PTXKIT_SUCCESS)
        fprintf(stderr, "ptxkit ladder gemm: %s: %s\n", ptxkit_status_string(st), ptxkit_last_error());
    table_print(t, common.format, stdout);
    table_free(t);
    free(host_ref);
    free(host_c);
    ptxkit_memory_free(ctx, r.a);
    ptxkit_memory_free(ctx, r.b);
    ptxkit_memory_free(ctx, r.c);
    ptxkit_memory_free(ctx, reference);
    ptxkit_context_destroy(ctx);
    return st == PTXKIT_SUCCESS ? 0 : 1;
}
