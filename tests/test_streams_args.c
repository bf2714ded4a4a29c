/* The stream, event, host memory and graph calls without a GPU (issue 26):
 * NULL arguments, unknown or misplaced flags, the new statuses and their
 * strings, a driver without the entry points (UNSUPPORTED, never a crash),
 * and the refusal of synchronous calls while the thread captures. */
#include <string.h>

#include "ptxkit_ops.h"
#include "runtime/capture.h"
#include "runtime/objects.h"
#include "test_util.h"

static void statuses(void **state) {
    (void)state;
    assert_int_equal(ptxkit_status_is_error(PTXKIT_SUCCESS), 0);
    assert_int_equal(ptxkit_status_is_error(PTXKIT_NOT_READY), 0);
    assert_int_equal(ptxkit_status_is_error(PTXKIT_ERROR_CAPTURE), 1);
    assert_int_equal(ptxkit_status_is_error(PTXKIT_ERROR_INVALID_ARGUMENT), 1);
    assert_int_equal(ptxkit_status_is_error((ptxkit_status)999), 1);
    assert_non_null(strstr(ptxkit_status_string(PTXKIT_NOT_READY), "not ready"));
    assert_non_null(strstr(ptxkit_status_string(PTXKIT_ERROR_CAPTURE), "capture"));
    /* appended: the earlier values keep their numbers (ABI) */
    assert_int_equal(PTXKIT_NOT_READY, PTXKIT_ERROR_DEVICE_ASSERT + 1);
    assert_int_equal(PTXKIT_ERROR_CAPTURE, PTXKIT_NOT_READY + 1);
}

static void host_fn(void *user) { (void)user; }

static void null_context(void **state) {
    (void)state;
    ptxkit_stream *s = (ptxkit_stream *)1;
    ptxkit_event *e = (ptxkit_event *)1;
    ptxkit_graph *g = (ptxkit_graph *)1;
    void *h = (void *)1;
    int lo, hi;
    size_t n;
    ptxkit_dptr d = 1;
    char buf[16];
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_stream_create(NULL, 0, 0, &s));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_stream_priority_range_get(NULL, &lo, &hi));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_stream_priority_get(NULL, NULL, &lo));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_stream_query(NULL, NULL));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_stream_wait_event(NULL, NULL, e));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_host_func_launch(NULL, NULL, host_fn, NULL));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_event_create(NULL, 0, &e));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_event_query(NULL, e));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_host_alloc(NULL, 16, 0, &h));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_host_register(NULL, buf, sizeof buf, 0));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_host_unregister(NULL, buf));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_host_device_pointer_get(NULL, buf, &d));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_graph_capture_begin(NULL, s));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_graph_capture_end(NULL, s, &g));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_graph_update(NULL, g, s, NULL));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_graph_launch(NULL, g, NULL));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_graph_node_count_get(NULL, g, &n));
    ptxkit_graph_destroy(NULL);
}

static void bad_arguments(void **state) {
    (void)state;
    ptxkit_context *ctx = test_fake_context();
    ptxkit_stream *s = (ptxkit_stream *)1;
    ptxkit_event *e = (ptxkit_event *)1;
    ptxkit_graph *g = (ptxkit_graph *)1;
    void *h = (void *)1;
    ptxkit_dptr d = 1;
    char buf[64];
    size_t n;
    /* unknown flags, out pointers cleared */
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_stream_create(ctx, 0x10, 0, &s));
    assert_null(s);
    assert_non_null(strstr(ptxkit_last_error(), "flags"));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_stream_create(ctx, 0, 0, NULL));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_event_create(ctx, 4, &e));
    assert_null(e);
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_event_create(ctx, 0, NULL));
    /* flags of the other call */
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_host_alloc(ctx, 64, PTXKIT_HOST_READ_ONLY, &h));
    assert_null(h);
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_host_alloc(ctx, 64, 0x100, &h));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_host_alloc(ctx, 0, 0, &h));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_host_alloc(ctx, 64, 0, NULL));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT,
                  ptxkit_host_register(ctx, buf, sizeof buf, PTXKIT_HOST_WRITE_COMBINED));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_host_register(ctx, NULL, sizeof buf, 0));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_host_register(ctx, buf, 0, 0));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_host_unregister(ctx, NULL));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_host_device_pointer_get(ctx, NULL, &d));
    assert_int_equal(d, 1); /* untouched: the NULL was found first */
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_host_device_pointer_get(ctx, buf, NULL));
    /* NULLs */
    int lo = 7;
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_stream_priority_range_get(ctx, NULL, NULL));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_stream_priority_get(ctx, NULL, NULL));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_stream_wait_event(ctx, NULL, NULL));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_host_func_launch(ctx, NULL, NULL, NULL));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_event_query(ctx, NULL));
    /* graphs: the legacy stream is never captured */
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_graph_capture_begin(ctx, NULL));
    assert_non_null(strstr(ptxkit_last_error(), "legacy"));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_graph_capture_end(ctx, s, NULL));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_graph_update(ctx, NULL, s, NULL));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_graph_launch(ctx, NULL, NULL));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_graph_node_count_get(ctx, g, NULL));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_graph_node_count_get(ctx, NULL, &n));
    ptxkit_graph_destroy(NULL);
    (void)lo;
}

/* A driver without the entry points (the fake context has none): each call
 * with good arguments says UNSUPPORTED and names what is missing. */
static void no_driver_entries(void **state) {
    (void)state;
    ptxkit_context *ctx = test_fake_context();
    ptxkit_stream *s = (ptxkit_stream *)1, fake_stream = {0};
    ptxkit_graph *g = (ptxkit_graph *)1;
    void *h = (void *)1;
    int lo, hi, p;
    ptxkit_dptr d = 1;
    char buf[64];
    /* a priority other than the default needs cuStreamCreateWithPriority */
    assert_status(PTXKIT_ERROR_UNSUPPORTED, ptxkit_stream_create(ctx, PTXKIT_STREAM_BLOCKING, -1, &s));
    assert_null(s);
    assert_status(PTXKIT_ERROR_UNSUPPORTED, ptxkit_stream_priority_range_get(ctx, &lo, &hi));
    assert_non_null(strstr(ptxkit_last_error(), "cuCtxGetStreamPriorityRange"));
    assert_status(PTXKIT_ERROR_UNSUPPORTED, ptxkit_stream_priority_get(ctx, NULL, &p));
    assert_status(PTXKIT_ERROR_UNSUPPORTED, ptxkit_stream_query(ctx, NULL));
    assert_status(PTXKIT_ERROR_UNSUPPORTED, ptxkit_host_func_launch(ctx, NULL, host_fn, NULL));
    assert_status(PTXKIT_ERROR_UNSUPPORTED, ptxkit_host_alloc(ctx, 64, PTXKIT_HOST_MAPPED, &h));
    assert_null(h);
    assert_status(PTXKIT_ERROR_UNSUPPORTED, ptxkit_host_register(ctx, buf, sizeof buf, PTXKIT_HOST_MAPPED));
    assert_status(PTXKIT_ERROR_UNSUPPORTED, ptxkit_host_unregister(ctx, buf));
    assert_status(PTXKIT_ERROR_UNSUPPORTED, ptxkit_host_device_pointer_get(ctx, buf, &d));
    assert_int_equal(d, 0);
    assert_status(PTXKIT_ERROR_UNSUPPORTED, ptxkit_graph_capture_begin(ctx, &fake_stream));
    assert_status(PTXKIT_ERROR_UNSUPPORTED, ptxkit_graph_capture_end(ctx, &fake_stream, &g));
    assert_null(g);
}

/* While the thread captures (as after ptxkit_graph_capture_begin), the
 * synchronous calls refuse before reaching the driver (the fake context has
 * none: a call that went on would crash here). */
static void capture_refusals(void **state) {
    (void)state;
    ptxkit_context *ctx = test_fake_context();
    ptxkit_dptr d = 0;
    void *h = NULL;
    char buf[16] = {0};
    uint32_t result;
    capture_thread_begun((CUstream)0x1234);
    assert_status(PTXKIT_ERROR_CAPTURE, ptxkit_memory_alloc(ctx, 64, &d));
    assert_non_null(strstr(ptxkit_last_error(), "ptxkit_memory_alloc"));
    assert_status(PTXKIT_ERROR_CAPTURE, ptxkit_memory_free(ctx, 4096));
    assert_status(PTXKIT_ERROR_CAPTURE, ptxkit_host_alloc(ctx, 64, PTXKIT_HOST_DEFAULT, &h));
    assert_status(PTXKIT_ERROR_CAPTURE, ptxkit_host_free(ctx, buf));
    assert_status(PTXKIT_ERROR_CAPTURE, ptxkit_memory_write(ctx, 4096, buf, sizeof buf));
    assert_status(PTXKIT_ERROR_CAPTURE, ptxkit_memory_read(ctx, buf, 4096, sizeof buf));
    assert_status(PTXKIT_ERROR_CAPTURE, ptxkit_memory_copy(ctx, 4096, 8192, sizeof buf));
    assert_status(PTXKIT_ERROR_CAPTURE, ptxkit_context_synchronize(ctx));
    assert_status(PTXKIT_ERROR_CAPTURE,
                  ptxkit_reduce_to_host(ctx, PTXKIT_REDUCE_SUM, PTXKIT_UINT32, &result, 4096, 100, NULL));
    /* argument errors still come first, and no-ops stay no-ops */
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_memory_alloc(ctx, 0, &d));
    assert_status(PTXKIT_SUCCESS, ptxkit_memory_free(ctx, 0));
    assert_status(PTXKIT_SUCCESS, ptxkit_memory_write(ctx, 4096, buf, 0));
    capture_thread_ended((CUstream)0x1234);
    /* ended more often than begun, or a stream never begun: nothing */
    capture_thread_ended((CUstream)0x1234);
    capture_thread_ended((CUstream)0x5678);
    assert_status(PTXKIT_SUCCESS, capture_thread_refuse(ctx, "x"));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(statuses),          cmocka_unit_test(null_context),
        cmocka_unit_test(bad_arguments),     cmocka_unit_test(no_driver_entries),
        cmocka_unit_test(capture_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
