/* The kernel-cache entry reader (disk_cache_read) on arbitrary files. The
 * first input byte selects fix-ups the harness applies to the rest (the
 * entry file) so mutations get past each check in turn; the file is written
 * where the entry of a fixed key lives, in a private cache directory with a
 * 1 MiB cap, and read back:
 *   bit 0: correct magic and format     bit 1: the key's bytes
 *   bit 2: size field = file size - 48  bit 3: the image's checksum
 *   bit 4: a directory in the entry's place instead, bit 5: a FIFO
 * A read that succeeds must return exactly the file's image. The header
 * layout (48 bytes: magic[8], u32 format, u32 is_cubin, u64 size, key[16],
 * u64 checksum) is disk_cache.c's; its seeds come from disk_cache_write. */
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "fuzz.h"
#include "runtime/runtime.h"

#define HEADER 48

static char dir[64], shard[128], path[256];
static disk_cache *cache;

/* The fixed key of every input: bytes 0x00, 0x11, ..., 0xff. */
cache_key fuzz_cache_key(void);
cache_key fuzz_cache_key(void) {
    cache_key k;
    for (int i = 0; i < 16; i++) k.bytes[i] = (unsigned char)(i * 0x11);
    return k;
}

static void cleanup(void) {
    disk_cache_close(cache);
    unlink(path);
    rmdir(path);
    rmdir(shard);
    rmdir(dir);
}

static void setup(void) {
    snprintf(dir, sizeof dir, "/tmp/ptxkit-fuzz-cache-XXXXXX");
    if (!mkdtemp(dir)) abort();
    setenv("PTXKIT_CACHE_MAX_MB", "1", 1);
    cache = disk_cache_open(dir);
    unsetenv("PTXKIT_CACHE_MAX_MB");
    if (!cache) abort();
    cache_key k = fuzz_cache_key();
    char hex[33];
    cache_key_hex(&k, hex);
    snprintf(shard, sizeof shard, "%s/%.2s", dir, hex);
    snprintf(path, sizeof path, "%s/%s.bin", shard, hex);
    if (mkdir(shard, 0755) != 0) abort();
    atexit(cleanup);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!cache) setup();
    if (size == 0) return 0;
    unsigned mode = data[0];
    size_t n = size - 1;
    unsigned char *file = malloc(n ? n : 1);
    if (!file) return 0;
    memcpy(file, data + 1, n);
    cache_key key = fuzz_cache_key();
    if (n >= HEADER) {
        uint64_t image = n - HEADER;
        if (mode & 1) {
            uint32_t format = 1;
            memcpy(file, "PTXKITC1", 8);
            memcpy(file + 8, &format, 4);
        }
        if (mode & 2) memcpy(file + 24, key.bytes, 16);
        if (mode & 4) memcpy(file + 16, &image, 8);
        if (mode & 8) {
            uint64_t sum = XXH3_64bits(file + HEADER, (size_t)image);
            memcpy(file + 40, &sum, 8);
        }
    }
    unlink(path);
    rmdir(path);
    bool placed;
    if (mode & 16) {
        placed = mkdir(path, 0755) == 0;
    } else if (mode & 32) {
        placed = mkfifo(path, 0644) == 0;
    } else {
        FILE *f = fopen(path, "wb");
        placed = f && fwrite(file, 1, n, f) == n;
        if (f) fclose(f);
    }
    if (placed) {
        void *image = NULL;
        size_t image_size = 0;
        bool cubin = false;
        if (disk_cache_read(cache, &key, &image, &image_size, &cubin)) {
            FUZZ_CHECK(!(mode & 48) && n >= HEADER, "a read succeeded on a non-file or a short file");
            FUZZ_CHECK(image_size == n - HEADER && memcmp(image, file + HEADER, image_size) == 0,
                       "the image read differs from the file's");
            FUZZ_CHECK(((char *)image)[image_size] == 0, "the image is not NUL-terminated");
            free(image);
        } else {
            struct stat st;
            FUZZ_CHECK(lstat(path, &st) != 0, "a rejected entry was left in place");
        }
    }
    free(file);
    return 0;
}
