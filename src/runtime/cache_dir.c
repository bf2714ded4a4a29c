/* The cache and state directories (cache_dir.h), and whether PTXKIT_CACHE
 * turns the cache off. Path logic only: nothing here creates, reads or
 * writes a file. */
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/cache_dir.h"
#include "runtime/status.h"

bool cache_dir_disabled(void) {
    const char *v = getenv("PTXKIT_CACHE");
    return v && (strcmp(v, "off") == 0 || strcmp(v, "0") == 0);
}

/* The home directory: $HOME when it is an absolute path, else the calling
 * user's entry in the password database (a service started without HOME). */
static bool home_dir(char *buf, size_t size) {
    const char *v = getenv("HOME");
    if (v && v[0] == '/') return (size_t)snprintf(buf, size, "%s", v) < size;
    char scratch[4096];
    struct passwd pw, *found = NULL;
    if (getpwuid_r(getuid(), &pw, scratch, sizeof scratch, &found) != 0 || !found || !found->pw_dir ||
        found->pw_dir[0] != '/')
        return false;
    return (size_t)snprintf(buf, size, "%s", found->pw_dir) < size;
}

/* ptxkit's directory: $own as given, else $xdg/ptxkit when $xdg is absolute
 * (a relative one is ignored), else <home>/<fallback>/ptxkit. */
static bool directory(char *buf, size_t size, const char *own, const char *xdg, const char *fallback) {
    const char *v = getenv(own);
    if (v && *v) return (size_t)snprintf(buf, size, "%s", v) < size;
    v = getenv(xdg);
    if (v && v[0] == '/') return (size_t)snprintf(buf, size, "%s/ptxkit", v) < size;
    char home[4096];
    if (!home_dir(home, sizeof home)) return false;
    return (size_t)snprintf(buf, size, "%s/%s/ptxkit", home, fallback) < size;
}

bool cache_dir_configured(char *buf, size_t size) {
    return directory(buf, size, "PTXKIT_CACHE_DIR", "XDG_CACHE_HOME", ".cache");
}

bool state_dir_configured(char *buf, size_t size) {
    return directory(buf, size, "PTXKIT_STATE_DIR", "XDG_STATE_HOME", ".local/state");
}

ptxkit_status ptxkit_cache_dir_get(char *buf, size_t size) {
    if (!buf || !size) return record_error(NULL, PTXKIT_ERROR_INVALID_ARGUMENT, "ptxkit_cache_dir_get: no buffer");
    buf[0] = 0;
    if (cache_dir_disabled()) return PTXKIT_SUCCESS;
    if (!cache_dir_configured(buf, size)) {
        buf[0] = 0;
        return record_error(NULL, PTXKIT_ERROR_IO, "ptxkit_cache_dir_get: no cache directory: set PTXKIT_CACHE_DIR or HOME (or the path is too long)");
    }
    return PTXKIT_SUCCESS;
}
