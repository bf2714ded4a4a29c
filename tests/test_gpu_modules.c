/* Modules of several kernels and their variables on a GPU (issue 25):
 * __constant__ and __device__ variables by every kind of name (a namespace,
 * an anonymous namespace, a variable template, an unmangled global, an
 * extern "C" one, a loaded image's symbol) set and read, synchronously and
 * on a stream, and seen by the module's kernels; two kernels of one module
 * talking through a __device__ variable over awkward sizes; the module of
 * a kernel got by the short path; a warm start in a second process (no
 * NVRTC); and bad names. Nothing outside the public API: no driver call, no
 * hand-mangled name. */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_util.h"

static const char variables_source[] =
    "namespace ns { __constant__ float coeffs[7]; __device__ int counter; }\n"
    "namespace { __device__ unsigned hidden[3]; }\n"
    "template <typename T> __device__ T tv[5];\n"
    "__constant__ double plain_constant;\n"
    "extern \"C\" __device__ long long c_variable;\n"
    /* every variable, as the kernels see them, into out (doubles) */
    "extern \"C\" __global__ void dump(double *out) {\n"
    "    if (threadIdx.x != 0 || blockIdx.x != 0) return;\n"
    "    int at = 0;\n"
    "    for (int i = 0; i < 7; i++) out[at++] = ns::coeffs[i];\n"
    "    out[at++] = ns::counter;\n"
    "    for (int i = 0; i < 3; i++) out[at++] = hidden[i];\n"
    "    for (int i = 0; i < 5; i++) out[at++] = tv<float>[i];\n"
    "    out[at++] = plain_constant;\n"
    "    out[at++] = (double)c_variable;\n"
    "}\n"
    /* a kernel that writes the __device__ ones, for the host to read */
    "namespace ns { template <int ADD> __global__ void bump() {\n"
    "    counter += ADD; hidden[threadIdx.x % 3] += ADD; tv<float>[4] = ADD; c_variable = -ADD; } }\n";

enum { DUMP_COUNT = 7 + 1 + 3 + 5 + 1 + 1 };

static const char *const variable_names[] = {"&ns::coeffs", "&ns::counter", "&hidden", "&tv<float>", "dump",
                                             "ns::bump<5>"};
enum { VARIABLE_NAME_COUNT = sizeof variable_names / sizeof variable_names[0] };

static ptxkit_program *variables_program(void) {
    static ptxkit_program *p;
    if (!p) assert_ok(NULL, ptxkit_program_create("module_variables.cu", variables_source, NULL, 0, &p));
    return p;
}

typedef struct variables {
    float coeffs[7];
    int counter;
    unsigned hidden[3];
    float tv[5];
    double plain;
    long long c;
} variables;

static void random_variables(variables *v, uint64_t *rng) {
    for (int i = 0; i < 7; i++) v->coeffs[i] = (float)(int)(test_rand(rng) % 2001) / 8.0f - 125.0f;
    v->counter = (int)(test_rand(rng) % 100000) - 50000;
    for (int i = 0; i < 3; i++) v->hidden[i] = (unsigned)(test_rand(rng) % 1000000);
    for (int i = 0; i < 5; i++) v->tv[i] = (float)(int)(test_rand(rng) % 4001) / 16.0f;
    v->plain = (double)(int64_t)(test_rand(rng) % 1000000) / 1024.0;
    v->c = (long long)(test_rand(rng) % 1000000000) - 500000000;
}

/* What dump writes for v (exact: every value fits a double). */
static void expected_dump(const variables *v, double *out) {
    int at = 0;
    for (int i = 0; i < 7; i++) out[at++] = v->coeffs[i];
    out[at++] = v->counter;
    for (int i = 0; i < 3; i++) out[at++] = v->hidden[i];
    for (int i = 0; i < 5; i++) out[at++] = v->tv[i];
    out[at++] = v->plain;
    out[at++] = (double)v->c;
}

static void check_dump(ptxkit_context *ctx, ptxkit_module *m, const variables *v, const char *when) {
    ptxkit_kernel *dump = NULL;
    assert_ok(ctx, ptxkit_module_kernel_get(m, "dump", &dump));
    ptxkit_dptr out = 0;
    assert_ok(ctx, ptxkit_memory_alloc(ctx, DUMP_COUNT * sizeof(double), &out));
    assert_ok(ctx, ptxkit_memory_set8_async(ctx, out, 0xff, DUMP_COUNT * sizeof(double), NULL)); /* poison: NaN */
    void *args[] = {&out};
    assert_ok(ctx, ptxkit_kernel_launch(dump, (ptxkit_dim3){1, 1, 1}, (ptxkit_dim3){32, 1, 1}, 0, NULL, args));
    double got[DUMP_COUNT], want[DUMP_COUNT];
    assert_ok(ctx, ptxkit_memory_read(ctx, got, out, sizeof got));
    expected_dump(v, want);
    for (int i = 0; i < DUMP_COUNT; i++)
        if (got[i] != want[i]) fail_msg("%s: the kernel sees %g at #%d, the host wrote %g", when, got[i], i, want[i]);
    ptxkit_memory_free(ctx, out);
}

/* Writes every variable of v by the names given; plain: the variables at
 * global scope by their unmangled names (not among the module's names). */
static void write_all(ptxkit_module *m, const variables *v, ptxkit_stream *stream) {
    const struct {
        const char *name;
        const void *src;
        size_t bytes;
    } w[] = {
        {"&ns::coeffs", v->coeffs, sizeof v->coeffs}, {"&ns::counter", &v->counter, sizeof v->counter},
        {"&hidden", v->hidden, sizeof v->hidden},     {"&tv<float>", v->tv, sizeof v->tv},
        {"plain_constant", &v->plain, sizeof v->plain}, {"c_variable", &v->c, sizeof v->c},
    };
    for (size_t i = 0; i < sizeof w / sizeof w[0]; i++) {
        ptxkit_status st = stream ? ptxkit_module_variable_write_async(m, w[i].name, 0, w[i].src, w[i].bytes, stream)
                                  : ptxkit_module_variable_write(m, w[i].name, 0, w[i].src, w[i].bytes);
        if (st != PTXKIT_SUCCESS)
            fail_msg("writing %s: %s: %s", w[i].name, ptxkit_status_string(st), ptxkit_last_error());
    }
}

static void read_all(ptxkit_module *m, variables *v, ptxkit_stream *stream) {
    const struct {
        const char *name;
        void *dst;
        size_t bytes;
    } r[] = {
        {"&ns::coeffs", v->coeffs, sizeof v->coeffs}, {"&ns::counter", &v->counter, sizeof v->counter},
        {"&hidden", v->hidden, sizeof v->hidden},     {"&tv<float>", v->tv, sizeof v->tv},
        {"plain_constant", &v->plain, sizeof v->plain}, {"c_variable", &v->c, sizeof v->c},
    };
    for (size_t i = 0; i < sizeof r / sizeof r[0]; i++) {
        ptxkit_status st = stream ? ptxkit_module_variable_read_async(m, r[i].name, 0, r[i].dst, r[i].bytes, stream)
                                  : ptxkit_module_variable_read(m, r[i].name, 0, r[i].dst, r[i].bytes);
        if (st != PTXKIT_SUCCESS) fail_msg("reading %s: %s: %s", r[i].name, ptxkit_status_string(st), ptxkit_last_error());
    }
}

static void variables_every_form(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    ptxkit_module *m = NULL;
    assert_ok(ctx, ptxkit_program_module_get(ctx, variables_program(), variable_names, VARIABLE_NAME_COUNT, NULL, 0, &m));
    /* the same names again: the loaded module, no compile */
    ptxkit_module *again = NULL;
    assert_ok(ctx, ptxkit_program_module_get(ctx, variables_program(), variable_names, VARIABLE_NAME_COUNT, NULL, 0, &again));
    assert_ptr_equal(m, again);

    /* address and size of each, by each kind of name */
    const struct {
        const char *name;
        size_t bytes;
    } sizes[] = {{"&ns::coeffs", 7 * sizeof(float)}, {"&ns::counter", sizeof(int)}, {"&hidden", 3 * sizeof(unsigned)},
                 {"&tv<float>", 5 * sizeof(float)},  {"plain_constant", sizeof(double)}, {"c_variable", sizeof(long long)}};
    ptxkit_dptr seen[6];
    for (size_t i = 0; i < 6; i++) {
        size_t bytes = 0;
        assert_ok(ctx, ptxkit_module_variable_get(m, sizes[i].name, &seen[i], &bytes));
        if (!seen[i] || bytes != sizes[i].bytes)
            fail_msg("%s: address %#llx, %zu bytes (expected %zu)", sizes[i].name, (unsigned long long)seen[i], bytes,
                     sizes[i].bytes);
        for (size_t j = 0; j < i; j++) assert_true(seen[j] != seen[i]);
    }
    size_t only_bytes = 0;
    assert_ok(ctx, ptxkit_module_variable_get(m, "&ns::counter", NULL, &only_bytes));
    assert_int_equal(only_bytes, sizeof(int));

    uint64_t rng = test_seed() + 25;
    variables v, back;
    /* synchronously */
    random_variables(&v, &rng);
    write_all(m, &v, NULL);
    memset(&back, 0xa5, sizeof back);
    read_all(m, &back, NULL);
    assert_memory_equal(back.coeffs, v.coeffs, sizeof v.coeffs);
    assert_int_equal(back.counter, v.counter);
    assert_memory_equal(back.hidden, v.hidden, sizeof v.hidden);
    assert_memory_equal(back.tv, v.tv, sizeof v.tv);
    assert_true(back.plain == v.plain && back.c == v.c);
    check_dump(ctx, m, &v, "after synchronous writes");

    /* on a stream, ordered with a kernel of the module on that stream */
    ptxkit_stream *stream = NULL;
    assert_ok(ctx, ptxkit_stream_create(ctx, PTXKIT_STREAM_NON_BLOCKING, 0, &stream));
    variables *pinned = NULL, *pinned_back = NULL;
    assert_ok(ctx, ptxkit_host_alloc(ctx, sizeof *pinned, PTXKIT_HOST_DEFAULT, (void **)&pinned));
    assert_ok(ctx, ptxkit_host_alloc(ctx, sizeof *pinned_back, PTXKIT_HOST_DEFAULT, (void **)&pinned_back));
    random_variables(pinned, &rng);
    write_all(m, pinned, stream);
    ptxkit_kernel *bump = NULL;
    assert_ok(ctx, ptxkit_module_kernel_get(m, "ns::bump<5>", &bump));
    assert_ok(ctx, ptxkit_kernel_launch(bump, (ptxkit_dim3){1, 1, 1}, (ptxkit_dim3){1, 1, 1}, 0, stream, NULL));
    memset(pinned_back, 0xa5, sizeof *pinned_back);
    read_all(m, pinned_back, stream);
    assert_ok(ctx, ptxkit_stream_synchronize(ctx, stream));
    variables want = *pinned;
    want.counter += 5;
    want.hidden[0] += 5;
    want.tv[4] = 5;
    want.c = -5;
    assert_memory_equal(pinned_back->coeffs, want.coeffs, sizeof want.coeffs);
    assert_int_equal(pinned_back->counter, want.counter);
    assert_memory_equal(pinned_back->hidden, want.hidden, sizeof want.hidden);
    assert_memory_equal(pinned_back->tv, want.tv, sizeof want.tv);
    assert_true(pinned_back->plain == want.plain && pinned_back->c == want.c);
    check_dump(ctx, m, &want, "after a stream's writes and a kernel");

    /* part of a variable, at an offset */
    float two[2] = {1.5f, -2.25f};
    assert_ok(ctx, ptxkit_module_variable_write(m, "&ns::coeffs", 3 * sizeof(float), two, sizeof two));
    want.coeffs[3] = two[0];
    want.coeffs[4] = two[1];
    float last = 0;
    assert_ok(ctx, ptxkit_module_variable_read(m, "&ns::coeffs", 4 * sizeof(float), &last, sizeof last));
    assert_true(last == two[1]);
    check_dump(ctx, m, &want, "after a write at an offset");
    /* bytes 0 copies nothing, at the end too */
    assert_ok(ctx, ptxkit_module_variable_write(m, "&ns::coeffs", 7 * sizeof(float), NULL, 0));

    /* bad input: clear statuses, and the variables are untouched */
    float big[8] = {0};
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_module_variable_write(m, "&ns::coeffs", 0, big, sizeof big));
    assert_non_null(strstr(ptxkit_last_error(), "overrun"));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_module_variable_read(m, "&ns::coeffs", 7 * sizeof(float), big, 1));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT,
                  ptxkit_module_variable_write(m, "&ns::coeffs", SIZE_MAX, big, 2)); /* offset + bytes wraps */
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_module_variable_write(m, "&ns::coeffs", 0, NULL, 4));
    assert_status(PTXKIT_ERROR_NOT_FOUND, ptxkit_module_variable_get(m, "no_such_variable", NULL, NULL));
    assert_non_null(strstr(ptxkit_last_error(), "no_such_variable"));
    assert_status(PTXKIT_ERROR_NOT_FOUND, ptxkit_module_variable_get(m, "&tv<double>", NULL, NULL));
    assert_non_null(strstr(ptxkit_last_error(), "ptxkit_program_module_get"));
    assert_status(PTXKIT_ERROR_NOT_FOUND, ptxkit_module_variable_write(m, "&ns::nothing", 0, big, 4));
    /* a kernel is no variable, nor a variable a kernel */
    assert_status(PTXKIT_ERROR_NOT_FOUND, ptxkit_module_variable_get(m, "dump", NULL, NULL));
    ptxkit_kernel *k = NULL;
    assert_status(PTXKIT_ERROR_NOT_FOUND, ptxkit_module_kernel_get(m, "&ns::counter", &k));
    assert_non_null(strstr(ptxkit_last_error(), "&ns::counter"));
    assert_status(PTXKIT_ERROR_NOT_FOUND, ptxkit_module_kernel_get(m, "ns::bump<6>", &k));
    check_dump(ctx, m, &want, "after refused calls");

    /* a name that names nothing in the program: the module is refused */
    const char *missing[] = {"dump", "&ns::nothing"};
    ptxkit_module *none = (ptxkit_module *)0x1;
    assert_status(PTXKIT_ERROR_NOT_FOUND, ptxkit_program_module_get(ctx, variables_program(), missing, 2, NULL, 0, &none));
    assert_null(none);

    ptxkit_host_free(ctx, pinned);
    ptxkit_host_free(ctx, pinned_back);
    ptxkit_stream_destroy(stream);
}

/* ---- two kernels of one module, through a __device__ variable ---------- */

static const char pipeline_source[] =
    "__device__ unsigned long long total;\n"
    "extern \"C\" __global__ void accumulate(const int *in, unsigned long long n) {\n"
    "    unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;\n"
    "    if (i < n) atomicAdd(&total, (unsigned long long)(long long)in[i]);\n"
    "}\n"
    "namespace stage { template <int SCALE> __global__ void finish(unsigned long long *out) {\n"
    "    out[0] = total * SCALE; total = 0; } }\n";

static ptxkit_program *pipeline_program(void) {
    static ptxkit_program *p;
    if (!p) assert_ok(NULL, ptxkit_program_create("pipeline.cu", pipeline_source, NULL, 0, &p));
    return p;
}

static const char *const pipeline_names[] = {"accumulate", "stage::finish<3>", "&total"};

static void two_kernels_share_a_variable(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    ptxkit_module *m = NULL;
    assert_ok(ctx, ptxkit_program_module_get(ctx, pipeline_program(), pipeline_names, 3, NULL, 0, &m));
    ptxkit_kernel *accumulate = NULL, *finish = NULL;
    assert_ok(ctx, ptxkit_module_kernel_get(m, "accumulate", &accumulate));
    assert_ok(ctx, ptxkit_module_kernel_get(m, "stage::finish<3>", &finish));
    ptxkit_module *of = NULL;
    assert_ok(ctx, ptxkit_kernel_module_get(accumulate, &of));
    assert_ptr_equal(of, m);
    assert_ok(ctx, ptxkit_kernel_module_get(finish, &of));
    assert_ptr_equal(of, m);

    size_t largest = 0;
    for (size_t s = 0; s < test_awkward_size_count; s++)
        if (test_awkward_sizes[s] > largest) largest = test_awkward_sizes[s];
    int *host = malloc(largest * sizeof *host);
    assert_non_null(host);
    ptxkit_dptr in = 0, out = 0;
    assert_ok(ctx, ptxkit_memory_alloc(ctx, largest * sizeof(int) + 1, &in));
    assert_ok(ctx, ptxkit_memory_alloc(ctx, sizeof(unsigned long long), &out));
    uint64_t rng = test_seed() + 77;
    unsigned long long poison = 0x5555555555555555ull;
    assert_ok(ctx, ptxkit_module_variable_write(m, "&total", 0, &poison, sizeof poison));
    unsigned long long zero = 0;
    assert_ok(ctx, ptxkit_module_variable_write(m, "&total", 0, &zero, sizeof zero));
    for (size_t s = 0; s < test_awkward_size_count; s++) {
        unsigned long long n = test_awkward_sizes[s];
        long long sum = 0;
        for (size_t i = 0; i < n; i++) {
            host[i] = (int)(test_rand(&rng) % 2000001) - 1000000;
            sum += host[i];
        }
        if (n) assert_ok(ctx, ptxkit_memory_write(ctx, in, host, n * sizeof(int)));
        assert_ok(ctx, ptxkit_memory_write(ctx, out, &poison, sizeof poison));
        void *args[] = {&in, &n};
        unsigned blocks = (unsigned)((n + 255) / 256);
        if (blocks) assert_ok(ctx, ptxkit_kernel_launch(accumulate, (ptxkit_dim3){blocks, 1, 1}, (ptxkit_dim3){256, 1, 1}, 0, NULL, args));
        /* the host sees the first kernel's total through the variable */
        unsigned long long seen = 1;
        assert_ok(ctx, ptxkit_module_variable_read(m, "&total", 0, &seen, sizeof seen));
        if (seen != (unsigned long long)sum) fail_msg("n = %llu: total %llu, expected %lld", n, seen, sum);
        void *finish_args[] = {&out};
        assert_ok(ctx, ptxkit_kernel_launch(finish, (ptxkit_dim3){1, 1, 1}, (ptxkit_dim3){1, 1, 1}, 0, NULL, finish_args));
        unsigned long long got = 0;
        assert_ok(ctx, ptxkit_memory_read(ctx, &got, out, sizeof got));
        if (got != (unsigned long long)sum * 3u) fail_msg("n = %llu: finish wrote %llu, expected %lld * 3", n, got, sum);
        /* finish reset it for the next round */
        assert_ok(ctx, ptxkit_module_variable_read(m, "&total", 0, &seen, sizeof seen));
        assert_true(seen == 0);
    }

    /* the short path: a module of the one entry, with a total of its own */
    ptxkit_kernel *alone = NULL;
    assert_ok(ctx, ptxkit_program_kernel_get(ctx, pipeline_program(), "accumulate", NULL, 0, &alone));
    assert_true(alone != accumulate);
    ptxkit_module *alone_module = NULL;
    assert_ok(ctx, ptxkit_kernel_module_get(alone, &alone_module));
    assert_true(alone_module != m);
    ptxkit_kernel *same = NULL;
    assert_ok(ctx, ptxkit_program_kernel_get(ctx, pipeline_program(), "accumulate", NULL, 0, &same));
    assert_ptr_equal(same, alone);
    ptxkit_dptr mine = 0, theirs = 0;
    assert_ok(ctx, ptxkit_module_variable_get(m, "&total", &mine, NULL));
    assert_ok(ctx, ptxkit_module_variable_get(alone_module, "total", &theirs, NULL)); /* unmangled: no name needed */
    assert_true(mine != theirs);
    unsigned long long seven = 7;
    assert_ok(ctx, ptxkit_module_variable_write(alone_module, "total", 0, &seven, sizeof seven));
    host[0] = 35;
    unsigned long long one = 1;
    assert_ok(ctx, ptxkit_memory_write(ctx, in, host, sizeof(int)));
    void *args[] = {&in, &one};
    assert_ok(ctx, ptxkit_kernel_launch(alone, (ptxkit_dim3){1, 1, 1}, (ptxkit_dim3){32, 1, 1}, 0, NULL, args));
    unsigned long long a = 0, b = 1;
    assert_ok(ctx, ptxkit_module_variable_read(alone_module, "total", 0, &a, sizeof a));
    assert_ok(ctx, ptxkit_module_variable_read(m, "&total", 0, &b, sizeof b));
    assert_true(a == 42 && b == 0);
    /* a one-name module is the short path's */
    const char *entry[] = {"accumulate"};
    ptxkit_module *one_name = NULL;
    assert_ok(ctx, ptxkit_program_module_get(ctx, pipeline_program(), entry, 1, NULL, 0, &one_name));
    assert_ptr_equal(one_name, alone_module);

    ptxkit_memory_free(ctx, in);
    ptxkit_memory_free(ctx, out);
    free(host);
}

/* ---- an image the application loaded: variables by their symbols ------- */

static void loaded_image_variables(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    ptxkit_device_info d;
    assert_ok(ctx, ptxkit_device_info_get(ctx, &d));
    /* the symbol NVRTC gives the variable: its lowered name, from the public call */
    ptxkit_compiled named;
    assert_ok(NULL, ptxkit_program_compile(variables_program(), "&ns::coeffs", NULL, 0,
                                           d.cc_major * 10 + d.cc_minor, 1, &named));
    ptxkit_module *m = NULL;
    ptxkit_status st = ptxkit_module_load(ctx, named.image, named.size, NULL, &m);
    if (st == PTXKIT_ERROR_PTX_VERSION) {
        ptxkit_program_compiled_free(&named);
        skip();
    }
    assert_ok(ctx, st);
    float coeffs[7] = {1, 2, 3, 4, 5, 6, 7}, back[7] = {0};
    size_t bytes = 0;
    assert_ok(ctx, ptxkit_module_variable_get(m, named.lowered_name, NULL, &bytes));
    assert_int_equal(bytes, sizeof coeffs);
    assert_ok(ctx, ptxkit_module_variable_write(m, named.lowered_name, 0, coeffs, sizeof coeffs));
    assert_ok(ctx, ptxkit_module_variable_read(m, named.lowered_name, 0, back, sizeof back));
    assert_memory_equal(back, coeffs, sizeof coeffs);
    assert_ok(ctx, ptxkit_module_variable_get(m, "plain_constant", NULL, &bytes));
    assert_int_equal(bytes, sizeof(double));
    /* a loaded image knows no name expressions */
    assert_status(PTXKIT_ERROR_NOT_FOUND, ptxkit_module_variable_get(m, "&ns::coeffs", NULL, NULL));
    assert_non_null(strstr(ptxkit_last_error(), "mangled"));
    ptxkit_kernel *dump = NULL;
    assert_ok(ctx, ptxkit_module_kernel_get(m, "dump", &dump));
    ptxkit_module *of = NULL;
    assert_ok(ctx, ptxkit_kernel_module_get(dump, &of));
    assert_ptr_equal(of, m);
    ptxkit_program_compiled_free(&named);
}

/* ---- a warm start: a second process finds the module on disk ----------- */

static int mapped(const char *name) {
    FILE *f = fopen("/proc/self/maps", "r");
    char line[4096];
    int found = 0;
    while (f && !found && fgets(line, sizeof line, f)) found = strstr(line, name) != NULL;
    if (f) fclose(f);
    return found;
}

/* The pipeline module's kernels in a fresh process; with `warm`, NVRTC must
 * not have been loaded to get them. */
static int pipeline_child(bool warm) {
    ptxkit_context *ctx = NULL;
    if (ptxkit_context_create(0, &ctx) != PTXKIT_SUCCESS) return 77;
    ptxkit_program *p = NULL;
    ptxkit_module *m = NULL;
    ptxkit_kernel *accumulate = NULL, *finish = NULL;
    ptxkit_dptr in = 0, out = 0;
    int values[3] = {5, -2, 40};
    unsigned long long n = 3, got = 0, zero = 0;
    ptxkit_status st = ptxkit_program_create("pipeline.cu", pipeline_source, NULL, 0, &p);
    if (st == PTXKIT_SUCCESS) st = ptxkit_program_module_get(ctx, p, pipeline_names, 3, NULL, 0, &m);
    if (st == PTXKIT_SUCCESS) st = ptxkit_module_kernel_get(m, "accumulate", &accumulate);
    if (st == PTXKIT_SUCCESS) st = ptxkit_module_kernel_get(m, "stage::finish<3>", &finish);
    if (st == PTXKIT_SUCCESS) st = ptxkit_memory_alloc(ctx, sizeof values, &in);
    if (st == PTXKIT_SUCCESS) st = ptxkit_memory_alloc(ctx, sizeof got, &out);
    if (st == PTXKIT_SUCCESS) st = ptxkit_memory_write(ctx, in, values, sizeof values);
    if (st == PTXKIT_SUCCESS) st = ptxkit_module_variable_write(m, "&total", 0, &zero, sizeof zero);
    void *args[] = {&in, &n}, *finish_args[] = {&out};
    if (st == PTXKIT_SUCCESS) st = ptxkit_kernel_launch(accumulate, (ptxkit_dim3){1, 1, 1}, (ptxkit_dim3){32, 1, 1}, 0, NULL, args);
    if (st == PTXKIT_SUCCESS) st = ptxkit_kernel_launch(finish, (ptxkit_dim3){1, 1, 1}, (ptxkit_dim3){1, 1, 1}, 0, NULL, finish_args);
    if (st == PTXKIT_SUCCESS) st = ptxkit_memory_read(ctx, &got, out, sizeof got);
    if (st != PTXKIT_SUCCESS) {
        fprintf(stderr, "pipeline child: %s: %s\n", ptxkit_status_string(st), ptxkit_last_error());
        return 1;
    }
    if (got != 43u * 3u) {
        fprintf(stderr, "pipeline child: finish wrote %llu, expected 129\n", got);
        return 1;
    }
    if (warm && mapped("libnvrtc")) {
        fprintf(stderr, "pipeline child: NVRTC was loaded for a module the disk cache holds\n");
        return 1;
    }
    ptxkit_memory_free(ctx, in);
    ptxkit_memory_free(ctx, out);
    ptxkit_program_destroy(p);
    ptxkit_context_destroy(ctx);
    return 0;
}

static void warm_start(void **state) {
    (void)state;
    char dir[4096] = "";
    if (ptxkit_cache_dir_get(dir, sizeof dir) != PTXKIT_SUCCESS || !dir[0]) {
        print_message("the disk cache is off: no warm start to check\n");
        skip();
    }
    /* the first child fills the disk cache where this process has not */
    test_run_child("--pipeline");
    test_run_child("--pipeline-warm");
}

int main(int argc, char **argv) {
    /* before anything touches CUDA or NVRTC in this process */
    if (argc == 2 && strcmp(argv[1], "--pipeline") == 0) return pipeline_child(false);
    if (argc == 2 && strcmp(argv[1], "--pipeline-warm") == 0) return pipeline_child(true);
    test_require_gpu();
    if (!ptxkit_jit_available()) {
        printf("skipped: NVRTC not available (modules come from source)\n");
        return TEST_SKIP_EXIT;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(variables_every_form),
        cmocka_unit_test(two_kernels_share_a_variable),
        cmocka_unit_test(loaded_image_variables),
        cmocka_unit_test(warm_start),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    ptxkit_program_destroy(variables_program());
    ptxkit_program_destroy(pipeline_program());
    test_gpu_release();
    return failed;
}
