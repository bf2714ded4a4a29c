/* The constant-memory lab without a GPU: its CPU reference and accounting,
 * and its kernels compiled by NVRTC for sm_90, where each variant must read
 * its coefficients with the load it is named for (ld.const, ld.global,
 * ld.global.nc, ld.shared) and no other (skipped without NVRTC). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "constlab.h"
#include "lab.h"
#include "test_util.h"

static void names_and_accounting(void **state) {
    (void)state;
    assert_string_equal(constlab_store_name(CONSTLAB_CONSTANT), "constant");
    assert_string_equal(constlab_store_name(CONSTLAB_NC), "nc");
    assert_string_equal(constlab_store_name(CONSTLAB_COPY), "copy");
    assert_null(constlab_store_name(CONSTLAB_STORE_COUNT));
    assert_string_equal(constlab_pattern_name(true), "divergent");
    constlab_poly p = {.store = CONSTLAB_SHARED, .n = 1000};
    assert_int_equal(constlab_addresses_per_read(&p), 1);
    p.divergent = true;
    assert_int_equal(constlab_addresses_per_read(&p), 32); /* taps 0: 32 */
    p.taps = 5;
    assert_int_equal(constlab_addresses_per_read(&p), 5);
    p.taps = 64;
    assert_int_equal(constlab_addresses_per_read(&p), 32);
    p.store = CONSTLAB_COPY;
    assert_int_equal(constlab_addresses_per_read(&p), 0);
    assert_true(constlab_streamed_bytes(&p) == 8000.0);
    assert_int_equal(constlab_table_words(7), 14);
    for (int m = 0; m < 64; m++) {
        float c = constlab_coefficient(m);
        assert_true(fabsf(c) <= 1.0f && c * 8.0f == floorf(c * 8.0f));
    }
}

/* The reference's offsets: vector v = i / 4 starts at (v / 32) % taps
 * (uniform) or (v / 32 + v % 32) % taps (divergent). */
static void reference_by_hand(void **state) {
    (void)state;
    enum { N = 4 * 32 * 3 + 3 };
    float in[N], out[N], table[2 * 7];
    for (int i = 0; i < N; i++) in[i] = (float)(i % 5) * 0.25f - 0.5f;
    constlab_table(7, table);
    constlab_poly p = {.store = CONSTLAB_GLOBAL, .taps = 7, .n = N};
    for (int d = 0; d < 2; d++) {
        p.divergent = d;
        constlab_reference(&p, in, out);
        for (int i = 0; i < N; i++) {
            unsigned v = (unsigned)i / 4, b = (v / 32 + (d ? v % 32 : 0)) % 7;
            float y = table[b];
            for (int j = 1; j < 7; j++) y = fmaf(y, in[i], table[b + j]);
            assert_memory_equal(&y, &out[i], sizeof y);
        }
    }
    p.taps = 1; /* a constant polynomial: coefficient 0 everywhere */
    constlab_reference(&p, in, out);
    for (int i = 0; i < N; i++) assert_true(out[i] == constlab_coefficient(0));
    p.store = CONSTLAB_COPY;
    constlab_reference(&p, in, out);
    assert_memory_equal(in, out, sizeof in);
}

static size_t count(const char *text, const char *what) {
    size_t k = 0;
    for (const char *s = text; (s = strstr(s, what)); s += strlen(what)) k++;
    return k;
}

/* Each variant's PTX: the coefficient loads of its store, once per
 * coefficient per vector at least, and none of the others'. */
static void kernels_read_from_their_store(void **state) {
    (void)state;
    static const int taps[] = {1, 7, 32, 64};
    for (int s = 0; s < CONSTLAB_STORE_COUNT; s++)
        for (int d = 0; d < 2; d++)
            for (int k = 0; k < 4; k++) {
                constlab_poly p = {.store = (constlab_store)s, .divergent = d, .taps = taps[k]};
                ptxkit_compiled c = {0};
                if (constlab_poly_compile(&p, 90, &c) != PTXKIT_SUCCESS)
                    fail_msg("%s %s taps %d: %s", constlab_store_name(p.store), constlab_pattern_name(d), taps[k],
                             ptxkit_last_error());
                assert_non_null(strstr(c.image, ".entry const_poly"));
                /* the input's tail element is at most one plain ld.global.f32 (none where taps 1 ignores it) */
                size_t consts = count(c.image, "ld.const.f32"), nc = count(c.image, "ld.global.nc.f32"),
                       shared = count(c.image, "ld.shared.f32"), global = count(c.image, "ld.global.f32");
                size_t want = (size_t)taps[k];
                if (s == CONSTLAB_CONSTANT) assert_true(consts >= want);
                else assert_int_equal(consts, 0);
                if (s == CONSTLAB_NC) assert_true(nc >= want);
                else assert_int_equal(nc, 0);
                if (s == CONSTLAB_SHARED) assert_true(shared >= want);
                else assert_int_equal(shared, 0);
                /* the shared variant's copy-in reads the table with plain loads */
                if (s == CONSTLAB_GLOBAL) assert_true(global >= want);
                else if (s != CONSTLAB_SHARED) assert_true(global <= 1);
                assert_true((count(c.image, "fma.rn.f32") > 0) == (s != CONSTLAB_COPY && taps[k] > 1));
                ptxkit_program_compiled_free(&c);
            }
}

static void compile_rejects_what_run_rejects(void **state) {
    (void)state;
    ptxkit_compiled c = {0};
    constlab_poly p = {.store = CONSTLAB_CONSTANT, .taps = CONSTLAB_MAX_TAPS + 1};
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, constlab_poly_compile(&p, 90, &c));
    p = (constlab_poly){.store = CONSTLAB_STORE_COUNT};
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, constlab_poly_compile(&p, 90, &c));
    p = (constlab_poly){.store = CONSTLAB_NC, .block_size = 96};
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, constlab_poly_compile(&p, 90, &c));
    assert_non_null(strstr(ptxkit_last_error(), "block size"));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, constlab_poly_compile(NULL, 90, &c));
}

int main(void) {
    const struct CMUnitTest cpu[] = {
        cmocka_unit_test(names_and_accounting),
        cmocka_unit_test(reference_by_hand),
        cmocka_unit_test(compile_rejects_what_run_rejects),
    };
    const struct CMUnitTest nvrtc[] = {
        cmocka_unit_test(kernels_read_from_their_store),
    };
    int failed = cmocka_run_group_tests_name("constlab", cpu, NULL, NULL);
    if (!ptxkit_jit_available()) {
        printf("NVRTC not available: the kernels' compile checks are skipped\n");
        return failed;
    }
    return failed + cmocka_run_group_tests_name("constlab_nvrtc", nvrtc, NULL, NULL);
}
