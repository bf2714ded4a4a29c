/* ptxkit ladder scan: the 2007 scan seeds' steps (Hillis-Steele, Blelloch,
 * Blelloch with conflict-free padding), the warp-shuffle step (the lab's
 * lab/ladders.c) and
 * ptxkit_scan on this GPU, next to a sequential scan on this machine's CPU
 * measured in the same run and the seed's published table (GeForce 8800
 * GTX against one core of a Core 2 Duo Extreme at 2.93 GHz). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ptxkit_ops.h"
#include "args.h"
#include "cli.h"
#include "commands.h"
#include "lab.h"
#include "ladders.h"
#include "svg.h"

enum { MAX_SIZES = 16, PRODUCTION_STEP = LAB_SCAN_LADDER_STEPS + 1 };

typedef struct ladder_run {
    int step;
    ptxkit_scan_kind kind;
    ptxkit_dtype type;
    ptxkit_dptr in, out, scratch;
    size_t n, scratch_bytes;
    lab_ladder_options options;
} ladder_run;

static ptxkit_status run_step(ptxkit_context *ctx, ptxkit_stream *s, void *arg) {
    ladder_run *r = arg;
    if (r->step == PRODUCTION_STEP)
        return ptxkit_scan(ctx, r->kind, PTXKIT_REDUCE_SUM, r->type, r->out, r->in, r->n, NULL, s);
    return lab_scan_ladder_run(ctx, r->step, r->kind, PTXKIT_REDUCE_SUM, r->type, r->out, r->in, r->n, r->scratch,
                               r->scratch_bytes, &r->options, s);
}

static const char *const int_type_names[] = {"int32", "uint32", "int64", "uint64", NULL};
static const ptxkit_dtype int_types[] = {PTXKIT_INT32, PTXKIT_UINT32, PTXKIT_INT64, PTXKIT_UINT64};
static const char *const kind_names[] = {"exclusive", "inclusive", NULL};

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int compare_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The sequential scan the seed timed, in C: one pass, one add per element.
 * Integer sums wrap (done unsigned). Median of several runs, in ms. */
static double cpu_scan_ms(const void *in, void *out, size_t n, size_t elem, bool exclusive, time_stats *stats) {
    enum { RUNS = 9 };
    double t[RUNS];
    for (int r = 0; r < RUNS; r++) {
        double t0 = now_s();
        if (elem == 4) {
            const uint32_t *x = in;
            uint32_t *y = out, acc = 0;
            for (size_t i = 0; i < n; i++) {
                uint32_t v = x[i];
                y[i] = exclusive ? acc : acc + v;
                acc += v;
            }
        } else {
            const uint64_t *x = in;
            uint64_t *y = out, acc = 0;
            for (size_t i = 0; i < n; i++) {
                uint64_t v = x[i];
                y[i] = exclusive ? acc : acc + v;
                acc += v;
            }
        }
        t[r] = (now_s() - t0) * 1e3;
        /* keep the stores: the result is compared below */
        __asm__ volatile("" ::"r"(out) : "memory");
    }
    qsort(t, RUNS, sizeof t[0], compare_double);
    *stats = (time_stats){.samples = RUNS, .min_ms = t[0], .median_ms = t[RUNS / 2], .max_ms = t[RUNS - 1]};
    return t[RUNS / 2];
}

/* Times against n, log-log: the CPU and each step of this run, and the
 * seed's two curves dashed. times[0] is the CPU; NaN where not measured. */
static int write_svg(const char *path, const char *gpu, const ladder_run *r, const size_t *sizes, int size_count,
                     double times[][MAX_SIZES], const int *steps, int step_count) {
    double xs[MAX_SIZES], seed_x[LAB_SCAN_SEED_ROWS], seed_cpu[LAB_SCAN_SEED_ROWS], seed_gpu[LAB_SCAN_SEED_ROWS];
    for (int s = 0; s < size_count; s++) xs[s] = (double)sizes[s];
    for (size_t i = 0; i < LAB_SCAN_SEED_ROWS; i++) {
        seed_x[i] = (double)lab_scan_seed[i].n;
        seed_cpu[i] = lab_scan_seed[i].cpu_ms * 1e3;
        seed_gpu[i] = lab_scan_seed[i].gpu_ms * 1e3;
    }
    svg_series series[PRODUCTION_STEP + 3];
    char names[PRODUCTION_STEP + 1][80];
    size_t count = 0;
    snprintf(names[0], sizeof names[0], "CPU, sequential (this machine)");
    series[count++] = (svg_series){.name = names[0], .x = xs, .y = times[0], .count = (size_t)size_count};
    for (int k = 0; k < step_count; k++) {
        int step = steps[k];
        snprintf(names[step], sizeof names[step], "%d %s", step,
                 step == PRODUCTION_STEP ? "ptxkit_scan" : lab_scan_ladder[step - 1].name);
        series[count++] = (svg_series){.name = names[step], .x = xs, .y = times[step], .count = (size_t)size_count};
    }
    series[count++] = (svg_series){.name = "2007 seed: CPU (Core 2, 2.93 GHz)", .x = seed_x, .y = seed_cpu,
                                   .count = LAB_SCAN_SEED_ROWS, .dashed = true};
    series[count++] = (svg_series){.name = "2007 seed: GPU (8800 GTX, step 3)", .x = seed_x, .y = seed_gpu,
                                   .count = LAB_SCAN_SEED_ROWS, .dashed = true};
    svg_chart chart = {.kind = SVG_LINES,
                       .title = "time per scan against length",
                       .x_label = "elements",
                       .y_label = "time (us)",
                       .log_x = true,
                       .log_y = true,
                       .series = series,
                       .series_count = count};
    char title[384], subtitle[256];
    snprintf(title, sizeof title, "Scan ladder on %s", gpu);
    snprintf(subtitle, sizeof subtitle, "%s sum of %s, %d threads per block; dashed: the 2007 seed's table",
             ptxkit_scan_kind_name(r->kind), ptxkit_dtype_name(r->type), r->options.block_size);
    if (svg_save_figure(path, title, subtitle, &chart, 1) != 0) {
        perror(path);
        return 1;
    }
    return 0;
}

int ladder_scan(int argc, char **argv) {
    size_t sizes[MAX_SIZES];
    int size_count = 0;
    for (size_t i = 0; i < LAB_SCAN_SEED_ROWS; i++) sizes[size_count++] = lab_scan_seed[i].n;
    int steps[PRODUCTION_STEP] = {1, 2, 3, 4, 5};
    int step_count = PRODUCTION_STEP, reps = 20, warmup = 3, type = 0, kind = 0;
    ladder_run r = {.options = {.block_size = 256}};
    const arg_option options[] = {
        {.name = "log2", .kind = ARG_LOG2S, .value = sizes, .count = &size_count, .max = MAX_SIZES, .lo = 0, .hi = 31},
        {.name = "sizes", .kind = ARG_SIZES, .value = sizes, .count = &size_count, .max = MAX_SIZES, .lo = 1,
         .hi = 1LL << 31},
        {.name = "steps", .kind = ARG_INTS, .value = steps, .count = &step_count, .max = PRODUCTION_STEP, .lo = 1,
         .hi = PRODUCTION_STEP},
        {.name = "block", .kind = ARG_PARSE, .value = &r.options.block_size, .parse = args_block_size},
        {.name = "reps", .kind = ARG_INT, .value = &reps, .lo = 1, .hi = 10000},
        {.name = "warmup", .kind = ARG_INT, .value = &warmup, .lo = 0, .hi = 1000},
        {.name = "load", .kind = ARG_PARSE, .value = &r.options.load_op, .parse = args_load_op},
        {.name = "kind", .kind = ARG_CHOICE, .value = &kind, .names = kind_names},
        {.name = "type", .kind = ARG_CHOICE, .value = &type, .names = int_type_names},
        {0}};
    static const char *const exclusive[] = {"log2,sizes", NULL};
    const arg_spec spec = {
        .command = "ladder scan",
        .usage = "usage: ptxkit ladder scan [--log2 LIST | --sizes LIST] [--block N] [--type int32|uint32|int64|uint64]\n"
                 "                          [--kind exclusive|inclusive] [--steps LIST] [--load OP] [--reps N]\n"
                 "                          [--warmup N] [--csv|--json] [--json FILE] [--csv FILE] [--md FILE]\n"
                 "                          [--svg FILE] [--device N]\n",
        .help = "The scan ladder on this GPU, sum of 32- or 64-bit integers: 1 Hillis-Steele, 2 Blelloch\n"
                "up/down-sweep, 3 Blelloch with conflict-free padding (the 2007 seed's kernel), 4 warp shuffles,\n"
                "5 ptxkit_scan (single pass, decoupled look-back). Steps 1-4 scan arrays longer than a block the\n"
                "seeds' way (block sums scanned and added back). Each size starts with a sequential scan on this\n"
                "machine's CPU (row 'cpu'); each step gives its time, GB/s (n read + n written), speedup over that\n"
                "CPU scan and over the previous step, and a check against the CPU result, with the count of timed\n"
                "runs and the fastest and slowest. The seed's 2007 figures (8800 GTX vs one core of a 2.93 GHz\n"
                "Core 2 Duo) sit beside the cpu and step-3 rows.\n"
                "Defaults: the seed's sizes (1024, 32768, 65536, ... 16777216) --block 256 --type int32\n"
                "--kind exclusive --steps 1,2,3,4,5. --log2 takes exponents, --sizes element counts.\n",
        .common = ARGS_DEVICE | ARGS_TABLES | ARGS_SVG,
        .options = options,
        .exclusive = exclusive,
    };
    cli_common common;
    int rc = args_parse(&spec, argc, argv, &common, NULL, NULL);
    if (rc >= 0) return rc;
    r.type = int_types[type];
    r.kind = kind == 1 ? PTXKIT_SCAN_INCLUSIVE : PTXKIT_SCAN_EXCLUSIVE;
    ptxkit_context *ctx = cli_open_context("ladder scan", common.device);
    if (!ctx) return 1;
    ptxkit_device_info dev;
    ptxkit_device_info_get(ctx, &dev);
    size_t elem = ptxkit_dtype_size(r.type), max_n = 0;
    for (int s = 0; s < size_count; s++)
        if (sizes[s] > max_n) max_n = sizes[s];

    unsigned char *host_in = malloc(max_n * elem), *host_ref = malloc(max_n * elem), *host_got = malloc(max_n * elem);
    ptxkit_status st = host_in && host_ref && host_got ? PTXKIT_SUCCESS : PTXKIT_ERROR_OUT_OF_MEMORY;
    if (st == PTXKIT_SUCCESS) st = ptxkit_memory_alloc(ctx, max_n * elem, &r.in);
    if (st == PTXKIT_SUCCESS) st = ptxkit_memory_alloc(ctx, max_n * elem, &r.out);
    if (st == PTXKIT_SUCCESS) st = fill_random_words(ctx, r.in, max_n * elem, 5);
    if (st == PTXKIT_SUCCESS) st = ptxkit_memory_read(ctx, host_in, r.in, max_n * elem);
    /* Block sums for the largest need of any step, allocated once so the
     * timed runs are launches only. */
    for (int s = 0; s < size_count && st == PTXKIT_SUCCESS; s++)
        for (int k = 0; k < step_count && st == PTXKIT_SUCCESS; k++) {
            size_t bytes = 0;
            if (steps[k] == PRODUCTION_STEP) continue;
            st = lab_scan_ladder_scratch_bytes(ctx, steps[k], PTXKIT_REDUCE_SUM, r.type, sizes[s], &r.options, &bytes);
            if (bytes > r.scratch_bytes) r.scratch_bytes = bytes;
        }
    if (st == PTXKIT_SUCCESS && r.scratch_bytes) st = ptxkit_memory_alloc(ctx, r.scratch_bytes, &r.scratch);

    char title[640];
    snprintf(title, sizeof title,
             "Scan ladder on %s: %s sum of %s, %d threads per block, median of %d; cpu: sequential scan on this "
             "machine, median of 9 (seed: Harris 2007, 8800 GTX vs one 2.93 GHz Core 2 core, work-efficient "
             "conflict-free scan = step 3)",
             dev.name, ptxkit_scan_kind_name(r.kind), ptxkit_dtype_name(r.type), r.options.block_size, reps);
    const char *headers[] = {"n",       "step",  "name",         "time_us",     "GBps",        "vs_cpu",
                             "vs_prev", "check", "seed_time_us", "seed_vs_cpu", STATS_COLUMNS};
    cli_table *t = table_new(title, 13, headers);
    table_types(t, "nssnnnnsnn" STATS_TYPES); /* step: 1..5 or cpu */
    static double times[PRODUCTION_STEP + 1][MAX_SIZES];
    for (int k = 0; k <= PRODUCTION_STEP; k++)
        for (int s = 0; s < MAX_SIZES; s++) times[k][s] = NAN;
    for (int s = 0; s < size_count && st == PTXKIT_SUCCESS; s++) {
        r.n = sizes[s];
        int seed_row = -1;
        for (size_t i = 0; i < LAB_SCAN_SEED_ROWS; i++)
            if (lab_scan_seed[i].n == r.n) seed_row = (int)i;
        time_stats cpu;
        double cpu_ms = cpu_scan_ms(host_in, host_ref, r.n, elem, r.kind == PTXKIT_SCAN_EXCLUSIVE, &cpu);
        times[0][s] = cpu_ms * 1e3;
        char seed_cpu[32] = "-";
        if (seed_row >= 0) snprintf(seed_cpu, sizeof seed_cpu, "%.1f", lab_scan_seed[seed_row].cpu_ms * 1e3);
        table_addf(t, "%zu\tcpu\tsequential scan, this machine\t%.2f\t%.1f\t1.00\t-\t-\t%s\t1.00\t%d\t%.2f\t%.2f", r.n,
                   cpu_ms * 1e3, 2.0 * (double)r.n * (double)elem / (cpu_ms * 1e-3) / 1e9, seed_cpu, cpu.samples,
                   cpu.min_ms * 1e3, cpu.max_ms * 1e3);
        double prev_ms = 0;
        for (int k = 0; k < step_count && st == PTXKIT_SUCCESS; k++) {
            r.step = steps[k];
            time_stats ts = {0};
            st = ptxkit_memory_set8_async(ctx, r.out, 0xCD, r.n * elem, NULL);
            if (st == PTXKIT_SUCCESS) st = ptxkit_context_synchronize(ctx);
            if (st == PTXKIT_SUCCESS) st = time_stats_ms(ctx, run_step, &r, warmup, reps, &ts);
            double ms = ts.median_ms;
            if (st == PTXKIT_SUCCESS) st = ptxkit_memory_read(ctx, host_got, r.out, r.n * elem);
            if (st != PTXKIT_SUCCESS) break;
            const char *check = memcmp(host_got, host_ref, r.n * elem) == 0 ? "ok" : "WRONG";
            char vs_prev[32] = "-", seed_time[32] = "-", seed_speedup[32] = "-";
            if (prev_ms) snprintf(vs_prev, sizeof vs_prev, "%.2f", prev_ms / ms);
            if (seed_row >= 0 && r.step == LAB_SCAN_SEED_STEP) {
                snprintf(seed_time, sizeof seed_time, "%.1f", lab_scan_seed[seed_row].gpu_ms * 1e3);
                snprintf(seed_speedup, sizeof seed_speedup, "%.2f", lab_scan_seed[seed_row].speedup);
            }
            const char *name =
                r.step == PRODUCTION_STEP ? "ptxkit_scan, decoupled look-back" : lab_scan_ladder[r.step - 1].name;
            char spread[64];
            table_addf(t, "%zu\t%d\t%s\t%.2f\t%.1f\t%.2f\t%s\t%s\t%s\t%s%s", r.n, r.step, name, ms * 1e3,
                       2.0 * (double)r.n * (double)elem / (ms * 1e-3) / 1e9, cpu_ms / ms, vs_prev, check, seed_time,
                       seed_speedup, stats_cells(&ts, spread, sizeof spread));
            prev_ms = ms;
            times[r.step][s] = ms * 1e3;
        }
    }
    if (st != PTXKIT_SUCCESS)
        fprintf(stderr, "ptxkit ladder scan: %s: %s\n", ptxkit_status_string(st), ptxkit_last_error());
    table_print(t, common.format, stdout);
    table_free(t);
    rc = st == PTXKIT_SUCCESS ? 0 : 1;
    if (common.svg_path && st == PTXKIT_SUCCESS)
        rc |= write_svg(common.svg_path, dev.name, &r, sizes, size_count, times, steps, step_count);
    free(host_in);
    free(host_ref);
    free(host_got);
    ptxkit_memory_free(ctx, r.in);
    ptxkit_memory_free(ctx, r.out);
    if (r.scratch) ptxkit_memory_free(ctx, r.scratch);
    ptxkit_context_destroy(ctx);
    return rc;
}
