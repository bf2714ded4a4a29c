/* Parameter spaces of the tunable families (copy, reduce, transpose) and
 * the rules that prune configurations which cannot launch or would spill,
 * before anything is compiled. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ops/transpose.h"
#include "ops/reduce.h"
#include "ops/scan.h"
#include "tune/params.h"

/* ---- configurations ---------------------------------------------------- */

static const char *const param_names[TUNE_PARAM_COUNT] = {"block", "items", "vec", "bpsm", "load"};

const char *tune_param_name(tune_param p) { return (unsigned)p < TUNE_PARAM_COUNT ? param_names[p] : "?"; }

int tune_config_get(const tune_config *c, tune_param p) {
    switch (p) {
    case TUNE_BLOCK: return c->block_size;
    case TUNE_ITEMS: return c->items_per_thread;
    case TUNE_VECTOR: return c->vector_bytes;
    case TUNE_BPSM: return c->blocks_per_sm;
    case TUNE_LOAD: return (int)c->load_op;
    default: return 0;
    }
}

void tune_config_set(tune_config *c, tune_param p, int value) {
    switch (p) {
    case TUNE_BLOCK: c->block_size = value; break;
    case TUNE_ITEMS: c->items_per_thread = value; break;
    case TUNE_VECTOR: c->vector_bytes = value; break;
    case TUNE_BPSM: c->blocks_per_sm = value; break;
    case TUNE_LOAD: c->load_op = (ptxkit_load_op)value; break;
    default: break;
    }
}

bool tune_config_equal(const tune_config *a, const tune_config *b) {
    for (int p = 0; p < TUNE_PARAM_COUNT; p++)
        if (tune_config_get(a, (tune_param)p) != tune_config_get(b, (tune_param)p)) return false;
    return true;
}

ptxkit_launch_options tune_config_options(const tune_config *c) {
    ptxkit_launch_options o = {0};
    o.path = PTXKIT_PATH_JIT;
    o.block_size = c->block_size;
    o.items_per_thread = c->items_per_thread;
    o.vector_bytes = c->vector_bytes;
    o.blocks_per_sm = c->blocks_per_sm;
    o.load_op = c->load_op;
    return o;
}

tune_config tune_config_from_options(const ptxkit_launch_options *o) {
    tune_config c = {o->block_size, o->items_per_thread, o->vector_bytes, o->blocks_per_sm, o->load_op};
    return c;
}

void tune_config_format(const tune_config *c, char *buf, size_t size) {
    char v[TUNE_PARAM_COUNT][16];
    for (int p = 0; p < TUNE_PARAM_COUNT; p++) {
        int x = tune_config_get(c, (tune_param)p);
        if (p == TUNE_LOAD) {
            const char *name = ptxkit_load_op_name((ptxkit_load_op)x);
            snprintf(v[p], sizeof v[p], "%s", name ? name : "?");
        } else if (x == 0) {
            snprintf(v[p], sizeof v[p], "-");
        } else {
            snprintf(v[p], sizeof v[p], "%d", x);
        }
    }
    snprintf(buf, size, "block=%s items=%s vec=%s bpsm=%s load=%s", v[0], v[1], v[2], v[3], v[4]);
}

/* ---- the families ------------------------------------------------------ */

static bool in_list(const int *list, int value, int terminator) {
    for (int i = 0; i < TUNE_MAX_VALUES && list[i] != terminator; i++)
        if (list[i] == value) return true;
    return false;
}

/* copy: n counts bytes; each byte is read and written. */
static bool fam_copy_parse(const tune_family *f, const char *name, tune_variant *v, char *why, size_t why_size) {
    if (strcmp(name, "bytes") != 0) {
        snprintf(why, why_size, "copy has one variant, 'bytes' (not '%s')", name);
        return false;
    }
    v->family = f;
    snprintf(v->name, sizeof v->name, "bytes");
    v->type = PTXKIT_UINT32;
    v->elem_size = 1;
    return true;
}

static size_t fam_copy_bytes(const tune_variant *v, size_t n) { (void)v; return n; }
static double fam_copy_moved(const tune_variant *v, size_t n) { (void)v; return 2.0 * (double)n; }

/* UNROLL vector registers in flight, plus addressing. */
static int fam_copy_registers(const tune_variant *v, const tune_config *c) {
    (void)v;
    int unroll = c->items_per_thread ? c->items_per_thread : 2;
    int vec = c->vector_bytes ? c->vector_bytes : 16;
    return 20 + unroll * vec / 4;
}

/* __launch_bounds__(BLOCK_SIZE): one block's worth of registers. */
static int one_block(const tune_config *c) {
    (void)c;
    return 1;
}

static int no_shared(const tune_variant *v, const tune_config *c) {
    (void)v;
    (void)c;
    return 0;
}

static ptxkit_status fam_copy_run(ptxkit_context *ctx, const tune_variant *v, ptxkit_dptr in, ptxkit_dptr out, size_t n,
                              const ptxkit_launch_options *options, ptxkit_stream *stream) {
    (void)v;
    return ptxkit_copy(ctx, out, in, n, options, stream);
}

/* reduce: n counts elements; variant "<op>.<type>". items_per_thread is
 * reduce.cu's VEC_UNROLL (vector loads in flight), vector_bytes VEC_BYTES. */
static bool fam_reduce_parse(const tune_family *f, const char *name, tune_variant *v, char *why, size_t why_size) {
    const char *dot = strchr(name, '.');
    if (!dot) {
        snprintf(why, why_size, "%s variants are '<op>.<type>', e.g. 'sum.float32' (not '%s')", f->name, name);
        return false;
    }
    int op = -1, type = -1;
    for (int i = 0; i < PTXKIT_REDUCE_OP_COUNT; i++) {
        const char *s = ptxkit_reduce_op_name((ptxkit_reduce_op)i);
        if (s && strlen(s) == (size_t)(dot - name) && strncmp(name, s, (size_t)(dot - name)) == 0) op = i;
    }
    for (int i = 0; i < PTXKIT_DTYPE_COUNT; i++) {
        const char *s = ptxkit_dtype_name((ptxkit_dtype)i);
        if (s && strcmp(dot + 1, s) == 0) type = i;
    }
    if (op < 0 || type < 0) {
        snprintf(why, why_size, "unknown %s %s in variant '%s'", f->name, op < 0 ? "operator" : "type", name);
        return false;
    }
    bool bitwise = op == PTXKIT_REDUCE_AND || op == PTXKIT_REDUCE_OR || op == PTXKIT_REDUCE_XOR;
    if (bitwise && (type == PTXKIT_FLOAT32 || type == PTXKIT_FLOAT64)) {
        snprintf(why, why_size, "%s variant '%s': bitwise operators take integer types", f->name, name);
        return false;
    }
    /* Tuned as the kernel that computes it, under the name reduce.c looks
     * up: uint64 sum is int64 sum, signed bitwise operators are unsigned. */
    ptxkit_reduce_op kernel_op;
    ptxkit_dtype kernel_type;
    if (!reduce_kernel_suffix((ptxkit_reduce_op)op, (ptxkit_dtype)type, &kernel_op, &kernel_type)) {
        snprintf(why, why_size, "%s variant '%s' is not provided by ptxkit_%s", f->name, name, f->name);
        return false;
    }
    v->family = f;
    snprintf(v->name, sizeof v->name, "%s.%s", ptxkit_reduce_op_name(kernel_op), ptxkit_dtype_name(kernel_type));
    v->op = kernel_op;
    v->type = kernel_type;
    v->elem_size = ptxkit_dtype_size(kernel_type);
    if (v->elem_size == 0) {
        snprintf(why, why_size, "%s variant '%s': unknown element size", f->name, name);
        return false;
    }
    return true;
}

static size_t fam_reduce_in_bytes(const tune_variant *v, size_t n) { return n * v->elem_size; }
static size_t fam_reduce_out_bytes(const tune_variant *v, size_t n) { (void)n; return v->elem_size; }
static double fam_reduce_moved(const tune_variant *v, size_t n) { return (double)n * (double)v->elem_size; }

/* Each thread holds items_per_thread loads of vector_bytes before folding
 * them, plus accumulators and addressing. */
static int fam_reduce_registers(const tune_variant *v, const tune_config *c) {
    int items = c->items_per_thread ? c->items_per_thread : 4;
    int vec = c->vector_bytes ? c->vector_bytes : 16;
    if ((size_t)vec < v->elem_size) vec = (int)v->elem_size;
    return 24 + items * vec / 4;
}

/* reduce.cu: __launch_bounds__(BLOCK_SIZE, min(32, 2048 / BLOCK_SIZE)), a
 * full SM of threads. */
static int fam_reduce_min_blocks(const tune_config *c) {
    int block = c->block_size ? c->block_size : REDUCE_DEFAULT_BLOCK;
    int m = 2048 / block;
    return m > 32 ? 32 : m < 1 ? 1 : m;
}

/* One partial per warp. */
static int fam_reduce_shared(const tune_variant *v, const tune_config *c) {
    int block = c->block_size ? c->block_size : REDUCE_DEFAULT_BLOCK;
    return block / 32 * (int)v->elem_size;
}

static ptxkit_status fam_reduce_prepare_kernel(ptxkit_context *ctx, const tune_variant *v,
                                           const ptxkit_launch_options *options) {
    return reduce_prepare(ctx, (ptxkit_reduce_op)v->op, v->type, options);
}

static ptxkit_status fam_reduce_run(ptxkit_context *ctx, const tune_variant *v, ptxkit_dptr in, ptxkit_dptr out, size_t n,
                                const ptxkit_launch_options *options, ptxkit_stream *stream) {
    return ptxkit_reduce(ctx, (ptxkit_reduce_op)v->op, v->type, out, in, n, options, stream);
}

/* transpose: the padded kind (the production one), n counts elements. The
 * tuned parameters are transpose.cu's: block size, items_per_thread
 * (elements each thread moves: the tile is the square of block x items
 * elements, 16 x 16 to 128 x 128) and vector width.
 *
 * Variants are a type and a shape class, as ptxkit_transpose looks them up
 * (transpose_shape_aligned): "float32" / "float64" for matrices whose sides
 * are whole 16-byte vectors, timed at sqrt(n) x sqrt(n) rounded down to
 * multiples of 64 (4096 x 4096 for 2^24: whole tiles move vectors);
 * "float32.unaligned" / "float64.unaligned" for the others, timed at odd
 * sides near sqrt(n) (4097 x 4095 for 2^24: no row starts on a vector or a
 * sector, the edge tiles are ragged, every access is one element). The two
 * classes want different tiles, so one entry for both would be wrong for
 * one of them. The matrix starts on a 16-byte boundary inside the buffers
 * where they have the room (the rig's verification view is misaligned on
 * purpose, with a ragged tail), so the vector path is checked too. ptxkit_transpose looks a matrix up by the power of
 * two nearest rows x cols (transpose_tune_size). */
typedef struct transpose_shape {
    size_t rows, cols;
} transpose_shape;

static size_t isqrt(size_t n) {
    size_t r = (size_t)sqrt((double)n);
    while (r > 0 && r * r > n) r--;
    while ((r + 1) * (r + 1) <= n) r++;
    return r;
}

static transpose_shape transpose_shape_for(const tune_variant *v, size_t n) {
    size_t room = n;
    transpose_shape s;
    if (v->op) { /* unaligned: odd sides */
        s.rows = isqrt(room) | 1;
        s.cols = room / s.rows;
        if (s.cols % 2 == 0) s.cols--;
        return s;
    }
    size_t r = isqrt(room), unit = r >= 64 ? 64 : 16 / v->elem_size;
    s.rows = r - r % unit;
    s.cols = s.rows ? room / s.rows : 0;
    s.cols -= s.cols % unit;
    if (!s.rows || !s.cols) s.rows = s.cols = 1; /* too small for a vector: one element */
    return s;
}

static bool fam_transpose_parse(const tune_family *f, const char *name, tune_variant *v, char *why, size_t why_size) {
    static const char *const names[] = {"float32", "float64", "float32.unaligned", "float64.unaligned"};
    int k = -1;
    for (int i = 0; i < 4; i++)
        if (strcmp(name, names[i]) == 0) k = i;
    if (k < 0) {
        snprintf(why, why_size,
                 "transpose variants are float32, float64 (sides of whole 16-byte vectors) and float32.unaligned, "
                 "float64.unaligned (other sides), not '%s'", name);
        return false;
    }
    v->family = f;
    snprintf(v->name, sizeof v->name, "%s", name);
    v->type = k % 2 ? PTXKIT_FLOAT64 : PTXKIT_FLOAT32;
    v->op = k >= 2; /* the shape class */
    v->elem_size = ptxkit_dtype_size(v->type);
    return true;
}

static size_t fam_transpose_bytes(const tune_variant *v, size_t n) { return n * v->elem_size; }

static double fam_transpose_moved(const tune_variant *v, size_t n) {
    transpose_shape s = transpose_shape_for(v, n);
    return 2.0 * (double)s.rows * (double)s.cols * (double)v->elem_size;
}

static bool fam_transpose_check(const tune_variant *v, const tune_config *c, char *why, size_t why_size) {
    transpose_config t;
    return transpose_config_from(v->type, true, c->block_size, c->items_per_thread, c->vector_bytes, &t, why,
                                 why_size);
}

/* The [TILE][TILE + 1] tile (dynamic shared memory past 64 x 64). */
static int fam_transpose_shared(const tune_variant *v, const tune_config *c) {
    transpose_config t;
    char why[160];
    if (!transpose_config_from(v->type, true, c->block_size, c->items_per_thread, c->vector_bytes, &t, why, sizeof why))
        return 0; /* refused by the check anyway */
    return t.tile * (t.tile + 1) * (int)v->elem_size;
}

/* One element or vector per item in flight, plus addressing. */
static int fam_transpose_registers(const tune_variant *v, const tune_config *c) {
    int items = c->items_per_thread ? c->items_per_thread : 16;
    return 24 + items * (int)v->elem_size / 4;
}

static ptxkit_status fam_transpose_run(ptxkit_context *ctx, const tune_variant *v, ptxkit_dptr in, ptxkit_dptr out,
                                       size_t n, const ptxkit_launch_options *options, ptxkit_stream *stream) {
    transpose_shape s = transpose_shape_for(v, n);
    /* on a 16-byte boundary where the buffers have the room (the timed ones
     * are aligned already; the verification view has a ragged tail) */
    ptxkit_dptr aligned = (in + 15) & ~(ptxkit_dptr)15;
    if (s.rows * s.cols + (aligned - in) / v->elem_size <= n) {
        out += aligned - in;
        in = aligned;
    }
    return ptxkit_transpose(ctx, v->type, out, in, s.rows, s.cols, PTXKIT_TRANSPOSE_PADDED, options, stream);
}

/* scan: n counts elements; variants "<op>.<type>" as for reduce (and the
 * same kernels computing them). items_per_thread is scan.cu's VEC_UNROLL
 * (vectors per thread), vector_bytes VEC_BYTES; a launch has one block per
 * tile, so blocks per SM is not a parameter. */
static size_t fam_scan_out_bytes(const tune_variant *v, size_t n) { return n * v->elem_size; }
static double fam_scan_moved(const tune_variant *v, size_t n) { return 2.0 * (double)n * (double)v->elem_size; }

/* A thread holds its tile's words about twice over at its peak (the loaded
 * vectors and the partial sums the compiler keeps for the output), plus
 * offsets, addresses and the look-back. */
static int fam_scan_registers(const tune_variant *v, const tune_config *c) {
    int items = c->items_per_thread ? c->items_per_thread : SCAN_DEFAULT_UNROLL;
    int vec = c->vector_bytes ? c->vector_bytes : SCAN_DEFAULT_VECTOR;
    if ((size_t)vec < v->elem_size) vec = (int)v->elem_size;
    return 20 + 2 * items * vec / 4;
}

/* scan.cu: __launch_bounds__(BLOCK_SIZE, 1), registers left to the compiler. */
static int fam_scan_min_blocks(const tune_config *c) {
    (void)c;
    return 1;
}

/* One offset per warp, the tile's prefix and its ticket. */
static int fam_scan_shared(const tune_variant *v, const tune_config *c) {
    int block = c->block_size ? c->block_size : SCAN_DEFAULT_BLOCK;
    return (block / 32 + 1) * (int)v->elem_size + 8;
}

static ptxkit_status fam_scan_prepare_kernel(ptxkit_context *ctx, const tune_variant *v,
                                             const ptxkit_launch_options *options) {
    return scan_prepare(ctx, (ptxkit_reduce_op)v->op, v->type, options);
}

static ptxkit_status fam_scan_run(ptxkit_context *ctx, const tune_variant *v, ptxkit_dptr in, ptxkit_dptr out, size_t n,
                                  const ptxkit_launch_options *options, ptxkit_stream *stream) {
    return ptxkit_scan(ctx, PTXKIT_SCAN_EXCLUSIVE, (ptxkit_reduce_op)v->op, v->type, out, in, n, options, stream);
}

#define ALL_LOADS                                                                                              \
    {PTXKIT_LOAD_DEFAULT, PTXKIT_LOAD_CA, PTXKIT_LOAD_CG, PTXKIT_LOAD_CS, PTXKIT_LOAD_LU, PTXKIT_LOAD_CV,       \
     PTXKIT_LOAD_NC, -1}

static const tune_family families[] = {
    {
        .name = "copy",
        .default_variant = "bytes",
        .unit = "bytes",
        .description = "ptxkit_copy: vectorized device-to-device copy",
        .bench_log2 = 30,
        /* items_per_thread is copy.cu's UNROLL: vectors in flight per thread;
         * blocks_per_sm 0 is copy.c's grid of one block per tile */
        .items = {1, 2, 4, 8},
        .vectors = {16, 8, 4},
        .bpsm = {0, 1, 2, 4, 8, 16, 32, -1},
        .loads = ALL_LOADS,
        .primary = {[TUNE_BLOCK] = true, [TUNE_ITEMS] = true, [TUNE_VECTOR] = true},
        .start = {512, 2, 16, 0, PTXKIT_LOAD_DEFAULT}, /* copy.c's defaults */
        .registers = fam_copy_registers,
        .min_blocks = one_block,
        .shared_bytes = no_shared,
        .parse_variant = fam_copy_parse,
        .in_bytes = fam_copy_bytes,
        .out_bytes = fam_copy_bytes,
        .bytes_moved = fam_copy_moved,
        .run = fam_copy_run,
    },
    {
        .name = "reduce",
        .default_variant = "sum.float32",
        .unit = "elements",
        .description = "ptxkit_reduce: one value from n elements",
        .bench_log2 = 28,
        .items = {1, 2, 4, 8, 16},
        .vectors = {4, 8, 16},
        .bpsm = {0, 1, 2, 4, 8, 16, 32, -1},
        .loads = ALL_LOADS,
        /* blocks per SM is primary: at small sizes fewer, fuller blocks
         * shorten the last-block finish (seen at 2^20 on an H100) */
        .primary = {[TUNE_BLOCK] = true, [TUNE_ITEMS] = true, [TUNE_BPSM] = true},
        .start = {REDUCE_DEFAULT_BLOCK, REDUCE_DEFAULT_UNROLL, REDUCE_DEFAULT_VECTOR, 0, PTXKIT_LOAD_DEFAULT},
        .registers = fam_reduce_registers,
        .min_blocks = fam_reduce_min_blocks,
        .max_grid = REDUCE_MAX_GRID, /* partial slots of reduce.cu */
        .shared_bytes = fam_reduce_shared,
        .parse_variant = fam_reduce_parse,
        .in_bytes = fam_reduce_in_bytes,
        .out_bytes = fam_reduce_out_bytes,
        .bytes_moved = fam_reduce_moved,
        .prepare = fam_reduce_prepare_kernel,
        .run = fam_reduce_run,
    },
    {
        .name = "transpose",
        .default_variant = "float32",
        .unit = "elements",
        .description = "ptxkit_transpose, padded kind, of a square-ish matrix of n elements",
        .bench_log2 = 26,
        .items = {1, 2, 4, 8, 16, 32, 64}, /* elements per thread: block x items is the tile */
        .vectors = {4, 8, 16},
        .bpsm = {0, -1},                     /* one block per tile: not a parameter */
        .loads = {PTXKIT_LOAD_DEFAULT, -1},
        /* a small space (48 legal for float32, 30 for float64): the grid is all of it */
        .primary = {[TUNE_BLOCK] = true, [TUNE_ITEMS] = true, [TUNE_VECTOR] = true},
        .start = {256, 16, 4, 0, PTXKIT_LOAD_DEFAULT}, /* float32's defaults: 64 x 64 tile, 4-byte accesses */
        .registers = fam_transpose_registers,
        .min_blocks = one_block,
        .shared_bytes = fam_transpose_shared,
        .dynamic_shared = true,
        .check = fam_transpose_check,
        .parse_variant = fam_transpose_parse,
        .in_bytes = fam_transpose_bytes,
        .out_bytes = fam_transpose_bytes,
        .bytes_moved = fam_transpose_moved,
        .run = fam_transpose_run,
    },
    {
        .name = "scan",
        .default_variant = "sum.int32",
        .unit = "elements",
        .description = "ptxkit_scan: prefix scan of n elements (exclusive; inclusive runs the same kernel)",
        .bench_log2 = 28,
        .items = {1, 2, 3, 4, 6, 8, 12, 16},
        .vectors = {4, 8, 16},
        .bpsm = {0, -1},
        .loads = ALL_LOADS,
        .primary = {[TUNE_BLOCK] = true, [TUNE_ITEMS] = true},
        .start = {SCAN_DEFAULT_BLOCK, SCAN_DEFAULT_UNROLL, SCAN_DEFAULT_VECTOR, 0, PTXKIT_LOAD_DEFAULT},
        .registers = fam_scan_registers,
        .min_blocks = fam_scan_min_blocks,
        .shared_bytes = fam_scan_shared,
        .parse_variant = fam_reduce_parse,
        .in_bytes = fam_reduce_in_bytes,
        .out_bytes = fam_scan_out_bytes,
        .bytes_moved = fam_scan_moved,
        .prepare = fam_scan_prepare_kernel,
        .run = fam_scan_run,
    },
};

int tune_family_count(void) { return (int)(sizeof families / sizeof families[0]); }

const tune_family *tune_family_at(int index) {
    return index >= 0 && index < tune_family_count() ? &families[index] : NULL;
}

const tune_family *tune_family_find(const char *name) {
    if (!name) return NULL;
    for (int i = 0; i < tune_family_count(); i++)
        if (strcmp(families[i].name, name) == 0) return &families[i];
    return NULL;
}

ptxkit_status tune_variant_parse(const tune_family *f, const char *variant, tune_variant *out, char *why,
                                 size_t why_size) {
    memset(out, 0, sizeof *out);
    if (!f) {
        snprintf(why, why_size, "no such family");
        return PTXKIT_ERROR_NOT_FOUND;
    }
    const char *name = variant && *variant ? variant : f->default_variant;
    if (strlen(name) >= sizeof out->name) {
        snprintf(why, why_size, "variant name too long");
        return PTXKIT_ERROR_INVALID_ARGUMENT;
    }
    return f->parse_variant(f, name, out, why, why_size) ? PTXKIT_SUCCESS : PTXKIT_ERROR_INVALID_ARGUMENT;
}

/* ---- spaces and constraints -------------------------------------------- */

static int device_max_block(const ptxkit_device_info *info) {
    int m = info && info->max_threads_per_block > 0 ? info->max_threads_per_block : 1024;
    return m < 1024 ? m : 1024;
}

/* Vector widths narrower than an element cannot load whole elements. */
static bool vector_fits(const tune_variant *v, int vec) { return vec == 0 || (size_t)vec >= v->elem_size; }

void tune_space_for(const tune_variant *v, const ptxkit_device_info *info, tune_space *out) {
    memset(out, 0, sizeof *out);
    const tune_family *f = v->family;
    for (int b = 32; b <= device_max_block(info) && out->count[TUNE_BLOCK] < TUNE_MAX_VALUES; b *= 2)
        out->values[TUNE_BLOCK][out->count[TUNE_BLOCK]++] = b;
    const int *lists[TUNE_PARAM_COUNT] = {NULL, f->items, f->vectors, f->bpsm, f->loads};
    for (int p = TUNE_ITEMS; p < TUNE_PARAM_COUNT; p++) {
        /* 0 is a real choice of bpsm (occupancy) and load (plain ld) */
        int terminator = p == TUNE_LOAD || p == TUNE_BPSM ? -1 : 0;
        for (int i = 0; i < TUNE_MAX_VALUES; i++) {
            int x = lists[p][i];
            if (x == terminator) break;
            if (p == TUNE_VECTOR && !vector_fits(v, x)) continue;
            if (p == TUNE_BPSM && x > 0 && info && info->max_blocks_per_sm > 0 && x > info->max_blocks_per_sm) continue;
            out->values[p][out->count[p]++] = x;
        }
        if (out->count[p] == 0) out->values[p][out->count[p]++] = 0;
    }
}

bool tune_config_legal(const tune_variant *v, const tune_config *c, const ptxkit_device_info *info, char *why,
                       size_t why_size) {
    const tune_family *f = v->family;
    int block = c->block_size;
    if (block != 0 && (block < 32 || block > device_max_block(info) || (block & (block - 1)) != 0)) {
        snprintf(why, why_size, "block size %d is not a power of two in [32, %d]", block, device_max_block(info));
        return false;
    }
    if (c->items_per_thread != 0 && !in_list(f->items, c->items_per_thread, 0)) {
        snprintf(why, why_size, "%s does not take %d items per thread", f->name, c->items_per_thread);
        return false;
    }
    if (c->vector_bytes != 0 && (!in_list(f->vectors, c->vector_bytes, 0) || !vector_fits(v, c->vector_bytes))) {
        snprintf(why, why_size, "%s %s does not load %d-byte vectors", f->name, v->name, c->vector_bytes);
        return false;
    }
    if (c->blocks_per_sm < 0 || (c->blocks_per_sm != 0 && !in_list(f->bpsm, c->blocks_per_sm, -1))) {
        snprintf(why, why_size, "%s does not take %d blocks per SM", f->name, c->blocks_per_sm);
        return false;
    }
    if ((unsigned)c->load_op >= PTXKIT_LOAD_OP_COUNT || !in_list(f->loads, (int)c->load_op, -1)) {
        snprintf(why, why_size, "load operator %d is not one of %s's", (int)c->load_op, f->name);
        return false;
    }
    if (f->check && !f->check(v, c, why, why_size)) return false;
    if (!info) return true;

    /* Limits of the SM: what cannot launch, or would only spill. */
    int threads = block ? block : f->start.block_size;
    int bpsm = c->blocks_per_sm;
    if (bpsm > 0 && info->max_blocks_per_sm > 0 && bpsm > info->max_blocks_per_sm) {
        snprintf(why, why_size, "%d blocks per SM exceeds the device's %d", bpsm, info->max_blocks_per_sm);
        return false;
    }
    if (bpsm > 0 && info->max_threads_per_sm > 0 && (long long)bpsm * threads > info->max_threads_per_sm) {
        snprintf(why, why_size, "%d blocks of %d threads exceed the SM's %d threads", bpsm, threads,
                 info->max_threads_per_sm);
        return false;
    }
    if (bpsm > 0 && f->max_grid > 0 && info->sm_count > 0 && (long long)bpsm * info->sm_count > f->max_grid) {
        snprintf(why, why_size, "%d blocks per SM on %d SMs exceed the %d blocks one %s launch may have", bpsm,
                 info->sm_count, f->max_grid, f->name);
        return false;
    }
    /* Registers: a kernel with __launch_bounds__ is compiled to fit its
     * block (ptxas spills instead, which the timing shows), so only a family
     * without them can ask for more than the SM has. */
    int regs = f->registers ? f->registers(v, c) : 0;
    if (!f->min_blocks && regs > 0) {
        if (regs > 255 || (info->regs_per_block > 0 && (long long)regs * threads > info->regs_per_block)) {
            snprintf(why, why_size, "about %d registers x %d threads exceed the %d registers of a block: cannot launch",
                     regs, threads, info->regs_per_block);
            return false;
        }
        if (bpsm > 0 && info->regs_per_sm > 0 && (long long)regs * threads * bpsm > info->regs_per_sm) {
            snprintf(why, why_size, "%d blocks of %d threads x about %d registers exceed the SM's %d registers", bpsm,
                     threads, regs, info->regs_per_sm);
            return false;
        }
    }
    int shared = f->shared_bytes(v, c);
    int block_limit = f->dynamic_shared && info->shared_per_block_optin > 0 ? info->shared_per_block_optin
                                                                            : info->shared_per_block;
    if (block_limit > 0 && shared > block_limit) {
        snprintf(why, why_size, "%d bytes of shared memory exceed the block limit of %d", shared, block_limit);
        return false;
    }
    if (bpsm > 0 && info->shared_per_sm > 0 && (long long)shared * bpsm > info->shared_per_sm) {
        snprintf(why, why_size, "%d blocks x %d bytes of shared memory exceed the SM's %d", bpsm, shared,
                 info->shared_per_sm);
        return false;
    }
    return true;
}

size_t tune_space_size(const tune_space *s) {
    size_t total = 1;
    for (int p = 0; p < TUNE_PARAM_COUNT; p++) total *= (size_t)(s->count[p] ? s->count[p] : 1);
    return total;
}

void tune_space_config(const tune_space *s, size_t index, tune_config *out) {
    memset(out, 0, sizeof *out);
    for (int p = TUNE_PARAM_COUNT - 1; p >= 0; p--) {
        size_t radix = (size_t)(s->count[p] ? s->count[p] : 1);
        tune_config_set(out, (tune_param)p, s->count[p] ? s->values[p][index % radix] : 0);
        index /= radix;
    }
}

size_t tune_space_index(const tune_space *s, const tune_config *c) {
    size_t index = 0;
    for (int p = 0; p < TUNE_PARAM_COUNT; p++) {
        int radix = s->count[p] ? s->count[p] : 1, digit = -1;
        for (int i = 0; i < s->count[p]; i++)
            if (s->values[p][i] == tune_config_get(c, (tune_param)p)) digit = i;
        if (s->count[p] == 0 && tune_config_get(c, (tune_param)p) == 0) digit = 0;
        if (digit < 0) return (size_t)-1;
        index = index * (size_t)radix + (size_t)digit;
    }
    return index;
}

/* ---- inputs ------------------------------------------------------------ */

static uint64_t splitmix(uint64_t *s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

void tune_fill_host(const tune_variant *v, void *buf, size_t bytes, uint64_t *state) {
    unsigned char *p = buf;
    size_t i = 0;
    if (v->type == PTXKIT_FLOAT32 && v->elem_size == 4) {
        for (; i + 4 <= bytes; i += 4) {
            float x = (float)(1 + splitmix(state) % 3);
            memcpy(p + i, &x, 4);
        }
    } else if (v->type == PTXKIT_FLOAT64 && v->elem_size == 8) {
        for (; i + 8 <= bytes; i += 8) {
            double x = (double)(1 + splitmix(state) % 3);
            memcpy(p + i, &x, 8);
        }
    }
    for (; i < bytes; i += 8) {
        uint64_t x = splitmix(state) | 1; /* never a zero word */
        memcpy(p + i, &x, bytes - i < 8 ? bytes - i : 8);
    }
}
