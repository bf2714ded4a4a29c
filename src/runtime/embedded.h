/* The kernel text embedded into the library (embedded.c over the file
 * tools/embed generates at build time): the families' sources, headers and
 * PTX. */
#ifndef PTXKIT_RUNTIME_EMBEDDED_H
#define PTXKIT_RUNTIME_EMBEDDED_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

typedef struct embedded_file {
    const char *name;     /* "copy.cu", "ptxkit_load.cuh", "copy.ptx" */
    const char *text;
    size_t size;
} embedded_file;

const embedded_file *embedded_find(const char *name);
/* All embedded files; *count receives their number. */
const embedded_file *embedded_all(size_t *count);
/* Whether an embedded file is a header NVRTC is handed: a device header
 * (.cuh) or a family's <family>_defaults.h, which the C side reads too. */
bool embedded_is_header(const char *name);

/* Whether a header name is one compile.c offers every program: an embedded
 * header by its own name, or "ptxkit/<name without ptxkit_>". */
bool embedded_is_builtin_header(const char *name);
/* A hash of every embedded .cu and header: the built-in kernels' code, for
 * the tuning record (a rebuilt library with edited kernels re-times them). */
unsigned long long embedded_sources_digest(void);
/* A hash of every embedded header (XXH3-128), which any program may
 * include: part of every program's cache key. */
void embedded_headers_hash(uint64_t *low, uint64_t *high);

#endif
