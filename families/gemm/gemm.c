/* gemm: C = alpha * op(A) * op(B) + beta * C: float32 (and float64 before
 * sm_80) on the CUDA cores (gemm.cu), float64 from sm_80 and float32 on
 * sm_90 on the FP64 tensor cores (gemm_dmma.cu, whose kernel gemm_dmma.c
 * gets): argument checks, which configuration a call runs, the split-K
 * and stream-K scratch, gemm.cu's kernels and the launches. The
 * configuration rules are gemm_config.c's. */
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptxkit_ops.h"
#include "family.h"
#include "gemm/gemm.h"
#include "runtime/args.h"
#include "runtime/context.h"
#include "runtime/kernel.h"
#include "runtime/launch.h"
#include "runtime/objects.h"
#include "runtime/status.h"
#include "runtime/stream_scratch.h"
#include "tuned/launch_memo.h"
#include "tuned/lookup.h"

const char *ptxkit_gemm_op_name(ptxkit_gemm_op op) {
    static const char *const names[PTXKIT_GEMM_OP_COUNT] = {"n", "t"};
    return (unsigned)op < PTXKIT_GEMM_OP_COUNT ? names[op] : NULL;
}

static size_t ceil_div(size_t a, size_t b) { return a / b + (a % b != 0); }

/* ---- split-K and stream-K scratch -----------------------------------------
 * A buffer per stream among the GEMM_SCRATCH_SLOTS most recently used, from
 * the stream scratch pool (runtime/stream_scratch.h: hand-over by event,
 * outgrown buffers freed once their work is done, capture rules). A few
 * slots, not one: a stream whose work a graph captured keeps its slot. */
enum { GEMM_SCRATCH_SLOTS = 4 };

static const stream_scratch_client gemm_scratch = {"gemm", GEMM_SCRATCH_SLOTS, 0};

/* ---- arguments ------------------------------------------------------------ */

/* Bytes from the first element of a rows x cols matrix with leading
 * dimension ld to one past its last; false on overflow. */
static bool extent_bytes(size_t rows, size_t cols, size_t ld, size_t elem, size_t *out) {
    size_t elems;
    if (rows == 0 || cols == 0) return *out = 0, true;
    if (!mul_size(rows - 1, ld, &elems) || elems > SIZE_MAX - cols) return false;
    return mul_size(elems + cols, elem, out);
}

typedef struct gemm_operand {
    const char *name;
    ptxkit_dptr ptr;
    size_t rows, cols, ld, bytes; /* as stored */
} gemm_operand;

static ptxkit_status check_operand(ptxkit_context *ctx, gemm_operand *o, size_t elem, bool used) {
    size_t need = o->cols > 1 ? o->cols : 1;
    if (o->ld < need)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT,
                            "ptxkit_gemm: ld%s %zu is less than the %zu elements of a row of %s as stored (%zu x %zu)",
                            o->name, o->ld, need, o->name, o->rows, o->cols);
    if (!extent_bytes(o->rows, o->cols, o->ld, elem, &o->bytes))
        return record_error(ctx, PTXKIT_ERROR_OVERFLOW, "ptxkit_gemm: %s (%zu x %zu, ld %zu) overflows a byte count",
                            o->name, o->rows, o->cols, o->ld);
    if (!used || o->bytes == 0) return PTXKIT_SUCCESS;
    if (!o->ptr) return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_gemm: %s is NULL", o->name);
    if (o->ptr % elem)
        return record_error(ctx, PTXKIT_ERROR_MISALIGNED, "ptxkit_gemm: %s 0x%llx is not %zu-byte aligned", o->name,
                            (unsigned long long)o->ptr, elem);
    if (o->ptr + o->bytes < o->ptr)
        return record_error(ctx, PTXKIT_ERROR_OVERFLOW, "ptxkit_gemm: %s wraps the address space", o->name);
    return PTXKIT_SUCCESS;
}

static bool overlap(const gemm_operand *x, const gemm_operand *y) {
    return x->bytes && y->bytes && x->ptr < y->ptr + y->bytes && y->ptr < x->ptr + x->bytes;
}

/* Everything about a call that can be refused before the GPU is touched. */
typedef struct gemm_call {
    ptxkit_dtype type;
    size_t elem;
    bool trans_a, trans_b, reads_ab;
    size_t m, n, k;
    gemm_operand a, b, c;
} gemm_call;

/* The selectors ptxkit_gemm provides, as the call and ptxkit_gemm_supported
 * both answer: float32 and float64 (else UNSUPPORTED), either op of each
 * operand; INVALID_ARGUMENT out of range. */
static ptxkit_status check_selectors(ptxkit_context *ctx, const char *who, ptxkit_dtype type, ptxkit_gemm_op op_a,
                                     ptxkit_gemm_op op_b) {
    if ((unsigned)type >= PTXKIT_DTYPE_COUNT)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "%s: unknown element type %d", who, (int)type);
    if (type != PTXKIT_FLOAT32 && type != PTXKIT_FLOAT64)
        return record_error(ctx, PTXKIT_ERROR_UNSUPPORTED, "%s: %s is not provided (float32 and float64 are)", who,
                            ptxkit_dtype_name(type));
    if ((unsigned)op_a >= PTXKIT_GEMM_OP_COUNT || (unsigned)op_b >= PTXKIT_GEMM_OP_COUNT)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "%s: op_%s %d is not PTXKIT_GEMM_N or _T", who,
                            (unsigned)op_a >= PTXKIT_GEMM_OP_COUNT ? "a" : "b",
                            (int)((unsigned)op_a >= PTXKIT_GEMM_OP_COUNT ? op_a : op_b));
    return PTXKIT_SUCCESS;
}

static ptxkit_status check_args(ptxkit_context *ctx, gemm_call *g, ptxkit_dtype type, ptxkit_gemm_op op_a,
                                ptxkit_gemm_op op_b, size_t m, size_t n, size_t k, double alpha, ptxkit_dptr a,
                                size_t lda, ptxkit_dptr b, size_t ldb, ptxkit_dptr c, size_t ldc) {
    if (!ctx) return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_gemm: context is NULL");
    ptxkit_status st = check_selectors(ctx, "ptxkit_gemm", type, op_a, op_b);
    if (st != PTXKIT_SUCCESS) return st;
    if (m > INT_MAX || n > INT_MAX || k > INT_MAX)
        return record_error(ctx, PTXKIT_ERROR_UNSUPPORTED, "ptxkit_gemm: %zu x %zu x %zu: sides are at most 2^31 - 1", m,
                            n, k);
    g->type = type;
    g->elem = ptxkit_dtype_size(type);
    g->trans_a = op_a == PTXKIT_GEMM_T;
    g->trans_b = op_b == PTXKIT_GEMM_T;
    g->m = m, g->n = n, g->k = k;
    g->reads_ab = k > 0 && alpha != 0 && m > 0 && n > 0;
    g->a = (gemm_operand){"A", a, g->trans_a ? k : m, g->trans_a ? m : k, lda, 0};
    g->b = (gemm_operand){"B", b, g->trans_b ? n : k, g->trans_b ? k : n, ldb, 0};
    g->c = (gemm_operand){"C", c, m, n, ldc, 0};
    if ((st = check_operand(ctx, &g->a, g->elem, g->reads_ab)) != PTXKIT_SUCCESS ||
        (st = check_operand(ctx, &g->b, g->elem, g->reads_ab)) != PTXKIT_SUCCESS ||
        (st = check_operand(ctx, &g->c, g->elem, m > 0 && n > 0)) != PTXKIT_SUCCESS)
        return st;
    if (g->reads_ab && (overlap(&g->c, &g->a) || overlap(&g->c, &g->b)))
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_gemm: C overlaps %s",
                            overlap(&g->c, &g->a) ? "A" : "B");
    return PTXKIT_SUCCESS;
}

/* ---- kernels ---------------------------------------------------------------- */

/* The main kernel of a configuration for the call's layouts and alignment
 * (vec_a / vec_b: the k-major operand may be copied in 16-byte vectors)
 * and its part in a stream-K plan, under the context's switches sw. */
static ptxkit_status main_kernel(ptxkit_context *ctx, const gemm_switches *sw, gemm_kind kind, ptxkit_dtype type,
                                 const gemm_config *c, const gemm_shape *sh, bool trans_a, bool trans_b, bool vec_a,
                                 bool vec_b, bool partial, gemm_sk_role stream_k, int tma, ptxkit_kernel **fn) {
    if (gemm_kind_tc(kind)) return gemm_dmma_kernel(ctx, sw, kind, c, sh, trans_a, trans_b, vec_a, vec_b, partial, tma, fn);
    int elem = (int)ptxkit_dtype_size(type), v = 16 / elem;
    kernel_spec spec = {.family = "gemm", .entry = type == PTXKIT_FLOAT64 ? "ptxkit_gemm_f64" : "ptxkit_gemm_f32"};
    define_scratch scratch = {0};
    spec_define_int(&spec, &scratch, "GEMM_ENTRY", 0);
    spec_define_int(&spec, &scratch, "GEMM_DOUBLE", type == PTXKIT_FLOAT64);
    spec_define_int(&spec, &scratch, "TRANS_A", trans_a);
    spec_define_int(&spec, &scratch, "TRANS_B", trans_b);
    /* only the k-major operand's copies have a width */
    if (trans_a) spec_define_int(&spec, &scratch, "VEC_A", vec_a ? v : 1);
    if (!trans_b) spec_define_int(&spec, &scratch, "VEC_B", vec_b ? v : 1);
    spec_define_int(&spec, &scratch, "BM", c->bm);
    spec_define_int(&spec, &scratch, "BN", c->bn);
    spec_define_int(&spec, &scratch, "BK", c->bk);
    spec_define_int(&spec, &scratch, "WM", sh->wm);
    spec_define_int(&spec, &scratch, "WN", sh->wn);
    spec_define_int(&spec, &scratch, "TM", c->tm);
    spec_define_int(&spec, &scratch, "TN", c->tn);
    spec_define_int(&spec, &scratch, "STAGES", c->stages);
    spec_define_int(&spec, &scratch, "MIN_BLOCKS", gemm_min_blocks(elem, sw, c, &ctx->info));
    spec_define_int(&spec, &scratch, "GEMM_PARTIAL", partial);
    if (stream_k) spec_define_int(&spec, &scratch, "GEMM_STREAMK", (int)stream_k);
    if (sw->cross_prefetch >= 0) spec_define_int(&spec, &scratch, "GEMM_CROSS_PREFETCH", sw->cross_prefetch);
    spec.option_count =
        gemm_nvrtc_options(elem, c, trans_a, trans_b, stream_k == GEMM_SK_SHARES, &ctx->info, &spec.options);
    ptxkit_status st = kernel_get(ctx, &spec, fn);
    if (st != PTXKIT_SUCCESS) return st;
    /* past the static 48 KB, dynamic shared memory is opted into per function */
    return kernel_reserve_dynamic_shared(*fn, gemm_shared_bytes(elem, c, trans_a, trans_b), false);
}

/* Split-K's second pass; float32 on the tensor cores adds double slices */
static ptxkit_status splitk_kernel(ptxkit_context *ctx, gemm_kind kind, ptxkit_dtype type, ptxkit_kernel **fn) {
    kernel_spec spec = {.family = "gemm",
                        .entry = type == PTXKIT_FLOAT64 ? "ptxkit_gemm_splitk_f64"
                                 : kind == GEMM_F32_TC  ? "ptxkit_gemm_splitk_f64_f32"
                                                        : "ptxkit_gemm_splitk_f32"};
    define_scratch scratch = {0};
    spec_define_int(&spec, &scratch, "GEMM_ENTRY", 1);
    spec_define_int(&spec, &scratch, "GEMM_DOUBLE", type == PTXKIT_FLOAT64);
    return kernel_get(ctx, &spec, fn);
}

/* A configuration this device can run: its rules, then shared memory. */
static ptxkit_status check_config(ptxkit_context *ctx, const gemm_switches *sw, int kind, const gemm_config *c,
                                  gemm_shape *sh) {
    char why[256];
    if (!gemm_config_check(kind, sw, c, sh, why, sizeof why))
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_gemm: tiles %s", why);
    size_t shared = gemm_shared_bytes_max(kind, c);
    size_t limit = ctx->info.shared_per_block_optin > 0 ? (size_t)ctx->info.shared_per_block_optin : 48 * 1024;
    if (shared > limit)
        return record_error(ctx, PTXKIT_ERROR_UNSUPPORTED,
                            "ptxkit_gemm: tiles need %zu bytes of shared memory, more than this GPU's %zu per block",
                            shared, limit);
    return PTXKIT_SUCCESS;
}

static bool tiles_zero(const gemm_config *t) {
    return !t || (!t->bm && !t->bn && !t->bk && !t->tm && !t->tn && !t->warps_m && !t->stages && !t->split_k);
}

/* A tuning database entry's parameters as a configuration (gemm_problem.c
 * stores them by these names). */
static bool config_from_entry(const tune_db_entry *e, gemm_config *c) {
    static const char *const names[] = {"BM", "BN", "BK", "TM", "TN", "WARPS_M", "STAGES", "SPLIT_K"};
    int *fields[] = {&c->bm, &c->bn, &c->bk, &c->tm, &c->tn, &c->warps_m, &c->stages, &c->split_k};
    int found = 0;
    for (int i = 0; i < 8; i++)
        for (int p = 0; p < e->param_count; p++)
            if (strcmp(e->param_names[p], names[i]) == 0 && e->param_values[p] >= 0 && e->param_values[p] <= 1024) {
                *fields[i] = (int)e->param_values[p];
                found++;
                break;
            }
    return found == 8;
}

/* The kernel a call runs: its type's on this GPU, except that a float32
 * configuration of the caller's that only the CUDA-core kernel takes
 * (configurations from before float32 ran on the tensor cores: k-tiles
 * other than 32, lane tiles past 64) runs there. */
static gemm_kind call_kind(const ptxkit_context *ctx, const gemm_switches *sw, ptxkit_dtype type,
                           const gemm_config *tiles) {
    gemm_kind kind = gemm_kind_of(type, &ctx->info, sw);
    char why[256];
    if (kind == GEMM_F32_TC && !tiles_zero(tiles) && !gemm_config_check(GEMM_F32_TC, sw, tiles, NULL, why, sizeof why) &&
        gemm_config_check(GEMM_F32, sw, tiles, NULL, why, sizeof why))
        return GEMM_F32;
    return kind;
}

ptxkit_status gemm_resolve(ptxkit_context *ctx, const gemm_switches *sw, ptxkit_dtype type, size_t m, size_t n,
                           size_t k, const gemm_config *tiles, gemm_config *out, bool *tuned, gemm_kind *kind_out) {
    if (tuned) *tuned = false;
    const gemm_kind kind = call_kind(ctx, sw, type, tiles);
    if (kind_out) *kind_out = kind;
    if (!tiles_zero(tiles)) {
        gemm_config c = *tiles;
        if (!c.bm || !c.bn || !c.bk || !c.tm || !c.tn || !c.warps_m || !c.stages)
            return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT,
                                "ptxkit_gemm: a configuration is given whole (bm, bn, bk, tm, tn, warps_m, stages) "
                                "or not at all (only split_k may be absent)");
        char why[256];
        if (!gemm_config_check(kind, sw, &c, NULL, why, sizeof why))
            return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_gemm: tiles %s%s", why,
                                gemm_kind_tc(kind) ? " (on the tensor cores)" : "");
        *out = c;
        return PTXKIT_SUCCESS;
    }
    gemm_class cls = gemm_class_of(m, n, k);
    *out = gemm_default_for(kind, sw, m, n, k, &ctx->info);
    size_t volume;
    if (!mul_size(m, n, &volume) || !mul_size(volume, k ? k : 1, &volume)) volume = SIZE_MAX;
    char variant[40];
    snprintf(variant, sizeof variant, "%s.%s", ptxkit_dtype_name(type), gemm_class_name(cls));
    tune_db_entry e;
    gemm_config c = {0};
    char why[256];
    /* A database entry is data from disk: used only when it is a configuration. */
    if (volume && tune_lookup_params(ctx, "gemm", variant, volume, &e) && config_from_entry(&e, &c) &&
        gemm_config_check(kind, sw, &c, NULL, why, sizeof why)) {
        *out = c;
        if (tuned) *tuned = true;
    }
    return PTXKIT_SUCCESS;
}

ptxkit_status ptxkit_gemm_config_get(ptxkit_context *ctx, ptxkit_dtype type, size_t m, size_t n, size_t k,
                                     ptxkit_config *out, int *tuned) {
    if (!ctx) return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_gemm_config_get: context is NULL");
    if (!out) return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_gemm_config_get: out is NULL");
    if (type != PTXKIT_FLOAT32 && type != PTXKIT_FLOAT64)
        return record_error(ctx,
                            (unsigned)type < PTXKIT_DTYPE_COUNT ? PTXKIT_ERROR_UNSUPPORTED : PTXKIT_ERROR_INVALID_ARGUMENT,
                            "ptxkit_gemm_config_get: type %d is not float32 or float64", (int)type);
    gemm_config c;
    bool from_db;
    gemm_switches sw = gemm_switches_get(ctx);
    gemm_kind kind;
    ptxkit_status st = gemm_resolve(ctx, &sw, type, m, n, k, NULL, &c, &from_db, &kind);
    if (st != PTXKIT_SUCCESS) return st;
    c.split_k = gemm_split_for(kind, &sw, &c, m, n, k, &ctx->info);
    gemm_config_to(&c, out);
    if (tuned) *tuned = from_db;
    return PTXKIT_SUCCESS;
}

/* ---- the call ------------------------------------------------------------------ */

static bool vector_ok(ptxkit_dptr p, size_t ld, size_t elem) { return p % 16 == 0 && (ld * elem) % 16 == 0; }

/* What a dispatch does besides resolving and loading the kernels. */
typedef enum gemm_action {
    GEMM_LAUNCH,        /* ptxkit_gemm */
    GEMM_TAKE_SCRATCH,  /* ptxkit_gemm_prepare: the stream's split-K scratch, no launch */
    GEMM_KERNELS_ONLY,  /* the tuner's check of a configuration: no stream touched */
} gemm_action;

/* ---- resolutions remembered ---------------------------------------------------
 * What a call resolves to (the kernel kind, its configuration, the tensor-map
 * mode and the loaded kernels) depends on the call's type, layouts, shape,
 * the operands' 16-byte alignment, the caller's tiles, the context's switches
 * and the tuning state, never on the pointers' values: kept per context in
 * launch_memo, so that a repeated call neither consults the tuning database
 * nor builds its kernels' keys again (a small GEMM is bound by the host's
 * time per call). */
static const char gemm_memo; /* the family's tag in launch_memo */

static long long pack2(int lo, int hi) { return (long long)(((unsigned long long)(unsigned)hi << 32) | (unsigned)lo); }
static int low_half(size_t v) { return (int)(unsigned)(v & 0xffffffffu); }
static int high_half(size_t v) { return (int)(unsigned)(v >> 32); }

static launch_memo_key memo_key(const gemm_call *g, const gemm_switches *sw, const gemm_config *tiles, bool vec_a,
                                bool vec_b) {
    const gemm_config t = tiles ? *tiles : (gemm_config){0};
    const long long flags = (long long)g->type | (long long)g->trans_a << 8 | (long long)g->trans_b << 9 |
                            (long long)vec_a << 10 | (long long)vec_b << 11 | (long long)g->reads_ab << 12 |
                            (long long)sw->f64_simt << 13 | (long long)(sw->cross_prefetch + 1) << 16 |
                            (long long)sw->mma_k << 20 | (long long)(sw->tensor_maps + 1) << 28 |
                            (long long)(sw->stream_k + 1) << 32 | (long long)(sw->f32_tensor_cores + 1) << 36;
    const long long selectors[LAUNCH_MEMO_VARIANTS] = {
        (long long)g->m,          (long long)g->n,         (long long)g->k,        flags,
        pack2(t.bm, t.bn),        pack2(t.bk, t.tm),       pack2(t.tn, t.warps_m), pack2(t.stages, t.split_k)};
    size_t volume;
    if (!mul_size(g->m, g->n, &volume) || !mul_size(volume, g->k ? g->k : 1, &volume)) volume = SIZE_MAX;
    return launch_memo_key_for(&gemm_memo, &(launch_options){0}, selectors, LAUNCH_MEMO_VARIANTS, volume);
}

static launch_memo_value memo_value(gemm_kind kind, const gemm_config *c, int tma, ptxkit_kernel *fn,
                                    ptxkit_kernel *reduce_fn, ptxkit_kernel *sk_fn) {
    return (launch_memo_value){.kernel = fn,
                               .extra = {(size_t)reduce_fn, (size_t)sk_fn, (size_t)kind | (size_t)tma << 8,
                                         (size_t)pack2(c->bm, c->bn), (size_t)pack2(c->bk, c->tm),
                                         (size_t)pack2(c->tn, c->warps_m), (size_t)pack2(c->stages, c->split_k)}};
}

static void memo_unpack(const launch_memo_value *v, gemm_kind *kind, gemm_config *c, int *tma) {
    *kind = (gemm_kind)(v->extra[2] & 0xff);
    *tma = (int)(v->extra[2] >> 8);
    *c = (gemm_config){low_half(v->extra[3]), high_half(v->extra[3]), low_half(v->extra[4]), high_half(v->extra[4]),
                       low_half(v->extra[5]), high_half(v->extra[5]), low_half(v->extra[6]), high_half(v->extra[6])};
}

/* ptxkit_gemm, or less of it (gemm_action). */
static ptxkit_status gemm_dispatch(ptxkit_context *ctx, ptxkit_dtype type, ptxkit_gemm_op op_a, ptxkit_gemm_op op_b,
                                   size_t m, size_t n, size_t k, double alpha, ptxkit_dptr a, size_t lda, ptxkit_dptr b,
                                   size_t ldb, double beta, ptxkit_dptr c, size_t ldc, const gemm_config *tiles,
                                   ptxkit_stream *stream, gemm_action action, bool capturing) {
    const bool launch = action == GEMM_LAUNCH;
    gemm_call g;
    ptxkit_status st = check_args(ctx, &g, type, op_a, op_b, m, n, k, alpha, a, lda, b, ldb, c, ldc);
    if (st != PTXKIT_SUCCESS) return st;
    gemm_config cfg;
    /* read once: the switches may change on another thread meanwhile */
    gemm_switches sw = gemm_switches_get(ctx);
    gemm_kind kind;
    const bool vec_a = vector_ok(a, lda, g.elem), vec_b = vector_ok(b, ldb, g.elem);
    const launch_memo_key key = memo_key(&g, &sw, tiles, vec_a, vec_b);
    launch_memo_value memo = {0};
    const bool remembered = launch_memo_find(ctx, &key, &memo);
    int tma = 0;
    if (remembered)
        memo_unpack(&memo, &kind, &cfg, &tma);
    else if ((st = gemm_resolve(ctx, &sw, type, m, n, k, tiles, &cfg, NULL, &kind)) != PTXKIT_SUCCESS)
        return st;
    gemm_shape sh;
    const int elem = (int)g.elem;
    if ((st = check_config(ctx, &sw, kind, &cfg, &sh)) != PTXKIT_SUCCESS) return st;
    if (m == 0 || n == 0) return PTXKIT_SUCCESS;
    /* k == 0 or alpha == 0: C = beta * C, A and B never read (the kernel
     * runs with no k-tiles) */
    const size_t k_run = g.reads_ab ? k : 0;
    size_t tiles_m = ceil_div(m, (size_t)cfg.bm), tiles_n = ceil_div(n, (size_t)cfg.bn);
    if (tiles_m * tiles_n > INT_MAX)
        return record_error(ctx, PTXKIT_ERROR_UNSUPPORTED, "ptxkit_gemm: %zu x %zu needs more than 2^31 - 1 tiles", m, n);
    int split = k_run ? gemm_split_for(kind, &sw, &cfg, m, n, k_run, &ctx->info) : 1;
    size_t k_per_split = k_run, v = (size_t)(16 / elem);
    if (split > 1) {
        k_per_split = ceil_div(ceil_div(k_run, (size_t)split), (size_t)cfg.bk) * (size_t)cfg.bk;
        split = (int)ceil_div(k_run, k_per_split);
    }
    if (k_per_split == 0) k_per_split = 1; /* no k-tiles: any positive slice */
    size_t ldw = ceil_div(n, v) * v, scratch_bytes = 0;
    if (split > 1 && (!mul_size((size_t)split * m, ldw, &scratch_bytes) ||
                      !mul_size(scratch_bytes, (size_t)gemm_sum_bytes(kind), &scratch_bytes)))
        return record_error(ctx, PTXKIT_ERROR_OVERFLOW, "ptxkit_gemm: split-K scratch of %d x %zu x %zu overflows", split,
                            m, n);
    /* stream-K: the blocks' handed-over parts (a tile's sums of each
     * thread), then a flag each (gemm.cu's stream_k_block) */
    gemm_stream_k sk = {0};
    const bool stream_k = split <= 1 && k_run && gemm_stream_k_for(kind, &sw, &cfg, m, n, k_run, &ctx->info, &sk);
    size_t sk_parts = 0;
    if (stream_k) {
        sk_parts = (size_t)sk.blocks * (size_t)sh.threads * (size_t)cfg.tm * (size_t)cfg.tn * g.elem;
        scratch_bytes = sk_parts + (size_t)sk.blocks * sizeof(unsigned);
    }

    if ((st = context_enter(ctx)) != PTXKIT_SUCCESS) return st;
    ptxkit_kernel *fn = memo.kernel, *reduce_fn = NULL, *sk_fn = NULL;
    /* with stream-K behind whole waves, those waves' kernel lets it launch early */
    const bool led = stream_k && sk.dp_tiles > 0;
    if (remembered) {
        reduce_fn = (ptxkit_kernel *)memo.extra[0], sk_fn = (ptxkit_kernel *)memo.extra[1];
    } else {
        tma = gemm_dmma_tma_mode(ctx, &sw, kind, &cfg, g.trans_a, g.trans_b, vec_a, vec_b, n, k_run);
        st = main_kernel(ctx, &sw, kind, type, &cfg, &sh, g.trans_a, g.trans_b, vec_a, vec_b, split > 1,
                         led ? GEMM_SK_LEAD : GEMM_SK_NONE, tma, &fn);
        if (st == PTXKIT_SUCCESS && split > 1) st = splitk_kernel(ctx, kind, type, &reduce_fn);
        if (st == PTXKIT_SUCCESS && stream_k)
            st = main_kernel(ctx, &sw, kind, type, &cfg, &sh, g.trans_a, g.trans_b, vec_a, vec_b, false,
                             GEMM_SK_SHARES, tma, &sk_fn);
        /* a capture paused auto-tuning: its resolution is not the bucket's */
        if (st == PTXKIT_SUCCESS && !capturing) {
            const launch_memo_value v = memo_value(kind, &cfg, tma, fn, reduce_fn, sk_fn);
            launch_memo_store(ctx, &key, &v);
        }
    }
    if (st != PTXKIT_SUCCESS || action == GEMM_KERNELS_ONLY || (!launch && split <= 1 && !stream_k)) goto done;

    /* kernel arguments, in gemm.cu's order */
    CUdeviceptr da = a, db = b, dc = c, dw = 0;
    int im = (int)m, in = (int)n, ik = (int)k_run, kps = (int)(k_per_split > INT_MAX ? INT_MAX : k_per_split);
    long long llda = (long long)lda, lldb = (long long)ldb, lldc = (long long)ldc, lldw = (long long)ldw;
    float alpha32 = (float)alpha, beta32 = (float)beta;
    /* the tensor-core kernels take them in double, float32's too */
    const bool wide = type == PTXKIT_FLOAT64 || gemm_kind_tc(kind);
    void *palpha = wide ? (void *)&alpha : (void *)&alpha32;
    void *pbeta = wide ? (void *)&beta : (void *)&beta32;
    unsigned flags = (beta != 0 ? GEMM_FLAG_BETA : 0u) | (vector_ok(c, ldc, g.elem) ? GEMM_FLAG_VECTOR_C : 0u);
    unsigned shared = (unsigned)gemm_shared_bytes(kind, &cfg, g.trans_a, g.trans_b);
    unsigned grid = (unsigned)(tiles_m * tiles_n);
    const ptxkit_dim3 threads = {(unsigned)sh.threads, 1, 1};
    /* the tensor-map path's two last arguments (a kernel without them reads
     * none past its own) */
    gemm_tma_maps maps = {0};
    if (tma && launch &&
        (st = gemm_dmma_tma_maps(ctx, kind, &cfg, tma, a, lda, b, ldb, m, n, k_run, &maps)) != PTXKIT_SUCCESS)
        goto done;
    void *args[] = {&da,    &db,   &dc, &im,  &in, &ik,   &llda,   &lldb,
                    &lldc, palpha, pbeta, &flags, &kps, &dw, &lldw, &maps.a, &maps.b};
    stream_scratch h;
    const bool scratch = stream_k || split > 1;
    if (scratch) {
        /* held until the kernels are queued: the scratch is this stream's meanwhile */
        if ((st = stream_scratch_acquire(ctx, &gemm_scratch, stream, capturing, &h)) != PTXKIT_SUCCESS) goto done;
        /* room to grow a little without a new buffer */
        st = stream_scratch_grow(ctx, &h, scratch_bytes,
                                 scratch_bytes < SIZE_MAX / 2 ? scratch_bytes + scratch_bytes / 2 : scratch_bytes);
        dw = h.buffer;
    }
    if (st == PTXKIT_SUCCESS && launch && stream_k) {
        /* the flags down (in a graph, a node of its own: every replay) */
        CUresult r = ctx->cu->cuMemsetD32Async(dw + sk_parts, 0, (size_t)sk.blocks, stream_handle(stream));
        if (r != CUDA_SUCCESS) st = record_cuda_error(ctx, r, "ptxkit_gemm: clearing the stream-K flags");
        if (st == PTXKIT_SUCCESS && led)
            st = kernel_launch(fn, (ptxkit_dim3){(unsigned)sk.dp_tiles, 1, 1}, threads, shared, stream, args);
        /* gemm.cu's stream-K reading of k_per_split and ldw: steps a block,
         * the first tile; behind whole waves, its blocks take the SMs that
         * their last blocks leave (GEMM_FLAG_LED) */
        kps = sk.per, lldw = sk.dp_tiles;
        if (led) flags |= GEMM_FLAG_LED;
        const ptxkit_dim3 sk_grid = {(unsigned)sk.blocks, 1, 1};
        if (st == PTXKIT_SUCCESS)
            st = led ? kernel_launch_early(sk_fn, sk_grid, threads, shared, stream, args)
                     : kernel_launch(sk_fn, sk_grid, threads, shared, stream, args);
    } else if (st == PTXKIT_SUCCESS && launch) {
        st = kernel_launch(fn, (ptxkit_dim3){grid, 1, (unsigned)(split > 1 ? split : 1)}, threads, shared, stream, args);
        if (st == PTXKIT_SUCCESS && split > 1) {
            int splits = split;
            void *sum_args[] = {&dw, &splits, &lldw, &dc, &im, &in, &lldc, palpha, pbeta, &flags};
            size_t total = m * n, blocks = ceil_div(total, 256);
            size_t cap = (size_t)(ctx->info.sm_count > 0 ? ctx->info.sm_count : 1) * 8;
            st = kernel_launch(reduce_fn, (ptxkit_dim3){(unsigned)(blocks < cap ? blocks : cap), 1, 1},
                               (ptxkit_dim3){256, 1, 1}, 0, stream, sum_args);
        }
    }
    if (scratch) stream_scratch_release(&h);
done:
    context_leave(ctx);
    return st;
}

ptxkit_status ptxkit_gemm(ptxkit_context *ctx, ptxkit_dtype type, ptxkit_gemm_op op_a, ptxkit_gemm_op op_b, size_t m,
                          size_t n, size_t k, double alpha, ptxkit_dptr a, size_t lda, ptxkit_dptr b, size_t ldb,
                          double beta, ptxkit_dptr c, size_t ldc, const ptxkit_config *config,
                          ptxkit_stream *stream) {
    gemm_config tiles;
    ptxkit_status st = gemm_config_from(ctx, "ptxkit_gemm", config, &tiles);
    return st == PTXKIT_SUCCESS ? gemm_run(ctx, type, op_a, op_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, &tiles,
                                           stream)
                                : st;
}

ptxkit_status gemm_run(ptxkit_context *ctx, ptxkit_dtype type, ptxkit_gemm_op op_a, ptxkit_gemm_op op_b, size_t m,
                       size_t n, size_t k, double alpha, ptxkit_dptr a, size_t lda, ptxkit_dptr b, size_t ldb,
                       double beta, ptxkit_dptr c, size_t ldc, const gemm_config *tiles, ptxkit_stream *stream) {
    capture_guard guard;
    ptxkit_status st = capture_guard_enter(ctx, stream, &guard);
    if (st != PTXKIT_SUCCESS) return name_failure(st, "ptxkit_gemm");
    st = gemm_dispatch(ctx, type, op_a, op_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, tiles, stream, GEMM_LAUNCH,
                       guard.capturing);
    capture_guard_leave(ctx, &guard);
    return name_failure(st, "ptxkit_gemm");
}

/* Operands of no consequence for ptxkit_gemm_prepare: packed (lda = k for
 * N, ...), 256-byte aligned and disjoint, as the call would check them. */
static ptxkit_status prepare_operands(ptxkit_context *ctx, ptxkit_dtype type, ptxkit_gemm_op op_a,
                                      ptxkit_gemm_op op_b, size_t m, size_t n, size_t k, size_t ld[3], ptxkit_dptr at[3]) {
    size_t elem = ptxkit_dtype_size(type);
    size_t rows[3] = {op_a == PTXKIT_GEMM_T ? k : m, op_b == PTXKIT_GEMM_T ? n : k, m};
    ld[0] = op_a == PTXKIT_GEMM_T ? m : k;
    ld[1] = op_b == PTXKIT_GEMM_T ? k : n;
    ld[2] = n;
    ptxkit_dptr next = 256;
    for (int i = 0; i < 3; i++) {
        size_t bytes;
        if (ld[i] == 0) ld[i] = 1;
        at[i] = next;
        if (!mul_size(rows[i], ld[i], &bytes) || !mul_size(bytes, elem, &bytes) || bytes > (SIZE_MAX >> 2) - next)
            return record_error(ctx, PTXKIT_ERROR_OVERFLOW, "%zu x %zu x %zu operands overflow the address space", m, n, k);
        next += (bytes + 255) / 256 * 256;
    }
    return PTXKIT_SUCCESS;
}

ptxkit_status ptxkit_gemm_prepare(ptxkit_context *ctx, ptxkit_dtype type, ptxkit_gemm_op op_a, ptxkit_gemm_op op_b,
                                  size_t m, size_t n, size_t k, const ptxkit_config *config, ptxkit_stream *stream) {
    static const char who[] = "ptxkit_gemm_prepare";
    if (!ctx) return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "%s: context is NULL", who);
    ptxkit_status st = check_selectors(ctx, who, type, op_a, op_b);
    if (st != PTXKIT_SUCCESS) return st;
    gemm_config tiles;
    st = gemm_config_from(ctx, who, config, &tiles);
    size_t ld[3];
    ptxkit_dptr at[3];
    if (st == PTXKIT_SUCCESS) st = prepare_operands(ctx, type, op_a, op_b, m, n, k, ld, at);
    if (st != PTXKIT_SUCCESS) return name_failure(st, who);
    capture_guard guard;
    if ((st = capture_guard_enter(ctx, stream, &guard)) != PTXKIT_SUCCESS) return name_failure(st, who);
    st = gemm_dispatch(ctx, type, op_a, op_b, m, n, k, 1.0, at[0], ld[0], at[1], ld[1], 0.0, at[2], ld[2], &tiles, stream,
                       GEMM_TAKE_SCRATCH, guard.capturing);
    capture_guard_leave(ctx, &guard);
    return name_failure(st, who);
}

ptxkit_status gemm_prepare_call(ptxkit_context *ctx, ptxkit_dtype type, ptxkit_gemm_op op_a, ptxkit_gemm_op op_b,
                                size_t m, size_t n, size_t k, double alpha, ptxkit_dptr a, size_t lda, ptxkit_dptr b,
                                size_t ldb, double beta, ptxkit_dptr c, size_t ldc, const gemm_config *tiles) {
    return gemm_dispatch(ctx, type, op_a, op_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, tiles, NULL,
                         GEMM_KERNELS_ONLY, false);
}

/* ---- the family's descriptor (families/family.h) ---------------------------- */

/* Tuned as a problem of named parameters (tune/gemm_problem.c), not
 * through launch options: no hooks here. Its kernels come from two
 * embedded sources: gemm.cu (this file's) and gemm_dmma.cu (gemm_dmma.c's). */
const family_desc gemm_family = {
    .name = "gemm",
    .description = "ptxkit_gemm: float32/float64 C = alpha * op(A) * op(B) + beta * C on the CUDA cores, float64 on "
                   "the FP64 tensor cores (mma.sync f64, sm_80+), float32 on them too on sm_90",
    .entries = "ptxkit_gemm_<f32|f64>, ptxkit_gemm_splitk_<f32|f64|f64_f32>, ptxkit_gemm_dmma_<f64|f32>",
    .sources = (const char *const[]){"gemm_dmma", NULL},
};

/* ---- public: the sweep, the split ---------------------------------------- */

ptxkit_status ptxkit_gemm_sweep_tiles(ptxkit_context *ctx, ptxkit_dtype type, ptxkit_config *out, int capacity,
                                      int *count) {
    if (!ctx) return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_gemm_sweep_tiles: context is NULL");
    if (!count) return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_gemm_sweep_tiles: count is NULL");
    if (capacity < 0 || (capacity > 0 && !out))
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_gemm_sweep_tiles: out is NULL or capacity %d < 0",
                            capacity);
    if (type != PTXKIT_FLOAT32 && type != PTXKIT_FLOAT64)
        return record_error(ctx, PTXKIT_ERROR_UNSUPPORTED, "ptxkit_gemm_sweep_tiles: type %d (float32 or float64)",
                            (int)type);
    int n;
    gemm_switches sw = gemm_switches_get(ctx);
    const gemm_config *list = gemm_sweep_configs(gemm_kind_of(type, &ctx->info, &sw), &n);
    for (int i = 0; i < n && i < capacity; i++) gemm_config_to(&list[i], &out[i]);
    *count = n;
    return PTXKIT_SUCCESS;
}

ptxkit_status ptxkit_gemm_split_k_get(ptxkit_context *ctx, ptxkit_dtype type, const ptxkit_config *config, size_t m,
                                      size_t n, size_t k, int *split_k) {
    if (!ctx) return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_gemm_split_k_get: context is NULL");
    if (!config || !split_k)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_gemm_split_k_get: config or split_k is NULL");
    if (type != PTXKIT_FLOAT32 && type != PTXKIT_FLOAT64)
        return record_error(ctx,
                            (unsigned)type < PTXKIT_DTYPE_COUNT ? PTXKIT_ERROR_UNSUPPORTED : PTXKIT_ERROR_INVALID_ARGUMENT,
                            "ptxkit_gemm_split_k_get: type %d is not float32 or float64", (int)type);
    gemm_config c;
    ptxkit_status st = gemm_config_from(ctx, "ptxkit_gemm_split_k_get", config, &c);
    if (st != PTXKIT_SUCCESS) return st;
    if (c.bm <= 0 || c.bn <= 0 || c.bk <= 0)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_gemm_split_k_get: block tile %dx%dx%d (bm, bn, bk "
                            "must be set)", c.bm, c.bn, c.bk);
    gemm_switches sw = gemm_switches_get(ctx);
    *split_k = gemm_split_for(call_kind(ctx, &sw, type, &c), &sw, &c, m, n, k, &ctx->info);
    return PTXKIT_SUCCESS;
}

/* The call's own selector check; the context is not read: the float64
 * kernel is chosen by the GPU, the answer is not (ptxkit_ops.h). */
ptxkit_status ptxkit_gemm_supported(ptxkit_context *ctx, ptxkit_dtype type, ptxkit_gemm_op op_a,
                                    ptxkit_gemm_op op_b) {
    (void)ctx;
    return check_selectors(NULL, "ptxkit_gemm_supported", type, op_a, op_b);
}
