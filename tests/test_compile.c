/* NVRTC compilation and kernel identity (no GPU needed). */
#include <stdlib.h>
#include <string.h>

#include "family_key.h"
#include "runtime/cache_key.h"
#include "runtime/compile.h"
#include "runtime/program.h"
#include "runtime/embedded.h"
#include "test_util.h"

static void compiles_cubin_for_sm90(void **state) {
    (void)state;
    const char *defines[] = {"BLOCK_SIZE=256", "LOAD_OP=2", "UNROLL=4"};
    compile_output out;
    assert_ok(NULL, compile_family(NULL, "copy", defines, 3, 90, false, NULL, 0, &out));
    assert_true(out.is_cubin);
    assert_true(out.size > 1000);
    assert_memory_equal(out.image, "\x7f" "ELF", 4);
    compile_output_free(&out);
}

static void compiles_ptx_with_operator(void **state) {
    (void)state;
    const char *defines[] = {"LOAD_OP=3"};
    compile_output out;
    assert_ok(NULL, compile_family(NULL, "copy", defines, 1, 90, true, NULL, 0, &out));
    assert_false(out.is_cubin);
    assert_non_null(strstr(out.image, ".entry ptxkit_copy_vec16"));
    assert_non_null(strstr(out.image, ".entry ptxkit_copy_shift"));
    assert_non_null(strstr(out.image, "ld.global.cs.v4.u32"));
    assert_non_null(strstr(out.image, ".maxntid 512")); /* copy.cu's default block */
    compile_output_free(&out);
}

static void compile_error_returns_log(void **state) {
    (void)state;
    const char *defines[] = {"LOAD_OP=9"};
    compile_output out;
    assert_status(PTXKIT_ERROR_COMPILE, compile_family(NULL, "copy", defines, 1, 90, false, NULL, 0, &out));
    const char *msg = ptxkit_last_error();
    assert_non_null(strstr(msg, "LOAD_OP must be 0..6"));
    assert_non_null(strstr(msg, "ptxkit/load.cuh")); /* the header, by the name copy.cu includes */
    /* the target is named whole (it once read "mpute_90") */
    assert_true(strstr(msg, " for sm_90 ") || strstr(msg, " for compute_90 "));
    assert_null(out.image);
}

static void unknown_family(void **state) {
    (void)state;
    compile_output out;
    assert_status(PTXKIT_ERROR_NOT_FOUND, compile_family(NULL, "no_such_family", NULL, 0, 90, false, NULL, 0, &out));
    assert_non_null(strstr(ptxkit_last_error(), "no_such_family"));
}

static void cache_key_identity(void **state) {
    (void)state;
    const char *a[] = {"BLOCK_SIZE=256", "LOAD_OP=1"};
    const char *b[] = {"LOAD_OP=1", "BLOCK_SIZE=256"};
    const char *c[] = {"LOAD_OP=1", "BLOCK_SIZE=512"};
    cache_key ka = cache_key_for("copy", a, 2, 90, 13000), kb = cache_key_for("copy", b, 2, 90, 13000);
    assert_memory_equal(ka.bytes, kb.bytes, 16);
    cache_key kc = cache_key_for("copy", c, 2, 90, 13000);
    assert_memory_not_equal(ka.bytes, kc.bytes, 16);
    cache_key kd = cache_key_for("copy", a, 2, 80, 13000);
    assert_memory_not_equal(ka.bytes, kd.bytes, 16);
    cache_key ke = cache_key_for("copy", a, 2, 90, 12080);
    assert_memory_not_equal(ka.bytes, ke.bytes, 16);
    cache_key kf = cache_key_for("ceiling", a, 2, 90, 13000);
    assert_memory_not_equal(ka.bytes, kf.bytes, 16);
    char hex[33];
    cache_key_hex(&ka, hex);
    assert_int_equal(strlen(hex), 32);
}

static void embedded_sources_present(void **state) {
    (void)state;
    const embedded_file *f = embedded_find("copy.cu");
    assert_non_null(f);
    assert_int_equal(strlen(f->text), f->size);
    assert_non_null(embedded_find("ptxkit_load.cuh"));
    assert_non_null(embedded_find("copy.ptx"));
    assert_null(embedded_find("nothing.cu"));
}

int main(void) {
    if (!ptxkit_jit_available()) {
        printf("skipped: NVRTC not available\n");
        return TEST_SKIP_EXIT;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(compiles_cubin_for_sm90), cmocka_unit_test(compiles_ptx_with_operator),
        cmocka_unit_test(compile_error_returns_log), cmocka_unit_test(unknown_family),
        cmocka_unit_test(cache_key_identity), cmocka_unit_test(embedded_sources_present),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
