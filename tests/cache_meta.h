/* The kernel cache's metadata record (disk_cache.c), written here
 * independently of the library so that tests and fuzzers can forge
 * consistent records (a sparse image of a size the record declares, a
 * record of another key) and notice when the format changes:
 *   ptxkit-cache-entry 3\n key <32 hex>\n kind cubin|ptx\n
 *   origin family|program|embedded-ptx|user-image\n
 *   image <size> <XXH3-64 of the image, 16 hex>\n
 *   names <size> <XXH3-64 of the names file, 16 hex>\n
 *   meta <XXH3-64 of the lines above, 16 hex>\n */
#ifndef PTXKIT_TESTS_CACHE_META_H
#define PTXKIT_TESTS_CACHE_META_H

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>

#ifndef XXH_INLINE_ALL
#define XXH_INLINE_ALL
#endif
#include <xxhash.h>

#include "runtime/cache_key.h"

/* The record's text into out; its length, or 0 when it does not fit. */
static inline size_t cache_meta_text(const cache_key *key, bool is_cubin, const char *origin,
                                     unsigned long long image_size, uint64_t image_sum,
                                     unsigned long long names_size, uint64_t names_sum, char *out, size_t size) {
    char hex[33];
    cache_key_hex(key, hex);
    int n = snprintf(out, size, "ptxkit-cache-entry 3\nkey %s\nkind %s\norigin %s\nimage %llu %016" PRIx64
                     "\nnames %llu %016" PRIx64 "\n",
                     hex, is_cubin ? "cubin" : "ptx", origin, image_size, image_sum, names_size, names_sum);
    if (n < 0 || (size_t)n >= size) return 0;
    int t = snprintf(out + n, size - (size_t)n, "meta %016" PRIx64 "\n", (uint64_t)XXH3_64bits(out, (size_t)n));
    if (t < 0 || (size_t)(n + t) >= size) return 0;
    return (size_t)(n + t);
}

/* Writes text to path (replacing it); false on an error. */
static inline bool cache_meta_put(const char *path, const char *text, size_t size) {
    FILE *f = fopen(path, "wb");
    if (!f) return false;
    bool ok = fwrite(text, 1, size, f) == size;
    return fclose(f) == 0 && ok;
}

#endif
