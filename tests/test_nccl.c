/* NCCL at run time (driver/nccl.c) and the several-GPU calls' checks that
 * need no GPU: a missing library, stub libraries (too old, incomplete, a
 * symbol gated by version), PTXKIT_NCCL_PATH standing alone, argument
 * checks, shard bookkeeping.
 * usage: test_nccl MODE STUB_DIR, MODE "missing" (PTXKIT_NCCL_PATH names no
 * file) or "stub" (it names the complete 2.28.9 stub): the process opens
 * NCCL once, so each mode is its own run. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptxkit_ops.h"
#include "driver/nccl.h"
#include "multi/comm.h"
#include "test_util.h"

static const char *mode, *stub_dir;

static void stub_path(char *buf, size_t size, const char *name) {
    snprintf(buf, size, "%s/%s", stub_dir, name);
}

static void open_missing(void **state) {
    (void)state;
    nccl_library lib;
    char why[1024];
    assert_false(nccl_open_at("/nonexistent/libnccl.so.2", "test", &lib, why, sizeof why));
    assert_non_null(strstr(why, "/nonexistent/libnccl.so.2 (missing)"));
    assert_null(lib.handle);
    /* a file that is not a shared object: dlopen's reason */
    assert_false(nccl_open_at("/etc/hostname", "test", &lib, why, sizeof why));
    assert_non_null(strstr(why, "/etc/hostname"));
}

static void old_version_refused(void **state) {
    (void)state;
    nccl_library lib;
    char path[1024], why[2048];
    stub_path(path, sizeof path, "libnccl_stub_old.so");
    assert_false(nccl_open_at(path, "test", &lib, why, sizeof why));
    assert_non_null(strstr(why, "NCCL 2.8.4, older than the 2.12.0"));
}

static void incomplete_refused(void **state) {
    (void)state;
    nccl_library lib;
    char path[1024], why[2048];
    stub_path(path, sizeof path, "libnccl_stub_incomplete.so");
    assert_false(nccl_open_at(path, "test", &lib, why, sizeof why));
    assert_non_null(strstr(why, "NCCL without ncclAllGather"));
}

static void gated_by_version(void **state) {
    (void)state;
    nccl_library lib;
    char path[1024], why[2048];
    /* 2.12.0 exports ncclGetLastError here, but that version has no such
     * entry: it is not asked for */
    stub_path(path, sizeof path, "libnccl_stub_min.so");
    assert_true(nccl_open_at(path, "test", &lib, why, sizeof why));
    assert_int_equal(lib.version, 21200);
    assert_non_null(lib.ncclAllGather);
    assert_null(lib.ncclGetLastError);
    assert_non_null(strstr(lib.origin, "(found through test)"));
    nccl_close(&lib);
    stub_path(path, sizeof path, "libnccl_stub_new.so");
    assert_true(nccl_open_at(path, "test", &lib, why, sizeof why));
    assert_int_equal(lib.version, 22809);
    assert_non_null(lib.ncclGetLastError);
    assert_string_equal(lib.ncclGetLastError(NULL), "stub last error");
    nccl_close(&lib);
}

static void version_text(void **state) {
    (void)state;
    char buf[32];
    nccl_version_text(22809, buf, sizeof buf);
    assert_string_equal(buf, "2.28.9");
    nccl_version_text(2804, buf, sizeof buf);
    assert_string_equal(buf, "2.8.4");
    nccl_version_text(NCCL_MIN_VERSION, buf, sizeof buf);
    assert_string_equal(buf, "2.12.0");
    assert_int_equal(NCCL_VERSION_CODE_OF(2, 8, 4), 2804);
    assert_int_equal(NCCL_VERSION_CODE_OF(2, 28, 9), 22809);
}

/* The public calls with PTXKIT_NCCL_PATH set by main. */
static void public_library(void **state) {
    (void)state;
    char path[4096], version[32];
    unsigned char id[PTXKIT_COMM_ID_BYTES];
    if (strcmp(mode, "missing") == 0) {
        assert_int_equal(ptxkit_comm_library_get(path, sizeof path, version, sizeof version), PTXKIT_ERROR_UNSUPPORTED);
        assert_string_equal(path, "");
        const char *e = ptxkit_last_error();
        assert_non_null(strstr(e, "/nonexistent/ptxkit-test/libnccl.so.2 (missing)"));
        assert_non_null(strstr(e, "PTXKIT_NCCL_PATH"));
        assert_int_equal(ptxkit_comm_unique_id_get(id), PTXKIT_ERROR_UNSUPPORTED);
        assert_non_null(strstr(ptxkit_last_error(), "multi-GPU calls are unavailable"));
    } else {
        assert_int_equal(ptxkit_comm_library_get(path, sizeof path, version, sizeof version), PTXKIT_SUCCESS);
        assert_non_null(strstr(path, "libnccl_stub_new.so (found through PTXKIT_NCCL_PATH)"));
        assert_string_equal(version, "2.28.9");
        assert_int_equal(ptxkit_comm_unique_id_get(id), PTXKIT_SUCCESS);
        for (int i = 0; i < PTXKIT_COMM_ID_BYTES; i++) assert_int_equal(id[i], i);
        /* NULL buffers are allowed */
        assert_int_equal(ptxkit_comm_library_get(NULL, 0, NULL, 0), PTXKIT_SUCCESS);
    }
    assert_int_equal(ptxkit_comm_unique_id_get(NULL), PTXKIT_ERROR_INVALID_ARGUMENT);
}

static void argument_checks(void **state) {
    (void)state;
    ptxkit_comm *comm = (ptxkit_comm *)1;
    ptxkit_context *ctxs[2] = {NULL, NULL};
    unsigned char id[PTXKIT_COMM_ID_BYTES] = {0};
    assert_int_equal(ptxkit_comm_create_all(ctxs, 2, NULL), PTXKIT_ERROR_INVALID_ARGUMENT);
    assert_int_equal(ptxkit_comm_create_all(NULL, 2, &comm), PTXKIT_ERROR_INVALID_ARGUMENT);
    assert_null(comm);
    assert_int_equal(ptxkit_comm_create_all(ctxs, 0, &comm), PTXKIT_ERROR_INVALID_ARGUMENT);
    assert_int_equal(ptxkit_comm_create_all(ctxs, 2, &comm), PTXKIT_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(ptxkit_last_error(), "contexts[0] is NULL"));
    assert_int_equal(ptxkit_comm_create_rank(NULL, id, 2, 0, &comm), PTXKIT_ERROR_INVALID_ARGUMENT);
    assert_int_equal(ptxkit_comm_create_rank(NULL, id, 2, 0, NULL), PTXKIT_ERROR_INVALID_ARGUMENT);
    ptxkit_comm_destroy(NULL);
    ptxkit_comm_info info;
    assert_int_equal(ptxkit_comm_info_get(NULL, &info), PTXKIT_ERROR_INVALID_ARGUMENT);
    assert_null(ptxkit_comm_context_get(NULL, 0));
    assert_int_equal(ptxkit_comm_check(NULL), PTXKIT_ERROR_INVALID_ARGUMENT);
    ptxkit_dptr d[1] = {256};
    size_t n[1] = {1};
    assert_int_equal(ptxkit_comm_reduce(NULL, PTXKIT_REDUCE_SUM, PTXKIT_INT32, d, d, n, NULL, NULL),
                     PTXKIT_ERROR_INVALID_ARGUMENT);
    assert_int_equal(ptxkit_comm_scan(NULL, PTXKIT_SCAN_INCLUSIVE, PTXKIT_REDUCE_SUM, PTXKIT_INT32, d, d, n, NULL, NULL),
                     PTXKIT_ERROR_INVALID_ARGUMENT);
    assert_int_equal(ptxkit_comm_allreduce(NULL, PTXKIT_REDUCE_SUM, PTXKIT_INT32, d, d, 1, NULL),
                     PTXKIT_ERROR_INVALID_ARGUMENT);
    assert_int_equal(ptxkit_comm_gather(NULL, PTXKIT_INT32, 0, d[0], d, n, NULL), PTXKIT_ERROR_INVALID_ARGUMENT);
    assert_int_equal(ptxkit_comm_scatter(NULL, PTXKIT_INT32, 0, d, d[0], n, NULL), PTXKIT_ERROR_INVALID_ARGUMENT);
}

static void shard_bookkeeping(void **state) {
    (void)state;
    /* the even split: 10 over 4 = 3 3 2 2, contiguous and complete */
    size_t offset, count, next = 0;
    const size_t want[4] = {3, 3, 2, 2};
    for (int r = 0; r < 4; r++) {
        assert_int_equal(ptxkit_shard_split(10, 4, r, &offset, &count), PTXKIT_SUCCESS);
        assert_int_equal(offset, next);
        assert_int_equal(count, want[r]);
        next += count;
    }
    /* fewer elements than ranks: empty shards at the end, at the total */
    assert_int_equal(ptxkit_shard_split(2, 4, 3, &offset, &count), PTXKIT_SUCCESS);
    assert_int_equal(count, 0);
    assert_int_equal(offset, 2);
    assert_int_equal(ptxkit_shard_split(0, 1, 0, &offset, &count), PTXKIT_SUCCESS);
    assert_int_equal(count, 0);
    /* the largest total splits without overflow */
    assert_int_equal(ptxkit_shard_split(SIZE_MAX, 3, 2, &offset, &count), PTXKIT_SUCCESS);
    assert_int_equal(offset + count, SIZE_MAX);
    assert_int_equal(ptxkit_shard_split(10, 0, 0, &offset, &count), PTXKIT_ERROR_INVALID_ARGUMENT);
    assert_int_equal(ptxkit_shard_split(10, 4, 4, &offset, &count), PTXKIT_ERROR_INVALID_ARGUMENT);
    assert_int_equal(ptxkit_shard_split(10, 4, -1, &offset, &count), PTXKIT_ERROR_INVALID_ARGUMENT);
    assert_int_equal(ptxkit_shard_split(10, 4, 0, NULL, &count), PTXKIT_ERROR_INVALID_ARGUMENT);
    /* uneven and empty shards */
    const size_t counts[5] = {0, 7, 0, 1, 5};
    size_t offsets[5], total = 0;
    assert_int_equal(ptxkit_shard_offsets_get(counts, 5, offsets, &total), PTXKIT_SUCCESS);
    const size_t want_offsets[5] = {0, 0, 7, 7, 8};
    for (int r = 0; r < 5; r++) assert_int_equal(offsets[r], want_offsets[r]);
    assert_int_equal(total, 13);
    assert_int_equal(ptxkit_shard_offsets_get(counts, 5, offsets, NULL), PTXKIT_SUCCESS);
    const size_t huge[2] = {SIZE_MAX, 1};
    assert_int_equal(ptxkit_shard_offsets_get(huge, 2, offsets, &total), PTXKIT_ERROR_OVERFLOW);
    assert_int_equal(ptxkit_shard_offsets_get(NULL, 2, offsets, &total), PTXKIT_ERROR_INVALID_ARGUMENT);
    assert_int_equal(ptxkit_shard_offsets_get(counts, 0, offsets, &total), PTXKIT_ERROR_INVALID_ARGUMENT);
}

/* The shard kernels compile for every (operator, type) the sharded calls
 * offer (NVRTC, no GPU; skipped without NVRTC). */
static void shard_kernels_compile(void **state) {
    (void)state;
    if (!ptxkit_jit_available()) {
        printf("no NVRTC: shard kernels not compiled (%s)\n", ptxkit_last_error());
        return;
    }
    ptxkit_program *program = NULL;
    assert_int_equal(shard_program_create(&program), PTXKIT_SUCCESS);
    int compiled = 0;
    for (int t = 0; t < PTXKIT_DTYPE_COUNT; t++)
        for (int o = 0; o < PTXKIT_REDUCE_OP_COUNT; o++) {
            if (ptxkit_scan_supported(NULL, PTXKIT_SCAN_INCLUSIVE, (ptxkit_reduce_op)o, (ptxkit_dtype)t) != PTXKIT_SUCCESS &&
                ptxkit_reduce_supported(NULL, (ptxkit_reduce_op)o, (ptxkit_dtype)t) != PTXKIT_SUCCESS)
                continue;
            char type_define[16], op_define[16];
            snprintf(type_define, sizeof type_define, "TYPE_ID=%d", t);
            snprintf(op_define, sizeof op_define, "OP=%d", o);
            const char *defines[2] = {type_define, op_define};
            ptxkit_compiled out;
            ptxkit_status st = ptxkit_program_compile(program, NULL, defines, 2, 90, 1, &out);
            if (st != PTXKIT_SUCCESS) fail_msg("%s %s: %s", type_define, op_define, ptxkit_last_error());
            assert_non_null(strstr(out.image, "shard_total"));
            assert_non_null(strstr(out.image, "shard_combine"));
            assert_non_null(strstr(out.image, "shard_offset"));
            ptxkit_program_compiled_free(&out);
            compiled++;
        }
    assert_int_equal(compiled, 26);
    ptxkit_program_destroy(program);
    /* the identity the kernels start from */
    unsigned char id[8];
    shard_identity(PTXKIT_REDUCE_MIN, PTXKIT_INT32, id);
    int32_t i32;
    memcpy(&i32, id, 4);
    assert_int_equal(i32, INT32_MAX);
    shard_identity(PTXKIT_REDUCE_AND, PTXKIT_UINT64, id);
    uint64_t u64;
    memcpy(&u64, id, 8);
    assert_true(u64 == UINT64_MAX);
    shard_identity(PTXKIT_REDUCE_MAX, PTXKIT_FLOAT32, id);
    float f;
    memcpy(&f, id, 4);
    assert_true(f < -3.4e38f);
}

/* The real NCCL where the loader finds one (this machine's toolkit may
 * have it): it loads with every entry, the gated one included. */
static void real_library(void **state) {
    (void)state;
    nccl_library lib;
    char why[2048];
    if (!nccl_open_at("libnccl.so.2", "the loader's search path", &lib, why, sizeof why)) {
        printf("no NCCL on the loader's path here: %s\n", why);
        return;
    }
    char text[32];
    nccl_version_text(lib.version, text, sizeof text);
    printf("NCCL %s: %s\n", text, lib.origin);
    assert_true(lib.version >= NCCL_MIN_VERSION);
    if (lib.version >= 21300) assert_non_null(lib.ncclGetLastError);
    assert_non_null(lib.ncclCommInitRank);
    nccl_close(&lib);
}

/* The sharded calls' checks on a communicator of one rank that never
 * reaches NCCL or the GPU (a fake context, the stub library): each refusal
 * comes before any work is queued. */
static void sharded_argument_checks(void **state) {
    (void)state;
    nccl_library lib;
    char path[1024], why[2048];
    stub_path(path, sizeof path, "libnccl_stub_new.so");
    assert_true(nccl_open_at(path, "test", &lib, why, sizeof why));
    ptxkit_comm *comm = calloc(1, sizeof *comm + sizeof comm->local[0]);
    assert_non_null(comm);
    comm->nccl = &lib;
    comm->ranks = 3, comm->local_ranks = 1, comm->first_rank = 1;
    ptxkit_context *ctx = test_fake_context();
    comm->local[0].ctx = ctx;
    comm->local[0].rank = 1;
    ptxkit_dptr d[1] = {256}, zero[1] = {0};
    size_t n[1] = {5}, counts[3] = {1, 2, 3};
    const ptxkit_reduce_op sum = PTXKIT_REDUCE_SUM;
    /* arrays */
    assert_int_equal(ptxkit_comm_reduce(comm, sum, PTXKIT_INT32, NULL, d, n, NULL, NULL), PTXKIT_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(ptxkit_last_error(), "out is NULL"));
    assert_int_equal(ptxkit_comm_reduce(comm, sum, PTXKIT_INT32, d, NULL, n, NULL, NULL), PTXKIT_ERROR_INVALID_ARGUMENT);
    assert_int_equal(ptxkit_comm_reduce(comm, sum, PTXKIT_INT32, d, d, NULL, NULL, NULL), PTXKIT_ERROR_INVALID_ARGUMENT);
    assert_int_equal(ptxkit_comm_reduce(comm, sum, PTXKIT_INT32, zero, d, n, NULL, NULL), PTXKIT_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(ptxkit_last_error(), "out[0] is 0"));
    assert_int_equal(ptxkit_comm_reduce(comm, sum, PTXKIT_INT32, d, zero, n, NULL, NULL), PTXKIT_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(ptxkit_last_error(), "in[0] is 0 with n[0] = 5"));
    /* operators, types and kinds */
    assert_int_equal(ptxkit_comm_reduce(comm, PTXKIT_REDUCE_AND, PTXKIT_FLOAT32, d, d, n, NULL, NULL),
                     PTXKIT_ERROR_UNSUPPORTED);
    assert_int_equal(ptxkit_comm_reduce(comm, PTXKIT_REDUCE_OP_COUNT, PTXKIT_INT32, d, d, n, NULL, NULL),
                     PTXKIT_ERROR_INVALID_ARGUMENT);
    assert_int_equal(ptxkit_comm_scan(comm, PTXKIT_SCAN_INCLUSIVE, (ptxkit_reduce_op)-1, PTXKIT_INT32, d, d, n, NULL, NULL),
                     PTXKIT_ERROR_INVALID_ARGUMENT);
    assert_int_equal(ptxkit_comm_reduce(comm, sum, PTXKIT_DTYPE_COUNT, d, d, n, NULL, NULL), PTXKIT_ERROR_INVALID_ARGUMENT);
    assert_int_equal(ptxkit_comm_scan(comm, PTXKIT_SCAN_KIND_COUNT, sum, PTXKIT_INT32, d, d, n, NULL, NULL),
                     PTXKIT_ERROR_INVALID_ARGUMENT);
    assert_int_equal(ptxkit_comm_scan(comm, PTXKIT_SCAN_INCLUSIVE, PTXKIT_REDUCE_MIN, PTXKIT_INT64, d, d, n, NULL, NULL),
                     PTXKIT_ERROR_UNSUPPORTED);
    assert_int_equal(ptxkit_comm_allreduce(comm, PTXKIT_REDUCE_XOR, PTXKIT_INT32, d, d, 4, NULL), PTXKIT_ERROR_UNSUPPORTED);
    assert_non_null(strstr(ptxkit_last_error(), "sum, min and max"));
    assert_int_equal(ptxkit_comm_allreduce(comm, PTXKIT_REDUCE_OP_COUNT, PTXKIT_INT32, d, d, 4, NULL),
                     PTXKIT_ERROR_INVALID_ARGUMENT);
    assert_int_equal(ptxkit_comm_allreduce(comm, sum, PTXKIT_INT32, d, zero, 4, NULL), PTXKIT_ERROR_INVALID_ARGUMENT);
    /* nothing to do: no NCCL call, no GPU */
    assert_int_equal(ptxkit_comm_allreduce(comm, sum, PTXKIT_INT32, zero, zero, 0, NULL), PTXKIT_SUCCESS);
    /* gather and scatter */
    assert_int_equal(ptxkit_comm_gather(comm, PTXKIT_INT32, 3, d[0], d, counts, NULL), PTXKIT_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(ptxkit_last_error(), "root 3 of 3 ranks"));
    assert_int_equal(ptxkit_comm_gather(comm, PTXKIT_INT32, -1, d[0], d, counts, NULL), PTXKIT_ERROR_INVALID_ARGUMENT);
    assert_int_equal(ptxkit_comm_gather(comm, PTXKIT_INT32, 0, d[0], d, NULL, NULL), PTXKIT_ERROR_INVALID_ARGUMENT);
    assert_int_equal(ptxkit_comm_gather(comm, PTXKIT_INT32, 0, d[0], zero, counts, NULL), PTXKIT_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(ptxkit_last_error(), "in[0] is 0"));
    /* this process holds root 1: its buffer is needed */
    assert_int_equal(ptxkit_comm_gather(comm, PTXKIT_INT32, 1, 0, d, counts, NULL), PTXKIT_ERROR_INVALID_ARGUMENT);
    assert_int_equal(ptxkit_comm_scatter(comm, PTXKIT_INT32, 1, d, 0, counts, NULL), PTXKIT_ERROR_INVALID_ARGUMENT);
    const size_t huge[3] = {SIZE_MAX / 8, SIZE_MAX / 8, 1};
    assert_int_equal(ptxkit_comm_gather(comm, PTXKIT_INT64, 0, d[0], d, huge, NULL), PTXKIT_ERROR_OVERFLOW);
    /* the description */
    ptxkit_comm_info info;
    assert_int_equal(ptxkit_comm_info_get(comm, &info), PTXKIT_SUCCESS);
    assert_int_equal(info.ranks, 3);
    assert_int_equal(info.local_ranks, 1);
    assert_int_equal(info.first_rank, 1);
    assert_int_equal(info.nccl_version, 22809);
    assert_ptr_equal(ptxkit_comm_context_get(comm, 0), ctx);
    assert_null(ptxkit_comm_context_get(comm, 1));
    free(comm);
    nccl_close(&lib);
}

int main(int argc, char **argv) {
    if (argc != 3 || (strcmp(argv[1], "missing") != 0 && strcmp(argv[1], "stub") != 0)) {
        fprintf(stderr, "usage: test_nccl missing|stub STUB_DIR\n");
        return 2;
    }
    mode = argv[1], stub_dir = argv[2];
    char path[1024];
    if (strcmp(mode, "missing") == 0)
        snprintf(path, sizeof path, "/nonexistent/ptxkit-test/libnccl.so.2");
    else
        stub_path(path, sizeof path, "libnccl_stub_new.so");
    setenv("PTXKIT_NCCL_PATH", path, 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(open_missing),     cmocka_unit_test(old_version_refused),
        cmocka_unit_test(incomplete_refused), cmocka_unit_test(gated_by_version),
        cmocka_unit_test(version_text),     cmocka_unit_test(public_library),
        cmocka_unit_test(argument_checks),  cmocka_unit_test(shard_bookkeeping),
        cmocka_unit_test(shard_kernels_compile), cmocka_unit_test(real_library),
        cmocka_unit_test(sharded_argument_checks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
