/* The on-disk kernel cache: round trips, each file of an entry damaged in
 * turn, swapped images, half-written and old-format entries, stray files,
 * the size cap, processes racing to store the same kernel, and the
 * read-ahead of the entries recent processes began with. */
#include <dirent.h>
#include <pwd.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cache_meta.h"
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

static void entry_file(const cache_key *key, const char *suffix, char *path, size_t size) {
    char hex[33];
    cache_key_hex(key, hex);
    snprintf(path, size, "%s/%.2s/%s.%s", dir, hex, hex, suffix);
}

static bool exists(const cache_key *key, const char *suffix) {
    char path[1024];
    entry_file(key, suffix, path, sizeof path);
    struct stat st;
    return lstat(path, &st) == 0;
}

static char *slurp(const char *path, size_t *size) {
    *size = 0;
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = malloc(1 << 16);
    *size = fread(buf, 1, 1 << 16, f);
    fclose(f);
    return buf;
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
    /* the image is a plain file, byte for byte; the metadata beside it */
    char path[1024];
    entry_file(&k, "cubin", path, sizeof path);
    char *file = slurp(path, &size);
    assert_non_null(file);
    assert_int_equal(size, sizeof image);
    assert_memory_equal(file, image, sizeof image);
    free(file);
    entry_file(&k, "meta", path, sizeof path);
    file = slurp(path, &size);
    assert_non_null(file);
    file[size] = 0;
    char hex[33], line[64];
    cache_key_hex(&k, hex);
    snprintf(line, sizeof line, "key %s\n", hex);
    assert_non_null(strstr(file, "ptxkit-cache-entry 3\n"));
    assert_non_null(strstr(file, line));
    assert_non_null(strstr(file, "kind cubin\n"));
    assert_non_null(strstr(file, "origin program\n"));
    /* the record is exactly the documented text (cache_meta.h) */
    char want[1024];
    size_t want_size = cache_meta_text(&k, true, "program", sizeof image, XXH3_64bits(image, sizeof image), 0, 0, want,
                                       sizeof want);
    assert_int_equal(size, want_size);
    assert_memory_equal(file, want, size);
    free(file);
    assert_false(exists(&k, "ptx"));
    assert_false(exists(&k, "names"));
    cache_key other = key_of(2);
    assert_false(disk_cache_read(c, &other, &data, &size, &cubin));
    disk_cache_close(c);
}

/* Names and origin come back; the names are a plain file, one a line. */
static void names_and_origin(void **state) {
    (void)state;
    disk_cache *c = disk_cache_open(dir);
    cache_key k = key_of(6);
    const char ptx[] = "// PTX\n.version 8.0\n";
    assert_ok(NULL, disk_cache_write_entry(c, &k, ptx, strlen(ptx), false, DISK_CACHE_FAMILY, "_Z3addPf\nsecond"));
    void *data;
    size_t size;
    bool cubin = true;
    disk_cache_origin origin = 0;
    char *names = NULL;
    assert_true(disk_cache_read_entry(c, &k, &data, &size, &cubin, &origin, &names));
    assert_false(cubin);
    assert_int_equal(origin, DISK_CACHE_FAMILY);
    assert_string_equal(names, "_Z3addPf\nsecond");
    assert_int_equal(size, strlen(ptx));
    assert_string_equal(data, ptx); /* NUL-terminated */
    free(data);
    free(names);
    char path[1024];
    entry_file(&k, "names", path, sizeof path);
    char *file = slurp(path, &size);
    assert_int_equal(size, strlen("_Z3addPf\nsecond\n"));
    assert_memory_equal(file, "_Z3addPf\nsecond\n", size);
    free(file);
    assert_true(exists(&k, "ptx"));
    /* rewritten as a CUBIN without names: the PTX and the names go */
    assert_ok(NULL, disk_cache_write_entry(c, &k, "\x7f" "ELF", 4, true, DISK_CACHE_USER_IMAGE, NULL));
    assert_false(exists(&k, "ptx"));
    assert_false(exists(&k, "names"));
    assert_true(disk_cache_read_entry(c, &k, &data, &size, &cubin, &origin, &names));
    assert_true(cubin);
    assert_int_equal(origin, DISK_CACHE_USER_IMAGE);
    assert_null(names);
    free(data);
    /* an empty image or an unknown origin is refused */
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, disk_cache_write_entry(c, &k, "", 0, true, DISK_CACHE_FAMILY, NULL));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, disk_cache_write_entry(c, &k, "x", 1, true, 0, NULL));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, disk_cache_write_entry(c, &k, "x", 1, true, 99, NULL));
    disk_cache_close(c);
}

/* Writes the entry of key 3 (a 4 KiB PTX image with names), damages one
 * of its files ("meta", "ptx", "names") with `damage`, and checks that it
 * is then a miss and that every file of the entry is gone. */
static void check_rejected(const char *which, void (*damage)(const char *path)) {
    disk_cache *c = disk_cache_open(dir);
    cache_key k = key_of(3);
    char image[4096];
    for (size_t i = 0; i < sizeof image; i++) image[i] = (char)(i * 7);
    assert_ok(NULL, disk_cache_write_entry(c, &k, image, sizeof image, false, DISK_CACHE_PROGRAM, "lowered"));
    char path[1024];
    entry_file(&k, which, path, sizeof path);
    damage(path);
    void *data = NULL;
    size_t size;
    bool cubin;
    char *names = NULL;
    if (disk_cache_read_entry(c, &k, &data, &size, &cubin, NULL, &names))
        fail_msg("the %s file damaged: read as a hit", which);
    assert_null(data);
    assert_null(names);
    assert_false(exists(&k, "meta"));
    assert_false(exists(&k, "ptx"));
    assert_false(exists(&k, "names"));
    /* and the entry is written again */
    assert_ok(NULL, disk_cache_write_entry(c, &k, image, sizeof image, false, DISK_CACHE_PROGRAM, "lowered"));
    assert_true(disk_cache_read_entry(c, &k, &data, &size, &cubin, NULL, &names));
    assert_string_equal(names, "lowered");
    free(data);
    free(names);
    disk_cache_close(c);
}

static void flip_byte(const char *path) {
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    long at = st.st_size > 200 ? 200 : st.st_size / 2;
    FILE *f = fopen(path, "r+b");
    fseek(f, at, SEEK_SET);
    int ch = fgetc(f);
    fseek(f, at, SEEK_SET);
    fputc(ch ^ 0x40, f);
    fclose(f);
}
static void cut_short(const char *path) {
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(truncate(path, st.st_size > 1000 ? 1000 : st.st_size - 1), 0);
}
static void grow(const char *path) {
    FILE *f = fopen(path, "ab");
    fputc('\n', f);
    fclose(f);
}
static void foreign_version(const char *path) {
    /* a whole, self-consistent record of another format */
    size_t size;
    char *text = slurp(path, &size);
    text[size] = 0;
    char *v = strstr(text, "ptxkit-cache-entry 3\n");
    assert_non_null(v);
    v[strlen("ptxkit-cache-entry ")] = '2';
    FILE *f = fopen(path, "wb");
    fwrite(text, 1, size, f);
    fclose(f);
    free(text);
}
static void empty_file(const char *path) { assert_int_equal(truncate(path, 0), 0); }
static void removed(const char *path) { assert_int_equal(unlink(path), 0); }
static void replaced_by_directory(const char *path) {
    assert_int_equal(unlink(path), 0);
    assert_int_equal(mkdir(path, 0755), 0);
}
static void other_key(const char *path) {
    /* the same file of a valid entry of another key, moved under this name */
    disk_cache *c = disk_cache_open(dir);
    cache_key k = key_of(4);
    assert_ok(NULL, disk_cache_write_entry(c, &k, "other image", 11, false, DISK_CACHE_PROGRAM, "other"));
    char src[1024];
    entry_file(&k, strrchr(path, '.') + 1, src, sizeof src);
    assert_int_equal(rename(src, path), 0);
    disk_cache_close(c);
}

static void (*const damages[])(const char *) = {flip_byte, cut_short, grow, empty_file, removed,
                                                replaced_by_directory, other_key};
static const char *const damage_names[] = {"flip", "truncate", "grow", "empty", "remove", "directory", "other key"};

/* Every damage to every file of an entry is a miss. */
static void damaged_files(void **state) {
    (void)state;
    static const char *const files[] = {"meta", "ptx", "names"};
    for (size_t f = 0; f < 3; f++)
        for (size_t d = 0; d < sizeof damages / sizeof damages[0]; d++) {
            if (f == 0 && damages[d] == removed) continue; /* no metadata: half_written */
            print_message("%s: %s\n", files[f], damage_names[d]);
            check_rejected(files[f], damages[d]);
        }
    check_rejected("meta", foreign_version);
}

/* Any single bit flipped anywhere in the metadata is a miss. */
static void damaged_meta(void **state) {
    (void)state;
    disk_cache *c = disk_cache_open(dir);
    cache_key k = key_of(5);
    const char image[] = "// PTX text\n.version 8.0\n";
    char path[1024];
    entry_file(&k, "meta", path, sizeof path);
    for (int kind = 0; kind < 2; kind++) {
        assert_ok(NULL, disk_cache_write_entry(c, &k, image, sizeof image, kind == 1, DISK_CACHE_FAMILY, "n"));
        struct stat st;
        assert_int_equal(stat(path, &st), 0);
        for (int bit = 0; bit < (int)st.st_size * 8; bit++) {
            assert_ok(NULL, disk_cache_write_entry(c, &k, image, sizeof image, kind == 1, DISK_CACHE_FAMILY, "n"));
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
                fail_msg("metadata bit %d flipped in a %s entry read as a hit (%s)", bit, kind ? "CUBIN" : "PTX",
                         cubin ? "CUBIN" : "PTX");
            assert_int_not_equal(access(path, F_OK), 0);
        }
    }
    disk_cache_close(c);
}

/* Two entries' images swapped: both are misses, neither returns the
 * other's image. */
static void swapped_images(void **state) {
    (void)state;
    disk_cache *c = disk_cache_open(dir);
    cache_key a = key_of(7), b = key_of(8);
    assert_ok(NULL, disk_cache_write(c, &a, "\x7f" "ELF image a", 12, true));
    assert_ok(NULL, disk_cache_write(c, &b, "\x7f" "ELF image b", 12, true));
    char pa[1024], pb[1024], tmp[1100];
    entry_file(&a, "cubin", pa, sizeof pa);
    entry_file(&b, "cubin", pb, sizeof pb);
    snprintf(tmp, sizeof tmp, "%s.swap", pa);
    assert_int_equal(rename(pa, tmp), 0);
    assert_int_equal(rename(pb, pa), 0);
    assert_int_equal(rename(tmp, pb), 0);
    void *data = NULL;
    size_t size;
    bool cubin;
    assert_false(disk_cache_read(c, &a, &data, &size, &cubin));
    assert_false(disk_cache_read(c, &b, &data, &size, &cubin));
    assert_null(data);
    /* the kind swapped: a CUBIN's metadata over a PTX file of the same bytes */
    assert_ok(NULL, disk_cache_write(c, &a, "\x7f" "ELF image a", 12, true));
    entry_file(&a, "ptx", pb, sizeof pb);
    assert_int_equal(rename(pa, pb), 0);
    assert_false(disk_cache_read(c, &a, &data, &size, &cubin));
    assert_false(exists(&a, "ptx"));
    disk_cache_close(c);
}

/* An image without metadata is a write in progress (or one that died): a
 * miss, left alone for its writer; the next write completes the entry. */
static void half_written(void **state) {
    (void)state;
    disk_cache *c = disk_cache_open(dir);
    cache_key k = key_of(9);
    assert_ok(NULL, disk_cache_write(c, &k, "\x7f" "ELF", 4, true));
    char path[1024];
    entry_file(&k, "meta", path, sizeof path);
    assert_int_equal(unlink(path), 0);
    void *data;
    size_t size;
    bool cubin;
    assert_false(disk_cache_read(c, &k, &data, &size, &cubin));
    assert_true(exists(&k, "cubin"));
    assert_ok(NULL, disk_cache_write(c, &k, "\x7f" "ELF", 4, true));
    assert_true(disk_cache_read(c, &k, &data, &size, &cubin));
    free(data);
    disk_cache_close(c);
}

/* Entries of the earlier formats (one <key>.bin container) are never read;
 * a write's trim and a purge remove them. Stray files that are not the
 * cache's are neither counted nor removed. */
static void old_format_and_strays(void **state) {
    (void)state;
    setenv("PTXKIT_CACHE_DIR", dir, 1);
    disk_cache *c = disk_cache_open(dir);
    cache_key old = key_of(10), k = key_of(11);
    char legacy[1024], shard[1024];
    entry_file(&old, "bin", legacy, sizeof legacy);
    snprintf(shard, sizeof shard, "%s", legacy);
    *strrchr(shard, '/') = 0;
    assert_int_equal(mkdir(shard, 0755), 0);
    FILE *f = fopen(legacy, "wb");
    fwrite("PTXKITC1\2\0\0\0", 1, 12, f);
    fclose(f);
    void *data;
    size_t size;
    bool cubin;
    assert_false(disk_cache_read(c, &old, &data, &size, &cubin));
    size_t files, bytes;
    assert_ok(NULL, ptxkit_cache_stats_get(&files, &bytes));
    assert_int_equal(files, 0);
    assert_int_equal(bytes, 12);
    /* strays: not the cache's names */
    char stray[4][1100];
    snprintf(stray[0], sizeof stray[0], "%s/README", shard);
    snprintf(stray[1], sizeof stray[1], "%s.txt", legacy);
    snprintf(stray[2], sizeof stray[2], "%s/%s", shard, "0123456789ABCDEF0123456789ABCDEF.meta");
    snprintf(stray[3], sizeof stray[3], "%s/%s", shard, "0123.cubin");
    for (int i = 0; i < 4; i++) {
        f = fopen(stray[i], "w");
        fputs("not the cache's", f);
        fclose(f);
    }
    assert_ok(NULL, disk_cache_write(c, &k, "\x7f" "ELF", 4, true));
    assert_int_not_equal(access(legacy, F_OK), 0); /* the trim removed it */
    assert_ok(NULL, ptxkit_cache_stats_get(&files, &bytes));
    assert_int_equal(files, 1);
    /* a temporary file a dead writer left counts with its entry, and goes with it */
    char temp[1100], path[1024];
    entry_file(&k, "cubin.tmp.99999.0", temp, sizeof temp);
    f = fopen(temp, "wb");
    fputs("half an image", f);
    fclose(f);
    size_t bytes_with_temp;
    assert_ok(NULL, ptxkit_cache_stats_get(&files, &bytes_with_temp));
    assert_int_equal(files, 1);
    assert_int_equal(bytes_with_temp, bytes + strlen("half an image"));
    entry_file(&k, "meta", path, sizeof path);
    assert_int_equal(access(path, F_OK), 0);
    f = fopen(legacy, "wb");
    fputs("old", f);
    fclose(f);
    assert_ok(NULL, ptxkit_cache_purge());
    assert_int_not_equal(access(legacy, F_OK), 0);
    assert_int_not_equal(access(temp, F_OK), 0);
    assert_false(exists(&k, "meta"));
    assert_false(exists(&k, "cubin"));
    for (int i = 0; i < 4; i++) assert_int_equal(access(stray[i], F_OK), 0);
    assert_ok(NULL, ptxkit_cache_stats_get(&files, &bytes));
    assert_int_equal(files, 0);
    assert_int_equal(bytes, 0);
    unsetenv("PTXKIT_CACHE_DIR");
    disk_cache_close(c);
}

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
        struct timespec times[2] = {{.tv_sec = 1000000 + i}, {.tv_sec = 1000000 + i}};
        entry_file(&k, "cubin", path, sizeof path);
        utimensat(AT_FDCWD, path, times, 0);
        entry_file(&k, "meta", path, sizeof path);
        utimensat(AT_FDCWD, path, times, 0);
    }
    size_t total = 0, count = 0;
    for (int i = 10; i < 20; i++) {
        char path[1024];
        cache_key k = key_of(i);
        struct stat st;
        entry_file(&k, "meta", path, sizeof path);
        bool meta = stat(path, &st) == 0;
        if (meta) total += (size_t)st.st_size;
        entry_file(&k, "cubin", path, sizeof path);
        bool image = stat(path, &st) == 0;
        if (image) total += (size_t)st.st_size;
        /* an entry goes whole: its image and metadata together */
        assert_int_equal(meta, image);
        count += meta;
    }
    assert_true(total <= (1u << 20));
    assert_true(count >= 2);
    /* the newest entry survived */
    cache_key newest = key_of(19);
    char path[1024];
    entry_file(&newest, "meta", path, sizeof path);
    assert_int_equal(access(path, F_OK), 0);
    free(image);
    disk_cache_close(c);
}

/* A hit marks the entry used (the metadata's mtime, by which trim evicts)
 * unless it was marked a short while ago: an entry last used long ago is
 * touched, one used moments ago is left as it is. */
static void hit_touches_stale_entries(void **state) {
    (void)state;
    disk_cache *c = disk_cache_open(dir);
    cache_key k = key_of(7);
    const char image[] = "\x7f" "ELF pretend cubin";
    assert_ok(NULL, disk_cache_write(c, &k, image, sizeof image, true));
    char path[1024];
    entry_file(&k, "meta", path, sizeof path);
    time_t now = time(NULL);
    const time_t ages[] = {3 * 24 * 3600, 5, -3600 /* from the future: a clock set back */};
    for (size_t i = 0; i < sizeof ages / sizeof ages[0]; i++) {
        struct timespec times[2] = {{.tv_sec = now - ages[i]}, {.tv_sec = now - ages[i]}};
        assert_int_equal(utimensat(AT_FDCWD, path, times, 0), 0);
        void *data;
        size_t size;
        bool cubin;
        assert_true(disk_cache_read(c, &k, &data, &size, &cubin));
        free(data);
        struct stat st;
        assert_int_equal(stat(path, &st), 0);
        if (ages[i] == 5) assert_int_equal(st.st_mtime, now - 5);
        /* touched: Linux may stamp a file from a finer clock than time()'s
         * coarse one (multigrain timestamps, 6.13 on), up to a tick ahead,
         * so a second later than time() reads is still now */
        else assert_true(st.st_mtime >= now && st.st_mtime <= time(NULL) + 1);
    }
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
    assert_int_equal(files, 2); /* the CUBIN and its metadata */
    disk_cache_close(c);
}

static void disabled_by_environment(void **state) {
    (void)state;
    setenv("PTXKIT_CACHE", "off", 1);
    assert_null(disk_cache_open(NULL));
    char buf[64] = "x";
    assert_ok(NULL, ptxkit_cache_dir_get(buf, sizeof buf));
    assert_string_equal(buf, "");
    unsetenv("PTXKIT_CACHE");
    setenv("PTXKIT_CACHE_DIR", "/tmp/somewhere", 1);
    assert_ok(NULL, ptxkit_cache_dir_get(buf, sizeof buf));
    assert_string_equal(buf, "/tmp/somewhere");
    unsetenv("PTXKIT_CACHE_DIR");
    setenv("XDG_CACHE_HOME", "/tmp/xdg", 1);
    assert_ok(NULL, ptxkit_cache_dir_get(buf, sizeof buf));
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

/* The read-ahead list: a process notes the keys of its first eight lookups
 * or writes that reached the disk in <dir>/recent. (The first test of the
 * process, so that none were noted before.) */
static void recent_lists_first_uses(void **state) {
    (void)state;
    disk_cache *c = disk_cache_open(dir);
    char want[12 * 33 + 1] = "", hex[33];
    for (int i = 0; i < 10; i++) {
        cache_key k = key_of(40 + i);
        assert_ok(NULL, disk_cache_write(c, &k, "\x7f" "ELF", 4, true));
        cache_key_hex(&k, hex);
        if (i < 8) strcat(strcat(want, hex), "\n");
    }
    char path[1024];
    snprintf(path, sizeof path, "%s/recent", dir);
    size_t size;
    char *text = slurp(path, &size);
    assert_non_null(text);
    assert_int_equal(size, strlen(want));
    assert_memory_equal(text, want, size);
    free(text);
    disk_cache_close(c);
}

static void write_text(const char *path, const char *text) {
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void remove_files_of(const cache_key *k) {
    const char *suffixes[] = {"meta", "cubin", "ptx", "names"};
    char path[1024];
    for (int i = 0; i < 4; i++) {
        entry_file(k, suffixes[i], path, sizeof path);
        unlink(path);
    }
}

/* Runs a check in a child process: the read-ahead happens once a process. */
static void in_child(void (*check)(void)) {
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        check();
        _exit(0);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

#define CHILD_CHECK(cond) do { if (!(cond)) { fprintf(stderr, "failed: %s (line %d)\n", #cond, __LINE__); _exit(1); } } while (0)

static cache_key ahead_cubin, ahead_ptx, ahead_corrupt, ahead_missing;
static const char ahead_image[] = "\x7f" "ELF read ahead";

static void ahead_entries(void) {
    ahead_cubin = key_of(60);
    ahead_ptx = key_of(61);
    ahead_corrupt = key_of(62);
    ahead_missing = key_of(63);
    disk_cache *c = disk_cache_open(dir);
    assert_ok(NULL, disk_cache_write_entry(c, &ahead_cubin, ahead_image, sizeof ahead_image, true, DISK_CACHE_PROGRAM, "k1\nk2"));
    assert_ok(NULL, disk_cache_write_entry(c, &ahead_ptx, "// PTX\n", 7, false, DISK_CACHE_FAMILY, NULL));
    assert_ok(NULL, disk_cache_write(c, &ahead_corrupt, "\x7f" "ELF", 4, true));
    char path[1024];
    entry_file(&ahead_corrupt, "cubin", path, sizeof path);
    write_text(path, "\x7f" "EL!"); /* same size, other bytes */
    disk_cache_close(c);
    /* the list by hand: repeats, a foreign line, a missing and a corrupt entry */
    char h[4][33], text[1024];
    cache_key_hex(&ahead_cubin, h[0]);
    cache_key_hex(&ahead_ptx, h[1]);
    cache_key_hex(&ahead_corrupt, h[2]);
    cache_key_hex(&ahead_missing, h[3]);
    snprintf(text, sizeof text, "%s\nnot a key\n%s\n%s\n%s\n%s\n", h[1], h[0], h[2], h[3], h[1]);
    snprintf(path, sizeof path, "%s/recent", dir);
    write_text(path, text);
}

static void ahead_served_from_memory(void) {
    disk_cache_read_ahead();
    /* the files go: what was read ahead is still the entry's bytes */
    remove_files_of(&ahead_cubin);
    remove_files_of(&ahead_ptx);
    void *data;
    size_t size;
    bool cubin;
    disk_cache_origin origin;
    char *names;
    /* another directory's lookup takes nothing */
    char other[600];
    snprintf(other, sizeof other, "%s/other", dir);
    disk_cache *elsewhere = disk_cache_open(other);
    CHILD_CHECK(!disk_cache_read(elsewhere, &ahead_cubin, &data, &size, &cubin));
    disk_cache_close(elsewhere);
    disk_cache *c = disk_cache_open(dir);
    CHILD_CHECK(disk_cache_read_entry(c, &ahead_cubin, &data, &size, &cubin, &origin, &names));
    CHILD_CHECK(cubin && origin == DISK_CACHE_PROGRAM && size == sizeof ahead_image);
    CHILD_CHECK(memcmp(data, ahead_image, size) == 0 && names && strcmp(names, "k1\nk2") == 0);
    free(data);
    free(names);
    /* taken once: the next lookup goes to the disk, where it is gone */
    CHILD_CHECK(!disk_cache_read(c, &ahead_cubin, &data, &size, &cubin));
    CHILD_CHECK(disk_cache_read_entry(c, &ahead_ptx, &data, &size, &cubin, &origin, &names));
    CHILD_CHECK(!cubin && origin == DISK_CACHE_FAMILY && size == 7 && strcmp(data, "// PTX\n") == 0 && !names);
    free(data);
    /* the corrupt entry was not read ahead, and the lookup repairs it */
    CHILD_CHECK(!disk_cache_read(c, &ahead_corrupt, &data, &size, &cubin));
    CHILD_CHECK(!exists(&ahead_corrupt, "meta") && !exists(&ahead_corrupt, "cubin"));
    CHILD_CHECK(!disk_cache_read(c, &ahead_missing, &data, &size, &cubin));
    disk_cache_close(c);
    disk_cache_read_ahead_release();
}

static void ahead_dropped_by_purge(void) {
    disk_cache_read_ahead();
    assert_ok(NULL, ptxkit_cache_purge());
    char path[1024];
    snprintf(path, sizeof path, "%s/recent", dir);
    CHILD_CHECK(access(path, F_OK) != 0);
    void *data;
    size_t size;
    bool cubin;
    disk_cache *c = disk_cache_open(dir);
    CHILD_CHECK(!disk_cache_read(c, &ahead_cubin, &data, &size, &cubin));
    CHILD_CHECK(!disk_cache_read(c, &ahead_ptx, &data, &size, &cubin));
    disk_cache_close(c);
}

static void ahead_released(void) {
    disk_cache_read_ahead();
    disk_cache_read_ahead_release();
    remove_files_of(&ahead_ptx);
    void *data;
    size_t size;
    bool cubin;
    disk_cache *c = disk_cache_open(dir);
    CHILD_CHECK(!disk_cache_read(c, &ahead_ptx, &data, &size, &cubin));
    disk_cache_close(c);
}

/* A long list is rewritten to its newest keys, newest last. */
static void ahead_compacts(void) {
    char path[1024], hex[2][33];
    snprintf(path, sizeof path, "%s/recent", dir);
    cache_key_hex(&ahead_ptx, hex[0]);
    cache_key_hex(&ahead_cubin, hex[1]);
    FILE *f = fopen(path, "wb");
    for (int i = 0; i < 1000; i++) fprintf(f, "%s\n", hex[i % 2]); /* 33 KB */
    fclose(f);
    disk_cache_read_ahead();
    size_t size;
    char *text = slurp(path, &size), want[80];
    snprintf(want, sizeof want, "%s\n%s\n", hex[0], hex[1]);
    CHILD_CHECK(text && size == strlen(want) && memcmp(text, want, size) == 0);
    free(text);
    disk_cache_read_ahead_release();
}

static void ahead_not_regular(void) {
    char path[1024];
    snprintf(path, sizeof path, "%s/recent", dir);
    unlink(path);
    CHILD_CHECK(mkfifo(path, 0644) == 0); /* neither read nor written, and nothing blocks */
    disk_cache_read_ahead();
    disk_cache *c = disk_cache_open(dir);
    void *data;
    size_t size;
    bool cubin;
    remove_files_of(&ahead_ptx);
    CHILD_CHECK(!disk_cache_read(c, &ahead_ptx, &data, &size, &cubin));
    disk_cache_close(c);
}

/* The entries recent processes began with are read ahead and served from
 * memory, checked as a lookup checks them, and dropped by a purge or a
 * release; the list stays short and only regular files are used. */
static void read_ahead(void **state) {
    (void)state;
    setenv("PTXKIT_CACHE_DIR", dir, 1);
    void (*checks[])(void) = {ahead_served_from_memory, ahead_dropped_by_purge, ahead_released, ahead_compacts,
                              ahead_not_regular};
    for (size_t i = 0; i < sizeof checks / sizeof checks[0]; i++) {
        ahead_entries();
        in_child(checks[i]);
    }
    unsetenv("PTXKIT_CACHE_DIR");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(recent_lists_first_uses, make_dir, remove_dir), /* first: see there */
        cmocka_unit_test_setup_teardown(read_ahead, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(round_trip, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(names_and_origin, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(damaged_files, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(damaged_meta, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(swapped_images, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(half_written, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(old_format_and_strays, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(size_cap_evicts_oldest, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(hit_touches_stale_entries, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(concurrent_writers, make_dir, remove_dir),
        cmocka_unit_test(disabled_by_environment),
        cmocka_unit_test(xdg_rules),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
