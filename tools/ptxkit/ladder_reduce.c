/* ptxkit ladder reduce: Mark Harris's reduction ladder (steps 1-10, the
 * lab's lab/ladders.c) on this GPU, the table of the 2007 lecture redone:
 * time, bandwidth, step and cumulative speedup, with the published G80
 * figures (the lab's table) beside the 2^22 rows. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptxkit_ops.h"
#include "args.h"
#include "cli.h"
#include "commands.h"
#include "lab.h"
#include "ladders.h"

enum { MAX_SIZES = 8 };

typedef struct ladder_run {
    int step;
    ptxkit_reduce_op op;
    ptxkit_dtype type;
    ptxkit_dptr in, out, scratch;
    size_t n, scratch_bytes;
    lab_ladder_options options;
} ladder_run;

static ptxkit_status run_step(ptxkit_context *ctx, ptxkit_stream *s, void *arg) {
    ladder_run *r = arg;
    return lab_reduce_ladder_run(ctx, r->step, r->op, r->type, r->out, r->in, r->n, r->scratch, r->scratch_bytes,
                                 &r->options, s);
}

static const char *op_name_at(int i) { return ptxkit_reduce_op_name((ptxkit_reduce_op)i); }
static const char *type_name_at(int i) { return ptxkit_dtype_name((ptxkit_dtype)i); }

/* Whether the ladder's result matches ptxkit_reduce's (exactly for the
 * integer types; floats are summed in another order, so only reported). */
static const char *check_result(ptxkit_context *ctx, const ladder_run *r, ptxkit_status *st) {
    unsigned char got[8] = {0}, want[8] = {0};
    size_t elem = ptxkit_dtype_size(r->type);
    *st = ptxkit_memory_read(ctx, got, r->out, elem);
    if (*st == PTXKIT_SUCCESS) *st = ptxkit_reduce_to_host(ctx, r->op, r->type, want, r->in, r->n, NULL);
    if (*st != PTXKIT_SUCCESS) return "error";
    if (r->type == PTXKIT_FLOAT32 || r->type == PTXKIT_FLOAT64) return "-";
    return memcmp(got, want, elem) == 0 ? "ok" : "WRONG";
}

int ladder_reduce(int argc, char **argv) {
    size_t sizes[MAX_SIZES] = {(size_t)1 << 22, (size_t)1 << 25};
    int size_count = 2, steps[LAB_REDUCE_LADDER_STEPS] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
    int step_count = LAB_REDUCE_LADDER_STEPS, reps = 20, warmup = 3, op = PTXKIT_REDUCE_SUM, type = PTXKIT_INT32;
    ladder_run r = {.options = {.block_size = 128}};
    const arg_option options[] = {
        {.name = "log2", .kind = ARG_LOG2S, .value = sizes, .count = &size_count, .max = MAX_SIZES, .lo = 0, .hi = 34},
        {.name = "sizes", .kind = ARG_SIZES, .value = sizes, .count = &size_count, .max = MAX_SIZES, .lo = 1,
         .hi = 1LL << 34},
        {.name = "steps", .kind = ARG_INTS, .value = steps, .count = &step_count, .max = LAB_REDUCE_LADDER_STEPS, .lo = 1,
         .hi = LAB_REDUCE_LADDER_STEPS},
        {.name = "block", .kind = ARG_PARSE, .value = &r.options.block_size, .parse = args_block_size},
        {.name = "reps", .kind = ARG_INT, .value = &reps, .lo = 1, .hi = 10000},
        {.name = "warmup", .kind = ARG_INT, .value = &warmup, .lo = 0, .hi = 1000},
        {.name = "load", .kind = ARG_PARSE, .value = &r.options.load_op, .parse = args_load_op},
        {.name = "op", .kind = ARG_CHOICE, .value = &op, .name_of = op_name_at, .name_count = PTXKIT_REDUCE_OP_COUNT},
        {.name = "type", .kind = ARG_CHOICE, .value = &type, .name_of = type_name_at, .name_count = PTXKIT_DTYPE_COUNT},
        {0}};
    static const char *const exclusive[] = {"log2,sizes", NULL};
    const arg_spec spec = {
        .command = "ladder reduce",
        .usage = "usage: ptxkit ladder reduce [--log2 LIST | --sizes LIST] [--block N] [--op OP] [--type TYPE] [--steps LIST]\n"
                 "                            [--load OP] [--reps N] [--warmup N] [--csv|--json] [--json FILE] [--csv FILE]\n"
                 "                            [--md FILE] [--device N]\n",
        .help = "Mark Harris's reduction steps 1-7 from the 2007 lecture, then 8 warp shuffles, 9 redux.sync and\n"
                "10 cooperative groups' tile reduce (cg::reduce over 32-lane tiles, written inline),\n"
                "timed on this GPU: time, GB/s (n x element bytes read), speedup over the previous step and\n"
                "over step 1, a check of the result against ptxkit_reduce, and the lecture's G80 figures\n"
                "beside the 2^22 int32 sum rows; each row with the count of timed runs and the fastest and\n"
                "slowest. Defaults: --log2 22,25 --block 128 (the lecture's) --op sum --type int32\n"
                "--steps 1,2,3,4,5,6,7,8,9,10. --log2 takes exponents, --sizes element counts.\n",
        .common = ARGS_DEVICE | ARGS_TABLES,
        .options = options,
        .exclusive = exclusive,
    };
    cli_common common;
    int rc = args_parse(&spec, argc, argv, &common, NULL, NULL);
    if (rc >= 0) return rc;
    r.op = (ptxkit_reduce_op)op;
    r.type = (ptxkit_dtype)type;
    if (ptxkit_reduce_supported(NULL, r.op, r.type) != PTXKIT_SUCCESS)
        return args_error(&spec, "%s of %s is not provided", ptxkit_reduce_op_name(r.op), ptxkit_dtype_name(r.type));
    ptxkit_context *ctx = cli_open_context("ladder reduce", common.device);
    if (!ctx) return 1;
    ptxkit_device_info dev;
    ptxkit_device_info_get(ctx, &dev);
    size_t elem = ptxkit_dtype_size(r.type), max_n = 0;
    for (int s = 0; s < size_count; s++)
        if (sizes[s] > max_n) max_n = sizes[s];

    ptxkit_status st = ptxkit_memory_alloc(ctx, max_n * elem, &r.in);
    if (st == PTXKIT_SUCCESS) st = ptxkit_memory_alloc(ctx, 64, &r.out);
    if (st == PTXKIT_SUCCESS) st = fill_random_words(ctx, r.in, max_n * elem, 5);
    /* Scratch for the largest need of any step at any size, allocated once
     * so the timed runs are launches only. */
    for (int s = 0; s < size_count && st == PTXKIT_SUCCESS; s++)
        for (int k = 0; k < step_count && st == PTXKIT_SUCCESS; k++) {
            size_t bytes = 0;
            if (lab_reduce_ladder_check(ctx, steps[k], r.op, r.type) != PTXKIT_SUCCESS) continue;
            st = lab_reduce_ladder_scratch_bytes(ctx, steps[k], r.op, r.type, sizes[s], &r.options, &bytes);
            if (bytes > r.scratch_bytes) r.scratch_bytes = bytes;
        }
    if (st == PTXKIT_SUCCESS && r.scratch_bytes) st = ptxkit_memory_alloc(ctx, r.scratch_bytes, &r.scratch);

    char title[512];
    snprintf(title, sizeof title,
             "Reduction ladder on %s: %s of %s, %d threads per block, median of %d (G80: the 2007 lecture, 2^22 "
             "ints, 128 threads)",
             dev.name, ptxkit_reduce_op_name(r.op), ptxkit_dtype_name(r.type), r.options.block_size, reps);
    const char *headers[] = {"n",     "kernel",      "name",     "time_us", "GBps", "step_speedup", "cumulative_speedup",
                             "check", "G80_time_us", "G80_GBps", STATS_COLUMNS};
    cli_table *t = table_new(title, 13, headers);
    table_types(t, "nnsnnnnsnn" STATS_TYPES);
    for (int s = 0; s < size_count && st == PTXKIT_SUCCESS; s++) {
        r.n = sizes[s];
        double first_ms = 0, prev_ms = 0;
        for (int k = 0; k < step_count && st == PTXKIT_SUCCESS; k++) {
            r.step = steps[k];
            const lab_reduce_step *step = &lab_reduce_ladder[r.step - 1];
            if (lab_reduce_ladder_check(ctx, r.step, r.op, r.type) != PTXKIT_SUCCESS) {
                table_addf(t, "%zu\t%d\t%s\tunsupported\t-\t-\t-\t-\t-\t-\t-\t-\t-", r.n, r.step, step->name);
                continue;
            }
            time_stats ts;
            st = time_stats_ms(ctx, run_step, &r, warmup, reps, &ts);
            if (st != PTXKIT_SUCCESS) break;
            double ms = ts.median_ms;
            const char *check = check_result(ctx, &r, &st);
            if (st != PTXKIT_SUCCESS) break;
            if (!first_ms) first_ms = ms;
            char step_speedup[32] = "-", g80_time[32] = "-", g80_bw[32] = "-";
            if (prev_ms) snprintf(step_speedup, sizeof step_speedup, "%.2f", prev_ms / ms);
            bool lecture_row = r.n == (size_t)1 << 22 && r.op == PTXKIT_REDUCE_SUM && r.type == PTXKIT_INT32;
            if (lecture_row && step->g80_ms > 0) {
                snprintf(g80_time, sizeof g80_time, "%.0f", step->g80_ms * 1e3);
                snprintf(g80_bw, sizeof g80_bw, "%.3f", step->g80_gbs);
            }
            char spread[64];
            table_addf(t, "%zu\t%d\t%s\t%.2f\t%.1f\t%s\t%.2f\t%s\t%s\t%s%s", r.n, r.step, step->name, ms * 1e3,
                       (double)r.n * elem / (ms * 1e-3) / 1e9, step_speedup, first_ms / ms, check, g80_time, g80_bw,
                       stats_cells(&ts, spread, sizeof spread));
            prev_ms = ms;
        }
    }
    if (st != PTXKIT_SUCCESS)
        fprintf(stderr, "ptxkit ladder reduce: %s: %s\n", ptxkit_status_string(st), ptxkit_last_error());
    table_print(t, common.format, stdout);
    table_free(t);
    ptxkit_memory_free(ctx, r.in);
    ptxkit_memory_free(ctx, r.out);
    if (r.scratch) ptxkit_memory_free(ctx, r.scratch);
    ptxkit_context_destroy(ctx);
    return st == PTXKIT_SUCCESS ? 0 : 1;
}
