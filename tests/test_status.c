/* Argument checking and error reporting that need no GPU. */
#include <stdlib.h>
#include <string.h>

#include "ptxkit_ops.h"
#include "ptxkit_tune.h"
#include "runtime/l2.h"
#include "runtime/objects.h"
#include "runtime/status.h"
#include "test_util.h"

static void status_strings(void **state) {
    (void)state;
    for (int s = 0; s < PTXKIT_STATUS_COUNT; s++) {
        const char *text = ptxkit_status_string((ptxkit_status)s);
        assert_non_null(text);
        assert_true(strlen(text) > 3);
    }
    assert_string_equal(ptxkit_status_string((ptxkit_status)999), "unknown status");
}

static void load_ops(void **state) {
    (void)state;
    const char *names[] = {"default", "ca", "cg", "cs", "lu", "cv", "nc"};
    for (int i = 0; i < PTXKIT_LOAD_OP_COUNT; i++) {
        ptxkit_load_op op;
        assert_string_equal(ptxkit_load_op_name((ptxkit_load_op)i), names[i]);
        assert_status(PTXKIT_SUCCESS, ptxkit_load_op_parse(names[i], &op));
        assert_int_equal(op, i);
    }
    ptxkit_load_op op;
    assert_null(ptxkit_load_op_name(PTXKIT_LOAD_OP_COUNT));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_load_op_parse("lc", &op));
    assert_non_null(strstr(ptxkit_last_error(), "'lc'"));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_load_op_parse(NULL, &op));
}

static void null_contexts(void **state) {
    (void)state;
    ptxkit_dptr p;
    void *h;
    ptxkit_stream *s;
    ptxkit_event *e;
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_context_create(0, NULL));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_context_attach(NULL, NULL));
    /* every _destroy accepts NULL and returns nothing */
    ptxkit_context_destroy(NULL);
    ptxkit_stream_destroy(NULL);
    ptxkit_event_destroy(NULL);
    ptxkit_graph_destroy(NULL);
    ptxkit_program_destroy(NULL);
    ptxkit_tunable_destroy(NULL);
    ptxkit_tune_report_destroy(NULL);
    ptxkit_comm_destroy(NULL);
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_memory_alloc(NULL, 16, &p));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_host_alloc(NULL, 16, PTXKIT_HOST_DEFAULT, &h));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_stream_create(NULL, PTXKIT_STREAM_NON_BLOCKING, 0, &s));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_stream_wrap(NULL, (void *)1, &s));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_event_create(NULL, PTXKIT_EVENT_DEFAULT, &e));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_copy(NULL, 1, 2, 16, NULL, NULL));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_context_synchronize(NULL));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_device_count_get(NULL));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_device_info_get(NULL, NULL));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_context_enter(NULL));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_context_leave(NULL));
    ptxkit_config used;
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT,
                  ptxkit_transpose_config_get(NULL, PTXKIT_TRANSPOSE_PADDED, PTXKIT_FLOAT32, 4, 4, NULL, &used));
    assert_string_not_equal(ptxkit_last_error(), "");
}

static void open_without_gpu_says_why(void **state) {
    (void)state;
    ptxkit_context *ctx = NULL;
    ptxkit_status st = ptxkit_context_create(0, &ctx);
    if (st == PTXKIT_SUCCESS) {
        ptxkit_context_destroy(ctx);
        skip();
    }
    assert_null(ctx);
    assert_true(st == PTXKIT_ERROR_NO_DRIVER || st == PTXKIT_ERROR_NO_DEVICE || st == PTXKIT_ERROR_STUB_DRIVER);
    const char *why = ptxkit_last_error();
    assert_true(strstr(why, "libcuda.so.1") || strstr(why, "cuInit") || strstr(why, "stub"));
    assert_null(strchr(why, '\n'));
}

static void copy_arguments(void **state) {
    (void)state;
    ptxkit_context *ctx = test_fake_context();
    ptxkit_config o = {0};
    /* n = 0 is a no-op even with NULL pointers */
    assert_status(PTXKIT_SUCCESS, ptxkit_copy(ctx, 0, 0, 0, NULL, NULL));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_copy(ctx, 0, 4096, 16, NULL, NULL));
    assert_status(PTXKIT_ERROR_OVERFLOW, ptxkit_copy(ctx, UINT64_MAX - 8, 4096, 64, NULL, NULL));
    assert_status(PTXKIT_ERROR_OVERFLOW, ptxkit_copy(ctx, 4096, UINT64_MAX - 8, 64, NULL, NULL));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_copy(ctx, 4096, 4100, 64, NULL, NULL));
    assert_non_null(strstr(ptxkit_last_error(), "overlap"));
    int bad_blocks[] = {-32, 1, 31, 48, 100, 2048, 4096};
    for (size_t i = 0; i < sizeof bad_blocks / sizeof bad_blocks[0]; i++) {
        assert_status(PTXKIT_SUCCESS, ptxkit_config_set(&o, "block_size", bad_blocks[i]));
        assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_copy(ctx, 8192, 4096, 64, &o, NULL));
        assert_non_null(strstr(ptxkit_last_error(), "block_size"));
    }
    ctx->info.max_threads_per_block = 512;
    ptxkit_config_set(&o, "block_size", 1024);
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_copy(ctx, 8192, 4096, 64, &o, NULL));
    assert_non_null(strstr(ptxkit_last_error(), "limit"));
    /* each out-of-range value is refused naming its parameter */
    static const struct {
        const char *name;
        long long value;
    } bad[] = {{"load_op", PTXKIT_LOAD_OP_COUNT}, {"load_op", -1},     {"vector_bytes", 12}, {"path", 7},
               {"unroll", 65},                    {"unroll", -1},      {"blocks_per_sm", 65}, {"vector_bytes", 1LL << 32}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        o = (ptxkit_config){0};
        ptxkit_config_set(&o, bad[i].name, bad[i].value);
        assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_copy(ctx, 8192, 4096, 64, &o, NULL));
        assert_non_null(strstr(ptxkit_last_error(), bad[i].name));
    }
}

static void memory_arguments(void **state) {
    (void)state;
    ptxkit_context *ctx = test_fake_context();
    ptxkit_dptr p = 1;
    void *h = (void *)1;
    char buf[4];
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_memory_alloc(ctx, 0, &p));
    assert_int_equal(p, 0);
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_memory_alloc(ctx, 16, NULL));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_host_alloc(ctx, 0, PTXKIT_HOST_DEFAULT, &h));
    assert_null(h);
    assert_status(PTXKIT_SUCCESS, ptxkit_memory_write(ctx, 0, NULL, 0));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_memory_write(ctx, 0, buf, 4));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_memory_read(ctx, NULL, 4096, 4));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_memory_copy(ctx, 4096, 0, 4));
    assert_status(PTXKIT_ERROR_OVERFLOW, ptxkit_memory_set32_async(ctx, 4096, 0, SIZE_MAX / 2, NULL));
    assert_status(PTXKIT_ERROR_MISALIGNED, ptxkit_memory_set32_async(ctx, 4097, 0, 4, NULL));
    assert_status(PTXKIT_SUCCESS, ptxkit_memory_set8_async(ctx, 0, 0, 0, NULL));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_memory_set8_async(ctx, 0, 0, 4, NULL));
    ptxkit_stream *s = (ptxkit_stream *)1;
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_stream_wrap(ctx, NULL, &s));
    assert_null(s);
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_stream_wrap(ctx, (void *)1, NULL));
}

/* One channel: a failure with a context and one without land in the same
 * thread-local message; a success leaves it; ptxkit_last_error_set sets
 * and (NULL) clears it. */
static void error_messages_are_the_threads(void **state) {
    (void)state;
    ptxkit_context *ctx = test_fake_context();
    assert_status(PTXKIT_ERROR_IO, record_error(ctx, PTXKIT_ERROR_IO, "context message %d", 1));
    assert_string_equal(ptxkit_last_error(), "context message 1");
    record_error(NULL, PTXKIT_ERROR_IO, "no context");
    assert_string_equal(ptxkit_last_error(), "no context");
    ptxkit_load_op op;
    assert_status(PTXKIT_SUCCESS, ptxkit_load_op_parse("cg", &op));
    assert_string_equal(ptxkit_last_error(), "no context"); /* successes do not clear it */
    assert_status(PTXKIT_ERROR_NOT_FOUND, ptxkit_last_error_set(PTXKIT_ERROR_NOT_FOUND, "mylib_run: %d", 7));
    assert_string_equal(ptxkit_last_error(), "mylib_run: 7");
    /* arguments may point into the message itself */
    ptxkit_last_error_set(PTXKIT_ERROR_IO, "outer: %s", ptxkit_last_error());
    assert_string_equal(ptxkit_last_error(), "outer: mylib_run: 7");
    assert_status(PTXKIT_SUCCESS, ptxkit_last_error_set(PTXKIT_SUCCESS, NULL));
    assert_string_equal(ptxkit_last_error(), "");
    /* A long message is cut, never overflowed. */
    char big[PTXKIT_ERROR_SIZE * 2];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = 0;
    record_error(ctx, PTXKIT_ERROR_COMPILE, "%s", big);
    assert_int_equal(strlen(ptxkit_last_error()), PTXKIT_ERROR_SIZE - 1);
}

/* Fields a later header may add live in `reserved`: set ones are refused,
 * never ignored; so is a configuration parameter the op does not read (a
 * name from another op, or from a later release). */
static void reserved_fields_must_be_zero(void **state) {
    (void)state;
    ptxkit_context *ctx = test_fake_context();
    ptxkit_config o = {0};
    ptxkit_config_set(&o, "loads_in_flight", 4); /* reduce's, not copy's */
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_copy(ctx, 8192, 4096, 64, &o, NULL));
    assert_non_null(strstr(ptxkit_last_error(), "loads_in_flight"));
    assert_non_null(strstr(ptxkit_last_error(), "unknown parameter"));
    o = (ptxkit_config){0};
    ptxkit_config_set(&o, "bm", 64); /* gemm's */
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_reduce(ctx, PTXKIT_REDUCE_SUM, PTXKIT_INT32, 4096, 8192, 16, &o, NULL));
    assert_non_null(strstr(ptxkit_last_error(), "bm"));
    o = (ptxkit_config){0};
    ptxkit_config_set(&o, "block_size", 64);
    ptxkit_config_set(&o, "tile", 64); /* transpose's */
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT,
                  ptxkit_scan(ctx, PTXKIT_SCAN_INCLUSIVE, PTXKIT_REDUCE_SUM, PTXKIT_INT32, 4096, 8192, 16, &o, NULL));
    assert_non_null(strstr(ptxkit_last_error(), "tile"));
    o = (ptxkit_config){0};
    ptxkit_config_set(&o, "blocks_per_sm", 2); /* scan has one block per tile */
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT,
                  ptxkit_scan(ctx, PTXKIT_SCAN_INCLUSIVE, PTXKIT_REDUCE_SUM, PTXKIT_INT32, 4096, 8192, 16, &o, NULL));
    o = (ptxkit_config){.count = PTXKIT_CONFIG_MAX_PARAMS + 1};
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_copy(ctx, 8192, 4096, 64, &o, NULL));
    o = (ptxkit_config){0};
    ptxkit_config_set(&o, "tile", 48);
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT,
                  ptxkit_transpose(ctx, PTXKIT_TRANSPOSE_PADDED, PTXKIT_FLOAT32, 8192, 4096, 4, 4, &o, NULL));
    assert_non_null(strstr(ptxkit_last_error(), "tile"));
    o = (ptxkit_config){0};
    ptxkit_config_set(&o, "BM", 64); /* the database's spelling, not the call's */
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_gemm(ctx, PTXKIT_FLOAT32, PTXKIT_GEMM_N, PTXKIT_GEMM_N, 4, 4, 4, 1.0,
                                                             4096, 4, 8192, 4, 0.0, 16384, 4, &o, NULL));
    assert_non_null(strstr(ptxkit_last_error(), "BM"));
    ptxkit_tune_options t = {0};
    t.reserved[0] = 7;
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_tune(ctx, "copy", NULL, 1024, 1024, &t, NULL));
    assert_non_null(strstr(ptxkit_last_error(), "reserved"));
    ptxkit_module_options m = {0};
    m.reserved[1] = 1;
    ptxkit_module *module;
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_module_load(ctx, ".version 8.0\n", 0, &m, &module));
    assert_non_null(strstr(ptxkit_last_error(), "reserved"));
    ptxkit_tune_report *report = NULL;
    assert_ok(NULL, ptxkit_tune_report_create(&report));
    assert_int_equal(ptxkit_tune_report_size_count_get(report), 0);
    assert_null(ptxkit_tune_report_result_get(report, 0));
    assert_string_equal(ptxkit_tune_report_database_get(report), "");
    ptxkit_tune_report_destroy(report);
}

/* The environment values the library falls back from are reported, not
 * printed; the cache limit reads the same variable. */
static void environment_notes_and_cache_limit(void **state) {
    (void)state;
    char notes[1024];
    unsigned long long limit = 0;
    unsetenv("PTXKIT_TUNE");
    unsetenv("PTXKIT_TUNE_BUDGET");
    unsetenv("PTXKIT_CACHE_MAX_MB");
    assert_status(PTXKIT_SUCCESS, ptxkit_environment_notes_get(notes, sizeof notes));
    assert_string_equal(notes, "");
    assert_status(PTXKIT_SUCCESS, ptxkit_cache_limit_get(&limit));
    assert_true(limit == 512ull << 20);
    setenv("PTXKIT_CACHE_MAX_MB", "7", 1);
    assert_status(PTXKIT_SUCCESS, ptxkit_cache_limit_get(&limit));
    assert_true(limit == 7ull << 20);
    assert_status(PTXKIT_SUCCESS, ptxkit_environment_notes_get(notes, sizeof notes));
    assert_string_equal(notes, "");
    setenv("PTXKIT_CACHE_MAX_MB", "-1", 1);
    setenv("PTXKIT_TUNE_BUDGET", "soon", 1);
    assert_status(PTXKIT_SUCCESS, ptxkit_cache_limit_get(&limit));
    assert_true(limit == 512ull << 20);
    assert_status(PTXKIT_SUCCESS, ptxkit_environment_notes_get(notes, sizeof notes));
    assert_non_null(strstr(notes, "PTXKIT_CACHE_MAX_MB='-1'"));
    assert_non_null(strstr(notes, "PTXKIT_TUNE_BUDGET"));
    assert_non_null(strchr(notes, '\n'));   /* one line each */
    char tiny[8];
    assert_status(PTXKIT_SUCCESS, ptxkit_environment_notes_get(tiny, sizeof tiny));
    assert_true(strlen(tiny) < sizeof tiny);
    unsetenv("PTXKIT_CACHE_MAX_MB");
    unsetenv("PTXKIT_TUNE_BUDGET");
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_environment_notes_get(NULL, 4));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_environment_notes_get(notes, 0));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_cache_limit_get(NULL));
}

static void dtypes(void **state) {
    (void)state;
    assert_int_equal(ptxkit_dtype_size(PTXKIT_INT32), 4);
    assert_int_equal(ptxkit_dtype_size(PTXKIT_FLOAT64), 8);
    assert_int_equal(ptxkit_dtype_size(PTXKIT_DTYPE_COUNT), 0);
    assert_string_equal(ptxkit_dtype_name(PTXKIT_FLOAT32), "float32");
}

/* The L2 residency calls check what they are given before the driver is
 * asked: a fake context with a set-aside and window limit like an H100's. */
static void l2_arguments(void **state) {
    (void)state;
    size_t bytes = 0, max = 0;
    ptxkit_stream *stream = (ptxkit_stream *)&bytes; /* never dereferenced: the checks fail first */
    ptxkit_access_window w = {.base = 0x10000, .bytes = 4096, .hit_ratio = 0.5f,
                              .hit_property = PTXKIT_ACCESS_PERSISTING, .miss_property = PTXKIT_ACCESS_STREAMING};
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_l2_persisting_get(NULL, &bytes, &max));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_l2_persisting_set(NULL, 0, NULL));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_l2_persisting_reset(NULL));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_stream_access_window_set(NULL, stream, &w));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_stream_access_window_get(NULL, stream, &w));

    ptxkit_context *ctx = test_fake_context();
    ctx->arch = 75; /* no set-aside, no windows: UNSUPPORTED, saying why */
    assert_status(PTXKIT_ERROR_UNSUPPORTED, ptxkit_l2_persisting_get(ctx, &bytes, &max));
    assert_non_null(strstr(ptxkit_last_error(), "sm_75"));
    assert_status(PTXKIT_ERROR_UNSUPPORTED, ptxkit_l2_persisting_set(ctx, 1 << 20, NULL));
    assert_status(PTXKIT_ERROR_UNSUPPORTED, ptxkit_l2_persisting_reset(ctx));
    assert_status(PTXKIT_ERROR_UNSUPPORTED, ptxkit_stream_access_window_set(ctx, stream, &w));
    assert_non_null(strstr(ptxkit_last_error(), "access policy windows"));

    ctx->arch = 90;
    ctx->info.persisting_l2_max_bytes = 3 << 20;
    ctx->info.access_window_max_bytes = 128 << 20;
    /* the maximum alone answers without the driver */
    assert_status(PTXKIT_SUCCESS, ptxkit_l2_persisting_get(ctx, NULL, &max));
    assert_int_equal(max, 3 << 20);
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_l2_persisting_set(ctx, (3 << 20) + 1, NULL));
    assert_non_null(strstr(ptxkit_last_error(), "3145728"));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_l2_persisting_set(ctx, PTXKIT_L2_PERSISTING_MAX - 1, NULL));

    /* the default stream takes no attributes */
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_stream_access_window_set(ctx, NULL, &w));
    assert_non_null(strstr(ptxkit_last_error(), "default stream"));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_stream_access_window_get(ctx, NULL, &w));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_stream_access_window_get(ctx, stream, NULL));

    /* every malformed window, each alone */
    ptxkit_access_window bad[9];
    for (int i = 0; i < 9; i++) bad[i] = w;
    bad[0].hit_ratio = -0.01f;
    bad[1].hit_ratio = 1.01f;
    bad[2].hit_ratio = __builtin_nanf("");
    bad[3].miss_property = PTXKIT_ACCESS_PERSISTING;
    bad[4].hit_property = (ptxkit_access_property)3;
    bad[5].base = 0;
    bad[6].bytes = 0;
    bad[7].bytes = (128u << 20) + 1;
    bad[8].reserved[1] = 1;
    for (int i = 0; i < 9; i++) {
        if (ptxkit_stream_access_window_set(ctx, stream, &bad[i]) != PTXKIT_ERROR_INVALID_ARGUMENT)
            fail_msg("malformed window %d was not refused", i);
        assert_true(strlen(ptxkit_last_error()) > 10);
        assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, access_window_check(ctx, &bad[i]));
    }
    assert_status(PTXKIT_SUCCESS, access_window_check(ctx, &w));
    w.bytes = 128u << 20; /* the largest window passes */
    assert_status(PTXKIT_SUCCESS, access_window_check(ctx, &w));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(status_strings),  cmocka_unit_test(load_ops),
        cmocka_unit_test(null_contexts),   cmocka_unit_test(open_without_gpu_says_why),
        cmocka_unit_test(copy_arguments),  cmocka_unit_test(memory_arguments),
        cmocka_unit_test(error_messages_are_the_threads), cmocka_unit_test(dtypes),
        cmocka_unit_test(reserved_fields_must_be_zero), cmocka_unit_test(l2_arguments),
        cmocka_unit_test(environment_notes_and_cache_limit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
