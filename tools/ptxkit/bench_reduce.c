/* ptxkit bench reduce: ptxkit_reduce for each operator, type and size, next
 * to a streaming-read ceiling of the same bytes measured in the same run,
 * and with --compare next to CUB's DeviceReduce: in this process, through
 * the shared library bench/cub_reduce_lib.cu, in rounds alternating with
 * ptxkit's on the same input; where only the older program
 * bench/cub_reduce.cu is found, as a child process run before this process
 * allocates anything. */
#include <dlfcn.h>
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

enum { MAX_SIZES = 40, MAX_COMBOS = PTXKIT_REDUCE_OP_COUNT * PTXKIT_DTYPE_COUNT };

typedef struct reduce_bench {
    bool ops[PTXKIT_REDUCE_OP_COUNT], types[PTXKIT_DTYPE_COUNT];
    size_t sizes[MAX_SIZES];
    int size_count, reps, warmup;
    int passes; /* launches: 1, or 2 (a second launch of one block) */
    bool compare, ceiling;
    cli_launch options;
    ptxkit_config config; /* options as ptxkit_reduce reads them */
} reduce_bench;

/* CUB's share of each row's reps is timed in ROUNDS rounds alternating with
 * ptxkit's (ptxkit, CUB; CUB, ptxkit; ...), each after its own warm-up, so
 * neither side always follows the other or runs in a quieter moment. */
enum { ROUNDS = 4 };

typedef struct cub_result {
    int op, type;
    size_t n;
    double ms;
} cub_result;

typedef struct timed_reduce {
    ptxkit_reduce_op op;
    ptxkit_dtype type;
    ptxkit_dptr in, out;
    size_t n;
    const reduce_bench *b;
} timed_reduce;

static ptxkit_status run_reduce(ptxkit_context *ctx, ptxkit_stream *s, void *arg) {
    timed_reduce *r = arg;
    return ptxkit_reduce_experiment(ctx, r->op, r->type, r->out, r->in, r->n, &r->b->config, s, r->b->passes);
}

static const char *op_name_at(int i) { return ptxkit_reduce_op_name((ptxkit_reduce_op)i); }
static const char *type_name_at(int i) { return ptxkit_dtype_name((ptxkit_dtype)i); }

static const char reduce_usage[] =
    "usage: ptxkit bench reduce [--ops LIST|all] [--types LIST|all] [--log2 LIST | --sizes LIST]\n"
    "                           [--compare] [--reps N] [--warmup N] [--passes 1|2] [--no-ceiling]\n"
    "                           [--path auto|jit|ptx] [--block N] [--items N] [--vector N]\n"
    "                           [--blocks-per-sm N] [--load OP] [--csv|--json] [--json FILE] [--csv FILE]\n"
    "                           [--md FILE] [--device N]\n";

static const char reduce_help[] =
    "Time and GB/s (n x element size read) of ptxkit_reduce, and the share of a streaming-read\n"
    "ceiling of the same bytes measured in the same run; each row with the count of timed runs and the\n"
    "fastest and slowest. --compare also times CUB's DeviceReduce on the same input and prints both\n"
    "side by side: with the libptxkit-cub-reduce.so library (beside ptxkit, in ../bench, in libexec/ptxkit or\n"
    "$PTXKIT_CUB_LIB) in this process, each row's reps split into 4 rounds alternating between the two;\n"
    "else with the ptxkit-cub-reduce program (same places, or $PTXKIT_CUB_BENCH) run before, in a child\n"
    "process. Build them with meson -Dcub_compare=enabled.\n"
    "Defaults: --ops sum,max --types int32,float32,float64 --log2 10,12,14,16,18,20,22,24,25,26,27,28\n"
    "LIST is comma-separated; ops: sum min max and or xor; types: int32 uint32 int64 uint64 float32\n"
    "float64; --log2 takes exponents, --sizes element counts (N, 2^K, or N with a K, M or G suffix).\n";

/* Returns -1 to run, else the exit status. */
static int parse_args(int argc, char **argv, reduce_bench *b, cli_common *common) {
    *b = (reduce_bench){.reps = 30, .warmup = 5, .ceiling = true};
    b->ops[PTXKIT_REDUCE_SUM] = b->ops[PTXKIT_REDUCE_MAX] = true;
    b->types[PTXKIT_INT32] = b->types[PTXKIT_FLOAT32] = b->types[PTXKIT_FLOAT64] = true;
    static const int log2s[] = {10, 12, 14, 16, 18, 20, 22, 24, 25, 26, 27, 28};
    for (size_t i = 0; i < sizeof log2s / sizeof log2s[0]; i++) b->sizes[b->size_count++] = (size_t)1 << log2s[i];
    int passes = 1;
    bool no_ceiling = false;
    const arg_option options[] = {
        {.name = "ops", .kind = ARG_CHOICES, .value = b->ops, .name_of = op_name_at, .name_count = PTXKIT_REDUCE_OP_COUNT},
        {.name = "types", .kind = ARG_CHOICES, .value = b->types, .name_of = type_name_at, .name_count = PTXKIT_DTYPE_COUNT},
        {.name = "log2", .kind = ARG_LOG2S, .value = b->sizes, .count = &b->size_count, .max = MAX_SIZES, .lo = 0, .hi = 40},
        {.name = "sizes", .kind = ARG_SIZES, .value = b->sizes, .count = &b->size_count, .max = MAX_SIZES, .lo = 1,
         .hi = 1LL << 40},
        {.name = "compare", .kind = ARG_FLAG, .value = &b->compare},
        {.name = "no-ceiling", .kind = ARG_FLAG, .value = &no_ceiling},
        {.name = "reps", .kind = ARG_INT, .value = &b->reps, .lo = 1, .hi = 10000},
        {.name = "warmup", .kind = ARG_INT, .value = &b->warmup, .lo = 0, .hi = 1000},
        {.name = "passes", .kind = ARG_INT, .value = &passes, .lo = 1, .hi = 2},
        {.name = "path", .kind = ARG_PARSE, .value = &b->options.path, .parse = args_path},
        {.name = "block", .kind = ARG_PARSE, .value = &b->options.block_size, .parse = args_block_size},
        {.name = "items", .kind = ARG_INT, .value = &b->options.items_per_thread, .lo = 0, .hi = 64},
        {.name = "vector", .kind = ARG_PARSE, .value = &b->options.vector_bytes, .parse = args_vector_bytes},
        {.name = "blocks-per-sm", .kind = ARG_INT, .value = &b->options.blocks_per_sm, .lo = 0, .hi = 64},
        {.name = "load", .kind = ARG_PARSE, .value = &b->options.load_op, .parse = args_load_op},
        {0}};
    static const char *const exclusive[] = {"log2,sizes", NULL};
    const arg_spec spec = {.command = "bench reduce", .usage = reduce_usage, .help = reduce_help,
                           .common = ARGS_DEVICE | ARGS_TABLES, .options = options, .exclusive = exclusive};
    int rc = args_parse(&spec, argc, argv, common, NULL, NULL);
    b->passes = passes;
    b->ceiling = !no_ceiling;
    cli_launch_config(&b->options, "loads_in_flight", &b->config);
    return rc;
}

/* ---- CUB --------------------------------------------------------------- */

/* Runs the CUB program on the same combinations and sizes; *results gets
 * one entry per line it printed. */
static bool run_cub(const reduce_bench *b, int device, cub_result **results, int *count) {
    char program[PATH_MAX];
    if (!cli_find_helper("ptxkit-cub-reduce", "PTXKIT_CUB_BENCH", program, sizeof program)) {
        fprintf(stderr,
                "ptxkit bench reduce: --compare needs the ptxkit-cub-reduce program (not found beside ptxkit, in "
                "../bench, libexec/ptxkit or at $PTXKIT_CUB_BENCH); configure with -Dcub_compare=enabled where nvcc exists\n");
        return false;
    }
    if (strchr(program, '\'')) {
        fprintf(stderr, "ptxkit bench reduce: cannot run a program whose path has a quote: %s\n", program);
        return false;
    }
    char ops[128], types[128], sizes[MAX_SIZES * 24] = "";
    cli_join_names(ops, sizeof ops, b->ops, PTXKIT_REDUCE_OP_COUNT, op_name_at);
    cli_join_names(types, sizeof types, b->types, PTXKIT_DTYPE_COUNT, type_name_at);
    for (int i = 0; i < b->size_count; i++)
        snprintf(sizes + strlen(sizes), sizeof sizes - strlen(sizes), "%s%zu", i ? "," : "", b->sizes[i]);
    char command[PATH_MAX + sizeof sizes + 512];
    snprintf(command, sizeof command, "'%s' --ops %s --types %s --sizes %s --warmup %d --reps %d --device %d", program,
             ops, types, sizes, b->warmup, b->reps, device);
    FILE *p = popen(command, "r");
    if (!p) {
        perror("ptxkit bench reduce: popen");
        return false;
    }
    int capacity = MAX_COMBOS * MAX_SIZES;
    *results = calloc((size_t)capacity, sizeof **results);
    *count = 0;
    char line[256];
    while (*results && fgets(line, sizeof line, p)) {
        char op[16], type[16];
        unsigned long long n;
        double ms;
        if (sscanf(line, "%15[^,],%15[^,],%llu,%lf", op, type, &n, &ms) != 4 || *count == capacity) continue;
        cub_result *r = &(*results)[*count];
        r->op = r->type = -1;
        for (int i = 0; i < PTXKIT_REDUCE_OP_COUNT; i++)
            if (strcmp(op, op_name_at(i)) == 0) r->op = i;
        for (int i = 0; i < PTXKIT_DTYPE_COUNT; i++)
            if (strcmp(type, type_name_at(i)) == 0) r->type = i;
        r->n = (size_t)n;
        r->ms = ms;
        if (r->op >= 0 && r->type >= 0) (*count)++;
    }
    int rc = pclose(p);
    if (rc != 0 || !*results) {
        fprintf(stderr, "ptxkit bench reduce: %s failed (status %d)\n", program, rc);
        return false;
    }
    return true;
}

static const cub_result *cub_find(const cub_result *r, int count, int op, int type, size_t n) {
    for (int i = 0; i < count; i++)
        if (r[i].op == op && r[i].type == type && r[i].n == n) return &r[i];
    return NULL;
}

/* ---- CUB in this process ------------------------------------------------ */

typedef struct cub_lib {
    void *dl;
    int (*open)(int device, const char *op, const char *type, unsigned long long in, long long n, void **handle);
    int (*time)(void *handle, int warmup, int reps, float *intervals_ms);
    void (*close)(void *handle);
    const char *(*error)(void);
} cub_lib;

/* Opens libptxkit-cub-reduce.so; false where it is not found (the child
 * program is tried then) or, with a message, unusable. */
static bool cub_lib_open(cub_lib *lib, bool *unusable) {
    char path[PATH_MAX];
    *unusable = false;
    memset(lib, 0, sizeof *lib);
    if (!cli_find_helper("libptxkit-cub-reduce.so", "PTXKIT_CUB_LIB", path, sizeof path)) return false;
    *unusable = true;
    lib->dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib->dl) {
        fprintf(stderr, "ptxkit bench reduce: cannot open %s: %s\n", path, dlerror());
        return false;
    }
    int (*abi)(void) = (int (*)(void))dlsym(lib->dl, "ptxkit_cub_reduce_abi");
    *(void **)&lib->open = dlsym(lib->dl, "ptxkit_cub_reduce_open");
    *(void **)&lib->time = dlsym(lib->dl, "ptxkit_cub_reduce_time");
    *(void **)&lib->close = dlsym(lib->dl, "ptxkit_cub_reduce_close");
    *(void **)&lib->error = dlsym(lib->dl, "ptxkit_cub_reduce_error");
    if (!abi || abi() != 1 || !lib->open || !lib->time || !lib->close || !lib->error) {
        fprintf(stderr, "ptxkit bench reduce: %s is not the CUB library this ptxkit expects (rebuild it)\n", path);
        dlclose(lib->dl);
        lib->dl = NULL;
        return false;
    }
    *unusable = false;
    return true;
}

/* Rounds of 1 or more reps each: round k gets reps / ROUNDS, the first
 * reps % ROUNDS one more. */
static int round_reps(int reps, int k) { return reps / ROUNDS + (k < reps % ROUNDS); }

/* One row, both sides: pt and cub get reps intervals each. Where CUB
 * fails, *cub_ok is false, with a message, and the row shows ptxkit alone. */
static ptxkit_status time_interleaved(ptxkit_context *ctx, const cub_lib *lib, int device, timed_reduce *r, float *pt,
                                      float *cub, bool *cub_ok) {
    const reduce_bench *b = r->b;
    void *h = NULL;
    *cub_ok = lib->open(device, op_name_at(r->op), type_name_at(r->type), r->in, (long long)r->n, &h) == 0;
    if (!*cub_ok)
        fprintf(stderr, "ptxkit bench reduce: CUB %s.%s n=%zu: %s\n", op_name_at(r->op), type_name_at(r->type), r->n,
                lib->error());
    ptxkit_status st = PTXKIT_SUCCESS;
    for (int k = 0, done = 0; k < ROUNDS && st == PTXKIT_SUCCESS; done += round_reps(b->reps, k), k++) {
        int reps = round_reps(b->reps, k);
        if (reps < 1) break;
        for (int side = 0; side < 2 && st == PTXKIT_SUCCESS; side++) {
            bool ptxkit_turn = (side == 0) == (k % 2 == 0);
            if (ptxkit_turn) {
                st = time_samples_ms(ctx, run_reduce, r, b->warmup, reps, pt + done);
            } else if (*cub_ok && lib->time(h, b->warmup, reps, cub + done) != 0) {
                fprintf(stderr, "ptxkit bench reduce: CUB %s.%s n=%zu: %s\n", op_name_at(r->op), type_name_at(r->type),
                        r->n, lib->error());
                *cub_ok = false;
            }
        }
    }
    if (h) lib->close(h);
    return st;
}

/* ---- the benchmark ------------------------------------------------------ */

/* The buffers the read ceiling runs on: the reductions' own input (filled
 * once, holding the largest row), so nothing is allocated or freed between
 * timed rows: a 2 GiB ceiling buffer freed before the max.int32 rows made
 * their 2^24 and 2^25 rows slower, with the same kernel and launch (what
 * the driver does after such a free was not observed). */
static ptxkit_dptr ceiling_in, ceiling_out;

/* The read ceiling of `bytes`; the ceiling kernel reads whole 16-byte words. */
static ptxkit_status read_ceiling(ptxkit_context *ctx, size_t bytes, double *gbs) {
    return measure_read_gbs_in(ctx, ceiling_in, bytes < 16 ? 16 : bytes, ceiling_out, gbs);
}

/* CUB's side of a row: its samples, interleaved with ptxkit's (in this
 * process), or its line of the child program's output. */
typedef struct reduce_row {
    timed_reduce r; /* first: the row is run_reduce's argument too */
    const cub_lib *lib;
    int device;
    float *cub_times;
    bool in_process;
    const cub_result *cub;
    int cub_count;
    ceiling_cache *ceilings;
} reduce_row;

static ptxkit_status time_with_cub(bench *h, const bench_case *c, float *samples) {
    reduce_row *row = c->arg;
    return time_interleaved(h->ctx, row->lib, row->device, &row->r, samples, row->cub_times, &row->in_process);
}

/* The read ceiling of the row's bytes (measured once per size, after the
 * first row of it), CUB's cells and the configuration's source. */
static ptxkit_status reduce_cells(bench *h, void *arg, bench_result *out) {
    reduce_row *row = arg;
    const reduce_bench *b = row->r.b;
    size_t elem = ptxkit_dtype_size(row->r.type);
    double bytes = (double)row->r.n * (double)elem, ms = out->ts.median_ms;
    if (b->ceiling) {
        ptxkit_status st = ceiling_for(h->ctx, row->ceilings, row->r.n * elem, &out->ceiling);
        if (st != PTXKIT_SUCCESS) return st;
    }
    time_stats cs = {0};
    if (row->in_process) stats_of_samples(row->cub_times, b->reps, &cs);
    const cub_result *c = cub_find(row->cub, row->cub_count, row->r.op, row->r.type, row->r.n);
    double cub_ms = row->in_process ? cs.median_ms : c ? c->ms : 0;
    char cub_us[32] = "-", cub_gbs[32] = "-", speedup[32] = "-", cub_cells[128] = "", variant[48];
    if (cub_ms > 0) {
        snprintf(cub_us, sizeof cub_us, "%.2f", cub_ms * 1e3);
        snprintf(cub_gbs, sizeof cub_gbs, "%.1f", bytes / (cub_ms * 1e-3) / 1e9);
        snprintf(speedup, sizeof speedup, "%.3f", cub_ms / ms);
    }
    if (b->compare) snprintf(cub_cells, sizeof cub_cells, "%s\t%s\t%s\t", cub_us, cub_gbs, speedup);
    snprintf(variant, sizeof variant, "%s.%s", op_name_at(row->r.op), type_name_at(row->r.type));
    snprintf(out->cells, sizeof out->cells, "%s%s", cub_cells,
             config_source(h->ctx, "reduce", variant, row->r.n, &b->config));
    return PTXKIT_SUCCESS;
}

int bench_reduce(int argc, char **argv) {
    cli_common common;
    reduce_bench b;
    int rc = parse_args(argc, argv, &b, &common);
    if (rc >= 0) return rc;

    cub_result *cub = NULL;
    int cub_count = 0;
    cub_lib lib = {0};
    bool lib_unusable = false;
    if (b.compare && !cub_lib_open(&lib, &lib_unusable) && (lib_unusable || !run_cub(&b, common.device, &cub, &cub_count))) {
        free(cub);
        return 1;
    }
    bench h;
    ptxkit_device_info dev;
    if (!bench_begin(&h, "bench reduce", &common, b.warmup, b.reps, 0, NULL, &dev)) {
        free(cub);
        if (lib.dl) dlclose(lib.dl);
        return 1;
    }
    ptxkit_context *ctx = h.ctx;
    size_t max_bytes = 16;
    for (int s = 0; s < b.size_count; s++)
        for (int t = 0; t < PTXKIT_DTYPE_COUNT; t++)
            if (b.types[t] && b.sizes[s] * ptxkit_dtype_size((ptxkit_dtype)t) > max_bytes)
                max_bytes = b.sizes[s] * ptxkit_dtype_size((ptxkit_dtype)t);
    char title[512];
    snprintf(title, sizeof title,
             "ptxkit_reduce on %s (GB/s = n x element bytes read per second; read_GBps: streaming-read ceiling of the "
             "same bytes, this run; median of %d%s)",
             dev.name, b.reps,
             !b.compare ? ""
             : lib.dl   ? "; CUB in this process, rounds alternating with ptxkit's; speedup = CUB time / ptxkit time"
                        : "; CUB in a child process run first; speedup = CUB time / ptxkit time");
    /* the spread columns last, after the CUB ones when there are any */
    const bench_column columns[] = {
        COL_TEXT("op", "s"), COL_TEXT("type", "s"), COL_TEXT("n", "n"), COL("time_us", BENCH_TIME_US, "%.2f"),
        COL("GBps", BENCH_RATE, "%.1f"), COL("read_GBps", BENCH_CEILING, "%.0f"), COL("pct_read", BENCH_PERCENT, "%.1f"),
        COL_TEXT(b.compare ? "cub_us" : NULL, "n"), COL_TEXT(b.compare ? "cub_GBps" : NULL, "n"),
        COL_TEXT(b.compare ? "speedup" : NULL, "n"), COL_STATS, COL_TEXT(CONFIG_SOURCE_COLUMN, "s")};
    bench_table(&h, title, columns, sizeof columns / sizeof columns[0]);
    ceiling_cache ceilings = {.measure = read_ceiling};
    reduce_row row = {.r = {.b = &b}, .lib = &lib, .device = common.device, .cub = cub, .cub_count = cub_count,
                      .ceilings = &ceilings};
    timed_reduce *r = &row.r;
    row.cub_times = calloc((size_t)b.reps, sizeof *row.cub_times);
    ptxkit_status st = row.cub_times ? ptxkit_memory_alloc(ctx, max_bytes, &r->in) : PTXKIT_ERROR_OUT_OF_MEMORY;
    if (st == PTXKIT_SUCCESS) st = ptxkit_memory_alloc(ctx, 64, &r->out);
    if (st == PTXKIT_SUCCESS) st = fill_random_words(ctx, r->in, max_bytes, 11);
    ceiling_in = r->in;
    ceiling_out = r->out;
    for (int op = 0; op < PTXKIT_REDUCE_OP_COUNT && st == PTXKIT_SUCCESS; op++)
        for (int type = 0; type < PTXKIT_DTYPE_COUNT && st == PTXKIT_SUCCESS; type++) {
            if (!b.ops[op] || !b.types[type] || ptxkit_reduce_supported(NULL, (ptxkit_reduce_op)op, (ptxkit_dtype)type) != PTXKIT_SUCCESS) continue;
            r->op = (ptxkit_reduce_op)op;
            r->type = (ptxkit_dtype)type;
            size_t elem = ptxkit_dtype_size(r->type);
            for (int s = 0; s < b.size_count && st == PTXKIT_SUCCESS; s++) {
                r->n = b.sizes[s];
                row.in_process = false;
                char key[96];
                snprintf(key, sizeof key, "%s\t%s\t%zu", op_name_at(op), type_name_at(type), r->n);
                bench_case c = {.key = key, .run = run_reduce, .time = lib.dl ? time_with_cub : NULL,
                                .teardown = reduce_cells, .arg = &row, .work = (double)r->n * (double)elem};
                st = bench_run(&h, st, &c, NULL);
            }
        }
    rc = bench_print(&h, st);
    free(cub);
    free(row.cub_times);
    ptxkit_memory_free(ctx, r->in);
    ptxkit_memory_free(ctx, r->out);
    ptxkit_context_destroy(ctx);
    if (lib.dl) dlclose(lib.dl); /* its runtime lets go of the primary context after ptxkit did */
    return rc;
}
