/* ptxkit bench reduce: ptxkit_reduce for each operator, type and size, next
 * to a streaming-read ceiling of the same bytes measured in the same run,
 * and with --compare next to CUB's DeviceReduce (bench/cub_reduce.cu, run
 * as a child process before this process allocates anything). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"
#include "ops/reduce.h"

enum { MAX_SIZES = 40, MAX_COMBOS = PTXKIT_REDUCE_OP_COUNT * PTXKIT_DTYPE_COUNT };

typedef struct reduce_bench {
    bool ops[PTXKIT_REDUCE_OP_COUNT], types[PTXKIT_DTYPE_COUNT];
    size_t sizes[MAX_SIZES];
    int size_count, reps, warmup;
    reduce_passes passes;
    bool compare, ceiling;
    ptxkit_launch_options options;
} reduce_bench;

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
    return reduce_run(ctx, r->op, r->type, r->in, r->n, r->out, &r->b->options, s, r->b->passes);
}

static void usage(FILE *out) {
    fprintf(out, "usage: ptxkit bench reduce [--ops LIST|all] [--types LIST|all] [--log2 LIST | --sizes LIST]\n"
                 "                           [--compare] [--reps N] [--warmup N] [--passes 1|2] [--no-ceiling]\n"
                 "                           [--path auto|jit|ptx] [--block N] [--items N] [--vector N]\n"
                 "                           [--blocks-per-sm N] [--load OP] [--csv|--json] [--device N]\n"
                 "Time and GB/s (n x element size read) of ptxkit_reduce, and the share of a streaming-read\n"
                 "ceiling of the same bytes measured in the same run. --compare also runs CUB's DeviceReduce\n"
                 "(the ptxkit-cub-reduce program: beside ptxkit, in ../bench, in libexec/ptxkit or $PTXKIT_CUB_BENCH; build it\n"
                 "with meson -Dcub_compare=enabled) on the same sizes and prints both side by side.\n"
                 "Defaults: --ops sum,max --types int32,float32,float64 --log2 10,12,14,16,18,20,22,24,25,26,27,28\n"
                 "LIST is comma-separated; ops: sum min max and or xor; types: int32 uint32 int64 uint64 float32\n"
                 "float64; --log2 takes exponents, --sizes element counts.\n");
}

/* Parses "a,b,c" of names into flags; "all" sets every one. */
static bool parse_names(const char *list, const char *(*name_of)(int), int count, bool *flags) {
    memset(flags, 0, (size_t)count * sizeof *flags);
    if (strcmp(list, "all") == 0) {
        for (int i = 0; i < count; i++)
            flags[i] = true;
        return true;
    }
    char buf[256];
    snprintf(buf, sizeof buf, "%s", list);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int k = -1;
        for (int i = 0; i < count; i++)
            if (strcmp(tok, name_of(i)) == 0) k = i;
        if (k < 0) {
            fprintf(stderr, "ptxkit bench reduce: unknown name '%s'\n", tok);
            return false;
        }
        flags[k] = true;
    }
    return true;
}

static const char *op_name_at(int i) { return ptxkit_reduce_op_name((ptxkit_reduce_op)i); }
static const char *type_name_at(int i) { return ptxkit_dtype_name((ptxkit_dtype)i); }

static bool parse_sizes(const char *list, bool log2, reduce_bench *b) {
    char buf[512];
    snprintf(buf, sizeof buf, "%s", list);
    b->size_count = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        long k = 0;
        size_t v = 0;
        if (b->size_count == MAX_SIZES || (log2 ? !cli_parse_long(tok, 0, 40, &k) : !cli_parse_size(tok, &v) || v == 0)) {
            fprintf(stderr, "ptxkit bench reduce: bad size '%s'\n", tok);
            return false;
        }
        b->sizes[b->size_count++] = log2 ? (size_t)1 << k : v;
    }
    return b->size_count > 0;
}

static bool parse_args(int argc, char **argv, reduce_bench *b, int *exit_code) {
    *b = (reduce_bench){.reps = 30, .warmup = 5, .ceiling = true};
    parse_names("sum,max", op_name_at, PTXKIT_REDUCE_OP_COUNT, b->ops);
    parse_names("int32,float32,float64", type_name_at, PTXKIT_DTYPE_COUNT, b->types);
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
        } else if (!v) {
            ok = false;
        } else if (strcmp(a, "--ops") == 0) {
            ok = parse_names(v, op_name_at, PTXKIT_REDUCE_OP_COUNT, b->ops);
        } else if (strcmp(a, "--types") == 0) {
            ok = parse_names(v, type_name_at, PTXKIT_DTYPE_COUNT, b->types);
        } else if (strcmp(a, "--log2") == 0 || strcmp(a, "--sizes") == 0) {
            ok = parse_sizes(v, a[2] == 'l', b);
        } else if (strcmp(a, "--reps") == 0) {
            ok = cli_arg_int("bench reduce", a, v, 1, 10000, &b->reps);
        } else if (strcmp(a, "--warmup") == 0) {
            ok = cli_arg_int("bench reduce", a, v, 0, 1000, &b->warmup);
        } else if (strcmp(a, "--passes") == 0) {
            int passes = 0;
            ok = cli_arg_int("bench reduce", a, v, 1, 2, &passes);
            b->passes = passes == 2 ? REDUCE_PASSES_TWO : REDUCE_PASSES_ONE;
        } else if (strcmp(a, "--path") == 0) {
            b->options.path = strcmp(v, "jit") == 0   ? PTXKIT_PATH_JIT
                              : strcmp(v, "ptx") == 0 ? PTXKIT_PATH_PTX
                                                      : PTXKIT_PATH_AUTO;
            ok = strcmp(v, "jit") == 0 || strcmp(v, "ptx") == 0 || strcmp(v, "auto") == 0;
        } else if (strcmp(a, "--block") == 0) {
            ok = cli_arg_int("bench reduce", a, v, 0, 1024, &b->options.block_size);
        } else if (strcmp(a, "--items") == 0) {
            ok = cli_arg_int("bench reduce", a, v, 0, 64, &b->options.items_per_thread);
        } else if (strcmp(a, "--vector") == 0) {
            ok = cli_arg_int("bench reduce", a, v, 0, 16, &b->options.vector_bytes);
        } else if (strcmp(a, "--blocks-per-sm") == 0) {
            ok = cli_arg_int("bench reduce", a, v, 0, 64, &b->options.blocks_per_sm);
        } else if (strcmp(a, "--load") == 0) {
            ok = ptxkit_load_op_parse(v, &b->options.load_op) == PTXKIT_SUCCESS;
        } else {
            fprintf(stderr, "ptxkit bench reduce: unexpected argument '%s'\n", a);
            usage(stderr);
            return false;
        }
        if (!ok) {
            fprintf(stderr, "ptxkit bench reduce: bad or missing value for %s\n", a);
            usage(stderr);
            return false;
        }
        i++;
    }
    return true;
}

/* ---- CUB --------------------------------------------------------------- */

static bool executable_file(const char *path) { return path && path[0] && access(path, X_OK) == 0; }

static bool find_cub_program(char *path, size_t size) {
    const char *env = getenv("PTXKIT_CUB_BENCH");
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
    static const char *const places[] = {"%s/ptxkit-cub-reduce", "%s/../bench/ptxkit-cub-reduce"};
    for (size_t i = 0; i < sizeof places / sizeof places[0]; i++) {
        int len = snprintf(path, size, places[i], self);
        if (len > 0 && (size_t)len < size && executable_file(path)) return true;
    }
#ifdef PTXKIT_LIBEXEC_DIR /* installed: a helper, not a command, so not in bin/ */
    int installed = snprintf(path, size, "%s/ptxkit-cub-reduce", PTXKIT_LIBEXEC_DIR);
    if (installed > 0 && (size_t)installed < size && executable_file(path)) return true;
#endif
    return false;
}

/* Runs the CUB program on the same combinations and sizes; *results gets
 * one entry per line it printed. */
static bool run_cub(const reduce_bench *b, int device, cub_result **results, int *count) {
    char program[PATH_MAX];
    if (!find_cub_program(program, sizeof program)) {
        fprintf(stderr,
                "ptxkit bench reduce: --compare needs the ptxkit-cub-reduce program (not found beside ptxkit, in "
                "../bench, libexec/ptxkit or at $PTXKIT_CUB_BENCH); configure with -Dcub_compare=enabled where nvcc exists\n");
        return false;
    }
    if (strchr(program, '\'')) {
        fprintf(stderr, "ptxkit bench reduce: cannot run a program whose path has a quote: %s\n", program);
        return false;
    }
    char ops[128] = "", types[128] = "", sizes[MAX_SIZES * 24] = "";
    for (int i = 0; i < PTXKIT_REDUCE_OP_COUNT; i++)
        if (b->ops[i]) snprintf(ops + strlen(ops), sizeof ops - strlen(ops), "%s%s", ops[0] ? "," : "", op_name_at(i));
    for (int i = 0; i < PTXKIT_DTYPE_COUNT; i++)
        if (b->types[i])
            snprintf(types + strlen(types), sizeof types - strlen(types), "%s%s", types[0] ? "," : "", type_name_at(i));
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

/* ---- the benchmark ------------------------------------------------------ */

/* Read ceilings by byte count, measured once each. */
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
    /* The ceiling kernel reads whole 16-byte words. */
    ptxkit_status st = measure_read_gbs(ctx, bytes < 16 ? 16 : bytes, gbs);
    if (st == PTXKIT_SUCCESS && c->count < 2 * MAX_SIZES) {
        c->bytes[c->count] = bytes;
        c->gbs[c->count++] = *gbs;
    }
    return st;
}

int bench_reduce(int argc, char **argv) {
    cli_common common;
    if (!cli_parse_common(&argc, argv, &common)) return 2;
    reduce_bench b;
    int code;
    if (!parse_args(argc, argv, &b, &code)) return code;

    cub_result *cub = NULL;
    int cub_count = 0;
    if (b.compare && !run_cub(&b, common.device, &cub, &cub_count)) {
        free(cub);
        return 1;
    }
    ptxkit_context *ctx = cli_open_context("bench reduce", common.device);
    if (!ctx) {
        free(cub);
        return 1;
    }
    size_t max_bytes = 16;
    for (int s = 0; s < b.size_count; s++)
        for (int t = 0; t < PTXKIT_DTYPE_COUNT; t++)
            if (b.types[t] && b.sizes[s] * ptxkit_dtype_size((ptxkit_dtype)t) > max_bytes)
                max_bytes = b.sizes[s] * ptxkit_dtype_size((ptxkit_dtype)t);
    ptxkit_device_info dev;
    ptxkit_device_info_get(ctx, &dev);
    char title[512];
    snprintf(title, sizeof title,
             "ptxkit_reduce on %s (GB/s = n x element bytes read per second; read_GBps: streaming-read ceiling of the "
             "same bytes, this run; median of %d%s)",
             dev.name, b.reps, b.compare ? "; speedup = CUB time / ptxkit time" : "");
    const char *headers[] = {"op",        "type",     "n",      "time_us",  "GBps",
                             "read_GBps", "pct_read", "cub_us", "cub_GBps", "speedup"};
    cli_table *t = table_new(title, b.compare ? 10 : 7, headers);
    table_types(t, b.compare ? "ssnnnnnnnn" : "ssnnnnn");
    ceiling_cache ceilings = {.count = 0};
    timed_reduce r = {.b = &b};
    ptxkit_status st = ptxkit_malloc(ctx, max_bytes, &r.in);
    if (st == PTXKIT_SUCCESS) st = ptxkit_malloc(ctx, 64, &r.out);
    if (st == PTXKIT_SUCCESS) st = fill_random_words(ctx, r.in, max_bytes, 11);
    for (int op = 0; op < PTXKIT_REDUCE_OP_COUNT && st == PTXKIT_SUCCESS; op++)
        for (int type = 0; type < PTXKIT_DTYPE_COUNT && st == PTXKIT_SUCCESS; type++) {
            if (!b.ops[op] || !b.types[type] || !reduce_supported((ptxkit_reduce_op)op, (ptxkit_dtype)type)) continue;
            r.op = (ptxkit_reduce_op)op;
            r.type = (ptxkit_dtype)type;
            size_t elem = ptxkit_dtype_size(r.type);
            for (int s = 0; s < b.size_count && st == PTXKIT_SUCCESS; s++) {
                r.n = b.sizes[s];
                float ms = 0;
                st = time_median_ms(ctx, run_reduce, &r, b.warmup, b.reps, &ms);
                double ceiling = 0;
                if (st == PTXKIT_SUCCESS && b.ceiling) st = ceiling_for(ctx, &ceilings, r.n * elem, &ceiling);
                if (st != PTXKIT_SUCCESS) break;
                double bytes = (double)r.n * (double)elem, gbs = bytes / (ms * 1e-3) / 1e9;
                char ceil_text[32] = "-", pct_text[32] = "-", cub_us[32] = "-", cub_gbs[32] = "-", speedup[32] = "-";
                if (b.ceiling) {
                    snprintf(ceil_text, sizeof ceil_text, "%.0f", ceiling);
                    snprintf(pct_text, sizeof pct_text, "%.1f", 100.0 * gbs / ceiling);
                }
                const cub_result *c = cub_find(cub, cub_count, op, type, r.n);
                if (c && c->ms > 0) {
                    snprintf(cub_us, sizeof cub_us, "%.2f", c->ms * 1e3);
                    snprintf(cub_gbs, sizeof cub_gbs, "%.1f", bytes / (c->ms * 1e-3) / 1e9);
                    snprintf(speedup, sizeof speedup, "%.3f", c->ms / ms);
                }
                table_addf(t, "%s\t%s\t%zu\t%.2f\t%.1f\t%s\t%s\t%s\t%s\t%s", op_name_at(op), type_name_at(type), r.n,
                           ms * 1e3, gbs, ceil_text, pct_text, cub_us, cub_gbs, speedup);
            }
        }
    if (st != PTXKIT_SUCCESS) cli_fail("bench reduce", ctx, st);
    table_print(t, common.format, stdout);
    table_free(t);
    free(cub);
    ptxkit_free(ctx, r.in);
    ptxkit_free(ctx, r.out);
    ptxkit_context_close(ctx);
    return st == PTXKIT_SUCCESS ? 0 : 1;
}
