/* Lookup of the kernel text that tools/embed.c compiled into the library. */
#include <pthread.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "runtime/embedded.h"
#include "runtime/status.h"

/* Defined in the generated embedded_kernels.c, with the same layout. */
extern const embedded_file ptxkit_embedded_files[];
extern const size_t ptxkit_embedded_count;

const embedded_file *embedded_find(const char *name) {
    if (!name) return NULL;
    for (size_t i = 0; i < ptxkit_embedded_count; i++)
        if (strcmp(ptxkit_embedded_files[i].name, name) == 0) return &ptxkit_embedded_files[i];
    return NULL;
}

const embedded_file *embedded_all(size_t *count) {
    if (count) *count = ptxkit_embedded_count;
    return ptxkit_embedded_files;
}

bool embedded_is_header(const char *name) {
    size_t len = name ? strlen(name) : 0;
    return (len > 4 && strcmp(name + len - 4, ".cuh") == 0) || (len > 2 && strcmp(name + len - 2, ".h") == 0);
}

const char *ptxkit_builtin_source_name(int index) {
    return index >= 0 && (size_t)index < ptxkit_embedded_count ? ptxkit_embedded_files[index].name : NULL;
}

ptxkit_status ptxkit_builtin_source(const char *name, const char **text, size_t *size) {
    if (!name || !text) return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_builtin_source: NULL argument");
    const embedded_file *f = embedded_find(name);
    if (!f) return record_error(NULL, PTXKIT_ERROR_NOT_FOUND, "ptxkit_builtin_source: the library holds no '%.200s'", name);
    *text = f->text;
    if (size) *size = f->size;
    return PTXKIT_SUCCESS;
}

static unsigned long long sources_digest;
static pthread_once_t sources_once = PTHREAD_ONCE_INIT;

static void digest_sources(void) {
    XXH3_state_t state;
    XXH3_64bits_reset(&state);
    for (size_t i = 0; i < ptxkit_embedded_count; i++) {
        const char *name = ptxkit_embedded_files[i].name;
        size_t len = strlen(name);
        if (!(len > 3 && strcmp(name + len - 3, ".cu") == 0) && !embedded_is_header(name))
            continue; /* the PTX files are generated from these */
        XXH3_64bits_update(&state, name, len + 1);
        XXH3_64bits_update(&state, ptxkit_embedded_files[i].text, ptxkit_embedded_files[i].size);
    }
    sources_digest = (unsigned long long)XXH3_64bits_digest(&state);
}

unsigned long long embedded_sources_digest(void) {
    pthread_once(&sources_once, digest_sources);
    return sources_digest;
}

bool embedded_is_builtin_header(const char *name) {
    size_t count;
    const embedded_file *files = embedded_all(&count);
    for (size_t i = 0; i < count; i++) {
        if (!embedded_is_header(files[i].name)) continue;
        if (strcmp(name, files[i].name) == 0) return true;
        if (strncmp(files[i].name, "ptxkit_", 7) == 0 && strncmp(name, "ptxkit/", 7) == 0 &&
            strcmp(name + 7, files[i].name + 7) == 0)
            return true;
    }
    return false;
}
