/* GPU tests of the reduce family: ptxkit_reduce (one and two launches, every
 * block size, vector width, loads in flight, load cache operator, the PTX
 * path, many streams) and every step of the lab's reduction ladder
 * (lab/ladders.h) at every block size,
 * for every operator and type, against a CPU reference on fresh random data
 * at sizes 0, 1, 31, 33, 1000, 2^16 - 1, 2^20 + 7, 2^24 + 3 and misaligned
 * views, into poisoned outputs.
 *
 * Integers (sums wrap modulo 2^w) and float min/max must match exactly.
 * Float sums are compared with a float64 (long double) reference and must
 * be within 1e-5 (float32) or 1e-13 (float64) of the sum of |x_i|: the
 * kernels add in a different order, each element's rounding error is at
 * most the unit roundoff times a partial sum, and no thread adds more than
 * a few hundred elements in sequence before the trees take over.
 *
 * Every kernel variant the suite needs is compiled first, from several
 * threads (PTXKIT_TEST_COMPILE_THREADS, default: the CPU count up to 16). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ptxkit_ops.h"
#include "reduce/reduce.h"
#include "runtime/registry.h"
#include "compile_jobs.h"
#include "lab.h"
#include "ladders.h"
#include "test_util.h"

#define MAX_N ((size_t)(1u << 24) + 3)
#define VIEW_PAD 8 /* elements past MAX_N for the misaligned views */

typedef struct reduce_case {
    size_t offset, n; /* view in[offset, offset + n) */
} reduce_case;

/* The misaligned views start 1, 2 or 3 elements past a 16-byte boundary:
 * fewer elements than that (2 at +8 bytes) and a few more (6 at +4). */
static const reduce_case cases[] = {
    {0, 0},
    {0, 1},
    {0, 31},
    {0, 33},
    {0, 1000},
    {0, 65535},
    {0, (1u << 20) + 7},
    {0, MAX_N},
    {1, 1000},
    {3, 65535},
    {1, (1u << 20) + 7},
    {2, 1},
    {1, 6},
};
#define CASE_COUNT (sizeof cases / sizeof cases[0])
#define GROUP_BYTES 24 /* one output: the element plus poisoned bytes around it */
#define STREAM_COUNT (2 * REDUCE_SLOTS + 3) /* more streams than scratch slots */
#define OUTPUT_GROUPS (CASE_COUNT > STREAM_COUNT ? CASE_COUNT : STREAM_COUNT)

static const int block_sizes[] = {32, 64, 128, 256, 512, 1024};
#define BLOCK_COUNT 6

/* ---- inputs and the CPU reference --------------------------------------- */

/* One random buffer per bit class: int32 and uint32 share theirs, as do
 * int64 and uint64. Floats are uniform in [-1, 1). */
typedef struct input {
    void *host;
    ptxkit_dptr dev;
} input;
static input inputs[4];

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

typedef struct ref_value {
    unsigned char bits[8]; /* exact result (integers, float min and max) */
    long double sum;       /* float sums: reference value */
    long double abs_sum;   /* float sums: sum of |x|, the error scale */
} ref_value;

static ref_value refs[PTXKIT_REDUCE_OP_COUNT][PTXKIT_DTYPE_COUNT][CASE_COUNT];

static uint64_t int_identity(ptxkit_reduce_op op, ptxkit_dtype type) {
    bool wide = type == PTXKIT_INT64 || type == PTXKIT_UINT64, is_signed = type == PTXKIT_INT32 || type == PTXKIT_INT64;
    uint64_t all = wide ? ~0ull : 0xffffffffull;
    switch (op) {
    case PTXKIT_REDUCE_AND: return all;
    case PTXKIT_REDUCE_MIN: return is_signed ? all >> 1 : all;
    case PTXKIT_REDUCE_MAX: return is_signed ? (all >> 1) + 1 : 0;
    default: return 0;
    }
}

static uint64_t int_combine(ptxkit_reduce_op op, ptxkit_dtype type, uint64_t a, uint64_t b) {
    bool wide = type == PTXKIT_INT64 || type == PTXKIT_UINT64, is_signed = type == PTXKIT_INT32 || type == PTXKIT_INT64;
    uint64_t mask = wide ? ~0ull : 0xffffffffull;
    int64_t sa = wide ? (int64_t)a : (int64_t)(int32_t)(uint32_t)a,
            sb = wide ? (int64_t)b : (int64_t)(int32_t)(uint32_t)b;
    bool b_less = is_signed ? sb < sa : b < a;
    switch (op) {
    case PTXKIT_REDUCE_SUM: return (a + b) & mask;
    case PTXKIT_REDUCE_MIN: return b_less ? b : a;
    case PTXKIT_REDUCE_MAX: return is_signed ? (sb > sa ? b : a) : (b > a ? b : a);
    case PTXKIT_REDUCE_AND: return a & b;
    case PTXKIT_REDUCE_OR: return a | b;
    default: return a ^ b;
    }
}

static void reference(ptxkit_reduce_op op, ptxkit_dtype type, const void *data, size_t n, ref_value *r) {
    memset(r, 0, sizeof *r);
    if (type == PTXKIT_FLOAT32 || type == PTXKIT_FLOAT64) {
        const float *f = data;
        const double *d = data;
        double acc = op == PTXKIT_REDUCE_MIN ? INFINITY : -INFINITY;
        for (size_t i = 0; i < n; i++) {
            double x = type == PTXKIT_FLOAT32 ? (double)f[i] : d[i];
            r->sum += x;
            r->abs_sum += fabsl((long double)x);
            acc = op == PTXKIT_REDUCE_MIN ? fmin(acc, x) : fmax(acc, x);
        }
        if (type == PTXKIT_FLOAT32) {
            float v = (float)acc;
            memcpy(r->bits, &v, 4);
        } else {
            memcpy(r->bits, &acc, 8);
        }
        return;
    }
    bool wide = type == PTXKIT_INT64 || type == PTXKIT_UINT64;
    uint64_t acc = int_identity(op, type);
    for (size_t i = 0; i < n; i++) {
        uint64_t x = wide ? ((const uint64_t *)data)[i] : ((const uint32_t *)data)[i];
        acc = int_combine(op, type, acc, x);
    }
    if (wide) {
        memcpy(r->bits, &acc, 8);
    } else {
        uint32_t v = (uint32_t)acc;
        memcpy(r->bits, &v, 4);
    }
}

static int setup_inputs(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    uint64_t rng = test_seed();
    for (int c = 0; c < 4; c++) {
        size_t elem = c == 0 || c == 2 ? 4 : 8, count = MAX_N + VIEW_PAD;
        inputs[c].host = malloc(count * elem);
        if (!inputs[c].host) return -1;
        if (c < 2) {
            test_fill_random(inputs[c].host, count * elem, &rng);
        } else {
            for (size_t i = 0; i < count; i++) {
                double u = (double)(test_rand(&rng) >> 11) * 0x1p-53 * 2.0 - 1.0;
                if (c == 2)
                    ((float *)inputs[c].host)[i] = (float)u;
                else
                    ((double *)inputs[c].host)[i] = u;
            }
        }
        if (ptxkit_memory_alloc(ctx, count * elem, &inputs[c].dev) != PTXKIT_SUCCESS ||
            ptxkit_memory_write(ctx, inputs[c].dev, inputs[c].host, count * elem) != PTXKIT_SUCCESS) {
            printf("setup: %s\n", ptxkit_last_error());
            return -1;
        }
    }
    for (int op = 0; op < PTXKIT_REDUCE_OP_COUNT; op++)
        for (int type = 0; type < PTXKIT_DTYPE_COUNT; type++) {
            if (!reduce_supported((ptxkit_reduce_op)op, (ptxkit_dtype)type)) continue;
            size_t elem = ptxkit_dtype_size((ptxkit_dtype)type);
            const unsigned char *base = inputs[input_class((ptxkit_dtype)type)].host;
            for (size_t k = 0; k < CASE_COUNT; k++)
                reference((ptxkit_reduce_op)op, (ptxkit_dtype)type, base + cases[k].offset * elem, cases[k].n,
                          &refs[op][type][k]);
        }
    return 0;
}

static int teardown_inputs(void **state) {
    (void)state;
    for (int c = 0; c < 4; c++) {
        ptxkit_memory_free(test_gpu(), inputs[c].dev);
        free(inputs[c].host);
    }
    return 0;
}

/* ---- running and checking a variant on every case ---------------------- */

typedef enum variant_kind { RUN_REDUCE, RUN_LADDER } variant_kind;

typedef struct variant {
    variant_kind kind;
    int step;             /* ladder step */
    reduce_passes passes; /* reduce */
    launch_options options;
    ptxkit_stream *stream;
} variant;

static ptxkit_dptr outputs, ladder_scratch;
static size_t ladder_scratch_bytes;
static int failures_printed;

static void describe(char *buf, size_t size, const variant *v, ptxkit_reduce_op op, ptxkit_dtype type) {
    const launch_options *o = &v->options;
    snprintf(buf, size, "%s%s%d %s.%s block %d vec %d items %d bpsm %d load %s path %d",
             v->kind == RUN_REDUCE ? "reduce passes=" : "ladder step ", v->stream ? "(stream) " : "",
             v->kind == RUN_REDUCE ? (int)v->passes : v->step, ptxkit_reduce_op_name(op), ptxkit_dtype_name(type),
             o->block_size, o->vector_bytes, o->items_per_thread, o->blocks_per_sm,
             ptxkit_load_op_name(o->load_op) ? ptxkit_load_op_name(o->load_op) : "?", (int)o->path);
}

static ptxkit_status run_variant(ptxkit_context *ctx, const variant *v, ptxkit_reduce_op op, ptxkit_dtype type,
                                 ptxkit_dptr in, size_t n, ptxkit_dptr out) {
    switch (v->kind) {
    case RUN_REDUCE: return reduce_run(ctx, op, type, in, n, out, &v->options, v->stream, v->passes);
    default: {
        const lab_ladder_options lo = {.block_size = v->options.block_size, .load_op = v->options.load_op};
        return lab_reduce_ladder_run(ctx, v->step, op, type, out, in, n, ladder_scratch, ladder_scratch_bytes, &lo,
                                     v->stream);
    }
    }
}

static bool result_matches(ptxkit_dtype type, ptxkit_reduce_op op, const unsigned char *got, const ref_value *want,
                           char *why, size_t why_size) {
    size_t elem = ptxkit_dtype_size(type);
    if (type == PTXKIT_FLOAT32 || type == PTXKIT_FLOAT64) {
        double g, w;
        if (type == PTXKIT_FLOAT32) {
            float gf, wf;
            memcpy(&gf, got, 4);
            memcpy(&wf, want->bits, 4);
            g = gf, w = wf;
        } else {
            memcpy(&g, got, 8);
            memcpy(&w, want->bits, 8);
        }
        if (op == PTXKIT_REDUCE_SUM) {
            long double tol = (type == PTXKIT_FLOAT32 ? 1e-5L : 1e-13L) * want->abs_sum;
            long double err = fabsl((long double)g - want->sum);
            snprintf(why, why_size, "got %.17g, want %.17Lg (error %.3Lg, tolerance %.3Lg)", g, want->sum, err, tol);
            return err <= tol && !isnan(g);
        }
        snprintf(why, why_size, "got %.9g, want %.9g", g, w);
        return g == w;
    }
    uint64_t g = 0, w = 0;
    memcpy(&g, got, elem);
    memcpy(&w, want->bits, elem);
    snprintf(why, why_size, "got 0x%llx, want 0x%llx", (unsigned long long)g, (unsigned long long)w);
    return g == w;
}

/* Runs v for (op, type) on every case into its own poisoned output group,
 * then checks results and poison. Returns the number of failures. */
static int check_variant(const variant *v, ptxkit_reduce_op op, ptxkit_dtype type) {
    ptxkit_context *ctx = test_gpu();
    size_t elem = ptxkit_dtype_size(type);
    const input *in = &inputs[input_class(type)];
    char label[256], why[256];
    describe(label, sizeof label, v, op, type);
    int failures = 0;
    assert_ok(ctx, ptxkit_memory_set8_async(ctx, outputs, 0xCD, CASE_COUNT * GROUP_BYTES, NULL));
    assert_ok(ctx, ptxkit_context_synchronize(ctx));
    ptxkit_status launched[CASE_COUNT];
    for (size_t k = 0; k < CASE_COUNT; k++)
        launched[k] = run_variant(ctx, v, op, type, in->dev + cases[k].offset * elem, cases[k].n,
                                  outputs + k * GROUP_BYTES + elem);
    ptxkit_status st = v->stream ? ptxkit_stream_synchronize(ctx, v->stream) : ptxkit_context_synchronize(ctx);
    if (st != PTXKIT_SUCCESS) fail_msg("%s: %s: %s", label, ptxkit_status_string(st), ptxkit_last_error());
    unsigned char host[CASE_COUNT * GROUP_BYTES];
    assert_ok(ctx, ptxkit_memory_read(ctx, host, outputs, sizeof host));
    for (size_t k = 0; k < CASE_COUNT; k++) {
        const unsigned char *g = host + k * GROUP_BYTES;
        bool ok = launched[k] == PTXKIT_SUCCESS;
        if (!ok)
            snprintf(why, sizeof why, "%s", ptxkit_status_string(launched[k]));
        else
            ok = result_matches(type, op, g + elem, &refs[op][type][k], why, sizeof why);
        for (size_t b = 0; ok && b < GROUP_BYTES; b++)
            if ((b < elem || b >= 2 * elem) && g[b] != 0xCD) {
                ok = false;
                snprintf(why, sizeof why, "wrote outside its output (byte %zu of the guard)", b);
            }
        if (!ok) {
            failures++;
            if (failures_printed++ < 40)
                printf("FAIL %s, view [%zu, +%zu): %s\n", label, cases[k].offset, cases[k].n, why);
        }
    }
    return failures;
}

/* ---- compiling every variant first, in parallel ------------------------ */

static ptxkit_status prepare_job(ptxkit_context *ctx, const compile_job *j) {
    const lab_ladder_options lo = {.block_size = j->options.block_size, .load_op = j->options.load_op};
    return j->step ? lab_reduce_ladder_prepare(ctx, j->step, j->op, j->type, &lo)
                   : reduce_prepare(ctx, j->op, j->type, &j->options);
}

/* Production shapes the suite checks beyond the defaults. */
static const launch_options reduce_shapes[] = {
    {.block_size = 32},
    {.block_size = 64},
    {.block_size = 128},
    {.block_size = 512},
    {.block_size = 1024},
    {.vector_bytes = 8},
    {.vector_bytes = 4},
    {.items_per_thread = 1},
    {.items_per_thread = 2},
    {.items_per_thread = 8},
    {.items_per_thread = 16},
    {.blocks_per_sm = 1},
    {.load_op = PTXKIT_LOAD_CA},
    {.load_op = PTXKIT_LOAD_CG},
    {.load_op = PTXKIT_LOAD_CS},
    {.load_op = PTXKIT_LOAD_LU},
    {.load_op = PTXKIT_LOAD_CV},
    {.load_op = PTXKIT_LOAD_NC},
    {.block_size = 1024, .items_per_thread = 16, .vector_bytes = 16},
};
#define SHAPE_COUNT (sizeof reduce_shapes / sizeof reduce_shapes[0])
static const struct {
    ptxkit_reduce_op op;
    ptxkit_dtype type;
} shape_combos[] = {
    {PTXKIT_REDUCE_SUM, PTXKIT_INT32},   {PTXKIT_REDUCE_SUM, PTXKIT_FLOAT32}, {PTXKIT_REDUCE_SUM, PTXKIT_FLOAT64},
    {PTXKIT_REDUCE_MAX, PTXKIT_FLOAT32}, {PTXKIT_REDUCE_MIN, PTXKIT_INT32},   {PTXKIT_REDUCE_XOR, PTXKIT_UINT64},
    {PTXKIT_REDUCE_SUM, PTXKIT_INT64},
};
#define SHAPE_COMBO_COUNT (sizeof shape_combos / sizeof shape_combos[0])
static const int ladder_load_steps[] = {1, 4, 6, 7, 8, 9, 10};

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
            for (int step = 1; step <= LAB_REDUCE_LADDER_STEPS; step++) {
                if (lab_reduce_ladder_check(ctx, step, op, type) != PTXKIT_SUCCESS) continue;
                for (int b = 0; b < BLOCK_COUNT; b++)
                    compile_jobs_add(&jobs, step, op, type, (launch_options){.block_size = block_sizes[b]});
            }
        }
    for (size_t c = 0; c < SHAPE_COMBO_COUNT; c++)
        for (size_t s = 0; s < SHAPE_COUNT; s++)
            if (compile_jobs_shape_applies(&reduce_shapes[s], shape_combos[c].type))
                compile_jobs_add(&jobs, 0, shape_combos[c].op, shape_combos[c].type, reduce_shapes[s]);
    for (size_t k = 0; k < sizeof ladder_load_steps / sizeof ladder_load_steps[0]; k++)
        for (int lo = PTXKIT_LOAD_CA; lo < PTXKIT_LOAD_OP_COUNT; lo++) {
            int step = ladder_load_steps[k];
            compile_jobs_add(&jobs, step, PTXKIT_REDUCE_SUM, PTXKIT_INT32, (launch_options){.load_op = lo});
            if (step != 9) compile_jobs_add(&jobs, step, PTXKIT_REDUCE_SUM, PTXKIT_FLOAT64, (launch_options){.load_op = lo});
        }

    assert_int_equal(compile_jobs_run(ctx, &jobs, prepare_job), 0);
}

/* ---- ptxkit_reduce ------------------------------------------------------ */

static void test_reduce_all_combos(void **state) {
    (void)state;
    int failures = 0;
    for (int passes = REDUCE_PASSES_AUTO; passes <= REDUCE_PASSES_TWO; passes++)
        for (int op = 0; op < PTXKIT_REDUCE_OP_COUNT; op++)
            for (int type = 0; type < PTXKIT_DTYPE_COUNT; type++) {
                if (!reduce_supported(op, type)) continue;
                variant v = {.kind = RUN_REDUCE, .passes = (reduce_passes)passes};
                failures += check_variant(&v, op, type);
            }
    assert_int_equal(failures, 0);
}

static void test_reduce_shapes(void **state) {
    (void)state;
    int failures = 0;
    for (size_t c = 0; c < SHAPE_COMBO_COUNT; c++)
        for (size_t s = 0; s < SHAPE_COUNT; s++) {
            if (!compile_jobs_shape_applies(&reduce_shapes[s], shape_combos[c].type)) continue;
            variant v = {.kind = RUN_REDUCE, .options = reduce_shapes[s]};
            failures += check_variant(&v, shape_combos[c].op, shape_combos[c].type);
            v.passes = REDUCE_PASSES_TWO;
            failures += check_variant(&v, shape_combos[c].op, shape_combos[c].type);
        }
    assert_int_equal(failures, 0);
}

static void test_reduce_ptx_path(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    launch_options probe = {.path = PTXKIT_PATH_PTX};
    ptxkit_status st = reduce_prepare(ctx, PTXKIT_REDUCE_SUM, PTXKIT_INT32, &probe);
    if (st == PTXKIT_ERROR_NOT_FOUND) {
        printf("skipped: %s (regenerate the PTX with ninja regenerate-ptx)\n", ptxkit_last_error());
        skip();
    }
    assert_ok(ctx, st);
    int failures = 0;
    for (int lo = PTXKIT_LOAD_DEFAULT; lo < PTXKIT_LOAD_OP_COUNT; lo++)
        for (int op = 0; op < PTXKIT_REDUCE_OP_COUNT; op++)
            for (int type = 0; type < PTXKIT_DTYPE_COUNT; type++) {
                if (!reduce_supported(op, type)) continue;
                variant v = {.kind = RUN_REDUCE, .options = {.path = PTXKIT_PATH_PTX, .load_op = lo}};
                failures += check_variant(&v, op, type);
            }
    assert_int_equal(failures, 0);
    /* The PTX is built for 1024 threads, 16-byte loads, 4 in flight. */
    launch_options other = {.path = PTXKIT_PATH_PTX, .block_size = 128};
    assert_status(PTXKIT_ERROR_UNSUPPORTED, reduce_prepare(ctx, PTXKIT_REDUCE_SUM, PTXKIT_INT32, &other));
    other = (launch_options){.path = PTXKIT_PATH_PTX, .items_per_thread = 8};
    assert_status(PTXKIT_ERROR_UNSUPPORTED, reduce_prepare(ctx, PTXKIT_REDUCE_SUM, PTXKIT_INT32, &other));
}

/* More streams than scratch slots reduce at once: a slot handed to another
 * stream is ordered after its last use, so every result is right. */
static void test_reduce_streams(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    enum { STREAMS = STREAM_COUNT };
    ptxkit_stream *streams[STREAMS];
    for (int s = 0; s < STREAMS; s++)
        assert_ok(ctx, ptxkit_stream_create(ctx, PTXKIT_STREAM_NON_BLOCKING, 0, &streams[s]));
    static const ptxkit_dtype types[] = {PTXKIT_INT32, PTXKIT_FLOAT64};
    for (int round = 0; round < 2; round++) {
        ptxkit_dtype type = types[round];
        size_t elem = ptxkit_dtype_size(type);
        assert_ok(ctx, ptxkit_memory_set8_async(ctx, outputs, 0xCD, STREAMS * GROUP_BYTES, NULL));
        assert_ok(ctx, ptxkit_context_synchronize(ctx));
        /* Each stream reduces the largest view four times, then its own. */
        for (int rep = 0; rep < 5; rep++)
            for (int s = 0; s < STREAMS; s++) {
                size_t k = rep < 4 ? 7 /* MAX_N */ : (size_t)s % CASE_COUNT;
                assert_ok(ctx, ptxkit_reduce(ctx, PTXKIT_REDUCE_SUM, type, outputs + (size_t)s * GROUP_BYTES + elem,
                                             inputs[input_class(type)].dev + cases[k].offset * elem, cases[k].n, NULL,
                                             streams[s]));
            }
        for (int s = 0; s < STREAMS; s++)
            assert_ok(ctx, ptxkit_stream_synchronize(ctx, streams[s]));
        unsigned char host[STREAMS * GROUP_BYTES];
        assert_ok(ctx, ptxkit_memory_read(ctx, host, outputs, sizeof host));
        for (int s = 0; s < STREAMS; s++) {
            char why[256];
            if (!result_matches(type, PTXKIT_REDUCE_SUM, host + s * GROUP_BYTES + elem,
                                &refs[PTXKIT_REDUCE_SUM][type][(size_t)s % CASE_COUNT], why, sizeof why))
                fail_msg("stream %d, %s: %s", s, ptxkit_dtype_name(type), why);
        }
    }
    /* Streams destroyed with reductions still in flight hand their slots
     * over too: each short-lived stream reduces the largest view, then its
     * own, and is destroyed at once. */
    ptxkit_dtype type = PTXKIT_INT32;
    size_t elem = ptxkit_dtype_size(type);
    assert_ok(ctx, ptxkit_memory_set8_async(ctx, outputs, 0xCD, STREAMS * GROUP_BYTES, NULL));
    assert_ok(ctx, ptxkit_context_synchronize(ctx));
    for (int s = 0; s < STREAMS; s++) {
        ptxkit_stream *brief;
        assert_ok(ctx, ptxkit_stream_create(ctx, PTXKIT_STREAM_NON_BLOCKING, 0, &brief));
        size_t mine = (size_t)s % CASE_COUNT;
        ptxkit_dptr out = outputs + (size_t)s * GROUP_BYTES + elem;
        assert_ok(ctx, ptxkit_reduce(ctx, PTXKIT_REDUCE_SUM, type, out,
                                     inputs[input_class(type)].dev + cases[7].offset * elem, cases[7].n, NULL, brief));
        assert_ok(ctx,
                  ptxkit_reduce(ctx, PTXKIT_REDUCE_SUM, type, out,
                                inputs[input_class(type)].dev + cases[mine].offset * elem, cases[mine].n, NULL, brief));
        ptxkit_stream_destroy(brief);
        /* a long-lived stream takes a slot too, in between */
        assert_ok(ctx,
                  ptxkit_reduce(ctx, PTXKIT_REDUCE_SUM, type, outputs + (size_t)((s + 1) % STREAMS) * GROUP_BYTES,
                                inputs[input_class(type)].dev + cases[7].offset * elem, cases[7].n, NULL, streams[s]));
    }
    assert_ok(ctx, ptxkit_context_synchronize(ctx));
    unsigned char host[STREAMS * GROUP_BYTES];
    assert_ok(ctx, ptxkit_memory_read(ctx, host, outputs, sizeof host));
    for (int s = 0; s < STREAMS; s++) {
        char why[256];
        if (!result_matches(type, PTXKIT_REDUCE_SUM, host + s * GROUP_BYTES + elem,
                            &refs[PTXKIT_REDUCE_SUM][type][(size_t)s % CASE_COUNT], why, sizeof why))
            fail_msg("destroyed stream %d: %s", s, why);
        if (!result_matches(type, PTXKIT_REDUCE_SUM, host + s * GROUP_BYTES, &refs[PTXKIT_REDUCE_SUM][type][7], why,
                            sizeof why))
            fail_msg("stream %d beside destroyed ones: %s", s, why);
    }
    for (int s = 0; s < STREAMS; s++)
        ptxkit_stream_destroy(streams[s]);
}

/* The last block resets the ticket counter: hundreds of launches in a row
 * on one stream, into separate outputs, all right. */
static void test_reduce_back_to_back(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    enum { RUNS = 300 };
    ptxkit_dptr outs;
    assert_ok(ctx, ptxkit_memory_alloc(ctx, RUNS * 8, &outs));
    const input *in = &inputs[input_class(PTXKIT_UINT32)];
    for (int i = 0; i < RUNS; i++) {
        size_t k = 4 + (size_t)i % 7; /* cases 4..10: 1000 elements and more */
        assert_ok(ctx, ptxkit_reduce(ctx, PTXKIT_REDUCE_XOR, PTXKIT_UINT32, outs + (size_t)i * 8,
                                     in->dev + cases[k].offset * 4, cases[k].n, NULL, NULL));
    }
    uint32_t host[RUNS * 2];
    assert_ok(ctx, ptxkit_memory_read(ctx, host, outs, sizeof host));
    for (int i = 0; i < RUNS; i++) {
        uint32_t want;
        memcpy(&want, refs[PTXKIT_REDUCE_XOR][PTXKIT_UINT32][4 + (size_t)i % 7].bits, 4);
        if (host[2 * i] != want) fail_msg("run %d: got 0x%x, want 0x%x", i, host[2 * i], want);
    }
    ptxkit_memory_free(ctx, outs);
}

static void test_reduce_to_host(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    for (int op = 0; op < PTXKIT_REDUCE_OP_COUNT; op++)
        for (int type = 0; type < PTXKIT_DTYPE_COUNT; type++) {
            if (!reduce_supported(op, type)) continue;
            size_t elem = ptxkit_dtype_size(type);
            for (size_t k = 0; k < CASE_COUNT; k += 3) {
                unsigned char got[8];
                char why[256];
                assert_ok(ctx, ptxkit_reduce_to_host(ctx, op, type, got,
                                                     inputs[input_class(type)].dev + cases[k].offset * elem, cases[k].n,
                                                     NULL));
                if (!result_matches(type, op, got, &refs[op][type][k], why, sizeof why))
                    fail_msg("to_host %s.%s n=%zu: %s", ptxkit_reduce_op_name(op), ptxkit_dtype_name(type), cases[k].n,
                             why);
            }
        }
}

static void test_reduce_arguments(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    ptxkit_dptr in = inputs[0].dev, out = outputs;
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT,
                  ptxkit_reduce(NULL, PTXKIT_REDUCE_SUM, PTXKIT_INT32, out, in, 10, NULL, NULL));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT,
                  ptxkit_reduce(ctx, (ptxkit_reduce_op)99, PTXKIT_INT32, out, in, 10, NULL, NULL));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT,
                  ptxkit_reduce(ctx, PTXKIT_REDUCE_SUM, (ptxkit_dtype)-1, out, in, 10, NULL, NULL));
    assert_status(PTXKIT_ERROR_UNSUPPORTED,
                  ptxkit_reduce(ctx, PTXKIT_REDUCE_MIN, PTXKIT_INT64, out, in, 10, NULL, NULL));
    assert_status(PTXKIT_ERROR_UNSUPPORTED,
                  ptxkit_reduce(ctx, PTXKIT_REDUCE_XOR, PTXKIT_FLOAT32, out, in, 10, NULL, NULL));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT,
                  ptxkit_reduce(ctx, PTXKIT_REDUCE_SUM, PTXKIT_INT32, 0, in, 10, NULL, NULL));
    assert_status(PTXKIT_ERROR_MISALIGNED,
                  ptxkit_reduce(ctx, PTXKIT_REDUCE_SUM, PTXKIT_INT32, out + 2, in, 10, NULL, NULL));
    assert_status(PTXKIT_ERROR_MISALIGNED,
                  ptxkit_reduce(ctx, PTXKIT_REDUCE_SUM, PTXKIT_INT32, out, in + 1, 10, NULL, NULL));
    assert_status(PTXKIT_ERROR_MISALIGNED,
                  ptxkit_reduce(ctx, PTXKIT_REDUCE_SUM, PTXKIT_FLOAT64, out, in + 4, 10, NULL, NULL));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT,
                  ptxkit_reduce(ctx, PTXKIT_REDUCE_SUM, PTXKIT_INT32, out, 0, 10, NULL, NULL));
    assert_status(PTXKIT_ERROR_OVERFLOW,
                  ptxkit_reduce(ctx, PTXKIT_REDUCE_SUM, PTXKIT_INT32, out, in, SIZE_MAX / 2, NULL, NULL));
    launch_options o = {.block_size = 48};
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT,
                  ptxkit_reduce(ctx, PTXKIT_REDUCE_SUM, PTXKIT_INT32, out, in, 10, REDUCE_CONFIG(&o), NULL));
    o = (launch_options){.vector_bytes = 4};
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT,
                  ptxkit_reduce(ctx, PTXKIT_REDUCE_SUM, PTXKIT_FLOAT64, out, in, 10, REDUCE_CONFIG(&o), NULL));
    o = (launch_options){.items_per_thread = 17};
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT,
                  ptxkit_reduce(ctx, PTXKIT_REDUCE_SUM, PTXKIT_INT32, out, in, 10, REDUCE_CONFIG(&o), NULL));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT,
                  reduce_run(ctx, PTXKIT_REDUCE_SUM, PTXKIT_INT32, in, 10, out, NULL, NULL, (reduce_passes)7));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT,
                  ptxkit_reduce_to_host(ctx, PTXKIT_REDUCE_SUM, PTXKIT_INT32, NULL, in, 10, NULL));

    /* n = 0 writes the identity, and needs no input. */
    int32_t got = 5;
    assert_ok(ctx, ptxkit_reduce_to_host(ctx, PTXKIT_REDUCE_MIN, PTXKIT_INT32, &got, 0, 0, NULL));
    assert_int_equal(got, INT32_MAX);
    double dgot = 1;
    assert_ok(ctx, ptxkit_reduce_to_host(ctx, PTXKIT_REDUCE_MAX, PTXKIT_FLOAT64, &dgot, 0, 0, NULL));
    assert_true(isinf(dgot) && dgot < 0);
    uint64_t ugot = 0;
    assert_ok(ctx, ptxkit_reduce_to_host(ctx, PTXKIT_REDUCE_AND, PTXKIT_UINT64, &ugot, 0, 0, NULL));
    assert_true(ugot == ~0ull);

    /* The lab's ladder: steps 1..10, step 9 for 32-bit integers. */
    const ptxkit_dptr scratch = ladder_scratch;
    const size_t scratch_bytes = ladder_scratch_bytes;
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, lab_reduce_ladder_run(ctx, 0, PTXKIT_REDUCE_SUM, PTXKIT_INT32, out, in,
                                                                       10, scratch, scratch_bytes, NULL, NULL));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, lab_reduce_ladder_run(ctx, 11, PTXKIT_REDUCE_SUM, PTXKIT_INT32, out, in,
                                                                       10, scratch, scratch_bytes, NULL, NULL));
    assert_status(PTXKIT_ERROR_UNSUPPORTED, lab_reduce_ladder_run(ctx, 9, PTXKIT_REDUCE_SUM, PTXKIT_FLOAT32, out, in, 10,
                                                                  scratch, scratch_bytes, NULL, NULL));
    assert_status(PTXKIT_ERROR_UNSUPPORTED, lab_reduce_ladder_run(ctx, 9, PTXKIT_REDUCE_SUM, PTXKIT_INT64, out, in, 10,
                                                                  scratch, scratch_bytes, NULL, NULL));
    const lab_ladder_options odd_block = {.block_size = 48};
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, lab_reduce_ladder_run(ctx, 3, PTXKIT_REDUCE_SUM, PTXKIT_INT32, out, in,
                                                                       10, scratch, scratch_bytes, &odd_block, NULL));
    assert_status(PTXKIT_ERROR_MISALIGNED, lab_reduce_ladder_run(ctx, 3, PTXKIT_REDUCE_SUM, PTXKIT_INT32, out, in + 3,
                                                                 10, scratch, scratch_bytes, NULL, NULL));
    /* A ladder run whose scratch is too small is refused, not overrun. */
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, lab_reduce_ladder_run(ctx, 1, PTXKIT_REDUCE_SUM, PTXKIT_INT32, out, in,
                                                                       100000, scratch, 16, NULL, NULL));
    size_t need = 0;
    assert_ok(ctx, lab_reduce_ladder_scratch_bytes(ctx, 1, PTXKIT_REDUCE_SUM, PTXKIT_INT32, 100000, NULL, &need));
    assert_true(need > 16 && need <= scratch_bytes);
}

/* ---- the ladder ---------------------------------------------------------- */

/* Every step x every block size x every operator and type, every case. */
static void test_ladder_all(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    int failures = 0, variants = 0;
    for (int step = 1; step <= LAB_REDUCE_LADDER_STEPS; step++)
        for (int b = 0; b < BLOCK_COUNT; b++)
            for (int op = 0; op < PTXKIT_REDUCE_OP_COUNT; op++)
                for (int type = 0; type < PTXKIT_DTYPE_COUNT; type++) {
                    if (!reduce_supported(op, type)) continue;
                    ptxkit_status st = lab_reduce_ladder_check(ctx, step, op, type);
                    if (st != PTXKIT_SUCCESS) {
                        assert_int_equal(st, PTXKIT_ERROR_UNSUPPORTED);
                        assert_true(step == 9);
                        continue;
                    }
                    variant v = {.kind = RUN_LADDER, .step = step, .options = {.block_size = block_sizes[b]}};
                    failures += check_variant(&v, op, type);
                    variants++;
                }
    printf("ladder: %d variants x %zu cases checked\n", variants, CASE_COUNT);
    assert_int_equal(failures, 0);
}

static void test_ladder_load_ops(void **state) {
    (void)state;
    int failures = 0;
    for (size_t k = 0; k < sizeof ladder_load_steps / sizeof ladder_load_steps[0]; k++)
        for (int lo = PTXKIT_LOAD_CA; lo < PTXKIT_LOAD_OP_COUNT; lo++) {
            variant v = {.kind = RUN_LADDER, .step = ladder_load_steps[k], .options = {.load_op = lo}};
            failures += check_variant(&v, PTXKIT_REDUCE_SUM, PTXKIT_INT32);
            if (v.step != 9) failures += check_variant(&v, PTXKIT_REDUCE_SUM, PTXKIT_FLOAT64);
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
    for (int step = 1; step <= LAB_REDUCE_LADDER_STEPS; step++) {
        variant v = {.kind = RUN_LADDER, .step = step, .options = {.block_size = 128}, .stream = stream};
        failures += check_variant(&v, PTXKIT_REDUCE_MAX, PTXKIT_INT32);
        if (step != 9) failures += check_variant(&v, PTXKIT_REDUCE_SUM, PTXKIT_FLOAT32);
    }
    ptxkit_stream_destroy(stream);
    assert_int_equal(failures, 0);
}

/* ptxkit_reduce_prepare: the call after it on the same stream loads no
 * module (the configuration is one no other test uses, so the prepare is
 * what loaded it: a module more where the JIT path runs it), and finds
 * its scratch there, so that a capture begun right after records it; the
 * replays and a plain call then agree with the CPU's sum. One block of
 * work (no scratch) and many. */
static void test_reduce_prepare(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    assert_ok(ctx, ptxkit_reduce_supported(ctx, PTXKIT_REDUCE_SUM, PTXKIT_UINT32));
    ptxkit_config c = {0};
    const bool jit = ptxkit_jit_available();
    if (jit) {
        ptxkit_config_set(&c, "path", PTXKIT_PATH_JIT);
        ptxkit_config_set(&c, "block_size", 64);
        ptxkit_config_set(&c, "loads_in_flight", 3);
        ptxkit_config_set(&c, "load_op", PTXKIT_LOAD_CV);
    }
    static const size_t sizes[] = {500, (1u << 20) + 7};
    const size_t most = sizes[1];
    uint64_t rng = test_seed() ^ 0x7e7e;
    uint32_t *host = malloc(most * sizeof *host);
    assert_non_null(host);
    test_fill_random(host, most * sizeof *host, &rng);
    ptxkit_dptr in, out;
    assert_ok(ctx, ptxkit_memory_alloc(ctx, most * sizeof *host, &in));
    assert_ok(ctx, ptxkit_memory_alloc(ctx, 64, &out));
    assert_ok(ctx, ptxkit_memory_write(ctx, in, host, most * sizeof *host));
    for (size_t i = 0; i < 2; i++) {
        const size_t n = sizes[i];
        uint32_t want = 0, got;
        for (size_t j = 0; j < n; j++) want += host[j];
        ptxkit_stream *s;
        assert_ok(ctx, ptxkit_stream_create(ctx, PTXKIT_STREAM_NON_BLOCKING, 0, &s));
        size_t before = registry_module_count(ctx);
        assert_ok(ctx, ptxkit_reduce_prepare(ctx, PTXKIT_REDUCE_SUM, PTXKIT_UINT32, n, &c, s));
        size_t loaded = registry_module_count(ctx);
        if (jit && i == 0) assert_true(loaded > before);
        ptxkit_graph *graph = NULL;
        assert_ok(ctx, ptxkit_graph_capture_begin(ctx, s));
        ptxkit_status st = ptxkit_reduce(ctx, PTXKIT_REDUCE_SUM, PTXKIT_UINT32, out, in, n, &c, s);
        assert_ok(ctx, ptxkit_graph_capture_end(ctx, s, &graph));
        assert_ok(ctx, st);
        for (int replay = 0; replay < 2; replay++) {
            assert_ok(ctx, ptxkit_memory_set8_async(ctx, out, 0xCD, 4, s));
            assert_ok(ctx, ptxkit_graph_launch(ctx, graph, s));
            assert_ok(ctx, ptxkit_stream_synchronize(ctx, s));
            assert_ok(ctx, ptxkit_memory_read(ctx, &got, out, sizeof got));
            assert_int_equal(got, want);
        }
        assert_ok(ctx, ptxkit_memory_set8_async(ctx, out, 0xCD, 4, s));
        assert_ok(ctx, ptxkit_reduce(ctx, PTXKIT_REDUCE_SUM, PTXKIT_UINT32, out, in, n, &c, s));
        assert_ok(ctx, ptxkit_stream_synchronize(ctx, s));
        assert_ok(ctx, ptxkit_memory_read(ctx, &got, out, sizeof got));
        assert_int_equal(got, want);
        if (registry_module_count(ctx) != loaded)
            fail_msg("ptxkit_reduce of %zu elements after ptxkit_reduce_prepare loaded a module", n);
        ptxkit_graph_destroy(graph);
        ptxkit_stream_destroy(s);
    }
    /* the call's errors, named after the prepare */
    assert_status(PTXKIT_ERROR_UNSUPPORTED, ptxkit_reduce_prepare(ctx, PTXKIT_REDUCE_AND, PTXKIT_FLOAT32, 16, NULL, NULL));
    assert_non_null(strstr(ptxkit_last_error(), "ptxkit_reduce_prepare"));
    ptxkit_memory_free(ctx, in);
    ptxkit_memory_free(ctx, out);
    free(host);
}

int main(void) {
    test_require_gpu();
    ptxkit_context *ctx = test_gpu();
    /* Partials of the ladder's largest run: steps 1-3 with 32-thread
     * blocks on MAX_N elements leave MAX_N / 32 partials, then 1/32 of that... */
    ladder_scratch_bytes = 2 * (MAX_N / 32 + 64) * 8;
    if (ptxkit_memory_alloc(ctx, ladder_scratch_bytes, &ladder_scratch) != PTXKIT_SUCCESS ||
        ptxkit_memory_alloc(ctx, OUTPUT_GROUPS * GROUP_BYTES, &outputs) != PTXKIT_SUCCESS) {
        printf("cannot allocate: %s\n", ptxkit_last_error());
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_compile_all),         cmocka_unit_test(test_reduce_arguments),
        cmocka_unit_test(test_reduce_all_combos),   cmocka_unit_test(test_reduce_shapes),
        cmocka_unit_test(test_reduce_ptx_path),     cmocka_unit_test(test_reduce_streams),
        cmocka_unit_test(test_reduce_back_to_back), cmocka_unit_test(test_reduce_to_host),
        cmocka_unit_test(test_ladder_all),          cmocka_unit_test(test_ladder_load_ops),
        cmocka_unit_test(test_ladder_stream),        cmocka_unit_test(test_reduce_prepare),
    };
    int failed = cmocka_run_group_tests_name("gpu_reduce", tests, setup_inputs, teardown_inputs);
    ptxkit_memory_free(ctx, ladder_scratch);
    ptxkit_memory_free(ctx, outputs);
    test_gpu_release();
    return failed;
}
