/* The one error channel (ptxkit_last_error): every public call that fails
 * leaves the calling thread a message naming the function and the reason,
 * with a context or without. Each call below gets a bad argument; before
 * it, the message is set to a sentinel, so a call that records nothing (or
 * records without naming itself) fails the check. Needs no driver: the
 * context is a fake one, as in test_status.c, and no call here gets far
 * enough to reach the driver. */
#include <stdint.h>
#include <string.h>

#include "ptxkit_ops.h"
#include "ptxkit_tune.h"
#include "runtime/objects.h"
#include "test_util.h"

static const char sentinel[] = "(sentinel: nothing recorded)";
static int failures;

/* Checks the call's status and message; reports every miss, then the test
 * fails once at the end, so one run lists them all. */
static void check(const char *name, const char *what, ptxkit_status st) {
    const char *m = ptxkit_last_error();
    const char *miss = !ptxkit_status_is_error(st) ? "did not fail"
                       : strcmp(m, sentinel) == 0  ? "recorded no message"
                       : !m[0]                     ? "left an empty message"
                       : !strstr(m, name)          ? "left a message not naming it"
                                                   : NULL;
    if (!miss) return;
    print_error("%s: %s (status %s; message '%s')\n", what, miss, ptxkit_status_string(st), m);
    failures++;
}

#define CHECK(name, call)                                             \
    do {                                                              \
        ptxkit_last_error_set(PTXKIT_SUCCESS, "%s", sentinel);        \
        check(name, #call, (call));                                   \
    } while (0)
/* most calls name themselves exactly */
#define CHECK_CALL(fn, ...) CHECK(#fn, fn(__VA_ARGS__))

static void calls_without_a_context(void **state) {
    (void)state;
    failures = 0;
    ptxkit_context *none = NULL;
    ptxkit_dptr p = 0;
    void *h = NULL;
    ptxkit_stream *s = NULL;
    ptxkit_event *e = NULL;
    ptxkit_load_op op;
    size_t sz = 0;
    int i = 0;
    CHECK_CALL(ptxkit_jit_library_get, NULL, 0);
    CHECK_CALL(ptxkit_environment_notes_get, NULL, 0);
    CHECK_CALL(ptxkit_cache_dir_get, NULL, 0);
    CHECK_CALL(ptxkit_cache_limit_get, NULL);
    CHECK_CALL(ptxkit_context_create, 0, NULL);
    CHECK_CALL(ptxkit_context_attach, NULL, NULL);
    CHECK_CALL(ptxkit_device_info_get, none, NULL);
    CHECK_CALL(ptxkit_context_synchronize, none);
    CHECK_CALL(ptxkit_context_enter, none);
    CHECK_CALL(ptxkit_context_leave, none);
    CHECK_CALL(ptxkit_device_count_get, NULL);
    CHECK_CALL(ptxkit_memory_alloc, none, 16, &p);
    CHECK_CALL(ptxkit_host_alloc, none, 16, 0, &h);
    CHECK_CALL(ptxkit_memory_info_get, none, &sz, &sz);
    CHECK_CALL(ptxkit_memory_write, none, 4096, &i, sizeof i);
    CHECK_CALL(ptxkit_memory_read, none, &i, 4096, sizeof i);
    CHECK_CALL(ptxkit_memory_copy, none, 4096, 8192, 4);
    CHECK_CALL(ptxkit_memory_set8_async, none, 4096, 0, 4, NULL);
    CHECK_CALL(ptxkit_memory_set32_async, none, 4096, 0, 4, NULL);
    CHECK_CALL(ptxkit_stream_create, none, 0, 0, &s);
    CHECK_CALL(ptxkit_stream_wrap, none, (void *)1, &s);
    CHECK_CALL(ptxkit_stream_synchronize, none, NULL);
    CHECK_CALL(ptxkit_event_create, none, 0, &e);
    CHECK_CALL(ptxkit_event_record, none, NULL, NULL);
    CHECK_CALL(ptxkit_event_synchronize, none, NULL);
    CHECK_CALL(ptxkit_stream_query, none, NULL);
    CHECK_CALL(ptxkit_graph_capture_begin, none, NULL);
    CHECK_CALL(ptxkit_load_op_parse, NULL, &op);
    CHECK_CALL(ptxkit_copy, none, 4096, 8192, 16, NULL, NULL);
    CHECK_CALL(ptxkit_reduce, none, PTXKIT_REDUCE_SUM, PTXKIT_FLOAT32, 4096, 8192, 16, NULL, NULL);
    CHECK_CALL(ptxkit_reduce_to_host, none, PTXKIT_REDUCE_SUM, PTXKIT_FLOAT32, &i, 8192, 16, NULL);
    CHECK_CALL(ptxkit_scan, none, PTXKIT_SCAN_INCLUSIVE, PTXKIT_REDUCE_SUM, PTXKIT_FLOAT32, 4096, 8192, 16, NULL, NULL);
    CHECK_CALL(ptxkit_transpose, none, PTXKIT_TRANSPOSE_PADDED, PTXKIT_FLOAT32, 4096, 8192, 4, 4, NULL, NULL);
    CHECK_CALL(ptxkit_program_create, "x.cu", NULL, NULL, 0, NULL);
    CHECK_CALL(ptxkit_program_create_from_file, NULL, NULL, 0, NULL);
    CHECK_CALL(ptxkit_program_add_options, NULL, NULL, 1);
    CHECK_CALL(ptxkit_program_add_include_dirs, NULL, NULL, 1);
    CHECK_CALL(ptxkit_program_kernel_get, none, NULL, "k", NULL, 0, NULL);
    CHECK_CALL(ptxkit_program_compile, NULL, "k", NULL, 0, 90, 0, NULL);
    CHECK_CALL(ptxkit_program_builtin_source_get, NULL, NULL, NULL);
    CHECK_CALL(ptxkit_program_family_define_values_get, NULL, NULL, NULL, 0);
    CHECK_CALL(ptxkit_module_load, none, "x", 1, NULL, NULL);
    CHECK_CALL(ptxkit_module_kernel_get, NULL, "k", NULL);
    CHECK_CALL(ptxkit_module_rewrite_counts_get, NULL, &i, &i);
    CHECK_CALL(ptxkit_module_variable_get, NULL, "v", &p, &sz);
    CHECK_CALL(ptxkit_module_variable_write, NULL, "v", 0, &i, sizeof i);
    CHECK_CALL(ptxkit_module_variable_read, NULL, "v", 0, &i, sizeof i);
    CHECK_CALL(ptxkit_kernel_module_get, NULL, NULL);
    CHECK_CALL(ptxkit_kernel_launch, NULL, (ptxkit_dim3){1, 1, 1}, (ptxkit_dim3){32, 1, 1}, 0, NULL, NULL);
    CHECK_CALL(ptxkit_kernel_attributes_get, NULL, NULL);
    CHECK_CALL(ptxkit_kernel_occupancy_get, NULL, 32, 0, &i);
    CHECK_CALL(ptxkit_kernel_grid_size_get, NULL, 32, 0, 0, NULL);
    CHECK_CALL(ptxkit_kernel_params_get, NULL, &sz, NULL, NULL, 0);
    CHECK_CALL(ptxkit_kernel_max_dynamic_shared_set, NULL, 1024);
    CHECK_CALL(ptxkit_l2_persisting_get, none, &sz, &sz);
    CHECK_CALL(ptxkit_l2_persisting_reset, none);
    CHECK_CALL(ptxkit_tune_report_create, NULL);
    CHECK_CALL(ptxkit_tune_report_record_get, NULL, NULL, NULL, NULL);
    CHECK_CALL(ptxkit_tune_report_prepared_get, NULL, NULL, NULL);
    CHECK_CALL(ptxkit_tune, none, "copy", NULL, 1024, 1024, NULL, NULL);
    CHECK_CALL(ptxkit_tune_sizes_run, none, "copy", NULL, &sz, 1, NULL, NULL);
    CHECK_CALL(ptxkit_tune_variant_check, "no_such_family", NULL);
    CHECK_CALL(ptxkit_tune_db_path_get, NULL, 0);
    CHECK_CALL(ptxkit_tune_db_read, NULL, NULL, NULL);
    CHECK_CALL(ptxkit_tune_db_merge, NULL, NULL, 1, NULL, NULL);
    CHECK_CALL(ptxkit_tune_key_get, none, NULL);
    CHECK_CALL(ptxkit_tune_source_get, none, "copy", "bytes", 1024, NULL, &i);
    CHECK_CALL(ptxkit_tune_record_path_get, NULL, 0);
    CHECK_CALL(ptxkit_tune_record_read, NULL, NULL, NULL, NULL);
    CHECK_CALL(ptxkit_tune_record_append, NULL, NULL, 1);
    CHECK_CALL(ptxkit_tune_code_get, NULL, NULL, NULL);
    CHECK_CALL(ptxkit_tunable_create, none, "key", NULL);
    CHECK_CALL(ptxkit_tunable_add_param, NULL, "p", NULL, 0);
    CHECK_CALL(ptxkit_tunable_add_rule, NULL, (ptxkit_tune_rule)99, "a", "b", 0);
    CHECK_CALL(ptxkit_tunable_valid_set, NULL, NULL, NULL);
    CHECK_CALL(ptxkit_tunable_kernel_set, NULL, NULL, "k", NULL, 0);
    CHECK_CALL(ptxkit_tunable_launch_set, NULL, NULL, NULL);
    CHECK_CALL(ptxkit_tunable_check_set, NULL, NULL, NULL);
    CHECK_CALL(ptxkit_tunable_bytes_set, NULL, NULL, NULL);
    CHECK_CALL(ptxkit_tunable_tune, NULL, &sz, 1, NULL, NULL);
    CHECK_CALL(ptxkit_tunable_config_get, NULL, 1, NULL, NULL);
    CHECK_CALL(ptxkit_config_get, NULL, "p", NULL);
    CHECK_CALL(ptxkit_comm_create_all, NULL, 0, NULL);
    CHECK_CALL(ptxkit_comm_create_rank, none, NULL, 2, 0, NULL);
    CHECK_CALL(ptxkit_comm_info_get, NULL, NULL);
    CHECK_CALL(ptxkit_comm_check, NULL);
    CHECK_CALL(ptxkit_comm_allreduce, NULL, PTXKIT_REDUCE_SUM, PTXKIT_FLOAT32, NULL, NULL, 16, NULL);
    CHECK_CALL(ptxkit_shard_split, 16, 0, 0, &sz, &sz);
    CHECK_CALL(ptxkit_shard_offsets_get, NULL, 2, NULL, &sz);
    /* the rest of the calls on a context, with none */
    CHECK_CALL(ptxkit_memory_free, none, 4096);
    CHECK_CALL(ptxkit_host_free, none, &i);
    CHECK_CALL(ptxkit_memory_write_async, none, 4096, &i, sizeof i, NULL);
    CHECK_CALL(ptxkit_memory_read_async, none, &i, 4096, sizeof i, NULL);
    CHECK_CALL(ptxkit_memory_copy_async, none, 4096, 8192, 4, NULL);
    CHECK_CALL(ptxkit_event_elapsed_ms_get, none, NULL, NULL, NULL);
    CHECK_CALL(ptxkit_stream_priority_range_get, none, &i, &i);
    CHECK_CALL(ptxkit_stream_priority_get, none, NULL, &i);
    CHECK_CALL(ptxkit_stream_wait_event, none, NULL, NULL);
    CHECK_CALL(ptxkit_host_func_launch, none, NULL, NULL, NULL);
    CHECK_CALL(ptxkit_event_query, none, NULL);
    CHECK_CALL(ptxkit_host_register, none, &i, sizeof i, 0);
    CHECK_CALL(ptxkit_host_unregister, none, &i);
    CHECK_CALL(ptxkit_host_device_pointer_get, none, &i, &p);
    CHECK_CALL(ptxkit_graph_capture_end, none, NULL, NULL);
    CHECK_CALL(ptxkit_graph_update, none, NULL, NULL, NULL);
    CHECK_CALL(ptxkit_graph_launch, none, NULL, NULL);
    CHECK_CALL(ptxkit_graph_node_count_get, none, NULL, &sz);
    CHECK_CALL(ptxkit_transpose_config_get, none, PTXKIT_TRANSPOSE_PADDED, PTXKIT_FLOAT32, 4, 4, NULL, NULL);
    CHECK_CALL(ptxkit_copy_config_get, none, 4096, 8192, 16, NULL, NULL);
    CHECK_CALL(ptxkit_reduce_prepare, none, PTXKIT_REDUCE_SUM, PTXKIT_FLOAT32, 16, NULL, NULL);
    CHECK_CALL(ptxkit_scan_prepare, none, PTXKIT_SCAN_INCLUSIVE, PTXKIT_REDUCE_SUM, PTXKIT_FLOAT32, 16, NULL, NULL);
    CHECK_CALL(ptxkit_gemm, none, PTXKIT_FLOAT32, PTXKIT_GEMM_N, PTXKIT_GEMM_N, 4, 4, 4, 1.0, 4096, 4, 8192, 4, 0.0, 12288,
               4, NULL, NULL);
    CHECK_CALL(ptxkit_gemm_config_get, none, PTXKIT_FLOAT32, 4, 4, 4, NULL, &i);
    CHECK_CALL(ptxkit_gemm_sweep_tiles, none, PTXKIT_FLOAT32, NULL, 0, &i);
    CHECK_CALL(ptxkit_gemm_prepare, none, PTXKIT_FLOAT32, PTXKIT_GEMM_N, PTXKIT_GEMM_N, 4, 4, 4, NULL, NULL);
    CHECK_CALL(ptxkit_gemm_split_k_get, none, PTXKIT_FLOAT32, NULL, 4, 4, 4, &i);
    /* the _supported companions answer without a context: a value out of range */
    CHECK_CALL(ptxkit_reduce_supported, none, PTXKIT_REDUCE_OP_COUNT, PTXKIT_FLOAT32);
    CHECK_CALL(ptxkit_scan_supported, none, PTXKIT_SCAN_KIND_COUNT, PTXKIT_REDUCE_SUM, PTXKIT_FLOAT32);
    CHECK_CALL(ptxkit_transpose_supported, none, (ptxkit_transpose_kind)9, PTXKIT_FLOAT32);
    CHECK_CALL(ptxkit_transpose_supported, none, PTXKIT_TRANSPOSE_PADDED, PTXKIT_INT64);
    CHECK_CALL(ptxkit_gemm_supported, none, PTXKIT_FLOAT32, PTXKIT_GEMM_OP_COUNT, PTXKIT_GEMM_N);
    CHECK_CALL(ptxkit_gemm_supported, none, PTXKIT_INT32, PTXKIT_GEMM_N, PTXKIT_GEMM_N);
    CHECK_CALL(ptxkit_program_module_get, none, NULL, NULL, 0, NULL, 0, NULL);
    CHECK_CALL(ptxkit_program_kernel_get, none, NULL, "k", NULL, 0, NULL);
    CHECK_CALL(ptxkit_l2_persisting_set, none, 1024, &sz);
    CHECK_CALL(ptxkit_stream_access_window_set, none, NULL, NULL);
    CHECK_CALL(ptxkit_stream_access_window_get, none, NULL, NULL);
    assert_int_equal(failures, 0);
}

static void calls_with_a_context(void **state) {
    (void)state;
    failures = 0;
    ptxkit_context *ctx = test_fake_context();
    ptxkit_dptr p = 0;
    size_t sz = 0;
    int i = 0;
    ptxkit_config cfg_out;
    CHECK_CALL(ptxkit_device_info_get, ctx, NULL);
    CHECK_CALL(ptxkit_memory_alloc, ctx, 0, &p);
    CHECK_CALL(ptxkit_memory_alloc, ctx, 16, NULL);
    CHECK_CALL(ptxkit_host_alloc, ctx, 16, 0, NULL);
    CHECK_CALL(ptxkit_memory_info_get, ctx, NULL, NULL);
    CHECK_CALL(ptxkit_memory_write, ctx, 4096, NULL, 4);
    CHECK_CALL(ptxkit_memory_read, ctx, NULL, 4096, 4);
    CHECK_CALL(ptxkit_memory_set32_async, ctx, 4097, 0, 4, NULL);
    CHECK_CALL(ptxkit_memory_set8_async, ctx, 0, 0, 4, NULL);
    CHECK_CALL(ptxkit_stream_create, ctx, 0, 0, NULL);
    CHECK_CALL(ptxkit_stream_wrap, ctx, NULL, NULL);
    CHECK_CALL(ptxkit_event_create, ctx, 0, NULL);
    CHECK_CALL(ptxkit_event_elapsed_ms_get, ctx, NULL, NULL, NULL);
    CHECK_CALL(ptxkit_stream_priority_range_get, ctx, NULL, NULL);
    CHECK_CALL(ptxkit_host_register, ctx, NULL, 16, 0);
    CHECK_CALL(ptxkit_host_device_pointer_get, ctx, NULL, NULL);
    CHECK_CALL(ptxkit_graph_capture_end, ctx, NULL, NULL);
    CHECK_CALL(ptxkit_graph_launch, ctx, NULL, NULL);
    CHECK_CALL(ptxkit_graph_node_count_get, ctx, NULL, NULL);
    CHECK_CALL(ptxkit_copy, ctx, 4096, 4100, 64, NULL, NULL); /* overlapping */
    CHECK_CALL(ptxkit_copy_config_get, ctx, 4096, 4100, 64, NULL, &cfg_out);
    CHECK_CALL(ptxkit_reduce_prepare, ctx, PTXKIT_REDUCE_AND, PTXKIT_FLOAT32, 16, NULL, NULL);
    CHECK_CALL(ptxkit_scan_prepare, ctx, PTXKIT_SCAN_KIND_COUNT, PTXKIT_REDUCE_SUM, PTXKIT_FLOAT32, 16, NULL, NULL);
    CHECK_CALL(ptxkit_reduce, ctx, PTXKIT_REDUCE_OP_COUNT, PTXKIT_FLOAT32, 4096, 8192, 16, NULL, NULL);
    CHECK_CALL(ptxkit_reduce, ctx, PTXKIT_REDUCE_AND, PTXKIT_FLOAT32, 4096, 8192, 16, NULL, NULL);
    CHECK_CALL(ptxkit_reduce_to_host, ctx, PTXKIT_REDUCE_SUM, PTXKIT_FLOAT32, NULL, 8192, 16, NULL);
    CHECK_CALL(ptxkit_scan, ctx, PTXKIT_SCAN_KIND_COUNT, PTXKIT_REDUCE_SUM, PTXKIT_FLOAT32, 4096, 8192, 16, NULL, NULL);
    CHECK_CALL(ptxkit_transpose, ctx, PTXKIT_TRANSPOSE_PADDED, PTXKIT_DTYPE_COUNT, 4096, 8192, 4, 4, NULL, NULL);
    CHECK_CALL(ptxkit_transpose_config_get, ctx, PTXKIT_TRANSPOSE_PADDED, PTXKIT_DTYPE_COUNT, 4, 4, NULL, NULL);
    CHECK_CALL(ptxkit_gemm_config_get, ctx, PTXKIT_FLOAT32, 0, 4, 4, NULL, NULL);
    CHECK_CALL(ptxkit_gemm_sweep_tiles, ctx, PTXKIT_FLOAT32, NULL, 4, NULL);
    CHECK_CALL(ptxkit_program_kernel_get, ctx, NULL, "k", NULL, 0, NULL);
    CHECK_CALL(ptxkit_program_module_get, ctx, NULL, NULL, 0, NULL, 0, NULL);
    CHECK_CALL(ptxkit_program_kernel_get, ctx, NULL, "k", NULL, 0, NULL);
    CHECK_CALL(ptxkit_module_load, ctx, NULL, 0, NULL, NULL);
    CHECK_CALL(ptxkit_l2_persisting_set, ctx, 1024, NULL);
    CHECK_CALL(ptxkit_stream_access_window_set, ctx, NULL, NULL);
    CHECK_CALL(ptxkit_stream_access_window_get, ctx, NULL, NULL);
    CHECK_CALL(ptxkit_tune, ctx, NULL, NULL, 1024, 1024, NULL, NULL);
    CHECK_CALL(ptxkit_tune, ctx, "copy", NULL, 2048, 1024, NULL, NULL);
    CHECK_CALL(ptxkit_tune_sizes_run, ctx, "copy", NULL, NULL, 1, NULL, NULL);
    CHECK_CALL(ptxkit_tune_key_get, ctx, NULL);
    CHECK_CALL(ptxkit_tune_source_get, ctx, NULL, NULL, 1024, NULL, &i);
    CHECK_CALL(ptxkit_tunable_create, ctx, NULL, NULL);
    CHECK_CALL(ptxkit_comm_create_all, &ctx, 1, NULL);
    CHECK_CALL(ptxkit_comm_create_rank, ctx, NULL, 2, 0, NULL);
    /* past the first check: sizes, alignment, types, options */
    ptxkit_config bad_options = {1, {{"block_size", 100}}};
    CHECK_CALL(ptxkit_copy, ctx, 4096, 8192, 16, &bad_options, NULL);
    CHECK_CALL(ptxkit_copy, ctx, 0, 8192, 16, NULL, NULL);
    CHECK_CALL(ptxkit_copy, ctx, UINT64_MAX - 8, 8192, 64, NULL, NULL);
    CHECK_CALL(ptxkit_reduce, ctx, PTXKIT_REDUCE_SUM, PTXKIT_DTYPE_COUNT, 4096, 8192, 16, NULL, NULL);
    CHECK_CALL(ptxkit_reduce, ctx, PTXKIT_REDUCE_SUM, PTXKIT_FLOAT32, 4097, 8192, 16, NULL, NULL);
    CHECK_CALL(ptxkit_reduce, ctx, PTXKIT_REDUCE_SUM, PTXKIT_FLOAT32, 4096, 8193, 16, NULL, NULL);
    CHECK_CALL(ptxkit_reduce, ctx, PTXKIT_REDUCE_SUM, PTXKIT_FLOAT32, 4096, 8192, 16, &bad_options, NULL);
    CHECK_CALL(ptxkit_reduce_to_host, ctx, PTXKIT_REDUCE_SUM, PTXKIT_DTYPE_COUNT, &i, 8192, 16, NULL);
    CHECK_CALL(ptxkit_scan, ctx, PTXKIT_SCAN_INCLUSIVE, PTXKIT_REDUCE_OP_COUNT, PTXKIT_FLOAT32, 4096, 8192, 16, NULL, NULL);
    CHECK_CALL(ptxkit_scan, ctx, PTXKIT_SCAN_INCLUSIVE, PTXKIT_REDUCE_SUM, PTXKIT_FLOAT32, 4097, 8192, 16, NULL, NULL);
    CHECK_CALL(ptxkit_scan, ctx, PTXKIT_SCAN_INCLUSIVE, PTXKIT_REDUCE_SUM, PTXKIT_FLOAT32, 4096, 8192, 16, &bad_options,
               NULL);
    CHECK_CALL(ptxkit_transpose, ctx, PTXKIT_TRANSPOSE_PADDED, PTXKIT_FLOAT32, 4097, 8192, 4, 4, NULL, NULL);
    CHECK_CALL(ptxkit_transpose, ctx, (ptxkit_transpose_kind)9, PTXKIT_FLOAT32, 4096, 8192, 4, 4, NULL, NULL);
    CHECK_CALL(ptxkit_gemm, ctx, PTXKIT_DTYPE_COUNT, PTXKIT_GEMM_N, PTXKIT_GEMM_N, 4, 4, 4, 1.0, 4096, 4, 8192, 4, 0.0,
               12288, 4, NULL, NULL);
    CHECK_CALL(ptxkit_gemm, ctx, PTXKIT_FLOAT32, PTXKIT_GEMM_N, PTXKIT_GEMM_N, 4, 4, 4, 1.0, 4096, 2, 8192, 4, 0.0,
               12288, 4, NULL, NULL);
    CHECK_CALL(ptxkit_gemm_prepare, ctx, PTXKIT_DTYPE_COUNT, PTXKIT_GEMM_N, PTXKIT_GEMM_N, 4, 4, 4, NULL, NULL);
    CHECK_CALL(ptxkit_gemm_split_k_get, ctx, PTXKIT_FLOAT32, NULL, 0, 4, 4, &i);
    CHECK_CALL(ptxkit_memory_set32_async, ctx, 4096, 0, SIZE_MAX / 2, NULL);
    CHECK_CALL(ptxkit_tune, ctx, "no_such_family", NULL, 1024, 1024, NULL, NULL);
    CHECK_CALL(ptxkit_tune, ctx, "reduce", "sum.bogus", 1024, 1024, NULL, NULL);
    CHECK_CALL(ptxkit_tune_source_get, ctx, "no_such_family", NULL, 1024, NULL, &i);
    CHECK_CALL(ptxkit_load_op_parse, "bogus", (ptxkit_load_op *)&i);
    CHECK_CALL(ptxkit_program_create, "", "x", NULL, 0, (ptxkit_program **)&p);
    CHECK_CALL(ptxkit_program_create_from_file, "/nonexistent/ptxkit/x.cu", NULL, 0, (ptxkit_program **)&p);
    CHECK_CALL(ptxkit_program_builtin_source_get, "no_such_file.cu", (const char **)&p, &sz);
    CHECK_CALL(ptxkit_program_family_define_values_get, "no_such_family", "BLOCK_SIZE", (char *)&p, sizeof p);
    CHECK_CALL(ptxkit_tune_code_get, "no_such_family", NULL, (unsigned long long *)&p);
    CHECK_CALL(ptxkit_shard_split, 16, 2, 5, &sz, &sz);
    (void)sz;
    assert_int_equal(failures, 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(calls_without_a_context),
        cmocka_unit_test(calls_with_a_context),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
