/* The kernel cache and the tuning database on a hostile file system:
 * unreadable files and directories (as a non-root user: root reads
 * anything), a read-only file system, a full one (RLIMIT_FSIZE, and a small
 * tmpfs), a database that is a 2 GB sparse file or a link to /dev/zero.
 * Each gives a clear status or is ignored; nothing hangs or crashes, and no
 * half-written file is left where another process could read it. The cases
 * run in a child process (switched to the user "nobody" when run as root,
 * in a private mount namespace for the mounts) and are skipped, exit 77 from
 * the child, where that is not possible. */
#include <dirent.h>
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "runtime/cache_key.h"
#include "runtime/disk_cache.h"
#include "test_util.h"
#include "tuned/db.h"

static char root[256];

/* In the child: a failed check names itself and exits 1. */
#define CHECK(cond)                                                               \
    do {                                                                          \
        if (!(cond)) {                                                            \
            fprintf(stderr, "%s:%d: check failed: %s (last error: %s)\n", __FILE__, __LINE__, #cond, \
                    ptxkit_last_error());                                     \
            _exit(1);                                                             \
        }                                                                         \
    } while (0)

enum { AS_NOBODY = 1, NEW_MOUNTS = 2 };

static void run_child(void (*body)(void), int flags) {
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        alarm(60); /* a hang fails instead of blocking the suite */
        if ((flags & NEW_MOUNTS) &&
            (unshare(CLONE_NEWNS) != 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)) {
            printf("skipped: no private mount namespace here (%s)\n", strerror(errno));
            _exit(77);
        }
        if ((flags & AS_NOBODY) && geteuid() == 0) {
            struct passwd *pw = getpwnam("nobody");
            if (!pw || setgroups(0, NULL) != 0 || setgid(pw->pw_gid) != 0 || setuid(pw->pw_uid) != 0) {
                printf("skipped: running as root and no user 'nobody' to switch to\n");
                _exit(77);
            }
        }
        body();
        _exit(0);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 77) skip();
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        fail_msg("child %s %d", WIFSIGNALED(status) ? "killed by signal" : "exited",
                 WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
}

static int make_root(void **state) {
    (void)state;
    snprintf(root, sizeof root, "/tmp/ptxkit-fs-XXXXXX");
    if (!mkdtemp(root)) return -1;
    return chmod(root, 0777); /* the child may be "nobody" */
}

static int remove_root(void **state) {
    (void)state;
    char cmd[600];
    snprintf(cmd, sizeof cmd, "chmod -R u+rwx '%s' 2>/dev/null; rm -rf '%s'", root, root);
    return system(cmd) == 0 ? 0 : -1;
}

static cache_key key_n(int n) {
    cache_key k;
    for (int i = 0; i < 16; i++) k.bytes[i] = (unsigned char)(n * 29 + i * 7);
    return k;
}

/* The path of one of an entry's files ("meta", "cubin"). */
static void entry_path(const char *dir, const cache_key *k, const char *suffix, char *path, size_t size) {
    char hex[33];
    cache_key_hex(k, hex);
    snprintf(path, size, "%s/%.2s/%s.%s", dir, hex, hex, suffix);
}

static tune_db_entry sample_entry(int bucket) {
    tune_db_entry e;
    memset(&e, 0, sizeof e);
    tune_db_key_make(&e.key, "GPU", 90, 132, 13000, 13, 0, "0.1.0");
    snprintf(e.family, sizeof e.family, "copy");
    snprintf(e.variant, sizeof e.variant, "bytes");
    e.bucket = bucket;
    e.gbs = 100;
    e.when = 1763850000;
    return e;
}

/* No "*.tmp.*" file anywhere under dir: a failed write leaves nothing. */
static bool no_temporaries(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) return true;
    bool clean = true;
    struct dirent *e;
    while (clean && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat st;
        if (strstr(e->d_name, ".tmp.")) clean = false;
        else if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode)) clean = no_temporaries(path);
    }
    closedir(d);
    return clean;
}

/* ---- unreadable, as a user that permissions apply to ----------------- */

static void unreadable_body(void) {
    char dir[512], path[600], msg[640];
    void *image;
    size_t size;
    bool cubin;
    /* a cache directory nobody may read or write */
    snprintf(dir, sizeof dir, "%s/locked-cache", root);
    CHECK(mkdir(dir, 0755) == 0 && chmod(dir, 0) == 0);
    setenv("PTXKIT_CACHE_DIR", dir, 1);
    size_t files, bytes;
    CHECK(ptxkit_cache_stats_get(&files, &bytes) == PTXKIT_ERROR_IO);
    CHECK(strstr(ptxkit_last_error(), "Permission denied"));
    disk_cache *c = disk_cache_open(dir);
    cache_key k = key_n(1);
    CHECK(!disk_cache_read(c, &k, &image, &size, &cubin));
    CHECK(disk_cache_write(c, &k, "x", 1, true) == PTXKIT_ERROR_IO);
    disk_cache_close(c);
    unsetenv("PTXKIT_CACHE_DIR");
    /* an unreadable file of an entry (its metadata, its image) is a miss;
     * a write replaces it */
    snprintf(dir, sizeof dir, "%s/cache", root);
    c = disk_cache_open(dir);
    static const char *const kinds[] = {"meta", "cubin"};
    for (int i = 0; i < 2; i++) {
        CHECK(disk_cache_write(c, &k, "image", 5, true) == PTXKIT_SUCCESS);
        entry_path(dir, &k, kinds[i], path, sizeof path);
        CHECK(chmod(path, 0) == 0);
        CHECK(!disk_cache_read(c, &k, &image, &size, &cubin));
        CHECK(disk_cache_write(c, &k, "image", 5, true) == PTXKIT_SUCCESS);
        CHECK(disk_cache_read(c, &k, &image, &size, &cubin) && size == 5);
        free(image);
    }
    disk_cache_close(c);
    /* an unreadable database: an I/O error naming it, left as it is */
    snprintf(path, sizeof path, "%s/tune.db", root);
    tune_db_entry e = sample_entry(20);
    CHECK(tune_db_store(path, &e, 1, NULL, msg, sizeof msg) == PTXKIT_SUCCESS);
    CHECK(chmod(path, 0) == 0);
    tune_db db;
    tune_db_init(&db);
    CHECK(tune_db_load(path, &db, msg, sizeof msg) == PTXKIT_ERROR_IO && strstr(msg, "Permission denied"));
    CHECK(tune_db_store(path, &e, 1, NULL, msg, sizeof msg) == PTXKIT_ERROR_IO);
    struct stat st;
    CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0);
    /* a database whose directory is read-only: the store fails, the file stays whole */
    snprintf(dir, sizeof dir, "%s/ro-dir", root);
    snprintf(path, sizeof path, "%s/tune.db", dir);
    CHECK(mkdir(dir, 0755) == 0);
    CHECK(tune_db_store(path, &e, 1, NULL, msg, sizeof msg) == PTXKIT_SUCCESS);
    CHECK(chmod(dir, 0555) == 0);
    tune_db_entry f = sample_entry(21);
    CHECK(tune_db_store(path, &f, 1, NULL, msg, sizeof msg) == PTXKIT_ERROR_IO && msg[0]);
    CHECK(tune_db_load(path, &db, msg, sizeof msg) == PTXKIT_SUCCESS && db.count == 1);
    tune_db_clear(&db);
    CHECK(no_temporaries(root));
}

static void unreadable(void **state) {
    (void)state;
    run_child(unreadable_body, AS_NOBODY);
}

/* ---- a read-only file system --------------------------------------------- */

static void read_only_body(void) {
    char dir[512], cache_dir[600], db_path[600], msg[640];
    snprintf(dir, sizeof dir, "%s/ro", root);
    CHECK(mkdir(dir, 0755) == 0);
    if (mount("tmpfs", dir, "tmpfs", 0, "size=4m") != 0) {
        printf("skipped: cannot mount a tmpfs here (%s)\n", strerror(errno));
        _exit(77);
    }
    snprintf(cache_dir, sizeof cache_dir, "%s/cache", dir);
    snprintf(db_path, sizeof db_path, "%s/tune.db", dir);
    disk_cache *c = disk_cache_open(cache_dir);
    cache_key k = key_n(2), other = key_n(3);
    tune_db_entry e = sample_entry(20);
    CHECK(disk_cache_write(c, &k, "image", 5, true) == PTXKIT_SUCCESS);
    CHECK(tune_db_store(db_path, &e, 1, NULL, msg, sizeof msg) == PTXKIT_SUCCESS);
    CHECK(mount(NULL, dir, NULL, MS_REMOUNT | MS_RDONLY, NULL) == 0);
    void *image;
    size_t size;
    bool cubin;
    CHECK(disk_cache_read(c, &k, &image, &size, &cubin) && size == 5); /* reads still work */
    free(image);
    CHECK(disk_cache_write(c, &other, "x", 1, true) == PTXKIT_ERROR_IO);
    CHECK(strstr(ptxkit_last_error(), "Read-only file system"));
    size_t files, bytes;
    setenv("PTXKIT_CACHE_DIR", cache_dir, 1);
    CHECK(ptxkit_cache_stats_get(&files, &bytes) == PTXKIT_SUCCESS && files == 1);
    CHECK(ptxkit_cache_purge() == PTXKIT_ERROR_IO);
    unsetenv("PTXKIT_CACHE_DIR");
    tune_db db;
    tune_db_init(&db);
    CHECK(tune_db_load(db_path, &db, msg, sizeof msg) == PTXKIT_SUCCESS && db.count == 1);
    tune_db_entry f = sample_entry(21);
    CHECK(tune_db_store(db_path, &f, 1, NULL, msg, sizeof msg) == PTXKIT_ERROR_IO && strstr(msg, "Read-only"));
    tune_db_clear(&db);
    disk_cache_close(c);
}

static void read_only_file_system(void **state) {
    (void)state;
    run_child(read_only_body, NEW_MOUNTS);
}

/* ---- a full file system ------------------------------------------------ */

static void check_full(const char *dir, const char *db_path) {
    char msg[640];
    disk_cache *c = disk_cache_open(dir);
    cache_key k = key_n(4);
    size_t big = 256 * 1024;
    char *image = calloc(1, big);
    CHECK(disk_cache_write(c, &k, image, big, true) == PTXKIT_ERROR_IO);
    void *back;
    size_t size;
    bool cubin;
    char path[700];
    entry_path(dir, &k, "meta", path, sizeof path);
    CHECK(access(path, F_OK) != 0); /* no partial entry: no metadata, no image */
    entry_path(dir, &k, "cubin", path, sizeof path);
    CHECK(access(path, F_OK) != 0);
    CHECK(!disk_cache_read(c, &k, &back, &size, &cubin));
    free(image);
    disk_cache_close(c);
    /* the database: the old file stays whole when the new one cannot be written */
    tune_db_entry many[600];
    for (int i = 0; i < 600; i++) {
        many[i] = sample_entry(i % 64);
        snprintf(many[i].variant, sizeof many[i].variant, "v%d", i / 64);
    }
    CHECK(tune_db_store(db_path, many, 600, NULL, msg, sizeof msg) == PTXKIT_ERROR_IO && msg[0]);
    tune_db db;
    tune_db_init(&db);
    CHECK(tune_db_load(db_path, &db, msg, sizeof msg) == PTXKIT_SUCCESS && db.count == 1);
    tune_db_clear(&db);
    CHECK(no_temporaries(dir));
}

static void prepare_small_db(const char *db_path) {
    char msg[640];
    tune_db_entry e = sample_entry(20);
    CHECK(tune_db_store(db_path, &e, 1, NULL, msg, sizeof msg) == PTXKIT_SUCCESS);
}

static void file_size_limit_body(void) {
    char dir[512], db_path[600];
    snprintf(dir, sizeof dir, "%s/full", root);
    snprintf(db_path, sizeof db_path, "%s/tune.db", dir);
    CHECK(mkdir(dir, 0755) == 0);
    prepare_small_db(db_path);
    signal(SIGXFSZ, SIG_IGN); /* writes past the limit fail with EFBIG instead */
    struct rlimit limit = {64 * 1024, 64 * 1024};
    CHECK(setrlimit(RLIMIT_FSIZE, &limit) == 0);
    check_full(dir, db_path);
}

static void full_by_file_size_limit(void **state) {
    (void)state;
    run_child(file_size_limit_body, 0);
}

static void small_tmpfs_body(void) {
    char dir[512], db_path[600];
    snprintf(dir, sizeof dir, "%s/tiny", root);
    snprintf(db_path, sizeof db_path, "%s/tune.db", dir);
    CHECK(mkdir(dir, 0755) == 0);
    if (mount("tmpfs", dir, "tmpfs", 0, "size=64k") != 0) {
        printf("skipped: cannot mount a tmpfs here (%s)\n", strerror(errno));
        _exit(77);
    }
    prepare_small_db(db_path);
    check_full(dir, db_path);
    CHECK(strstr(ptxkit_last_error(), "No space left"));
}

static void full_small_tmpfs(void **state) {
    (void)state;
    run_child(small_tmpfs_body, NEW_MOUNTS);
}

/* ---- a database that is no database ------------------------------------ */

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void database_sparse_or_device(void **state) {
    (void)state;
    alarm(60);
    char path[512], bad[600], msg[640];
    tune_db db;
    tune_db_init(&db);
    /* 2 GB sparse: refused by its size at once, set aside by a store */
    snprintf(path, sizeof path, "%s/sparse.db", root);
    FILE *f = fopen(path, "w");
    fclose(f);
    assert_int_equal(truncate(path, (off_t)2 << 30), 0);
    double t0 = now_s();
    assert_status(PTXKIT_ERROR_CORRUPT, tune_db_load(path, &db, msg, sizeof msg));
    assert_true(now_s() - t0 < 1.0);
    assert_non_null(strstr(msg, "larger than"));
    tune_db_entry e = sample_entry(20);
    assert_status(PTXKIT_SUCCESS, tune_db_store(path, &e, 1, NULL, msg, sizeof msg));
    snprintf(bad, sizeof bad, "%s.bad", path);
    struct stat st;
    assert_int_equal(stat(bad, &st), 0);
    assert_status(PTXKIT_SUCCESS, tune_db_load(path, &db, msg, sizeof msg));
    assert_int_equal(db.count, 1);
    /* a link to /dev/zero: not a regular file, and never replaced */
    snprintf(path, sizeof path, "%s/zero.db", root);
    assert_int_equal(symlink("/dev/zero", path), 0);
    assert_status(PTXKIT_ERROR_IO, tune_db_load(path, &db, msg, sizeof msg));
    assert_status(PTXKIT_ERROR_IO, tune_db_store(path, &e, 1, NULL, msg, sizeof msg));
    assert_int_equal(lstat(path, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    tune_db_clear(&db);
    alarm(0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(unreadable, make_root, remove_root),
        cmocka_unit_test_setup_teardown(read_only_file_system, make_root, remove_root),
        cmocka_unit_test_setup_teardown(full_by_file_size_limit, make_root, remove_root),
        cmocka_unit_test_setup_teardown(full_small_tmpfs, make_root, remove_root),
        cmocka_unit_test_setup_teardown(database_sparse_or_device, make_root, remove_root),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
