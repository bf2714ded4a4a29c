/* ptxkit bench copy: every vector width and load cache operator, next to
 * cuMemcpyDtoD of the same size measured in the same run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptxkit_ops.h"
#include "args.h"
#include "bench_harness.h"
#include "cli.h"
#include "commands.h"

typedef struct copy_run {
    ptxkit_dptr dst, src;
    size_t bytes;
    cli_launch options;
    ptxkit_config config; /* options as ptxkit_copy reads them */
} copy_run;

static ptxkit_status run_copy(ptxkit_context *ctx, ptxkit_stream *s, void *arg) {
    copy_run *r = arg;
    return ptxkit_copy(ctx, r->dst, r->src, r->bytes, &r->config, s);
}

static ptxkit_status copy_source(bench *b, void *arg, bench_result *out) {
    copy_run *r = arg;
    snprintf(out->cells, sizeof out->cells, "%s", config_source(b->ctx, "copy", "bytes", r->bytes, &r->config));
    return PTXKIT_SUCCESS;
}

int bench_copy(int argc, char **argv) {
    size_t sizes[16];
    int size_count = 0, reps = 20, block = 0;
    ptxkit_path path = PTXKIT_PATH_AUTO;
    const arg_option options[] = {
        {.name = "size", .kind = ARG_SIZE, .value = sizes, .count = &size_count, .max = 16, .lo = 1, .hi = 1LL << 40},
        {.name = "path", .kind = ARG_PARSE, .value = &path, .parse = args_path},
        {.name = "block", .kind = ARG_PARSE, .value = &block, .parse = args_block_size},
        {.name = "reps", .kind = ARG_INT, .value = &reps, .lo = 1, .hi = 10000},
        {0}};
    const arg_spec spec = {
        .command = "bench copy",
        .usage = "usage: ptxkit bench copy [--size BYTES]... [--path auto|jit|ptx] [--block N] [--reps N]\n"
                 "                         [--csv|--json] [--json FILE] [--csv FILE] [--md FILE] [--device N]\n",
        .help = "GB/s (bytes read + written) of ptxkit_copy for 4-, 8- and 16-byte vectors and each load cache\n"
                "operator, and of cuMemcpyDtoD on the same buffers. Default sizes: 1 MiB, 16 MiB, 256 MiB, 1 GiB.\n"
                "Each row gives the median time of --reps timed runs, their count and the fastest and slowest.\n",
        .common = ARGS_DEVICE | ARGS_TABLES,
        .options = options,
    };
    cli_common common;
    int rc = args_parse(&spec, argc, argv, &common, NULL, NULL);
    if (rc >= 0) return rc;
    if (!size_count) {
        sizes[size_count++] = 1u << 20;
        sizes[size_count++] = 16u << 20;
        sizes[size_count++] = 256u << 20;
        sizes[size_count++] = 1u << 30;
    }
    bench h;
    ptxkit_device_info dev;
    if (!bench_begin(&h, "bench copy", &common, 2, reps, 0, NULL, &dev)) return 1;
    ptxkit_context *ctx = h.ctx;
    char title[400];
    snprintf(title, sizeof title, "ptxkit_copy on %s (GB/s = bytes read + written per second, median of %d)", dev.name, reps);
    const bench_column columns[] = {
        COL_TEXT("bytes", "n"), COL_TEXT("variant", "s"), COL_TEXT("load_op", "s"), COL("time_us", BENCH_TIME_US, "%.1f"),
        COL("GBps", BENCH_RATE, "%.0f"), COL("pct_of_dtod", BENCH_PERCENT, "%.1f"), COL_STATS,
        COL_TEXT(CONFIG_SOURCE_COLUMN, "s")};
    bench_table(&h, title, columns, sizeof columns / sizeof columns[0]);
    ptxkit_status st = PTXKIT_SUCCESS;
    for (int s = 0; s < size_count && st == PTXKIT_SUCCESS; s++) {
        copy_run r = {.bytes = sizes[s]};
        st = ptxkit_memory_alloc(ctx, r.bytes, &r.src);
        if (st == PTXKIT_SUCCESS) st = ptxkit_memory_alloc(ctx, r.bytes, &r.dst);
        if (st == PTXKIT_SUCCESS) st = fill_random_words(ctx, r.src, r.bytes, 3);
        double dtod = 0;
        char key[128];
        /* the peer, on buffers of its own: a row of the same columns, not ptxkit's (no configuration) */
        bench_result peer = {.timed = true, .cells = "-"};
        if (st == PTXKIT_SUCCESS) st = measure_dtod_stats(ctx, r.bytes, &dtod, &peer.ts);
        if (st == PTXKIT_SUCCESS) {
            peer.rate = peer.ceiling = dtod;
            snprintf(key, sizeof key, "%zu\tcuMemcpyDtoD\t-", r.bytes);
            bench_row(&h, key, &peer);
        }
        static const int widths[] = {16, 8, 4};
        for (int w = 0; w < 3 && st == PTXKIT_SUCCESS; w++)
            for (int op = 0; op < PTXKIT_LOAD_OP_COUNT && st == PTXKIT_SUCCESS; op++) {
                if (path == PTXKIT_PATH_PTX && op == PTXKIT_LOAD_DEFAULT) continue;
                r.options = (cli_launch){.path = path, .load_op = (ptxkit_load_op)op, .block_size = block,
                                         .vector_bytes = widths[w]};
                cli_launch_config(&r.options, "unroll", &r.config);
                snprintf(key, sizeof key, "%zu\tvec%d\t%s", r.bytes, widths[w], ptxkit_load_op_name((ptxkit_load_op)op));
                bench_case c = {.key = key, .run = run_copy, .teardown = copy_source, .arg = &r,
                                .work = 2.0 * r.bytes, .ceiling = dtod};
                st = bench_run(&h, st, &c, NULL);
            }
        ptxkit_memory_free(ctx, r.src);
        ptxkit_memory_free(ctx, r.dst);
    }
    rc = bench_print(&h, st);
    ptxkit_context_destroy(ctx);
    return rc;
}

/* ptxkit bench host: the host-array calls (ptxkit_host_reduce/_scan/_transform)
 * next to the bus measured in the same run: pinned 1 GiB H2D, D2H, both at
 * once on two streams, and the driver's own pageable cuMemcpyHtoD of the
 * same size (ptxkit_memory_write from malloc'd memory). Here rather than in
 * a file of its own to keep the default build's step count. Times are wall
 * clock around synchronous calls (the host-array calls return with the
 * result), median of --reps. */
typedef struct host_bench {
    ptxkit_context *ctx;
    ptxkit_stream *s1, *s2;
    ptxkit_dptr dev;
    unsigned char *pinned, *pageable;
    size_t bytes;
    int which;              /* the case being timed */
    ptxkit_host_options options;
    int32_t result;
} host_bench;

enum { HOST_H2D, HOST_D2H, HOST_BOTH, HOST_PAGEABLE_COPY, HOST_REDUCE_PINNED, HOST_REDUCE_PAGEABLE,
       HOST_TRANSFORM, HOST_REDUCE_MAPPED, HOST_SCAN };

static ptxkit_status host_case(host_bench *b) {
    ptxkit_context *ctx = b->ctx;
    ptxkit_status st = PTXKIT_SUCCESS;
    size_t n = b->bytes / 4;
    switch (b->which) {
    case HOST_H2D:
        st = ptxkit_memory_write_async(ctx, b->dev, b->pinned, b->bytes, b->s1);
        return st ? st : ptxkit_stream_synchronize(ctx, b->s1);
    case HOST_D2H:
        st = ptxkit_memory_read_async(ctx, b->pinned, b->dev, b->bytes, b->s1);
        return st ? st : ptxkit_stream_synchronize(ctx, b->s1);
    case HOST_BOTH: /* half the device buffer each way, from and to separate pinned halves */
        st = ptxkit_memory_write_async(ctx, b->dev, b->pinned, b->bytes, b->s1);
        if (!st) st = ptxkit_memory_read_async(ctx, b->pinned + b->bytes, b->dev + b->bytes, b->bytes, b->s2);
        if (!st) st = ptxkit_stream_synchronize(ctx, b->s1);
        return st ? st : ptxkit_stream_synchronize(ctx, b->s2);
    case HOST_PAGEABLE_COPY: return ptxkit_memory_write(ctx, b->dev, b->pageable, b->bytes);
    case HOST_REDUCE_PINNED:
    case HOST_REDUCE_MAPPED:
        return ptxkit_host_reduce(ctx, PTXKIT_REDUCE_SUM, PTXKIT_INT32, &b->result, b->pinned, n, &b->options);
    case HOST_REDUCE_PAGEABLE:
        return ptxkit_host_reduce(ctx, PTXKIT_REDUCE_SUM, PTXKIT_INT32, &b->result, b->pageable, n, &b->options);
    case HOST_SCAN:
        return ptxkit_host_scan(ctx, PTXKIT_SCAN_INCLUSIVE, PTXKIT_REDUCE_SUM, PTXKIT_INT32, b->pinned + b->bytes,
                                b->pinned, n, &b->options);
    default: return ptxkit_host_transform(ctx, NULL, PTXKIT_INT32, b->pinned + b->bytes, b->pinned, n, &b->options);
    }
}

static ptxkit_status host_time(host_bench *b, int reps, time_stats *ts) {
    float samples[64];
    if (reps > 64) reps = 64;
    ptxkit_status st = host_case(b); /* warm-up: kernels loaded, the ring allocated */
    for (int r = 0; r < reps && st == PTXKIT_SUCCESS; r++) {
        double t0 = cli_now_ms();
        st = host_case(b);
        samples[r] = (float)(cli_now_ms() - t0);
    }
    if (st == PTXKIT_SUCCESS) stats_of_samples(samples, reps, ts);
    return st;
}

int bench_host(int argc, char **argv) {
    size_t reduce_sizes[8], transform_sizes[8], chunk = 0;
    int reduce_count = 0, transform_count = 0, reps = 5, threads = 0, streams = 0;
    const arg_option options[] = {
        {.name = "log2", .kind = ARG_LOG2S, .value = reduce_sizes, .count = &reduce_count, .max = 8, .lo = 12, .hi = 36},
        {.name = "transform-log2", .kind = ARG_LOG2S, .value = transform_sizes, .count = &transform_count, .max = 8,
         .lo = 12, .hi = 34},
        {.name = "chunk", .kind = ARG_SIZE, .value = &chunk, .lo = 64 << 10, .hi = 1 << 30},
        {.name = "streams", .kind = ARG_INT, .value = &streams, .lo = 1, .hi = PTXKIT_HOST_MAX_STREAMS},
        {.name = "threads", .kind = ARG_INT, .value = &threads, .lo = 1, .hi = PTXKIT_HOST_MAX_THREADS},
        {.name = "reps", .kind = ARG_INT, .value = &reps, .lo = 1, .hi = 64},
        {0}};
    const arg_spec spec = {
        .command = "bench host",
        .usage = "usage: ptxkit bench host [--log2 K,...] [--transform-log2 K,...] [--chunk BYTES] [--streams N]\n"
                 "                         [--threads N] [--reps N] [--csv|--json] [--json FILE] [--csv FILE]\n"
                 "                         [--md FILE] [--device N]\n",
        .help = "Host arrays (ptxkit_host_reduce, _scan, _transform) against the bus in the same run: pinned\n"
                "1 GiB H2D, D2H and both at once (two streams), the driver's pageable cuMemcpyHtoD; then an int32\n"
                "sum of 2^K bytes of pinned memory (percent of pinned H2D), of pageable memory on each path\n"
                "(ratio to the driver's pageable copy), mapped zero-copy, and the copy round trip and the\n"
                "inclusive int32 scan of 2^K bytes host -> device -> host (percent of both directions).\n"
                "Defaults: --log2 33, --transform-log2 30 (the round trip's and the scan's size);\n"
                "chunk, streams and threads: the library's defaults. Median wall time of --reps calls.\n",
        .common = ARGS_DEVICE | ARGS_TABLES,
        .options = options,
    };
    cli_common common;
    int rc = args_parse(&spec, argc, argv, &common, NULL, NULL);
    if (rc >= 0) return rc;
    if (!reduce_count) reduce_sizes[reduce_count++] = (size_t)1 << 33;
    if (!transform_count) transform_sizes[transform_count++] = (size_t)1 << 30;
    size_t copy_bytes = (size_t)1 << 30, pinned_bytes = 2 * copy_bytes, pageable_bytes = copy_bytes;
    for (int i = 0; i < reduce_count; i++) {
        if (reduce_sizes[i] > pinned_bytes) pinned_bytes = reduce_sizes[i];
        if (reduce_sizes[i] > pageable_bytes) pageable_bytes = reduce_sizes[i];
    }
    for (int i = 0; i < transform_count; i++)
        if (2 * transform_sizes[i] > pinned_bytes) pinned_bytes = 2 * transform_sizes[i];
    ptxkit_context *ctx = cli_open_context("bench host", common.device);
    if (!ctx) return 1;
    const ptxkit_device_info *dev = cli_device(ctx);
    char title[400];
    snprintf(title, sizeof title, "host arrays on %s (GB/s of host data; median of %d)", dev->name, reps);
    const char *headers[] = {"case", "bytes", "path", "time_us", "GBps", "reference", "of_reference", "target",
                             STATS_COLUMNS};
    cli_table *t = table_new(title, 11, headers);
    table_types(t, "snsnnsnn" STATS_TYPES);
    host_bench b = {.ctx = ctx, .options = {.chunk_bytes = chunk, .streams = streams, .threads = threads}};
    ptxkit_status st = ptxkit_stream_create(ctx, PTXKIT_STREAM_NON_BLOCKING, 0, &b.s1);
    if (!st) st = ptxkit_stream_create(ctx, PTXKIT_STREAM_NON_BLOCKING, 0, &b.s2);
    if (!st) st = ptxkit_memory_alloc(ctx, 2 * copy_bytes, &b.dev);
    if (!st) st = ptxkit_host_alloc(ctx, pinned_bytes, PTXKIT_HOST_MAPPED, (void **)&b.pinned);
    if (!st && !(b.pageable = malloc(pageable_bytes))) st = PTXKIT_ERROR_OUT_OF_MEMORY;
    if (!st) {
        /* touched, so the first timed copy does not fault pages in */
        memset(b.pinned, 1, pinned_bytes);
        memset(b.pageable, 1, pageable_bytes);
    }
    double h2d = 0, both = 0, pageable = 0;
    time_stats ts;
    char spread[64];
    static const struct { int which; const char *name; } bus[] = {
        {HOST_H2D, "pinned H2D"}, {HOST_D2H, "pinned D2H"}, {HOST_BOTH, "pinned both directions"},
        {HOST_PAGEABLE_COPY, "pageable cuMemcpyHtoD"}};
    for (size_t i = 0; i < sizeof bus / sizeof bus[0] && !st; i++) {
        b.which = bus[i].which;
        b.bytes = copy_bytes;
        if ((st = host_time(&b, reps, &ts)) != PTXKIT_SUCCESS) break;
        double moved = (double)copy_bytes * (b.which == HOST_BOTH ? 2 : 1), gbs = moved / (ts.median_ms * 1e6);
        if (b.which == HOST_H2D) h2d = gbs;
        if (b.which == HOST_BOTH) both = gbs;
        if (b.which == HOST_PAGEABLE_COPY) pageable = gbs;
        table_addf(t, "%s\t%zu\t-\t%.1f\t%.1f\t-\t-\t-%s", bus[i].name, copy_bytes, ts.median_ms * 1e3, gbs,
                   stats_cells(&ts, spread, sizeof spread));
    }
    for (int i = 0; i < reduce_count && !st; i++) {
        b.bytes = reduce_sizes[i];
        struct { int which; ptxkit_host_path path; const char *name; } rows[] = {
            {HOST_REDUCE_PINNED, PTXKIT_HOST_PATH_AUTO, "reduce pinned"},
            {HOST_REDUCE_PAGEABLE, PTXKIT_HOST_PATH_AUTO, "reduce pageable"},
            {HOST_REDUCE_PAGEABLE, PTXKIT_HOST_PATH_STAGED, "reduce pageable"},
            {HOST_REDUCE_PAGEABLE, PTXKIT_HOST_PATH_REGISTERED, "reduce pageable"},
            {HOST_REDUCE_MAPPED, PTXKIT_HOST_PATH_MAPPED, "reduce mapped"}};
        for (size_t r = 0; r < sizeof rows / sizeof rows[0] && !st; r++) {
            b.which = rows[r].which;
            b.options.path = rows[r].path;
            if ((st = host_time(&b, reps, &ts)) != PTXKIT_SUCCESS) break;
            double gbs = (double)b.bytes / (ts.median_ms * 1e6);
            bool vs_pageable = b.which == HOST_REDUCE_PAGEABLE;
            /* the targets: pinned 95% of H2D, pageable 3x the driver's pageable copy */
            table_addf(t, "%s\t%zu\t%s\t%.1f\t%.1f\t%s\t%.1f\t%s%s", rows[r].name, b.bytes,
                       ptxkit_host_path_name(rows[r].path), ts.median_ms * 1e3, gbs,
                       vs_pageable ? "pageable cuMemcpyHtoD" : "pinned H2D",
                       100.0 * gbs / (vs_pageable ? pageable : h2d),
                       b.which == HOST_REDUCE_PINNED ? "95" : vs_pageable ? "300" : "-",
                       stats_cells(&ts, spread, sizeof spread));
        }
    }
    /* the round trip's target is the issue's; the scan has none of its own */
    static const struct { int which; const char *name, *target; } trips[] = {
        {HOST_TRANSFORM, "transform round trip", "90"}, {HOST_SCAN, "scan inclusive sum", "-"}};
    for (int i = 0; i < transform_count && !st; i++)
        for (size_t k = 0; k < sizeof trips / sizeof trips[0] && !st; k++) {
            b.bytes = transform_sizes[i];
            b.which = trips[k].which;
            b.options.path = PTXKIT_HOST_PATH_AUTO;
            if ((st = host_time(&b, reps, &ts)) != PTXKIT_SUCCESS) break;
            double gbs = 2.0 * (double)b.bytes / (ts.median_ms * 1e6);
            table_addf(t, "%s\t%zu\tauto\t%.1f\t%.1f\tpinned both directions\t%.1f\t%s%s", trips[k].name, b.bytes,
                       ts.median_ms * 1e3, gbs, 100.0 * gbs / both, trips[k].target, stats_cells(&ts, spread, sizeof spread));
        }
    if (st != PTXKIT_SUCCESS) cli_fail("bench host", ctx, st);
    table_note(t, "of_reference: percent of the reference measured in this run; target: the issue's goal in percent");
    table_print(t, common.format, stdout);
    table_free(t);
    free(b.pageable);
    if (b.pinned) ptxkit_host_free(ctx, b.pinned);
    if (b.dev) ptxkit_memory_free(ctx, b.dev);
    ptxkit_stream_destroy(b.s1);
    ptxkit_stream_destroy(b.s2);
    ptxkit_context_destroy(ctx);
    return st == PTXKIT_SUCCESS ? 0 : 1;
}
