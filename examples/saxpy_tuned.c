/* saxpy_tuned: a kernel of your own, written as CUDA C++ in a string, whose
 * block size, items per thread and load cache operator are injected as
 * defines and chosen for this GPU by ptxkit's tuner.
 *
 *   saxpy_tuned           runs with the tuned configuration (the defaults
 *                         until something was tuned)
 *   saxpy_tuned --tune    tunes first (a few seconds), saves the winner in
 *                         the tuning database, then runs with it
 *
 * Computes out = a * x + y for several sizes and checks every element
 * against the CPU. Exit status: 0 right, 1 wrong or an error, 77 no GPU (or
 * no NVRTC to compile with). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ptxkit.h>
#include <ptxkit_tune.h>

/* BLOCK_SIZE, ITEMS_PER_THREAD and LOAD_OP are not defined here: they arrive
 * as -D defines, one compiled kernel per combination, so the loops below
 * unroll as if they were template arguments. ptxkit::ld_f32 (ptxkit/load.cuh)
 * loads with the cache operator LOAD_OP names. x and y are only read while
 * the kernel runs, so even the read-only path (LOAD_OP 6) would be legal. */
static const char saxpy_source[] =
    "#include <ptxkit/load.cuh>\n"
    "\n"
    "extern \"C\" __global__ void __launch_bounds__(BLOCK_SIZE)\n"
    "saxpy(float a, const float *x, const float *y, float *out, unsigned long long n) {\n"
    "    const unsigned long long tile = (unsigned long long)BLOCK_SIZE * ITEMS_PER_THREAD;\n"
    "    /* grid-stride over tiles: any grid covers any n */\n"
    "    for (unsigned long long base = blockIdx.x * tile + threadIdx.x; base < n; base += gridDim.x * tile) {\n"
    "#pragma unroll\n"
    "        for (int i = 0; i < ITEMS_PER_THREAD; i++) {\n"
    "            unsigned long long j = base + (unsigned long long)i * BLOCK_SIZE;\n"
    "            if (j < n) out[j] = a * ptxkit::ld_f32(x + j) + ptxkit::ld_f32(y + j);\n"
    "        }\n"
    "    }\n"
    "}\n";

/* What the launch and check callbacks need: the buffers, sized for the
 * largest n, and the inputs on the host for the reference. */
typedef struct saxpy_problem {
    ptxkit_context *ctx;
    ptxkit_dptr x, y, out;
    float a;
    const float *host_x, *host_y;
    float *host_out;
} saxpy_problem;

/* Poisons the output (all bits set: a NaN) so that a result can only pass
 * the check if the last launch wrote it. */
static ptxkit_status poison_output(saxpy_problem *p, size_t n) {
    return ptxkit_memory_set32_async(p->ctx, p->out, 0xFFFFFFFFu, n, NULL);
}

/* The tuner calls this for each configuration it times; main calls it too,
 * so the tuned launch and the real one are the same code. */
static ptxkit_status launch_saxpy(ptxkit_kernel *kernel, const ptxkit_config *config, size_t n, ptxkit_stream *stream,
                                  void *user) {
    saxpy_problem *p = user;
    long long block = 0, items = 0;
    ptxkit_status st = ptxkit_config_get(config, "BLOCK_SIZE", &block);
    if (st == PTXKIT_SUCCESS) st = ptxkit_config_get(config, "ITEMS_PER_THREAD", &items);
    if (st != PTXKIT_SUCCESS || n == 0) return st; /* a grid of 0 blocks is not a launch */
    /* enough blocks to fill the GPU once (occupancy x SMs), never more than
     * there are tiles */
    size_t tile = (size_t)block * (size_t)items, tiles = (n + tile - 1) / tile;
    unsigned grid = 0;
    if ((st = ptxkit_kernel_grid_size_get(kernel, (int)block, 0, tiles, &grid)) != PTXKIT_SUCCESS) return st;
    unsigned long long n64 = n;
    void *args[] = {&p->a, &p->x, &p->y, &p->out, &n64};
    return ptxkit_kernel_launch(kernel, (ptxkit_dim3){grid, 1, 1}, (ptxkit_dim3){(unsigned)block, 1, 1}, 0, stream, args);
}

/* out against a float64 reference. A GPU may fuse a * x + y into one fma
 * (one rounding), the CPU rounds twice: both are within 2^-22 of
 * |a x| + |y| from the exact value. */
/* Compares out with a float64 a*x + y within one float rounding of each
 * term (the kernel may fuse the multiply and add). */
static ptxkit_status compare_output(saxpy_problem *p, size_t n, int *ok) {
    ptxkit_status st = ptxkit_memory_read(p->ctx, p->host_out, p->out, n * sizeof(float));
    if (st != PTXKIT_SUCCESS) return st;
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) {
        double ax = (double)p->a * p->host_x[i], want = ax + p->host_y[i];
        double tolerance = ldexp(fabs(ax) + fabs(p->host_y[i]), -22);
        if (!(fabs(p->host_out[i] - want) <= tolerance) && bad++ == 0)
            fprintf(stderr, "saxpy: n = %zu, out[%zu] = %.9g, expected %.9g\n", n, i, p->host_out[i], want);
    }
    *ok = bad == 0;
    return PTXKIT_SUCCESS;
}

/* The tuner's check: poison the output, run the configuration once, wait,
 * compare. A configuration that skips part of the output fails. */
static ptxkit_status check_saxpy(ptxkit_kernel *kernel, const ptxkit_config *config, size_t n, int *ok, void *user) {
    saxpy_problem *p = user;
    *ok = 0;
    if (n == 0) {
        *ok = 1;
        return PTXKIT_SUCCESS;
    }
    ptxkit_status st = poison_output(p, n);
    if (st == PTXKIT_SUCCESS) st = launch_saxpy(kernel, config, n, NULL, p);
    if (st == PTXKIT_SUCCESS) st = ptxkit_context_synchronize(p->ctx);
    return st == PTXKIT_SUCCESS ? compare_output(p, n, ok) : st;
}

static double bytes_moved(size_t n, void *user) {
    (void)user;
    return 3.0 * sizeof(float) * (double)n; /* read x and y, write out */
}

static int failed(const char *what, ptxkit_status st) {
    fprintf(stderr, "saxpy_tuned: %s: %s: %s\n", what, ptxkit_status_string(st), ptxkit_last_error());
    return 1;
}

/* Declares the parameter space: each parameter's first value is its
 * default, the rules prune configurations before anything is compiled. */
static ptxkit_status declare(ptxkit_tunable *t, ptxkit_program *program, saxpy_problem *problem) {
    static const long long blocks[] = {256, 64, 128, 512, 1024};
    static const long long items[] = {4, 1, 2, 8, 16};
    /* default (the compiler's choice), cg (L2 only), cs (streaming) */
    static const long long load_ops[] = {PTXKIT_LOAD_DEFAULT, PTXKIT_LOAD_CG, PTXKIT_LOAD_CS};
    ptxkit_status st = ptxkit_tunable_add_param(t, "BLOCK_SIZE", blocks, 5);
    if (st == PTXKIT_SUCCESS) st = ptxkit_tunable_add_param(t, "ITEMS_PER_THREAD", items, 5);
    if (st == PTXKIT_SUCCESS) st = ptxkit_tunable_add_param(t, "LOAD_OP", load_ops, 3);
    if (st == PTXKIT_SUCCESS) st = ptxkit_tunable_add_rule(t, PTXKIT_RULE_POWER_OF_TWO, "BLOCK_SIZE", NULL, 0);
    if (st == PTXKIT_SUCCESS) st = ptxkit_tunable_add_rule(t, PTXKIT_RULE_POWER_OF_TWO, "ITEMS_PER_THREAD", NULL, 0);
    /* one tile of work at least: a bigger tile leaves threads idle */
    if (st == PTXKIT_SUCCESS)
        st = ptxkit_tunable_add_rule(t, PTXKIT_RULE_PRODUCT_AT_MOST_N, "BLOCK_SIZE", "ITEMS_PER_THREAD", 0);
    if (st == PTXKIT_SUCCESS) st = ptxkit_tunable_add_rule(t, PTXKIT_RULE_MAX_THREADS, "BLOCK_SIZE", NULL, 0);
    /* the tuner compiles each configuration's kernel ahead, in parallel */
    if (st == PTXKIT_SUCCESS) st = ptxkit_tunable_kernel_set(t, program, "saxpy", NULL, 0);
    if (st == PTXKIT_SUCCESS) st = ptxkit_tunable_launch_set(t, launch_saxpy, problem);
    if (st == PTXKIT_SUCCESS) st = ptxkit_tunable_check_set(t, check_saxpy, problem);
    if (st == PTXKIT_SUCCESS) st = ptxkit_tunable_bytes_set(t, bytes_moved, NULL);
    return st;
}

/* Runs saxpy at size n with the configuration the database holds for n's
 * size bucket (the defaults when none) and checks the result: 0 right, 1
 * wrong or failed, 77 nothing to compile with. */
static int run_checked(ptxkit_context *ctx, ptxkit_tunable *t, ptxkit_program *program, saxpy_problem *problem,
                       size_t n) {
    ptxkit_config config;
    int tuned = 0;
    ptxkit_status st = ptxkit_tunable_config_get(t, n, &config, &tuned);
    if (st != PTXKIT_SUCCESS) return failed("ptxkit_tunable_config_get", st);
    ptxkit_config_defines_text text;
    const char *const *defines = ptxkit_config_defines_get(&config, &text);
    char shown[256] = "";
    for (int i = 0, used = 0; i < config.count && used < (int)sizeof shown; i++)
        used += snprintf(shown + used, sizeof shown - (size_t)used, " %s", defines[i]);
    ptxkit_kernel *kernel = NULL;
    st = ptxkit_program_kernel_get(ctx, program, "saxpy", defines, config.count, &kernel);
    if (st == PTXKIT_ERROR_NO_NVRTC) {
        printf("skipped: %s\n", ptxkit_last_error()); /* not in the disk cache, and nothing to compile it with */
        return 77;
    }
    if (st != PTXKIT_SUCCESS) return failed("ptxkit_program_kernel_get", st);
    int ok = 0;
    if ((st = check_saxpy(kernel, &config, n, &ok, problem)) != PTXKIT_SUCCESS) return failed("saxpy", st);
    printf("n = %9zu: %s (%s)%s\n", n, ok ? "right" : "WRONG", tuned ? "tuned" : "defaults", shown);
    return ok ? 0 : 1;
}

int main(int argc, char **argv) {
    int tune = argc == 2 && strcmp(argv[1], "--tune") == 0;
    if (argc > 2 || (argc == 2 && !tune)) {
        fprintf(stderr, "usage: saxpy_tuned [--tune]\n");
        return 2;
    }
    ptxkit_context *ctx = NULL;
    ptxkit_status st = ptxkit_context_create(0, &ctx);
    if (st == PTXKIT_ERROR_NO_DRIVER || st == PTXKIT_ERROR_NO_DEVICE || st == PTXKIT_ERROR_STUB_DRIVER) {
        printf("skipped: no GPU (%s)\n", ptxkit_last_error());
        return 77;
    }
    if (st != PTXKIT_SUCCESS) return failed("ptxkit_context_create", st);

    /* The largest size: not a power of two, so the last tile is partial. */
    const size_t n_max = ((size_t)1 << 24) + 3;
    float *host_x = malloc(n_max * sizeof(float)), *host_y = malloc(n_max * sizeof(float));
    float *host_out = malloc(n_max * sizeof(float));
    saxpy_problem problem = {.ctx = ctx, .a = 1.75f, .host_x = host_x, .host_y = host_y, .host_out = host_out};
    if (!host_x || !host_y || !host_out) return failed("host memory", PTXKIT_ERROR_OUT_OF_MEMORY);
    srand(12345);
    for (size_t i = 0; i < n_max; i++) {
        host_x[i] = (float)rand() / RAND_MAX * 2.0f - 1.0f;
        host_y[i] = (float)rand() / RAND_MAX * 2.0f - 1.0f;
    }
    st = ptxkit_memory_alloc(ctx, n_max * sizeof(float), &problem.x);
    if (st == PTXKIT_SUCCESS) st = ptxkit_memory_alloc(ctx, n_max * sizeof(float), &problem.y);
    if (st == PTXKIT_SUCCESS) st = ptxkit_memory_alloc(ctx, n_max * sizeof(float), &problem.out);
    if (st == PTXKIT_SUCCESS) st = ptxkit_memory_write(ctx, problem.x, host_x, n_max * sizeof(float));
    if (st == PTXKIT_SUCCESS) st = ptxkit_memory_write(ctx, problem.y, host_y, n_max * sizeof(float));
    if (st == PTXKIT_SUCCESS) st = poison_output(&problem, n_max);
    if (st != PTXKIT_SUCCESS) return failed("device buffers", st);

    /* A program is text: nothing is compiled until a kernel is asked for. */
    ptxkit_program *program = NULL;
    if ((st = ptxkit_program_create("saxpy.cu", saxpy_source, NULL, 0, &program)) != PTXKIT_SUCCESS)
        return failed("ptxkit_program_create", st);
    ptxkit_tunable *tunable = NULL;
    st = ptxkit_tunable_create(ctx, "example.saxpy.float32", &tunable);
    if (st == PTXKIT_SUCCESS) st = declare(tunable, program, &problem);
    if (st != PTXKIT_SUCCESS) return failed("declaring the tunable", st);

    if (tune) {
        /* A small budget: the tuner samples the space rather than timing all
         * 75 configurations; `ptxkit_tune_options.exhaustive` times them all. */
        ptxkit_tune_options options = {.budget_s = 8};
        ptxkit_tune_report *report = NULL;
        st = ptxkit_tune_report_create(&report);
        if (st == PTXKIT_SUCCESS) st = ptxkit_tunable_tune(tunable, &n_max, 1, &options, report);
        if (st == PTXKIT_ERROR_NO_NVRTC) {
            printf("skipped: %s\n", ptxkit_last_error());
            return 77;
        }
        if (st != PTXKIT_SUCCESS) return failed("ptxkit_tunable_tune", st);
        const ptxkit_tune_result *r = ptxkit_tune_report_result_get(report, 0);
        const char *db = ptxkit_tune_report_database_get(report), *note = ptxkit_tune_report_database_note_get(report);
        printf("tuned n = %zu in %.1f s: %d legal, %d timed, %d from the tuning record, %d failed, %d wrong; best %.0f GB/s, defaults %.0f GB/s\n",
               r->n, ptxkit_tune_report_seconds_get(report), r->legal, r->timed, r->reused, r->failed, r->wrong, r->best_gbs,
               r->default_gbs);
        printf("saved to %s%s%s\n", db[0] ? db : "(nowhere)", note[0] ? ": " : "", note);
        if (r->wrong) {
            fprintf(stderr, "saxpy_tuned: %d configurations computed a wrong result: %s\n", r->wrong, r->note);
            ptxkit_tune_report_destroy(report);
            return 1;
        }
        ptxkit_tune_report_destroy(report);
    }

    /* awkward sizes: one element, a prime, 2^k + 1, and the tuned size */
    const size_t sizes[] = {1, 97, 4097, 65537, n_max};
    int bad = 0;
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0] && !bad; i++)
        bad = run_checked(ctx, tunable, program, &problem, sizes[i]);

    ptxkit_tunable_destroy(tunable);
    ptxkit_program_destroy(program);
    ptxkit_memory_free(ctx, problem.x);
    ptxkit_memory_free(ctx, problem.y);
    ptxkit_memory_free(ctx, problem.out);
    ptxkit_context_destroy(ctx);
    free(host_x);
    free(host_y);
    free(host_out);
    if (!bad) printf("saxpy_tuned: all results right\n");
    return bad;
}
