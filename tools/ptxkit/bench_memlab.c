/* The memory lab's benchmarks:
 *   ptxkit bench access     global access patterns x load cache operators
 *   ptxkit bench aos        float3 structure layouts x load cache operators
 *   ptxkit bench banks      shared-memory bank conflicts by stride and word size
 *   ptxkit bench transpose  naive / tiled / padded transpose vs cuMemcpyDtoD
 * each as a table (--csv, --json) and, with --svg FILE, a chart. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptxkit_ops.h"
#include "args.h"
#include "bench_harness.h"
#include "cli.h"
#include "commands.h"
#include "lab.h"
#include "memlab.h"
#include "svg.h"

#define MAX_OPS MEMLAB_LOAD_OP_COUNT

/* ---- shared option handling ---- */

typedef struct lab_options {
    int reps;
    int ops[MAX_OPS];
    int op_count;           /* 0: every operator the GPU supports */
} lab_options;

static bool parse_op(const char *name, int *op) {
    for (int i = 0; i < MEMLAB_LOAD_OP_COUNT; i++)
        if (strcmp(name, memlab_load_op_name(i)) == 0) {
            *op = i;
            return true;
        }
    /* also the PTX spellings of the L2 hints */
    if (strcmp(name, "L2::evict_first") == 0 || strcmp(name, "evict_first") == 0) return *op = MEMLAB_LOAD_L2_EVICT_FIRST, true;
    if (strcmp(name, "L2::evict_last") == 0 || strcmp(name, "evict_last") == 0) return *op = MEMLAB_LOAD_L2_EVICT_LAST, true;
    return false;
}

/* --op NAME, repeatable: checked as it is read, turned into operators after. */
static bool check_op(const char *text, void *value, char *why, size_t why_size) {
    (void)value;
    int op;
    if (parse_op(text, &op)) return true;
    snprintf(why, why_size, "takes a load operator: default, ca, cg, cs, lu, cv, nc, L2::evict_first or L2::evict_last");
    return false;
}

typedef struct lab_args {
    lab_options o;
    const char *op_names[MAX_OPS];
    int op_name_count;
} lab_args;

#define LAB_OPTIONS(a)                                                                                            \
    {.name = "reps", .kind = ARG_INT, .value = &(a).o.reps, .lo = 1, .hi = 10000},                                 \
    {.name = "op", .kind = ARG_TEXTS, .value = (a).op_names, .count = &(a).op_name_count, .max = MAX_OPS,           \
     .parse = check_op}

static void lab_take_ops(lab_args *a) {
    for (int i = 0; i < a->op_name_count; i++) parse_op(a->op_names[i], &a->o.ops[a->o.op_count++]);
}

/* The operators to run: those asked for, else all the GPU supports. */
static void lab_ops(ptxkit_context *ctx, lab_options *o) {
    if (o->op_count) return;
    for (int op = 0; op < MEMLAB_LOAD_OP_COUNT; op++)
        if (memlab_load_op_supported(ctx, op)) o->ops[o->op_count++] = op;
}

static int finish(const char *command, ptxkit_context *ctx, ptxkit_status st, cli_table *t, const cli_common *common) {
    if (st != PTXKIT_SUCCESS) fprintf(stderr, "ptxkit %s: %s: %s\n", command, ptxkit_status_string(st), ptxkit_last_error());
    if (t) table_print(t, common->format, stdout);
    table_free(t);
    ptxkit_context_destroy(ctx);
    return st == PTXKIT_SUCCESS ? 0 : 1;
}

static int save_svg(const char *command, const char *path, const char *title, const char *subtitle,
                    const svg_chart *charts, size_t count) {
    if (svg_save_figure(path, title, subtitle, charts, count) == 0) {
        fprintf(stderr, "ptxkit %s: chart written to %s\n", command, path);
        return 0;
    }
    fprintf(stderr, "ptxkit %s: cannot write %s: %s\n", command, path, strerror(errno));
    return 1;
}

/* ---- bench access ---- */

typedef struct access_case {
    memlab_pattern pattern;
    uint64_t param;
} access_case;

static ptxkit_status run_access(ptxkit_context *ctx, ptxkit_stream *s, void *arg) {
    return memlab_access_run(ctx, arg, s);
}

/* A row of bench access or bench aos: the bytes the threads asked for
 * (the rate's work) and the sectors their requests touched. */
typedef struct traffic_row {
    union {
        memlab_access access;
        memlab_aos aos;
    } k; /* first: the row is the kernel's argument too */
    double app_bytes, sector_bytes;
    double *app, *sector; /* where the chart's rates go (sector: NULL where it shows none) */
} traffic_row;

static ptxkit_status traffic_cells(bench *b, void *arg, bench_result *out) {
    (void)b;
    traffic_row *row = arg;
    double ms = out->ts.median_ms, sector = row->sector_bytes / (ms * 1e-3) / 1e9;
    *row->app = out->rate;
    if (row->sector) *row->sector = sector;
    snprintf(out->cells, sizeof out->cells, "%.0f\t%.2f", sector, row->sector_bytes / row->app_bytes);
    return PTXKIT_SUCCESS;
}

/* The element count each pattern runs with on a buffer of `words` words. */
static size_t access_count(memlab_pattern p, uint64_t param, size_t words, size_t gather_n) {
    switch (p) {
    case MEMLAB_OFFSET: return words - 64;
    case MEMLAB_STRIDE: return (words - 65) / (size_t)param + 1;
    case MEMLAB_VEC8: return (words - 64) / 2;
    case MEMLAB_VEC16: return (words - 64) / 4;
    case MEMLAB_GATHER: return gather_n;
    case MEMLAB_BROADCAST: return words - 64;
    default: return words - 64;
    }
}

static const char *access_label(const access_case *c, char *buf, size_t size) {
    switch (c->pattern) {
    case MEMLAB_OFFSET: snprintf(buf, size, c->param ? "offset %llu" : "coalesced 4B", (unsigned long long)c->param); break;
    case MEMLAB_STRIDE: snprintf(buf, size, "stride %llu", (unsigned long long)c->param); break;
    case MEMLAB_VEC8: snprintf(buf, size, "coalesced 8B"); break;
    case MEMLAB_VEC16: snprintf(buf, size, "coalesced 16B"); break;
    case MEMLAB_WINDOW: snprintf(buf, size, "window %d", MEMLAB_WINDOW_WORDS); break;
    default: snprintf(buf, size, "%s", memlab_pattern_name(c->pattern)); break;
    }
    return buf;
}

/* Cases: offsets 0..32, strides 1..64, then the single patterns (whose bar
 * chart also shows offset 0 = coalesced 4B, offset 1, stride 2 and 32). */
enum { ACCESS_OFFSETS = 33, ACCESS_STRIDES = 64, ACCESS_SINGLES = 5, ACCESS_CASES = ACCESS_OFFSETS + ACCESS_STRIDES + ACCESS_SINGLES };
static const memlab_pattern single_patterns[ACCESS_SINGLES] = {MEMLAB_VEC8, MEMLAB_VEC16, MEMLAB_GATHER,
                                                                MEMLAB_BROADCAST, MEMLAB_WINDOW};

static void access_cases(access_case *cases) {
    int n = 0;
    for (int k = 0; k < ACCESS_OFFSETS; k++) cases[n++] = (access_case){MEMLAB_OFFSET, (uint64_t)k};
    for (int s = 1; s <= ACCESS_STRIDES; s++) cases[n++] = (access_case){MEMLAB_STRIDE, (uint64_t)s};
    for (int i = 0; i < ACCESS_SINGLES; i++) cases[n++] = (access_case){single_patterns[i], 0};
}

static int access_svg(const char *path, const char *gpu, const lab_options *o, double (*app)[MAX_OPS],
                      double (*sector)[MAX_OPS], double read_ceiling, int reps) {
    static double x_offset[ACCESS_OFFSETS], x_stride[ACCESS_STRIDES];
    static double y_offset[MAX_OPS][ACCESS_OFFSETS], y_stride[MAX_OPS + 1][ACCESS_STRIDES];
    enum { BARS = 9 };
    static const int bar_case[BARS] = {0, ACCESS_OFFSETS + ACCESS_STRIDES, ACCESS_OFFSETS + ACCESS_STRIDES + 1, 1,
                                       ACCESS_OFFSETS + 1, ACCESS_OFFSETS + 31, ACCESS_CASES - 3, ACCESS_CASES - 2,
                                       ACCESS_CASES - 1};
    static const char *const bar_names[BARS] = {"coalesced 4B", "coalesced 8B", "coalesced 16B", "offset 1", "stride 2",
                                                "stride 32", "gather", "broadcast", "window 9"};
    static double y_bars[MAX_OPS][BARS];
    svg_series offset_series[MAX_OPS], stride_series[MAX_OPS + 1], bar_series[MAX_OPS];
    for (int k = 0; k < ACCESS_OFFSETS; k++) x_offset[k] = k;
    for (int s = 0; s < ACCESS_STRIDES; s++) x_stride[s] = s + 1;
    for (int j = 0; j < o->op_count; j++) {
        const char *name = memlab_load_op_name(o->ops[j]);
        for (int k = 0; k < ACCESS_OFFSETS; k++) y_offset[j][k] = app[k][j];
        for (int s = 0; s < ACCESS_STRIDES; s++) y_stride[j][s] = app[ACCESS_OFFSETS + s][j];
        for (int b = 0; b < BARS; b++) y_bars[j][b] = app[bar_case[b]][j];
        offset_series[j] = (svg_series){.name = name, .x = x_offset, .y = y_offset[j], .count = ACCESS_OFFSETS};
        stride_series[j] = (svg_series){.name = name, .x = x_stride, .y = y_stride[j], .count = ACCESS_STRIDES};
        bar_series[j] = (svg_series){.name = name, .y = y_bars[j], .count = BARS};
    }
    /* what the hardware moved for the first operator: sectors, not words */
    for (int s = 0; s < ACCESS_STRIDES; s++) y_stride[o->op_count][s] = sector[ACCESS_OFFSETS + s][0];
    char sector_name[64];
    snprintf(sector_name, sizeof sector_name, "%s: 32-byte sectors moved", memlab_load_op_name(o->ops[0]));
    stride_series[o->op_count] =
        (svg_series){.name = sector_name, .x = x_stride, .y = y_stride[o->op_count], .count = ACCESS_STRIDES, .dashed = true};
    char ceiling_label[64];
    snprintf(ceiling_label, sizeof ceiling_label, "read ceiling %.0f GB/s", read_ceiling);
    svg_reference ceiling = {.label = ceiling_label, .y = read_ceiling};
    svg_chart charts[] = {
        {.kind = SVG_LINES, .title = "Misaligned start: element e reads word e + k (4-byte loads)",
         .x_label = "offset k (4-byte words)", .y_label = "effective bandwidth (GB/s)", .series = offset_series,
         .series_count = (size_t)o->op_count, .references = &ceiling, .reference_count = 1},
        {.kind = SVG_LINES, .title = "Strided: element e reads word e x s (4-byte loads)", .x_label = "stride s (4-byte words)",
         .y_label = "bandwidth (GB/s, log scale)", .log_y = true, .series = stride_series, .series_count = (size_t)o->op_count + 1,
         .references = &ceiling, .reference_count = 1},
        {.kind = SVG_BARS, .title = "Access patterns by load cache operator", .x_label = "access pattern",
         .y_label = "effective bandwidth (GB/s, log scale)", .log_y = true, .categories = bar_names,
         .category_count = BARS, .series = bar_series, .series_count = (size_t)o->op_count, .references = &ceiling,
         .reference_count = 1},
    };
    char title[400], subtitle[300];
    snprintf(title, sizeof title, "ptxkit bench access on %s", gpu);
    snprintf(subtitle, sizeof subtitle,
             "effective bandwidth = bytes the threads asked for / time; median of %d runs; read ceiling = int4 "
             "streaming read in the same run", reps);
    return save_svg("bench access", path, title, subtitle, charts, 3);
}

int bench_access(int argc, char **argv) {
    lab_args la = {.o = {.reps = 10}};
    int items = 0, block = 0, mib_value = 1024;
    const arg_option options[] = {
        LAB_OPTIONS(la),
        {.name = "items", .kind = ARG_INT, .value = &items, .lo = 0, .hi = 64},
        {.name = "block", .kind = ARG_PARSE, .value = &block, .parse = args_block_size},
        {.name = "mib", .kind = ARG_INT, .value = &mib_value, .lo = 64, .hi = 1 << 16},
        {0}};
    const arg_spec spec = {
        .command = "bench access",
        .usage = "usage: ptxkit bench access [--op NAME]... [--items N] [--block N] [--mib N] [--reps N]\n"
                 "                           [--csv|--json] [--json FILE] [--csv FILE] [--md FILE] [--svg FILE] [--device N]\n",
        .help = "Global-memory access patterns (coalesced 4/8/16-byte, misaligned by 0..32 words, strided by 1..64\n"
                "words, random gather through a permutation, broadcast, a 9-word window) under every load cache\n"
                "operator (default, ca, cg, cs, lu, cv, nc and, on sm_80+, L2:evict_first / L2:evict_last).\n"
                "app_GBps counts the bytes the threads asked for; sector_GBps the 32-byte sectors their warp requests\n"
                "touch. Default buffer: 1024 MiB. Each row: the median of --reps runs, their count, fastest and slowest.\n",
        .common = ARGS_DEVICE | ARGS_TABLES | ARGS_SVG,
        .options = options,
    };
    cli_common common;
    int rc = args_parse(&spec, argc, argv, &common, NULL, NULL);
    if (rc >= 0) return rc;
    lab_take_ops(&la);
    lab_options o = la.o;
    size_t mib = (size_t)mib_value;
    bench h;
    if (!bench_begin(&h, "bench access", &common, 2, o.reps, 0, NULL, NULL)) return 1;
    ptxkit_context *ctx = h.ctx;
    lab_ops(ctx, &o);
    ptxkit_device_info dev;
    ptxkit_device_info_get(ctx, &dev);

    size_t words = mib << 18;   /* 4-byte words */
    unsigned gather_bits = 0;
    while (((size_t)2 << gather_bits) <= words / 4) gather_bits++;  /* a quarter of the buffer, a power of two */
    size_t gather_n = (size_t)1 << gather_bits;
    double read_gbs = 0, dtod_gbs = 0;
    ptxkit_dptr in = 0, out = 0, index = 0;
    memlab_access probe = {.pattern = MEMLAB_OFFSET, .n = words, .items = items ? items : 1, .block_size = block};
    ptxkit_status st = measure_read_gbs(ctx, words * 4, &read_gbs);
    if (st == PTXKIT_SUCCESS) st = measure_dtod_gbs(ctx, words * 2, &dtod_gbs);
    if (st == PTXKIT_SUCCESS) st = ptxkit_memory_alloc(ctx, words * 4, &in);
    if (st == PTXKIT_SUCCESS) st = ptxkit_memory_alloc(ctx, memlab_access_output_words(&probe) * 4 + 256, &out);
    if (st == PTXKIT_SUCCESS) st = ptxkit_memory_alloc(ctx, gather_n * 4, &index);
    if (st == PTXKIT_SUCCESS) st = fill_random_words(ctx, in, words * 4, 1234);
    if (st == PTXKIT_SUCCESS) st = memlab_make_index(ctx, index, gather_n, gather_bits, 99, NULL);
    if (st == PTXKIT_SUCCESS) st = ptxkit_context_synchronize(ctx);

    char title[512];
    snprintf(title, sizeof title,
             "access patterns on %s (median of %d; read ceiling %.0f GB/s, cuMemcpyDtoD %.0f GB/s, buffer %zu MiB)",
             dev.name, o.reps, read_gbs, dtod_gbs, mib);
    const bench_column columns[] = {
        COL_TEXT("pattern", "s"), COL_TEXT("param", "n"), COL_TEXT("load_op", "s"), COL_TEXT("elements", "n"),
        COL("time_us", BENCH_TIME_US, "%.1f"), COL("app_GBps", BENCH_RATE, "%.0f"), COL_TEXT("sector_GBps", "n"),
        COL_TEXT("sectors_per_app_byte", "n"), COL("pct_read_ceiling", BENCH_PERCENT, "%.1f"), COL_STATS};
    bench_table(&h, title, columns, sizeof columns / sizeof columns[0]);
    static access_case cases[ACCESS_CASES];
    static double app[ACCESS_CASES][MAX_OPS], sector[ACCESS_CASES][MAX_OPS];
    access_cases(cases);
    for (int c = 0; c < ACCESS_CASES && st == PTXKIT_SUCCESS; c++)
        for (int j = 0; j < o.op_count && st == PTXKIT_SUCCESS; j++) {
            traffic_row row = {.k.access = {.pattern = cases[c].pattern, .param = cases[c].param, .load_op = o.ops[j],
                                            .items = items, .block_size = block, .out = out, .in = in, .index = index,
                                            .n = access_count(cases[c].pattern, cases[c].param, words, gather_n)},
                               .app = &app[c][j], .sector = &sector[c][j]};
            memlab_access_traffic(&row.k.access, &row.app_bytes, &row.sector_bytes);
            char label[64], key[160];
            snprintf(key, sizeof key, "%s\t%llu\t%s\t%zu", access_label(&cases[c], label, sizeof label),
                     (unsigned long long)cases[c].param, memlab_load_op_name(o.ops[j]), row.k.access.n);
            bench_case run = {.key = key, .run = run_access, .teardown = traffic_cells, .arg = &row,
                              .work = row.app_bytes, .ceiling = read_gbs};
            st = bench_run(&h, st, &run, NULL);
        }
    ptxkit_memory_free(ctx, in);
    ptxkit_memory_free(ctx, out);
    ptxkit_memory_free(ctx, index);
    int svg_failed = 0;
    if (st == PTXKIT_SUCCESS && common.svg_path)
        svg_failed = access_svg(common.svg_path, dev.name, &o, app, sector, read_gbs, o.reps);
    rc = bench_print(&h, st);
    ptxkit_context_destroy(ctx);
    return rc ? rc : svg_failed;
}

/* ---- bench aos ---- */

static ptxkit_status run_aos(ptxkit_context *ctx, ptxkit_stream *s, void *arg) { return memlab_aos_run(ctx, arg, s); }

int bench_aos(int argc, char **argv) {
    lab_args la = {.o = {.reps = 10}};
    size_t n = (size_t)1 << 25;
    int block = 0;
    const arg_option options[] = {
        LAB_OPTIONS(la),
        {.name = "points", .kind = ARG_SIZE, .value = &n, .lo = 1024, .hi = 1LL << 31},
        {.name = "block", .kind = ARG_PARSE, .value = &block, .parse = args_block_size},
        {0}};
    const arg_spec spec = {
        .command = "bench aos",
        .usage = "usage: ptxkit bench aos [--points N] [--op NAME]... [--block N] [--reps N] [--csv|--json] [--json FILE]\n"
                 "                        [--csv FILE] [--md FILE] [--svg FILE] [--device N]\n",
        .help = "p' = p + (2, 2, 2) over N float3 points (default 2^25) stored four ways: array of 12-byte structures\n"
                "read naively, structure of arrays, the array of structures staged through shared memory, and a\n"
                "16-byte aligned {x, y, z, pad}. app_GBps counts 24 bytes per point (12 read, 12 written).\n",
        .common = ARGS_DEVICE | ARGS_TABLES | ARGS_SVG,
        .options = options,
    };
    cli_common common;
    int rc = args_parse(&spec, argc, argv, &common, NULL, NULL);
    if (rc >= 0) return rc;
    lab_take_ops(&la);
    lab_options o = la.o;
    bench h;
    if (!bench_begin(&h, "bench aos", &common, 2, o.reps, 0, NULL, NULL)) return 1;
    ptxkit_context *ctx = h.ctx;
    lab_ops(ctx, &o);
    ptxkit_device_info dev;
    ptxkit_device_info_get(ctx, &dev);
    double dtod = 0;
    ptxkit_dptr in = 0, out = 0;
    ptxkit_status st = measure_dtod_gbs(ctx, 12 * n, &dtod);
    if (st == PTXKIT_SUCCESS) st = ptxkit_memory_alloc(ctx, 16 * n, &in);
    if (st == PTXKIT_SUCCESS) st = ptxkit_memory_alloc(ctx, 16 * n, &out);
    if (st == PTXKIT_SUCCESS) st = fill_random_words(ctx, in, 16 * n, 77);
    char title[400];
    snprintf(title, sizeof title, "float3 layouts on %s, %zu points (median of %d; cuMemcpyDtoD of 12n bytes: %.0f GB/s)",
             dev.name, n, o.reps, dtod);
    const bench_column columns[] = {
        COL_TEXT("layout", "s"), COL_TEXT("load_op", "s"), COL("time_us", BENCH_TIME_US, "%.1f"),
        COL("app_GBps", BENCH_RATE, "%.0f"), COL_TEXT("sector_GBps", "n"), COL_TEXT("sectors_per_app_byte", "n"),
        COL("pct_dtod", BENCH_PERCENT, "%.1f"), COL_STATS};
    bench_table(&h, title, columns, sizeof columns / sizeof columns[0]);
    static double gbs[MEMLAB_LAYOUT_COUNT][MAX_OPS];
    for (int l = 0; l < MEMLAB_LAYOUT_COUNT && st == PTXKIT_SUCCESS; l++)
        for (int j = 0; j < o.op_count && st == PTXKIT_SUCCESS; j++) {
            traffic_row row = {.k.aos = {.layout = (memlab_layout)l, .load_op = o.ops[j], .block_size = block, .n = n,
                                         .in = in, .out = out},
                               .app = &gbs[l][j]};
            memlab_aos_traffic(&row.k.aos, &row.app_bytes, &row.sector_bytes);
            char key[96];
            snprintf(key, sizeof key, "%s\t%s", memlab_layout_name((memlab_layout)l), memlab_load_op_name(o.ops[j]));
            bench_case run = {.key = key, .run = run_aos, .teardown = traffic_cells, .arg = &row,
                              .work = row.app_bytes, .ceiling = dtod};
            st = bench_run(&h, st, &run, NULL);
        }
    ptxkit_memory_free(ctx, in);
    ptxkit_memory_free(ctx, out);
    int svg_failed = 0;
    if (st == PTXKIT_SUCCESS && common.svg_path) {
        static const char *const layouts[MEMLAB_LAYOUT_COUNT] = {"AoS float3, naive", "SoA", "AoS, staged in shared",
                                                                 "AoS, 16-byte aligned"};
        static double y[MAX_OPS][MEMLAB_LAYOUT_COUNT];
        svg_series series[MAX_OPS];
        for (int j = 0; j < o.op_count; j++) {
            for (int l = 0; l < MEMLAB_LAYOUT_COUNT; l++) y[j][l] = gbs[l][j];
            series[j] = (svg_series){.name = memlab_load_op_name(o.ops[j]), .y = y[j], .count = MEMLAB_LAYOUT_COUNT};
        }
        char label[64];
        snprintf(label, sizeof label, "cuMemcpyDtoD %.0f GB/s", dtod);
        svg_reference ceiling = {.label = label, .y = dtod};
        svg_chart chart = {.kind = SVG_BARS, .title = "p' = p + (2, 2, 2) on float3 points, by layout and load operator",
                           .x_label = "data layout", .y_label = "effective bandwidth (GB/s, 24 bytes a point)",
                           .categories = layouts, .category_count = MEMLAB_LAYOUT_COUNT, .series = series,
                           .series_count = (size_t)o.op_count, .references = &ceiling, .reference_count = 1};
        char fig[400], sub[200];
        snprintf(fig, sizeof fig, "ptxkit bench aos on %s", dev.name);
        snprintf(sub, sizeof sub, "%zu points, median of %d runs", n, o.reps);
        svg_failed = save_svg("bench aos", common.svg_path, fig, sub, &chart, 1);
    }
    rc = bench_print(&h, st);
    ptxkit_context_destroy(ctx);
    return rc ? rc : svg_failed;
}

/* ---- bench banks ---- */

enum { BANKS_STRIDES = 34 };   /* 0 (broadcast) .. 33 */

static int banks_svg(const char *path, const char *gpu, double (*cycles)[BANKS_STRIDES], const int *wavefronts,
                     double base, int reps, int iters) {
    static const char *const names[3] = {"1-byte words", "4-byte words", "8-byte words"};
    static const char *const model_names[3] = {"1-byte words, model", "4-byte words, model", "8-byte words, model"};
    static const char *const colors[3] = {"#4e79a7", "#e15759", "#59a14f"};
    static double x[BANKS_STRIDES], model[3][BANKS_STRIDES];
    svg_series series[6];
    for (int s = 0; s < BANKS_STRIDES; s++) x[s] = s;
    for (int w = 0; w < 3; w++) {
        for (int s = 0; s < BANKS_STRIDES; s++) model[w][s] = wavefronts[w * BANKS_STRIDES + s] * base;
        series[w] = (svg_series){.name = names[w], .x = x, .y = cycles[w], .count = BANKS_STRIDES, .color = colors[w]};
        series[3 + w] = (svg_series){.name = model_names[w], .x = x, .y = model[w], .count = BANKS_STRIDES, .dashed = true,
                                     .color = colors[w]};
    }
    svg_chart chart = {.kind = SVG_LINES,
                       .title = "Lane l reads word l x stride (0 = broadcast; 32 = column of [32][32], 33 = padded [32][33])",
                       .x_label = "stride (words of the given size)", .y_label = "cycles per warp-wide access (log scale)",
                       .log_y = true, .series = series, .series_count = 6};
    char title[400], sub[300];
    snprintf(title, sizeof title, "ptxkit bench banks on %s", gpu);
    snprintf(sub, sizeof sub,
             "clock64() over 32 warps x %d accesses, median of %d blocks; model: 32 four-byte banks, wavefronts x %.2f "
             "cycles", iters * MEMLAB_BANKS_UNROLL, reps, base);
    return save_svg("bench banks", path, title, sub, &chart, 1);
}

static int median_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

int bench_banks(int argc, char **argv) {
    int reps = 7, iters = 256;
    const arg_option options[] = {{.name = "reps", .kind = ARG_INT, .value = &reps, .lo = 1, .hi = 101},
                                  {.name = "iters", .kind = ARG_INT, .value = &iters, .lo = 1, .hi = 65536},
                                  {0}};
    char help[1024];
    snprintf(help, sizeof help,
             "Shared-memory bank conflicts: lane l of each of 32 warps reads element l x stride of a shared\n"
             "array of 1-, 4- or 8-byte words, %d x iters times; stride 0 is the broadcast. Reports clock64()\n"
             "cycles per warp-wide access (the median of --reps blocks, with their count, fewest and most), the\n"
             "conflict degree measured (against the 4-byte stride-1 access) and predicted by the 32-bank model, and\n"
             "the time per access at the GPU's rated clock.\n",
             MEMLAB_BANKS_UNROLL);
    const arg_spec spec = {
        .command = "bench banks",
        .usage = "usage: ptxkit bench banks [--reps N] [--iters N] [--csv|--json] [--json FILE] [--csv FILE] [--md FILE]\n"
                 "                          [--svg FILE] [--device N]\n",
        .help = help,
        .common = ARGS_DEVICE | ARGS_TABLES | ARGS_SVG,
        .options = options,
    };
    cli_common common;
    int rc = args_parse(&spec, argc, argv, &common, NULL, NULL);
    if (rc >= 0) return rc;
    ptxkit_context *ctx = cli_open_context("bench banks", common.device);
    if (!ctx) return 1;
    ptxkit_device_info dev;
    ptxkit_device_info_get(ctx, &dev);
    int clock_khz = dev.sm_clock_khz;
    ptxkit_status st = PTXKIT_SUCCESS;
    ptxkit_dptr cycles_d = 0, sink = 0;
    if (st == PTXKIT_SUCCESS) st = ptxkit_memory_alloc(ctx, (size_t)reps * 8, &cycles_d);
    if (st == PTXKIT_SUCCESS) st = ptxkit_memory_alloc(ctx, (size_t)MEMLAB_BANKS_BLOCK * 8, &sink);
    static const int sizes[3] = {1, 4, 8};
    static double cycles[3][BANKS_STRIDES], fewest[3][BANKS_STRIDES], most[3][BANKS_STRIDES];
    static int wavefronts[3 * BANKS_STRIDES], ideal[3 * BANKS_STRIDES];
    uint64_t measured[101];
    /* One block per launch, so that no other block shares its SM. */
    for (int w = 0; w < 3 && st == PTXKIT_SUCCESS; w++)
        for (int s = 0; s < BANKS_STRIDES && st == PTXKIT_SUCCESS; s++) {
            for (int r = 0; r < reps && st == PTXKIT_SUCCESS; r++) {
                memlab_banks b = {.word_bytes = sizes[w], .stride = s, .iters = iters, .blocks = 1,
                                  .cycles = cycles_d + 8 * (ptxkit_dptr)r, .sink = sink};
                st = memlab_banks_run(ctx, &b, NULL);
            }
            if (st == PTXKIT_SUCCESS) st = ptxkit_memory_read(ctx, measured, cycles_d, (size_t)reps * 8);
            if (st != PTXKIT_SUCCESS) break;
            qsort(measured, (size_t)reps, sizeof measured[0], median_u64);
            double accesses = (double)(MEMLAB_BANKS_BLOCK / 32) * iters * MEMLAB_BANKS_UNROLL;
            cycles[w][s] = (double)measured[reps / 2] / accesses;
            fewest[w][s] = (double)measured[0] / accesses;
            most[w][s] = (double)measured[reps - 1] / accesses;
            wavefronts[w * BANKS_STRIDES + s] = memlab_banks_wavefronts(sizes[w], s, &ideal[w * BANKS_STRIDES + s]);
        }
    ptxkit_memory_free(ctx, cycles_d);
    ptxkit_memory_free(ctx, sink);
    char title[400];
    snprintf(title, sizeof title,
             "shared-memory banks on %s (clock64, 32 warps, median of %d blocks; ns at the rated %d MHz)", dev.name, reps,
             clock_khz / 1000);
    const char *headers[] = {"word_bytes", "stride", "case", "cycles_per_access", "ns_per_access", "bytes_per_cycle",
                             "conflict_measured", "wavefronts_model", "conflict_model", "samples", "min_cycles",
                             "max_cycles"};
    cli_table *t = table_new(title, 12, headers);
    table_types(t, "nnsnnnnnnnnn");
    double base = cycles[1][1];   /* 4-byte words, stride 1: one wavefront */
    for (int w = 0; w < 3 && st == PTXKIT_SUCCESS; w++)
        for (int s = 0; s < BANKS_STRIDES; s++) {
            const char *what = s == 0 ? "broadcast" : s == 32 ? "column of [32][32]" : s == 33 ? "column of [32][33]" : "stride";
            int i = w * BANKS_STRIDES + s;
            double ns = clock_khz > 0 ? cycles[w][s] / (clock_khz * 1e-6) : NAN;
            table_addf(t, "%d\t%d\t%s\t%.2f\t%.2f\t%.1f\t%.2f\t%d\t%.1f\t%d\t%.2f\t%.2f", sizes[w], s, what, cycles[w][s],
                       ns, 32.0 * sizes[w] / cycles[w][s], cycles[w][s] / (base * ideal[i]), wavefronts[i],
                       (double)wavefronts[i] / ideal[i], reps, fewest[w][s], most[w][s]);
        }
    int svg_failed = 0;
    if (st == PTXKIT_SUCCESS && common.svg_path) svg_failed = banks_svg(common.svg_path, dev.name, cycles, wavefronts, base, reps, iters);
    rc = finish("bench banks", ctx, st, t, &common);
    return rc ? rc : svg_failed;
}

/* ---- bench transpose ---- */

/* A configuration named by tile edge, threads per block and access width,
 * which ptxkit_transpose takes as block_size and items_per_thread (the tile
 * is block x items elements) and vector_bytes. */
typedef struct transpose_config {
    int tile, block_size, vector_bytes;
} transpose_config;

typedef struct transpose_case {
    const char *label;
    ptxkit_transpose_kind kind;
    transpose_config config;
    bool public_api;        /* ptxkit_transpose with default options */
} transpose_case;

static const char *transpose_kind_name(ptxkit_transpose_kind kind) {
    static const char *const names[] = {"padded", "naive", "tiled"};
    return (unsigned)kind < sizeof names / sizeof names[0] ? names[kind] : "?";
}

typedef struct transpose_args {
    const transpose_case *c;
    ptxkit_dtype type;
    ptxkit_dptr dst, src;
    size_t rows, cols;
    double *gbs; /* where the chart's rate goes */
} transpose_args;

static ptxkit_status run_transpose(ptxkit_context *ctx, ptxkit_stream *s, void *arg) {
    transpose_args *a = arg;
    if (a->c->public_api) return ptxkit_transpose(ctx, a->c->kind, a->type, a->dst, a->src, a->rows, a->cols, NULL, s);
    const transpose_config *c = &a->c->config;
    ptxkit_config o = {0};
    ptxkit_config_set(&o, "path", PTXKIT_PATH_JIT);
    ptxkit_config_set(&o, "tile", c->tile);
    ptxkit_config_set(&o, "block_size", c->block_size);
    ptxkit_config_set(&o, "vector_bytes", c->vector_bytes);
    return ptxkit_transpose(ctx, a->c->kind, a->type, a->dst, a->src, a->rows, a->cols, &o, s);
}

/* The row's config_source: the public call's padded kind may run the tuned
 * configuration (ptxkit_transpose: the entry of its type and shape class at
 * the power of two nearest rows x cols); a case with options of its own is
 * neither ("-"). */
static const char *transpose_source(ptxkit_context *ctx, const transpose_args *a) {
    if (!a->c->public_api) return "-";
    if (a->c->kind != PTXKIT_TRANSPOSE_PADDED) return "default";
    size_t count = a->rows * a->cols;
    int b = 0;
    while (b < 62 && ((size_t)2 << b) <= count) b++;
    if ((double)count > ldexp(1.0, b) * M_SQRT2) b++; /* the nearer power of two */
    size_t n = (size_t)1 << b;
    size_t per_vector = 16 / ptxkit_dtype_size(a->type);
    char variant[32];
    snprintf(variant, sizeof variant, "%s%s", ptxkit_dtype_name(a->type),
             a->rows % per_vector == 0 && a->cols % per_vector == 0 ? "" : ".unaligned");
    return config_source(ctx, "transpose", variant, n, NULL);
}

/* The configuration the row ran (the public call's: the tuned one where
 * the database has it) and its source. */
static ptxkit_status transpose_cells(bench *b, void *arg, bench_result *out) {
    transpose_args *a = arg;
    *a->gbs = out->rate;
    transpose_config cfg = a->c->config;
    ptxkit_config used;
    long long tile = 0, block = 0, vector = 0;
    if (a->c->public_api) {
        ptxkit_status st = ptxkit_transpose_config_get(b->ctx, a->c->kind, a->type, a->rows, a->cols, NULL, &used);
        if (st != PTXKIT_SUCCESS) return st;
        ptxkit_config_get(&used, "tile", &tile);
        ptxkit_config_get(&used, "block_size", &block);
        ptxkit_config_get(&used, "vector_bytes", &vector);
        cfg.tile = (int)tile, cfg.block_size = (int)block, cfg.vector_bytes = (int)vector;
    }
    snprintf(out->cells, sizeof out->cells, "%d\t%d\t%d\t%s", cfg.tile, cfg.block_size, cfg.vector_bytes,
             transpose_source(b->ctx, a));
    return PTXKIT_SUCCESS;
}

/* The seeds' three kernels with the classic 32 x 8 block (4-byte accesses),
 * then vector-width, tile and block variants of the tiled and padded ones. */
static const transpose_case transpose_cases[] = {
    {"naive 32x8", PTXKIT_TRANSPOSE_NAIVE, {32, 256, 4}, false},
    {"tiled 32x8", PTXKIT_TRANSPOSE_TILED, {32, 256, 4}, false},
    {"padded 32x8", PTXKIT_TRANSPOSE_PADDED, {32, 256, 4}, false},
    {"tiled 32 v16 b256", PTXKIT_TRANSPOSE_TILED, {32, 256, 16}, false},
    {"padded 32 v8 b256", PTXKIT_TRANSPOSE_PADDED, {32, 256, 8}, false},
    {"padded 32 v16 b128", PTXKIT_TRANSPOSE_PADDED, {32, 128, 16}, false},
    {"padded 32 v16 b256", PTXKIT_TRANSPOSE_PADDED, {32, 256, 16}, false},
    {"tiled 64 v16 b256", PTXKIT_TRANSPOSE_TILED, {64, 256, 16}, false},
    {"padded 64 v4 b256", PTXKIT_TRANSPOSE_PADDED, {64, 256, 4}, false},
    {"padded 64 v16 b256", PTXKIT_TRANSPOSE_PADDED, {64, 256, 16}, false},
    {"padded 64 v16 b512", PTXKIT_TRANSPOSE_PADDED, {64, 512, 16}, false},
    {"padded 64 v16 b1024", PTXKIT_TRANSPOSE_PADDED, {64, 1024, 16}, false},
    {"padded 128 v4 b1024", PTXKIT_TRANSPOSE_PADDED, {128, 1024, 4}, false},
    {"ptxkit_transpose", PTXKIT_TRANSPOSE_PADDED, {0, 0, 0}, true},
};
#define TRANSPOSE_CASES (sizeof transpose_cases / sizeof transpose_cases[0])

/* ROWSxCOLS, each in [1, 2^20] */
static bool check_shape(const char *text, void *value, char *why, size_t why_size) {
    (void)value;
    long r = 0, c = 0;
    char rows[32] = "";
    const char *x = strchr(text, 'x');
    if (x && (size_t)(x - text) < sizeof rows) memcpy(rows, text, (size_t)(x - text));
    if (x && cli_parse_long(rows, 1, 1 << 20, &r) && cli_parse_long(x + 1, 1, 1 << 20, &c)) return true;
    snprintf(why, why_size, "takes ROWSxCOLS, each in [1, 2^20]");
    return false;
}

int bench_transpose(int argc, char **argv) {
    int reps = 20;
    const char *shape_texts[8];
    int shape_count = 0;
    const arg_option options[] = {
        {.name = "reps", .kind = ARG_INT, .value = &reps, .lo = 1, .hi = 10000},
        {.name = "shape", .kind = ARG_TEXTS, .value = shape_texts, .count = &shape_count, .max = 8, .parse = check_shape},
        {0}};
    const arg_spec spec = {
        .command = "bench transpose",
        .usage = "usage: ptxkit bench transpose [--shape ROWSxCOLS]... [--reps N] [--csv|--json] [--json FILE] [--csv FILE]\n"
                 "                              [--md FILE] [--svg FILE] [--device N]\n",
        .help = "Naive, tiled ([TILE][TILE]) and padded ([TILE][TILE+1]) transposes of float32 and float64 matrices,\n"
                "with the classic 32x8 block and with tile / block / vector-width variants, and ptxkit_transpose with\n"
                "default options (the tuned configuration where the tuning database has one: `ptxkit tune transpose`;\n"
                "PTXKIT_TUNE=off for the built-in defaults). GB/s counts bytes read + written; pct_dtod compares with\n"
                "cuMemcpyDtoD of the same bytes in the same run. Default shapes: 8192x8192 and 4097x4095.\n",
        .common = ARGS_DEVICE | ARGS_TABLES | ARGS_SVG,
        .options = options,
    };
    cli_common common;
    int rc = args_parse(&spec, argc, argv, &common, NULL, NULL);
    if (rc >= 0) return rc;
    size_t shapes[8][2];
    for (int i = 0; i < shape_count; i++) {
        shapes[i][0] = strtoul(shape_texts[i], NULL, 10);
        shapes[i][1] = strtoul(strchr(shape_texts[i], 'x') + 1, NULL, 10);
    }
    if (!shape_count) {
        shapes[0][0] = shapes[0][1] = 8192;
        shapes[1][0] = 4097;
        shapes[1][1] = 4095;
        shape_count = 2;
    }
    bench h;
    ptxkit_device_info dev;
    if (!bench_begin(&h, "bench transpose", &common, 2, reps, 0, NULL, &dev)) return 1;
    ptxkit_context *ctx = h.ctx;
    char title[400];
    snprintf(title, sizeof title,
             "transpose on %s (GB/s = bytes read + written, median of %d; target: padded float32 8192x8192 >= 90%% of "
             "cuMemcpyDtoD)", dev.name, reps);
    const bench_column columns[] = {
        COL_TEXT("rows", "n"), COL_TEXT("cols", "n"), COL_TEXT("dtype", "s"), COL_TEXT("kernel", "s"),
        COL_TEXT("kind", "s"), COL_TEXT("tile", "n"), COL_TEXT("block", "n"), COL_TEXT("vector_bytes", "n"),
        COL("time_us", BENCH_TIME_US, "%.1f"), COL("GBps", BENCH_RATE, "%.0f"), COL("pct_dtod", BENCH_PERCENT, "%.1f"),
        COL_STATS, COL_TEXT(CONFIG_SOURCE_COLUMN, "s")};
    bench_table(&h, title, columns, sizeof columns / sizeof columns[0]);
    static double gbs[8][2][TRANSPOSE_CASES], dtod[8][2];
    ptxkit_status st = PTXKIT_SUCCESS;
    static const ptxkit_dtype types[2] = {PTXKIT_FLOAT32, PTXKIT_FLOAT64};
    for (int sh = 0; sh < shape_count && st == PTXKIT_SUCCESS; sh++)
        for (int ty = 0; ty < 2 && st == PTXKIT_SUCCESS; ty++) {
            transpose_args a = {.type = types[ty], .rows = shapes[sh][0], .cols = shapes[sh][1]};
            size_t bytes = a.rows * a.cols * ptxkit_dtype_size(a.type);
            /* the peer, on buffers of its own: a row of the same columns, not ptxkit's (no configuration) */
            bench_result peer = {.timed = true, .cells = "-\t-\t-\t-"};
            char key[160];
            st = measure_dtod_stats(ctx, bytes, &dtod[sh][ty], &peer.ts);
            if (st == PTXKIT_SUCCESS) st = ptxkit_memory_alloc(ctx, bytes, &a.src);
            if (st == PTXKIT_SUCCESS) st = ptxkit_memory_alloc(ctx, bytes, &a.dst);
            if (st == PTXKIT_SUCCESS) st = fill_random_words(ctx, a.src, bytes, 5);
            if (st == PTXKIT_SUCCESS) {
                peer.rate = peer.ceiling = dtod[sh][ty];
                snprintf(key, sizeof key, "%zu\t%zu\t%s\tcuMemcpyDtoD\t-", a.rows, a.cols, ptxkit_dtype_name(a.type));
                bench_row(&h, key, &peer);
            }
            for (size_t c = 0; c < TRANSPOSE_CASES && st == PTXKIT_SUCCESS; c++) {
                a.c = &transpose_cases[c];
                a.gbs = &gbs[sh][ty][c];
                snprintf(key, sizeof key, "%zu\t%zu\t%s\t%s\t%s", a.rows, a.cols, ptxkit_dtype_name(a.type), a.c->label,
                         transpose_kind_name(a.c->kind));
                bench_case run = {.key = key, .run = run_transpose, .teardown = transpose_cells, .arg = &a,
                                  .work = 2.0 * bytes, .ceiling = dtod[sh][ty]};
                st = bench_run(&h, st, &run, NULL);
            }
            ptxkit_memory_free(ctx, a.src);
            ptxkit_memory_free(ctx, a.dst);
        }
    int svg_failed = 0;
    if (st == PTXKIT_SUCCESS && common.svg_path) {
        static const char *labels[TRANSPOSE_CASES];
        static double y[8][2][TRANSPOSE_CASES];
        static char chart_titles[8][96], ref_labels[8][2][64];
        svg_series series[8][2];
        svg_reference refs[8][3];
        svg_chart charts[8];
        for (size_t c = 0; c < TRANSPOSE_CASES; c++) labels[c] = transpose_cases[c].label;
        for (int sh = 0; sh < shape_count; sh++) {
            for (int ty = 0; ty < 2; ty++) {
                for (size_t c = 0; c < TRANSPOSE_CASES; c++) y[sh][ty][c] = gbs[sh][ty][c];
                series[sh][ty] = (svg_series){.name = ptxkit_dtype_name(types[ty]), .y = y[sh][ty], .count = TRANSPOSE_CASES};
                snprintf(ref_labels[sh][ty], sizeof ref_labels[sh][ty], "cuMemcpyDtoD, %s bytes: %.0f GB/s",
                         ptxkit_dtype_name(types[ty]), dtod[sh][ty]);
                refs[sh][ty] = (svg_reference){.label = ref_labels[sh][ty], .y = dtod[sh][ty]};
            }
            refs[sh][2] = (svg_reference){.label = "90% of cuMemcpyDtoD (float32)", .y = 0.9 * dtod[sh][0]};
            snprintf(chart_titles[sh], sizeof chart_titles[sh], "%zu x %zu matrix", shapes[sh][0], shapes[sh][1]);
            charts[sh] = (svg_chart){.kind = SVG_BARS, .title = chart_titles[sh],
                                     .x_label = "kernel (tile, vector bytes, threads per block)",
                                     .y_label = "bandwidth (GB/s, read + written)", .categories = labels,
                                     .category_count = TRANSPOSE_CASES, .series = series[sh], .series_count = 2,
                                     .references = refs[sh], .reference_count = 3};
        }
        char fig[400];
        snprintf(fig, sizeof fig, "ptxkit bench transpose on %s", dev.name);
        svg_failed = save_svg("bench transpose", common.svg_path, fig, "median of the timed runs; dashed: ceilings measured in the same run",
                              charts, (size_t)shape_count);
    }
    rc = bench_print(&h, st);
    ptxkit_context_destroy(ctx);
    return rc ? rc : svg_failed;
}
