/* The lab's ladders without a GPU: their tables, their argument checks (on
 * a fake context of no compute capability: no redux.sync, no cp.async),
 * and their kernels compiled by NVRTC for sm_80 through the lab's own
 * kernel descriptions (skipped without NVRTC): every step for a few
 * (operator, type) pairs, every pair for the steps that use the most of
 * ladder_ops.cuh, the extreme block sizes and load operators. */
#include <math.h>
#include <string.h>

#include "ptxkit_ops.h"
#include "lab.h"
#include "ladders.h"
#include "test_util.h"

static void tables(void **state) {
    (void)state;
    for (int s = 0; s < LAB_REDUCE_LADDER_STEPS; s++) {
        const lab_reduce_step *r = &lab_reduce_ladder[s];
        assert_non_null(r->name);
        assert_true(r->per_thread == (s < 3 ? 1 : 2));
        assert_int_equal(r->one_wave, s >= 6);
        /* the lecture's figures exist for its steps 1-7 only, and improve */
        assert_int_equal(r->g80_ms > 0, s < 7);
        assert_int_equal(r->g80_gbs > 0, s < 7);
        if (s > 0 && s < 7) assert_true(r->g80_ms < lab_reduce_ladder[s - 1].g80_ms);
    }
    /* 2^22 ints in 8.054 ms: 2.083 GB/s, as the lecture's table has it */
    assert_true(fabs((1 << 22) * 4 / (lab_reduce_ladder[0].g80_ms * 1e-3) / 1e9 - lab_reduce_ladder[0].g80_gbs) < 0.01);
    for (int s = 0; s < LAB_SCAN_LADDER_STEPS; s++) {
        assert_non_null(lab_scan_ladder[s].name);
        assert_int_equal(lab_scan_ladder[s].per_thread, s == 0 ? 1 : 2);
    }
    for (int i = 1; i < LAB_SCAN_SEED_ROWS; i++) {
        assert_true(lab_scan_seed[i].n > lab_scan_seed[i - 1].n);
        double ratio = lab_scan_seed[i].cpu_ms / lab_scan_seed[i].gpu_ms;
        assert_true(fabs(ratio - lab_scan_seed[i].speedup) < 0.01);
    }
    for (int s = 0; s < LAB_GEMM_LADDER_STEPS; s++) {
        const lab_gemm_step *g = &lab_gemm_ladder[s];
        assert_non_null(g->name);
        assert_true(g->bytes_per_fma > 0);
        assert_int_equal(g->entry == NULL, s == LAB_GEMM_LADDER_STEPS - 1);
    }
    assert_true(lab_gemm_ladder[0].bytes_per_fma == 8.0); /* two 4-byte floats per FMA */
    assert_true(lab_gemm_ladder[2].bytes_per_fma == 0.25);
}

static void arguments(void **state) {
    (void)state;
    size_t bytes = 7;
    ptxkit_context *ctx = test_fake_context();
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, lab_reduce_ladder_check(NULL, 1, PTXKIT_REDUCE_SUM, PTXKIT_INT32));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, lab_reduce_ladder_check(ctx, 0, PTXKIT_REDUCE_SUM, PTXKIT_INT32));
    assert_non_null(strstr(ptxkit_last_error(), "no step 0"));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT,
                  lab_reduce_ladder_check(ctx, LAB_REDUCE_LADDER_STEPS + 1, PTXKIT_REDUCE_SUM, PTXKIT_INT32));
    assert_status(PTXKIT_ERROR_UNSUPPORTED, lab_reduce_ladder_check(ctx, 1, PTXKIT_REDUCE_AND, PTXKIT_FLOAT32));
    assert_status(PTXKIT_ERROR_UNSUPPORTED, lab_reduce_ladder_check(ctx, 9, PTXKIT_REDUCE_SUM, PTXKIT_FLOAT32));
    assert_status(PTXKIT_ERROR_UNSUPPORTED, lab_reduce_ladder_check(ctx, 9, PTXKIT_REDUCE_SUM, PTXKIT_INT64));
    /* the fake GPU is no sm_80 */
    assert_status(PTXKIT_ERROR_UNSUPPORTED, lab_reduce_ladder_check(ctx, 9, PTXKIT_REDUCE_SUM, PTXKIT_INT32));
    assert_non_null(strstr(ptxkit_last_error(), "redux.sync"));
    assert_status(PTXKIT_SUCCESS, lab_reduce_ladder_check(ctx, 1, PTXKIT_REDUCE_SUM, PTXKIT_INT32));
    assert_non_null(strstr(ptxkit_last_error(), "redux.sync")); /* a success leaves the last failure's message */
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT,
                  lab_reduce_ladder_scratch_bytes(NULL, 1, PTXKIT_REDUCE_SUM, PTXKIT_INT32, 1024, NULL, &bytes));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT,
                  lab_reduce_ladder_run(NULL, 1, PTXKIT_REDUCE_SUM, PTXKIT_INT32, 4096, 8192, 16, 0, 0, NULL, NULL));
    lab_ladder_options o = {.block_size = 48};
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT,
                  lab_reduce_ladder_run(ctx, 1, PTXKIT_REDUCE_SUM, PTXKIT_INT32, 4096, 8192, 16, 0, 0, &o, NULL));
    assert_non_null(strstr(ptxkit_last_error(), "power of two"));
    o = (lab_ladder_options){.load_op = PTXKIT_LOAD_OP_COUNT};
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT,
                  lab_scan_ladder_scratch_bytes(ctx, 1, PTXKIT_REDUCE_SUM, PTXKIT_INT32, 1024, &o, &bytes));
    assert_int_equal(bytes, 7);

    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, lab_scan_ladder_check(NULL, 1, PTXKIT_REDUCE_SUM, PTXKIT_INT32));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, lab_scan_ladder_check(ctx, 0, PTXKIT_REDUCE_SUM, PTXKIT_INT32));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT,
                  lab_scan_ladder_check(ctx, LAB_SCAN_LADDER_STEPS + 1, PTXKIT_REDUCE_SUM, PTXKIT_INT32));
    assert_status(PTXKIT_ERROR_UNSUPPORTED, lab_scan_ladder_check(ctx, 2, PTXKIT_REDUCE_XOR, PTXKIT_FLOAT64));
    assert_status(PTXKIT_SUCCESS, lab_scan_ladder_check(ctx, 4, PTXKIT_REDUCE_MAX, PTXKIT_FLOAT32));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT,
                  lab_scan_ladder_run(ctx, 1, PTXKIT_SCAN_KIND_COUNT, PTXKIT_REDUCE_SUM, PTXKIT_INT32, 4096, 8192, 16,
                                      0, 0, NULL, NULL));

    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, lab_gemm_ladder_check(NULL, 1));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, lab_gemm_ladder_check(ctx, 0));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, lab_gemm_ladder_check(ctx, LAB_GEMM_LADDER_STEPS + 1));
    assert_status(PTXKIT_ERROR_UNSUPPORTED, lab_gemm_ladder_check(ctx, LAB_GEMM_LADDER_STEPS)); /* cp.async */
    assert_status(PTXKIT_SUCCESS, lab_gemm_ladder_check(ctx, 1));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, lab_gemm_ladder_run(NULL, 1, 1, 1, 1, 256, 512, 768, NULL));
    assert_status(PTXKIT_ERROR_UNSUPPORTED, lab_gemm_ladder_run(ctx, 4, 100, 128, 128, 256, 512, 768, NULL));
    assert_status(PTXKIT_ERROR_MISALIGNED, lab_gemm_ladder_run(ctx, 1, 2, 2, 2, 256, 514, 768, NULL));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, lab_gemm_ladder_run(ctx, 1, 4, 4, 4, 256, 1024, 260, NULL));
    assert_non_null(strstr(ptxkit_last_error(), "C overlaps A"));
}

/* The kernel descriptions: entries, defines, and the same-bits mapping of
 * signed sums onto the unsigned kernels. */
static void kernels(void **state) {
    (void)state;
    lab_ladder_kernel k;
    assert_ok(NULL, lab_reduce_ladder_kernel(7, PTXKIT_REDUCE_SUM, PTXKIT_INT32, NULL, &k));
    assert_string_equal(k.file, "reduce_ladder.cu");
    assert_string_equal(k.entry, "reduce_ladder7");
    assert_int_equal(k.block, LAB_LADDER_DEFAULT_BLOCK);
    bool type_define = false;
    for (int i = 0; i < k.define_count; i++) {
        assert_ptr_equal(k.define_list[i], k.defines[i]);
        type_define |= strcmp(k.defines[i], "LADDER_TYPE=1") == 0; /* uint32: the same bits */
    }
    assert_true(type_define);
    lab_ladder_options o = {.block_size = 1024, .load_op = PTXKIT_LOAD_CG};
    assert_ok(NULL, lab_scan_ladder_kernel(3, PTXKIT_REDUCE_MIN, PTXKIT_INT32, &o, &k));
    assert_string_equal(k.entry, "scan_ladder3");
    assert_int_equal(k.block, 1024);
    bool min_int32 = false;
    for (int i = 0; i < k.define_count; i++) min_int32 |= strcmp(k.defines[i], "LADDER_TYPE=0") == 0;
    assert_true(min_int32); /* min keeps its sign */
    assert_status(PTXKIT_ERROR_UNSUPPORTED, lab_reduce_ladder_kernel(9, PTXKIT_REDUCE_MAX, PTXKIT_FLOAT64, NULL, &k));
    assert_ok(NULL, lab_gemm_ladder_kernel(3, &k));
    assert_string_equal(k.entry, "gemm_ladder_tiled");
    assert_status(PTXKIT_ERROR_NOT_FOUND, lab_gemm_ladder_kernel(LAB_GEMM_LADDER_STEPS, &k));
}

static int compiled, compile_failures;

static void compile(const lab_ladder_kernel *k, const char *extra_entry) {
    ptxkit_program *program;
    assert_ok(NULL, lab_program_create(k->file, &program));
    for (int e = 0; e < (extra_entry ? 2 : 1); e++) {
        const char *entry = e ? extra_entry : k->entry;
        ptxkit_compiled out;
        ptxkit_status st = ptxkit_program_compile(program, entry, k->define_list, k->define_count, 80, 1, &out);
        compiled++;
        if (st != PTXKIT_SUCCESS) {
            if (compile_failures++ < 10) {
                printf("FAIL %s %s:", k->file, entry);
                for (int i = 0; i < k->define_count; i++) printf(" -D%s", k->defines[i]);
                printf(": %s: %s\n", ptxkit_status_string(st), ptxkit_last_error());
            }
            continue;
        }
        /* the entry is in the PTX, under its plain extern "C" name */
        char want[64];
        snprintf(want, sizeof want, ".entry %s(", entry);
        if (!strstr(out.image, want) && compile_failures++ < 10) printf("FAIL %s: no %s in the PTX\n", entry, want);
        ptxkit_program_compiled_free(&out);
    }
    ptxkit_program_destroy(program);
}

static void nvrtc_compiles(void **state) {
    (void)state;
    if (!ptxkit_jit_available()) skip();
    lab_ladder_kernel k;
    /* every step of a few pairs; every pair at the steps that use redux.sync
     * (where it exists), shuffles, the tile reduce and the uniform add */
    static const struct {
        ptxkit_reduce_op op;
        ptxkit_dtype type;
    } few[] = {{PTXKIT_REDUCE_SUM, PTXKIT_INT32}, {PTXKIT_REDUCE_MIN, PTXKIT_FLOAT64}, {PTXKIT_REDUCE_XOR, PTXKIT_INT64}};
    for (size_t i = 0; i < sizeof few / sizeof few[0]; i++) {
        for (int step = 1; step <= LAB_REDUCE_LADDER_STEPS; step++)
            if (lab_reduce_ladder_kernel(step, few[i].op, few[i].type, NULL, &k) == PTXKIT_SUCCESS) compile(&k, NULL);
        for (int step = 1; step <= LAB_SCAN_LADDER_STEPS; step++) {
            assert_ok(NULL, lab_scan_ladder_kernel(step, few[i].op, few[i].type, NULL, &k));
            compile(&k, step == 1 ? "scan_ladder_add" : NULL);
        }
    }
    int pairs = 0;
    for (int op = 0; op < PTXKIT_REDUCE_OP_COUNT; op++)
        for (int type = 0; type < PTXKIT_DTYPE_COUNT; type++) {
            if (ptxkit_reduce_supported(NULL, (ptxkit_reduce_op)op, (ptxkit_dtype)type) != PTXKIT_SUCCESS) {
                assert_status(PTXKIT_ERROR_UNSUPPORTED,
                              lab_reduce_ladder_kernel(1, (ptxkit_reduce_op)op, (ptxkit_dtype)type, NULL, &k));
                continue;
            }
            pairs++;
            int step = lab_reduce_ladder_kernel(9, (ptxkit_reduce_op)op, (ptxkit_dtype)type, NULL, &k) == PTXKIT_SUCCESS
                           ? 9
                           : 10;
            if (step == 10) assert_ok(NULL, lab_reduce_ladder_kernel(10, (ptxkit_reduce_op)op, (ptxkit_dtype)type, NULL, &k));
            compile(&k, NULL);
            assert_ok(NULL, lab_scan_ladder_kernel(4, (ptxkit_reduce_op)op, (ptxkit_dtype)type, NULL, &k));
            compile(&k, "scan_ladder_add");
        }
    assert_true(pairs >= 19);
    /* the extreme blocks and a load operator */
    static const lab_ladder_options shapes[] = {{.block_size = 32}, {.block_size = 1024, .load_op = PTXKIT_LOAD_NC}};
    for (size_t s = 0; s < 2; s++) {
        for (int step = 5; step <= LAB_REDUCE_LADDER_STEPS; step += 5) {
            assert_ok(NULL, lab_reduce_ladder_kernel(step, PTXKIT_REDUCE_MAX, PTXKIT_FLOAT32, &shapes[s], &k));
            compile(&k, NULL);
        }
        assert_ok(NULL, lab_scan_ladder_kernel(3, PTXKIT_REDUCE_SUM, PTXKIT_FLOAT64, &shapes[s], &k));
        compile(&k, NULL);
    }
    for (int step = 1; step < LAB_GEMM_LADDER_STEPS; step++) {
        assert_ok(NULL, lab_gemm_ladder_kernel(step, &k));
        compile(&k, NULL);
    }
    /* step 9 is the one instruction per warp on sm_80 */
    assert_ok(NULL, lab_reduce_ladder_kernel(9, PTXKIT_REDUCE_SUM, PTXKIT_INT32, NULL, &k));
    ptxkit_program *program;
    ptxkit_compiled ptx;
    assert_ok(NULL, lab_program_create(k.file, &program));
    assert_ok(NULL, ptxkit_program_compile(program, k.entry, k.define_list, k.define_count, 80, 1, &ptx));
    assert_non_null(strstr(ptx.image, "redux.sync"));
    ptxkit_program_compiled_free(&ptx);
    ptxkit_program_destroy(program);
    printf("ladders: %d kernels compiled\n", compiled);
    assert_int_equal(compile_failures, 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(tables),
        cmocka_unit_test(arguments),
        cmocka_unit_test(kernels),
        cmocka_unit_test(nvrtc_compiles),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
