/* The cache directory: where the kernel cache, the NVRTC identity record
 * and the tuning store live, and whether PTXKIT_CACHE turns the cache off.
 * Path logic only: nothing here creates, reads or writes a file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/cache_dir.h"
#include "runtime/status.h"

bool cache_dir_disabled(void) {
    const char *v = getenv("PTXKIT_CACHE");
    return v && (strcmp(v, "off") == 0 || strcmp(v, "0") == 0);
}

bool cache_dir_configured(char *buf, size_t size) {
    const char *v = getenv("PTXKIT_CACHE_DIR");
    if (v && *v) return (size_t)snprintf(buf, size, "%s", v) < size;
    v = getenv("XDG_CACHE_HOME");
    if (v && *v) return (size_t)snprintf(buf, size, "%s/ptxkit", v) < size;
    v = getenv("HOME");
    if (v && *v) return (size_t)snprintf(buf, size, "%s/.cache/ptxkit", v) < size;
    return false;
}

ptxkit_status ptxkit_cache_dir(char *buf, size_t size) {
    if (!buf || !size) return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_cache_dir: no buffer");
    buf[0] = 0;
    if (cache_dir_disabled()) return PTXKIT_SUCCESS;
    if (!cache_dir_configured(buf, size)) {
        buf[0] = 0;
        return record_error(NULL, PTXKIT_ERROR_IO, "no cache directory: set PTXKIT_CACHE_DIR or HOME (or the path is too long)");
    }
    return PTXKIT_SUCCESS;
}
