/* ptxkit bench launch: what ptxkit_launch costs over cuLaunchKernel on the
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
 * ptxkit_launch is timed twice: with the context already current on the
 * thread (as for the raw call, which needs it) and without, as a program
 * that only uses ptxkit runs it (ptxkit_launch then pushes and pops the
 * context around the call). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "cli.h"
#include "commands.h"
#include "cuda_direct.h"

static const char empty_source[] = "extern \"C\" __global__ void empty(int x) { (void)x; }\n";

typedef enum launch_side { RAW = 0, PTXKIT_CURRENT, PTXKIT_PLAIN, SIDE_COUNT } launch_side;

static const char *const side_names[SIDE_COUNT] = {
    "cuLaunchKernel (context current)",
    "ptxkit_launch (context current)",
    "ptxkit_launch (no current context)",
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
                st = ptxkit_launch(b->kernel, grid, block, 0, b->stream, b->args);
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
            st = ptxkit_launch(b->kernel, (ptxkit_dim3){1, 1, 1}, (ptxkit_dim3){32, 1, 1}, 0, b->stream, b->args);
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

static double median(const double *values, int count) {
    double sorted[64];
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
        .help = "Back-to-back launches of an empty user kernel: ptxkit_launch against cuLaunchKernel on the same\n"
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
    if (st == PTXKIT_SUCCESS) st = ptxkit_kernel_get(ctx, program, "empty", NULL, 0, &b.kernel);
    if (st == PTXKIT_SUCCESS) st = ptxkit_stream_create(ctx, &b.stream);
    char why[256] = "";
    if (st == PTXKIT_SUCCESS && !(b.cu = cuda_direct_get(why, sizeof why))) {
        snprintf(b.why, sizeof b.why, "the raw driver calls: %s", why);
        st = PTXKIT_ERROR_NO_DRIVER;
    }
    if (st == PTXKIT_SUCCESS) {
        b.fn = (CUfunction)ptxkit_kernel_handle(b.kernel);
        b.cu_stream = (CUstream)ptxkit_stream_handle(b.stream);
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
        ptxkit_stream_destroy(ctx, b.stream);
        ptxkit_program_destroy(program);
        ptxkit_context_close(ctx);
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
    table_addf(t, "round trip: ptxkit_launch + ptxkit_stream_synchronize\t%.3f\t%.3f\t%.3f\t%+.3f\t-\t%d",
               median(trip[1], n), minimum(trip[1], n), maximum(trip[1], n), median(trip_diff, n), n);
    table_print(t, common.format, stdout);
    table_free(t);
    if (common.format == OUT_TABLE)
        printf("ptxkit_launch over cuLaunchKernel: %+.3f us per launch with the context current, %+.3f us without\n",
               median(diff[PTXKIT_CURRENT], n), median(diff[PTXKIT_PLAIN], n));
    ptxkit_stream_destroy(ctx, b.stream);
    ptxkit_program_destroy(program);
    ptxkit_context_close(ctx);
    return 0;
}
