/* Header trees from disk without a GPU: include directories (the public
 * call and -I options), the directory of a program read from a file, and
 * the cache key, which covers every header file on the search path that a
 * compile may read: an edited header changes it, an untouched (or merely
 * touched) one does not, a header appearing earlier on the path does, and
 * the order of the directories matters. With NVRTC present, the toolkit's
 * headers compile with no header handed in. */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/compile.h"
#include "runtime/header_tree.h"
#include "runtime/kernel_cache.h"
#include "runtime/program.h"
#include "test_util.h"

static char root[256];

static void path_of(char *out, const char *rel) { snprintf(out, PATH_MAX, "%s/%s", root, rel); }

static void write_file(const char *rel, const char *text) {
    char path[PATH_MAX];
    path_of(path, rel);
    char *slash = strrchr(path, '/');
    *slash = 0;
    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", path);
    assert_int_equal(system(cmd), 0);
    *slash = '/';
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static int setup(void **state) {
    (void)state;
    snprintf(root, sizeof root, "/tmp/ptxkit_headers_XXXXXX");
    if (!mkdtemp(root)) return -1;
    return 0;
}

static int teardown(void **state) {
    (void)state;
    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    return system(cmd) == 0 ? 0 : -1;
}

static const char source[] = "#include \"top.h\"\n"
                             "extern \"C\" __global__ void k(int *o) { o[0] = TOP + LEAF; }\n";

/* A program over `text` with the include directories (relative to root). */
static ptxkit_program *program_with(const char *text, const char *const *rel_dirs, int count) {
    ptxkit_program *p = NULL;
    assert_ok(NULL, ptxkit_program_create("headers_test.cu", text, NULL, 0, &p));
    for (int i = 0; i < count; i++) {
        char dir[PATH_MAX];
        path_of(dir, rel_dirs[i]);
        const char *d = dir;
        assert_ok(NULL, ptxkit_program_add_include_dirs(p, &d, 1));
    }
    return p;
}

static cache_key key_of(const ptxkit_program *p) {
    kernel_request req = {.kind = KERNEL_FROM_PROGRAM, .program = p, .entry = "k", .name_expression = true};
    return kernel_cache_key(&req, KEY_MODULE, 90, 13000);
}

/* The key of a fresh program over source with the directories. */
static cache_key fresh_key(const char *const *dirs, int count) {
    ptxkit_program *p = program_with(source, dirs, count);
    cache_key k = key_of(p);
    ptxkit_program_destroy(p);
    return k;
}

static void edits_change_the_key(void **state) {
    (void)state;
    write_file("a/top.h", "#pragma once\n#include \"sub/leaf.h\"\n#define TOP 1\n");
    write_file("a/sub/leaf.h", "#pragma once\n#define LEAF 2\n");
    const char *dirs[] = {"a"};
    cache_key first = fresh_key(dirs, 1);
    /* nothing changed: the same key (the manifest's way, then a scan's) */
    cache_key again = fresh_key(dirs, 1);
    assert_memory_equal(first.bytes, again.bytes, 16);
    /* a nested header edited on disk: a new key */
    write_file("a/sub/leaf.h", "#pragma once\n#define LEAF 3\n");
    cache_key edited = fresh_key(dirs, 1);
    assert_memory_not_equal(first.bytes, edited.bytes, 16);
    /* back to the first text, rewritten (a new time): the first key */
    write_file("a/sub/leaf.h", "#pragma once\n#define LEAF 2\n");
    cache_key restored = fresh_key(dirs, 1);
    assert_memory_equal(first.bytes, restored.bytes, 16);
    /* a program keeps the tree it read first: one object, one key */
    ptxkit_program *p = program_with(source, dirs, 1);
    cache_key before = key_of(p);
    write_file("a/top.h", "#pragma once\n#include \"sub/leaf.h\"\n#define TOP 7\n");
    cache_key after = key_of(p);
    assert_memory_equal(before.bytes, after.bytes, 16);
    ptxkit_program_destroy(p);
    cache_key changed = fresh_key(dirs, 1);
    assert_memory_not_equal(first.bytes, changed.bytes, 16);
    write_file("a/top.h", "#pragma once\n#include \"sub/leaf.h\"\n#define TOP 1\n");
}

static void directory_order_and_shadowing(void **state) {
    (void)state;
    write_file("b/top.h", "#pragma once\n#define TOP 10\n#define LEAF 0\n");
    write_file("c/top.h", "#pragma once\n#define TOP 20\n#define LEAF 0\n");
    const char *bc[] = {"b", "c"}, *cb[] = {"c", "b"};
    cache_key k_bc = fresh_key(bc, 2), k_cb = fresh_key(cb, 2);
    assert_memory_not_equal(k_bc.bytes, k_cb.bytes, 16);
    /* -IDIR and --include-path=DIR are the same directories */
    char ob[PATH_MAX + 4], oc[PATH_MAX + 20], db[PATH_MAX], dc[PATH_MAX];
    path_of(db, "b");
    path_of(dc, "c");
    snprintf(ob, sizeof ob, "-I%s", db);
    snprintf(oc, sizeof oc, "--include-path=%s", dc);
    const char *options[] = {ob, "-lineinfo", oc};
    ptxkit_program *p = NULL;
    assert_ok(NULL, ptxkit_program_create("headers_test.cu", source, NULL, 0, &p));
    assert_ok(NULL, ptxkit_program_add_options(p, options, 3));
    ptxkit_program *q = program_with(source, bc, 2);
    const char *lineinfo = "-lineinfo";
    assert_ok(NULL, ptxkit_program_add_options(q, &lineinfo, 1));
    assert_memory_equal(key_of(p).bytes, key_of(q).bytes, 16);
    /* used: no more directories */
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_program_add_include_dirs(p, bc, 1));
    ptxkit_program_destroy(p);
    ptxkit_program_destroy(q);

    /* a header appearing in a directory searched earlier: a new key */
    write_file("d/other.h", "// nothing\n");
    const char *dc_dirs[] = {"d", "c"};
    cache_key before = fresh_key(dc_dirs, 2);
    write_file("d/top.h", "#pragma once\n#define TOP 30\n#define LEAF 0\n");
    cache_key after = fresh_key(dc_dirs, 2);
    assert_memory_not_equal(before.bytes, after.bytes, 16);
}

static void missing_directories(void **state) {
    (void)state;
    ptxkit_program *p = NULL;
    assert_ok(NULL, ptxkit_program_create("headers_test.cu", source, NULL, 0, &p));
    char good[PATH_MAX], bad[PATH_MAX], file[PATH_MAX];
    write_file("e/top.h", "#define TOP 1\n#define LEAF 1\n");
    path_of(good, "e");
    path_of(bad, "no_such_dir");
    path_of(file, "e/top.h");
    const char *both[] = {good, bad};
    assert_status(PTXKIT_ERROR_IO, ptxkit_program_add_include_dirs(p, both, 2));
    assert_non_null(strstr(ptxkit_last_error(), "no_such_dir"));
    const char *not_dir[] = {file}, *empty[] = {""};
    assert_status(PTXKIT_ERROR_IO, ptxkit_program_add_include_dirs(p, not_dir, 1));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_program_add_include_dirs(p, empty, 1));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_program_add_include_dirs(NULL, not_dir, 1));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_program_add_include_dirs(p, NULL, 1));
    char option[PATH_MAX + 4];
    snprintf(option, sizeof option, "-I%s", bad);
    const char *opts[] = {option};
    assert_status(PTXKIT_ERROR_IO, ptxkit_program_add_options(p, opts, 1));
    /* pre-included files stay refused */
    const char *pre[] = {"-include=x.h"};
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_program_add_options(p, pre, 1));
    /* nothing was added: the key is that of the program with no directory */
    ptxkit_program *plain = NULL;
    assert_ok(NULL, ptxkit_program_create("headers_test.cu", source, NULL, 0, &plain));
    assert_memory_equal(key_of(p).bytes, key_of(plain).bytes, 16);
    ptxkit_program_destroy(p);
    ptxkit_program_destroy(plain);
    ptxkit_program_add_include_dirs(NULL, NULL, 0);
}

/* A program read from a file finds headers beside it, and its key follows them. */
static void beside_the_file(void **state) {
    (void)state;
    write_file("f/kernel.cu", source);
    write_file("f/top.h", "#pragma once\n#define TOP 1\n#define LEAF 5\n");
    char path[PATH_MAX];
    path_of(path, "f/kernel.cu");
    ptxkit_program *p = NULL, *q = NULL;
    assert_ok(NULL, ptxkit_program_create_from_file(path, NULL, 0, &p));
    const char *const *dirs = NULL;
    int n = header_tree_search_path(p->tree, &dirs);
    assert_true(n >= 1);
    char real[PATH_MAX];
    path_of(path, "f");
    assert_non_null(realpath(path, real));
    assert_string_equal(dirs[0], real);
    cache_key k1 = key_of(p);
    write_file("f/top.h", "#pragma once\n#define TOP 1\n#define LEAF 6\n");
    path_of(path, "f/kernel.cu");
    assert_ok(NULL, ptxkit_program_create_from_file(path, NULL, 0, &q));
    assert_memory_not_equal(k1.bytes, key_of(q).bytes, 16);
    if (ptxkit_jit_available()) {
        ptxkit_compiled c;
        ptxkit_status st = ptxkit_program_compile(q, "k", NULL, 0, 90, 1, &c);
        if (st != PTXKIT_SUCCESS) fail_msg("%s", ptxkit_last_error());
        assert_non_null(strstr(c.image, "7")); /* TOP + LEAF */
        ptxkit_program_compiled_free(&c);
    }
    ptxkit_program_destroy(p);
    ptxkit_program_destroy(q);
}

/* More handed-in headers than the old limit of 48. */
static void many_headers(void **state) {
    (void)state;
    enum { N = 300 };
    static char names[N][32];
    ptxkit_header h[N];
    for (int i = 0; i < N; i++) {
        snprintf(names[i], sizeof names[i], "h%d.h", i);
        h[i] = (ptxkit_header){names[i], "#pragma once\n"};
    }
    ptxkit_program *p = NULL;
    assert_ok(NULL, ptxkit_program_create("many.cu", "#include \"h299.h\"\nextern \"C\" __global__ void k() {}\n", h, N, &p));
    if (ptxkit_jit_available()) {
        ptxkit_compiled c;
        ptxkit_status st = ptxkit_program_compile(p, "k", NULL, 0, 90, 1, &c);
        if (st != PTXKIT_SUCCESS) fail_msg("%s", ptxkit_last_error());
        ptxkit_program_compiled_free(&c);
    }
    ptxkit_program_destroy(p);
}

/* The toolkit's headers with no header handed in and no directory named. */
static void toolkit_headers(void **state) {
    (void)state;
    const char *const *dirs = NULL;
    int n = header_tree_toolkit_dirs(&dirs);
    if (!ptxkit_jit_available() || n == 0) {
        print_message("no NVRTC or no toolkit include directory\n");
        skip();
    }
    static const char text[] = "#include <cooperative_groups.h>\n#include <cuda_fp16.h>\n"
                               "namespace cg = cooperative_groups;\n"
                               "extern \"C\" __global__ void k(__half *o) {\n"
                               "    cg::thread_block b = cg::this_thread_block();\n"
                               "    o[b.thread_rank()] = __float2half(2.0f);\n}\n";
    ptxkit_program *p = NULL;
    assert_ok(NULL, ptxkit_program_create("toolkit.cu", text, NULL, 0, &p));
    ptxkit_compiled c;
    ptxkit_status st = ptxkit_program_compile(p, "k", NULL, 0, 90, 1, &c);
    if (st != PTXKIT_SUCCESS) fail_msg("%s", ptxkit_last_error());
    ptxkit_program_compiled_free(&c);
    /* the key covers the toolkit's files too: stable across program objects */
    ptxkit_program *q = NULL;
    assert_ok(NULL, ptxkit_program_create("toolkit.cu", text, NULL, 0, &q));
    assert_memory_equal(key_of(p).bytes, key_of(q).bytes, 16);
    ptxkit_program_destroy(p);
    ptxkit_program_destroy(q);
}

/* NVRTC's precompiled headers (pch.h) never serve a prelude whose headers
 * changed: NVRTC compares only the source's text and the command line, so
 * each compile names its headers' contents there. */
static int pch_child(void) {
    static const char text[] = "#include <cooperative_groups.h>\n#include \"value.h\"\n"
                               "template <int V> __global__ void k(int *o) { o[0] = VALUE + V; }\n";
    const char *g[] = {"g"};
    for (int round = 0; round < 3; round++) {
        char header[64];
        snprintf(header, sizeof header, "#define VALUE %d\n", 1000 * (round + 1));
        write_file("g/value.h", header);
        ptxkit_program *p = program_with(text, g, 1);
        /* two entries: the second repeats the first's prelude and options */
        for (int v = 1; v <= 2; v++) {
            char entry[16], want[32];
            snprintf(entry, sizeof entry, "k<%d>", v);
            snprintf(want, sizeof want, "%d;", 1000 * (round + 1) + v);
            ptxkit_compiled c;
            ptxkit_status st = ptxkit_program_compile(p, entry, NULL, 0, 90, 1, &c);
            if (st != PTXKIT_SUCCESS) {
                fprintf(stderr, "pch child: %s\n", ptxkit_last_error());
                return 1;
            }
            if (!strstr(c.image, want)) {
                fprintf(stderr, "pch child: round %d, %s: no '%s' in the PTX (a stale prelude?)\n", round, entry, want);
                return 2;
            }
            /* NVRTC's notes about precompiled headers stay out of the log */
            if (c.log && strstr(c.log, "precompiled")) {
                fprintf(stderr, "pch child: the log speaks of precompiled headers: %s\n", c.log);
                return 3;
            }
            ptxkit_program_compiled_free(&c);
        }
        ptxkit_program_destroy(p);
    }
    const nvrtc_library *rtc = nvrtc_get(NULL, 0);
    /* where NVRTC has PCH, the rounds made preludes (else the test proved nothing) */
    if (rtc && pch_available(rtc) && pch_created_count() == 0) {
        fprintf(stderr, "pch child: NVRTC %d.%d has PCH but no prelude was created\n", rtc->major, rtc->minor);
        return 4;
    }
    return 0;
}

/* In a fresh process: the budget of preludes is this test's alone. */
static void precompiled_preludes_follow_headers(void **state) {
    (void)state;
    const char *const *dirs = NULL;
    if (!ptxkit_jit_available() || header_tree_toolkit_dirs(&dirs) == 0) {
        print_message("no NVRTC or no toolkit include directory\n");
        skip();
    }
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        execl("/proc/self/exe", "test_headers", "--pch-child", root, (char *)NULL);
        _exit(127);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    if (WEXITSTATUS(status) != 0) fail_msg("the child exited %d (its stderr says why)", WEXITSTATUS(status));
}

static bool nvrtc_mapped(void) {
    FILE *f = fopen("/proc/self/maps", "r");
    char line[4096];
    bool found = false;
    while (f && !found && fgets(line, sizeof line, f)) found = strstr(line, "libnvrtc") != NULL;
    if (f) fclose(f);
    return found;
}

static const char toolkit_text[] = "#include <cooperative_groups.h>\n#include <cuda_fp16.h>\n"
                                   "extern \"C\" __global__ void k(__half *o) { o[0] = __float2half(1.0f); }\n";

/* A fresh process: the key of a program over the toolkit's headers, twice
 * (a scan or the manifest, then the manifest), without loading NVRTC. */
static int key_child(void) {
    double t0 = now_ms();
    ptxkit_program *p = NULL;
    if (ptxkit_program_create("toolkit.cu", toolkit_text, NULL, 0, &p) != PTXKIT_SUCCESS) return 1;
    cache_key k = key_of(p);
    double t1 = now_ms();
    ptxkit_program_destroy(p);
    if (ptxkit_program_create("toolkit.cu", toolkit_text, NULL, 0, &p) != PTXKIT_SUCCESS) return 1;
    cache_key again = key_of(p);
    ptxkit_program_destroy(p);
    printf("child: first key in %.2f ms\n", t1 - t0);
    if (memcmp(k.bytes, again.bytes, 16) != 0) return 2;
    return nvrtc_mapped() ? 3 : 0;
}

static void keys_without_nvrtc(void **state) {
    (void)state;
    const char *const *dirs = NULL;
    if (!ptxkit_jit_available() || header_tree_toolkit_dirs(&dirs) == 0) {
        print_message("no NVRTC or no toolkit include directory\n");
        skip();
    }
    /* this process records NVRTC's identity in the cache directory */
    ptxkit_program *p = NULL;
    assert_ok(NULL, ptxkit_program_create("toolkit.cu", toolkit_text, NULL, 0, &p));
    cache_key k = key_of(p);
    (void)k;
    ptxkit_program_destroy(p);
    for (int round = 0; round < 2; round++) {
        fflush(NULL);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            execl("/proc/self/exe", "test_headers", "--key-child", (char *)NULL);
            _exit(127);
        }
        int status = 0;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        if (WEXITSTATUS(status) != 0)
            fail_msg("the child exited %d (2: keys differ, 3: NVRTC was loaded)", WEXITSTATUS(status));
    }
}

int main(int argc, char **argv) {
    if (argc == 2 && strcmp(argv[1], "--key-child") == 0) return key_child();
    if (argc == 3 && strcmp(argv[1], "--pch-child") == 0) {
        snprintf(root, sizeof root, "%s", argv[2]);
        return pch_child();
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(edits_change_the_key), cmocka_unit_test(directory_order_and_shadowing),
        cmocka_unit_test(missing_directories),  cmocka_unit_test(beside_the_file),
        cmocka_unit_test(many_headers),         cmocka_unit_test(toolkit_headers),
        cmocka_unit_test(keys_without_nvrtc),   cmocka_unit_test(precompiled_preludes_follow_headers),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
