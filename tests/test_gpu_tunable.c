/* Tuning the application's kernels through the public tunable API: rules
 * keep illegal points from ever launching, a wrong configuration is never
 * chosen, the choice is stored and read back (also by a fresh tunable), and
 * PTXKIT_TUNE=auto tunes a missing bucket on first use. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ptxkit_tune.h"
#include "test_util.h"

/* out[i] = in[i] * 3 + 1 with ITEMS elements per thread; BROKEN=1 skips
 * the last element of every block, a configuration the check must catch. */
static const char *const source =
    "#include <ptxkit/load.cuh>\n"
    "extern \"C\" __global__ void __launch_bounds__(BLOCK_SIZE)\n"
    "affine(const int *in, int *out, unsigned long long n) {\n"
    "    unsigned long long base = (unsigned long long)blockIdx.x * BLOCK_SIZE * ITEMS + threadIdx.x;\n"
    "#pragma unroll\n"
    "    for (int k = 0; k < ITEMS; k++) {\n"
    "        unsigned long long i = base + (unsigned long long)k * BLOCK_SIZE;\n"
    "        if (BROKEN && k == ITEMS - 1 && threadIdx.x == BLOCK_SIZE - 1) continue;\n"
    "        if (i < n) out[i] = ptxkit::ld_s32(in + i) * 3 + 1;\n"
    "    }\n"
    "}\n";

typedef struct job {
    ptxkit_context *ctx;
    ptxkit_dptr in, out;
    int *host_in, *host_out;
    size_t n;
    int launches, illegal_launches, checks;
} job;

static long long value(const ptxkit_config *c, const char *name) {
    long long v = -1;
    assert_ok(NULL, ptxkit_config_get(c, name, &v));
    return v;
}

static ptxkit_status launch(ptxkit_kernel *k, const ptxkit_config *c, size_t n, ptxkit_stream *stream, void *user) {
    job *j = user;
    long long block = value(c, "BLOCK_SIZE"), items = value(c, "ITEMS");
    j->launches++;
    if (block * items > (long long)n || (block & (block - 1))) j->illegal_launches++;
    unsigned long long count = n;
    unsigned grid = (unsigned)((n + (size_t)(block * items) - 1) / (size_t)(block * items));
    void *args[] = {&j->in, &j->out, &count};
    assert_non_null(k);
    return ptxkit_kernel_launch(k, (ptxkit_dim3){grid, 1, 1}, (ptxkit_dim3){(unsigned)block, 1, 1}, 0, stream, args);
}

static ptxkit_status check(ptxkit_kernel *k, const ptxkit_config *c, size_t n, int *ok, void *user) {
    job *j = user;
    j->checks++;
    ptxkit_status st = ptxkit_memory_set32_async(j->ctx, j->out, 0xDEADBEEFu, n, NULL); /* poison */
    if (st == PTXKIT_SUCCESS) st = launch(k, c, n, NULL, j);
    if (st == PTXKIT_SUCCESS) st = ptxkit_context_synchronize(j->ctx);
    if (st == PTXKIT_SUCCESS) st = ptxkit_memory_read(j->ctx, j->host_out, j->out, n * sizeof(int));
    if (st != PTXKIT_SUCCESS) return st;
    *ok = 1;
    for (size_t i = 0; i < n; i++)
        if (j->host_out[i] != j->host_in[i] * 3 + 1) *ok = 0;
    return PTXKIT_SUCCESS;
}

static double bytes(size_t n, void *user) {
    (void)user;
    return 8.0 * (double)n;
}

static ptxkit_program *program(void) {
    ptxkit_program *p;
    assert_ok(NULL, ptxkit_program_create("affine.cu", source, NULL, 0, &p));
    return p;
}

static ptxkit_tunable *declare(job *j, ptxkit_program *p, const char *key) {
    ptxkit_tunable *t;
    assert_ok(j->ctx, ptxkit_tunable_create(j->ctx, key, &t));
    static const long long blocks[] = {128, 96, 256, 1024}, items[] = {1, 4, 64}, broken[] = {0, 1};
    assert_ok(j->ctx, ptxkit_tunable_add_param(t, "BLOCK_SIZE", blocks, 4));
    assert_ok(j->ctx, ptxkit_tunable_add_param(t, "ITEMS", items, 3));
    assert_ok(j->ctx, ptxkit_tunable_add_param(t, "BROKEN", broken, 2));
    assert_ok(j->ctx, ptxkit_tunable_add_rule(t, PTXKIT_RULE_POWER_OF_TWO, "BLOCK_SIZE", NULL, 0));
    assert_ok(j->ctx, ptxkit_tunable_add_rule(t, PTXKIT_RULE_PRODUCT_AT_MOST_N, "BLOCK_SIZE", "ITEMS", 0));
    assert_ok(j->ctx, ptxkit_tunable_kernel_set(t, p, "affine", NULL, 0));
    assert_ok(j->ctx, ptxkit_tunable_launch_set(t, launch, j));
    assert_ok(j->ctx, ptxkit_tunable_check_set(t, check, j));
    assert_ok(j->ctx, ptxkit_tunable_bytes_set(t, bytes, j));
    return t;
}

static job *job_new(size_t n) {
    job *j = calloc(1, sizeof *j);
    j->ctx = test_gpu();
    j->n = n;
    j->host_in = malloc(n * sizeof(int));
    j->host_out = malloc(n * sizeof(int));
    uint64_t rng = test_seed();
    test_fill_random(j->host_in, n * sizeof(int), &rng);
    assert_ok(j->ctx, ptxkit_memory_alloc(j->ctx, n * sizeof(int), &j->in));
    assert_ok(j->ctx, ptxkit_memory_alloc(j->ctx, n * sizeof(int), &j->out));
    assert_ok(j->ctx, ptxkit_memory_write(j->ctx, j->in, j->host_in, n * sizeof(int)));
    return j;
}

static void job_free(job *j) {
    ptxkit_memory_free(j->ctx, j->in);
    ptxkit_memory_free(j->ctx, j->out);
    free(j->host_in);
    free(j->host_out);
    free(j);
}

static void use_private_database(const char *name) {
    char path[256];
    snprintf(path, sizeof path, "%s/tunable-%s-%d.db", getenv("PTXKIT_CACHE_DIR") ? getenv("PTXKIT_CACHE_DIR") : "/tmp",
             name, (int)getpid());
    unlink(path);
    setenv("PTXKIT_TUNE_DB", path, 1);
    char record[300];
    snprintf(record, sizeof record, "%.*s.record.jsonl", (int)strlen(path) - 3, path);
    unlink(record); /* the tuning record beside it */
}

static void tune_store_and_read_back(void **state) {
    (void)state;
    use_private_database("store");
    unsetenv("PTXKIT_TUNE");
    size_t n = 1000003;
    job *j = job_new(n);
    ptxkit_program *p = program();
    ptxkit_tunable *t = declare(j, p, "test.affine.int32");

    ptxkit_config cv, *c = &cv;
    ptxkit_config_defines_text text;
    int tuned = -1;
    assert_ok(j->ctx, ptxkit_tunable_config_get(t, n, c, &tuned));
    assert_int_equal(tuned, 0); /* nothing stored yet: the first values */
    assert_int_equal(value(c, "BLOCK_SIZE"), 128);
    assert_int_equal(value(c, "ITEMS"), 1);
    assert_string_equal(ptxkit_config_defines_get(c, &text)[0], "BLOCK_SIZE=128");

    ptxkit_tune_report *report = NULL;
    assert_ok(j->ctx, ptxkit_tune_report_create(&report));
    ptxkit_tune_options o = {.exhaustive = 1};
    assert_ok(j->ctx, ptxkit_tunable_tune(t, &n, 1, &o, report));
    assert_int_equal(ptxkit_tune_report_size_count_get(report), 1);
    assert_string_equal(ptxkit_tune_report_family_get(report), "test.affine.int32");
    assert_string_equal(ptxkit_tune_report_variant_get(report), "-");
    const ptxkit_tune_result *r = ptxkit_tune_report_result_get(report, 0);
    assert_null(ptxkit_tune_report_result_get(report, 1));
    /* 3 power-of-two blocks x 3 items x 2 = 18 points; 96 is never legal */
    assert_int_equal(r->legal, 18);
    assert_int_equal(j->illegal_launches, 0);
    assert_int_equal(r->wrong, 9); /* every BROKEN=1 point */
    assert_true(r->best_ms > 0 && r->best_gbs > 0);
    assert_non_null(strstr(r->best_text, "BROKEN=0"));
    assert_true(ptxkit_tune_report_database_get(report)[0] != 0);

    assert_ok(j->ctx, ptxkit_tunable_config_get(t, n, c, &tuned));
    assert_int_equal(tuned, 1);
    assert_int_equal(value(c, "BROKEN"), 0);
    char expect[192];
    snprintf(expect, sizeof expect, "BLOCK_SIZE=%lld ITEMS=%lld BROKEN=0", value(c, "BLOCK_SIZE"), value(c, "ITEMS"));
    assert_string_equal(r->best_text, expect);

    /* the tuned configuration runs and is right */
    ptxkit_kernel *k;
    assert_ok(j->ctx, ptxkit_program_kernel_get(j->ctx, p, "affine", ptxkit_config_defines_get(c, &text), c->count, &k));
    int ok = 0;
    assert_ok(j->ctx, check(k, c, n, &ok, j));
    assert_true(ok);

    /* a new tunable with the same key and space reads the stored choice; a
     * different space ignores it */
    ptxkit_tunable *again = declare(j, p, "test.affine.int32");
    assert_ok(j->ctx, ptxkit_tunable_config_get(again, n + 5, c, &tuned));
    assert_int_equal(tuned, 1);
    ptxkit_tunable *other;
    assert_ok(j->ctx, ptxkit_tunable_create(j->ctx, "test.affine.int32", &other));
    static const long long only[] = {64};
    assert_ok(j->ctx, ptxkit_tunable_add_param(other, "BLOCK_SIZE", only, 1));
    assert_ok(j->ctx, ptxkit_tunable_config_get(other, n, c, &tuned));
    assert_int_equal(tuned, 0);
    assert_int_equal(value(c, "BLOCK_SIZE"), 64);

    ptxkit_tunable_destroy(other);
    ptxkit_tunable_destroy(again);
    ptxkit_tunable_destroy(t);
    ptxkit_program_destroy(p);
    ptxkit_tune_report_destroy(report);
    job_free(j);
}

/* The tuning record: a second tuning of the same kernel takes every
 * configuration the first measured (timings and wrong results) from it,
 * checks and times none of them, and chooses the same; an edited kernel
 * (its source, or a fixed define) is measured afresh. */
static int tune_exhaustive(job *j, ptxkit_program *p, const char *const *fixed, int fixed_count, size_t n,
                           ptxkit_tune_result *out) {
    ptxkit_tunable *t = declare(j, p, "test.affine.record");
    if (fixed_count) assert_ok(j->ctx, ptxkit_tunable_kernel_set(t, p, "affine", fixed, fixed_count));
    ptxkit_tune_report *report = NULL;
    assert_ok(j->ctx, ptxkit_tune_report_create(&report));
    ptxkit_tune_options o = {.exhaustive = 1};
    j->checks = 0;
    assert_ok(j->ctx, ptxkit_tunable_tune(t, &n, 1, &o, report));
    *out = *ptxkit_tune_report_result_get(report, 0);
    print_message("record: %d timed, %d reused, %d wrong, %d checks; %s\n", out->timed, out->reused, out->wrong,
                  j->checks, out->best_text);
    ptxkit_tune_report_destroy(report);
    ptxkit_tunable_destroy(t);
    return j->checks;
}

static void record_follows_the_code(void **state) {
    (void)state;
    use_private_database("record");
    unsetenv("PTXKIT_TUNE");
    unsetenv("PTXKIT_TUNE_RECORD");
    size_t n = (size_t)1 << 16;
    job *j = job_new(n);
    ptxkit_program *p = program();
    ptxkit_tune_result first, second, edited, defined;
    tune_exhaustive(j, p, NULL, 0, n, &first);
    assert_int_equal(first.reused, 0);
    assert_int_equal(first.timed + first.wrong, first.legal);
    assert_int_equal(tune_exhaustive(j, p, NULL, 0, n, &second), 0); /* nothing checked again */
    assert_int_equal(second.reused, first.legal);
    assert_int_equal(second.timed, 0);
    assert_int_equal(second.wrong, first.wrong);
    assert_non_null(strstr(second.best_text, "BROKEN=0"));

    /* the same kernel with a comment more: its own code, measured again */
    char *changed = malloc(strlen(source) + 64);
    sprintf(changed, "// edited\n%s", source);
    ptxkit_program *q;
    assert_ok(NULL, ptxkit_program_create("affine.cu", changed, NULL, 0, &q));
    assert_true(tune_exhaustive(j, q, NULL, 0, n, &edited) > 0);
    assert_int_equal(edited.reused, 0);
    assert_int_equal(edited.timed + edited.wrong, edited.legal);
    const char *fixed[] = {"UNUSED_FLAG=1"};
    tune_exhaustive(j, p, fixed, 1, n, &defined);
    assert_int_equal(defined.reused, 0);
    /* and another size is another problem */
    ptxkit_tune_result other;
    tune_exhaustive(j, p, NULL, 0, n / 2, &other);
    assert_int_equal(other.reused, 0);
    free(changed);
    ptxkit_program_destroy(q);
    ptxkit_program_destroy(p);
    job_free(j);
}

static void auto_tunes_on_first_use(void **state) {
    (void)state;
    /* the context keeps the database it loaded first (the previous test's) */
    setenv("PTXKIT_TUNE", "auto", 1);
    setenv("PTXKIT_TUNE_BUDGET", "3", 1);
    size_t n = (size_t)1 << 17;
    job *j = job_new(n);
    ptxkit_program *p = program();
    ptxkit_tunable *t = declare(j, p, "test.affine.auto");
    ptxkit_config cv, *c = &cv;
    int tuned = 0;
    assert_ok(j->ctx, ptxkit_tunable_config_get(t, n, c, &tuned));
    assert_int_equal(tuned, 1);
    assert_true(j->launches > 0);
    assert_int_equal(value(c, "BROKEN"), 0);
    int before = j->launches;
    assert_ok(j->ctx, ptxkit_tunable_config_get(t, n, c, &tuned)); /* now stored: no second tuning */
    assert_int_equal(j->launches, before);
    unsetenv("PTXKIT_TUNE");
    unsetenv("PTXKIT_TUNE_BUDGET");
    ptxkit_tunable_destroy(t);
    ptxkit_program_destroy(p);
    job_free(j);
}

static void bad_declarations(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    ptxkit_tunable *t;
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_tunable_create(ctx, "bad key!", &t));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_tunable_create(ctx, "copy", &t)); /* a family's name */
    assert_ok(ctx, ptxkit_tunable_create(ctx, "test.bad", &t));
    static const long long v[] = {1, 2, 2};
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_tunable_add_param(t, "X", v, 3)); /* repeated value */
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_tunable_add_param(t, "1X", v, 2));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_tunable_add_param(t, "X", v, 0));
    assert_ok(ctx, ptxkit_tunable_add_param(t, "X", v, 2));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_tunable_add_param(t, "X", v, 2)); /* twice */
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_tunable_add_rule(t, PTXKIT_RULE_DIVIDES, "X", "Y", 0));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_tunable_add_rule(t, (ptxkit_tune_rule)99, "X", NULL, 0));
    size_t n = 1024;
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_tunable_tune(t, &n, 1, NULL, NULL)); /* no launch */
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_tunable_config_get(t, n, NULL, NULL));
    ptxkit_tunable_destroy(t);
}

int main(void) {
    test_require_gpu();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(bad_declarations),
        cmocka_unit_test(tune_store_and_read_back),
        cmocka_unit_test(record_follows_the_code),
        cmocka_unit_test(auto_tunes_on_first_use),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    test_gpu_release();
    return failed;
}
