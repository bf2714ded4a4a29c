/* gemm's configuration rules (gemm_config.h): which tile configurations
 * gemm.cu's CUDA-core kernels and gemm_dmma.cu's tensor-core kernel
 * compile, their shared memory and launch bounds, shape classes, the
 * built-in and sweep configurations, split-K, and the per-context
 * experiment switches. The kernels' host code (gemm.c, gemm_dmma.c) and the
 * tuner read these; nothing here compiles or launches. */
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gemm/gemm_config.h"
#include "runtime/context.h"
#include "runtime/status.h"

/* ---- the switches, per context --------------------------------------------- */

typedef struct switches_state {
    pthread_mutex_t lock; /* a benchmark may set them while another thread runs a GEMM */
    gemm_switches sw;
} switches_state;

static void *switches_create(ptxkit_context *ctx) {
    (void)ctx;
    switches_state *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    if (pthread_mutex_init(&s->lock, NULL) != 0) {
        free(s);
        return NULL;
    }
    s->sw = GEMM_SWITCHES_DEFAULT;
    return s;
}

static void switches_destroy(ptxkit_context *ctx, void *value) {
    (void)ctx;
    switches_state *s = value;
    pthread_mutex_destroy(&s->lock);
    free(s);
}

static const context_state_ops switches_ops = {switches_create, switches_destroy, NULL};

gemm_switches gemm_switches_get(ptxkit_context *ctx) {
    /* a context whose switches were never set has no state: the defaults */
    switches_state *s = ctx ? context_state_find(ctx, &switches_ops) : NULL;
    if (!s) return GEMM_SWITCHES_DEFAULT;
    pthread_mutex_lock(&s->lock);
    gemm_switches sw = s->sw;
    pthread_mutex_unlock(&s->lock);
    return sw;
}

ptxkit_status gemm_switches_set(ptxkit_context *ctx, const gemm_switches *sw) {
    if (!ctx || !sw) return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "gemm_switches_set: context or switches NULL");
    if (sw->cross_prefetch < -1 || sw->cross_prefetch > 1)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "gemm: cross-tile prefetch %d (-1, 0 or 1)",
                            sw->cross_prefetch);
    if (sw->mma_k != 0 && sw->mma_k != 4 && sw->mma_k != 8 && sw->mma_k != 16)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "gemm: mma k %d (0, 4, 8 or 16)", sw->mma_k);
    if (sw->tensor_maps < -1 || sw->tensor_maps > 1)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "gemm: tensor maps %d (-1, 0 or 1)", sw->tensor_maps);
    if (sw->stream_k < -1 || sw->stream_k > 1)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "gemm: stream-K %d (-1, 0 or 1)", sw->stream_k);
    if (sw->f32_tensor_cores < -1 || sw->f32_tensor_cores > 1)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "gemm: float32 tensor cores %d (-1, 0 or 1)",
                            sw->f32_tensor_cores);
    switches_state *s = context_state(ctx, &switches_ops);
    if (!s) return record_error(ctx, PTXKIT_ERROR_OUT_OF_MEMORY, "gemm: cannot create the per-context switches");
    pthread_mutex_lock(&s->lock);
    s->sw = *sw;
    pthread_mutex_unlock(&s->lock);
    return PTXKIT_SUCCESS;
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

static const char *const config_names[8] = {"bm", "bn", "bk", "tm", "tn", "warps_m", "stages", "split_k"};

ptxkit_status gemm_config_from(ptxkit_context *ctx, const char *who, const ptxkit_config *in, gemm_config *out) {
    memset(out, 0, sizeof *out);
    if (!in) return PTXKIT_SUCCESS;
    if (in->count < 0 || in->count > PTXKIT_CONFIG_MAX_PARAMS)
        return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "%s: configuration count %d is out of range", who,
                            in->count);
    int *fields[8] = {&out->bm, &out->bn, &out->bk, &out->tm, &out->tn, &out->warps_m, &out->stages, &out->split_k};
    for (int i = 0; i < in->count; i++) {
        const ptxkit_config_param *p = &in->params[i];
        int f = 0;
        while (f < 8 && strncmp(p->name, config_names[f], PTXKIT_CONFIG_NAME_SIZE) != 0) f++;
        if (f == 8)
            return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT,
                                "%s: unknown parameter \"%.*s\" (it reads bm, bn, bk, tm, tn, warps_m, stages, split_k)",
                                who, PTXKIT_CONFIG_NAME_SIZE - 1, p->name);
        long long max = f == 7 ? GEMM_MAX_SPLIT_K : 1024;
        if (p->value < 0 || p->value > max)
            return record_error(ctx, PTXKIT_ERROR_INVALID_ARGUMENT, "%s: parameter %s = %lld is not in [0, %lld]", who,
                                config_names[f], p->value, max);
        *fields[f] = (int)p->value;
    }
    return PTXKIT_SUCCESS;
}

void gemm_config_to(const gemm_config *c, ptxkit_config *out) {
    const int values[8] = {c->bm, c->bn, c->bk, c->tm, c->tn, c->warps_m, c->stages, c->split_k};
    memset(out, 0, sizeof *out);
    for (int f = 0; f < 8; f++) ptxkit_config_set(out, config_names[f], values[f]);
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

gemm_kind gemm_kind_of(ptxkit_dtype type, const ptxkit_device_info *info, const gemm_switches *sw) {
    /* float32 on the FP64 tensor cores on sm_90 only: their mma run at the
     * CUDA cores' float32 FMA rate there, and the kernel outran cuBLAS's
     * SGEMM on the H200 (notebook section 33); other GPUs' FP64 is slower
     * than their float32 (sm_86, 89, 100), or as on sm_80 not measured */
    if (type != PTXKIT_FLOAT64)
        return info && info->cc_major == 9 && info->cc_minor == 0 && !(sw && sw->f32_tensor_cores == 0) ? GEMM_F32_TC
                                                                                                       : GEMM_F32;
    return info && info->cc_major >= 8 && !(sw && sw->f64_simt) ? GEMM_F64_TC : GEMM_F64;
}

static bool power_of_two(int x) { return x > 0 && (x & (x - 1)) == 0; }

/* A configuration's threads (bm/tm x bn/tn, whole warps), warps and warp
 * tile wm x wn (warps_m along M); false with why where they do not fit.
 * The checks both kernels' rules start from. */
static bool check_warps(const gemm_config *c, int *threads, int *warps, int *wm, int *wn, char *why, size_t why_size) {
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

/* stages 2..8 and split_k 0..GEMM_MAX_SPLIT_K, for both kernels. */
static bool check_stages(const gemm_config *c, char *why, size_t why_size) {
    if (c->stages < 2 || c->stages > 8) return snprintf(why, why_size, "stages %d is not 2..8", c->stages), false;
    if (c->split_k < 0 || c->split_k > GEMM_MAX_SPLIT_K)
        return snprintf(why, why_size, "split_k %d is not 0..%d", c->split_k, GEMM_MAX_SPLIT_K), false;
    return true;
}

/* gemm_dmma.cu's tile_loader: a rows x cols tile, cols contiguous, vec
 * elements per copy, every thread the same number of copies. */
static bool tile_copies_fit(int threads, int rows, int cols, int vec) {
    if (cols % vec) return false;
    int per_row = cols / vec;
    return threads % per_row == 0 && rows % (threads / per_row) == 0;
}

/* The cp.async path's default mma k depth is 4 (m16n8k4 on sm_90):
 * deeper ones hold more fragments, which with 64 accumulators a lane and
 * fragments double-buffered spill. */
int gemm_mma_k(const gemm_config *c, const gemm_switches *sw) {
    int k = sw && sw->mma_k ? sw->mma_k : 4;
    return k < c->bk ? k : c->bk;
}

/* Registers a thread of the tensor-core kernel needs: its tm x tn doubles
 * of C, two k-steps of fragments (tm of A and tn / 2 of B per k quarter
 * of 4) and, on the cp.async path, about 64 for addresses, loaders and
 * loop state (ptxas -v on sm_90: 228-254 for 8 x 8 at mma k 4, spills at
 * k 8; 150-166 for 4 x 8); on the tensor-map path, with no loader, about
 * 32 (210 and 254 for 8 x 8 at k 4 and 8, 126 and 168 for 4 x 8).
 * Except that 4 x 8 at mma k 4 is held to 128, four blocks of 4 warps an
 * SM where shared memory lets them in: ptxas then spills 0-16 bytes over
 * the four layouts, and a short k, whose blocks are mostly prologue and
 * stores, runs faster with the fourth block than without it (the H200 at
 * 4096 x 4096 x 64, notebook section 25). */
static int dmma_registers_at(const gemm_config *c, int mma_k, bool tensor_maps) {
    int quarters = mma_k / 4;
    if (c->tm * c->tn == 32 && quarters == 1) return 128;
    return 2 * (c->tm * c->tn + 2 * (c->tm + c->tn / 2) * quarters) + (tensor_maps ? 32 : 64);
}

static int dmma_registers(const gemm_config *c, const gemm_switches *sw) {
    return dmma_registers_at(c, gemm_mma_k(c, sw), false);
}

/* The tensor-core kernel's rules (gemm_dmma.cu): its lane tiles, warp
 * layout, registers and loaders. */
static bool dmma_config_check(int kind, const gemm_switches *sw, const gemm_config *c, gemm_shape *shape, char *why,
                              size_t why_size) {
    if (!power_of_two(c->bm) || !power_of_two(c->bn) || c->bm < 16 || c->bn < 16 || c->bm > 256 || c->bn > 256)
        return snprintf(why, why_size, "block tile %d x %d: sides are powers of two in [16, 256]", c->bm, c->bn), false;
    if (c->bk != 4 && c->bk != 8 && c->bk != 16 && c->bk != 32)
        return snprintf(why, why_size, "bk %d is not 4, 8, 16 or 32", c->bk), false;
    if (c->tm < 2 || c->tm % 2 || c->tn < 4 || c->tn % 4 || c->tm * c->tn > 64)
        return snprintf(why, why_size,
                        "lane tile %d x %d: the tensor cores take tm even, tn a multiple of 4, tm x tn at most 64",
                        c->tm, c->tn),
               false;
    if (c->bm % c->tm || c->bn % c->tn)
        return snprintf(why, why_size, "lane tile %d x %d does not divide the block tile %d x %d", c->tm, c->tn, c->bm,
                        c->bn),
               false;
    int threads, warps, wm, wn;
    if (!check_warps(c, &threads, &warps, &wm, &wn, why, why_size)) return false;
    if (wm != 8 * c->tm || wn != 4 * c->tn)
        return snprintf(why, why_size,
                        "warp tile %d x %d is not 8 x 4 lanes of %d x %d (the mma tiles' lanes: warps_m = bm / (8 tm))",
                        wm, wn, c->tm, c->tn),
               false;
    int regs = dmma_registers(c, sw);
    if (regs > 256 || threads * regs > 65536)
        return snprintf(why, why_size, "%d threads of about %d registers exceed a thread's 255 or an SM's 65536",
                        threads, regs),
               false;
    if (!check_stages(c, why, why_size)) return false;
    /* float32 operands: a k-tile is one 128-byte line of A's row, and a
     * warp's columns are whole 32-column lines of B (gemm_dmma.cu) */
    if (kind == GEMM_F32_TC && (c->bk != 32 || wn % 32))
        return snprintf(why, why_size, "float32 on the tensor cores takes bk 32 and warp tiles of 32 columns or more "
                        "(bk %d, warp tile %d x %d)", c->bk, wm, wn),
               false;
    /* each operand stored K- or M/N-contiguous, in copies of 16 bytes or
     * one element */
    for (int side = 0; side < 2; side++) {
        int cols = side ? c->bn : c->bm;
        for (int vec = 1, wide = 16 / gemm_elem_bytes(kind); vec <= wide; vec *= wide)
            if (!tile_copies_fit(threads, cols, c->bk, vec) || !tile_copies_fit(threads, c->bk, cols, vec))
                return snprintf(why, why_size,
                                "%d threads cannot copy a %d x %d tile of %s evenly in either layout (threads a "
                                "multiple of bk and of %d, every thread the same number of copies)",
                                threads, c->bk, cols, side ? "B" : "A", cols),
                       false;
    }
    if (shape) *shape = (gemm_shape){threads, warps, wm, wn, 8, 4};
    return true;
}

bool gemm_config_check(int kind, const gemm_switches *sw, const gemm_config *c, gemm_shape *shape, char *why,
                       size_t why_size) {
    if (gemm_kind_tc(kind)) return dmma_config_check(kind, sw, c, shape, why, why_size);
    const int elem = kind;
    const int v = 16 / elem;
    if (elem != 4 && elem != 8) return snprintf(why, why_size, "elements of %d bytes", elem), false;
    if (!power_of_two(c->bm) || !power_of_two(c->bn) || c->bm < 8 || c->bn < 8 || c->bm > 512 || c->bn > 512)
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
    if (!check_warps(c, &threads, &warps, &wm, &wn, why, why_size)) return false;
    if (wm % c->tm || wn % c->tn || (wm / c->tm) * (wn / c->tn) != 32)
        return snprintf(why, why_size, "warp tile %d x %d is not 32 thread tiles of %d x %d", wm, wn, c->tm, c->tn),
               false;
    if (!check_stages(c, why, why_size)) return false;
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
    if (gemm_kind_tc(kind)) {
        /* gemm_dmma.cu: K-contiguous rows 16 bytes longer than bk, the
         * others 32 bytes longer than bm (bn); its tensor-map path's
         * unpadded stages and their 1024-byte alignment fit in the same
         * size (a stage of nn has 16 bm + 32 bk bytes to spare: 1024 or
         * more at float64's k-tiles of 16 and float32's of 32) */
        size_t bm = (size_t)c->bm, bn = (size_t)c->bn, bk = (size_t)c->bk;
        size_t elem = (size_t)gemm_elem_bytes(kind), pad_k = 16 / elem, pad = 32 / elem;
        size_t a = trans_a ? bk * (bm + pad) : bm * (bk + pad_k), b = trans_b ? bn * (bk + pad_k) : bk * (bn + pad);
        return (size_t)c->stages * (a + b) * elem;
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

/* gemm_resident_blocks at `regs` registers a thread */
static int resident_blocks_at(int kind, int regs, const gemm_config *c, const ptxkit_device_info *info) {
    int threads = (c->bm / c->tm) * (c->bn / c->tn);
    if (threads < 1) return 1;
    regs = (regs + 7) / 8 * 8;
    int regs_sm = info && info->regs_per_sm > 0 ? info->regs_per_sm : 65536;
    int threads_sm = info && info->max_threads_per_sm > 0 ? info->max_threads_per_sm : 2048;
    int blocks_sm = info && info->max_blocks_per_sm > 0 ? info->max_blocks_per_sm : 32;
    int blocks = regs_sm / (threads * regs);
    if (blocks > threads_sm / threads) blocks = threads_sm / threads;
    if (blocks > blocks_sm) blocks = blocks_sm;
    /* (gemm.cu's: the layout of neither operand transposed, as always) */
    size_t shared = gemm_kind_tc(kind) ? gemm_shared_bytes_max(kind, c) : gemm_shared_bytes(kind, c, false, false);
    size_t shared_sm = info && info->shared_per_sm > 0 ? (size_t)info->shared_per_sm : 228 * 1024;
    /* the driver reserves 1 KB of shared memory per block */
    size_t by_shared = shared_sm / (shared + 1024);
    if ((size_t)blocks > by_shared) blocks = (int)by_shared;
    return blocks < 1 ? 1 : blocks;
}

int gemm_resident_blocks(int kind, const gemm_switches *sw, const gemm_config *c, const ptxkit_device_info *info) {
    return resident_blocks_at(kind, gemm_kind_tc(kind) ? dmma_registers(c, sw) : registers_estimate(kind, c), c, info);
}

/* mma k 8 on the tensor-map path: half the DMMA instructions, so fewer
 * issue slots between a warp's mma (faster than k 4 on the H200 at every
 * shape measured but one, notebook section 29), taken where its fragments
 * cost no block an SM against the blocks the plan counted on. That one:
 * at 4 x 8 lanes in two stages (a short k's tiles) k 8's registers leave
 * three blocks where k 4 holds four, and k 8 lost there. */
int gemm_tma_mma_k(int kind, const gemm_config *c, const gemm_switches *sw, const ptxkit_device_info *info) {
    if ((sw && sw->mma_k) || c->bk < 8) return gemm_mma_k(c, sw);
    int deep = dmma_registers_at(c, 8, true);
    int threads = (c->bm / c->tm) * (c->bn / c->tn);
    if (deep > 256 || threads * deep > 65536) return 4;
    return resident_blocks_at(kind, deep, c, info) >= gemm_resident_blocks(kind, sw, c, info) ? 8 : 4;
}

int gemm_min_blocks(int kind, const gemm_switches *sw, const gemm_config *c, const ptxkit_device_info *info) {
    int blocks = gemm_resident_blocks(kind, sw, c, info);
    return blocks > 8 ? 8 : blocks;
}

/* float32's large-square configuration (128 x 128 x 16 tiles, 8 x 8 per
 * lane, 2 x 4 warps, 4 stages) on sm_90: ptxas's register-usage level (of
 * 0-10; the default 5) sets how freely it spends registers on scheduling.
 * The main kernel with A transposed on the way in (op(A) = A) runs faster
 * at level 2; where A is copied as stored (op(A) = A^T) level 2 lost with
 * op(B) = B^T and was level with op(B) = B, and the other configurations
 * lost or were level with it, so they keep the default (notebook section
 * 30). Its stream-K kernel (stream_k) runs faster at level 8 with op(B) =
 * B; with op(B) = B^T level 8 lost, and it keeps the main kernel's rule
 * (section 31). */
int gemm_nvrtc_options(int kind, const gemm_config *c, bool trans_a, bool trans_b, bool stream_k,
                       const ptxkit_device_info *info, const char *const **out) {
    static const char *const level_2[] = {"-Xptxas=--register-usage-level=2"};
    static const char *const level_8[] = {"-Xptxas=--register-usage-level=8"};
    *out = NULL;
    if (kind != GEMM_F32 || !info || info->cc_major != 9 || c->bm != 128 || c->bn != 128 || c->bk != 16 ||
        c->tm != 8 || c->tn != 8 || c->warps_m != 2 || c->stages != 4)
        return 0;
    if (stream_k && !trans_b) *out = level_8;
    else if (!trans_a) *out = level_2;
    return *out ? 1 : 0;
}

/* Built-in configurations, per type and shape class (the tuner's starting
 * points): the best of the tile sweeps on an H100 (`ptxkit bench gemm
 * --tiles sweep` times the same candidates on another GPU). */
gemm_config gemm_default_config(gemm_kind kind, gemm_class c) {
    if (kind == GEMM_F32_TC) {
        /* 4 warps of 32 x 32, k-tiles of 32 floats: at the squares in three
         * stages, at few rows of A (K split) in four. They took less time
         * than float64's 64 x 128 tiles at 2048^3, 4096^3, 8192^3 and 64 x
         * 4096 x 4096 on an H200 (notebook sections 33 and 34; the one wrong
         * result in their first trial was the ring's missing proxy fence,
         * which every tile had). Otherwise float64's tiles with k-tiles of
         * 32 floats (the same bytes a stage as float64's 16). */
        if (c == GEMM_SMALL_M) return (gemm_config){64, 64, 32, 4, 8, 2, 4, 0};
        if (c == GEMM_SQUARE) return (gemm_config){64, 64, 32, 4, 8, 2, 3, 0};
        gemm_config d = gemm_default_config(GEMM_F64_TC, c);
        d.bk = 32;
        return d;
    }
    if (kind == GEMM_F64_TC) {
        switch (c) {
        /* few rows of A: the square class's tiles, K split, ran 1.03-1.12
         * times as fast as 64 x 64 ones at m of 64 to 192 with a long k
         * (nn; nt 1.10-1.14, tn and tt 0.91-1.04), and as fast at m = 32
         * (the H200, notebook section 26). Why not at a small n, where
         * 128 x 64 tiles of the same warp tiles won nothing, is not known. */
        case GEMM_SMALL_M: return (gemm_config){64, 128, 16, 8, 8, 1, 4, 0};
        /* 4 warps of 32 x 32, three blocks per SM */
        case GEMM_SMALL_N: return (gemm_config){64, 64, 16, 4, 8, 2, 4, 0};
        /* with a short k, where a block's loop is a few k-tiles between
         * its prologue and its stores, the same tiles in two stages, so
         * that four blocks fit an SM and overlap each other's: of the H200
         * runs at 4096 x 4096 x 64 the fastest, ahead of three and four
         * stages and of the square default (notebook section 25) */
        case GEMM_SMALL_K: return (gemm_config){64, 64, 16, 4, 8, 2, 2, 0};
        /* 4 warps of 64 x 32, two blocks per SM (cuBLAS's DGEMM runs 4
         * warps of 64 x 32 two blocks per SM too): the fastest of the sweep
         * at 2048^3, 4096^3 and 8192^3 on an H100, ahead of 128 x 128 with 8
         * warps */
        default: return (gemm_config){64, 128, 16, 8, 8, 1, 4, 0};
        }
    }
    if (kind == GEMM_F64) {
        switch (c) {
        case GEMM_SMALL_M:
        case GEMM_SMALL_N: return (gemm_config){64, 64, 8, 4, 8, 2, 4, 0};
        default: return (gemm_config){64, 128, 8, 8, 8, 2, 3, 0}; /* close to the DFMA sweep's best at 2048^3 and 4096^3 */
        }
    }
    switch (c) {
    case GEMM_SMALL_M: return (gemm_config){64, 128, 8, 8, 8, 2, 4, 0};
    case GEMM_SMALL_N: return (gemm_config){128, 64, 8, 8, 8, 2, 4, 0};
    /* with a short k, 64 x 128 tiles with k-tiles of 16: of the sweep's
     * candidates the fastest at 4096 x 4096 x 64 on an H200 with the
     * loaders of notebook section 27 (k of 64 only measured) */
    case GEMM_SMALL_K: return (gemm_config){64, 128, 16, 8, 8, 2, 4, 0};
    /* the best all-round configuration of the second H100 sweep against
     * cuBLAS (pedantic) at 2048^3, 4096^3 and 8192^3, past the target at each */
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
 * smaller ones for skinny shapes and short k, the built-in ones among them;
 * the default first (the sanitizer runs take the first three). */
static const gemm_config sweep_f64_tc[] = {
    {64, 128, 16, 8, 8, 1, 4, 0},  {128, 128, 16, 8, 8, 2, 4, 0},  {128, 64, 16, 8, 8, 2, 4, 0},
    {128, 128, 32, 8, 8, 2, 3, 0}, {128, 128, 16, 8, 8, 2, 3, 0},  {128, 128, 32, 4, 16, 4, 3, 0},
    {128, 128, 16, 4, 16, 4, 4, 0}, {128, 64, 16, 8, 8, 2, 3, 0},  {128, 128, 8, 8, 8, 2, 4, 0},
    {64, 64, 16, 4, 8, 2, 4, 0},   {64, 64, 32, 4, 8, 2, 3, 0},  {64, 64, 16, 4, 8, 2, 2, 0},
    {32, 64, 16, 2, 8, 2, 4, 0},   {32, 64, 32, 2, 8, 2, 3, 0},
};
/* float32 on the tensor cores: the same with k-tiles of 32, where a warp
 * tile is whole 32-column groups */
static const gemm_config sweep_f32_tc[] = {
    {64, 128, 32, 8, 8, 1, 4, 0},  {128, 128, 32, 8, 8, 2, 4, 0}, {128, 64, 32, 8, 8, 2, 4, 0},
    {128, 128, 32, 8, 8, 2, 3, 0}, {128, 128, 32, 4, 16, 4, 3, 0}, {64, 64, 32, 4, 8, 2, 4, 0},
    {64, 64, 32, 4, 8, 2, 3, 0},   {64, 64, 32, 4, 8, 2, 2, 0},   {32, 64, 32, 2, 8, 2, 4, 0},
    {32, 64, 32, 2, 8, 2, 3, 0},
};

const gemm_config *gemm_sweep_configs(gemm_kind kind, int *count) {
    if (kind == GEMM_F32_TC) {
        *count = (int)(sizeof sweep_f32_tc / sizeof sweep_f32_tc[0]);
        return sweep_f32_tc;
    }
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

/* ---- split-K: a model of where the time goes ----------------------------
 *
 * The kernels are throughput-bound once an SM holds enough warps, so the
 * main kernel takes as long as its busiest SM: the blocks the launch puts
 * there, ceil(blocks / SMs) (the block scheduler spreads them evenly; past
 * the blocks an SM holds at once the rest queue behind them, the same
 * count), each worth bm x bn x (its k slice) FMAs. An SM holding fewer
 * than GEMM_SATURATION_WARPS warps issues less than it could (a warp
 * alone stalls on its own shared-memory loads and barriers), so it is
 * counted busy as with that many, or with as many blocks as fit: one
 * block per SM costs a 4-warp configuration as much as two. Splitting K
 * adds the partial sums, split x m x n elements written by the main
 * kernel and read back by the second pass, and the second launch. Costs
 * are in FMAs of one SM at full rate; the two constants of the split are
 * fitted to H200 timings of the tile sweep's configurations at 512^3,
 * 1024^3, 64x4096x4096 and 4096x64x4096, a configuration
 * against itself at several splits.
 *
 * The model only ranks the splits of one configuration (and, in
 * gemm_default_for, configurations of like efficiency): it counts FMAs,
 * not how fast a configuration's loop runs them. */
enum {
    /* two warps for each of an SM's four schedulers */
    GEMM_SATURATION_WARPS = 8,
};
/* The second pass and the main kernel's partial sums, per byte of the
 * partials an SM's share holds, and the second launch with its ramp. */
#define GEMM_SPLIT_COST_PER_BYTE 16.0
#define GEMM_SPLIT_COST_FIXED 750000.0

static int sm_count_of(const ptxkit_device_info *info) { return info && info->sm_count > 0 ? info->sm_count : 1; }

static size_t tiles_of(const gemm_config *c, size_t m, size_t n) {
    return ceil_div(m, (size_t)c->bm) * ceil_div(n, (size_t)c->bn);
}

/* The plan of c at a split as ptxkit_gemm runs it: the k slice is whole
 * k-tiles, so the split it runs may be smaller than asked. */
static gemm_plan plan_at(int kind, const gemm_config *c, size_t m, size_t n, size_t k, size_t split, int resident,
                         int sms) {
    gemm_plan p = {.split = 1, .resident = resident};
    size_t slice = k;
    if (split > 1 && k > 0) {
        slice = ceil_div(ceil_div(k, split), (size_t)c->bk) * (size_t)c->bk;
        p.split = (int)ceil_div(k, slice);
    }
    size_t tiles = tiles_of(c, m, n);
    int warps = (c->bm / c->tm) * (c->bn / c->tn) / 32;
    int saturating = warps > 0 ? (GEMM_SATURATION_WARPS + warps - 1) / warps : 1;
    if (saturating > resident) saturating = resident;
    p.saturating = saturating;
    p.blocks = (double)tiles * p.split;
    p.per_sm = ceil(p.blocks / sms);
    double busy = p.per_sm > saturating ? p.per_sm : saturating;
    p.cost = busy * c->bm * c->bn * (double)slice;
    if (p.split > 1)
        p.cost += GEMM_SPLIT_COST_PER_BYTE * gemm_sum_bytes(kind) * p.split * (double)m * (double)n / sms +
                  GEMM_SPLIT_COST_FIXED;
    return p;
}

gemm_plan gemm_plan_for(int kind, const gemm_switches *sw, const gemm_config *c, size_t m, size_t n, size_t k,
                        const ptxkit_device_info *info) {
    int sms = sm_count_of(info), resident = gemm_resident_blocks(kind, sw, c, info);
    if (c->split_k) return plan_at(kind, c, m, n, k, (size_t)c->split_k, resident, sms);
    gemm_plan best = plan_at(kind, c, m, n, k, 1, resident, sms);
    /* Tiles that fill every SM's resident slots keep K whole: past one
     * full wave the last wave's imbalance is a smaller share, which the
     * model's error covers, and the timings behind it are all of shapes
     * below one wave. */
    if ((double)tiles_of(c, m, n) >= (double)sms * resident) return best;
    /* slices of at least 64 k and 4 k-tiles: a slice's prologue and the
     * second pass must stay small next to its work */
    size_t min_slice = (size_t)c->bk * 4 > 64 ? (size_t)c->bk * 4 : 64;
    size_t most = k / min_slice;
    if (most > GEMM_MAX_SPLIT_K) most = GEMM_MAX_SPLIT_K;
    /* the cheapest; on a tie the fewer slices (the costs compare exactly:
     * a split that adds nothing costs the second pass more) */
    for (size_t s = 2; s <= most; s++) {
        gemm_plan p = plan_at(kind, c, m, n, k, s, resident, sms);
        if (p.cost < best.cost) best = p;
    }
    return best;
}

int gemm_split_for(int kind, const gemm_switches *sw, const gemm_config *c, size_t m, size_t n, size_t k,
                   const ptxkit_device_info *info) {
    if (c->split_k) return c->split_k;
    return gemm_plan_for(kind, sw, c, m, n, k, info).split;
}

/* ---- stream-K ------------------------------------------------------------ */

/* K-tiles a tile needs for stream-K to share it: a block's part of a tile
 * pays the pipeline's prologue again, and a short one is mostly that. */
enum { GEMM_STREAM_K_MIN_KTILES = 8 };
/* The fullest last wave the default shares out: the shared steps run
 * slower than the other kernel's whole tiles (the stream-K kernel's main
 * loop is compiled apart, and its parts are handed over), so a last wave
 * nearly full costs about as much shared as left idle (H200, notebook
 * section 31). */
#define GEMM_STREAM_K_MAX_FILL 0.9

bool gemm_stream_k_for(int kind, const gemm_switches *sw, const gemm_config *c, size_t m, size_t n, size_t k,
                       const ptxkit_device_info *info, gemm_stream_k *out) {
    int mode = sw ? sw->stream_k : -1;
    size_t ktiles = ceil_div(k, (size_t)c->bk), tiles = tiles_of(c, m, n);
    /* the default only where it was measured: float32 */
    if (gemm_kind_tc(kind) || mode == 0 || (mode < 0 && kind != GEMM_F32) || k == 0 ||
        ktiles < (mode == 1 ? 2 : GEMM_STREAM_K_MIN_KTILES) || tiles > INT_MAX / 2)
        return false;
    size_t slots = (size_t)sm_count_of(info) * (size_t)gemm_resident_blocks(kind, sw, c, info);
    size_t full = tiles / slots, last = tiles - full * slots;
    if (mode < 0 && (full == 0 || last == 0 || (double)last > GEMM_STREAM_K_MAX_FILL * (double)slots)) return false;
    /* whole waves as they are; where they are all whole (the test switch),
     * the last one shared */
    size_t dp = full * slots;
    if (dp == tiles) dp -= slots;
    size_t steps = (tiles - dp) * ktiles;
    /* the kernel counts steps in int */
    if (ktiles > INT_MAX / 2 || steps > INT_MAX / 2) return false;
    size_t blocks = steps < slots ? steps : slots, per = ceil_div(steps, blocks);
    out->dp_tiles = (int)dp;
    out->per = (int)per;
    out->blocks = (int)ceil_div(steps, per);
    return true;
}

/* ---- the built-in configuration of a shape ----------------------------- */

/* Other tiles for shapes the class's configuration leaves short of one
 * wave, taken where the model finds them no dearer, the later on a tie:
 * float32, 64 x 128 (skinny shapes and 512^3), then the class's tiles in
 * 4 x 2 warps, which the model ties with 64 x 128 and with the class's own
 * configuration at 1024^3, where the H200 sweeps of notebook section 27
 * timed them ahead of both (a k-tile of 32 in 3 stages, the choice of
 * section 24, fell behind with that section's loaders);
 * float64 on the tensor cores, 32 x 64 tiles of 4 warps of 16 x 32 (as
 * cuBLAS runs 512^3: no split, so no second pass, from 256^3 to 768^3),
 * then 64 x 64 tiles of 4 warps (the best of the sweep at 1024^3 and the
 * skinny shapes). None for the float64 CUDA-core kernel: no timings.
 *
 * fma_cost: what the candidate's FMAs cost against the class's tiles'
 * (float64 at a small m: against 64 x 64's; class_fma_cost). The
 * model counts FMAs, but a warp tile of 16 x 32 reads half as many again
 * fragments per FMA as one of 32 x 32: over a long K, at the same blocks
 * an SM (128 x 4096 x 4096 and 4096 x 128 x 4096 on an H200), 32 x 64
 * took 1.10-1.15 times as long as 64 x 64 (notebook section 25).
 * whole_k: taken only where its plan keeps K whole, what it is there for
 * (split 64 ways at 64 x 64 x 4096 it lost against 64 x 64 tiles). */
typedef struct gemm_candidate {
    gemm_config c;
    double fma_cost;
    bool whole_k;
} gemm_candidate;
static const gemm_candidate smaller_f32[] = {{{64, 128, 16, 8, 8, 2, 4, 0}, 1.0, false},
                                             {{128, 128, 16, 8, 8, 4, 4, 0}, 1.0, false}};
static const gemm_candidate smaller_f64_tc[] = {{{32, 64, 16, 2, 8, 2, 4, 0}, 1.12, true},
                                                {{64, 64, 16, 4, 8, 2, 4, 0}, 1.0, false}};
static const gemm_candidate smaller_f32_tc[] = {{{32, 64, 32, 2, 8, 2, 4, 0}, 1.12, true},
                                                {{64, 64, 32, 4, 8, 2, 4, 0}, 1.0, false}};

/* What the class's own tiles' FMAs cost against those the candidates'
 * fma_cost is measured from (the class's tiles but for float64's small
 * m, 64 x 64). Against the 64 x 128 tiles of a small m, 64 x 64 ones took
 * 1.09-1.18 times as long as the model's costs of the two have it (six
 * shapes on an H200, notebook section 26); where k is short, 64 x 64's
 * smaller split still wins (64 x 4096 x 1024). */
static double class_fma_cost(gemm_kind kind, gemm_class c) {
    return gemm_kind_tc(kind) && c == GEMM_SMALL_M ? 1 / 1.15 : 1.0;
}

/* The class's configuration stays where its plan is within this share of
 * perfectly balanced work (m n k / SMs FMAs on every SM): what is left to
 * win there is smaller than the model's error. */
#define GEMM_KEEP_BALANCE 0.9

gemm_config gemm_default_for(gemm_kind kind, const gemm_switches *sw, size_t m, size_t n, size_t k,
                             const ptxkit_device_info *info) {
    gemm_class shape_class = gemm_class_of(m, n, k);
    gemm_config best = gemm_default_config(kind, shape_class);
    int sms = sm_count_of(info);
    gemm_plan p = gemm_plan_for(kind, sw, &best, m, n, k, info);
    /* A full wave of the class's tiles keeps them: at large shapes the
     * larger tiles are the faster (the sweeps the defaults come from). */
    if ((double)tiles_of(&best, m, n) >= (double)sms * p.resident) return best;
    if ((double)m * (double)n * (double)k / sms >= GEMM_KEEP_BALANCE * p.cost) return best;
    /* Short of a wave, other tiles (mostly smaller: the same work over
     * more blocks, which split K less or not at all to fill the SMs): the
     * cheapest plan, the later in the list on a tie (more blocks on an SM
     * overlap each other's barriers and stores, except where a sweep found
     * otherwise). */
    const gemm_candidate *smaller = NULL;
    int count = 0;
    if (kind == GEMM_F32) smaller = smaller_f32, count = (int)(sizeof smaller_f32 / sizeof smaller_f32[0]);
    if (kind == GEMM_F64_TC) smaller = smaller_f64_tc, count = (int)(sizeof smaller_f64_tc / sizeof smaller_f64_tc[0]);
    if (kind == GEMM_F32_TC) smaller = smaller_f32_tc, count = (int)(sizeof smaller_f32_tc / sizeof smaller_f32_tc[0]);
    size_t optin = info && info->shared_per_block_optin > 0 ? (size_t)info->shared_per_block_optin : 48 * 1024;
    double cost = p.cost * class_fma_cost(kind, shape_class);
    for (int i = 0; i < count; i++) {
        char why[256];
        const gemm_config *c = &smaller[i].c;
        if (!gemm_config_check(kind, sw, c, NULL, why, sizeof why) || gemm_shared_bytes_max(kind, c) > optin)
            continue;
        gemm_plan q = gemm_plan_for(kind, sw, c, m, n, k, info);
        if (smaller[i].whole_k && q.split > 1) continue;
        double weighed = q.cost * smaller[i].fma_cost;
        if (weighed <= cost) best = *c, cost = weighed;
    }
    /* float64's 32 x 64 tiles where there are no more of them than SMs: an
     * SM runs one block, one warp a scheduler, whose loop waits on
     * latencies more than on the tensor pipe; k-tiles of 32 in three
     * stages halve its tile transitions (cuBLAS runs 512^3 so). On the
     * H200 they ran faster at 512^3 and 333 x 517 x 129, and slower at
     * 768^3 and 100 x 4096 x 1000, two blocks an SM and more (notebook
     * section 29). */
    if (kind == GEMM_F64_TC && best.bm == 32 && best.bk == 16 && tiles_of(&best, m, n) <= (size_t)sms) {
        char why[256];
        gemm_config deep = best;
        deep.bk = 32, deep.stages = 3;
        if (gemm_config_check(kind, sw, &deep, NULL, why, sizeof why) && gemm_shared_bytes_max(kind, &deep) <= optin)
            best = deep;
    }
    return best;
}
