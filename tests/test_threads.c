/* The last-error message under threads: writers record failures on one
 * context (through the public API and directly, with messages of one repeated
 * letter so a torn read shows as a mix) while readers read it with
 * ptxkit_last_error and ptxkit_last_error_copy. Needs no driver: the context
 * is a fake one, as in test_status.c. CI also runs this under
 * ThreadSanitizer (.ci/run), which reports an unlocked read by name. */
#include <pthread.h>
#include <string.h>

#include "runtime/objects.h"
#include "runtime/status.h"
#include "test_util.h"

enum { WRITERS = 3, READERS = 3, ROUNDS = 3000 };

static ptxkit_context ctx;

/* "" or a message of one letter repeated, or one the public calls below
 * record (whatever their wording: they name the function). */
static int message_is_whole(const char *m) {
    if (!m[0] || strstr(m, "ptxkit_") || strstr(m, "misaligned") || strstr(m, "overflow")) return 1;
    size_t len = strlen(m);
    for (size_t i = 1; i < len; i++)
        if (m[i] != m[0]) return 0;
    return m[0] >= 'a' && m[0] <= 'z' && len >= 100;
}

static void *writer(void *arg) {
    int id = (int)(intptr_t)arg;
    char text[8192];
    ptxkit_dptr p;
    for (int i = 0; i < ROUNDS; i++) {
        size_t len = 100 + (size_t)((i * 7919 + id * 104729) % 8000);
        memset(text, 'a' + (i + id) % 26, len);
        text[len] = 0;
        record_error(&ctx, PTXKIT_ERROR_IO, "%s", text);
        if (ptxkit_malloc(&ctx, 0, &p) == PTXKIT_SUCCESS) return (void *)1;
        if (ptxkit_memset32_async(&ctx, 4097, 0, 4, NULL) != PTXKIT_ERROR_MISALIGNED) return (void *)1;
        /* outside a context: each thread has its own message */
        record_error(NULL, PTXKIT_ERROR_IO, "thread %d round %d", id, i);
        char expect[64];
        snprintf(expect, sizeof expect, "thread %d round %d", id, i);
        if (strcmp(ptxkit_last_error(NULL), expect) != 0) return (void *)1;
    }
    return NULL;
}

static void *reader(void *arg) {
    (void)arg;
    char buf[PTXKIT_ERROR_SIZE], small[16];
    for (int i = 0; i < ROUNDS; i++) {
        const char *m = ptxkit_last_error(&ctx);
        if (!message_is_whole(m)) return (void *)1;
        /* the pointer is this thread's copy: stable while writers go on */
        char before[PTXKIT_ERROR_SIZE];
        snprintf(before, sizeof before, "%s", m);
        size_t len = ptxkit_last_error_copy(&ctx, buf, sizeof buf);
        if (len != strlen(buf) || !message_is_whole(buf)) return (void *)1;
        if (strcmp(before, m) != 0) return (void *)1;
        len = ptxkit_last_error_copy(&ctx, small, sizeof small);
        if (strlen(small) != (len < sizeof small ? len : sizeof small - 1)) return (void *)1;
        if (ptxkit_last_error_copy(&ctx, NULL, 0) > PTXKIT_ERROR_SIZE - 1) return (void *)1;
        if (strlen(ptxkit_context_jit_log(&ctx)) != 0) return (void *)1;
    }
    return NULL;
}

static void concurrent_errors_read_whole(void **state) {
    (void)state;
    memset(&ctx, 0, sizeof ctx);
    pthread_mutex_init(&ctx.error_lock, NULL);
    pthread_mutex_init(&ctx.state_lock, NULL);
    pthread_t w[WRITERS], r[READERS];
    for (int i = 0; i < WRITERS; i++) assert_int_equal(pthread_create(&w[i], NULL, writer, (void *)(intptr_t)i), 0);
    for (int i = 0; i < READERS; i++) assert_int_equal(pthread_create(&r[i], NULL, reader, NULL), 0);
    int bad = 0;
    for (int i = 0; i < WRITERS; i++) {
        void *res;
        pthread_join(w[i], &res);
        bad += res != NULL;
    }
    for (int i = 0; i < READERS; i++) {
        void *res;
        pthread_join(r[i], &res);
        bad += res != NULL;
    }
    assert_int_equal(bad, 0);
    pthread_mutex_destroy(&ctx.error_lock);
    pthread_mutex_destroy(&ctx.state_lock);
}

static void copy_truncates_and_measures(void **state) {
    (void)state;
    memset(&ctx, 0, sizeof ctx);
    pthread_mutex_init(&ctx.error_lock, NULL);
    record_error(&ctx, PTXKIT_ERROR_IO, "0123456789");
    char buf[4] = "zzz";
    assert_int_equal(ptxkit_last_error_copy(&ctx, buf, sizeof buf), 10);
    assert_string_equal(buf, "012");
    assert_int_equal(ptxkit_last_error_copy(&ctx, buf, 0), 10);
    assert_string_equal(buf, "012");
    assert_int_equal(ptxkit_last_error_copy(&ctx, NULL, 8), 10);
    record_error(NULL, PTXKIT_ERROR_IO, "abc");
    assert_int_equal(ptxkit_last_error_copy(NULL, buf, sizeof buf), 3);
    assert_string_equal(buf, "abc");
    pthread_mutex_destroy(&ctx.error_lock);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(copy_truncates_and_measures),
        cmocka_unit_test(concurrent_errors_read_whole),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
