/* The kernel-cache entry reader (disk_cache_read_entry) on arbitrary files.
 * An entry is a set of plain files (disk_cache.c, ../cache_meta.h): the
 * metadata record, the image (.cubin or .ptx) and the lowered names. The
 * input is split: mode byte, names length N (one byte), metadata length L
 * (two bytes, little-endian), then L bytes of metadata, N of names and the
 * image (the rest). The harness writes those files where the entry of a
 * fixed key lives, in a private cache directory with a 1 MiB cap, and reads
 * it back. Mode bits:
 *   bit 0: the metadata is replaced by the consistent record of the image
 *          and names (so mutations of those get past the record's checks);
 *          the L bytes are then XORed onto it (all zero: left whole)
 *   bit 1: no names file          bit 2: no image file
 *   bit 3: the image goes to the file of the other kind than bit 7 says
 *   bit 4: a directory in the metadata's place, bit 5: a FIFO in the image's
 *   bit 6: instead, a valid entry written by disk_cache_write_entry (image,
 *          names, kind bit 7), its metadata then XORed with the L bytes:
 *          a hit only where the XOR changed nothing
 *   bit 7: the kind: CUBIN, else PTX
 * Whatever the files, a hit must return exactly the image, kind, origin and
 * names whose canonical record is byte for byte the metadata file; a miss
 * removes the metadata (a record that fails a check is never kept). */
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../cache_meta.h"
#include "fuzz.h"
#include "runtime/disk_cache.h"

static char dir[64], shard[128], meta_path[256], cubin_path[256], ptx_path[256], names_path[256];
static disk_cache *cache;

/* The fixed key of every input: bytes 0x00, 0x11, ..., 0xff. */
cache_key fuzz_cache_key(void);
cache_key fuzz_cache_key(void) {
    cache_key k;
    for (int i = 0; i < 16; i++) k.bytes[i] = (unsigned char)(i * 0x11);
    return k;
}

static void clear(void) {
    const char *paths[] = {meta_path, cubin_path, ptx_path, names_path};
    for (int i = 0; i < 4; i++) {
        unlink(paths[i]);
        rmdir(paths[i]);
    }
}

static void cleanup(void) {
    disk_cache_close(cache);
    clear();
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
    snprintf(meta_path, sizeof meta_path, "%s/%s.meta", shard, hex);
    snprintf(cubin_path, sizeof cubin_path, "%s/%s.cubin", shard, hex);
    snprintf(ptx_path, sizeof ptx_path, "%s/%s.ptx", shard, hex);
    snprintf(names_path, sizeof names_path, "%s/%s.names", shard, hex);
    if (mkdir(shard, 0755) != 0) abort();
    atexit(cleanup);
}

/* A whole regular file (at most 2 MiB) into a malloc'd buffer; NULL when
 * absent or not a regular file. */
static unsigned char *slurp(const char *path, size_t *size) {
    *size = 0;
    struct stat st;
    if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > (2 << 20)) return NULL;
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    unsigned char *buf = malloc((size_t)st.st_size + 1);
    *size = buf ? fread(buf, 1, (size_t)st.st_size, f) : 0;
    fclose(f);
    return buf;
}

static bool put(const char *path, const void *data, size_t size) { return cache_meta_put(path, data, size); }

static void xor_into(unsigned char *text, size_t size, const unsigned char *mask, size_t mask_size) {
    for (size_t i = 0; i < mask_size && size; i++) text[i % size] ^= mask[i];
}

static const char *const origin_names[] = {"", "family", "program", "embedded-ptx", "user-image"};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!cache) setup();
    if (size < 4) return 0;
    unsigned mode = data[0];
    size_t n_names = data[1], n_meta = (size_t)data[2] | (size_t)data[3] << 8;
    data += 4;
    size -= 4;
    if (n_meta > size) n_meta = size;
    if (n_names > size - n_meta) n_names = size - n_meta;
    const unsigned char *meta_in = data, *names = data + n_meta, *image = names + n_names;
    size_t image_size = size - n_meta - n_names;
    bool cubin = (mode & 128) != 0;
    cache_key key = fuzz_cache_key();
    clear();
    if (mode & 64) {
        /* the library's own entry, its record damaged */
        char *names_text = NULL;
        if (n_names) {
            names_text = malloc(n_names + 1);
            memcpy(names_text, names, n_names);
            names_text[n_names] = 0;
        }
        ptxkit_status st = disk_cache_write_entry(cache, &key, image_size ? (const void *)image : "x",
                                                  image_size ? image_size : 1, cubin, DISK_CACHE_FAMILY, names_text);
        free(names_text);
        if (st != PTXKIT_SUCCESS) return 0;
        size_t meta_size;
        unsigned char *meta = slurp(meta_path, &meta_size);
        if (!meta) return 0;
        xor_into(meta, meta_size, meta_in, n_meta);
        put(meta_path, meta, meta_size);
        free(meta);
    } else {
        if (!(mode & 2)) put(names_path, names, n_names);
        bool image_cubin = (mode & 8) ? !cubin : cubin;
        if (mode & 32) mkfifo(image_cubin ? cubin_path : ptx_path, 0644);
        else if (!(mode & 4)) put(image_cubin ? cubin_path : ptx_path, image, image_size);
        if (mode & 16) {
            mkdir(meta_path, 0755);
        } else if (mode & 1) {
            char text[1024];
            size_t len = cache_meta_text(&key, cubin, "program", image_size, XXH3_64bits(image, image_size),
                                         n_names, n_names ? XXH3_64bits(names, n_names) : 0, text, sizeof text);
            xor_into((unsigned char *)text, len, meta_in, n_meta);
            put(meta_path, text, len);
        } else {
            put(meta_path, meta_in, n_meta);
        }
    }
    /* what the files hold before the read, for the oracle */
    size_t meta_size, names_size, image_file_size[2];
    unsigned char *meta = slurp(meta_path, &meta_size), *names_file = slurp(names_path, &names_size);
    unsigned char *images[2] = {slurp(ptx_path, &image_file_size[0]), slurp(cubin_path, &image_file_size[1])};
    void *got = NULL;
    size_t got_size = 0;
    bool got_cubin = false;
    disk_cache_origin origin = 0;
    char *got_names = NULL;
    bool hit = disk_cache_read_entry(cache, &key, &got, &got_size, &got_cubin, &origin, &got_names);
    if (hit) {
        int kind = got_cubin;
        FUZZ_CHECK(meta && images[kind] && origin >= DISK_CACHE_FAMILY && origin <= DISK_CACHE_USER_IMAGE,
                   "a hit without its files");
        FUZZ_CHECK(got_size == image_file_size[kind] && memcmp(got, images[kind], got_size) == 0,
                   "the image read differs from the file's");
        FUZZ_CHECK(((char *)got)[got_size] == 0, "the image is not NUL-terminated");
        bool with_names = got_names != NULL;
        FUZZ_CHECK(!with_names || (names_file && names_size == strlen(got_names) + 1 &&
                                   memcmp(got_names, names_file, names_size - 1) == 0 && names_file[names_size - 1] == '\n'),
                   "the names read differ from the file's");
        char text[1024];
        size_t len = cache_meta_text(&key, got_cubin, origin_names[origin], got_size, XXH3_64bits(got, got_size),
                                     with_names ? names_size : 0, with_names ? XXH3_64bits(names_file, names_size) : 0,
                                     text, sizeof text);
        FUZZ_CHECK(len == meta_size && memcmp(text, meta, len) == 0, "a hit on metadata that is not the canonical record");
        free(got);
        free(got_names);
    } else {
        struct stat st;
        FUZZ_CHECK(lstat(meta_path, &st) != 0, "a rejected entry's metadata was left in place");
        FUZZ_CHECK(got_names == NULL, "names returned on a miss");
    }
    free(meta);
    free(names_file);
    free(images[0]);
    free(images[1]);
    return 0;
}
