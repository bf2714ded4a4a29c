/* GPU tests of the GEMM family: ptxkit_gemm (float32 and float64, every
 * op(A) x op(B), alpha/beta combinations, leading dimensions longer than a
 * row, aligned and not, the shapes 1x1x1, 17x33x65, 128x128x128,
 * 4097x4095x127, 64x4096x4096 and 1000x1x1000, float64 with odd leading
 * dimensions and k (on sm_80+ the tensor-core kernel), float64 forced onto
 * the CUDA cores (the kernel of older GPUs), forced split-K, stream-K, every
 * configuration of the benchmark's sweep, several streams at once, k == 0
 * and alpha == 0, results repeated bit for bit), its argument checks, and the steps of the lab's
 * matrix-multiply ladder.
 *
 * Reference: float64 on the CPU (long double sums would change nothing at
 * these sizes). An element passes when
 *   |C - ref| <= 2 (k + 2) u (|alpha| sum_k |a_ik b_kj| + |beta c_ij|)
 * with u = 2^-24 (float32) or 2^-53 (float64): twice the first-order bound
 * ptxkit.h documents for a sequential chain of k fused multiply-adds and
 * the alpha/beta epilogue (and for split-K, whose slices' chains are added
 * in order; float64 on the tensor cores sums in another fixed order, which
 * the same bound covers). Where both terms are zero the result must be exactly zero.
 * The largest shapes are checked on sampled rows (their first and last,
 * and rows on both sides of tile boundaries), every other element of C
 * must be finite, and C's padding columns and a guard after it must be
 * untouched. With beta == 0 C starts as NaN: an element that reads C, or is
 * never written, fails.
 *
 * PTXKIT_TEST_GEMM_SMALL=1 keeps only the small shapes and the first three
 * configurations of the sweep, and PTXKIT_TEST_GEMM_ONLY=NAME,... only the
 * tests whose names hold one of the NAMEs (for runs under
 * compute-sanitizer). */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ptxkit_ops.h"
#include "gemm/gemm.h"
#include "lab.h"
#include "ladders.h"
#include "runtime/objects.h"
#include "runtime/registry.h"
#include "test_util.h"

#define GUARD_ELEMS 64

static bool small_only;
static uint64_t rng;

typedef struct gemm_case {
    ptxkit_dtype type;
    ptxkit_gemm_op op_a, op_b;
    size_t m, n, k;
    double alpha, beta;
    size_t pad_a, pad_b, pad_c; /* leading dimension = stored row length + pad */
    gemm_config tiles;          /* all zero: tuned or built-in */
    ptxkit_stream *stream;
} gemm_case;

static size_t stored_rows(const gemm_case *c, int which) {
    if (which == 0) return c->op_a == PTXKIT_GEMM_T ? c->k : c->m;
    if (which == 1) return c->op_b == PTXKIT_GEMM_T ? c->n : c->k;
    return c->m;
}
static size_t stored_cols(const gemm_case *c, int which) {
    if (which == 0) return c->op_a == PTXKIT_GEMM_T ? c->m : c->k;
    if (which == 1) return c->op_b == PTXKIT_GEMM_T ? c->k : c->n;
    return c->n;
}
static size_t ld_of(const gemm_case *c, int which) {
    size_t pad = which == 0 ? c->pad_a : which == 1 ? c->pad_b : c->pad_c;
    size_t cols = stored_cols(c, which);
    return (cols ? cols : 1) + pad;
}

static double unit_roundoff(ptxkit_dtype type) { return type == PTXKIT_FLOAT64 ? ldexp(1.0, -53) : ldexp(1.0, -24); }

static double uniform(void) { return (double)(test_rand(&rng) >> 11) / (double)(1ull << 53) * 2.0 - 1.0; }

/* Host matrices in double (the values the device gets, exactly). */
typedef struct host_matrix {
    double *v;     /* rows x ld */
    size_t rows, ld;
} host_matrix;

static void make_matrix(host_matrix *h, size_t rows, size_t ld, ptxkit_dtype type, bool nan) {
    h->rows = rows;
    h->ld = ld;
    h->v = malloc((rows * ld + GUARD_ELEMS) * sizeof *h->v);
    assert_non_null(h->v);
    for (size_t i = 0; i < rows * ld + GUARD_ELEMS; i++) {
        double x = nan ? NAN : uniform();
        h->v[i] = type == PTXKIT_FLOAT32 ? (double)(float)x : x;
    }
}

static ptxkit_status upload(ptxkit_context *ctx, const host_matrix *h, ptxkit_dtype type, ptxkit_dptr *dev) {
    size_t count = h->rows * h->ld + GUARD_ELEMS, elem = ptxkit_dtype_size(type);
    void *buf = malloc(count * elem);
    if (!buf) return PTXKIT_ERROR_OUT_OF_MEMORY;
    for (size_t i = 0; i < count; i++) {
        if (elem == 8) ((double *)buf)[i] = h->v[i];
        else ((float *)buf)[i] = (float)h->v[i];
    }
    ptxkit_status st = ptxkit_memory_alloc(ctx, count * elem, dev);
    if (st == PTXKIT_SUCCESS) st = ptxkit_memory_write(ctx, *dev, buf, count * elem);
    free(buf);
    return st;
}

static double element(const gemm_case *c, const host_matrix *h, int which, size_t i, size_t j) {
    /* (i, j) of op(X) */
    bool trans = which == 0 ? c->op_a == PTXKIT_GEMM_T : c->op_b == PTXKIT_GEMM_T;
    return trans ? h->v[j * h->ld + i] : h->v[i * h->ld + j];
}

/* Rows of C checked against the reference: all of them for small shapes,
 * else a sample around tile boundaries. */
static size_t pick_rows(const gemm_case *c, size_t *rows, size_t max) {
    size_t m = c->m, work = m * c->n * (c->k ? c->k : 1), count = 0;
    if (work <= ((size_t)1 << 26) || m <= 16) {
        for (size_t i = 0; i < m && count < max; i++) rows[count++] = i;
        return count;
    }
    size_t want = ((size_t)1 << 26) / (c->n * (c->k ? c->k : 1));
    if (want < 8) want = 8;
    if (want > max) want = max;
    const size_t fixed[] = {0, 1, 63, 64, 127, 128, 255, 256, m / 2, m - 2, m - 1};
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
        if (fixed[i] < m && (count == 0 || rows[count - 1] != fixed[i])) rows[count++] = fixed[i];
    while (count < want) rows[count++] = (size_t)(test_rand(&rng) % m);
    return count;
}

/* Runs one case and checks it; returns the number of failures (printed). */
static int check_case(const gemm_case *c) {
    ptxkit_context *ctx = test_gpu();
    size_t elem = ptxkit_dtype_size(c->type);
    host_matrix ha, hb, hc;
    make_matrix(&ha, stored_rows(c, 0), ld_of(c, 0), c->type, false);
    make_matrix(&hb, stored_rows(c, 1), ld_of(c, 1), c->type, false);
    make_matrix(&hc, stored_rows(c, 2), ld_of(c, 2), c->type, c->beta == 0);
    ptxkit_dptr a = 0, b = 0, d = 0;
    assert_ok(ctx, upload(ctx, &ha, c->type, &a));
    assert_ok(ctx, upload(ctx, &hb, c->type, &b));
    assert_ok(ctx, upload(ctx, &hc, c->type, &d));
    ptxkit_config config;
    const ptxkit_config *tiles = NULL;
    if (c->tiles.bm || c->tiles.split_k) {
        /* only the fields set: a split_k alone leaves the tiles to the call */
        const int v[8] = {c->tiles.bm, c->tiles.bn, c->tiles.bk, c->tiles.tm, c->tiles.tn, c->tiles.warps_m,
                          c->tiles.stages, c->tiles.split_k};
        static const char *const names[8] = {"bm", "bn", "bk", "tm", "tn", "warps_m", "stages", "split_k"};
        config = (ptxkit_config){0};
        for (int i = 0; i < 8; i++)
            if (v[i]) assert_ok(ctx, ptxkit_config_set(&config, names[i], v[i]));
        tiles = &config;
    }
    assert_ok(ctx, ptxkit_gemm(ctx, c->type, c->op_a, c->op_b, c->m, c->n, c->k, c->alpha, a, ha.ld, b, hb.ld, c->beta,
                               d, hc.ld, tiles, c->stream));
    assert_ok(ctx, ptxkit_stream_synchronize(ctx, c->stream));
    size_t count = hc.rows * hc.ld + GUARD_ELEMS;
    unsigned char *out = malloc(count * elem);
    assert_non_null(out);
    assert_ok(ctx, ptxkit_memory_read(ctx, out, d, count * elem));

    int failures = 0;
    const double u = unit_roundoff(c->type);
    size_t *rows = malloc((c->m + 16) * sizeof *rows);
    double *sum = malloc((c->n + 1) * sizeof *sum), *mag = malloc((c->n + 1) * sizeof *mag);
    assert_true(rows && sum && mag);
    bool *checked = calloc(c->m + 1, 1);
    /* op(B) as a dense k x n array: the reference walks its rows */
    double *bop = malloc((c->k * c->n + 1) * sizeof *bop);
    assert_true(checked && bop);
    for (size_t p = 0; p < c->k; p++)
        for (size_t j = 0; j < c->n; j++) bop[p * c->n + j] = element(c, &hb, 1, p, j);
    size_t row_count = pick_rows(c, rows, c->m + 16);
    for (size_t r = 0; r < row_count && failures < 5; r++) {
        size_t i = rows[r];
        checked[i] = true;
        for (size_t j = 0; j < c->n; j++) sum[j] = mag[j] = 0;
        if (c->alpha != 0)
            for (size_t p = 0; p < c->k; p++) {
                double aip = element(c, &ha, 0, i, p);
                const double *brow = bop + p * c->n;
                for (size_t j = 0; j < c->n; j++) {
                    double t = aip * brow[j];
                    sum[j] += t;
                    mag[j] += fabs(t);
                }
            }
        for (size_t j = 0; j < c->n && failures < 5; j++) {
            double c0 = hc.v[i * hc.ld + j];
            double ref = c->alpha * sum[j] + (c->beta != 0 ? c->beta * c0 : 0);
            double bound = 2.0 * (double)(c->k + 2) * u * (fabs(c->alpha) * mag[j] + (c->beta != 0 ? fabs(c->beta * c0) : 0));
            size_t at = i * hc.ld + j;
            double got = elem == 8 ? ((double *)out)[at] : ((float *)out)[at];
            if (!(fabs(got - ref) <= bound)) {
                print_error("%s %s%s %zux%zux%zu alpha %g beta %g ld %zu/%zu/%zu: C[%zu][%zu] = %.17g, reference %.17g, "
                            "bound %.3g\n",
                            ptxkit_dtype_name(c->type), ptxkit_gemm_op_name(c->op_a), ptxkit_gemm_op_name(c->op_b), c->m,
                            c->n, c->k, c->alpha, c->beta, ha.ld, hb.ld, hc.ld, i, j, got, ref, bound);
                failures++;
            }
        }
    }
    /* every element finite; padding and guard untouched */
    for (size_t i = 0; i < hc.rows && failures < 5; i++)
        for (size_t j = 0; j < hc.ld && failures < 5; j++) {
            size_t at = i * hc.ld + j;
            double got = elem == 8 ? ((double *)out)[at] : ((float *)out)[at];
            bool ok = j < c->n ? (checked[i] || isfinite(got)) : memcmp(&got, &hc.v[at], sizeof got) == 0 ||
                                                                     (isnan(got) && isnan(hc.v[at]));
            if (!ok) {
                print_error("%s %zux%zux%zu: C[%zu][%zu] = %g %s\n", ptxkit_dtype_name(c->type), c->m, c->n, c->k, i, j,
                            got, j < c->n ? "is not finite" : "(padding) was written");
                failures++;
            }
        }
    for (size_t g = 0; g < GUARD_ELEMS && failures < 5; g++) {
        size_t at = hc.rows * hc.ld + g;
        double got = elem == 8 ? ((double *)out)[at] : ((float *)out)[at];
        if (!(got == hc.v[at] || (isnan(got) && isnan(hc.v[at])))) {
            print_error("%zux%zux%zu: the guard after C was written\n", c->m, c->n, c->k);
            failures++;
        }
    }
    free(rows);
    free(sum);
    free(mag);
    free(checked);
    free(bop);
    free(out);
    free(ha.v);
    free(hb.v);
    free(hc.v);
    ptxkit_memory_free(ctx, a);
    ptxkit_memory_free(ctx, b);
    ptxkit_memory_free(ctx, d);
    return failures;
}

/* ---- compiling ahead --------------------------------------------------------
 * Every case's kernels, from several threads at once, so that the cases
 * then run on loaded modules (compiles dominate a cold run otherwise).
 * Device memory from ptxkit_memory_alloc is 256-byte aligned, so a case's kernel
 * depends on its leading dimensions only: fake aligned addresses stand in. */
typedef struct warm_job {
    const gemm_case *cases;
    int count, next, failures;
    pthread_mutex_t lock;
} warm_job;

static void *warm_worker(void *arg) {
    warm_job *w = arg;
    ptxkit_context *ctx = test_gpu();
    for (;;) {
        pthread_mutex_lock(&w->lock);
        int i = w->next < w->count ? w->next++ : -1;
        pthread_mutex_unlock(&w->lock);
        if (i < 0) return NULL;
        const gemm_case *c = &w->cases[i];
        const gemm_config *tiles = c->tiles.bm || c->tiles.split_k ? &c->tiles : NULL;
        ptxkit_status st = gemm_prepare_call(ctx, c->type, c->op_a, c->op_b, c->m, c->n, c->k, c->alpha,
                                             (ptxkit_dptr)1 << 40, ld_of(c, 0), (ptxkit_dptr)2 << 40, ld_of(c, 1),
                                             c->beta, (ptxkit_dptr)3 << 40, ld_of(c, 2), tiles);
        if (st != PTXKIT_SUCCESS) {
            pthread_mutex_lock(&w->lock);
            w->failures++;
            print_error("compiling ahead: %s\n", ptxkit_last_error());
            pthread_mutex_unlock(&w->lock);
        }
    }
}

static void warm(const gemm_case *cases, int count) {
    warm_job w = {.cases = cases, .count = count};
    pthread_mutex_init(&w.lock, NULL);
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int threads = cpus < 1 ? 1 : cpus > 16 ? 16 : (int)cpus;
    pthread_t tids[16];
    int started = 0;
    for (; started < threads - 1; started++)
        if (pthread_create(&tids[started], NULL, warm_worker, &w) != 0) break;
    warm_worker(&w);
    for (int i = 0; i < started; i++) pthread_join(tids[i], NULL);
    pthread_mutex_destroy(&w.lock);
    assert_int_equal(w.failures, 0);
}

static int run_cases(const gemm_case *cases, int count) {
    warm(cases, count);
    int failures = 0;
    for (int i = 0; i < count; i++) failures += check_case(&cases[i]);
    return failures;
}

/* The cases again with the tensor maps off (the tensor-core kernel then
 * copies by cp.async: d, nn and aligned, at n 128 and a k of k_tile, no
 * longer takes the maps), then the switches sw back. */
static int run_cases_cp_async(ptxkit_context *ctx, const gemm_switches *sw, gemm_kind kind, const gemm_config *d,
                              size_t k_tile, const gemm_case *cases, int count) {
    gemm_switches off = *sw;
    off.tensor_maps = 0;
    assert_status(PTXKIT_SUCCESS, gemm_switches_set(ctx, &off));
    assert_int_equal(gemm_dmma_tma_mode(ctx, &off, kind, d, false, false, true, true, 128, k_tile), 0);
    int failures = run_cases(cases, count);
    assert_status(PTXKIT_SUCCESS, gemm_switches_set(ctx, sw));
    return failures;
}

/* ---- the shapes ------------------------------------------------------ */

static const size_t shapes[][3] = {{1, 1, 1}, {17, 33, 65}, {128, 128, 128}, {4097, 4095, 127}, {64, 4096, 4096},
                                   {1000, 1, 1000}};
#define SHAPE_COUNT (sizeof shapes / sizeof shapes[0])
static const double alpha_beta[][2] = {{1, 0}, {1.5, -0.5}, {0, 2}, {-1, 1}};

static bool big_shape(const size_t *s) { return s[0] * s[1] * s[2] > ((size_t)1 << 24); }

static void test_gemm_shapes(void **state) {
    (void)state;
    gemm_case *cases = calloc(2 * SHAPE_COUNT * 4 * 4, sizeof *cases);
    assert_non_null(cases);
    int count = 0;
    for (int t = 0; t < 2; t++)
        for (size_t s = 0; s < SHAPE_COUNT; s++) {
            bool big = big_shape(shapes[s]);
            if (big && small_only) continue;
            for (int ops = 0; ops < 4; ops++)
                for (int ab = 0; ab < (big ? 2 : 4); ab++) {
                    gemm_case *c = &cases[count++];
                    c->type = t ? PTXKIT_FLOAT64 : PTXKIT_FLOAT32;
                    c->op_a = ops & 2 ? PTXKIT_GEMM_T : PTXKIT_GEMM_N;
                    c->op_b = ops & 1 ? PTXKIT_GEMM_T : PTXKIT_GEMM_N;
                    c->m = shapes[s][0], c->n = shapes[s][1], c->k = shapes[s][2];
                    c->alpha = alpha_beta[ab][0], c->beta = alpha_beta[ab][1];
                    /* leading dimensions: dense, one past (unaligned rows), a vector past */
                    static const size_t pads[] = {0, 1, 4, 3};
                    c->pad_a = pads[(ops + ab) % 4];
                    c->pad_b = pads[(ops + ab + 1) % 4];
                    c->pad_c = pads[(ops + ab + 2) % 4];
                }
        }
    int failures = run_cases(cases, count);
    free(cases);
    assert_int_equal(failures, 0);
}

/* float64 with leading dimensions of odd length (8-byte copies on the
 * tensor-core path) and odd k, every layout, with a k longer than several
 * k-tiles: the edges of every copy pattern. */
static void test_gemm_f64_odd(void **state) {
    (void)state;
    static const size_t odd_shapes[][3] = {{129, 67, 301}, {16, 16, 5}, {200, 31, 3}};
    gemm_case cases[3 * 4 * 2];
    int count = 0;
    for (int s = 0; s < 3; s++)
        for (int ops = 0; ops < 4; ops++)
            for (int pad = 0; pad < 2; pad++) {
                gemm_case *c = &cases[count++];
                memset(c, 0, sizeof *c);
                c->type = PTXKIT_FLOAT64;
                c->op_a = ops & 2 ? PTXKIT_GEMM_T : PTXKIT_GEMM_N;
                c->op_b = ops & 1 ? PTXKIT_GEMM_T : PTXKIT_GEMM_N;
                c->m = odd_shapes[s][0], c->n = odd_shapes[s][1], c->k = odd_shapes[s][2];
                c->alpha = -1.25, c->beta = pad ? 0.5 : 0;
                c->pad_a = pad ? 1 : 2, c->pad_b = pad ? 3 : 0, c->pad_c = (size_t)pad;
            }
    assert_int_equal(run_cases(cases, count), 0);
}

/* float64 with A and B as stored and 16-byte aligned: on sm_90 the
 * tensor-core kernel's tensor-map path (B's map 2-D and 3-D, boxes
 * zero-filled past M, N and K, split-K slices, beta, two stages and four),
 * and the same cases with the path switched off. */
static void test_gemm_f64_tensor_maps(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    /* 16 dividing n or not: B's map in one box or in boxes of 16 columns */
    static const size_t tma_shapes[][3] = {{129, 66, 302}, {64, 128, 16},  {300, 17, 4},    {1, 2, 2},
                                           {7, 300, 2048}, {200, 40, 24},  {513, 515, 517}, {64, 4096, 256},
                                           {100, 48, 37},  {257, 256, 129}};
    enum { SHAPES = sizeof tma_shapes / sizeof tma_shapes[0] };
    gemm_case cases[SHAPES];
    for (int s = 0; s < SHAPES; s++) {
        gemm_case *c = &cases[s];
        memset(c, 0, sizeof *c);
        c->type = PTXKIT_FLOAT64;
        c->op_a = c->op_b = PTXKIT_GEMM_N;
        c->m = tma_shapes[s][0], c->n = tma_shapes[s][1], c->k = tma_shapes[s][2];
        c->alpha = s % 2 ? 0.5 : -1.25, c->beta = s % 3 ? 0 : 0.75;
        /* even leading dimensions keep every row 16-byte aligned */
        c->pad_a = c->k % 2 ? 1 : (size_t)(s % 2) * 2, c->pad_b = c->n % 2 ? 1 : 2, c->pad_c = (size_t)s % 2;
        /* tiles the path takes: 64 x 128, 64 x 64 in 4 and in 2 stages,
         * 32 x 64 with k-tiles of 16 and of 32 */
        static const gemm_config tiles[] = {{64, 128, 16, 8, 8, 1, 4, 0}, {64, 64, 16, 4, 8, 2, 4, 0},
                                            {64, 64, 16, 4, 8, 2, 2, 0}, {32, 64, 16, 2, 8, 2, 4, 0},
                                            {32, 64, 32, 2, 8, 2, 3, 0}};
        c->tiles = tiles[s % 5];
        if (s == 4) c->tiles.split_k = 3; /* slices of whole k-tiles */
    }
    gemm_switches sw = gemm_switches_get(ctx);
    const gemm_config d = gemm_default_config(GEMM_F64_TC, GEMM_SQUARE);
    if (ctx->info.cc_major >= 9 && ctx->cu->cuTensorMapEncodeTiled) {
        /* the path is really taken for these operands */
        assert_int_equal(gemm_dmma_tma_mode(ctx, &sw, GEMM_F64_TC, &d, false, false, true, true, 128, 16), 2);
        assert_int_equal(gemm_dmma_tma_mode(ctx, &sw, GEMM_F64_TC, &d, false, false, true, true, 66, 16), 1);
        assert_int_equal(gemm_dmma_tma_mode(ctx, &sw, GEMM_F64_TC, &d, true, false, true, true, 128, 16), 0);
        assert_int_equal(gemm_dmma_tma_mode(ctx, &sw, GEMM_F64_TC, &d, false, false, true, false, 128, 16), 0);
        gemm_config small = d;
        small.bm = 32, small.bn = 64, small.tm = 2;
        assert_int_equal(gemm_dmma_tma_mode(ctx, &sw, GEMM_F64_TC, &small, false, false, true, true, 128, 16), 2);
        small.bk = 32, small.stages = 3; /* A in two boxes a stage */
        assert_int_equal(gemm_dmma_tma_mode(ctx, &sw, GEMM_F64_TC, &small, false, false, true, true, 128, 16), 2);
        small.bk = 8;
        assert_int_equal(gemm_dmma_tma_mode(ctx, &sw, GEMM_F64_TC, &small, false, false, true, true, 128, 16), 0);
    }
    /* mma k 8 at the square tiles, 4 in two stages of 64 x 64 (whose k 8
     * would cost a block an SM on an H100) */
    assert_int_equal(gemm_tma_mma_k(GEMM_F64_TC, &d, &sw, &ctx->info), 8);
    if (ctx->info.regs_per_sm == 65536)
        assert_int_equal(gemm_tma_mma_k(GEMM_F64_TC, &(gemm_config){64, 64, 16, 4, 8, 2, 2, 0}, &sw, &ctx->info), 4);
    int failures = run_cases(cases, SHAPES);
    /* the path at mma k 4 wherever it takes 8 */
    gemm_switches k4 = sw;
    k4.mma_k = 4;
    assert_status(PTXKIT_SUCCESS, gemm_switches_set(ctx, &k4));
    assert_int_equal(gemm_tma_mma_k(GEMM_F64_TC, &d, &k4, &ctx->info), 4);
    failures += run_cases(cases, SHAPES);
    failures += run_cases_cp_async(ctx, &sw, GEMM_F64_TC, &d, 16, cases, SHAPES);
    assert_int_equal(failures, 0);
}

/* float32 on the FP64 tensor cores (sm_90): the tensor-map path (B's
 * map 2-D and 3-D as 32 divides n or not, edges in m, n and k, split-K,
 * beta, two and four stages, warp tiles of one and two 32-column groups),
 * then the same cases on the cp.async path, whose fragments and stores
 * are laid out otherwise, and in every layout. */
static void test_gemm_f32_tensor_cores(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    gemm_switches sw = gemm_switches_get(ctx);
    if (gemm_kind_of(PTXKIT_FLOAT32, &ctx->info, &sw) != GEMM_F32_TC) skip();
    static const size_t shapes[][3] = {{129, 66, 302}, {64, 128, 32},  {300, 17, 4},    {1, 2, 2},
                                       {7, 300, 2048}, {200, 40, 24},  {513, 515, 517}, {64, 4096, 256},
                                       {100, 48, 37},  {257, 256, 129}, {130, 96, 1000}, {96, 160, 65}};
    enum { SHAPES = sizeof shapes / sizeof shapes[0] };
    static const gemm_config tiles[] = {{64, 128, 32, 8, 8, 1, 4, 0}, {64, 64, 32, 4, 8, 2, 4, 0},
                                        {64, 64, 32, 4, 8, 2, 2, 0},  {32, 64, 32, 2, 8, 2, 4, 0},
                                        {128, 128, 32, 4, 16, 4, 3, 0}, {128, 64, 32, 8, 8, 2, 4, 0}};
    gemm_case cases[4 * SHAPES];
    for (int l = 0; l < 4; l++)
        for (int s = 0; s < SHAPES; s++) {
            gemm_case *c = &cases[l * SHAPES + s];
            memset(c, 0, sizeof *c);
            c->type = PTXKIT_FLOAT32;
            c->op_a = l & 2 ? PTXKIT_GEMM_T : PTXKIT_GEMM_N;
            c->op_b = l & 1 ? PTXKIT_GEMM_T : PTXKIT_GEMM_N;
            c->m = shapes[s][0], c->n = shapes[s][1], c->k = shapes[s][2];
            c->alpha = s % 2 ? 0.5 : -1.25, c->beta = s % 3 ? 0 : 0.75;
            /* rows of whole 16-byte vectors (the tensor maps' case), with
             * a vector of padding on every other shape */
            size_t cols_a = l & 2 ? c->m : c->k, cols_b = l & 1 ? c->k : c->n;
            c->pad_a = (4 - cols_a % 4) % 4 + (size_t)(s % 2) * 4, c->pad_b = (4 - cols_b % 4) % 4;
            c->pad_c = (size_t)s % 2;
            c->tiles = tiles[s % 6];
            if (s == 4 || s == 10) c->tiles.split_k = 3; /* slices of whole k-tiles */
        }
    const gemm_config d = gemm_default_config(GEMM_F32_TC, GEMM_SQUARE);
    if (ctx->cu->cuTensorMapEncodeTiled) {
        /* the path is really taken for these operands */
        assert_int_equal(gemm_dmma_tma_mode(ctx, &sw, GEMM_F32_TC, &d, false, false, true, true, 128, 32), 2);
        assert_int_equal(gemm_dmma_tma_mode(ctx, &sw, GEMM_F32_TC, &d, false, false, true, true, 80, 32), 1);
        assert_int_equal(gemm_dmma_tma_mode(ctx, &sw, GEMM_F32_TC, &d, false, true, true, true, 128, 32), 0);
        assert_int_equal(gemm_dmma_tma_mode(ctx, &sw, GEMM_F32_TC, &d, false, false, false, true, 128, 32), 0);
    }
    int failures = run_cases(cases, SHAPES * (small_only ? 1 : 4));
    failures += run_cases_cp_async(ctx, &sw, GEMM_F32_TC, &d, 32, cases, SHAPES);
    assert_int_equal(failures, 0);
}

/* float64 on the CUDA cores (the kernel of GPUs before sm_80), forced on
 * this one: a few of the shapes in every layout, split-K, and the
 * first configurations of its sweep. */
static void test_gemm_f64_simt(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    gemm_switches simt = GEMM_SWITCHES_DEFAULT;
    simt.f64_simt = true;
    assert_status(PTXKIT_SUCCESS, gemm_switches_set(ctx, &simt));
    gemm_switches sw = gemm_switches_get(ctx);
    assert_int_equal(gemm_kind_of(PTXKIT_FLOAT64, &ctx->info, &sw), GEMM_F64);
    static const size_t simt_shapes[][3] = {{17, 33, 65}, {128, 128, 128}, {1000, 1, 1000}, {33, 70, 517}};
    gemm_case cases[4 * 4 + 3];
    int count = 0;
    for (int s = 0; s < 4; s++)
        for (int ops = 0; ops < 4; ops++) {
            gemm_case *c = &cases[count++];
            memset(c, 0, sizeof *c);
            c->type = PTXKIT_FLOAT64;
            c->op_a = ops & 2 ? PTXKIT_GEMM_T : PTXKIT_GEMM_N;
            c->op_b = ops & 1 ? PTXKIT_GEMM_T : PTXKIT_GEMM_N;
            c->m = simt_shapes[s][0], c->n = simt_shapes[s][1], c->k = simt_shapes[s][2];
            c->alpha = 1.5, c->beta = ops % 2 ? 0 : -0.5;
            c->pad_a = (size_t)ops % 2, c->pad_c = (size_t)s % 2;
            if (s == 3) { /* split-K forced */
                gemm_config d = gemm_default_config(GEMM_F64, GEMM_SMALL_M);
                d.split_k = 3;
                c->tiles = d;
            }
        }
    int n;
    const gemm_config *list = gemm_sweep_configs(GEMM_F64, &n);
    for (int i = 0; i < n && i < 3; i++) {
        gemm_case *c = &cases[count++];
        memset(c, 0, sizeof *c);
        c->type = PTXKIT_FLOAT64;
        c->op_a = c->op_b = PTXKIT_GEMM_N;
        c->m = 256, c->n = 384, c->k = 136, c->alpha = 1, c->beta = 0;
        c->tiles = list[i];
    }
    int failures = run_cases(cases, count);
    gemm_switches defaults = GEMM_SWITCHES_DEFAULT;
    assert_status(PTXKIT_SUCCESS, gemm_switches_set(ctx, &defaults));
    assert_int_equal(failures, 0);
}

/* Split-K forced and by shape, with beta read and not. */
static void test_gemm_split_k(void **state) {
    (void)state;
    static const size_t split_shapes[][3] = {{100, 150, 1000}, {33, 70, 517}, {7, 300, 2048}};
    static const int splits[] = {2, 3, 7, 0};
    gemm_case cases[2 * 3 * 4];
    int count = 0;
    for (int t = 0; t < 2; t++)
        for (int s = 0; s < 3; s++)
            for (int p = 0; p < 4; p++) {
                gemm_case *c = &cases[count++];
                memset(c, 0, sizeof *c);
                c->type = t ? PTXKIT_FLOAT64 : PTXKIT_FLOAT32;
                c->op_a = p & 1 ? PTXKIT_GEMM_T : PTXKIT_GEMM_N;
                c->op_b = p & 2 ? PTXKIT_GEMM_T : PTXKIT_GEMM_N;
                c->m = split_shapes[s][0], c->n = split_shapes[s][1], c->k = split_shapes[s][2];
                c->alpha = 0.75;
                c->beta = p % 2 ? 0.0 : 1.25;
                c->pad_a = (size_t)p;
                if (splits[p]) {
                    gemm_config d = gemm_default_config(gemm_kind_of(c->type, &test_gpu()->info, NULL), GEMM_SMALL_M);
                    d.split_k = splits[p];
                    c->tiles = d;
                }
            }
    assert_int_equal(run_cases(cases, count), 0);
}

/* Stream-K (gemm.cu's stream_k_share) at every shape it can take (the
 * switch at 1), K whole: a tile shared by up to 21 blocks (257 x 263 x
 * 1000 on 132 SMs: 9 tiles of 63 k-tiles over 189 blocks of 3 steps), a k
 * tail, edge tiles, every layout, beta read and not, float32 and float64
 * on the CUDA cores, and (not under a sanitizer) a whole wave and a
 * quarter of tiles with edges, so that the stream-K kernel is launched
 * early behind the whole wave's; then the default rule on a shape of one
 * and a half waves of tiles. The reference's bound covers any order of a
 * tile's partial sums. */
/* Rows of C in whole tiles of configuration c that, 8 tiles wide, fill
 * `quarters` quarter waves of its blocks (gemm_resident_blocks an SM, every
 * SM), rounded up to a tile row; *slots: one wave's blocks. */
static size_t quarter_wave_rows(gemm_kind kind, const gemm_switches *sw, const gemm_config *c, size_t quarters,
                                size_t *slots) {
    ptxkit_context *ctx = test_gpu();
    *slots = (size_t)ctx->info.sm_count * (size_t)gemm_resident_blocks(kind, sw, c, &ctx->info);
    return (*slots * quarters / 4 + 7) / 8 * (size_t)c->bm;
}

/* The default switches but for float32, which they run on the CUDA cores
 * (where stream-K is), whatever the GPU. */
static gemm_switches f32_cuda_cores(void) {
    gemm_switches sw = GEMM_SWITCHES_DEFAULT;
    sw.f32_tensor_cores = 0;
    return sw;
}

/* float32's configuration at 4096^3 on the CUDA cores. */
static gemm_config f32_square(void) {
    ptxkit_context *ctx = test_gpu();
    gemm_switches sw = f32_cuda_cores();
    gemm_config cfg;
    assert_ok(ctx, gemm_resolve(ctx, &sw, PTXKIT_FLOAT32, 4096, 4096, 4096, NULL, &cfg, NULL, NULL));
    return cfg;
}

static int stream_k_cases(gemm_kind kind, const gemm_switches *sw, gemm_case *cases) {
    size_t sk_shapes[][3] = {{257, 263, 1000}, {130, 129, 77}, {1000, 1, 1001}, {512, 512, 4096}, {0, 0, 333}};
    ptxkit_context *ctx = test_gpu();
    gemm_config square = gemm_default_config(kind, GEMM_SQUARE);
    size_t slots;
    sk_shapes[4][0] = quarter_wave_rows(kind, sw, &square, 5, &slots) - 5, sk_shapes[4][1] = 8 * (size_t)square.bn - 3;
    int count = 0;
    for (int s = 0; s < (small_only ? 3 : 5); s++)
        for (int ops = 0; ops < 4; ops++) {
            gemm_case *c = &cases[count++];
            memset(c, 0, sizeof *c);
            c->type = kind == GEMM_F32 ? PTXKIT_FLOAT32 : PTXKIT_FLOAT64;
            c->op_a = ops & 2 ? PTXKIT_GEMM_T : PTXKIT_GEMM_N;
            c->op_b = ops & 1 ? PTXKIT_GEMM_T : PTXKIT_GEMM_N;
            c->m = sk_shapes[s][0], c->n = sk_shapes[s][1], c->k = sk_shapes[s][2];
            c->alpha = ops % 2 ? 1.0 : -0.75, c->beta = ops / 2 ? 0.0 : 1.5;
            c->pad_a = (size_t)(ops + s) % 3, c->pad_b = (size_t)s % 2, c->pad_c = (size_t)ops % 2;
            c->tiles = gemm_default_config(kind, GEMM_SQUARE);
            c->tiles.split_k = 1; /* K whole: stream-K's case */
            gemm_stream_k plan;
            assert_true(gemm_stream_k_for(kind, sw, &c->tiles, c->m, c->n, c->k, &ctx->info, &plan));
            assert_true((plan.dp_tiles > 0) == (s == 4));
        }
    return count;
}

static void test_gemm_stream_k(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    gemm_case cases[20];
    gemm_switches sw = f32_cuda_cores();
    sw.stream_k = 1;
    assert_status(PTXKIT_SUCCESS, gemm_switches_set(ctx, &sw));
    int failures = run_cases(cases, stream_k_cases(GEMM_F32, &sw, cases));
    sw.f64_simt = true;
    assert_status(PTXKIT_SUCCESS, gemm_switches_set(ctx, &sw));
    failures += run_cases(cases, stream_k_cases(GEMM_F64, &sw, cases));
    gemm_switches defaults = GEMM_SWITCHES_DEFAULT, cuda_cores = f32_cuda_cores();
    assert_status(PTXKIT_SUCCESS, gemm_switches_set(ctx, &defaults));
    assert_int_equal(failures, 0);
    if (small_only) return;

    /* The default rule: one and a half waves of the built-in tiles, 8 tile
     * columns, 32 k-tiles: one wave as it is, the rest by stream-K. */
    gemm_case c = {.type = PTXKIT_FLOAT32, .op_a = PTXKIT_GEMM_N, .op_b = PTXKIT_GEMM_N, .alpha = 1, .beta = 0.5};
    gemm_config cfg = f32_square();
    size_t slots;
    c.n = 8 * (size_t)cfg.bn, c.m = quarter_wave_rows(GEMM_F32, &cuda_cores, &cfg, 6, &slots), c.k = 32 * (size_t)cfg.bk;
    c.tiles = cfg;
    gemm_stream_k plan;
    assert_true(gemm_stream_k_for(GEMM_F32, &cuda_cores, &cfg, c.m, c.n, c.k, &ctx->info, &plan));
    assert_int_equal(plan.dp_tiles, (int)slots);
    assert_status(PTXKIT_SUCCESS, gemm_switches_set(ctx, &cuda_cores));
    failures = run_cases(&c, 1);
    assert_status(PTXKIT_SUCCESS, gemm_switches_set(ctx, &defaults));
    assert_int_equal(failures, 0);
}

/* Every configuration of the benchmark's sweep, on ragged shapes: aligned
 * nn (the sweep's own kernels) and unaligned tt; float32 under the
 * default switches and on the CUDA cores (the same kernel where the GPU
 * has no float32 tensor-core path). */
static void test_gemm_configs(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    gemm_switches defaults = GEMM_SWITCHES_DEFAULT, cuda_cores = f32_cuda_cores();
    int failures = 0;
    for (int t = 0; t < 3; t++) {
        gemm_case cases[2 * 64];
        int count = 0;
        ptxkit_dtype type = t == 2 ? PTXKIT_FLOAT64 : PTXKIT_FLOAT32;
        const gemm_switches *sw = t == 1 ? &cuda_cores : &defaults;
        int n;
        const gemm_config *list = gemm_sweep_configs(gemm_kind_of(type, &ctx->info, sw), &n);
        if (small_only && n > 3) n = 3; /* under a sanitizer: the first few */
        for (int i = 0; i < n && count + 2 <= 2 * 64; i++)
            for (int v = 0; v < 2; v++) {
                gemm_case *c = &cases[count++];
                memset(c, 0, sizeof *c);
                c->type = type;
                c->op_a = c->op_b = v ? PTXKIT_GEMM_T : PTXKIT_GEMM_N;
                c->m = 257 + (size_t)i, c->n = 263, c->k = 129 + 8 * (size_t)v;
                c->alpha = 1, c->beta = v ? 0.5 : 0;
                c->pad_a = c->pad_b = c->pad_c = v ? 1 : 0;
                if (!v) c->m = 256, c->n = 384, c->k = 136; /* whole vectors: the 16-byte copies */
                c->tiles = list[i];
            }
        assert_status(PTXKIT_SUCCESS, gemm_switches_set(ctx, sw));
        failures += run_cases(cases, count);
    }
    assert_status(PTXKIT_SUCCESS, gemm_switches_set(ctx, &defaults));
    assert_int_equal(failures, 0);
}

/* Calls of m x n x k (tiles NULL: the built-in choice) on several streams
 * at once, eight rounds each, with an alpha per stream: a result computed
 * on another stream's scratch shows. Returns the failures. */
enum { STREAMS = 4 };
static int streams_round(ptxkit_context *ctx, ptxkit_stream *const *streams, size_t m, size_t n, size_t k,
                         const ptxkit_config *tiles) {
    const size_t elem = 4;
    ptxkit_dptr a, b, c[STREAMS];
    float *ha = malloc(m * k * elem), *hb = malloc(k * n * elem), *hc = malloc(m * n * elem);
    double *ref = calloc(m * n, sizeof *ref);
    assert_true(ha && hb && hc && ref);
    for (size_t i = 0; i < m * k; i++) ha[i] = (float)(int)(test_rand(&rng) % 5) - 2;
    for (size_t i = 0; i < k * n; i++) hb[i] = (float)(int)(test_rand(&rng) % 5) - 2;
    for (size_t i = 0; i < m; i++)
        for (size_t p = 0; p < k; p++)
            for (size_t j = 0; j < n; j++) ref[i * n + j] += (double)ha[i * k + p] * hb[p * n + j];
    assert_ok(ctx, ptxkit_memory_alloc(ctx, m * k * elem, &a));
    assert_ok(ctx, ptxkit_memory_alloc(ctx, k * n * elem, &b));
    assert_ok(ctx, ptxkit_memory_write(ctx, a, ha, m * k * elem));
    assert_ok(ctx, ptxkit_memory_write(ctx, b, hb, k * n * elem));
    for (int s = 0; s < STREAMS; s++) assert_ok(ctx, ptxkit_memory_alloc(ctx, m * n * elem, &c[s]));
    for (int round = 0; round < 8; round++)
        for (int s = 0; s < STREAMS; s++)
            assert_ok(ctx, ptxkit_gemm(ctx, PTXKIT_FLOAT32, PTXKIT_GEMM_N, PTXKIT_GEMM_N, m, n, k, (double)(s + 1), a, k,
                                       b, n, 0.0, c[s], n, tiles, streams[s]));
    assert_ok(ctx, ptxkit_context_synchronize(ctx));
    int failures = 0;
    for (int s = 0; s < STREAMS; s++) {
        assert_ok(ctx, ptxkit_memory_read(ctx, hc, c[s], m * n * elem));
        for (size_t i = 0; i < m * n && failures < 5; i++)
            if (hc[i] != (float)(ref[i] * (s + 1))) { /* small integers: exact */
                print_error("%zux%zux%zu stream %d: C[%zu][%zu] = %g, expected %g\n", m, n, k, s, i / n, i % n, hc[i],
                            ref[i] * (s + 1));
                failures++;
            }
        ptxkit_memory_free(ctx, c[s]);
    }
    ptxkit_memory_free(ctx, a);
    ptxkit_memory_free(ctx, b);
    free(ha);
    free(hb);
    free(hc);
    free(ref);
    return failures;
}

/* Split-K calls on several streams at once share one scratch, and (not
 * under a sanitizer) so do stream-K calls whose stream-K kernel is launched
 * early behind their whole waves: each must still get its own result. */
static void test_gemm_streams(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    ptxkit_stream *streams[STREAMS];
    for (int i = 0; i < STREAMS; i++) assert_ok(ctx, ptxkit_stream_create(ctx, PTXKIT_STREAM_NON_BLOCKING, 0, &streams[i]));
    /* split 6 ways: the kernel of the default switches, then the CUDA
     * cores' (the same one where the GPU has no float32 tensor-core path) */
    gemm_switches defaults = GEMM_SWITCHES_DEFAULT, cuda_cores = f32_cuda_cores();
    ptxkit_config tiles;
    const bool tc = gemm_kind_of(PTXKIT_FLOAT32, &ctx->info, &defaults) == GEMM_F32_TC;
    gemm_config_to(tc ? &(gemm_config){64, 128, 32, 8, 8, 1, 4, 6} : &(gemm_config){64, 128, 8, 8, 8, 2, 4, 6}, &tiles);
    int failures = streams_round(ctx, streams, 64, 200, 3000, &tiles);
    assert_status(PTXKIT_SUCCESS, gemm_switches_set(ctx, &cuda_cores));
    gemm_config_to(&(gemm_config){64, 128, 8, 8, 8, 2, 4, 6}, &tiles);
    failures += streams_round(ctx, streams, 64, 200, 3000, &tiles);
    if (!small_only) {
        gemm_config cfg = f32_square();
        size_t slots, m = quarter_wave_rows(GEMM_F32, &cuda_cores, &cfg, 5, &slots), n = 8 * (size_t)cfg.bn,
                      k = 8 * (size_t)cfg.bk;
        gemm_stream_k plan;
        assert_true(gemm_stream_k_for(GEMM_F32, &cuda_cores, &cfg, m, n, k, &ctx->info, &plan) && plan.dp_tiles > 0);
        ptxkit_config square;
        gemm_config_to(&cfg, &square);
        failures += streams_round(ctx, streams, m, n, k, &square);
    }
    assert_status(PTXKIT_SUCCESS, gemm_switches_set(ctx, &defaults));
    for (int i = 0; i < STREAMS; i++) ptxkit_stream_destroy(streams[i]);
    assert_int_equal(failures, 0);
}

/* Results do not change from run to run (ptxkit_gemm's promise): the
 * tensor-map path's rings, whose stages the tensor memory accelerator
 * refills as soon as every warp has read them, at split-K shapes where
 * small tiles turn the ring over fastest, each call on a fresh stream with
 * another call between (the scratch handed over), every result compared
 * bit for bit with the first. A refill landing before a warp's loads had
 * read their values (no proxy fence before the arrival) changed 32 to 160
 * elements in some of 30 runs here; a race of that kind shows only
 * sometimes, so this test catches it often, not always. */
static void test_gemm_repeatable(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    if (ctx->info.cc_major < 9) skip();
    const size_t m = 64, n = small_only ? 1024 : 4096, k = small_only ? 1024 : 4096;
    const int runs = small_only ? 3 : 24;
    static const struct {
        ptxkit_dtype type;
        gemm_config tiles;
    } rings[] = {{PTXKIT_FLOAT32, {64, 64, 32, 4, 8, 2, 4, 4}},
                 {PTXKIT_FLOAT32, {32, 64, 32, 2, 8, 2, 4, 4}},
                 {PTXKIT_FLOAT64, {64, 64, 16, 4, 8, 2, 4, 4}}};
    int changed = 0;
    for (size_t r = 0; r < sizeof rings / sizeof rings[0]; r++) {
        const ptxkit_dtype type = rings[r].type;
        if (type == PTXKIT_FLOAT32 && gemm_kind_of(type, &ctx->info, NULL) != GEMM_F32_TC) continue;
        host_matrix ha, hb;
        make_matrix(&ha, m, k, type, false);
        make_matrix(&hb, k, n, type, false);
        ptxkit_dptr a, b, c, other;
        const size_t bytes = m * n * ptxkit_dtype_size(type);
        assert_ok(ctx, upload(ctx, &ha, type, &a));
        assert_ok(ctx, upload(ctx, &hb, type, &b));
        assert_ok(ctx, ptxkit_memory_alloc(ctx, bytes, &c));
        assert_ok(ctx, ptxkit_memory_alloc(ctx, bytes, &other));
        unsigned char *first = malloc(bytes), *again = malloc(bytes);
        assert_non_null(first);
        assert_non_null(again);
        ptxkit_config tiles;
        gemm_config_to(&rings[r].tiles, &tiles);
        for (int i = 0; i < runs; i++) {
            ptxkit_stream *s;
            assert_ok(ctx, ptxkit_stream_create(ctx, PTXKIT_STREAM_NON_BLOCKING, 0, &s));
            assert_ok(ctx, ptxkit_memory_set8_async(ctx, c, 0xff, bytes, s));
            assert_ok(ctx, ptxkit_gemm(ctx, type, PTXKIT_GEMM_N, PTXKIT_GEMM_N, m, n, k, 1.0, a, k, b, n, 0.0, c, n,
                                       &tiles, s));
            assert_ok(ctx, ptxkit_gemm(ctx, type, PTXKIT_GEMM_N, PTXKIT_GEMM_N, m, n / 2, k / 2, 1.0, a, k, b, n, 0.0,
                                       other, n, NULL, s));
            assert_ok(ctx, ptxkit_stream_synchronize(ctx, s));
            ptxkit_stream_destroy(s);
            assert_ok(ctx, ptxkit_memory_read(ctx, i ? again : first, c, bytes));
            if (i && memcmp(first, again, bytes) != 0) {
                print_message("%s %dx%dx%d tiles, split 4: run %d differs from the first\n",
                              type == PTXKIT_FLOAT32 ? "float32" : "float64", rings[r].tiles.bm, rings[r].tiles.bn,
                              rings[r].tiles.bk, i);
                changed++;
            }
        }
        free(first);
        free(again);
        free(ha.v);
        free(hb.v);
        ptxkit_memory_free(ctx, a);
        ptxkit_memory_free(ctx, b);
        ptxkit_memory_free(ctx, c);
        ptxkit_memory_free(ctx, other);
    }
    assert_int_equal(changed, 0);
}

/* k == 0 and alpha == 0: C = beta * C, and A and B are never read (NULL). */
static void test_gemm_degenerate(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    const size_t m = 37, n = 41;
    float hc[37 * 41], out[37 * 41];
    for (size_t i = 0; i < m * n; i++) hc[i] = (float)uniform();
    ptxkit_dptr c;
    assert_ok(ctx, ptxkit_memory_alloc(ctx, sizeof hc, &c));
    for (int which = 0; which < 3; which++) {
        assert_ok(ctx, ptxkit_memory_write(ctx, c, hc, sizeof hc));
        size_t k = which == 0 ? 0 : 19;
        double alpha = which == 0 ? 1.0 : 0.0, beta = which == 2 ? 0.0 : -2.0;
        assert_ok(ctx, ptxkit_gemm(ctx, PTXKIT_FLOAT32, PTXKIT_GEMM_N, PTXKIT_GEMM_T, m, n, k, alpha, 0, k ? k : 1, 0,
                                   k ? k : 1, beta, c, n, NULL, NULL));
        assert_ok(ctx, ptxkit_memory_read(ctx, out, c, sizeof out));
        for (size_t i = 0; i < m * n; i++) assert_true(out[i] == (float)(beta * hc[i]));
    }
    /* m == 0 or n == 0: nothing at all, not even C */
    assert_ok(ctx, ptxkit_gemm(ctx, PTXKIT_FLOAT64, PTXKIT_GEMM_N, PTXKIT_GEMM_N, 0, 5, 5, 1, 0, 5, 0, 5, 1, 0, 5, NULL,
                               NULL));
    ptxkit_memory_free(ctx, c);
}

static void test_gemm_arguments(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    ptxkit_dptr buf;
    assert_ok(ctx, ptxkit_memory_alloc(ctx, 1 << 20, &buf));
    ptxkit_dptr a = buf, b = buf + (256 << 10), c = buf + (512 << 10);
#define GEMM(type, oa, ob, m, n, k, a, lda, b, ldb, c, ldc, tiles)                                                    \
    ptxkit_gemm(ctx, type, oa, ob, m, n, k, 1.0, a, lda, b, ldb, 0.0, c, ldc, tiles, NULL)
    const ptxkit_gemm_op N = PTXKIT_GEMM_N, T = PTXKIT_GEMM_T;
    const ptxkit_dtype F = PTXKIT_FLOAT32;
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT,
                  ptxkit_gemm(NULL, F, N, N, 8, 8, 8, 1, a, 8, b, 8, 0, c, 8, NULL, NULL));
    assert_status(PTXKIT_ERROR_UNSUPPORTED, GEMM(PTXKIT_INT32, N, N, 8, 8, 8, a, 8, b, 8, c, 8, NULL));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, GEMM((ptxkit_dtype)99, N, N, 8, 8, 8, a, 8, b, 8, c, 8, NULL));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, GEMM(F, (ptxkit_gemm_op)2, N, 8, 8, 8, a, 8, b, 8, c, 8, NULL));
    /* leading dimensions shorter than a row as stored */
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, GEMM(F, N, N, 8, 8, 9, a, 8, b, 8, c, 8, NULL));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, GEMM(F, T, N, 9, 8, 8, a, 8, b, 8, c, 8, NULL));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, GEMM(F, N, N, 8, 9, 8, a, 8, b, 9, c, 8, NULL));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, GEMM(F, N, T, 8, 8, 9, a, 9, b, 8, c, 8, NULL));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, GEMM(F, N, N, 8, 8, 8, a, 0, b, 8, c, 8, NULL));
    /* NULL, misaligned, overflowing, overlapping */
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, GEMM(F, N, N, 8, 8, 8, 0, 8, b, 8, c, 8, NULL));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, GEMM(F, N, N, 8, 8, 8, a, 8, b, 8, 0, 8, NULL));
    assert_status(PTXKIT_ERROR_MISALIGNED, GEMM(F, N, N, 8, 8, 8, a + 2, 8, b, 8, c, 8, NULL));
    assert_status(PTXKIT_ERROR_MISALIGNED, GEMM(PTXKIT_FLOAT64, N, N, 8, 8, 8, a, 8, b + 4, 8, c, 8, NULL));
    assert_status(PTXKIT_ERROR_OVERFLOW, GEMM(F, N, N, 8, 8, 8, a, SIZE_MAX / 2, b, 8, c, 8, NULL));
    assert_status(PTXKIT_ERROR_OVERFLOW, GEMM(F, N, N, 8, 8, 8, ~(ptxkit_dptr)0 - 63, 8, b, 8, c, 8, NULL));
    assert_status(PTXKIT_ERROR_UNSUPPORTED, GEMM(F, N, N, (size_t)1 << 31, 8, 8, a, 8, b, 8, c, 8, NULL));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, GEMM(F, N, N, 8, 8, 8, a, 8, b, 8, a + 32, 8, NULL));
    /* tiles: partial, illegal, reserved fields */
    ptxkit_config t = {0};
    ptxkit_config_set(&t, "bm", 128);
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, GEMM(F, N, N, 8, 8, 8, a, 8, b, 8, c, 8, &t));
    gemm_config_to(&(gemm_config){128, 128, 8, 8, 8, 3, 4, 0}, &t); /* 8 warps are not 3 along M */
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, GEMM(F, N, N, 8, 8, 8, a, 8, b, 8, c, 8, &t));
    gemm_config_to(&(gemm_config){128, 128, 8, 8, 8, 4, 4, 0}, &t);
    ptxkit_config_set(&t, "block_size", 256); /* not a gemm parameter */
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, GEMM(F, N, N, 8, 8, 8, a, 8, b, 8, c, 8, &t));
    assert_non_null(strstr(ptxkit_last_error(), "block_size"));
    gemm_config_to(&(gemm_config){128, 128, 8, 8, 8, 4, 4, GEMM_MAX_SPLIT_K + 1}, &t);
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, GEMM(F, N, N, 8, 8, 8, a, 8, b, 8, c, 8, &t));
    assert_non_null(strstr(ptxkit_last_error(), "split_k"));
    /* k == 0 reads neither A nor B: NULL is fine there, C is still checked */
    assert_ok(ctx, GEMM(F, N, N, 8, 8, 0, 0, 1, 0, 8, c, 8, NULL));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, GEMM(F, N, N, 8, 8, 0, 0, 1, 0, 8, 0, 8, NULL));
#undef GEMM
    /* the configuration a call would run */
    ptxkit_config used;
    int tuned = -1;
    assert_ok(ctx, ptxkit_gemm_config_get(ctx, F, 64, 4096, 4096, &used, &tuned));
    gemm_config got;
    assert_ok(ctx, gemm_config_from(ctx, "test", &used, &got));
    assert_int_equal(used.count, 8); /* every parameter, resolved */
    assert_true(got.bm > 0 && got.split_k >= 1 && (tuned == 0 || tuned == 1));
    assert_status(PTXKIT_ERROR_UNSUPPORTED, ptxkit_gemm_config_get(ctx, PTXKIT_UINT64, 8, 8, 8, &used, NULL));
    /* float64 from sm_80 on runs the tensor-core kernel: its configurations */
    gemm_kind f64 = gemm_kind_of(PTXKIT_FLOAT64, &ctx->info, NULL);
    assert_int_equal(f64, ctx->info.cc_major >= 8 ? GEMM_F64_TC : GEMM_F64);
    assert_ok(ctx, ptxkit_gemm_config_get(ctx, PTXKIT_FLOAT64, 4096, 4096, 4096, &used, &tuned));
    gemm_config want = gemm_default_for(f64, NULL, 4096, 4096, 4096, &ctx->info);
    assert_ok(ctx, gemm_config_from(ctx, "test", &used, &got));
    char why[256];
    assert_true(gemm_config_check(f64, NULL, &got, NULL, why, sizeof why));
    if (!tuned) assert_true(got.bm == want.bm && got.bn == want.bn && got.tm == want.tm && got.tn == want.tn);
    if (f64 == GEMM_F64_TC) {
        /* a lane tile the mma layout cannot hold (tn not a multiple of 4) */
        ptxkit_config bad;
        gemm_config_to(&(gemm_config){64, 128, 8, 8, 2, 1, 3, 0}, &bad);
        assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_gemm(ctx, PTXKIT_FLOAT64, N, N, 8, 8, 8, 1.0, a, 8, b, 8,
                                                                 0.0, c, 8, &bad, NULL));
    }
    ptxkit_memory_free(ctx, buf);
}

/* Every step of the lab's matrix-multiply ladder (lab/ladders.h) against
 * the float64 reference (float32 sums in any order: the same bound), at
 * awkward sizes (1, primes, 2^k + 1, k == 0) and multiples of 128, with
 * 16-byte aligned matrices and, for steps 1-3, matrices one float past
 * that; C poisoned with NaN first. */
static void test_gemm_ladder(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    static const size_t sizes[][3] = {{1, 1, 1}, {37, 45, 51}, {129, 257, 65}, {33, 31, 0}, {256, 384, 128}};
    int failures = 0;
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        size_t m = sizes[s][0], n = sizes[s][1], k = sizes[s][2];
        float *ha = malloc((m * k + 1) * 4), *hb = malloc((k * n + 1) * 4), *hc = malloc(m * n * 4);
        assert_true(ha && hb && hc);
        for (size_t i = 0; i < m * k; i++) ha[i] = (float)uniform();
        for (size_t i = 0; i < k * n; i++) hb[i] = (float)uniform();
        ptxkit_dptr a0, b0, c0;
        assert_ok(ctx, ptxkit_memory_alloc(ctx, (m * k + 4) * 4, &a0));
        assert_ok(ctx, ptxkit_memory_alloc(ctx, (k * n + 4) * 4, &b0));
        assert_ok(ctx, ptxkit_memory_alloc(ctx, (m * n + 4) * 4, &c0));
        for (int shift = 0; shift < 2; shift++) {
            ptxkit_dptr a = a0 + 4 * (ptxkit_dptr)shift, b = b0 + 4 * (ptxkit_dptr)shift, c = c0 + 4 * (ptxkit_dptr)shift;
            if (m * k > 0) assert_ok(ctx, ptxkit_memory_write(ctx, a, ha, m * k * 4));
            if (k * n > 0) assert_ok(ctx, ptxkit_memory_write(ctx, b, hb, k * n * 4));
            for (int step = 1; step <= LAB_GEMM_LADDER_STEPS; step++) {
                if (lab_gemm_ladder_check(ctx, step) == PTXKIT_ERROR_UNSUPPORTED) continue; /* cp.async before sm_80 */
                if (step >= 4 && (m % 128 || n % 128 || k % 128 || shift)) {
                    assert_status(PTXKIT_ERROR_UNSUPPORTED, lab_gemm_ladder_run(ctx, step, m, n, k, a, b, c, NULL));
                    continue;
                }
                assert_ok(ctx, ptxkit_memory_set32_async(ctx, c, 0x7fc00000u, m * n, NULL));
                ptxkit_status st = lab_gemm_ladder_run(ctx, step, m, n, k, a, b, c, NULL);
                if (st != PTXKIT_SUCCESS) fail_msg("ladder step %d: %s: %s", step, ptxkit_status_string(st), ptxkit_last_error());
                assert_ok(ctx, ptxkit_memory_read(ctx, hc, c, m * n * 4));
                for (size_t i = 0; i < m && failures < 5; i++)
                    for (size_t j = 0; j < n && failures < 5; j++) {
                        double ref = 0, mag = 0;
                        for (size_t p = 0; p < k; p++) {
                            double t = (double)ha[i * k + p] * hb[p * n + j];
                            ref += t;
                            mag += fabs(t);
                        }
                        if (!(fabs(hc[i * n + j] - ref) <= 2.0 * (double)(k + 2) * ldexp(1.0, -24) * mag)) {
                            print_error("ladder step %d, %zux%zux%zu (+%d floats): C[%zu][%zu] = %g, reference %g\n",
                                        step, m, n, k, shift, i, j, hc[i * n + j], ref);
                            failures++;
                        }
                    }
            }
        }
        assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, lab_gemm_ladder_run(ctx, 0, m, n, k, a0, b0, c0, NULL));
        assert_status(PTXKIT_ERROR_INVALID_ARGUMENT,
                      lab_gemm_ladder_run(ctx, LAB_GEMM_LADDER_STEPS + 1, m, n, k, a0, b0, c0, NULL));
        ptxkit_memory_free(ctx, a0);
        ptxkit_memory_free(ctx, b0);
        ptxkit_memory_free(ctx, c0);
        free(ha);
        free(hb);
        free(hc);
    }
    assert_int_equal(failures, 0);
}

/* ptxkit_gemm_supported agrees with the call: for every type and pair of
 * operand ops, a supported one runs a small awkward problem right (against
 * a double-precision CPU product: op(A) 5 x 7, op(B) 7 x 3, alpha 1, beta
 * 0, small integers, so every product and sum is exact), an unsupported
 * one is UNSUPPORTED from the call too. */
static void test_gemm_supported_agrees(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    enum { M = 5, N = 3, K = 7 };
    ptxkit_dptr a, b, c;
    assert_ok(ctx, ptxkit_memory_alloc(ctx, M * K * 8, &a));
    assert_ok(ctx, ptxkit_memory_alloc(ctx, K * N * 8, &b));
    assert_ok(ctx, ptxkit_memory_alloc(ctx, M * N * 8, &c));
    uint64_t rng = test_seed() ^ 0x6e;
    double av[M * K], bv[K * N];
    for (int i = 0; i < M * K; i++) av[i] = (double)(test_rand(&rng) % 9) - 4;
    for (int i = 0; i < K * N; i++) bv[i] = (double)(test_rand(&rng) % 9) - 4;
    for (int t = 0; t < PTXKIT_DTYPE_COUNT; t++)
        for (int oa = 0; oa < PTXKIT_GEMM_OP_COUNT; oa++)
            for (int ob = 0; ob < PTXKIT_GEMM_OP_COUNT; ob++) {
                ptxkit_dtype type = (ptxkit_dtype)t;
                ptxkit_gemm_op op_a = (ptxkit_gemm_op)oa, op_b = (ptxkit_gemm_op)ob;
                /* stored as the ops say: A m x k (N) or k x m (T), B k x n (N) or n x k (T) */
                size_t lda = op_a == PTXKIT_GEMM_N ? K : M, ldb = op_b == PTXKIT_GEMM_N ? N : K;
                double sa[M * K], sb[K * N];
                for (int i = 0; i < M; i++)
                    for (int k = 0; k < K; k++) sa[op_a == PTXKIT_GEMM_N ? i * K + k : k * M + i] = av[i * K + k];
                for (int k = 0; k < K; k++)
                    for (int j = 0; j < N; j++) sb[op_b == PTXKIT_GEMM_N ? k * N + j : j * K + k] = bv[k * N + j];
                if (type == PTXKIT_FLOAT32) {
                    float fa[M * K], fb[K * N];
                    for (int i = 0; i < M * K; i++) fa[i] = (float)sa[i];
                    for (int i = 0; i < K * N; i++) fb[i] = (float)sb[i];
                    assert_ok(ctx, ptxkit_memory_write(ctx, a, fa, sizeof fa));
                    assert_ok(ctx, ptxkit_memory_write(ctx, b, fb, sizeof fb));
                } else {
                    assert_ok(ctx, ptxkit_memory_write(ctx, a, sa, sizeof sa));
                    assert_ok(ctx, ptxkit_memory_write(ctx, b, sb, sizeof sb));
                }
                assert_ok(ctx, ptxkit_memory_set8_async(ctx, c, 0xCD, M * N * 8, NULL));
                ptxkit_status want = ptxkit_gemm_supported(ctx, type, op_a, op_b);
                assert_int_equal(want, ptxkit_gemm_supported(NULL, type, op_a, op_b));
                ptxkit_status got = ptxkit_gemm(ctx, type, op_a, op_b, M, N, K, 1.0, a, lda, b, ldb, 0.0, c, N, NULL, NULL);
                if (want != PTXKIT_SUCCESS) {
                    assert_int_equal(want, PTXKIT_ERROR_UNSUPPORTED);
                    assert_int_equal(got, PTXKIT_ERROR_UNSUPPORTED);
                    continue;
                }
                assert_ok(ctx, got);
                assert_ok(ctx, ptxkit_context_synchronize(ctx));
                double cv[M * N];
                float cf[M * N];
                if (type == PTXKIT_FLOAT32) {
                    assert_ok(ctx, ptxkit_memory_read(ctx, cf, c, sizeof cf));
                    for (int i = 0; i < M * N; i++) cv[i] = cf[i];
                } else {
                    assert_ok(ctx, ptxkit_memory_read(ctx, cv, c, sizeof cv));
                }
                for (int i = 0; i < M; i++)
                    for (int j = 0; j < N; j++) {
                        double e = 0;
                        for (int k = 0; k < K; k++) e += av[i * K + k] * bv[k * N + j];
                        if (cv[i * N + j] != e)
                            fail_msg("gemm %s %d%d: C[%d][%d] = %g, not %g", t == PTXKIT_FLOAT32 ? "float32" : "float64",
                                     oa, ob, i, j, cv[i * N + j], e);
                    }
            }
    ptxkit_memory_free(ctx, a);
    ptxkit_memory_free(ctx, b);
    ptxkit_memory_free(ctx, c);
}

/* ptxkit_gemm_prepare at a shape, then the call on that stream loads no
 * module and can be captured (without the prepare, capture is refused: the
 * stream holds no scratch), and the graph's replays are exact (small
 * integers: every sum is exact in float32, in any order). */
static void prepared_capture(ptxkit_context *ctx, size_t m, size_t n, size_t k, const ptxkit_config *tiles) {
    float *a = malloc(m * k * sizeof *a), *b = malloc(k * n * sizeof *b), *c = malloc(m * n * sizeof *c);
    double *want = calloc(m * n, sizeof *want);
    assert_true(a && b && c && want);
    for (size_t i = 0; i < m * k; i++) a[i] = (float)((int)(test_rand(&rng) % 9) - 4);
    for (size_t i = 0; i < k * n; i++) b[i] = (float)((int)(test_rand(&rng) % 9) - 4);
    for (size_t i = 0; i < m; i++)
        for (size_t p = 0; p < k; p++)
            for (size_t j = 0; j < n; j++) want[i * n + j] += (double)a[i * k + p] * b[p * n + j];
    ptxkit_dptr da, db, dc;
    assert_ok(ctx, ptxkit_memory_alloc(ctx, m * k * 4, &da));
    assert_ok(ctx, ptxkit_memory_alloc(ctx, k * n * 4, &db));
    assert_ok(ctx, ptxkit_memory_alloc(ctx, m * n * 4, &dc));
    assert_ok(ctx, ptxkit_memory_write(ctx, da, a, m * k * 4));
    assert_ok(ctx, ptxkit_memory_write(ctx, db, b, k * n * 4));

    /* unprepared: refused during capture */
    ptxkit_stream *s;
    ptxkit_graph *graph = NULL;
    assert_ok(ctx, ptxkit_stream_create(ctx, PTXKIT_STREAM_NON_BLOCKING, 0, &s));
    assert_ok(ctx, ptxkit_graph_capture_begin(ctx, s));
    ptxkit_status st = ptxkit_gemm(ctx, PTXKIT_FLOAT32, PTXKIT_GEMM_N, PTXKIT_GEMM_N, m, n, k, 1.0, da, k, db, n, 0.0, dc, n,
                                   tiles, s);
    ptxkit_status ended = ptxkit_graph_capture_end(ctx, s, &graph);
    ptxkit_graph_destroy(graph);
    graph = NULL;
    assert_status(PTXKIT_ERROR_CAPTURE, st);
    (void)ended;
    ptxkit_stream_destroy(s);

    assert_ok(ctx, ptxkit_stream_create(ctx, PTXKIT_STREAM_NON_BLOCKING, 0, &s));
    assert_ok(ctx, ptxkit_gemm_prepare(ctx, PTXKIT_FLOAT32, PTXKIT_GEMM_N, PTXKIT_GEMM_N, m, n, k, tiles, s));
    size_t loaded = registry_module_count(ctx);
    assert_ok(ctx, ptxkit_graph_capture_begin(ctx, s));
    st = ptxkit_gemm(ctx, PTXKIT_FLOAT32, PTXKIT_GEMM_N, PTXKIT_GEMM_N, m, n, k, 1.0, da, k, db, n, 0.0, dc, n, tiles, s);
    assert_ok(ctx, ptxkit_graph_capture_end(ctx, s, &graph));
    assert_ok(ctx, st);
    if (registry_module_count(ctx) != loaded) fail_msg("ptxkit_gemm after ptxkit_gemm_prepare loaded a module");
    for (int replay = 0; replay < 2; replay++) {
        assert_ok(ctx, ptxkit_memory_set8_async(ctx, dc, 0xFF, m * n * 4, s));
        assert_ok(ctx, ptxkit_graph_launch(ctx, graph, s));
        assert_ok(ctx, ptxkit_stream_synchronize(ctx, s));
        assert_ok(ctx, ptxkit_memory_read(ctx, c, dc, m * n * 4));
        for (size_t i = 0; i < m * n; i++)
            if ((double)c[i] != want[i])
                fail_msg("%zux%zux%zu replay %d: C[%zu] = %g, want %g", m, n, k, replay, i, (double)c[i], want[i]);
    }
    /* the prepare's own errors name it */
    assert_status(PTXKIT_ERROR_UNSUPPORTED, ptxkit_gemm_prepare(ctx, PTXKIT_INT32, PTXKIT_GEMM_N, PTXKIT_GEMM_N, m, n, k, NULL, s));
    assert_non_null(strstr(ptxkit_last_error(), "ptxkit_gemm_prepare"));
    ptxkit_graph_destroy(graph);
    ptxkit_stream_destroy(s);
    ptxkit_memory_free(ctx, da);
    ptxkit_memory_free(ctx, db);
    ptxkit_memory_free(ctx, dc);
    free(a), free(b), free(c), free(want);
}

/* prepared_capture at a shape that splits K, and (not under a sanitizer)
 * at one whose whole waves are followed by stream-K, launched early
 * behind them: in a graph both launches are programmatic. */
static void test_gemm_prepare(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    static const size_t shapes[][3] = {{64, 512, 4096}, {64, 4096, 4096}, {32, 256, 8192}};
    size_t m = 0, n = 0, k = 0;
    for (int i = 0; i < 3 && !m; i++) {
        ptxkit_config chosen;
        long long split = 0;
        assert_ok(ctx, ptxkit_gemm_config_get(ctx, PTXKIT_FLOAT32, shapes[i][0], shapes[i][1], shapes[i][2], &chosen, NULL));
        if (ptxkit_config_get(&chosen, "split_k", &split) == PTXKIT_SUCCESS && split > 1)
            m = shapes[i][0], n = shapes[i][1], k = shapes[i][2];
    }
    if (!m) fail_msg("no shape of the list splits K on this GPU");
    prepared_capture(ctx, m, n, k, NULL);
    if (small_only) return;

    /* one and a half waves of the built-in tiles, 8 tile columns, the
     * fewest k-tiles the default rule takes (8) */
    gemm_switches defaults = GEMM_SWITCHES_DEFAULT, cuda_cores = f32_cuda_cores();
    gemm_config cfg = f32_square();
    size_t slots;
    n = 8 * (size_t)cfg.bn, m = quarter_wave_rows(GEMM_F32, &cuda_cores, &cfg, 6, &slots), k = 8 * (size_t)cfg.bk;
    gemm_stream_k plan;
    assert_true(gemm_stream_k_for(GEMM_F32, &cuda_cores, &cfg, m, n, k, &ctx->info, &plan));
    assert_true(plan.dp_tiles > 0);
    ptxkit_config square;
    gemm_config_to(&cfg, &square);
    assert_status(PTXKIT_SUCCESS, gemm_switches_set(ctx, &cuda_cores));
    prepared_capture(ctx, m, n, k, &square);
    assert_status(PTXKIT_SUCCESS, gemm_switches_set(ctx, &defaults));
}

int main(void) {
    test_require_gpu();
    const char *env = getenv("PTXKIT_TEST_GEMM_SMALL");
    small_only = env && *env && strcmp(env, "0") != 0;
    rng = test_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gemm_arguments), cmocka_unit_test(test_gemm_degenerate),
        cmocka_unit_test(test_gemm_supported_agrees),
        cmocka_unit_test(test_gemm_shapes),    cmocka_unit_test(test_gemm_f64_odd),
        cmocka_unit_test(test_gemm_f64_tensor_maps), cmocka_unit_test(test_gemm_f32_tensor_cores),
        cmocka_unit_test(test_gemm_f64_simt),  cmocka_unit_test(test_gemm_split_k),
        cmocka_unit_test(test_gemm_configs),   cmocka_unit_test(test_gemm_streams),
        cmocka_unit_test(test_gemm_stream_k),   cmocka_unit_test(test_gemm_repeatable),
        cmocka_unit_test(test_gemm_ladder),    cmocka_unit_test(test_gemm_prepare),
    };
    /* PTXKIT_TEST_GEMM_ONLY=NAME,...: only the tests whose names hold one
     * of them (a sanitizer's run picks the tests it can afford) */
    const char *only = getenv("PTXKIT_TEST_GEMM_ONLY");
    struct CMUnitTest chosen[sizeof tests / sizeof tests[0]];
    size_t count = 0;
    for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++) {
        bool keep = !only || !*only;
        char list[256];
        snprintf(list, sizeof list, "%s", only ? only : "");
        for (char *save = NULL, *tok = strtok_r(list, ",", &save); tok && !keep; tok = strtok_r(NULL, ",", &save))
            keep = strstr(tests[i].name, tok) != NULL;
        if (keep) chosen[count++] = tests[i];
    }
    int failed = _cmocka_run_group_tests("gpu_gemm", chosen, count, NULL, NULL);
    test_gpu_release();
    return failed;
}
