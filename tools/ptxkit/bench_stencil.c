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
#include "bench_harness.h"
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

/* A row: its launch, the CPU's output, and what the speedups and the
 * summary line refer to. */
typedef struct stencil_row {
    stencil_run r; /* first: the row is launch's argument too */
    int variant;
    float *got;
    const float *want;
    size_t bytes;
    double sync_ms; /* this occupancy's synchronous row (NaN before it) */
    double best_sync, best_pipe;
    const char *best_name;
    int best_stages, wrong;
} stencil_row;

/* One launch onto NaN-poisoned output, read back for the check, before the
 * timed ones. */
static ptxkit_status checked_run(bench *b, void *arg) {
    stencil_row *row = arg;
    ptxkit_status st = ptxkit_memory_set32_async(b->ctx, row->r.out, 0x7fc00001u, row->bytes / 4, NULL);
    if (st == PTXKIT_SUCCESS) st = launch(b->ctx, NULL, &row->r);
    if (st == PTXKIT_SUCCESS) st = ptxkit_memory_read(b->ctx, row->got, row->r.out, row->bytes);
    return st;
}

static ptxkit_status stencil_cells(bench *b, void *arg, bench_result *out) {
    (void)b;
    stencil_row *row = arg;
    double ms = out->ts.median_ms, gbs = out->rate;
    bool ok = memcmp(row->got, row->want, row->bytes) == 0;
    row->wrong += !ok;
    int v = row->variant;
    if (variants[v].pipe == 0) row->sync_ms = ms;
    if (variants[v].pipe == 0 && gbs > row->best_sync) row->best_sync = gbs;
    if (variants[v].pipe != 0 && gbs > row->best_pipe) {
        row->best_pipe = gbs;
        row->best_name = variants[v].name;
        row->best_stages = variants[v].stages;
    }
    snprintf(out->cells, sizeof out->cells, "%.2f\t%s", row->sync_ms / ms, ok ? "ok" : "WRONG");
    return PTXKIT_SUCCESS;
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
    bench harness; /* h is the grid's height */
    ptxkit_device_info dev;
    if (!bench_begin(&harness, cmd, &common, 1, reps, 80, "cp.async", &dev)) return 1;
    ptxkit_context *ctx = harness.ctx;
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
    const bench_column columns[] = {
        COL_TEXT("variant", "s"), COL_TEXT("stages", "n"), COL_TEXT("occupancy", "s"), COL_TEXT("blocks_per_sm", "n"),
        COL("ms", BENCH_TIME_MS, "%.3f"), COL("GBps", BENCH_RATE, "%.0f"), COL_TEXT("speedup_vs_sync", "n"),
        COL_TEXT("check", "s"), COL_STATS};
    bench_table(&harness, title, columns, sizeof columns / sizeof columns[0]);
    if (npick == 0)
        for (int v = 0; v < NV; v++) pick[npick++] = v;
    stencil_row row = {.got = got, .want = want, .bytes = bytes, .best_name = ""};
    stencil_run *r = &row.r;
    for (int o = 0; o < nocc && st == PTXKIT_SUCCESS; o++) {
        row.sync_ms = NAN;
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
            *r = (stencil_run){.block = BLOCK + (unsigned)variants[v].producer_warps * 32, .w = (unsigned)w,
                               .h = (unsigned)h, .in = din, .out = dout};
            r->shared = (size_t)variants[v].stages * (TR + 2) * (TX + 2) * 4;
            row.variant = v;
            int resident = 0;
            st = ptxkit_program_kernel_get(ctx, program, "stencil", defines, 6, &r->k);
            if (st == PTXKIT_SUCCESS) st = ptxkit_kernel_occupancy_get(r->k, (int)r->block, r->shared, &resident);
            if (st != PTXKIT_SUCCESS) break;
            int per_sm = occs[o] == 0 || occs[o] > resident ? resident : occs[o];
            if (occs[o] == 0) snprintf(occ_name, sizeof occ_name, "full");
            else snprintf(occ_name, sizeof occ_name, "%d block%s/SM", occs[o], occs[o] == 1 ? "" : "s");
            size_t tiles = points / (TX * TR);
            r->grid = (unsigned)((size_t)per_sm * dev.sm_count < tiles ? (size_t)per_sm * dev.sm_count : tiles);
            char key[128];
            snprintf(key, sizeof key, "%s\t%d\t%s\t%d", variants[v].name, variants[v].stages, occ_name, per_sm);
            bench_case c = {.key = key, .setup = checked_run, .run = launch, .teardown = stencil_cells, .arg = &row,
                            .work = 2.0 * (double)bytes};
            st = bench_run(&harness, st, &c, NULL);
        }
    }
    rc = bench_print(&harness, st);
    double best_sync = row.best_sync, best_pipe = row.best_pipe;
    const char *best_name = row.best_name;
    int best_stages = row.best_stages, wrong = row.wrong;
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
    return rc || wrong ? 1 : 0;
}
