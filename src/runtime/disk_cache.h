/* The disk cache of compiled images (disk_cache.c). */
#ifndef PTXKIT_RUNTIME_DISK_CACHE_H
#define PTXKIT_RUNTIME_DISK_CACHE_H

#include <stdbool.h>
#include <stddef.h>

#include "ptxkit.h"
#include "runtime/cache_key.h"

/* Disk cache of compiled images. Directory NULL: the configured one. */
typedef struct disk_cache disk_cache;
/* Returns NULL when the cache is disabled (PTXKIT_CACHE=off) or unusable. */
disk_cache *disk_cache_open(const char *directory);
/* The size cap in bytes: PTXKIT_CACHE_MAX_MB (a whole number of MiB in
 * [1, 2^32]), else 512 MiB. An invalid value is not used; *note (may be
 * NULL) then says why, for the CLI to show (empty when all is well). */
unsigned long long disk_cache_cap_from_env(char *note, size_t note_size);
void disk_cache_close(disk_cache *cache);
/* Reads a valid entry into a malloc'd buffer; false when absent or invalid
 * (an invalid file, one larger than the cap, or anything not a regular file
 * is removed so it is rebuilt). */
bool disk_cache_read(disk_cache *cache, const cache_key *key, void **image, size_t *size, bool *is_cubin);
/* Atomically writes an entry (temporary file + rename), then trims the cache
 * to its size cap by least-recent use. */
ptxkit_status disk_cache_write(disk_cache *cache, const cache_key *key, const void *image, size_t size,
                               bool is_cubin);
const char *disk_cache_path(const disk_cache *cache);

#endif
