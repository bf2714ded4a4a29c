/* ptxkit bench multi: sharded reduce and scan over 1, 2, 4, 8 GPUs of this
 * process (ptxkit_comm_create_all), each against the sum of the same GPUs'
 * single-GPU ptxkit_reduce / ptxkit_scan of the same per-GPU size measured
 * in this run; NCCL's all-reduce bus bandwidth as nccl-tests defines it;
 * and the latency a small sharded op adds over the single-GPU op. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptxkit_ops.h"
#include "args.h"
#include "cli.h"
#include "commands.h"
#include "report.h"

enum { MAX_GPUS = 8, MAX_COUNTS = 4 };

typedef struct multi_bench {
    bool types[PTXKIT_DTYPE_COUNT];
    int gpu_counts[MAX_COUNTS], gpu_count_count;
    size_t n;          /* elements per GPU */
    size_t small;      /* elements per GPU of the latency rows */
    size_t allreduce_bytes;
    int reps, warmup;
} multi_bench;

typedef enum multi_op { OP_REDUCE = 0, OP_SCAN, OP_ALLREDUCE } multi_op;

/* What every GPU holds: its context, stream, events and buffers. */
typedef struct gpu {
    ptxkit_context *ctx;
    ptxkit_stream *stream;
    ptxkit_event *start, *end;
    ptxkit_dptr in, out, small_out;
    double single_gbs[2][PTXKIT_DTYPE_COUNT]; /* [reduce, scan][type], alone */
} gpu;

static const char *type_name_at(int i) { return ptxkit_dtype_name((ptxkit_dtype)i); }

static const char multi_usage[] =
    "usage: ptxkit bench multi [--gpus LIST] [--log2 K | --n N] [--small N] [--allreduce-bytes N]\n"
    "                          [--types LIST|all] [--reps N] [--warmup N] [--csv|--json] [--json FILE]\n"
    "                          [--csv FILE] [--md FILE]\n";

static const char multi_help[] =
    "Sharded ptxkit_comm_reduce (sum) and ptxkit_comm_scan (inclusive sum) of N elements per GPU over\n"
    "1, 2, 4 and 8 GPUs of this process, each on its own GPU: time (the slowest GPU's, events on each\n"
    "GPU's stream), aggregate GB/s (all GPUs' bytes: n x element read for reduce, read + written for scan),\n"
    "and its share of the sum of the same GPUs' single-GPU ptxkit_reduce / ptxkit_scan GB/s at N elements,\n"
    "each GPU measured alone in this run. Then NCCL's all-reduce (float32 sum, out of place) with\n"
    "nccl-tests' bus bandwidth (busbw = algbw x 2(n-1)/n, algbw = bytes / time), and the latency rows: a\n"
    "sharded op of --small elements per GPU against the single-GPU op of the same size.\n"
    "Sets NCCL_NVLS_ENABLE=0 unless the environment sets it (NVLink SHARP needs multicast objects).\n"
    "Defaults: --gpus 1,2,4,8 (those present) --log2 28 --small 1024 --allreduce-bytes 2^30 --types int32,float32\n"
    "--reps 20 --warmup 3.\n";

static int parse_args(int argc, char **argv, multi_bench *b, cli_common *common) {
    *b = (multi_bench){.n = (size_t)1 << 28, .small = 1024, .allreduce_bytes = (size_t)1 << 30, .reps = 20, .warmup = 3};
    b->types[PTXKIT_INT32] = b->types[PTXKIT_FLOAT32] = true;
    size_t log2s[1] = {28};
    int log2_count = 0, n_count = 0;
    size_t ns[1] = {0};
    const arg_option options[] = {
        {.name = "gpus", .kind = ARG_INTS, .value = b->gpu_counts, .count = &b->gpu_count_count, .max = MAX_COUNTS,
         .lo = 1, .hi = MAX_GPUS},
        {.name = "log2", .kind = ARG_LOG2S, .value = log2s, .count = &log2_count, .max = 1, .lo = 0, .hi = 34},
        {.name = "n", .kind = ARG_SIZES, .value = ns, .count = &n_count, .max = 1, .lo = 1, .hi = 1LL << 34},
        {.name = "small", .kind = ARG_SIZE, .value = &b->small, .lo = 1, .hi = 1 << 24},
        {.name = "allreduce-bytes", .kind = ARG_SIZE, .value = &b->allreduce_bytes, .lo = 4, .hi = 1LL << 34},
        {.name = "types", .kind = ARG_CHOICES, .value = b->types, .name_of = type_name_at, .name_count = PTXKIT_DTYPE_COUNT},
        {.name = "reps", .kind = ARG_INT, .value = &b->reps, .lo = 1, .hi = 10000},
        {.name = "warmup", .kind = ARG_INT, .value = &b->warmup, .lo = 0, .hi = 1000},
        {0}};
    static const char *const exclusive[] = {"log2,n", NULL};
    const arg_spec spec = {.command = "bench multi", .usage = multi_usage, .help = multi_help,
                           .common = ARGS_TABLES, .options = options, .exclusive = exclusive};
    int rc = args_parse(&spec, argc, argv, common, NULL, NULL);
    if (log2_count) b->n = log2s[0];
    if (n_count) b->n = ns[0];
    return rc;
}

/* One timed run of an op over gpus [0, count): each GPU's interval between
 * its own events; *slowest_ms the longest, *fastest_ms the shortest. */
typedef struct run_spec {
    multi_op op;
    ptxkit_dtype type;
    size_t n;
    ptxkit_comm *comm; /* NULL: the single-GPU op on gpus[0] */
    bool small;
} run_spec;

static ptxkit_status run_once(gpu *g, int count, const run_spec *r, double *slowest_ms, double *fastest_ms) {
    ptxkit_status st = PTXKIT_SUCCESS;
    ptxkit_dptr out[MAX_GPUS], in[MAX_GPUS];
    ptxkit_stream *streams[MAX_GPUS];
    size_t n[MAX_GPUS];
    for (int i = 0; i < count; i++) {
        in[i] = g[i].in, out[i] = r->small ? g[i].small_out : g[i].out, streams[i] = g[i].stream, n[i] = r->n;
        if ((st = ptxkit_event_record(g[i].ctx, g[i].start, g[i].stream)) != PTXKIT_SUCCESS) return st;
    }
    if (!r->comm) {
        st = r->op == OP_REDUCE ? ptxkit_reduce(g[0].ctx, PTXKIT_REDUCE_SUM, r->type, g[0].small_out, in[0], r->n, NULL,
                                                g[0].stream)
                                : ptxkit_scan(g[0].ctx, PTXKIT_SCAN_INCLUSIVE, PTXKIT_REDUCE_SUM, r->type, out[0], in[0],
                                              r->n, NULL, g[0].stream);
    } else if (r->op == OP_REDUCE) {
        ptxkit_dptr red[MAX_GPUS];
        for (int i = 0; i < count; i++) red[i] = g[i].small_out;
        st = ptxkit_comm_reduce(r->comm, PTXKIT_REDUCE_SUM, r->type, red, in, n, NULL, streams);
    } else if (r->op == OP_SCAN) {
        st = ptxkit_comm_scan(r->comm, PTXKIT_SCAN_INCLUSIVE, PTXKIT_REDUCE_SUM, r->type, out, in, n, NULL, streams);
    } else {
        st = ptxkit_comm_allreduce(r->comm, PTXKIT_REDUCE_SUM, r->type, out, in, r->n, streams);
    }
    if (st != PTXKIT_SUCCESS) return st;
    *slowest_ms = 0, *fastest_ms = 1e30;
    for (int i = 0; i < count; i++)
        if ((st = ptxkit_event_record(g[i].ctx, g[i].end, g[i].stream)) != PTXKIT_SUCCESS) return st;
    for (int i = 0; i < count; i++) {
        float ms = 0;
        if ((st = ptxkit_event_synchronize(g[i].ctx, g[i].end)) != PTXKIT_SUCCESS) return st;
        if ((st = ptxkit_event_elapsed_ms_get(g[i].ctx, g[i].start, g[i].end, &ms)) != PTXKIT_SUCCESS) return st;
        if (ms > *slowest_ms) *slowest_ms = ms;
        if (ms < *fastest_ms) *fastest_ms = ms;
    }
    return r->comm ? ptxkit_comm_check(r->comm) : PTXKIT_SUCCESS;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* warmup untimed runs, then reps: the median slowest-GPU time and the
 * median fastest-GPU time, with the spread of the slowest. */
static ptxkit_status time_runs(gpu *g, int count, const run_spec *r, const multi_bench *b, time_stats *slowest,
                               double *fastest_median_ms) {
    double *slow = calloc((size_t)b->reps, sizeof *slow), *fast = calloc((size_t)b->reps, sizeof *fast);
    if (!slow || !fast) {
        free(slow), free(fast);
        return PTXKIT_ERROR_OUT_OF_MEMORY;
    }
    ptxkit_status st = PTXKIT_SUCCESS;
    double s, f;
    for (int i = 0; i < b->warmup && st == PTXKIT_SUCCESS; i++) st = run_once(g, count, r, &s, &f);
    for (int i = 0; i < b->reps && st == PTXKIT_SUCCESS; i++) st = run_once(g, count, r, &slow[i], &fast[i]);
    if (st == PTXKIT_SUCCESS) {
        qsort(slow, (size_t)b->reps, sizeof *slow, cmp_double);
        qsort(fast, (size_t)b->reps, sizeof *fast, cmp_double);
        *slowest = (time_stats){.samples = b->reps, .min_ms = slow[0], .median_ms = slow[b->reps / 2],
                                .max_ms = slow[b->reps - 1]};
        *fastest_median_ms = fast[b->reps / 2];
    }
    free(slow), free(fast);
    return st;
}

static void fail_line(const char *what, ptxkit_status st) {
    fprintf(stderr, "ptxkit bench multi: %s: %s: %s\n", what, ptxkit_status_string(st), ptxkit_last_error());
}

int bench_multi(int argc, char **argv) {
    multi_bench b;
    cli_common common;
    int rc = parse_args(argc, argv, &b, &common);
    if (rc >= 0) return rc;
    setenv("NCCL_NVLS_ENABLE", "0", 0);
    int present = 0;
    ptxkit_status st = ptxkit_device_count_get(&present);
    if (st != PTXKIT_SUCCESS || present < 1) {
        fprintf(stderr, "ptxkit bench multi: no GPU: %s\n", ptxkit_last_error());
        return 1;
    }
    char nccl_path[4352], nccl_version[32];
    if ((st = ptxkit_comm_library_get(nccl_path, sizeof nccl_path, nccl_version, sizeof nccl_version)) != PTXKIT_SUCCESS) {
        fprintf(stderr, "ptxkit bench multi: %s\n", ptxkit_last_error());
        return 1;
    }
    if (!b.gpu_count_count) {
        static const int all[] = {1, 2, 4, 8};
        for (int i = 0; i < 4; i++)
            if (all[i] <= present) b.gpu_counts[b.gpu_count_count++] = all[i];
    }
    int most = 0;
    for (int i = 0; i < b.gpu_count_count; i++) {
        if (b.gpu_counts[i] > present) {
            fprintf(stderr, "ptxkit bench multi: --gpus asks for %d GPUs, %d present\n", b.gpu_counts[i], present);
            return 2;
        }
        if (b.gpu_counts[i] > most) most = b.gpu_counts[i];
    }
    fprintf(stderr, "ptxkit bench multi: NCCL %s (%s), NCCL_NVLS_ENABLE=%s, %d GPU%s present, %zu elements per GPU\n",
            nccl_version, nccl_path, getenv("NCCL_NVLS_ENABLE"), present, present == 1 ? "" : "s", b.n);

    /* every GPU: context, stream, events; in (8 bytes an element, filled),
     * out (the scan's and all-reduce's) */
    gpu g[MAX_GPUS];
    memset(g, 0, sizeof g);
    size_t bytes = b.n * 8 > b.allreduce_bytes ? b.n * 8 : b.allreduce_bytes;
    for (int i = 0; i < most && st == PTXKIT_SUCCESS; i++) {
        if ((g[i].ctx = cli_open_context("bench multi", i)) == NULL) {
            st = PTXKIT_ERROR_NO_DEVICE;
            break;
        }
        if ((st = ptxkit_stream_create(g[i].ctx, PTXKIT_STREAM_NON_BLOCKING, 0, &g[i].stream)) == PTXKIT_SUCCESS &&
            (st = ptxkit_event_create(g[i].ctx, PTXKIT_EVENT_DEFAULT, &g[i].start)) == PTXKIT_SUCCESS &&
            (st = ptxkit_event_create(g[i].ctx, PTXKIT_EVENT_DEFAULT, &g[i].end)) == PTXKIT_SUCCESS &&
            (st = ptxkit_memory_alloc(g[i].ctx, bytes, &g[i].in)) == PTXKIT_SUCCESS &&
            (st = ptxkit_memory_alloc(g[i].ctx, bytes, &g[i].out)) == PTXKIT_SUCCESS &&
            (st = ptxkit_memory_alloc(g[i].ctx, b.small * 8 + 64, &g[i].small_out)) == PTXKIT_SUCCESS)
            st = fill_random_words(g[i].ctx, g[i].in, bytes, 17u + (uint32_t)i);
        if (st != PTXKIT_SUCCESS) fail_line("setting up a GPU", st);
    }

    /* each GPU alone: the single-GPU ceilings of the same per-GPU size */
    for (int i = 0; i < most && st == PTXKIT_SUCCESS; i++)
        for (int t = 0; t < PTXKIT_DTYPE_COUNT && st == PTXKIT_SUCCESS; t++) {
            if (!b.types[t]) continue;
            double elem = (double)ptxkit_dtype_size((ptxkit_dtype)t);
            for (int op = OP_REDUCE; op <= OP_SCAN && st == PTXKIT_SUCCESS; op++) {
                run_spec r = {.op = (multi_op)op, .type = (ptxkit_dtype)t, .n = b.n};
                time_stats ts;
                double fastest;
                if ((st = time_runs(&g[i], 1, &r, &b, &ts, &fastest)) != PTXKIT_SUCCESS) {
                    fail_line("single-GPU ceiling", st);
                    break;
                }
                double moved = (double)b.n * elem * (op == OP_SCAN ? 2 : 1);
                g[i].single_gbs[op][t] = moved / (ts.median_ms * 1e-3) / 1e9;
                fprintf(stderr, "ptxkit bench multi: GPU %d alone: %s %s %.1f GB/s\n", i,
                        op == OP_SCAN ? "ptxkit_scan" : "ptxkit_reduce", type_name_at(t), g[i].single_gbs[op][t]);
            }
        }
    if (st == PTXKIT_SUCCESS && most > 0) report_note_device(g[0].ctx);

    char title[512];
    snprintf(title, sizeof title,
             "sharded ptxkit_comm_reduce / ptxkit_comm_scan (sum) of %zu elements per GPU (GB/s: all GPUs' bytes; "
             "single_sum_GBps: the same GPUs' single-GPU op alone, this run; median of %d, slowest GPU)",
             b.n, b.reps);
    const char *headers[] = {"gpus", "op", "type", "n_per_gpu", "time_us", "fastest_gpu_us", "GBps",
                             "single_sum_GBps", "pct_of_single_sum", STATS_COLUMNS};
    cli_table *t = table_new(title, 12, headers);
    table_types(t, "nssnnnnnn" STATS_TYPES);
    snprintf(title, sizeof title,
             "NCCL all-reduce (ptxkit_comm_allreduce, float32 sum, out of place) of %zu bytes per GPU: algbw = bytes / "
             "time, busbw = algbw x 2(n-1)/n (nccl-tests' definitions); NCCL %s",
             b.allreduce_bytes, nccl_version);
    const char *ar_headers[] = {"gpus", "bytes", "time_us", "algbw_GBps", "busbw_GBps", STATS_COLUMNS};
    cli_table *ar = table_new(title, 8, ar_headers);
    table_id(ar, "bench_multi_allreduce");
    table_types(ar, "nnnnn" STATS_TYPES);
    snprintf(title, sizeof title,
             "latency of a small sharded op (%zu elements per GPU) against the single-GPU op of the same size on GPU 0 "
             "(median of %d, slowest GPU)",
             b.small, b.reps);
    const char *lat_headers[] = {"gpus", "op", "type", "n_per_gpu", "sharded_us", "single_us", "added_us", STATS_COLUMNS};
    cli_table *lat = table_new(title, 10, lat_headers);
    table_id(lat, "bench_multi_latency");
    table_types(lat, "nssnnnn" STATS_TYPES);

    for (int c = 0; c < b.gpu_count_count && st == PTXKIT_SUCCESS; c++) {
        int count = b.gpu_counts[c];
        ptxkit_context *ctxs[MAX_GPUS];
        for (int i = 0; i < count; i++) ctxs[i] = g[i].ctx;
        ptxkit_comm *comm = NULL;
        double t0 = cli_now_ms();
        if ((st = ptxkit_comm_create_all(ctxs, count, &comm)) != PTXKIT_SUCCESS) {
            fail_line("ptxkit_comm_create_all", st);
            break;
        }
        fprintf(stderr, "ptxkit bench multi: %d GPU%s: communicator in %.2f s\n", count, count == 1 ? "" : "s",
                (cli_now_ms() - t0) / 1e3);
        for (int ty = 0; ty < PTXKIT_DTYPE_COUNT && st == PTXKIT_SUCCESS; ty++) {
            if (!b.types[ty]) continue;
            double elem = (double)ptxkit_dtype_size((ptxkit_dtype)ty);
            for (int op = OP_REDUCE; op <= OP_SCAN && st == PTXKIT_SUCCESS; op++) {
                run_spec r = {.op = (multi_op)op, .type = (ptxkit_dtype)ty, .n = b.n, .comm = comm};
                time_stats ts;
                double fastest;
                if ((st = time_runs(g, count, &r, &b, &ts, &fastest)) != PTXKIT_SUCCESS) {
                    fail_line(op == OP_SCAN ? "ptxkit_comm_scan" : "ptxkit_comm_reduce", st);
                    break;
                }
                double moved = (double)b.n * elem * (op == OP_SCAN ? 2 : 1) * count;
                double gbs = moved / (ts.median_ms * 1e-3) / 1e9, sum = 0;
                for (int i = 0; i < count; i++) sum += g[i].single_gbs[op][ty];
                char spread[64];
                table_addf(t, "%d\t%s\t%s\t%zu\t%.2f\t%.2f\t%.1f\t%.1f\t%.1f%s", count,
                           op == OP_SCAN ? "scan" : "reduce", type_name_at(ty), b.n, ts.median_ms * 1e3,
                           fastest * 1e3, gbs, sum, 100.0 * gbs / sum, stats_cells(&ts, spread, sizeof spread));
                /* the small rows: sharded against single on GPU 0 */
                run_spec small = {.op = (multi_op)op, .type = (ptxkit_dtype)ty, .n = b.small, .comm = comm, .small = true};
                run_spec single = small;
                single.comm = NULL;
                time_stats ss, s1;
                double f1;
                if ((st = time_runs(g, count, &small, &b, &ss, &f1)) != PTXKIT_SUCCESS ||
                    (st = time_runs(g, 1, &single, &b, &s1, &f1)) != PTXKIT_SUCCESS) {
                    fail_line("latency rows", st);
                    break;
                }
                table_addf(lat, "%d\t%s\t%s\t%zu\t%.2f\t%.2f\t%.2f%s", count, op == OP_SCAN ? "scan" : "reduce",
                           type_name_at(ty), b.small, ss.median_ms * 1e3, s1.median_ms * 1e3,
                           (ss.median_ms - s1.median_ms) * 1e3, stats_cells(&ss, spread, sizeof spread));
            }
        }
        if (st == PTXKIT_SUCCESS) {
            run_spec r = {.op = OP_ALLREDUCE, .type = PTXKIT_FLOAT32, .n = b.allreduce_bytes / 4, .comm = comm};
            time_stats ts;
            double fastest;
            if ((st = time_runs(g, count, &r, &b, &ts, &fastest)) != PTXKIT_SUCCESS) {
                fail_line("ptxkit_comm_allreduce", st);
            } else {
                double algbw = (double)(r.n * 4) / (ts.median_ms * 1e-3) / 1e9;
                double busbw = algbw * 2.0 * (count - 1) / count;
                char spread[64];
                table_addf(ar, "%d\t%zu\t%.2f\t%.1f\t%.1f%s", count, r.n * 4, ts.median_ms * 1e3, algbw, busbw,
                           stats_cells(&ts, spread, sizeof spread));
            }
        }
        ptxkit_comm_destroy(comm);
    }
    table_print(t, common.format, stdout);
    if (common.format == OUT_TABLE) printf("\n");
    table_print(ar, common.format, stdout);
    if (common.format == OUT_TABLE) printf("\n");
    table_print(lat, common.format, stdout);
    table_free(t), table_free(ar), table_free(lat);
    for (int i = 0; i < most; i++) {
        if (!g[i].ctx) continue;
        ptxkit_memory_free(g[i].ctx, g[i].in), ptxkit_memory_free(g[i].ctx, g[i].out), ptxkit_memory_free(g[i].ctx, g[i].small_out);
        ptxkit_event_destroy(g[i].start), ptxkit_event_destroy(g[i].end);
        ptxkit_stream_destroy(g[i].stream);
        ptxkit_context_destroy(g[i].ctx);
    }
    return st == PTXKIT_SUCCESS ? 0 : 1;
}
