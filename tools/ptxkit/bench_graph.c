/* ptxkit bench graph: many small operations launched one by one against
 * the same operations captured once into a CUDA graph and replayed
 * (ptxkit_graph). The operation is a small uint32 sum (ptxkit_reduce), each
 * into its own output, so every result is checked against the CPU.
 *
 * The figure is wall time per operation from the first call to the end of
 * the stream synchronize after the last, which is what a program issuing
 * them waits for: one by one, each op pays ptxkit's call, the driver's
 * launch and the GPU's gap between kernels; a replay pays one launch for
 * all of them. GPU time between events recorded around the work is
 * reported beside it, and the cost of re-capturing the sequence and
 * patching the executable graph in place (ptxkit_graph_update), per op. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "cli.h"
#include "commands.h"
#include "ptxkit.h"

typedef struct graph_bench {
    ptxkit_context *ctx;
    ptxkit_stream *stream;
    ptxkit_event *start, *stop;
    ptxkit_dptr in, out;
    size_t n;   /* elements per reduction */
    int ops;    /* reductions per sequence */
} graph_bench;

static ptxkit_status issue(graph_bench *b) {
    for (int i = 0; i < b->ops; i++) {
        /* op i reduces a window starting i elements in, so results differ */
        ptxkit_status st = ptxkit_reduce(b->ctx, PTXKIT_REDUCE_SUM, PTXKIT_UINT32, b->out + (ptxkit_dptr)i * 4,
                                         b->in + (ptxkit_dptr)i * 4, b->n, NULL, b->stream);
        if (st != PTXKIT_SUCCESS) return st;
    }
    return PTXKIT_SUCCESS;
}

/* One round of one side: *wall_us and *gpu_us per op. graph NULL: one by one. */
static ptxkit_status time_round(graph_bench *b, ptxkit_graph *graph, double *wall_us, double *gpu_us) {
    ptxkit_status st = ptxkit_memset32_async(b->ctx, b->out, 0xCDCDCDCDu, (size_t)b->ops, b->stream);
    if (st == PTXKIT_SUCCESS) st = ptxkit_stream_synchronize(b->ctx, b->stream);
    if (st != PTXKIT_SUCCESS) return st;
    double t0 = cli_now_ms();
    st = ptxkit_event_record(b->ctx, b->start, b->stream);
    if (st == PTXKIT_SUCCESS) st = graph ? ptxkit_graph_launch(b->ctx, graph, b->stream) : issue(b);
    if (st == PTXKIT_SUCCESS) st = ptxkit_event_record(b->ctx, b->stop, b->stream);
    if (st == PTXKIT_SUCCESS) st = ptxkit_stream_synchronize(b->ctx, b->stream);
    double t1 = cli_now_ms();
    float ms = 0;
    if (st == PTXKIT_SUCCESS) st = ptxkit_event_elapsed_ms(b->ctx, b->start, b->stop, &ms);
    *wall_us = (t1 - t0) * 1e3 / b->ops;
    *gpu_us = (double)ms * 1e3 / b->ops;
    return st;
}

/* Every output against the CPU; *ok false at the first wrong one. */
static ptxkit_status check(graph_bench *b, const uint32_t *host, bool *ok) {
    uint32_t *got = malloc((size_t)b->ops * 4);
    if (!got) return PTXKIT_ERROR_OUT_OF_MEMORY;
    ptxkit_status st = ptxkit_memcpy_dtoh(b->ctx, got, b->out, (size_t)b->ops * 4);
    uint32_t sum = 0;
    for (size_t k = 0; k < b->n; k++) sum += host[k];
    *ok = true;
    for (int i = 0; i < b->ops && st == PTXKIT_SUCCESS; i++) {
        if (got[i] != sum) *ok = false;
        sum += host[(size_t)i + b->n] - host[i];  /* slide the window */
    }
    free(got);
    return st;
}

static int compare_doubles(const void *x, const void *y) {
    double a = *(const double *)x, c = *(const double *)y;
    return (a > c) - (a < c);
}

static double median(const double *v, int count) {
    double sorted[256];
    memcpy(sorted, v, (size_t)count * sizeof *sorted);
    qsort(sorted, (size_t)count, sizeof *sorted, compare_doubles);
    return count % 2 ? sorted[count / 2] : (sorted[count / 2 - 1] + sorted[count / 2]) / 2;
}

static double extreme(const double *v, int count, int sign) {
    double m = v[0];
    for (int i = 1; i < count; i++)
        if ((v[i] - m) * sign > 0) m = v[i];
    return m;
}

int bench_graph(int argc, char **argv) {
    int ops = 100, rounds = 21;
    size_t n = 1024;
    const arg_option options[] = {
        {.name = "ops", .kind = ARG_INT, .value = &ops, .lo = 1, .hi = 100000},
        {.name = "n", .kind = ARG_SIZE, .value = &n, .lo = 1, .hi = (size_t)1 << 28},
        {.name = "rounds", .kind = ARG_INT, .value = &rounds, .lo = 1, .hi = 256},
        {0}};
    const arg_spec spec = {
        .command = "bench graph",
        .usage = "usage: ptxkit bench graph [--ops N] [--n ELEMENTS] [--rounds R] [--device N]\n"
                 "                          [--csv|--json] [--json FILE] [--csv FILE] [--md FILE]\n",
        .help = "N small uint32 sums (ptxkit_reduce of ELEMENTS each, default 100 of 1024) on one stream, launched\n"
                "one by one against the same calls captured once into a CUDA graph (ptxkit_graph) and replayed;\n"
                "R rounds per side, alternating (default 21). Reports microseconds per op: wall time from the\n"
                "first call to the end of the stream synchronize, GPU time between events, median over rounds\n"
                "(min and max beside it), and the cost per op of re-capturing the sequence and updating the\n"
                "executable graph in place. Every round's results are checked against the CPU.\n",
        .common = ARGS_DEVICE | ARGS_TABLES,
        .options = options,
    };
    cli_common common;
    int rc = args_parse(&spec, argc, argv, &common, NULL, NULL);
    if (rc >= 0) return rc;
    ptxkit_context *ctx = cli_open_context("bench graph", common.device);
    if (!ctx) return 1;
    graph_bench b = {.ctx = ctx, .n = n, .ops = ops};
    size_t total = n + (size_t)ops;
    uint32_t *host = malloc(total * 4);
    ptxkit_graph *graph = NULL;
    ptxkit_status st = host ? PTXKIT_SUCCESS : PTXKIT_ERROR_OUT_OF_MEMORY;
    if (host)
        for (size_t i = 0; i < total; i++) host[i] = (uint32_t)(i * 2654435761u) >> 7;
    if (st == PTXKIT_SUCCESS) st = ptxkit_malloc(ctx, total * 4, &b.in);
    if (st == PTXKIT_SUCCESS) st = ptxkit_malloc(ctx, (size_t)ops * 4, &b.out);
    if (st == PTXKIT_SUCCESS) st = ptxkit_memcpy_htod(ctx, b.in, host, total * 4);
    if (st == PTXKIT_SUCCESS) st = ptxkit_stream_create(ctx, &b.stream);
    if (st == PTXKIT_SUCCESS) st = ptxkit_event_create(ctx, &b.start);
    if (st == PTXKIT_SUCCESS) st = ptxkit_event_create(ctx, &b.stop);
    /* warm-up: loads the kernel and gives the stream its scratch, which a
     * capture needs (ptxkit.h, "CUDA graph capture") */
    if (st == PTXKIT_SUCCESS) st = issue(&b);
    if (st == PTXKIT_SUCCESS) st = ptxkit_stream_synchronize(ctx, b.stream);
    if (st == PTXKIT_SUCCESS) st = ptxkit_graph_capture_begin(ctx, b.stream);
    if (st == PTXKIT_SUCCESS) {
        ptxkit_status captured = issue(&b);
        st = ptxkit_graph_capture_end(ctx, b.stream, &graph);
        if (captured != PTXKIT_SUCCESS) st = captured;
    }
    double wall[2][256], gpu[2][256], update_us[256], ignored;
    bool ok = true, round_ok;
    for (int side = 0; side < 2 && st == PTXKIT_SUCCESS; side++)
        st = time_round(&b, side ? graph : NULL, &ignored, &ignored);
    for (int r = 0; r < rounds && st == PTXKIT_SUCCESS; r++) {
        for (int k = 0; k < 2 && st == PTXKIT_SUCCESS; k++) {
            int side = (r + k) % 2;
            st = time_round(&b, side ? graph : NULL, &wall[side][r], &gpu[side][r]);
            if (st == PTXKIT_SUCCESS) st = check(&b, host, &round_ok);
            ok = ok && round_ok;
        }
        /* the same calls captured again, patched into the executable graph */
        double t0 = cli_now_ms();
        if (st == PTXKIT_SUCCESS) st = ptxkit_graph_capture_begin(ctx, b.stream);
        if (st == PTXKIT_SUCCESS) {
            ptxkit_status captured = issue(&b);
            ptxkit_graph_update_kind how = PTXKIT_GRAPH_UPDATED_IN_PLACE;
            st = ptxkit_graph_update(ctx, graph, b.stream, &how);
            if (captured != PTXKIT_SUCCESS) st = captured;
            if (how != PTXKIT_GRAPH_UPDATED_IN_PLACE) ok = false;
        }
        update_us[r] = (cli_now_ms() - t0) * 1e3 / ops;
    }
    if (st != PTXKIT_SUCCESS) {
        cli_fail("bench graph", ctx, st);
        rc = 1;
    } else {
        ptxkit_device_info d;
        ptxkit_device_info_get(ctx, &d);
        char title[512];
        snprintf(title, sizeof title,
                 "%d uint32 sums of %zu elements on %s: one by one vs one graph replay (microseconds per op, "
                 "median of %d rounds)",
                 ops, n, d.name, rounds);
        const char *headers[] = {"launch", "us_per_op_wall", "min", "max", "us_per_op_gpu", "ops", "check", "samples"};
        cli_table *t = table_new(title, 8, headers);
        table_types(t, "snnnnnsn");
        static const char *const names[2] = {"one by one (ptxkit_reduce)", "graph replay (ptxkit_graph_launch)"};
        for (int side = 0; side < 2; side++)
            table_addf(t, "%s\t%.3f\t%.3f\t%.3f\t%.3f\t%d\t%s\t%d", names[side], median(wall[side], rounds),
                       extreme(wall[side], rounds, -1), extreme(wall[side], rounds, 1), median(gpu[side], rounds),
                       ops, ok ? "ok" : "WRONG", rounds);
        table_addf(t, "capture + ptxkit_graph_update in place\t%.3f\t%.3f\t%.3f\t-\t%d\t%s\t%d",
                   median(update_us, rounds), extreme(update_us, rounds, -1), extreme(update_us, rounds, 1), ops,
                   ok ? "ok" : "WRONG", rounds);
        table_print(t, common.format, stdout);
        table_free(t);
        if (common.format == OUT_TABLE)
            printf("graph replay: %.3f us per op (one by one: %.3f)\n", median(wall[1], rounds),
                   median(wall[0], rounds));
        if (!ok) {
            fprintf(stderr, "ptxkit bench graph: wrong results (or an update that was not in place)\n");
            rc = 1;
        } else {
            rc = 0;
        }
    }
    ptxkit_graph_destroy(ctx, graph);
    ptxkit_event_destroy(ctx, b.start);
    ptxkit_event_destroy(ctx, b.stop);
    ptxkit_stream_destroy(ctx, b.stream);
    ptxkit_free(ctx, b.in);
    ptxkit_free(ctx, b.out);
    free(host);
    ptxkit_context_close(ctx);
    return rc;
}
