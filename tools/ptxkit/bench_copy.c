/* ptxkit bench copy: every vector width and load cache operator, next to
 * cuMemcpyDtoD of the same size measured in the same run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
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
    ptxkit_context *ctx = cli_open_context("bench copy", common.device);
    if (!ctx) return 1;
    ptxkit_device_info dev;
    ptxkit_device_info_get(ctx, &dev);
    char title[400];
    snprintf(title, sizeof title, "ptxkit_copy on %s (GB/s = bytes read + written per second, median of %d)", dev.name, reps);
    const char *headers[] = {"bytes", "variant", "load_op", "time_us", "GBps", "pct_of_dtod", STATS_COLUMNS,
                             CONFIG_SOURCE_COLUMN};
    cli_table *t = table_new(title, 10, headers);
    table_types(t, "nssnnn" STATS_TYPES "s");
    ptxkit_status st = PTXKIT_SUCCESS;
    for (int s = 0; s < size_count && st == PTXKIT_SUCCESS; s++) {
        copy_run r = {.bytes = sizes[s]};
        st = ptxkit_malloc(ctx, r.bytes, &r.src);
        if (st == PTXKIT_SUCCESS) st = ptxkit_malloc(ctx, r.bytes, &r.dst);
        if (st == PTXKIT_SUCCESS) st = fill_random_words(ctx, r.src, r.bytes, 3);
        double dtod = 0;
        time_stats ts;
        char spread[64];
        if (st == PTXKIT_SUCCESS) st = measure_dtod_stats(ctx, r.bytes, &dtod, &ts);
        if (st == PTXKIT_SUCCESS)
            table_addf(t, "%zu\tcuMemcpyDtoD\t-\t%.1f\t%.0f\t100.0%s\t-", r.bytes, ts.median_ms * 1e3, dtod,
                       stats_cells(&ts, spread, sizeof spread)); /* not ptxkit's: no configuration */
        static const int widths[] = {16, 8, 4};
        for (int w = 0; w < 3 && st == PTXKIT_SUCCESS; w++)
            for (int op = 0; op < PTXKIT_LOAD_OP_COUNT && st == PTXKIT_SUCCESS; op++) {
                if (path == PTXKIT_PATH_PTX && op == PTXKIT_LOAD_DEFAULT) continue;
                r.options = (cli_launch){.path = path, .load_op = (ptxkit_load_op)op, .block_size = block,
                                         .vector_bytes = widths[w]};
                cli_launch_config(&r.options, "unroll", &r.config);
                st = time_stats_ms(ctx, run_copy, &r, 2, reps, &ts);
                if (st != PTXKIT_SUCCESS) break;
                double ms = ts.median_ms, gbs = 2.0 * r.bytes / (ms * 1e-3) / 1e9;
                table_addf(t, "%zu\tvec%d\t%s\t%.1f\t%.0f\t%.1f%s\t%s", r.bytes, widths[w],
                           ptxkit_load_op_name((ptxkit_load_op)op), ms * 1e3, gbs, 100.0 * gbs / dtod,
                           stats_cells(&ts, spread, sizeof spread),
                           config_source(ctx, "copy", "bytes", r.bytes, &r.config));
            }
        ptxkit_free(ctx, r.src);
        ptxkit_free(ctx, r.dst);
    }
    if (st != PTXKIT_SUCCESS) cli_fail("bench copy", ctx, st);
    table_print(t, common.format, stdout);
    table_free(t);
    ptxkit_context_close(ctx);
    return st == PTXKIT_SUCCESS ? 0 : 1;
}
