/* The GEMM family as a tuning problem.
 *
 * Why not a tune_family of params.c: those families are 1-D in n and their
 * space is the five launch options (block, items, vec, bpsm, load). A GEMM
 * has three sizes and its space is a tile configuration that the launch
 * options cannot express. So it is a problem of its own with named
 * parameters (BM, BN, BK, TM, TN, WARPS_M, STAGES, SPLIT_K: stored as
 * p.NAME=VALUE fields, as an application's tunable is), and the three sizes
 * are folded into the database's (variant, bucket) key the way transpose
 * folds its shape: the variant is "<type>.<class>", the class saying which
 * side is small (gemm_class_of: "square", "small_m", "small_n", "small_k"),
 * and n is m * n * k, bucketed by floor(log2). Skinny shapes, which want
 * small tiles and split-K, so get buckets of their own, while a call looks
 * its configuration up with one key like every other family.
 *
 * At size n the tuner times one shape of the class: sides near cbrt(n) for
 * "square", else the small side 64 and the other two near sqrt(n / 64),
 * rounded to multiples of 64; A and B row-major and dense (op N, N). The
 * inputs are small integers (-2..2), so every configuration's sums are
 * exact whatever their order (split-K included) and a candidate is checked
 * bit for bit against the built-in configuration's output, on a ragged
 * shape (sides 7, 9 and 5 past multiples of 64, edges in every dimension). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptxkit_ops.h"
#include "ptxkit_tune.h"
#include "gemm/gemm.h"
#include "runtime/embedded.h"
#include "runtime/objects.h"
#include "runtime/status.h"
#include "tune/gemm_problem.h"

enum { P_BM, P_BN, P_BK, P_TM, P_TN, P_WARPS_M, P_STAGES, P_SPLIT_K, P_COUNT };
static const char *const param_names[P_COUNT] = {"BM", "BN", "BK", "TM", "TN", "WARPS_M", "STAGES", "SPLIT_K"};

typedef struct gemm_impl {
    ptxkit_dtype type;
    gemm_class cls;
    /* the context's switches when the problem opened: the candidates are
     * checked under the ones the op will compile them with */
    gemm_switches sw;
    size_t m, n, k;                  /* the timed shape */
    ptxkit_dptr a, b, c;
    size_t vm, vn, vk;               /* the verification shape */
    ptxkit_dptr va, vb, vc;
    unsigned char *reference, *scratch;
    size_t verify_bytes;
} gemm_impl;

/* The point of a configuration: the parameters in P_ order. */
static void point_of_config(const gemm_config *c, tune_point *p) {
    const int v[P_COUNT] = {c->bm, c->bn, c->bk, c->tm, c->tn, c->warps_m, c->stages, c->split_k};
    for (int i = 0; i < P_COUNT; i++) p->v[i] = v[i];
}

static gemm_config config_of_point(const tune_point *p) {
    return (gemm_config){(int)p->v[P_BM], (int)p->v[P_BN],      (int)p->v[P_BK],     (int)p->v[P_TM],
                         (int)p->v[P_TN], (int)p->v[P_WARPS_M], (int)p->v[P_STAGES], (int)p->v[P_SPLIT_K]};
}

static size_t round64(double x) {
    size_t r = (size_t)x / 64 * 64;
    return r < 64 ? 64 : r;
}

void gemm_problem_shape(gemm_class cls, size_t volume, size_t *m, size_t *n, size_t *k) {
    if (cls == GEMM_SQUARE) {
        *m = *n = *k = round64(cbrt((double)volume) + 0.5);
        return;
    }
    size_t side = round64(sqrt((double)volume / 64.0) + 0.5);
    *m = cls == GEMM_SMALL_M ? 64 : side;
    *n = cls == GEMM_SMALL_N ? 64 : side;
    *k = cls == GEMM_SMALL_K ? 64 : side;
}

static bool gemm_legal(const tune_problem *pr, const tune_point *p, size_t n, char *why, size_t why_size) {
    (void)n;
    const gemm_impl *g = pr->impl;
    gemm_config c = config_of_point(p);
    int kind = gemm_kind_of(g->type, &pr->ctx->info, &g->sw);
    if (!gemm_config_check(kind, &g->sw, &c, NULL, why, why_size)) return false;
    size_t shared = gemm_shared_bytes_max(kind, &c);
    int limit = pr->ctx->info.shared_per_block_optin > 0 ? pr->ctx->info.shared_per_block_optin : 48 * 1024;
    if (shared > (size_t)limit) {
        snprintf(why, why_size, "%zu bytes of shared memory exceed the block limit of %d", shared, limit);
        return false;
    }
    return true;
}

static void gemm_close(tune_problem *pr) {
    gemm_impl *g = pr->impl;
    ptxkit_dptr *bufs[] = {&g->a, &g->b, &g->c, &g->va, &g->vb, &g->vc};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        if (*bufs[i]) ptxkit_memory_free(pr->ctx, *bufs[i]), *bufs[i] = 0;
    free(g->reference);
    free(g->scratch);
    g->reference = g->scratch = NULL;
}

/* Small integers -2..2, never all zero: exact sums in any order. */
static ptxkit_status fill_integers(ptxkit_context *ctx, ptxkit_dtype type, ptxkit_dptr dst, size_t count,
                                   uint64_t seed) {
    size_t elem = ptxkit_dtype_size(type), bytes = count * elem;
    unsigned char *host = malloc(bytes ? bytes : 1);
    if (!host) return record_error(ctx, PTXKIT_ERROR_OUT_OF_MEMORY, "tune gemm: out of host memory");
    uint64_t s = seed;
    for (size_t i = 0; i < count; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        int x = (int)((s >> 33) % 5) - 2;
        if (i == 0 && x == 0) x = 1;
        if (type == PTXKIT_FLOAT64) {
            double d = x;
            memcpy(host + i * 8, &d, 8);
        } else {
            float f = (float)x;
            memcpy(host + i * 4, &f, 4);
        }
    }
    ptxkit_status st = ptxkit_memory_write(ctx, dst, host, bytes);
    free(host);
    return st;
}

static ptxkit_status alloc_shape(ptxkit_context *ctx, ptxkit_dtype type, size_t m, size_t n, size_t k, ptxkit_dptr *a,
                                 ptxkit_dptr *b, ptxkit_dptr *c, uint64_t seed) {
    size_t elem = ptxkit_dtype_size(type);
    ptxkit_status st;
    if ((st = ptxkit_memory_alloc(ctx, m * k * elem, a)) != PTXKIT_SUCCESS) return st;
    if ((st = ptxkit_memory_alloc(ctx, k * n * elem, b)) != PTXKIT_SUCCESS) return st;
    if ((st = ptxkit_memory_alloc(ctx, m * n * elem, c)) != PTXKIT_SUCCESS) return st;
    if ((st = fill_integers(ctx, type, *a, m * k, seed)) != PTXKIT_SUCCESS) return st;
    if ((st = fill_integers(ctx, type, *b, k * n, seed ^ 0x9e37u)) != PTXKIT_SUCCESS) return st;
    return fill_integers(ctx, type, *c, m * n, seed ^ 0x51edu);
}

static ptxkit_status run_point(tune_problem *pr, const tune_point *p, bool verify, ptxkit_stream *stream) {
    gemm_impl *g = pr->impl;
    gemm_config t = config_of_point(p);
    if (verify)
        return gemm_run(pr->ctx, g->type, PTXKIT_GEMM_N, PTXKIT_GEMM_N, g->vm, g->vn, g->vk, 1.0, g->va, g->vk, g->vb,
                        g->vn, 0.5, g->vc, g->vn, &t, stream);
    return gemm_run(pr->ctx, g->type, PTXKIT_GEMM_N, PTXKIT_GEMM_N, g->m, g->n, g->k, 1.0, g->a, g->k, g->b, g->n, 0.0,
                    g->c, g->n, &t, stream);
}

/* Runs p on the verification shape from C's fresh integers; the result
 * goes to g->scratch. */
static ptxkit_status verify_run(tune_problem *pr, const tune_point *p, ptxkit_stream *stream) {
    gemm_impl *g = pr->impl;
    ptxkit_status st = fill_integers(pr->ctx, g->type, g->vc, g->vm * g->vn, 0xc0ffee);
    if (st == PTXKIT_SUCCESS) st = run_point(pr, p, true, stream);
    if (st == PTXKIT_SUCCESS) st = ptxkit_stream_synchronize(pr->ctx, stream);
    if (st == PTXKIT_SUCCESS) st = ptxkit_memory_read(pr->ctx, g->scratch, g->vc, g->verify_bytes);
    return st;
}

static ptxkit_status gemm_verify(tune_problem *pr, const tune_point *p, ptxkit_stream *stream, bool *same) {
    gemm_impl *g = pr->impl;
    ptxkit_status st = verify_run(pr, p, stream);
    if (st == PTXKIT_SUCCESS) *same = memcmp(g->scratch, g->reference, g->verify_bytes) == 0;
    return st;
}

static ptxkit_status gemm_open(tune_problem *pr, size_t volume) {
    gemm_impl *g = pr->impl;
    gemm_close(pr);
    gemm_problem_shape(g->cls, volume, &g->m, &g->n, &g->k);
    /* the point to beat: what ptxkit_gemm runs untuned at the timed shape
     * (the class's configuration, or smaller tiles where it leaves the
     * GPU short of a wave) */
    gemm_kind kind = gemm_kind_of(g->type, &pr->ctx->info, &g->sw);
    gemm_config d = gemm_default_for(kind, &g->sw, g->m, g->n, g->k, &pr->ctx->info);
    point_of_config(&d, &pr->defaults);
    g->vm = (g->m < 192 ? g->m : 192) + 7;
    g->vn = (g->n < 192 ? g->n : 192) + 9;
    g->vk = (g->k < 320 ? g->k : 320) + 5;
    size_t elem = ptxkit_dtype_size(g->type);
    g->verify_bytes = g->vm * g->vn * elem;
    g->scratch = malloc(g->verify_bytes);
    g->reference = malloc(g->verify_bytes);
    ptxkit_status st = g->scratch && g->reference ? PTXKIT_SUCCESS
                                                  : record_error(pr->ctx, PTXKIT_ERROR_OUT_OF_MEMORY,
                                                                 "tune gemm: out of host memory");
    if (st == PTXKIT_SUCCESS) st = alloc_shape(pr->ctx, g->type, g->m, g->n, g->k, &g->a, &g->b, &g->c, volume);
    if (st == PTXKIT_SUCCESS) st = alloc_shape(pr->ctx, g->type, g->vm, g->vn, g->vk, &g->va, &g->vb, &g->vc, 77);
    if (st == PTXKIT_SUCCESS) st = verify_run(pr, &pr->defaults, NULL);
    if (st != PTXKIT_SUCCESS) {
        gemm_close(pr);
        return st;
    }
    memcpy(g->reference, g->scratch, g->verify_bytes);
    return PTXKIT_SUCCESS;
}

static ptxkit_status gemm_launch(tune_problem *pr, const tune_point *p, ptxkit_stream *stream) {
    return run_point(pr, p, false, stream);
}

/* The kernels run_point's two calls launch (the timed shape's and the
 * verification shape's, which may split differently), from their own
 * arguments: what ptxkit_gemm decides, decided once. */
static ptxkit_status gemm_prepare_point(tune_problem *pr, const tune_point *p) {
    gemm_impl *g = pr->impl;
    gemm_config t = config_of_point(p);
    ptxkit_status st = gemm_prepare_call(pr->ctx, g->type, PTXKIT_GEMM_N, PTXKIT_GEMM_N, g->m, g->n, g->k, 1.0, g->a,
                                         g->k, g->b, g->n, 0.0, g->c, g->n, &t);
    if (st == PTXKIT_SUCCESS)
        st = gemm_prepare_call(pr->ctx, g->type, PTXKIT_GEMM_N, PTXKIT_GEMM_N, g->vm, g->vn, g->vk, 1.0, g->va, g->vk,
                               g->vb, g->vn, 0.5, g->vc, g->vn, &t);
    return st;
}

/* Floating-point operations of the timed shape: the reports' "GB/s" read
 * as GFLOP/s. */
static double gemm_flops(const tune_problem *pr, size_t volume) {
    const gemm_impl *g = pr->impl;
    size_t m, n, k;
    gemm_problem_shape(g->cls, volume, &m, &n, &k);
    return 2.0 * (double)m * (double)n * (double)k;
}

/* As ptxkit_gemm takes it: lowercase names (the database keeps the
 * kernel's define names, BM .. SPLIT_K). */
static void gemm_point_config(const tune_problem *pr, const tune_point *p, ptxkit_config *out) {
    (void)pr;
    gemm_config c = config_of_point(p);
    gemm_config_to(&c, out);
}

static const tune_problem_ops gemm_ops = {
    .config = gemm_point_config,
    .legal = gemm_legal,
    .open = gemm_open,
    .close = gemm_close,
    .prepare = gemm_prepare_point,
    .launch = gemm_launch,
    .verify = gemm_verify,
    .bytes = gemm_flops,
};

bool gemm_variant_parse(const char *variant, ptxkit_dtype *type, gemm_class *cls) {
    const char *v = variant && *variant ? variant : "float32.square";
    for (int t = 0; t < 2; t++) {
        ptxkit_dtype dt = t ? PTXKIT_FLOAT64 : PTXKIT_FLOAT32;
        const char *name = ptxkit_dtype_name(dt);
        size_t len = strlen(name);
        if (strncmp(v, name, len) != 0 || v[len] != '.') continue;
        for (int c = 0; c < GEMM_CLASS_COUNT; c++)
            if (strcmp(v + len + 1, gemm_class_name((gemm_class)c)) == 0) {
                *type = dt;
                *cls = (gemm_class)c;
                return true;
            }
    }
    return false;
}

ptxkit_status gemm_problem_init(tune_problem *pr, ptxkit_context *ctx, const char *variant) {
    memset(pr, 0, sizeof *pr);
    ptxkit_dtype type;
    gemm_class cls;
    if (!gemm_variant_parse(variant, &type, &cls))
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT,
                            "ptxkit_tune: gemm variants are <type>.<class>: float32 or float64, and square, small_m, "
                            "small_n or small_k (not '%s')",
                            variant);
    gemm_impl *g = calloc(1, sizeof *g);
    if (!g) return record_error(ctx, PTXKIT_ERROR_OUT_OF_MEMORY, "tune gemm: out of host memory");
    g->type = type;
    g->cls = cls;
    g->sw = gemm_switches_get(ctx);
    pr->ctx = ctx;
    pr->impl = g;
    pr->ops = &gemm_ops;
    pr->named = true;
    pr->code = embedded_sources_digest(); /* the tuning record's timings are of this code */
    snprintf(pr->family, sizeof pr->family, "gemm");
    snprintf(pr->variant, sizeof pr->variant, "%s.%s", ptxkit_dtype_name(type), gemm_class_name(cls));
    bool f64 = type == PTXKIT_FLOAT64;
    gemm_kind kind = gemm_kind_of(type, &ctx->info, &g->sw);
    /* on the tensor cores tm x tn is a lane's part of C (gemm.h), tn whole 4s */
    bool tc = gemm_kind_tc(kind);
    const long long values[P_COUNT][8] = {
        {32, 64, 128, 256},   {32, 64, 128, 256},   {8, 16, 32}, {f64 || tc ? 2 : 4, f64 || tc ? 4 : 8, f64 || tc ? 8 : 16},
        {tc ? 4 : f64 ? 2 : 4, tc ? 8 : f64 ? 4 : 8, tc ? 16 : f64 ? 8 : 16}, {1, 2, 4, 8}, {2, 3, 4, 5}, {0, 1, 2, 4, 8, 16},
    };
    const int counts[P_COUNT] = {4, 4, 3, 3, 3, 4, 4, 6};
    pr->param_count = P_COUNT;
    for (int i = 0; i < P_COUNT; i++) {
        snprintf(pr->names[i], sizeof pr->names[i], "%s", param_names[i]);
        pr->counts[i] = counts[i];
        for (int j = 0; j < counts[i]; j++) pr->values[i][j] = values[i][j];
    }
    /* The grid: the tile shapes (block, thread, warp layout); then descents
     * over k-depth, stages and split-K. */
    pr->primary[P_BM] = pr->primary[P_BN] = pr->primary[P_TM] = pr->primary[P_TN] = pr->primary[P_WARPS_M] = true;
    /* the search starts from the class's configuration; the defaults
     * follow the timed shape (gemm_open) */
    gemm_config d = gemm_default_config(kind, cls);
    point_of_config(&d, &pr->start);
    pr->defaults = pr->start;
    return PTXKIT_SUCCESS;
}

void gemm_problem_free(tune_problem *pr) {
    if (!pr || !pr->impl) return;
    free(pr->impl);
    pr->impl = NULL;
}
