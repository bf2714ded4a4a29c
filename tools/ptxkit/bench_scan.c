/* ptxkit bench scan: ptxkit_scan for each operator, type, kind and size,
 * next to cuMemcpyDtoD of the same bytes measured in the same run, and with
 * --compare next to CUB's DeviceScan (bench/cub_scan.cu, run as a child
 * process before this process allocates anything). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"
#include "ops/scan.h"

enum { MAX_SIZES = 40, MAX_COMBOS = PTXKIT_REDUCE_OP_COUNT * PTXKIT_DTYPE_COUNT * PTXKIT_SCAN_KIND_COUNT };

typedef struct scan_bench {
    bool ops[PTXKIT_REDUCE_OP_COUNT], types[PTXKIT_DTYPE_COUNT], kinds[PTXKIT_SCAN_KIND_COUNT];
    size_t sizes[MAX_SIZES];
    int size_count, reps, warmup, offset;
    bool compare, ceiling, in_place;
    ptxkit_launch_options options;
    scan_experiment experiment;
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
    return scan_run(ctx, r->kind, r->op, r->type, r->in, r->n, r->out, &r->b->options, s, &r->b->experiment);
}

static void usage(FILE *out) {
    fprintf(out,
            "usage: ptxkit bench scan [--ops LIST|all] [--types LIST|all] [--kinds LIST|all] [--log2 LIST | --sizes LIST]\n"
            "                         [--compare] [--reps N] [--warmup N] [--no-ceiling] [--in-place] [--offset K]\n"
            "                         [--path auto|jit|ptx] [--block N] [--items N] [--vector N] [--load OP]\n"
            "                         [--dynamic 0|1] [--spin NS] [--lookback M] [--min-blocks N]\n"
            "                         [--csv|--json] [--device N]\n"
            "Time and GB/s (n x element size read plus n written) of ptxkit_scan, and the share of\n"
            "cuMemcpyDtoD's bandwidth on the same bytes measured in the same run. --compare also runs CUB's\n"
            "DeviceScan (the ptxkit-cub-scan program: beside ptxkit, in ../bench, or $PTXKIT_CUB_SCAN; build it\n"
            "with meson -Dcub_compare=enabled) on the same sizes and prints both side by side (CUB always scans\n"
            "aligned, separate buffers). --in-place scans the input onto itself; --offset K starts input and\n"
            "output K elements past their allocations. --dynamic, --spin, --lookback and --min-blocks are\n"
            "experiment switches of the kernel (tiles by ticket or by blockIdx.x; back-off of the look-back in\n"
            "ns; tiles per lane per look-back step, 1-8; blocks per SM asked of __launch_bounds__).\n"
            "Defaults: --ops sum --types int32,float32 --kinds exclusive --log2 10,12,...,28 (every even\n"
            "exponent, and 25 and 27). LIST is comma-separated; ops: sum min max and or xor; types: int32 uint32\n"
            "int64 uint64 float32 float64; kinds: inclusive exclusive.\n");
}

/* Parses "a,b,c" of names into flags; "all" sets every one. */
static bool parse_names(const char *list, const char *(*name_of)(int), int count, bool *flags) {
    memset(flags, 0, (size_t)count * sizeof *flags);
    if (strcmp(list, "all") == 0) {
        for (int i = 0; i < count; i++) flags[i] = true;
        return true;
    }
    char buf[256];
    snprintf(buf, sizeof buf, "%s", list);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int k = -1;
        for (int i = 0; i < count; i++)
            if (strcmp(tok, name_of(i)) == 0) k = i;
        if (k < 0) {
            fprintf(stderr, "ptxkit bench scan: unknown name '%s'\n", tok);
            return false;
        }
        flags[k] = true;
    }
    return true;
}

static const char *op_name_at(int i) { return ptxkit_reduce_op_name((ptxkit_reduce_op)i); }
static const char *type_name_at(int i) { return ptxkit_dtype_name((ptxkit_dtype)i); }
static const char *kind_name_at(int i) { return ptxkit_scan_kind_name((ptxkit_scan_kind)i); }

static bool parse_sizes(const char *list, bool log2, scan_bench *b) {
    char buf[512];
    snprintf(buf, sizeof buf, "%s", list);
    b->size_count = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *end;
        unsigned long long v = strtoull(tok, &end, 0);
        if (*end || b->size_count == MAX_SIZES || (log2 && v > 40) || (!log2 && v == 0)) {
            fprintf(stderr, "ptxkit bench scan: bad size '%s'\n", tok);
            return false;
        }
        b->sizes[b->size_count++] = log2 ? (size_t)1 << v : (size_t)v;
    }
    return b->size_count > 0;
}

static bool parse_args(int argc, char **argv, scan_bench *b, int *exit_code) {
    *b = (scan_bench){.reps = 30, .warmup = 5, .ceiling = true, .experiment = SCAN_EXPERIMENT_NONE};
    parse_names("sum", op_name_at, PTXKIT_REDUCE_OP_COUNT, b->ops);
    parse_names("int32,float32", type_name_at, PTXKIT_DTYPE_COUNT, b->types);
    parse_names("exclusive", kind_name_at, PTXKIT_SCAN_KIND_COUNT, b->kinds);
    parse_sizes("10,12,14,16,18,20,22,24,25,26,27,28", true, b);
    *exit_code = 2;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        bool ok = true;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            *exit_code = 0;
            return false;
        } else if (strcmp(a, "--compare") == 0) {
            b->compare = true;
            continue;
        } else if (strcmp(a, "--no-ceiling") == 0) {
            b->ceiling = false;
            continue;
        } else if (strcmp(a, "--in-place") == 0) {
            b->in_place = true;
            continue;
        } else if (!v) {
            ok = false;
        } else if (strcmp(a, "--ops") == 0) {
            ok = parse_names(v, op_name_at, PTXKIT_REDUCE_OP_COUNT, b->ops);
        } else if (strcmp(a, "--types") == 0) {
            ok = parse_names(v, type_name_at, PTXKIT_DTYPE_COUNT, b->types);
        } else if (strcmp(a, "--kinds") == 0) {
            ok = parse_names(v, kind_name_at, PTXKIT_SCAN_KIND_COUNT, b->kinds);
        } else if (strcmp(a, "--log2") == 0 || strcmp(a, "--sizes") == 0) {
            ok = parse_sizes(v, a[2] == 'l', b);
        } else if (strcmp(a, "--reps") == 0) {
            b->reps = atoi(v);
            ok = b->reps >= 1 && b->reps <= 10000;
        } else if (strcmp(a, "--warmup") == 0) {
            b->warmup = atoi(v);
            ok = b->warmup >= 0 && b->warmup <= 1000;
        } else if (strcmp(a, "--offset") == 0) {
            b->offset = atoi(v);
            ok = b->offset >= 0 && b->offset <= 64;
        } else if (strcmp(a, "--path") == 0) {
            b->options.path = strcmp(v, "jit") == 0 ? PTXKIT_PATH_JIT : strcmp(v, "ptx") == 0 ? PTXKIT_PATH_PTX : PTXKIT_PATH_AUTO;
            ok = strcmp(v, "jit") == 0 || strcmp(v, "ptx") == 0 || strcmp(v, "auto") == 0;
        } else if (strcmp(a, "--block") == 0) {
            b->options.block_size = atoi(v);
        } else if (strcmp(a, "--items") == 0) {
            b->options.items_per_thread = atoi(v);
        } else if (strcmp(a, "--vector") == 0) {
            b->options.vector_bytes = atoi(v);
        } else if (strcmp(a, "--load") == 0) {
            ok = ptxkit_load_op_parse(v, &b->options.load_op) == PTXKIT_SUCCESS;
        } else if (strcmp(a, "--dynamic") == 0) {
            b->experiment.dynamic_tiles = atoi(v);
            ok = strcmp(v, "0") == 0 || strcmp(v, "1") == 0;
        } else if (strcmp(a, "--lookback") == 0) {
            b->experiment.lookback = atoi(v);
            ok = b->experiment.lookback >= 1 && b->experiment.lookback <= 8;
        } else if (strcmp(a, "--min-blocks") == 0) {
            b->experiment.min_blocks = atoi(v);
            ok = b->experiment.min_blocks >= 1 && b->experiment.min_blocks <= 32;
        } else if (strcmp(a, "--spin") == 0) {
            b->experiment.spin_ns = atoi(v);
            ok = b->experiment.spin_ns >= 0 && b->experiment.spin_ns <= 100000;
        } else {
            fprintf(stderr, "ptxkit bench scan: unexpected argument '%s'\n", a);
            usage(stderr);
            return false;
        }
        if (!ok) {
            fprintf(stderr, "ptxkit bench scan: bad or missing value for %s\n", a);
            return false;
        }
        i++;
    }
    return true;
}

/* ---- CUB --------------------------------------------------------------- */

static bool executable_file(const char *path) { return path && path[0] && access(path, X_OK) == 0; }

static bool find_cub_program(char *path, size_t size) {
    const char *env = getenv("PTXKIT_CUB_SCAN");
    if (env && env[0]) {
        snprintf(path, size, "%s", env);
        return executable_file(path);
    }
    char self[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    if (len <= 0) return false;
    self[len] = 0;
    char *slash = strrchr(self, '/');
    if (!slash) return false;
    *slash = 0;
    static const char *const places[] = {"%s/ptxkit-cub-scan", "%s/../bench/ptxkit-cub-scan"};
    for (size_t i = 0; i < sizeof places / sizeof places[0]; i++) {
        int n = snprintf(path, size, places[i], self);
        if (n > 0 && (size_t)n < size && executable_file(path)) return true;
    }
    return false;
}

static void join_names(char *out, size_t size, const bool *flags, int count, const char *(*name_of)(int)) {
    out[0] = 0;
    for (int i = 0; i < count; i++)
        if (flags[i]) snprintf(out + strlen(out), size - strlen(out), "%s%s", out[0] ? "," : "", name_of(i));
}

/* Runs the CUB program on the same combinations and sizes; *results gets
 * one entry per line it printed. */
static bool run_cub(const scan_bench *b, int device, cub_result **results, int *count) {
    char program[PATH_MAX];
    if (!find_cub_program(program, sizeof program)) {
        fprintf(stderr, "ptxkit bench scan: --compare needs the ptxkit-cub-scan program (not found beside ptxkit, in "
                        "../bench or at $PTXKIT_CUB_SCAN); configure with -Dcub_compare=enabled where nvcc exists\n");
        return false;
    }
    if (strchr(program, '\'')) {
        fprintf(stderr, "ptxkit bench scan: cannot run a program whose path has a quote: %s\n", program);
        return false;
    }
    char ops[128], types[128], kinds[64], sizes[MAX_SIZES * 24] = "";
    join_names(ops, sizeof ops, b->ops, PTXKIT_REDUCE_OP_COUNT, op_name_at);
    join_names(types, sizeof types, b->types, PTXKIT_DTYPE_COUNT, type_name_at);
    join_names(kinds, sizeof kinds, b->kinds, PTXKIT_SCAN_KIND_COUNT, kind_name_at);
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

/* Copy ceilings by byte count, measured once each. */
typedef struct ceiling_cache {
    size_t bytes[2 * MAX_SIZES];
    double gbs[2 * MAX_SIZES];
    int count;
} ceiling_cache;

static ptxkit_status ceiling_for(ptxkit_context *ctx, ceiling_cache *c, size_t bytes, double *gbs) {
    for (int i = 0; i < c->count; i++)
        if (c->bytes[i] == bytes) {
            *gbs = c->gbs[i];
            return PTXKIT_SUCCESS;
        }
    ptxkit_status st = measure_dtod_gbs(ctx, bytes, gbs);
    if (st == PTXKIT_SUCCESS && c->count < 2 * MAX_SIZES) {
        c->bytes[c->count] = bytes;
        c->gbs[c->count++] = *gbs;
    }
    return st;
}

int bench_scan(int argc, char **argv) {
    cli_common common;
    if (!cli_parse_common(&argc, argv, &common)) return 2;
    scan_bench b;
    int code;
    if (!parse_args(argc, argv, &b, &code)) return code;

    cub_result *cub = NULL;
    int cub_count = 0;
    if (b.compare && !run_cub(&b, common.device, &cub, &cub_count)) {
        free(cub);
        return 1;
    }
    ptxkit_context *ctx = cli_open_context("bench scan", common.device);
    if (!ctx) {
        free(cub);
        return 1;
    }
    size_t max_bytes = 16;
    for (int s = 0; s < b.size_count; s++)
        for (int t = 0; t < PTXKIT_DTYPE_COUNT; t++) {
            size_t bytes = (b.sizes[s] + (size_t)b.offset) * ptxkit_dtype_size((ptxkit_dtype)t);
            if (b.types[t] && bytes > max_bytes) max_bytes = bytes;
        }
    ptxkit_device_info dev;
    ptxkit_device_info_get(ctx, &dev);
    char title[640];
    snprintf(title, sizeof title,
             "ptxkit_scan on %s (GB/s = n x element bytes read + written per second; dtod_GBps: cuMemcpyDtoD of "
             "the same bytes, this run; median of %d%s%s%s)",
             dev.name, b.reps, b.in_place ? "; in place" : "", b.offset ? "; offset inputs" : "",
             b.compare ? "; speedup = CUB time / ptxkit time" : "");
    const char *headers[] = {"op",        "type",     "kind",   "n",        "time_us", "GBps",
                             "dtod_GBps", "pct_dtod", "cub_us", "cub_GBps", "speedup"};
    cli_table *t = table_new(title, b.compare ? 11 : 8, headers);
    ceiling_cache ceilings = {.count = 0};
    timed_scan r = {.b = &b};
    ptxkit_dptr in_alloc = 0, out_alloc = 0;
    ptxkit_status st = ptxkit_malloc(ctx, max_bytes, &in_alloc);
    if (st == PTXKIT_SUCCESS && !b.in_place) st = ptxkit_malloc(ctx, max_bytes, &out_alloc);
    if (st == PTXKIT_SUCCESS) st = fill_random_words(ctx, in_alloc, max_bytes, 11);
    for (int op = 0; op < PTXKIT_REDUCE_OP_COUNT && st == PTXKIT_SUCCESS; op++)
        for (int type = 0; type < PTXKIT_DTYPE_COUNT && st == PTXKIT_SUCCESS; type++)
            for (int kind = 0; kind < PTXKIT_SCAN_KIND_COUNT && st == PTXKIT_SUCCESS; kind++) {
                if (!b.ops[op] || !b.types[type] || !b.kinds[kind] || !scan_supported((ptxkit_reduce_op)op, (ptxkit_dtype)type))
                    continue;
                r.op = (ptxkit_reduce_op)op;
                r.type = (ptxkit_dtype)type;
                r.kind = (ptxkit_scan_kind)kind;
                size_t elem = ptxkit_dtype_size(r.type);
                r.in = in_alloc + (ptxkit_dptr)b.offset * elem;
                r.out = (b.in_place ? in_alloc : out_alloc) + (ptxkit_dptr)b.offset * elem;
                for (int s = 0; s < b.size_count && st == PTXKIT_SUCCESS; s++) {
                    r.n = b.sizes[s];
                    float ms = 0;
                    st = time_median_ms(ctx, run_scan, &r, b.warmup, b.reps, &ms);
                    double ceiling = 0;
                    if (st == PTXKIT_SUCCESS && b.ceiling) st = ceiling_for(ctx, &ceilings, r.n * elem, &ceiling);
                    /* in place, the timed runs scanned scans: fresh random words for the next size */
                    if (st == PTXKIT_SUCCESS && b.in_place) st = fill_random_words(ctx, in_alloc, max_bytes, 11);
                    if (st != PTXKIT_SUCCESS) break;
                    double bytes = 2.0 * (double)r.n * (double)elem, gbs = bytes / (ms * 1e-3) / 1e9;
                    char ceil_text[32] = "-", pct_text[32] = "-", cub_us[32] = "-", cub_gbs[32] = "-", speedup[32] = "-";
                    if (b.ceiling) {
                        snprintf(ceil_text, sizeof ceil_text, "%.0f", ceiling);
                        snprintf(pct_text, sizeof pct_text, "%.1f", 100.0 * gbs / ceiling);
                    }
                    const cub_result *c = cub_find(cub, cub_count, op, type, kind, r.n);
                    if (c && c->ms > 0) {
                        snprintf(cub_us, sizeof cub_us, "%.2f", c->ms * 1e3);
                        snprintf(cub_gbs, sizeof cub_gbs, "%.1f", bytes / (c->ms * 1e-3) / 1e9);
                        snprintf(speedup, sizeof speedup, "%.3f", c->ms / ms);
                    }
                    table_addf(t, "%s\t%s\t%s\t%zu\t%.2f\t%.1f\t%s\t%s\t%s\t%s\t%s", op_name_at(op), type_name_at(type),
                               kind_name_at(kind), r.n, ms * 1e3, gbs, ceil_text, pct_text, cub_us, cub_gbs, speedup);
                }
            }
    if (st != PTXKIT_SUCCESS) cli_fail("bench scan", ctx, st);
    table_print(t, common.format, stdout);
    table_free(t);
    free(cub);
    ptxkit_free(ctx, in_alloc);
    if (out_alloc) ptxkit_free(ctx, out_alloc);
    ptxkit_context_close(ctx);
    return st == PTXKIT_SUCCESS ? 0 : 1;
}
