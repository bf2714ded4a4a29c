/* ptxkit bench blocks FAMILY: GB/s against block size, one curve per
 * items-per-thread value, the other parameters at the op's defaults, next
 * to a ceiling measured in the same run (the seeds' "block size effect on
 * throughput"). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "runtime/runtime.h"
#include "svg.h"
#include "tune/tuner.h"

#define MAX_SIZES 8

static void usage(FILE *out) {
    fprintf(out,
            "usage: ptxkit bench blocks FAMILY [--variant V] [--n N]... [--svg FILE] [--csv|--json] [--device N]\n"
            "GB/s (bytes the operation must move) of the JIT-compiled FAMILY (copy, reduce or transpose) for every block\n"
            "size from 32 to the device maximum, one column (and curve) per items-per-thread value (copy: vectors in\n"
            "flight per thread; reduce: vector loads in flight; transpose: elements per thread, so block x items is the\n"
            "tile and most cells are '-'), the other parameters at the built-in defaults; each variant checked against\n"
            "the defaults' output. The ceiling beside it: a streaming read (reduce) or cuMemcpyDtoD (copy, transpose)\n"
            "of the same bytes. N counts bytes for copy (default 2^30), elements for reduce (default 2^28) and\n"
            "transpose (default 2^26, one square-ish matrix of the variant's shape class: see src/tune/params.c).\n");
}

static bool parse_n(const char *s, size_t *out) { return cli_parse_size(s, out) && *out > 0 && *out <= (size_t)1 << 40; }

/* Families that read and write their bytes: their ceiling is a copy. */
static bool copies(const tune_variant *v) {
    return strcmp(v->family->name, "copy") == 0 || strcmp(v->family->name, "transpose") == 0;
}

typedef struct curve_data {
    int blocks[16], block_count;
    int items[16], item_count;
    double gbs[16][16];    /* [item][block], NaN where illegal or failed */
    double default_gbs, ceiling_gbs;
    size_t n;
} curve_data;

static void on_progress(const ptxkit_tune_progress *p, void *user) {
    (void)user;
    printf("\r\033[K[bench blocks %s %s] %s %d/%d", p->family, p->variant, p->phase, p->done, p->total);
    fflush(stdout);
}

static ptxkit_status measure(ptxkit_context *ctx, const tune_variant *v, size_t n, bool progress, curve_data *d) {
    memset(d, 0, sizeof *d);
    d->n = n;
    tune_space space;
    tune_space_for(v, &ctx->info, &space);
    d->block_count = space.count[TUNE_BLOCK];
    memcpy(d->blocks, space.values[TUNE_BLOCK], sizeof d->blocks);
    d->item_count = space.count[TUNE_ITEMS];
    memcpy(d->items, space.values[TUNE_ITEMS], sizeof d->items);
    tune_config configs[256];
    double gbs[256];
    int count = 0;
    for (int i = 0; i < d->item_count; i++)
        for (int b = 0; b < d->block_count; b++)
            configs[count++] = (tune_config){d->blocks[b], d->items[i], 0, 0, PTXKIT_LOAD_DEFAULT};
    ptxkit_status st = tune_measure(ctx, v->family->name, v->name, n, configs, count, gbs, &d->default_gbs,
                                    progress ? on_progress : NULL, NULL);
    if (progress) {
        printf("\r\033[K");
        fflush(stdout);
    }
    if (st != PTXKIT_SUCCESS) return st;
    for (int i = 0, k = 0; i < d->item_count; i++)
        for (int b = 0; b < d->block_count; b++, k++) d->gbs[i][b] = gbs[k] > 0 ? gbs[k] : NAN;
    size_t bytes = v->family->in_bytes(v, n);
    if (copies(v)) {
        st = measure_dtod_gbs(ctx, bytes, &d->ceiling_gbs);
    } else {
        st = measure_read_gbs(ctx, bytes, &d->ceiling_gbs);
    }
    return st;
}

static void print_table(ptxkit_context *ctx, const tune_variant *v, const curve_data *d, out_format format) {
    char title[600];
    snprintf(title, sizeof title,
             "%s %s, n=2^%d %s on %s: GB/s by block size (columns: items per thread; defaults %.0f GB/s; %s ceiling %.0f "
             "GB/s)",
             v->family->name, v->name, tune_bucket(d->n), v->family->unit, ctx->info.name, d->default_gbs,
             copies(v) ? "cuMemcpyDtoD" : "streaming-read", d->ceiling_gbs);
    const char *headers[18];
    char names[16][24];
    headers[0] = "n";
    headers[1] = "block";
    for (int i = 0; i < d->item_count; i++) {
        snprintf(names[i], sizeof names[i], "items_%d", d->items[i]);
        headers[2 + i] = names[i];
    }
    cli_table *t = table_new(title, 2 + d->item_count, headers);
    char types[20] = "sn"; /* n as 2^K; then GB/s per items per thread */
    for (int i = 0; i < d->item_count; i++) types[2 + i] = 'n';
    types[2 + d->item_count] = 0;
    table_types(t, types);
    for (int b = 0; b < d->block_count; b++) {
        char row[1024];
        int len = snprintf(row, sizeof row, "2^%d\t%d", tune_bucket(d->n), d->blocks[b]);
        for (int i = 0; i < d->item_count && len < (int)sizeof row; i++)
            len += isnan(d->gbs[i][b]) ? snprintf(row + len, sizeof row - (size_t)len, "\t-")
                                       : snprintf(row + len, sizeof row - (size_t)len, "\t%.0f", d->gbs[i][b]);
        table_addf(t, "%s", row);
    }
    table_print(t, format, stdout);
    table_free(t);
}

static int write_svg(const char *path, ptxkit_context *ctx, const tune_variant *v, const curve_data *data, int count) {
    svg_chart charts[MAX_SIZES];
    svg_series series[MAX_SIZES][16];
    svg_reference refs[MAX_SIZES];
    char titles[MAX_SIZES][160], names[MAX_SIZES][16][32];
    double xs[MAX_SIZES][16];
    bool copy = copies(v);
    for (int s = 0; s < count; s++) {
        const curve_data *d = &data[s];
        for (int b = 0; b < d->block_count; b++) xs[s][b] = d->blocks[b];
        for (int i = 0; i < d->item_count; i++) {
            snprintf(names[s][i], sizeof names[s][i], "%d item%s per thread", d->items[i], d->items[i] == 1 ? "" : "s");
            series[s][i] = (svg_series){.name = names[s][i], .x = xs[s], .y = d->gbs[i], .count = (size_t)d->block_count};
        }
        refs[s] = (svg_reference){.label = copy ? "cuMemcpyDtoD" : "streaming read", .y = d->ceiling_gbs};
        snprintf(titles[s], sizeof titles[s], "n = 2^%d %s", tune_bucket(d->n), v->family->unit);
        charts[s] = (svg_chart){
            .kind = SVG_LINES,
            .title = titles[s],
            .x_label = "threads per block",
            .y_label = copy ? "GB/s (bytes read + written)" : "GB/s (bytes read)",
            .log_x = true,
            .series = series[s],
            .series_count = (size_t)d->item_count,
            .references = &refs[s],
            .reference_count = 1,
        };
    }
    char title[400], subtitle[200];
    snprintf(title, sizeof title, "Block size effect on throughput: %s %s on %s", v->family->name, v->name,
             ctx->info.name);
    snprintf(subtitle, sizeof subtitle, "JIT variants, other parameters at the built-in defaults; median of 5 batches");
    if (svg_save_figure(path, title, subtitle, charts, (size_t)count) != 0) {
        fprintf(stderr, "ptxkit bench blocks: cannot write %s\n", path);
        return 1;
    }
    return 0;
}

int bench_blocks(int argc, char **argv) {
    cli_common common;
    if (!cli_parse_common(&argc, argv, &common)) return 2;
    const char *family = NULL, *variant = NULL;
    size_t sizes[MAX_SIZES];
    int size_count = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(argv[i], "--variant") == 0 && i + 1 < argc) {
            variant = argv[++i];
        } else if (strcmp(argv[i], "--n") == 0 && i + 1 < argc) {
            if (size_count >= MAX_SIZES || !parse_n(argv[++i], &sizes[size_count])) {
                fprintf(stderr, "ptxkit bench blocks: --n takes up to %d sizes as N or 2^K, not '%s'\n", MAX_SIZES,
                        argv[i]);
                usage(stderr);
                return 2;
            }
            size_count++;
        } else if (argv[i][0] != '-' && !family) {
            family = argv[i];
        } else {
            fprintf(stderr, "ptxkit bench blocks: unexpected argument '%s'\n", argv[i]);
            usage(stderr);
            return 2;
        }
    }
    if (!family) {
        usage(stderr);
        return 2;
    }
    tune_variant v;
    char why[256];
    ptxkit_status st = tune_variant_parse(tune_family_find(family), variant, &v, why, sizeof why);
    if (st != PTXKIT_SUCCESS) {
        fprintf(stderr, "ptxkit bench blocks: %s\n", tune_family_find(family) ? why : "FAMILY is copy, reduce or transpose");
        usage(stderr);
        return 2;
    }
    if (!size_count) sizes[size_count++] = (size_t)1 << v.family->bench_log2;
    ptxkit_context *ctx = cli_open_context("bench blocks", common.device);
    if (!ctx) return 1;
    curve_data *data = calloc(MAX_SIZES, sizeof *data);
    int done = 0;
    bool progress = cli_is_tty() && common.format == OUT_TABLE;
    if (!data) st = PTXKIT_ERROR_OUT_OF_MEMORY;
    for (int s = 0; s < size_count && st == PTXKIT_SUCCESS; s++) {
        st = measure(ctx, &v, sizes[s], progress, &data[s]);
        if (st == PTXKIT_SUCCESS) print_table(ctx, &v, &data[done++], common.format);
    }
    int rc = st == PTXKIT_SUCCESS ? 0 : 1;
    if (st != PTXKIT_SUCCESS) cli_fail("bench blocks", ctx, st);
    if (common.svg_path && done) rc |= write_svg(common.svg_path, ctx, &v, data, done);
    free(data);
    ptxkit_context_close(ctx);
    return rc;
}
