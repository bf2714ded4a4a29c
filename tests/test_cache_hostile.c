/* The kernel cache, the NVRTC identity record and the tuning database on a
 * hostile file system: FIFOs, directories, symbolic links to devices, sparse
 * files, a cache directory that is a file, bad PTXKIT_CACHE_MAX_MB values.
 * Each is refused, removed or reported; nothing blocks (an alarm fails a
 * test that would hang). Keys are made by hand: cache_key_for would compute
 * the NVRTC identity in this process, and one test needs that fresh in a
 * child. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cache_meta.h"
#include "family_key.h"
#include "runtime/cache_key.h"
#include "runtime/disk_cache.h"
#include "test_util.h"
#include "tune/record.h"
#include "tuned/db.h"

static char root[256], dir[512];

static int make_dirs(void **state) {
    (void)state;
    snprintf(root, sizeof root, "/tmp/ptxkit-hostile-XXXXXX");
    if (!mkdtemp(root)) return -1;
    snprintf(dir, sizeof dir, "%s/cache", root);
    return mkdir(dir, 0755);
}

static int remove_dirs(void **state) {
    (void)state;
    alarm(0);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    return system(cmd) == 0 ? 0 : -1;
}

/* A test that blocks dies by SIGALRM instead of hanging the suite. */
static void no_hang(void) { alarm(20); }

static cache_key key_n(int n) {
    cache_key k;
    for (int i = 0; i < 16; i++) k.bytes[i] = (unsigned char)(n * 17 + i * 31);
    return k;
}

static void entry_of(const cache_key *k, const char *suffix, char *shard, size_t shard_size, char *path, size_t size) {
    char hex[33];
    cache_key_hex(k, hex);
    snprintf(shard, shard_size, "%s/%.2s", dir, hex);
    snprintf(path, size, "%s/%s.%s", shard, hex, suffix);
}

/* After the damage at the path of one of the entry's files: a miss, the
 * thing removed (never followed), and a write then a read that work. */
static void check_entry_recovers(const cache_key *k, const char *path) {
    disk_cache *c = disk_cache_open(dir);
    assert_non_null(c);
    void *data = NULL;
    size_t size;
    bool cubin;
    assert_false(disk_cache_read(c, k, &data, &size, &cubin));
    struct stat st;
    assert_int_not_equal(lstat(path, &st), 0);
    assert_ok(NULL, disk_cache_write(c, k, "image", 5, true));
    assert_true(disk_cache_read(c, k, &data, &size, &cubin));
    assert_int_equal(size, 5);
    assert_memory_equal(data, "image", 5);
    free(data);
    disk_cache_close(c);
}

/* Puts make's hostile thing where the entry's metadata belongs (no entry),
 * then where the image of a valid entry belongs, and checks that each is
 * a miss and is removed. */
static void hostile_in_place(int n, void (*make)(const char *path)) {
    static const char *const files[] = {"meta", "cubin"};
    for (int i = 0; i < 2; i++) {
        cache_key k = key_n(n * 2 + i);
        char shard[600], path[700];
        entry_of(&k, files[i], shard, sizeof shard, path, sizeof path);
        if (i == 0) {
            assert_int_equal(mkdir(shard, 0755), 0);
        } else {
            disk_cache *c = disk_cache_open(dir);
            assert_ok(NULL, disk_cache_write(c, &k, "image", 5, true));
            disk_cache_close(c);
            assert_int_equal(unlink(path), 0);
        }
        make(path);
        check_entry_recovers(&k, path);
    }
}

static void make_fifo(const char *path) { assert_int_equal(mkfifo(path, 0644), 0); }
static void make_directory(const char *path) {
    char inner[800];
    assert_int_equal(mkdir(path, 0755), 0);
    snprintf(inner, sizeof inner, "%s/file", path);
    FILE *f = fopen(inner, "w");
    fclose(f);
}
static void make_link_to_device(const char *path) { assert_int_equal(symlink("/dev/zero", path), 0); }

static void entry_is_a_fifo(void **state) {
    (void)state;
    no_hang();
    hostile_in_place(1, make_fifo);
}

/* A directory in an entry's place was a permanent miss whose writes failed. */
static void entry_is_a_directory(void **state) {
    (void)state;
    no_hang();
    hostile_in_place(2, make_directory);
    /* and a directory that appears between a read and a write, in the place
     * of each file a write renames into place */
    static const char *const files[] = {"meta", "cubin", "names"};
    disk_cache *c = disk_cache_open(dir);
    for (int i = 0; i < 3; i++) {
        cache_key k = key_n(20 + i);
        char shard[600], path[700];
        entry_of(&k, files[i], shard, sizeof shard, path, sizeof path);
        assert_int_equal(mkdir(shard, 0755), 0);
        make_directory(path);
        assert_ok(NULL, disk_cache_write_entry(c, &k, "image", 5, true, DISK_CACHE_FAMILY, "name"));
        void *data;
        size_t size;
        bool cubin;
        assert_true(disk_cache_read(c, &k, &data, &size, &cubin));
        free(data);
    }
    disk_cache_close(c);
}

static void entry_is_a_link_to_a_device(void **state) {
    (void)state;
    no_hang();
    hostile_in_place(3, make_link_to_device);
    struct stat st;
    assert_int_equal(stat("/dev/zero", &st), 0);
    assert_true(S_ISCHR(st.st_mode));
}

/* Consistent metadata over a sparse image larger than the cap is refused
 * before the image is read (it cost seconds and gigabytes); so is a sparse
 * metadata file. */
static void sparse_entry_over_the_cap(void **state) {
    (void)state;
    no_hang();
    setenv("PTXKIT_CACHE_MAX_MB", "1", 1);
    disk_cache *c = disk_cache_open(dir);
    unsetenv("PTXKIT_CACHE_MAX_MB");
    cache_key k = key_n(4);
    assert_ok(NULL, disk_cache_write(c, &k, "x", 1, true));
    char shard[600], path[700], meta[700];
    entry_of(&k, "cubin", shard, sizeof shard, path, sizeof path);
    entry_of(&k, "meta", shard, sizeof shard, meta, sizeof meta);
    unsigned long long big = 2ull << 30; /* 2 GiB */
    assert_int_equal(truncate(path, (off_t)big), 0);
    char text[1024];
    size_t n = cache_meta_text(&k, true, "program", big, 0, 0, 0, text, sizeof text);
    assert_true(n > 0 && cache_meta_put(meta, text, n));
    void *data = NULL;
    size_t size;
    bool cubin;
    assert_false(disk_cache_read(c, &k, &data, &size, &cubin));
    assert_null(data);
    assert_int_not_equal(access(path, F_OK), 0);
    assert_int_not_equal(access(meta, F_OK), 0);
    assert_ok(NULL, disk_cache_write(c, &k, "x", 1, true));
    assert_int_equal(truncate(meta, 2ll << 30), 0);
    assert_false(disk_cache_read(c, &k, &data, &size, &cubin));
    assert_int_not_equal(access(meta, F_OK), 0);
    disk_cache_close(c);
}

/* The cap's environment variable: a value that overflowed `mb << 20`
 * (2^44 gave a cap of 0: every write emptied the cache) or that strtoull
 * bent into range (-1: no cap) is refused with a reason and the default
 * used. */
static void cache_max_mb_checked(void **state) {
    (void)state;
    static const char *const bad[] = {"17592186044416", "-1", "abc", "0", "512MB", " 5", "5 ", "+5", "0x10",
                                      "18446744073709551615", "4294967297", "99999999999999999999999"};
    char note[256];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        setenv("PTXKIT_CACHE_MAX_MB", bad[i], 1);
        assert_int_equal(disk_cache_cap_from_env(note, sizeof note), 512ull << 20);
        if (!strstr(note, "PTXKIT_CACHE_MAX_MB") || !strstr(note, "ignored"))
            fail_msg("'%s': the note says '%s'", bad[i], note);
    }
    static const struct {
        const char *text;
        unsigned long long mb;
    } good[] = {{"1", 1}, {"512", 512}, {"007", 7}, {"4294967296", 4294967296ull}};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        setenv("PTXKIT_CACHE_MAX_MB", good[i].text, 1);
        assert_int_equal(disk_cache_cap_from_env(note, sizeof note), good[i].mb << 20);
        assert_string_equal(note, "");
    }
    unsetenv("PTXKIT_CACHE_MAX_MB");
    assert_int_equal(disk_cache_cap_from_env(note, sizeof note), 512ull << 20);
    assert_string_equal(note, "");
    /* the wrapped value no longer empties the cache on every write */
    setenv("PTXKIT_CACHE_MAX_MB", "17592186044416", 1);
    disk_cache *c = disk_cache_open(dir);
    unsetenv("PTXKIT_CACHE_MAX_MB");
    cache_key k = key_n(5);
    assert_ok(NULL, disk_cache_write(c, &k, "kept", 4, true));
    void *data;
    size_t size;
    bool cubin;
    assert_true(disk_cache_read(c, &k, &data, &size, &cubin));
    free(data);
    disk_cache_close(c);
}

/* A cache directory that is a regular file is an error, not an empty cache. */
static void cache_dir_is_a_file(void **state) {
    (void)state;
    char file[600];
    snprintf(file, sizeof file, "%s/plain", root);
    FILE *f = fopen(file, "w");
    fclose(f);
    setenv("PTXKIT_CACHE_DIR", file, 1);
    size_t files = 7, bytes = 7;
    assert_status(PTXKIT_ERROR_IO, ptxkit_cache_stats_get(&files, &bytes));
    assert_non_null(strstr(ptxkit_last_error(), "not a directory"));
    assert_int_equal(files, 0);
    assert_status(PTXKIT_ERROR_IO, ptxkit_cache_purge());
    disk_cache *c = disk_cache_open(NULL);
    cache_key k = key_n(6);
    assert_status(PTXKIT_ERROR_IO, disk_cache_write(c, &k, "x", 1, true));
    disk_cache_close(c);
    /* a missing directory is an empty cache */
    snprintf(file, sizeof file, "%s/not-yet", root);
    setenv("PTXKIT_CACHE_DIR", file, 1);
    assert_ok(NULL, ptxkit_cache_stats_get(&files, &bytes));
    assert_int_equal(files, 0);
    unsetenv("PTXKIT_CACHE_DIR");
}

/* The scan took ".." for a shard: purge removed *.bin files beside the
 * cache directory (now any name a cache file could have). */
static void purge_stays_inside(void **state) {
    (void)state;
    char victim[600];
    snprintf(victim, sizeof victim, "%s/00112233445566778899aabbccddeeff.cubin", root);
    FILE *f = fopen(victim, "w");
    fclose(f);
    disk_cache *c = disk_cache_open(dir);
    cache_key k = key_n(7);
    assert_ok(NULL, disk_cache_write(c, &k, "x", 1, true));
    disk_cache_close(c);
    setenv("PTXKIT_CACHE_DIR", dir, 1);
    size_t files, bytes;
    assert_ok(NULL, ptxkit_cache_stats_get(&files, &bytes));
    assert_int_equal(files, 1);
    assert_ok(NULL, ptxkit_cache_purge());
    unsetenv("PTXKIT_CACHE_DIR");
    assert_int_equal(access(victim, F_OK), 0);
}

/* The identity record is read inside pthread_once: a FIFO there blocked the
 * whole process. In a child, so the identity is computed afresh. */
static void identity_record_is_a_fifo(void **state) {
    (void)state;
    char record[600];
    snprintf(record, sizeof record, "%s/nvrtc-identity", dir);
    assert_int_equal(mkfifo(record, 0644), 0);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        alarm(20);
        setenv("PTXKIT_CACHE_DIR", dir, 1);
        const char *defines[] = {"N=1"};
        cache_key k = cache_key_for("copy", defines, 1, 90, 13000);
        (void)k;
        _exit(0);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        fail_msg("cache_key_for with a FIFO as the identity record: %s %d",
                 WIFSIGNALED(status) ? "killed by signal" : "exit", WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
}

/* The tuning database (load, store under its lock, the lock itself): a
 * FIFO or a link to a device is reported, never waited on, never renamed. */
static void tune_db_not_a_file(void **state) {
    (void)state;
    no_hang();
    char path[600], msg[640], lock[700];
    tune_db db;
    tune_db_init(&db);
    tune_db_entry e;
    memset(&e, 0, sizeof e);
    tune_db_key_make(&e.key, "GPU", 90, 132, 13000, 13, 0, "0.1.0");
    snprintf(e.family, sizeof e.family, "copy");
    snprintf(e.variant, sizeof e.variant, "bytes");
    e.bucket = 20;

    snprintf(path, sizeof path, "%s/fifo.db", root);
    assert_int_equal(mkfifo(path, 0644), 0);
    assert_status(PTXKIT_ERROR_IO, tune_db_load(path, &db, msg, sizeof msg));
    assert_non_null(strstr(msg, "not a regular file"));
    assert_status(PTXKIT_ERROR_IO, tune_db_store(path, &e, 1, NULL, msg, sizeof msg));
    struct stat st;
    assert_int_equal(lstat(path, &st), 0);
    assert_true(S_ISFIFO(st.st_mode)); /* left where it is */

    snprintf(path, sizeof path, "%s/null.db", root);
    assert_int_equal(symlink("/dev/null", path), 0);
    assert_status(PTXKIT_ERROR_IO, tune_db_load(path, &db, msg, sizeof msg));
    assert_status(PTXKIT_ERROR_IO, tune_db_store(path, &e, 1, NULL, msg, sizeof msg));
    assert_int_equal(lstat(path, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    assert_int_equal(stat("/dev/null", &st), 0);
    assert_true(S_ISCHR(st.st_mode));

    snprintf(path, sizeof path, "%s/locked.db", root);
    snprintf(lock, sizeof lock, "%s.lock", path);
    assert_int_equal(mkfifo(lock, 0644), 0);
    assert_status(PTXKIT_ERROR_IO, tune_db_store(path, &e, 1, NULL, msg, sizeof msg));
    assert_non_null(strstr(msg, "not a regular file"));

    /* a directory: reported, and a store does not move it aside */
    snprintf(path, sizeof path, "%s/dir.db", root);
    assert_int_equal(mkdir(path, 0755), 0);
    assert_status(PTXKIT_ERROR_IO, tune_db_load(path, &db, msg, sizeof msg));
    assert_status(PTXKIT_ERROR_IO, tune_db_store(path, &e, 1, NULL, msg, sizeof msg));
    assert_int_equal(stat(path, &st), 0);
    assert_true(S_ISDIR(st.st_mode));
    tune_db_clear(&db);
}

/* Every path the environment names (PTXKIT_NVRTC_PATH, PTXKIT_CACHE_DIR,
 * XDG_CACHE_HOME, PTXKIT_STATE_DIR, XDG_STATE_HOME, HOME, PTXKIT_TUNE_DB,
 * PTXKIT_TUNE_RECORD,
 * PTXKIT_DUMP_SOURCE) as a FIFO or a directory: every use of it returns,
 * with a status where the call has one. A FIFO as PTXKIT_NVRTC_PATH was
 * opened blocking by dlopen, inside pthread_once, forever. In a new process
 * each, so NVRTC and its identity are looked up afresh. */
static void path_variables_fifo_or_directory(void **state) {
    (void)state;
    static const char *const variables[] = {"PTXKIT_NVRTC_PATH", "PTXKIT_CACHE_DIR",   "XDG_CACHE_HOME",
                                            "PTXKIT_STATE_DIR",  "XDG_STATE_HOME",     "HOME",
                                            "PTXKIT_TUNE_DB",    "PTXKIT_TUNE_RECORD", "PTXKIT_DUMP_SOURCE"};
    for (size_t v = 0; v < sizeof variables / sizeof variables[0]; v++)
        for (int kind = 0; kind < 2; kind++) {
            char path[600];
            snprintf(path, sizeof path, "%s/%s-%s", root, variables[v], kind ? "dir" : "fifo");
            assert_int_equal(kind ? mkdir(path, 0755) : mkfifo(path, 0644), 0);
            fflush(NULL);
            pid_t pid = fork();
            assert_true(pid >= 0);
            if (pid == 0) {
                alarm(20);
                /* the other cache-directory variables out of the way, so the one tested decides */
                if (strcmp(variables[v], "PTXKIT_CACHE_DIR") != 0) unsetenv("PTXKIT_CACHE_DIR");
                if (strcmp(variables[v], "XDG_CACHE_HOME") != 0) unsetenv("XDG_CACHE_HOME");
                if (strcmp(variables[v], "PTXKIT_STATE_DIR") != 0) unsetenv("PTXKIT_STATE_DIR");
                if (strcmp(variables[v], "XDG_STATE_HOME") != 0) unsetenv("XDG_STATE_HOME");
                if (strcmp(variables[v], "HOME") != 0) setenv("HOME", dir, 1);
                setenv(variables[v], path, 1);
                execl("/proc/self/exe", "path-variable-child", variables[v], (char *)NULL);
                _exit(3);
            }
            int status = 0;
            assert_int_equal(waitpid(pid, &status, 0), pid);
            if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
                fail_msg("%s as a %s: %s %d", variables[v], kind ? "directory" : "FIFO",
                         WIFSIGNALED(status) ? "killed by signal" : "exit",
                         WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
        }
}

/* path_variables_fifo_or_directory's process: every use of the paths. */
static int path_variable_child(const char *variable) {
    const char *path = getenv(variable);
    struct stat st;
    bool fifo = stat(path, &st) == 0 && S_ISFIFO(st.st_mode);
    int jit = ptxkit_jit_available();
    if (strcmp(variable, "PTXKIT_NVRTC_PATH") == 0 &&
        (jit || !strstr(ptxkit_last_error(), "not a regular file"))) {
        fprintf(stderr, "PTXKIT_NVRTC_PATH=%s: available %d, %s\n", path, jit, ptxkit_last_error());
        return 1;
    }
    const char *defines[] = {"N=1"};
    cache_key k = cache_key_for("copy", defines, 1, 90, 13000);
    disk_cache *c = disk_cache_open(NULL);
    if (c) {
        disk_cache_write(c, &k, "x", 1, false);
        void *image = NULL;
        size_t size;
        bool cubin;
        if (disk_cache_read(c, &k, &image, &size, &cubin)) free(image);
        disk_cache_close(c);
    }
    size_t files, bytes;
    ptxkit_cache_stats_get(&files, &bytes);
    char db_path[4096], msg[640];
    tune_db db;
    tune_db_init(&db);
    if (tune_db_default_path(db_path, sizeof db_path)) {
        ptxkit_status load = tune_db_load(db_path, &db, msg, sizeof msg);
        tune_db_entry e;
        memset(&e, 0, sizeof e);
        tune_db_key_make(&e.key, "GPU", 90, 132, 13000, 13, 0, "0.1.0");
        snprintf(e.family, sizeof e.family, "copy");
        snprintf(e.variant, sizeof e.variant, "bytes");
        ptxkit_status store = tune_db_store(db_path, &e, 1, NULL, msg, sizeof msg);
        if (strcmp(variable, "PTXKIT_TUNE_DB") == 0 && (load != PTXKIT_ERROR_IO || store != PTXKIT_ERROR_IO)) {
            fprintf(stderr, "PTXKIT_TUNE_DB as a %s: load %d, store %d\n", fifo ? "FIFO" : "directory", load, store);
            return 1;
        }
    }
    tune_db_clear(&db);
    tune_record r;
    tune_record_init(&r);
    char record_path[4096];
    if (tune_record_default_path(record_path, sizeof record_path)) {
        ptxkit_status load = tune_record_load(record_path, NULL, &r, msg, sizeof msg);
        tune_record_line line;
        memset(&line, 0, sizeof line);
        line.key = (tune_db_key){.device = "GPU"};
        snprintf(line.family, sizeof line.family, "copy");
        snprintf(line.variant, sizeof line.variant, "bytes");
        ptxkit_status append = tune_record_append(record_path, &line, msg, sizeof msg);
        if (strcmp(variable, "PTXKIT_TUNE_RECORD") == 0 && (load != PTXKIT_ERROR_IO || append != PTXKIT_ERROR_IO)) {
            fprintf(stderr, "PTXKIT_TUNE_RECORD as a %s: load %d, append %d\n", fifo ? "FIFO" : "directory", load,
                    append);
            return 1;
        }
    }
    tune_record_clear(&r);
    if (jit) { /* a compile error writes PTXKIT_DUMP_SOURCE's dump */
        ptxkit_program *p;
        ptxkit_compiled out;
        if (ptxkit_program_create("bad.cu", "this is not C++", NULL, 0, &p) == PTXKIT_SUCCESS) {
            ptxkit_program_compile(p, NULL, NULL, 0, 90, 1, &out);
            ptxkit_program_compiled_free(&out);
            ptxkit_program_destroy(p);
        }
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 2 && strcmp(argv[0], "path-variable-child") == 0) return path_variable_child(argv[1]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(identity_record_is_a_fifo, make_dirs, remove_dirs),
        cmocka_unit_test_setup_teardown(entry_is_a_fifo, make_dirs, remove_dirs),
        cmocka_unit_test_setup_teardown(entry_is_a_directory, make_dirs, remove_dirs),
        cmocka_unit_test_setup_teardown(entry_is_a_link_to_a_device, make_dirs, remove_dirs),
        cmocka_unit_test_setup_teardown(sparse_entry_over_the_cap, make_dirs, remove_dirs),
        cmocka_unit_test_setup_teardown(cache_max_mb_checked, make_dirs, remove_dirs),
        cmocka_unit_test_setup_teardown(cache_dir_is_a_file, make_dirs, remove_dirs),
        cmocka_unit_test_setup_teardown(purge_stays_inside, make_dirs, remove_dirs),
        cmocka_unit_test_setup_teardown(tune_db_not_a_file, make_dirs, remove_dirs),
        cmocka_unit_test_setup_teardown(path_variables_fifo_or_directory, make_dirs, remove_dirs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
