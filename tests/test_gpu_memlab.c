/* The memory lab's kernels against CPU references: every access pattern
 * under every load operator (the kernels write per-warp or per-thread folds
 * of the words they read), the four float3 layouts, the shared-memory bank
 * kernels' sums, and ptxkit_transpose for odd shapes (1x1, 1xN, Nx1, 33x17,
 * 4097x4095), both types, all three kinds and every tile configuration the
 * benchmark uses, and every one the tuner may pick (named by block size and
 * items per thread), on poisoned outputs with guard zones and misaligned views.
 * All comparisons are exact: the kernels move bits or add 2.0f, which the
 * CPU reproduces bit for bit. */
#include <stdlib.h>
#include <string.h>

#include "ptxkit_ops.h"
#include "memlab.h"
#include "transpose/transpose.h"
#include "runtime/embedded.h"
#include "test_util.h"

enum { GUARD_WORDS = 64 };
#define POISON_WORD 0xDEADBEEFu

static const size_t IN_WORDS = (size_t)1 << 24;        /* 64 MiB of random words */
static const size_t OUT_WORDS = ((size_t)1 << 22) + 4096;

typedef struct lab_buffers {
    ptxkit_dptr in, out, index;
    uint32_t *host_in, *host_out, *host_index, *expect;
} lab_buffers;

static lab_buffers lab;
static uint64_t rng;

static int setup(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    rng = test_seed();
    lab.host_in = malloc(IN_WORDS * 4);
    lab.host_index = malloc(IN_WORDS * 4);
    lab.host_out = malloc(OUT_WORDS * 4);
    lab.expect = malloc(OUT_WORDS * 4);
    if (!lab.host_in || !lab.host_index || !lab.host_out || !lab.expect) return -1;
    test_fill_random(lab.host_in, IN_WORDS * 4, &rng);
    if (ptxkit_memory_alloc(ctx, IN_WORDS * 4, &lab.in) || ptxkit_memory_alloc(ctx, OUT_WORDS * 4, &lab.out) ||
        ptxkit_memory_alloc(ctx, IN_WORDS * 4, &lab.index))
        return -1;
    return ptxkit_memory_write(ctx, lab.in, lab.host_in, IN_WORDS * 4) == PTXKIT_SUCCESS ? 0 : -1;
}

static int teardown(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    ptxkit_memory_free(ctx, lab.in);
    ptxkit_memory_free(ctx, lab.out);
    ptxkit_memory_free(ctx, lab.index);
    free(lab.host_in);
    free(lab.host_index);
    free(lab.host_out);
    free(lab.expect);
    return 0;
}

/* ---- access patterns ---- */

/* Runs one access configuration (a->in offset by in_words words into the
 * random input) on a poisoned output and compares every output word and the
 * guards around them with the CPU reference. */
static void check_access(memlab_access a, size_t in_words) {
    ptxkit_context *ctx = test_gpu();
    a.in = lab.in + 4 * in_words;
    a.out = lab.out + 4 * GUARD_WORDS;
    if (a.pattern == MEMLAB_GATHER) a.index = lab.index;
    size_t outs = memlab_access_output_words(&a);
    assert_true(outs + 2 * GUARD_WORDS <= OUT_WORDS);
    assert_true(memlab_access_input_words(&a) + in_words <= IN_WORDS);
    assert_ok(ctx, ptxkit_memory_set32_async(ctx, lab.out, POISON_WORD, outs + 2 * GUARD_WORDS, NULL));
    assert_ok(ctx, memlab_access_run(ctx, &a, NULL));
    assert_ok(ctx, ptxkit_memory_read(ctx, lab.host_out, lab.out, (outs + 2 * GUARD_WORDS) * 4));
    memlab_access_reference(&a, lab.host_in + in_words, lab.host_index, lab.expect);
    for (size_t i = 0; i < GUARD_WORDS; i++)
        if (lab.host_out[i] != POISON_WORD || lab.host_out[GUARD_WORDS + outs + i] != POISON_WORD)
            fail_msg("access %s(%llu) n=%zu op %s wrote outside its %zu output words", memlab_pattern_name(a.pattern),
                     (unsigned long long)a.param, a.n, memlab_load_op_name(a.load_op), outs);
    for (size_t i = 0; i < outs; i++)
        if (lab.host_out[GUARD_WORDS + i] != lab.expect[i])
            fail_msg("access %s(%llu) n=%zu op %s items %d block %d per_thread %d: word %zu of %zu is %08x, want %08x",
                     memlab_pattern_name(a.pattern), (unsigned long long)a.param, a.n, memlab_load_op_name(a.load_op),
                     a.items, a.block_size, a.per_thread, i, outs, lab.host_out[GUARD_WORDS + i], lab.expect[i]);
}

/* The permutation for n gather elements: bits covers n, the index is made on
 * the GPU and must match the CPU's function (and be a permutation). */
static void make_index(size_t n, unsigned *bits_out) {
    ptxkit_context *ctx = test_gpu();
    unsigned bits = 0;
    while (((size_t)1 << bits) < n) bits++;
    uint32_t seed = (uint32_t)test_rand(&rng);
    assert_ok(ctx, memlab_make_index(ctx, lab.index, n, bits, seed, NULL));
    assert_ok(ctx, ptxkit_memory_read(ctx, lab.host_index, lab.index, n * 4));
    for (size_t e = 0; e < n; e++)
        if (lab.host_index[e] != memlab_permute((uint32_t)e, bits, seed))
            fail_msg("index[%zu] = %u, want %u (bits %u)", e, lab.host_index[e], memlab_permute((uint32_t)e, bits, seed), bits);
    *bits_out = bits;
}

static void permutation_is_a_bijection(void **state) {
    (void)state;
    for (unsigned bits = 0; bits <= 20; bits++) {
        size_t n = (size_t)1 << bits;
        unsigned char *seen = calloc(n, 1);
        assert_non_null(seen);
        for (uint32_t e = 0; e < n; e++) {
            uint32_t p = memlab_permute(e, bits, 12345u + bits);
            assert_true(p < n);
            assert_false(seen[p]);
            seen[p] = 1;
        }
        free(seen);
    }
}

static const size_t access_sizes[] = {1, 2, 31, 33, 1000, 4097, 65537, ((size_t)1 << 20) + 1};
#define ACCESS_SIZES (sizeof access_sizes / sizeof access_sizes[0])

static void every_pattern_every_operator(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    static const uint64_t offsets[] = {0, 1, 7, 8, 31, 32};
    static const uint64_t strides[] = {0, 1, 2, 3, 8, 33, 64};
    for (int op = 0; op < MEMLAB_LOAD_OP_COUNT; op++) {
        if (!memlab_load_op_supported(ctx, op)) {
            memlab_access a = {.pattern = MEMLAB_OFFSET, .load_op = op, .n = 1, .in = lab.in, .out = lab.out};
            assert_status(PTXKIT_ERROR_UNSUPPORTED, memlab_access_run(ctx, &a, NULL));
            continue;
        }
        /* every size for two operators, three sizes for the others */
        bool all = op == 0 || op == PTXKIT_LOAD_CG;
        for (size_t si = 0; si < ACCESS_SIZES; si++) {
            size_t n = access_sizes[si];
            if (!all && n != 33 && n != 4097 && n != 65537) continue;
            for (size_t k = 0; k < sizeof offsets / sizeof offsets[0]; k++)
                check_access((memlab_access){.pattern = MEMLAB_OFFSET, .param = offsets[k], .load_op = op, .n = n}, 0);
            for (size_t k = 0; k < sizeof strides / sizeof strides[0]; k++)
                if (n <= 65537 || strides[k] <= 8)
                    check_access((memlab_access){.pattern = MEMLAB_STRIDE, .param = strides[k], .load_op = op, .n = n}, 0);
            check_access((memlab_access){.pattern = MEMLAB_VEC8, .load_op = op, .n = n}, 0);
            check_access((memlab_access){.pattern = MEMLAB_VEC16, .load_op = op, .n = n}, 0);
            check_access((memlab_access){.pattern = MEMLAB_BROADCAST, .load_op = op, .n = n}, 0);
            check_access((memlab_access){.pattern = MEMLAB_WINDOW, .load_op = op, .n = n}, 0);
            unsigned bits;
            make_index(n, &bits);
            check_access((memlab_access){.pattern = MEMLAB_GATHER, .load_op = op, .n = n}, 0);
        }
    }
}

static void items_blocks_per_thread_and_views(void **state) {
    (void)state;
    static const int items[] = {1, 3, 4, 8};
    static const int blocks[] = {32, 256, 1024};
    unsigned bits;
    make_index(65537, &bits);
    for (size_t i = 0; i < sizeof items / sizeof items[0]; i++)
        for (size_t b = 0; b < sizeof blocks / sizeof blocks[0]; b++)
            for (int per_thread = 0; per_thread <= 1; per_thread++)
                for (int p = 0; p < MEMLAB_PATTERN_COUNT; p++) {
                    memlab_access a = {.pattern = (memlab_pattern)p, .param = p == MEMLAB_STRIDE ? 5 : 3,
                                       .load_op = PTXKIT_LOAD_CA, .items = items[i], .block_size = blocks[b],
                                       .per_thread = per_thread, .n = 65537};
                    /* scalar patterns also from an input that starts 3 words into the buffer */
                    check_access(a, 0);
                    if (p != MEMLAB_VEC8 && p != MEMLAB_VEC16) check_access(a, 3);
                }
}

static void access_bad_arguments(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    memlab_access ok = {.pattern = MEMLAB_OFFSET, .n = 100, .in = lab.in, .out = lab.out};
    memlab_access a = ok;
    a.pattern = MEMLAB_PATTERN_COUNT;
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, memlab_access_run(ctx, &a, NULL));
    a = ok;
    a.load_op = MEMLAB_LOAD_OP_COUNT;
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, memlab_access_run(ctx, &a, NULL));
    a.load_op = -1;
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, memlab_access_run(ctx, &a, NULL));
    a = ok;
    a.block_size = 48;
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, memlab_access_run(ctx, &a, NULL));
    a = ok;
    a.items = 65;
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, memlab_access_run(ctx, &a, NULL));
    a = ok;
    a.in = 0;
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, memlab_access_run(ctx, &a, NULL));
    a = ok;
    a.pattern = MEMLAB_GATHER;   /* no index */
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, memlab_access_run(ctx, &a, NULL));
    a = ok;
    a.pattern = MEMLAB_VEC16;
    a.in = lab.in + 4;
    assert_status(PTXKIT_ERROR_MISALIGNED, memlab_access_run(ctx, &a, NULL));
    a = ok;
    a.in = lab.in + 2;
    assert_status(PTXKIT_ERROR_MISALIGNED, memlab_access_run(ctx, &a, NULL));
    a = ok;
    a.pattern = MEMLAB_STRIDE;
    a.param = (uint64_t)1 << 40;
    a.n = (size_t)1 << 30;
    assert_status(PTXKIT_ERROR_OVERFLOW, memlab_access_run(ctx, &a, NULL));
    a = ok;
    a.n = 0;
    a.in = a.out = 0;   /* nothing to do: no pointer is needed */
    assert_ok(ctx, memlab_access_run(ctx, &a, NULL));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, memlab_access_run(ctx, NULL, NULL));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, memlab_make_index(ctx, lab.index, 5, 2, 1, NULL));
}

static void traffic_accounting(void **state) {
    (void)state;
    double app, sector;
    memlab_access a = {.pattern = MEMLAB_OFFSET, .n = (size_t)1 << 20, .param = 0};
    double out = 4.0 * (double)memlab_access_output_words(&a);
    memlab_access_traffic(&a, &app, &sector);
    assert_true(app == 4.0 * (1 << 20) + out);
    assert_true(sector == 4.0 * (1 << 20) + 8 * out);    /* 4 sectors a warp; one sector per output word */
    a.param = 1;
    memlab_access_traffic(&a, &app, &sector);
    assert_true(sector == 5.0 * (1 << 20) + 8 * out);    /* misaligned: 5 sectors a warp */
    a.pattern = MEMLAB_STRIDE;
    static const int sectors[] = {0, 4, 8, 12, 16, 20, 24, 28, 32, 32, 32};
    for (int s = 1; s <= 10; s++) {
        a.param = (uint64_t)s;
        memlab_access_traffic(&a, &app, &sector);
        assert_true(sector == (double)sectors[s] * (1 << 20) + 8 * out);
    }
    a.pattern = MEMLAB_BROADCAST;
    memlab_access_traffic(&a, &app, &sector);
    assert_true(sector == 1.0 * (1 << 20) + 8 * out);
    memlab_aos b = {.layout = MEMLAB_AOS_NAIVE, .n = 1000};
    memlab_aos_traffic(&b, &app, &sector);
    assert_true(app == 24000 && sector == 72000);
    b.layout = MEMLAB_AOS_ALIGNED;
    memlab_aos_traffic(&b, &app, &sector);
    assert_true(sector == 32000);
}

/* ---- float3 layouts ---- */

static void check_layout(memlab_layout layout, int op, int block, size_t n) {
    ptxkit_context *ctx = test_gpu();
    size_t point = memlab_layout_point_bytes(layout);
    size_t words = n * point / 4;
    assert_true(words + 2 * GUARD_WORDS <= OUT_WORDS);
    /* finite inputs (x + 2 of a NaN need not keep its payload): values in +-1000 */
    for (size_t i = 0; i < words; i++) {
        float f = (float)((int64_t)(test_rand(&rng) % 2000001) - 1000000) / 1000.0f;
        memcpy(&lab.host_in[i], &f, 4);
    }
    assert_ok(ctx, ptxkit_memory_write(ctx, lab.in, lab.host_in, words * 4 + 4));
    assert_ok(ctx, ptxkit_memory_set32_async(ctx, lab.out, POISON_WORD, words + 2 * GUARD_WORDS, NULL));
    memlab_aos a = {.layout = layout, .load_op = op, .block_size = block, .n = n, .in = lab.in,
                    .out = lab.out + 4 * GUARD_WORDS};
    assert_ok(ctx, memlab_aos_run(ctx, &a, NULL));
    assert_ok(ctx, ptxkit_memory_read(ctx, lab.host_out, lab.out, (words + 2 * GUARD_WORDS) * 4));
    for (size_t i = 0; i < GUARD_WORDS; i++)
        if (lab.host_out[i] != POISON_WORD || lab.host_out[GUARD_WORDS + words + i] != POISON_WORD)
            fail_msg("%s n=%zu wrote outside its output", memlab_layout_name(layout), n);
    for (size_t i = 0; i < words; i++) {
        /* the pad word of the aligned layout passes through unchanged */
        bool pad = layout == MEMLAB_AOS_ALIGNED && i % 4 == 3;
        float x;
        memcpy(&x, &lab.host_in[i], 4);
        volatile float y = x + 2.0f;
        uint32_t want;
        memcpy(&want, pad ? (const void *)&lab.host_in[i] : (const void *)&y, 4);
        if (lab.host_out[GUARD_WORDS + i] != want)
            fail_msg("%s op %s block %d n=%zu: word %zu is %08x, want %08x", memlab_layout_name(layout),
                     memlab_load_op_name(op), block, n, i, lab.host_out[GUARD_WORDS + i], want);
    }
}

static void every_layout(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    static const size_t sizes[] = {1, 2, 31, 255, 256, 257, 1000, 65537, ((size_t)1 << 20) + 3};
    static const int ops[] = {0, PTXKIT_LOAD_CG, PTXKIT_LOAD_NC, MEMLAB_LOAD_L2_EVICT_FIRST};
    static const int blocks[] = {0, 64, 1024};
    for (int l = 0; l < MEMLAB_LAYOUT_COUNT; l++)
        for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++) {
            if (!memlab_load_op_supported(ctx, ops[o])) continue;
            for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) check_layout((memlab_layout)l, ops[o], 0, sizes[s]);
            for (size_t b = 1; b < sizeof blocks / sizeof blocks[0]; b++) check_layout((memlab_layout)l, ops[o], blocks[b], 4099);
        }
    memlab_aos a = {.layout = MEMLAB_AOS_ALIGNED, .n = 10, .in = lab.in + 4, .out = lab.out};
    assert_status(PTXKIT_ERROR_MISALIGNED, memlab_aos_run(ctx, &a, NULL));
    a.layout = MEMLAB_LAYOUT_COUNT;
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, memlab_aos_run(ctx, &a, NULL));
    /* restore the random input that check_layout overwrote */
    test_fill_random(lab.host_in, IN_WORDS * 4, &rng);
    assert_ok(ctx, ptxkit_memory_write(ctx, lab.in, lab.host_in, IN_WORDS * 4));
}

/* ---- shared-memory banks ---- */

static void bank_kernels_read_what_they_should(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    enum { BLOCKS = 2 };
    static const int sizes[] = {1, 4, 8};
    static const int strides[] = {0, 1, 2, 3, 4, 7, 8, 16, 31, 32, 33, 64};
    static uint64_t sink[BLOCKS * MEMLAB_BANKS_BLOCK], want[MEMLAB_BANKS_BLOCK], cycles[BLOCKS];
    ptxkit_dptr cycles_d = lab.out, sink_d = lab.out + 4096;
    for (size_t w = 0; w < 3; w++)
        for (size_t s = 0; s < sizeof strides / sizeof strides[0]; s++)
            for (int iters = 1; iters <= 3; iters += 2) {
                memlab_banks b = {.word_bytes = sizes[w], .stride = strides[s], .iters = iters, .blocks = BLOCKS,
                                  .cycles = cycles_d, .sink = sink_d};
                assert_ok(ctx, ptxkit_memory_set32_async(ctx, lab.out, POISON_WORD, 1024 + 2 * BLOCKS * MEMLAB_BANKS_BLOCK, NULL));
                assert_ok(ctx, memlab_banks_run(ctx, &b, NULL));
                assert_ok(ctx, ptxkit_memory_read(ctx, sink, sink_d, sizeof sink));
                assert_ok(ctx, ptxkit_memory_read(ctx, cycles, cycles_d, sizeof cycles));
                memlab_banks_reference(&b, want);
                for (int blk = 0; blk < BLOCKS; blk++) {
                    assert_true(cycles[blk] > 0 && cycles[blk] < ((uint64_t)1 << 40));
                    for (int t = 0; t < MEMLAB_BANKS_BLOCK; t++)
                        if (sink[blk * MEMLAB_BANKS_BLOCK + t] != want[t])
                            fail_msg("banks u%d stride %d iters %d: block %d thread %d sums %llx, want %llx", 8 * sizes[w],
                                     strides[s], iters, blk, t, (unsigned long long)sink[blk * MEMLAB_BANKS_BLOCK + t],
                                     (unsigned long long)want[t]);
                }
            }
    memlab_banks bad = {.word_bytes = 2, .stride = 1, .iters = 1, .blocks = 1, .cycles = cycles_d, .sink = sink_d};
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, memlab_banks_run(ctx, &bad, NULL));
    bad.word_bytes = 4;
    bad.stride = MEMLAB_BANKS_MAX_STRIDE + 1;
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, memlab_banks_run(ctx, &bad, NULL));
    bad.stride = 1;
    bad.iters = 0;
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, memlab_banks_run(ctx, &bad, NULL));
}

static int gcd(int a, int b) { return b ? gcd(b, a % b) : a; }

static void bank_model(void **state) {
    (void)state;
    int ideal;
    for (int s = 1; s <= 64; s++) {
        assert_int_equal(memlab_banks_wavefronts(4, s, &ideal), gcd(s, 32));
        assert_int_equal(ideal, 1);
    }
    assert_int_equal(memlab_banks_wavefronts(4, 0, &ideal), 1);
    assert_int_equal(memlab_banks_wavefronts(8, 1, &ideal), 2);
    assert_int_equal(ideal, 2);
    assert_int_equal(memlab_banks_wavefronts(8, 0, &ideal), 2);
    assert_int_equal(memlab_banks_wavefronts(8, 32, &ideal), 32);
    assert_int_equal(memlab_banks_wavefronts(8, 33, &ideal), 2);
    assert_int_equal(memlab_banks_wavefronts(1, 1, &ideal), 1);
    assert_int_equal(memlab_banks_wavefronts(1, 4, &ideal), 1);
    assert_int_equal(memlab_banks_wavefronts(1, 32, &ideal), 8);
    assert_int_equal(memlab_banks_wavefronts(1, 33, &ideal), 1);
}

/* ---- transpose ---- */

typedef struct tbuffers {
    ptxkit_dptr src, dst;
    unsigned char *host_src, *host_dst, *expect;
    size_t capacity;
} tbuffers;

static tbuffers tb;
enum { TGUARD = 256, TPOISON = 0xFF };

static int transpose_setup(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    tb.capacity = (size_t)4097 * 4097 * 8 + 4 * TGUARD;
    tb.host_src = malloc(tb.capacity);
    tb.host_dst = malloc(tb.capacity);
    tb.expect = malloc(tb.capacity);
    if (!tb.host_src || !tb.host_dst || !tb.expect) return -1;
    test_fill_random(tb.host_src, tb.capacity, &rng);
    if (ptxkit_memory_alloc(ctx, tb.capacity, &tb.src) || ptxkit_memory_alloc(ctx, tb.capacity, &tb.dst)) return -1;
    return ptxkit_memory_write(ctx, tb.src, tb.host_src, tb.capacity) == PTXKIT_SUCCESS ? 0 : -1;
}

static int transpose_teardown(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    ptxkit_memory_free(ctx, tb.src);
    ptxkit_memory_free(ctx, tb.dst);
    free(tb.host_src);
    free(tb.host_dst);
    free(tb.expect);
    return 0;
}

/* A parameter a _config_get filled (fails the test when absent). */
static long long config_value(const ptxkit_config *c, const char *name) {
    long long v = -1;
    assert_int_equal(ptxkit_config_get(c, name, &v), PTXKIT_SUCCESS);
    return v;
}

/* Transposes rows x cols elements starting `src_elems` elements into the
 * source into dst + TGUARD + dst_elems elements, with ptxkit_transpose when
 * config is NULL, and checks every element and the poisoned guards. */
static void check_transpose_with(ptxkit_dtype type, size_t rows, size_t cols, ptxkit_transpose_kind kind,
                                 const transpose_config *config, const launch_options *o, const ptxkit_config *pc,
                                 size_t src_elems, size_t dst_elems) {
    ptxkit_context *ctx = test_gpu();
    size_t e = ptxkit_dtype_size(type), bytes = rows * cols * e;
    size_t lead = TGUARD + dst_elems * e, span = lead + bytes + TGUARD;
    assert_true(span <= tb.capacity && src_elems * e + bytes <= tb.capacity);
    assert_ok(ctx, ptxkit_memory_set8_async(ctx, tb.dst, TPOISON, span, NULL));
    ptxkit_dptr dst = tb.dst + lead, src = tb.src + src_elems * e;
    if (config) assert_ok(ctx, transpose_run(ctx, type, dst, src, rows, cols, kind, config, o, NULL));
    else assert_ok(ctx, ptxkit_transpose(ctx, kind, type, dst, src, rows, cols, pc, NULL));
    assert_ok(ctx, ptxkit_memory_read(ctx, tb.host_dst, tb.dst, span));
    for (size_t i = 0; i < lead; i++)
        if (tb.host_dst[i] != TPOISON) fail_msg("transpose %zux%zu wrote before its output", rows, cols);
    for (size_t i = 0; i < TGUARD; i++)
        if (tb.host_dst[lead + bytes + i] != TPOISON) fail_msg("transpose %zux%zu wrote past its output", rows, cols);
    const unsigned char *s = tb.host_src + src_elems * e;
    for (size_t r = 0; r < rows; r++)
        for (size_t c = 0; c < cols; c++)
            memcpy(tb.expect + (c * rows + r) * e, s + (r * cols + c) * e, e);
    if (memcmp(tb.host_dst + lead, tb.expect, bytes) != 0) {
        size_t i = 0;
        while (memcmp(tb.host_dst + lead + i * e, tb.expect + i * e, e) == 0) i++;
        fail_msg("transpose %s %zux%zu %s (tile %d, block %d, vec %d, src+%zu, dst+%zu): element (%zu, %zu) of the "
                 "output is wrong", ptxkit_dtype_name(type), rows, cols, transpose_kind_name(kind), config ? config->tile : 0,
                 config ? config->block_size : 0, config ? config->vector_bytes : 0, src_elems, dst_elems, i / rows,
                 i % rows);
    }
}

/* The public call's configuration of o's values: block_size x
 * items_per_thread elements are the square tile whose side "tile" names
 * (the cases here give both, or neither). */
static const ptxkit_config *transpose_public(const launch_options *o, ptxkit_config *buf) {
    if (!o) return NULL;
    *buf = (ptxkit_config){0};
    if (o->path) ptxkit_config_set(buf, "path", o->path);
    if (o->load_op) ptxkit_config_set(buf, "load_op", o->load_op);
    if (o->block_size) ptxkit_config_set(buf, "block_size", o->block_size);
    if (o->vector_bytes) ptxkit_config_set(buf, "vector_bytes", o->vector_bytes);
    if (o->items_per_thread) {
        long long area = (long long)o->block_size * o->items_per_thread;
        int tile = 0;
        for (int t = 16; t <= 128; t *= 2)
            if ((long long)t * t == area) tile = t;
        if (!tile) fail_msg("transpose test: %d x %d is no square tile", o->block_size, o->items_per_thread);
        ptxkit_config_set(buf, "tile", tile);
    }
    return buf;
}

static void check_transpose(ptxkit_dtype type, size_t rows, size_t cols, ptxkit_transpose_kind kind,
                            const transpose_config *config, const launch_options *o, size_t src_elems,
                            size_t dst_elems) {
    ptxkit_config buf;
    check_transpose_with(type, rows, cols, kind, config, o, transpose_public(o, &buf), src_elems, dst_elems);
}

static const size_t shapes[][2] = {{1, 1}, {1, 1000}, {1000, 1}, {1, 65537}, {65537, 1}, {2, 3}, {33, 17}, {17, 33},
                                   {31, 33}, {3, 5}, {33, 65}, {64, 64}, {128, 96}, {96, 128}, {1024, 1024},
                                   {4097, 4095}, {4095, 4097}};
#define SHAPES (sizeof shapes / sizeof shapes[0])
static const ptxkit_dtype types[] = {PTXKIT_FLOAT32, PTXKIT_FLOAT64};
static const ptxkit_transpose_kind kinds[] = {PTXKIT_TRANSPOSE_PADDED, PTXKIT_TRANSPOSE_NAIVE, PTXKIT_TRANSPOSE_TILED};

static void transpose_public_every_shape(void **state) {
    (void)state;
    for (size_t t = 0; t < 2; t++)
        for (size_t k = 0; k < 3; k++)
            for (size_t s = 0; s < SHAPES; s++) {
                check_transpose(types[t], shapes[s][0], shapes[s][1], kinds[k], NULL, NULL, 0, 0);
                /* misaligned views: no vector path, any element offset */
                check_transpose(types[t], shapes[s][0], shapes[s][1], kinds[k], NULL, NULL, 1, 3);
            }
}

/* ptxkit_transpose_supported agrees with the call: every kind of every
 * type, on a 3 x 5 matrix of distinct values checked element by element
 * where supported, UNSUPPORTED from both where not. */
static void transpose_supported_agrees(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    enum { R = 3, C = 5 };
    for (int k = PTXKIT_TRANSPOSE_PADDED; k <= PTXKIT_TRANSPOSE_TILED; k++)
        for (int t = 0; t < PTXKIT_DTYPE_COUNT; t++) {
            ptxkit_transpose_kind kind = (ptxkit_transpose_kind)k;
            ptxkit_dtype type = (ptxkit_dtype)t;
            ptxkit_status want = ptxkit_transpose_supported(ctx, kind, type);
            assert_int_equal(want, ptxkit_transpose_supported(NULL, kind, type));
            size_t e = ptxkit_dtype_size(type);
            unsigned char src[R * C * 8], dst[R * C * 8];
            for (int i = 0; i < R * C; i++) {
                double d = i + 1;
                float f = (float)(i + 1);
                uint64_t u = (uint64_t)(i + 1);
                uint32_t w = (uint32_t)(i + 1);
                memcpy(src + i * e, type == PTXKIT_FLOAT64 ? (void *)&d : type == PTXKIT_FLOAT32 ? (void *)&f
                                    : e == 8 ? (void *)&u : (void *)&w, e);
            }
            /* both in the destination buffer: the source buffer holds the other tests' data */
            const ptxkit_dptr from = tb.dst + 1024;
            assert_ok(ctx, ptxkit_memory_write(ctx, from, src, R * C * e));
            assert_ok(ctx, ptxkit_memory_set8_async(ctx, tb.dst, TPOISON, R * C * e, NULL));
            ptxkit_status got = ptxkit_transpose(ctx, kind, type, tb.dst, from, R, C, NULL, NULL);
            if (want != PTXKIT_SUCCESS) {
                assert_int_equal(want, PTXKIT_ERROR_UNSUPPORTED);
                assert_int_equal(got, PTXKIT_ERROR_UNSUPPORTED);
                continue;
            }
            assert_ok(ctx, got);
            assert_ok(ctx, ptxkit_memory_read(ctx, dst, tb.dst, R * C * e));
            for (int r = 0; r < R; r++)
                for (int c = 0; c < C; c++)
                    if (memcmp(dst + ((size_t)c * R + r) * e, src + ((size_t)r * C + c) * e, e) != 0)
                        fail_msg("transpose kind %d type %d: element (%d, %d) misplaced", k, t, r, c);
        }
}

/* ptxkit_transpose_config_get names what the call resolves: the tuned or
 * default configuration without options, the options' own with them. */
static void transpose_config_get_matches_the_call(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    for (size_t t = 0; t < 2; t++)
        for (size_t k = 0; k < 3; k++)
            for (size_t s = 0; s < SHAPES; s++) {
                transpose_config want;
                ptxkit_config got;
                assert_ok(ctx, transpose_resolve(ctx, types[t], shapes[s][0], shapes[s][1], kinds[k], NULL, NULL, &want));
                assert_ok(ctx, ptxkit_transpose_config_get(ctx, kinds[k], types[t], shapes[s][0], shapes[s][1], NULL,
                                                           &got));
                assert_int_equal(got.count, 3);
                assert_int_equal(config_value(&got, "tile"), want.tile);
                assert_int_equal(config_value(&got, "block_size"), want.block_size);
                assert_int_equal(config_value(&got, "vector_bytes"), want.vector_bytes);
            }
    ptxkit_config o = {0}, got;
    ptxkit_config_set(&o, "path", PTXKIT_PATH_JIT);
    ptxkit_config_set(&o, "block_size", 256);
    ptxkit_config_set(&o, "tile", 64);
    ptxkit_config_set(&o, "vector_bytes", 8);
    assert_ok(ctx, ptxkit_transpose_config_get(ctx, PTXKIT_TRANSPOSE_TILED, PTXKIT_FLOAT32, 100, 200, &o, &got));
    assert_int_equal(config_value(&got, "tile"), 64);
    assert_int_equal(config_value(&got, "block_size"), 256);
    assert_int_equal(config_value(&got, "vector_bytes"), 8);
    /* a tile alone takes the default block narrowed to fit: tile <= block <= tile^2, 64 elements at most */
    static const int alone[][2] = {{16, 256}, {32, 256}, {64, 256}, {128, 256}};
    for (size_t i = 0; i < 4; i++) {
        ptxkit_config t = {0};
        ptxkit_config_set(&t, "path", PTXKIT_PATH_JIT);
        ptxkit_config_set(&t, "tile", alone[i][0]);
        assert_ok(ctx, ptxkit_transpose_config_get(ctx, PTXKIT_TRANSPOSE_PADDED, PTXKIT_FLOAT32, 300, 200, &t, &got));
        assert_int_equal(config_value(&got, "tile"), alone[i][0]);
        assert_int_equal(config_value(&got, "block_size"), alone[i][1]);
    }
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT,
                  ptxkit_transpose_config_get(ctx, PTXKIT_TRANSPOSE_NAIVE, PTXKIT_FLOAT64, 7, 9, NULL, NULL));
    ptxkit_config_set(&o, "tile", 48); /* not 16, 32, 64 or 128 */
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT,
                  ptxkit_transpose_config_get(ctx, PTXKIT_TRANSPOSE_PADDED, PTXKIT_FLOAT32, 4, 4, &o, &got));
    assert_non_null(strstr(ptxkit_last_error(), "tile"));
    ptxkit_config_set(&o, "tile", 16); /* a 16 x 16 tile has 256 elements: */
    ptxkit_config_set(&o, "block_size", 512); /* 512 threads are too many */
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT,
                  ptxkit_transpose_config_get(ctx, PTXKIT_TRANSPOSE_PADDED, PTXKIT_FLOAT32, 4, 4, &o, &got));
    ptxkit_config_set(&o, "tile", 128); /* 16384 / 128 threads: 128 elements each, over 64 */
    ptxkit_config_set(&o, "block_size", 128);
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT,
                  ptxkit_transpose_config_get(ctx, PTXKIT_TRANSPOSE_PADDED, PTXKIT_FLOAT32, 4, 4, &o, &got));
    ptxkit_config_set(&o, "tile", 32);
    ptxkit_config_set(&o, "block_size", 256);
    ptxkit_config_set(&o, "items_per_thread", 4); /* the internal name is not the call's */
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT,
                  ptxkit_transpose_config_get(ctx, PTXKIT_TRANSPOSE_PADDED, PTXKIT_FLOAT32, 4, 4, &o, &got));
    assert_non_null(strstr(ptxkit_last_error(), "items_per_thread"));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT,
                  ptxkit_transpose_config_get(ctx, (ptxkit_transpose_kind)7, PTXKIT_FLOAT32, 4, 4, NULL, &got));
    assert_status(PTXKIT_ERROR_UNSUPPORTED,
                  ptxkit_transpose_config_get(ctx, PTXKIT_TRANSPOSE_PADDED, PTXKIT_INT32, 4, 4, NULL, &got));
}

/* The shapes above run both padded kernels: the sector-aligned one where
 * output rows miss 32-byte sectors and only single elements are stored, the
 * plain one elsewhere. */
static void transpose_sector_kernel_where_rows_miss_sectors(void **state) {
    (void)state;
    transpose_config v4 = {64, 256, 4}, v16 = {64, 256, 16};
    ptxkit_dptr at = 1 << 20; /* a sector boundary; no memory is touched */
    assert_true(transpose_sector_aligned(&v4, PTXKIT_TRANSPOSE_PADDED, true, PTXKIT_FLOAT32, at, at, 4097, 4095));
    assert_true(transpose_sector_aligned(&v4, PTXKIT_TRANSPOSE_PADDED, true, PTXKIT_FLOAT64, at, at, 4095, 4097));
    assert_true(transpose_sector_aligned(&v16, PTXKIT_TRANSPOSE_PADDED, true, PTXKIT_FLOAT32, at, at, 33, 65));
    assert_true(transpose_sector_aligned(&v4, PTXKIT_TRANSPOSE_PADDED, true, PTXKIT_FLOAT32, at + 12, at, 1024, 1024));
    assert_false(transpose_sector_aligned(&v4, PTXKIT_TRANSPOSE_PADDED, true, PTXKIT_FLOAT32, at, at, 4096, 4096));
    assert_false(transpose_sector_aligned(&v16, PTXKIT_TRANSPOSE_PADDED, true, PTXKIT_FLOAT32, at, at, 1028, 1024));
    transpose_config big = {128, 256, 16};   /* 8-byte elements keep the plain kernel: it is faster there */
    assert_true(transpose_sector_aligned(&big, PTXKIT_TRANSPOSE_PADDED, true, PTXKIT_FLOAT32, at, at, 4097, 4095));
    assert_false(transpose_sector_aligned(&big, PTXKIT_TRANSPOSE_PADDED, true, PTXKIT_FLOAT64, at, at, 4097, 4095));
    assert_false(transpose_sector_aligned(&v4, PTXKIT_TRANSPOSE_TILED, true, PTXKIT_FLOAT32, at, at, 4097, 4095));
    assert_false(transpose_sector_aligned(&v4, PTXKIT_TRANSPOSE_PADDED, false, PTXKIT_FLOAT32, at, at, 4097, 4095));
}

static void transpose_every_configuration(void **state) {
    (void)state;
    static const transpose_config configs[] = {{32, 256, 4},  {32, 256, 8},  {32, 256, 16}, {32, 128, 16},
                                               {32, 32, 4},   {16, 64, 16},  {16, 256, 4},  {64, 256, 4},
                                               {64, 256, 16}, {64, 512, 16}, {64, 1024, 16}, {64, 64, 8},
                                               {128, 1024, 4}, {128, 256, 16}};
    static const size_t some[][2] = {{1, 1}, {33, 17}, {64, 64}, {100, 200}, {4097, 4095}, {4095, 4097}, {4096, 4096}};
    launch_options jit = {.path = PTXKIT_PATH_JIT};
    for (size_t c = 0; c < sizeof configs / sizeof configs[0]; c++)
        for (size_t t = 0; t < 2; t++)
            for (size_t k = 0; k < 3; k++)
                for (size_t s = 0; s < sizeof some / sizeof some[0]; s++) {
                    if (some[s][0] == 4096 && k != 0) continue;   /* the big aligned case for padded only */
                    check_transpose(types[t], some[s][0], some[s][1], kinds[k], &configs[c], &jit, 0, 0);
                }
    /* every load operator and a misaligned view on the default configuration */
    for (int op = 0; op < PTXKIT_LOAD_OP_COUNT; op++) {
        launch_options o = {.path = PTXKIT_PATH_JIT, .load_op = (ptxkit_load_op)op};
        check_transpose(PTXKIT_FLOAT32, 257, 130, PTXKIT_TRANSPOSE_PADDED, NULL, &o, 0, 0);
        check_transpose(PTXKIT_FLOAT64, 130, 257, PTXKIT_TRANSPOSE_TILED, NULL, &o, 5, 1);
    }
    /* caller block sizes pick a tile that fits */
    static const int blocks[] = {32, 64, 128, 512, 1024};
    for (size_t b = 0; b < sizeof blocks / sizeof blocks[0]; b++) {
        launch_options o = {.block_size = blocks[b]};
        check_transpose(PTXKIT_FLOAT32, 300, 200, PTXKIT_TRANSPOSE_PADDED, NULL, &o, 0, 0);
        o.vector_bytes = 4;
        check_transpose(PTXKIT_FLOAT64, 200, 300, PTXKIT_TRANSPOSE_PADDED, NULL, &o, 0, 0);
    }
}

/* Options name a configuration by block size and items per thread (block
 * x items is the tile): every triple the tuner may pick runs right, on odd
 * shapes and on shapes whose whole tiles move vectors. */
static void transpose_options_every_tuned_configuration(void **state) {
    (void)state;
    static const int blocks[] = {32, 64, 128, 256, 512, 1024}, items[] = {1, 2, 4, 8, 16, 32, 64}, vecs[] = {4, 8, 16};
    static const size_t some[][2] = {{33, 17}, {257, 130}, {196, 132}};
    int ran = 0;
    for (size_t t = 0; t < 2; t++)
        for (size_t b = 0; b < 6; b++)
            for (size_t i = 0; i < 7; i++)
                for (size_t v = 0; v < 3; v++) {
                    transpose_config c;
                    char why[256];
                    if (vecs[v] < (int)ptxkit_dtype_size(types[t]) ||
                        !transpose_config_from(types[t], true, blocks[b], items[i], vecs[v], &c, why, sizeof why))
                        continue;
                    launch_options o = {.path = PTXKIT_PATH_JIT, .block_size = blocks[b],
                                               .items_per_thread = items[i], .vector_bytes = vecs[v]};
                    for (size_t s = 0; s < sizeof some / sizeof some[0]; s++)
                        check_transpose(types[t], some[s][0], some[s][1], PTXKIT_TRANSPOSE_PADDED, NULL, &o, 0, 0);
                    ran++;
                }
    assert_int_equal(ran, 48 + 30); /* with the 128 x 128 tiles in dynamic shared memory */
    /* items alone keep the default tile; block x items that is no square tile is refused */
    ptxkit_context *ctx = test_gpu();
    for (int tile = 16; tile <= 128; tile *= 2) {
        ptxkit_config alone = {0};
        ptxkit_config_set(&alone, "tile", tile);
        check_transpose_with(PTXKIT_FLOAT32, 300, 200, PTXKIT_TRANSPOSE_PADDED, NULL, NULL, &alone, 0, 0);
        check_transpose_with(PTXKIT_FLOAT64, 200, 300, PTXKIT_TRANSPOSE_PADDED, NULL, NULL, &alone, 0, 0);
    }
    ptxkit_config o = {0};
    ptxkit_config_set(&o, "block_size", 512);
    ptxkit_config_set(&o, "tile", 16); /* 512 threads for 256 elements */
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_transpose(ctx, PTXKIT_TRANSPOSE_PADDED, PTXKIT_FLOAT32, tb.dst, tb.src, 64, 64, &o, NULL));
    o = (ptxkit_config){0};
    ptxkit_config_set(&o, "tile", 256);
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_transpose(ctx, PTXKIT_TRANSPOSE_PADDED, PTXKIT_FLOAT32, tb.dst, tb.src, 64, 64, &o, NULL));
}

static void transpose_precompiled_ptx(void **state) {
    (void)state;
    if (!embedded_find("transpose.ptx")) skip();
    for (int op = PTXKIT_LOAD_CA; op < PTXKIT_LOAD_OP_COUNT; op++) {
        launch_options o = {.path = PTXKIT_PATH_PTX, .load_op = (ptxkit_load_op)op};
        for (size_t t = 0; t < 2; t++)
            for (size_t k = 0; k < 3; k++) {
                check_transpose(types[t], 33, 17, kinds[k], NULL, &o, 0, 0);
                check_transpose(types[t], 256, 128, kinds[k], NULL, &o, 0, 0);
            }
    }
    ptxkit_context *ctx = test_gpu();
    ptxkit_config o = {0};
    ptxkit_config_set(&o, "path", PTXKIT_PATH_PTX);
    ptxkit_config_set(&o, "block_size", 512);
    assert_status(PTXKIT_ERROR_UNSUPPORTED, ptxkit_transpose(ctx, PTXKIT_TRANSPOSE_PADDED, PTXKIT_FLOAT32, tb.dst, tb.src, 64, 64, &o, NULL));
    o = (ptxkit_config){0};
    ptxkit_config_set(&o, "path", PTXKIT_PATH_PTX);
    ptxkit_config_set(&o, "tile", 64); /* 256 threads, 16 elements each */
    assert_status(PTXKIT_ERROR_UNSUPPORTED, ptxkit_transpose(ctx, PTXKIT_TRANSPOSE_PADDED, PTXKIT_FLOAT32, tb.dst, tb.src, 64, 64, &o, NULL));
    ptxkit_config_set(&o, "tile", 32); /* the PTX's own: 32 x 32 tile, 256 threads */
    check_transpose_with(PTXKIT_FLOAT32, 33, 17, PTXKIT_TRANSPOSE_PADDED, NULL, NULL, &o, 0, 0);
}

static void transpose_bad_arguments(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    ptxkit_dptr d = tb.dst, s = tb.src;
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_transpose(NULL, 0, PTXKIT_FLOAT32, d, s, 4, 4, NULL, NULL));
    assert_status(PTXKIT_ERROR_UNSUPPORTED, ptxkit_transpose(ctx, 0, PTXKIT_INT32, d, s, 4, 4, NULL, NULL));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_transpose(ctx, 0, (ptxkit_dtype)99, d, s, 4, 4, NULL, NULL));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT,
                  ptxkit_transpose(ctx, (ptxkit_transpose_kind)7, PTXKIT_FLOAT32, d, s, 4, 4, NULL, NULL));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_transpose(ctx, 0, PTXKIT_FLOAT32, 0, s, 4, 4, NULL, NULL));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_transpose(ctx, 0, PTXKIT_FLOAT32, d, 0, 4, 4, NULL, NULL));
    assert_status(PTXKIT_ERROR_MISALIGNED, ptxkit_transpose(ctx, 0, PTXKIT_FLOAT32, d + 2, s, 4, 4, NULL, NULL));
    assert_status(PTXKIT_ERROR_MISALIGNED, ptxkit_transpose(ctx, 0, PTXKIT_FLOAT64, d, s + 4, 4, 4, NULL, NULL));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_transpose(ctx, 0, PTXKIT_FLOAT32, s + 32, s, 4, 4, NULL, NULL));
    assert_status(PTXKIT_ERROR_OVERFLOW,
                  ptxkit_transpose(ctx, 0, PTXKIT_FLOAT32, d, s, SIZE_MAX / 2, 3, NULL, NULL));
    assert_status(PTXKIT_ERROR_OVERFLOW, ptxkit_transpose(ctx, 0, PTXKIT_FLOAT64, d, s, (size_t)1 << 31,
                                                          (size_t)1 << 31, NULL, NULL));
    ptxkit_config bad = {0};
    ptxkit_config_set(&bad, "block_size", 48);
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_transpose(ctx, 0, PTXKIT_FLOAT32, d, s, 4, 4, &bad, NULL));
    transpose_config cfg = {48, 256, 16};
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, transpose_run(ctx, PTXKIT_FLOAT32, d, s, 4, 4, 0, &cfg, NULL, NULL));
    cfg = (transpose_config){32, 512, 16};   /* 512 threads x 4 floats > 32 x 32 */
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, transpose_run(ctx, PTXKIT_FLOAT32, d, s, 4, 4, 0, &cfg, NULL, NULL));
    cfg = (transpose_config){64, 32, 16};    /* fewer threads than a tile row */
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, transpose_run(ctx, PTXKIT_FLOAT32, d, s, 4, 4, 0, &cfg, NULL, NULL));
    /* an empty matrix is a no-op, whatever the pointers */
    assert_ok(ctx, ptxkit_transpose(ctx, 0, PTXKIT_FLOAT32, 0, 0, 0, 5, NULL, NULL));
    assert_ok(ctx, ptxkit_transpose(ctx, 0, PTXKIT_FLOAT64, d, s, 7, 0, NULL, NULL));
}

int main(void) {
    test_require_gpu();
    const struct CMUnitTest access_tests[] = {
        cmocka_unit_test(permutation_is_a_bijection),
        cmocka_unit_test(traffic_accounting),
        cmocka_unit_test(bank_model),
        cmocka_unit_test(every_pattern_every_operator),
        cmocka_unit_test(items_blocks_per_thread_and_views),
        cmocka_unit_test(access_bad_arguments),
        cmocka_unit_test(every_layout),
        cmocka_unit_test(bank_kernels_read_what_they_should),
    };
    const struct CMUnitTest transpose_tests[] = {
        cmocka_unit_test(transpose_public_every_shape),
        cmocka_unit_test(transpose_config_get_matches_the_call),
        cmocka_unit_test(transpose_supported_agrees),
        cmocka_unit_test(transpose_sector_kernel_where_rows_miss_sectors),
        cmocka_unit_test(transpose_every_configuration),
        cmocka_unit_test(transpose_options_every_tuned_configuration),
        cmocka_unit_test(transpose_precompiled_ptx),
        cmocka_unit_test(transpose_bad_arguments),
    };
    int failed = cmocka_run_group_tests_name("memlab", access_tests, setup, teardown);
    failed += cmocka_run_group_tests_name("transpose", transpose_tests, transpose_setup, transpose_teardown);
    test_gpu_release();
    return failed;
}
