/* Header trees from disk: include directories, the toolkit's, and the
 * digest of the files a compile may read (header_tree.h). */
#include <errno.h>
#include <stdint.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "driver/driver.h"
#include "runtime/disk_cache.h"
#include "runtime/embedded.h"
#include "runtime/files.h"
#include "runtime/header_tree.h"
#include "runtime/status.h"

/* One header file may not be larger (as a program's source). */
#define MAX_HEADER_BYTES ((size_t)64 << 20)

struct header_tree {
    char **dirs; /* absolute: the source's directory first when from a file, then the program's */
    int dir_count;
    pthread_mutex_t lock;
    bool used;         /* search path or digest handed out: dirs fixed */
    const char **search;
    int search_count;
    bool digest_ready;
    text_hash digest;
    int files; /* header files on disk the digest covers */
};

/* ---- the toolkit's include directories ---------------------------------- */

static char toolkit_storage[2][PATH_MAX];
static const char *toolkit_list[2];
static int toolkit_count;
static pthread_once_t toolkit_once = PTHREAD_ONCE_INIT;

static bool is_dir(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The NVRTC file the loader would find by its bare name: LD_LIBRARY_PATH's
 * directories (ld.so.cache is not read; /usr/local/cuda comes later in the
 * list anyway). */
static bool find_on_library_path(const char *name, char *out, size_t size) {
    const char *path = getenv("LD_LIBRARY_PATH");
    while (path && *path) {
        size_t len = strcspn(path, ":");
        if (len > 0 && (size_t)snprintf(out, size, "%.*s/%s", (int)len, path, name) < size && files_is_regular(out))
            return true;
        path += len + (path[len] == ':');
    }
    return false;
}

/* From the directory holding libnvrtc: <root>/lib64, <root>/lib,
 * <root>/targets/<arch>/lib or a pip wheel's nvidia/<pkg>/lib, the include
 * directory beside it, and CUDA 13's cccl directory inside it. */
static void toolkit_from_library(const char *library) {
    char real[PATH_MAX], dir[PATH_MAX];
    if (!realpath(library, real)) return;
    char *slash = strrchr(real, '/');
    if (!slash) return;
    *slash = 0;                        /* .../lib64 */
    if (!(slash = strrchr(real, '/'))) return;
    *slash = 0;                        /* the root */
    if (strlen(real) + sizeof "/include/cccl" > sizeof dir) return;
    memcpy(dir, real, strlen(real) + 1);
    strcat(dir, "/include");
    if (!is_dir(dir)) return;
    /* CCCL (cub, thrust, libcu++) first: CUDA 13 keeps it apart */
    memcpy(toolkit_storage[toolkit_count], dir, strlen(dir) + 1);
    strcat(toolkit_storage[toolkit_count], "/cccl");
    if (is_dir(toolkit_storage[toolkit_count])) toolkit_count++;
    memcpy(toolkit_storage[toolkit_count++], dir, strlen(dir) + 1);
}

static void toolkit_find(void) {
    const char *setting = getenv("PTXKIT_TOOLKIT_INCLUDE");
    if (setting && strcmp(setting, "off") == 0) return;
    static nvrtc_candidates c; /* large: off the stack, filled once */
    nvrtc_search_list(&c);
    for (int i = 0; i < c.count && toolkit_count == 0; i++) {
        char found[PATH_MAX];
        const char *path = c.path[i];
        if (!strchr(path, '/')) {
            if (!find_on_library_path(path, found, sizeof found)) continue;
            path = found;
        } else if (!files_is_regular(path)) {
            continue;
        }
        toolkit_from_library(path);
    }
    for (int i = 0; i < toolkit_count; i++) toolkit_list[i] = toolkit_storage[i];
}

int header_tree_toolkit_dirs(const char *const **dirs) {
    pthread_once(&toolkit_once, toolkit_find);
    *dirs = toolkit_list;
    return toolkit_count;
}

/* ---- the tree ------------------------------------------------------------ */

static ptxkit_status append_dir(header_tree *t, const char *dir, const char *who) {
    char real[PATH_MAX];
    if (!realpath(dir, real) || !is_dir(real))
        return record_error(NULL, errno == ENOMEM ? PTXKIT_ERROR_OUT_OF_MEMORY : PTXKIT_ERROR_IO,
                            "%s: include directory '%s' is not a directory (%s)", who, dir,
                            errno ? strerror(errno) : "not a directory");
    for (const char *c = real; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f)
            return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "%s: include directory '%s' holds a control character",
                                who, dir);
    /* the same directory twice finds nothing new */
    for (int i = 0; i < t->dir_count; i++)
        if (strcmp(t->dirs[i], real) == 0) return PTXKIT_SUCCESS;
    char **grown = realloc(t->dirs, (size_t)(t->dir_count + 1) * sizeof *grown);
    if (!grown) return record_error(NULL, PTXKIT_ERROR_OUT_OF_MEMORY, "%s: out of host memory", who);
    t->dirs = grown;
    if ((t->dirs[t->dir_count] = strdup(real)) == NULL)
        return record_error(NULL, PTXKIT_ERROR_OUT_OF_MEMORY, "%s: out of host memory", who);
    t->dir_count++;
    return PTXKIT_SUCCESS;
}

header_tree *header_tree_create(const char *source_path) {
    header_tree *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    pthread_mutex_init(&t->lock, NULL);
    if (source_path) {
        char dir[PATH_MAX];
        const char *slash = strrchr(source_path, '/');
        if (!slash) snprintf(dir, sizeof dir, ".");
        else if (slash == source_path) snprintf(dir, sizeof dir, "/");
        else snprintf(dir, sizeof dir, "%.*s", (int)(slash - source_path), source_path);
        /* the file was just read, so its directory exists; a failure here is memory */
        if (append_dir(t, dir, "ptxkit_program_create_from_file") != PTXKIT_SUCCESS) {
            header_tree_destroy(t);
            return NULL;
        }
    }
    return t;
}

void header_tree_destroy(header_tree *t) {
    if (!t) return;
    for (int i = 0; i < t->dir_count; i++) free(t->dirs[i]);
    free(t->dirs);
    free(t->search);
    pthread_mutex_destroy(&t->lock);
    free(t);
}

ptxkit_status header_tree_add_dirs(header_tree *t, const char *const *dirs, int count, const char *who) {
    if (!t || count < 0 || (count > 0 && !dirs))
        return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "%s: bad arguments", who);
    for (int i = 0; i < count; i++)
        if (!dirs[i] || !*dirs[i])
            return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "%s: include directory #%d is empty", who, i);
    pthread_mutex_lock(&t->lock);
    ptxkit_status st = t->used ? record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT,
                                              "%s: the program has been compiled or looked up already; add include "
                                              "directories before its first kernel", who)
                               : PTXKIT_SUCCESS;
    int before = t->dir_count;
    for (int i = 0; i < count && st == PTXKIT_SUCCESS; i++) st = append_dir(t, dirs[i], who);
    /* all or nothing */
    while (st != PTXKIT_SUCCESS && t->dir_count > before) free(t->dirs[--t->dir_count]);
    pthread_mutex_unlock(&t->lock);
    return st;
}

static bool build_search(header_tree *t) {
    if (t->search) return true;
    const char *const *toolkit;
    int n = header_tree_toolkit_dirs(&toolkit);
    const char **s = malloc((size_t)(t->dir_count + n + 1) * sizeof *s);
    if (!s) return false;
    int count = 0;
    for (int i = 0; i < t->dir_count; i++) s[count++] = t->dirs[i];
    for (int i = 0; i < n; i++) {
        bool seen = false; /* a toolkit directory the program named itself */
        for (int k = 0; k < count && !seen; k++) seen = strcmp(s[k], toolkit[i]) == 0;
        if (!seen) s[count++] = toolkit[i];
    }
    t->search = s;
    t->search_count = count;
    return true;
}

int header_tree_search_path(header_tree *t, const char *const **dirs) {
    *dirs = NULL;
    if (!t) return 0;
    pthread_mutex_lock(&t->lock);
    t->used = true;
    int n = build_search(t) ? t->search_count : 0;
    *dirs = t->search;
    pthread_mutex_unlock(&t->lock);
    return n;
}

/* ---- the scan ------------------------------------------------------------ */

typedef struct tree_file {
    char *path; /* canonical */
    long long size, mtime_ns;
    bool toolkit;
    XXH128_hash_t hash;
} tree_file;

typedef struct tree_dir {
    char *path;
    long long mtime_ns;
} tree_dir;

typedef struct scan {
    const char *const *search;
    int search_count;
    const char *source_dir;          /* the program name's directory, when quoted includes may look there */
    const char *const *memory_names; /* the program's headers */
    int memory_count;
    tree_file *files;
    int file_count, file_cap;
    tree_dir *dirs;
    int dir_count, dir_cap;
    bool failed; /* out of memory: the digest is then made unique, never reused */
    bool probe;       /* only asking whether an include leaves memory (reaches_disk) */
    bool reaches_disk;
    char candidate[PATH_MAX];
} scan;

static long long mtime_ns_of(const struct stat *st) {
    return (long long)st->st_mtim.tv_sec * 1000000000LL + st->st_mtim.tv_nsec;
}

static bool under_toolkit(const char *path) {
    const char *const *toolkit;
    int n = header_tree_toolkit_dirs(&toolkit);
    for (int i = 0; i < n; i++) {
        size_t len = strlen(toolkit[i]);
        if (strncmp(path, toolkit[i], len) == 0 && path[len] == '/') return true;
    }
    return false;
}

static bool in_memory(const scan *s, const char *name) {
    for (int i = 0; i < s->memory_count; i++)
        if (strcmp(s->memory_names[i], name) == 0) return true;
    return embedded_is_builtin_header(name);
}

/* A directory where a name was looked for and is absent: the deepest one of
 * the candidate's existing ancestors, whose modification time a new file
 * there (or a new directory on the way) changes. */
static void watch_absent(scan *s, const char *candidate) {
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", candidate);
    struct stat st;
    for (;;) {
        char *slash = strrchr(dir, '/');
        if (!slash) return;
        if (slash == dir) slash[1] = 0;
        else *slash = 0;
        if (stat(dir, &st) == 0) {
            if (!S_ISDIR(st.st_mode)) return;
            break;
        }
        if (slash == dir) return;
    }
    for (int i = 0; i < s->dir_count; i++)
        if (strcmp(s->dirs[i].path, dir) == 0) return;
    if (s->dir_count == s->dir_cap) {
        int cap = s->dir_cap ? 2 * s->dir_cap : 16;
        tree_dir *grown = realloc(s->dirs, (size_t)cap * sizeof *grown);
        if (!grown) {
            s->failed = true;
            return;
        }
        s->dirs = grown;
        s->dir_cap = cap;
    }
    if ((s->dirs[s->dir_count].path = strdup(dir)) == NULL) {
        s->failed = true;
        return;
    }
    s->dirs[s->dir_count++].mtime_ns = mtime_ns_of(&st);
}

static void scan_text(scan *s, const char *text, const char *dir);

/* Reads, hashes and scans one file found on disk, once. */
/* Reads, hashes and scans one file found on disk, once. Recursive as the
 * includes nest (toolkit headers nest deeply): the frame keeps its buffers
 * on the heap. */
static void visit(scan *s, const char *candidate) {
    char *real = realpath(candidate, NULL);
    if (!real) return;
    for (int i = 0; i < s->file_count; i++)
        if (strcmp(s->files[i].path, real) == 0) {
            free(real);
            return;
        }
    char *text = NULL, *here = NULL;
    size_t size = 0;
    struct stat st;
    /* unreadable: hashed as absent, and NVRTC will say why */
    bool ok = files_read_regular(real, true, MAX_HEADER_BYTES, &text, &size, NULL) == FILES_READ_OK;
    if (ok && s->file_count == s->file_cap) {
        int cap = s->file_cap ? 2 * s->file_cap : 64;
        tree_file *grown = realloc(s->files, (size_t)cap * sizeof *grown);
        if (grown) {
            s->files = grown;
            s->file_cap = cap;
        } else {
            s->failed = true;
            ok = false;
        }
    }
    if (ok && (stat(real, &st) != 0 || (here = strdup(real)) == NULL)) {
        s->failed = true;
        ok = false;
    }
    if (!ok) {
        free(real);
        free(text);
        return;
    }
    tree_file *f = &s->files[s->file_count++];
    f->path = real;
    f->size = (long long)size;
    f->mtime_ns = mtime_ns_of(&st);
    f->toolkit = under_toolkit(real);
    f->hash = XXH3_128bits(text, size);
    char *slash = strrchr(here, '/');
    if (slash == here) slash[1] = 0;
    else if (slash) *slash = 0;
    scan_text(s, text, here);
    free(here);
    free(text);
}

static void resolve(scan *s, const char *name, bool quoted, const char *dir) {
    if (in_memory(s, name)) return;
    if (s->probe) {
        s->reaches_disk = true;
        return;
    }
    /* shared by every level: each use is rebuilt before it is read */
    char *candidate = s->candidate;
    if (name[0] == '/') {
        struct stat st;
        if (stat(name, &st) == 0) visit(s, name);
        else watch_absent(s, name);
        return;
    }
    for (int i = quoted && dir ? -1 : 0; i < s->search_count; i++) {
        const char *base = i < 0 ? dir : s->search[i];
        if ((size_t)snprintf(candidate, PATH_MAX, "%s/%s", base, name) >= PATH_MAX) continue;
        struct stat st;
        if (stat(candidate, &st) == 0 && S_ISREG(st.st_mode)) visit(s, candidate);
        else watch_absent(s, candidate);
    }
}

/* Every #include "name" and #include <name> (and #include_next) line;
 * conditionals are not evaluated, comments are not parsed (an include in a
 * comment is followed too: more files, never fewer). */
static void scan_text(scan *s, const char *text, const char *dir) {
    for (const char *line = text; line && *line;) {
        const char *end = strchr(line, '\n');
        const char *c = line;
        while (*c == ' ' || *c == '\t') c++;
        if (*c == '#') {
            c++;
            while (*c == ' ' || *c == '\t') c++;
            if (strncmp(c, "include", 7) == 0) {
                c += 7;
                if (strncmp(c, "_next", 5) == 0) c += 5;
                while (*c == ' ' || *c == '\t') c++;
                char close = *c == '"' ? '"' : *c == '<' ? '>' : 0;
                if (close) {
                    const char *start = c + 1, *stop = start;
                    while (*stop && *stop != close && *stop != '\n') stop++;
                    size_t len = (size_t)(stop - start);
                    if (*stop == close && len > 0 && len < 1024) {
                        char name[1024];
                        memcpy(name, start, len);
                        name[len] = 0;
                        resolve(s, name, close == '"', dir);
                    }
                }
            }
        }
        line = end ? end + 1 : NULL;
    }
}

static void scan_free(scan *s) {
    for (int i = 0; i < s->file_count; i++) free(s->files[i].path);
    for (int i = 0; i < s->dir_count; i++) free(s->dirs[i].path);
    free(s->files);
    free(s->dirs);
}

/* The digest: the search path, then each file found, in scan order, by
 * path and content (not by time: touching a file changes nothing). */
static text_hash digest_of(const scan *s) {
    XXH3_state_t state;
    XXH3_128bits_reset(&state);
    for (int i = 0; i < s->search_count; i++) XXH3_128bits_update(&state, s->search[i], strlen(s->search[i]) + 1);
    XXH3_128bits_update(&state, "\n", 1);
    if (s->source_dir) XXH3_128bits_update(&state, s->source_dir, strlen(s->source_dir) + 1);
    XXH3_128bits_update(&state, "\n", 1);
    for (int i = 0; i < s->file_count; i++) {
        XXH3_128bits_update(&state, s->files[i].path, strlen(s->files[i].path) + 1);
        XXH3_128bits_update(&state, &s->files[i].hash, sizeof s->files[i].hash);
    }
    XXH128_hash_t h = XXH3_128bits_digest(&state);
    return (text_hash){h.low64, h.high64};
}

/* ---- the manifest -------------------------------------------------------- */

#define MANIFEST_MAGIC "ptxkit header manifest 1\n"

static cache_key manifest_key(text_hash program_hash, const char *const *search, int count, const char *source_dir) {
    XXH3_state_t state;
    XXH3_128bits_reset(&state);
    XXH3_128bits_update(&state, MANIFEST_MAGIC, sizeof MANIFEST_MAGIC);
    XXH3_128bits_update(&state, PTXKIT_VERSION_STRING, sizeof PTXKIT_VERSION_STRING);
    XXH3_128bits_update(&state, &program_hash, sizeof program_hash);
    text_hash builtin = builtin_headers_hash();
    XXH3_128bits_update(&state, &builtin, sizeof builtin);
    for (int i = 0; i < count; i++) XXH3_128bits_update(&state, search[i], strlen(search[i]) + 1);
    XXH3_128bits_update(&state, source_dir, strlen(source_dir) + 1);
    XXH128_canonical_t canon;
    XXH128_canonicalFromHash(&canon, XXH3_128bits_digest(&state));
    cache_key key;
    memcpy(key.bytes, canon.digest, sizeof key.bytes);
    return key;
}

static char *manifest_text(const scan *s, text_hash digest, size_t *length) {
    size_t room = 128;
    for (int i = 0; i < s->file_count; i++) room += strlen(s->files[i].path) + 120;
    for (int i = 0; i < s->dir_count; i++) room += strlen(s->dirs[i].path) + 40;
    char *text = malloc(room);
    if (!text) return NULL;
    size_t used = (size_t)snprintf(text, room, "%sdigest %016llx %016llx\n", MANIFEST_MAGIC,
                                   (unsigned long long)digest.hi, (unsigned long long)digest.lo);
    for (int i = 0; i < s->file_count; i++) {
        const tree_file *f = &s->files[i];
        used += (size_t)snprintf(text + used, room - used, "file %lld %lld %d %016llx %016llx %s\n", f->size,
                                 f->mtime_ns, f->toolkit ? 1 : 0, (unsigned long long)f->hash.high64,
                                 (unsigned long long)f->hash.low64, f->path);
    }
    for (int i = 0; i < s->dir_count; i++)
        used += (size_t)snprintf(text + used, room - used, "dir %lld %s\n", s->dirs[i].mtime_ns, s->dirs[i].path);
    *length = used;
    return text;
}

/* Whether each recorded file still has its recorded content (an
 * application's file re-hashed; a toolkit's trusted while its size and time
 * are unchanged) and each recorded directory its time. */
static bool manifest_current(char *text, size_t size, text_hash *digest, int *files) {
    *files = 0;
    if (size == 0 || text[size - 1] != '\n' || memchr(text, 0, size)) return false;
    if (strncmp(text, MANIFEST_MAGIC, sizeof MANIFEST_MAGIC - 1) != 0) return false;
    char *line = text + sizeof MANIFEST_MAGIC - 1;
    unsigned long long hi, lo;
    int consumed = 0;
    if (sscanf(line, "digest %16llx %16llx\n%n", &hi, &lo, &consumed) != 2 || !consumed) return false;
    *digest = (text_hash){lo, hi};
    line += consumed;
    while (*line) {
        char *end = strchr(line, '\n');
        *end = 0;
        struct stat st;
        long long a, b;
        int toolkit, at = 0;
        unsigned long long h_hi, h_lo;
        if (sscanf(line, "file %lld %lld %d %16llx %16llx %n", &a, &b, &toolkit, &h_hi, &h_lo, &at) == 5 && at) {
            const char *path = line + at;
            if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) return false;
            bool same_identity = (long long)st.st_size == a && mtime_ns_of(&st) == b;
            if (!(toolkit && same_identity)) {
                char *content = NULL;
                size_t n = 0;
                if (files_read_regular(path, true, MAX_HEADER_BYTES, &content, &n, NULL) != FILES_READ_OK) return false;
                XXH128_hash_t h = XXH3_128bits(content, n);
                free(content);
                if (h.high64 != h_hi || h.low64 != h_lo) return false;
            }
            ++*files;
        } else if (sscanf(line, "dir %lld %n", &a, &at) == 1 && at) {
            if (stat(line + at, &st) != 0 || !S_ISDIR(st.st_mode) || mtime_ns_of(&st) != a) return false;
        } else {
            return false;
        }
        line = end + 1;
    }
    return true;
}

/* Whether a text has a quoted #include that no in-memory header answers:
 * NVRTC then also looks in the directory of the program's name. */
static bool asks_source_dir(const scan *s, const char *text) {
    for (const char *line = text; line && *line;) {
        const char *end = strchr(line, '\n'), *c = line;
        while (*c == ' ' || *c == '\t') c++;
        if (*c == '#') {
            c++;
            while (*c == ' ' || *c == '\t') c++;
            if (strncmp(c, "include", 7) == 0) {
                c += 7;
                while (*c == ' ' || *c == '\t' || *c == '_' || (*c >= 'a' && *c <= 'z')) c++;
                const char *stop = *c == '"' ? strchr(c + 1, '"') : NULL;
                if (stop && (!end || stop < end) && stop > c + 1 && stop - c < 1024) {
                    char name[1024];
                    memcpy(name, c + 1, (size_t)(stop - c - 1));
                    name[stop - c - 1] = 0;
                    if (!in_memory(s, name)) return true;
                }
            }
        }
        line = end ? end + 1 : NULL;
    }
    return false;
}

/* The directory of the program's name, as NVRTC resolves it (from the
 * working directory), absolute; "" when it does not exist. */
static void source_dir_of(const char *name, char *out, size_t size) {
    char dir[PATH_MAX], real[PATH_MAX];
    const char *slash = strrchr(name, '/');
    if (!slash) snprintf(dir, sizeof dir, ".");
    else if (slash == name) snprintf(dir, sizeof dir, "/");
    else snprintf(dir, sizeof dir, "%.*s", (int)(slash - name), name);
    out[0] = 0;
    if (realpath(dir, real) && strlen(real) < size) memcpy(out, real, strlen(real) + 1);
}

text_hash header_tree_digest(header_tree *t, text_hash program_hash, const char *program_name, const char *source,
                             const char *const *names, const char *const *texts, int count) {
    /* every kernel lookup of the program asks: no lock once it is made */
    if (__atomic_load_n(&t->digest_ready, __ATOMIC_ACQUIRE)) return t->digest;
    pthread_mutex_lock(&t->lock);
    t->used = true;
    /* Most programs include nothing from disk (or only headers in memory:
     * their own and ptxkit's built-in ones). No search path, directory or
     * file can change what they compile to: one digest serves them all,
     * found without looking for the toolkit or reading a manifest. */
    scan probe = {.memory_names = names, .memory_count = count, .probe = true};
    scan_text(&probe, source, NULL);
    for (int i = 0; i < count && !probe.reaches_disk; i++) scan_text(&probe, texts[i], NULL);
    if (!t->digest_ready && !probe.reaches_disk) {
        t->digest = (text_hash){0x6e6f206469736b20ULL, 0x6865616465727321ULL}; /* "no disk headers!" */
        t->files = 0;
        __atomic_store_n(&t->digest_ready, true, __ATOMIC_RELEASE);
    }
    if (t->digest_ready || !build_search(t)) {
        /* out of memory for the search path: a digest no other tree has */
        text_hash d = t->digest_ready ? t->digest : (text_hash){(uint64_t)(uintptr_t)t, ~0ULL};
        pthread_mutex_unlock(&t->lock);
        return d;
    }
    /* The directory of the program's name takes part only where a quoted
     * include may be looked for there: else the working directory would
     * split the keys of one program run from two places. */
    scan s = {.search = t->search, .search_count = t->search_count, .memory_names = names, .memory_count = count};
    bool asks = asks_source_dir(&s, source);
    for (int i = 0; i < count && !asks; i++) asks = asks_source_dir(&s, texts[i]);
    char source_dir[PATH_MAX] = "";
    if (asks) source_dir_of(program_name, source_dir, sizeof source_dir);
    s.source_dir = source_dir[0] ? source_dir : NULL;
    cache_key key = manifest_key(program_hash, t->search, t->search_count, source_dir);
    disk_cache *disk = disk_cache_open(NULL);
    void *recorded = NULL;
    size_t recorded_size = 0;
    bool is_cubin = false, done = false;
    if (disk_cache_read(disk, &key, &recorded, &recorded_size, &is_cubin) && !is_cubin) {
        char *text = malloc(recorded_size + 1); /* parsed as a string */
        if (text) {
            memcpy(text, recorded, recorded_size);
            text[recorded_size] = 0;
            done = manifest_current(text, recorded_size, &t->digest, &t->files);
            free(text);
        }
    }
    free(recorded);
    if (!done) {
        scan_text(&s, source, s.source_dir);
        for (int i = 0; i < count; i++) scan_text(&s, texts[i], s.source_dir);
        t->digest = digest_of(&s);
        t->files = s.file_count;
        if (s.failed) {
            /* a partial scan may miss a file: a digest no other tree has */
            static unsigned long long unique;
            t->digest.lo ^= __atomic_add_fetch(&unique, 1, __ATOMIC_RELAXED) * 0x9e3779b97f4a7c15ULL;
            t->digest.hi ^= (unsigned long long)(uintptr_t)t;
        } else {
            size_t length = 0;
            char *text = manifest_text(&s, t->digest, &length);
            /* a cache that cannot be written costs a scan, never correctness */
            if (text) disk_cache_write(disk, &key, text, length, false);
            free(text);
        }
        scan_free(&s);
    }
    disk_cache_close(disk);
    __atomic_store_n(&t->digest_ready, true, __ATOMIC_RELEASE);
    text_hash d = t->digest;
    pthread_mutex_unlock(&t->lock);
    return d;
}

int header_tree_file_count(header_tree *t) {
    if (!t) return 0;
    pthread_mutex_lock(&t->lock);
    int n = t->digest_ready ? t->files : 0;
    pthread_mutex_unlock(&t->lock);
    return n;
}
