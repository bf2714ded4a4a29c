/* Identity of a compiled kernel. */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "runtime/files.h"
#include "runtime/runtime.h"

static int compare_strings(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* NVRTC's build, not only its version number: the identity (size,
 * modification time, version) of the shared object that is loaded. Reading
 * it needs NVRTC loaded, which costs ~6 ms even when the disk cache holds the
 * kernel, so the identity is also recorded in the cache directory, keyed by
 * the environment that chooses the library, and reused while that file is
 * unchanged on disk. Read once per process. */
static XXH128_hash_t nvrtc_identity_hash;
static pthread_once_t nvrtc_identity_once = PTHREAD_ONCE_INIT;

typedef struct nvrtc_identity {
    char path[PATH_MAX]; /* realpath's size */
    long long size, mtime;
    int major, minor;
} nvrtc_identity;

static void identity_record_path(char *buf, size_t size) {
    char dir[4096];
    buf[0] = 0;
    if (ptxkit_cache_dir(dir, sizeof dir) == PTXKIT_SUCCESS && dir[0]) snprintf(buf, size, "%s/nvrtc-identity", dir);
}

/* A hash of the whole of what chooses the library (two environments that
 * differ anywhere get different records), fixed in size so no environment
 * is cut short, and free of newlines, which end the record's first line. */
void nvrtc_environment_signature(char buf[NVRTC_SIGNATURE_SIZE]) {
    const char *parts[2] = {getenv("PTXKIT_NVRTC_PATH"), getenv("LD_LIBRARY_PATH")};
    XXH3_state_t state;
    XXH3_128bits_reset(&state);
    for (int i = 0; i < 2; i++) {
        unsigned long long set = parts[i] != NULL, len = parts[i] ? strlen(parts[i]) : 0;
        XXH3_128bits_update(&state, &set, sizeof set);
        XXH3_128bits_update(&state, &len, sizeof len);
        if (len) XXH3_128bits_update(&state, parts[i], (size_t)len);
    }
    XXH128_hash_t h = XXH3_128bits_digest(&state);
    snprintf(buf, NVRTC_SIGNATURE_SIZE, "environment xxh3-128 %016llx%016llx", (unsigned long long)h.high64,
             (unsigned long long)h.low64);
}

static bool identity_from_record(nvrtc_identity *id) {
    char record[4200], signature[NVRTC_SIGNATURE_SIZE];
    identity_record_path(record, sizeof record);
    nvrtc_environment_signature(signature);
    /* identity_record.c: never blocks (this runs inside pthread_once), parses strictly */
    if (!record[0] || !identity_record_read(record, signature, id->path, sizeof id->path, &id->size, &id->mtime,
                                            &id->major, &id->minor))
        return false;
    struct stat st;
    return stat(id->path, &st) == 0 && st.st_size == id->size && (long long)st.st_mtime == id->mtime;
}

static bool identity_from_library(nvrtc_identity *id) {
    const nvrtc_library *rtc = nvrtc_get(NULL, 0);
    if (!rtc) return false;
    id->major = rtc->major;
    id->minor = rtc->minor;
    Dl_info info;
    struct stat st;
    void *symbol;
    memcpy(&symbol, &rtc->nvrtcVersion, sizeof symbol);
    if (!dladdr(symbol, &info) || !info.dli_fname || !realpath(info.dli_fname, id->path) || stat(id->path, &st) != 0)
        return true; /* version only */
    id->size = (long long)st.st_size;
    id->mtime = (long long)st.st_mtime;
    char record[4200], signature[NVRTC_SIGNATURE_SIZE], dir[4096], text[NVRTC_SIGNATURE_SIZE + PATH_MAX + 96];
    identity_record_path(record, sizeof record);
    if (!record[0] || ptxkit_cache_dir(dir, sizeof dir) != PTXKIT_SUCCESS || !files_make_dirs(dir)) return true;
    nvrtc_environment_signature(signature);
    int length = snprintf(text, sizeof text, "%s\n%s\n%lld %lld %d %d\n", signature, id->path, id->size, id->mtime,
                          id->major, id->minor);
    const void *parts[1] = {text};
    size_t sizes[1] = {(size_t)length};
    /* a read-only cache directory: identify by loading NVRTC each time */
    if (length > 0 && length < (int)sizeof text) files_write_atomic(record, parts, sizes, 1, false);
    return true;
}

static int nvrtc_identity_major, nvrtc_identity_minor;

static void nvrtc_identity_compute(void) {
    nvrtc_identity id;
    memset(&id, 0, sizeof id);
    if (!identity_from_record(&id)) {
        memset(&id, 0, sizeof id);
        identity_from_library(&id);
    }
    nvrtc_identity_major = id.major;
    nvrtc_identity_minor = id.minor;
    long long fields[4] = {id.major, id.minor, id.size, id.mtime};
    nvrtc_identity_hash = XXH3_128bits(fields, sizeof fields);
}

bool nvrtc_identity_version(int *major, int *minor) {
    pthread_once(&nvrtc_identity_once, nvrtc_identity_compute);
    if (major) *major = nvrtc_identity_major;
    if (minor) *minor = nvrtc_identity_minor;
    return nvrtc_identity_major > 0;
}

/* Hash of a family's source and every header it may include, computed once
 * per family and process: a registry hit then costs one short hash. */
static XXH128_hash_t family_text_hash(const char *family) {
    static struct {
        char name[64];
        XXH128_hash_t hash;
    } memo[64];
    static int memo_count;
    static pthread_mutex_t memo_lock = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&memo_lock);
    for (int i = 0; i < memo_count; i++)
        if (strcmp(memo[i].name, family) == 0) {
            XXH128_hash_t h = memo[i].hash;
            pthread_mutex_unlock(&memo_lock);
            return h;
        }
    XXH3_state_t state;
    XXH3_128bits_reset(&state);
    size_t count;
    const embedded_file *files = embedded_all(&count);
    char source_name[96];
    snprintf(source_name, sizeof source_name, "%s.cu", family);
    for (size_t i = 0; i < count; i++) {
        size_t len = strlen(files[i].name);
        if (embedded_is_header(files[i].name) || strcmp(files[i].name, source_name) == 0) {
            XXH3_128bits_update(&state, files[i].name, len + 1);
            XXH3_128bits_update(&state, files[i].text, files[i].size);
        }
    }
    XXH128_hash_t h = XXH3_128bits_digest(&state);
    if (memo_count < 64 && strlen(family) < sizeof memo[0].name) {
        snprintf(memo[memo_count].name, sizeof memo[0].name, "%s", family);
        memo[memo_count++].hash = h;
    }
    pthread_mutex_unlock(&memo_lock);
    return h;
}

/* The key of what state has hashed, with NVRTC's identity for compiled
 * images (the compiler's build decides their code). */
static cache_key finish_key(XXH3_state_t *state, bool with_nvrtc) {
    if (with_nvrtc) {
        pthread_once(&nvrtc_identity_once, nvrtc_identity_compute);
        XXH3_128bits_update(state, &nvrtc_identity_hash, sizeof nvrtc_identity_hash);
    }
    XXH128_canonical_t canon;
    XXH128_canonicalFromHash(&canon, XXH3_128bits_digest(state));
    cache_key key;
    memcpy(key.bytes, canon.digest, sizeof key.bytes);
    return key;
}

cache_key cache_key_for(const char *family, const char *const *defines, int define_count, int arch, int driver_version) {
    XXH3_state_t state;
    XXH3_128bits_reset(&state);
    XXH3_128bits_update(&state, PTXKIT_VERSION_STRING, sizeof PTXKIT_VERSION_STRING);
    XXH3_128bits_update(&state, family, strlen(family) + 1);
    XXH128_hash_t text = family_text_hash(family);
    XXH3_128bits_update(&state, &text, sizeof text);
    /* Defines are order-insensitive. */
    const char *sorted[PTXKIT_MAX_DEFINES + 2];
    int n = define_count < PTXKIT_MAX_DEFINES + 2 ? define_count : PTXKIT_MAX_DEFINES + 2;
    memcpy(sorted, defines, (size_t)n * sizeof *sorted);
    qsort(sorted, (size_t)n, sizeof *sorted, compare_strings);
    for (int i = 0; i < n; i++) XXH3_128bits_update(&state, sorted[i], strlen(sorted[i]) + 1);
    int numbers[2] = {arch, driver_version};
    XXH3_128bits_update(&state, numbers, sizeof numbers);
    return finish_key(&state, true);
}

text_hash text_hash_of(const char *name, const char *source, const char *const *header_names,
                       const char *const *header_texts, int header_count) {
    XXH3_state_t state;
    XXH3_128bits_reset(&state);
    XXH3_128bits_update(&state, name, strlen(name) + 1);
    XXH3_128bits_update(&state, source, strlen(source) + 1);
    for (int i = 0; i < header_count; i++) {
        XXH3_128bits_update(&state, header_names[i], strlen(header_names[i]) + 1);
        XXH3_128bits_update(&state, header_texts[i], strlen(header_texts[i]) + 1);
    }
    XXH128_hash_t h = XXH3_128bits_digest(&state);
    return (text_hash){h.low64, h.high64};
}

/* Every embedded header, which any user program may include. */
static XXH128_hash_t builtin_headers_hash;
static pthread_once_t builtin_headers_once = PTHREAD_ONCE_INIT;

static void builtin_headers_compute(void) {
    XXH3_state_t state;
    XXH3_128bits_reset(&state);
    size_t count;
    const embedded_file *files = embedded_all(&count);
    for (size_t i = 0; i < count; i++) {
        size_t len = strlen(files[i].name);
        if (embedded_is_header(files[i].name)) {
            XXH3_128bits_update(&state, files[i].name, len + 1);
            XXH3_128bits_update(&state, files[i].text, files[i].size);
        }
    }
    builtin_headers_hash = XXH3_128bits_digest(&state);
}

/* Parts of a key are separated by a tag byte and lengths, so that no two
 * different inputs hash the same byte stream. */
static void hash_string(XXH3_state_t *state, char tag, const char *s) {
    size_t len = strlen(s);
    XXH3_128bits_update(state, &tag, 1);
    XXH3_128bits_update(state, &len, sizeof len);
    XXH3_128bits_update(state, s, len);
}

cache_key cache_key_for_program(text_hash program, const char *const *defines, int define_count,
                                const char *const *options, int option_count, const char *entry, int arch,
                                int driver_version) {
    XXH3_state_t state;
    XXH3_128bits_reset(&state);
    hash_string(&state, 'v', PTXKIT_VERSION_STRING);
    hash_string(&state, 'k', "user program");
    XXH3_128bits_update(&state, &program, sizeof program);
    pthread_once(&builtin_headers_once, builtin_headers_compute);
    XXH3_128bits_update(&state, &builtin_headers_hash, sizeof builtin_headers_hash);
    /* Defines are order-insensitive (distinct -D of one name are an error
     * anyway); options are not ("-Xptxas" takes the next one). */
    enum { SORT_MAX = 64 };
    const char *sorted[SORT_MAX];
    int n = define_count < SORT_MAX ? define_count : SORT_MAX;
    memcpy(sorted, defines, (size_t)n * sizeof *sorted);
    qsort(sorted, (size_t)n, sizeof *sorted, compare_strings);
    for (int i = 0; i < n; i++) hash_string(&state, 'D', sorted[i]);
    for (int i = 0; i < option_count; i++) hash_string(&state, 'O', options[i]);
    hash_string(&state, 'E', entry);
    int numbers[2] = {arch, driver_version};
    XXH3_128bits_update(&state, numbers, sizeof numbers);
    return finish_key(&state, true);
}

cache_key cache_key_for_bytes(const char *kind, const void *bytes, size_t size, int arch, int driver_version) {
    XXH3_state_t state;
    XXH3_128bits_reset(&state);
    hash_string(&state, 'v', PTXKIT_VERSION_STRING);
    hash_string(&state, 'k', kind);
    XXH3_128bits_update(&state, &size, sizeof size);
    XXH3_128bits_update(&state, bytes, size);
    int numbers[2] = {arch, driver_version};
    XXH3_128bits_update(&state, numbers, sizeof numbers);
    return finish_key(&state, false);
}

void cache_key_hex(const cache_key *key, char out[33]) {
    for (int i = 0; i < 16; i++) snprintf(out + 2 * i, 3, "%02x", key->bytes[i]);
}
