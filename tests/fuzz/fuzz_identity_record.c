/* The nvrtc-identity record parser. The first byte selects the signature:
 * even, a fixed one ("|", PTXKIT_NVRTC_PATH and LD_LIBRARY_PATH unset); odd,
 * the record's own first line (as the writer's environment was), so seeds
 * written by cache_key.c in any environment are accepted. An accepted record
 * must hold what its text says, and the writer's format of it must read
 * back the same. */
#include <limits.h>
#include <string.h>

#include "fuzz.h"
#include "runtime/identity_record.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 0) return 0;
    const char *text = (const char *)data + 1;
    size_t n = size - 1;
    char signature[2048] = "|";
    if (data[0] & 1) {
        const char *nl = memchr(text, '\n', n);
        size_t len = nl ? (size_t)(nl - text) : 0;
        if (!nl || len >= sizeof signature || memchr(text, 0, len)) return 0;
        memcpy(signature, text, len);
        signature[len] = 0;
    }
    static char path[PATH_MAX], path2[PATH_MAX];
    long long lib_size, mtime, lib_size2, mtime2;
    int major, minor, major2, minor2;
    if (!identity_record_parse(text, n, signature, path, sizeof path, &lib_size, &mtime, &major, &minor)) return 0;
    size_t len = strlen(path);
    FUZZ_CHECK(len > 0 && len < sizeof path && !memchr(path, '\n', len), "bad path");
    FUZZ_CHECK(lib_size >= 0 && major >= 0 && minor >= 0, "negative size or version");
    /* cache_key.c writes "%s\n%s\n%lld %lld %d %d\n" */
    size_t room = strlen(signature) + len + 96;
    char *again = malloc(room);
    int m = snprintf(again, room, "%s\n%s\n%lld %lld %d %d\n", signature, path, lib_size, mtime, major, minor);
    FUZZ_CHECK(m > 0 && (size_t)m < room, "format");
    FUZZ_CHECK((size_t)m == n && memcmp(again, text, n) == 0, "an accepted record is not the writer's text");
    FUZZ_CHECK(identity_record_parse(again, (size_t)m, signature, path2, sizeof path2, &lib_size2, &mtime2, &major2,
                                     &minor2) &&
                   strcmp(path, path2) == 0 && lib_size == lib_size2 && mtime == mtime2 && major == major2 &&
                   minor == minor2,
               "the writer's text does not read back");
    free(again);
    return 0;
}
