/* ptxkit_copy against memcpy on the host: every path, width and cache
 * operator, all 16 x 16 source/destination misalignments, sizes from 0 to
 * 2^28 bytes, poisoned destinations with guard bytes around them. */
#include <stdlib.h>
#include <string.h>

#include "ptxkit_ops.h"
#include "runtime/registry.h"
#include "test_util.h"

enum { GUARD = 64, POISON = 0xCD };

typedef struct buffers {
    ptxkit_dptr src, dst;
    unsigned char *host_src, *host_dst;
    size_t capacity;
} buffers;

static buffers buf;

static int setup(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    buf.capacity = ((size_t)1 << 28) + 4 * GUARD;
    uint64_t rng = test_seed();
    buf.host_src = malloc(buf.capacity);
    buf.host_dst = malloc(buf.capacity);
    if (!buf.host_src || !buf.host_dst) return -1;
    test_fill_random(buf.host_src, buf.capacity, &rng);
    if (ptxkit_memory_alloc(ctx, buf.capacity, &buf.src) || ptxkit_memory_alloc(ctx, buf.capacity, &buf.dst)) return -1;
    return ptxkit_memory_write(ctx, buf.src, buf.host_src, buf.capacity) == PTXKIT_SUCCESS ? 0 : -1;
}

static int teardown(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    ptxkit_memory_free(ctx, buf.src);
    ptxkit_memory_free(ctx, buf.dst);
    free(buf.host_src);
    free(buf.host_dst);
    return 0;
}

/* Copies n bytes from src+so to dst+GUARD+do and checks the copied bytes and
 * the untouched poison around them. */
static void check_copy(size_t so, size_t dof, size_t n, const launch_options *o) {
    ptxkit_context *ctx = test_gpu();
    size_t span = n + 2 * GUARD;
    assert_ok(ctx, ptxkit_memory_set8_async(ctx, buf.dst + dof, POISON, span, NULL));
    assert_ok(ctx, ptxkit_copy(ctx, buf.dst + dof + GUARD, buf.src + so, n, COPY_CONFIG(o), NULL));
    assert_ok(ctx, ptxkit_memory_read(ctx, buf.host_dst, buf.dst + dof, span));
    for (size_t i = 0; i < GUARD; i++)
        if (buf.host_dst[i] != POISON || buf.host_dst[GUARD + n + i] != POISON)
            fail_msg("copy of %zu bytes (src+%zu, dst+%zu, path %d, op %s, vec %d) wrote outside its range", n, so, dof,
                     o->path, ptxkit_load_op_name(o->load_op), o->vector_bytes);
    if (memcmp(buf.host_dst + GUARD, buf.host_src + so, n) != 0) {
        size_t i = 0;
        while (buf.host_dst[GUARD + i] == buf.host_src[so + i]) i++;
        fail_msg("copy of %zu bytes (src+%zu, dst+%zu, path %d, op %s, vec %d, block %d) differs at byte %zu", n, so, dof,
                 o->path, ptxkit_load_op_name(o->load_op), o->vector_bytes, o->block_size, i);
    }
}

static void all_misalignments_every_variant(void **state) {
    (void)state;
    static const size_t lengths[] = {0, 1, 3, 7, 15, 16, 17, 31, 33, 100, 4099};
    static const int widths[] = {0, 4, 8, 16};
    for (int path = PTXKIT_PATH_JIT; path <= PTXKIT_PATH_PTX; path++)
        for (int op = 0; op < PTXKIT_LOAD_OP_COUNT; op++) {
            if (path == PTXKIT_PATH_PTX && op == PTXKIT_LOAD_DEFAULT) continue;
            for (int w = 0; w < 4; w++) {
                launch_options o = {.path = (ptxkit_path)path, .load_op = (ptxkit_load_op)op, .vector_bytes = widths[w]};
                for (size_t so = 0; so < 16; so++)
                    for (size_t dof = 0; dof < 16; dof++) {
                        /* every length for one representative width; one for the rest */
                        size_t count = (w == 0 && op == PTXKIT_LOAD_CG) ? sizeof lengths / sizeof lengths[0] : 1;
                        for (size_t l = 0; l < count; l++)
                            check_copy(so, dof, count == 1 ? 4099 + so : lengths[l], &o);
                    }
            }
        }
}

static void random_sizes_up_to_2_28(void **state) {
    (void)state;
    uint64_t rng = test_seed() ^ 0x5555;
    size_t sizes[24] = {0, 1, 2, 5, 255, 4095, 4097, 65537, (1u << 20) + 3, (1u << 26) - 1, (size_t)1 << 28};
    for (int i = 11; i < 24; i++) sizes[i] = (size_t)(test_rand(&rng) % ((uint64_t)1 << (i < 20 ? 8 + i : 28)));
    for (int i = 0; i < 24; i++) {
        size_t so = test_rand(&rng) % 16, dof = test_rand(&rng) % 16;
        if (sizes[i] + so + dof + 2 * GUARD > buf.capacity) so = dof = 0;
        launch_options o = {.path = (ptxkit_path)(1 + i % 2), .load_op = (ptxkit_load_op)(1 + i % 6)};
        check_copy(so, dof, sizes[i], &o);
    }
}

static void every_block_size(void **state) {
    (void)state;
    for (int b = 32; b <= 1024; b *= 2) {
        launch_options o = {.path = PTXKIT_PATH_JIT, .block_size = b, .load_op = PTXKIT_LOAD_NC};
        check_copy(3, 0, (1u << 20) + 13, &o);
        check_copy(0, 0, (1u << 20) + 16, &o);
        o.blocks_per_sm = 1;
        check_copy(5, 9, 777777, &o);
    }
}

/* Copies n bytes from src+so to dst+GUARD+dof with a ptxkit_config and
 * checks them (the poison around them as check_copy does). */
static void check_copy_config(size_t so, size_t dof, size_t n, const ptxkit_config *pc) {
    ptxkit_context *ctx = test_gpu();
    size_t span = n + 2 * GUARD;
    assert_ok(ctx, ptxkit_memory_set8_async(ctx, buf.dst + dof, POISON, span, NULL));
    assert_ok(ctx, ptxkit_copy(ctx, buf.dst + dof + GUARD, buf.src + so, n, pc, NULL));
    assert_ok(ctx, ptxkit_memory_read(ctx, buf.host_dst, buf.dst + dof, span));
    for (size_t i = 0; i < GUARD; i++)
        if (buf.host_dst[i] != POISON || buf.host_dst[GUARD + n + i] != POISON)
            fail_msg("copy of %zu bytes (src+%zu, dst+%zu) wrote outside its range", n, so, dof);
    if (memcmp(buf.host_dst + GUARD, buf.host_src + so, n) != 0)
        fail_msg("copy of %zu bytes (src+%zu, dst+%zu) differs", n, so, dof);
}

static long long config_value(const ptxkit_config *c, const char *name) {
    long long v = -1;
    assert_int_equal(ptxkit_config_get(c, name, &v), PTXKIT_SUCCESS);
    return v;
}

/* ptxkit_copy_config_get names what the call runs: the call with config
 * NULL loads its kernel; the same copy with the configuration _config_get
 * answered loads no other (a different block, width, unroll, operator or
 * path would be another module), and both copy correctly. Every relative
 * alignment of dst and src (which picks the width), both paths. */
static void config_get_matches_the_call(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    assert_ok(ctx, ptxkit_copy_supported(ctx));
    static const size_t sizes[] = {4099, (1u << 20) + 5};
    for (int path = PTXKIT_PATH_AUTO; path <= PTXKIT_PATH_PTX; path++)
        for (size_t s = 0; s < 2; s++)
            for (size_t so = 0; so < 16; so++) {
                size_t dof = (so * 7) % 16, n = sizes[s];
                ptxkit_config ask = {0}, got;
                if (path) ptxkit_config_set(&ask, "path", path);
                ptxkit_dptr dst = buf.dst + dof + GUARD, src = buf.src + so;
                assert_ok(ctx, ptxkit_copy_config_get(ctx, dst, src, n, &ask, &got));
                assert_int_equal(got.count, 6);
                long long width = config_value(&got, "vector_bytes");
                long long diff = (long long)((dst - src) & 15);
                long long widest = diff == 0 ? 16 : diff % 8 == 0 ? 8 : 4;
                /* a tuned entry (JIT) may ask for narrower vectors; the PTX path has none */
                assert_true(width <= widest && (width == 4 || width == 8 || width == 16));
                if (path == PTXKIT_PATH_PTX) assert_int_equal(width, widest);
                if (path) assert_int_equal(config_value(&got, "path"), path);
                check_copy_config(so, dof, n, &ask);
                size_t loaded = registry_module_count(ctx);
                check_copy_config(so, dof, n, &got);
                if (registry_module_count(ctx) != loaded)
                    fail_msg("copy (path %d, src+%zu, dst+%zu, %zu bytes) with the configuration _config_get named "
                             "loaded another module: it is not what the call ran",
                             path, so, dof, n);
            }
    /* a configuration's own values come back */
    ptxkit_config ask = {0}, got;
    ptxkit_config_set(&ask, "path", PTXKIT_PATH_JIT);
    ptxkit_config_set(&ask, "block_size", 128);
    ptxkit_config_set(&ask, "unroll", 4);
    ptxkit_config_set(&ask, "vector_bytes", 8);
    ptxkit_config_set(&ask, "load_op", PTXKIT_LOAD_CG);
    ptxkit_config_set(&ask, "blocks_per_sm", 2);
    assert_ok(ctx, ptxkit_copy_config_get(ctx, buf.dst, buf.src, 1 << 20, &ask, &got));
    assert_int_equal(config_value(&got, "block_size"), 128);
    assert_int_equal(config_value(&got, "unroll"), 4);
    assert_int_equal(config_value(&got, "vector_bytes"), 8);
    assert_int_equal(config_value(&got, "load_op"), PTXKIT_LOAD_CG);
    assert_int_equal(config_value(&got, "blocks_per_sm"), 2);
}

int main(void) {
    test_require_gpu();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(all_misalignments_every_variant),
        cmocka_unit_test(random_sizes_up_to_2_28),
        cmocka_unit_test(every_block_size),
        cmocka_unit_test(config_get_matches_the_call),
    };
    int failed = cmocka_run_group_tests(tests, setup, teardown);
    test_gpu_release();
    return failed;
}
