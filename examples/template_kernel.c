/* template_kernel: a real C++ template kernel, instantiated by name.
 *
 * The kernel's block size and element type are template arguments; ptxkit
 * hands NVRTC the name expression ("scale<256, float>"), NVRTC instantiates
 * it and reports the mangled name, which ptxkit looks up in the compiled
 * module (and remembers in the disk cache, so a later process does not need
 * NVRTC to find it). The source includes a header of the application's own,
 * given by name with ptxkit_header, and still takes a -D define.
 *
 * out[i] = in[i] * factor + SCALE_OFFSET, for float and double at several
 * sizes, checked exactly against the CPU. Exit status: 0 right, 1 wrong or
 * an error, 77 no GPU (or no NVRTC to compile with). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ptxkit.h>

/* Included by the program as "scale/offset.h": NVRTC sees it under that
 * name, and a compile error inside it is reported as scale/offset.h(LINE). */
static const char offset_header[] =
    "#pragma once\n"
    "// SCALE_OFFSET is injected as a define by the application.\n"
    "template <typename T> __device__ __forceinline__ T scale_offset() { return T(SCALE_OFFSET); }\n";

static const char scale_source[] =
    "#include \"scale/offset.h\"\n"
    "\n"
    "template <int BLOCK, typename T>\n"
    "__global__ void __launch_bounds__(BLOCK) scale(const T *in, T *out, T factor, unsigned long long n) {\n"
    "    unsigned long long i = (unsigned long long)blockIdx.x * BLOCK + threadIdx.x;\n"
    "    if (i < n) out[i] = in[i] * factor + scale_offset<T>();\n"
    "}\n";

/* The offset the host checks against, and the define that hands it to the
 * kernel: one number, so they cannot disagree. */
#define SCALE_OFFSET 3
#define STRINGIFY_(x) #x
#define STRINGIFY(x) STRINGIFY_(x)

/* One instantiation: its name expression and what the host must match. */
typedef struct instance {
    const char *expression;
    unsigned block;          /* the BLOCK template argument */
    int is_double;           /* T */
    double factor;           /* a power of two: in * factor is exact, so the
                                GPU's fma and the CPU's multiply-add agree */
} instance;

static int failed(const char *what, ptxkit_status st) {
    fprintf(stderr, "template_kernel: %s: %s: %s\n", what, ptxkit_status_string(st), ptxkit_last_error());
    return 1;
}

/* Runs one instantiation at size n and compares every element. */
static int run(ptxkit_context *ctx, ptxkit_kernel *kernel, const instance *in, size_t n) {
    size_t size = in->is_double ? sizeof(double) : sizeof(float), bytes = n * size;
    unsigned char *host_in = malloc(bytes + 1), *host_out = malloc(bytes + 1);
    ptxkit_dptr d_in = 0, d_out = 0;
    ptxkit_status st = host_in && host_out ? PTXKIT_SUCCESS : PTXKIT_ERROR_OUT_OF_MEMORY;
    /* inputs: multiples of 1/64 in [-512, 512), exact in either type */
    for (size_t i = 0; i < n; i++) {
        double v = (double)(rand() % 65536 - 32768) / 64.0;
        if (in->is_double) ((double *)host_in)[i] = v;
        else ((float *)host_in)[i] = (float)v;
    }
    if (st == PTXKIT_SUCCESS) st = ptxkit_memory_alloc(ctx, bytes + 1, &d_in);
    if (st == PTXKIT_SUCCESS) st = ptxkit_memory_alloc(ctx, bytes + 1, &d_out);
    if (st == PTXKIT_SUCCESS) st = ptxkit_memory_write(ctx, d_in, host_in, bytes);
    if (st == PTXKIT_SUCCESS) st = ptxkit_memory_set8_async(ctx, d_out, 0xFF, bytes + 1, NULL); /* poison: NaNs */
    unsigned long long n64 = n;
    float factor32 = (float)in->factor;
    double factor64 = in->factor;
    /* each argument's address, in the kernel's parameter order; the factor
     * has the template's type */
    void *args[] = {&d_in, &d_out, in->is_double ? (void *)&factor64 : (void *)&factor32, &n64};
    unsigned grid = (unsigned)((n + in->block - 1) / in->block);
    if (st == PTXKIT_SUCCESS && n > 0)
        st = ptxkit_kernel_launch(kernel, (ptxkit_dim3){grid, 1, 1}, (ptxkit_dim3){in->block, 1, 1}, 0, NULL, args);
    if (st == PTXKIT_SUCCESS) st = ptxkit_memory_read(ctx, host_out, d_out, bytes + 1);
    int bad = st != PTXKIT_SUCCESS;
    if (bad) failed(in->expression, st);
    for (size_t i = 0; !bad && i < n; i++) {
        double got, want;
        if (in->is_double) {
            got = ((double *)host_out)[i];
            want = ((double *)host_in)[i] * in->factor + SCALE_OFFSET;
        } else {
            got = ((float *)host_out)[i];
            want = (float)(((float *)host_in)[i] * factor32 + (float)SCALE_OFFSET);
        }
        if (got != want) {
            fprintf(stderr, "template_kernel: %s, n = %zu: out[%zu] = %.17g, expected %.17g\n", in->expression, n, i, got,
                    want);
            bad = 1;
        }
    }
    /* the byte past the end must still hold the poison */
    if (!bad && host_out[bytes] != 0xFF) {
        fprintf(stderr, "template_kernel: %s, n = %zu: wrote past the end\n", in->expression, n);
        bad = 1;
    }
    ptxkit_memory_free(ctx, d_in);
    ptxkit_memory_free(ctx, d_out);
    free(host_in);
    free(host_out);
    return bad;
}

int main(void) {
    ptxkit_context *ctx = NULL;
    ptxkit_status st = ptxkit_context_create(0, &ctx);
    if (st == PTXKIT_ERROR_NO_DRIVER || st == PTXKIT_ERROR_NO_DEVICE || st == PTXKIT_ERROR_STUB_DRIVER) {
        printf("skipped: no GPU (%s)\n", ptxkit_last_error());
        return 77;
    }
    if (st != PTXKIT_SUCCESS) return failed("ptxkit_context_create", st);

    const ptxkit_header headers[] = {{"scale/offset.h", offset_header}};
    ptxkit_program *program = NULL;
    if ((st = ptxkit_program_create("scale.cu", scale_source, headers, 1, &program)) != PTXKIT_SUCCESS)
        return failed("ptxkit_program_create", st);

    /* The define is a plain macro, the template arguments come from the
     * name; both are part of the kernel's identity in the caches. */
    const char *defines[] = {"SCALE_OFFSET=" STRINGIFY(SCALE_OFFSET)};
    const instance instances[] = {
        {"scale<256, float>", 256, 0, 0.5},
        {"scale<128, double>", 128, 1, 0.25},
    };
    const size_t sizes[] = {1, 127, 129, 1000, 100003};
    int bad = 0;
    srand(2024);
    for (size_t k = 0; k < sizeof instances / sizeof instances[0] && !bad; k++) {
        ptxkit_kernel *kernel = NULL;
        st = ptxkit_program_kernel_get(ctx, program, instances[k].expression, defines, 1, &kernel);
        if (st == PTXKIT_ERROR_NO_NVRTC) {
            printf("skipped: %s\n", ptxkit_last_error());
            return 77;
        }
        if (st != PTXKIT_SUCCESS) return failed(instances[k].expression, st);
        for (size_t i = 0; i < sizeof sizes / sizeof sizes[0] && !bad; i++) bad = run(ctx, kernel, &instances[k], sizes[i]);
        if (!bad) printf("%-20s right at %zu sizes\n", instances[k].expression, sizeof sizes / sizeof sizes[0]);
    }
    ptxkit_program_destroy(program);
    ptxkit_context_destroy(ctx);
    return bad;
}
