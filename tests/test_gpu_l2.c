/* L2 residency on a GPU: the persisting set-aside read back after each
 * set (half, the maximum by name, zero), values beyond the maximum refused
 * with the limit unchanged, a stream's access policy window read back
 * field by field and removed, malformed windows refused with the previous
 * window kept, kernels correct on a stream with a window and with a
 * per-launch window, and the reset. The set-aside is device-wide: the
 * suite restores the value it found. Where the feature is absent (before
 * sm_80, MIG, MPS) every call must be UNSUPPORTED, and that is checked
 * instead. */
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

static size_t original;

static const char source[] =
    "extern \"C\" __global__ void bump(unsigned *x, unsigned long long n, unsigned k) {\n"
    "    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;\n"
    "         i += (unsigned long long)gridDim.x * blockDim.x)\n"
    "        x[i] = x[i] * 3u + k;\n"
    "}\n";

static int supported(void) {
    ptxkit_device_info d;
    assert_ok(NULL, ptxkit_device_info_get(test_gpu(), &d));
    /* a MIG instance or MPS client has the attributes but may not use them */
    return d.persisting_l2_max_bytes > 0 && d.access_window_max_bytes > 0 &&
           ptxkit_l2_persisting_get(test_gpu(), &original, NULL) == PTXKIT_SUCCESS;
}

static void absent_feature_is_unsupported(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    size_t bytes = 0, max = 0;
    if (supported()) skip(); /* present: the other tests run */
    ptxkit_status st = ptxkit_l2_persisting_get(ctx, &bytes, &max);
    print_message("L2 persistence absent here: %s\n", ptxkit_last_error());
    assert_status(PTXKIT_ERROR_UNSUPPORTED, st);
    assert_status(PTXKIT_ERROR_UNSUPPORTED, ptxkit_l2_persisting_set(ctx, 0, NULL));
}

static void set_aside_reads_back(void **state) {
    (void)state;
    if (!supported()) skip();
    ptxkit_context *ctx = test_gpu();
    size_t max = 0, now = 0, applied = 0;
    assert_ok(ctx, ptxkit_l2_persisting_get(ctx, NULL, &max));
    ptxkit_device_info d;
    assert_ok(ctx, ptxkit_device_info_get(ctx, &d));
    assert_int_equal(max, (size_t)d.persisting_l2_max_bytes);
    assert_true(max <= (size_t)d.l2_bytes);
    print_message("set-aside: %zu bytes now, maximum %zu of %d bytes of L2; windows up to %d bytes\n", original, max,
                  d.l2_bytes, d.access_window_max_bytes);

    const size_t asks[] = {max / 2, PTXKIT_L2_PERSISTING_MAX, 0, max / 4 + 12345};
    for (size_t i = 0; i < sizeof asks / sizeof asks[0]; i++) {
        size_t want = asks[i] == PTXKIT_L2_PERSISTING_MAX ? max : asks[i];
        assert_ok(ctx, ptxkit_l2_persisting_set(ctx, asks[i], &applied));
        assert_ok(ctx, ptxkit_l2_persisting_get(ctx, &now, NULL));
        print_message("asked %zu, driver holds %zu\n", want, now);
        assert_int_equal(applied, now);
        assert_true(now <= max);
        /* the driver may round to its granularity, never far */
        size_t diff = now > want ? now - want : want - now;
        if (diff > max / 16) fail_msg("asked for %zu bytes of set-aside, the driver holds %zu", want, now);
        if (want == 0) assert_int_equal(now, 0);
    }
    /* beyond the maximum: refused, the limit unchanged */
    size_t before = now;
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_l2_persisting_set(ctx, max + 1, &applied));
    assert_non_null(strstr(ptxkit_last_error(), "maximum"));
    assert_ok(ctx, ptxkit_l2_persisting_get(ctx, &now, NULL));
    assert_int_equal(now, before);
    assert_ok(ctx, ptxkit_l2_persisting_reset(ctx));
    assert_ok(ctx, ptxkit_l2_persisting_set(ctx, original, NULL));
}

static int same_window(const ptxkit_access_window *a, const ptxkit_access_window *b) {
    return a->base == b->base && a->bytes == b->bytes && a->hit_ratio == b->hit_ratio &&
           a->hit_property == b->hit_property && a->miss_property == b->miss_property;
}

/* n words through bump on stream (NULL attributes: plain launch) */
static void bump_check(ptxkit_kernel *k, ptxkit_stream *stream, const ptxkit_launch_attributes *attributes,
                       ptxkit_dptr d, uint32_t *host, size_t n, unsigned key) {
    ptxkit_context *ctx = test_gpu();
    unsigned long long count = n;
    void *args[] = {&d, &count, &key};
    assert_ok(ctx, ptxkit_memory_write(ctx, d, host, n * 4));
    assert_ok(ctx, ptxkit_kernel_launch_ex(k, (ptxkit_dim3){264, 1, 1}, (ptxkit_dim3){256, 1, 1}, 0, stream, args, NULL, 0, attributes));
    assert_ok(ctx, ptxkit_stream_synchronize(ctx, stream));
    uint32_t *got = malloc(n * 4);
    assert_non_null(got);
    assert_ok(ctx, ptxkit_memory_read(ctx, got, d, n * 4));
    for (size_t i = 0; i < n; i++)
        if (got[i] != host[i] * 3u + key) fail_msg("bump with a window: word %zu is %u, want %u", i, got[i], host[i] * 3u + key);
    free(got);
}

static void stream_window(void **state) {
    (void)state;
    if (!supported()) skip();
    ptxkit_context *ctx = test_gpu();
    ptxkit_device_info d;
    assert_ok(ctx, ptxkit_device_info_get(ctx, &d));
    size_t n = (size_t)3 << 20; /* 12 MiB of words */
    uint64_t rng = test_seed();
    uint32_t *host = malloc(n * 4);
    assert_non_null(host);
    test_fill_random(host, n * 4, &rng);
    ptxkit_dptr dx;
    assert_ok(ctx, ptxkit_memory_alloc(ctx, n * 4, &dx));
    ptxkit_stream *stream;
    assert_ok(ctx, ptxkit_stream_create(ctx, PTXKIT_STREAM_NON_BLOCKING, 0, &stream));

    ptxkit_access_window none, got, w = {.base = dx + 4096, .bytes = (size_t)4 << 20, .hit_ratio = 0.625f,
                                          .hit_property = PTXKIT_ACCESS_PERSISTING,
                                          .miss_property = PTXKIT_ACCESS_STREAMING};
    assert_ok(ctx, ptxkit_stream_access_window_get(ctx, stream, &none));
    assert_int_equal(none.bytes, 0);
    assert_ok(ctx, ptxkit_l2_persisting_set(ctx, PTXKIT_L2_PERSISTING_MAX, NULL));
    assert_ok(ctx, ptxkit_stream_access_window_set(ctx, stream, &w));
    assert_ok(ctx, ptxkit_stream_access_window_get(ctx, stream, &got));
    if (!same_window(&w, &got))
        fail_msg("window read back as %zu bytes at 0x%llx, ratio %g, %d/%d", got.bytes, (unsigned long long)got.base,
                 (double)got.hit_ratio, got.hit_property, got.miss_property);

    /* malformed windows are refused and the stream keeps its window */
    ptxkit_access_window bad[4] = {w, w, w, w};
    bad[0].bytes = (size_t)d.access_window_max_bytes + 1;
    bad[1].hit_ratio = 2.0f;
    bad[2].miss_property = PTXKIT_ACCESS_PERSISTING;
    bad[3].base = 0;
    for (int i = 0; i < 4; i++) assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_stream_access_window_set(ctx, stream, &bad[i]));
    assert_ok(ctx, ptxkit_stream_access_window_get(ctx, stream, &got));
    assert_true(same_window(&w, &got));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_stream_access_window_set(ctx, NULL, &w));

    /* kernels on the stream with its window, and with a launch's own */
    ptxkit_program *p;
    ptxkit_kernel *k;
    assert_ok(NULL, ptxkit_program_create("bump.cu", source, NULL, 0, &p));
    assert_ok(ctx, ptxkit_program_kernel_get(ctx, p, "bump", NULL, 0, &k));
    bump_check(k, stream, NULL, dx, host, n, 7);
    ptxkit_access_window whole = {.base = dx, .bytes = n * 4 < (size_t)d.access_window_max_bytes ? n * 4 : (size_t)d.access_window_max_bytes,
                                  .hit_ratio = 1.0f, .hit_property = PTXKIT_ACCESS_PERSISTING};
    ptxkit_launch_attributes a = {.access_window = &whole};
    bump_check(k, stream, &a, dx, host, n, 11);
    bump_check(k, NULL, &a, dx, host, n, 13);

    /* removed: reads back as none */
    assert_ok(ctx, ptxkit_stream_access_window_set(ctx, stream, NULL));
    assert_ok(ctx, ptxkit_stream_access_window_get(ctx, stream, &got));
    assert_int_equal(got.bytes, 0);
    bump_check(k, stream, NULL, dx, host, n, 17);
    assert_ok(ctx, ptxkit_l2_persisting_reset(ctx));
    assert_ok(ctx, ptxkit_l2_persisting_set(ctx, original, NULL));

    ptxkit_program_destroy(p);
    ptxkit_stream_destroy(stream);
    ptxkit_memory_free(ctx, dx);
    free(host);
}

int main(void) {
    test_require_gpu();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(absent_feature_is_unsupported),
        cmocka_unit_test(set_aside_reads_back),
        cmocka_unit_test(stream_window),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    test_gpu_release();
    return failed;
}
