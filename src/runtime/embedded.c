/* Lookup of the kernel text that tools/embed.c compiled into the library. */
#include <string.h>

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

const char *ptxkit_program_builtin_source_name_get(int index) {
    return index >= 0 && (size_t)index < ptxkit_embedded_count ? ptxkit_embedded_files[index].name : NULL;
}

ptxkit_status ptxkit_program_builtin_source_get(const char *name, const char **text, size_t *size) {
    if (!name || !text) return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_program_builtin_source_get: NULL argument");
    const embedded_file *f = embedded_find(name);
    if (!f) return record_error(NULL, PTXKIT_ERROR_NOT_FOUND, "ptxkit_program_builtin_source_get: the library holds no '%.200s'", name);
    *text = f->text;
    if (size) *size = f->size;
    return PTXKIT_SUCCESS;
}

/* Computed by tools/embed.c when the table was generated. */
extern const unsigned long long ptxkit_embedded_sources_digest;
extern const unsigned long long ptxkit_embedded_headers_hash[2];

unsigned long long embedded_sources_digest(void) { return ptxkit_embedded_sources_digest; }

void embedded_headers_hash(uint64_t *low, uint64_t *high) {
    *low = ptxkit_embedded_headers_hash[0];
    *high = ptxkit_embedded_headers_hash[1];
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
