/* On-disk cache of compiled kernels. The entry of key K is a set of plain
 * files in <dir>/<first two hex digits of K>/:
 *   K.cubin or K.ptx  the image, byte for byte what the driver loads, so
 *                     cuobjdump and nvdisasm read a K.cubin as it is
 *   K.names           its lowered kernel names, one a line (when it has any)
 *   K.meta            a few lines of text: format, key, kind, origin, the
 *                     size and XXH3 checksum of the image and of the names,
 *                     and a checksum of the lines before it
 * Each file is written under a temporary name and renamed into place; the
 * metadata goes last and commits the entry, so a reader sees a whole entry
 * or none. A read checks the metadata byte for byte against the text its
 * fields render to, then the image's size and checksum (and the names'):
 * a truncated, corrupt, foreign, half-written or mismatched entry is a
 * miss, never a wrong image. An entry that fails a check is deleted and
 * rebuilt; an image without metadata is left to its writer, to eviction and
 * to purge. The total size of all of an entry's files is capped by
 * least-recent use (the metadata's mtime, touched on every hit). Beside
 * the shards, <dir>/recent lists the keys processes looked up first, which
 * the next process reads ahead into memory (the read-ahead, below). */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "runtime/cache_dir.h"
#include "runtime/cache_key.h"
#include "runtime/disk_cache.h"
#include "runtime/files.h"
#include "runtime/status.h"

#define META_MAGIC "ptxkit-cache-entry"
/* 3: plain files (image, names, metadata); entries of formats 1 and 2 (one
 * K.bin container) are never read, and trim and purge remove them */
#define CACHE_FORMAT 3u
#define META_MAX 1024 /* the rendered record is about 250 bytes */
#define NAMES_MAX (64u << 10) /* lowered names: a few hundred bytes each */
#define CACHE_DEFAULT_CAP_MB 512
#define CACHE_MAX_CAP_MB (1ull << 32) /* 4 PiB: any larger figure is a typo, and << 20 must not wrap */

struct disk_cache {
    unsigned long long cap_bytes;
    char dir[]; /* as long as the path: a warm start's first lookup opens one */
};

/* The metadata's fields. */
typedef struct entry_meta {
    unsigned format;
    char key[33];
    bool is_cubin;
    disk_cache_origin origin;
    unsigned long long image_size, names_size;
    uint64_t image_sum, names_sum;
} entry_meta;

static const char *const origin_names[] = {NULL, "family", "program", "embedded-ptx", "user-image"};
enum { ORIGIN_COUNT = sizeof origin_names / sizeof origin_names[0] };

/* The one text a record renders to; its last line is the checksum of the
 * lines before it. The length, or 0 when it does not fit. */
static size_t render_meta(const entry_meta *m, char *out, size_t size) {
    int n = snprintf(out, size,
                     META_MAGIC " %u\nkey %s\nkind %s\norigin %s\nimage %llu %016" PRIx64 "\nnames %llu %016" PRIx64 "\n",
                     m->format, m->key, m->is_cubin ? "cubin" : "ptx", origin_names[m->origin], m->image_size,
                     m->image_sum, m->names_size, m->names_sum);
    if (n < 0 || (size_t)n >= size) return 0;
    int tail = snprintf(out + n, size - (size_t)n, "meta %016" PRIx64 "\n", (uint64_t)XXH3_64bits(out, (size_t)n));
    if (tail < 0 || (size_t)(n + tail) >= size) return 0;
    return (size_t)(n + tail);
}

/* A cursor over a record's text for parse_meta. Lenient by design: what it
 * accepts is then rendered again and compared byte for byte. Hand-written
 * rather than sscanf, whose first call in a process (a warm start's first
 * kernel reads one record) costs more than the rest of the read. */
typedef struct meta_cursor {
    const char *p, *end;
} meta_cursor;

static bool meta_literal(meta_cursor *c, const char *s) {
    size_t n = strlen(s);
    if ((size_t)(c->end - c->p) < n || memcmp(c->p, s, n) != 0) return false;
    c->p += n;
    return true;
}

/* A non-empty run of characters other than space and newline, shorter than size. */
static bool meta_word(meta_cursor *c, char *out, size_t size) {
    size_t n = 0;
    while (c->p < c->end && *c->p != ' ' && *c->p != '\n') {
        if (n + 1 >= size) return false;
        out[n++] = *c->p++;
    }
    out[n] = 0;
    return n > 0;
}

/* 1 to 16 hex digits (base 16) or 1 to 19 decimal digits: no overflow. */
static bool meta_number(meta_cursor *c, int base, unsigned long long *v) {
    int digits = 0, most = base == 16 ? 16 : 19;
    *v = 0;
    for (; c->p < c->end && digits < most; c->p++, digits++) {
        char ch = *c->p;
        int d = ch >= '0' && ch <= '9' ? ch - '0' : base == 16 && ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 : -1;
        if (d < 0) break;
        *v = *v * (unsigned)base + (unsigned)d;
    }
    return digits > 0;
}

/* Parses a record; true only when the text is exactly what its fields
 * render to (so every byte, the checksum line included, is checked). */
static bool parse_meta(const char *text, size_t size, entry_meta *m) {
    if (size == 0 || size >= META_MAX || memchr(text, 0, size)) return false;
    char kind[8] = "", origin[16] = "";
    unsigned long long format = 0, image_sum = 0, names_sum = 0, meta_sum = 0;
    memset(m, 0, sizeof *m);
    meta_cursor c = {text, text + size};
    if (!(meta_literal(&c, META_MAGIC " ") && meta_number(&c, 10, &format) && format <= UINT_MAX &&
          meta_literal(&c, "\nkey ") && meta_word(&c, m->key, sizeof m->key) && meta_literal(&c, "\nkind ") &&
          meta_word(&c, kind, sizeof kind) && meta_literal(&c, "\norigin ") && meta_word(&c, origin, sizeof origin) &&
          meta_literal(&c, "\nimage ") && meta_number(&c, 10, &m->image_size) && meta_literal(&c, " ") &&
          meta_number(&c, 16, &image_sum) && meta_literal(&c, "\nnames ") && meta_number(&c, 10, &m->names_size) &&
          meta_literal(&c, " ") && meta_number(&c, 16, &names_sum) && meta_literal(&c, "\nmeta ") &&
          meta_number(&c, 16, &meta_sum)))
        return false;
    m->format = (unsigned)format;
    if (strcmp(kind, "cubin") != 0 && strcmp(kind, "ptx") != 0) return false;
    m->is_cubin = kind[0] == 'c';
    for (int i = 1; i < ORIGIN_COUNT; i++)
        if (strcmp(origin, origin_names[i]) == 0) m->origin = (disk_cache_origin)i;
    if (!m->origin) return false;
    m->image_sum = image_sum;
    m->names_sum = names_sum;
    char canonical[META_MAX];
    size_t n = render_meta(m, canonical, sizeof canonical);
    return n == size && memcmp(canonical, text, size) == 0;
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

ptxkit_status ptxkit_cache_limit_get(unsigned long long *bytes) {
    if (!bytes) return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_cache_limit_get: bytes is NULL");
    *bytes = disk_cache_cap_from_env(NULL, 0);
    return PTXKIT_SUCCESS;
}

disk_cache *disk_cache_open(const char *directory) {
    if (!directory && cache_dir_disabled()) return NULL;
    char dir[4096];
    /* room for "/<shard>/<key>.<suffix>" and a temporary name's tail below it */
    if (directory ? (size_t)snprintf(dir, sizeof dir, "%s", directory) >= sizeof dir - 64
                  : !cache_dir_configured(dir, sizeof dir - 64))
        return NULL;
    size_t len = strlen(dir);
    disk_cache *c = malloc(sizeof *c + len + 1);
    if (!c) return NULL;
    memcpy(c->dir, dir, len + 1);
    c->cap_bytes = disk_cache_cap_from_env(NULL, 0);
    return c;
}

void disk_cache_close(disk_cache *cache) { free(cache); }

const char *disk_cache_path(const disk_cache *cache) { return cache ? cache->dir : ""; }

/* "<dir>/<first two hex digits>/<hex>." into buf, assembled by copies (a
 * warm start's first lookup builds one): where the suffix goes, or NULL
 * when the stem and `room` more bytes (a suffix and its NUL) do not fit in
 * size. */
static char *entry_stem(const disk_cache *c, const char hex[33], char *buf, size_t size, size_t room) {
    size_t dir_len = strlen(c->dir);
    if (dir_len + 4 + 32 + 1 + room > size) return NULL;
    char *at = (char *)memcpy(buf, c->dir, dir_len) + dir_len;
    *at++ = '/';
    *at++ = hex[0];
    *at++ = hex[1];
    *at++ = '/';
    at = (char *)memcpy(at, hex, 32) + 32;
    *at++ = '.';
    *at = 0;
    return at;
}

bool disk_cache_file_path(const disk_cache *c, const cache_key *key, const char *suffix, char *buf, size_t size) {
    char hex[33];
    if (!c) return false;
    cache_key_hex(key, hex);
    size_t room = strlen(suffix) + 1;
    char *at = entry_stem(c, hex, buf, size, room);
    if (at) memcpy(at, suffix, room);
    return at != NULL;
}

/* The paths of an entry's files. */
typedef struct entry_paths {
    char shard[4200];
    char meta[4300], cubin[4300], ptx[4300], names[4300], legacy[4300];
} entry_paths;

static void entry_paths_of(const disk_cache *c, const cache_key *key, entry_paths *p) {
    char hex[33];
    cache_key_hex(key, hex);
    snprintf(p->shard, sizeof p->shard, "%s/%.2s", c->dir, hex);
    snprintf(p->meta, sizeof p->meta, "%s/%s.meta", p->shard, hex);
    snprintf(p->cubin, sizeof p->cubin, "%s/%s.cubin", p->shard, hex);
    snprintf(p->ptx, sizeof p->ptx, "%s/%s.ptx", p->shard, hex);
    snprintf(p->names, sizeof p->names, "%s/%s.names", p->shard, hex);
    snprintf(p->legacy, sizeof p->legacy, "%s/%s.bin", p->shard, hex);
}

static int remove_visit(const char *path, const struct stat *st, int type, struct FTW *ftw) {
    (void)st;
    (void)ftw;
    return type == FTW_DP ? rmdir(path) : unlink(path);
}

/* Removes a file of any type: a directory where a file belongs would be a
 * permanent miss whose rename-into-place fails forever. */
static int remove_entry(const char *path) {
    struct stat st;
    if (lstat(path, &st) != 0) return errno == ENOENT ? 0 : -1;
    if (!S_ISDIR(st.st_mode)) return unlink(path);
    return nftw(path, remove_visit, 16, FTW_DEPTH | FTW_PHYS);
}


/* Reads a file the metadata describes: exactly size bytes (at most max)
 * with the checksum sum, into a malloc'd NUL-terminated buffer; false when
 * it is missing, unreadable, not a regular file or not that. */
static bool read_checked(const char *path, unsigned long long size, unsigned long long max, uint64_t sum, char **out) {
    *out = NULL;
    struct stat st;
    int fd = files_open_regular(path, false, &st);
    if (fd < 0) return false;
    /* the size is bounded before anything is allocated: a sparse file with
     * consistent metadata cost seconds and gigabytes */
    char *data = NULL;
    bool ok = size <= max && (uint64_t)st.st_size == size && (data = malloc((size_t)size + 1)) != NULL &&
              files_read_all(fd, data, (size_t)size) && XXH3_64bits(data, (size_t)size) == sum;
    close(fd);
    if (!ok) {
        free(data);
        return false;
    }
    data[size] = 0;
    *out = data;
    return true;
}

/* The kinds of an entry's files and their suffixes, the metadata first.
 * FILE_TEMP: a write's temporary file (<key>.<suffix>.tmp.<pid>.<n>). */
typedef enum file_kind { FILE_META, FILE_CUBIN, FILE_PTX, FILE_NAMES, FILE_LEGACY, FILE_KIND_COUNT, FILE_TEMP } file_kind;
static const char *const file_suffixes[FILE_KIND_COUNT] = {".meta", ".cubin", ".ptx", ".names", ".bin"};

/* Removes every file of an entry whose path up to the suffix is in path
 * (suffix points past its dot): the metadata first, so that no reader
 * finds it without its image. */
static void remove_suffixed(char *path, char *suffix) {
    for (int kind = 0; kind < FILE_KIND_COUNT; kind++) {
        strcpy(suffix, file_suffixes[kind] + 1);
        remove_entry(path);
    }
}

/* A hit touches the metadata, which orders entries for eviction, unless it
 * was touched a short while ago: eviction order among entries used within
 * that while does not matter, and processes started one after another (a
 * job's ranks, a test suite) skip a system call on their first kernel. */
#define TOUCH_INTERVAL_S 600

/* An entry read and checked: what a lookup hands its caller. */
typedef struct entry_data {
    char key[33];
    void *image;
    size_t size;
    bool is_cubin;
    disk_cache_origin origin;
    char *names; /* NULL when it has none */
    time_t touched; /* the metadata's mtime when read */
} entry_data;

static void entry_data_free(entry_data *d) {
    free(d->image);
    free(d->names);
    d->image = d->names = NULL;
}

/* Touches the metadata of the entry whose stem is in path when its last
 * touch is stale (least-recent-use order) or in the future (a clock set
 * back). A second ahead is now: Linux may stamp files from a finer clock
 * than time()'s (multigrain timestamps, 6.13 on). */
static void touch_if_stale(char *path, char *suffix, time_t touched) {
    time_t now = time(NULL);
    if (touched <= now + 1 && now - touched < TOUCH_INTERVAL_S) return;
    strcpy(suffix, "meta");
    utimensat(AT_FDCWD, path, NULL, 0);
}

/* Reads and checks the entry d->key whose path up to the suffix is in
 * path (suffix points past its dot; room for the longest suffix read):
 * false when it is absent or fails a check, which with repair removes it
 * (so it is rebuilt); an image without metadata is a write in progress and
 * is left alone. An image over max_image bytes fails too. */
static bool entry_load(char *path, char *suffix, unsigned long long max_image, bool repair, entry_data *d) {
    char *data = NULL, *lines = NULL, text[META_MAX];
    size_t text_size = 0;
    strcpy(suffix, "meta");
    /* on the stack: no allocation on a hit; an empty record fails parse_meta */
    files_read_status rs = files_read_regular_into(path, false, text, sizeof text, &text_size, &d->touched);
    if (rs == FILES_READ_MISSING) return false; /* absent, or a write in progress */
    entry_meta m;
    bool ok = rs == FILES_READ_OK && parse_meta(text, text_size, &m) && m.format == CACHE_FORMAT &&
              strcmp(m.key, d->key) == 0 && m.image_size > 0;
    if (ok) {
        strcpy(suffix, m.is_cubin ? "cubin" : "ptx");
        ok = read_checked(path, m.image_size, max_image, m.image_sum, &data);
    }
    ok = ok && (m.names_size > 0 || m.names_sum == 0); /* one record per entry: no checksum of nothing */
    if (ok && m.names_size > 0) {
        /* lines of names ending with a newline, no NUL among them */
        strcpy(suffix, "names");
        ok = read_checked(path, m.names_size, NAMES_MAX, m.names_sum, &lines) &&
             lines[m.names_size - 1] == '\n' && strlen(lines) == m.names_size;
        if (ok) lines[m.names_size - 1] = 0;
    }
    if (!ok) {
        free(data);
        free(lines);
        if (repair) remove_suffixed(path, suffix); /* corrupt, truncated, foreign or over the cap: rebuild */
        return false;
    }
    d->image = data;
    d->size = (size_t)m.image_size;
    d->is_cubin = m.is_cubin;
    d->origin = m.origin;
    d->names = lines;
    return true;
}

/* Read-ahead. <dir>/recent lists, one key a line, the entries that
 * processes looked up first: each process appends the keys of its first
 * RECENT_PER_PROCESS lookups that reached the disk. disk_cache_read_ahead,
 * run on the context open's prefetch thread while the driver creates the
 * context (which takes far longer), reads and checks the newest
 * READ_AHEAD_MAX of them into memory, so that a warm process's first
 * lookups find their entries there without a system call. An entry read
 * ahead is the same bytes a lookup would read for its key (a key names
 * its content), so one taken after the file changed or went is still
 * right. */
#define RECENT_PER_PROCESS 8
#define READ_AHEAD_MAX 16
#define READ_AHEAD_BYTES (8u << 20)
#define RECENT_TAIL (READ_AHEAD_MAX * 4 * 33) /* the last lines read: room for repeats and foreign lines */
#define RECENT_COMPACT (16u << 10)          /* a longer list is rewritten to its newest keys */

static struct {
    pthread_mutex_t lock;
    char *dir; /* the cache directory the entries came from */
    int count; /* read without the lock on the fast path: 0 means nothing to take */
    entry_data entries[READ_AHEAD_MAX];
} ahead = {.lock = PTHREAD_MUTEX_INITIALIZER};

static bool is_key_line(const char *s, size_t n) {
    if (n != 32) return false;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'))) return false;
    return true;
}

/* The newest distinct keys of the list's tail, newest first: their count.
 * whole: the tail is the whole list (else its first line may be cut). */
static int recent_keys(const char *text, size_t size, bool whole, char keys[][33], int max) {
    int n = 0;
    size_t end = size;
    while (end > 0 && n < max) {
        size_t start = end;
        while (start > 0 && text[start - 1] != '\n') start--;
        if (is_key_line(text + start, end - start) && (start > 0 || whole)) {
            bool seen = false;
            for (int i = 0; i < n && !seen; i++) seen = memcmp(keys[i], text + start, 32) == 0;
            if (!seen) {
                memcpy(keys[n], text + start, 32);
                keys[n++][32] = 0;
            }
        }
        end = start > 0 ? start - 1 : 0;
    }
    return n;
}

/* The list's path into buf; false when it does not fit. */
static bool recent_path(const disk_cache *c, char *buf, size_t size) {
    return (size_t)snprintf(buf, size, "%s/recent", c->dir) < size;
}

/* Notes a lookup that reached the disk in the list, for the first few of
 * a process. A failure costs a later process its read-ahead, nothing else. */
static void recent_note(const disk_cache *c, const char hex[33]) {
    static unsigned noted;
    if (__atomic_fetch_add(&noted, 1, __ATOMIC_RELAXED) >= RECENT_PER_PROCESS) return;
    char path[4200], line[33];
    memcpy(line, hex, 32);
    line[32] = '\n';
    if (recent_path(c, path, sizeof path)) (void)files_append(path, line, sizeof line);
}

/* Takes the entry key read ahead from c's directory, if any. */
static bool ahead_take(const disk_cache *c, const char hex[33], entry_data *out) {
    if (__atomic_load_n(&ahead.count, __ATOMIC_ACQUIRE) == 0) return false;
    bool found = false;
    pthread_mutex_lock(&ahead.lock);
    bool same_dir = ahead.dir && strcmp(ahead.dir, c->dir) == 0;
    for (int i = 0; same_dir && i < ahead.count && !found; i++) {
        if (strcmp(ahead.entries[i].key, hex) != 0) continue;
        *out = ahead.entries[i];
        ahead.entries[i] = ahead.entries[ahead.count - 1];
        __atomic_store_n(&ahead.count, ahead.count - 1, __ATOMIC_RELEASE);
        found = true;
    }
    pthread_mutex_unlock(&ahead.lock);
    return found;
}

void disk_cache_read_ahead_release(void) {
    pthread_mutex_lock(&ahead.lock);
    for (int i = 0; i < ahead.count; i++) entry_data_free(&ahead.entries[i]);
    __atomic_store_n(&ahead.count, 0, __ATOMIC_RELEASE);
    free(ahead.dir);
    ahead.dir = NULL;
    pthread_mutex_unlock(&ahead.lock);
}

void disk_cache_read_ahead(void) {
    static bool done; /* once a process: what a later open would read is what the first left */
    if (__atomic_exchange_n(&done, true, __ATOMIC_RELAXED)) return;
    disk_cache *c = disk_cache_open(NULL);
    if (!c) return;
    char path[4300], text[RECENT_TAIL], keys[READ_AHEAD_MAX][33];
    int count = 0;
    size_t size = 0;
    unsigned long long list_size = 0;
    bool listed = recent_path(c, path, sizeof path) &&
                  files_read_tail(path, text, sizeof text, &size, &list_size) == FILES_READ_OK;
    if (listed) count = recent_keys(text, size, list_size <= RECENT_TAIL, keys, READ_AHEAD_MAX);
    if (listed && list_size > RECENT_COMPACT) { /* newest last, as appended */
        char kept[READ_AHEAD_MAX * 33];
        for (int i = 0; i < count; i++) {
            memcpy(kept + 33 * i, keys[count - 1 - i], 32);
            kept[33 * i + 32] = '\n';
        }
        const void *parts[1] = {kept};
        size_t sizes[1] = {33 * (size_t)count};
        (void)files_write_atomic(path, parts, sizes, 1, false); /* a lost race loses a few lines, nothing else */
    }
    entry_data loaded[READ_AHEAD_MAX];
    int n = 0;
    unsigned long long budget = READ_AHEAD_BYTES;
    for (int i = 0; i < count; i++) {
        char *suffix = entry_stem(c, keys[i], path, sizeof path, sizeof "cubin");
        entry_data *d = &loaded[n];
        memcpy(d->key, keys[i], 33);
        if (!suffix || !entry_load(path, suffix, budget < c->cap_bytes ? budget : c->cap_bytes, false, d)) continue;
        budget -= d->size;
        n++;
    }
    pthread_mutex_lock(&ahead.lock);
    if (n > 0 && !ahead.dir && ahead.count == 0 && (ahead.dir = strdup(c->dir)) != NULL) {
        memcpy(ahead.entries, loaded, (size_t)n * sizeof *loaded);
        __atomic_store_n(&ahead.count, n, __ATOMIC_RELEASE);
        n = 0;
    }
    pthread_mutex_unlock(&ahead.lock);
    for (int i = 0; i < n; i++) entry_data_free(&loaded[i]);
    disk_cache_close(c);
}

bool disk_cache_read_entry(disk_cache *c, const cache_key *key, void **image, size_t *size, bool *is_cubin,
                           disk_cache_origin *origin, char **names) {
    if (names) *names = NULL;
    if (!c) return false;
    /* one path at a time: the suffix is all that differs */
    entry_data d = {.image = NULL};
    char path[4300];
    cache_key_hex(key, d.key);
    char *suffix = entry_stem(c, d.key, path, sizeof path, sizeof "cubin"); /* the longest suffix read */
    if (!suffix) return false;
    if (!ahead_take(c, d.key, &d)) {
        if (!entry_load(path, suffix, c->cap_bytes, true, &d)) return false;
        recent_note(c, d.key);
    }
    touch_if_stale(path, suffix, d.touched);
    *image = d.image;
    *size = d.size;
    *is_cubin = d.is_cubin;
    if (origin) *origin = d.origin;
    if (names) *names = d.names;
    else free(d.names);
    return true;
}

bool disk_cache_read(disk_cache *c, const cache_key *key, void **image, size_t *size, bool *is_cubin) {
    return disk_cache_read_entry(c, key, image, size, is_cubin, NULL, NULL);
}

/* One file of a cache entry in the cache's directory. A write's temporary
 * file (FILE_TEMP), in flight or left by a writer that died, counts with
 * its entry and goes with it. */
typedef struct cache_file {
    char path[4300];
    size_t stem; /* the length of the path up to the key's end: files of one entry share it */
    file_kind kind;
    time_t mtime;
    off_t size;
    bool regular; /* else something to remove on purge, never to count */
} cache_file;

/* The entry a file name belongs to: 32 lowercase hex digits and a known
 * suffix (or a temporary file of one); anything else in a shard is not the
 * cache's and is left alone. */
static bool cache_file_name(const char *name, file_kind *kind) {
    for (int i = 0; i < 32; i++)
        if (!isxdigit((unsigned char)name[i]) || isupper((unsigned char)name[i])) return false;
    for (int k = 0; k < FILE_KIND_COUNT; k++) {
        size_t len = strlen(file_suffixes[k]);
        if (strncmp(name + 32, file_suffixes[k], len) != 0) continue;
        if (name[32 + len] == 0) *kind = (file_kind)k;
        else if (k != FILE_LEGACY && strncmp(name + 32 + len, ".tmp.", 5) == 0) *kind = FILE_TEMP;
        else continue;
        return true;
    }
    return false;
}

/* An entry: its files [first, first + count) of the sorted list. */
typedef struct cache_entry {
    size_t first, count;
    time_t mtime;               /* the newest of its files' */
    unsigned long long size;    /* of its regular files */
    bool committed;             /* it has current metadata */
    bool legacy;                /* only files of an old format */
} cache_entry;

static int by_path(const void *a, const void *b) {
    return strcmp(((const cache_file *)a)->path, ((const cache_file *)b)->path);
}

/* Old-format entries first (nothing reads them), then least recently used. */
static int by_age(const void *a, const void *b) {
    const cache_entry *x = a, *y = b;
    if (x->legacy != y->legacy) return x->legacy ? -1 : 1;
    return (x->mtime > y->mtime) - (x->mtime < y->mtime);
}

/* Lists every file of every entry, sorted so that an entry's files are
 * adjacent, and groups them into entries. 0, or an errno: ENOMEM, or why
 * the directory cannot be read (a missing directory is an empty cache). On
 * failure both lists are empty. */
static int scan(const char *dir, cache_file **files, size_t *count, cache_entry **entries, size_t *entry_count) {
    size_t cap = 0;
    *files = NULL;
    *count = 0;
    *entries = NULL;
    *entry_count = 0;
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
            cache_file f;
            if (strlen(e->d_name) < 33 || !cache_file_name(e->d_name, &f.kind)) continue;
            snprintf(f.path, sizeof f.path, "%s/%s", shard, e->d_name);
            f.stem = strlen(shard) + 1 + 32;
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
        }
        closedir(sd);
    }
    closedir(top);
    if (!err && *count) {
        qsort(*files, *count, sizeof **files, by_path);
        if ((*entries = malloc(*count * sizeof **entries)) == NULL) err = ENOMEM;
    }
    for (size_t i = 0; !err && i < *count; i++) {
        const cache_file *f = &(*files)[i];
        cache_entry *last = *entry_count ? &(*entries)[*entry_count - 1] : NULL;
        if (!last || strncmp((*files)[last->first].path, f->path, f->stem + 1) != 0) {
            last = &(*entries)[(*entry_count)++];
            *last = (cache_entry){.first = i, .legacy = true};
        }
        last->count++;
        if (f->mtime > last->mtime) last->mtime = f->mtime;
        last->size += (unsigned long long)f->size;
        if (f->kind == FILE_META && f->regular) last->committed = true;
        if (f->kind != FILE_LEGACY) last->legacy = false;
    }
    if (err) {
        free(*files);
        free(*entries);
        *files = NULL;
        *entries = NULL;
        *count = *entry_count = 0;
    }
    return err;
}

/* Removes an entry's files, the metadata first: 0, or the errno of a file
 * that could not be removed (*failed names it). */
static int remove_group(const cache_file *files, const cache_entry *e, const char **failed) {
    int err = 0;
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < e->count; i++) {
            const cache_file *f = &files[e->first + i];
            if ((f->kind == FILE_META) != (pass == 0)) continue;
            if (remove_entry(f->path) != 0 && errno != ENOENT) {
                err = errno;
                *failed = f->path;
            }
        }
    return err;
}

static void trim(disk_cache *c) {
    cache_file *files;
    cache_entry *entries;
    size_t count, entry_count;
    if (scan(c->dir, &files, &count, &entries, &entry_count) != 0) return; /* out of memory: trim on a later write */
    unsigned long long total = 0;
    for (size_t i = 0; i < entry_count; i++) total += entries[i].size;
    qsort(entries, entry_count, sizeof *entries, by_age);
    /* old-format entries always go; then, over the cap, the least recently
     * used until a tenth is free (so that not every write trims) */
    unsigned long long target = c->cap_bytes / 10 * 9;
    bool over = false;
    const char *failed;
    for (size_t i = 0; i < entry_count; i++) {
        if (!entries[i].legacy) {
            if (!over) over = total > c->cap_bytes;
            if (!over || total <= target) break;
        }
        if (remove_group(files, &entries[i], &failed) == 0) total -= entries[i].size;
    }
    free(files);
    free(entries);
}

/* Writes one file atomically, replacing a directory in its place. */
static int write_file(const char *path, const void *const *parts, const size_t *sizes, int count) {
    int err = files_write_atomic(path, parts, sizes, count, false);
    if (err == EISDIR || err == ENOTEMPTY || err == EEXIST) { /* a directory in the file's place */
        remove_entry(path);
        err = files_write_atomic(path, parts, sizes, count, false);
    }
    return err;
}

ptxkit_status disk_cache_write_entry(disk_cache *c, const cache_key *key, const void *image, size_t size,
                                     bool is_cubin, disk_cache_origin origin, const char *names) {
    if (!c) return PTXKIT_SUCCESS;
    if (size == 0 || origin < DISK_CACHE_FAMILY || origin >= (disk_cache_origin)ORIGIN_COUNT ||
        (names && strlen(names) >= NAMES_MAX))
        return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "kernel cache: an empty image, an unknown origin or names over %u bytes", NAMES_MAX);
    entry_paths p;
    entry_paths_of(c, key, &p);
    if (!files_make_dirs(p.shard)) return record_error(NULL, PTXKIT_ERROR_IO, "kernel cache: cannot create %s: %s", p.shard, strerror(errno));
    entry_meta m = {.format = CACHE_FORMAT, .is_cubin = is_cubin, .origin = origin, .image_size = size,
                    .image_sum = XXH3_64bits(image, size)};
    cache_key_hex(key, m.key);
    int err = 0;
    const char *failed = p.meta;
    if (names && *names) {
        size_t len = strlen(names);
        const void *parts[2] = {names, "\n"};
        size_t sizes[2] = {len, 1};
        m.names_size = len + 1;
        /* the checksum of the file's bytes: the names and the newline */
        XXH3_state_t state;
        XXH3_64bits_reset(&state);
        XXH3_64bits_update(&state, names, len);
        XXH3_64bits_update(&state, "\n", 1);
        m.names_sum = XXH3_64bits_digest(&state);
        err = write_file(p.names, parts, sizes, 2);
        failed = p.names;
    }
    if (!err) {
        const void *parts[1] = {image};
        err = write_file(is_cubin ? p.cubin : p.ptx, parts, &size, 1);
        failed = is_cubin ? p.cubin : p.ptx;
    }
    char text[META_MAX];
    size_t text_size = render_meta(&m, text, sizeof text);
    if (!err) {
        const void *parts[1] = {text};
        err = text_size ? write_file(p.meta, parts, &text_size, 1) : ENAMETOOLONG;
        failed = p.meta;
    }
    if (err) return record_error(NULL, PTXKIT_ERROR_IO, "kernel cache: cannot store %s: %s", failed, strerror(err));
    /* committed: what an older write or format left beside it goes */
    unlink(is_cubin ? p.ptx : p.cubin);
    unlink(p.legacy);
    if (!m.names_size) unlink(p.names);
    recent_note(c, m.key);
    trim(c);
    return PTXKIT_SUCCESS;
}

ptxkit_status disk_cache_write(disk_cache *c, const cache_key *key, const void *image, size_t size, bool is_cubin) {
    return disk_cache_write_entry(c, key, image, size, is_cubin, DISK_CACHE_PROGRAM, NULL);
}

static ptxkit_status scan_error(const char *dir, int err) {
    if (err == ENOMEM) return record_error(NULL, PTXKIT_ERROR_OUT_OF_MEMORY, "kernel cache: out of host memory listing %s", dir);
    return record_error(NULL, PTXKIT_ERROR_IO, "kernel cache: cannot read %s: %s", dir,
                        err == ENOTDIR ? "not a directory" : strerror(err));
}

ptxkit_status ptxkit_cache_stats_get(size_t *files, size_t *bytes) {
    if (!files || !bytes) return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_cache_stats_get: NULL argument");
    *files = *bytes = 0;
    disk_cache *c = disk_cache_open(NULL);
    if (!c) return PTXKIT_SUCCESS;
    cache_file *list;
    cache_entry *entries;
    size_t count, entry_count;
    int err = scan(c->dir, &list, &count, &entries, &entry_count);
    ptxkit_status st = err ? scan_error(c->dir, err) : PTXKIT_SUCCESS;
    /* kernels: committed entries; bytes: every file the cache holds */
    for (size_t i = 0; i < entry_count; i++) {
        *files += entries[i].committed;
        *bytes += (size_t)entries[i].size;
    }
    free(list);
    free(entries);
    disk_cache_close(c);
    return st;
}

ptxkit_status ptxkit_cache_purge(void) {
    disk_cache *c = disk_cache_open(NULL);
    if (!c) return PTXKIT_SUCCESS;
    cache_file *list;
    cache_entry *entries;
    size_t count, entry_count;
    int err = scan(c->dir, &list, &count, &entries, &entry_count);
    ptxkit_status st = err ? scan_error(c->dir, err) : PTXKIT_SUCCESS;
    for (size_t i = 0; i < entry_count; i++) {
        const char *failed = NULL;
        int e = remove_group(list, &entries[i], &failed);
        if (e) st = record_error(NULL, PTXKIT_ERROR_IO, "ptxkit_cache_purge: cannot remove %s: %s", failed, strerror(e));
    }
    /* nothing read ahead outlives a purge: its next lookups miss */
    disk_cache_read_ahead_release();
    char recent[4300];
    if (recent_path(c, recent, sizeof recent)) unlink(recent);
    free(list);
    free(entries);
    disk_cache_close(c);
    return st;
}

char *disk_cache_names_join(const char *const *names, int count) {
    size_t total = 1;
    for (int i = 0; i < count; i++) {
        if (!names[i][0] || strchr(names[i], '\n')) return NULL;
        total += strlen(names[i]) + 1;
    }
    char *text = malloc(total);
    if (!text) return NULL;
    size_t at = 0;
    for (int i = 0; i < count; i++) {
        size_t n = strlen(names[i]);
        if (i > 0) text[at++] = '\n';
        memcpy(text + at, names[i], n);
        at += n;
    }
    text[at] = 0;
    return text;
}

bool disk_cache_names_split(char *text, int count, const char **names) {
    char *line = text;
    for (int i = 0; i < count; i++) {
        char *end = strchr(line, '\n');
        if (end == line || !*line) return false;
        names[i] = line;
        if (!end) return i == count - 1;
        *end = 0;
        line = end + 1;
    }
    return false; /* more lines than names */
}
