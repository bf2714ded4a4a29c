/* ptxkit bench blocks FAMILY: GB/s against block size, one curve per
 * items-per-thread value, the other parameters at the op's defaults, next
 * to a ceiling measured in the same run (the seeds' "block size effect on
 * throughput"). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "cli.h"
#include "commands.h"
#include "ptxkit.h"
#include "ptxkit_tune.h"
#include "svg.h"

#define MAX_SIZES 8

static const char blocks_usage[] =
    "usage: ptxkit bench blocks FAMILY [--variant V] [--n N]... [--svg FILE] [--csv|--json] [--json FILE] [--csv FILE]\n"
    "                          [--md FILE] [--device N]\n";

static const char blocks_help[] =
    "GB/s (bytes the operation must move) of the JIT-compiled FAMILY for every block size from 32 to the\n"
    "device maximum, one curve per items-per-thread value (copy: vectors in flight per thread;\n"
    "reduce and scan: vector loads in flight; transpose: elements per thread, so block x items is the tile, and\n"
    "only square tiles exist), the other parameters at the built-in defaults; each variant checked against the\n"
    "defaults' output. The ceiling beside it: a streaming read (reduce, scan) or cuMemcpyDtoD (copy, transpose)\n"
    "of the same bytes. N counts bytes for copy (default 2^30), elements for the others (reduce and scan\n"
    "default 2^28; transpose 2^26, one square-ish matrix of the variant's shape class: see src/tune/params.c).\n"
    "One row per block size and items-per-thread value that can run: GB/s from the median of the tuner's timed\n"
    "batches of back-to-back calls, with the batch count and the fastest and slowest batch's time per call.\n";

static void list_families(FILE *out) {
    fprintf(out, "families:");
    for (int i = 0; ptxkit_tune_blocks_family_get(i); i++) fprintf(out, " %s", ptxkit_tune_blocks_family_get(i));
    fputc('\n', out);
}

/* A family and its parsed variant (info.copies: the family reads and
 * writes its bytes, so its ceiling is a copy). */
typedef struct blocks_variant {
    const char *family;
    ptxkit_tune_blocks_variant info;
} blocks_variant;

static bool copies(const blocks_variant *v) { return v->info.copies != 0; }

/* floor(log2 n): the tuner's size bucket. */
static int log2_floor(size_t n) {
    int b = 0;
    while (n > 1) {
        n >>= 1;
        b++;
    }
    return b;
}

typedef struct curve_data {
    int blocks[16], block_count;
    int items[16], item_count;
    double gbs[16][16];    /* [item][block], NaN where illegal or failed */
    ptxkit_tune_blocks_measured m[16][16];
    double default_gbs, ceiling_gbs;
    size_t n;
} curve_data;

static void on_progress(const ptxkit_tune_progress *p, void *user) {
    (void)user;
    printf("\r\033[K[bench blocks %s %s] %s %d/%d", p->family, p->variant, p->phase, p->done, p->total);
    fflush(stdout);
}

static ptxkit_status measure(ptxkit_context *ctx, const blocks_variant *v, size_t n, bool progress, curve_data *d) {
    memset(d, 0, sizeof *d);
    d->n = n;
    ptxkit_status st = ptxkit_tune_blocks_space_get(ctx, v->family, v->info.name, d->blocks, &d->block_count, d->items,
                                                   &d->item_count);
    if (st != PTXKIT_SUCCESS) return st;
    int blocks[256], items[256];
    ptxkit_tune_blocks_measured measured[256];
    int count = 0;
    for (int i = 0; i < d->item_count; i++)
        for (int b = 0; b < d->block_count; b++, count++) {
            blocks[count] = d->blocks[b];
            items[count] = d->items[i];
        }
    st = ptxkit_tune_blocks_measure(ctx, v->family, v->info.name, n, blocks, items, count, measured,
                                       &d->default_gbs, progress ? on_progress : NULL, NULL);
    if (progress) {
        printf("\r\033[K");
        fflush(stdout);
    }
    if (st != PTXKIT_SUCCESS) return st;
    for (int i = 0, k = 0; i < d->item_count; i++)
        for (int b = 0; b < d->block_count; b++, k++) {
            d->m[i][b] = measured[k];
            d->gbs[i][b] = measured[k].gbs > 0 ? measured[k].gbs : NAN;
        }
    size_t bytes = 0;
    st = ptxkit_tune_blocks_bytes_get(v->family, v->info.name, n, &bytes);
    if (st != PTXKIT_SUCCESS) return st;
    if (copies(v)) {
        st = measure_dtod_gbs(ctx, bytes, &d->ceiling_gbs);
    } else {
        st = measure_read_gbs(ctx, bytes, &d->ceiling_gbs);
    }
    return st;
}

/* One row per (block, items) cell, nvbench-style: GB/s, its share of the
 * defaults and the ceiling, and the spread of the timed batches; cells that
 * cannot exist (illegal or failed) are left out. */
static void print_table(ptxkit_context *ctx, const blocks_variant *v, const curve_data *d, out_format format) {
    char title[600];
    snprintf(title, sizeof title,
             "%s %s, n=2^%d %s on %s: GB/s by block size and items per thread (defaults %.0f GB/s; %s ceiling %.0f "
             "GB/s)",
             v->family, v->info.name, log2_floor(d->n), v->info.unit, cli_device(ctx)->name, d->default_gbs,
             copies(v) ? "cuMemcpyDtoD" : "streaming-read", d->ceiling_gbs);
    const char *headers[] = {"n", "block", "items", "GBps", "pct_defaults", "pct_ceiling", STATS_COLUMNS};
    cli_table *t = table_new(title, 9, headers);
    table_types(t, "snnnnnnnn"); /* n as 2^K */
    for (int b = 0; b < d->block_count; b++)
        for (int i = 0; i < d->item_count; i++) {
            const ptxkit_tune_blocks_measured *m = &d->m[i][b];
            if (m->gbs <= 0) continue;
            table_addf(t, "2^%d\t%d\t%d\t%.0f\t%.1f\t%.1f\t%d\t%.2f\t%.2f", log2_floor(d->n), d->blocks[b],
                       d->items[i], m->gbs, d->default_gbs > 0 ? 100 * m->gbs / d->default_gbs : 0,
                       d->ceiling_gbs > 0 ? 100 * m->gbs / d->ceiling_gbs : 0, m->samples, 1e3 * m->min_ms,
                       1e3 * m->max_ms);
        }
    table_print(t, format, stdout);
    table_free(t);
}

static int write_svg(const char *path, ptxkit_context *ctx, const blocks_variant *v, const curve_data *data, int count) {
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
        snprintf(titles[s], sizeof titles[s], "n = 2^%d %s", log2_floor(d->n), v->info.unit);
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
    snprintf(title, sizeof title, "Block size effect on throughput: %s %s on %s", v->family, v->info.name,
             cli_device(ctx)->name);
    snprintf(subtitle, sizeof subtitle, "JIT variants, other parameters at the built-in defaults; median of 5 batches");
    if (svg_save_figure(path, title, subtitle, charts, (size_t)count) != 0) {
        fprintf(stderr, "ptxkit bench blocks: cannot write %s\n", path);
        return 1;
    }
    return 0;
}

int bench_blocks(int argc, char **argv) {
    const char *variant = NULL;
    size_t sizes[MAX_SIZES];
    int size_count = 0;
    const arg_option options[] = {
        {.name = "variant", .kind = ARG_TEXT, .value = &variant},
        {.name = "n", .kind = ARG_SIZE, .value = sizes, .count = &size_count, .max = MAX_SIZES, .lo = 1, .hi = 1LL << 40},
        {0}};
    const arg_spec spec = {.command = "bench blocks", .usage = blocks_usage, .help = blocks_help,
                           .more_help = list_families, .common = ARGS_DEVICE | ARGS_TABLES | ARGS_SVG,
                           .options = options, .operands = "a FAMILY", .min_operands = 1, .max_operands = 1};
    cli_common common;
    char **operands;
    int rc = args_parse(&spec, argc, argv, &common, &operands, NULL);
    if (rc >= 0) return rc;
    const char *family = operands[0];
    blocks_variant v = {.family = family};
    ptxkit_status parsed = ptxkit_tune_blocks_variant_get(family, variant, &v.info);
    if (parsed == PTXKIT_ERROR_NOT_FOUND) {
        char names[256] = "";
        for (int i = 0; ptxkit_tune_blocks_family_get(i); i++)
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i ? ", " : "",
                     ptxkit_tune_blocks_family_get(i));
        return args_error(&spec, "no tunable family '%s' (families: %s)", family, names);
    }
    if (parsed != PTXKIT_SUCCESS) return args_error(&spec, "%s", ptxkit_last_error());
    if (!size_count) sizes[size_count++] = (size_t)1 << v.info.bench_log2;
    ptxkit_context *ctx = cli_open_context("bench blocks", common.device);
    if (!ctx) return 1;
    curve_data *data = calloc(MAX_SIZES, sizeof *data);
    ptxkit_status st = PTXKIT_SUCCESS;
    int done = 0;
    bool progress = cli_is_tty() && common.format == OUT_TABLE;
    if (!data) st = PTXKIT_ERROR_OUT_OF_MEMORY;
    for (int s = 0; s < size_count && st == PTXKIT_SUCCESS; s++) {
        st = measure(ctx, &v, sizes[s], progress, &data[s]);
        if (st == PTXKIT_SUCCESS) print_table(ctx, &v, &data[done++], common.format);
    }
    rc = st == PTXKIT_SUCCESS ? 0 : 1;
    if (st != PTXKIT_SUCCESS) cli_fail("bench blocks", ctx, st);
    if (common.svg_path && done) rc |= write_svg(common.svg_path, ctx, &v, data, done);
    free(data);
    ptxkit_context_destroy(ctx);
    return rc;
}
