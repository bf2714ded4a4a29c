/* Lookup of the kernel text that tools/embed.c compiled into the library. */
#include <string.h>

#include "runtime/runtime.h"

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
