/* The constant-memory lab's kernels (lab/kernels/const_lab.cu) against
 * the CPU reference: every coefficient store (__constant__, ld.global,
 * ld.global.nc, shared, and the copy) under both patterns (uniform,
 * divergent), awkward element counts (a partial last vector, fewer
 * elements than a warp), taps from 1 to 64, the smallest and largest
 * blocks and grids small enough that the grid-stride loop runs its
 * remainder; on poisoned outputs with guard zones. The comparisons are
 * exact: the kernels use __fmaf_rn and the reference fmaf in the same
 * order. Also the table upload, the fill kernel and the argument checks. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "constlab.h"
#include "lab.h"
#include "test_util.h"

enum { GUARD = 64 };   /* floats each side: 256 bytes keep the 16-byte alignment */
#define POISON 0x7fc0dead

static const size_t MAX_N = ((size_t)1 << 22) + 1;

static struct {
    ptxkit_dptr in, out, table;
    float *host_in, *want;
    uint32_t *got;
} t;

static int setup(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    uint64_t rng = test_seed();
    t.host_in = malloc(MAX_N * sizeof(float));
    t.want = malloc(MAX_N * sizeof(float));
    t.got = malloc((MAX_N + 2 * GUARD) * sizeof(float));
    if (!t.host_in || !t.want || !t.got) return -1;
    for (size_t i = 0; i < MAX_N; i++)  /* [-1, 1), some exact zeros and ones among them */
        t.host_in[i] = (float)((int32_t)(test_rand(&rng) >> 40) - (1 << 23)) / 8388608.0f;
    t.host_in[0] = 0.0f;
    t.host_in[1] = -1.0f;
    if (ptxkit_memory_alloc(ctx, MAX_N * sizeof(float), &t.in) ||
        ptxkit_memory_alloc(ctx, (MAX_N + 2 * GUARD) * sizeof(float), &t.out) ||
        ptxkit_memory_alloc(ctx, 2 * CONSTLAB_MAX_TAPS * sizeof(float), &t.table))
        return -1;
    return ptxkit_memory_write(ctx, t.in, t.host_in, MAX_N * sizeof(float)) == PTXKIT_SUCCESS ? 0 : -1;
}

static int teardown(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    ptxkit_memory_free(ctx, t.in);
    ptxkit_memory_free(ctx, t.out);
    ptxkit_memory_free(ctx, t.table);
    free(t.host_in);
    free(t.want);
    free(t.got);
    return 0;
}

/* Runs p (n elements of the random input, taps, store, pattern, block and
 * grid as given) on a poisoned output and compares every output and the
 * guards around them. */
static void check(constlab_poly p) {
    ptxkit_context *ctx = test_gpu();
    assert_true(p.n <= MAX_N);
    int taps = p.taps ? p.taps : CONSTLAB_DEFAULT_TAPS;
    p.in = t.in;
    p.out = t.out + GUARD * sizeof(float);
    p.table = t.table;
    assert_ok(ctx, constlab_table_write(ctx, t.table, taps));
    assert_ok(ctx, ptxkit_memory_set32_async(ctx, t.out, POISON, p.n + 2 * GUARD, NULL));
    if (constlab_poly_run(ctx, &p, NULL) != PTXKIT_SUCCESS)
        fail_msg("%s %s taps %d n %zu: %s", constlab_store_name(p.store), constlab_pattern_name(p.divergent), taps, p.n,
                 ptxkit_last_error());
    assert_ok(ctx, ptxkit_memory_read(ctx, t.got, t.out, (p.n + 2 * GUARD) * sizeof(float)));
    constlab_reference(&p, t.host_in, t.want);
    for (size_t i = 0; i < GUARD; i++)
        if (t.got[i] != POISON || t.got[GUARD + p.n + i] != POISON)
            fail_msg("%s %s taps %d n %zu block %d grid %u wrote outside its output", constlab_store_name(p.store),
                     constlab_pattern_name(p.divergent), taps, p.n, p.block_size, p.grid);
    for (size_t i = 0; i < p.n; i++) {
        float got;
        memcpy(&got, &t.got[GUARD + i], sizeof got);
        if (memcmp(&got, &t.want[i], sizeof got) != 0)
            fail_msg("%s %s taps %d n %zu block %d grid %u: element %zu is %a, the CPU says %a",
                     constlab_store_name(p.store), constlab_pattern_name(p.divergent), taps, p.n, p.block_size, p.grid,
                     i, (double)got, (double)t.want[i]);
    }
}

static void every_store_pattern_size(void **state) {
    (void)state;
    static const int taps[] = {1, 5, 32, 33, 64};
    for (int s = 0; s < CONSTLAB_STORE_COUNT; s++)
        for (int d = 0; d < 2; d++)
            for (size_t k = 0; k < sizeof taps / sizeof taps[0]; k++)
                for (size_t z = 0; z < test_awkward_size_count; z++) {
                    size_t n = test_awkward_sizes[z];
                    if (n > 70000 && taps[k] != 32) continue;  /* the CPU's share stays small */
                    check((constlab_poly){.store = (constlab_store)s, .divergent = d, .taps = taps[k], .n = n});
                }
}

/* Small grids make every thread walk several vectors (the ITEMS-wide loop
 * and its remainder); block sizes at both ends; taps 0 means 32. */
static void blocks_grids_and_default_taps(void **state) {
    (void)state;
    static const int blocks[] = {32, 64, 1024};
    static const unsigned grids[] = {1, 3, 7};
    static const size_t sizes[] = {4, 127, 4097, 100003};
    for (int s = 0; s < CONSTLAB_STORE_COUNT; s++)
        for (int d = 0; d < 2; d++) {
            for (size_t b = 0; b < 3; b++)
                for (size_t g = 0; g < 3; g++)
                    for (size_t z = 0; z < 4; z++)
                        check((constlab_poly){.store = (constlab_store)s, .divergent = d, .taps = 17,
                                              .block_size = blocks[b], .grid = grids[g], .n = sizes[z]});
            check((constlab_poly){.store = (constlab_store)s, .divergent = d, .n = 65537});
        }
}

static void table_and_fill(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    float want[2 * CONSTLAB_MAX_TAPS], got[2 * CONSTLAB_MAX_TAPS];
    for (int taps = 1; taps <= CONSTLAB_MAX_TAPS; taps += 21) {
        assert_ok(ctx, constlab_table_write(ctx, t.table, taps));
        assert_ok(ctx, ptxkit_memory_read(ctx, got, t.table, constlab_table_words(taps) * sizeof(float)));
        constlab_table(taps, want);
        assert_memory_equal(got, want, constlab_table_words(taps) * sizeof(float));
        for (int m = 0; m < taps; m++) assert_true(want[m] == want[m + taps] && fabsf(want[m]) <= 1.0f);
    }
    /* the fill: [-1, 1), the same for a seed, another for another seed */
    enum { N = 100003 };
    float *a = malloc(N * sizeof(float)), *b = malloc(N * sizeof(float));
    assert_non_null(a);
    assert_non_null(b);
    assert_ok(ctx, constlab_fill(ctx, t.out, N, 5, NULL));
    assert_ok(ctx, ptxkit_memory_read(ctx, a, t.out, N * sizeof(float)));
    assert_ok(ctx, ptxkit_memory_set32_async(ctx, t.out, POISON, N, NULL));
    assert_ok(ctx, constlab_fill(ctx, t.out, N, 5, NULL));
    assert_ok(ctx, ptxkit_memory_read(ctx, b, t.out, N * sizeof(float)));
    assert_memory_equal(a, b, N * sizeof(float));
    size_t negative = 0;
    for (size_t i = 0; i < N; i++) {
        if (!(a[i] >= -1.0f && a[i] < 1.0f)) fail_msg("fill: element %zu is %g", i, (double)a[i]);
        negative += a[i] < 0;
    }
    assert_true(negative > N / 3 && negative < 2 * (N / 3));
    assert_ok(ctx, constlab_fill(ctx, t.out, N, 6, NULL));
    assert_ok(ctx, ptxkit_memory_read(ctx, b, t.out, N * sizeof(float)));
    assert_memory_not_equal(a, b, N * sizeof(float));
    assert_ok(ctx, constlab_fill(ctx, 0, 0, 1, NULL));
    free(a);
    free(b);
}

static void bad_arguments(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    constlab_poly good = {.store = CONSTLAB_GLOBAL, .n = 1000, .in = t.in, .out = t.out, .table = t.table};
    assert_ok(ctx, constlab_poly_run(ctx, &good, NULL));
    constlab_poly p = good;
    p.in += 4;
    assert_status(PTXKIT_ERROR_MISALIGNED, constlab_poly_run(ctx, &p, NULL));
    p = good;
    p.out += 8;
    assert_status(PTXKIT_ERROR_MISALIGNED, constlab_poly_run(ctx, &p, NULL));
    p = good;
    p.table += 2;
    assert_status(PTXKIT_ERROR_MISALIGNED, constlab_poly_run(ctx, &p, NULL));
    for (int s = CONSTLAB_GLOBAL; s <= CONSTLAB_SHARED; s++) {
        p = good;
        p.store = (constlab_store)s;
        p.table = 0;
        assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, constlab_poly_run(ctx, &p, NULL));
    }
    p = good;
    p.store = CONSTLAB_CONSTANT;
    p.table = 0;  /* __constant__ and the copy read no table */
    assert_ok(ctx, constlab_poly_run(ctx, &p, NULL));
    p.store = CONSTLAB_COPY;
    assert_ok(ctx, constlab_poly_run(ctx, &p, NULL));
    p = good;
    p.taps = CONSTLAB_MAX_TAPS + 1;
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, constlab_poly_run(ctx, &p, NULL));
    assert_non_null(strstr(ptxkit_last_error(), "taps"));
    p.taps = -1;
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, constlab_poly_run(ctx, &p, NULL));
    p = good;
    p.store = CONSTLAB_STORE_COUNT;
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, constlab_poly_run(ctx, &p, NULL));
    p = good;
    p.block_size = 48;
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, constlab_poly_run(ctx, &p, NULL));
    p.block_size = 2048;
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, constlab_poly_run(ctx, &p, NULL));
    p = good;
    p.in = 0;
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, constlab_poly_run(ctx, &p, NULL));
    p = good;
    p.n = ((size_t)1 << 40) + 1;
    assert_status(PTXKIT_ERROR_OVERFLOW, constlab_poly_run(ctx, &p, NULL));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, constlab_poly_run(ctx, NULL, NULL));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, constlab_poly_run(NULL, &good, NULL));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, constlab_table_write(ctx, t.table, 0));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, constlab_table_write(ctx, 0, 4));
    /* n == 0 launches nothing, even with no buffers */
    assert_ok(ctx, ptxkit_memory_set32_async(ctx, t.out, POISON, 16, NULL));
    p = (constlab_poly){.store = CONSTLAB_SHARED};
    assert_ok(ctx, constlab_poly_run(ctx, &p, NULL));
    uint32_t words[16];
    assert_ok(ctx, ptxkit_memory_read(ctx, words, t.out, sizeof words));
    for (int i = 0; i < 16; i++) assert_int_equal(words[i], POISON);
}

int main(void) {
    test_require_gpu();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(table_and_fill),
        cmocka_unit_test(bad_arguments),
        cmocka_unit_test(every_store_pattern_size),
        cmocka_unit_test(blocks_grids_and_default_taps),
    };
    int failed = cmocka_run_group_tests_name("constant", tests, setup, teardown);
    test_gpu_release();
    return failed;
}
