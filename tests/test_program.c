/* The application's own programs without a GPU: creation and argument
 * checks, defines, options, name expressions, compile errors and their
 * file/line, PTXKIT_DUMP_SOURCE, ptxkit's headers, and the cache key of a
 * user kernel. Tests that compile skip where NVRTC is missing. */
#include <dirent.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "family_key.h"
#include "runtime/cache_key.h"
#include "test_util.h"

#define NVRTC_OR_SKIP()                 \
    do {                                \
        if (!ptxkit_jit_available()) {  \
            print_message("no NVRTC\n"); \
            skip();                     \
        }                               \
    } while (0)

static const char template_source[] =
    "#include \"my/params.h\"\n"
    "template <int B, typename T> __global__ void __launch_bounds__(B) scale(const T *in, T *out, T f, unsigned long long n) {\n"
    "    unsigned long long i = blockIdx.x * (unsigned long long)B + threadIdx.x;\n"
    "    if (i < n) out[i] = in[i] * f + T(OFFSET);\n"
    "}\n"
    "extern \"C\" __global__ void plain(float *o, float a, float b) { o[0] = sinf(a) / b; }\n"
    "namespace ns { __global__ void k(int *o) { o[0] = 1; } }\n";
static const ptxkit_header params_header = {"my/params.h", "#pragma once\n#define OFFSET 1\n"};

static ptxkit_program *make(const char *name, const char *source) {
    ptxkit_program *p = NULL;
    assert_ok(NULL, ptxkit_program_create(name, source, &params_header, 1, &p));
    assert_non_null(p);
    return p;
}

/* PTX of entry with defines for sm_90; NULL (and the status) when it fails. */
static char *ptx_of(const ptxkit_program *p, const char *entry, const char *const *defines, int count,
                    ptxkit_status *status, char **lowered) {
    ptxkit_compiled c;
    ptxkit_status st = ptxkit_program_compile(p, entry, defines, count, 90, 1, &c);
    if (status) *status = st;
    else if (st != PTXKIT_SUCCESS) fail_msg("compiling %s: %s", entry, ptxkit_last_error());
    if (st != PTXKIT_SUCCESS) {
        assert_null(c.image);
        return NULL;
    }
    assert_false(c.is_cubin);
    assert_int_equal(strlen(c.image), c.size);
    if (lowered) *lowered = strdup(c.lowered_name);
    char *ptx = c.image;
    c.image = NULL;
    ptxkit_program_compiled_free(&c);
    return ptx;
}

static void create_arguments(void **state) {
    (void)state;
    ptxkit_program *p = (ptxkit_program *)0x1;
    const ptxkit_header nameless = {NULL, "x"}, textless = {"a.h", NULL}, empty_name = {"", "x"};
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_program_create("a.cu", "", NULL, 0, NULL));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_program_create("a.cu", NULL, NULL, 0, &p));
    assert_null(p);
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_program_create(NULL, "", NULL, 0, &p));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_program_create("", "", NULL, 0, &p));
    assert_non_null(strstr(ptxkit_last_error(), "name"));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_program_create("a.cu", "", NULL, 1, &p));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_program_create("a.cu", "", &params_header, -1, &p));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_program_create("a.cu", "", &params_header, 100000, &p));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_program_create("a.cu", "", &nameless, 1, &p));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_program_create("a.cu", "", &textless, 1, &p));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_program_create("a.cu", "", &empty_name, 1, &p));
    assert_null(p);
    /* source and headers are copied: the caller's storage may go away */
    char name[16] = "my/params.h", text[64] = "#define OFFSET 4242\n";
    char source[128] = "#include \"my/params.h\"\nextern \"C\" __global__ void k(int *o) { o[0] = OFFSET; }\n";
    ptxkit_header h = {name, text};
    assert_ok(NULL, ptxkit_program_create("a.cu", source, &h, 1, &p));
    memset(name, 0, sizeof name);
    memset(text, 0, sizeof text);
    memset(source, 0, sizeof source);
    if (ptxkit_jit_available()) {
        char *ptx = ptx_of(p, "k", NULL, 0, NULL, NULL);
        assert_non_null(strstr(ptx, "4242"));
        free(ptx);
    }
    ptxkit_program_destroy(p);
    ptxkit_program_destroy(NULL);

    /* compile's own arguments: checked before NVRTC is even loaded */
    p = make("a.cu", "extern \"C\" __global__ void k() {}\n");
    ptxkit_compiled c;
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_program_compile(NULL, "k", NULL, 0, 90, 1, &c));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_program_compile(p, "k", NULL, 0, 90, 1, NULL));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_program_compile(p, "", NULL, 0, 90, 1, &c));
    char long_entry[1100];
    memset(long_entry, 'k', sizeof long_entry - 1);
    long_entry[sizeof long_entry - 1] = 0;
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_program_compile(p, long_entry, NULL, 0, 90, 1, &c));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_program_compile(p, "k", NULL, 0, 29, 1, &c));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_program_compile(p, "k", NULL, 0, 1001, 1, &c));
    /* architecture-specific feature sets begin with sm_90a */
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT,
                  ptxkit_program_compile(p, "k", NULL, 0, 80 | PTXKIT_ARCH_SPECIFIC, 1, &c));
    assert_null(c.image);
    ptxkit_program_destroy(p);
}

/* Headers NVRTC could not tell apart (two of a name, or one named like a
 * built-in, which every program is offered) and names with control
 * characters are refused at creation, naming the header. */
static void create_refuses_ambiguous_names(void **state) {
    (void)state;
    ptxkit_program *p = (ptxkit_program *)0x1;
    const ptxkit_header twice[] = {{"my/a.h", "#define A 1\n"}, {"b.h", ""}, {"my/a.h", "#define A 2\n"}};
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_program_create("a.cu", "", twice, 3, &p));
    assert_null(p);
    assert_non_null(strstr(ptxkit_last_error(), "'my/a.h'"));
    const char *const builtin[] = {"ptxkit/load.cuh", "ptxkit_load.cuh", "ptxkit/warp.cuh", "ptxkit_warp.cuh"};
    for (size_t i = 0; i < sizeof builtin / sizeof builtin[0]; i++) {
        const ptxkit_header h = {builtin[i], "#define ld_f32(p) 0\n"};
        assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_program_create("a.cu", "", &h, 1, &p));
        assert_null(p);
        assert_non_null(strstr(ptxkit_last_error(), builtin[i]));
    }
    /* names near a built-in's are the application's own */
    const ptxkit_header near[] = {{"ptxkit/load.h", ""}, {"my/ptxkit_load.cuh", ""}, {"load.cuh", ""}};
    assert_ok(NULL, ptxkit_program_create("a.cu", "", near, 3, &p));
    ptxkit_program_destroy(p);
    p = (ptxkit_program *)0x1;
    /* a newline in the name once turned a compile error into NOT_FOUND */
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT,
                  ptxkit_program_create("a.cu\n__nv_name_map(1): error: x", "", NULL, 0, &p));
    assert_null(p);
    assert_non_null(strstr(ptxkit_last_error(), "control character"));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_program_create("a\tb.cu", "", NULL, 0, &p));
    const ptxkit_header control = {"my\rh.h", ""};
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_program_create("a.cu", "", &control, 1, &p));
    assert_null(p);
}

/* sm_90a: the PTX and the CUBIN target the architecture-specific set,
 * which a kernel can test with __CUDA_ARCH_FEAT_SM90_ALL. */
static void architecture_specific(void **state) {
    (void)state;
    ptxkit_program *p = make("feat.cu", "extern \"C\" __global__ void k(int *o) {\n"
                                        "#ifdef __CUDA_ARCH_FEAT_SM90_ALL\n  *o = 9042;\n#else\n  *o = 9000;\n#endif\n}\n");
    ptxkit_compiled c;
    assert_ok(NULL, ptxkit_program_compile(p, "k", NULL, 0, 90 | PTXKIT_ARCH_SPECIFIC, 1, &c));
    assert_non_null(strstr(c.image, ".target sm_90a"));
    assert_non_null(strstr(c.image, "9042"));
    ptxkit_program_compiled_free(&c);
    assert_ok(NULL, ptxkit_program_compile(p, "k", NULL, 0, 90, 1, &c));
    assert_null(strstr(c.image, "sm_90a"));
    assert_non_null(strstr(c.image, "9000"));
    ptxkit_program_compiled_free(&c);
    assert_ok(NULL, ptxkit_program_compile(p, "k", NULL, 0, 90 | PTXKIT_ARCH_SPECIFIC, 0, &c));
    assert_true(c.is_cubin);
    ptxkit_program_compiled_free(&c);
    ptxkit_program_destroy(p);
}

static void create_from_file(void **state) {
    (void)state;
    ptxkit_program *p = NULL;
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_program_create_from_file(NULL, NULL, 0, &p));
    assert_status(PTXKIT_ERROR_IO, ptxkit_program_create_from_file("/nonexistent/kernel.cu", NULL, 0, &p));
    assert_non_null(strstr(ptxkit_last_error(), "/nonexistent/kernel.cu"));
    assert_status(PTXKIT_ERROR_IO, ptxkit_program_create_from_file("/tmp", NULL, 0, &p));
    assert_null(p);

    char path[64];
    snprintf(path, sizeof path, "/tmp/ptxkit-program-%d.cu", (int)getpid());
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    /* the error is on line 3 of the file */
    fputs("extern \"C\" __global__ void from_file(int *o) {\n    o[0] = 1;\n    o[1] = not_declared;\n}\n", f);
    fclose(f);
    assert_ok(NULL, ptxkit_program_create_from_file(path, NULL, 0, &p));
    remove(path);
    if (ptxkit_jit_available()) {
        ptxkit_compiled c;
        assert_status(PTXKIT_ERROR_COMPILE, ptxkit_program_compile(p, "from_file", NULL, 0, 90, 1, &c));
        char where[96];
        snprintf(where, sizeof where, "%s(3)", path); /* the path is the program's name */
        assert_non_null(strstr(ptxkit_last_error(), where));
    }
    ptxkit_program_destroy(p);
}

static void defines(void **state) {
    (void)state;
    ptxkit_program *p = make("defines.cu", "extern \"C\" __global__ void k(int *o) {\n"
                                           "    o[0] = VALUE;\n"
                                           "#ifdef FLAG\n"
                                           "    o[1] = 777;\n"
                                           "#endif\n"
                                           "}\n");
    ptxkit_compiled c;
    /* malformed defines, too many, or a NULL array: refused before NVRTC */
    const char *bad[][1] = {{""}, {"=5"}, {"A\nB=1"}, {NULL}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_program_compile(p, "k", bad[i], 1, 90, 1, &c));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_program_compile(p, "k", NULL, 1, 90, 1, &c));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_program_compile(p, "k", bad[0], -1, 90, 1, &c));
    const char *many[PTXKIT_MAX_KERNEL_DEFINES + 1];
    char text[PTXKIT_MAX_KERNEL_DEFINES + 1][16];
    for (int i = 0; i <= PTXKIT_MAX_KERNEL_DEFINES; i++) {
        snprintf(text[i], sizeof text[i], "D%d=%d", i, i);
        many[i] = text[i];
    }
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT,
                  ptxkit_program_compile(p, "k", many, PTXKIT_MAX_KERNEL_DEFINES + 1, 90, 1, &c));
    assert_non_null(strstr(ptxkit_last_error(), "defines"));

    if (ptxkit_jit_available()) {
        /* NAME=VALUE and a bare NAME both reach the preprocessor */
        const char *with_flag[] = {"VALUE=12345", "FLAG"}, *without[] = {"VALUE=54321"};
        char *a = ptx_of(p, "k", with_flag, 2, NULL, NULL), *b = ptx_of(p, "k", without, 1, NULL, NULL);
        assert_non_null(strstr(a, "12345"));
        assert_non_null(strstr(a, "777"));
        assert_non_null(strstr(b, "54321"));
        assert_null(strstr(b, "777"));
        free(a);
        free(b);
        /* the full set the header allows still compiles */
        snprintf(text[0], sizeof text[0], "VALUE=1");
        assert_ok(NULL, ptxkit_program_compile(p, "k", many, PTXKIT_MAX_KERNEL_DEFINES, 90, 1, &c));
        ptxkit_program_compiled_free(&c);
    }
    ptxkit_program_destroy(p);
}

static const char *const one_option[] = {"-lineinfo"};

static void options(void **state) {
    (void)state;
    ptxkit_program *p = make("opts.cu", template_source);
    const char *arch[] = {"-arch=sm_80", "-arch", "--gpu-architecture=compute_80", "-gpu-architecture=sm_70"};
    for (size_t i = 0; i < sizeof arch / sizeof arch[0]; i++) {
        assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_program_add_options(p, &arch[i], 1));
        assert_non_null(strstr(ptxkit_last_error(), arch[i]));
    }
    const char *empty[] = {""}, *null_option[] = {NULL};
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_program_add_options(p, empty, 1));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_program_add_options(p, null_option, 1));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_program_add_options(p, NULL, 1));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_program_add_options(NULL, empty, 0));
    assert_ok(NULL, ptxkit_program_add_options(p, NULL, 0));
    /* a refused list adds nothing, not even its good options */
    const char *mixed[] = {"-use_fast_math", "-arch=sm_80"};
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_program_add_options(p, mixed, 2));

    if (ptxkit_jit_available()) {
        char *exact = ptx_of(p, "plain", NULL, 0, NULL, NULL);
        assert_null(strstr(exact, "sin.approx"));
        assert_non_null(strstr(exact, "div.rn.f32"));
        const char *fast[] = {"-use_fast_math"};
        assert_ok(NULL, ptxkit_program_add_options(p, fast, 1));
        char *fast_ptx = ptx_of(p, "plain", NULL, 0, NULL, NULL);
        assert_non_null(strstr(fast_ptx, "sin.approx"));
        assert_null(strstr(fast_ptx, "div.rn.f32"));
        /* options add up: -lineinfo keeps fast math and adds line tables */
        const char *lineinfo[] = {"-lineinfo"};
        assert_ok(NULL, ptxkit_program_add_options(p, lineinfo, 1));
        char *both = ptx_of(p, "plain", NULL, 0, NULL, NULL);
        assert_non_null(strstr(both, "sin.approx"));
        assert_non_null(strstr(both, ".loc"));
        assert_null(strstr(fast_ptx, ".loc"));
        free(exact);
        free(fast_ptx);
        free(both);
    }
    /* precompiled headers are read from files no cache key covers */
    const char *pch[] = {"--pch", "-pch", "--use-pch=a.pch", "-use-pch", "--pch-dir=/tmp", "--pch-dir", "-pch-dir=x",
                         "--create-pch=a.pch"};
    for (size_t i = 0; i < sizeof pch / sizeof pch[0]; i++) {
        assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_program_add_options(p, &pch[i], 1));
        assert_non_null(strstr(ptxkit_last_error(), "precompiled"));
    }
    /* a count near INT_MAX: refused without overflowing the bound */
    assert_ok(NULL, ptxkit_program_add_options(p, one_option, 1));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_program_add_options(p, one_option, INT_MAX));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_program_add_options(p, one_option, INT_MAX - 1));
    assert_non_null(strstr(ptxkit_last_error(), "at most"));
    /* at most 32 options in all */
    const char *one[] = {"-lineinfo"};
    ptxkit_status st = PTXKIT_SUCCESS;
    for (int i = 0; i < 40 && st == PTXKIT_SUCCESS; i++) st = ptxkit_program_add_options(p, one, 1);
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, st);
    ptxkit_program_destroy(p);
}

static void name_expressions(void **state) {
    (void)state;
    NVRTC_OR_SKIP();
    ptxkit_program *p = make("names.cu", template_source);
    char *lowered = NULL, entry[160];
    /* a template instantiation: a mangled name, which is the PTX entry */
    char *ptx = ptx_of(p, "scale<256, float>", NULL, 0, NULL, &lowered);
    assert_string_equal(lowered, "_Z5scaleILi256EfEvPKT0_PS0_S0_y");
    snprintf(entry, sizeof entry, ".entry %s(", lowered);
    assert_non_null(strstr(ptx, entry));
    assert_non_null(strstr(ptx, ".maxntid 256"));
    free(ptx);
    free(lowered);
    ptx = ptx_of(p, "scale<128, double>", NULL, 0, NULL, &lowered);
    assert_string_equal(lowered, "_Z5scaleILi128EdEvPKT0_PS0_S0_y");
    assert_non_null(strstr(ptx, ".maxntid 128"));
    free(ptx);
    free(lowered);
    /* an extern "C" entry is its own name; a namespaced one is mangled */
    ptx = ptx_of(p, "plain", NULL, 0, NULL, &lowered);
    assert_string_equal(lowered, "plain");
    assert_non_null(strstr(ptx, ".entry plain("));
    free(ptx);
    free(lowered);
    ptx = ptx_of(p, "ns::k", NULL, 0, NULL, &lowered);
    assert_string_equal(lowered, "_ZN2ns1kEPi");
    free(ptx);
    free(lowered);
    /* names that name nothing */
    const char *missing[] = {"nosuch", "scale<256, nosuchtype>"};
    for (size_t i = 0; i < sizeof missing / sizeof missing[0]; i++) {
        ptxkit_status st;
        assert_null(ptx_of(p, missing[i], NULL, 0, &st, NULL));
        if (st != PTXKIT_ERROR_NOT_FOUND)
            fail_msg("%s gave %s: %s", missing[i], ptxkit_status_string(st), ptxkit_last_error());
        assert_non_null(strstr(ptxkit_last_error(), missing[i]));
    }
    ptxkit_program_destroy(p);
}

/* A compile error is COMPILE even when NVRTC's log contains the entry's name
 * and the word "undefined" (the entry is part of the file name and of the
 * echoed line); and name expressions that instantiate nothing are
 * NOT_FOUND whatever NVRTC's wording. */
static void not_found_only_for_the_name(void **state) {
    (void)state;
    NVRTC_OR_SKIP();
    ptxkit_program *p = make("saxpy.cu", "extern \"C\" __global__ void saxpy(float *o) { o[0] = undefined_thing; }\n");
    ptxkit_status st;
    assert_null(ptx_of(p, "saxpy", NULL, 0, &st, NULL));
    assert_status(PTXKIT_ERROR_COMPILE, st);
    ptxkit_program_destroy(p);
    p = make("names.cu", template_source);
    const char *missing[] = {"ns::nosuch", "scale<256>", "plain<3>"};
    for (size_t i = 0; i < sizeof missing / sizeof missing[0]; i++) {
        assert_null(ptx_of(p, missing[i], NULL, 0, &st, NULL));
        if (st != PTXKIT_ERROR_NOT_FOUND)
            fail_msg("%s gave %s: %s", missing[i], ptxkit_status_string(st), ptxkit_last_error());
    }
    ptxkit_program_destroy(p);
}

static void compile_errors_name_file_and_line(void **state) {
    (void)state;
    NVRTC_OR_SKIP();
    /* the error is on line 3; defines must not shift it */
    ptxkit_program *p = make("my_kernel.cu", "extern \"C\" __global__ void broken(int *o) {\n"
                                             "    o[0] = 1;\n"
                                             "    o[1] = undefined_thing;\n"
                                             "}\n");
    const char *d[] = {"A=1", "B"};
    ptxkit_status st;
    assert_null(ptx_of(p, "broken", d, 2, &st, NULL));
    assert_status(PTXKIT_ERROR_COMPILE, st);
    const char *msg = ptxkit_last_error();
    assert_non_null(strstr(msg, "my_kernel.cu(3)"));
    assert_non_null(strstr(msg, "undefined_thing"));
    assert_non_null(strstr(msg, "-DA=1")); /* the defines it was compiled with */
    ptxkit_program_destroy(p);

    /* an error inside a header names the header and its line */
    const ptxkit_header bad = {"my/params.h", "#pragma once\n#define OFFSET 1\nstatic __device__ int f() { return nope; }\n"};
    assert_ok(NULL, ptxkit_program_create("with_header.cu",
                                          "#include \"my/params.h\"\nextern \"C\" __global__ void uses(int *o) { o[0] = f(); }\n",
                                          &bad, 1, &p));
    assert_null(ptx_of(p, "uses", NULL, 0, &st, NULL));
    assert_status(PTXKIT_ERROR_COMPILE, st);
    assert_non_null(strstr(ptxkit_last_error(), "my/params.h(3)"));
    ptxkit_program_destroy(p);
}

static char *read_in(const char *dir, const char *name) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return test_read_file(path, NULL);
}

static void remove_dir(const char *dir) {
    DIR *d = opendir(dir);
    struct dirent *e;
    char path[512];
    while (d && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        remove(path);
    }
    if (d) closedir(d);
    rmdir(dir);
}

static int count_files(const char *dir) {
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;
    while (d && (e = readdir(d)) != NULL) n += e->d_name[0] != '.';
    if (d) closedir(d);
    return n;
}

static void dump_source(void **state) {
    (void)state;
    NVRTC_OR_SKIP();
    char dir[64];
    snprintf(dir, sizeof dir, "/tmp/ptxkit-dump-%d", (int)getpid());
    remove_dir(dir);
    setenv("PTXKIT_DUMP_SOURCE", dir, 1);
    const char *source = "#include \"my/params.h\"\nextern \"C\" __global__ void to_dump(int *o) {\n    o[0] = OFFSET + broken;\n}\n";
    ptxkit_program *p = make("sub/dumped.cu", source);
    const char *options[] = {"-lineinfo"}, *d[] = {"FOO=1"};
    assert_ok(NULL, ptxkit_program_add_options(p, options, 1));
    /* a kernel that compiles writes nothing */
    ptxkit_program *good = make("good.cu", "#include \"my/params.h\"\nextern \"C\" __global__ void k(int *o) { o[0] = OFFSET; }\n");
    char *ptx = ptx_of(good, "k", NULL, 0, NULL, NULL);
    free(ptx);
    ptxkit_program_destroy(good);
    assert_int_equal(count_files(dir), 0);

    ptxkit_status st;
    assert_null(ptx_of(p, "to_dump", d, 1, &st, NULL));
    assert_status(PTXKIT_ERROR_COMPILE, st);
    assert_non_null(strstr(ptxkit_last_error(), "source dumped to"));
    /* the source under its base name, each header, and the options */
    char *text = read_in(dir, "dumped.cu");
    assert_non_null(text);
    assert_string_equal(text, source);
    free(text);
    text = read_in(dir, "dumped.cu.header.my_params.h");
    assert_non_null(text);
    assert_string_equal(text, params_header.text);
    free(text);
    text = read_in(dir, "dumped.cu.options");
    assert_non_null(text);
    assert_non_null(strstr(text, "--gpu-architecture="));
    assert_non_null(strstr(text, "-DFOO=1\n"));
    assert_non_null(strstr(text, "-lineinfo\n"));
    assert_non_null(strstr(text, "name expression: to_dump"));
    free(text);
    unsetenv("PTXKIT_DUMP_SOURCE");
    remove_dir(dir);
    ptxkit_program_destroy(p);
}

/* entry NULL: every extern "C" kernel of the program in one module. */
static void whole_module(void **state) {
    (void)state;
    ptxkit_program *p = make("two.cu", "extern \"C\" __global__ void first(int *o) { o[0] = WHAT; }\n"
                                       "extern \"C\" __global__ void second(int *o) { o[1] = 2; }\n");
    ptxkit_compiled c;
    const char *what[] = {"WHAT=41"};
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_program_compile(p, NULL, NULL, 1, 90, 1, &c));
    NVRTC_OR_SKIP();
    assert_ok(NULL, ptxkit_program_compile(p, NULL, what, 1, 90, 1, &c));
    assert_false(c.is_cubin);
    assert_null(c.lowered_name);
    assert_non_null(strstr(c.image, ".entry first"));
    assert_non_null(strstr(c.image, ".entry second"));
    assert_non_null(strstr(c.image, "41"));
    ptxkit_program_compiled_free(&c);
    assert_status(PTXKIT_ERROR_COMPILE, ptxkit_program_compile(p, NULL, NULL, 0, 90, 1, &c));   /* WHAT undefined */
    ptxkit_program_destroy(p);
}

/* The library's own kernel text: listed, read by name, and a family's
 * source compiles as a program (the way `ptxkit compile FAMILY` uses it). */
static void builtin_sources(void **state) {
    (void)state;
    int count = 0, sources = 0, headers = 0;
    const char *name;
    for (; (name = ptxkit_program_builtin_source_name_get(count)) != NULL; count++) {
        const char *text = NULL;
        size_t size = 0;
        assert_ok(NULL, ptxkit_program_builtin_source_get(name, &text, &size));
        assert_int_equal(strlen(text), size);
        size_t len = strlen(name);
        sources += len > 3 && strcmp(name + len - 3, ".cu") == 0;
        headers += len > 4 && strcmp(name + len - 4, ".cuh") == 0;
    }
    assert_null(ptxkit_program_builtin_source_name_get(-1));
    assert_true(sources >= 5 && headers >= 3);
    const char *text;
    assert_ok(NULL, ptxkit_program_builtin_source_get("ptxkit_load.cuh", &text, NULL));
    assert_status(PTXKIT_ERROR_NOT_FOUND, ptxkit_program_builtin_source_get("access.cu", &text, NULL));   /* the lab's, not the library's */
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_program_builtin_source_get(NULL, &text, NULL));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_program_builtin_source_get("copy.cu", NULL, NULL));
    NVRTC_OR_SKIP();
    assert_ok(NULL, ptxkit_program_builtin_source_get("copy.cu", &text, NULL));
    ptxkit_program *p = make("copy.cu", text);
    const char *defines[] = {"LOAD_OP=2"};
    ptxkit_compiled c;
    assert_ok(NULL, ptxkit_program_compile(p, NULL, defines, 1, 90, 1, &c));
    assert_non_null(strstr(c.image, "ld.global.cg"));
    ptxkit_program_compiled_free(&c);
    ptxkit_program_destroy(p);
}

static void ptxkit_headers(void **state) {
    (void)state;
    NVRTC_OR_SKIP();
    /* plain pointers: without an operator from load.cuh NVRTC emits plain
     * ld.global (no __restrict__, so no .nc either) */
    ptxkit_program *p = make("loads.cu", "#include <ptxkit/load.cuh>\n"
                                         "extern \"C\" __global__ void k(const float *in, float *out) {\n"
                                         "    out[threadIdx.x] = ptxkit::ld_f32(in + threadIdx.x) + in[threadIdx.x + 1024];\n"
                                         "}\n");
    const struct {
        const char *define, *load;
    } ops[] = {{"LOAD_OP=2", "ld.global.cg.f32"}, {"LOAD_OP=3", "ld.global.cs.f32"}, {"LOAD_OP=6", "ld.global.nc.f32"}};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        char *ptx = ptx_of(p, "k", &ops[i].define, 1, NULL, NULL);
        if (!strstr(ptx, ops[i].load)) fail_msg("%s: no %s in\n%s", ops[i].define, ops[i].load, ptx);
        free(ptx);
    }
    /* the define token of each operator is what load.cuh expects */
    assert_string_equal(ptxkit_load_op_define(PTXKIT_LOAD_CG), "2");
    assert_string_equal(ptxkit_load_op_define(PTXKIT_LOAD_NC), "6");
    assert_null(ptxkit_load_op_define(PTXKIT_LOAD_OP_COUNT));
    const char *zero[] = {"LOAD_OP=0"}; /* the compiler's choice: a plain load */
    char *plain = ptx_of(p, "k", zero, 1, NULL, NULL);
    assert_non_null(strstr(plain, "ld.global.f32"));
    assert_null(strstr(plain, "ld.global.cg"));
    free(plain);
    ptxkit_program_destroy(p);

    /* warp.cuh's reductions and load_hint.cuh's eviction hints compile too */
    p = make("helpers.cu", "#include <ptxkit/load_hint.cuh>\n"
                           "#include <ptxkit/warp.cuh>\n"
                           "extern \"C\" __global__ void __launch_bounds__(256) k(const unsigned *in, unsigned *out) {\n"
                           "    unsigned v = ptxkit::ld_u32(in + blockIdx.x * 256 + threadIdx.x);\n"
                           "    v = ptxkit::block_reduce<256>(v, ptxkit::Max());\n"
                           "    if (threadIdx.x == 0) out[blockIdx.x] = v;\n"
                           "}\n");
    const char *hint[] = {"LOAD_OP=7"};
    char *ptx = ptx_of(p, "k", hint, 1, NULL, NULL);
    assert_non_null(strstr(ptx, "shfl.sync.bfly"));
    assert_non_null(strstr(ptx, "L2::cache_hint"));
    free(ptx);
    ptxkit_program_destroy(p);
}

/* The key of a user kernel: everything that changes the compiled code
 * changes it; the order of the defines does not. */
static void cache_keys(void **state) {
    (void)state;
    const char *hn[] = {"a.h", "b.h"}, *ht[] = {"#define A 1\n", "#define B 2\n"};
    text_hash base = text_hash_of("k.cu", "source", hn, ht, 2);
    text_hash same = text_hash_of("k.cu", "source", hn, ht, 2);
    assert_memory_equal(&base, &same, sizeof base);
    const char *ht2[] = {"#define A 1\n", "#define B 3\n"}, *hn2[] = {"a.h", "c.h"};
    const char *hsplit_n[] = {"a.h", "b.h"}, *hsplit_t[] = {"#define A 1\n#", "define B 2\n"};
    text_hash texts[] = {
        text_hash_of("k2.cu", "source", hn, ht, 2),    /* name */
        text_hash_of("k.cu", "source ", hn, ht, 2),    /* program text */
        text_hash_of("k.cu", "source", hn, ht2, 2),    /* a header's text */
        text_hash_of("k.cu", "source", hn2, ht, 2),    /* a header's name */
        text_hash_of("k.cu", "source", hn, ht, 1),     /* a header fewer */
        text_hash_of("k.cu", "source", hsplit_n, hsplit_t, 2), /* same bytes, split elsewhere */
    };
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++)
        if (memcmp(&texts[i], &base, sizeof base) == 0) fail_msg("text hash #%zu did not change", i);

    const char *defines[] = {"BLOCK_SIZE=256", "LOAD_OP=2", "FLAG"}, *reordered[] = {"FLAG", "LOAD_OP=2", "BLOCK_SIZE=256"};
    const char *options[] = {"-use_fast_math", "-lineinfo"};
    cache_key key = cache_key_for_program(base, defines, 3, options, 2, "scale<256, float>", 90, 13000);
    cache_key again = cache_key_for_program(same, reordered, 3, options, 2, "scale<256, float>", 90, 13000);
    assert_memory_equal(key.bytes, again.bytes, 16);

    const char *d_value[] = {"BLOCK_SIZE=512", "LOAD_OP=2", "FLAG"}, *d_name[] = {"BLOCK_SIZE=256", "LOAD_OP=2", "FLAG2"};
    const char *o_other[] = {"-use_fast_math", "-G"}, *o_swapped[] = {"-lineinfo", "-use_fast_math"};
    /* "-DA -DB=1" against "-DA=-DB=1": the parts are delimited */
    const char *joined_a[] = {"A", "B=1"}, *joined_b[] = {"AB=1"};
    cache_key joined = cache_key_for_program(base, joined_a, 2, options, 2, "k", 90, 13000);
    cache_key keys[] = {
        cache_key_for_program(texts[1], defines, 3, options, 2, "scale<256, float>", 90, 13000), /* text */
        cache_key_for_program(texts[2], defines, 3, options, 2, "scale<256, float>", 90, 13000), /* header */
        cache_key_for_program(base, d_value, 3, options, 2, "scale<256, float>", 90, 13000),     /* a define's value */
        cache_key_for_program(base, d_name, 3, options, 2, "scale<256, float>", 90, 13000),      /* a define's name */
        cache_key_for_program(base, defines, 2, options, 2, "scale<256, float>", 90, 13000),     /* a define fewer */
        cache_key_for_program(base, defines, 3, o_other, 2, "scale<256, float>", 90, 13000),     /* an option */
        cache_key_for_program(base, defines, 3, options, 1, "scale<256, float>", 90, 13000),     /* an option fewer */
        cache_key_for_program(base, defines, 3, o_swapped, 2, "scale<256, float>", 90, 13000),   /* option order */
        cache_key_for_program(base, defines, 3, options, 2, "scale<128, float>", 90, 13000),     /* entry */
        cache_key_for_program(base, defines, 3, options, 2, "scale<256, float>", 80, 13000),     /* arch */
        cache_key_for_program(base, defines, 3, options, 2, "scale<256, float>", 90, 12080),     /* driver */
        cache_key_for_program(base, joined_b, 1, options, 2, "k", 90, 13000),
    };
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (memcmp(keys[i].bytes, key.bytes, 16) == 0) fail_msg("cache key #%zu did not change", i);
    assert_memory_not_equal(keys[sizeof keys / sizeof keys[0] - 1].bytes, joined.bytes, 16);
    /* a user kernel never shares a key with a built-in family's */
    cache_key family = cache_key_for("copy", defines, 3, 90, 13000);
    assert_memory_not_equal(family.bytes, key.bytes, 16);
}

/* <ptxkit/async.cuh> compiles without the toolkit's headers: each helper
 * becomes its instruction on sm_90, the sm_90 ones are absent on sm_80
 * (a kernel that uses one fails to compile there, naming it), and before
 * sm_80 only the feature macros are left. */
static void async_header(void **state) {
    (void)state;
    NVRTC_OR_SKIP();
    static const char common[] =
        "#include <ptxkit/async.cuh>\n"
        "extern \"C\" __global__ void k80(const unsigned *in, unsigned *out, unsigned n) {\n"
        "    __shared__ __align__(16) unsigned s[256];\n"
        "    __shared__ __align__(8) unsigned long long bar;\n"
        "    if (threadIdx.x == 0) ptxkit::mbarrier_init(&bar, blockDim.x);\n"
        "    __syncthreads();\n"
        "    ptxkit::cp_async_ca<4>(s + threadIdx.x, in + threadIdx.x);\n"
        "    ptxkit::cp_async_ca_zfill<8>(s + 64 + 2 * threadIdx.x % 64, in + 64, n);\n"
        "    ptxkit::cp_async_cg16(s + 128, in + 128);\n"
        "    ptxkit::cp_async_cg16_zfill(s + 132, in + 132, n);\n"
        "    ptxkit::cp_async_commit();\n"
        "    ptxkit::cp_async_wait<1>();\n"
        "    ptxkit::cp_async_wait_all();\n"
        "    ptxkit::cp_async_mbarrier_arrive_noinc(&bar);\n"
        "    ptxkit::mbarrier_wait_parity(&bar, 0);\n"
        "    ptxkit::mbarrier_arrive(&bar);\n"
        "    while (!ptxkit::mbarrier_test_wait_parity(&bar, 1)) {}\n"
        "    out[threadIdx.x] = s[(threadIdx.x + 1) % 256] + PTXKIT_HAS_CP_ASYNC + PTXKIT_HAS_BULK_COPY;\n"
        "    if (threadIdx.x == 0) ptxkit::mbarrier_inval(&bar);\n"
        "}\n";
    static const char bulk[] =
        "extern \"C\" __global__ void k90(const unsigned *in, unsigned *out) {\n"
        "    __shared__ __align__(16) unsigned s[256];\n"
        "    __shared__ __align__(8) unsigned long long bar;\n"
        "    if (threadIdx.x == 0) { ptxkit::mbarrier_init(&bar, 1); ptxkit::fence_mbarrier_init(); }\n"
        "    __syncthreads();\n"
        "    if (threadIdx.x == 0) { ptxkit::mbarrier_arrive_expect_tx(&bar, 1024); ptxkit::bulk_copy_g2s(s, in, 1024, &bar); }\n"
        "    while (!ptxkit::mbarrier_try_wait_parity(&bar, 0)) {}\n"
        "    s[threadIdx.x] += 1;\n"
        "    ptxkit::fence_proxy_async_shared();\n"
        "    __syncthreads();\n"
        "    if (threadIdx.x == 0) { ptxkit::bulk_copy_s2g(out, s, 1024); ptxkit::bulk_commit(); ptxkit::bulk_wait_read<0>(); ptxkit::bulk_wait<0>(); }\n"
        "}\n";
    char source[sizeof common + sizeof bulk];
    snprintf(source, sizeof source, "%s%s", common, bulk);
    ptxkit_program *p = make("async.cu", source);
    char *ptx = ptx_of(p, "k90", NULL, 0, NULL, NULL);
    static const char *const sm90[] = {"mbarrier.arrive.expect_tx.shared::cta.b64",
                                       "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes",
                                       "cp.async.bulk.global.shared::cta.bulk_group", "cp.async.bulk.commit_group",
                                       "cp.async.bulk.wait_group.read 0", "cp.async.bulk.wait_group 0",
                                       "fence.proxy.async.shared::cta", "fence.mbarrier_init.release.cluster",
                                       "mbarrier.try_wait.parity.shared::cta.b64"};
    for (size_t i = 0; i < sizeof sm90 / sizeof sm90[0]; i++)
        if (!strstr(ptx, sm90[i])) fail_msg("k90: no %s in\n%s", sm90[i], ptx);
    free(ptx);
    ptx = ptx_of(p, "k80", NULL, 0, NULL, NULL);
    static const char *const sm80[] = {"cp.async.ca.shared.global [%r", "], 4;", "], 8, %r", "cp.async.cg.shared.global",
                                       "], 16;", "], 16, %r", "cp.async.commit_group", "cp.async.wait_group 1",
                                       "cp.async.wait_all", "cp.async.mbarrier.arrive.noinc.shared::cta.b64",
                                       "mbarrier.init.shared::cta.b64",
                                       "mbarrier.arrive.shared::cta.b64", "mbarrier.test_wait.parity.shared::cta.b64",
                                       "mbarrier.inval.shared::cta.b64"};
    for (size_t i = 0; i < sizeof sm80 / sizeof sm80[0]; i++)
        if (!strstr(ptx, sm80[i])) fail_msg("k80: no %s in\n%s", sm80[i], ptx);
    free(ptx);
    ptxkit_program_destroy(p);

    /* sm_80: the sm_80 kernel alone compiles, waiting with test_wait; the
     * bulk copy is an unknown name */
    p = make("async80.cu", common);
    ptxkit_compiled c;
    assert_ok(NULL, ptxkit_program_compile(p, "k80", NULL, 0, 80, 1, &c));
    assert_null(strstr(c.image, "try_wait"));
    assert_non_null(strstr(c.image, "mbarrier.test_wait.parity"));
    ptxkit_program_compiled_free(&c);
    ptxkit_program_destroy(p);
    p = make("async80.cu", source);
    assert_status(PTXKIT_ERROR_COMPILE, ptxkit_program_compile(p, "k90", NULL, 0, 80, 1, &c));
    assert_non_null(strstr(ptxkit_last_error(), "bulk_copy_g2s"));
    ptxkit_program_destroy(p);
    /* sm_75: no helpers, the macros say so */
    p = make("async75.cu", "#include <ptxkit/async.cuh>\n"
                           "extern \"C\" __global__ void k(int *o) { o[0] = PTXKIT_HAS_CP_ASYNC * 2 + PTXKIT_HAS_BULK_COPY; }\n");
    assert_ok(NULL, ptxkit_program_compile(p, "k", NULL, 0, 75, 1, &c));
    assert_null(strstr(c.image, "cp.async"));
    ptxkit_program_compiled_free(&c);
    ptxkit_program_destroy(p);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(create_arguments), cmocka_unit_test(create_refuses_ambiguous_names), cmocka_unit_test(architecture_specific), cmocka_unit_test(create_from_file),
        cmocka_unit_test(defines), cmocka_unit_test(options),
        cmocka_unit_test(name_expressions), cmocka_unit_test(not_found_only_for_the_name),
        cmocka_unit_test(compile_errors_name_file_and_line),
        cmocka_unit_test(dump_source), cmocka_unit_test(ptxkit_headers),
        cmocka_unit_test(whole_module), cmocka_unit_test(builtin_sources), cmocka_unit_test(async_header),
        cmocka_unit_test(cache_keys),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
