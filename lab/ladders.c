/* The ladders' tables and launchers (ladders.h). The kernels are user
 * programs of the library: compiled by NVRTC with -D defines through
 * lab_kernel_get, sized with ptxkit_kernel_grid_size_get and launched with
 * ptxkit_kernel_launch; the GEMM ladder's last step is ptxkit_gemm. */
#include <stdio.h>

#include "ptxkit_ops.h"
#include "ladders.h"
#include "lab.h"

/* ---- the tables ---- */

/* The lecture's figures: 2^22 ints on a G80 (86.4 GB/s peak), 128 threads
 * per block. Steps 8-10 postdate it. */
const lab_reduce_step lab_reduce_ladder[LAB_REDUCE_LADDER_STEPS] = {
    {"interleaved addressing, divergent branch", 1, false, 8.054, 2.083},
    {"interleaved addressing, bank conflicts", 1, false, 3.456, 4.854},
    {"sequential addressing", 1, false, 1.722, 9.741},
    {"first add during global load", 2, false, 0.965, 17.377},
    {"unroll last warp", 2, false, 0.536, 31.289},
    {"completely unrolled", 2, false, 0.381, 43.996},
    {"multiple elements per thread", 2, true, 0.268, 62.671},
    {"warp shuffle", 2, true, 0, 0},
    {"redux.sync", 2, true, 0, 0},
    {"cooperative groups tile reduce", 2, true, 0, 0},
};

const lab_scan_step lab_scan_ladder[LAB_SCAN_LADDER_STEPS] = {
    {"Hillis-Steele, double-buffered", 1},
    {"Blelloch up/down-sweep, bank conflicts", 2},
    {"Blelloch, conflict-free padding", 2},
    {"warp shuffles (__shfl_up_sync)", 2},
};

const lab_scan_seed_row lab_scan_seed[LAB_SCAN_SEED_ROWS] = {
    {1024, 0.002231, 0.079492, 0.03},     {32768, 0.072663, 0.106159, 0.68},    {65536, 0.146326, 0.137006, 1.07},
    {131072, 0.726429, 0.200257, 3.63},   {262144, 1.454742, 0.326900, 4.45},   {524288, 2.911067, 0.624104, 4.66},
    {1048576, 5.900097, 1.118091, 5.28},  {2097152, 11.848376, 2.099666, 5.64}, {4194304, 23.835931, 4.062923, 5.87},
    {8388608, 47.390906, 7.987311, 5.93}, {16777216, 94.794598, 15.854781, 5.98},
};

/* Global bytes per FMA at float32: the naive kernel loads both operands
 * (8 bytes) for every FMA; a TILE_WIDTH tile serves each loaded element to
 * TILE_WIDTH FMAs; a 128 x 128 block tile loads 128 + 128 floats per k for
 * 128 x 128 FMAs. */
const lab_gemm_step lab_gemm_ladder[LAB_GEMM_LADDER_STEPS] = {
    {"naive", "gemm_ladder_naive", 1, 0, 16, 16, 16, 8.0},
    {"shared tiles, TILE_WIDTH 16", "gemm_ladder_tiled", 2, 16, 16, 16, 16, 8.0 / 16},
    {"shared tiles, TILE_WIDTH 32", "gemm_ladder_tiled", 2, 32, 32, 32, 32, 8.0 / 32},
    {"register blocking 8x8", "gemm_ladder_blocked", 4, 0, 256, 1, 128, 4.0 * 256 / (128 * 128)},
    {"16-byte loads, A transposed", "gemm_ladder_vector", 5, 0, 256, 1, 128, 4.0 * 256 / (128 * 128)},
    {"warp tiling", "gemm_ladder_warptile", 6, 0, 256, 1, 128, 4.0 * 256 / (128 * 128)},
    {"cp.async double buffering", NULL, 0, 0, 256, 1, 128, 4.0 * 256 / (128 * 128)},
};

/* Step 7: gemm.cu's shape of steps 4-6 (128 x 128 x 8, 8 x 8 per thread,
 * warp tiles 32 x 64) with a two-buffer cp.async pipeline. */
static const ptxkit_config double_buffered = {
    8, {{"bm", 128}, {"bn", 128}, {"bk", 8}, {"tm", 8}, {"tn", 8}, {"warps_m", 4}, {"stages", 2}, {"split_k", 1}}};

/* ---- shared pieces ---- */

enum { MAX_LEVELS = 48 };

static int device_arch(ptxkit_context *ctx) {
    ptxkit_device_info info;
    return ctx && ptxkit_device_info_get(ctx, &info) == PTXKIT_SUCCESS ? info.cc_major * 10 + info.cc_minor : 0;
}

static void add_define(lab_ladder_kernel *k, const char *name, long long value) {
    snprintf(k->defines[k->define_count], sizeof k->defines[0], "%s=%lld", name, value);
    k->define_list[k->define_count] = k->defines[k->define_count];
    k->define_count++;
}

/* The type a kernel computes in: sums and bitwise operators of signed
 * integers in the unsigned type of the same width (the same bits). */
static ptxkit_dtype kernel_type(ptxkit_reduce_op op, ptxkit_dtype type) {
    bool bits = op == PTXKIT_REDUCE_SUM || op == PTXKIT_REDUCE_AND || op == PTXKIT_REDUCE_OR || op == PTXKIT_REDUCE_XOR;
    if (bits && type == PTXKIT_INT32) return PTXKIT_UINT32;
    if (bits && type == PTXKIT_INT64) return PTXKIT_UINT64;
    return type;
}

/* Step, (op, type) and options of the reduce or scan ladder, checked
 * without a GPU; the kernel's defines on success. `supported` is the
 * production op's answer for (op, type): a ladder provides what it does. */
static ptxkit_status op_kernel(const char *ladder, const char *file, const char *prefix, int steps, int step,
                               ptxkit_reduce_op op, ptxkit_dtype type, ptxkit_status supported,
                               const lab_ladder_options *o, lab_ladder_kernel *k) {
    if (step < 1 || step > steps)
        return ptxkit_last_error_set(PTXKIT_ERROR_INVALID_ARGUMENT, "%s ladder: no step %d (steps are 1 to %d)", ladder, step, steps);
    if ((unsigned)op >= PTXKIT_REDUCE_OP_COUNT || (unsigned)type >= PTXKIT_DTYPE_COUNT)
        return ptxkit_last_error_set(PTXKIT_ERROR_INVALID_ARGUMENT, "%s ladder: unknown operator %d or type %d", ladder, (int)op,
                         (int)type);
    if (supported != PTXKIT_SUCCESS)
        return ptxkit_last_error_set(PTXKIT_ERROR_UNSUPPORTED, "%s ladder: %s of %s is not provided", ladder,
                         ptxkit_reduce_op_name(op), ptxkit_dtype_name(type));
    int block = o && o->block_size ? o->block_size : LAB_LADDER_DEFAULT_BLOCK;
    if (block < 32 || block > 1024 || (block & (block - 1)) != 0)
        return ptxkit_last_error_set(PTXKIT_ERROR_INVALID_ARGUMENT, "%s ladder: block size %d is not a power of two in [32, 1024]",
                         ladder, block);
    int load_op = o ? (int)o->load_op : 0;
    if (load_op < 0 || load_op >= PTXKIT_LOAD_OP_COUNT)
        return ptxkit_last_error_set(PTXKIT_ERROR_INVALID_ARGUMENT, "%s ladder: load operator %d is not in [0, %d]", ladder,
                         load_op, PTXKIT_LOAD_OP_COUNT - 1);
    *k = (lab_ladder_kernel){.file = file, .block = block};
    snprintf(k->entry, sizeof k->entry, "%s%d", prefix, step);
    add_define(k, "BLOCK_SIZE", block);
    add_define(k, "STEP", step);
    add_define(k, "LADDER_OP", (long long)op);
    add_define(k, "LADDER_TYPE", (long long)kernel_type(op, type));
    add_define(k, "LOAD_OP", load_op);
    return PTXKIT_SUCCESS;
}

static ptxkit_status kernel_of(ptxkit_context *ctx, const lab_ladder_kernel *k, const char *entry, ptxkit_kernel **out) {
    return lab_kernel_get(ctx, k->file, entry ? entry : k->entry, k->define_list, k->define_count, out);
}

/* The block size within the device's limit. */
static ptxkit_status check_device_block(ptxkit_context *ctx, const char *ladder, int block) {
    ptxkit_device_info info;
    ptxkit_status st = ptxkit_device_info_get(ctx, &info);
    if (st != PTXKIT_SUCCESS) return st;
    if (info.max_threads_per_block && block > info.max_threads_per_block)
        return ptxkit_last_error_set(PTXKIT_ERROR_INVALID_ARGUMENT, "%s ladder: block size %d exceeds this GPU's limit of %d threads",
                         ladder, block, info.max_threads_per_block);
    return PTXKIT_SUCCESS;
}

/* in and out element-aligned, present when n > 0, and in not wrapping. */
static ptxkit_status check_arrays(const char *ladder, ptxkit_dtype type, ptxkit_dptr out, ptxkit_dptr in, size_t n) {
    size_t elem = ptxkit_dtype_size(type), bytes;
    if (!out) return ptxkit_last_error_set(PTXKIT_ERROR_INVALID_ARGUMENT, "%s ladder: output pointer is NULL", ladder);
    if (n && !in) return ptxkit_last_error_set(PTXKIT_ERROR_INVALID_ARGUMENT, "%s ladder: input pointer is NULL", ladder);
    if (out % elem || in % elem)
        return ptxkit_last_error_set(PTXKIT_ERROR_MISALIGNED, "%s ladder: input 0x%llx and output 0x%llx must be %zu-byte aligned",
                         ladder, (unsigned long long)in, (unsigned long long)out, elem);
    if (__builtin_mul_overflow(n, elem, &bytes) || in + bytes < in)
        return ptxkit_last_error_set(PTXKIT_ERROR_OVERFLOW, "%s ladder: %zu elements overflow the address space", ladder, n);
    return PTXKIT_SUCCESS;
}

static ptxkit_status check_scratch(const char *ladder, int step, size_t need, size_t elem, ptxkit_dptr scratch,
                                   size_t scratch_bytes) {
    if (need && (!scratch || scratch % elem || scratch_bytes < need))
        return ptxkit_last_error_set(PTXKIT_ERROR_INVALID_ARGUMENT,
                         "%s ladder: step %d needs %zu bytes of %zu-byte aligned scratch, got %zu at 0x%llx", ladder,
                         step, need, elem, scratch_bytes, (unsigned long long)scratch);
    return PTXKIT_SUCCESS;
}

static ptxkit_status launch_1d(ptxkit_kernel *k, size_t grid, int block, ptxkit_stream *stream, void **args) {
    return ptxkit_kernel_launch(k, (ptxkit_dim3){(unsigned)grid, 1, 1}, (ptxkit_dim3){(unsigned)block, 1, 1}, 0, stream, args);
}

/* ---- reduce ---- */

typedef struct reduce_plan {
    ptxkit_kernel *kernel;
    int block, passes;
    size_t grids[MAX_LEVELS];
    size_t scratch_elems; /* partials of every launch but the last */
} reduce_plan;

static ptxkit_status reduce_kernel(int step, ptxkit_reduce_op op, ptxkit_dtype type, const lab_ladder_options *o,
                                   lab_ladder_kernel *k) {
    ptxkit_status st = op_kernel("reduce", "reduce_ladder.cu", "reduce_ladder", LAB_REDUCE_LADDER_STEPS, step, op, type,
                                 ptxkit_reduce_supported(NULL, op, type), o, k);
    if (st == PTXKIT_SUCCESS && step == 9 && type != PTXKIT_INT32 && type != PTXKIT_UINT32)
        st = ptxkit_last_error_set(PTXKIT_ERROR_UNSUPPORTED, "reduce ladder step 9 (redux.sync) exists for 32-bit integers only, not %s",
                       ptxkit_dtype_name(type));
    return st;
}

ptxkit_status lab_reduce_ladder_kernel(int step, ptxkit_reduce_op op, ptxkit_dtype type, const lab_ladder_options *o,
                                       lab_ladder_kernel *out) {
    if (!out) return ptxkit_last_error_set(PTXKIT_ERROR_INVALID_ARGUMENT, "lab_reduce_ladder_kernel: out is NULL");
    return reduce_kernel(step, op, type, o, out);
}

/* Checks, then the step's kernel loaded. */
static ptxkit_status reduce_start(ptxkit_context *ctx, int step, ptxkit_reduce_op op, ptxkit_dtype type,
                                  const lab_ladder_options *o, lab_ladder_kernel *k, ptxkit_kernel **kernel) {
    if (!ctx) return ptxkit_last_error_set(PTXKIT_ERROR_INVALID_ARGUMENT, "reduce ladder: context is NULL");
    ptxkit_status st = reduce_kernel(step, op, type, o, k);
    if (st == PTXKIT_SUCCESS && step == 9 && device_arch(ctx) < 80)
        st = ptxkit_last_error_set(PTXKIT_ERROR_UNSUPPORTED, "reduce ladder step 9 needs redux.sync, which sm_%d lacks (sm_80 and newer)",
                       device_arch(ctx));
    if (st == PTXKIT_SUCCESS && kernel) st = check_device_block(ctx, "reduce", k->block);
    if (st == PTXKIT_SUCCESS && kernel) st = kernel_of(ctx, k, NULL, kernel);
    return st;
}

ptxkit_status lab_reduce_ladder_check(ptxkit_context *ctx, int step, ptxkit_reduce_op op, ptxkit_dtype type) {
    lab_ladder_kernel k;
    return reduce_start(ctx, step, op, type, NULL, &k, NULL);
}

ptxkit_status lab_reduce_ladder_prepare(ptxkit_context *ctx, int step, ptxkit_reduce_op op, ptxkit_dtype type,
                                        const lab_ladder_options *o) {
    lab_ladder_kernel k;
    ptxkit_kernel *kernel;
    return reduce_start(ctx, step, op, type, o, &k, &kernel);
}

/* The launches for n elements. Steps 1-3 take one element per thread and
 * 4-6 two, so each launch divides the count by the block (or twice it);
 * 7-10 run one full wave of blocks over the input, then one block. */
static ptxkit_status reduce_plan_for(ptxkit_context *ctx, int step, ptxkit_reduce_op op, ptxkit_dtype type, size_t n,
                                     const lab_ladder_options *o, reduce_plan *p) {
    lab_ladder_kernel k;
    ptxkit_status st = reduce_start(ctx, step, op, type, o, &k, &p->kernel);
    if (st != PTXKIT_SUCCESS) return st;
    const lab_reduce_step *s = &lab_reduce_ladder[step - 1];
    p->block = k.block;
    size_t per_block = (size_t)p->block * (size_t)s->per_thread;
    unsigned wave = 0;
    if (s->one_wave) {
        size_t needed = (n + per_block - 1) / per_block;
        if ((st = ptxkit_kernel_grid_size_get(p->kernel, p->block, 0, needed ? needed : 1, &wave)) != PTXKIT_SUCCESS)
            return st;
    }
    p->passes = 0;
    p->scratch_elems = 0;
    size_t m = n;
    do {
        size_t g = s->one_wave ? (p->passes == 0 ? wave : 1) : (m + per_block - 1) / per_block;
        if (g == 0) g = 1;
        if (g > 0x7fffffff || p->passes == MAX_LEVELS)
            return ptxkit_last_error_set(PTXKIT_ERROR_UNSUPPORTED,
                             "reduce ladder: %zu elements need a grid of %zu blocks, more than a launch allows", n, g);
        p->grids[p->passes++] = g;
        if (g > 1) p->scratch_elems += g;
        m = g;
    } while (m > 1);
    return PTXKIT_SUCCESS;
}

ptxkit_status lab_reduce_ladder_scratch_bytes(ptxkit_context *ctx, int step, ptxkit_reduce_op op, ptxkit_dtype type,
                                              size_t n, const lab_ladder_options *o, size_t *bytes) {
    reduce_plan p;
    ptxkit_status st = reduce_plan_for(ctx, step, op, type, n, o, &p);
    if (st == PTXKIT_SUCCESS && !bytes) st = ptxkit_last_error_set(PTXKIT_ERROR_INVALID_ARGUMENT, "reduce ladder: bytes is NULL");
    if (st == PTXKIT_SUCCESS) *bytes = p.scratch_elems * ptxkit_dtype_size(type);
    return st;
}

ptxkit_status lab_reduce_ladder_run(ptxkit_context *ctx, int step, ptxkit_reduce_op op, ptxkit_dtype type,
                                    ptxkit_dptr out, ptxkit_dptr in, size_t n, ptxkit_dptr scratch,
                                    size_t scratch_bytes, const lab_ladder_options *o, ptxkit_stream *stream) {
    reduce_plan p;
    ptxkit_status st = reduce_plan_for(ctx, step, op, type, n, o, &p);
    size_t elem = ptxkit_dtype_size(type);
    if (st == PTXKIT_SUCCESS) st = check_arrays("reduce", type, out, in, n);
    if (st == PTXKIT_SUCCESS) st = check_scratch("reduce", step, p.scratch_elems * elem, elem, scratch, scratch_bytes);
    ptxkit_dptr src = in, region = scratch;
    unsigned long long count = n;
    for (int i = 0; st == PTXKIT_SUCCESS && i < p.passes; i++) {
        ptxkit_dptr dst = i == p.passes - 1 ? out : region;
        void *args[] = {&src, &count, &dst};
        st = launch_1d(p.kernel, p.grids[i], p.block, stream, args);
        src = dst;
        count = p.grids[i];
        region += (ptxkit_dptr)(p.grids[i] * elem);
    }
    return st;
}

/* ---- scan ---- */

typedef struct scan_plan {
    ptxkit_kernel *scan, *add;
    int block;
    size_t per_block; /* elements one block scans */
    int levels;
    size_t counts[MAX_LEVELS]; /* elements scanned at each level; level k+1 scans level k's block sums */
    size_t scratch_elems;      /* block sums of every level but the last */
} scan_plan;

static ptxkit_status scan_kernel(int step, ptxkit_reduce_op op, ptxkit_dtype type, const lab_ladder_options *o,
                                 lab_ladder_kernel *k) {
    return op_kernel("scan", "scan_ladder.cu", "scan_ladder", LAB_SCAN_LADDER_STEPS, step, op, type,
                     ptxkit_scan_supported(NULL, PTXKIT_SCAN_INCLUSIVE, op, type), o, k);
}

ptxkit_status lab_scan_ladder_kernel(int step, ptxkit_reduce_op op, ptxkit_dtype type, const lab_ladder_options *o,
                                     lab_ladder_kernel *out) {
    if (!out) return ptxkit_last_error_set(PTXKIT_ERROR_INVALID_ARGUMENT, "lab_scan_ladder_kernel: out is NULL");
    return scan_kernel(step, op, type, o, out);
}

static ptxkit_status scan_start(ptxkit_context *ctx, int step, ptxkit_reduce_op op, ptxkit_dtype type,
                                const lab_ladder_options *o, lab_ladder_kernel *k, scan_plan *p) {
    if (!ctx) return ptxkit_last_error_set(PTXKIT_ERROR_INVALID_ARGUMENT, "scan ladder: context is NULL");
    ptxkit_status st = scan_kernel(step, op, type, o, k);
    if (st == PTXKIT_SUCCESS && p) st = check_device_block(ctx, "scan", k->block);
    if (st == PTXKIT_SUCCESS && p) st = kernel_of(ctx, k, NULL, &p->scan);
    /* the uniform add, compiled with the same defines */
    if (st == PTXKIT_SUCCESS && p) st = kernel_of(ctx, k, "scan_ladder_add", &p->add);
    return st;
}

ptxkit_status lab_scan_ladder_check(ptxkit_context *ctx, int step, ptxkit_reduce_op op, ptxkit_dtype type) {
    lab_ladder_kernel k;
    return scan_start(ctx, step, op, type, NULL, &k, NULL);
}

ptxkit_status lab_scan_ladder_prepare(ptxkit_context *ctx, int step, ptxkit_reduce_op op, ptxkit_dtype type,
                                      const lab_ladder_options *o) {
    lab_ladder_kernel k;
    scan_plan p;
    return scan_start(ctx, step, op, type, o, &k, &p);
}

static ptxkit_status scan_plan_for(ptxkit_context *ctx, int step, ptxkit_reduce_op op, ptxkit_dtype type, size_t n,
                                   const lab_ladder_options *o, scan_plan *p) {
    lab_ladder_kernel k;
    ptxkit_status st = scan_start(ctx, step, op, type, o, &k, p);
    if (st != PTXKIT_SUCCESS) return st;
    p->block = k.block;
    p->per_block = (size_t)p->block * (size_t)lab_scan_ladder[step - 1].per_thread;
    p->levels = 0;
    p->scratch_elems = 0;
    size_t m = n;
    for (;;) {
        size_t blocks = (m + p->per_block - 1) / p->per_block;
        if (blocks > 0x7fffffff || p->levels == MAX_LEVELS)
            return ptxkit_last_error_set(PTXKIT_ERROR_UNSUPPORTED,
                             "scan ladder: %zu elements need a grid of %zu blocks, more than a launch allows", n, blocks);
        p->counts[p->levels++] = m;
        if (blocks <= 1) break;
        p->scratch_elems += blocks;
        m = blocks;
    }
    return PTXKIT_SUCCESS;
}

ptxkit_status lab_scan_ladder_scratch_bytes(ptxkit_context *ctx, int step, ptxkit_reduce_op op, ptxkit_dtype type,
                                            size_t n, const lab_ladder_options *o, size_t *bytes) {
    scan_plan p;
    ptxkit_status st = scan_plan_for(ctx, step, op, type, n, o, &p);
    if (st == PTXKIT_SUCCESS && !bytes) st = ptxkit_last_error_set(PTXKIT_ERROR_INVALID_ARGUMENT, "scan ladder: bytes is NULL");
    if (st == PTXKIT_SUCCESS) *bytes = p.scratch_elems * ptxkit_dtype_size(type);
    return st;
}

/* Level k scans counts[k] elements from src into dst; with more than one
 * block its block sums go to the next region of scratch, are scanned by
 * level k+1 in place (exclusive), and are added back. */
static ptxkit_status scan_level(const scan_plan *p, size_t elem, int level, ptxkit_dptr src, ptxkit_dptr dst,
                                ptxkit_dptr region, unsigned exclusive, ptxkit_stream *stream) {
    const size_t m = p->counts[level];
    const size_t blocks = (m + p->per_block - 1) / p->per_block;
    ptxkit_dptr in = src, out = dst, sums = level + 1 < p->levels ? region : 0;
    unsigned long long count = m;
    void *args[] = {&in, &count, &out, &sums, &exclusive};
    ptxkit_status st = launch_1d(p->scan, blocks, p->block, stream, args);
    if (st != PTXKIT_SUCCESS || !sums) return st;
    st = scan_level(p, elem, level + 1, sums, sums, region + (ptxkit_dptr)(blocks * elem), 1, stream);
    if (st != PTXKIT_SUCCESS) return st;
    unsigned long long per_block = p->per_block;
    void *add_args[] = {&out, &count, &sums, &per_block};
    return launch_1d(p->add, blocks, p->block, stream, add_args);
}

ptxkit_status lab_scan_ladder_run(ptxkit_context *ctx, int step, ptxkit_scan_kind kind, ptxkit_reduce_op op,
                                  ptxkit_dtype type, ptxkit_dptr out, ptxkit_dptr in, size_t n, ptxkit_dptr scratch,
                                  size_t scratch_bytes, const lab_ladder_options *o, ptxkit_stream *stream) {
    if ((unsigned)kind >= PTXKIT_SCAN_KIND_COUNT)
        return ptxkit_last_error_set(PTXKIT_ERROR_INVALID_ARGUMENT, "scan ladder: unknown scan kind %d", (int)kind);
    scan_plan p;
    ptxkit_status st = scan_plan_for(ctx, step, op, type, n, o, &p);
    size_t elem = ptxkit_dtype_size(type);
    if (st == PTXKIT_SUCCESS) st = check_arrays("scan", type, out, in, n);
    if (st != PTXKIT_SUCCESS || n == 0) return st;
    size_t bytes = n * elem;
    if (in != out && out < in + bytes && in < out + bytes)
        return ptxkit_last_error_set(PTXKIT_ERROR_INVALID_ARGUMENT, "scan ladder: input and output overlap without being the same");
    if ((st = check_scratch("scan", step, p.scratch_elems * elem, elem, scratch, scratch_bytes)) != PTXKIT_SUCCESS)
        return st;
    return scan_level(&p, elem, 0, in, out, scratch, kind == PTXKIT_SCAN_EXCLUSIVE, stream);
}

/* ---- matrix multiply ---- */

ptxkit_status lab_gemm_ladder_kernel(int step, lab_ladder_kernel *out) {
    if (step < 1 || step > LAB_GEMM_LADDER_STEPS || !out)
        return ptxkit_last_error_set(PTXKIT_ERROR_INVALID_ARGUMENT, "gemm ladder: no step %d (steps are 1 to %d)", step,
                         LAB_GEMM_LADDER_STEPS);
    const lab_gemm_step *s = &lab_gemm_ladder[step - 1];
    if (!s->entry) return ptxkit_last_error_set(PTXKIT_ERROR_NOT_FOUND, "gemm ladder: step %d is ptxkit_gemm's kernel", step);
    *out = (lab_ladder_kernel){.file = "gemm_ladder.cu"};
    snprintf(out->entry, sizeof out->entry, "%s", s->entry);
    add_define(out, "LADDER_ENTRY", s->ladder_entry);
    if (s->tile_width) add_define(out, "TILE_WIDTH", s->tile_width);
    return PTXKIT_SUCCESS;
}

ptxkit_status lab_gemm_ladder_check(ptxkit_context *ctx, int step) {
    if (!ctx) return ptxkit_last_error_set(PTXKIT_ERROR_INVALID_ARGUMENT, "gemm ladder: context is NULL");
    if (step < 1 || step > LAB_GEMM_LADDER_STEPS)
        return ptxkit_last_error_set(PTXKIT_ERROR_INVALID_ARGUMENT, "gemm ladder: step %d is not 1..%d", step,
                         LAB_GEMM_LADDER_STEPS);
    if (step == LAB_GEMM_LADDER_STEPS && device_arch(ctx) < 80)
        return ptxkit_last_error_set(PTXKIT_ERROR_UNSUPPORTED, "gemm ladder: step %d (cp.async) needs sm_80 or later, this GPU is sm_%d",
                         step, device_arch(ctx));
    return PTXKIT_SUCCESS;
}

static ptxkit_status gemm_kernel(ptxkit_context *ctx, int step, ptxkit_kernel **kernel) {
    lab_ladder_kernel k;
    ptxkit_status st = lab_gemm_ladder_kernel(step, &k);
    return st == PTXKIT_SUCCESS ? kernel_of(ctx, &k, NULL, kernel) : st;
}

ptxkit_status lab_gemm_ladder_prepare(ptxkit_context *ctx, int step, size_t m, size_t n, size_t k) {
    ptxkit_status st = lab_gemm_ladder_check(ctx, step);
    if (st != PTXKIT_SUCCESS) return st;
    if (!lab_gemm_ladder[step - 1].entry)
        return ptxkit_gemm_prepare(ctx, PTXKIT_FLOAT32, PTXKIT_GEMM_N, PTXKIT_GEMM_N, m, n, k, &double_buffered, NULL);
    ptxkit_kernel *kernel;
    return gemm_kernel(ctx, step, &kernel);
}

ptxkit_status lab_gemm_ladder_run(ptxkit_context *ctx, int step, size_t m, size_t n, size_t k, ptxkit_dptr a,
                                  ptxkit_dptr b, ptxkit_dptr c, ptxkit_stream *stream) {
    ptxkit_status st = lab_gemm_ladder_check(ctx, step);
    if (st != PTXKIT_SUCCESS) return st;
    const lab_gemm_step *s = &lab_gemm_ladder[step - 1];
    if (m > 65535u * 16 || n > 0x7fffffffu || k > 0x7fffffffu)
        return ptxkit_last_error_set(PTXKIT_ERROR_UNSUPPORTED, "gemm ladder: %zu x %zu x %zu is too large for a teaching kernel's grid",
                         m, n, k);
    if (s->tile == 128 && (m % 128 || n % 128 || k % 128 || (a | b | c) % 16))
        return ptxkit_last_error_set(PTXKIT_ERROR_UNSUPPORTED,
                         "gemm ladder: step %d needs m, n and k multiples of 128 (not %zu x %zu x %zu) and 16-byte "
                         "aligned matrices", step, m, n, k);
    if (!s->entry)
        return ptxkit_gemm(ctx, PTXKIT_FLOAT32, PTXKIT_GEMM_N, PTXKIT_GEMM_N, m, n, k, 1.0, a, k, b, n, 0.0, c, n,
                           &double_buffered, stream);
    if (m == 0 || n == 0) return PTXKIT_SUCCESS;
    size_t bytes_a, bytes_b, bytes_c;
    if (__builtin_mul_overflow(m, k, &bytes_a) || __builtin_mul_overflow(bytes_a, 4, &bytes_a) ||
        __builtin_mul_overflow(k, n, &bytes_b) || __builtin_mul_overflow(bytes_b, 4, &bytes_b) ||
        __builtin_mul_overflow(m, n, &bytes_c) || __builtin_mul_overflow(bytes_c, 4, &bytes_c))
        return ptxkit_last_error_set(PTXKIT_ERROR_OVERFLOW, "gemm ladder: %zu x %zu x %zu overflows", m, n, k);
    if (!c || (k && (!a || !b))) return ptxkit_last_error_set(PTXKIT_ERROR_INVALID_ARGUMENT, "gemm ladder: NULL matrix");
    if ((a | b | c) % 4) return ptxkit_last_error_set(PTXKIT_ERROR_MISALIGNED, "gemm ladder: matrices are 4-byte aligned");
    if (k && c < a + bytes_a && a < c + bytes_c)
        return ptxkit_last_error_set(PTXKIT_ERROR_INVALID_ARGUMENT, "gemm ladder: C overlaps A");
    if (k && c < b + bytes_b && b < c + bytes_c)
        return ptxkit_last_error_set(PTXKIT_ERROR_INVALID_ARGUMENT, "gemm ladder: C overlaps B");
    ptxkit_kernel *kernel;
    if ((st = gemm_kernel(ctx, step, &kernel)) != PTXKIT_SUCCESS) return st;
    ptxkit_dptr da = a, db = b, dc = c;
    int im = (int)m, in = (int)n, ik = (int)k;
    void *args[] = {&da, &db, &dc, &im, &in, &ik};
    unsigned gx = (unsigned)((n + (size_t)s->tile - 1) / (size_t)s->tile);
    unsigned gy = (unsigned)((m + (size_t)s->tile - 1) / (size_t)s->tile);
    return ptxkit_kernel_launch(kernel, (ptxkit_dim3){gx, gy, 1}, (ptxkit_dim3){(unsigned)s->block_x, (unsigned)s->block_y, 1},
                         0, stream, args);
}
