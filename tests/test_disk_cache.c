/* The on-disk kernel cache: round trips, damaged files, size cap, and
 * processes racing to store the same kernel. */
#include <dirent.h>
#include <pwd.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "family_key.h"
#include "runtime/cache_dir.h"
#include "runtime/cache_key.h"
#include "runtime/compile.h"
#include "runtime/program.h"
#include "runtime/disk_cache.h"
#include "test_util.h"

static char dir[512];

static int make_dir(void **state) {
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/ptxkit-cache-test-XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int remove_dir(void **state) {
    (void)state;
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static cache_key key_of(int i) {
    char define[32];
    snprintf(define, sizeof define, "N=%d", i);
    const char *d[] = {define};
    return cache_key_for("copy", d, 1, 90, 13000);
}

static void entry_file(const cache_key *key, char *path, size_t size) {
    char hex[33];
    cache_key_hex(key, hex);
    snprintf(path, size, "%s/%.2s/%s.bin", dir, hex, hex);
}

static void round_trip(void **state) {
    (void)state;
    disk_cache *c = disk_cache_open(dir);
    assert_non_null(c);
    cache_key k = key_of(1);
    const char image[] = "\x7f" "ELF pretend cubin";
    assert_ok(NULL, disk_cache_write(c, &k, image, sizeof image, true));
    void *data;
    size_t size;
    bool cubin;
    assert_true(disk_cache_read(c, &k, &data, &size, &cubin));
    assert_int_equal(size, sizeof image);
    assert_true(cubin);
    assert_memory_equal(data, image, sizeof image);
    free(data);
    cache_key other = key_of(2);
    assert_false(disk_cache_read(c, &other, &data, &size, &cubin));
    disk_cache_close(c);
}

/* Damages the stored file of key 3 with `damage`, and checks that it is then
 * rejected and removed. */
static void check_rejected(void (*damage)(const char *path)) {
    disk_cache *c = disk_cache_open(dir);
    cache_key k = key_of(3);
    char image[4096];
    for (size_t i = 0; i < sizeof image; i++) image[i] = (char)(i * 7);
    assert_ok(NULL, disk_cache_write(c, &k, image, sizeof image, false));
    char path[1024];
    entry_file(&k, path, sizeof path);
    damage(path);
    void *data = NULL;
    size_t size;
    bool cubin;
    assert_false(disk_cache_read(c, &k, &data, &size, &cubin));
    assert_null(data);
    assert_int_not_equal(access(path, F_OK), 0);
    disk_cache_close(c);
}

static void flip_byte(const char *path) {
    FILE *f = fopen(path, "r+b");
    fseek(f, 200, SEEK_SET);
    int ch = fgetc(f);
    fseek(f, 200, SEEK_SET);
    fputc(ch ^ 0x40, f);
    fclose(f);
}
static void cut_short(const char *path) { assert_int_equal(truncate(path, 1000), 0); }
static void foreign_magic(const char *path) {
    FILE *f = fopen(path, "r+b");
    fwrite("OTHERAPP", 1, 8, f);
    fclose(f);
}
static void empty_file(const char *path) { assert_int_equal(truncate(path, 0), 0); }
static void other_key(const char *path) {
    /* a valid entry of another key copied under this name */
    disk_cache *c = disk_cache_open(dir);
    cache_key k = key_of(4);
    assert_ok(NULL, disk_cache_write(c, &k, "x", 1, true));
    char src[1024];
    entry_file(&k, src, sizeof src);
    assert_int_equal(rename(src, path), 0);
    disk_cache_close(c);
}

static void corrupt_file(void **state) { (void)state; check_rejected(flip_byte); }

/* Any single bit flipped in the 48-byte header (magic, format, kind, size,
 * key, checksum) is a miss: the kind word once read any non-zero value as
 * CUBIN, and the checksum covered only the image. */
static void damaged_header(void **state) {
    (void)state;
    disk_cache *c = disk_cache_open(dir);
    cache_key k = key_of(5);
    const char image[] = "// PTX text\n.version 8.0\n";
    char path[1024];
    entry_file(&k, path, sizeof path);
    for (int bit = 0; bit < 48 * 8; bit++)
        for (int kind = 0; kind < 2; kind++) {
            assert_ok(NULL, disk_cache_write(c, &k, image, sizeof image, kind == 1));
            FILE *f = fopen(path, "r+b");
            assert_non_null(f);
            fseek(f, bit / 8, SEEK_SET);
            int ch = fgetc(f);
            fseek(f, bit / 8, SEEK_SET);
            fputc(ch ^ (1 << (bit % 8)), f);
            fclose(f);
            void *data = NULL;
            size_t size;
            bool cubin;
            if (disk_cache_read(c, &k, &data, &size, &cubin))
                fail_msg("header bit %d flipped in a %s entry read as a hit (%s)", bit, kind ? "CUBIN" : "PTX",
                         cubin ? "CUBIN" : "PTX");
            assert_int_not_equal(access(path, F_OK), 0);
        }
    disk_cache_close(c);
}
static void truncated_file(void **state) { (void)state; check_rejected(cut_short); }
static void foreign_file(void **state) { (void)state; check_rejected(foreign_magic); }
static void empty_entry(void **state) { (void)state; check_rejected(empty_file); }
static void misplaced_file(void **state) { (void)state; check_rejected(other_key); }

static void size_cap_evicts_oldest(void **state) {
    (void)state;
    setenv("PTXKIT_CACHE_MAX_MB", "1", 1);
    disk_cache *c = disk_cache_open(dir);
    unsetenv("PTXKIT_CACHE_MAX_MB");
    size_t big = 300 * 1024;
    char *image = calloc(1, big);
    for (int i = 10; i < 20; i++) {
        cache_key k = key_of(i);
        image[0] = (char)i;
        assert_ok(NULL, disk_cache_write(c, &k, image, big, true));
        /* distinct mtimes so least-recent use is well defined */
        char path[1024];
        entry_file(&k, path, sizeof path);
        struct timespec times[2] = {{.tv_sec = 1000000 + i}, {.tv_sec = 1000000 + i}};
        utimensat(AT_FDCWD, path, times, 0);
    }
    size_t total = 0, count = 0;
    for (int i = 10; i < 20; i++) {
        char path[1024];
        cache_key k = key_of(i);
        entry_file(&k, path, sizeof path);
        struct stat st;
        if (stat(path, &st) == 0) {
            total += (size_t)st.st_size;
            count++;
        }
    }
    assert_true(total <= (1u << 20));
    assert_true(count >= 2);
    /* the newest entry survived */
    cache_key newest = key_of(19);
    char path[1024];
    entry_file(&newest, path, sizeof path);
    assert_int_equal(access(path, F_OK), 0);
    free(image);
    disk_cache_close(c);
}

/* Several processes compile the same kernel with NVRTC and store it at the
 * same moment, as kernel_get does on a miss; the cache must end valid. */
static void concurrent_writers(void **state) {
    (void)state;
    if (!ptxkit_jit_available()) skip();
    const char *defines[] = {"BLOCK_SIZE=128", "LOAD_OP=1", "UNROLL=2"};
    cache_key k = cache_key_for("copy", defines, 3, 90, 13000);
    int go[2];
    assert_int_equal(pipe(go), 0);
    enum { WRITERS = 6 };
    pid_t pids[WRITERS];
    for (int i = 0; i < WRITERS; i++) {
        pids[i] = fork();
        if (pids[i] == 0) {
            char byte;
            close(go[1]);
            compile_output out;
            if (compile_family(NULL, "copy", defines, 3, 90, false, NULL, 0, &out) != PTXKIT_SUCCESS) _exit(2);
            if (read(go[0], &byte, 1) < 0) _exit(3); /* all start writing together */
            disk_cache *c = disk_cache_open(dir);
            for (int rep = 0; rep < 20; rep++) {
                if (disk_cache_write(c, &k, out.image, out.size, out.is_cubin) != PTXKIT_SUCCESS) _exit(4);
                void *data;
                size_t size;
                bool cubin;
                /* a reader racing the writers sees a whole entry or none */
                if (disk_cache_read(c, &k, &data, &size, &cubin)) {
                    if (size != out.size || memcmp(data, out.image, size) != 0) _exit(5);
                    free(data);
                }
            }
            _exit(0);
        }
    }
    close(go[0]);
    sleep(1);
    close(go[1]); /* EOF releases every writer at once */
    for (int i = 0; i < WRITERS; i++) {
        int status;
        assert_int_equal(waitpid(pids[i], &status, 0), pids[i]);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
    }
    disk_cache *c = disk_cache_open(dir);
    void *data;
    size_t size;
    bool cubin;
    assert_true(disk_cache_read(c, &k, &data, &size, &cubin));
    assert_true(cubin);
    assert_memory_equal(data, "\x7f" "ELF", 4);
    free(data);
    /* no temporary files left behind */
    char hex[33], shard[700];
    cache_key_hex(&k, hex);
    snprintf(shard, sizeof shard, "%s/%.2s", dir, hex);
    DIR *d = opendir(shard);
    struct dirent *e;
    int files = 0;
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] != '.') {
            files++;
            assert_null(strstr(e->d_name, ".tmp."));
        }
    closedir(d);
    assert_int_equal(files, 1);
    disk_cache_close(c);
}

static void disabled_by_environment(void **state) {
    (void)state;
    setenv("PTXKIT_CACHE", "off", 1);
    assert_null(disk_cache_open(NULL));
    char buf[64] = "x";
    assert_ok(NULL, ptxkit_cache_dir(buf, sizeof buf));
    assert_string_equal(buf, "");
    unsetenv("PTXKIT_CACHE");
    setenv("PTXKIT_CACHE_DIR", "/tmp/somewhere", 1);
    assert_ok(NULL, ptxkit_cache_dir(buf, sizeof buf));
    assert_string_equal(buf, "/tmp/somewhere");
    unsetenv("PTXKIT_CACHE_DIR");
    setenv("XDG_CACHE_HOME", "/tmp/xdg", 1);
    assert_ok(NULL, ptxkit_cache_dir(buf, sizeof buf));
    assert_string_equal(buf, "/tmp/xdg/ptxkit");
}

/* The cache and state directories follow the XDG base-directory rules: a
 * relative XDG variable is ignored, and without an absolute HOME the home
 * directory comes from the password database. The cache switch does not
 * touch the state directory. */
static void xdg_rules(void **state) {
    (void)state;
    char buf[4096], home[4096];
    const char *saved_home = getenv("HOME");
    snprintf(home, sizeof home, "%s", saved_home ? saved_home : "");
    unsetenv("PTXKIT_CACHE_DIR");
    unsetenv("PTXKIT_STATE_DIR");
    setenv("HOME", "/home/someone", 1);
    setenv("XDG_CACHE_HOME", "/x/cache", 1);
    setenv("XDG_STATE_HOME", "/x/state", 1);
    assert_true(cache_dir_configured(buf, sizeof buf));
    assert_string_equal(buf, "/x/cache/ptxkit");
    assert_true(state_dir_configured(buf, sizeof buf));
    assert_string_equal(buf, "/x/state/ptxkit");
    setenv("XDG_CACHE_HOME", "relative/cache", 1); /* ignored, as XDG says */
    setenv("XDG_STATE_HOME", "", 1);
    assert_true(cache_dir_configured(buf, sizeof buf));
    assert_string_equal(buf, "/home/someone/.cache/ptxkit");
    assert_true(state_dir_configured(buf, sizeof buf));
    assert_string_equal(buf, "/home/someone/.local/state/ptxkit");
    setenv("PTXKIT_STATE_DIR", "/mine", 1);
    setenv("PTXKIT_CACHE", "off", 1); /* the cache off: the state stays */
    assert_true(state_dir_configured(buf, sizeof buf));
    assert_string_equal(buf, "/mine");
    unsetenv("PTXKIT_CACHE");
    unsetenv("PTXKIT_STATE_DIR");
    /* no HOME (a service's environment): the password database's */
    unsetenv("HOME");
    struct passwd *pw = getpwuid(getuid());
    if (pw && pw->pw_dir && pw->pw_dir[0] == '/') {
        char want[4200];
        assert_true(state_dir_configured(buf, sizeof buf));
        snprintf(want, sizeof want, "%s/.local/state/ptxkit", pw->pw_dir);
        assert_string_equal(buf, want);
        setenv("HOME", "not/absolute", 1);
        assert_true(cache_dir_configured(buf, sizeof buf));
        snprintf(want, sizeof want, "%s/.cache/ptxkit", pw->pw_dir);
        assert_string_equal(buf, want);
    }
    if (saved_home) setenv("HOME", home, 1);
    else unsetenv("HOME");
    unsetenv("XDG_CACHE_HOME");
    unsetenv("XDG_STATE_HOME");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(round_trip, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(corrupt_file, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(damaged_header, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(truncated_file, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(foreign_file, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(empty_entry, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(misplaced_file, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(size_cap_evicts_oldest, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(concurrent_writers, make_dir, remove_dir),
        cmocka_unit_test(disabled_by_environment),
        cmocka_unit_test(xdg_rules),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
