/* ptxkit bench stencil: a tiled 5-point Jacobi step with its tiles staged
 * in shared memory synchronously (loads, __syncthreads sandwich), through a
 * cp.async ring of 1-4 stages, and warp-specialized (a producer warp's
 * cp.async arriving on mbarriers, consumers releasing buffers), each a JIT
 * constant of lab/kernels/stencil_lab.cu, at 1 and 2 blocks per SM and at
 * full occupancy. Every variant's output is compared exactly with the CPU
 * (C0 and C1 are powers of two, so fused and separate multiply-adds
 * round alike). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "cli.h"
#include "lab.h"
#include "commands.h"

enum { TX = 128, TR = 8, BLOCK = 256 };

/* Variant numbers are what --variants takes (0 must stay the synchronous one). */
static const struct {
    int pipe, stages, producer_warps;
    const char *name;
} variants[] = {
    {0, 1, 0, "sync (sandwich)"}, {1, 1, 0, "cp.async"},      {1, 2, 0, "cp.async"},
    {1, 3, 0, "cp.async"},        {1, 4, 0, "cp.async"},      {2, 2, 1, "warp-spec. 1 producer warp"},
    {2, 4, 1, "warp-spec. 1 producer warp"}, {2, 4, 4, "warp-spec. 4 producer warps"},
};

typedef struct stencil_run {
    ptxkit_kernel *k;
    unsigned grid, block, w, h;
    size_t shared;
    ptxkit_dptr in, out;
} stencil_run;

static ptxkit_status launch(ptxkit_context *ctx, ptxkit_stream *s, void *arg) {
    (void)ctx;
    stencil_run *r = arg;
    void *args[] = {&r->in, &r->out, &r->w, &r->h};
    return ptxkit_kernel_launch(r->k, (ptxkit_dim3){r->grid, 1, 1}, (ptxkit_dim3){r->block, 1, 1}, r->shared, s, args);
}

static void reference(const float *in, float *out, unsigned w, unsigned h) {
    for (unsigned y = 0; y < h; y++)
        for (unsigned x = 0; x < w; x++) {
            size_t i = (size_t)y * w + x;
            float n = y ? in[i - w] : 0.0f, s = y + 1 < h ? in[i + w] : 0.0f;
            float west = x ? in[i - 1] : 0.0f, east = x + 1 < w ? in[i + 1] : 0.0f;
            out[i] = 0.5f * in[i] + 0.125f * (((n + s) + west) + east);
        }
}

static const char usage_text[] =
    "usage: ptxkit bench stencil [--width W] [--height H] [--reps N] [--occupancy LIST] [--variants LIST]\n"
    "                            [--csv|--json] [--json FILE] [--csv FILE] [--md FILE] [--device N]\n";

int bench_stencil(int argc, char **argv) {
    static const char cmd[] = "bench stencil";
    int w = 8192, h = 8192, reps = 9, occs[4] = {1, 2, 0}, nocc = 3, pick[16], npick = 0;
    const int nvariants = (int)(sizeof variants / sizeof variants[0]);
    const arg_option options[] = {
        {.name = "width", .kind = ARG_INT, .value = &w, .lo = TX, .hi = 1 << 16},
        {.name = "height", .kind = ARG_INT, .value = &h, .lo = TR, .hi = 1 << 16},
        {.name = "reps", .kind = ARG_INT, .value = &reps, .lo = 1, .hi = 1001},
        {.name = "occupancy", .kind = ARG_INTS, .value = occs, .count = &nocc, .max = 4, .lo = 0, .hi = 32},
        {.name = "variants", .kind = ARG_INTS, .value = pick, .count = &npick, .max = 16, .lo = 0, .hi = nvariants - 1},
        {0}};
    char help[1400];
    snprintf(help, sizeof help,
             "5-point Jacobi step on a W x H float grid (default 8192 x 8192; W a multiple of %d, H of %d) by\n"
             "tiles of %d x %d points staged in shared memory: synchronously (__syncthreads sandwich), through\n"
             "cp.async rings of 1-4 stages, and warp-specialized with mbarriers (2 and 4 stages, 1 or 4 producer\n"
             "warps); %d compute threads per block. --occupancy: blocks per SM, 0 meaning as many as fit\n"
             "(default 1,2,0). --variants: numbers 0-%d in the order above (default all; 0 is the synchronous\n"
             "baseline the speedups refer to). GB/s counts the grid read once and written once; outputs are\n"
             "checked exactly against the CPU. Median of --reps runs (default 9), with their count, fastest and\n"
             "slowest.\n",
             TX, TR, TR, TX, BLOCK, nvariants - 1);
    const arg_spec spec = {.command = cmd, .usage = usage_text, .help = help,
                           .common = ARGS_DEVICE | ARGS_TABLES, .options = options};
    cli_common common;
    int rc = args_parse(&spec, argc, argv, &common, NULL, NULL);
    if (rc >= 0) return rc;
    if (w % TX || h % TR) return args_error(&spec, "--width takes a multiple of %d and --height of %d", TX, TR);
    ptxkit_device_info dev;
    ptxkit_context *ctx = cli_open_context_at_least(cmd, common.device, 80, "cp.async", &dev);
    if (!ctx) return 1;
    size_t points = (size_t)w * (size_t)h, bytes = points * 4;
    float *in = malloc(bytes), *want = malloc(bytes), *got = malloc(bytes);
    ptxkit_status st = in && want && got ? PTXKIT_SUCCESS : PTXKIT_ERROR_OUT_OF_MEMORY;
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (size_t i = 0; in && i < points; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        in[i] = (float)(x >> 40) * (1.0f / 16777216.0f);
    }
    if (st == PTXKIT_SUCCESS) reference(in, want, (unsigned)w, (unsigned)h);
    ptxkit_dptr din = 0, dout = 0;
    ptxkit_program *program = NULL;
    if (st == PTXKIT_SUCCESS) st = ptxkit_memory_alloc(ctx, bytes, &din);
    if (st == PTXKIT_SUCCESS) st = ptxkit_memory_alloc(ctx, bytes, &dout);
    if (st == PTXKIT_SUCCESS) st = ptxkit_memory_write(ctx, din, in, bytes);
    if (st == PTXKIT_SUCCESS) st = lab_program_create("stencil_lab.cu", &program);
    double dtod = 0;
    if (st == PTXKIT_SUCCESS) st = measure_dtod_gbs(ctx, bytes, &dtod);

    enum { NV = sizeof variants / sizeof variants[0] };
    char title[400];
    snprintf(title, sizeof title,
             "5-point stencil on %s, %d x %d floats, %d x %d tiles, %d compute threads (cuMemcpyDtoD %.0f GB/s; median "
             "of %d)", dev.name, w, h, TR, TX, BLOCK, dtod, reps);
    const char *headers[] = {"variant", "stages", "occupancy", "blocks_per_sm", "ms", "GBps", "speedup_vs_sync", "check",
                             STATS_COLUMNS};
    cli_table *tab = table_new(title, 11, headers);
    table_types(tab, "snsnnnns" STATS_TYPES);
    if (npick == 0)
        for (int v = 0; v < NV; v++) pick[npick++] = v;
    double best_sync = 0, best_pipe = 0;
    const char *best_name = "";
    int best_stages = 0, wrong = 0;
    for (int o = 0; o < nocc && st == PTXKIT_SUCCESS; o++) {
        double sync_ms = NAN;
        for (int pv = 0; pv < npick && st == PTXKIT_SUCCESS; pv++) {
            int v = pick[pv];
            char defs[6][32], occ_name[32];
            snprintf(defs[0], sizeof defs[0], "BLOCK_SIZE=%d", BLOCK);
            snprintf(defs[1], sizeof defs[1], "PIPE=%d", variants[v].pipe);
            snprintf(defs[2], sizeof defs[2], "STAGES=%d", variants[v].stages);
            snprintf(defs[3], sizeof defs[3], "TX=%d", TX);
            snprintf(defs[4], sizeof defs[4], "TR=%d", TR);
            snprintf(defs[5], sizeof defs[5], "PRODUCER_WARPS=%d", variants[v].producer_warps ? variants[v].producer_warps : 1);
            const char *defines[] = {defs[0], defs[1], defs[2], defs[3], defs[4], defs[5]};
            stencil_run r = {.block = BLOCK + (unsigned)variants[v].producer_warps * 32, .w = (unsigned)w, .h = (unsigned)h,
                             .in = din, .out = dout};
            r.shared = (size_t)variants[v].stages * (TR + 2) * (TX + 2) * 4;
            int resident = 0;
            st = ptxkit_program_kernel_get(ctx, program, "stencil", defines, 6, &r.k);
            if (st == PTXKIT_SUCCESS) st = ptxkit_kernel_occupancy_get(r.k, (int)r.block, r.shared, &resident);
            if (st != PTXKIT_SUCCESS) break;
            int per_sm = occs[o] == 0 || occs[o] > resident ? resident : occs[o];
            if (occs[o] == 0) snprintf(occ_name, sizeof occ_name, "full");
            else snprintf(occ_name, sizeof occ_name, "%d block%s/SM", occs[o], occs[o] == 1 ? "" : "s");
            size_t tiles = points / (TX * TR);
            r.grid = (unsigned)((size_t)per_sm * dev.sm_count < tiles ? (size_t)per_sm * dev.sm_count : tiles);
            time_stats ts = {0};
            if (st == PTXKIT_SUCCESS) st = ptxkit_memory_set32_async(ctx, dout, 0x7fc00001u, points, NULL);
            if (st == PTXKIT_SUCCESS) st = launch(ctx, NULL, &r);
            if (st == PTXKIT_SUCCESS) st = ptxkit_memory_read(ctx, got, dout, bytes);
            if (st == PTXKIT_SUCCESS) st = time_stats_ms(ctx, launch, &r, 1, reps, &ts);
            if (st != PTXKIT_SUCCESS) break;
            double ms = ts.median_ms;
            bool ok = memcmp(got, want, bytes) == 0;
            wrong += !ok;
            if (variants[v].pipe == 0) sync_ms = ms;
            double gbs = 2.0 * (double)bytes / (ms * 1e-3) / 1e9;
            if (variants[v].pipe == 0 && gbs > best_sync) best_sync = gbs;
            if (variants[v].pipe != 0 && gbs > best_pipe) {
                best_pipe = gbs;
                best_name = variants[v].name;
                best_stages = variants[v].stages;
            }
            char spread[96];
            table_addf(tab, "%s\t%d\t%s\t%d\t%.3f\t%.0f\t%.2f\t%s%s", variants[v].name, variants[v].stages, occ_name,
                       per_sm, ms, gbs, sync_ms / ms, ok ? "ok" : "WRONG", stats_cells(&ts, spread, sizeof spread));
        }
    }
    if (st != PTXKIT_SUCCESS) cli_fail(cmd, ctx, st);
    table_print(tab, common.format, stdout);
    table_free(tab);
    if (st == PTXKIT_SUCCESS && common.format == OUT_TABLE && best_sync > 0 && best_pipe > 0)
        printf("best pipelined (%s, %d stages) over best synchronous: %.0f / %.0f GB/s = %.2fx\n", best_name, best_stages,
               best_pipe, best_sync, best_pipe / best_sync);
    if (wrong) fprintf(stderr, "ptxkit %s: %d variants differ from the CPU\n", cmd, wrong);
    ptxkit_program_destroy(program);
    ptxkit_memory_free(ctx, din);
    ptxkit_memory_free(ctx, dout);
    ptxkit_context_destroy(ctx);
    free(in);
    free(want);
    free(got);
    return st != PTXKIT_SUCCESS || wrong ? 1 : 0;
}
