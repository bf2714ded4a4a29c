/* Writes the fuzz harnesses' seed corpora with the library's own writers
 * (tune_db_format, disk_cache_write, cache_key.c's identity record).
 * usage: fuzz_make_seeds tests/fuzz/corpus   (ninja -C build fuzz-seeds) */
#include <errno.h>
#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../family_key.h"
#include "runtime/cache_key.h"
#include "runtime/disk_cache.h"
#include "tuned/db.h"
#include "tune/record.h"

static const char *root;

static void put(const char *harness, const char *name, const void *prefix, size_t prefix_size, const void *data,
                size_t size) {
    char dir[1024], path[1200];
    snprintf(dir, sizeof dir, "%s/%s", root, harness);
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) exit(1);
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(prefix, 1, prefix_size, f) != prefix_size || fwrite(data, 1, size, f) != size) exit(1);
    fclose(f);
}

static char *read_all(const char *path, size_t *size) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    *size = fread(buf, 1, (size_t)n, f);
    fclose(f);
    return buf;
}

static tune_db_entry entry(const char *device, int cc, const char *family, const char *variant, int bucket) {
    tune_db_entry e;
    memset(&e, 0, sizeof e);
    tune_db_key_make(&e.key, device, cc, 132, 13000, 13, 0, "0.1.0");
    snprintf(e.family, sizeof e.family, "%s", family);
    snprintf(e.variant, sizeof e.variant, "%s", variant);
    e.bucket = bucket;
    e.config = (tune_config){.block_size = 512, .items_per_thread = 8, .vector_bytes = 16, .load_op = PTXKIT_LOAD_NC};
    e.gbs = 2650.1;
    e.default_gbs = 2500.25;
    e.when = 1763850000;
    return e;
}

/* A database file, and its body alone (for the fields harness). */
static void tune_seed(const char *name, const tune_db_entry *entries, size_t count) {
    tune_db db;
    tune_db_init(&db);
    for (size_t i = 0; i < count; i++) tune_db_put(&db, &entries[i]);
    size_t size;
    char *text = tune_db_format(&db, &size);
    put("tune_db", name, "", 0, text, size);
    char *body = strchr(text, '\n') + 1, *end = text + size - 1;
    while (end > body && end[-1] != '\n') end--;
    put("tune_db_fields", name, "", 0, body, (size_t)(end - body));
    free(text);
    tune_db_clear(&db);
}

static void tune_seeds(void) {
    tune_seed("empty", NULL, 0);
    tune_db_entry one = entry("NVIDIA H100 80GB HBM3", 90, "reduce", "sum.float32", 24);
    tune_seed("one", &one, 1);
    tune_db_entry three[3] = {entry("NVIDIA H100 80GB HBM3", 90, "copy", "bytes", 30),
                              entry("NVIDIA GeForce RTX 4090", 89, "reduce", "max.int32", 20),
                              entry("Ger\xc3\xa4t = x", 75, "reduce", "xor.uint64", 0)};
    three[1].config = (tune_config){0};
    three[2].config.load_op = PTXKIT_LOAD_CV;
    tune_seed("three", three, 3);
    tune_db_entry edge = entry("GPU", 120, "copy", "bytes", 63);
    edge.gbs = 999999999.99;
    edge.default_gbs = 0;
    edge.when = TUNE_DB_MAX_WHEN;
    tune_seed("edges", &edge, 1);
}

/* A cache_entry input: mode, names length, metadata length, then the
 * metadata, names and image (fuzz_cache_entry.c). */
static void cache_seed(const char *name, unsigned char mode, const void *meta, size_t meta_size, const char *names,
                       const void *image, size_t image_size) {
    size_t n_names = strlen(names), size = 4 + meta_size + n_names + image_size;
    unsigned char *buf = malloc(size);
    if (!buf) exit(1);
    buf[0] = mode;
    buf[1] = (unsigned char)n_names;
    buf[2] = (unsigned char)(meta_size & 0xff);
    buf[3] = (unsigned char)(meta_size >> 8);
    memcpy(buf + 4, meta, meta_size);
    memcpy(buf + 4 + meta_size, names, n_names);
    memcpy(buf + 4 + meta_size + n_names, image, image_size);
    put("cache_entry", name, "", 0, buf, size);
    free(buf);
}

static void cache_seeds(void) {
    char dir[] = "/tmp/ptxkit-seeds-XXXXXX";
    if (!mkdtemp(dir)) exit(1);
    disk_cache *c = disk_cache_open(dir);
    cache_key k;
    for (int i = 0; i < 16; i++) k.bytes[i] = (unsigned char)(i * 0x11); /* fuzz_cache_entry.c's key */
    char meta[1200], image_path[1200], names_path[1200];
    static const char *const images[] = {"\x7f" "ELF cubin", "// PTX\n.version 8.0\n.target sm_90\n"};
    for (int i = 0; i < 2; i++) {
        bool cubin = i == 0;
        if (disk_cache_write_entry(c, &k, images[i], strlen(images[i]), cubin, DISK_CACHE_FAMILY, "kernel_a") !=
            PTXKIT_SUCCESS)
            exit(1);
        if (!disk_cache_file_path(c, &k, "meta", meta, sizeof meta) ||
            !disk_cache_file_path(c, &k, cubin ? "cubin" : "ptx", image_path, sizeof image_path) ||
            !disk_cache_file_path(c, &k, "names", names_path, sizeof names_path))
            exit(1);
        size_t size = 0;
        char *file = read_all(meta, &size);
        if (!file) exit(1);
        unsigned char kind = cubin ? 0x80 : 0;
        char name[64];
        /* the files as the library wrote them (names "kernel_a\n"): a hit */
        snprintf(name, sizeof name, "written-%s", cubin ? "cubin" : "ptx");
        cache_seed(name, kind, file, size, "kernel_a\n", images[i], strlen(images[i]));
        /* the consistent record the harness renders, and the library's own entry */
        snprintf(name, sizeof name, "record-%s", cubin ? "cubin" : "ptx");
        cache_seed(name, kind | 1, "", 0, "kernel_a\n", images[i], strlen(images[i]));
        snprintf(name, sizeof name, "library-%s", cubin ? "cubin" : "ptx");
        cache_seed(name, kind | 0x40, "", 0, "kernel_a", images[i], strlen(images[i]));
        /* one byte of the record flipped: on its kind line, on its checksum */
        unsigned char mask[256] = {0};
        char *at = strstr(file, "kind ");
        if (!at) exit(1);
        mask[at - file + 5] = 0x01;
        snprintf(name, sizeof name, "flip-kind-%s", cubin ? "cubin" : "ptx");
        cache_seed(name, kind | 0x40, mask, (size_t)(at - file + 6), "kernel_a", images[i], strlen(images[i]));
        memset(mask, 0, sizeof mask);
        mask[size - 2] = 0x01;
        snprintf(name, sizeof name, "flip-checksum-%s", cubin ? "cubin" : "ptx");
        cache_seed(name, kind | 0x40, mask, size - 1, "kernel_a", images[i], strlen(images[i]));
        /* the image under the other kind's name, missing, or no names file */
        snprintf(name, sizeof name, "other-kind-%s", cubin ? "cubin" : "ptx");
        cache_seed(name, kind | 0x09, "", 0, "", images[i], strlen(images[i]));
        snprintf(name, sizeof name, "no-image-%s", cubin ? "cubin" : "ptx");
        cache_seed(name, kind | 0x05, "", 0, "", images[i], strlen(images[i]));
        snprintf(name, sizeof name, "no-names-%s", cubin ? "cubin" : "ptx");
        cache_seed(name, kind | 0x03, "", 0, "kernel_a\n", images[i], strlen(images[i]));
        free(file);
        unlink(meta);
        unlink(image_path);
        unlink(names_path);
    }
    cache_seed("directory", 0x10, "", 0, "", "x", 1);
    cache_seed("fifo", 0x21, "", 0, "", "x", 1);
    disk_cache_close(c);
    char hex[33], shard[1200];
    cache_key_hex(&k, hex);
    snprintf(shard, sizeof shard, "%s/%.2s", dir, hex);
    rmdir(shard);
    rmdir(dir);
}

static void identity_seeds(void) {
    static const char fixed[] = "|\n/usr/local/cuda/lib64/libnvrtc.so.13.0.48\n98765432 1763850000 13 0\n";
    unsigned char even = 0, odd = 1;
    put("identity_record", "fixed-signature", &even, 1, fixed, strlen(fixed));
    if (!ptxkit_jit_available()) return;
    /* the record cache_key.c writes once it has loaded NVRTC */
    char dir[] = "/tmp/ptxkit-seeds-XXXXXX", path[128];
    if (!mkdtemp(dir)) exit(1);
    setenv("PTXKIT_CACHE_DIR", dir, 1);
    const char *d[] = {"N=1"};
    cache_key_for("copy", d, 1, 90, 13000);
    snprintf(path, sizeof path, "%s/nvrtc-identity", dir);
    size_t size = 0;
    char *record = read_all(path, &size);
    if (record) put("identity_record", "written-by-cache-key", &odd, 1, record, size);
    free(record);
    unlink(path);
    rmdir(dir);
}

static void cli_seeds(void) {
    static const char a[] = "--device\0" "1\0" "--csv\0" "1G";
    static const char b[] = "BLOCK_SIZE=256\0" "2^20\0" "-5\0" "--svg\0" "out.svg\0" "--json";
    static const char c[] = "0x1000\0" "64K\0" "LOAD_OP=6\0" "--device\0" "1025";
    put("cli_args", "device-csv-size", "", 0, a, sizeof a - 1);
    put("cli_args", "define-svg-json", "", 0, b, sizeof b - 1);
    put("cli_args", "hex-suffix-bad-device", "", 0, c, sizeof c - 1);
}

/* Tuning-record files as tune_record_format writes them: every outcome, a
 * tunable's named parameters, a torn last line. */
static void record_seeds(void) {
    tune_record_line l;
    memset(&l, 0, sizeof l);
    tune_db_key_make(&l.key, "NVIDIA H100 80GB HBM3", 90, 132, 13000, 13, 0, "0.2.0");
    snprintf(l.family, sizeof l.family, "reduce");
    snprintf(l.variant, sizeof l.variant, "sum.float32");
    l.code = 0x0123456789abcdefull;
    l.n = (size_t)1 << 24;
    l.param_count = 3;
    snprintf(l.names[0], sizeof l.names[0], "BLOCK_SIZE");
    snprintf(l.names[1], sizeof l.names[1], "ITEMS");
    snprintf(l.names[2], sizeof l.names[2], "LOAD_OP");
    l.values[0] = 512, l.values[1] = 8, l.values[2] = 6;
    l.ms = 0.0251, l.gbs = 2671.5, l.samples = 5, l.when = 1763850000;
    char text[3 * TUNE_RECORD_MAX_LINE];
    size_t n = tune_record_format(&l, text, sizeof text);
    l.outcome = TUNE_RECORD_WRONG, l.ms = l.gbs = 0, l.samples = 0;
    snprintf(l.note, sizeof l.note, "the output check failed");
    n += tune_record_format(&l, text + n, sizeof text - n);
    l.outcome = TUNE_RECORD_FAILED;
    snprintf(l.note, sizeof l.note, "ptxas: \"too many resources\"\tline 3");
    n += tune_record_format(&l, text + n, sizeof text - n);
    /* the first byte is the harness's mode: 1 reseals every line */
    unsigned char as_is = 0, reseal = 1;
    put("tune_record", "three", &as_is, 1, text, n);
    put("tune_record", "torn", &as_is, 1, text, n - 7);
    put("tune_record", "three-resealed", &reseal, 1, text, n);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: fuzz_make_seeds CORPUS_DIR\n");
        return 2;
    }
    root = argv[1];
    tune_seeds();
    cache_seeds();
    identity_seeds();
    cli_seeds();
    record_seeds();
    return 0;
}
