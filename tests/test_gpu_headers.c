/* Header trees from disk on a GPU: a program including <cooperative_groups.h>
 * and <cuda_fp16.h> with no header handed in (the toolkit's include
 * directories), a program read from a file whose headers come from its own
 * directory and from -I directories, an edited header that recompiles, and
 * a second process that finds both kernels in the disk cache without
 * loading NVRTC (read from /proc/self/maps, as `ptxkit bench startup`
 * reports it), then compiles again once a header changed. Outputs are
 * poisoned before each launch and checked against a CPU reference at a size
 * no block divides. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_util.h"

enum { N = 100003, BLOCK = 256 };

static char root[256];

static const char toolkit_source[] =
    "#include <cooperative_groups.h>\n"
    "#include <cooperative_groups/reduce.h>\n"
    "#include <cuda_fp16.h>\n"
    "namespace cg = cooperative_groups;\n"
    "/* each warp's sum of the inputs, each rounded through half precision */\n"
    "extern \"C\" __global__ void warp_sums(const float *in, float *out, unsigned n) {\n"
    "    cg::thread_block block = cg::this_thread_block();\n"
    "    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);\n"
    "    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    __half h = __float2half(i < n ? in[i] : 0.0f);\n"
    "    float v = cg::reduce(warp, __half2float(h), cg::plus<float>());\n"
    "    if (warp.thread_rank() == 0 && i - threadIdx.x % 32 < n) out[i / 32] = v;\n"
    "}\n";

/* The program read from root/src/tree.cu: "local.h" beside it, "params.h"
 * (which includes "detail/scale.h" beside itself) from -I root/inc1, and
 * <offset.h> from -I root/inc2. */
static const char tree_source[] =
    "#include \"local.h\"\n"
    "#include \"params.h\"\n"
    "#include <offset.h>\n"
    "extern \"C\" __global__ void affine(const int *in, int *out, unsigned n) {\n"
    "    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) out[i] = in[i] * SCALE + OFFSET + LOCAL;\n"
    "}\n";

static void put(const char *rel, const char *text) {
    char path[PATH_MAX], cmd[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    char *slash = strrchr(path, '/');
    *slash = 0;
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", path);
    assert_int_equal(system(cmd), 0);
    *slash = '/';
    assert_true(test_write_file(path, text, strlen(text)));
}

static void write_scale(int scale) {
    char text[128];
    snprintf(text, sizeof text, "#pragma once\n#define SCALE %d\n", scale);
    put("inc1/detail/scale.h", text);
}

static void make_tree(void) {
    put("src/tree.cu", tree_source);
    put("src/local.h", "#pragma once\n#define LOCAL 100\n");
    put("inc1/params.h", "#pragma once\n#include \"detail/scale.h\"\n");
    write_scale(3);
    put("inc2/offset.h", "#pragma once\n#define OFFSET (-5)\n");
}

static bool nvrtc_mapped(void) {
    FILE *f = fopen("/proc/self/maps", "r");
    char line[4096];
    bool found = false;
    while (f && !found && fgets(line, sizeof line, f)) found = strstr(line, "libnvrtc") != NULL;
    if (f) fclose(f);
    return found;
}

/* ---- the kernels, checked (returns a message, NULL when right) ---------- */

static const char *check_toolkit_kernel(ptxkit_context *ctx, ptxkit_kernel *k) {
    static float in[N], out[(N + 31) / 32], want[(N + 31) / 32];
    /* integers of at most 11 bits: exact in half precision and in a warp's float sum */
    for (unsigned i = 0; i < N; i++) in[i] = (float)((int)((i * 2654435761u) % 2001u) - 1000);
    for (unsigned w = 0; w < (N + 31) / 32; w++) {
        want[w] = 0;
        for (unsigned i = w * 32; i < w * 32 + 32 && i < N; i++) want[w] += in[i];
    }
    ptxkit_dptr din = 0, dout = 0;
    const char *why = NULL;
    unsigned n = N, warps = (N + 31) / 32;
    if (ptxkit_memory_alloc(ctx, sizeof in, &din) || ptxkit_memory_alloc(ctx, sizeof out, &dout) ||
        ptxkit_memory_write(ctx, din, in, sizeof in) || ptxkit_memory_set32_async(ctx, dout, 0xffffffffu, warps, NULL))
        why = "setup failed";
    void *args[] = {&din, &dout, &n};
    if (!why && (ptxkit_kernel_launch(k, (ptxkit_dim3){(N + BLOCK - 1) / BLOCK, 1, 1}, (ptxkit_dim3){BLOCK, 1, 1}, 0, NULL, args) ||
                 ptxkit_memory_read(ctx, out, dout, sizeof out)))
        why = "launch failed";
    for (unsigned w = 0; !why && w < warps; w++)
        if (out[w] != want[w]) why = "a warp's sum is wrong";
    ptxkit_memory_free(ctx, din);
    ptxkit_memory_free(ctx, dout);
    return why;
}

static const char *check_tree_kernel(ptxkit_context *ctx, ptxkit_kernel *k, int scale) {
    static int in[N], out[N];
    for (unsigned i = 0; i < N; i++) in[i] = (int)(i * 7919u % 100000u) - 50000;
    ptxkit_dptr din = 0, dout = 0;
    const char *why = NULL;
    unsigned n = N;
    if (ptxkit_memory_alloc(ctx, sizeof in, &din) || ptxkit_memory_alloc(ctx, sizeof out, &dout) ||
        ptxkit_memory_write(ctx, din, in, sizeof in) || ptxkit_memory_set32_async(ctx, dout, 0xdeadbeefu, N, NULL))
        why = "setup failed";
    void *args[] = {&din, &dout, &n};
    if (!why && (ptxkit_kernel_launch(k, (ptxkit_dim3){(N + BLOCK - 1) / BLOCK, 1, 1}, (ptxkit_dim3){BLOCK, 1, 1}, 0, NULL, args) ||
                 ptxkit_memory_read(ctx, out, dout, sizeof out)))
        why = "launch failed";
    for (unsigned i = 0; !why && i < N; i++)
        if (out[i] != in[i] * scale - 5 + 100) why = "an element is wrong (a stale header?)";
    ptxkit_memory_free(ctx, din);
    ptxkit_memory_free(ctx, dout);
    return why;
}

static ptxkit_status tree_program(ptxkit_program **p) {
    char file[PATH_MAX], inc1[PATH_MAX], inc2[PATH_MAX];
    snprintf(file, sizeof file, "%s/src/tree.cu", root);
    snprintf(inc1, sizeof inc1, "%s/inc1", root);
    snprintf(inc2, sizeof inc2, "-I%s/inc2", root); /* the option's spelling */
    ptxkit_status st = ptxkit_program_create_from_file(file, NULL, 0, p);
    const char *dirs[] = {inc1}, *options[] = {inc2};
    if (st == PTXKIT_SUCCESS) st = ptxkit_program_add_include_dirs(*p, dirs, 1);
    if (st == PTXKIT_SUCCESS) st = ptxkit_program_add_options(*p, options, 1);
    return st;
}

/* ---- the second process -------------------------------------------------- */

/* argv: --child ROOT SCALE hit|compile. Both kernels from a fresh process:
 * "hit" requires that NVRTC is never loaded, "compile" that it is. */
static int child(char **argv) {
    snprintf(root, sizeof root, "%s", argv[2]);
    int scale = atoi(argv[3]);
    bool expect_hit = strcmp(argv[4], "hit") == 0;
    ptxkit_context *ctx = NULL;
    if (ptxkit_context_create(0, &ctx) != PTXKIT_SUCCESS) return 77;
    ptxkit_program *tk = NULL, *tree = NULL;
    ptxkit_kernel *k1 = NULL, *k2 = NULL;
    if (ptxkit_program_create("toolkit_headers.cu", toolkit_source, NULL, 0, &tk) != PTXKIT_SUCCESS ||
        ptxkit_program_kernel_get(ctx, tk, "warp_sums", NULL, 0, &k1) != PTXKIT_SUCCESS || tree_program(&tree) != PTXKIT_SUCCESS ||
        ptxkit_program_kernel_get(ctx, tree, "affine", NULL, 0, &k2) != PTXKIT_SUCCESS) {
        fprintf(stderr, "child: %s %s\n", ptxkit_last_error(), ptxkit_last_error());
        return 1;
    }
    bool mapped = nvrtc_mapped();
    if (expect_hit && mapped) {
        fprintf(stderr, "child: NVRTC was loaded although both kernels were in the disk cache\n");
        return 1;
    }
    if (!expect_hit && !mapped) {
        fprintf(stderr, "child: a header changed on disk and NVRTC was not loaded (a stale hit)\n");
        return 1;
    }
    const char *why = check_toolkit_kernel(ctx, k1);
    if (!why) why = check_tree_kernel(ctx, k2, scale);
    if (why) {
        fprintf(stderr, "child: %s\n", why);
        return 1;
    }
    ptxkit_program_destroy(tk);
    ptxkit_program_destroy(tree);
    ptxkit_context_destroy(ctx);
    return 0;
}

static void run_child(int scale, const char *expect) {
    fflush(NULL);
    char scale_text[16];
    snprintf(scale_text, sizeof scale_text, "%d", scale);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        execl("/proc/self/exe", "test_gpu_headers", "--child", root, scale_text, expect, (char *)NULL);
        _exit(127);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    if (WEXITSTATUS(status) != 0) fail_msg("the %s child exited %d (its stderr says why)", expect, WEXITSTATUS(status));
}

/* ---- the tests ----------------------------------------------------------- */

static void toolkit_headers(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    ptxkit_program *p = NULL;
    ptxkit_kernel *k = NULL, *again = NULL;
    assert_ok(NULL, ptxkit_program_create("toolkit_headers.cu", toolkit_source, NULL, 0, &p));
    assert_ok(ctx, ptxkit_program_kernel_get(ctx, p, "warp_sums", NULL, 0, &k));
    const char *why = check_toolkit_kernel(ctx, k);
    if (why) fail_msg("%s", why);
    assert_ok(ctx, ptxkit_program_kernel_get(ctx, p, "warp_sums", NULL, 0, &again));
    assert_ptr_equal(k, again);
    ptxkit_program_destroy(p);
}

static void tree_and_changed_header(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    make_tree();
    ptxkit_program *p = NULL, *q = NULL, *same = NULL;
    ptxkit_kernel *k = NULL, *k2 = NULL, *k_same = NULL;
    assert_ok(NULL, tree_program(&p));
    assert_ok(ctx, ptxkit_program_kernel_get(ctx, p, "affine", NULL, 0, &k));
    const char *why = check_tree_kernel(ctx, k, 3);
    if (why) fail_msg("%s", why);
    /* the same tree from a new program: the same kernel */
    assert_ok(NULL, tree_program(&same));
    assert_ok(ctx, ptxkit_program_kernel_get(ctx, same, "affine", NULL, 0, &k_same));
    assert_ptr_equal(k, k_same);
    /* a nested header edited: a new program compiles the new text */
    write_scale(7);
    assert_ok(NULL, tree_program(&q));
    assert_ok(ctx, ptxkit_program_kernel_get(ctx, q, "affine", NULL, 0, &k2));
    assert_ptr_not_equal(k, k2);
    if ((why = check_tree_kernel(ctx, k2, 7)) != NULL) fail_msg("after the edit: %s", why);
    /* the first kernel is still the first text's */
    if ((why = check_tree_kernel(ctx, k, 3)) != NULL) fail_msg("the first kernel: %s", why);
    ptxkit_program_destroy(p);
    ptxkit_program_destroy(q);
    ptxkit_program_destroy(same);
}

static void second_process(void **state) {
    (void)state;
    /* both kernels (scale 7) are in the disk cache now */
    run_child(7, "hit");
    write_scale(11);
    run_child(11, "compile");
    run_child(11, "hit");
}

int main(int argc, char **argv) {
    if (argc == 5 && strcmp(argv[1], "--child") == 0) return child(argv);
    test_require_gpu();
    if (!ptxkit_jit_available()) {
        printf("skipped: NVRTC not available (user kernels come from source)\n");
        return TEST_SKIP_EXIT;
    }
    snprintf(root, sizeof root, "/tmp/ptxkit_gpu_headers_XXXXXX");
    if (!mkdtemp(root)) return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(toolkit_headers),
        cmocka_unit_test(tree_and_changed_header),
        cmocka_unit_test(second_process),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    char cmd[PATH_MAX];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    if (system(cmd) != 0) failed++;
    test_gpu_release();
    return failed;
}
