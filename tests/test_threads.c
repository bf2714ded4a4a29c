/* The last-error message under threads: it is the calling thread's own.
 * Threads failing at once on one context (through the public API, with
 * and without a context, and directly, with messages of one repeated
 * letter so a torn or foreign message shows) each read exactly their own
 * failure. Needs no driver: the context is a fake one, as in
 * test_status.c. CI also runs this under ThreadSanitizer (.ci/run), which
 * reports any shared unlocked write by name. */
#include <pthread.h>
#include <string.h>

#include "runtime/objects.h"
#include "runtime/status.h"
#include "test_util.h"

enum { THREADS = 4, ROUNDS = 3000 };

static ptxkit_context *ctx;
static pthread_barrier_t start;

/* Each thread fails in its own way every round and checks that the message
 * it reads is its own failure's, whole. Returns NULL when every round did. */
static void *fail_and_read(void *arg) {
    int id = (int)(intptr_t)arg;
    char text[8192], copy[PTXKIT_ERROR_SIZE];
    pthread_barrier_wait(&start);
    for (int i = 0; i < ROUNDS; i++) {
        /* a message of this thread's letter, recorded on the shared context */
        size_t len = 100 + (size_t)((i * 7919 + id * 104729) % 8000);
        memset(text, 'a' + id, len);
        text[len] = 0;
        record_error(ctx, PTXKIT_ERROR_IO, "%s", text);
        if (strcmp(ptxkit_last_error(), text) != 0) return (void *)1;
        if (ptxkit_last_error_copy(copy, sizeof copy) != len || strcmp(copy, text) != 0) return (void *)1;
        /* a public call failing on the shared context, each thread another */
        ptxkit_status st;
        const char *expect;
        ptxkit_dptr p;
        ptxkit_load_op op;
        switch (id) {
        case 0: st = ptxkit_memory_alloc(ctx, 0, &p), expect = "ptxkit_memory_alloc"; break;
        case 1: st = ptxkit_memory_set32_async(ctx, 4097, 0, 4, NULL), expect = "ptxkit_memory_set32_async"; break;
        case 2: st = ptxkit_load_op_parse("bogus", &op), expect = "'bogus'"; break; /* no context */
        default: st = ptxkit_last_error_set(PTXKIT_ERROR_NOT_FOUND, "layered %d", i), expect = "layered"; break;
        }
        if (!ptxkit_status_is_error(st)) return (void *)1;
        const char *m = ptxkit_last_error();
        if (!strstr(m, expect)) return (void *)1;
        /* nothing of another thread's failures */
        for (int other = 0; other < THREADS; other++) {
            static const char *const names[THREADS] = {"ptxkit_memory_alloc", "ptxkit_memory_set32_async", "'bogus'", "layered"};
            if (other != id && strstr(m, names[other])) return (void *)1;
        }
    }
    return NULL;
}

static void threads_read_their_own_failure(void **state) {
    (void)state;
    ctx = test_fake_context();
    pthread_barrier_init(&start, NULL, THREADS);
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++) assert_int_equal(pthread_create(&t[i], NULL, fail_and_read, (void *)(intptr_t)i), 0);
    int bad = 0;
    for (int i = 0; i < THREADS; i++) {
        void *res;
        pthread_join(t[i], &res);
        bad += res != NULL;
    }
    pthread_barrier_destroy(&start);
    assert_int_equal(bad, 0);
}

/* Another thread's failure leaves this thread's message as it was. */
static void other_threads_leave_mine(void **state) {
    (void)state;
    ctx = test_fake_context();
    ptxkit_dptr p;
    assert_int_not_equal(ptxkit_memory_alloc(ctx, 0, &p), PTXKIT_SUCCESS);
    char mine[PTXKIT_ERROR_SIZE];
    ptxkit_last_error_copy(mine, sizeof mine);
    assert_non_null(strstr(mine, "ptxkit_memory_alloc"));
    pthread_barrier_init(&start, NULL, 1);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, fail_and_read, (void *)(intptr_t)1), 0);
    void *res;
    pthread_join(t, &res);
    pthread_barrier_destroy(&start);
    assert_null(res);
    assert_string_equal(ptxkit_last_error(), mine);
}

static void copy_truncates_and_measures(void **state) {
    (void)state;
    record_error(test_fake_context(), PTXKIT_ERROR_IO, "0123456789");
    char buf[4] = "zzz";
    assert_int_equal(ptxkit_last_error_copy(buf, sizeof buf), 10);
    assert_string_equal(buf, "012");
    assert_int_equal(ptxkit_last_error_copy(buf, 0), 10);
    assert_string_equal(buf, "012");
    assert_int_equal(ptxkit_last_error_copy(NULL, 8), 10);
    record_error(NULL, PTXKIT_ERROR_IO, "abc");
    assert_int_equal(ptxkit_last_error_copy(buf, sizeof buf), 3);
    assert_string_equal(buf, "abc");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(copy_truncates_and_measures),
        cmocka_unit_test(other_threads_leave_mine),
        cmocka_unit_test(threads_read_their_own_failure),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
