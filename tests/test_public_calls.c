/* The public calls the ptxkit command reaches the library through (issue
 * 14): their argument checks, and what they answer without a GPU; and the
 * argument checks of its experimental-tier ones (PTXKIT_EXPERIMENTAL). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "copy/copy_defaults.h"
#include "gemm/gemm.h"
#include "reduce/reduce.h"
#include "scan/scan.h"
#include "ptxkit.h"
#include "ptxkit_ops.h"
#include "ptxkit_tune.h"
#include "runtime/compile.h"
#include "runtime/context.h"
#include "runtime/launch.h"
#include "runtime/objects.h"
#include "test_util.h"

/* One shape for "supported?": SUCCESS, UNSUPPORTED with the reason, or
 * INVALID_ARGUMENT out of range; a context (here a fake one: no GPU) and
 * NULL answer alike, as no answer depends on the GPU. */
static void supported_combinations(void **state) {
    (void)state;
    ptxkit_context *fake = test_fake_context();
    ptxkit_context *ctxs[2] = {NULL, fake};
    for (int c = 0; c < 2; c++) {
        ptxkit_context *ctx = ctxs[c];
        assert_status(PTXKIT_SUCCESS, ptxkit_reduce_supported(ctx, PTXKIT_REDUCE_SUM, PTXKIT_INT32));
        assert_status(PTXKIT_SUCCESS, ptxkit_reduce_supported(ctx, PTXKIT_REDUCE_MAX, PTXKIT_FLOAT64));
        assert_status(PTXKIT_SUCCESS, ptxkit_reduce_supported(ctx, PTXKIT_REDUCE_XOR, PTXKIT_UINT64));
        assert_status(PTXKIT_ERROR_UNSUPPORTED, ptxkit_reduce_supported(ctx, PTXKIT_REDUCE_AND, PTXKIT_FLOAT32));
        assert_non_null(strstr(ptxkit_last_error(), "and of float32"));
        assert_status(PTXKIT_ERROR_UNSUPPORTED, ptxkit_reduce_supported(ctx, PTXKIT_REDUCE_MIN, PTXKIT_INT64));
        assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_reduce_supported(ctx, PTXKIT_REDUCE_OP_COUNT, PTXKIT_INT32));
        assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_reduce_supported(ctx, PTXKIT_REDUCE_SUM, PTXKIT_DTYPE_COUNT));
        assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_reduce_supported(ctx, (ptxkit_reduce_op)-1, PTXKIT_INT32));
        /* scan: both kinds of reduce's combinations */
        for (int kind = 0; kind < PTXKIT_SCAN_KIND_COUNT; kind++)
            for (int op = 0; op < PTXKIT_REDUCE_OP_COUNT; op++)
                for (int t = 0; t < PTXKIT_DTYPE_COUNT; t++)
                    assert_int_equal(ptxkit_scan_supported(ctx, (ptxkit_scan_kind)kind, (ptxkit_reduce_op)op, (ptxkit_dtype)t),
                                     ptxkit_reduce_supported(ctx, (ptxkit_reduce_op)op, (ptxkit_dtype)t));
        assert_status(PTXKIT_ERROR_INVALID_ARGUMENT,
                      ptxkit_scan_supported(ctx, PTXKIT_SCAN_INCLUSIVE, PTXKIT_REDUCE_SUM, PTXKIT_DTYPE_COUNT));
        assert_status(PTXKIT_ERROR_INVALID_ARGUMENT,
                      ptxkit_scan_supported(ctx, PTXKIT_SCAN_KIND_COUNT, PTXKIT_REDUCE_SUM, PTXKIT_INT32));
        assert_non_null(strstr(ptxkit_last_error(), "ptxkit_scan_supported"));
        /* copy: no selectors, always */
        assert_status(PTXKIT_SUCCESS, ptxkit_copy_supported(ctx));
        /* transpose: every kind of float32 and float64 */
        for (int kind = PTXKIT_TRANSPOSE_PADDED; kind <= PTXKIT_TRANSPOSE_TILED; kind++)
            for (int t = 0; t < PTXKIT_DTYPE_COUNT; t++)
                assert_status(t == PTXKIT_FLOAT32 || t == PTXKIT_FLOAT64 ? PTXKIT_SUCCESS : PTXKIT_ERROR_UNSUPPORTED,
                              ptxkit_transpose_supported(ctx, (ptxkit_transpose_kind)kind, (ptxkit_dtype)t));
        assert_status(PTXKIT_ERROR_UNSUPPORTED, ptxkit_transpose_supported(ctx, PTXKIT_TRANSPOSE_NAIVE, PTXKIT_INT32));
        assert_non_null(strstr(ptxkit_last_error(), "int32"));
        assert_status(PTXKIT_ERROR_INVALID_ARGUMENT,
                      ptxkit_transpose_supported(ctx, (ptxkit_transpose_kind)3, PTXKIT_FLOAT32));
        assert_status(PTXKIT_ERROR_INVALID_ARGUMENT,
                      ptxkit_transpose_supported(ctx, (ptxkit_transpose_kind)-1, PTXKIT_FLOAT32));
        assert_status(PTXKIT_ERROR_INVALID_ARGUMENT,
                      ptxkit_transpose_supported(ctx, PTXKIT_TRANSPOSE_PADDED, PTXKIT_DTYPE_COUNT));
        /* gemm: float32 and float64, either transpose of each operand */
        for (int t = 0; t < PTXKIT_DTYPE_COUNT; t++)
            for (int a = 0; a < PTXKIT_GEMM_OP_COUNT; a++)
                for (int b = 0; b < PTXKIT_GEMM_OP_COUNT; b++)
                    assert_status(t == PTXKIT_FLOAT32 || t == PTXKIT_FLOAT64 ? PTXKIT_SUCCESS : PTXKIT_ERROR_UNSUPPORTED,
                                  ptxkit_gemm_supported(ctx, (ptxkit_dtype)t, (ptxkit_gemm_op)a, (ptxkit_gemm_op)b));
        assert_status(PTXKIT_ERROR_UNSUPPORTED, ptxkit_gemm_supported(ctx, PTXKIT_UINT64, PTXKIT_GEMM_N, PTXKIT_GEMM_T));
        assert_non_null(strstr(ptxkit_last_error(), "uint64"));
        assert_status(PTXKIT_ERROR_INVALID_ARGUMENT,
                      ptxkit_gemm_supported(ctx, PTXKIT_DTYPE_COUNT, PTXKIT_GEMM_N, PTXKIT_GEMM_N));
        assert_status(PTXKIT_ERROR_INVALID_ARGUMENT,
                      ptxkit_gemm_supported(ctx, PTXKIT_FLOAT32, PTXKIT_GEMM_OP_COUNT, PTXKIT_GEMM_N));
        assert_status(PTXKIT_ERROR_INVALID_ARGUMENT,
                      ptxkit_gemm_supported(ctx, PTXKIT_FLOAT32, PTXKIT_GEMM_N, (ptxkit_gemm_op)-1));
        assert_non_null(strstr(ptxkit_last_error(), "ptxkit_gemm_supported"));
    }
}

/* A parameter a _config_get filled (fails the test when absent). */
static long long config_value(const ptxkit_config *c, const char *name) {
    long long v = -1;
    assert_status(PTXKIT_SUCCESS, ptxkit_config_get(c, name, &v));
    return v;
}

/* ptxkit_copy_config_get's argument checks, and its answers on the PTX
 * path, which needs neither NVRTC nor the tuning database: the vector
 * width is what dst - src allows within what the configuration asks. */
static void copy_config_questions(void **state) {
    (void)state;
    ptxkit_context *ctx = test_fake_context();
    ptxkit_config out, ptx = {0};
    ptxkit_config_set(&ptx, "path", PTXKIT_PATH_PTX);
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_copy_config_get(NULL, 4096, 8192, 64, &ptx, &out));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_copy_config_get(ctx, 4096, 8192, 64, &ptx, NULL));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_copy_config_get(ctx, 4096, 4100, 64, &ptx, &out)); /* overlap */
    assert_non_null(strstr(ptxkit_last_error(), "ptxkit_copy_config_get"));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_copy_config_get(ctx, 0, 8192, 64, &ptx, &out));
    assert_status(PTXKIT_ERROR_OVERFLOW, ptxkit_copy_config_get(ctx, UINT64_MAX - 8, 8192, 64, &ptx, &out));
    ptxkit_config odd = ptx;
    ptxkit_config_set(&odd, "loads_in_flight", 2); /* reduce's name, not copy's */
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_copy_config_get(ctx, 4096, 8192, 64, &odd, &out));
    assert_non_null(strstr(ptxkit_last_error(), "loads_in_flight"));
    odd = ptx;
    ptxkit_config_set(&odd, "unroll", COPY_DEFAULT_UNROLL * 2); /* the PTX's is fixed */
    assert_status(PTXKIT_ERROR_UNSUPPORTED, ptxkit_copy_config_get(ctx, 4096, 8192, 64, &odd, &out));
    odd = ptx;
    ptxkit_config_set(&odd, "block_size", COPY_DEFAULT_BLOCK / 2);
    assert_status(PTXKIT_ERROR_UNSUPPORTED, ptxkit_copy_config_get(ctx, 4096, 8192, 64, &odd, &out));

    /* dst - src: 16-byte apart, 8, 4, and not even 4 (the funnel shift) */
    const struct { ptxkit_dptr dst, src; int width; } cases[] = {
        {1 << 20, 1 << 24, 16}, {(1 << 20) + 8, 1 << 24, 8}, {(1 << 20) + 4, 1 << 24, 4}, {(1 << 20) + 3, 1 << 24, 4},
        {(1 << 20) + 5, (1 << 24) + 5, 16},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        memset(&out, 0x5a, sizeof out);
        assert_status(PTXKIT_SUCCESS, ptxkit_copy_config_get(ctx, cases[i].dst, cases[i].src, 1 << 16, &ptx, &out));
        assert_int_equal(config_value(&out, "path"), PTXKIT_PATH_PTX);
        assert_int_equal(config_value(&out, "block_size"), COPY_DEFAULT_BLOCK);
        assert_int_equal(config_value(&out, "vector_bytes"), cases[i].width);
        assert_int_equal(config_value(&out, "unroll"), COPY_DEFAULT_UNROLL);
        assert_int_equal(config_value(&out, "blocks_per_sm"), 0);
        assert_int_equal(config_value(&out, "load_op"), PTXKIT_LOAD_DEFAULT);
        assert_int_equal(out.count, 6);
    }
    /* narrower than the pointers allow where the configuration asks so */
    ptxkit_config narrow = ptx;
    ptxkit_config_set(&narrow, "vector_bytes", 8);
    ptxkit_config_set(&narrow, "load_op", PTXKIT_LOAD_CS);
    ptxkit_config_set(&narrow, "blocks_per_sm", 4);
    assert_status(PTXKIT_SUCCESS, ptxkit_copy_config_get(ctx, 1 << 20, 1 << 24, 1 << 16, &narrow, &out));
    assert_int_equal(config_value(&out, "vector_bytes"), 8);
    assert_int_equal(config_value(&out, "load_op"), PTXKIT_LOAD_CS);
    assert_int_equal(config_value(&out, "blocks_per_sm"), 4);
    /* bytes 0: no copy to check the pointers of */
    assert_status(PTXKIT_SUCCESS, ptxkit_copy_config_get(ctx, 0, 0, 0, &ptx, &out));
    assert_int_equal(config_value(&out, "vector_bytes"), 16);
}

/* The prepare companions' checks, which come before any driver call (the
 * context is a fake one): the call's argument and configuration errors. */
static void reduce_scan_prepare_checks(void **state) {
    (void)state;
    ptxkit_context *ctx = test_fake_context();
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_reduce_prepare(NULL, PTXKIT_REDUCE_SUM, PTXKIT_INT32, 1024, NULL, NULL));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT,
                  ptxkit_reduce_prepare(ctx, PTXKIT_REDUCE_OP_COUNT, PTXKIT_INT32, 1024, NULL, NULL));
    assert_non_null(strstr(ptxkit_last_error(), "ptxkit_reduce_prepare"));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_reduce_prepare(ctx, PTXKIT_REDUCE_SUM, PTXKIT_DTYPE_COUNT, 1024, NULL, NULL));
    assert_status(PTXKIT_ERROR_UNSUPPORTED, ptxkit_reduce_prepare(ctx, PTXKIT_REDUCE_AND, PTXKIT_FLOAT64, 1024, NULL, NULL));
    assert_status(PTXKIT_ERROR_OVERFLOW, ptxkit_reduce_prepare(ctx, PTXKIT_REDUCE_SUM, PTXKIT_INT32, SIZE_MAX / 2, NULL, NULL));
    ptxkit_config odd = {0};
    ptxkit_config_set(&odd, "vectors_per_thread", 2); /* scan's name, not reduce's */
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_reduce_prepare(ctx, PTXKIT_REDUCE_SUM, PTXKIT_INT32, 1024, &odd, NULL));
    assert_non_null(strstr(ptxkit_last_error(), "vectors_per_thread"));

    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT,
                  ptxkit_scan_prepare(NULL, PTXKIT_SCAN_INCLUSIVE, PTXKIT_REDUCE_SUM, PTXKIT_INT32, 1024, NULL, NULL));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT,
                  ptxkit_scan_prepare(ctx, PTXKIT_SCAN_KIND_COUNT, PTXKIT_REDUCE_SUM, PTXKIT_INT32, 1024, NULL, NULL));
    assert_non_null(strstr(ptxkit_last_error(), "ptxkit_scan_prepare"));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT,
                  ptxkit_scan_prepare(ctx, PTXKIT_SCAN_EXCLUSIVE, PTXKIT_REDUCE_OP_COUNT, PTXKIT_INT32, 1024, NULL, NULL));
    assert_status(PTXKIT_ERROR_UNSUPPORTED,
                  ptxkit_scan_prepare(ctx, PTXKIT_SCAN_EXCLUSIVE, PTXKIT_REDUCE_XOR, PTXKIT_FLOAT32, 1024, NULL, NULL));
    assert_status(PTXKIT_ERROR_OVERFLOW,
                  ptxkit_scan_prepare(ctx, PTXKIT_SCAN_INCLUSIVE, PTXKIT_REDUCE_SUM, PTXKIT_INT64, SIZE_MAX / 4, NULL, NULL));
    odd = (ptxkit_config){0};
    ptxkit_config_set(&odd, "blocks_per_sm", 2); /* one block per tile: scan has no such name */
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT,
                  ptxkit_scan_prepare(ctx, PTXKIT_SCAN_INCLUSIVE, PTXKIT_REDUCE_SUM, PTXKIT_INT32, 1024, &odd, NULL));
    assert_non_null(strstr(ptxkit_last_error(), "blocks_per_sm"));
}

static void gemm_sweep_prepare_split(void **state) {
    (void)state;
    int count = -1, split = 0;
    ptxkit_config tiles[64];
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_gemm_sweep_tiles(NULL, PTXKIT_FLOAT32, NULL, 0, &count));
    ptxkit_context *ctx = test_fake_context();
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_gemm_sweep_tiles(ctx, PTXKIT_FLOAT32, NULL, 0, NULL));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_gemm_sweep_tiles(ctx, PTXKIT_FLOAT32, NULL, 4, &count));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_gemm_sweep_tiles(ctx, PTXKIT_FLOAT32, tiles, -1, &count));
    assert_status(PTXKIT_ERROR_UNSUPPORTED, ptxkit_gemm_sweep_tiles(ctx, PTXKIT_INT32, tiles, 64, &count));
    for (int t = 0; t < 2; t++) {
        ptxkit_dtype type = t ? PTXKIT_FLOAT64 : PTXKIT_FLOAT32;
        assert_status(PTXKIT_SUCCESS, ptxkit_gemm_sweep_tiles(ctx, type, NULL, 0, &count));
        int internal;
        gemm_sweep_configs(gemm_kind_of(type, &ctx->info, NULL), &internal);
        assert_int_equal(count, internal); /* the whole list, whatever fits */
        assert_true(count > 1 && count <= 64);
        memset(tiles, 0, sizeof tiles);
        assert_status(PTXKIT_SUCCESS, ptxkit_gemm_sweep_tiles(ctx, type, tiles, 1, &count));
        assert_int_equal(count, internal);
        long long bm = 0;
        assert_status(PTXKIT_SUCCESS, ptxkit_config_get(&tiles[0], "bm", &bm));
        assert_true(bm > 0);
        assert_int_equal(tiles[1].count, 0); /* nothing past capacity */
        assert_status(PTXKIT_SUCCESS, ptxkit_gemm_sweep_tiles(ctx, type, tiles, 64, &count));
        for (int i = 0; i < count; i++) {
            gemm_config c;
            assert_status(PTXKIT_SUCCESS, gemm_config_from(ctx, "test", &tiles[i], &c));
            char why[256];
            assert_true(gemm_config_check(gemm_kind_of(type, &ctx->info, NULL), NULL, &c, NULL, why, sizeof why));
        }
    }
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT,
                  ptxkit_gemm_prepare(NULL, PTXKIT_FLOAT32, PTXKIT_GEMM_N, PTXKIT_GEMM_N, 64, 64, 64, NULL, NULL));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT,
                  ptxkit_gemm_prepare(ctx, PTXKIT_FLOAT32, PTXKIT_GEMM_OP_COUNT, PTXKIT_GEMM_N, 64, 64, 64, NULL, NULL));
    assert_status(PTXKIT_ERROR_UNSUPPORTED, ptxkit_gemm_prepare(ctx, PTXKIT_INT32, PTXKIT_GEMM_N, PTXKIT_GEMM_N, 64, 64, 64, NULL, NULL));
    ptxkit_config bad;
    gemm_config_to(&(gemm_config){.bm = 100, .bn = 128, .bk = 8, .tm = 8, .tn = 8, .warps_m = 2, .stages = 2}, &bad);
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT,
                  ptxkit_gemm_prepare(ctx, PTXKIT_FLOAT32, PTXKIT_GEMM_N, PTXKIT_GEMM_T, 64, 64, 64, &bad, NULL));
    /* a name gemm does not read, and a value out of range, name the parameter */
    ptxkit_config odd = tiles[0];
    ptxkit_config_set(&odd, "block_size", 256);
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_gemm_prepare(ctx, PTXKIT_FLOAT32, PTXKIT_GEMM_N, PTXKIT_GEMM_T, 64, 64, 64, &odd, NULL));
    assert_non_null(strstr(ptxkit_last_error(), "block_size"));
    odd = tiles[0];
    ptxkit_config_set(&odd, "split_k", 65);
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_gemm_prepare(ctx, PTXKIT_FLOAT32, PTXKIT_GEMM_N, PTXKIT_GEMM_T, 64, 64, 64, &odd, NULL));
    assert_non_null(strstr(ptxkit_last_error(), "split_k"));

    ptxkit_config t = tiles[0];
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_gemm_split_k_get(NULL, PTXKIT_FLOAT32, &t, 64, 64, 64, &split));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_gemm_split_k_get(ctx, PTXKIT_FLOAT32, NULL, 64, 64, 64, &split));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_gemm_split_k_get(ctx, PTXKIT_FLOAT32, &t, 64, 64, 64, NULL));
    ptxkit_config zero = {0};
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_gemm_split_k_get(ctx, PTXKIT_FLOAT32, &zero, 64, 64, 64, &split));
    /* the split depends on the kernel, so on the type */
    assert_status(PTXKIT_ERROR_UNSUPPORTED, ptxkit_gemm_split_k_get(ctx, PTXKIT_INT32, &t, 64, 64, 64, &split));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_gemm_split_k_get(ctx, PTXKIT_DTYPE_COUNT, &t, 64, 64, 64, &split));
    ptxkit_config_set(&t, "split_k", 3);
    assert_status(PTXKIT_SUCCESS, ptxkit_gemm_split_k_get(ctx, PTXKIT_FLOAT32, &t, 4096, 4096, 4096, &split));
    assert_int_equal(split, 3); /* the tiles' own */
    ptxkit_config_set(&t, "split_k", 0);
    assert_status(PTXKIT_SUCCESS, ptxkit_gemm_split_k_get(ctx, PTXKIT_FLOAT32, &t, 4096, 4096, 4096, &split));
    assert_int_equal(split, 1); /* enough tiles for every SM: no split */
    assert_status(PTXKIT_SUCCESS, ptxkit_gemm_split_k_get(ctx, PTXKIT_FLOAT32, &t, 128, 128, 1 << 20, &split));
    assert_true(split > 1); /* one tile, a long k: sliced */
}

static void family_defines(void **state) {
    (void)state;
    char buf[256];
    const char *name;
    int count = 0;
    bool block = false;
    for (int i = 0; (name = ptxkit_program_family_define_name_get("copy", i)); i++, count++) {
        block |= strcmp(name, "BLOCK_SIZE") == 0;
        assert_status(PTXKIT_SUCCESS, ptxkit_program_family_define_values_get("copy", name, buf, sizeof buf));
        assert_true(strlen(buf) > 0);
    }
    assert_true(count >= 2 && block);
    assert_null(ptxkit_program_family_define_name_get("copy", -1));
    assert_null(ptxkit_program_family_define_name_get("no_such_family", 0));
    assert_null(ptxkit_program_family_define_name_get(NULL, 0));
    assert_status(PTXKIT_SUCCESS, ptxkit_program_family_define_values_get("copy", "BLOCK_SIZE", buf, sizeof buf));
    assert_string_equal(buf, "32, 64, 128, 256, 512, 1024");
    assert_status(PTXKIT_ERROR_NOT_FOUND, ptxkit_program_family_define_values_get("copy", "NO_SUCH_DEFINE", buf, sizeof buf));
    assert_string_equal(buf, "");
    assert_non_null(strstr(ptxkit_last_error(), "NO_SUCH_DEFINE"));
    assert_status(PTXKIT_ERROR_NOT_FOUND, ptxkit_program_family_define_values_get("no_such_family", "BLOCK_SIZE", buf, sizeof buf));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_program_family_define_values_get(NULL, "BLOCK_SIZE", buf, sizeof buf));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_program_family_define_values_get("copy", NULL, buf, sizeof buf));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_program_family_define_values_get("copy", "BLOCK_SIZE", NULL, 8));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_program_family_define_values_get("copy", "BLOCK_SIZE", buf, 0));
    char small[6];
    assert_status(PTXKIT_SUCCESS, ptxkit_program_family_define_values_get("copy", "BLOCK_SIZE", small, sizeof small));
    assert_string_equal(small, "32, 6"); /* cut, terminated */

    /* a family's spec with more defines than it holds: kernel_get refuses
     * it, rather than compile a kernel without the last ones */
    ptxkit_context *ctx = test_fake_context();
    kernel_spec spec = {.family = "copy", .entry = "ptxkit_copy_vec16"};
    define_scratch scratch = {0};
    for (int i = 0; i < PTXKIT_MAX_DEFINES; i++) {
        snprintf(buf, sizeof buf, "D%d", i);
        assert_true(spec_define_int(&spec, &scratch, buf, i));
    }
    assert_false(spec.dropped);
    assert_false(spec_define_int(&spec, &scratch, "ONE_TOO_MANY", 1));
    assert_true(spec.dropped);
    ptxkit_kernel *k = NULL;
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, kernel_get(ctx, &spec, &k));
    assert_non_null(strstr(ptxkit_last_error(), "did not fit"));
    assert_null(k);
}

static void tune_calls(void **state) {
    (void)state;
    size_t sizes[PTXKIT_TUNE_MAX_SIZES + 1] = {1024};
    for (int i = 1; i <= PTXKIT_TUNE_MAX_SIZES; i++) sizes[i] = 1024;
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_tune_sizes_run(NULL, "copy", NULL, sizes, 1, NULL, NULL));
    ptxkit_context *ctx = test_fake_context();
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_tune_sizes_run(ctx, NULL, NULL, sizes, 1, NULL, NULL));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_tune_sizes_run(ctx, "copy", NULL, NULL, 1, NULL, NULL));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_tune_sizes_run(ctx, "copy", NULL, sizes, 0, NULL, NULL));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT,
                  ptxkit_tune_sizes_run(ctx, "copy", NULL, sizes, PTXKIT_TUNE_MAX_SIZES + 1, NULL, NULL));
    sizes[1] = 0;
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_tune_sizes_run(ctx, "copy", NULL, sizes, 2, NULL, NULL));
    assert_non_null(strstr(ptxkit_last_error(), "size 1 is 0"));

    assert_status(PTXKIT_SUCCESS, ptxkit_tune_variant_check("copy", NULL));
    assert_status(PTXKIT_SUCCESS, ptxkit_tune_variant_check("reduce", "sum.float32"));
    assert_status(PTXKIT_SUCCESS, ptxkit_tune_variant_check("gemm", "float64.small_k"));
    assert_status(PTXKIT_SUCCESS, ptxkit_tune_variant_check("gemm", NULL));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_tune_variant_check("gemm", "int8.square"));
    assert_non_null(strstr(ptxkit_last_error(), "gemm variants are"));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_tune_variant_check("reduce", "sum.bogus"));
    assert_non_null(strstr(ptxkit_last_error(), "ptxkit_tune_variant_check: "));
    assert_status(PTXKIT_ERROR_NOT_FOUND, ptxkit_tune_variant_check("no_such_family", NULL));
    assert_non_null(strstr(ptxkit_last_error(), "no_such_family"));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_tune_variant_check(NULL, NULL));
    assert_non_null(strstr(ptxkit_last_error(), "family is NULL"));
    /* every family ptxkit_tune names takes its default variant */
    for (int i = 0; ptxkit_tune_family_name_get(i); i++)
        assert_status(PTXKIT_SUCCESS, ptxkit_tune_variant_check(ptxkit_tune_family_name_get(i), NULL));

    const char *path = "x";
    int loaded = -1, appended = -1, kernels = -1, threads = -1;
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_tune_report_record_get(NULL, &path, &loaded, &appended));
    assert_string_equal(ptxkit_tune_report_record_note_get(NULL), "");
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_tune_report_prepared_get(NULL, &kernels, &threads));
    ptxkit_tune_report *report = NULL;
    assert_status(PTXKIT_SUCCESS, ptxkit_tune_report_create(&report));
    assert_status(PTXKIT_SUCCESS, ptxkit_tune_report_record_get(report, &path, &loaded, &appended));
    assert_string_equal(path, "");
    assert_string_equal(ptxkit_tune_report_record_note_get(report), "");
    assert_int_equal(loaded, 0);
    assert_int_equal(appended, 0);
    assert_status(PTXKIT_SUCCESS, ptxkit_tune_report_record_get(report, NULL, NULL, NULL));
    assert_status(PTXKIT_SUCCESS, ptxkit_tune_report_prepared_get(report, &kernels, &threads));
    assert_int_equal(kernels, 0);
    assert_int_equal(threads, 0);
    ptxkit_tune_report_destroy(report);
}

static void private_calls(void **state) {
    (void)state;
    ptxkit_context *ctx = test_fake_context();
    /* the GEMM switches are the context's: set on one, another keeps the defaults */
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_gemm_mma_k_set(NULL, 8));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_gemm_cross_prefetch_set(NULL, 0));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_gemm_mma_k_set(ctx, 3));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_gemm_cross_prefetch_set(ctx, 2));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_gemm_tensor_maps_set(NULL, 0));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_gemm_tensor_maps_set(ctx, 2));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_gemm_stream_k_set(NULL, 0));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_gemm_stream_k_set(ctx, 2));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_gemm_stream_k_set(ctx, -2));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_gemm_f32_tensor_cores_set(NULL, 0));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_gemm_f32_tensor_cores_set(ctx, 2));
    assert_non_null(strstr(ptxkit_last_error(), "ptxkit_gemm_f32_tensor_cores_set"));
    assert_int_equal(gemm_switches_get(ctx).mma_k, 0); /* reading creates nothing */
    assert_null(ctx->states[0].ops);
    assert_status(PTXKIT_SUCCESS, ptxkit_gemm_mma_k_set(ctx, 8));
    assert_status(PTXKIT_SUCCESS, ptxkit_gemm_cross_prefetch_set(ctx, 0));
    assert_status(PTXKIT_SUCCESS, ptxkit_gemm_tensor_maps_set(ctx, 0));
    assert_status(PTXKIT_SUCCESS, ptxkit_gemm_stream_k_set(ctx, 0));
    gemm_switches sw = gemm_switches_get(ctx);
    assert_true(sw.mma_k == 8 && sw.cross_prefetch == 0 && sw.tensor_maps == 0 && sw.stream_k == 0 && !sw.f64_simt);
    sw = gemm_switches_get(NULL);
    assert_true(sw.mma_k == 0 && sw.cross_prefetch == -1 && sw.tensor_maps == -1 && sw.stream_k == -1 &&
                !sw.f64_simt);
    assert_status(PTXKIT_SUCCESS, ptxkit_gemm_mma_k_set(ctx, 0)); /* the defaults again */
    assert_status(PTXKIT_SUCCESS, ptxkit_gemm_cross_prefetch_set(ctx, -1));
    assert_status(PTXKIT_SUCCESS, ptxkit_gemm_tensor_maps_set(ctx, -1));
    assert_status(PTXKIT_SUCCESS, ptxkit_gemm_stream_k_set(ctx, 1));
    assert_int_equal(gemm_switches_get(ctx).stream_k, 1);
    assert_status(PTXKIT_SUCCESS, ptxkit_gemm_stream_k_set(ctx, -1));
    sw = gemm_switches_get(ctx);
    assert_true(sw.mma_k == 0 && sw.cross_prefetch == -1 && sw.tensor_maps == -1 && sw.stream_k == -1);
    context_states_release(ctx);
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT,
                  ptxkit_reduce_experiment(ctx, PTXKIT_REDUCE_SUM, PTXKIT_INT32, 4096, 8192, 16, NULL, NULL, 3));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_context_registry_probe(NULL, 1, NULL));
    assert_non_null(ptxkit_tune_blocks_family_get(0));
    assert_null(ptxkit_tune_blocks_family_get(-1));
    ptxkit_tune_blocks_variant v;
    assert_status(PTXKIT_SUCCESS, ptxkit_tune_blocks_variant_get("copy", NULL, &v));
    assert_true(v.copies && v.bench_log2 > 0 && strcmp(v.unit, "bytes") == 0);
    assert_status(PTXKIT_SUCCESS, ptxkit_tune_blocks_variant_get("reduce", NULL, &v));
    assert_false(v.copies);
    assert_status(PTXKIT_ERROR_NOT_FOUND, ptxkit_tune_blocks_variant_get("gemm", NULL, &v));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_tune_blocks_variant_get("reduce", "x.y", &v));
    assert_non_null(strstr(ptxkit_last_error(), "x.y"));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_tune_blocks_variant_get("copy", NULL, NULL));
    size_t bytes = 0;
    assert_status(PTXKIT_SUCCESS, ptxkit_tune_blocks_bytes_get("reduce", "sum.float64", 1000, &bytes));
    assert_int_equal(bytes, 8000);
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_tune_blocks_bytes_get("reduce", NULL, 1000, NULL));
    int blocks[16], items[16], nb, ni;
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_tune_blocks_space_get(NULL, "copy", NULL, blocks, &nb, items, &ni));
    assert_status(PTXKIT_SUCCESS, ptxkit_tune_blocks_space_get(ctx, "copy", NULL, blocks, &nb, items, &ni));
    assert_true(nb > 1 && ni > 1 && blocks[0] == 32);
    ptxkit_tune_blocks_measured m[1];
    double def;
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT,
                  ptxkit_tune_blocks_measure(ctx, "copy", "bytes", 1024, blocks, items, 257, m, &def, NULL, NULL));
}

/* The configuration value type: set adds or replaces, get finds, names
 * are checked, a full configuration refuses a new name but still replaces. */
static void config_values(void **state) {
    (void)state;
    ptxkit_config c = {0};
    long long v = -1;
    assert_status(PTXKIT_ERROR_NOT_FOUND, ptxkit_config_get(&c, "block_size", &v));
    assert_status(PTXKIT_ERROR_NOT_FOUND, ptxkit_config_get(NULL, "block_size", &v));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_config_get(&c, NULL, &v));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_config_get(&c, "block_size", NULL));
    assert_status(PTXKIT_SUCCESS, ptxkit_config_set(&c, "block_size", 128));
    assert_status(PTXKIT_SUCCESS, ptxkit_config_set(&c, "tile", 64));
    assert_status(PTXKIT_SUCCESS, ptxkit_config_set(&c, "block_size", 256));
    assert_int_equal(c.count, 2);
    assert_status(PTXKIT_SUCCESS, ptxkit_config_get(&c, "block_size", &v));
    assert_int_equal(v, 256);
    static const char *const bad[] = {"", "a b", "a=b", "x\n", "0123456789012345678901234567890123"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_config_set(&c, bad[i], 1));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_config_set(NULL, "x", 1));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_config_set(&c, NULL, 1));
    assert_int_equal(c.count, 2);
    ptxkit_config_defines_text text;
    const char *const *d = ptxkit_config_defines_get(&c, &text);
    assert_non_null(d);
    assert_string_equal(d[0], "block_size=256");
    assert_string_equal(d[1], "tile=64");
    assert_null(ptxkit_config_defines_get(NULL, &text));
    ptxkit_config full = {0};
    for (int i = 0; i < PTXKIT_CONFIG_MAX_PARAMS; i++) {
        char name[8];
        snprintf(name, sizeof name, "p%d", i);
        assert_status(PTXKIT_SUCCESS, ptxkit_config_set(&full, name, i));
    }
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_config_set(&full, "one_more", 1));
    assert_status(PTXKIT_SUCCESS, ptxkit_config_set(&full, "p3", -7));
    assert_status(PTXKIT_SUCCESS, ptxkit_config_get(&full, "p3", &v));
    assert_int_equal(v, -7);
}

/* A family's names resolve to the fields its kernels read, and back: each
 * op's own name for items_per_thread, no other op's. */
static void config_names_resolve(void **state) {
    (void)state;
    ptxkit_config c = {0};
    ptxkit_config_set(&c, "path", PTXKIT_PATH_JIT);
    ptxkit_config_set(&c, "load_op", PTXKIT_LOAD_CS);
    ptxkit_config_set(&c, "block_size", 512);
    ptxkit_config_set(&c, "vector_bytes", 8);
    ptxkit_config_set(&c, "loads_in_flight", 6);
    ptxkit_config_set(&c, "blocks_per_sm", 3);
    launch_options o;
    assert_status(PTXKIT_SUCCESS, launch_options_from_config(NULL, "test", &c, reduce_config_names, &o));
    assert_int_equal(o.path, PTXKIT_PATH_JIT);
    assert_int_equal(o.load_op, PTXKIT_LOAD_CS);
    assert_int_equal(o.block_size, 512);
    assert_int_equal(o.vector_bytes, 8);
    assert_int_equal(o.items_per_thread, 6);
    assert_int_equal(o.blocks_per_sm, 3);
    ptxkit_config back;
    launch_options_to_config(&o, reduce_config_names, &back);
    assert_int_equal(back.count, 6);
    long long v = 0;
    assert_status(PTXKIT_SUCCESS, ptxkit_config_get(&back, "loads_in_flight", &v));
    assert_int_equal(v, 6);
    /* scan reads vectors_per_thread and no blocks_per_sm */
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, launch_options_from_config(NULL, "test", &c, scan_config_names, &o));
    assert_non_null(strstr(ptxkit_last_error(), "loads_in_flight"));
    ptxkit_config s = {0};
    ptxkit_config_set(&s, "vectors_per_thread", 7);
    assert_status(PTXKIT_SUCCESS, launch_options_from_config(NULL, "test", &s, scan_config_names, &o));
    assert_int_equal(o.items_per_thread, 7);
    assert_status(PTXKIT_SUCCESS, launch_options_from_config(NULL, "test", NULL, scan_config_names, &o));
    assert_int_equal(o.items_per_thread + o.block_size + o.vector_bytes + (int)o.path, 0); /* NULL: all defaults */
    /* gemm's eight, and only those */
    gemm_config g;
    ptxkit_config t;
    gemm_config_to(&(gemm_config){64, 128, 8, 8, 8, 2, 4, 6}, &t);
    assert_int_equal(t.count, 8);
    assert_status(PTXKIT_SUCCESS, gemm_config_from(NULL, "test", &t, &g));
    assert_true(g.bm == 64 && g.bn == 128 && g.bk == 8 && g.tm == 8 && g.tn == 8 && g.warps_m == 2 && g.stages == 4 &&
                g.split_k == 6);
    ptxkit_config_set(&t, "bm", -1);
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, gemm_config_from(NULL, "test", &t, &g));
    assert_non_null(strstr(ptxkit_last_error(), "bm"));
}

/* The resolved configurations of reduce and scan, without a GPU: given
 * values come back, absent ones are the built-in defaults (the tuning
 * database off), errors are the calls'. */
static void reduce_scan_config_get(void **state) {
    (void)state;
    setenv("PTXKIT_TUNE", "off", 1);
    ptxkit_context *ctx = test_fake_context();
    ptxkit_config in = {0}, out;
    ptxkit_config_set(&in, "path", PTXKIT_PATH_JIT);
    ptxkit_config_set(&in, "block_size", 256);
    ptxkit_config_set(&in, "vector_bytes", 8);
    ptxkit_config_set(&in, "loads_in_flight", 4);
    assert_status(PTXKIT_SUCCESS, ptxkit_reduce_config_get(ctx, PTXKIT_REDUCE_SUM, PTXKIT_INT32, 1 << 20, &in, &out));
    assert_int_equal(out.count, 6);
    long long v = 0;
    assert_status(PTXKIT_SUCCESS, ptxkit_config_get(&out, "path", &v));
    assert_int_equal(v, PTXKIT_PATH_JIT);
    assert_status(PTXKIT_SUCCESS, ptxkit_config_get(&out, "block_size", &v));
    assert_int_equal(v, 256);
    assert_status(PTXKIT_SUCCESS, ptxkit_config_get(&out, "vector_bytes", &v));
    assert_int_equal(v, 8);
    assert_status(PTXKIT_SUCCESS, ptxkit_config_get(&out, "loads_in_flight", &v));
    assert_int_equal(v, 4);
    assert_status(PTXKIT_SUCCESS, ptxkit_config_get(&out, "blocks_per_sm", &v));
    assert_int_equal(v, 0);
    assert_status(PTXKIT_SUCCESS, ptxkit_reduce_config_get(ctx, PTXKIT_REDUCE_MAX, PTXKIT_FLOAT64, 1 << 20, NULL, &out));
    assert_status(PTXKIT_SUCCESS, ptxkit_config_get(&out, "block_size", &v));
    assert_int_equal(v, REDUCE_DEFAULT_BLOCK);
    assert_status(PTXKIT_SUCCESS, ptxkit_config_get(&out, "vector_bytes", &v));
    assert_int_equal(v, REDUCE_DEFAULT_VECTOR);
    /* an input one block covers in one trip gets the narrowest block that
     * covers it on the JIT path, 32 threads at least: up to 1024 float64
     * (a quarter block's four loads in flight, one element wide) with
     * 8-byte loads, 4 a thread; larger ones 16-byte loads, 8 a thread */
    static const struct {
        size_t n;
        long long block, vector;
    } narrow[] = {{1, 32, 8},       {128, 32, 8},     {129, 64, 8},      {256, 64, 8},     {257, 128, 8},
                  {1024, 256, 8},   {1025, 256, 16},  {8191, 1024, 16},  {8192, 1024, 16}, {8193, 1024, 16}};
    ptxkit_config jit = {0};
    ptxkit_config_set(&jit, "path", PTXKIT_PATH_JIT);
    for (size_t i = 0; i < sizeof narrow / sizeof narrow[0]; i++) {
        assert_status(PTXKIT_SUCCESS, ptxkit_reduce_config_get(ctx, PTXKIT_REDUCE_MAX, PTXKIT_FLOAT64, narrow[i].n, &jit, &out));
        assert_status(PTXKIT_SUCCESS, ptxkit_config_get(&out, "block_size", &v));
        assert_int_equal(v, narrow[i].block);
        assert_status(PTXKIT_SUCCESS, ptxkit_config_get(&out, "vector_bytes", &v));
        assert_int_equal(v, narrow[i].vector);
    }
    /* a vector width named keeps its width at any size */
    ptxkit_config jit16 = jit;
    ptxkit_config_set(&jit16, "vector_bytes", 16);
    assert_status(PTXKIT_SUCCESS, ptxkit_reduce_config_get(ctx, PTXKIT_REDUCE_MAX, PTXKIT_FLOAT64, 1024, &jit16, &out));
    assert_status(PTXKIT_SUCCESS, ptxkit_config_get(&out, "vector_bytes", &v));
    assert_int_equal(v, 16);
    assert_status(PTXKIT_SUCCESS, ptxkit_config_get(&out, "block_size", &v));
    assert_int_equal(v, 128);
    /* n 0 names no size (what reduce_prepare asks about): the default block */
    assert_status(PTXKIT_SUCCESS, ptxkit_reduce_config_get(ctx, PTXKIT_REDUCE_MAX, PTXKIT_FLOAT64, 0, &jit, &out));
    assert_status(PTXKIT_SUCCESS, ptxkit_config_get(&out, "block_size", &v));
    assert_int_equal(v, REDUCE_DEFAULT_BLOCK);
    /* the PTX is built for one block size, which every n gets there */
    ptxkit_config ptx = {0};
    ptxkit_config_set(&ptx, "path", PTXKIT_PATH_PTX);
    assert_status(PTXKIT_SUCCESS, ptxkit_reduce_config_get(ctx, PTXKIT_REDUCE_MAX, PTXKIT_FLOAT64, 77, &ptx, &out));
    assert_status(PTXKIT_SUCCESS, ptxkit_config_get(&out, "block_size", &v));
    assert_int_equal(v, REDUCE_DEFAULT_BLOCK);
    assert_status(PTXKIT_ERROR_UNSUPPORTED, ptxkit_reduce_config_get(ctx, PTXKIT_REDUCE_AND, PTXKIT_FLOAT32, 1, NULL, &out));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_reduce_config_get(ctx, PTXKIT_REDUCE_SUM, PTXKIT_INT32, 1, &in, NULL));
    ptxkit_config_set(&in, "loads_in_flight", 17); /* over REDUCE_MAX_UNROLL */
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_reduce_config_get(ctx, PTXKIT_REDUCE_SUM, PTXKIT_INT32, 1, &in, &out));
    assert_non_null(strstr(ptxkit_last_error(), "loads_in_flight"));

    ptxkit_config sin = {0};
    ptxkit_config_set(&sin, "path", PTXKIT_PATH_JIT);
    ptxkit_config_set(&sin, "block_size", 128);
    ptxkit_config_set(&sin, "vectors_per_thread", 3);
    assert_status(PTXKIT_SUCCESS, ptxkit_scan_config_get(ctx, PTXKIT_REDUCE_SUM, PTXKIT_UINT32, 1000, &sin, &out));
    assert_int_equal(out.count, 5);
    assert_status(PTXKIT_SUCCESS, ptxkit_config_get(&out, "block_size", &v));
    assert_int_equal(v, 128);
    assert_status(PTXKIT_SUCCESS, ptxkit_config_get(&out, "vectors_per_thread", &v));
    assert_int_equal(v, 3);
    assert_status(PTXKIT_SUCCESS, ptxkit_config_get(&out, "vector_bytes", &v));
    assert_int_equal(v, SCAN_DEFAULT_VECTOR);
    ptxkit_config_set(&sin, "loads_in_flight", 3); /* reduce's name */
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_scan_config_get(ctx, PTXKIT_REDUCE_SUM, PTXKIT_UINT32, 1, &sin, &out));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT,
                  ptxkit_scan_config_get(ctx, PTXKIT_REDUCE_OP_COUNT, PTXKIT_UINT32, 1, NULL, &out));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_scan_config_get(NULL, PTXKIT_REDUCE_SUM, PTXKIT_UINT32, 1, NULL, &out));
    unsetenv("PTXKIT_TUNE");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(supported_combinations), cmocka_unit_test(copy_config_questions),
        cmocka_unit_test(reduce_scan_prepare_checks), cmocka_unit_test(gemm_sweep_prepare_split),
        cmocka_unit_test(family_defines),         cmocka_unit_test(tune_calls),
        cmocka_unit_test(private_calls),          cmocka_unit_test(config_values), cmocka_unit_test(config_names_resolve), cmocka_unit_test(reduce_scan_config_get),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
