/* The disk cache of compiled images (disk_cache.c). */
#ifndef PTXKIT_RUNTIME_DISK_CACHE_H
#define PTXKIT_RUNTIME_DISK_CACHE_H

#include <stdbool.h>
#include <stddef.h>

#include "ptxkit.h"
#include "runtime/cache_key.h"

/* Where an entry's image came from: recorded in its metadata, for people
 * and tools reading the cache directory. */
typedef enum disk_cache_origin {
    DISK_CACHE_FAMILY = 1,   /* a built-in family's source, compiled by NVRTC */
    DISK_CACHE_PROGRAM,      /* the application's program, compiled by NVRTC */
    DISK_CACHE_EMBEDDED_PTX, /* the library's embedded PTX */
    DISK_CACHE_USER_IMAGE,   /* an image the application brought */
} disk_cache_origin;

/* Disk cache of compiled images. Directory NULL: the configured one. */
typedef struct disk_cache disk_cache;
/* Returns NULL when the cache is disabled (PTXKIT_CACHE=off) or unusable. */
disk_cache *disk_cache_open(const char *directory);
/* The size cap in bytes: PTXKIT_CACHE_MAX_MB (a whole number of MiB in
 * [1, 2^32]), else 512 MiB. An invalid value is not used; *note (may be
 * NULL) then says why, for the CLI to show (empty when all is well). */
unsigned long long disk_cache_cap_from_env(char *note, size_t note_size);
void disk_cache_close(disk_cache *cache);
/* Reads a valid entry (from what was read ahead, else from its files):
 * the image into a malloc'd, NUL-terminated buffer;
 * false when absent or invalid (an entry whose metadata, image or names
 * fail a check, one larger than the cap, or anything not a regular file is
 * removed so it is rebuilt; an image without metadata is a write in
 * progress and is left alone). */
bool disk_cache_read(disk_cache *cache, const cache_key *key, void **image, size_t *size, bool *is_cubin);
/* disk_cache_read, with the entry's origin and its lowered kernel names
 * (malloc'd, one a line, without a final newline; NULL when the entry has
 * none). Either pointer may be NULL. */
bool disk_cache_read_entry(disk_cache *cache, const cache_key *key, void **image, size_t *size, bool *is_cubin,
                           disk_cache_origin *origin, char **names);
/* Reads the entries that recent processes looked up first (the cache
 * directory's list "recent") into memory, checked as a lookup checks them,
 * once a process: run while the driver opens the first context, so that
 * a warm process's first lookups need no system call. At most 16 entries
 * and 8 MiB; a lookup takes its entry, the rest stay until
 * disk_cache_read_ahead_release (a context's close, a failed open, a
 * purge). */
void disk_cache_read_ahead(void);
void disk_cache_read_ahead_release(void);
/* Writes an entry: its image and names each atomically (temporary file +
 * rename), its metadata last (the commit point), then trims the cache to
 * its size cap by least-recent use. disk_cache_write: origin
 * DISK_CACHE_PROGRAM, no names. names (may be NULL): lines without a final
 * newline. */
ptxkit_status disk_cache_write(disk_cache *cache, const cache_key *key, const void *image, size_t size,
                               bool is_cubin);
ptxkit_status disk_cache_write_entry(disk_cache *cache, const cache_key *key, const void *image, size_t size,
                                     bool is_cubin, disk_cache_origin origin, const char *names);

/* An entry's names file holds names one a line in order, no final newline.
 * disk_cache_names_join: that text for count names (malloc'd); NULL when
 * out of memory or when a name is empty or holds a newline (symbols never
 * do). disk_cache_names_split: splits such text in place into count names
 * (pointers into text); false unless it holds exactly count non-empty
 * lines. */
char *disk_cache_names_join(const char *const *names, int count);
bool disk_cache_names_split(char *text, int count, const char **names);
const char *disk_cache_path(const disk_cache *cache);
/* The path of one of key's files ("meta", "cubin", "ptx" or "names") into
 * buf; false when it does not fit. */
bool disk_cache_file_path(const disk_cache *cache, const cache_key *key, const char *suffix, char *buf, size_t size);

#endif
