/* On-disk cache of compiled kernels: <dir>/<first key byte>/<key>.bin.
 * Each file is a header (magic, format, kind, size, key, checksum) and the
 * image; the checksum covers the header's other fields and the image, and
 * every field is checked, so a damaged entry is a miss, never a hit of the
 * other kind. Writes go to a temporary name and are renamed into place, so a
 * reader sees a whole file or none; a file that fails any check is deleted
 * and rebuilt. The total size is capped by least-recent use (mtime, touched
 * on every hit). */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "runtime/cache_dir.h"
#include "runtime/cache_key.h"
#include "runtime/disk_cache.h"
#include "runtime/files.h"
#include "runtime/status.h"

#define CACHE_MAGIC "PTXKITC1"
/* 2: the checksum covers the header too (format 1 entries are misses) */
#define CACHE_FORMAT 2u
#define CACHE_DEFAULT_CAP_MB 512
#define CACHE_MAX_CAP_MB (1ull << 32) /* 4 PiB: any larger figure is a typo, and << 20 must not wrap */

struct disk_cache {
    char dir[4096];
    unsigned long long cap_bytes;
};

typedef struct cache_header {
    char magic[8];
    uint32_t format;
    uint32_t is_cubin;       /* 0 or 1 */
    uint64_t size;
    unsigned char key[16];
    uint64_t checksum;       /* of the fields above, then the image */
} cache_header;
_Static_assert(sizeof(cache_header) == 48 && offsetof(cache_header, checksum) == 40, "the header has no padding");

static uint64_t entry_checksum(const cache_header *h, const void *image, size_t size) {
    return XXH3_64bits_withSeed(image, size, XXH3_64bits(h, offsetof(cache_header, checksum)));
}

unsigned long long disk_cache_cap_from_env(char *note, size_t note_size) {
    if (note && note_size) note[0] = 0;
    const char *v = getenv("PTXKIT_CACHE_MAX_MB");
    if (!v || !*v) return (unsigned long long)CACHE_DEFAULT_CAP_MB << 20;
    /* digits only: strtoull would take "-1" as 2^64 - 1 and "512MB" as 512 */
    unsigned long long mb = 0;
    bool ok = true;
    for (const char *p = v; *p && ok; p++) {
        ok = isdigit((unsigned char)*p) && mb <= (CACHE_MAX_CAP_MB - (unsigned)(*p - '0')) / 10;
        if (ok) mb = mb * 10 + (unsigned)(*p - '0');
    }
    if (ok && mb >= 1) return mb << 20;
    if (note && note_size)
        snprintf(note, note_size, "PTXKIT_CACHE_MAX_MB='%.40s%s' ignored (not a whole number of MiB in [1, %llu]): the cap is the default %d MiB",
                 v, strlen(v) > 40 ? "..." : "", CACHE_MAX_CAP_MB, CACHE_DEFAULT_CAP_MB);
    return (unsigned long long)CACHE_DEFAULT_CAP_MB << 20;
}

ptxkit_status ptxkit_cache_limit(unsigned long long *bytes) {
    if (!bytes) return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_cache_limit: bytes is NULL");
    *bytes = disk_cache_cap_from_env(NULL, 0);
    return PTXKIT_SUCCESS;
}

disk_cache *disk_cache_open(const char *directory) {
    if (!directory && cache_dir_disabled()) return NULL;
    disk_cache *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    if (directory ? (size_t)snprintf(c->dir, sizeof c->dir, "%s", directory) >= sizeof c->dir
                  : !cache_dir_configured(c->dir, sizeof c->dir - 64)) {
        free(c);
        return NULL;
    }
    c->cap_bytes = disk_cache_cap_from_env(NULL, 0);
    return c;
}

void disk_cache_close(disk_cache *cache) { free(cache); }

const char *disk_cache_path(const disk_cache *cache) { return cache ? cache->dir : ""; }

static void entry_path(const disk_cache *c, const cache_key *key, char *shard, size_t shard_size, char *path,
                       size_t path_size) {
    char hex[33];
    cache_key_hex(key, hex);
    snprintf(shard, shard_size, "%s/%.2s", c->dir, hex);
    snprintf(path, path_size, "%s/%s.bin", shard, hex);
}

static int remove_visit(const char *path, const struct stat *st, int type, struct FTW *ftw) {
    (void)st;
    (void)ftw;
    return type == FTW_DP ? rmdir(path) : unlink(path);
}

/* Removes an entry of any type: a directory where an entry belongs would be
 * a permanent miss whose rename-into-place fails forever. */
static int remove_entry(const char *path) {
    struct stat st;
    if (lstat(path, &st) != 0) return errno == ENOENT ? 0 : -1;
    if (!S_ISDIR(st.st_mode)) return unlink(path);
    return nftw(path, remove_visit, 16, FTW_DEPTH | FTW_PHYS);
}

bool disk_cache_read(disk_cache *c, const cache_key *key, void **image, size_t *size, bool *is_cubin) {
    if (!c) return false;
    char shard[4200], path[4300];
    entry_path(c, key, shard, sizeof shard, path, sizeof path);
    struct stat st;
    int fd = files_open_regular(path, false, &st);
    if (fd == -2) remove_entry(path); /* a FIFO, directory, link or device: never ours */
    if (fd < 0) return false;
    cache_header h;
    void *data = NULL;
    /* the size is bounded by the cap before anything is allocated: a sparse
     * file with a consistent header cost seconds and gigabytes */
    bool ok = files_read_all(fd, &h, sizeof h) && memcmp(h.magic, CACHE_MAGIC, 8) == 0 && h.format == CACHE_FORMAT &&
              (h.is_cubin == 0 || h.is_cubin == 1) && memcmp(h.key, key->bytes, 16) == 0 && h.size > 0 &&
              h.size <= c->cap_bytes && (uint64_t)st.st_size == sizeof h + h.size &&
              (data = malloc((size_t)h.size + 1)) != NULL && files_read_all(fd, data, (size_t)h.size) &&
              entry_checksum(&h, data, (size_t)h.size) == h.checksum;
    close(fd);
    if (!ok) {
        free(data);
        unlink(path); /* corrupt, truncated, foreign or over the cap: rebuild */
        return false;
    }
    ((char *)data)[h.size] = 0;
    utimensat(AT_FDCWD, path, NULL, 0); /* least-recent-use order */
    *image = data;
    *size = (size_t)h.size;
    *is_cubin = h.is_cubin == 1;
    return true;
}

typedef struct cache_file {
    char path[4300];
    time_t mtime;
    off_t size;
    bool regular; /* else something to remove on purge, never to count */
} cache_file;

static int by_age(const void *a, const void *b) {
    const cache_file *x = a, *y = b;
    return (x->mtime > y->mtime) - (x->mtime < y->mtime);
}

/* Lists every entry, with the total size of the regular ones. 0, or an
 * errno: ENOMEM, or why the directory cannot be read (a missing directory
 * is an empty cache). On failure the list is empty. */
static int scan(const char *dir, cache_file **files, size_t *count, unsigned long long *total) {
    size_t cap = 0;
    *files = NULL;
    *count = 0;
    *total = 0;
    DIR *top = opendir(dir);
    if (!top) return errno == ENOENT ? 0 : errno;
    int err = 0;
    struct dirent *d;
    while (!err && (d = readdir(top)) != NULL) {
        if (strlen(d->d_name) != 2 || d->d_name[0] == '.') continue;
        char shard[4200];
        snprintf(shard, sizeof shard, "%s/%s", dir, d->d_name);
        DIR *sd = opendir(shard);
        if (!sd) continue;
        struct dirent *e;
        while (!err && (e = readdir(sd)) != NULL) {
            size_t len = strlen(e->d_name);
            if (len < 5 || strcmp(e->d_name + len - 4, ".bin") != 0) continue;
            cache_file f;
            snprintf(f.path, sizeof f.path, "%s/%s", shard, e->d_name);
            struct stat st;
            if (lstat(f.path, &st) != 0) continue;
            f.mtime = st.st_mtime;
            f.regular = S_ISREG(st.st_mode);
            f.size = f.regular ? st.st_size : 0;
            if (*count == cap) {
                /* the capacity grows only once the block has */
                size_t grown_cap = cap ? cap * 2 : 64;
                cache_file *grown = realloc(*files, grown_cap * sizeof **files);
                if (!grown) {
                    err = ENOMEM;
                    break;
                }
                *files = grown;
                cap = grown_cap;
            }
            (*files)[(*count)++] = f;
            *total += (unsigned long long)f.size;
        }
        closedir(sd);
    }
    closedir(top);
    if (err) {
        free(*files);
        *files = NULL;
        *count = 0;
        *total = 0;
    }
    return err;
}

static void trim(disk_cache *c) {
    cache_file *files;
    size_t count;
    unsigned long long total;
    if (scan(c->dir, &files, &count, &total) != 0) return; /* out of memory: trim on a later write */
    if (total > c->cap_bytes) {
        qsort(files, count, sizeof *files, by_age);
        unsigned long long target = c->cap_bytes / 10 * 9;
        for (size_t i = 0; i < count && total > target; i++)
            if (files[i].regular && unlink(files[i].path) == 0) total -= (unsigned long long)files[i].size;
    }
    free(files);
}

ptxkit_status disk_cache_write(disk_cache *c, const cache_key *key, const void *image, size_t size, bool is_cubin) {
    if (!c) return PTXKIT_SUCCESS;
    char shard[4200], path[4300];
    entry_path(c, key, shard, sizeof shard, path, sizeof path);
    if (!files_make_dirs(shard)) return record_error(NULL, PTXKIT_ERROR_IO, "kernel cache: cannot create %s: %s", shard, strerror(errno));
    cache_header h = {.format = CACHE_FORMAT, .is_cubin = is_cubin, .size = size};
    memcpy(h.magic, CACHE_MAGIC, 8);
    memcpy(h.key, key->bytes, 16);
    h.checksum = entry_checksum(&h, image, size);
    const void *parts[2] = {&h, image};
    size_t sizes[2] = {sizeof h, size};
    int err = files_write_atomic(path, parts, sizes, 2, false);
    if (err == EISDIR || err == ENOTEMPTY || err == EEXIST) { /* a directory in the entry's place */
        remove_entry(path);
        err = files_write_atomic(path, parts, sizes, 2, false);
    }
    if (err) return record_error(NULL, PTXKIT_ERROR_IO, "kernel cache: cannot store %s: %s", path, strerror(err));
    trim(c);
    return PTXKIT_SUCCESS;
}

static ptxkit_status scan_error(const char *dir, int err) {
    if (err == ENOMEM) return record_error(NULL, PTXKIT_ERROR_OUT_OF_MEMORY, "kernel cache: out of host memory listing %s", dir);
    return record_error(NULL, PTXKIT_ERROR_IO, "kernel cache: cannot read %s: %s", dir,
                        err == ENOTDIR ? "not a directory" : strerror(err));
}

ptxkit_status ptxkit_cache_stats(size_t *files, size_t *bytes) {
    if (!files || !bytes) return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_cache_stats: NULL argument");
    *files = *bytes = 0;
    disk_cache *c = disk_cache_open(NULL);
    if (!c) return PTXKIT_SUCCESS;
    cache_file *list;
    size_t count;
    unsigned long long total;
    int err = scan(c->dir, &list, &count, &total);
    ptxkit_status st = err ? scan_error(c->dir, err) : PTXKIT_SUCCESS;
    for (size_t i = 0; i < count; i++) *files += list[i].regular;
    *bytes = (size_t)total;
    free(list);
    disk_cache_close(c);
    return st;
}

ptxkit_status ptxkit_cache_purge(void) {
    disk_cache *c = disk_cache_open(NULL);
    if (!c) return PTXKIT_SUCCESS;
    cache_file *list;
    size_t count;
    unsigned long long total;
    int err = scan(c->dir, &list, &count, &total);
    ptxkit_status st = err ? scan_error(c->dir, err) : PTXKIT_SUCCESS;
    for (size_t i = 0; i < count; i++)
        if (remove_entry(list[i].path) != 0 && errno != ENOENT)
            st = record_error(NULL, PTXKIT_ERROR_IO, "kernel cache: cannot remove %s: %s", list[i].path, strerror(errno));
    free(list);
    disk_cache_close(c);
    return st;
}
