/* ptxkit bench constant: the constant-memory experiment. A streamed float
 * array, each element run through a polynomial whose coefficients live in
 * __constant__, in global memory (ld.global), behind ld.global.nc or in
 * shared memory, every lane of a warp reading the same coefficient
 * (uniform) or each lane its own (divergent); against the same loop as a
 * plain copy of the same bytes, measured in the same run. The kernels and
 * their arithmetic: lab/kernels/const_lab.cu (lab/constlab.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "bench_harness.h"
#include "cli.h"
#include "commands.h"
#include "constlab.h"
#include "lab.h"
#include "report.h"

/* Elements the output check covers: a prefix, so the CPU reference stays
 * cheap at any size (the offsets depend on the element index only). */
enum { CHECK_ELEMENTS = 1 << 20 };

static ptxkit_status run_poly(ptxkit_context *ctx, ptxkit_stream *s, void *arg) {
    return constlab_poly_run(ctx, arg, s);
}

static const char usage_text[] =
    "usage: ptxkit bench constant [--mib N] [--taps N] [--block N] [--reps N] [--csv|--json] [--json FILE]\n"
    "                             [--csv FILE] [--md FILE] [--device N]\n";

/* The output prefix against the CPU: "ok" or "WRONG". */
static const char *check(ptxkit_context *ctx, const constlab_poly *p, const float *in, float *want, float *got,
                         ptxkit_status *st) {
    constlab_poly prefix = *p;
    prefix.n = p->n < CHECK_ELEMENTS ? p->n : CHECK_ELEMENTS;
    *st = ptxkit_memory_read(ctx, got, p->out, prefix.n * sizeof(float));
    if (*st != PTXKIT_SUCCESS) return "-";
    constlab_reference(&prefix, in, want);
    return memcmp(got, want, prefix.n * sizeof(float)) == 0 ? "ok" : "WRONG";
}

/* A row: the kernel's arguments, the CPU's side of the check, and the
 * times the ratios refer to (each store's uniform row, the uniform
 * __constant__ row). */
typedef struct constant_row {
    constlab_poly p; /* first: the row is run_poly's argument too */
    const float *host_in;
    float *want, *got;
    const char *check;
    double constant_uniform_ms, uniform_ms[CONSTLAB_STORE_COUNT], divergent_ms[CONSTLAB_STORE_COUNT];
} constant_row;

/* NaN in every output, so an output the kernel skipped fails the check. */
static ptxkit_status poison(bench *h, void *arg) {
    constant_row *r = arg;
    return ptxkit_memory_set32_async(h->ctx, r->p.out, 0x7fc00001u, r->p.n, NULL);
}

static ptxkit_status constant_cells(bench *h, void *arg, bench_result *out) {
    constant_row *r = arg;
    ptxkit_status st = PTXKIT_SUCCESS;
    r->check = check(h->ctx, &r->p, r->host_in, r->want, r->got, &st);
    if (st != PTXKIT_SUCCESS || r->p.store == CONSTLAB_COPY) return st;
    double ms = out->ts.median_ms;
    int s = r->p.store;
    if (s == CONSTLAB_CONSTANT && !r->p.divergent) r->constant_uniform_ms = ms;
    *(r->p.divergent ? &r->divergent_ms[s] : &r->uniform_ms[s]) = ms;
    snprintf(out->cells, sizeof out->cells, "%.2f\t%.2f\t%s", ms / r->uniform_ms[s], ms / r->constant_uniform_ms,
             r->check);
    return PTXKIT_SUCCESS;
}

int bench_constant(int argc, char **argv) {
    static const char cmd[] = "bench constant";
    int mib = 256, taps = CONSTLAB_DEFAULT_TAPS, block = 0, reps = 10;
    const arg_option options[] = {
        {.name = "mib", .kind = ARG_INT, .value = &mib, .lo = 1, .hi = 1 << 16},
        {.name = "taps", .kind = ARG_INT, .value = &taps, .lo = 1, .hi = CONSTLAB_MAX_TAPS},
        {.name = "block", .kind = ARG_PARSE, .value = &block, .parse = args_block_size},
        {.name = "reps", .kind = ARG_INT, .value = &reps, .lo = 1, .hi = 10000},
        {0}};
    char help[1600];
    snprintf(help, sizeof help,
             "Constant memory against global memory, ld.global.nc and shared memory as the store of a small\n"
             "coefficient table. Each element of a float array of --mib MiB (default 256: far beyond L2) goes\n"
             "through a polynomial of --taps coefficients (default %d, at most %d) by Horner's rule; each\n"
             "coefficient is read once per 4 elements, by every lane of a warp at one address (uniform) or at\n"
             "min(32, taps) addresses (divergent). The copy row runs the same loop without coefficients: the\n"
             "ceiling. GBps counts the array read once and written once. A row's time over its store's uniform\n"
             "row's is vs_uniform, over the uniform __constant__ row's vs_constant_uniform; pct_of_copy is its\n"
             "GB/s over the copy's. The first %d outputs are checked exactly against the CPU. Median of --reps\n"
             "runs (default 10) after 2 warm-up runs, with their count, fastest and slowest.\n",
             CONSTLAB_DEFAULT_TAPS, CONSTLAB_MAX_TAPS, CHECK_ELEMENTS);
    const arg_spec spec = {.command = cmd, .usage = usage_text, .help = help,
                           .common = ARGS_DEVICE | ARGS_TABLES, .options = options};
    cli_common common;
    int rc = args_parse(&spec, argc, argv, &common, NULL, NULL);
    if (rc >= 0) return rc;
    bench h;
    ptxkit_device_info dev;
    if (!bench_begin(&h, cmd, &common, 2, reps, 0, NULL, &dev)) return 1;
    ptxkit_context *ctx = h.ctx;

    size_t n = (size_t)mib << 18, checked = n < CHECK_ELEMENTS ? n : CHECK_ELEMENTS;
    float *host_in = malloc(checked * sizeof(float)), *want = malloc(checked * sizeof(float)),
          *got = malloc(checked * sizeof(float));
    ptxkit_dptr in = 0, out = 0, table = 0;
    ptxkit_status st = host_in && want && got ? PTXKIT_SUCCESS : PTXKIT_ERROR_OUT_OF_MEMORY;
    if (st == PTXKIT_SUCCESS) st = ptxkit_memory_alloc(ctx, n * sizeof(float), &in);
    if (st == PTXKIT_SUCCESS) st = ptxkit_memory_alloc(ctx, n * sizeof(float), &out);
    if (st == PTXKIT_SUCCESS) st = ptxkit_memory_alloc(ctx, constlab_table_words(taps) * sizeof(float), &table);
    if (st == PTXKIT_SUCCESS) st = constlab_table_write(ctx, table, taps);
    if (st == PTXKIT_SUCCESS) st = constlab_fill(ctx, in, n, 2024, NULL);
    if (st == PTXKIT_SUCCESS) st = ptxkit_memory_read(ctx, host_in, in, checked * sizeof(float));

    /* the ceiling first: the copy through the same loop */
    constant_row row = {.p = {.store = CONSTLAB_COPY, .taps = taps, .block_size = block, .n = n, .out = out, .in = in,
                              .table = table},
                        .host_in = host_in, .want = want, .got = got};
    double bytes = constlab_streamed_bytes(&row.p);
    bench_case copy = {.key = "copy\t-\t0\t0", .setup = poison, .run = run_poly, .teardown = constant_cells,
                       .arg = &row, .work = bytes};
    bench_result copy_r;
    st = bench_measure(&h, st, &copy, &copy_r);
    const char *copy_check = st == PTXKIT_SUCCESS ? row.check : "-";
    double copy_gbs = st == PTXKIT_SUCCESS ? copy_r.rate : 0;
    if (st == PTXKIT_SUCCESS) report_note_ceiling("copy", (size_t)bytes, copy_gbs);

    char title[512];
    snprintf(title, sizeof title,
             "constant memory on %s: %zu floats (%d MiB), %d taps, block %d (copy ceiling %.0f GB/s; median of %d)",
             dev.name, n, mib, taps, block ? block : CONSTLAB_BLOCK, copy_gbs, reps);
    const bench_column columns[] = {
        COL_TEXT("store", "s"), COL_TEXT("pattern", "s"), COL_TEXT("taps", "n"), COL_TEXT("addresses", "n"),
        COL("time_us", BENCH_TIME_US, "%.1f"), COL("GBps", BENCH_RATE, "%.0f"), COL_TEXT("vs_uniform", "n"),
        COL_TEXT("vs_constant_uniform", "n"), COL("pct_of_copy", BENCH_PERCENT, "%.1f"), COL_TEXT("check", "s"),
        COL_STATS};
    bench_table(&h, title, columns, sizeof columns / sizeof columns[0]);
    int wrong = 0;
    for (int s = CONSTLAB_CONSTANT; s < CONSTLAB_COPY && st == PTXKIT_SUCCESS; s++)
        for (int d = 0; d < 2 && st == PTXKIT_SUCCESS; d++) {
            row.p.store = (constlab_store)s;
            row.p.divergent = d;
            char key[128];
            snprintf(key, sizeof key, "%s\t%s\t%d\t%d", constlab_store_name(row.p.store),
                     constlab_pattern_name(row.p.divergent), taps, constlab_addresses_per_read(&row.p));
            bench_case c = {.key = key, .setup = poison, .run = run_poly, .teardown = constant_cells, .arg = &row,
                            .work = bytes, .ceiling = copy_gbs};
            if ((st = bench_run(&h, st, &c, NULL)) != PTXKIT_SUCCESS) break;
            wrong += strcmp(row.check, "ok") != 0;
        }
    if (st == PTXKIT_SUCCESS) {
        copy_r.ceiling = copy_gbs;
        snprintf(copy_r.cells, sizeof copy_r.cells, "-\t%.2f\t%s", copy_r.ts.median_ms / row.constant_uniform_ms, copy_check);
        bench_row(&h, copy.key, &copy_r);
    }
    wrong += strcmp(copy_check, "ok") != 0 && st == PTXKIT_SUCCESS;
    rc = bench_print(&h, st);
    const double *uniform_ms = row.uniform_ms, *divergent_ms = row.divergent_ms;
    if (st == PTXKIT_SUCCESS && common.format == OUT_TABLE) {
        constlab_poly divergent = {.divergent = true, .taps = taps};
        printf("divergent over uniform time (%d addresses per warp-wide read):",
               constlab_addresses_per_read(&divergent));
        for (int s = CONSTLAB_CONSTANT; s < CONSTLAB_COPY; s++)
            printf(" %s %.2fx%s", constlab_store_name((constlab_store)s), divergent_ms[s] / uniform_ms[s],
                   s + 1 < CONSTLAB_COPY ? "," : "\n");
    }
    if (wrong) fprintf(stderr, "ptxkit %s: %d variants differ from the CPU\n", cmd, wrong);
    ptxkit_memory_free(ctx, in);
    ptxkit_memory_free(ctx, out);
    ptxkit_memory_free(ctx, table);
    ptxkit_context_destroy(ctx);
    free(host_in);
    free(want);
    free(got);
    return rc || wrong ? 1 : 0;
}
