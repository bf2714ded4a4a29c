/* ptxkit bench copy: every vector width and load cache operator, next to
 * cuMemcpyDtoD of the same size measured in the same run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"

typedef struct copy_run {
    ptxkit_dptr dst, src;
    size_t bytes;
    ptxkit_launch_options options;
} copy_run;

static ptxkit_status run_copy(ptxkit_context *ctx, ptxkit_stream *s, void *arg) {
    copy_run *r = arg;
    return ptxkit_copy(ctx, r->dst, r->src, r->bytes, &r->options, s);
}

static void usage(FILE *out) {
    fprintf(out, "usage: ptxkit bench copy [--size BYTES]... [--path auto|jit|ptx] [--block N] [--reps N]\n"
                 "                         [--csv|--json] [--device N]\n"
                 "GB/s (bytes read + written) of ptxkit_copy for 4-, 8- and 16-byte vectors and each load cache\n"
                 "operator, and of cuMemcpyDtoD on the same buffers. Default sizes: 1 MiB, 16 MiB, 256 MiB, 1 GiB.\n");
}

int bench_copy(int argc, char **argv) {
    cli_common common;
    if (!cli_parse_common(&argc, argv, &common)) return 2;
    size_t sizes[16];
    int size_count = 0, reps = 20, block = 0;
    ptxkit_path path = PTXKIT_PATH_AUTO;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(argv[i], "--size") == 0 && i + 1 < argc && size_count < 16) {
            if (!cli_arg_size("bench copy", "--size", argv[++i], 1, (size_t)1 << 40, &sizes[size_count++])) {
                usage(stderr);
                return 2;
            }
        } else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) {
            if (!cli_arg_int("bench copy", "--reps", argv[++i], 1, 10000, &reps)) {
                usage(stderr);
                return 2;
            }
        } else if (strcmp(argv[i], "--block") == 0 && i + 1 < argc) {
            if (!cli_arg_int("bench copy", "--block", argv[++i], 0, 1024, &block)) {
                usage(stderr);
                return 2;
            }
        } else if (strcmp(argv[i], "--path") == 0 && i + 1 < argc) {
            const char *p = argv[++i];
            path = strcmp(p, "jit") == 0 ? PTXKIT_PATH_JIT : strcmp(p, "ptx") == 0 ? PTXKIT_PATH_PTX : PTXKIT_PATH_AUTO;
            if (path == PTXKIT_PATH_AUTO && strcmp(p, "auto") != 0) {
                fprintf(stderr, "ptxkit bench copy: --path takes auto, jit or ptx, not '%s'\n", p);
                usage(stderr);
                return 2;
            }
        } else {
            fprintf(stderr, "ptxkit bench copy: unexpected argument '%s'\n", argv[i]);
            usage(stderr);
            return 2;
        }
    }
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
    const char *headers[] = {"bytes", "variant", "load_op", "time_us", "GBps", "pct_of_dtod"};
    cli_table *t = table_new(title, 6, headers);
    table_types(t, "nssnnn");
    ptxkit_status st = PTXKIT_SUCCESS;
    for (int s = 0; s < size_count && st == PTXKIT_SUCCESS; s++) {
        copy_run r = {.bytes = sizes[s]};
        st = ptxkit_malloc(ctx, r.bytes, &r.src);
        if (st == PTXKIT_SUCCESS) st = ptxkit_malloc(ctx, r.bytes, &r.dst);
        if (st == PTXKIT_SUCCESS) st = fill_random_words(ctx, r.src, r.bytes, 3);
        double dtod = 0;
        float ms = 0;
        if (st == PTXKIT_SUCCESS) st = measure_dtod_gbs(ctx, r.bytes, &dtod);
        if (st == PTXKIT_SUCCESS)
            table_addf(t, "%zu\tcuMemcpyDtoD\t-\t%.1f\t%.0f\t100.0", r.bytes, 2.0 * r.bytes / (dtod * 1e9) * 1e6, dtod);
        static const int widths[] = {16, 8, 4};
        for (int w = 0; w < 3 && st == PTXKIT_SUCCESS; w++)
            for (int op = 0; op < PTXKIT_LOAD_OP_COUNT && st == PTXKIT_SUCCESS; op++) {
                if (path == PTXKIT_PATH_PTX && op == PTXKIT_LOAD_DEFAULT) continue;
                r.options = (ptxkit_launch_options){.path = path, .load_op = (ptxkit_load_op)op, .block_size = block,
                                                    .vector_bytes = widths[w]};
                st = time_median_ms(ctx, run_copy, &r, 2, reps, &ms);
                if (st != PTXKIT_SUCCESS) break;
                double gbs = 2.0 * r.bytes / (ms * 1e-3) / 1e9;
                table_addf(t, "%zu\tvec%d\t%s\t%.1f\t%.0f\t%.1f", r.bytes, widths[w], ptxkit_load_op_name((ptxkit_load_op)op),
                           ms * 1e3, gbs, 100.0 * gbs / dtod);
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
