/* Runtime on a real GPU: context, memory, streams, events, kernel registry,
 * the disk cache and the PTX path. */
#include <stdlib.h>
#include <string.h>

#include "ptxkit_ops.h"
#include "ptxkit_tune.h"
#include "runtime/compile.h"
#include "runtime/context.h"
#include "runtime/launch.h"
#include "runtime/objects.h"
#include "test_util.h"

static void device_properties(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    ptxkit_device_info d;
    assert_ok(ctx, ptxkit_device_info_get(ctx, &d));
    assert_true(strlen(d.name) > 0);
    assert_true(d.cc_major >= 5);
    assert_true(d.sm_count > 0);
    assert_true(d.l2_bytes > 0);
    assert_true(d.shared_per_block >= 48 * 1024);
    assert_true(d.shared_per_block_optin >= d.shared_per_block);
    assert_true(d.max_threads_per_block >= 1024);
    assert_true(d.memory_bus_bits > 0 && d.memory_clock_khz > 0 && d.sm_clock_khz > 0);
    assert_true(d.peak_bandwidth_gbs > 100);
    ptxkit_tune_entry key;   /* what a tuning run here stores: this GPU's name and shape */
    assert_ok(ctx, ptxkit_tune_key_get(ctx, &key));
    assert_string_equal(key.device, d.name);
    assert_int_equal(key.cc, d.cc_major * 10 + d.cc_minor);
    assert_int_equal(key.sm_count, d.sm_count);
    assert_string_equal(key.library, PTXKIT_VERSION_STRING);
    assert_string_equal(key.family, "");
    int count;
    assert_ok(NULL, ptxkit_device_count_get(&count));
    assert_true(count >= 1);
    ptxkit_context *none;
    assert_status(PTXKIT_ERROR_NO_DEVICE, ptxkit_context_create(count + 5, &none));
    assert_non_null(strstr(ptxkit_last_error(), "does not exist"));
}

static void memory_round_trip(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    uint64_t rng = test_seed();
    size_t n = 1000003;
    unsigned char *a = malloc(n), *b = malloc(n);
    test_fill_random(a, n, &rng);
    ptxkit_dptr d1, d2;
    assert_ok(ctx, ptxkit_memory_alloc(ctx, n, &d1));
    assert_ok(ctx, ptxkit_memory_alloc(ctx, n, &d2));
    assert_ok(ctx, ptxkit_memory_write(ctx, d1, a, n));
    assert_ok(ctx, ptxkit_memory_copy(ctx, d2, d1, n));
    assert_ok(ctx, ptxkit_memory_read(ctx, b, d2, n));
    assert_memory_equal(a, b, n);
    assert_ok(ctx, ptxkit_memory_set8_async(ctx, d2 + 1, 0x5A, n - 2, NULL));
    assert_ok(ctx, ptxkit_memory_read(ctx, b, d2, n));
    assert_int_equal(b[0], a[0]);
    assert_int_equal(b[1], 0x5A);
    assert_int_equal(b[n - 2], 0x5A);
    assert_int_equal(b[n - 1], a[n - 1]);
    assert_ok(ctx, ptxkit_memory_set32_async(ctx, d2 + 4, 0xDEADBEEF, 10, NULL));
    uint32_t words[12];
    assert_ok(ctx, ptxkit_memory_read(ctx, words, d2, sizeof words));
    assert_int_equal(words[1], 0xDEADBEEF);
    assert_int_equal(words[10], 0xDEADBEEF);
    assert_int_equal(words[11], 0x5A5A5A5A);
    size_t free_bytes, total;
    assert_ok(ctx, ptxkit_memory_info_get(ctx, &free_bytes, &total));
    assert_true(free_bytes > 0 && total >= free_bytes);
    ptxkit_dptr huge;
    assert_status(PTXKIT_ERROR_OUT_OF_MEMORY, ptxkit_memory_alloc(ctx, (size_t)1 << 50, &huge));
    assert_int_equal(huge, 0);
    assert_ok(ctx, ptxkit_memory_free(ctx, d1));
    assert_ok(ctx, ptxkit_memory_free(ctx, d2));
    free(a);
    free(b);
}

static void streams_and_events(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    size_t n = 64 << 20;
    unsigned char *host;
    assert_ok(ctx, ptxkit_host_alloc(ctx, n, PTXKIT_HOST_DEFAULT, (void **)&host));
    uint64_t rng = test_seed() + 1;
    test_fill_random(host, n, &rng);
    ptxkit_stream *s;
    ptxkit_event *e0, *e1;
    ptxkit_dptr d;
    assert_ok(ctx, ptxkit_stream_create(ctx, PTXKIT_STREAM_NON_BLOCKING, 0, &s));
    assert_non_null(ptxkit_stream_handle_get(s));
    assert_ok(ctx, ptxkit_event_create(ctx, PTXKIT_EVENT_DEFAULT, &e0));
    assert_ok(ctx, ptxkit_event_create(ctx, PTXKIT_EVENT_DEFAULT, &e1));
    assert_ok(ctx, ptxkit_memory_alloc(ctx, n, &d));
    assert_ok(ctx, ptxkit_event_record(ctx, e0, s));
    assert_ok(ctx, ptxkit_memory_write_async(ctx, d, host, n, s));
    assert_ok(ctx, ptxkit_memory_set8_async(ctx, d, 0x11, 4096, s));
    assert_ok(ctx, ptxkit_stream_synchronize(ctx, s)); /* the host buffer is in use until then */
    memset(host, 0, n);
    assert_ok(ctx, ptxkit_memory_read_async(ctx, host, d, n, s));
    assert_ok(ctx, ptxkit_event_record(ctx, e1, s));
    assert_ok(ctx, ptxkit_event_synchronize(ctx, e1));
    float ms = -1;
    assert_ok(ctx, ptxkit_event_elapsed_ms_get(ctx, e0, e1, &ms));
    assert_true(ms > 0);
    assert_int_equal(host[0], 0x11);
    assert_int_equal(host[4095], 0x11);
    /* past the memset, the bytes copied up from the host */
    unsigned char *expect = malloc(n);
    uint64_t rng2 = test_seed() + 1;
    test_fill_random(expect, n, &rng2);
    assert_memory_equal(host + 4096, expect + 4096, n - 4096);
    free(expect);
    assert_ok(ctx, ptxkit_stream_synchronize(ctx, s));
    assert_ok(ctx, ptxkit_memory_free(ctx, d));
    ptxkit_event_destroy(e0);
    ptxkit_event_destroy(e1);
    ptxkit_stream_destroy(s);
    assert_ok(ctx, ptxkit_host_free(ctx, host));
}

/* The application's own CUstream, wrapped: ptxkit's work runs on it, and
 * releasing the wrapper leaves it usable and owned by the application. */
static void wrapped_stream(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    ptxkit_stream *w = (ptxkit_stream *)1;
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_stream_wrap(ctx, NULL, &w));
    assert_null(w);
    CUstream raw;
    assert_ok(ctx, context_enter(ctx));
    assert_int_equal(ctx->cu->cuStreamCreate(&raw, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    context_leave(ctx);
    assert_ok(ctx, ptxkit_stream_wrap(ctx, raw, &w));
    assert_ptr_equal(ptxkit_stream_handle_get(w), raw);
    size_t n = 1000003; /* prime */
    uint32_t *host = malloc(n * sizeof *host);
    ptxkit_dptr d, sum;
    assert_ok(ctx, ptxkit_memory_alloc(ctx, n * sizeof *host, &d));
    assert_ok(ctx, ptxkit_memory_alloc(ctx, sizeof(int32_t), &sum));
    assert_ok(ctx, ptxkit_memory_set32_async(ctx, d, 3, n, w));
    /* a reduce gives the wrapped stream scratch memory, handed back on release */
    assert_ok(ctx, ptxkit_reduce(ctx, PTXKIT_REDUCE_SUM, PTXKIT_INT32, sum, d, n, NULL, w));
    memset(host, 0xA5, n * sizeof *host);
    assert_ok(ctx, ptxkit_memory_read_async(ctx, host, d, n * sizeof *host, w));
    assert_ok(ctx, ptxkit_stream_synchronize(ctx, w));
    for (size_t i = 0; i < n; i++)
        if (host[i] != 3) fail_msg("element %zu is %u, expected 3", i, host[i]);
    int32_t total = 0;
    assert_ok(ctx, ptxkit_memory_read(ctx, &total, sum, sizeof total));
    assert_int_equal(total, 3 * (int32_t)n);
    ptxkit_stream_destroy(w);
    /* still the application's: usable, and it destroys it */
    assert_ok(ctx, context_enter(ctx));
    assert_int_equal(ctx->cu->cuMemsetD32Async(d, 7, n, raw), CUDA_SUCCESS);
    assert_int_equal(ctx->cu->cuStreamSynchronize(raw), CUDA_SUCCESS);
    assert_int_equal(ctx->cu->cuStreamDestroy(raw), CUDA_SUCCESS);
    context_leave(ctx);
    /* the reduce state forgot the stream: another stream takes its scratch */
    ptxkit_stream *s;
    assert_ok(ctx, ptxkit_stream_create(ctx, PTXKIT_STREAM_NON_BLOCKING, 0, &s));
    assert_ok(ctx, ptxkit_reduce(ctx, PTXKIT_REDUCE_SUM, PTXKIT_INT32, sum, d, n, NULL, s));
    assert_ok(ctx, ptxkit_stream_synchronize(ctx, s));
    assert_ok(ctx, ptxkit_memory_read(ctx, &total, sum, sizeof total));
    assert_int_equal(total, 7 * (int32_t)n);
    ptxkit_stream_destroy(s);
    assert_ok(ctx, ptxkit_memory_free(ctx, d));
    assert_ok(ctx, ptxkit_memory_free(ctx, sum));
    free(host);
}

static void registry_returns_loaded_kernel(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    kernel_spec spec = {.family = "copy", .entry = "ptxkit_copy_vec16", .defines = {"BLOCK_SIZE=64", "LOAD_OP=2"}, .define_count = 2};
    ptxkit_kernel *f1, *f2, *f3;
    assert_ok(ctx, context_enter(ctx));
    assert_ok(ctx, kernel_get(ctx, &spec, &f1));
    double t0 = now_ms();
    for (int i = 0; i < 1000; i++) assert_ok(ctx, kernel_get(ctx, &spec, &f2));
    double per_hit_us = (now_ms() - t0);
    printf("registry hit: %.3f us per lookup\n", per_hit_us);
    assert_ptr_equal(f1, f2);
    spec.defines[1] = "LOAD_OP=3";
    assert_ok(ctx, kernel_get(ctx, &spec, &f3));
    assert_ptr_not_equal(f1, f3);
    int threads = 0;
    ctx->cu->cuFuncGetAttribute(&threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, (CUfunction)ptxkit_kernel_handle_get(f3));
    assert_int_equal(threads, 64);
    context_leave(ctx);
}

/* enter / leave: the context is current in between, pairs nest, and a
 * leave that does not pair is refused without losing the caller's context. */
static void enter_and_leave(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    CUcontext before = NULL, current = NULL;
    assert_int_equal(ctx->cu->cuCtxGetCurrent(&before), CUDA_SUCCESS);
    assert_ok(ctx, ptxkit_context_enter(ctx));
    assert_ok(ctx, ptxkit_context_enter(ctx));
    assert_int_equal(ctx->cu->cuCtxGetCurrent(&current), CUDA_SUCCESS);
    assert_ptr_equal(current, ctx->cu_context);
    assert_ok(ctx, ptxkit_context_leave(ctx));
    assert_int_equal(ctx->cu->cuCtxGetCurrent(&current), CUDA_SUCCESS);
    assert_ptr_equal(current, ctx->cu_context);
    assert_ok(ctx, ptxkit_context_leave(ctx));
    assert_int_equal(ctx->cu->cuCtxGetCurrent(&current), CUDA_SUCCESS);
    assert_ptr_equal(current, before);
    if (before == NULL) assert_int_not_equal(ptxkit_context_leave(ctx), PTXKIT_SUCCESS);
}

static void attach_to_callers_context(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    ptxkit_context *attached;
    assert_ok(NULL, ptxkit_context_attach(ctx->cu_context, &attached));
    ptxkit_device_info a, b;
    ptxkit_device_info_get(ctx, &a);
    ptxkit_device_info_get(attached, &b);
    assert_string_equal(a.name, b.name);
    assert_int_equal(a.ordinal, b.ordinal);
    /* memory from one is usable through the other: same CUDA context */
    ptxkit_dptr d;
    uint32_t v = 0x12345678, r = 0;
    assert_ok(ctx, ptxkit_memory_alloc(ctx, 4, &d));
    assert_ok(attached, ptxkit_memory_write(attached, d, &v, 4));
    assert_ok(ctx, ptxkit_memory_read(ctx, &r, d, 4));
    assert_int_equal(r, v);
    ptxkit_memory_free(ctx, d);
    ptxkit_context_destroy(attached);
    /* the caller's context survives our close */
    assert_ok(ctx, ptxkit_memory_alloc(ctx, 4, &d));
    ptxkit_memory_free(ctx, d);
}

static void ptx_path_loads_every_operator(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    assert_ok(ctx, context_enter(ctx));
    /* one committed text; each operator (and plain loads) is its own module */
    ptxkit_kernel *f, *seen[PTXKIT_LOAD_OP_COUNT];
    for (int op = 0; op < PTXKIT_LOAD_OP_COUNT; op++) {
        assert_ok(ctx, ptx_kernel_get(ctx, "copy.ptx", (ptxkit_load_op)op, "ptxkit_copy_vec16", &seen[op]));
        for (int k = 0; k < op; k++) assert_true(seen[k] != seen[op]);
        assert_ok(ctx, ptx_kernel_get(ctx, "copy.ptx", (ptxkit_load_op)op, "ptxkit_copy_vec16", &f));
        assert_true(f == seen[op]);
        assert_status(PTXKIT_ERROR_NOT_FOUND, ptx_kernel_get(ctx, "copy.ptx", (ptxkit_load_op)op, "no_such_entry", &f));
    }
    /* every PTX load keeps the driver JIT's wall time and info log, with
     * the kernels it produced */
    const char *log = ptxkit_kernel_jit_log_get(seen[PTXKIT_LOAD_NC]);
    assert_non_null(strstr(log, "copy.ptx with nc loads"));
    assert_non_null(strstr(log, "driver JIT wall time"));
    assert_null(strstr(ptxkit_kernel_jit_log_get(seen[PTXKIT_LOAD_CG]), "with nc loads"));
    assert_non_null(strstr(ptxkit_kernel_jit_log_get(seen[PTXKIT_LOAD_CG]), "with cg loads"));
    assert_string_equal(ptxkit_kernel_jit_log_get(NULL), "");
    assert_status(PTXKIT_ERROR_NOT_FOUND, ptx_kernel_get(ctx, "copy.xx.ptx", PTXKIT_LOAD_CG, "ptxkit_copy_vec16", &f));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT,
                  ptx_kernel_get(ctx, "copy.ptx", (ptxkit_load_op)PTXKIT_LOAD_OP_COUNT, "ptxkit_copy_vec16", &f));
    context_leave(ctx);
    /* explicit block sizes the PTX was not built for are refused, not run wrong */
    ptxkit_dptr a, b;
    assert_ok(ctx, ptxkit_memory_alloc(ctx, 1024, &a));
    assert_ok(ctx, ptxkit_memory_alloc(ctx, 1024, &b));
    launch_options o = {.path = PTXKIT_PATH_PTX, .load_op = PTXKIT_LOAD_CG, .block_size = 128};
    assert_status(PTXKIT_ERROR_UNSUPPORTED, ptxkit_copy(ctx, a, b, 1024, COPY_CONFIG(&o), NULL));
    assert_non_null(strstr(ptxkit_last_error(), "JIT"));
    ptxkit_memory_free(ctx, a);
    ptxkit_memory_free(ctx, b);
}

static void compile_errors_reach_the_caller(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    kernel_spec spec = {.family = "copy", .entry = "ptxkit_copy_vec16", .defines = {"BLOCK_SIZE=64", "LOAD_OP=77"}, .define_count = 2};
    ptxkit_kernel *f;
    assert_ok(ctx, context_enter(ctx));
    assert_status(PTXKIT_ERROR_COMPILE, kernel_get(ctx, &spec, &f));
    context_leave(ctx);
    assert_non_null(strstr(ptxkit_last_error(), "LOAD_OP must be 0..6"));
}

int main(void) {
    test_require_gpu();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(device_properties),          cmocka_unit_test(memory_round_trip),
        cmocka_unit_test(streams_and_events),         cmocka_unit_test(wrapped_stream),
        cmocka_unit_test(registry_returns_loaded_kernel),
        cmocka_unit_test(enter_and_leave),
        cmocka_unit_test(attach_to_callers_context),  cmocka_unit_test(ptx_path_loads_every_operator),
        cmocka_unit_test(compile_errors_reach_the_caller),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    test_gpu_release();
    return failed;
}
