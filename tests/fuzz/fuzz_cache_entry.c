/* The kernel-cache entry reader (disk_cache_read) on arbitrary files. The
 * first input byte selects fix-ups the harness applies to the rest (the
 * entry file) so mutations get past each check in turn; the file is written
 * where the entry of a fixed key lives, in a private cache directory with a
 * 1 MiB cap, and read back:
 *   bit 0: correct magic and format     bit 1: the key's bytes
 *   bit 2: size field = file size - 48  bit 3: the image's checksum
 *   bit 4: a directory in the entry's place instead, bit 5: a FIFO
 *   bit 6: instead, a valid entry written by disk_cache_write (the rest's
 *          first byte f: (f & 7) + 1 header flips, each two bytes (offset
 *          mod 48, XOR mask, 0 taken as 1), then the image; bit 7: CUBIN),
 *          damaged by those flips: it must read as a miss
 * A read that succeeds must return exactly the file's image and kind. The
 * header layout (48 bytes: magic[8], u32 format, u32 is_cubin, u64 size,
 * key[16], u64 checksum of the 40 bytes before it then of the image) is
 * disk_cache.c's; its seeds come from disk_cache_write. */
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "fuzz.h"
#include "runtime/cache_key.h"
#include "runtime/disk_cache.h"

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

/* The header disk_cache_write writes for an image. */
static void cache_header_bytes(const cache_key *key, const void *image, size_t size, bool cubin,
                               unsigned char out[HEADER]) {
    uint32_t format = 2, kind = cubin;
    uint64_t size64 = size;
    memcpy(out, "PTXKITC1", 8);
    memcpy(out + 8, &format, 4);
    memcpy(out + 12, &kind, 4);
    memcpy(out + 16, &size64, 8);
    memcpy(out + 24, key->bytes, 16);
    uint64_t sum = XXH3_64bits_withSeed(image, size, XXH3_64bits(out, 40));
    memcpy(out + 40, &sum, 8);
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

/* A valid entry with header bytes flipped: never a hit. */
static void flipped_entry(const cache_key *key, const unsigned char *in, size_t n, bool cubin) {
    if (n == 0) return;
    size_t flips = (in[0] & 7u) + 1, at = 1;
    if (n < at + 2 * flips) return;
    const unsigned char *image = in + at + 2 * flips;
    size_t image_size = n - at - 2 * flips;
    if (image_size == 0) image = (const unsigned char *)"x", image_size = 1;
    if (disk_cache_write(cache, key, image, image_size, cubin) != PTXKIT_SUCCESS) return;
    unsigned char header[HEADER];
    FILE *f = fopen(path, "r+b");
    if (!f) return;
    bool ok = fread(header, 1, HEADER, f) == HEADER;
    for (size_t i = 0; ok && i < flips; i++) header[in[at + 2 * i] % HEADER] ^= in[at + 2 * i + 1] ? in[at + 2 * i + 1] : 1;
    ok = ok && fseek(f, 0, SEEK_SET) == 0 && fwrite(header, 1, HEADER, f) == HEADER;
    fclose(f);
    if (!ok) return;
    /* flips that cancel out leave the entry as written */
    unsigned char written[HEADER];
    cache_header_bytes(key, image, image_size, cubin, written);
    bool same = memcmp(written, header, HEADER) == 0;
    void *data = NULL;
    size_t size = 0;
    bool kind = false;
    bool hit = disk_cache_read(cache, key, &data, &size, &kind);
    FUZZ_CHECK(!hit || same, "a damaged header read as a hit (%s, %zu bytes)", kind ? "CUBIN" : "PTX", size);
    if (hit) {
        FUZZ_CHECK(size == image_size && memcmp(data, image, size) == 0 && kind == cubin, "the entry read back differs");
        free(data);
    }
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
            uint32_t format = 2;
            memcpy(file, "PTXKITC1", 8);
            memcpy(file + 8, &format, 4);
        }
        if (mode & 2) memcpy(file + 24, key.bytes, 16);
        if (mode & 4) memcpy(file + 16, &image, 8);
        if (mode & 8) {
            uint64_t sum = XXH3_64bits_withSeed(file + HEADER, (size_t)image, XXH3_64bits(file, 40));
            memcpy(file + 40, &sum, 8);
        }
    }
    unlink(path);
    rmdir(path);
    if (mode & 64) {
        flipped_entry(&key, file, n, (mode & 128) != 0);
        free(file);
        return 0;
    }
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
            uint32_t kind;
            memcpy(&kind, file + 12, 4);
            FUZZ_CHECK(kind <= 1 && cubin == (kind == 1), "kind word %u read as %s", kind, cubin ? "CUBIN" : "PTX");
            free(image);
        } else {
            struct stat st;
            FUZZ_CHECK(lstat(path, &st) != 0, "a rejected entry was left in place");
        }
    }
    free(file);
    return 0;
}
