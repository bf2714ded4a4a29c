/* Identity of a compiled kernel. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "runtime/runtime.h"

static int compare_strings(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* NVRTC's build, not only its version number: the identity of the shared
 * object that was loaded (size, modification time). Cheaper than compiling
 * an empty program, which would cost a cold NVRTC start in every process
 * even when the disk cache holds the kernel. Read once per process. */
static XXH128_hash_t nvrtc_identity_hash;
static pthread_once_t nvrtc_identity_once = PTHREAD_ONCE_INIT;

static void nvrtc_identity_compute(void) {
    XXH3_state_t state;
    XXH3_128bits_reset(&state);
    const nvrtc_library *rtc = nvrtc_get(NULL, 0);
    int version[2] = {rtc ? rtc->major : 0, rtc ? rtc->minor : 0};
    XXH3_128bits_update(&state, version, sizeof version);
    Dl_info info;
    struct stat st;
    void *symbol;
    if (rtc) {
        memcpy(&symbol, &rtc->nvrtcVersion, sizeof symbol);
        if (dladdr(symbol, &info) && info.dli_fname && stat(info.dli_fname, &st) == 0) {
            long long id[2] = {(long long)st.st_size, (long long)st.st_mtime};
            XXH3_128bits_update(&state, id, sizeof id);
        }
    }
    nvrtc_identity_hash = XXH3_128bits_digest(&state);
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
        bool header = len > 4 && strcmp(files[i].name + len - 4, ".cuh") == 0;
        if (header || strcmp(files[i].name, source_name) == 0) {
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
    pthread_once(&nvrtc_identity_once, nvrtc_identity_compute);
    XXH3_128bits_update(&state, &nvrtc_identity_hash, sizeof nvrtc_identity_hash);
    XXH128_canonical_t canon;
    XXH128_canonicalFromHash(&canon, XXH3_128bits_digest(&state));
    cache_key key;
    memcpy(key.bytes, canon.digest, sizeof key.bytes);
    return key;
}

void cache_key_hex(const cache_key *key, char out[33]) {
    for (int i = 0; i < 16; i++) snprintf(out + 2 * i, 3, "%02x", key->bytes[i]);
}
