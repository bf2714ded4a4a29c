/* GPU tests of the stream and event API (issue 26): an event wait orders
 * two streams; queries answer PTXKIT_NOT_READY (not an error) while a long
 * kernel runs and SUCCESS after; host functions run in stream order, after
 * the kernels before them; registered host memory is read and written by
 * kernels through its mapped device pointer; priorities and the
 * non-blocking default (a ptxkit stream never waits for the legacy stream,
 * a blocking one does).
 *
 * "Long" kernels spin on %globaltimer for a fixed time (hundreds of
 * milliseconds), far longer than the host needs to ask its questions, so
 * the NOT_READY answers do not depend on timing luck. */
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

static const char source[] =
    "__device__ unsigned long long now_ns() {\n"
    "    unsigned long long t;\n"
    "    asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(t));\n"
    "    return t;\n"
    "}\n"
    "extern \"C\" __global__ void spin_then_write(unsigned long long ns, unsigned *flag, unsigned value) {\n"
    "    unsigned long long t0 = now_ns();\n"
    "    while (now_ns() - t0 < ns) {}\n"
    "    if (threadIdx.x == 0) *(volatile unsigned *)flag = value;\n"
    "}\n"
    "extern \"C\" __global__ void copy_word(unsigned *out, const unsigned *in) {\n"
    "    if (threadIdx.x == 0) *out = *(volatile const unsigned *)in;\n"
    "}\n"
    "extern \"C\" __global__ void sum_words(unsigned long long *out, const unsigned *in, unsigned n) {\n"
    "    unsigned long long s = 0;\n"
    "    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) s += in[i];\n"
    "    atomicAdd(out, s);\n"
    "}\n"
    "extern \"C\" __global__ void fill_words(unsigned *out, unsigned n, unsigned seed) {\n"
    "    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)\n"
    "        out[i] = i * 2654435761u ^ seed;\n"
    "}\n"
    "#include <ptxkit/grid.cuh>\n"
    "extern \"C\" __global__ void spin_then_fill(unsigned long long ns, unsigned *out, unsigned n, unsigned value) {\n"
    "    ptxkit::grid_dependents_launch();  /* the next kernel may start now */\n"
    "    unsigned long long t0 = now_ns();\n"
    "    while (now_ns() - t0 < ns) {}\n"
    "    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) out[i] = value;\n"
    "}\n"
    "extern \"C\" __global__ void programmatic_add(unsigned *out, const unsigned *in, unsigned n) {\n"
    "    ptxkit::grid_dependency_wait();\n"
    "    ptxkit::grid_dependents_launch();\n"
    "    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) out[i] = in[i] + 1;\n"
    "}\n";

static ptxkit_program *program;
static uint64_t rng;

static ptxkit_kernel *kernel(ptxkit_context *ctx, const char *entry) {
    if (!program) assert_ok(NULL, ptxkit_program_create("streams_test.cu", source, NULL, 0, &program));
    ptxkit_kernel *k = NULL;
    assert_ok(ctx, ptxkit_program_kernel_get(ctx, program, entry, NULL, 0, &k));
    return k;
}

static const ptxkit_dim3 one = {1, 1, 1}, warp = {32, 1, 1}, blocks = {64, 1, 1}, threads = {256, 1, 1};

static void spin(ptxkit_context *ctx, ptxkit_stream *s, unsigned long long ms, ptxkit_dptr flag, unsigned value) {
    unsigned long long ns = ms * 1000000ull;
    void *args[] = {&ns, &flag, &value};
    assert_ok(ctx, ptxkit_kernel_launch(kernel(ctx, "spin_then_write"), one, warp, 0, s, args));
}

static void copy_word(ptxkit_context *ctx, ptxkit_stream *s, ptxkit_dptr out, ptxkit_dptr in) {
    void *args[] = {&out, &in};
    assert_ok(ctx, ptxkit_kernel_launch(kernel(ctx, "copy_word"), one, warp, 0, s, args));
}

static unsigned read_word(ptxkit_context *ctx, ptxkit_dptr p) {
    unsigned v = 0;
    assert_ok(ctx, ptxkit_memory_read(ctx, &v, p, 4));
    return v;
}

/* The second stream's kernel waits for the first's, through an event only:
 * it reads the flag the first writes after a long spin. */
static void test_event_wait_orders_streams(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    ptxkit_stream *a, *b;
    ptxkit_event *ev, *back;
    ptxkit_dptr words;
    assert_ok(ctx, ptxkit_memory_alloc(ctx, 16, &words));
    assert_ok(ctx, ptxkit_stream_create(ctx, PTXKIT_STREAM_NON_BLOCKING, 0, &a));
    assert_ok(ctx, ptxkit_stream_create(ctx, PTXKIT_STREAM_NON_BLOCKING, 0, &b));
    assert_ok(ctx, ptxkit_event_create(ctx, PTXKIT_EVENT_DISABLE_TIMING, &ev));
    assert_ok(ctx, ptxkit_event_create(ctx, PTXKIT_EVENT_DEFAULT, &back));
    for (int round = 0; round < 3; round++) {
        unsigned value = 0x1000u + (unsigned)round;
        assert_ok(ctx, ptxkit_memory_set32_async(ctx, words, 0xDEADBEEFu, 4, NULL));
        assert_ok(ctx, ptxkit_context_synchronize(ctx));
        spin(ctx, a, 150, words, value);
        assert_ok(ctx, ptxkit_event_record(ctx, ev, a));
        assert_ok(ctx, ptxkit_stream_wait_event(ctx, b, ev));
        copy_word(ctx, b, words + 4, words);
        /* and back: a waits for b's copy before overwriting the flag */
        assert_ok(ctx, ptxkit_event_record(ctx, back, b));
        assert_ok(ctx, ptxkit_stream_wait_event(ctx, a, back));
        spin(ctx, a, 1, words, 0);
        assert_ok(ctx, ptxkit_stream_synchronize(ctx, a));
        assert_ok(ctx, ptxkit_stream_synchronize(ctx, b));
        assert_int_equal(read_word(ctx, words + 4), value);
        assert_int_equal(read_word(ctx, words), 0);
    }
    ptxkit_event_destroy(ev);
    ptxkit_event_destroy(back);
    ptxkit_stream_destroy(a);
    ptxkit_stream_destroy(b);
    assert_ok(ctx, ptxkit_memory_free(ctx, words));
}

static void test_queries_not_ready(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    ptxkit_stream *s;
    ptxkit_event *e, *never;
    ptxkit_dptr flag;
    assert_ok(ctx, ptxkit_memory_alloc(ctx, 4, &flag));
    assert_ok(ctx, ptxkit_stream_create(ctx, PTXKIT_STREAM_NON_BLOCKING, 0, &s));
    assert_ok(ctx, ptxkit_event_create(ctx, PTXKIT_EVENT_DEFAULT, &e));
    assert_ok(ctx, ptxkit_event_create(ctx, PTXKIT_EVENT_DEFAULT, &never));
    /* idle: ready */
    assert_status(PTXKIT_SUCCESS, ptxkit_stream_query(ctx, s));
    assert_status(PTXKIT_SUCCESS, ptxkit_event_query(ctx, never));
    spin(ctx, s, 400, flag, 1);
    assert_ok(ctx, ptxkit_event_record(ctx, e, s));
    ptxkit_status st = ptxkit_stream_query(ctx, s);
    assert_status(PTXKIT_NOT_READY, st);
    assert_int_equal(ptxkit_status_is_error(st), 0);
    assert_status(PTXKIT_NOT_READY, ptxkit_event_query(ctx, e));
    /* asking again changes nothing, and records no error */
    assert_status(PTXKIT_NOT_READY, ptxkit_stream_query(ctx, s));
    assert_ok(ctx, ptxkit_event_synchronize(ctx, e));
    assert_status(PTXKIT_SUCCESS, ptxkit_event_query(ctx, e));
    assert_ok(ctx, ptxkit_stream_synchronize(ctx, s));
    assert_status(PTXKIT_SUCCESS, ptxkit_stream_query(ctx, s));
    assert_int_equal(read_word(ctx, flag), 1);
    /* polling until ready: the pattern the header describes */
    spin(ctx, s, 50, flag, 2);
    long polls = 0;
    while ((st = ptxkit_stream_query(ctx, s)) == PTXKIT_NOT_READY) polls++;
    assert_status(PTXKIT_SUCCESS, st);
    assert_true(polls > 0);
    assert_int_equal(read_word(ctx, flag), 2);
    ptxkit_event_destroy(e);
    ptxkit_event_destroy(never);
    ptxkit_stream_destroy(s);
    assert_ok(ctx, ptxkit_memory_free(ctx, flag));
}

/* ---- host functions ------------------------------------------------------ */

typedef struct host_log {
    int count;
    int order[16];
    unsigned seen[16];
    volatile unsigned *mapped; /* what the kernels write, read by the host functions */
} host_log;

typedef struct host_call {
    host_log *log;
    int id;
} host_call;

static void log_call(void *user) {
    host_call *c = user;
    host_log *log = c->log;
    if (log->count < 16) {
        log->order[log->count] = c->id;
        log->seen[log->count] = *log->mapped;
        log->count++;
    }
}

static void test_host_func_order(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    unsigned *m = NULL;
    assert_ok(ctx, ptxkit_host_alloc(ctx, 4, PTXKIT_HOST_MAPPED, (void **)&m));
    *m = 0;
    ptxkit_dptr dm;
    assert_ok(ctx, ptxkit_host_device_pointer_get(ctx, m, &dm));
    host_log log = {.mapped = m};
    host_call calls[6];
    for (int i = 0; i < 6; i++) calls[i] = (host_call){&log, i + 1};
    ptxkit_stream *s, *t;
    ptxkit_event *ev;
    assert_ok(ctx, ptxkit_stream_create(ctx, PTXKIT_STREAM_NON_BLOCKING, 0, &s));
    assert_ok(ctx, ptxkit_stream_create(ctx, PTXKIT_STREAM_NON_BLOCKING, 0, &t));
    assert_ok(ctx, ptxkit_event_create(ctx, PTXKIT_EVENT_DEFAULT, &ev));
    spin(ctx, s, 30, dm, 11);
    assert_ok(ctx, ptxkit_host_func_launch(ctx, s, log_call, &calls[0]));
    spin(ctx, s, 30, dm, 22);
    assert_ok(ctx, ptxkit_host_func_launch(ctx, s, log_call, &calls[1]));
    assert_ok(ctx, ptxkit_host_func_launch(ctx, s, log_call, &calls[2]));
    spin(ctx, s, 30, dm, 33);
    assert_ok(ctx, ptxkit_event_record(ctx, ev, s));
    /* another stream's host function, ordered after s by the event */
    assert_ok(ctx, ptxkit_stream_wait_event(ctx, t, ev));
    assert_ok(ctx, ptxkit_host_func_launch(ctx, t, log_call, &calls[3]));
    assert_ok(ctx, ptxkit_stream_synchronize(ctx, t));
    assert_ok(ctx, ptxkit_stream_synchronize(ctx, s));
    assert_int_equal(log.count, 4);
    const int order[] = {1, 2, 3, 4};
    const unsigned seen[] = {11, 22, 22, 33};
    for (int i = 0; i < 4; i++) {
        assert_int_equal(log.order[i], order[i]);
        assert_int_equal(log.seen[i], seen[i]);
    }
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_host_func_launch(ctx, s, NULL, NULL));
    ptxkit_event_destroy(ev);
    ptxkit_stream_destroy(s);
    ptxkit_stream_destroy(t);
    assert_ok(ctx, ptxkit_host_free(ctx, m));
}

/* ---- registered and mapped host memory ----------------------------------- */

static unsigned long long device_sum(ptxkit_context *ctx, ptxkit_stream *s, ptxkit_dptr in, unsigned n) {
    ptxkit_dptr out;
    assert_ok(ctx, ptxkit_memory_alloc(ctx, 8, &out));
    assert_ok(ctx, ptxkit_memory_set8_async(ctx, out, 0, 8, s));
    void *args[] = {&out, &in, &n};
    assert_ok(ctx, ptxkit_kernel_launch(kernel(ctx, "sum_words"), blocks, threads, 0, s, args));
    assert_ok(ctx, ptxkit_stream_synchronize(ctx, s));
    unsigned long long v = 0;
    assert_ok(ctx, ptxkit_memory_read(ctx, &v, out, 8));
    assert_ok(ctx, ptxkit_memory_free(ctx, out));
    return v;
}

static unsigned long long host_sum(const unsigned *x, size_t n) {
    unsigned long long s = 0;
    for (size_t i = 0; i < n; i++) s += x[i];
    return s;
}

static void test_register_mapped(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    const unsigned n = 100003; /* a prime: the range ends inside a page */
    /* plain malloc'd memory, starting 4 bytes into the allocation: not
     * page-aligned, as an application's buffer may be */
    unsigned char *raw = malloc((size_t)n * 4 + 64);
    assert_non_null(raw);
    unsigned *buf = (unsigned *)(raw + 4);
    test_fill_random(buf, (size_t)n * 4, &rng);
    ptxkit_stream *s;
    assert_ok(ctx, ptxkit_stream_create(ctx, PTXKIT_STREAM_NON_BLOCKING, 0, &s));
    assert_ok(ctx, ptxkit_host_register(ctx, buf, (size_t)n * 4, PTXKIT_HOST_MAPPED));
    /* overlapping registration */
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_host_register(ctx, buf + 10, 64, 0));
    ptxkit_dptr d, inner;
    assert_ok(ctx, ptxkit_host_device_pointer_get(ctx, buf, &d));
    assert_ok(ctx, ptxkit_host_device_pointer_get(ctx, buf + 1000, &inner));
    assert_true(inner == d + 4000);
    /* a kernel reads the host memory through the mapping */
    assert_true(device_sum(ctx, s, d, n) == host_sum(buf, n));
    assert_true(device_sum(ctx, s, inner, n - 1000) == host_sum(buf + 1000, n - 1000));
    /* and writes it */
    memset(buf, 0xCD, (size_t)n * 4);
    unsigned seed = (unsigned)test_rand(&rng);
    void *args[] = {&d, (void *)&n, &seed};
    assert_ok(ctx, ptxkit_kernel_launch(kernel(ctx, "fill_words"), blocks, threads, 0, s, args));
    assert_ok(ctx, ptxkit_stream_synchronize(ctx, s));
    for (unsigned i = 0; i < n; i++)
        if (buf[i] != (i * 2654435761u ^ seed)) fail_msg("mapped write: word %u is 0x%x", i, buf[i]);
    /* async copies from the registered (pinned) range */
    ptxkit_dptr dev;
    unsigned *back = malloc((size_t)n * 4);
    assert_non_null(back);
    assert_ok(ctx, ptxkit_memory_alloc(ctx, (size_t)n * 4, &dev));
    assert_ok(ctx, ptxkit_memory_write_async(ctx, dev, buf, (size_t)n * 4, s));
    assert_ok(ctx, ptxkit_stream_synchronize(ctx, s));
    assert_ok(ctx, ptxkit_memory_read(ctx, back, dev, (size_t)n * 4));
    assert_memory_equal(back, buf, (size_t)n * 4);
    assert_ok(ctx, ptxkit_host_unregister(ctx, buf));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_host_unregister(ctx, buf));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_host_device_pointer_get(ctx, buf, &d));
    /* registered again, read-only (where the system can) and portable */
    ptxkit_status st = ptxkit_host_register(ctx, buf, (size_t)n * 4,
                                            PTXKIT_HOST_MAPPED | PTXKIT_HOST_READ_ONLY | PTXKIT_HOST_PORTABLE);
    if (st == PTXKIT_ERROR_UNSUPPORTED) {
        print_message("read-only registration: %s\n", ptxkit_last_error());
        st = ptxkit_host_register(ctx, buf, (size_t)n * 4, PTXKIT_HOST_MAPPED | PTXKIT_HOST_PORTABLE);
    }
    assert_ok(ctx, st);
    assert_ok(ctx, ptxkit_host_device_pointer_get(ctx, buf, &d));
    assert_true(device_sum(ctx, s, d, n) == host_sum(buf, n));
    assert_ok(ctx, ptxkit_host_unregister(ctx, buf));
    assert_ok(ctx, ptxkit_memory_free(ctx, dev));
    ptxkit_stream_destroy(s);
    free(back);
    free(raw);
}

static void test_host_alloc_flags(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    const unsigned flags[] = {PTXKIT_HOST_MAPPED, PTXKIT_HOST_MAPPED | PTXKIT_HOST_PORTABLE,
                              PTXKIT_HOST_MAPPED | PTXKIT_HOST_WRITE_COMBINED};
    const unsigned n = 65537;
    unsigned *ref = malloc((size_t)n * 4);
    assert_non_null(ref);
    for (size_t f = 0; f < sizeof flags / sizeof flags[0]; f++) {
        unsigned *h = NULL;
        assert_ok(ctx, ptxkit_host_alloc(ctx, (size_t)n * 4, flags[f], (void **)&h));
        assert_non_null(h);
        test_fill_random(ref, (size_t)n * 4, &rng);
        memcpy(h, ref, (size_t)n * 4); /* write-combined: written, never read by the host */
        ptxkit_dptr d;
        assert_ok(ctx, ptxkit_host_device_pointer_get(ctx, h, &d));
        assert_true(device_sum(ctx, NULL, d, n) == host_sum(ref, n));
        assert_ok(ctx, ptxkit_host_free(ctx, h));
    }
    /* unpinned memory has no device pointer */
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_host_device_pointer_get(ctx, ref, &(ptxkit_dptr){0}));
    free(ref);
}

/* ---- priorities and the legacy stream ------------------------------------ */

static void test_priorities(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    int least = 99, greatest = 99;
    assert_ok(ctx, ptxkit_stream_priority_range_get(ctx, &least, &greatest));
    assert_true(greatest <= least);
    assert_int_equal(least, 0);
    ptxkit_stream *lo, *hi, *bad = (ptxkit_stream *)1;
    assert_ok(ctx, ptxkit_stream_create(ctx, PTXKIT_STREAM_NON_BLOCKING, least, &lo));
    assert_ok(ctx, ptxkit_stream_create(ctx, PTXKIT_STREAM_NON_BLOCKING, greatest, &hi));
    int p = 99;
    assert_ok(ctx, ptxkit_stream_priority_get(ctx, lo, &p));
    assert_int_equal(p, least);
    assert_ok(ctx, ptxkit_stream_priority_get(ctx, hi, &p));
    assert_int_equal(p, greatest);
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_stream_create(ctx, 0, least + 1, &bad));
    assert_null(bad);
    assert_non_null(strstr(ptxkit_last_error(), "range"));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, ptxkit_stream_create(ctx, 0, greatest - 1, &bad));
    /* both run work */
    ptxkit_dptr w;
    assert_ok(ctx, ptxkit_memory_alloc(ctx, 8, &w));
    spin(ctx, lo, 1, w, 5);
    spin(ctx, hi, 1, w + 4, 6);
    assert_ok(ctx, ptxkit_context_synchronize(ctx));
    assert_int_equal(read_word(ctx, w), 5);
    assert_int_equal(read_word(ctx, w + 4), 6);
    assert_ok(ctx, ptxkit_memory_free(ctx, w));
    ptxkit_stream_destroy(lo);
    ptxkit_stream_destroy(hi);
}

/* A ptxkit stream (non-blocking) runs while the legacy stream is busy; a
 * blocking one waits behind it. */
static void test_legacy_stream(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    ptxkit_dptr w;
    assert_ok(ctx, ptxkit_memory_alloc(ctx, 16, &w));
    assert_ok(ctx, ptxkit_memory_set32_async(ctx, w, 0, 4, NULL));
    assert_ok(ctx, ptxkit_context_synchronize(ctx));
    ptxkit_stream *s, *blocking;
    assert_ok(ctx, ptxkit_stream_create(ctx, PTXKIT_STREAM_NON_BLOCKING, 0, &s));
    assert_ok(ctx, ptxkit_stream_create(ctx, PTXKIT_STREAM_BLOCKING, 0, &blocking));

    spin(ctx, NULL, 400, w, 1);
    spin(ctx, s, 0, w + 4, 2);
    assert_ok(ctx, ptxkit_stream_synchronize(ctx, s));
    /* s finished while the legacy stream still spins */
    assert_status(PTXKIT_NOT_READY, ptxkit_stream_query(ctx, NULL));
    assert_ok(ctx, ptxkit_context_synchronize(ctx));

    spin(ctx, NULL, 400, w, 3);
    spin(ctx, blocking, 0, w + 8, 4);
    /* the blocking stream's kernel waits behind the legacy stream's */
    assert_status(PTXKIT_NOT_READY, ptxkit_stream_query(ctx, blocking));
    assert_ok(ctx, ptxkit_stream_synchronize(ctx, blocking));
    assert_status(PTXKIT_SUCCESS, ptxkit_stream_query(ctx, NULL));
    unsigned v[4];
    assert_ok(ctx, ptxkit_memory_read(ctx, v, w, 16));
    assert_int_equal(v[0], 3);
    assert_int_equal(v[1], 2);
    assert_int_equal(v[2], 4);
    ptxkit_stream_destroy(s);
    ptxkit_stream_destroy(blocking);
    assert_ok(ctx, ptxkit_memory_free(ctx, w));
}

/* Programmatic dependent launch (ptxkit_launch_attributes.programmatic):
 * a kernel that may start before the one ahead of it finishes still sees
 * everything that one wrote, because it waits in grid_dependency_wait()
 * first. The kernel ahead lets it launch at once, then spins for
 * milliseconds before it writes, so a reader that did not wait would see
 * the old words. Then a chain of such
 * launches, each reading the one before. */
static void test_programmatic_user_launch(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    enum { N = 4096, CHAIN = 64 };
    ptxkit_stream *s;
    ptxkit_dptr a, b;
    assert_ok(ctx, ptxkit_stream_create(ctx, PTXKIT_STREAM_NON_BLOCKING, 0, &s));
    assert_ok(ctx, ptxkit_memory_alloc(ctx, N * 4, &a));
    assert_ok(ctx, ptxkit_memory_alloc(ctx, N * 4, &b));
    ptxkit_launch_attributes attributes = {.programmatic = 1};
    ptxkit_kernel *add = kernel(ctx, "programmatic_add");
    unsigned n = N, *host = malloc(N * 4);
    assert_non_null(host);
    for (int round = 0; round < 3; round++) {
        unsigned value = 0x5000u + (unsigned)round * 977u;
        assert_ok(ctx, ptxkit_memory_set32_async(ctx, a, 0, N, s));
        unsigned long long ns = 20000000ull;
        void *spin_args[] = {&ns, &a, &n, &value};
        assert_ok(ctx, ptxkit_kernel_launch(kernel(ctx, "spin_then_fill"), blocks, threads, 0, s, spin_args));
        /* a -> b -> a ... CHAIN times, each launch adding one */
        for (int i = 0; i < CHAIN; i++) {
            ptxkit_dptr out = i % 2 ? a : b, in = i % 2 ? b : a;
            void *args[] = {&out, &in, &n};
            assert_ok(ctx, ptxkit_kernel_launch_ex(add, blocks, threads, 0, s, args, NULL, 0, &attributes));
        }
        assert_ok(ctx, ptxkit_stream_synchronize(ctx, s));
        assert_ok(ctx, ptxkit_memory_read(ctx, host, CHAIN % 2 ? b : a, N * 4));
        for (int i = 0; i < N; i++) assert_int_equal(host[i], value + CHAIN);
    }
    free(host);
    ptxkit_stream_destroy(s);
    assert_ok(ctx, ptxkit_memory_free(ctx, a));
    assert_ok(ctx, ptxkit_memory_free(ctx, b));
}

/* Round r of the chain: fill a with seeds[r], copy a -> b -> c, sum c into sums[r]. */
static void programmatic_chain(ptxkit_context *ctx, ptxkit_stream *s, const ptxkit_dptr bufs[4], unsigned n,
                               unsigned *seeds, int rounds) {
    ptxkit_dptr a = bufs[0], b = bufs[1], c = bufs[2], sums = bufs[3];
    for (int r = 0; r < rounds; r++) {
        void *args[] = {&a, &n, &seeds[r]};
        assert_ok(ctx, ptxkit_kernel_launch(kernel(ctx, "fill_words"), blocks, threads, 0, s, args));
        assert_ok(ctx, ptxkit_copy(ctx, b, a, (size_t)n * 4, NULL, s));
        assert_ok(ctx, ptxkit_copy(ctx, c, b, (size_t)n * 4, NULL, s));
        assert_ok(ctx, ptxkit_reduce(ctx, PTXKIT_REDUCE_SUM, PTXKIT_UINT32, sums + 4 * (ptxkit_dptr)r, c, n, NULL, s));
    }
}

static void programmatic_check(ptxkit_context *ctx, ptxkit_dptr sums, unsigned n, const unsigned *seeds, int rounds) {
    unsigned got[64];
    assert_true(rounds <= 64);
    assert_ok(ctx, ptxkit_memory_read(ctx, got, sums, (size_t)rounds * 4));
    for (int r = 0; r < rounds; r++) {
        unsigned want = 0;
        for (unsigned i = 0; i < n; i++) want += i * 2654435761u ^ seeds[r];
        assert_int_equal(got[r], want);
    }
}

/* The built-in operations chained on one stream with no synchronization:
 * each reads what the one ahead wrote (fill -> copy -> copy -> reduce,
 * rounds back to back), one block each at the small size (where launches
 * overlap the most) and whole grids at the large one; on the stream, then
 * captured into a graph (where on sm_90 the families' kernels launch
 * programmatically, each waiting for the one ahead in its first statement)
 * and replayed three times, the sums cleared between replays. */
static void test_programmatic_families(void **state) {
    (void)state;
    ptxkit_context *ctx = test_gpu();
    enum { ROUNDS = 40 };
    const unsigned sizes[] = {1000, 1u << 22};
    ptxkit_stream *s;
    assert_ok(ctx, ptxkit_stream_create(ctx, PTXKIT_STREAM_NON_BLOCKING, 0, &s));
    for (int z = 0; z < 2; z++) {
        unsigned n = sizes[z];
        ptxkit_dptr bufs[4];
        for (int i = 0; i < 3; i++) assert_ok(ctx, ptxkit_memory_alloc(ctx, (size_t)n * 4, &bufs[i]));
        assert_ok(ctx, ptxkit_memory_alloc(ctx, ROUNDS * 4, &bufs[3]));
        unsigned seeds[ROUNDS];
        for (int r = 0; r < ROUNDS; r++) seeds[r] = (unsigned)test_rand(&rng);
        programmatic_chain(ctx, s, bufs, n, seeds, ROUNDS);
        assert_ok(ctx, ptxkit_stream_synchronize(ctx, s));
        programmatic_check(ctx, bufs[3], n, seeds, ROUNDS);

        for (int r = 0; r < ROUNDS; r++) seeds[r] = (unsigned)test_rand(&rng);
        ptxkit_graph *graph = NULL;
        assert_ok(ctx, ptxkit_graph_capture_begin(ctx, s));
        programmatic_chain(ctx, s, bufs, n, seeds, ROUNDS);
        assert_ok(ctx, ptxkit_graph_capture_end(ctx, s, &graph));
        for (int replay = 0; replay < 3; replay++) {
            assert_ok(ctx, ptxkit_memory_set32_async(ctx, bufs[3], 0xCDCDCDCDu, ROUNDS, s));
            assert_ok(ctx, ptxkit_graph_launch(ctx, graph, s));
            assert_ok(ctx, ptxkit_stream_synchronize(ctx, s));
            programmatic_check(ctx, bufs[3], n, seeds, ROUNDS);
        }
        ptxkit_graph_destroy(graph);
        for (int i = 0; i < 4; i++) assert_ok(ctx, ptxkit_memory_free(ctx, bufs[i]));
    }
    ptxkit_stream_destroy(s);
}

int main(void) {
    test_require_gpu();
    (void)test_gpu();
    rng = test_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_event_wait_orders_streams),
        cmocka_unit_test(test_queries_not_ready),
        cmocka_unit_test(test_host_func_order),
        cmocka_unit_test(test_register_mapped),
        cmocka_unit_test(test_host_alloc_flags),
        cmocka_unit_test(test_priorities),
        cmocka_unit_test(test_legacy_stream),
        cmocka_unit_test(test_programmatic_user_launch),
        cmocka_unit_test(test_programmatic_families),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    ptxkit_program_destroy(program);
    test_gpu_release();
    return failed;
}
