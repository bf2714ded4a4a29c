/* GPU tests of the tuner: argument checks, small tuning runs of copy and
 * reduce that save to a private database, dispatch reading it (the ops'
 * results stay exact with tuned options, and a planted slow configuration
 * is really used), PTXKIT_TUNE=off|cached|auto, a corrupt database on a live
 * context, ptxkit_reduce following database changes, modes and the tuner's
 * guard through its per-context launch cache, transpose's tuning and
 * dispatch, and tune_measure. Every run uses its own PTXKIT_TUNE_DB. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ptxkit_ops.h"
#include "ptxkit_tune.h"
#include "family.h"
#include "reduce/reduce.h"
#include "transpose/transpose.h"
#include "test_util.h"
#include "tuned/db.h"
#include "tune/params.h"
#include "tune/record.h"
#include "tune/tuner.h"

static char db_dir[256];
static int db_counter;

/* A fresh database path for the next test, set in PTXKIT_TUNE_DB, and the
 * context's loaded state forgotten. */
static void fresh_db(char *path, size_t size) {
    snprintf(path, size, "%s/t%d/tune.db", db_dir, db_counter++);
    setenv("PTXKIT_TUNE_DB", path, 1);
    tune_state_reset(test_gpu());
}

static double wall_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void test_arguments(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    ptxkit_tune_options o = {0};
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_tune(NULL, "copy", NULL, 1024, 1024, NULL, NULL));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_tune(ctx, NULL, NULL, 1024, 1024, NULL, NULL));
    assert_status(PTXKIT_ERROR_NOT_FOUND, ptxkit_tune(ctx, "nosuchfamily", NULL, 1024, 1024, NULL, NULL));
    assert_non_null(strstr(ptxkit_last_error(), "nosuchfamily"));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_tune(ctx, "reduce", "sum.float16", 1024, 1024, NULL, NULL));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_tune(ctx, "reduce", "and.float32", 1024, 1024, NULL, NULL));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_tune(ctx, "copy", "words", 1024, 1024, NULL, NULL));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_tune(ctx, "copy", NULL, 0, 1024, NULL, NULL));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_tune(ctx, "copy", NULL, 4096, 1024, NULL, NULL));
    assert_status(PTXKIT_ERROR_OVERFLOW, ptxkit_tune(ctx, "reduce", NULL, 1, SIZE_MAX / 2, NULL, NULL));
    o.budget_s = -1;
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_tune(ctx, "copy", NULL, 1024, 1024, &o, NULL));
    o.budget_s = NAN;
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_tune(ctx, "copy", NULL, 1024, 1024, &o, NULL));
    o = (ptxkit_tune_options){.size_step = 64};
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_tune(ctx, "copy", NULL, 1024, 1024, &o, NULL));
    o = (ptxkit_tune_options){.max_variants = -1};
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_tune(ctx, "copy", NULL, 1024, 1024, &o, NULL));
    tune_config c = {256, 4, 16, 0, 0};
    tune_measured g;
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, tune_measure(ctx, "copy", NULL, 0, &c, 1, &g, NULL, NULL, NULL));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, tune_measure(ctx, "copy", NULL, 1024, NULL, 1, &g, NULL, NULL, NULL));
    assert_status(PTXKIT_ERROR_NOT_FOUND, tune_measure(ctx, "nope", NULL, 1024, &c, 1, &g, NULL, NULL, NULL));
}

typedef struct progress_log {
    int calls;
    bool saw_compile, saw_retime;
    double last_elapsed;
    bool monotonic;
} progress_log;

static void log_progress(const ptxkit_tune_progress *p, void *user) {
    progress_log *log = user;
    log->calls++;
    if (strcmp(p->phase, "compile") == 0) log->saw_compile = true;
    if (strcmp(p->phase, "retime") == 0) log->saw_retime = true;
    if (p->elapsed_s + 1e-9 < log->last_elapsed) log->monotonic = false;
    log->last_elapsed = p->elapsed_s;
    assert_non_null(p->family);
    assert_non_null(p->variant);
    assert_true(p->size_index < p->size_count);
}

/* The saved entry of (family, variant, bucket) for this GPU, or fails. */
static tune_db_entry saved_entry(const char *path, const char *family, const char *variant, int bucket) {
    tune_db db;
    tune_db_init(&db);
    char msg[640];
    assert_status(PTXKIT_SUCCESS, tune_db_load(path, &db, msg, sizeof msg));
    tune_db_key key;
    tune_db_key_for(test_gpu(), &key);
    const tune_db_entry *e = tune_db_find(&db, &key, family, variant, bucket, 0);
    if (!e) fail_msg("no saved entry for %s %s 2^%d in %s (%s)", family, variant, bucket, path, msg);
    tune_db_entry copy = *e;
    tune_db_clear(&db);
    return copy;
}

static void check_result(const ptxkit_tune_result *r) {
    print_message("  n=%zu: default %.0f GB/s, tuned %.0f GB/s, %d timed of %d legal, %d failed, %d wrong, %.1f s %s\n",
                  r->n, r->default_gbs, r->best_gbs, r->timed, r->legal, r->failed, r->wrong, r->seconds, r->note);
    assert_true(r->default_gbs > 0);
    assert_true(r->best_gbs > 0);
    assert_true(r->legal > 0);
    assert_true(r->timed > 0);
    assert_int_equal(r->wrong, 0); /* a wrong variant is a kernel bug */
    assert_true(r->exhaustive_gbs == 0); /* not asked for */
    long long path = -1;
    assert_int_equal(ptxkit_config_get(&r->best, "path", &path), PTXKIT_SUCCESS);
    assert_int_equal(path, PTXKIT_PATH_JIT); /* tuned values are JIT constants */
}

/* The database entry saved is the result's choice: the entry's fields as
 * the op names them are the result's configuration. */
static void assert_saved_best(const char *family, const tune_db_entry *e, const ptxkit_config *best) {
    const family_desc *f = family_find(family);
    assert_non_null(f);
    assert_non_null(f->public_config);
    launch_options o = tune_config_options(&e->config);
    ptxkit_config want;
    f->public_config(&o, &want);
    assert_int_equal(want.count, best->count);
    for (int i = 0; i < want.count; i++) {
        assert_string_equal(want.params[i].name, best->params[i].name);
        assert_true(want.params[i].value == best->params[i].value);
    }
}

/* ---- copy -------------------------------------------------------------- */

static void copy_check_awkward(ptxkit_context *ctx) {
    uint64_t rng = test_seed();
    size_t max = (1u << 22) + 64;
    unsigned char *host = malloc(max), *back = malloc(max);
    ptxkit_dptr src, dst;
    assert_ok(ctx, ptxkit_memory_alloc(ctx, max, &src));
    assert_ok(ctx, ptxkit_memory_alloc(ctx, max, &dst));
    test_fill_random(host, max, &rng);
    assert_ok(ctx, ptxkit_memory_write(ctx, src, host, max));
    for (size_t i = 0; i < test_awkward_size_count; i++) {
        size_t n = test_awkward_sizes[i];
        for (int shift = 0; shift < 3; shift++) {
            size_t so = shift == 0 ? 0 : shift == 1 ? 4 : 3, doff = shift == 2 ? 7 : so;
            if (n + 16 > max) continue;
            assert_ok(ctx, ptxkit_memory_set8_async(ctx, dst, 0xCD, max, NULL));
            assert_ok(ctx, ptxkit_copy(ctx, dst + doff, src + so, n, NULL, NULL)); /* tuned options */
            assert_ok(ctx, ptxkit_context_synchronize(ctx));
            assert_ok(ctx, ptxkit_memory_read(ctx, back, dst, n + doff + 8));
            assert_memory_equal(back + doff, host + so, n);
            for (size_t k = 0; k < doff; k++) assert_int_equal(back[k], 0xCD);
            for (size_t k = 0; k < 8; k++) assert_int_equal(back[doff + n + k], 0xCD);
        }
    }
    ptxkit_memory_free(ctx, src);
    ptxkit_memory_free(ctx, dst);
    free(host);
    free(back);
}

static void test_tune_copy(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    char path[512];
    fresh_db(path, sizeof path);
    unsetenv("PTXKIT_TUNE");
    progress_log log = {.monotonic = true};
    ptxkit_tune_options o = {.budget_s = 10, .size_step = 2, .progress = log_progress, .progress_user = &log};
    ptxkit_tune_report *report = calloc(1, sizeof *report);
    double t0 = wall_ms();
    assert_ok(ctx, ptxkit_tune(ctx, "copy", NULL, 1u << 20, 1u << 22, &o, report));
    double seconds = (wall_ms() - t0) / 1e3;
    print_message("copy: %.1f s (budget 10 s), %.1f s compiling %d variants\n", report->seconds,
                  report->compile_seconds, report->kernels_prepared);
    assert_true(seconds < 10 + 15); /* the budget bounds the search; setup and re-timing add a little */
    assert_string_equal(report->family, "copy");
    assert_string_equal(report->variant, "bytes");
    assert_int_equal(report->size_count, 2);
    assert_int_equal(report->sizes[0].n, 1u << 20);
    assert_int_equal(report->sizes[1].n, 1u << 22);
    for (int i = 0; i < report->size_count; i++) check_result(&report->sizes[i]);
    assert_true(report->kernels_prepared > 0);
    assert_string_equal(report->database, path);
    assert_true(log.calls > 0 && log.saw_compile && log.saw_retime && log.monotonic);

    /* saved as it came, and what dispatch now reads */
    for (int i = 0; i < 2; i++) {
        tune_db_entry e = saved_entry(path, "copy", "bytes", 20 + 2 * i);
        assert_saved_best("copy", &e, &report->sizes[i].best);
        tune_config got;
        assert_true(tune_lookup(ctx, "copy", "bytes", ((size_t)1 << (20 + 2 * i)) + 100, &got));
        assert_true(tune_config_equal(&got, &e.config));
    }
    copy_check_awkward(ctx);
    free(report);
}

/* A planted configuration that is legal but slow (32 threads, one block per
 * SM) must slow ptxkit_copy down when the database holds it: proof that the
 * op reads it. PTXKIT_TUNE=off restores the defaults. */
static void test_dispatch_uses_database(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    char path[512], msg[640];
    fresh_db(path, sizeof path);
    size_t bytes = (size_t)1 << 26;
    tune_db_entry e;
    memset(&e, 0, sizeof e);
    tune_db_key_for(ctx, &e.key);
    snprintf(e.family, sizeof e.family, "copy");
    snprintf(e.variant, sizeof e.variant, "bytes");
    e.bucket = 26;
    e.config = (tune_config){32, 1, 4, 1, PTXKIT_LOAD_DEFAULT};
    assert_status(PTXKIT_SUCCESS, tune_db_store(path, &e, 1, NULL, msg, sizeof msg));
    tune_state_reset(ctx);
    ptxkit_dptr src, dst;
    assert_ok(ctx, ptxkit_memory_alloc(ctx, bytes, &src));
    assert_ok(ctx, ptxkit_memory_alloc(ctx, bytes, &dst));
    assert_ok(ctx, ptxkit_memory_set32_async(ctx, src, 0x12345678u, bytes / 4, NULL));
    ptxkit_event *start, *stop;
    assert_ok(ctx, ptxkit_event_create(ctx, PTXKIT_EVENT_DEFAULT, &start));
    assert_ok(ctx, ptxkit_event_create(ctx, PTXKIT_EVENT_DEFAULT, &stop));
    double best[2] = {1e30, 1e30};
    for (int mode = 0; mode < 2; mode++) {
        if (mode == 0) unsetenv("PTXKIT_TUNE");
        else setenv("PTXKIT_TUNE", "off", 1);
        for (int rep = 0; rep < 6; rep++) {
            float ms = 0;
            assert_ok(ctx, ptxkit_event_record(ctx, start, NULL));
            assert_ok(ctx, ptxkit_copy(ctx, dst, src, bytes, NULL, NULL));
            assert_ok(ctx, ptxkit_event_record(ctx, stop, NULL));
            assert_ok(ctx, ptxkit_event_synchronize(ctx, stop));
            assert_ok(ctx, ptxkit_event_elapsed_ms_get(ctx, start, stop, &ms));
            if (rep > 0 && ms < best[mode]) best[mode] = ms; /* the first run may compile */
        }
    }
    ptxkit_event_destroy(start);
    ptxkit_event_destroy(stop);
    unsetenv("PTXKIT_TUNE");
    print_message("copy of 64 MiB: planted tuned config %.3f ms, defaults %.3f ms\n", best[0], best[1]);
    assert_true(best[0] > 2 * best[1]);
    ptxkit_memory_free(ctx, src);
    ptxkit_memory_free(ctx, dst);
}

/* ---- reduce ------------------------------------------------------------ */

/* With config NULL (the tuned entry now in the database) and with the
 * tuning result's own configuration, which the op takes as it is. */
static void reduce_check_awkward(ptxkit_context *ctx, const ptxkit_config *config) {
    uint64_t rng = test_seed() ^ 0x55;
    size_t max = (1u << 22) + 8;
    float *host = malloc(max * sizeof *host);
    for (size_t i = 0; i < max; i++) host[i] = (float)(1 + test_rand(&rng) % 3); /* exact sums below 2^24 */
    ptxkit_dptr in;
    assert_ok(ctx, ptxkit_memory_alloc(ctx, max * sizeof *host, &in));
    assert_ok(ctx, ptxkit_memory_write(ctx, in, host, max * sizeof *host));
    for (size_t i = 0; i < test_awkward_size_count; i++) {
        size_t n = test_awkward_sizes[i];
        for (size_t off = 0; off < 2; off++) {
            if (n + off > max) continue;
            double want = 0;
            for (size_t k = 0; k < n; k++) want += host[off + k];
            float got = -1;
            assert_ok(ctx, ptxkit_reduce_to_host(ctx, PTXKIT_REDUCE_SUM, PTXKIT_FLOAT32, &got, in + off * sizeof(float),
                                                 n, config));
            assert_true((double)got == want);
        }
    }
    ptxkit_memory_free(ctx, in);
    free(host);
}

static void test_tune_reduce(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    char path[512];
    fresh_db(path, sizeof path);
    unsetenv("PTXKIT_TUNE");
    ptxkit_tune_options o = {.budget_s = 10};
    ptxkit_tune_report *report = calloc(1, sizeof *report);
    assert_ok(ctx, ptxkit_tune(ctx, "reduce", "sum.float32", 1u << 20, 1u << 20, &o, report));
    print_message("reduce: %.1f s, %.1f s compiling %d variants\n", report->seconds, report->compile_seconds,
                  report->kernels_prepared);
    assert_int_equal(report->size_count, 1);
    check_result(&report->sizes[0]);
    tune_db_entry e = saved_entry(path, "reduce", "sum.float32", 20);
    assert_saved_best("reduce", &e, &report->sizes[0].best);
    /* what a call of that bucket now runs: the saved entry, its zeros the defaults */
    ptxkit_config now;
    assert_ok(ctx, ptxkit_reduce_config_get(ctx, PTXKIT_REDUCE_SUM, PTXKIT_FLOAT32, 1u << 20, NULL, &now));
    const struct {
        const char *name;
        int tuned, fallback;
    } fields[] = {{"block_size", e.config.block_size, REDUCE_DEFAULT_BLOCK},
                  {"loads_in_flight", e.config.items_per_thread, REDUCE_DEFAULT_UNROLL},
                  {"vector_bytes", e.config.vector_bytes, REDUCE_DEFAULT_VECTOR},
                  {"blocks_per_sm", e.config.blocks_per_sm, 0},
                  {"load_op", (int)e.config.load_op, 0}};
    for (size_t f = 0; f < sizeof fields / sizeof fields[0]; f++) {
        long long v = -1;
        assert_int_equal(ptxkit_config_get(&now, fields[f].name, &v), PTXKIT_SUCCESS);
        assert_int_equal(v, fields[f].tuned ? fields[f].tuned : fields[f].fallback);
    }
    reduce_check_awkward(ctx, NULL);
    reduce_check_awkward(ctx, &report->sizes[0].best);

    /* a bound on variants: the search stops there */
    o.max_variants = 5;
    assert_ok(ctx, ptxkit_tune(ctx, "reduce", "max.int32", 1u << 18, 1u << 18, &o, report));
    check_result(&report->sizes[0]);
    assert_true(report->sizes[0].timed <= 5);
    free(report);
}

/* ptxkit_reduce keeps what a call's options resolved to (tuned values,
 * kernel) per context; it must still follow the database, the mode and the
 * tuner's guard. A planted entry the op refuses (items_per_thread 32 is more
 * than reduce takes) makes that visible without timing anything. */
static ptxkit_status reduce_ones(ptxkit_context *ctx, ptxkit_dptr in, size_t n, bool expect_ok) {
    int32_t got = -1;
    ptxkit_status st = ptxkit_reduce_to_host(ctx, PTXKIT_REDUCE_SUM, PTXKIT_INT32, &got, in, n, NULL);
    if (expect_ok && st == PTXKIT_SUCCESS) assert_int_equal(got, (int32_t)n);
    return st;
}

static void test_reduce_follows_database(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    char path[512], msg[640];
    fresh_db(path, sizeof path);
    unsetenv("PTXKIT_TUNE");
    size_t n = (size_t)3 << 12, most = (size_t)1 << 16; /* n: bucket 13 */
    ptxkit_dptr in;
    assert_ok(ctx, ptxkit_memory_alloc(ctx, most * 4, &in));
    assert_ok(ctx, ptxkit_memory_set32_async(ctx, in, 1, most, NULL));
    for (int rep = 0; rep < 3; rep++) assert_ok(ctx, reduce_ones(ctx, in, n, true)); /* empty database */

    tune_db_entry e;
    memset(&e, 0, sizeof e);
    tune_db_key_for(ctx, &e.key);
    snprintf(e.family, sizeof e.family, "reduce");
    snprintf(e.variant, sizeof e.variant, "sum.int32");
    e.bucket = 13;
    e.config = (tune_config){0, 32, 0, 0, PTXKIT_LOAD_DEFAULT};
    tune_db merged;
    tune_db_init(&merged);
    assert_status(PTXKIT_SUCCESS, tune_db_store(path, &e, 1, &merged, msg, sizeof msg));
    tune_state_update(ctx, &merged); /* as the tuner does after a run */
    for (int rep = 0; rep < 2; rep++) assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, reduce_ones(ctx, in, n, false));
    setenv("PTXKIT_TUNE", "off", 1);
    for (int rep = 0; rep < 2; rep++) assert_ok(ctx, reduce_ones(ctx, in, n, true));
    unsetenv("PTXKIT_TUNE");
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, reduce_ones(ctx, in, n, false));
    /* inside the tuner, options are used as given */
    tune_guard_enter();
    assert_ok(ctx, reduce_ones(ctx, in, n, true));
    tune_guard_leave();
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, reduce_ones(ctx, in, n, false));
    /* other buckets keep the defaults */
    assert_ok(ctx, reduce_ones(ctx, in, most, true));

    /* a new result replaces the entry: the next call uses it */
    e.config = (tune_config){256, 2, 16, 0, PTXKIT_LOAD_CG};
    tune_db_init(&merged);
    assert_status(PTXKIT_SUCCESS, tune_db_store(path, &e, 1, &merged, msg, sizeof msg));
    tune_state_update(ctx, &merged);
    for (int rep = 0; rep < 2; rep++) assert_ok(ctx, reduce_ones(ctx, in, n, true));
    /* and a forgotten database is read again */
    e.config = (tune_config){0, 32, 0, 0, PTXKIT_LOAD_DEFAULT};
    assert_status(PTXKIT_SUCCESS, tune_db_store(path, &e, 1, NULL, msg, sizeof msg));
    assert_ok(ctx, reduce_ones(ctx, in, n, true)); /* still the loaded copy */
    tune_state_reset(ctx);
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, reduce_ones(ctx, in, n, false));
    fresh_db(path, sizeof path);
    assert_ok(ctx, reduce_ones(ctx, in, n, true));
    ptxkit_memory_free(ctx, in);
}

/* ---- transpose --------------------------------------------------------- */

/* A transpose with default options (tuned where the database says), checked in full. */
static void transpose_check_public(ptxkit_context *ctx, ptxkit_dtype type, size_t rows, size_t cols) {
    size_t e = ptxkit_dtype_size(type), bytes = rows * cols * e;
    unsigned char *host = malloc(bytes), *back = malloc(bytes);
    uint64_t rng = test_seed() ^ 0x77;
    test_fill_random(host, bytes, &rng);
    ptxkit_dptr src, dst;
    assert_ok(ctx, ptxkit_memory_alloc(ctx, bytes, &src));
    assert_ok(ctx, ptxkit_memory_alloc(ctx, bytes, &dst));
    assert_ok(ctx, ptxkit_memory_write(ctx, src, host, bytes));
    assert_ok(ctx, ptxkit_memory_set8_async(ctx, dst, 0xCD, bytes, NULL));
    assert_ok(ctx, ptxkit_transpose(ctx, PTXKIT_TRANSPOSE_PADDED, type, dst, src, rows, cols, NULL, NULL));
    assert_ok(ctx, ptxkit_memory_read(ctx, back, dst, bytes));
    for (size_t r = 0; r < rows; r++)
        for (size_t c = 0; c < cols; c++)
            if (memcmp(back + (c * rows + r) * e, host + (r * cols + c) * e, e) != 0)
                fail_msg("transpose %zux%zu: element (%zu, %zu) wrong", rows, cols, r, c);
    ptxkit_memory_free(ctx, src);
    ptxkit_memory_free(ctx, dst);
    free(host);
    free(back);
}

static tune_db_entry transpose_entry(ptxkit_context *ctx, const char *variant, int bucket, tune_config config) {
    tune_db_entry e;
    memset(&e, 0, sizeof e);
    tune_db_key_for(ctx, &e.key);
    snprintf(e.family, sizeof e.family, "transpose");
    snprintf(e.variant, sizeof e.variant, "%s", variant);
    e.bucket = bucket;
    e.config = config;
    return e;
}

/* Dispatch: ptxkit_transpose takes a tuned entry whole, for the padded kind
 * on the JIT path, of its shape class at the power of two nearest rows x
 * cols, only where the caller set none of block, items and vector width; an
 * entry that is no configuration is ignored. */
static void test_transpose_dispatch(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    char path[512], msg[640];
    fresh_db(path, sizeof path);
    unsetenv("PTXKIT_TUNE");
    tune_db_entry e[4] = {transpose_entry(ctx, "float32.unaligned", 24, (tune_config){1024, 16, 4, 0, 0}),
                          transpose_entry(ctx, "float64", 24, (tune_config){512, 8, 16, 0, 0}),
                          transpose_entry(ctx, "float32", 20, (tune_config){512, 4, 4, 0, 0}), /* 2048: no tile */
                          transpose_entry(ctx, "float32", 24, (tune_config){128, 8, 16, 0, 0})};
    assert_status(PTXKIT_SUCCESS, tune_db_store(path, e, 4, NULL, msg, sizeof msg));
    tune_state_reset(ctx);
    transpose_config c;
    assert_ok(ctx, transpose_resolve(ctx, PTXKIT_FLOAT32, 4097, 4095, PTXKIT_TRANSPOSE_PADDED, NULL, NULL, &c));
    assert_true(c.tile == 128 && c.block_size == 1024 && c.vector_bytes == 4); /* the unaligned class */
    assert_ok(ctx, transpose_resolve(ctx, PTXKIT_FLOAT32, 4096, 4096, PTXKIT_TRANSPOSE_PADDED, NULL, NULL, &c));
    assert_true(c.tile == 32 && c.block_size == 128 && c.vector_bytes == 16); /* the aligned one */
    assert_ok(ctx, transpose_resolve(ctx, PTXKIT_FLOAT64, 4096, 4096, PTXKIT_TRANSPOSE_PADDED, NULL, NULL, &c));
    assert_true(c.tile == 64 && c.block_size == 512 && c.vector_bytes == 16);
    transpose_config defaults = transpose_default_config(PTXKIT_FLOAT32, true);
    assert_ok(ctx, transpose_resolve(ctx, PTXKIT_FLOAT32, 1024, 1024, PTXKIT_TRANSPOSE_PADDED, NULL, NULL, &c));
    assert_true(c.tile == defaults.tile && c.block_size == defaults.block_size); /* the bad entry: ignored */
    assert_ok(ctx, transpose_resolve(ctx, PTXKIT_FLOAT32, 4097, 4095, PTXKIT_TRANSPOSE_TILED, NULL, NULL, &c));
    assert_true(c.tile == defaults.tile && c.block_size == defaults.block_size); /* other kinds: not tuned */
    launch_options o = {.vector_bytes = 8};
    assert_ok(ctx, transpose_resolve(ctx, PTXKIT_FLOAT32, 4097, 4095, PTXKIT_TRANSPOSE_PADDED, &o, NULL, &c));
    assert_true(c.tile == defaults.tile && c.block_size == defaults.block_size && c.vector_bytes == 8);
    setenv("PTXKIT_TUNE", "off", 1);
    assert_ok(ctx, transpose_resolve(ctx, PTXKIT_FLOAT32, 4097, 4095, PTXKIT_TRANSPOSE_PADDED, NULL, NULL, &c));
    assert_true(c.tile == defaults.tile && c.block_size == defaults.block_size);
    unsetenv("PTXKIT_TUNE");
    transpose_check_public(ctx, PTXKIT_FLOAT32, 4097, 4095); /* with the tuned entries */
    transpose_check_public(ctx, PTXKIT_FLOAT32, 4096, 4096);
    transpose_check_public(ctx, PTXKIT_FLOAT64, 4096, 4096);
}

/* A small tuning run of each variant saves what dispatch then reads. */
static void test_tune_transpose(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    char path[512];
    fresh_db(path, sizeof path);
    unsetenv("PTXKIT_TUNE");
    ptxkit_tune_options o = {.budget_s = 8};
    ptxkit_tune_report *report = calloc(1, sizeof *report);
    /* one of each type and shape class, looked up by a matrix of its class */
    static const char *const variants[] = {"float32.unaligned", "float64"};
    static const size_t shapes[2][2] = {{1025, 1023}, {1024, 1024}};
    for (int k = 0; k < 2; k++) {
        assert_ok(ctx, ptxkit_tune(ctx, "transpose", variants[k], 1u << 20, 1u << 20, &o, report));
        print_message("transpose %s: %.1f s, %.1f s compiling %d variants\n", variants[k], report->seconds,
                      report->compile_seconds, report->kernels_prepared);
        assert_int_equal(report->size_count, 1);
        check_result(&report->sizes[0]);
        assert_int_equal(report->sizes[0].legal, k == 0 ? 48 : 30);
        tune_db_entry e = saved_entry(path, "transpose", variants[k], 20);
        assert_saved_best("transpose", &e, &report->sizes[0].best);
        tune_config want = e.config;
        ptxkit_dtype type = k == 0 ? PTXKIT_FLOAT32 : PTXKIT_FLOAT64;
        transpose_config c, expect;
        char why[256];
        assert_true(transpose_config_from(type, true, want.block_size, want.items_per_thread, want.vector_bytes, &expect,
                                          why, sizeof why));
        assert_ok(ctx, transpose_resolve(ctx, type, shapes[k][0], shapes[k][1], PTXKIT_TRANSPOSE_PADDED, NULL, NULL, &c));
        assert_true(c.tile == expect.tile && c.block_size == expect.block_size && c.vector_bytes == expect.vector_bytes);
        transpose_check_public(ctx, type, shapes[k][0], shapes[k][1]);
    }
    free(report);
}

/* ---- modes and damaged files ------------------------------------------- */

static void test_auto_mode(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    char path[512];
    fresh_db(path, sizeof path);
    setenv("PTXKIT_TUNE", "auto", 1);
    setenv("PTXKIT_TUNE_BUDGET", "3", 1);
    size_t bytes = (size_t)3 << 20; /* bucket 21, tuned by no other test */
    ptxkit_dptr src, dst;
    assert_ok(ctx, ptxkit_memory_alloc(ctx, bytes, &src));
    assert_ok(ctx, ptxkit_memory_alloc(ctx, bytes, &dst));
    assert_ok(ctx, ptxkit_memory_set32_async(ctx, src, 0xA1B2C3D4u, bytes / 4, NULL));
    assert_ok(ctx, ptxkit_memory_set32_async(ctx, dst, 0, bytes / 4, NULL));
    double t0 = wall_ms();
    /* the first use tunes the bucket (the tuner's own calls must not recurse) */
    assert_ok(ctx, ptxkit_copy(ctx, dst, src, bytes, NULL, NULL));
    assert_ok(ctx, ptxkit_context_synchronize(ctx));
    double first = wall_ms() - t0;
    unsigned *back = malloc(bytes);
    assert_ok(ctx, ptxkit_memory_read(ctx, back, dst, bytes));
    for (size_t i = 0; i < bytes / 4; i++) assert_int_equal(back[i], 0xA1B2C3D4u);
    tune_db_entry e = saved_entry(path, "copy", "bytes", 21);
    (void)e;
    t0 = wall_ms();
    assert_ok(ctx, ptxkit_copy(ctx, dst, src, bytes, NULL, NULL));
    assert_ok(ctx, ptxkit_context_synchronize(ctx));
    double second = wall_ms() - t0;
    print_message("auto: first call (tunes) %.0f ms, second %.3f ms\n", first, second);
    assert_true(second < 500); /* found in the database: no second tuning */
    unsetenv("PTXKIT_TUNE");
    unsetenv("PTXKIT_TUNE_BUDGET");
    free(back);
    ptxkit_memory_free(ctx, src);
    ptxkit_memory_free(ctx, dst);
}

static void test_corrupt_database(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    char path[512], dir[512];
    fresh_db(path, sizeof path);
    snprintf(dir, sizeof dir, "%s", path);
    *strrchr(dir, '/') = 0;
    mkdir(dir, 0755);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs("ptxkit-tune-db 1\nentry\tdevice=trunc", f);
    fclose(f);
    unsetenv("PTXKIT_TUNE");
    /* the ops keep working, on their defaults */
    tune_config c;
    assert_false(tune_lookup(ctx, "copy", "bytes", 1 << 20, &c));
    char shown_path[4096], shown[640];
    tune_state_describe(ctx, shown_path, sizeof shown_path, shown, sizeof shown);
    assert_non_null(strstr(shown, "ignored"));
    copy_check_awkward(ctx);
    /* the next tuning run replaces the file, keeping the bad one aside */
    ptxkit_tune_options o = {.budget_s = 3};
    ptxkit_tune_report *report = calloc(1, sizeof *report);
    assert_ok(ctx, ptxkit_tune(ctx, "copy", NULL, 1u << 16, 1u << 16, &o, report));
    assert_non_null(strstr(report->database_note, ".bad"));
    saved_entry(path, "copy", "bytes", 16);
    assert_true(tune_lookup(ctx, "copy", "bytes", 1 << 16, &c));
    free(report);
}

/* A run cut short (a bound on variants) and run again resumes from the
 * tuning record: the first run's configurations are reused, not timed
 * again, and the second times others; no_record and PTXKIT_TUNE_RECORD=off
 * measure afresh and leave the record alone. */
static size_t record_lines(const char *path, tune_record *r) {
    char msg[512];
    assert_int_equal(tune_record_load(path, NULL, r, msg, sizeof msg), PTXKIT_SUCCESS);
    assert_int_equal(r->ignored, 0);
    return r->count;
}

static void test_resume_from_record(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    char path[512], record[600];
    fresh_db(path, sizeof path);
    unsetenv("PTXKIT_TUNE");
    unsetenv("PTXKIT_TUNE_RECORD");
    assert_true(tune_record_default_path(record, sizeof record));
    assert_non_null(strstr(record, "/tune.record.jsonl"));
    size_t n = (size_t)1 << 20;
    ptxkit_tune_options o = {.budget_s = 60, .max_variants = 6};
    ptxkit_tune_report *first = calloc(1, sizeof *first), *second = calloc(1, sizeof *second);
    assert_ok(ctx, ptxkit_tune(ctx, "reduce", "sum.int32", n, n, &o, first));
    const ptxkit_tune_result *r1 = &first->sizes[0];
    print_message("run 1: %d timed, %d reused, %d failed; record %s (%d appended)\n", r1->timed, r1->reused, r1->failed,
                  first->record, first->record_appended);
    assert_int_equal(r1->reused, 0);
    assert_int_equal(r1->timed, 6);
    assert_string_equal(first->record, record);
    tune_record r;
    tune_record_init(&r);
    size_t after_first = record_lines(record, &r);
    assert_int_equal(after_first, (size_t)first->record_appended);
    assert_true(after_first >= 6);
    for (size_t i = 0; i < r.count; i++) {
        const tune_record_line *l = &r.lines[i];
        assert_string_equal(l->family, "reduce");
        assert_string_equal(l->variant, "sum.int32");
        assert_int_equal(l->n, n);
        assert_int_equal(l->param_count, 5);
        if (l->outcome == TUNE_RECORD_OK) assert_true(l->ms > 0 && l->gbs > 0 && l->samples >= 1);
    }

    /* a bound of 12: the six from the record count towards it, six more are timed */
    o.max_variants = 12;
    assert_ok(ctx, ptxkit_tune(ctx, "reduce", "sum.int32", n, n, &o, second));
    const ptxkit_tune_result *r2 = &second->sizes[0];
    print_message("run 2: %d timed, %d reused (%d found in the record); best %s\n", r2->timed, r2->reused,
                  second->record_loaded, r2->best_text);
    assert_int_equal(r2->reused, (int)after_first);
    assert_int_equal(second->record_loaded, (int)after_first);
    assert_int_equal(r2->timed, 6); /* six more, none of them again */
    size_t after_second = record_lines(record, &r);
    assert_int_equal(after_second, after_first + (size_t)second->record_appended);
    for (size_t i = 0; i < r.count; i++)
        for (size_t k = 0; k < i; k++)
            assert_false(memcmp(r.lines[i].values, r.lines[k].values, sizeof r.lines[i].values) == 0);
    /* the same bound again: the whole search comes from the record */
    assert_ok(ctx, ptxkit_tune(ctx, "reduce", "sum.int32", n, n, &o, second));
    print_message("run 3: %d timed, %d reused\n", second->sizes[0].timed, second->sizes[0].reused);
    assert_int_equal(second->sizes[0].timed, 0);
    assert_int_equal(second->sizes[0].reused, (int)after_second);
    assert_int_equal(record_lines(record, &r), after_second);
    tune_db_entry e = saved_entry(path, "reduce", "sum.int32", 20); /* the choice is saved */
    (void)e;

    /* measured afresh, record untouched */
    o.no_record = 1;
    assert_ok(ctx, ptxkit_tune(ctx, "reduce", "sum.int32", n, n, &o, second));
    assert_int_equal(second->sizes[0].reused, 0);
    assert_int_equal(second->sizes[0].timed, 12);
    assert_string_equal(second->record, "");
    o.no_record = 0;
    setenv("PTXKIT_TUNE_RECORD", "off", 1);
    assert_ok(ctx, ptxkit_tune(ctx, "reduce", "sum.int32", n, n, &o, second));
    unsetenv("PTXKIT_TUNE_RECORD");
    assert_int_equal(second->sizes[0].reused, 0);
    assert_int_equal(record_lines(record, &r), after_second);
    tune_record_clear(&r);
    free(first);
    free(second);
}

static void test_no_save(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    char path[512];
    fresh_db(path, sizeof path);
    ptxkit_tune_options o = {.budget_s = 2, .no_save = 1};
    ptxkit_tune_report *report = calloc(1, sizeof *report);
    assert_ok(ctx, ptxkit_tune(ctx, "copy", NULL, 1u << 12, 1u << 12, &o, report));
    assert_string_equal(report->database, "");
    assert_string_equal(report->record, "");
    struct stat sb;
    assert_int_not_equal(stat(path, &sb), 0);
    char record[600];
    assert_true(tune_record_default_path(record, sizeof record));
    assert_int_not_equal(stat(record, &sb), 0); /* no_save: the record is left alone too */
    assert_ok(ctx, ptxkit_tune(ctx, "copy", NULL, 1, 1, &o, NULL)); /* n = 1, and no report */
    free(report);
}

static void test_measure(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    tune_config configs[] = {
        {256, 4, 16, 0, PTXKIT_LOAD_DEFAULT},
        {48, 4, 16, 0, PTXKIT_LOAD_DEFAULT},    /* illegal: not a power of two */
        {256, 3, 16, 0, PTXKIT_LOAD_DEFAULT},   /* illegal: not an items value */
        {128, 2, 8, 2, PTXKIT_LOAD_NC},
        {1024, 16, 16, 0, PTXKIT_LOAD_CS},
    };
    tune_measured m[5];
    double defaults = 0;
    assert_ok(ctx, tune_measure(ctx, "reduce", "sum.float32", 1u << 22, configs, 5, m, &defaults, NULL, NULL));
    print_message("measure: %.0f %.0f %.0f %.0f %.0f, defaults %.0f GB/s\n", m[0].gbs, m[1].gbs, m[2].gbs, m[3].gbs,
                  m[4].gbs, defaults);
    assert_true(m[0].gbs > 0 && m[3].gbs > 0 && m[4].gbs > 0 && defaults > 0);
    assert_true(m[1].gbs == 0 && m[2].gbs == 0 && m[1].samples == 0);
    for (int i = 0; i < 5; i += 3) /* the spread brackets the median */
        assert_true(m[i].samples > 0 && m[i].min_ms > 0 && m[i].min_ms <= m[i].ms && m[i].ms <= m[i].max_ms);
}

int main(void) {
    test_require_gpu();
    snprintf(db_dir, sizeof db_dir, "/tmp/ptxkit-gpu-tune-XXXXXX");
    if (!mkdtemp(db_dir)) return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_arguments),
        cmocka_unit_test(test_tune_copy),
        cmocka_unit_test(test_dispatch_uses_database),
        cmocka_unit_test(test_tune_reduce),
        cmocka_unit_test(test_reduce_follows_database),
        cmocka_unit_test(test_transpose_dispatch),
        cmocka_unit_test(test_tune_transpose),
        cmocka_unit_test(test_auto_mode),
        cmocka_unit_test(test_corrupt_database),
        cmocka_unit_test(test_resume_from_record),
        cmocka_unit_test(test_no_save),
        cmocka_unit_test(test_measure),
    };
    /* PTXKIT_TEST_FILTER=test_resume* runs the matching tests only (a short GPU session) */
    if (getenv("PTXKIT_TEST_FILTER")) cmocka_set_test_filter(getenv("PTXKIT_TEST_FILTER"));
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    test_gpu_release();
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", db_dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", db_dir);
    return failed;
}
