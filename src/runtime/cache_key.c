/* What a compiled kernel's identity is made of beside its request: the
 * NVRTC build, the built-in headers and a program's text (kernel_cache.c
 * builds the keys from them). */
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "driver/driver.h"
#include "ptxkit.h"
#include "runtime/cache_key.h"
#include "runtime/embedded.h"
#include "runtime/files.h"
#include "runtime/identity_record.h"

/* NVRTC's build, not only its version number: the identity (size,
 * modification time, version) of the shared object that is loaded. Reading
 * it needs NVRTC loaded, which costs ~6 ms even when the disk cache holds the
 * kernel, so the identity is also recorded in the cache directory, keyed by
 * the environment that chooses the library, and reused while that file is
 * unchanged on disk. Read once per process. */
static XXH128_hash_t nvrtc_identity_hash_value;
static bool nvrtc_identity_ready;
static pthread_mutex_t nvrtc_identity_lock = PTHREAD_MUTEX_INITIALIZER;

typedef struct nvrtc_identity {
    char path[PATH_MAX]; /* realpath's size */
    long long size, mtime;
    int major, minor;
} nvrtc_identity;

static void identity_record_path(char *buf, size_t size) {
    char dir[4096];
    buf[0] = 0;
    if (ptxkit_cache_dir_get(dir, sizeof dir) == PTXKIT_SUCCESS && dir[0]) snprintf(buf, size, "%s/nvrtc-identity", dir);
}

/* A hash of the whole of what chooses the library (two environments that
 * differ anywhere get different records), fixed in size so no environment
 * is cut short, and free of newlines, which end the record's first line. */
void nvrtc_environment_signature(char buf[NVRTC_SIGNATURE_SIZE]) {
    /* what driver/nvrtc.c searches, a running Python's prefix too (its pip
     * packages are among the places); not the program otherwise, so that
     * programs taking turns share one record. PTXKIT_NVRTC_PATH set: the
     * search looks nowhere else, so the executable is not asked for (a
     * readlink of /proc/self/exe on a warm start's path). */
    char python[4096];
    const char *override = getenv("PTXKIT_NVRTC_PATH");
    bool python_searched = !override || !*override;
    const char *parts[] = {override,
                           getenv("LD_LIBRARY_PATH"),
                           getenv("CUDA_HOME"),
                           getenv("CUDA_PATH"),
                           getenv("VIRTUAL_ENV"),
                           getenv("CONDA_PREFIX"),
                           python_searched && nvrtc_python_prefix(python, sizeof python) ? python : NULL};
    XXH3_state_t state;
    XXH3_128bits_reset(&state);
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
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
    /* identity_record.c: never blocks (this runs under the identity's lock), parses strictly */
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
    if (!record[0] || ptxkit_cache_dir_get(dir, sizeof dir) != PTXKIT_SUCCESS || !files_make_dirs(dir)) return true;
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

static void identity_set(const nvrtc_identity *id) {
    nvrtc_identity_major = id->major;
    nvrtc_identity_minor = id->minor;
    long long fields[4] = {id->major, id->minor, id->size, id->mtime};
    nvrtc_identity_hash_value = XXH3_128bits(fields, sizeof fields);
}

/* Once per process, both ways in: the record, else (when may_load) NVRTC
 * itself; without may_load and without a record nothing is settled and the
 * next caller tries again. Not pthread_once: its completion wakes waiters
 * with a futex call whether or not any wait, a system call on every warm
 * start's first key; an unlocked mutex wakes no one. */
static void nvrtc_identity_settle(bool may_load) {
    if (__atomic_load_n(&nvrtc_identity_ready, __ATOMIC_ACQUIRE)) return;
    pthread_mutex_lock(&nvrtc_identity_lock);
    if (!nvrtc_identity_ready) {
        nvrtc_identity id;
        memset(&id, 0, sizeof id);
        bool found = identity_from_record(&id);
        if (!found && may_load) {
            memset(&id, 0, sizeof id);
            identity_from_library(&id);
        }
        if (found || may_load) {
            identity_set(&id);
            __atomic_store_n(&nvrtc_identity_ready, true, __ATOMIC_RELEASE);
        }
    }
    pthread_mutex_unlock(&nvrtc_identity_lock);
}

static void nvrtc_identity_once(void) { nvrtc_identity_settle(true); }

void nvrtc_identity_prefetch(void) { nvrtc_identity_settle(false); }

bool nvrtc_identity_version(int *major, int *minor) {
    nvrtc_identity_once();
    if (major) *major = nvrtc_identity_major;
    if (minor) *minor = nvrtc_identity_minor;
    return nvrtc_identity_major > 0;
}

text_hash nvrtc_identity_hash(void) {
    nvrtc_identity_once();
    return (text_hash){nvrtc_identity_hash_value.low64, nvrtc_identity_hash_value.high64};
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

/* Every embedded header, which any program may include (hashed when the
 * library was built). */
text_hash builtin_headers_hash(void) {
    text_hash h;
    embedded_headers_hash(&h.lo, &h.hi);
    return h;
}

void cache_key_hex(const cache_key *key, char out[33]) {
    static const char digits[] = "0123456789abcdef"; /* by hand: every lookup renders one */
    for (int i = 0; i < 16; i++) {
        out[2 * i] = digits[key->bytes[i] >> 4];
        out[2 * i + 1] = digits[key->bytes[i] & 15];
    }
    out[32] = 0;
}
