/* The host-array calls' argument checks (ptxkit.h, "host arrays"), which
 * come before any driver call: they run here on a context that never
 * reaches the driver. The GPU behaviour is test_gpu_host's. */
#include <stdint.h>
#include <string.h>

#include "ptxkit_ops.h"
#include "test_util.h"

static void names(void **state) {
    (void)state;
    assert_string_equal(ptxkit_host_path_name(PTXKIT_HOST_PATH_AUTO), "auto");
    assert_string_equal(ptxkit_host_path_name(PTXKIT_HOST_PATH_STAGED), "staged");
    assert_string_equal(ptxkit_host_path_name(PTXKIT_HOST_PATH_REGISTERED), "registered");
    assert_string_equal(ptxkit_host_path_name(PTXKIT_HOST_PATH_MAPPED), "mapped");
    assert_null(ptxkit_host_path_name(PTXKIT_HOST_PATH_COUNT));
    assert_null(ptxkit_host_path_name((ptxkit_host_path)-1));
}

static void bad_arguments(void **state) {
    (void)state;
    ptxkit_context *ctx = test_fake_context();
    int32_t a[64] = {0}, r = 7;
    ptxkit_host_options o = {0};
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_host_reduce(NULL, PTXKIT_REDUCE_SUM, PTXKIT_INT32, &r, a, 4, NULL));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_host_scan(NULL, 0, PTXKIT_REDUCE_SUM, PTXKIT_INT32, a, a, 4, NULL));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_host_transform(NULL, NULL, PTXKIT_INT32, a, a, 4, NULL));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_host_reduce(ctx, PTXKIT_REDUCE_SUM, PTXKIT_INT32, NULL, a, 4, NULL));
    assert_non_null(strstr(ptxkit_last_error(), "result is NULL"));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_host_reduce(ctx, PTXKIT_REDUCE_SUM, PTXKIT_INT32, &r, NULL, 4, NULL));
    assert_non_null(strstr(ptxkit_last_error(), "in is NULL"));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_host_reduce(ctx, PTXKIT_REDUCE_OP_COUNT, PTXKIT_INT32, &r, a, 4, NULL));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_host_reduce(ctx, PTXKIT_REDUCE_SUM, PTXKIT_DTYPE_COUNT, &r, a, 4, NULL));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT,
                  ptxkit_host_scan(ctx, PTXKIT_SCAN_KIND_COUNT, PTXKIT_REDUCE_SUM, PTXKIT_INT32, a + 32, a, 4, NULL));
    assert_status(PTXKIT_ERROR_UNSUPPORTED, ptxkit_host_reduce(ctx, PTXKIT_REDUCE_XOR, PTXKIT_FLOAT64, &r, a, 4, NULL));
    assert_status(PTXKIT_ERROR_UNSUPPORTED,
                  ptxkit_host_scan(ctx, PTXKIT_SCAN_INCLUSIVE, PTXKIT_REDUCE_MIN, PTXKIT_UINT64, a + 32, a, 4, NULL));
    /* sizes that overflow size_t or the address space */
    assert_status(PTXKIT_ERROR_OVERFLOW, ptxkit_host_reduce(ctx, PTXKIT_REDUCE_SUM, PTXKIT_INT64, &r, a, SIZE_MAX / 4, NULL));
    assert_status(PTXKIT_ERROR_OVERFLOW, ptxkit_host_transform(ctx, NULL, PTXKIT_INT32, a,
                                                               (const void *)(uintptr_t)(UINTPTR_MAX - 15), 8, NULL));
    /* out overlapping in, in place included; disjoint neighbours are fine
     * up to the driver (which this context lacks) */
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT,
                  ptxkit_host_scan(ctx, PTXKIT_SCAN_INCLUSIVE, PTXKIT_REDUCE_SUM, PTXKIT_INT32, a + 3, a, 4, NULL));
    assert_non_null(strstr(ptxkit_last_error(), "overlaps"));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_host_transform(ctx, NULL, PTXKIT_INT32, a, a, 4, NULL));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_host_transform(ctx, NULL, PTXKIT_INT32, a, a + 3, 4, NULL));
    assert_status(PTXKIT_ERROR_UNSUPPORTED, ptxkit_host_transform(ctx, NULL, PTXKIT_INT32, a, a + 4, 4, NULL));
    assert_non_null(strstr(ptxkit_last_error(), "driver"));
    /* options */
    o = (ptxkit_host_options){.chunk_bytes = (64 << 10) - 1};
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_host_reduce(ctx, PTXKIT_REDUCE_SUM, PTXKIT_INT32, &r, a, 4, &o));
    o = (ptxkit_host_options){.chunk_bytes = ((size_t)1 << 30) + 1};
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_host_reduce(ctx, PTXKIT_REDUCE_SUM, PTXKIT_INT32, &r, a, 4, &o));
    o = (ptxkit_host_options){.streams = -1};
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_host_reduce(ctx, PTXKIT_REDUCE_SUM, PTXKIT_INT32, &r, a, 4, &o));
    o = (ptxkit_host_options){.streams = PTXKIT_HOST_MAX_STREAMS + 1};
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_host_reduce(ctx, PTXKIT_REDUCE_SUM, PTXKIT_INT32, &r, a, 4, &o));
    o = (ptxkit_host_options){.threads = PTXKIT_HOST_MAX_THREADS + 1};
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_host_reduce(ctx, PTXKIT_REDUCE_SUM, PTXKIT_INT32, &r, a, 4, &o));
    o = (ptxkit_host_options){.path = PTXKIT_HOST_PATH_COUNT};
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_host_reduce(ctx, PTXKIT_REDUCE_SUM, PTXKIT_INT32, &r, a, 4, &o));
    o = (ptxkit_host_options){.reserved = {0, 0, 0, 1}};
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_host_reduce(ctx, PTXKIT_REDUCE_SUM, PTXKIT_INT32, &r, a, 4, &o));
    assert_non_null(strstr(ptxkit_last_error(), "reserved"));
    /* n == 0: scan and transform do nothing, NULL arrays allowed */
    assert_ok(ctx, ptxkit_host_scan(ctx, PTXKIT_SCAN_EXCLUSIVE, PTXKIT_REDUCE_MAX, PTXKIT_FLOAT32, NULL, NULL, 0, NULL));
    assert_ok(ctx, ptxkit_host_transform(ctx, NULL, PTXKIT_UINT64, NULL, NULL, 0, NULL));
    assert_int_equal(r, 7); /* no failed call wrote a result */
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(names), cmocka_unit_test(bad_arguments)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
