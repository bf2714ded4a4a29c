/* GPU tests of the host-array calls (issue 26 item 2): ptxkit_host_reduce,
 * ptxkit_host_scan and ptxkit_host_transform against a CPU reference, for
 * every operator and type the device ops provide, on pageable and pinned
 * inputs at misaligned addresses (1..15 bytes past an allocation), sizes 0,
 * 1, primes and 2^k +- 1 around the chunk boundaries (small chunks make
 * many of them), through every path (auto, staged, registered, mapped),
 * with poisoned outputs, guard bytes around them, and a check that the
 * input bytes did not change. Large arrays up to 2^PTXKIT_TEST_HOST_MAX_LOG
 * bytes (default 33: 8 GiB) run where the host has the memory free. Bad
 * input gets its documented status. */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ptxkit_ops.h"
#include "test_util.h"

static uint64_t rng;

typedef test_value value;

static bool is_float(ptxkit_dtype t) { return t == PTXKIT_FLOAT32 || t == PTXKIT_FLOAT64; }

static double as_double(ptxkit_dtype t, value v) {
    switch (t) {
    case PTXKIT_INT32: return v.i32;
    case PTXKIT_UINT32: return v.u32;
    case PTXKIT_INT64: return (double)v.i64;
    case PTXKIT_UINT64: return (double)v.u64;
    case PTXKIT_FLOAT32: return v.f32;
    default: return v.f64;
    }
}

/* Random elements: floats in [-1, 1); for AND mostly ones (one zero bit each)
 * so that the result is not 0 after a few elements. */
static void fill(ptxkit_reduce_op op, ptxkit_dtype t, void *base, size_t n) {
    size_t size = ptxkit_dtype_size(t);
    for (size_t i = 0; i < n; i++) {
        uint64_t r = test_rand(&rng);
        value v = {0};
        if (t == PTXKIT_FLOAT32) v.f32 = (float)((double)(r >> 11) / 4503599627370496.0 - 1.0);
        else if (t == PTXKIT_FLOAT64) v.f64 = (double)(r >> 11) / 4503599627370496.0 - 1.0;
        else if (op == PTXKIT_REDUCE_AND) v.u64 = ~(1ull << (r % (size * 8)));
        else v.u64 = r;
        memcpy((unsigned char *)base + i * size, v.bytes, size);
    }
}

static bool float_sum(ptxkit_reduce_op op, ptxkit_dtype t) { return is_float(t) && op == PTXKIT_REDUCE_SUM; }
static double unit(ptxkit_dtype t) { return t == PTXKIT_FLOAT32 ? 0x1p-24 : 0x1p-53; }

static void check_reduce_result(ptxkit_reduce_op op, ptxkit_dtype t, const void *in, size_t n, value got,
                                const char *where) {
    if (float_sum(op, t)) {
        double exact = 0, abs_sum = 0;
        for (size_t i = 0; i < n; i++) {
            double x = as_double(t, test_value_load(t, in, i));
            exact += x;
            abs_sum += fabs(x);
        }
        double bound = (t == PTXKIT_FLOAT32 ? 1e-5 : 1e-13) * abs_sum;
        if (!(fabs(as_double(t, got) - exact) <= bound))
            fail_msg("%s: %s %s n=%zu: %.17g, exact %.17g (bound %.3g)", where, ptxkit_reduce_op_name(op),
                     ptxkit_dtype_name(t), n, as_double(t, got), exact, bound);
        return;
    }
    value want = test_value_identity(op, t);
    for (size_t i = 0; i < n; i++) want = test_value_combine(op, t, want, test_value_load(t, in, i));
    if (memcmp(want.bytes, got.bytes, ptxkit_dtype_size(t)) != 0)
        fail_msg("%s: %s %s n=%zu: got %.17g, want %.17g", where, ptxkit_reduce_op_name(op), ptxkit_dtype_name(t), n,
                 as_double(t, got), as_double(t, want));
}

/* A float sum's out[i] is within ptxkit_host_scan's bound; the tile count
 * uses the smallest tile ptxkit_scan documents (5760) rounded down to 1024
 * and the chunk count the test's chunks, so the check is looser than the
 * bound, never tighter, and still catches a lost or doubled carry. */
static void check_scan(ptxkit_scan_kind kind, ptxkit_reduce_op op, ptxkit_dtype t, const void *in, const void *out,
                       size_t n, size_t chunk_elems, const char *where) {
    value acc = test_value_identity(op, t);
    double exact = 0, abs_sum = 0;
    size_t size = ptxkit_dtype_size(t);
    for (size_t i = 0; i < n; i++) {
        value x = test_value_load(t, in, i), got = test_value_load(t, out, i);
        if (float_sum(op, t)) {
            double xd = as_double(t, x);
            if (kind == PTXKIT_SCAN_INCLUSIVE) {
                exact += xd;
                abs_sum += fabs(xd);
            }
            double bound = ((double)(i + 1) / 1024 + (double)(i + 1) / (double)chunk_elems + 50) * unit(t) * abs_sum;
            if (!(fabs(as_double(t, got) - exact) <= bound))
                fail_msg("%s: %s %s %s n=%zu: out[%zu] = %.17g, exact %.17g (bound %.3g)", where,
                         ptxkit_scan_kind_name(kind), ptxkit_reduce_op_name(op), ptxkit_dtype_name(t), n, i,
                         as_double(t, got), exact, bound);
            if (kind == PTXKIT_SCAN_EXCLUSIVE) {
                exact += xd;
                abs_sum += fabs(xd);
            }
            continue;
        }
        if (kind == PTXKIT_SCAN_INCLUSIVE) acc = test_value_combine(op, t, acc, x);
        if (memcmp(acc.bytes, got.bytes, size) != 0)
            fail_msg("%s: %s %s %s n=%zu: out[%zu] = %.17g, want %.17g", where, ptxkit_scan_kind_name(kind),
                     ptxkit_reduce_op_name(op), ptxkit_dtype_name(t), n, i, as_double(t, got), as_double(t, acc));
        if (kind == PTXKIT_SCAN_EXCLUSIVE) acc = test_value_combine(op, t, acc, x);
    }
}

/* ---- host buffers: pageable or pinned, at an offset from the allocation ---- */

enum { GUARD = 64, POISON = 0xA5 };

typedef struct host_buf {
    unsigned char *base;    /* allocation: GUARD + offset + bytes + GUARD */
    unsigned char *p;       /* the array */
    size_t bytes, total;
    bool pinned;
} host_buf;

static host_buf buf_make(ptxkit_context *ctx, size_t bytes, size_t offset, bool pinned, unsigned flags) {
    host_buf b = {.bytes = bytes, .total = 2 * GUARD + offset + bytes, .pinned = pinned};
    if (pinned) assert_ok(ctx, ptxkit_host_alloc(ctx, b.total, flags, (void **)&b.base));
    else /* whole pages: two arrays never share one, so both can be registered (mapped path) */
        assert_non_null(b.base = aligned_alloc(4096, (b.total + 4095) / 4096 * 4096));
    memset(b.base, POISON, b.total);
    b.p = b.base + GUARD + offset;
    return b;
}

static void buf_free(ptxkit_context *ctx, host_buf *b) {
    if (b->pinned) ptxkit_host_free(ctx, b->base);
    else free(b->base);
    b->base = b->p = NULL;
}

/* Every byte outside the array still holds the poison. */
static void buf_guards_intact(const host_buf *b, const char *where) {
    for (unsigned char *q = b->base; q < b->p; q++)
        if (*q != POISON) fail_msg("%s: byte %td before the output was written", where, b->p - q);
    for (unsigned char *q = b->p + b->bytes; q < b->base + b->total; q++)
        if (*q != POISON) fail_msg("%s: byte %td after the output was written", where, q - (b->p + b->bytes));
}

/* A cheap fingerprint of the input, to see it unchanged after the call. */
static uint64_t fingerprint(const void *p, size_t bytes) {
    uint64_t h = 1469598103934665603ull;
    const unsigned char *c = p;
    for (size_t i = 0; i < bytes; i++) h = (h ^ c[i]) * 1099511628211ull;
    return h;
}

static const ptxkit_dtype types[] = {PTXKIT_INT32, PTXKIT_UINT32, PTXKIT_INT64, PTXKIT_UINT64, PTXKIT_FLOAT32,
                                     PTXKIT_FLOAT64};

/* 64 KiB chunks: sizes around 1, 2 and 3 chunks of every element size. */
enum { SMALL_CHUNK = 64 << 10 };

static size_t sizes_for(ptxkit_dtype t, size_t *out) {
    size_t c = SMALL_CHUNK / ptxkit_dtype_size(t), k = 0;
    const size_t list[] = {0, 1, 2, 31, 97, 4099, c - 1, c, c + 1, 2 * c - 1, 2 * c + 1, 3 * c + 7, 9 * c + 13};
    for (size_t i = 0; i < sizeof list / sizeof list[0]; i++) out[k++] = list[i];
    return k;
}

static void reduce_case(ptxkit_context *ctx, ptxkit_reduce_op op, ptxkit_dtype t, size_t n, size_t offset, bool pinned,
                        const ptxkit_host_options *o) {
    size_t size = ptxkit_dtype_size(t);
    host_buf in = buf_make(ctx, n * size, offset, pinned, pinned ? PTXKIT_HOST_MAPPED : 0);
    fill(op, t, in.p, n);
    uint64_t before = fingerprint(in.base, in.total);
    value got;
    memset(got.bytes, POISON, sizeof got.bytes);
    char where[160];
    snprintf(where, sizeof where, "ptxkit_host_reduce %s offset %zu path %s streams %d",
             pinned ? "pinned" : "pageable", offset, ptxkit_host_path_name(o->path), o->streams);
    assert_ok(ctx, ptxkit_host_reduce(ctx, op, t, got.bytes, in.p, n, o));
    check_reduce_result(op, t, in.p, n, got, where);
    for (size_t i = size; i < sizeof got.bytes; i++)
        if (got.bytes[i] != POISON) fail_msg("%s: wrote past the result", where);
    if (fingerprint(in.base, in.total) != before) fail_msg("%s: the input changed", where);
    buf_free(ctx, &in);
}

static void scan_case(ptxkit_context *ctx, ptxkit_scan_kind kind, ptxkit_reduce_op op, ptxkit_dtype t, size_t n,
                      size_t offset, bool pinned, const ptxkit_host_options *o) {
    size_t size = ptxkit_dtype_size(t);
    unsigned flags = pinned ? PTXKIT_HOST_MAPPED : 0;
    host_buf in = buf_make(ctx, n * size, offset, pinned, flags);
    host_buf out = buf_make(ctx, n * size, (offset * 7) % 16, pinned, flags);
    fill(op, t, in.p, n);
    uint64_t before = fingerprint(in.base, in.total);
    char where[160];
    snprintf(where, sizeof where, "ptxkit_host_scan %s offset %zu path %s", pinned ? "pinned" : "pageable", offset,
             ptxkit_host_path_name(o->path));
    assert_ok(ctx, ptxkit_host_scan(ctx, kind, op, t, out.p, in.p, n, o));
    check_scan(kind, op, t, in.p, out.p, n, (o->chunk_bytes ? o->chunk_bytes : PTXKIT_HOST_CHUNK_BYTES) / size, where);
    buf_guards_intact(&out, where);
    if (fingerprint(in.base, in.total) != before) fail_msg("%s: the input changed", where);
    buf_free(ctx, &in);
    buf_free(ctx, &out);
}

/* Every (op, type) the device reduce provides, every size, pageable and
 * pinned, at offsets 1..15. */
static void test_reduce_every_op(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    ptxkit_host_options o = {.chunk_bytes = SMALL_CHUNK, .threads = 3};
    size_t sizes[16];
    int round = 0;
    for (int op = 0; op < PTXKIT_REDUCE_OP_COUNT; op++)
        for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++) {
            ptxkit_dtype t = types[ti];
            if (ptxkit_reduce_supported(ctx, (ptxkit_reduce_op)op, t) != PTXKIT_SUCCESS) continue;
            size_t count = sizes_for(t, sizes);
            for (size_t s = 0; s < count; s++, round++)
                reduce_case(ctx, (ptxkit_reduce_op)op, t, sizes[s], 1 + round % 15, round % 2, &o);
        }
}

static void test_scan_every_op(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    ptxkit_host_options o = {.chunk_bytes = SMALL_CHUNK, .threads = 3, .streams = 3};
    size_t sizes[16];
    int round = 0;
    for (int kind = 0; kind < PTXKIT_SCAN_KIND_COUNT; kind++)
        for (int op = 0; op < PTXKIT_REDUCE_OP_COUNT; op++)
            for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++) {
                ptxkit_dtype t = types[ti];
                if (ptxkit_scan_supported(ctx, (ptxkit_scan_kind)kind, (ptxkit_reduce_op)op, t) != PTXKIT_SUCCESS) continue;
                size_t count = sizes_for(t, sizes);
                for (size_t s = 0; s < count; s++, round++)
                    scan_case(ctx, (ptxkit_scan_kind)kind, (ptxkit_reduce_op)op, t, sizes[s], 1 + round % 15,
                              round % 2, &o);
            }
}

/* Every path and stream count gives the same answers; the mapped path needs
 * element-aligned arrays. */
static void test_paths(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    const size_t n = 5 * (SMALL_CHUNK / 4) + 3;
    for (int path = 0; path < PTXKIT_HOST_PATH_COUNT; path++)
        for (int streams = 1; streams <= PTXKIT_HOST_MAX_STREAMS; streams *= 2)
            for (int pinned = 0; pinned < 2; pinned++) {
                ptxkit_host_options o = {.path = (ptxkit_host_path)path, .chunk_bytes = SMALL_CHUNK,
                                         .streams = streams, .threads = 1 + streams % 4};
                size_t offset = path == PTXKIT_HOST_PATH_MAPPED ? 8 : (size_t)(streams + pinned) % 16;
                reduce_case(ctx, PTXKIT_REDUCE_SUM, PTXKIT_UINT32, n, offset, pinned, &o);
                reduce_case(ctx, PTXKIT_REDUCE_MAX, PTXKIT_FLOAT64, n / 2 + 1, offset, pinned, &o);
                scan_case(ctx, PTXKIT_SCAN_EXCLUSIVE, PTXKIT_REDUCE_SUM, PTXKIT_INT64, n / 2, offset, pinned, &o);
                scan_case(ctx, PTXKIT_SCAN_INCLUSIVE, PTXKIT_REDUCE_SUM, PTXKIT_FLOAT32, n, offset, pinned, &o);
            }
}

/* ---- transform ---- */

static const char transform_source[] =
    "extern \"C\" __global__ void affine(int *out, const int *in, unsigned long long n) {\n"
    "    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;\n"
    "         i += (unsigned long long)gridDim.x * blockDim.x)\n"
    "        out[i] = in[i] * 3 + 1;\n"
    "}\n";

static ptxkit_kernel *affine_kernel(ptxkit_context *ctx) {
    static ptxkit_program *program;
    if (!program) assert_ok(NULL, ptxkit_program_create("host_transform_test.cu", transform_source, NULL, 0, &program));
    ptxkit_kernel *k = NULL;
    assert_ok(ctx, ptxkit_program_kernel_get(ctx, program, "affine", NULL, 0, &k));
    return k;
}

static void transform_case(ptxkit_context *ctx, ptxkit_kernel *k, size_t n, size_t in_offset, size_t out_offset,
                           bool pinned, const ptxkit_host_options *o) {
    unsigned flags = pinned ? PTXKIT_HOST_MAPPED : 0;
    host_buf in = buf_make(ctx, n * 4, in_offset, pinned, flags);
    host_buf out = buf_make(ctx, n * 4, out_offset, !pinned, flags); /* the other kind: mixed pairs too */
    test_fill_random(in.p, n * 4, &rng);
    uint64_t before = fingerprint(in.base, in.total);
    char where[160];
    snprintf(where, sizeof where, "ptxkit_host_transform %s n=%zu in+%zu out+%zu path %s", k ? "affine" : "copy", n,
             in_offset, out_offset, ptxkit_host_path_name(o->path));
    assert_ok(ctx, ptxkit_host_transform(ctx, k, PTXKIT_INT32, out.p, in.p, n, o));
    for (size_t i = 0; i < n; i++) {
        int32_t x, y;
        memcpy(&x, in.p + 4 * i, 4);
        memcpy(&y, out.p + 4 * i, 4);
        int32_t want = k ? (int32_t)((uint32_t)x * 3u + 1u) : x;
        if (y != want) fail_msg("%s: out[%zu] = %d, want %d", where, i, y, want);
    }
    buf_guards_intact(&out, where);
    if (fingerprint(in.base, in.total) != before) fail_msg("%s: the input changed", where);
    buf_free(ctx, &in);
    buf_free(ctx, &out);
}

static void test_transform(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    ptxkit_kernel *k = affine_kernel(ctx);
    const size_t c = SMALL_CHUNK / 4;
    const size_t sizes[] = {0, 1, 3, 97, c - 1, c, c + 1, 4 * c + 5, 11 * c - 1};
    int round = 0;
    for (int path = 0; path < PTXKIT_HOST_PATH_COUNT; path++)
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++, round++) {
            ptxkit_host_options o = {.path = (ptxkit_host_path)path, .chunk_bytes = SMALL_CHUNK, .threads = 4};
            bool mapped = path == PTXKIT_HOST_PATH_MAPPED;
            size_t in_off = mapped ? 4 * (size_t)(round % 4) : (size_t)(1 + round % 15);
            size_t out_off = mapped ? 4 * (size_t)((round + 1) % 4) : (size_t)(round * 5 % 16);
            transform_case(ctx, k, sizes[s], in_off, out_off, round % 2, &o);
            transform_case(ctx, NULL, sizes[s], in_off, out_off, (round + 1) % 2, &o);
        }
}

/* ---- large arrays ---- */

static int max_log(void) {
    const char *e = getenv("PTXKIT_TEST_HOST_MAX_LOG");
    int v = e && *e ? atoi(e) : 33;
    return v < 20 ? 20 : v > 36 ? 36 : v;
}

static bool host_memory_for(size_t bytes) {
    long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || page <= 0) return false;
    /* leave a quarter free for the ring and the rest of the system */
    return (double)pages * (double)page * 0.75 >= (double)bytes;
}

/* uint32 sums (exact, wrapping) and an int32 inclusive scan, pinned and
 * pageable, with the default chunks and streams, up to 2^max_log bytes. */
static void test_large(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    int top = max_log();
    const int logs[] = {26, 30, top};
    for (size_t li = 0; li < sizeof logs / sizeof logs[0]; li++) {
        int log = logs[li];
        if (log > top || (li && log <= logs[li - 1])) continue;
        size_t bytes = ((size_t)1 << log) + 12, n = bytes / 4;
        for (int pinned = 0; pinned < 2; pinned++) {
            if (!host_memory_for(bytes + 64)) {
                print_message("large: 2^%d bytes %s skipped: not enough free host memory\n", log,
                              pinned ? "pinned" : "pageable");
                continue;
            }
            ptxkit_host_options o = {0};
            host_buf in = buf_make(ctx, bytes, 3, pinned, 0);
            uint32_t *words = malloc(4096 * sizeof *words);
            assert_non_null(words);
            test_fill_random(words, 4096 * sizeof *words, &rng);
            uint32_t want = 0;
            for (size_t i = 0; i < n; i++) {
                uint32_t w = words[i % 4096] ^ (uint32_t)(i * 2654435761u);
                memcpy(in.p + 4 * i, &w, 4);
                want += w;
            }
            uint64_t before = fingerprint(in.p, 1 << 20) ^ fingerprint(in.p + bytes - (1 << 20), 1 << 20);
            uint32_t got = 0;
            assert_ok(ctx, ptxkit_host_reduce(ctx, PTXKIT_REDUCE_SUM, PTXKIT_UINT32, &got, in.p, n, &o));
            if (got != want)
                fail_msg("large reduce 2^%d %s: got %u, want %u", log, pinned ? "pinned" : "pageable", got, want);
            if ((fingerprint(in.p, 1 << 20) ^ fingerprint(in.p + bytes - (1 << 20), 1 << 20)) != before)
                fail_msg("large reduce: the input changed");
            if (host_memory_for(2 * bytes + 128)) {
                host_buf out = buf_make(ctx, bytes, 5, !pinned, 0);
                assert_ok(ctx, ptxkit_host_scan(ctx, PTXKIT_SCAN_INCLUSIVE, PTXKIT_REDUCE_SUM, PTXKIT_INT32, out.p,
                                                in.p, n, &o));
                uint32_t acc = 0;
                for (size_t i = 0; i < n; i++) {
                    uint32_t x, y;
                    memcpy(&x, in.p + 4 * i, 4);
                    memcpy(&y, out.p + 4 * i, 4);
                    acc += x;
                    if (y != acc) fail_msg("large scan 2^%d: out[%zu] = %u, want %u", log, i, y, acc);
                }
                buf_guards_intact(&out, "large scan");
                buf_free(ctx, &out);
            }
            free(words);
            buf_free(ctx, &in);
        }
    }
}

/* ---- bad input ---- */

static void test_bad_input(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    int32_t a[64] = {0}, r = 7;
    ptxkit_host_options o = {0};
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_host_reduce(NULL, PTXKIT_REDUCE_SUM, PTXKIT_INT32, &r, a, 4, NULL));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_host_reduce(ctx, PTXKIT_REDUCE_SUM, PTXKIT_INT32, NULL, a, 4, NULL));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_host_reduce(ctx, PTXKIT_REDUCE_SUM, PTXKIT_INT32, &r, NULL, 4, NULL));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT,
                  ptxkit_host_reduce(ctx, PTXKIT_REDUCE_OP_COUNT, PTXKIT_INT32, &r, a, 4, NULL));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT,
                  ptxkit_host_reduce(ctx, PTXKIT_REDUCE_SUM, PTXKIT_DTYPE_COUNT, &r, a, 4, NULL));
    assert_status(PTXKIT_ERROR_UNSUPPORTED, ptxkit_host_reduce(ctx, PTXKIT_REDUCE_AND, PTXKIT_FLOAT32, &r, a, 4, NULL));
    assert_status(PTXKIT_ERROR_OVERFLOW,
                  ptxkit_host_reduce(ctx, PTXKIT_REDUCE_SUM, PTXKIT_INT32, &r, a, SIZE_MAX / 2, NULL));
    assert_status(PTXKIT_ERROR_OVERFLOW,
                  ptxkit_host_scan(ctx, PTXKIT_SCAN_INCLUSIVE, PTXKIT_REDUCE_SUM, PTXKIT_INT32, a,
                                   (const void *)(uintptr_t)(UINTPTR_MAX - 64), 64, NULL));
    /* n == 0: the identity, not an error; the arrays may be NULL */
    assert_ok(ctx, ptxkit_host_reduce(ctx, PTXKIT_REDUCE_SUM, PTXKIT_INT32, &r, NULL, 0, NULL));
    assert_int_equal(r, 0);
    assert_ok(ctx, ptxkit_host_reduce(ctx, PTXKIT_REDUCE_MIN, PTXKIT_INT32, &r, a, 0, NULL));
    assert_int_equal(r, INT32_MAX);
    assert_ok(ctx, ptxkit_host_scan(ctx, PTXKIT_SCAN_EXCLUSIVE, PTXKIT_REDUCE_SUM, PTXKIT_INT32, NULL, NULL, 0, NULL));
    assert_ok(ctx, ptxkit_host_transform(ctx, NULL, PTXKIT_INT32, NULL, NULL, 0, NULL));
    /* overlapping arrays, in place included: the input is never written */
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT,
                  ptxkit_host_scan(ctx, PTXKIT_SCAN_INCLUSIVE, PTXKIT_REDUCE_SUM, PTXKIT_INT32, a + 1, a, 32, NULL));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT,
                  ptxkit_host_scan(ctx, PTXKIT_SCAN_INCLUSIVE, PTXKIT_REDUCE_SUM, PTXKIT_INT32, a, a, 32, NULL));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_host_transform(ctx, NULL, PTXKIT_INT32, a, a + 31, 32, NULL));
    assert_int_equal(r, INT32_MAX); /* failed calls wrote no result */
    /* a device address given as a host pointer */
    ptxkit_dptr d = 0;
    assert_ok(ctx, ptxkit_memory_alloc(ctx, 4096, &d));
    void *dev = (void *)(uintptr_t)d;
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_host_reduce(ctx, PTXKIT_REDUCE_SUM, PTXKIT_INT32, &r, dev, 16, NULL));
    assert_true(strstr(ptxkit_last_error(), "device memory") != NULL);
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT,
                  ptxkit_host_scan(ctx, PTXKIT_SCAN_INCLUSIVE, PTXKIT_REDUCE_SUM, PTXKIT_INT32, dev, a, 16, NULL));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_host_reduce(ctx, PTXKIT_REDUCE_SUM, PTXKIT_INT32, dev, a, 16, NULL));
    assert_int_equal(r, INT32_MAX);
    assert_ok(ctx, ptxkit_memory_free(ctx, d));
    /* options out of range */
    o = (ptxkit_host_options){.chunk_bytes = 1000};
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_host_reduce(ctx, PTXKIT_REDUCE_SUM, PTXKIT_INT32, &r, a, 4, &o));
    o = (ptxkit_host_options){.streams = PTXKIT_HOST_MAX_STREAMS + 1};
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_host_reduce(ctx, PTXKIT_REDUCE_SUM, PTXKIT_INT32, &r, a, 4, &o));
    o = (ptxkit_host_options){.threads = -1};
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_host_reduce(ctx, PTXKIT_REDUCE_SUM, PTXKIT_INT32, &r, a, 4, &o));
    o = (ptxkit_host_options){.path = PTXKIT_HOST_PATH_COUNT};
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_host_reduce(ctx, PTXKIT_REDUCE_SUM, PTXKIT_INT32, &r, a, 4, &o));
    o = (ptxkit_host_options){.reserved = {1}};
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_host_reduce(ctx, PTXKIT_REDUCE_SUM, PTXKIT_INT32, &r, a, 4, &o));
    /* mapped: element-aligned arrays only */
    o = (ptxkit_host_options){.path = PTXKIT_HOST_PATH_MAPPED};
    assert_status(PTXKIT_ERROR_MISALIGNED,
                  ptxkit_host_reduce(ctx, PTXKIT_REDUCE_SUM, PTXKIT_INT32, &r, (char *)a + 1, 4, &o));
    /* a kernel of another context */
    ptxkit_context *other = NULL;
    assert_ok(NULL, ptxkit_context_create(0, &other));
    ptxkit_kernel *k = affine_kernel(other);
    int32_t b[64];
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_host_transform(ctx, k, PTXKIT_INT32, b, a, 4, NULL));
    /* a ring of its own: closing the other context frees it */
    assert_ok(other, ptxkit_host_reduce(other, PTXKIT_REDUCE_SUM, PTXKIT_INT32, &r, a, 64, NULL));
    assert_int_equal(r, 0);
    ptxkit_context_destroy(other);
}

/* Not capturable: the capturing thread gets PTXKIT_ERROR_CAPTURE and the
 * capture stays usable. */
static void test_capture_refused(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    ptxkit_stream *s = NULL;
    assert_ok(ctx, ptxkit_stream_create(ctx, PTXKIT_STREAM_NON_BLOCKING, 0, &s));
    int32_t a[16] = {1, 2, 3}, out[16], r = 5;
    assert_ok(ctx, ptxkit_graph_capture_begin(ctx, s));
    assert_status(PTXKIT_ERROR_CAPTURE, ptxkit_host_reduce(ctx, PTXKIT_REDUCE_SUM, PTXKIT_INT32, &r, a, 16, NULL));
    assert_status(PTXKIT_ERROR_CAPTURE,
                  ptxkit_host_scan(ctx, PTXKIT_SCAN_INCLUSIVE, PTXKIT_REDUCE_SUM, PTXKIT_INT32, out, a, 16, NULL));
    assert_status(PTXKIT_ERROR_CAPTURE, ptxkit_host_transform(ctx, NULL, PTXKIT_INT32, out, a, 16, NULL));
    assert_int_equal(r, 5);
    ptxkit_graph *g = NULL;
    assert_ok(ctx, ptxkit_graph_capture_end(ctx, s, &g));
    ptxkit_graph_destroy(g);
    assert_ok(ctx, ptxkit_host_reduce(ctx, PTXKIT_REDUCE_SUM, PTXKIT_INT32, &r, a, 16, NULL));
    assert_int_equal(r, 6);
    ptxkit_stream_destroy(s);
}

/* A range registered by the application is pinned: used directly, and
 * still registered (by the application) afterwards. */
static void test_registered_by_caller(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    size_t n = 3 * (SMALL_CHUNK / 8) + 1;
    uint64_t *in = malloc(n * 8);
    assert_non_null(in);
    uint64_t want = 0;
    for (size_t i = 0; i < n; i++) want += in[i] = test_rand(&rng);
    assert_ok(ctx, ptxkit_host_register(ctx, in, n * 8, 0));
    ptxkit_host_options o = {.chunk_bytes = SMALL_CHUNK, .path = PTXKIT_HOST_PATH_REGISTERED};
    uint64_t got = 0;
    assert_ok(ctx, ptxkit_host_reduce(ctx, PTXKIT_REDUCE_SUM, PTXKIT_UINT64, &got, in, n, &o));
    assert_true(got == want);
    assert_ok(ctx, ptxkit_host_unregister(ctx, in)); /* still the caller's registration */
    free(in);
}

int main(void) {
    test_require_gpu();
    rng = test_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_capture_refused),
        cmocka_unit_test(test_registered_by_caller),
        cmocka_unit_test(test_paths),
        cmocka_unit_test(test_transform),
        cmocka_unit_test(test_reduce_every_op),
        cmocka_unit_test(test_scan_every_op),
        cmocka_unit_test(test_large),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    test_gpu_release();
    return rc;
}
