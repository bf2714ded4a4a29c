/* CPU tests of the tuning database and the parameter spaces: round trips;
 * corrupt, truncated, foreign-version and concurrently written files;
 * constraints that reject illegal configurations; dispatch lookups. */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "ptxkit_ops.h"
#include "ptxkit_tune.h"
#include "transpose/transpose.h"
#include "runtime/context.h"
#include "runtime/objects.h"
#include "test_util.h"
#include "tuned/db.h"
#include "tune/params.h"
#include "tuned/tuned.h"
#include "tune/tuner.h"

static char tmp_root[256];

static void make_tmp_root(void) {
    if (tmp_root[0]) return;
    snprintf(tmp_root, sizeof tmp_root, "/tmp/ptxkit-tune-test-XXXXXX");
    if (!mkdtemp(tmp_root)) fail_msg("mkdtemp failed");
}

static void remove_tree(const char *path) {
    DIR *d = opendir(path);
    if (!d) {
        unlink(path);
        return;
    }
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        char child[1024];
        snprintf(child, sizeof child, "%s/%s", path, e->d_name);
        remove_tree(child);
    }
    closedir(d);
    rmdir(path);
}

/* A fresh path under the test's directory, in a subdirectory that does not
 * exist yet (the store must create it). */
static void fresh_path(char *buf, size_t size, const char *name) {
    static int counter;
    make_tmp_root();
    snprintf(buf, size, "%s/d%d/sub/%s", tmp_root, counter++, name);
}

static tune_db_key h100_key(void) {
    tune_db_key k;
    tune_db_key_make(&k, "NVIDIA H100 80GB HBM3", 90, 132, 13000, 13, 0, "0.1.0");
    return k;
}

static tune_db_entry make_entry(uint64_t *rng, const tune_db_key *key, const char *family, const char *variant, int bucket) {
    tune_db_entry e;
    memset(&e, 0, sizeof e);
    e.key = *key;
    snprintf(e.family, sizeof e.family, "%s", family);
    snprintf(e.variant, sizeof e.variant, "%s", variant);
    e.bucket = bucket;
    static const int blocks[] = {0, 32, 64, 128, 256, 512, 1024};
    static const int vecs[] = {0, 4, 8, 16};
    e.config.block_size = blocks[test_rand(rng) % 7];
    e.config.items_per_thread = (int)(test_rand(rng) % 17);
    e.config.vector_bytes = vecs[test_rand(rng) % 4];
    e.config.blocks_per_sm = (int)(test_rand(rng) % 33);
    e.config.load_op = (ptxkit_load_op)(test_rand(rng) % PTXKIT_LOAD_OP_COUNT);
    /* two decimals survive the text format exactly enough to compare */
    e.gbs = (double)(test_rand(rng) % 400000) / 100.0;
    e.default_gbs = (double)(test_rand(rng) % 400000) / 100.0;
    e.when = 1763850000 + (long long)(test_rand(rng) % 100000);
    return e;
}

static void assert_entry_equal(const tune_db_entry *a, const tune_db_entry *b) {
    assert_true(tune_db_key_equal(&a->key, &b->key));
    assert_string_equal(a->family, b->family);
    assert_string_equal(a->variant, b->variant);
    assert_int_equal(a->bucket, b->bucket);
    assert_true(tune_config_equal(&a->config, &b->config));
    assert_true(a->gbs - b->gbs < 0.006 && b->gbs - a->gbs < 0.006);
    assert_true(a->default_gbs - b->default_gbs < 0.006 && b->default_gbs - a->default_gbs < 0.006);
    assert_int_equal(a->when, b->when);
}

/* Every entry of `want` is in `got` with the same values, and no more. */
static void assert_db_equal(const tune_db *want, const tune_db *got) {
    assert_int_equal(want->count, got->count);
    for (size_t i = 0; i < want->count; i++) {
        const tune_db_entry *w = &want->entries[i];
        const tune_db_entry *g = tune_db_find(got, &w->key, w->family, w->variant, w->bucket, 0);
        assert_non_null(g);
        assert_int_equal(g->bucket, w->bucket);
        assert_entry_equal(w, g);
    }
}

static void sample_db(tune_db *db, int count, uint64_t seed) {
    uint64_t rng = seed;
    tune_db_init(db);
    tune_db_key keys[3];
    keys[0] = h100_key();
    tune_db_key_make(&keys[1], "NVIDIA GeForce RTX 4090", 89, 128, 12080, 12, 8, "0.1.0");
    /* tabs, newlines and other control characters are sanitized */
    tune_db_key_make(&keys[2], "Ger\xc3\xa4t\twith\ntabs = and equals", 75, 40, 13000, 13, 0, "0.0.9");
    static const char *const variants[] = {"sum.float32", "max.int32", "bytes", "xor.uint64"};
    for (int i = 0; i < count; i++) {
        tune_db_entry e = make_entry(&rng, &keys[i % 3], i % 4 == 2 ? "copy" : "reduce", variants[i % 4], i % 40);
        assert_true(tune_db_put(db, &e));
    }
}

/* ---- round trips ------------------------------------------------------- */

static void test_bucket(void **state) {
    (void)state;
    assert_int_equal(tune_bucket(0), 0);
    assert_int_equal(tune_bucket(1), 0);
    assert_int_equal(tune_bucket(2), 1);
    assert_int_equal(tune_bucket(3), 1);
    assert_int_equal(tune_bucket((size_t)1 << 20), 20);
    assert_int_equal(tune_bucket(((size_t)1 << 20) + 1), 20);
    assert_int_equal(tune_bucket(((size_t)1 << 21) - 1), 20);
    assert_int_equal(tune_bucket(SIZE_MAX), (int)(sizeof(size_t) * 8 - 1));
}

static void test_key_sanitized(void **state) {
    (void)state;
    tune_db_key k;
    tune_db_key_make(&k, "a\tb\nc\x7f" "d", 90, 1, 2, 3, 4, "0.1.0");
    assert_string_equal(k.device, "a_b_c_d");
    tune_db_key_make(&k, "", 90, 1, 2, 3, 4, "0.1.0");
    assert_string_equal(k.device, "unknown");
}

static void test_round_trip_text(void **state) {
    (void)state;
    tune_db db, back;
    sample_db(&db, 120, test_seed());
    tune_db_init(&back);
    size_t size;
    char *text = tune_db_format(&db, &size);
    assert_non_null(text);
    assert_int_equal(strlen(text), size);
    char msg[256];
    assert_status(PTXKIT_SUCCESS, tune_db_parse(text, size, &back, msg, sizeof msg));
    assert_db_equal(&db, &back);
    /* formatting is deterministic: the same content gives the same file */
    size_t size2;
    char *text2 = tune_db_format(&back, &size2);
    assert_int_equal(size, size2);
    assert_memory_equal(text, text2, size);
    free(text);
    free(text2);
    tune_db_clear(&db);
    tune_db_clear(&back);
}

static void test_round_trip_empty(void **state) {
    (void)state;
    tune_db db, back;
    tune_db_init(&db);
    tune_db_init(&back);
    size_t size;
    char *text = tune_db_format(&db, &size);
    char msg[256];
    assert_status(PTXKIT_SUCCESS, tune_db_parse(text, size, &back, msg, sizeof msg));
    assert_int_equal(back.count, 0);
    free(text);
}

static void test_round_trip_file(void **state) {
    (void)state;
    char path[512], msg[640];
    fresh_path(path, sizeof path, "tune.db");
    tune_db db, back, merged;
    sample_db(&db, 30, test_seed() + 1);
    tune_db_init(&back);
    tune_db_init(&merged);
    assert_status(PTXKIT_SUCCESS, tune_db_load(path, &back, msg, sizeof msg)); /* missing: empty */
    assert_int_equal(back.count, 0);
    assert_status(PTXKIT_SUCCESS, tune_db_store(path, db.entries, db.count, &merged, msg, sizeof msg));
    assert_db_equal(&db, &merged);
    assert_status(PTXKIT_SUCCESS, tune_db_load(path, &back, msg, sizeof msg));
    assert_db_equal(&db, &back);

    /* storing the same slot again replaces it */
    tune_db_entry e = db.entries[3];
    e.config.block_size = 512;
    e.gbs = 1234.5;
    assert_true(tune_db_put(&db, &e));
    assert_status(PTXKIT_SUCCESS, tune_db_store(path, &e, 1, NULL, msg, sizeof msg));
    assert_status(PTXKIT_SUCCESS, tune_db_load(path, &back, msg, sizeof msg));
    assert_int_equal(back.count, 30);
    assert_db_equal(&db, &back);
    tune_db_clear(&db);
    tune_db_clear(&back);
    tune_db_clear(&merged);
}

/* ---- damaged files ----------------------------------------------------- */

static char *sample_text(size_t *size, int entries) {
    tune_db db;
    sample_db(&db, entries, 42);
    char *text = tune_db_format(&db, size);
    tune_db_clear(&db);
    assert_non_null(text);
    return text;
}

/* Parses exactly `size` bytes from a buffer of that size, so the sanitizers
 * catch any read past the end. */
static ptxkit_status parse_exact(const char *text, size_t size, tune_db *db) {
    char *copy = malloc(size ? size : 1);
    memcpy(copy, text, size);
    char msg[256] = "";
    ptxkit_status st = tune_db_parse(copy, size, db, msg, sizeof msg);
    if (st != PTXKIT_SUCCESS) {
        assert_true(msg[0] != 0); /* every refusal says why */
        assert_int_equal(db->count, 0);
    }
    free(copy);
    return st;
}

static void test_truncated(void **state) {
    (void)state;
    size_t size;
    char *text = sample_text(&size, 12);
    tune_db db;
    tune_db_init(&db);
    for (size_t len = 0; len < size; len++) assert_true(parse_exact(text, len, &db) != PTXKIT_SUCCESS);
    assert_status(PTXKIT_SUCCESS, parse_exact(text, size, &db));
    assert_int_equal(db.count, 12);
    tune_db_clear(&db);
    free(text);
}

/* Any single bit flip is refused, or (a hex digit's case in the checksum)
 * reads back the very same data. */
static void test_bit_flips(void **state) {
    (void)state;
    size_t size;
    char *text = sample_text(&size, 6);
    tune_db original, db;
    tune_db_init(&original);
    tune_db_init(&db);
    assert_status(PTXKIT_SUCCESS, parse_exact(text, size, &original));
    for (size_t i = 0; i < size; i++)
        for (int bit = 0; bit < 8; bit++) {
            text[i] ^= (char)(1 << bit);
            if (parse_exact(text, size, &db) == PTXKIT_SUCCESS) assert_db_equal(&original, &db);
            text[i] ^= (char)(1 << bit);
        }
    tune_db_clear(&original);
    tune_db_clear(&db);
    free(text);
}

static void test_garbage(void **state) {
    (void)state;
    uint64_t rng = test_seed();
    tune_db db;
    tune_db_init(&db);
    char buf[4096];
    size_t valid_size;
    char *valid = sample_text(&valid_size, 8);
    for (int round = 0; round < 3000; round++) {
        size_t len = test_rand(&rng) % sizeof buf;
        test_fill_random(buf, len, &rng);
        if (round % 3 == 1 && len > 20) memcpy(buf, "ptxkit-tune-db 1\n", 17);
        if (round % 3 == 2) { /* a valid file with a few random bytes changed */
            len = valid_size;
            memcpy(buf, valid, len);
            for (int k = 0; k < 1 + (int)(test_rand(&rng) % 4); k++) buf[test_rand(&rng) % len] = (char)test_rand(&rng);
        }
        parse_exact(buf, len, &db); /* must not crash, leak or read out of bounds */
        tune_db_clear(&db);
    }
    free(valid);
}

/* A text with a valid checksum around arbitrary entry lines. */
static char *with_trailer(const char *body, size_t entries) {
    size_t n = strlen(body);
    char *text = malloc(n + 128);
    memcpy(text, body, n);
    snprintf(text + n, 128, "end\tentries=%zu\txxh3_64=%016llx\n", entries, (unsigned long long)XXH3_64bits(body, n));
    return text;
}

#define GOOD_FIELDS                                                                                      \
    "device=GPU\tcc=90\tsms=132\tdriver=13000\tnvrtc=13.0\tlib=0.1.0\tfamily=reduce\tvariant=sum.float32" \
    "\tlog2n=24\titems=4\tvec=16\tbpsm=0\tload=nc\tgbs=1.5\tdefault_gbs=1.0\twhen=5"

static ptxkit_status parse_body(const char *body, size_t entries, tune_db *db) {
    char *text = with_trailer(body, entries);
    ptxkit_status st = parse_exact(text, strlen(text), db);
    free(text);
    return st;
}

static void test_bad_records(void **state) {
    (void)state;
    tune_db db;
    tune_db_init(&db);
    /* the well-formed record, and unknown fields ignored */
    assert_status(PTXKIT_SUCCESS, parse_body("ptxkit-tune-db 1\nentry\t" GOOD_FIELDS "\tblock=256\n", 1, &db));
    assert_int_equal(db.entries[0].config.block_size, 256);
    assert_int_equal(db.entries[0].config.load_op, PTXKIT_LOAD_NC);
    assert_status(PTXKIT_SUCCESS,
                  parse_body("ptxkit-tune-db 1\n# note\n\nentry\t" GOOD_FIELDS "\tblock=256\tfuture=7\n", 1, &db));
    /* counts, missing, repeated and bad fields */
    assert_status(PTXKIT_ERROR_CORRUPT, parse_body("ptxkit-tune-db 1\nentry\t" GOOD_FIELDS "\tblock=256\n", 2, &db));
    assert_status(PTXKIT_ERROR_CORRUPT, parse_body("ptxkit-tune-db 1\nentry\t" GOOD_FIELDS "\n", 1, &db));
    assert_status(PTXKIT_ERROR_CORRUPT,
                  parse_body("ptxkit-tune-db 1\nentry\t" GOOD_FIELDS "\tblock=256\tblock=128\n", 1, &db));
    assert_status(PTXKIT_ERROR_CORRUPT, parse_body("ptxkit-tune-db 1\nentry\t" GOOD_FIELDS "\tblock=48\n", 1, &db));
    assert_status(PTXKIT_ERROR_CORRUPT, parse_body("ptxkit-tune-db 1\nentry\t" GOOD_FIELDS "\tblock=2048\n", 1, &db));
    assert_status(PTXKIT_ERROR_CORRUPT, parse_body("ptxkit-tune-db 1\nentry\t" GOOD_FIELDS "\tblock=25x\n", 1, &db));
    assert_status(PTXKIT_ERROR_CORRUPT, parse_body("ptxkit-tune-db 1\nentry\t" GOOD_FIELDS "\tblock\n", 1, &db));
    assert_status(PTXKIT_ERROR_CORRUPT, parse_body("ptxkit-tune-db 1\nbogus\tblock=256\n", 1, &db));
    char body[4096];
    snprintf(body, sizeof body, "ptxkit-tune-db 1\nentry\t%s\tblock=256\tpad=%03000d\n", GOOD_FIELDS, 0);
    assert_status(PTXKIT_ERROR_CORRUPT, parse_body(body, 1, &db)); /* over-long line */
    tune_db_clear(&db);
}

static void test_foreign(void **state) {
    (void)state;
    tune_db db;
    tune_db_init(&db);
    char msg[256];
    const char *v2 = "ptxkit-tune-db 2\nwhatever a later format holds\n";
    assert_status(PTXKIT_ERROR_UNSUPPORTED, tune_db_parse(v2, strlen(v2), &db, msg, sizeof msg));
    assert_non_null(strstr(msg, "version 2"));
    assert_status(PTXKIT_ERROR_UNSUPPORTED, parse_body("ptxkit-tune-db 0\n", 0, &db));
    const char *other = "some other program's file\n";
    assert_status(PTXKIT_ERROR_CORRUPT, tune_db_parse(other, strlen(other), &db, msg, sizeof msg));
    assert_status(PTXKIT_ERROR_CORRUPT, tune_db_parse("", 0, &db, msg, sizeof msg));
    assert_status(PTXKIT_ERROR_CORRUPT, tune_db_parse("ptxkit-tune-db x\n", 17, &db, msg, sizeof msg));
    assert_status(PTXKIT_ERROR_CORRUPT, tune_db_parse("ptxkit-tune-db 1", 16, &db, msg, sizeof msg));
    assert_int_equal(db.count, 0);
}

static void write_text(const char *path, const char *text, size_t size) {
    assert_true(test_write_file(path, text, size));
}

/* A damaged or foreign file is reported on load, kept aside as .bad, and
 * replaced by a whole new file on the next store. */
static void test_store_replaces_bad_files(void **state) {
    (void)state;
    static const char *const bad[] = {"garbage\x01\x02", "ptxkit-tune-db 9\nfuture\n", "ptxkit-tune-db 1\nentry\tdevi"};
    uint64_t rng = 7;
    tune_db_key key = h100_key();
    for (int i = 0; i < 3; i++) {
        char path[512], bad_path[600], msg[640];
        fresh_path(path, sizeof path, "tune.db");
        tune_db db;
        tune_db_init(&db);
        tune_db_entry e = make_entry(&rng, &key, "copy", "bytes", 28);
        assert_status(PTXKIT_SUCCESS, tune_db_store(path, &e, 1, NULL, msg, sizeof msg)); /* creates dirs */
        write_text(path, bad[i], strlen(bad[i]));
        ptxkit_status st = tune_db_load(path, &db, msg, sizeof msg);
        assert_true(st == PTXKIT_ERROR_CORRUPT || st == PTXKIT_ERROR_UNSUPPORTED);
        assert_non_null(strstr(msg, "ignored"));
        assert_int_equal(db.count, 0);
        assert_status(PTXKIT_SUCCESS, tune_db_store(path, &e, 1, &db, msg, sizeof msg));
        assert_non_null(strstr(msg, ".bad"));
        assert_int_equal(db.count, 1);
        snprintf(bad_path, sizeof bad_path, "%s.bad", path);
        struct stat sb;
        assert_int_equal(stat(bad_path, &sb), 0);
        assert_int_equal(sb.st_size, (off_t)strlen(bad[i]));
        assert_status(PTXKIT_SUCCESS, tune_db_load(path, &db, msg, sizeof msg));
        assert_int_equal(db.count, 1);
        assert_entry_equal(&e, &db.entries[0]);
        tune_db_clear(&db);
    }
}

static void test_store_errors(void **state) {
    (void)state;
    char msg[640];
    tune_db_entry e;
    memset(&e, 0, sizeof e);
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, tune_db_store(NULL, &e, 1, NULL, msg, sizeof msg));
    assert_status(PTXKIT_ERROR_INVALID_ARGUMENT, tune_db_store("", &e, 1, NULL, msg, sizeof msg));
    /* a directory where the file should be */
    char path[512];
    fresh_path(path, sizeof path, "tune.db");
    tune_db db;
    tune_db_init(&db);
    assert_status(PTXKIT_SUCCESS, tune_db_store(path, NULL, 0, NULL, msg, sizeof msg));
    unlink(path);
    assert_int_equal(mkdir(path, 0755), 0);
    assert_true(tune_db_load(path, &db, msg, sizeof msg) != PTXKIT_SUCCESS);
    assert_true(msg[0] != 0);
    rmdir(path);
}

/* Writers in separate processes, each storing its results one by one as a
 * tuner does: the file stays valid throughout and keeps every result. */
static void test_concurrent_writers(void **state) {
    (void)state;
    enum { WRITERS = 8, EACH = 25 };
    char path[512], msg[640];
    fresh_path(path, sizeof path, "tune.db");
    tune_db_key key = h100_key();
    fflush(NULL);
    pid_t pids[WRITERS];
    for (int w = 0; w < WRITERS; w++) {
        pids[w] = fork();
        assert_true(pids[w] >= 0);
        if (pids[w] == 0) {
            uint64_t rng = 1000 + (uint64_t)w;
            int failures = 0;
            for (int i = 0; i < EACH; i++) {
                char variant[40];
                snprintf(variant, sizeof variant, "w%d", w);
                tune_db_entry e = make_entry(&rng, &key, "reduce", variant, i);
                char m[640];
                if (tune_db_store(path, &e, 1, NULL, m, sizeof m) != PTXKIT_SUCCESS) failures++;
                /* readers meanwhile always see a whole file */
                tune_db seen;
                tune_db_init(&seen);
                if (tune_db_load(path, &seen, m, sizeof m) != PTXKIT_SUCCESS) failures++;
                tune_db_clear(&seen);
            }
            _exit(failures ? 1 : 0);
        }
    }
    for (int w = 0; w < WRITERS; w++) {
        int status = 0;
        assert_int_equal(waitpid(pids[w], &status, 0), pids[w]);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
    }
    tune_db db;
    tune_db_init(&db);
    assert_status(PTXKIT_SUCCESS, tune_db_load(path, &db, msg, sizeof msg));
    assert_int_equal(db.count, WRITERS * EACH);
    for (int w = 0; w < WRITERS; w++) {
        uint64_t rng = 1000 + (uint64_t)w;
        char variant[40];
        snprintf(variant, sizeof variant, "w%d", w);
        for (int i = 0; i < EACH; i++) {
            tune_db_entry e = make_entry(&rng, &key, "reduce", variant, i);
            const tune_db_entry *g = tune_db_find(&db, &key, "reduce", variant, i, 0);
            assert_non_null(g);
            assert_entry_equal(&e, g);
        }
    }
    tune_db_clear(&db);
    /* no temporary files left behind */
    char dir[512];
    snprintf(dir, sizeof dir, "%s", path);
    *strrchr(dir, '/') = 0;
    DIR *d = opendir(dir);
    struct dirent *ent;
    while ((ent = readdir(d)) != NULL) assert_null(strstr(ent->d_name, ".tmp."));
    closedir(d);
}

static void test_find_nearest(void **state) {
    (void)state;
    tune_db db;
    tune_db_init(&db);
    uint64_t rng = 3;
    tune_db_key key = h100_key(), other = key;
    other.driver = 12080;
    tune_db_entry a = make_entry(&rng, &key, "reduce", "sum.float32", 20);
    tune_db_entry b = make_entry(&rng, &key, "reduce", "sum.float32", 24);
    tune_db_entry c = make_entry(&rng, &other, "reduce", "sum.float32", 22);
    assert_true(tune_db_put(&db, &a) && tune_db_put(&db, &b) && tune_db_put(&db, &c));
    assert_int_equal(tune_db_find(&db, &key, "reduce", "sum.float32", 20, 0)->bucket, 20);
    assert_null(tune_db_find(&db, &key, "reduce", "sum.float32", 21, 0));
    assert_int_equal(tune_db_find(&db, &key, "reduce", "sum.float32", 21, 2)->bucket, 20);
    assert_int_equal(tune_db_find(&db, &key, "reduce", "sum.float32", 22, 2)->bucket, 24); /* tie: larger */
    assert_int_equal(tune_db_find(&db, &key, "reduce", "sum.float32", 26, 2)->bucket, 24);
    assert_null(tune_db_find(&db, &key, "reduce", "sum.float32", 27, 2));
    assert_null(tune_db_find(&db, &key, "reduce", "sum.int32", 20, 2));
    assert_null(tune_db_find(&db, &key, "copy", "sum.float32", 20, 2));
    assert_int_equal(tune_db_find(&db, &other, "reduce", "sum.float32", 23, 2)->bucket, 22);
    tune_db_key lib = key;
    snprintf(lib.library, sizeof lib.library, "0.2.0");
    assert_null(tune_db_find(&db, &lib, "reduce", "sum.float32", 20, 2));
    tune_db_clear(&db);
}

/* ---- parameter spaces -------------------------------------------------- */

static ptxkit_device_info h100_info(void) {
    ptxkit_device_info info;
    memset(&info, 0, sizeof info);
    snprintf(info.name, sizeof info.name, "NVIDIA H100 80GB HBM3");
    info.cc_major = 9;
    info.sm_count = 132;
    info.l2_bytes = 50 << 20;
    info.shared_per_block = 48 << 10;
    info.shared_per_block_optin = 227 << 10;
    info.shared_per_sm = 228 << 10;
    info.max_threads_per_block = 1024;
    info.max_threads_per_sm = 2048;
    info.max_blocks_per_sm = 32;
    info.regs_per_block = 65536;
    info.regs_per_sm = 65536;
    info.warp_size = 32;
    return info;
}

static tune_variant variant_of(const char *family, const char *name) {
    tune_variant v;
    char why[256];
    assert_status(PTXKIT_SUCCESS, tune_variant_parse(tune_family_find(family), name, &v, why, sizeof why));
    return v;
}

static void test_families_and_variants(void **state) {
    (void)state;
    assert_true(tune_family_count() >= 2);
    assert_non_null(tune_family_find("copy"));
    assert_non_null(tune_family_find("reduce"));
    assert_null(tune_family_find("nope"));
    assert_null(tune_family_find(NULL));
    assert_string_equal(ptxkit_tune_family_name_get(0), tune_family_at(0)->name);
    /* gemm is a problem of its own after the launch-option families */
    assert_string_equal(ptxkit_tune_family_name_get(tune_family_count()), "gemm");
    assert_null(tune_family_find("gemm"));
    assert_null(ptxkit_tune_family_name_get(tune_family_count() + 1));
    assert_null(ptxkit_tune_family_name_get(-1));
    tune_variant v = variant_of("reduce", NULL);
    assert_string_equal(v.name, "sum.float32");
    assert_int_equal(v.elem_size, 4);
    v = variant_of("reduce", "max.float64");
    assert_int_equal(v.type, PTXKIT_FLOAT64);
    assert_int_equal(v.op, PTXKIT_REDUCE_MAX);
    /* tuned under the name of the kernel that computes it, as reduce.c looks it up */
    v = variant_of("reduce", "sum.uint64");
    assert_string_equal(v.name, "sum.int64");
    v = variant_of("reduce", "and.int32");
    assert_string_equal(v.name, "and.uint32");
    v = variant_of("copy", NULL);
    assert_string_equal(v.name, "bytes");
    assert_int_equal(v.elem_size, 1);
    char why[256];
    static const char *const bad[] = {"sum", "and.float32", "xor.float64", "min.int64", "sum.int33", "foo.int32", ".", "sum.",
                                      "sum.float32.x", "a-very-long-variant-name-that-does-not-fit-in-forty-bytes"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_true(tune_variant_parse(tune_family_find("reduce"), bad[i], &v, why, sizeof why) != PTXKIT_SUCCESS);
        assert_true(why[0] != 0);
    }
    assert_true(tune_variant_parse(tune_family_find("copy"), "words", &v, why, sizeof why) != PTXKIT_SUCCESS);
    assert_true(tune_variant_parse(NULL, "x", &v, why, sizeof why) != PTXKIT_SUCCESS);
}

static bool legal(const tune_variant *v, tune_config c, const ptxkit_device_info *info) {
    char why[256] = "";
    bool ok = tune_config_legal(v, &c, info, why, sizeof why);
    if (!ok) assert_true(why[0] != 0);
    return ok;
}

static void test_constraints(void **state) {
    (void)state;
    ptxkit_device_info info = h100_info();
    tune_variant f32 = variant_of("reduce", "sum.float32"), f64 = variant_of("reduce", "sum.float64"),
                 copy = variant_of("copy", "bytes");
    tune_config zero = {0};
    assert_true(legal(&f32, zero, &info)); /* all built-in defaults */
    assert_true(legal(&f32, (tune_config){256, 4, 16, 0, PTXKIT_LOAD_DEFAULT}, &info));
    assert_true(legal(&f32, (tune_config){1024, 4, 16, 2, PTXKIT_LOAD_NC}, &info));
    assert_true(legal(&copy, (tune_config){512, 8, 16, 4, PTXKIT_LOAD_CS}, &info));
    /* block size: power of two within the device */
    assert_false(legal(&f32, (tune_config){48, 4, 16, 0, 0}, &info));
    assert_false(legal(&f32, (tune_config){16, 4, 16, 0, 0}, &info));
    assert_false(legal(&f32, (tune_config){2048, 4, 16, 0, 0}, &info));
    ptxkit_device_info small = info;
    small.max_threads_per_block = 512;
    assert_false(legal(&f32, (tune_config){1024, 4, 16, 0, 0}, &small));
    assert_true(legal(&f32, (tune_config){512, 4, 16, 0, 0}, &small));
    /* values outside the family's lists */
    assert_false(legal(&f32, (tune_config){256, 3, 16, 0, 0}, &info));
    assert_false(legal(&f32, (tune_config){256, 4, 32, 0, 0}, &info));
    assert_false(legal(&f32, (tune_config){256, 4, 2, 0, 0}, &info));
    assert_false(legal(&f64, (tune_config){256, 4, 4, 0, 0}, &info)); /* narrower than an element */
    assert_true(legal(&f64, (tune_config){256, 4, 8, 0, 0}, &info));
    assert_false(legal(&f32, (tune_config){256, 4, 16, 3, 0}, &info));
    assert_false(legal(&f32, (tune_config){256, 4, 16, -1, 0}, &info));
    assert_false(legal(&f32, (tune_config){256, 4, 16, 0, PTXKIT_LOAD_OP_COUNT}, &info));
    assert_false(legal(&f32, (tune_config){256, 4, 16, 0, (ptxkit_load_op)-1}, &info));
    /* the SM's limits: threads, blocks, registers, shared memory */
    assert_false(legal(&f32, (tune_config){1024, 4, 16, 4, 0}, &info));  /* 4096 threads per SM */
    assert_true(legal(&f32, (tune_config){1024, 1, 4, 2, 0}, &info));
    assert_false(legal(&f32, (tune_config){32, 1, 4, 32, 0}, &(ptxkit_device_info){.max_blocks_per_sm = 16,
                                                                                     .max_threads_per_block = 1024}));
    /* reduce keeps one partial per block in 2048 slots: 132 SMs x 16 > 2048 */
    assert_true(legal(&f32, (tune_config){64, 4, 16, 8, 0}, &info));
    assert_false(legal(&f32, (tune_config){64, 4, 16, 16, 0}, &info));
    assert_true(legal(&copy, (tune_config){64, 4, 16, 16, 0}, &info));
    /* launch bounds: ptxkit fits any block in the registers (ptxas spills
     * instead), so register estimates do not prune these families */
    assert_true(legal(&f32, (tune_config){1024, 16, 16, 0, 0}, &info));
    ptxkit_device_info few_regs = info;
    few_regs.regs_per_block = few_regs.regs_per_sm = 16384;
    assert_true(legal(&copy, (tune_config){1024, 8, 16, 0, 0}, &few_regs));
    /* a family without launch bounds must fit its registers */
    tune_family unbounded = *tune_family_find("copy");
    unbounded.min_blocks = NULL;
    tune_variant uv = copy;
    uv.family = &unbounded;
    assert_false(legal(&uv, (tune_config){1024, 8, 16, 0, 0}, &few_regs)); /* ~52 x 1024 > 16384 */
    assert_true(legal(&uv, (tune_config){256, 8, 16, 0, 0}, &few_regs));   /* ~52 x 256 fits */
    assert_false(legal(&uv, (tune_config){256, 8, 16, 2, 0}, &few_regs));  /* two of those per SM do not */
    assert_true(legal(&uv, (tune_config){128, 8, 16, 2, 0}, &few_regs));
    ptxkit_device_info tiny_shared = info;
    tiny_shared.shared_per_block = 64;
    assert_false(legal(&f32, (tune_config){1024, 1, 4, 0, 0}, &tiny_shared)); /* 32 warp partials x 4 B */
    assert_true(legal(&f32, (tune_config){256, 1, 4, 0, 0}, &tiny_shared));
    /* with no device, only the lists apply */
    assert_true(legal(&f32, (tune_config){1024, 16, 16, 32, 0}, NULL));
}

static void test_spaces(void **state) {
    (void)state;
    ptxkit_device_info info = h100_info();
    tune_variant f32 = variant_of("reduce", "sum.float32"), f64 = variant_of("reduce", "sum.float64"),
                 copy = variant_of("copy", "bytes");
    tune_space s;
    tune_space_for(&f32, &info, &s);
    assert_int_equal(s.count[TUNE_BLOCK], 6); /* 32 .. 1024 */
    assert_int_equal(s.values[TUNE_BLOCK][0], 32);
    assert_int_equal(s.values[TUNE_BLOCK][5], 1024);
    assert_int_equal(s.count[TUNE_LOAD], PTXKIT_LOAD_OP_COUNT);
    assert_int_equal(s.values[TUNE_BPSM][0], 0); /* occupancy is a choice */
    tune_space_for(&f64, &info, &s);
    for (int i = 0; i < s.count[TUNE_VECTOR]; i++) assert_true(s.values[TUNE_VECTOR][i] >= 8);
    ptxkit_device_info small = info;
    small.max_threads_per_block = 256;
    small.max_blocks_per_sm = 8;
    tune_space_for(&copy, &small, &s);
    assert_int_equal(s.count[TUNE_BLOCK], 4);
    for (int i = 0; i < s.count[TUNE_BPSM]; i++) assert_true(s.values[TUNE_BPSM][i] <= 8);

    /* every index maps to a configuration and back; legal ones pass and the
     * pruned ones are exactly those the rules reject */
    tune_space_for(&f32, &info, &s);
    size_t total = tune_space_size(&s), legal_count = 0;
    assert_int_equal(total, 6 * 5 * 3 * 7 * 7);
    for (size_t i = 0; i < total; i++) {
        tune_config c;
        tune_space_config(&s, i, &c);
        assert_int_equal(tune_space_index(&s, &c), i);
        char why[256];
        if (tune_config_legal(&f32, &c, &info, why, sizeof why)) legal_count++;
    }
    assert_true(legal_count > total / 2 && legal_count < total);
    tune_config absent = {48, 4, 16, 0, 0};
    assert_int_equal(tune_space_index(&s, &absent), (size_t)-1);
}

static void test_config_helpers(void **state) {
    (void)state;
    tune_config c = {512, 8, 16, 0, PTXKIT_LOAD_NC};
    char buf[128];
    tune_config_format(&c, buf, sizeof buf);
    assert_string_equal(buf, "block=512 items=8 vec=16 bpsm=- load=nc");
    launch_options o = tune_config_options(&c);
    assert_int_equal(o.path, PTXKIT_PATH_JIT);
    tune_config back = tune_config_from_options(&o);
    assert_true(tune_config_equal(&c, &back));
    for (int p = 0; p < TUNE_PARAM_COUNT; p++) {
        tune_config_set(&back, (tune_param)p, 2);
        assert_int_equal(tune_config_get(&back, (tune_param)p), 2);
    }
    assert_false(tune_config_equal(&c, &back));
    /* float inputs are small integers, exact in any summation order */
    tune_variant f32 = variant_of("reduce", "sum.float32");
    float values[1000];
    uint64_t rng = 9;
    tune_fill_host(&f32, values, sizeof values, &rng);
    for (int i = 0; i < 1000; i++) assert_true(values[i] == 1.0f || values[i] == 2.0f || values[i] == 3.0f);
}

/* transpose: block x items is the tile, the vector width must map; the
 * tuner's space is the legal triples; a matrix looks up its shape class at
 * the nearest power of two of its elements. */
static void test_transpose_family(void **state) {
    (void)state;
    ptxkit_device_info info = h100_info();
    tune_variant f32 = variant_of("transpose", NULL), f64 = variant_of("transpose", "float64"),
                 u32 = variant_of("transpose", "float32.unaligned"), u64 = variant_of("transpose", "float64.unaligned");
    assert_string_equal(f32.name, "float32");
    assert_int_equal(f32.type, PTXKIT_FLOAT32);
    assert_int_equal(f64.elem_size, 8);
    assert_int_equal(u64.type, PTXKIT_FLOAT64);
    assert_true(f32.op == 0 && u32.op == 1);
    char why[256];
    tune_variant v;
    static const char *const bad[] = {"int32", "padded", "padded.float32", "float16", "float32.odd", ""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (bad[i][0]) assert_true(tune_variant_parse(tune_family_find("transpose"), bad[i], &v, why, sizeof why) != PTXKIT_SUCCESS);

    transpose_config c;
    assert_true(transpose_config_from(PTXKIT_FLOAT32, true, 0, 0, 0, &c, why, sizeof why));
    assert_true(c.tile == 64 && c.block_size == 256 && c.vector_bytes == 4);
    assert_true(transpose_config_from(PTXKIT_FLOAT64, true, 0, 0, 0, &c, why, sizeof why));
    assert_true(c.tile == 32 && c.block_size == 256 && c.vector_bytes == 8);
    assert_true(transpose_config_from(PTXKIT_FLOAT32, false, 0, 0, 0, &c, why, sizeof why)); /* the PTX's */
    assert_true(c.tile == 32 && c.block_size == 256 && c.vector_bytes == 16);
    assert_true(transpose_config_from(PTXKIT_FLOAT32, true, 1024, 4, 0, &c, why, sizeof why));
    assert_true(c.tile == 64 && c.block_size == 1024 && c.vector_bytes == 4);
    assert_true(transpose_config_from(PTXKIT_FLOAT64, true, 1024, 1, 0, &c, why, sizeof why));
    assert_true(c.tile == 32 && c.vector_bytes == 4); /* the default width narrows to fit */
    assert_true(transpose_config_from(PTXKIT_FLOAT32, true, 0, 8, 0, &c, why, sizeof why));
    assert_true(c.tile == 64 && c.block_size == 512); /* items alone keep the default tile */
    assert_true(transpose_config_from(PTXKIT_FLOAT64, true, 0, 32, 16, &c, why, sizeof why));
    assert_true(c.tile == 32 && c.block_size == 32 && c.vector_bytes == 16);
    assert_true(transpose_config_from(PTXKIT_FLOAT32, true, 32, 0, 0, &c, why, sizeof why));
    assert_true(c.tile == 32 && c.block_size == 32); /* a block alone picks a tile that fits */
    assert_true(transpose_config_from(PTXKIT_FLOAT32, true, 1024, 16, 0, &c, why, sizeof why));
    assert_true(c.tile == 128 && c.vector_bytes == 4); /* dynamic shared memory */
    assert_false(transpose_config_from(PTXKIT_FLOAT32, true, 512, 4, 0, &c, why, sizeof why)); /* 2048: no square */
    assert_non_null(strstr(why, "tile"));
    assert_false(transpose_config_from(PTXKIT_FLOAT32, true, 0, 128, 0, &c, why, sizeof why));
    assert_false(transpose_config_from(PTXKIT_FLOAT32, true, 256, 1, 16, &c, why, sizeof why)); /* 4 words > 1 item */
    assert_false(transpose_config_check(&(transpose_config){48, 256, 4}, why, sizeof why));
    assert_false(transpose_config_check(&(transpose_config){64, 32, 4}, why, sizeof why));
    assert_true(transpose_config_check(&(transpose_config){16, 32, 16}, why, sizeof why));

    /* the space: every legal triple, and only those, with the defaults */
    const tune_variant *vs[4] = {&f32, &f64, &u32, &u64};
    const int want_legal[4] = {48, 30, 48, 30};
    for (int k = 0; k < 4; k++) {
        tune_space s;
        tune_space_for(vs[k], &info, &s);
        assert_int_equal(s.count[TUNE_BPSM], 1);
        assert_int_equal(s.count[TUNE_LOAD], 1);
        int legal = 0;
        for (size_t i = 0; i < tune_space_size(&s); i++) {
            tune_config t;
            tune_space_config(&s, i, &t);
            bool ok = tune_config_legal(vs[k], &t, &info, why, sizeof why);
            bool runs = transpose_config_from(vs[k]->type, true, t.block_size, t.items_per_thread, t.vector_bytes, &c,
                                              why, sizeof why);
            assert_int_equal(ok, runs);
            if (ok) assert_int_equal(c.tile * c.tile, t.block_size * t.items_per_thread);
            legal += ok;
        }
        assert_int_equal(legal, want_legal[k]);
        assert_true(tune_config_legal(vs[k], &(tune_config){0}, &info, why, sizeof why));
        /* a bucket's matrix uses nearly all its n elements */
        for (int b = 16; b <= 28; b++) {
            size_t n = (size_t)1 << b;
            double moved = vs[k]->family->bytes_moved(vs[k], n), most = 2.0 * (double)n * (double)vs[k]->elem_size;
            assert_true(moved <= most && moved > 0.9 * most);
            if (b % 2 == 0) assert_true(moved == most || vs[k]->op); /* 2^(2k): 2^k x 2^k */
        }
        assert_true(vs[k]->family->bytes_moved(vs[k], 1) > 0);
    }
    assert_false(tune_config_legal(&f32, &(tune_config){512, 4, 4, 0, 0}, &info, why, sizeof why));
    assert_true(tune_config_legal(&f32, &(tune_config){1024, 4, 16, 0, 0}, &info, why, sizeof why));
    assert_false(tune_config_legal(&f64, &(tune_config){1024, 4, 4, 0, 0}, &info, why, sizeof why)); /* 4 < 8 bytes */

    ptxkit_device_info small_optin = info;
    small_optin.shared_per_block_optin = 64 << 10; /* no room for a 128 x 128 float32 tile */
    assert_true(tune_config_legal(&f32, &(tune_config){1024, 16, 4, 0, 0}, &info, why, sizeof why));
    assert_false(tune_config_legal(&f32, &(tune_config){1024, 16, 4, 0, 0}, &small_optin, why, sizeof why));

    assert_true(transpose_shape_aligned(PTXKIT_FLOAT32, 4096, 4092));
    assert_false(transpose_shape_aligned(PTXKIT_FLOAT32, 4096, 4094));
    assert_true(transpose_shape_aligned(PTXKIT_FLOAT64, 4094, 2));
    assert_false(transpose_shape_aligned(PTXKIT_FLOAT64, 4097, 4096));
    assert_int_equal(transpose_tune_size(4097, 4095), (size_t)1 << 24);
    assert_int_equal(transpose_tune_size(8192, 8192), (size_t)1 << 26);
    assert_int_equal(transpose_tune_size(2897, 2897), (size_t)1 << 23);
    assert_int_equal(transpose_tune_size(1, 1), 1);
    assert_int_equal(transpose_tune_size(3, 1), 4);
    assert_int_equal(transpose_tune_size(0, 7), 0);
    assert_int_equal(transpose_tune_size(SIZE_MAX, 3), 0);
}

/* ---- dispatch ---------------------------------------------------------- */

static void test_mode_and_guard(void **state) {
    (void)state;
    unsetenv("PTXKIT_TUNE");
    assert_int_equal(tune_mode_from_env(), TUNE_MODE_CACHED);
    setenv("PTXKIT_TUNE", "off", 1);
    assert_int_equal(tune_mode_from_env(), TUNE_MODE_OFF);
    setenv("PTXKIT_TUNE", "auto", 1);
    assert_int_equal(tune_mode_from_env(), TUNE_MODE_AUTO);
    setenv("PTXKIT_TUNE", "cached", 1);
    assert_int_equal(tune_mode_from_env(), TUNE_MODE_CACHED);
    setenv("PTXKIT_TUNE", "bogus", 1);
    assert_int_equal(tune_mode_from_env(), TUNE_MODE_CACHED);
    unsetenv("PTXKIT_TUNE");
    assert_false(tune_guard_active());
    tune_guard_enter();
    tune_guard_enter();
    tune_guard_leave();
    assert_true(tune_guard_active());
    tune_guard_leave();
    assert_false(tune_guard_active());
    tune_guard_leave(); /* unbalanced leave is harmless */
    assert_false(tune_guard_active());
    tune_config c;
    assert_false(tune_lookup(NULL, "copy", "bytes", 1, &c));
}

/* The lookup an op makes, on a context that needs no GPU: the device fields
 * come from a fake context, the database from PTXKIT_TUNE_DB. */
static void test_lookup_and_apply(void **state) {
    (void)state;
    ptxkit_context ctx;
    memset(&ctx, 0, sizeof ctx);
    pthread_mutex_init(&ctx.state_lock, NULL);
    ctx.info = h100_info();
    char path[512], msg[640];
    fresh_path(path, sizeof path, "tune.db");
    setenv("PTXKIT_TUNE_DB", path, 1);
    unsetenv("PTXKIT_TUNE");

    tune_config c;
    assert_false(tune_lookup(&ctx, "reduce", "sum.float32", 1 << 24, &c)); /* no file yet */
    char shown_path[4096], shown[640];
    tune_state_describe(&ctx, shown_path, sizeof shown_path, shown, sizeof shown);
    assert_string_equal(shown_path, path);
    assert_non_null(strstr(shown, "no tuning database"));

    tune_db_entry e;
    memset(&e, 0, sizeof e);
    tune_db_key_for(&ctx, &e.key);
    snprintf(e.family, sizeof e.family, "reduce");
    snprintf(e.variant, sizeof e.variant, "sum.float32");
    e.bucket = 24;
    e.config = (tune_config){512, 8, 16, 0, PTXKIT_LOAD_NC};
    assert_status(PTXKIT_SUCCESS, tune_db_store(path, &e, 1, NULL, msg, sizeof msg));
    unsigned generation = tune_generation();
    tune_state_reset(&ctx); /* the context loaded the empty state before */
    assert_int_not_equal(tune_generation(), generation); /* ops keeping tuned values look again */

    assert_true(tune_lookup(&ctx, "reduce", "sum.float32", (1 << 24) + 5, &c));
    assert_int_equal(c.block_size, 512);
    assert_true(tune_lookup(&ctx, "reduce", "sum.float32", 1 << 26, &c)); /* nearest bucket */
    assert_false(tune_lookup(&ctx, "reduce", "sum.float32", 1 << 27, &c));
    assert_false(tune_lookup(&ctx, "reduce", "sum.int32", 1 << 24, &c));

    /* apply fills only what the caller left at 0, and only for the JIT path */
    launch_options o = {.path = PTXKIT_PATH_JIT, .block_size = 128};
    tune_apply(&ctx, "reduce", "sum.float32", 1 << 24, &o);
    assert_int_equal(o.block_size, 128);
    assert_int_equal(o.items_per_thread, 8);
    assert_int_equal(o.vector_bytes, 16);
    assert_int_equal(o.load_op, PTXKIT_LOAD_NC);
    assert_int_equal(o.blocks_per_sm, 0);
    launch_options ptx = {.path = PTXKIT_PATH_PTX};
    tune_apply(&ctx, "reduce", "sum.float32", 1 << 24, &ptx);
    assert_int_equal(ptx.block_size, 0);
    tune_apply(&ctx, "reduce", "sum.float32", 1 << 24, NULL);

    /* off, and the tuner's guard, hide the database */
    setenv("PTXKIT_TUNE", "off", 1);
    assert_false(tune_lookup(&ctx, "reduce", "sum.float32", 1 << 24, &c));
    unsetenv("PTXKIT_TUNE");
    tune_guard_enter();
    assert_false(tune_lookup(&ctx, "reduce", "sum.float32", 1 << 24, &c));
    tune_guard_leave();
    assert_true(tune_lookup(&ctx, "reduce", "sum.float32", 1 << 24, &c));

    /* a corrupt file: lookups miss, with a message, and never fail the op */
    write_text(path, "ptxkit-tune-db 1\ntruncat", 24);
    tune_state_reset(&ctx);
    assert_false(tune_lookup(&ctx, "reduce", "sum.float32", 1 << 24, &c));
    tune_state_describe(&ctx, shown_path, sizeof shown_path, shown, sizeof shown);
    assert_non_null(strstr(shown, "ignored"));

    tune_state_reset(&ctx);
    unsetenv("PTXKIT_TUNE_DB");
    context_states_release(&ctx); /* what closing a context does */
    pthread_mutex_destroy(&ctx.state_lock);
}

/* Tuning data are state: a 0.2 database and record in the cache directory
 * move to the state directory on the first default-path lookup of a
 * process, and the tuned values stay in force when the kernel cache is
 * purged or switched off. In a child process: the move runs once a process. */
static int state_child(const char *cache, const char *state_dir) {
    char buf[4096], want[4200], msg[640];
    if (!tune_db_default_path(buf, sizeof buf)) return 10;
    snprintf(want, sizeof want, "%s/tune.db", state_dir);
    if (strcmp(buf, want) != 0) return 11;
    struct stat st;
    if (stat(want, &st) != 0) return 12;
    snprintf(want, sizeof want, "%s/tune.record.jsonl", state_dir);
    if (stat(want, &st) != 0) return 13;
    snprintf(want, sizeof want, "%s/tune.db", cache);
    if (stat(want, &st) == 0 || errno != ENOENT) return 14;
    if (ptxkit_cache_purge() != PTXKIT_SUCCESS) return 15;
    setenv("PTXKIT_CACHE", "off", 1);
    ptxkit_context ctx;
    memset(&ctx, 0, sizeof ctx);
    pthread_mutex_init(&ctx.state_lock, NULL);
    ctx.info = h100_info();
    tune_config c;
    int rc = tune_lookup(&ctx, "reduce", "sum.float32", 1 << 24, &c) && c.block_size == 512 ? 0 : 16;
    tune_db db;
    tune_db_init(&db);
    if (!rc && (tune_db_load(buf, &db, msg, sizeof msg) != PTXKIT_SUCCESS || db.count != 1)) rc = 17;
    tune_db_clear(&db);
    context_states_release(&ctx);
    return rc;
}

static void test_state_survives_cache(void **state) {
    (void)state;
    char cache[512], state_dir[512], path[600], msg[640];
    fresh_path(cache, sizeof cache, "cache");
    fresh_path(state_dir, sizeof state_dir, "state");
    snprintf(path, sizeof path, "%s/tune.db", cache);
    ptxkit_context ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.info = h100_info();
    tune_db_entry e;
    memset(&e, 0, sizeof e);
    tune_db_key_for(&ctx, &e.key);
    snprintf(e.family, sizeof e.family, "reduce");
    snprintf(e.variant, sizeof e.variant, "sum.float32");
    e.bucket = 24;
    e.config = (tune_config){512, 8, 16, 0, PTXKIT_LOAD_NC};
    assert_status(PTXKIT_SUCCESS, tune_db_store(path, &e, 1, NULL, msg, sizeof msg));
    snprintf(path, sizeof path, "%s/tune.record.jsonl", cache);
    write_text(path, "\n", 1);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        setenv("PTXKIT_CACHE_DIR", cache, 1);
        setenv("PTXKIT_STATE_DIR", state_dir, 1);
        unsetenv("PTXKIT_TUNE_DB");
        unsetenv("PTXKIT_TUNE_RECORD");
        unsetenv("PTXKIT_TUNE");
        _exit(state_child(cache, state_dir));
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

/* The budget split among sizes: the first may run long, each later size
 * keeps a floor, and the shares never add up to more than the budget. */
static void test_size_budget(void **state) {
    (void)state;
    double floor_s = 35.0 / 3 / 2;
    assert_true(fabs(tune_size_budget(35, 35, 3, 3) - (35 - 2 * floor_s)) < 1e-9);
    assert_true(fabs(tune_size_budget(35, 20, 2, 3) - (20 - floor_s)) < 1e-9);
    assert_true(fabs(tune_size_budget(35, 9, 1, 3) - 9) < 1e-9);
    assert_true(fabs(tune_size_budget(35, 3, 2, 3) - 3) < 1e-9);      /* less than a floor: all of it */
    assert_true(fabs(tune_size_budget(35, 7, 2, 3) - floor_s) < 1e-9); /* an overrun: the floor */
    assert_true(tune_size_budget(35, 0, 1, 3) == 0);
    assert_true(tune_size_budget(35, -4, 2, 3) == 0);
    assert_true(fabs(tune_size_budget(10, 10, 1, 1) - 10) < 1e-9);
    /* spending each share in full never overdraws */
    for (int count = 1; count <= 8; count++) {
        double left = 35;
        for (int i = 0; i < count; i++) left -= tune_size_budget(35, left, count - i, count);
        assert_true(left > -1e-9);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_size_budget),
        cmocka_unit_test(test_state_survives_cache),
        cmocka_unit_test(test_bucket),
        cmocka_unit_test(test_key_sanitized),
        cmocka_unit_test(test_round_trip_text),
        cmocka_unit_test(test_round_trip_empty),
        cmocka_unit_test(test_round_trip_file),
        cmocka_unit_test(test_truncated),
        cmocka_unit_test(test_bit_flips),
        cmocka_unit_test(test_garbage),
        cmocka_unit_test(test_bad_records),
        cmocka_unit_test(test_foreign),
        cmocka_unit_test(test_store_replaces_bad_files),
        cmocka_unit_test(test_store_errors),
        cmocka_unit_test(test_concurrent_writers),
        cmocka_unit_test(test_find_nearest),
        cmocka_unit_test(test_families_and_variants),
        cmocka_unit_test(test_constraints),
        cmocka_unit_test(test_spaces),
        cmocka_unit_test(test_config_helpers),
        cmocka_unit_test(test_transpose_family),
        cmocka_unit_test(test_mode_and_guard),
        cmocka_unit_test(test_lookup_and_apply),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    if (tmp_root[0]) remove_tree(tmp_root);
    return failed;
}
