/* <ptxkit/async.cuh> on a GPU, through the public program/kernel/launch API
 * with the kernels of tests/async_kernels.cu (its path is argv[1]): cp.async
 * of every width and operator at every alignment its width allows, with
 * zero-filled tails; multi-stage pipelines over many tiles; mbarrier phases
 * over many rounds (ordinary, cp.async.mbarrier.arrive.noinc, and .noinc with extra
 * arrivals); split arrive/test_wait; bulk copies both ways (sm_90). Every
 * output is poisoned first and compared exactly with a CPU reference,
 * guard bytes past the end included. PTXKIT_TEST_ASYNC_SMALL=1 keeps sizes
 * and rounds small (for compute-sanitizer). */
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

#define POISON 0xA5u

static const char *kernels_path;
static ptxkit_program *program;
static uint64_t rng;
static int small;

static int device_arch(void) {
    ptxkit_device_info d;
    assert_ok(NULL, ptxkit_device_info_get(test_gpu(), &d));
    return d.cc_major * 10 + d.cc_minor;
}

static ptxkit_kernel *kernel(const char *entry, const char *const *defines, int count) {
    ptxkit_context *ctx = test_gpu();
    if (!program) assert_ok(NULL, ptxkit_program_create_from_file(kernels_path, NULL, 0, &program));
    ptxkit_kernel *k = NULL;
    assert_ok(ctx, ptxkit_program_kernel_get(ctx, program, entry, defines, count, &k));
    return k;
}

static unsigned grid_for(size_t units, size_t per_block, unsigned cap) {
    size_t g = (units + per_block - 1) / per_block;
    return g == 0 ? 1 : g > cap ? cap : (unsigned)g;
}

/* ---- cp.async of every width -------------------------------------------- */

static void copy_width_case(int width, int cg, size_t n, size_t offset) {
    ptxkit_context *ctx = test_gpu();
    char w[32], c[16];
    snprintf(w, sizeof w, "WIDTH=%d", width);
    snprintf(c, sizeof c, "CG=%d", cg);
    const char *defines[] = {"BLOCK_SIZE=128", "CHUNKS=2", w, c};
    ptxkit_kernel *k = kernel("copy_width", defines, 4);
    size_t chunks = (n + (size_t)width - 1) / (size_t)width + 1, written = chunks * (size_t)width;
    size_t room = offset + written + 64;
    unsigned char *src = malloc(room), *got = malloc(room);
    assert_true(src && got);
    test_fill_random(src, room, &rng);
    ptxkit_dptr dsrc, ddst;
    assert_ok(ctx, ptxkit_memory_alloc(ctx, room, &dsrc));
    assert_ok(ctx, ptxkit_memory_alloc(ctx, room, &ddst));
    assert_ok(ctx, ptxkit_memory_write(ctx, dsrc, src, room));
    assert_ok(ctx, ptxkit_memory_set8_async(ctx, ddst, POISON, room, NULL));
    ptxkit_dptr s = dsrc + offset, d = ddst + offset;
    unsigned long long count = n;
    void *args[] = {&s, &d, &count};
    unsigned grid = grid_for(chunks, 256, small ? 4 : 48);
    assert_ok(ctx, ptxkit_kernel_launch(k, (ptxkit_dim3){grid, 1, 1}, (ptxkit_dim3){128, 1, 1}, 0, NULL, args));
    assert_ok(ctx, ptxkit_context_synchronize(ctx));
    assert_ok(ctx, ptxkit_memory_read(ctx, got, ddst, room));
    for (size_t i = 0; i < room; i++) {
        unsigned want = i < offset ? POISON : i - offset < n ? src[i] : i - offset < written ? 0u : POISON;
        if (got[i] != want)
            fail_msg("copy_width %d%s, %zu bytes at offset %zu: byte %zu is 0x%02x, want 0x%02x", width,
                     cg ? " cg" : "", n, offset, i, got[i], want);
    }
    ptxkit_memory_free(ctx, dsrc);
    ptxkit_memory_free(ctx, ddst);
    free(src);
    free(got);
}

static void test_copy_widths(void **state) {
    (void)state;
    if (device_arch() < 80) skip();
    static const size_t sizes[] = {0, 1, 17, 4097, 3, 4, 7, 8, 15, 16, 31, 33, 255, 4095, 65537, 1048583};
    static const struct { int width, cg; } variants[] = {{4, 0}, {8, 0}, {16, 0}, {16, 1}};
    /* small: the first four sizes at two offsets (compute-sanitizer) */
    size_t size_count = small ? 4 : sizeof sizes / sizeof sizes[0];
    for (size_t v = 0; v < 4; v++)
        for (size_t off = 0; off < (small ? 2u : 4u) * (size_t)variants[v].width; off += (size_t)variants[v].width)
            for (size_t i = 0; i < size_count; i++) copy_width_case(variants[v].width, variants[v].cg, sizes[i], off);
}

/* ---- multi-stage pipelines ---------------------------------------------- */

static void pipeline_case(int stages, int vec, int block, size_t n, size_t offset_words) {
    ptxkit_context *ctx = test_gpu();
    char st[16], v[16], b[32];
    snprintf(st, sizeof st, "STAGES=%d", stages);
    snprintf(v, sizeof v, "VEC=%d", vec);
    snprintf(b, sizeof b, "BLOCK_SIZE=%d", block);
    const char *defines[] = {b, st, v};
    ptxkit_kernel *k = kernel("pipeline", defines, 3);
    size_t room = n + offset_words + 8, tile = (size_t)block * (size_t)vec;
    uint32_t *in = malloc(room * 4), *got = malloc(room * 4);
    assert_true(in && got);
    test_fill_random(in, room * 4, &rng);
    ptxkit_dptr din, dout;
    assert_ok(ctx, ptxkit_memory_alloc(ctx, room * 4, &din));
    assert_ok(ctx, ptxkit_memory_alloc(ctx, room * 4, &dout));
    assert_ok(ctx, ptxkit_memory_write(ctx, din, in, room * 4));
    assert_ok(ctx, ptxkit_memory_set32_async(ctx, dout, 0xA5A5A5A5u, room, NULL));
    ptxkit_dptr s = din + offset_words * 4, d = dout + offset_words * 4;
    unsigned long long count = n;
    void *args[] = {&s, &d, &count};
    /* few blocks: each walks many tiles through its ring of buffers */
    unsigned grid = grid_for(n, tile * 16, small ? 2 : 8);
    assert_ok(ctx, ptxkit_kernel_launch(k, (ptxkit_dim3){grid, 1, 1}, (ptxkit_dim3){(unsigned)block, 1, 1}, 0, NULL, args));
    assert_ok(ctx, ptxkit_context_synchronize(ctx));
    assert_ok(ctx, ptxkit_memory_read(ctx, got, dout, room * 4));
    const uint32_t *x = in + offset_words;
    for (size_t i = 0; i < room; i++) {
        uint32_t want = 0xA5A5A5A5u;
        if (i >= offset_words && i - offset_words < n) {
            size_t j = i - offset_words;
            uint32_t next = (j + 1) % tile != 0 && j + 1 < n ? x[j + 1] : 0u;
            want = 3u * x[j] + next;
        }
        if (got[i] != want)
            fail_msg("pipeline %d stages, %d-word copies, block %d, n %zu: word %zu is 0x%08x, want 0x%08x", stages, vec,
                     block, n, i, got[i], want);
    }
    ptxkit_memory_free(ctx, din);
    ptxkit_memory_free(ctx, dout);
    free(in);
    free(got);
}

static void test_pipelines(void **state) {
    (void)state;
    if (device_arch() < 80) skip();
    static const size_t sizes[] = {1, 4097, 0, 5, 127, 513, 65537, 1048583};
    /* small: 1 and 3 stages, 128 threads, the first two sizes */
    size_t size_count = small ? 2 : sizeof sizes / sizeof sizes[0];
    for (int stages = 1; stages <= 4; stages += small ? 2 : 1)
        for (int vec = 1; vec <= 4; vec += 3)
            for (int block = 128; block <= (small ? 128 : 256); block *= 2)
                for (size_t i = 0; i < size_count; i++)
                    /* 16-byte copies need 16-byte alignment; 4-byte ones take any word */
                    pipeline_case(stages, vec, block, sizes[i], vec == 1 ? 1 : 4);
}

/* ---- mbarrier phases -------------------------------------------------- */

static void phases_case(int fill, int wait_test, int depth, int block, unsigned rounds) {
    ptxkit_context *ctx = test_gpu();
    int producers = block / 4;
    char f[16], dp[16], b[32], p[32], wt[16];
    snprintf(wt, sizeof wt, "WAIT_TEST=%d", wait_test);
    snprintf(f, sizeof f, "FILL=%d", fill);
    snprintf(dp, sizeof dp, "DEPTH=%d", depth);
    snprintf(b, sizeof b, "BLOCK_SIZE=%d", block);
    snprintf(p, sizeof p, "PRODUCERS=%d", producers);
    const char *defines[] = {b, f, dp, p, wt};
    ptxkit_kernel *k = kernel("phases", defines, 5);
    int consumers = block - producers;
    size_t words = (size_t)rounds * (size_t)producers;
    uint32_t *in = malloc(words * 4 + 4);
    uint64_t *got = malloc(((size_t)consumers + 1) * 8);
    assert_true(in && got);
    test_fill_random(in, words * 4 + 4, &rng);
    ptxkit_dptr din, dsums;
    assert_ok(ctx, ptxkit_memory_alloc(ctx, words * 4 + 4, &din));
    assert_ok(ctx, ptxkit_memory_alloc(ctx, ((size_t)consumers + 1) * 8, &dsums));
    assert_ok(ctx, ptxkit_memory_write(ctx, din, in, words * 4 + 4));
    assert_ok(ctx, ptxkit_memory_set32_async(ctx, dsums, 0xA5A5A5A5u, ((size_t)consumers + 1) * 2, NULL));
    void *args[] = {&din, &dsums, &rounds};
    assert_ok(ctx, ptxkit_kernel_launch(k, (ptxkit_dim3){1, 1, 1}, (ptxkit_dim3){(unsigned)block, 1, 1}, 0, NULL, args));
    assert_ok(ctx, ptxkit_context_synchronize(ctx));
    assert_ok(ctx, ptxkit_memory_read(ctx, got, dsums, ((size_t)consumers + 1) * 8));
    for (int c = 0; c <= consumers; c++) {
        uint64_t want = 0xA5A5A5A5A5A5A5A5ull;
        if (c < consumers) {
            want = 0;
            unsigned word = (unsigned)(c * 7) % (unsigned)producers;
            for (unsigned r = 0; r < rounds; r++) want += (uint32_t)(in[(size_t)r * producers + word] + (fill == 0 ? r : 0));
        }
        if (got[c] != want)
            fail_msg("phases fill %d wait %s depth %d block %d, %u rounds: consumer %d summed %llu, want %llu", fill,
                     wait_test ? "test_wait" : "helper", depth, block, rounds, c, (unsigned long long)got[c],
                     (unsigned long long)want);
    }
    ptxkit_memory_free(ctx, din);
    ptxkit_memory_free(ctx, dsums);
    free(in);
    free(got);
}

static void test_barrier_phases(void **state) {
    (void)state;
    if (device_arch() < 80) skip();
    unsigned rounds[] = {3, small ? 64u : 5001u, 1, 2};
    /* small: depths 1 and 2, 128 threads, 3 and 64 rounds. PTXKIT_TEST_ASYNC_FILL=F and
     * PTXKIT_TEST_ASYNC_WAIT=helper|test keep one fill and one wait (to isolate a sanitizer's report) */
    const char *only_fill = getenv("PTXKIT_TEST_ASYNC_FILL"), *only_wait = getenv("PTXKIT_TEST_ASYNC_WAIT");
    for (int fill = 0; fill <= 4; fill++)
        for (int wait_test = 0; wait_test <= 1; wait_test++) {
            if (only_fill && atoi(only_fill) != fill) continue;
            if (only_wait && (strcmp(only_wait, "test") == 0) != wait_test) continue;
            for (int depth = 1; depth <= (small ? 2 : 4); depth *= 2)
                for (int block = 128; block <= (small ? 128 : 256); block *= 2)
                    for (size_t r = 0; r < (small ? 2u : 4u); r++) phases_case(fill, wait_test, depth, block, rounds[r]);
        }
}

static void test_split_arrive(void **state) {
    (void)state;
    if (device_arch() < 80) skip();
    ptxkit_context *ctx = test_gpu();
    for (int block = 32; block <= 512; block *= 4) {
        char b[32];
        snprintf(b, sizeof b, "BLOCK_SIZE=%d", block);
        const char *defines[] = {b};
        ptxkit_kernel *k = kernel("split_arrive", defines, 1);
        unsigned rounds = small ? 33 : 4001, grid = small ? 2 : 3;
        size_t words = (size_t)grid * (size_t)block + 1;
        uint32_t *got = malloc(words * 4);
        assert_non_null(got);
        ptxkit_dptr dout;
        assert_ok(ctx, ptxkit_memory_alloc(ctx, words * 4, &dout));
        assert_ok(ctx, ptxkit_memory_set32_async(ctx, dout, 0xA5A5A5A5u, words, NULL));
        void *args[] = {&dout, &rounds};
        assert_ok(ctx, ptxkit_kernel_launch(k, (ptxkit_dim3){grid, 1, 1}, (ptxkit_dim3){(unsigned)block, 1, 1}, 0, NULL, args));
        assert_ok(ctx, ptxkit_context_synchronize(ctx));
        assert_ok(ctx, ptxkit_memory_read(ctx, got, dout, words * 4));
        for (size_t i = 0; i < words; i++) {
            uint32_t want = 0xA5A5A5A5u;
            if (i + 1 < words) {
                /* after round r the neighbour's word is its index + r + 1 */
                uint32_t neighbour = (uint32_t)((i % (size_t)block + 1) % (size_t)block);
                want = 0;
                for (unsigned r = 0; r < rounds; r++) want += neighbour + r + 1;
            }
            if (got[i] != want) fail_msg("split_arrive block %d: word %zu is %u, want %u", block, i, got[i], want);
        }
        ptxkit_memory_free(ctx, dout);
        free(got);
    }
}

/* ---- bulk copies (sm_90) ------------------------------------------------- */

static void bulk_case(int tile_bytes, int pieces, size_t n, size_t in_off, size_t out_off) {
    ptxkit_context *ctx = test_gpu();
    char t[32], p[16];
    snprintf(t, sizeof t, "TILE_BYTES=%d", tile_bytes);
    snprintf(p, sizeof p, "PIECES=%d", pieces);
    const char *defines[] = {"BLOCK_SIZE=128", t, p};
    ptxkit_kernel *k = kernel("bulk_roundtrip", defines, 3);
    size_t room = n + 128 + 64;
    uint32_t *in = malloc(room), *got = malloc(room);
    assert_true(in && got);
    test_fill_random(in, room, &rng);
    ptxkit_dptr din, dout;
    assert_ok(ctx, ptxkit_memory_alloc(ctx, room, &din));
    assert_ok(ctx, ptxkit_memory_alloc(ctx, room, &dout));
    assert_ok(ctx, ptxkit_memory_write(ctx, din, in, room));
    assert_ok(ctx, ptxkit_memory_set32_async(ctx, dout, 0xA5A5A5A5u, room / 4, NULL));
    ptxkit_dptr s = din + in_off, d = dout + out_off;
    unsigned long long count = n;
    void *args[] = {&s, &d, &count};
    unsigned grid = grid_for(n, (size_t)tile_bytes * 4, small ? 3 : 40);
    assert_ok(ctx, ptxkit_kernel_launch(k, (ptxkit_dim3){grid, 1, 1}, (ptxkit_dim3){128, 1, 1}, 0, NULL, args));
    assert_ok(ctx, ptxkit_context_synchronize(ctx));
    assert_ok(ctx, ptxkit_memory_read(ctx, got, dout, room));
    for (size_t w = 0; w < room / 4; w++) {
        size_t at = w * 4;
        uint32_t want = at >= out_off && at - out_off < n ? in[(at - out_off + in_off) / 4] + 1u : 0xA5A5A5A5u;
        if (got[w] != want)
            fail_msg("bulk tile %d x %d pieces, %zu bytes, in +%zu, out +%zu: byte %zu is 0x%08x, want 0x%08x", tile_bytes,
                     pieces, n, in_off, out_off, at, got[w], want);
    }
    ptxkit_memory_free(ctx, din);
    ptxkit_memory_free(ctx, dout);
    free(in);
    free(got);
}

static void test_bulk_copies(void **state) {
    (void)state;
    if (device_arch() < 90) {
        print_message("bulk copies need sm_90: skipped\n");
        skip();
    }
    static const size_t sizes[] = {16, 4112, 65536 + 112, 0, 48, 1024, 4096, 1048576 + 48};
    static const size_t offsets[][2] = {{16, 48}, {80, 16}, {0, 0}, {48, 112}};
    /* small: 1024-byte tiles in 1 and 3 pieces, two offsets, the first three sizes */
    size_t size_count = small ? 3 : sizeof sizes / sizeof sizes[0];
    for (int tile = 1024; tile <= (small ? 1024 : 4096); tile *= 4)
        for (int pieces = 1; pieces <= 3; pieces += small ? 2 : 1)
            for (size_t o = 0; o < (small ? 2u : 4u); o++)
                for (size_t i = 0; i < size_count; i++) bulk_case(tile, pieces, sizes[i], offsets[o][0], offsets[o][1]);
}

/* The header compiles for the GPU's architecture with what it has: a
 * kernel that uses a bulk copy on a GPU before sm_90 is a compile error
 * naming the helper, not a wrong answer. */
static void test_arch_guard(void **state) {
    (void)state;
    static const char source[] =
        "#include <ptxkit/async.cuh>\n"
        "extern \"C\" __global__ void has(int *out) { out[0] = PTXKIT_HAS_CP_ASYNC * 2 + PTXKIT_HAS_BULK_COPY; }\n";
    ptxkit_context *ctx = test_gpu();
    ptxkit_program *p = NULL;
    assert_ok(NULL, ptxkit_program_create("has.cu", source, NULL, 0, &p));
    ptxkit_kernel *k = NULL;
    assert_ok(ctx, ptxkit_program_kernel_get(ctx, p, "has", NULL, 0, &k));
    ptxkit_dptr d;
    assert_ok(ctx, ptxkit_memory_alloc(ctx, 4, &d));
    void *args[] = {&d};
    assert_ok(ctx, ptxkit_kernel_launch(k, (ptxkit_dim3){1, 1, 1}, (ptxkit_dim3){1, 1, 1}, 0, NULL, args));
    int got = -1;
    assert_ok(ctx, ptxkit_memory_read(ctx, &got, d, 4));
    int arch = device_arch();
    assert_int_equal(got, (arch >= 80) * 2 + (arch >= 90));
    ptxkit_memory_free(ctx, d);
    ptxkit_program_destroy(p);
}

int main(int argc, char **argv) {
    test_require_gpu();
    if (argc < 2) {
        fprintf(stderr, "usage: %s tests/async_kernels.cu [TEST_NAME_PATTERN]\n", argv[0]);
        return 2;
    }
    if (argc > 2) cmocka_set_test_filter(argv[2]); /* one test alone, e.g. under compute-sanitizer */
    kernels_path = argv[1];
    rng = test_seed();
    const char *env = getenv("PTXKIT_TEST_ASYNC_SMALL");
    small = env && strcmp(env, "1") == 0;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_arch_guard),  cmocka_unit_test(test_copy_widths), cmocka_unit_test(test_pipelines),
        cmocka_unit_test(test_barrier_phases), cmocka_unit_test(test_split_arrive), cmocka_unit_test(test_bulk_copies),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    ptxkit_program_destroy(program);
    test_gpu_release();
    return failed;
}
