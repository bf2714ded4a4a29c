/* The kernel cache under a failing allocator, and the size of what it
 * allocates. Linked with -Wl,--wrap=malloc,--wrap=realloc: every call the
 * library's objects (linked statically here) make goes through the wrappers
 * below, which can fail the Nth realloc and record the largest malloc. The
 * sanitizers' allocator stays underneath (__real_*). */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache_meta.h"
#include "runtime/cache_key.h"
#include "runtime/disk_cache.h"
#include "test_util.h"

void *__real_malloc(size_t size);
void *__real_realloc(void *p, size_t size);

static int realloc_fail_at; /* 0: never; N: the Nth call from now fails */
static size_t largest_malloc;

void *__wrap_malloc(size_t size) {
    if (size > largest_malloc) largest_malloc = size;
    return __real_malloc(size);
}

void *__wrap_realloc(void *p, size_t size) {
    if (realloc_fail_at > 0 && --realloc_fail_at == 0) return NULL;
    return __real_realloc(p, size);
}

static char dir[256];

static int make_dir(void **state) {
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/ptxkit-cache-alloc-XXXXXX");
    if (!mkdtemp(dir)) return -1;
    setenv("PTXKIT_CACHE_DIR", dir, 1);
    return 0;
}

static int remove_dir(void **state) {
    (void)state;
    realloc_fail_at = 0;
    unsetenv("PTXKIT_CACHE_DIR");
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static cache_key key_n(int n) {
    cache_key k;
    for (int i = 0; i < 16; i++) k.bytes[i] = (unsigned char)(n * 7 + i * 13 + (n >> 8));
    return k;
}

/* 150 entries of two files each: the scan's list grows 0 -> 64 -> 128 ->
 * 256 -> 512. */
static void fill(int count) {
    disk_cache *c = disk_cache_open(dir);
    assert_non_null(c);
    for (int i = 0; i < count; i++) {
        cache_key k = key_n(i);
        assert_ok(NULL, disk_cache_write(c, &k, "x", 1, true));
    }
    disk_cache_close(c);
}

/* scan() doubled its capacity before checking realloc: a failure then wrote
 * through NULL (first growth) or past the old block (a later one). Each
 * growth fails in turn; the listing reports OUT_OF_MEMORY and nothing is
 * written out of bounds. */
static void scan_realloc_fails(void **state) {
    (void)state;
    fill(150);
    for (int nth = 1; nth <= 3; nth++) {
        size_t files = 99, bytes = 99;
        realloc_fail_at = nth;
        ptxkit_status st = ptxkit_cache_stats_get(&files, &bytes);
        realloc_fail_at = 0;
        assert_status(PTXKIT_ERROR_OUT_OF_MEMORY, st);
        assert_non_null(strstr(ptxkit_last_error(), "out of host memory"));
        assert_int_equal(files, 0);
        realloc_fail_at = nth;
        st = ptxkit_cache_purge();
        realloc_fail_at = 0;
        assert_status(PTXKIT_ERROR_OUT_OF_MEMORY, st);
    }
    size_t files, bytes;
    assert_ok(NULL, ptxkit_cache_stats_get(&files, &bytes));
    assert_int_equal(files, 150); /* the purges that failed removed nothing */
}

/* A write's trim scans too: its failure keeps the entry and the cache. */
static void trim_realloc_fails(void **state) {
    (void)state;
    fill(100);
    disk_cache *c = disk_cache_open(dir);
    cache_key k = key_n(1000);
    realloc_fail_at = 2;
    ptxkit_status st = disk_cache_write(c, &k, "image", 5, true);
    realloc_fail_at = 0;
    assert_ok(NULL, st);
    void *data;
    size_t size;
    bool cubin;
    assert_true(disk_cache_read(c, &k, &data, &size, &cubin));
    free(data);
    disk_cache_close(c);
}

/* disk_cache_read allocated whatever size consistent metadata declared:
 * with a 1 MiB cap, a 64 MiB sparse image must not cost 64 MiB. */
static void read_bounded_by_the_cap(void **state) {
    (void)state;
    setenv("PTXKIT_CACHE_MAX_MB", "1", 1);
    disk_cache *c = disk_cache_open(dir);
    unsetenv("PTXKIT_CACHE_MAX_MB");
    cache_key k = key_n(1);
    assert_ok(NULL, disk_cache_write(c, &k, "x", 1, true));
    char hex[33], path[512], meta[512], text[1024];
    cache_key_hex(&k, hex);
    snprintf(path, sizeof path, "%s/%.2s/%s.cubin", dir, hex, hex);
    snprintf(meta, sizeof meta, "%s/%.2s/%s.meta", dir, hex, hex);
    unsigned long long big = 64ull << 20;
    assert_int_equal(truncate(path, (off_t)big), 0);
    size_t n = cache_meta_text(&k, true, "program", big, 0, 0, 0, text, sizeof text);
    assert_true(n > 0 && cache_meta_put(meta, text, n));
    void *data = NULL;
    size_t size;
    bool cubin;
    largest_malloc = 0;
    assert_false(disk_cache_read(c, &k, &data, &size, &cubin));
    if (largest_malloc > (1u << 20)) fail_msg("reading a rejected entry allocated %zu bytes", largest_malloc);
    assert_int_not_equal(access(path, F_OK), 0);
    disk_cache_close(c);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(scan_realloc_fails, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(trim_realloc_fails, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(read_bounded_by_the_cap, make_dir, remove_dir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
