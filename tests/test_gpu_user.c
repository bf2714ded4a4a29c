/* The application's own kernels on a GPU: the JIT path at awkward sizes, the
 * same kernel as user PTX with every cache operator, the registry, launch
 * errors, attributes and occupancy, launch attributes (clusters, access
 * window, cooperative), a kernel fault (in a fresh child process) and wrong
 * entry names. Exact comparisons: the kernels compute in 32-bit integers. */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/compile.h"
#include "test_util.h"

/* Plain C loads on purpose: NVRTC's PTX of mix then holds plain
 * ld.global.u32, which ptxkit_module_load can give an operator. */
static const char user_source[] =
    "extern \"C\" __global__ void __launch_bounds__(BLOCK_SIZE)\n"
    "mix(const unsigned *x, const unsigned *y, unsigned *out, unsigned long long n, unsigned k) {\n"
    "    for (unsigned long long i = blockIdx.x * (unsigned long long)BLOCK_SIZE + threadIdx.x; i < n;\n"
    "         i += (unsigned long long)gridDim.x * BLOCK_SIZE)\n"
    "        out[i] = x[i] * k + (y[i] ^ (unsigned)i);\n"
    "}\n"
    "\n"
    "/* another entry of the same program, for the registry test */\n"
    "extern \"C\" __global__ void mix_b(const unsigned *x, unsigned *out) { out[threadIdx.x] = x[threadIdx.x]; }\n"
    "\n"
    "/* reverses each block's BLOCK_SIZE elements through static shared memory */\n"
    "extern \"C\" __global__ void __launch_bounds__(BLOCK_SIZE) tile_reverse(const unsigned *in, unsigned *out) {\n"
    "    __shared__ unsigned tile[BLOCK_SIZE];\n"
    "    unsigned base = blockIdx.x * BLOCK_SIZE;\n"
    "    tile[threadIdx.x] = in[base + threadIdx.x];\n"
    "    __syncthreads();\n"
    "    out[base + threadIdx.x] = tile[BLOCK_SIZE - 1 - threadIdx.x];\n"
    "}\n"
    "\n"
    "/* reverses each block's `count` elements through dynamic shared memory */\n"
    "extern \"C\" __global__ void dyn_reverse(const unsigned *in, unsigned *out, unsigned count) {\n"
    "    extern __shared__ unsigned buf[];\n"
    "    const unsigned *src = in + (size_t)blockIdx.x * count;\n"
    "    for (unsigned i = threadIdx.x; i < count; i += blockDim.x) buf[i] = src[i];\n"
    "    __syncthreads();\n"
    "    for (unsigned i = threadIdx.x; i < count; i += blockDim.x) out[(size_t)blockIdx.x * count + i] = buf[count - 1 - i];\n"
    "}\n"
    "\n"
    "/* each block writes the number of blocks in its cluster (1 without) */\n"
    "extern \"C\" __global__ void cluster_size(unsigned *out) {\n"
    "    unsigned r = 1;\n"
    "#if __CUDA_ARCH__ >= 900\n"
    "    asm volatile(\"mov.u32 %0, %%cluster_nctarank;\" : \"=r\"(r));\n"
    "#endif\n"
    "    if (threadIdx.x == 0) out[blockIdx.x] = r;\n"
    "}\n"
    "\n"
    "/* writes where it is told: given a bogus address, an illegal address */\n"
    "extern \"C\" __global__ void fault(unsigned *p) { p[threadIdx.x] = 1; }\n";

static ptxkit_program *program(void) {
    static ptxkit_program *p;
    if (!p) assert_ok(NULL, ptxkit_program_create("user_test.cu", user_source, NULL, 0, &p));
    return p;
}

static ptxkit_kernel *kernel(const char *entry, int block) {
    ptxkit_context *ctx = test_gpu();
    char define[32];
    snprintf(define, sizeof define, "BLOCK_SIZE=%d", block);
    const char *defines[] = {define};
    ptxkit_kernel *k = NULL;
    assert_ok(ctx, ptxkit_program_kernel_get(ctx, program(), entry, defines, 1, &k));
    assert_non_null(k);
    return k;
}

static int device_arch(void) {
    ptxkit_device_info d;
    assert_ok(NULL, ptxkit_device_info_get(test_gpu(), &d));
    return d.cc_major * 10 + d.cc_minor;
}

/* Inputs of mix: x and y at n random words each (device and host), out
 * poisoned, with one guard word past its end. */
typedef struct mix_case {
    size_t n;
    uint32_t *x, *y, *expect, *got;
    unsigned k;
    ptxkit_dptr dx, dy, dout;
} mix_case;

static void mix_setup(mix_case *c, size_t n) {
    ptxkit_context *ctx = test_gpu();
    static uint64_t rng;
    if (!rng) rng = test_seed();
    memset(c, 0, sizeof *c);
    c->n = n;
    size_t bytes = (n + 1) * sizeof(uint32_t);
    c->x = malloc(bytes);
    c->y = malloc(bytes);
    c->expect = malloc(bytes);
    c->got = malloc(bytes);
    assert_true(c->x && c->y && c->expect && c->got);
    test_fill_random(c->x, bytes, &rng);
    test_fill_random(c->y, bytes, &rng);
    c->k = (unsigned)test_rand(&rng) | 1u;
    for (size_t i = 0; i < n; i++) c->expect[i] = c->x[i] * c->k + (c->y[i] ^ (uint32_t)i);
    /* x and y are views one word into their allocations: 4-byte aligned,
     * not 16 */
    assert_ok(ctx, ptxkit_memory_alloc(ctx, bytes + 4, &c->dx));
    assert_ok(ctx, ptxkit_memory_alloc(ctx, bytes + 4, &c->dy));
    assert_ok(ctx, ptxkit_memory_alloc(ctx, bytes, &c->dout));
    c->dx += 4;
    c->dy += 4;
    assert_ok(ctx, ptxkit_memory_write(ctx, c->dx, c->x, bytes));
    assert_ok(ctx, ptxkit_memory_write(ctx, c->dy, c->y, bytes));
}

static void mix_poison(mix_case *c) {
    assert_ok(test_gpu(), ptxkit_memory_set32_async(test_gpu(), c->dout, 0xA5A5A5A5u, c->n + 1, NULL));
}

static ptxkit_status mix_launch(ptxkit_kernel *k, mix_case *c, int block, const ptxkit_launch_attributes *attributes,
                                unsigned grid) {
    unsigned long long n = c->n;
    void *args[] = {&c->dx, &c->dy, &c->dout, &n, &c->k};
    if (!grid) {
        size_t blocks = (c->n + (size_t)block - 1) / (size_t)block;
        ptxkit_status st = ptxkit_kernel_grid_size_get(k, block, 0, blocks ? blocks : 1, &grid);
        if (st != PTXKIT_SUCCESS) return st;
    }
    ptxkit_dim3 g = {grid, 1, 1}, b = {(unsigned)block, 1, 1};
    return attributes ? ptxkit_kernel_launch_ex(k, g, b, 0, NULL, args, NULL, 0, attributes) : ptxkit_kernel_launch(k, g, b, 0, NULL, args);
}

static void mix_check(mix_case *c, const char *what) {
    ptxkit_context *ctx = test_gpu();
    assert_ok(ctx, ptxkit_memory_read(ctx, c->got, c->dout, (c->n + 1) * sizeof(uint32_t)));
    for (size_t i = 0; i < c->n; i++)
        if (c->got[i] != c->expect[i])
            fail_msg("%s, n = %zu: out[%zu] = %08x, expected %08x", what, c->n, i, c->got[i], c->expect[i]);
    if (c->got[c->n] != 0xA5A5A5A5u) fail_msg("%s, n = %zu: wrote past the end", what, c->n);
}

static void mix_free(mix_case *c) {
    ptxkit_context *ctx = test_gpu();
    ptxkit_memory_free(ctx, c->dx - 4);
    ptxkit_memory_free(ctx, c->dy - 4);
    ptxkit_memory_free(ctx, c->dout);
    free(c->x);
    free(c->y);
    free(c->expect);
    free(c->got);
}

static void jit_kernel_exact(void **state) {
    (void)state;
    const int blocks[] = {256, 96};
    for (size_t b = 0; b < 2; b++) {
        ptxkit_kernel *k = kernel("mix", blocks[b]);
        for (size_t i = 0; i < test_awkward_size_count; i++) {
            mix_case c;
            mix_setup(&c, test_awkward_sizes[i]);
            mix_poison(&c);
            if (c.n) assert_ok(test_gpu(), mix_launch(k, &c, blocks[b], NULL, 0));
            mix_check(&c, "JIT");
            /* a grid of few blocks strides over the rest */
            if (c.n > 1000) {
                mix_poison(&c);
                assert_ok(test_gpu(), mix_launch(k, &c, blocks[b], NULL, 3));
                mix_check(&c, "JIT, grid of 3");
            }
            mix_free(&c);
        }
    }
}

/* The kernel's PTX from NVRTC, loaded by the application with each cache
 * operator: the same results as the JIT path, every time. */
static void user_ptx_each_operator(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    const char *defines[] = {"BLOCK_SIZE=128"};
    ptxkit_compiled compiled;
    assert_ok(NULL, ptxkit_program_compile(program(), "mix", defines, 1, device_arch(), 1, &compiled));
    assert_false(compiled.is_cubin);
    assert_non_null(strstr(compiled.image, "ld.global.u32")); /* plain loads to rewrite */
    assert_string_equal(compiled.lowered_name, "mix");
    const struct {
        ptxkit_load_op op;
        const char *load;
    } ops[] = {{PTXKIT_LOAD_DEFAULT, NULL}, {PTXKIT_LOAD_CA, "ca"}, {PTXKIT_LOAD_CG, "cg"}, {PTXKIT_LOAD_CS, "cs"},
               {PTXKIT_LOAD_LU, "lu"}, {PTXKIT_LOAD_CV, "cv"}, {PTXKIT_LOAD_NC, "nc"}};
    const size_t sizes[] = {1, 97, 65537, 1000003};
    ptxkit_module *previous = NULL;
    for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++) {
        ptxkit_module_options options = {.load_op = ops[o].op, .read_only = ops[o].op == PTXKIT_LOAD_NC};
        ptxkit_module *m = NULL, *again = NULL;
        ptxkit_status st = ptxkit_module_load(ctx, compiled.image, compiled.size, &options, &m);
        if (st == PTXKIT_ERROR_PTX_VERSION) {
            /* NVRTC newer than the driver: this machine cannot run its PTX */
            print_message("skipping user PTX: %s\n", ptxkit_last_error());
            ptxkit_program_compiled_free(&compiled);
            skip();
        }
        assert_ok(ctx, st);
        assert_true(m != previous); /* another operator, another text, another module */
        previous = m;
        /* the same text and operator: the module already loaded */
        assert_ok(ctx, ptxkit_module_load(ctx, compiled.image, compiled.size, &options, &again));
        assert_ptr_equal(m, again);
        int rewritten = -1, kept = -1;
        assert_ok(ctx, ptxkit_module_rewrite_counts_get(m, &rewritten, &kept));
        if (ops[o].load) {
            if (rewritten < 2) fail_msg("%s: %d loads rewritten, expected the 2 of x and y", ops[o].load, rewritten);
            assert_true(kept >= 0);
        }
        ptxkit_kernel *k = NULL;
        assert_ok(ctx, ptxkit_module_kernel_get(m, compiled.lowered_name, &k));
        ptxkit_kernel *k2 = NULL;
        assert_ok(ctx, ptxkit_module_kernel_get(m, compiled.lowered_name, &k2));
        assert_ptr_equal(k, k2);
        for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
            mix_case c;
            mix_setup(&c, sizes[i]);
            mix_poison(&c);
            assert_ok(ctx, mix_launch(k, &c, 128, NULL, 0));
            char what[64];
            snprintf(what, sizeof what, "user PTX, load op %s", ptxkit_load_op_name(ops[o].op));
            mix_check(&c, what);
            mix_free(&c);
        }
    }
    /* nc only with the promise; an operator on machine code is refused */
    ptxkit_module_options nc = {.load_op = PTXKIT_LOAD_NC};
    ptxkit_module *m = NULL;
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_module_load(ctx, compiled.image, compiled.size, &nc, &m));
    ptxkit_program_compiled_free(&compiled);
    assert_ok(NULL, ptxkit_program_compile(program(), "mix", defines, 1, device_arch(), 0, &compiled));
    if (compiled.is_cubin) {
        ptxkit_module_options cg = {.load_op = PTXKIT_LOAD_CG};
        assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_module_load(ctx, compiled.image, compiled.size, &cg, &m));
        /* as given, the CUBIN loads and runs */
        ptxkit_kernel *k = NULL;
        assert_ok(ctx, ptxkit_module_load(ctx, compiled.image, compiled.size, NULL, &m));
        assert_ok(ctx, ptxkit_module_kernel_get(m, "mix", &k));
        mix_case c;
        mix_setup(&c, 4097);
        mix_poison(&c);
        assert_ok(ctx, mix_launch(k, &c, 128, NULL, 0));
        mix_check(&c, "user CUBIN");
        mix_free(&c);
    }
    ptxkit_program_compiled_free(&compiled);
}

/* A second ptxkit_program_kernel_get of the same kernel is a registry hit: the same
 * object, no module load (each kernel's JIT log names its own load, and a
 * hit changes none), and fast. */
static void registry_hit(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    const char *defines[] = {"BLOCK_SIZE=64", "UNUSED_FLAG"}, *reordered[] = {"UNUSED_FLAG", "BLOCK_SIZE=64"};
    ptxkit_kernel *first = NULL, *other = NULL, *again = NULL;
    assert_ok(ctx, ptxkit_program_kernel_get(ctx, program(), "mix", defines, 2, &first));
    char log[4096];
    snprintf(log, sizeof log, "%s", ptxkit_kernel_jit_log_get(first));
    assert_non_null(strstr(log, "entry mix:"));
    assert_true(strstr(log, "CUBIN loaded (no driver JIT)") || strstr(log, "driver JIT wall time")); /* CUBIN, or PTX where NVRTC is older than the GPU */
    /* another entry: its own module (each (entry, defines) is one), its own log */
    assert_ok(ctx, ptxkit_program_kernel_get(ctx, program(), "mix_b", defines, 2, &other));
    assert_true(other != first);
    assert_non_null(strstr(ptxkit_kernel_jit_log_get(other), "entry mix_b:"));
    assert_null(strstr(ptxkit_kernel_jit_log_get(other), "entry mix:"));
    double t0 = now_ms();
    enum { HITS = 10000 };
    for (int i = 0; i < HITS; i++) {
        assert_ok(ctx, ptxkit_program_kernel_get(ctx, program(), "mix", i % 2 ? defines : reordered, 2, &again));
        if (again != first) fail_msg("get #%d returned another kernel", i);
    }
    double per_get_us = (now_ms() - t0) * 1e3 / HITS;
    print_message("registry hit: %.3f us per ptxkit_program_kernel_get\n", per_get_us);
    assert_true(per_get_us < 50); /* a compile or even a CUBIN load costs milliseconds */
    assert_string_equal(ptxkit_kernel_jit_log_get(again), log);

    /* another program object with the same name and text: the same kernel;
     * destroying it leaves the kernel usable */
    ptxkit_program *twin = NULL;
    assert_ok(NULL, ptxkit_program_create("user_test.cu", user_source, NULL, 0, &twin));
    assert_ok(ctx, ptxkit_program_kernel_get(ctx, twin, "mix", reordered, 2, &again));
    assert_ptr_equal(again, first);
    ptxkit_program_destroy(twin);
    assert_string_equal(ptxkit_kernel_jit_log_get(first), log);
    mix_case c;
    mix_setup(&c, 1000);
    mix_poison(&c);
    assert_ok(ctx, mix_launch(again, &c, 64, NULL, 0));
    mix_check(&c, "after the program was destroyed");
    mix_free(&c);
}

/* A kernel not launched before: its own module (a define no other case
 * uses), so its limits are not read yet. */
static ptxkit_kernel *fresh_kernel(const char *entry, int block, int which) {
    char define[32], marker[48];
    snprintf(define, sizeof define, "BLOCK_SIZE=%d", block);
    snprintf(marker, sizeof marker, "FIRST_LAUNCH_CASE=%d", which);
    const char *defines[] = {define, marker};
    ptxkit_kernel *k = NULL;
    assert_ok(test_gpu(), ptxkit_program_kernel_get(test_gpu(), program(), entry, defines, 2, &k));
    return k;
}

/* A kernel's limits are read on first need: a first launch the driver
 * checks refuses what the limits refuse, with the same message, and harms
 * nothing; in a capture they are read before the launch, and the capture
 * stays whole. */
static void first_launch_limits(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    ptxkit_device_info d;
    assert_ok(ctx, ptxkit_device_info_get(ctx, &d));
    mix_case c;
    mix_setup(&c, 1000);
    unsigned long long n = c.n;
    void *args[] = {&c.dx, &c.dy, &c.dout, &n, &c.k};
    const ptxkit_dim3 grid = {(unsigned)((c.n + 127) / 128), 1, 1}, b128 = {128, 1, 1}, b256 = {256, 1, 1};
    /* beyond the kernel's __launch_bounds__(128), then beyond its shared memory */
    ptxkit_kernel *k = fresh_kernel("mix", 128, 1);
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_kernel_launch(k, grid, b256, 0, NULL, args));
    if (!strstr(ptxkit_last_error(), "1 to 128")) fail_msg("'%s' does not say 1 to 128", ptxkit_last_error());
    ptxkit_kernel *s = fresh_kernel("mix", 128, 2);
    size_t too_much = (size_t)d.shared_per_block_optin + 1;
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_kernel_launch(s, grid, b128, too_much, NULL, args));
    if (!strstr(ptxkit_last_error(), "dynamic shared memory"))
        fail_msg("'%s' does not name dynamic shared memory", ptxkit_last_error());
    /* the context is fine, and both kernels run */
    mix_poison(&c);
    assert_ok(ctx, ptxkit_kernel_launch(k, grid, b128, 0, NULL, args));
    mix_check(&c, "a kernel whose first launch was refused");
    mix_poison(&c);
    assert_ok(ctx, ptxkit_kernel_launch(s, grid, b128, 0, NULL, args));
    mix_check(&c, "a kernel whose first launch asked too much shared memory");
    /* a good first launch leaves the limits unread; the next launch reads them */
    ptxkit_kernel *once = fresh_kernel("mix", 128, 4);
    mix_poison(&c);
    assert_ok(ctx, ptxkit_kernel_launch(once, grid, b128, 0, NULL, args));
    mix_check(&c, "a fresh kernel's first launch");
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_kernel_launch(once, grid, b256, 0, NULL, args));
    if (!strstr(ptxkit_last_error(), "1 to 128")) fail_msg("'%s' does not say 1 to 128", ptxkit_last_error());
    /* a fresh kernel's bad first launch into a capture: refused before the
     * driver sees it; the capture goes on and its graph runs */
    ptxkit_kernel *g = fresh_kernel("mix", 128, 3);
    ptxkit_stream *stream = NULL;
    ptxkit_graph *graph = NULL;
    assert_ok(ctx, ptxkit_stream_create(ctx, 0, 0, &stream));
    mix_poison(&c);
    assert_ok(ctx, ptxkit_stream_synchronize(ctx, NULL));
    assert_ok(ctx, ptxkit_graph_capture_begin(ctx, stream));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_kernel_launch(g, grid, b256, 0, stream, args));
    if (!strstr(ptxkit_last_error(), "1 to 128")) fail_msg("'%s' does not say 1 to 128", ptxkit_last_error());
    assert_ok(ctx, ptxkit_kernel_launch(g, grid, b128, 0, stream, args));
    assert_ok(ctx, ptxkit_graph_capture_end(ctx, stream, &graph));
    assert_ok(ctx, ptxkit_graph_launch(ctx, graph, stream));
    assert_ok(ctx, ptxkit_stream_synchronize(ctx, stream));
    mix_check(&c, "a captured kernel whose first launch was refused");
    ptxkit_graph_destroy(graph);
    ptxkit_stream_destroy(stream);
    mix_free(&c);
}

static void launch_errors(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    ptxkit_device_info d;
    assert_ok(ctx, ptxkit_device_info_get(ctx, &d));
    ptxkit_kernel *k = kernel("mix", 128);
    mix_case c;
    mix_setup(&c, 1000);
    unsigned long long n = c.n;
    void *args[] = {&c.dx, &c.dy, &c.dout, &n, &c.k};
    const ptxkit_dim3 one = {1, 1, 1}, b128 = {128, 1, 1};
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_kernel_launch(NULL, one, b128, 0, NULL, args));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_kernel_launch_ex(NULL, one, b128, 0, NULL, args, NULL, 0, NULL));
    const struct {
        ptxkit_dim3 grid, block;
        const char *message;
    } bad[] = {
        {{0, 1, 1}, {128, 1, 1}, "grid.x"},
        {{1, 1, 1}, {0, 1, 1}, "block.x"},
        {{1, 65536, 1}, {128, 1, 1}, "grid.y"},
        {{1, 1, 65536}, {128, 1, 1}, "grid.z"},
        {{0x80000000u, 1, 1}, {128, 1, 1}, "grid.x"},
        {{1, 1, 1}, {2048, 1, 1}, "block.x"},
        {{1, 1, 1}, {1, 1, 65}, "block.z"},
        {{1, 1, 1}, {32, 32, 2}, "threads"},    /* 2048 threads in all */
        {{1, 1, 1}, {256, 1, 1}, "1 to 128"},   /* the kernel's __launch_bounds__(128) */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ptxkit_status st = ptxkit_kernel_launch(k, bad[i].grid, bad[i].block, 0, NULL, args);
        if (st != PTXKIT_ERROR_INVALID_ARGUMENT)
            fail_msg("launch #%zu: %s, expected invalid argument", i, ptxkit_status_string(st));
        if (!strstr(ptxkit_last_error(), bad[i].message))
            fail_msg("launch #%zu: '%s' does not say %s", i, ptxkit_last_error(), bad[i].message);
    }
    /* the context is fine: a right launch runs */
    mix_poison(&c);
    assert_ok(ctx, mix_launch(k, &c, 128, NULL, 0));
    mix_check(&c, "after refused launches");
    mix_free(&c);

    /* dynamic shared memory beyond the kernel's limit, then raised */
    ptxkit_kernel *rev = kernel("dyn_reverse", 256);
    ptxkit_kernel_attributes a;
    assert_ok(ctx, ptxkit_kernel_attributes_get(rev, &a));
    assert_true(a.max_dynamic_shared_bytes > 0);
    size_t big = (size_t)(d.shared_per_block_optin - a.static_shared_bytes);
    unsigned count = (unsigned)(big / sizeof(uint32_t)), blocks = 3;
    size_t words = (size_t)count * blocks;
    uint32_t *in = malloc(words * 4), *out = malloc(words * 4);
    uint64_t rng = test_seed() + 5;
    test_fill_random(in, words * 4, &rng);
    ptxkit_dptr din, dout;
    assert_ok(ctx, ptxkit_memory_alloc(ctx, words * 4, &din));
    assert_ok(ctx, ptxkit_memory_alloc(ctx, words * 4, &dout));
    assert_ok(ctx, ptxkit_memory_write(ctx, din, in, words * 4));
    assert_ok(ctx, ptxkit_memory_set8_async(ctx, dout, 0xA5, words * 4, NULL));
    void *rargs[] = {&din, &dout, &count};
    const ptxkit_dim3 grid = {blocks, 1, 1}, block = {256, 1, 1};
    if (big > (size_t)a.max_dynamic_shared_bytes) {
        assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_kernel_launch(rev, grid, block, big, NULL, rargs));
        assert_non_null(strstr(ptxkit_last_error(), "ptxkit_kernel_max_dynamic_shared_set"));
    }
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_kernel_max_dynamic_shared_set(rev, big + 1));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_kernel_max_dynamic_shared_set(NULL, 1024));
    assert_ok(ctx, ptxkit_kernel_max_dynamic_shared_set(rev, big));
    assert_ok(ctx, ptxkit_kernel_attributes_get(rev, &a));
    assert_int_equal(a.max_dynamic_shared_bytes, (int)big);
    assert_ok(ctx, ptxkit_kernel_launch(rev, grid, block, big, NULL, rargs));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_kernel_launch(rev, grid, block, big + 4, NULL, rargs));
    assert_ok(ctx, ptxkit_memory_read(ctx, out, dout, words * 4));
    for (size_t b = 0; b < blocks; b++)
        for (size_t i = 0; i < count; i++)
            if (out[b * count + i] != in[b * count + count - 1 - i])
                fail_msg("dyn_reverse with %zu B of dynamic shared memory: block %zu, element %zu wrong", big, b, i);
    ptxkit_memory_free(ctx, din);
    ptxkit_memory_free(ctx, dout);
    free(in);
    free(out);
}

static void attributes_and_occupancy(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    ptxkit_device_info d;
    assert_ok(ctx, ptxkit_device_info_get(ctx, &d));
    ptxkit_kernel *k = kernel("tile_reverse", 256);
    ptxkit_kernel_attributes a;
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_kernel_attributes_get(k, NULL));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_kernel_attributes_get(NULL, &a));
    assert_ok(ctx, ptxkit_kernel_attributes_get(k, &a));
    print_message("tile_reverse: %d registers, %d B static shared, %d B local, max %d threads, PTX %d, binary %d\n",
                  a.registers, a.static_shared_bytes, a.local_bytes, a.max_threads_per_block, a.ptx_version,
                  a.binary_version);
    assert_true(a.registers >= 1 && a.registers <= 255);
    assert_int_equal(a.static_shared_bytes, 256 * 4);
    assert_true(a.local_bytes >= 0 && a.local_bytes < 1024);
    assert_true(a.max_threads_per_block >= 32 && a.max_threads_per_block <= 256); /* __launch_bounds__(256) */
    assert_int_equal(a.binary_version, device_arch());
    assert_true(a.ptx_version > 0 && a.ptx_version <= a.binary_version);
    assert_true(a.max_dynamic_shared_bytes >= 0 && a.max_dynamic_shared_bytes <= d.shared_per_block_optin);
    assert_non_null(ptxkit_kernel_handle_get(k));
    assert_null(ptxkit_kernel_handle_get(NULL));

    int per_sm = 0;
    assert_ok(ctx, ptxkit_kernel_occupancy_get(k, 256, 0, &per_sm));
    assert_true(per_sm >= 1 && per_sm <= d.max_blocks_per_sm);
    assert_true(per_sm * 256 <= d.max_threads_per_sm);
    assert_true(per_sm * (256 * 4) <= d.shared_per_sm);
    int smaller = 0;
    assert_ok(ctx, ptxkit_kernel_occupancy_get(k, 64, 0, &smaller));
    assert_true(smaller >= per_sm);
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_kernel_occupancy_get(k, 512, 0, &per_sm));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_kernel_occupancy_get(k, 0, 0, &per_sm));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_kernel_occupancy_get(k, 256, (size_t)1 << 30, &per_sm));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_kernel_occupancy_get(k, 256, 0, NULL));
    unsigned grid = 0;
    assert_ok(ctx, ptxkit_kernel_grid_size_get(k, 256, 0, 0, &grid));
    assert_int_equal(grid, (unsigned)(per_sm * d.sm_count));
    assert_ok(ctx, ptxkit_kernel_grid_size_get(k, 256, 0, 5, &grid));
    assert_int_equal(grid, 5);
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_kernel_grid_size_get(k, 512, 0, 0, &grid));

    /* and it runs: each block's 256 elements reversed */
    const unsigned blocks = 37;
    size_t words = blocks * 256;
    uint32_t *in = malloc(words * 4), *out = malloc(words * 4);
    uint64_t rng = test_seed() + 9;
    test_fill_random(in, words * 4, &rng);
    ptxkit_dptr din, dout;
    assert_ok(ctx, ptxkit_memory_alloc(ctx, words * 4, &din));
    assert_ok(ctx, ptxkit_memory_alloc(ctx, words * 4, &dout));
    assert_ok(ctx, ptxkit_memory_write(ctx, din, in, words * 4));
    void *args[] = {&din, &dout};
    assert_ok(ctx, ptxkit_kernel_launch(k, (ptxkit_dim3){blocks, 0, 0}, (ptxkit_dim3){256, 0, 0}, 0, NULL, args));
    assert_ok(ctx, ptxkit_memory_read(ctx, out, dout, words * 4));
    for (size_t i = 0; i < words; i++)
        if (out[i] != in[i / 256 * 256 + 255 - i % 256]) fail_msg("tile_reverse: element %zu wrong", i);
    ptxkit_memory_free(ctx, din);
    ptxkit_memory_free(ctx, dout);
    free(in);
    free(out);
}

/* The parameter list from the driver, a launch checked against it (wrong
 * count, wrong size, NULL argument refused before anything runs, the context
 * usable after), and the block size of best occupancy. */
static void checked_launch(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    ptxkit_kernel *k = kernel("mix", 128);
    size_t count = 0, offsets[8], sizes[8];
    ptxkit_status st = ptxkit_kernel_params_get(k, &count, offsets, sizes, 8);
    if (st == PTXKIT_ERROR_UNSUPPORTED) {
        print_message("driver before CUDA 12.4: no parameter list\n");
        skip();
    }
    assert_ok(ctx, st);
    /* mix(const unsigned *, const unsigned *, unsigned *, unsigned long long, unsigned) */
    assert_int_equal(count, 5);
    const size_t want_offset[] = {0, 8, 16, 24, 32}, want_size[] = {8, 8, 8, 8, 4};
    for (size_t i = 0; i < 5; i++) {
        assert_int_equal(offsets[i], want_offset[i]);
        assert_int_equal(sizes[i], want_size[i]);
    }
    size_t only = 0;
    assert_ok(ctx, ptxkit_kernel_params_get(k, &only, NULL, NULL, 0));
    assert_int_equal(only, 5);
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_kernel_params_get(k, NULL, offsets, sizes, 8));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_kernel_params_get(k, &count, NULL, sizes, 8));

    mix_case c;
    mix_setup(&c, 100003);
    unsigned long long n = c.n;
    void *args[] = {&c.dx, &c.dy, &c.dout, &n, &c.k};
    size_t arg_sizes[] = {sizeof c.dx, sizeof c.dy, sizeof c.dout, sizeof n, sizeof c.k};
    ptxkit_dim3 grid = {64, 0, 0}, block = {128, 0, 0};
    mix_poison(&c);
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_kernel_launch_ex(k, grid, block, 0, NULL, args, arg_sizes, 4, NULL));
    assert_non_null(strstr(ptxkit_last_error(), "5 parameters, 4 arguments"));
    size_t narrow[] = {8, 8, 8, 4, 4}; /* n passed as 32 bits */
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_kernel_launch_ex(k, grid, block, 0, NULL, args, narrow, 5, NULL));
    assert_non_null(strstr(ptxkit_last_error(), "parameter 3"));
    void *holes[] = {&c.dx, &c.dy, NULL, &n, &c.k};
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_kernel_launch_ex(k, grid, block, 0, NULL, holes, arg_sizes, 5, NULL));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_kernel_launch_ex(NULL, grid, block, 0, NULL, args, arg_sizes, 5, NULL));
    /* nothing ran: out is still poison */
    uint32_t first = 0;
    assert_ok(ctx, ptxkit_memory_read(ctx, &first, c.dout, 4));
    assert_int_equal(first, 0xA5A5A5A5u);
    assert_ok(ctx, ptxkit_kernel_launch_ex(k, grid, block, 0, NULL, args, arg_sizes, 5, NULL));
    mix_check(&c, "checked launch");
    mix_free(&c);

    int best = 0, min_grid = 0;
    assert_ok(ctx, ptxkit_kernel_max_occupancy_block_get(k, 0, &best, &min_grid));
    assert_true(best >= 32 && best <= 128 && best % 32 == 0); /* __launch_bounds__(128) */
    assert_true(min_grid >= 1);
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_kernel_max_occupancy_block_get(k, 0, NULL, NULL));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_kernel_max_occupancy_block_get(k, (size_t)1 << 30, &best, NULL));
}

static void launch_attributes(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    ptxkit_kernel *k = kernel("mix", 128);
    mix_case c;
    mix_setup(&c, 100003);
    /* zero attributes: a plain launch */
    ptxkit_launch_attributes none = {0};
    mix_poison(&c);
    assert_ok(ctx, mix_launch(k, &c, 128, &none, 0));
    mix_check(&c, "launch_ex without attributes");

    /* an L2 access policy window over x's allocation */
    ptxkit_access_window window = {.base = c.dx - 4, .bytes = (c.n + 2) * 4, .hit_ratio = 0.6f,
                                   .hit_property = PTXKIT_ACCESS_PERSISTING, .miss_property = PTXKIT_ACCESS_STREAMING};
    ptxkit_launch_attributes with_window = {.access_window = &window};
    mix_poison(&c);
    ptxkit_status st = mix_launch(k, &c, 128, &with_window, 0);
    if (st == PTXKIT_ERROR_UNSUPPORTED) {
        print_message("no access policy windows: %s\n", ptxkit_last_error());
    } else {
        assert_ok(ctx, st);
        mix_check(&c, "launch_ex with an access window");
        ptxkit_access_window bad = window;
        bad.hit_ratio = 1.5f;
        with_window.access_window = &bad;
        assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, mix_launch(k, &c, 128, &with_window, 0));
        bad = window;
        bad.miss_property = PTXKIT_ACCESS_PERSISTING;
        with_window.access_window = &bad;
        assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, mix_launch(k, &c, 128, &with_window, 0));
        bad = window;
        bad.bytes = 0;
        assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, mix_launch(k, &c, 128, &with_window, 0));
    }

    /* cooperative: every block resident at once, else refused */
    unsigned resident = 0;
    assert_ok(ctx, ptxkit_kernel_grid_size_get(k, 128, 0, 0, &resident));
    ptxkit_launch_attributes cooperative = {.cooperative = 1};
    mix_poison(&c);
    assert_ok(ctx, mix_launch(k, &c, 128, &cooperative, resident));
    mix_check(&c, "cooperative launch");
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, mix_launch(k, &c, 128, &cooperative, resident * 2 + 1));
    mix_free(&c);

    /* thread-block clusters (sm_90+) */
    ptxkit_kernel *cs = kernel("cluster_size", 32);
    ptxkit_dptr dout;
    const unsigned blocks = 24;
    uint32_t got[24];
    assert_ok(ctx, ptxkit_memory_alloc(ctx, sizeof got, &dout));
    void *args[] = {&dout};
    ptxkit_launch_attributes cluster = {.cluster = {2, 1, 1}};
    const ptxkit_dim3 grid = {blocks, 1, 1}, block = {32, 1, 1};
    st = ptxkit_kernel_launch_ex(cs, grid, block, 0, NULL, args, NULL, 0, &cluster);
    if (device_arch() < 90) {
        assert_status(PTXKIT_ERROR_UNSUPPORTED, st);
        ptxkit_memory_free(ctx, dout);
        return;
    }
    assert_ok(ctx, st);
    assert_ok(ctx, ptxkit_memory_read(ctx, got, dout, sizeof got));
    for (unsigned i = 0; i < blocks; i++) assert_int_equal(got[i], 2);
    cluster.cluster = (ptxkit_dim3){4, 0, 0}; /* 0 in y and z reads as 1 */
    assert_ok(ctx, ptxkit_kernel_launch_ex(cs, grid, block, 0, NULL, args, NULL, 0, &cluster));
    assert_ok(ctx, ptxkit_memory_read(ctx, got, dout, sizeof got));
    for (unsigned i = 0; i < blocks; i++) assert_int_equal(got[i], 4);
    assert_ok(ctx, ptxkit_kernel_launch(cs, grid, block, 0, NULL, args));
    assert_ok(ctx, ptxkit_memory_read(ctx, got, dout, sizeof got));
    for (unsigned i = 0; i < blocks; i++) assert_int_equal(got[i], 1);
    cluster.cluster = (ptxkit_dim3){5, 1, 1}; /* does not divide 24 */
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_kernel_launch_ex(cs, grid, block, 0, NULL, args, NULL, 0, &cluster));
    ptxkit_memory_free(ctx, dout);
}

static void wrong_entry_names(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    const char *defines[] = {"BLOCK_SIZE=128"};
    ptxkit_kernel *k = (ptxkit_kernel *)0x1;
    assert_status(PTXKIT_ERROR_NOT_FOUND, ptxkit_program_kernel_get(ctx, program(), "no_such_kernel", defines, 1, &k));
    assert_null(k);
    assert_non_null(strstr(ptxkit_last_error(), "no_such_kernel"));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_program_kernel_get(NULL, program(), "mix", defines, 1, &k));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_program_kernel_get(ctx, NULL, "mix", defines, 1, &k));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_program_kernel_get(ctx, program(), NULL, defines, 1, &k));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_program_kernel_get(ctx, program(), "mix", defines, 1, NULL));
    /* in a module the application loaded */
    ptxkit_compiled compiled;
    assert_ok(NULL, ptxkit_program_compile(program(), "mix", defines, 1, device_arch(), 1, &compiled));
    ptxkit_module *m = NULL;
    ptxkit_status st = ptxkit_module_load(ctx, compiled.image, compiled.size, NULL, &m);
    ptxkit_program_compiled_free(&compiled);
    if (st == PTXKIT_ERROR_PTX_VERSION) skip();
    assert_ok(ctx, st);
    assert_status(PTXKIT_ERROR_NOT_FOUND, ptxkit_module_kernel_get(m, "no_such_kernel", &k));
    assert_non_null(strstr(ptxkit_last_error(), "no_such_kernel"));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_module_kernel_get(NULL, "mix", &k));
}

/* Each kernel keeps the log of the load (and compile) that produced it; a
 * load that fails leaves its log in the thread's last error instead. */
static void jit_logs_belong_to_kernels(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    /* a source no earlier run compiled (not on disk): NVRTC runs and warns */
    char source[512];
    snprintf(source, sizeof source,
             "#warning \"ptxkit-jit-log-test\"\n"
             "extern \"C\" __global__ void warned(int *out) { out[threadIdx.x] = %d; }\n"
             "extern \"C\" __global__ void quiet(int *out) { out[threadIdx.x] = 1; }\n",
             (int)(test_seed() & 0x7fffffff));
    ptxkit_program *p = NULL;
    assert_ok(NULL, ptxkit_program_create("jit_log_test.cu", source, NULL, 0, &p));
    ptxkit_kernel *warned = NULL, *again = NULL, *mix = NULL;
    assert_ok(ctx, ptxkit_program_kernel_get(ctx, p, "warned", NULL, 0, &warned));
    const char *log = ptxkit_kernel_jit_log_get(warned);
    assert_non_null(strstr(log, "jit_log_test.cu"));
    assert_true(strstr(log, "CUBIN loaded (no driver JIT)") || strstr(log, "driver JIT wall time"));
    assert_non_null(strstr(log, "NVRTC log:"));
    assert_non_null(strstr(log, "ptxkit-jit-log-test"));
    assert_true(strlen(log) < 4096); /* bounded */
    /* a registry hit: the same kernel, the same log */
    assert_ok(ctx, ptxkit_program_kernel_get(ctx, p, "warned", NULL, 0, &again));
    assert_ptr_equal(again, warned);
    assert_ptr_equal(ptxkit_kernel_jit_log_get(again), log);
    /* another kernel's load: its own log, the first one's unchanged */
    mix = kernel("mix", 128);
    assert_null(strstr(ptxkit_kernel_jit_log_get(mix), "jit_log_test.cu"));
    assert_non_null(strstr(ptxkit_kernel_jit_log_get(warned), "ptxkit-jit-log-test"));
    assert_string_equal(ptxkit_kernel_jit_log_get(NULL), "");
    ptxkit_program_destroy(p);

    /* PTX the driver refuses: the status, and the driver's log in the
     * thread's last error (the successful calls above did not clear it;
     * this failure replaces it) */
    static const char bad_ptx[] = ".version 7.0\n.target sm_52\n.address_size 64\n"
                                  ".visible .entry broken()\n{\n  this_is_not_ptx;\n}\n";
    ptxkit_module *m = NULL;
    ptxkit_status st = ptxkit_module_load(ctx, bad_ptx, 0, NULL, &m);
    assert_true(ptxkit_status_is_error(st));
    const char *message = ptxkit_last_error();
    assert_non_null(strstr(message, "ptxkit_module_load"));
    const char *error_log = strstr(message, "JIT error log:\n");
    assert_non_null(error_log);
    /* the driver said something: the error log is not empty */
    assert_false(strncmp(error_log + strlen("JIT error log:\n"), "\nJIT info log", 14) == 0);
}

/* ---- a kernel fault, in a fresh process ----------------------------------
 * A sticky fault ruins the CUDA context for the rest of the process that
 * owns it, and CUDA cannot be used in a child forked after it was
 * initialized: so the test runs this binary again with --fault. */

static int fault_child(void) {
    ptxkit_context *ctx = NULL;
    if (ptxkit_context_create(0, &ctx) != PTXKIT_SUCCESS) return 77;
    ptxkit_program *p = NULL;
    ptxkit_kernel *k = NULL;
    const char *defines[] = {"BLOCK_SIZE=32"};
    if (ptxkit_program_create("user_test.cu", user_source, NULL, 0, &p) != PTXKIT_SUCCESS ||
        ptxkit_program_kernel_get(ctx, p, "fault", defines, 1, &k) != PTXKIT_SUCCESS) {
        fprintf(stderr, "fault child: no kernel: %s\n", ptxkit_last_error());
        return 1;
    }
    ptxkit_dptr bogus = 16; /* nothing is mapped there */
    void *args[] = {&bogus};
    ptxkit_status st = ptxkit_kernel_launch(k, (ptxkit_dim3){1, 1, 1}, (ptxkit_dim3){32, 1, 1}, 0, NULL, args);
    if (st == PTXKIT_SUCCESS) st = ptxkit_context_synchronize(ctx);
    if (st != PTXKIT_ERROR_CONTEXT_LOST) {
        fprintf(stderr, "fault child: the fault gave %s (%s), expected context lost\n", ptxkit_status_string(st),
                ptxkit_last_error());
        return 1;
    }
    if (!strstr(ptxkit_last_error(), "CUDA_ERROR_ILLEGAL_ADDRESS")) {
        fprintf(stderr, "fault child: the message does not name the driver's error: %s\n", ptxkit_last_error());
        return 1;
    }
    /* sticky: the context stays unusable, and the calls say so */
    if ((st = ptxkit_context_synchronize(ctx)) != PTXKIT_ERROR_CONTEXT_LOST ||
        (st = ptxkit_kernel_launch(k, (ptxkit_dim3){1, 1, 1}, (ptxkit_dim3){32, 1, 1}, 0, NULL, args)) == PTXKIT_SUCCESS) {
        fprintf(stderr, "fault child: a call after the fault gave %s\n", ptxkit_status_string(st));
        return 1;
    }
    ptxkit_context_destroy(ctx);
    /* CUDA's rule for sticky faults: the process cannot use the GPU again
     * until it restarts. Opening a new context must say so, not crash. */
    ctx = NULL;
    st = ptxkit_context_create(0, &ctx);
    if (st == PTXKIT_SUCCESS) {
        /* a driver that recovered: then the new context must work */
        ptxkit_dptr mem = 0;
        if ((st = ptxkit_memory_alloc(ctx, 64, &mem)) != PTXKIT_SUCCESS || (st = ptxkit_context_synchronize(ctx)) != PTXKIT_SUCCESS) {
            fprintf(stderr, "fault child: a reopened context does not work: %s\n", ptxkit_status_string(st));
            return 1;
        }
        ptxkit_memory_free(ctx, mem);
        ptxkit_context_destroy(ctx);
    } else if (st != PTXKIT_ERROR_CONTEXT_LOST || !strstr(ptxkit_last_error(), "restarts")) {
        fprintf(stderr, "fault child: reopening after the fault gave %s: %s\n", ptxkit_status_string(st),
                ptxkit_last_error());
        return 1;
    }
    ptxkit_program_destroy(p);
    return 0;
}

/* A failed device-side assert has a status of its own (the application
 * tells a broken invariant from a bad address without reading the text),
 * and is sticky as every kernel fault is. assert() in device code is a call
 * of __assertfail, declared here so the program needs no header. */
static const char assert_source[] =
    "extern \"C\" __device__ void __assertfail(const char *, const char *, unsigned, const char *, unsigned long);\n"
    "extern \"C\" __global__ void check_positive(const int *x) {\n"
    "    if (x[threadIdx.x] <= 0) __assertfail(\"x[i] > 0\", \"assert.cu\", 3, \"check_positive\", 1);\n"
    "}\n";

static int assert_child(void) {
    ptxkit_context *ctx = NULL;
    if (ptxkit_context_create(0, &ctx) != PTXKIT_SUCCESS) return 77;
    ptxkit_program *p = NULL;
    ptxkit_kernel *k = NULL;
    ptxkit_dptr x = 0;
    if (ptxkit_program_create("assert.cu", assert_source, NULL, 0, &p) != PTXKIT_SUCCESS ||
        ptxkit_program_kernel_get(ctx, p, "check_positive", NULL, 0, &k) != PTXKIT_SUCCESS ||
        ptxkit_memory_alloc(ctx, 32 * sizeof(int), &x) != PTXKIT_SUCCESS ||
        ptxkit_memory_set32_async(ctx, x, 1, 32, NULL) != PTXKIT_SUCCESS) {
        fprintf(stderr, "assert child: setup failed: %s\n", ptxkit_last_error());
        return 1;
    }
    void *args[] = {&x};
    /* all positive: no assert, the context is fine */
    ptxkit_status st = ptxkit_kernel_launch(k, (ptxkit_dim3){1, 1, 1}, (ptxkit_dim3){32, 1, 1}, 0, NULL, args);
    if (st == PTXKIT_SUCCESS) st = ptxkit_context_synchronize(ctx);
    if (st != PTXKIT_SUCCESS) {
        fprintf(stderr, "assert child: a passing assert gave %s\n", ptxkit_status_string(st));
        return 1;
    }
    if (ptxkit_memory_set32_async(ctx, x + 5 * sizeof(int), 0, 1, NULL) != PTXKIT_SUCCESS) return 1;
    st = ptxkit_kernel_launch(k, (ptxkit_dim3){1, 1, 1}, (ptxkit_dim3){32, 1, 1}, 0, NULL, args);
    if (st == PTXKIT_SUCCESS) st = ptxkit_context_synchronize(ctx);
    if (st != PTXKIT_ERROR_DEVICE_ASSERT || !strstr(ptxkit_last_error(), "CUDA_ERROR_ASSERT")) {
        fprintf(stderr, "assert child: the failed assert gave %s (%s), expected the device-assert status\n",
                ptxkit_status_string(st), ptxkit_last_error());
        return 1;
    }
    /* sticky, as the header says */
    if ((st = ptxkit_context_synchronize(ctx)) == PTXKIT_SUCCESS) {
        fprintf(stderr, "assert child: the context still synchronizes after the assert\n");
        return 1;
    }
    ptxkit_context_destroy(ctx);
    ptxkit_program_destroy(p);
    return 0;
}

static void kernel_fault(void **state) {
    (void)state;
    test_run_child("--fault");
}

static void device_assert(void **state) {
    (void)state;
    test_run_child("--assert");
}

int main(int argc, char **argv) {
    /* before anything touches CUDA in this process */
    if (argc == 2 && strcmp(argv[1], "--fault") == 0) return fault_child();
    if (argc == 2 && strcmp(argv[1], "--assert") == 0) return assert_child();
    test_require_gpu();
    if (!ptxkit_jit_available()) {
        printf("skipped: NVRTC not available (user kernels come from source)\n");
        return TEST_SKIP_EXIT;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(jit_kernel_exact),    cmocka_unit_test(user_ptx_each_operator),
        cmocka_unit_test(registry_hit),        cmocka_unit_test(launch_errors),
        cmocka_unit_test(first_launch_limits),
        cmocka_unit_test(attributes_and_occupancy), cmocka_unit_test(launch_attributes),
        cmocka_unit_test(wrong_entry_names),   cmocka_unit_test(kernel_fault),
        cmocka_unit_test(jit_logs_belong_to_kernels),
        cmocka_unit_test(device_assert),       cmocka_unit_test(checked_launch),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    ptxkit_program_destroy(program());
    test_gpu_release();
    return failed;
}
