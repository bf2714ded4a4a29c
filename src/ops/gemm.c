/* gemm: C = alpha * op(A) * op(B) + beta * C: float32 (and float64 before
 * sm_80) on the CUDA cores (cu_sources/gemm.cu), float64 from sm_80 on the
 * FP64 tensor cores (cu_sources/gemm_dmma.cu); configurations, argument
 * checks, the split-K scratch and the launch. */
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/family.h"
#include "ops/gemm.h"
#include "runtime/stream_scratch.h"
#include "tuned/lookup.h"

const char *ptxkit_gemm_op_name(ptxkit_gemm_op op) {
    static const char *const names[PTXKIT_GEMM_OP_COUNT] = {"n", "t"};
    return (unsigned)op < PTXKIT_GEMM_OP_COUNT ? names[op] : NULL;
}

/* ---- shape classes and configurations ------------------------------------ */

gemm_class gemm_class_of(size_t m, size_t n, size_t k) {
    bool sm = m < GEMM_SMALL_SIDE, sn = n < GEMM_SMALL_SIDE;
    if (sm && (!sn || m <= n)) return GEMM_SMALL_M;
    if (sn) return GEMM_SMALL_N;
    return k < GEMM_SMALL_SIDE ? GEMM_SMALL_K : GEMM_SQUARE;
}

const char *gemm_class_name(gemm_class c) {
    static const char *const names[GEMM_CLASS_COUNT] = {"square", "small_m", "small_n", "small_k"};
    return (unsigned)c < GEMM_CLASS_COUNT ? names[c] : NULL;
}

ptxkit_gemm_tiles gemm_tiles_of(const gemm_config *c) {
    ptxkit_gemm_tiles t = {0};
    t.bm = c->bm, t.bn = c->bn, t.bk = c->bk, t.tm = c->tm, t.tn = c->tn;
    t.warps_m = c->warps_m, t.stages = c->stages, t.split_k = c->split_k;
    return t;
}

gemm_config gemm_config_of(const ptxkit_gemm_tiles *t) {
    return (gemm_config){t->bm, t->bn, t->bk, t->tm, t->tn, t->warps_m, t->stages, t->split_k};
}

void gemm_config_format(const gemm_config *c, char *buf, size_t size) {
    char split[16];
    if (c->split_k) snprintf(split, sizeof split, "%d", c->split_k);
    else snprintf(split, sizeof split, "-");
    snprintf(buf, size, "%dx%dx%d t%dx%d w%d s%d k%s", c->bm, c->bn, c->bk, c->tm, c->tn, c->warps_m, c->stages, split);
}

/* The copies of one operand tile, as gemm.cu's loaders lay them out: a
 * k-major operand is copied `vec` elements at a time along its `cols`; one
 * with k contiguous, one element at a time down its lines. */
static bool direct_copies_fit(int threads, int cols, int vec, int bk) {
    if (cols % vec) return false;
    int per_row = cols / vec;
    if (threads % per_row) return false;
    int row_step = threads / per_row;
    return row_step >= bk || bk % row_step == 0;
}

static bool transposed_copies_fit(int threads, int cols, int bk) {
    if (threads % bk) return false;
    int line_step = threads / bk;
    return cols % line_step == 0 && cols / line_step <= 32;
}

/* float64 on the CUDA cores everywhere (gemm_set_f64_simt): 0 no. */
static atomic_int f64_simt = 0;

void gemm_set_f64_simt(bool on) { atomic_store(&f64_simt, on ? 1 : 0); }

gemm_kind gemm_kind_of(ptxkit_dtype type, const ptxkit_device_info *info) {
    if (type != PTXKIT_FLOAT64) return GEMM_F32;
    return info && info->cc_major >= 8 && !atomic_load(&f64_simt) ? GEMM_F64_TC : GEMM_F64;
}

bool gemm_check_warps(const gemm_config *c, int *threads, int *warps, int *wm, int *wn, char *why, size_t why_size) {
    *threads = (c->bm / c->tm) * (c->bn / c->tn);
    if (*threads < 32 || *threads > GEMM_MAX_THREADS || *threads % 32)
        return snprintf(why, why_size, "%d threads (bm/tm x bn/tn) are not whole warps within 32..%d", *threads,
                        GEMM_MAX_THREADS),
               false;
    *warps = *threads / 32;
    if (c->warps_m < 1 || *warps % c->warps_m || c->bm % c->warps_m || c->bn % (*warps / c->warps_m))
        return snprintf(why, why_size, "%d warps cannot be %d along M over a %d x %d tile", *warps, c->warps_m, c->bm,
                        c->bn),
               false;
    *wm = c->bm / c->warps_m, *wn = c->bn / (*warps / c->warps_m);
    return true;
}

bool gemm_check_stages(const gemm_config *c, char *why, size_t why_size) {
    if (c->stages < 2 || c->stages > 8) return snprintf(why, why_size, "stages %d is not 2..8", c->stages), false;
    if (c->split_k < 0 || c->split_k > GEMM_MAX_SPLIT_K)
        return snprintf(why, why_size, "split_k %d is not 0..%d", c->split_k, GEMM_MAX_SPLIT_K), false;
    return true;
}

bool gemm_config_check(int kind, const gemm_config *c, gemm_shape *shape, char *why, size_t why_size) {
    if (kind == GEMM_F64_TC) return gemm_dmma_config_check(c, shape, why, why_size);
    const int elem = kind;
    const int v = 16 / elem;
    if (elem != 4 && elem != 8) return snprintf(why, why_size, "elements of %d bytes", elem), false;
    if (!gemm_power_of_two(c->bm) || !gemm_power_of_two(c->bn) || c->bm < 8 || c->bn < 8 || c->bm > 512 || c->bn > 512)
        return snprintf(why, why_size, "block tile %d x %d: sides are powers of two in [8, 512]", c->bm, c->bn), false;
    if (c->bk != 4 && c->bk != 8 && c->bk != 16 && c->bk != 32)
        return snprintf(why, why_size, "bk %d is not 4, 8, 16 or 32", c->bk), false;
    if (c->tm < v || c->tn < v || c->tm > 16 || c->tn > 16 || c->tm % v || c->tn % v)
        return snprintf(why, why_size, "thread tile %d x %d: sides are multiples of %d (16 bytes) up to 16", c->tm,
                        c->tn, v),
               false;
    if (c->bm % c->tm || c->bn % c->tn)
        return snprintf(why, why_size, "thread tile %d x %d does not divide the block tile %d x %d", c->tm, c->tn,
                        c->bm, c->bn),
               false;
    int threads, warps, wm, wn;
    if (!gemm_check_warps(c, &threads, &warps, &wm, &wn, why, why_size)) return false;
    if (wm % c->tm || wn % c->tn || (wm / c->tm) * (wn / c->tn) != 32)
        return snprintf(why, why_size, "warp tile %d x %d is not 32 thread tiles of %d x %d", wm, wn, c->tm, c->tn),
               false;
    if (!gemm_check_stages(c, why, why_size)) return false;
    /* Either operand may come k-major (copied in vectors, or one element
     * at a time where unaligned) or with k contiguous (transposed on the
     * way in): the configuration must serve all four. */
    for (int side = 0; side < 2; side++) {
        int cols = side ? c->bn : c->bm;
        if (!direct_copies_fit(threads, cols, v, c->bk) || !direct_copies_fit(threads, cols, 1, c->bk) ||
            !transposed_copies_fit(threads, cols, c->bk))
            return snprintf(why, why_size,
                            "%d threads cannot copy a %d x %d tile of %s evenly (every layout needs threads a multiple "
                            "of %d and of bk, and tile %d a multiple of threads / bk)",
                            threads, c->bk, cols, side ? "B" : "A", cols, cols),
                   false;
    }
    if (shape) *shape = (gemm_shape){threads, warps, wm, wn, wm / c->tm, wn / c->tn};
    return true;
}

size_t gemm_shared_bytes(int kind, const gemm_config *c, bool trans_a, bool trans_b) {
    if (kind == GEMM_F64_TC) {
        /* gemm_dmma.cu: K-contiguous rows of bk + 2, M/N-contiguous ones of bm + 4 (bn + 4) */
        size_t bm = (size_t)c->bm, bn = (size_t)c->bn, bk = (size_t)c->bk;
        size_t a = trans_a ? bk * (bm + 4) : bm * (bk + 2), b = trans_b ? bn * (bk + 2) : bk * (bn + 4);
        return (size_t)c->stages * (a + b) * 8;
    }
    int elem = kind, v = 16 / elem;
    size_t row_a = (size_t)c->bm + (trans_a ? 0 : (size_t)v), row_b = (size_t)c->bn + (trans_b ? (size_t)v : 0);
    return (size_t)c->stages * (size_t)c->bk * (row_a + row_b) * (size_t)elem;
}

size_t gemm_shared_bytes_max(int kind, const gemm_config *c) {
    size_t most = 0;
    for (int l = 0; l < 4; l++) {
        size_t s = gemm_shared_bytes(kind, c, l & 2, l & 1);
        if (s > most) most = s;
    }
    return most;
}

/* Registers a thread needs: its tile of C, two k-steps of fragments, and
 * about 28 for addresses, loaders and loop state (ptxas -v on sm_90: 127
 * for 8 x 8 floats, 202 for 8 x 16, 148 for 4 x 8 doubles). */
static int registers_estimate(int elem, const gemm_config *c) {
    int words = elem / 4;
    return words * (c->tm * c->tn + 2 * (c->tm + c->tn)) + 28;
}

int gemm_min_blocks(int kind, const gemm_config *c, const ptxkit_device_info *info) {
    int threads = (c->bm / c->tm) * (c->bn / c->tn);
    int regs = ((kind == GEMM_F64_TC ? gemm_dmma_registers(c) : registers_estimate(kind, c)) + 7) / 8 * 8;
    int regs_sm = info && info->regs_per_sm > 0 ? info->regs_per_sm : 65536;
    int threads_sm = info && info->max_threads_per_sm > 0 ? info->max_threads_per_sm : 2048;
    int blocks = regs_sm / (threads * regs);
    if (blocks > threads_sm / threads) blocks = threads_sm / threads;
    /* (gemm.cu's: the layout of neither operand transposed, as always) */
    size_t shared = kind == GEMM_F64_TC ? gemm_shared_bytes_max(kind, c) : gemm_shared_bytes(kind, c, false, false);
    size_t shared_sm = info && info->shared_per_sm > 0 ? (size_t)info->shared_per_sm : 228 * 1024;
    /* the driver reserves 1 KB of shared memory per block */
    size_t by_shared = shared_sm / (shared + 1024);
    if ((size_t)blocks > by_shared) blocks = (int)by_shared;
    return blocks < 1 ? 1 : blocks > 8 ? 8 : blocks;
}

/* Built-in configurations, per type and shape class (the tuner's starting
 * points), from the sweeps on an H100 (BENCHMARKS.md, "GEMM"). */
gemm_config gemm_default_config(gemm_kind kind, gemm_class c) {
    if (kind == GEMM_F64_TC) {
        switch (c) {
        /* 4 warps of 32 x 32 */
        case GEMM_SMALL_M:
        case GEMM_SMALL_N: return (gemm_config){64, 64, 16, 4, 8, 2, 4, 0};
        /* 4 warps of 64 x 32, two blocks per SM (cuBLAS's DGEMM runs 4
         * warps of 64 x 32 two blocks per SM too): the fastest of the sweep
         * at 2048^3, 4096^3 and 8192^3 on an H100, ahead of 128 x 128 with 8
         * warps (BENCHMARKS.md, "FP64 on the tensor cores") */
        default: return (gemm_config){64, 128, 16, 8, 8, 1, 4, 0};
        }
    }
    if (kind == GEMM_F64) {
        switch (c) {
        case GEMM_SMALL_M:
        case GEMM_SMALL_N: return (gemm_config){64, 64, 8, 4, 8, 2, 4, 0};
        default: return (gemm_config){64, 128, 8, 8, 8, 2, 3, 0}; /* 22 TFLOP/s at 2048^3 and 4096^3 */
        }
    }
    switch (c) {
    case GEMM_SMALL_M: return (gemm_config){64, 128, 8, 8, 8, 2, 4, 0};
    case GEMM_SMALL_N: return (gemm_config){128, 64, 8, 8, 8, 2, 4, 0};
    case GEMM_SMALL_K: return (gemm_config){128, 128, 8, 8, 8, 4, 3, 0};
    /* 92% of cuBLAS (pedantic) at 2048^3, 4096^3 and 8192^3 in the second
     * H100 sweep: the best all-round configuration of it */
    default: return (gemm_config){128, 128, 16, 8, 8, 2, 4, 0};
    }
}

/* The configurations `ptxkit bench gemm --tiles sweep` times: the shapes
 * known to work for SIMT GEMMs on recent GPUs (128 x 128 to 256 x 128
 * block tiles, 8 x 8 and 8 x 16 thread tiles, k-tiles of 8 to 32, two to
 * four stages), and smaller tiles for skinny shapes. */
static const gemm_config sweep_f32[] = {
    {128, 128, 8, 8, 8, 4, 4, 0},   {128, 128, 16, 8, 8, 4, 3, 0},  {128, 128, 16, 8, 8, 4, 4, 0},
    {128, 128, 32, 8, 8, 4, 2, 0},  {128, 128, 32, 8, 8, 4, 3, 0},  {128, 128, 16, 8, 8, 2, 4, 0},
    {128, 128, 8, 8, 16, 2, 3, 0},  {128, 128, 16, 8, 16, 2, 3, 0}, {128, 128, 32, 8, 16, 2, 2, 0},
    {128, 256, 16, 8, 16, 2, 3, 0}, {256, 128, 16, 16, 8, 4, 2, 0}, {128, 256, 32, 8, 16, 2, 2, 0},
    {64, 128, 16, 8, 8, 2, 4, 0},   {128, 64, 16, 8, 8, 2, 4, 0},   {64, 64, 16, 4, 8, 2, 3, 0},
    {128, 128, 8, 8, 8, 2, 4, 0},
};
static const gemm_config sweep_f64[] = {
    {64, 128, 8, 8, 8, 2, 3, 0},  {64, 128, 16, 8, 8, 2, 3, 0}, {128, 64, 16, 8, 8, 2, 3, 0},
    {128, 128, 16, 8, 8, 4, 2, 0}, {64, 128, 32, 8, 8, 2, 2, 0}, {128, 128, 8, 8, 8, 4, 3, 0},
    {64, 64, 8, 4, 8, 2, 4, 0},   {64, 128, 8, 4, 8, 2, 4, 0},  {128, 64, 8, 8, 8, 2, 3, 0},
};

/* Tensor cores: warp tiles of 64 x 32 or 32 x 64 doubles (4 x 4 or 2 x 8
 * mma tiles, 64 accumulators a lane) in blocks of 4 or 8 warps, and
 * smaller ones for skinny shapes; the default first (the sanitizer runs
 * take the first three). */
static const gemm_config sweep_f64_tc[] = {
    {64, 128, 16, 8, 8, 1, 4, 0},  {128, 128, 16, 8, 8, 2, 4, 0},  {128, 64, 16, 8, 8, 2, 4, 0},
    {128, 128, 32, 8, 8, 2, 3, 0}, {128, 128, 16, 8, 8, 2, 3, 0},  {128, 128, 32, 4, 16, 4, 3, 0},
    {128, 128, 16, 4, 16, 4, 4, 0}, {128, 64, 16, 8, 8, 2, 3, 0},  {128, 128, 8, 8, 8, 2, 4, 0},
    {64, 64, 16, 4, 8, 2, 4, 0},   {64, 64, 32, 4, 8, 2, 3, 0},
};

const gemm_config *gemm_sweep_configs(gemm_kind kind, int *count) {
    if (kind == GEMM_F64_TC) {
        *count = (int)(sizeof sweep_f64_tc / sizeof sweep_f64_tc[0]);
        return sweep_f64_tc;
    }
    if (kind == GEMM_F64) {
        *count = (int)(sizeof sweep_f64 / sizeof sweep_f64[0]);
        return sweep_f64;
    }
    *count = (int)(sizeof sweep_f32 / sizeof sweep_f32[0]);
    return sweep_f32;
}

static size_t ceil_div(size_t a, size_t b) { return a / b + (a % b != 0); }

int gemm_split_for(const gemm_config *c, size_t m, size_t n, size_t k, int sm_count) {
    if (c->split_k) return c->split_k;
    size_t tiles = ceil_div(m, (size_t)c->bm) * ceil_div(n, (size_t)c->bn);
    size_t sms = sm_count > 0 ? (size_t)sm_count : 1;
    if (tiles >= sms) return 1;
    size_t want = ceil_div(2 * sms, tiles);
    /* slices of at least 64 k and 4 k-tiles: a slice's prologue and the
     * second pass must stay small next to its work */
    size_t min_slice = (size_t)c->bk * 4 > 64 ? (size_t)c->bk * 4 : 64;
    size_t by_k = k / min_slice;
    size_t split = want < by_k ? want : by_k;
    if (split > GEMM_MAX_SPLIT_K) split = GEMM_MAX_SPLIT_K;
    return split < 2 ? 1 : (int)split;
}

/* ---- split-K scratch -------------------------------------------------------
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

static ptxkit_status check_args(ptxkit_context *ctx, gemm_call *g, ptxkit_dtype type, ptxkit_gemm_op op_a,
                                ptxkit_gemm_op op_b, size_t m, size_t n, size_t k, double alpha, ptxkit_dptr a,
                                size_t lda, ptxkit_dptr b, size_t ldb, ptxkit_dptr c, size_t ldc) {
    if (!ctx) return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_gemm: context is NULL");
    if ((unsigned)type >= PTXKIT_DTYPE_COUNT)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_gemm: unknown element type %d", (int)type);
    if (type != PTXKIT_FLOAT32 && type != PTXKIT_FLOAT64)
        return record_error(ctx, PTXKIT_ERROR_UNSUPPORTED, "ptxkit_gemm: %s is not provided (float32 and float64 are)",
                            ptxkit_dtype_name(type));
    if ((unsigned)op_a >= PTXKIT_GEMM_OP_COUNT || (unsigned)op_b >= PTXKIT_GEMM_OP_COUNT)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_gemm: op_%s %d is not PTXKIT_GEMM_N or _T",
                            (unsigned)op_a >= PTXKIT_GEMM_OP_COUNT ? "a" : "b",
                            (int)((unsigned)op_a >= PTXKIT_GEMM_OP_COUNT ? op_a : op_b));
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
    ptxkit_status st;
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

/* The main loop's experiment switch (gemm.h): -1 the kernel's default. */
static atomic_int cross_prefetch = -1;

void gemm_set_cross_prefetch(int on) { atomic_store(&cross_prefetch, on < 0 ? -1 : on ? 1 : 0); }

/* The main kernel of a configuration for the call's layouts and alignment
 * (vec_a / vec_b: the k-major operand may be copied in 16-byte vectors). */
static ptxkit_status main_kernel(ptxkit_context *ctx, ptxkit_dtype type, const gemm_config *c, const gemm_shape *sh,
                                 bool trans_a, bool trans_b, bool vec_a, bool vec_b, bool partial, ptxkit_kernel **fn) {
    if (gemm_kind_of(type, &ctx->info) == GEMM_F64_TC)
        return gemm_dmma_kernel(ctx, c, sh, trans_a, trans_b, vec_a, vec_b, partial, fn);
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
    spec_define_int(&spec, &scratch, "MIN_BLOCKS", gemm_min_blocks(elem, c, &ctx->info));
    spec_define_int(&spec, &scratch, "GEMM_PARTIAL", partial);
    int prefetch = atomic_load(&cross_prefetch);
    if (prefetch >= 0) spec_define_int(&spec, &scratch, "GEMM_CROSS_PREFETCH", prefetch);
    ptxkit_status st = kernel_get(ctx, &spec, fn);
    if (st != PTXKIT_SUCCESS) return st;
    /* past the static 48 KB, dynamic shared memory is opted into per function */
    return kernel_reserve_dynamic_shared(*fn, gemm_shared_bytes(elem, c, trans_a, trans_b), false);
}

static ptxkit_status splitk_kernel(ptxkit_context *ctx, ptxkit_dtype type, ptxkit_kernel **fn) {
    kernel_spec spec = {.family = "gemm",
                        .entry = type == PTXKIT_FLOAT64 ? "ptxkit_gemm_splitk_f64" : "ptxkit_gemm_splitk_f32"};
    define_scratch scratch = {0};
    spec_define_int(&spec, &scratch, "GEMM_ENTRY", 1);
    spec_define_int(&spec, &scratch, "GEMM_DOUBLE", type == PTXKIT_FLOAT64);
    return kernel_get(ctx, &spec, fn);
}

/* A configuration this device can run: its rules, then shared memory. */
static ptxkit_status check_config(ptxkit_context *ctx, int kind, const gemm_config *c, gemm_shape *sh) {
    char why[256];
    if (!gemm_config_check(kind, c, sh, why, sizeof why))
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_gemm: tiles %s", why);
    size_t shared = gemm_shared_bytes_max(kind, c);
    size_t limit = ctx->info.shared_per_block_optin > 0 ? (size_t)ctx->info.shared_per_block_optin : 48 * 1024;
    if (shared > limit)
        return record_error(ctx, PTXKIT_ERROR_UNSUPPORTED,
                            "ptxkit_gemm: tiles need %zu bytes of shared memory, more than this GPU's %zu per block",
                            shared, limit);
    return PTXKIT_SUCCESS;
}

static bool tiles_zero(const ptxkit_gemm_tiles *t) {
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

ptxkit_status gemm_resolve(ptxkit_context *ctx, ptxkit_dtype type, size_t m, size_t n, size_t k,
                           const ptxkit_gemm_tiles *tiles, gemm_config *out, bool *tuned) {
    if (tuned) *tuned = false;
    int kind = gemm_kind_of(type, &ctx->info);
    if (tiles && !RESERVED_ZERO(tiles))
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_gemm: reserved tile fields are set");
    if (!tiles_zero(tiles)) {
        gemm_config c = gemm_config_of(tiles);
        if (!c.bm || !c.bn || !c.bk || !c.tm || !c.tn || !c.warps_m || !c.stages)
            return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT,
                                "ptxkit_gemm: tiles are given whole (bm, bn, bk, tm, tn, warps_m, stages) or not at "
                                "all (only split_k may be 0)");
        char why[256];
        if (!gemm_config_check(kind, &c, NULL, why, sizeof why))
            return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_gemm: tiles %s%s", why,
                                kind == GEMM_F64_TC ? " (float64 on the tensor cores)" : "");
        *out = c;
        return PTXKIT_SUCCESS;
    }
    gemm_class cls = gemm_class_of(m, n, k);
    *out = gemm_default_config((gemm_kind)kind, cls);
    size_t volume;
    if (!mul_size(m, n, &volume) || !mul_size(volume, k ? k : 1, &volume)) volume = SIZE_MAX;
    char variant[40];
    snprintf(variant, sizeof variant, "%s.%s", ptxkit_dtype_name(type), gemm_class_name(cls));
    tune_db_entry e;
    gemm_config c = {0};
    char why[256];
    /* A database entry is data from disk: used only when it is a configuration. */
    if (volume && tune_lookup_params(ctx, "gemm", variant, volume, &e) && config_from_entry(&e, &c) &&
        gemm_config_check(kind, &c, NULL, why, sizeof why)) {
        *out = c;
        if (tuned) *tuned = true;
    }
    return PTXKIT_SUCCESS;
}

ptxkit_status ptxkit_gemm_config_get(ptxkit_context *ctx, ptxkit_dtype type, size_t m, size_t n, size_t k,
                                 ptxkit_gemm_tiles *out, int *tuned) {
    if (!ctx) return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_gemm_config_get: context is NULL");
    if (!out) return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_gemm_config_get: out is NULL");
    if (type != PTXKIT_FLOAT32 && type != PTXKIT_FLOAT64)
        return record_error(ctx,
                            (unsigned)type < PTXKIT_DTYPE_COUNT ? PTXKIT_ERROR_UNSUPPORTED : PTXKIT_ERROR_INVALID_ARGUMENT,
                            "ptxkit_gemm_config_get: type %d is not float32 or float64", (int)type);
    gemm_config c;
    bool from_db;
    ptxkit_status st = gemm_resolve(ctx, type, m, n, k, NULL, &c, &from_db);
    if (st != PTXKIT_SUCCESS) return st;
    c.split_k = gemm_split_for(&c, m, n, k, ctx->info.sm_count);
    *out = gemm_tiles_of(&c);
    if (tuned) *tuned = from_db;
    return PTXKIT_SUCCESS;
}

ptxkit_status gemm_prepare(ptxkit_context *ctx, ptxkit_dtype type, ptxkit_gemm_op op_a, ptxkit_gemm_op op_b,
                           const ptxkit_gemm_tiles *tiles) {
    if (!ctx) return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "gemm_prepare: context is NULL");
    if (type != PTXKIT_FLOAT32 && type != PTXKIT_FLOAT64)
        return record_error(ctx, PTXKIT_ERROR_UNSUPPORTED, "gemm_prepare: type %d", (int)type);
    gemm_config c;
    ptxkit_status st = gemm_resolve(ctx, type, 4096, 4096, 4096, tiles, &c, NULL);
    if (st != PTXKIT_SUCCESS) return st;
    gemm_shape sh;
    if ((st = check_config(ctx, gemm_kind_of(type, &ctx->info), &c, &sh)) != PTXKIT_SUCCESS) return st;
    if ((st = context_enter(ctx)) != PTXKIT_SUCCESS) return st;
    ptxkit_kernel *fn;
    bool ta = op_a == PTXKIT_GEMM_T, tb = op_b == PTXKIT_GEMM_T;
    st = main_kernel(ctx, type, &c, &sh, ta, tb, true, true, c.split_k > 1, &fn);
    if (st == PTXKIT_SUCCESS && c.split_k > 1) st = splitk_kernel(ctx, type, &fn);
    context_leave(ctx);
    return st;
}

/* ---- the call ------------------------------------------------------------------ */

static bool vector_ok(ptxkit_dptr p, size_t ld, size_t elem) { return p % 16 == 0 && (ld * elem) % 16 == 0; }

/* ptxkit_gemm, or with launch false everything but the launches. */
static ptxkit_status gemm_dispatch(ptxkit_context *ctx, ptxkit_dtype type, ptxkit_gemm_op op_a, ptxkit_gemm_op op_b,
                                   size_t m, size_t n, size_t k, double alpha, ptxkit_dptr a, size_t lda, ptxkit_dptr b,
                                   size_t ldb, double beta, ptxkit_dptr c, size_t ldc, const ptxkit_gemm_tiles *tiles,
                                   ptxkit_stream *stream, bool launch, bool capturing) {
    gemm_call g;
    ptxkit_status st = check_args(ctx, &g, type, op_a, op_b, m, n, k, alpha, a, lda, b, ldb, c, ldc);
    if (st != PTXKIT_SUCCESS) return st;
    gemm_config cfg;
    if ((st = gemm_resolve(ctx, type, m, n, k, tiles, &cfg, NULL)) != PTXKIT_SUCCESS) return st;
    gemm_shape sh;
    const int elem = (int)g.elem, kind = gemm_kind_of(type, &ctx->info);
    if ((st = check_config(ctx, kind, &cfg, &sh)) != PTXKIT_SUCCESS) return st;
    if (m == 0 || n == 0) return PTXKIT_SUCCESS;
    /* k == 0 or alpha == 0: C = beta * C, A and B never read (the kernel
     * runs with no k-tiles) */
    const size_t k_run = g.reads_ab ? k : 0;
    size_t tiles_m = ceil_div(m, (size_t)cfg.bm), tiles_n = ceil_div(n, (size_t)cfg.bn);
    if (tiles_m * tiles_n > INT_MAX)
        return record_error(ctx, PTXKIT_ERROR_UNSUPPORTED, "ptxkit_gemm: %zu x %zu needs more than 2^31 - 1 tiles", m, n);
    int split = k_run ? gemm_split_for(&cfg, m, n, k_run, ctx->info.sm_count) : 1;
    size_t k_per_split = k_run, v = (size_t)(16 / elem);
    if (split > 1) {
        k_per_split = ceil_div(ceil_div(k_run, (size_t)split), (size_t)cfg.bk) * (size_t)cfg.bk;
        split = (int)ceil_div(k_run, k_per_split);
    }
    if (k_per_split == 0) k_per_split = 1; /* no k-tiles: any positive slice */
    size_t ldw = ceil_div(n, v) * v, scratch_bytes = 0;
    if (split > 1 && (!mul_size((size_t)split * m, ldw, &scratch_bytes) || !mul_size(scratch_bytes, g.elem, &scratch_bytes)))
        return record_error(ctx, PTXKIT_ERROR_OVERFLOW, "ptxkit_gemm: split-K scratch of %d x %zu x %zu overflows", split,
                            m, n);

    if ((st = context_enter(ctx)) != PTXKIT_SUCCESS) return st;
    ptxkit_kernel *fn, *reduce_fn = NULL;
    bool vec_a = vector_ok(a, lda, g.elem), vec_b = vector_ok(b, ldb, g.elem);
    st = main_kernel(ctx, type, &cfg, &sh, g.trans_a, g.trans_b, vec_a, vec_b, split > 1, &fn);
    if (st == PTXKIT_SUCCESS && split > 1) st = splitk_kernel(ctx, type, &reduce_fn);
    if (st != PTXKIT_SUCCESS || !launch) goto done;

    /* kernel arguments, in gemm.cu's order */
    CUdeviceptr da = a, db = b, dc = c, dw = 0;
    int im = (int)m, in = (int)n, ik = (int)k_run, kps = (int)(k_per_split > INT_MAX ? INT_MAX : k_per_split);
    long long llda = (long long)lda, lldb = (long long)ldb, lldc = (long long)ldc, lldw = (long long)ldw;
    float alpha32 = (float)alpha, beta32 = (float)beta;
    void *palpha = type == PTXKIT_FLOAT64 ? (void *)&alpha : (void *)&alpha32;
    void *pbeta = type == PTXKIT_FLOAT64 ? (void *)&beta : (void *)&beta32;
    unsigned flags = (beta != 0 ? 1u : 0u) | (vector_ok(c, ldc, g.elem) ? 2u : 0u);
    unsigned shared = (unsigned)gemm_shared_bytes(kind, &cfg, g.trans_a, g.trans_b);
    unsigned grid = (unsigned)(tiles_m * tiles_n);
    const ptxkit_dim3 threads = {(unsigned)sh.threads, 1, 1};
    if (split > 1) {
        /* held until both kernels are queued: the scratch is this stream's meanwhile */
        stream_scratch h;
        if ((st = stream_scratch_acquire(ctx, &gemm_scratch, stream, capturing, &h)) != PTXKIT_SUCCESS) goto done;
        /* room to grow a little without a new buffer */
        st = stream_scratch_grow(ctx, &h, scratch_bytes,
                                 scratch_bytes < SIZE_MAX / 2 ? scratch_bytes + scratch_bytes / 2 : scratch_bytes);
        dw = h.buffer;
        if (st == PTXKIT_SUCCESS) {
            void *args[] = {&da, &db, &dc, &im, &in, &ik, &llda, &lldb, &lldc, palpha, pbeta, &flags, &kps, &dw, &lldw};
            st = kernel_launch(fn, (ptxkit_dim3){grid, 1, (unsigned)split}, threads, shared, stream, args);
        }
        if (st == PTXKIT_SUCCESS) {
            int splits = split;
            void *args[] = {&dw, &splits, &lldw, &dc, &im, &in, &lldc, palpha, pbeta, &flags};
            size_t total = m * n, blocks = ceil_div(total, 256);
            size_t cap = (size_t)(ctx->info.sm_count > 0 ? ctx->info.sm_count : 1) * 8;
            st = kernel_launch(reduce_fn, (ptxkit_dim3){(unsigned)(blocks < cap ? blocks : cap), 1, 1}, (ptxkit_dim3){256, 1, 1},
                               0, stream, args);
        }
        stream_scratch_release(&h);
    } else {
        void *args[] = {&da, &db, &dc, &im, &in, &ik, &llda, &lldb, &lldc, palpha, pbeta, &flags, &kps, &dw, &lldw};
        st = kernel_launch(fn, (ptxkit_dim3){grid, 1, 1}, threads, shared, stream, args);
    }
done:
    context_leave(ctx);
    return st;
}

ptxkit_status ptxkit_gemm(ptxkit_context *ctx, ptxkit_dtype type, ptxkit_gemm_op op_a, ptxkit_gemm_op op_b, size_t m,
                          size_t n, size_t k, double alpha, ptxkit_dptr a, size_t lda, ptxkit_dptr b, size_t ldb,
                          double beta, ptxkit_dptr c, size_t ldc, const ptxkit_gemm_tiles *tiles,
                          ptxkit_stream *stream) {
    capture_guard guard;
    ptxkit_status st = capture_guard_enter(ctx, stream, &guard);
    if (st != PTXKIT_SUCCESS) return st;
    st = gemm_dispatch(ctx, type, op_a, op_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, tiles, stream, true,
                       guard.capturing);
    capture_guard_leave(ctx, &guard);
    return st;
}

ptxkit_status gemm_prepare_call(ptxkit_context *ctx, ptxkit_dtype type, ptxkit_gemm_op op_a, ptxkit_gemm_op op_b,
                                size_t m, size_t n, size_t k, double alpha, ptxkit_dptr a, size_t lda, ptxkit_dptr b,
                                size_t ldb, double beta, ptxkit_dptr c, size_t ldc, const ptxkit_gemm_tiles *tiles) {
    return gemm_dispatch(ctx, type, op_a, op_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, tiles, NULL, false,
                         false);
}

/* ---- the family's descriptor (ops/family.h) ---------------------------- */

/* Tuned as a problem of named parameters (tune/gemm_problem.c), not
 * through launch options: no hooks here. */
const family_desc gemm_family = {
    .name = "gemm",
    .description = "ptxkit_gemm: float32/float64 C = alpha * op(A) * op(B) + beta * C on the CUDA cores",
    .entries = "ptxkit_gemm_<f32|f64>, ptxkit_gemm_splitk_<f32|f64>",
};

/* ---- public: the sweep, preparing ahead, the split ---------------------- */

ptxkit_status ptxkit_gemm_sweep_tiles(ptxkit_context *ctx, ptxkit_dtype type, ptxkit_gemm_tiles *out, int capacity,
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
    const gemm_config *list = gemm_sweep_configs(gemm_kind_of(type, &ctx->info), &n);
    for (int i = 0; i < n && i < capacity; i++) out[i] = gemm_tiles_of(&list[i]);
    *count = n;
    return PTXKIT_SUCCESS;
}

ptxkit_status ptxkit_gemm_prepare(ptxkit_context *ctx, ptxkit_dtype type, ptxkit_gemm_op op_a, ptxkit_gemm_op op_b,
                                  const ptxkit_gemm_tiles *tiles) {
    if (!ctx) return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_gemm_prepare: context is NULL");
    if ((op_a != PTXKIT_GEMM_N && op_a != PTXKIT_GEMM_T) || (op_b != PTXKIT_GEMM_N && op_b != PTXKIT_GEMM_T))
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_gemm_prepare: operand ops %d, %d", (int)op_a,
                            (int)op_b);
    return gemm_prepare(ctx, type, op_a, op_b, tiles);
}

ptxkit_status ptxkit_gemm_split_k(ptxkit_context *ctx, const ptxkit_gemm_tiles *tiles, size_t m, size_t n, size_t k,
                                  int *split_k) {
    if (!ctx) return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_gemm_split_k: context is NULL");
    if (!tiles || !split_k)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_gemm_split_k: tiles or split_k is NULL");
    if (tiles->bm <= 0 || tiles->bn <= 0 || tiles->bk <= 0 || tiles->split_k < 0)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_gemm_split_k: tiles %dx%dx%d split %d", tiles->bm,
                            tiles->bn, tiles->bk, tiles->split_k);
    gemm_config c = gemm_config_of(tiles);
    *split_k = gemm_split_for(&c, m, n, k, ctx->info.sm_count);
    return PTXKIT_SUCCESS;
}
