/* Modules of several names without a GPU (issue 25): the lowered names of
 * kernels and variables (namespaces, an anonymous namespace, a variable
 * template) from one compile, their disk form, the module key of a
 * multi-entry compile, and the argument checks of the module calls. Tests
 * that compile skip where NVRTC is missing. */
#include <stdlib.h>
#include <string.h>

#include "family_key.h"
#include "runtime/compile.h"
#include "runtime/disk_cache.h"
#include "runtime/modules.h"
#include "runtime/program.h"
#include "test_util.h"

#define NVRTC_OR_SKIP()                 \
    do {                                \
        if (!ptxkit_jit_available()) {  \
            print_message("no NVRTC\n"); \
            skip();                     \
        }                               \
    } while (0)

static const char source[] =
    "namespace ns { __constant__ float coeffs[7]; __device__ int counter; }\n"
    "namespace { __device__ unsigned hidden[3]; }\n"
    "template <typename T> __device__ T tv[4];\n"
    "__constant__ double plain_constant;\n"
    "extern \"C\" __device__ int c_variable;\n"
    "extern \"C\" __global__ void produce(int v) { ns::counter = v; hidden[0] = v; }\n"
    "namespace ns { __global__ void consume(int *out) { out[0] = counter + (int)coeffs[0]; } }\n"
    "template <typename T> __global__ void fill(T *o) { o[0] = tv<T>[0]; }\n";

static const char *const names[] = {"&ns::coeffs", "&ns::counter", "&hidden", "&tv<float>", "&plain_constant",
                                    "&c_variable", "produce", "ns::consume", "fill<float>"};
enum { NAME_COUNT = sizeof names / sizeof names[0] };

/* One compile lowers every name, kernels and variables alike, and each
 * lowered name is a symbol of the image. */
static void lowered_names(void **state) {
    (void)state;
    NVRTC_OR_SKIP();
    ptxkit_program *p = NULL;
    assert_ok(NULL, ptxkit_program_create("modules.cu", source, NULL, 0, &p));
    compile_request req = program_request(p, NULL, NULL, 0);
    req.name_expressions = names;
    req.name_expression_count = NAME_COUNT;
    compile_output out;
    assert_ok(NULL, compile_source(NULL, &req, 80, true, &out));
    assert_int_equal(out.lowered_count, NAME_COUNT);
    const char *expected[] = {"_ZN2ns6coeffsE", "_ZN2ns7counterE", NULL, "_Z2tvIfE", "plain_constant", "c_variable",
                              "produce", "_ZN2ns7consumeEPi", "_Z4fillIfEvPT_"};
    for (int i = 0; i < NAME_COUNT; i++) {
        const char *l = out.lowered_names[i];
        assert_non_null(l);
        if (expected[i]) assert_string_equal(l, expected[i]);
        /* the anonymous namespace's variable: a name of its own, found in the image */
        else assert_non_null(strstr(l, "6hidden"));
        if (!strstr(out.image, l)) fail_msg("'%s' (%s) is not in the PTX", l, names[i]);
    }
    /* the __constant__ variables live in the constant space, the others in global */
    char decl[128];
    snprintf(decl, sizeof decl, ".const .align 4 .b8 %s[28]", out.lowered_names[0]);
    if (!strstr(out.image, decl)) fail_msg("no '%s' in the PTX", decl);
    compile_output_free(&out);

    /* a name that names nothing: NOT_FOUND, as for one entry */
    const char *missing[] = {"produce", "&ns::nothing"};
    req.name_expressions = missing;
    req.name_expression_count = 2;
    assert_status(PTXKIT_ERROR_NOT_FOUND, compile_source(NULL, &req, 80, true, &out));
    ptxkit_program_destroy(p);
}

static void disk_form(void **state) {
    (void)state;
    const char *lowered[] = {"_ZN2ns6coeffsE", "produce", "x"};
    char *text = disk_cache_names_join(lowered, 3);
    assert_non_null(text);
    assert_string_equal(text, "_ZN2ns6coeffsE\nproduce\nx");
    const char *back[3];
    char *copy = strdup(text);
    assert_true(disk_cache_names_split(copy, 3, back));
    for (int i = 0; i < 3; i++) assert_string_equal(back[i], lowered[i]);
    /* text of another count, or with an empty line, is refused */
    const char *bad[][2] = {{"a\nb\nc", "2"}, {"a\nb\nc", "4"}, {"a\n\nc", "3"}, {"", "1"}, {"a\nb\n", "3"}, {"a\nb\n", "2"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char *t = strdup(bad[i][0]);
        if (disk_cache_names_split(t, atoi(bad[i][1]), back)) fail_msg("decoded bad text #%zu", i);
        free(t);
    }
    free(copy);
    free(text);
    /* a name that could not be read back is not written */
    const char *newline[] = {"a\nb"}, *empty[] = {""};
    assert_null(disk_cache_names_join(newline, 1));
    assert_null(disk_cache_names_join(empty, 1));
    /* one name's form is the single entry's */
    text = disk_cache_names_join(lowered + 1, 1);
    assert_string_equal(text, "produce");
    free(text);
}

static cache_key key_of(const ptxkit_program *p, const char *const *n, int count, const char *const *defines,
                        int define_count, key_part part) {
    kernel_request req = {.kind = KERNEL_FROM_PROGRAM, .program = p, .names = n, .name_count = count,
                          .defines = defines, .define_count = define_count};
    return kernel_cache_key(&req, part, 90, 13000);
}

/* The disk cache keys the module: every name is part of it, and a module
 * of one name is the short path's module. */
static void multi_entry_keys(void **state) {
    (void)state;
    struct ptxkit_program p = {.name = (char *)"k.cu", .hash = text_hash_of("k.cu", "src", NULL, NULL, 0)};
    const char *ab[] = {"a", "b"}, *ba[] = {"b", "a"}, *a[] = {"a"}, *b[] = {"b"}, *joined[] = {"ab"};
    const char *abc[] = {"a", "b", "c"};
    const char *defines[] = {"X=1", "Y"}, *reordered[] = {"Y", "X=1"};
    cache_key base = key_of(&p, ab, 2, defines, 2, KEY_MODULE);
    cache_key same = key_of(&p, ab, 2, reordered, 2, KEY_MODULE);
    assert_memory_equal(base.bytes, same.bytes, 16);
    cache_key others[] = {
        key_of(&p, ba, 2, defines, 2, KEY_MODULE),         /* order: lowered names are stored in it */
        key_of(&p, a, 1, defines, 2, KEY_MODULE),          /* a name fewer */
        key_of(&p, abc, 3, defines, 2, KEY_MODULE),        /* a name more */
        key_of(&p, joined, 1, defines, 2, KEY_MODULE),     /* the same bytes, delimited otherwise */
        key_of(&p, ab, 2, defines, 1, KEY_MODULE),         /* a define fewer */
        key_of(&p, NULL, 0, defines, 2, KEY_MODULE),       /* no names at all */
    };
    for (size_t i = 0; i < sizeof others / sizeof others[0]; i++)
        if (memcmp(others[i].bytes, base.bytes, 16) == 0) fail_msg("key #%zu did not change", i);
    /* a request's own NVRTC options (a family's per-configuration choice) */
    const char *level2[] = {"-Xptxas=--register-usage-level=2"}, *level0[] = {"-Xptxas=--register-usage-level=0"};
    kernel_request with = {.kind = KERNEL_FROM_PROGRAM, .program = &p, .names = ab, .name_count = 2,
                           .defines = defines, .define_count = 2, .options = level2, .option_count = 1};
    cache_key two = kernel_cache_key(&with, KEY_MODULE, 90, 13000);
    with.options = level0;
    cache_key zero = kernel_cache_key(&with, KEY_MODULE, 90, 13000);
    assert_memory_not_equal(two.bytes, base.bytes, 16);
    assert_memory_not_equal(two.bytes, zero.bytes, 16);
    /* a module of one name is the single-entry kernel's module */
    kernel_request single = {.kind = KERNEL_FROM_PROGRAM, .program = &p, .defines = defines, .define_count = 2,
                             .entry = "b", .name_expression = true};
    for (key_part part = KEY_MODULE; part <= KEY_KERNEL; part++) {
        if (part == KEY_KERNEL) continue;
        cache_key one = key_of(&p, b, 1, defines, 2, part), entry = kernel_cache_key(&single, part, 90, 13000);
        assert_memory_equal(one.bytes, entry.bytes, 16);
    }
}

static void module_object(void **state) {
    (void)state;
    cache_key key = {{1, 2, 3}};
    const char *n[] = {"&ns::coeffs", "fill<float>"}, *l[] = {"_ZN2ns6coeffsE", "_Z4fillIfEvPT_"};
    ptxkit_module *m = module_object_new(NULL, NULL, &key, n, l, 2);
    assert_non_null(m);
    assert_string_equal(module_symbol_name(m, "&ns::coeffs"), "_ZN2ns6coeffsE");
    assert_string_equal(module_symbol_name(m, "fill<float>"), "_Z4fillIfEvPT_");
    assert_string_equal(module_symbol_name(m, "produce"), "produce");
    assert_memory_equal(m->key.bytes, key.bytes, 16);
    free(m);
    m = module_object_new(NULL, NULL, &key, NULL, NULL, 0);
    assert_non_null(m);
    assert_string_equal(module_symbol_name(m, "_ZN2ns6coeffsE"), "_ZN2ns6coeffsE");
    free(m);
    assert_false(module_name_is_expression("_ZN2ns6coeffsE"));
    assert_false(module_name_is_expression("produce"));
    assert_false(module_name_is_expression("$str.1"));
    assert_true(module_name_is_expression("&ns::coeffs"));
    assert_true(module_name_is_expression("fill<float>"));
    assert_true(module_name_is_expression("ns::consume"));
}

/* Checks that fail before any driver call. */
static void arguments(void **state) {
    (void)state;
    ptxkit_context *ctx = test_fake_context();
    ptxkit_program *p = NULL;
    assert_ok(NULL, ptxkit_program_create("modules.cu", source, NULL, 0, &p));
    ptxkit_module *m = (ptxkit_module *)(uintptr_t)1;
    const char *twice[] = {"produce", "produce"}, *null_name[] = {"produce", NULL}, *empty[] = {""};
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_program_module_get(NULL, p, names, 1, NULL, 0, &m));
    assert_null(m);
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_program_module_get(ctx, NULL, names, 1, NULL, 0, &m));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_program_module_get(ctx, p, names, 1, NULL, 0, NULL));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_program_module_get(ctx, p, NULL, 2, NULL, 0, &m));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_program_module_get(ctx, p, names, -1, NULL, 0, &m));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT,
                  ptxkit_program_module_get(ctx, p, names, PTXKIT_MAX_MODULE_NAMES + 1, NULL, 0, &m));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_program_module_get(ctx, p, twice, 2, NULL, 0, &m));
    assert_non_null(strstr(ptxkit_last_error(), "'produce' is named twice"));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_program_module_get(ctx, p, null_name, 2, NULL, 0, &m));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_program_module_get(ctx, p, empty, 1, NULL, 0, &m));
    const char *bad_define[] = {"=1"};
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_program_module_get(ctx, p, names, 1, bad_define, 1, &m));
    ptxkit_kernel *k = (ptxkit_kernel *)(uintptr_t)1;
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_program_kernel_get(ctx, p, NULL, NULL, 0, &k));
    assert_null(k);
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_module_kernel_get(NULL, "produce", &k));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_kernel_module_get(NULL, &m));
    ptxkit_dptr d = 7;
    size_t bytes = 7;
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_module_variable_get(NULL, "&ns::coeffs", &d, &bytes));
    assert_true(d == 0 && bytes == 0);
    int v = 0;
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_module_variable_write(NULL, "x", 0, &v, sizeof v));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_module_variable_read(NULL, "x", 0, &v, sizeof v));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_module_variable_write_async(NULL, "x", 0, &v, sizeof v, NULL));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_module_variable_read_async(NULL, "x", 0, &v, sizeof v, NULL));

    /* a name expression the module was not compiled for: NOT_FOUND before the driver */
    cache_key key = {{0}};
    const char *n[] = {"&ns::coeffs"}, *l[] = {"_ZN2ns6coeffsE"};
    ptxkit_module *fake = module_object_new(ctx, NULL, &key, n, l, 1);
    assert_non_null(fake);
    assert_status(PTXKIT_ERROR_NOT_FOUND, ptxkit_module_variable_get(fake, "&ns::counter", &d, &bytes));
    assert_non_null(strstr(ptxkit_last_error(), "'&ns::counter'"));
    assert_status(PTXKIT_ERROR_NOT_FOUND, ptxkit_module_kernel_get(fake, "ns::consume", &k));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_module_variable_get(fake, "", &d, &bytes));
    free(fake);
    ptxkit_program_destroy(p);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(lowered_names), cmocka_unit_test(disk_form), cmocka_unit_test(multi_entry_keys),
        cmocka_unit_test(module_object), cmocka_unit_test(arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
