/* GPU tests of the scan family: ptxkit_scan (every operator and type,
 * inclusive and exclusive, every block size, vector width, vectors per
 * thread, load cache operator, the PTX path, in place, misaligned views,
 * many streams at once, hundreds of launches on one scratch slot, the
 * epoch wrap-around) and every step of the lab's scan ladder
 * (lab/ladders.h), against a CPU reference
 * on fresh random data into poisoned outputs with guards around them.
 *
 * Integers (sums wrap modulo 2^w) and float min/max must match exactly, at
 * n in {0, 1, 2, 31, 32, 33, 1023, 1024, 1025, 2^k +- 1 for k = 11 .. 28,
 * three random sizes}. Float sums are compared element by element with a
 * long double reference and must be within the bound ptxkit.h documents:
 * (ceil((i + 1) / T) + 48) * u * sum_{j <= i} |x_j| for ptxkit_scan (T: the
 * tile of the configuration), 160 * u * sum |x_j| for the ladder (a tree of
 * block scans, at most four levels deep here).
 *
 * PTXKIT_TEST_SCAN_MAX_LOG2 (default 28) caps the largest size, for runs
 * under compute-sanitizer. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ptxkit_ops.h"
#include "reduce/reduce.h"
#include "scan/scan.h"
#include "runtime/registry.h"
#include "compile_jobs.h"
#include "lab.h"
#include "ladders.h"
#include "test_util.h"

#define GUARD 64 /* poisoned bytes before and after every output view */
#define POISON 0xCD
#define MID_N (((size_t)1 << 24) + 3) /* the largest size of the other types */
#define VIEW_PAD 8

static size_t big_n;   /* 2^cap + 1: the int32 buffers */
static size_t mid_n;   /* min(MID_N, big_n) */
static int max_log2;

/* ---- inputs ------------------------------------------------------------- */

/* One random buffer per bit class: int32/uint32 share theirs, as do
 * int64/uint64. Integers are full-range words (sums wrap); floats are
 * uniform in [-1, 1). */
typedef struct input {
    void *host;
    ptxkit_dptr dev;
    size_t count;
} input;
static input inputs[4];
static ptxkit_dptr work;       /* outputs and in-place views */
static size_t work_bytes;
static unsigned char *host_out; /* pinned */

static void make_sizes(void);

static int input_class(ptxkit_dtype type) {
    switch (type) {
    case PTXKIT_INT32:
    case PTXKIT_UINT32: return 0;
    case PTXKIT_INT64:
    case PTXKIT_UINT64: return 1;
    case PTXKIT_FLOAT32: return 2;
    default: return 3;
    }
}

static int setup(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    const char *env = getenv("PTXKIT_TEST_SCAN_MAX_LOG2");
    max_log2 = env ? atoi(env) : 28;
    if (max_log2 < 20) max_log2 = 20;
    if (max_log2 > 28) max_log2 = 28;
    big_n = ((size_t)1 << max_log2) + 1;
    mid_n = MID_N < big_n ? MID_N : big_n;
    uint64_t rng = test_seed();
    for (int c = 0; c < 4; c++) {
        size_t elem = c == 0 || c == 2 ? 4 : 8;
        size_t count = (c == 0 ? big_n : mid_n) + VIEW_PAD;
        inputs[c].count = count;
        inputs[c].host = malloc(count * elem);
        if (!inputs[c].host) return -1;
        if (c < 2) {
            test_fill_random(inputs[c].host, count * elem, &rng);
        } else {
            for (size_t i = 0; i < count; i++) {
                double u = (double)(test_rand(&rng) >> 11) * 0x1p-53 * 2.0 - 1.0;
                if (c == 2) ((float *)inputs[c].host)[i] = (float)u;
                else ((double *)inputs[c].host)[i] = u;
            }
        }
        if (ptxkit_memory_alloc(ctx, count * elem, &inputs[c].dev) != PTXKIT_SUCCESS ||
            ptxkit_memory_write(ctx, inputs[c].dev, inputs[c].host, count * elem) != PTXKIT_SUCCESS) {
            printf("setup: %s\n", ptxkit_last_error());
            return -1;
        }
    }
    size_t biggest = big_n * 4 > mid_n * 8 ? big_n * 4 : mid_n * 8;
    work_bytes = biggest + 2 * GUARD + 64;
    if (ptxkit_memory_alloc(ctx, work_bytes, &work) != PTXKIT_SUCCESS ||
        ptxkit_host_alloc(ctx, work_bytes, PTXKIT_HOST_DEFAULT, (void **)&host_out) != PTXKIT_SUCCESS) {
        printf("setup: %s\n", ptxkit_last_error());
        return -1;
    }
    make_sizes();
    return 0;
}

static int teardown(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    for (int c = 0; c < 4; c++) {
        ptxkit_memory_free(ctx, inputs[c].dev);
        free(inputs[c].host);
    }
    ptxkit_memory_free(ctx, work);
    ptxkit_host_free(ctx, host_out);
    return 0;
}

/* ---- the reference ------------------------------------------------------ */

static bool is_float(ptxkit_dtype t) { return t == PTXKIT_FLOAT32 || t == PTXKIT_FLOAT64; }
static bool is_wide(ptxkit_dtype t) { return t == PTXKIT_INT64 || t == PTXKIT_UINT64; }

static uint64_t int_identity(ptxkit_reduce_op op, ptxkit_dtype type) {
    bool wide = is_wide(type), is_signed = type == PTXKIT_INT32 || type == PTXKIT_INT64;
    uint64_t all = wide ? ~0ull : 0xffffffffull;
    switch (op) {
    case PTXKIT_REDUCE_AND: return all;
    case PTXKIT_REDUCE_MIN: return is_signed ? all >> 1 : all;
    case PTXKIT_REDUCE_MAX: return is_signed ? (all >> 1) + 1 : 0;
    default: return 0;
    }
}

static uint64_t int_combine(ptxkit_reduce_op op, ptxkit_dtype type, uint64_t a, uint64_t b) {
    bool wide = is_wide(type), is_signed = type == PTXKIT_INT32 || type == PTXKIT_INT64;
    uint64_t mask = wide ? ~0ull : 0xffffffffull;
    int64_t sa = wide ? (int64_t)a : (int64_t)(int32_t)(uint32_t)a, sb = wide ? (int64_t)b : (int64_t)(int32_t)(uint32_t)b;
    switch (op) {
    case PTXKIT_REDUCE_SUM: return (a + b) & mask;
    case PTXKIT_REDUCE_MIN: return is_signed ? (sb < sa ? b : a) : (b < a ? b : a);
    case PTXKIT_REDUCE_MAX: return is_signed ? (sb > sa ? b : a) : (b > a ? b : a);
    case PTXKIT_REDUCE_AND: return a & b;
    case PTXKIT_REDUCE_OR: return a | b;
    default: return a ^ b;
    }
}

static double load_float(ptxkit_dtype type, const void *p, size_t i) {
    return type == PTXKIT_FLOAT32 ? (double)((const float *)p)[i] : ((const double *)p)[i];
}

/* Checks got[0, n) against the scan of in[0, n). tile > 0: ptxkit_scan's
 * float bound with that tile; 0: the ladder's. */
static bool scan_matches(ptxkit_scan_kind kind, ptxkit_reduce_op op, ptxkit_dtype type, const void *in, size_t n,
                         const void *got, size_t tile, char *why, size_t why_size) {
    const bool exclusive = kind == PTXKIT_SCAN_EXCLUSIVE;
    if (!is_float(type)) {
        const bool wide = is_wide(type);
        uint64_t acc = int_identity(op, type);
        for (size_t i = 0; i < n; i++) {
            uint64_t x = wide ? ((const uint64_t *)in)[i] : ((const uint32_t *)in)[i];
            uint64_t next = int_combine(op, type, acc, x), want = exclusive ? acc : next;
            uint64_t g = wide ? ((const uint64_t *)got)[i] : ((const uint32_t *)got)[i];
            if (g != want) {
                snprintf(why, why_size, "element %zu of %zu: got 0x%llx, want 0x%llx", i, n, (unsigned long long)g,
                         (unsigned long long)want);
                return false;
            }
            acc = next;
        }
        return true;
    }
    if (op != PTXKIT_REDUCE_SUM) { /* min, max: exact, in the element type */
        double acc = op == PTXKIT_REDUCE_MIN ? INFINITY : -INFINITY;
        for (size_t i = 0; i < n; i++) {
            double x = load_float(type, in, i);
            double next = op == PTXKIT_REDUCE_MIN ? fmin(acc, x) : fmax(acc, x), want = exclusive ? acc : next;
            double g = load_float(type, got, i);
            if (!(g == want)) {
                snprintf(why, why_size, "element %zu of %zu: got %.9g, want %.9g", i, n, g, want);
                return false;
            }
            acc = next;
        }
        return true;
    }
    const long double u = type == PTXKIT_FLOAT32 ? 0x1p-24L : 0x1p-53L;
    long double acc = 0, abs_acc = 0;
    for (size_t i = 0; i < n; i++) {
        long double x = load_float(type, in, i), want = acc, scale = abs_acc;
        acc += x;
        abs_acc += fabsl(x);
        if (!exclusive) want = acc, scale = abs_acc;
        long double depth = tile ? (long double)(i / tile + 1 + 48) : 160.0L;
        long double g = load_float(type, got, i), err = fabsl(g - want), tol = depth * u * scale;
        if (isnan((double)g) || err > tol) {
            snprintf(why, why_size, "element %zu of %zu: got %.17Lg, want %.17Lg (error %.3Lg, bound %.3Lg)", i, n, g,
                     want, err, tol);
            return false;
        }
    }
    return true;
}

/* ---- running one case --------------------------------------------------- */

/* Where input and output sit: offsets in elements from their buffers'
 * (256-byte aligned) starts, and in place or not. */
typedef struct layout {
    const char *name;
    unsigned in_offset, out_offset;
    bool in_place; /* the view is copied to work + out_offset and scanned there */
} layout;

static const layout SEPARATE = {"separate", 0, 0, false};
static const layout MISALIGNED_IN = {"input +1", 1, 0, false};
static const layout MISALIGNED_OUT = {"output +1", 0, 1, false};
static const layout MISALIGNED_BOTH = {"both +1", 1, 1, false};
static const layout MISALIGNED_APART = {"input +1, output +2", 1, 2, false};
static const layout IN_PLACE = {"in place", 0, 0, true};
static const layout IN_PLACE_MISALIGNED = {"in place +1", 1, 1, true};

typedef enum runner { RUN_SCAN, RUN_LADDER } runner;

typedef struct variant {
    runner kind;
    int step;
    launch_options options;
    ptxkit_stream *stream;
    const scan_experiment *experiment; /* RUN_SCAN: NULL, or experiment switches of the kernel */
} variant;

static ptxkit_dptr ladder_scratch;
static size_t ladder_scratch_bytes;
static int failures_printed, skipped_cases;

static void describe(char *buf, size_t size, const variant *v, ptxkit_scan_kind kind, ptxkit_reduce_op op,
                     ptxkit_dtype type, const layout *l, size_t n) {
    const launch_options *o = &v->options;
    snprintf(buf, size, "%s%s%d %s %s.%s n=%zu (%s) block %d vec %d items %d load %s path %d",
             v->kind != RUN_SCAN ? "ladder step " : v->experiment ? "scan (experiment) " : "scan",
             v->kind == RUN_LADDER && v->stream ? "(stream) " : "",
             v->kind == RUN_SCAN ? 0 : v->step, ptxkit_scan_kind_name(kind), ptxkit_reduce_op_name(op),
             ptxkit_dtype_name(type), n, l->name, o->block_size, o->vector_bytes, o->items_per_thread,
             ptxkit_load_op_name(o->load_op) ? ptxkit_load_op_name(o->load_op) : "?", (int)o->path);
}

static ptxkit_status run_variant(ptxkit_context *ctx, const variant *v, ptxkit_scan_kind kind, ptxkit_reduce_op op,
                                 ptxkit_dtype type, ptxkit_dptr in, size_t n, ptxkit_dptr out) {
    switch (v->kind) {
    case RUN_SCAN:
        return v->experiment ? scan_run(ctx, kind, op, type, in, n, out, &v->options, v->stream, v->experiment)
                             : ptxkit_scan(ctx, kind, op, type, out, in, n, SCAN_CONFIG(&v->options), v->stream);
    default: {
        const lab_ladder_options lo = {.block_size = v->options.block_size, .load_op = v->options.load_op};
        return lab_scan_ladder_run(ctx, v->step, kind, op, type, out, in, n, ladder_scratch, ladder_scratch_bytes, &lo,
                                   v->stream);
    }
    }
}

/* Runs v on one case and checks the output and the guards around it.
 * Returns 1 on a failure (printed), else 0. */
static int check_case(const variant *v, ptxkit_scan_kind kind, ptxkit_reduce_op op, ptxkit_dtype type, size_t n,
                      const layout *l) {
    ptxkit_context *ctx = test_gpu();
    const size_t elem = ptxkit_dtype_size(type);
    const input *src = &inputs[input_class(type)];
    char label[320], why[320];
    describe(label, sizeof label, v, kind, op, type, l, n);
    if (n + l->in_offset > src->count) { /* only under a lowered PTXKIT_TEST_SCAN_MAX_LOG2 */
        skipped_cases++;
        return 0;
    }
    const size_t span = n * elem + 2 * GUARD;
    ptxkit_dptr out_view = work + GUARD + (ptxkit_dptr)l->out_offset * elem;
    ptxkit_dptr in_view = src->dev + (ptxkit_dptr)l->in_offset * elem;
    assert_ok(ctx, ptxkit_memory_set8_async(ctx, work + (ptxkit_dptr)l->out_offset * elem, POISON, span, v->stream));
    if (l->in_place) {
        if (n) assert_ok(ctx, ptxkit_memory_copy_async(ctx, out_view, in_view, n * elem, v->stream));
        in_view = out_view;
    }
    ptxkit_status st = run_variant(ctx, v, kind, op, type, in_view, n, out_view);
    if (st != PTXKIT_SUCCESS) {
        if (failures_printed++ < 40) printf("FAIL %s: %s: %s\n", label, ptxkit_status_string(st), ptxkit_last_error());
        return 1;
    }
    assert_ok(ctx, v->stream ? ptxkit_stream_synchronize(ctx, v->stream) : ptxkit_context_synchronize(ctx));
    assert_ok(ctx, ptxkit_memory_read(ctx, host_out, work + (ptxkit_dptr)l->out_offset * elem, span));
    bool ok = true;
    for (size_t b = 0; ok && b < GUARD; b++)
        if (host_out[b] != POISON || host_out[GUARD + n * elem + b] != POISON) {
            ok = false;
            snprintf(why, sizeof why, "wrote outside its output (%s guard, byte %zu)",
                     host_out[b] != POISON ? "leading" : "trailing", b);
        }
    size_t tile = 0;
    if (ok && v->kind == RUN_SCAN && is_float(type) && op == PTXKIT_REDUCE_SUM)
        assert_ok(ctx, scan_tile_elements(ctx, op, type, n, &v->options, &tile));
    if (ok)
        ok = scan_matches(kind, op, type, (const unsigned char *)src->host + (size_t)l->in_offset * elem, n,
                          host_out + GUARD, v->kind == RUN_SCAN ? tile : 0, why, sizeof why);
    if (!ok && failures_printed++ < 40) printf("FAIL %s: %s\n", label, why);
    return ok ? 0 : 1;
}

/* ---- sizes ----------------------------------------------------------------- */

static size_t sizes[96];
static size_t size_count;

static void make_sizes(void) {
    static const size_t fixed[] = {0, 1, 2, 31, 32, 33, 1023, 1024, 1025};
    size_count = 0;
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) sizes[size_count++] = fixed[i];
    for (int k = 11; k <= max_log2; k++) {
        sizes[size_count++] = ((size_t)1 << k) - 1;
        sizes[size_count++] = ((size_t)1 << k) + 1;
    }
    uint64_t rng = test_seed() ^ 0x5ca1ab1eull;
    for (int i = 0; i < 3; i++) sizes[size_count++] = 1 + (size_t)(test_rand(&rng) % ((size_t)1 << 22));
}

/* ---- compiling every variant first, in parallel ------------------------ */

static ptxkit_status prepare_job(ptxkit_context *ctx, const compile_job *j) {
    const lab_ladder_options lo = {.block_size = j->options.block_size, .load_op = j->options.load_op};
    return j->step ? lab_scan_ladder_prepare(ctx, j->step, j->op, j->type, &lo)
                   : scan_prepare(ctx, j->op, j->type, &j->options);
}

static const int block_sizes[] = {32, 64, 128, 256, 512, 1024};
#define BLOCK_COUNT 6
static const int ladder_blocks[] = {32, 128, 256, 1024};
#define LADDER_BLOCK_COUNT 4

/* Production shapes checked beyond the defaults. */
static const launch_options shapes[] = {
    {.block_size = 32},
    {.block_size = 64},
    {.block_size = 128},
    {.block_size = 512},
    {.block_size = 1024},
    {.vector_bytes = 8},
    {.vector_bytes = 4},
    {.items_per_thread = 1},
    {.items_per_thread = 2},
    {.items_per_thread = 3},
    {.items_per_thread = 5},
    {.items_per_thread = 8},
    {.items_per_thread = 16},
    {.load_op = PTXKIT_LOAD_CA},
    {.load_op = PTXKIT_LOAD_CG},
    {.load_op = PTXKIT_LOAD_CS},
    {.load_op = PTXKIT_LOAD_LU},
    {.load_op = PTXKIT_LOAD_CV},
    {.load_op = PTXKIT_LOAD_NC},
    {.block_size = 32, .items_per_thread = 1, .vector_bytes = 4},
    {.block_size = 1024, .items_per_thread = 16, .vector_bytes = 16},
    {.block_size = 128, .items_per_thread = 6},
};
#define SHAPE_COUNT (sizeof shapes / sizeof shapes[0])
static const struct {
    ptxkit_reduce_op op;
    ptxkit_dtype type;
} shape_combos[] = {
    {PTXKIT_REDUCE_SUM, PTXKIT_INT32},   {PTXKIT_REDUCE_SUM, PTXKIT_FLOAT32}, {PTXKIT_REDUCE_SUM, PTXKIT_FLOAT64},
    {PTXKIT_REDUCE_MAX, PTXKIT_FLOAT32}, {PTXKIT_REDUCE_MIN, PTXKIT_INT32},   {PTXKIT_REDUCE_XOR, PTXKIT_UINT64},
    {PTXKIT_REDUCE_SUM, PTXKIT_INT64},
};
#define SHAPE_COMBO_COUNT (sizeof shape_combos / sizeof shape_combos[0])

static void test_compile_all(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    compile_jobs jobs = {0};
    for (int op = 0; op < PTXKIT_REDUCE_OP_COUNT; op++)
        for (int type = 0; type < PTXKIT_DTYPE_COUNT; type++) {
            if (!compile_jobs_kernel_combo(op, type)) continue;
            compile_jobs_add(&jobs, 0, op, type, (launch_options){0});
            for (int lo = PTXKIT_LOAD_DEFAULT; lo < PTXKIT_LOAD_OP_COUNT; lo++)
                compile_jobs_add(&jobs, 0, op, type, (launch_options){.path = PTXKIT_PATH_PTX, .load_op = lo});
            for (int step = 1; step <= LAB_SCAN_LADDER_STEPS; step++)
                for (int b = 0; b < LADDER_BLOCK_COUNT; b++)
                    compile_jobs_add(&jobs, step, op, type, (launch_options){.block_size = ladder_blocks[b]});
        }
    for (size_t c = 0; c < SHAPE_COMBO_COUNT; c++)
        for (size_t s = 0; s < SHAPE_COUNT; s++)
            if (compile_jobs_shape_applies(&shapes[s], shape_combos[c].type)) compile_jobs_add(&jobs, 0, shape_combos[c].op, shape_combos[c].type, shapes[s]);
    for (int b = 0; b < BLOCK_COUNT; b++)
        compile_jobs_add(&jobs, 0, PTXKIT_REDUCE_SUM, PTXKIT_INT32, (launch_options){.block_size = block_sizes[b]});

    assert_int_equal(compile_jobs_run(ctx, &jobs, prepare_job), 0);
}

/* ---- ptxkit_scan ------------------------------------------------------- */

/* int32 sum at every size up to 2^cap + 1, both kinds; every layout up to
 * 2^24 + 1 and at the two largest sizes. */
static void test_scan_sizes_int32(void **state) {
    (void)state;
    static const layout *const layouts[] = {&SEPARATE,        &MISALIGNED_IN, &MISALIGNED_OUT,     &MISALIGNED_BOTH,
                                            &MISALIGNED_APART, &IN_PLACE,      &IN_PLACE_MISALIGNED};
    int failures = 0;
    variant v = {.kind = RUN_SCAN};
    for (size_t s = 0; s < size_count; s++)
        for (int kind = 0; kind < PTXKIT_SCAN_KIND_COUNT; kind++) {
            bool all_layouts = sizes[s] <= ((size_t)1 << 24) + 1 || s + 3 >= size_count - 3;
            for (size_t l = 0; l < (all_layouts ? sizeof layouts / sizeof layouts[0] : 1); l++) {
                if (sizes[s] + layouts[l]->in_offset > inputs[0].count) continue;
                failures += check_case(&v, kind, PTXKIT_REDUCE_SUM, PTXKIT_INT32, sizes[s], layouts[l]);
            }
        }
    assert_int_equal(failures, 0);
}

/* The other integer sums and every other (op, type), both kinds, at the
 * sizes up to 2^24 + 1, rotating through the layouts. */
static void test_scan_all_combos(void **state) {
    (void)state;
    static const layout *const layouts[] = {&SEPARATE, &MISALIGNED_BOTH, &IN_PLACE_MISALIGNED, &MISALIGNED_IN,
                                            &IN_PLACE, &MISALIGNED_OUT};
    int failures = 0, cases = 0;
    variant v = {.kind = RUN_SCAN};
    for (int op = 0; op < PTXKIT_REDUCE_OP_COUNT; op++)
        for (int type = 0; type < PTXKIT_DTYPE_COUNT; type++) {
            if (!scan_supported(op, type)) continue;
            bool dense = op == PTXKIT_REDUCE_SUM && (type == PTXKIT_INT64 || type == PTXKIT_UINT64 ||
                                                     type == PTXKIT_UINT32 || type == PTXKIT_FLOAT32);
            for (size_t s = 0; s < size_count; s++) {
                size_t n = sizes[s];
                if (n + 2 > inputs[input_class(type)].count) continue;
                /* every size for the sums; every third size (and the small ones) otherwise */
                if (!dense && ((n > 1025 && s % 3) || n > mid_n)) continue;
                for (int kind = 0; kind < PTXKIT_SCAN_KIND_COUNT; kind++) {
                    const layout *l = layouts[(s + (size_t)kind + (size_t)op) % (sizeof layouts / sizeof layouts[0])];
                    failures += check_case(&v, kind, op, type, n, l);
                    cases++;
                }
            }
        }
    printf("all combos: %d cases\n", cases);
    assert_int_equal(failures, 0);
}

static void test_scan_shapes(void **state) {
    (void)state;
    static const size_t shape_sizes[] = {1, 33, 4097, 65537, 1000003, ((size_t)1 << 22) + 5};
    int failures = 0;
    for (size_t c = 0; c < SHAPE_COMBO_COUNT; c++)
        for (size_t s = 0; s < SHAPE_COUNT; s++) {
            if (!compile_jobs_shape_applies(&shapes[s], shape_combos[c].type)) continue;
            variant v = {.kind = RUN_SCAN, .options = shapes[s]};
            for (size_t k = 0; k < sizeof shape_sizes / sizeof shape_sizes[0]; k++) {
                const layout *l = k % 2 ? &MISALIGNED_BOTH : k % 3 ? &MISALIGNED_IN : &SEPARATE;
                failures += check_case(&v, (ptxkit_scan_kind)(k % 2), shape_combos[c].op, shape_combos[c].type,
                                       shape_sizes[k], l);
            }
        }
    assert_int_equal(failures, 0);
}

static void test_scan_ptx_path(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    launch_options probe = {.path = PTXKIT_PATH_PTX};
    ptxkit_status st = scan_prepare(ctx, PTXKIT_REDUCE_SUM, PTXKIT_INT32, &probe);
    if (st == PTXKIT_ERROR_NOT_FOUND) {
        printf("skipped: %s (regenerate the PTX with ninja regenerate-ptx)\n", ptxkit_last_error());
        skip();
    }
    assert_ok(ctx, st);
    static const size_t ptx_sizes[] = {1, 1025, 65537, ((size_t)1 << 20) + 3};
    int failures = 0;
    for (int lo = PTXKIT_LOAD_DEFAULT; lo < PTXKIT_LOAD_OP_COUNT; lo++)
        for (int op = 0; op < PTXKIT_REDUCE_OP_COUNT; op++)
            for (int type = 0; type < PTXKIT_DTYPE_COUNT; type++) {
                if (!scan_supported(op, type)) continue;
                variant v = {.kind = RUN_SCAN, .options = {.path = PTXKIT_PATH_PTX, .load_op = lo}};
                for (size_t k = 0; k < sizeof ptx_sizes / sizeof ptx_sizes[0]; k++)
                    failures += check_case(&v, (ptxkit_scan_kind)((k + (size_t)lo) % 2), op, type, ptx_sizes[k],
                                           k % 2 ? &MISALIGNED_BOTH : &SEPARATE);
            }
    assert_int_equal(failures, 0);
    launch_options other = {.path = PTXKIT_PATH_PTX, .block_size = 128};
    assert_status(PTXKIT_ERROR_UNSUPPORTED, scan_prepare(ctx, PTXKIT_REDUCE_SUM, PTXKIT_INT32, &other));
    other = (launch_options){.path = PTXKIT_PATH_PTX, .items_per_thread = 8};
    assert_status(PTXKIT_ERROR_UNSUPPORTED, scan_prepare(ctx, PTXKIT_REDUCE_SUM, PTXKIT_INT32, &other));
}

/* Exact check of out_n elements at `out` (device) against the scan of the
 * class input view at `offset` elements. */
static void expect_scan(ptxkit_context *ctx, const char *what, ptxkit_scan_kind kind, ptxkit_reduce_op op,
                        ptxkit_dtype type, size_t offset, size_t n, ptxkit_dptr out) {
    size_t elem = ptxkit_dtype_size(type);
    assert_ok(ctx, ptxkit_memory_read(ctx, host_out, out, n * elem));
    char why[320];
    const unsigned char *in = (const unsigned char *)inputs[input_class(type)].host + offset * elem;
    if (!scan_matches(kind, op, type, in, n, host_out, 0, why, sizeof why)) fail_msg("%s: %s", what, why);
}

/* More streams than scratch slots scan at once, mixing 4- and 16-byte status
 * words on the same slots; then short-lived streams destroyed with scans in
 * flight hand their slots over. */
static void test_scan_streams(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    enum { STREAMS = 2 * SCAN_SLOTS + 3 };
    const size_t n_big = (mid_n < ((size_t)1 << 22) ? mid_n : ((size_t)1 << 22)) - 1;
    const size_t stride = n_big * 8 + 256; /* bytes per stream's output */
    ptxkit_dptr outs;
    assert_ok(ctx, ptxkit_memory_alloc(ctx, STREAMS * stride, &outs));
    ptxkit_stream *streams[STREAMS];
    for (int s = 0; s < STREAMS; s++) assert_ok(ctx, ptxkit_stream_create(ctx, PTXKIT_STREAM_NON_BLOCKING, 0, &streams[s]));
    /* each stream: int32 sum of the big view three times (ending in its own
     * output), a float64 max in between, then int64 sum of its own size */
    for (int rep = 0; rep < 3; rep++)
        for (int s = 0; s < STREAMS; s++) {
            ptxkit_dptr out = outs + (ptxkit_dptr)s * stride;
            assert_ok(ctx, ptxkit_scan(ctx, PTXKIT_SCAN_INCLUSIVE, PTXKIT_REDUCE_SUM, PTXKIT_INT32, out,
                                       inputs[0].dev + 4 * (size_t)(s % 3), n_big - (size_t)s, NULL, streams[s]));
            if (rep == 1)
                assert_ok(ctx, ptxkit_scan(ctx, PTXKIT_SCAN_EXCLUSIVE, PTXKIT_REDUCE_MAX, PTXKIT_FLOAT64, out,
                                           inputs[3].dev, n_big / 2, NULL, streams[s]));
        }
    for (int s = 0; s < STREAMS; s++) assert_ok(ctx, ptxkit_stream_synchronize(ctx, streams[s]));
    for (int s = 0; s < STREAMS; s++) {
        char what[64];
        snprintf(what, sizeof what, "stream %d", s);
        expect_scan(ctx, what, PTXKIT_SCAN_INCLUSIVE, PTXKIT_REDUCE_SUM, PTXKIT_INT32, (size_t)(s % 3), n_big - (size_t)s,
                    outs + (ptxkit_dptr)s * stride);
    }
    for (int s = 0; s < STREAMS; s++) {
        ptxkit_dptr out = outs + (ptxkit_dptr)s * stride;
        size_t n = 1000 + (size_t)s * 7919;
        assert_ok(ctx, ptxkit_scan(ctx, PTXKIT_SCAN_EXCLUSIVE, PTXKIT_REDUCE_SUM, PTXKIT_INT64, out, inputs[1].dev + 8,
                                   n, NULL, streams[s]));
    }
    for (int s = 0; s < STREAMS; s++) assert_ok(ctx, ptxkit_stream_synchronize(ctx, streams[s]));
    for (int s = 0; s < STREAMS; s++) {
        char what[64];
        snprintf(what, sizeof what, "stream %d, int64", s);
        expect_scan(ctx, what, PTXKIT_SCAN_EXCLUSIVE, PTXKIT_REDUCE_SUM, PTXKIT_INT64, 1, 1000 + (size_t)s * 7919,
                    outs + (ptxkit_dptr)s * stride);
    }
    /* Short-lived streams: each scans the big view, then a long-lived
     * stream takes a slot in between, then the next short one. */
    for (int s = 0; s < STREAMS; s++) {
        ptxkit_stream *brief;
        assert_ok(ctx, ptxkit_stream_create(ctx, PTXKIT_STREAM_NON_BLOCKING, 0, &brief));
        ptxkit_dptr out = outs + (ptxkit_dptr)s * stride;
        assert_ok(ctx, ptxkit_scan(ctx, PTXKIT_SCAN_EXCLUSIVE, PTXKIT_REDUCE_SUM, PTXKIT_INT32, out, inputs[0].dev,
                                   n_big, NULL, brief));
        assert_ok(ctx, ptxkit_scan(ctx, PTXKIT_SCAN_INCLUSIVE, PTXKIT_REDUCE_XOR, PTXKIT_UINT32, out, inputs[0].dev + 4,
                                   n_big - 1, NULL, brief));
        ptxkit_stream_destroy(brief);
        ptxkit_dptr other = outs + (ptxkit_dptr)((s + 1) % STREAMS) * stride + stride / 2;
        assert_ok(ctx, ptxkit_scan(ctx, PTXKIT_SCAN_INCLUSIVE, PTXKIT_REDUCE_SUM, PTXKIT_INT32, other, inputs[0].dev,
                                   100000, NULL, streams[s]));
    }
    assert_ok(ctx, ptxkit_context_synchronize(ctx));
    for (int s = 0; s < STREAMS; s++) {
        char what[64];
        snprintf(what, sizeof what, "destroyed stream %d", s);
        expect_scan(ctx, what, PTXKIT_SCAN_INCLUSIVE, PTXKIT_REDUCE_XOR, PTXKIT_UINT32, 1, n_big - 1,
                    outs + (ptxkit_dptr)s * stride);
        snprintf(what, sizeof what, "stream %d beside destroyed ones", s);
        expect_scan(ctx, what, PTXKIT_SCAN_INCLUSIVE, PTXKIT_REDUCE_SUM, PTXKIT_INT32, 0, 100000,
                    outs + (ptxkit_dptr)s * stride + stride / 2);
    }
    for (int s = 0; s < STREAMS; s++) ptxkit_stream_destroy(streams[s]);
    ptxkit_memory_free(ctx, outs);
}

/* Hundreds of launches on one slot, large and small, 4- and 8-byte types:
 * the words the large ones leave behind must never be read as published by
 * a later launch (the epoch), and the ticket counter stays in step. */
static void test_scan_back_to_back(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    enum { RUNS = 240 };
    static const size_t run_sizes[] = {((size_t)1 << 20) + 1, 5000, 70001, ((size_t)1 << 18) - 1, 33, 4097};
    const size_t cycle = sizeof run_sizes / sizeof run_sizes[0];
    const size_t stride = run_sizes[0] * 8 + 256;
    ptxkit_dptr outs;
    assert_ok(ctx, ptxkit_memory_alloc(ctx, RUNS / 4 * stride, &outs));
    for (int round = 0; round < 4; round++) {
        for (int i = 0; i < RUNS / 4; i++) {
            size_t n = run_sizes[(size_t)(i + round) % cycle];
            ptxkit_dtype type = (i + round) % 2 ? PTXKIT_INT64 : PTXKIT_UINT32;
            assert_ok(ctx, ptxkit_scan(ctx, (ptxkit_scan_kind)(i % 2), PTXKIT_REDUCE_SUM, type,
                                       outs + (ptxkit_dptr)i * stride, inputs[input_class(type)].dev, n, NULL, NULL));
        }
        for (int i = 0; i < RUNS / 4; i++) {
            size_t n = run_sizes[(size_t)(i + round) % cycle];
            ptxkit_dtype type = (i + round) % 2 ? PTXKIT_INT64 : PTXKIT_UINT32;
            char what[64];
            snprintf(what, sizeof what, "round %d run %d", round, i);
            expect_scan(ctx, what, (ptxkit_scan_kind)(i % 2), PTXKIT_REDUCE_SUM, type, 0, n, outs + (ptxkit_dptr)i * stride);
        }
    }
    ptxkit_memory_free(ctx, outs);
}

/* The epoch wraps after 2^30 launches on a slot: then the words are cleared
 * and the epoch starts again at 1. Forced here in a few calls. */
static void test_scan_epoch_wrap(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    const size_t n = ((size_t)1 << 20) + 1;
    ptxkit_dptr out = work + GUARD;
    for (int round = 0; round < 2; round++) {
        /* the slot has been used by earlier tests: its words hold epochs near 1 */
        assert_ok(ctx, scan_debug_set_epoch(ctx, SCAN_EPOCH_LIMIT - 2));
        for (int i = 0; i < 5; i++) {
            ptxkit_dtype type = i % 2 ? PTXKIT_FLOAT64 : PTXKIT_INT32;
            ptxkit_reduce_op op = i % 2 ? PTXKIT_REDUCE_MAX : PTXKIT_REDUCE_SUM;
            assert_ok(ctx, ptxkit_scan(ctx, PTXKIT_SCAN_INCLUSIVE, op, type, out, inputs[input_class(type)].dev,
                                       n - (size_t)i, NULL, NULL));
            char what[64];
            snprintf(what, sizeof what, "round %d, launch %d around the wrap", round, i);
            expect_scan(ctx, what, PTXKIT_SCAN_INCLUSIVE, op, type, 0, n - (size_t)i, out);
        }
    }
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, scan_debug_set_epoch(ctx, 0));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, scan_debug_set_epoch(ctx, SCAN_EPOCH_LIMIT));
}

static void test_scan_arguments(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    ptxkit_dptr in = inputs[0].dev, out = work;
    const ptxkit_scan_kind ex = PTXKIT_SCAN_EXCLUSIVE;
    const ptxkit_reduce_op sum = PTXKIT_REDUCE_SUM;
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_scan(NULL, ex, sum, PTXKIT_INT32, out, in, 10, NULL, NULL));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT,
                  ptxkit_scan(ctx, (ptxkit_scan_kind)2, sum, PTXKIT_INT32, out, in, 10, NULL, NULL));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT,
                  ptxkit_scan(ctx, ex, (ptxkit_reduce_op)99, PTXKIT_INT32, out, in, 10, NULL, NULL));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_scan(ctx, ex, sum, (ptxkit_dtype)-1, out, in, 10, NULL, NULL));
    assert_status(PTXKIT_ERROR_UNSUPPORTED,
                  ptxkit_scan(ctx, ex, PTXKIT_REDUCE_MIN, PTXKIT_INT64, out, in, 10, NULL, NULL));
    assert_status(PTXKIT_ERROR_UNSUPPORTED,
                  ptxkit_scan(ctx, ex, PTXKIT_REDUCE_AND, PTXKIT_FLOAT64, out, in, 10, NULL, NULL));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_scan(ctx, ex, sum, PTXKIT_INT32, 0, in, 10, NULL, NULL));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_scan(ctx, ex, sum, PTXKIT_INT32, out, 0, 10, NULL, NULL));
    assert_status(PTXKIT_ERROR_MISALIGNED, ptxkit_scan(ctx, ex, sum, PTXKIT_INT32, out, in + 2, 10, NULL, NULL));
    assert_status(PTXKIT_ERROR_MISALIGNED, ptxkit_scan(ctx, ex, sum, PTXKIT_INT32, out + 1, in, 10, NULL, NULL));
    assert_status(PTXKIT_ERROR_MISALIGNED, ptxkit_scan(ctx, ex, sum, PTXKIT_FLOAT64, out, in + 4, 10, NULL, NULL));
    assert_status(PTXKIT_ERROR_OVERFLOW, ptxkit_scan(ctx, ex, sum, PTXKIT_INT32, out, in, SIZE_MAX / 2, NULL, NULL));
    /* overlapping views other than in place */
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT,
                  ptxkit_scan(ctx, ex, sum, PTXKIT_INT32, out + 4, out, 100, NULL, NULL));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT,
                  ptxkit_scan(ctx, ex, sum, PTXKIT_INT32, out, out + 40, 100, NULL, NULL));
    launch_options o = {.block_size = 48};
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_scan(ctx, ex, sum, PTXKIT_INT32, out, in, 10, SCAN_CONFIG(&o), NULL));
    o = (launch_options){.vector_bytes = 4};
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_scan(ctx, ex, sum, PTXKIT_FLOAT64, out, in, 10, SCAN_CONFIG(&o), NULL));
    o = (launch_options){.items_per_thread = 17};
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_scan(ctx, ex, sum, PTXKIT_INT32, out, in, 10, SCAN_CONFIG(&o), NULL));
    o = (launch_options){.blocks_per_sm = 2};
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_scan(ctx, ex, sum, PTXKIT_INT32, out, in, 10, SCAN_CONFIG(&o), NULL));
    assert_null(ptxkit_scan_kind_name(PTXKIT_SCAN_KIND_COUNT));
    assert_string_equal(ptxkit_scan_kind_name(PTXKIT_SCAN_EXCLUSIVE), "exclusive");

    /* n = 0 writes nothing and needs no pointers */
    assert_ok(ctx, ptxkit_memory_set8_async(ctx, work, POISON, 64, NULL));
    assert_ok(ctx, ptxkit_scan(ctx, ex, sum, PTXKIT_INT32, work, in, 0, NULL, NULL));
    assert_ok(ctx, ptxkit_scan(ctx, PTXKIT_SCAN_INCLUSIVE, PTXKIT_REDUCE_MAX, PTXKIT_FLOAT64, 0, 0, 0, NULL, NULL));
    unsigned char host[64];
    assert_ok(ctx, ptxkit_memory_read(ctx, host, work, sizeof host));
    for (size_t i = 0; i < sizeof host; i++) assert_int_equal(host[i], POISON);

    /* exclusive identities: min of int32 starts at INT32_MAX, max of float32 at -inf */
    int32_t first_i = 0;
    assert_ok(ctx, ptxkit_scan(ctx, ex, PTXKIT_REDUCE_MIN, PTXKIT_INT32, work, in, 5, NULL, NULL));
    assert_ok(ctx, ptxkit_memory_read(ctx, &first_i, work, 4));
    assert_int_equal(first_i, INT32_MAX);
    float first_f = 0;
    assert_ok(ctx, ptxkit_scan(ctx, ex, PTXKIT_REDUCE_MAX, PTXKIT_FLOAT32, work, inputs[2].dev, 5, NULL, NULL));
    assert_ok(ctx, ptxkit_memory_read(ctx, &first_f, work, 4));
    assert_true(isinf(first_f) && first_f < 0);

    /* the lab's ladder: steps 1..4 */
    const ptxkit_dptr scratch = ladder_scratch;
    const size_t scratch_bytes = ladder_scratch_bytes;
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT,
                  lab_scan_ladder_run(ctx, 0, ex, sum, PTXKIT_INT32, out, in, 10, scratch, scratch_bytes, NULL, NULL));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT,
                  lab_scan_ladder_run(ctx, 5, ex, sum, PTXKIT_INT32, out, in, 10, scratch, scratch_bytes, NULL, NULL));
    const lab_ladder_options odd_block = {.block_size = 48};
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, lab_scan_ladder_run(ctx, 2, ex, sum, PTXKIT_INT32, out, in, 10, scratch,
                                                                     scratch_bytes, &odd_block, NULL));
    assert_status(PTXKIT_ERROR_MISALIGNED, lab_scan_ladder_run(ctx, 3, ex, sum, PTXKIT_INT32, out, in + 3, 10, scratch,
                                                               scratch_bytes, NULL, NULL));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT,
                  lab_scan_ladder_run(ctx, 1, ex, sum, PTXKIT_INT32, out, in, 100000, scratch, 16, NULL, NULL));
    /* a partial overlap of input and output is refused */
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, lab_scan_ladder_run(ctx, 4, ex, sum, PTXKIT_INT32, in + 4, in, 10,
                                                                     scratch, scratch_bytes, NULL, NULL));
}

/* The benchmark's experiment switches of the kernel (tiles numbered by
 * blockIdx.x or by ticket, other look-back windows, no back-off, a register
 * bound, the register kernel where the staged one is the default and the
 * staged one by choice, with shapes of both, 1-8 bulk copies per staged
 * tile), and launches numbered by blockIdx.x between ticket-numbered ones
 * on the same slot (only the latter take tickets). */
static void test_scan_experiments(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    static const scan_experiment experiments[] = {
        {0, -1, -1, -1, -1, -1},  {-1, -1, 1, -1, -1, -1}, {-1, -1, 8, -1, -1, -1}, {-1, 0, -1, -1, -1, -1},
        {-1, -1, -1, 2, -1, -1},  {-1, -1, -1, -1, 0, -1}, {0, -1, 1, -1, 0, -1},   {-1, -1, -1, -1, 1, -1},
        {0, 0, -1, -1, 1, -1},    {-1, -1, -1, 1, 1, -1},  {1, -1, -1, -1, 1, -1},  {1, -1, -1, -1, 1, 1},
        {-1, -1, -1, -1, 1, 2},   {1, 0, -1, -1, 1, 4},    {-1, 0, -1, -1, 1, 8},
    };
    static const launch_options experiment_shapes[] = {
        {0},
        {.block_size = 256, .items_per_thread = 12},
        {.block_size = 1024, .items_per_thread = 4},
        {.block_size = 32, .items_per_thread = 3, .vector_bytes = 8},
    };
    ptxkit_device_info info;
    assert_ok(ctx, ptxkit_device_info_get(ctx, &info));
    static const size_t few[] = {1, 33, 4097, 65537, ((size_t)1 << 20) + 1, 3000017};
    int failures = 0;
    for (size_t e = 0; e < sizeof experiments / sizeof experiments[0]; e++)
        for (size_t k = 0; k < sizeof few / sizeof few[0]; k++) {
            if (experiments[e].staged == 1 && info.cc_major < 9) continue; /* UNSUPPORTED there: checked below */
            variant v = {.kind = RUN_SCAN, .experiment = &experiments[e],
                         .options = experiment_shapes[(e + k) % (sizeof experiment_shapes / sizeof experiment_shapes[0])]};
            /* copies per tile must divide the warps (an error otherwise: checked below) */
            const int warps = (v.options.block_size ? v.options.block_size : 256) / 32;
            if (experiments[e].chunks > 1 && warps % experiments[e].chunks) continue;
            failures += check_case(&v, (ptxkit_scan_kind)(k % 2), PTXKIT_REDUCE_SUM, PTXKIT_INT32, few[k],
                                   k % 2 ? &MISALIGNED_BOTH : &SEPARATE);
            failures += check_case(&v, (ptxkit_scan_kind)((k + 1) % 2), PTXKIT_REDUCE_SUM, PTXKIT_FLOAT64, few[k],
                                   k % 3 ? &SEPARATE : &IN_PLACE_MISALIGNED);
        }
    assert_int_equal(failures, 0);
    /* the staged kernel asked for where it cannot run: a clear status */
    const scan_experiment staged = {-1, -1, -1, -1, 1, -1};
    const launch_options too_big = {.block_size = 1024, .items_per_thread = 16};
    assert_status(PTXKIT_ERROR_UNSUPPORTED, scan_run(ctx, PTXKIT_SCAN_INCLUSIVE, PTXKIT_REDUCE_SUM, PTXKIT_INT32,
                                                     inputs[0].dev, 1000, inputs[0].dev, &too_big, NULL, &staged));
    /* copies that do not divide the warps */
    const scan_experiment three_copies = {-1, -1, -1, -1, 1, 3};
    const launch_options eight_warps = {.block_size = 256};
    assert_status(info.cc_major >= 9 ? PTXKIT_ERROR_INVALID_ARGUMENT : PTXKIT_ERROR_UNSUPPORTED,
                  scan_run(ctx, PTXKIT_SCAN_INCLUSIVE, PTXKIT_REDUCE_SUM, PTXKIT_INT32, inputs[0].dev, 1000,
                           inputs[0].dev, &eight_warps, NULL, &three_copies));
    /* launches numbered by blockIdx.x (the staged kernel's default, and the
     * experiment) between ones numbered by ticket, on one slot */
    const scan_experiment by_ticket = {1, -1, -1, -1, -1, -1};
    const size_t n = ((size_t)1 << 20) + 3, stride = n * 4 + 256;
    ptxkit_dptr outs;
    assert_ok(ctx, ptxkit_memory_alloc(ctx, 24 * stride, &outs));
    for (int i = 0; i < 24; i++)
        assert_ok(ctx, scan_run(ctx, PTXKIT_SCAN_INCLUSIVE, PTXKIT_REDUCE_SUM, PTXKIT_INT32, inputs[0].dev,
                                n - (size_t)i * 997, outs + (ptxkit_dptr)i * stride, NULL, NULL,
                                i % 3 == 1 ? &experiments[0] : i % 3 == 2 ? &by_ticket : NULL));
    for (int i = 0; i < 24; i++) {
        char what[64];
        snprintf(what, sizeof what, "alternating launch %d", i);
        expect_scan(ctx, what, PTXKIT_SCAN_INCLUSIVE, PTXKIT_REDUCE_SUM, PTXKIT_INT32, 0, n - (size_t)i * 997,
                    outs + (ptxkit_dptr)i * stride);
    }
    ptxkit_memory_free(ctx, outs);
}

/* ---- the ladder ---------------------------------------------------------- */

static void test_ladder_all(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    static const size_t ladder_sizes[] = {0, 1, 31, 33, 1000, 65537, ((size_t)1 << 20) + 7};
    static const layout *const layouts[] = {&SEPARATE, &IN_PLACE, &MISALIGNED_BOTH, &IN_PLACE_MISALIGNED, &MISALIGNED_IN};
    int failures = 0, variants = 0;
    for (int step = 1; step <= LAB_SCAN_LADDER_STEPS; step++)
        for (int b = 0; b < LADDER_BLOCK_COUNT; b++)
            for (int op = 0; op < PTXKIT_REDUCE_OP_COUNT; op++)
                for (int type = 0; type < PTXKIT_DTYPE_COUNT; type++) {
                    ptxkit_status st = lab_scan_ladder_check(ctx, step, op, type);
                    if (st != PTXKIT_SUCCESS) {
                        assert_int_equal(st, PTXKIT_ERROR_UNSUPPORTED);
                        continue;
                    }
                    variant v = {.kind = RUN_LADDER, .step = step, .options = {.block_size = ladder_blocks[b]}};
                    for (size_t k = 0; k < sizeof ladder_sizes / sizeof ladder_sizes[0]; k++) {
                        /* the largest size at two block sizes only */
                        if (k + 1 == sizeof ladder_sizes / sizeof ladder_sizes[0] && b % 2) continue;
                        const layout *l = layouts[(k + (size_t)step + (size_t)op) % 5];
                        failures += check_case(&v, (ptxkit_scan_kind)((k + (size_t)type) % 2), op, type, ladder_sizes[k], l);
                    }
                    variants++;
                }
    printf("ladder: %d variants checked\n", variants);
    assert_int_equal(failures, 0);
}

static void test_ladder_load_ops(void **state) {
    (void)state;
    int failures = 0;
    for (int step = 1; step <= LAB_SCAN_LADDER_STEPS; step++)
        for (int lo = PTXKIT_LOAD_CA; lo < PTXKIT_LOAD_OP_COUNT; lo++) {
            variant v = {.kind = RUN_LADDER, .step = step, .options = {.load_op = lo}};
            failures += check_case(&v, PTXKIT_SCAN_EXCLUSIVE, PTXKIT_REDUCE_SUM, PTXKIT_INT32, 100003, &SEPARATE);
        }
    assert_int_equal(failures, 0);
}

/* The ladder on a stream of its own. */
static void test_ladder_stream(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    ptxkit_stream *stream;
    assert_ok(ctx, ptxkit_stream_create(ctx, PTXKIT_STREAM_NON_BLOCKING, 0, &stream));
    int failures = 0;
    for (int step = 1; step <= LAB_SCAN_LADDER_STEPS; step++) {
        variant v = {.kind = RUN_LADDER, .step = step, .options = {.block_size = 128}, .stream = stream};
        failures += check_case(&v, PTXKIT_SCAN_INCLUSIVE, PTXKIT_REDUCE_MAX, PTXKIT_INT32, 300007, &SEPARATE);
        failures += check_case(&v, PTXKIT_SCAN_EXCLUSIVE, PTXKIT_REDUCE_SUM, PTXKIT_FLOAT32, 300007, &IN_PLACE);
    }
    ptxkit_stream_destroy(stream);
    assert_int_equal(failures, 0);
}

/* ptxkit_scan_prepare: the call after it on the same stream loads no
 * module (a configuration no other test uses: the prepare loaded it where
 * the JIT path runs it) and finds scratch large enough for n elements at
 * any alignment, so that a capture begun right after records a scan of a
 * view one element past the prepared pointers' alignment; the replays and
 * a plain call agree with the CPU's exclusive prefix sums. One tile and
 * many. */
static void test_scan_prepare(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    assert_ok(ctx, ptxkit_scan_supported(ctx, PTXKIT_SCAN_EXCLUSIVE, PTXKIT_REDUCE_SUM, PTXKIT_UINT32));
    ptxkit_config c = {0};
    const bool jit = ptxkit_jit_available();
    if (jit) {
        ptxkit_config_set(&c, "path", PTXKIT_PATH_JIT);
        ptxkit_config_set(&c, "block_size", 128);
        ptxkit_config_set(&c, "vectors_per_thread", 3);
        ptxkit_config_set(&c, "load_op", PTXKIT_LOAD_CV);
    }
    static const size_t sizes[] = {100, (1u << 22) + 3};
    const size_t most = sizes[1] + 1;
    uint64_t rng = test_seed() ^ 0x5ca1;
    uint32_t *host = malloc(most * sizeof *host), *got = malloc(most * sizeof *host);
    assert_non_null(host);
    assert_non_null(got);
    test_fill_random(host, most * sizeof *host, &rng);
    ptxkit_dptr in, out;
    assert_ok(ctx, ptxkit_memory_alloc(ctx, most * sizeof *host, &in));
    assert_ok(ctx, ptxkit_memory_alloc(ctx, most * sizeof *host, &out));
    assert_ok(ctx, ptxkit_memory_write(ctx, in, host, most * sizeof *host));
    for (size_t i = 0; i < 2; i++) {
        const size_t n = sizes[i];
        /* a view one element in: no 16-byte boundary at its start */
        const ptxkit_dptr vin = in + sizeof *host, vout = out + sizeof *host;
        ptxkit_stream *s;
        assert_ok(ctx, ptxkit_stream_create(ctx, PTXKIT_STREAM_NON_BLOCKING, 0, &s));
        size_t before = registry_module_count(ctx);
        assert_ok(ctx, ptxkit_scan_prepare(ctx, PTXKIT_SCAN_EXCLUSIVE, PTXKIT_REDUCE_SUM, PTXKIT_UINT32, n, &c, s));
        size_t loaded = registry_module_count(ctx);
        if (jit && i == 0) assert_true(loaded > before);
        ptxkit_graph *graph = NULL;
        assert_ok(ctx, ptxkit_graph_capture_begin(ctx, s));
        ptxkit_status st = ptxkit_scan(ctx, PTXKIT_SCAN_EXCLUSIVE, PTXKIT_REDUCE_SUM, PTXKIT_UINT32, vout, vin, n, &c, s);
        assert_ok(ctx, ptxkit_graph_capture_end(ctx, s, &graph));
        assert_ok(ctx, st);
        for (int run = 0; run < 3; run++) {
            assert_ok(ctx, ptxkit_memory_set8_async(ctx, out, 0xCD, most * sizeof *host, s));
            if (run < 2) assert_ok(ctx, ptxkit_graph_launch(ctx, graph, s));
            else assert_ok(ctx, ptxkit_scan(ctx, PTXKIT_SCAN_EXCLUSIVE, PTXKIT_REDUCE_SUM, PTXKIT_UINT32, vout, vin, n, &c, s));
            assert_ok(ctx, ptxkit_stream_synchronize(ctx, s));
            assert_ok(ctx, ptxkit_memory_read(ctx, got, vout, n * sizeof *host));
            uint32_t prefix = 0;
            for (size_t j = 0; j < n; j++) {
                if (got[j] != prefix)
                    fail_msg("exclusive scan of %zu elements after ptxkit_scan_prepare (%s): out[%zu] = %u, not %u", n,
                             run < 2 ? "replay" : "call", j, got[j], prefix);
                prefix += host[1 + j];
            }
        }
        if (registry_module_count(ctx) != loaded)
            fail_msg("ptxkit_scan of %zu elements after ptxkit_scan_prepare loaded a module", n);
        ptxkit_graph_destroy(graph);
        ptxkit_stream_destroy(s);
    }
    /* n 0 prepares nothing and succeeds; the call's errors are named after the prepare */
    assert_ok(ctx, ptxkit_scan_prepare(ctx, PTXKIT_SCAN_INCLUSIVE, PTXKIT_REDUCE_SUM, PTXKIT_UINT32, 0, NULL, NULL));
    assert_status(PTXKIT_ERROR_UNSUPPORTED,
                  ptxkit_scan_prepare(ctx, PTXKIT_SCAN_INCLUSIVE, PTXKIT_REDUCE_MIN, PTXKIT_INT64, 16, NULL, NULL));
    assert_non_null(strstr(ptxkit_last_error(), "ptxkit_scan_prepare"));
    ptxkit_memory_free(ctx, in);
    ptxkit_memory_free(ctx, out);
    free(host);
    free(got);
}

int main(void) {
    test_require_gpu();
    ptxkit_context *ctx = test_gpu();
    /* Block sums of the ladder's largest run: 32-thread blocks of step 1 on
     * 2^20 + 7 elements leave n/32 sums, then 1/32 of that... */
    ladder_scratch_bytes = 2 * ((((size_t)1 << 20) + 7) / 32 + 64) * 8;
    if (ptxkit_memory_alloc(ctx, ladder_scratch_bytes, &ladder_scratch) != PTXKIT_SUCCESS) {
        printf("cannot allocate: %s\n", ptxkit_last_error());
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_compile_all),     cmocka_unit_test(test_scan_arguments),
        cmocka_unit_test(test_scan_sizes_int32), cmocka_unit_test(test_scan_all_combos),
        cmocka_unit_test(test_scan_shapes),     cmocka_unit_test(test_scan_ptx_path),
        cmocka_unit_test(test_scan_streams),    cmocka_unit_test(test_scan_back_to_back),
        cmocka_unit_test(test_scan_epoch_wrap), cmocka_unit_test(test_scan_experiments),
        cmocka_unit_test(test_ladder_all),
        cmocka_unit_test(test_ladder_load_ops), cmocka_unit_test(test_ladder_stream),
        cmocka_unit_test(test_scan_prepare),
    };
    /* PTXKIT_TEST_FILTER=test_scan_streams runs the matching tests only (a sanitizer's session) */
    if (getenv("PTXKIT_TEST_FILTER")) cmocka_set_test_filter(getenv("PTXKIT_TEST_FILTER"));
    int failed = cmocka_run_group_tests_name("gpu_scan", tests, setup, teardown);
    if (skipped_cases) printf("%d cases skipped: their sizes exceed PTXKIT_TEST_SCAN_MAX_LOG2=%d\n", skipped_cases, max_log2);
    ptxkit_memory_free(ctx, ladder_scratch);
    test_gpu_release();
    return failed;
}
