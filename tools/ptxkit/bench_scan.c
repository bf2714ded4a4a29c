/* ptxkit bench scan: ptxkit_scan for each operator, type, kind and size,
 * next to cuMemcpyDtoD of the same bytes measured in the same run, and with
 * --compare next to CUB's DeviceScan (bench/cub_scan.cu, run as a child
 * process before this process allocates anything). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "args.h"
#include "bench_harness.h"
#include "cli.h"
#include "commands.h"
#include "ptxkit.h"
#include "ptxkit_ops.h"

enum { MAX_SIZES = 40, MAX_COMBOS = PTXKIT_REDUCE_OP_COUNT * PTXKIT_DTYPE_COUNT * PTXKIT_SCAN_KIND_COUNT };

typedef struct scan_bench {
    bool ops[PTXKIT_REDUCE_OP_COUNT], types[PTXKIT_DTYPE_COUNT], kinds[PTXKIT_SCAN_KIND_COUNT];
    size_t sizes[MAX_SIZES];
    int size_count, reps, warmup, offset;
    bool compare, ceiling, in_place;
    cli_launch options;
    ptxkit_config config; /* options as ptxkit_scan reads them */
    ptxkit_scan_switches experiment;
} scan_bench;

typedef struct cub_result {
    int op, type, kind;
    size_t n;
    double ms;
} cub_result;

typedef struct timed_scan {
    ptxkit_scan_kind kind;
    ptxkit_reduce_op op;
    ptxkit_dtype type;
    ptxkit_dptr in, out;
    size_t n;
    const scan_bench *b;
} timed_scan;

static ptxkit_status run_scan(ptxkit_context *ctx, ptxkit_stream *s, void *arg) {
    timed_scan *r = arg;
    return ptxkit_scan_experiment(ctx, r->kind, r->op, r->type, r->out, r->in, r->n, &r->b->config, s, &r->b->experiment);
}

static const char *op_name_at(int i) { return ptxkit_reduce_op_name((ptxkit_reduce_op)i); }
static const char *type_name_at(int i) { return ptxkit_dtype_name((ptxkit_dtype)i); }
static const char *kind_name_at(int i) { return ptxkit_scan_kind_name((ptxkit_scan_kind)i); }

static const char scan_usage[] =
    "usage: ptxkit bench scan [--ops LIST|all] [--types LIST|all] [--kinds LIST|all] [--log2 LIST | --sizes LIST]\n"
    "                         [--compare] [--reps N] [--warmup N] [--no-ceiling] [--in-place] [--offset K]\n"
    "                         [--path auto|jit|ptx] [--block N] [--items N] [--vector N] [--load OP]\n"
    "                         [--dynamic 0|1] [--spin NS] [--lookback M] [--min-blocks N] [--staged 0|1]\n"
    "                         [--chunks C]\n"
    "                         [--csv|--json] [--json FILE] [--csv FILE] [--md FILE] [--device N]\n";

static const char scan_help[] =
    "Time and GB/s (n x element size read plus n written) of ptxkit_scan, and the share of\n"
    "cuMemcpyDtoD's bandwidth on the same bytes measured in the same run; each row with the count of\n"
    "timed runs and the fastest and slowest. --compare also runs CUB's\n"
    "DeviceScan (the ptxkit-cub-scan program: beside ptxkit, in ../bench, or $PTXKIT_CUB_SCAN; build it\n"
    "with meson -Dcub_compare=enabled) on the same sizes and prints both side by side (CUB always scans\n"
    "aligned, separate buffers). --in-place scans the input onto itself; --offset K starts input and\n"
    "output K elements past their allocations. --dynamic, --spin, --lookback, --min-blocks, --staged\n"
    "and --chunks are experiment switches of the kernel (tiles by ticket or by blockIdx.x; back-off of\n"
    "the look-back in ns; tiles per lane per look-back step, 1-8; blocks per SM asked of\n"
    "__launch_bounds__; 1: the staged kernel, tiles bulk-copied to shared memory, sm_90+, 0: tiles held\n"
    "in registers; the staged kernel's bulk copies per tile, dividing the block's warps).\n"
    "Defaults: --ops sum --types int32,float32 --kinds exclusive --log2 10,12,...,28 (every even\n"
    "exponent, and 25 and 27). LIST is comma-separated; ops: sum min max and or xor; types: int32 uint32\n"
    "int64 uint64 float32 float64; kinds: inclusive exclusive; --sizes takes N, 2^K, or N with K/M/G.\n";

/* Returns -1 to run, else the exit status. */
static int parse_args(int argc, char **argv, scan_bench *b, cli_common *common) {
    *b = (scan_bench){.reps = 30, .warmup = 5, .ceiling = true, .experiment = {-1, -1, -1, -1, -1, -1}};
    b->ops[PTXKIT_REDUCE_SUM] = true;
    b->types[PTXKIT_INT32] = b->types[PTXKIT_FLOAT32] = true;
    b->kinds[PTXKIT_SCAN_EXCLUSIVE] = true;
    static const int log2s[] = {10, 12, 14, 16, 18, 20, 22, 24, 25, 26, 27, 28};
    for (size_t i = 0; i < sizeof log2s / sizeof log2s[0]; i++) b->sizes[b->size_count++] = (size_t)1 << log2s[i];
    bool no_ceiling = false;
    int dynamic = b->experiment.dynamic_tiles;
    const arg_option options[] = {
        {.name = "ops", .kind = ARG_CHOICES, .value = b->ops, .name_of = op_name_at, .name_count = PTXKIT_REDUCE_OP_COUNT},
        {.name = "types", .kind = ARG_CHOICES, .value = b->types, .name_of = type_name_at, .name_count = PTXKIT_DTYPE_COUNT},
        {.name = "kinds", .kind = ARG_CHOICES, .value = b->kinds, .name_of = kind_name_at,
         .name_count = PTXKIT_SCAN_KIND_COUNT},
        {.name = "log2", .kind = ARG_LOG2S, .value = b->sizes, .count = &b->size_count, .max = MAX_SIZES, .lo = 0, .hi = 40},
        {.name = "sizes", .kind = ARG_SIZES, .value = b->sizes, .count = &b->size_count, .max = MAX_SIZES, .lo = 1,
         .hi = 1LL << 40},
        {.name = "compare", .kind = ARG_FLAG, .value = &b->compare},
        {.name = "no-ceiling", .kind = ARG_FLAG, .value = &no_ceiling},
        {.name = "in-place", .kind = ARG_FLAG, .value = &b->in_place},
        {.name = "reps", .kind = ARG_INT, .value = &b->reps, .lo = 1, .hi = 10000},
        {.name = "warmup", .kind = ARG_INT, .value = &b->warmup, .lo = 0, .hi = 1000},
        {.name = "offset", .kind = ARG_INT, .value = &b->offset, .lo = 0, .hi = 64},
        {.name = "path", .kind = ARG_PARSE, .value = &b->options.path, .parse = args_path},
        {.name = "block", .kind = ARG_PARSE, .value = &b->options.block_size, .parse = args_block_size},
        {.name = "items", .kind = ARG_INT, .value = &b->options.items_per_thread, .lo = 0, .hi = 64},
        {.name = "vector", .kind = ARG_PARSE, .value = &b->options.vector_bytes, .parse = args_vector_bytes},
        {.name = "load", .kind = ARG_PARSE, .value = &b->options.load_op, .parse = args_load_op},
        {.name = "dynamic", .kind = ARG_INT, .value = &dynamic, .lo = 0, .hi = 1},
        {.name = "lookback", .kind = ARG_INT, .value = &b->experiment.lookback, .lo = 1, .hi = 8},
        {.name = "min-blocks", .kind = ARG_INT, .value = &b->experiment.min_blocks, .lo = 1, .hi = 32},
        {.name = "spin", .kind = ARG_INT, .value = &b->experiment.spin_ns, .lo = 0, .hi = 100000},
        {.name = "staged", .kind = ARG_INT, .value = &b->experiment.staged, .lo = 0, .hi = 1},
        {.name = "chunks", .kind = ARG_INT, .value = &b->experiment.chunks, .lo = 1, .hi = 32},
        {0}};
    static const char *const exclusive[] = {"log2,sizes", NULL};
    const arg_spec spec = {.command = "bench scan", .usage = scan_usage, .help = scan_help,
                           .common = ARGS_DEVICE | ARGS_TABLES, .options = options, .exclusive = exclusive};
    int rc = args_parse(&spec, argc, argv, common, NULL, NULL);
    b->ceiling = !no_ceiling;
    b->experiment.dynamic_tiles = dynamic;
    cli_launch_config(&b->options, "vectors_per_thread", &b->config);
    return rc;
}

/* ---- CUB --------------------------------------------------------------- */

/* Runs the CUB program on the same combinations and sizes; *results gets
 * one entry per line it printed. */
static bool run_cub(const scan_bench *b, int device, cub_result **results, int *count) {
    char program[PATH_MAX];
    if (!cli_find_helper("ptxkit-cub-scan", "PTXKIT_CUB_SCAN", program, sizeof program)) {
        fprintf(stderr, "ptxkit bench scan: --compare needs the ptxkit-cub-scan program (not found beside ptxkit, in "
                        "../bench, libexec/ptxkit or at $PTXKIT_CUB_SCAN); configure with -Dcub_compare=enabled where "
                        "nvcc exists\n");
        return false;
    }
    if (strchr(program, '\'')) {
        fprintf(stderr, "ptxkit bench scan: cannot run a program whose path has a quote: %s\n", program);
        return false;
    }
    char ops[128], types[128], kinds[64], sizes[MAX_SIZES * 24] = "";
    cli_join_names(ops, sizeof ops, b->ops, PTXKIT_REDUCE_OP_COUNT, op_name_at);
    cli_join_names(types, sizeof types, b->types, PTXKIT_DTYPE_COUNT, type_name_at);
    cli_join_names(kinds, sizeof kinds, b->kinds, PTXKIT_SCAN_KIND_COUNT, kind_name_at);
    for (int i = 0; i < b->size_count; i++)
        snprintf(sizes + strlen(sizes), sizeof sizes - strlen(sizes), "%s%zu", i ? "," : "", b->sizes[i]);
    char command[PATH_MAX + sizeof sizes + 512];
    snprintf(command, sizeof command, "'%s' --ops %s --types %s --kinds %s --sizes %s --warmup %d --reps %d --device %d",
             program, ops, types, kinds, sizes, b->warmup, b->reps, device);
    FILE *p = popen(command, "r");
    if (!p) {
        perror("ptxkit bench scan: popen");
        return false;
    }
    int capacity = MAX_COMBOS * MAX_SIZES;
    *results = calloc((size_t)capacity, sizeof **results);
    *count = 0;
    char line[256];
    while (*results && fgets(line, sizeof line, p)) {
        char op[16], type[16], kind[16];
        unsigned long long n;
        double ms;
        if (sscanf(line, "%15[^,],%15[^,],%15[^,],%llu,%lf", op, type, kind, &n, &ms) != 5 || *count == capacity) continue;
        cub_result *r = &(*results)[*count];
        r->op = r->type = r->kind = -1;
        for (int i = 0; i < PTXKIT_REDUCE_OP_COUNT; i++)
            if (strcmp(op, op_name_at(i)) == 0) r->op = i;
        for (int i = 0; i < PTXKIT_DTYPE_COUNT; i++)
            if (strcmp(type, type_name_at(i)) == 0) r->type = i;
        for (int i = 0; i < PTXKIT_SCAN_KIND_COUNT; i++)
            if (strcmp(kind, kind_name_at(i)) == 0) r->kind = i;
        r->n = (size_t)n;
        r->ms = ms;
        if (r->op >= 0 && r->type >= 0 && r->kind >= 0) (*count)++;
    }
    int rc = pclose(p);
    if (rc != 0 || !*results) {
        fprintf(stderr, "ptxkit bench scan: %s failed (status %d)\n", program, rc);
        return false;
    }
    return true;
}

static const cub_result *cub_find(const cub_result *r, int count, int op, int type, int kind, size_t n) {
    for (int i = 0; i < count; i++)
        if (r[i].op == op && r[i].type == type && r[i].kind == kind && r[i].n == n) return &r[i];
    return NULL;
}

/* ---- the benchmark ------------------------------------------------------ */

typedef struct scan_row {
    timed_scan r; /* first: the row is run_scan's argument too */
    ptxkit_dptr in_alloc;
    size_t max_bytes;
    const cub_result *cub;
    int cub_count;
    ceiling_cache *ceilings;
} scan_row;

/* The copy ceiling of the row's bytes (measured once per size, after the
 * first row of it), fresh input after an in-place scan, CUB's cells and the
 * configuration's source. */
static ptxkit_status scan_cells(bench *h, void *arg, bench_result *out) {
    scan_row *row = arg;
    const timed_scan *r = &row->r;
    const scan_bench *b = r->b;
    size_t elem = ptxkit_dtype_size(r->type);
    ptxkit_status st = PTXKIT_SUCCESS;
    if (b->ceiling) st = ceiling_for(h->ctx, row->ceilings, r->n * elem, &out->ceiling);
    /* in place, the timed runs scanned scans: fresh random words for the next size */
    if (st == PTXKIT_SUCCESS && b->in_place) st = fill_random_words(h->ctx, row->in_alloc, row->max_bytes, 11);
    if (st != PTXKIT_SUCCESS) return st;
    double bytes = 2.0 * (double)r->n * (double)elem, ms = out->ts.median_ms;
    char cub_us[32] = "-", cub_gbs[32] = "-", speedup[32] = "-", cub_cells[128] = "", variant[48];
    const cub_result *c = cub_find(row->cub, row->cub_count, r->op, r->type, r->kind, r->n);
    if (c && c->ms > 0) {
        snprintf(cub_us, sizeof cub_us, "%.2f", c->ms * 1e3);
        snprintf(cub_gbs, sizeof cub_gbs, "%.1f", bytes / (c->ms * 1e-3) / 1e9);
        snprintf(speedup, sizeof speedup, "%.3f", c->ms / ms);
    }
    if (b->compare) snprintf(cub_cells, sizeof cub_cells, "%s\t%s\t%s\t", cub_us, cub_gbs, speedup);
    snprintf(variant, sizeof variant, "%s.%s", op_name_at(r->op), type_name_at(r->type));
    snprintf(out->cells, sizeof out->cells, "%s%s", cub_cells, config_source(h->ctx, "scan", variant, r->n, &b->config));
    return PTXKIT_SUCCESS;
}

int bench_scan(int argc, char **argv) {
    cli_common common;
    scan_bench b;
    int rc = parse_args(argc, argv, &b, &common);
    if (rc >= 0) return rc;

    cub_result *cub = NULL;
    int cub_count = 0;
    if (b.compare && !run_cub(&b, common.device, &cub, &cub_count)) {
        free(cub);
        return 1;
    }
    bench h;
    ptxkit_device_info dev;
    if (!bench_begin(&h, "bench scan", &common, b.warmup, b.reps, 0, NULL, &dev)) {
        free(cub);
        return 1;
    }
    ptxkit_context *ctx = h.ctx;
    size_t max_bytes = 16;
    for (int s = 0; s < b.size_count; s++)
        for (int t = 0; t < PTXKIT_DTYPE_COUNT; t++) {
            size_t bytes = (b.sizes[s] + (size_t)b.offset) * ptxkit_dtype_size((ptxkit_dtype)t);
            if (b.types[t] && bytes > max_bytes) max_bytes = bytes;
        }
    char title[640];
    snprintf(title, sizeof title,
             "ptxkit_scan on %s (GB/s = n x element bytes read + written per second; dtod_GBps: cuMemcpyDtoD of "
             "the same bytes, this run; median of %d%s%s%s)",
             dev.name, b.reps, b.in_place ? "; in place" : "", b.offset ? "; offset inputs" : "",
             b.compare ? "; speedup = CUB time / ptxkit time" : "");
    const bench_column columns[] = {
        COL_TEXT("op", "s"), COL_TEXT("type", "s"), COL_TEXT("kind", "s"), COL_TEXT("n", "n"),
        COL("time_us", BENCH_TIME_US, "%.2f"), COL("GBps", BENCH_RATE, "%.1f"), COL("dtod_GBps", BENCH_CEILING, "%.0f"),
        COL("pct_dtod", BENCH_PERCENT, "%.1f"), COL_TEXT(b.compare ? "cub_us" : NULL, "n"),
        COL_TEXT(b.compare ? "cub_GBps" : NULL, "n"), COL_TEXT(b.compare ? "speedup" : NULL, "n"), COL_STATS,
        COL_TEXT(CONFIG_SOURCE_COLUMN, "s")};
    bench_table(&h, title, columns, sizeof columns / sizeof columns[0]);
    ceiling_cache ceilings = {.measure = measure_dtod_gbs};
    scan_row row = {.r = {.b = &b}, .max_bytes = max_bytes, .cub = cub, .cub_count = cub_count, .ceilings = &ceilings};
    timed_scan *r = &row.r;
    ptxkit_dptr out_alloc = 0;
    ptxkit_status st = ptxkit_memory_alloc(ctx, max_bytes, &row.in_alloc);
    if (st == PTXKIT_SUCCESS && !b.in_place) st = ptxkit_memory_alloc(ctx, max_bytes, &out_alloc);
    if (st == PTXKIT_SUCCESS) st = fill_random_words(ctx, row.in_alloc, max_bytes, 11);
    for (int op = 0; op < PTXKIT_REDUCE_OP_COUNT && st == PTXKIT_SUCCESS; op++)
        for (int type = 0; type < PTXKIT_DTYPE_COUNT && st == PTXKIT_SUCCESS; type++)
            for (int kind = 0; kind < PTXKIT_SCAN_KIND_COUNT && st == PTXKIT_SUCCESS; kind++) {
                if (!b.ops[op] || !b.types[type] || !b.kinds[kind] || ptxkit_scan_supported(NULL, (ptxkit_scan_kind)kind, (ptxkit_reduce_op)op, (ptxkit_dtype)type) != PTXKIT_SUCCESS)
                    continue;
                r->op = (ptxkit_reduce_op)op;
                r->type = (ptxkit_dtype)type;
                r->kind = (ptxkit_scan_kind)kind;
                size_t elem = ptxkit_dtype_size(r->type);
                r->in = row.in_alloc + (ptxkit_dptr)b.offset * elem;
                r->out = (b.in_place ? row.in_alloc : out_alloc) + (ptxkit_dptr)b.offset * elem;
                for (int s = 0; s < b.size_count && st == PTXKIT_SUCCESS; s++) {
                    r->n = b.sizes[s];
                    char key[96];
                    snprintf(key, sizeof key, "%s\t%s\t%s\t%zu", op_name_at(op), type_name_at(type), kind_name_at(kind),
                             r->n);
                    bench_case c = {.key = key, .run = run_scan, .teardown = scan_cells, .arg = &row,
                                    .work = 2.0 * (double)r->n * (double)elem};
                    st = bench_run(&h, st, &c, NULL);
                }
            }
    rc = bench_print(&h, st);
    free(cub);
    ptxkit_memory_free(ctx, row.in_alloc);
    if (out_alloc) ptxkit_memory_free(ctx, out_alloc);
    ptxkit_context_destroy(ctx);
    return rc;
}
