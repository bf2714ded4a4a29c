/* ptxkit bench async: the Ampere lecture's copy microbenchmark on this GPU.
 * Tiles of N bytes of a large array reach shared memory by a synchronous
 * copy (registers), by cp.async one-stage and in a ring of S stages, and
 * (sm_90) by cp.async.bulk in the same rings, for 4- and 16-byte elements
 * and blocks of 128/256/512 threads; every tile is consumed by other
 * threads than those that copied it, and the total of what was consumed
 * is checked against the CPU. Reports clock64 cycles per byte per block
 * (median over blocks), GB/s of the whole array next to a streaming-read
 * kernel measured in the same run, and the cases where the synchronous
 * copy wins. Kernels: lab/kernels/async_lab.cu through the public API. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "lab.h"
#include "commands.h"
#include "args.h"
#include "bench_harness.h"
#include "svg.h"

enum { MAX_LIST = 8, MAX_ROWS = 512, MAX_VARIANTS = 1 + 2 * MAX_LIST };

typedef struct variant {
    int mode, stages; /* mode 0 sync, 1 cp.async, 2 bulk */
} variant;

typedef struct row {
    int elem, block, tile;
    variant v;
    int blocks_per_sm;
    double cycles_per_byte, gbs;
    bool ok, ran;
} row;

typedef struct async_run {
    ptxkit_kernel *k;
    unsigned grid, block;
    size_t shared;
    ptxkit_dptr in, sums, cycles;
    unsigned long long tiles;
} async_run;

static ptxkit_status launch(ptxkit_context *ctx, ptxkit_stream *s, void *arg) {
    (void)ctx;
    async_run *r = arg;
    void *args[] = {&r->in, &r->tiles, &r->sums, &r->cycles};
    return ptxkit_kernel_launch(r->k, (ptxkit_dim3){r->grid, 1, 1}, (ptxkit_dim3){r->block, 1, 1}, r->shared, s, args);
}

static const char *mode_name(int mode) { return mode == 0 ? "sync" : mode == 1 ? "cp.async" : "bulk"; }

static const char usage_text[] =
    "usage: ptxkit bench async [--size BYTES] [--tiles LIST] [--stages LIST] [--blocks LIST] [--elems LIST]\n"
    "                          [--reps N] [--csv|--json] [--json FILE] [--csv FILE] [--md FILE] [--svg FILE]\n"
    "                          [--device N]\n";
static const char help_text[] =
    "Global -> shared copies of tiles of N bytes (--tiles, default 2048,8192,32768) of a BYTES array\n"
    "(default 256M, beyond L2): synchronous (through registers), cp.async one-stage and in rings of S\n"
    "stages (--stages, default 2,4), and on sm_90 cp.async.bulk onto an mbarrier in rings of 1 and S\n"
    "stages; elements of 4 and 16 bytes (--elems), blocks of 128, 256 and 512 threads (--blocks), as\n"
    "many blocks per SM as fit. Every tile is consumed by other threads than those that copied it and\n"
    "the total is checked against the CPU. Prints clock64 cycles per byte of one block (median over\n"
    "blocks), GB/s (median of --reps runs, default 9, with their count, fastest and slowest) and its\n"
    "share of a streaming read of the same array, then the cases where the synchronous copy beats\n"
    "every asynchronous one.\n";

/* The consumed total of the array, as the kernels fold it (wrapping). */
static uint32_t reference_total(const uint32_t *words, size_t count, int elem) {
    uint32_t total = 0;
    if (elem == 4)
        for (size_t i = 0; i < count; i++) total += words[i];
    else
        for (size_t i = 0; i + 3 < count; i += 4) total += words[i] ^ (words[i + 1] + words[i + 2]) ^ words[i + 3];
    return total;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* One row's run: the kernel's arguments, the host's copies of its
 * outputs, and the row it fills. */
typedef struct async_case {
    async_run a; /* first: the case is launch's argument too */
    row *r;
    uint32_t *host_sums, want;
    uint64_t *host_cycles;
    int resident;
} async_case;

/* The consumed total against the CPU's, and the cycles per byte of the
 * median block. */
static ptxkit_status async_cells(bench *h, void *arg, bench_result *out) {
    async_case *c = arg;
    const async_run *a = &c->a;
    row *r = c->r;
    ptxkit_status st = ptxkit_memory_read(h->ctx, c->host_sums, a->sums, (size_t)a->grid * (size_t)r->block * 4);
    if (st == PTXKIT_SUCCESS) st = ptxkit_memory_read(h->ctx, c->host_cycles, a->cycles, (size_t)a->grid * 8);
    if (st != PTXKIT_SUCCESS) return st;
    uint32_t total = 0;
    for (size_t i = 0; i < (size_t)a->grid * (size_t)r->block; i++) total += c->host_sums[i];
    double *per_byte = malloc(a->grid * sizeof *per_byte);
    if (!per_byte) return PTXKIT_ERROR_OUT_OF_MEMORY;
    for (unsigned b = 0; b < a->grid; b++) {
        unsigned long long mine = (a->tiles - b + a->grid - 1) / a->grid; /* tiles b, b + grid, ... */
        per_byte[b] = (double)c->host_cycles[b] / ((double)mine * (double)r->tile);
    }
    qsort(per_byte, a->grid, sizeof *per_byte, cmp_double);
    r->cycles_per_byte = per_byte[a->grid / 2];
    free(per_byte);
    r->blocks_per_sm = c->resident;
    r->gbs = out->rate;
    r->ok = total == c->want;
    r->ran = true;
    snprintf(out->cells, sizeof out->cells, "%d\t%.3f\t%s", r->blocks_per_sm, r->cycles_per_byte, r->ok ? "ok" : "WRONG");
    return PTXKIT_SUCCESS;
}

static ptxkit_status measure(bench *h, ptxkit_program *program, row *r, ptxkit_dptr in, size_t bytes, ptxkit_dptr sums,
                             ptxkit_dptr cycles, uint32_t *host_sums, uint64_t *host_cycles, uint32_t want,
                             double ceiling) {
    char defs[5][40];
    snprintf(defs[0], sizeof defs[0], "BLOCK_SIZE=%d", r->block);
    snprintf(defs[1], sizeof defs[1], "MODE=%d", r->v.mode);
    snprintf(defs[2], sizeof defs[2], "STAGES=%d", r->v.stages);
    snprintf(defs[3], sizeof defs[3], "ELEM=%d", r->elem);
    snprintf(defs[4], sizeof defs[4], "TILE_BYTES=%d", r->tile);
    const char *defines[] = {defs[0], defs[1], defs[2], defs[3], defs[4]};
    async_case c = {.a = {.block = (unsigned)r->block, .in = in, .sums = sums, .cycles = cycles}, .r = r,
                    .host_sums = host_sums, .want = want, .host_cycles = host_cycles};
    async_run *a = &c.a;
    a->shared = (size_t)r->v.stages * (size_t)r->tile + (r->v.mode == 2 ? 8u * (size_t)r->v.stages : 0);
    a->tiles = bytes / (size_t)r->tile;
    ptxkit_status st = ptxkit_program_kernel_get(h->ctx, program, "async_copy", defines, 5, &a->k);
    if (st == PTXKIT_SUCCESS && a->shared > 48 * 1024) st = ptxkit_kernel_max_dynamic_shared_set(a->k, a->shared);
    if (st == PTXKIT_ERROR_INVALID_ARGUMENT) return PTXKIT_SUCCESS; /* more shared memory than a block may have: no row */
    if (st == PTXKIT_SUCCESS) st = ptxkit_kernel_occupancy_get(a->k, r->block, a->shared, &c.resident);
    if (st == PTXKIT_SUCCESS) st = ptxkit_kernel_grid_size_get(a->k, r->block, a->shared, a->tiles, &a->grid);
    char key[128];
    snprintf(key, sizeof key, "%d\t%d\t%d\t%s\t%d", r->elem, r->block, r->tile, mode_name(r->v.mode), r->v.stages);
    bench_case run = {.key = key, .run = launch, .teardown = async_cells, .arg = &c,
                      .work = (double)a->tiles * (double)r->tile, .ceiling = ceiling};
    return bench_run(h, st, &run, NULL);
}

static int write_svg(const char *path, const char *gpu, const row *rows, int count, const int *elems, int elem_count,
                     const variant *vs, int vcount, double ceiling) {
    svg_chart charts[2];
    static svg_series series[2][MAX_VARIANTS];
    static double ys[2][MAX_VARIANTS][64];
    static char cats[2][64][24], names[MAX_VARIANTS][24];
    static const char *cat_ptr[2][64];
    svg_reference ref = {.label = "streaming read", .y = ceiling};
    int charts_done = 0;
    for (int v = 0; v < vcount; v++)
        snprintf(names[v], sizeof names[v], "%s%s%d", mode_name(vs[v].mode), vs[v].mode ? " x" : "",
                 vs[v].mode ? vs[v].stages : 0);
    for (int v = 0; v < vcount; v++)
        if (!vs[v].mode) snprintf(names[v], sizeof names[v], "sync");
    for (int e = 0; e < elem_count && e < 2; e++) {
        int ncat = 0;
        for (int i = 0; i < count && ncat < 64; i++) {
            if (rows[i].elem != elems[e] || rows[i].v.mode != 0) continue; /* one category per sync row */
            snprintf(cats[e][ncat], sizeof cats[e][ncat], "%d thr, %d KiB", rows[i].block, rows[i].tile / 1024);
            cat_ptr[e][ncat] = cats[e][ncat];
            for (int v = 0; v < vcount; v++) {
                ys[e][v][ncat] = NAN;
                for (int j = 0; j < count; j++)
                    if (rows[j].ran && rows[j].elem == elems[e] && rows[j].block == rows[i].block &&
                        rows[j].tile == rows[i].tile && rows[j].v.mode == vs[v].mode && rows[j].v.stages == vs[v].stages)
                        ys[e][v][ncat] = rows[j].gbs;
            }
            ncat++;
        }
        for (int v = 0; v < vcount; v++) series[e][v] = (svg_series){.name = names[v], .y = ys[e][v], .count = (size_t)ncat};
        static char titles[2][64];
        snprintf(titles[e], sizeof titles[e], "%d-byte elements", elems[e]);
        charts[charts_done++] = (svg_chart){.kind = SVG_BARS, .title = titles[e], .x_label = "block size, tile",
                                            .y_label = "GB/s (array read once)", .categories = cat_ptr[e],
                                            .category_count = (size_t)ncat, .series = series[e],
                                            .series_count = (size_t)vcount, .references = &ref, .reference_count = 1};
    }
    char title[400];
    snprintf(title, sizeof title, "Global -> shared: synchronous vs cp.async vs bulk copies on %s", gpu);
    if (svg_save_figure(path, title, "x S: a ring of S buffers; median of the timed runs", charts, (size_t)charts_done) != 0) {
        fprintf(stderr, "ptxkit bench async: cannot write %s\n", path);
        return 1;
    }
    fprintf(stderr, "ptxkit bench async: chart written to %s\n", path);
    return 0;
}

int bench_async(int argc, char **argv) {
    static const char cmd[] = "bench async";
    size_t bytes = (size_t)256 << 20;
    int tiles[MAX_LIST] = {2048, 8192, 32768}, stages[MAX_LIST] = {2, 4}, blocks[MAX_LIST] = {128, 256, 512},
        elems[2] = {4, 16};
    int ntiles = 3, nstages = 2, nblocks = 3, nelems = 2, reps = 9;
    const arg_option options[] = {
        {.name = "size", .kind = ARG_SIZE, .value = &bytes, .lo = 1 << 20, .hi = 1LL << 34},
        {.name = "tiles", .kind = ARG_INTS, .value = tiles, .count = &ntiles, .max = MAX_LIST, .lo = 512, .hi = 98304},
        {.name = "stages", .kind = ARG_INTS, .value = stages, .count = &nstages, .max = MAX_LIST, .lo = 2, .hi = 8},
        {.name = "blocks", .kind = ARG_INTS, .value = blocks, .count = &nblocks, .max = MAX_LIST, .lo = 32, .hi = 1024},
        {.name = "elems", .kind = ARG_INTS, .value = elems, .count = &nelems, .max = 2, .lo = 4, .hi = 16},
        {.name = "reps", .kind = ARG_INT, .value = &reps, .lo = 1, .hi = 1001},
        {0}};
    const arg_spec spec = {.command = cmd, .usage = usage_text, .help = help_text,
                           .common = ARGS_DEVICE | ARGS_TABLES | ARGS_SVG, .options = options};
    cli_common common;
    int rc = args_parse(&spec, argc, argv, &common, NULL, NULL);
    if (rc >= 0) return rc;
    for (int e = 0; e < nelems; e++)
        if (elems[e] != 4 && elems[e] != 16) return args_error(&spec, "--elems takes 4 and/or 16, not %d", elems[e]);
    for (int b = 0; b < nblocks; b++)
        if (blocks[b] % 32) return args_error(&spec, "--blocks takes multiples of 32, not %d", blocks[b]);
    for (int t = 0; t < ntiles; t++)
        if (tiles[t] % 16) return args_error(&spec, "--tiles takes multiples of 16 bytes, not %d", tiles[t]);
    bench h;
    ptxkit_device_info dev;
    if (!bench_begin(&h, cmd, &common, 2, reps, 80, "cp.async", &dev)) return 1;
    ptxkit_context *ctx = h.ctx;
    int arch = dev.cc_major * 10 + dev.cc_minor;
    int largest_tile = 0;
    for (int t = 0; t < ntiles; t++) largest_tile = tiles[t] > largest_tile ? tiles[t] : largest_tile;
    bytes -= bytes % (size_t)largest_tile;

    variant vs[MAX_VARIANTS];
    int vcount = 0;
    vs[vcount++] = (variant){0, 1};
    vs[vcount++] = (variant){1, 1};
    for (int s = 0; s < nstages; s++) vs[vcount++] = (variant){1, stages[s]};
    if (arch >= 90) {
        vs[vcount++] = (variant){2, 1};
        for (int s = 0; s < nstages; s++) vs[vcount++] = (variant){2, stages[s]};
    }

    uint32_t *host = malloc(bytes);
    size_t max_threads = (size_t)dev.sm_count * (size_t)(dev.max_threads_per_sm ? dev.max_threads_per_sm : 2048);
    size_t max_blocks = (size_t)dev.sm_count * 64;
    uint32_t *host_sums = malloc(max_threads * 4);
    uint64_t *host_cycles = malloc(max_blocks * 8);
    row *rows = calloc(MAX_ROWS, sizeof *rows);
    ptxkit_dptr in = 0, sums = 0, cycles = 0;
    ptxkit_program *program = NULL;
    ptxkit_status st = host && host_sums && host_cycles && rows ? PTXKIT_SUCCESS : PTXKIT_ERROR_OUT_OF_MEMORY;
    if (st == PTXKIT_SUCCESS) st = ptxkit_memory_alloc(ctx, bytes, &in);
    if (st == PTXKIT_SUCCESS) st = ptxkit_memory_alloc(ctx, max_threads * 4, &sums);
    if (st == PTXKIT_SUCCESS) st = ptxkit_memory_alloc(ctx, max_blocks * 8, &cycles);
    if (st == PTXKIT_SUCCESS) st = fill_random_words(ctx, in, bytes, 0x5eed);
    if (st == PTXKIT_SUCCESS) st = ptxkit_memory_read(ctx, host, in, bytes);
    if (st == PTXKIT_SUCCESS) st = lab_program_create("async_lab.cu", &program);
    double ceiling = 0;
    if (st == PTXKIT_SUCCESS) st = measure_read_gbs(ctx, bytes, &ceiling);
    uint32_t want[2] = {reference_total(host, bytes / 4, elems[0]), nelems > 1 ? reference_total(host, bytes / 4, elems[1]) : 0};

    char title[400];
    snprintf(title, sizeof title,
             "global -> shared copies on %s, %zu MiB array (streaming read %.0f GB/s; median of %d runs)", dev.name,
             bytes >> 20, ceiling, reps);
    const bench_column columns[] = {
        COL_TEXT("elem_bytes", "n"), COL_TEXT("block", "n"), COL_TEXT("tile_bytes", "n"), COL_TEXT("copy", "s"),
        COL_TEXT("stages", "n"), COL_TEXT("blocks_per_sm", "n"), COL_TEXT("cycles_per_byte", "n"),
        COL("GBps", BENCH_RATE, "%.0f"), COL("pct_of_read", BENCH_PERCENT, "%.1f"), COL_TEXT("check", "s"), COL_STATS};
    bench_table(&h, title, columns, sizeof columns / sizeof columns[0]);
    int count = 0;
    for (int e = 0; e < nelems && st == PTXKIT_SUCCESS; e++)
        for (int b = 0; b < nblocks && st == PTXKIT_SUCCESS; b++)
            for (int t = 0; t < ntiles && st == PTXKIT_SUCCESS; t++) {
                if (tiles[t] % (blocks[b] * elems[e])) continue; /* a tile is whole elements for every thread */
                for (int v = 0; v < vcount && st == PTXKIT_SUCCESS && count < MAX_ROWS; v++) {
                    row *r = &rows[count];
                    *r = (row){.elem = elems[e], .block = blocks[b], .tile = tiles[t], .v = vs[v]};
                    st = measure(&h, program, r, in, bytes, sums, cycles, host_sums, host_cycles, want[e], ceiling);
                    if (r->ran) count++;
                    if (cli_is_tty() && common.format == OUT_TABLE)
                        fprintf(stderr, "\r%d rows", count);
                }
            }
    if (cli_is_tty() && common.format == OUT_TABLE) fprintf(stderr, "\n");

    int wrong = 0;
    for (int i = 0; i < count; i++) wrong += !rows[i].ok;
    rc = bench_print(&h, st);

    /* The lecture's corner case: where the synchronous copy beats every
     * asynchronous variant, or at least the one-stage cp.async. */
    if (st == PTXKIT_SUCCESS && common.format == OUT_TABLE) {
        int beats_all = 0, beats_one = 0, groups = 0;
        for (int i = 0; i < count; i++) {
            if (rows[i].v.mode != 0) continue;
            groups++;
            double best_async = 0, one_stage = 0;
            for (int j = 0; j < count; j++)
                if (rows[j].v.mode && rows[j].elem == rows[i].elem && rows[j].block == rows[i].block &&
                    rows[j].tile == rows[i].tile) {
                    if (rows[j].gbs > best_async) best_async = rows[j].gbs;
                    if (rows[j].v.mode == 1 && rows[j].v.stages == 1) one_stage = rows[j].gbs;
                }
            if (rows[i].gbs > one_stage) {
                beats_one++;
                printf("sync beats one-stage cp.async: %d-byte elements, %d threads, %d-byte tiles: %.0f vs %.0f GB/s%s\n",
                       rows[i].elem, rows[i].block, rows[i].tile, rows[i].gbs, one_stage,
                       rows[i].gbs > best_async ? " (and every asynchronous variant)" : "");
            }
            beats_all += rows[i].gbs > best_async;
        }
        printf("synchronous copy fastest of all in %d of %d configurations, faster than one-stage cp.async in %d\n",
               beats_all, groups, beats_one);
    }
    if (wrong) {
        fprintf(stderr, "ptxkit %s: %d rows consumed a wrong total\n", cmd, wrong);
        rc = 1;
    }
    if (rc == 0 && common.svg_path) rc = write_svg(common.svg_path, dev.name, rows, count, elems, nelems, vs, vcount, ceiling);
    ptxkit_program_destroy(program);
    ptxkit_memory_free(ctx, in);
    ptxkit_memory_free(ctx, sums);
    ptxkit_memory_free(ctx, cycles);
    ptxkit_context_destroy(ctx);
    free(host);
    free(host_sums);
    free(host_cycles);
    free(rows);
    return rc;
}
