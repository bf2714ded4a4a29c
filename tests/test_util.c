#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>
#include <pthread.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/context.h"
#include "runtime/objects.h"

const size_t test_awkward_sizes[] = {0, 1, 2, 3, 31, 33, 97, 1000, 4095, 4097, 65535, 65537, 1048583, (1u << 22) + 1};
const size_t test_awkward_size_count = sizeof(test_awkward_sizes) / sizeof(test_awkward_sizes[0]);

static ptxkit_context *gpu_ctx;

void test_require_gpu(void) {
    if (gpu_ctx) return;
    /* one test of a suite by name (cmocka's pattern): PTXKIT_TEST_FILTER=test_x */
    const char *filter = getenv("PTXKIT_TEST_FILTER");
    if (filter && *filter) cmocka_set_test_filter(filter);
    ptxkit_status st = ptxkit_context_create(0, &gpu_ctx);
    if (st != PTXKIT_SUCCESS) {
        printf("skipped: no GPU (%s: %s)\n", ptxkit_status_string(st), ptxkit_last_error());
        exit(TEST_SKIP_EXIT);
    }
}

ptxkit_context *test_gpu(void) {
    test_require_gpu();
    return gpu_ctx;
}

void test_gpu_release(void) {
    ptxkit_context_destroy(gpu_ctx);
    gpu_ctx = NULL;
}

uint64_t test_seed(void) {
    static uint64_t seed;
    if (!seed) {
        const char *env = getenv("PTXKIT_TEST_SEED");
        seed = env ? strtoull(env, NULL, 0) : ((uint64_t)time(NULL) << 20) ^ (uint64_t)clock();
        if (!seed) seed = 1;
        printf("PTXKIT_TEST_SEED=%llu\n", (unsigned long long)seed);
    }
    return seed;
}

uint64_t test_rand(uint64_t *s) {
    /* splitmix64: good enough for test data, and replayable from the seed */
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

void test_fill_random(void *buf, size_t bytes, uint64_t *state) {
    unsigned char *p = buf;
    while (bytes >= 8) {
        uint64_t v = test_rand(state);
        memcpy(p, &v, 8);
        p += 8;
        bytes -= 8;
    }
    if (bytes) {
        uint64_t v = test_rand(state);
        memcpy(p, &v, bytes);
    }
}

char *test_read_file(const char *path, size_t *size) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = NULL;
    long n = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    if (n >= 0 && fseek(f, 0, SEEK_SET) == 0 && (buf = malloc((size_t)n + 1)) != NULL &&
        fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    if (buf) buf[n] = 0;
    if (buf && size) *size = (size_t)n;
    return buf;
}

bool test_write_file(const char *path, const void *data, size_t size) {
    FILE *f = fopen(path, "wb");
    if (!f) return false;
    bool ok = fwrite(data, 1, size, f) == size;
    return fclose(f) == 0 && ok;
}

ptxkit_context *test_fake_context(void) {
    static ptxkit_context ctx;
    static bool made;
    /* what the last test's calls kept in it (a memo, switches) is released, not dropped */
    if (made) context_states_release(&ctx);
    made = true;
    memset(&ctx, 0, sizeof ctx);
    pthread_mutex_init(&ctx.state_lock, NULL);
    ctx.info.max_threads_per_block = 1024;
    ctx.info.sm_count = 132;
    return &ctx;
}

void test_run_child(const char *flag) {
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        execl("/proc/self/exe", "test-child", flag, (char *)NULL);
        _exit(127);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    if (WEXITSTATUS(status) != 0) fail_msg("the %s child exited %d (its stderr says why)", flag, WEXITSTATUS(status));
}

static const ptxkit_config *test_config(const launch_options *o, const char *items, ptxkit_config *buf) {
    memset(buf, 0, sizeof *buf);
    if (!o) return NULL;
    if (o->path) ptxkit_config_set(buf, "path", o->path);
    if (o->load_op) ptxkit_config_set(buf, "load_op", o->load_op);
    if (o->block_size) ptxkit_config_set(buf, "block_size", o->block_size);
    if (o->vector_bytes) ptxkit_config_set(buf, "vector_bytes", o->vector_bytes);
    /* a field the op has no name for still goes, so that the op refuses it */
    if (o->items_per_thread) ptxkit_config_set(buf, items ? items : "items_per_thread", o->items_per_thread);
    if (o->blocks_per_sm) ptxkit_config_set(buf, "blocks_per_sm", o->blocks_per_sm);
    return buf;
}

const ptxkit_config *test_reduce_config(const launch_options *o, ptxkit_config *buf) {
    return test_config(o, "loads_in_flight", buf);
}
const ptxkit_config *test_scan_config(const launch_options *o, ptxkit_config *buf) {
    return test_config(o, "vectors_per_thread", buf);
}
const ptxkit_config *test_copy_config(const launch_options *o, ptxkit_config *buf) { return test_config(o, "unroll", buf); }

test_value test_value_load(ptxkit_dtype t, const void *base, size_t i) {
    test_value v = {0};
    size_t size = ptxkit_dtype_size(t);
    memcpy(v.bytes, (const unsigned char *)base + i * size, size);
    return v;
}

test_value test_value_identity(ptxkit_reduce_op op, ptxkit_dtype t) {
    test_value v = {0};
    size_t size = ptxkit_dtype_size(t);
    bool min = op == PTXKIT_REDUCE_MIN;
    if (op == PTXKIT_REDUCE_AND) memset(v.bytes, 0xff, size);
    if (op != PTXKIT_REDUCE_MIN && op != PTXKIT_REDUCE_MAX) return v;
    switch (t) {
    case PTXKIT_INT32: v.i32 = min ? INT32_MAX : INT32_MIN; break;
    case PTXKIT_UINT32: v.u32 = min ? UINT32_MAX : 0; break;
    case PTXKIT_INT64: v.i64 = min ? INT64_MAX : INT64_MIN; break;
    case PTXKIT_UINT64: v.u64 = min ? UINT64_MAX : 0; break;
    case PTXKIT_FLOAT32: v.f32 = min ? INFINITY : -INFINITY; break;
    default: v.f64 = min ? INFINITY : -INFINITY; break;
    }
    return v;
}

test_value test_value_combine(ptxkit_reduce_op op, ptxkit_dtype t, test_value a, test_value b) {
    test_value r = {0};
#define COMBINE(F, U)                                                                 \
    switch (op) {                                                                     \
    case PTXKIT_REDUCE_SUM: r.F = (__typeof__(a.F))((U)a.F + (U)b.F); break;          \
    case PTXKIT_REDUCE_MIN: r.F = b.F < a.F ? b.F : a.F; break;                       \
    case PTXKIT_REDUCE_MAX: r.F = b.F > a.F ? b.F : a.F; break;                       \
    case PTXKIT_REDUCE_AND: r.F = (__typeof__(a.F))((U)a.F & (U)b.F); break;          \
    case PTXKIT_REDUCE_OR: r.F = (__typeof__(a.F))((U)a.F | (U)b.F); break;           \
    default: r.F = (__typeof__(a.F))((U)a.F ^ (U)b.F); break;                         \
    }
    switch (t) {
    case PTXKIT_INT32: COMBINE(i32, uint32_t) break;
    case PTXKIT_UINT32: COMBINE(u32, uint32_t) break;
    case PTXKIT_INT64: COMBINE(i64, uint64_t) break;
    case PTXKIT_UINT64: COMBINE(u64, uint64_t) break;
    case PTXKIT_FLOAT32:
        r.f32 = op == PTXKIT_REDUCE_MIN ? fminf(a.f32, b.f32) : op == PTXKIT_REDUCE_MAX ? fmaxf(a.f32, b.f32) : a.f32 + b.f32;
        break;
    default:
        r.f64 = op == PTXKIT_REDUCE_MIN ? fmin(a.f64, b.f64) : op == PTXKIT_REDUCE_MAX ? fmax(a.f64, b.f64) : a.f64 + b.f64;
        break;
    }
#undef COMBINE
    return r;
}
