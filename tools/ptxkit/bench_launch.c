/* ptxkit bench launch: what ptxkit_kernel_launch costs over cuLaunchKernel on the
 * same CUfunction and stream. An empty user kernel (one int argument) is
 * launched back to back N times by each side, in rounds that alternate
 * which side goes first.
 *
 * The figure is host time inside the launch calls. Launches are issued in
 * batches with a stream synchronize between batches, outside the timed
 * part: an empty kernel runs about as fast as it is launched, so without
 * the pauses the launch queue fills, every call waits for the GPU, and both
 * sides measure the GPU's rate instead of their own cost. The wall time
 * including the synchronizations is reported beside it.
 *
 * ptxkit_kernel_launch is timed twice: with the context already current on the
 * thread (as for the raw call, which needs it) and without, as a program
 * that only uses ptxkit runs it (ptxkit_kernel_launch then pushes and pops the
 * context around the call). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "cli.h"
#include "commands.h"
#include "cuda_direct.h"
#include "ptxkit.h"
#include "ptxkit_ops.h"

static const char empty_source[] = "extern \"C\" __global__ void empty(int x) { (void)x; }\n";

typedef enum launch_side { RAW = 0, PTXKIT_CURRENT, PTXKIT_PLAIN, SIDE_COUNT } launch_side;

static const char *const side_names[SIDE_COUNT] = {
    "cuLaunchKernel (context current)",
    "ptxkit_kernel_launch (context current)",
    "ptxkit_kernel_launch (no current context)",
};

typedef struct launch_bench {
    ptxkit_context *ctx;
    const cuda_direct *cu;   /* the raw side's driver calls */
    char why[256];           /* the raw side's failure (ptxkit records its own) */
    ptxkit_kernel *kernel;
    CUfunction fn;
    ptxkit_stream *stream;
    CUstream cu_stream;
    void *args[1];
    int value;
} launch_bench;

/* A failed raw driver call: its name kept for the failure message. */
static ptxkit_status raw_failed(launch_bench *b, CUresult r, const char *call) {
    const char *name = NULL;
    if (b->cu->error_name(r, &name) != CUDA_SUCCESS || !name) name = "unknown error";
    snprintf(b->why, sizeof b->why, "%s: %s (%d)", call, name, (int)r);
    return PTXKIT_ERROR_LAUNCH;
}

static ptxkit_status sync_stream(launch_bench *b, launch_side side) {
    if (side == PTXKIT_PLAIN) return ptxkit_stream_synchronize(b->ctx, b->stream);
    CUresult r = b->cu->stream_synchronize(b->cu_stream);
    return r == CUDA_SUCCESS ? PTXKIT_SUCCESS : raw_failed(b, r, "cuStreamSynchronize");
}

/* `launches` launches of one side in batches; *host_us: microseconds per
 * launch inside the calls, *wall_us: per launch with the synchronizations. */
static ptxkit_status time_side(launch_bench *b, launch_side side, long launches, long batch, double *host_us,
                               double *wall_us) {
    const ptxkit_dim3 grid = {1, 1, 1}, block = {32, 1, 1};
    const cuda_direct *cu = b->cu;
    ptxkit_status st = PTXKIT_SUCCESS;
    if (side != PTXKIT_PLAIN && (st = ptxkit_context_enter(b->ctx)) != PTXKIT_SUCCESS) return st;
    double inside = 0, t_wall = cli_now_ms();
    for (long done = 0; done < launches && st == PTXKIT_SUCCESS;) {
        long count = launches - done < batch ? launches - done : batch;
        CUresult r = CUDA_SUCCESS;
        double t0 = cli_now_ms();
        if (side == RAW) {
            for (long i = 0; i < count && r == CUDA_SUCCESS; i++)
                r = cu->launch_kernel(b->fn, 1, 1, 1, 32, 1, 1, 0, b->cu_stream, b->args, NULL);
        } else {
            for (long i = 0; i < count && st == PTXKIT_SUCCESS; i++)
                st = ptxkit_kernel_launch(b->kernel, grid, block, 0, b->stream, b->args);
        }
        inside += cli_now_ms() - t0;
        if (r != CUDA_SUCCESS) st = raw_failed(b, r, "cuLaunchKernel");
        if (st == PTXKIT_SUCCESS) st = sync_stream(b, side);
        done += count;
    }
    double wall = cli_now_ms() - t_wall;
    if (side != PTXKIT_PLAIN) ptxkit_context_leave(b->ctx);
    *host_us = inside * 1e3 / (double)launches;
    *wall_us = wall * 1e3 / (double)launches;
    return st;
}

/* launch + synchronize, `reps` times: the raw driver calls (context
 * current) or ptxkit's (as an application calls them). */
static ptxkit_status time_round_trip(launch_bench *b, bool raw, long reps, double *us) {
    const cuda_direct *cu = b->cu;
    ptxkit_status st = PTXKIT_SUCCESS;
    if (raw && (st = ptxkit_context_enter(b->ctx)) != PTXKIT_SUCCESS) return st;
    double t0 = cli_now_ms();
    for (long i = 0; i < reps && st == PTXKIT_SUCCESS; i++) {
        if (raw) {
            CUresult r = cu->launch_kernel(b->fn, 1, 1, 1, 32, 1, 1, 0, b->cu_stream, b->args, NULL);
            if (r == CUDA_SUCCESS) r = cu->stream_synchronize(b->cu_stream);
            if (r != CUDA_SUCCESS) st = raw_failed(b, r, "launch + synchronize");
        } else {
            st = ptxkit_kernel_launch(b->kernel, (ptxkit_dim3){1, 1, 1}, (ptxkit_dim3){32, 1, 1}, 0, b->stream, b->args);
            if (st == PTXKIT_SUCCESS) st = ptxkit_stream_synchronize(b->ctx, b->stream);
        }
    }
    *us = (cli_now_ms() - t0) * 1e3 / (double)reps;
    if (raw) ptxkit_context_leave(b->ctx);
    return st;
}

static int compare_doubles(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* of at most 256 values (rounds of bench launch and bench graph) */
static double median(const double *values, int count) {
    double sorted[256];
    memcpy(sorted, values, (size_t)count * sizeof *sorted);
    qsort(sorted, (size_t)count, sizeof *sorted, compare_doubles);
    return count % 2 ? sorted[count / 2] : (sorted[count / 2 - 1] + sorted[count / 2]) / 2;
}

static double minimum(const double *v, int n) {
    double m = v[0];
    for (int i = 1; i < n; i++) m = v[i] < m ? v[i] : m;
    return m;
}

static double maximum(const double *v, int n) {
    double m = v[0];
    for (int i = 1; i < n; i++) m = v[i] > m ? v[i] : m;
    return m;
}

int bench_launch(int argc, char **argv) {
    int launches = 100000, rounds = 5, batch = 1000, reps = 10000;
    const arg_option options[] = {
        {.name = "launches", .kind = ARG_INT, .value = &launches, .lo = 1, .hi = 100000000},
        {.name = "rounds", .kind = ARG_INT, .value = &rounds, .lo = 1, .hi = 64},
        {.name = "batch", .kind = ARG_INT, .value = &batch, .lo = 1, .hi = 100000000},
        {.name = "round-trips", .kind = ARG_INT, .value = &reps, .lo = 1, .hi = 10000000},
        {0}};
    const arg_spec spec = {
        .command = "bench launch",
        .usage = "usage: ptxkit bench launch [--launches N] [--rounds R] [--batch B] [--round-trips M] [--device N]\n"
                 "                           [--csv|--json] [--json FILE] [--csv FILE] [--md FILE]\n",
        .help = "Back-to-back launches of an empty user kernel: ptxkit_kernel_launch against cuLaunchKernel on the same\n"
                "CUfunction and stream, N launches per side and round (default 100000), R rounds alternating\n"
                "the order (default 5), a stream synchronize every B launches outside the timed calls (default\n"
                "1000); then M launch + synchronize round trips per side and round (default 10000).\n"
                "Reports the median over rounds of microseconds per launch (samples: the rounds; min and max\n"
                "of them), and the median of each round's difference from the raw call.\n",
        .common = ARGS_DEVICE | ARGS_TABLES,
        .options = options,
    };
    cli_common common;
    int rc = args_parse(&spec, argc, argv, &common, NULL, NULL);
    if (rc >= 0) return rc;
    ptxkit_context *ctx = cli_open_context("bench launch", common.device);
    if (!ctx) return 1;
    launch_bench b = {.ctx = ctx};
    b.args[0] = &b.value;
    ptxkit_program *program = NULL;
    ptxkit_status st = ptxkit_program_create("empty.cu", empty_source, NULL, 0, &program);
    if (st == PTXKIT_SUCCESS) st = ptxkit_program_kernel_get(ctx, program, "empty", NULL, 0, &b.kernel);
    if (st == PTXKIT_SUCCESS) st = ptxkit_stream_create(ctx, PTXKIT_STREAM_NON_BLOCKING, 0, &b.stream);
    char why[256] = "";
    if (st == PTXKIT_SUCCESS && !(b.cu = cuda_direct_get(why, sizeof why))) {
        snprintf(b.why, sizeof b.why, "the raw driver calls: %s", why);
        st = PTXKIT_ERROR_NO_DRIVER;
    }
    if (st == PTXKIT_SUCCESS) {
        b.fn = (CUfunction)ptxkit_kernel_handle_get(b.kernel);
        b.cu_stream = (CUstream)ptxkit_stream_handle_get(b.stream);
    }
    /* warm-up: first launches pay for lazy loading and queue setup */
    double host[SIDE_COUNT][64], wall[SIDE_COUNT][64], diff[SIDE_COUNT][64], trip[2][64], ignored;
    for (int s = 0; s < SIDE_COUNT && st == PTXKIT_SUCCESS; s++)
        st = time_side(&b, (launch_side)s, batch < 1000 ? batch : 1000, batch, &ignored, &ignored);
    for (int r = 0; r < rounds && st == PTXKIT_SUCCESS; r++) {
        for (int k = 0; k < SIDE_COUNT && st == PTXKIT_SUCCESS; k++) {
            int s = r % 2 ? SIDE_COUNT - 1 - k : k;
            st = time_side(&b, (launch_side)s, launches, batch, &host[s][r], &wall[s][r]);
        }
        for (int k = 0; k < 2 && st == PTXKIT_SUCCESS; k++) {
            int raw = (r + k) % 2 == 0;
            st = time_round_trip(&b, raw, reps, &trip[raw ? 0 : 1][r]);
        }
        for (int s = 0; s < SIDE_COUNT; s++) diff[s][r] = host[s][r] - host[RAW][r];
    }
    if (st != PTXKIT_SUCCESS) {
        if (b.why[0]) fprintf(stderr, "ptxkit bench launch: %s: %s\n", ptxkit_status_string(st), b.why);
        else cli_fail("bench launch", ctx, st);
        ptxkit_stream_destroy(b.stream);
        ptxkit_program_destroy(program);
        ptxkit_context_destroy(ctx);
        return 1;
    }
    int n = (int)rounds;
    ptxkit_device_info d;
    ptxkit_device_info_get(ctx, &d);
    char title[512];
    snprintf(title, sizeof title,
             "launch cost on %s: %d back-to-back launches per side and round, %d rounds, synchronized every %d "
             "(microseconds per launch, median of rounds)",
             d.name, launches, n, batch);
    /* min and max are the spread over the rounds, the samples of the median */
    const char *headers[] = {"launch", "us_per_launch", "min_us", "max_us", "minus_raw_us", "us_per_launch_synced",
                             "samples"};
    cli_table *t = table_new(title, 7, headers);
    table_types(t, "snnnnnn");
    for (int s = 0; s < SIDE_COUNT; s++)
        table_addf(t, "%s\t%.3f\t%.3f\t%.3f\t%+.3f\t%.3f\t%d", side_names[s], median(host[s], n), minimum(host[s], n),
                   maximum(host[s], n), median(diff[s], n), median(wall[s], n), n);
    double trip_diff[64];
    for (int r = 0; r < n; r++) trip_diff[r] = trip[1][r] - trip[0][r];
    table_addf(t, "round trip: cuLaunchKernel + cuStreamSynchronize\t%.3f\t%.3f\t%.3f\t%+.3f\t-\t%d", median(trip[0], n),
               minimum(trip[0], n), maximum(trip[0], n), 0.0, n);
    table_addf(t, "round trip: ptxkit_kernel_launch + ptxkit_stream_synchronize\t%.3f\t%.3f\t%.3f\t%+.3f\t-\t%d",
               median(trip[1], n), minimum(trip[1], n), maximum(trip[1], n), median(trip_diff, n), n);
    table_print(t, common.format, stdout);
    table_free(t);
    if (common.format == OUT_TABLE)
        printf("ptxkit_kernel_launch over cuLaunchKernel: %+.3f us per launch with the context current, %+.3f us without\n",
               median(diff[PTXKIT_CURRENT], n), median(diff[PTXKIT_PLAIN], n));
    ptxkit_stream_destroy(b.stream);
    ptxkit_program_destroy(program);
    ptxkit_context_destroy(ctx);
    return 0;
}

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
    ptxkit_status st = ptxkit_memory_set32_async(b->ctx, b->out, 0xCDCDCDCDu, (size_t)b->ops, b->stream);
    if (st == PTXKIT_SUCCESS) st = ptxkit_stream_synchronize(b->ctx, b->stream);
    if (st != PTXKIT_SUCCESS) return st;
    double t0 = cli_now_ms();
    st = ptxkit_event_record(b->ctx, b->start, b->stream);
    if (st == PTXKIT_SUCCESS) st = graph ? ptxkit_graph_launch(b->ctx, graph, b->stream) : issue(b);
    if (st == PTXKIT_SUCCESS) st = ptxkit_event_record(b->ctx, b->stop, b->stream);
    if (st == PTXKIT_SUCCESS) st = ptxkit_stream_synchronize(b->ctx, b->stream);
    double t1 = cli_now_ms();
    float ms = 0;
    if (st == PTXKIT_SUCCESS) st = ptxkit_event_elapsed_ms_get(b->ctx, b->start, b->stop, &ms);
    *wall_us = (t1 - t0) * 1e3 / b->ops;
    *gpu_us = (double)ms * 1e3 / b->ops;
    return st;
}

/* Every output against the CPU; *ok false at the first wrong one. */
static ptxkit_status check(graph_bench *b, const uint32_t *host, bool *ok) {
    uint32_t *got = malloc((size_t)b->ops * 4);
    if (!got) return PTXKIT_ERROR_OUT_OF_MEMORY;
    ptxkit_status st = ptxkit_memory_read(b->ctx, got, b->out, (size_t)b->ops * 4);
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
    if (st == PTXKIT_SUCCESS) st = ptxkit_memory_alloc(ctx, total * 4, &b.in);
    if (st == PTXKIT_SUCCESS) st = ptxkit_memory_alloc(ctx, (size_t)ops * 4, &b.out);
    if (st == PTXKIT_SUCCESS) st = ptxkit_memory_write(ctx, b.in, host, total * 4);
    if (st == PTXKIT_SUCCESS) st = ptxkit_stream_create(ctx, PTXKIT_STREAM_NON_BLOCKING, 0, &b.stream);
    if (st == PTXKIT_SUCCESS) st = ptxkit_event_create(ctx, PTXKIT_EVENT_DEFAULT, &b.start);
    if (st == PTXKIT_SUCCESS) st = ptxkit_event_create(ctx, PTXKIT_EVENT_DEFAULT, &b.stop);
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
    ptxkit_graph_destroy(graph);
    ptxkit_event_destroy(b.start);
    ptxkit_event_destroy(b.stop);
    ptxkit_stream_destroy(b.stream);
    ptxkit_memory_free(ctx, b.in);
    ptxkit_memory_free(ctx, b.out);
    free(host);
    ptxkit_context_destroy(ctx);
    return rc;
}
