/* ptxkit bench gemm: ptxkit_gemm by type, operand layout and shape, in
 * TFLOP/s and as a share of the GPU's peak from its clock, and with
 * --compare next to cuBLAS (dlopen'ed here, FP32 in pedantic mode) on the
 * same buffers in the same run. --tiles times given configurations instead
 * of the tuned or built-in one (the sweep that chose the defaults). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "bench_harness.h"
#include "cli.h"
#include "commands.h"
#include "gemm_common.h"
#include "ptxkit.h"
#include "ptxkit_ops.h"

enum { MAX_SHAPES = 32, MAX_TILES = 48, MAX_OPS = 4 };

typedef struct gemm_bench {
    bool types[2]; /* float32, float64 */
    bool ops[MAX_OPS]; /* nn, nt, tn, tt */
    size_t shapes[MAX_SHAPES][3];
    int shape_count, reps, warmup;
    gemm_tiles tiles[MAX_TILES]; /* all zero: the tuned or built-in configuration */
    int tile_count;
    bool sweep; /* also gemm_sweep_configs of each type */
    bool compare, check, pedantic_f64, no_cross_prefetch, no_tensor_maps, f32_cuda_cores;
    int mma_k; /* 0: the tensor-core kernel's default */
    int stream_k; /* ptxkit_gemm_stream_k_set's value */
} gemm_bench;

static const char *const op_names[MAX_OPS + 1] = {"nn", "nt", "tn", "tt", NULL};

static const char gemm_usage[] =
    "usage: ptxkit bench gemm [--compare] [--types LIST] [--ops LIST] [--shapes LIST] [--tiles LIST]\n"
    "                         [--reps N] [--warmup N] [--check] [--cublas-f64 default|pedantic]\n"
    "                         [--no-cross-prefetch] [--mma-k 4|8|16] [--no-tensor-maps]\n"
    "                         [--stream-k auto|off|always] [--f32-cuda-cores] [--csv|--json] [--json FILE]\n"
    "                         [--csv FILE] [--md FILE] [--device N]\n";

static const char gemm_help[] =
    "Time (median of --reps after --warmup, CUDA events) and TFLOP/s (2 m n k per second) of ptxkit_gemm,\n"
    "C = A B with beta 0, A, B and C dense, row-major and 16-byte aligned, inputs uniform in [-1, 1), and\n"
    "the share of the GPU's peak (SM clock x SMs x FMA lanes per SM x 2: 128 FP32 lanes on sm_90; float64\n"
    "runs on the FP64 tensor cores from sm_80 on, and its peak is theirs there, 128 lanes' worth on sm_90\n"
    "and 64 on sm_80, twice the CUDA cores'; float32 on sm_90 runs on them too, whose rate there is its\n"
    "CUDA cores'); each row with the count of timed runs and the fastest and\n"
    "slowest. --compare also times cuBLAS on the same buffers, in turns with ptxkit (a run of each, the\n"
    "order alternating, so that both run at the same clocks: a GPU at its power cap slows within a\n"
    "fraction of a second): cublasSgemm in CUBLAS_PEDANTIC_MATH (FMA, no tensor cores) and cublasDgemm\n"
    "in the default math mode, through dlopen of $PTXKIT_CUBLAS, else libcublas.so.13, .so.12,\n"
    "libcublas.so, then the build's toolkit's lib64/libcublas.so (without it the columns say so);\n"
    "pct_cublas is cuBLAS's time over ptxkit's in percent.\n"
    "--check compares ptxkit's C with cuBLAS's (max |difference| over max |C|); for float32 it also gives\n"
    "each one's distance from the product in float64 of the same inputs (ptxkit_gemm float64: its own\n"
    "rounding is 2^29 times finer), columns exact and cublas_exact. --cublas-f64 pedantic runs\n"
    "cublasDgemm in CUBLAS_PEDANTIC_MATH too. --no-cross-prefetch is an experiment switch: the main loop\n"
    "loads a k-tile's first fragments after the barrier that starts it rather than during the previous\n"
    "tile's last k-step. --mma-k is another: the k depth of the float64 tensor-core kernel's mma (default\n"
    "8 with tensor maps where that costs no block an SM, else 4; mma.m16n8k4 and k8 on sm_90; deeper ones\n"
    "need more registers, which on the cp.async path only smaller tiles leave).\n"
    "--no-tensor-maps is a third: that kernel copies its tiles with cp.async (as on sm_80) where it would\n"
    "take the tensor memory accelerator (sm_90, nn, 16-byte-aligned operands).\n"
    "--stream-k off runs every tile of the CUDA-core kernel in whole blocks, as before stream-K (auto, the\n"
    "default: the tiles past the last whole wave as stream-K where that wave would idle SMs; always: at\n"
    "every shape with two k-tiles or more).\n"
    "--f32-cuda-cores runs float32 on the CUDA cores (by default it runs on the FP64 tensor cores on\n"
    "sm_90, as float64: exact products, double sums, C rounded to float once).\n"
    "  --types LIST   float32, float64 (default both)\n"
    "  --ops LIST     nn, nt, tn, tt: op(A) op(B), t for transposed storage (default nn)\n"
    "  --shapes LIST  MxNxK or N (a cube); default 256,512,1024,2048,4096,8192,64x4096x4096,\n"
    "                 4096x64x4096,4096x4096x64,1000x1x1000\n"
    "  --tiles LIST   configurations to time, each BMxBNxBK:TMxTN:WARPS_M:STAGES[:SPLIT_K], auto (the\n"
    "                 tuned or built-in one, the default) or sweep (the candidates the defaults were chosen\n"
    "                 from), separated by commas\n";

static bool parse_shapes(const char *text, void *value, char *why, size_t why_size) {
    gemm_bench *b = value;
    snprintf(why, why_size, "takes MxNxK or N (a cube), each side 1 to 2^20, comma-separated");
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", text);
    b->shape_count = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        unsigned long long m, n, k;
        char extra;
        if (b->shape_count == MAX_SHAPES) return false;
        if (sscanf(tok, "%llux%llux%llu%c", &m, &n, &k, &extra) == 3) {
        } else if (sscanf(tok, "%llu%c", &m, &extra) == 1) {
            n = k = m;
        } else {
            return false;
        }
        if (!m || !n || !k || m > (1u << 20) || n > (1u << 20) || k > (1u << 20)) return false;
        size_t *s = b->shapes[b->shape_count++];
        s[0] = (size_t)m, s[1] = (size_t)n, s[2] = (size_t)k;
    }
    return b->shape_count > 0;
}

static bool parse_tiles(const char *text, void *value, char *why, size_t why_size) {
    gemm_bench *b = value;
    snprintf(why, why_size, "takes BMxBNxBK:TMxTN:WARPS_M:STAGES[:SPLIT_K], auto or sweep, comma-separated");
    char buf[2048];
    snprintf(buf, sizeof buf, "%s", text);
    b->tile_count = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (b->tile_count == MAX_TILES) return false;
        if (strcmp(tok, "sweep") == 0) {
            b->sweep = true;
            continue;
        }
        gemm_tiles *t = &b->tiles[b->tile_count++];
        memset(t, 0, sizeof *t);
        if (strcmp(tok, "auto") == 0) continue;
        char extra;
        int got = sscanf(tok, "%dx%dx%d:%dx%d:%d:%d:%d%c", &t->bm, &t->bn, &t->bk, &t->tm, &t->tn, &t->warps_m,
                         &t->stages, &t->split_k, &extra);
        if (got != 7 && got != 8) return false;
    }
    return b->tile_count > 0 || b->sweep;
}

/* The configurations timed for a type: the listed ones, then the sweep's. */
static int tiles_for(const gemm_bench *b, ptxkit_context *ctx, ptxkit_dtype type, gemm_tiles *out) {
    int count = 0;
    for (int i = 0; i < b->tile_count; i++) out[count++] = b->tiles[i];
    if (b->sweep) {
        int n = 0, room = 2 * MAX_TILES - count;
        ptxkit_config sweep[2 * MAX_TILES];
        if (ptxkit_gemm_sweep_tiles(ctx, type, sweep, room, &n) == PTXKIT_SUCCESS)
            for (int i = 0; i < n && i < room; i++) out[count++] = gemm_tiles_from(&sweep[i]);
    }
    return count;
}

/* The tiles a row runs: split_k as ptxkit_gemm chooses it by shape where
 * the tiles leave it 0. */
static gemm_tiles with_split(ptxkit_context *ctx, ptxkit_dtype type, gemm_tiles tiles, size_t m, size_t n, size_t k) {
    int split;
    ptxkit_config config;
    if (ptxkit_gemm_split_k_get(ctx, type, gemm_tiles_config(&tiles, &config), m, n, k, &split) == PTXKIT_SUCCESS)
        tiles.split_k = split;
    return tiles;
}

static const char *const type_names[] = {"float32", "float64", NULL};

/* Returns -1 to run, else the exit status. */
static int parse_args(int argc, char **argv, gemm_bench *b, cli_common *common) {
    memset(b, 0, sizeof *b);
    b->types[0] = b->types[1] = true;
    b->ops[0] = true;
    b->reps = 20;
    b->warmup = 3;
    b->tile_count = 1; /* auto */
    char why[160];
    parse_shapes("256,512,1024,2048,4096,8192,64x4096x4096,4096x64x4096,4096x4096x64,1000x1x1000", b, why, sizeof why);
    int cublas_f64 = 0, stream_k = 0;
    static const char *const f64_modes[] = {"default", "pedantic", NULL};
    static const char *const stream_k_modes[] = {"auto", "off", "always", NULL};
    const arg_option options[] = {
        {.name = "types", .kind = ARG_CHOICES, .value = b->types, .names = type_names},
        {.name = "ops", .kind = ARG_CHOICES, .value = b->ops, .names = op_names},
        {.name = "shapes", .kind = ARG_PARSE, .value = b, .parse = parse_shapes},
        {.name = "tiles", .kind = ARG_PARSE, .value = b, .parse = parse_tiles},
        {.name = "reps", .kind = ARG_INT, .value = &b->reps, .lo = 1, .hi = 10000},
        {.name = "warmup", .kind = ARG_INT, .value = &b->warmup, .lo = 0, .hi = 1000},
        {.name = "compare", .kind = ARG_FLAG, .value = &b->compare},
        {.name = "check", .kind = ARG_FLAG, .value = &b->check},
        {.name = "cublas-f64", .kind = ARG_CHOICE, .value = &cublas_f64, .names = f64_modes},
        {.name = "no-cross-prefetch", .kind = ARG_FLAG, .value = &b->no_cross_prefetch},
        {.name = "no-tensor-maps", .kind = ARG_FLAG, .value = &b->no_tensor_maps},
        {.name = "mma-k", .kind = ARG_INT, .value = &b->mma_k, .lo = 4, .hi = 16},
        {.name = "stream-k", .kind = ARG_CHOICE, .value = &stream_k, .names = stream_k_modes},
        {.name = "f32-cuda-cores", .kind = ARG_FLAG, .value = &b->f32_cuda_cores},
        {0}};
    const arg_spec spec = {.command = "bench gemm", .usage = gemm_usage, .help = gemm_help,
                           .common = ARGS_DEVICE | ARGS_TABLES, .options = options};
    int rc = args_parse(&spec, argc, argv, common, NULL, NULL);
    b->pedantic_f64 = cublas_f64 == 1;
    b->stream_k = stream_k == 0 ? -1 : stream_k == 1 ? 0 : 1;
    return rc;
}

typedef struct timed_gemm {
    ptxkit_dtype type;
    ptxkit_gemm_op op_a, op_b;
    size_t m, n, k, lda, ldb;
    ptxkit_dptr a, b, c;
    ptxkit_config config; /* the configuration timed */
    cublas_lib *cublas;
} timed_gemm;

static ptxkit_status run_ptxkit(ptxkit_context *ctx, ptxkit_stream *s, void *arg) {
    timed_gemm *g = arg;
    return ptxkit_gemm(ctx, g->type, g->op_a, g->op_b, g->m, g->n, g->k, 1.0, g->a, g->lda, g->b, g->ldb, 0.0, g->c,
                       g->n, &g->config, s);
}

static ptxkit_status run_cublas(ptxkit_context *ctx, ptxkit_stream *s, void *arg) {
    (void)ctx;
    timed_gemm *g = arg;
    return cublas_gemm(g->cublas, g->type, g->op_a, g->op_b, g->m, g->n, g->k, 1.0, g->a, g->lda, g->b, g->ldb, 0.0,
                       g->c, g->n, s);
}

/* max |x - y| / max |y| over count elements of two device buffers, each
 * of float32 or float64 (x_type, y_type). */
static double relative_difference(ptxkit_context *ctx, ptxkit_dtype x_type, ptxkit_dptr x, ptxkit_dtype y_type,
                                  ptxkit_dptr y, size_t count) {
    size_t ex = ptxkit_dtype_size(x_type), ey = ptxkit_dtype_size(y_type);
    unsigned char *hx = malloc(count * ex), *hy = malloc(count * ey);
    double diff = -1, scale = 0;
    if (hx && hy && ptxkit_memory_read(ctx, hx, x, count * ex) == PTXKIT_SUCCESS &&
        ptxkit_memory_read(ctx, hy, y, count * ey) == PTXKIT_SUCCESS) {
        diff = 0;
        for (size_t i = 0; i < count; i++) {
            double vx = ex == 8 ? ((double *)hx)[i] : ((float *)hx)[i];
            double vy = ey == 8 ? ((double *)hy)[i] : ((float *)hy)[i];
            double d = fabs(vx - vy);
            if (!(d <= diff)) diff = d; /* NaN sticks */
            if (fabs(vy) > scale) scale = fabs(vy);
        }
        diff = scale > 0 ? diff / scale : diff;
    }
    free(hx);
    free(hy);
    return diff;
}

/* The float32 inputs of g widened to double (into a64 and b64) and their
 * product by ptxkit_gemm float64 into c64: the reference of --check's
 * exact columns. */
static ptxkit_status float64_product(ptxkit_context *ctx, const timed_gemm *g, ptxkit_dptr a64, ptxkit_dptr b64,
                                     ptxkit_dptr c64) {
    const size_t counts[2] = {g->m * g->k, g->k * g->n};
    const ptxkit_dptr from[2] = {g->a, g->b}, to[2] = {a64, b64};
    ptxkit_status st = PTXKIT_SUCCESS;
    for (int i = 0; i < 2 && st == PTXKIT_SUCCESS; i++) {
        float *f = malloc(counts[i] * sizeof *f);
        double *d = malloc(counts[i] * sizeof *d);
        st = f && d ? ptxkit_memory_read(ctx, f, from[i], counts[i] * sizeof *f) : PTXKIT_ERROR_OUT_OF_MEMORY;
        for (size_t j = 0; st == PTXKIT_SUCCESS && j < counts[i]; j++) d[j] = f[j];
        if (st == PTXKIT_SUCCESS) st = ptxkit_memory_write(ctx, to[i], d, counts[i] * sizeof *d);
        free(f);
        free(d);
    }
    if (st == PTXKIT_SUCCESS)
        st = ptxkit_gemm(ctx, PTXKIT_FLOAT64, g->op_a, g->op_b, g->m, g->n, g->k, 1.0, a64, g->lda, b64, g->ldb, 0.0,
                         c64, g->n, NULL, NULL);
    /* done before the timed runs start on their own stream */
    if (st == PTXKIT_SUCCESS) st = ptxkit_context_synchronize(ctx);
    return st;
}

/* A row's cuBLAS side, timed in turns with each configuration. */
typedef struct gemm_row {
    timed_gemm g; /* first: the row is run_ptxkit's argument too */
    bool check;
    ptxkit_dptr c_ref;
    ptxkit_dptr c64; /* float32 rows under --check: the float64 product, else 0 */
    double flops;
    float cublas_ms;
    char cub_us[32], cub_tf[32];
    const char *source;
} gemm_row;

/* cuBLAS's run of a row, into the reference C. */
static ptxkit_status run_cublas_row(ptxkit_context *ctx, ptxkit_stream *s, void *arg) {
    gemm_row *row = arg;
    ptxkit_dptr c = row->g.c;
    row->g.c = row->c_ref;
    ptxkit_status st = run_cublas(ctx, s, &row->g);
    row->g.c = c;
    return st;
}

/* ptxkit's samples and cuBLAS's in turns (time_turns_ms): both run at the
 * same clocks. A sustained DGEMM holds an H200 at its power cap, whose
 * clocks fall within a fraction of a second, so timed one after the other
 * the later ran slower (notebook section 26). cuBLAS's median goes to the
 * row. */
static ptxkit_status time_in_turns(bench *h, const bench_case *c, float *samples) {
    gemm_row *row = c->arg;
    const timed_fn fns[2] = {run_cublas_row, run_ptxkit};
    void *const args[2] = {row, &row->g};
    float *times = calloc(2 * (size_t)h->reps, sizeof *times);
    if (!times) return PTXKIT_ERROR_OUT_OF_MEMORY;
    ptxkit_status st = time_turns_ms(h->ctx, 2, fns, args, h->warmup, h->reps, times);
    if (st == PTXKIT_SUCCESS) {
        memcpy(samples, times + h->reps, (size_t)h->reps * sizeof *samples);
        time_stats ts;
        stats_of_samples(times, h->reps, &ts);
        row->cublas_ms = (float)ts.median_ms;
        snprintf(row->cub_us, sizeof row->cub_us, "%.1f", ts.median_ms * 1e3);
        snprintf(row->cub_tf, sizeof row->cub_tf, "%.2f", row->flops / (ts.median_ms * 1e-3) / 1e12);
    }
    free(times);
    return st;
}

/* cuBLAS's cells, the share of its time, the check against its C and the
 * configuration's source ("-" for cuBLAS where the configuration did not
 * run: they are timed in turns). */
static ptxkit_status gemm_cells(bench *h, void *arg, bench_result *out) {
    gemm_row *row = arg;
    const timed_gemm *g = &row->g;
    char pct_cub[32] = "-", check[32] = "-", exact[32] = "-", cub_exact[32] = "-";
    if (out->timed && row->cublas_ms > 0) snprintf(pct_cub, sizeof pct_cub, "%.1f", 100.0 * row->cublas_ms / out->ts.median_ms);
    const size_t count = g->m * g->n;
    if (out->timed && row->check)
        snprintf(check, sizeof check, "%.2e", relative_difference(h->ctx, g->type, g->c, g->type, row->c_ref, count));
    if (out->timed && row->check && row->c64) {
        snprintf(exact, sizeof exact, "%.2e", relative_difference(h->ctx, g->type, g->c, PTXKIT_FLOAT64, row->c64, count));
        snprintf(cub_exact, sizeof cub_exact, "%.2e",
                 relative_difference(h->ctx, g->type, row->c_ref, PTXKIT_FLOAT64, row->c64, count));
    }
    snprintf(out->cells, sizeof out->cells, "%s\t%s\t%s\t%s\t%s\t%s\t%s", row->cub_us, row->cub_tf, pct_cub, check, exact,
             cub_exact, row->source);
    return PTXKIT_SUCCESS;
}

int bench_gemm(int argc, char **argv) {
    cli_common common;
    gemm_bench b;
    int rc = parse_args(argc, argv, &b, &common);
    if (rc >= 0) return rc;
    if (b.mma_k && b.mma_k != 4 && b.mma_k != 8 && b.mma_k != 16) {
        fprintf(stderr, "ptxkit bench gemm: --mma-k takes 4, 8 or 16\n");
        return 2;
    }
    bench h;
    if (!bench_begin(&h, "bench gemm", &common, b.warmup, b.reps, 0, NULL, NULL)) return 1;
    h.rate_unit = 1e12; /* TFLOP/s */
    ptxkit_context *ctx = h.ctx;
    /* the switches are the context's: every GEMM of this run sees them */
    if ((b.no_cross_prefetch && ptxkit_gemm_cross_prefetch_set(ctx, 0) != PTXKIT_SUCCESS) ||
        (b.mma_k && ptxkit_gemm_mma_k_set(ctx, b.mma_k) != PTXKIT_SUCCESS) ||
        (b.no_tensor_maps && ptxkit_gemm_tensor_maps_set(ctx, 0) != PTXKIT_SUCCESS) ||
        (b.stream_k >= 0 && ptxkit_gemm_stream_k_set(ctx, b.stream_k) != PTXKIT_SUCCESS) ||
        (b.f32_cuda_cores && ptxkit_gemm_f32_tensor_cores_set(ctx, 0) != PTXKIT_SUCCESS)) {
        fprintf(stderr, "ptxkit bench gemm: %s\n", ptxkit_last_error());
        ptxkit_context_destroy(ctx);
        return 1;
    }

    char why[512] = "";
    cublas_lib *cublas = b.compare || b.check ? cublas_open(ctx, why, sizeof why) : NULL;
    if ((b.compare || b.check) && !cublas)
        fprintf(stderr, "ptxkit bench gemm: no cuBLAS comparison: %s\n", why);
    cublas_pedantic_f64(cublas, b.pedantic_f64);

    /* buffers for the largest shape of the widest type */
    size_t max_a = 1, max_b = 1, max_c = 1, elem = b.types[1] ? 8 : 4;
    for (int s = 0; s < b.shape_count; s++) {
        size_t m = b.shapes[s][0], n = b.shapes[s][1], k = b.shapes[s][2];
        if (m * k > max_a) max_a = m * k;
        if (k * n > max_b) max_b = k * n;
        if (m * n > max_c) max_c = m * n;
    }
    ptxkit_dptr a = 0, bm = 0, c = 0, c_ref = 0;
    ptxkit_status st = ptxkit_memory_alloc(ctx, max_a * elem, &a);
    if (st == PTXKIT_SUCCESS) st = ptxkit_memory_alloc(ctx, max_b * elem, &bm);
    if (st == PTXKIT_SUCCESS) st = ptxkit_memory_alloc(ctx, max_c * elem, &c);
    if (st == PTXKIT_SUCCESS && cublas) st = ptxkit_memory_alloc(ctx, max_c * elem, &c_ref);
    /* --check's float64 product of float32's inputs */
    ptxkit_dptr a64 = 0, b64 = 0, c64 = 0;
    const bool exact = b.check && cublas && b.types[0];
    if (st == PTXKIT_SUCCESS && exact) st = ptxkit_memory_alloc(ctx, max_a * sizeof(double), &a64);
    if (st == PTXKIT_SUCCESS && exact) st = ptxkit_memory_alloc(ctx, max_b * sizeof(double), &b64);
    if (st == PTXKIT_SUCCESS && exact) st = ptxkit_memory_alloc(ctx, max_c * sizeof(double), &c64);

    /* every kernel the run needs, compiled ahead in parallel */
    gemm_tiles list[2][2 * MAX_TILES];
    int list_count[2] = {tiles_for(&b, ctx, PTXKIT_FLOAT32, list[0]), tiles_for(&b, ctx, PTXKIT_FLOAT64, list[1])};
    gemm_job *jobs = calloc((size_t)4 * MAX_OPS * (size_t)b.shape_count * MAX_TILES + 1, sizeof *jobs);
    int job_count = 0;
    for (int t = 0; jobs && st == PTXKIT_SUCCESS && t < 2; t++)
        for (int o = 0; b.types[t] && o < MAX_OPS; o++)
            for (int s = 0; b.ops[o] && s < b.shape_count; s++)
                for (int i = 0; i < list_count[t]; i++) {
                    gemm_job *j = &jobs[job_count++];
                    j->type = t ? PTXKIT_FLOAT64 : PTXKIT_FLOAT32;
                    j->op_a = o & 2 ? PTXKIT_GEMM_T : PTXKIT_GEMM_N;
                    j->op_b = o & 1 ? PTXKIT_GEMM_T : PTXKIT_GEMM_N;
                    j->tiles = list[t][i];
                    j->m = b.shapes[s][0], j->n = b.shapes[s][1], j->k = b.shapes[s][2];
                    ptxkit_config chosen;
                    if (!list[t][i].bm) {
                        if (ptxkit_gemm_config_get(ctx, j->type, b.shapes[s][0], b.shapes[s][1], b.shapes[s][2], &chosen,
                                                   NULL) == PTXKIT_SUCCESS)
                            j->tiles = gemm_tiles_from(&chosen);
                    } else j->tiles = with_split(ctx, j->type, list[t][i], b.shapes[s][0], b.shapes[s][1], b.shapes[s][2]);
                }
    if (st == PTXKIT_SUCCESS && jobs) gemm_prepare_all(ctx, jobs, job_count, 0); /* failures show in the rows */
    free(jobs);

    gemm_peak peak[2] = {gemm_peak_of(ctx, PTXKIT_FLOAT32), gemm_peak_of(ctx, PTXKIT_FLOAT64)};
    char title[768];
    snprintf(title, sizeof title,
             "ptxkit_gemm on %s (C = A B, row-major, beta 0; TFLOP/s = 2 m n k / time, median of %d; peak: %.0f MHz x "
             "%d SMs x 2 x %d FP32 / %d FP64 lanes = %.1f / %.1f TFLOP/s%s%s%s%s%s%s%s%s)",
             cli_device(ctx)->name, b.reps, peak[0].clock_khz / 1e3, peak[0].sm_count, peak[0].lanes, peak[1].lanes,
             peak[0].tflops, peak[1].tflops, cublas ? "; cuBLAS: " : b.compare ? "; cuBLAS not found" : "",
             cublas ? cublas_path(cublas) : "", cublas ? (b.pedantic_f64 ? ", FP64 pedantic too" : ", FP64 default math") : "",
             b.no_cross_prefetch ? "; main loop without the cross-tile fragment prefetch" : "",
             b.mma_k == 8 ? "; float64 mma k 8" : b.mma_k == 16 ? "; float64 mma k 16" : "",
             b.no_tensor_maps ? "; float64 copies by cp.async, not tensor maps" : "",
             b.stream_k == 0 ? "; no stream-K" : b.stream_k == 1 ? "; stream-K at every shape" : "",
             b.f32_cuda_cores ? "; float32 on the CUDA cores" : "");
    const bench_column columns[] = {
        COL_TEXT("type", "s"), COL_TEXT("ops", "s"), COL_TEXT("m", "n"), COL_TEXT("n", "n"), COL_TEXT("k", "n"),
        COL_TEXT("tiles", "s"), COL("time_us", BENCH_TIME_US, "%.1f"), COL("TFLOPs", BENCH_RATE, "%.2f"),
        {"pct_peak", BENCH_PERCENT, "%.1f", "0.0"}, COL_TEXT("cublas_us", "n"), COL_TEXT("cublas_TFLOPs", "n"),
        COL_TEXT("pct_cublas", "n"), COL_TEXT("check", "n"), COL_TEXT("exact", "n"), COL_TEXT("cublas_exact", "n"),
        COL_STATS, COL_TEXT(CONFIG_SOURCE_COLUMN, "s")};
    bench_table(&h, title, columns, sizeof columns / sizeof columns[0]);
    gemm_row row = {.g = {.a = a, .b = bm, .c = c, .cublas = cublas}, .check = b.check && cublas, .c_ref = c_ref};
    timed_gemm *g = &row.g;
    for (int t = 0; st == PTXKIT_SUCCESS && t < 2; t++)
        for (int o = 0; b.types[t] && o < MAX_OPS && st == PTXKIT_SUCCESS; o++)
            for (int s = 0; b.ops[o] && s < b.shape_count && st == PTXKIT_SUCCESS; s++) {
                g->type = t ? PTXKIT_FLOAT64 : PTXKIT_FLOAT32;
                g->op_a = o & 2 ? PTXKIT_GEMM_T : PTXKIT_GEMM_N;
                g->op_b = o & 1 ? PTXKIT_GEMM_T : PTXKIT_GEMM_N;
                g->m = b.shapes[s][0], g->n = b.shapes[s][1], g->k = b.shapes[s][2];
                g->lda = g->op_a == PTXKIT_GEMM_T ? g->m : g->k;
                g->ldb = g->op_b == PTXKIT_GEMM_T ? g->k : g->n;
                st = gemm_fill_uniform(ctx, g->type, a, g->m * g->k, 1);
                if (st == PTXKIT_SUCCESS) st = gemm_fill_uniform(ctx, g->type, bm, g->k * g->n, 2);
                row.c64 = exact && g->type == PTXKIT_FLOAT32 ? c64 : 0;
                if (st == PTXKIT_SUCCESS && row.c64) st = float64_product(ctx, g, a64, b64, c64);
                double flops = 2.0 * (double)g->m * (double)g->n * (double)g->k;
                row.flops = flops;
                for (int i = 0; i < list_count[t] && st == PTXKIT_SUCCESS; i++) {
                    gemm_tiles_config(&list[t][i], &g->config);
                    gemm_tiles used = list[t][i];
                    row.source = "-"; /* tiles of the sweep's own */
                    if (!used.bm) {
                        int tuned = 0;
                        ptxkit_config chosen;
                        if (ptxkit_gemm_config_get(ctx, g->type, g->m, g->n, g->k, &chosen, &tuned) == PTXKIT_SUCCESS)
                            used = gemm_tiles_from(&chosen);
                        row.source = tuned ? "tuned" : "default";
                    } else {
                        used = with_split(ctx, g->type, used, g->m, g->n, g->k);
                    }
                    char tiles[64], key[160];
                    gemm_tiles_format(&used, tiles, sizeof tiles);
                    snprintf(key, sizeof key, "%s\t%s\t%zu\t%zu\t%zu\t%s", ptxkit_dtype_name(g->type), op_names[o], g->m,
                             g->n, g->k, tiles);
                    row.cublas_ms = 0;
                    snprintf(row.cub_us, sizeof row.cub_us, "-");
                    snprintf(row.cub_tf, sizeof row.cub_tf, "-");
                    bench_case run = {.key = key, .run = run_ptxkit, .time = cublas ? time_in_turns : NULL,
                                      .teardown = gemm_cells, .arg = &row, .work = flops, .ceiling = peak[t].tflops,
                                      .row_on_failure = true};
                    ptxkit_status ran = bench_run(&h, st, &run, NULL);
                    if (ran != PTXKIT_SUCCESS) {
                        /* a configuration this GPU cannot run is a row, not the end of the sweep */
                        if (ran == PTXKIT_ERROR_CONTEXT_LOST) st = ran;
                        fprintf(stderr, "ptxkit bench gemm: %s %s %zux%zux%zu tiles %s: %s\n", ptxkit_dtype_name(g->type),
                                op_names[o], g->m, g->n, g->k, tiles, ptxkit_last_error());
                    }
                }
            }
    rc = bench_print(&h, st);
    cublas_close(cublas);
    ptxkit_memory_free(ctx, a);
    ptxkit_memory_free(ctx, bm);
    ptxkit_memory_free(ctx, c);
    if (c_ref) ptxkit_memory_free(ctx, c_ref);
    if (a64) ptxkit_memory_free(ctx, a64);
    if (b64) ptxkit_memory_free(ctx, b64);
    if (c64) ptxkit_memory_free(ctx, c64);
    ptxkit_context_destroy(ctx);
    return rc;
}
