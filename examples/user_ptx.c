/* user_ptx: PTX the application brings, its cache operator chosen at load.
 *
 * The PTX below is the kind NVRTC or nvcc writes (here kept by hand): a
 * gather, out[i] = x[idx[i]] + y[i]. Its two float loads are plain
 * `ld.global.f32`; the index load already says `.cs` (each index is read
 * once). ptxkit_module_load gives every plain global load the operator
 * asked for before the driver JIT-compiles the text, and leaves loads that
 * carry one alone: so one PTX text runs as ld.global.cg, .cs or the
 * read-only .nc path without recompiling anything from source. NVRTC is not
 * needed.
 *
 * Loads the text four times (as given, cg, cs, nc) and checks each run
 * exactly against the CPU. Exit status: 0 right, 1 wrong or an error, 77 no
 * GPU. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ptxkit.h>

static const char gather_ptx[] =
    ".version 7.0\n"
    ".target sm_52\n"
    ".address_size 64\n"
    "\n"
    ".visible .entry gather_add(\n"
    "\t.param .u64 gather_add_param_x,\n"
    "\t.param .u64 gather_add_param_idx,\n"
    "\t.param .u64 gather_add_param_y,\n"
    "\t.param .u64 gather_add_param_out,\n"
    "\t.param .u32 gather_add_param_n\n"
    ")\n"
    "{\n"
    "\t.reg .pred \t%p<2>;\n"
    "\t.reg .b32 \t%r<7>;\n"
    "\t.reg .f32 \t%f<4>;\n"
    "\t.reg .b64 \t%rd<15>;\n"
    "\n"
    "\tld.param.u64 \t%rd1, [gather_add_param_x];\n"
    "\tld.param.u64 \t%rd2, [gather_add_param_idx];\n"
    "\tld.param.u64 \t%rd3, [gather_add_param_y];\n"
    "\tld.param.u64 \t%rd4, [gather_add_param_out];\n"
    "\tld.param.u32 \t%r1, [gather_add_param_n];\n"
    "\tmov.u32 \t%r2, %ctaid.x;\n"
    "\tmov.u32 \t%r3, %ntid.x;\n"
    "\tmov.u32 \t%r4, %tid.x;\n"
    "\tmad.lo.s32 \t%r5, %r2, %r3, %r4;\n"
    "\tsetp.ge.u32 \t%p1, %r5, %r1;\n"
    "\t@%p1 bra \t$L__done;\n"
    "\tcvta.to.global.u64 \t%rd5, %rd2;\n"
    "\tmul.wide.u32 \t%rd6, %r5, 4;\n"
    "\tadd.s64 \t%rd7, %rd5, %rd6;\n"
    "\tld.global.cs.u32 \t%r6, [%rd7];\n" /* has its operator: kept */
    "\tcvta.to.global.u64 \t%rd8, %rd1;\n"
    "\tmul.wide.u32 \t%rd9, %r6, 4;\n"
    "\tadd.s64 \t%rd10, %rd8, %rd9;\n"
    "\tld.global.f32 \t%f1, [%rd10];\n" /* plain: rewritten */
    "\tcvta.to.global.u64 \t%rd11, %rd3;\n"
    "\tadd.s64 \t%rd12, %rd11, %rd6;\n"
    "\tld.global.f32 \t%f2, [%rd12];\n" /* plain: rewritten */
    "\tadd.f32 \t%f3, %f1, %f2;\n"
    "\tcvta.to.global.u64 \t%rd13, %rd4;\n"
    "\tadd.s64 \t%rd14, %rd13, %rd6;\n"
    "\tst.global.f32 \t[%rd14], %f3;\n"
    "$L__done:\n"
    "\tret;\n"
    "}\n";

static int failed(const char *what, ptxkit_status st) {
    fprintf(stderr, "user_ptx: %s: %s: %s\n", what, ptxkit_status_string(st), ptxkit_last_error());
    return 1;
}

int main(void) {
    ptxkit_context *ctx = NULL;
    ptxkit_status st = ptxkit_context_create(0, &ctx);
    if (st == PTXKIT_ERROR_NO_DRIVER || st == PTXKIT_ERROR_NO_DEVICE || st == PTXKIT_ERROR_STUB_DRIVER) {
        printf("skipped: no GPU (%s)\n", ptxkit_last_error());
        return 77;
    }
    if (st != PTXKIT_SUCCESS) return failed("ptxkit_context_create", st);

    /* n outputs gathered from a table of nx values (sizes not powers of two) */
    const unsigned n = 1000003, nx = 65537;
    float *x = malloc(nx * sizeof *x), *y = malloc(n * sizeof *y), *out = malloc(n * sizeof *out);
    unsigned *idx = malloc(n * sizeof *idx);
    if (!x || !y || !out || !idx) return failed("host memory", PTXKIT_ERROR_OUT_OF_MEMORY);
    srand(7);
    /* multiples of 1/16 below 2^12: every sum is exact in float32 */
    for (unsigned i = 0; i < nx; i++) x[i] = (float)(rand() % 65536 - 32768) / 16.0f;
    for (unsigned i = 0; i < n; i++) {
        y[i] = (float)(rand() % 65536 - 32768) / 16.0f;
        idx[i] = (unsigned)rand() % nx;
    }
    ptxkit_dptr d_x = 0, d_idx = 0, d_y = 0, d_out = 0;
    st = ptxkit_memory_alloc(ctx, nx * sizeof *x, &d_x);
    if (st == PTXKIT_SUCCESS) st = ptxkit_memory_alloc(ctx, n * sizeof *idx, &d_idx);
    if (st == PTXKIT_SUCCESS) st = ptxkit_memory_alloc(ctx, n * sizeof *y, &d_y);
    if (st == PTXKIT_SUCCESS) st = ptxkit_memory_alloc(ctx, n * sizeof *out, &d_out);
    if (st == PTXKIT_SUCCESS) st = ptxkit_memory_write(ctx, d_x, x, nx * sizeof *x);
    if (st == PTXKIT_SUCCESS) st = ptxkit_memory_write(ctx, d_idx, idx, n * sizeof *idx);
    if (st == PTXKIT_SUCCESS) st = ptxkit_memory_write(ctx, d_y, y, n * sizeof *y);
    if (st != PTXKIT_SUCCESS) return failed("device buffers", st);

    /* The read-only path is only correct when nothing writes the loaded
     * memory while the kernel runs; ptxkit asks for that promise. */
    ptxkit_module_options unpromised = {.load_op = PTXKIT_LOAD_NC};
    ptxkit_module *refused = NULL;
    if ((st = ptxkit_module_load(ctx, gather_ptx, strlen(gather_ptx), &unpromised, &refused)) !=
        PTXKIT_ERROR_INVALID_ARGUMENT) {
        fprintf(stderr, "user_ptx: nc without read_only gave %s, not invalid argument\n", ptxkit_status_string(st));
        return 1;
    }

    /* x, idx and y are only read by the kernel, and out is a separate
     * buffer: read_only is a true promise, so nc is legal. */
    const ptxkit_module_options loads[] = {
        {.load_op = PTXKIT_LOAD_DEFAULT},
        {.load_op = PTXKIT_LOAD_CG},
        {.load_op = PTXKIT_LOAD_CS},
        {.load_op = PTXKIT_LOAD_NC, .read_only = 1},
    };
    int bad = 0;
    for (size_t k = 0; k < sizeof loads / sizeof loads[0] && !bad; k++) {
        const char *op = ptxkit_load_op_name(loads[k].load_op);
        ptxkit_module *module = NULL;
        ptxkit_kernel *kernel = NULL;
        st = ptxkit_module_load(ctx, gather_ptx, strlen(gather_ptx), &loads[k], &module);
        if (st == PTXKIT_SUCCESS) st = ptxkit_module_kernel_get(module, "gather_add", &kernel);
        if (st != PTXKIT_SUCCESS) return failed(op, st);
        int rewritten = -1, kept = -1;
        ptxkit_module_rewrite_counts_get(module, &rewritten, &kept);
        /* the driver JIT's wall time and info log of this load */
        printf("load op %-7s: %d plain loads given the operator, %d kept; %s\n", op, rewritten, kept,
               ptxkit_kernel_jit_log_get(kernel));
        if (loads[k].load_op != PTXKIT_LOAD_DEFAULT && (rewritten != 2 || kept != 1)) {
            fprintf(stderr, "user_ptx: %s: expected 2 loads rewritten and 1 kept\n", op);
            bad = 1;
            break;
        }

        /* poison, launch, compare every element */
        unsigned grid = (n + 255) / 256, count = n;
        void *args[] = {&d_x, &d_idx, &d_y, &d_out, &count};
        st = ptxkit_memory_set32_async(ctx, d_out, 0xFFFFFFFFu, n, NULL);
        if (st == PTXKIT_SUCCESS)
            st = ptxkit_kernel_launch(kernel, (ptxkit_dim3){grid, 1, 1}, (ptxkit_dim3){256, 1, 1}, 0, NULL, args);
        if (st == PTXKIT_SUCCESS) st = ptxkit_memory_read(ctx, out, d_out, n * sizeof *out);
        if (st != PTXKIT_SUCCESS) return failed(op, st);
        for (unsigned i = 0; i < n && !bad; i++) {
            float want = x[idx[i]] + y[i];
            if (out[i] != want) {
                fprintf(stderr, "user_ptx: %s: out[%u] = %g, expected %g\n", op, i, out[i], want);
                bad = 1;
            }
        }
        if (!bad) printf("load op %-7s: %u results right\n", op, n);
    }

    ptxkit_memory_free(ctx, d_x);
    ptxkit_memory_free(ctx, d_idx);
    ptxkit_memory_free(ctx, d_y);
    ptxkit_memory_free(ctx, d_out);
    ptxkit_context_destroy(ctx);
    free(x);
    free(y);
    free(out);
    free(idx);
    return bad;
}
